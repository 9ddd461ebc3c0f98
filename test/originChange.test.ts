/**
 * The roster-wide webauthn_origin_change ceremony behind the `custom_domains` organization feature (spec,
 * Authentication rule 9: "403 FEATURE_NOT_ENABLED (feature is per account)"; Versioning rule 4: the ceremony type
 * is "sent only to organizations using custom domains once enabled"), through the whole pipeline: refused with 403
 * FEATURE_NOT_ENABLED without the feature, changing nothing; with it, the ceremony waits for an admin of the
 * roster (wallet_ceremony.awaiting_admin_approval with no walletSignerId), the decision call completes or declines
 * it, the clock fails it, and bad input is a 4xx that changes nothing.
 */
import type { Engine } from "@fos/http"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { type Client, clientOf, deuDocuments, deuSubmission, idem } from "./onboardingFixtures.ts"
import { expectCatalogEvents, expectProblem, keysOf, makeEngine, orgSeed, outboxEvents, seedOf, START_MS } from "./support.ts"

let engine: Engine
let acme: Client
let rival: Client
let plain: Client

beforeEach(async () => {
  engine = await makeEngine(seedOf(orgSeed("acme", { features: ["custom_domains"] }), orgSeed("rival", { features: ["custom_domains"] }), orgSeed("plain")))
  acme = clientOf(engine.fetch, "http://fos", keysOf("acme").sandbox)
  rival = clientOf(engine.fetch, "http://fos", keysOf("rival").sandbox)
  plain = clientOf(engine.fetch, "http://fos", keysOf("plain").sandbox)
})
afterEach(async () => {
  if (engine !== undefined) await expectCatalogEvents(engine)
  await engine?.close()
})

const iso = (ms: number) => new Date(ms).toISOString()
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const ceremonyEvents = async () => (await outboxEvents(engine)).filter((e) => e.type.startsWith("wallet_ceremony."))

let customers = 0
/** A customer of `client` with a resolved claim on base: alice (passkey admin), bob (passkey signer); its non-custodial wallet. */
const claimedWallet = async (client: Client) => {
  const submitted = await client.call("POST", "/v2/onboarding", deuSubmission(await deuDocuments(client), { clientReferenceId: `origin-${++customers}` }), idem())
  expect(submitted.status, submitted.text).toBe(201)
  const customerId = (await client.call("POST", `/v2/simulate/applications/${submitted.json.applicationId}/decision`, { outcome: "approved" })).json.customerId as string
  const applied = await client.call("POST", `/v2/customers/${customerId}/features`, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } }, idem())
  await client.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
  const roster = [{ credentialType: "passkey", role: "admin", email: "alice@acme.example" }, { credentialType: "passkey", role: "signer", email: "bob@acme.example" }]
  const accepted = await client.call("POST", `/v2/customers/${customerId}/wallets/claim-non-custodial`, { chains: ["base"], roster, threshold: 1 }, idem())
  expect(accepted.status, accepted.text).toBe(202)
  const [alice, bob] = accepted.json.signers.map((s: { id: string }) => s.id) as [string, string]
  for (const id of [alice, bob]) expect((await client.call("POST", `/v2/simulate/wallet-signers/${id}/enroll`, {})).status).toBe(200)
  await engine.clock.advance("30 seconds")
  const wallets = await client.call("GET", `/v2/customers/${customerId}/wallets`)
  const wallet = wallets.json.data.find((w: { custody: string }) => w.custody === "non_custodial")
  expect(wallet, wallets.text).toBeDefined()
  const login = async (id: string) => (await client.call("POST", `/v2/simulate/wallet-signers/${id}/sessions`, {})).json.token as string
  return { customerId, walletId: wallet.id as string, alice, bob, login }
}

const originChange = (client: Client, walletId: string, body: unknown = { origin: "https://pay.acme.example" }) =>
  client.call("POST", `/v2/simulate/wallets/${walletId}/webauthn-origin-change`, body)
const decide = (client: Client, ceremonyId: string, outcome: string, token: string) =>
  client.call("POST", `/v2/simulate/wallet-ceremonies/${ceremonyId}/decision`, { outcome }, bearer(token))

describe("webauthn_origin_change behind the custom_domains feature", () => {
  it("answers 403 FEATURE_NOT_ENABLED to an organization without custom_domains, and changes nothing", async () => {
    const { walletId } = await claimedWallet(plain)
    const before = await outboxEvents(engine)
    const refused = await originChange(plain, walletId)
    const p = expectProblem(refused, { type: "FEATURE_NOT_ENABLED", status: 403, instance: `/sandbox/v2/simulate/wallets/${walletId}/webauthn-origin-change` })
    expect(p.detail).toContain("custom_domains")
    expect(await outboxEvents(engine)).toEqual(before)
    // The feature is the organization's: the same call with a well-formed but unknown wallet is still the 403.
    expectProblem(await originChange(plain, "wlt_unknown"), { type: "FEATURE_NOT_ENABLED", status: 403, instance: "/sandbox/v2/simulate/wallets/wlt_unknown/webauthn-origin-change" })
  })

  it("starts a roster-wide ceremony waiting for an admin, which an admin's approval completes", async () => {
    const { customerId, walletId, alice, bob, login } = await claimedWallet(acme)
    const started = await originChange(acme, walletId)
    expect(started.status, started.text).toBe(201)
    expect(started.json).toEqual({
      id: expect.stringMatching(/^cer_[0-9a-z]{24}$/),
      customerId,
      origin: "https://pay.acme.example",
      type: "webauthn_origin_change",
      status: "awaiting_admin_approval",
      adminVerificationUrl: expect.stringMatching(/^https:\/\//),
      expiresAt: iso(START_MS + 30_000 + 24 * 3600_000),
      createdAt: iso(START_MS + 30_000),
      updatedAt: iso(START_MS + 30_000)
    })
    expect((await ceremonyEvents()).map((e) => [e.type, e.data])).toEqual([[
      "wallet_ceremony.awaiting_admin_approval",
      {
        ceremonyId: started.json.id,
        customerId,
        type: "webauthn_origin_change",
        adminVerificationUrl: started.json.adminVerificationUrl,
        expiresAt: started.json.expiresAt,
        occurredAt: iso(START_MS + 30_000)
      }
    ]])
    // One at a time per roster.
    expectProblem(await originChange(acme, walletId, { origin: "https://other.acme.example" }), {
      type: "CONFLICT",
      status: 409,
      instance: `/sandbox/v2/simulate/wallets/${walletId}/webauthn-origin-change`
    })
    // A signer that is not an admin cannot co-stamp it.
    const path = `/sandbox/v2/simulate/wallet-ceremonies/${started.json.id}/decision`
    // The inspector's buttons read the same table: open, both decisions are allowed.
    const actionsOf = async () => (await acme.call("GET", `/v2/simulate/actions/${started.json.id}`)).json.actions as Array<{ name: string; allowed: boolean; reason?: string }>
    expect((await actionsOf()).map((a) => [a.name, a.allowed])).toEqual([["approveCeremony", true], ["declineCeremony", true]])
    expectProblem(await decide(acme, started.json.id, "approved", await login(bob)), { type: "INSUFFICIENT_ROLE", status: 403, instance: path })
    const approved = await decide(acme, started.json.id, "approved", await login(alice))
    expect(approved.status, approved.text).toBe(200)
    expect(approved.json).toMatchObject({ id: started.json.id, type: "webauthn_origin_change", status: "completed", origin: "https://pay.acme.example" })
    expect(approved.json).not.toHaveProperty("walletSignerId")
    expect((await ceremonyEvents()).at(-1)).toMatchObject({
      type: "wallet_ceremony.completed",
      data: { ceremonyId: started.json.id, customerId, type: "webauthn_origin_change", occurredAt: iso(START_MS + 30_000) }
    })
    expect((await ceremonyEvents()).at(-1)!.data).not.toHaveProperty("walletSignerId")
    expectProblem(await decide(acme, started.json.id, "declined", await login(alice)), { type: "RESOURCE_TERMINAL", status: 409, instance: path })
    // Its timeline holds both its states, each with its cause.
    const timeline = (await acme.call("GET", `/v2/simulate/timeline/${started.json.id}`)).json as { entries: Array<{ kind: string; to?: string; cause?: { type: string } }> }
    expect(timeline.entries.filter((e) => e.kind === "state").map((e) => [e.to, e.cause?.type])).toEqual([
      ["awaiting_admin_approval", "simulate"],
      ["completed", "simulate"]
    ])
    expect(await actionsOf()).toEqual([
      { name: "approveCeremony", method: "POST", path: `/v2/simulate/wallet-ceremonies/${started.json.id}/decision`, allowed: false, reason: "RESOURCE_TERMINAL: The ceremony is already completed." },
      { name: "declineCeremony", method: "POST", path: `/v2/simulate/wallet-ceremonies/${started.json.id}/decision`, allowed: false, reason: "RESOURCE_TERMINAL: The ceremony is already completed." }
    ])
    // A completed change leaves the roster free to start another.
    expect((await originChange(acme, walletId, { origin: "https://wallet.acme.example" })).status).toBe(201)
  })

  it("is cancelled by an admin's decline and fails when its link expires", async () => {
    const { walletId, alice, login } = await claimedWallet(acme)
    const first = (await originChange(acme, walletId)).json
    expect((await decide(acme, first.id, "declined", await login(alice))).json.status).toBe("cancelled")
    const second = (await originChange(acme, walletId)).json
    await engine.clock.advance("24 hours")
    expect((await ceremonyEvents()).filter((e) => e.type === "wallet_ceremony.failed").map((e) => [e.data.ceremonyId, e.data.status])).toEqual([
      [first.id, "cancelled"],
      [second.id, "failed"]
    ])
    expectProblem(await decide(acme, second.id, "approved", await login(alice)), {
      type: "RESOURCE_TERMINAL",
      status: 409,
      instance: `/sandbox/v2/simulate/wallet-ceremonies/${second.id}/decision`
    })
  })

  it("refuses bad input with a 4xx that changes nothing: a malformed origin, a custodial wallet, a wallet of another organization", async () => {
    const { customerId, walletId } = await claimedWallet(acme)
    const instance = `/sandbox/v2/simulate/wallets/${walletId}/webauthn-origin-change`
    const before = await outboxEvents(engine)
    for (const body of [{}, { origin: "http://pay.acme.example" }, { origin: "https://pay.acme.example/path" }, { origin: "https://PAY.acme.example" }, { origin: 42 }]) {
      const p = expectProblem(await originChange(acme, walletId, body), { type: "VALIDATION_ERROR", status: 400, instance })
      expect(p.errors.map((e: { pointer: string }) => e.pointer), JSON.stringify(body)).toEqual(["/origin"])
    }
    expectProblem(await originChange(acme, "not-a-wallet"), { type: "INVALID_OID_FORMAT", status: 400, instance: "/sandbox/v2/simulate/wallets/not-a-wallet/webauthn-origin-change" })
    const custodial = await acme.call("POST", `/v2/customers/${customerId}/wallets`, { chain: "base" }, idem())
    expect(custodial.status, custodial.text).toBe(201)
    const eventsBefore = await outboxEvents(engine)
    expectProblem(await originChange(acme, custodial.json.id), { type: "UNPROCESSABLE_ENTITY", status: 422, instance: `/sandbox/v2/simulate/wallets/${custodial.json.id}/webauthn-origin-change` })
    expect(await outboxEvents(engine)).toEqual(eventsBefore)
    // Another organization's wallet is not found, even with the feature (isolation).
    expectProblem(await originChange(rival, walletId), { type: "WALLET_NOT_FOUND", status: 404, instance })
    expect((await outboxEvents(engine)).filter((e) => e.type.startsWith("wallet_ceremony."))).toEqual(before.filter((e) => e.type.startsWith("wallet_ceremony.")))
  })
})
