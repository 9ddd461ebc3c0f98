/**
 * The default webhook transport: HTTP through Effect's HttpClient (`effect/http`) over the runtime's fetch, so it
 * is the same on Node, Bun and Deno alike; redirects are not followed: a receiver answers for itself, and a redirect
 * could lead to an address the endpoint rules forbid.
 */
import { TransportError, type WebhookTransportService } from "@fos/core"
import { Effect, Layer } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"

const client = Layer.merge(FetchHttpClient.layer, Layer.succeed(FetchHttpClient.RequestInit, { redirect: "manual" }))

export const httpTransport: WebhookTransportService = {
  send: (request) =>
    HttpClient.execute(
      HttpClientRequest.post(request.url).pipe(
        HttpClientRequest.setHeaders(request.headers),
        HttpClientRequest.bodyText(request.body, "application/json")
      )
    ).pipe(
      Effect.flatMap((response) => Effect.as(Effect.ignore(response.text), { status: response.status })),
      Effect.provide(client),
      Effect.mapError((e) => new TransportError({ message: e.message })),
      Effect.scoped
    )
}
