/**
 * Whether the engine can do its work now: what `GET /readyz` and `engine.ready()` answer, where `/healthz` answers
 * only that the process is up. Ready means the engine is not closing and its store answered a trivial query
 * (`Store.ready`) within `readyTimeoutMs` of real time. A store that cannot be reached, or does not answer in time,
 * is not ready: the requests that need it would answer 503 too. The bound is well below the store's own timeout
 * (10 seconds by default), so a probe answers before a load balancer's probe timeout, and the check runs no write.
 */
import { Clock, Duration, Effect } from "effect"
import * as Lifecycle from "./Lifecycle.ts"
import { RealClock } from "./RealClock.ts"
import * as Store from "./Store.ts"

/** How long the store has to answer a readiness check: 2 seconds of real time. */
export const readyTimeoutMs = 2_000

/** The answer: ready, or not, with why in a sentence a person reads. */
export type Readiness = { readonly ready: true } | { readonly ready: false; readonly reason: string }

export const closingReason = "The service is shutting down and takes no new requests."
export const unreachableReason = "The service cannot reach its database."
export const slowReason = `The service's database did not answer within ${readyTimeoutMs / 1000} seconds.`

/** The check: never fails, and takes at most `readyTimeoutMs` of real time. */
export const check: Effect.Effect<Readiness, never, Store.Store | RealClock> = Effect.gen(function*() {
  const lifecycle = yield* Lifecycle.Lifecycle
  if (lifecycle.closing()) return { ready: false, reason: closingReason } as const
  const store = yield* Store.Store
  const realClock = yield* RealClock
  const answered = yield* store.ready.pipe(
    Effect.timeoutOption(Duration.millis(readyTimeoutMs)),
    Effect.provideService(Clock.Clock, realClock),
    Effect.exit
  )
  if (answered._tag === "Failure") return { ready: false, reason: unreachableReason } as const
  if (answered.value._tag === "None") return { ready: false, reason: slowReason } as const
  return { ready: true } as const
})
