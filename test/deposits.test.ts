/**
 * Deposits into virtual accounts and the transaction resource, through the whole pipeline (engine.fetch) on a
 * virtual clock: the simulated sender, the world model's confirmation and settlement on the clock, the ledger's
 * balance on the account, the simulate calls that end or review a transaction, the transaction reads and lists,
 * and every error the spec names for them. Every event a test makes must decode with its type's schema.
 */
import { Seed } from "@fos/core"
import type { Engine } from "@fos/http"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { approvedCustomer, type Client, clientOf, idem, twoOrganizationsPerTest } from "./onboardingFixtures.ts"
import { expectProblem, isoMs, keysOf, makeEngine, orgSeed, outboxEvents, seedOf, START_MS } from "./support.ts"
import { expectWire } from "./wire.ts"

let engine: Engine
let acme: Client
let rival: Client

// Every event a test made is one the event catalog accepts.
twoOrganizationsPerTest({ set: (world) => ({ engine, acme, rival } = world), current: () => engine })

const events = (type?: string) => outboxEvents(engine, type)
const transactionEvents = async (id: string) =>
  (await events()).filter((e) => e.type.startsWith("transaction.") && e.data.transactionId === id)

const advance = (ms: number) => engine.clock.advance(ms)
const iso = (ms: number) => new Date(ms).toISOString()

const onboardedCustomer = (client: Client = acme): Promise<string> => approvedCustomer(client)

/** An active virtual account of a new customer, collecting `currency`. */
const activeAccount = async (currency: "EUR" | "USD" | "GBP", client: Client = acme) => {
  const customerId = await onboardedCustomer(client)
  const applied = await client.call("POST", `/v2/customers/${customerId}/features`, { type: "virtual_account", asset: { code: currency } }, idem())
  expect(applied.status, applied.text).toBe(201)
  await client.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
  await advance(30_000)
  const accounts = await client.call("GET", `/v2/customers/${customerId}/virtual-accounts`)
  const account = accounts.json.data[0]
  expect(account.status).toBe("active")
  return { customerId, accountId: account.id as string }
}

const deposit = (client: Client, accountId: string, amount: string, code = "EUR", extra: Record<string, unknown> = {}) =>
  client.call("POST", "/v2/simulate/deposits", { destination: { type: "virtual_account", virtualAccountId: accountId }, assetAmount: { code, amount }, ...extra })

/** Where a simulate call on a transaction answers from. */
const simulated = (id: string, step: string) => `/sandbox/v2/simulate/transactions/${id}/${step}`

const balanceOf = async (accountId: string) => (await acme.call("GET", `/v2/virtual-accounts/${accountId}`)).json.balances

describe("a deposit into a virtual account", () => {
  it("is a pending deposit transaction that the world model confirms, then settles on the next business day, crediting the balance with transaction.completed", async () => {
    const { customerId, accountId } = await activeAccount("EUR")
    expect(await balanceOf(accountId)).toEqual([{ code: "EUR", available: "0.00", pending: "0.00" }])
    const createdAt = START_MS + 30_000
    const r = await deposit(acme, accountId, "1250.50")
    expect(r.status, r.text).toBe(201)
    const transaction = r.json
    expect(transaction).toEqual({
      id: expect.stringMatching(/^txn_[0-9a-z]{24}$/),
      type: "deposit",
      status: "pending",
      stage: undefined,
      customerId,
      source: { type: "external_bank_inbound", assetAmount: { code: "EUR", amount: "1250.50" } },
      destination: { type: "virtual_account", virtualAccountId: accountId, assetAmount: { code: "EUR", amount: "1250.50" } },
      fees: [],
      failureCode: undefined,
      failureMessage: undefined,
      returnedAt: undefined,
      returnReason: undefined,
      returnCode: undefined,
      queuePosition: undefined,
      hasRfi: false,
      wireReceiveDetails: null,
      createdAt: iso(createdAt),
      updatedAt: iso(createdAt)
    })
    expect((await acme.call("GET", `/v2/transactions/${transaction.id}`)).json).toEqual(transaction)
    // Not the customer's money until it settles.
    expect(await balanceOf(accountId)).toEqual([{ code: "EUR", available: "0.00", pending: "0.00" }])

    await advance(2_000)
    expect((await acme.call("GET", `/v2/transactions/${transaction.id}`)).json).toMatchObject({ status: "processing", updatedAt: iso(createdAt + 2_000) })
    // START_MS is a Sunday: SEPA settles on Monday at 10:00 UTC.
    const monday = Date.parse("2026-03-02T10:00:00.000Z")
    await advance(monday - (createdAt + 2_000) - 1)
    expect((await acme.call("GET", `/v2/transactions/${transaction.id}`)).json.status).toBe("processing")
    await advance(1)
    expect((await acme.call("GET", `/v2/transactions/${transaction.id}`)).json).toMatchObject({ status: "completed", updatedAt: iso(monday) })
    expect(await balanceOf(accountId)).toEqual([{ code: "EUR", available: "1250.50", pending: "0.00" }])

    const sent = await transactionEvents(transaction.id)
    expect(sent.map((e) => [e.type, e.data.sequence, e.data.occurredAt])).toEqual([
      ["transaction.created", 1, iso(createdAt)],
      ["transaction.processing", 2, iso(createdAt + 2_000)],
      ["transaction.completed", 3, iso(monday)]
    ])
    expect(sent[0]!.data).toEqual({
      transactionId: transaction.id,
      customerId,
      type: "deposit",
      source: transaction.source,
      destination: transaction.destination,
      sequence: 1,
      occurredAt: iso(createdAt)
    })
    expect(sent[2]!.data).toMatchObject({ fees: [], completedAt: iso(monday) })
    expect(sent[2]!.data).not.toHaveProperty("stage")
  })

  it("lists the rail's inbound fee: what the sender sent is the source, what was credited the destination", async () => {
    const { accountId } = await activeAccount("USD")
    const r = await deposit(acme, accountId, "500.00", "USD", { rail: "fedwire" })
    expect(r.status, r.text).toBe(201)
    expect(r.json).toMatchObject({
      source: { type: "external_bank_inbound", assetAmount: { code: "USD", amount: "500.00" } },
      destination: { type: "virtual_account", assetAmount: { code: "USD", amount: "490.00" } },
      fees: [{ owner: "service", assetAmount: { code: "USD", amount: "10.00" }, invoiced: false }]
    })
    // Fedwire settles within hours.
    await advance(2 * 3600_000)
    expect((await acme.call("GET", `/v2/transactions/${r.json.id}`)).json.status).toBe("completed")
    expect(await balanceOf(accountId)).toEqual([{ code: "USD", available: "490.00", pending: "0.00" }])
    // Instant rails settle in seconds; ACH is the default rail of a USD account.
    const instant = await deposit(acme, accountId, "1.00", "USD", { rail: "rtp" })
    await advance(5_000)
    expect((await acme.call("GET", `/v2/transactions/${instant.json.id}`)).json.status).toBe("completed")
    const ach = await deposit(acme, accountId, "2.00", "USD")
    expect(ach.status).toBe(201)
    await advance(3600_000)
    expect((await acme.call("GET", `/v2/transactions/${ach.json.id}`)).json.status).toBe("processing")
  })

  it("refuses what the account cannot take, with the spec's codes, and changes nothing", async () => {
    const { accountId } = await activeAccount("EUR")
    const at = "/sandbox/v2/simulate/deposits"
    const mismatch = await deposit(acme, accountId, "10.00", "USD")
    expectProblem(mismatch, { type: "VIRTUAL_ACCOUNT_ASSET_MISMATCH", status: 422, instance: at })
    expectProblem(await deposit(acme, accountId, "10.00", "EUR", { rail: "ach" }), { type: "UNPROCESSABLE_ENTITY", status: 422, instance: at })
    expectProblem(await deposit(acme, "vac_doesnotexist", "10.00"), { type: "VIRTUAL_ACCOUNT_NOT_FOUND", status: 404, instance: at })
    expectProblem(await deposit(rival, accountId, "10.00"), { type: "VIRTUAL_ACCOUNT_NOT_FOUND", status: 404, instance: at })
    // An id in a body is a field like any other (docs/decisions.md, "Identifiers").
    const malformed = expectProblem(await deposit(acme, "acc_wrongprefix", "10.00"), { type: "VALIDATION_ERROR", status: 400, instance: at })
    expect(malformed.errors).toEqual([{ pointer: "/destination/virtualAccountId", detail: expect.stringContaining("virtual account id") }])
    for (const [amount, pointer] of [["0", "/assetAmount/amount"], ["0.00", "/assetAmount/amount"], ["1.001", "/assetAmount/amount"], ["-5", "/assetAmount/amount"], ["1e3", "/assetAmount/amount"]]) {
      const problem = expectProblem(await deposit(acme, accountId, amount!), { type: "VALIDATION_ERROR", status: 400, instance: at })
      expect(problem.errors.map((e: any) => e.pointer), amount).toContain(pointer)
    }
    const chain = expectProblem(await acme.call("POST", "/v2/simulate/deposits", {
      destination: { type: "virtual_account", virtualAccountId: accountId },
      assetAmount: { code: "EUR", amount: "1.00", chain: "base" }
    }), { type: "VALIDATION_ERROR", status: 400, instance: at })
    expect(chain.errors).toContainEqual({ pointer: "/assetAmount/chain", detail: expect.any(String) })
    // A pending account takes nothing yet.
    const customerId = await onboardedCustomer()
    const applied = await acme.call("POST", `/v2/customers/${customerId}/features`, { type: "virtual_account", asset: { code: "EUR" } }, idem())
    await acme.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
    const pending = (await acme.call("GET", `/v2/customers/${customerId}/virtual-accounts`)).json.data[0]
    expectProblem(await deposit(acme, pending.id, "10.00"), { type: "VIRTUAL_ACCOUNT_NOT_ACTIVE", status: 422, instance: at })
    // Less than a wire's inbound fee.
    const usd = await activeAccount("USD")
    expectProblem(await deposit(acme, usd.accountId, "10.00", "USD", { rail: "fedwire" }), { type: "AMOUNT_OUT_OF_RANGE", status: 422, instance: at })
    // Simulate endpoints exist only in the sandbox.
    const live = clientOf(engine.fetch, "http://fos", keysOf("acme").live, "live")
    expect((await live.call("POST", "/v2/simulate/deposits", { destination: { type: "virtual_account", virtualAccountId: accountId }, assetAmount: { code: "EUR", amount: "1.00" } })).status).toBe(404)
    expect((await acme.call("GET", "/v2/transactions")).json).toEqual({ data: [], meta: { mode: "cursor", nextCursor: null, previousCursor: null, total: 0 } })
    expect(await events("transaction.created")).toEqual([])
  })
})

describe("the world model's settlement rules", () => {
  it("follow a seed's worldModel section, and a bad one is refused before anything is written", async () => {
    await engine.close()
    const seed = { ...seedOf(orgSeed("acme")), worldModel: { confirmationMs: 500, railSettlement: { sepa: { afterMs: 1_000 } }, inboundFee: { sepa: "0.50" } } }
    engine = await makeEngine(seed as never)
    acme = clientOf(engine.fetch, "http://fos", keysOf("acme").sandbox)
    const { accountId } = await activeAccount("EUR")
    const r = await deposit(acme, accountId, "10.00")
    expect(r.json.fees).toEqual([{ owner: "service", assetAmount: { code: "EUR", amount: "0.50" }, invoiced: false }])
    await advance(500)
    expect((await acme.call("GET", `/v2/transactions/${r.json.id}`)).json.status).toBe("processing")
    await advance(500)
    expect((await acme.call("GET", `/v2/transactions/${r.json.id}`)).json.status).toBe("completed")
    expect(await balanceOf(accountId)).toEqual([{ code: "EUR", available: "9.50", pending: "0.00" }])
    // A rail that settles sooner than the world confirms: the deposit confirms as it settles, in that order.
    await engine.close()
    engine = await makeEngine({ ...seedOf(orgSeed("acme")), worldModel: { confirmationMs: 60_000, railSettlement: { sepa: { afterMs: 1_000 } } } } as never)
    acme = clientOf(engine.fetch, "http://fos", keysOf("acme").sandbox)
    const fast = await deposit(acme, (await activeAccount("EUR")).accountId, "10.00")
    await advance(999)
    expect((await acme.call("GET", `/v2/transactions/${fast.json.id}`)).json.status).toBe("pending")
    await advance(1)
    expect((await acme.call("GET", `/v2/transactions/${fast.json.id}`)).json.status).toBe("completed")
    expect((await transactionEvents(fast.json.id)).map((e) => e.type)).toEqual(["transaction.created", "transaction.processing", "transaction.completed"])
    const refused = await Effect.runPromiseExit(Seed.parse(JSON.stringify({ organizations: [], worldModel: { railSettlement: { sepa: { afterMs: -1 } } } })))
    expect(refused._tag).toBe("Failure")
    const unknownChain = await Effect.runPromiseExit(Seed.parse(JSON.stringify({ organizations: [], worldModel: { chainSettlementMs: { dogecoin: 1 } } })))
    expect(unknownChain._tag).toBe("Failure")
  })
})

describe("the wire-receive bank details of a deposit (representation rule 4)", () => {
  const details = { originatorName: "Globex Corp", originatorAccountNumber: "000123456789", originatorBankName: "First Bank", originatorBankId: "021000021", reference: "inv 77" }

  it("are present on every deposit: null but on a wire into a virtual account, where they carry what the sender's bank sent", async () => {
    const { accountId } = await activeAccount("USD")
    const wire = await deposit(acme, accountId, "500.00", "USD", { rail: "fedwire", wireReceiveDetails: details })
    expect(wire.status, wire.text).toBe(201)
    expect(wire.json.wireReceiveDetails).toEqual(details)
    expect((await acme.call("GET", `/v2/transactions/${wire.json.id}`)).json.wireReceiveDetails).toEqual(details)
    // Only what the bank filled: an absent member stays absent.
    const partial = await deposit(acme, accountId, "500.00", "USD", { rail: "fedwire", wireReceiveDetails: { originatorName: "Globex Corp" } })
    expect(partial.json.wireReceiveDetails).toEqual({ originatorName: "Globex Corp" })
    // Not applicable (ACH) or not known: present, null.
    const ach = await deposit(acme, accountId, "5.00", "USD", { rail: "ach" })
    expect(ach.json).toHaveProperty("wireReceiveDetails", null)
    const unknown = await deposit(acme, accountId, "500.00", "USD", { rail: "fedwire" })
    expect(unknown.json).toHaveProperty("wireReceiveDetails", null)
    // Every deposit in the list carries it; events do not.
    for (const t of (await acme.call("GET", "/v2/transactions?type=deposit")).json.data) expect(t).toHaveProperty("wireReceiveDetails")
    for (const e of await transactionEvents(wire.json.id)) expect(e.data).not.toHaveProperty("wireReceiveDetails")
  })

  it("are refused on a rail that is not a wire, and when a member is blank", async () => {
    const { accountId } = await activeAccount("USD")
    expectProblem(await deposit(acme, accountId, "5.00", "USD", { rail: "ach", wireReceiveDetails: details }), {
      type: "VALIDATION_ERROR",
      status: 400,
      instance: "/sandbox/v2/simulate/deposits"
    })
    expectProblem(await deposit(acme, accountId, "5.00", "USD", { rail: "fedwire", wireReceiveDetails: { originatorName: "  " } }), {
      type: "VALIDATION_ERROR",
      status: 400,
      instance: "/sandbox/v2/simulate/deposits"
    })
  })
})

describe("a deposit that arrives without its sender's details", () => {
  const supply = (id: string, body: unknown, headers = idem()) => acme.call("POST", `/v2/transactions/${id}/sender-information`, body, headers)
  const sender = { name: "Erika Mustermann", country: "DEU" }

  it("parks in awaiting_sender_information until the caller names the sender, then confirms and settles from then", async () => {
    const { accountId } = await activeAccount("EUR")
    const arrivedAt = START_MS + 30_000
    const r = await deposit(acme, accountId, "40.00", "EUR", { senderInformationMissing: true })
    expect(r.status, r.text).toBe(201)
    expect(r.json).toMatchObject({ status: "pending", stage: "awaiting_customer_action" })
    // It opens waiting for the caller: transaction.created carries the stage the read shows.
    const [created] = await transactionEvents(r.json.id)
    expect(created).toMatchObject({ type: "transaction.created", data: { sequence: 1, stage: "awaiting_customer_action" } })
    const [parked] = await events("transaction.awaiting_sender_information")
    expect(parked!.data).toMatchObject({
      transactionId: r.json.id,
      sourceAddress: null,
      assetAmount: { code: "EUR", amount: "40.00" },
      expiresAt: iso(arrivedAt + 72 * 3600_000),
      occurredAt: iso(arrivedAt)
    })
    expect(parked!.data).not.toHaveProperty("sequence")
    // Nothing moves while it waits.
    await advance(60_000)
    expect((await acme.call("GET", `/v2/transactions/${r.json.id}`)).json.status).toBe("pending")
    const at = `/sandbox/v2/transactions/${r.json.id}/sender-information`
    expectProblem(await supply(r.json.id, sender, {}), { type: "IDEMPOTENCY_KEY_REQUIRED", status: 400, instance: at })
    expectProblem(await supply(r.json.id, { name: "  ", country: "Germany" }), { type: "VALIDATION_ERROR", status: 400, instance: at })
    const supplied = await supply(r.json.id, { ...sender, address: { line1: "Hauptstr. 1", city: "Köln", country: "DEU" } })
    expect(supplied.status, supplied.text).toBe(200)
    expectWire(supplied.json, { status: "pending", stage: undefined })
    expectProblem(await supply(r.json.id, sender), { type: "CONFLICT", status: 409, instance: at })
    await advance(2_000)
    expect((await acme.call("GET", `/v2/transactions/${r.json.id}`)).json.status).toBe("processing")
    await advance(3 * 24 * 3600_000)
    expect((await acme.call("GET", `/v2/transactions/${r.json.id}`)).json.status).toBe("completed")
    expect(await balanceOf(accountId)).toEqual([{ code: "EUR", available: "40.00", pending: "0.00" }])
  })

  it("goes back to the sender when the window ends: failed with travel_rule_rejected, nothing credited", async () => {
    const { accountId } = await activeAccount("EUR")
    const r = await deposit(acme, accountId, "40.00", "EUR", { senderInformationMissing: true })
    await advance(72 * 3600_000 - 1)
    expect((await acme.call("GET", `/v2/transactions/${r.json.id}`)).json.status).toBe("pending")
    await advance(1)
    expectWire((await acme.call("GET", `/v2/transactions/${r.json.id}`)).json, {
      status: "failed",
      stage: undefined,
      failureCode: "travel_rule_rejected",
      failureMessage: "The travel-rule check failed or the counterparty rejected the transfer."
    })
    expect(await balanceOf(accountId)).toEqual([{ code: "EUR", available: "0.00", pending: "0.00" }])
    expectProblem(await supply(r.json.id, sender), { type: "CONFLICT", status: 409, instance: `/sandbox/v2/transactions/${r.json.id}/sender-information` })
    // A deposit that never waited has nothing to supply.
    const plain = await deposit(acme, accountId, "1.00")
    expectProblem(await supply(plain.json.id, sender), { type: "CONFLICT", status: 409, instance: `/sandbox/v2/transactions/${plain.json.id}/sender-information` })
  })
})

describe("the sandbox's outside actors on a transaction", () => {
  it("fails a deposit with a failure code: the catalog's failureMessage, the credit released, transaction.failed", async () => {
    const { accountId } = await activeAccount("EUR")
    const { json: transaction } = await deposit(acme, accountId, "80.00")
    const r = await acme.call("POST", `/v2/simulate/transactions/${transaction.id}/terminal`, { outcome: "failed", failureCode: "returned_by_sender", reason: "the sender's bank recalled it" })
    expect(r.status, r.text).toBe(200)
    expectWire(r.json, {
      status: "failed",
      failureCode: "returned_by_sender",
      failureMessage: "The bank returned the transfer.",
      stage: undefined
    })
    expect(await balanceOf(accountId)).toEqual([{ code: "EUR", available: "0.00", pending: "0.00" }])
    const [failed] = await events("transaction.failed")
    expect(failed!.data).toMatchObject({
      sequence: 2,
      status: "failed",
      reasonCode: "returned_by_sender",
      reasonMessage: "The bank returned the transfer.",
      failureCode: "returned_by_sender",
      failureMessage: "The bank returned the transfer."
    })
    // The clock's settlement finds it ended and leaves it so.
    await advance(7 * 24 * 3600_000)
    expect((await acme.call("GET", `/v2/transactions/${transaction.id}`)).json.status).toBe("failed")
    expect(await balanceOf(accountId)).toEqual([{ code: "EUR", available: "0.00", pending: "0.00" }])
    for (const path of ["confirm", "settle"]) {
      expectProblem(await acme.call("POST", `/v2/simulate/transactions/${transaction.id}/${path}`), {
        type: "RESOURCE_TERMINAL",
        status: 409,
        instance: `/sandbox/v2/simulate/transactions/${transaction.id}/${path}`
      })
    }
    expectProblem(await acme.call("POST", `/v2/simulate/transactions/${transaction.id}/terminal`, { outcome: "completed" }), {
      type: "RESOURCE_TERMINAL",
      status: 409,
      instance: simulated(transaction.id, "terminal")
    })
    expectProblem(await acme.call("POST", `/v2/simulate/transactions/${transaction.id}/review`, { action: "enter" }), {
      type: "RESOURCE_TERMINAL",
      status: 409,
      instance: simulated(transaction.id, "review")
    })
  })

  it("confirms and settles a deposit on demand, each step once", async () => {
    const { accountId } = await activeAccount("EUR")
    const { json: transaction } = await deposit(acme, accountId, "5.00")
    const confirmed = await acme.call("POST", `/v2/simulate/transactions/${transaction.id}/confirm`)
    expect(confirmed.json.status).toBe("processing")
    expectProblem(await acme.call("POST", `/v2/simulate/transactions/${transaction.id}/confirm`), {
      type: "SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY",
      status: 422,
      instance: simulated(transaction.id, "confirm")
    })
    const settled = await acme.call("POST", `/v2/simulate/transactions/${transaction.id}/settle`)
    expect(settled.json.status).toBe("completed")
    expect(await balanceOf(accountId)).toEqual([{ code: "EUR", available: "5.00", pending: "0.00" }])
    // The world model's own timers find nothing left to do.
    await advance(7 * 24 * 3600_000)
    expect((await transactionEvents(transaction.id)).map((e) => e.type)).toEqual(["transaction.created", "transaction.processing", "transaction.completed"])
  })

  it("a deposit confirmed on demand still settles on its rail's time, not before", async () => {
    const { accountId } = await activeAccount("USD")
    const { json: transaction } = await deposit(acme, accountId, "3.00", "USD", { rail: "rtp" })
    expect((await acme.call("POST", `/v2/simulate/transactions/${transaction.id}/confirm`)).json.status).toBe("processing")
    await advance(4_000)
    expect((await acme.call("GET", `/v2/transactions/${transaction.id}`)).json.status).toBe("processing")
    await advance(1_000)
    expect((await acme.call("GET", `/v2/transactions/${transaction.id}`)).json.status).toBe("completed")
    expect((await transactionEvents(transaction.id)).map((e) => e.type)).toEqual(["transaction.created", "transaction.processing", "transaction.completed"])
  })

  it("reviews a transaction: transaction.under_review once per review period, the stage on the read, no event when review closes", async () => {
    const { accountId } = await activeAccount("EUR")
    const { json: transaction } = await deposit(acme, accountId, "5.00")
    const review = (action: string) => acme.call("POST", `/v2/simulate/transactions/${transaction.id}/review`, { action })
    expect((await review("enter")).json.stage).toBe("under_review")
    expectProblem(await review("enter"), { type: "SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY", status: 422, instance: simulated(transaction.id, "review") })
    expect((await review("clear")).json).not.toHaveProperty("stage")
    await review("enter")
    expect((await review("request_information")).json.stage).toBe("awaiting_customer_action")
    await review("enter")
    expect((await events("transaction.under_review")).map((e) => e.data.sequence)).toEqual([2, 3])
    // Only a payout's supporting document can be rejected, and a deposit is not cancelled by its receiver.
    expectProblem(await acme.call("POST", `/v2/simulate/transactions/${transaction.id}/review`, { action: "reject" }), {
      type: "SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY",
      status: 422,
      instance: simulated(transaction.id, "review")
    })
    expectProblem(await acme.call("POST", `/v2/simulate/transactions/${transaction.id}/terminal`, { outcome: "cancelled" }), {
      type: "SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY",
      status: 422,
      instance: simulated(transaction.id, "terminal")
    })
    expectProblem(await acme.call("POST", `/v2/simulate/transactions/${transaction.id}/terminal`, { outcome: "completed", failureCode: "rail_unavailable" }), {
      type: "VALIDATION_ERROR",
      status: 400,
      instance: simulated(transaction.id, "terminal")
    })
    expectProblem(await acme.call("POST", `/v2/simulate/transactions/${transaction.id}/review`, { action: "dance" }), {
      type: "VALIDATION_ERROR",
      status: 400,
      instance: simulated(transaction.id, "review")
    })
    // Settling closes the review: the stage goes with it.
    const settled = await acme.call("POST", `/v2/simulate/transactions/${transaction.id}/terminal`, { outcome: "completed" })
    expectWire(settled.json, { status: "completed", stage: undefined })
    expect((await transactionEvents(transaction.id)).map((e) => e.data.sequence)).toEqual([1, 2, 3, 4])
  })

  it("answers 404 for another organization's transaction and 400 for a malformed id", async () => {
    const { accountId } = await activeAccount("EUR")
    const { json: transaction } = await deposit(acme, accountId, "5.00")
    expectProblem(await rival.call("GET", `/v2/transactions/${transaction.id}`), { type: "NOT_FOUND", status: 404, instance: `/sandbox/v2/transactions/${transaction.id}` })
    expectProblem(await rival.call("POST", `/v2/simulate/transactions/${transaction.id}/settle`), { type: "NOT_FOUND", status: 404, instance: simulated(transaction.id, "settle") })
    expectProblem(await acme.call("GET", "/v2/transactions/wlt_notatransaction"), { type: "INVALID_OID_FORMAT", status: 400, instance: "/sandbox/v2/transactions/wlt_notatransaction" })
    // The detail names the id's kind with the article its sound takes.
    expect(JSON.stringify((await acme.call("GET", "/v2/orders/wlt_notanorder")).json)).toContain("must be an order id")
    expect(JSON.stringify((await acme.call("GET", "/v2/transactions?customerId=vac_x")).json)).toContain("must be a customer id")
    expect((await acme.call("GET", `/v2/transactions/${transaction.id}`)).json.updatedAt).toMatch(isoMs)
  })
})

describe("GET /v2/transactions", () => {
  it("pages exactly under every combination of type, status and customerId, with a true total", async () => {
    const a = await activeAccount("EUR")
    const b = await activeAccount("EUR")
    const ids: Record<string, Array<string>> = { a: [], b: [] }
    for (let i = 0; i < 7; i++) {
      for (const [name, account] of [["a", a], ["b", b]] as const) {
        const r = await deposit(acme, account.accountId, `${i + 1}.00`)
        ids[name]!.push(r.json.id)
        if (i % 3 === 0) await acme.call("POST", `/v2/simulate/transactions/${r.json.id}/settle`)
      }
    }
    const walk = async (query: string) => {
      const seen: Array<any> = []
      let cursor: string | null = null
      let total = -1
      do {
        const page: any = (await acme.call("GET", `/v2/transactions?limit=2&${query}${cursor === null ? "" : `&cursor=${cursor}`}`)).json
        expect(page.data.length === 2 || page.meta.nextCursor === null, query).toBe(true)
        seen.push(...page.data)
        total = page.meta.total
        cursor = page.meta.nextCursor
      } while (cursor !== null)
      expect(seen.length, query).toBe(total)
      return seen
    }
    // Everything, newest first; all were made at one instant, so the id breaks the tie.
    expect((await walk("")).map((t) => t.id)).toEqual([...ids.a!, ...ids.b!].sort().reverse())
    expect(await walk("type=deposit")).toHaveLength(14)
    expect(await walk("type=withdrawal")).toHaveLength(0)
    expect(await walk("status=completed")).toHaveLength(6)
    expect(await walk(`customerId=${a.customerId}`)).toHaveLength(7)
    const combined = await walk(`customerId=${a.customerId}&status=completed&type=deposit`)
    expect(combined.map((t) => t.id).sort()).toEqual([ids.a![0], ids.a![3], ids.a![6]].sort())
    const pendingB = await walk(`customerId=${b.customerId}&status=pending&sortBy=updatedAt&sortOrder=asc`)
    expect(pendingB.map((t) => t.id)).toEqual(ids.b!.filter((_, i) => i % 3 !== 0).sort())
    expectProblem(await acme.call("GET", "/v2/transactions?type=payout"), { type: "VALIDATION_ERROR", status: 400, instance: "/sandbox/v2/transactions" })
    expectProblem(await acme.call("GET", "/v2/transactions?status=done"), { type: "VALIDATION_ERROR", status: 400, instance: "/sandbox/v2/transactions" })
    expectProblem(await acme.call("GET", "/v2/transactions?customerId=vac_x"), { type: "INVALID_OID_FORMAT", status: 400, instance: "/sandbox/v2/transactions" })
    expect((await rival.call("GET", "/v2/transactions")).json.meta.total).toBe(0)
  })
})
