/**
 * A resource's timeline (docs/inspect.md) through the whole pipeline (engine.fetch) on a virtual
 * clock: a non-custodial payout through compliance review, signing and settlement (each state change with its cause,
 * the events, the holds pending then posted, the timers scheduled and fired, and what it waits for before each step
 * and nothing once it ended); an order's, an application's and a webhook delivery's; the operator's and the engine
 * function's reads; and the 404s (unknown, malformed, another organization's, under /live).
 */
import { TimerKinds } from "@fos/contract"
import { Domains, Timeline, Timers } from "@fos/core"
import type { Engine } from "@fos/http"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { approvedCustomer, type Client, clientOf, deuDocuments, deuSubmission, idem } from "./onboardingFixtures.ts"
import { expectProblem, keysOf, makeEngine, orgSeed, seedOf } from "./support.ts"

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
  await engine?.close()
})

const advance = (ms: number) => engine.clock.advance(ms)
const iso = (ms: number) => new Date(ms).toISOString()
const now = async () => Date.parse((await acme.call("GET", "/v2/simulate/clock")).json.now)

const timeline = async (id: string, client: Client = acme) => {
  const r = await client.call("GET", `/v2/simulate/timeline/${id}`)
  expect(r.status, r.text).toBe(200)
  return r.json
}

/** Entries read oldest first: by time, then by the store's sequence. */
const expectOrdered = (entries: ReadonlyArray<any>) => {
  const keys = entries.map((e) => [e.at, e.sequence] as const)
  const sorted = [...keys].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]))
  expect(keys).toEqual(sorted)
}

const states = (t: any) => t.entries.filter((e: any) => e.kind === "state")
const ofKind = (t: any, kind: string) => t.entries.filter((e: any) => e.kind === kind)

const passkey = (name: string, role = "signer") => ({ credentialType: "passkey", role, email: `${name}@acme.example` })

/** A non-custodial wallet on base (alice, admin, and bob; one stamp signs) holding 500 USDC. */
const nonCustodialWallet = async () => {
  const customerId = await approvedCustomer(acme)
  const applied = await acme.call("POST", `/v2/customers/${customerId}/features`, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } }, idem())
  await acme.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
  const claimed = await acme.call("POST", `/v2/customers/${customerId}/wallets/claim-non-custodial`, {
    chains: ["base"],
    roster: [passkey("alice", "admin"), passkey("bob")],
    threshold: 1
  }, idem())
  expect(claimed.status, claimed.text).toBe(202)
  const signers = claimed.json.signers.map((s: { id: string }) => s.id) as Array<string>
  for (const id of signers) expect((await acme.call("POST", `/v2/simulate/wallet-signers/${id}/enroll`, {})).status).toBe(200)
  await advance(30_000)
  const walletId = (await acme.call("GET", `/v2/customers/${customerId}/wallets`)).json.data[0].id as string
  const deposited = await acme.call("POST", "/v2/simulate/deposits", { destination: { type: "wallet", walletId }, assetAmount: { code: "USDC", amount: "500", chain: "base" } })
  expect(deposited.status, deposited.text).toBe(201)
  await acme.call("POST", `/v2/simulate/transactions/${deposited.json.id}/settle`)
  // A deposit's transfers credit the wallet: their accountId is the customer's side, the world's is the other.
  const transfers = ofKind(await timeline(deposited.json.id as string), "transfer")
  expect(transfers.length).toBeGreaterThan(0)
  for (const transfer of transfers) expect(transfer.accountId, transfer.summary).toContain(`/wallet/${walletId}/`)
  return { customerId, walletId, signers, claimId: claimed.json.claimId as string }
}

describe("a payout's timeline", () => {
  it("through compliance review, signing and settlement: states with their causes, events, holds pending then posted, timers, and what it waits for", async () => {
    const { walletId, signers: [alice], claimId } = await nonCustodialWallet()
    const created = await acme.call("POST", "/v2/payouts", {
      source: { type: "wallet", walletId },
      destination: { type: "external_crypto", chain: "base", address: "0x52908400098527886e0f7030069857d2e4169ee7" },
      asset: "USDC",
      amount: "100",
      purpose: "treasury_transfer"
    }, idem())
    expect(created.status, created.text).toBe(201)
    const id = created.json.id as string
    const t0 = await now()

    // Created: a request's change, its event, its holds, and the screening timer it waits for.
    const first = await timeline(id)
    expect(first).toMatchObject({ resourceId: id, resourceType: "transaction", transactionType: "withdrawal", status: "pending", truncated: false })
    expectOrdered(first.entries)
    expect(states(first)).toEqual([{
      at: iso(t0),
      sequence: expect.any(Number),
      kind: "state",
      to: "pending",
      cause: { type: "request", method: "POST", path: "/sandbox/v2/payouts", correlationId: created.headers.get("x-correlation-id") },
      summary: expect.stringContaining(`by POST /sandbox/v2/payouts (correlation id ${created.headers.get("x-correlation-id")})`)
    }])
    expect(ofKind(first, "event").map((e: any) => [e.eventType, e.resourceSequence])).toEqual([["transaction.created", 1]])
    expect(ofKind(first, "transfer").map((e: any) => [e.transferId, e.state, e.amount, e.asset, e.chain])).toEqual([
      [`${id}/payout`, "pending", "100.000000", "USDC", "base"],
      [`${id}/fee`, "pending", "0.500000", "USDC", "base"]
    ])
    for (const transfer of ofKind(first, "transfer")) expect(transfer.accountId).toContain(`wallet/${walletId}/`)
    // The summary names the accounts by their holders, not by the ledger's paths.
    for (const transfer of ofKind(first, "transfer")) {
      expect(transfer.summary).toMatch(new RegExp(`^[0-9.]+ USDC held, pending, from wallet ${walletId} to (the outside world \\(.+\\)|[a-z ]+ \\S+) \\(`))
      expect(transfer.summary).not.toContain("org_")
    }
    const [start] = ofKind(first, "timer_scheduled")
    expect(start).toMatchObject({ at: iso(t0), timerKind: "payout.start", dueAt: iso(t0 + 2_000), pending: true })
    expect(first.waitingFor).toEqual({
      description: expect.stringContaining(`starts payout ${id}`),
      at: iso(t0 + 2_000),
      timerId: start.timerId,
      timerKind: "payout.start"
    })

    // A reviewer holds it: a simulate call's change of stage; it waits for the reviewer.
    const reviewed = await acme.call("POST", `/v2/simulate/transactions/${id}/review`, { action: "enter" })
    expect(reviewed.status, reviewed.text).toBe(200)
    const inReview = await timeline(id)
    expect(states(inReview).at(-1)).toMatchObject({
      from: "pending",
      to: "pending",
      toStage: "under_review",
      cause: { type: "simulate", method: "POST", path: `/sandbox/v2/simulate/transactions/${id}/review`, correlationId: reviewed.headers.get("x-correlation-id") }
    })
    expect(states(inReview).at(-1).cause.operation).toMatch(/review/i)
    expect(inReview.waitingFor.description).toContain("compliance reviewer")
    expect(inReview.waitingFor).not.toHaveProperty("timerId")

    // The screening timer fires and leaves it in review; the reviewer clears it, and it waits for a signer's stamp.
    await advance(2_000)
    const cleared = await acme.call("POST", `/v2/simulate/transactions/${id}/review`, { action: "clear" })
    expect(cleared.status, cleared.text).toBe(200)
    const awaiting = await timeline(id)
    expectOrdered(awaiting.entries)
    expect(ofKind(awaiting, "timer_fired").map((e: any) => [e.timerId, e.at])).toEqual([[start.timerId, iso(t0 + 2_000)]])
    expect(ofKind(awaiting, "timer_scheduled").find((e: any) => e.timerId === start.timerId)).toMatchObject({ pending: false })
    expect(states(awaiting).slice(-2).map((e: any) => [e.from, e.fromStage, e.to, e.toStage, e.cause.type])).toEqual([
      ["pending", "under_review", "pending", undefined, "simulate"],
      ["pending", undefined, "processing", undefined, "simulate"]
    ])
    const windowEnds = iso(t0 + 2_000 + 15 * 60_000)
    expect(awaiting.waitingFor).toEqual({
      description: `a signer's stamp (attempt 1, 0 of 1 collected); the window ends at ${windowEnds}`,
      at: windowEnds,
      timerId: expect.stringMatching(/^tmr_/),
      timerKind: "signing.window_expiry"
    })
    expect(ofKind(awaiting, "event").map((e: any) => e.eventType)).toEqual([
      "transaction.created",
      "transaction.under_review",
      "transaction.processing",
      "transaction.awaiting_signature",
      "transaction.awaiting_user_signature"
    ])

    // Alice stamps: the quorum is met, and it waits for the engine to send it.
    const session = await acme.call("POST", `/v2/simulate/wallet-signers/${alice}/sessions`, {})
    const stamped = await acme.call("POST", `/v2/simulate/transactions/${id}/signatures`, { decision: "approve" }, { authorization: `Bearer ${session.json.token}` })
    expect(stamped.status, stamped.text).toBe(200)
    const signed = await timeline(id)
    expect(ofKind(signed, "event").slice(-2).map((e: any) => e.eventType)).toEqual(["transaction.signature_collected", "transaction.quorum_met"])
    expect(signed.waitingFor).toMatchObject({ timerKind: "payout.send", description: expect.stringContaining(`sends payout ${id} on base`) })

    // Sent and settled on the clock: the settle timer's change, the holds posted, and nothing left to wait for.
    await advance(5 * 60_000)
    const ended = await timeline(id)
    expect(ended.status).toBe("completed")
    expect(ended).not.toHaveProperty("waitingFor")
    expectOrdered(ended.entries)
    const settle = ofKind(ended, "timer_fired").find((e: any) => e.timerKind === "payout.settle")
    expect(states(ended).at(-1)).toMatchObject({
      from: "processing",
      to: "completed",
      cause: { type: "timer", kind: "payout.settle", timerId: settle.timerId }
    })
    expect(ofKind(ended, "timer_fired").map((e: any) => e.timerKind)).toEqual(["payout.start", "payout.send", "payout.settle"])
    expect(ofKind(ended, "transfer").map((e: any) => [e.transferId, e.state])).toEqual([
      [`${id}/payout`, "pending"],
      [`${id}/fee`, "pending"],
      [`${id}/payout`, "posted"],
      [`${id}/fee`, "posted"]
    ])
    expect(ofKind(ended, "event").at(-1)).toMatchObject({ eventType: "transaction.completed", resourceSequence: 4 })
    // The signing window's timer is still pending (it will find the attempt over and do nothing): an ended
    // transaction waits for nothing all the same.
    expect(ofKind(ended, "timer_scheduled").filter((e: any) => e.pending).map((e: any) => e.timerKind)).toEqual(["signing.window_expiry"])

    // Another organization cannot read it; the operator and the engine function read the same.
    expectProblem(await rival.call("GET", `/v2/simulate/timeline/${id}`), { type: "NOT_FOUND", status: 404, instance: `/sandbox/v2/simulate/timeline/${id}` })
    expect(await engine.run(Timeline.timeline("org_acme", id))).toEqual(ended)
    await expect(engine.run(Timeline.timeline("org_rival", id))).rejects.toMatchObject({ code: "NOT_FOUND" })

    // The claim behind the wallet: created by the request, completed when its provisioning timer fired.
    const claim = await timeline(claimId)
    expect(claim).toMatchObject({ resourceType: "claim", status: "completed" })
    expect(states(claim).map((e: any) => [e.from, e.to, e.cause.type])).toEqual([[undefined, "pending", "request"], ["pending", "completed", "timer"]])
  })

  it("a payout whose signer has not stamped waits for the stamp; a signer waits for its enrollment", async () => {
    const customerId = await approvedCustomer(acme)
    const applied = await acme.call("POST", `/v2/customers/${customerId}/features`, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } }, idem())
    await acme.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
    const claimed = await acme.call("POST", `/v2/customers/${customerId}/wallets/claim-non-custodial`, { chains: ["base"], roster: [passkey("alice", "admin")], threshold: 1 }, idem())
    const [alice] = claimed.json.signers.map((s: { id: string }) => s.id) as Array<string>
    const signer = await timeline(alice!)
    expect(signer).toMatchObject({ resourceType: "wallet_signer", status: "pending_activation" })
    expect(signer.waitingFor.description).toMatch(/^the signer's enrollment; the invitation ends at /)
    expect(signer.waitingFor.at).toBe(signer.waitingFor.description.split("ends at ")[1])
    const claim = await timeline(claimed.json.claimId)
    expect(claim.waitingFor).toMatchObject({ timerKind: "signing.claim_provisioning" })
    await acme.call("POST", `/v2/simulate/wallet-signers/${alice}/enroll`, {})
    expect(states(await timeline(alice!)).map((e: any) => [e.from, e.to, e.cause.type])).toEqual([[undefined, "pending_activation", "request"], ["pending_activation", "enrolled", "simulate"]])
  })
})

describe("an order's timeline", () => {
  it("waits for the caller's execution within the rate lock, then for the engine, and ends succeeded by its settle timer", async () => {
    const customerId = await approvedCustomer(acme)
    const feature = async (body: unknown) => {
      const applied = await acme.call("POST", `/v2/customers/${customerId}/features`, body, idem())
      await acme.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
    }
    await feature({ type: "virtual_account", asset: { code: "USD" } })
    await feature({ type: "crypto_wallet", asset: { code: "USDC", chain: "base" } })
    await advance(30_000)
    const accountId = (await acme.call("GET", `/v2/customers/${customerId}/virtual-accounts`)).json.data[0].id as string
    const walletId = (await acme.call("POST", `/v2/customers/${customerId}/wallets`, { chain: "base" }, idem())).json.id as string
    const deposited = await acme.call("POST", "/v2/simulate/deposits", { destination: { type: "virtual_account", virtualAccountId: accountId }, assetAmount: { code: "USD", amount: "1000.00" }, rail: "rtp" })
    await acme.call("POST", `/v2/simulate/transactions/${deposited.json.id}/settle`)
    const created = await acme.call("POST", "/v2/orders", {
      source: { type: "virtual_account", virtualAccountId: accountId },
      destination: { type: "wallet", walletId, asset: "USDC" },
      amount: "100",
      lockSide: "source"
    }, idem())
    expect(created.status, created.text).toBe(201)
    const id = created.json.id as string
    const pending = await timeline(id)
    expect(pending).toMatchObject({ resourceType: "order", status: "pending" })
    expect(states(pending)).toMatchObject([{ to: "pending", cause: { type: "request", path: "/sandbox/v2/orders" } }])
    expect(pending.waitingFor).toEqual({
      description: `the caller's execution (POST /v2/orders/${id}/execute); the rate lock ends at ${created.json.lockExpiresAt}`,
      at: created.json.lockExpiresAt,
      timerId: expect.stringMatching(/^tmr_/),
      timerKind: "order.lock_expiry"
    })
    const executed = await acme.call("POST", `/v2/orders/${id}/execute`, undefined, idem())
    expect(executed.status, executed.text).toBe(200)
    const executing = await timeline(id)
    expect(executing.waitingFor).toMatchObject({ timerKind: "order.start" })
    await advance(60 * 60_000)
    const ended = await timeline(id)
    expect(ended.status).toBe("succeeded")
    expect(ended).not.toHaveProperty("waitingFor")
    expect(states(ended).at(-1)).toMatchObject({ from: "pending", to: "succeeded", cause: { type: "timer", kind: "order.settle" } })
    expect(ofKind(ended, "event").at(-1)).toMatchObject({ eventType: "order.succeeded" })
    expectOrdered(ended.entries)
  })
})

describe("an application's timeline", () => {
  it("is created open by the submission, waits for its review, and ends approved by a simulate decision", async () => {
    const docs = await deuDocuments(acme)
    const submitted = await acme.call("POST", "/v2/onboarding", deuSubmission(docs, { clientReferenceId: "timeline-app" }), idem())
    expect(submitted.status, submitted.text).toBe(201)
    const id = submitted.json.applicationId as string
    const open = await timeline(id)
    expect(open).toMatchObject({ resourceType: "application", status: "open" })
    expect(states(open)).toMatchObject([{ to: "open", cause: { type: "request", method: "POST", path: "/sandbox/v2/onboarding" } }])
    expect(open.waitingFor).toMatchObject({ timerKind: "application.review", description: expect.stringContaining(`reviews application ${id}`) })
    const decided = await acme.call("POST", `/v2/simulate/applications/${id}/decision`, { outcome: "approved" })
    expect(decided.status, decided.text).toBe(200)
    const approved = await timeline(id)
    expect(approved.status).toBe("approved")
    expect(approved).not.toHaveProperty("waitingFor")
    expect(states(approved).at(-1)).toMatchObject({ from: "open", to: "approved", cause: { type: "simulate", correlationId: decided.headers.get("x-correlation-id") } })
    expect(ofKind(approved, "event").map((e: any) => e.eventType)).toContain("application.approved")
  })
})

describe("a webhook delivery's timeline", () => {
  it("shows the delivery opened for its event, its attempt timer fired, and its end", async () => {
    expect((await acme.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.example.com/a" }, idem())).status).toBe(201)
    expect((await acme.call("POST", "/v2/simulate/events", { type: "customer.created" })).status).toBe(201)
    await engine.deliveries.flush()
    const [delivery] = (await acme.call("GET", "/v2/webhooks/deliveries")).json.data
    const t = await timeline(delivery.id)
    expect(t).toMatchObject({ resourceType: "webhook_delivery", status: delivery.status })
    expect(states(t)[0]).toMatchObject({ to: "pending", cause: { type: "simulate", path: "/sandbox/v2/simulate/events" } })
    expect(ofKind(t, "timer_fired").map((e: any) => e.timerKind)).toContain("webhook.attempt")
    // The event it carries opens its story.
    expect(ofKind(t, "event")).toMatchObject([{ eventId: delivery.eventId, eventType: "customer.created" }])
    expect(states(t).at(-1).to).toBe(delivery.status)
    if (delivery.status === "succeeded") expect(t).not.toHaveProperty("waitingFor")
    expectOrdered(t.entries)
  })
})

describe("refusals", () => {
  it("is 404 NOT_FOUND for an unknown or malformed id, another organization's resource, and under /live", async () => {
    for (const id of ["txn_unknown", "nothing", "evt_123", "ord_x"]) {
      expectProblem(await acme.call("GET", `/v2/simulate/timeline/${id}`), { type: "NOT_FOUND", status: 404, instance: `/sandbox/v2/simulate/timeline/${id}` })
    }
    const docs = await deuDocuments(rival)
    const submitted = await rival.call("POST", "/v2/onboarding", deuSubmission(docs, { clientReferenceId: "rival-app" }), idem())
    const id = submitted.json.applicationId as string
    expect((await timeline(id, rival)).resourceType).toBe("application")
    expectProblem(await acme.call("GET", `/v2/simulate/timeline/${id}`), { type: "NOT_FOUND", status: 404, instance: `/sandbox/v2/simulate/timeline/${id}` })
    const live = clientOf(engine.fetch, "http://fos", keysOf("acme").live, "live")
    expect((await live.call("GET", `/v2/simulate/timeline/${id}`)).status).toBe(404)
  })
})

describe("the timers' resources", () => {
  it("are named by each kind's descriptor, one handler for every kind the contract names", () => {
    const handled = Domains.all.flatMap((domain) => ("timers" in domain ? domain.timers : []) as ReadonlyArray<Timers.Handling<any>>)
    expect(handled.map((h) => h.kind.name).sort()).toEqual([...TimerKinds].sort())
    // Every kind of the engine belongs to a resource its payload names, but the idempotency key's retention.
    for (const h of handled) expect(h.kind.resource === undefined, h.kind.name).toBe(h.kind.name === "idempotency.expire")
    // A kind declared by name alone (a host's own), or a timer stored before timers carried the id: the payload's
    // first `…Id` member.
    expect(Timers.resourceIdOf({ payload: { note: 1, widgetId: "wgt_1", otherId: "x" } })).toBe("wgt_1")
    expect(Timers.resourceIdOf({ payload: { id: "org/sandbox/key" } })).toBeUndefined()
    expect(Timers.resourceIdOf({ payload: { transactionId: "txn_1" }, resourceId: "txn_2" })).toBe("txn_2")
  })
})
