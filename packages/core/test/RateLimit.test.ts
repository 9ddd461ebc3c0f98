import { describe, expect, it } from "@effect/vitest"
import { Clock, Context, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import * as Auth from "../src/tenancy/Auth.ts"
import * as Engine from "../src/Engine.ts"
import * as RateLimit from "../src/kernel/RateLimit.ts"
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
