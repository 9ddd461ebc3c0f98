/**
 * The edge, around every route: what happens to a request before anything is known of its caller, and to every
 * answer on its way out. In the order a request meets it:
 *
 * 1. `makeBegin`: the request's `RequestInfo`: its correlation id (`Correlation`), the client's own if it is one to
 *    echo, the environment of its base address (`/sandbox` or `/live`, which each route knows as its own), its path
 *    as the problem's `instance`, the client's address and when it came.
 * 2. A path that only the router's lenient reading matches is no route (`isExactPath`): the unknown route's 404.
 * 3. A client correlation id sent but not one to echo is 400 at once (`refusesClientCorrelation`).
 * 4. The route's work (the gate, Gate.ts, for an endpoint), in a context that holds the engine's services.
 * 5. `recover`: a failure becomes its problem (`problemResponse`), the store out of reach 503, anything unexpected
 *    500, never with a stack trace.
 * 6. `finish`: the headers every answer carries; `makeLogged`: the answer recorded in the organization's recent
 *    requests (LiveFeed.ts), the engine's metrics (kernel/Metrics.ts of @fos/core) and the request log.
 *
 * What no route matches goes to `unrouted` (a global middleware): `/healthz` (the process is up), `/readyz` (the
 * engine can work: its store answers, Readiness.ts), the `/docs` reference pages, the
 * `/inspect` application, bad percent-encoding, and the unknown-route 404 (after authentication, so routes cannot be
 * probed without a key). All of them, and every route, are under the engine's base path (BasePath.ts), which a
 * problem's `docs` carries too.
 */
import type { Engine } from "@fos/core"
import { IdGenerator, Lifecycle, Metrics, Problem, RandomStreams, Readiness, Store, Telemetry, Tenancy } from "@fos/core"
import { type Environment, toIso } from "@fos/contract"
import { Cause, type Clock, Context, Effect, Exit, type Fiber, Layer, Option, Random, Tracer } from "effect"
import { type Headers, HttpRouter, HttpServerRequest, HttpServerResponse, HttpTraceContext } from "effect/http"
import { underBase } from "./BasePath.ts"
import { errorReferencePage } from "./Docs.ts"
import type { Admit } from "./Gate.ts"
import type { IdentifyRequest } from "./HostIdentity.ts"
import { inspectorPage } from "./Inspector.ts"
import type { AnsweredRequest, LiveFeedService } from "./LiveFeed.ts"
import { problemTypeOf, type RequestLogger } from "./RequestLog.ts"
import { headerOf, jsonType, pathOf, type RequestInfo, type RouteRun } from "./RequestInfo.ts"
import type { PathMethods } from "./Served.ts"

// --- correlation ids ---------------------------------------------------------------------------------------------

/**
 * Correlation ids: a random prefix and a counter, unique and cheap. Per engine; on a seeded engine per scope, with
 * the prefix from a stream of the scope's own, so that an organization's ids follow its own requests only and a
 * read does not move the stream its resources' ids come from.
 */
export interface CorrelationIds {
  /** The next id of a request of `scope` (its organization's environment; undefined before one is known). */
  readonly next: (scope: string | undefined) => string
  /** Whether ids depend on the scope: the edge then draws a request's id once its caller is known. */
  readonly perScope: boolean
}

export class Correlation extends Context.Service<Correlation, CorrelationIds>()("fos/http/Correlation") {}

const correlationId = (prefix: string, counter: number) => prefix + counter.toString(16).padStart(16, "0")

export const layerCorrelation: Layer.Layer<Correlation> = Layer.effect(
  Correlation,
  Effect.gen(function*() {
    const streams = yield* RandomStreams.RandomStreams
    if (streams === undefined) {
      const prefix = yield* IdGenerator.randomHex(16)
      let counter = 0
      return { perScope: false, next: () => correlationId(prefix, counter++) }
    }
    const scopes = new Map<string, { readonly prefix: string; counter: number }>()
    return {
      perScope: true,
      next: (scope) => {
        const key = scope ?? ""
        let ids = scopes.get(key)
        if (ids === undefined) {
          ids = { prefix: Effect.runSync(Effect.provideService(IdGenerator.randomHex(16), Random.Random, streams.of(`correlation:${key}`))), counter: 0 }
          scopes.set(key, ids)
        }
        return correlationId(ids.prefix, ids.counter++)
      }
    }
  })
)

/** The longest `x-client-correlation-id` echoed; a longer one is refused (docs/decisions.md, "Correlation ids"). */
export const maxClientCorrelationIdLength = 128
const visible = /^[\x21-\x7e]{1,128}$/
const badClientCorrelationId = Problem.apiError(
  "BAD_REQUEST",
  `The x-client-correlation-id header must be 1 to ${maxClientCorrelationIdLength} visible ASCII characters.`
)

/** A client correlation id sent but not one to echo is refused rather than silently dropped. */
export const refusesClientCorrelation = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const sent = headerOf(request, "x-client-correlation-id")
  return sent !== undefined && !visible.test(sent)
}

// --- the request's beginning -------------------------------------------------------------------------------------

/**
 * What the edge knows of a request as it begins: its `RequestInfo`, and whether it sent a client correlation id that
 * is refused (`refusesClientCorrelation`), read with the id itself, so the header is read once.
 */
export interface BegunRequest extends RequestInfo {
  readonly refusesClientCorrelation: boolean
}

/**
 * The edge's `RequestInfo` of a request, for the environment of its base address (undefined: the operator's);
 * `path`, its path (`pathOf` of its URL), when the caller has it already.
 */
export type Begin = (request: HttpServerRequest.HttpServerRequest, environment: Environment | undefined, path?: string) => BegunRequest

/**
 * `Begin` over the engine's correlation ids and the real clock, which times the request, and what an embedding host
 * says of the request beside it (`identify`, HostIdentity.ts): its caller and its client's address.
 */
export const makeBegin = (correlation: CorrelationIds, realClock: Clock.Clock, identify?: IdentifyRequest): Begin => (request, environment, path) =>
  new EdgeRequest(correlation, request, environment, realClock.monotonicTimeNanosUnsafe(), identify?.(request), path ?? pathOf(request.url))

/** The client's address when the connection has none (a request handed to the web handler). */
const loopback = () => "127.0.0.1"

/**
 * The edge's `RequestInfo`: one shape for every request, each field set in the constructor, so the code that reads
 * it sees one kind of object. A seeded engine draws a request's id from its organization's ids when it is first
 * read: after authentication when there is a caller (every read of it is for the answer or the log).
 */
class EdgeRequest implements BegunRequest {
  readonly clientCorrelationId: string | undefined
  readonly refusesClientCorrelation: boolean
  readonly instance: string
  readonly clientIp: string
  readonly hostCaller: RequestInfo["hostCaller"]
  rate: RequestInfo["rate"] = undefined
  organizationId: string | undefined = undefined
  clock: Clock.Clock | undefined = undefined
  injected: string | undefined = undefined
  route: string | undefined = undefined
  operation: string | undefined = undefined
  body: string | undefined = undefined
  replayed: boolean | undefined = undefined
  readonly request: HttpServerRequest.HttpServerRequest
  readonly environment: Environment | undefined
  readonly startedNs: bigint
  private readonly ids: CorrelationIds
  private id: string | undefined
  constructor(
    ids: CorrelationIds,
    request: HttpServerRequest.HttpServerRequest,
    environment: Environment | undefined,
    startedNs: bigint,
    identity: ReturnType<IdentifyRequest> | undefined,
    path: string
  ) {
    this.request = request
    this.environment = environment
    this.startedNs = startedNs
    this.ids = ids
    const clientHeader = headerOf(request, "x-client-correlation-id")
    const echoed = clientHeader !== undefined && visible.test(clientHeader)
    this.clientCorrelationId = echoed ? clientHeader : undefined
    this.refusesClientCorrelation = clientHeader !== undefined && !echoed
    this.instance = path
    this.clientIp = identity?.clientAddress ?? Option.getOrElse(request.remoteAddress, loopback)
    this.hostCaller = identity?.caller
    this.id = ids.perScope ? undefined : ids.next(undefined)
  }
  get correlationId(): string {
    return this.id ??= this.ids.next(this.organizationId === undefined || this.environment === undefined ? undefined : Tenancy.scopeOf(this.organizationId, this.environment))
  }
}

/** The base address of a path: an environment or the operator surface. */
const baseOf = (path: string): { environment: Environment | undefined } | undefined => {
  if (path.startsWith("/sandbox/") || path === "/sandbox") return { environment: "sandbox" }
  if (path.startsWith("/live/") || path === "/live") return { environment: "live" }
  if (path.startsWith("/operator/")) return { environment: undefined }
  return undefined
}

// --- what one path is --------------------------------------------------------------------------------------------

const decodable = (path: string): boolean => {
  try {
    decodeURIComponent(path)
    return true
  } catch {
    return false
  }
}

/** A parameter's segment as sent, decoded; undefined when it is not valid percent-encoding. */
const decodedSegment = (segment: string): string | undefined => {
  if (!segment.includes("%")) return segment
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}

/**
 * Whether `path` (as sent, query stripped) is exactly a path of the route `pattern` (`/sandbox/v2/customers/:id`):
 * every fixed segment equal to the pattern's, character for character (so case-sensitive, and never
 * percent-encoded); as many segments as the pattern (no trailing or doubled slash); and each parameter's segment
 * not empty, without `;` (a matrix parameter, which the router would cut off), and not `/`, `.` or `..` once
 * decoded (an encoded slash, a dot segment). The router is lenient on all of these; a proxy's path filter in
 * front of fos is not, so fos refuses them rather than answer a path the filter did not see
 * (docs/decisions.md, "What one path is").
 */
export const isExactPath = (pattern: string, path: string): boolean => {
  if (pattern === path) return true
  if (!pattern.includes("/:")) return false
  const want = pattern.split("/")
  const got = path.split("/")
  if (want.length !== got.length) return false
  for (let i = 0; i < want.length; i++) {
    const fixed = want[i]!
    const sent = got[i]!
    if (!fixed.startsWith(":")) {
      if (sent !== fixed) return false
      continue
    }
    if (sent === "" || sent.includes(";")) return false
    const value = decodedSegment(sent)
    if (value === undefined || value === "." || value === ".." || value.includes("/")) return false
  }
  return true
}

const isRouteNotFound = (e: unknown): boolean =>
  typeof e === "object" && e !== null && (e as { reason?: { _tag?: string } }).reason?._tag === "RouteNotFound"

// --- the answer --------------------------------------------------------------------------------------------------

/**
 * The origin a request was sent to (`http://host:port`): the URL an embedded engine was called with when it is
 * absolute (a `Request` handed to the web handler, as on Bun and Deno), else the Host header and the server's
 * protocol (Node's server); `http://localhost` when neither can be read.
 */
export const originOf = (request: HttpServerRequest.HttpServerRequest): string => {
  const original = request.originalUrl
  if (/^https?:\/\//i.test(original)) {
    try {
      return new URL(original).origin
    } catch {
      // not a URL after all: the Host header's turn
    }
  }
  return Option.match(HttpServerRequest.toURL(request), { onNone: () => "http://localhost", onSome: (url) => url.origin })
}

/**
 * A problem as its answer: `Problem.render`'s body, sent as JSON, stamped `nowMs`. Its `docs` is on the request's
 * origin under `basePath`, the engine's (BasePath.ts), where the engine serves the error reference.
 */
export const problemResponse = (error: Problem.ApiError, info: RequestInfo, nowMs: number, basePath = ""): HttpServerResponse.HttpServerResponse => {
  const body = Problem.render(error, {
    instance: info.instance,
    correlationId: info.correlationId,
    timestamp: toIso(nowMs),
    origin: originOf(info.request) + basePath
  })
  const response = HttpServerResponse.text(JSON.stringify(body), {
    status: error.status,
    contentType: jsonType,
    // A 413 leaves the body unread, and the server closes the connection rather than read the rest: it says so, so
    // that a client does not send its next request on a connection about to close (docs/decisions.md).
    ...(error.status === 413 ? { headers: { connection: "close" } } : {})
  })
  return error.retryAfterSeconds === undefined ? response : HttpServerResponse.setHeader(response, "retry-after", String(error.retryAfterSeconds))
}

/** A request to an engine that is closing (kernel/Lifecycle.ts): refused at once, to be sent again to a running one. */
const closingProblem = Problem.apiError("SERVICE_UNAVAILABLE", "The service is shutting down and takes no new requests; nothing was changed. Retry shortly.", {
  retryAfterSeconds: Lifecycle.closingRetryAfterSeconds
})
/** A request the close's deadline overtook: what it did may have been kept, so the same Idempotency-Key is the retry. */
const overtakenProblem = Problem.apiError(
  "SERVICE_UNAVAILABLE",
  "The service shut down before this request finished; it may or may not have taken effect. Retry it with the same Idempotency-Key.",
  { retryAfterSeconds: Lifecycle.closingRetryAfterSeconds }
)

/** `/readyz`'s answer: 200 `{"status":"ready"}`, or 503 SERVICE_UNAVAILABLE with the reason as its detail. */
const readyResponse = (readiness: Readiness.Readiness, info: RequestInfo, nowMs: number, basePath: string) =>
  readiness.ready
    ? HttpServerResponse.jsonUnsafe({ status: "ready" })
    : problemResponse(Problem.apiError("SERVICE_UNAVAILABLE", `${readiness.reason} Retry shortly.`, { retryAfterSeconds: storeRetryAfterSeconds }), info, nowMs, basePath)

const internalError = Problem.apiError("INTERNAL_ERROR", "An unexpected error occurred. Give the correlationId to support.")

/** How long a client is asked to wait while the store is out of reach: about one connection attempt's timeout. */
const storeRetryAfterSeconds = 5
const storeUnavailable = Problem.apiError("SERVICE_UNAVAILABLE", "The service cannot reach its database right now; nothing was changed. Retry shortly.", {
  retryAfterSeconds: storeRetryAfterSeconds
})

/**
 * An ApiError becomes its problem; the store out of reach is 503 SERVICE_UNAVAILABLE (nothing was committed, and
 * the store reconnects by itself); anything else but an interruption (a client gone) is logged and a 500. A problem
 * is stamped with the request's clock once known, else with `clock`, the engine's; `basePath` is the engine's.
 */
export const recover = (info: RequestInfo, cause: Cause.Cause<Problem.ApiError>, clock: Clock.Clock, basePath = "") => {
  const nowMs = () => (info.clock ?? clock).currentTimeMillisUnsafe()
  const failure = Cause.findErrorOption(cause)
  if (failure._tag === "Some") return Effect.succeed(problemResponse(failure.value, info, nowMs(), basePath))
  if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
  if (cause.reasons.some((r) => r._tag === "Die" && Store.isStoreUnavailable(r.defect))) {
    return Effect.succeed(problemResponse(storeUnavailable, info, nowMs(), basePath))
  }
  return Effect.as(
    Effect.logError("Unexpected failure", cause).pipe(Effect.annotateLogs({
      correlationId: info.correlationId,
      ...(info.organizationId === undefined ? {} : { organizationId: info.organizationId })
    })),
    problemResponse(internalError, info, nowMs(), basePath)
  )
}

/**
 * The headers every answer carries: correlation ids, and the rate limit once a key was accepted: one copy of the
 * answer's headers, with all of them added (docs/performance.md).
 */
export const finish = (info: RequestInfo, response: HttpServerResponse.HttpServerResponse) => {
  const finished = HttpServerResponse.setHeader(response, "x-correlation-id", info.correlationId)
  // `setHeader` made the answer a headers object of its own, which nothing else holds yet: the other headers join it
  // in place, in the order a `setHeaders` would add them, rather than each copying it again.
  const headers = finished.headers as Record<string, string>
  if (info.clientCorrelationId !== undefined) headers["x-client-correlation-id"] = info.clientCorrelationId
  const rate = info.rate
  if (rate !== undefined) {
    headers["x-ratelimit-limit"] = String(rate.limit)
    headers["x-ratelimit-remaining"] = String(rate.remaining)
    headers["x-ratelimit-reset"] = String(rate.resetSeconds)
  }
  return finished
}

/** Records an answered request and hands its response on unchanged. */
export type Logged = (
  request: HttpServerRequest.HttpServerRequest,
  info: RequestInfo,
  response: HttpServerResponse.HttpServerResponse
) => HttpServerResponse.HttpServerResponse

/**
 * Records the request in its organization's recent requests (a caller once known) and in the metrics of the
 * registry `metrics` holds (its route and operation once a route matched), and sends its entry to the request log,
 * if one is configured. They read real time at each end of a request: the monotonic clock (one hrtime
 * read) for its duration, and the wall clock (Date.now) at its end.
 */
export const makeLogged = (
  feed: LiveFeedService,
  requestLog: RequestLogger | undefined,
  realClock: Clock.Clock,
  metrics?: Context.Context<never>
): Logged => {
  // What the feed is handed of each answered request: one object, filled anew each time, which `record` reads at
  // once and keeps nothing of (LiveFeed.ts).
  const answered: { -readonly [K in keyof AnsweredRequest]-?: AnsweredRequest[K] } = {
    organizationId: "",
    environment: "sandbox",
    method: "",
    path: "",
    response: undefined as never,
    startedNs: 0n,
    durationNs: undefined,
    correlationId: "",
    clientAddress: "",
    injected: undefined,
    operationId: undefined,
    body: undefined,
    replayed: false
  }
  const recorded: Logged = (request, info, response) => {
    // Read once, for the metrics and the recent requests both.
    const { organizationId, environment } = info
    const known = organizationId !== undefined && environment !== undefined
    const durationNs = metrics !== undefined || known ? Number(realClock.monotonicTimeNanosUnsafe() - info.startedNs) : 0
    if (metrics !== undefined) {
      Metrics.recordRequestUnsafe(metrics, request.method, info.route, info.operation, response.status, problemTypeOf(response), durationNs / 1e9)
    }
    if (organizationId !== undefined && environment !== undefined) {
      answered.organizationId = organizationId
      answered.environment = environment
      answered.method = request.method
      answered.path = info.instance
      answered.response = response
      answered.startedNs = info.startedNs
      answered.durationNs = durationNs
      answered.correlationId = info.correlationId
      answered.clientAddress = info.clientIp
      answered.injected = info.injected
      answered.operationId = info.operation
      // A live request's body may hold a real customer's data: only the sandbox's are kept.
      answered.body = info.environment === "sandbox" ? info.body : undefined
      answered.replayed = info.replayed === true
      feed.record(answered)
      // Nothing of the request is held past its answer.
      answered.response = undefined as never
      answered.body = undefined
    }
    return response
  }
  if (requestLog === undefined) return recorded
  return (request, info, response) => {
    recorded(request, info, response)
    const endNs = realClock.monotonicTimeNanosUnsafe()
    requestLog({
      time: toIso(realClock.currentTimeMillisUnsafe()),
      method: request.method,
      path: info.instance,
      status: response.status,
      type: problemTypeOf(response),
      durationMs: Number(endNs - info.startedNs) / 1e6,
      correlationId: info.correlationId,
      organizationId: info.organizationId,
      environment: info.environment,
      clientAddress: info.clientIp,
      injected: info.injected
    })
    return response
  }
}

// --- the request's span ------------------------------------------------------------------------------------------

/** The headers a remote parent is read from (W3C's `traceparent`, B3's single and multiple headers). */
const traceHeaders = ["traceparent", "b3", "x-b3-traceid", "x-b3-spanid", "x-b3-sampled", "x-b3-flags"] as const

/**
 * The remote parent a request's trace headers name, read by Effect's own decoder, or undefined. Only those headers
 * are read: `request.headers` would copy every header of the request on Node, for a span that most requests start
 * with no parent.
 */
const remoteParent = (request: HttpServerRequest.HttpServerRequest): Tracer.AnySpan | undefined => {
  let headers: Record<string, string> | undefined
  for (const name of traceHeaders) {
    const value = headerOf(request, name)
    if (value !== undefined) (headers ??= {})[name] = value
  }
  return headers === undefined ? undefined : Option.getOrUndefined(HttpTraceContext.fromHeaders(headers as Headers.Headers))
}

/**
 * `answered` in the request's span (kernel/Telemetry.ts), a server span named by the operation. Its parent is the
 * span the request runs in when there is one (a host's own server span, which read the request's `traceparent`
 * already), else the remote parent the request's `traceparent` (or `b3`) names: so the header is read once, by
 * whichever server span comes first. Its attributes, the request's and the answer's (the status, the problem's
 * code, who the caller turned out to be), are set once, at its end, when all of them are known; a 5xx answer marks
 * it as an error.
 */
const traced = <R>(
  fiber: Fiber.Fiber<unknown, unknown>,
  tracer: Tracer.Tracer,
  info: RequestInfo,
  operationId: string | undefined,
  route: string | undefined,
  answered: Effect.Effect<HttpServerResponse.HttpServerResponse, never, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R> => {
  const request = info.request
  const { span, end } = Telemetry.start(fiber, tracer, Telemetry.requestSpanName(request.method, operationId, route), {
    kind: "server",
    parent: fiber.cache.span ?? remoteParent(request)
  })
  return Effect.onExit(Effect.provideService(answered, Tracer.ParentSpan, span), (exit) => {
    span.attribute(Telemetry.Attribute.httpMethod, request.method)
    span.attribute(Telemetry.Attribute.urlPath, info.instance)
    if (route !== undefined) span.attribute(Telemetry.Attribute.httpRoute, route)
    if (operationId !== undefined) span.attribute(Telemetry.Attribute.operationId, operationId)
    span.attribute(Telemetry.Attribute.clientAddress, info.clientIp)
    const userAgent = headerOf(request, "user-agent")
    if (userAgent !== undefined) span.attribute(Telemetry.Attribute.userAgent, userAgent)
    if (info.clientCorrelationId !== undefined) span.attribute(Telemetry.Attribute.clientCorrelationId, info.clientCorrelationId)
    // The correlation id is read once the answer carries it: a seeded engine draws it on its first read.
    span.attribute(Telemetry.Attribute.correlationId, info.correlationId)
    if (info.organizationId !== undefined) span.attribute(Telemetry.Attribute.organization, info.organizationId)
    if (info.environment !== undefined) span.attribute(Telemetry.Attribute.environment, info.environment)
    if (Exit.isFailure(exit)) {
      end(exit)
      return Effect.void
    }
    const status = exit.value.status
    span.attribute(Telemetry.Attribute.httpStatus, status)
    const code = problemTypeOf(exit.value)
    if (code !== undefined) span.attribute(Telemetry.Attribute.errorCode, code)
    if (status < 500) {
      end(Exit.void)
      return Effect.void
    }
    span.attribute(Telemetry.Attribute.errorType, code ?? String(status))
    end(Telemetry.failed(`${status} ${code ?? ""}`.trim()))
    return Effect.void
  })
}

// --- the edge ----------------------------------------------------------------------------------------------------

/** What the edge is made of, once per engine. */
export interface EdgeOptions {
  readonly correlation: CorrelationIds
  /** The engine's clock, taken once: a server may run requests in a context of its own. */
  readonly clock: Clock.Clock
  /** Real time, for the request's duration and the log's time, whatever the engine's clock. */
  readonly realClock: Clock.Clock
  readonly feed: LiveFeedService
  readonly requestLog: RequestLogger | undefined
  /** The gate's authentication, which an unknown route under a base address passes before its 404. */
  readonly admit: Admit
  /** The `/docs` reference pages, when the engine has their files. */
  readonly docs: ((path: string) => HttpServerResponse.HttpServerResponse | undefined) | undefined
  readonly store: Store.StoreService
  /** The engine's services, added for a host that serves the routes in a context of its own. */
  readonly engineContext: Context.Context<Engine.EngineServices>
  /** What an embedding host says of each request beside it (HostIdentity.ts); undefined on a server. */
  readonly identify?: IdentifyRequest | undefined
  /** Whether `/inspect` is served: its data are the sandbox's simulate endpoints, so not without them (Served.ts). */
  readonly inspector?: boolean | undefined
  /** The path every route is under (BasePath.ts): `""`, or `/fos`. */
  readonly basePath: string
  /** Whether the engine still takes requests: a closing one answers each 503 (kernel/Lifecycle.ts). */
  readonly lifecycle: Lifecycle.LifecycleService
  /** A context holding the registry the requests are counted in (kernel/Metrics.ts); none: not counted. */
  readonly metrics?: Context.Context<never> | undefined
  /** The methods each route's path takes (Served.ts), asked only by a 404, which names them. */
  readonly pathMethods?: (() => PathMethods) | undefined
}

/** What a request's `Answering` needs of its edge, made once per edge. */
interface EdgeParts {
  readonly logged: Logged
  readonly clock: Clock.Clock
  readonly basePath: string
  readonly nowMs: () => number
}

/**
 * How a routed request ends, as it leaves the requests in flight (`Lifecycle.admitWith`): its answer finished and
 * recorded; a failure, its problem (`recover`); a closing engine's 503, and the close's deadline's. One object a
 * request, where closures would be four, and two effects besides.
 */
class Answering implements Lifecycle.Admission<HttpServerResponse.HttpServerResponse, Problem.ApiError, never, HttpServerResponse.HttpServerResponse, never, never> {
  readonly parts: EdgeParts
  readonly info: RequestInfo
  constructor(parts: EdgeParts, info: RequestInfo) {
    this.parts = parts
    this.info = info
  }
  end(response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse {
    return this.parts.logged(this.info.request, this.info, finish(this.info, response))
  }
  rescue(cause: Cause.Cause<Problem.ApiError>): Effect.Effect<HttpServerResponse.HttpServerResponse, Problem.ApiError> {
    return recover(this.info, cause, this.parts.clock, this.parts.basePath)
  }
  refused(): Effect.Effect<HttpServerResponse.HttpServerResponse> {
    return Effect.sync(() => this.problem(closingProblem))
  }
  late(): Effect.Effect<HttpServerResponse.HttpServerResponse> {
    return Effect.sync(() => this.problem(overtakenProblem))
  }
  private problem(error: Problem.ApiError): HttpServerResponse.HttpServerResponse {
    const { parts, info } = this
    return parts.logged(info.request, info, finish(info, problemResponse(error, info, parts.nowMs(), parts.basePath)))
  }
}

/** The order a 404's detail names a path's methods in. */
const methodOrder = ["GET", "POST", "PUT", "PATCH", "DELETE"]

/**
 * The methods `path` takes, from the route whose path it is exactly: a fixed path's own (`/v2/customers/search`)
 * before those of a pattern it also fits (`/v2/customers/:id`), as the router prefers it.
 */
const methodsAt = (pathMethods: PathMethods, path: string): ReadonlyArray<string> => {
  const fixed = pathMethods.get(path)
  const methods = fixed !== undefined ? [...fixed.methods] : [...pathMethods].flatMap(([pattern, entry]) => isExactPath(pattern, path) ? [...entry.methods] : [])
  return methodOrder.filter((method) => methods.includes(method))
}

/** "No such route.", and when the path takes other methods, which (the spec has no 405: a wrong method is a 404). */
const noSuchRoute = (methods: ReadonlyArray<string>): string =>
  methods.length === 0 ? "No such route." : `No such route: this path takes ${methods.length === 1 ? methods[0] : `${methods.slice(0, -1).join(", ")} and ${methods.at(-1)}`}.`

/** The edge of one engine: around every route, and for what no route matched. */
export interface EdgeRoutes {
  /**
   * A route under the edge, for `environment` (undefined on the operator surface); `operationId`, the OpenAPI
   * operation the route is, names its span.
   */
  readonly serve: (environment: Environment | undefined, run: RouteRun, operationId?: string) => Effect.Effect<HttpServerResponse.HttpServerResponse>
  /** The global middleware for what no route matched: it answers the router's not-found and passes every other failure on. */
  readonly unrouted: <E>(httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E>) => Effect.Effect<HttpServerResponse.HttpServerResponse, E>
}

/** The edge over one engine's services: `serve` and `unrouted`, which begin, answer and record a request alike. */
export const makeEdge = (options: EdgeOptions): EdgeRoutes => {
  const { clock, admit, docs, store, engineContext, basePath, lifecycle } = options
  let pathMethods: PathMethods | undefined
  const methodsOf = (path: string) => options.pathMethods === undefined ? [] : methodsAt(pathMethods ??= options.pathMethods(), path)
  const inspector = options.inspector === false ? () => undefined : inspectorPage
  const begin = makeBegin(options.correlation, options.realClock, options.identify)
  const logged = makeLogged(options.feed, options.requestLog, options.realClock, options.metrics)
  const nowMs = () => clock.currentTimeMillisUnsafe()
  /** The base address of a path under the base path; undefined outside both. */
  const baseUnder = (path: string) => {
    const rest = underBase(basePath, path)
    return rest === undefined ? undefined : baseOf(rest)
  }
  const noRoute = Problem.apiError("NOT_FOUND", `No such route. Base addresses are ${basePath}/sandbox and ${basePath}/live.`)
  /** `answer` as a request in flight, which a close waits for; once the engine is closing, the 503 instead. */
  const inFlight = <R>(request: HttpServerRequest.HttpServerRequest, info: RequestInfo, answer: Effect.Effect<HttpServerResponse.HttpServerResponse, never, R>) =>
    lifecycle.admit(
      answer,
      Effect.sync(() => logged(request, info, finish(info, problemResponse(closingProblem, info, nowMs(), basePath)))),
      Effect.sync(() => logged(request, info, finish(info, problemResponse(overtakenProblem, info, nowMs(), basePath))))
    )
  const parts: EdgeParts = { logged, clock, basePath, nowMs }

  /**
   * What answers a path that is no route (or only the router's lenient reading of one): `/healthz` and `/docs`
   * are handled before; outside the base addresses it is 404 at once, and under one it is 404 after
   * authentication, so the route table cannot be probed without a key.
   */
  const unknownRoute = (request: HttpServerRequest.HttpServerRequest, path: string, info: RequestInfo) => {
    const problem = (error: Problem.ApiError) => Effect.succeed(logged(request, info, finish(info, problemResponse(error, info, nowMs(), basePath))))
    if (baseUnder(path) === undefined) return problem(noRoute)
    const badPath = path.includes("%") && !decodable(path)
    if (info.environment === undefined) {
      return problem(badPath ? Problem.apiError("BAD_REQUEST", "The request path is not valid percent-encoding.") : Problem.apiError("NOT_FOUND", "No such operator route."))
    }
    // Under an environment's base the key is checked first, so the refusal of a path carries the rate headers.
    const refusal = badPath ? Problem.apiError("BAD_REQUEST", "The request path is not valid percent-encoding.") : Problem.apiError("NOT_FOUND", noSuchRoute(methodsOf(path)))
    return Effect.catch(admit(info, undefined, false, () => Effect.fail(refusal)), problem)
  }

  const serve: EdgeRoutes["serve"] = (environment, run, operationId) =>
    Effect.withFiber((fiber) => {
      const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
      const path = pathOf(request.url)
      const route = Context.getOrUndefined(fiber.context, HttpRouter.RouteContext)?.route
      let answered: Effect.Effect<HttpServerResponse.HttpServerResponse, never, Engine.EngineServices>
      let info: BegunRequest
      const exact = route === undefined || isExactPath(route.path, path)
      if (!exact) {
        info = begin(request, baseUnder(path)?.environment, path)
        answered = inFlight(request, info, unknownRoute(request, path, info))
      } else {
        info = begin(request, environment, path)
        info.route = route?.path
        info.operation = operationId
        // A failure becomes its problem, and the answer is finished and recorded as it leaves the requests in
        // flight, in the same step of the fiber (kernel/Lifecycle.ts).
        answered = lifecycle.admitWith(
          info.refusesClientCorrelation ? Effect.fail(badClientCorrelationId) : run(request, info),
          new Answering(parts, info)
        ) as Effect.Effect<HttpServerResponse.HttpServerResponse, never, Engine.EngineServices>
      }
      const tracer = Telemetry.tracerOf(fiber)
      if (tracer !== undefined) answered = traced(fiber, tracer, info, exact ? operationId : undefined, exact ? route?.path : undefined, answered)
      // The servers run requests in a context that holds this engine's services already (`serveEngine`, the web
      // handler). A host that serves the routes in a context of its own gets them added here, once, for all the
      // request does: the engine's services win over the host's, and what the request adds (its route, a
      // transaction) is kept.
      return Context.getOrUndefined(fiber.context, Store.Store) === store
        ? answered as Effect.Effect<HttpServerResponse.HttpServerResponse>
        : Effect.provideContext(answered, Context.merge(fiber.context, engineContext))
    })

  const unrouted: EdgeRoutes["unrouted"] = (httpEffect) =>
    Effect.catchCause(httpEffect, (cause) => {
      const failure = Cause.findErrorOption(cause)
      if (failure._tag === "None" || !isRouteNotFound(failure.value)) return Effect.failCause(cause)
      const request = (failure.value as { reason: { request: HttpServerRequest.HttpServerRequest } }).reason.request
      const path = pathOf(request.url)
      // What the path is under the base path; the pages are found by it.
      const rest = underBase(basePath, path)
      const info = begin(request, rest === undefined ? undefined : baseOf(rest)?.environment, path)
      const done = (response: HttpServerResponse.HttpServerResponse) => logged(request, info, finish(info, response))
      // A closing engine answers what no route matched with the same 503 as its routes, `/healthz` first of all.
      const answer = inFlight(request, info, Effect.suspend(() => {
        if (info.refusesClientCorrelation) return Effect.succeed(done(problemResponse(badClientCorrelationId, info, nowMs(), basePath)))
        if (rest === "/healthz") return Effect.succeed(done(HttpServerResponse.jsonUnsafe({ status: "ok" })))
        if (rest === "/readyz") return Effect.map(Effect.provideContext(Readiness.check, engineContext), (readiness) => done(readyResponse(readiness, info, nowMs(), basePath)))
        // The reference pages are public documentation, like the OpenAPI documents they show: no key. The error
        // reference and the inspector (Inspector.ts, whose data needs a key) need no files, so every engine serves
        // them.
        const readable = request.method === "GET" || request.method === "HEAD"
        const page = readable && rest !== undefined ? errorReferencePage(rest, basePath) ?? inspector(rest, basePath) ?? docs?.(rest) : undefined
        if (page !== undefined) return Effect.succeed(done(page))
        return unknownRoute(request, path, info)
      }))
      return Effect.withFiber((fiber) => {
        const tracer = Telemetry.tracerOf(fiber)
        return tracer === undefined ? answer : traced(fiber, tracer, info, undefined, undefined, answer)
      })
    })

  return { serve, unrouted }
}
