/**
 * Scripted outcomes (docs/outcomes.md) through the whole pipeline (engine.fetch) on a virtual
 * clock: one test per outcome a rule scripts (an ACH payout returned R01 two days after completion,
 * chain_broadcast_failed at a crypto payout's broadcast, insufficient_funds_at_settle on a payout and on a deposit, a
 * compliance hold), each ending with the spec's events, their `sequence` and failure fields, the balances back where
 * the spec says, the rule showing what it applied to, and the ledger audit clean; then the matchers, the bounds and
 * bad input (nothing changed), and the isolation of organizations.
 */
import { rmSync } from "node:fs"
import { TransactionFailureMessages } from "@fos/contract"
import { Timers } from "@fos/core"
import { createEngine, type Engine } from "@fos/http"
import { layerPgliteStore } from "@fos/sql"
import { describe, expect, it } from "vitest"
import { approvedCustomer, type Client, clientOf, idem, twoOrganizationsPerTest } from "./onboardingFixtures.ts"
import { expectProblem, keysOf, orgSeed, seedOf, START_MS } from "./support.ts"
import { freshPgliteDirectory } from "../adapters/sql/test/pgliteDirectory.ts"

let engine: Engine
let acme: Client
let rival: Client

// Every event a test made is one the event catalog accepts.
twoOrganizationsPerTest({ set: (world) => ({ engine, acme, rival } = world), current: () => engine })

const advance = (ms: number) => engine.clock.advance(ms)
const iso = (ms: number) => new Date(ms).toISOString()
const now = async (client: Client = acme) => Date.parse((await client.call("GET", "/v2/simulate/clock")).json.now)

const addRule = async (body: unknown, client: Client = acme) => {
  const r = await client.call("POST", "/v2/simulate/outcomes", body)
  expect(r.status, r.text).toBe(201)
  return r.json
}
const rules = async (client: Client = acme) => (await client.call("GET", "/v2/simulate/outcomes?limit=100")).json.data as Array<any>

/** An active USD virtual account of a new customer, holding `funds` (an RTP deposit, settled by a simulate call). */
const fundedAccount = async (funds = "1000.00", client: Client = acme) => {
  const customerId = await approvedCustomer(client)
  const applied = await client.call("POST", `/v2/customers/${customerId}/features`, { type: "virtual_account", asset: { code: "USD" } }, idem())
  await client.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
  await advance(30_000)
  const accountId = (await client.call("GET", `/v2/customers/${customerId}/virtual-accounts`)).json.data[0].id as string
  const deposited = await client.call("POST", "/v2/simulate/deposits", {
    destination: { type: "virtual_account", virtualAccountId: accountId },
    assetAmount: { code: "USD", amount: funds },
    rail: "rtp"
  })
  expect(deposited.status, deposited.text).toBe(201)
  await client.call("POST", `/v2/simulate/transactions/${deposited.json.id}/settle`)
  return { customerId, accountId }
}

/** A whitelisted ACH recipient of the customer. */
const achRecipient = async (customerId: string, client: Client = acme) => {
  const r = await client.call("POST", `/v2/customers/${customerId}/whitelist-recipients`, {
    rail: "ach",
    name: "Ada Lovelace",
    address: { line1: "1 Main St", city: "New York", state: "NY", postalCode: "10001", country: "USA" },
    routingNumber: "021000021",
    accountNumber: "123456789"
  }, idem())
  expect(r.status, r.text).toBe(201)
  return r.json.id as string
}

/** An ACH payout of `amount` (fee 1.00) from the account to the recipient. */
const achPayout = async (accountId: string, recipientId: string, amount = "250.00", extra: Record<string, unknown> = {}, client: Client = acme) => {
  const created = await client.call("POST", "/v2/payouts", {
    source: { type: "virtual_account", virtualAccountId: accountId },
    destination: { type: "external_bank", whitelistRecipientId: recipientId },
    amount,
    purpose: "supplier_payment",
    ...extra
  }, idem())
  expect(created.status, created.text).toBe(201)
  return created.json
}

/** A custodial wallet on base of a new customer, holding `funds` USDC. */
const fundedWallet = async (funds: string) => {
  const customerId = await approvedCustomer(acme)
  const applied = await acme.call("POST", `/v2/customers/${customerId}/features`, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } }, idem())
  await acme.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
  const wallet = await acme.call("POST", `/v2/customers/${customerId}/wallets`, { chain: "base" }, idem())
  expect(wallet.status, wallet.text).toBe(201)
  const deposited = await acme.call("POST", "/v2/simulate/deposits", {
    destination: { type: "wallet", walletId: wallet.json.id },
    assetAmount: { code: "USDC", amount: funds, chain: "base" }
  })
  await acme.call("POST", `/v2/simulate/transactions/${deposited.json.id}/settle`)
  return { customerId, walletId: wallet.json.id as string }
}

const balances = async (holderId: string, client: Client = acme) =>
  (await client.call("GET", holderId.startsWith("wlt_") ? `/v2/wallets/${holderId}` : `/v2/virtual-accounts/${holderId}`)).json.balances

const read = async (id: string, client: Client = acme) => (await client.call("GET", `/v2/transactions/${id}`)).json

/** The status events of a transaction, from the sandbox's event log: type, sequence and data. */
const statusEvents = async (id: string, client: Client = acme) =>
  ((await client.call("GET", `/v2/simulate/events?resourceId=${id}&limit=100`)).json.data as Array<any>)
    .filter((e) => e.type.startsWith("transaction."))
    .map((e) => ({ type: e.type as string, sequence: e.data.sequence as number | undefined, data: e.data }))

const expectCleanAudit = async (client: Client = acme) => {
  const audit = (await client.call("GET", "/v2/simulate/ledger/audit")).json
  expect(audit.violations).toEqual([])
  expect(audit.clean).toBe(true)
}

// START_MS is Sunday 2026-03-01 12:00 UTC: ACH settles on Monday at 14:00 UTC.
const achSettlement = "2026-03-02T14:00:00.000Z"

describe("an ACH payout returned with a Nacha code after completion", () => {
  it("completes, then fails R01 two days later on a durable timer, with the principal back and the rule showing it", async () => {
    const { customerId, accountId } = await fundedAccount()
    const recipientId = await achRecipient(customerId)
    const rule = await addRule({
      match: { type: "withdrawal", rail: "ach", customerId },
      outcome: { type: "return", returnCode: "R01", afterSeconds: 172_800 },
      count: 1
    })
    expect(rule).toEqual({
      id: expect.stringMatching(/^otr_[0-9a-z]+$/),
      match: { type: "withdrawal", rail: "ach", customerId },
      outcome: { type: "return", returnCode: "R01", afterSeconds: 172_800 },
      count: 1,
      remaining: 1,
      applied: 0,
      transactionIds: [],
      createdAt: iso(await now())
    })
    const payout = await achPayout(accountId, recipientId)
    await engine.clock.advanceTo(achSettlement)
    const completed = await read(payout.id)
    expect(completed.status).toBe("completed")
    expect(completed).not.toHaveProperty("failureCode")
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "749.00", pending: "0.00" }])
    // The return waits on a timer the tester can see, due two days after completion.
    const timers = ((await acme.call("GET", "/v2/simulate/timers?limit=100")).json.data as Array<any>).filter((t) => t.resourceId === payout.id)
    expect(timers).toEqual([{
      id: expect.stringMatching(/^tmr_/),
      kind: "payout.scripted_return",
      dueAt: "2026-03-04T14:00:00.000Z",
      resourceId: payout.id,
      action: `returns payout ${payout.id} on ach with R01 (an outcome rule scripted it; it fails with returned_by_sender)`
    }])
    expect((await rules())[0]).toMatchObject({ id: rule.id, remaining: 0, applied: 1, transactionIds: [payout.id] })

    await advance(172_800_000 - 1)
    expect((await read(payout.id)).status).toBe("completed")
    await advance(1)
    const returned = await read(payout.id)
    expect(returned).toMatchObject({
      status: "failed",
      failureCode: "returned_by_sender",
      failureMessage: TransactionFailureMessages.returned_by_sender,
      returnedAt: "2026-03-04T14:00:00.000Z",
      returnReason: "Insufficient funds",
      returnCode: "R01"
    })
    // The principal comes back; the fee stays with the service.
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "999.00", pending: "0.00" }])
    const events = await statusEvents(payout.id)
    expect(events.map((e) => [e.type, e.sequence])).toEqual([
      ["transaction.created", 1],
      ["transaction.processing", 2],
      ["transaction.completed", 3],
      ["transaction.failed", 4]
    ])
    expect(events[3]!.data).toMatchObject({
      status: "failed",
      reasonCode: "returned_by_sender",
      reasonMessage: TransactionFailureMessages.returned_by_sender,
      failureCode: "returned_by_sender",
      failureMessage: TransactionFailureMessages.returned_by_sender,
      returnedAt: "2026-03-04T14:00:00.000Z",
      returnReason: "Insufficient funds",
      returnCode: "R01",
      occurredAt: "2026-03-04T14:00:00.000Z"
    })
    await expectCleanAudit()
  })
})

describe("chain_broadcast_failed", () => {
  it("fails a crypto payout at its broadcast: no hash, nothing left the wallet", async () => {
    const { walletId } = await fundedWallet("500")
    const rule = await addRule({ match: { chain: "base" }, outcome: { type: "fail", failureCode: "chain_broadcast_failed" } })
    const created = await acme.call("POST", "/v2/payouts", {
      source: { type: "wallet", walletId },
      destination: { type: "external_crypto", chain: "base", address: "0x52908400098527886e0f7030069857d2e4169ee7" },
      asset: "USDC",
      amount: "120.5",
      purpose: "treasury_transfer",
      clientReferenceId: "broadcast-1"
    }, idem())
    expect(created.status, created.text).toBe(201)
    const createdAt = await now()
    expect(await balances(walletId)).toEqual([{ code: "USDC", chain: "base", available: "379.000000", pending: "121.000000" }])
    await advance(4_000)
    const failed = await read(created.json.id)
    expect(failed).toMatchObject({ status: "failed", failureCode: "chain_broadcast_failed", failureMessage: TransactionFailureMessages.chain_broadcast_failed })
    expect(failed.destination).not.toHaveProperty("txHash")
    expect(await balances(walletId)).toEqual([{ code: "USDC", chain: "base", available: "500.000000", pending: "0.000000" }])
    const events = await statusEvents(created.json.id)
    expect(events.map((e) => [e.type, e.sequence, e.data.occurredAt])).toEqual([
      ["transaction.created", 1, iso(createdAt)],
      ["transaction.processing", 2, iso(createdAt + 2_000)],
      ["transaction.failed", 3, iso(createdAt + 4_000)]
    ])
    expect(events[2]!.data).toMatchObject({
      status: "failed",
      reasonCode: "chain_broadcast_failed",
      failureCode: "chain_broadcast_failed",
      failureMessage: TransactionFailureMessages.chain_broadcast_failed,
      clientReferenceId: "broadcast-1"
    })
    expect(events[2]!.data).not.toHaveProperty("returnCode")
    // Without a count it applies until deleted.
    expect((await rules())[0]).toMatchObject({ id: rule.id, applied: 1, transactionIds: [created.json.id] })
    expect((await rules())[0]).not.toHaveProperty("remaining")
    await expectCleanAudit()
  })
})

describe("insufficient_funds_at_settle", () => {
  it("fails an ACH payout at its settlement, releasing the reservation", async () => {
    const { customerId, accountId } = await fundedAccount()
    const recipientId = await achRecipient(customerId)
    await addRule({ match: { rail: "ach", minAmount: "100", maxAmount: "300.00" }, outcome: { type: "fail", failureCode: "insufficient_funds_at_settle" }, count: 1 })
    const payout = await achPayout(accountId, recipientId)
    await advance(4_000)
    expect(await read(payout.id)).toMatchObject({ status: "processing", destination: { achTraceNumber: expect.any(String) } })
    await engine.clock.advanceTo(achSettlement)
    expect(await read(payout.id)).toMatchObject({
      status: "failed",
      failureCode: "insufficient_funds_at_settle",
      failureMessage: TransactionFailureMessages.insufficient_funds_at_settle
    })
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "1000.00", pending: "0.00" }])
    const events = await statusEvents(payout.id)
    expect(events.map((e) => [e.type, e.sequence])).toEqual([["transaction.created", 1], ["transaction.processing", 2], ["transaction.failed", 3]])
    expect(events[2]!.data).toMatchObject({ reasonCode: "insufficient_funds_at_settle", failureCode: "insufficient_funds_at_settle", occurredAt: achSettlement })
    // Spent: the next payout completes.
    const next = await achPayout(accountId, recipientId)
    await engine.clock.advanceTo("2026-03-03T14:00:00.000Z")
    expect((await read(next.id)).status).toBe("completed")
    await expectCleanAudit()
  })

  it("fails a deposit at its settlement, crediting nothing, matched by its amount", async () => {
    const { accountId } = await fundedAccount()
    const rule = await addRule({ match: { type: "deposit", amount: "75.5" }, outcome: { type: "fail", failureCode: "insufficient_funds_at_settle" }, count: 2 })
    const deposit = async (amount: string) => {
      const r = await acme.call("POST", "/v2/simulate/deposits", { destination: { type: "virtual_account", virtualAccountId: accountId }, assetAmount: { code: "USD", amount }, rail: "ach" })
      expect(r.status, r.text).toBe(201)
      return r.json.id as string
    }
    const bounced = await deposit("75.50")
    const credited = await deposit("80.00")
    await engine.clock.advanceTo(achSettlement)
    expect(await read(bounced)).toMatchObject({ status: "failed", failureCode: "insufficient_funds_at_settle" })
    expect((await read(credited)).status).toBe("completed")
    expect((await statusEvents(bounced)).map((e) => [e.type, e.sequence])).toEqual([
      ["transaction.created", 1],
      ["transaction.processing", 2],
      ["transaction.failed", 3]
    ])
    // What the credited deposit brought, less the ACH inbound fee; the bounced one nothing.
    const [balance] = await balances(accountId)
    expect(balance.pending).toBe("0.00")
    expect(Number(balance.available)).toBeGreaterThan(1000)
    expect(Number(balance.available)).toBeLessThanOrEqual(1080)
    expect((await rules()).find((r) => r.id === rule.id)).toMatchObject({ applied: 1, remaining: 1, transactionIds: [bounced] })
    await expectCleanAudit()
  })
})

describe("a compliance hold", () => {
  it("puts the next payout of the customer in review as it opens, and keeps it there until the tester decides", async () => {
    const { customerId, accountId } = await fundedAccount()
    const recipientId = await achRecipient(customerId)
    // The first payout to a recipient is not reviewed by the world model's rules: the hold is the rule's.
    await addRule({ match: { customerId, clientReferenceId: "held-1" }, outcome: { type: "review" }, count: 1 })
    const held = await achPayout(accountId, recipientId, "100.00", { clientReferenceId: "held-1" })
    expect(held).toMatchObject({ status: "pending", stage: "under_review" })
    const events = await statusEvents(held.id)
    expect(events.map((e) => [e.type, e.sequence])).toEqual([["transaction.created", 1], ["transaction.under_review", 2]])
    // Born in review, as the world model's own reviews are: only transaction.created carries the stage.
    expect(events[0]!.data.stage).toBe("under_review")
    expect(events[1]!.data).not.toHaveProperty("stage")
    // A week later it still waits: no review end on the clock.
    await advance(7 * 24 * 3600_000)
    expect(await read(held.id)).toMatchObject({ status: "pending", stage: "under_review" })
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "899.00", pending: "101.00" }])
    // Cleared as a reviewer would: it goes on to completion.
    const cleared = await acme.call("POST", `/v2/simulate/transactions/${held.id}/review`, { action: "clear" })
    expect(cleared.status, cleared.text).toBe(200)
    await advance(7 * 24 * 3600_000)
    expect((await read(held.id)).status).toBe("completed")
    expect((await statusEvents(held.id)).map((e) => [e.type, e.sequence])).toEqual([
      ["transaction.created", 1],
      ["transaction.under_review", 2],
      ["transaction.processing", 3],
      ["transaction.completed", 4]
    ])
    await expectCleanAudit()
  })

  it("ends as the reviewer rejects it: transaction.rejected, the reservation released", async () => {
    const { customerId, accountId } = await fundedAccount()
    const recipientId = await achRecipient(customerId)
    await addRule({ match: { type: "withdrawal" }, outcome: { type: "review" }, count: 1 })
    const held = await achPayout(accountId, recipientId, "100.00")
    const rejected = await acme.call("POST", `/v2/simulate/transactions/${held.id}/review`, { action: "reject" })
    expect(rejected.status, rejected.text).toBe(200)
    expect(await read(held.id)).toMatchObject({ status: "failed", failureCode: "compliance_rejected" })
    expect((await statusEvents(held.id)).map((e) => [e.type, e.sequence])).toEqual([
      ["transaction.created", 1],
      ["transaction.under_review", 2],
      ["transaction.rejected", 3]
    ])
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "1000.00", pending: "0.00" }])
    await expectCleanAudit()
  })
})

describe("an order's conversion leg", () => {
  it("fails at settlement through its order: the leg with rail_unavailable, the order with provider_unavailable", async () => {
    const { customerId, accountId } = await fundedAccount("100.00")
    const applied = await acme.call("POST", `/v2/customers/${customerId}/features`, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } }, idem())
    await acme.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
    const wallet = await acme.call("POST", `/v2/customers/${customerId}/wallets`, { chain: "base" }, idem())
    expect(wallet.status, wallet.text).toBe(201)
    // START_MS is a Sunday, when the foreign-exchange market is closed: the order is made on Monday morning.
    await engine.clock.advanceTo("2026-03-02T09:00:00.000Z")
    const rule = await addRule({ match: { type: "onramp", customerId }, outcome: { type: "fail", failureCode: "rail_unavailable" }, count: 1 })
    const order = await acme.call("POST", "/v2/orders", {
      source: { type: "virtual_account", virtualAccountId: accountId },
      destination: { type: "wallet", walletId: wallet.json.id, asset: "USDC" },
      amount: "10",
      lockSide: "source"
    }, idem())
    expect(order.status, order.text).toBe(201)
    const executed = await acme.call("POST", `/v2/orders/${order.json.id}/execute`, undefined, idem())
    expect(executed.status, executed.text).toBe(200)
    const transactionId = executed.json.transactionId as string
    await advance(120_000)
    expect((await acme.call("GET", `/v2/orders/${order.json.id}`)).json).toMatchObject({ status: "failed", reasonCode: "provider_unavailable" })
    expect(await read(transactionId)).toMatchObject({ type: "onramp", status: "failed", failureCode: "rail_unavailable", failureMessage: TransactionFailureMessages.rail_unavailable })
    expect((await statusEvents(transactionId)).map((e) => [e.type, e.sequence])).toEqual([
      ["transaction.created", 1],
      ["transaction.processing", 2],
      ["transaction.failed", 3]
    ])
    const orderEvents = ((await acme.call("GET", `/v2/simulate/events?type=order.failed&limit=100`)).json.data as Array<any>).filter((e) => e.data.orderId === order.json.id)
    expect(orderEvents.map((e) => e.data.reasonCode)).toEqual(["provider_unavailable"])
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "100.00", pending: "0.00" }])
    expect((await rules())[0]).toMatchObject({ id: rule.id, applied: 1, remaining: 0, transactionIds: [transactionId] })
    await expectCleanAudit()
  })
})

describe("on a durable store (PGlite)", () => {
  it("keeps the rules in the store: one fails a deposit at settlement, is listed as applied, and a reset removes it", async () => {
    const dir = await freshPgliteDirectory("outcomes")
    const durable = await createEngine({
      clock: { mode: "virtual", start: START_MS },
      realClock: Timers.makeVirtualClock(START_MS),
      store: layerPgliteStore(dir),
      seed: seedOf(orgSeed("acme")) as never,
      webhookTransport: "memory"
    })
    try {
      const client = clientOf(durable.fetch, "http://fos", keysOf("acme").sandbox)
      const customerId = await approvedCustomer(client)
      const applied = await client.call("POST", `/v2/customers/${customerId}/features`, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } }, idem())
      await client.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
      const wallet = await client.call("POST", `/v2/customers/${customerId}/wallets`, { chain: "base" }, idem())
      const rule = await addRule({ match: { chain: "base", type: "deposit", maxAmount: "50" }, outcome: { type: "fail", failureCode: "provider_rejected" } }, client)
      const deposit = await client.call("POST", "/v2/simulate/deposits", { destination: { type: "wallet", walletId: wallet.json.id }, assetAmount: { code: "USDC", amount: "42", chain: "base" } })
      expect(deposit.status, deposit.text).toBe(201)
      await durable.clock.advance(120_000)
      expect((await client.call("GET", `/v2/transactions/${deposit.json.id}`)).json).toMatchObject({ status: "failed", failureCode: "provider_rejected" })
      expect((await rules(client))).toEqual([{ ...rule, applied: 1, transactionIds: [deposit.json.id] }])
      await expectCleanAudit(client)
      expect((await client.call("POST", "/v2/simulate/reset")).status).toBe(200)
      expect(await rules(client)).toEqual([])
    } finally {
      await durable.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})

describe("matching", () => {
  it("applies the oldest matching rule, by clientReferenceId, and only where its outcome is viable", async () => {
    const { customerId, accountId } = await fundedAccount()
    const recipientId = await achRecipient(customerId)
    // A chain code never meets a bank payout; a rule for another reference never meets this one.
    const chainOnly = await addRule({ match: {}, outcome: { type: "fail", failureCode: "chain_broadcast_failed" } })
    const other = await addRule({ match: { clientReferenceId: "other" }, outcome: { type: "fail", failureCode: "rail_unavailable", phase: "send" } })
    const first = await addRule({ match: { clientReferenceId: "pay-2" }, outcome: { type: "fail", failureCode: "rail_unavailable", phase: "send" }, count: 5 })
    const second = await addRule({ match: { clientReferenceId: "pay-2" }, outcome: { type: "fail", failureCode: "provider_rejected", phase: "send" }, count: 5 })
    const plain = await achPayout(accountId, recipientId, "10.00", { clientReferenceId: "pay-1" })
    const scripted = await achPayout(accountId, recipientId, "10.00", { clientReferenceId: "pay-2" })
    await advance(4_000)
    expect((await read(plain.id)).status).toBe("processing")
    expect(await read(scripted.id)).toMatchObject({ status: "failed", failureCode: "rail_unavailable" })
    const listed = await rules()
    expect(listed.map((r) => [r.id, r.applied])).toEqual([[chainOnly.id, 0], [other.id, 0], [first.id, 1], [second.id, 0]])
    await expectCleanAudit()
  })

  it("is the sandbox's own: another organization's rule never applies, and cannot be read or deleted", async () => {
    const { customerId, accountId } = await fundedAccount()
    const recipientId = await achRecipient(customerId)
    const theirs = await addRule({ match: {}, outcome: { type: "fail", failureCode: "insufficient_funds_at_settle" } }, rival)
    const payout = await achPayout(accountId, recipientId)
    await engine.clock.advanceTo(achSettlement)
    expect((await read(payout.id)).status).toBe("completed")
    expect(await rules()).toEqual([])
    expect(await rules(rival)).toEqual([{ ...theirs, applied: 0 }])
    expectProblem(await acme.call("DELETE", `/v2/simulate/outcomes/${theirs.id}`), { type: "NOT_FOUND", status: 404, instance: `/sandbox/v2/simulate/outcomes/${theirs.id}` })
    expect(await rules(rival)).toHaveLength(1)
    // Under /live the endpoints do not exist.
    const live = clientOf(engine.fetch, "http://fos", keysOf("acme").live, "live")
    expect((await live.call("POST", "/v2/simulate/outcomes", { match: {}, outcome: { type: "review" } })).status).toBe(404)
    expect((await live.call("GET", "/v2/simulate/outcomes")).status).toBe(404)
  })
})

describe("the rules' bounds and bad input", () => {
  const invalid = async (body: unknown, pointer: string) => {
    const p = expectProblem(await acme.call("POST", "/v2/simulate/outcomes", body), { type: "VALIDATION_ERROR", status: 400, instance: "/sandbox/v2/simulate/outcomes" })
    expect(p.errors.map((e: any) => e.pointer)).toContain(pointer)
  }

  it("refuses a rule that could never apply, or is malformed, changing nothing", async () => {
    const fail = (failureCode: string, phase?: string) => ({ type: "fail", failureCode, ...(phase === undefined ? {} : { phase }) })
    await invalid({ match: { rail: "ach", chain: "base" }, outcome: fail("provider_rejected") }, "/match/chain")
    await invalid({ match: { minAmount: "10", maxAmount: "9.99" }, outcome: fail("provider_rejected") }, "/match/maxAmount")
    await invalid({ match: { amount: "5", minAmount: "10" }, outcome: fail("provider_rejected") }, "/match/amount")
    await invalid({ match: { amount: "-5" }, outcome: fail("provider_rejected") }, "/match/amount")
    await invalid({ match: { type: "deposit_return" }, outcome: fail("provider_rejected") }, "/match/type")
    await invalid({ match: { type: "onramp" }, outcome: { type: "review" } }, "/outcome/type")
    await invalid({ match: { type: "offramp" }, outcome: fail("insufficient_funds_at_settle") }, "/outcome/failureCode")
    await invalid({ match: { type: "conversion" }, outcome: fail("provider_rejected", "send") }, "/outcome/phase")
    await invalid({ match: { customerId: "nope" }, outcome: fail("provider_rejected") }, "/match/customerId")
    await invalid({ match: {}, outcome: fail("compliance_rejected") }, "/outcome/failureCode")
    await invalid({ match: {}, outcome: fail("chain_broadcast_failed", "settle") }, "/outcome/phase")
    await invalid({ match: { rail: "ach" }, outcome: fail("chain_broadcast_failed") }, "/outcome/failureCode")
    await invalid({ match: {}, outcome: fail("insufficient_funds_at_settle", "send") }, "/outcome/phase")
    await invalid({ match: { type: "deposit" }, outcome: fail("rail_unavailable", "send") }, "/outcome/phase")
    await invalid({ match: { type: "deposit" }, outcome: { type: "review" } }, "/outcome/type")
    await invalid({ match: { chain: "base" }, outcome: { type: "return", returnCode: "R01", afterSeconds: 60 } }, "/outcome/type")
    await invalid({ match: { rail: "ach" }, outcome: { type: "return", returnCode: "AC04", afterSeconds: 60 } }, "/outcome/returnCode")
    await invalid({ match: {}, outcome: { type: "return", returnCode: "R01", afterSeconds: 90 * 86_400 + 1 } }, "/outcome/afterSeconds")
    await invalid({ match: {}, outcome: { type: "return", returnCode: "R01" } }, "/outcome/afterSeconds")
    await invalid({ match: {}, outcome: { type: "review" }, count: 0 }, "/count")
    await invalid({ match: {}, outcome: { type: "review" }, count: 1001 }, "/count")
    await invalid({ match: {}, outcome: { type: "review" }, count: 1.5 }, "/count")
    await invalid({ outcome: { type: "review" } }, "/match")
    expect(await rules()).toEqual([])
    expectProblem(await acme.call("DELETE", "/v2/simulate/outcomes/otr_missing"), { type: "NOT_FOUND", status: 404, instance: "/sandbox/v2/simulate/outcomes/otr_missing" })
    expect((await acme.call("DELETE", "/v2/simulate/outcomes/flt_abc")).status).toBe(400)
    expectProblem(await acme.call("GET", "/v2/simulate/outcomes?limit=101"), { type: "VALIDATION_ERROR", status: 400, instance: "/sandbox/v2/simulate/outcomes" })
  })

  it("holds at most 50 rules, paged oldest first, deleted one by one or all at once", async () => {
    const made: Array<string> = []
    for (let i = 0; i < 50; i++) made.push((await addRule({ match: { clientReferenceId: `ref-${i}` }, outcome: { type: "review" }, count: 1000 })).id)
    expectProblem(await acme.call("POST", "/v2/simulate/outcomes", { match: {}, outcome: { type: "review" } }), {
      type: "CONFLICT",
      status: 409,
      instance: "/sandbox/v2/simulate/outcomes"
    })
    const page = (await acme.call("GET", "/v2/simulate/outcomes?limit=20")).json
    expect(page.data.map((r: any) => r.id)).toEqual(made.slice(0, 20))
    expect(page.meta).toMatchObject({ total: 50, nextCursor: expect.any(String) })
    const next = (await acme.call("GET", `/v2/simulate/outcomes?limit=20&cursor=${page.meta.nextCursor}`)).json
    expect(next.data.map((r: any) => r.id)).toEqual(made.slice(20, 40))
    expect((await acme.call("DELETE", `/v2/simulate/outcomes/${made[0]}`)).status).toBe(204)
    expect((await acme.call("GET", "/v2/simulate/outcomes?limit=1")).json.meta.total).toBe(49)
    await addRule({ match: {}, outcome: { type: "review" } })
    const cleared = await acme.call("DELETE", "/v2/simulate/outcomes")
    expect(cleared.json).toEqual({ removed: 50 })
    expect(await rules()).toEqual([])
  })

  it("are sandbox state: a reset removes them, a snapshot brings them back", async () => {
    const rule = await addRule({ match: {}, outcome: { type: "review" }, count: 3 })
    const snapshot = await acme.call("POST", "/v2/simulate/snapshots")
    expect(snapshot.status, snapshot.text).toBe(201)
    expect((await acme.call("POST", "/v2/simulate/reset")).status).toBe(200)
    expect(await rules()).toEqual([])
    const restored = await acme.call("POST", `/v2/simulate/snapshots/${snapshot.json.id}/restore`)
    expect(restored.status, restored.text).toBe(200)
    expect(await rules()).toEqual([rule])
  })
})
