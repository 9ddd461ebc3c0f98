/**
 * Token buckets on the Clock, and the limiter that keeps them.
 *
 * A bucket holds at most `burst` tokens and refills at `perSecond`; a request takes one token. Over any window
 * of `t` seconds a bucket grants at most `burst + perSecond × t` requests.
 *
 * Buckets live in the engine's memory: one process enforces its own buckets exactly. Several processes on one
 * database each keep their own (README, "Running several processes").
 */
import { Clock, Context, Effect, Layer } from "effect"

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

/** The dedicated buckets of the spec's Limits table. */
export type DedicatedBucket = "order_execute" | "documents" | "application_submit"

export interface RateLimiterService {
  /** Takes a token from the bucket named `key`, created with `spec` on first use. */
  readonly take: (key: string, spec: BucketSpec) => Effect.Effect<Decision>
}

export class RateLimiter extends Context.Service<RateLimiter, RateLimiterService>()("fos/RateLimiter") {}

/** Bounds the bucket map: idle full buckets are forgotten once it grows past this many keys. */
const maxBuckets = 100_000

/** A limiter on `clock`: the engine's clock, virtual or not, fixed when the engine is built. */
export const makeRateLimiter = (clock: Clock.Clock): RateLimiterService => {
  const buckets = new Map<string, BucketState>()
  return {
    take: (key, spec) =>
      Effect.suspend(() => {
        const nowMs = clock.currentTimeMillisUnsafe()
        const [decision, next] = take(spec, buckets.get(key), nowMs)
        if (buckets.size >= maxBuckets && !buckets.has(key)) {
          for (const [k, s] of buckets) {
            if (take(spec, s, nowMs)[1].tokens >= spec.burst - 1) buckets.delete(k)
          }
        }
        buckets.set(key, next)
        return Effect.succeed(decision)
      })
  }
}

/** The limiter on the Clock of the layer's context. */
export const layerRateLimiter: Layer.Layer<RateLimiter> = Layer.effect(RateLimiter, Effect.map(Clock.Clock, makeRateLimiter))
