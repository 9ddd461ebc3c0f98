/**
 * The servers' webhook transport, over `node:http` and `node:https` (which Bun and Deno implement too) rather than
 * fetch, for two things fetch cannot do:
 *
 * - connect to the addresses the engine checked before the send (`DeliveryRequest.addresses`), through a `lookup`
 *   that answers with them alone, while the URL's host stays the Host header and the TLS server name (so the
 *   certificate is still checked against the name): a name that answers differently a moment later (DNS rebinding)
 *   cannot move the delivery to an address the check never saw;
 * - send the delivery's headers and HTTP's own (Host, Content-Length, Connection) and nothing else: no tracing
 *   headers (`traceparent`, `b3`) and none of fetch's (`sec-fetch-mode`, `accept-language`, ...).
 *
 * Redirects are not followed (a receiver answers for itself, and a redirect could lead to an address the endpoint
 * rules forbid). The engine bounds the wait (5 seconds) and interrupts the send, which destroys the request.
 */
import { Agent as HttpAgent, type ClientRequest, type IncomingMessage, request as httpRequest, type RequestOptions } from "node:http"
import { Agent as HttpsAgent, request as httpsRequest } from "node:https"
import type { LookupFunction } from "node:net"
import { Transport } from "@fos/core"
import { Effect } from "effect"

/** A `lookup` that answers with the checked addresses only, never asking DNS. */
const pinnedLookup = (addresses: ReadonlyArray<string>): LookupFunction => (hostname, options, callback) => {
  const entries = addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))
  const wanted = options.family === 4 || options.family === 6 ? entries.filter((e) => e.family === options.family) : entries
  if (wanted.length === 0) {
    const error: NodeJS.ErrnoException = new Error(`no checked address of ${hostname} for this connection`)
    error.code = "ENOTFOUND"
    return (callback as (e: NodeJS.ErrnoException) => void)(error)
  }
  if (options.all === true) return (callback as (e: null, all: Array<{ address: string; family: number }>) => void)(null, wanted)
  callback(null, wanted[0]!.address, wanted[0]!.family)
}

type Agents = { readonly http: HttpAgent; readonly https: HttpsAgent }

const send = (agents: Agents) => (delivery: Transport.DeliveryRequest): Effect.Effect<{ readonly status: number }, Transport.TransportError> =>
  Effect.callback<{ readonly status: number }, Transport.TransportError>((resume) => {
    let request: ClientRequest
    try {
      const url = new URL(delivery.url)
      const secure = url.protocol === "https:"
      const body = new TextEncoder().encode(delivery.body)
      const options: RequestOptions = {
        method: "POST",
        // The name, bracket-free for an IPv6 literal; a literal is never looked up.
        host: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
        port: url.port === "" ? (secure ? 443 : 80) : Number(url.port),
        path: `${url.pathname}${url.search}`,
        headers: { ...delivery.headers, host: url.host, "content-length": String(body.byteLength) },
        agent: secure ? agents.https : agents.http,
        ...(delivery.addresses === undefined ? {} : { lookup: pinnedLookup(delivery.addresses) })
      }
      const fail = (e: unknown) => resume(Effect.fail(new Transport.TransportError({ message: e instanceof Error ? e.message : String(e) })))
      request = (secure ? httpsRequest : httpRequest)(options, (response: IncomingMessage) => {
        // The answer's body is read and dropped, so the connection can serve the next delivery.
        response.on("error", fail)
        response.on("end", () => resume(Effect.succeed({ status: response.statusCode ?? 0 })))
        response.resume()
      })
      request.on("error", fail)
      request.end(body)
    } catch (e) {
      resume(Effect.fail(new Transport.TransportError({ message: e instanceof Error ? e.message : String(e) })))
      return
    }
    return Effect.sync(() => request.destroy())
  })

export interface NodeWebhookTransportOptions {
  /**
   * Certificates to trust for https receivers instead of the runtime's own list (PEM), such as a local development
   * CA's. Certificates are always checked, against the URL's name.
   */
  readonly ca?: string | ReadonlyArray<string>
}

/** Webhook deliveries over node:http and node:https, to the checked addresses, with the delivery's headers only. */
export const makeNodeWebhookTransport = (options: NodeWebhookTransportOptions = {}): Transport.WebhookTransportService => {
  // Connections are kept for the next delivery to the same receiver. A kept connection was opened to an address that
  // was checked then; every send is checked again before it starts.
  const ca = options.ca === undefined ? {} : { ca: typeof options.ca === "string" ? options.ca : [...options.ca] }
  return { send: send({ http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true, ...ca }) }) }
}

/** The servers' transport: `makeNodeWebhookTransport()`, trusting the runtime's certificates. */
export const nodeWebhookTransport: Transport.WebhookTransportService = makeNodeWebhookTransport()
