/**
 * The store on PGlite: the memory store, with the PGlite database as its durable image (core MemoryStore.ts,
 * `Image`). docs/storage.md ("PGlite: the memory store with a durable image") says why.
 *
 * A PGlite directory serves one process (its lock), so no other process reads or writes its rows: the process can
 * hold all of them in memory, read them there, and send PGlite only what each transaction changed, as one record of
 * the log (`fos_log`) as the transaction commits. The log is folded into the tables now and then: the rows
 * (`fos_rows`), the copies (`fos_copies`, `fos_copy_rows`) and the sequence (`fos_sequence`), kept as the SQL store
 * keeps them; the index tables stay empty, because the memory store indexes the rows as it reads them.
 */
import type { PGlite } from "@electric-sql/pglite"
import { clearImmediate, setImmediate } from "node:timers"
import { MemoryStore, Store } from "@fos/core"
import { Clock, Effect } from "effect"
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
      await run(`INSERT INTO fos_copy_rows (copy, tbl, key, data, uniques)
        SELECT $1, r.tbl, r.key, r.data, '[]' FROM fos_rows r ${byKeys(stored, "r", params)}`, params)
    }
    const sent = copy.added.filter((c) => !c.stored).map((c) => [c.table, c.key, JSON.stringify(c.row)])
    if (sent.length > 0) {
      const params: Array<unknown> = [copy.id]
      await run(`INSERT INTO fos_copy_rows (copy, tbl, key, data, uniques)
        SELECT $1, v.*, '[]' FROM ${relation(sent, ["tbl", "key", "data"], params)}`, params)
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
 * One turn of the event loop, the image's pause (MemoryStore.ts, `Image.pause`): PGlite runs its statements on this
 * thread, and a statement's promise resumes its caller in the same turn, so a run of commits (an advance's timers)
 * or a bulk write kept every other request of the process, and its sockets, waiting for the whole run. A macrotask,
 * not a fiber's yield, so that the sockets are read in it (docs/storage.md, "Long work and other requests"); from
 * `node:timers`, which Bun and Deno have as Node does.
 */
const eventLoopTurn: Effect.Effect<void> = Effect.callback<void>((resume) => {
  const turn = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(turn))
})

/** Keys (or entries of them) grouped by table name, so that a record names each table once. */
type ByTable<A> = Record<string, Array<A>>

/** An empty `ByTable` (no prototype: a table's name is only ever a member). */
const byTable = <A>(): ByTable<A> => Object.create(null) as ByTable<A>

const addTo = <A>(byTable: ByTable<A>, table: string, item: A) => {
  const items = byTable[table]
  if (items === undefined) byTable[table] = [item]
  else items.push(item)
}

/**
 * A transaction's changes as the log keeps them (`Changes`, in short): rows written, with their values; rows removed;
 * rows a restore put back as a copy holds them, by key only, or `null` when it put back every row of the copy; then
 * the copies touched, a copy's rows that its table holds as they are by key only; and the sequence.
 */
interface LogRecord {
  readonly w?: ByTable<readonly [key: string, row: unknown]>
  readonly d?: ByTable<string>
  readonly r?: ReadonlyArray<readonly [copy: string, keys: ByTable<string> | null]>
  readonly c?: ReadonlyArray<{
    readonly id: string
    readonly replaced: boolean
    readonly stored: ByTable<string>
    readonly sent: ByTable<readonly [key: string, row: unknown]>
    readonly size: number
  }>
  readonly s: number
}

const recordOf = (changes: MemoryStore.Changes, now: MemoryStore.Now): LogRecord => {
  const w = byTable<readonly [string, unknown]>()
  const d = byTable<string>()
  const r = new Map<string, { keys: ByTable<string>; count: number }>()
  let written = false
  let removed = false
  for (const { table, key, row, fromCopy } of changes.rows) {
    if (row === undefined) {
      addTo(d, table, key)
      removed = true
    } else if (fromCopy === undefined) {
      addTo(w, table, [key, row] as const)
      written = true
    } else {
      let restored = r.get(fromCopy)
      if (restored === undefined) r.set(fromCopy, (restored = { keys: byTable(), count: 0 }))
      addTo(restored.keys, table, key)
      restored.count++
    }
  }
  const stored = (added: ReadonlyArray<MemoryStore.CopiedRow & { readonly stored: boolean }>, asStored: boolean) => {
    const out = byTable<any>()
    for (const c of added) if (c.stored === asStored) addTo(out, c.table, asStored ? c.key : [c.key, c.row])
    return out
  }
  return {
    ...(written ? { w } : {}),
    ...(removed ? { d } : {}),
    // A restore that put back every row of its copy (after a reset) says so, rather than naming them all: each row it
    // put back is one of the copy's, so as many rows as the copy holds are all of them.
    ...(r.size === 0 ? {} : { r: [...r].map(([copy, { keys, count }]) => [copy, count === now.copy(copy)?.length ? null : keys] as const) }),
    ...(changes.copies.length === 0 ? {} : {
      c: changes.copies.map((copy) => ({ id: copy.id, replaced: copy.replaced, stored: stored(copy.added, true), sent: stored(copy.added, false), size: copy.size }))
    }),
    s: changes.sequence
  }
}

/** A commit of more entries than this (rows and copies' rows) is written as several records (`piecesOf`). */
const entriesPerRecord = 500

/**
 * A record of many entries as records of at most `most` each, which replayed one after another change the store as
 * the record does: its rows' pieces first, then its copies' (a copy's saved row reads the rows as the transaction
 * left them), a copy replaced in its first piece only and added to in the others; every piece with the sequence.
 * A key is in at most one of `w`, `d` and `r`, so the order of those pieces does not matter.
 */
const piecesOf = (record: LogRecord, most: number): ReadonlyArray<LogRecord> => {
  let entries = 0
  const count = (byTable: ByTable<unknown> | undefined) => eachOf(byTable, () => void entries++)
  count(record.w)
  count(record.d)
  for (const [, keys] of record.r ?? []) keys === null ? entries++ : count(keys)
  for (const copy of record.c ?? []) {
    count(copy.stored)
    count(copy.sent)
  }
  if (entries <= most) return [record]
  type Copy = NonNullable<LogRecord["c"]>[number]
  type Piece = { w?: ByTable<readonly [string, unknown]>; d?: ByTable<string>; r?: Array<[string, ByTable<string> | null]>; c?: Array<Copy>; s: number }
  const pieces: Array<Piece> = []
  let piece: Piece = { s: record.s }
  let size = 0
  /** Room for one more entry in the current piece. */
  const room = () => {
    if (size < most) return
    pieces.push(piece)
    piece = { s: record.s }
    size = 0
  }
  eachOf(record.w, (table, item) => {
    room()
    addTo((piece.w ??= byTable()), table, item)
    size++
  })
  eachOf(record.d, (table, key) => {
    room()
    addTo((piece.d ??= byTable()), table, key)
    size++
  })
  for (const [copy, keys] of record.r ?? []) {
    if (keys === null) {
      room()
      ;(piece.r ??= []).push([copy, null])
      size++
      continue
    }
    let into: ByTable<string> | undefined
    eachOf(keys, (table, key) => {
      if (size >= most || into === undefined) {
        room()
        ;(piece.r ??= []).push([copy, (into = byTable())])
      }
      addTo(into, table, key)
      size++
    })
  }
  for (const copy of record.c ?? []) {
    let into: { -readonly [K in keyof Copy]: Copy[K] } | undefined
    const part = () => {
      if (into !== undefined && size < most) return into
      room()
      into = { id: copy.id, replaced: into === undefined ? copy.replaced : false, stored: byTable(), sent: byTable(), size: copy.size }
      ;(piece.c ??= []).push(into)
      return into
    }
    part()
    eachOf(copy.stored, (table, key) => {
      addTo(part().stored, table, key)
      size++
    })
    eachOf(copy.sent, (table, item) => {
      addTo(part().sent, table, item)
      size++
    })
  }
  pieces.push(piece)
  return pieces
}

/** What the database holds as a store: the tables' rows and the copies (each by table and key), and the sequence. */
interface Held {
  readonly rows: Map<string, Map<string, unknown>>
  readonly copies: Map<string, Map<string, MemoryStore.CopiedRow>>
  sequence: number
}

const copyKey = (table: string, key: string) => `${table}\u0000${key}`

/** Each (table, item) of `byTable`. */
const eachOf = <A>(byTable: ByTable<A> | undefined, f: (table: string, item: A) => void) => {
  for (const [table, items] of Object.entries(byTable ?? {})) for (const item of items) f(table, item)
}

/** Applies one record to `held`, as the transaction it keeps changed the store: its rows first, then its copies. */
const replay = (held: Held, record: LogRecord) => {
  const table = (name: string) => {
    let rows = held.rows.get(name)
    if (rows === undefined) held.rows.set(name, (rows = new Map()))
    return rows
  }
  eachOf(record.w, (name, [key, row]) => table(name).set(key, row))
  eachOf(record.d, (name, key) => held.rows.get(name)?.delete(key))
  for (const [id, keys] of record.r ?? []) {
    const copy = held.copies.get(id)
    if (keys === null) for (const { table: name, key, row } of copy?.values() ?? []) table(name).set(key, row)
    else eachOf(keys, (name, key) => table(name).set(key, copy?.get(copyKey(name, key))?.row))
  }
  for (const change of record.c ?? []) {
    let copy = change.replaced ? undefined : held.copies.get(change.id)
    if (copy === undefined) held.copies.set(change.id, (copy = new Map()))
    const into = copy
    eachOf(change.stored, (name, key) => into.set(copyKey(name, key), { table: name, key, row: held.rows.get(name)?.get(key) }))
    eachOf(change.sent, (name, [key, row]) => into.set(copyKey(name, key), { table: name, key, row }))
    if (change.size === 0) held.copies.delete(change.id)
  }
  if (record.s > held.sequence) held.sequence = record.s
}

/**
 * The log is folded into the tables once what it holds passes this many characters: a start reads the tables and
 * replays the log, so this bounds what a start replays, and how long one commit in many takes to fold it.
 */
const foldAtChars = 16 * 1024 * 1024

/**
 * A string PostgreSQL would refuse in the tables, as the record's JSON escapes it: a NUL character (text refuses
 * it, and jsonb its escape) or half a surrogate pair (jsonb refuses it). A record is written as JSON text, which
 * takes both, so a commit refuses them itself: a fold would fail on them later, for good.
 */
const refusedByTheTables = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/

/**
 * The image's writer. A transaction's changes go to the log (`fos_log`) as one record, one statement, whatever
 * they are: a restore of 9,000 rows is the keys it put back, a snapshot the keys it saved. Once the log passes
 * `foldAtChars`, the commit that passes it writes instead, in one PGlite transaction, every row and copy the log
 * touched as the store holds it now, and empties the log. A start reads the tables and replays the log
 * (docs/storage.md, "PGlite: the memory store with a durable image").
 */
const imageWriter = (
  run: Run,
  logged: { chars: number; next: number; rows: Map<string, Set<string>>; copies: Set<string> },
  foldAt: number,
  pauses: boolean
) => {
  /** Between the pieces of a commit written as several records, when the store pauses (`eventLoopTurn`). */
  const turn = (): Promise<void> => (pauses ? new Promise((resolve) => setImmediate(resolve)) : Promise.resolve())
  /** Adds what `record` changed to what the log has touched; `copyRows` reads a copy's rows (for a whole-copy restore). */
  const touch = (record: LogRecord, copyRows: (id: string) => Iterable<MemoryStore.CopiedRow>) => {
    const row = (table: string, key: string) => {
      let keys = logged.rows.get(table)
      if (keys === undefined) logged.rows.set(table, (keys = new Set()))
      keys.add(key)
    }
    eachOf(record.w, (table, [key]) => row(table, key))
    eachOf(record.d, row)
    for (const [id, keys] of record.r ?? []) {
      if (keys === null) for (const c of copyRows(id)) row(c.table, c.key)
      else eachOf(keys, row)
    }
    for (const copy of record.c ?? []) logged.copies.add(copy.id)
  }
  /** Writes what the log touched as `now` holds it, and empties the log: one PGlite transaction. */
  const fold = async (now: MemoryStore.Now, sequence: number) => {
    const rows: Array<MemoryStore.Changes["rows"][number]> = []
    for (const [table, keys] of logged.rows) for (const key of keys) rows.push({ table, key, row: now.row(table, key) })
    const copies = [...logged.copies].map((id) => {
      const held = now.copy(id) ?? []
      return { id, replaced: true, added: held.map((row) => ({ ...row, stored: false })), size: held.length }
    })
    await run("BEGIN", [])
    try {
      await sendRows(run, { rows, copies, sequence })
      await sendCopies(run, { rows, copies, sequence })
      await run("DELETE FROM fos_log", [])
      await run("COMMIT", [])
    } catch (e) {
      await run("ROLLBACK", []).catch(() => undefined)
      throw e
    }
    logged.chars = 0
    logged.rows.clear()
    logged.copies.clear()
  }
  /** Makes one transaction's changes durable: a record in the log, or a fold. A failure rolls the transaction back. */
  const commit = (changes: MemoryStore.Changes, now: MemoryStore.Now): Effect.Effect<void> =>
    Effect.tryPromise({
      try: async () => {
        const record = recordOf(changes, now)
        // A commit of many entries (an import's copy of 10,000 rows) as several records, each encoded and written in
        // a turn of its own, in one PGlite transaction: one record of megabytes held the thread while it was encoded
        // and written (docs/storage.md, "Long work and other requests").
        const pieces = piecesOf(record, entriesPerRecord)
        const texts: Array<string> = []
        let chars = 0
        for (const piece of pieces) {
          if (texts.length > 0) await turn()
          const text = JSON.stringify(piece)
          if (refusedByTheTables.test(text)) throw new Error("a row holds a NUL character or half a surrogate pair, which PostgreSQL does not store")
          texts.push(text)
          chars += text.length
        }
        if (logged.chars + chars > foldAt) {
          touch(record, (id) => now.copy(id) ?? [])
          return await fold(now, changes.sequence)
        }
        if (texts.length === 1) await run(`INSERT INTO fos_log (n, record) VALUES ($1, $2)`, [logged.next, texts[0]])
        else {
          await run("BEGIN", [])
          try {
            for (let i = 0; i < texts.length; i++) {
              if (i > 0) await turn()
              await run(`INSERT INTO fos_log (n, record) VALUES ($1, $2)`, [logged.next + i, texts[i]])
            }
            await run("COMMIT", [])
          } catch (e) {
            await run("ROLLBACK", []).catch(() => undefined)
            throw e
          }
        }
        logged.next += texts.length
        logged.chars += chars
        touch(record, (id) => now.copy(id) ?? [])
      },
      catch: (e: unknown) => new Store.StoreUnavailable({ message: `PGlite: cannot write (${(e as Error).message})` })
    }).pipe(Effect.orDie)
  return { commit, touch, fold }
}

/** The rows, copies and sequence the database holds (its tables, then its log replayed over them), and its writer. */
const read = async (db: PGlite, foldAt: number, pauses = false) => {
  const held: Held = { rows: new Map(), copies: new Map(), sequence: 0 }
  for (const r of (await db.query<{ tbl: string; key: string; data: string }>(`SELECT tbl, key, data::text AS data FROM fos_rows ORDER BY tbl, key`)).rows) {
    let table = held.rows.get(r.tbl)
    if (table === undefined) held.rows.set(r.tbl, (table = new Map()))
    table.set(r.key, JSON.parse(r.data))
  }
  for (const r of (await db.query<{ copy: string; tbl: string; key: string; data: string }>(
    `SELECT copy, tbl, key, data::text AS data FROM fos_copy_rows ORDER BY copy, tbl, key`
  )).rows) {
    let copy = held.copies.get(r.copy)
    if (copy === undefined) held.copies.set(r.copy, (copy = new Map()))
    copy.set(copyKey(r.tbl, r.key), { table: r.tbl, key: r.key, row: JSON.parse(r.data) })
  }
  const sequence = (await db.query<{ last_value: string | number; is_called: boolean }>(`SELECT last_value, is_called FROM fos_sequence`)).rows[0]
  held.sequence = sequence === undefined || !sequence.is_called ? 0 : Number(sequence.last_value)
  const logged = { chars: 0, next: 1, rows: new Map<string, Set<string>>(), copies: new Set<string>() }
  const writer = imageWriter(runWith(preparedStatements(db)), logged, foldAt, pauses)
  for (const r of (await db.query<{ n: string | number; record: string }>(`SELECT n, record FROM fos_log ORDER BY n`)).rows) {
    const record = JSON.parse(r.record) as LogRecord
    replay(held, record)
    writer.touch(record, (id) => held.copies.get(id)?.values() ?? [])
    logged.chars += r.record.length
    logged.next = Number(r.n) + 1
  }
  return { held, logged, writer }
}

/** `held` as the store holds it now, for a fold. */
const nowOf = (held: Held): MemoryStore.Now => ({
  row: (table, key) => held.rows.get(table)?.get(key),
  copy: (id) => {
    const copy = held.copies.get(id)
    return copy === undefined ? undefined : [...copy.values()]
  }
})

/**
 * Folds the log of `db` (a directory at migration 19 or later) into its tables, and empties it: a migration that
 * converts stored rows then finds every row in them (Stores.ts runs it before such a migration).
 */
export const foldLog = async (db: PGlite): Promise<void> => {
  const { held, logged, writer } = await read(db, foldAtChars)
  if (logged.next > 1) await writer.fold(nowOf(held), held.sequence)
}

/** The image's rows, copies and sequence as the database holds them (its tables, then its log), read once when the store opens. */
const load = async (db: PGlite, foldAt: number, pauses: boolean): Promise<MemoryStore.Image> => {
  // Once, for a directory the SQL store wrote: the index tables are the memory store's to make now.
  const indexed = await db.query<{ any: boolean }>(`SELECT EXISTS (SELECT 1 FROM fos_orders) OR EXISTS (SELECT 1 FROM fos_uniques) AS any`)
  if (indexed.rows[0]?.any === true) await db.exec(`TRUNCATE fos_orders, fos_uniques, fos_counts, fos_count_shards`)
  const { held, writer } = await read(db, foldAt, pauses)
  // A table's rows in key order, as the memory store indexes them.
  const rows = new Map([...held.rows].map(([table, byKey]) => [table, new Map([...byKey].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))]))
  return {
    rows,
    copies: new Map([...held.copies].map(([id, copy]) => [id, [...copy.values()]])),
    sequence: held.sequence,
    commit: writer.commit,
    ...(pauses ? { pause: eventLoopTurn } : {})
  }
}

/**
 * The memory store over the (migrated) PGlite database `db`, starting from the rows it holds. `foldAtChars` (for
 * tests) folds the log sooner; `pauses`: its long work pauses for the event loop (`eventLoopTurn`).
 */
export const makeImageStore = (db: PGlite, options: { readonly foldAtChars?: number; readonly pauses?: boolean } = {}): Effect.Effect<Store.StoreService> =>
  Effect.flatMap(Clock.Clock, (clock) =>
    Effect.map(Effect.promise(() => load(db, options.foldAtChars ?? foldAtChars, options.pauses === true)), (image) => MemoryStore.make(image, clock)))
