/**
 * PGlite is one session, and its store runs one transaction at a time: concurrent requests must queue, never wait
 * on each other in a cycle. Keyed
 * clock advances (which fire timers outside the request's transaction) and writes whose fan-out runs right after
 * them, all at once, must all finish.
 */
import { rmSync } from "node:fs"
import { Transport } from "@fos/core"
import { createEngine } from "@fos/http"
import { expect, it } from "vitest"
import { layerPgliteStore } from "../src/index.ts"
import { freshPgliteDirectory } from "./pgliteDirectory.ts"

const key = `ck_sandbox_${"5c".repeat(32)}`

it("concurrent keyed advances and webhook emits on PGlite all answer: each advance runs or is refused, every emit is delivered", async () => {
  const dir = await freshPgliteDirectory("single-conn")
  let delivered = 0
  const engine = await createEngine({
    store: layerPgliteStore(dir),
    clock: { mode: "virtual" },
    webhookTransport: Transport.callback(() => {
      delivered++
      return { status: 200 }
    }),
    seed: {
      organizations: [{
        id: "org_single",
        name: "Single",
        status: "active",
        rateLimit: { sustainedPerSecond: 1e6, burst: 1e6 },
        users: [{ id: "usr_single", email: "s@single.test", role: "admin" }],
        apiKeys: [{ key, access: "read_write", createdBy: "usr_single" }]
      }]
    }
  })
  try {
    const post = (path: string, body: unknown, idempotencyKey?: string) =>
      engine.fetch(new Request(`http://fos/sandbox${path}`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json", ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey }) },
        body: JSON.stringify(body)
      })).then((r) => r.status)
    expect(await post("/v2/webhooks/endpoints", { url: "https://receiver.example.com/h" })).toBe(201)
    const started = await engine.clockOf("org_single").now()
    const statuses = await Promise.all([
      ...Array.from({ length: 12 }, (_, i) => post("/v2/simulate/clock/advance", { seconds: 1 }, `adv-${i}`)),
      ...Array.from({ length: 6 }, () => post("/v2/simulate/events", { type: "customer.created" }))
    ])
    // One advance of a clock runs at a time: the others meanwhile are 409 CONFLICT (docs/clock.md); none hangs.
    const advances = statuses.slice(0, 12)
    expect(advances.every((s) => s === 200 || s === 409)).toBe(true)
    expect(advances.filter((s) => s === 200).length).toBeGreaterThanOrEqual(1)
    expect(statuses.slice(12)).toEqual(Array(6).fill(201))
    // Sends run in the background: wait for the attempts the emits caused.
    expect((await engine.deliveries.flush()).complete).toBe(true)
    expect(delivered).toBe(6)
    expect(await engine.clockOf("org_single").now()).toBe(started + advances.filter((s) => s === 200).length * 1000)
  } finally {
    await engine.close()
    rmSync(dir, { recursive: true, force: true })
  }
}, 60_000)

it("keeps serving after a virtual clock jumps hours and days: the store's connections live on real time", async () => {
  const dir = await freshPgliteDirectory("virtual-jump")
  const engine = await createEngine({
    store: layerPgliteStore(dir),
    clock: { mode: "virtual", start: "2026-01-01T00:00:00.000Z" },
    seed: {
      organizations: [{
        id: "org_jump",
        name: "Jump",
        status: "active",
        users: [{ id: "usr_jump", email: "j@jump.test", role: "admin" }],
        apiKeys: [{ key, access: "read_write", createdBy: "usr_jump" }]
      }]
    }
  })
  try {
    const me = () => engine.fetch(new Request("http://fos/sandbox/v2/portal/users/me", { headers: { "x-api-key": key } })).then((r) => r.status)
    expect(await me()).toBe(200)
    // Before the fix, the pool aged its connections by the advance and closed them: this answered 500.
    await engine.clock.advance("1 hour")
    expect(await me()).toBe(200)
    await engine.clock.advance("2 days")
    expect(await me()).toBe(200)
  } finally {
    await engine.close()
    rmSync(dir, { recursive: true, force: true })
  }
}, 60_000)
