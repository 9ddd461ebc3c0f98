/**
 * An OTLP/HTTP collector for `npm run bench` that reads every export and drops it: the far end of `fos serve
 * --otlp`, so that the bench times what exporting costs fos and nothing a real collector does. It listens on an
 * ephemeral port on 127.0.0.1, prints `otlp: http://127.0.0.1:<port>` once it listens, and on SIGTERM prints the
 * bytes it was sent (`otlp received: <n> (traces <t>)`, the traces' share of them) and closes.
 */
import { createServer } from "node:http"

let received = 0
let traces = 0
const server = createServer((request, response) => {
  const isTraces = request.url === "/v1/traces"
  request.on("data", (chunk: Buffer) => {
    received += chunk.length
    if (isTraces) traces += chunk.length
  })
  request.on("end", () => response.writeHead(200, { "content-type": "application/json" }).end("{}"))
})

server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("otlp-sink: no TCP address")
  console.log(`otlp: http://127.0.0.1:${address.port}`)
})

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    console.log(`otlp received: ${received} (traces ${traces})`)
    server.close()
    server.closeAllConnections()
  })
}
