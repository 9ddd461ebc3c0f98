/**
 * The default webhook transport of an embedded engine: HTTP through Effect's HttpClient (`effect/http`) over the
 * runtime's fetch, so it is the same on Node, Bun and Deno alike; redirects are not followed: a receiver answers for
 * itself, and a redirect could lead to an address the endpoint rules forbid. The engine's tracing is not propagated
 * (no `traceparent` or `b3` header): a receiver sees the delivery's headers.
 *
 * What fetch cannot do: it adds headers of its own (on Node: `accept`, `accept-encoding`, `accept-language`,
 * `sec-fetch-mode`), and it resolves the URL's name itself, so it cannot connect to the addresses the engine checked
 * before the send (`DeliveryRequest.addresses`). The servers use `nodeWebhookTransport` from `@fos/serve`, which
 * does both; an embedder on a runtime with `node:http` can pass it as `webhookTransport` too.
 */
import { Transport } from "@fos/core"
import { Effect, Layer } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"

const client = Layer.merge(FetchHttpClient.layer, Layer.succeed(FetchHttpClient.RequestInit, { redirect: "manual" }))

export const httpTransport: Transport.WebhookTransportService = {
  send: (request) =>
    HttpClient.execute(
      HttpClientRequest.post(request.url).pipe(
        HttpClientRequest.setHeaders(request.headers),
        HttpClientRequest.bodyText(request.body, "application/json")
      )
    ).pipe(
      Effect.flatMap((response) => Effect.as(Effect.ignore(response.text), { status: response.status })),
      Effect.provide(client),
      Effect.provideService(HttpClient.TracerPropagationEnabled, false),
      Effect.mapError((e) => new Transport.TransportError({ message: e.message })),
      Effect.scoped
    )
}
