/**
 * A running engine with its HTTP application: what the servers serve and what a host embeds.
 *
 * `createEngine` builds the engine services once (store, clock, limiter, scheduler), applies a seed, and
 * exposes the same HTTP semantics as a fetch-style function with no port. Many engines can run side by side in
 * one process; they share nothing.
 */
import { applySeed, type EngineOptions, type EngineServices, layerEngine, type SeedFile, TimeControl } from "@fos/core"
import { Context, Effect, Layer, ManagedRuntime } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { layerRoutes } from "./App.ts"
import { httpTransport } from "./Transport.ts"

export interface Engine {
  /** The HTTP API as `Request -> Response`. */
  readonly fetch: (request: Request) => Promise<Response>
  /** Runs an engine operation (operator calls, reads) against this engine's services. */
  readonly run: <A, E>(effect: Effect.Effect<A, E, EngineServices>) => Promise<A>
  /** The engine services, for a server adapter to serve. */
  readonly context: Context.Context<EngineServices>
  readonly operatorToken: string | undefined
  readonly clock: {
    /** The clock's time in epoch milliseconds. */
    readonly now: () => Promise<number>
    /** Virtual clock only: moves time forward, firing every timer due on the way. */
    readonly advance: (ms: number) => Promise<void>
  }
  readonly close: () => Promise<void>
}

export interface CreateEngineOptions extends EngineOptions {
  readonly seed?: SeedFile
  /** Turns the operator surface (`/operator/...`) on, guarded by this bearer token. */
  readonly operatorToken?: string
}

export const createEngine = async (options: CreateEngineOptions = {}): Promise<Engine> => {
  // Deliveries go out over HTTP unless the host gives another transport.
  const runtime = ManagedRuntime.make(layerEngine({ webhookTransport: httpTransport, ...options }) as Layer.Layer<EngineServices>)
  const context = await runtime.context()
  if (options.seed !== undefined) await runtime.runPromise(applySeed(options.seed))
  const web = HttpRouter.toWebHandler(
    layerRoutes(Layer.succeedContext(context), { operatorToken: options.operatorToken }).pipe(Layer.provide(HttpServer.layerServices)),
    { disableLogger: true }
  )
  const time = Context.get(context, TimeControl)
  return {
    fetch: (request) => (web.handler as (request: Request) => Promise<Response>)(request),
    run: (effect) => runtime.runPromise(effect),
    context,
    operatorToken: options.operatorToken,
    clock: {
      now: () => runtime.runPromise(time.now),
      advance: (ms) => runtime.runPromise(Effect.flatMap(time.now, (now) => time.advanceTo(now + ms)))
    },
    close: async () => {
      await web.dispose()
      await runtime.dispose()
    }
  }
}
