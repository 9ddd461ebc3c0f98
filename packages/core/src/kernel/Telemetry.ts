/**
 * fos's spans: every name and attribute fos gives its tracing, and the one helper that makes a span
 * (docs/observability.md, "Spans").
 *
 * A span goes to the `Tracer` of the context it runs in: a host's own (an Effect host provides one to
 * `layerEmbedded` or `layerRoutes`; `createEngine({ telemetry: { tracer } })` provides it for a host that does not use
 * Effect), or none. With none (or Effect's native tracer, which has no backend, or tracing disabled with
 * `References.TracerEnabled`) nothing is made: the helper checks the fiber's tracer, two property reads, and runs the
 * work as it is, so an engine nobody traces pays no more than that (docs/performance.md). Effect's HTTP server skips
 * its own request span on the same test.
 *
 * Spans are timed on real time (`RealClock`), whatever clock the engine runs on: a virtual clock stands still
 * through a request and may be days from now, and a tracing backend lays fos's spans out beside the host's, which
 * are on real time. That is why the helper starts the span with the tracer itself rather than with `Effect.withSpan`,
 * which reads the fiber's Clock. Span and trace ids are the tracer's: they never draw from the engine's `Random`, so
 * a seeded run answers the same bytes traced or not.
 *
 * Attribute names are OpenTelemetry's semantic conventions where one exists (`http.request.method`,
 * `http.response.status_code`, `http.route`, `url.path`, `client.address`, `error.type`) and `fos.*` for fos's own.
 */
import { Clock, Context, Effect, Exit, type Fiber, Option, Tracer } from "effect"
import * as RealClock from "./RealClock.ts"

/** Every span fos makes, by what it stands for. A request's span is named by its operation (`requestSpanName`). */
export const SpanName = {
  /** One store transaction, from its start to its commit or rollback, its runs again after a conflict included. */
  transaction: "fos.store.transaction",
  /** One advance of a virtual clock: a sandbox's, or the engine's root clock (`engine.clock`). */
  clockAdvance: "fos.clock.advance",
  /** One timer fired: its transaction, and the work it hands on after its commit. */
  timer: "fos.timer.fire",
  /** One webhook delivery attempt: the send to the receiver and the record of its answer. */
  webhookAttempt: "fos.webhook.attempt",
  snapshot: "fos.snapshot.take",
  restore: "fos.snapshot.restore",
  fork: "fos.snapshot.fork"
} as const

/** Every attribute fos sets, by what it says. */
export const Attribute = {
  httpMethod: "http.request.method",
  httpRoute: "http.route",
  httpStatus: "http.response.status_code",
  urlPath: "url.path",
  clientAddress: "client.address",
  userAgent: "user_agent.original",
  errorType: "error.type",
  operationId: "fos.operation.id",
  correlationId: "fos.correlation_id",
  clientCorrelationId: "fos.client_correlation_id",
  organization: "fos.organization.id",
  environment: "fos.environment",
  errorCode: "fos.error.code",
  transactionRetries: "fos.store.transaction.retries",
  retryReason: "fos.store.retry.reason",
  clock: "fos.clock.id",
  clockFrom: "fos.clock.from",
  clockTo: "fos.clock.to",
  timersFired: "fos.clock.timers_fired",
  timerId: "fos.timer.id",
  timerKind: "fos.timer.kind",
  timerDue: "fos.timer.due_at",
  resourceId: "fos.resource.id",
  endpointId: "fos.webhook.endpoint.id",
  deliveryId: "fos.webhook.delivery.id",
  attemptId: "fos.webhook.attempt.id",
  eventType: "fos.event.type",
  latencyMs: "fos.webhook.latency_ms",
  snapshotId: "fos.snapshot.id",
  forkOrganization: "fos.fork.organization.id"
} as const

/** The event a store transaction's span gets each time the store runs it again, with `fos.store.retry.reason`. */
export const transactionRetryEvent = "fos.store.transaction.retry"

/**
 * The name of a request's span: its OpenAPI operation id (`payouts.create`) when the route is an operation, else the
 * method and the route (`GET /healthz`), else the method alone (a path no route matched), as OpenTelemetry names an
 * HTTP server span that has no better name.
 */
export const requestSpanName = (method: string, operationId: string | undefined, route: string | undefined): string =>
  operationId ?? (route === undefined ? method : `${method} ${route}`)

/**
 * The tracer that receives the spans of `fiber`, or undefined when none would be seen: no tracer in its context,
 * Effect's native one, or tracing turned off.
 */
export const tracerOf = (fiber: Fiber.Fiber<unknown, unknown>): Tracer.Tracer | undefined => {
  const tracer = fiber.cache.tracer
  return tracer === undefined || tracer === Tracer.nativeTracer || !fiber.cache.tracerEnabled ? undefined : tracer
}

/** A span begun with `start`: the span, and the real clock that ends it. */
export interface Started {
  readonly span: Tracer.Span
  /** Ends the span at the real clock's time with `exit` (a failure marks the span as an error). */
  readonly end: (exit: Exit.Exit<unknown, unknown>) => void
}

export interface SpanOptions {
  /** Its attributes from the start (those defined); a function is called only when the span is made. */
  readonly attributes?: Readonly<Record<string, unknown>> | (() => Readonly<Record<string, unknown>>) | undefined
  readonly kind?: Tracer.SpanKind | undefined
  /** The parent; the fiber's current span when omitted. */
  readonly parent?: Tracer.AnySpan | undefined
}

/** Sets the attributes whose value is defined. */
const setAll = (span: Tracer.Span, attributes: Readonly<Record<string, unknown>> | undefined) => {
  if (attributes === undefined) return
  for (const key in attributes) {
    const value = attributes[key]
    if (value !== undefined) span.attribute(key, value)
  }
}

/** Begins a span of `tracer` on real time, under the fiber's current span unless given a parent; the caller ends it. */
export const start = (fiber: Fiber.Fiber<unknown, unknown>, tracer: Tracer.Tracer, name: string, options: SpanOptions = {}): Started => {
  const parent = options.parent ?? fiber.cache.span
  const clock = Context.getOrUndefined(fiber.context, RealClock.RealClock) ?? fiber.getRef(Clock.Clock)
  const span = tracer.span({
    name,
    parent: Option.fromUndefinedOr(parent),
    annotations: Context.empty(),
    links: [],
    startTime: clock.currentTimeNanosUnsafe(),
    kind: options.kind ?? "internal",
    root: false,
    sampled: parent?.sampled ?? true
  })
  setAll(span, typeof options.attributes === "function" ? options.attributes() : options.attributes)
  return { span, end: (exit) => span.end(clock.currentTimeNanosUnsafe(), exit) }
}

/**
 * Runs `effect` in a span named `name` (a `SpanName`), its current span for what it does: nested spans are its
 * children and `annotate` sets its attributes. Without a tracer, `effect` runs as it is.
 */
export const withSpan = (name: string, options?: SpanOptions) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    const tracer = tracerOf(fiber)
    if (tracer === undefined) return effect
    const started = start(fiber, tracer, name, options)
    return Effect.onExit(Effect.provideService(effect, Tracer.ParentSpan, started.span), (exit) => Effect.sync(() => started.end(exit)))
  })

/** The fiber's current span when it is one of this process's (not a remote parent) and a tracer receives it. */
const ownSpanOf = (fiber: Fiber.Fiber<unknown, unknown>): Tracer.Span | undefined => {
  const span = tracerOf(fiber) === undefined ? undefined : fiber.cache.span
  return span?._tag === "Span" ? span : undefined
}

/**
 * A store's transaction, outermost only (one joined by a transaction inside it is part of the outer one): every store
 * runs its transactions in it. A store that runs one again tells it with `transactionRetried`.
 */
export const transactionSpan = withSpan(SpanName.transaction)

/** The current store transaction runs again from its start, for `reason` (`conflict`, `aborted`: kernel/Metrics.ts). */
export const transactionRetried = (reason: string): Effect.Effect<void> =>
  countEvent(transactionRetryEvent, Attribute.transactionRetries, { [Attribute.retryReason]: reason })

/** Sets attributes of the current span (those defined); nothing without a tracer. */
export const annotate = (attributes: Readonly<Record<string, unknown>>): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    const span = ownSpanOf(fiber)
    if (span !== undefined) setAll(span, attributes)
    return Effect.void
  })

/**
 * Adds an event to the current span and counts it in the attribute `counter` (how many such events it has had); nothing
 * without a tracer. A store transaction's runs again are told so (`transactionRetryEvent`).
 */
export const countEvent = (name: string, counter: string, attributes?: Readonly<Record<string, unknown>>): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    const span = ownSpanOf(fiber)
    if (span === undefined) return Effect.void
    const clock = Context.getOrUndefined(fiber.context, RealClock.RealClock) ?? fiber.getRef(Clock.Clock)
    span.event(name, clock.currentTimeNanosUnsafe(), attributes as Record<string, unknown> | undefined)
    const count = span.attributes.get(counter)
    span.attribute(counter, (typeof count === "number" ? count : 0) + 1)
    return Effect.void
  })

/**
 * `effect`, to run later (work handed on after a commit, to a worker), under the span current now: what it does is
 * that span's child however late it runs. As it is without a tracer.
 */
export const underCurrentSpan = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<Effect.Effect<A, E, R>> =>
  Effect.withFiber((fiber) => {
    const span = tracerOf(fiber) === undefined ? undefined : fiber.cache.span
    return Effect.succeed(span === undefined ? effect : Effect.provideService(effect, Tracer.ParentSpan, span))
  })

/** The organization and environment of a scope (`Tenancy.scopeOf`: `org_…/sandbox`) as attributes. */
export const scopeAttributes = (scope: string | undefined): Record<string, string | undefined> => {
  if (scope === undefined) return {}
  const slash = scope.lastIndexOf("/")
  return slash < 0 ? { [Attribute.organization]: scope } : { [Attribute.organization]: scope.slice(0, slash), [Attribute.environment]: scope.slice(slash + 1) }
}

/** An exit that marks a span as an error with `message` (an answer of 5xx), without a stack to capture. */
export const failed = (message: string): Exit.Exit<never, { readonly _tag: string; readonly message: string }> =>
  Exit.fail({ _tag: "ServerError", message })
