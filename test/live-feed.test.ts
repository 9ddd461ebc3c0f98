/**
 * One process's recent requests (packages/http/src/LiveFeed.ts), over the feed alone: what a request is read back
 * as, whatever its path, method, id, problem or fault, across the ring's growth and its wrap; and that keeping a
 * request holds no object of it in V8's heap (docs/performance.md, "An embedded engine's memory"), which
 * test/stream.test.ts cannot see through an engine.
 */
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { Effect, type Clock } from "effect"
import { HttpServerResponse } from "effect/http"
import { describe, expect, it } from "vitest"
import { LiveFeed } from "@fos/http"

/** A clock whose wall time is `ms` and whose monotonic time moves by `stepNs` at each read (a request started at 0). */
const steppingClock = (ms: number, stepNs: bigint) => {
  let ns = 0n
  return { currentTimeMillisUnsafe: () => ms, monotonicTimeNanosUnsafe: () => (ns += stepNs) } as unknown as Clock.Clock
}

const answered = (over: Partial<LiveFeed.AnsweredRequest> & { readonly status?: number; readonly responseBody?: string } = {}): LiveFeed.AnsweredRequest => ({
  organizationId: "org_a",
  environment: "sandbox",
  method: "GET",
  path: "/sandbox/v2/customers",
  response: HttpServerResponse.text(over.responseBody ?? "{}", { status: over.status ?? 200, contentType: "application/json" }),
  startedNs: 0n,
  correlationId: "0123456789abcdef0000000000000001",
  clientAddress: "127.0.0.1",
  injected: undefined,
  ...over
})

const page = (feed: LiveFeed.LiveFeedService, before?: number, limit = 100) =>
  Effect.runSync(feed.recent("org_a", "sandbox", before, limit))

describe("recent requests of one process", () => {
  it("reads back each request as answered, newest first, whatever its path, method, id, problem or fault", () => {
    const feed = LiveFeed.make(steppingClock(Date.UTC(2026, 2, 3, 9), 1_234_567n))
    const longPath = `/sandbox/v2/customers/${"c".repeat(200)}`
    const wide = "/sandbox/v2/customers/caf\u00e9"
    const longId = "x".repeat(128)
    const v6 = "2001:db8:85a3:1234:5678:8a2e:370:7334"
    const v4Mapped = "0000:0000:0000:0000:0000:ffff:192.168.100.200x"
    feed.record(answered({ method: "PROPFIND", path: longPath, correlationId: longId, clientAddress: v4Mapped }))
    feed.record(answered({ method: "POST", path: wide, status: 404, responseBody: `{"type":"NOT_FOUND","title":"x"}`, injected: "flt_1", clientAddress: v6 }))
    feed.record(answered({ path: "/sandbox/v2/customers/" + "d".repeat(128) }))
    const { data, total } = page(feed)
    expect(total).toBe(3)
    expect(data).toEqual([
      { time: "2026-03-03T09:00:00.000Z", method: "GET", path: "/sandbox/v2/customers/" + "d".repeat(128), status: 200, durationMs: 3.704, correlationId: "0123456789abcdef0000000000000001", clientAddress: "127.0.0.1", answeredBy: "local" },
      { time: "2026-03-03T09:00:00.000Z", method: "POST", path: wide, status: 404, type: "NOT_FOUND", durationMs: 2.469, correlationId: "0123456789abcdef0000000000000001", clientAddress: v6, injected: "flt_1", answeredBy: "local" },
      { time: "2026-03-03T09:00:00.000Z", method: "PROPFIND", path: longPath, status: 200, durationMs: 1.235, correlationId: longId, clientAddress: v4Mapped, answeredBy: "local" }
    ])
  })

  it("keeps the last of them across its growth and its wrap, each in its place", () => {
    const feed = LiveFeed.make(steppingClock(0, 1_000n))
    const total = LiveFeed.recentRequestsPerScope * 2 + 37
    for (let i = 0; i < total; i++) feed.record(answered({ path: `/sandbox/v2/customers/cus_${i}`, correlationId: `id${i}`, status: 200 + (i % 7) }))
    const kept = LiveFeed.recentRequestsPerScope
    const all: Array<LiveFeed.RecentRequest> = []
    let before: number | undefined
    for (;;) {
      const { data, next } = Effect.runSync(feed.recent("org_a", "sandbox", before, 64))
      all.push(...data)
      if (next === undefined) break
      before = next as number
    }
    expect(all).toHaveLength(kept)
    all.forEach((r, k) => {
      const i = total - 1 - k
      expect([r.path, r.correlationId, r.status]).toEqual([`/sandbox/v2/customers/cus_${i}`, `id${i}`, 200 + (i % 7)])
    })
    // A path that did not fit, in a slot a fitting one then took, reads back as the later one.
    feed.record(answered({ path: `/sandbox/v2/${"p".repeat(300)}` }))
    for (let i = 0; i < kept; i++) feed.record(answered({ path: `/sandbox/v2/fit/${i}` }))
    expect(page(feed, undefined, kept).data.map((r) => r.path)).toEqual(Array.from({ length: kept }, (_, k) => `/sandbox/v2/fit/${kept - 1 - k}`))
  })

  it("reads back a path and an address the same as the last request's, fitting or not, as they were sent", () => {
    const feed = LiveFeed.make(steppingClock(0, 1_000n))
    const long = `/sandbox/v2/${"q".repeat(200)}`
    const longAddress = `${"a".repeat(60)}`
    const sent = [
      ["/sandbox/v2/portal/users/me", "127.0.0.1"],
      ["/sandbox/v2/portal/users/me", "127.0.0.1"],
      [long, longAddress],
      [long, longAddress],
      ["/sandbox/v2/portal/users/me", "127.0.0.1"],
      [long, "127.0.0.1"],
      ["/sandbox/v2/customers", longAddress],
      ["/sandbox/v2/customers", longAddress]
    ] as const
    for (const [path, clientAddress] of sent) feed.record(answered({ path, clientAddress }))
    expect(page(feed).data.map((r) => [r.path, r.clientAddress])).toEqual([...sent].reverse())
  })

  it("holds no object of a request in V8's heap: a full ring is numbers and characters", () => {
    setFlagsFromString("--expose-gc")
    const gc = runInNewContext("gc") as () => void
    const feed = LiveFeed.make(steppingClock(0, 1_000n))
    const kept = LiveFeed.recentRequestsPerScope
    const organizations = Array.from({ length: 20 }, (_, o) => `org_${o}`)
    // Fresh strings for every request, as the edge makes them: a path and a correlation id of their own.
    let n = 0
    const fresh = (organizationId: string) =>
      answered({ organizationId, path: `/sandbox/v2/customers/cus_${1e6 + n}`, correlationId: `${"f".repeat(16)}${(1e9 + n++).toString(16).padStart(16, "0")}` })
    for (const o of organizations) feed.record(fresh(o))
    gc()
    const before = process.memoryUsage().heapUsed
    for (const o of organizations) for (let i = 1; i < kept; i++) feed.record(fresh(o))
    gc()
    const grown = process.memoryUsage().heapUsed - before
    // 10,000 requests kept. The slots of a request's rare strings (its problem type, its fault) take 40 bytes a
    // request, 400 KB; an object, two strings and two bigints a request, about 250 bytes, would be 2.5 MB.
    expect(grown).toBeLessThan(1_000_000)
    expect(Effect.runSync(feed.recent("org_7", "sandbox", undefined, 1)).data[0]!.path).toBe(`/sandbox/v2/customers/cus_${1e6 + n - 1 - 12 * (kept - 1)}`)
  })
})
