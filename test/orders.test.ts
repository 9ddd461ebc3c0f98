/**
 * Pricing, quotes and orders through the whole pipeline (engine.fetch) on a virtual clock: the world model's market
 * and its simulate call, quotes and their redemption, the four order directions from quote to settled balances
 * (the ledger summing to zero per asset, the customer's balances moving by exactly the order's amounts, fees and
 * markup in their accounts), execution and its refusals, cancellation, the lock expiry sweep, autoExecute, the
 * failures the sandbox forces, and every synchronous code the orders answer with. Every event a test makes must
 * decode with its type's schema.
 */
import { formatAmount, parseAmount, type AssetCode } from "@fos/contract"
import type { WorldModel } from "@fos/core"
import { Ledger, Pricing, Quotes, Store, Tenancy, Timers } from "@fos/core"
import { layerPostgresStore } from "@fos/sql"
import { adminUrl, freshDatabase } from "../adapters/sql/test/databases.ts"
import { createEngine, type Engine } from "@fos/http"
import { Effect } from "effect"
import * as fc from "fast-check"
import { afterEach, describe, expect, it } from "vitest"
import { approvedCustomer, type Client, clientOf, deuDocuments, idem } from "./onboardingFixtures.ts"
import { expectCatalogEvents, expectProblem, keysOf, orgSeed, outboxEvents, seedOf } from "./support.ts"
import { expectWire, nullPaths } from "./wire.ts"

/** Monday 09:00 UTC: the foreign-exchange market is open. */
const MONDAY = Date.parse("2026-03-02T09:00:00.000Z")
/** Saturday 12:00 UTC: it is closed. */
const SATURDAY = Date.parse("2026-03-07T12:00:00.000Z")

let engine: Engine
let acme: Client
let rival: Client

const start = async (options: { startMs?: number; worldModel?: WorldModel.WorldModelOptions; markup?: boolean; databaseUrl?: string } = {}) => {
  const startMs = options.startMs ?? MONDAY
  engine = await createEngine({
    ...(options.databaseUrl === undefined ? {} : { store: layerPostgresStore(options.databaseUrl, { maxConnections: 4 }) }),
    clock: { mode: "virtual", start: startMs },
    realClock: Timers.makeVirtualClock(startMs),
    seed: seedOf(orgSeed("acme", options.markup === true ? { features: ["client_markup"] } : {}), orgSeed("rival")) as never,
    // Fast bank rails, so funding a virtual account takes seconds whatever the day.
    worldModel: { railSettlement: { sepa: { afterMs: 5_000 } }, ...options.worldModel }
  })
  acme = clientOf(engine.fetch, "http://fos", keysOf("acme").sandbox)
  rival = clientOf(engine.fetch, "http://fos", keysOf("rival").sandbox)
}

afterEach(async () => {
  if (engine !== undefined) await expectCatalogEvents(engine)
  await engine?.close()
})

const advance = (ms: number) => engine.clock.advance(ms)
const now = () => engine.clock.now()
const iso = (ms: number) => new Date(ms).toISOString()
const events = (type?: string) => outboxEvents(engine, type)

// --- fixtures ----------------------------------------------------------------------------------------------------

const onboardedCustomer = (client: Client = acme): Promise<string> => approvedCustomer(client)

const virtualAccount = async (customerId: string, currency: "USD" | "EUR", client: Client = acme): Promise<string> => {
  const applied = await client.call("POST", `/v2/customers/${customerId}/features`, { type: "virtual_account", asset: { code: currency } }, idem())
  expect(applied.status, applied.text).toBe(201)
  await client.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
  await advance(30_000)
  const accounts = await client.call("GET", `/v2/customers/${customerId}/virtual-accounts`)
  const account = accounts.json.data.find((a: any) => a.asset?.code === currency || a.balances?.[0]?.code === currency) ?? accounts.json.data[0]
  expect(account.status).toBe("active")
  return account.id
}

const wallet = async (customerId: string, chain: string, client: Client = acme): Promise<string> => {
  const applied = await client.call("POST", `/v2/customers/${customerId}/features`, { type: "crypto_wallet", asset: { code: "USDC", chain } }, idem())
  expect(applied.status, applied.text).toBe(201)
  await client.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
  const created = await client.call("POST", `/v2/customers/${customerId}/wallets`, { chain }, idem())
  expect(created.status, created.text).toBe(201)
  return created.json.id
}

/** A customer with a USD and a EUR virtual account and wallets on base and ethereum. */
const customerWithAccounts = async (client: Client = acme) => {
  const customerId = await onboardedCustomer(client)
  const usd = await virtualAccount(customerId, "USD", client)
  const eur = await virtualAccount(customerId, "EUR", client)
  const base = await wallet(customerId, "base", client)
  const ethereum = await wallet(customerId, "ethereum", client)
  return { customerId, usd, eur, base, ethereum }
}

/** Sends money in and lets it settle (RTP in seconds, Base in a minute): well within an order's 15-minute lock. */
const fund = async (destination: Record<string, unknown>, assetAmount: Record<string, unknown>, extra: Record<string, unknown> = {}, settleMs = 90_000) => {
  const r = await acme.call("POST", "/v2/simulate/deposits", { destination, assetAmount, ...extra })
  expect(r.status, r.text).toBe(201)
  await advance(settleMs)
  expect((await acme.call("GET", `/v2/transactions/${r.json.id}`)).json.status).toBe("completed")
}
const fundUsd = (accountId: string, amount: string) => fund({ type: "virtual_account", virtualAccountId: accountId }, { code: "USD", amount }, { rail: "rtp" })

const balances = async (kind: "wallet" | "virtual_account", id: string) =>
  (await acme.call("GET", kind === "wallet" ? `/v2/wallets/${id}` : `/v2/virtual-accounts/${id}`)).json.balances as Array<any>
const available = async (kind: "wallet" | "virtual_account", id: string, code: string) =>
  (await balances(kind, id)).find((b) => b.code === code)?.available ?? "0"

const va = (virtualAccountId: string) => ({ type: "virtual_account", virtualAccountId })
const wl = (walletId: string, asset: string) => ({ type: "wallet", walletId, asset })

const createOrder = (body: Record<string, unknown>, headers = idem("order"), client: Client = acme) => client.call("POST", "/v2/orders", body, headers)
const execute = (id: string, headers = idem("execute")) => acme.call("POST", `/v2/orders/${id}/execute`, undefined, headers)
const cancel = (id: string, headers = idem("cancel")) => acme.call("POST", `/v2/orders/${id}/cancel`, undefined, headers)
const readOrder = async (id: string) => (await acme.call("GET", `/v2/orders/${id}`)).json
const quote = (body: Record<string, unknown>, headers: Record<string, string> = {}) => acme.call("POST", "/v2/quotes", body, headers)

/** Per asset (and chain), what every account of acme's sandbox holds: posted and pending sums. */
const ledger = () =>
  engine.run(Effect.gen(function*() {
    const store = yield* Store.Store
    const accounts = yield* store.page(Ledger.LedgerAccounts, {
      order: "byScope",
      partition: Tenancy.scopeOf("org_acme", "sandbox"),
      descending: false,
      backward: false,
      from: undefined,
      limit: 10_000
    })
    return accounts
  }))

/** The market rows of acme's sandbox: only what simulate/rates set. */
const marketRows = () =>
  engine.run(Effect.gen(function*() {
    const store = yield* Store.Store
    const scope = Tenancy.scopeOf("org_acme", "sandbox")
    return yield* store.page(Pricing.MarketRates, { order: "byScope", partition: scope, descending: false, backward: false, from: undefined, limit: 100 })
  }))

/** How many quote options acme's sandbox holds. */
const quoteOptionCount = () =>
  engine.run(Effect.gen(function*() {
    const store = yield* Store.Store
    const scope = Tenancy.scopeOf("org_acme", "sandbox")
    return (yield* store.page(Quotes.QuoteOptions, { order: "byScope", partition: scope, descending: false, backward: false, from: undefined, limit: 10_000 })).length
  }))

/** Every asset's accounts sum to zero, posted and pending; answers what each fees holder holds per asset. */
const expectBalancedLedger = async () => {
  const sums = new Map<string, { posted: bigint; pending: bigint }>()
  const fees = new Map<string, bigint>()
  for (const a of await ledger()) {
    const key = a.chain === undefined ? a.asset : `${a.asset}@${a.chain}`
    const s = sums.get(key) ?? sums.set(key, { posted: 0n, pending: 0n }).get(key)!
    s.posted += BigInt(a.creditsPosted) - BigInt(a.debitsPosted)
    s.pending += BigInt(a.creditsPending) - BigInt(a.debitsPending)
    if (a.holderType === "wallet" || a.holderType === "virtual_account") {
      expect(BigInt(a.creditsPosted) - BigInt(a.debitsPosted) - BigInt(a.debitsPending), `${a.id} below zero`).toBeGreaterThanOrEqual(0n)
    }
    if (a.holderType === "fees") {
      const k = `${a.holderId}:${key}`
      fees.set(k, (fees.get(k) ?? 0n) + BigInt(a.creditsPosted) - BigInt(a.debitsPosted))
    }
  }
  for (const [key, s] of sums) expect({ key, ...s }).toEqual({ key, posted: 0n, pending: 0n })
  return fees
}

const units = (code: AssetCode, amount: string) => parseAmount(code, amount)!.units
const minus = (code: AssetCode, a: string, b: string) => formatAmount({ asset: code, units: units(code, a) - units(code, b) })

// --- pricing ------------------------------------------------------------------------------------------------------

describe("the market", () => {
  it("prices a pair from its rule: mid rate less the service's spread, the fee in basis points, one option per recipient type, expiring on the clock", async () => {
    await start()
    const r = await quote({ source: { asset: "USD" }, target: { asset: "USDC", chain: "base" }, amount: "100", lockSide: "source", rail: "ach" })
    expect(r.status, r.text).toBe(201)
    expect(r.json.createdAt).toBe(iso(MONDAY))
    expect(r.json.options.map((o: any) => o.recipientType)).toEqual(["wallet", "external_crypto"])
    const option = r.json.options[0]
    expect(option).toEqual({
      id: expect.stringMatching(/^qop_[0-9a-z]{24}$/),
      expiresAt: iso(MONDAY + 60_000),
      recipientType: "wallet",
      sourceAssetRef: { code: "USD" },
      destinationAssetRef: { code: "USDC", chain: "base" },
      lockSide: "source",
      // USD/USDC: mid 1, spread 50 basis points.
      rate: "0.995",
      sourceAmount: { code: "USD", amount: "100.00" },
      destinationAmount: { code: "USDC", amount: "99.500000", chain: "base" },
      // onramp fee: 25 basis points of the principal.
      fees: [{ owner: "service", assetAmount: { code: "USD", amount: "0.25" }, invoiced: false }],
      totalDebit: { code: "USD", amount: "100.25" }
    })
    // A fixed destination amount: what it costs is rounded up, in the service's favour.
    const fixed = await quote({ source: { asset: "EUR" }, target: { asset: "USD" }, amount: "100", lockSide: "destination" })
    expect(fixed.status, fixed.text).toBe(201)
    // EUR/USD mid 1.08, spread 30 basis points: 1.07676 USD per EUR; 100 / 1.07676 = 92.8712... EUR, rounded up.
    expect(fixed.json.options[0]).toMatchObject({
      rate: "1.07676",
      sourceAmount: { code: "EUR", amount: "92.88" },
      destinationAmount: { code: "USD", amount: "100.00" }
    })
  })

  it("moves a pair's mid rate from then on with simulate/rates, and makes it unavailable (503 RATE_UNAVAILABLE) until it is available again", async () => {
    await start()
    const moved = await acme.call("POST", "/v2/simulate/rates", { sourceAsset: "USDC", destinationAsset: "ETH", mid: "0.0004" })
    expect(moved.status, moved.text).toBe(200)
    expect(moved.json).toEqual({ sourceAsset: "USDC", destinationAsset: "ETH", mid: "0.0004", spreadBps: 100, available: true })
    const r = await quote({ source: { asset: "USDC", chain: "base" }, target: { asset: "ETH", chain: "base" }, amount: "1000", lockSide: "source" })
    expect(r.json.options[0]).toMatchObject({ rate: "0.000396", destinationAmount: { code: "ETH", amount: "0.396000000000000000", chain: "base" } })
    // Another organization's market did not move.
    const theirs = await rival.call("POST", "/v2/quotes", { source: { asset: "USDC", chain: "base" }, target: { asset: "ETH", chain: "base" }, amount: "1000", lockSide: "source" })
    expect(theirs.json.options[0].rate).not.toBe("0.000396")

    expect((await acme.call("POST", "/v2/simulate/rates", { sourceAsset: "USDC", destinationAsset: "ETH", available: false })).json.available).toBe(false)
    expectProblem(await quote({ source: { asset: "USDC", chain: "base" }, target: { asset: "ETH", chain: "base" }, amount: "1", lockSide: "source" }), {
      type: "RATE_UNAVAILABLE",
      status: 503,
      instance: "/sandbox/v2/quotes"
    })
    await acme.call("POST", "/v2/simulate/rates", { sourceAsset: "USDC", destinationAsset: "ETH", available: true })
    expect((await quote({ source: { asset: "USDC", chain: "base" }, target: { asset: "ETH", chain: "base" }, amount: "1", lockSide: "source" })).status).toBe(201)
  })

  it("answers 422 UNSUPPORTED_PAIR with the pair for what it does not convert, 404 NO_PRICING_CONFIGURED for a pair without a rule, 422 INVALID_ORDER_COMBO for no conversion", async () => {
    await start({ worldModel: { pricing: { "USD/EURC": null, "USDC/USDT": { mid: "0.9998", spreadBps: 5 } } } })
    const unsupported = expectProblem(
      await quote({ source: { asset: "BTC", chain: "base" }, target: { asset: "USD" }, amount: "1", lockSide: "source" }),
      { type: "UNSUPPORTED_PAIR", status: 422, instance: "/sandbox/v2/quotes" }
    )
    expect(unsupported).toMatchObject({ sourceAsset: "BTC", destinationAsset: "USD", sourceChain: "base", destinationChain: null })
    expectProblem(await quote({ source: { asset: "USD" }, target: { asset: "EURC", chain: "base" }, amount: "1", lockSide: "source" }), {
      type: "NO_PRICING_CONFIGURED",
      status: 404,
      instance: "/sandbox/v2/quotes"
    })
    expectProblem(await quote({ source: { asset: "USDC", chain: "base" }, target: { asset: "USDC", chain: "base" }, amount: "1", lockSide: "source" }), {
      type: "INVALID_ORDER_COMBO",
      status: 422,
      instance: "/sandbox/v2/quotes"
    })
    // A seeded rule replaces the default: USDC/USDT at 0.9998 less 5 basis points.
    const seeded = await quote({ source: { asset: "USDC", chain: "ethereum" }, target: { asset: "USDT", chain: "ethereum" }, amount: "10", lockSide: "source" })
    expect(seeded.json.options[0].rate).toBe("0.9993001")
  })

  it("accepts HKD and SGD as target assets (Versioning rule 6), paid out to a bank; never as a source", async () => {
    await start()
    for (const [target, country] of [["HKD", "HKG"], ["SGD", "SGP"]] as const) {
      for (const source of [{ asset: "USD" }, { asset: "USDC", chain: "base" }]) {
        const r = await quote({ source, target: { asset: target, country }, rail: "swift", amount: "100", lockSide: "source" })
        expect(r.status, r.text).toBe(201)
        expect(r.json.options.map((o: { recipientType: string }) => o.recipientType)).toEqual(["external_bank"])
        expect(r.json.options[0].destinationAmount.code).toBe(target)
      }
      const back = expectProblem(await quote({ source: { asset: target }, target: { asset: "USD" }, amount: "100", lockSide: "source" }), {
        type: "UNSUPPORTED_PAIR",
        status: 422,
        instance: "/sandbox/v2/quotes"
      })
      expect(back).toMatchObject({ sourceAsset: target, destinationAsset: "USD", sourceChain: null, destinationChain: null })
    }
  })

  it("quotes a fiat pair at the market's last close whoever asks: a fresh sandbox on a Saturday quotes and executes; a quote writes no market row", async () => {
    await start({ startMs: SATURDAY })
    const fiat = { source: { asset: "USD" }, target: { asset: "USDC", chain: "base" }, amount: "10", lockSide: "source" }
    // The last close of a pair is its mid: the rule's (USD/USDC 1, EUR/USD 1.08) less the spread.
    const usd = await quote(fiat)
    expect(usd.status, usd.text).toBe(201)
    expect(usd.json.options[0].rate).toBe("0.995")
    const eur = await quote({ source: { asset: "EUR" }, target: { asset: "USD" }, amount: "10", lockSide: "source" })
    expect(eur.status, eur.text).toBe(201)
    expect(eur.json.options[0].rate).toBe("1.07676")
    expect((await quote({ source: { asset: "USDC", chain: "base" }, target: { asset: "ETH", chain: "base" }, amount: "10", lockSide: "source" })).status).toBe(201)
    expect(await marketRows()).toEqual([])
    // A mid a simulate call set is the pair's last close too.
    await acme.call("POST", "/v2/simulate/rates", { sourceAsset: "GBP", destinationAsset: "USDC", mid: "1.25" })
    expect((await quote({ ...fiat, source: { asset: "GBP" } })).json.options[0].rate).toBe("1.24375")
    // An order with a fiat side executes on a Saturday, and settles.
    const a = await customerWithAccounts()
    await fundUsd(a.usd, "100.00")
    const created = await createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "50", lockSide: "source" })
    expect(created.status, created.text).toBe(201)
    expect((await execute(created.json.id)).status).toBe(200)
    await advance(62_000)
    expect(new Date(await now()).getUTCDay()).toBe(6)
    expect((await readOrder(created.json.id)).status).toBe("succeeded")
    expect(await available("wallet", a.base, "USDC")).toBe("49.750000")
    expect((await marketRows()).map((r) => r.pair)).toEqual(["GBP/USDC"])
  })

  it("closes a fiat pair after hours on demand (afterHours: true): 503 RATE_UNAVAILABLE_AFTER_HOURS with Retry-After until Sunday's opening, when it prices again by itself", async () => {
    // Tuesday 09:00 UTC: the next opening is Sunday 22:00 UTC, 5 days and 13 hours on.
    const tuesday = Date.parse("2026-03-03T09:00:00.000Z")
    const opening = Date.parse("2026-03-08T22:00:00.000Z")
    await start({ startMs: tuesday })
    const fiat = { source: { asset: "USD" }, target: { asset: "USDC", chain: "base" }, amount: "10", lockSide: "source" }
    const set = await acme.call("POST", "/v2/simulate/rates", { sourceAsset: "USD", destinationAsset: "USDC", afterHours: true })
    expect(set.status, set.text).toBe(200)
    expect(set.json).toEqual({ sourceAsset: "USD", destinationAsset: "USDC", mid: "1", spreadBps: 50, available: true, afterHoursUntil: iso(opening) })
    const seconds = (opening - tuesday) / 1000
    const closed = expectProblem(await quote(fiat), { type: "RATE_UNAVAILABLE_AFTER_HOURS", status: 503, instance: "/sandbox/v2/quotes", nowMs: tuesday })
    expect(closed.retryAfterSeconds).toBe(seconds)
    expect(closed.detail).toContain("USD to USDC")
    expect(closed.detail).toContain(iso(opening))
    // An order priced now is refused alike, and a 503 writes nothing.
    const a = await customerWithAccounts()
    const optionsBefore = await quoteOptionCount()
    const atOrder = expectProblem(await createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "10", lockSide: "source" }), {
      type: "RATE_UNAVAILABLE_AFTER_HOURS",
      status: 503,
      instance: "/sandbox/v2/orders"
    })
    expect(atOrder.retryAfterSeconds).toBe(Math.ceil((opening - (await now())) / 1000))
    expectProblem(await quote(fiat), { type: "RATE_UNAVAILABLE_AFTER_HOURS", status: 503, instance: "/sandbox/v2/quotes" })
    expect(await quoteOptionCount()).toBe(optionsBefore)
    expect((await acme.call("GET", "/v2/orders")).json.data).toEqual([])
    // The reverse pair is a pair of its own; another organization's market is its own.
    expect((await quote({ source: { asset: "USDC", chain: "base" }, target: { asset: "USD" }, amount: "10", lockSide: "source" })).status).toBe(201)
    expect((await rival.call("POST", "/v2/quotes", fiat)).status).toBe(201)
    // Half a second on, Retry-After rounds the wait up to whole seconds.
    const sandbox = engine.clockOf("org_acme")
    await sandbox.advance(500)
    const rounded = expectProblem(await quote(fiat), { type: "RATE_UNAVAILABLE_AFTER_HOURS", status: 503, instance: "/sandbox/v2/quotes" })
    expect(rounded.retryAfterSeconds).toBe(Math.ceil((opening - (await sandbox.now())) / 1000))
    expect(rounded.retryAfterSeconds).toBe((opening - (await sandbox.now()) + 500) / 1000)
    await sandbox.advance(500)
    // While forced, the answer of simulate/rates carries the opening; a mid combines with it.
    const moved = await acme.call("POST", "/v2/simulate/rates", { sourceAsset: "USD", destinationAsset: "USDC", mid: "0.98" })
    expect(moved.json).toMatchObject({ mid: "0.98", available: true, afterHoursUntil: iso(opening) })
    // The sandbox's clock, moved through the API: one second before the opening it is still closed; at the opening
    // it prices again by itself, at its mid.
    const advanceSandbox = async (seconds: number) => {
      const r = await acme.call("POST", "/v2/simulate/clock/advance", { seconds })
      expect(r.status, r.text).toBe(200)
    }
    await advanceSandbox((opening - (await sandbox.now())) / 1000 - 1)
    const last = expectProblem(await quote(fiat), { type: "RATE_UNAVAILABLE_AFTER_HOURS", status: 503, instance: "/sandbox/v2/quotes" })
    expect(last.retryAfterSeconds).toBe(1)
    await advanceSandbox(1)
    expect(await sandbox.now()).toBe(opening)
    const open = await quote(fiat)
    expect(open.status, open.text).toBe(201)
    expect(open.json.options[0].rate).toBe("0.9751")
    const after = await acme.call("POST", "/v2/simulate/rates", { sourceAsset: "USD", destinationAsset: "USDC", mid: "0.99" })
    expect(after.json).toEqual({ sourceAsset: "USD", destinationAsset: "USDC", mid: "0.99", spreadBps: 50, available: true })
  })

  it("on a Saturday closes a pair until the coming Sunday evening; afterHours: false reopens it at once; available: false takes precedence", async () => {
    const opening = Date.parse("2026-03-08T22:00:00.000Z")
    await start({ startMs: SATURDAY })
    const eurUsd = { source: { asset: "EUR" }, target: { asset: "USD" }, amount: "10", lockSide: "source" }
    const set = await acme.call("POST", "/v2/simulate/rates", { sourceAsset: "EUR", destinationAsset: "USD", afterHours: true })
    expect(set.json.afterHoursUntil).toBe(iso(opening))
    const closed = expectProblem(await quote(eurUsd), { type: "RATE_UNAVAILABLE_AFTER_HOURS", status: 503, instance: "/sandbox/v2/quotes", nowMs: SATURDAY })
    expect(closed.retryAfterSeconds).toBe(34 * 3_600)
    // Unavailable is the stronger state: it answers while both are set.
    await acme.call("POST", "/v2/simulate/rates", { sourceAsset: "EUR", destinationAsset: "USD", available: false })
    expectProblem(await quote(eurUsd), { type: "RATE_UNAVAILABLE", status: 503, instance: "/sandbox/v2/quotes" })
    await acme.call("POST", "/v2/simulate/rates", { sourceAsset: "EUR", destinationAsset: "USD", available: true })
    expectProblem(await quote(eurUsd), { type: "RATE_UNAVAILABLE_AFTER_HOURS", status: 503, instance: "/sandbox/v2/quotes" })
    const reopened = await acme.call("POST", "/v2/simulate/rates", { sourceAsset: "EUR", destinationAsset: "USD", afterHours: false })
    expect(reopened.status, reopened.text).toBe(200)
    expect(reopened.json).toEqual({ sourceAsset: "EUR", destinationAsset: "USD", mid: "1.08", spreadBps: 30, available: true })
    expect((await quote(eurUsd)).status).toBe(201)
    // A Sunday after its opening hour waits for the next Sunday's.
    await advance(opening + 3_600_000 - (await now()))
    const nextWeek = await acme.call("POST", "/v2/simulate/rates", { sourceAsset: "EUR", destinationAsset: "USD", afterHours: true })
    expect(nextWeek.json.afterHoursUntil).toBe(iso(opening + 7 * 24 * 3_600_000))
  })

  it("refuses afterHours on a pair with no fiat asset (it trades all week) with 422 UNPROCESSABLE_ENTITY, and a body with neither mid, available nor afterHours", async () => {
    await start()
    const refused = expectProblem(await acme.call("POST", "/v2/simulate/rates", { sourceAsset: "USDC", destinationAsset: "ETH", afterHours: true }), {
      type: "UNPROCESSABLE_ENTITY",
      status: 422,
      instance: "/sandbox/v2/simulate/rates"
    })
    expect(refused.detail).toContain("USDC to ETH")
    expect(await marketRows()).toEqual([])
    expect((await quote({ source: { asset: "USDC", chain: "base" }, target: { asset: "ETH", chain: "base" }, amount: "10", lockSide: "source" })).status).toBe(201)
    expectProblem(await acme.call("POST", "/v2/simulate/rates", { sourceAsset: "USD", destinationAsset: "EUR" }), {
      type: "VALIDATION_ERROR",
      status: 400,
      instance: "/sandbox/v2/simulate/rates"
    })
  })

  it("refuses an Idempotency-Key on POST /v2/quotes with 400 VALIDATION_ERROR", async () => {
    await start()
    expectProblem(await quote({ source: { asset: "USD" }, target: { asset: "EUR" }, amount: "10", lockSide: "source" }, idem()), {
      type: "VALIDATION_ERROR",
      status: 400,
      instance: "/sandbox/v2/quotes"
    })
  })

  it("refuses markup without the client_markup feature (403), and a markup that with the spread leaves no rate (422)", async () => {
    await start()
    const body = { source: { asset: "USD" }, target: { asset: "EUR" }, amount: "10", lockSide: "source" }
    expectProblem(await quote({ ...body, markupBps: 10 }), { type: "CLIENT_MARKUP_NOT_ENABLED", status: 403, instance: "/sandbox/v2/quotes" })
    expectProblem(await quote({ ...body, markupAmount: "1" }), { type: "CLIENT_MARKUP_NOT_ENABLED", status: 403, instance: "/sandbox/v2/quotes" })
    await engine.close()
    await start({ markup: true })
    expectProblem(await quote({ ...body, markupBps: 9_970 }), { type: "CLIENT_MARKUP_SPREAD_EXCEEDED", status: 422, instance: "/sandbox/v2/quotes" })
    const r = await quote({ ...body, markupBps: 20, markupAmount: "0.50" })
    expect(r.status, r.text).toBe(201)
    // USD/EUR: 1 / 1.08 = 0.9259259259, less 30 + 20 basis points.
    expect(r.json.options[0]).toMatchObject({
      rate: "0.9212962962705",
      markupBps: 20,
      // Out in the shape it goes in: a decimal string, in the source asset (the fees name the asset).
      markupAmount: "0.50",
      fees: [
        { owner: "service", assetAmount: { code: "USD", amount: "0.02" }, invoiced: false },
        { owner: "organization", assetAmount: { code: "USD", amount: "0.50" }, invoiced: false },
        // 10 USD at the rate less the spread alone (9.23 EUR) less what the customer receives (9.21 EUR).
        { owner: "organization", assetAmount: { code: "EUR", amount: "0.02" }, invoiced: false }
      ],
      totalDebit: { code: "USD", amount: "10.52" }
    })
  })

  it("a request that breaks two rules gets the first: the caller, the request alone, the price, then the terms at it", async () => {
    const worldModel = { pricing: { "USD/EURC": null } }
    await start({ worldModel })
    const first = async (body: Record<string, unknown>, type: string, status = 422) =>
      expectProblem(await quote({ lockSide: "source", ...body }), { type, status, instance: "/sandbox/v2/quotes" })
    const usdToEur = { source: { asset: "USD" }, target: { asset: "EUR" } }
    const unsupported = { source: { asset: "USD" }, target: { asset: "BTC", chain: "base" } }
    const unpriced = { source: { asset: "USD" }, target: { asset: "EURC", chain: "base" } }
    // The caller: markup without the feature, whatever else is wrong.
    await first({ ...unsupported, amount: "0.001", markupBps: 10 }, "CLIENT_MARKUP_NOT_ENABLED", 403)
    await engine.close()
    await start({ markup: true, worldModel })
    expect((await acme.call("POST", "/v2/simulate/rates", { sourceAsset: "USD", destinationAsset: "EUR", available: false })).status).toBe(200)
    // The request alone, before anything is read: an amount that rounds to zero at USD's precision, before its pair,
    // the pair's rule, the market and the markup.
    await first({ ...unsupported, amount: "0.001" }, "AMOUNT_OUT_OF_RANGE")
    await first({ ...unpriced, amount: "0.001" }, "AMOUNT_OUT_OF_RANGE")
    await first({ ...usdToEur, amount: "0.001" }, "AMOUNT_OUT_OF_RANGE")
    await first({ source: { asset: "USD" }, target: { asset: "USDC", chain: "base" }, amount: "0.001", markupBps: 9_999 }, "AMOUNT_OUT_OF_RANGE")
    // Then the pair, then its rule, before the markup the spread leaves no rate for.
    await first({ ...unsupported, amount: "10", markupBps: 9_999 }, "UNSUPPORTED_PAIR")
    await first({ ...unpriced, amount: "10", markupBps: 9_999 }, "NO_PRICING_CONFIGURED", 404)
    // The market's state before the terms at its price.
    await first({ ...usdToEur, amount: "10", markupBps: 9_999 }, "RATE_UNAVAILABLE", 503)
    await first({ ...usdToEur, amount: "0.99" }, "RATE_UNAVAILABLE", 503)
    // The terms: the markup with the spread, then the amount's bounds.
    await first({ source: { asset: "USD" }, target: { asset: "USDC", chain: "base" }, amount: "0.99", markupBps: 9_999 }, "CLIENT_MARKUP_SPREAD_EXCEEDED")
    await first({ source: { asset: "USD" }, target: { asset: "USDC", chain: "base" }, amount: "0.99" }, "AMOUNT_OUT_OF_RANGE")
  })
})

describe("markupAmount", () => {
  it("reads back in the shape it was sent: a decimal string in the source asset, at its precision", async () => {
    await start({ markup: true })
    const a = await customerWithAccounts()
    const created = await createOrder({ source: va(a.usd), destination: va(a.eur), amount: "10", lockSide: "source", markupAmount: "0.5" })
    expect(created.status, created.text).toBe(201)
    expect(created.json.markupAmount).toBe("0.50")
    expect((await readOrder(created.json.id)).markupAmount).toBe("0.50")
    expect(created.json.fees).toContainEqual({ owner: "organization", assetAmount: { code: "USD", amount: "0.50" }, invoiced: false })
  })
})

// --- the four directions ---------------------------------------------------------------------------------------------

describe("an order, from quote to settled balances", () => {
  const directions = [
    {
      direction: "onramp",
      fundWith: (a: Awaited<ReturnType<typeof customerWithAccounts>>) => fundUsd(a.usd, "1000.00"),
      source: (a: any) => ({ account: va(a.usd), kind: "virtual_account" as const, id: a.usd, code: "USD" as AssetCode }),
      destination: (a: any) => ({ account: wl(a.base, "USDC"), kind: "wallet" as const, id: a.base, code: "USDC" as AssetCode }),
      quote: { source: { asset: "USD" }, target: { asset: "USDC", chain: "base" }, amount: "250", lockSide: "source" },
      funded: "1000.00",
      chain: "base"
    },
    {
      direction: "offramp",
      fundWith: (a: any) => fund({ type: "wallet", walletId: a.base }, { code: "USDC", amount: "500", chain: "base" }),
      source: (a: any) => ({ account: wl(a.base, "USDC"), kind: "wallet" as const, id: a.base, code: "USDC" as AssetCode }),
      destination: (a: any) => ({ account: va(a.eur), kind: "virtual_account" as const, id: a.eur, code: "EUR" as AssetCode }),
      quote: { source: { asset: "USDC", chain: "base" }, target: { asset: "EUR" }, amount: "100", lockSide: "destination" },
      funded: "500.000000",
      chain: "base"
    },
    {
      direction: "conversion",
      fundWith: (a: any) => fund({ type: "wallet", walletId: a.base }, { code: "USDC", amount: "500", chain: "base" }),
      source: (a: any) => ({ account: wl(a.base, "USDC"), kind: "wallet" as const, id: a.base, code: "USDC" as AssetCode }),
      destination: (a: any) => ({ account: wl(a.ethereum, "USDC"), kind: "wallet" as const, id: a.ethereum, code: "USDC" as AssetCode }),
      quote: { source: { asset: "USDC", chain: "base" }, target: { asset: "USDC", chain: "ethereum" }, amount: "123.456789", lockSide: "source" },
      funded: "500.000000",
      chain: "ethereum"
    },
    {
      direction: "fiat_conversion",
      fundWith: (a: any) => fundUsd(a.usd, "1000.00"),
      source: (a: any) => ({ account: va(a.usd), kind: "virtual_account" as const, id: a.usd, code: "USD" as AssetCode }),
      destination: (a: any) => ({ account: va(a.eur), kind: "virtual_account" as const, id: a.eur, code: "EUR" as AssetCode }),
      quote: { source: { asset: "USD" }, target: { asset: "EUR" }, amount: "333.33", lockSide: "source" },
      funded: "1000.00",
      chain: undefined
    }
  ] as const

  for (const d of directions) {
    it(`${d.direction}: books principal, fee and spread as one linked batch, settles on the clock, and moves the balances by exactly the order's amounts`, async () => {
      await start()
      const accounts = await customerWithAccounts()
      await d.fundWith(accounts)
      const source = d.source(accounts)
      const destination = d.destination(accounts)
      const q = await quote(d.quote)
      expect(q.status, q.text).toBe(201)
      const option = q.json.options[0]
      const created = await createOrder({ source: source.account, destination: destination.account, quoteOptionId: option.id, clientReferenceId: `o-${d.direction}` })
      expect(created.status, created.text).toBe(201)
      const order = created.json
      const createdAt = await now()
      expect(order).toEqual({
        id: expect.stringMatching(/^ord_[0-9a-z]{24}$/),
        customerId: accounts.customerId,
        status: "pending",
        direction: d.direction,
        source: { ...source.account, asset: undefined, assetAmount: option.sourceAmount, ...(source.kind === "wallet" ? {} : {}) },
        destination: { ...destination.account, asset: undefined, assetAmount: option.destinationAmount },
        lockSide: d.quote.lockSide,
        rate: option.rate,
        fees: option.fees,
        totalDebit: option.totalDebit,
        lockExpiresAt: iso(createdAt + 15 * 60_000),
        autoExecute: false,
        quoteOptionId: option.id,
        clientReferenceId: `o-${d.direction}`,
        transactionId: undefined,
        reasonCode: undefined,
        failureMessage: undefined,
        cancellationReason: undefined,
        createdAt: iso(createdAt),
        updatedAt: iso(createdAt)
      })
      // No reservation at creation.
      expect(await available(source.kind, source.id, source.code)).toBe(d.funded)

      const executed = await execute(order.id)
      expect(executed.status, executed.text).toBe(200)
      const transactionId = executed.json.transactionId
      expect(transactionId).toMatch(/^txn_/)
      // The whole debit is held at once; the destination is credited only when the conversion settles.
      expect(await available(source.kind, source.id, source.code)).toBe(minus(source.code, d.funded, option.totalDebit.amount))
      const transaction = (await acme.call("GET", `/v2/transactions/${transactionId}`)).json
      expect(transaction).toMatchObject({
        type: d.direction,
        status: "pending",
        linkedOrderId: order.id,
        clientReferenceId: `o-${d.direction}`,
        source: { type: source.kind, assetAmount: option.totalDebit },
        destination: { type: destination.kind, assetAmount: option.destinationAmount },
        fees: option.fees
      })
      await advance(2_000)
      expect((await acme.call("GET", `/v2/transactions/${transactionId}`)).json.status).toBe("processing")
      await advance(60_000)
      const completed = (await acme.call("GET", `/v2/transactions/${transactionId}`)).json
      expect(completed.status).toBe("completed")
      // A conversion settles in 30 seconds, the other directions in a minute (the world model's defaults).
      expect(completed.updatedAt).toBe(iso(createdAt + 2_000 + (d.direction === "conversion" ? 30_000 : 60_000)))
      const done = await readOrder(order.id)
      expect(done).toMatchObject({ status: "succeeded", transactionId })

      // Balances: exactly the order's amounts.
      expect(await available(source.kind, source.id, source.code)).toBe(minus(source.code, d.funded, option.totalDebit.amount))
      expect(await available(destination.kind, destination.id, destination.code)).toBe(option.destinationAmount.amount)
      // The ledger sums to zero per asset; the service's fee and its spread sit in its fee account.
      const fees = await expectBalancedLedger()
      const fee = option.fees.find((f: any) => f.owner === "service")
      const keyOf = (a: { code: string; chain?: string }) => `service:${a.code}${a.chain === undefined ? "" : `@${a.chain}`}`
      const sourceKey = keyOf(option.sourceAmount)
      expect(fees.get(sourceKey) ?? 0n).toBe(units(source.code, fee?.assetAmount.amount ?? "0"))
      const destinationKey = keyOf(option.destinationAmount)
      expect(fees.get(destinationKey) ?? 0n).toBeGreaterThan(0n)

      const orderEvents = (await events()).filter((e) => e.type.startsWith("order."))
      expect(orderEvents.map((e) => e.type)).toEqual(["order.created", "order.succeeded"])
      expect(orderEvents[0]!.data).toEqual({
        orderId: order.id,
        customerId: accounts.customerId,
        clientReferenceId: `o-${d.direction}`,
        lockExpiresAt: order.lockExpiresAt,
        quoteOptionId: option.id,
        occurredAt: iso(createdAt)
      })
      expect(orderEvents[1]!.data).toEqual({
        orderId: order.id,
        customerId: accounts.customerId,
        clientReferenceId: `o-${d.direction}`,
        transactionId,
        ...(d.chain === undefined ? {} : { txHash: expect.any(String) }),
        succeededAt: completed.updatedAt,
        occurredAt: completed.updatedAt
      })
      const statuses = (await events()).filter((e) => e.type.startsWith("transaction.") && e.data.transactionId === transactionId)
      expect(statuses.map((e) => [e.type, e.data.sequence, e.data.linkedOrderId])).toEqual([
        ["transaction.created", 1, order.id],
        ["transaction.processing", 2, order.id],
        ["transaction.completed", 3, order.id]
      ])
    })
  }
})

// --- quote redemption ----------------------------------------------------------------------------------------------------

describe("redeeming a quote option", () => {
  it("is single-use until its expiry: QUOTE_EXPIRED, QUOTE_ALREADY_USED, QUOTE_NOT_FOUND, QUOTE_ASSET_MISMATCH, QUOTE_RECIPIENT_TYPE_UNPRICED", async () => {
    await start()
    const a = await customerWithAccounts()
    const body = { source: { asset: "USD" }, target: { asset: "USDC", chain: "base" }, amount: "10", lockSide: "source" }
    const order = (quoteOptionId: string, destination: unknown = wl(a.base, "USDC")) => createOrder({ source: va(a.usd), destination, quoteOptionId })

    const expiring = (await quote(body)).json.options[0].id
    await advance(60_000)
    expectProblem(await order(expiring), { type: "QUOTE_EXPIRED", status: 409, instance: "/sandbox/v2/orders" })

    const [forWallet, forPayout] = (await quote(body)).json.options
    expectProblem(await order(forPayout.id), { type: "QUOTE_RECIPIENT_TYPE_UNPRICED", status: 422, instance: "/sandbox/v2/orders" })
    expectProblem(await order(forWallet.id, wl(a.ethereum, "USDC")), { type: "QUOTE_ASSET_MISMATCH", status: 422, instance: "/sandbox/v2/orders" })
    // A refused redemption used nothing: the option still redeems, once.
    expect((await order(forWallet.id)).status).toBe(201)
    expectProblem(await order(forWallet.id), { type: "QUOTE_ALREADY_USED", status: 409, instance: "/sandbox/v2/orders" })
    expectProblem(await order("qop_unknown"), { type: "QUOTE_NOT_FOUND", status: 404, instance: "/sandbox/v2/orders" })
    // Another organization's option is unknown here.
    const theirs = (await rival.call("POST", "/v2/quotes", body)).json.options[0].id
    expectProblem(await order(theirs), { type: "QUOTE_NOT_FOUND", status: 404, instance: "/sandbox/v2/orders" })
  })

  it("keeps the quoted rate when the market moves between the quote and the execution", async () => {
    await start()
    const a = await customerWithAccounts()
    await fundUsd(a.usd, "100.00")
    const option = (await quote({ source: { asset: "USD" }, target: { asset: "USDC", chain: "base" }, amount: "50", lockSide: "source" })).json.options[0]
    await acme.call("POST", "/v2/simulate/rates", { sourceAsset: "USD", destinationAsset: "USDC", mid: "0.5" })
    const created = await createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), quoteOptionId: option.id })
    expect(created.json).toMatchObject({ rate: "0.995", destination: { assetAmount: { amount: "49.750000" } } })
    // An order priced now takes the moved market.
    const fresh = await createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "50", lockSide: "source" })
    expect(fresh.json).toMatchObject({ rate: "0.4975", destination: { assetAmount: { amount: "24.875000" } } })
    expect((await execute(created.json.id)).status).toBe(200)
    await advance(62_000)
    expect(await available("wallet", a.base, "USDC")).toBe("49.750000")
  })
})

// --- the order's life ------------------------------------------------------------------------------------------------------

describe("an order's life", () => {
  it("answers 422 INSUFFICIENT_FUNDS while the available balance does not cover totalDebit, and the same key works once it does", async () => {
    await start()
    const a = await customerWithAccounts()
    await fundUsd(a.usd, "50.00")
    const order = (await createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "100", lockSide: "source" })).json
    expect(order.totalDebit).toEqual({ code: "USD", amount: "100.25" })
    const key = idem("execute")
    const refused = expectProblem(await execute(order.id, key), { type: "INSUFFICIENT_FUNDS", status: 422, instance: `/sandbox/v2/orders/${order.id}/execute` })
    expect(refused.detail).toContain("100.25")
    // Nothing moved, nothing was reserved, and no transaction exists.
    expect(await available("virtual_account", a.usd, "USD")).toBe("50.00")
    expectWire(await readOrder(order.id), { status: "pending", transactionId: undefined })
    expect((await acme.call("GET", "/v2/transactions?type=onramp")).json.data).toEqual([])
    await fundUsd(a.usd, "50.25")
    const executed = await execute(order.id, key)
    expect(executed.status, executed.text).toBe(200)
    expect(await available("virtual_account", a.usd, "USD")).toBe("0.00")
    // A replay of the success is the original answer.
    const replay = await execute(order.id, key)
    expect(replay.headers.get("idempotency-replayed")).toBe("true")
    expect(replay.json).toEqual(executed.json)
    // The execute endpoint counts against its own bucket of 10.
    expect(executed.headers.get("x-ratelimit-limit")).toBe("10")
  })

  it("refuses a restricted customer's new orders and the execution of its pending ones with 422 UNPROCESSABLE_ENTITY; nothing moves", async () => {
    await start()
    const a = await customerWithAccounts()
    await fundUsd(a.usd, "300.00")
    const pending = (await createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "100", lockSide: "source" })).json
    const restricted = await acme.call("POST", `/v2/simulate/customers/${a.customerId}/restrict`, {})
    expect(restricted.status, restricted.text).toBe(200)
    const before = (await acme.call("GET", "/v2/orders")).json.data.length
    expectProblem(await createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "100", lockSide: "source" }), {
      type: "UNPROCESSABLE_ENTITY",
      status: 422,
      instance: "/sandbox/v2/orders"
    })
    // A deposit-funded one too, before any funding address is opened.
    expectProblem(await createOrder({ destination: wl(a.base, "USDC"), sourceAsset: { asset: "USDC", chain: "ethereum" }, amount: "10", lockSide: "source" }), {
      type: "UNPROCESSABLE_ENTITY",
      status: 422,
      instance: "/sandbox/v2/orders"
    })
    expectProblem(await execute(pending.id), { type: "UNPROCESSABLE_ENTITY", status: 422, instance: `/sandbox/v2/orders/${pending.id}/execute` })
    expect((await acme.call("GET", "/v2/orders")).json.data.length).toBe(before)
    expectWire(await readOrder(pending.id), { status: "pending", transactionId: undefined })
    expect(await available("virtual_account", a.usd, "USD")).toBe("300.00")
    expect((await acme.call("GET", "/v2/transactions?type=onramp")).json.data).toEqual([])
  })

  it("execute: a request that breaks two rules gets the first: the order, its state, its customer, the provider, then funds", async () => {
    await start()
    const a = await customerWithAccounts()
    // Nothing funds the source: every execution below would also be INSUFFICIENT_FUNDS.
    const make = async () => (await createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "10", lockSide: "source" })).json
    const first = async (id: string, type: string, status: number, client: Client = acme) =>
      expectProblem(await client.call("POST", `/v2/orders/${id}/execute`, undefined, idem("execute")), { type, status, instance: `/sandbox/v2/orders/${id}/execute` })
    const arm = (id: string) => acme.call("POST", `/v2/simulate/orders/${id}/fail`, { reasonCode: "provider_rejected", at: "execution" })
    const cancelled = await make()
    expect((await cancel(cancelled.id)).status).toBe(200)
    await first(cancelled.id, "ORDER_NOT_EXECUTABLE", 409)
    const refusedByProvider = await make()
    expect((await arm(refusedByProvider.id)).status).toBe(200)
    await first(refusedByProvider.id, "PROVIDER_REJECTED", 422)
    // A restricted customer before the provider's refusal.
    expect((await acme.call("POST", `/v2/simulate/customers/${a.customerId}/restrict`, {})).status).toBe(200)
    await first(refusedByProvider.id, "UNPROCESSABLE_ENTITY", 422)
    // The order's own state before its customer's.
    await advance(15 * 60_000)
    await first(refusedByProvider.id, "ORDER_EXPIRED", 409)
    // Another organization's order is not found, whatever state it is in.
    await first(refusedByProvider.id, "ORDER_NOT_FOUND", 404, rival)
  })

  it("autoExecute: runs at once when the balance covers it, else when the funds arrive", async () => {
    await start()
    const a = await customerWithAccounts()
    const waiting = (await createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "100", lockSide: "source", autoExecute: true })).json
    expectWire(waiting, { status: "pending", autoExecute: true, transactionId: undefined })
    // Not enough yet: it keeps waiting.
    await fundUsd(a.usd, "100.00")
    expect((await readOrder(waiting.id)).transactionId).toBeUndefined()
    await fundUsd(a.usd, "0.25")
    const running = await readOrder(waiting.id)
    expect(running.transactionId).toMatch(/^txn_/)
    await advance(62_000)
    expect(await readOrder(waiting.id)).toMatchObject({ status: "succeeded" })
    expect(await available("virtual_account", a.usd, "USD")).toBe("0.00")
    expect(await available("wallet", a.base, "USDC")).toBe("99.500000")

    // Funded already: executes at creation.
    await fundUsd(a.usd, "10.03")
    const immediate = (await createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "10", lockSide: "source", autoExecute: true })).json
    expect(immediate.transactionId).toMatch(/^txn_/)
    await expectBalancedLedger()
  })

  it("fails an autoExecute onramp order whose source deposit ends uncredited (order.failed, insufficient_funds)", async () => {
    await start()
    const a = await customerWithAccounts()
    const waiting = (await createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "100", lockSide: "source", autoExecute: true })).json
    const deposit = await acme.call("POST", "/v2/simulate/deposits", { destination: va(a.usd), assetAmount: { code: "USD", amount: "100.25" }, rail: "fedwire" })
    expect(deposit.status, deposit.text).toBe(201)
    const ended = await acme.call("POST", `/v2/simulate/transactions/${deposit.json.id}/terminal`, { outcome: "failed", failureCode: "returned_by_sender" })
    expect(ended.json.status).toBe("failed")
    expectWire(await readOrder(waiting.id), {
      status: "failed",
      reasonCode: "insufficient_funds",
      failureMessage: "The available balance did not cover the order. Fund the source and create a new order.",
      transactionId: undefined
    })
    const [failed] = await events("order.failed")
    expect(failed!.data).toMatchObject({ orderId: waiting.id, reasonCode: "insufficient_funds" })
    // The sandbox can make it happen too.
    const other = (await createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "10", lockSide: "source" })).json
    expect((await acme.call("POST", `/v2/simulate/orders/${other.id}/fail`, { reasonCode: "insufficient_funds" })).status).toBe(200)
    await fundUsd(a.usd, "20.00")
    await execute(other.id)
    await advance(62_000)
    expect(await readOrder(other.id)).toMatchObject({ status: "failed", reasonCode: "insufficient_funds" })
    expect(await available("virtual_account", a.usd, "USD")).toBe("20.00")
  })

  it("the lock expiry sweep cancels a pending order whose lock passed (reason expired); later funding does not revive it, and executing it is ORDER_EXPIRED", async () => {
    await start()
    const a = await customerWithAccounts()
    const order = (await createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "10", lockSide: "source", autoExecute: true })).json
    const lockExpiresAt = Date.parse(order.lockExpiresAt)
    await advance(lockExpiresAt - (await now()) - 1)
    expect((await readOrder(order.id)).status).toBe("pending")
    await advance(1)
    expect(await readOrder(order.id)).toMatchObject({ status: "cancelled", cancellationReason: "expired", updatedAt: order.lockExpiresAt })
    const [cancelled] = await events("order.cancelled")
    expect(cancelled!.data).toEqual({ orderId: order.id, customerId: a.customerId, reason: "expired", occurredAt: order.lockExpiresAt })
    await fundUsd(a.usd, "20.00")
    expectWire(await readOrder(order.id), { status: "cancelled", transactionId: undefined })
    expectProblem(await execute(order.id), { type: "ORDER_EXPIRED", status: 409, instance: `/sandbox/v2/orders/${order.id}/execute` })
    // Cancelling it again answers the cancelled order.
    expect((await cancel(order.id)).json).toMatchObject({ status: "cancelled", cancellationReason: "expired" })
  })

  it("cancels a pending order (client_cancelled), and again with 200; an executing one before its source transfer is sent, with its transaction; refuses the rest", async () => {
    await start()
    const a = await customerWithAccounts()
    await fundUsd(a.usd, "100.00")
    const make = async () => (await createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "10", lockSide: "source" })).json

    const first = await make()
    const cancelled = await cancel(first.id)
    expect(cancelled.status, cancelled.text).toBe(200)
    expect(cancelled.json).toMatchObject({ status: "cancelled", cancellationReason: "client_cancelled" })
    const again = await cancel(first.id)
    expect(again.status).toBe(200)
    expect(again.json).toEqual(cancelled.json)
    expect((await events("order.cancelled")).map((e) => e.data.reason)).toEqual(["client_cancelled"])
    expectProblem(await execute(first.id), { type: "ORDER_NOT_EXECUTABLE", status: 409, instance: `/sandbox/v2/orders/${first.id}/execute` })

    const second = await make()
    const executed = (await execute(second.id)).json
    expectProblem(await execute(second.id), { type: "ORDER_NOT_EXECUTABLE", status: 409, instance: `/sandbox/v2/orders/${second.id}/execute` })
    expect(await available("virtual_account", a.usd, "USD")).toBe("89.97")
    expect((await cancel(second.id)).json).toMatchObject({ status: "cancelled", cancellationReason: "client_cancelled" })
    expect((await acme.call("GET", `/v2/transactions/${executed.transactionId}`)).json.status).toBe("cancelled")
    // The holds are released.
    expect(await available("virtual_account", a.usd, "USD")).toBe("100.00")

    const third = await make()
    await execute(third.id)
    await advance(2_000)
    expectProblem(await cancel(third.id), { type: "ORDER_CANCEL_IN_PROGRESS", status: 409, instance: `/sandbox/v2/orders/${third.id}/cancel` })
    await advance(60_000)
    expect((await readOrder(third.id)).status).toBe("succeeded")
    expectProblem(await cancel(third.id), { type: "ORDER_NOT_CANCELLABLE", status: 409, instance: `/sandbox/v2/orders/${third.id}/cancel` })
    expectProblem(await execute(third.id), { type: "ORDER_NOT_EXECUTABLE", status: 409, instance: `/sandbox/v2/orders/${third.id}/execute` })
    await expectBalancedLedger()
  })

  it("fails when the sandbox makes the provider fail it: order.failed with the reasonCode and its catalog text, the holds released", async () => {
    await start()
    const a = await customerWithAccounts()
    await fundUsd(a.usd, "100.00")
    const running = (await createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "10", lockSide: "source" })).json
    const { transactionId } = (await execute(running.id)).json
    await advance(2_000)
    const failed = await acme.call("POST", `/v2/simulate/orders/${running.id}/fail`, { reasonCode: "provider_rejected" })
    expect(failed.status, failed.text).toBe(200)
    expect(failed.json).toMatchObject({
      status: "failed",
      reasonCode: "provider_rejected",
      failureMessage: "The provider refused the conversion. A retry will not help."
    })
    expect((await acme.call("GET", `/v2/transactions/${transactionId}`)).json).toMatchObject({ status: "failed", failureCode: "provider_rejected" })
    expect(await available("virtual_account", a.usd, "USD")).toBe("100.00")
    const [event] = await events("order.failed")
    expect(event!.data).toMatchObject({ orderId: running.id, reasonCode: "provider_rejected", failureMessage: failed.json.failureMessage })
    expectProblem(await acme.call("POST", `/v2/simulate/orders/${running.id}/fail`, { reasonCode: "internal_error" }), {
      type: "RESOURCE_TERMINAL",
      status: 409,
      instance: `/sandbox/v2/simulate/orders/${running.id}/fail`
    })

    // Armed before execution: the provider is unavailable when it would settle; a new order may then succeed.
    const armed = (await createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "10", lockSide: "source" })).json
    expect((await acme.call("POST", `/v2/simulate/orders/${armed.id}/fail`, { reasonCode: "provider_unavailable" })).json.status).toBe("pending")
    await execute(armed.id)
    await advance(62_000)
    expect(await readOrder(armed.id)).toMatchObject({ status: "failed", reasonCode: "provider_unavailable" })
    const retry = (await createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "10", lockSide: "source" })).json
    await execute(retry.id)
    await advance(62_000)
    expect((await readOrder(retry.id)).status).toBe("succeeded")
    await expectBalancedLedger()
  })
})

describe("execution refused by the provider (sandbox)", () => {
  it("answers 422 PROVIDER_REJECTED and 422 CANCELLED from then on, and 503 PROVIDER_UNAVAILABLE with retryAfterSeconds until the outage passes; nothing moves", async () => {
    await start()
    const a = await customerWithAccounts()
    await fundUsd(a.usd, "100.00")
    const make = async () => (await createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "10", lockSide: "source" })).json
    const arm = (id: string, reasonCode: string) => acme.call("POST", `/v2/simulate/orders/${id}/fail`, { reasonCode, at: "execution" })

    const rejected = await make()
    expect((await arm(rejected.id, "provider_rejected")).status).toBe(200)
    expectProblem(await execute(rejected.id), { type: "PROVIDER_REJECTED", status: 422, instance: `/sandbox/v2/orders/${rejected.id}/execute` })
    const cancelled = await make()
    await arm(cancelled.id, "cancelled")
    expectProblem(await execute(cancelled.id), { type: "CANCELLED", status: 422, instance: `/sandbox/v2/orders/${cancelled.id}/execute` })
    expect(await available("virtual_account", a.usd, "USD")).toBe("100.00")

    const outage = await make()
    await arm(outage.id, "provider_unavailable")
    const key = idem("execute")
    const unavailable = expectProblem(await execute(outage.id, key), { type: "PROVIDER_UNAVAILABLE", status: 503, instance: `/sandbox/v2/orders/${outage.id}/execute` })
    expect(unavailable.retryAfterSeconds).toBe(30)
    await advance(30_000)
    // After a 5xx the same body runs again under the same key, and succeeds now.
    const retried = await execute(outage.id, key)
    expect(retried.status, retried.text).toBe(200)
    expect(retried.json.transactionId).toMatch(/^txn_/)
    expectProblem(await acme.call("POST", `/v2/simulate/orders/${outage.id}/fail`, { reasonCode: "internal_error", at: "execution" }), {
      type: "VALIDATION_ERROR",
      status: 400,
      instance: `/sandbox/v2/simulate/orders/${outage.id}/fail`
    })
    expectProblem(await arm(outage.id, "cancelled"), {
      type: "SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY",
      status: 422,
      instance: `/sandbox/v2/simulate/orders/${outage.id}/fail`
    })
  })
})

// --- synchronous refusals and reads -------------------------------------------------------------------------------------------

describe("creating an order", () => {
  it("refuses what cannot be an order, each with its code, and writes nothing", async () => {
    await start()
    const a = await customerWithAccounts()
    const other = await customerWithAccounts()
    const at = { instance: "/sandbox/v2/orders" }
    const refused = async (body: Record<string, unknown>, type: string, status = 422) => expectProblem(await createOrder(body), { type, status, ...at })

    await refused({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "10" }, "MISSING_REQUIRED_FIELDS")
    await refused({ source: va(a.usd), destination: wl(a.base, "USDC"), lockSide: "source" }, "MISSING_REQUIRED_FIELDS")
    await refused({ source: wl(a.base, "USDC"), destination: wl(a.base, "USDT"), amount: "10", lockSide: "source" }, "INVALID_TRANSFER_PAIR")
    await refused({ source: wl(a.base, "USDC"), destination: wl(other.base, "USDC"), amount: "10", lockSide: "source" }, "INVALID_TRANSFER_PAIR")
    await refused({ source: wl(a.base, "USDC"), destination: wl(a.ethereum, "ETH"), amount: "10", lockSide: "source" }, "INVALID_TRANSFER_PAIR")
    await refused({ source: va(a.usd), destination: va(other.eur), amount: "10", lockSide: "source" }, "INVALID_ORDER_COMBO")
    await refused({ source: va(a.usd), destination: va(a.usd), amount: "10", lockSide: "source" }, "INVALID_ORDER_COMBO")
    await refused({ source: wl(a.base, "USD"), destination: va(a.eur), amount: "10", lockSide: "source" }, "INVALID_ORDER_COMBO")
    // Below and above the bounds of the source asset, and an amount that rounds to zero at the rate.
    await refused({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "0.99", lockSide: "source" }, "AMOUNT_OUT_OF_RANGE")
    await refused({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "1000000.01", lockSide: "source" }, "AMOUNT_OUT_OF_RANGE")
    await refused({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "0.001", lockSide: "source" }, "AMOUNT_OUT_OF_RANGE")
    await refused({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "10", lockSide: "source", markupBps: 5 }, "CLIENT_MARKUP_NOT_ENABLED", 403)
    await refused({ source: wl(a.base, "BTC"), destination: va(a.usd), amount: "1", lockSide: "source" }, "UNSUPPORTED_PAIR")
    expectProblem(await createOrder({ source: va(a.usd), destination: wl("wlt_unknown", "USDC"), amount: "10", lockSide: "source" }), {
      type: "WALLET_NOT_FOUND",
      status: 404,
      ...at
    })
    expectProblem(await acme.call("POST", "/v2/orders", { source: va(a.usd), destination: wl(a.base, "USDC"), amount: "10", lockSide: "source" }), {
      type: "IDEMPOTENCY_KEY_REQUIRED",
      status: 400,
      ...at
    })
    expect((await acme.call("GET", "/v2/orders")).json.data).toEqual([])
    expect(await events("order.created")).toEqual([])

    expect((await createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "10", lockSide: "source", clientReferenceId: "once" })).status).toBe(201)
    await refused({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "10", lockSide: "source", clientReferenceId: "once" }, "DUPLICATE_CLIENT_REFERENCE_ID", 409)
  })

  it("a request that breaks two rules gets the first: the request alone, then each side, then the two together, then the price", async () => {
    await start()
    const a = await customerWithAccounts()
    const other = await customerWithAccounts()
    const refused = async (body: Record<string, unknown>, type: string, status = 422) =>
      expectProblem(await createOrder(body), { type, status, instance: "/sandbox/v2/orders" })
    const unknownWallet = wl("wlt_000000000000000000000000", "USDC")
    // The request alone, before anything is read: no amount, whatever else is wrong.
    await refused({ source: va(a.usd), destination: unknownWallet, lockSide: "source" }, "MISSING_REQUIRED_FIELDS")
    await refused({ source: va(a.usd), destination: va(a.usd), lockSide: "source" }, "MISSING_REQUIRED_FIELDS")
    // Then each side: an unknown destination before the two sides together or the amount.
    await refused({ source: va(other.usd), destination: unknownWallet, amount: "0.01", lockSide: "source" }, "WALLET_NOT_FOUND", 404)
    // Then the two sides together before the price: another customer's account with an amount out of range.
    await refused({ source: va(a.usd), destination: va(other.eur), amount: "0.01", lockSide: "source" }, "INVALID_ORDER_COMBO")
    // Then, as on a quote, an amount of nothing at its asset's precision before the market's state.
    expect((await acme.call("POST", "/v2/simulate/rates", { sourceAsset: "USD", destinationAsset: "EUR", available: false })).status).toBe(200)
    await refused({ source: va(a.usd), destination: va(a.eur), amount: "0.001", lockSide: "source" }, "AMOUNT_OUT_OF_RANGE")
    await refused({ source: va(a.usd), destination: va(a.eur), amount: "10", lockSide: "source" }, "RATE_UNAVAILABLE", 503)
  })

  it("is gone after a sandbox reset, with its quote options and the market's rates", async () => {
    await start()
    const a = await customerWithAccounts()
    await acme.call("POST", "/v2/simulate/rates", { sourceAsset: "USD", destinationAsset: "EUR", mid: "0.5" })
    const option = (await quote({ source: { asset: "USD" }, target: { asset: "EUR" }, amount: "10", lockSide: "source" })).json.options[0]
    expect(option.rate).toBe("0.4985")
    const order = (await createOrder({ source: va(a.usd), destination: va(a.eur), amount: "10", lockSide: "source" })).json
    expect((await acme.call("POST", "/v2/simulate/reset")).status).toBe(200)
    expectProblem(await acme.call("GET", `/v2/orders/${order.id}`), { type: "ORDER_NOT_FOUND", status: 404, instance: `/sandbox/v2/orders/${order.id}` })
    expect((await acme.call("GET", "/v2/orders")).json.meta.total).toBe(0)
    // The market is back to its rules.
    expect((await quote({ source: { asset: "USD" }, target: { asset: "EUR" }, amount: "10", lockSide: "source" })).json.options[0].rate).toBe("0.9231481481223")
  })

  it("reads an order back, lists orders with filters, and answers ORDER_NOT_FOUND for another organization's", async () => {
    await start()
    const a = await customerWithAccounts()
    await fundUsd(a.usd, "100.00")
    const one = (await createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "10", lockSide: "source" })).json
    await advance(1_000)
    const two = (await createOrder({ source: va(a.usd), destination: va(a.eur), amount: "10", lockSide: "source" })).json
    await cancel(two.id)
    expect(await readOrder(one.id)).toEqual(one)
    const all = (await acme.call("GET", "/v2/orders")).json
    expect(all.data.map((o: any) => o.id)).toEqual([two.id, one.id])
    expect(all.meta).toEqual({ mode: "cursor", nextCursor: null, previousCursor: null, total: 2 })
    expect((await acme.call("GET", "/v2/orders?status=cancelled")).json.data.map((o: any) => o.id)).toEqual([two.id])
    expect((await acme.call("GET", `/v2/orders?customerId=${a.customerId}&status=pending`)).json.data.map((o: any) => o.id)).toEqual([one.id])
    const paged = (await acme.call("GET", "/v2/orders?limit=1&sortOrder=asc")).json
    expect(paged.data.map((o: any) => o.id)).toEqual([one.id])
    expect((await acme.call("GET", `/v2/orders?limit=1&sortOrder=asc&cursor=${paged.meta.nextCursor}`)).json.data.map((o: any) => o.id)).toEqual([two.id])
    expectProblem(await rival.call("GET", `/v2/orders/${one.id}`), { type: "ORDER_NOT_FOUND", status: 404, instance: `/sandbox/v2/orders/${one.id}` })
    expectProblem(await acme.call("GET", "/v2/orders/not-an-order"), { type: "INVALID_OID_FORMAT", status: 400, instance: "/sandbox/v2/orders/not-an-order" })
  })
})

// --- the books under random orders ---------------------------------------------------------------------------------------------

describe("the books under random orders, rate changes and clock moves (fast-check)", () => {
  it("per asset the ledger sums to zero, and no customer balance goes below zero", async () => {
    await start({ markup: true })
    const a = await customerWithAccounts()
    await fundUsd(a.usd, "5000.00")
    await fund({ type: "virtual_account", virtualAccountId: a.eur }, { code: "EUR", amount: "3000.00" })
    await fund({ type: "wallet", walletId: a.base }, { code: "USDC", amount: "4000", chain: "base" })
    await fund({ type: "wallet", walletId: a.ethereum }, { code: "ETH", amount: "2", chain: "ethereum" }, {}, 200_000)
    const accounts = [va(a.usd), va(a.eur), wl(a.base, "USDC"), wl(a.base, "ETH"), wl(a.ethereum, "USDC"), wl(a.ethereum, "ETH")]
    const pairs = [["USD", "USDC"], ["USDC", "EUR"], ["USDC", "ETH"], ["EUR", "USD"], ["ETH", "USDC"]] as const
    const orders: Array<string> = []
    const step = fc.oneof(
      fc.record({
        kind: fc.constant("order" as const),
        from: fc.integer({ min: 0, max: accounts.length - 1 }),
        to: fc.integer({ min: 0, max: accounts.length - 1 }),
        amount: fc.constantFrom("1", "2.5", "17.123456", "250", "999.99", "0.0005", "3000"),
        lockSide: fc.constantFrom("source", "destination"),
        autoExecute: fc.boolean(),
        markupBps: fc.option(fc.integer({ min: 0, max: 300 }), { nil: undefined })
      }),
      fc.record({ kind: fc.constant("execute" as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant("cancel" as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant("fail" as const), pick: fc.nat(), reasonCode: fc.constantFrom("provider_rejected", "provider_unavailable", "cancelled") }),
      fc.record({ kind: fc.constant("rate" as const), pair: fc.integer({ min: 0, max: pairs.length - 1 }), mid: fc.constantFrom("0.5", "0.93", "1", "1.1", "0.0003", "2900") }),
      fc.record({ kind: fc.constant("advance" as const), ms: fc.constantFrom(500, 2_000, 30_000, 61_000, 16 * 60_000) })
    )
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
        for (const s of steps) {
          // Mostly one of the last few orders, which are likelier still pending.
          const pick = (n: number) => orders[n % 4 === 0 ? n % Math.max(orders.length, 1) : Math.max(orders.length - 1 - (n % 3), 0)]
          switch (s.kind) {
            case "order": {
              const r = await createOrder({
                source: accounts[s.from],
                destination: accounts[s.to],
                amount: s.amount,
                lockSide: s.lockSide,
                autoExecute: s.autoExecute,
                ...(s.markupBps === undefined ? {} : { markupBps: s.markupBps })
              })
              // Refused combinations and amounts are 4xx, never a 5xx.
              expect(r.status, r.text).toBeLessThan(500)
              if (r.status === 201) orders.push(r.json.id)
              break
            }
            case "execute":
            case "cancel": {
              const id = pick(s.pick)
              if (id !== undefined) expect((await (s.kind === "execute" ? execute(id) : cancel(id))).status).toBeLessThan(500)
              break
            }
            case "fail": {
              const id = pick(s.pick)
              if (id !== undefined) expect((await acme.call("POST", `/v2/simulate/orders/${id}/fail`, { reasonCode: s.reasonCode })).status).toBeLessThan(500)
              break
            }
            case "rate":
              expect((await acme.call("POST", "/v2/simulate/rates", { sourceAsset: pairs[s.pair]![0], destinationAsset: pairs[s.pair]![1], mid: s.mid })).status).toBe(200)
              break
            case "advance":
              await advance(s.ms)
              break
          }
        }
        await expectBalancedLedger()
      }),
      { seed: 15, numRuns: Number(process.env.FOS_FC_RUNS ?? 40) }
    )
    // Let everything in flight end: nothing stays pending, and the books still balance.
    await advance(3_600_000)
    const all = (await acme.call("GET", "/v2/orders?limit=100")).json.data
    expect(all.filter((o: any) => o.status === "pending")).toEqual([])
    // The runs reached every end an order can have.
    expect(new Set(all.map((o: any) => o.status))).toEqual(new Set(["succeeded", "failed", "cancelled"]))
    await expectBalancedLedger()
  }, 120_000)
})

// --- deposit-funded orders ---------------------------------------------------------------------------------------------------

describe("null on the wire (representation rules 3 and 4)", () => {
  it("a transaction, an order and an application read send no null but the nullable fields docs/decisions.md lists", async () => {
    await start()
    const a = await customerWithAccounts()
    await fundUsd(a.usd, "100.00")
    await fund({ type: "wallet", walletId: a.base }, { code: "USDC", amount: "20", chain: "base" })
    const executed = (await createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "50", lockSide: "source" })).json
    expect((await execute(executed.id)).status).toBe(200)
    await advance(62_000)
    expect(await readOrder(executed.id)).toMatchObject({ status: "succeeded" })
    expect(nullPaths(await readOrder(executed.id))).toEqual([])
    const order = (await createOrder({ sourceAsset: { asset: "USDC", chain: "base" }, destination: va(a.eur), amount: "10", lockSide: "source" })).json
    // Every transaction of the organization (the deposits that funded the accounts) and every application.
    const transactions = (await acme.call("GET", "/v2/transactions?limit=100")).json.data
    const applications = (await acme.call("GET", "/v2/applications?limit=100")).json.data
    expect(transactions.length).toBeGreaterThan(0)
    expect(applications.length).toBeGreaterThan(0)
    // The one nullable field of these reads: a deposit's wire-receive bank details.
    for (const t of transactions) {
      expect(nullPaths((await acme.call("GET", `/v2/transactions/${t.id}`)).json), t.id).toEqual(t.type === "deposit" ? ["wireReceiveDetails"] : [])
    }
    expect(nullPaths(await readOrder(order.id))).toEqual([])
    for (const app of applications) {
      expect(nullPaths((await acme.call("GET", `/v2/applications/${app.applicationId}`)).json), app.applicationId).toEqual([])
    }
    // Ended, the order and its transaction still send none.
    await advance(Date.parse(order.lockExpiresAt) - (await now()))
    expect(await readOrder(order.id)).toMatchObject({ status: "cancelled" })
    expect(nullPaths(await readOrder(order.id))).toEqual([])
  })
})

describe("an order funded by a deposit", () => {
  const sendTo = (address: string, amount: string, sender?: string) =>
    acme.call("POST", "/v2/simulate/deposits", {
      destination: { type: "deposit_address", address },
      assetAmount: { code: "USDC", amount, chain: "base" },
      ...(sender === undefined ? {} : { sender: { address: sender } })
    })
  const sender = "0x00000000000000000000000000000000000000aa"

  it("gets depositInstructions with a service-managed funding address, and executes once its deposit lands", async () => {
    await start()
    const a = await customerWithAccounts()
    const created = await createOrder({ sourceAsset: { asset: "USDC", chain: "base" }, destination: va(a.eur), amount: "100", lockSide: "source" })
    expect(created.status, created.text).toBe(201)
    const order = created.json
    expect(order).not.toHaveProperty("source")
    expect(order).not.toHaveProperty("quoteOptionId")
    expect(order).toMatchObject({ direction: "offramp", autoExecute: true, totalDebit: { code: "USDC", amount: "100.250000", chain: "base" } })
    expect(order.depositInstructions).toEqual({ address: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/), assetAmount: order.totalDebit })
    const [createdEvent] = await events("order.created")
    expect(createdEvent!.data.depositInstructions).toEqual(order.depositInstructions)
    // The funding address is not the customer's wallet: no wallet.created, not in the customer's wallets.
    expect((await events("wallet.created")).map((e) => e.data.address)).not.toContain(order.depositInstructions.address)
    expect((await acme.call("GET", `/v2/customers/${a.customerId}/wallets`)).json.data.map((w: any) => w.address)).not.toContain(order.depositInstructions.address)

    const deposit = await sendTo(order.depositInstructions.address, "100.25", sender)
    expect(deposit.status, deposit.text).toBe(201)
    // The deposit names the funding address as its deposit_address side (no wallet a read cannot show), and the order.
    expect(deposit.json.destination).toMatchObject({ type: "deposit_address", address: order.depositInstructions.address })
    expect(deposit.json.destination).not.toHaveProperty("walletId")
    expect(deposit.json.linkedOrderId).toBe(order.id)
    const [depositCreated] = (await events("transaction.created")).filter((e) => e.data.transactionId === deposit.json.id)
    expect(depositCreated!.data).toMatchObject({ destination: deposit.json.destination, linkedOrderId: order.id })
    await advance(60_000 + 2_000)
    const running = await readOrder(order.id)
    expect(running.transactionId).toMatch(/^txn_/)
    await advance(62_000)
    expect((await readOrder(order.id)).status).toBe("succeeded")
    expect(await available("virtual_account", a.eur, "EUR")).toBe(order.destination.assetAmount.amount)
    // Nothing was left at the address, so nothing goes back.
    expect((await acme.call("GET", "/v2/transactions?type=deposit_return")).json.data).toEqual([])
    await expectBalancedLedger()
  })

  it("waits at its funding deadline while a deposit is still being checked, then executes it", async () => {
    await start()
    const a = await customerWithAccounts()
    const order = (await createOrder({ sourceAsset: { asset: "USDC", chain: "base" }, destination: va(a.eur), amount: "10", lockSide: "source" })).json
    const deadline = Date.parse(order.lockExpiresAt)
    await advance(deadline - (await now()) - 30_000)
    await sendTo(order.depositInstructions.address, "10.025", sender)
    // Base confirms in a minute: the deposit is still being checked at the deadline.
    await advance(30_000)
    expect((await readOrder(order.id)).status).toBe("pending")
    await advance(60_000)
    const executed = await readOrder(order.id)
    expect(executed.transactionId).toMatch(/^txn_/)
    await advance(62_000)
    expect((await readOrder(order.id)).status).toBe("succeeded")
  })

  it("sends funds that arrive after the order ended back as a deposit_return, failed with no failureCode and the catalog's fixed failureMessage", async () => {
    await start()
    const a = await customerWithAccounts()
    const order = (await createOrder({ sourceAsset: { asset: "USDC", chain: "base" }, destination: va(a.eur), amount: "10", lockSide: "source" })).json
    await advance(Date.parse(order.lockExpiresAt) - (await now()))
    expect(await readOrder(order.id)).toMatchObject({ status: "cancelled", cancellationReason: "expired" })
    await sendTo(order.depositInstructions.address, "10.025", sender)
    await advance(62_000)
    expect((await readOrder(order.id)).status).toBe("cancelled")
    const returns = (await acme.call("GET", "/v2/transactions?type=deposit_return")).json.data
    expect(returns).toHaveLength(1)
    expect(returns[0]).toMatchObject({
      type: "deposit_return",
      status: "pending",
      linkedOrderId: order.id,
      source: { type: "deposit_address", address: order.depositInstructions.address, assetAmount: { code: "USDC", amount: "10.025000", chain: "base" } },
      // Back to the sender, its address as the chain's validator normalised it (EIP-55).
      destination: { type: "external_crypto", address: expect.stringMatching(new RegExp(`^${sender}$`, "i")), assetAmount: { code: "USDC", amount: "10.025000", chain: "base" } }
    })
    await advance(60_000)
    const ended = (await acme.call("GET", `/v2/transactions/${returns[0].id}`)).json
    expectWire(ended, {
      status: "failed",
      failureCode: undefined,
      failureMessage: "The funds were sent back to the address they came from. See GET /v2/transactions?type=deposit_return."
    })
    const [failed] = (await events("transaction.failed")).filter((e) => e.data.transactionId === returns[0].id)
    expect(failed!.data).toMatchObject({ failureMessage: ended.failureMessage, linkedOrderId: order.id })
    // No actionable code: reasonCode is omitted, not null (rule 3).
    expect(failed!.data).not.toHaveProperty("reasonCode")
    expect(failed!.data).not.toHaveProperty("failureCode")
    await expectBalancedLedger()
  })

  it("sends a deposit in another asset back to its sender at once, while the order still waits for its own", async () => {
    await start()
    const a = await customerWithAccounts()
    const order = (await createOrder({ sourceAsset: { asset: "USDC", chain: "base" }, destination: va(a.eur), amount: "10", lockSide: "source" })).json
    const stranger = "0x00000000000000000000000000000000000000bb"
    const wrong = await acme.call("POST", "/v2/simulate/deposits", {
      destination: { type: "deposit_address", address: order.depositInstructions.address },
      assetAmount: { code: "ETH", amount: "0.5", chain: "base" },
      sender: { address: stranger }
    })
    expect(wrong.status, wrong.text).toBe(201)
    await advance(62_000)
    // The ETH can never fund a USDC order: it goes back to the address it came from, and the order waits on.
    const returns = (await acme.call("GET", "/v2/transactions?type=deposit_return")).json.data
    expect(returns).toHaveLength(1)
    expect(returns[0]).toMatchObject({
      status: "pending",
      linkedOrderId: order.id,
      source: { type: "deposit_address", address: order.depositInstructions.address, assetAmount: { code: "ETH", amount: "0.500000000000000000", chain: "base" } },
      destination: { type: "external_crypto", address: expect.stringMatching(new RegExp(`^${stranger}$`, "i")), assetAmount: { code: "ETH", amount: "0.500000000000000000", chain: "base" } }
    })
    expect((await readOrder(order.id)).status).toBe("pending")
    // The order's own asset still funds it, and its sender is where a surplus would go.
    await sendTo(order.depositInstructions.address, "10.025", sender)
    await advance(62_000)
    expect((await readOrder(order.id)).transactionId).toMatch(/^txn_/)
    await advance(62_000)
    expect((await readOrder(order.id)).status).toBe("succeeded")
    expect((await acme.call("GET", `/v2/transactions/${returns[0].id}`)).json.status).toBe("failed")
    expect((await acme.call("GET", "/v2/transactions?type=deposit_return")).json.data).toHaveLength(1)
    await expectBalancedLedger()
  })

  it("refuses a deposit-funded order without sourceAsset, on a fiat asset, or redeeming a quote option", async () => {
    await start()
    const a = await customerWithAccounts()
    const at = { instance: "/sandbox/v2/orders" }
    expectProblem(await createOrder({ destination: va(a.eur), amount: "10", lockSide: "source" }), { type: "MISSING_REQUIRED_FIELDS", status: 422, ...at })
    expectProblem(await createOrder({ sourceAsset: { asset: "USD" }, destination: va(a.eur), amount: "10", lockSide: "source" }), { type: "INVALID_ORDER_COMBO", status: 422, ...at })
    const option = (await quote({ source: { asset: "USDC", chain: "base" }, target: { asset: "EUR" }, amount: "10", lockSide: "source" })).json.options[0]
    expectProblem(await createOrder({ sourceAsset: { asset: "USDC", chain: "base" }, destination: va(a.eur), quoteOptionId: option.id }), { type: "INVALID_ORDER_COMBO", status: 422, ...at })
  })
})

// --- autoPayout ------------------------------------------------------------------------------------------------------------------

describe("autoPayout", () => {
  // Sent all-lowercase; kept, as a payout's address is, in its EIP-55 form (one of EIP-55's own vectors).
  const cryptoRecipient = { chain: "base", address: "0x52908400098527886e0f7030069857d2e4169ee7", attestation: true }
  const checksummed = "0x52908400098527886E0F7030069857D2E4169EE7"
  const bankRecipient = { name: "Erika Mustermann", country: "DEU", iban: "DE89370400440532013000" }
  const readTransaction = async (id: string) => (await acme.call("GET", `/v2/transactions/${id}`)).json
  const payoutEvents = async (id: string) => (await events()).filter((e: any) => e.data.transactionId === id).map((e: any) => e.type)

  it("opens a real payout after an onramp: linkedOrderId, the network fee and the margin on top, through compliance, sending (txHash) and the chain's confirmation", async () => {
    await start({ markup: true })
    const a = await customerWithAccounts()
    await fundUsd(a.usd, "200.00")
    const option = (await quote({ source: { asset: "USD" }, target: { asset: "USDC", chain: "base" }, amount: "100", lockSide: "source" })).json.options[1]
    expect(option.recipientType).toBe("external_crypto")
    const onramp = await createOrder({
      source: va(a.usd),
      destination: wl(a.base, "USDC"),
      quoteOptionId: option.id,
      autoPayout: { purpose: "supplier payment", recipient: cryptoRecipient, markupAmount: "1.5" }
    })
    expect(onramp.status, onramp.text).toBe(201)
    // As stored: the address in its EIP-55 form, the margin a decimal string (the shape it was sent in) at USDC's precision.
    expect(onramp.json.autoPayout).toEqual({ purpose: "supplier payment", recipient: { ...cryptoRecipient, address: checksummed }, markupAmount: "1.500000" })
    expect((await readOrder(onramp.json.id)).autoPayout).toEqual(onramp.json.autoPayout)
    await execute(onramp.json.id)
    await advance(62_000)
    const done = await readOrder(onramp.json.id)
    expect(done.status).toBe("succeeded")
    const id = done.payoutTransactionId
    // A payout, read at /v2/payouts as any: the converted 99.5 USDC less the network fee (0.5) and the margin (1.5).
    const opened = (await acme.call("GET", `/v2/payouts/${id}`)).json
    expectWire(opened, {
      type: "withdrawal",
      status: "pending",
      stage: undefined,
      queuePosition: undefined,
      linkedOrderId: onramp.json.id,
      source: { type: "wallet", walletId: a.base, assetAmount: { code: "USDC", amount: "99.500000", chain: "base" } },
      destination: { type: "external_crypto", address: checksummed, txHash: undefined, assetAmount: { code: "USDC", amount: "97.500000", chain: "base" } },
      fees: [
        { owner: "network", assetAmount: { code: "USDC", amount: "0.500000", chain: "base" }, invoiced: false },
        { owner: "organization", assetAmount: { code: "USDC", amount: "1.500000", chain: "base" }, invoiced: false }
      ]
    })
    expect(opened.payout).toBeUndefined()
    expect(await balances("wallet", a.base)).toEqual([{ code: "USDC", chain: "base", available: "0.000000", pending: "99.500000" }])
    await expectBalancedLedger()
    // Compliance clears after 2 s (processing); the transfer is broadcast 2 s later (txHash); the chain confirms a minute on.
    await advance(2_000)
    // Not broadcast yet: no txHash (omitted, not null: rule 3).
    expectWire(await readTransaction(id), { status: "processing", destination: { txHash: undefined } })
    await advance(2_000)
    const sent = await readTransaction(id)
    expect(sent.status).toBe("processing")
    expect(sent.destination.txHash).toMatch(/^0x[0-9a-f]{64}$/)
    await advance(59_000)
    expect((await readTransaction(id)).status).toBe("processing")
    await advance(1_000)
    expect((await readTransaction(id)).status).toBe("completed")
    expect(await payoutEvents(id)).toEqual(["transaction.created", "transaction.processing", "transaction.completed"])
    expect(await balances("wallet", a.base)).toEqual([{ code: "USDC", chain: "base", available: "0.000000", pending: "0.000000" }])
    const fees = await expectBalancedLedger()
    expect(fees.get("organization:USDC@base")).toBe(1_500_000n)
  })

  it("reserves its payout before an autoExecute order waiting on the same account can spend the credit", async () => {
    await start()
    const a = await customerWithAccounts()
    await fundUsd(a.usd, "200.00")
    const onramp = await createOrder({
      source: va(a.usd),
      destination: wl(a.base, "USDC"),
      amount: "100",
      lockSide: "source",
      autoPayout: { purpose: "supplier payment", recipient: cryptoRecipient }
    })
    expect(onramp.status, onramp.text).toBe(201)
    // Waits on the wallet the onramp credits, for less than the credit: it could take the funds the payout needs.
    const waiting = await createOrder({ source: wl(a.base, "USDC"), destination: va(a.eur), amount: "50", lockSide: "source", autoExecute: true })
    expect(waiting.status, waiting.text).toBe(201)
    expect((await readOrder(waiting.json.id)).transactionId).toBeUndefined()
    await execute(onramp.json.id)
    await advance(62_000)
    const done = await readOrder(onramp.json.id)
    expect(done.status).toBe("succeeded")
    expect((await acme.call("GET", `/v2/payouts/${done.payoutTransactionId}`)).json).toMatchObject({ status: "pending", linkedOrderId: onramp.json.id })
    // The payout reserved the whole credit; the waiting order found nothing left and still waits.
    const still = await readOrder(waiting.json.id)
    expect(still.status).toBe("pending")
    expect(still.transactionId).toBeUndefined()
    await expectBalancedLedger()
  })

  it("opens a real bank payout after an offramp: payout.rail and the rail's fee, completed on the rail's clock with the books balanced", async () => {
    await start()
    const a = await customerWithAccounts()
    await fund({ type: "wallet", walletId: a.base }, { code: "USDC", amount: "50", chain: "base" })
    const offramp = await createOrder({
      source: wl(a.base, "USDC"),
      destination: va(a.eur),
      amount: "40",
      lockSide: "source",
      autoExecute: true,
      autoPayout: { rail: "sepa", purpose: "rent", recipient: bankRecipient }
    })
    expect(offramp.status, offramp.text).toBe(201)
    await advance(62_000)
    const paid = await readOrder(offramp.json.id)
    expect(paid.status).toBe("succeeded")
    const id = paid.payoutTransactionId
    const converted = paid.destination.assetAmount.amount
    const bank = await readTransaction(id)
    expect(bank).toMatchObject({
      type: "withdrawal",
      status: "pending",
      linkedOrderId: offramp.json.id,
      source: { type: "virtual_account", virtualAccountId: a.eur, assetAmount: { code: "EUR", amount: converted } },
      destination: { type: "external_bank", assetAmount: { code: "EUR", amount: minus("EUR", converted, "1.00") } },
      fees: [{ owner: "service", assetAmount: { code: "EUR", amount: "1.00" }, invoiced: false }],
      payout: { rail: "sepa" }
    })
    expect(await available("virtual_account", a.eur, "EUR")).toBe("0.00")
    await advance(2_000)
    expect((await readTransaction(id)).status).toBe("processing")
    // Sent after 2 s more; the test's SEPA settles 5 s after that.
    await advance(6_000)
    expect((await readTransaction(id)).status).toBe("processing")
    await advance(1_000)
    const completed = await readTransaction(id)
    expect(completed).toMatchObject({ status: "completed", payout: { rail: "sepa" } })
    expect(await payoutEvents(id)).toEqual(["transaction.created", "transaction.processing", "transaction.completed"])
    expect(await balances("virtual_account", a.eur)).toEqual([{ code: "EUR", available: "0.00", pending: "0.00" }])
    await expectBalancedLedger()
    // A completed bank payout can be returned by the bank, as any: the principal comes back.
    const returned = await acme.call("POST", `/v2/simulate/transactions/${id}/return`, { returnCode: "MS03" })
    expect(returned.status, returned.text).toBe(200)
    expect(returned.json).toMatchObject({ status: "failed", failureCode: "returned_by_sender", linkedOrderId: offramp.json.id })
    expect(await available("virtual_account", a.eur, "EUR")).toBe(minus("EUR", converted, "1.00"))
    await expectBalancedLedger()
  })

  it("is cancellable before sending, and fails with capability_suspended when the customer is restricted, before or after it opens", async () => {
    await start()
    const a = await customerWithAccounts()
    await fundUsd(a.usd, "300.00")
    const order = async () => {
      const created = await createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), amount: "50", lockSide: "source", autoPayout: { purpose: "x", recipient: cryptoRecipient } })
      expect(created.status, created.text).toBe(201)
      expect((await execute(created.json.id)).status).toBe(200)
      return created.json.id as string
    }
    const payoutOf = async (orderId: string) => (await readOrder(orderId)).payoutTransactionId as string
    // Cancelled before sending: the reservation is voided and the converted USDC stays in the wallet.
    const first = await order()
    await advance(62_000)
    const cancelled = await payoutOf(first)
    const answer = await acme.call("POST", `/v2/payouts/${cancelled}/cancel`, undefined, idem())
    expect(answer.status, answer.text).toBe(200)
    expect(answer.json).toMatchObject({ status: "cancelled", linkedOrderId: first })
    expect(await available("wallet", a.base, "USDC")).toBe("49.750000")
    await advance(120_000)
    expect((await readTransaction(cancelled)).status).toBe("cancelled")
    await expectBalancedLedger()

    // A restriction fails the unsent autoPayout already open, and the one of an order still converting when it opens.
    const second = await order()
    await advance(30_000)
    const third = await order()
    await advance(32_000)
    const open = await payoutOf(second)
    expect((await readTransaction(open)).status).toBe("pending")
    expect((await acme.call("POST", `/v2/simulate/customers/${a.customerId}/restrict`, {})).status).toBe(200)
    expect(await readTransaction(open)).toMatchObject({ status: "failed", failureCode: "capability_suspended" })
    await advance(30_000)
    expect((await readOrder(third)).status).toBe("succeeded")
    const late = await payoutOf(third)
    expect(await readTransaction(late)).toMatchObject({ status: "failed", failureCode: "capability_suspended", linkedOrderId: third })
    expect(await payoutEvents(late)).toEqual(["transaction.created", "transaction.failed"])
    expect(await balances("wallet", a.base)).toEqual([{ code: "USDC", chain: "base", available: "149.250000", pending: "0.000000" }])
    await expectBalancedLedger()
  })

  it("sends a bank autoPayout the review rules catch to compliance review, which needs its supporting documents, and clears on the clock", async () => {
    await start({ worldModel: { payouts: { reviewCountries: ["DEU"] } } as never })
    const a = await customerWithAccounts()
    await fund({ type: "wallet", walletId: a.base }, { code: "USDC", amount: "50", chain: "base" })
    const body = { source: wl(a.base, "USDC"), destination: va(a.eur), amount: "40", lockSide: "source", autoExecute: true }
    expectProblem(await createOrder({ ...body, autoPayout: { rail: "sepa", purpose: "rent", recipient: bankRecipient } }), {
      type: "MISSING_REQUIRED_FIELDS",
      status: 422,
      instance: "/sandbox/v2/orders"
    })
    const docs = await deuDocuments(acme)
    const created = await createOrder({ ...body, autoPayout: { rail: "sepa", purpose: "rent", documents: [docs.register], recipient: bankRecipient } })
    expect(created.status, created.text).toBe(201)
    await advance(62_000)
    const id = (await readOrder(created.json.id)).payoutTransactionId
    expect(await readTransaction(id)).toMatchObject({ status: "pending", stage: "under_review" })
    expect(await payoutEvents(id)).toEqual(["transaction.created", "transaction.under_review"])
    await advance(30 * 60_000 + 10_000)
    expect((await readTransaction(id)).status).toBe("completed")
    await expectBalancedLedger()
  })

  it("refuses a payout that does not fit the order: INVALID_ORDER_COMBO, MISSING_REQUIRED_FIELDS, RECIPIENT_VALIDATION_FAILED, UNPROCESSABLE_ENTITY, CLIENT_MARKUP_EXCEEDS_PAYOUT", async () => {
    await start({ markup: true })
    const a = await customerWithAccounts()
    const at = { instance: "/sandbox/v2/orders" }
    const onramp = (autoPayout: Record<string, unknown>, amount = "10") => createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), amount, lockSide: "source", autoPayout })
    const offramp = (autoPayout: Record<string, unknown>) => createOrder({ source: wl(a.base, "USDC"), destination: va(a.eur), amount: "10", lockSide: "source", autoPayout })
    expectProblem(await createOrder({ source: va(a.usd), destination: va(a.eur), amount: "10", lockSide: "source", autoPayout: { purpose: "x", recipient: bankRecipient, rail: "sepa" } }), {
      type: "INVALID_ORDER_COMBO",
      status: 422,
      ...at
    })
    // An autoPayout of the other direction's kind: a crypto payout after an offramp, a rail or a bank recipient
    // after an onramp (spec: "autoPayout not matching the direction").
    const offrampCrypto = expectProblem(await offramp({ purpose: "rent", recipient: cryptoRecipient }), { type: "INVALID_ORDER_COMBO", status: 422, ...at })
    expect(offrampCrypto.detail).toBe("An offramp order's autoPayout goes to a bank account (rail, recipient.name, recipient.country, recipient.iban or recipient.accountNumber), not to an address on a chain.")
    const onrampRail = expectProblem(await onramp({ rail: "ach", purpose: "x", recipient: cryptoRecipient }), { type: "INVALID_ORDER_COMBO", status: 422, ...at })
    expect(onrampRail.detail).toBe("An onramp order's autoPayout goes to an address on the destination wallet's chain: it takes no rail.")
    const onrampBank = expectProblem(await onramp({ purpose: "x", recipient: { ...cryptoRecipient, iban: bankRecipient.iban } }), { type: "INVALID_ORDER_COMBO", status: 422, ...at })
    expect(onrampBank.detail).toBe("An onramp order's autoPayout goes to an address on the destination wallet's chain: it takes no recipient.iban.")
    expectProblem(await onramp({ recipient: cryptoRecipient }), { type: "MISSING_REQUIRED_FIELDS", status: 422, ...at })
    expectProblem(await offramp({ purpose: "rent", recipient: bankRecipient }), { type: "MISSING_REQUIRED_FIELDS", status: 422, ...at })
    // A payout the amount threshold sends to review needs its supporting documents, as POST /v2/payouts.
    expectProblem(await onramp({ purpose: "x", recipient: cryptoRecipient }, "10100"), { type: "MISSING_REQUIRED_FIELDS", status: 422, ...at })
    expectProblem(await onramp({ purpose: "x", recipient: { ...cryptoRecipient, chain: "ethereum" } }), { type: "RECIPIENT_VALIDATION_FAILED", status: 422, ...at })
    expectProblem(await onramp({ purpose: "x", recipient: { ...cryptoRecipient, address: "0x1234" } }), { type: "RECIPIENT_VALIDATION_FAILED", status: 422, ...at })
    expectProblem(await onramp({ purpose: "x", recipient: { ...cryptoRecipient, attestation: false } }), { type: "RECIPIENT_VALIDATION_FAILED", status: 422, ...at })
    expectProblem(await offramp({ rail: "sepa", purpose: "rent", recipient: { ...bankRecipient, iban: "DE89370400440532013001" } }), {
      type: "RECIPIENT_VALIDATION_FAILED",
      status: 422,
      ...at
    })
    // ACH carries USD, not the EUR the destination holds.
    expectProblem(await offramp({ rail: "ach", purpose: "rent", recipient: bankRecipient }), { type: "UNPROCESSABLE_ENTITY", status: 422, ...at })
    // 10 USD converts to 9.95 USDC and the network fee is 0.5: a margin of 9.45 leaves nothing to pay out.
    expectProblem(await onramp({ purpose: "x", recipient: cryptoRecipient, markupAmount: "9.45" }), { type: "CLIENT_MARKUP_EXCEEDS_PAYOUT", status: 422, ...at })
    expect((await onramp({ purpose: "x", recipient: cryptoRecipient, markupAmount: "9.44" })).status).toBe(201)
    // Without a margin, a conversion too small for the fee is out of range.
    expectProblem(await onramp({ purpose: "x", recipient: cryptoRecipient }, "0.5"), { type: "AMOUNT_OUT_OF_RANGE", status: 422, ...at })
    expect((await acme.call("GET", "/v2/orders")).json.data).toHaveLength(1)
  })

  it("checks an offramp recipient's bank details by the rule whitelist recipients are checked by: the IBAN's length for its country, the ABA routing number's prefix", async () => {
    await start()
    const a = await customerWithAccounts()
    const at = { instance: "/sandbox/v2/orders" }
    const whitelist = (body: Record<string, unknown>) => acme.call("POST", `/v2/customers/${a.customerId}/whitelist-recipients`, body, idem("wlr"))
    const offramp = (destination: string, autoPayout: Record<string, unknown>) =>
      createOrder({ source: wl(a.base, "USDC"), destination: va(destination), amount: "10", lockSide: "source", autoPayout })
    // Check digits that add up (mod 97 is 1), on an IBAN one character short of Germany's 22.
    const shortIban = "DE5137040044053201300"
    const address = { line1: "Unter den Linden 1", city: "Berlin", postalCode: "10117", country: "DEU" }
    expect((await whitelist({ rail: "sepa", name: "Erika Mustermann", address, iban: shortIban })).json.errors).toEqual([
      { pointer: "/iban", detail: "must have 22 characters for its country" }
    ])
    const iban = expectProblem(await offramp(a.eur, { rail: "sepa", purpose: "rent", recipient: { ...bankRecipient, iban: shortIban } }), {
      type: "RECIPIENT_VALIDATION_FAILED",
      status: 422,
      ...at
    })
    // The order endpoint's shape: the detail names the field, with no errors[].
    expect(iban.detail).toBe("recipient.iban must have 22 characters for its country.")
    expect(iban.errors).toBeUndefined()
    // A routing number whose check digit adds up, under a prefix outside the Federal Reserve's ranges (50).
    const usRecipient = { name: "Ada Lovelace", country: "USA", accountNumber: "123456789" }
    const usAddress = { line1: "1 Main St", city: "New York", state: "NY", postalCode: "10001", country: "USA" }
    expect((await whitelist({ rail: "ach", name: "Ada Lovelace", address: usAddress, routingNumber: "500000005", accountNumber: "123456789" })).json.errors).toEqual([
      { pointer: "/routingNumber", detail: "routing number 500000005 is not a valid ABA routing number (its prefix 50 is not a Federal Reserve routing symbol: 00-12, 21-32, 61-72 or 80)" }
    ])
    const routing = expectProblem(await offramp(a.usd, { rail: "ach", purpose: "rent", recipient: { ...usRecipient, routingNumber: "500000005" } }), {
      type: "RECIPIENT_VALIDATION_FAILED",
      status: 422,
      ...at
    })
    expect(routing.detail).toBe("recipient.routingNumber is not a valid ABA routing number (its prefix 50 is not a Federal Reserve routing symbol: 00-12, 21-32, 61-72 or 80).")
    expect(routing.errors).toBeUndefined()
    // The same recipients with good details are taken.
    expect((await offramp(a.usd, { rail: "ach", purpose: "rent", recipient: { ...usRecipient, routingNumber: "021000021" } })).status).toBe(201)
    expect((await offramp(a.eur, { rail: "sepa", purpose: "rent", recipient: bankRecipient })).status).toBe(201)
  })
})

// --- on PostgreSQL ---------------------------------------------------------------------------------------------------------------

describe.skipIf(adminUrl === undefined || adminUrl === "")("orders on PostgreSQL", () => {
  it("runs an order from quote to settled balances, an autoExecute order, a cancel and a deposit_return, with the books balanced", async () => {
    const database = await freshDatabase("orders")
    try {
      await start({ databaseUrl: database.url })
      const a = await customerWithAccounts()
      await fundUsd(a.usd, "300.00")
      const option = (await quote({ source: { asset: "USD" }, target: { asset: "USDC", chain: "base" }, amount: "100", lockSide: "source" })).json.options[0]
      const order = (await createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), quoteOptionId: option.id })).json
      expectProblem(await createOrder({ source: va(a.usd), destination: wl(a.base, "USDC"), quoteOptionId: option.id }), {
        type: "QUOTE_ALREADY_USED",
        status: 409,
        instance: "/sandbox/v2/orders"
      })
      expect((await execute(order.id)).status).toBe(200)
      const auto = (await createOrder({ source: va(a.usd), destination: va(a.eur), amount: "50", lockSide: "source", autoExecute: true })).json
      expect(auto.transactionId).toMatch(/^txn_/)
      const cancelled = (await createOrder({ source: va(a.usd), destination: va(a.eur), amount: "50", lockSide: "source" })).json
      expect((await cancel(cancelled.id)).json.status).toBe("cancelled")
      const funded = (await createOrder({ sourceAsset: { asset: "USDC", chain: "base" }, destination: va(a.eur), amount: "10", lockSide: "source" })).json
      await advance(62_000)
      expect((await readOrder(order.id)).status).toBe("succeeded")
      expect((await readOrder(auto.id)).status).toBe("succeeded")
      expect(await available("wallet", a.base, "USDC")).toBe("99.500000")
      await advance(15 * 60_000)
      expect((await readOrder(funded.id)).cancellationReason).toBe("expired")
      await acme.call("POST", "/v2/simulate/deposits", {
        destination: { type: "deposit_address", address: funded.depositInstructions.address },
        assetAmount: { code: "USDC", amount: "5", chain: "base" }
      })
      await advance(2 * 62_000)
      const returned = (await acme.call("GET", "/v2/transactions?type=deposit_return")).json.data
      expect(returned.map((t: any) => [t.status, "failureCode" in t, t.linkedOrderId])).toEqual([["failed", false, funded.id]])
      await expectBalancedLedger()
      await expectCatalogEvents(engine)
    } finally {
      await engine.close()
      engine = undefined as never
      await database.drop()
    }
  }, 60_000)
})
