/**
 * The request pipeline, in the order a request meets it, one module a part:
 *
 * - The edge (Edge.ts), around every route (`Edge.serve`, applied to each route when the server is built): what
 *   happens to a request before anything is known of its caller (its correlation ids, its base address, a client
 *   correlation id to refuse, a path only the router's lenient reading matches) and to every answer on its way out
 *   (the problem, the 500, the headers every answer carries, the request log). What no route matches goes to
 *   `Edge.unrouted` (a global middleware): `/healthz`, the reference pages, the inspector, and the 404.
 * - The gate (Gate.ts), around each endpoint (`Edge.gate`, settled per endpoint when the server is built): the
 *   checks that decide whether the request goes on (authentication, the rate limit, the key's and the
 *   organization's refusals), then the caller's clock; a read goes straight to the endpoint's run (Router.ts).
 * - The write (Write.ts), for a request with a body: the body checks (media type, size, JSON; or on an endpoint
 *   marked `Upload`, the multipart form), the sandbox's request faults, idempotency and the store transaction
 *   around the endpoint's run, and what it made due on the virtual clock.
 *
 * What the three pass along is RequestInfo.ts. This module puts them together as one service over one engine's
 * services, `Edge`, and is the package's face for them: what it re-exports is what the package has always exported
 * of the pipeline, the pieces themselves staying inside it.
 */
import type { Engine } from "@fos/core"
import { Lifecycle, RandomStreams, RateLimit, RealClock, Store, Timers } from "@fos/core"
import { Clock, Context, Effect, Layer, Metric } from "effect"
import { HttpRouter } from "effect/http"
import type { HttpApi } from "effect/http-api"
import { BasePath } from "./BasePath.ts"
import { DocsFiles, makeDocsPages } from "./Docs.ts"
import { Correlation, type EdgeRoutes, makeEdge } from "./Edge.ts"
import { DropConnection } from "./Faults.ts"
import { HostIdentities } from "./HostIdentity.ts"
import { pathMethodsOf, servedApi, ServedParts } from "./Served.ts"
import { ServerApi } from "./ServerApi.ts"
import { clockLinks, type GateService, makeAdmit, makeGate, makeOnClockOf } from "./Gate.ts"
import { LiveFeed } from "./LiveFeed.ts"
import { RequestLog } from "./RequestLog.ts"
import { makeSettle } from "./Write.ts"

export {
  Correlation,
  type CorrelationIds,
  isExactPath,
  layerCorrelation,
  maxClientCorrelationIdLength,
  originOf,
  problemResponse
} from "./Edge.ts"
export { makeAdmit } from "./Gate.ts"
export {
  type EndpointRun,
  fromSchemaError,
  headerOf,
  pathOf,
  type RequestInfo,
  type RouteRun,
  type SchemaFailureKind
} from "./RequestInfo.ts"
export { maxJsonBodyBytes, maxUploadParts, multipartOverheadBytes, readJsonBody, readUpload, type UploadForm } from "./Write.ts"

/** The pipeline of one engine: the edge's `serve` and `unrouted` (Edge.ts), the gate's `gate` and `options` (Gate.ts). */
export interface EdgeService extends EdgeRoutes, GateService {}

export class Edge extends Context.Service<Edge, EdgeService>()("fos/http/Edge") {}

export const layerEdge: Layer.Layer<Edge, never, Engine.EngineServices | Correlation | LiveFeed> = Layer.effect(
  Edge,
  Effect.gen(function*() {
    const store = yield* Store.Store
    const time = yield* Timers.TimeControl
    const timerContext = yield* Effect.context<Store.Store | Timers.TimerHandlers>()
    const docsFiles = yield* DocsFiles
    // Under the virtual clock a sandbox request reads its clock once its caller is known: it is read with the key.
    const admit = makeAdmit(store, yield* RateLimit.RateLimiter, yield* RandomStreams.RandomStreams, time.mode === "virtual" ? clockLinks : undefined)
    const realClock = yield* RealClock.RealClock
    const served = yield* ServedParts
    const basePath = yield* BasePath
    const edge = makeEdge({
      correlation: yield* Correlation,
      clock: yield* Clock.Clock,
      realClock,
      feed: yield* LiveFeed,
      requestLog: yield* RequestLog,
      admit,
      docs: docsFiles === undefined ? undefined : makeDocsPages(docsFiles, basePath),
      store,
      engineContext: yield* Effect.context<Engine.EngineServices>(),
      identify: yield* HostIdentities,
      inspector: served.sandbox && served.simulate,
      basePath,
      lifecycle: yield* Lifecycle.Lifecycle,
      metrics: Context.make(Metric.MetricRegistry, yield* Metric.MetricRegistry),
      pathMethods: () => pathMethodsOf(servedApi(ServerApi as unknown as HttpApi.Top, served), served, basePath)
    })
    const gate = makeGate({
      admit,
      onClockOf: makeOnClockOf(time, timerContext),
      settle: makeSettle(time, timerContext),
      dropConnection: yield* DropConnection,
      realClock,
      faults: served.faults
    })
    return { ...edge, ...gate }
  })
)

/** `Edge.unrouted` as the router's global middleware. */
export const layerUnrouted = HttpRouter.middleware<{ provides: never }>()(
  Effect.gen(function*() {
    return (yield* Edge).unrouted
  }),
  { global: true }
)
