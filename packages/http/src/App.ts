/**
 * The application: the HttpApi with its handlers and the pipeline, over the services of one engine. The servers
 * serve it, and `createEngine` (Engine.ts) turns it into a fetch-style handler for embedding and tests.
 */
import type { Engine } from "@fos/core"
import { Layer } from "effect"
import { BasePath, basePathOf } from "./BasePath.ts"
import { type DocsAssets, DocsFiles } from "./Docs.ts"
import { layerHandlers } from "./Handlers.ts"
import { type ConnectionDropper, DropConnection } from "./Faults.ts"
import * as LiveFeedModule from "./LiveFeed.ts"
import { layerOperatorRoutes, type OperatorSecret, OperatorToken } from "./Operator.ts"
import { layerCorrelation, layerEdge, layerUnrouted } from "./Pipeline.ts"
import { RequestLog, type RequestLogger } from "./RequestLog.ts"
import { layerApiRoutes } from "./Router.ts"
import { type IdentifyRequest, HostIdentities } from "./HostIdentity.ts"
import { type ServeOptions, ServedParts, servedOf } from "./Served.ts"

export type { ConnectionDropper } from "./Faults.ts"
export type { HostIdentity, IdentifyRequest } from "./HostIdentity.ts"
export type { ServeOptions } from "./Served.ts"

export interface RoutesOptions {
  /**
   * The path the routes are mounted at (`/fos`): every route is under it, and every address fos hands out carries
   * it (BasePath.ts). None by default.
   */
  readonly basePath?: string | undefined
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
  /** What of the API is served (Served.ts): everything when omitted. */
  readonly serve?: ServeOptions | undefined
  /**
   * What an embedding host says of each request beside it: its caller, in the place of an API key, and its client's
   * address (HostIdentity.ts). A server gives none: it never takes a caller from the network.
   */
  readonly identify?: IdentifyRequest | undefined
}

/**
 * The routes and the pipeline over the engine services `engine` provides (`layerEmbedded(options)`), needing what
 * `engine` needs and the router: `HttpRouter.toWebHandler` of it, with `HttpServer.layerServices`, is a handler of
 * web-standard requests.
 */
export const layerRoutes = <E, R = never>(engine: Layer.Layer<Engine.EngineServices, E, R>, options: RoutesOptions = {}) => {
  const served = servedOf(options.serve)
  return Layer.mergeAll(
    layerApiRoutes().pipe(Layer.provide(layerHandlers)),
    layerOperatorRoutes,
    layerUnrouted
  ).pipe(
    Layer.provide(layerEdge.pipe(
      Layer.provide(Layer.succeed(DocsFiles, options.docs)),
      Layer.provide(Layer.succeed(RequestLog, options.requestLog)),
      Layer.provide(Layer.succeed(DropConnection, options.dropConnection)),
      Layer.provide(Layer.succeed(HostIdentities, options.identify))
    )),
    Layer.provide(layerCorrelation),
    // One feed for the edge that records, the handlers that read and the operator's routes.
    Layer.provide(options.liveFeed === undefined ? LiveFeedModule.layer : Layer.succeed(LiveFeedModule.LiveFeed, options.liveFeed)),
    Layer.provideMerge(engine),
    // Left out, the operator surface is as without a token: no route.
    Layer.provide(Layer.succeed(OperatorToken, served.operator ? options.operatorToken : undefined)),
    Layer.provide(Layer.succeed(ServedParts, served)),
    Layer.provide(Layer.succeed(BasePath, basePathOf(options.basePath)))
  )
}
