/**
 * The store goes away under a running `fos serve` and comes back: while PostgreSQL cannot be
 * reached every request answers 503 SERVICE_UNAVAILABLE with Retry-After, within the connection timeout, never a
 * 500 or a hang; once it is back the same process serves again, without a restart.
 *
 * PostgreSQL itself is shared by every test file running in parallel, so it is not stopped: the server reaches it
 * through a TCP relay (test/pgRelay.ts), which refuses connections (as a stopped server's port does) and drops the
 * open ones while "down".
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { adminUrl, freshDatabase } from "../adapters/sql/test/databases.ts"
import { killAllFos, startFos } from "./fosProcess.ts"
import { type Relay, relayTo, throughRelay } from "./pgRelay.ts"

const key = `ck_sandbox_${"ab".repeat(32)}`

describe.skipIf(adminUrl === undefined || adminUrl === "")("the store unreachable under a running server", () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>
  let relay: Relay
  let tmp: string
  let origin: string

  beforeAll(async () => {
    database = await freshDatabase("outage")
    relay = await relayTo(new URL(database.url))
    const url = throughRelay(database.url, relay)
    tmp = mkdtempSync(join(tmpdir(), "fos-outage-"))
    const seed = join(tmp, "seed.json")
    writeFileSync(seed, JSON.stringify({
      organizations: [{
        id: "org_outage",
        name: "Outage",
        status: "active",
        users: [{ id: "usr_outage", email: "ops@outage.test", role: "admin" }],
        apiKeys: [{ key, access: "read_write", createdBy: "usr_outage" }]
      }]
    }))
    origin = (await startFos(["--store", url, "--port", "0", "--seed", seed, "--quiet"])).origin
  }, 60_000)

  afterAll(async () => {
    killAllFos()
    await relay?.up().catch(() => undefined)
    await database?.drop()
    rmSync(tmp, { recursive: true, force: true })
  })

  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${origin}/sandbox${path}`, {
      method,
      headers: { "x-api-key": key, "content-type": "application/json", "idempotency-key": `outage-${Math.random()}`, connection: "close" },
      body: body === undefined ? null : JSON.stringify(body)
    })

  it("answers 503 SERVICE_UNAVAILABLE with Retry-After while PostgreSQL is down, and serves again once it is back", async () => {
    const before = await call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.outage.test/a" })
    expect(before.status, await before.clone().text()).toBe(201)

    await relay.down()
    for (const [method, path, body] of [
      ["GET", "/v2/customers", undefined],
      ["GET", "/v2/webhooks/endpoints", undefined],
      ["POST", "/v2/webhooks/endpoints", { url: "https://hooks.outage.test/b" }]
    ] as const) {
      const r = await call(method, path, body)
      const text = await r.text()
      expect(r.status, `${method} ${path}: ${text}`).toBe(503)
      const problem = JSON.parse(text)
      expect(problem).toMatchObject({ type: "SERVICE_UNAVAILABLE", status: 503, instance: `/sandbox${path}` })
      expect(problem.retryAfterSeconds).toBeGreaterThan(0)
      expect(r.headers.get("retry-after")).toBe(String(problem.retryAfterSeconds))
      expect(text).not.toMatch(/ECONNREFUSED|stack|postgres:\/\//i)
    }

    await relay.up()
    let after: Response | undefined
    for (let i = 0; i < 50; i++) {
      after = await call("GET", "/v2/webhooks/endpoints")
      if (after.status === 200) break
      await new Promise((done) => setTimeout(done, 200))
    }
    expect(after!.status).toBe(200)
    const listed = (await after!.json()) as { data: Array<{ url: string }> }
    // The write refused while the store was down committed nothing; the one before it is there.
    expect(listed.data.map((e) => e.url)).toEqual(["https://hooks.outage.test/a"])
  }, 120_000)
})
