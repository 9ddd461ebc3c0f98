/**
 * Several engines on one PostgreSQL, as several `fos serve` processes would be: each with its own connection pool,
 * rate limiter and scheduler. Every timer must fire exactly once, and an idempotency key used at the same moment
 * against two engines must run its effect once. Runs when DATABASE_URL is set (CI sets it).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect, Layer, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { Engine, Idempotency, Store, Timers } from "@fos/core"
import { layerPostgresClient, layerSqlStore } from "../src/index.ts"
import { adminUrl, freshDatabase } from "./databases.ts"

let url: string | undefined
let database: Awaited<ReturnType<typeof freshDatabase>> | undefined
beforeAll(async () => {
  if (adminUrl === undefined || adminUrl === "") return
  database = await freshDatabase("multi")
  url = database.url
}, 60_000)
afterAll(async () => database?.drop())

interface Firing {
  readonly id: string
  readonly engine: string
}

/** One row per firing: a second firing of the same timer is a unique violation, and fails loudly. */
const Firings = Store.table<Firing>({ name: "test_firings", key: (f) => f.id, orders: { all: { partition: () => "", sort: (f) => f.id } } })

/** Handler runs per timer id, counted outside any transaction, so even a run that was rolled back shows. */
const runsById = new Map<string, number>()

const engineOn = (name: string) => {
  const record = (payload: { id: string }) =>
    Effect.flatMap(Store.Store, (store: Store.StoreService) => {
      runsById.set(payload.id, (runsById.get(payload.id) ?? 0) + 1)
      return Effect.orDie(store.insert(Firings, { id: payload.id, engine: name }))
    })
  const store = layerSqlStore.pipe(Layer.provide(layerPostgresClient(url!, { maxConnections: 4 })))
  // The system clock runs each engine's own scheduler, as in a server process.
  return ManagedRuntime.make(Engine.layer({ store, timerHandlers: { record } }) as Layer.Layer<Engine.EngineServices>)
}

describe.skipIf(adminUrl === undefined || adminUrl === "")("several engines on one PostgreSQL", () => {
  it("fire every timer exactly once between them", async () => {
    const setup = ManagedRuntime.make(layerSqlStore.pipe(Layer.provide(layerPostgresClient(url!))))
    await setup.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM fos_rows WHERE tbl IN ('timers', 'test_firings')`
      yield* sql`DELETE FROM fos_orders WHERE tbl IN ('timers', 'test_firings')`
      yield* sql`DELETE FROM fos_counts WHERE tbl IN ('timers', 'test_firings')`
      yield* sql`DELETE FROM fos_count_shards WHERE tbl IN ('timers', 'test_firings')`
    }).pipe(Effect.provide(layerPostgresClient(url!))))
    const timers = 200
    await setup.runPromise(Effect.gen(function*() {
      const store = yield* Store.Store
      yield* store.transaction(Effect.forEach(Array.from({ length: timers }, (_, i) => i), (i) =>
        Timers.schedule("record", 0, { id: `t${String(i).padStart(4, "0")}` }), { discard: true }))
    }))
    const a = engineOn("a")
    const b = engineOn("b")
    try {
      await Promise.all([a.runPromise(Effect.void), b.runPromise(Effect.void)])
      const count = () => setup.runPromise(Effect.flatMap(Store.Store, (s: Store.StoreService) => s.count(Firings, "all", "")))
      for (let i = 0; i < 200 && (await count()) < timers; i++) await new Promise((r) => setTimeout(r, 100))
      // Give a duplicate firing every chance to show up.
      await new Promise((r) => setTimeout(r, 1500))
      const fired = await setup.runPromise(Effect.flatMap(Store.Store, (s: Store.StoreService) =>
        s.page(Firings, { order: "all", partition: "", descending: false, backward: false, from: undefined, limit: 1000 })))
      expect(fired.length).toBe(timers)
      expect(new Set(fired.map((f) => f.id)).size).toBe(timers)
      expect(runsById.size).toBe(timers)
      expect([...runsById.values()].every((n) => n === 1)).toBe(true)
      expect(await setup.runPromise(Effect.flatMap(Store.Store, (s: Store.StoreService) => s.count(Timers.Timers, "due", "")))).toBe(0)
    } finally {
      await Promise.all([a.dispose(), b.dispose()])
      await setup.dispose()
    }
  }, 60_000)

  it("run an idempotent effect once when the same key reaches two engines at once", async () => {
    const a = engineOn("a")
    const b = engineOn("b")
    try {
      let runs = 0
      const key = `race-${Math.random().toString(36).slice(2)}`
      const request = { scope: "org_race/sandbox", key, fingerprint: "same-body" }
      const attempt = (engine: typeof a) =>
        engine.runPromise(Effect.result(Idempotency.runIdempotent(request, Effect.sync(() => {
          runs++
          return { status: 201, contentType: "application/json", body: "{\"ok\":true}" }
        }).pipe(Effect.delay("200 millis")))))
      const results = await Promise.all([attempt(a), attempt(b), attempt(a), attempt(b)])
      expect(runs).toBe(1)
      const outcomes = results.map((r) => (r._tag === "Success" ? (r.success.replayed ? "replayed" : "ran") : r.failure.code))
      expect(outcomes.filter((o) => o === "ran")).toHaveLength(1)
      for (const o of outcomes) expect(["ran", "replayed", "IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS"]).toContain(o)
      // Once the first has finished, both engines replay it.
      const after = await Promise.all([attempt(a), attempt(b)])
      for (const r of after) expect(r._tag === "Success" && r.success.replayed).toBe(true)
      expect(runs).toBe(1)
    } finally {
      await Promise.all([a.dispose(), b.dispose()])
    }
  }, 60_000)
})
