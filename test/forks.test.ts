/**
 * Forks (docs/snapshots.md, "Forks"): a snapshot's world in a new organization of its own, one per
 * parallel test worker. On the memory store, on PGlite and, when DATABASE_URL is set, on PostgreSQL: 8 forks made at
 * once from one snapshot of a world (customers, wallets, deposits, a webhook endpoint, a deposit still open), each
 * reading the parent's world under its own ids (every list and read, the clock, the pending timers and the events
 * equal once the ids are mapped), each changed differently (a deposit to a fixture wallet's address credits the
 * fork's wallet) with none seeing another's change nor the parent's; every id of the world in the answer's map, and
 * no id of the parent left in a fork's rows; a fixture request retried in a fork replaying with the fork's ids, or
 * conflicting when it named an id; a seeded engine forking the same ids on two runs.
 * On the memory store: listing and deleting forks (the fork's key refused after, its rows gone, counted in the
 * store; the forks it made left alone), a keyed fork replayed, another organization's fork and snapshot 404, the 65th
 * fork 409 (after the snapshot's 404, in the order of refusals), a reset, a restore and a snapshot's deletion in the
 * parent leaving the forks alone, a later fork of a snapshot holding its world though the parent changed since (a
 * fork's template is kept), a fork's timers on its own clock, and the embedded engine's calls.
 */
import { maxForksPerOrganization } from "@fos/contract"
import { Domain, MemoryStore, RandomStreams, Reset, Store, Tenancy, Timers } from "@fos/core"
import { createEngine, type Engine } from "@fos/http"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { auditLedger } from "./ledgerAudit.ts"
import { type Client, clientOf, deuDocuments, deuSubmission, idem } from "./onboardingFixtures.ts"
import { readSandbox } from "./sandboxReads.ts"
import { expectProblem, keysOf, ok, orgSeed, seedOf, START_MS } from "./support.ts"
import { closedAfterEach, storeMakers } from "./stores.ts"

const stores = storeMakers("forks")

const after = closedAfterEach()

/** An engine on a new store of `storeName`, with acme and rival, on a virtual clock (real time standing still too). */
const start = async (storeName: string, randomSeed: string | undefined = "forks") => {
  const engine = after.engine(await createEngine({
    store: await after.store(storeName, "forks"),
    ...(randomSeed === undefined ? {} : { randomSeed }),
    clock: { mode: "virtual", start: START_MS },
    realClock: Timers.makeVirtualClock(START_MS),
    webhookTransport: "memory",
    seed: seedOf(orgSeed("acme"), orgSeed("rival")) as never
  }))
  return {
    engine,
    acme: clientOf(engine.fetch, "http://fos", keysOf("acme").sandbox),
    rival: clientOf(engine.fetch, "http://fos", keysOf("rival").sandbox)
  }
}

/**
 * A world a suite builds once: a webhook endpoint, two onboarded customers with two USDC wallets each, money sent to
 * the wallets' deposit addresses and settled, a deposit left open (its timer pending), the sandbox's clock moved.
 * Its Idempotency-Keys are named here, so a seeded engine builds the same world every time.
 */
const buildWorld = async (client: Client) => {
  let n = 0
  const key = () => ({ "idempotency-key": `world-${++n}` })
  const endpoint = await ok(client.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.acme.test/forks" }, key()), 201)
  const wallets: Array<{ readonly id: string; readonly address: string }> = []
  const customers: Array<string> = []
  for (let c = 0; c < 2; c++) {
    const submitted = await ok(client.call("POST", "/v2/onboarding", deuSubmission(await deuDocuments(client), { clientReferenceId: `fixture-${c}` }), key()), 201)
    const customerId = (await ok(client.call("POST", `/v2/simulate/applications/${submitted.applicationId}/decision`, { outcome: "approved" }))).customerId as string
    customers.push(customerId)
    const applied = await ok(client.call("POST", `/v2/customers/${customerId}/features`, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } }, key()), 201)
    await ok(client.call("POST", `/v2/simulate/applications/${applied.applicationId}/decision`, { outcome: "approved" }))
    for (let w = 0; w < 2; w++) {
      const wallet = await ok(client.call("POST", `/v2/customers/${customerId}/wallets`, { chain: "base" }, key()), 201)
      wallets.push({ id: wallet.id, address: wallet.address })
    }
  }
  for (let d = 0; d < 5; d++) {
    const deposit = await ok(client.call("POST", "/v2/simulate/deposits", {
      destination: { type: "deposit_address", address: wallets[d % wallets.length]!.address },
      assetAmount: { code: "USDC", amount: "10.00", chain: "base" }
    }, key()), 201)
    await ok(client.call("POST", `/v2/simulate/transactions/${deposit.id}/settle`))
  }
  await ok(client.call("POST", "/v2/simulate/clock/advance", { seconds: 30 }))
  const open = await ok(client.call("POST", "/v2/simulate/deposits", {
    destination: { type: "deposit_address", address: wallets[0]!.address },
    assetAmount: { code: "USDC", amount: "3.00", chain: "base" }
  }, key()), 201)
  // Its webhooks delivered (they are sent in the background), so that the world reads the same until it is changed.
  await ok(client.call("POST", "/v2/simulate/webhooks/flush"))
  return { wallets, customers, endpointId: endpoint.id as string, openDepositId: open.id as string }
}

/**
 * A value with the parent's ids written as the fork's: the world's ids by the fork's map, the organization's id. A
 * pending timer's id carries a new number in the fork, which its timeline entry shows and orders by (within its
 * instant), so such entries take their new numbers and their places.
 */
const asFork = <A>(value: A, fork: { readonly organizationId: string; readonly parentOrganizationId: string; readonly ids: Record<string, string> }): A =>
  JSON.parse(JSON.stringify(value).replace(/\b[a-z]{2,5}_[0-9A-Za-z]{1,64}\b/g, (word) =>
    word === fork.parentOrganizationId ? fork.organizationId : fork.ids[word] ?? word), (_key, member) => {
    if (member === null || typeof member !== "object" || !Array.isArray(member.entries) || member.resourceType === undefined) return member
    const entries = member.entries.map((e: any) => e.kind === "timer_scheduled" && e.pending === true ? { ...e, sequence: parseInt(e.timerId.slice(-12), 36) } : e)
    return { ...member, entries: entries.sort((a: any, b: any) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.sequence - b.sequence)) }
  })

/** The ids fos mints found in a text (a prefix, `_`, 24 characters of its base32), but organizations', users' and snapshots'. */
const mintedIds = (text: string): Set<string> =>
  new Set((text.match(/\b[a-z]{2,5}_[0-9abcdefghjkmnpqrstvwxyz]{24}\b/g) ?? []).filter((id) => !/^(org|usr|snp)_/.test(id)))

const exportOf = async (client: Client, snapshotId: string) => {
  const r = await client.call("GET", `/v2/simulate/snapshots/${snapshotId}/export`)
  expect(r.status, r.text).toBe(200)
  return r.text
}

/** How many rows the store holds of an organization's sandbox and live environment (every table the registry names). */
const rowsOf = async (engine: Engine, organizationId: string): Promise<number> =>
  engine.run(Effect.gen(function*() {
    const store = yield* Store.Store
    const registry = yield* Domain.Domains
    // Counted as a snapshot would save them, in a copy that is then removed.
    const selections = ["sandbox", "live"].flatMap((environment) => Reset.sandboxSelections(registry, Tenancy.scopeOf(organizationId, environment as "sandbox")))
    const counts = yield* store.copies.save("probe", selections)
    yield* store.copies.remove("probe")
    return counts.reduce((sum, n) => sum + n, 0)
  }))

/** The problem a request was refused with, checked whole; `path` is where it was sent, after the environment. */
const refusedWith = (reply: Awaited<ReturnType<Client["call"]>>, type: string, status: number, path: string, environment = "sandbox") =>
  expectProblem(reply, { type, status, instance: `/${environment}${path}` })

const forkOf = (client: Client, snapshotId: string) => client.call("POST", `/v2/simulate/snapshots/${snapshotId}/fork`)

describe.each(Object.keys(stores))("forks on %s", (storeName) => {
  it("8 forks made at once each hold the snapshot's world under ids of their own, and change apart", async () => {
    const { engine, acme } = await start(storeName)
    const world = await buildWorld(acme)
    const snapshot = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    const before = await readSandbox(acme)
    const file = await exportOf(acme, snapshot.id)

    const forks = await Promise.all(Array.from({ length: 8 }, () => ok(forkOf(acme, snapshot.id), 201)))
    expect(new Set(forks.map((f) => f.organizationId)).size).toBe(8)
    // The timers' ids, the engine's housekeeping included (the pending timers list leaves it out by default).
    const timerIds = JSON.parse(file).tables.timers.map((t: { id: string }) => t.id) as Array<string>
    expect((before["/v2/simulate/timers?limit=100"] as any).data.length).toBeGreaterThan(0)
    const worldIds = [...new Set([...mintedIds(file), ...timerIds])].sort()
    for (const fork of forks) {
      expect(fork).toMatchObject({ parentOrganizationId: "org_acme", snapshotId: snapshot.id, environment: "sandbox", createdAt: snapshot.createdAt })
      expect(fork.apiKey).toMatch(/^ck_sandbox_[0-9a-f]{64}$/)
      // Every id of the world, in code point order, to an id of the same prefix that no other fork holds.
      expect(Object.keys(fork.ids)).toEqual(worldIds)
      for (const [old, made] of Object.entries(fork.ids) as Array<[string, string]>) {
        expect(made.split("_")[0]).toBe(old.split("_")[0])
        expect(made).not.toBe(old)
      }
    }
    const made = forks.flatMap((f) => Object.values(f.ids) as Array<string>)
    expect(new Set(made).size).toBe(made.length)

    for (const fork of forks) {
      const client = clientOf(engine.fetch, "http://fos", fork.apiKey)
      // The parent's world, every read and list of it, under the fork's ids; its clock at the snapshot's time.
      expect(await readSandbox(client)).toEqual(asFork(before, fork))
      expect((await ok(client.call("GET", "/v2/simulate/clock"))).now).toBe((before["/v2/simulate/clock"] as any).now)
      // The fork's rows, as its own snapshot's file holds them: every id in them is the fork's, none is the parent's.
      const own = await ok(client.call("POST", "/v2/simulate/snapshots"), 201)
      const text = await exportOf(client, own.id)
      const forkIds = new Set(Object.values(fork.ids) as Array<string>)
      expect([...mintedIds(text)].filter((id) => !forkIds.has(id))).toEqual([])
      expect(Object.keys(fork.ids).filter((id) => text.includes(id))).toEqual([])
      expect(text).not.toContain("org_acme")
      // History entries, whose keys the fork's store holds under numbers of its own (never shown), are written as
      // every file writes them: under `hst_` and the sequence they were written with.
      for (const h of JSON.parse(text).tables.history as Array<{ id: string; sequence: number }>) expect(h.id).toBe(`hst_${h.sequence.toString(36).padStart(12, "0")}`)
      expect(await auditLedger(engine, Tenancy.scopeOf(fork.organizationId, "sandbox"))).toEqual([])
    }

    // A fixture request retried in a fork with its key: one that named no id replays, with the fork's ids; one whose
    // path named an id, sent with the fork's, conflicts (its key's fingerprint is the request as the parent sent it).
    const first = clientOf(engine.fetch, "http://fos", forks[0].apiKey)
    const replayed = await first.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.acme.test/forks" }, { "idempotency-key": "world-1" })
    expect(replayed.headers.get("idempotency-replayed")).toBe("true")
    expect(replayed.json.id).toBe(forks[0].ids[world.endpointId])
    const walletPath = `/v2/customers/${forks[0].ids[world.customers[0]!]}/wallets`
    refusedWith(await first.call("POST", walletPath, { chain: "base" }, { "idempotency-key": "world-4" }), "IDEMPOTENCY_KEY_CONFLICT", 409, walletPath)

    // Each fork changed differently: a deposit of its own to a fixture wallet's address, which credits its wallet.
    await Promise.all(forks.map(async (fork, i) => {
      const client = clientOf(engine.fetch, "http://fos", fork.apiKey)
      const target = world.wallets[i % world.wallets.length]!
      const deposit = await ok(client.call("POST", "/v2/simulate/deposits", {
        destination: { type: "deposit_address", address: target.address },
        assetAmount: { code: "USDC", amount: `${i + 1}.00`, chain: "base" }
      }), 201)
      expect(deposit.destination.walletId).toBe(fork.ids[target.id])
      await ok(client.call("POST", `/v2/simulate/transactions/${deposit.id}/settle`))
    }))
    const fixtureTransactions = (before["/v2/transactions?limit=100"] as any).data as Array<{ id: string }>
    for (const [i, fork] of forks.entries()) {
      const client = clientOf(engine.fetch, "http://fos", fork.apiKey)
      const listed = (await ok(client.call("GET", "/v2/transactions?limit=100"))).data as Array<any>
      const own = listed.filter((t) => !Object.values(fork.ids).includes(t.id))
      expect(listed).toHaveLength(fixtureTransactions.length + 1)
      expect(own.map((t) => t.destination.assetAmount.amount)).toEqual([`${i + 1}.000000`])
      const target = world.wallets[i % world.wallets.length]!
      const wallet = await ok(client.call("GET", `/v2/wallets/${fork.ids[target.id]}`))
      const parentWallet = (before[`/v2/wallets/${target.id}`] as any)
      const available = (w: any) => Number(w.balances.find((b: any) => b.code === "USDC")?.available ?? 0)
      expect(available(wallet)).toBe(available(parentWallet) + i + 1)
      expect(await auditLedger(engine, Tenancy.scopeOf(fork.organizationId, "sandbox"))).toEqual([])
    }
    // The parent saw none of it.
    expect(await readSandbox(acme)).toEqual(before)
  }, 600_000)

  it("a seeded engine forks the same ids on two runs", async () => {
    const run = async () => {
      const { acme } = await start(storeName, "forks-seeded")
      await buildWorld(acme)
      const snapshot = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
      return [await ok(forkOf(acme, snapshot.id), 201), await ok(forkOf(acme, snapshot.id), 201)]
    }
    const first = await run()
    const second = await run()
    // PostgreSQL hands out its sequence's numbers in blocks, so a timer's number (in its id) may differ between runs.
    const minted = (fork: any) => storeName === "PostgreSQL" ? Object.fromEntries(Object.entries(fork.ids).filter(([id]) => !id.startsWith("tmr_"))) : fork.ids
    expect(second.map((f) => [f.organizationId, f.apiKey, minted(f)])).toEqual(first.map((f) => [f.organizationId, f.apiKey, minted(f)]))
    expect(second[1].ids).not.toEqual(second[0].ids)
  }, 300_000)
})

describe("forks on the memory store", () => {
  /** A small world: an endpoint, a customer with a wallet, money in, and a deposit left open on the sandbox's clock. */
  const smallWorld = async (client: Client) => {
    await ok(client.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.acme.test/small" }), 201)
    const submitted = await ok(client.call("POST", "/v2/onboarding", deuSubmission(await deuDocuments(client), { clientReferenceId: "small" }), idem()), 201)
    const customerId = (await ok(client.call("POST", `/v2/simulate/applications/${submitted.applicationId}/decision`, { outcome: "approved" }))).customerId as string
    const applied = await ok(client.call("POST", `/v2/customers/${customerId}/features`, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } }, idem()), 201)
    await ok(client.call("POST", `/v2/simulate/applications/${applied.applicationId}/decision`, { outcome: "approved" }))
    const wallet = await ok(client.call("POST", `/v2/customers/${customerId}/wallets`, { chain: "base" }, idem()), 201)
    const open = await ok(client.call("POST", "/v2/simulate/deposits", { destination: { type: "wallet", walletId: wallet.id }, assetAmount: { code: "USDC", amount: "7", chain: "base" } }), 201)
    await ok(client.call("POST", "/v2/simulate/webhooks/flush"))
    return { customerId, walletId: wallet.id as string, address: wallet.address as string, openDepositId: open.id as string }
  }

  it("lists and deletes forks: a deleted fork's key is refused and its rows are gone; another organization's fork is 404", async () => {
    const { engine, acme, rival } = await start("memory")
    await smallWorld(acme)
    const snapshot = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    const first = await ok(acme.call("POST", `/v2/simulate/snapshots/${snapshot.id}/fork`, undefined, { "idempotency-key": "fork-1" }), 201)
    // A retry with its Idempotency-Key answers the same fork, key and all, and makes no other.
    const retried = await acme.call("POST", `/v2/simulate/snapshots/${snapshot.id}/fork`, undefined, { "idempotency-key": "fork-1" })
    expect(retried.headers.get("idempotency-replayed")).toBe("true")
    expect(retried.json).toEqual(first)
    const second = await ok(forkOf(acme, snapshot.id), 201)
    const summary = (f: any) => ({ organizationId: f.organizationId, parentOrganizationId: "org_acme", snapshotId: snapshot.id, environment: "sandbox", createdAt: snapshot.createdAt })
    expect(await ok(acme.call("GET", "/v2/simulate/forks"))).toEqual({
      data: [summary(first), summary(second)],
      meta: { mode: "cursor", nextCursor: null, previousCursor: null, total: 2 }
    })
    expect((await ok(rival.call("GET", "/v2/simulate/forks"))).data).toEqual([])
    // A fork is an organization of its own: its forks list is its own, and its key reaches its sandbox only.
    const forkClient = clientOf(engine.fetch, "http://fos", first.apiKey)
    expect((await ok(forkClient.call("GET", "/v2/simulate/forks"))).data).toEqual([])
    expect((await ok(forkClient.call("GET", "/v2/portal/users/me"))).organization).toMatchObject({ id: first.organizationId, name: "Organization acme fork 1" })
    refusedWith(await forkClient.call("GET", `/v2/simulate/snapshots/${snapshot.id}`), "NOT_FOUND", 404, `/v2/simulate/snapshots/${snapshot.id}`)

    // Another organization's fork, and one's own organization, are not forks to delete.
    refusedWith(await rival.call("DELETE", `/v2/simulate/forks/${first.organizationId}`), "NOT_FOUND", 404, `/v2/simulate/forks/${first.organizationId}`)
    refusedWith(await forkClient.call("DELETE", `/v2/simulate/forks/${second.organizationId}`), "NOT_FOUND", 404, `/v2/simulate/forks/${second.organizationId}`)
    refusedWith(await acme.call("DELETE", "/v2/simulate/forks/org_rival"), "NOT_FOUND", 404, "/v2/simulate/forks/org_rival")
    // Nor another organization's snapshot to fork.
    refusedWith(await forkOf(rival, snapshot.id), "NOT_FOUND", 404, `/v2/simulate/snapshots/${snapshot.id}/fork`)

    // The fork's own snapshots, and what it made, go with it; a fork it made of its own snapshot stays.
    await ok(forkClient.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.fork.test/more" }), 201)
    const own = await ok(forkClient.call("POST", "/v2/simulate/snapshots"), 201)
    const grandchild = await ok(forkOf(forkClient, own.id), 201)
    expect(grandchild.parentOrganizationId).toBe(first.organizationId)
    const grandchildClient = clientOf(engine.fetch, "http://fos", grandchild.apiKey)
    const grandchildBefore = await readSandbox(grandchildClient)
    expect((await ok(grandchildClient.call("GET", "/v2/webhooks/endpoints"))).data).toHaveLength(2)
    expect(await rowsOf(engine, first.organizationId)).toBeGreaterThan(20)
    const before = await readSandbox(acme)
    const secondBefore = await readSandbox(clientOf(engine.fetch, "http://fos", second.apiKey))
    expect((await acme.call("DELETE", `/v2/simulate/forks/${first.organizationId}`)).status).toBe(204)
    refusedWith(await forkClient.call("GET", "/v2/customers"), "API_KEY_INVALID", 401, "/v2/customers")
    expect(await rowsOf(engine, first.organizationId)).toBe(0)
    expect(await engine.run(Effect.gen(function*() {
      const store = yield* Store.Store
      return {
        organization: yield* store.get(Tenancy.Organizations, first.organizationId),
        keys: yield* store.count(Tenancy.ApiKeys, "byOrganization", first.organizationId),
        users: yield* store.count(Tenancy.Users, "byOrganization", first.organizationId)
      }
    }))).toEqual({ organization: undefined, keys: 0, users: 0 })
    expect((await engine.snapshots({ organizationId: first.organizationId }))).toEqual([])
    expect((await ok(acme.call("GET", "/v2/simulate/forks"))).data).toEqual([summary(second)])
    refusedWith(await acme.call("DELETE", `/v2/simulate/forks/${first.organizationId}`), "NOT_FOUND", 404, `/v2/simulate/forks/${first.organizationId}`)
    // The parent and the other fork are as they were.
    expect(await readSandbox(acme)).toEqual(before)
    expect(await readSandbox(clientOf(engine.fetch, "http://fos", second.apiKey))).toEqual(secondBefore)
    expect(await readSandbox(grandchildClient)).toEqual(grandchildBefore)
    // Under /live there are no forks.
    const live = clientOf(engine.fetch, "http://fos", keysOf("acme").live, "live")
    refusedWith(await live.call("GET", "/v2/simulate/forks"), "NOT_FOUND", 404, "/v2/simulate/forks", "live")
  }, 120_000)

  it("a deleted fork leaves no index of its partitions behind", async () => {
    const { engine, acme } = await start("memory")
    await smallWorld(acme)
    const snapshot = await engine.snapshot({ organizationId: "org_acme" })
    const held = () => engine.run(Effect.map(Store.Store, MemoryStore.partitionsHeld))
    const before = await held()
    const fork = await engine.fork(snapshot.id)
    // The fork's world is in partitions of its own (its scope, its deliveries' attempts, ...), a hundred or so.
    expect(await held()).toBeGreaterThan(before + 50)
    await engine.deleteFork(fork.organizationId)
    expect(await held()).toBe(before)
  })

  it("a deleted fork's seeded stream goes with it, once the deletion has committed", async () => {
    const { engine, acme } = await start("memory")
    await smallWorld(acme)
    const snapshot = await engine.snapshot({ organizationId: "org_acme" })
    const streams = () => engine.run(Effect.withFiber((fiber) => Effect.succeed(fiber.getRef(RandomStreams.RandomStreams)!.held())))
    const fork = await engine.fork(snapshot.id)
    const forkClient = clientOf(engine.fetch, "http://fos", fork.apiKey)
    await ok(forkClient.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.acme.test/fork" }), 201)
    expect(await streams()).toContain(`${fork.organizationId}/sandbox`)
    await engine.deleteFork(fork.organizationId)
    expect((await streams()).filter((key) => key.startsWith(fork.organizationId))).toEqual([])
    expect(await streams()).toContain("org_acme/sandbox")
  })

  it(`holds at most ${maxForksPerOrganization} forks at a time: one more is 409, after a snapshot that is not the caller's is 404`, async () => {
    const { acme, rival } = await start("memory")
    await ok(acme.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.acme.test/bound" }), 201)
    const snapshot = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    const rivals = await ok(rival.call("POST", "/v2/simulate/snapshots"), 201)
    const forks: Array<any> = []
    for (let i = 0; i < maxForksPerOrganization; i++) forks.push(await ok(forkOf(acme, snapshot.id), 201))
    expect(forks.at(-1).organizationId).not.toBe(forks[0].organizationId)
    const refused = refusedWith(await forkOf(acme, snapshot.id), "CONFLICT", 409, `/v2/simulate/snapshots/${snapshot.id}/fork`)
    expect(refused.detail).toContain(`${maxForksPerOrganization} forks`)
    // Two rules broken at once: the snapshot is named first.
    refusedWith(await forkOf(acme, rivals.id), "NOT_FOUND", 404, `/v2/simulate/snapshots/${rivals.id}/fork`)
    refusedWith(await forkOf(acme, "snp_0000000000000000000000000x"), "NOT_FOUND", 404, "/v2/simulate/snapshots/snp_0000000000000000000000000x/fork")
    expect((await ok(acme.call("GET", "/v2/simulate/forks"))).data).toHaveLength(maxForksPerOrganization)
    // Deleting one makes room.
    expect((await acme.call("DELETE", `/v2/simulate/forks/${forks[3].organizationId}`)).status).toBe(204)
    await ok(forkOf(acme, snapshot.id), 201)
  }, 120_000)

  it("a reset, a restore and a snapshot's deletion in the parent leave its forks alone; a fork's timers run on its own clock", async () => {
    const { engine, acme } = await start("memory")
    const world = await smallWorld(acme)
    await ok(acme.call("POST", "/v2/simulate/clock/advance", { seconds: 20 }))
    const snapshot = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    const fork = await ok(forkOf(acme, snapshot.id), 201)
    const client = clientOf(engine.fetch, "http://fos", fork.apiKey)
    const forkBefore = await readSandbox(client)
    expect(forkBefore).toEqual(asFork(await readSandbox(acme), fork))

    // The parent's reset, then a restore, then the snapshot deleted: the fork reads as it did.
    await ok(acme.call("POST", "/v2/simulate/reset"))
    expect((await ok(acme.call("GET", "/v2/customers"))).data).toEqual([])
    expect(await readSandbox(client)).toEqual(forkBefore)
    await ok(acme.call("POST", `/v2/simulate/snapshots/${snapshot.id}/restore`))
    expect(await readSandbox(client)).toEqual(forkBefore)
    expect((await acme.call("DELETE", `/v2/simulate/snapshots/${snapshot.id}`)).status).toBe(204)
    expect(await readSandbox(client)).toEqual(forkBefore)
    expect((await ok(acme.call("GET", "/v2/simulate/forks"))).data.map((f: any) => f.snapshotId)).toEqual([snapshot.id])

    // The fork's clock moves alone, and its open deposit settles on it; the parent's stays open.
    const parentDeposit = await ok(acme.call("GET", `/v2/transactions/${world.openDepositId}`))
    expect(parentDeposit.status).not.toBe("completed")
    const advanced = await ok(client.call("POST", "/v2/simulate/clock/advance", { seconds: 3 * 86_400 }))
    expect(advanced.timersFired.total).toBeGreaterThan(0)
    expect((await ok(client.call("GET", `/v2/transactions/${fork.ids[world.openDepositId]}`))).status).toBe("completed")
    expect(await ok(acme.call("GET", `/v2/transactions/${world.openDepositId}`))).toEqual(parentDeposit)
    expect((await ok(acme.call("GET", "/v2/simulate/clock"))).now).toBe(snapshot.createdAt)
    // Its own reset is its own too.
    await ok(client.call("POST", "/v2/simulate/reset"))
    expect((await ok(client.call("GET", "/v2/customers"))).data).toEqual([])
    expect((await ok(acme.call("GET", "/v2/customers"))).data).toHaveLength(1)
  }, 120_000)

  it("a later fork of a snapshot holds the snapshot's world, whatever the parent did since, under ids of its own", async () => {
    const { engine, acme } = await start("memory")
    await ok(acme.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.acme.test/first" }), 201)
    const snapshot = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    const endpointsIn = async (apiKey: string) =>
      (await ok(clientOf(engine.fetch, "http://fos", apiKey).call("GET", "/v2/webhooks/endpoints"))).data.map((e: { id: string; url: string }) => [e.id, e.url])
    const first = await ok(acme.call("POST", `/v2/simulate/snapshots/${snapshot.id}/fork`), 201)
    await ok(acme.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.acme.test/second" }), 201)
    await ok(acme.call("POST", "/v2/simulate/reset"))
    const second = await ok(acme.call("POST", `/v2/simulate/snapshots/${snapshot.id}/fork`), 201)
    const [old] = Object.keys(first.ids).filter((id) => id.startsWith("wep_"))
    expect(await endpointsIn(first.apiKey)).toEqual([[first.ids[old!], "https://hooks.acme.test/first"]])
    expect(await endpointsIn(second.apiKey)).toEqual([[second.ids[old!], "https://hooks.acme.test/first"]])
    expect(second.ids[old!]).not.toBe(first.ids[old!])
  })

  it("is on the embedded engine: fork, forks, deleteFork; snapshot() still names the engine's one organization", async () => {
    const engine = await createEngine({ clock: { mode: "virtual", start: START_MS }, realClock: Timers.makeVirtualClock(START_MS), webhookTransport: "memory", seed: seedOf(orgSeed("acme")) as never })
    after.engine(engine)
    const acme = clientOf(engine.fetch, "http://fos", keysOf("acme").sandbox)
    const world = await smallWorld(acme)
    const snapshot = await engine.snapshot()
    const fork = await engine.fork(snapshot.id)
    expect(fork).toMatchObject({ parentOrganizationId: "org_acme", snapshotId: snapshot.id, createdAt: snapshot.createdAt })
    expect(fork.ids[world.walletId]).toMatch(/^wlt_/)
    const client = clientOf(engine.fetch, "http://fos", fork.apiKey)
    expect((await ok(client.call("GET", `/v2/wallets/${fork.ids[world.walletId]}`))).address).toBe(world.address)
    // The engine holds two organizations now, one of them a fork: the calls that name none still mean acme.
    const again = await engine.snapshot()
    expect(again.organizationId).toBe("org_acme")
    expect((await engine.fork(again.id, { organizationId: "org_acme" })).parentOrganizationId).toBe("org_acme")
    expect((await engine.forks()).map((f) => f.organizationId)).toEqual([fork.organizationId, expect.stringMatching(/^org_/)])
    await expect(engine.fork(again.id, { organizationId: fork.organizationId })).rejects.toMatchObject({ code: "NOT_FOUND" })
    await engine.deleteFork(fork.organizationId)
    expect(await engine.forks()).toHaveLength(1)
    await expect(engine.deleteFork(fork.organizationId)).rejects.toMatchObject({ code: "NOT_FOUND" })
    await expect(engine.deleteFork("org_acme")).rejects.toMatchObject({ code: "NOT_FOUND" })
  }, 60_000)
})
