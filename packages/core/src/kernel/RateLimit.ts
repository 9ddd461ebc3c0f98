/**
 * Token buckets, and the limiter that keeps them.
 *
 * A bucket holds at most `burst` tokens and refills at `perSecond`; a request takes one token. Over any window
 * of `t` seconds a bucket grants at most `burst + perSecond × t` requests.
 *
 * The limiter reads its own time source, not the engine's Clock: buckets refill as real time passes even when the
 * engine's clock is virtual and stands still, and on a virtual clock an advance counts as time passing too
 * (`Engine.layer` builds that source; docs/decisions.md, "Rate limits", gives the reason).
 *
 * One process keeps its buckets in its memory (`makeRateLimiter`) and enforces them exactly. Processes sharing a
 * PostgreSQL store take their tokens from one row per bucket (`makeSharedRateLimiter`, SharedState.ts), so the
 * service admits what one process would, whatever the number of processes (docs/decisions.md, "Rate limits across
 * processes").
 */
import { Context, Deferred, Effect, Exit } from "effect"
import type { BucketSpec, SharedBuckets } from "./SharedState.ts"

export type { BucketSpec } from "./SharedState.ts"

export interface BucketState {
  readonly tokens: number
  readonly atMs: number
}

export interface Decision {
  readonly allowed: boolean
  /** The bucket's size, for X-RateLimit-Limit. */
  readonly limit: number
  readonly remaining: number
  /** Whole seconds until the bucket is full again, for X-RateLimit-Reset. */
  readonly resetSeconds: number
  /** Whole seconds until one token is available; set only when refused. */
  readonly retryAfterSeconds: number | undefined
}

/** The pure step: refill to `nowMs`, then try to take one token. */
export const take = (spec: BucketSpec, state: BucketState | undefined, nowMs: number): [Decision, BucketState] => {
  const elapsedMs = state === undefined ? 0 : Math.max(0, nowMs - state.atMs)
  const refilled = state === undefined ? spec.burst : Math.min(spec.burst, state.tokens + (elapsedMs * spec.perSecond) / 1000)
  const allowed = refilled >= 1
  const tokens = allowed ? refilled - 1 : refilled
  const decision: Decision = {
    allowed,
    limit: spec.burst,
    remaining: Math.floor(tokens),
    resetSeconds: Math.ceil((spec.burst - tokens) / spec.perSecond),
    retryAfterSeconds: allowed ? undefined : Math.max(1, Math.ceil((1 - tokens) / spec.perSecond))
  }
  return [decision, { tokens, atMs: nowMs }]
}

/** The spec's buckets: general per environment, and the three dedicated ones. */
export const Buckets = {
  generalLive: { perSecond: 50, burst: 100 },
  generalSandbox: { perSecond: 200, burst: 400 },
  dedicated: { perSecond: 5, burst: 10 },
  /** Per IP, for requests without a key. Not in the spec's table; chosen to stop floods, not clients. */
  unauthenticatedPerIp: { perSecond: 10, burst: 20 },
  /** Per IP, for requests with an invalid key: a slow trickle once the burst is spent. */
  invalidKeyPerIp: { perSecond: 1, burst: 10 }
} as const satisfies Record<string, BucketSpec>

export interface RateLimiterService {
  /**
   * Takes a token from the bucket `name` of `scope`, created with `spec` on first use, at the limiter's present. A
   * scope is an organization (its buckets are named per environment) or a kind of per-address bucket (named by
   * the address). Two parts rather than one key so that a request builds no new string to look its bucket up.
   *
   * The decision itself when the limiter can make it at once (always, in one process's memory: every request takes
   * a token, and an effect around it would cost each request steps of the fiber for nothing), else an effect that
   * asks the shared bucket (`decide` runs either). Call it from within an effect.
   */
  readonly take: (scope: string, name: string, spec: BucketSpec) => Decision | Effect.Effect<Decision>
  /**
   * Puts back a token `take` gave. Only a limiter whose takes cost a round trip has it (the shared one): a request
   * may then ask for its token while its key is read, and give it back when the key turns out not to spend from
   * that bucket (Gate.ts, `makeAdmit`).
   */
  readonly refund?: (scope: string, name: string, spec: BucketSpec) => Effect.Effect<void>
}

/** Goes on with a `take`'s decision, made at once or asked of the store. */
export const decide = <A, E, R>(taken: Decision | Effect.Effect<Decision>, then: (decision: Decision) => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.isEffect(taken) ? Effect.flatMap(taken, then) : then(taken)

/** A limiter in this process's memory: it always decides at once. */
export interface LocalRateLimiter extends RateLimiterService {
  readonly take: (scope: string, name: string, spec: BucketSpec) => Decision
}

export class RateLimiter extends Context.Service<RateLimiter, RateLimiterService>()("fos/RateLimiter") {}

/** Bounds the buckets kept: idle full buckets are forgotten once there are this many. */
const maxBuckets = 100_000

/**
 * A limiter on the time source `nowMs`: milliseconds that move at least as real time does (only their differences
 * count), fixed when the engine is built.
 */
export const makeRateLimiter = (nowMs: () => number): LocalRateLimiter => {
  const scopes = new Map<string, Map<string, BucketState>>()
  let count = 0
  const forgetFull = (spec: BucketSpec, nowMs: number) => {
    for (const [scope, buckets] of scopes) {
      for (const [name, state] of buckets) {
        if (take(spec, state, nowMs)[1].tokens >= spec.burst - 1) {
          buckets.delete(name)
          count--
        }
      }
      if (buckets.size === 0) scopes.delete(scope)
    }
  }
  return {
    take: (scope, name, spec) => {
      const now = nowMs()
      let buckets = scopes.get(scope)
      const state = buckets?.get(name)
      const [decision, next] = take(spec, state, now)
      if (state === undefined) {
        if (count >= maxBuckets) {
          forgetFull(spec, now)
          buckets = scopes.get(scope)
        }
        if (buckets === undefined) scopes.set(scope, (buckets = new Map()))
        count++
      }
      buckets!.set(name, next)
      return decision
    }
  }
}

/**
 * The limiter of an engine whose host turned rate limits off (`EngineOptions.rateLimits: false`): it grants every
 * take and keeps no bucket, and its headers show the bucket full.
 */
export const unlimited: LocalRateLimiter = {
  take: (_scope, _name, spec) => ({ allowed: true, limit: spec.burst, remaining: spec.burst, resetSeconds: 0, retryAfterSeconds: undefined })
}

/** A decision from a bucket's tokens after the take; `allowed` says whether this request got one. */
const decisionOf = (spec: BucketSpec, tokens: number, allowed: boolean): Decision => ({
  allowed,
  limit: spec.burst,
  remaining: Math.max(0, Math.floor(tokens)),
  resetSeconds: Math.max(0, Math.ceil((spec.burst - tokens) / spec.perSecond)),
  retryAfterSeconds: allowed ? undefined : Math.max(1, Math.ceil((1 - tokens) / spec.perSecond))
})

/**
 * A bucket a take from the store is under way for, as this process sees it: the requests that came meanwhile, which
 * wait for the next take.
 */
interface SharedBucket {
  readonly waiting: Array<Deferred.Deferred<Decision>>
}

/**
 * A limiter over the buckets every process sharing the store takes from (SharedState.ts), on real time `realNow`.
 * A request waits for the next take from its shared bucket: one statement at a time per bucket, for every request
 * of this process waiting by then, so a burst of concurrent requests costs one round trip, not one each, and no
 * token is taken that a request does not spend (the service admits exactly what one bucket would). The waiting
 * requests get the tokens taken in the order they came; the headers describe the shared bucket as the take left
 * it (docs/decisions.md, "Rate limits across processes").
 */
export const makeSharedRateLimiter = (store: SharedBuckets, realNow: () => number): RateLimiterService => {
  const buckets = new Map<string, SharedBucket>()
  /** Takes for the waiting requests until none waits; runs in a fiber of its own. */
  const drain = (key: string, bucket: SharedBucket, scope: string, name: string, spec: BucketSpec): Effect.Effect<void> =>
    Effect.suspend(() => {
      const batch = bucket.waiting.splice(0)
      if (batch.length === 0) {
        // A bucket no request waits for is forgotten (a per-address bucket may never be asked again).
        buckets.delete(key)
        return Effect.void
      }
      return Effect.matchCauseEffect(store.take(scope, name, spec, batch.length, realNow()), {
        onSuccess: ({ taken, tokens }) => {
          batch.forEach((waiter, i) =>
            Deferred.doneUnsafe(waiter, Exit.succeed(i < taken ? decisionOf(spec, tokens + taken - 1 - i, true) : decisionOf(spec, tokens, false)))
          )
          return drain(key, bucket, scope, name, spec)
        },
        // A store that failed fails every request waiting with its cause, as a request's own read would.
        onFailure: (cause) => {
          buckets.delete(key)
          for (const waiter of [...batch, ...bucket.waiting.splice(0)]) Deferred.doneUnsafe(waiter, Exit.failCause(cause))
          return Effect.void
        }
      })
    })
  return {
    take: (scope, name, spec) => {
      // A take with another spec (an organization's limit just changed) waits for a take of its own.
      const key = `${scope}\u0000${name}\u0000${spec.perSecond}\u0000${spec.burst}`
      const waiter = Deferred.makeUnsafe<Decision>()
      const bucket = buckets.get(key)
      if (bucket !== undefined) {
        bucket.waiting.push(waiter)
        return Deferred.await(waiter)
      }
      const fresh: SharedBucket = { waiting: [waiter] }
      buckets.set(key, fresh)
      return Effect.andThen(Effect.forkDetach(drain(key, fresh, scope, name, spec)), Deferred.await(waiter))
    },
    // Taking minus one puts one back (a bucket over its size is brought down to it at its next take).
    refund: (scope, name, spec) => Effect.asVoid(store.take(scope, name, spec, -1, realNow()))
  }
}
