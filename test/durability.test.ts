/**
 * Durability of `fos serve` on PGlite and on PostgreSQL (when DATABASE_URL is set), with real processes:
 * - data and keys survive a restart, and the demo organization is made once;
 * - under concurrent writes, `kill -9` at random moments, 20 times over, loses no write that got a 2xx;
 * - a timer written before a crash fires after the restart (here: idempotency retention).
 */
import { once } from "node:events"
import { rmSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { adminUrl, freshDatabase } from "../adapters/sql/test/databases.ts"
import { killAllFos, type RunningFos, startFos } from "./fosProcess.ts"
import { freshPgliteDirectory } from "../adapters/sql/test/pgliteDirectory.ts"

const token = "durability-operator-token"

type Server = RunningFos

const start = (store: string, extra: ReadonlyArray<string> = []) =>
  startFos(["--store", store, "--port", "0", ...extra], { FOS_OPERATOR_TOKEN: token })

const stop = (server: Server, signal: NodeJS.Signals) => server.stop(signal)

const operator = (origin: string, method: string, path: string, body?: unknown) =>
  fetch(`${origin}/operator${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

const organizationIds = async (origin: string): Promise<Set<string>> => {
  const response = await operator(origin, "GET", "/organizations")
  const body = (await response.json()) as { data: Array<{ id: string }> }
  return new Set(body.data.map((o) => o.id))
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

afterAll(killAllFos)

const suite = (name: string, makeStore: () => Promise<{ readonly store: string; readonly cleanup: () => Promise<void> }>) =>
  describe(`durability on ${name}`, () => {
    let store: string
    let cleanup: () => Promise<void>
    beforeAll(async () => {
      ;({ cleanup, store } = await makeStore())
    }, 60_000)
    afterAll(async () => cleanup())

    it("keeps data and keys across a restart, and makes the demo organization once", async () => {
      const first = await start(store)
      const key = /sandbox key: (ck_sandbox_[0-9a-f]{64})/.exec(first.stdout())?.[1]
      expect(key).toBeDefined()
      expect((await operator(first.origin, "POST", "/organizations", { id: "org_restart", name: "Restart" })).status).toBe(201)
      await stop(first, "SIGTERM")

      const second = await start(store)
      expect(second.stdout()).not.toContain("demo organization")
      expect((await organizationIds(second.origin)).has("org_restart")).toBe(true)
      const me = await fetch(`${second.origin}/sandbox/v2/portal/users/me`, { headers: { "x-api-key": key! } })
      expect(me.status).toBe(200)
      await stop(second, "SIGTERM")
    }, 60_000)

    it("loses no acknowledged write across 20 kill -9 at random moments under load", async () => {
      const acknowledged: Array<string> = []
      let counter = 0
      for (let round = 0; round < 20; round++) {
        const server = await start(store)
        let running = true
        const writer = async () => {
          while (running) {
            const id = `org_k${round}n${counter++}`
            try {
              const response = await operator(server.origin, "POST", "/organizations", { id, name: id })
              if (response.status === 201) acknowledged.push(id)
              else await response.body?.cancel()
            } catch {
              // The connection died with the server: this write was never acknowledged.
            }
          }
        }
        const writers = Array.from({ length: 6 }, writer)
        await sleep(50 + Math.floor(Math.random() * 400))
        server.child.kill("SIGKILL")
        await once(server.child, "exit").catch(() => undefined)
        running = false
        await Promise.all(writers)
      }
      const survivor = await start(store)
      const stored = await organizationIds(survivor.origin)
      const lost = acknowledged.filter((id) => !stored.has(id))
      expect(acknowledged.length).toBeGreaterThan(20)
      expect(lost).toEqual([])
      await stop(survivor, "SIGTERM")
    }, 240_000)

    it("fires a timer written before a crash after the restart", async () => {
      // Idempotency retention is a durable timer: 2 s here. The organization's virtual clock is kept in the store, so
      // the restarted server resumes it where it was (docs/clock.md), and an advance past the due time fires it.
      const args = ["--clock", "virtual", "--idempotency-retention-seconds", "2"]
      const first = await start(store, args)
      expect((await operator(first.origin, "POST", "/organizations", { id: "org_timer", name: "Timer", status: "active" })).status).toBe(201)
      expect((await operator(first.origin, "POST", "/users", { id: "usr_timer", organizationId: "org_timer", email: "t@timer.test", role: "admin" })).status).toBe(201)
      const created = await operator(first.origin, "POST", "/api-keys", { organizationId: "org_timer", environment: "sandbox", createdBy: "usr_timer", access: "read_write" })
      const key = ((await created.json()) as { key: string }).key
      const advance = (origin: string, body: unknown, idempotencyKey?: string) =>
        fetch(`${origin}/sandbox/v2/simulate/clock/advance`, {
          method: "POST",
          headers: { "x-api-key": key, "content-type": "application/json", ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey }) },
          body: JSON.stringify(body)
        })
      expect((await advance(first.origin, { seconds: 0 }, "kept")).status).toBe(200)
      expect((await advance(first.origin, { seconds: 1 }, "kept")).status).toBe(409)
      await stop(first, "SIGKILL")

      const second = await start(store, args)
      const resumed = await advance(second.origin, { seconds: 2 })
      expect(resumed.status).toBe(200)
      expect(((await resumed.json()) as { timersFired: { by: Record<string, number> } }).timersFired.by["idempotency.expire"]).toBe(1)
      const reused = await advance(second.origin, { seconds: 1 }, "kept")
      expect(reused.status).toBe(200)
      expect(reused.headers.get("idempotency-replayed")).toBeNull()
      await stop(second, "SIGTERM")
    }, 60_000)
  })

suite("PGlite", async () => {
  const dir = await freshPgliteDirectory("durability")
  return { store: dir, cleanup: async () => rmSync(dir, { recursive: true, force: true }) }
})

if (adminUrl !== undefined && adminUrl !== "") {
  suite("PostgreSQL", async () => {
    const database = await freshDatabase("durability")
    return { store: database.url, cleanup: database.drop }
  })
}
