/**
 * A clock per organization (docs/clock.md): two organizations on one server, each with an order waiting on its lock,
 * an ACH payout on its way and a webhook delivery retrying; advancing one organization's clock moves its world and
 * leaves the other's untouched, on the memory store and on PGlite. Also: the clock is kept in the store (a restart
 * resumes it), one advance of a clock at a time, an advance runs to its end when its client goes away, and what an
 * advance answers.
 */
import { rmSync } from "node:fs"
import { Store, Tenancy, Timers } from "@fos/core"
import { layerPgliteStore } from "@fos/sql"
import { createEngine, type CreateEngineOptions, type Engine } from "@fos/http"
import { Deferred, Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { approvedCustomer, type Client, clientOf, idem } from "./onboardingFixtures.ts"
import { expectCatalogEvents, expectProblem, keysOf, orgSeed, outboxEvents, seedOf } from "./support.ts"
import { freshPgliteDirectory } from "../adapters/sql/test/pgliteDirectory.ts"

/** Monday 09:00 UTC: markets open, a business day for ACH. */
const MONDAY = Date.parse("2026-03-02T09:00:00.000Z")
const DAY = 24 * 3600 * 1000
const iso = (ms: number) => new Date(ms).toISOString()
const seed = seedOf(orgSeed("acme"), orgSeed("rival"))

let engine: Engine | undefined
const dirs: Array<string> = []
afterEach(async () => {
  if (engine !== undefined) await expectCatalogEvents(engine)
  await engine?.close()
  engine = undefined
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const start = async (options: Partial<CreateEngineOptions> = {}) => {
  engine = await createEngine({
    clock: { mode: "virtual", start: MONDAY },
    realClock: Timers.makeVirtualClock(MONDAY),
    webhookTransport: "memory",
    seed: seed as never,
    ...options
  })
  return {
    engine,
    acme: clientOf(engine.fetch, "http://fos", keysOf("acme").sandbox),
    rival: clientOf(engine.fetch, "http://fos", keysOf("rival").sandbox)
  }
}

const pgliteDir = async () => {
  const dir = await freshPgliteDirectory("clock")
  dirs.push(dir)
  return dir
}

const advance = (client: Client, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  client.call("POST", "/v2/simulate/clock/advance", body, headers)

const clockOf = async (client: Client) => Date.parse((await client.call("GET", "/v2/simulate/clock")).json.now)

/** The timers pending in one organization's sandbox: kind and due time, in due order. */
const timersOf = (e: Engine, organizationId: string) =>
  e.run(Effect.gen(function*() {
    const store = yield* Store.Store
    const rows = yield* store.page(Timers.Timers, { order: "byScope", partition: Tenancy.scopeOf(organizationId, "sandbox"), descending: false, backward: false, from: undefined, limit: 1000 })
    return rows.map((t) => ({ id: t.id, kind: t.kind, dueAtMs: t.dueAtMs }))
  }))

/**
 * One organization's world with something on the clock of each kind: an order waiting on its 15-minute lock, an ACH
 * payout between compliance and settlement, and a webhook delivery retrying against a receiver that is down.
 */
const buildWorld = async (client: Client, name: string) => {
  const url = `https://hooks.${name}.test/fos`
  expect((await client.call("POST", "/v2/webhooks/endpoints", { url }, idem())).status).toBe(201)
  const customerId = await approvedCustomer(client)
  const applied = await client.call("POST", `/v2/customers/${customerId}/features`, { type: "virtual_account", asset: { code: "USD" } }, idem())
  expect(applied.status, applied.text).toBe(201)
  await client.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
  // The organization's own clock activates its account.
  expect((await advance(client, { seconds: 30 })).status).toBe(200)
  const accountId = (await client.call("GET", `/v2/customers/${customerId}/virtual-accounts`)).json.data[0].id as string
  const deposited = await client.call("POST", "/v2/simulate/deposits", {
    destination: { type: "virtual_account", virtualAccountId: accountId },
    assetAmount: { code: "USD", amount: "1000.00" },
    rail: "rtp"
  })
  expect(deposited.status, deposited.text).toBe(201)
  await client.call("POST", `/v2/simulate/transactions/${deposited.json.id}/settle`)
  const walletApplied = await client.call("POST", `/v2/customers/${customerId}/features`, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } }, idem())
  await client.call("POST", `/v2/simulate/applications/${walletApplied.json.applicationId}/decision`, { outcome: "approved" })
  const wallet = await client.call("POST", `/v2/customers/${customerId}/wallets`, { chain: "base" }, idem())
  expect(wallet.status, wallet.text).toBe(201)
  const order = await client.call("POST", "/v2/orders", {
    source: { type: "virtual_account", virtualAccountId: accountId },
    destination: { type: "wallet", walletId: wallet.json.id, asset: "USDC" },
    amount: "5000",
    lockSide: "source",
    autoExecute: true
  }, idem())
  expect(order.status, order.text).toBe(201)
  const recipient = await client.call("POST", `/v2/customers/${customerId}/whitelist-recipients`, {
    rail: "ach",
    name: "Ada Lovelace",
    address: { line1: "1 Main St", city: "New York", state: "NY", postalCode: "10001", country: "USA" },
    routingNumber: "021000021",
    accountNumber: "123456789"
  }, idem())
  expect(recipient.status, recipient.text).toBe(201)
  const payout = await client.call("POST", "/v2/payouts", {
    source: { type: "virtual_account", virtualAccountId: accountId },
    destination: { type: "external_bank", whitelistRecipientId: recipient.json.id },
    amount: "250.00",
    purpose: "supplier_payment"
  }, idem())
  expect(payout.status, payout.text).toBe(201)
  return { url, orderId: order.json.id as string, payoutId: payout.json.id as string }
}

type World = Awaited<ReturnType<typeof buildWorld>>

/** Everything of one organization's sandbox an advance could move: its clock, order, payout, deliveries and timers. */
const stateOf = async (e: Engine, client: Client, organizationId: string, world: World) => ({
  clock: (await client.call("GET", "/v2/simulate/clock")).json,
  order: (await client.call("GET", `/v2/orders/${world.orderId}`)).json,
  payout: (await client.call("GET", `/v2/payouts/${world.payoutId}`)).json,
  deliveries: (await client.call("GET", "/v2/webhooks/deliveries?limit=100")).json,
  timers: await timersOf(e, organizationId),
  sent: e.deliveries.list().filter((d) => d.url === world.url).map((d) => [d.deliveryId, d.attempt, d.sentAt])
})

const twoOrganizations = async (options: Partial<CreateEngineOptions> = {}) => {
  const { engine: e, acme, rival } = await start(options)
  e.deliveries.answerWith(503)
  const acmeWorld = await buildWorld(acme, "acme")
  const rivalWorld = await buildWorld(rival, "rival")
  // Sends run in the background: what the worlds' writes sent is recorded before the states are read.
  await e.deliveries.flush()
  const rivalBefore = await stateOf(e, rival, "org_rival", rivalWorld)
  const acmeBefore = await stateOf(e, acme, "org_acme", acmeWorld)
  expect(acmeBefore.order.status).toBe("pending")
  expect(acmeBefore.payout.status).toBe("pending")
  expect(acmeBefore.timers.length).toBeGreaterThan(0)
  expect(rivalBefore.timers.length).toBeGreaterThan(0)
  const eventsBefore = new Set((await outboxEvents(e)).map((ev) => ev.id))

  const fromMs = await clockOf(acme)
  const advanced = await advance(acme, { seconds: 2 * DAY / 1000 })
  expect(advanced.status, advanced.text).toBe(200)
  await e.deliveries.flush()

  // Rival's world did not move: not its clock, its order, its payout, its deliveries nor its timers.
  expect(await stateOf(e, rival, "org_rival", rivalWorld)).toEqual(rivalBefore)
  expect(await clockOf(rival)).toBe(MONDAY + 30_000)

  // Acme's did: its order's lock passed, its payout moved on, its receiver was tried again.
  const acmeAfter = await stateOf(e, acme, "org_acme", acmeWorld)
  expect(await clockOf(acme)).toBe(fromMs + 2 * DAY)
  expect(acmeAfter.order).toMatchObject({ status: "cancelled", cancellationReason: "expired" })
  expect(acmeAfter.payout.status).not.toBe("pending")
  expect(acmeAfter.sent.length).toBeGreaterThan(acmeBefore.sent.length)

  // The report says what the advance did: every timer due by the target fired, each event the sandbox received.
  const report = advanced.json
  expect(report).toMatchObject({ now: iso(fromMs + 2 * DAY), mode: "virtual", from: iso(fromMs) })
  const dueKinds = acmeBefore.timers.filter((t) => t.dueAtMs <= fromMs + 2 * DAY).map((t) => t.kind)
  for (const kind of new Set(dueKinds)) expect(report.timersFired.by[kind]).toBeGreaterThanOrEqual(dueKinds.filter((k) => k === kind).length)
  expect(report.timersFired.total).toBe(Object.values(report.timersFired.by as Record<string, number>).reduce((a, b) => a + b, 0))
  const emitted: Record<string, number> = {}
  for (const ev of await outboxEvents(e)) {
    if (eventsBefore.has(ev.id)) continue
    expect(ev.organizationId).toBe("org_acme")
    emitted[ev.type] = (emitted[ev.type] ?? 0) + 1
  }
  expect(report.eventsEmitted.by).toEqual(emitted)
  expect(report.eventsEmitted.total).toBeGreaterThan(0)
  const pending = acmeAfter.timers.map((t) => t.dueAtMs).sort((a, b) => a - b)
  if (pending.length === 0) expect(report).not.toHaveProperty("nextDueAt")
  else expect(report.nextDueAt).toBe(iso(pending[0]!))
  return e
}

describe("two organizations on one server", () => {
  it("memory store: advancing one organization's clock leaves the other's orders, payouts, timers, deliveries and clock untouched", async () => {
    await twoOrganizations()
  }, 120_000)

  it("PGlite: the same, and the clocks are kept in the store: a restart resumes each one, not --clock-start", async () => {
    const dir = await pgliteDir()
    const e = await twoOrganizations({ store: layerPgliteStore(dir) })
    const acmeTime = await e.clockOf("org_acme").now()
    const rivalTime = await e.clockOf("org_rival").now()
    await e.close()
    engine = undefined
    // Started again with another start instant: the stored clocks win.
    const restarted = await start({ store: layerPgliteStore(dir), clock: { mode: "virtual", start: MONDAY + 365 * DAY } })
    expect(await restarted.engine.clockOf("org_acme").now()).toBe(acmeTime)
    expect(await restarted.engine.clockOf("org_rival").now()).toBe(rivalTime)
    expect(await restarted.engine.clock.now()).toBe(MONDAY)
    expect(await clockOf(restarted.acme)).toBe(acmeTime)
  }, 180_000)
})

describe("the embedded clocks", () => {
  it("engine.clockOf moves one organization's clock; engine.clock moves every clock by the same duration from its own time", async () => {
    const { engine: e, acme, rival } = await start()
    const report = await e.clockOf("org_acme").advance("1 hour")
    expect(report).toMatchObject({ fromMs: MONDAY, nowMs: MONDAY + 3600_000, timersFired: {}, eventsEmitted: {} })
    expect(await clockOf(acme)).toBe(MONDAY + 3600_000)
    expect(await clockOf(rival)).toBe(MONDAY)
    await e.clock.advance("1 minute")
    expect(await clockOf(acme)).toBe(MONDAY + 3660_000)
    expect(await clockOf(rival)).toBe(MONDAY + 60_000)
    expect(await e.clock.now()).toBe(MONDAY + 60_000)
    await expect(e.clockOf("org_nope").now()).rejects.toThrow(/no organization org_nope/)
  })

  it("a write on a sandbox clock ahead of the root clock sends what it made due at once, at the sandbox's time", async () => {
    const { engine: e, acme } = await start()
    expect((await advance(acme, { seconds: 49 * 3600 })).status).toBe(200)
    expect((await acme.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.acme.test/fos" })).status).toBe(201)
    const emitted = await acme.call("POST", "/v2/simulate/events", { type: "customer.created" })
    expect(emitted.status).toBe(201)
    expect(emitted.json.createdAt).toBe(iso(MONDAY + 49 * 3600_000))
    await e.deliveries.flush()
    expect(e.deliveries.list().map((d) => [d.event.id, d.sentAt])).toEqual([[emitted.json.id, iso(MONDAY + 49 * 3600_000)]])
  })
})

/** An engine with a timer kind whose handler waits for the test's word, and one that counts. */
const withSlowTimers = async () => {
  const started = Effect.runSync(Deferred.make<void>())
  const release = Effect.runSync(Deferred.make<void>())
  const fired: Array<string> = []
  const started_ = await start({
    timerHandlers: {
      "test.slow": () => Effect.andThen(Deferred.succeed(started, undefined), Deferred.await(release)).pipe(Effect.andThen(Effect.sync(() => void fired.push("slow")))),
      "test.record": (payload: { name: string }) => Effect.sync(() => void fired.push(payload.name))
    }
  })
  const scope = Tenancy.scopeOf("org_acme", "sandbox")
  await started_.engine.run(Effect.gen(function*() {
    yield* Timers.schedule("test.slow", MONDAY + 1000, {}, scope)
    for (let i = 0; i < 5; i++) yield* Timers.schedule("test.record", MONDAY + 2000 + i, { name: `r${i}` }, scope)
  }))
  return {
    ...started_,
    fired,
    started: Effect.runPromise(Deferred.await(started)),
    release: () => Effect.runSync(Deferred.succeed(release, undefined))
  }
}

describe("a timer of a kind the engine has no handler for", () => {
  it("is kept and listed, left out of every advance, and fires in the first engine on the store that has its handler", async () => {
    const dir = await pgliteDir()
    const scope = Tenancy.scopeOf("org_acme", "sandbox")
    const first = await start({ store: layerPgliteStore(dir) })
    const id = await first.engine.run(Timers.schedule("host.reminder", MONDAY + 1000, { reminderId: "rem_1" }, scope))
    // Due, and no handler: the advance fires nothing, ends, and the timer stays.
    const advanced = await advance(first.acme, { seconds: 60 })
    expect(advanced.status).toBe(200)
    expect(advanced.json.timersFired).toEqual({ total: 0, by: {} })
    expect((await advance(first.acme, { seconds: 60 })).json.timersFired).toEqual({ total: 0, by: {} })
    expect((await timersOf(first.engine, "org_acme")).filter((t) => t.kind === "host.reminder")).toEqual([{ id, kind: "host.reminder", dueAtMs: MONDAY + 1000 }])
    const listed = (await first.acme.call("GET", "/v2/simulate/timers")).json.data as Array<{ id: string; resourceId?: string; action: string }>
    expect(listed.find((t) => t.id === id)).toMatchObject({ resourceId: "rem_1", action: expect.stringContaining("is kept, not fired: this engine has no handler for host.reminder timers") })
    await first.engine.close()
    engine = undefined

    // The next engine on the store has the handler: the kept timer goes back into its lane and fires at the next sweep.
    const fired: Array<string> = []
    const second = await start({
      store: layerPgliteStore(dir),
      timerHandlers: { "host.reminder": (payload: { reminderId: string }) => Effect.sync(() => void fired.push(payload.reminderId)) }
    })
    expect((await advance(second.acme, { seconds: 0 })).json.timersFired).toEqual({ total: 1, by: { "host.reminder": 1 } })
    expect(fired).toEqual(["rem_1"])
    expect((await timersOf(second.engine, "org_acme")).filter((t) => t.kind === "host.reminder")).toEqual([])
  })
})

describe("one advance of a clock at a time", () => {
  it("advances that move nothing and find nothing due change nothing, so any number at once all answer", async () => {
    const { acme } = await start()
    const before = await clockOf(acme)
    const replies = await Promise.all(Array.from({ length: 12 }, () => advance(acme, { seconds: 0 })))
    expect(replies.map((r) => r.status)).toEqual(Array(12).fill(200))
    expect(replies[0]!.json).toMatchObject({ now: iso(before), from: iso(before), timersFired: { total: 0, by: {} }, eventsEmitted: { total: 0, by: {} } })
    expect(await clockOf(acme)).toBe(before)
  })

  it("a second advance of the same clock while the first runs is 409 CONFLICT and changes nothing; another organization's advances meanwhile", async () => {
    const slow = await withSlowTimers()
    const first = advance(slow.acme, { seconds: 60 })
    await slow.started
    // Refused while the first is held in its timer's handler: the refusal waits for nothing.
    const secondReply = await advance(slow.acme, { seconds: 5 })
    const other = advance(slow.rival, { seconds: 5 })
    slow.release()
    const [firstReply, otherReply] = await Promise.all([first, other])
    expect(firstReply.status).toBe(200)
    expect(firstReply.json.timersFired).toEqual({ total: 6, by: { "test.slow": 1, "test.record": 5 } })
    expectProblem(secondReply, { type: "CONFLICT", status: 409, instance: "/sandbox/v2/simulate/clock/advance" })
    expect(secondReply.json.detail).toMatch(/Another advance of this organization's clock is running/)
    expect(otherReply.status).toBe(200)
    expect(await clockOf(slow.acme)).toBe(MONDAY + 60_000)
    expect(await clockOf(slow.rival)).toBe(MONDAY + 5_000)
    expect(slow.fired).toEqual(["slow", "r0", "r1", "r2", "r3", "r4"])
  })
})

describe("an advance whose client goes away", () => {
  it("still runs to its end: every timer fires and the clock lands on the target", async () => {
    const slow = await withSlowTimers()
    const client = new AbortController()
    const request = slow.engine.fetch(new Request("http://fos/sandbox/v2/simulate/clock/advance", {
      method: "POST",
      headers: { "x-api-key": keysOf("acme").sandbox, "content-type": "application/json" },
      body: JSON.stringify({ seconds: 60 }),
      signal: client.signal
    })).catch(() => undefined)
    await slow.started
    client.abort()
    slow.release()
    await request
    // The advance finishes on its own; the test waits for it without timing it.
    for (let i = 0; i < 200 && (await clockOf(slow.acme)) !== MONDAY + 60_000; i++) await new Promise((r) => setTimeout(r, 25))
    expect(await clockOf(slow.acme)).toBe(MONDAY + 60_000)
    expect(slow.fired).toEqual(["slow", "r0", "r1", "r2", "r3", "r4"])
    expect(await timersOf(slow.engine, "org_acme")).toEqual([])
    // The clock is free again.
    expect((await advance(slow.acme, { seconds: 1 })).status).toBe(200)
  })
})
