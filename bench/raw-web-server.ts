/**
 * The baseline of `bench/runtimes.ts` on Bun and on Deno: the runtime's own server (`Bun.serve` or `Deno.serve`)
 * answering every GET with one fixed response, as `bench/raw-server.ts` does with `node:http` on Node.
 *
 * `BENCH_PAYLOAD` names the JSON file of the response fos gave (status, headers, body). The server listens on an
 * ephemeral port of 127.0.0.1 and prints `raw: http://127.0.0.1:<port>`; SIGTERM ends it.
 */
import { readFileSync } from "node:fs"

interface Payload {
  readonly status: number
  readonly headers: ReadonlyArray<readonly [string, string]>
  readonly body: string
}

type Handler = () => Response
interface Runtimes {
  readonly Bun?: { serve(options: { port: number; hostname: string; fetch: Handler }): { readonly port: number } }
  readonly Deno?: {
    serve(options: { port: number; hostname: string; onListen: () => void }, handler: Handler): { readonly addr: { readonly port: number } }
  }
}
const { Bun, Deno } = globalThis as unknown as Runtimes

const payloadPath = process.env.BENCH_PAYLOAD
if (payloadPath === undefined) throw new Error("raw-web-server: set BENCH_PAYLOAD to the JSON file written by bench/runtimes.ts")
const payload = JSON.parse(readFileSync(payloadPath, "utf8")) as Payload
// The runtime writes content-length itself, from the body.
const headers = payload.headers.filter(([name]) => name.toLowerCase() !== "content-length")
const respond: Handler = () => new Response(payload.body, { status: payload.status, headers: headers as Array<[string, string]> })

let port: number
if (Bun !== undefined) port = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: respond }).port
else if (Deno !== undefined) port = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, respond).addr.port
else throw new Error("raw-web-server runs on Bun or Deno")
console.log(`raw: http://127.0.0.1:${port}`)
