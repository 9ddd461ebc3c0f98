/**
 * `POST /sandbox/v2/simulate/reset` through the whole pipeline, on the memory store and on PGlite: the caller's
 * sandbox is emptied (customers, applications, documents, virtual accounts, webhook endpoints and deliveries,
 * events, timers, idempotency records), its organization, users and keys stay, and neither its live data nor
 * another organization's sandbox is touched.
 */
import { rmSync } from "node:fs"
import * as core from "@fos/core"
import { Outbox, Store, Tenancy, Timers } from "@fos/core"
import { createEngine, type Engine } from "@fos/http"
import { layerPgliteStore } from "@fos/sql"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { type Client, clientOf, deuDocuments, deuSubmission, idem } from "./onboardingFixtures.ts"
import { expectProblem, keysOf, orgSeed, seedOf, START_MS } from "./support.ts"
import { freshPgliteDirectory } from "../adapters/sql/test/pgliteDirectory.ts"

const stores = {
  memory: () => ({ store: "memory" as const, cleanup: () => {} }),
  PGlite: async () => {
    const dir = await freshPgliteDirectory("reset")
    return { store: layerPgliteStore(dir), cleanup: () => rmSync(dir, { recursive: true, force: true }) }
  }
}

describe.each(Object.keys(stores) as Array<keyof typeof stores>)("sandbox reset on %s", (storeName) => {
  let engine: Engine
  let cleanup = () => {}
  afterEach(async () => {
    await engine?.close()
    cleanup()
  })

  const start = async () => {
    const made = await stores[storeName]()
    cleanup = made.cleanup
    engine = await createEngine({
      store: made.store,
      clock: { mode: "virtual", start: START_MS },
      realClock: Timers.makeVirtualClock(START_MS),
      webhookTransport: "memory",
      seed: seedOf(orgSeed("acme"), orgSeed("rival")) as never
    })
    return {
      acme: clientOf(engine.fetch, "http://fos", keysOf("acme").sandbox),
      acmeLive: clientOf(engine.fetch, "http://fos", keysOf("acme").live, "live"),
      rival: clientOf(engine.fetch, "http://fos", keysOf("rival").sandbox)
    }
  }

  /** Everything a sandbox can hold today: a customer with a virtual account, an open application, documents, a
   * webhook endpoint with a delivery, events, pending timers and an idempotency record. */
  const populate = async (client: Client, webhookHost: string) => {
    const endpoint = await client.call("POST", "/v2/webhooks/endpoints", { url: `https://${webhookHost}/fos` })
    expect(endpoint.status, endpoint.text).toBe(201)
    const docs = await deuDocuments(client)
    const submitted = await client.call("POST", "/v2/onboarding", deuSubmission(docs), { "idempotency-key": "populate-onboarding" })
    expect(submitted.status, submitted.text).toBe(201)
    const decided = await client.call("POST", `/v2/simulate/applications/${submitted.json.applicationId}/decision`, { outcome: "approved" })
    expect(decided.status, decided.text).toBe(200)
    const customerId = decided.json.customerId as string
    const feature = await client.call("POST", `/v2/customers/${customerId}/features`, { type: "virtual_account", asset: { code: "EUR" } }, idem())
    await client.call("POST", `/v2/simulate/applications/${feature.json.applicationId}/decision`, { outcome: "approved" })
    const accounts = await client.call("GET", `/v2/customers/${customerId}/virtual-accounts`)
    expect(accounts.json.data).toHaveLength(1)
    // Money: the account activates, takes one settled deposit and one still open (its settlement timer pending).
    await engine.clock.advance("30 seconds")
    const accountId = accounts.json.data[0].id as string
    const deposit = (amount: string) =>
      client.call("POST", "/v2/simulate/deposits", { destination: { type: "virtual_account", virtualAccountId: accountId }, assetAmount: { code: "EUR", amount } })
    const settled = await deposit("100.00")
    expect(settled.status, settled.text).toBe(201)
    await client.call("POST", `/v2/simulate/transactions/${settled.json.id}/settle`)
    expect((await deposit("5.00")).status).toBe(201)
    // A second onboarding left open: its review timer is pending.
    const open = await client.call("POST", "/v2/onboarding", deuSubmission(await deuDocuments(client), { clientReferenceId: "second" }), idem())
    expect(open.status, open.text).toBe(201)
    return { customerId, documentId: docs.register, accountId, endpointId: endpoint.json.id as string, transactionId: settled.json.id as string }
  }

  const eventsOf = async (organizationId: string, environment: "sandbox" | "live") =>
    ((await engine.run(Outbox.readEvents(undefined, 10_000))) as ReadonlyArray<Outbox.OutboxEvent>).filter((e) =>
      e.organizationId === organizationId && e.environment === environment)

  const timersOf = (scope: string) =>
    engine.run(Effect.flatMap(Store.Store, (store) =>
      store.page(Timers.Timers, { order: "byScope", partition: scope, descending: false, backward: false, from: undefined, limit: 10_000 })))

  it("empties the caller's sandbox and keeps its organization, users and keys", async () => {
    const { acme } = await start()
    const made = await populate(acme, "hooks.acme.test")
    expect((await eventsOf("org_acme", "sandbox")).length).toBeGreaterThan(0)
    expect((await timersOf(Tenancy.scopeOf("org_acme", "sandbox"))).length).toBeGreaterThan(0)

    const reset = await acme.call("POST", "/v2/simulate/reset")
    expect(reset.status, reset.text).toBe(200)
    expect(reset.json.organizationId).toBe("org_acme")
    expect(reset.json.environment).toBe("sandbox")
    expect(reset.json.removed).toMatchObject({ customers: 1, applications: 3, documents: 6, virtualAccounts: 1, webhookEndpoints: 1 })
    for (const n of ["webhookDeliveries", "events", "timers", "idempotencyRecords"]) expect(reset.json.removed[n], n).toBeGreaterThan(0)
    // Two deposits, and the ledger transfers behind them: two pending credits and the post of the settled one.
    expect(reset.json.removed).toMatchObject({ transactions: 2, ledgerTransfers: 3 })

    for (const path of ["/v2/customers", "/v2/applications", "/v2/webhooks/endpoints", "/v2/webhooks/deliveries", "/v2/transactions"]) {
      const list = await acme.call("GET", path)
      expect(list.status, path).toBe(200)
      expect(list.json.data, path).toEqual([])
      expect(list.json.meta.total, path).toBe(0)
    }
    expectProblem(await acme.call("GET", `/v2/customers/${made.customerId}`), {
      type: "CUSTOMER_NOT_FOUND",
      status: 404,
      instance: `/sandbox/v2/customers/${made.customerId}`
    })
    expect((await acme.call("GET", `/v2/documents/${made.documentId}`)).status).toBe(404)
    expect((await acme.call("GET", `/v2/virtual-accounts/${made.accountId}`)).status).toBe(404)
    expect((await acme.call("GET", `/v2/webhooks/endpoints/${made.endpointId}`)).status).toBe(404)
    expect((await acme.call("GET", `/v2/transactions/${made.transactionId}`)).status).toBe(404)
    expect(await eventsOf("org_acme", "sandbox")).toEqual([])
    expect(await timersOf(Tenancy.scopeOf("org_acme", "sandbox"))).toEqual([])

    // The key still works, and nothing is left to fire: the pending review and activation went with the reset.
    const me = await acme.call("GET", "/v2/portal/users/me")
    expect(me.status).toBe(200)
    expect(me.json.organization.id).toBe("org_acme")
    const idle = await engine.clock.runUntilIdle()
    expect(idle.steps).toBe(0)
    expect(idle.stoppedBy).toBe("idle")

    // Names and keys the old data held are free: the same clientReferenceId and the same Idempotency-Key with
    // another body run anew instead of conflicting or replaying.
    const again = await acme.call("POST", "/v2/onboarding", deuSubmission(await deuDocuments(acme), { clientReferenceId: "acme-gmbh" }), {
      "idempotency-key": "populate-onboarding"
    })
    expect(again.status, again.text).toBe(201)
    expect(again.headers.get("idempotency-replayed")).toBeNull()
  })

  it("removes the sandbox's money too: wallets and funding addresses, quotes, orders, payouts, recipients, registered addresses, RFIs; every old id is 404", async () => {
    const { acme } = await start()
    const made = await populate(acme, "hooks.acme.test")
    const applied = await acme.call("POST", `/v2/customers/${made.customerId}/features`, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } }, idem())
    await acme.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
    const wallet = await acme.call("POST", `/v2/customers/${made.customerId}/wallets`, { chain: "base" }, idem())
    expect(wallet.status, wallet.text).toBe(201)
    const funded = await acme.call("POST", "/v2/simulate/deposits", { destination: { type: "wallet", walletId: wallet.json.id }, assetAmount: { code: "USDC", amount: "500", chain: "base" } })
    await acme.call("POST", `/v2/simulate/transactions/${funded.json.id}/settle`)
    const quote = await acme.call("POST", "/v2/quotes", { source: { asset: "USDC", chain: "base" }, target: { asset: "ETH", chain: "base" }, amount: "10", lockSide: "source" })
    expect(quote.status, quote.text).toBe(201)
    // A deposit-funded order (crypto to crypto: the clock starts on a Sunday, when the fiat market is closed): its
    // funding address is a wallet of no customer's list.
    const order = await acme.call("POST", "/v2/orders", {
      sourceAsset: { asset: "USDC", chain: "base" },
      destination: { type: "wallet", walletId: wallet.json.id, asset: "ETH" },
      amount: "100",
      lockSide: "source"
    }, idem())
    expect(order.status, order.text).toBe(201)
    const fundingAddress = order.json.depositInstructions.address as string
    const address = await acme.call("POST", `/v2/customers/${made.customerId}/registered-addresses`, { chain: "base", address: "0x52908400098527886e0f7030069857d2e4169ee7" }, idem())
    expect(address.status, address.text).toBe(201)
    const recipient = await acme.call("POST", `/v2/customers/${made.customerId}/whitelist-recipients`, {
      rail: "sepa",
      name: "Max Mustermann",
      address: { line1: "Unter den Linden 1", city: "Berlin", postalCode: "10117", country: "DEU" },
      iban: "DE89 3704 0044 0532 0130 00",
      bic: "COBADEFFXXX"
    }, idem())
    expect(recipient.status, recipient.text).toBe(201)
    const payout = await acme.call("POST", "/v2/payouts", {
      source: { type: "wallet", walletId: wallet.json.id },
      destination: { type: "registered_address", registeredAddressId: address.json.id },
      asset: "USDC",
      amount: "100",
      purpose: "treasury_transfer"
    }, idem())
    expect(payout.status, payout.text).toBe(201)
    const rfi = await acme.call("POST", `/v2/simulate/transactions/${payout.json.id}/rfi`, { questions: [{ text: "What is the payment for?" }], deadlineSeconds: 86_400 })
    expect(rfi.status, rfi.text).toBe(201)

    const reset = await acme.call("POST", "/v2/simulate/reset")
    expect(reset.status, reset.text).toBe(200)
    expect(reset.json.removed).toMatchObject({ wallets: 2, orders: 1, quoteOptions: 2, recipients: 2, rfis: 1, claims: 0, walletSigners: 0, walletCeremonies: 0, signingRequests: 0 })

    const gone = [
      `/v2/wallets/${wallet.json.id}`,
      `/v2/orders/${order.json.id}`,
      `/v2/payouts/${payout.json.id}`,
      `/v2/transactions/${payout.json.id}`,
      `/v2/registered-addresses/${address.json.id}`,
      `/v2/whitelist-recipients/${recipient.json.id}`,
      `/v2/rfis/${rfi.json.id}`,
      `/v2/customers/${made.customerId}/wallets`
    ]
    for (const path of gone) expect((await acme.call("GET", path)).status, path).toBe(404)
    for (const path of ["/v2/orders", "/v2/transactions"]) expect((await acme.call("GET", path)).json.data, path).toEqual([])
    // Nothing lands at the old addresses any more.
    const toWallet = await acme.call("POST", "/v2/simulate/deposits", { destination: { type: "wallet", walletId: wallet.json.id }, assetAmount: { code: "USDC", amount: "1", chain: "base" } })
    expect(toWallet.status, toWallet.text).toBe(404)
    const toFunding = await acme.call("POST", "/v2/simulate/deposits", { destination: { type: "deposit_address", address: fundingAddress }, assetAmount: { code: "USDC", amount: "1", chain: "base" } })
    expect(toFunding.status, toFunding.text).toBeGreaterThanOrEqual(400)
    const redeemed = await acme.call("POST", "/v2/orders", {
      source: { type: "wallet", walletId: wallet.json.id },
      destination: { type: "wallet", walletId: wallet.json.id, asset: "ETH" },
      quoteOptionId: quote.json.options[0].id
    }, idem())
    expect(redeemed.status, redeemed.text).toBeGreaterThanOrEqual(400)
  }, 120_000)

  it("removes the attempts of more deliveries than one page of parents holds, and what each attempt sent", async () => {
    const { acme } = await start()
    const { accountId } = await populate(acme, "hooks.acme.test")
    // A reset removes the children of a page of parents (100 deliveries) at once: more than a page makes it remove
    // a full page in the middle of the walk and the rest at its end.
    for (let i = 0; i < 70; i++) {
      const made = await acme.call("POST", "/v2/simulate/deposits", { destination: { type: "virtual_account", virtualAccountId: accountId }, assetAmount: { code: "EUR", amount: "1.00" } })
      expect(made.status, made.text).toBe(201)
    }
    await engine.clock.runUntilIdle()
    const scope = Tenancy.scopeOf("org_acme", "sandbox")
    const inPartition = <Row>(table: Store.Table<Row>, order: string, partition: string) =>
      engine.run(Effect.flatMap(Store.Store, (store) =>
        store.page(table, { order, partition, descending: false, backward: false, from: undefined, limit: 10_000 }))) as Promise<ReadonlyArray<Row>>
    const deliveries = await inPartition(core.Deliveries.WebhookDeliveries, "byScope", scope)
    expect(deliveries.length).toBeGreaterThan(150)
    const childrenOf = async (ids: ReadonlyArray<string>) => {
      let attempts = 0
      let requests = 0
      for (const id of ids) {
        attempts += (await inPartition(core.Deliveries.WebhookAttempts, "byDelivery", id)).length
        requests += (await inPartition(core.AttemptRequests.AttemptRequests, "byDelivery", id)).length
      }
      return { attempts, requests }
    }
    const ids = deliveries.map((d) => d.id)
    const before = await childrenOf(ids)
    expect(before.attempts).toBeGreaterThanOrEqual(deliveries.length)
    expect(before.requests).toBe(before.attempts)

    const reset = await acme.call("POST", "/v2/simulate/reset")
    expect(reset.status, reset.text).toBe(200)
    expect(reset.json.removed.webhookDeliveries).toBe(deliveries.length)
    expect(await childrenOf(ids)).toEqual({ attempts: 0, requests: 0 })
  }, 120_000)

  it("knows every table of the engine: each is emptied by a reset or kept on purpose", () => {
    const isTable = (v: unknown): v is { name: string } =>
      typeof v === "object" && v !== null && typeof (v as any).name === "string" && typeof (v as any).key === "function" && typeof (v as any).orders === "object"
    // @fos/core exports a namespace per module: the tables are one level down.
    const declared = new Set((Object.values(core) as Array<object>).flatMap((module) => Object.values(module)).filter(isTable).map((t) => t.name))
    const known = new Set(core.Domains.all.flatMap((d) => [
      ...("tables" in d ? d.tables as ReadonlyArray<core.Domain.SandboxTable> : []).map((t) => t.table.name),
      ...("keptTables" in d ? d.keptTables as ReadonlyArray<core.Store.Table<any>> : []).map((t) => t.name)
    ]))
    expect([...declared].filter((name) => !known.has(name)).sort()).toEqual([])
    expect(declared.size).toBeGreaterThan(20)
  })

  it("touches neither the organization's live data nor another organization's sandbox", async () => {
    const { acme, acmeLive, rival } = await start()
    await populate(rival, "hooks.rival.test")
    const liveEndpoint = await acmeLive.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.acme.test/live" })
    expect(liveEndpoint.status, liveEndpoint.text).toBe(201)
    await acmeLive.call("POST", `/v2/webhooks/endpoints/${liveEndpoint.json.id}/rotate`, undefined, idem())
    const rivalBefore = await Promise.all(["/v2/customers", "/v2/applications", "/v2/webhooks/endpoints", "/v2/webhooks/deliveries"].map((p) => rival.call("GET", p)))
    const rivalEvents = await eventsOf("org_rival", "sandbox")
    const rivalTimers = await timersOf(Tenancy.scopeOf("org_rival", "sandbox"))
    const liveEvents = await eventsOf("org_acme", "live")

    const reset = await acme.call("POST", "/v2/simulate/reset")
    expect(reset.status, reset.text).toBe(200)

    const rivalAfter = await Promise.all(["/v2/customers", "/v2/applications", "/v2/webhooks/endpoints", "/v2/webhooks/deliveries"].map((p) => rival.call("GET", p)))
    expect(rivalAfter.map((r) => r.json)).toEqual(rivalBefore.map((r) => r.json))
    expect(rivalBefore[0]!.json.data).toHaveLength(1)
    expect(await eventsOf("org_rival", "sandbox")).toEqual(rivalEvents)
    expect(await timersOf(Tenancy.scopeOf("org_rival", "sandbox"))).toEqual(rivalTimers)
    expect((await acmeLive.call("GET", "/v2/webhooks/endpoints")).json.data.map((e: any) => e.id)).toEqual([liveEndpoint.json.id])
    expect(await eventsOf("org_acme", "live")).toEqual(liveEvents)
  })

  it("is a simulate endpoint: not served under /live", async () => {
    await start()
    const live = await clientOf(engine.fetch, "http://fos", keysOf("acme").live, "live").call("POST", "/v2/simulate/reset")
    expectProblem(live, { type: "NOT_FOUND", status: 404, instance: "/live/v2/simulate/reset" })
  })
})
