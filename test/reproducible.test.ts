/**
 * Seeded, reproducible runs (issue 25, item 1): one scripted journey (onboarding, a wallet, a virtual account,
 * deposits, an order, a payout, webhooks and clock advances) run twice against two fresh seeded servers, and twice
 * against two fresh seeded embedded engines, answers every request with the same bytes and delivers the same
 * webhook bodies. One organization's answers do not change when another organization's traffic is added; without a
 * seed, two runs differ, and secrets do not come from Math.random. docs/testing.md names the fields that may still
 * differ and why.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createEngine, type Engine } from "@fos/http"
import { layerPgliteStore } from "@fos/sql"
import { afterAll, describe, expect, it, vi } from "vitest"
import { parseServeArgs, UsageError } from "../adapters/serve/src/Options.ts"
import { killAllFos, startFos } from "./fosProcess.ts"
import { clientOf, deuSubmission, type Fetch } from "./onboardingFixtures.ts"
import { keysOf, orgSeed, seedOf } from "./support.ts"
import { freshPgliteDirectory } from "../adapters/sql/test/pgliteDirectory.ts"

/** Monday 09:00 UTC: the foreign-exchange market is open for the order. */
const START = "2026-03-02T09:00:00.000Z"

/** What one request answered, as compared between runs. */
interface Answer {
  readonly request: string
  readonly status: number
  readonly correlationId: string | null
  readonly body: string
}

interface Journey {
  readonly answers: Array<Answer>
}

const recipient = {
  rail: "ach",
  name: "Ada Lovelace",
  address: { line1: "1 Main St", city: "New York", state: "NY", postalCode: "10001", country: "USA" },
  routingNumber: "021000021",
  accountNumber: "123456789"
}

/**
 * The journey, through HTTP only, under `<origin>/sandbox` with `key`: every answer recorded in order. `between` runs
 * between its steps (another organization's traffic, in the test of independence).
 */
const journey = async (fetch: Fetch, origin: string, key: string, webhookUrl: string, between: () => Promise<void> = async () => {}): Promise<Journey> => {
  const client = clientOf(fetch, origin, key)
  const answers: Array<Answer> = []
  let keys = 0
  const call = async (method: string, path: string, body?: unknown, keyed = false) => {
    const reply = await client.call(method, path, body, keyed ? { "idempotency-key": `journey-${++keys}` } : {})
    answers.push({ request: `${method} ${path}`, status: reply.status, correlationId: reply.headers.get("x-correlation-id"), body: reply.text })
    return reply
  }
  const ok = async (method: string, path: string, body?: unknown, keyed = false) => {
    const reply = await call(method, path, body, keyed)
    expect(reply.status, `${method} ${path}: ${reply.text}`).toBeLessThan(300)
    return reply.json
  }
  const advance = (seconds: number) => ok("POST", "/v2/simulate/clock/advance", { seconds })
  // A multipart body: its boundary is random, its parts are not, and the answer is recorded.
  const upload = async (type: string) => {
    const reply = await fetch(new Request(`${origin}/sandbox/v2/documents`, { method: "POST", headers: { "x-api-key": key }, body: uploadForm(type) }))
    const body = await reply.text()
    answers.push({ request: `POST /v2/documents ${type}`, status: reply.status, correlationId: reply.headers.get("x-correlation-id"), body })
    expect(reply.status, body).toBe(201)
    return JSON.parse(body).id as string
  }

  await ok("POST", "/v2/webhooks/endpoints", { url: webhookUrl })
  const documents = { register: await upload("certificate_of_incorporation"), articles: await upload("articles_of_association"), passport: await upload("passport") }
  const onboarding = await ok("POST", "/v2/onboarding", deuSubmission(documents), true)
  const { customerId } = await ok("POST", `/v2/simulate/applications/${onboarding.applicationId}/decision`, { outcome: "approved" })
  await between()

  const walletApplication = await ok("POST", `/v2/customers/${customerId}/features`, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } }, true)
  await ok("POST", `/v2/simulate/applications/${walletApplication.applicationId}/decision`, { outcome: "approved" })
  const wallet = await ok("POST", `/v2/customers/${customerId}/wallets`, { chain: "base" }, true)
  const accountApplication = await ok("POST", `/v2/customers/${customerId}/features`, { type: "virtual_account", asset: { code: "USD" } }, true)
  await ok("POST", `/v2/simulate/applications/${accountApplication.applicationId}/decision`, { outcome: "approved" })
  await advance(30)
  const account = (await ok("GET", `/v2/customers/${customerId}/virtual-accounts`)).data[0]
  await between()

  await ok("POST", "/v2/simulate/deposits", { destination: { type: "virtual_account", virtualAccountId: account.id }, assetAmount: { code: "USD", amount: "1000.00" }, rail: "rtp" })
  await ok("POST", "/v2/simulate/deposits", { destination: { type: "deposit_address", address: wallet.address }, assetAmount: { code: "USDC", amount: "25.50", chain: "base" } })
  await advance(90)
  // An answer that is a problem: its correlationId is drawn from the organization's ids too.
  expect((await call("GET", "/v2/transactions/txn_000000000000000000000000")).status).toBe(404)

  const order = await ok("POST", "/v2/orders", {
    source: { type: "virtual_account", virtualAccountId: account.id },
    destination: { type: "wallet", walletId: wallet.id, asset: "USDC" },
    amount: "100",
    lockSide: "source"
  }, true)
  await ok("POST", `/v2/orders/${order.id}/execute`, undefined, true)
  await advance(62)
  await between()

  const whitelisted = await ok("POST", `/v2/customers/${customerId}/whitelist-recipients`, recipient, true)
  await ok("POST", "/v2/payouts", {
    source: { type: "virtual_account", virtualAccountId: account.id },
    destination: { type: "external_bank", whitelistRecipientId: whitelisted.id },
    amount: "250.00",
    purpose: "supplier_payment"
  }, true)
  await advance(2 * 24 * 3600)

  await ok("GET", `/v2/orders/${order.id}`)
  await ok("GET", `/v2/wallets/${wallet.id}`)
  await ok("GET", `/v2/virtual-accounts/${account.id}`)
  await ok("GET", "/v2/transactions?limit=100")
  await ok("GET", "/v2/customers")
  await ok("GET", "/v2/webhooks/deliveries?limit=100")
  return { answers }
}

const uploadForm = (type: string) => {
  const form = new FormData()
  form.set("type", type)
  form.set("file", new Blob([new TextEncoder().encode(`%PDF-1.7\n% ${type}\n`)], { type: "application/pdf" }), `${type}.pdf`)
  return form
}

/** Waits until no delivery of the organization is waiting for its attempt (the receivers answer 200 at once). */
const deliveriesSettled = async (fetch: Fetch, origin: string, key: string): Promise<number> => {
  const client = clientOf(fetch, origin, key)
  for (let i = 0; i < 600; i++) {
    const list = (await client.call("GET", "/v2/webhooks/deliveries?limit=100")).json.data as Array<{ status: string }>
    if (list.length > 0 && list.every((d) => d.status === "succeeded")) return list.length
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error("deliveries did not settle")
}

const acmeKey = keysOf("acme").sandbox
const rivalKey = keysOf("rival").sandbox
const seed = seedOf(orgSeed("acme"), orgSeed("rival"))

/** Every id of fos's own shape in `text` (prefix, underscore, 24 base32 characters). */
const idsIn = (text: string) => text.match(/\b[a-z]{2,5}_[0-9a-z]{24}\b/g) ?? []

describe("two fresh seeded servers", () => {
  afterAll(killAllFos)

  it("answer a journey's requests with the same bytes and deliver the same webhook bodies", async () => {
    // One receiver for both runs (so the endpoints' URL is the same); each run's deliveries are kept apart.
    let received = new Map<string, string>()
    const receiver: Server = createServer((request, response) => {
      let body = ""
      request.setEncoding("utf8").on("data", (chunk: string) => (body += chunk)).on("end", () => {
        received.set(String(request.headers["x-service-delivery-id"]), body)
        response.writeHead(200).end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    const webhookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/fos`
    const seedFile = join(mkdtempSync(join(tmpdir(), "fos-seeded-")), "seed.json")
    writeFileSync(seedFile, JSON.stringify(seed))
    const run = async () => {
      received = new Map()
      const fos = await startFos(["--store", "memory", "--port", "0", "--clock", "virtual", "--clock-start", START, "--seed", seedFile, "--random-seed", "25", "--insecure-webhooks", "--quiet"])
      try {
        expect(fos.stdout()).toMatch(/^random seed: 25 /m)
        const result = await journey(fetch, fos.origin, acmeKey, webhookUrl)
        const delivered = await deliveriesSettled(fetch, fos.origin, acmeKey)
        expect(received.size).toBe(delivered)
        // A problem's `docs` link is on the origin the request was sent to: each server listens on a port of its own.
        const answers = result.answers.map((a) => ({ ...a, body: a.body.replaceAll(fos.origin, "http://origin") }))
        return { answers, deliveries: new Map(received) }
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
})
