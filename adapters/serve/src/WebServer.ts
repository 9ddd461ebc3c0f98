/**
 * An Effect `HttpServer` on a runtime's own web-standard server. Bun's `Bun.serve` and Deno's `Deno.serve` both
 * take a `Request -> Promise<Response>` function, so this one implementation serves both, and `HttpRouter.serve`
 * runs the application on them exactly as it does on Node.
 *
 * Effect's web handler (`HttpEffect.toWebHandlerWith`) turns the application into that function. What a web
 * `Request` does not carry is the caller's socket address, which API keys' IP allowlists are checked against, so
 * the runtime passes it with each request and it is set on the request before the application sees it.
 */
import { Context, Duration, Effect, Option, Result, type Scope } from "effect"
import { HttpEffect, HttpServer, HttpServerError, HttpServerRequest } from "effect/http"
import { NetAddress } from "effect/net"

/** What a runtime's server calls for every request, with the caller's IP address when it knows it. */
export type WebHandler = (request: Request, remoteAddress: string | undefined) => Promise<Response>

/** A runtime's server, listening. */
export interface WebListener {
  /** The port it listens on: the one asked for, or the one the system picked for port 0. */
  readonly port: number
  /** Stops accepting connections; resolves once the requests in flight are answered. */
  readonly stop: () => Promise<void>
}

/** Starts a runtime's server on `hostname` (an IP address) and `port`; throws when it cannot listen. */
export type Listen = (address: { readonly hostname: string; readonly port: number }, handler: WebHandler) => WebListener

export interface WebServerOptions {
  /** An IP address (resolve a host name first). */
  readonly hostname: string
  readonly port: number
  /** How long a stop waits for the requests in flight; 20 seconds, as on Node. */
  readonly gracefulShutdownTimeout?: Duration.Input
}

// Between listening and the application being installed (the same turn of startup, before the start lines).
const notYetServing: WebHandler = () => Promise.resolve(new Response(null, { status: 503 }))

/** The `HttpServer`, listening until its scope closes; the close waits for the requests in flight. */
export const makeWebServer = (listen: Listen, options: WebServerOptions) =>
  Effect.gen(function*() {
    let current = notYetServing
    const listener = yield* Effect.try({
      try: () => listen({ hostname: options.hostname, port: options.port }, (request, remoteAddress) => current(request, remoteAddress)),
      catch: (cause) => new HttpServerError.ServeError({ cause })
    })
    // Past the timeout the process goes on closing the engine, and the requests still in flight fail.
    yield* Effect.addFinalizer(() =>
      Effect.timeoutOrElse(Effect.promise(() => listener.stop()), {
        duration: options.gracefulShutdownTimeout ?? Duration.seconds(20),
        orElse: () => Effect.void
      })
    )
    const address = NetAddress.inetAddressFromIpString(options.hostname, listener.port)
    if (Result.isFailure(address)) return yield* new HttpServerError.ServeError({ cause: address.failure })
    return HttpServer.make({
      address: address.success,
      serve: (httpApp, middleware) =>
        Effect.gen(function*() {
          const services = yield* Effect.context<never>()
          // Keyed by the web request, which Effect keeps as the server request's `source`.
          const remotes = new WeakMap<Request, string>()
          const withRemote = Effect.withFiber((fiber) => {
            const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
            const remote = remotes.get(request.source as Request)
            return remote === undefined
              ? httpApp
              : Effect.provideService(httpApp, HttpServerRequest.HttpServerRequest, request.modify({ remoteAddress: Option.some(remote) }))
          })
          const handler = HttpEffect.toWebHandlerWith<never, HttpServerRequest.HttpServerRequest | Scope.Scope>(services)(withRemote, middleware)
          current = (request, remoteAddress) => {
            if (remoteAddress !== undefined) remotes.set(request, remoteAddress)
            return handler(request)
          }
        })
    })
  })
