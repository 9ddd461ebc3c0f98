/**
 * A clock per organization across processes (docs/clock.md): two `fos serve --clock virtual` processes on one
 * PostgreSQL (DATABASE_URL) agree on every organization's clock, an advance through one moves only its caller's
 * sandbox and fires each of its timers once, and a process started later resumes the clocks from the store.
 */
import { once } from "node:events"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { adminUrl, freshDatabase } from "../adapters/sql/test/databases.ts"
import { killAllFos, startFos } from "./fosProcess.ts"

const START = "2026-03-02T09:00:00.000Z"
const keys = { acme: `ck_sandbox_${"a1".repeat(32)}`, rival: `ck_sandbox_${"b2".repeat(32)}` }
const organization = (name: "acme" | "rival") => ({
  id: `org_${name}`,
  name,
  status: "active",
  users: [{ id: `usr_${name}`, email: `${name}@clock.test`, role: "admin" }],
  apiKeys: [{ key: keys[name], access: "read_write", createdBy: `usr_${name}` }]
})

describe.skipIf(adminUrl === undefined || adminUrl === "")("a clock per organization on two processes sharing PostgreSQL", () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>
  let tmp: string
  let seedPath: string
  let a: string
  let b: string
  let receiver: Server
  let receiverUrl: string
  /** Every attempt the receiver got: delivery id and the attempt's own id. */
  const hits: Array<{ path: string; attemptId: string }> = []

  const start = async (clockStart = START) =>
    (await startFos(["--store", database.url, "--port", "0", "--clock", "virtual", "--clock-start", clockStart, "--insecure-webhooks", "--seed", seedPath])).origin

  const call = async (origin: string, name: "acme" | "rival", method: string, path: string, body?: unknown) => {
    const response = await fetch(`${origin}/sandbox${path}`, {
      method,
      headers: { "x-api-key": keys[name], ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: response.status, json: (await response.json()) as any }
  }
  /** Waits, bounded, for what the servers do after answering; the test asserts the outcome, not how long it took. */
  const until = async (done: () => Promise<boolean>) => {
    for (let i = 0; i < 400 && !(await done()); i++) await new Promise((r) => setTimeout(r, 25))
  }
  const clockOf = async (origin: string, name: "acme" | "rival") => (await call(origin, name, "GET", "/v2/simulate/clock")).json.now as string
  const deliveriesOf = async (origin: string, name: "acme" | "rival") => (await call(origin, name, "GET", "/v2/webhooks/deliveries?limit=100")).json.data

  beforeAll(async () => {
    database = await freshDatabase("clocks")
    tmp = mkdtempSync(join(tmpdir(), "fos-clocks-"))
    seedPath = join(tmp, "seed.json")
    writeFileSync(seedPath, JSON.stringify({ organizations: [organization("acme"), organization("rival")] }))
    // A receiver that is down: every delivery is retried on its organization's clock.
    receiver = createServer((request, response) => {
      hits.push({ path: request.url ?? "", attemptId: String(request.headers["x-service-delivery-id"]) })
      request.resume()
      response.statusCode = 503
      response.end()
    })
    receiver.listen(0, "127.0.0.1")
    await once(receiver, "listening")
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`
    a = await start()
    b = await start()
  }, 120_000)

  afterAll(async () => {
    killAllFos()
    receiver?.close()
    await database?.drop()
    rmSync(tmp, { recursive: true, force: true })
  })

  it("agree on each clock, move only the caller's, fire each timer once, and resume the clocks on a new process", async () => {
    for (const name of ["acme", "rival"] as const) {
      expect((await call(a, name, "POST", "/v2/webhooks/endpoints", { url: `${receiverUrl}/${name}` })).status).toBe(201)
      expect((await call(a, name, "POST", "/v2/simulate/events", { type: "transaction.completed" })).status).toBe(201)
    }
    // Each first attempt has been made (awaited without timing it) before anything is compared.
    await until(async () => (await deliveriesOf(a, "rival"))[0]?.attempts === 1 && (await deliveriesOf(a, "acme"))[0]?.attempts === 1)
    const rivalBefore = await deliveriesOf(a, "rival")
    expect(rivalBefore).toHaveLength(1)

    // Both processes advance acme's clock at once: one advance runs at a time (the other is 409, or runs after).
    const [viaA, viaB] = await Promise.all([
      call(a, "acme", "POST", "/v2/simulate/clock/advance", { seconds: 1800 }),
      call(b, "acme", "POST", "/v2/simulate/clock/advance", { seconds: 1800 })
    ])
    const ok = [viaA, viaB].filter((r) => r.status === 200)
    expect(ok.length).toBeGreaterThanOrEqual(1)
    for (const r of [viaA, viaB]) if (r.status !== 200) expect(r.json.type).toMatch(/CONFLICT/)
    const acmeNow = Date.parse(START) + ok.length * 1_800_000
    expect(await clockOf(a, "acme")).toBe(new Date(acmeNow).toISOString())
    expect(await clockOf(b, "acme")).toBe(new Date(acmeNow).toISOString())
    expect(await clockOf(a, "rival")).toBe(START)
    expect(await clockOf(b, "rival")).toBe(START)

    // Acme's delivery was retried on its clock (30 s, 2 min, 15 min after the first), each attempt sent once.
    await until(async () => (await deliveriesOf(b, "acme"))[0]?.attempts >= 4)
    const acmeHits = hits.filter((h) => h.path === "/acme")
    expect(acmeHits.length).toBeGreaterThanOrEqual(4)
    expect(new Set(acmeHits.map((h) => h.attemptId)).size).toBe(acmeHits.length)
    const [acmeDelivery] = await deliveriesOf(b, "acme")
    expect(acmeDelivery.attempts).toBe(acmeHits.length)
    // Rival's delivery, and its receiver, saw nothing of it.
    expect(await deliveriesOf(b, "rival")).toEqual(rivalBefore)
    expect(hits.filter((h) => h.path === "/rival")).toHaveLength(1)

    // A process started later, with another start instant, serves the clocks as the store keeps them.
    const c = await start("2030-01-01T00:00:00.000Z")
    expect(await clockOf(c, "acme")).toBe(new Date(acmeNow).toISOString())
    expect(await clockOf(c, "rival")).toBe(START)
  }, 120_000)
})
