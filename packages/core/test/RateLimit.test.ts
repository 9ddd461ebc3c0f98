import { describe, expect, it } from "@effect/vitest"
import { Clock, Context, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import * as Auth from "../src/tenancy/Auth.ts"
import * as Engine from "../src/Engine.ts"
import * as RateLimit from "../src/kernel/RateLimit.ts"
import type * as SharedState from "../src/kernel/SharedState.ts"
import type * as Tenancy from "../src/tenancy/Tenancy.ts"
import * as Timers from "../src/kernel/Timers.ts"

const organization = (rateLimit?: Tenancy.Organization["rateLimit"]): Tenancy.Organization => ({
  id: "org_a" as Tenancy.Organization["id"],
  name: "A",
  status: "active",
  sandboxProvisioned: true,
  apiKeyCreationEnabled: true,
  features: [],
  rateLimit,
  createdAt: "2026-01-01T00:00:00.000Z"
})

const caller = (environment: "sandbox" | "live", rateLimit?: Tenancy.Organization["rateLimit"]): Auth.Caller => ({
  organization: organization(rateLimit),
  environment,
  key: {} as Auth.Caller["key"]
})

const key = (limit: ReturnType<typeof Auth.rateLimitFor>) => `${limit.scope} ${limit.name}`

describe("buckets", () => {
  it("are the spec's: 200/s burst 400 sandbox, 50/s burst 100 live, 5/s burst 10 dedicated", () => {
    expect(Auth.rateLimitFor(caller("sandbox"), undefined).spec).toEqual({ perSecond: 200, burst: 400 })
    expect(Auth.rateLimitFor(caller("live"), undefined).spec).toEqual({ perSecond: 50, burst: 100 })
    for (const env of ["sandbox", "live"] as const) {
      expect(Auth.rateLimitFor(caller(env), "order_execute").spec).toEqual({ perSecond: 5, burst: 10 })
    }
  })

  it("count each dedicated bucket apart from the general one and from each other, per organization and environment", () => {
    const keys = new Set([
      key(Auth.rateLimitFor(caller("sandbox"), undefined)),
      key(Auth.rateLimitFor(caller("sandbox"), "order_execute")),
      key(Auth.rateLimitFor(caller("sandbox"), "documents")),
      key(Auth.rateLimitFor(caller("sandbox"), "application_submit")),
      key(Auth.rateLimitFor(caller("live"), undefined)),
      key(Auth.rateLimitFor(caller("live"), "order_execute"))
    ])
    expect(keys.size).toBe(6)
  })

  it("take a support override for the general bucket only", () => {
    const override = { sustainedPerSecond: 1000, burst: 5000 }
    expect(Auth.rateLimitFor(caller("live", override), undefined).spec).toEqual({ perSecond: 1000, burst: 5000 })
    expect(Auth.rateLimitFor(caller("live", override), "documents").spec).toEqual(RateLimit.Buckets.dedicated)
  })
})

describe("token bucket", () => {
  it("starts full, refuses the request past the burst, and says when to retry", () => {
    const spec = { perSecond: 5, burst: 10 }
    let state
    const decisions = []
    for (let i = 0; i < 11; i++) {
      const [d, next] = RateLimit.take(spec, state, 0)
      decisions.push(d)
      state = next
    }
    expect(decisions.slice(0, 10).every((d) => d.allowed)).toBe(true)
    expect(decisions[9]!.remaining).toBe(0)
    expect(decisions[0]).toMatchObject({ limit: 10, remaining: 9, resetSeconds: 1 })
    expect(decisions[10]).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1, resetSeconds: 2 })
    // One token comes back after 200 ms at 5/s.
    expect(RateLimit.take(spec, state, 199)[0].allowed).toBe(false)
    expect(RateLimit.take(spec, state, 200)[0].allowed).toBe(true)
  })

  it.effect("refills on its time source (a TestClock here)", () =>
    Effect.gen(function*() {
      const clock = yield* Clock.Clock
      const limiter = RateLimit.makeRateLimiter(() => clock.currentTimeMillisUnsafe())
      const spec = { perSecond: 1, burst: 2 }
      expect(limiter.take("org_a", "k", spec).allowed).toBe(true)
      expect(limiter.take("org_a", "k", spec).allowed).toBe(true)
      const refused = limiter.take("org_a", "k", spec)
      expect(refused).toMatchObject({ allowed: false, retryAfterSeconds: 1 })
      yield* TestClock.adjust("999 millis")
      expect(limiter.take("org_a", "k", spec).allowed).toBe(false)
      yield* TestClock.adjust("1 millis")
      expect(limiter.take("org_a", "k", spec).allowed).toBe(true)
      // Another bucket of the scope, and the same bucket of another scope, are buckets of their own.
      expect(limiter.take("org_a", "other", spec).allowed).toBe(true)
      expect(limiter.take("org_b", "k", spec).allowed).toBe(true)
    }))

  it.effect("an engine on a virtual clock refills its buckets on real time (the Clock it is built in) and on advances", () =>
    Effect.gen(function*() {
      const engine = yield* Layer.build(Engine.layer({ clock: { mode: "virtual", startMs: 0 } }))
      const shared = Context.get(engine, RateLimit.RateLimiter)
      // The memory store serves one process: its limiter decides at once.
      const limiter = { take: (scope: string, name: string, spec: RateLimit.BucketSpec) => shared.take(scope, name, spec) as RateLimit.Decision }
      const spec = { perSecond: 1, burst: 1 }
      expect(limiter.take("org_a", "k", spec).allowed).toBe(true)
      expect(limiter.take("org_a", "k", spec).allowed).toBe(false)
      // The TestClock is the real time here; the engine's virtual clock stands still.
      yield* TestClock.adjust("1 second")
      expect(yield* Context.get(engine, Timers.TimeControl).now).toBe(0)
      expect(limiter.take("org_a", "k", spec).allowed).toBe(true)
      expect(limiter.take("org_a", "k", spec).allowed).toBe(false)
      yield* Context.get(engine, Timers.TimeControl).advanceTo(1000).pipe(Effect.provideContext(engine))
      expect(limiter.take("org_a", "k", spec).allowed).toBe(true)
    }).pipe(Effect.scoped))
})

describe("a limiter over shared buckets", () => {
  /** One bucket in memory standing for the store's row, counting the takes it is asked for. */
  const fakeStore = (nowMs: () => number) => {
    const states = new Map<string, RateLimit.Decision & { tokens: number; atMs: number }>()
    const calls: Array<number> = []
    const buckets: SharedState.SharedBuckets = {
      take: (scope, name, spec, want) =>
        Effect.sync(() => {
          calls.push(want)
          const key = `${scope}/${name}`
          const state = states.get(key)
          const refilled = state === undefined ? spec.burst : Math.min(spec.burst, state.tokens + ((nowMs() - state.atMs) * spec.perSecond) / 1000)
          const taken = Math.min(want, Math.floor(refilled))
          states.set(key, { ...(state as any), tokens: refilled - taken, atMs: nowMs() })
          return { taken, tokens: refilled - taken }
        }),
      advanced: () => Effect.void
    }
    return { buckets, calls }
  }

  it.effect("decides as one process's buckets do, request by request", () =>
    Effect.gen(function*() {
      let now = 0
      const { buckets } = fakeStore(() => now)
      const shared = RateLimit.makeSharedRateLimiter(buckets, () => now)
      const local = RateLimit.makeRateLimiter(() => now)
      const spec = { perSecond: 2, burst: 3 }
      for (let i = 0; i < 12; i++) {
        now += i % 4 === 0 ? 700 : 0
        const decision = yield* RateLimit.decide(shared.take("org_a", "k", spec), Effect.succeed)
        expect(decision).toEqual(local.take("org_a", "k", spec))
      }
    }))

  it.effect("takes once for the requests that wait together, and gives the tokens in the order they came", () =>
    Effect.gen(function*() {
      const { buckets, calls } = fakeStore(() => 0)
      const shared = RateLimit.makeSharedRateLimiter(buckets, () => 0)
      const spec = { perSecond: 1, burst: 5 }
      const decisions = yield* Effect.all(
        Array.from({ length: 8 }, () => RateLimit.decide(shared.take("org_a", "k", spec), Effect.succeed)),
        { concurrency: "unbounded" }
      )
      expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false, false, false])
      expect(decisions.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0, 0, 0, 0])
      expect(decisions[7]!.retryAfterSeconds).toBe(1)
      // One take for the eight: the first request's take starts in a fiber of its own, after the others came.
      expect(calls).toEqual([8])
    }))

  it.effect("fails the waiting requests with the store's failure, and takes again afterwards", () =>
    Effect.gen(function*() {
      let down = true
      const { buckets } = fakeStore(() => 0)
      const flaky: SharedState.SharedBuckets = { ...buckets, take: (...args) => down ? Effect.die("store down") : buckets.take(...args) }
      const shared = RateLimit.makeSharedRateLimiter(flaky, () => 0)
      const spec = { perSecond: 1, burst: 5 }
      const exit = yield* Effect.exit(RateLimit.decide(shared.take("org_a", "k", spec), Effect.succeed))
      expect(exit._tag).toBe("Failure")
      down = false
      expect((yield* RateLimit.decide(shared.take("org_a", "k", spec), Effect.succeed)).allowed).toBe(true)
    }))
})
