/**
 * Sandbox snapshots (docs/snapshots.md) through the whole pipeline, on the memory store, on PGlite and, when
 * DATABASE_URL is set, on PostgreSQL: a snapshot, then a change of everything (onboarding, wallets, a virtual account,
 * deposits, an order, a payout, webhook endpoints, a clock advance), then a restore: every read and list answers
 * what it answered at the snapshot, the timers, events and ledger are back row for row, and the ledger audits clean.
 * Also: the list, get and delete, the limit per organization, one organization never reaching another's snapshot,
 * no snapshots under /live, the operator surface and the embedded engine's calls.
 */
import { MemoryStore, Outbox, Snapshots, Store, Tenancy, Timers } from "@fos/core"
import { createEngine, type Engine } from "@fos/http"
import { layerPostgresStore } from "@fos/sql"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { freshDatabase } from "../adapters/sql/test/databases.ts"
import { auditLedger, ledgerOf } from "./ledgerAudit.ts"
import { approvedCustomer, type Client, clientOf, idem } from "./onboardingFixtures.ts"
import { expectProblem, keysOf, ok, orgSeed, seedOf, START_MS } from "./support.ts"
import { closedAfterEach, type MadeStore, storeMakers } from "./stores.ts"

const operatorToken = "snapshots-operator-token"

const stores = storeMakers("snapshots")

const acmeScope = Tenancy.scopeOf("org_acme", "sandbox")

describe.each(Object.keys(stores))("sandbox snapshots on %s", (storeName) => {
  const after = closedAfterEach()

  const open = (store: MadeStore["store"], randomSeed?: string) =>
    createEngine({
      store,
      ...(randomSeed === undefined ? {} : { randomSeed }),
      clock: { mode: "virtual", start: START_MS },
      realClock: Timers.makeVirtualClock(START_MS),
      webhookTransport: "memory",
      operatorToken,
      seed: seedOf(orgSeed("acme"), orgSeed("rival")) as never
    }).then(after.engine)

  const start = async (randomSeed?: string) => {
    const engine = await open(await after.store(storeName, "snapshots"), randomSeed)
    return {
      engine,
      acme: clientOf(engine.fetch, "http://fos", keysOf("acme").sandbox),
      rival: clientOf(engine.fetch, "http://fos", keysOf("rival").sandbox)
    }
  }

  const feature = async (client: Client, customerId: string, body: unknown) => {
    const applied = await ok(client.call("POST", `/v2/customers/${customerId}/features`, body, idem()), 201)
    await ok(client.call("POST", `/v2/simulate/applications/${applied.applicationId}/decision`, { outcome: "approved" }))
  }

  /** A world worth saving: a customer with a funded virtual account and wallet, a deposit still open, an endpoint. */
  const buildWorld = async (engine: Engine, client: Client) => {
    const endpoint = await ok(client.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.acme.test/fos" }), 201)
    const customerId = await approvedCustomer(client)
    await feature(client, customerId, { type: "virtual_account", asset: { code: "EUR" } })
    await feature(client, customerId, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } })
    await engine.clock.advance("30 seconds")
    const accountId = (await ok(client.call("GET", `/v2/customers/${customerId}/virtual-accounts`))).data[0].id as string
    const wallet = await ok(client.call("POST", `/v2/customers/${customerId}/wallets`, { chain: "base" }, idem()), 201)
    const euros = await ok(client.call("POST", "/v2/simulate/deposits", { destination: { type: "virtual_account", virtualAccountId: accountId }, assetAmount: { code: "EUR", amount: "100.00" } }), 201)
    await ok(client.call("POST", `/v2/simulate/transactions/${euros.id}/settle`))
    const coins = await ok(client.call("POST", "/v2/simulate/deposits", { destination: { type: "wallet", walletId: wallet.id }, assetAmount: { code: "USDC", amount: "500", chain: "base" } }), 201)
    await ok(client.call("POST", `/v2/simulate/transactions/${coins.id}/settle`))
    // Left open: its settlement timer is pending at the snapshot.
    const open = await ok(client.call("POST", "/v2/simulate/deposits", { destination: { type: "virtual_account", virtualAccountId: accountId }, assetAmount: { code: "EUR", amount: "5.00" } }), 201)
    // At rest: the sends these requests caused run in the background, and one that ends between two reads of the
    // world would read as a change the snapshot made.
    await engine.deliveries.flush()
    return { customerId, accountId, walletId: wallet.id as string, endpointId: endpoint.id as string, openDepositId: open.id as string }
  }

  type World = Awaited<ReturnType<typeof buildWorld>>

  /** Everything after the snapshot: new customers, wallets, money in and out, endpoints, and two days of time. */
  const changeEverything = async (engine: Engine, client: Client, world: World) => {
    const second = await approvedCustomer(client)
    await feature(client, second, { type: "virtual_account", asset: { code: "EUR" } })
    await ok(client.call("POST", `/v2/simulate/transactions/${world.openDepositId}/settle`))
    await ok(client.call("POST", "/v2/simulate/deposits", { destination: { type: "virtual_account", virtualAccountId: world.accountId }, assetAmount: { code: "EUR", amount: "7.00" } }), 201)
    await ok(client.call("POST", "/v2/orders", {
      sourceAsset: { asset: "USDC", chain: "base" },
      destination: { type: "wallet", walletId: world.walletId, asset: "ETH" },
      amount: "100",
      lockSide: "source"
    }, idem()), 201)
    const address = await ok(client.call("POST", `/v2/customers/${world.customerId}/registered-addresses`, { chain: "base", address: "0x52908400098527886e0f7030069857d2e4169ee7" }, idem()), 201)
    await ok(client.call("POST", "/v2/payouts", {
      source: { type: "wallet", walletId: world.walletId },
      destination: { type: "registered_address", registeredAddressId: address.id },
      asset: "USDC",
      amount: "100",
      purpose: "treasury_transfer"
    }, idem()), 201)
    await ok(client.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.acme.test/second" }), 201)
    expect((await client.call("DELETE", `/v2/webhooks/endpoints/${world.endpointId}`)).status).toBe(204)
    await engine.clock.advance("2 days")
  }

  /** Every read of the sandbox a client can make: each list, and each listed resource by id, with their bodies. */
  const readAll = async (client: Client) => {
    const seen: Record<string, { status: number; body: unknown }> = {}
    const read = async (path: string) => {
      const r = await client.call("GET", path)
      seen[path] = { status: r.status, body: r.json }
      return r.json
    }
    const ids = async (path: string, key = "id") => {
      const list = await read(path)
      expect(seen[path]!.status, path).toBe(200)
      return (list.data as Array<any>).map((item) => item[key] as string)
    }
    for (const id of await ids("/v2/customers?limit=100")) {
      await read(`/v2/customers/${id}`)
      for (const wallet of await ids(`/v2/customers/${id}/wallets?limit=100`)) await read(`/v2/wallets/${wallet}`)
      for (const account of await ids(`/v2/customers/${id}/virtual-accounts?limit=100`)) await read(`/v2/virtual-accounts/${account}`)
      await read(`/v2/customers/${id}/registered-addresses?limit=100`)
      await read(`/v2/customers/${id}/whitelist-recipients?limit=100`)
    }
    for (const id of await ids("/v2/applications?limit=100", "applicationId")) await read(`/v2/applications/${id}`)
    for (const id of await ids("/v2/transactions?limit=100")) await read(`/v2/transactions/${id}`)
    for (const id of await ids("/v2/orders?limit=100")) await read(`/v2/orders/${id}`)
    for (const id of await ids("/v2/webhooks/endpoints?limit=100")) await read(`/v2/webhooks/endpoints/${id}`)
    for (const id of await ids("/v2/webhooks/deliveries?limit=100")) await read(`/v2/webhooks/deliveries/${id}`)
    return seen
  }

  const eventsOf = async (engine: Engine) =>
    ((await engine.run(Outbox.readEvents(undefined, 100_000))) as ReadonlyArray<Outbox.OutboxEvent>).filter((e) =>
      e.organizationId === "org_acme" && e.environment === "sandbox")

  const timersOf = (engine: Engine) =>
    engine.run(Effect.flatMap(Store.Store, (store) =>
      store.page(Timers.Timers, { order: "byScope", partition: acmeScope, descending: false, backward: false, from: undefined, limit: 100_000 })))

  /** The sandbox as the store holds it, beside what its reads answer. */
  const stateOf = async (engine: Engine, client: Client) => ({
    reads: await readAll(client),
    events: await eventsOf(engine),
    timers: await timersOf(engine),
    ledger: await ledgerOf(engine, acmeScope)
  })

  it("restores a snapshot taken before snapshots were copies (a row per saved row), once made into a copy", async () => {
    const { engine, acme } = await start()
    const world = await buildWorld(engine, acme)
    const before = await stateOf(engine, acme)
    const snapshot = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    // The snapshot as an earlier fos stored it: its rows as `snapshot_rows`, no copy, no `copied` mark.
    await engine.run(Effect.flatMap(Store.Store, (store) =>
      store.transaction(Effect.gen(function*() {
        const rows = yield* store.copies.rows(snapshot.id)
        yield* Effect.orDie(store.insertMany(Snapshots.SnapshotRows, rows.map((r, n) => ({ id: `${snapshot.id}/${n}`, snapshotId: snapshot.id, n, tbl: r.table, row: r.row }))))
        yield* store.copies.remove(snapshot.id)
        const { copied: _, ...stored } = (yield* store.get(Snapshots.Snapshots, snapshot.id))!
        yield* Effect.orDie(store.update(Snapshots.Snapshots, stored))
      }))))
    await changeEverything(engine, acme, world)
    expect(await ok(acme.call("POST", `/v2/simulate/snapshots/${snapshot.id}/restore`))).toEqual(snapshot)
    const after = await stateOf(engine, acme)
    expect(after.reads).toEqual(before.reads)
    expect(after.timers).toEqual(before.timers)
    expect(after.ledger).toEqual(before.ledger)
    // Made into a copy once: its old rows are gone, and it restores again as any other.
    const [legacyRows, copied] = await engine.run(Effect.flatMap(Store.Store, (store) =>
      Effect.all([store.count(Snapshots.SnapshotRows, "bySnapshot", snapshot.id), store.get(Snapshots.Snapshots, snapshot.id)])))
    expect(legacyRows).toBe(0)
    expect(copied?.copied).toBe(true)
    await ok(acme.call("POST", "/v2/simulate/reset"))
    await ok(acme.call("POST", `/v2/simulate/snapshots/${snapshot.id}/restore`))
    expect((await stateOf(engine, acme)).reads).toEqual(before.reads)
  })

  it("restores the whole sandbox after a change of everything: every read, timer, event and ledger row as it was", async () => {
    const { engine, acme } = await start()
    const world = await buildWorld(engine, acme)
    expect(await auditLedger(engine, acmeScope)).toEqual([])
    const before = await stateOf(engine, acme)
    expect(before.timers.length).toBeGreaterThan(0)
    expect(before.ledger.transfers.length).toBeGreaterThan(0)

    const snapshot = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    expect(snapshot).toMatchObject({ id: expect.stringMatching(/^snp_[0-9a-z]{24}$/), organizationId: "org_acme", environment: "sandbox" })
    expect(snapshot.contents).toMatchObject({ customers: 1, virtualAccounts: 1, wallets: 1, webhookEndpoints: 1, transactions: 3 })
    expect(snapshot.contents.timers).toBe(before.timers.length)
    expect(snapshot.contents.ledgerTransfers).toBe(before.ledger.transfers.length)
    expect(snapshot.rows).toBeGreaterThan(0)
    // Taking a snapshot changes nothing.
    expect(await stateOf(engine, acme)).toEqual(before)

    await changeEverything(engine, acme, world)
    const changed = await stateOf(engine, acme)
    expect(changed.reads).not.toEqual(before.reads)
    expect(changed.ledger).not.toEqual(before.ledger)
    expect(changed.timers).not.toEqual(before.timers)

    const restored = await ok(acme.call("POST", `/v2/simulate/snapshots/${snapshot.id}/restore`))
    expect(restored).toEqual(snapshot)
    const after = await stateOf(engine, acme)
    expect(after.reads).toEqual(before.reads)
    expect(after.timers).toEqual(before.timers)
    expect(after.events).toEqual(before.events)
    expect(after.ledger).toEqual(before.ledger)
    expect(await auditLedger(engine, acmeScope)).toEqual([])

    // The restored world goes on: its open deposit settles on its timer, and money moves again.
    await engine.clock.runUntilIdle()
    expect((await ok(acme.call("GET", `/v2/transactions/${world.openDepositId}`))).status).toBe("completed")
    await ok(acme.call("POST", "/v2/simulate/deposits", { destination: { type: "virtual_account", virtualAccountId: world.accountId }, assetAmount: { code: "EUR", amount: "1.00" } }), 201)
    expect(await auditLedger(engine, acmeScope)).toEqual([])
    // And it can be restored again: a snapshot stays until deleted.
    await ok(acme.call("POST", `/v2/simulate/snapshots/${snapshot.id}/restore`))
    expect((await stateOf(engine, acme)).reads).toEqual(before.reads)
  }, 240_000)

  it("restores after a reset, and leaves other organizations alone", async () => {
    const { engine, acme, rival } = await start()
    await buildWorld(engine, acme)
    const rivalEndpoint = await ok(rival.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.rival.test/fos" }), 201)
    const before = await readAll(acme)
    const snapshot = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    await ok(acme.call("POST", "/v2/simulate/reset"))
    expect((await acme.call("GET", "/v2/customers")).json.data).toEqual([])
    // A reset keeps the snapshots.
    expect((await ok(acme.call("GET", "/v2/simulate/snapshots"))).data.map((s: any) => s.id)).toEqual([snapshot.id])
    const rivalBefore = await readAll(rival)
    await ok(acme.call("POST", `/v2/simulate/snapshots/${snapshot.id}/restore`))
    expect(await readAll(acme)).toEqual(before)
    expect(await readAll(rival)).toEqual(rivalBefore)
    expect((await ok(rival.call("GET", `/v2/webhooks/endpoints/${rivalEndpoint.id}`))).id).toBe(rivalEndpoint.id)
    expect(await auditLedger(engine, acmeScope)).toEqual([])
  }, 240_000)

  it("puts the organization's own clock back with its timers: nothing is overdue, and another organization's clock stays", async () => {
    const { engine, acme, rival } = await start()
    await buildWorld(engine, acme)
    await ok(acme.call("POST", "/v2/simulate/clock/advance", { seconds: 60 }))
    await ok(rival.call("POST", "/v2/simulate/clock/advance", { seconds: 3600 }))
    const savedAt = (await ok(acme.call("GET", "/v2/simulate/clock"))).now
    const pending = (await ok(acme.call("GET", "/v2/simulate/timers?limit=100"))).data
    const snapshot = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    expect(snapshot.createdAt).toBe(savedAt)
    const moved = await ok(acme.call("POST", "/v2/simulate/clock/advance", { seconds: 3 * 86_400 }))
    expect(moved.timersFired.total).toBeGreaterThan(0)
    const rivalAt = (await ok(rival.call("GET", "/v2/simulate/clock"))).now
    await ok(acme.call("POST", `/v2/simulate/snapshots/${snapshot.id}/restore`))
    // The sandbox's time goes back with the rest: its timers are due when they were, not overdue.
    expect((await ok(acme.call("GET", "/v2/simulate/clock"))).now).toBe(savedAt)
    expect((await ok(acme.call("GET", "/v2/simulate/timers?limit=100"))).data).toEqual(pending)
    expect((await ok(acme.call("POST", "/v2/simulate/clock/advance", { seconds: 0 }))).timersFired.total).toBe(0)
    expect((await ok(rival.call("GET", "/v2/simulate/clock"))).now).toBe(rivalAt)
  }, 240_000)

  it("restores idempotency records with the rest: a key used before the snapshot replays, one used after runs anew", async () => {
    const { acme } = await start()
    const endpoint = (url: string, key: string) => acme.call("POST", "/v2/webhooks/endpoints", { url }, { "idempotency-key": key })
    const first = await endpoint("https://hooks.acme.test/before", "before-snapshot")
    expect(first.status, first.text).toBe(201)
    const snapshot = await ok(acme.call("POST", "/v2/simulate/snapshots", undefined, { "idempotency-key": "the-snapshot" }), 201)
    const later = await endpoint("https://hooks.acme.test/after", "after-snapshot")
    expect(later.status, later.text).toBe(201)
    const restored = await acme.call("POST", `/v2/simulate/snapshots/${snapshot.id}/restore`, undefined, { "idempotency-key": "the-restore" })
    expect(restored.status, restored.text).toBe(200)

    const replayed = await endpoint("https://hooks.acme.test/before", "before-snapshot")
    expect(replayed.headers.get("idempotency-replayed")).toBe("true")
    expect(replayed.json).toEqual(first.json)
    const anew = await endpoint("https://hooks.acme.test/after", "after-snapshot")
    expect(anew.status, anew.text).toBe(201)
    expect(anew.headers.get("idempotency-replayed")).toBeNull()
    expect(anew.json.id).not.toBe(later.json.id)
    // The restore's own key replays its answer and restores nothing again: the endpoint made since stays.
    const again = await acme.call("POST", `/v2/simulate/snapshots/${snapshot.id}/restore`, undefined, { "idempotency-key": "the-restore" })
    expect(again.headers.get("idempotency-replayed")).toBe("true")
    expect((await ok(acme.call("GET", "/v2/webhooks/endpoints"))).data.map((e: any) => e.id).sort()).toEqual([first.json.id, anew.json.id].sort())
    // The snapshot's own key was still running when it was taken, so it is not in it: a retry takes a new snapshot.
    const retried = await ok(acme.call("POST", "/v2/simulate/snapshots", undefined, { "idempotency-key": "the-snapshot" }), 201)
    expect(retried.id).not.toBe(snapshot.id)
  }, 120_000)

  it("rewinds a seeded engine's values: what is made again after a restore has the ids and secrets it had the first time", async () => {
    const { acme } = await start("snapshots")
    const snapshot = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    const before = await ok(acme.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.acme.test/one" }, idem()), 201)
    await ok(acme.call("POST", `/v2/simulate/snapshots/${snapshot.id}/restore`))
    const after = await ok(acme.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.acme.test/one" }, idem()), 201)
    expect(after.id).toBe(before.id)
    expect(after.secret).toBe(before.secret)
  }, 120_000)

  it("lists, reads and deletes snapshots, newest first, paged like every list", async () => {
    const { acme } = await start()
    const first = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    const second = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    const third = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    const page = await ok(acme.call("GET", "/v2/simulate/snapshots?limit=2"))
    expect(page.data.map((s: any) => s.id)).toEqual([third.id, second.id])
    expect(page.meta).toMatchObject({ mode: "cursor", total: 3, previousCursor: null })
    const rest = await ok(acme.call("GET", `/v2/simulate/snapshots?limit=2&cursor=${page.meta.nextCursor}`))
    expect(rest.data).toEqual([first])
    expect(await ok(acme.call("GET", `/v2/simulate/snapshots/${second.id}`))).toEqual(second)
    // An empty sandbox is a snapshot of nothing.
    expect(first.rows).toBe(0)

    expect((await acme.call("DELETE", `/v2/simulate/snapshots/${second.id}`)).status).toBe(204)
    for (const [method, path] of [["GET", ""], ["POST", "/restore"], ["DELETE", ""]] as const) {
      const instance = `/v2/simulate/snapshots/${second.id}${path}`
      expectProblem(await acme.call(method, instance), { type: "NOT_FOUND", status: 404, instance: `/sandbox${instance}` })
    }
    expect((await ok(acme.call("GET", "/v2/simulate/snapshots"))).data.map((s: any) => s.id)).toEqual([third.id, first.id])
    expectProblem(await acme.call("GET", "/v2/simulate/snapshots/wlt_abc"), { type: "INVALID_OID_FORMAT", status: 400, instance: "/sandbox/v2/simulate/snapshots/wlt_abc" })
  }, 120_000)

  it(`keeps at most ${Snapshots.maxSnapshotsPerOrganization} snapshots per organization: past it a 409 that changes nothing`, async () => {
    const { acme, rival } = await start()
    const taken: Array<string> = []
    for (let i = 0; i < Snapshots.maxSnapshotsPerOrganization; i++) taken.push((await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)).id)
    const refused = expectProblem(await acme.call("POST", "/v2/simulate/snapshots"), { type: "CONFLICT", status: 409, instance: "/sandbox/v2/simulate/snapshots" })
    expect(refused.detail).toContain(`${Snapshots.maxSnapshotsPerOrganization} snapshots`)
    expect((await ok(acme.call("GET", "/v2/simulate/snapshots?limit=100"))).meta.total).toBe(Snapshots.maxSnapshotsPerOrganization)
    // The limit is each organization's own; a deletion makes room.
    await ok(rival.call("POST", "/v2/simulate/snapshots"), 201)
    expect((await acme.call("DELETE", `/v2/simulate/snapshots/${taken[0]}`)).status).toBe(204)
    await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
  }, 120_000)

  it("is each organization's own: another organization's snapshot is 404 to read, restore or delete", async () => {
    const { engine, acme, rival } = await start()
    await buildWorld(engine, acme)
    const snapshot = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    for (const [method, path] of [["GET", ""], ["POST", "/restore"], ["DELETE", ""]] as const) {
      const instance = `/v2/simulate/snapshots/${snapshot.id}${path}`
      expectProblem(await rival.call(method, instance), { type: "NOT_FOUND", status: 404, instance: `/sandbox${instance}` })
    }
    expect((await ok(rival.call("GET", "/v2/simulate/snapshots"))).data).toEqual([])
    expect((await rival.call("GET", "/v2/customers")).json.data).toEqual([])
    expect((await ok(acme.call("GET", `/v2/simulate/snapshots/${snapshot.id}`))).id).toBe(snapshot.id)
  }, 120_000)

  it("is a simulate endpoint: not served under /live", async () => {
    const { engine } = await start()
    const live = clientOf(engine.fetch, "http://fos", keysOf("acme").live, "live")
    expectProblem(await live.call("POST", "/v2/simulate/snapshots"), { type: "NOT_FOUND", status: 404, instance: "/live/v2/simulate/snapshots" })
    expectProblem(await live.call("GET", "/v2/simulate/snapshots"), { type: "NOT_FOUND", status: 404, instance: "/live/v2/simulate/snapshots" })
  })

  it("is on the operator surface (fos snapshots) and the embedded engine (engine.snapshot, engine.restore)", async () => {
    const { engine, acme } = await start()
    const operator = async (method: string, path: string, status = 200) => {
      const r = await engine.fetch(new Request(`http://fos/operator${path}`, { method, headers: { authorization: `Bearer ${operatorToken}` } }))
      const text = await r.text()
      expect(r.status, text).toBe(status)
      return JSON.parse(text)
    }
    const world = await buildWorld(engine, acme)
    const before = await readAll(acme)
    const byOperator = await operator("POST", "/organizations/org_acme/snapshots", 201)
    expect(byOperator.organizationId).toBe("org_acme")
    // Embedded: the engine holds two organizations, so the call names one.
    await expect(engine.snapshot()).rejects.toThrow(/organizationId/)
    const embedded = await engine.snapshot({ organizationId: "org_acme" })
    expect((await engine.snapshots({ organizationId: "org_acme" })).map((s) => s.id)).toEqual([byOperator.id, embedded.id])
    expect((await operator("GET", "/organizations/org_acme/snapshots")).data.map((s: any) => s.id)).toEqual([byOperator.id, embedded.id])

    await changeEverything(engine, acme, world)
    await engine.restore(embedded.id)
    expect(await readAll(acme)).toEqual(before)
    await acme.call("POST", "/v2/simulate/reset")
    expect(await operator("POST", `/snapshots/${byOperator.id}/restore`)).toEqual(byOperator)
    expect(await readAll(acme)).toEqual(before)

    expect(await operator("DELETE", `/snapshots/${byOperator.id}`)).toEqual({ id: byOperator.id, deleted: true })
    await engine.deleteSnapshot(embedded.id)
    expect(await engine.snapshots({ organizationId: "org_acme" })).toEqual([])
    await operator("POST", `/snapshots/${byOperator.id}/restore`, 404)
  }, 240_000)

  if (storeName === "memory") {
    it("leaves out the idempotency claims of requests still running: another process retrying the snapshot's key is not refused", async () => {
      const shared = Layer.succeed(Store.Store, MemoryStore.make())
      const one = await open(shared)
      const two = await open(shared)
      const acmeOne = clientOf(one.fetch, "http://fos", keysOf("acme").sandbox)
      const acmeTwo = clientOf(two.fetch, "http://fos", keysOf("acme").sandbox)
      const snapshot = await ok(acmeOne.call("POST", "/v2/simulate/snapshots", undefined, { "idempotency-key": "shared-snapshot" }), 201)
      await ok(acmeOne.call("POST", `/v2/simulate/snapshots/${snapshot.id}/restore`))
      // The snapshot's key was claimed while it ran; restored, the claim would be another engine's running request.
      const retried = await acmeTwo.call("POST", "/v2/simulate/snapshots", undefined, { "idempotency-key": "shared-snapshot" })
      expect(retried.status, retried.text).toBe(201)
      expect(retried.json.id).not.toBe(snapshot.id)
    })
  }

  if (storeName === "PostgreSQL") {
    it("a restore made through one process is what another process on the same database serves next", async () => {
      const database = await freshDatabase("snapshots_two")
      after.cleanup(database.drop)
      const one = await open(layerPostgresStore(database.url))
      const two = await open(layerPostgresStore(database.url))
      const acmeOne = clientOf(one.fetch, "http://fos", keysOf("acme").sandbox)
      const acmeTwo = clientOf(two.fetch, "http://fos", keysOf("acme").sandbox)
      const world = await buildWorld(one, acmeOne)
      const before = await readAll(acmeTwo)
      const snapshot = await ok(acmeOne.call("POST", "/v2/simulate/snapshots"), 201)
      await changeEverything(one, acmeOne, world)
      expect(await readAll(acmeTwo)).not.toEqual(before)
      await ok(acmeTwo.call("POST", `/v2/simulate/snapshots/${snapshot.id}/restore`))
      expect(await readAll(acmeOne)).toEqual(before)
      expect(await readAll(acmeTwo)).toEqual(before)
      expect(await auditLedger(one, acmeScope)).toEqual([])
    }, 240_000)
  }
})
