/**
 * The engine's services as one layer: the store, the rate limiter, time (system or virtual), the registry its
 * domains' descriptors compose (Domains.ts: the tables, and the timer kinds with their handlers), the topics'
 * subscribers (Subscriptions.ts) and the scheduler. Every runtime (the servers, embedding, tests) builds the engine through this.
 */
import { Clock, Context, Effect, Layer, Metric, Random } from "effect"
import * as Clocks from "./kernel/Clocks.ts"
import * as DeliveryWorker from "./webhooks/DeliveryWorker.ts"
import * as Dispatch from "./webhooks/Dispatch.ts"
import * as Domain from "./kernel/Domain.ts"
import * as Domains from "./Domains.ts"
import * as Faults from "./simulate/Faults.ts"
import * as Idempotency from "./kernel/Idempotency.ts"
import * as Lifecycle from "./kernel/Lifecycle.ts"
import * as Listeners from "./webhooks/Listeners.ts"
import * as Liveness from "./kernel/Liveness.ts"
import * as MemoryStore from "./kernel/MemoryStore.ts"
import * as RandomStreams from "./kernel/RandomStreams.ts"
import * as RateLimit from "./kernel/RateLimit.ts"
import * as Metrics from "./kernel/Metrics.ts"
import * as RealClock from "./kernel/RealClock.ts"
import * as ReviewSettings from "./onboarding/ReviewSettings.ts"
import * as Store from "./kernel/Store.ts"
import * as Subscriptions from "./Subscriptions.ts"
import * as Tenancy from "./tenancy/Tenancy.ts"
import * as Timers from "./kernel/Timers.ts"
import * as Transport from "./webhooks/Transport.ts"
import * as WorldModel from "./money/WorldModel.ts"

/** `StoreError`: how the store's layer may fail to open; the engine's layer fails with that alone. */
export interface EngineOptions<StoreError = unknown> {
  /** The store; the memory store when omitted. */
  readonly store?: Layer.Layer<Store.Store, StoreError>
  /** `system` (the default), or `virtual` starting at `startMs` (the Clock's time when omitted). */
  readonly clock?: { readonly mode: "system" } | { readonly mode: "virtual"; readonly startMs?: number }
  /**
   * `false` turns every rate limit off, the organizations' and the per-address ones: for a host that limits its
   * users itself. An organization's own limit (`rateLimit` of `Operator.createOrganization`) sets one per
   * organization instead.
   */
  readonly rateLimits?: boolean
  /** How long idempotent responses are replayed (30 days by default). */
  readonly idempotencyRetentionMs?: number
  /**
   * More domains, beside the engine's own (kernel/Domain.ts): a host's own tables, which resets and snapshots then
   * take with the sandbox, and its own kinds of timer, fired on the sandbox's clock.
   */
  readonly domains?: ReadonlyArray<Domain.Domain>
  /** More timer kinds by name alone, beside the engine's own (`Timers.handleByName`): a host's deadlines in a line. */
  readonly timerHandlers?: Record<string, Timers.TimerHandler>
  /** How webhook deliveries leave the engine; deliveries fail with "no transport" when none is given. */
  readonly webhookTransport?: Transport.WebhookTransportService
  /** Allows http:// webhook URLs on loopback hosts (`--insecure-webhooks`). */
  readonly insecureWebhooks?: boolean
  /** Resolves webhook hosts, so names that lead to private addresses are refused too (the servers use DNS). */
  readonly resolveHost?: Transport.ResolveHost
  /** How applications are reviewed and accounts activated without simulate calls (docs/onboarding.md). */
  readonly review?: Partial<ReviewSettings.ReviewSettingsValue>
  /** How the outside world settles money without simulate calls, and what inbound transfers cost (docs/money.md). */
  readonly worldModel?: WorldModel.WorldModelOptions
  /**
   * Real time, for what must follow it whatever the engine's clock: rate-limit buckets refill on it (and on clock
   * advances), and `signatureClock: "real"` signs with it. The Clock of the context the engine is built in when
   * omitted (the runtime's, under `createEngine`); tests give a clock they move themselves.
   */
  readonly realClock?: Clock.Clock
  /**
   * The time a webhook signature's `t` carries. `"real"` (the default): real time (`realClock`), what a receiver
   * checks `t` against with its own clock (the spec's replay protection: a `t` more than 300 seconds away is
   * refused), as it does against the real service and against `fos serve`. `"engine"`: the engine's clock, virtual
   * or not. Choose it when the receiver checks `t` against that clock (a receiver in the test's own process passing
   * `now: await engine.clock.now()`, or sharing its TestClock), or when a golden file records the signature header
   * itself: a virtual run then signs the same bytes every time, where real time changes `t` and `v1` on every run.
   * The event's `createdAt` is the engine's clock either way.
   */
  readonly signatureClock?: "engine" | "real"
  /**
   * Where invented values come from without a seed: ids, and secrets such as API keys and webhook signing secrets,
   * so a cryptographic source (`randomFromBytes` over `crypto.getRandomValues`; `createEngine` gives it). The
   * `Random` of the context the engine is built in when omitted (Effect's default is `Math.random`).
   */
  readonly random?: Random.Random
  /**
   * Makes every value the engine invents reproducible: each organization's environment draws from a stream of its
   * own derived from this seed (RandomStreams.ts, docs/testing.md).
   */
  readonly randomSeed?: string | number
}

/**
 * The engine's `Random` and, with a seed, its streams: the root stream is the engine's `Random`, each organization's
 * is provided where its work runs (the pipeline, the timers). On a store that holds organizations already, the
 * seed is salted with the store's sequence (RandomStreams.ts).
 */
const layerRandom = (base: Random.Random, seed: string | number | undefined): Layer.Layer<never, never, Store.Store> =>
  seed === undefined
    ? Layer.succeedContext(Context.make(Random.Random, base))
    : Layer.effectContext(Effect.gen(function*() {
      const store = yield* Store.Store
      const used = yield* store.page(Tenancy.Organizations, { order: "all", partition: "", descending: false, backward: false, from: undefined, limit: 1 })
      const streams = RandomStreams.seededStreams(String(seed), used.length === 0 ? "" : String(yield* store.nextSequence))
      return Context.make(RandomStreams.RandomStreams, streams).pipe(Context.add(Random.Random, streams.of(RandomStreams.rootStream)))
    }))

const noTransport: Transport.WebhookTransportService = {
  send: () => Effect.fail(new Transport.TransportError({ message: "this engine has no webhook transport" }))
}

export type EngineServices =
  | Store.Store
  | RateLimit.RateLimiter
  | Idempotency.RunningClaims
  | Liveness.Liveness
  | Timers.TimeControl
  | Timers.TimerHandlers
  | Domain.Domains
  | RealClock.RealClock
  | DeliveryWorker.DeliveryWorker
  | Listeners.ListenerHub

export const layer = <E = never>(options: EngineOptions<E> = {}): Layer.Layer<EngineServices, E> =>
  Layer.unwrap(Effect.gen(function*() {
    // Real time: the clock the engine is built in, unless the host gives its own.
    const realClock = options.realClock ?? (yield* Clock.Clock)
    // Whether the engine still takes work (kernel/Lifecycle.ts): every way the engine's scope closes drains it
    // first, before the scheduler is interrupted and the store closed, since the drain's finalizer is added last.
    const lifecycle = Lifecycle.make(realClock)
    // The engine's metrics, in a registry of its own or its host's (kernel/Metrics.ts): under every service, so the
    // fibers they fork (the scheduler, the delivery worker) count into it too.
    const metricRegistry = yield* Metrics.registryOf
    const withLifecycle = <A, E, R>(engine: Layer.Layer<A, E, R>) =>
      Layer.effectDiscard(Effect.addFinalizer(() => lifecycle.drain())).pipe(
        Layer.provideMerge(engine),
        Layer.provideMerge(Layer.succeed(Lifecycle.Lifecycle, lifecycle)),
        Layer.provideMerge(Layer.succeed(Metric.MetricRegistry, metricRegistry))
      )
    // The store is infrastructure: its connection pool's timeouts and lifetimes run on real time. Built on a virtual
    // clock, an advance of an hour aged every pooled connection by an hour, and the pool closed them under the
    // requests using them.
    const store = (options.store ?? MemoryStore.layer).pipe(Layer.provide(Layer.succeed(Clock.Clock, realClock)))
    const webhookSettings = {
      insecureWebhooks: options.insecureWebhooks ?? false,
      resolveHost: options.resolveHost,
      signatureClock: options.signatureClock === "engine" ? undefined : realClock
    }
    const review: ReviewSettings.ReviewSettingsValue = { ...ReviewSettings.defaultReviewSettings, ...options.review }
    const worldModel = WorldModel.worldModelOf(options.worldModel)
    // Webhook sends run on this worker, in the background: no request or advance waits for a receiver.
    const deliveryWorker = yield* DeliveryWorker.make
    // The `fos listen` clients connected to this process (webhooks/Listeners.ts).
    const listenerHub = Listeners.makeHub(realClock)
    // A sandbox's receiver faults (simulate/Faults.ts) stand in for its receivers' answers; a listener's attempts go
    // to its client (webhooks/Listeners.ts).
    const transport = Faults.withReceiverFaults(Listeners.withListeners(listenerHub, options.webhookTransport ?? noTransport), Dispatch.receiverTimeoutMs)
    // Every descriptor, the host's after the engine's; a table or a kind declared twice stops the engine here.
    const hostTimers = Object.entries(options.timerHandlers ?? {}).map(([name, fire]) => Timers.handleByName(name, fire))
    const registry = Domain.compose(
      [...Domains.all, ...(options.domains ?? []), { name: "EngineOptions.timerHandlers", timers: hostTimers }],
      // What the handlers read beyond the store, the same for each.
      Context.make(ReviewSettings.ReviewSettings, review).pipe(
        Context.add(Transport.WebhookTransport, transport),
        Context.add(Transport.WebhookSettings, webhookSettings),
        Context.add(DeliveryWorker.DeliveryWorker, deliveryWorker),
        Context.add(RealClock.RealClock, realClock)
      )
    )
    Metrics.registerKnownUnsafe(Context.make(Metric.MetricRegistry, metricRegistry), registry.timerHandlers.keys())
    const timerHandlers = Layer.mergeAll(
      Layer.succeed(RealClock.RealClock, realClock),
      Layer.succeed(Domain.Domains, registry),
      Layer.succeed(Timers.TimerHandlers, registry.timerHandlers),
      Layer.succeed(DeliveryWorker.DeliveryWorker, deliveryWorker),
      Layer.succeed(Listeners.ListenerHub, listenerHub),
      // The worker's fibers live as long as the engine.
      Layer.effectDiscard(deliveryWorker.start),
      Layer.succeed(Transport.WebhookSettings, webhookSettings),
      Layer.succeed(ReviewSettings.ReviewSettings, review),
      Layer.succeed(WorldModel.WorldModel, worldModel),
      // Who reacts to what, in the publisher's store transaction: every subscriber is named in Subscriptions.ts.
      Subscriptions.layer
    )
    // Without a seed, the engine's own source; with one, the root stream. A process's claim tokens name the process
    // among those sharing a store, so they come from the unseeded source either way.
    const baseRandom = options.random ?? (yield* Random.Random)
    const storeAndRandom = layerRandom(baseRandom, options.randomSeed).pipe(Layer.provideMerge(store))
    // Which processes sharing the store are alive, for the leases a crash leaves (kernel/Liveness.ts).
    const liveness = Liveness.layer(realClock).pipe(Layer.provide(Layer.succeedContext(Context.make(Random.Random, baseRandom))))
    const runningClaims = Idempotency.layerRunningClaims
    const retention = options.idempotencyRetentionMs === undefined
      ? Layer.empty
      : Layer.succeed(Idempotency.IdempotencyRetention, options.idempotencyRetentionMs)
    const realNow = () => realClock.currentTimeMillisUnsafe()
    const clockMode = options.clock ?? { mode: "system" }
    if (clockMode.mode === "virtual") {
      const startMs = clockMode.startMs ?? (yield* Clock.currentTimeMillis)
      // The clocks live in the store: the root clock resumes where the store has it (docs/clock.md).
      const time = Layer.effectContext(Effect.gen(function*() {
        const sharedStore = yield* Store.Store
        const root = Timers.makeVirtualClock(yield* Clocks.loadRoot(sharedStore, startMs))
        const shared = sharedStore.shared?.buckets
        // A clock stands still while a receiver answers: an advance waits for the sends in flight before it moves
        // the clock (webhooks/DeliveryWorker.ts). Buckets shared with other processes hear of each advance.
        const control = Clocks.makeVirtualTimeControl(root, realClock, yield* Liveness.Liveness, deliveryWorker.settled, shared?.advanced)
        // The buckets refill as real time passes and as virtual clocks are advanced: each is time passing for the
        // client (docs/decisions.md, "Rate limits"). Shared buckets count every process's advances (SharedState.ts).
        const limiter = options.rateLimits === false
          ? RateLimit.unlimited
          : shared !== undefined
          ? RateLimit.makeSharedRateLimiter(shared, realNow)
          : RateLimit.makeRateLimiter(() => realNow() + control.advancedMs())
        return Context.make(Clock.Clock, root as Clock.Clock).pipe(
          Context.add(Timers.TimeControl, control as Timers.TimeControlService),
          Context.add(RateLimit.RateLimiter, limiter)
        )
      })).pipe(Layer.provide(store))
      // The services that read time are built on the root clock.
      const base = Layer.mergeAll(runningClaims, timerHandlers, retention).pipe(
        Layer.provideMerge(time),
        Layer.provideMerge(liveness),
        Layer.provideMerge(storeAndRandom)
      )
      // The live environment runs on real time: its timers fire on a scheduler of their own (docs/clock.md). Timers
      // an engine without their handler kept go back into their lanes first (Timers.resumeKept).
      const liveScheduler = Layer.effectDiscard(Effect.andThen(
        Timers.resumeKept,
        Effect.forkScoped(Timers.runScheduler(Timers.realTime).pipe(Effect.provideService(Clock.Clock, realClock)))
      )).pipe(Layer.provide(base))
      return withLifecycle(Layer.mergeAll(base, liveScheduler))
    }
    const limiter = Layer.effect(
      RateLimit.RateLimiter,
      Effect.map(Store.Store, (store) =>
        options.rateLimits === false
          ? RateLimit.unlimited
          : store.shared === undefined
          ? RateLimit.makeRateLimiter(realNow)
          : RateLimit.makeSharedRateLimiter(store.shared.buckets, realNow))
    )
    // The system clock is real time: the engine's Clock is `realClock`, so a host that gives one (a test's) governs
    // every timestamp, as the virtual clock's root does.
    const base = Layer.mergeAll(limiter, runningClaims, timerHandlers, retention, Layer.succeed(Clock.Clock, realClock)).pipe(
      Layer.provideMerge(liveness),
      Layer.provideMerge(storeAndRandom)
    )
    // The system clock: one background fiber fires due timers for the life of the engine, once the timers an engine
    // without their handler kept are back in their lanes (Timers.resumeKept).
    const scheduler = Layer.effectDiscard(Effect.andThen(Timers.resumeKept, Effect.forkScoped(Timers.runScheduler()))).pipe(Layer.provide(base))
    return withLifecycle(Layer.mergeAll(base, Layer.succeed(Timers.TimeControl, Timers.systemTimeControl(realClock)), scheduler))
  }))
