/**
 * The engine's services as one layer: the store, the rate limiter, time (system or virtual), the timer
 * handlers and the scheduler. Every runtime (the servers, embedding, tests) builds the engine through this.
 */
import { Clock, Effect, Layer } from "effect"
import { applicationTimerHandlers } from "./onboarding/Applications.ts"
import {
  expireRecord,
  expireTimerKind,
  IdempotencyRetention,
  layerRunningClaims,
  type RunningClaims
} from "./kernel/Idempotency.ts"
import { layerMemoryStore } from "./kernel/MemoryStore.ts"
import { layerRateLimiter, RateLimiter } from "./kernel/RateLimit.ts"
import { defaultReviewSettings, ReviewSettings, type ReviewSettingsValue } from "./onboarding/ReviewSettings.ts"
import { Store } from "./kernel/Store.ts"
import { virtualAccountTimerHandlers } from "./money/VirtualAccounts.ts"
import {
  type ResolveHost,
  TransportError,
  WebhookSettings,
  webhookTimerHandlers,
  type WebhookTransportService
} from "./webhooks/Webhooks.ts"
import {
  layerTimerHandlers,
  makeVirtualClock,
  makeVirtualTimeControl,
  runScheduler,
  systemTimeControl,
  TimeControl,
  type TimerHandler,
  TimerHandlers
} from "./kernel/Timers.ts"

export interface EngineOptions {
  /** The store; the memory store when omitted. */
  readonly store?: Layer.Layer<Store, unknown>
  /** `system` (the default), or `virtual` starting at `startMs` (the Clock's time when omitted). */
  readonly clock?: { readonly mode: "system" } | { readonly mode: "virtual"; readonly startMs?: number }
  /** How long idempotent responses are replayed (30 days by default). */
  readonly idempotencyRetentionMs?: number
  /** More timer kinds, beside the engine's own (tests and hosts that schedule their own deadlines). */
  readonly timerHandlers?: Record<string, TimerHandler>
  /** How webhook deliveries leave the engine; deliveries fail with "no transport" when none is given. */
  readonly webhookTransport?: WebhookTransportService
  /** Allows http:// webhook URLs on loopback hosts (`--insecure-webhooks`). */
  readonly insecureWebhooks?: boolean
  /** Resolves webhook hosts, so names that lead to private addresses are refused too (the servers use DNS). */
  readonly resolveHost?: ResolveHost
  /** How applications are reviewed and accounts activated without simulate calls (docs/onboarding.md). */
  readonly review?: Partial<ReviewSettingsValue>
}

const noTransport: WebhookTransportService = {
  send: () => Effect.fail(new TransportError({ message: "this engine has no webhook transport" }))
}

export type EngineServices = Store | RateLimiter | RunningClaims | TimeControl | TimerHandlers

/** Every timer kind of the engine and what it does. */
const engineTimerHandlers: Record<string, TimerHandler> = {
  [expireTimerKind]: expireRecord
}

export const layerEngine = (options: EngineOptions = {}): Layer.Layer<EngineServices, unknown> => {
  const store = options.store ?? layerMemoryStore
  const webhookSettings = { insecureWebhooks: options.insecureWebhooks ?? false, resolveHost: options.resolveHost }
  const review: ReviewSettingsValue = { ...defaultReviewSettings, ...options.review }
  const timerHandlers = Layer.mergeAll(
    layerTimerHandlers({
      ...options.timerHandlers,
      ...engineTimerHandlers,
      ...applicationTimerHandlers(review),
      ...virtualAccountTimerHandlers,
      ...webhookTimerHandlers(options.webhookTransport ?? noTransport, webhookSettings)
    }),
    Layer.succeed(WebhookSettings, webhookSettings),
    Layer.succeed(ReviewSettings, review)
  )
  const retention = options.idempotencyRetentionMs === undefined
    ? Layer.empty
    : Layer.succeed(IdempotencyRetention, options.idempotencyRetentionMs)
  const clockMode = options.clock ?? { mode: "system" }
  if (clockMode.mode === "virtual") {
    const time = Layer.unwrap(Effect.gen(function*() {
      const startMs = clockMode.startMs ?? (yield* Clock.currentTimeMillis)
      const clock = makeVirtualClock(startMs)
      return Layer.mergeAll(Layer.succeed(Clock.Clock, clock), Layer.succeed(TimeControl, makeVirtualTimeControl(clock)))
    }))
    // The services that read time are built on the virtual clock.
    return Layer.mergeAll(store, layerRateLimiter, layerRunningClaims, timerHandlers, retention).pipe(Layer.provideMerge(time))
  }
  const base = Layer.mergeAll(store, layerRateLimiter, layerRunningClaims, timerHandlers, retention)
  // The system clock: one background fiber fires due timers for the life of the engine.
  const scheduler = Layer.effectDiscard(Effect.forkScoped(runScheduler)).pipe(Layer.provide(base))
  return Layer.mergeAll(base, Layer.succeed(TimeControl, systemTimeControl), scheduler)
}
