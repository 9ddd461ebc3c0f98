/**
 * The application: the HttpApi with its handlers and the pipeline, over the services of one engine. The servers
 * serve it, and `createEngine` (Engine.ts) turns it into a fetch-style handler for embedding and tests.
 */
import type { Engine } from "@fos/core"
import { Layer } from "effect"
import { type DocsAssets, DocsFiles } from "./Docs.ts"
import { layerHandlers } from "./Handlers.ts"
import { type ConnectionDropper, DropConnection } from "./Faults.ts"
import * as LiveFeedModule from "./LiveFeed.ts"
import { layerOperatorRoutes, type OperatorSecret, OperatorToken } from "./Operator.ts"
import { layerCorrelation, layerEdge, layerUnrouted } from "./Pipeline.ts"
import { RequestLog, type RequestLogger } from "./RequestLog.ts"
import { layerApiRoutes } from "./Router.ts"

export type { ConnectionDropper } from "./Faults.ts"

export interface RoutesOptions {
  /** Turns the operator surface on, guarded by this bearer token (or its SHA-256 hash). */
  readonly operatorToken?: OperatorSecret | undefined
  /** Serves the reference page at `/docs` with these files (`readDocsAssets`); without them there is no `/docs`. */
  readonly docs?: DocsAssets | undefined
  /** Receives one entry per answered request (`formatRequestLog` makes the server's lines); nothing is logged without it. */
  readonly requestLog?: RequestLogger | undefined
  /** How the server drops a request's connection with no answer (a commit-then-lose fault's `dropped_connection`). */
  readonly dropConnection?: ConnectionDropper | undefined
  /**
   * The recent requests and live streams (LiveFeed.ts); a feed of its own when omitted. A server passes its own to
   * end the streams (`closeAll`) before it waits for the requests in flight.
   */
  readonly liveFeed?: LiveFeedModule.LiveFeedService | undefined
}

/**
 * The routes and the pipeline over the engine services `engine` provides (`layerEmbedded(options)`), needing what
 * `engine` needs and the router: `HttpRouter.toWebHandler` of it, with `HttpServer.layerServices`, is a handler of
 * web-standard requests.
 */
export const layerRoutes = <E, R = never>(engine: Layer.Layer<Engine.EngineServices, E, R>, options: RoutesOptions = {}) =>
  Layer.mergeAll(
    layerApiRoutes().pipe(Layer.provide(layerHandlers)),
    layerOperatorRoutes,
    layerUnrouted
  ).pipe(
    Layer.provide(layerEdge.pipe(
      Layer.provide(Layer.succeed(DocsFiles, options.docs)),
      Layer.provide(Layer.succeed(RequestLog, options.requestLog)),
      Layer.provide(Layer.succeed(DropConnection, options.dropConnection))
    )),
    Layer.provide(layerCorrelation),
    // One feed for the edge that records, the handlers that read and the operator's routes.
    Layer.provide(options.liveFeed === undefined ? LiveFeedModule.layer : Layer.succeed(LiveFeedModule.LiveFeed, options.liveFeed)),
    Layer.provideMerge(engine),
    Layer.provide(Layer.succeed(OperatorToken, options.operatorToken))
  )
