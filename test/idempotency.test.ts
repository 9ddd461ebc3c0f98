/**
 * Idempotency (the spec's "Idempotency rules"), black-box over POST /sandbox/v2/simulate/clock/advance (the
 * one keyed endpoint so far, whose effect, moving the clock, is easy to count), and at the engine level with
 * `runIdempotent` for what HTTP cannot stage: a concurrent duplicate, 5xx binding, environment scoping.
 */
import { Idempotency, Problem, Timers } from "@fos/core"
import type { Engine } from "@fos/http"
import { Deferred, Effect, Fiber, Result } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { call, expectProblem, keysOf, makeEngine, orgSeed, type Reply, seedOf, START_MS } from "./support.ts"

const A = keysOf("a")
const B = keysOf("b")
const seed = seedOf(
  orgSeed("a", { rateLimit: { sustainedPerSecond: 100_000, burst: 100_000 } }),
  orgSeed("b", { rateLimit: { sustainedPerSecond: 100_000, burst: 100_000 } })
)
const path = "/sandbox/v2/simulate/clock/advance"
const iso = (ms: number) => new Date(ms).toISOString()

let engine: Engine
afterEach(async () => {
  await engine.close()
})

const advance = (idempotencyKey: string | undefined, body: unknown, key: string = A.sandbox): Promise<Reply> =>
  call(engine, path, {
    method: "POST",
    key,
    body,
    ...(idempotencyKey === undefined ? {} : { headers: { "idempotency-key": idempotencyKey } })
  })

/** Organization a's sandbox clock: the one its advances move. */
const now = () => engine.clockOf("org_a").now()

describe("over HTTP", () => {
  beforeEach(async () => {
    engine = await makeEngine(seed)
  })

  it("a retry with the same key and body replays the original response byte for byte, and the effect runs once", async () => {
    const first = await advance("key-1", { seconds: 60 })
    expect(first.status).toBe(200)
    expect(first.json).toMatchObject({ now: iso(START_MS + 60_000), mode: "virtual" })
    expect(first.headers.get("idempotency-replayed")).toBeNull()

    const second = await advance("key-1", { seconds: 60 })
    expect(second.status).toBe(first.status)
    expect(second.text).toBe(first.text)
    expect(second.headers.get("content-type")).toBe(first.headers.get("content-type"))
    expect(second.headers.get("idempotency-replayed")).toBe("true")
    expect(second.headers.get("x-correlation-id")).toBeTruthy()

    const third = await advance("key-1", { seconds: 60 })
    expect(third.text).toBe(first.text)
    expect(third.headers.get("idempotency-replayed")).toBe("true")

    expect(await now()).toBe(START_MS + 60_000)
  })

  it("a replay returns the original response even after the state it described moved on", async () => {
    const first = await advance("key-old", { seconds: 10 })
    await advance("key-other", { seconds: 50 })
    const replay = await advance("key-old", { seconds: 10 })
    expect(replay.text).toBe(first.text)
    expect(replay.json.now).toBe(iso(START_MS + 10_000))
    expect(await now()).toBe(START_MS + 60_000)
  })

  it("requests without a key are not deduplicated", async () => {
    await advance(undefined, { seconds: 5 })
    await advance(undefined, { seconds: 5 })
    expect(await now()).toBe(START_MS + 10_000)
  })

  it("the same key with a different body: 409 IDEMPOTENCY_KEY_CONFLICT, nothing runs, the key keeps its response", async () => {
    const first = await advance("key-2", { seconds: 60 })
    expect(first.status).toBe(200)
    const conflict = await advance("key-2", { seconds: 61 })
    expectProblem(conflict, { type: "IDEMPOTENCY_KEY_CONFLICT", status: 409, instance: path, nowMs: START_MS + 60_000 })
    expect(conflict.headers.get("idempotency-replayed")).toBeNull()
    expect(await now()).toBe(START_MS + 60_000)

    const other = await advance("key-2", { to: iso(START_MS + 3_600_000) })
    expectProblem(other, { type: "IDEMPOTENCY_KEY_CONFLICT", status: 409, instance: path, nowMs: START_MS + 60_000 })

    const replay = await advance("key-2", { seconds: 60 })
    expect(replay.text).toBe(first.text)
    expect(replay.headers.get("idempotency-replayed")).toBe("true")
    expect(await now()).toBe(START_MS + 60_000)
  })

  it("a 4xx is not kept: the same key is accepted again, with the same or a corrected body", async () => {
    const bad = await advance("key-3", { seconds: "x" })
    expectProblem(bad, { type: "VALIDATION_ERROR", status: 400, instance: path, nowMs: START_MS })
    const badAgain = await advance("key-3", { seconds: "x" })
    expectProblem(badAgain, { type: "VALIDATION_ERROR", status: 400, instance: path, nowMs: START_MS })
    expect(badAgain.headers.get("idempotency-replayed")).toBeNull()
    expect(badAgain.json.correlationId).not.toBe(bad.json.correlationId)

    const corrected = await advance("key-3", { seconds: 30 })
    expect(corrected.status).toBe(200)
    expect(corrected.headers.get("idempotency-replayed")).toBeNull()
    expect(corrected.json.now).toBe(iso(START_MS + 30_000))

    const replay = await advance("key-3", { seconds: 30 })
    expect(replay.headers.get("idempotency-replayed")).toBe("true")
    expect(replay.text).toBe(corrected.text)
    expect(await now()).toBe(START_MS + 30_000)
  })

  it("a 4xx raised by the handler (an instant in the past) frees the key too", async () => {
    await advance(undefined, { seconds: 100 })
    const bad = await advance("key-past", { to: iso(START_MS) })
    expectProblem(bad, { type: "VALIDATION_ERROR", status: 400, instance: path, nowMs: START_MS + 100_000 })
    const good = await advance("key-past", { to: iso(START_MS + 200_000) })
    expect(good.status).toBe(200)
    expect(await now()).toBe(START_MS + 200_000)
  })

  it.each([
    ["malformed JSON", { body: "{", headers: {} }],
    ["an unsupported media type", { body: '{"seconds":1}', headers: { "content-type": "text/plain" } }]
  ])("a request refused for %s commits nothing under its key", async (_, bad) => {
    const r = await call(engine, path, { method: "POST", key: A.sandbox, body: bad.body, headers: { ...bad.headers, "idempotency-key": "key-4" } })
    expect(r.status).toBeGreaterThanOrEqual(400)
    expect(r.status).toBeLessThan(500)
    const good = await advance("key-4", { seconds: 7 })
    expect(good.status).toBe(200)
    expect(good.headers.get("idempotency-replayed")).toBeNull()
    expect(await now()).toBe(START_MS + 7_000)
  })

  it("a refusal for an unknown API key commits nothing under the key", async () => {
    const refused = await advance("key-5", { seconds: 9 }, "ck_sandbox_" + "0".repeat(64))
    expect(refused.status).toBe(401)
    const good = await advance("key-5", { seconds: 9 })
    expect(good.status).toBe(200)
    expect(good.headers.get("idempotency-replayed")).toBeNull()
  })

  it("keys are scoped per organization: another organization's same key runs its own request", async () => {
    const a = await advance("shared-key", { seconds: 10 }, A.sandbox)
    expect(a.json.now).toBe(iso(START_MS + 10_000))
    const b = await advance("shared-key", { seconds: 20 }, B.sandbox)
    expect(b.status).toBe(200)
    expect(b.headers.get("idempotency-replayed")).toBeNull()
    // Each organization's sandbox has its own clock (docs/clock.md).
    expect(b.json.now).toBe(iso(START_MS + 20_000))
    const bSame = await advance("shared-key", { seconds: 10 }, B.sandbox)
    expectProblem(bSame, { type: "IDEMPOTENCY_KEY_CONFLICT", status: 409, instance: path, nowMs: START_MS + 20_000 })
    const aReplay = await advance("shared-key", { seconds: 10 }, A.sandbox)
    expect(aReplay.text).toBe(a.text)
    expect(aReplay.headers.get("idempotency-replayed")).toBe("true")
    expect(await now()).toBe(START_MS + 10_000)
    expect(await engine.clockOf("org_b").now()).toBe(START_MS + 20_000)
  })

  it("an Idempotency-Key longer than 255 characters is a 400 VALIDATION_ERROR", async () => {
    const r = await advance("k".repeat(256), { seconds: 1 })
    expectProblem(r, { type: "VALIDATION_ERROR", status: 400, instance: path, nowMs: START_MS })
    expect(await now()).toBe(START_MS)
  })

  it("two concurrent requests with one key run the effect once", async () => {
    const [r1, r2] = await Promise.all([advance("key-race", { seconds: 42 }), advance("key-race", { seconds: 42 })])
    const replies = [r1, r2]
    const ok = replies.filter((r) => r.status === 200)
    expect(ok.length).toBeGreaterThanOrEqual(1)
    for (const r of replies) {
      if (r.status === 200) expect(r.json.now).toBe(iso(START_MS + 42_000))
      else expectProblem(r, { type: "IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS", status: 409, instance: path })
    }
    expect(replies.filter((r) => r.status === 200 && r.headers.get("idempotency-replayed") === null)).toHaveLength(1)
    expect(await now()).toBe(START_MS + 42_000)
  })
})

describe("retention", () => {
  it("a kept response is replayed within the retention and forgotten after it", async () => {
    engine = await makeEngine(seed, { idempotencyRetentionMs: 300_000 })
    const first = await advance("key-r", { seconds: 1 })
    expect(first.status).toBe(200)

    await engine.clock.advance(290_000)
    const within = await advance("key-r", { seconds: 1 })
    expect(within.headers.get("idempotency-replayed")).toBe("true")
    expect(within.text).toBe(first.text)
    expect(await now()).toBe(START_MS + 291_000)

    await engine.clock.advance(20_000)
    const after = await advance("key-r", { seconds: 1 })
    expect(after.status).toBe(200)
    expect(after.headers.get("idempotency-replayed")).toBeNull()
    expect(after.json.now).toBe(iso(START_MS + 312_000))

    // The key is bound again, to the new response.
    const conflict = await advance("key-r", { seconds: 2 })
    expectProblem(conflict, { type: "IDEMPOTENCY_KEY_CONFLICT", status: 409, instance: path, nowMs: START_MS + 312_000 })
  })

  it("after the retention a different body under the old key is accepted", async () => {
    engine = await makeEngine(seed, { idempotencyRetentionMs: 60_000 })
    await advance("key-s", { seconds: 1 })
    await engine.clock.advance(120_000)
    const r = await advance("key-s", { seconds: 5 })
    expect(r.status).toBe(200)
    expect(r.json.now).toBe(iso(START_MS + 126_000))
  })

  it("the default retention is 30 days (docs/decisions.md)", async () => {
    engine = await makeEngine(seed)
    const first = await advance("key-d", { seconds: 1 })
    await engine.clock.advance(29 * 24 * 3600 * 1000)
    expect((await advance("key-d", { seconds: 1 })).headers.get("idempotency-replayed")).toBe("true")
    await engine.clock.advance(2 * 24 * 3600 * 1000)
    const after = await advance("key-d", { seconds: 1 })
    expect(after.headers.get("idempotency-replayed")).toBeNull()
    expect(after.text).not.toBe(first.text)
  })
})

describe("runIdempotent (engine level)", () => {
  beforeEach(async () => {
    engine = await makeEngine(seed)
  })

  const response = (body: string): Idempotency.StoredResponse => ({ status: 200, contentType: "application/json", body })
  const codeOf = (r: Result.Result<unknown, Problem.ApiError>) => (Result.isFailure(r) ? r.failure.code : "success")

  it("a duplicate while the first is still running: IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS (409); the key is left unchanged", async () => {
    const outcome = await engine.run(Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const request = { scope: "org_a/sandbox", key: "dup", fingerprint: "body-1" }
      let runs = 0
      const slow = Effect.gen(function*() {
        runs++
        yield* Deferred.succeed(started, undefined)
        yield* Deferred.await(release)
        return response('{"first":true}')
      })
      const first = yield* Effect.forkChild(Idempotency.runIdempotent(request, slow))
      yield* Deferred.await(started)
      const second = yield* Effect.forkChild(
        Effect.result(Idempotency.runIdempotent(request, Effect.sync(() => {
          runs++
          return response('{"second":true}')
        })))
      )
      // Give the duplicate every chance to finish while the first is held (no clock involved).
      for (let i = 0; i < 1000 && second.pollUnsafe() === undefined; i++) yield* Effect.yieldNow
      const duplicateAnsweredWhileFirstRan = second.pollUnsafe() !== undefined
      yield* Deferred.succeed(release, undefined)
      const firstResult = yield* Fiber.join(first)
      const secondResult = yield* Fiber.join(second)
      const retry = yield* Idempotency.runIdempotent(request, Effect.sync(() => {
        runs++
        return response('{"third":true}')
      }))
      return { duplicateAnsweredWhileFirstRan, firstResult, secondResult, retry, runs }
    }))
    expect(outcome.firstResult).toEqual({ response: response('{"first":true}'), replayed: false })
    expect(outcome.duplicateAnsweredWhileFirstRan, "the duplicate is answered at once, not queued behind the first").toBe(true)
    expect(codeOf(outcome.secondResult)).toBe("IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS")
    if (Result.isFailure(outcome.secondResult)) expect(outcome.secondResult.failure.status).toBe(409)
    expect(outcome.retry).toEqual({ response: response('{"first":true}'), replayed: true })
    expect(outcome.runs).toBe(1)
  })

  it("a duplicate while the first is still running is IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS even when the first moved the clock past its lease", async () => {
    // POST /simulate/clock/advance under a key does exactly this: the run itself advances the virtual clock.
    const outcome = await engine.run(Effect.gen(function*() {
      const time = yield* Timers.TimeControl
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const request = { scope: "org_a/sandbox", key: "moves-clock", fingerprint: "body-1" }
      let runs = 0
      const advancing = Effect.gen(function*() {
        runs++
        yield* time.advanceTo((yield* time.now) + 10 * 60_000)
        yield* Deferred.succeed(started, undefined)
        yield* Deferred.await(release)
        return response('{"first":true}')
      })
      const first = yield* Effect.forkChild(Idempotency.runIdempotent(request, advancing, { transactional: false }))
      yield* Deferred.await(started)
      const duplicate = yield* Effect.result(Idempotency.runIdempotent(request, Effect.sync(() => {
        runs++
        return response('{"second":true}')
      })))
      yield* Deferred.succeed(release, undefined)
      const firstResult = yield* Fiber.join(first)
      return { duplicate, firstResult, runs }
    }))
    expect(codeOf(outcome.duplicate)).toBe("IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS")
    expect(outcome.firstResult).toEqual({ response: response('{"first":true}'), replayed: false })
    expect(outcome.runs).toBe(1)
  })

  it("a request interrupted mid-run (its client gone) leaves nothing committed, and its retry runs at once", async () => {
    const outcome = await engine.run(Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const request = { scope: "org_a/sandbox", key: "gone", fingerprint: "body-1" }
      const first = yield* Effect.forkChild(Idempotency.runIdempotent(request, Effect.andThen(Deferred.succeed(started, undefined), Effect.never)))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(first)
      return yield* Idempotency.runIdempotent(request, Effect.sync(() => response('{"retry":true}')))
    }))
    expect(outcome).toEqual({ response: response('{"retry":true}'), replayed: false })
  })

  it("after a 5xx the same body runs again and another body is IDEMPOTENCY_KEY_CONFLICT", async () => {
    const outcome = await engine.run(Effect.gen(function*() {
      const request = { scope: "org_a/sandbox", key: "k5xx", fingerprint: "body-1" }
      let runs = 0
      const failing = Effect.suspend(() => {
        runs++
        return Effect.fail(Problem.apiError("SERVICE_UNAVAILABLE", "try later"))
      })
      const first = yield* Effect.result(Idempotency.runIdempotent(request, failing))
      const other = yield* Effect.result(Idempotency.runIdempotent({ ...request, fingerprint: "body-2" }, Effect.sync(() => response("{}"))))
      const again = yield* Idempotency.runIdempotent(request, Effect.sync(() => {
        runs++
        return response('{"ok":true}')
      }))
      return { first, other, again, runs }
    }))
    expect(codeOf(outcome.first)).toBe("SERVICE_UNAVAILABLE")
    expect(codeOf(outcome.other)).toBe("IDEMPOTENCY_KEY_CONFLICT")
    expect(outcome.again).toEqual({ response: response('{"ok":true}'), replayed: false })
    expect(outcome.runs).toBe(2)
  })

  it("after a 4xx the key is free for any body", async () => {
    const outcome = await engine.run(Effect.gen(function*() {
      const request = { scope: "org_a/sandbox", key: "k4xx", fingerprint: "body-1" }
      const first = yield* Effect.result(Idempotency.runIdempotent(request, Effect.fail(Problem.apiError("INSUFFICIENT_FUNDS", "not yet"))))
      const other = yield* Idempotency.runIdempotent({ ...request, fingerprint: "body-2" }, Effect.sync(() => response('{"b":2}')))
      return { first, other }
    }))
    expect(codeOf(outcome.first)).toBe("INSUFFICIENT_FUNDS")
    expect(outcome.other).toEqual({ response: response('{"b":2}'), replayed: false })
  })

  it("keys are scoped per organization and per environment", async () => {
    const outcome = await engine.run(Effect.gen(function*() {
      const key = "same-key"
      const sandbox = yield* Idempotency.runIdempotent({ scope: "org_a/sandbox", key, fingerprint: "f1" }, Effect.succeed(response('"sandbox"')))
      const live = yield* Idempotency.runIdempotent({ scope: "org_a/live", key, fingerprint: "f2" }, Effect.succeed(response('"live"')))
      const otherOrg = yield* Idempotency.runIdempotent({ scope: "org_b/sandbox", key, fingerprint: "f3" }, Effect.succeed(response('"b"')))
      const replay = yield* Idempotency.runIdempotent({ scope: "org_a/live", key, fingerprint: "f2" }, Effect.succeed(response('"again"')))
      return { sandbox, live, otherOrg, replay }
    }))
    expect(outcome.sandbox.replayed).toBe(false)
    expect(outcome.live).toEqual({ response: response('"live"'), replayed: false })
    expect(outcome.otherOrg).toEqual({ response: response('"b"'), replayed: false })
    expect(outcome.replay).toEqual({ response: response('"live"'), replayed: true })
  })
})
