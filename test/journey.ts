/**
 * One scripted journey through the sandbox, as a QA team runs it to compare runs byte for byte: onboarding, a
 * wallet and a virtual account, deposits, a fiat quote and an order, an ACH payout settled on the clock, webhooks,
 * and an idempotent retry. Every answer is recorded in order. test/reproducible.test.ts runs it twice to show a seed
 * reproduces it; test/determinism.test.ts runs it on other days, stores and runtimes.
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { expect } from "vitest"
import { clientOf, deuSubmission, type Fetch } from "./onboardingFixtures.ts"
import { keysOf, orgSeed, seedOf } from "./support.ts"

/** What one request answered, as compared between runs. */
export interface Answer {
  readonly request: string
  readonly status: number
  readonly correlationId: string | null
  readonly body: string
}

export interface Journey {
  readonly answers: Array<Answer>
}

const recipient = {
  rail: "ach",
  name: "Ada Lovelace",
  address: { line1: "1 Main St", city: "New York", state: "NY", postalCode: "10001", country: "USA" },
  routingNumber: "021000021",
  accountNumber: "123456789"
}

/** The organizations the journeys run in, and the key of each one's sandbox. */
export const acmeKey = keysOf("acme").sandbox
export const rivalKey = keysOf("rival").sandbox
export const journeySeed = seedOf(orgSeed("acme"), orgSeed("rival"))

/** The journeys' seed as a file, for `fos serve --seed`. */
export const journeySeedFile = (): string => {
  const file = join(mkdtempSync(join(tmpdir(), "fos-journey-")), "seed.json")
  writeFileSync(file, JSON.stringify(journeySeed))
  return file
}

/** A delivery attempt as a receiver got it, and when (real time). */
export interface Received {
  readonly attemptId: string
  readonly signature: string
  readonly body: string
  readonly atMs: number
}

/**
 * A webhook receiver on loopback that answers 200 at once and keeps every attempt it got. One receiver serves several
 * runs, so that their endpoints' URL is the same; `take` hands over what it got so far and starts afresh.
 */
export const recordingReceiver = async () => {
  let received: Array<Received> = []
  const server = createServer((request, response) => {
    let body = ""
    request.setEncoding("utf8").on("data", (chunk: string) => (body += chunk)).on("end", () => {
      received.push({
        attemptId: String(request.headers["x-service-delivery-id"]),
        signature: String(request.headers["x-service-signature"]),
        body,
        atMs: Date.now()
      })
      response.writeHead(200).end()
    })
  })
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/fos`,
    take: (): Array<Received> => {
      const taken = received
      received = []
      return taken
    },
    close: () => void server.close()
  }
}

/**
 * The journey against a running `fos serve` at `origin`, delivering to `receiver`: its answers (each problem's `docs`
 * link, which is on the origin the request was sent to, written on `http://origin`, since each server listens on a
 * port of its own) and each delivery attempt's body by its id, once every delivery has had its answer.
 */
export const serverJourney = async (
  origin: string,
  receiver: { readonly url: string; readonly take: () => Array<Received> }
): Promise<{ readonly answers: Array<Answer>; readonly deliveries: Map<string, string> }> => {
  receiver.take()
  const result = await journey(fetch, origin, acmeKey, receiver.url)
  const delivered = await deliveriesSettled(fetch, origin, acmeKey)
  const deliveries = bodiesById(receiver.take())
  expect(deliveries.size).toBe(delivered)
  return { answers: result.answers.map((a) => ({ ...a, body: a.body.replaceAll(origin, "http://origin") })), deliveries }
}

/** Each attempt's body by its id. */
export const bodiesById = (received: ReadonlyArray<Received>): Map<string, string> => new Map(received.map((r) => [r.attemptId, r.body]))

/**
 * The journey, through HTTP only, under `<origin>/sandbox` with `key`: every answer recorded in order. `between` runs
 * between its steps (another organization's traffic, in the test of independence).
 */
export const journey = async (fetch: Fetch, origin: string, key: string, webhookUrl: string, between: () => Promise<void> = async () => {}): Promise<Journey> => {
  const client = clientOf(fetch, origin, key)
  const answers: Array<Answer> = []
  let keys = 0
  const call = async (method: string, path: string, body?: unknown, idempotencyKey?: string) => {
    const reply = await client.call(method, path, body, idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey })
    answers.push({ request: `${method} ${path}`, status: reply.status, correlationId: reply.headers.get("x-correlation-id"), body: reply.text })
    return reply
  }
  const ok = async (method: string, path: string, body?: unknown, keyed = false) => {
    const reply = await call(method, path, body, keyed ? `journey-${++keys}` : undefined)
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

  // A fiat pair, priced whatever the day: the market quotes at its last close while it is closed.
  await ok("POST", "/v2/quotes", { source: { asset: "USD" }, target: { asset: "USDC", chain: "base", country: "DEU" }, amount: "100", lockSide: "source", rail: "ach" })
  const orderBody = {
    source: { type: "virtual_account", virtualAccountId: account.id },
    destination: { type: "wallet", walletId: wallet.id, asset: "USDC" },
    amount: "100",
    lockSide: "source"
  }
  const order = await ok("POST", "/v2/orders", orderBody, true)
  // A client's retry of the same request with the same key: the stored answer, replayed.
  const replay = await call("POST", "/v2/orders", orderBody, `journey-${keys}`)
  expect(replay.status, replay.text).toBe(201)
  expect(replay.headers.get("idempotency-replayed")).toBe("true")
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
  // The payout settled on ACH within the two days, whatever hour the journey started.
  const payouts = (await ok("GET", "/v2/transactions?type=withdrawal")).data as Array<{ status: string }>
  expect(payouts.map((p) => p.status)).toEqual(["completed"])
  return { answers }
}

export const uploadForm = (type: string): FormData => {
  const form = new FormData()
  form.set("type", type)
  form.set("file", new Blob([new TextEncoder().encode(`%PDF-1.7\n% ${type}\n`)], { type: "application/pdf" }), `${type}.pdf`)
  return form
}

/** Waits until no delivery of the organization is waiting for its attempt (the receivers answer 200 at once). */
export const deliveriesSettled = async (fetch: Fetch, origin: string, key: string): Promise<number> => {
  const client = clientOf(fetch, origin, key)
  for (let i = 0; i < 600; i++) {
    const list = (await client.call("GET", "/v2/webhooks/deliveries?limit=100")).json.data as Array<{ status: string }>
    if (list.length > 0 && list.every((d) => d.status === "succeeded")) return list.length
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error("deliveries did not settle")
}

/** Every id of fos's own shape in `text` (prefix, underscore, 24 base32 characters). */
export const idsIn = (text: string): Array<string> => text.match(/\b[a-z]{2,5}_[0-9a-z]{24}\b/g) ?? []
