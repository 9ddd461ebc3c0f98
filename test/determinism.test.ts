/**
 * A suite's result depends on its inputs alone: the same seed and requests give the same bytes whatever
 * the day and hour the run starts, on every store, and an embedded engine's deliveries verify at a real receiver.
 *
 * - A seed alone makes the clock virtual from a fixed weekday morning (Clocks.seededStartMs), so a run started on a
 *   Saturday answers what a run started on a Tuesday answers, fiat quotes and orders included: the market quotes at
 *   its last close while it is closed. The system's time is injected: a `realClock` for an embedded engine, and for
 *   `fos serve` a preload that moves the process's `Date` to another day (test/fixtures/shiftTime.mjs).
 * - The journey on the memory store, PGlite and PostgreSQL (when DATABASE_URL is set) gives the same answers and
 *   the same webhook bodies: no store reorders a stored event's keys.
 * - An embedded engine with a seed and default options signs with real time, so a receiver checking `t` against
 *   its own clock (the spec's 300 seconds) accepts every delivery.
 */
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { verifyWebhook } from "@fos/client/webhooks"
import { Timers } from "@fos/core"
import { createEngine, type Engine } from "@fos/http"
import { layerPgliteStore, layerPostgresStore } from "@fos/sql"
import { afterAll, describe, expect, it } from "vitest"
import { freshDatabase } from "../adapters/sql/test/databases.ts"
import { freshPgliteDirectory } from "../adapters/sql/test/pgliteDirectory.ts"
import { killAllFos, repoRoot, startFos } from "./fosProcess.ts"
import { acmeKey, deliveriesSettled, type Journey, journey, journeySeed, journeySeedFile, recordingReceiver, serverJourney } from "./journey.ts"

/** A Saturday afternoon, with the foreign-exchange market closed, and a Tuesday afternoon past ACH's 14:00. */
const SATURDAY = "2026-11-28T13:52:00.000Z"
const TUESDAY = "2026-12-01T14:05:00.000Z"

/** Where a seed alone starts the clock (docs/testing.md). */
const SEEDED_START = "2026-03-03T09:00:00.000Z"

interface Run {
  readonly answers: Journey["answers"]
  /** Each delivery attempt's body, by its `x-service-delivery-id`. */
  readonly deliveries: Map<string, string>
}

const expectSameRuns = (runs: ReadonlyArray<Run>) => {
  const [first, ...others] = runs as [Run, ...Array<Run>]
  expect(first.deliveries.size).toBeGreaterThan(10)
  for (const other of others) {
    expect(other.answers.map((a) => a.request)).toEqual(first.answers.map((a) => a.request))
    for (const [i, answer] of first.answers.entries()) expect(other.answers[i], answer.request).toEqual(answer)
    expect([...other.deliveries.keys()].sort()).toEqual([...first.deliveries.keys()].sort())
    for (const [id, body] of first.deliveries) expect(other.deliveries.get(id), id).toBe(body)
  }
}

/** A quote of a fiat pair answered 201, whatever the day the run started. */
const expectFiatPriced = (run: Run) => {
  const quote = run.answers.find((a) => a.request === "POST /v2/quotes")!
  expect(quote.status, quote.body).toBe(201)
  const order = run.answers.find((a) => a.request === "POST /v2/orders")!
  expect(order.status, order.body).toBe(201)
}

/** The environment that makes a `fos serve` process's system time `day` (test/fixtures/shiftTime.mjs). */
const onDay = (day: string) => ({
  NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=${pathToFileURL(resolve(repoRoot, "test/fixtures/shiftTime.mjs")).href}`,
  FOS_TEST_NOW: day
})

describe("a seed alone reproduces a run, whatever the day it starts", () => {
  afterAll(killAllFos)

  it("fos serve --random-seed, started on a Saturday and on a Tuesday: the same answers and webhook bodies, fiat priced on both", async () => {
    const receiver = await recordingReceiver()
    const seed = journeySeedFile()
    const runOn = async (day: string): Promise<Run> => {
      const fos = await startFos(["--store", "memory", "--port", "0", "--seed", seed, "--random-seed", "36", "--insecure-webhooks", "--quiet"], onDay(day))
      try {
        expect(fos.stdout()).toContain(`clock: virtual, at ${SEEDED_START}`)
        return await serverJourney(fos.origin, receiver)
      } finally {
        await fos.stop()
      }
    }
    try {
      const runs = [await runOn(SATURDAY), await runOn(TUESDAY)]
      for (const run of runs) expectFiatPriced(run)
      expectSameRuns(runs)
    } finally {
      receiver.close()
    }
  }, 240_000)

  it("fos serve on the system clock, started on a Saturday, quotes fiat pairs at the market's last close", async () => {
    const fos = await startFos(["--store", "memory", "--port", "0", "--quiet"], onDay(SATURDAY))
    try {
      expect(fos.stdout()).toMatch(/^clock: system \(real time\)$/m)
      const key = /sandbox key: (ck_sandbox_[0-9a-f]{64})/.exec(fos.stdout())![1]!
      const quote = (body: unknown) =>
        fetch(`${fos.origin}/sandbox/v2/quotes`, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify(body) })
      for (const body of [
        { source: { asset: "USD" }, target: { asset: "USDC", chain: "base" }, amount: "100", lockSide: "source" },
        { source: { asset: "EUR" }, target: { asset: "USD" }, amount: "100", lockSide: "source" },
        { source: { asset: "USDC", chain: "base" }, target: { asset: "GBP" }, amount: "100", lockSide: "source" }
      ]) {
        const reply = await quote(body)
        const text = await reply.text()
        expect(reply.status, text).toBe(201)
        // Stamped on the Saturday it runs on.
        expect(JSON.parse(text).createdAt.slice(0, 10)).toBe(SATURDAY.slice(0, 10))
      }
    } finally {
      await fos.stop()
    }
  }, 60_000)

  it("an embedded engine with a randomSeed, on a Saturday and on a Tuesday (injected real time): the same answers and webhook bodies", async () => {
    const runs: Array<Run> = []
    for (const day of [SATURDAY, TUESDAY]) {
      const engine = await createEngine({ randomSeed: 36, seed: journeySeed as never, webhookTransport: "memory", realClock: Timers.makeVirtualClock(Date.parse(day)) })
      try {
        expect(new Date(await engine.clock.now()).toISOString()).toBe(SEEDED_START)
        const result = await journey(engine.fetch, "http://fos", acmeKey, "https://hooks.acme.test/fos")
        await deliveriesSettled(engine.fetch, "http://fos", acmeKey)
        runs.push({ answers: result.answers, deliveries: new Map(engine.deliveries.list().map((d) => [d.attemptId, d.body])) })
      } finally {
        await engine.close()
      }
    }
    for (const run of runs) expectFiatPriced(run)
    expectSameRuns(runs)
  }, 120_000)
})

describe("the same bytes on every store", () => {
  const cleanups: Array<() => Promise<void>> = []
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup()
  })

  it("the journey on memory, PGlite and PostgreSQL: the same answers and webhook bodies", async () => {
    const stores: Array<{ readonly name: string; readonly store: () => Promise<Parameters<typeof createEngine>[0] & {}> }> = [
      { name: "memory", store: async () => ({}) },
      { name: "PGlite", store: async () => ({ store: layerPgliteStore(await freshPgliteDirectory("determinism")) }) }
    ]
    if (process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== "") {
      stores.push({
        name: "PostgreSQL",
        store: async () => {
          const database = await freshDatabase("determinism")
          cleanups.push(database.drop)
          return { store: layerPostgresStore(database.url) }
        }
      })
    }
    const runs: Array<Run> = []
    for (const { name, store } of stores) {
      const engine: Engine = await createEngine({ ...(await store()), randomSeed: 36, seed: journeySeed as never, webhookTransport: "memory" })
      try {
        const result = await journey(engine.fetch, "http://fos", acmeKey, "https://hooks.acme.test/fos")
        await deliveriesSettled(engine.fetch, "http://fos", acmeKey)
        runs.push({ answers: result.answers.map((a) => ({ ...a, request: a.request })), deliveries: new Map(engine.deliveries.list().map((d) => [d.attemptId, d.body])) })
      } catch (e) {
        throw new Error(`${name}: ${String(e)}`, { cause: e })
      } finally {
        await engine.close()
      }
    }
    expectSameRuns(runs)
  }, 300_000)
})

describe("an embedded engine's signatures", () => {
  it("with a seed and default options, verify at a receiver that checks t against its own clock (300 seconds)", async () => {
    const receiver = await recordingReceiver()
    const engine = await createEngine({ randomSeed: 36, seed: journeySeed as never, insecureWebhooks: true })
    try {
      const result = await journey(engine.fetch, "http://fos", acmeKey, receiver.url)
      await deliveriesSettled(engine.fetch, "http://fos", acmeKey)
      const secret = JSON.parse(result.answers[0]!.body).secret as string
      const received = receiver.take()
      expect(received.length).toBeGreaterThan(10)
      for (const delivery of received) {
        await expect(verifyWebhook(delivery.body, delivery.signature, { secret, toleranceSeconds: 300, now: delivery.atMs })).resolves.toMatchObject({ apiVersion: "2" })
      }
    } finally {
      await engine.close()
      receiver.close()
    }
  }, 120_000)
})

describe("streams of their own", () => {
  afterAll(killAllFos)

  /** Operator calls through the operator surface: an organization, a user and a key, answered in order. */
  const operatorCalls = async (fetch: (request: Request) => Promise<Response>, origin: string, token: string) => {
    const answers: Array<string> = []
    const post = async (path: string, body: unknown) => {
      const response = await fetch(new Request(`${origin}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body)
      }))
      const text = await response.text()
      expect(response.status, text).toBe(201)
      answers.push(text)
      return JSON.parse(text)
    }
    const organization = await post("/operator/organizations", { name: "Acme", status: "active" })
    const user = await post("/operator/users", { organizationId: organization.id, email: "ada@acme.test", role: "admin" })
    await post("/operator/api-keys", { organizationId: organization.id, environment: "sandbox", access: "read_write", createdBy: user.id })
    return answers
  }

  it("a server's operator calls mint what an embedded engine's mint, though the server made its demo organization first", async () => {
    const token = "operator-token-for-streams"
    const fos = await startFos(["--store", "memory", "--port", "0", "--random-seed", "36", "--operator-token", token, "--quiet"])
    let served: Array<string>
    try {
      expect(fos.stdout()).toMatch(/^demo organization org_\w+ created/m)
      served = await operatorCalls(fetch, fos.origin, token)
    } finally {
      await fos.stop()
    }
    const engine = await createEngine({ randomSeed: 36, operatorToken: token })
    try {
      expect(await operatorCalls(engine.fetch, "http://fos", token)).toEqual(served)
      // The key is minted from the seed: a fresh engine with another seed mints another.
      expect(served[2]).toMatch(/"key":"ck_sandbox_[0-9a-f]{64}"/)
    } finally {
      await engine.close()
    }
  }, 60_000)
})
