/**
 * Signing transfers out of non-custodial wallets through the whole pipeline (engine.fetch) on a virtual clock (spec,
 * "Non-custodial signing of a payout or conversion source transfer"): a payout reaching its roster's quorum and
 * broadcast, windows expiring into new attempts and the last into user_signature_expired, the wallet's signing
 * queue, a roster change, a decline, machine signers through signing requests, a conversion whose signing fails the
 * order, and the synchronous problems of signing.
 */
import { Ledger, Store, Tenancy, Timers, Wallets } from "@fos/core"
import { createEngine, type Engine } from "@fos/http"
import { layerPostgresStore } from "@fos/sql"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { approvedCustomer, type Client, clientOf, idem } from "./onboardingFixtures.ts"
import { adminUrl, freshDatabase } from "../adapters/sql/test/databases.ts"
import { expectCatalogEvents, expectProblem, isoMs, keysOf, makeEngine, orgSeed, outboxEvents, seedOf } from "./support.ts"
import { expectWire } from "./wire.ts"

let engine: Engine
let acme: Client
let rival: Client

/** A Monday noon: the conversions need the foreign-exchange market open. */
const MONDAY = Date.parse("2026-03-02T12:00:00.000Z")

beforeEach(async () => {
  engine = await makeEngine(seedOf(orgSeed("acme"), orgSeed("rival")), { startMs: MONDAY })
  acme = clientOf(engine.fetch, "http://fos", keysOf("acme").sandbox)
  rival = clientOf(engine.fetch, "http://fos", keysOf("rival").sandbox)
})
afterEach(async () => {
  if (engine !== undefined) await expectCatalogEvents(engine)
  await engine?.close()
})

const advance = (ms: number) => engine.clock.advance(ms)
const iso = (ms: number) => new Date(ms).toISOString()
const now = async () => Date.parse((await acme.call("GET", "/v2/simulate/clock")).json.now)
const minute = 60_000

const passkey = (name: string, role = "signer") => ({ credentialType: "passkey", role, email: `${name}@acme.example` })
const machine = (name: string, role = "signer") => ({ credentialType: "api_key", role, name })
/** alice (admin), bob and carol: three passkey signers. */
const passkeyRoster = [passkey("alice", "admin"), passkey("bob"), passkey("carol")]

/** A customer whose claim resolved with `roster` and `threshold`, and its non-custodial wallet on base with `funds` USDC. */
const nonCustodialWallet = async (roster: ReadonlyArray<Record<string, string>>, threshold: number, funds: string | null = "500") => {
  const customerId = await approvedCustomer(acme)
  const applied = await acme.call("POST", `/v2/customers/${customerId}/features`, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } }, idem())
  expect(applied.status, applied.text).toBe(201)
  await acme.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
  const claimed = await acme.call("POST", `/v2/customers/${customerId}/wallets/claim-non-custodial`, { chains: ["base"], roster, threshold }, idem())
  expect(claimed.status, claimed.text).toBe(202)
  const signers = claimed.json.signers.map((s: { id: string }) => s.id) as Array<string>
  for (const id of signers) expect((await acme.call("POST", `/v2/simulate/wallet-signers/${id}/enroll`, {})).status).toBe(200)
  await advance(30_000)
  const walletId = (await acme.call("GET", `/v2/customers/${customerId}/wallets`)).json.data[0].id as string
  if (funds === null) return { customerId, walletId, signers }
  const deposited = await acme.call("POST", "/v2/simulate/deposits", {
    destination: { type: "wallet", walletId },
    assetAmount: { code: "USDC", amount: funds, chain: "base" }
  })
  expect(deposited.status, deposited.text).toBe(201)
  await acme.call("POST", `/v2/simulate/transactions/${deposited.json.id}/settle`)
  return { customerId, walletId, signers }
}

const login = async (signerId: string) => {
  const r = await acme.call("POST", `/v2/simulate/wallet-signers/${signerId}/sessions`, {})
  expect(r.status, r.text).toBe(201)
  return { authorization: `Bearer ${r.json.token}` }
}

const address = "0x52908400098527886e0f7030069857d2e4169ee7"
const payout = (walletId: string, amount = "100") =>
  acme.call("POST", "/v2/payouts", {
    source: { type: "wallet", walletId },
    destination: { type: "external_crypto", chain: "base", address },
    asset: "USDC",
    amount,
    purpose: "treasury_transfer"
  }, idem())

/**
 * Payouts of `amounts` one second apart (timers due at one instant fire in no given order, so the seat goes to the
 * earliest by a second); answers their ids. The last is created one second before the clock this leaves.
 */
const payouts = async (walletId: string, amounts: ReadonlyArray<string>) => {
  const ids: Array<string> = []
  for (const amount of amounts) {
    const created = await payout(walletId, amount)
    expect(created.status, created.text).toBe(201)
    ids.push(created.json.id)
    await advance(1_000)
  }
  return ids
}

/** A passkey signer's stamp (or decline) at the transfer's verificationUrl. */
const sign = async (transactionId: string, signerId: string, body: Record<string, unknown> = { decision: "approve" }) =>
  acme.call("POST", `/v2/simulate/transactions/${transactionId}/signatures`, body, await login(signerId))

const read = async (id: string) => (await acme.call("GET", `/v2/transactions/${id}`)).json
const balances = async (walletId: string) => (await acme.call("GET", `/v2/wallets/${walletId}`)).json.balances

/** The transaction.* events of one transaction: type, sequence (when carried) and the signing fields. */
const eventsOf = async (id: string) =>
  (await outboxEvents(engine)).filter((e) => e.type.startsWith("transaction.") && e.data.transactionId === id)

/** Every ledger account of the store balances: credits equal debits per asset, posted and pending. */
const expectBalancedLedger = async () => {
  const accounts = await engine.run(Effect.gen(function*() {
    const store = yield* Store.Store
    return yield* store.page(Ledger.LedgerAccounts, { order: "byScope", partition: Tenancy.scopeOf("org_acme", "sandbox"), descending: false, backward: false, from: undefined, limit: 10_000 })
  }))
  expect(accounts.length).toBeGreaterThan(0)
  const sums = new Map<string, bigint>()
  for (const a of accounts) {
    const key = `${a.asset}@${a.chain ?? ""}`
    sums.set(key, (sums.get(key) ?? 0n) + BigInt(a.creditsPosted) - BigInt(a.debitsPosted) + BigInt(a.creditsPending) - BigInt(a.debitsPending))
  }
  for (const [key, sum] of sums) expect(sum, key).toBe(0n)
}

describe("a payout from a non-custodial wallet", () => {
  it("waits for a 2-of-3 passkey quorum, then is co-signed, broadcast with its txHash and completed; the books balance", async () => {
    const { walletId, signers: [alice, bob] } = await nonCustodialWallet(passkeyRoster, 2)
    const created = await payout(walletId)
    expect(created.status, created.text).toBe(201)
    const id = created.json.id as string
    const t0 = await now()
    expect(await balances(walletId)).toEqual([{ code: "USDC", chain: "base", available: "399.500000", pending: "100.500000" }])
    await advance(2_000)
    const waiting = await read(id)
    expectWire(waiting, { status: "processing", queuePosition: undefined, destination: { txHash: undefined } })
    // Nothing is sent without the quorum, however long the send step waits.
    await advance(5 * minute)
    expect((await read(id)).destination).not.toHaveProperty("txHash")

    const stamped = await sign(id, alice!)
    expect(stamped.status, stamped.text).toBe(200)
    expect(stamped.json).toMatchObject({ id, status: "processing" })
    // A second stamp of the same signer in the attempt is refused and changes nothing.
    expectProblem(await sign(id, alice!), { type: "CONFLICT", status: 409, instance: `/sandbox/v2/simulate/transactions/${id}/signatures` })
    await advance(minute)
    expect((await sign(id, bob!)).status).toBe(200)
    const quorumAt = await now()
    await advance(2_000)
    const sent = await read(id)
    expect(sent).toMatchObject({ status: "processing", destination: { txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) } })
    await advance(minute)
    expectWire(await read(id), { status: "completed", failureCode: undefined })
    expect(await balances(walletId)).toEqual([{ code: "USDC", chain: "base", available: "399.500000", pending: "0.000000" }])
    // Signing an ended transfer is refused.
    expectProblem(await sign(id, alice!), { type: "RESOURCE_TERMINAL", status: 409, instance: `/sandbox/v2/simulate/transactions/${id}/signatures` })

    const events = await eventsOf(id)
    expect(events.map((e) => [e.type, e.data.sequence, e.data.occurredAt])).toEqual([
      ["transaction.created", 1, iso(t0)],
      ["transaction.processing", 2, iso(t0 + 2_000)],
      ["transaction.awaiting_signature", undefined, iso(t0 + 2_000)],
      ["transaction.awaiting_user_signature", undefined, iso(t0 + 2_000)],
      ["transaction.signature_collected", undefined, iso(quorumAt - minute)],
      ["transaction.signature_collected", undefined, iso(quorumAt)],
      ["transaction.quorum_met", undefined, iso(quorumAt)],
      ["transaction.completed", 3, iso(quorumAt + 2_000 + minute)]
    ])
    const awaiting = events[2]!.data
    expect(awaiting).toEqual({
      transactionId: id,
      customerId: created.json.customerId,
      type: "withdrawal",
      source: created.json.source,
      destination: created.json.destination,
      signingMode: "passkey_required",
      verificationUrl: expect.stringMatching(new RegExp(`^https://sign\\.fos\\.dev/transfers/${id}/[0-9a-f]{32}$`)),
      expiresAt: iso(t0 + 2_000 + 15 * minute),
      attempt: 1,
      occurredAt: iso(t0 + 2_000)
    })
    expect(events[3]!.data).toMatchObject({ verificationUrl: awaiting.verificationUrl, expiresAt: awaiting.expiresAt, attempt: 1 })
    expect(events[3]!.data.signingMode).toBeUndefined()
    expect(events.slice(4, 7).map((e) => [e.data.collected, e.data.required, e.data.attempt])).toEqual([[1, 2, 1], [2, 2, 1], [2, 2, 1]])
    for (const e of events) expect(e.data.occurredAt).toMatch(isoMs)
    await expectBalancedLedger()
  })

  it("opens a new attempt when a window expires before quorum; the last attempt's expiry fails it user_signature_expired and voids the reservation", async () => {
    const { walletId, signers: [alice] } = await nonCustodialWallet(passkeyRoster, 2)
    const created = await payout(walletId)
    const id = created.json.id as string
    await advance(2_000)
    const started = await now()
    // A stamp in attempt 1 does not carry over: the latest attempt is authoritative.
    expect((await sign(id, alice!)).status).toBe(200)
    await advance(15 * minute)
    const second = await now()
    // A stamp for the expired attempt is refused.
    expectProblem(await sign(id, alice!, { decision: "approve", attempt: 1 }), { type: "CONFLICT", status: 409, instance: `/sandbox/v2/simulate/transactions/${id}/signatures` })
    await advance(15 * minute)
    const third = await now()
    expect(await read(id)).toMatchObject({ status: "processing" })
    await advance(15 * minute)
    const failed = await read(id)
    expect(failed).toMatchObject({ status: "failed", failureCode: "user_signature_expired", failureMessage: expect.any(String) })
    expect(await balances(walletId)).toEqual([{ code: "USDC", chain: "base", available: "500.000000", pending: "0.000000" }])

    const events = await eventsOf(id)
    const signing = events.filter((e) => e.type !== "transaction.awaiting_user_signature")
    expect(signing.map((e) => [e.type, e.data.attempt, e.data.sequence, e.data.occurredAt])).toEqual([
      ["transaction.created", undefined, 1, iso(started - 2_000)],
      ["transaction.processing", undefined, 2, iso(started)],
      ["transaction.awaiting_signature", 1, undefined, iso(started)],
      ["transaction.signature_collected", 1, undefined, iso(started)],
      ["transaction.awaiting_signature", 2, undefined, iso(second)],
      ["transaction.awaiting_signature", 3, undefined, iso(third)],
      ["transaction.failed", undefined, 3, iso(third + 15 * minute)]
    ])
    // Each attempt has its own link and window.
    const urls = signing.filter((e) => e.type === "transaction.awaiting_signature").map((e) => [e.data.verificationUrl, e.data.expiresAt])
    expect(new Set(urls.map(([u]) => u)).size).toBe(3)
    expect(urls.map(([, x]) => x)).toEqual([iso(second), iso(third), iso(third + 15 * minute)])
    expect(events.filter((e) => e.type === "transaction.awaiting_user_signature").map((e) => e.data.attempt)).toEqual([1, 2, 3])
    expect(signing.at(-1)!.data).toMatchObject({ status: "failed", reasonCode: "user_signature_expired", failureCode: "user_signature_expired" })
    await expectBalancedLedger()
  })
})

describe("the wallet's signing queue", () => {
  it("signs one payout at a time per wallet: the others queue with queuePosition, move forward, take the seat in turn, and time out", async () => {
    const { walletId, signers: [alice, bob, carol] } = await nonCustodialWallet(passkeyRoster, 2)
    const [p1, p2, p3] = await payouts(walletId, ["10", "20", "30"])
    const t0 = (await now()) - 3_000
    await advance(2_000)
    expect([(await read(p1!)).queuePosition, (await read(p2!)).queuePosition, (await read(p3!)).queuePosition]).toEqual([undefined, 1, 2])
    // A queued payout has no signing window yet: a stamp waits for its turn.
    expectProblem(await sign(p2!, alice!), { type: "CONFLICT", status: 409, instance: `/sandbox/v2/simulate/transactions/${p2}/signatures` })

    // p1's quorum frees the seat: p2 takes it (no queue event for leaving), p3 moves forward.
    await advance(minute)
    await sign(p1!, alice!)
    await sign(p1!, bob!)
    const seated = await now()
    expect([(await read(p2!)).queuePosition, (await read(p3!)).queuePosition]).toEqual([undefined, 1])
    // p2 is declined: p3 takes the seat.
    await advance(minute)
    expect((await sign(p2!, carol!, { decision: "decline" })).json).toMatchObject({ status: "failed", failureCode: "user_signature_declined" })
    const declinedAt = await now()
    expect((await read(p3!)).queuePosition).toBeUndefined()

    // p4 queues behind p3, whose roster does not sign: p4 fails user_signature_timeout after the queue wait.
    const p4 = (await payout(walletId, "40")).json.id as string
    await advance(2_000)
    expect((await read(p4)).queuePosition).toBe(1)
    await advance(30 * minute)
    expectWire(await read(p4), { status: "failed", failureCode: "user_signature_timeout", queuePosition: undefined })
    expectWire(await read(p3!), { status: "processing", queuePosition: undefined })

    const queueEvents = (await outboxEvents(engine, "transaction.queue_position_changed")).map((e) => [e.data.transactionId, e.data.queuePosition, e.data.occurredAt])
    expect(queueEvents).toEqual([
      [p2, 1, iso(t0 + 3_000)],
      [p3, 2, iso(t0 + 4_000)],
      [p3, 1, iso(seated)],
      [p4, 1, iso(declinedAt + 2_000)]
    ])
    for (const e of await outboxEvents(engine, "transaction.queue_position_changed")) expect(e.data.sequence).toBeUndefined()
    const attempts = (await outboxEvents(engine, "transaction.awaiting_signature")).map((e) => [e.data.transactionId, e.data.attempt, e.data.occurredAt])
    expect(attempts).toEqual([
      [p1, 1, iso(t0 + 2_000)],
      [p2, 1, iso(seated)],
      [p3, 1, iso(declinedAt)],
      [p3, 2, iso(declinedAt + 15 * minute)],
      [p3, 3, iso(declinedAt + 30 * minute)]
    ])
    expect((await eventsOf(p2!)).map((e) => e.type)).toEqual([
      "transaction.created",
      "transaction.processing",
      "transaction.queue_position_changed",
      "transaction.awaiting_signature",
      "transaction.awaiting_user_signature",
      "transaction.failed"
    ])
    expect((await eventsOf(p4)).map((e) => [e.type, e.data.sequence])).toEqual([
      ["transaction.created", 1],
      ["transaction.processing", 2],
      ["transaction.queue_position_changed", undefined],
      ["transaction.failed", 3]
    ])
    // Every failed payout's reservation is back: only p1 left, p3 still holds its own.
    expect(await balances(walletId)).toEqual([{ code: "USDC", chain: "base", available: "459.000000", pending: "30.500000" }])
    await expectBalancedLedger()
  })

  it("a cancelled payout leaves the queue (those behind move forward) or frees the seat", async () => {
    const { walletId } = await nonCustodialWallet(passkeyRoster, 2)
    const [p1, p2, p3] = await payouts(walletId, ["10", "20", "30"])
    await advance(2_000)
    expect((await acme.call("POST", `/v2/payouts/${p2}/cancel`, undefined, idem())).json).toMatchObject({ status: "cancelled" })
    expect((await read(p3!)).queuePosition).toBe(1)
    expect((await acme.call("POST", `/v2/payouts/${p1}/cancel`, undefined, idem())).json).toMatchObject({ status: "cancelled" })
    expect((await read(p3!)).queuePosition).toBeUndefined()
    expect((await eventsOf(p3!)).map((e) => [e.type, e.data.queuePosition ?? e.data.attempt])).toEqual([
      ["transaction.created", undefined],
      ["transaction.processing", undefined],
      ["transaction.queue_position_changed", 2],
      ["transaction.queue_position_changed", 1],
      ["transaction.awaiting_signature", 1],
      ["transaction.awaiting_user_signature", 1]
    ])
    await expectBalancedLedger()
  })
})

describe("roster changes and declines", () => {
  it("a signer leaving the pool fails the payout roster_changed when it had stamped, not otherwise; the next payout takes the seat", async () => {
    const { walletId, signers: [alice, bob, carol, dave] } = await nonCustodialWallet([...passkeyRoster, passkey("dave")], 2)
    const [p1, p2] = (await payouts(walletId, ["10", "20"])) as [string, string]
    await advance(2_000)
    expect((await sign(p1, carol!)).status).toBe(200)
    // bob had not stamped and the pool left (alice, carol, dave) still reaches 2: p1 keeps waiting.
    expect((await acme.call("POST", `/v2/simulate/wallet-signers/${bob}/remove`)).status).toBe(200)
    expect(await read(p1)).toMatchObject({ status: "processing" })
    // carol had stamped: her stamp is voided and p1 fails; p2 takes the seat and alice and dave sign it.
    expect((await acme.call("POST", `/v2/simulate/wallet-signers/${carol}/remove`)).status).toBe(200)
    expect(await read(p1)).toMatchObject({ status: "failed", failureCode: "roster_changed" })
    expectWire(await read(p2), { status: "processing", queuePosition: undefined })
    expect((await sign(p2, alice!)).status).toBe(200)
    expect((await sign(p2, dave!)).status).toBe(200)
    await advance(2_000 + minute)
    expect(await read(p2)).toMatchObject({ status: "completed" })
    const removed = (await outboxEvents(engine, "wallet_signer.removed")).map((e) => e.data.walletSignerId)
    expect(removed).toEqual([bob, carol])
    const failed = (await eventsOf(p1)).at(-1)!
    expect(failed.type).toBe("transaction.failed")
    expect(failed.data).toMatchObject({ sequence: 3, reasonCode: "roster_changed", failureCode: "roster_changed" })
    expect(await balances(walletId)).toEqual([{ code: "USDC", chain: "base", available: "479.500000", pending: "0.000000" }])
    await expectBalancedLedger()
  })

  it("a pool fallen below the threshold fails the payout signing and those queued, without new windows, and a later payout at once", async () => {
    const { walletId, signers: [, bob, carol] } = await nonCustodialWallet(passkeyRoster, 2)
    const [p1, p2, p3] = (await payouts(walletId, ["10", "20", "30"])) as [string, string, string]
    await advance(2_000)
    expect(await read(p3)).toMatchObject({ status: "processing", queuePosition: 2 })
    // bob leaving keeps 2 of 3: everything waits. carol leaving leaves alice alone: nothing can reach 2 stamps.
    expect((await acme.call("POST", `/v2/simulate/wallet-signers/${bob}/remove`)).status).toBe(200)
    expect((await read(p1)).status).toBe("processing")
    expect((await acme.call("POST", `/v2/simulate/wallet-signers/${carol}/remove`)).status).toBe(200)
    for (const id of [p1, p2, p3]) expectWire(await read(id), { status: "failed", failureCode: "roster_changed", queuePosition: undefined })
    // The queued ones never got a window, and none moved forward as the others failed.
    for (const id of [p2, p3]) {
      expect((await eventsOf(id)).map((e) => e.type)).toEqual([
        "transaction.created",
        "transaction.processing",
        "transaction.queue_position_changed",
        "transaction.failed"
      ])
    }
    expect((await eventsOf(p1)).filter((e) => e.type === "transaction.awaiting_signature")).toHaveLength(1)

    // A payout made now fails as its signing would start, its reservation voided.
    const [p4] = (await payouts(walletId, ["40"])) as [string]
    await advance(2_000)
    expect(await read(p4)).toMatchObject({ status: "failed", failureCode: "roster_changed" })
    expect((await eventsOf(p4)).map((e) => [e.type, e.data.sequence])).toEqual([
      ["transaction.created", 1],
      ["transaction.processing", 2],
      ["transaction.failed", 3]
    ])
    expect(await balances(walletId)).toEqual([{ code: "USDC", chain: "base", available: "500.000000", pending: "0.000000" }])
    await expectBalancedLedger()
  })

  it("a customer's removal ceremony, completed by an admin's co-stamp, fails a payout below the threshold with roster_changed", async () => {
    const { walletId, signers: [alice, bob] } = await nonCustodialWallet([passkey("alice", "admin"), passkey("bob")], 2)
    const [p1] = (await payouts(walletId, ["10"])) as [string]
    await advance(2_000)
    const adminSession = await login(alice!)
    const ceremony = await acme.call("POST", "/v2/signer/ceremonies", { type: "signer_removal", walletSignerId: bob }, adminSession)
    expect(ceremony.status, ceremony.text).toBe(201)
    expect(await read(p1)).toMatchObject({ status: "processing" })
    const decided = await acme.call("POST", `/v2/simulate/wallet-ceremonies/${ceremony.json.id}/decision`, { outcome: "approved" }, adminSession)
    expect(decided.status, decided.text).toBe(200)
    expect(await read(p1)).toMatchObject({ status: "failed", failureCode: "roster_changed" })
    expect((await outboxEvents(engine, "wallet_signer.removed"))[0]!.data).toMatchObject({ walletSignerId: bob, reason: "customer_removed" })
    await expectBalancedLedger()
  })

  it("a decline fails the payout user_signature_declined and voids its reservation", async () => {
    const { walletId, signers: [, bob] } = await nonCustodialWallet(passkeyRoster, 2)
    const id = (await payout(walletId)).json.id as string
    await advance(2_000)
    const declined = await sign(id, bob!, { decision: "decline" })
    expect(declined.status, declined.text).toBe(200)
    expectWire(declined.json, { id, status: "failed", failureCode: "user_signature_declined", queuePosition: undefined })
    expect(await balances(walletId)).toEqual([{ code: "USDC", chain: "base", available: "500.000000", pending: "0.000000" }])
    expect((await eventsOf(id)).map((e) => e.type).slice(-1)).toEqual(["transaction.failed"])
    await expectBalancedLedger()
  })
})

describe("machine signers and signing requests", () => {
  it("a machine-only roster signs through signing requests (programmatic_unattended): GET, approve by each machine signer's session, quorum", async () => {
    const { customerId, walletId, signers: [botA, botB] } = await nonCustodialWallet([machine("bot-a", "admin"), machine("bot-b")], 2)
    const id = (await payout(walletId)).json.id as string
    await advance(2_000)
    const started = await now()
    const [awaiting] = await outboxEvents(engine, "transaction.awaiting_signature")
    expect(awaiting!.data).toMatchObject({ signingMode: "programmatic_unattended", signingRequestId: expect.stringMatching(/^sr_[0-9a-z]{24}$/), attempt: 1 })
    expect(awaiting!.data.verificationUrl).toBeUndefined()
    // The deprecated event always carried a person's link: none for a machine-only roster.
    expect(await outboxEvents(engine, "transaction.awaiting_user_signature")).toEqual([])
    const requestId = awaiting!.data.signingRequestId as string
    const path = `/v2/signing-requests/${requestId}`
    const request = await acme.call("GET", path)
    expect(request.status, request.text).toBe(200)
    const payoutNow = await read(id)
    expect(request.json).toEqual({
      id: requestId,
      transactionId: id,
      customerId,
      walletId,
      signingMode: "programmatic_unattended",
      attempt: 1,
      status: "pending",
      collected: 0,
      required: 2,
      signedBy: [],
      transfer: { source: payoutNow.source, destination: payoutNow.destination },
      expiresAt: iso(started + 15 * minute),
      createdAt: iso(started)
    })
    const approved = await acme.call("POST", `${path}/approve`, undefined, await login(botA!))
    expect(approved.status, approved.text).toBe(200)
    expect(approved.json).toMatchObject({ status: "pending", collected: 1, signedBy: [botA] })
    const done = await acme.call("POST", `${path}/approve`, undefined, await login(botB!))
    expect(done.json).toMatchObject({ status: "approved", collected: 2, required: 2, signedBy: [botA, botB] })
    // A decided request is a state conflict (RESOURCE_TERMINAL is the spec's code for simulate calls only).
    for (const action of ["approve", "reject"]) {
      const late = expectProblem(await acme.call("POST", `${path}/${action}`, undefined, await login(botA!)), {
        type: "CONFLICT",
        status: 409,
        instance: `/sandbox${path}/${action}`
      })
      expect(late.detail).toBe("The signing request was already decided: its transfer met its quorum.")
    }
    await advance(2_000 + minute)
    expect(await read(id)).toMatchObject({ status: "completed", destination: { txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) } })
    expect((await eventsOf(id)).map((e) => e.type)).toEqual([
      "transaction.created",
      "transaction.processing",
      "transaction.awaiting_signature",
      "transaction.signature_collected",
      "transaction.signature_collected",
      "transaction.quorum_met",
      "transaction.completed"
    ])
    await expectBalancedLedger()
  })

  it("a mixed roster is programmatic: the person stamps at the link, the machine approves its request, or rejects it (declined)", async () => {
    const { walletId, signers: [alice, bot] } = await nonCustodialWallet([passkey("alice", "admin"), machine("bot")], 2)
    const [p1, p2] = (await payouts(walletId, ["10", "20"])) as [string, string]
    await advance(2_000)
    const [first] = await outboxEvents(engine, "transaction.awaiting_signature")
    expect(first!.data).toMatchObject({
      transactionId: p1,
      signingMode: "programmatic",
      verificationUrl: expect.stringMatching(/^https:\/\/sign\.fos\.dev\/transfers\//),
      signingRequestId: expect.stringMatching(/^sr_/)
    })
    expect((await sign(p1, alice!)).status).toBe(200)
    // A person signs at the link, a machine through its request: each the other way is 403 FORBIDDEN.
    expectProblem(await acme.call("POST", `/v2/signing-requests/${first!.data.signingRequestId}/approve`, undefined, await login(alice!)), {
      type: "FORBIDDEN",
      status: 403,
      instance: `/sandbox/v2/signing-requests/${first!.data.signingRequestId}/approve`
    })
    expectProblem(await sign(p1, bot!), { type: "FORBIDDEN", status: 403, instance: `/sandbox/v2/simulate/transactions/${p1}/signatures` })
    const approved = await acme.call("POST", `/v2/signing-requests/${first!.data.signingRequestId}/approve`, undefined, await login(bot!))
    expect(approved.json).toMatchObject({ status: "approved", signedBy: [alice, bot] })
    // p2 took the seat; its machine signer rejects it.
    const second = (await outboxEvents(engine, "transaction.awaiting_signature")).find((e) => e.data.transactionId === p2)!
    const rejected = await acme.call("POST", `/v2/signing-requests/${second.data.signingRequestId}/reject`, undefined, await login(bot!))
    expect(rejected.status, rejected.text).toBe(200)
    expect(rejected.json).toMatchObject({ status: "failed", transactionId: p2 })
    expect(await read(p2)).toMatchObject({ status: "failed", failureCode: "user_signature_declined" })
    await expectBalancedLedger()
  })

  it("an expired attempt's request reads as expired and is 409 CONFLICT to approve; unknown and other organizations' requests are 404 COSIGN_ACTIVITY_NOT_FOUND", async () => {
    const { walletId, signers: [botA] } = await nonCustodialWallet([machine("bot-a", "admin"), machine("bot-b")], 2)
    await payout(walletId)
    await advance(2_000)
    const first = (await outboxEvents(engine, "transaction.awaiting_signature"))[0]!.data.signingRequestId as string
    await advance(15 * minute)
    const second = (await outboxEvents(engine, "transaction.awaiting_signature"))[1]!.data.signingRequestId as string
    expect(second).not.toBe(first)
    expect((await acme.call("GET", `/v2/signing-requests/${first}`)).json).toMatchObject({ status: "expired", attempt: 1 })
    expect((await acme.call("GET", `/v2/signing-requests/${second}`)).json).toMatchObject({ status: "pending", attempt: 2 })
    const session = await login(botA!)
    expectProblem(await acme.call("POST", `/v2/signing-requests/${first}/approve`, undefined, session), {
      type: "CONFLICT",
      status: 409,
      instance: `/sandbox/v2/signing-requests/${first}/approve`
    })
    const unknown = "sr_00000000000000000000000000"
    for (const [client, path] of [[acme, `/v2/signing-requests/${unknown}`], [rival, `/v2/signing-requests/${second}`]] as const) {
      expectProblem(await client.call("GET", path), { type: "COSIGN_ACTIVITY_NOT_FOUND", status: 404, instance: `/sandbox${path}` })
    }
    expectProblem(await acme.call("POST", `/v2/signing-requests/${unknown}/reject`, undefined, session), {
      type: "COSIGN_ACTIVITY_NOT_FOUND",
      status: 404,
      instance: `/sandbox/v2/signing-requests/${unknown}/reject`
    })
    expectProblem(await acme.call("GET", "/v2/signing-requests/txn_123"), { type: "INVALID_OID_FORMAT", status: 400, instance: "/sandbox/v2/signing-requests/txn_123" })
    // Approving takes the machine signer's session (Authentication rule 10).
    expectProblem(await acme.call("POST", `/v2/signing-requests/${second}/approve`), {
      type: "SIGNER_SESSION_INVALID",
      status: 401,
      instance: `/sandbox/v2/signing-requests/${second}/approve`
    })
  })
})

describe("the signing provider's refusals", () => {
  it("SIGNATURE_REJECTED (422) and SIGNING_PROVIDER_UNAVAILABLE (502) change nothing, and the same session signs again", async () => {
    const { walletId, signers: [alice] } = await nonCustodialWallet(passkeyRoster, 2)
    const id = (await payout(walletId)).json.id as string
    await advance(2_000)
    const session = await login(alice!)
    const path = `/v2/simulate/transactions/${id}/signatures`
    const before = (await outboxEvents(engine)).length
    const at = await now()
    expectProblem(await acme.call("POST", path, { decision: "approve", provider: "rejected" }, session), { type: "SIGNATURE_REJECTED", status: 422, instance: `/sandbox${path}`, nowMs: at })
    expectProblem(await acme.call("POST", path, { decision: "approve", provider: "unavailable" }, session), { type: "SIGNING_PROVIDER_UNAVAILABLE", status: 502, instance: `/sandbox${path}`, nowMs: at })
    expect((await outboxEvents(engine)).length).toBe(before)
    const stamped = await acme.call("POST", path, { decision: "approve" }, session)
    expect(stamped.status, stamped.text).toBe(200)
    expect((await outboxEvents(engine, "transaction.signature_collected")).map((e) => e.data.collected)).toEqual([1])
    // No session, or a signer of another roster (the rival's cannot even log in here): refused.
    expectProblem(await acme.call("POST", path, { decision: "approve" }), { type: "SIGNER_SESSION_INVALID", status: 401, instance: `/sandbox${path}` })
  })
})

describe("a conversion from a non-custodial wallet", () => {
  /** The customer's active USD virtual account. */
  const usdAccount = async (customerId: string) => {
    const applied = await acme.call("POST", `/v2/customers/${customerId}/features`, { type: "virtual_account", asset: { code: "USD" } }, idem())
    expect(applied.status, applied.text).toBe(201)
    await acme.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
    await advance(30_000)
    return (await acme.call("GET", `/v2/customers/${customerId}/virtual-accounts`)).json.data[0].id as string
  }
  const offramp = async (walletId: string, virtualAccountId: string) => {
    const created = await acme.call("POST", "/v2/orders", {
      source: { type: "wallet", walletId, asset: "USDC" },
      destination: { type: "virtual_account", virtualAccountId },
      amount: "100",
      lockSide: "source"
    }, idem())
    expect(created.status, created.text).toBe(201)
    return created
  }
  const execute = (orderId: string) => acme.call("POST", `/v2/orders/${orderId}/execute`, undefined, idem())

  it("signs its source transfer; the last window expiring fails the transaction user_signature_expired and the order through order.failed", async () => {
    const { walletId, signers: [alice] } = await nonCustodialWallet(passkeyRoster, 2)
    const accountId = await usdAccount((await acme.call("GET", `/v2/wallets/${walletId}`)).json.customerId)
    const order = (await offramp(walletId, accountId)).json
    expect((await execute(order.id)).status).toBe(200)
    const transactionId = (await acme.call("GET", `/v2/orders/${order.id}`)).json.transactionId as string
    await advance(2_000)
    const started = await now()
    expect(await read(transactionId)).toMatchObject({ status: "processing", linkedOrderId: order.id })
    expect((await sign(transactionId, alice!)).status).toBe(200)
    await advance(45 * minute)
    expect(await read(transactionId)).toMatchObject({ status: "failed", failureCode: "user_signature_expired" })
    expect((await acme.call("GET", `/v2/orders/${order.id}`)).json).toMatchObject({ status: "failed", reasonCode: "cancelled" })
    const failed = await outboxEvents(engine, "order.failed")
    expect(failed.map((e) => e.data)).toEqual([{
      orderId: order.id,
      customerId: order.customerId,
      reasonCode: "cancelled",
      failureMessage: expect.any(String),
      failureCode: "user_signature_expired",
      occurredAt: iso(started + 45 * minute)
    }])
    expect((await eventsOf(transactionId)).map((e) => [e.type, e.data.attempt ?? e.data.sequence])).toEqual([
      ["transaction.created", 1],
      ["transaction.processing", 2],
      ["transaction.awaiting_signature", 1],
      ["transaction.awaiting_user_signature", 1],
      ["transaction.signature_collected", 1],
      ["transaction.awaiting_signature", 2],
      ["transaction.awaiting_user_signature", 2],
      ["transaction.awaiting_signature", 3],
      ["transaction.awaiting_user_signature", 3],
      ["transaction.failed", 3]
    ])
    // No funds moved: the wallet holds what it held, the virtual account nothing.
    expect(await balances(walletId)).toEqual([{ code: "USDC", chain: "base", available: "500.000000", pending: "0.000000" }])
    await expectBalancedLedger()
  })

  it("goes on once the quorum is met: sent, settled, order.succeeded with the chain leg's txHash", async () => {
    const { walletId, signers: [alice, , carol] } = await nonCustodialWallet(passkeyRoster, 2)
    const accountId = await usdAccount((await acme.call("GET", `/v2/wallets/${walletId}`)).json.customerId)
    const order = (await offramp(walletId, accountId)).json
    await execute(order.id)
    const transactionId = (await acme.call("GET", `/v2/orders/${order.id}`)).json.transactionId as string
    await advance(2_000)
    await sign(transactionId, alice!)
    await sign(transactionId, carol!)
    await advance(2_000)
    await advance(minute)
    expect((await acme.call("GET", `/v2/orders/${order.id}`)).json).toMatchObject({ status: "succeeded" })
    expect((await outboxEvents(engine, "order.succeeded"))[0]!.data).toMatchObject({ orderId: order.id, transactionId, txHash: expect.any(String) })
    expect(await read(transactionId)).toMatchObject({ status: "completed" })
    await expectBalancedLedger()
  })

  it("a cancelled order frees the wallet's signing seat", async () => {
    const { walletId } = await nonCustodialWallet(passkeyRoster, 2)
    const accountId = await usdAccount((await acme.call("GET", `/v2/wallets/${walletId}`)).json.customerId)
    const order = (await offramp(walletId, accountId)).json
    await execute(order.id)
    await advance(2_000)
    const queued = (await payout(walletId, "10")).json.id as string
    await advance(2_000)
    expect((await read(queued)).queuePosition).toBe(1)
    const cancelled = await acme.call("POST", `/v2/orders/${order.id}/cancel`, undefined, idem())
    expect(cancelled.json).toMatchObject({ status: "cancelled" })
    expect((await read(queued)).queuePosition).toBeUndefined()
    await expectBalancedLedger()
  })
})

describe("NON_CUSTODIAL_SOURCE_NOT_SUPPORTED", () => {
  it("refuses a payout or an order whose source is a non-custodial wallet on Stellar, writing nothing", async () => {
    const { walletId } = await nonCustodialWallet(passkeyRoster, 2)
    // A claim never opens a Stellar wallet; one is written straight into the store to reach the check.
    const stellarId = "wlt_stellar00000000000000000"
    await engine.run(Effect.gen(function*() {
      const store = yield* Store.Store
      const base = (yield* store.get(Wallets.Wallets, walletId))!
      yield* Effect.orDie(store.insert(Wallets.Wallets, { ...base, id: stellarId as never, chain: "stellar", address: "GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H" }))
    }))
    const before = (await outboxEvents(engine)).length
    const paid = await acme.call("POST", "/v2/payouts", {
      source: { type: "wallet", walletId: stellarId },
      destination: { type: "external_crypto", chain: "stellar", address: "GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H" },
      asset: "USDC",
      amount: "1",
      purpose: "treasury_transfer"
    }, idem())
    expectProblem(paid, { type: "NON_CUSTODIAL_SOURCE_NOT_SUPPORTED", status: 422, instance: "/sandbox/v2/payouts" })
    const ordered = await acme.call("POST", "/v2/orders", {
      source: { type: "wallet", walletId: stellarId, asset: "USDC" },
      destination: { type: "wallet", walletId, asset: "USDC" },
      amount: "1",
      lockSide: "source"
    }, idem())
    expectProblem(ordered, { type: "NON_CUSTODIAL_SOURCE_NOT_SUPPORTED", status: 422, instance: "/sandbox/v2/orders" })
    expect((await outboxEvents(engine)).length).toBe(before)
  })
})

describe("crypto_wallet_misconfigured", () => {
  it("freezes the wallet: its transfers fail crypto_wallet_misconfigured with their reservations voided, it sends nothing more, and still receives", async () => {
    const { walletId } = await nonCustodialWallet(passkeyRoster, 2)
    const [p1, p2] = (await payouts(walletId, ["10", "20"])) as [string, string]
    await advance(1_000)
    // p3 is still in compliance when the wallet freezes: it fails when its signing would start.
    const p3 = (await payout(walletId, "30")).json.id as string
    expect([(await read(p1)).status, (await read(p2)).queuePosition, (await read(p3)).status]).toEqual(["processing", 1, "pending"])
    const path = `/v2/simulate/wallets/${walletId}/misconfigure`
    const frozen = await acme.call("POST", path)
    expect(frozen.status, frozen.text).toBe(200)
    expect(frozen.json).toMatchObject({ id: walletId, custody: "non_custodial", status: "frozen" })
    const at = await now()
    for (const id of [p1, p2]) expectWire(await read(id), { status: "failed", failureCode: "crypto_wallet_misconfigured", queuePosition: undefined })
    await advance(2_000)
    expect(await read(p3)).toMatchObject({ status: "failed", failureCode: "crypto_wallet_misconfigured" })
    expect((await eventsOf(p2)).map((e) => e.type)).toEqual(["transaction.created", "transaction.processing", "transaction.queue_position_changed", "transaction.failed"])
    expect((await eventsOf(p3)).map((e) => [e.type, e.data.occurredAt])).toEqual([
      ["transaction.created", iso(at)],
      ["transaction.processing", iso(at + 2_000)],
      ["transaction.failed", iso(at + 2_000)]
    ])
    expect(await balances(walletId)).toEqual([{ code: "USDC", chain: "base", available: "500.000000", pending: "0.000000" }])
    // Nothing more is sent from it; it still takes deposits; it cannot rotate or freeze again.
    expectProblem(await payout(walletId), { type: "WALLET_NOT_ACTIVE", status: 422, instance: "/sandbox/v2/payouts" })
    const deposited = await acme.call("POST", "/v2/simulate/deposits", { destination: { type: "wallet", walletId }, assetAmount: { code: "USDC", amount: "5", chain: "base" } })
    expect(deposited.status, deposited.text).toBe(201)
    expectProblem(await acme.call("POST", `/v2/wallets/${walletId}/rotate`, undefined, idem()), { type: "WALLET_NOT_ROTATABLE", status: 409, instance: `/sandbox/v2/wallets/${walletId}/rotate` })
    expectProblem(await acme.call("POST", path), { type: "RESOURCE_TERMINAL", status: 409, instance: `/sandbox${path}` })
    expect((await acme.call("GET", `/v2/wallets/${walletId}`)).json.status).toBe("frozen")
    await expectBalancedLedger()
  })

  it("is refused for a custodial wallet (422) and another organization's (404)", async () => {
    const { walletId } = await nonCustodialWallet(passkeyRoster, 2)
    const customerId = await approvedCustomer(acme)
    const applied = await acme.call("POST", `/v2/customers/${customerId}/features`, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } }, idem())
    await acme.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
    const custodial = (await acme.call("POST", `/v2/customers/${customerId}/wallets`, { chain: "base" }, idem())).json.id as string
    expectProblem(await acme.call("POST", `/v2/simulate/wallets/${custodial}/misconfigure`), { type: "UNPROCESSABLE_ENTITY", status: 422, instance: `/sandbox/v2/simulate/wallets/${custodial}/misconfigure` })
    expectProblem(await rival.call("POST", `/v2/simulate/wallets/${walletId}/misconfigure`), { type: "WALLET_NOT_FOUND", status: 404, instance: `/sandbox/v2/simulate/wallets/${walletId}/misconfigure` })
  })

  it("fails a conversion signing from the wallet through order.failed", async () => {
    const { walletId } = await nonCustodialWallet(passkeyRoster, 2)
    const customerId = (await acme.call("GET", `/v2/wallets/${walletId}`)).json.customerId as string
    const applied = await acme.call("POST", `/v2/customers/${customerId}/features`, { type: "virtual_account", asset: { code: "USD" } }, idem())
    await acme.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
    await advance(30_000)
    const accountId = (await acme.call("GET", `/v2/customers/${customerId}/virtual-accounts`)).json.data[0].id as string
    const order = await acme.call("POST", "/v2/orders", {
      source: { type: "wallet", walletId, asset: "USDC" },
      destination: { type: "virtual_account", virtualAccountId: accountId },
      amount: "100",
      lockSide: "source"
    }, idem())
    expect(order.status, order.text).toBe(201)
    await acme.call("POST", `/v2/orders/${order.json.id}/execute`, undefined, idem())
    await advance(2_000)
    await acme.call("POST", `/v2/simulate/wallets/${walletId}/misconfigure`)
    expect((await acme.call("GET", `/v2/orders/${order.json.id}`)).json).toMatchObject({ status: "failed", reasonCode: "cancelled" })
    expect((await outboxEvents(engine, "order.failed"))[0]!.data).toMatchObject({ reasonCode: "cancelled", failureCode: "crypto_wallet_misconfigured" })
    await expectBalancedLedger()
  })
})

describe("transaction.awaiting_recovery_signature", () => {
  it("a receive policy holds a broadcast payout: the roster signs the recovery, and the payout ends failed rail_policy_rejected with its funds back", async () => {
    const { walletId, signers: [alice, bot] } = await nonCustodialWallet([passkey("alice", "admin"), machine("bot")], 2)
    const id = (await payout(walletId)).json.id as string
    const hold = `/v2/simulate/transactions/${id}/receive-policy`
    await advance(2_000)
    // Not broadcast yet: nothing to hold.
    expectProblem(await acme.call("POST", hold), { type: "SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY", status: 422, instance: `/sandbox${hold}` })
    const transferRequest = (await outboxEvents(engine, "transaction.awaiting_signature"))[0]!.data.signingRequestId as string
    await sign(id, alice!)
    await acme.call("POST", `/v2/signing-requests/${transferRequest}/approve`, undefined, await login(bot!))
    await advance(2_000)
    expect((await read(id)).destination.txHash).toMatch(/^0x[0-9a-f]{64}$/)
    const held = await acme.call("POST", hold)
    expect(held.status, held.text).toBe(200)
    const heldAt = await now()
    expectProblem(await acme.call("POST", hold), { type: "CONFLICT", status: 409, instance: `/sandbox${hold}` })
    const wallet = (await acme.call("GET", `/v2/wallets/${walletId}`)).json
    const [recovery] = await outboxEvents(engine, "transaction.awaiting_recovery_signature")
    expect(recovery!.data).toEqual({
      transactionId: id,
      customerId: wallet.customerId,
      type: "withdrawal",
      source: held.json.source,
      destination: held.json.destination,
      returnAddress: wallet.address,
      signingMode: "programmatic",
      verificationUrl: expect.stringMatching(/^https:\/\/sign\.fos\.dev\/transfers\//),
      signingRequestId: expect.stringMatching(/^sr_/),
      expiresAt: iso(heldAt + 15 * minute),
      occurredAt: iso(heldAt)
    })
    expect(recovery!.data.signingRequestId).not.toBe(transferRequest)
    // Held: it no longer settles; and the transfer's own first window ending (15 minutes after it opened) does not
    // touch the recovery's attempt 1 (the recovery's own window ends a second after this).
    await advance(15 * minute - 1_000)
    expect(await read(id)).toMatchObject({ status: "processing" })
    expect(await outboxEvents(engine, "transaction.awaiting_recovery_signature")).toHaveLength(1)
    // The transfer's own request is over; the recovery's is the one to sign.
    expect((await acme.call("GET", `/v2/signing-requests/${transferRequest}`)).json).toMatchObject({ status: "approved" })
    const replaced = expectProblem(await acme.call("POST", `/v2/signing-requests/${transferRequest}/approve`, undefined, await login(bot!)), {
      type: "CONFLICT",
      status: 409,
      instance: `/sandbox/v2/signing-requests/${transferRequest}/approve`
    })
    expect(replaced.detail).toBe("The signing request was already decided: its transfer met its quorum.")
    expect((await sign(id, alice!)).status).toBe(200)
    const approved = await acme.call("POST", `/v2/signing-requests/${recovery!.data.signingRequestId}/approve`, undefined, await login(bot!))
    expect(approved.json).toMatchObject({ status: "approved", collected: 2 })
    expect(await read(id)).toMatchObject({ status: "failed", failureCode: "rail_policy_rejected" })
    expect(await balances(walletId)).toEqual([{ code: "USDC", chain: "base", available: "500.000000", pending: "0.000000" }])
    expect((await eventsOf(id)).map((e) => e.type)).toEqual([
      "transaction.created",
      "transaction.processing",
      "transaction.awaiting_signature",
      "transaction.awaiting_user_signature",
      "transaction.signature_collected",
      "transaction.signature_collected",
      "transaction.quorum_met",
      "transaction.awaiting_recovery_signature",
      "transaction.signature_collected",
      "transaction.signature_collected",
      "transaction.quorum_met",
      "transaction.failed"
    ])
    expectProblem(await acme.call("POST", hold), { type: "RESOURCE_TERMINAL", status: 409, instance: `/sandbox${hold}` })
    await expectBalancedLedger()
  })

  it("a declined recovery closes and the payout stays held; the same call opens a new one", async () => {
    const { walletId, signers: [alice, bob] } = await nonCustodialWallet(passkeyRoster, 2)
    const id = (await payout(walletId)).json.id as string
    await advance(2_000)
    await sign(id, alice!)
    await sign(id, bob!)
    await advance(2_000)
    expect((await acme.call("POST", `/v2/simulate/transactions/${id}/receive-policy`)).status).toBe(200)
    expect((await sign(id, bob!, { decision: "decline" })).json).toMatchObject({ status: "processing" })
    await advance(5 * minute)
    expect(await read(id)).toMatchObject({ status: "processing" })
    expect((await acme.call("POST", `/v2/simulate/transactions/${id}/receive-policy`)).status).toBe(200)
    expect((await outboxEvents(engine, "transaction.awaiting_recovery_signature")).map((e) => e.data.signingMode)).toEqual(["passkey_required", "passkey_required"])
    await sign(id, alice!)
    await sign(id, bob!)
    expect(await read(id)).toMatchObject({ status: "failed", failureCode: "rail_policy_rejected" })
    await expectBalancedLedger()
  })

  it("a recovery the pool can no longer sign closes (roster_changed) and the payout stays held; a new one fails at once", async () => {
    const { walletId, signers: [alice, bob, carol] } = await nonCustodialWallet(passkeyRoster, 2)
    const id = (await payout(walletId)).json.id as string
    await advance(2_000)
    await sign(id, alice!)
    await sign(id, bob!)
    await advance(2_000)
    expect((await acme.call("POST", `/v2/simulate/transactions/${id}/receive-policy`)).status).toBe(200)
    await sign(id, carol!)
    expect((await acme.call("POST", `/v2/simulate/wallet-signers/${carol}/remove`)).status).toBe(200)
    // carol had stamped the recovery: it closes; the payout stays held, neither sent on nor failed.
    expectWire(await read(id), { status: "processing", failureCode: undefined })
    expect((await acme.call("POST", `/v2/simulate/wallet-signers/${bob}/remove`)).status).toBe(200)
    // alice alone cannot reach 2: the next recovery closes as it opens, with no new window.
    expect((await acme.call("POST", `/v2/simulate/transactions/${id}/receive-policy`)).status).toBe(200)
    expect(await outboxEvents(engine, "transaction.awaiting_recovery_signature")).toHaveLength(1)
    expectWire(await read(id), { status: "processing", failureCode: undefined })
    await expectBalancedLedger()
  })
})

describe("transaction.awaiting_return_signature", () => {
  const sender = "0x8ba1f109551bd432803012645ac136ddd64dba72"
  /** The sender's address as the service keeps it: EIP-55 checksummed. */
  const senderChecksummed = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"
  const unsupported = (walletId: string, body: Record<string, unknown> = { assetAmount: { code: "DAI", amount: "12.5", chain: "base" }, sender: { address: sender } }) =>
    acme.call("POST", `/v2/simulate/wallets/${walletId}/unsupported-deposits`, body)
  const rotate = (walletId: string) => acme.call("POST", `/v2/wallets/${walletId}/rotate`, undefined, idem())

  it("an unsupported coin goes back to its sender once the roster approves; it blocks rotation while open and takes no signing seat", async () => {
    const { walletId, signers: [alice, bob] } = await nonCustodialWallet(passkeyRoster, 2, null)
    const created = await unsupported(walletId)
    expect(created.status, created.text).toBe(201)
    const id = created.json.id as string
    const t0 = await now()
    expectWire(created.json, {
      type: "deposit_return",
      status: "processing",
      source: { type: "wallet", walletId, assetAmount: { code: "DAI", amount: "12.500000000000000000", chain: "base" } },
      destination: { type: "external_crypto", address: senderChecksummed, txHash: undefined },
      fees: [],
      queuePosition: undefined
    })
    // Not credited: the wallet holds nothing.
    expect(await balances(walletId)).toEqual([])
    expectProblem(await rotate(walletId), { type: "WALLET_ROTATION_BLOCKED_RETURN", status: 422, instance: `/sandbox/v2/wallets/${walletId}/rotate` })
    const [awaiting] = await outboxEvents(engine, "transaction.awaiting_return_signature")
    expect(awaiting!.data).toEqual({
      transactionId: id,
      customerId: created.json.customerId,
      type: "deposit_return",
      source: created.json.source,
      destination: created.json.destination,
      destinationAddress: senderChecksummed,
      signingMode: "passkey_required",
      verificationUrl: expect.stringMatching(/^https:\/\/sign\.fos\.dev\/transfers\//),
      expiresAt: iso(t0 + 15 * minute),
      attempt: 1,
      occurredAt: iso(t0)
    })
    expect(await outboxEvents(engine, "transaction.awaiting_user_signature")).toEqual([])
    await sign(id, alice!)
    await sign(id, bob!)
    await advance(2_000)
    expect(await read(id)).toMatchObject({ status: "processing", destination: { txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) } })
    await advance(minute)
    const ended = await read(id)
    expectWire(ended, { status: "failed", failureCode: undefined, failureMessage: expect.any(String) })
    expect((await eventsOf(id)).map((e) => [e.type, e.data.sequence])).toEqual([
      ["transaction.created", 1],
      ["transaction.processing", 2],
      ["transaction.awaiting_return_signature", undefined],
      ["transaction.signature_collected", undefined],
      ["transaction.signature_collected", undefined],
      ["transaction.quorum_met", undefined],
      ["transaction.failed", 3]
    ])
    // Ended: the wallet (empty) rotates.
    expect((await rotate(walletId)).status).toBe(201)
    // The coin was never credited, so the ledger booked nothing for it.
    const accounts = await engine.run(Effect.flatMap(Store.Store, (store) =>
      store.page(Ledger.LedgerAccounts, { order: "byScope", partition: Tenancy.scopeOf("org_acme", "sandbox"), descending: false, backward: false, from: undefined, limit: 10 })))
    expect(accounts).toEqual([])
  })

  it("re-fires with the next attempt as windows expire and fails user_signature_expired after the last, unblocking rotation; a payout meanwhile signs at once", async () => {
    const { walletId, signers: [alice, bob] } = await nonCustodialWallet(passkeyRoster, 2)
    const id = (await unsupported(walletId)).json.id as string
    const p1 = (await payout(walletId)).json.id as string
    await advance(2_000)
    // The return holds no seat: the payout signs at once.
    expect((await read(p1)).queuePosition).toBeUndefined()
    await sign(p1, alice!)
    await sign(p1, bob!)
    await advance(45 * minute)
    expect(await read(id)).toMatchObject({ status: "failed", failureCode: "user_signature_expired" })
    expect((await outboxEvents(engine, "transaction.awaiting_return_signature")).map((e) => e.data.attempt)).toEqual([1, 2, 3])
    expect(await read(p1)).toMatchObject({ status: "completed" })
    // Only the balance blocks rotation now.
    expectProblem(await rotate(walletId), { type: "WALLET_ROTATION_BLOCKED_BALANCE", status: 422, instance: `/sandbox/v2/wallets/${walletId}/rotate` })
    await expectBalancedLedger()
  })

  it("fails roster_changed when the pool falls below the threshold, unblocking rotation", async () => {
    const { walletId, signers: [, bob, carol] } = await nonCustodialWallet(passkeyRoster, 2, null)
    const id = (await unsupported(walletId)).json.id as string
    expect((await acme.call("POST", `/v2/simulate/wallet-signers/${bob}/remove`)).status).toBe(200)
    expect(await read(id)).toMatchObject({ status: "processing" })
    expect((await acme.call("POST", `/v2/simulate/wallet-signers/${carol}/remove`)).status).toBe(200)
    expect(await read(id)).toMatchObject({ status: "failed", failureCode: "roster_changed" })
    expect((await rotate(walletId)).status).toBe(201)
  })

  it("from a custodial wallet goes back at once, unsigned; refuses an asset on another chain", async () => {
    const customerId = await approvedCustomer(acme)
    const applied = await acme.call("POST", `/v2/customers/${customerId}/features`, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } }, idem())
    await acme.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
    const walletId = (await acme.call("POST", `/v2/customers/${customerId}/wallets`, { chain: "base" }, idem())).json.id as string
    expectProblem(await unsupported(walletId, { assetAmount: { code: "SOL", amount: "1", chain: "solana" } }), {
      type: "UNPROCESSABLE_ENTITY",
      status: 422,
      instance: `/sandbox/v2/simulate/wallets/${walletId}/unsupported-deposits`
    })
    const id = (await unsupported(walletId)).json.id as string
    await advance(2_000 + minute)
    expectWire(await read(id), { status: "failed", failureCode: undefined, destination: { txHash: expect.stringMatching(/^0x/) } })
    expect(await outboxEvents(engine, "transaction.awaiting_return_signature")).toEqual([])
  })
})

// --- on PostgreSQL ---------------------------------------------------------------------------------------------------

describe.skipIf(adminUrl === undefined || adminUrl === "")("signing on PostgreSQL", () => {
  it("queues two payouts on one wallet, signs the first to completion and the second after it, with the books balanced", async () => {
    const database = await freshDatabase("signing")
    await engine.close()
    try {
      engine = await createEngine({
        store: layerPostgresStore(database.url, { maxConnections: 4 }),
        clock: { mode: "virtual", start: MONDAY },
        realClock: Timers.makeVirtualClock(MONDAY),
        seed: seedOf(orgSeed("acme"), orgSeed("rival")) as never
      })
      acme = clientOf(engine.fetch, "http://fos", keysOf("acme").sandbox)
      const { walletId, signers: [alice, bob] } = await nonCustodialWallet(passkeyRoster, 2)
      const [p1, p2] = (await payouts(walletId, ["10", "20"])) as [string, string]
      await advance(2_000)
      expect([(await read(p1)).queuePosition, (await read(p2)).queuePosition]).toEqual([undefined, 1])
      await sign(p1, alice!)
      await sign(p1, bob!)
      expect((await read(p2)).queuePosition).toBeUndefined()
      await sign(p2, alice!)
      await sign(p2, bob!)
      await advance(2_000 + minute)
      expect([(await read(p1)).status, (await read(p2)).status]).toEqual(["completed", "completed"])
      expect(await balances(walletId)).toEqual([{ code: "USDC", chain: "base", available: "469.000000", pending: "0.000000" }])
      await expectBalancedLedger()
      await expectCatalogEvents(engine)
    } finally {
      await engine.close()
      engine = undefined as never
      await database.drop()
    }
  }, 60_000)
})
