/**
 * Two `fos serve` processes on one PostgreSQL (DATABASE_URL), as a team that outgrows one process runs them: the same
 * seed on both, the same data through either, and an idempotency key raced against both running its effect once.
 */
import { once } from "node:events"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { adminUrl, freshDatabase } from "../adapters/sql/test/databases.ts"
import { killAllFos, startFos } from "./fosProcess.ts"

const token = "multiserver-operator-token"
const key = `ck_sandbox_${"ef".repeat(32)}`

const start = async (store: string, seedPath: string, clock: "virtual" | "system" = "virtual") =>
  (await startFos(["--store", store, "--port", "0", "--clock", clock, "--insecure-webhooks", "--seed", seedPath], { FOS_OPERATOR_TOKEN: token })).origin

describe.skipIf(adminUrl === undefined || adminUrl === "")("two fos serve processes on one PostgreSQL", () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>
  let tmp: string
  let a: string
  let b: string
  let seedFile: string

  beforeAll(async () => {
    database = await freshDatabase("multiserver")
    tmp = mkdtempSync(join(tmpdir(), "fos-multiserver-"))
    const seedPath = join(tmp, "seed.json")
    writeFileSync(seedPath, JSON.stringify({
      organizations: [{
        id: "org_shared",
        name: "Shared",
        status: "active",
        users: [{ id: "usr_shared", email: "shared@multi.test", role: "admin" }],
        apiKeys: [{ key, access: "read_write", createdBy: "usr_shared" }]
      }]
    }))
    // Both processes start with the same seed: the first applies it, the second finds it applied.
    seedFile = seedPath
    a = await start(database.url, seedPath)
    b = await start(database.url, seedPath)
  }, 60_000)

  afterAll(async () => {
    killAllFos()
    await database?.drop()
    rmSync(tmp, { recursive: true, force: true })
  })

  it("serve the same data: written through one, read through the other", async () => {
    const created = await fetch(`${a}/operator/organizations`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ id: "org_viaa", name: "Via A" })
    })
    expect(created.status).toBe(201)
    const listed = (await (await fetch(`${b}/operator/organizations`, { headers: { authorization: `Bearer ${token}` } })).json()) as { data: Array<{ id: string }> }
    expect(listed.data.map((o) => o.id)).toEqual(expect.arrayContaining(["org_shared", "org_viaa"]))
    for (const origin of [a, b]) {
      const me = await fetch(`${origin}/sandbox/v2/portal/users/me`, { headers: { "x-api-key": key } })
      expect(me.status).toBe(200)
    }
  })

  it("deliver every webhook exactly once between two processes whose schedulers both run", async () => {
    const seen = new Map<string, number>()
    const receiver = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        // One endpoint, so one delivery per event: counted by the event's id (X-Service-Delivery-Id names the attempt).
        const id = String((JSON.parse(Buffer.concat(chunks).toString()) as { id: string }).id)
        seen.set(id, (seen.get(id) ?? 0) + 1)
        res.writeHead(204).end()
      })
    })
    receiver.listen(0, "127.0.0.1")
    await once(receiver, "listening")
    try {
      // Two more processes on the system clock: each runs its scheduler, and both sweep the same timers.
      const c = await start(database.url, seedFile, "system")
      const d = await start(database.url, seedFile, "system")
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
      const post = (origin: string, path: string, body: unknown) =>
        fetch(`${origin}/sandbox${path}`, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify(body) })
      expect((await post(c, "/v2/webhooks/endpoints", { url })).status).toBe(201)
      const events = 40
      await Promise.all(Array.from({ length: events }, (_, i) => post(i % 2 === 0 ? c : d, "/v2/simulate/events", { type: "customer.created" }).then((r) => r.status)))
      for (let i = 0; i < 100 && seen.size < events; i++) await new Promise((r) => setTimeout(r, 200))
      await new Promise((r) => setTimeout(r, 1500)) // room for a duplicate to show up
      expect(seen.size).toBe(events)
      expect([...seen.values()].every((n) => n === 1)).toBe(true)
    } finally {
      receiver.close()
    }
  }, 60_000)

  it("run an idempotency key raced against both processes once", async () => {
    const send = (origin: string) =>
      fetch(`${origin}/sandbox/v2/simulate/clock/advance`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json", "idempotency-key": "raced-key" },
        body: JSON.stringify({ seconds: 60 })
      }).then(async (r) => ({ status: r.status, replayed: r.headers.get("idempotency-replayed"), body: await r.text() }))
    const replies = await Promise.all([send(a), send(b), send(a), send(b), send(a), send(b)])
    const ran = replies.filter((r) => r.status === 200 && r.replayed === null)
    expect(ran).toHaveLength(1)
    for (const r of replies) {
      if (r.status === 200) expect(r.body).toBe(ran[0]!.body)
      else expect(JSON.parse(r.body).type).toBe("IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS")
    }
    // Afterwards both processes replay the one response.
    for (const r of await Promise.all([send(a), send(b)])) {
      expect(r.status).toBe(200)
      expect(r.replayed).toBe("true")
      expect(r.body).toBe(ran[0]!.body)
    }
  })
})
