/**
 * An advance survives the crash of the process running it (docs/clock.md "An advance and a crash"): kill -9
 * in the middle of a long advance, then the next process to touch the clock finishes it to its target, every timer
 * due by then fires exactly once, another advance can start within seconds (not a minute), and a retry with the
 * same Idempotency-Key answers the original advance and ends at its target, never past it.
 *
 * The world: one customer's wallet with deposits, each emitting events to a webhook endpoint whose receiver refuses
 * every connection, so that each delivery retries on the clock (30 s, 2 min, 15 min, 1 h): a three-day advance
 * fires a thousand timers over dozens of steps. On PGlite the process is killed and restarted on the same directory;
 * on PostgreSQL two processes share the database, and the second finishes what the first left.
 */
import { afterAll, describe, expect, it } from "vitest"
import { freshDatabase } from "../adapters/sql/test/databases.ts"
import { freshPgliteDirectory } from "../adapters/sql/test/pgliteDirectory.ts"
import { killAllFos, type RunningFos, startFos } from "./fosProcess.ts"
import { acmeKey, journeySeedFile } from "./journey.ts"
import { type Client, clientOf, deuSubmission } from "./onboardingFixtures.ts"

const days = 3
const deposits = 40
/** A port nothing listens on: every delivery attempt is refused at once, and retried on the clock. */
const refusingReceiver = "http://127.0.0.1:9/hooks"

const serve = (store: string, seed: string) => startFos(["--store", store, "--port", "0", "--seed", seed, "--random-seed", "36", "--insecure-webhooks", "--quiet"])

const sandbox = (fos: RunningFos): Client => clientOf(fetch, fos.origin, acmeKey)

/** A customer with a base wallet, a refusing webhook endpoint, and `deposits` deposits into the wallet. */
const buildWorld = async (acme: Client) => {
  const ok = async (method: string, path: string, body?: unknown, key?: string) => {
    const reply = await acme.call(method, path, body, key === undefined ? {} : { "idempotency-key": key })
    expect(reply.status, `${method} ${path}: ${reply.text}`).toBeLessThan(300)
    return reply.json
  }
  await ok("POST", "/v2/webhooks/endpoints", { url: refusingReceiver })
  const documents = { register: await acme.upload("certificate_of_incorporation"), articles: await acme.upload("articles_of_association"), passport: await acme.upload("passport") }
  const onboarding = await ok("POST", "/v2/onboarding", deuSubmission(documents), "world-1")
  const { customerId } = await ok("POST", `/v2/simulate/applications/${onboarding.applicationId}/decision`, { outcome: "approved" })
  const application = await ok("POST", `/v2/customers/${customerId}/features`, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } }, "world-2")
  await ok("POST", `/v2/simulate/applications/${application.applicationId}/decision`, { outcome: "approved" })
  const wallet = await ok("POST", `/v2/customers/${customerId}/wallets`, { chain: "base" }, "world-3")
  for (let i = 0; i < deposits; i++) {
    await ok("POST", "/v2/simulate/deposits", { destination: { type: "deposit_address", address: wallet.address }, assetAmount: { code: "USDC", amount: `${i + 1}.00`, chain: "base" } })
  }
  return (await ok("GET", "/v2/simulate/clock")).now as string
}

/**
 * Starts the three-day advance with `key` on `fos` and kills the process with SIGKILL once the clock has moved past
 * its first steps and before it lands: `fromIso` is where the clock stood.
 */
const killMidAdvance = async (fos: RunningFos, fromIso: string, key: string) => {
  const from = Date.parse(fromIso)
  const target = from + days * 86_400_000
  const acme = sandbox(fos)
  const advance = acme.call("POST", "/v2/simulate/clock/advance", { seconds: days * 86_400 }, { "idempotency-key": key }).then(
    (reply) => ({ answered: reply.status }),
    () => ({ answered: undefined })
  )
  // A request of the sandbox during the advance runs at the step it has reached.
  let seen = from
  for (let i = 0; i < 4000 && seen < from + 20 * 60_000; i++) {
    const reply = await acme.call("GET", "/v2/simulate/clock")
    seen = Date.parse(reply.json.now)
    if (seen >= target) break
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  expect(seen, "the clock was seen part-way").toBeGreaterThan(from)
  expect(seen, "the advance had not landed when the process was killed").toBeLessThan(target)
  fos.child.kill("SIGKILL")
  await fos.exited
  expect((await advance).answered, "the advance's client got no answer").toBeUndefined()
  return { from, target }
}

/** Every timer due by `target` fired exactly once, and the world is whole at the target (the clock at `clockAt`). */
const expectFinishedAt = async (acme: Client, target: number, clockAt = target) => {
  expect(Date.parse((await acme.call("GET", "/v2/simulate/clock")).json.now)).toBe(clockAt)
  const timers = (await acme.call("GET", "/v2/simulate/timers?limit=100&housekeeping=true")).json.data as Array<{ dueAt: string; kind: string }>
  for (const timer of timers) expect(Date.parse(timer.dueAt), timer.kind).toBeGreaterThan(target)
  const transactions = (await acme.call("GET", "/v2/transactions?limit=100")).json.data as Array<{ id: string; status: string }>
  expect(transactions).toHaveLength(deposits)
  expect(transactions.every((t) => t.status === "completed")).toBe(true)
  // One transaction.completed per deposit: no settle timer fired twice, none was lost.
  const completed = (await acme.call("GET", "/v2/simulate/events?type=transaction.completed&limit=100")).json
  expect(completed.meta.total).toBe(deposits)
  expect(new Set(completed.data.map((e: { data: { transactionId: string } }) => e.data.transactionId)).size).toBe(deposits)
  // Every delivery made its five attempts, each once, and failed: no retry timer fired twice, none was lost.
  let cursor: string | null = null
  let deliveries = 0
  do {
    const page: { data: Array<{ id: string; status: string; attempts: number }>; meta: { nextCursor: string | null } } =
      (await acme.call("GET", `/v2/webhooks/deliveries?limit=100${cursor === null ? "" : `&cursor=${cursor}`}`)).json
    for (const delivery of page.data) {
      expect(delivery, delivery.id).toMatchObject({ status: "failed", attempts: 5 })
      const detail = (await acme.call("GET", `/v2/webhooks/deliveries/${delivery.id}`)).json
      expect(detail.attemptList.map((a: { number: number }) => a.number)).toEqual([1, 2, 3, 4, 5])
    }
    deliveries += page.data.length
    cursor = page.meta.nextCursor
  } while (cursor !== null)
  expect(deliveries).toBeGreaterThanOrEqual(deposits * 3)
  const audit = await acme.call("GET", "/v2/simulate/ledger/audit")
  expect(audit.status, audit.text).toBe(200)
  expect(audit.json.clean, audit.text).toBe(true)
}

/** Sends `send` until it is not 409 (the dead process still counted as alive), for at most `boundMs` of real time. */
const untilAccepted = async <R extends { readonly status: number }>(send: () => Promise<R>, boundMs: number): Promise<R> => {
  const started = Date.now()
  while (true) {
    const reply = await send()
    if (reply.status !== 409 || Date.now() - started > boundMs) return reply
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

describe("an advance and a crash", () => {
  const cleanups: Array<() => Promise<void>> = []
  afterAll(async () => {
    killAllFos()
    for (const cleanup of cleanups) await cleanup()
  })

  it("PGlite: killed mid-advance and restarted, the retry with the same key finishes it at its target and never past", async () => {
    const dir = await freshPgliteDirectory("advance-crash")
    const seed = journeySeedFile()
    const first = await serve(dir, seed)
    const fromIso = await buildWorld(sandbox(first))
    const { from, target } = await killMidAdvance(first, fromIso, "advance-3-days")

    const restarted = await serve(dir, seed)
    cleanups.push(async () => void (await restarted.stop()))
    const acme = sandbox(restarted)
    // Within seconds of the crash (the dead process's liveness, not a minute's lease), the same request is taken up
    // again: it answers what the advance did, from where it started to its target.
    const retry = await untilAccepted(() => acme.call("POST", "/v2/simulate/clock/advance", { seconds: days * 86_400 }, { "idempotency-key": "advance-3-days" }), 20_000)
    expect(retry.status, retry.text).toBe(200)
    expect(Date.parse(retry.json.from)).toBe(from)
    expect(Date.parse(retry.json.now)).toBe(target)
    await expectFinishedAt(acme, target)
    // Answered once, it replays.
    const replay = await acme.call("POST", "/v2/simulate/clock/advance", { seconds: days * 86_400 }, { "idempotency-key": "advance-3-days" })
    expect(replay.headers.get("idempotency-replayed")).toBe("true")
    expect(replay.text).toBe(retry.text)
    // And the clock is free.
    const next = await acme.call("POST", "/v2/simulate/clock/advance", { seconds: 60 })
    expect(next.status, next.text).toBe(200)
    expect(Date.parse(next.json.now)).toBe(target + 60_000)
  }, 180_000)

  it.skipIf(process.env.DATABASE_URL === undefined || process.env.DATABASE_URL === "")(
    "PostgreSQL, two processes: another advance on the second starts within seconds, after finishing the first's; the first's retry ends at its target",
    async () => {
      const database = await freshDatabase("advance_crash")
      cleanups.push(database.drop)
      const seed = journeySeedFile()
      // One first: two seeded processes started at once on an empty database would mint the same ids.
      const a = await serve(database.url, seed)
      const b = await serve(database.url, seed)
      cleanups.push(async () => void (await b.stop()))
      const fromIso = await buildWorld(sandbox(a))
      const { from, target } = await killMidAdvance(a, fromIso, "advance-3-days")

      const acme = sandbox(b)
      // Another advance: refused while the killed process counts as alive (a few seconds), then accepted; it first
      // finishes the advance the killed process left, so it starts from that one's target.
      const other = await untilAccepted(() => acme.call("POST", "/v2/simulate/clock/advance", { seconds: 60 }, { "idempotency-key": "one-more-minute" }), 20_000)
      expect(other.status, other.text).toBe(200)
      expect(Date.parse(other.json.from)).toBe(target)
      expect(Date.parse(other.json.now)).toBe(target + 60_000)
      // The killed request's retry: what its advance did, and no second advance.
      const retry = await acme.call("POST", "/v2/simulate/clock/advance", { seconds: days * 86_400 }, { "idempotency-key": "advance-3-days" })
      expect(retry.status, retry.text).toBe(200)
      expect(Date.parse(retry.json.from)).toBe(from)
      expect(Date.parse(retry.json.now)).toBe(target)
      // The clock stands where the two advances put it, and every timer due by the first's target fired once.
      await expectFinishedAt(acme, target, target + 60_000)
    },
    180_000
  )
})
