/**
 * Snapshots as files (docs/snapshots.md, "Files"): a world exported on PGlite imports into another
 * organization on the memory store and on PostgreSQL (when DATABASE_URL is set), and once restored every read and
 * list answers what the source answered, the organization's id excepted; the same world exports the same bytes on
 * the memory store and on PGlite; every refused file is refused whole, with nothing written; a seeded engine that
 * imports a world minted from its own seed mints no id of it again; the embedded engine's calls and the operator
 * surface; `fos snapshots export|import` and `fos serve --load` against real servers.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { maxSnapshotFileBytes, snapshotFileVersion } from "@fos/contract"
import { History, MemoryStore, Snapshots, SnapshotFiles, Store, Tenancy, Timers } from "@fos/core"
import { createEngine, type Engine } from "@fos/http"
import { Effect, Layer } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { adminUrl } from "../adapters/sql/test/databases.ts"
import { killAllFos, startFos } from "./fosProcess.ts"
import { auditLedger } from "./ledgerAudit.ts"
import { type Client, clientOf, deuDocuments, deuSubmission } from "./onboardingFixtures.ts"
import { readSandbox } from "./sandboxReads.ts"
import { closedAfterEach } from "./stores.ts"
import { expectProblem, keysOf, ok, orgSeed, seedOf, START_MS } from "./support.ts"

const operatorToken = "snapshot-files-operator-token"
const root = resolve(import.meta.dirname, "..")
const corePackageVersion = (JSON.parse(readFileSync(join(root, "packages/core/package.json"), "utf8")) as { version: string }).version

type StoreOption = "memory" | Layer.Layer<Store.Store, unknown>

const after = closedAfterEach()

/** An engine on `store` with the organizations `names`, on a virtual clock (real time standing still too). */
const open = async (store: StoreOption, names: ReadonlyArray<string>, randomSeed: string | undefined = "files") => {
  const engine = await createEngine({
    store,
    ...(randomSeed === undefined ? {} : { randomSeed }),
    clock: { mode: "virtual", start: START_MS },
    realClock: Timers.makeVirtualClock(START_MS),
    webhookTransport: "memory",
    operatorToken,
    seed: seedOf(...names.map((name) => orgSeed(name))) as never
  })
  return after.engine(engine)
}

const clientFor = (engine: Engine, name: string) => clientOf(engine.fetch, "http://fos", keysOf(name).sandbox)

/**
 * A world worth committing, built the same way every time (its keys and references named here, not counted across
 * the file): a webhook endpoint, an onboarded customer with a euro virtual account and a USDC wallet, money in, a
 * deposit left open and a payout under way (timers pending), and the sandbox's own clock moved.
 */
const buildWorld = async (client: Client) => {
  let n = 0
  const key = () => ({ "idempotency-key": `world-${++n}` })
  const endpoint = await ok(client.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.acme.test/fos" }, key()), 201)
  const submitted = await ok(client.call("POST", "/v2/onboarding", deuSubmission(await deuDocuments(client), { clientReferenceId: "world-customer" }), key()), 201)
  const customerId = (await ok(client.call("POST", `/v2/simulate/applications/${submitted.applicationId}/decision`, { outcome: "approved" }))).customerId as string
  for (const feature of [{ type: "virtual_account", asset: { code: "EUR" } }, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } }]) {
    const applied = await ok(client.call("POST", `/v2/customers/${customerId}/features`, feature, key()), 201)
    await ok(client.call("POST", `/v2/simulate/applications/${applied.applicationId}/decision`, { outcome: "approved" }))
  }
  await ok(client.call("POST", "/v2/simulate/clock/advance", { seconds: 30 }))
  const accountId = (await ok(client.call("GET", `/v2/customers/${customerId}/virtual-accounts`))).data[0].id as string
  const wallet = await ok(client.call("POST", `/v2/customers/${customerId}/wallets`, { chain: "base" }, key()), 201)
  const euros = await ok(client.call("POST", "/v2/simulate/deposits", { destination: { type: "virtual_account", virtualAccountId: accountId }, assetAmount: { code: "EUR", amount: "100.00" } }), 201)
  await ok(client.call("POST", `/v2/simulate/transactions/${euros.id}/settle`))
  const coins = await ok(client.call("POST", "/v2/simulate/deposits", { destination: { type: "wallet", walletId: wallet.id }, assetAmount: { code: "USDC", amount: "500", chain: "base" } }), 201)
  await ok(client.call("POST", `/v2/simulate/transactions/${coins.id}/settle`))
  const open = await ok(client.call("POST", "/v2/simulate/deposits", { destination: { type: "virtual_account", virtualAccountId: accountId }, assetAmount: { code: "EUR", amount: "5.00" } }), 201)
  const address = await ok(client.call("POST", `/v2/customers/${customerId}/registered-addresses`, { chain: "base", address: "0x52908400098527886e0f7030069857d2e4169ee7" }, key()), 201)
  await ok(client.call("POST", "/v2/payouts", {
    source: { type: "wallet", walletId: wallet.id },
    destination: { type: "registered_address", registeredAddressId: address.id },
    asset: "USDC",
    amount: "100",
    purpose: "treasury_transfer"
  }, key()), 201)
  await ok(client.call("POST", "/v2/simulate/clock/advance", { seconds: 5 }))
  return { customerId, accountId, walletId: wallet.id as string, endpointId: endpoint.id as string, openDepositId: open.id as string }
}

/** A value with one organization's id written as another's, everywhere (as an import into another organization does). */
const asOrganization = <A>(value: A, from: string, to: string): A => JSON.parse(JSON.stringify(value).replaceAll(from, to))

const exportOf = async (client: Client, id: string) => {
  const r = await client.call("GET", `/v2/simulate/snapshots/${id}/export`)
  expect(r.status, r.text).toBe(200)
  return { text: r.text, headers: r.headers }
}

const importInto = (client: Client, text: string, headers: Record<string, string> = {}) =>
  client.call("POST", "/v2/simulate/snapshots/import", JSON.parse(text), headers)

const snapshotIds = async (client: Client) => (await ok(client.call("GET", "/v2/simulate/snapshots?limit=100"))).data.map((s: any) => s.id as string)

describe("snapshot files across stores", () => {
  it("a world exported on PGlite imports into another organization on memory and on PostgreSQL: every read and list answers the same", async () => {
    // The source: PGlite. The same world built on the memory store exports the same bytes.
    const source = await open(await after.store("PGlite", "files-source"), ["acme", "rival"])
    const acme = clientFor(source, "acme")
    const world = await buildWorld(acme)
    const before = await readSandbox(acme)
    const snapshot = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    const exported = await exportOf(acme, snapshot.id)
    expect(exported.headers.get("content-type")).toMatch(/^application\/json/)
    expect(exported.headers.get("content-disposition")).toBe(`attachment; filename="${snapshot.id}.fos-snapshot.json"`)
    const file = JSON.parse(exported.text)
    expect(Object.keys(file)).toEqual(["format", "version", "fosVersion", "snapshot", "sequence", "tables"])
    expect(file).toMatchObject({ format: "fos-snapshot", version: snapshotFileVersion, fosVersion: corePackageVersion, snapshot })
    expect(Object.values(file.tables).reduce((n: number, rows: any) => n + rows.length, 0)).toBe(snapshot.rows)
    // Tables by name and rows by key: nothing of the store's own order.
    expect(Object.keys(file.tables)).toEqual([...Object.keys(file.tables)].sort())
    for (const rows of Object.values(file.tables) as Array<Array<{ id: string }>>) expect(rows.map((r) => r.id)).toEqual(rows.map((r) => r.id).sort())
    // Exporting changes nothing, and answers the same file again.
    expect((await exportOf(acme, snapshot.id)).text).toBe(exported.text)
    expect(await readSandbox(acme)).toEqual(before)

    const mirror = await open("memory", ["acme", "rival"])
    const mirrorAcme = clientFor(mirror, "acme")
    await buildWorld(mirrorAcme)
    const mirrorSnapshot = await ok(mirrorAcme.call("POST", "/v2/simulate/snapshots"), 201)
    expect((await exportOf(mirrorAcme, mirrorSnapshot.id)).text).toBe(exported.text)

    const targets: Array<[string, StoreOption]> = [["memory", "memory"]]
    if (adminUrl !== undefined && adminUrl !== "") targets.push(["PostgreSQL", await after.store("PostgreSQL", "files_target")])
    for (const [name, store] of targets) {
      // Another organization, on a store whose other organization already has a world of its own (built a few
      // seconds later: the same requests at the same instants would schedule timers under the file's keys).
      const target = await open(store, ["beta", "other"], `files-${name}`)
      const beta = clientFor(target, "beta")
      const other = clientFor(target, "other")
      await ok(other.call("POST", "/v2/simulate/clock/advance", { seconds: 7 }))
      await buildWorld(other)
      const otherBefore = await readSandbox(other)
      const imported = await ok(importInto(beta, exported.text), 201)
      expect(imported).toMatchObject({ id: expect.stringMatching(/^snp_/), organizationId: "org_beta", environment: "sandbox", createdAt: snapshot.createdAt, rows: snapshot.rows, contents: snapshot.contents })
      expect(imported.id).not.toBe(snapshot.id)
      // Imported, not restored: the sandbox is as it was.
      expect((await ok(beta.call("GET", "/v2/customers"))).data).toEqual([])
      expect(await ok(beta.call("POST", `/v2/simulate/snapshots/${imported.id}/restore`))).toEqual(imported)
      // Its file is the source's, byte for byte but for the organization it is in now: its history entries under
      // the keys they were written under (this store numbered them anew), its head the file's.
      const againText = (await exportOf(beta, imported.id)).text
      expect(againText).toBe(asOrganization(exported.text, "org_acme", "org_beta"))
      const again = JSON.parse(againText)
      expect(again.snapshot).toEqual({ ...file.snapshot, organizationId: "org_beta" })
      expect(again.sequence).toBe(file.sequence)
      expect(await readSandbox(beta), name).toEqual(asOrganization(before, "org_acme", "org_beta"))
      expect(await auditLedger(target, Tenancy.scopeOf("org_beta", "sandbox"))).toEqual([])
      expect(await readSandbox(other)).toEqual(otherBefore)

      // The world goes on: its open deposit settles on its timer, the payout completes, and money moves again.
      await ok(beta.call("POST", "/v2/simulate/clock/advance", { seconds: 3 * 86_400 }))
      expect((await ok(beta.call("GET", `/v2/transactions/${world.openDepositId}`))).status).toBe("completed")
      const more = await ok(beta.call("POST", "/v2/simulate/deposits", { destination: { type: "virtual_account", virtualAccountId: world.accountId }, assetAmount: { code: "EUR", amount: "1.00" } }), 201)
      expect(more.id).not.toBe(world.openDepositId)
      await ok(beta.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.beta.test/more" }), 201)
      expect(await auditLedger(target, Tenancy.scopeOf("org_beta", "sandbox"))).toEqual([])
      // What the new events are numbered after the imported ones, in the organization's event log.
      const events = (await ok(beta.call("GET", "/v2/simulate/events?limit=100"))).data as Array<{ sequence: number }>
      expect(events.map((e) => e.sequence)).toEqual([...events.map((e) => e.sequence)].sort((a, b) => a - b))
    }
  }, 600_000)
})

describe("snapshot files on one store", () => {
  /** A small world: a webhook endpoint made with a key, on a sandbox clock of its own. */
  const smallWorld = async (client: Client) => {
    const endpoint = await ok(client.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.acme.test/small" }, { "idempotency-key": "small-1" }), 201)
    await ok(client.call("POST", "/v2/simulate/clock/advance", { seconds: 60 }))
    return endpoint.id as string
  }

  it("imports into the organization it came from, where its ids are its own sandbox's; restored, the sandbox is as exported", async () => {
    const engine = await open(await after.store("PGlite", "files-same"), ["acme"])
    const acme = clientFor(engine, "acme")
    await smallWorld(acme)
    const before = await readSandbox(acme)
    const snapshot = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    const { text } = await exportOf(acme, snapshot.id)
    await ok(acme.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.acme.test/later" }), 201)
    await ok(acme.call("POST", "/v2/simulate/clock/advance", { seconds: 600 }))
    const imported = await ok(importInto(acme, text, { "idempotency-key": "import-1" }), 201)
    // A retry with its key answers the same snapshot and imports nothing again.
    const retried = await importInto(acme, text, { "idempotency-key": "import-1" })
    expect(retried.headers.get("idempotency-replayed")).toBe("true")
    expect(retried.json).toEqual(imported)
    expect(await snapshotIds(acme)).toEqual([imported.id, snapshot.id])
    await ok(acme.call("POST", `/v2/simulate/snapshots/${imported.id}/restore`))
    expect((await exportOf(acme, imported.id)).text).toBe(text)
    expect(await readSandbox(acme)).toEqual(before)
    // A key used before the export replays there as it did here.
    const replayed = await acme.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.acme.test/small" }, { "idempotency-key": "small-1" })
    expect(replayed.headers.get("idempotency-replayed")).toBe("true")
  }, 120_000)

  it("numbers the history it imports with numbers no other process sharing the store is handed while the import runs", async () => {
    const source = await open("memory", ["acme"])
    const acme = clientFor(source, "acme")
    await buildWorld(acme)
    const { text } = await exportOf(acme, (await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)).id)
    const fileKeys = (JSON.parse(text).tables.history as ReadonlyArray<{ id: string }>).map((r) => r.id)
    expect(fileKeys.length).toBeGreaterThan(0)
    // The importing store is shared with another process, busy numbering rows of its own (history, events) each time
    // this one takes numbers from the sequence, as processes on one PostgreSQL database do.
    const inner = MemoryStore.make()
    const handedElsewhere = new Set<number>()
    let busy = false
    const elsewhere = Effect.suspend(() =>
      busy ? Effect.forEach(Array.from({ length: 1000 }), () => Effect.map(inner.nextNumber, (n) => handedElsewhere.add(n)), { discard: true }) : Effect.void
    )
    const shared: Store.StoreService = {
      ...inner,
      nextSequence: Effect.tap(inner.nextSequence, () => elsewhere),
      takeNumbers: (count) => Effect.tap(inner.takeNumbers(count), () => elsewhere)
    }
    const target = clientFor(await open(Layer.succeed(Store.Store, shared), ["acme"]), "acme")
    busy = true
    const imported = await ok(importInto(target, text), 201)
    busy = false
    expect(handedElsewhere.size).toBeGreaterThan(0)
    await ok(target.call("POST", `/v2/simulate/snapshots/${imported.id}/restore`))
    // The keys the store holds the history under (a file writes the ones it was written under, the file's).
    const held = await Effect.runPromise(inner.page(History.History, { order: "byScope", partition: "org_acme/sandbox", descending: false, backward: false, from: undefined, limit: 10_000 }))
    const keys = held.map((r) => r.id)
    expect(keys).toHaveLength(fileKeys.length)
    // In the file's order, and none of them a number the other process holds a row under.
    expect([...keys].sort()).toEqual(keys)
    expect(keys.filter((key) => handedElsewhere.has(parseInt(key.slice("hst_".length), 36)))).toEqual([])
    expect((JSON.parse((await exportOf(target, imported.id)).text).tables.history as ReadonlyArray<{ id: string }>).map((r) => r.id)).toEqual(fileKeys)
  })

  it("refuses a file it cannot take, whole, writing nothing: each refusal its status and a clear detail", async () => {
    const engine = await open("memory", ["acme", "rival"])
    const acme = clientFor(engine, "acme")
    const rival = clientFor(engine, "rival")
    await smallWorld(acme)
    const snapshot = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    const { text } = await exportOf(acme, snapshot.id)
    const file = JSON.parse(text)
    const instance = "/sandbox/v2/simulate/snapshots/import"
    const listed = await snapshotIds(acme)
    const refused = async (body: unknown, expected: { type: string; status: number }, client: Client = acme) => {
      const r = await client.call("POST", "/v2/simulate/snapshots/import", body)
      const problem = expectProblem(r, { ...expected, instance })
      expect(await snapshotIds(acme)).toEqual(listed)
      expect(await snapshotIds(rival)).toEqual([])
      return problem
    }
    const edited = (change: (f: any) => void) => {
      const copy = JSON.parse(text)
      change(copy)
      return copy
    }
    // What the file is.
    expect((await refused([1, 2], { type: "VALIDATION_ERROR", status: 400 })).errors).toEqual([{ pointer: "", detail: expect.stringContaining("fos snapshot file") }])
    expect((await refused(edited((f) => (f.format = "localstack-pod")), { type: "VALIDATION_ERROR", status: 400 })).errors).toEqual([{ pointer: "/format", detail: "must be \"fos-snapshot\"" }])
    expect((await refused(edited((f) => (f.version = "1")), { type: "VALIDATION_ERROR", status: 400 })).errors[0].pointer).toBe("/version")
    // Whether this fos reads it: a newer format (whatever else it changed), another major version of fos.
    const newer = await refused(edited((f) => {
      f.version = snapshotFileVersion + 1
      f.tables = { renamed: "in a shape of its own" }
    }), { type: "UNPROCESSABLE_ENTITY", status: 422 })
    expect(newer.detail).toContain(`version ${snapshotFileVersion + 1} of fos's snapshot format`)
    const major = Number(corePackageVersion.split(".")[0]) + 1
    expect((await refused(edited((f) => (f.fosVersion = `${major}.0.0`)), { type: "UNPROCESSABLE_ENTITY", status: 422 })).detail).toContain(`written by fos ${major}.0.0`)
    // A table this fos does not keep in a snapshot.
    expect((await refused(edited((f) => (f.tables.quantum_ledgers = [{ id: "q1" }])), { type: "UNPROCESSABLE_ENTITY", status: 422 })).detail).toContain("\"quantum_ledgers\"")
    // More rows than a snapshot takes.
    const many = await refused(edited((f) => (f.tables.webhook_endpoints = Array.from({ length: Snapshots.maxSnapshotRows + 1 }, () => ({})))), { type: "UNPROCESSABLE_ENTITY", status: 422 })
    expect(many.detail).toContain(`more than the ${Snapshots.maxSnapshotRows}`)
    // Its shape, with a pointer at each problem.
    const shape = await refused(edited((f) => {
      delete f.sequence
      f.tables.webhook_endpoints[0] = "not a row"
      f.extra = true
    }), { type: "VALIDATION_ERROR", status: 400 })
    expect(shape.errors.map((e: any) => e.pointer).sort()).toEqual(["/extra", "/sequence", "/tables/webhook_endpoints/0"])
    // Its rows: keys, another organization's data, live data, a row outside the sandbox, twice the same key.
    const endpoint = file.tables.webhook_endpoints[0]
    const rows = await refused(edited((f) => {
      f.tables.webhook_endpoints = [endpoint, { ...endpoint }, { ...endpoint, id: "wep_other", organizationId: "org_rival" }, { ...endpoint, id: undefined }]
      f.tables.clocks = [{ id: "org_acme/live", nowMs: 1 }, { id: "org_rival/sandbox", nowMs: 1 }]
    }), { type: "VALIDATION_ERROR", status: 400 })
    expect(rows.errors).toEqual(expect.arrayContaining([
      { pointer: "/tables/webhook_endpoints/1", detail: expect.stringContaining("has the key of row 0") },
      { pointer: "/tables/webhook_endpoints/2/organizationId", detail: expect.stringContaining("org_rival") },
      { pointer: "/tables/webhook_endpoints/3", detail: expect.stringContaining("has no key") },
      { pointer: "/tables/clocks/0/id", detail: expect.stringContaining("outside its sandbox") },
      { pointer: "/tables/clocks/1/id", detail: expect.stringContaining("org_rival") }
    ]))
    // An endpoint that is not a row of the sandbox's endpoints (the live environment's), with no organization id to rewrite.
    const outside = await refused(edited((f) => (f.tables.webhook_endpoints[0].environment = "live")), { type: "VALIDATION_ERROR", status: 400 })
    expect(outside.errors).toEqual([{ pointer: "/tables/webhook_endpoints/0", detail: expect.stringContaining("is not a row of the sandbox's webhook_endpoints") }])
    // The store: the ids are acme's, which the rival cannot take (ids are unique in a store).
    const taken = await refused(JSON.parse(text), { type: "CONFLICT", status: 409 }, rival)
    expect(taken.detail).toContain("another organization's")
    expect((await ok(rival.call("GET", "/v2/webhooks/endpoints"))).data).toEqual([])
    // No body, and malformed JSON, as on every write.
    expectProblem(await acme.call("POST", "/v2/simulate/snapshots/import", undefined, { "content-type": "application/json" }), { type: "VALIDATION_ERROR", status: 400, instance })
    const malformed = await engine.fetch(new Request(`http://fos${instance}`, { method: "POST", headers: { "x-api-key": keysOf("acme").sandbox, "content-type": "application/json" }, body: "{ nope" }))
    expect(malformed.status).toBe(400)
    expect(((await malformed.json()) as { type: string }).type).toBe("MALFORMED_JSON")
    // And past the organization's snapshots.
    for (let i = (await snapshotIds(acme)).length; i < Snapshots.maxSnapshotsPerOrganization; i++) await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    expectProblem(await importInto(acme, text), { type: "CONFLICT", status: 409, instance })
    // Under /live there is no import.
    const live = clientOf(engine.fetch, "http://fos", keysOf("acme").live, "live")
    expectProblem(await live.call("POST", "/v2/simulate/snapshots/import", file), { type: "NOT_FOUND", status: 404, instance: "/live/v2/simulate/snapshots/import" })
  }, 240_000)

  it("takes a file larger than other requests' bodies, up to its own limit", async () => {
    const engine = await open("memory", ["acme", "beta"])
    const acme = clientFor(engine, "acme")
    // A world of about 2 MB: a document of 1.5 MB (kept as base64).
    const form = new FormData()
    form.set("type", "certificate_of_incorporation")
    form.set("file", new Blob([new TextEncoder().encode(`%PDF-1.7\n%${"x".repeat(1_500_000)}\n`)], { type: "application/pdf" }), "large.pdf")
    const uploaded = await engine.fetch(new Request("http://fos/sandbox/v2/documents", { method: "POST", headers: { "x-api-key": keysOf("acme").sandbox }, body: form }))
    expect(uploaded.status, await uploaded.clone().text()).toBe(201)
    const snapshot = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    const { text } = await exportOf(acme, snapshot.id)
    const beta = clientFor(engine, "beta")
    // Too large for any other write...
    const big = JSON.stringify({ url: `https://hooks.beta.test/${"y".repeat(2 * 1024 * 1024)}` })
    expect(big.length).toBeGreaterThan(1024 * 1024)
    expectProblem(await beta.call("POST", "/v2/webhooks/endpoints", JSON.parse(big)), { type: "PAYLOAD_TOO_LARGE", status: 413, instance: "/sandbox/v2/webhooks/endpoints" })
    // ...but not for an import (this one refused only because acme's rows are acme's).
    expect(text.length).toBeLessThan(maxSnapshotFileBytes)
    expect(text.length).toBeGreaterThan(1024 * 1024)
    expectProblem(await importInto(beta, text), { type: "CONFLICT", status: 409, instance: "/sandbox/v2/simulate/snapshots/import" })
    await ok(acme.call("POST", "/v2/simulate/reset"))
    const imported = await ok(importInto(beta, text), 201)
    // Its rows, and a clock of the sandbox's own at the snapshot's time: acme's followed the engine's.
    expect(JSON.parse(text).tables.clocks).toBeUndefined()
    expect(imported.rows).toBe(snapshot.rows + 1)
    await ok(beta.call("POST", `/v2/simulate/snapshots/${imported.id}/restore`))
    expect((await ok(beta.call("GET", "/v2/simulate/clock"))).now).toBe(snapshot.createdAt)
  }, 120_000)

  it("on a seeded engine, what is made after importing a world minted from the same seed gets ids the world does not hold", async () => {
    const source = await open("memory", ["acme"], "same-seed")
    const acme = clientFor(source, "acme")
    await smallWorld(acme)
    const snapshot = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    const { text } = await exportOf(acme, snapshot.id)
    // A fresh engine with the same seed mints acme's ids in the same order as the source did: imported and restored
    // by the embedded calls (which draw from no sandbox's stream), its first endpoint would take the world's one's id.
    const target = await open("memory", ["acme"], "same-seed")
    const again = clientFor(target, "acme")
    await target.restore((await target.importSnapshot(text)).id)
    const made = await ok(again.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.acme.test/after" }), 201)
    expect(text).not.toContain(made.id)
    expect((await ok(again.call("GET", "/v2/webhooks/endpoints"))).data).toHaveLength(2)
  }, 120_000)

  it("is on the embedded engine (exportSnapshot, importSnapshot) and the operator surface, which answer the same file", async () => {
    const engine = await open("memory", ["acme", "beta"])
    const acme = clientFor(engine, "acme")
    await smallWorld(acme)
    const snapshot = await engine.snapshot({ organizationId: "org_acme" })
    const text = await engine.exportSnapshot(snapshot.id)
    expect(text).toBe((await exportOf(acme, snapshot.id)).text)
    const operator = await engine.fetch(new Request(`http://fos/operator/snapshots/${snapshot.id}/export`, { headers: { authorization: `Bearer ${operatorToken}` } }))
    expect(operator.headers.get("content-disposition")).toBe(`attachment; filename="${snapshot.id}.fos-snapshot.json"`)
    expect(await operator.text()).toBe(text)

    const target = await open("memory", ["beta"])
    // The engine holds one organization: the call need not name it. Text or parsed JSON alike.
    const imported = await target.importSnapshot(text)
    expect(imported.organizationId).toBe("org_beta")
    await target.restore(imported.id)
    expect(await target.exportSnapshot(imported.id)).toBe(asOrganization(text, "org_acme", "org_beta"))
    expect(await readSandbox(clientFor(target, "beta"))).toEqual(asOrganization(await readSandbox(acme), "org_acme", "org_beta"))
    await expect(target.importSnapshot("{ not json")).rejects.toMatchObject({ code: "MALFORMED_JSON" })
    await expect(target.importSnapshot({ ...JSON.parse(text), version: 9 })).rejects.toMatchObject({ code: "UNPROCESSABLE_ENTITY" })
    // Through the operator surface, into an organization it names.
    const byOperator = await engine.fetch(new Request("http://fos/operator/organizations/org_beta/snapshots/import", {
      method: "POST",
      headers: { authorization: `Bearer ${operatorToken}`, "content-type": "application/json" },
      body: text
    }))
    expect(byOperator.status).toBe(409) // acme's ids, on acme's store
    await acme.call("POST", "/v2/simulate/reset")
    const accepted = await engine.fetch(new Request("http://fos/operator/organizations/org_beta/snapshots/import", {
      method: "POST",
      headers: { authorization: `Bearer ${operatorToken}`, "content-type": "application/json" },
      body: text
    }))
    expect(accepted.status, await accepted.clone().text()).toBe(201)
    expect((await accepted.json()).organizationId).toBe("org_beta")
    // Checking a file writes nothing.
    const listed = await engine.snapshots({ organizationId: "org_beta" })
    expect(await engine.run(SnapshotFiles.read("org_beta", JSON.parse(text)))).toMatchObject({ rows: { createdAt: snapshot.createdAt } })
    expect(await engine.snapshots({ organizationId: "org_beta" })).toEqual(listed)
  }, 120_000)
})

// --- the command line --------------------------------------------------------------------------------------------

const fos = (origin: string, ...args: Array<string>): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((done) => {
    execFile(process.execPath, ["adapters/node/bin/fos.js", ...args], {
      cwd: root,
      env: { ...process.env, FOS_SERVER: origin, FOS_OPERATOR_TOKEN: operatorToken },
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024
    }, (error, stdout, stderr) => done({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr }))
  })

describe("fos snapshots export|import and fos serve --load", { timeout: 240_000 }, () => {
  afterAll(() => killAllFos())

  it("carry a world from one server to another by a file, and start a server with it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fos-files-"))
    after.cleanup(() => rmSync(dir, { recursive: true, force: true }))
    const seedFile = join(dir, "seed.json")
    writeFileSync(seedFile, JSON.stringify(seedOf(orgSeed("acme"), orgSeed("beta"))))
    const args = ["--store", "memory", "--port", "0", "--seed", seedFile, "--random-seed", "cli", "--quiet"]
    const key = keysOf("acme").sandbox
    const api = (origin: string, method: string, path: string, body?: unknown) =>
      fetch(`${origin}/sandbox${path}`, { method, headers: { "x-api-key": key, "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
        .then(async (r) => ({ status: r.status, json: await r.json() as any }))

    const one = await startFos(args, { FOS_OPERATOR_TOKEN: operatorToken })
    const endpoint = (await api(one.origin, "POST", "/v2/webhooks/endpoints", { url: "https://hooks.acme.test/cli" })).json
    await api(one.origin, "POST", "/v2/simulate/clock/advance", { seconds: 90 })
    const listed = (await api(one.origin, "GET", "/v2/webhooks/endpoints")).json
    const clock = (await api(one.origin, "GET", "/v2/simulate/clock")).json
    const created = await fos(one.origin, "snapshots", "create", "--org", "org_acme")
    expect(created.code, created.stderr).toBe(0)
    const snapshotId = JSON.parse(created.stdout).id as string
    const exported = await fos(one.origin, "snapshots", "export", snapshotId)
    expect(exported.code, exported.stderr).toBe(0)
    // Byte for byte the sandbox's export.
    const served = await fetch(`${one.origin}/sandbox/v2/simulate/snapshots/${snapshotId}/export`, { headers: { "x-api-key": key } })
    expect(exported.stdout).toBe(await served.text())
    const worldFile = join(dir, "world.json")
    writeFileSync(worldFile, exported.stdout)
    await one.stop()

    // Another server (the same seed, so its acme would mint the world's ids again): import, restore.
    const two = await startFos(args, { FOS_OPERATOR_TOKEN: operatorToken })
    const imported = await fos(two.origin, "snapshots", "import", "--org", "org_acme", worldFile)
    expect(imported.code, imported.stderr).toBe(0)
    const importedId = JSON.parse(imported.stdout).id as string
    expect((await fos(two.origin, "snapshots", "restore", importedId)).code).toBe(0)
    expect((await api(two.origin, "GET", "/v2/webhooks/endpoints")).json).toEqual(listed)
    expect((await api(two.origin, "GET", "/v2/simulate/clock")).json).toEqual(clock)
    // Refusals are the problem's type and detail, exit 1; a missing file is a usage error, exit 2.
    const again = await fos(two.origin, "snapshots", "import", "--org", "org_beta", worldFile)
    expect(again.code).toBe(1)
    expect(again.stderr).toContain("CONFLICT")
    const missing = await fos(two.origin, "snapshots", "import", "--org", "org_acme", join(dir, "nothing.json"))
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain("cannot read the file")
    await two.stop()

    // A server that starts with the world in place, and keeps one snapshot of it across starts of its store.
    const three = await startFos([...args, "--load", `org_acme=${worldFile}`], { FOS_OPERATOR_TOKEN: operatorToken })
    expect(three.stdout()).toMatch(new RegExp(`^loaded ${worldFile.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} into org_acme's sandbox: snapshot snp_\\w+ \\(\\d+ rows\\), restored$`, "m"))
    expect((await api(three.origin, "GET", "/v2/webhooks/endpoints")).json).toEqual(listed)
    expect((await api(three.origin, "GET", `/v2/webhooks/endpoints/${endpoint.id}`)).status).toBe(200)
    expect((await api(three.origin, "GET", "/v2/simulate/clock")).json).toEqual(clock)
    await three.stop()

    // A bad file stops the start with the problem, status 2.
    const broken = join(dir, "broken.json")
    writeFileSync(broken, JSON.stringify({ ...JSON.parse(exported.stdout), version: 7 }))
    await expect(startFos([...args, "--load", `org_acme=${broken}`])).rejects.toThrow(/--load "org_acme=.*broken\.json": UNPROCESSABLE_ENTITY: The file is version 7/)
    await expect(startFos([...args, "--load", worldFile])).rejects.toThrow(/--load is ORG=FILE/)
  })

  it("fos serve --load on a durable store restores the snapshot an earlier start made of the same file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fos-files-load-"))
    after.cleanup(() => rmSync(dir, { recursive: true, force: true }))
    const seedFile = join(dir, "seed.json")
    writeFileSync(seedFile, JSON.stringify(seedOf(orgSeed("acme"))))
    const engine = await open("memory", ["acme"])
    const acme = clientFor(engine, "acme")
    await ok(acme.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.acme.test/durable" }), 201)
    const snapshot = await engine.snapshot()
    const worldFile = join(dir, "world.json")
    writeFileSync(worldFile, await engine.exportSnapshot(snapshot.id))
    const store = join(dir, "store")
    const args = ["--store", store, "--port", "0", "--seed", seedFile, "--load", `org_acme=${worldFile}`, "--quiet"]
    const key = keysOf("acme").sandbox
    const list = (origin: string, path: string) => fetch(`${origin}/sandbox${path}`, { headers: { "x-api-key": key } }).then((r) => r.json() as Promise<any>)
    const first = await startFos(args, { FOS_OPERATOR_TOKEN: operatorToken })
    // A change after the start, which the next start's load takes back.
    await fetch(`${first.origin}/sandbox/v2/webhooks/endpoints`, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify({ url: "https://hooks.acme.test/later" }) })
    expect((await list(first.origin, "/v2/webhooks/endpoints")).data).toHaveLength(2)
    await first.stop()
    const second = await startFos(args, { FOS_OPERATOR_TOKEN: operatorToken })
    expect(second.stdout()).toMatch(/^loaded .* into org_acme's sandbox: snapshot snp_\w+ \(\d+ rows, imported at an earlier start\), restored$/m)
    expect((await list(second.origin, "/v2/webhooks/endpoints")).data).toHaveLength(1)
    expect((await list(second.origin, "/v2/simulate/snapshots")).data).toHaveLength(1)
    await second.stop()
  })
})
