/**
 * Custodial wallets and on-chain deposits through the whole pipeline (engine.fetch) on a virtual clock: creation
 * with its preconditions, the deposit address, reads and lists, deposits by wallet id and by address settled after
 * the chain's confirmation time, and rotation with its blockers; every error the spec names for them.
 */
import { Addresses } from "@fos/core"
import type { Engine } from "@fos/http"
import { describe, expect, it } from "vitest"
import { type Client, clientOf, deuDocuments, deuSubmission, idem, twoOrganizationsPerTest } from "./onboardingFixtures.ts"
import { expectProblem, keysOf, makeEngine, orgSeed, outboxEvents, seedOf, START_MS } from "./support.ts"

let engine: Engine
let acme: Client
let rival: Client

// Every event a test made is one the event catalog accepts.
twoOrganizationsPerTest({ set: (world) => ({ engine, acme, rival } = world), current: () => engine })

const events = (type?: string) => outboxEvents(engine, type)
const iso = (ms: number) => new Date(ms).toISOString()

let customers = 0
/** A customer whose onboarding application is submitted; approved unless `approve` is false. */
const customer = async (approve = true) => {
  const docs = await deuDocuments(acme)
  const submitted = await acme.call("POST", "/v2/onboarding", deuSubmission(docs, { clientReferenceId: `wallet-customer-${++customers}` }), idem())
  expect(submitted.status, submitted.text).toBe(201)
  if (!approve) return submitted.json.customerId as string
  const decided = await acme.call("POST", `/v2/simulate/applications/${submitted.json.applicationId}/decision`, { outcome: "approved" })
  return decided.json.customerId as string
}

/** An approved crypto_wallet application of `customerId` for USDC on `chain`. */
const cryptoWallet = async (customerId: string, chain = "base", code = "USDC") => {
  const applied = await acme.call("POST", `/v2/customers/${customerId}/features`, { type: "crypto_wallet", asset: { code, chain } }, idem())
  expect(applied.status, applied.text).toBe(201)
  await acme.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
}

const createWallet = (customerId: string, body: Record<string, unknown> = { chain: "base" }, headers = idem()) =>
  acme.call("POST", `/v2/customers/${customerId}/wallets`, body, headers)

const deposit = (destination: Record<string, unknown>, assetAmount: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  acme.call("POST", "/v2/simulate/deposits", { destination, assetAmount, ...extra })

describe("custodial wallets", () => {
  it("creates a wallet with a checksummed deposit address once the customer holds an approved crypto_wallet application, and emits wallet.created", async () => {
    const customerId = await customer()
    await cryptoWallet(customerId)
    const created = await createWallet(customerId, { chain: "base", clientReferenceId: "treasury" })
    expect(created.status, created.text).toBe(201)
    const wallet = created.json
    expect(wallet).toEqual({
      id: expect.stringMatching(/^wlt_[0-9a-z]{24}$/),
      customerId,
      chain: "base",
      custody: "custodial",
      status: "active",
      address: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/),
      balances: [],
      clientReferenceId: "treasury",
      createdAt: iso(START_MS),
      updatedAt: iso(START_MS)
    })
    expect(Addresses.checkAddress("base", wallet.address)).toEqual({ ok: true, normalized: wallet.address })
    expect((await acme.call("GET", `/v2/wallets/${wallet.id}`)).json).toEqual(wallet)
    const list = await acme.call("GET", `/v2/customers/${customerId}/wallets`)
    expect(list.json).toEqual({ data: [wallet], meta: { mode: "cursor", nextCursor: null, previousCursor: null, total: 1 } })
    const [event] = await events("wallet.created")
    expect(event!.data).toEqual({ walletId: wallet.id, customerId, chain: "base", custody: "custodial", address: wallet.address, occurredAt: iso(START_MS) })
  })

  it("lists a customer's wallets newest first (createdAt desc, the default), or oldest first with sortOrder=asc; the same instant by id", async () => {
    const customerId = await customer()
    await cryptoWallet(customerId)
    const first = (await createWallet(customerId)).json
    const second = (await createWallet(customerId)).json
    await engine.clock.advance("1 second")
    const third = (await createWallet(customerId)).json
    // first and second share an instant: their order is their ids', in the list's direction.
    const [a, b] = [first.id, second.id].sort()
    const ids = async (query: string) => (await acme.call("GET", `/v2/customers/${customerId}/wallets${query}`)).json.data.map((w: any) => w.id)
    expect(await ids("")).toEqual([third.id, b, a])
    expect(await ids("?sortBy=createdAt&sortOrder=desc")).toEqual([third.id, b, a])
    expect(await ids("?sortOrder=asc")).toEqual([a, b, third.id])
    // Paged one at a time, the same order.
    const paged: Array<string> = []
    let cursor: string | null = null
    do {
      const page: any = (await acme.call("GET", `/v2/customers/${customerId}/wallets?limit=1${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`)).json
      paged.push(...page.data.map((w: any) => w.id))
      cursor = page.meta.nextCursor
    } while (cursor !== null)
    expect(paged).toEqual([third.id, b, a])
  })

  it("refuses what it cannot create, with the spec's codes, and creates nothing", async () => {
    const customerId = await customer()
    const at = `/sandbox/v2/customers/${customerId}/wallets`
    // No approved crypto_wallet application for the chain: the resolution names the calls that fix it.
    const refused = await createWallet(customerId)
    expectProblem(refused, { type: "UNPROCESSABLE_ENTITY", status: 422, instance: at })
    expect(refused.json.detail).toBe("The customer has no approved crypto_wallet application for base.")
    expect(refused.json.resolution).toContain(`POST /v2/customers/{customerId}/features, an Idempotency-Key and {"type": "crypto_wallet", "asset": {"code": "USDC", "chain": "base"}}`)
    expect(refused.json.resolution).toContain("POST /v2/simulate/applications/{applicationId}/decision")
    await cryptoWallet(customerId, "solana", "SOL")
    expectProblem(await createWallet(customerId, { chain: "base" }), { type: "UNPROCESSABLE_ENTITY", status: 422, instance: at })
    expect((await createWallet(customerId, { chain: "solana", clientReferenceId: "sol" })).status).toBe(201)
    expectProblem(await createWallet(customerId, { chain: "solana", clientReferenceId: "sol" }), { type: "DUPLICATE_CLIENT_REFERENCE_ID", status: 409, instance: at })
    expectProblem(await createWallet(customerId, { chain: "solana" }, {}), { type: "IDEMPOTENCY_KEY_REQUIRED", status: 400, instance: at })
    expectProblem(await createWallet(customerId, { chain: "dogecoin" }), { type: "VALIDATION_ERROR", status: 400, instance: at })
    expectProblem(await createWallet(customerId, { chain: "solana", colour: "blue" }), { type: "VALIDATION_ERROR", status: 400, instance: at })
    // A customer whose onboarding is still under review, and one that does not exist.
    const pending = await customer(false)
    expectProblem(await createWallet(pending), { type: "CUSTOMER_NOT_ONBOARDED", status: 422, instance: `/sandbox/v2/customers/${pending}/wallets` })
    expectProblem(await createWallet("cus_nobody"), { type: "CUSTOMER_NOT_FOUND", status: 404, instance: "/sandbox/v2/customers/cus_nobody/wallets" })
    expectProblem(await rival.call("POST", `/v2/customers/${customerId}/wallets`, { chain: "solana" }, idem()), {
      type: "CUSTOMER_NOT_FOUND",
      status: 404,
      instance: at
    })
    expect((await acme.call("GET", `/v2/customers/${customerId}/wallets`)).json.meta.total).toBe(1)
    expect(await events("wallet.created")).toHaveLength(1)
  })

  it("answers 404 WALLET_NOT_FOUND for another organization's wallet and 400 for a malformed id", async () => {
    const customerId = await customer()
    await cryptoWallet(customerId)
    const wallet = (await createWallet(customerId)).json
    expectProblem(await rival.call("GET", `/v2/wallets/${wallet.id}`), { type: "WALLET_NOT_FOUND", status: 404, instance: `/sandbox/v2/wallets/${wallet.id}` })
    expectProblem(await acme.call("GET", "/v2/wallets/cus_notawallet"), { type: "INVALID_OID_FORMAT", status: 400, instance: "/sandbox/v2/wallets/cus_notawallet" })
  })
})

describe("on-chain deposits", () => {
  it("credits a wallet after the chain's confirmation time, by wallet id or by its address, with the sender and a transaction hash", async () => {
    const customerId = await customer()
    await cryptoWallet(customerId)
    const wallet = (await createWallet(customerId)).json
    const sender = "0x52908400098527886e0f7030069857d2e4169ee7"
    const r = await deposit({ type: "wallet", walletId: wallet.id }, { code: "USDC", amount: "250.5", chain: "base" }, { sender: { address: sender } })
    expect(r.status, r.text).toBe(201)
    expect(r.json).toMatchObject({
      type: "deposit",
      status: "pending",
      customerId,
      // Kept in its EIP-55 form (this one of EIP-55's vectors is all capitals).
      // Amounts at the asset's precision (USDC: 6 places), as everywhere else on the wire.
      source: { type: "external_crypto", address: "0x52908400098527886E0F7030069857D2E4169EE7", txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/), assetAmount: { code: "USDC", amount: "250.500000", chain: "base" } },
      destination: { type: "wallet", walletId: wallet.id, assetAmount: { code: "USDC", amount: "250.500000", chain: "base" } },
      fees: []
    })
    const byAddress = await deposit({ type: "deposit_address", address: wallet.address }, { code: "ETH", amount: "0.25", chain: "base" })
    expect(byAddress.status, byAddress.text).toBe(201)
    expect(byAddress.json.destination.assetAmount).toEqual({ code: "ETH", amount: "0.250000000000000000", chain: "base" })
    expect(byAddress.json.source.assetAmount).toEqual(byAddress.json.destination.assetAmount)
    expect(Addresses.checkAddress("base", byAddress.json.source.address).ok).toBe(true)
    // Nothing to spend until the chain confirms: money on its way in is neither available nor reserved.
    expect((await acme.call("GET", `/v2/wallets/${wallet.id}`)).json.balances).toEqual([
      { code: "ETH", chain: "base", available: "0.000000000000000000", pending: "0.000000000000000000" },
      { code: "USDC", chain: "base", available: "0.000000", pending: "0.000000" }
    ])
    // Base confirms in a minute.
    await engine.clock.advance("59 seconds")
    expect((await acme.call("GET", `/v2/transactions/${r.json.id}`)).json.status).toBe("processing")
    await engine.clock.advance("1 second")
    expect((await acme.call("GET", `/v2/transactions/${r.json.id}`)).json.status).toBe("completed")
    expect((await acme.call("GET", `/v2/wallets/${wallet.id}`)).json.balances).toEqual([
      { code: "ETH", chain: "base", available: "0.250000000000000000", pending: "0.000000000000000000" },
      { code: "USDC", chain: "base", available: "250.500000", pending: "0.000000" }
    ])
    const sent = (await events()).filter((e) => e.data.transactionId === r.json.id)
    expect(sent.map((e) => [e.type, e.data.sequence])).toEqual([["transaction.created", 1], ["transaction.processing", 2], ["transaction.completed", 3]])
  })

  it("refuses deposits a wallet cannot take", async () => {
    const customerId = await customer()
    await cryptoWallet(customerId)
    const wallet = (await createWallet(customerId)).json
    const at = "/sandbox/v2/simulate/deposits"
    expectProblem(await deposit({ type: "wallet", walletId: wallet.id }, { code: "USDC", amount: "1", chain: "ethereum" }), { type: "UNPROCESSABLE_ENTITY", status: 422, instance: at })
    expectProblem(await deposit({ type: "wallet", walletId: wallet.id }, { code: "USDC", amount: "1" }), { type: "VALIDATION_ERROR", status: 400, instance: at })
    // A sender address in mixed case that is not its EIP-55 form.
    expectProblem(await deposit({ type: "wallet", walletId: wallet.id }, { code: "USDC", amount: "1", chain: "base" }, { sender: { address: "0x52908400098527886e0F7030069857D2E4169EE7" } }), {
      type: "INVALID_ADDRESS_FORMAT",
      status: 400,
      instance: at
    })
    const malformed = expectProblem(await deposit({ type: "wallet", walletId: wallet.id }, { code: "USDC", amount: "1", chain: "base" }, { sender: { address: "0x1234" } }), {
      type: "VALIDATION_ERROR",
      status: 400,
      instance: at
    })
    expect(malformed.errors).toEqual([{ pointer: "/sender/address", detail: expect.any(String) }])
    expectProblem(await deposit({ type: "deposit_address", address: "0x0000000000000000000000000000000000000001" }, { code: "USDC", amount: "1", chain: "base" }), {
      type: "WALLET_NOT_FOUND",
      status: 404,
      instance: at
    })
    // A deposit address is checked by its chain's validator before it is looked up.
    expectProblem(await deposit({ type: "deposit_address", address: wallet.address.toLowerCase().replace("0x", "0X") }, { code: "USDC", amount: "1", chain: "base" }), {
      type: "VALIDATION_ERROR",
      status: 400,
      instance: at
    })
    expectProblem(await deposit({ type: "deposit_address", address: "0x52908400098527886e0F7030069857D2E4169EE7" }, { code: "USDC", amount: "1", chain: "base" }), {
      type: "INVALID_ADDRESS_FORMAT",
      status: 400,
      instance: at
    })
    // Its all-lowercase form is the same address.
    expect((await deposit({ type: "deposit_address", address: wallet.address.toLowerCase() }, { code: "USDC", amount: "1", chain: "base" })).status).toBe(201)
    expectProblem(await deposit({ type: "deposit_address", address: wallet.address }, { code: "EUR", amount: "1" }), { type: "VALIDATION_ERROR", status: 400, instance: at })
    expectProblem(await rival.call("POST", "/v2/simulate/deposits", { destination: { type: "wallet", walletId: wallet.id }, assetAmount: { code: "USDC", amount: "1", chain: "base" } }), {
      type: "WALLET_NOT_FOUND",
      status: 404,
      instance: at
    })
    expect((await acme.call("GET", "/v2/transactions")).json.meta.total).toBe(1)
  })
})

describe("rotation", () => {
  it("retires an empty wallet and answers its successor; a wallet holding more than dust, or already retired, cannot rotate", async () => {
    const customerId = await customer()
    await cryptoWallet(customerId)
    const wallet = (await createWallet(customerId)).json
    await deposit({ type: "wallet", walletId: wallet.id }, { code: "USDC", amount: "0.02", chain: "base" })
    const at = `/sandbox/v2/wallets/${wallet.id}/rotate`
    // Money on its way in blocks it too.
    expectProblem(await acme.call("POST", `/v2/wallets/${wallet.id}/rotate`, undefined, idem()), { type: "WALLET_ROTATION_BLOCKED_BALANCE", status: 422, instance: at })
    await engine.clock.advance("1 minute")
    expectProblem(await acme.call("POST", `/v2/wallets/${wallet.id}/rotate`, undefined, idem()), { type: "WALLET_ROTATION_BLOCKED_BALANCE", status: 422, instance: at })
    expectProblem(await acme.call("POST", `/v2/wallets/${wallet.id}/rotate`), { type: "IDEMPOTENCY_KEY_REQUIRED", status: 400, instance: at })

    const dusty = (await createWallet(customerId)).json
    await deposit({ type: "wallet", walletId: dusty.id }, { code: "USDC", amount: "0.01", chain: "base" })
    await engine.clock.advance("1 minute")
    const rotated = await acme.call("POST", `/v2/wallets/${dusty.id}/rotate`, undefined, idem())
    expect(rotated.status, rotated.text).toBe(201)
    expect(rotated.json).toMatchObject({ customerId, chain: "base", status: "active", balances: [] })
    expect(rotated.json.id).not.toBe(dusty.id)
    expect(rotated.json.address).not.toBe(dusty.address)
    const retired = (await acme.call("GET", `/v2/wallets/${dusty.id}`)).json
    expect(retired).toMatchObject({ status: "retired", replacedByWalletId: rotated.json.id })
    expect((await events("wallet.created")).map((e) => e.data.walletId)).toEqual([wallet.id, dusty.id, rotated.json.id])
  })

  it("lasts what the seed's worldModel.rotationForwardingMs says", async () => {
    await engine.close()
    engine = await makeEngine({ ...seedOf(orgSeed("acme"), orgSeed("rival")), worldModel: { rotationForwardingMs: 60_000 } } as never)
    acme = clientOf(engine.fetch, "http://fos", keysOf("acme").sandbox)
    const customerId = await customer()
    await cryptoWallet(customerId)
    const old = (await createWallet(customerId)).json
    const successor = (await acme.call("POST", `/v2/wallets/${old.id}/rotate`, undefined, idem())).json
    await engine.clock.advance(59_999)
    expectProblem(await acme.call("POST", `/v2/wallets/${successor.id}/rotate`, undefined, idem()), {
      type: "WALLET_ROTATION_IN_PROGRESS",
      status: 409,
      instance: `/sandbox/v2/wallets/${successor.id}/rotate`
    })
    await engine.clock.advance(1)
    expect((await acme.call("POST", `/v2/wallets/${successor.id}/rotate`, undefined, idem())).status).toBe(201)
  })

  it("lasts a day: the retired address forwards to the successor and neither wallet rotates; then the address takes nothing", async () => {
    const customerId = await customer()
    await cryptoWallet(customerId)
    const old = (await createWallet(customerId)).json
    const rotated = await acme.call("POST", `/v2/wallets/${old.id}/rotate`, undefined, idem())
    expect(rotated.status, rotated.text).toBe(201)
    const successor = rotated.json
    const endsAt = new Date((await engine.clock.now()) + 24 * 3600_000).toISOString()

    // Rotating again, the retired wallet or its successor, waits for the rotation to end.
    for (const id of [old.id, successor.id]) {
      const p = expectProblem(await acme.call("POST", `/v2/wallets/${id}/rotate`, undefined, idem()), {
        type: "WALLET_ROTATION_IN_PROGRESS",
        status: 409,
        instance: `/sandbox/v2/wallets/${id}/rotate`
      })
      expect(p.detail).toContain(endsAt)
    }

    // Senders still paying the old address (by wallet or by address) credit the successor.
    const byWallet = await deposit({ type: "wallet", walletId: old.id }, { code: "USDC", amount: "0.004", chain: "base" })
    expect(byWallet.status, byWallet.text).toBe(201)
    expect(byWallet.json.destination).toMatchObject({ type: "wallet", walletId: successor.id })
    const byAddress = await deposit({ type: "deposit_address", address: old.address }, { code: "USDC", amount: "0.005", chain: "base" })
    expect(byAddress.json.destination).toMatchObject({ type: "wallet", walletId: successor.id })
    await engine.clock.advance("1 minute")
    expect((await acme.call("GET", `/v2/wallets/${successor.id}`)).json.balances).toEqual([
      expect.objectContaining({ code: "USDC", chain: "base", available: "0.009000", pending: "0.000000" })
    ])
    expect((await acme.call("GET", `/v2/wallets/${old.id}`)).json).toMatchObject({ status: "retired", replacedByWalletId: successor.id, balances: [] })

    // A day later the rotation is over: the old address takes nothing and cannot rotate; the successor can.
    await engine.clock.advance("24 hours")
    expectProblem(await acme.call("POST", `/v2/wallets/${old.id}/rotate`, undefined, idem()), {
      type: "WALLET_NOT_ROTATABLE",
      status: 409,
      instance: `/sandbox/v2/wallets/${old.id}/rotate`
    })
    expectProblem(await deposit({ type: "wallet", walletId: old.id }, { code: "USDC", amount: "1", chain: "base" }), {
      type: "WALLET_NOT_ACTIVE",
      status: 422,
      instance: "/sandbox/v2/simulate/deposits"
    })
    expectProblem(await deposit({ type: "deposit_address", address: old.address }, { code: "USDC", amount: "1", chain: "base" }), {
      type: "WALLET_NOT_ACTIVE",
      status: 422,
      instance: "/sandbox/v2/simulate/deposits"
    })
    const again = await acme.call("POST", `/v2/wallets/${successor.id}/rotate`, undefined, idem())
    expect(again.status, again.text).toBe(201)
    expect((await acme.call("GET", `/v2/wallets/${successor.id}`)).json).toMatchObject({ status: "retired", replacedByWalletId: again.json.id })
  })
})

describe("the order of a wallet's refusals", () => {
  it("a request that breaks two rules gets the first: creating, the customer, then its crypto_wallet application, then a duplicate clientReferenceId", async () => {
    const customerId = await customer()
    await cryptoWallet(customerId)
    expect((await createWallet(customerId, { chain: "base", clientReferenceId: "taken" })).status).toBe(201)
    const first = async (id: string, body: Record<string, unknown>, type: string, status: number) =>
      expectProblem(await createWallet(id, body), { type, status, instance: `/sandbox/v2/customers/${id}/wallets` })
    // The customer before what it holds: unknown, or still onboarding, with a clientReferenceId already taken.
    await first("cus_nobody", { chain: "base", clientReferenceId: "taken" }, "CUSTOMER_NOT_FOUND", 404)
    await first(await customer(false), { chain: "base", clientReferenceId: "taken" }, "CUSTOMER_NOT_ONBOARDED", 422)
    // Its crypto_wallet application for the chain before the duplicate, which the insert finds last.
    await first(customerId, { chain: "solana", clientReferenceId: "taken" }, "UNPROCESSABLE_ENTITY", 422)
    await first(customerId, { chain: "base", clientReferenceId: "taken" }, "DUPLICATE_CLIENT_REFERENCE_ID", 409)
    expect(await events("wallet.created")).toHaveLength(1)
  })

  it("a request that breaks two rules gets the first: rotating, the rotation underway, then the wallet's status, then an open return, then its balance", async () => {
    const customerId = await customer()
    await cryptoWallet(customerId)
    const rotate = (id: string) => acme.call("POST", `/v2/wallets/${id}/rotate`, undefined, idem())
    const first = async (id: string, type: string, status: number) => expectProblem(await rotate(id), { type, status, instance: `/sandbox/v2/wallets/${id}/rotate` })
    const funded = async (walletId: string) => {
      expect((await deposit({ type: "wallet", walletId }, { code: "USDC", amount: "5", chain: "base" })).status).toBe(201)
      await engine.clock.advance("1 minute")
    }
    // While a rotation lasts: the retired wallet is refused for the rotation before its status, and its successor,
    // holding money, for the rotation before its balance.
    const old = (await createWallet(customerId)).json
    const successor = (await rotate(old.id)).json
    await funded(successor.id)
    await first(old.id, "WALLET_ROTATION_IN_PROGRESS", 409)
    await first(successor.id, "WALLET_ROTATION_IN_PROGRESS", 409)
    // An unsupported coin's return open from a wallet that holds money: the return (its state) before the balance (funds).
    const held = (await createWallet(customerId)).json
    await funded(held.id)
    const returned = await acme.call("POST", `/v2/simulate/wallets/${held.id}/unsupported-deposits`, {
      assetAmount: { code: "DAI", amount: "12.5", chain: "base" },
      sender: { address: "0x8ba1f109551bd432803012645ac136ddd64dba72" }
    })
    expect(returned.status, returned.text).toBe(201)
    await first(held.id, "WALLET_ROTATION_BLOCKED_RETURN", 422)
    // Once the rotation is over, the successor's balance is what is left.
    await engine.clock.advance("24 hours")
    await first(old.id, "WALLET_NOT_ROTATABLE", 409)
    await first(successor.id, "WALLET_ROTATION_BLOCKED_BALANCE", 422)
  })
})
