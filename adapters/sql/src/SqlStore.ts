/**
 * The store port on SQL (Effect's `effect/sql`), one implementation for PostgreSQL and for PGlite.
 *
 * Every declared table lives in four generic tables, so a new resource needs no migration:
 * - `fos_rows`: one row per stored row, its JSON in `data`;
 * - `fos_uniques`: one row per (unique key, value), whose primary key enforces uniqueness;
 * - `fos_orders`: one row per (order, partition, sort value, key), the index keyset pages walk;
 * - `fos_counts`: the row count per (order, partition), kept in the same transaction, so `total` costs the same
 *   at any size.
 *
 * Text columns use the "C" collation, so strings sort by code point as in the memory store. Numeric sort values
 * must be safe integers; they are stored offset by 2^53 and zero-padded, so text order is numeric order.
 *
 * A unique violation fails that write alone and the caller's transaction can go on, as with the memory store:
 * inserts detect conflicts with ON CONFLICT DO NOTHING and take back their own writes, and updates of tables with
 * unique keys run in a savepoint. Outside a transaction each write is a transaction of its own. Infrastructure
 * failures are defects: domain code only ever sees `UniqueViolation`.
 */
import { UniqueViolation, type PageQuery, type Position, type SortValue, type StoreService, type Table } from "@fos/core"
import { Effect, Option } from "effect"
import { SqlClient, type SqlError } from "effect/sql"

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

const isUniqueViolation = (e: SqlError.SqlError): boolean => (e as { reason?: { _tag?: string } }).reason?._tag === "UniqueViolation"

export const makeSqlStore = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const inTransaction = Effect.map(Effect.serviceOption(sql.transactionService), Option.isSome)

  /** Runs one write atomically on its own: a savepoint inside a transaction, a transaction outside one. */
  const atomically = <A, E>(effect: Effect.Effect<A, E | SqlError.SqlError>): Effect.Effect<A, E> =>
    sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", (e) => Effect.die(e))) as Effect.Effect<A, E>

  const dieOnSql = <A>(effect: Effect.Effect<A, SqlError.SqlError>): Effect.Effect<A> => Effect.orDie(effect)

  const readRow = (tbl: string, key: string, lock: boolean) =>
    dieOnSql(
      (lock
        ? sql<{ data: unknown }>`SELECT data FROM fos_rows WHERE tbl = ${tbl} AND key = ${key} FOR UPDATE`
        : sql<{ data: unknown }>`SELECT data FROM fos_rows WHERE tbl = ${tbl} AND key = ${key}`).pipe(
          Effect.map((rows) => (rows.length === 0 ? undefined : parse(rows[0]!.data)))
        )
    )

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
   * Moves a row's index entries from `before` to `after`, touching only the entries that changed, in at most three
   * statements whatever the number of orders: one delete, one insert, and one upsert of the counts that changed. A
   * row that moves within one partition changes no count. The counts are written in (order, partition) order, so
   * two transactions that move rows between the same partitions in opposite directions (a delivery going pending to
   * processing while another goes processing to pending) take their locks in one order and cannot deadlock.
   */
  const reindex = (t: Table<any>, before: unknown | undefined, after: unknown | undefined, key: string) => {
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
    const statements: Array<Effect.Effect<unknown, SqlError.SqlError>> = []
    if (removed.length > 0) {
      statements.push(sql`DELETE FROM fos_orders o USING (VALUES ${sql.csv(removed.map((e) => sql`(${e.ord}, ${e.part}, ${e.sort})`))}) AS v (ord, part, sort)
        WHERE o.tbl = ${t.name} AND o.ord = v.ord AND o.part = v.part AND o.sort = v.sort AND o.key = ${key}`)
    }
    if (added.length > 0) {
      statements.push(sql`INSERT INTO fos_orders (tbl, ord, part, sort, key)
        VALUES ${sql.csv(added.map((e) => sql`(${t.name}, ${e.ord}, ${e.part}, ${e.sort}, ${key})`))}`)
    }
    if (counts.length > 0) {
      statements.push(sql`INSERT INTO fos_counts (tbl, ord, part, n)
        VALUES ${sql.csv(counts.map((d) => sql`(${t.name}, ${d.ord}, ${d.part}, ${d.n}::bigint)`))}
        ON CONFLICT (tbl, ord, part) DO UPDATE SET n = fos_counts.n + EXCLUDED.n`)
    }
    return Effect.forEach(statements, (statement) => statement, { discard: true })
  }

  const hasUniques = (t: Table<any>) => Object.keys(t.unique).length > 0

  /**
   * Insert without a savepoint: conflicts are found with ON CONFLICT DO NOTHING (which never aborts the
   * transaction), and what this insert wrote before the conflict is taken back by hand. The primary key is checked
   * first, as in the memory store.
   */
  const insert = <Row>(t: Table<Row>, row: Row): Effect.Effect<void, UniqueViolation> =>
    // A table with no unique keys and no orders takes one statement: outside a transaction it needs none.
    (hasUniques(t) || Object.keys(t.orders).length > 0 ? ownTransaction : statementOnly)(Effect.gen(function*() {
      const key = t.key(row)
      const inserted = yield* sql`INSERT INTO fos_rows (tbl, key, data) VALUES (${t.name}, ${key}, ${JSON.stringify(row)}::jsonb)
        ON CONFLICT DO NOTHING RETURNING 1 AS ok`
      if (inserted.length === 0) return yield* Effect.fail(new UniqueViolation({ table: t.name, unique: "primary" }))
      for (const [name, value] of uniquesOf(t, row)) {
        const taken = yield* sql`INSERT INTO fos_uniques (tbl, name, value, key) VALUES (${t.name}, ${name}, ${value}, ${key})
          ON CONFLICT DO NOTHING RETURNING 1 AS ok`
        if (taken.length === 0) {
          yield* sql`DELETE FROM fos_uniques WHERE tbl = ${t.name} AND key = ${key}`
          yield* sql`DELETE FROM fos_rows WHERE tbl = ${t.name} AND key = ${key}`
          return yield* Effect.fail(new UniqueViolation({ table: t.name, unique: name }))
        }
      }
      yield* reindex(t, undefined, row, key)
    }))

  /** Takes the row's unique values; a value held by another row is a `UniqueViolation` naming the key. */
  const addUniques = (t: Table<any>, row: unknown, key: string) =>
    Effect.forEach(uniquesOf(t, row), ([name, value]) =>
      sql`INSERT INTO fos_uniques (tbl, name, value, key) VALUES (${t.name}, ${name}, ${value}, ${key})`.pipe(
        Effect.catchIf(isUniqueViolation, () => Effect.fail(new UniqueViolation({ table: t.name, unique: name })))
      ), { discard: true })

  /**
   * An update of a table with unique keys runs in a savepoint, since a taken value must undo the whole update;
   * without unique keys an update cannot fail and needs none.
   */
  const update = <Row>(t: Table<Row>, row: Row): Effect.Effect<void, UniqueViolation> => {
    const write = Effect.gen(function*() {
      const key = t.key(row)
      const before = yield* readRow(t.name, key, true)
      yield* sql`INSERT INTO fos_rows (tbl, key, data) VALUES (${t.name}, ${key}, ${JSON.stringify(row)}::jsonb)
                 ON CONFLICT (tbl, key) DO UPDATE SET data = EXCLUDED.data`
      if (hasUniques(t)) {
        yield* sql`DELETE FROM fos_uniques WHERE tbl = ${t.name} AND key = ${key}`
        yield* addUniques(t, row, key)
      }
      yield* reindex(t, before, row, key)
    })
    return hasUniques(t) ? atomically(write) : ownTransaction(write)
  }

  const remove = <Row>(t: Table<Row>, key: string): Effect.Effect<void> =>
    ownTransaction<void, never>(Effect.gen(function*() {
      const before = yield* readRow(t.name, key, true)
      if (before === undefined) return
      if (hasUniques(t)) yield* sql`DELETE FROM fos_uniques WHERE tbl = ${t.name} AND key = ${key}`
      yield* reindex(t, before, undefined, key)
      yield* sql`DELETE FROM fos_rows WHERE tbl = ${t.name} AND key = ${key}`
    }))

  /**
   * Set-based, so a reset costs a handful of statements whatever the partition holds: the counts of the counted
   * orders go down by the rows leaving each of their partitions, then the unique values, the rows and every index
   * entry of those rows go. Each statement finds the rows through the partition's index entries, which go last.
   */
  const removePartition = <Row>(t: Table<Row>, order: string, partition: string): Effect.Effect<number> =>
    ownTransaction<number, never>(Effect.gen(function*() {
      const doomed = sql`SELECT key FROM fos_orders WHERE tbl = ${t.name} AND ord = ${order} AND part = ${partition}`
      const counted = Object.entries(t.orders).filter(([, o]) => o.counted !== false).map(([name]) => name)
      if (counted.length > 0) {
        yield* sql`UPDATE fos_counts c SET n = c.n - d.k
          FROM (SELECT ord, part, count(*) AS k FROM fos_orders
                WHERE tbl = ${t.name} AND ord IN ${sql.in(counted)} AND key IN (${doomed}) GROUP BY ord, part) d
          WHERE c.tbl = ${t.name} AND c.ord = d.ord AND c.part = d.part`
      }
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
        inside ? effect : (sql.withTransaction(effect).pipe(Effect.catchIf((e): e is SqlError.SqlError => (e as { _tag?: string })?._tag === "SqlError", (e) => Effect.die(e))) as typeof effect)),
    get: (t, key) => readRow(t.name, key, false),
    getForUpdate: (t, key) => readRow(t.name, key, true),
    findUnique: (t, unique, value) =>
      dieOnSql(
        sql<{ data: unknown }>`SELECT r.data FROM fos_uniques u JOIN fos_rows r ON r.tbl = u.tbl AND r.key = u.key
          WHERE u.tbl = ${t.name} AND u.name = ${unique} AND u.value = ${value}`.pipe(
          Effect.map((rows) => (rows.length === 0 ? undefined : parse(rows[0]!.data)))
        )
      ),
    insert,
    update,
    remove,
    removePartition,
    page,
    nextSequence: dieOnSql(Effect.map(sql<{ n: string | number }>`SELECT nextval('fos_sequence') AS n`, (rows) => Number(rows[0]!.n))),
    count: (t, order, partition) =>
      dieOnSql(
        (t.orders[order]?.counted === false
          ? sql<{ n: string | number }>`SELECT count(*) AS n FROM fos_orders WHERE tbl = ${t.name} AND ord = ${order} AND part = ${partition}`
          : sql<{ n: string | number }>`SELECT n FROM fos_counts WHERE tbl = ${t.name} AND ord = ${order} AND part = ${partition}`).pipe(
          Effect.map((rows) => (rows.length === 0 ? 0 : Number(rows[0]!.n)))
        )
      )
  }
  return store
})

export type { Position }
