/**
 * Seeded, reproducible runs: one scripted journey (onboarding, a wallet, a virtual account,
 * deposits, an order, a payout, webhooks and clock advances) run twice against two fresh seeded servers, and twice
 * against two fresh seeded embedded engines, answers every request with the same bytes and delivers the same
 * webhook bodies. One organization's answers do not change when another organization's traffic is added; without a
 * seed, two runs differ, and secrets do not come from Math.random. docs/testing.md names the fields that may still
 * differ and why.
 */
import { createEngine, type Engine } from "@fos/http"
import { layerPgliteStore } from "@fos/sql"
import { afterAll, describe, expect, it, vi } from "vitest"
import { parseServeArgs, UsageError } from "../adapters/serve/src/Options.ts"
import { killAllFos, startFos } from "./fosProcess.ts"
import { acmeKey, deliveriesSettled, idsIn, journey, journeySeed, journeySeedFile, recordingReceiver, rivalKey, serverJourney } from "./journey.ts"
import { clientOf, deuSubmission } from "./onboardingFixtures.ts"
import { freshPgliteDirectory } from "../adapters/sql/test/pgliteDirectory.ts"

/** Monday 09:00 UTC: the foreign-exchange market is open for the order. */
const START = "2026-03-02T09:00:00.000Z"

const seed = journeySeed

describe("two fresh seeded servers", () => {
  afterAll(killAllFos)

  it("answer a journey's requests with the same bytes and deliver the same webhook bodies", async () => {
    const receiver = await recordingReceiver()
    const seedFile = journeySeedFile()
    const run = async () => {
      const fos = await startFos(["--store", "memory", "--port", "0", "--clock", "virtual", "--clock-start", START, "--seed", seedFile, "--random-seed", "25", "--insecure-webhooks", "--quiet"])
      try {
        expect(fos.stdout()).toMatch(/^random seed: 25 /m)
        return await serverJourney(fos.origin, receiver)
      } finally {
        await fos.stop()
      }
    }
    try {
      const first = await run()
      const second = await run()
      expect(second.answers).toEqual(first.answers)
      expect(first.deliveries.size).toBeGreaterThan(10)
      expect([...second.deliveries.keys()].sort()).toEqual([...first.deliveries.keys()].sort())
      for (const [id, body] of first.deliveries) expect(second.deliveries.get(id), id).toBe(body)
      // The journey did invent values: ids, addresses, account numbers, a webhook secret.
      expect(idsIn(first.answers.map((a) => a.body).join("\n")).length).toBeGreaterThan(30)
      expect(first.answers[0]!.body).toMatch(/"secret":"whsec_[0-9a-f]{64}"/)
    } finally {
      receiver.close()
    }
  }, 240_000)
})

describe("two fresh seeded embedded engines", () => {
  const engines: Array<Engine> = []
  afterAll(async () => {
    for (const engine of engines) await engine.close()
  })
  const open = async (randomSeed?: number) => {
    const engine = await createEngine({
      clock: { mode: "virtual", start: START },
      webhookTransport: "memory",
      seed: seed as never,
      ...(randomSeed === undefined ? {} : { randomSeed })
    })
    engines.push(engine)
    return engine
  }
  const deliveryBodies = (engine: Engine) => new Map(engine.deliveries.list().map((d) => [d.attemptId, d.body]))

  it("answer a journey's requests with the same bytes and deliver the same webhook bodies", async () => {
    const runs = []
    for (let i = 0; i < 2; i++) {
      const engine = await open(25)
      const result = await journey(engine.fetch, "http://fos", acmeKey, "https://hooks.acme.test/fos")
      await deliveriesSettled(engine.fetch, "http://fos", acmeKey)
      runs.push({ answers: result.answers, deliveries: deliveryBodies(engine) })
    }
    const [first, second] = runs as [typeof runs[0], typeof runs[0]]
    expect(second.answers).toEqual(first.answers)
    expect(first.deliveries.size).toBeGreaterThan(10)
    expect(second.deliveries).toEqual(first.deliveries)
  }, 120_000)

  it("give an organization the same answers whatever another organization does beside it", async () => {
    const alone = await open(7)
    const acmeAlone = await journey(alone.fetch, "http://fos", acmeKey, "https://hooks.acme.test/fos")

    // The other organization works between acme's steps without moving the clock (one clock is shared until the
    // organizations have clocks of their own), inventing ids of its own each time.
    const shared = await open(7)
    const rival = clientOf(shared.fetch, "http://fos", rivalKey)
    let rounds = 0
    const rivalTraffic = async () => {
      rounds++
      expect((await rival.call("POST", "/v2/webhooks/endpoints", { url: `https://hooks.rival.test/${rounds}` })).status).toBe(201)
      expect((await rival.call("POST", "/v2/onboarding", deuSubmission({
        register: await rival.upload("certificate_of_incorporation"),
        articles: await rival.upload("articles_of_association"),
        passport: await rival.upload("passport")
      }, { clientReferenceId: `rival-${rounds}` }), { "idempotency-key": `rival-${rounds}` })).status).toBe(201)
      await rival.call("GET", "/v2/transactions/txn_000000000000000000000000")
    }
    await rivalTraffic()
    const acmeBeside = await journey(shared.fetch, "http://fos", acmeKey, "https://hooks.acme.test/fos", rivalTraffic)
    expect(rounds).toBe(4)
    expect(acmeBeside.answers).toEqual(acmeAlone.answers)
    // And the other organization's ids are its own.
    const rivalIds = idsIn(JSON.stringify((await rival.call("GET", "/v2/webhooks/endpoints")).json))
    expect(rivalIds.length).toBeGreaterThan(0)
    for (const id of rivalIds) expect(acmeAlone.answers.some((a) => a.body.includes(id))).toBe(false)
  }, 120_000)

  it("without a seed, invent other values each run, and mint secrets from a cryptographic source", async () => {
    const runs: Array<string> = []
    for (let i = 0; i < 2; i++) {
      const engine = await open()
      runs.push((await clientOf(engine.fetch, "http://fos", acmeKey).call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.acme.test/fos" })).text)
    }
    expect(runs[0]).not.toBe(runs[1])
    // Math.random pinned: the secrets and ids still differ, so they do not come from it.
    const random = vi.spyOn(Math, "random").mockReturnValue(0.5)
    try {
      const engine = await open()
      const acme = clientOf(engine.fetch, "http://fos", acmeKey)
      const created = []
      for (const url of ["https://hooks.acme.test/a", "https://hooks.acme.test/b"]) {
        const reply = await acme.call("POST", "/v2/webhooks/endpoints", { url })
        expect(reply.status, reply.text).toBe(201)
        expect(reply.json.secret).toMatch(/^whsec_[0-9a-f]{64}$/)
        expect(new Set(reply.json.secret.slice("whsec_".length)).size).toBeGreaterThan(1)
        created.push(reply.json)
      }
      expect(created[0].secret).not.toBe(created[1].secret)
      expect(created[0].id).not.toBe(created[1].id)
    } finally {
      random.mockRestore()
    }
  }, 60_000)
})

describe("a seeded engine on a durable store", () => {
  it("mints what a fresh memory engine mints from an empty store, and other ids once the store holds organizations", async () => {
    const endpointBody = { url: "https://hooks.acme.test/fos" }
    const firstEndpoint = async (engine: Engine) => {
      try {
        const reply = await clientOf(engine.fetch, "http://fos", acmeKey).call("POST", "/v2/webhooks/endpoints", endpointBody)
        expect(reply.status, reply.text).toBe(201)
        return reply.json
      } finally {
        await engine.close()
      }
    }
    const options = { clock: { mode: "virtual", start: START }, randomSeed: 25 } as const
    const memory = await firstEndpoint(await createEngine({ ...options, seed: seed as never }))
    const dir = await freshPgliteDirectory("seeded-pglite")
    const fresh = await firstEndpoint(await createEngine({ ...options, seed: seed as never, store: layerPgliteStore(dir) }))
    expect(fresh).toEqual(memory)
    // Restarted on the same data with the same seed: the streams of the first run would mint its ids again.
    const restarted = await firstEndpoint(await createEngine({ ...options, store: layerPgliteStore(dir) }))
    expect(restarted.id).not.toBe(fresh.id)
    expect(restarted.secret).not.toBe(fresh.secret)
  }, 120_000)
})

describe("createEngine's randomSeed", () => {
  it("is a whole number or 1 to 256 visible characters", async () => {
    for (const bad of [1.5, Number.NaN, "", "x".repeat(257), "a b"]) {
      await expect(createEngine({ randomSeed: bad }), JSON.stringify(bad)).rejects.toThrow(/randomSeed/)
    }
  })
})

describe("fos serve --random-seed", () => {
  it("takes 1 to 256 visible characters", () => {
    expect(parseServeArgs(["--random-seed", "42"], {}).randomSeed).toBe("42")
    expect(parseServeArgs(["--random-seed=suite-a"], {}).randomSeed).toBe("suite-a")
    expect(parseServeArgs([], {}).randomSeed).toBeUndefined()
    for (const bad of [["--random-seed", ""], ["--random-seed", "x".repeat(257)], ["--random-seed"], ["--random-seed", "a b"]]) {
      expect(() => parseServeArgs(bad, {}), JSON.stringify(bad)).toThrow(UsageError)
    }
  })

  it("makes the clock virtual from a fixed weekday morning unless --clock or --clock-start says otherwise", () => {
    const clockOf = (args: Array<string>) => {
      const options = parseServeArgs(args, {})
      return { clock: options.clock, start: options.clockStartMs === undefined ? undefined : new Date(options.clockStartMs).toISOString() }
    }
    expect(clockOf(["--random-seed", "42"])).toEqual({ clock: "virtual", start: "2026-03-03T09:00:00.000Z" })
    expect(clockOf(["--random-seed", "42", "--clock", "virtual"])).toEqual({ clock: "virtual", start: "2026-03-03T09:00:00.000Z" })
    expect(clockOf(["--random-seed", "42", "--clock-start", "2026-05-01T00:00:00Z"])).toEqual({ clock: "virtual", start: "2026-05-01T00:00:00.000Z" })
    expect(clockOf(["--random-seed", "42", "--clock", "system"])).toEqual({ clock: "system", start: undefined })
    expect(clockOf([])).toEqual({ clock: "system", start: undefined })
    expect(clockOf(["--clock", "virtual"])).toEqual({ clock: "virtual", start: undefined })
    expect(() => parseServeArgs(["--clock-start", "2026-05-01T00:00:00Z"], {})).toThrow(/--clock-start goes with --clock virtual/)
    expect(() => parseServeArgs(["--random-seed", "42", "--clock", "system", "--clock-start", "2026-05-01T00:00:00Z"], {})).toThrow(/not --clock system/)
  })
})
