/**
 * The storage contract suite on the SQL store: on PGlite always, and on PostgreSQL when DATABASE_URL is set (CI
 * sets it). Each test starts from empty tables on one shared database, so the suite stays fast.
 */
import { rmSync } from "node:fs"
import { Store } from "@fos/core"
import { Context, Deferred, Effect, Layer, ManagedRuntime, Metric } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { describeStoreContract } from "@fos/core/store-contract/vitest"
import { layerPgliteClient, layerPostgresClient, layerPostgresStore, makeSqlStore, migrate } from "../src/index.ts"
import { adminUrl, freshDatabase } from "./databases.ts"
import { freshPgliteDirectory } from "./pgliteDirectory.ts"

/** The store on an already open client, emptied first. */
const freshStore = (client: () => Context.Context<SqlClient.SqlClient>) =>
  Layer.effect(
    Store.Store,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* migrate
      yield* sql`TRUNCATE fos_rows, fos_uniques, fos_orders, fos_counts, fos_count_shards, fos_copies, fos_copy_rows`
      return yield* makeSqlStore
    }).pipe(Effect.orDie)
  ).pipe(Layer.provide(Layer.suspend(() => Layer.succeedContext(client()))))

/** Fewer rows per property run: each write is a round trip. */
const sqlScale = { propertyRows: 120, propertyRuns: 3 }

const dir = await freshPgliteDirectory("pglite-contract")
const pglite = ManagedRuntime.make(layerPgliteClient(dir))
let pgliteContext: Context.Context<SqlClient.SqlClient>
beforeAll(async () => {
  pgliteContext = await pglite.context()
}, 60_000)
afterAll(async () => {
  await pglite.dispose()
  rmSync(dir, { recursive: true, force: true })
})
describeStoreContract({ name: "PGlite", fresh: () => freshStore(() => pgliteContext), scale: sqlScale })

if (adminUrl !== undefined && adminUrl !== "") {
  let database: Awaited<ReturnType<typeof freshDatabase>>
  let postgres: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>
  let postgresContext: Context.Context<SqlClient.SqlClient>
  beforeAll(async () => {
    database = await freshDatabase("contract")
    postgres = ManagedRuntime.make(layerPostgresClient(database.url))
    postgresContext = await postgres.context()
  }, 60_000)
  afterAll(async () => {
    await postgres.dispose()
    await database.drop()
  })
  // Durable as fos serves it (layerPostgresStore): a database of its own, closed and opened again, and its client
  // process killed mid-commit.
  const databases = new Map<string, () => Promise<void>>()
  describeStoreContract({
    name: "PostgreSQL",
    fresh: () => freshStore(() => postgresContext),
    scale: sqlScale,
    durable: {
      place: async () => {
        const made = await freshDatabase("contract_durable")
        databases.set(made.url, made.drop)
        return made.url
      },
      open: (url) => layerPostgresStore(url),
      remove: async (url) => databases.get(url)?.(),
      module: { url: new URL("../src/index.ts", import.meta.url).href, export: "layerPostgresStore" }
    }
  })
}

if (adminUrl !== undefined && adminUrl !== "") {
  describe("deadlocks on PostgreSQL", () => {
    let database: Awaited<ReturnType<typeof freshDatabase>>
    let client: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>
    let runtime: ManagedRuntime.ManagedRuntime<Store.Store, unknown>
    beforeAll(async () => {
      database = await freshDatabase("deadlock")
      client = ManagedRuntime.make(layerPostgresClient(database.url))
      const context = await client.context()
      runtime = ManagedRuntime.make(freshStore(() => context))
    }, 60_000)
    afterAll(async () => {
      await runtime.dispose()
      await client.dispose()
      await database.drop()
    })

    // Two transactions lock two rows in opposite orders: PostgreSQL aborts one to break the cycle, and the store
    // runs that one again, so both commit.
    it("a transaction aborted to break a deadlock is run again and commits, and counts as a retry of the store", async () => {
      const Notes = Store.table<{ readonly id: string; readonly n: number }>({ name: "deadlock_notes", key: (r) => r.id })
      const runs = { first: 0, second: 0 }
      const registry: Metric.MetricRegistry = new Map()
      await runtime.runPromise(Effect.provideService(Effect.gen(function*() {
        const store = yield* Store.Store
        yield* store.insert(Notes, { id: "a", n: 0 })
        yield* store.insert(Notes, { id: "b", n: 0 })
        const firstLocked = yield* Deferred.make<void>()
        const secondLocked = yield* Deferred.make<void>()
        const crosswise = (name: "first" | "second", mine: string, theirs: string, locked: Deferred.Deferred<void>, other: Deferred.Deferred<void>) =>
          store.transaction(Effect.gen(function*() {
            runs[name]++
            const row = (yield* store.getForUpdate(Notes, mine))!
            yield* Deferred.succeed(locked, undefined)
            yield* Deferred.await(other)
            const across = (yield* store.getForUpdate(Notes, theirs))!
            yield* store.update(Notes, { ...row, n: row.n + 1 })
            yield* store.update(Notes, { ...across, n: across.n + 10 })
          }))
        yield* Effect.all([
          crosswise("first", "a", "b", firstLocked, secondLocked),
          crosswise("second", "b", "a", secondLocked, firstLocked)
        ], { concurrency: 2 })
        // Each transaction added 1 to its own row and 10 to the other's: both committed, each once.
        expect((yield* store.get(Notes, "a"))!.n).toBe(11)
        expect((yield* store.get(Notes, "b"))!.n).toBe(11)
      }), Metric.MetricRegistry, registry))
      expect(runs.first + runs.second).toBe(3)
      // Each run again is one of the store's retries (kernel/Metrics.ts), whichever way the store found the cycle
      // (the database's abort, or a row locked late found changed); each transaction's duration is one, its runs
      // included.
      const series = Metric.snapshotUnsafe(Context.make(Metric.MetricRegistry, registry))
      const retries = series.filter((m) => m.id === "fos.store.transaction.retries").reduce((n, m) => n + (m.state as { count: number }).count, 0)
      expect(retries).toBe(runs.first + runs.second - 2)
      const timed = series.find((m) => m.id === "fos.store.transaction.duration")
      expect((timed?.state as { count: number } | undefined)?.count).toBe(2)
    }, 30_000)

    // A resource's events are numbered in the order its changes commit, on any process: two transactions that change
    // one row, each in flight while the other is, and each writing into the row the number it hands out after it read
    // the row for update. The first took a block of numbers with a plain read before the second read the row; the
    // numbers the row keeps must still rise in the order the changes landed, whichever commits first (a transaction
    // that locks waits for the other; one that began lazily and finds the row changed at its commit runs again).
    it.each(["getForUpdate", "getManyForUpdate"] as const)("numbers handed out after a read for update rise in the order the row's changes commit (%s)", async (lockWith) => {
      const Notes = Store.table<{ readonly id: string; readonly log: ReadonlyArray<number> }>({ name: `sequence_notes_${lockWith}`, key: (r) => r.id })
      const log = await runtime.runPromise(Effect.gen(function*() {
        const store = yield* Store.Store
        for (const id of ["x", "y", "z"]) yield* store.insert(Notes, { id, log: [] })
        const firstRead = yield* Deferred.make<void>()
        const secondRead = yield* Deferred.make<void>()
        const first = store.transaction(Effect.gen(function*() {
          yield* store.get(Notes, "y")
          yield* Deferred.succeed(firstRead, undefined)
          yield* Deferred.await(secondRead)
          const row = lockWith === "getForUpdate" ? (yield* store.getForUpdate(Notes, "x"))! : (yield* store.getManyForUpdate(Notes, ["x"]))[0]!
          yield* store.update(Notes, { ...row, log: [...row.log, yield* store.nextSequence] })
        }))
        const second = store.transaction(Effect.gen(function*() {
          yield* Deferred.await(firstRead)
          yield* store.get(Notes, "z")
          const row = (yield* store.getForUpdate(Notes, "x"))!
          yield* Deferred.succeed(secondRead, undefined)
          yield* Effect.sleep("20 millis")
          yield* store.update(Notes, { ...row, log: [...row.log, yield* store.nextSequence] })
        }))
        yield* Effect.all([first, second], { concurrency: 2 })
        return (yield* store.get(Notes, "x"))!.log
      }))
      expect(log).toHaveLength(2)
      expect(log[1]).toBeGreaterThan(log[0]!)
    }, 30_000)
  })
}

if (adminUrl !== undefined && adminUrl !== "") {
  describe("count rows on PostgreSQL", () => {
    let database: Awaited<ReturnType<typeof freshDatabase>>
    let client: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>
    let runtime: ManagedRuntime.ManagedRuntime<Store.Store | SqlClient.SqlClient, unknown>
    beforeAll(async () => {
      database = await freshDatabase("counts")
      client = ManagedRuntime.make(layerPostgresClient(database.url))
      const context = await client.context()
      runtime = ManagedRuntime.make(Layer.merge(freshStore(() => context), Layer.succeedContext(context)))
    }, 60_000)
    afterAll(async () => {
      await runtime.dispose()
      await client.dispose()
      await database.drop()
    })

    /** Partitions that come and go with their resources, as a delivery's attempts do. */
    const Attempts = Store.table<{ readonly id: string; readonly delivery: string; readonly scope: string }>({
      name: "count_attempts",
      key: (a) => a.id,
      orders: { byDelivery: { partition: (a) => a.delivery, sort: (a) => a.id }, byScope: { partition: (a) => a.scope, sort: (a) => a.id } }
    })

    // A removal used to leave a count row per shard of every partition it emptied, for good: a fork and its deletion
    // left hundreds, and a database shared by a suite's runs grew by them forever.
    it("a removal that empties a partition leaves no count row of it, and every other count stays right", async () => {
      const rowsOf = (partition: string) =>
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          Effect.map(sql<{ n: string }>`SELECT count(*) AS n FROM fos_count_shards WHERE tbl = 'count_attempts' AND part = ${partition}`, ([r]) => Number(r!.n)))
      await runtime.runPromise(Effect.gen(function*() {
        const store = yield* Store.Store
        const attempts = [["a1", "d1", "s1"], ["a2", "d1", "s1"], ["a3", "d2", "s1"], ["a4", "d3", "s2"]].map(([id, delivery, scope]) => ({ id: id!, delivery: delivery!, scope: scope! }))
        // Written from several transactions at once, so that the counts may fall on several connections' shards.
        yield* Effect.all(attempts.map((a) => store.transaction(Effect.orDie(store.insert(Attempts, a)))), { concurrency: 4 })
        yield* store.copies.save("s1-world", [{ table: Attempts, order: "byScope", partition: "s1" }])

        expect(yield* store.removePartition(Attempts, "byScope", "s1")).toBe(3)
        for (const emptied of ["d1", "d2", "s1"]) expect(yield* rowsOf(emptied)).toBe(0)
        expect(yield* rowsOf("d3")).toBeGreaterThan(0)
        expect(yield* store.count(Attempts, "byDelivery", "d3")).toBe(1)
        expect(yield* store.count(Attempts, "byScope", "s2")).toBe(1)

        // Counts come back with their rows (a restore), and a partition filled again counts from zero.
        yield* Effect.orDie(store.copies.restore("s1-world", { tables: [Attempts], replacing: [{ table: Attempts, order: "byScope", partition: "s1" }] }))
        expect(yield* store.count(Attempts, "byDelivery", "d1")).toBe(2)
        expect(yield* store.count(Attempts, "byScope", "s1")).toBe(3)
        yield* store.removeRows([{ table: Attempts, order: "byDelivery", partition: "d1" }])
        expect(yield* rowsOf("d1")).toBe(0)
        expect(yield* store.count(Attempts, "byScope", "s1")).toBe(1)
        yield* Effect.orDie(store.insert(Attempts, { id: "a5", delivery: "d1", scope: "s1" }))
        expect(yield* store.count(Attempts, "byDelivery", "d1")).toBe(1)
        expect(yield* store.count(Attempts, "byScope", "s1")).toBe(2)
      }))
    }, 30_000)

    // A copy keeps its rows' entries as text arrays: partitions and sort values that an array literal must quote come
    // back as they were, from rows given by value (`saveRows`) as from rows the database copied (`save`).
    it("a copy's entries come back exactly, whatever characters their partitions and sort values hold", async () => {
      const odd = ["a\"b", "back\\slash", "{x,y}", "NULL", "", " spaced ", "comma,", "\u00e9t\u00e9"]
      await runtime.runPromise(Effect.gen(function*() {
        const store = yield* Store.Store
        const given = odd.map((text, i) => ({ id: `odd${i}`, delivery: text, scope: "odd-given" }))
        const copied = odd.map((text, i) => ({ id: `oddc${i}`, delivery: `c${text}`, scope: "odd-copied" }))
        expect(yield* store.copies.saveRows("odd-world", Attempts, given)).toBe(odd.length)
        for (const a of copied) yield* Effect.orDie(store.insert(Attempts, a))
        yield* store.copies.save("odd-world", [{ table: Attempts, order: "byScope", partition: "odd-copied" }])
        yield* store.removePartition(Attempts, "byScope", "odd-copied")
        const replacing = [{ table: Attempts, order: "byScope", partition: "odd-given" }, { table: Attempts, order: "byScope", partition: "odd-copied" }]
        expect(yield* Effect.orDie(store.copies.restore("odd-world", { tables: [Attempts], replacing }))).toBe(2 * odd.length)
        for (const a of [...given, ...copied]) {
          expect(yield* store.page(Attempts, { order: "byDelivery", partition: a.delivery, from: undefined, limit: 5, descending: false, backward: false })).toEqual([a])
          expect(yield* store.count(Attempts, "byDelivery", a.delivery)).toBe(1)
        }
        expect(yield* store.count(Attempts, "byScope", "odd-given")).toBe(odd.length)
        expect(yield* store.count(Attempts, "byScope", "odd-copied")).toBe(odd.length)
      }))
    }, 30_000)
  })
}
