/**
 * @fos/testing's worlds guarding themselves, each against an embedded engine: tests of one file run concurrently
 * sharing one starting point (taken once, none left behind); a restore waiting for a request a test did not await;
 * two files refused one world; a suite's saves labelled with their owner and expiry, swept by the next set-up after
 * a run killed before its teardown, and torn down by SIGINT and SIGTERM; a fixture file's import and its forks swept
 * alike; a timed-out wait rewinding what it
 * stepped; `waitForEvent`'s `after`; `startReceiver`'s port.
 */
import { spawn } from "node:child_process"
import { once } from "node:events"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { eachTest, type FosEngine, formatSaveLabel, joinSuite, parseSaveLabel, saveFixture, startEngine, startReceiver, startSuite, type World } from "@fos/testing"
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { storeMakers } from "./stores.ts"

const root = join(import.meta.dirname, "..")
const seededStart = Date.parse("2026-03-03T09:00:00.000Z")

const started: Array<{ close: () => Promise<void> }> = []
afterEach(async () => {
  for (const fos of started.splice(0).reverse()) await fos.close()
})
const start = async (...args: Parameters<typeof startEngine>) => {
  const fos = await startEngine(...args)
  started.push(fos)
  return fos
}

const snapshotsOf = async (world: World<unknown>) => (await world.client.simulate.listSnapshots({ query: { limit: 100 } })).data

/** A US company's onboarding, left under review: compliance approves it by itself 5 minutes later on the clock. */
const submitOnboarding = async (world: World<unknown>) => {
  const upload = async (type: string) => {
    const form = new FormData()
    form.set("type", type)
    form.set("file", new Blob(["%PDF-1.7\n"], { type: "application/pdf" }), `${type}.pdf`)
    const answer = await world.fetch(`${world.baseUrl}/v2/documents`, { method: "POST", headers: { "x-api-key": world.apiKey }, body: form })
    return ((await answer.json()) as { id: string }).id
  }
  const address = { line1: "100 Market Street", city: "San Francisco", state: "CA", postalCode: "94105", country: "USA" }
  return world.client.onboarding.submit({
    payload: {
      country: "USA",
      businessInfo: { legalName: "Widgets LLC", taxId: "12-3456789", incorporationDate: "2020-01-15", registeredAddress: address },
      documentIds: [await upload("certificate_of_incorporation")],
      ownership: {
        persons: [{
          referenceId: "owner-1",
          roles: ["owner", "controller"],
          ownershipPercent: 100,
          firstName: "Ada",
          lastName: "Lovelace",
          dateOfBirth: "1985-06-15",
          nationality: "USA",
          email: "ada@widgets.test",
          address,
          taxId: "123-45-6789",
          documentIds: [await upload("passport")]
        }]
      },
      companyClassification: { legalStructure: "llc", primaryIndustry: "software" }
    }
  }, { idempotencyKey: "onboarding" })
}

describe("tests of one file under describe.concurrent", () => {
  let fos: FosEngine
  let hooks: ReturnType<typeof eachTest>
  const held: Array<number> = []
  beforeAll(async () => {
    fos = await startEngine()
    hooks = eachTest(fos.world)
  })
  afterAll(async () => {
    await hooks.after()
    // One save served all seven, and none is left.
    expect(held.every((n) => n === 1)).toBe(true)
    expect(await snapshotsOf(fos.world)).toEqual([])
    await fos.close()
  })
  describe.concurrent("seven at once, more than Vitest runs together (5)", () => {
    beforeEach((context) => hooks.beforeEach(context.task.name))
    afterEach((context) => hooks.afterEach(context.task.name))
    for (let n = 1; n <= 7; n++) {
      it(`test ${n}`, async ({ expect }) => {
        await fos.world.client.webhooks.createEndpoint({ payload: { url: `https://hooks.concurrent.test/${n}` } })
        held.push((await snapshotsOf(fos.world)).length)
        expect(held.at(-1)).toBe(1)
      })
    }
  })
})

describe("eachTest", () => {
  it("tests that start together share one save; one that starts while they run waits for them, then restores", async () => {
    const { world } = await start()
    const hooks = eachTest(world)
    await Promise.all([hooks.beforeEach("a"), hooks.beforeEach("b")])
    expect(await snapshotsOf(world)).toHaveLength(1)
    await world.advance("1 hour")
    let cStarted = false
    const c = hooks.beforeEach("c").then(() => {
      cStarted = true
    })
    hooks.afterEach("a")
    await world.now()
    await world.now()
    expect(cStarted).toBe(false) // b still runs: a restore now would undo it
    hooks.afterEach("b")
    await c
    expect(await world.now()).toBe(seededStart)
    expect(await snapshotsOf(world)).toHaveLength(1)
    hooks.afterEach("c")
    await hooks.after()
    expect(await snapshotsOf(world)).toEqual([])
  })

  it("a restore waits for a request the previous test did not await, and names it; past settleMs it refuses", async () => {
    const { world } = await start()
    const reports: Array<unknown> = []
    const hooks = eachTest(world, { onWaited: (report) => reports.push(report) })
    await hooks.beforeEach("first")
    await world.client.faults.createFault({ payload: { match: { method: "POST", path: "/v2/webhooks/endpoints" }, effect: { type: "latency", ms: 300 }, count: 1 } })
    void world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.forgotten.test/fos" } }) // not awaited
    expect(world.pending()).toMatchObject([{ method: "POST", path: "/sandbox/v2/webhooks/endpoints" }])
    hooks.afterEach("first")
    await hooks.beforeEach("second")
    expect(reports).toMatchObject([{ test: "second", previous: "first", requests: [{ method: "POST", path: "/sandbox/v2/webhooks/endpoints" }] }])
    // The endpoint landed before the restore, which removed it: the second test's world is the start.
    expect((await world.client.webhooks.listEndpoints({ query: {} })).data).toEqual([])
    expect(world.pending()).toEqual([])
    hooks.afterEach("second")

    await world.client.faults.createFault({ payload: { match: { method: "POST", path: "/v2/webhooks/endpoints" }, effect: { type: "latency", ms: 2_000 }, count: 1 } })
    const slow = world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.slow.test/fos" } })
    const snapshot = (await snapshotsOf(world))[0]!
    await expect(world.restore(snapshot.id, { settleMs: 20 })).rejects.toThrow(/refusing to restore snp_\w+ while POST \/sandbox\/v2\/webhooks\/endpoints is still in flight/)
    await slow
    await hooks.after()
  })
})

describe("two files on one world", () => {
  it("a file cannot take a world another file holds, whether it comes after or at the same time", async () => {
    const suite = await startSuite({ workers: 1 })
    started.push(suite)
    const a = await joinSuite(suite.info, 1, { file: "test/a.test.ts" })
    const aHooks = eachTest(a.world, { claim: a.claim })
    await aHooks.beforeEach("a's first")
    await a.world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.a.test/fos" } })
    await expect(joinSuite(suite.info, 1, { file: "test/b.test.ts" })).rejects.toThrow(
      /test\/b\.test\.ts and test\/a\.test\.ts take the same world \(org_\w+; test\/a\.test\.ts saved its starting point snp_\w+ in it\)/
    )
    // b was refused before it restored anything: a's endpoint is still there.
    expect((await a.world.client.webhooks.listEndpoints({ query: {} })).data).toHaveLength(1)
    aHooks.afterEach("a's first")
    await aHooks.after()
    await a.leave()

    // Both join while the world is free; the first to save its starting point keeps it.
    const c = await joinSuite(suite.info, 1, { file: "test/c.test.ts" })
    const d = await joinSuite(suite.info, 1, { file: "test/d.test.ts" })
    const cHooks = eachTest(c.world, { claim: c.claim })
    await cHooks.beforeEach("c's first")
    await expect(eachTest(d.world, { claim: d.claim }).beforeEach("d's first")).rejects.toThrow(/test\/d\.test\.ts and test\/c\.test\.ts take the same world/)
    expect((await snapshotsOf(c.world)).map((s) => parseSaveLabel(s.label)?.file)).toEqual(["test/c.test.ts", undefined])
    cHooks.afterEach("c's first")
    await cHooks.after()
    // Once c is done, the world is free again.
    const e = await joinSuite(suite.info, 1, { file: "test/e.test.ts" })
    await e.leave()
  })
})

describe("a snapshot's label", () => {
  // PGlite keeps rows as PostgreSQL does (SqlStore.ts, one `json` column per row): not started again here, for its start's cost.
  for (const [name, make] of Object.entries(storeMakers("testing_guards_label")).filter(([name]) => name !== "PGlite")) {
    it(`is kept with the snapshot on ${name}: read, listed, exported; an import's too; past 200 characters a 400 that writes nothing`, async () => {
      const made = await make()
      try {
        const { world } = await start({ engine: { store: made.store } })
        const label = formatSaveLabel({ owner: "suite", role: "start", expires: "2026-12-02T06:00:00.000Z", file: "test/a.test.ts" })
        const taken = await world.snapshot({ label })
        expect(taken.label).toBe(label)
        expect(await world.client.simulate.getSnapshot({ params: { id: taken.id } })).toMatchObject({ label })
        expect(await snapshotsOf(world)).toMatchObject([{ id: taken.id, label }])
        const exported = await (await world.fetch(`${world.baseUrl}/v2/simulate/snapshots/${taken.id}/export`, { headers: { "x-api-key": world.apiKey } })).json()
        expect(exported).toMatchObject({ snapshot: { label } })
        expect(parseSaveLabel(label)).toEqual({ owner: "suite", role: "start", expires: "2026-12-02T06:00:00.000Z", file: "test/a.test.ts" })
        // Sent as it is (the typed client checks the query itself): the service's own refusal.
        const tooLong = await world.fetch(`${world.baseUrl}/v2/simulate/snapshots?label=${"x".repeat(201)}`, { method: "POST", headers: { "x-api-key": world.apiKey } })
        expect(tooLong.status).toBe(400)
        expect(await tooLong.json()).toMatchObject({ type: "VALIDATION_ERROR" })
        expect(await snapshotsOf(world)).toHaveLength(1)
        const plain = await world.snapshot()
        expect(plain).not.toHaveProperty("label")

        // An import takes a label as a save does; its export is the file it came from, the file's own label and all.
        const importLabel = formatSaveLabel({ owner: "suite", role: "fixture", expires: "2026-12-02T06:00:00.000Z" })
        const importing = (query: string) =>
          world.fetch(`${world.baseUrl}/v2/simulate/snapshots/import${query}`, { method: "POST", headers: { "x-api-key": world.apiKey, "content-type": "application/json" }, body: JSON.stringify(exported) })
        const imported = await importing(`?label=${encodeURIComponent(importLabel)}`)
        expect(imported.status).toBe(201)
        const importedId = ((await imported.json()) as { id: string; label: string }).id
        expect(await world.client.simulate.getSnapshot({ params: { id: importedId } })).toMatchObject({ label: importLabel })
        expect((await snapshotsOf(world)).find((s) => s.id === importedId)).toMatchObject({ label: importLabel })
        const importedExport = await (await world.fetch(`${world.baseUrl}/v2/simulate/snapshots/${importedId}/export`, { headers: { "x-api-key": world.apiKey } })).json()
        expect(importedExport).toMatchObject({ snapshot: { label } })
        const importTooLong = await importing(`?label=${"x".repeat(201)}`)
        expect(importTooLong.status).toBe(400)
        expect(await importTooLong.json()).toMatchObject({ type: "VALIDATION_ERROR" })
        expect(await snapshotsOf(world)).toHaveLength(3)
      } finally {
        for (const fos of started.splice(0).reverse()) await fos.close()
        await made.cleanup()
      }
    })
  }
})

describe("a suite on a running server cleans up after itself", () => {
  it("labels its saves; SIGINT and SIGTERM run the teardown; the next set-up sweeps what a killed run left", async () => {
    const server = await start({ randomSeed: 21 })
    const served = await server.serve()
    const parent = server.world
    // Another suite's saves: one whose run is over (expired), one still running, and a save of no suite.
    const past = new Date(Date.now() - 60_000).toISOString()
    const future = new Date(Date.now() + 3_600_000).toISOString()
    const expired = await parent.snapshot({ label: formatSaveLabel({ owner: "other", role: "fixture", expires: past }) })
    const running = await parent.snapshot({ label: formatSaveLabel({ owner: "other", role: "fixture", expires: future }) })
    const mine = await parent.snapshot()

    const dir = mkdtempSync(join(root, ".testing-guards-"))
    try {
      writeFileSync(join(dir, "suite.ts"), `import { startSuite } from "@fos/testing"
await startSuite({ server: { baseUrl: ${JSON.stringify(served.baseUrl)}, apiKey: ${JSON.stringify(parent.apiKey)} }, workers: 2, owner: process.argv[2] })
console.log("ready")
setInterval(() => {}, 1_000)
`)
      const run = async (owner: string, signal: NodeJS.Signals) => {
        const child = spawn(process.execPath, ["--conditions=@fos/source", "suite.ts", owner], { cwd: dir, stdio: ["ignore", "pipe", "inherit"] })
        let out = ""
        child.stdout.setEncoding("utf8")
        await new Promise<void>((resolve, reject) => {
          child.stdout.on("data", (chunk: string) => {
            out += chunk
            if (out.includes("ready")) resolve()
          })
          child.once("exit", (code) => reject(new Error(`the suite exited (${code}) before it was ready: ${out}`)))
        })
        const exited = once(child, "exit")
        child.kill(signal)
        return exited
      }
      const ownerOf = async () => {
        const snapshots = await snapshotsOf(parent)
        const owners = new Map(snapshots.map((s) => [s.id, parseSaveLabel(s.label)?.owner]))
        return {
          snapshots: snapshots.map((s) => parseSaveLabel(s.label)?.owner ?? s.id),
          forks: (await parent.client.simulate.listForks()).data.map((f) => owners.get(f.snapshotId))
        }
      }
      const [[interrupted], [terminated], [killed]] = await Promise.all([run("interrupted", "SIGINT"), run("terminated", "SIGTERM"), run("killed", "SIGKILL")])
      // The signal ends the process after the teardown, as it would have without one.
      expect([interrupted, terminated, killed]).toEqual([null, null, null])
      const left = await ownerOf()
      expect(left.forks).toEqual(["killed", "killed"])
      expect(left.snapshots.filter((o) => o === "killed")).toHaveLength(1)
      expect(left.snapshots).not.toContain("interrupted")
      expect(left.snapshots).not.toContain("terminated")

      // The next run of the killed suite sweeps what it left, and the other suite's expired save; nothing else.
      const again = await startSuite({ server: { baseUrl: served.baseUrl, apiKey: parent.apiKey }, workers: 1, owner: "killed", teardownOnSignal: false })
      const now = await ownerOf()
      expect(now.forks).toEqual(["killed"])
      expect(now.snapshots.sort()).toEqual(["killed", "other", mine.id].sort())
      expect((await snapshotsOf(parent)).map((s) => s.id)).toEqual(expect.arrayContaining([running.id, mine.id, again.info.snapshotId]))
      expect((await snapshotsOf(parent)).map((s) => s.id)).not.toContain(expired.id)
      // In a fork: its making, labelled; the suite's tests have 20 less the package's saves (docs/testing.md).
      const { world, leave } = await joinSuite(again.info, 1)
      expect((await snapshotsOf(world)).map((s) => parseSaveLabel(s.label)?.role)).toEqual(["making"])
      await leave()
      await again.close()
      expect((await ownerOf()).forks).toEqual([])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)

  it("a run with a fixture file: what a run stopped before its teardown left, or whose files never left, the next set-up sweeps", async () => {
    const source = await start({
      randomSeed: 8,
      organizationId: "org_source",
      fixture: async (world) => ({ endpointId: (await world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.sweep.test/fos" } })).id })
    })
    const server = await start({ randomSeed: 21 })
    const served = await server.serve()
    const parent = server.world
    const dir = mkdtempSync(join(root, ".testing-guards-"))
    try {
      const path = join(dir, "world.json")
      await saveFixture(source.world, source.fixture!, path)
      const options = { server: { baseUrl: served.baseUrl, apiKey: parent.apiKey }, fixture: path, workers: 0, owner: "filed", teardownOnSignal: false } as const
      const file = "test/filed.test.ts"
      const held = async () => ({
        snapshots: (await snapshotsOf(parent)).map((s) => s.id),
        forks: (await parent.client.simulate.listForks()).data.map((f) => f.snapshotId)
      })
      // A run killed before its teardown and before its file left (kill -9): the import and the file's fork stay.
      const killed = await startSuite(options)
      await joinSuite(killed.info, undefined, { file, stream: file })
      expect(await held()).toEqual({ snapshots: [killed.info.snapshotId], forks: [killed.info.snapshotId] })

      // The next run forks the same file's stream: the set-up swept the killed run's fork and import first.
      const stopped = await startSuite<{ endpointId: string }>(options)
      const joined = await joinSuite(stopped.info, undefined, { file, stream: file })
      expect(await held()).toEqual({ snapshots: [stopped.info.snapshotId], forks: [stopped.info.snapshotId] })
      expect(parseSaveLabel((await snapshotsOf(parent))[0]!.label)).toMatchObject({ owner: "filed", role: "fixture" })
      expect((await joined.world.client.webhooks.listEndpoints({ query: {} })).data.map((e) => e.id)).toEqual([joined.world.fixture.endpointId])

      // A run whose teardown ran while its file never left (the worker killed): the forks of the import go with it.
      await stopped.close()
      expect(await held()).toEqual({ snapshots: [], forks: [] })
      const again = await startSuite(options)
      const rejoined = await joinSuite(again.info, undefined, { file, stream: file })
      expect(await held()).toEqual({ snapshots: [again.info.snapshotId], forks: [again.info.snapshotId] })
      await rejoined.leave()
      await again.close()
      expect(await held()).toEqual({ snapshots: [], forks: [] })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})

describe("waits and the receiver", () => {
  it("a wait that times out puts the sandbox back as it found it, unless onTimeout says keep", async () => {
    const { world } = await start()
    const application = await submitOnboarding(world)
    const never = { type: "customer.created", match: () => false, within: "1 hour" } as const
    await expect(world.waitForEvent(never)).rejects.toThrow(/emitted no customer.created event that matches by 2026-03-03T10:00:00.000Z \(1 timers fired; no timer is pending\); the sandbox is back as the wait found it/)
    expect(await world.now()).toBe(seededStart)
    expect((await world.client.inspect.listEvents({ query: { type: "customer.created" } })).data).toEqual([])
    expect(await snapshotsOf(world)).toEqual([])
    // Found: the clock stays where the timer that did it put it.
    expect(await world.waitForEvent({ type: "customer.created", within: "1 hour" })).toMatchObject({ data: { applicationId: application.applicationId } })
    expect(await world.now()).toBe(seededStart + 5 * 60_000)
    expect(await snapshotsOf(world)).toEqual([])

    const other = await start({ organizationId: "org_keep" })
    await submitOnboarding(other.world)
    await expect(other.world.waitForEvent({ ...never, onTimeout: "keep" })).rejects.toThrow(/1 timers fired; no timer is pending\)$/)
    expect(await other.world.now()).toBe(seededStart + 5 * 60_000)
  })

  it("waitForEvent's after: only what is logged after the wait began, or after a given event", async () => {
    const { world } = await start()
    const old = await world.client.simulate.emitEvent({ payload: { type: "customer.created" } })
    expect(await world.waitForEvent({ type: "customer.created" })).toMatchObject({ id: old.id }) // the default: the whole log
    await expect(world.waitForEvent({ type: "customer.created", after: "now" })).rejects.toThrow(/no customer.created event logged after the wait began/)
    const application = await submitOnboarding(world)
    expect(await world.waitForEvent({ type: "customer.created", after: "now", within: "1 hour" })).toMatchObject({ data: { applicationId: application.applicationId } })
    const next = await world.client.simulate.emitEvent({ payload: { type: "transaction.completed" } })
    const last = await world.client.simulate.emitEvent({ payload: { type: "customer.created" } })
    expect(await world.waitForEvent({ type: "customer.created", after: next })).toMatchObject({ id: last.id })
    await expect(world.waitForEvent({ type: "customer.created", after: "evt_nothere" })).rejects.toThrow(/after names evt_nothere, which is not in/)
  })

  it("startReceiver listens on the port it is given", async () => {
    const free = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number }
        probe.close(() => resolve(port))
      })
    })
    const receiver = await startReceiver({ port: free })
    started.push(receiver)
    expect(receiver.url).toBe(`http://127.0.0.1:${free}/webhooks`)
    await expect(startReceiver({ port: free })).rejects.toThrow(/EADDRINUSE/)
    const { world } = await start()
    const registered = await world.startReceiver({ port: 0, eventTypes: ["customer.created"] })
    expect(registered.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/webhooks$/)
  })
})
