/**
 * Recipients and payouts through the whole pipeline (engine.fetch) on a virtual clock: saved destinations with their
 * per-rail checks, payout requirements, payouts from virtual accounts over each rail family and from wallets on chain,
 * the world model carrying them to completed with the ledger and the webhooks (with sequence numbers) checked at each
 * step, cancels, every failure the sandbox produces, bank returns, reviews, restrictions and idempotency rule 6.
 */
import { Ledger, Store } from "@fos/core"
import type { Engine } from "@fos/http"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { approvedCustomer, type Client, clientOf, deuDocuments, idem, twoOrganizationsPerTest } from "./onboardingFixtures.ts"
import { expectProblem, keysOf, makeEngine, orgSeed, outboxEvents, seedOf, START_MS } from "./support.ts"
import { expectWire } from "./wire.ts"

let engine: Engine
let acme: Client
let rival: Client

// Every event a test made is one the event catalog accepts.
twoOrganizationsPerTest({ set: (world) => ({ engine, acme, rival } = world), current: () => engine })

const advance = (ms: number) => engine.clock.advance(ms)
const iso = (ms: number) => new Date(ms).toISOString()
const now = async () => Date.parse((await acme.call("GET", "/v2/simulate/clock")).json.now)

const onboardedCustomer = (client: Client = acme): Promise<string> => approvedCustomer(client)

/** An active virtual account in `currency`, funded with `funds` over an instant rail (settled). */
const fundedAccount = async (currency: "EUR" | "USD" | "GBP", funds: string, client: Client = acme) => {
  const customerId = await onboardedCustomer(client)
  const applied = await client.call("POST", `/v2/customers/${customerId}/features`, { type: "virtual_account", asset: { code: currency } }, idem())
  expect(applied.status, applied.text).toBe(201)
  await client.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
  await advance(30_000)
  const accountId = (await client.call("GET", `/v2/customers/${customerId}/virtual-accounts`)).json.data[0].id as string
  const rail = { USD: "rtp", EUR: "sepa", GBP: "faster_payments" }[currency]
  const deposited = await client.call("POST", "/v2/simulate/deposits", {
    destination: { type: "virtual_account", virtualAccountId: accountId },
    assetAmount: { code: currency, amount: funds },
    rail
  })
  expect(deposited.status, deposited.text).toBe(201)
  await client.call("POST", `/v2/simulate/transactions/${deposited.json.id}/settle`)
  expect((await balances(accountId, client))[0]).toMatchObject({ code: currency, available: funds })
  return { customerId, accountId }
}

/** A custodial wallet on base holding `funds` USDC. */
const fundedWallet = async (funds: string) => {
  const customerId = await onboardedCustomer()
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

const balances = async (accountId: string, client: Client = acme) => {
  const path = accountId.startsWith("wlt_") ? `/v2/wallets/${accountId}` : `/v2/virtual-accounts/${accountId}`
  return (await client.call("GET", path)).json.balances as Array<{ code: string; available: string; pending: string }>
}

const usAddress = { line1: "1 Main St", city: "New York", state: "NY", postalCode: "10001", country: "USA" }
const deAddress = { line1: "Unter den Linden 1", city: "Berlin", postalCode: "10117", country: "DEU" }
const gbAddress = { line1: "10 Downing St", city: "London", country: "GBR" }

const recipientBodies = {
  ach: { rail: "ach", name: "Ada Lovelace", address: usAddress, routingNumber: "021000021", accountNumber: "123456789" },
  fedwire: { rail: "fedwire", name: "Ada Lovelace", address: usAddress, routingNumber: "021000021", accountNumber: "123456789" },
  rtp: { rail: "rtp", name: "Ada Lovelace", address: usAddress, routingNumber: "021000021", accountNumber: "123456789" },
  fednow: { rail: "fednow", name: "Ada Lovelace", address: usAddress, routingNumber: "021000021", accountNumber: "123456789" },
  sepa: { rail: "sepa", name: "Max Mustermann", address: deAddress, iban: "DE89 3704 0044 0532 0130 00", bic: "COBADEFFXXX" },
  faster_payments: { rail: "faster_payments", name: "Jane Doe", address: gbAddress, sortCode: "12-34-56", accountNumber: "12345678" },
  swift: { rail: "swift", name: "Jane Doe", address: gbAddress, bic: "NWBKGB2L", iban: "GB82WEST12345698765432" },
  international_wire: { rail: "international_wire", name: "Max Mustermann", address: deAddress, bic: "DEUTDEFF", iban: "DE89370400440532013000" }
} as const

const whitelist = async (customerId: string, body: Record<string, unknown>) => {
  const r = await acme.call("POST", `/v2/customers/${customerId}/whitelist-recipients`, body, idem())
  expect(r.status, r.text).toBe(201)
  return r.json.id as string
}

/** The ledger transfers booked for a transaction, in booking order: kind, code, amount in units, and what each resolves. */
const ledgerOf = (transactionId: string) =>
  engine.run(Effect.gen(function*() {
    const store = yield* Store.Store
    const transfers = yield* store.page(Ledger.LedgerTransfers, { order: "byTransaction", partition: transactionId, descending: false, backward: false, from: undefined, limit: 100 })
    return transfers.map((t) => ({ id: t.id, kind: t.kind, code: t.code, amount: t.amount, debit: t.debitAccountId, credit: t.creditAccountId, resolves: t.resolves }))
  }))

const payoutEvents = async (id: string) =>
  (await outboxEvents(engine)).filter((e) => e.type.startsWith("transaction.") && e.data.transactionId === id)

describe("whitelist recipients", () => {
  it("are created with an Idempotency-Key, read with the account masked, listed, and removed", async () => {
    const customerId = await onboardedCustomer()
    const path = `/v2/customers/${customerId}/whitelist-recipients`
    expectProblem(await acme.call("POST", path, recipientBodies.ach), { type: "IDEMPOTENCY_KEY_REQUIRED", status: 400, instance: `/sandbox${path}` })
    const created = await acme.call("POST", path, { ...recipientBodies.ach, clientReferenceId: "ada-checking" }, idem())
    expect(created.status, created.text).toBe(201)
    expect(created.json).toEqual({
      id: expect.stringMatching(/^wlr_[0-9a-z]{24}$/),
      customerId,
      rail: "ach",
      name: "Ada Lovelace",
      address: usAddress,
      accountNumberLast4: "6789",
      routingNumber: "021000021",
      accountType: "checking",
      clientReferenceId: "ada-checking",
      createdAt: iso(START_MS)
    })
    const id = created.json.id
    expect((await acme.call("GET", `/v2/whitelist-recipients/${id}`)).json).toEqual(created.json)
    expect((await acme.call("GET", path)).json).toEqual({ data: [created.json], meta: { mode: "cursor", nextCursor: null, previousCursor: null, total: 1 } })
    // Another organization sees nothing.
    expectProblem(await rival.call("GET", `/v2/whitelist-recipients/${id}`), { type: "NOT_FOUND", status: 404, instance: `/sandbox/v2/whitelist-recipients/${id}` })
    expectProblem(await acme.call("POST", path, { ...recipientBodies.sepa, clientReferenceId: "ada-checking" }, idem()), {
      type: "DUPLICATE_CLIENT_REFERENCE_ID",
      status: 409,
      instance: `/sandbox${path}`
    })

    expect((await acme.call("DELETE", `/v2/whitelist-recipients/${id}`)).status).toBe(204)
    expect((await acme.call("DELETE", `/v2/whitelist-recipients/${id}`)).status).toBe(204)
    // Removed for good: 410 GONE, not the 404 of an id that never was one.
    expectProblem(await acme.call("GET", `/v2/whitelist-recipients/${id}`), { type: "GONE", status: 410, instance: `/sandbox/v2/whitelist-recipients/${id}` })
    expect((await acme.call("GET", path)).json.meta.total).toBe(0)
    expectProblem(await acme.call("DELETE", "/v2/whitelist-recipients/wlr_000000000000000000000000"), {
      type: "NOT_FOUND",
      status: 404,
      instance: "/sandbox/v2/whitelist-recipients/wlr_000000000000000000000000"
    })
    expectProblem(await acme.call("GET", "/v2/whitelist-recipients/rad_1"), { type: "INVALID_OID_FORMAT", status: 400, instance: "/sandbox/v2/whitelist-recipients/rad_1" })
  })

  it("takes a valid account on every rail", async () => {
    const customerId = await onboardedCustomer()
    for (const body of Object.values(recipientBodies)) await whitelist(customerId, body)
    const list = (await acme.call("GET", `/v2/customers/${customerId}/whitelist-recipients`)).json
    expect(list.meta.total).toBe(8)
    const sepa = list.data.find((r: { rail: string }) => r.rail === "sepa")
    expect(sepa).toMatchObject({ rail: "sepa", ibanMasked: "DE••••3000", bic: "COBADEFFXXX" })
    expect(sepa.iban).toBeUndefined()
  })

  it("takes the routing numbers fos issues; a bad one's refusal names its cause, the Federal Reserve prefix or the check digit", async () => {
    // Several virtual accounts, so several issued routing numbers, each valid by fos's own validator.
    for (let i = 0; i < 4; i++) {
      const { customerId, accountId } = await fundedAccount("USD", "10.00")
      const account = (await acme.call("GET", `/v2/virtual-accounts/${accountId}`)).json
      const us = account.depositInstructions.find((b: { railFamily: string }) => b.railFamily === "us_domestic")
      expect(us.routingNumber).toMatch(/^(0[0-9]|1[0-2]|2[1-9]|3[0-2]|6[1-9]|7[0-2]|80)\d{7}$/)
      await whitelist(customerId, { ...recipientBodies.ach, routingNumber: us.routingNumber })
    }
    const customerId = await onboardedCustomer()
    const path = `/v2/customers/${customerId}/whitelist-recipients`
    const refused = async (routingNumber: string) =>
      expectProblem(await acme.call("POST", path, { ...recipientBodies.ach, routingNumber }, idem()), { type: "RECIPIENT_VALIDATION_FAILED", status: 422, instance: `/sandbox${path}` }).errors
    // 366123867: its check digit adds up, but 36 is no Federal Reserve prefix.
    expect(await refused("366123867")).toEqual([
      { pointer: "/routingNumber", detail: "routing number 366123867 is not a valid ABA routing number (its prefix 36 is not a Federal Reserve routing symbol: 00-12, 21-32, 61-72 or 80)" }
    ])
    expect(await refused("021000022")).toEqual([
      { pointer: "/routingNumber", detail: "routing number 021000022 is not a valid ABA routing number (its check digit does not match)" }
    ])
  })

  it("refuses bad bank details with 422 RECIPIENT_VALIDATION_FAILED, one errors[] entry per problem, never echoing a value but a routing number", async () => {
    const customerId = await onboardedCustomer()
    const path = `/v2/customers/${customerId}/whitelist-recipients`
    const refused = async (body: Record<string, unknown>, errors: Array<{ pointer: string; detail: string }>) => {
      const problem = expectProblem(await acme.call("POST", path, body, idem()), { type: "RECIPIENT_VALIDATION_FAILED", status: 422, instance: `/sandbox${path}` })
      expect(problem.errors).toEqual(errors)
      return problem
    }
    const bad = await refused({ ...recipientBodies.ach, routingNumber: "021000022", accountNumber: "12-34", iban: "DE89370400440532013000" }, [
      { pointer: "/iban", detail: "is not used on the ach rail" },
      { pointer: "/routingNumber", detail: "routing number 021000022 is not a valid ABA routing number (its check digit does not match)" },
      { pointer: "/accountNumber", detail: "must be 4 to 17 digits" }
    ])
    expect(JSON.stringify(bad)).not.toContain("12-34")
    const ibanProblem = await refused({ ...recipientBodies.sepa, iban: "DE89370400440532013001" }, [
      { pointer: "/iban", detail: "has check digits that do not match the account" }
    ])
    expect(JSON.stringify(ibanProblem)).not.toContain("0532013001")
    await refused({ ...recipientBodies.sepa, iban: "DE8937040044053201300" }, [{ pointer: "/iban", detail: "must have 22 characters for its country" }])
    // A valid IBAN outside SEPA is no SEPA account.
    await refused({ ...recipientBodies.sepa, iban: "TR330006100519786457841326" }, [{ pointer: "/iban", detail: "must be an IBAN of a SEPA country on the sepa rail" }])
    await refused({ rail: "faster_payments", name: "Jane", address: gbAddress, sortCode: "12345", accountNumber: "1234567" }, [
      { pointer: "/accountNumber", detail: "must be 8 digits" },
      { pointer: "/sortCode", detail: "must be a UK sort code: 6 digits, optionally as 12-34-56" }
    ])
    await refused({ rail: "swift", name: "Jane", address: gbAddress }, [
      { pointer: "/bic", detail: "is required on the swift rail" },
      { pointer: "/accountNumber", detail: "is required on the swift rail when no iban is given" }
    ])
    await refused({ rail: "international_wire", name: "Jane", address: gbAddress, bic: "NOT A BIC", accountNumber: "12345678" }, [
      { pointer: "/bic", detail: "must be a BIC of 8 or 11 letters and digits" }
    ])
    await refused({ rail: "rtp", name: "Jane", address: usAddress }, [
      { pointer: "/routingNumber", detail: "is required on the rtp rail" },
      { pointer: "/accountNumber", detail: "is required on the rtp rail" }
    ])
    // The spec's address rule: state is required when country is USA (the body's shape, as on every address).
    const noState = expectProblem(await acme.call("POST", path, { ...recipientBodies.ach, address: { ...usAddress, state: undefined } }, idem()), {
      type: "VALIDATION_ERROR",
      status: 400,
      instance: `/sandbox${path}`
    })
    expect(noState.errors.map((e: { pointer: string }) => e.pointer)).toEqual(["/address/state"])
    // Nothing was saved by any refusal.
    expect((await acme.call("GET", path)).json.meta.total).toBe(0)
  })
})

describe("registered addresses", () => {
  it("are created in the chain's canonical form, read, listed and removed; bad addresses are refused", async () => {
    const customerId = await onboardedCustomer()
    const path = `/v2/customers/${customerId}/registered-addresses`
    const lower = "0x52908400098527886e0f7030069857d2e4169ee7"
    const created = await acme.call("POST", path, { chain: "base", address: lower, label: "cold storage" }, idem())
    expect(created.status, created.text).toBe(201)
    expect(created.json).toEqual({
      id: expect.stringMatching(/^rad_[0-9a-z]{24}$/),
      customerId,
      chain: "base",
      address: "0x52908400098527886E0F7030069857D2E4169EE7",
      label: "cold storage",
      createdAt: iso(START_MS)
    })
    expect((await acme.call("GET", `/v2/registered-addresses/${created.json.id}`)).json).toEqual(created.json)
    expect((await acme.call("GET", path)).json.data).toEqual([created.json])
    expectProblem(await acme.call("POST", path, { chain: "base", address: "0x52908400098527886E0F7030069857D2E4169ee7" }, idem()), {
      type: "INVALID_ADDRESS_FORMAT",
      status: 400,
      instance: `/sandbox${path}`
    })
    const bad = expectProblem(await acme.call("POST", path, { chain: "solana", address: "not-an-address" }, idem()), {
      type: "RECIPIENT_VALIDATION_FAILED",
      status: 422,
      instance: `/sandbox${path}`
    })
    expect(bad.errors).toEqual([{ pointer: "/address", detail: expect.any(String) }])
    expect(JSON.stringify(bad)).not.toContain("not-an-address")
    expectProblem(await acme.call("POST", path, { chain: "base", address: lower }), { type: "IDEMPOTENCY_KEY_REQUIRED", status: 400, instance: `/sandbox${path}` })
    expect((await acme.call("DELETE", `/v2/registered-addresses/${created.json.id}`)).status).toBe(204)
    expect((await acme.call("GET", path)).json.data).toEqual([])
    expectProblem(await acme.call("GET", `/v2/registered-addresses/${created.json.id}`), { type: "GONE", status: 410, instance: `/sandbox/v2/registered-addresses/${created.json.id}` })
  })

  it("a request that breaks two rules gets the first: a recipient's details alone, then its customer, then a duplicate clientReferenceId", async () => {
    const customerId = await onboardedCustomer()
    const first = async (client: Client, customer: string, kind: string, body: Record<string, unknown>, type: string, status: number) =>
      expectProblem(await client.call("POST", `/v2/customers/${customer}/${kind}`, body, idem()), { type, status, instance: `/sandbox/v2/customers/${customer}/${kind}` })
    const badAch = { ...recipientBodies.ach, routingNumber: "021000022", clientReferenceId: "taken" }
    const mixedCase = { chain: "base", address: "0x52908400098527886E0F7030069857D2E4169ee7", clientReferenceId: "taken" }
    const badSolana = { chain: "solana", address: "not-an-address", clientReferenceId: "taken" }
    expect((await acme.call("POST", `/v2/customers/${customerId}/whitelist-recipients`, { ...recipientBodies.ach, clientReferenceId: "taken" }, idem())).status).toBe(201)
    expect((await acme.call("POST", `/v2/customers/${customerId}/registered-addresses`, { chain: "base", address: "0x52908400098527886e0f7030069857d2e4169ee7", clientReferenceId: "taken" }, idem())).status).toBe(201)
    // The details alone, before the customer is read: an unknown customer, or another organization's.
    for (const [client, customer] of [[acme, "cus_nobody"], [rival, customerId]] as const) {
      await first(client, customer, "whitelist-recipients", badAch, "RECIPIENT_VALIDATION_FAILED", 422)
      await first(client, customer, "registered-addresses", mixedCase, "INVALID_ADDRESS_FORMAT", 400)
      await first(client, customer, "registered-addresses", badSolana, "RECIPIENT_VALIDATION_FAILED", 422)
    }
    // The customer before the duplicate, and the details before it too.
    await first(acme, "cus_nobody", "whitelist-recipients", { ...recipientBodies.ach, clientReferenceId: "taken" }, "CUSTOMER_NOT_FOUND", 404)
    await first(acme, "cus_nobody", "registered-addresses", { ...mixedCase, address: mixedCase.address.toLowerCase() }, "CUSTOMER_NOT_FOUND", 404)
    await first(acme, customerId, "whitelist-recipients", badAch, "RECIPIENT_VALIDATION_FAILED", 422)
    await first(acme, customerId, "registered-addresses", mixedCase, "INVALID_ADDRESS_FORMAT", 400)
    await first(acme, customerId, "registered-addresses", { ...mixedCase, address: mixedCase.address.toLowerCase() }, "DUPLICATE_CLIENT_REFERENCE_ID", 409)
  })
})

describe("payout requirements", () => {
  it("answers per destination, rail and amount, with travel-rule fields from the threshold, and refuses an Idempotency-Key", async () => {
    const bank = await acme.call("POST", "/v2/payouts/requirements", {
      source: { type: "virtual_account" },
      destinationType: "external_bank",
      rail: "sepa",
      asset: "EUR",
      country: "DEU",
      amount: "100.00"
    })
    expect(bank.status, bank.text).toBe(200)
    expect(bank.json.recipient.map((r: { pointer: string }) => r.pointer)).toEqual(["/recipient/name", "/recipient/address", "/recipient/iban", "/recipient/bic"])
    expectWire(bank.json, { purpose: { required: true }, documents: { required: false }, travelRule: { required: false, threshold: undefined, fields: [] }, fee: "1.00" })

    const crypto = (amount: string) =>
      acme.call("POST", "/v2/payouts/requirements", { source: { type: "wallet" }, destinationType: "external_crypto", asset: "USDC", chain: "base", country: "DEU", amount })
    expect((await crypto("999.99")).json.travelRule).toMatchObject({ required: false, threshold: "1000.000000" })
    const above = (await crypto("1000")).json
    expect(above.travelRule.required).toBe(true)
    expect(above.travelRule.fields.filter((f: { required: boolean }) => f.required).map((f: { pointer: string }) => f.pointer))
      .toEqual(["/travelRule/beneficiaryName", "/travelRule/beneficiaryCountry", "/travelRule/walletType"])

    const refused = expectProblem(
      await acme.call("POST", "/v2/payouts/requirements", { source: { type: "wallet" }, destinationType: "external_crypto", asset: "USDC", chain: "base", country: "DEU", amount: "1" }, idem()),
      { type: "VALIDATION_ERROR", status: 400, instance: "/sandbox/v2/payouts/requirements" }
    )
    expect(refused.errors).toEqual([{ pointer: "/headers/idempotency-key", detail: "is not accepted on this endpoint" }])
    expectProblem(await acme.call("POST", "/v2/payouts/requirements", { source: { type: "virtual_account" }, destinationType: "external_bank", asset: "EUR", country: "DEU", amount: "1" }), {
      type: "VALIDATION_ERROR",
      status: 400,
      instance: "/sandbox/v2/payouts/requirements"
    })
    expectProblem(await acme.call("POST", "/v2/payouts/requirements", { source: { type: "virtual_account" }, destinationType: "external_bank", rail: "ach", asset: "EUR", country: "DEU", amount: "1" }), {
      type: "UNPROCESSABLE_ENTITY",
      status: 422,
      instance: "/sandbox/v2/payouts/requirements"
    })
  })
})

const payout = (body: Record<string, unknown>, headers: Record<string, string> = idem(), client: Client = acme) =>
  client.call("POST", "/v2/payouts", body, headers)

const read = async (id: string) => (await acme.call("GET", `/v2/payouts/${id}`)).json

/** A USD account holding 1000.00 and an ACH payout of 250.00 (fee 1.00) to a whitelisted account. */
const achPayout = async (extra: Record<string, unknown> = {}, headers = idem()) => {
  const { customerId, accountId } = await fundedAccount("USD", "1000.00")
  const recipientId = await whitelist(customerId, recipientBodies.ach)
  const created = await payout({
    source: { type: "virtual_account", virtualAccountId: accountId },
    destination: { type: "external_bank", whitelistRecipientId: recipientId },
    amount: "250.00",
    purpose: "supplier_payment",
    ...extra
  }, headers)
  expect(created.status, created.text).toBe(201)
  return { customerId, accountId, recipientId, payout: created.json }
}

describe("a bank payout", () => {
  it("ACH: reserves amount and fee, clears compliance, is sent with its trace number, settles the next business day posting the reservation", async () => {
    const { customerId, accountId, payout: created } = await achPayout({ clientReferenceId: "inv-42" })
    const createdAt = await now()
    expect(created).toEqual({
      id: expect.stringMatching(/^txn_[0-9a-z]{24}$/),
      type: "withdrawal",
      status: "pending",
      stage: undefined,
      customerId,
      clientReferenceId: "inv-42",
      source: { type: "virtual_account", virtualAccountId: accountId, assetAmount: { code: "USD", amount: "251.00" } },
      destination: { type: "external_bank", assetAmount: { code: "USD", amount: "250.00" } },
      fees: [{ owner: "service", assetAmount: { code: "USD", amount: "1.00" }, invoiced: false }],
      failureCode: undefined,
      failureMessage: undefined,
      returnedAt: undefined,
      returnReason: undefined,
      returnCode: undefined,
      queuePosition: undefined,
      hasRfi: false,
      payout: { rail: "ach" },
      createdAt: iso(createdAt),
      updatedAt: iso(createdAt)
    })
    expect(await read(created.id)).toEqual(created)
    expect((await acme.call("GET", `/v2/transactions/${created.id}`)).json).toEqual(created)
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "749.00", pending: "251.00" }])
    // The reservation: two pending transfers from the account, the amount to the ACH rail's world account, the fee to the service's.
    const holds = await ledgerOf(created.id)
    expect(holds).toEqual([
      { id: `${created.id}/payout`, kind: "pending", code: "withdrawal", amount: "25000", debit: `org_acme/sandbox/virtual_account/${accountId}/USD`, credit: expect.stringMatching(/^org_acme\/sandbox\/world\/rail:ach\/USD#\d+$/), resolves: undefined },
      { id: `${created.id}/fee`, kind: "pending", code: "withdrawal.fee", amount: "100", debit: `org_acme/sandbox/virtual_account/${accountId}/USD`, credit: expect.stringMatching(/^org_acme\/sandbox\/fees\/service\/USD#\d+$/), resolves: undefined }
    ])

    await advance(2_000)
    expectWire(await read(created.id), { status: "processing", stage: undefined })
    await advance(2_000)
    const sent = await read(created.id)
    expect(sent.status).toBe("processing")
    expect(sent.destination).toEqual({ type: "external_bank", achTraceNumber: expect.stringMatching(/^\d{15}$/), assetAmount: { code: "USD", amount: "250.00" } })
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "749.00", pending: "251.00" }])
    // Once sent it can no longer be cancelled.
    expectProblem(await acme.call("POST", `/v2/payouts/${created.id}/cancel`, undefined, idem()), { type: "CONFLICT", status: 409, instance: `/sandbox/v2/payouts/${created.id}/cancel` })

    // START_MS is a Sunday: ACH settles on Monday at 14:00 UTC.
    const monday = Date.parse("2026-03-02T14:00:00.000Z")
    await advance(monday - (await now()) - 1)
    expect((await read(created.id)).status).toBe("processing")
    await advance(1)
    const completed = await read(created.id)
    expect(completed).toMatchObject({ status: "completed", updatedAt: iso(monday), destination: sent.destination })
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "749.00", pending: "0.00" }])
    // Completion posts both holds, whole.
    expect((await ledgerOf(created.id)).slice(2).map((t) => [t.kind, t.code, t.amount, t.resolves])).toEqual([
      ["post", "withdrawal.settle", "25000", `${created.id}/payout`],
      ["post", "withdrawal.settle", "100", `${created.id}/fee`]
    ])

    const events = await payoutEvents(created.id)
    expect(events.map((e) => [e.type, e.data.sequence, e.data.occurredAt])).toEqual([
      ["transaction.created", 1, iso(createdAt)],
      ["transaction.processing", 2, iso(createdAt + 2_000)],
      ["transaction.completed", 3, iso(monday)]
    ])
    expect(events[0]!.data).toMatchObject({ type: "withdrawal", clientReferenceId: "inv-42" })
    // Opened in no stage: stage is omitted, not null (rule 3).
    expect(events[0]!.data).not.toHaveProperty("stage")
    expect(events[2]!.data).toMatchObject({ payout: { rail: "ach" }, fees: created.fees, destination: sent.destination })
  })

  it("each rail family carries its references: fedwire IMAD at sending and OMAD after completion, international_wire a UETR, rtp and fednow an id at completion, sepa and faster_payments none", async () => {
    const { customerId, accountId } = await fundedAccount("USD", "5000.00")
    const send = async (rail: keyof typeof recipientBodies, from = accountId, owner = customerId, amount = "100.00") => {
      const recipientId = await whitelist(owner, recipientBodies[rail])
      const r = await payout({
        source: { type: "virtual_account", virtualAccountId: from },
        destination: { type: "external_bank", whitelistRecipientId: recipientId },
        amount,
        rail,
        purpose: "payroll"
      })
      expect(r.status, r.text).toBe(201)
      return r.json.id as string
    }
    const fedwire = await send("fedwire")
    const wire = await send("international_wire")
    const rtp = await send("rtp")
    const fednow = await send("fednow")
    // Fees: fedwire 15, international_wire 25, rtp and fednow 1 each.
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "4558.00", pending: "442.00" }])
    await advance(4_000)
    expect((await read(fedwire)).destination).toEqual({ type: "external_bank", fedwireImad: expect.stringMatching(/^\d{8}FOSB[0-9A-F]{4}\d{6}$/), assetAmount: { code: "USD", amount: "100.00" } })
    expect((await read(wire)).destination.swiftUetr).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect((await read(rtp)).destination).toEqual({ type: "external_bank", assetAmount: { code: "USD", amount: "100.00" } })
    await advance(5_000)
    expect(await read(rtp)).toMatchObject({ status: "completed", destination: { rtpTransactionId: expect.stringMatching(/^\d{8}FOS[0-9A-F]{24}$/) } })
    expect(await read(fednow)).toMatchObject({ status: "completed", destination: { fedNowMessageId: expect.stringMatching(/^\d{8}FOS[0-9A-F]{24}$/) } })
    await advance(2 * 3600_000 - 5_000)
    const fedwireDone = await read(fedwire)
    expect(fedwireDone.status).toBe("completed")
    expect(fedwireDone.destination.fedwireOmad).toBeUndefined()
    await advance(60_000)
    expect((await read(fedwire)).destination.fedwireOmad).toMatch(/^\d{8}FOSR[0-9A-F]{4}\d{6}$/)
    await advance(2 * 3600_000)
    expect((await read(wire)).status).toBe("completed")
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "4558.00", pending: "0.00" }])

    const eur = await fundedAccount("EUR", "300.00")
    const sepa = await send("sepa", eur.accountId, eur.customerId)
    const gbp = await fundedAccount("GBP", "300.00")
    const fps = await send("faster_payments", gbp.accountId, gbp.customerId)
    await advance(4_000 + 10_000)
    expect(await read(fps)).toMatchObject({ status: "completed", destination: { type: "external_bank", assetAmount: { code: "GBP", amount: "100.00" } } })
    expect(Object.keys((await read(fps)).destination)).toEqual(["type", "assetAmount"])
    await advance(2 * 86_400_000)
    expect(await read(sepa)).toMatchObject({ status: "completed", destination: { type: "external_bank", assetAmount: { code: "EUR", amount: "100.00" } } })
    expect(Object.keys((await read(sepa)).destination)).toEqual(["type", "assetAmount"])
    expect(await balances(eur.accountId)).toEqual([{ code: "EUR", available: "199.00", pending: "0.00" }])
    expect(await balances(gbp.accountId)).toEqual([{ code: "GBP", available: "199.00", pending: "0.00" }])
  })

  it("refuses what it cannot pay, reserving nothing", async () => {
    const { customerId, accountId, recipientId } = await (async () => {
      const funded = await fundedAccount("USD", "100.00")
      return { ...funded, recipientId: await whitelist(funded.customerId, recipientBodies.ach) }
    })()
    const body = {
      source: { type: "virtual_account", virtualAccountId: accountId },
      destination: { type: "external_bank", whitelistRecipientId: recipientId },
      amount: "99.50",
      purpose: "supplier_payment"
    }
    expectProblem(await payout(body, {}), { type: "IDEMPOTENCY_KEY_REQUIRED", status: 400, instance: "/sandbox/v2/payouts" })
    // 99.50 and the 1.00 fee is more than 100.00.
    const key = idem()
    expectProblem(await payout(body, key), { type: "INSUFFICIENT_FUNDS", status: 422, instance: "/sandbox/v2/payouts" })
    expectProblem(await payout({ ...body, amount: "0" }), { type: "AMOUNT_OUT_OF_RANGE", status: 422, instance: "/sandbox/v2/payouts" })
    expectProblem(await payout({ ...body, amount: "1.001" }), { type: "VALIDATION_ERROR", status: 400, instance: "/sandbox/v2/payouts" })
    expectProblem(await payout({ ...body, rail: "fedwire" }), { type: "RECIPIENT_VALIDATION_FAILED", status: 422, instance: "/sandbox/v2/payouts" })
    expectProblem(await payout({ ...body, asset: "EUR" }), { type: "VIRTUAL_ACCOUNT_ASSET_MISMATCH", status: 422, instance: "/sandbox/v2/payouts" })
    expectProblem(await payout({ ...body, purpose: "  " }), { type: "VALIDATION_ERROR", status: 400, instance: "/sandbox/v2/payouts" })
    const sepaRecipient = await whitelist(customerId, recipientBodies.sepa)
    expectProblem(await payout({ ...body, destination: { type: "external_bank", whitelistRecipientId: sepaRecipient } }), {
      type: "UNPROCESSABLE_ENTITY",
      status: 422,
      instance: "/sandbox/v2/payouts"
    })
    expectProblem(await payout({ ...body, destination: { type: "external_crypto", chain: "base", address: "0x52908400098527886e0f7030069857d2e4169ee7" } }), {
      type: "UNPROCESSABLE_ENTITY",
      status: 422,
      instance: "/sandbox/v2/payouts"
    })
    // Another customer's recipient is no recipient of this one.
    const other = await onboardedCustomer()
    const theirs = await whitelist(other, recipientBodies.ach)
    expectProblem(await payout({ ...body, destination: { type: "external_bank", whitelistRecipientId: theirs } }), {
      type: "RECIPIENT_VALIDATION_FAILED",
      status: 422,
      instance: "/sandbox/v2/payouts"
    })
    expectProblem(await payout(body, idem(), rival), { type: "VIRTUAL_ACCOUNT_NOT_FOUND", status: 404, instance: "/sandbox/v2/payouts" })
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "100.00", pending: "0.00" }])
    expect((await acme.call("GET", "/v2/transactions?type=withdrawal")).json.meta.total).toBe(0)
    // The key a 4xx left is free: after a smaller amount it pays.
    const paid = await payout({ ...body, amount: "99.00" }, key)
    expect(paid.status, paid.text).toBe(201)
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "0.00", pending: "100.00" }])
    expectProblem(await acme.call("GET", "/v2/payouts/txn_000000000000000000000000"), { type: "NOT_FOUND", status: 404, instance: "/sandbox/v2/payouts/txn_000000000000000000000000" })
  })
})

describe("the order of a payout's refusals", () => {
  it("a request that breaks two rules gets the first: the request alone, then existence, then state, then funds", async () => {
    const { customerId, walletId } = await fundedWallet("10")
    const toAddress = { type: "external_crypto", chain: "base", address: "0x52908400098527886e0f7030069857d2e4169ee7" }
    const body = { source: { type: "wallet", walletId }, destination: toAddress, asset: "USDC", amount: "5", purpose: "supplier_payment" }
    const unknownWallet = { type: "wallet", walletId: "wlt_000000000000000000000000" }
    const first = async (broken: Record<string, unknown>, type: string, status: number) =>
      expectProblem(await payout({ ...body, ...broken }), { type, status, instance: "/sandbox/v2/payouts" })
    // The request alone, before anything is read: a missing member, then a source that cannot pay that destination.
    await first({ source: unknownWallet, asset: undefined }, "VALIDATION_ERROR", 400)
    await first({ source: unknownWallet, destination: { type: "external_bank", whitelistRecipientId: "wlr_000000000000000000000000" } }, "UNPROCESSABLE_ENTITY", 422)
    await first({ source: unknownWallet, asset: "USD" }, "UNPROCESSABLE_ENTITY", 422)
    // Existence, before the amount's state and the funds.
    await first({ source: unknownWallet, amount: "0" }, "WALLET_NOT_FOUND", 404)
    await first({ source: unknownWallet, amount: "500" }, "WALLET_NOT_FOUND", 404)
    // State before funds: an amount of nothing, or one the wallet cannot cover.
    await first({ amount: "0" }, "AMOUNT_OUT_OF_RANGE", 422)
    await first({ amount: "500" }, "INSUFFICIENT_FUNDS", 422)
    // A retired wallet (rotated, with nothing in it) is refused for its state, not for its funds; its missing asset first.
    const spare = await acme.call("POST", `/v2/customers/${customerId}/wallets`, { chain: "base" }, idem())
    const rotated = await acme.call("POST", `/v2/wallets/${spare.json.id}/rotate`, undefined, idem())
    expect(rotated.status, rotated.text).toBe(201)
    const retired = { source: { type: "wallet", walletId: spare.json.id } }
    await first({ ...retired, amount: "500" }, "WALLET_NOT_ACTIVE", 422)
    await first({ ...retired, asset: undefined }, "VALIDATION_ERROR", 400)
  })
})

describe("a crypto payout", () => {
  it("from a wallet to an address on its chain: network fee reserved, broadcast with its hash, completed after the chain's confirmations", async () => {
    const { customerId, walletId } = await fundedWallet("500")
    const address = "0x52908400098527886E0F7030069857D2E4169EE7"
    const created = await payout({
      source: { type: "wallet", walletId },
      destination: { type: "external_crypto", chain: "base", address: address.toLowerCase() },
      asset: "USDC",
      amount: "120.5",
      purpose: "treasury_transfer"
    })
    expect(created.status, created.text).toBe(201)
    const createdAt = await now()
    expectWire(created.json, {
      type: "withdrawal",
      status: "pending",
      customerId,
      source: { type: "wallet", walletId, assetAmount: { code: "USDC", amount: "121.000000", chain: "base" } },
      destination: { type: "external_crypto", address, txHash: undefined, assetAmount: { code: "USDC", amount: "120.500000", chain: "base" } },
      fees: [{ owner: "network", assetAmount: { code: "USDC", amount: "0.500000", chain: "base" }, invoiced: false }]
    })
    expect(created.json.payout).toBeUndefined()
    expect(await balances(walletId)).toEqual([{ code: "USDC", chain: "base", available: "379.000000", pending: "121.000000" }])
    await advance(4_000)
    const sent = await read(created.json.id)
    expect(sent).toMatchObject({ status: "processing", destination: { txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) } })
    await advance(60_000)
    expect(await read(created.json.id)).toMatchObject({ status: "completed", destination: sent.destination })
    expect(await balances(walletId)).toEqual([{ code: "USDC", chain: "base", available: "379.000000", pending: "0.000000" }])
    expect((await payoutEvents(created.json.id)).map((e) => [e.type, e.data.sequence, e.data.occurredAt])).toEqual([
      ["transaction.created", 1, iso(createdAt)],
      ["transaction.processing", 2, iso(createdAt + 2_000)],
      ["transaction.completed", 3, iso(createdAt + 4_000 + 60_000)]
    ])
  })

  it("to a registered address; above the travel-rule threshold it needs travelRule", async () => {
    const { customerId, walletId } = await fundedWallet("5000")
    const registered = await acme.call("POST", `/v2/customers/${customerId}/registered-addresses`, { chain: "base", address: "0x52908400098527886e0f7030069857d2e4169ee7" }, idem())
    const body = { source: { type: "wallet", walletId }, destination: { type: "registered_address", registeredAddressId: registered.json.id }, asset: "USDC", amount: "1000", purpose: "treasury_transfer" }
    expectProblem(await payout(body), { type: "MISSING_REQUIRED_FIELDS", status: 422, instance: "/sandbox/v2/payouts" })
    const paid = await payout({ ...body, travelRule: { beneficiaryName: "Ada Lovelace", beneficiaryCountry: "GBR", walletType: "unhosted" } })
    expect(paid.status, paid.text).toBe(201)
    expect(paid.json.destination.address).toBe(registered.json.address)
    expectProblem(await payout({ ...body, destination: { type: "external_crypto", chain: "solana", address: "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T" } }), {
      type: "UNPROCESSABLE_ENTITY",
      status: 422,
      instance: "/sandbox/v2/payouts"
    })
    expectProblem(await payout({ ...body, amount: "1", destination: { type: "external_crypto", chain: "base", address: "0x52908400098527886E0F7030069857D2E4169ee7" } }), {
      type: "INVALID_ADDRESS_FORMAT",
      status: 400,
      instance: "/sandbox/v2/payouts"
    })
  })
})

describe("cancelling a payout", () => {
  it("voids the reservation while not yet sent (transaction.cancelled), answers a cancelled payout again, and needs an Idempotency-Key", async () => {
    const { accountId, payout: created } = await achPayout()
    const path = `/v2/payouts/${created.id}/cancel`
    expectProblem(await acme.call("POST", path), { type: "IDEMPOTENCY_KEY_REQUIRED", status: 400, instance: `/sandbox${path}` })
    await advance(2_000)
    const cancelled = await acme.call("POST", path, undefined, idem())
    expect(cancelled.status, cancelled.text).toBe(200)
    expectWire(cancelled.json, { status: "cancelled", failureCode: undefined, stage: undefined })
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "1000.00", pending: "0.00" }])
    expect((await acme.call("POST", path, undefined, idem())).json.status).toBe("cancelled")
    // The clock finds nothing left to do.
    await advance(3 * 86_400_000)
    expect((await read(created.id)).status).toBe("cancelled")
    const events = await payoutEvents(created.id)
    expect(events.map((e) => [e.type, e.data.sequence])).toEqual([["transaction.created", 1], ["transaction.processing", 2], ["transaction.cancelled", 3]])
    expect(events[2]!.data).toMatchObject({ status: "cancelled", reasonCode: "client_cancelled", cancellationReason: "client_cancelled" })
    expect(events[2]!.data.failureCode).toBeUndefined()
    // A deposit is no payout.
    const deposit = (await acme.call("GET", "/v2/transactions?type=deposit")).json.data[0]
    expectProblem(await acme.call("POST", `/v2/payouts/${deposit.id}/cancel`, undefined, idem()), { type: "NOT_FOUND", status: 404, instance: `/sandbox/v2/payouts/${deposit.id}/cancel` })
  })
})

describe("failures", () => {
  const codes = [
    "travel_rule_rejected",
    "rail_policy_rejected",
    "rail_unavailable",
    "insufficient_funds_at_settle",
    "provider_rejected",
    "capability_suspended",
    "compliance_hold",
    "compliance_review_rejected"
  ] as const
  for (const code of codes) {
    it(`${code}: the payout fails with its catalog failureMessage and the available balance is exactly what it was`, async () => {
      const { accountId, payout: created } = await achPayout()
      await advance(4_000)
      expect((await read(created.id)).destination.achTraceNumber).toBeDefined()
      const failed = await acme.call("POST", `/v2/simulate/transactions/${created.id}/terminal`, { outcome: "failed", failureCode: code, reason: "bank said no" })
      expect(failed.status, failed.text).toBe(200)
      // Exactly the two holds are voided, nothing else moves.
      expect((await ledgerOf(created.id)).map((t) => [t.kind, t.amount, t.resolves])).toEqual([
        ["pending", "25000", undefined],
        ["pending", "100", undefined],
        ["void", "25000", `${created.id}/payout`],
        ["void", "100", `${created.id}/fee`]
      ])
      expect(failed.json).toMatchObject({ status: "failed", failureCode: code })
      expect(failed.json.failureMessage).not.toContain("bank said no")
      expect(await balances(accountId)).toEqual([{ code: "USD", available: "1000.00", pending: "0.00" }])
      const last = (await payoutEvents(created.id)).at(-1)!
      expect(last).toMatchObject({ type: "transaction.failed", data: { sequence: 3, failureCode: code, reasonCode: code, failureMessage: failed.json.failureMessage } })
      await advance(3 * 86_400_000)
      expect((await read(created.id)).status).toBe("failed")
      expect(await balances(accountId)).toEqual([{ code: "USD", available: "1000.00", pending: "0.00" }])
    })
  }

  it("idempotency rule 6: a retry with the key of a payout that failed answers the failed payout and pays nothing again", async () => {
    const key = idem()
    const { accountId, recipientId, payout: created } = await achPayout({}, key)
    const body = {
      source: { type: "virtual_account", virtualAccountId: accountId },
      destination: { type: "external_bank", whitelistRecipientId: recipientId },
      amount: "250.00",
      purpose: "supplier_payment"
    }
    // Before it fails a retry is the original response.
    const early = await payout(body, key)
    expect(early.headers.get("idempotency-replayed")).toBe("true")
    expect(early.json).toEqual(created)
    await acme.call("POST", `/v2/simulate/transactions/${created.id}/terminal`, { outcome: "failed", failureCode: "rail_unavailable" })
    const retried = await payout(body, key)
    expect(retried.status).toBe(201)
    expect(retried.headers.get("idempotency-replayed")).toBe("true")
    expect(retried.json).toMatchObject({ id: created.id, status: "failed", failureCode: "rail_unavailable" })
    expect((await acme.call("GET", "/v2/transactions?type=withdrawal")).json.meta.total).toBe(1)
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "1000.00", pending: "0.00" }])
    expectProblem(await payout({ ...body, amount: "10.00" }, key), { type: "IDEMPOTENCY_KEY_CONFLICT", status: 409, instance: "/sandbox/v2/payouts" })
    // A fresh key pays.
    expect((await payout(body)).status).toBe(201)
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "749.00", pending: "251.00" }])
  })
})

describe("a bank return", () => {
  it("after completion fails the payout with returned_by_sender, its Nacha code and reason, and books the principal back as new transfers", async () => {
    const { accountId, payout: created } = await achPayout()
    const path = `/v2/simulate/transactions/${created.id}/return`
    expectProblem(await acme.call("POST", path, { returnCode: "R01" }), { type: "SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY", status: 422, instance: `/sandbox${path}` })
    await advance(2 * 86_400_000)
    expect((await read(created.id)).status).toBe("completed")
    expectProblem(await acme.call("POST", path, { returnCode: "XYZ" }), { type: "VALIDATION_ERROR", status: 400, instance: `/sandbox${path}` })
    const returned = await acme.call("POST", path, { returnCode: "R03" })
    expect(returned.status, returned.text).toBe(200)
    const at = await now()
    expect(returned.json).toMatchObject({
      status: "failed",
      failureCode: "returned_by_sender",
      failureMessage: "The bank returned the transfer.",
      returnedAt: iso(at),
      returnReason: "No account or unable to locate account",
      returnCode: "R03"
    })
    // The principal is back, as a new transfer from the rail's world account; the fee is not.
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "999.00", pending: "0.00" }])
    const ledger = await ledgerOf(created.id)
    expect(ledger.map((t) => [t.kind, t.code, t.amount])).toEqual([
      ["pending", "withdrawal", "25000"],
      ["pending", "withdrawal.fee", "100"],
      ["post", "withdrawal.settle", "25000"],
      ["post", "withdrawal.settle", "100"],
      ["posted", "withdrawal.return", "25000"]
    ])
    // System accounts are sharded by transfer id (Ledger.ts): the same holder, whatever the shard.
    const unsharded = (account: string) => account.replace(/#\d+$/, "")
    expect([unsharded(ledger[4]!.debit), ledger[4]!.credit]).toEqual([unsharded(ledger[0]!.credit), ledger[0]!.debit])
    const events = await payoutEvents(created.id)
    expect(events.map((e) => [e.type, e.data.sequence])).toEqual([
      ["transaction.created", 1],
      ["transaction.processing", 2],
      ["transaction.completed", 3],
      ["transaction.failed", 4]
    ])
    expect(events[3]!.data).toMatchObject({ failureCode: "returned_by_sender", returnedAt: iso(at), returnReason: "No account or unable to locate account", returnCode: "R03" })
    expectProblem(await acme.call("POST", path, { returnCode: "R03" }), { type: "RESOURCE_TERMINAL", status: 409, instance: `/sandbox${path}` })
  })

  it("takes any code on a wire, and refuses crypto payouts", async () => {
    const { customerId, accountId } = await fundedAccount("EUR", "500.00")
    const recipientId = await whitelist(customerId, recipientBodies.sepa)
    const created = await payout({ source: { type: "virtual_account", virtualAccountId: accountId }, destination: { type: "external_bank", whitelistRecipientId: recipientId }, amount: "100.00", purpose: "payroll" })
    await advance(3 * 86_400_000)
    const returned = await acme.call("POST", `/v2/simulate/transactions/${created.json.id}/return`, { returnCode: "AC04", returnReason: "Closed account number" })
    expect(returned.json).toMatchObject({ status: "failed", returnCode: "AC04", returnReason: "Closed account number" })
    expect(await balances(accountId)).toEqual([{ code: "EUR", available: "499.00", pending: "0.00" }])
    const { walletId } = await fundedWallet("50")
    const crypto = await payout({ source: { type: "wallet", walletId }, destination: { type: "external_crypto", chain: "base", address: "0x52908400098527886e0f7030069857d2e4169ee7" }, asset: "USDC", amount: "1", purpose: "x" })
    await advance(120_000)
    expectProblem(await acme.call("POST", `/v2/simulate/transactions/${crypto.json.id}/return`, { returnCode: "R01" }), {
      type: "SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY",
      status: 422,
      instance: `/sandbox/v2/simulate/transactions/${crypto.json.id}/return`
    })
  })
})

describe("compliance review of payouts", () => {
  it("names supporting document types that can be uploaded: refused for missing documents, the named type uploaded for the customer, accepted", async () => {
    const { customerId, accountId } = await fundedAccount("USD", "20000.00")
    const recipientId = await whitelist(customerId, recipientBodies.fedwire)
    const body = { source: { type: "virtual_account", virtualAccountId: accountId }, destination: { type: "external_bank", whitelistRecipientId: recipientId }, amount: "10000.00", purpose: "supplier_payment" }
    const requirements = await acme.call("POST", "/v2/payouts/requirements", { source: { type: "virtual_account" }, destinationType: "external_bank", rail: "fedwire", asset: "USD", country: "USA", amount: "10000.00" })
    const accepted: Array<string> = requirements.json.documents.acceptedTypes
    expect(accepted).toEqual(["invoice", "contract", "bank_statement", "proof_of_address"])
    const refused = expectProblem(await payout(body), { type: "MISSING_REQUIRED_FIELDS", status: 422, instance: "/sandbox/v2/payouts" })
    for (const type of accepted) expect(refused.detail).toContain(type)
    // Each type the refusal and the requirements name is one POST /v2/documents takes, and it carries the payout.
    for (const type of accepted) {
      const documentId = await acme.upload(type, { customerId })
      const created = await payout({ ...body, amount: "10.00", documents: [documentId] })
      expect(created.status, `${type}: ${created.text}`).toBe(201)
    }
    const created = await payout({ ...body, documents: [await acme.upload("invoice", { customerId })] })
    expect(created.status, created.text).toBe(201)
    expect(created.json).toMatchObject({ status: "pending", stage: "under_review" })
  })

  it("sends a payout at the amount threshold to review at creation, which clears on the clock; a review after sending opens a new period", async () => {
    const { customerId, accountId } = await fundedAccount("USD", "20000.00")
    const recipientId = await whitelist(customerId, recipientBodies.fedwire)
    const body = { source: { type: "virtual_account", virtualAccountId: accountId }, destination: { type: "external_bank", whitelistRecipientId: recipientId }, amount: "10000.00", purpose: "supplier_payment" }
    // A payout the rules review needs its supporting documents, as POST /v2/payouts/requirements says.
    const requirements = await acme.call("POST", "/v2/payouts/requirements", { source: { type: "virtual_account" }, destinationType: "external_bank", rail: "fedwire", asset: "USD", country: "USA", amount: "10000.00" })
    expect(requirements.json.documents.required).toBe(true)
    expectProblem(await payout(body), { type: "MISSING_REQUIRED_FIELDS", status: 422, instance: "/sandbox/v2/payouts" })
    const docs = await deuDocuments(acme)
    const created = await payout({ ...body, documents: [Object.values(docs)[0]] })
    expect(created.status, created.text).toBe(201)
    expect(created.json).toMatchObject({ status: "pending", stage: "under_review" })
    const id = created.json.id
    // Born in review: transaction.created carries the stage the read shows.
    expect((await payoutEvents(id)).map((e) => [e.type, e.data.sequence, e.data.stage])).toEqual([
      ["transaction.created", 1, "under_review"],
      ["transaction.under_review", 2, undefined]
    ])
    await advance(10 * 60_000)
    expect(await read(id)).toMatchObject({ status: "pending", stage: "under_review" })
    // The caller is asked for something, then review again: a new period.
    await acme.call("POST", `/v2/simulate/transactions/${id}/review`, { action: "request_information" })
    await acme.call("POST", `/v2/simulate/transactions/${id}/review`, { action: "enter" })
    // Leaving review and entering it again is the same period.
    await acme.call("POST", `/v2/simulate/transactions/${id}/review`, { action: "clear" })
    expectWire(await read(id), { status: "processing", stage: undefined })
    await acme.call("POST", `/v2/simulate/transactions/${id}/review`, { action: "enter" })
    await acme.call("POST", `/v2/simulate/transactions/${id}/review`, { action: "clear" })
    // The world model's own review timer finds it out of review and does nothing.
    await advance(20 * 60_000)
    const sent = await read(id)
    expectWire(sent, { status: "processing", stage: undefined, destination: { fedwireImad: expect.any(String) } })
    // After sending, a review opens a new period.
    await acme.call("POST", `/v2/simulate/transactions/${id}/review`, { action: "enter" })
    await advance(3 * 3600_000)
    expect((await read(id)).status).toBe("processing")
    await acme.call("POST", `/v2/simulate/transactions/${id}/review`, { action: "clear" })
    await advance(2 * 3600_000)
    expect((await read(id)).status).toBe("completed")
    expect((await payoutEvents(id)).map((e) => [e.type, e.data.sequence])).toEqual([
      ["transaction.created", 1],
      ["transaction.under_review", 2],
      ["transaction.under_review", 3],
      ["transaction.processing", 4],
      ["transaction.under_review", 5],
      ["transaction.completed", 6]
    ])
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "9985.00", pending: "0.00" }])
  })

  it("a reviewer rejecting the supporting document fails the payout with compliance_rejected and transaction.rejected, returning the reservation", async () => {
    const { accountId, payout: created } = await achPayout()
    await acme.call("POST", `/v2/simulate/transactions/${created.id}/review`, { action: "enter" })
    const rejected = await acme.call("POST", `/v2/simulate/transactions/${created.id}/review`, { action: "reject", acceptedDocumentTypes: ["invoice"] })
    expect(rejected.json).toMatchObject({ status: "failed", failureCode: "compliance_rejected" })
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "1000.00", pending: "0.00" }])
    const last = (await payoutEvents(created.id)).at(-1)!
    expect(last).toMatchObject({ type: "transaction.rejected", data: { status: "failed", reasonCode: "compliance_rejected", acceptedDocumentTypes: ["invoice"] } })
    // A cancel after the rejection finds the payout failed.
    expectProblem(await acme.call("POST", `/v2/payouts/${created.id}/cancel`, undefined, idem()), { type: "CONFLICT", status: 409, instance: `/sandbox/v2/payouts/${created.id}/cancel` })
  })
})

describe("a restricted customer", () => {
  it("fails its unsent payouts with capability_suspended, returning the reservation, keeps a sent one going, and cannot make new ones", async () => {
    const { customerId, accountId, recipientId, payout: first } = await achPayout()
    await advance(4_000)
    const body = { source: { type: "virtual_account", virtualAccountId: accountId }, destination: { type: "external_bank", whitelistRecipientId: recipientId }, amount: "100.00", purpose: "payroll" }
    const second = (await payout(body)).json
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "648.00", pending: "352.00" }])
    const restricted = await acme.call("POST", `/v2/simulate/customers/${customerId}/restrict`, {})
    expect(restricted.status, restricted.text).toBe(200)
    expect(await read(second.id)).toMatchObject({ status: "failed", failureCode: "capability_suspended" })
    expect(await read(first.id)).toMatchObject({ status: "processing" })
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "749.00", pending: "251.00" }])
    expectProblem(await payout(body), { type: "UNPROCESSABLE_ENTITY", status: 422, instance: "/sandbox/v2/payouts" })
    await advance(2 * 86_400_000)
    expect((await read(first.id)).status).toBe("completed")
  })

  it("a restricted organization's payouts are refused with 403 ORGANIZATION_ACCESS_SUSPENDED; reads go on", async () => {
    const { accountId, recipientId, payout: first } = await achPayout()
    expect((await acme.call("POST", "/v2/simulate/organization/restrict")).status).toBe(200)
    const body = { source: { type: "virtual_account", virtualAccountId: accountId }, destination: { type: "external_bank", whitelistRecipientId: recipientId }, amount: "1.00", purpose: "payroll" }
    expectProblem(await payout(body), { type: "ORGANIZATION_ACCESS_SUSPENDED", status: 403, instance: "/sandbox/v2/payouts" })
    expectProblem(await acme.call("POST", `/v2/payouts/${first.id}/cancel`, undefined, idem()), {
      type: "ORGANIZATION_ACCESS_SUSPENDED",
      status: 403,
      instance: `/sandbox/v2/payouts/${first.id}/cancel`
    })
    expect((await acme.call("GET", `/v2/payouts/${first.id}`)).status).toBe(200)
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "749.00", pending: "251.00" }])
  })
})

describe("a cancel during compliance review", () => {
  it("races the review: a rejection ends the payout failed (transaction.failed, compliance_rejected); a cleared review cancels it", async () => {
    const { accountId, recipientId, payout: created } = await achPayout()
    await acme.call("POST", `/v2/simulate/transactions/${created.id}/review`, { action: "enter" })
    const asked = await acme.call("POST", `/v2/payouts/${created.id}/cancel`, undefined, idem())
    expect(asked.status, asked.text).toBe(200)
    expect(asked.json).toMatchObject({ status: "pending", stage: "under_review" })
    await acme.call("POST", `/v2/simulate/transactions/${created.id}/review`, { action: "reject", acceptedDocumentTypes: ["invoice"] })
    expect(await read(created.id)).toMatchObject({ status: "failed", failureCode: "compliance_rejected" })
    expect((await payoutEvents(created.id)).map((e) => [e.type, e.data.sequence, e.data.failureCode])).toEqual([
      ["transaction.created", 1, undefined],
      ["transaction.under_review", 2, undefined],
      ["transaction.failed", 3, "compliance_rejected"]
    ])
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "1000.00", pending: "0.00" }])

    const body = { source: { type: "virtual_account", virtualAccountId: accountId }, destination: { type: "external_bank", whitelistRecipientId: recipientId }, amount: "10.00", purpose: "payroll" }
    const second = (await payout(body)).json
    await acme.call("POST", `/v2/simulate/transactions/${second.id}/review`, { action: "enter" })
    await acme.call("POST", `/v2/payouts/${second.id}/cancel`, undefined, idem())
    await acme.call("POST", `/v2/simulate/transactions/${second.id}/review`, { action: "clear" })
    expect(await read(second.id)).toMatchObject({ status: "cancelled" })
    expect((await payoutEvents(second.id)).map((e) => e.type)).toEqual(["transaction.created", "transaction.under_review", "transaction.cancelled"])
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "1000.00", pending: "0.00" }])
  })
})

describe("requests for information", () => {
  const rfiEvents = async (id: string) => (await outboxEvents(engine)).filter((e) => e.type.startsWith("rfi.") && e.data.rfiId === id)

  it("walks the whole lifecycle with every rfi.* event, holding the payout while the caller is asked and releasing it when resolved", async () => {
    const { customerId, accountId, payout: created } = await achPayout()
    const publishedAt = await now()
    const published = await acme.call("POST", `/v2/simulate/transactions/${created.id}/rfi`, { questions: [{ text: "What is the payment for?" }], deadlineSeconds: 86_400 })
    expect(published.status, published.text).toBe(201)
    const rfi = published.json
    expect(rfi).toEqual({
      id: expect.stringMatching(/^rfi_[0-9a-z]{24}$/),
      customerId,
      transactionId: created.id,
      status: "awaiting_response",
      questions: [{ id: "q1", text: "What is the payment for?", kind: "text", askedAt: iso(publishedAt) }],
      deadline: iso(publishedAt + 86_400_000),
      responses: [],
      createdAt: iso(publishedAt),
      updatedAt: iso(publishedAt)
    })
    expect((await acme.call("GET", `/v2/rfis/${rfi.id}`)).json).toEqual(rfi)
    expectProblem(await rival.call("GET", `/v2/rfis/${rfi.id}`), { type: "NOT_FOUND", status: 404, instance: `/sandbox/v2/rfis/${rfi.id}` })
    expect(await read(created.id)).toMatchObject({ status: "pending", stage: "awaiting_customer_action", hasRfi: true })
    // The payout waits for the caller: the clock does not move it.
    await advance(60_000)
    expect(await read(created.id)).toMatchObject({ status: "pending", stage: "awaiting_customer_action" })

    const path = `/v2/rfis/${rfi.id}/responses`
    expectProblem(await acme.call("POST", path, { answers: [{ questionId: "q1", text: "Invoice 42" }] }), { type: "IDEMPOTENCY_KEY_REQUIRED", status: 400, instance: `/sandbox${path}` })
    const bad = expectProblem(await acme.call("POST", path, { answers: [{ questionId: "q9", text: "?" }] }, idem()), { type: "VALIDATION_ERROR", status: 400, instance: `/sandbox${path}` })
    expect(bad.errors).toEqual([{ pointer: "/answers/0/questionId", detail: "must be the id of one of the RFI's questions" }])
    const answered = await acme.call("POST", path, { answers: [{ questionId: "q1", text: "Invoice 42" }] }, idem())
    expect(answered.status, answered.text).toBe(201)
    expect(answered.json).toMatchObject({ status: "under_review", responses: [{ submittedAt: iso(publishedAt + 60_000), answers: [{ questionId: "q1", text: "Invoice 42" }] }] })
    expect(await read(created.id)).toMatchObject({ stage: "under_review", hasRfi: true })
    // Adding information fires response_submitted again.
    const docs = await deuDocuments(acme)
    const added = await acme.call("POST", path, { answers: [{ questionId: "q1", documentIds: [Object.values(docs)[0]] }] }, idem())
    expect(added.status, added.text).toBe(201)
    expect(added.json.responses).toHaveLength(2)

    const more = await acme.call("POST", `/v2/simulate/rfis/${rfi.id}`, { action: "request_more", questions: [{ text: "Send the invoice", kind: "document" }] })
    expect(more.json).toMatchObject({ status: "awaiting_response", questions: [{ id: "q1" }, { id: "q2", kind: "document" }] })
    expect(await read(created.id)).toMatchObject({ stage: "awaiting_customer_action" })
    const extended = await acme.call("POST", `/v2/simulate/rfis/${rfi.id}`, { action: "extend_deadline", deadlineSeconds: 3 * 86_400 })
    expect(extended.json.deadline).toBe(iso((await now()) + 3 * 86_400_000))
    expectProblem(await acme.call("POST", `/v2/simulate/rfis/${rfi.id}`, { action: "extend_deadline", deadlineSeconds: 1 }), {
      type: "VALIDATION_ERROR",
      status: 400,
      instance: `/sandbox/v2/simulate/rfis/${rfi.id}`
    })
    await acme.call("POST", path, { answers: [{ questionId: "q2", text: "attached earlier" }] }, idem())
    const resolved = await acme.call("POST", `/v2/simulate/rfis/${rfi.id}`, { action: "resolve" })
    expect(resolved.json.status).toBe("resolved")
    expectWire(await read(created.id), { status: "processing", stage: undefined, hasRfi: false })
    expectProblem(await acme.call("POST", path, { answers: [{ questionId: "q1", text: "late" }] }, idem()), { type: "CONFLICT", status: 409, instance: `/sandbox${path}` })

    // Reopened before the payout is sent, then cancelled: the payout goes on.
    const reopened = await acme.call("POST", `/v2/simulate/rfis/${rfi.id}`, { action: "reopen", questions: [{ text: "Who is the beneficiary?" }] })
    expect(reopened.json).toMatchObject({ status: "awaiting_response", questions: [{ id: "q1" }, { id: "q2" }, { id: "q3" }] })
    expect(await read(created.id)).toMatchObject({ stage: "awaiting_customer_action", hasRfi: true })
    const cancelled = await acme.call("POST", `/v2/simulate/rfis/${rfi.id}`, { action: "cancel" })
    expect(cancelled.json.status).toBe("cancelled")
    expectWire(await read(created.id), { stage: undefined, hasRfi: false })
    await advance(2 * 86_400_000)
    expect(await read(created.id)).toMatchObject({ status: "completed" })
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "749.00", pending: "0.00" }])

    expect((await rfiEvents(rfi.id)).map((e) => e.type)).toEqual([
      "rfi.published",
      "rfi.response_submitted",
      "rfi.response_submitted",
      "rfi.more_info_requested",
      "rfi.deadline_extended",
      "rfi.response_submitted",
      "rfi.resolved",
      "rfi.more_info_requested",
      "rfi.cancelled"
    ])
    expect((await rfiEvents(rfi.id))[4]!.data).toEqual({ rfiId: rfi.id, customerId, transactionId: created.id, deadline: extended.json.deadline, occurredAt: expect.any(String) })
    // One review period per request answered: the first answer and the one after more was asked.
    expect((await payoutEvents(created.id)).map((e) => [e.type, e.data.sequence])).toEqual([
      ["transaction.created", 1],
      ["transaction.under_review", 2],
      ["transaction.under_review", 3],
      ["transaction.processing", 4],
      ["transaction.completed", 5]
    ])
  })

  it("an unanswered RFI expires at its deadline on the clock: rfi.cancelled, and the payout fails with compliance_hold, its reservation returned", async () => {
    const { accountId, payout: created } = await achPayout()
    const published = (await acme.call("POST", `/v2/simulate/transactions/${created.id}/rfi`, { questions: [{ text: "Source of funds?" }], deadlineSeconds: 3_600 })).json
    expectProblem(await acme.call("POST", `/v2/simulate/transactions/${created.id}/rfi`, { questions: [{ text: "again" }] }), {
      type: "CONFLICT",
      status: 409,
      instance: `/sandbox/v2/simulate/transactions/${created.id}/rfi`
    })
    await advance(3_600_000 - 1)
    expect((await acme.call("GET", `/v2/rfis/${published.id}`)).json.status).toBe("awaiting_response")
    await advance(1)
    expect((await acme.call("GET", `/v2/rfis/${published.id}`)).json.status).toBe("expired")
    expect(await read(created.id)).toMatchObject({ status: "failed", failureCode: "compliance_hold", hasRfi: false })
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "1000.00", pending: "0.00" }])
    expect((await rfiEvents(published.id)).map((e) => e.type)).toEqual(["rfi.published", "rfi.cancelled"])
    expectProblem(await acme.call("GET", "/v2/rfis/txn_1"), { type: "INVALID_OID_FORMAT", status: 400, instance: "/sandbox/v2/rfis/txn_1" })
  })

  it("a request that breaks two rules gets the first: the RFI, then the questions and documents its answers name, then its state", async () => {
    const { payout: created } = await achPayout()
    const rfi = (await acme.call("POST", `/v2/simulate/transactions/${created.id}/rfi`, { questions: [{ text: "What is the payment for?" }] })).json
    const path = `/v2/rfis/${rfi.id}/responses`
    const first = async (answers: ReadonlyArray<Record<string, unknown>>, type: string, status: number, client: Client = acme) =>
      expectProblem(await client.call("POST", path, { answers }, idem()), { type, status, instance: `/sandbox${path}` })
    const unknownQuestion = { questionId: "q9", text: "Rent" }
    const unknownDocument = { questionId: "q1", documentIds: ["doc_000000000000000000000000"] }
    // Resolved: the RFI takes no responses (409 CONFLICT), but what the answers name is checked first.
    expect((await acme.call("POST", `/v2/simulate/rfis/${rfi.id}`, { action: "resolve" })).status).toBe(200)
    await first([unknownQuestion], "NOT_FOUND", 404, rival)
    await first([unknownQuestion, unknownDocument], "VALIDATION_ERROR", 400)
    await first([unknownQuestion], "VALIDATION_ERROR", 400)
    await first([unknownDocument], "DOCUMENT_IDS_NOT_FOUND", 400)
    await first([{ questionId: "q1", text: "Rent" }], "CONFLICT", 409)
  })
})

describe("the world model's review rules", () => {
  it("review a payout to a recipient in a listed country, and the first payout to a saved recipient, when configured", async () => {
    await engine.close()
    engine = await makeEngine({ ...seedOf(orgSeed("acme"), orgSeed("rival")), worldModel: { payouts: { reviewCountries: ["GBR"], reviewNewRecipients: true, reviewMs: 60_000 } } } as never)
    acme = clientOf(engine.fetch, "http://fos", keysOf("acme").sandbox)
    rival = clientOf(engine.fetch, "http://fos", keysOf("rival").sandbox)
    const { customerId, accountId } = await fundedAccount("GBP", "500.00")
    const recipientId = await whitelist(customerId, recipientBodies.faster_payments)
    const docs = await deuDocuments(acme)
    const body = { source: { type: "virtual_account", virtualAccountId: accountId }, destination: { type: "external_bank", whitelistRecipientId: recipientId }, amount: "10.00", purpose: "payroll", documents: [Object.values(docs)[0]] }
    // GBR is a review country: every payout there is reviewed.
    const first = (await payout(body)).json
    const second = (await payout(body)).json
    expect([first.stage, second.stage]).toEqual(["under_review", "under_review"])
    await advance(60_000)
    expect(await read(first.id)).not.toHaveProperty("stage")
    await advance(20_000)
    expect((await read(first.id)).status).toBe("completed")

    // Only the first payout to a new registered address is reviewed.
    const { walletId } = await fundedWallet("100")
    const walletOwner = (await acme.call("GET", `/v2/wallets/${walletId}`)).json.customerId
    const registered = await acme.call("POST", `/v2/customers/${walletOwner}/registered-addresses`, { chain: "base", address: "0x52908400098527886e0f7030069857d2e4169ee7" }, idem())
    const crypto = { source: { type: "wallet", walletId }, destination: { type: "registered_address", registeredAddressId: registered.json.id }, asset: "USDC", amount: "1", purpose: "x" }
    expect((await payout(crypto)).json.stage).toBe("under_review")
    expect((await payout(crypto)).json).not.toHaveProperty("stage")
    // A payout to an address typed in is not to a saved recipient.
    expect((await payout({ ...crypto, destination: { type: "external_crypto", chain: "base", address: registered.json.address } })).json).not.toHaveProperty("stage")
  })
})

describe("a rejection without named document types", () => {
  it("accepts the payout document types, and keeps the supporting documents the payout was made with", async () => {
    const docs = await deuDocuments(acme)
    const { accountId, recipientId, payout: created } = await achPayout({ documents: [Object.values(docs)[0]] })
    await acme.call("POST", `/v2/simulate/transactions/${created.id}/review`, { action: "reject" })
    const last = (await payoutEvents(created.id)).at(-1)!
    expect(last).toMatchObject({ type: "transaction.rejected", data: { acceptedDocumentTypes: ["invoice", "contract", "bank_statement", "proof_of_address"] } })
    // Documents that are not the customer's are refused, and nothing is reserved.
    const refused = expectProblem(await payout({
      source: { type: "virtual_account", virtualAccountId: accountId },
      destination: { type: "external_bank", whitelistRecipientId: recipientId },
      amount: "1.00",
      purpose: "payroll",
      documents: ["doc_000000000000000000000000"]
    }), { type: "DOCUMENT_IDS_NOT_FOUND", status: 400, instance: "/sandbox/v2/payouts" })
    expect(refused.errors.map((e: { pointer: string }) => e.pointer)).toEqual(["/documents/0"])
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "1000.00", pending: "0.00" }])
  })
})

describe("a sandbox reset", () => {
  it("removes recipients, payouts and RFIs with the rest of the sandbox", async () => {
    const { customerId, payout: created } = await achPayout()
    const rfi = (await acme.call("POST", `/v2/simulate/transactions/${created.id}/rfi`, { questions: [{ text: "Why?" }] })).json
    const registered = (await acme.call("POST", `/v2/customers/${customerId}/registered-addresses`, { chain: "base", address: "0x52908400098527886e0f7030069857d2e4169ee7" }, idem())).json
    expect((await acme.call("POST", "/v2/simulate/reset")).status).toBe(200)
    for (const path of [`/v2/payouts/${created.id}`, `/v2/rfis/${rfi.id}`, `/v2/registered-addresses/${registered.id}`]) {
      expectProblem(await acme.call("GET", path), { type: "NOT_FOUND", status: 404, instance: `/sandbox${path}` })
    }
    // The clock finds nothing of them left to move.
    await advance(30 * 86_400_000)
  })
})

describe("an RFI's deadline after more is asked", () => {
  it("runs again from now when the answered RFI's deadline passed while it was read, and expires the RFI when it passes unanswered", async () => {
    const { accountId, payout: created } = await achPayout()
    const rfi = (await acme.call("POST", `/v2/simulate/transactions/${created.id}/rfi`, { questions: [{ text: "Why?" }], deadlineSeconds: 60 })).json
    await acme.call("POST", `/v2/rfis/${rfi.id}/responses`, { answers: [{ questionId: "q1", text: "Rent" }] }, idem())
    await advance(120_000)
    expect((await acme.call("GET", `/v2/rfis/${rfi.id}`)).json.status).toBe("under_review")
    const more = (await acme.call("POST", `/v2/simulate/rfis/${rfi.id}`, { action: "request_more", questions: [{ text: "Lease?", kind: "document" }] })).json
    expect(more.deadline).toBe(iso((await now()) + 7 * 86_400_000))
    await advance(7 * 86_400_000)
    expect((await acme.call("GET", `/v2/rfis/${rfi.id}`)).json.status).toBe("expired")
    expect(await read(created.id)).toMatchObject({ status: "failed", failureCode: "compliance_hold" })
    expect(await balances(accountId)).toEqual([{ code: "USD", available: "1000.00", pending: "0.00" }])
  })
})
