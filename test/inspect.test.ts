/**
 * The sandbox's inspection surface through the whole pipeline (engine.fetch) on a virtual clock: the pending timers
 * before and after advances, the event log per resource and type, an account's journal with running balances, and
 * the ledger audit (clean after a payout's life; every kind of corruption written straight into the store reported).
 */
import { rmSync } from "node:fs"
import { Ledger, Store, Timers, Transactions } from "@fos/core"
import { createEngine, type Engine } from "@fos/http"
import { layerPgliteStore } from "@fos/sql"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { approvedCustomer, type Client, clientOf, idem, twoOrganizationsPerTest } from "./onboardingFixtures.ts"
import { expectProblem, keysOf, orgSeed, seedOf, START_MS, makeEngine } from "./support.ts"
import { freshPgliteDirectory } from "../adapters/sql/test/pgliteDirectory.ts"

let engine: Engine
let acme: Client
let rival: Client

// Every event a test made is one the event catalog accepts.
twoOrganizationsPerTest({ set: (world) => ({ engine, acme, rival } = world), current: () => engine })

const now = async () => Date.parse((await acme.call("GET", "/v2/simulate/clock")).json.now)

/** An active USD virtual account holding 1000.00 (an RTP deposit, settled). */
const fundedAccount = async () => {
  const customerId = await approvedCustomer(acme)
  const applied = await acme.call("POST", `/v2/customers/${customerId}/features`, { type: "virtual_account", asset: { code: "USD" } }, idem())
  await acme.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
  await engine.clock.advance(30_000)
  const accountId = (await acme.call("GET", `/v2/customers/${customerId}/virtual-accounts`)).json.data[0].id as string
  const deposited = await acme.call("POST", "/v2/simulate/deposits", {
    destination: { type: "virtual_account", virtualAccountId: accountId },
    assetAmount: { code: "USD", amount: "1000.00" },
    rail: "rtp"
  })
  expect(deposited.status, deposited.text).toBe(201)
  await acme.call("POST", `/v2/simulate/transactions/${deposited.json.id}/settle`)
  return { customerId, accountId, depositId: deposited.json.id as string }
}

/** An ACH payout of 250.00 (fee 1.00) from a funded USD account. */
const achPayout = async () => {
  const funded = await fundedAccount()
  const recipient = await acme.call("POST", `/v2/customers/${funded.customerId}/whitelist-recipients`, {
    rail: "ach",
    name: "Ada Lovelace",
    address: { line1: "1 Main St", city: "New York", state: "NY", postalCode: "10001", country: "USA" },
    routingNumber: "021000021",
    accountNumber: "123456789"
  }, idem())
  expect(recipient.status, recipient.text).toBe(201)
  const created = await acme.call("POST", "/v2/payouts", {
    source: { type: "virtual_account", virtualAccountId: funded.accountId },
    destination: { type: "external_bank", whitelistRecipientId: recipient.json.id },
    amount: "250.00",
    purpose: "supplier_payment"
  }, idem())
  expect(created.status, created.text).toBe(201)
  return { ...funded, payoutId: created.json.id as string }
}

const timersOf = async (client: Client, resourceId: string) =>
  ((await client.call("GET", "/v2/simulate/timers?limit=100")).json.data as Array<any>).filter((t) => t.resourceId === resourceId)

describe("the pending timers", () => {
  it("show a payout's next deadline with what it will do, before and after each advance, to the caller alone", async () => {
    const { payoutId } = await achPayout()
    const createdAt = await now()
    const [start] = await timersOf(acme, payoutId)
    expect(start).toEqual({
      id: expect.stringMatching(/^tmr_/),
      kind: "payout.start",
      dueAt: new Date(createdAt + 2_000).toISOString(),
      resourceId: payoutId,
      action: `starts payout ${payoutId} (its screening ends: processing, or under_review)`
    })
    expect(await timersOf(rival, payoutId)).toEqual([])

    await engine.clock.advance(2_000)
    expect((await timersOf(acme, payoutId)).map((t) => [t.kind, t.action])).toEqual([["payout.send", `sends payout ${payoutId} on ach`]])
    await engine.clock.advance(2_000)
    // START_MS is a Sunday: ACH settles on Monday at 14:00 UTC, which is what the pending payout waits for.
    expect(await timersOf(acme, payoutId)).toEqual([{
      id: expect.stringMatching(/^tmr_/),
      kind: "payout.settle",
      dueAt: "2026-03-02T14:00:00.000Z",
      resourceId: payoutId,
      action: `settles payout ${payoutId} on ach (it completes)`
    }])
    await engine.clock.advanceTo("2026-03-02T14:00:00.000Z")
    expect(await timersOf(acme, payoutId)).toEqual([])
    expect((await acme.call("GET", `/v2/payouts/${payoutId}`)).json.status).toBe("completed")
  })

  it("are paged soonest first, and the list is the sandbox's alone", async () => {
    await achPayout()
    const all = (await acme.call("GET", "/v2/simulate/timers?limit=100")).json
    expect(all.data.length).toBeGreaterThan(1)
    expect(all.meta.total).toBe(all.data.length)
    const dues = all.data.map((t: any) => t.dueAt)
    expect([...dues].sort()).toEqual(dues)
    const first = (await acme.call("GET", "/v2/simulate/timers?limit=1")).json
    expect(first.data).toEqual([all.data[0]])
    const second = (await acme.call("GET", `/v2/simulate/timers?limit=1&cursor=${first.meta.nextCursor}`)).json
    expect(second.data).toEqual([all.data[1]])
    expectProblem(await acme.call("GET", "/v2/simulate/timers?limit=1000"), { type: "VALIDATION_ERROR", status: 400, instance: "/sandbox/v2/simulate/timers" })
    const live = clientOf(engine.fetch, "http://fos", keysOf("acme").live, "live")
    expect((await live.call("GET", "/v2/simulate/timers")).status).toBe(404)
  })

  it("leave the engine's housekeeping out unless housekeeping=true, with full pages and totals either way", async () => {
    await achPayout()
    const list = async (query: string) => (await acme.call("GET", `/v2/simulate/timers?${query}`)).json
    const world = await list("limit=100")
    const everything = await list("limit=100&housekeeping=true")
    // The keyed requests left their keys' retention timers, 30 days out: housekeeping, not the tester's world.
    const housekeeping = everything.data.filter((t: any) => t.kind === "idempotency.expire")
    expect(housekeeping.length).toBeGreaterThan(0)
    expect(world.data.some((t: any) => t.kind === "idempotency.expire")).toBe(false)
    expect(world.data).toEqual(everything.data.filter((t: any) => t.kind !== "idempotency.expire"))
    expect(world.data.length).toBeGreaterThan(1)
    expect(world.meta.total).toBe(world.data.length)
    expect(everything.meta.total).toBe(everything.data.length)
    expect((await list("housekeeping=false&limit=100")).data).toEqual(world.data)
    // Paged one at a time, each mode gives its own list in order, every page full.
    for (const [query, expected] of [["", world.data], ["&housekeeping=true", everything.data]] as const) {
      const walked: Array<unknown> = []
      let cursor: string | null = null
      do {
        const page: any = await list(`limit=1${query}${cursor === null ? "" : `&cursor=${cursor}`}`)
        expect(page.data.length).toBe(1)
        expect(page.meta.total).toBe(expected.length)
        walked.push(...page.data)
        cursor = page.meta.nextCursor
      } while (cursor !== null)
      expect(walked).toEqual(expected)
    }
    expectProblem(await acme.call("GET", "/v2/simulate/timers?housekeeping=maybe"), { type: "VALIDATION_ERROR", status: 400, instance: "/sandbox/v2/simulate/timers" })
  })
})

describe("the event log", () => {
  it("lists every event emitted for a resource, with no webhook endpoint subscribed, filtered by type too", async () => {
    const { payoutId, accountId } = await achPayout()
    await engine.clock.advanceTo("2026-03-02T14:00:00.000Z")
    const log = (await acme.call("GET", `/v2/simulate/events?resourceId=${payoutId}`)).json
    expect(log.data.map((e: any) => e.type)).toEqual(["transaction.created", "transaction.processing", "transaction.completed"])
    expect(log.meta.total).toBe(3)
    for (const e of log.data) {
      expect(e).toMatchObject({ id: expect.stringMatching(/^evt_/), apiVersion: "2", mode: "sandbox", resourceId: payoutId, data: { transactionId: payoutId } })
    }
    expect((await acme.call("GET", `/v2/simulate/events?resourceId=${payoutId}&type=transaction.completed`)).json.data.map((e: any) => e.id))
      .toEqual([log.data[2].id])
    const activated = (await acme.call("GET", "/v2/simulate/events?type=virtual_account.activated")).json.data
    expect(activated.map((e: any) => e.resourceId)).toEqual([accountId])
    // Newest first, paged.
    const newest = (await acme.call("GET", `/v2/simulate/events?resourceId=${payoutId}&sortOrder=desc&limit=2`)).json
    expect(newest.data.map((e: any) => e.type)).toEqual(["transaction.completed", "transaction.processing"])
    const rest = (await acme.call("GET", `/v2/simulate/events?resourceId=${payoutId}&sortOrder=desc&limit=2&cursor=${newest.meta.nextCursor}`)).json
    expect(rest.data.map((e: any) => e.type)).toEqual(["transaction.created"])
    // A cursor of another filter is refused; another organization sees nothing of acme's.
    expectProblem(await acme.call("GET", `/v2/simulate/events?type=transaction.created&sortOrder=desc&limit=2&cursor=${newest.meta.nextCursor}`), {
      type: "INVALID_CURSOR",
      status: 400,
      instance: "/sandbox/v2/simulate/events"
    })
    expect((await rival.call("GET", `/v2/simulate/events?resourceId=${payoutId}`)).json).toEqual({
      data: [],
      meta: { mode: "cursor", nextCursor: null, previousCursor: null, total: 0 }
    })
    const everything = (await acme.call("GET", "/v2/simulate/events?limit=100")).json
    expect(everything.data.map((e: any) => e.id)).toEqual(expect.arrayContaining(log.data.map((e: any) => e.id)))
  })
})

describe("the ledger", () => {
  it("journals an account's transfers with its balance after each, the same paged or not", async () => {
    const { accountId, depositId, payoutId } = await achPayout()
    await engine.clock.advanceTo("2026-03-02T14:00:00.000Z")
    const journal = (await acme.call("GET", `/v2/simulate/ledger/accounts/${accountId}/journal?limit=100`)).json
    expect(journal.account).toEqual({
      id: `virtual_account/${accountId}/USD`,
      holderType: "virtual_account",
      holderId: accountId,
      asset: "USD",
      balance: { posted: "749.00", available: "749.00", pending: "0.00", incoming: "0.00" }
    })
    expect(journal.data.map((e: any) => [e.kind, e.side, e.amount, e.transactionId, e.balance.available, e.balance.pending, e.balance.incoming])).toEqual([
      ["pending", "credit", "1000.00", depositId, "0.00", "0.00", "1000.00"],
      ["post", "credit", "1000.00", depositId, "1000.00", "0.00", "0.00"],
      ["pending", "debit", "250.00", payoutId, "750.00", "250.00", "0.00"],
      ["pending", "debit", "1.00", payoutId, "749.00", "251.00", "0.00"],
      ["post", "debit", "250.00", payoutId, "749.00", "1.00", "0.00"],
      ["post", "debit", "1.00", payoutId, "749.00", "0.00", "0.00"]
    ])
    expect(journal.meta).toEqual({ mode: "cursor", nextCursor: null, previousCursor: null, total: 6 })
    // Page by page, the running balance carries over.
    const paged: Array<unknown> = []
    let cursor: string | null = null
    do {
      const page: any = (await acme.call("GET", `/v2/simulate/ledger/accounts/${accountId}/journal?limit=4${cursor === null ? "" : `&cursor=${cursor}`}`)).json
      paged.push(...page.data)
      cursor = page.meta.nextCursor
    } while (cursor !== null)
    expect(paged).toEqual(journal.data)
    expectProblem(await acme.call("GET", `/v2/simulate/ledger/accounts/${accountId}/journal?cursor=bogus`), {
      type: "INVALID_CURSOR",
      status: 400,
      instance: `/sandbox/v2/simulate/ledger/accounts/${accountId}/journal`
    })
    expect((await rival.call("GET", `/v2/simulate/ledger/accounts/${accountId}/journal`)).status).toBe(404)
  })

  it("audits clean after a payout's life", async () => {
    await achPayout()
    const pending = (await acme.call("GET", "/v2/simulate/ledger/audit")).json
    expect(pending).toMatchObject({ clean: true, violations: [], violationCount: 0 })
    await engine.clock.advanceTo("2026-03-02T14:00:00.000Z")
    const audit = (await acme.call("GET", "/v2/simulate/ledger/audit")).json
    expect(audit).toEqual({
      clean: true,
      checkedAt: "2026-03-02T14:00:00.000Z",
      scanned: { accounts: expect.any(Number), transfers: 6, transactions: 2, assets: 1 },
      checks: [
        { name: "zero_sum", description: expect.any(String), violations: 0 },
        { name: "no_negative_customer_account", description: expect.any(String), violations: 0 },
        { name: "totals_match_transfers", description: expect.any(String), violations: 0 },
        { name: "holds_match_transactions", description: expect.any(String), violations: 0 }
      ],
      violations: [],
      violationCount: 0
    })
  })

  it("reports every corruption written straight into the store", async () => {
    const { accountId, payoutId } = await achPayout()
    const accountKey = `org_acme/sandbox/virtual_account/${accountId}/USD`
    await engine.run(Effect.gen(function*() {
      const store = yield* Store.Store
      const account = (yield* store.get(Ledger.LedgerAccounts, accountKey))!
      // Money from nowhere, and more spent than the account ever had.
      yield* Effect.orDie(store.update(Ledger.LedgerAccounts, { ...account, creditsPosted: "100100", debitsPosted: "500000" }))
      const payout = (yield* store.get(Transactions.Transactions, payoutId))!
      // The payout ended while its holds are still pending.
      yield* Effect.orDie(store.update(Transactions.Transactions, { ...payout, status: "completed" }))
    }))
    const audit = (await acme.call("GET", "/v2/simulate/ledger/audit")).json
    expect(audit.clean).toBe(false)
    expect(Object.fromEntries(audit.checks.map((c: any) => [c.name, c.violations]))).toEqual({
      zero_sum: 1,
      no_negative_customer_account: 1,
      totals_match_transfers: 1,
      holds_match_transactions: 2
    })
    expect(audit.violationCount).toBe(5)
    expect(audit.violations).toEqual(expect.arrayContaining([
      expect.objectContaining({ check: "zero_sum", asset: "USD" }),
      expect.objectContaining({ check: "no_negative_customer_account", accountId: `virtual_account/${accountId}/USD` }),
      expect.objectContaining({ check: "totals_match_transfers", accountId: `virtual_account/${accountId}/USD` }),
      expect.objectContaining({ check: "holds_match_transactions", transactionId: payoutId, transferId: `${payoutId}/payout` }),
      expect.objectContaining({ check: "holds_match_transactions", transactionId: payoutId, transferId: `${payoutId}/fee` })
    ]))
    // Another organization's ledger is its own.
    expect((await rival.call("GET", "/v2/simulate/ledger/audit")).json.clean).toBe(true)
  })
})

describe("on PGlite", () => {
  it("the timers, the event log, the journal and the audit read the same from SQL", async () => {
    await engine.close()
    const dir = await freshPgliteDirectory("inspect")
    engine = await createEngine({
      store: layerPgliteStore(dir),
      clock: { mode: "virtual", start: START_MS },
      realClock: Timers.makeVirtualClock(START_MS),
      seed: seedOf(orgSeed("acme"), orgSeed("rival")) as never
    })
    acme = clientOf(engine.fetch, "http://fos", keysOf("acme").sandbox)
    try {
      const { payoutId, accountId } = await achPayout()
      expect((await timersOf(acme, payoutId)).map((t) => t.kind)).toEqual(["payout.start"])
      await engine.clock.advanceTo("2026-03-02T14:00:00.000Z")
      expect(await timersOf(acme, payoutId)).toEqual([])
      const log = (await acme.call("GET", `/v2/simulate/events?resourceId=${payoutId}`)).json
      expect(log.data.map((e: any) => e.type)).toEqual(["transaction.created", "transaction.processing", "transaction.completed"])
      expect(log.meta.total).toBe(3)
      const journal = (await acme.call("GET", `/v2/simulate/ledger/accounts/${accountId}/journal?limit=4`)).json
      expect(journal.meta.total).toBe(6)
      expect(journal.data.at(-1).balance).toEqual({ posted: "1000.00", available: "749.00", pending: "251.00", incoming: "0.00" })
      expect((await acme.call("GET", "/v2/simulate/ledger/audit")).json).toMatchObject({ clean: true, violationCount: 0, scanned: { transfers: 6 } })
    } finally {
      await engine.close()
      rmSync(dir, { recursive: true, force: true })
      // What afterEach closes.
      engine = await makeEngine(seedOf(orgSeed("acme")))
    }
  }, 180_000)
})
