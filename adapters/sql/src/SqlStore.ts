/**
 * The store port on SQL (Effect's `effect/sql`), one implementation for PostgreSQL and for PGlite.
 *
 * Every declared table lives in four generic tables, so a new resource needs no migration:
 * - `fos_rows`: one row per stored row, its JSON in `data`, kept as written (type `json`, not `jsonb`, which orders
 *   an object's keys by length: an event's payload read back must be the bytes the memory store gives, docs/storage.md);
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
 * can change them until the commit), so an update or removal of such a row needs no read first. The writes nothing
 * could refuse (fresh rows under ids just made, new versions of locked rows of tables without unique keys) are held
 * and sent together, before the commit or before a statement that reads their table (`hold`, docs/storage.md). A
 * transaction sends BEGIN only before its first write that must reach the database at once; one that never does
 * commits its held writes, checked against what it read for update, in one statement (`runTransaction`).
 *
 * A unique violation fails that write alone and the caller's transaction can go on, as with the memory store:
 * inserts detect conflicts with ON CONFLICT DO NOTHING and take back their own writes, and updates of tables with
 * unique keys run in a savepoint. Outside a transaction each write is a transaction of its own. Infrastructure
 * failures are defects: domain code only ever sees `UniqueViolation`.
 *
 * It is one file of about 1,300 lines because it is one implementation of one port (kernel/Store.ts): its parts
 * (held writes, deferred locks, index entries, copies) share the connection, the held batch and the encodings, and
 * split apart they would pass those to one another on every call. The migrations, the shared state and the image
 * store are files of their own.
 */
import { Metrics, Store, Telemetry } from "@fos/core"
import { Cause, Clock, Context, Data, Effect, Exit, Option, Stream } from "effect"
import { SqlClient, type SqlConnection, type SqlError, type Statement } from "effect/sql"
import { latestVersion } from "./Migrations.ts"

const offset = 2n ** 53n

const encodeSort = (value: Store.SortValue): string => {
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
const entriesOf = (t: Store.Table<any>, row: unknown): ReadonlyArray<IndexEntry> =>
  Object.entries(t.orders).flatMap(([ord, o]) => {
    const part = o.partition(row)
    return part === undefined ? [] : [{ ord, part, sort: encodeSort(o.sort(row)), counted: o.counted !== false }]
  })

const uniquesOf = (t: Store.Table<any>, row: unknown): ReadonlyArray<readonly [string, string]> =>
  Object.entries(t.unique).flatMap(([name, f]) => {
    const v = f(row)
    return v === undefined ? [] : [[name, v] as const]
  })

/** Strings as a PostgreSQL array literal (`{"a","b"}`), each quoted, for a `text[]` parameter. */
const arrayLiteral = (items: ReadonlyArray<string>): string =>
  `{${items.map((s) => `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`).join(",")}}`

/** How many rows one statement writes into a copy when their entries are worked out here (`copyRowsOf`). */
const copyBatch = 200

/** How many rows one statement of `insertRows` writes, carried as JSON parameters. */
const insertBatch = 2000

/** A statement of `insertRows` wrote fewer rows or values than it carried: a key or value was taken. */
class Shortfall extends Data.TaggedError("Shortfall")<{}> {}

const chunks = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

/**
 * Lists go into a statement as one JSON parameter (`json_to_recordset`, `json_array_elements_text`), never as a
 * VALUES or IN list of their length: one statement text whatever their number, so a connection parses and plans each
 * statement once (a list of each length was a statement of its own, parsed again on every connection that met it,
 * and crowding the others out of its prepared statements).
 */
const jsonText = JSON.stringify

/** Rows as `[{"tbl":…,"key":…,"data":<the row's JSON as written>}, …]`: a `json` member keeps its text as written. */
const rowsJsonOf = (rows: ReadonlyArray<{ readonly tbl: string; readonly key: string; readonly json: string }>): string =>
  `[${rows.map((r) => `{"tbl":${jsonText(r.tbl)},"key":${jsonText(r.key)},"data":${r.json}}`).join(",")}]`

/** How many rows a partition's count is spread over (`fos_count_shards`). */
const countShards = 32

/** What the store keeps for the current store transaction; absent outside one. */
interface TransactionState {
  /** The rows this transaction has locked (`getForUpdate`) or written, by table and key: as a read would find them. */
  readonly rows: Map<string, Known>
  /** Writes held for a later statement of this transaction (see `hold`), by table and key, in the order made. */
  readonly held: Map<string, Held>
  /** The tables of the held writes. */
  readonly heldTables: Set<string>
  /** Sequence numbers taken for this transaction and not handed out yet. */
  readonly sequences: Array<number>
  /** Whether the transaction has taken its first block (with its first read by key, or its first number). */
  blockTaken: boolean
  /** How many blocks it has taken for want of numbers (`nextSequence`): each is twice the one before, up to a bound. */
  refills: number
  /**
   * What this transaction read without a lock, by table and key (`value` undefined: no such row), and the pages it
   * read, by table and query: a second read in the transaction is answered from here, until the transaction writes
   * to that row or table. An order reads its customer twice and emits two events, each looking up the webhook
   * endpoints; within one transaction the first answer stands.
   */
  readonly seen: Map<string, { readonly value: unknown }>
  readonly pages: Map<string, Map<string, ReadonlyArray<unknown>>>
  /**
   * Whether the transaction has sent BEGIN. A transaction begins lazily (`transaction`): until its first write that
   * must reach the database at once, its statements are reads outside any database transaction, and its locking
   * reads are plain reads remembered in `expected`.
   */
  begun: boolean
  /**
   * The rows read for update before the transaction began, by table and key, with their text as read: the statement
   * that begins the transaction, or the one that commits it, locks them and checks they are unchanged.
   */
  readonly expected: Map<string, { readonly tbl: string; readonly key: string; readonly text: string }>
  /** The connection the transaction runs on, for its BEGIN, COMMIT, ROLLBACK and savepoints. */
  readonly connection: SqlConnection.Connection
  /** How many savepoints it has made: each gets a name of its own. */
  savepoints: number
  /** Whether it found a row it read for update changed (`OptimisticConflict`): whatever its body made of that, it runs again. */
  conflict: boolean
  /** What this run of the transaction asked to run once it has committed (`afterCommit`); a run again starts anew. */
  readonly after: Array<Effect.Effect<void>>
}

/**
 * A transaction that began lazily found a row it read for update changed when it came to lock it: it is run again,
 * beginning at once (`transaction`).
 */
class OptimisticConflict extends Data.TaggedError("OptimisticConflict")<{}> {}

/**
 * Whether a statement may run before its transaction began: a read that locks nothing. (Every write path begins the
 * transaction first; this is the check that none was missed, since a write sent before BEGIN would commit alone.)
 */
const readsOnly = (text: string): boolean => /^\s*SELECT\b/i.test(text) && !/\bFOR\s+(UPDATE|SHARE|NO\s+KEY|KEY)\b/i.test(text)

class CurrentTransaction extends Context.Reference<TransactionState | undefined>("fos/sql/CurrentTransaction", {
  defaultValue: () => undefined
}) {}

/**
 * A write this transaction made but has not sent: a fresh row (`insertFresh`) or a new version of a row it holds
 * locked, of a table without unique keys, so nothing the database could answer would change what the caller does.
 * `before` is the row as the database has it (undefined for a fresh one), so the index entries and counts the
 * write moves are worked out once, against the final version.
 */
interface Held {
  readonly t: Store.Table<any>
  readonly key: string
  readonly before: unknown | undefined
  readonly after: unknown
  /** The new version as JSON; undefined for a removal. */
  readonly json: string | undefined
  readonly fresh: boolean
}

/**
 * How many sequence numbers a transaction takes at once: a deposit or a settle books a transfer and emits an event,
 * so one round trip serves both. The ones it does not use are gaps, which the port allows.
 *
 * The numbers order a resource's events (created, then processing) across processes, so they must follow the row
 * locks: a number handed out after a transaction locked a row is taken after that lock was granted. Two
 * transactions that change one resource both lock its row, so the one that commits second takes its numbers after
 * the first committed, and they are higher. Hence the block is the transaction's own, not the process's, and every
 * locking read that reaches the database takes a fresh block in the same statement, once its locks are granted
 * (the old block's rest are gaps). A block taken by a plain read only serves numbers handed out before any lock.
 */
const sequenceBlock = 8

/** A remembered row: parsed when it was read, or its JSON text when it was written (parsed on first use). */
interface Known {
  value?: unknown
  json?: string
  /** Removed by a write the transaction holds: gone for its reads, still in the database until the write is sent. */
  gone?: true
}

const knownKey = (tbl: string, key: string) => `${tbl}\u0000${key}`

const valueOf = (known: Known): unknown => (known.gone ? undefined : (known.value ??= JSON.parse(known.json!)))

/** How many times a transaction the database aborted (deadlock, serialization failure) is run again. */
const deadlockRetries = 3

/** Whether a lazy transaction found a row it read for update changed (`OptimisticConflict`). */
/** A transaction runs again from its start: counted (kernel/Metrics.ts) and told to its span (kernel/Telemetry.ts). */
const retried = (reason: Metrics.RetryReason) => Effect.andThen(Metrics.transactionRetried(reason), Telemetry.transactionRetried(reason))

const conflicted = (cause: Cause.Cause<unknown>): boolean =>
  cause.reasons.some((r) => r._tag === "Die" && (r.defect as { _tag?: string })?._tag === "OptimisticConflict")

/** Whether a transaction died because PostgreSQL chose it as a deadlock's victim, or failed to serialize it. */
const abortedByDatabase = (cause: Cause.Cause<unknown>): boolean =>
  cause.reasons.some((r) => {
    if (r._tag !== "Die") return false
    const tag = (r.defect as { _tag?: string; reason?: { _tag?: string } })
    return tag?._tag === "SqlError" && (tag.reason?._tag === "DeadlockError" || tag.reason?._tag === "SerializationError")
  })

/**
 * What a SQL failure dies as: a connection that cannot be made or was lost (SQLSTATE class 08, a refused or dropped
 * socket, a connect timeout, a server that went silent: SilentServer.ts), a server shutting down (57P01-57P03) or a
 * statement it cancelled past the store's timeout (57014, `statement_timeout`) is the store being unreachable (the
 * pipeline answers 503 SERVICE_UNAVAILABLE); anything else is the SqlError itself (a 500).
 */
export const sqlDefect = (e: SqlError.SqlError): unknown => {
  const reason = (e as { reason?: { _tag?: string; cause?: { code?: unknown } } }).reason
  const code = (e as { cause?: { code?: unknown } }).cause?.code ?? reason?.cause?.code
  return reason?._tag === "ConnectionError" || (typeof code === "string" && /^57P0[123]$|^57014$/.test(code))
    ? new Store.StoreUnavailable({ message: "the database cannot be reached" })
    : e
}

const dieOf = (e: unknown) => Effect.die(sqlDefect(e as SqlError.SqlError))

const isUniqueViolation = (e: SqlError.SqlError): boolean => (e as { reason?: { _tag?: string } }).reason?._tag === "UniqueViolation"

export const makeSqlStore = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Real time, which the engine builds its store on: transactions are timed on it (kernel/Metrics.ts).
  const clock = yield* Clock.Clock

  const inTransaction = Effect.map(Effect.serviceOption(sql.transactionService), Option.isSome)

  /**
   * Runs one write atomically on its own: a savepoint inside a store transaction (which begins first), a transaction
   * outside one.
   */
  const atomically = <A, E>(effect: Effect.Effect<A, E | SqlError.SqlError>): Effect.Effect<A, E> =>
    Effect.flatMap(CurrentTransaction, (state) =>
      state === undefined
        ? sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", (e) => dieOf(e))) as Effect.Effect<A, E>
        : Effect.uninterruptibleMask((restore) =>
          Effect.gen(function*() {
            yield* begin(state)
            const name = `fos_savepoint_${++state.savepoints}`
            yield* dieOnSql(state.connection.executeRaw(`SAVEPOINT ${name}`, []))
            const exit = yield* Effect.exit(restore(Effect.catchTag(effect, "SqlError", (e) => dieOf(e)) as Effect.Effect<A, E>))
            if (Exit.isFailure(exit)) yield* dieOnSql(state.connection.executeRaw(`ROLLBACK TO SAVEPOINT ${name}`, []))
            return yield* exit
          })
        ))

  const dieOnSql = <A>(effect: Effect.Effect<A, SqlError.SqlError>): Effect.Effect<A> => Effect.catch(effect, dieOf)

  /** A block of sequence numbers, as one comma-separated text, taken once the rows of `found` have been read. */
  const blockAfter = (found: Statement.Fragment) =>
    sql`SELECT string_agg(n::text, ',' ORDER BY n) FROM (SELECT nextval('fos_sequence') AS n
      FROM generate_series(1, ${sequenceBlock}) CROSS JOIN (SELECT count(*) FROM ${found}) AS locked) AS g`

  /**
   * Sends the transaction's BEGIN, once: before its first write that must reach the database at once. The rows it read
   * for update until then are locked and checked unchanged in the next statement (which also takes a fresh block of
   * sequence numbers, after those locks: see `sequenceBlock`); a row changed since is an `OptimisticConflict`, and the
   * transaction is run again from its start.
   */
  const begin = (state: TransactionState): Effect.Effect<void> => {
    if (state.begun) return Effect.void
    return Effect.gen(function*() {
      if (state.begun) return
      state.begun = true
      yield* dieOnSql(state.connection.executeRaw("BEGIN", []))
      if (state.expected.size === 0) return
      const expected = [...state.expected.values()]
      state.expected.clear()
      const [checked] = yield* dieOnSql(sql<{ n: string | number; block: string }>`WITH locked AS MATERIALIZED (${lockUnchanged(expected)})
        SELECT (SELECT count(*) FROM locked) AS n, (${blockAfter(sql`locked`)}) AS block`)
      if (Number(checked!.n) !== expected.length) {
        state.conflict = true
        return yield* Effect.die(new OptimisticConflict())
      }
      state.sequences.splice(0, Infinity, ...checked!.block.split(",").map(Number))
    })
  }

  /** Begins the current store transaction, if there is one and it has not begun. */
  const begun = Effect.flatMap(CurrentTransaction, (state) => (state === undefined ? Effect.void : begin(state)))

  /** Locks, in key order, the rows read for update before the transaction began that are still as they were read. */
  const lockUnchanged = (expected: ReadonlyArray<{ readonly tbl: string; readonly key: string; readonly text: string }>) =>
    sql`SELECT r.key FROM fos_rows r
      JOIN fos_texts_of(${jsonText(expected.map((e) => ({ tbl: e.tbl, key: e.key, text: e.text })))}::json) AS v
        ON r.tbl = v.tbl AND r.key = v.key
      WHERE r.data::text = v.text ORDER BY r.tbl, r.key FOR UPDATE OF r`

  /** A block of sequence numbers taken with nothing locked: a read's before the transaction began. */
  const blockNow = sql`SELECT string_agg(n::text, ',' ORDER BY n) FROM (SELECT nextval('fos_sequence') AS n
    FROM generate_series(1, ${sequenceBlock})) AS g`

  /**
   * A row by key; `lock` also locks it to the end of the transaction. A row this transaction has locked or written
   * is answered from memory; a row read with `lock` is remembered as held, one read without it as seen (answered
   * again until the transaction writes it, never for a locking read).
   */
  const readRow = (tbl: string, key: string, lock: boolean, assumed?: unknown) =>
    Effect.flatMap(CurrentTransaction, (current) => {
      const known = current?.rows
      const hit = known?.get(knownKey(tbl, key))
      if (hit !== undefined) return Effect.succeed(valueOf(hit) as any)
      const seen = lock ? undefined : current?.seen.get(knownKey(tbl, key))
      if (seen !== undefined) return Effect.succeed(seen.value as any)
      if (current !== undefined && !current.begun) {
        if (lock && assumed !== undefined) {
          // Taken as the caller says it wrote it, unread: expected unchanged like any row read for update (`begin`).
          const text = JSON.stringify(assumed)
          current.rows.set(knownKey(tbl, key), { value: assumed, json: text })
          current.expected.set(knownKey(tbl, key), { tbl, key, text })
          return Effect.succeed(assumed as any)
        }
        return readBeforeBegin(current, tbl, key, lock)
      }
      const select = lock
        ? sql<{ data: unknown; block?: string }>`SELECT data FROM fos_rows WHERE tbl = ${tbl} AND key = ${key} FOR UPDATE`
        : sql<{ data: unknown; block?: string }>`SELECT data FROM fos_rows WHERE tbl = ${tbl} AND key = ${key}`
      // A transaction's first read by key takes its block of sequence numbers, and so does every locking read (see
      // `sequenceBlock`): most transactions that number a transfer or an event read a row first (the resource they
      // change), so the block costs no round trip. The block is counted over the found row, so it is taken after
      // the lock is granted.
      const withBlock = current !== undefined && (lock || !current.blockTaken)
      if (withBlock) current.blockTaken = true
      return dieOnSql(
        (withBlock
          ? sql<{ data: unknown; block?: string }>`WITH found AS MATERIALIZED (${select})
              SELECT (SELECT data FROM found) AS data, (${blockAfter(sql`found`)}) AS block`
          : select).pipe(
            Effect.map((rows) => {
              if (withBlock) current!.sequences.splice(0, Infinity, ...rows[0]!.block!.split(",").map(Number))
              const data = rows.length === 0 ? null : rows[0]!.data
              const value = data === null ? undefined : parse(data)
              if (lock && value !== undefined) known?.set(knownKey(tbl, key), { value })
              if (!lock) current?.seen.set(knownKey(tbl, key), { value })
              return value
            })
          )
      )
    })

  /**
   * A read of a transaction that has not begun: a plain read, with the transaction's first block of sequence numbers
   * or, for update, a fresh one. A row read for update is remembered as held and as expected unchanged (`begin`).
   */
  const readBeforeBegin = (current: TransactionState, tbl: string, key: string, lock: boolean) => {
    const withBlock = lock || !current.blockTaken
    if (withBlock) current.blockTaken = true
    return dieOnSql(
      (withBlock
        ? sql<{ data: string | null; block?: string }>`SELECT (SELECT data::text FROM fos_rows WHERE tbl = ${tbl} AND key = ${key}) AS data,
            (${blockNow}) AS block`
        : sql<{ data: string | null; block?: string }>`SELECT data::text AS data FROM fos_rows WHERE tbl = ${tbl} AND key = ${key}`).pipe(
          Effect.map((rows) => {
            if (withBlock) current.sequences.splice(0, Infinity, ...rows[0]!.block!.split(",").map(Number))
            const text = rows.length === 0 ? null : rows[0]!.data
            const value = text === null ? undefined : JSON.parse(text)
            const id = knownKey(tbl, key)
            if (lock && text !== null) {
              current.rows.set(id, { value, json: text })
              current.expected.set(id, { tbl, key, text })
            }
            if (!lock) current.seen.set(id, { value })
            return value
          })
        )
    )
  }

  /**
   * A row and the rows it names, in one statement outside a transaction (each linked row found by the named key in a
   * subquery, gathered in one JSON array); inside one, read by key one after another, so what the transaction holds or
   * has seen answers.
   */
  const getLinked = <Row>(t: Store.Table<Row>, key: string, links: ReadonlyArray<Store.Link>) =>
    Effect.flatMap(CurrentTransaction, (current) => {
      const named = (row: unknown, link: Store.Link) => {
        const value = row === undefined ? undefined : (row as Record<string, unknown>)[link.member]
        return typeof value === "string" ? value + (link.suffix ?? "") : undefined
      }
      if (current !== undefined) {
        return Effect.flatMap(readRow(t.name, key, false), (row: Row | undefined) =>
          Effect.map(
            Effect.forEach(links, (link) => {
              const linkedKey = named(row, link)
              return linkedKey === undefined ? Effect.succeed(undefined) : readRow(link.table.name, linkedKey, false)
            }),
            (linked) => ({ row, linked })
          ))
      }
      const subqueries = links.map((link) =>
        sql`(SELECT l.data FROM fos_rows l WHERE l.tbl = ${link.table.name}
          AND l.key = (r.data ->> ${link.member}) || ${link.suffix ?? ""} AND json_typeof(r.data -> ${link.member}) = 'string')`
      )
      const linkedColumn = links.length === 0 ? sql`NULL` : sql`json_build_array(${sql.csv(subqueries)})`
      return dieOnSql(Effect.map(
        sql<{ data: unknown; linked: unknown }>`SELECT r.data, ${linkedColumn} AS linked FROM fos_rows r WHERE r.tbl = ${t.name} AND r.key = ${key}`,
        (rows) => {
          if (rows.length === 0) return { row: undefined, linked: links.map(() => undefined) }
          const linked = (parse(rows[0]!.linked) ?? []) as Array<unknown>
          return { row: parse(rows[0]!.data) as Row, linked: links.map((_, i) => linked[i] ?? undefined) }
        }
      ))
    })

  /** Remembers a row this transaction wrote (`undefined`: removed). */
  const wrote = (tbl: string, key: string, json: string | undefined) =>
    Effect.map(CurrentTransaction, (current) => {
      if (current === undefined) return
      changed(current, tbl, key)
      if (json === undefined) current.rows.delete(knownKey(tbl, key))
      else current.rows.set(knownKey(tbl, key), { json })
    })

  /** Forgets what the transaction read of a row it now writes, and the pages of its table. */
  const changed = (current: TransactionState, tbl: string, key: string) => {
    current.seen.delete(knownKey(tbl, key))
    current.pages.delete(tbl)
  }

  /** Forgets every remembered row: after a savepoint rolled back, or a set-based write. */
  const forgetAll = Effect.map(CurrentTransaction, (current) => {
    current?.rows.clear()
    current?.seen.clear()
    current?.pages.clear()
  })

  /**
   * The next number of `fos_sequence`; inside a store transaction, from its current block (see `sequenceBlock`). A
   * transaction that runs out takes a block twice the size of the one it took last for want of numbers, up to 32
   * times `sequenceBlock`, and at least as many as the rows it holds (locked, read for update or written; up to
   * `maxRefill`): one that fires a batch of timers numbers about as many rows as it locked (each attempt's lease,
   * history and retry), which cost a round trip per 8 of them at a fixed size, and 4 refills for a batch of 40
   * attempts doubling from 8. The gaps it leaves stay under what it used.
   */
  const maxRefill = 1024
  const nextSequence = Effect.flatMap(CurrentTransaction, (current) => {
    if (current !== undefined && current.sequences.length > 0) return Effect.succeed(current.sequences.shift()!)
    if (current !== undefined) current.blockTaken = true
    const size = current === undefined ? 1 : Math.max(sequenceBlock * 2 ** Math.min(current.refills++, 5), Math.min(current.rows.size, maxRefill))
    return dieOnSql(Effect.map(
      sql<{ n: string | number }>`SELECT nextval('fos_sequence') AS n FROM generate_series(1, ${size})`,
      (rows) => {
        const taken = rows.map((r) => Number(r.n)).sort((a, b) => a - b)
        current?.sequences.push(...taken.slice(1))
        return taken[0]!
      }
    ))
  })

  /** How far `raiseSequence` moves the sequence by taking numbers one by one; further, it sets it. */
  const raiseByTaking = 100_000

  /** Numbers for `nextNumber`, taken a block at a time by this process, outside any transaction's order. */
  const spareNumbers: Array<number> = []
  const spareBlock = 32
  const nextNumber: Effect.Effect<number> = Effect.suspend(() => {
    const spare = spareNumbers.shift()
    if (spare !== undefined) return Effect.succeed(spare)
    return dieOnSql(Effect.map(
      sql<{ n: string | number }>`SELECT nextval('fos_sequence') AS n FROM generate_series(1, ${spareBlock})`,
      (rows) => {
        const taken = rows.map((r) => Number(r.n)).sort((a, b) => a - b)
        spareNumbers.push(...taken.slice(1))
        return taken[0]!
      }
    ))
  })

  /** `count` numbers of `fos_sequence` in one statement (Store.ts, `takeNumbers`): nextval's, each above every one before. */
  const takeNumbers = (count: number): Effect.Effect<ReadonlyArray<number>> =>
    count <= 0 ? Effect.succeed([]) : dieOnSql(Effect.map(
      sql<{ n: string | number }>`SELECT nextval('fos_sequence') AS n FROM generate_series(1, ${count})`,
      (rows) => rows.map((r) => Number(r.n)).sort((a, b) => a - b)
    ))

  /**
   * Moves `fos_sequence` past `atLeast` (Store.ts, `raiseSequence`), and drops the numbers this process and its
   * transaction hold from earlier blocks. A sequence cannot be locked, and `setval` is no compare-and-set: another
   * process's `nextval` landing between a read of the sequence and the `setval` would be handed again. So a short way
   * to go is gone by taking the numbers (each `nextval` is atomic: the last one taken is at least `atLeast`), and only
   * a long one is jumped with `setval`, which could repeat a number only if other processes took more than
   * `raiseByTaking` numbers within this one statement.
   */
  const raiseSequence = (atLeast: number): Effect.Effect<void> =>
    Effect.gen(function*() {
      spareNumbers.splice(0)
      const state = yield* CurrentTransaction
      if (state !== undefined) state.sequences.splice(0)
      // `handed`: the last number handed out (a sequence never called has handed none below its start).
      yield* dieOnSql(sql`SELECT CASE
          WHEN s.handed >= ${atLeast}::bigint THEN s.handed
          WHEN ${atLeast}::bigint - s.handed <= ${raiseByTaking} THEN (SELECT max(nextval('fos_sequence')) FROM generate_series(1, (${atLeast}::bigint - s.handed)::int))
          ELSE setval('fos_sequence', ${atLeast}::bigint)
        END AS n FROM (SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END AS handed FROM fos_sequence) AS s`)
    })

  const parse = (data: unknown): any => (typeof data === "string" ? JSON.parse(data) : data)

  /**
   * The row of the index entry or unique value `alias` names, as a subquery by its key: whatever plan PostgreSQL
   * keeps for the statement, it probes the rows' primary key once for each of the statement's own rows.
   */
  const rowByKey = (alias: "o" | "u") =>
    sql.literal(`(SELECT r.data FROM fos_rows r WHERE r.tbl = ${alias}.tbl AND r.key = ${alias}.key)`)

  /** The rows of `rowByKey`'s column, parsed; an entry whose row is gone has none (as a join would find). */
  const rowsOf = (rows: ReadonlyArray<{ readonly data: unknown }>): Array<any> =>
    rows.flatMap((r) => (r.data === null ? [] : [parse(r.data)]))

  /** Runs a write in the caller's transaction (which begins first), or in a transaction of its own outside one. */
  const ownTransaction = <A, E>(effect: Effect.Effect<A, E | SqlError.SqlError>): Effect.Effect<A, E> =>
    Effect.flatMap(inTransaction, (inside) =>
      inside ? Effect.andThen(begun, Effect.catchTag(effect, "SqlError", (e) => dieOf(e)) as Effect.Effect<A, E>) : atomically(effect))

  /**
   * A write a store transaction holds (it reads for update and holds what it writes: `hold`), so it needs no BEGIN
   * there; outside one, `ownTransaction`.
   */
  const unlessHeld = <A, E>(effect: Effect.Effect<A, E | SqlError.SqlError>): Effect.Effect<A, E> =>
    Effect.flatMap(CurrentTransaction, (state) =>
      state !== undefined ? Effect.catchTag(effect, "SqlError", (e) => dieOf(e)) as Effect.Effect<A, E> : ownTransaction(effect))

  /**
   * A write of exactly one statement: atomic on its own, so outside a transaction it runs without one; inside one,
   * the transaction begins first.
   */
  const statementOnly = <A, E>(effect: Effect.Effect<A, E | SqlError.SqlError>): Effect.Effect<A, E> =>
    Effect.andThen(begun, Effect.catchTag(effect, "SqlError", (e) => dieOf(e)) as Effect.Effect<A, E>)

  const sameEntry = (a: IndexEntry, b: IndexEntry) => a.ord === b.ord && a.part === b.part && a.sort === b.sort

  /**
   * What a write from `before` to `after` changes in the row's index: the entries to remove and to add (only those
   * that changed) and the counts that move, in (order, partition) order. A row that moves within one partition
   * changes no count.
   */
  const indexChanges = (t: Store.Table<any>, before: unknown | undefined, after: unknown | undefined) => {
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
    return { removed, added, counts }
  }

  /** `WITH <parts> <final>`, or the final statement alone. */
  const withParts = (parts: ReadonlyArray<Statement.Fragment>, final: Statement.Statement<object>): Statement.Statement<object> =>
    parts.length === 0 ? final : sql`WITH ${sql.csv(parts)} ${final}`

  const hasUniques = (t: Store.Table<any>) => Object.keys(t.unique).length > 0

  /**
   * The index CTEs of several rows' writes, each from its `before` to its `after`: one delete of the entries they
   * leave, one insert of the entries they take, and one upsert of the counts they move, added up per (table, order,
   * partition) and written in that order, so one statement never upserts one count row twice, and two transactions
   * that move rows between the same partitions in opposite directions (a delivery going pending to processing while
   * another goes processing to pending) take their count locks in one order and cannot deadlock. `guard` makes them
   * conditional (on every row having been inserted; on the rows read for update being unchanged).
   */
  const indexPartsOfRows = (
    rows: ReadonlyArray<{ readonly t: Store.Table<any>; readonly key: string; readonly before: unknown | undefined; readonly after: unknown | undefined }>,
    guard: Statement.Fragment = sql`true`
  ): Array<Statement.Fragment> => {
    const removed: Array<{ tbl: string; ord: string; part: string; sort: string; key: string }> = []
    const added: Array<{ tbl: string; ord: string; part: string; sort: string; key: string }> = []
    const counts = new Map<string, { tbl: string; ord: string; part: string; n: number }>()
    for (const r of rows) {
      const changes = indexChanges(r.t, r.before, r.after)
      for (const e of changes.removed) removed.push({ tbl: r.t.name, ord: e.ord, part: e.part, sort: e.sort, key: r.key })
      for (const e of changes.added) added.push({ tbl: r.t.name, ord: e.ord, part: e.part, sort: e.sort, key: r.key })
      for (const d of changes.counts) {
        const id = JSON.stringify([r.t.name, d.ord, d.part])
        const sum = counts.get(id) ?? { tbl: r.t.name, ord: d.ord, part: d.part, n: 0 }
        counts.set(id, { ...sum, n: sum.n + d.n })
      }
    }
    const moved = [...counts.values()].filter((d) => d.n !== 0).sort((a, b) => {
      const x = [a.tbl, a.ord, a.part], y = [b.tbl, b.ord, b.part]
      for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1
      return 0
    })
    const parts: Array<Statement.Fragment> = []
    if (removed.length > 0) {
      parts.push(sql`removed AS (DELETE FROM fos_orders o
        USING fos_entries_of(${jsonText(removed)}::json) AS v
        WHERE o.tbl = v.tbl AND o.ord = v.ord AND o.part = v.part AND o.sort = v.sort AND o.key = v.key AND ${guard})`)
    }
    if (added.length > 0) {
      parts.push(sql`added AS (INSERT INTO fos_orders (tbl, ord, part, sort, key)
        SELECT v.tbl, v.ord, v.part, v.sort, v.key
        FROM json_to_recordset(${jsonText(added)}::json) AS v (tbl text, ord text, part text, sort text, key text) WHERE ${guard})`)
    }
    if (moved.length > 0) {
      parts.push(sql`counted AS (INSERT INTO fos_count_shards (tbl, ord, part, shard, n)
        SELECT v.tbl, v.ord, v.part, pg_backend_pid() % ${countShards}, v.n
        FROM json_to_recordset(${jsonText(moved)}::json) AS v (tbl text, ord text, part text, n bigint)
        WHERE ${guard}
        ON CONFLICT (tbl, ord, part, shard) DO UPDATE SET n = fos_count_shards.n + EXCLUDED.n)`)
    }
    return parts
  }

  /**
   * Sends writes as one statement: the fresh rows (which must not exist), the new versions of the others, and their
   * index CTEs. `unchanged`: the statement is the commit of a transaction that never began (`finish`): it first locks
   * those rows and writes only if every one is as it was read; a fresh key found taken fails the whole statement.
   */
  const sendRows = (
    rows: ReadonlyArray<Held>,
    unchanged?: ReadonlyArray<{ readonly tbl: string; readonly key: string; readonly text: string }>
  ): Effect.Effect<void> => {
    if (rows.length === 0) return Effect.void
    const fresh = rows.filter((r) => r.fresh)
    const updated = rows.filter((r) => !r.fresh && r.after !== undefined)
    const removed = rows.filter((r) => r.after === undefined)
    const rowsOf = (list: ReadonlyArray<Held>) =>
      sql`json_to_recordset(${rowsJsonOf(list.map((r) => ({ tbl: r.t.name, key: r.key, json: r.json! })))}::json) AS v (tbl text, key text, data json)`
    const parts: Array<Statement.Fragment> = []
    const checked = unchanged !== undefined && unchanged.length > 0
    if (checked) parts.push(sql`locked AS MATERIALIZED (${lockUnchanged(unchanged)})`)
    const guard = checked ? sql`(SELECT count(*) FROM locked) = ${unchanged.length}` : sql`true`
    if (removed.length > 0) {
      parts.push(sql`gone AS (DELETE FROM fos_rows r USING fos_keys_of(${jsonText(removed.map((h) => ({ tbl: h.t.name, key: h.key })))}::json) AS v
        WHERE r.tbl = v.tbl AND r.key = v.key AND ${guard})`)
    }
    if (unchanged !== undefined) {
      if (fresh.length > 0) {
        parts.push(sql`fresh AS (INSERT INTO fos_rows (tbl, key, data)
          SELECT v.tbl, v.key, v.data FROM ${rowsOf(fresh)}
          WHERE ${guard} RETURNING 1)`)
      }
      if (updated.length > 0) {
        parts.push(sql`updated AS (INSERT INTO fos_rows (tbl, key, data)
          SELECT v.tbl, v.key, v.data FROM ${rowsOf(updated)}
          WHERE ${guard}
          ON CONFLICT (tbl, key) DO UPDATE SET data = EXCLUDED.data)`)
      }
      parts.push(...indexPartsOfRows(rows, guard))
      return dieOnSql(sql<{ ok: boolean }>`WITH ${sql.csv(parts)} SELECT ${guard} AS ok`).pipe(
        Effect.flatMap(([result]) => (result!.ok ? Effect.void : Effect.die(new OptimisticConflict())))
      )
    }
    if (fresh.length > 0) {
      parts.push(sql`fresh AS (INSERT INTO fos_rows (tbl, key, data) SELECT v.tbl, v.key, v.data FROM ${rowsOf(fresh)} ON CONFLICT DO NOTHING RETURNING 1)`)
    }
    if (updated.length > 0) {
      parts.push(sql`updated AS (INSERT INTO fos_rows (tbl, key, data) SELECT v.tbl, v.key, v.data FROM ${rowsOf(updated)}
        ON CONFLICT (tbl, key) DO UPDATE SET data = EXCLUDED.data)`)
    }
    parts.push(...indexPartsOfRows(rows))
    const final = fresh.length > 0 ? sql`SELECT count(*) AS n FROM fresh` : sql`SELECT 0 AS n`
    return dieOnSql(sql<{ n: string | number }>`WITH ${sql.csv(parts)} ${final}`).pipe(
      Effect.flatMap(([result]) =>
        fresh.length > 0 && Number(result!.n) !== fresh.length
          ? Effect.die(new Error(`insertFresh: a key already taken among ${fresh.map((r) => `${r.t.name}/${r.key}`).join(", ")}`))
          : Effect.void
      )
    )
  }

  /**
   * Holds a write for a later statement of the transaction: the next that touches its table, or the commit. A write
   * to a row already held replaces the held version, keeping what the database has as `before`. The row is
   * remembered, so reads in the transaction find it at once.
   */
  const hold = (state: TransactionState, t: Store.Table<any>, key: string, before: unknown | undefined, row: unknown | undefined, fresh: boolean) => {
    const id = knownKey(t.name, key)
    const json = row === undefined ? undefined : JSON.stringify(row)
    const earlier = state.held.get(id)
    // A fresh row removed before it was sent never reaches the database.
    if (row === undefined && earlier?.fresh === true) state.held.delete(id)
    else state.held.set(id, earlier === undefined ? { t, key, before, after: row, json, fresh } : { ...earlier, after: row, json })
    state.heldTables.add(t.name)
    state.rows.set(id, json === undefined ? { gone: true } : { value: row, json })
    changed(state, t.name, key)
  }

  /** Sends every held write of the transaction, which begins first. */
  const sendHeld = Effect.flatMap(CurrentTransaction, (state) => {
    if (state === undefined || state.held.size === 0) return Effect.void
    return Effect.andThen(begin(state), Effect.suspend(() => {
      const rows = [...state.held.values()]
      state.held.clear()
      state.heldTables.clear()
      return sendRows(rows)
    }))
  })

  /**
   * What ends a store transaction's body: its held writes sent. A transaction that never began sends them as one
   * statement, which is its commit: it locks the rows read for update and checks them unchanged, and writes only if
   * they are (else `OptimisticConflict`, and the transaction is run again). One that wrote nothing sends nothing.
   */
  const finish = Effect.flatMap(CurrentTransaction, (state) => {
    if (state === undefined) return Effect.void
    if (state.begun) return sendHeld
    if (state.held.size === 0) return Effect.void
    const rows = [...state.held.values()]
    state.held.clear()
    state.heldTables.clear()
    // The commit itself: the one write that may run without BEGIN, so it goes past the connection's guard.
    return Effect.provideService(sendRows(rows, [...state.expected.values()]), sql.transactionService, [state.connection, 0] as const).pipe(
      Effect.onError((cause) => Effect.sync(() => void (state.conflict ||= conflicted(cause))))
    )
  })

  /** Sends the held writes before a statement that reads or writes `t` through the database. */
  const sendHeldOf = (t: Store.Table<any>) =>
    Effect.flatMap(CurrentTransaction, (state) => (state !== undefined && state.heldTables.has(t.name) ? sendHeld : Effect.void))

  /**
   * An insert of one row or several is one statement: the rows (ON CONFLICT DO NOTHING, so a taken primary key is
   * reported, never an aborted transaction), their unique values, and, when every row and every value was taken,
   * their index entries and counts. A key or value taken by another row leaves the rows and values the statement did
   * take to be taken back by a second statement, in the same transaction; so outside a transaction an insert with
   * unique keys, or of several rows, runs in one of its own, and a single row without them runs alone. Keys or
   * values repeated within the rows are refused before anything is sent.
   */
  const insertMany = <Row>(t: Store.Table<Row>, rows: ReadonlyArray<Row>): Effect.Effect<void, Store.UniqueViolation> => {
    if (rows.length === 0) return Effect.void
    const written = rows.map((row) => ({ t, row, key: t.key(row), json: JSON.stringify(row), uniques: uniquesOf(t, row) }))
    const seen = new Set<string>()
    for (const w of written) {
      if (seen.has(w.key)) return Effect.fail(new Store.UniqueViolation({ table: t.name, unique: "primary", key: w.key }))
      seen.add(w.key)
      for (const [name, value] of w.uniques) {
        const id = knownKey(name, value)
        if (seen.has(id)) return Effect.fail(new Store.UniqueViolation({ table: t.name, unique: name, key: w.key }))
        seen.add(id)
      }
    }
    const uniques = written.flatMap((w) => w.uniques.map(([name, value]) => ({ name, value, key: w.key })))
    const alone = written.length === 1 && uniques.length === 0
    return (alone ? statementOnly : ownTransaction)(Effect.gen(function*() {
      // A held fresh row under one of these keys must be in the database for the conflict to show.
      yield* sendHeldOf(t)
      const rowPart = sql`inserted AS (INSERT INTO fos_rows (tbl, key, data)
        SELECT v.tbl, v.key, v.data FROM json_to_recordset(${rowsJsonOf(written.map((w) => ({ tbl: t.name, key: w.key, json: w.json })))}::json)
          AS v (tbl text, key text, data json)
        ON CONFLICT DO NOTHING RETURNING key)`
      const parts: Array<Statement.Fragment> = [rowPart]
      if (uniques.length > 0) {
        parts.push(sql`taken AS (INSERT INTO fos_uniques (tbl, name, value, key)
          SELECT ${t.name}, v.name, v.value, v.key
          FROM json_to_recordset(${jsonText(uniques)}::json) AS v (name text, value text, key text)
          WHERE v.key IN (SELECT key FROM inserted)
          ON CONFLICT DO NOTHING RETURNING name, key)`)
      }
      const complete = uniques.length === 0
        ? sql`(SELECT count(*) FROM inserted) = ${written.length}`
        : sql`(SELECT count(*) FROM inserted) = ${written.length} AND (SELECT count(*) FROM taken) = ${uniques.length}`
      parts.push(...indexPartsOfRows(written.map((w) => ({ t, key: w.key, before: undefined, after: w.row })), complete))
      const [result] = yield* sql<{ keys: unknown; taken: unknown }>`WITH ${sql.csv(parts)}
        SELECT (SELECT json_agg(key) FROM inserted) AS keys,
          ${uniques.length === 0 ? sql`NULL` : sql`(SELECT json_agg(json_build_array(name, key)) FROM taken)`} AS taken`
      const inserted = new Set((parse(result!.keys) ?? []) as Array<string>)
      const taken = new Set(((parse(result!.taken) ?? []) as Array<[string, string]>).map(([name, key]) => knownKey(name, key)))
      const refusedRow = written.find((w) => !inserted.has(w.key))
      const refusedValue = uniques.find((u) => !taken.has(knownKey(u.name, u.key)))
      if (refusedRow === undefined && refusedValue === undefined) {
        for (const w of written) yield* wrote(t.name, w.key, w.json)
        return
      }
      if (inserted.size > 0) {
        const mine = [...inserted]
        yield* sql`WITH values AS (DELETE FROM fos_uniques WHERE tbl = ${t.name} AND key IN ${sql.in(mine)})
          DELETE FROM fos_rows WHERE tbl = ${t.name} AND key IN ${sql.in(mine)}`
      }
      return yield* Effect.fail(refusedRow !== undefined
        ? new Store.UniqueViolation({ table: t.name, unique: "primary", key: refusedRow.key })
        : new Store.UniqueViolation({ table: t.name, unique: refusedValue!.name, key: refusedValue!.key }))
    }))
  }

  const insert = <Row>(t: Store.Table<Row>, row: Row): Effect.Effect<void, Store.UniqueViolation> => insertMany(t, [row])

  /**
   * Rows of several tables written whole (Store.ts, `insertRows`: a fork's sandbox), a batch of `insertBatch` rows
   * per statement, each statement carrying its rows, their unique values, their index entries and the counts they
   * add as JSON parameters (as a restore carries them from its copy): one round trip per batch, whatever the number
   * of tables, and no limit on a statement's parameters to meet. Keys and values repeated within the rows are refused
   * before anything is sent; one taken by a stored row shows as a shortfall, which rolls the batches back (a
   * savepoint in a transaction), and a read then names the first row refused.
   */
  const insertRows = (groups: ReadonlyArray<{ readonly table: Store.Table<any>; readonly rows: ReadonlyArray<unknown> }>): Effect.Effect<void, Store.UniqueViolation> => {
    const written = groups.flatMap(({ table: t, rows }) => rows.map((row) => ({ t, key: t.key(row), row, uniques: uniquesOf(t, row) })))
    if (written.length === 0) return Effect.void
    const seen = new Set<string>()
    for (const w of written) {
      const id = knownKey(w.t.name, w.key)
      if (seen.has(id)) return Effect.fail(new Store.UniqueViolation({ table: w.t.name, unique: "primary", key: w.key }))
      seen.add(id)
      for (const [name, value] of w.uniques) {
        const valueId = `${w.t.name}\u0000${knownKey(name, value)}`
        if (seen.has(valueId)) return Effect.fail(new Store.UniqueViolation({ table: w.t.name, unique: name, key: w.key }))
        seen.add(valueId)
      }
    }
    const statement = (batch: ReadonlyArray<typeof written[number]>) => {
      const uniques: Array<string> = []
      const entries: Array<string> = []
      const counts = new Map<string, { tbl: string; ord: string; part: string; n: number }>()
      const text = JSON.stringify
      for (const w of batch) {
        const tbl = text(w.t.name)
        const key = text(w.key)
        for (const [name, value] of w.uniques) uniques.push(`{"tbl":${tbl},"name":${text(name)},"value":${text(value)},"key":${key}}`)
        for (const e of entriesOf(w.t, w.row)) {
          entries.push(`{"tbl":${tbl},"ord":${text(e.ord)},"part":${text(e.part)},"sort":${text(e.sort)},"key":${key}}`)
          if (!e.counted) continue
          const id = `${w.t.name}\u0000${e.ord}\u0000${e.part}`
          const count = counts.get(id)
          if (count === undefined) counts.set(id, { tbl: w.t.name, ord: e.ord, part: e.part, n: 1 })
          else count.n++
        }
      }
      // A row's JSON goes in as it is: a `json` member of a record keeps its text as written.
      const rowsJson = `[${batch.map((w) => `{"tbl":${text(w.t.name)},"key":${text(w.key)},"data":${text(w.row)}}`).join(",")}]`
      // The counts in (table, order, partition) order, as every write takes their locks.
      const countsJson = text([...counts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, c]) => c))
      return Effect.map(
        sql<{ put: string | number; taken: string | number }>`WITH ${sql.csv([
          sql`put AS (INSERT INTO fos_rows (tbl, key, data)
            SELECT tbl, key, data FROM json_to_recordset(${rowsJson}::json) AS v (tbl text, key text, data json)
            ON CONFLICT DO NOTHING RETURNING 1)`,
          sql`taken AS (INSERT INTO fos_uniques (tbl, name, value, key)
            SELECT tbl, name, value, key FROM json_to_recordset(${`[${uniques.join(",")}]`}::json) AS v (tbl text, name text, value text, key text)
            ON CONFLICT DO NOTHING RETURNING 1)`,
          sql`indexed AS (INSERT INTO fos_orders (tbl, ord, part, sort, key)
            SELECT tbl, ord, part, sort, key FROM json_to_recordset(${`[${entries.join(",")}]`}::json) AS v (tbl text, ord text, part text, sort text, key text)
            ON CONFLICT DO NOTHING)`,
          sql`counted AS (INSERT INTO fos_count_shards (tbl, ord, part, shard, n)
            SELECT tbl, ord, part, pg_backend_pid() % ${countShards}, n FROM json_to_recordset(${countsJson}::json) AS v (tbl text, ord text, part text, n bigint)
            ON CONFLICT (tbl, ord, part, shard) DO UPDATE SET n = fos_count_shards.n + EXCLUDED.n)`
        ])} SELECT (SELECT count(*) FROM put) AS put, (SELECT count(*) FROM taken) AS taken`,
        ([r]) => Number(r!.put) === batch.length && Number(r!.taken) === uniques.length
      )
    }
    /** The first row, in the order given, whose key or unique value a stored row holds. */
    const refusal = Effect.gen(function*() {
      const keys = JSON.stringify(written.map((w) => [w.t.name, w.key]))
      const [held] = yield* sql<{ i: string | number }>`SELECT k.i FROM json_array_elements(${keys}::json) WITH ORDINALITY AS k (e, i)
        JOIN fos_rows r ON r.tbl = k.e ->> 0 AND r.key = k.e ->> 1 ORDER BY k.i LIMIT 1`
      const values = JSON.stringify(written.flatMap((w, i) => w.uniques.map(([name, value]) => [w.t.name, name, value, i])))
      const [valued] = yield* sql<{ i: string | number; name: string }>`SELECT (v.e ->> 3)::bigint AS i, v.e ->> 1 AS name
        FROM json_array_elements(${values}::json) AS v (e)
        JOIN fos_uniques u ON u.tbl = v.e ->> 0 AND u.name = v.e ->> 1 AND u.value = v.e ->> 2 ORDER BY 1 LIMIT 1`
      const rowAt = held === undefined ? undefined : Number(held.i) - 1
      const valueAt = valued === undefined ? undefined : Number(valued.i)
      if (rowAt === undefined && valueAt === undefined) return yield* Effect.die(new Error("insertRows: a row or value was refused, and none is held now"))
      const at = valueAt === undefined || (rowAt !== undefined && rowAt <= valueAt) ? rowAt! : valueAt
      const w = written[at]!
      return new Store.UniqueViolation({ table: w.t.name, unique: at === rowAt ? "primary" : valued!.name, key: w.key })
    })
    const write = Effect.forEach(chunks(written, insertBatch), (batch) =>
      Effect.flatMap(statement(batch), (complete) => (complete ? Effect.void : Effect.fail(new Shortfall()))), { discard: true })
    return Effect.andThen(
      sendHeld,
      atomically<void, Shortfall>(write).pipe(
        Effect.catchTag("Shortfall", () => Effect.flatMap(dieOnSql(refusal), Effect.fail)),
        Effect.ensuring(forgetAll)
      )
    )
  }

  /**
   * Inside a store transaction a fresh row of a table without unique keys is held and sent with a later statement
   * (`hold`); anywhere else it is an insert whose refusal is a defect.
   */
  const insertFresh = <Row>(t: Store.Table<Row>, row: Row): Effect.Effect<void> =>
    Effect.flatMap(CurrentTransaction, (state) => {
      if (state === undefined || hasUniques(t)) return Effect.orDie(insert(t, row))
      const key = t.key(row)
      const known = state.rows.get(knownKey(t.name, key))
      if (known !== undefined && known.gone !== true) return Effect.die(new Error(`insertFresh: ${t.name}/${key} is taken`))
      hold(state, t, key, undefined, row, true)
      return Effect.void
    })

  /**
   * One statement: the row (ON CONFLICT DO NOTHING), its index entries and counts when it went in, and the row that
   * held the key as the statement's snapshot saw it. A key taken by a row the snapshot cannot see (inserted by a
   * transaction that had not committed when the statement began) is a `UniqueViolation`.
   */
  const insertIfAbsent = <Row>(t: Store.Table<Row>, row: Row): Effect.Effect<Row | undefined, Store.UniqueViolation> => {
    if (hasUniques(t)) return Effect.die(new Error(`insertIfAbsent: ${t.name} declares unique keys`))
    const key = t.key(row)
    const json = JSON.stringify(row)
    return statementOnly(Effect.gen(function*() {
      const known = (yield* CurrentTransaction)?.rows.get(knownKey(t.name, key))
      if (known !== undefined) return valueOf(known) as Row
      yield* sendHeldOf(t)
      const parts = [
        sql`inserted AS (INSERT INTO fos_rows (tbl, key, data) VALUES (${t.name}, ${key}, ${json}::json) ON CONFLICT DO NOTHING RETURNING key)`,
        ...indexPartsOfRows([{ t, key, before: undefined, after: row }], sql`(SELECT count(*) FROM inserted) = 1`)
      ]
      const [result] = yield* sql<{ inserted: boolean; holder: unknown }>`WITH ${sql.csv(parts)}
        SELECT EXISTS (SELECT 1 FROM inserted) AS inserted,
          (SELECT data FROM fos_rows WHERE tbl = ${t.name} AND key = ${key}) AS holder`
      if (result!.inserted) {
        yield* wrote(t.name, key, json)
        return undefined
      }
      if (result!.holder === null || result!.holder === undefined) {
        return yield* Effect.fail(new Store.UniqueViolation({ table: t.name, unique: "primary", key }))
      }
      return parse(result!.holder) as Row
    }))
  }

  /** Takes the row's unique values; a value held by another row is a `UniqueViolation` naming the key. */
  const addUniques = (t: Store.Table<any>, row: unknown, key: string) =>
    Effect.forEach(uniquesOf(t, row), ([name, value]) =>
      sql`INSERT INTO fos_uniques (tbl, name, value, key) VALUES (${t.name}, ${name}, ${value}, ${key})`.pipe(
        Effect.catchIf(isUniqueViolation, () => Effect.fail(new Store.UniqueViolation({ table: t.name, unique: name, key })))
      ), { discard: true })

  /**
   * An update reads the row it replaces (locking it), unless this transaction already holds it. In a store
   * transaction, a row of a table without unique keys cannot be refused, so its write is held for a later statement
   * (`hold`); outside one it is one statement. A table with unique keys writes the row, its index entries and its
   * counts, then its values, in a savepoint, since a taken value must undo the whole update; the held writes go
   * first, so a rolled-back savepoint takes none of them.
   */
  const update = <Row>(t: Store.Table<Row>, row: Row): Effect.Effect<void, Store.UniqueViolation> => {
    if (hasUniques(t)) {
      const write = Effect.gen(function*() {
        const key = t.key(row)
        const json = JSON.stringify(row)
        const before = yield* readRow(t.name, key, true)
        const upsert = sql`INSERT INTO fos_rows (tbl, key, data) VALUES (${t.name}, ${key}, ${json}::json)
          ON CONFLICT (tbl, key) DO UPDATE SET data = EXCLUDED.data`
        yield* sql`WITH ${sql.csv([sql`written AS (${upsert})`, ...indexPartsOfRows([{ t, key, before, after: row }])])}
          DELETE FROM fos_uniques WHERE tbl = ${t.name} AND key = ${key}`
        yield* addUniques(t, row, key)
        yield* wrote(t.name, key, json)
      })
      return Effect.andThen(sendHeld, Effect.tapError(atomically(write), () => forgetAll))
    }
    return unlessHeld(Effect.gen(function*() {
      const key = t.key(row)
      const before = yield* readRow(t.name, key, true)
      const state = yield* CurrentTransaction
      if (state !== undefined) return hold(state, t, key, before, row, false)
      yield* sendRows([{ t, key, before, after: row, json: JSON.stringify(row), fresh: false }])
    }))
  }

  /**
   * Several rows of a table without unique keys: the rows this transaction does not hold yet are read (and locked)
   * first, in key order, as `getManyForUpdate` does; then, as `update`, held in a store transaction or written in
   * one statement outside one.
   */
  const updateMany = <Row>(t: Store.Table<Row>, rows: ReadonlyArray<Row>): Effect.Effect<void> => {
    if (rows.length === 0) return Effect.void
    if (hasUniques(t)) return Effect.die(new Error(`updateMany: ${t.name} declares unique keys`))
    return unlessHeld<void, never>(Effect.gen(function*() {
      const keys = rows.map((row) => t.key(row))
      if (new Set(keys).size !== keys.length) return yield* Effect.die(new Error(`updateMany: a key twice in ${t.name}`))
      const befores = new Map((yield* getManyForUpdate(t, keys)).map((row) => [t.key(row), row as unknown]))
      const state = yield* CurrentTransaction
      if (state !== undefined) {
        for (const [i, row] of rows.entries()) hold(state, t, keys[i]!, befores.get(keys[i]!), row, false)
        return
      }
      yield* sendRows(rows.map((row, i) => ({ t, key: keys[i]!, before: befores.get(keys[i]!), after: row, json: JSON.stringify(row), fresh: false })))
    }))
  }

  /** Keys as an array of one JSON parameter, for `key = ANY (…)`: an index scan of the keys, whatever their number. */
  const keysIn = (keys: ReadonlyArray<string>) => sql`ARRAY(SELECT json_array_elements_text(${jsonText(keys)}::json))`

  /**
   * Locks the rows of `keys` that exist, in key order, in one statement; remembers them for this transaction. The
   * rows this transaction already holds (locked, written or held) are answered from memory and not asked for.
   */
  const getManyForUpdate = <Row>(t: Store.Table<Row>, keys: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<Row>> =>
    Effect.gen(function*() {
      const sorted = [...new Set(keys)].sort()
      if (sorted.length === 0) return []
      const state = yield* CurrentTransaction
      const missing = state === undefined ? sorted : sorted.filter((key) => !state.rows.has(knownKey(t.name, key)))
      const fetched = new Map<string, Row>()
      if (missing.length > 0 && state !== undefined && !state.begun) {
        // Before the transaction began: read, with a fresh block, and expected unchanged (`readBeforeBegin`).
        state.blockTaken = true
        const rows = yield* dieOnSql(sql<{ key: string | null; data: string | null; block: string | null }>`SELECT key, data::text AS data, NULL AS block
            FROM fos_rows WHERE tbl = ${t.name} AND key = ANY (${keysIn(missing)})
          UNION ALL SELECT NULL, NULL, (${blockNow})`)
        for (const r of rows) {
          if (r.block !== null) {
            state.sequences.splice(0, Infinity, ...r.block.split(",").map(Number))
            continue
          }
          const id = knownKey(t.name, r.key!)
          const value = JSON.parse(r.data!)
          state.rows.set(id, { value, json: r.data! })
          state.expected.set(id, { tbl: t.name, key: r.key!, text: r.data! })
          fetched.set(r.key!, value)
        }
      } else if (missing.length > 0) {
        // Also a fresh block of sequence numbers, taken once the locks are granted (see `sequenceBlock`).
        const block = state !== undefined
        const rows = yield* dieOnSql(block
          ? sql<{ key: string | null; data: unknown; block: string | null }>`WITH found AS MATERIALIZED (SELECT key, data
                FROM fos_rows WHERE tbl = ${t.name} AND key = ANY (${keysIn(missing)}) ORDER BY key FOR UPDATE)
              SELECT key, data, NULL AS block FROM found
              UNION ALL SELECT NULL, NULL, (${blockAfter(sql`found`)})`
          : sql<{ key: string | null; data: unknown; block: string | null }>`SELECT key, data, NULL AS block FROM fos_rows
              WHERE tbl = ${t.name} AND key = ANY (${keysIn(missing)}) ORDER BY key FOR UPDATE`)
        for (const r of rows) {
          if (r.block !== null) {
            state!.blockTaken = true
            state!.sequences.splice(0, Infinity, ...r.block.split(",").map(Number))
            continue
          }
          const value = parse(r.data)
          state?.rows.set(knownKey(t.name, r.key!), { value })
          fetched.set(r.key!, value)
        }
      }
      return sorted.flatMap((key) => {
        const known = state?.rows.get(knownKey(t.name, key))
        const row = known !== undefined ? valueOf(known) as Row : fetched.get(key)
        return row === undefined ? [] : [row]
      })
    })

  /**
   * A removal reads the row it removes (locking it), unless the transaction holds it. In a store transaction a row of
   * a table without unique keys is held removed (`hold`): gone for the transaction's reads, sent with its other held
   * writes (a timer firing removes its timer and may commit in one statement). Otherwise it is one statement.
   */
  const remove = <Row>(t: Store.Table<Row>, key: string): Effect.Effect<void> =>
    Effect.flatMap(CurrentTransaction, (state) =>
      state === undefined || hasUniques(t)
        ? removeNow(t, key)
        : Effect.flatMap(readRow(t.name, key, true), (before) => {
          if (before !== undefined) hold(state, t, key, before, undefined, false)
          return Effect.void
        }))

  const removeNow = <Row>(t: Store.Table<Row>, key: string): Effect.Effect<void> =>
    ownTransaction<void, never>(Effect.gen(function*() {
      yield* sendHeldOf(t)
      const before = yield* readRow(t.name, key, true)
      if (before === undefined) return
      const parts = indexPartsOfRows([{ t, key, before, after: undefined }])
      if (hasUniques(t)) parts.push(sql`values AS (DELETE FROM fos_uniques WHERE tbl = ${t.name} AND key = ${key})`)
      yield* withParts(parts, sql`DELETE FROM fos_rows WHERE tbl = ${t.name} AND key = ${key}`)
      yield* wrote(t.name, key, undefined)
    }))

  /**
   * A selection's rows (Store.ts, `Selection`) as `SELECT i, tbl, key`: found through the index entries, never by
   * reading the rows, except the few an `except` reads to leave out.
   */
  const selectionSql = (selection: Store.Selection, i: number): Statement.Fragment => {
    const tbl = selection.table.name
    // A parent's children are looked up by their partition, one index probe per parent: `OFFSET 0` keeps the
    // lateral subquery whole, since flattened the planner may scan every child partition of the table per parent.
    const found = "sameKeys" in selection
      ? sql`SELECT r.key FROM fos_orders p CROSS JOIN LATERAL (SELECT r.key FROM fos_rows r WHERE r.tbl = ${tbl} AND r.key = p.key OFFSET 0) AS r
          WHERE p.tbl = ${selection.sameKeys.table.name} AND p.ord = ${selection.sameKeys.order} AND p.part = ${selection.sameKeys.partition}`
      : "parents" in selection
      ? sql`SELECT c.key FROM fos_orders p CROSS JOIN LATERAL (SELECT c.key FROM fos_orders c
            WHERE c.tbl = ${tbl} AND c.ord = ${selection.order} AND c.part = ${selection.prefix} || p.key OFFSET 0) AS c
          WHERE p.tbl = ${selection.parents.table.name} AND p.ord = ${selection.parents.order} AND p.part = ${selection.parents.partition}`
      : sql`SELECT o.key FROM fos_orders o WHERE o.tbl = ${tbl} AND o.ord = ${selection.order} AND o.part = ${selection.partition}`
    const except = selection.except
    return except === undefined
      ? sql`SELECT ${i}::int AS i, ${tbl}::text AS tbl, f.key FROM (${found}) AS f`
      : sql`SELECT ${i}::int AS i, ${tbl}::text AS tbl, f.key FROM (${found}) AS f JOIN fos_rows x ON x.tbl = ${tbl} AND x.key = f.key
          WHERE NOT (json_typeof(x.data -> ${except.field}) = 'string' AND x.data ->> ${except.field} = ${except.equals})`
  }

  /**
   * The CTEs every set-based statement over selections starts with: `sel`, each selection's rows, and `firsts`, each
   * row once, under the first selection that found it.
   */
  const selectedParts = (selections: ReadonlyArray<Store.Selection>): Array<Statement.Fragment> => [
    sql`sel AS MATERIALIZED (${sql.join(" UNION ALL ", false)(selections.map(selectionSql))})`,
    sql`firsts AS MATERIALIZED (SELECT DISTINCT ON (tbl, key) i, tbl, key FROM sel ORDER BY tbl, key, i)`
  ]

  /** `[[i, n], …]` (JSON) back as `n` per selection, 0 for a selection that found nothing. */
  const perSelection = (selections: ReadonlyArray<Store.Selection>, counted: unknown): ReadonlyArray<number> => {
    const out = selections.map(() => 0)
    for (const [i, n] of (parse(counted) ?? []) as Array<[number, number]>) out[i] = Number(n)
    return out
  }

  /** The (table, order) pairs whose partitions keep a count, of `tables`, as VALUES rows; none gives none. */
  const countedOrders = (tables: Iterable<Store.Table<any>>): Array<Statement.Fragment> => {
    const pairs = new Map<string, Statement.Fragment>()
    for (const t of tables) {
      for (const [ord, o] of Object.entries(t.orders)) {
        if (o.counted !== false) pairs.set(knownKey(t.name, ord), sql`(${t.name}::text, ${ord}::text)`)
      }
    }
    return [...pairs.values()]
  }

  /**
   * Set-based, so a reset costs two statements whatever the sandbox holds: the counts of the counted orders go down
   * by the rows leaving each of their partitions (on this connection's shard; only the sum means anything), and the
   * unique values, the rows and every index entry of those rows go (found by row, through `fos_orders_by_key`). Every
   * part of the statement sees the rows as they were before it, so a selection through parents finds the parents
   * another selection removes. With `keeping`, a row that copy holds as it is stays (a restore writes back only what
   * changed). The rows this transaction remembered are forgotten. The second statement drops the count rows of the
   * partitions the first lowered to nothing (`dropEmptyCounts`).
   */
  const removeSelected = (selections: ReadonlyArray<Store.Selection>, keeping?: string): Effect.Effect<ReadonlyArray<number>, SqlError.SqlError> =>
    Effect.gen(function*() {
      yield* sendHeld
      const counted = countedOrders(selections.map((s) => s.table))
      const parts = selectedParts(selections)
      if (keeping === undefined) parts.push(sql`doomed AS MATERIALIZED (SELECT i, tbl, key FROM firsts)`)
      else {
        // The selected rows the copy holds as they are, then the rest: as two sets, so the planner joins them by hash
        // (a NOT EXISTS per row was planned as a scan of the copy per row). Found from the selected rows, not the
        // copy's: after a reset a few are selected, and a copy of 9,000 rows was read to keep none.
        parts.push(
          sql`same AS MATERIALIZED (SELECT DISTINCT f.tbl, f.key FROM firsts f
            JOIN fos_copy_rows c ON c.copy = ${keeping} AND c.tbl = f.tbl AND c.key = f.key
            JOIN fos_rows r ON r.tbl = f.tbl AND r.key = f.key
            WHERE c.data::text = r.data::text)`,
          sql`doomed AS MATERIALIZED (SELECT f.i, f.tbl, f.key FROM firsts f LEFT JOIN same s ON s.tbl = f.tbl AND s.key = f.key
            WHERE s.key IS NULL)`
        )
      }
      if (counted.length > 0) {
        parts.push(sql`counted AS (INSERT INTO fos_count_shards (tbl, ord, part, shard, n)
          SELECT o.tbl, o.ord, o.part, pg_backend_pid() % ${countShards}, -count(*)
          FROM doomed d JOIN fos_orders o ON o.tbl = d.tbl AND o.key = d.key
          WHERE (o.tbl, o.ord) IN (VALUES ${sql.csv(counted)}) GROUP BY o.tbl, o.ord, o.part ORDER BY o.tbl, o.ord, o.part
          ON CONFLICT (tbl, ord, part, shard) DO UPDATE SET n = fos_count_shards.n + EXCLUDED.n
          RETURNING tbl, ord, part)`)
      }
      parts.push(
        sql`values_gone AS (DELETE FROM fos_uniques x USING doomed d WHERE x.tbl = d.tbl AND x.key = d.key)`,
        sql`entries_gone AS (DELETE FROM fos_orders x USING doomed d WHERE x.tbl = d.tbl AND x.key = d.key)`,
        sql`gone AS (DELETE FROM fos_rows x USING doomed d WHERE x.tbl = d.tbl AND x.key = d.key RETURNING x.tbl, x.key)`
      )
      const [result] = yield* sql<{ removed: unknown; lowered: string | null }>`WITH ${sql.csv(parts)}
        SELECT json_agg(json_build_array(c.i, c.n)) AS removed,
          ${counted.length > 0 ? sql`(SELECT json_agg(json_build_object('tbl', tbl, 'ord', ord, 'part', part))::text FROM counted)` : sql`NULL::text`} AS lowered
        FROM (SELECT d.i, count(*) AS n FROM gone g JOIN doomed d ON d.tbl = g.tbl AND d.key = g.key GROUP BY d.i) AS c`
      yield* forgetAll
      if (result!.lowered !== null) yield* dropEmptyCounts(result!.lowered)
      return perSelection(selections, result!.removed)
    })

  /**
   * Removes the count rows of the partitions `lowered` (JSON `[{ tbl, ord, part }, …]`) whose shards add up to
   * nothing. Partitions come and go with resources (a delivery's attempts, a fork's scope), so without this a removal
   * left a row per shard of every partition it emptied, for good: a fork and its deletion left hundreds. The shards are
   * locked first, in (table, order, partition, shard) order as every write takes them, and only the locked rows whose
   * sum is zero go, so a count is never changed: a shard another transaction adds meanwhile is not among them. The
   * sums are a window over the locked rows, so each locked row is looked at once: a join of the locked rows with
   * their partitions' sums was planned as a loop over both (the estimate of a CTE is one row), 888,306 comparisons
   * and 244 ms for the 1,886 shards of a large sandbox's reset.
   */
  const dropEmptyCounts = (lowered: string) =>
    sql`WITH parts AS (SELECT DISTINCT tbl, ord, part FROM json_to_recordset(${lowered}::json) AS v (tbl text, ord text, part text)),
      locked AS MATERIALIZED (SELECT s.tbl, s.ord, s.part, s.shard, s.n FROM fos_count_shards s
        JOIN parts p ON p.tbl = s.tbl AND p.ord = s.ord AND p.part = s.part
        ORDER BY s.tbl, s.ord, s.part, s.shard FOR UPDATE OF s),
      empty AS MATERIALIZED (SELECT tbl, ord, part, shard FROM (SELECT tbl, ord, part, shard, sum(n) OVER (PARTITION BY tbl, ord, part) AS total
        FROM locked) AS l WHERE total = 0)
      DELETE FROM fos_count_shards s USING empty e
      WHERE s.tbl = e.tbl AND s.ord = e.ord AND s.part = e.part AND s.shard = e.shard`

  const removeRows = (selections: ReadonlyArray<Store.Selection>): Effect.Effect<ReadonlyArray<number>> =>
    selections.length === 0 ? Effect.succeed([]) : ownTransaction<ReadonlyArray<number>, never>(removeSelected(selections))

  const removePartition = <Row>(t: Store.Table<Row>, order: string, partition: string | ReadonlyArray<string>): Effect.Effect<number> =>
    Effect.map(
      removeRows([...new Set(typeof partition === "string" ? [partition] : partition)].map((one) => ({ table: t, order, partition: one }))),
      (removed) => removed.reduce((sum, n) => sum + n, 0)
    )

  // ---- copies (Store.ts, `Copies`): fos_copy_rows, each row with its entries as arrays and values as JSON, and fos_copies ---

  /**
   * Saves selected rows in one statement, read and written by the database: each row with its index entries as three
   * arrays (`ords`, `parts`, `sorts`: the i-th of each are one entry, aggregated in one pass so they line up) and its
   * unique values (`[name, value]`) as they are stored, so a restore writes them back without working anything out
   * again.
   */
  const saveSelected = (id: string, selections: ReadonlyArray<Store.Selection>): Effect.Effect<ReadonlyArray<number>> =>
    selections.length === 0 ? Effect.succeed([]) : statementOnly<ReadonlyArray<number>, never>(Effect.gen(function*() {
      yield* sendHeld
      const [result] = yield* sql<{ added: unknown }>`WITH ${sql.csv([
        ...selectedParts(selections),
        sql`added AS (INSERT INTO fos_copy_rows (copy, tbl, key, data, ords, parts, sorts, uniques)
          SELECT ${id}, f.tbl, f.key, r.data, coalesce(e.ords, '{}'), coalesce(e.parts, '{}'), coalesce(e.sorts, '{}'),
            (SELECT coalesce(json_agg(json_build_array(u.name, u.value)), '[]') FROM fos_uniques u WHERE u.tbl = f.tbl AND u.key = f.key)
          FROM firsts f JOIN fos_rows r ON r.tbl = f.tbl AND r.key = f.key
          CROSS JOIN LATERAL (SELECT array_agg(o.ord) AS ords, array_agg(o.part) AS parts, array_agg(o.sort) AS sorts
            FROM fos_orders o WHERE o.tbl = f.tbl AND o.key = f.key) AS e
          ON CONFLICT DO NOTHING RETURNING tbl, key)`,
        copyMade(id, sql`(SELECT count(*) FROM added)`)
      ])}
        SELECT json_agg(json_build_array(c.i, c.n)) AS added
        FROM (SELECT f.i, count(*) AS n FROM added a JOIN firsts f ON f.tbl = a.tbl AND f.key = a.key GROUP BY f.i) AS c`
      return perSelection(selections, result!.added)
    }))

  /** The CTE that records a copy (its schema version) or adds to its count of rows. */
  const copyMade = (id: string, rows: Statement.Fragment) =>
    sql`made AS (INSERT INTO fos_copies (copy, version, rows) VALUES (${id}, ${latestVersion}, ${rows})
      ON CONFLICT (copy) DO UPDATE SET rows = fos_copies.rows + EXCLUDED.rows)`

  /**
   * Writes rows into a copy with the entries and values their table gives them now, a batch per statement: rows
   * given by value, and the rows of a copy whose entries are made again (`reindexCopy`).
   */
  const copyRowsOf = (id: string, t: Store.Table<any>, rows: ReadonlyArray<unknown>): Effect.Effect<number, SqlError.SqlError> =>
    Effect.map(
      Effect.forEach(chunks(rows, copyBatch), (batch) => {
        const values = batch.map((row) => {
          const entries = entriesOf(t, row)
          const uniques = JSON.stringify(uniquesOf(t, row))
          return sql`(${id}, ${t.name}, ${t.key(row)}, ${JSON.stringify(row)}::json, ${arrayLiteral(entries.map((e) => e.ord))}::text[],
            ${arrayLiteral(entries.map((e) => e.part))}::text[], ${arrayLiteral(entries.map((e) => e.sort))}::text[], ${uniques}::json)`
        })
        return Effect.map(
          sql<{ n: string | number }>`WITH ${sql.csv([
            sql`added AS (INSERT INTO fos_copy_rows (copy, tbl, key, data, ords, parts, sorts, uniques) VALUES ${sql.csv(values)}
              ON CONFLICT DO NOTHING RETURNING 1)`,
            copyMade(id, sql`(SELECT count(*) FROM added)`)
          ])} SELECT count(*) AS n FROM added`,
          ([r]) => Number(r!.n)
        )
      }),
      (added) => added.reduce((sum, n) => sum + n, 0)
    )

  /**
   * Makes a copy's index entries and unique values again from its rows, with the tables as this version declares
   * them: a copy saved before a migration that indexed stored rows anew has the entries of its own time.
   */
  const reindexCopy = (tables: ReadonlyArray<Store.Table<any>>, id: string): Effect.Effect<void, Store.UnknownTable> =>
    Effect.gen(function*() {
      const byName = new Map(tables.map((t) => [t.name, t]))
      const saved = yield* sql<{ tbl: string; data: unknown }>`SELECT tbl, data FROM fos_copy_rows WHERE copy = ${id} ORDER BY tbl, key`
      const unknown = saved.find((r) => !byName.has(r.tbl))
      if (unknown !== undefined) return yield* Effect.fail(new Store.UnknownTable({ table: unknown.tbl }))
      yield* sql`WITH made AS (DELETE FROM fos_copies WHERE copy = ${id}) DELETE FROM fos_copy_rows WHERE copy = ${id}`
      const byTable = new Map<string, Array<unknown>>()
      for (const r of saved) byTable.set(r.tbl, [...(byTable.get(r.tbl) ?? []), parse(r.data)])
      for (const [name, rows] of byTable) yield* copyRowsOf(id, byName.get(name)!, rows)
    }).pipe(Effect.catchTag("SqlError", dieOf))

  /**
   * The memory a restore's transaction lets each of its sorts and materialized sets use (PostgreSQL's `work_mem`,
   * for this transaction only). The rows a restore writes back, with their entries, are held as sets the statement
   * reads several times; at the server's default (4 MB) those of a sandbox of 9,000 rows (10 MB) went to temporary
   * files, written and read back by every restore.
   */
  const restoreWorkMem = "64MB"

  /**
   * A restore writes back only what changed since the copy was saved, in two statements: the replaced rows that
   * the copy does not hold as they are go (`removeSelected` keeping the copy's), then the copy's rows that are not
   * in the store as they are go in, with their values and entries, and the counts of their counted orders'
   * partitions (`tables` says which are counted) go up. A restore after a test that changed a few rows writes a few
   * rows. The second statement inserts without ON CONFLICT: a key or value another row holds fails it with a unique
   * violation, in a savepoint of its own, which a look then names (`refusal`) as the restore's savepoint rolls it all
   * back. An ON CONFLICT clause checks each row's keys before its insert: after a reset, for 9,000 rows and 27,000
   * entries, that was a fifth of the restore's own work. A copy of an older schema version has its entries made
   * again first.
   */
  const restoreCopy = (id: string, options: { readonly tables: ReadonlyArray<Store.Table<any>>; readonly replacing: ReadonlyArray<Store.Selection> }): Effect.Effect<number, Store.UniqueViolation | Store.UnknownTable> => {
    const counted = countedOrders(options.tables)
    const written = sql<{ rows: string | number | null }>`WITH ${sql.csv([
      // A copy of this schema version holding rows of the given tables only; else nothing is written, and the copy
      // is indexed anew (which names a table it does not know).
      sql`current AS MATERIALIZED (SELECT rows FROM fos_copies WHERE copy = ${id} AND version = ${latestVersion}
        AND NOT EXISTS (SELECT 1 FROM fos_copy_rows WHERE copy = ${id} AND tbl NOT IN ${sql.in(options.tables.map((t) => t.name))}))`,
      sql`missing AS MATERIALIZED (SELECT c.tbl, c.key, c.data, c.ords, c.parts, c.sorts, c.uniques FROM fos_copy_rows c
        LEFT JOIN fos_rows r ON r.tbl = c.tbl AND r.key = c.key
        WHERE c.copy = ${id} AND EXISTS (SELECT 1 FROM current) AND (r.key IS NULL OR r.data::text <> c.data::text))`,
      sql`put AS (INSERT INTO fos_rows (tbl, key, data) SELECT tbl, key, data FROM missing)`,
      sql`taken AS (INSERT INTO fos_uniques (tbl, name, value, key) SELECT m.tbl, v ->> 0, v ->> 1, m.key
        FROM missing m CROSS JOIN json_array_elements(m.uniques) AS v)`,
      // The entries as three arrays side by side: unnest() pairs their i-th members.
      sql`entries AS MATERIALIZED (SELECT m.tbl, e.ord, e.part, e.sort, m.key
        FROM missing m CROSS JOIN unnest(m.ords, m.parts, m.sorts) AS e (ord, part, sort))`,
      sql`indexed AS (INSERT INTO fos_orders (tbl, ord, part, sort, key) SELECT tbl, ord, part, sort, key FROM entries)`,
      ...(counted.length === 0 ? [] : [sql`counted AS (INSERT INTO fos_count_shards (tbl, ord, part, shard, n)
        SELECT tbl, ord, part, pg_backend_pid() % ${countShards}, count(*) FROM entries
        WHERE (tbl, ord) IN (VALUES ${sql.csv(counted)}) GROUP BY tbl, ord, part ORDER BY tbl, ord, part
        ON CONFLICT (tbl, ord, part, shard) DO UPDATE SET n = fos_count_shards.n + EXCLUDED.n)`])
    ])}
      SELECT (SELECT rows FROM current) AS rows`
    /** The statement in a savepoint of its own: a key or value taken is a `Shortfall`, with the removals still made. */
    const putBack = atomically<{ rows: string | number | null }, Shortfall>(Effect.flatMap(
      Effect.catchTag(written, "SqlError", (e) => Effect.fail(isUniqueViolation(e) ? new Shortfall() : e)),
      ([r]) => Effect.succeed(r!)
    ))
    /** What holds a key or value of the copy that the restore could not take. */
    const refusal = Effect.gen(function*() {
      const [row] = yield* sql<{ tbl: string; key: string }>`SELECT c.tbl, c.key FROM fos_copy_rows c JOIN fos_rows r ON r.tbl = c.tbl AND r.key = c.key
        WHERE c.copy = ${id} AND r.data::text <> c.data::text ORDER BY c.tbl, c.key LIMIT 1`
      if (row !== undefined) return new Store.UniqueViolation({ table: row.tbl, unique: "primary", key: row.key })
      const [value] = yield* sql<{ tbl: string; name: string; key: string }>`SELECT c.tbl, v ->> 0 AS name, c.key
        FROM fos_copy_rows c CROSS JOIN json_array_elements(c.uniques) AS v
        JOIN fos_uniques u ON u.tbl = c.tbl AND u.name = v ->> 0 AND u.value = v ->> 1
        WHERE c.copy = ${id} AND u.key <> c.key ORDER BY c.tbl, c.key LIMIT 1`
      return new Store.UniqueViolation({ table: value?.tbl ?? "", unique: value?.name ?? "primary", key: value?.key ?? "" })
    })
    const write = Effect.gen(function*() {
      yield* sql`SELECT set_config('work_mem', ${restoreWorkMem}, true)`
      yield* removeSelected(options.replacing, id)
      let r = yield* putBack
      if (r.rows === null) {
        const [made] = yield* sql<{ n: string | number }>`SELECT count(*) AS n FROM fos_copies WHERE copy = ${id}`
        if (Number(made!.n) === 0) return 0
        yield* reindexCopy(options.tables, id)
        r = yield* putBack
      }
      return Number(r.rows)
    }).pipe(Effect.catchTag("Shortfall", () => Effect.flatMap(refusal, Effect.fail)))
    return Effect.andThen(sendHeld, Effect.tap(atomically<number, Store.UniqueViolation | Store.UnknownTable>(write), () => forgetAll))
  }

  /**
   * What `restoreCopy` would refuse, found as it finds it, in two reads and no write: the first row of the copy (in
   * table and key order) whose key another row than a replaced one holds with other data, or one of whose unique
   * values such a row holds. A copy of an older schema version has its entries made again first, as a restore would.
   */
  const copyConflict = (id: string, options: { readonly tables: ReadonlyArray<Store.Table<any>>; readonly replacing: ReadonlyArray<Store.Selection> }): Effect.Effect<Store.UniqueViolation | undefined, Store.UnknownTable> =>
    Effect.gen(function*() {
      // Its statements read only, but a `WITH` is sent after BEGIN, as every statement that is not a plain SELECT.
      yield* begun
      yield* sendHeld
      const [copy] = yield* sql<{ version: number | string; unknown: string | null }>`SELECT version,
          (SELECT tbl FROM fos_copy_rows WHERE copy = ${id} AND tbl NOT IN ${sql.in(options.tables.map((t) => t.name))} ORDER BY tbl LIMIT 1) AS unknown
        FROM fos_copies WHERE copy = ${id}`
      if (copy === undefined) return undefined
      if (copy.unknown !== null) return yield* Effect.fail(new Store.UnknownTable({ table: copy.unknown }))
      if (Number(copy.version) !== latestVersion) yield* reindexCopy(options.tables, id)
      const replaced = options.replacing.length === 0 ? [sql`firsts AS (SELECT NULL::text AS tbl, NULL::text AS key WHERE false)`] : selectedParts(options.replacing)
      const [found] = yield* sql<{ tbl: string; key: string; name: string }>`WITH ${sql.csv([
        ...replaced,
        sql`held AS (SELECT c.tbl, c.key, 'primary' AS name FROM fos_copy_rows c JOIN fos_rows r ON r.tbl = c.tbl AND r.key = c.key
          WHERE c.copy = ${id} AND r.data::text <> c.data::text AND NOT EXISTS (SELECT 1 FROM firsts f WHERE f.tbl = c.tbl AND f.key = c.key))`,
        sql`valued AS (SELECT c.tbl, c.key, v ->> 0 AS name FROM fos_copy_rows c CROSS JOIN json_array_elements(c.uniques) AS v
          JOIN fos_uniques u ON u.tbl = c.tbl AND u.name = v ->> 0 AND u.value = v ->> 1
          WHERE c.copy = ${id} AND u.key <> c.key AND NOT EXISTS (SELECT 1 FROM firsts f WHERE f.tbl = u.tbl AND f.key = u.key))`
      ])}
        SELECT tbl, key, name FROM (SELECT tbl, key, name FROM held UNION ALL SELECT tbl, key, name FROM valued) AS x
        ORDER BY tbl, key, name <> 'primary', name LIMIT 1`
      return found === undefined ? undefined : new Store.UniqueViolation({ table: found.tbl, unique: found.name, key: found.key })
    }).pipe(Effect.catchTag("SqlError", dieOf))

  const copies: Store.Copies = {
    save: saveSelected,
    conflict: copyConflict,
    saveRows: (id, t, rows) =>
      rows.length === 0 ? Effect.succeed(0) : ownTransaction<number, never>(Effect.andThen(sendHeld, copyRowsOf(id, t, rows))),
    restore: restoreCopy,
    rows: (id) =>
      dieOnSql(Effect.map(
        sql<{ tbl: string; data: unknown }>`SELECT tbl, data FROM fos_copy_rows WHERE copy = ${id} ORDER BY tbl, key`,
        (rows) => rows.map((r) => ({ table: r.tbl, row: parse(r.data) }))
      )),
    remove: (id) =>
      statementOnly<number, never>(Effect.map(
        sql<{ n: string | number }>`WITH made AS (DELETE FROM fos_copies WHERE copy = ${id}),
            gone AS (DELETE FROM fos_copy_rows WHERE copy = ${id} RETURNING 1)
          SELECT count(*) AS n FROM gone`,
        ([r]) => Number(r!.n)
      ))
  }

  const page = <Row>(t: Store.Table<Row>, q: Store.PageQuery): Effect.Effect<ReadonlyArray<Row>> => {
    const ascending = q.descending === q.backward
    const from = q.from === undefined ? undefined : { sort: encodeSort(q.from.sort), key: q.from.key }
    const partition = sql`o.tbl = ${t.name} AND o.ord = ${q.order} AND o.part = ${q.partition}`
    const where = from === undefined
      ? partition
      : ascending
      ? sql`${partition} AND (o.sort, o.key) > (${from.sort}, ${from.key})`
      : sql`${partition} AND (o.sort, o.key) < (${from.sort}, ${from.key})`
    // Each entry's row is a subquery by its key (`rowByKey`), not a join: planned while the tables were small (a
    // new database, never analyzed, its plans kept by the connection), the join read every row of the table for
    // each entry of the page: 9,550 rows read for a page of 100 during a 3-day advance.
    const query = ascending
      ? sql<{ data: unknown }>`SELECT ${rowByKey("o")} AS data FROM fos_orders o WHERE ${where} ORDER BY o.sort ASC, o.key ASC LIMIT ${q.limit}`
      : sql<{ data: unknown }>`SELECT ${rowByKey("o")} AS data FROM fos_orders o WHERE ${where} ORDER BY o.sort DESC, o.key DESC LIMIT ${q.limit}`
    return Effect.flatMap(CurrentTransaction, (current) => {
      // Only a store transaction remembers pages: a read outside one (a list request) builds no key.
      const id = current === undefined
        ? undefined
        : JSON.stringify([q.order, q.partition, q.descending, q.backward, from?.sort ?? null, from?.key ?? null, q.limit])
      const cached = id === undefined ? undefined : current?.pages.get(t.name)?.get(id)
      if (cached !== undefined) return Effect.succeed(cached.slice() as ReadonlyArray<Row>)
      return Effect.andThen(sendHeldOf(t), dieOnSql(Effect.map(query, (rows) => {
        const out: Array<Row> = rowsOf(rows)
        if (q.backward) out.reverse()
        if (current !== undefined && id !== undefined) {
          // A copy is kept, so a caller that reorders its page cannot change what the next read finds.
          const pages = current.pages.get(t.name) ?? new Map<string, ReadonlyArray<unknown>>()
          current.pages.set(t.name, pages.set(id, out.slice()))
        }
        return out
      })))
    })
  }

  /**
   * Runs `effect` as a store transaction: the rows it holds are remembered, and its held writes are sent before
   * the commit (a failure rolls back and drops them). A transaction PostgreSQL aborts to break a deadlock (or a
   * serialization failure) is run again from the start, up to `deadlockRetries` times: the other transaction of the
   * cycle went on, so the second run finds the rows free or waits for them in turn. Two payouts of one wallet ending
   * at the same instant lock their own transaction and the wallet's signing seat in opposite orders; retrying the
   * victim is what PostgreSQL's documentation advises, and it keeps every such path whole without a global order.
   */
  const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(inTransaction, (inside) => {
      if (inside) return effect
      // The `afterCommit` effects of the run that committed: each run collects its own.
      let after: Array<Effect.Effect<void>> = []
      const run = (left: number, lazy: boolean): Effect.Effect<A, E, R> =>
        Effect.suspend(() => {
          after = []
          return Effect.catchCause(runTransaction(effect, lazy, after), (cause) => {
            // A lazy transaction that found what it read for update changed runs again, beginning at once.
            if (conflicted(cause)) return Effect.andThen(retried("conflict"), run(left, false))
            return left > 0 && abortedByDatabase(cause) ? Effect.andThen(retried("aborted"), run(left - 1, lazy)) : Effect.failCause(cause)
          })
        })
      return Effect.tap(Telemetry.transactionSpan(Metrics.timedTransaction(clock, run(deadlockRetries, true))), () => Store.runAfterCommit(after))
    })

  const afterCommit = (effect: Effect.Effect<void>): Effect.Effect<void> =>
    Effect.flatMap(CurrentTransaction, (state) => {
      if (state === undefined) return Store.runAfterCommit([effect])
      state.after.push(effect)
      return Effect.void
    })

  /**
   * One run of a store transaction on a connection of its own. `lazy`: BEGIN waits for the first write that must reach
   * the database at once (`begin`); until then its statements are reads, and one that never needs it commits with
   * its held writes in one statement (`finish`): a transaction that reads a row for update and writes it back
   * (an Idempotency-Key's completion, a timer firing) costs two statements instead of four. Otherwise BEGIN goes first.
   * The connection refuses any statement but a read until BEGIN (`readsOnly`). It commits, or rolls back on a failure,
   * a defect or an interruption.
   */
  const runTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>, lazy: boolean, after: Array<Effect.Effect<void>>): Effect.Effect<A, E, R> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.scoped(Effect.gen(function*() {
        const connection = yield* Effect.catch(restore(sql.reserve), dieOf)
        const state: TransactionState = {
          rows: new Map(),
          held: new Map(),
          heldTables: new Set<string>(),
          sequences: [],
          blockTaken: false,
          refills: 0,
          seen: new Map(),
          pages: new Map(),
          begun: false,
          expected: new Map(),
          connection,
          savepoints: 0,
          conflict: false,
          after
        }
        const guarded = guardBeforeBegin(connection, state)
        if (!lazy) yield* begin(state)
        const exit = yield* Effect.exit(restore(Effect.tap(effect, () => finish)).pipe(
          Effect.provideService(CurrentTransaction, state),
          Effect.provideService(sql.transactionService, [guarded, 0] as const)
        ))
        if (state.begun) {
          if (Exit.isSuccess(exit) && !state.conflict) {
            const committed = yield* dieOnSql(connection.executeRaw("COMMIT", []))
            if ((committed as { command?: string }).command === "ROLLBACK") return yield* Effect.die(new Error("COMMIT rolled back an aborted transaction"))
          } else {
            yield* dieOnSql(connection.executeRaw("ROLLBACK", []))
          }
        }
        // A conflict its body caught (as a defect of some write) still runs it again.
        if (state.conflict) return yield* Effect.die(new OptimisticConflict())
        return yield* exit
      }))
    )

  /** The connection as a transaction's statements see it: until BEGIN, it refuses all but reads (`readsOnly`). */
  const guardBeforeBegin = (connection: SqlConnection.Connection, state: TransactionState): SqlConnection.Connection => {
    const refuse = (text: string) => new Error(`a store transaction sent a write before it began: ${text.slice(0, 80)}`)
    const check = <X>(text: string, run: () => X, refused: (e: Error) => X): X => (state.begun || readsOnly(text) ? run() : refused(refuse(text)))
    return {
      execute: (text, params, transform) => check(text, () => connection.execute(text, params, transform), Effect.die),
      executeRaw: (text, params) => check(text, () => connection.executeRaw(text, params), Effect.die),
      executeStream: (text, params, transform) => check(text, () => connection.executeStream(text, params, transform), Stream.die),
      executeValues: (text, params) => check(text, () => connection.executeValues(text, params), Effect.die),
      executeValuesUnprepared: (text, params) => check(text, () => connection.executeValuesUnprepared(text, params), Effect.die),
      executeUnprepared: (text, params, transform) => check(text, () => connection.executeUnprepared(text, params, transform), Effect.die)
    }
  }

  const store: Store.StoreService = {
    transaction,
    afterCommit,
    get: (t, key) => readRow(t.name, key, false),
    getForUpdate: (t, key, options) =>
      options?.lockNow === true ? Effect.andThen(begun, readRow(t.name, key, true)) : readRow(t.name, key, true, options?.assumed),
    getLinked,
    getManyForUpdate,
    findUnique: (t, unique, value) =>
      Effect.andThen(sendHeldOf(t), dieOnSql(
        sql<{ data: unknown }>`SELECT ${rowByKey("u")} AS data FROM fos_uniques u
          WHERE u.tbl = ${t.name} AND u.name = ${unique} AND u.value = ${value}`.pipe(
          Effect.map((rows) => rowsOf(rows)[0])
        )
      )),
    insert,
    insertMany,
    insertRows,
    insertFresh,
    insertIfAbsent,
    update,
    updateMany,
    remove,
    removePartition,
    removeRows,
    copies,
    page,
    nextSequence,
    nextNumber,
    takeNumbers,
    raiseSequence,
    // Through the pool, as any statement: a database that is down or silent fails it as it fails a request's.
    ready: Effect.asVoid(dieOnSql(sql`SELECT 1`)),
    count: (t, order, partition) =>
      Effect.andThen(sendHeldOf(t), dieOnSql(
        (t.orders[order]?.counted === false
          ? sql<{ n: string | number }>`SELECT count(*) AS n FROM fos_orders WHERE tbl = ${t.name} AND ord = ${order} AND part = ${partition}`
          : sql<{ n: string | number }>`SELECT
              (SELECT coalesce(sum(n), 0) FROM fos_count_shards WHERE tbl = ${t.name} AND ord = ${order} AND part = ${partition}) +
              (SELECT coalesce(sum(n), 0) FROM fos_counts WHERE tbl = ${t.name} AND ord = ${order} AND part = ${partition}) AS n`).pipe(
          Effect.map((rows) => (rows.length === 0 ? 0 : Number(rows[0]!.n)))
        )
      ))
  }
  return store
})

export type Position = Store.Position
