/**
 * PostgreSQL goes silent under a running engine (a network partition: connections stay open and nothing comes back,
 * not a refusal): every request that needs the store answers 503 SERVICE_UNAVAILABLE with Retry-After within the
 * store's timeout, on the connections that were open and on the new ones it tries, and the same engine serves again
 * once the database answers. The timeout here is one second, given to the store's layer, to the SQL client, to
 * `createEngine` and to `fos serve`; the tests' own timeouts are what "within the bound" is checked by, with a
 * generous ceiling where the default would also pass.
 *
 * PostgreSQL is shared by every test file running in parallel, so the silence is a relay's (test/pgRelay.ts).
 */
import { createEngine, type Engine } from "@fos/http"
import { layerPostgresClient, layerPostgresStore } from "@fos/sql"
import { Effect, Exit, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { adminUrl, freshDatabase } from "../adapters/sql/test/databases.ts"
import { startFos } from "./fosProcess.ts"
import { type Relay, relayTo, throughRelay } from "./pgRelay.ts"
import { keysOf, orgSeed, seedOf } from "./support.ts"

const key = keysOf("silent").sandbox
const seed = seedOf(orgSeed("silent"))

describe.skipIf(adminUrl === undefined || adminUrl === "")("a silent PostgreSQL", () => {
  let opened: Array<{ engine?: Engine; relay: Relay; drop: () => Promise<void> }> = []
  afterEach(async () => {
    for (const { engine, relay, drop } of opened) {
      relay.speak()
      await engine?.close({ deadlineMs: 1_000 }).catch(() => undefined)
      await relay.down().catch(() => undefined)
      await drop()
    }
    opened = []
  })

  const call = (engine: Engine, method: string, path: string, body?: unknown) =>
    engine.fetch(`http://fos.test/sandbox${path}`, {
      method,
      headers: { "x-api-key": key, "content-type": "application/json", "idempotency-key": `silent-${Math.random()}` },
      body: body === undefined ? null : JSON.stringify(body)
    })

  const expectUnavailable = async (response: Response, what: string) => {
    const text = await response.text()
    expect(response.status, `${what}: ${text}`).toBe(503)
    const problem = JSON.parse(text)
    expect(problem).toMatchObject({ type: "SERVICE_UNAVAILABLE", status: 503 })
    expect(problem.retryAfterSeconds).toBeGreaterThan(0)
    expect(response.headers.get("retry-after")).toBe(String(problem.retryAfterSeconds))
    expect(text).not.toMatch(/stack|postgres:\/\/|timed out|ms\b/i)
  }

  const silenceAndRecover = async (engine: Engine, relay: Relay) => {
    const before = await call(engine, "POST", "/v2/webhooks/endpoints", { url: "https://hooks.silent.test/a" })
    expect(before.status, await before.clone().text()).toBe(201)

    relay.silence()
    // The first on a connection the pool holds open; the ones after on connections it opens anew, whose start-up
    // gets no answer either.
    for (const [method, path, body] of [
      ["GET", "/v2/webhooks/endpoints", undefined],
      ["POST", "/v2/webhooks/endpoints", { url: "https://hooks.silent.test/b" }],
      ["GET", "/v2/customers", undefined]
    ] as const) {
      await expectUnavailable(await call(engine, method, path, body), `${method} ${path}`)
    }

    relay.speak()
    let after: Response | undefined
    for (let i = 0; i < 50; i++) {
      after = await call(engine, "GET", "/v2/webhooks/endpoints")
      if (after.status === 200) break
      await new Promise((done) => setTimeout(done, 200))
    }
    expect(after!.status, await after!.clone().text()).toBe(200)
    const listed = (await after!.json()) as { data: Array<{ url: string }> }
    // The write refused while the database was silent committed nothing; the one before it is there.
    expect(listed.data.map((e) => e.url)).toEqual(["https://hooks.silent.test/a"])
  }

  it("answers 503 within the store layer's timeout, and serves again once the database answers", async () => {
    const database = await freshDatabase("silent")
    const relay = await relayTo(new URL(database.url))
    const entry: (typeof opened)[number] = { relay, drop: database.drop }
    opened.push(entry)
    const engine = entry.engine = await createEngine({ store: layerPostgresStore(throughRelay(database.url, relay), { timeout: "1 second" }), seed })
    await silenceAndRecover(engine, relay)
  }, 30_000)

  it("fails a connection whose start gets no answer, and connects again once the database answers", async () => {
    const database = await freshDatabase("silent")
    const relay = await relayTo(new URL(database.url))
    opened.push({ relay, drop: database.drop })
    const client = ManagedRuntime.make(layerPostgresClient(throughRelay(database.url, relay), { timeout: 1_000 }))
    try {
      const select = Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ n: number }>`SELECT 1 AS n`
      })
      // Silent before the pool has a connection: the first connect is accepted and never answered.
      relay.silence()
      const started = performance.now()
      const exit = await client.runPromiseExit(select)
      // The behaviour is the bound: a generous ceiling of three timeouts (the client's own connect timeout is 5 s).
      expect(performance.now() - started).toBeLessThan(3_000)
      expect(Exit.isFailure(exit)).toBe(true)
      expect(JSON.stringify(exit)).toMatch(/ConnectionError/)
      relay.speak()
      expect(await client.runPromise(select)).toEqual([{ n: 1 }])
    } finally {
      await client.dispose()
    }
  }, 30_000)

  it("takes the timeout from createEngine's storeTimeout", async () => {
    const database = await freshDatabase("silent")
    const relay = await relayTo(new URL(database.url))
    const entry: (typeof opened)[number] = { relay, drop: database.drop }
    opened.push(entry)
    const engine = entry.engine = await createEngine({ store: layerPostgresStore(throughRelay(database.url, relay)), storeTimeout: "1 second", seed })
    await silenceAndRecover(engine, relay)
  }, 30_000)

  it("takes the timeout from fos serve --store-timeout-seconds", async () => {
    const database = await freshDatabase("silent")
    const relay = await relayTo(new URL(database.url))
    const tmp = mkdtempSync(join(tmpdir(), "fos-silent-"))
    opened.push({ relay, drop: async () => {
      rmSync(tmp, { recursive: true, force: true })
      await database.drop()
    } })
    writeFileSync(join(tmp, "seed.json"), JSON.stringify(seed))
    const server = await startFos(["--store", throughRelay(database.url, relay), "--port", "0", "--seed", join(tmp, "seed.json"), "--quiet", "--store-timeout-seconds", "1"])
    try {
      const over = (method: string, path: string) =>
        fetch(`${server.origin}/sandbox${path}`, { method, headers: { "x-api-key": key, connection: "close" } })
      expect((await over("GET", "/v2/webhooks/endpoints")).status).toBe(200)
      relay.silence()
      const started = performance.now()
      const silent = await over("GET", "/v2/webhooks/endpoints")
      // The behaviour is the bound: well within the default 10 s, a generous ceiling over the 1 s asked for.
      expect(performance.now() - started).toBeLessThan(5_000)
      await expectUnavailable(silent, "GET over fos serve")
      relay.speak()
      let status = 0
      for (let i = 0; i < 50 && status !== 200; i++) {
        status = (await over("GET", "/v2/webhooks/endpoints")).status
        if (status !== 200) await new Promise((done) => setTimeout(done, 200))
      }
      expect(status).toBe(200)
    } finally {
      relay.speak()
      expect((await server.stop()).code).toBe(0)
    }
  }, 60_000)
})
