/**
 * The HTTP client `fos serve` sends its OTLP export with: the runtime's `node:http`, not `fetch`. An export is a
 * request of up to a megabyte every few seconds, and `fetch` (undici's web streams) spends some six times the CPU
 * on such a body that `node:http` does (docs/performance.md, "Telemetry"): with spans on, that was most of what
 * a request cost beside its own work. The export's requests are the only ones it makes: a body held in memory
 * (OTLP JSON), a small answer read in full; anything else goes to `fetch`.
 */
import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from "node:http"
import { Agent as HttpsAgent, request as httpsRequest } from "node:https"
import { Effect, Layer } from "effect"
import { FetchHttpClient, HttpClient, HttpClientError, HttpClientResponse } from "effect/http"

/**
 * What an OTLP export is sent with, for `createEngine`'s `telemetry.otlpClient`; its connections are kept alive
 * between exports, and closed with the engine.
 */
export const nodeOtlpClient: Layer.Layer<HttpClient.HttpClient> = Layer.effect(
  HttpClient.HttpClient,
  Effect.gen(function*() {
    const fetched = yield* HttpClient.HttpClient
    const agents = yield* Effect.acquireRelease(
      Effect.sync(() => ({ http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) })),
      (agents) => Effect.sync(() => (agents.http.destroy(), agents.https.destroy()))
    )
    return HttpClient.make((request, url, signal) => {
      const body = request.body
      if (body._tag !== "Uint8Array" && body._tag !== "Empty") return fetched.execute(request)
      return Effect.callback<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError>((resume) => {
        const failed = (cause: unknown) =>
          resume(Effect.fail(new HttpClientError.HttpClientError({ reason: new HttpClientError.TransportError({ request, cause }) })))
        const options = { method: request.method, headers: request.headers, signal }
        const send = (again: boolean) => {
          const sent = url.protocol === "https:" ? httpsRequest(url, { ...options, agent: agents.https }) : httpRequest(url, { ...options, agent: agents.http })
          sent.on("error", (error: NodeJS.ErrnoException) => {
            // A kept-alive connection the collector closed while it was idle (between two exports): Node's own
            // advice is to send again, once, on a new connection.
            if (!again && sent.reusedSocket && error.code === "ECONNRESET") send(true)
            else failed(error)
          })
          sent.on("response", (answer: IncomingMessage) => {
            const chunks: Array<Buffer> = []
            answer.on("data", (chunk: Buffer) => chunks.push(chunk))
            answer.on("error", failed)
            answer.on("end", () => {
              const headers = new Headers()
              for (const [name, value] of Object.entries(answer.headers)) {
                if (typeof value === "string") headers.set(name, value)
                else if (value !== undefined) for (const one of value) headers.append(name, one)
              }
              const status = answer.statusCode ?? 500
              const content = status === 204 || status === 304 || chunks.length === 0 ? null : Buffer.concat(chunks)
              resume(Effect.succeed(HttpClientResponse.fromWeb(request, new Response(content, { status, headers }))))
            })
          })
          // A text body is written as it is: node:http encodes it onto the socket, with no copy of its bytes first.
          if (body._tag === "Empty") sent.end()
          else sent.end(body.text ?? body.body)
        }
        send(false)
      })
    })
  })
).pipe(Layer.provide(FetchHttpClient.layer))
