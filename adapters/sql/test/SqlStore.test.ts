/**
 * The storage contract suite on the SQL store: on PGlite always, and on PostgreSQL when DATABASE_URL is set (CI
 * sets it). Each test starts from empty tables on one shared database, so the suite stays fast.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Store } from "@fos/core"
import { type Context, Effect, Layer, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll } from "vitest"
import { storeContract } from "../../../packages/core/test/storeContract.ts"
import { layerPgliteClient, layerPostgresClient, makeSqlStore, migrate } from "../src/index.ts"
import { adminUrl, freshDatabase } from "./databases.ts"

/** The store on an already open client, emptied first. */
const freshStore = (client: () => Context.Context<SqlClient.SqlClient>) =>
  Layer.effect(
    Store,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* migrate
      yield* sql`TRUNCATE fos_rows, fos_uniques, fos_orders, fos_counts, fos_count_shards`
      return yield* makeSqlStore
    }).pipe(Effect.orDie)
  ).pipe(Layer.provide(Layer.suspend(() => Layer.succeedContext(client()))))

/** Fewer rows per property run: each write is a round trip. */
const sqlScale = { propertyRows: 120, propertyRuns: 3 }

const dir = mkdtempSync(join(tmpdir(), "fos-pglite-contract-"))
const pglite = ManagedRuntime.make(layerPgliteClient(dir))
let pgliteContext: Context.Context<SqlClient.SqlClient>
beforeAll(async () => {
  pgliteContext = await pglite.context()
}, 60_000)
afterAll(async () => {
  await pglite.dispose()
  rmSync(dir, { recursive: true, force: true })
})
storeContract("PGlite", () => freshStore(() => pgliteContext), sqlScale)

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
  storeContract("PostgreSQL", () => freshStore(() => postgresContext), sqlScale)
}
