/**
 * Lists: the envelope and keyset paging over GET /v2/customers, black-box through the fetch handler. Customers
 * are inserted straight into the store (no endpoint creates them yet).
 */
import { Applications, Deliveries, Store } from "@fos/core"
import type { Engine } from "@fos/http"
import { Effect } from "effect"
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
    // The input is not echoed back. The correlation id is random hex, which can itself contain "abc": leave it out.
    if (limit === "abc") expect(JSON.stringify({ ...p, correlationId: undefined })).not.toContain("abc")
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

// --- filtered lists and bound cursors --------------------------------------------------------------------------

interface Listed {
  readonly ids: Array<string>
  readonly meta: Page["meta"]
}

/** One page of any list of org_a's sandbox (`path` without the /sandbox prefix). */
const listOf = async (path: string, query: Record<string, string | number | undefined>, key = A.sandbox): Promise<Listed> => {
  const entries = Object.entries(query).filter((e): e is [string, string | number] => e[1] !== undefined)
  const qs = new URLSearchParams(entries.map(([k, v]) => [k, String(v)])).toString()
  const r = await call(engine, `/sandbox${path}${qs === "" ? "" : `?${qs}`}`, { key })
  expect(r.status, r.text).toBe(200)
  return { ids: r.json.data.map((x: { id?: string; applicationId?: string }) => x.id ?? x.applicationId), meta: r.json.meta }
}

/**
 * Walks a list forward to its end and back again to its start, checking the paging rules on every page: full pages
 * but the last, a true total, nextCursor null only at the end, previousCursor null only at the start. Gives the ids
 * in the order the list gave them.
 */
const walkBothWays = async (path: string, query: Record<string, string | number | undefined>, limit: number, expected: Array<string>) => {
  const label = `${path} ${JSON.stringify(query)}`
  const pages: Array<Listed> = []
  let cursor: string | null = null
  do {
    const page: Listed = await listOf(path, { ...query, limit, ...(cursor === null ? {} : { cursor }) })
    pages.push(page)
    cursor = page.meta.nextCursor
    expect(pages.length, label).toBeLessThanOrEqual(Math.ceil(expected.length / limit) + 1)
  } while (cursor !== null)
  expect(pages.flatMap((p) => p.ids), label).toEqual(expected)
  const expectedPages = Math.max(1, Math.ceil(expected.length / limit))
  expect(pages.length, label).toBe(expectedPages)
  for (const [k, p] of pages.entries()) {
    expect(p.meta.total, label).toBe(expected.length)
    if (k < pages.length - 1) expect(p.ids.length, label).toBe(limit)
    expect(p.meta.previousCursor === null, label).toBe(k === 0)
  }
  // Backward from the last page: each page again, in order, to the start.
  for (let k = pages.length - 1; k > 0; k--) {
    const back = await listOf(path, { ...query, limit, direction: "backward", cursor: pages[k]!.meta.previousCursor! })
    expect(back.ids, `${label} back to page ${k - 1}`).toEqual(pages[k - 1]!.ids)
    expect(back.meta.total, label).toBe(expected.length)
    expect(back.meta.previousCursor === null, label).toBe(k === 1)
    expect(back.meta.nextCursor, label).toBeTypeOf("string")
  }
}

const deliveryStatuses = ["pending", "processing", "succeeded", "failed"] as const
const deliveryEndpoints = ["wep_list0", "wep_list1", "wep_list2"]
const deliveryTypes = ["customer.created", "application.approved", "order.created"]

interface DeliveryRow {
  readonly id: string
  readonly organizationId: string
  readonly environment: "sandbox" | "live"
  readonly endpointId: string
  readonly eventType: string
  readonly status: (typeof deliveryStatuses)[number]
  readonly createdAt: string
}

const deliveryOf = (r: DeliveryRow): Deliveries.WebhookDelivery => ({
  id: r.id,
  organizationId: r.organizationId,
  environment: r.environment,
  endpointId: r.endpointId,
  eventId: `evt_${r.id.slice(4)}`,
  eventType: r.eventType,
  status: r.status,
  run: 1,
  attemptsInRun: 0,
  body: "{}",
  timerId: undefined,
  nextAttemptAt: null,
  lastAttemptAt: null,
  createdAt: r.createdAt,
  updatedAt: r.createdAt
})

/**
 * 1,000 deliveries of org_a's sandbox over 3 endpoints, 3 event types and the 4 statuses, with runs of equal
 * createdAt, ids in an order of their own, and noise of another organization and environment. Every delivery is
 * inserted pending, and most then move through other statuses (a retry moves one back), as deliveries do, so the
 * lists must follow updates.
 */
const deliveryRows: Array<DeliveryRow> = Array.from({ length: 1000 }, (_, i) => ({
  id: `wdl_${((i * 379) % 1000).toString().padStart(4, "0")}n${i}`,
  organizationId: "org_a",
  environment: "sandbox",
  endpointId: deliveryEndpoints[(i * 7) % 3]!,
  eventType: deliveryTypes[Math.floor(i / 3) % 3]!,
  status: deliveryStatuses[(i * 13 + Math.floor(i / 11)) % 4]!,
  createdAt: iso(base + Math.floor(i / 4) * 1000)
}))
const deliveryNoise: Array<DeliveryRow> = [
  ...Array.from({ length: 20 }, (_, i) => ({ ...deliveryRows[i]!, id: `wdl_b${i}`, organizationId: "org_b" })),
  ...Array.from({ length: 20 }, (_, i) => ({ ...deliveryRows[i]!, id: `wdl_live${i}`, environment: "live" as const }))
]

const insertDeliveries = (rows: ReadonlyArray<DeliveryRow>) =>
  engine.run(Effect.flatMap(Store.Store, (store) =>
    Effect.forEach(rows, (r) =>
      Effect.gen(function*() {
        yield* store.insert(Deliveries.WebhookDeliveries, deliveryOf({ ...r, status: "pending" }))
        if (r.status === "pending") return
        yield* store.update(Deliveries.WebhookDeliveries, deliveryOf({ ...r, status: "processing" }))
        if (r.status === "processing") return
        if (r.status === "succeeded" && r.id.endsWith("3")) {
          // A failed run retried: failed, then pending again, then this run's outcome.
          yield* store.update(Deliveries.WebhookDeliveries, deliveryOf({ ...r, status: "failed" }))
          yield* store.update(Deliveries.WebhookDeliveries, deliveryOf({ ...r, status: "pending" }))
        }
        yield* store.update(Deliveries.WebhookDeliveries, deliveryOf(r))
      }), { discard: true }).pipe(Effect.orDie)))

/** The ids a filter should list, in the list's order (createdAt, then id). */
const expectedDeliveries = (
  filter: { endpointId?: string | undefined; status?: string | undefined; eventType?: string | undefined },
  sortOrder: SortOrder
) => {
  const ids = deliveryRows
    .filter((d) =>
      (filter.endpointId === undefined || d.endpointId === filter.endpointId) &&
      (filter.status === undefined || d.status === filter.status) &&
      (filter.eventType === undefined || d.eventType === filter.eventType))
    .sort((x, y) => (x.createdAt < y.createdAt ? -1 : x.createdAt > y.createdAt ? 1 : x.id < y.id ? -1 : x.id > y.id ? 1 : 0))
    .map((d) => d.id)
  return sortOrder === "asc" ? ids : ids.reverse()
}

describe("filtered delivery lists page exactly", () => {
  beforeEach(async () => {
    await insertDeliveries([...deliveryRows, ...deliveryNoise])
  })

  const endpointChoices = [undefined, ...deliveryEndpoints, "wep_none"]
  const statusChoices = [undefined, ...deliveryStatuses]
  const typeChoices = [undefined, ...deliveryTypes, "no.such_type"]

  it.each(endpointChoices.map((e) => [e ?? "any endpoint"]))(
    "%s: every status and event type filter, forward and backward, desc and asc",
    async (endpointLabel) => {
      const endpointId = endpointLabel === "any endpoint" ? undefined : endpointLabel
      for (const status of statusChoices) {
        for (const eventType of typeChoices) {
          const filter = { endpointId, status, eventType }
          await walkBothWays("/v2/webhooks/deliveries", filter, 37, expectedDeliveries(filter, "desc"))
        }
      }
      // Ascending too, on the status filters.
      for (const status of statusChoices) {
        const filter = { endpointId, status, eventType: undefined }
        await walkBothWays("/v2/webhooks/deliveries", { ...filter, sortOrder: "asc" }, 41, expectedDeliveries(filter, "asc"))
      }
    },
    120_000
  )

  it("a status given in capitals filters the same", async () => {
    const page = await listOf("/v2/webhooks/deliveries", { status: "FAILED", endpointId: "wep_list1", limit: 100 })
    const expected = expectedDeliveries({ status: "failed", endpointId: "wep_list1" }, "desc")
    expect(page.ids).toEqual(expected.slice(0, 100))
    expect(page.meta.total).toBe(expected.length)
  })

  it("a delivery whose status changes leaves one status's list and joins the other's", async () => {
    const moved = deliveryRows.find((d) => d.status === "failed" && d.endpointId === "wep_list0")!
    const failedBefore = (await listOf("/v2/webhooks/deliveries", { status: "failed", endpointId: "wep_list0", limit: 1 })).meta.total
    const pendingBefore = (await listOf("/v2/webhooks/deliveries", { status: "pending", endpointId: "wep_list0", limit: 1 })).meta.total
    await engine.run(Effect.flatMap(Store.Store, (store) => Effect.orDie(store.update(Deliveries.WebhookDeliveries, deliveryOf({ ...moved, status: "pending" })))))
    const failed = await listOf("/v2/webhooks/deliveries", { status: "failed", endpointId: "wep_list0", limit: 100 })
    const pending = await listOf("/v2/webhooks/deliveries", { status: "pending", endpointId: "wep_list0", limit: 100 })
    expect(failed.meta.total).toBe(failedBefore - 1)
    expect(pending.meta.total).toBe(pendingBefore + 1)
    expect(failed.ids).not.toContain(moved.id)
    expect(pending.ids).toContain(moved.id)
  })
})

describe("deleted webhook endpoints are not listed", () => {
  it("with 3 live endpoints of 5, total is 3 and pages are full", async () => {
    const ids: Array<string> = []
    for (let i = 0; i < 5; i++) {
      const r = await call(engine, "/sandbox/v2/webhooks/endpoints", {
        key: A.sandbox,
        method: "POST",
        body: { url: `https://hooks.example.com/${i}` }
      })
      expect(r.status, r.text).toBe(201)
      ids.push(r.json.id)
      await engine.clock.advance(1000)
    }
    for (const id of [ids[1]!, ids[3]!]) {
      const r = await call(engine, `/sandbox/v2/webhooks/endpoints/${id}`, { key: A.sandbox, method: "DELETE" })
      expect(r.status).toBe(204)
    }
    const live = [ids[4]!, ids[2]!, ids[0]!]
    await walkBothWays("/v2/webhooks/endpoints", {}, 2, live)
    await walkBothWays("/v2/webhooks/endpoints", {}, 1, live)
    await walkBothWays("/v2/webhooks/endpoints", { sortOrder: "asc" }, 2, [...live].reverse())
  })
})

/** Inserts applications of org_a's sandbox straight into the store. */
const insertApplications = (rows: ReadonlyArray<{ id: string; type: "customer_onboarding" | "customer_update"; createdAt: string; updatedAt: string }>) =>
  engine.run(Effect.flatMap(Store.Store, (store) =>
    Effect.forEach(rows, (r) =>
      store.insert(Applications.Applications, {
        id: r.id,
        organizationId: "org_a",
        environment: "sandbox",
        type: r.type,
        status: "open",
        customerId: undefined,
        customerType: "business",
        country: "USA",
        clientReferenceId: undefined,
        houseAccount: false,
        asset: undefined,
        persons: [],
        submission: {},
        failureCode: undefined,
        failureMessage: undefined,
        resubmittable: undefined,
        cancelRequestedAt: undefined,
        decidedAt: undefined,
        ordinal: 0,
        createdAt: r.createdAt,
        updatedAt: r.updatedAt
      } as unknown as Applications.Application), { discard: true }).pipe(Effect.orDie)))

describe("applications filtered by applicationType", () => {
  const applications = Array.from({ length: 30 }, (_, i) => ({
    id: `app_l${((i * 11) % 30).toString().padStart(2, "0")}x${i}`,
    type: (i % 3 === 0 ? "customer_update" : "customer_onboarding") as "customer_onboarding" | "customer_update",
    createdAt: iso(base + i * 60_000),
    updatedAt: iso(base + 86_400_000 + ((i * 7) % 30) * 60_000)
  }))
  const expected = (type: string | undefined, sortBy: SortBy, sortOrder: SortOrder) => {
    const ids = applications
      .filter((a) => type === undefined || a.type === type)
      .sort((x, y) => (x[sortBy] < y[sortBy] ? -1 : x[sortBy] > y[sortBy] ? 1 : x.id < y.id ? -1 : 1))
      .map((a) => a.id)
    return sortOrder === "asc" ? ids : ids.reverse()
  }

  it.each([
    ["customer_onboarding", "createdAt", "desc"],
    ["customer_onboarding", "updatedAt", "desc"],
    ["customer_update", "updatedAt", "asc"],
    [undefined, "updatedAt", "asc"]
  ] as const)("type %s by %s %s pages exactly, in the sort asked for", async (applicationType, sortBy, sortOrder) => {
    await insertApplications(applications)
    await walkBothWays("/v2/applications", { applicationType, sortBy, sortOrder }, 4, expected(applicationType, sortBy, sortOrder))
  })
})

describe("cursors are bound to their list, filters and sort", () => {
  const refused = async (path: string, query: Record<string, string | number | undefined>, key = A.sandbox) => {
    const entries = Object.entries(query).filter((e): e is [string, string | number] => e[1] !== undefined)
    const qs = new URLSearchParams(entries.map(([k, v]) => [k, String(v)])).toString()
    const r = await call(engine, `/sandbox${path}?${qs}`, { key })
    return expectProblem(r, { type: "INVALID_CURSOR", status: 400, instance: `/sandbox${path}`, nowMs: START_MS })
  }

  beforeEach(async () => {
    await insertDeliveries(deliveryRows.slice(0, 60))
    await insertApplications(Array.from({ length: 5 }, (_, i) => ({
      id: `app_c${i}`,
      type: i % 2 === 0 ? "customer_onboarding" : "customer_update",
      createdAt: iso(base + i * 1000),
      updatedAt: iso(base + i * 1000)
    })))
    for (let i = 0; i < 3; i++) {
      const r = await call(engine, "/sandbox/v2/webhooks/endpoints", { key: A.sandbox, method: "POST", body: { url: `https://hooks.example.com/${i}` } })
      expect(r.status, r.text).toBe(201)
    }
  })

  it("a cursor of one list is refused on every other list", async () => {
    const cursors = {
      "/v2/customers": (await listOf("/v2/customers", { limit: 1 })).meta.nextCursor!,
      "/v2/applications": (await listOf("/v2/applications", { limit: 1 })).meta.nextCursor!,
      "/v2/webhooks/endpoints": (await listOf("/v2/webhooks/endpoints", { limit: 1 })).meta.nextCursor!,
      "/v2/webhooks/deliveries": (await listOf("/v2/webhooks/deliveries", { limit: 1 })).meta.nextCursor!
    }
    for (const [from, cursor] of Object.entries(cursors)) {
      expect(cursor, from).toBeTypeOf("string")
      // Each list takes its own cursor...
      expect((await listOf(from, { limit: 1, cursor })).ids).toHaveLength(1)
      // ...and refuses every other's.
      for (const to of Object.keys(cursors)) if (to !== from) await refused(to, { limit: 1, cursor })
    }
  })

  it("a delivery cursor is refused with other filters: another value, one more, one fewer", async () => {
    const filtered = await listOf("/v2/webhooks/deliveries", { endpointId: "wep_list0", status: "failed", limit: 2 })
    const cursor = filtered.meta.nextCursor!
    expect(cursor).toBeTypeOf("string")
    expect((await listOf("/v2/webhooks/deliveries", { endpointId: "wep_list0", status: "FAILED", limit: 2, cursor })).ids).toHaveLength(2)
    await refused("/v2/webhooks/deliveries", { endpointId: "wep_list1", status: "failed", cursor })
    await refused("/v2/webhooks/deliveries", { endpointId: "wep_list0", status: "pending", cursor })
    await refused("/v2/webhooks/deliveries", { endpointId: "wep_list0", cursor })
    await refused("/v2/webhooks/deliveries", { status: "failed", cursor })
    await refused("/v2/webhooks/deliveries", { cursor })
    await refused("/v2/webhooks/deliveries", { endpointId: "wep_list0", status: "failed", eventType: "customer.created", cursor })
    // A previousCursor is bound the same way.
    const second = await listOf("/v2/webhooks/deliveries", { endpointId: "wep_list0", status: "failed", limit: 2, cursor })
    await refused("/v2/webhooks/deliveries", { endpointId: "wep_list0", direction: "backward", cursor: second.meta.previousCursor! })
  })

  it("an applications cursor is refused with another applicationType or without one", async () => {
    const typed = await listOf("/v2/applications", { applicationType: "customer_onboarding", limit: 1 })
    const cursor = typed.meta.nextCursor!
    await refused("/v2/applications", { applicationType: "customer_update", cursor })
    await refused("/v2/applications", { cursor })
    const untyped = (await listOf("/v2/applications", { limit: 1 })).meta.nextCursor!
    await refused("/v2/applications", { applicationType: "customer_onboarding", cursor: untyped })
  })

  it("a cursor is refused under another sort, on any list, with a detail that names the sort it was issued under", async () => {
    const deliveries = (await listOf("/v2/webhooks/deliveries", { status: "pending", limit: 1 })).meta.nextCursor!
    const order = await refused("/v2/webhooks/deliveries", { status: "pending", sortOrder: "asc", cursor: deliveries })
    expect(order.detail).toContain("another sort (sortBy createdAt, sortOrder desc)")
    const applications = (await listOf("/v2/applications", { limit: 1, sortBy: "updatedAt" })).meta.nextCursor!
    // The same list and filters, only another sortBy: the detail does not blame the list or the filters.
    const by = await refused("/v2/applications", { sortBy: "createdAt", cursor: applications })
    expect(by.detail).toContain("another sort (sortBy updatedAt, sortOrder desc)")
    expect(by.detail).not.toContain("another list or")
    // Under its own sort, on another list or with other filters, the detail says that.
    const other = await refused("/v2/applications", { sortBy: "updatedAt", applicationType: "customer_update", cursor: applications })
    expect(other.detail).toContain("another list or to other filters")
  })

  it("another organization's or environment's cursor is refused", async () => {
    const cursor = (await listOf("/v2/customers", { limit: 1 })).meta.nextCursor!
    await refused("/v2/customers", { cursor }, B.sandbox)
    const r = await call(engine, `/live/v2/customers?cursor=${cursor}`, { key: A.live })
    expectProblem(r, { type: "INVALID_CURSOR", status: 400, instance: "/live/v2/customers", nowMs: START_MS })
  })
})
