/**
 * Non-custodial wallets through the whole pipeline (engine.fetch) on a virtual clock: the claim with its roster and
 * threshold and every synchronous refusal, its provisioning (on the clock, or failed by the simulate call), the
 * roster's enrollment, the ceremonies an admin co-stamps (extra passkeys, promotion, demotion, removal) with their
 * expiry, ops removal, and the signer sessions of Authentication rule 10.
 */
import type { Engine } from "@fos/http"
import { describe, expect, it } from "vitest"
import { type Client, clientOf, deuDocuments, deuSubmission, idem, twoOrganizationsPerTest, usaSubmission } from "./onboardingFixtures.ts"
import { expectProblem, keysOf, outboxEvents, START_MS } from "./support.ts"

let engine: Engine
let acme: Client
let rival: Client

// Every event a test made is one the event catalog accepts.
twoOrganizationsPerTest({ set: (world) => ({ engine, acme, rival } = world), current: () => engine })

const events = (type?: string) => outboxEvents(engine, type)
const iso = (ms: number) => new Date(ms).toISOString()
const signingEvents = async () =>
  (await events()).filter((e) => /^(wallet_signer|wallet_ceremony|claim|crypto_wallet|wallet)\./.test(e.type))

let customers = 0
const customer = async () => {
  const docs = await deuDocuments(acme)
  const submitted = await acme.call("POST", "/v2/onboarding", deuSubmission(docs, { clientReferenceId: `signing-customer-${++customers}` }), idem())
  expect(submitted.status, submitted.text).toBe(201)
  const decided = await acme.call("POST", `/v2/simulate/applications/${submitted.json.applicationId}/decision`, { outcome: "approved" })
  return decided.json.customerId as string
}

const cryptoWallet = async (customerId: string, chain = "base", code = "USDC") => {
  const applied = await acme.call("POST", `/v2/customers/${customerId}/features`, { type: "crypto_wallet", asset: { code, chain } }, idem())
  expect(applied.status, applied.text).toBe(201)
  await acme.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
}

const roster = [
  { credentialType: "passkey", role: "admin", email: "alice@acme.example" },
  { credentialType: "passkey", role: "signer", email: "bob@acme.example" },
  { credentialType: "api_key", role: "signer", name: "treasury-bot" }
]

const claim = (customerId: string, body: Record<string, unknown> = { chains: ["base", "solana"], roster, threshold: 2 }, headers = idem()) =>
  acme.call("POST", `/v2/customers/${customerId}/wallets/claim-non-custodial`, body, headers)

const enroll = (signerId: string, body: Record<string, unknown> = {}) => acme.call("POST", `/v2/simulate/wallet-signers/${signerId}/enroll`, body)
const login = async (signerId: string) => {
  const r = await acme.call("POST", `/v2/simulate/wallet-signers/${signerId}/sessions`, {})
  expect(r.status, r.text).toBe(201)
  return r.json.token as string
}
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** A customer with a resolved claim: alice (passkey admin, 2 passkeys), bob (passkey signer, 1) and the bot. */
const claimed = async () => {
  const customerId = await customer()
  await cryptoWallet(customerId)
  await cryptoWallet(customerId, "solana", "SOL")
  const accepted = await claim(customerId)
  expect(accepted.status, accepted.text).toBe(202)
  const [alice, bob, bot] = accepted.json.signers.map((s: { id: string }) => s.id) as [string, string, string]
  for (const id of [alice, bob, bot]) expect((await enroll(id)).status).toBe(200)
  await engine.clock.advance("30 seconds")
  return { customerId, claimId: accepted.json.claimId as string, alice, bob, bot }
}

describe("claims", () => {
  it("accepts a claim with 202, invites its roster, and resolves once provisioned and every signer enrolled: wallets, claim.completed, crypto_wallet.completed", async () => {
    const customerId = await customer()
    await cryptoWallet(customerId)
    await cryptoWallet(customerId, "solana", "SOL")
    const key = idem()
    const body = { chains: ["base", "solana"], roster, threshold: 2, clientReferenceId: "vault" }
    const accepted = await claim(customerId, body, key)
    expect(accepted.status, accepted.text).toBe(202)
    // A retry with the same key and body is the same claim, replayed.
    const replayed = await claim(customerId, body, key)
    expect([replayed.status, replayed.headers.get("idempotency-replayed"), replayed.json]).toEqual([202, "true", accepted.json])
    const signer = (role: string, credentialType: string, extra: Record<string, string>) => ({
      id: expect.stringMatching(/^wsg_[0-9a-z]{24}$/),
      customerId,
      claimId: accepted.json.claimId,
      role,
      credentialType,
      status: "pending_activation",
      passkeyCount: 0,
      ...extra,
      createdAt: iso(START_MS),
      updatedAt: iso(START_MS)
    })
    expect(accepted.json).toEqual({
      claimId: expect.stringMatching(/^clm_[0-9a-z]{24}$/),
      customerId,
      status: "pending",
      chains: ["base", "solana"],
      threshold: 2,
      signers: [
        signer("admin", "passkey", { email: "alice@acme.example" }),
        signer("signer", "passkey", { email: "bob@acme.example" }),
        signer("signer", "api_key", { name: "treasury-bot" })
      ],
      clientReferenceId: "vault",
      createdAt: iso(START_MS)
    })
    const [alice, bob, bot] = accepted.json.signers.map((s: { id: string }) => s.id) as [string, string, string]
    expect((await signingEvents()).map((e) => [e.type, e.data.walletSignerId])).toEqual([
      ["wallet_signer.added", alice],
      ["wallet_signer.invited", alice],
      ["wallet_signer.added", bob],
      ["wallet_signer.invited", bob],
      ["wallet_signer.added", bot],
      ["wallet_signer.invited", bot]
    ])
    const [invited] = await events("wallet_signer.invited")
    expect(invited!.data).toEqual({
      walletSignerId: alice,
      customerId,
      verificationUrl: expect.stringMatching(/^https:\/\/sign\.fos\.dev\/enroll\/[0-9a-f]{32}$/),
      expiresAt: iso(START_MS + 7 * 24 * 3600_000),
      occurredAt: iso(START_MS)
    })
    // Two enroll before the wallets are provisioned; the claim waits for the last.
    const enrolled = await enroll(alice)
    expect(enrolled.json).toMatchObject({ id: alice, status: "enrolled", passkeyCount: 2 })
    expect((await enroll(bot)).json).toMatchObject({ status: "enrolled", passkeyCount: 0 })
    await engine.clock.advance("30 seconds")
    expect(await events("claim.completed")).toEqual([])
    expect((await enroll(bob, { passkeyCount: 1 })).json).toMatchObject({ status: "enrolled", passkeyCount: 1 })
    const sent = (await signingEvents()).slice(6)
    expect(sent.map((e) => e.type)).toEqual([
      "wallet_signer.enrolled",
      "wallet_signer.enrolled",
      "wallet_signer.enrolled",
      "wallet.created",
      "wallet.created",
      "claim.completed",
      "crypto_wallet.completed"
    ])
    expect(sent[0]!.data).toEqual({ walletSignerId: alice, customerId, passkeyCount: 2, occurredAt: iso(START_MS) })
    const wallets = (await acme.call("GET", `/v2/customers/${customerId}/wallets`)).json.data
    expect(wallets.map((w: { chain: string; custody: string; status: string }) => [w.chain, w.custody, w.status]).sort()).toEqual([
      ["base", "non_custodial", "active"],
      ["solana", "non_custodial", "active"]
    ])
    const walletIds = sent.filter((e) => e.type === "wallet.created").map((e) => e.data.walletId)
    expect(sent[3]!.data).toMatchObject({ custody: "non_custodial", chain: "base" })
    const at = iso(START_MS + 30_000)
    expect(sent[5]!.data).toEqual({ claimId: accepted.json.claimId, customerId, walletIds, occurredAt: at })
    expect(sent[6]!.data).toEqual({ customerId, claimId: accepted.json.claimId, occurredAt: at })

    // A non-custodial wallet takes deposits like any other.
    const base = wallets.find((w: { chain: string }) => w.chain === "base")
    const deposit = await acme.call("POST", "/v2/simulate/deposits", { destination: { type: "deposit_address", address: base.address }, assetAmount: { code: "USDC", amount: "12.5", chain: "base" } })
    expect(deposit.status, deposit.text).toBe(201)
    await engine.clock.advance("1 minute")
    expect((await acme.call("GET", `/v2/wallets/${base.id}`)).json).toMatchObject({ custody: "non_custodial", balances: [{ code: "USDC", available: "12.500000" }] })
    // Rotation keeps the wallet's custody: the successor is signed for by the same roster.
    const solana = wallets.find((w: { chain: string }) => w.chain === "solana")
    const rotated = await acme.call("POST", `/v2/wallets/${solana.id}/rotate`, undefined, idem())
    expect(rotated.status, rotated.text).toBe(201)
    expect(rotated.json).toMatchObject({ chain: "solana", custody: "non_custodial", status: "active" })
    // Provisioned and resolved: nothing more to simulate, and no second claim.
    expectProblem(await acme.call("POST", `/v2/simulate/claims/${accepted.json.claimId}/provisioning`, { outcome: "failed" }), {
      type: "RESOURCE_TERMINAL",
      status: 409,
      instance: `/sandbox/v2/simulate/claims/${accepted.json.claimId}/provisioning`
    })
    expectProblem(await claim(customerId), { type: "CONFLICT", status: 409, instance: `/sandbox/v2/customers/${customerId}/wallets/claim-non-custodial` })
    expectProblem(await enroll(alice), { type: "CONFLICT", status: 409, instance: `/sandbox/v2/simulate/wallet-signers/${alice}/enroll` })
  })

  it("refuses a claim's roster, threshold, chains and jurisdiction problems synchronously, and writes and emits nothing", async () => {
    const customerId = await customer()
    await cryptoWallet(customerId)
    const at = `/sandbox/v2/customers/${customerId}/wallets/claim-non-custodial`
    const before = (await events()).length
    expectProblem(await claim(customerId, { chains: ["base"], roster, threshold: 2 }, {}), { type: "IDEMPOTENCY_KEY_REQUIRED", status: 400, instance: at })
    const bad = async (body: Record<string, unknown>) => expectProblem(await claim(customerId, { chains: ["base"], roster, threshold: 2, ...body }), { type: "VALIDATION_ERROR", status: 400, instance: at }).errors
    expect(await bad({ threshold: 4 })).toEqual([{ pointer: "/threshold", detail: expect.stringContaining("from 1") }])
    expect(await bad({ threshold: 0 })).toEqual([{ pointer: "/threshold", detail: expect.any(String) }])
    expect(await bad({ threshold: 1.5 })).toEqual([{ pointer: "/threshold", detail: expect.any(String) }])
    expect(await bad({ roster: [] })).toEqual([{ pointer: "/roster", detail: expect.any(String) }])
    expect(await bad({ roster: [roster[1]], threshold: 1 })).toEqual([{ pointer: "/roster", detail: "must include at least one admin" }])
    expect(await bad({ roster: [roster[0], { credentialType: "passkey", role: "signer" }, { ...roster[0], role: "signer" }, { credentialType: "api_key", role: "signer", email: "x@y.example" }] })).toEqual([
      { pointer: "/roster/1/email", detail: "is required for a passkey signer" },
      { pointer: "/roster/2/email", detail: "names a signer already on the roster" },
      { pointer: "/roster/3/email", detail: "is only for passkey signers" },
      { pointer: "/roster/3/name", detail: "is required for an api_key signer" }
    ])
    expect(await bad({ roster: Array.from({ length: 11 }, (_, i) => ({ credentialType: "passkey", role: "admin", email: `a${i}@acme.example` })) })).toEqual([
      { pointer: "/roster", detail: "must name at most 10 signers" }
    ])
    expect(await bad({ chains: ["base", "base"] })).toEqual([{ pointer: "/chains/1", detail: "names a chain twice" }])
    expect((await bad({ roster: [{ credentialType: "quill", role: "admin" }] }))[0].pointer).toBe("/roster/0/credentialType")
    expectProblem(await claim(customerId, { chains: ["stellar"], roster, threshold: 2 }), { type: "NON_CUSTODIAL_SOURCE_NOT_SUPPORTED", status: 422, instance: at })
    // No approved crypto_wallet application on the chain.
    const noFeature = await claim(customerId, { chains: ["ethereum"], roster, threshold: 2 })
    expectProblem(noFeature, { type: "UNPROCESSABLE_ENTITY", status: 422, instance: at })
    expect(noFeature.json.resolution).toContain("POST /v2/customers/{customerId}/features")
    // A customer in a jurisdiction crypto wallets are not offered in (New York).
    const ny = await acme.call("POST", "/v2/onboarding", await usaSubmission(acme, "ny-claim"), idem())
    const nyCustomer = (await acme.call("POST", `/v2/simulate/applications/${ny.json.applicationId}/decision`, { outcome: "approved" })).json.customerId
    const nyBefore = (await events()).length
    const refused = expectProblem(await claim(nyCustomer, { chains: ["base"], roster, threshold: 2 }), {
      type: "UNPROCESSABLE_ENTITY",
      status: 422,
      instance: `/sandbox/v2/customers/${nyCustomer}/wallets/claim-non-custodial`
    })
    expect(refused.detail).toContain("jurisdiction")
    expect((await events()).length).toBe(nyBefore)
    expectProblem(await claim("cus_nobody"), { type: "CUSTOMER_NOT_FOUND", status: 404, instance: "/sandbox/v2/customers/cus_nobody/wallets/claim-non-custodial" })
    expectProblem(await rival.call("POST", `/v2/customers/${customerId}/wallets/claim-non-custodial`, { chains: ["base"], roster, threshold: 2 }, idem()), {
      type: "CUSTOMER_NOT_FOUND",
      status: 404,
      instance: at
    })
    // Nothing of the refused claims was written or emitted: the events since are the NY customer's onboarding only.
    expect((await events()).slice(before).every((e) => e.type.startsWith("application.") || e.type.startsWith("customer."))).toBe(true)
    expect(await signingEvents()).toEqual([])
    // A claim is accepted once; a second one while it is pending is a conflict.
    expect((await claim(customerId, { chains: ["base"], roster, threshold: 3 })).status).toBe(202)
    expectProblem(await claim(customerId, { chains: ["base"], roster, threshold: 2 }), { type: "CONFLICT", status: 409, instance: at })
  })

  it("fails a claim whose provisioning fails (claim.failed): its roster can no longer enroll, the timer does nothing more, and a new claim may start", async () => {
    const customerId = await customer()
    await cryptoWallet(customerId)
    const accepted = (await claim(customerId, { chains: ["base"], roster, threshold: 1 })).json
    const path = `/v2/simulate/claims/${accepted.claimId}/provisioning`
    expectProblem(await acme.call("POST", path, { outcome: "maybe" }), { type: "VALIDATION_ERROR", status: 400, instance: `/sandbox${path}` })
    expectProblem(await acme.call("POST", "/v2/simulate/claims/wlt_notaclaim/provisioning", { outcome: "failed" }), {
      type: "INVALID_OID_FORMAT",
      status: 400,
      instance: "/sandbox/v2/simulate/claims/wlt_notaclaim/provisioning"
    })
    expectProblem(await rival.call("POST", path, { outcome: "failed" }), { type: "NOT_FOUND", status: 404, instance: `/sandbox${path}` })
    await engine.clock.advance("10 seconds")
    const [alice, bob] = accepted.signers.map((s: { id: string }) => s.id)
    expect((await enroll(bob)).status).toBe(200)
    const bobToken = await login(bob)
    const failed = await acme.call("POST", path, { outcome: "failed" })
    expect(failed.status, failed.text).toBe(200)
    expect(failed.json).toEqual({ claimId: accepted.claimId, customerId, status: "failed", provisioned: false, walletIds: [] })
    expect((await events("claim.failed")).map((e) => e.data)).toEqual([{
      claimId: accepted.claimId,
      customerId,
      failureCode: "provisioning_failed",
      failureMessage: "The non-custodial wallets could not be provisioned. Start a new claim.",
      occurredAt: iso(START_MS + 10_000)
    }])
    expectProblem(await acme.call("POST", path, { outcome: "succeeded" }), { type: "RESOURCE_TERMINAL", status: 409, instance: `/sandbox${path}` })
    expectProblem(await enroll(alice), { type: "RESOURCE_TERMINAL", status: 409, instance: `/sandbox/v2/simulate/wallet-signers/${alice}/enroll` })
    // A signer that enrolled before the failure can no longer log in, and its session ends.
    expectProblem(await acme.call("GET", "/v2/signer/session", undefined, bearer(bobToken)), { type: "SIGNER_SESSION_INVALID", status: 401, instance: "/sandbox/v2/signer/session" })
    expectProblem(await acme.call("POST", `/v2/simulate/wallet-signers/${bob}/sessions`, {}), {
      type: "SIGNER_AUTH_FAILED",
      status: 401,
      instance: `/sandbox/v2/simulate/wallet-signers/${bob}/sessions`
    })
    await engine.clock.advance("1 minute")
    expect(await events("claim.completed")).toEqual([])
    expect((await claim(customerId, { chains: ["base"], roster, threshold: 1 })).status).toBe(202)
  })

  it("provisions by the simulate call before its time, then refuses a second answer; an expired invitation cannot enroll", async () => {
    const customerId = await customer()
    await cryptoWallet(customerId)
    const accepted = (await claim(customerId, { chains: ["base"], roster: [roster[0], roster[1]], threshold: 1 })).json
    const path = `/v2/simulate/claims/${accepted.claimId}/provisioning`
    expect((await acme.call("POST", path, { outcome: "succeeded" })).json).toMatchObject({ status: "pending", provisioned: true })
    expectProblem(await acme.call("POST", path, { outcome: "succeeded" }), { type: "CONFLICT", status: 409, instance: `/sandbox${path}` })
    const [alice, bob] = accepted.signers.map((s: { id: string }) => s.id)
    expectProblem(await enroll(alice, { passkeyCount: 1 }), { type: "UNPROCESSABLE_ENTITY", status: 422, instance: `/sandbox/v2/simulate/wallet-signers/${alice}/enroll` })
    expect((await enroll(alice)).status).toBe(200)
    await engine.clock.advance("8 days")
    expectProblem(await enroll(bob), { type: "UNPROCESSABLE_ENTITY", status: 422, instance: `/sandbox/v2/simulate/wallet-signers/${bob}/enroll` })
    // Ops removing the signer that never enrolled lets the rest of the roster resolve the claim.
    const removed = await acme.call("POST", `/v2/simulate/wallet-signers/${bob}/remove`)
    expect(removed.json).toMatchObject({ id: bob, status: "removed" })
    expect((await events("wallet_signer.removed")).map((e) => e.data.reason)).toEqual(["ops_removed"])
    expect((await events("claim.completed")).map((e) => e.data.walletIds.length)).toEqual([1])
    expectProblem(await acme.call("POST", `/v2/simulate/wallet-signers/${bob}/remove`), { type: "RESOURCE_TERMINAL", status: 409, instance: `/sandbox/v2/simulate/wallet-signers/${bob}/remove` })
    expectProblem(await acme.call("POST", "/v2/simulate/wallet-signers/wsg_nobody/enroll", {}), { type: "NOT_FOUND", status: 404, instance: "/sandbox/v2/simulate/wallet-signers/wsg_nobody/enroll" })
  })
})

describe("sandbox reset", () => {
  it("removes the sandbox's claims, signers and ceremonies, so a customer claims again from scratch", async () => {
    const { customerId, bob } = await claimed()
    const pending = (await acme.call("POST", `/v2/simulate/wallet-signers/${bob}/passkeys`)).json
    expect((await acme.call("POST", "/v2/simulate/reset")).status).toBe(200)
    expectProblem(await enroll(bob), { type: "NOT_FOUND", status: 404, instance: `/sandbox/v2/simulate/wallet-signers/${bob}/enroll` })
    expectProblem(await acme.call("POST", `/v2/simulate/wallet-ceremonies/${pending.ceremonyId}/decision`, { outcome: "approved" }, bearer("x")), {
      type: "SIGNER_SESSION_INVALID",
      status: 401,
      instance: `/sandbox/v2/simulate/wallet-ceremonies/${pending.ceremonyId}/decision`
    })
    // The customer went with the reset too.
    expectProblem(await claim(customerId), { type: "CUSTOMER_NOT_FOUND", status: 404, instance: `/sandbox/v2/customers/${customerId}/wallets/claim-non-custodial` })
    // Nothing of the old roster acts a day later, when its ceremony would have expired.
    await engine.clock.advance("25 hours")
    expect(await events("wallet_ceremony.failed")).toEqual([])
  })
})

describe("signers and ceremonies", () => {
  it("waits for an admin on an extra passkey, reissues its link, and approves it on the admin's co-stamp", async () => {
    const { customerId, alice, bob } = await claimed()
    const added = await acme.call("POST", `/v2/simulate/wallet-signers/${bob}/passkeys`)
    expect(added.status, added.text).toBe(201)
    expect(added.json).toEqual({
      walletSignerId: bob,
      ceremonyId: expect.stringMatching(/^cer_[0-9a-z]{24}$/),
      adminVerificationUrl: expect.stringMatching(/^https:\/\/sign\.fos\.dev\/approvals\/cer_[0-9a-z]{24}\/[0-9a-f]{32}$/),
      expiresAt: iso(START_MS + 30_000 + 24 * 3600_000)
    })
    expectProblem(await acme.call("POST", `/v2/simulate/wallet-signers/${bob}/passkeys`), { type: "CONFLICT", status: 409, instance: `/sandbox/v2/simulate/wallet-signers/${bob}/passkeys` })
    await engine.clock.advance("1 hour")
    const reissuePath = `/v2/customers/${customerId}/wallet-signers/${bob}/reissue-admin-approval`
    const reissued = await acme.call("POST", reissuePath)
    expect(reissued.status, reissued.text).toBe(200)
    expect(reissued.json.ceremonyId).toBe(added.json.ceremonyId)
    expect(reissued.json.adminVerificationUrl).not.toBe(added.json.adminVerificationUrl)
    expect(reissued.json.expiresAt).toBe(iso(START_MS + 30_000 + 3600_000 + 24 * 3600_000))
    expect((await events("wallet_signer.awaiting_admin_approval")).map((e) => e.data)).toEqual([
      { walletSignerId: bob, customerId, signerId: bob, adminVerificationUrl: added.json.adminVerificationUrl, expiresAt: added.json.expiresAt, occurredAt: iso(START_MS + 30_000) },
      { walletSignerId: bob, customerId, signerId: bob, adminVerificationUrl: reissued.json.adminVerificationUrl, expiresAt: reissued.json.expiresAt, occurredAt: iso(START_MS + 30_000 + 3600_000) }
    ])
    // The first link's expiry passes: the reissued link is the one that counts.
    await engine.clock.advance("23 hours")
    expect(await events("wallet_ceremony.failed")).toEqual([])
    const decision = `/v2/simulate/wallet-ceremonies/${added.json.ceremonyId}/decision`
    // Only an admin co-stamps.
    expectProblem(await acme.call("POST", decision, { outcome: "approved" }, bearer(await login(bob))), { type: "INSUFFICIENT_ROLE", status: 403, instance: `/sandbox${decision}` })
    const approved = await acme.call("POST", decision, { outcome: "approved" }, bearer(await login(alice)))
    expect(approved.status, approved.text).toBe(200)
    expect(approved.json).toMatchObject({ id: added.json.ceremonyId, type: "passkey_addition", status: "completed", walletSignerId: bob })
    const now = iso(START_MS + 30_000 + 24 * 3600_000)
    expect((await events()).slice(-2).map((e) => [e.type, e.data])).toEqual([
      ["wallet_ceremony.completed", { ceremonyId: added.json.ceremonyId, customerId, walletSignerId: bob, type: "passkey_addition", occurredAt: now }],
      ["wallet_signer.enrollment_approved", { walletSignerId: bob, customerId, approvedByWalletSignerId: alice, approvedAt: now, occurredAt: now }]
    ])
    expectProblem(await acme.call("POST", decision, { outcome: "declined" }, bearer(await login(alice))), { type: "RESOURCE_TERMINAL", status: 409, instance: `/sandbox${decision}` })
    expectProblem(await acme.call("POST", reissuePath), { type: "CONFLICT", status: 409, instance: `/sandbox${reissuePath}` })
    expectProblem(await acme.call("POST", `/v2/customers/${customerId}/wallet-signers/wsg_nobody/reissue-admin-approval`), {
      type: "NOT_FOUND",
      status: 404,
      instance: `/sandbox/v2/customers/${customerId}/wallet-signers/wsg_nobody/reissue-admin-approval`
    })
    const session = (await acme.call("GET", "/v2/signer/session", undefined, bearer(await login(bob)))).json
    expect(session.signer).toMatchObject({ id: bob, status: "approved", passkeyCount: 2, role: "signer" })
  })

  it("fails a waiting additional passkey when its link expires (wallet_ceremony.failed), after which its link cannot be reissued", async () => {
    const { customerId, bob } = await claimed()
    const added = (await acme.call("POST", `/v2/simulate/wallet-signers/${bob}/passkeys`)).json
    await engine.clock.advance("24 hours")
    expect((await events("wallet_ceremony.failed")).map((e) => e.data)).toEqual([
      { ceremonyId: added.ceremonyId, customerId, walletSignerId: bob, type: "passkey_addition", status: "failed", occurredAt: added.expiresAt }
    ])
    const reissuePath = `/v2/customers/${customerId}/wallet-signers/${bob}/reissue-admin-approval`
    expectProblem(await acme.call("POST", reissuePath), { type: "CONFLICT", status: 409, instance: `/sandbox${reissuePath}` })
    // Another customer's path does not reach the signer.
    const other = await customer()
    expectProblem(await acme.call("POST", `/v2/customers/${other}/wallet-signers/${bob}/reissue-admin-approval`), {
      type: "NOT_FOUND",
      status: 404,
      instance: `/sandbox/v2/customers/${other}/wallet-signers/${bob}/reissue-admin-approval`
    })
    expectProblem(await acme.call("POST", `/v2/customers/${customerId}/wallet-signers/cus_x/reissue-admin-approval`), {
      type: "INVALID_OID_FORMAT",
      status: 400,
      instance: `/sandbox/v2/customers/${customerId}/wallet-signers/cus_x/reissue-admin-approval`
    })
    // The signer keeps its one passkey and may try again.
    expect((await acme.call("GET", "/v2/signer/session", undefined, bearer(await login(bob)))).json.signer).toMatchObject({ status: "enrolled", passkeyCount: 1 })
    expect((await acme.call("POST", `/v2/simulate/wallet-signers/${bob}/passkeys`)).status).toBe(201)
  })

  it("promotes, demotes and removes signers by ceremonies an admin starts and another co-stamps; a ceremony expires on the clock or is declined", async () => {
    const { customerId, alice, bob, bot } = await claimed()
    const start = (token: string, type: string, walletSignerId: string) => acme.call("POST", "/v2/signer/ceremonies", { type, walletSignerId }, bearer(token))
    const decide = (ceremonyId: string, outcome: string, token: string) => acme.call("POST", `/v2/simulate/wallet-ceremonies/${ceremonyId}/decision`, { outcome }, bearer(token))
    const aliceToken = await login(alice)
    // A passkey signer needs 2 passkeys to be promoted; a signer cannot start a roster ceremony.
    expectProblem(await start(aliceToken, "signer_promotion", bob), { type: "UNPROCESSABLE_ENTITY", status: 422, instance: "/sandbox/v2/signer/ceremonies" })
    expectProblem(await start(await login(bot), "signer_removal", bob), { type: "INSUFFICIENT_ROLE", status: 403, instance: "/sandbox/v2/signer/ceremonies" })
    expectProblem(await start(aliceToken, "signer_demotion", alice), { type: "CONFLICT", status: 409, instance: "/sandbox/v2/signer/ceremonies" })
    expectProblem(await start(aliceToken, "signer_demotion", "wlt_x"), { type: "VALIDATION_ERROR", status: 400, instance: "/sandbox/v2/signer/ceremonies" })
    // The machine signer needs no passkeys: its promotion waits for a co-stamp, and fails on the clock.
    const first = await start(aliceToken, "signer_promotion", bot)
    expect(first.status, first.text).toBe(201)
    expect(first.json).toMatchObject({ type: "signer_promotion", status: "awaiting_admin_approval", walletSignerId: bot, customerId })
    const [awaiting] = await events("wallet_ceremony.awaiting_admin_approval")
    expect(awaiting!.data).toEqual({
      ceremonyId: first.json.id,
      customerId,
      walletSignerId: bot,
      type: "signer_promotion",
      adminVerificationUrl: first.json.adminVerificationUrl,
      expiresAt: first.json.expiresAt,
      occurredAt: iso(START_MS + 30_000)
    })
    await engine.clock.advance("24 hours")
    expect((await events("wallet_ceremony.failed")).map((e) => e.data)).toEqual([
      { ceremonyId: first.json.id, customerId, walletSignerId: bot, type: "signer_promotion", status: "failed", occurredAt: first.json.expiresAt }
    ])
    const renewed = await login(alice)
    expectProblem(await decide(first.json.id, "approved", renewed), { type: "RESOURCE_TERMINAL", status: 409, instance: `/sandbox/v2/simulate/wallet-ceremonies/${first.json.id}/decision` })
    const second = (await start(renewed, "signer_promotion", bot)).json
    expect((await decide(second.id, "approved", renewed)).json.status).toBe("completed")
    const promoted = (await events("wallet_signer.promoted")).map((e) => e.data)
    expect(promoted).toEqual([{ walletSignerId: bot, customerId, role: "admin", credentialType: "api_key", passkeyCount: 0, occurredAt: iso(START_MS + 30_000 + 24 * 3600_000) }])
    // Now the machine admin co-stamps alice's demotion.
    const demotion = (await start(renewed, "signer_demotion", alice)).json
    expect((await decide(demotion.id, "approved", await login(bot))).json.status).toBe("completed")
    expect((await events("wallet_signer.demoted")).map((e) => e.data)).toEqual([
      { walletSignerId: alice, customerId, role: "signer", credentialType: "passkey", passkeyCount: 2, occurredAt: iso(START_MS + 30_000 + 24 * 3600_000) }
    ])
    // A declined removal is cancelled; the bot, now the last admin, cannot be removed by the customer.
    const botToken = await login(bot)
    const removal = (await start(botToken, "signer_removal", bob)).json
    expect((await decide(removal.id, "declined", botToken)).json.status).toBe("cancelled")
    expect((await events("wallet_ceremony.failed")).at(-1)!.data).toMatchObject({ ceremonyId: removal.id, status: "cancelled", type: "signer_removal" })
    expectProblem(await start(botToken, "signer_removal", bot), { type: "CONFLICT", status: 409, instance: "/sandbox/v2/signer/ceremonies" })
    const again = (await start(botToken, "signer_removal", bob)).json
    const bobToken = await login(bob)
    expect((await decide(again.id, "approved", botToken)).json.status).toBe("completed")
    expect((await events("wallet_signer.removed")).map((e) => e.data)).toEqual([
      { walletSignerId: bob, customerId, reason: "customer_removed", occurredAt: iso(START_MS + 30_000 + 24 * 3600_000) }
    ])
    // A removed signer's session ends with it, and it cannot log in again.
    expectProblem(await acme.call("GET", "/v2/signer/session", undefined, bearer(bobToken)), { type: "SIGNER_SESSION_INVALID", status: 401, instance: "/sandbox/v2/signer/session" })
    expectProblem(await acme.call("POST", `/v2/simulate/wallet-signers/${bob}/sessions`, {}), { type: "SIGNER_AUTH_FAILED", status: 401, instance: `/sandbox/v2/simulate/wallet-signers/${bob}/sessions` })
    // Ops may remove even the last admin, cancelling its open ceremony.
    const pending = (await start(botToken, "signer_demotion", bot))
    expectProblem(pending, { type: "CONFLICT", status: 409, instance: "/sandbox/v2/signer/ceremonies" })
    const promotion = (await start(botToken, "signer_promotion", alice)).json
    const opsRemoved = await acme.call("POST", `/v2/simulate/wallet-signers/${alice}/remove`)
    expect(opsRemoved.json).toMatchObject({ id: alice, status: "removed" })
    expect((await events()).slice(-2).map((e) => [e.type, e.data.status ?? e.data.reason])).toEqual([
      ["wallet_ceremony.failed", "cancelled"],
      ["wallet_signer.removed", "ops_removed"]
    ])
    expectProblem(await decide(promotion.id, "approved", botToken), { type: "RESOURCE_TERMINAL", status: 409, instance: `/sandbox/v2/simulate/wallet-ceremonies/${promotion.id}/decision` })
    expect((await events("wallet_ceremony.completed")).map((e) => e.data.type)).toEqual(["signer_promotion", "signer_demotion", "signer_removal"])
  })
})

describe("signer sessions (Authentication rule 10)", () => {
  it("issues a session to a signer that authenticates, and refuses a failed authentication or a signer with no credential with 401 SIGNER_AUTH_FAILED", async () => {
    const customerId = await customer()
    await cryptoWallet(customerId)
    const accepted = (await claim(customerId, { chains: ["base"], roster, threshold: 1 })).json
    const alice = accepted.signers[0].id
    const path = `/v2/simulate/wallet-signers/${alice}/sessions`
    expectProblem(await acme.call("POST", path, {}), { type: "SIGNER_AUTH_FAILED", status: 401, instance: `/sandbox${path}` })
    await enroll(alice)
    expectProblem(await acme.call("POST", path, { authentication: "failed" }), { type: "SIGNER_AUTH_FAILED", status: 401, instance: `/sandbox${path}` })
    const issued = await acme.call("POST", path, { authentication: "succeeded" })
    expect(issued.status, issued.text).toBe(201)
    expect(issued.json).toEqual({ token: expect.stringMatching(/^fss\./), walletSignerId: alice, customerId, expiresAt: iso(START_MS + 15 * 60_000) })
    const me = await acme.call("GET", "/v2/signer/session", undefined, bearer(issued.json.token))
    expect(me.status, me.text).toBe(200)
    expect(me.json).toEqual({ signer: expect.objectContaining({ id: alice, role: "admin", status: "enrolled", passkeyCount: 2 }), expiresAt: issued.json.expiresAt })
    // The scheme is case-insensitive.
    expect((await acme.call("GET", "/v2/signer/session", undefined, { authorization: `bearer ${issued.json.token}` })).status).toBe(200)
  })

  it("answers a missing, malformed, tampered, foreign or expired token with 401 SIGNER_SESSION_INVALID", async () => {
    const { alice } = await claimed()
    const token = await login(alice)
    const at = "/sandbox/v2/signer/session"
    const invalid = async (headers: Record<string, string>) =>
      expectProblem(await acme.call("GET", "/v2/signer/session", undefined, headers), { type: "SIGNER_SESSION_INVALID", status: 401, instance: at })
    await invalid({})
    await invalid({ authorization: "" })
    await invalid({ authorization: token })
    await invalid({ authorization: `Basic ${token}` })
    await invalid({ authorization: "Bearer not-a-token" })
    await invalid({ authorization: `Bearer ${token} extra` })
    // Tampered: a digit of the signature, or a later expiry under the old signature.
    const last = token.at(-1) === "0" ? "1" : "0"
    await invalid(bearer(token.slice(0, -1) + last))
    const parts = token.split(".")
    await invalid(bearer([...parts.slice(0, 4), String(Number(parts[4]) + 3600_000), parts[5]].join(".")))
    // Another organization's engine key signs nothing of this one's, and a token is its organization's alone.
    await expect(rival.call("GET", "/v2/signer/session", undefined, bearer(token)).then((r) => [r.status, r.json.type])).resolves.toEqual([401, "SIGNER_SESSION_INVALID"])
    // Live is another environment.
    const live = clientOf(engine.fetch, "http://fos", keysOf("acme").live, "live")
    expect((await live.call("GET", "/v2/signer/session", undefined, bearer(token))).json.type).toBe("SIGNER_SESSION_INVALID")
    // Valid up to its expiry, on the engine's clock.
    await engine.clock.advance("14 minutes")
    expect((await acme.call("GET", "/v2/signer/session", undefined, bearer(token))).status).toBe(200)
    await engine.clock.advance("1 minute")
    await invalid(bearer(token))
    // The same on every signer endpoint.
    expectProblem(await acme.call("POST", "/v2/signer/ceremonies", { type: "signer_removal", walletSignerId: alice }, bearer(token)), {
      type: "SIGNER_SESSION_INVALID",
      status: 401,
      instance: "/sandbox/v2/signer/ceremonies"
    })
    expectProblem(await acme.call("POST", "/v2/simulate/wallet-ceremonies/cer_abc/decision", { outcome: "approved" }), {
      type: "SIGNER_SESSION_INVALID",
      status: 401,
      instance: "/sandbox/v2/simulate/wallet-ceremonies/cer_abc/decision"
    })
  })
})

describe("the order of refusals", () => {
  const claimPath = (customerId: string) => `/v2/customers/${customerId}/wallets/claim-non-custodial`

  it("a request that breaks two rules gets the first: a claim's request alone, then its customer, then the customer's state, then an earlier claim", async () => {
    const customerId = await customer()
    await cryptoWallet(customerId)
    const body = { chains: ["base"], roster, threshold: 2 }
    const first = async (id: string, sent: Record<string, unknown>, type: string, status: number, client: Client = acme) =>
      expectProblem(await client.call("POST", claimPath(id), sent, idem()), { type, status, instance: `/sandbox${claimPath(id)}` })
    // The request alone, before the customer is read: its roster or threshold, then its chains.
    for (const [client, id] of [[acme, "cus_nobody"], [rival, customerId]] as const) {
      await first(id, { ...body, threshold: 0 }, "VALIDATION_ERROR", 400, client)
      await first(id, { ...body, chains: ["stellar"] }, "NON_CUSTODIAL_SOURCE_NOT_SUPPORTED", 422, client)
    }
    await first(customerId, { ...body, chains: ["stellar"], threshold: 0 }, "VALIDATION_ERROR", 400)
    // The customer's state: its jurisdiction, then a restriction, before a chain's application.
    const ny = await acme.call("POST", "/v2/onboarding", await usaSubmission(acme, "ny-order"), idem())
    const nyCustomer = (await acme.call("POST", `/v2/simulate/applications/${ny.json.applicationId}/decision`, { outcome: "approved" })).json.customerId as string
    expect((await first(nyCustomer, { ...body, chains: ["ethereum"] }, "UNPROCESSABLE_ENTITY", 422)).detail).toContain("jurisdiction")
    const restricted = await customer()
    expect((await acme.call("POST", `/v2/simulate/customers/${restricted}/restrict`, {})).status).toBe(200)
    expect((await first(restricted, body, "UNPROCESSABLE_ENTITY", 422)).detail).toContain("restricted")
    // An earlier claim last: after the request alone and the chain's application.
    expect((await claim(customerId, body)).status).toBe(202)
    await first(customerId, { ...body, threshold: 4 }, "VALIDATION_ERROR", 400)
    expect((await first(customerId, { ...body, chains: ["ethereum"] }, "UNPROCESSABLE_ENTITY", 422)).detail).toContain("crypto_wallet")
    await first(customerId, body, "CONFLICT", 409)
  })

  it("a request that breaks two rules gets the first: reissuing an admin approval, the customer, then the signer of that customer, then its state", async () => {
    const { customerId, bob } = await claimed()
    const other = await customer()
    const first = async (id: string, signerId: string, type: string, status: number) => {
      const path = `/v2/customers/${id}/wallet-signers/${signerId}/reissue-admin-approval`
      return expectProblem(await acme.call("POST", path), { type, status, instance: `/sandbox${path}` })
    }
    // Bob has no additional passkey waiting (409 CONFLICT on its own path).
    await first("cus_nobody", bob, "CUSTOMER_NOT_FOUND", 404)
    await first(other, bob, "NOT_FOUND", 404)
    await first(customerId, bob, "CONFLICT", 409)
  })

  it("a request that breaks two rules gets the first: starting a ceremony, the session's role, then the signer of its roster, then the signer's state", async () => {
    const { alice, bob } = await claimed()
    const elsewhere = await claimed()
    const start = async (token: string, walletSignerId: string, type: string, status: number) =>
      expectProblem(await acme.call("POST", "/v2/signer/ceremonies", { type: "signer_promotion", walletSignerId }, bearer(token)), {
        type,
        status,
        instance: "/sandbox/v2/signer/ceremonies"
      })
    // A signer's session is refused before its subject is read.
    await start(await login(bob), "wsg_00000000000000000000000000", "INSUFFICIENT_ROLE", 403)
    // Another roster's bob, who has one passkey (a promotion the table refuses, 422): not found before its state.
    const aliceToken = await login(alice)
    await start(aliceToken, elsewhere.bob, "NOT_FOUND", 404)
    await start(aliceToken, bob, "UNPROCESSABLE_ENTITY", 422)
  })

  it("a request that breaks two rules gets the first: a signing request's approval, the session, its kind of signer, the request, the signer's roster, then its state", async () => {
    const { customerId, bot, alice } = await claimed()
    const elsewhere = await claimed()
    const walletId = (await acme.call("GET", `/v2/customers/${customerId}/wallets`)).json.data.find((w: { chain: string }) => w.chain === "base").id as string
    const deposited = await acme.call("POST", "/v2/simulate/deposits", { destination: { type: "wallet", walletId }, assetAmount: { code: "USDC", amount: "500", chain: "base" } })
    expect(deposited.status, deposited.text).toBe(201)
    await acme.call("POST", `/v2/simulate/transactions/${deposited.json.id}/settle`)
    const payout = await acme.call("POST", "/v2/payouts", {
      source: { type: "wallet", walletId },
      destination: { type: "external_crypto", chain: "base", address: "0x52908400098527886e0f7030069857d2e4169ee7" },
      asset: "USDC",
      amount: "100",
      purpose: "treasury_transfer"
    }, idem())
    expect(payout.status, payout.text).toBe(201)
    await engine.clock.advance("2 seconds")
    const [awaiting] = await events("transaction.awaiting_signature")
    const expired = awaiting!.data.signingRequestId as string
    // The first attempt's window closes: its request is a state conflict from now on.
    await engine.clock.advance("15 minutes")
    const unknown = "sr_00000000000000000000000000"
    const first = async (id: string, headers: Record<string, string>, type: string, status: number) =>
      expectProblem(await acme.call("POST", `/v2/signing-requests/${id}/approve`, undefined, headers), { type, status, instance: `/sandbox/v2/signing-requests/${id}/approve` })
    // The session before anything; a passkey signer's session before the request is read.
    await first(unknown, {}, "SIGNER_SESSION_INVALID", 401)
    await first(unknown, bearer(await login(alice)), "FORBIDDEN", 403)
    // The request, then the signer's roster before the request's state: another customer's machine signer.
    await first(unknown, bearer(await login(elsewhere.bot)), "COSIGN_ACTIVITY_NOT_FOUND", 404)
    expect((await first(expired, bearer(await login(elsewhere.bot)), "CONFLICT", 409)).detail).toBe("The signer is not in the wallet's signing pool.")
    expect((await first(expired, bearer(await login(bot)), "CONFLICT", 409)).detail).toContain("expired")
  })
})
