/**
 * A running engine with its HTTP application: what the servers serve and what a host embeds.
 *
 * `createEngine` builds the engine services once (store, clock, limiter, scheduler), applies a seed, and
 * exposes the same HTTP semantics as a fetch-style function with no port, the virtual clock's controls, and the
 * webhook deliveries it sent. `layerEmbedded` is the same engine as a Layer, for hosts written with Effect. Many
 * engines can run side by side in one process; they share nothing.
 */
import type { FanOut, Problem, WorldModel } from "@fos/core"
import {
  Clocks,
  Deliveries as DeliveriesModule,
  DeliveryWorker,
  Engine as EngineModule,
  MemoryStore,
  Operator,
  RandomStreams,
  Seed,
  Snapshots,
  Store,
  Tenancy,
  Timers,
  Transport
} from "@fos/core"
import { type Environment, parseIso, type Snapshot, toIso, type WebhookFlush } from "@fos/contract"
import { Context, Duration, Effect, Exit, Layer, ManagedRuntime, Option } from "effect"
import { HttpRouter, HttpServer, type HttpServerRequest } from "effect/http"
import { layerRoutes } from "./App.ts"
import type { RequestLogger } from "./RequestLog.ts"
import { httpTransport } from "./Transport.ts"

// --- options -----------------------------------------------------------------------------------------------------

/**
 * The engine's time: `"system"`, or `"virtual"`, which stands still until told to move and starts at `start` (an ISO
 * 8601 instant with its zone, a Date, or epoch milliseconds; `startMs` is the older spelling of the last). Without a
 * `randomSeed` the default is `"system"` and a virtual clock starts at the real time; with one, the default is
 * `"virtual"` and it starts at `Clocks.seededStartMs` (Tuesday 2026-03-03T09:00:00.000Z), so that the seed alone
 * reproduces a run whatever the day and hour it runs (docs/testing.md).
 */
export type ClockOption =
  | "system"
  | "virtual"
  | { readonly mode: "system" }
  | { readonly mode: "virtual"; readonly start?: string | number | Date; readonly startMs?: number }

/**
 * How webhook deliveries leave the engine: `"http"` (the default: POSTs to the endpoints' URLs), `"memory"` (an
 * in-process receiver that records every delivery in `engine.deliveries` and answers 200, or what
 * `engine.deliveries.answerWith` says), or any transport (`Transport.callback(...)` from `@fos/core`).
 */
export type WebhookTransportOption = "http" | "memory" | Transport.WebhookTransportService

export interface CreateEngineOptions extends Omit<EngineModule.EngineOptions, "store" | "clock" | "webhookTransport"> {
  /** `"memory"` (the default) or a store Layer (`layerPgliteStore(dir)`, `layerPostgresStore(url)` from `@fos/sql`). */
  readonly store?: "memory" | Layer.Layer<Store.Store, unknown>
  readonly clock?: ClockOption
  readonly webhookTransport?: WebhookTransportOption
  /**
   * Records what any transport sent in `engine.deliveries` (always on with the `"memory"` transport). The record
   * grows with every attempt and lives in memory, so long-running servers leave it off.
   */
  readonly recordDeliveries?: boolean
  /**
   * Makes every id, secret, address, account number, hash and correlation id the engine invents reproducible: each
   * organization's environment draws from a stream of its own derived from this seed (docs/testing.md). Without
   * one, values are random, and secrets come from WebCrypto.
   */
  readonly randomSeed?: string | number
  /** Organizations, users and keys to create first (the same shape as `fos serve --seed`). */
  readonly seed?: Seed.SeedFile
  /** Turns the operator surface (`/operator/...`) on, guarded by this bearer token. */
  readonly operatorToken?: string
  /**
   * Receives one entry per request `engine.fetch` answers (off by default: a test suite's output stays its own).
   * `(entry) => console.log(formatRequestLog(entry, "pretty"))` prints what `fos serve` prints. Whether given or
   * not, the engine keeps each organization's last 500 requests for `GET /sandbox/v2/simulate/requests` and its live
   * stream (docs/inspect.md).
   */
  readonly requestLog?: RequestLogger
}

/** The last instant a wire timestamp (four-digit year) can show; the clock never goes past it. */
const maxInstantMs = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

/** Epoch milliseconds of an instant given as ISO 8601 text with a zone, a Date, or epoch milliseconds. */
const instantMs = (instant: string | number | Date, what: string): number => {
  const ms = typeof instant === "string" ? parseIso(instant) : typeof instant === "number" ? instant : instant.getTime()
  if (ms === undefined || !Number.isInteger(ms) || ms < 0 || ms > maxInstantMs) {
    throw new RangeError(`${what}: ${String(instant)} is not an instant from 1970 to 9999 (ISO 8601 with a zone, a Date, or whole epoch milliseconds)`)
  }
  return ms
}

/** A length of time as Effect's `Duration` takes it ("15 minutes", "30 seconds", a number of ms, ...). */
const durationMs = (input: Duration.Input, what: string): number => {
  const ms = Option.map(Duration.fromInput(input), Duration.toMillis)
  if (Option.isNone(ms) || !Number.isInteger(ms.value) || ms.value < 0) {
    throw new RangeError(`${what}: ${JSON.stringify(input)} is not a whole, finite, non-negative number of milliseconds ("15 minutes", "30 seconds", "1 hour", 900000)`)
  }
  return ms.value
}

/** A seed as `fos serve --random-seed` takes it (1 to 256 visible ASCII characters), or a safe integer. */
const randomSeedOf = (seed: string | number): string | number => {
  if (typeof seed === "number" ? !Number.isSafeInteger(seed) : !/^[\x21-\x7e]{1,256}$/.test(seed)) {
    throw new RangeError(`randomSeed: ${JSON.stringify(seed)} is not a whole number or 1 to 256 visible ASCII characters`)
  }
  return seed
}

/** The clock `clock` names; `seeded`: the engine has a random seed, which makes a virtual clock at a fixed start the default. */
const clockOf = (clock: ClockOption | undefined, seeded: boolean): NonNullable<EngineModule.EngineOptions["clock"]> => {
  const unstarted = seeded ? { mode: "virtual", startMs: Clocks.seededStartMs } as const : { mode: "virtual" } as const
  if (clock === undefined) return seeded ? unstarted : { mode: "system" }
  if (clock === "system") return { mode: "system" }
  if (clock === "virtual") return unstarted
  if (clock.mode === "system") return clock
  if (clock.start !== undefined && clock.startMs !== undefined) throw new TypeError("clock: give start or startMs, not both")
  const start = clock.start ?? clock.startMs
  return start === undefined ? unstarted : { mode: "virtual", startMs: instantMs(start, "clock.start") }
}

// --- the deliveries the engine sent ----------------------------------------------------------------------------

/** What receivers get: the event envelope. */
export type WebhookEnvelope = ReturnType<typeof FanOut.envelopeOf>

/** One delivery attempt as the engine sent it. */
export interface DeliveryAttempt {
  readonly deliveryId: string
  /** The attempt's own id (wda_), sent as `x-service-delivery-id` and listed in the delivery's `attemptList`. */
  readonly attemptId: string
  readonly endpointId: string
  readonly url: string
  /** The envelope, parsed from `body`. */
  readonly event: WebhookEnvelope
  /** The exact bytes sent, as text: what a receiver verifies the signature over. */
  readonly body: string
  /** As sent, lower-case names: `x-service-signature`, `x-service-delivery-id`, `x-service-event`, ... */
  readonly headers: Readonly<Record<string, string>>
  /** The run of 5 attempts (1, then one more per manual retry) and the attempt's number in it (1 to 5). */
  readonly run: number
  readonly attempt: number
  /** The engine's clock when it was sent (virtual time on a virtual clock). */
  readonly sentAt: string
}

export interface SentDelivery extends DeliveryAttempt {
  /** The receiver's status, or null when none came (no answer in time, refused, the transport failed). */
  readonly status: number | null
  /** Why the attempt failed without a status; null otherwise. */
  readonly error: string | null
}

/** How the memory receiver answers an attempt: a status, or a thrown error for "no answer" (a network failure). */
export type Answer = number | ((attempt: DeliveryAttempt) => number)

export interface DeliveriesService {
  /** Every attempt sent so far, in the order sent (answered attempts only: a send in flight shows once it ends). */
  readonly list: () => ReadonlyArray<SentDelivery>
  /** Memory transport: how the receiver answers from now on (200 until told otherwise). */
  readonly answerWith: (answer: Answer) => void
  /** Forgets what was recorded so far. */
  readonly clear: () => void
}

/** The deliveries an engine sent, for tests and hosts; see `CreateEngineOptions.recordDeliveries`. */
export class Deliveries extends Context.Service<Deliveries, DeliveriesService>()("fos/http/Deliveries") {}

interface Recorder {
  readonly transport: Transport.WebhookTransportService
  readonly attach: (store: Store.StoreService, time: Timers.TimeControlService, handlers: Timers.TimerHandlers["Service"]) => DeliveriesService
}

/**
 * A transport that records what it sends, over `inner` or, when `inner` is undefined, over the memory receiver.
 * The attempt's run and number come from the delivery row (the engine's truth), read when the send starts.
 */
const makeRecorder = (inner: Transport.WebhookTransportService | undefined, recording: boolean): Recorder => {
  let services: { readonly store: Store.StoreService; readonly time: Timers.TimeControlService; readonly handlers: Timers.TimerHandlers["Service"] } | undefined
  let answer: Answer = 200
  let sends = 0
  let sent: Array<{ readonly order: number; readonly delivery: SentDelivery }> = []

  const sentAtOf = (row: { readonly organizationId: string; readonly environment: Environment } | undefined) =>
    Effect.gen(function*() {
      const { store, time, handlers } = services!
      if (row === undefined) return yield* time.now
      const clock = yield* time.clockFor(Tenancy.scopeOf(row.organizationId, row.environment)).pipe(
        Effect.provideService(Store.Store, store),
        Effect.provideService(Timers.TimerHandlers, handlers)
      )
      return clock.currentTimeMillisUnsafe()
    })

  const attemptOf = (request: Transport.DeliveryRequest) =>
    Effect.gen(function*() {
      if (services === undefined) return yield* Effect.die(new Error("the delivery recorder was used before its engine was built"))
      const row = yield* services.store.get(DeliveriesModule.WebhookDeliveries, request.deliveryId)
      const attempt: DeliveryAttempt = {
        deliveryId: request.deliveryId,
        attemptId: request.attemptId,
        endpointId: row?.endpointId ?? "",
        url: request.url,
        event: JSON.parse(request.body) as WebhookEnvelope,
        body: request.body,
        headers: request.headers,
        run: row?.run ?? 1,
        attempt: (row?.attemptsInRun ?? 0) + 1,
        // The clock of the delivery's scope: its sandbox's on a virtual clock (the send itself runs on real time).
        sentAt: toIso(yield* sentAtOf(row))
      }
      return attempt
    })

  const receive = (attempt: DeliveryAttempt): Effect.Effect<{ readonly status: number }, Transport.TransportError> =>
    Effect.try({
      try: () => ({ status: typeof answer === "number" ? answer : answer(attempt) }),
      catch: (e) => new Transport.TransportError({ message: e instanceof Error ? e.message : String(e) })
    })

  const transport: Transport.WebhookTransportService = {
    send: (request) =>
      Effect.gen(function*() {
        const order = sends++
        const attempt = yield* attemptOf(request)
        const send = inner === undefined ? receive(attempt) : inner.send(request)
        return yield* send.pipe(Effect.onExit((exit) =>
          Effect.sync(() => {
            const status = Exit.isSuccess(exit) ? exit.value.status : null
            const error = Exit.isSuccess(exit)
              ? null
              : Exit.findErrorOption(exit).pipe(Option.map((e) => e.message), Option.getOrElse(() => "the send was interrupted"))
            sent.push({ order, delivery: { ...attempt, status, error } })
          })
        ))
      })
  }

  const notRecording = () => {
    throw new Error("this engine does not record deliveries: create it with webhookTransport: \"memory\" or recordDeliveries: true")
  }
  return {
    transport: recording ? transport : (inner ?? transport),
    attach: (store, time, handlers) => {
      services = { store, time, handlers }
      return {
        list: () => recording ? [...sent].sort((a, b) => a.order - b.order).map((s) => s.delivery) : notRecording(),
        answerWith: (next) => {
          if (inner !== undefined) throw new Error("answerWith needs the memory transport (webhookTransport: \"memory\")")
          answer = next
        },
        clear: () => {
          sent = []
        }
      }
    }
  }
}

// --- driving time --------------------------------------------------------------------------------------------

const virtualOnly = (time: Timers.TimeControlService) =>
  time.mode === "virtual"
    ? Effect.void
    : Effect.die(new Error("this engine runs on the system clock; create it with clock: \"virtual\" to move time"))

/**
 * Virtual clock: moves time forward by `by` ("15 minutes", "30 seconds", "1 hour", or ms), firing every timer due on
 * the way: the root clock and every organization's sandbox clock, each by `by` from its own time.
 */
export const advanceBy = (by: Duration.Input): Effect.Effect<void, never, EngineModule.EngineServices> =>
  Effect.gen(function*() {
    const time = yield* Timers.TimeControl
    yield* virtualOnly(time)
    const ms = durationMs(by, "advance")
    if ((yield* time.now) + ms > maxInstantMs) return yield* Effect.die(new RangeError(`advance: would move the clock past ${toIso(maxInstantMs)}`))
    // Every clock moves by `by` from its own time: a sandbox advanced on its own stays that far ahead.
    yield* time.advanceEvery((now) => Math.min(maxInstantMs, now + ms))
  })

/** Virtual clock: moves time forward to `instant` (not before now), firing every timer due on the way. */
export const advanceTo = (instant: string | number | Date): Effect.Effect<void, never, EngineModule.EngineServices> =>
  Effect.gen(function*() {
    const time = yield* Timers.TimeControl
    yield* virtualOnly(time)
    const target = instantMs(instant, "advanceTo")
    const now = yield* time.now
    if (target < now) return yield* Effect.die(new RangeError(`advanceTo: ${toIso(target)} is before the clock's time ${toIso(now)}; the clock only moves forward`))
    yield* time.advanceTo(target)
  })

export interface RunUntilIdleOptions {
  /**
   * How far past the clock's time at the call it may go ("1 day" when omitted). Timers due later stay pending:
   * idempotency retention (30 days) and anything periodic are not jumped over.
   */
  readonly within?: Duration.Input
  /** The most due times it steps to (10,000 when omitted), a bound for timers that keep making new ones. */
  readonly maxSteps?: number
}

export interface IdleReport {
  /** The clock's time at the end: the due time of the last timer fired, or the time at the call if none was. */
  readonly now: number
  /** How many due times it stepped to. */
  readonly steps: number
  /** `idle`: no timer is left; `horizon`: the next one is due after `within`; `maxSteps`: the bound was hit. */
  readonly stoppedBy: "idle" | "horizon" | "maxSteps"
  /** When the next pending timer is due, if one is left. */
  readonly nextDueMs: number | undefined
}

/** One virtual clock as `runUntilIdle` drives it: its time, its timers, and a move to a time. */
interface DrivenClock {
  readonly now: Effect.Effect<number, never, EngineModule.EngineServices>
  readonly lane: Timers.TimerLane
  readonly moveTo: (targetMs: number) => Effect.Effect<void, never, EngineModule.EngineServices>
}

const untilIdle = (clock: DrivenClock, options: RunUntilIdleOptions): Effect.Effect<IdleReport, never, EngineModule.EngineServices> =>
  Effect.gen(function*() {
    const start = yield* clock.now
    const horizon = start + durationMs(options.within ?? "1 day", "runUntilIdle within")
    const maxSteps = options.maxSteps ?? 10_000
    const worker = yield* DeliveryWorker.DeliveryWorker
    let steps = 0
    while (true) {
      // The sends in flight may schedule a retry or end their delivery's lease: the next timer is known after them.
      yield* worker.settled()
      const next = yield* Timers.nextTimerIn(clock.lane)
      const report = (stoppedBy: IdleReport["stoppedBy"]) =>
        Effect.map(clock.now, (now): IdleReport => ({ now, steps, stoppedBy, nextDueMs: next?.dueAtMs }))
      if (next === undefined) return yield* report("idle")
      if (next.dueAtMs > horizon) return yield* report("horizon")
      if (steps >= maxSteps) return yield* report("maxSteps")
      // A timer already overdue (one whose handler failed is moved a minute on) fires at the current time.
      yield* clock.moveTo(Math.max(next.dueAtMs, yield* clock.now))
      steps++
    }
  })

/**
 * Virtual clock: fires what is due now and everything it leads to, stepping the clock to each next pending timer
 * in due order (so a webhook's retries at 30 s, 2 min, 15 min and 1 h all run), until no timer is left within
 * `within` or `maxSteps` due times were stepped to. The clock stops at the last timer fired, not at the horizon.
 * This is the engine's root clock, with every sandbox clock behind it (`engine.clock`); `runSandboxUntilIdle` runs
 * one organization's.
 */
export const runUntilIdle = (options: RunUntilIdleOptions = {}): Effect.Effect<IdleReport, never, EngineModule.EngineServices> =>
  Effect.gen(function*() {
    const time = yield* Timers.TimeControl
    yield* virtualOnly(time)
    return yield* untilIdle({ now: time.now, lane: Timers.virtual, moveTo: time.advanceTo }, options)
  })

// --- one organization's sandbox clock ------------------------------------------------------------------------------

/** An advance of one sandbox's clock as the embedding API reports it (the HTTP advance's report, in epoch ms). */
export type SandboxAdvanceReport = Timers.AdvanceReport

/** The sandbox scope of an organization that exists; a defect names an unknown one. */
const sandboxOf = (organizationId: string): Effect.Effect<string, never, EngineModule.EngineServices> =>
  Effect.flatMap(Store.Store, (store) =>
    Effect.flatMap(store.get(Tenancy.Organizations, organizationId), (organization) =>
      organization === undefined
        ? Effect.die(new RangeError(`no organization ${organizationId} in this engine`))
        : Effect.succeed(Tenancy.scopeOf(organizationId, "sandbox"))))

/** An advance's refusal (another advance of the clock runs) as the error an embedder sees. */
const orThrow = <A>(effect: Effect.Effect<A, Problem.ApiError, EngineModule.EngineServices>): Effect.Effect<A, never, EngineModule.EngineServices> =>
  Effect.catch(effect, (error) => Effect.die(new Error(`${error.code}: ${error.detail}`)))

/** The time of an organization's sandbox clock (the engine's Clock on the system clock). */
export const sandboxNow = (organizationId: string): Effect.Effect<number, never, EngineModule.EngineServices> =>
  Effect.gen(function*() {
    const time = yield* Timers.TimeControl
    const clock = yield* time.clockFor(yield* sandboxOf(organizationId))
    return clock.currentTimeMillisUnsafe()
  })

const advanceSandbox = (organizationId: string, targetOf: (nowMs: number) => number) =>
  Effect.gen(function*() {
    const time = yield* Timers.TimeControl
    yield* virtualOnly(time)
    const scope = yield* sandboxOf(organizationId)
    return yield* orThrow(time.advanceClock(scope, (now) => Effect.sync(() => targetOf(now))))
  })

/**
 * Virtual clock: moves one organization's sandbox clock forward by `by`, firing that sandbox's timers due on the way
 * (the HTTP advance, for that organization). Another advance of the same clock running meanwhile is an error.
 */
export const advanceSandboxBy = (organizationId: string, by: Duration.Input): Effect.Effect<SandboxAdvanceReport, never, EngineModule.EngineServices> => {
  const ms = durationMs(by, "advance")
  return advanceSandbox(organizationId, (now) => {
    if (now + ms > maxInstantMs) throw new RangeError(`advance: would move the clock past ${toIso(maxInstantMs)}`)
    return now + ms
  })
}

/** Virtual clock: moves one organization's sandbox clock to `instant` (not before its time). */
export const advanceSandboxTo = (organizationId: string, instant: string | number | Date): Effect.Effect<SandboxAdvanceReport, never, EngineModule.EngineServices> => {
  const target = instantMs(instant, "advanceTo")
  return advanceSandbox(organizationId, (now) => {
    if (target < now) throw new RangeError(`advanceTo: ${toIso(target)} is before the clock's time ${toIso(now)}; the clock only moves forward`)
    return target
  })
}

/** `runUntilIdle` on one organization's sandbox clock: its timers only. */
export const runSandboxUntilIdle = (organizationId: string, options: RunUntilIdleOptions = {}): Effect.Effect<IdleReport, never, EngineModule.EngineServices> =>
  Effect.gen(function*() {
    const time = yield* Timers.TimeControl
    yield* virtualOnly(time)
    const scope = yield* sandboxOf(organizationId)
    return yield* untilIdle({
      now: sandboxNow(organizationId),
      lane: Timers.scope(scope),
      moveTo: (targetMs) => Effect.asVoid(orThrow(time.advanceClock(scope, (now) => Effect.succeed(Math.max(now, targetMs)))))
    }, options)
  })

export interface FlushOptions {
  /** One organization's deliveries (both environments unless `environment` says); every organization's if omitted. */
  readonly organizationId?: string
  readonly environment?: Environment
}

/**
 * Waits until every delivery whose attempt is due or in flight has had that attempt recorded, for at most about 6
 * seconds of real time (the spec's 5-second receiver limit and a second to record): what
 * `POST /sandbox/v2/simulate/webhooks/flush` does for the caller's organization. Deliveries waiting for a retry
 * later on the clock had their attempt already; advance the clock, then flush again. On a virtual clock it first
 * fires what is due at the clock's time.
 */
export const flushWebhooks = (options: FlushOptions = {}): Effect.Effect<WebhookFlush, never, EngineModule.EngineServices> =>
  Effect.map(
    DeliveryWorker.flushDeliveries(
      options.organizationId === undefined
        ? undefined
        : (options.environment === undefined ? (["sandbox", "live"] as const) : [options.environment]).map((environment) => ({
          organizationId: options.organizationId!,
          environment
        }))
    ),
    (report) => ({ deliveries: report.deliveries.map(DeliveriesModule.toWire), complete: report.complete })
  )

// --- the engine as a Layer ---------------------------------------------------------------------------------------

/** What `layerEmbedded` provides: the engine services and the record of deliveries. */
export type EmbeddedServices = EngineModule.EngineServices | Deliveries

/**
 * The engine for hosts written with Effect, from the same options as `createEngine` (the operator token aside: it
 * belongs to the routes). Serve it with `layerRoutes(layerEmbedded(options))`, which adds the HTTP application,
 * or turn that into a fetch-style handler with `HttpRouter.toWebHandler`; drive time with `advanceBy`,
 * `advanceTo` and `runUntilIdle`, and read `Deliveries`.
 */
export const layerEmbedded = (options: CreateEngineOptions = {}): Layer.Layer<EmbeddedServices, unknown> =>
  Layer.unwrap(Effect.sync(() => {
    const { store, clock, webhookTransport, recordDeliveries, seed, operatorToken: _, requestLog: __, ...rest } = options
    const inner = webhookTransport === undefined || webhookTransport === "http"
      ? httpTransport
      : webhookTransport === "memory"
      ? undefined
      : webhookTransport
    const recorder = makeRecorder(inner, inner === undefined || recordDeliveries === true)
    const engine = EngineModule.layer({
      ...rest,
      // Secrets (API keys, webhook signing secrets) are minted from this when there is no seed: WebCrypto, which
      // Node, Bun, Deno and browsers all have, and not Effect's default `Math.random`.
      random: rest.random ?? RandomStreams.randomFromBytes((words) => globalThis.crypto.getRandomValues(words)),
      ...(rest.randomSeed === undefined ? {} : { randomSeed: randomSeedOf(rest.randomSeed) }),
      // A seed may change the world model's money rules too; the embedding option wins over it.
      worldModel: { ...seed?.worldModel, ...rest.worldModel } as WorldModel.WorldModelOptions,
      store: store === undefined || store === "memory" ? MemoryStore.layer : store,
      clock: clockOf(clock, rest.randomSeed !== undefined),
      webhookTransport: recorder.transport
    })
    const deliveries = Layer.effect(
      Deliveries,
      Effect.gen(function*() {
        return recorder.attach(yield* Store.Store, yield* Timers.TimeControl, yield* Timers.TimerHandlers)
      })
    )
    const seeded = seed === undefined ? Layer.empty : Layer.effectDiscard(Seed.apply(seed))
    return Layer.mergeAll(deliveries, seeded).pipe(Layer.provideMerge(engine))
  }))

// --- the engine for hosts that do not use Effect -------------------------------------------------------------------

export interface EngineClock {
  readonly mode: "system" | "virtual"
  /** The clock's time in epoch milliseconds. */
  readonly now: () => Promise<number>
  /** Virtual clock: moves time forward ("15 minutes", "30 seconds", "1 hour", or ms), firing every timer due on the way. */
  readonly advance: (by: Duration.Input) => Promise<void>
  /** Virtual clock: moves time forward to an instant (ISO 8601 with a zone, a Date, or epoch ms). */
  readonly advanceTo: (instant: string | number | Date) => Promise<void>
  /** Virtual clock: fires everything due and everything it leads to; see `runUntilIdle`. */
  readonly runUntilIdle: (options?: RunUntilIdleOptions) => Promise<IdleReport>
}

export interface EngineDeliveries extends DeliveriesService {
  /**
   * Waits until every delivery caused so far has had its attempt (sends run in the background: a request answers
   * before its receivers do); see `flushWebhooks`. Works with every transport, recording or not.
   */
  readonly flush: (options?: FlushOptions) => Promise<WebhookFlush>
}

/** One organization's sandbox clock, embedded: what `POST /sandbox/v2/simulate/clock/advance` does for it. */
export interface SandboxClock {
  readonly mode: "system" | "virtual"
  /** The sandbox clock's time in epoch milliseconds. */
  readonly now: () => Promise<number>
  /** Virtual clock: moves this sandbox's clock forward, firing its timers due on the way; answers what it did. */
  readonly advance: (by: Duration.Input) => Promise<SandboxAdvanceReport>
  /** Virtual clock: moves this sandbox's clock to an instant (ISO 8601 with a zone, a Date, or epoch ms). */
  readonly advanceTo: (instant: string | number | Date) => Promise<SandboxAdvanceReport>
  /** Virtual clock: fires everything due in this sandbox and everything it leads to; see `runUntilIdle`. */
  readonly runUntilIdle: (options?: RunUntilIdleOptions) => Promise<IdleReport>
}

export interface Engine {
  /** The HTTP API with no port: `fetch`'s signature, so it can stand in for `fetch` in any HTTP client. */
  readonly fetch: (input: Request | string | URL, init?: RequestInit) => Promise<Response>
  /** Runs an engine operation (operator calls, reads) against this engine's services. */
  readonly run: <A, E>(effect: Effect.Effect<A, E, EmbeddedServices>) => Promise<A>
  /** The engine services, for a server adapter to serve. */
  readonly context: Context.Context<EmbeddedServices>
  readonly operatorToken: string | undefined
  /**
   * The engine's root clock, and with it every organization's sandbox clock behind it: an advance moves them all
   * (docs/clock.md). On a system clock, the system's time.
   */
  readonly clock: EngineClock
  /** One organization's sandbox clock: moving it moves no other organization's. */
  readonly clockOf: (organizationId: string) => SandboxClock
  /** The webhook deliveries this engine sent (see `CreateEngineOptions.recordDeliveries`), and the wait for them. */
  readonly deliveries: EngineDeliveries
  /**
   * Saves an organization's whole sandbox (docs/snapshots.md): `organizationId`, or the engine's only organization
   * when it holds one. Rejects with the problem's `ApiError` past the limit of snapshots.
   */
  readonly snapshot: (options?: { readonly organizationId?: string }) => Promise<Snapshot>
  /** Puts the sandbox of the snapshot's organization back as the snapshot saved it, in one transaction. */
  readonly restore: (id: string) => Promise<Snapshot>
  /** An organization's snapshots (the engine's only one when not given), oldest first. */
  readonly snapshots: (options?: { readonly organizationId?: string }) => Promise<ReadonlyArray<Snapshot>>
  /** Deletes a snapshot. */
  readonly deleteSnapshot: (id: string) => Promise<void>
  /** Stops the engine and releases its store; the engine answers nothing afterwards. */
  readonly close: () => Promise<void>
}

/**
 * The organization an embedded snapshot call names: the one given, or the engine's only organization (an engine
 * built for one test suite holds one), else a TypeError asking for it.
 */
const organizationOf = (options: { readonly organizationId?: string } | undefined) =>
  options?.organizationId !== undefined
    ? Effect.succeed(options.organizationId)
    : Effect.flatMap(Operator.listOrganizations, (organizations) =>
      organizations.length === 1
        ? Effect.succeed(organizations[0]!.id as string)
        : Effect.die(new TypeError(`this engine holds ${organizations.length} organizations: name one, as { organizationId }`)))

export const createEngine = async (options: CreateEngineOptions = {}): Promise<Engine> => {
  const runtime = ManagedRuntime.make(layerEmbedded(options) as Layer.Layer<EmbeddedServices>)
  const context = await runtime.context()
  // Built on the first `fetch`: a server adapter serves `context` and never calls it, so it need not build and hold
  // a second copy of the routes.
  let web: ReturnType<typeof HttpRouter.toWebHandler> | undefined
  // The requests whose connection a sandbox fault dropped after their write committed (docs/faults.md): their
  // `fetch` rejects as a network error would, with no answer.
  const dropped = new WeakSet<object>()
  const dropConnection = (request: HttpServerRequest.HttpServerRequest) => {
    dropped.add(request.source as object)
    return true
  }
  const handler = (request: Request): Promise<Response> => {
    web ??= HttpRouter.toWebHandler(
      layerRoutes(Layer.succeedContext(context), { operatorToken: options.operatorToken, requestLog: options.requestLog, dropConnection })
        .pipe(Layer.provide(HttpServer.layerServices)),
      { disableLogger: true }
    )
    return (web.handler as (request: Request) => Promise<Response>)(request).then((response) => {
      if (!dropped.has(request)) return response
      void response.body?.cancel()
      return Promise.reject(new TypeError("fetch failed", { cause: new Error("the connection was dropped with no answer (a sandbox fault's dropped_connection)") }))
    })
  }
  const run = <A, E>(effect: Effect.Effect<A, E, EmbeddedServices>) => runtime.runPromise(effect)
  return {
    fetch: (input, init) => handler(input instanceof Request && init === undefined ? input : new Request(input, init)),
    run,
    context,
    operatorToken: options.operatorToken,
    clock: {
      mode: Context.get(context, Timers.TimeControl).mode,
      now: () => run(Context.get(context, Timers.TimeControl).now),
      advance: (by) => run(advanceBy(by)),
      advanceTo: (instant) => run(advanceTo(instant)),
      runUntilIdle: (runOptions) => run(runUntilIdle(runOptions))
    },
    clockOf: (organizationId) => ({
      mode: Context.get(context, Timers.TimeControl).mode,
      now: () => run(sandboxNow(organizationId)),
      advance: (by) => run(advanceSandboxBy(organizationId, by)),
      advanceTo: (instant) => run(advanceSandboxTo(organizationId, instant)),
      runUntilIdle: (runOptions) => run(runSandboxUntilIdle(organizationId, runOptions))
    }),
    deliveries: { ...Context.get(context, Deliveries), flush: (flushOptions) => run(flushWebhooks(flushOptions)) },
    snapshot: (snapshotOptions) => run(Effect.flatMap(organizationOf(snapshotOptions), Snapshots.take)),
    restore: (id) => run(Effect.flatMap(Snapshots.owner(id), (organizationId) => Snapshots.restore(organizationId, id))),
    snapshots: (listOptions) => run(Effect.flatMap(organizationOf(listOptions), Snapshots.all)),
    deleteSnapshot: (id) => run(Effect.flatMap(Snapshots.owner(id), (organizationId) => Snapshots.deleteSnapshot(organizationId, id))),
    close: async () => {
      await web?.dispose()
      await runtime.dispose()
    }
  }
}
