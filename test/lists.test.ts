/**
 * Lists: the envelope and keyset paging over GET /v2/customers, black-box through the fetch handler. Customers
 * are inserted straight into the store (no endpoint creates them yet).
 */
import type { Engine } from "@fos/http"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { call, type CustomerRow, expectProblem, insertCustomers, keysOf, makeEngine, orgSeed, seedOf, START_MS } from "./support.ts"

const A = keysOf("a")
const B = keysOf("b")
const T = keysOf("t")
const seed = seedOf(
  orgSeed("a", { rateLimit: { sustainedPerSecond: 100_000, burst: 100_000 } }),
  orgSeed("b"),
  orgSeed("t")
)
const listPath = "/sandbox/v2/customers"

const COUNT = 45
const base = Date.parse("2025-06-01T00:00:00.000Z")
const iso = (ms: number) => new Date(ms).toISOString()

/**
 * 45 customers of org_a in sandbox. createdAt rises with i; updatedAt follows a permutation of i, so the two
 * sorts give different orders; ids follow a third order, so neither sort is the id order.
 */
const customers: Array<CustomerRow> = Array.from({ length: COUNT }, (_, i) => ({
  id: `cus_a${((i * 17) % COUNT).toString().padStart(3, "0")}x${i}`,
  organizationId: "org_a",
  createdAt: iso(base + i * 60_000),
  updatedAt: iso(base + 86_400_000 + ((i * 7) % COUNT) * 3_600_000)
}))

/** Noise that must never show up in org_a's sandbox list. */
const noise: Array<CustomerRow> = [
  ...Array.from({ length: 5 }, (_, i) => ({ id: `cus_b${i}`, organizationId: "org_b", createdAt: iso(base + i * 60_000 + 30_000) })),
  ...Array.from({ length: 5 }, (_, i) => ({
    id: `cus_alive${i}`,
    organizationId: "org_a",
    environment: "live" as const,
    createdAt: iso(base + i * 60_000 + 10_000)
  }))
]

type SortBy = "createdAt" | "updatedAt"
type SortOrder = "asc" | "desc"

const expectedOrder = (sortBy: SortBy, sortOrder: SortOrder): Array<string> => {
  const sorted = [...customers].sort((x, y) => {
    const a = x[sortBy] ?? x.createdAt
    const b = y[sortBy] ?? y.createdAt
    return a < b ? -1 : a > b ? 1 : x.id < y.id ? -1 : x.id > y.id ? 1 : 0
  })
  const ids = sorted.map((c) => c.id)
  return sortOrder === "asc" ? ids : ids.reverse()
}

let engine: Engine
beforeEach(async () => {
  engine = await makeEngine(seed)
  await insertCustomers(engine, [...customers, ...noise])
})
afterEach(async () => {
  await engine.close()
})

interface Page {
  readonly ids: Array<string>
  readonly data: Array<Record<string, unknown>>
  readonly meta: { mode: string; nextCursor: string | null; previousCursor: string | null; total: number }
}

const list = async (query: Record<string, string | number>, key = A.sandbox): Promise<Page> => {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString()
  const r = await call(engine, qs === "" ? listPath : `${listPath}?${qs}`, { key })
  expect(r.status, r.text).toBe(200)
  return { ids: r.json.data.map((c: { id: string }) => c.id), data: r.json.data, meta: r.json.meta }
}

const walkForward = async (sortBy: SortBy, sortOrder: SortOrder, limit: number): Promise<Array<Page>> => {
  const pages: Array<Page> = []
  let cursor: string | null = null
  do {
    const page: Page = await list({ limit, sortBy, sortOrder, ...(cursor === null ? {} : { cursor }) })
    pages.push(page)
    cursor = page.meta.nextCursor
    expect(pages.length).toBeLessThanOrEqual(COUNT + 1)
  } while (cursor !== null)
  return pages
}

describe("paging forward", () => {
  it.each([
    ["createdAt", "desc"],
    ["createdAt", "asc"],
    ["updatedAt", "desc"],
    ["updatedAt", "asc"]
  ] as const)("by %s %s with limit 10: every customer once, in order, no gaps", async (sortBy, sortOrder) => {
    const pages = await walkForward(sortBy, sortOrder, 10)
    expect(pages.map((p) => p.ids.length)).toEqual([10, 10, 10, 10, 5])
    expect(pages.flatMap((p) => p.ids)).toEqual(expectedOrder(sortBy, sortOrder))
    for (const p of pages) {
      expect(p.meta.total).toBe(COUNT)
      expect(p.meta.mode).toBe("cursor")
    }
    expect(pages[0]!.meta.previousCursor).toBeNull()
    for (const p of pages.slice(1)) expect(p.meta.previousCursor).toBeTypeOf("string")
    for (const p of pages.slice(0, -1)) expect(p.meta.nextCursor).toBeTypeOf("string")
    expect(pages.at(-1)!.meta.nextCursor).toBeNull()
  })

  it("the default is createdAt descending, 20 per page", async () => {
    const page = await list({})
    expect(page.ids).toEqual(expectedOrder("createdAt", "desc").slice(0, 20))
    expect(page.meta.total).toBe(COUNT)
    expect(page.meta.nextCursor).toBeTypeOf("string")
    const next = await list({ cursor: page.meta.nextCursor! })
    expect(next.ids).toEqual(expectedOrder("createdAt", "desc").slice(20, 40))
  })

  it("limit 1 and limit 100 are accepted", async () => {
    expect((await list({ limit: 1 })).ids).toEqual(expectedOrder("createdAt", "desc").slice(0, 1))
    const all = await list({ limit: 100 })
    expect(all.ids).toEqual(expectedOrder("createdAt", "desc"))
    expect(all.meta.nextCursor).toBeNull()
  })

  it("a page exactly filling the rest has nextCursor null", async () => {
    const first = await list({ limit: 40 })
    const rest = await list({ limit: 5, cursor: first.meta.nextCursor! })
    expect(rest.ids).toHaveLength(5)
    expect(rest.meta.nextCursor).toBeNull()
  })

  it("pages are keyset pages: a customer added before the cursor does not shift the next page", async () => {
    const first = await list({ limit: 10 })
    await insertCustomers(engine, [{ id: "cus_newest", organizationId: "org_a", createdAt: iso(START_MS) }])
    const second = await list({ limit: 10, cursor: first.meta.nextCursor! })
    expect(second.ids).toEqual(expectedOrder("createdAt", "desc").slice(10, 20))
    expect(second.meta.total).toBe(COUNT + 1)
  })

  it("customers sharing one createdAt are paged without duplicates or gaps", async () => {
    const same = iso(base)
    const tied = Array.from({ length: 12 }, (_, i) => ({ id: `cus_t${(i * 5) % 12}n${i}`, organizationId: "org_t", createdAt: same }))
    await insertCustomers(engine, tied)
    for (const sortOrder of ["asc", "desc"] as const) {
      const seen: Array<string> = []
      let cursor: string | null = null
      let pages = 0
      do {
        const page: Page = await list({ limit: 5, sortOrder, ...(cursor === null ? {} : { cursor }) }, T.sandbox)
        seen.push(...page.ids)
        cursor = page.meta.nextCursor
        pages++
      } while (cursor !== null && pages < 10)
      expect(new Set(seen).size).toBe(seen.length)
      expect([...seen].sort()).toEqual(tied.map((t) => t.id).sort())
    }
  })
})

describe("paging backward", () => {
  it.each([
    ["createdAt", "desc"],
    ["createdAt", "asc"],
    ["updatedAt", "desc"]
  ] as const)("by %s %s: previousCursor with direction=backward returns the previous page", async (sortBy, sortOrder) => {
    const pages = await walkForward(sortBy, sortOrder, 10)
    for (let k = 1; k < pages.length; k++) {
      const back = await list({ limit: 10, sortBy, sortOrder, direction: "backward", cursor: pages[k]!.meta.previousCursor! })
      expect(back.ids, `page ${k} back`).toEqual(pages[k - 1]!.ids)
      expect(back.meta.total).toBe(COUNT)
      if (k === 1) expect(back.meta.previousCursor).toBeNull()
      else expect(back.meta.previousCursor).toBeTypeOf("string")
      // Forward again from the page reached backward lands on the page we came from.
      expect(back.meta.nextCursor).toBeTypeOf("string")
      const forward = await list({ limit: 10, sortBy, sortOrder, cursor: back.meta.nextCursor! })
      expect(forward.ids, `page ${k - 1} forward`).toEqual(pages[k]!.ids)
    }
  })

  it("walking backward from the last page visits every earlier customer once, in order", async () => {
    const pages = await walkForward("createdAt", "desc", 10)
    const last = pages.at(-1)!
    const collected: Array<Array<string>> = []
    let cursor = last.meta.previousCursor
    let steps = 0
    while (cursor !== null && steps++ < 10) {
      const back: Page = await list({ limit: 10, direction: "backward", cursor })
      collected.unshift(back.ids)
      cursor = back.meta.previousCursor
    }
    expect(collected.flat()).toEqual(expectedOrder("createdAt", "desc").slice(0, COUNT - last.ids.length))
  })

  it("a backward page shorter than the limit (near the start) returns what there is", async () => {
    const first = await list({ limit: 3 })
    const second = await list({ limit: 3, cursor: first.meta.nextCursor! })
    const back = await list({ limit: 10, direction: "backward", cursor: second.meta.previousCursor! })
    expect(back.ids).toEqual(first.ids)
    expect(back.meta.previousCursor).toBeNull()
  })
})

describe("cursor and query errors", () => {
  const expectInvalidCursor = async (query: Record<string, string | number>) => {
    const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString()
    const r = await call(engine, `${listPath}?${qs}`, { key: A.sandbox })
    return expectProblem(r, { type: "INVALID_CURSOR", status: 400, instance: listPath, nowMs: START_MS })
  }

  it("a cursor reused under another sortBy is 400 INVALID_CURSOR", async () => {
    const page = await list({ limit: 10, sortBy: "createdAt", sortOrder: "desc" })
    await expectInvalidCursor({ limit: 10, sortBy: "updatedAt", sortOrder: "desc", cursor: page.meta.nextCursor! })
  })

  it("a cursor reused under another sortOrder is 400 INVALID_CURSOR", async () => {
    const page = await list({ limit: 10, sortBy: "createdAt", sortOrder: "desc" })
    await expectInvalidCursor({ limit: 10, sortBy: "createdAt", sortOrder: "asc", cursor: page.meta.nextCursor! })
    // Omitting sortOrder means desc, so the cursor still fits.
    expect((await list({ limit: 10, cursor: page.meta.nextCursor! })).ids).toHaveLength(10)
  })

  it("a previousCursor reused under another sort is 400 INVALID_CURSOR too", async () => {
    const first = await list({ limit: 10, sortBy: "updatedAt", sortOrder: "asc" })
    const second = await list({ limit: 10, sortBy: "updatedAt", sortOrder: "asc", cursor: first.meta.nextCursor! })
    await expectInvalidCursor({ direction: "backward", sortBy: "updatedAt", cursor: second.meta.previousCursor! })
  })

  it.each([
    ["random text", "not-a-cursor"],
    ["punctuation", "!!!***"],
    ["base64 of text", Buffer.from("hello world").toString("base64url")],
    ["base64 of JSON of another shape", Buffer.from(JSON.stringify({ s: "createdAt" })).toString("base64url")],
    ["base64 of JSON with a wrong sort value", Buffer.from(JSON.stringify({ s: "createdAt", o: "desc", v: { x: 1 }, k: "cus_a" })).toString("base64url")],
    ["base64 of JSON with an unknown order", Buffer.from(JSON.stringify({ s: "createdAt", o: "sideways", v: "x", k: "cus_a" })).toString("base64url")]
  ])("a garbage cursor (%s) is 400 INVALID_CURSOR", async (_, cursor) => {
    const p = await expectInvalidCursor({ cursor })
    expect(p.errors).toBeUndefined()
  })

  it("an over-long garbage cursor is 400 INVALID_CURSOR too (a malformed cursor, not a schema failure)", async () => {
    await expectInvalidCursor({ cursor: "a".repeat(2000) })
  })

  it.each([["0"], ["101"], ["abc"], ["-1"], ["1.5"], ["1e1000"]])("limit=%s is 400 VALIDATION_ERROR at /limit", async (limit) => {
    const r = await call(engine, `${listPath}?limit=${encodeURIComponent(limit)}`, { key: A.sandbox })
    const p = expectProblem(r, { type: "VALIDATION_ERROR", status: 400, instance: listPath, nowMs: START_MS })
    expect(p.errors.map((e: { pointer: string }) => e.pointer)).toContain("/limit")
    if (limit === "abc") expect(r.text).not.toContain("abc")
  })

  it.each([
    ["sortBy", "name"],
    ["sortOrder", "up"],
    ["direction", "sideways"]
  ])("%s=%s is 400 VALIDATION_ERROR at its pointer", async (name, value) => {
    const r = await call(engine, `${listPath}?${name}=${value}`, { key: A.sandbox })
    const p = expectProblem(r, { type: "VALIDATION_ERROR", status: 400, instance: listPath, nowMs: START_MS })
    expect(p.errors.map((e: { pointer: string }) => e.pointer)).toContain(`/${name}`)
  })

  it("another organization's list is unaffected by org_a's customers", async () => {
    const b = await list({ limit: 100 }, B.sandbox)
    expect(b.meta.total).toBe(5)
    expect(b.ids.every((id) => id.startsWith("cus_b"))).toBe(true)
  })
})
