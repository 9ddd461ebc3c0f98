/**
 * The baseline for `npm run bench`: a bare `node:http` server that answers every GET with one fixed response.
 *
 * `bench/run.ts` fetches `GET /sandbox/v2/portal/users/me` from fos once, writes the status, headers and body
 * to a JSON file, and starts this server with `BENCH_PAYLOAD=<that file>`, so both servers send the same bytes.
 * The server listens on an ephemeral port on 127.0.0.1 and prints `raw: http://127.0.0.1:<port>` once it
 * listens. SIGTERM or SIGINT closes it.
 */
import { createServer } from "node:http"
import { readPayload } from "./payload.ts"

const payload = readPayload("raw-server")
const body = Buffer.from(payload.body, "utf8")
const headers: Array<string> = []
for (const [name, value] of payload.headers) {
  headers.push(name, name.toLowerCase() === "content-length" ? String(body.length) : value)
}

const server = createServer((req, res) => {
  if (req.method !== "GET") {
    res.writeHead(405, { allow: "GET" })
    res.end()
    return
  }
  res.writeHead(payload.status, headers)
  res.end(body)
})

server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  console.log(`raw: http://127.0.0.1:${port}`)
})

const stop = () => {
  server.close(() => process.exit(0))
  server.closeAllConnections()
}
process.once("SIGTERM", stop)
process.once("SIGINT", stop)
