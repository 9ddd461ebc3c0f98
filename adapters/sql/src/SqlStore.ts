/**
 * The store port on SQL (Effect's `effect/sql`), one implementation for PostgreSQL and for PGlite.
 *
 * Every declared table lives in four generic tables, so a new resource needs no migration:
 * - `fos_rows`: one row per stored row, its JSON in `data`;
 * - `fos_uniques`: one row per (unique key, value), whose primary key enforces uniqueness;
 * - `fos_orders`: one row per (order, partition, sort value, key), the index keyset pages walk;
 * - `fos_count_shards`: the row count per (order, partition), kept in the same transaction, so `total` costs the
 *   same at any size. A partition's count is spread over up to 32 rows, one per connection slot
 *   (`pg_backend_pid() % 32`): writers on different connections add to different rows, so an organization's
 *   writers do not queue on one count row (its transactions, all counted by status and type), and a transaction
 *   touches one shard of each count, so two cannot lock two shards in opposite orders. A count is their sum.
 * - `fos_counts`: the count per (order, partition) as migrations computed it when they indexed stored rows; a
 *   partition's count is this plus its shards.
 *
 * Text columns use the "C" collation, so strings sort by code point as in the memory store. Numeric sort values
 * must be safe integers; they are stored offset by 2^53 and zero-padded, so text order is numeric order.
 *
 * A write is one statement wherever it can be: the row, its unique values, its index entries and its counts go
 * together in one statement of data-modifying CTEs. Inside a store transaction the store remembers the rows this
 * transaction has locked or written (their data is exactly what a read would find, since no other transaction
 * can change them until the commit), so an update or removal of such a row needs no read first.
 *
 * A unique violation fails that write alone and the caller's transaction can go on, as with the memory store:
 * inserts detect conflicts with ON CONFLICT DO NOTHING and take back their own writes, and updates of tables with
 * unique keys run in a savepoint. Outside a transaction each write is a transaction of its own. Infrastructure
 * failures are defects: domain code only ever sees `UniqueViolation`.
 */
import { UniqueViolation, type PageQuery, type Position, type SortValue, type StoreService, type Table } from "@fos/core"
import { Context, Effect, Option } from "effect"
import { SqlClient, type SqlError, type Statement } from "effect/sql"

const offset = 2n ** 53n

const encodeSort = (value: SortValue): string => {
  if (typeof value === "string") return value
  if (!Number.isSafeInteger(value)) throw new Error(`numeric sort values must be safe integers, got ${value}`)
  return (BigInt(value) + offset).toString().padStart(17, "0")
}

interface IndexEntry {
  readonly ord: string
  readonly part: string
  readonly sort: string
  readonly counted: boolean
}

/** A row's entries in its table's orders; an order whose partition is undefined for the row has none. */
const entriesOf = (t: Table<any>, row: unknown): ReadonlyArray<IndexEntry> =>
  Object.entries(t.orders).flatMap(([ord, o]) => {
    const part = o.partition(row)
    return part === undefined ? [] : [{ ord, part, sort: encodeSort(o.sort(row)), counted: o.counted !== false }]
  })

const uniquesOf = (t: Table<any>, row: unknown): ReadonlyArray<readonly [string, string]> =>
  Object.entries(t.unique).flatMap(([name, f]) => {
    const v = f(row)
    return v === undefined ? [] : [[name, v] as const]
  })

/** How many rows a partition's count is spread over (`fos_count_shards`). */
const countShards = 32

/** What the store keeps for the current store transaction; absent outside one. */
interface TransactionState {
  /** The rows this transaction has locked (`getForUpdate`) or written, by table and key: as a read would find them. */
  readonly rows: Map<string, Known>
  /** Sequence numbers taken for this transaction and not handed out yet. */
  readonly sequences: Array<number>
}

class CurrentTransaction extends Context.Reference<TransactionState | undefined>("fos/sql/CurrentTransaction", {
  defaultValue: () => undefined
}) {}

/**
 * How many sequence numbers a transaction takes at its first `nextSequence`: a deposit or a settle books a transfer
 * and emits an event, so one round trip serves both. The ones it does not use are gaps, which the port allows.
 */
const sequenceBlock = 4

/** A remembered row: parsed when it was read, or its JSON text when it was written (parsed on first use). */
interface Known {
  value?: unknown
  json?: string
}

const knownKey = (tbl: string, key: string) => `${tbl}\u0000${key}`

const valueOf = (known: Known): unknown => (known.value ??= JSON.parse(known.json!))

const isUniqueViolation = (e: SqlError.SqlError): boolean => (e as { reason?: { _tag?: string } }).reason?._tag === "UniqueViolation"

export const makeSqlStore = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const inTransaction = Effect.map(Effect.serviceOption(sql.transactionService), Option.isSome)

  /** Runs one write atomically on its own: a savepoint inside a transaction, a transaction outside one. */
  const atomically = <A, E>(effect: Effect.Effect<A, E | SqlError.SqlError>): Effect.Effect<A, E> =>
    sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", (e) => Effect.die(e))) as Effect.Effect<A, E>

  const dieOnSql = <A>(effect: Effect.Effect<A, SqlError.SqlError>): Effect.Effect<A> => Effect.orDie(effect)

  /**
   * A row by key; `lock` also locks it to the end of the transaction. A row this transaction has locked or written
   * is answered from memory; a row read with `lock` is remembered.
   */
  const readRow = (tbl: string, key: string, lock: boolean) =>
    Effect.flatMap(CurrentTransaction, (current) => {
      const known = current?.rows
      const hit = known?.get(knownKey(tbl, key))
      if (hit !== undefined) return Effect.succeed(valueOf(hit) as any)
      return dieOnSql(
        (lock
          ? sql<{ data: unknown }>`SELECT data FROM fos_rows WHERE tbl = ${tbl} AND key = ${key} FOR UPDATE`
          : sql<{ data: unknown }>`SELECT data FROM fos_rows WHERE tbl = ${tbl} AND key = ${key}`).pipe(
            Effect.map((rows) => {
              if (rows.length === 0) return undefined
              const value = parse(rows[0]!.data)
              if (lock) known?.set(knownKey(tbl, key), { value })
              return value
            })
          )
      )
    })

  /** Remembers a row this transaction wrote (`undefined`: removed). */
  const wrote = (tbl: string, key: string, json: string | undefined) =>
    Effect.map(CurrentTransaction, (current) => {
      const known = current?.rows
      if (known === undefined) return
      if (json === undefined) known.delete(knownKey(tbl, key))
      else known.set(knownKey(tbl, key), { json })
    })

  /** Forgets every remembered row: after a savepoint rolled back, or a set-based write. */
  const forgetAll = Effect.map(CurrentTransaction, (current) => current?.rows.clear())

  /** The next number of `fos_sequence`; inside a store transaction, from a block taken at its first call. */
  const nextSequence = Effect.flatMap(CurrentTransaction, (current) => {
    if (current !== undefined && current.sequences.length > 0) return Effect.succeed(current.sequences.shift()!)
    const size = current === undefined ? 1 : sequenceBlock
    return dieOnSql(Effect.map(
      sql<{ n: string | number }>`SELECT nextval('fos_sequence') AS n FROM generate_series(1, ${size})`,
      (rows) => {
        const taken = rows.map((r) => Number(r.n)).sort((a, b) => a - b)
        current?.sequences.push(...taken.slice(1))
        return taken[0]!
      }
    ))
  })

  const parse = (data: unknown): any => (typeof data === "string" ? JSON.parse(data) : data)

  /** Runs a write in the caller's transaction, or in a transaction of its own outside one. */
  const ownTransaction = <A, E>(effect: Effect.Effect<A, E | SqlError.SqlError>): Effect.Effect<A, E> =>
    Effect.flatMap(inTransaction, (inside) =>
      inside ? Effect.catchTag(effect, "SqlError", (e) => Effect.die(e)) as Effect.Effect<A, E> : atomically(effect))

  /** A write of exactly one statement: atomic on its own, so outside a transaction it runs without one. */
  const statementOnly = <A, E>(effect: Effect.Effect<A, E | SqlError.SqlError>): Effect.Effect<A, E> =>
    Effect.catchTag(effect, "SqlError", (e) => Effect.die(e)) as Effect.Effect<A, E>

  const sameEntry = (a: IndexEntry, b: IndexEntry) => a.ord === b.ord && a.part === b.part && a.sort === b.sort

  /**
   * The statement parts that move a row's index entries from `before` to `after`, touching only the entries that
   * changed, as data-modifying CTEs of the row's write: a delete, an insert, and an upsert of the counts that
   * changed. A row that moves within one partition changes no count. `guard` makes the insert and the counts
   * conditional (on the row having been inserted). The counts are written in (order, partition) order, so two
   * transactions that move rows between the same partitions in opposite directions (a delivery going pending to
   * processing while another goes processing to pending) take their locks in one order and cannot deadlock.
   */
  const indexParts = (
    t: Table<any>,
    before: unknown | undefined,
    after: unknown | undefined,
    key: string,
    guard: Statement.Fragment = sql`true`,
    /** Tells apart the parts of several rows written by one statement. */
    suffix = ""
  ): Array<Statement.Fragment> => {
    const old = before === undefined ? [] : entriesOf(t, before)
    const next = after === undefined ? [] : entriesOf(t, after)
    const removed = old.filter((e) => !next.some((n) => sameEntry(n, e)))
    const added = next.filter((e) => !old.some((o) => sameEntry(o, e)))
    const deltas = new Map<string, { ord: string; part: string; n: number }>()
    for (const [entries, n] of [[removed, -1], [added, 1]] as const) {
      for (const e of entries) {
        if (!e.counted) continue
        const id = JSON.stringify([e.ord, e.part])
        const delta = deltas.get(id) ?? { ord: e.ord, part: e.part, n: 0 }
        deltas.set(id, { ...delta, n: delta.n + n })
      }
    }
    const counts = [...deltas.values()]
      .filter((d) => d.n !== 0)
      .sort((a, b) => (a.ord < b.ord ? -1 : a.ord > b.ord ? 1 : a.part < b.part ? -1 : a.part > b.part ? 1 : 0))
    const parts: Array<Statement.Fragment> = []
    if (removed.length > 0) {
      parts.push(sql`${sql.literal(`removed${suffix}`)} AS (DELETE FROM fos_orders o
        USING (VALUES ${sql.csv(removed.map((e) => sql`(${e.ord}, ${e.part}, ${e.sort})`))}) AS v (ord, part, sort)
        WHERE o.tbl = ${t.name} AND o.ord = v.ord AND o.part = v.part AND o.sort = v.sort AND o.key = ${key})`)
    }
    if (added.length > 0) {
      parts.push(sql`${sql.literal(`added${suffix}`)} AS (INSERT INTO fos_orders (tbl, ord, part, sort, key)
        SELECT ${t.name}, v.ord, v.part, v.sort, ${key}
        FROM (VALUES ${sql.csv(added.map((e) => sql`(${e.ord}, ${e.part}, ${e.sort})`))}) AS v (ord, part, sort)
        WHERE ${guard})`)
    }
    if (counts.length > 0) {
      parts.push(sql`${sql.literal(`counted${suffix}`)} AS (INSERT INTO fos_count_shards (tbl, ord, part, shard, n)
        SELECT ${t.name}, v.ord, v.part, pg_backend_pid() % ${countShards}, v.n
        FROM (VALUES ${sql.csv(counts.map((d) => sql`(${d.ord}, ${d.part}, ${d.n}::bigint)`))}) AS v (ord, part, n)
        WHERE ${guard}
        ON CONFLICT (tbl, ord, part, shard) DO UPDATE SET n = fos_count_shards.n + EXCLUDED.n)`)
    }
    return parts
  }

  /** `WITH <parts> <final>`, or the final statement alone. */
  const withParts = (parts: ReadonlyArray<Statement.Fragment>, final: Statement.Statement<object>): Statement.Statement<object> =>
    parts.length === 0 ? final : sql`WITH ${sql.csv(parts)} ${final}`

  const hasUniques = (t: Table<any>) => Object.keys(t.unique).length > 0

  /**
   * An insert is one statement: the row (ON CONFLICT DO NOTHING, so a taken primary key is reported, never an
   * aborted transaction), its unique values, and, when the row and all its values were taken, its index entries and
   * counts. A unique value held by another row leaves the row and the values it took to be taken back by a second
   * statement, in the same transaction; so outside a transaction an insert with unique keys runs in one of its own,
   * and one without them runs alone.
   */
  const insert = <Row>(t: Table<Row>, row: Row): Effect.Effect<void, UniqueViolation> => {
    const uniques = uniquesOf(t, row)
    return (uniques.length > 0 ? ownTransaction : statementOnly)(Effect.gen(function*() {
      const key = t.key(row)
      const json = JSON.stringify(row)
      const rowPart = sql`inserted AS (INSERT INTO fos_rows (tbl, key, data) VALUES (${t.name}, ${key}, ${json}::jsonb)
        ON CONFLICT DO NOTHING RETURNING 1)`
      if (uniques.length === 0) {
        const parts = [rowPart, ...indexParts(t, undefined, row, key, sql`EXISTS (SELECT 1 FROM inserted)`)]
        const [result] = yield* sql<{ n: string | number }>`WITH ${sql.csv(parts)} SELECT count(*) AS n FROM inserted`
        if (Number(result!.n) === 0) return yield* Effect.fail(new UniqueViolation({ table: t.name, unique: "primary" }))
      } else {
        const uniquePart = sql`taken AS (INSERT INTO fos_uniques (tbl, name, value, key)
          SELECT ${t.name}, v.name, v.value, ${key}
          FROM (VALUES ${sql.csv(uniques.map(([name, value]) => sql`(${name}, ${value})`))}) AS v (name, value)
          WHERE EXISTS (SELECT 1 FROM inserted)
          ON CONFLICT DO NOTHING RETURNING name)`
        const complete = sql`EXISTS (SELECT 1 FROM inserted) AND (SELECT count(*) FROM taken) = ${uniques.length}`
        const parts = [rowPart, uniquePart, ...indexParts(t, undefined, row, key, complete)]
        const [result] = yield* sql<{ n: string | number; names: string | null }>`WITH ${sql.csv(parts)}
          SELECT (SELECT count(*) FROM inserted) AS n, (SELECT string_agg(name, ',') FROM taken) AS names`
        if (Number(result!.n) === 0) return yield* Effect.fail(new UniqueViolation({ table: t.name, unique: "primary" }))
        const taken = new Set(result!.names === null ? [] : result!.names.split(","))
        const refused = uniques.find(([name]) => !taken.has(name))
        if (refused !== undefined) {
          yield* sql`WITH values AS (DELETE FROM fos_uniques WHERE tbl = ${t.name} AND key = ${key})
            DELETE FROM fos_rows WHERE tbl = ${t.name} AND key = ${key}`
          return yield* Effect.fail(new UniqueViolation({ table: t.name, unique: refused[0] }))
        }
      }
      yield* wrote(t.name, key, json)
    }))
  }

  /** Takes the row's unique values; a value held by another row is a `UniqueViolation` naming the key. */
  const addUniques = (t: Table<any>, row: unknown, key: string) =>
    Effect.forEach(uniquesOf(t, row), ([name, value]) =>
      sql`INSERT INTO fos_uniques (tbl, name, value, key) VALUES (${t.name}, ${name}, ${value}, ${key})`.pipe(
        Effect.catchIf(isUniqueViolation, () => Effect.fail(new UniqueViolation({ table: t.name, unique: name })))
      ), { discard: true })

  /**
   * An update reads the row it replaces (locking it), unless this transaction already holds it, then writes the
   * row, its index entries and its counts in one statement. A table with unique keys runs it in a savepoint, since
   * a taken value must undo the whole update; without unique keys an update cannot fail and needs none.
   */
  const update = <Row>(t: Table<Row>, row: Row): Effect.Effect<void, UniqueViolation> => {
    const write = Effect.gen(function*() {
      const key = t.key(row)
      const json = JSON.stringify(row)
      const before = yield* readRow(t.name, key, true)
      const upsert = sql`INSERT INTO fos_rows (tbl, key, data) VALUES (${t.name}, ${key}, ${json}::jsonb)
        ON CONFLICT (tbl, key) DO UPDATE SET data = EXCLUDED.data`
      if (hasUniques(t)) {
        yield* sql`WITH ${sql.csv([sql`written AS (${upsert})`, ...indexParts(t, before, row, key)])}
          DELETE FROM fos_uniques WHERE tbl = ${t.name} AND key = ${key}`
        yield* addUniques(t, row, key)
      } else {
        yield* withParts(indexParts(t, before, row, key), upsert)
      }
      yield* wrote(t.name, key, json)
    })
    return hasUniques(t)
      ? Effect.tapError(atomically(write), () => forgetAll)
      : ownTransaction(write)
  }

  /**
   * Several rows of a table without unique keys in one statement: the rows this transaction does not hold yet are
   * read (and locked) first, in key order, as `getManyForUpdate` does.
   */
  const updateMany = <Row>(t: Table<Row>, rows: ReadonlyArray<Row>): Effect.Effect<void> => {
    if (rows.length === 0) return Effect.void
    if (hasUniques(t)) return Effect.die(new Error(`updateMany: ${t.name} declares unique keys`))
    return ownTransaction<void, never>(Effect.gen(function*() {
      const keys = rows.map((row) => t.key(row))
      if (new Set(keys).size !== keys.length) return yield* Effect.die(new Error(`updateMany: a key twice in ${t.name}`))
      const state = yield* CurrentTransaction
      const unknown = keys.filter((key) => state?.rows.get(knownKey(t.name, key)) === undefined)
      if (unknown.length > 0) yield* getManyForUpdate(t, unknown)
      const written = rows.map((row) => ({ row, key: t.key(row), json: JSON.stringify(row) }))
      const parts: Array<Statement.Fragment> = []
      for (const [i, w] of written.entries()) {
        const before = yield* readRow(t.name, w.key, true)
        parts.push(...indexParts(t, before, w.row, w.key, sql`true`, `_${i}`))
      }
      yield* withParts(parts, sql`INSERT INTO fos_rows (tbl, key, data)
        VALUES ${sql.csv(written.map((w) => sql`(${t.name}, ${w.key}, ${w.json}::jsonb)`))}
        ON CONFLICT (tbl, key) DO UPDATE SET data = EXCLUDED.data`)
      for (const w of written) yield* wrote(t.name, w.key, w.json)
    }))
  }

  /** Locks the rows of `keys` that exist, in key order, in one statement; remembers them for this transaction. */
  const getManyForUpdate = <Row>(t: Table<Row>, keys: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<Row>> =>
    Effect.gen(function*() {
      const sorted = [...new Set(keys)].sort()
      if (sorted.length === 0) return []
      const state = yield* CurrentTransaction
      const rows = yield* dieOnSql(sql<{ key: string; data: unknown }>`SELECT key, data FROM fos_rows
        WHERE tbl = ${t.name} AND key IN ${sql.in(sorted)} ORDER BY key FOR UPDATE`)
      return rows.map((r) => {
        const known = state?.rows.get(knownKey(t.name, r.key))
        // A row this transaction wrote is as it wrote it (the database answers the same; this skips the parse).
        if (known !== undefined) return valueOf(known) as Row
        const value = parse(r.data)
        state?.rows.set(knownKey(t.name, r.key), { value })
        return value as Row
      })
    })

  const remove = <Row>(t: Table<Row>, key: string): Effect.Effect<void> =>
    ownTransaction<void, never>(Effect.gen(function*() {
      const before = yield* readRow(t.name, key, true)
      if (before === undefined) return
      const parts = indexParts(t, before, undefined, key)
      if (hasUniques(t)) parts.push(sql`values AS (DELETE FROM fos_uniques WHERE tbl = ${t.name} AND key = ${key})`)
      yield* withParts(parts, sql`DELETE FROM fos_rows WHERE tbl = ${t.name} AND key = ${key}`)
      yield* wrote(t.name, key, undefined)
    }))

  /**
   * Set-based, so a reset costs a handful of statements whatever the partition holds: the counts of the counted
   * orders go down by the rows leaving each of their partitions (on this connection's shard; only the sum means
   * anything), then the unique values, the rows and every index entry of those rows go. Each statement finds the
   * rows through the partition's index entries, which go last. The rows this transaction remembered are forgotten.
   */
  const removePartition = <Row>(t: Table<Row>, order: string, partition: string): Effect.Effect<number> =>
    ownTransaction<number, never>(Effect.gen(function*() {
      const doomed = sql`SELECT key FROM fos_orders WHERE tbl = ${t.name} AND ord = ${order} AND part = ${partition}`
      const counted = Object.entries(t.orders).filter(([, o]) => o.counted !== false).map(([name]) => name)
      if (counted.length > 0) {
        yield* sql`INSERT INTO fos_count_shards (tbl, ord, part, shard, n)
          SELECT tbl, ord, part, pg_backend_pid() % ${countShards}, -count(*) FROM fos_orders
          WHERE tbl = ${t.name} AND ord IN ${sql.in(counted)} AND key IN (${doomed}) GROUP BY tbl, ord, part
          ON CONFLICT (tbl, ord, part, shard) DO UPDATE SET n = fos_count_shards.n + EXCLUDED.n`
      }
      yield* forgetAll
      if (hasUniques(t)) yield* sql`DELETE FROM fos_uniques WHERE tbl = ${t.name} AND key IN (${doomed})`
      const removed = yield* sql<{ n: string | number }>`WITH gone AS (
          DELETE FROM fos_rows WHERE tbl = ${t.name} AND key IN (${doomed}) RETURNING 1)
        SELECT count(*) AS n FROM gone`
      yield* sql`DELETE FROM fos_orders WHERE tbl = ${t.name} AND key IN (${doomed})`
      return Number(removed[0]!.n)
    }))

  const page = <Row>(t: Table<Row>, q: PageQuery): Effect.Effect<ReadonlyArray<Row>> => {
    const ascending = q.descending === q.backward
    const from = q.from === undefined ? undefined : { sort: encodeSort(q.from.sort), key: q.from.key }
    const where = sql`o.tbl = ${t.name} AND o.ord = ${q.order} AND o.part = ${q.partition}`
    const query = from === undefined
      ? ascending
        ? sql<{ data: unknown }>`SELECT r.data FROM fos_orders o JOIN fos_rows r ON r.tbl = o.tbl AND r.key = o.key
            WHERE ${where} ORDER BY o.sort ASC, o.key ASC LIMIT ${q.limit}`
        : sql<{ data: unknown }>`SELECT r.data FROM fos_orders o JOIN fos_rows r ON r.tbl = o.tbl AND r.key = o.key
            WHERE ${where} ORDER BY o.sort DESC, o.key DESC LIMIT ${q.limit}`
      : ascending
      ? sql<{ data: unknown }>`SELECT r.data FROM fos_orders o JOIN fos_rows r ON r.tbl = o.tbl AND r.key = o.key
          WHERE ${where} AND (o.sort, o.key) > (${from.sort}, ${from.key}) ORDER BY o.sort ASC, o.key ASC LIMIT ${q.limit}`
      : sql<{ data: unknown }>`SELECT r.data FROM fos_orders o JOIN fos_rows r ON r.tbl = o.tbl AND r.key = o.key
          WHERE ${where} AND (o.sort, o.key) < (${from.sort}, ${from.key}) ORDER BY o.sort DESC, o.key DESC LIMIT ${q.limit}`
    return dieOnSql(Effect.map(query, (rows) => {
      const out = rows.map((r) => parse(r.data) as Row)
      return q.backward ? out.reverse() : out
    }))
  }

  const store: StoreService = {
    transaction: (effect) =>
      Effect.flatMap(inTransaction, (inside) =>
        inside ? effect : (sql.withTransaction(Effect.suspend(() => Effect.provideService(effect, CurrentTransaction, { rows: new Map(), sequences: [] }))).pipe(Effect.catchIf((e): e is SqlError.SqlError => (e as { _tag?: string })?._tag === "SqlError", (e) => Effect.die(e))) as typeof effect)),
    get: (t, key) => readRow(t.name, key, false),
    getForUpdate: (t, key) => readRow(t.name, key, true),
    getManyForUpdate,
    findUnique: (t, unique, value) =>
      dieOnSql(
        sql<{ data: unknown }>`SELECT r.data FROM fos_uniques u JOIN fos_rows r ON r.tbl = u.tbl AND r.key = u.key
          WHERE u.tbl = ${t.name} AND u.name = ${unique} AND u.value = ${value}`.pipe(
          Effect.map((rows) => (rows.length === 0 ? undefined : parse(rows[0]!.data)))
        )
      ),
    insert,
    update,
    updateMany,
    remove,
    removePartition,
    page,
    nextSequence,
    count: (t, order, partition) =>
      dieOnSql(
        (t.orders[order]?.counted === false
          ? sql<{ n: string | number }>`SELECT count(*) AS n FROM fos_orders WHERE tbl = ${t.name} AND ord = ${order} AND part = ${partition}`
          : sql<{ n: string | number }>`SELECT
              (SELECT coalesce(sum(n), 0) FROM fos_count_shards WHERE tbl = ${t.name} AND ord = ${order} AND part = ${partition}) +
              (SELECT coalesce(sum(n), 0) FROM fos_counts WHERE tbl = ${t.name} AND ord = ${order} AND part = ${partition}) AS n`).pipe(
          Effect.map((rows) => (rows.length === 0 ? 0 : Number(rows[0]!.n)))
        )
      )
  }
  return store
})

export type { Position }
