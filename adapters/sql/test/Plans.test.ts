/**
 * A connection keeps the plan it made for a statement while the tables were small, and a test suite's database is
 * never analyzed: the store's statements must find their rows by key under any plan (docs/storage.md, "One statement
 * per write"). PostgreSQL counts every scan of a whole table (`pg_stat_user_tables.seq_scan`); the webhook retries
 * below made one or two such scans of the rows and of the index entries at every write (142 and 87 in all) before
 * the lists a write joins were declared small and pages read their rows by key.
 */
import { createEngine } from "@fos/http"
import { Effect, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { expect, it } from "vitest"
import { layerPostgresClient, layerPostgresStore } from "../src/index.ts"
import { call, keysOf, orgSeed, seedOf } from "../../../test/support.ts"
import { adminUrl, freshDatabase } from "./databases.ts"

const key = keysOf("plans").sandbox

it.skipIf(adminUrl === undefined || adminUrl === "")("on a database never analyzed, webhook retries on PostgreSQL read no table of rows or index entries whole", async () => {
  const database = await freshDatabase("plans")
  const reader = ManagedRuntime.make(layerPostgresClient(database.url, { maxConnections: 1 }))
  try {
    const engine = await createEngine({
      store: layerPostgresStore(database.url),
      clock: { mode: "virtual", start: "2026-03-03T09:00:00.000Z" },
      webhookTransport: "memory",
      seed: seedOf(orgSeed("plans", { rateLimit: { sustainedPerSecond: 1e6, burst: 1e6 } }))
    })
    const post = (path: string, body: unknown) => call(engine, `/sandbox${path}`, { method: "POST", key, body }).then((r) => r.status)
    let scans: Record<string, { readonly whole: number; readonly inserted: number }> = {}
    try {
      engine.deliveries.answerWith(500)
      expect(await post("/v2/webhooks/endpoints", { url: "https://receiver.example.com/h" })).toBe(201)
      for (let i = 0; i < 30; i++) expect(await post("/v2/simulate/events", { type: "customer.created" })).toBe(201)
      expect((await engine.deliveries.flush()).complete).toBe(true)
      // Every delivery's retries, each a write of the delivery, its attempt, its next timer and their entries.
      expect(await post("/v2/simulate/clock/advance", { seconds: 86_400 })).toBe(200)
      const attempts = await reader.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ n: string }>`SELECT count(*) AS n FROM fos_rows WHERE tbl = 'webhook_attempts'`))
      expect(Number(attempts[0]!.n)).toBeGreaterThanOrEqual(150)
    } finally {
      await engine.close()
    }
    // A backend's counts reach the statistics when it ends: wait until the engine's have.
    scans = await reader.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      let open = -1
      for (let i = 0; i < 400 && open !== 0; i++) {
        if (i > 0) yield* Effect.sleep("25 millis")
        const [row] = yield* sql<{ n: string }>`SELECT count(*) AS n FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid()`
        open = Number(row!.n)
      }
      expect(open).toBe(0)
      const rows = yield* sql<{ relname: string; seq_scan: string; n_tup_ins: string }>`SELECT relname, seq_scan, n_tup_ins
        FROM pg_stat_user_tables WHERE relname IN ('fos_rows', 'fos_orders', 'fos_uniques')`
      return Object.fromEntries(rows.map((r) => [r.relname, { whole: Number(r.seq_scan), inserted: Number(r.n_tup_ins) }]))
    }))
    // The engine's statements are counted: the attempts' rows and entries are among the rows inserted.
    expect(scans.fos_rows!.inserted).toBeGreaterThan(300)
    expect(scans.fos_orders!.inserted).toBeGreaterThan(300)
    // The migrations and the store's start read a few tables whole while they are empty; the writes read none.
    expect(scans.fos_rows!.whole).toBeLessThan(20)
    expect(scans.fos_orders!.whole).toBeLessThan(20)
    expect(scans.fos_uniques!.whole).toBeLessThan(20)
  } finally {
    await reader.dispose()
    await database.drop()
  }
})
