/**
 * The SQL client over PGlite's own API (src/PgliteClient.ts), what the SQL store's contract suite on PGlite does
 * not reach alone: transactions and savepoints commit and roll back, statements of other fibers wait for a
 * transaction instead of landing in it, a COMMIT that PostgreSQL turns into a ROLLBACK fails, rows come parsed
 * by their types, and PGlite's failures are the `SqlError` reasons the SQL store tells apart (a closed PGlite is
 * the store unreachable).
 */
import { rmSync } from "node:fs"
import { PGlite } from "@electric-sql/pglite"
import { Store } from "@fos/core"
import { Deferred, Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makePgliteClient } from "../src/PgliteClient.ts"
import { sqlDefect } from "../src/SqlStore.ts"
import { freshPgliteDirectory } from "./pgliteDirectory.ts"
import { Reactivity } from "effect/reactivity"

const dir = await freshPgliteDirectory("pglite-client")
let db: PGlite
beforeAll(async () => {
  db = await PGlite.create(dir)
  await db.exec(`CREATE TABLE t (k text PRIMARY KEY, n integer NOT NULL CHECK (n >= 0))`)
}, 60_000)
afterAll(async () => {
  await db.close()
  rmSync(dir, { recursive: true, force: true })
})

const run = <A, E>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, E>): Promise<A> =>
  Effect.runPromise(Effect.flatMap(makePgliteClient(db), f).pipe(Effect.provide(Reactivity.layer)))

const keys = (sql: SqlClient.SqlClient) => Effect.map(sql<{ k: string }>`SELECT k FROM t ORDER BY k`, (rows) => rows.map((r) => r.k))

const reasonOf = (f: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>) =>
  run((sql) => Effect.flip(f(sql))).then((e) => (e as { reason: { _tag: string } }).reason._tag)

describe("the SQL client over PGlite", () => {
  it("commits a transaction, rolls one back on a failure, and a failed savepoint only undoes its own part", async () => {
    await db.exec(`TRUNCATE t`)
    await run((sql) => sql.withTransaction(sql`INSERT INTO t VALUES ('a', 1)`))
    await run((sql) => Effect.ignore(sql.withTransaction(Effect.andThen(sql`INSERT INTO t VALUES ('b', 1)`, Effect.fail("no")))))
    await run((sql) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO t VALUES ('c', 1)`
        yield* Effect.ignore(sql.withTransaction(Effect.andThen(sql`INSERT INTO t VALUES ('d', 1)`, Effect.fail("no"))))
        yield* sql.withTransaction(sql`INSERT INTO t VALUES ('e', 1)`)
      }))
    )
    expect(await run(keys)).toEqual(["a", "c", "e"])
  })

  it("runs another fiber's statement after a transaction, not inside it", async () => {
    await db.exec(`TRUNCATE t`)
    const seen = await run((sql) =>
      Effect.gen(function*() {
        const inside = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const tx = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO t VALUES ('in', 1)`
          yield* Deferred.succeed(inside, undefined)
          yield* Deferred.await(release)
          return yield* Effect.fail("rolled back")
        })))
        yield* Deferred.await(inside)
        // Sent while the transaction holds PGlite: it waits, and so does not roll back with it.
        const outside = yield* Effect.forkChild(sql`INSERT INTO t VALUES ('out', 1)`)
        // Its turn to run (and, were PGlite not held, to reach it) before the transaction goes on.
        for (let i = 0; i < 5; i++) yield* Effect.yieldNow
        yield* Deferred.succeed(release, undefined)
        yield* Effect.ignore(Fiber.join(tx))
        yield* Fiber.join(outside)
        return yield* keys(sql)
      })
    )
    expect(seen).toEqual(["out"])
  })

  it("fails a COMMIT that PostgreSQL answers with ROLLBACK (an aborted transaction)", async () => {
    const reserved = await run((sql) =>
      Effect.scoped(Effect.gen(function*() {
        const connection = yield* sql.reserve
        yield* connection.executeRaw("BEGIN", [])
        yield* Effect.ignore(connection.executeRaw("SELECT 1/0", []))
        return ((yield* connection.executeRaw("COMMIT", [])) as { command?: string }).command
      }))
    )
    expect(reserved).toBe("ROLLBACK")
    expect(await reasonOf((sql) => sql.withTransaction(Effect.ignore(sql`SELECT 1/0`)))).toBe("UnknownError")
    expect(db.isInTransaction()).toBe(false)
  })

  it("parses rows by their types, and compiles fragments as for PostgreSQL", async () => {
    const [row] = await run((sql) =>
      sql<Record<string, unknown>>`SELECT ${"x"}::text AS t, ${2}::int AS i, 3::bigint AS b, ${'{"a":[1]}'}::json AS j, true AS yes,
        (SELECT count(*) FROM (VALUES ${sql.csv([sql`(${1})`, sql`(${2})`])}) AS v (n) WHERE n IN ${sql.in([1, 2])}) AS listed`
    )
    expect(row).toEqual({ t: "x", i: 2, b: 3, j: { a: [1] }, yes: true, listed: 2 })
    expect(await run((sql) => sql`SELECT 1 AS one, 2 AS two`.values)).toEqual([[1, 2]])
  })

  it("answers PGlite's failures as the SqlError reasons of their SQLSTATE", async () => {
    await db.exec(`TRUNCATE t; INSERT INTO t VALUES ('a', 1)`)
    expect(await reasonOf((sql) => sql`INSERT INTO t VALUES ('a', 1)`)).toBe("UniqueViolation")
    expect(await reasonOf((sql) => sql`INSERT INTO t VALUES ('z', -1)`)).toBe("ConstraintError")
    expect(await reasonOf((sql) => sql`SELEC 1`)).toBe("SqlSyntaxError")
    expect(await reasonOf((sql) => sql`SELECT 1/0`)).toBe("UnknownError")
  })

  it("answers a closed PGlite as a lost connection: the store unreachable", async () => {
    const closed = await PGlite.create(await freshPgliteDirectory("pglite-client-closed"))
    await closed.close()
    const error = await Effect.runPromise(
      Effect.flatMap(makePgliteClient(closed), (sql) => Effect.flip(sql`SELECT 1`)).pipe(Effect.provide(Reactivity.layer))
    )
    expect(error.reason._tag).toBe("ConnectionError")
    expect(sqlDefect(error)).toBeInstanceOf(Store.StoreUnavailable)
  })
})
