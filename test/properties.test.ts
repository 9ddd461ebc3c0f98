/**
 * Property tests (fast-check) of the pipeline's invariants: the token bucket never grants more than
 * burst + rate × time; an idempotent replay is byte-identical; and no request, however malformed, gets a 5xx
 * or an answer without a correlation id. Seeds are fixed so a failure reproduces.
 */
import { RateLimit } from "@fos/core"
import { isErrorCode } from "@fos/contract"
import type { Engine } from "@fos/http"
import * as fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildRequest, call, insertCustomers, isoMs, keysOf, liveKey, makeEngine, orgSeed, sandboxKey, seedOf, START_MS, toReply } from "./support.ts"

/** FOS_FC_SEED / FOS_FC_RUNS override the fixed seeds and run counts, to explore further by hand. */
const opts = (seed: number, numRuns: number) => ({
  seed: process.env.FOS_FC_SEED === undefined ? seed : Number(process.env.FOS_FC_SEED),
  numRuns: process.env.FOS_FC_RUNS === undefined ? numRuns : Number(process.env.FOS_FC_RUNS)
})

// --- the token bucket ------------------------------------------------------------------------------------------

describe("token bucket take", () => {
  const spec = fc.record({
    perSecond: fc.oneof(fc.integer({ min: 1, max: 500 }), fc.double({ min: 0.05, max: 50, noNaN: true, noDefaultInfinity: true })),
    burst: fc.integer({ min: 1, max: 60 })
  })
  /** Gaps between requests in ms: bursts (0), near-rate spacing and long pauses. */
  const gaps = fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 5_000 })), {
    minLength: 1,
    maxLength: 250
  })

  const replay = (s: RateLimit.BucketSpec, deltas: ReadonlyArray<number>) => {
    let state: RateLimit.BucketState | undefined
    let t = START_MS
    const grants: Array<number> = []
    const steps: Array<{ t: number; state: RateLimit.BucketState | undefined; allowed: boolean; retryAfterSeconds: number | undefined }> = []
    for (const d of deltas) {
      t += d
      const before = state
      const [decision, next] = RateLimit.take(s, state, t)
      steps.push({ t, state: before, allowed: decision.allowed, retryAfterSeconds: decision.retryAfterSeconds })
      expect(decision.limit).toBe(s.burst)
      expect(Number.isInteger(decision.remaining)).toBe(true)
      expect(decision.remaining).toBeGreaterThanOrEqual(0)
      expect(decision.remaining).toBeLessThanOrEqual(s.burst)
      expect(Number.isInteger(decision.resetSeconds)).toBe(true)
      expect(decision.resetSeconds).toBeGreaterThanOrEqual(0)
      if (decision.allowed) {
        expect(decision.retryAfterSeconds).toBeUndefined()
        grants.push(t)
      } else {
        expect(Number.isInteger(decision.retryAfterSeconds)).toBe(true)
        expect(decision.retryAfterSeconds).toBeGreaterThanOrEqual(1)
      }
      state = next
    }
    return { grants, steps }
  }

  it("grants at most burst + perSecond × elapsed seconds over every window", () => {
    fc.assert(
      fc.property(spec, gaps, (s, deltas) => {
        const { grants } = replay(s, deltas)
        for (let i = 0; i < grants.length; i++) {
          for (let j = i; j < grants.length; j++) {
            const granted = j - i + 1
            const allowance = s.burst + (s.perSecond * (grants[j]! - grants[i]!)) / 1000
            expect(granted, `window ${grants[i]}..${grants[j]} with ${JSON.stringify(s)}`).toBeLessThanOrEqual(allowance + 1e-9)
          }
        }
      }),
      opts(20260301, 300)
    )
  })

  it("a full bucket grants the whole burst at once, and the next request at the same instant is refused", () => {
    fc.assert(
      fc.property(spec, (s) => {
        const { steps } = replay(s, Array.from({ length: s.burst + 1 }, () => 0))
        expect(steps.slice(0, s.burst).every((x) => x.allowed)).toBe(true)
        expect(steps[s.burst]!.allowed).toBe(false)
      }),
      opts(7, 200)
    )
  })

  it("a refused request succeeds once retryAfterSeconds have passed", () => {
    fc.assert(
      fc.property(spec, gaps, (s, deltas) => {
        const { steps } = replay(s, deltas)
        for (const step of steps) {
          if (step.allowed) continue
          const [after] = RateLimit.take(s, step.state, step.t + step.retryAfterSeconds! * 1000)
          expect(after.allowed, `retry after ${step.retryAfterSeconds}s with ${JSON.stringify(s)}`).toBe(true)
        }
      }),
      opts(11, 200)
    )
  })
})

// --- idempotent replay -----------------------------------------------------------------------------------------

describe("idempotent replay", () => {
  const A = keysOf("p")
  let engine: Engine
  beforeAll(async () => {
    engine = await makeEngine(seedOf(orgSeed("p", { rateLimit: { sustainedPerSecond: 1_000_000, burst: 1_000_000 } })))
  })
  afterAll(async () => {
    await engine.close()
  })

  const body = fc.oneof(
    fc.record({ kind: fc.constant("seconds" as const), seconds: fc.integer({ min: 0, max: 86_400 }) }),
    fc.record({ kind: fc.constant("to" as const), aheadMs: fc.integer({ min: 0, max: 86_400_000 }), offsetHours: fc.integer({ min: -12, max: 14 }) })
  )
  const formatting = fc.record({ indent: fc.integer({ min: 0, max: 4 }), trailing: fc.constantFrom("", " ", "\n", "\r\n\t") })

  let run = 0
  it("a replay of any valid body is byte-identical, marked replayed, and moves the clock once", async () => {
    await fc.assert(
      fc.asyncProperty(body, formatting, fc.stringMatching(/^[\x21-\x7e]{1,40}$/), async (b, f, rawKey) => {
        const key = `${run++}:${rawKey}`
        const before = await engine.clockOf("org_p").now()
        let payload: Record<string, unknown>
        if (b.kind === "seconds") payload = { seconds: b.seconds }
        else {
          // An instant ahead of the clock, written with a random UTC offset.
          const target = before + b.aheadMs
          const shifted = new Date(target + b.offsetHours * 3_600_000).toISOString().slice(0, 23)
          const sign = b.offsetHours < 0 ? "-" : "+"
          const hh = String(Math.abs(b.offsetHours)).padStart(2, "0")
          payload = { to: `${shifted}${sign}${hh}:00` }
        }
        const text = JSON.stringify(payload, null, f.indent) + f.trailing
        const send = () =>
          call(engine, "/sandbox/v2/simulate/clock/advance", { method: "POST", key: A.sandbox, body: text, headers: { "idempotency-key": key } })
        const first = await send()
        expect(first.status, first.text).toBe(200)
        expect(first.headers.get("idempotency-replayed")).toBeNull()
        const afterFirst = await engine.clockOf("org_p").now()
        const expected = b.kind === "seconds" ? before + b.seconds * 1000 : before + b.aheadMs
        expect(afterFirst).toBe(expected)
        // The caller's sandbox clock moved (docs/clock.md), and the answer says to where, from where.
        expect(first.json).toMatchObject({ now: new Date(expected).toISOString(), mode: "virtual", from: new Date(before).toISOString() })
        const second = await send()
        expect(second.status).toBe(first.status)
        expect(second.text).toBe(first.text)
        expect(second.headers.get("idempotency-replayed")).toBe("true")
        expect(await engine.clockOf("org_p").now()).toBe(afterFirst)
      }),
      opts(424242, 80)
    )
  })
})

// --- garbage never breaks the pipeline -------------------------------------------------------------------------

describe("garbage requests", () => {
  const A = keysOf("g")
  let engine: Engine
  beforeAll(async () => {
    engine = await makeEngine(seedOf(
      orgSeed("g", {
        rateLimit: { sustainedPerSecond: 1_000_000, burst: 1_000_000 },
        keys: [
          { key: A.sandbox, access: "read_write" },
          { key: A.live, access: "read_write" },
          { key: sandboxKey("g/ro"), access: "read_only" }
        ]
      })
    ))
    await insertCustomers(engine, Array.from({ length: 5 }, (_, i) => ({
      id: `cus_g${i}`,
      organizationId: "org_g",
      createdAt: new Date(START_MS - i * 60_000).toISOString(),
      ...(i % 2 === 0 ? { clientReferenceId: `ref-${i}` } : {})
    })))
  })
  afterAll(async () => {
    await engine.close()
  })

  const printable = (max: number) => fc.stringMatching(new RegExp(`^[\\x20-\\x7e]{0,${max}}$`))
  const idLike = fc.oneof(
    fc.constantFrom("cus_g0", "cus_g1", "cus_g4"),
    // Percent-encodings that do not decode, or decode to something odd.
    fc.constantFrom("%", "%zz", "cus_%E0%A4%A", "%C0%AF", "cus_%00", "%2e%2e", "cus_a%2Fb", "%F0%9F%92%A9"),
    fc.stringMatching(/^(cus|org|usr|txn|ord|wlt)_[0-9A-Za-z]{0,70}$/),
    fc.webSegment(),
    printable(30).map(encodeURIComponent),
    fc.string({ unit: "binary", maxLength: 20 }).map(encodeURIComponent)
  )
  const path = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom("/customers", "/simulate/clock", "/simulate/clock/advance", "/portal/users/me", "/openapi.json") },
    { weight: 4, arbitrary: idLike.map((id) => `/customers/${id}`) },
    { weight: 2, arbitrary: fc.array(fc.oneof(fc.webSegment(), idLike), { maxLength: 5 }).map((segments) => "/" + segments.join("/")) },
    { weight: 1, arbitrary: fc.webPath() }
  ).map((p) => `/sandbox/v2${p}`)
  const queryValue = fc.oneof(
    fc.constantFrom("0", "1", "20", "100", "101", "-1", "abc", "forward", "backward", "createdAt", "updatedAt", "asc", "desc", ""),
    printable(40),
    fc.base64String({ maxLength: 80 }),
    fc.string({ unit: "binary", maxLength: 20 })
  )
  const query = fc.option(
    fc.dictionary(fc.oneof(fc.constantFrom("cursor", "limit", "direction", "sortBy", "sortOrder"), fc.webSegment()), queryValue, { maxKeys: 5 })
      .map((q) => "?" + new URLSearchParams(q).toString()),
    { nil: "" }
  )
  const apiKey = fc.oneof(
    { weight: 6, arbitrary: fc.constant(A.sandbox) },
    { weight: 1, arbitrary: fc.constant(sandboxKey("g/ro")) },
    { weight: 1, arbitrary: fc.constant(A.live) },
    { weight: 1, arbitrary: fc.constant(liveKey("nobody")) },
    { weight: 1, arbitrary: printable(80) },
    { weight: 1, arbitrary: fc.stringMatching(/^ck_sandbox_[0-9a-fA-F]{60,68}$/) },
    { weight: 1, arbitrary: fc.constant(undefined) }
  )
  const contentType = fc.option(
    fc.oneof(
      fc.constantFrom("application/json", "application/json; charset=utf-8", "text/plain", "multipart/form-data; boundary=x", "application/problem+json", "", "*/*"),
      printable(40)
    ),
    { nil: undefined }
  )
  const body = fc.option(
    fc.oneof(
      fc.json({ maxDepth: 3 }),
      fc.string({ maxLength: 200 }),
      fc.string({ unit: "binary", maxLength: 100 }),
      fc.record({ seconds: fc.oneof(fc.integer({ min: -10, max: 3_600 }), fc.double(), fc.string()) }).map((o) => JSON.stringify(o)),
      fc.record({ to: fc.oneof(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), fc.string()) }).map((o) => JSON.stringify(o)),
      fc.constantFrom("{", "[", "null", "{}", '{"seconds":1,"to":"x"}', "\u0000", '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{}}}')
    ),
    { nil: undefined }
  )
  const garbage = fc.record({
    method: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"),
    path,
    query,
    apiKey,
    contentType,
    idempotencyKey: fc.option(printable(300), { nil: undefined }),
    clientCorrelation: fc.option(printable(150), { nil: undefined }),
    extraHeader: fc.option(fc.tuple(fc.constantFrom("accept", "x-forwarded-for", "content-length", "transfer-encoding", "x-api-key2"), printable(30)), { nil: undefined }),
    body
  })

  const stats = new Map<number, number>()
  afterAll(() => {
    if (process.env.FOS_FC_STATS !== undefined) console.log("statuses", [...stats].sort((a, b) => a[0] - b[0]))
  })

  it("never answer 5xx; always a correlation id and a JSON problem or success", async () => {
    await fc.assert(
      fc.asyncProperty(garbage, async (g) => {
        // Time passes between requests, so the per-IP buckets refill and keys are judged again.
        await engine.clock.advance(3_000)
        const headers: Record<string, string> = {}
        if (g.contentType !== undefined) headers["content-type"] = g.contentType
        if (g.idempotencyKey !== undefined) headers["idempotency-key"] = g.idempotencyKey
        if (g.clientCorrelation !== undefined) headers["x-client-correlation-id"] = g.clientCorrelation
        if (g.extraHeader !== undefined && g.extraHeader[0] !== "content-length" && g.extraHeader[0] !== "transfer-encoding") {
          headers[g.extraHeader[0]] = g.extraHeader[1]
        }
        const hasBody = g.body !== undefined && g.method !== "GET" && g.method !== "HEAD"
        const request = buildRequest("http://localhost", g.path + g.query, {
          method: g.method,
          headers,
          ...(g.apiKey === undefined ? {} : { key: g.apiKey }),
          ...(hasBody ? { body: g.body, noContentType: g.contentType === undefined } : {})
        })
        const reply = await toReply(await engine.fetch(request))
        if (process.env.FOS_FC_STATS !== undefined) stats.set(reply.status, (stats.get(reply.status) ?? 0) + 1)
        const where = `${g.method} ${request.url} -> ${reply.status} ${reply.text.slice(0, 300)}`
        expect(reply.status, where).toBeLessThan(500)
        expect(reply.status, where).toBeGreaterThanOrEqual(200)
        const correlation = reply.headers.get("x-correlation-id")
        expect(correlation, where).toBeTruthy()
        // HEAD, and a 204 (OPTIONS, a delete), have no body.
        if (g.method === "HEAD" || reply.status === 204) return
        expect(reply.headers.get("content-type") ?? "", where).toMatch(/^application\/(problem\+)?json/)
        expect(reply.json, where).toBeDefined()
        if (reply.status >= 400) {
          const p = reply.json
          expect(isErrorCode(p.type), where).toBe(true)
          expect(p.status, where).toBe(reply.status)
          for (const k of ["title", "detail", "resolution", "docs", "instance", "correlationId", "timestamp"]) {
            expect(typeof p[k], `${where} member ${k}`).toBe("string")
          }
          expect(p.correlationId, where).toBe(correlation)
          expect(p.instance, where).toBe(new URL(request.url).pathname)
          expect(p.timestamp, where).toMatch(isoMs)
          if (reply.status === 429) expect(reply.headers.get("retry-after"), where).toBe(String(p.retryAfterSeconds))
          if (p.errors !== undefined) {
            for (const e of p.errors) {
              expect(typeof e.pointer, where).toBe("string")
              expect(typeof e.detail, where).toBe("string")
            }
          }
        }
      }),
      opts(1337, 600)
    )
  })
})
