/**
 * The memory store: the store port in one process's memory, for tests and embedding.
 *
 * Transactions are serialised by one lock (so `getForUpdate` needs no extra lock) and keep an undo log that is
 * replayed backwards when the transaction does not succeed. Orders are sorted indexes per partition
 * (SortedIndex.ts), so a keyset page is O(log n + limit) and a write O(log n) plus one small chunk.
 *
 * Given an `Image`, the store is durable: it starts from the rows the image holds, and a transaction commits only
 * once the image has taken what it changed (the PGlite store, adapters/sql ImageStore.ts).
 */
import { Clock, Context, Effect, Exit, Fiber, Layer, Semaphore } from "effect"
import * as Metrics from "./Metrics.ts"
import { SortedIndex } from "./SortedIndex.ts"
import * as Store from "./Store.ts"
import * as Telemetry from "./Telemetry.ts"

/**
 * Where a durable memory store keeps its rows. Its rows, copies and sequence are read once, when the store is made;
 * `commit` makes one transaction's changes durable, and the transaction commits only if it succeeds (a failure
 * rolls the transaction back, as any failure inside it would).
 */
export interface Image {
  /** The committed rows by table name, each table's by key: a table's rows are indexed when the table is first used. */
  readonly rows: ReadonlyMap<string, ReadonlyMap<string, unknown>>
  /** The committed copies by id. */
  readonly copies: ReadonlyMap<string, ReadonlyArray<CopiedRow>>
  /** The last number the sequence handed out (0 for none). */
  readonly sequence: number
  /** Makes `changes` durable; `now` reads the store as the transaction leaves it, any row or copy, changed or not. */
  readonly commit: (changes: Changes, now: Now) => Effect.Effect<void>
  /**
   * Lets the rest of the process run for a moment (absent: never): after each commit, and every
   * `Store.pauseEveryRows` rows of a bulk write (a restore, a reset, an import). For an image whose work runs on the
   * process's own thread (PGlite's WebAssembly), so that a long run of it does not keep every other request waiting
   * (docs/storage.md, "Long work and other requests"). Without it the store runs as the memory store does.
   */
  readonly pause?: Effect.Effect<void>
}

/** The store's rows and copies as they are, for an image's `commit`. */
export interface Now {
  readonly row: (table: string, key: string) => unknown
  /** A copy's rows; undefined for a copy that does not exist. */
  readonly copy: (id: string) => ReadonlyArray<CopiedRow> | undefined
}

/** A row of a copy: its table's name, its key, and the row as saved. */
export interface CopiedRow {
  readonly table: string
  readonly key: string
  readonly row: unknown
}

/** What one transaction changed, as its image must make durable. */
export interface Changes {
  /**
   * Every row the transaction changed, as committed now: `row` undefined for a row removed. `fromCopy` names the copy
   * (one the image held before this transaction) that holds the row as it is now, put back by a restore.
   */
  readonly rows: ReadonlyArray<{ readonly table: string; readonly key: string; readonly row: unknown; readonly fromCopy?: string }>
  /**
   * Each copy the transaction touched: `replaced` when what the image holds of it goes first (the copy was removed,
   * and perhaps made again), then the rows it gained, and `size`, what it holds now (0: it is gone). A row `stored`
   * is its table's row as committed now (a snapshot's rows, unless the transaction changed them after saving them).
   */
  readonly copies: ReadonlyArray<{
    readonly id: string
    readonly replaced: boolean
    readonly added: ReadonlyArray<CopiedRow & { readonly stored: boolean }>
    readonly size: number
  }>
  /** The last number the sequence handed out. */
  readonly sequence: number
}

class TableState {
  readonly rows = new Map<string, unknown>()
  readonly uniques = new Map<string, Map<string, string>>()
  readonly orders = new Map<string, Map<string, SortedIndex>>()
}

let instances = 0

/** Each memory store's count of the partitions its orders hold an index for (`partitionsHeld`). */
const heldPartitions = new WeakMap<Store.StoreService, () => number>()

/**
 * How many partitions the orders of memory store `store` hold an index for, over every table: a diagnostic of what
 * the store keeps beside its rows. A partition whose last row goes is dropped, so this is the number of partitions
 * that hold a row (the tests check it after resets, restores and deleted forks).
 */
export const partitionsHeld = (store: Store.StoreService): number => {
  const held = heldPartitions.get(store)
  if (held === undefined) throw new Error("partitionsHeld: not a memory store")
  return held()
}

/** A memory store, durable over `image` when given; `clock` times its transactions (kernel/Metrics.ts) when given. */
export const make = (image?: Image, clock?: Clock.Clock): Store.StoreService => {
  const tables = new Map<string, TableState>()
  const lock = Semaphore.makeUnsafe(1)
  let sequence = image?.sequence ?? 0
  /** The image's rows of the tables not used yet. */
  const unread = new Map(image?.rows)
  /** The transaction of this store the current fiber runs in: its undo log. One key per store instance. */
  const CurrentTx = Context.Reference<Array<() => void> | undefined>(`fos/MemoryStore/CurrentTx/${instances++}`, {
    defaultValue: () => undefined
  })
  /**
   * What the open transaction has written and not yet committed: the rows, each with its committed value (undefined
   * when the transaction created it), and the tables they are in.
   */
  const committedRows = new Map<string, unknown>()
  const touchedTables = new Set<string>()
  /** The partitions of orders (`partitionId`) the open transaction moved an entry into or out of. */
  const touchedPartitions = new Set<string>()
  const partitionId = (table: string, order: string, partition: string) => `${table}\u0000${order}\u0000${partition}`
  /** What the open transaction asked to run once it has committed (`afterCommit`); one transaction is open at a time. */
  const afterCommits: Array<Effect.Effect<void>> = []
  const rowId = (t: Store.Table<any> | string, key: string) => `${typeof t === "string" ? t : t.name}\u0000${key}`
  const pause = image?.pause

  /**
   * `f` over `items` in order, stopping at the first answer that is not undefined, which it answers. With an image
   * that pauses, it pauses after every `Store.pauseEveryRows` items; the transaction holds the store's lock
   * throughout, so what a pause lets run reads committed rows or waits, as it would for any running transaction.
   */
  const inSteps = <A, B>(items: ReadonlyArray<A>, f: (item: A) => B | undefined): Effect.Effect<B | undefined> => {
    if (pause === undefined) {
      return Effect.sync(() => {
        for (const item of items) {
          const answer = f(item)
          if (answer !== undefined) return answer
        }
        return undefined
      })
    }
    const from = (start: number): Effect.Effect<B | undefined> =>
      Effect.suspend(() => {
        const end = Math.min(items.length, start + Store.pauseEveryRows)
        for (let i = start; i < end; i++) {
          const answer = f(items[i]!)
          if (answer !== undefined) return Effect.succeed(answer)
        }
        return end === items.length ? Effect.succeed(undefined) : Effect.andThen(pause!, from(end))
      })
    return from(0)
  }

  /**
   * A read outside any transaction sees committed data only: `get` reads a row the open transaction has written as
   * it was committed, and so does a page or a count of a partition that transaction has not moved an entry into or
   * out of (its rows' entries are as committed; a row it changed in place is read as committed); a page or a count
   * of a partition it has moved entries of, or a lookup of a unique value in a table it has written, waits for it to
   * end. Everything else is read at once, so a long transaction (one organization's restore) does not stall
   * unrelated reads (another organization's lists). Reads inside a transaction see its own writes.
   */
  const read = <A>(dirty: () => boolean, f: () => A): Effect.Effect<A> =>
    Effect.withFiber((fiber) =>
      fiber.getRef(CurrentTx) !== undefined || !dirty() ? Effect.succeed(f()) : lock.withPermits(1)(Effect.sync(f))
    )

  const state = (t: Store.Table<any>): TableState => {
    let s = tables.get(t.name)
    if (s === undefined) {
      s = new TableState()
      for (const name of Object.keys(t.unique)) s.uniques.set(name, new Map())
      for (const name of Object.keys(t.orders)) s.orders.set(name, new Map())
      tables.set(t.name, s)
      const saved = unread.get(t.name)
      if (saved !== undefined) {
        unread.delete(t.name)
        for (const [key, row] of saved) {
          s.rows.set(key, row)
          reindex(t, s, undefined, row, key)
        }
      }
    }
    return s
  }

  /**
   * Moves a row's unique values and order entries from `before` to `after` (either undefined for none). An order
   * entry whose partition and sort did not change stays where it is, so an update costs only the orders it moves
   * (a delivery's status change moves four of its eight).
   */
  const reindex = (t: Store.Table<any>, s: TableState, before: unknown, after: unknown, key: string, inTransaction = false) => {
    for (const [name, u] of Object.entries(t.unique)) {
      const uniques = s.uniques.get(name)!
      if (before !== undefined) {
        const v = u(before)
        if (v !== undefined && uniques.get(v) === key) uniques.delete(v)
      }
      if (after !== undefined) {
        const v = u(after)
        if (v !== undefined) uniques.set(v, key)
      }
    }
    for (const [name, o] of Object.entries(t.orders)) {
      const byPartition = s.orders.get(name)!
      const oldPartition = before === undefined ? undefined : o.partition(before)
      const oldSort = oldPartition === undefined ? undefined : o.sort(before)
      const newPartition = after === undefined ? undefined : o.partition(after)
      const newSort = newPartition === undefined ? undefined : o.sort(after)
      if (oldPartition === newPartition && oldSort === newSort) continue
      if (inTransaction) {
        if (oldPartition !== undefined) touchedPartitions.add(partitionId(t.name, name, oldPartition))
        if (newPartition !== undefined) touchedPartitions.add(partitionId(t.name, name, newPartition))
      }
      if (oldPartition !== undefined) {
        const index = byPartition.get(oldPartition)
        // A partition left empty goes: partitions come and go with resources (a delivery's attempts, a fork's
        // scope), and an empty index kept for each would grow the store by every partition it ever held.
        if (index !== undefined && index.remove({ sort: oldSort!, key }) && index.size === 0) byPartition.delete(oldPartition)
      }
      if (newPartition !== undefined) {
        let index = byPartition.get(newPartition)
        if (index === undefined) byPartition.set(newPartition, (index = new SortedIndex()))
        index.insert({ sort: newSort!, key })
      }
    }
  }

  /** Writes `row` (or removes the row at `key` when `row` is undefined), recording the undo step. */
  const write = (t: Store.Table<any>, key: string, row: unknown | undefined, undo: Array<() => void> | undefined) => {
    const s = state(t)
    const before = s.rows.get(key)
    reindex(t, s, before, row, key, undo !== undefined)
    if (row === undefined) s.rows.delete(key)
    else s.rows.set(key, row)
    if (undo !== undefined) {
      undo.push(() => write(t, key, before, undefined))
      const id = rowId(t, key)
      if (!committedRows.has(id)) committedRows.set(id, before)
      touchedTables.add(t.name)
    }
  }

  const uniqueTaken = (t: Store.Table<any>, row: unknown, key: string): string | undefined => {
    const s = state(t)
    for (const [name, u] of Object.entries(t.unique)) {
      const v = u(row)
      if (v === undefined) continue
      const holder = s.uniques.get(name)!.get(v)
      if (holder !== undefined && holder !== key) return name
    }
    return undefined
  }

  /** Runs a single write as its own transaction when the caller is not in one. */
  const writeOp = <A, E>(f: (undo: Array<() => void>) => Effect.Effect<A, E>): Effect.Effect<A, E> =>
    Effect.flatMap(CurrentTx, (undo) => (undo !== undefined ? f(undo) : transaction(Effect.flatMap(CurrentTx, (u) => f(u!)))))

  const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(CurrentTx, (current) => {
      if (current !== undefined) return effect
      const outermost = Effect.suspend(() => {
        // Taken from the store's list while the lock is held, and run once it is released.
        let committed: ReadonlyArray<Effect.Effect<void>> = []
        return Telemetry.transactionSpan(lock.withPermits(1)(
          Effect.suspend(() => {
            const undo: Array<() => void> = []
            return effect.pipe(
              Effect.provideService(CurrentTx, undo),
              image === undefined ? (self) => self : Effect.tap(() => commitToImage(image)),
              Effect.onExit((exit) =>
                Effect.sync(() => {
                  if (Exit.isFailure(exit)) for (let i = undo.length - 1; i >= 0; i--) undo[i]!()
                  committedRows.clear()
                  touchedTables.clear()
                  touchedPartitions.clear()
                  copyChanges.clear()
                  restoredFrom.clear()
                  const after = afterCommits.splice(0)
                  if (Exit.isSuccess(exit)) committed = after
                })
              )
            )
          })
        )).pipe(Effect.tap(() => Store.runAfterCommit(committed)))
      })
      return clock === undefined ? outermost : Metrics.timedTransaction(clock, outermost)
    })

  const afterCommit = (effect: Effect.Effect<void>): Effect.Effect<void> =>
    Effect.flatMap(CurrentTx, (current) => {
      if (current === undefined) return Store.runAfterCommit([effect])
      afterCommits.push(effect)
      return Effect.void
    })

  const now: Now = {
    row: (table, key) => {
      const s = tables.get(table)
      return s !== undefined ? s.rows.get(key) : unread.get(table)?.get(key)
    },
    copy: (id) => {
      const copy = copies.get(id)
      return copy === undefined ? undefined : [...copy.values()]
    }
  }

  /** The sequence's last number the image holds. */
  let durableSequence = sequence

  /** Hands the image what the open transaction changed, if anything. */
  const commitToImage = (image: Image): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (committedRows.size === 0 && copyChanges.size === 0 && sequence === durableSequence) return Effect.void
      const rows: Array<Changes["rows"][number]> = []
      for (const [id, before] of committedRows) {
        const cut = id.indexOf("\u0000")
        const table = id.slice(0, cut)
        const key = id.slice(cut + 1)
        const row = tables.get(table)!.rows.get(key)
        if (row === before) continue
        const from = restoredFrom.get(id)
        const fromCopy = from !== undefined && !copyChanges.has(from) && copies.get(from)?.get(id)?.row === row ? from : undefined
        rows.push(fromCopy === undefined ? { table, key, row } : { table, key, row, fromCopy })
      }
      const copied = [...copyChanges].map(([id, change]) => ({
        id,
        replaced: change.replaced,
        added: change.added.map((entry) => ({ ...entry, stored: tables.get(entry.table)?.rows.get(entry.key) === entry.row })),
        size: copies.get(id)?.size ?? 0
      }))
      const handed = sequence
      const committed = Effect.map(image.commit({ rows, copies: copied, sequence: handed }, now), () => {
        durableSequence = handed
      })
      // Before the lock is released: what the pause lets run meanwhile waits for this transaction or reads what it
      // committed, as after the release, and the next transaction's work begins after the pause.
      return pause === undefined ? committed : Effect.andThen(committed, pause)
    })

  // The commonest call (every request authenticates with two of these), so one step that never waits: outside the
  // transaction, a row it has written is read as committed. No row id is built unless a transaction has written.
  /** `get`'s row, read at once: what `get` and `getLinked` answer. */
  const rowNow = <Row>(t: Store.Table<Row>, key: string): Row | undefined => {
    const current = state(t).rows.get(key) as Row | undefined
    if (committedRows.size === 0) return current
    const id = rowId(t, key)
    if (!committedRows.has(id) || Fiber.getCurrent()?.getRef(CurrentTx) !== undefined) return current
    return committedRows.get(id) as Row | undefined
  }
  const get = <Row>(t: Store.Table<Row>, key: string): Effect.Effect<Row | undefined> => Effect.sync(() => rowNow(t, key))
  /** `getLinked`'s rows, read at once. */
  const linkedNow = <Row>(t: Store.Table<Row>, key: string, links: ReadonlyArray<Store.Link>) => {
    const row = rowNow(t, key)
    const linked = links.map((link) => {
      const named = row === undefined ? undefined : (row as Record<string, unknown>)[link.member]
      return typeof named === "string" ? rowNow(link.table, named + (link.suffix ?? "")) : undefined
    })
    return { row, linked }
  }
  const tableDirty = (t: Store.Table<any>) => () => touchedTables.has(t.name)

  const partitionDirty = (t: Store.Table<any>, order: string, partition: string) => () =>
    touchedPartitions.size > 0 && touchedPartitions.has(partitionId(t.name, order, partition))

  const page = <Row>(t: Store.Table<Row>, q: Store.PageQuery) =>
    read(partitionDirty(t, q.order, q.partition), (): ReadonlyArray<Row> => {
      const s = state(t)
      const index = s.orders.get(q.order)?.get(q.partition)
      if (index === undefined) return []
      // Walking "towards the end" of the order means ascending positions for an ascending order.
      const ascending = q.descending === q.backward
      const rows = index.take(q.from, ascending, q.limit).map((p) => rowNow(t, p.key) as Row)
      return q.backward ? rows.reverse() : rows
    })

  /** The keys of one partition's rows, in the order's order. */
  const keysIn = (p: Store.Partition): Array<string> => {
    const index = state(p.table).orders.get(p.order)?.get(p.partition)
    return index === undefined ? [] : index.take(undefined, true, index.size).map((position) => position.key)
  }

  /** The keys of a selection's rows (Store.ts, `Selection`). */
  const selected = (selection: Store.Selection): Array<string> => {
    const rows = state(selection.table).rows
    const keys = "sameKeys" in selection
      ? keysIn(selection.sameKeys).filter((key) => rows.has(key))
      : "parents" in selection
      ? keysIn(selection.parents).flatMap((key) => keysIn({ table: selection.table, order: selection.order, partition: selection.prefix + key }))
      : keysIn(selection)
    const except = selection.except
    if (except === undefined) return keys
    return keys.filter((key) => (rows.get(key) as Record<string, unknown> | undefined)?.[except.field] !== except.equals)
  }

  /**
   * Each selection's rows, a row found by an earlier selection left out of the later ones: every selection is
   * resolved before the caller changes anything.
   */
  const selectAll = (selections: ReadonlyArray<Store.Selection>): Array<Array<string>> => {
    const found = new Set<string>()
    return selections.map((selection) =>
      selected(selection).filter((key) => {
        const id = rowId(selection.table, key)
        if (found.has(id)) return false
        found.add(id)
        return true
      })
    )
  }

  /** The copies (Store.ts, `Copies`): by id, each saved row by table and key. Written with undo steps, as rows are. */
  const copies = new Map<string, Map<string, CopiedRow>>()
  for (const [id, rows] of image?.copies ?? []) copies.set(id, new Map(rows.map((entry) => [rowId(entry.table, entry.key), entry])))
  const copiesDirty = () => touchedTables.has("\u0000copies")
  /** The rows the open transaction's restores put back, each with its copy, for the image. */
  const restoredFrom = new Map<string, string>()
  /** What the open transaction did to each copy it touched, for the image. */
  const copyChanges = new Map<string, { replaced: boolean; added: Array<CopiedRow> }>()
  const changeOf = (id: string) => {
    let change = copyChanges.get(id)
    if (change === undefined) copyChanges.set(id, (change = { replaced: false, added: [] }))
    return change
  }

  /** Adds rows to a copy; answers how many were not in it yet. */
  const saveInto = (id: string, t: Store.Table<any>, rows: ReadonlyArray<readonly [key: string, row: unknown]>, undo: Array<() => void>): Effect.Effect<number> => {
    let copy = copies.get(id)
    if (copy === undefined) {
      const made = (copy = new Map())
      copies.set(id, made)
      undo.push(() => {
        if (copies.get(id) === made) copies.delete(id)
      })
    }
    touchedTables.add("\u0000copies")
    let added = 0
    const change = image === undefined ? undefined : changeOf(id)
    const into = copy
    return Effect.map(inSteps(rows, ([key, row]) => {
      const entry = rowId(t, key)
      if (into.has(entry)) return
      const copied = { table: t.name, key, row }
      into.set(entry, copied)
      change?.added.push(copied)
      undo.push(() => into.delete(entry))
      added++
    }), () => added)
  }

  /** A copy's rows in table and key order (code point order, as the SQL stores' "C" collation sorts). */
  const byTableAndKey = (a: CopiedRow, b: CopiedRow) =>
    a.table < b.table ? -1 : a.table > b.table ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0

  const copiesOf: Store.Copies = {
    save: (id, selections) =>
      writeOp((undo) =>
        Effect.suspend(() =>
          Effect.forEach(selectAll(selections), (keys, i) => {
            const t = selections[i]!.table
            return saveInto(id, t, keys.map((key) => [key, state(t).rows.get(key)] as const), undo)
          })
        )
      ),
    saveRows: (id, t, rows) => writeOp((undo) => Effect.suspend(() => saveInto(id, t, rows.map((row) => [t.key(row), row] as const), undo))),
    // A row the copy holds as it is (the same object: rows are never changed in place) stays where it is; a refusal
    // takes back what the restore had done.
    restore: (id, { tables, replacing }) =>
      writeOp<number, Store.UniqueViolation | Store.UnknownTable>((undo) => {
        const byName = new Map(tables.map((t) => [t.name, t]))
        const saved = [...(copies.get(id)?.values() ?? [])]
        const unknown = saved.find((entry) => !byName.has(entry.table))
        if (unknown !== undefined) return Effect.fail(new Store.UnknownTable({ table: unknown.table }))
        const copy = copies.get(id)
        const mark = undo.length
        const replaced = selectAll(replacing).flatMap((keys, i) => keys.map((key) => [replacing[i]!.table, key] as const))
        const removed = inSteps(replaced, ([t, key]) => {
          if (copy?.get(rowId(t, key))?.row !== state(t).rows.get(key)) write(t, key, undefined, undo)
        })
        const putBack = inSteps(saved, (entry) => {
          const t = byName.get(entry.table)!
          const current = state(t).rows.get(entry.key)
          if (current === entry.row) return
          const taken = current !== undefined ? "primary" : uniqueTaken(t, entry.row, entry.key)
          if (taken !== undefined) {
            for (let i = undo.length - 1; i >= mark; i--) undo[i]!()
            undo.length = mark
            return new Store.UniqueViolation({ table: t.name, unique: taken, key: entry.key })
          }
          write(t, entry.key, entry.row, undo)
          if (image !== undefined) restoredFrom.set(rowId(t, entry.key), id)
        })
        return Effect.flatMap(Effect.andThen(removed, putBack), (refused) => refused === undefined ? Effect.succeed(saved.length) : Effect.fail(refused))
      }),
    // What `restore` would refuse, found as it finds it: a row outside `replacing` holding a key or a unique value of
    // a row the copy does not hold as it is.
    // Inside a transaction (an import's), which holds the lock, the entries are checked in steps (`inSteps`), so a
    // store that pauses pauses between them; outside one, in one step, since a pause would let a transaction begin.
    conflict: (id, { tables, replacing }) =>
      Effect.withFiber((fiber) => {
        const byName = new Map(tables.map((t) => [t.name, t]))
        const check = (replaced: ReadonlySet<string>) => (entry: CopiedRow): Store.UniqueViolation | undefined => {
          const t = byName.get(entry.table)!
          const s = state(t)
          const current = s.rows.get(entry.key)
          if (current === entry.row) return undefined
          if (current !== undefined && !replaced.has(rowId(t, entry.key))) return new Store.UniqueViolation({ table: t.name, unique: "primary", key: entry.key })
          for (const name of Object.keys(t.unique).sort()) {
            const value = t.unique[name]!(entry.row)
            const holder = value === undefined ? undefined : s.uniques.get(name)!.get(value)
            if (holder !== undefined && holder !== entry.key && !replaced.has(rowId(t, holder))) {
              return new Store.UniqueViolation({ table: t.name, unique: name, key: entry.key })
            }
          }
          return undefined
        }
        const prepared = (): { readonly saved: ReadonlyArray<CopiedRow>; readonly replaced: ReadonlySet<string> } | Store.UnknownTable => {
          const saved = [...(copies.get(id)?.values() ?? [])].sort(byTableAndKey)
          const unknown = saved.find((entry) => !byName.has(entry.table))
          if (unknown !== undefined) return new Store.UnknownTable({ table: unknown.table })
          const replaced = new Set<string>()
          selectAll(replacing).forEach((keys, i) => {
            for (const key of keys) replaced.add(rowId(replacing[i]!.table, key))
          })
          return { saved, replaced }
        }
        const found: Effect.Effect<Store.UniqueViolation | Store.UnknownTable | undefined> = fiber.getRef(CurrentTx) !== undefined && pause !== undefined
          ? Effect.flatMap(Effect.sync(prepared), (ready): Effect.Effect<Store.UniqueViolation | Store.UnknownTable | undefined> =>
            "_tag" in ready ? Effect.succeed(ready) : Effect.andThen(pause, inSteps(ready.saved, check(ready.replaced))))
          : read(() => copiesDirty() || touchedTables.size > 0, () => {
            const ready = prepared()
            if ("_tag" in ready) return ready
            const checked = check(ready.replaced)
            for (const entry of ready.saved) {
              const violation = checked(entry)
              if (violation !== undefined) return violation
            }
            return undefined
          })
        return Effect.flatMap(found, (answer) => (answer?._tag === "UnknownTable" ? Effect.fail(answer) : Effect.succeed(answer)))
      }),
    rows: (id) =>
      read(copiesDirty, () =>
        [...(copies.get(id)?.values() ?? [])]
          .sort(byTableAndKey)
          .map(({ table, row }) => ({ table, row }))),
    remove: (id) =>
      writeOp((undo) =>
        Effect.sync(() => {
          const copy = copies.get(id)
          if (copy === undefined) return 0
          copies.delete(id)
          touchedTables.add("\u0000copies")
          // What the transaction added to it goes with it (a failure drops every change anyway).
          if (image !== undefined) copyChanges.set(id, { replaced: true, added: [] })
          undo.push(() => copies.set(id, copy))
          return copy.size
        })
      )
  }

  const store: Store.StoreService = {
    transaction,
    afterCommit,
    get,
    getForUpdate: get,
    // Every authenticated request reads its key and organization (and its sandbox's clock) here: one step of the
    // fiber for all of them, where a get per row and a loop over the links took several (docs/performance.md).
    getLinked: <Row>(t: Store.Table<Row>, key: string, links: ReadonlyArray<Store.Link>) => Effect.sync(() => linkedNow(t, key, links)),
    getNow: rowNow,
    getLinkedNow: linkedNow,
    getManyForUpdate: <Row>(t: Store.Table<Row>, keys: ReadonlyArray<string>) =>
      Effect.map(Effect.forEach([...new Set(keys)].sort(), (key) => get(t, key)), (rows) => rows.filter((r): r is Row => r !== undefined)),
    findUnique: <Row>(t: Store.Table<Row>, unique: string, value: string) =>
      read(tableDirty(t), () => {
        const s = state(t)
        const key = s.uniques.get(unique)?.get(value)
        return key === undefined ? undefined : (s.rows.get(key) as Row | undefined)
      }),
    insert: <Row>(t: Store.Table<Row>, row: Row) => store.insertMany(t, [row]),
    insertMany: <Row>(t: Store.Table<Row>, rows: ReadonlyArray<Row>) => store.insertRows([{ table: t, rows }]),
    // Every row is checked, against its table and the rows of that table before it, before any is written: all or none.
    insertRows: (groups) =>
      writeOp((undo) => {
        const seen = new Map<string, Set<string>>()
        for (const { table: t, rows } of groups) {
          let ofTable = seen.get(t.name)
          if (ofTable === undefined) seen.set(t.name, (ofTable = new Set()))
          for (const row of rows) {
            const key = t.key(row)
            if (state(t).rows.has(key) || ofTable.has(key)) return Effect.fail(new Store.UniqueViolation({ table: t.name, unique: "primary", key }))
            ofTable.add(key)
            const taken = uniqueTaken(t, row, key)
            if (taken !== undefined) return Effect.fail(new Store.UniqueViolation({ table: t.name, unique: taken, key }))
            for (const [name, u] of Object.entries(t.unique)) {
              const value = u(row)
              if (value === undefined) continue
              if (ofTable.has(`${name}\u0000${value}`)) return Effect.fail(new Store.UniqueViolation({ table: t.name, unique: name, key }))
              ofTable.add(`${name}\u0000${value}`)
            }
          }
        }
        return Effect.asVoid(inSteps(groups.flatMap(({ table: t, rows }) => rows.map((row) => [t, row] as const)), ([t, row]) => write(t, t.key(row), row, undo)))
      }),
    insertFresh: (t, row) => Effect.orDie(store.insert(t, row)),
    // A key taken by a committed row is answered from the committed rows, without waiting for a running transaction
    // (an Idempotency-Key's duplicate is answered while the first request runs); a free one is taken under the lock.
    insertIfAbsent: <Row>(t: Store.Table<Row>, row: Row) =>
      Effect.flatMap(get(t, t.key(row)), (holder) => holder !== undefined ? Effect.succeed(holder) : writeOp((undo) => {
        if (Object.keys(t.unique).length > 0) return Effect.die(new Error(`insertIfAbsent: ${t.name} declares unique keys`))
        const key = t.key(row)
        const holder = state(t).rows.get(key) as Row | undefined
        if (holder === undefined) write(t, key, row, undo)
        return Effect.succeed(holder)
      })),
    update: <Row>(t: Store.Table<Row>, row: Row) =>
      writeOp((undo) => {
        const key = t.key(row)
        const taken = uniqueTaken(t, row, key)
        if (taken !== undefined) return Effect.fail(new Store.UniqueViolation({ table: t.name, unique: taken, key }))
        write(t, key, row, undo)
        return Effect.void
      }),
    updateMany: <Row>(t: Store.Table<Row>, rows: ReadonlyArray<Row>) =>
      writeOp((undo) =>
        Effect.sync(() => {
          if (Object.keys(t.unique).length > 0) throw new Error(`updateMany: ${t.name} declares unique keys`)
          for (const row of rows) write(t, t.key(row), row, undo)
        })
      ),
    remove: <Row>(t: Store.Table<Row>, key: string) =>
      writeOp((undo) => Effect.sync(() => write(t, key, undefined, undo))),
    removePartition: <Row>(t: Store.Table<Row>, order: string, partition: string | ReadonlyArray<string>) =>
      Effect.map(
        store.removeRows([...new Set(typeof partition === "string" ? [partition] : partition)].map((one) => ({ table: t, order, partition: one }))),
        (removed) => removed.reduce((sum, n) => sum + n, 0)
      ),
    // The keys first, every selection's: each removal changes the indexes being read.
    removeRows: (selections) =>
      writeOp((undo) =>
        Effect.suspend(() => {
          const found = selectAll(selections)
          const removals = found.flatMap((keys, i) => keys.map((key) => [selections[i]!.table, key] as const))
          return Effect.as(inSteps(removals, ([t, key]) => write(t, key, undefined, undo)), found.map((keys) => keys.length))
        })
      ),
    copies: copiesOf,
    page,
    nextSequence: Effect.sync(() => ++sequence),
    nextNumber: Effect.sync(() => ++sequence),
    takeNumbers: (count) => Effect.sync(() => Array.from({ length: count }, () => ++sequence)),
    // Nothing to reach: the rows are in this process.
    ready: Effect.void,
    raiseSequence: (atLeast) =>
      Effect.sync(() => {
        if (sequence < atLeast) sequence = atLeast
      }),
    ...(pause === undefined ? {} : { pause }),
    count: <Row>(t: Store.Table<Row>, order: string, partition: string) =>
      read(partitionDirty(t, order, partition), () => state(t).orders.get(order)?.get(partition)?.size ?? 0)
  }
  heldPartitions.set(store, () => {
    let n = 0
    for (const s of tables.values()) for (const byPartition of s.orders.values()) n += byPartition.size
    return n
  })
  return store
}

/** The memory store as a layer; each build is a fresh, empty store. */
export const layer: Layer.Layer<Store.Store> = Layer.effect(Store.Store, Effect.map(Clock.Clock, (clock) => make(undefined, clock)))
