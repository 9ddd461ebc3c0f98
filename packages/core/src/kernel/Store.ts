/**
 * The store port: declared tables of immutable rows, with the operations SQL implements directly.
 *
 * - `transaction` runs an effect atomically: every write in it commits, or none does (a failure, defect or
 *   interruption rolls back). A transaction inside a transaction joins the outer one. `afterCommit` runs work once
 *   the transaction has committed, never after a rollback.
 * - `get` / `getForUpdate`: a row by primary key; the second also locks it until the transaction ends.
 *   `getLinked` reads a row with the rows of other tables it names (an API key's organization), at once.
 *   `getManyForUpdate` locks several in key order at once (a ledger batch's accounts).
 * - `insert` / `insertMany` / `update` / `remove`: writes; a unique key taken by another row fails with
 *   `UniqueViolation`.
 *   `insertFresh` inserts a row under a key nothing else can hold (a freshly made id) and answers nothing, so a
 *   store may send it with a later statement of the transaction.
 *   `updateMany` updates several rows of a table without unique keys, all or none.
 *   `insertIfAbsent` inserts a row unless its key is taken, and otherwise answers the row that holds it (a claim).
 * - `findUnique`: a row by one of its table's unique keys.
 * - `removePartition`: every row of one partition of an order, or of several, at once; `removeRows`: the rows of
 *   several selections of several tables at once (a sandbox reset); `insertRows`: rows of several tables at once,
 *   all or none (a sandbox written whole: a fork).
 * - `copies`: sets of rows saved apart with their index, and put back in bulk (a sandbox snapshot and its restore).
 * - `page` / `count`: keyset scans over a declared order within one partition, so a page costs the same at
 *   row 10 as at row 1,000,000.
 * - `nextSequence`: a store-wide increasing number (the outbox's order); `nextNumber`, one of the same sequence that
 *   orders nothing (a housekeeping timer's id); `takeNumbers`, many at once (a fork's rows numbered anew);
 *   `raiseSequence` moves the sequence past rows another store numbered.
 *
 * A table maps to a SQL table with the key as primary key, a unique index per unique key and a
 * (partition, sort, key) index per order. Rows are plain JSON-able data and are never mutated in place.
 */
import { Context, Data, Effect } from "effect"
import type { SharedState } from "./SharedState.ts"

/** A sort value of a declared order. */
export type SortValue = string | number

/** A declared table: how to key its rows, its unique keys and its keyset orders. */
export interface Table<Row> {
  readonly name: string
  readonly key: (row: Row) => string
  /** Unique keys; a row whose value is `undefined` does not take part in that key. */
  readonly unique: Readonly<Record<string, (row: Row) => string | undefined>>
  /** Keyset orders: rows are grouped by partition and sorted by (sort, key). */
  readonly orders: Readonly<Record<string, Order<Row>>>
}

/** One keyset order of a table. */
export interface Order<Row> {
  /**
   * The partition a row is listed in; `undefined` leaves the row out of this order (and its count), as `undefined`
   * leaves a row out of a unique key. A write that changes a row's partition, or moves it in or out, moves its entry.
   */
  readonly partition: (row: Row) => string | undefined
  readonly sort: (row: Row) => SortValue
  /**
   * Whether the store keeps this order's row count per partition (default true), which makes `count` cost the
   * same at any size. Keeping it touches one row per partition on every write, so an order whose total is never
   * read, and whose partition every writer shares (the timers), turns it off.
   */
  readonly counted?: boolean
}

export const table = <Row>(def: {
  readonly name: string
  readonly key: (row: Row) => string
  readonly unique?: Readonly<Record<string, (row: Row) => string | undefined>>
  readonly orders?: Readonly<Record<string, Order<Row>>>
}): Table<Row> => ({ unique: {}, orders: {}, ...def })

/**
 * A row of another table that a row names: the one whose key is the row's top-level string member `member`, followed
 * by `suffix` (an API key's organization: `{ table: Organizations, member: "organizationId" }`).
 */
export interface Link {
  readonly table: Table<any>
  readonly member: string
  readonly suffix?: string
}

/** One partition of one order of a table. */
export interface Partition {
  readonly table: Table<any>
  readonly order: string
  readonly partition: string
}

/**
 * Some rows of a table, named by where the table's orders put them, so a store can remove or copy them all at once,
 * whatever their number, without reading them first (a reset, a snapshot):
 * - a `Partition`: its every row;
 * - `{ order, prefix, parents }`: the rows of `order`'s partitions `prefix + k`, one for each key `k` of the rows of
 *   the parents' partition (a sandbox's wallets: `byCustomer`'s partitions `<scope>/<customer id>`, one per customer
 *   of the scope);
 * - `{ sameKeys }`: the rows whose keys are the keys of the rows of the parents' partition (a document's bytes).
 *
 * `except` leaves out the rows whose top-level member `field` is the string `equals` (a running request's claim).
 */
export type Selection = (
  | Partition
  | { readonly table: Table<any>; readonly order: string; readonly prefix: string; readonly parents: Partition }
  | { readonly table: Table<any>; readonly sameKeys: Partition }
) & { readonly except?: { readonly field: string; readonly equals: string } | undefined }

/**
 * Copies: rows saved apart under an id, each with its index entries and unique values, and written back in bulk
 * (sandbox snapshots, Snapshots.ts). A copy's rows are in no table until put back. A copy is stored data like a
 * table's rows: durable on a durable store, written and rolled back with its transaction.
 */
export interface Copies {
  /**
   * Saves the rows of each selection into copy `id` (made at its first row); answers how many rows each selection
   * added. A row already in the copy, or found by an earlier selection, is not added again.
   */
  readonly save: (id: string, selections: ReadonlyArray<Selection>) => Effect.Effect<ReadonlyArray<number>>
  /** Saves rows given by value, as `table` would store them, into copy `id`; answers how many were added. */
  readonly saveRows: <Row>(id: string, table: Table<Row>, rows: ReadonlyArray<Row>) => Effect.Effect<number>
  /**
   * Puts copy `id` back in place of the rows of `replacing`: afterwards those rows are gone and every row of the copy
   * is in its table, indexed as `tables` (the tables its rows may be of) index it. Answers how many rows the copy
   * holds. A store may leave a row the copy holds as it is where it is (a restore then costs what changed since the
   * copy). A row whose key or unique value another row holds fails with `UniqueViolation`, a row of a table not in
   * `tables` with `UnknownTable`, and either changes nothing.
   */
  readonly restore: (
    id: string,
    options: { readonly tables: ReadonlyArray<Table<any>>; readonly replacing: ReadonlyArray<Selection> }
  ) => Effect.Effect<number, UniqueViolation | UnknownTable>
  /**
   * The first row of copy `id`, in table and key order, that `restore` in place of the same `replacing` would be
   * refused for now: its key, or one of its unique values, held by another row than one of `replacing` (a row the copy
   * holds as it is does not count, as `restore` leaves it where it is); undefined when `restore` would take every row.
   * A row of a table not in `tables` fails with `UnknownTable`. It changes nothing: an imported snapshot is checked
   * with it before it is kept (Snapshots.ts).
   */
  readonly conflict: (
    id: string,
    options: { readonly tables: ReadonlyArray<Table<any>>; readonly replacing: ReadonlyArray<Selection> }
  ) => Effect.Effect<UniqueViolation | undefined, UnknownTable>
  /** Every row of copy `id` with its table's name, in table and key order (a snapshot carried to another store). */
  readonly rows: (id: string) => Effect.Effect<ReadonlyArray<{ readonly table: string; readonly row: unknown }>>
  /** Removes copy `id`; answers how many rows it held. */
  readonly remove: (id: string) => Effect.Effect<number>
}

/** A position in a keyset order. */
export interface Position {
  readonly sort: SortValue
  readonly key: string
}

/** One keyset page request: rows strictly after (or before) `from`, in `order` direction. */
export interface PageQuery {
  readonly order: string
  readonly partition: string
  readonly descending: boolean
  /** Walk towards the start of the order instead of its end, from `from`. */
  readonly backward: boolean
  readonly from: Position | undefined
  readonly limit: number
}

/**
 * The store cannot be reached (its database is down, or the network to it is): a defect a store adapter dies with,
 * so that whatever was being done rolls back and the HTTP pipeline answers 503 SERVICE_UNAVAILABLE with Retry-After
 * instead of a 500. The store reconnects by itself; nothing of the request was committed.
 */
export class StoreUnavailable extends Data.TaggedError("StoreUnavailable")<{ readonly message: string }> {}

/**
 * How long, in milliseconds of real time, a store that talks to its database over a network waits for an answer
 * before it takes the database as unreachable (`StoreUnavailable`): 10 seconds unless the engine is given another
 * (`createEngine`'s `storeTimeout`). The PostgreSQL store reads it when it is built, unless its layer is given its
 * own; the memory and PGlite stores have no network and ignore it.
 */
export class StoreTimeout extends Context.Reference<number>("fos/StoreTimeout", { defaultValue: () => 10_000 }) {}

/** Whether a request's defect is the store being unreachable, found anywhere in its cause. */
export const isStoreUnavailable = (defect: unknown): defect is StoreUnavailable =>
  (defect as { _tag?: unknown } | null)?._tag === "StoreUnavailable"

export class UniqueViolation extends Data.TaggedError("UniqueViolation")<{
  readonly table: string
  /** "primary" for the row's key, else the name of the unique key. */
  readonly unique: string
  /** The key of the row refused. */
  readonly key: string
}> {}

/** A copy holds rows of a table the caller did not name (one a later version of fos no longer keeps). */
export class UnknownTable extends Data.TaggedError("UnknownTable")<{ readonly table: string }> {}

export interface StoreService {
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /**
   * Runs `effect` once the current store transaction has committed, in the caller's fiber and after the caller's
   * transaction returns; at once outside a transaction. It never runs for a transaction that rolls back, and runs
   * once however many times the store ran the transaction's body (a SQL store runs it again after a deadlock). For
   * what a process keeps beside the store that must follow only what committed: a deleted organization's seeded
   * stream (Forks.ts), which forgotten before its deletion commits would, if the deletion rolled back, mint the
   * organization's ids again. A defect of `effect` is logged, not the caller's: the transaction has committed.
   */
  readonly afterCommit: (effect: Effect.Effect<void>) => Effect.Effect<void>
  readonly get: <Row>(table: Table<Row>, key: string) => Effect.Effect<Row | undefined>
  /**
   * A store may defer the lock to the commit (a SQL transaction that has not begun), checking then that the row is
   * unchanged and running the transaction again from its start if not: what commits is as if the lock was taken here,
   * but the work before the commit may run twice. `lockNow` takes the lock here, for a caller whose work must run
   * once (a timer's firing). `assumed`: the row as this caller last wrote it (a claim it made): a store may answer
   * it without reading, if it checks it as it checks a deferred lock.
   */
  readonly getForUpdate: <Row>(
    table: Table<Row>,
    key: string,
    options?: { readonly assumed?: Row; readonly lockNow?: boolean }
  ) => Effect.Effect<Row | undefined>
  /**
   * A row by key, and the rows it names through `links`, read together (one statement on SQL, which a request's
   * authentication pays once instead of once per row): `linked[i]` is the row of `links[i]`, undefined when there is
   * none or the row is absent. Each is as `get` would find it.
   */
  readonly getLinked: <Row>(
    table: Table<Row>,
    key: string,
    links: ReadonlyArray<Link>
  ) => Effect.Effect<{ readonly row: Row | undefined; readonly linked: ReadonlyArray<unknown> }>
  /**
   * `get` and `getLinked` answered at once, by a store that can answer without waiting (the memory store's maps);
   * absent on one that cannot (SQL). Called while an effect runs, each finds what the effect form would find there
   * (a transaction's own writes in it): so a caller that runs on every request reads in the step it is in, rather
   * than in two more of the fiber (docs/performance.md).
   */
  readonly getNow?: <Row>(table: Table<Row>, key: string) => Row | undefined
  readonly getLinkedNow?: <Row>(
    table: Table<Row>,
    key: string,
    links: ReadonlyArray<Link>
  ) => { readonly row: Row | undefined; readonly linked: ReadonlyArray<unknown> }
  /**
   * The rows of `keys` that exist, locked in key order (so two callers locking overlapping sets cannot deadlock),
   * returned in key order.
   */
  readonly getManyForUpdate: <Row>(table: Table<Row>, keys: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Row>>
  readonly findUnique: <Row>(table: Table<Row>, unique: string, value: string) => Effect.Effect<Row | undefined>
  readonly insert: <Row>(table: Table<Row>, row: Row) => Effect.Effect<void, UniqueViolation>
  /**
   * Inserts a row whose key was just made (an event, a timer, a new transaction) and that no caller needs to
   * hear refused. Inside a transaction a store may hold the write and send it with a later statement of the same
   * transaction (at the latest before the commit), so a key that turns out taken is a defect that rolls the
   * transaction back, never a `UniqueViolation`. Reads in the transaction see the row at once.
   */
  /** Inserts several rows, all or none; a refusal names the first row refused (`key`). */
  readonly insertMany: <Row>(table: Table<Row>, rows: ReadonlyArray<Row>) => Effect.Effect<void, UniqueViolation>
  readonly insertFresh: <Row>(table: Table<Row>, row: Row) => Effect.Effect<void>
  /**
   * Inserts `row` unless a row holds its key, and answers `undefined`; otherwise writes nothing and answers the row
   * that holds the key, as committed: a read and a claim in one (an Idempotency-Key's first request, one statement on
   * SQL). A key taken by a row not yet visible (another transaction inserting it at the same moment) fails with
   * `UniqueViolation`. The table must declare no unique keys.
   */
  readonly insertIfAbsent: <Row>(table: Table<Row>, row: Row) => Effect.Effect<Row | undefined, UniqueViolation>
  readonly update: <Row>(table: Table<Row>, row: Row) => Effect.Effect<void, UniqueViolation>
  /** Updates every row, all or none; the table must declare no unique keys (nothing can then refuse a row). */
  readonly updateMany: <Row>(table: Table<Row>, rows: ReadonlyArray<Row>) => Effect.Effect<void>
  readonly remove: <Row>(table: Table<Row>, key: string) => Effect.Effect<void>
  /**
   * Removes every row of one partition of `order`, or of several (a reset removes a page of parents' children at
   * once), with its unique values and its entries in the table's other orders, as one write (atomic outside a
   * transaction, part of it inside one). Answers how many rows went. A partition is matched exactly: removing `o1`
   * leaves `o1x` alone.
   */
  readonly removePartition: <Row>(table: Table<Row>, order: string, partition: string | ReadonlyArray<string>) => Effect.Effect<number>
  /**
   * Removes the rows of every selection at once, as `removePartition` removes a partition's (their unique values,
   * index entries and counts with them), and answers how many rows each selection removed. Every selection is
   * resolved before anything goes, so a selection through parents finds the parents a selection before it removes.
   */
  readonly removeRows: (selections: ReadonlyArray<Selection>) => Effect.Effect<ReadonlyArray<number>>
  /**
   * Inserts the rows of several tables at once, each indexed as its table indexes it (its unique values, its entries
   * and counts), as `insertMany` inserts one table's: all or none. A key or unique value that another row holds, or
   * another of the rows of the same table, fails with `UniqueViolation` naming the first refused row, and writes
   * nothing. A sandbox's rows written whole (a fork, Forks.ts), in as few statements as the store can send them.
   */
  readonly insertRows: (groups: ReadonlyArray<{ readonly table: Table<any>; readonly rows: ReadonlyArray<unknown> }>) => Effect.Effect<void, UniqueViolation>
  readonly copies: Copies
  /** Rows of one page, in the order's direction (even when walking backward). */
  readonly page: <Row>(table: Table<Row>, query: PageQuery) => Effect.Effect<ReadonlyArray<Row>>
  readonly count: <Row>(table: Table<Row>, order: string, partition: string) => Effect.Effect<number>
  /**
   * The next number of one store-wide sequence: unique, never reused, not rolled back with a transaction (so it may
   * have gaps), and increasing within a transaction. A store may hand a transaction a small block of numbers at
   * its first call (one round trip for a transfer and an event), so concurrent transactions' numbers may
   * interleave, as their commits may anyway. It orders the outbox and the ledger's transfers.
   */
  readonly nextSequence: Effect.Effect<number>
  /**
   * A number of the same sequence that orders nothing (a housekeeping timer's id): unique and never reused, but a
   * store may hand it from a block it took earlier, without a round trip, so it may be below numbers already handed
   * out.
   */
  readonly nextNumber: Effect.Effect<number>
  /**
   * `count` numbers of the same sequence at once, in increasing order: each unique and never reused, each above
   * every number the sequence gave before the call and below every number it gives after it (numbers it gives others
   * meanwhile may fall between them, as they may between a transaction's). For rows copied within the store that
   * carry its numbers in their keys (a fork's timers and history, Forks.ts): numbered anew, in their order, they take
   * no key another row holds or will hold, and what is numbered after them sorts after them.
   */
  readonly takeNumbers: (count: number) => Effect.Effect<ReadonlyArray<number>>
  /**
   * Makes every number `nextSequence` and `nextNumber` hand out from now on greater than `atLeast`; a sequence past
   * it already is left as it is. For rows another store numbered (an imported snapshot's events, transfers, history
   * and timers, Snapshots.ts): what this store numbers after them must sort after them, and take no id theirs hold.
   */
  readonly raiseSequence: (atLeast: number) => Effect.Effect<void>
  /**
   * A trivial query, for a readiness probe (Readiness.ts): succeeds once the store has answered it, and dies with
   * `StoreUnavailable` when its database cannot be reached. A store with nothing to reach (memory) is always ready.
   */
  readonly ready: Effect.Effect<void>
  /**
   * What the processes sharing this store keep for the service (SharedState.ts): present on a store several
   * processes may share (PostgreSQL), absent on one that serves one process (memory, PGlite).
   */
  readonly shared?: SharedState | undefined
  /**
   * Lets the rest of the process run for a moment, between the steps of long work that holds the thread (an import's
   * checks): present on a store whose own work runs on the process's thread and pauses (a PGlite server's,
   * MemoryStore.ts `Image.pause`), absent on the others, where the work runs on as it always has (docs/storage.md,
   * "Long work and other requests"). Callers use `pause` below.
   */
  readonly pause?: Effect.Effect<void> | undefined
}

export class Store extends Context.Service<Store, StoreService>()("fos/Store") {}

/** How many rows long work (a bulk write, an import's check) goes through between two of its store's pauses. */
export const pauseEveryRows = 500

/** The store's `pause`, or nothing: between the steps of long work that holds the process's thread. */
export const pause: Effect.Effect<void, never, Store> = Effect.flatMap(Store, (store) => store.pause ?? Effect.void)

/**
 * Runs a committed transaction's `afterCommit` effects, in the order they were given, each on its own: a defect of one
 * is logged and the rest still run (a store's `afterCommit`).
 */
export const runAfterCommit = (effects: ReadonlyArray<Effect.Effect<void>>): Effect.Effect<void> =>
  effects.length === 0 ? Effect.void : Effect.forEach(effects, (effect) =>
    Effect.catchCause(effect, (cause) => Effect.logError("Work after a store transaction's commit failed", cause)), { discard: true })

/** Where a walk goes: one partition of an order, from its start or after a position, a page of rows at a time. */
export interface Walk {
  readonly order: string
  readonly partition: string
  /** The position after which it starts (the last row a caller already has); the partition's start when omitted. */
  readonly after?: Position | undefined
  /** How many rows one read takes; 100 when omitted. */
  readonly pageSize?: number | undefined
}

/**
 * Calls `each` on every row of one partition of an order, in the order's sort, a page at a time, and answers how
 * many there were: the one page walk of the engine (a reset's and a snapshot's tables, the ledger audit, a
 * restriction's open payouts, an advance's events). Keyset paging, so a row `each` moves out of the partition skips
 * nothing.
 */
export const walk = <Row, E = never, R = never>(
  store: StoreService,
  table: Table<Row>,
  where: Walk,
  each: (row: Row) => Effect.Effect<unknown, E, R>
): Effect.Effect<number, E, R> =>
  Effect.gen(function*() {
    const { order, partition } = where
    const pageSize = where.pageSize ?? 100
    const sortOf = table.orders[order]!.sort
    let from: Position | undefined = where.after
    let seen = 0
    while (true) {
      const rows: ReadonlyArray<Row> = yield* store.page(table, { order, partition, descending: false, backward: false, from, limit: pageSize })
      for (const row of rows) yield* each(row)
      seen += rows.length
      if (rows.length < pageSize) return seen
      const last = rows[rows.length - 1]!
      from = { sort: sortOf(last), key: table.key(last) }
    }
  })
