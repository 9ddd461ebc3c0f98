/**
 * What the PGlite store's log costs at its edges (docs/storage.md, "PGlite: the memory store with a durable image"):
 * `N` (20,000) rows of about 1 KB written in transactions of 100, the log never folded; then the time a start takes
 * to read the tables and replay that log, the time of the fold the next commit makes, and a start from the folded
 * tables. Prints; records nothing. `node --conditions=@fos/source bench/fold.ts`
 */
import { rmSync } from "node:fs"
import { PGlite } from "@electric-sql/pglite"
import { Store } from "@fos/core"
import { Effect, ManagedRuntime } from "effect"
import { layerPgliteClient, makeImageStore, migrate } from "../adapters/sql/src/index.ts"
import { freshPgliteDirectory } from "../adapters/sql/test/pgliteDirectory.ts"

interface Row {
  readonly id: string
  readonly owner: string
  readonly text: string
}
const Rows = Store.table<Row>({ name: "bench_rows", key: (r) => r.id, unique: {}, orders: { byOwner: { partition: (r) => r.owner, sort: (r) => r.id } } })
const rows = Number(process.env.N ?? 20_000)

const dir = await freshPgliteDirectory("bench-fold")
const client = ManagedRuntime.make(layerPgliteClient(dir))
await client.runPromise(migrate)
await client.dispose()
const db = await PGlite.create(dir)
try {
  await Effect.runPromise(Effect.gen(function*() {
    const store = yield* makeImageStore(db, { foldAtChars: Number.MAX_SAFE_INTEGER })
    for (let at = 0; at < rows; at += 100) {
      yield* store.insertMany(Rows, Array.from({ length: Math.min(100, rows - at) }, (_, i) => ({ id: `r${at + i}`, owner: `o${i % 7}`, text: "x".repeat(900) })))
    }
  }))
  const logged = await db.query<{ chars: string }>(`SELECT sum(length(record))::text AS chars FROM fos_log`)
  console.log(`${rows} rows, a log of ${(Number(logged.rows[0]!.chars) / 1024 / 1024).toFixed(1)} MB`)
  let t0 = performance.now()
  await Effect.runPromise(Effect.gen(function*() {
    const store = yield* makeImageStore(db, { foldAtChars: 1 })
    console.log(`a start that replays the log: ${(performance.now() - t0).toFixed(0)} ms`)
    t0 = performance.now()
    yield* store.insert(Rows, { id: "last", owner: "o1", text: "y" })
    console.log(`the commit that folds it: ${(performance.now() - t0).toFixed(0)} ms`)
  }))
  t0 = performance.now()
  await Effect.runPromise(Effect.asVoid(makeImageStore(db)))
  console.log(`a start from the folded tables: ${(performance.now() - t0).toFixed(0)} ms`)
} finally {
  await db.close()
  rmSync(dir, { recursive: true, force: true })
}
