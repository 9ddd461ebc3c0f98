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
 * Buckets live in the engine's memory: one process enforces its own buckets exactly. Several processes on one
 * database each keep their own (README, "Running several processes").
 */
import { type DedicatedBucket } from "@fos/contract"
import { Context, Effect, Layer } from "effect"
import * as RealClock from "./RealClock.ts"

export interface BucketSpec {
  readonly perSecond: number
  readonly burst: number
}

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
   * Synchronous, since the buckets live in this process's memory: every request takes a token, and an effect
   * around it would cost each request steps of the fiber for nothing. Call it from within an effect.
   */
  readonly take: (scope: string, name: string, spec: BucketSpec) => Decision
}

export class RateLimiter extends Context.Service<RateLimiter, RateLimiterService>()("fos/RateLimiter") {}

/** Bounds the buckets kept: idle full buckets are forgotten once there are this many. */
const maxBuckets = 100_000

/**
 * A limiter on the time source `nowMs`: milliseconds that move at least as real time does (only their differences
 * count), fixed when the engine is built.
 */
export const makeRateLimiter = (nowMs: () => number): RateLimiterService => {
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

/** The limiter on real time alone (the RealClock of the layer's context). */
export const layerRateLimiter: Layer.Layer<RateLimiter, never, RealClock.RealClock> = Layer.effect(
  RateLimiter,
  Effect.map(RealClock.RealClock, (clock) => makeRateLimiter(() => clock.currentTimeMillisUnsafe()))
)
