/**
 * The second baseline of `npm run bench`: Effect's HTTP server with one HttpRouter route that answers every
 * `GET <path>` with the fixed response fos gave (the same status, headers and body as bench/raw-server.ts), on
 * `@effect/platform-node`'s NodeHttpServer as `fos serve` runs it, with `npm start`'s V8 flags.
 *
 * What it measures is what fos pays before its own pipeline starts: the fiber per request, the request and response
 * objects, the router. fos can come no closer to raw `node:http` than this server does, so its throughput against
 * raw, beside fos's, says how much of the gap is fos's own (docs/performance.md, "The foundation").
 *
 * It reads `BENCH_PAYLOAD` (the JSON file bench/run.ts writes), listens on `BENCH_PORT` of 127.0.0.1 (an ephemeral
 * port when unset), and prints `effect: http://127.0.0.1:<port>` once it listens. SIGTERM or SIGINT closes it.
 */
import { createServer } from "node:http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { readPayload } from "./payload.ts"

const payload = readPayload("effect-server")
const path = process.env.BENCH_PATH ?? "/sandbox/v2/portal/users/me"
const contentType = payload.headers.find(([name]) => name === "content-type")?.[1] ?? "application/json"
// Content-Type and Content-Length come from the body, as fos's do; the rest as fos sent them.
const headers: Record<string, string> = {}
for (const [name, value] of payload.headers) if (name !== "content-type" && name !== "content-length") headers[name] = value

const route = HttpRouter.route("GET", path as HttpRouter.PathInput, Effect.sync(() => HttpServerResponse.text(payload.body, { status: payload.status, contentType, headers })))

const main = Effect.gen(function*() {
  const address = (yield* HttpServer.HttpServer).address
  console.log(`effect: http://127.0.0.1:${"port" in address ? address.port : 0}`)
  return yield* Effect.never
}).pipe(
  Effect.provide(
    HttpRouter.serve(HttpRouter.use((router) => router.addAll([route])), { disableLogger: true, disableListenLog: true }).pipe(
      Layer.provideMerge(NodeHttpServer.layer(() => createServer(), { port: Number(process.env.BENCH_PORT ?? 0), host: "127.0.0.1" }))
    )
  )
)

NodeRuntime.runMain(main)
