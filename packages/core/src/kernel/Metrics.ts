/**
 * The engine's metrics, as Effect `Metric`s: one catalog (`catalog`) names each, with its unit, its type and its
 * labels, and docs/observability.md's table is checked against it. Names and units are OpenTelemetry's semantic
 * conventions' where one exists (`http.server.request.duration`, in seconds, with `http.request.method`,
 * `http.route` and `http.response.status_code`), and `fos.*` otherwise.
 *
 * Where they are kept: in the `Metric.MetricRegistry` of the engine's context. Each engine makes a registry of its
 * own (`registryOf`), so two engines in one process never add to each other's counts, unless the host built the
 * engine in a context that provides one: then the host's registry holds them beside its own metrics, for its own
 * exporter. `prometheusText` renders a registry in Prometheus' text format, with the names OpenTelemetry's
 * Prometheus exporter gives: dots become underscores, a counter ends in `_total` and a unit in seconds adds
 * `_seconds`.
 *
 * What they cost: an update is a lookup in the registry's map and an addition (a histogram's bucket search besides),
 * on series made once per label set and kept (`series`; a request's, found by their label values, `nestedSeries`),
 * so nothing is built per request. Two numbers are read only when the metrics are read (`observe`): the pending
 * timers (a count of the store's index) and the open streams, which no update path pays for.
 */
import { type Clock, Context, Effect, Metric } from "effect"
import { PrometheusMetrics } from "effect/observability"

/** One metric as the catalog names it. */
export interface Definition {
  /** Its OpenTelemetry name. */
  readonly name: string
  readonly type: "counter" | "histogram" | "gauge"
  /** Its unit, in UCUM as OpenTelemetry writes it: `s`, or a count's `{request}`. */
  readonly unit: string
  /** Its labels (attributes); a series carries those that apply to it. */
  readonly labels: ReadonlyArray<string>
  readonly description: string
}

/**
 * OpenTelemetry's advice for `http.server.request.duration`, in seconds: 5 ms to 10 s. The other durations use the
 * same buckets, so one dashboard reads them all.
 */
export const durationBoundariesSeconds: ReadonlyArray<number> = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]

const define = <const D extends Definition>(definition: D) => definition

export const requestDuration = define({
  name: "http.server.request.duration",
  type: "histogram",
  unit: "s",
  labels: ["http.request.method", "http.route", "http.response.status_code"],
  description: "Duration of HTTP server requests, from the request reaching the engine to its answer."
})
export const requests = define({
  name: "fos.server.requests",
  type: "counter",
  unit: "{request}",
  labels: ["fos.operation", "http.response.status_code", "fos.error.code"],
  description: "Requests answered, by operation id, status and the problem's error code."
})
export const rateLimited = define({
  name: "fos.server.rate_limited",
  type: "counter",
  unit: "{request}",
  labels: ["fos.operation"],
  description: "Requests refused 429 RATE_LIMITED, by operation id."
})
export const transactionDuration = define({
  name: "fos.store.transaction.duration",
  type: "histogram",
  unit: "s",
  labels: [],
  description: "Duration of store transactions, retries included."
})
export const transactionRetries = define({
  name: "fos.store.transaction.retries",
  type: "counter",
  unit: "{retry}",
  labels: ["fos.store.retry.reason"],
  description: "Store transactions run again: aborted by the database (deadlock, serialization) or a row locked late found changed."
})
export const timersFired = define({
  name: "fos.timer.fired",
  type: "counter",
  unit: "{timer}",
  labels: ["fos.timer.kind"],
  description: "Timers fired, by kind."
})
export const timersPending = define({
  name: "fos.timer.pending",
  type: "gauge",
  unit: "{timer}",
  labels: [],
  description: "Timers not yet fired, in the store, when the metrics are read."
})
export const webhookAttempts = define({
  name: "fos.webhook.attempts",
  type: "counter",
  unit: "{attempt}",
  labels: ["fos.webhook.outcome"],
  description: "Webhook attempts, by outcome: ok (2xx), rejected (another status), unreachable (no answer)."
})
export const webhookAttemptDuration = define({
  name: "fos.webhook.attempt.duration",
  type: "histogram",
  unit: "s",
  labels: ["fos.webhook.outcome"],
  description: "Duration of webhook attempts, by outcome."
})
export const openStreams = define({
  name: "fos.streams.open",
  type: "gauge",
  unit: "{stream}",
  labels: [],
  description: "Live streams (server-sent events) open in this process, when the metrics are read."
})

/** Every metric of the engine, in the order docs/observability.md lists them. */
export const catalog: ReadonlyArray<Definition> = [
  requestDuration,
  requests,
  rateLimited,
  transactionDuration,
  transactionRetries,
  timersFired,
  timersPending,
  webhookAttempts,
  webhookAttemptDuration,
  openStreams
]

/** The name a metric has in Prometheus' text format, as OpenTelemetry's Prometheus exporter names it. */
export const prometheusName = (definition: Definition): string =>
  definition.name.replace(/[^a-zA-Z0-9_:]/g, "_") + (definition.unit === "s" ? "_seconds" : "") + (definition.type === "counter" ? "_total" : "")

const byName = new Map(catalog.map((d) => [d.name, prometheusName(d)]))

// --- series ------------------------------------------------------------------------------------------------------

/**
 * Series of one metric, one per label set, made on first use and kept: a label set is a key the caller builds
 * (`labels` are read only the first time), so an update builds no object.
 */
const series = <M>(make: (attributes: Readonly<Record<string, string>>) => M) => {
  const made = new Map<string, M>()
  return (key: string, labels: () => Readonly<Record<string, string>>): M => {
    let metric = made.get(key)
    if (metric === undefined) {
      metric = make(labels())
      made.set(key, metric)
    }
    return metric
  }
}

const counterOf = (definition: Definition) =>
  series((attributes) => Metric.counter(definition.name, { description: definition.description, attributes, incremental: true }))
const histogramOf = (definition: Definition) =>
  series((attributes) => Metric.histogram(definition.name, { description: definition.description, attributes, boundaries: durationBoundariesSeconds }))

const rateLimitedSeries = counterOf(rateLimited)
const transactionDurationMetric = histogramOf(transactionDuration)("", () => ({}))
const retrySeries = counterOf(transactionRetries)
const firedSeries = counterOf(timersFired)
const attemptSeries = counterOf(webhookAttempts)
const attemptDurationSeries = histogramOf(webhookAttemptDuration)
const pendingMetric = Metric.gauge(timersPending.name, { description: timersPending.description })
const openStreamsMetric = Metric.gauge(openStreams.name, { description: openStreams.description })

/** The methods OpenTelemetry names; any other is `_OTHER`, so a client cannot make a series per made-up method. */
const knownMethods = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"])

// --- updates -----------------------------------------------------------------------------------------------------

/**
 * Series of a metric with three labels, found by their values through nested maps, a level a label: an update on a
 * series made already builds no key and no object.
 */
const nestedSeries = <A, B, C, M>(make: (a: A, b: B, c: C) => M) => {
  const root = new Map<A, Map<B, Map<C, M>>>()
  return (a: A, b: B, c: C): M => {
    let byB = root.get(a)
    if (byB === undefined) root.set(a, byB = new Map())
    let byC = byB.get(b)
    if (byC === undefined) byB.set(b, byC = new Map())
    let metric = byC.get(c)
    if (metric === undefined) byC.set(c, metric = make(a, b, c))
    return metric
  }
}

/** By method, status and route. */
const durationSeriesOf = nestedSeries((method: string, status: number, route: string | undefined) =>
  Metric.histogram(requestDuration.name, {
    description: requestDuration.description,
    attributes: {
      "http.request.method": method,
      "http.response.status_code": String(status),
      ...(route === undefined ? {} : { "http.route": route })
    },
    boundaries: durationBoundariesSeconds
  }))
/** By operation, status and the problem's code. */
const requestSeriesOf = nestedSeries((operation: string | undefined, status: number, code: string | undefined) =>
  Metric.counter(requests.name, {
    description: requests.description,
    attributes: {
      ...(operation === undefined ? {} : { "fos.operation": operation }),
      "http.response.status_code": String(status),
      ...(code === undefined ? {} : { "fos.error.code": code })
    },
    incremental: true
  }))

/**
 * Records an answered request in the registry of `context` (a context that holds the engine's registry): its method,
 * its route's pattern (`/sandbox/v2/customers/:id`, undefined when no route matched), its OpenAPI operation id
 * (`customers.get`, undefined off the API: the operator surface, `/healthz`), its status, the problem's code
 * (`RATE_LIMITED`, undefined on a success) and its duration. Positional, so that the edge builds no object for it.
 */
export const recordRequestUnsafe = (
  context: Context.Context<never>,
  method: string,
  route: string | undefined,
  operation: string | undefined,
  status: number,
  code: string | undefined,
  durationSeconds: number
): void => {
  const known = knownMethods.has(method) ? method : "_OTHER"
  durationSeriesOf(known, status, route).updateUnsafe(durationSeconds, context)
  requestSeriesOf(operation, status, code).updateUnsafe(1, context)
  if (code === "RATE_LIMITED") {
    rateLimitedSeries(operation ?? "", () => (operation === undefined ? {} : { "fos.operation": operation })).updateUnsafe(1, context)
  }
}

const inContext = (update: (context: Context.Context<never>) => void): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    update(fiber.context)
    return Effect.void
  })

/** One store transaction's duration, in seconds. */
export const transactionTook = (seconds: number): Effect.Effect<void> => inContext((context) => transactionDurationMetric.updateUnsafe(seconds, context))

/**
 * `transaction`, a store's outermost transaction, timed on `clock` (the real clock the store was built with: the
 * engine's Clock may be virtual, and stand still).
 */
export const timedTransaction = <A, E, R>(clock: Clock.Clock, transaction: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const startNs = clock.monotonicTimeNanosUnsafe()
    return Effect.onExit(transaction, () => transactionTook(Number(clock.monotonicTimeNanosUnsafe() - startNs) / 1e9))
  })

/** Why a store ran a transaction again. */
export type RetryReason = "aborted" | "conflict"

/** A store transaction run again, for `reason`. */
export const transactionRetried = (reason: RetryReason): Effect.Effect<void> =>
  inContext((context) => retrySeries(reason, () => ({ "fos.store.retry.reason": reason })).updateUnsafe(1, context))

/** A timer of `kind` fired. */
export const timerFired = (kind: string): Effect.Effect<void> =>
  inContext((context) => firedSeries(kind, () => ({ "fos.timer.kind": kind })).updateUnsafe(1, context))

/** How a webhook attempt ended: a 2xx, another status, or no answer (a transport error, the time limit, a refused address). */
export type AttemptOutcome = "ok" | "rejected" | "unreachable"

/** The outcome of an attempt that answered `status` (null: no answer). */
export const attemptOutcomeOf = (status: number | null): AttemptOutcome =>
  status === null ? "unreachable" : status >= 200 && status < 300 ? "ok" : "rejected"

/** A webhook attempt ended with `outcome` after `seconds`. */
export const webhookAttempted = (outcome: AttemptOutcome, seconds: number): Effect.Effect<void> =>
  inContext((context) => {
    attemptSeries(outcome, () => ({ "fos.webhook.outcome": outcome })).updateUnsafe(1, context)
    attemptDurationSeries(outcome, () => ({ "fos.webhook.outcome": outcome })).updateUnsafe(seconds, context)
  })

// --- the registry and reading it ---------------------------------------------------------------------------------

/**
 * The registry an engine keeps its metrics in: the one its context provides (a host's), else a new one, never
 * Effect's process-wide default, which every engine of the process would share.
 */
export const registryOf: Effect.Effect<Metric.MetricRegistry> = Effect.map(
  Effect.context<never>(),
  (context) => context.mapUnsafe.has(Metric.MetricRegistry.key) ? Context.get(context, Metric.MetricRegistry) : new Map()
)

/**
 * Makes at zero, in the registry of `context`, every series whose labels are known before anything happens: the
 * unlabelled metrics, each retry reason, each attempt outcome and each kind of timer the engine fires. A dashboard
 * then reads 0 rather than no series, and a rate over a counter starts from its first reading.
 */
export const registerKnownUnsafe = (context: Context.Context<never>, timerKinds: Iterable<string>): void => {
  transactionDurationMetric.valueUnsafe(context)
  pendingMetric.valueUnsafe(context)
  openStreamsMetric.valueUnsafe(context)
  for (const reason of ["aborted", "conflict"] as const) retrySeries(reason, () => ({ "fos.store.retry.reason": reason })).valueUnsafe(context)
  for (const outcome of ["ok", "rejected", "unreachable"] as const) {
    attemptSeries(outcome, () => ({ "fos.webhook.outcome": outcome })).valueUnsafe(context)
    attemptDurationSeries(outcome, () => ({ "fos.webhook.outcome": outcome })).valueUnsafe(context)
  }
  for (const kind of timerKinds) firedSeries(kind, () => ({ "fos.timer.kind": kind })).valueUnsafe(context)
}

/** What is read only when the metrics are read: the numbers `observe` sets before a reading. */
export interface Observed {
  /** Undefined when the store could not say: the gauge keeps its last reading. */
  readonly pendingTimers: number | undefined
  readonly openStreams: number
}

/** Sets the gauges read only when the metrics are read, in the registry of `context`. */
export const observeUnsafe = (context: Context.Context<never>, observed: Observed): void => {
  if (observed.pendingTimers !== undefined) pendingMetric.updateUnsafe(observed.pendingTimers, context)
  openStreamsMetric.updateUnsafe(observed.openStreams, context)
}

/** The metrics of the registry of `context`, in Prometheus' text exposition format (version 0.0.4). */
export const prometheusTextUnsafe = (context: Context.Context<never>): string =>
  PrometheusMetrics.formatUnsafe(context, { metricNameMapper: (name) => byName.get(name) ?? name })

/** The media type of `prometheusText`'s answer. */
export const prometheusContentType = "text/plain; version=0.0.4; charset=utf-8"
