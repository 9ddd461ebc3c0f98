/**
 * The store on PGlite: the memory store, with the PGlite database as its durable image (core MemoryStore.ts,
 * `Image`). docs/storage.md ("PGlite: the memory store with a durable image") says why.
 *
 * A PGlite directory serves one process (its lock), so no other process reads or writes its rows: the process can
 * hold all of them in memory, read them there, and send PGlite only what each transaction changed, in one statement
 * as the transaction commits. The database keeps the rows (`fos_rows`), the copies (`fos_copies`, `fos_copy_rows`)
 * and the sequence (`fos_sequence`) as the SQL store does; the index tables stay empty, because the memory store
 * indexes the rows as it reads them.
 */
import type { PGlite } from "@electric-sql/pglite"
import { MemoryStore, Store } from "@fos/core"
import { Effect } from "effect"
import { latestVersion } from "./Migrations.ts"
import { preparedStatements, type PreparedStatements } from "./PglitePrepared.ts"

/** Runs a statement with its parameters as text. */
const runWith = (run: PreparedStatements) => (text: string, params: ReadonlyArray<unknown>) =>
  run(text, params.map((value) => (value === null || value === undefined ? null : String(value))))
type Run = ReturnType<typeof runWith>

/** Up to this many rows are listed in a statement as `VALUES`; more go as one JSON parameter. */
const listedAtMost = 64

/**
 * `rows` (each a list of column values) as a relation of `columns`, with its parameters added to `params`: a few as
 * `VALUES`, so the planner knows how few there are and finds each by its key (from a set-returning function it
 * expects a hundred rows, and scanned the table to remove one); many as one JSON parameter, which no limit on a
 * statement's parameters stops.
 */
const relation = (rows: ReadonlyArray<ReadonlyArray<string>>, columns: ReadonlyArray<string>, params: Array<unknown>): string => {
  if (rows.length <= listedAtMost) {
    const values = rows.map((row) => `(${row.map((value, i) => `$${params.push(value)}${columns[i] === "data" ? "::json" : ""}`).join(", ")})`)
    return `(VALUES ${values.join(", ")}) AS v (${columns.join(", ")})`
  }
  // A row's `data` is JSON text already, put in as it is: `e->i` of a `json` value keeps its text as written (`json`,
  // unlike `jsonb`, keeps the keys' order).
  params.push(`[${rows.map((row) => `[${row.map((value, i) => (columns[i] === "data" ? value : JSON.stringify(value))).join(",")}]`).join(",")}]`)
  return `(SELECT ${columns.map((column, i) => `e->${column === "data" ? "" : ">"}${i} AS ${column}`).join(", ")} FROM json_array_elements($${params.length}::json) AS e) AS v`
}

/** `keys` (table and key) as a relation, joined to `alias`'s rows of the same table and key. */
const byKeys = (keys: ReadonlyArray<ReadonlyArray<string>>, alias: string, params: Array<unknown>): string =>
  `JOIN ${relation(keys, ["tbl", "key"], params)} ON ${alias}.tbl = v.tbl AND ${alias}.key = v.key`

const upsert = `ON CONFLICT (tbl, key) DO UPDATE SET data = excluded.data RETURNING 1`

/**
 * One transaction's rows and sequence, as one statement with only the parts it needs: the rows written (a row a
 * restore put back as its copy holds it is copied from the copy, not sent), the rows removed, the sequence.
 */
const sendRows = (run: Run, changes: MemoryStore.Changes) => {
  const params: Array<unknown> = []
  const written: Array<Array<string>> = []
  const gone: Array<Array<string>> = []
  const restored = new Map<string, Array<Array<string>>>()
  for (const { table, key, row, fromCopy } of changes.rows) {
    if (row === undefined) gone.push([table, key])
    else if (fromCopy === undefined) written.push([table, key, JSON.stringify(row)])
    else {
      let keys = restored.get(fromCopy)
      if (keys === undefined) restored.set(fromCopy, (keys = []))
      keys.push([table, key])
    }
  }
  const parts = [
    ...(written.length === 0 ? [] : [
      `written AS (INSERT INTO fos_rows (tbl, key, data) SELECT * FROM ${relation(written, ["tbl", "key", "data"], params)} ${upsert})`
    ]),
    ...[...restored].map(([copy, keys], i) =>
      `restored${i} AS (INSERT INTO fos_rows (tbl, key, data) SELECT c.tbl, c.key, c.data FROM fos_copy_rows c ${byKeys(keys, "c", params)}
         WHERE c.copy = $${params.push(copy)} ${upsert})`
    ),
    ...(gone.length === 0 ? [] : [
      `gone AS (DELETE FROM fos_rows r USING ${relation(gone, ["tbl", "key"], params)} WHERE r.tbl = v.tbl AND r.key = v.key RETURNING 1)`
    ])
  ]
  const sequence = changes.sequence > 0 ? `setval('fos_sequence', $${params.push(changes.sequence)}::bigint)` : "NULL"
  return run(`${parts.length === 0 ? "" : `WITH ${parts.join(", ")} `}SELECT ${sequence} AS n`, params)
}

/**
 * The copies a transaction touched, after its rows: a row saved as its table holds it (a snapshot's) is copied from
 * `fos_rows` by the database, the others are sent. The SQL store's restore reads each row's index entries and
 * unique values beside it; this store makes its own, so they are empty.
 */
const sendCopies = async (run: Run, changes: MemoryStore.Changes) => {
  for (const copy of changes.copies) {
    if (copy.replaced) {
      await run(`DELETE FROM fos_copy_rows WHERE copy = $1`, [copy.id])
      await run(`DELETE FROM fos_copies WHERE copy = $1`, [copy.id])
    }
    const stored = copy.added.filter((c) => c.stored).map((c) => [c.table, c.key])
    if (stored.length > 0) {
      const params: Array<unknown> = [copy.id]
      await run(`INSERT INTO fos_copy_rows (copy, tbl, key, data, entries, uniques)
        SELECT $1, r.tbl, r.key, r.data, '[]', '[]' FROM fos_rows r ${byKeys(stored, "r", params)}`, params)
    }
    const sent = copy.added.filter((c) => !c.stored).map((c) => [c.table, c.key, JSON.stringify(c.row)])
    if (sent.length > 0) {
      const params: Array<unknown> = [copy.id]
      await run(`INSERT INTO fos_copy_rows (copy, tbl, key, data, entries, uniques)
        SELECT $1, v.*, '[]', '[]' FROM ${relation(sent, ["tbl", "key", "data"], params)}`, params)
    }
    if (copy.size > 0) {
      await run(
        `INSERT INTO fos_copies (copy, version, rows) VALUES ($1, $2, $3) ON CONFLICT (copy) DO UPDATE SET rows = excluded.rows`,
        [copy.id, latestVersion, copy.size]
      )
    }
  }
}

/**
 * Makes one transaction's changes durable: its rows and sequence in one statement; with its copies (a snapshot
 * taken, restored over, deleted) in one PGlite transaction. A failure is the store's, and rolls the transaction back.
 */
const commit = (run: Run) => (changes: MemoryStore.Changes): Effect.Effect<void> =>
  Effect.tryPromise({
    try: async () => {
      if (changes.copies.length === 0) return await sendRows(run, changes)
      await run("BEGIN", [])
      try {
        await sendRows(run, changes)
        await sendCopies(run, changes)
        await run("COMMIT", [])
      } catch (e) {
        await run("ROLLBACK", []).catch(() => undefined)
        throw e
      }
    },
    catch: (e: unknown) => new Store.StoreUnavailable({ message: `PGlite: cannot write (${(e as Error).message})` })
  }).pipe(Effect.asVoid, Effect.orDie)

/** The image's rows, copies and sequence as the database holds them, read once when the store opens. */
const load = async (db: PGlite): Promise<MemoryStore.Image> => {
  // Once, for a directory the SQL store wrote: the index tables are the memory store's to make now.
  const indexed = await db.query<{ any: boolean }>(`SELECT EXISTS (SELECT 1 FROM fos_orders) OR EXISTS (SELECT 1 FROM fos_uniques) AS any`)
  if (indexed.rows[0]?.any === true) await db.exec(`TRUNCATE fos_orders, fos_uniques, fos_counts, fos_count_shards`)
  const rows = new Map<string, Array<readonly [string, unknown]>>()
  for (const r of (await db.query<{ tbl: string; key: string; data: string }>(`SELECT tbl, key, data::text AS data FROM fos_rows ORDER BY tbl, key`)).rows) {
    let table = rows.get(r.tbl)
    if (table === undefined) rows.set(r.tbl, (table = []))
    table.push([r.key, JSON.parse(r.data)])
  }
  const copies = new Map<string, Array<MemoryStore.CopiedRow>>()
  for (const r of (await db.query<{ copy: string; tbl: string; key: string; data: string }>(
    `SELECT copy, tbl, key, data::text AS data FROM fos_copy_rows ORDER BY copy, tbl, key`
  )).rows) {
    let copy = copies.get(r.copy)
    if (copy === undefined) copies.set(r.copy, (copy = []))
    copy.push({ table: r.tbl, key: r.key, row: JSON.parse(r.data) })
  }
  const sequence = (await db.query<{ last_value: string | number; is_called: boolean }>(`SELECT last_value, is_called FROM fos_sequence`)).rows[0]
  return {
    rows,
    copies,
    sequence: sequence === undefined || !sequence.is_called ? 0 : Number(sequence.last_value),
    commit: commit(runWith(preparedStatements(db)))
  }
}

/** The memory store over the (migrated) PGlite database `db`, starting from the rows it holds. */
export const makeImageStore = (db: PGlite): Effect.Effect<Store.StoreService> =>
  Effect.map(Effect.promise(() => load(db)), MemoryStore.make)
