/**
 * The pipeline's parts one at a time (packages/http/src/Edge.ts, Gate.ts and Write.ts), each over no more than it
 * needs, where test/pipeline.test.ts drives them together through an engine: what the edge knows of a request when
 * it begins, the headers every answer carries, how a failure becomes its answer, and the virtual clock's steps
 * doing nothing on the system clock.
 */
import { type Auth, Problem, Store, type Timers } from "@fos/core"
import { Cause, type Clock, Context, Effect, Exit, Logger } from "effect"
import { HttpServerRequest, type HttpServerResponse } from "effect/http"
import { describe, expect, it } from "vitest"
import { type CorrelationIds, finish, makeBegin, recover, refusesClientCorrelation } from "../packages/http/src/Edge.ts"
import { makeOnClockOf } from "../packages/http/src/Gate.ts"
import type { RequestInfo } from "../packages/http/src/RequestInfo.ts"
import { makeSettle } from "../packages/http/src/Write.ts"

const requestOf = (url: string, headers: Record<string, string> = {}) => HttpServerRequest.fromWeb(new Request(url, { headers }))

/** A clock that stands at `ms` (all the edge reads of one). */
const clockAt = (ms: number) =>
  ({ currentTimeMillisUnsafe: () => ms, monotonicTimeNanosUnsafe: () => BigInt(ms) * 1_000_000n }) as unknown as Clock.Clock

/** Ids that count, and say which scope each was drawn for. */
const countingIds = (perScope: boolean): CorrelationIds & { readonly drawn: Array<string | undefined> } => {
  const drawn: Array<string | undefined> = []
  return { perScope, drawn, next: (scope) => (drawn.push(scope), `id${drawn.length}`) }
}

const bodyOf = (response: HttpServerResponse.HttpServerResponse): Record<string, unknown> => {
  const body = response.body
  return JSON.parse(body._tag === "Uint8Array" ? new TextDecoder().decode(body.body) : String((body as { body?: unknown }).body)) as Record<string, unknown>
}

const startMs = Date.UTC(2026, 2, 3, 9)

describe("the edge's beginning of a request (makeBegin)", () => {
  it("draws the engine's next id, and knows the path without its query, the environment and the client's id", () => {
    const ids = countingIds(false)
    const info = makeBegin(ids, clockAt(startMs))(requestOf("http://fos/sandbox/v2/customers?limit=2", { "x-client-correlation-id": "mine-1" }), "sandbox")
    expect(info).toMatchObject({ correlationId: "id1", clientCorrelationId: "mine-1", environment: "sandbox", instance: "/sandbox/v2/customers" })
    expect(info.startedNs).toBe(BigInt(startMs) * 1_000_000n)
    expect(ids.drawn).toEqual([undefined])
  })

  it("on a seeded engine draws the id when it is first read, from the scope of the caller known by then", () => {
    const ids = countingIds(true)
    const info = makeBegin(ids, clockAt(startMs))(requestOf("http://fos/sandbox/v2/customers"), "sandbox")
    expect(ids.drawn).toEqual([])
    info.organizationId = "org_a"
    expect([info.correlationId, info.correlationId]).toEqual(["id1", "id1"])
    expect(ids.drawn).toEqual(["org_a/sandbox"])
  })

  it("refuses a client correlation id it would not echo, and echoes none", () => {
    const long = "x".repeat(129)
    expect(refusesClientCorrelation(requestOf("http://fos/healthz"))).toBe(false)
    expect(refusesClientCorrelation(requestOf("http://fos/healthz", { "x-client-correlation-id": "x".repeat(128) }))).toBe(false)
    expect(refusesClientCorrelation(requestOf("http://fos/healthz", { "x-client-correlation-id": long }))).toBe(true)
    expect(refusesClientCorrelation(requestOf("http://fos/healthz", { "x-client-correlation-id": "a b" }))).toBe(true)
    const info = makeBegin(countingIds(false), clockAt(startMs))(requestOf("http://fos/healthz", { "x-client-correlation-id": long }), undefined)
    expect(info.clientCorrelationId).toBeUndefined()
  })
})

describe("every answer's way out", () => {
  // Each request its own engine's ids, so each is `id1`.
  const begin = (request: HttpServerRequest.HttpServerRequest, environment: RequestInfo["environment"]) =>
    makeBegin(countingIds(false), clockAt(startMs))(request, environment)
  const problem = Problem.apiError("NOT_FOUND", "No such customer.")

  it("carries the correlation ids, and the rate headers only once a key was accepted (finish)", () => {
    const info = begin(requestOf("http://fos/sandbox/v2/x", { "x-client-correlation-id": "mine" }), "sandbox")
    const empty = Effect.runSync(recover(info, Cause.fail(problem), clockAt(startMs)))
    expect(finish(info, empty).headers).toMatchObject({ "x-correlation-id": "id1", "x-client-correlation-id": "mine" })
    expect(finish(info, empty).headers["x-ratelimit-limit"]).toBeUndefined()
    info.rate = { allowed: true, limit: 10, remaining: 9, resetSeconds: 1 } as RequestInfo["rate"]
    expect(finish(info, empty).headers).toMatchObject({ "x-ratelimit-limit": "10", "x-ratelimit-remaining": "9", "x-ratelimit-reset": "1" })
  })

  it("turns a problem into its answer, stamped by the request's clock once known, else the engine's (recover)", () => {
    const info = begin(requestOf("http://fos/sandbox/v2/customers/cus_1"), "sandbox")
    const engineStamped = Effect.runSync(recover(info, Cause.fail(problem), clockAt(startMs)))
    expect(engineStamped.status).toBe(404)
    expect(bodyOf(engineStamped)).toMatchObject({ type: "NOT_FOUND", instance: "/sandbox/v2/customers/cus_1", correlationId: "id1", timestamp: "2026-03-03T09:00:00.000Z" })
    info.clock = clockAt(startMs + 1_000)
    expect(bodyOf(Effect.runSync(recover(info, Cause.fail(problem), clockAt(startMs)))).timestamp).toBe("2026-03-03T09:00:01.000Z")
  })

  it("answers the store out of reach with 503 and Retry-After, anything unexpected with 500, and lets an interruption through", () => {
    const info = begin(requestOf("http://fos/sandbox/v2/customers"), "sandbox")
    const quiet = <A, E>(effect: Effect.Effect<A, E>) => Effect.runSyncExit(Effect.provideService(effect, Logger.CurrentLoggers, new Set()))
    const unavailable = quiet(recover(info, Cause.die(new Store.StoreUnavailable({ message: "gone" })), clockAt(startMs)))
    expect(Exit.isSuccess(unavailable) && [unavailable.value.status, unavailable.value.headers["retry-after"]]).toEqual([503, "5"])
    const unexpected = quiet(recover(info, Cause.die(new Error("boom")), clockAt(startMs)))
    expect(Exit.isSuccess(unexpected) && bodyOf(unexpected.value)).toMatchObject({ type: "INTERNAL_ERROR", status: 500 })
    const interrupted = quiet(recover(info, Cause.interrupt(), clockAt(startMs)))
    expect(Exit.isFailure(interrupted) && Cause.hasInterruptsOnly(interrupted.cause)).toBe(true)
  })
})

describe("the virtual clock's steps on the system clock", () => {
  const systemTime = { mode: "system" } as Timers.TimeControlService
  const caller = { organization: { id: "org_a" }, environment: "sandbox" } as Auth.Caller

  it("leave a request's effect as it is (makeOnClockOf) and settle nothing after a write (makeSettle)", () => {
    const effect = Effect.succeed("answer")
    const info = makeBegin(countingIds(false), clockAt(startMs))(requestOf("http://fos/sandbox/v2/x"), "sandbox")
    expect(makeOnClockOf(systemTime, Context.empty() as never)(info, caller, effect)).toBe(effect)
    expect(info.clock).toBeUndefined()
    expect(Effect.runSync(makeSettle(systemTime, Context.empty() as never)(caller, { due: true }))).toBeUndefined()
  })
})
