/**
 * @fos/testing (adapters/testing), each helper against an embedded engine: a world's clock and
 * snapshots, `waitForEvent` reading the event log (stepping a virtual clock only within its bound, and refusing at
 * once without one), the receiver verifying signatures and refusing what it cannot verify, fixtures built and loaded
 * from an exported file, the engine served over node:http and reached with `connect`, forks, the suite's set-up and
 * workers; and docs/testing.md's @fos/testing example, run under Vitest with 4 workers from the sources (its run
 * from the installed tarball outside the repository is test/packages.test.ts's).
 */
import { execFile } from "node:child_process"
import { createHmac } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { ProblemError } from "@fos/client"
import { connect, type FosEngine, startEngine, type World } from "@fos/testing"
import { afterEach, describe, expect, it } from "vitest"
import { testingExample, withOrganizationReport } from "./testingExample.ts"

const root = join(import.meta.dirname, "..")
const seededStart = Date.parse("2026-03-03T09:00:00.000Z")

const started: Array<FosEngine<any>> = []
afterEach(async () => {
  for (const fos of started.splice(0)) await fos.close()
})
const start = async <F = undefined>(...args: Parameters<typeof startEngine<F>>) => {
  const fos = await startEngine<F>(...args)
  started.push(fos)
  return fos
}

/** A US company's onboarding, left under review: compliance approves it by itself 5 minutes later on the clock. */
const submitOnboarding = async (world: World<unknown>) => {
  const upload = async (type: string) => {
    const form = new FormData()
    form.set("type", type)
    form.set("file", new Blob(["%PDF-1.7\n"], { type: "application/pdf" }), `${type}.pdf`)
    const answer = await world.fetch(`${world.baseUrl}/v2/documents`, { method: "POST", headers: { "x-api-key": world.apiKey }, body: form })
    expect(answer.status).toBe(201)
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

describe("startEngine and a world", () => {
  it("holds one active organization with a read-write key, seeded, on a virtual clock from the seed's instant", async () => {
    const fos = await start()
    const me = await fos.world.client.portal.me()
    expect(me.organization).toMatchObject({ id: "org_test", status: "active" })
    expect(me.apiKey).toMatchObject({ environment: "sandbox", access: "read_write" })
    expect(fos.world.organizationId).toBe("org_test")
    expect(await fos.world.now()).toBe(seededStart)
    expect(fos.world.id("cus_anything")).toBe("cus_anything")
    expect(fos.fixture).toBeUndefined()
  })

  it("gives the same ids on every start with the same seed, and others with another", async () => {
    const idsOf = async (randomSeed: number) => {
      const fos = await start({ randomSeed, organizationId: "org_same" })
      const endpoint = await fos.world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.same.test/fos" } })
      const event = await fos.world.client.simulate.emitEvent({ payload: { type: "customer.created" } })
      return [endpoint.id, endpoint.secret, event.id]
    }
    const first = await idsOf(7)
    expect(await idsOf(7)).toEqual(first)
    expect(await idsOf(8)).not.toEqual(first)
  })

  it("advances its clock by whole seconds, by a part of one, by an ISO 8601 duration and to an instant; never backwards", async () => {
    const { world } = await start({ clock: { mode: "virtual", start: "2026-01-05T09:00:00.000Z" } })
    const t0 = Date.parse("2026-01-05T09:00:00.000Z")
    expect(await world.advance("30 seconds")).toMatchObject({ from: "2026-01-05T09:00:00.000Z", now: "2026-01-05T09:00:30.000Z" })
    expect((await world.advance(1500)).now).toBe("2026-01-05T09:00:31.500Z")
    expect((await world.advanceTo("2026-01-05T10:00:00Z")).now).toBe("2026-01-05T10:00:00.000Z")
    expect((await world.advance("PT1H30M")).now).toBe("2026-01-05T11:30:00.000Z")
    expect(await world.now()).toBe(t0 + 2.5 * 3_600_000)
    await expect(world.advanceTo(t0)).rejects.toBeInstanceOf(ProblemError)
    for (const bad of [-1, "P", "PT", "P1Y", "soon"] as const) await expect(world.advance(bad as never)).rejects.toThrow(RangeError)
  })

  it("waitForEvent reads the event log, by type and by resource, with no real time passing", async () => {
    const { world } = await start()
    const a = await world.client.simulate.emitEvent({ payload: { type: "customer.created" } })
    await world.client.simulate.emitEvent({ payload: { type: "transaction.completed" } })
    const found = await world.waitForEvent({ type: "transaction.completed" })
    expect(found).toMatchObject({ type: "transaction.completed", resourceId: expect.stringMatching(/^txn_/) })
    expect(await world.waitForEvent({ type: "customer.created", resourceId: (a.data as { customerId: string }).customerId })).toMatchObject({ id: a.id })
    expect(await world.waitForEvent({ type: "customer.created", match: (e) => e.id === a.id })).toMatchObject({ id: a.id })
  })

  it("waitForEvent steps a virtual clock timer by timer within its bound, and refuses at once without one", async () => {
    const { world } = await start()
    const application = await submitOnboarding(world)
    const wanted = { type: "customer.created", resourceId: application.customerId! } as const
    const before = Date.now()
    // Without a bound nothing moves: the review is 5 minutes away on the sandbox's clock.
    await expect(world.waitForEvent(wanted)).rejects.toThrow(/its clock is virtual, so nothing happens until it moves/)
    await expect(world.waitForEvent({ ...wanted, within: "4 minutes" })).rejects.toThrow(/emitted no customer.created event about cus_\w+ by 2026-03-03T09:04:00.000Z \(0 timers fired; the next timer is due at 2026-03-03T09:05:00.000Z\)/)
    expect(await world.now()).toBe(seededStart)
    const created = await world.waitForEvent({ ...wanted, within: "1 hour" })
    expect(created).toMatchObject({ createdAt: "2026-03-03T09:05:00.000Z", data: { applicationId: application.applicationId } })
    // The clock stops at the timer that did it, not at the bound.
    expect(await world.now()).toBe(seededStart + 5 * 60_000)
    expect(Date.now() - before).toBeLessThan(5_000)
  })

  it("waitForEvent polls the log in real time under the system clock, up to its timeout", async () => {
    const { world } = await start({ clock: "system" })
    const waiting = world.waitForEvent({ type: "transaction.failed", timeoutMs: 3_000 })
    setTimeout(() => void world.client.simulate.emitEvent({ payload: { type: "transaction.failed" } }), 100)
    expect(await waiting).toMatchObject({ type: "transaction.failed" })
    await expect(world.waitForEvent({ type: "order.created", timeoutMs: 200 })).rejects.toThrow(/emitted no order.created event within 200 ms/)
  })
})

describe("the receiver", () => {
  /** A signature header as fos makes it: `t=<seconds>,v1=<HMAC-SHA256 of "t.body" keyed with the secret>`. */
  const sign = (secret: string, body: string, t: number) => `t=${t},v1=${createHmac("sha256", secret).update(`${t}.${body}`).digest("hex")}`
  const post = (url: string, body: string, signature?: string) =>
    fetch(url, { method: "POST", headers: { "content-type": "application/json", ...(signature === undefined ? {} : { "x-service-signature": signature }) }, body })

  it("verifies the engine's deliveries and records each event once; waitFor by type and by resource", async () => {
    const { world } = await start()
    const receiver = await world.startReceiver()
    expect(receiver.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/webhooks$/)
    expect(receiver.secret).toMatch(/^whsec_/)
    const customer = await world.client.simulate.emitEvent({ payload: { type: "customer.created" } })
    const transaction = await world.client.simulate.emitEvent({ payload: { type: "transaction.completed" } })
    const transactionId = (transaction.data as { transactionId: string }).transactionId
    expect(await receiver.waitFor("transaction.completed", { resourceId: transactionId })).toMatchObject({ id: transaction.id })
    expect(await receiver.waitFor("customer.created")).toMatchObject({ id: customer.id })
    // The delivery worker may have recorded either attempt before the flush began, so the flush's own list is one
    // or both; what it decides is that, once it answers, both deliveries are recorded as succeeded.
    const flushed = await world.flushWebhooks()
    expect(flushed.complete).toBe(true)
    expect(flushed.deliveries.every((d) => d.status === "succeeded")).toBe(true)
    const recorded = await world.client.webhooks.listDeliveries({ query: { endpointId: receiver.endpointId } })
    expect(recorded.data.map((d) => [d.eventId, d.status]).sort()).toEqual([[customer.id, "succeeded"], [transaction.id, "succeeded"]].sort())
    expect(receiver.events.map((e) => e.id).sort()).toEqual([customer.id, transaction.id].sort())
    expect(receiver.rejected).toEqual([])
    // A delivery sent again (a retry, or one put back by a restore) is the same event: recorded once.
    const again = JSON.stringify(receiver.events[0])
    expect((await post(receiver.url, again, sign(receiver.secret, again, Math.floor(Date.now() / 1000)))).status).toBe(200)
    expect(receiver.events).toHaveLength(2)
    await expect(receiver.waitFor("customer.restricted", { timeoutMs: 100 })).rejects.toThrow(/no customer.restricted event reached the receiver within 100 ms \(2 received\)/)
  })

  it("answers 400 to a forged, a stale, an unsigned and a malformed delivery, and records why", async () => {
    const { world } = await start()
    const receiver = await world.startReceiver()
    const body = JSON.stringify({ id: "evt_forged", type: "customer.created", createdAt: "2026-03-03T09:00:00.000Z", apiVersion: "2", mode: "sandbox", data: {} })
    const now = Math.floor(Date.now() / 1000)
    expect((await post(receiver.url, body, sign("whsec_not-the-secret", body, now))).status).toBe(400)
    expect((await post(receiver.url, body, sign(receiver.secret, body, now - 301))).status).toBe(400)
    expect((await post(receiver.url, body)).status).toBe(400)
    expect((await post(receiver.url, body, "t=abc")).status).toBe(400)
    expect(receiver.rejected.map((r) => r.reason)).toEqual(["signature_mismatch", "timestamp_too_old", "missing_signature", "malformed_signature"])
    expect(receiver.events).toEqual([])
    // The real secret over the same bytes, now: accepted.
    expect((await post(receiver.url, body, sign(receiver.secret, body, now))).status).toBe(200)
    expect(receiver.events.map((e) => e.id)).toEqual(["evt_forged"])
  })

  it("refuses every delivery until it has a secret, and stops answering once closed", async () => {
    const { startReceiver } = await import("@fos/testing")
    const receiver = await startReceiver()
    const body = JSON.stringify({ id: "evt_x", type: "customer.created", createdAt: "2026-03-03T09:00:00.000Z", apiVersion: "2", mode: "sandbox", data: {} })
    expect((await post(receiver.url, body, sign("whsec_a", body, Math.floor(Date.now() / 1000)))).status).toBe(400)
    expect(receiver.rejected.map((r) => r.reason)).toEqual(["no_secret"])
    receiver.setSecret(["whsec_b", "whsec_a"])
    expect((await post(receiver.url, body, sign("whsec_a", body, Math.floor(Date.now() / 1000)))).status).toBe(200)
    await receiver.close()
    await expect(post(receiver.url, body)).rejects.toThrow()
  })
})

describe("fixtures", () => {
  it("buildFixture saves the world built once; restore puts it back with its clock, and clears the receivers", async () => {
    const fos = await start({
      fixture: async (world) => {
        const endpoint = await world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.fixture.test/fos" } })
        await world.advance("1 hour")
        return { endpointId: endpoint.id }
      }
    })
    const { world } = fos
    expect(fos.fixture?.snapshotId).toMatch(/^snp_/)
    expect(world.fixture).toEqual({ endpointId: fos.fixture!.data.endpointId })
    const receiver = await world.startReceiver()
    await world.client.simulate.emitEvent({ payload: { type: "customer.created" } })
    await receiver.waitFor("customer.created")
    await world.advance("1 day")
    await world.restore(fos.fixture!.snapshotId)
    expect(await world.now()).toBe(seededStart + 3_600_000)
    expect(receiver.events).toEqual([])
    const { data } = await world.client.webhooks.listEndpoints({ query: {} })
    expect(data.map((e) => e.id)).toEqual([world.fixture.endpointId])
  })

  it("loadFixture imports an exported file into another engine, which starts from it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fos-testing-"))
    try {
      const source = await start({ randomSeed: 3 })
      const endpoint = await source.world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.file.test/fos" } })
      await source.world.advance("2 hours")
      const file = join(dir, "world.json")
      writeFileSync(file, await source.engine.exportSnapshot((await source.world.snapshot()).id))

      const loaded = await start({ randomSeed: 3, organizationId: "org_other", fixture: file })
      expect(loaded.fixture).toEqual({ snapshotId: expect.stringMatching(/^snp_/), data: undefined })
      expect(await loaded.world.now()).toBe(seededStart + 2 * 3_600_000)
      expect((await loaded.world.client.webhooks.listEndpoints({ query: {} })).data.map((e) => e.id)).toEqual([endpoint.id])

      // The file's JSON, parsed, does as well; and the world goes back to it after a change.
      const { loadFixture } = await import("@fos/testing")
      const third = await start({ organizationId: "org_third" })
      const fixture = await loadFixture(third.world, JSON.parse(readFileSync(file, "utf8")))
      await third.world.restore(fixture.snapshotId)
      expect((await third.world.client.webhooks.listEndpoints({ query: {} })).data.map((e) => e.id)).toEqual([endpoint.id])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("a fixture file carries its data", () => {
  it("saveFixture writes the build's answer into the file, and a world loaded from the file has it as its fixture", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fos-testing-"))
    try {
      const source = await start({
        randomSeed: 4,
        fixture: async (world) => ({ endpointId: (await world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.data.test/fos" } })).id, note: "built once" })
      })
      const { saveFixture } = await import("@fos/testing")
      const path = join(dir, "fixture.json")
      const text = await saveFixture(source.world, source.fixture!, path)
      expect(readFileSync(path, "utf8")).toBe(text)
      // One member, and one row, to a line: the data among the members, canonical.
      const lines = text.split("\n")
      expect(lines).toContain(`  "data": {"endpointId":${JSON.stringify(source.fixture!.data.endpointId)},"note":"built once"},`)
      expect(lines.filter((line) => line.startsWith("      {") && line.includes("\"id\":\"wep_"))).toHaveLength(1)

      const loaded = await start<{ endpointId: string; note: string }>({ randomSeed: 4, organizationId: "org_other", fixture: path })
      expect(loaded.fixture).toEqual({ snapshotId: expect.stringMatching(/^snp_/), data: source.fixture!.data })
      expect(loaded.world.fixture).toEqual(source.fixture!.data)
      expect((await loaded.world.client.webhooks.listEndpoints({ query: {} })).data.map((e) => e.id)).toEqual([loaded.world.fixture.endpointId])
      // The import kept the data with its snapshot: the snapshot's export writes it again.
      const again = JSON.parse(await loaded.engine.exportSnapshot(loaded.fixture!.snapshotId))
      expect(again.data).toEqual(source.fixture!.data)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("serveEngine and connect", () => {
  it("serves the engine over node:http: the same answers, problems and streamed bodies; connect learns the organization", async () => {
    const fos = await start()
    const served = await fos.serve()
    expect(served.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/sandbox$/)
    const world = await connect({ baseUrl: served.baseUrl, apiKey: fos.world.apiKey })
    expect(world.organizationId).toBe("org_test")
    await world.client.simulate.emitEvent({ payload: { type: "customer.created" } })
    expect(await world.waitForEvent({ type: "customer.created" })).toMatchObject({ type: "customer.created" })
    // A problem keeps its status, type and the origin it was asked at.
    const missing = await fetch(`${served.baseUrl}/v2/customers/cus_nobody`, { headers: { "x-api-key": world.apiKey } })
    expect(missing.status).toBe(404)
    expect(await missing.json()).toMatchObject({ type: "CUSTOMER_NOT_FOUND", docs: expect.stringContaining(served.origin) })
    // A streamed answer (the live stream) flows until the client goes.
    const stream = await fetch(`${served.baseUrl}/v2/simulate/stream`, { headers: { "x-api-key": world.apiKey } })
    expect(stream.headers.get("content-type")).toMatch(/text\/event-stream/)
    const reader = stream.body!.getReader()
    await world.client.simulate.emitEvent({ payload: { type: "transaction.failed" } })
    let text = ""
    while (!text.includes("transaction.failed")) text += new TextDecoder().decode((await reader.read()).value)
    await reader.cancel()
    await expect(connect({ baseUrl: served.baseUrl, apiKey: "ck_sandbox_" + "0".repeat(64) })).rejects.toMatchObject({ status: 401 })
    await served.close()
  })
})

// --- forks -------------------------------------------------------------------------------------------------------

describe("forks", () => {
  it("forkWorld: a new organization with the snapshot's world under new ids, its own clock and key; discard deletes it", async () => {
    const { forkWorld } = await import("@fos/testing")
    const fos = await start({
      fixture: async (world) => ({ application: await submitOnboarding(world) })
    })
    const { world } = fos
    const forked = await forkWorld(world, fos.fixture!.snapshotId)
    expect(forked.organizationId).not.toBe(world.organizationId)
    const { applicationId, customerId } = world.fixture.application
    const forkApplication = forked.id(applicationId)
    expect(forkApplication).toMatch(/^app_/)
    expect(forkApplication).not.toBe(applicationId)
    expect(forked.fixture.application.applicationId).toBe(forkApplication)
    expect(forked.fixture.application.customerId).toBe(forked.id(customerId!))
    expect((await forked.client.applications.get({ params: { id: forkApplication } })).status).toBe("open")
    // Its clock is its own: the review fires in the fork, and the parent's application stays open.
    const created = await forked.waitForEvent({ type: "customer.created", resourceId: forked.id(customerId!), within: "1 hour" })
    expect(created.createdAt).toBe("2026-03-03T09:05:00.000Z")
    expect(await world.now()).toBe(seededStart)
    expect((await world.client.applications.get({ params: { id: applicationId } })).status).toBe("open")
    await forked.discard()
    await expect(forked.client.portal.me()).rejects.toMatchObject({ status: 401 })
  })

  it("startSuite forks one world per worker in order; joinSuite restores a worker's world; eachTest restores the file's start", async () => {
    const { eachTest, joinSuite, startSuite } = await import("@fos/testing")
    const run = async () => {
      const suite = await startSuite({ randomSeed: 5, workers: 3, fixture: async (world) => ({ application: await submitOnboarding(world) }) })
      try {
        expect(suite.info.worlds).toHaveLength(3)
        const orgs = suite.info.worlds.map((w) => w.fork.organizationId)
        expect(new Set(orgs).size).toBe(3)
        const { world, leave } = await joinSuite(suite.info, 2)
        expect(world.organizationId).toBe(orgs[1])
        await world.advance("1 hour")
        await leave()
        // The next file in worker 2 starts from the fork's making again.
        const again = await joinSuite(suite.info, 2)
        expect(await again.world.now()).toBe(seededStart)
        const hooks = eachTest(again.world)
        await hooks.beforeEach()
        await again.world.advance("1 hour")
        await hooks.beforeEach()
        expect(await again.world.now()).toBe(seededStart)
        await hooks.after()
        await again.leave()
        // A worker past the forks made forks its own, which leave deletes.
        const extra = await joinSuite(suite.info, 9)
        expect(orgs).not.toContain(extra.world.organizationId)
        await extra.leave()
        return { orgs, ids: suite.info.worlds.map((w) => w.fork.ids) }
      } finally {
        await suite.close()
      }
    }
    // With a seed, worker N gets the same organization and ids every run.
    expect(await run()).toEqual(await run())
  })
})

describe("what a test file loads", () => {
  it("takes its world, saves and restores it, and deletes it with none of Effect, the contract's schemas, the client or the engine; its first typed call loads the client", async () => {
    const { startSuite } = await import("@fos/testing")
    const suite = await startSuite({ randomSeed: 4 })
    try {
      // A test file's process, as a runner starts one: its modules listed by Node's module hooks, before and after
      // the first call of the typed client.
      const child = `
import { registerHooks } from "node:module"
const loaded = []
registerHooks({ load: (url, context, next) => (loaded.push(url), next(url, context)) })
const { eachTest, joinSuite } = await import("@fos/testing")
const { world, leave } = await joinSuite(JSON.parse(process.env.SUITE), undefined, { stream: "loads.test.ts" })
const hooks = eachTest(world)
await hooks.beforeEach("first")
hooks.afterEach("first")
await hooks.beforeEach("second")
hooks.afterEach("second")
await hooks.after()
const before = loaded.length
const { data } = await world.client.webhooks.listEndpoints({ query: {} })
await leave()
console.log(JSON.stringify({ before: loaded.slice(0, before), after: loaded.slice(before), endpoints: data.length }))
`
      const { stdout } = await exec(process.execPath, ["--conditions=@fos/source", "--input-type=module", "-e", child], {
        cwd: root,
        env: { ...process.env, SUITE: JSON.stringify(suite.info) },
        timeout: 60_000
      })
      const { before, after, endpoints } = JSON.parse(stdout.trim().split("\n").at(-1)!) as { before: Array<string>; after: Array<string>; endpoints: number }
      expect(endpoints).toBe(0)
      expect(before.some((url) => url.includes("/adapters/testing/src/Requests.ts"))).toBe(true)
      const heavy = (url: string) =>
        url.includes("/node_modules/effect/") || url.includes("/packages/core/") || url.includes("/packages/http/") ||
        url.includes("/packages/client/") || (url.includes("/packages/contract/") && !url.endsWith("/simulate/Limits.ts"))
      expect(before.filter(heavy)).toEqual([])
      expect(after.some((url) => url.includes("/packages/client/src/Client.ts"))).toBe(true)
      expect(after.some((url) => url.includes("/node_modules/effect/"))).toBe(true)
      expect(after.filter((url) => url.includes("/packages/core/") || url.includes("/packages/http/"))).toEqual([])
    } finally {
      await suite.close()
    }
  }, 60_000)
})

describe("a suite on a running server", () => {
  it("builds its fixture and forks in the key's organization, and its teardown deletes the forks and the fixture's snapshot", async () => {
    const { startSuite, joinSuite } = await import("@fos/testing")
    const server = await start({ randomSeed: 11 })
    const served = await server.serve()
    const suite = await startSuite({
      server: { baseUrl: served.baseUrl, apiKey: server.world.apiKey },
      workers: 2,
      fixture: async (world) => ({ endpointId: (await world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.suite.test/fos" } })).id })
    })
    expect(suite.info).toMatchObject({ baseUrl: served.baseUrl, organizationId: "org_test", fixture: { endpointId: expect.stringMatching(/^wep_/) } })
    const { world, leave } = await joinSuite(suite.info, 1)
    expect((await world.client.webhooks.listEndpoints({ query: {} })).data.map((e) => e.id)).toEqual([world.id(suite.info.fixture.endpointId)])
    await leave()
    const parent = server.world.client.simulate
    expect((await parent.listForks()).data).toHaveLength(2)
    await suite.close()
    expect((await parent.listForks()).data).toEqual([])
    await expect(parent.getSnapshot({ params: { id: suite.info.snapshotId } })).rejects.toMatchObject({ status: 404 })
  })
})

describe("the node:test adapter", () => {
  it("forks a world per test file from the set-up's fixture, and restores the file's start before each test", async () => {
    const dir = mkdtempSync(join(root, ".readme-examples-node-test-"))
    try {
      writeFileSync(join(dir, "fos.setup.ts"), `import { fosGlobalSetup } from "@fos/testing/node-test"
export const { globalSetup, globalTeardown } = fosGlobalSetup({
  randomSeed: 3,
  fixture: async (world) => ({ endpointId: (await world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.node.test/fos" } })).id })
})
`)
      const testFile = `import assert from "node:assert/strict"
import { appendFileSync } from "node:fs"
import { test } from "node:test"
import { useWorld } from "@fos/testing/node-test"

const world = await useWorld<{ endpointId: string }>()

test("holds the fixture's endpoint under the fork's id, and moves its own clock", async () => {
  const { data } = await world.client.webhooks.listEndpoints({ query: {} })
  assert.deepEqual(data.map((e) => e.id), [world.fixture.endpointId])
  await world.advance("1 hour")
  appendFileSync("organizations.txt", world.organizationId + " " + world.fixture.endpointId + "\\n")
})

test("starts again from the file's start", async () => {
  assert.equal(await world.now(), Date.parse("2026-03-03T09:00:00.000Z"))
})
`
      writeFileSync(join(dir, "a.test.ts"), testFile)
      writeFileSync(join(dir, "b.test.ts"), testFile)
      const result = await exec(process.execPath, ["--conditions=@fos/source", "--test", "--test-reporter=tap", "--test-global-setup=fos.setup.ts", "a.test.ts", "b.test.ts"], { cwd: dir, timeout: 120_000 })
        .catch((e: { stdout?: string; stderr?: string }) => {
          throw new Error(`${e.stdout ?? ""}\n${e.stderr ?? ""}`)
        })
      expect(result.stdout).toMatch(/# pass 4\n/)
      const lines = readFileSync(join(dir, "organizations.txt"), "utf8").trim().split("\n").map((line) => line.split(" "))
      expect(lines).toHaveLength(2)
      expect(new Set(lines.map(([organization]) => organization)).size).toBe(2)
      expect(new Set(lines.map(([, endpoint]) => endpoint)).size).toBe(2)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})

// --- docs/testing.md's example ------------------------------------------------------------------------------------------

const exec = promisify(execFile)

describe("docs/testing.md's @fos/testing example", () => {
  it("runs under Vitest with 4 workers, each test file in its own organization", async () => {
    const files = testingExample()
    expect(Object.keys(files).sort()).toEqual(["fos.setup.ts", "onboarding.test.ts", "vitest.config.ts"])
    const dir = mkdtempSync(join(root, ".readme-examples-testing-"))
    try {
      // The example's config, with the repository's packages read from their sources (the "@fos/source" condition) in
      // every environment Vitest resolves in: the tests', and its own, where the global setup runs.
      writeFileSync(join(dir, "readme.config.ts"), files["vitest.config.ts"]!)
      writeFileSync(join(dir, "vitest.config.ts"), `import { mergeConfig } from "vitest/config"
import readme from "./readme.config.ts"
const conditions = ["@fos/source", "module", "node", "development|production"]
export default mergeConfig(readme, {
  resolve: { conditions }, ssr: { resolve: { conditions } }, environments: { __vitest__: { resolve: { conditions } } },
  // Timing is not what is checked: on a busy machine, 4 workers on 2 cores take longer than Vitest's 5 seconds.
  test: { include: ["*.test.ts"], testTimeout: 60_000, hookTimeout: 60_000 }
})
`)
      writeFileSync(join(dir, "fos.setup.ts"), files["fos.setup.ts"]!)
      const orgs = join(dir, "organizations.txt")
      for (const n of [1, 2, 3, 4]) writeFileSync(join(dir, `onboarding-${n}.test.ts`), withOrganizationReport(files["onboarding.test.ts"]!))
      const report = join(dir, "report.json")
      const result = await exec(process.execPath, [join(root, "node_modules/vitest/vitest.mjs"), "run", "--root", dir, "--maxWorkers=4", "--reporter=json", `--outputFile=${report}`], {
        cwd: dir,
        timeout: 120_000
      }).catch((e: { stdout?: string; stderr?: string }) => {
        // The JSON reporter prints nothing but where it wrote: the failures are in its report.
        const failures = existsSync(report)
          ? (JSON.parse(readFileSync(report, "utf8")) as { testResults: ReadonlyArray<{ assertionResults: ReadonlyArray<{ fullName: string; failureMessages: ReadonlyArray<string> }> }> })
            .testResults.flatMap((file) => file.assertionResults).flatMap((test) => test.failureMessages.map((message) => `${test.fullName}: ${message}`))
          : []
        throw new Error(`${e.stdout ?? ""}\n${e.stderr ?? ""}\n${failures.join("\n")}`)
      })
      const json = JSON.parse(readFileSync(report, "utf8")) as { numTotalTests: number; numPassedTests: number }
      expect(json.numTotalTests, result.stdout).toBe(8)
      expect(json.numPassedTests).toBe(8)
      const lines = readFileSync(orgs, "utf8").trim().split("\n")
      expect(lines).toHaveLength(4)
      expect(new Set(lines.map((l) => l.split(" ")[0])).size).toBe(4) // 4 workers
      expect(new Set(lines.map((l) => l.split(" ")[1])).size).toBe(4) // 4 organizations
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 180_000)
})
