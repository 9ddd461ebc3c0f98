/**
 * Lists: the envelope (`data`, `meta`), and keyset paging with opaque cursors.
 *
 * A cursor names a position (sort value and key), the sort it was issued under (sortBy and sortOrder) and the list
 * it belongs to: a digest of the table, the order and the partition walked. Every filter of a list is part of the
 * partition it walks (each filter combination has an order of its own), as are the organization and environment,
 * so a cursor used on another list, with other filters, in another organization or environment, or under another
 * sort is INVALID_CURSOR. `direction=forward` (the default) reads the rows after the cursor, `direction=backward`
 * the rows before it: `nextCursor` is for forward, `previousCursor` for backward. Pages are keyset scans of exactly
 * the rows listed, so a page costs the same deep in a list as at its start, and the same however many rows a filter
 * leaves out.
 *
 * Keyset orders per filter combination: a list whose filters combine freely walks one order per combination of them
 * (`filterCombinations`), whose partition holds the scope and the given filters' values. The orders' names and
 * partitions are stored (a SQL store's `fos_orders.ord` and `.part`), so the names these helpers give never change.
 */
import { type ListMeta } from "@fos/contract"
import { sha256 } from "@noble/hashes/sha2.js"
import { base64urlnopad, utf8 } from "@scure/base"
import { Effect, Schema } from "effect"
import * as Problem from "./Problem.ts"
import * as Store from "./Store.ts"

export interface ListQuery {
  readonly cursor: string | undefined
  readonly limit: number
  readonly direction: "forward" | "backward"
  readonly sortBy: string
  readonly sortOrder: "asc" | "desc"
}

export interface ListEnvelope<A> {
  readonly data: ReadonlyArray<A>
  readonly meta: ListMeta
}

const CursorPayload = Schema.Struct({
  /** The list: `listBinding` of the table, order and partition. */
  l: Schema.String,
  s: Schema.String,
  o: Schema.Literals(["asc", "desc"]),
  v: Schema.Union([Schema.String, Schema.Number]),
  k: Schema.String
})
const decodeCursorPayload = Schema.decodeUnknownOption(CursorPayload)

/**
 * What binds a cursor to its list: the first 12 bytes of SHA-256 over the table, the order and the partition. The
 * partition holds the organization, the environment and every filter's value (which can be long, and should not be
 * readable in a cursor), so the digest, and not the values, goes into the cursor.
 */
export const listBinding = (table: string, order: string, partition: string): string =>
  base64urlnopad.encode(sha256(utf8.decode(JSON.stringify([table, order, partition]))).subarray(0, 12))

export const encodeCursor = (list: string, sortBy: string, sortOrder: "asc" | "desc", position: Store.Position): string =>
  base64urlnopad.encode(utf8.decode(JSON.stringify({ l: list, s: sortBy, o: sortOrder, v: position.sort, k: position.key })))

/** Longer than any cursor fos issues; such a text is refused before it is decoded. */
const maxCursorLength = 2048

/** The position a cursor names, or INVALID_CURSOR when it is malformed, from another list or from another sort. */
export const decodeCursor = (cursor: string, list: string, sortBy: string, sortOrder: "asc" | "desc"): Effect.Effect<Store.Position, Problem.ApiError> =>
  Effect.suspend(() => {
    if (cursor.length > maxCursorLength) return Effect.fail(Problem.apiError("INVALID_CURSOR", "The cursor is malformed."))
    let parsed: unknown
    try {
      parsed = JSON.parse(utf8.encode(base64urlnopad.decode(cursor)))
    } catch {
      parsed = undefined
    }
    const payload = decodeCursorPayload(parsed)
    // A sort name is a field name; anything else is not a cursor fos issued (and is not echoed in a detail).
    if (payload._tag === "None" || !/^[A-Za-z]{1,40}$/.test(payload.value.s)) return Effect.fail(Problem.apiError("INVALID_CURSOR", "The cursor is malformed."))
    // The sort first: a list whose orders differ by sort binds a cursor to its sort's order too, so under another
    // sort the list check would fail as well and wrongly blame the list or the filters.
    if (payload.value.s !== sortBy || payload.value.o !== sortOrder) {
      return Effect.fail(Problem.apiError(
        "INVALID_CURSOR",
        `The cursor was issued under another sort (sortBy ${payload.value.s}, sortOrder ${payload.value.o}); a cursor holds only under the sort, list and filters it was issued for. Start again without a cursor.`
      ))
    }
    if (payload.value.l !== list) {
      return Effect.fail(Problem.apiError("INVALID_CURSOR", "The cursor belongs to another list or to other filters; start again without a cursor."))
    }
    return Effect.succeed({ sort: payload.value.v, key: payload.value.k })
  })

/**
 * Reads one page of `table` along `order` within `partition`: the partition must hold exactly the rows the list
 * shows, with every filter in it, since nothing is filtered after the page is cut. `sortBy` names the order in
 * cursors; `toWire` renders each row.
 */
export const listPage = <Row, A>(
  table: Store.Table<Row>,
  options: {
    readonly order: string
    readonly partition: string
    readonly query: ListQuery
    readonly toWire: (row: Row) => A
    /**
     * The order whose count of the same partition gives `total`, when `order` keeps none: two orders of one
     * partition under different sorts hold the same rows, so only one of them needs to count them.
     */
    readonly countOrder?: string | undefined
  }
): Effect.Effect<ListEnvelope<A>, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const { query } = options
    const list = listBinding(table.name, options.order, options.partition)
    const from = query.cursor === undefined ? undefined : yield* decodeCursor(query.cursor, list, query.sortBy, query.sortOrder)
    const backward = query.direction === "backward"
    const rows = yield* store.page(table, {
      order: options.order,
      partition: options.partition,
      descending: query.sortOrder === "desc",
      backward,
      from,
      limit: query.limit + 1
    })
    const more = rows.length > query.limit
    const data = backward ? rows.slice(rows.length - Math.min(rows.length, query.limit)) : rows.slice(0, query.limit)
    const sortOf = table.orders[options.order]!.sort
    const cursorAt = (row: Row | undefined, fallback: Store.Position | undefined): string | null => {
      const position = row !== undefined ? { sort: sortOf(row), key: table.key(row) } : fallback
      return position === undefined ? null : encodeCursor(list, query.sortBy, query.sortOrder, position)
    }
    const first = data[0]
    const last = data[data.length - 1]
    const nextCursor = backward ? (from === undefined ? null : cursorAt(last, from)) : more ? cursorAt(last, undefined) : null
    const previousCursor = backward ? (more ? cursorAt(first, undefined) : null) : from === undefined ? null : cursorAt(first, from)
    const total = yield* store.count(table, options.countOrder ?? options.order, options.partition)
    return { data: data.map(options.toWire), meta: { mode: "cursor", nextCursor, previousCursor, total } }
  })

// --- keyset orders per filter combination ------------------------------------------------------------------------------

/**
 * Every combination of `filters` (each subset, its keys in the filters' order), by the name of its keyset order.
 * Subsets come in the order of their bitmask: [], [a], [b], [a, b], [c], ...
 */
export const filterCombinations = <Key extends string>(
  filters: ReadonlyArray<Key>,
  name: (keys: ReadonlyArray<Key>) => string
): Readonly<Record<string, ReadonlyArray<Key>>> =>
  Object.fromEntries(Array.from({ length: 1 << filters.length }, (_, bits) => {
    const keys = filters.filter((_, i) => (bits & (1 << i)) !== 0)
    return [name(keys), keys]
  }))

/** The order of a list sorted by `sortBy` and filtered by `keys`, as stored: `createdAt:status+customerId`. */
export const filterOrderName = (sortBy: string, keys: ReadonlyArray<string>): string => `${sortBy}:${keys.join("+")}`

/** The partition of a list of `scope` filtered by `keys`, as stored: `org/environment|status=pending|customerId=cus_1`. */
export const filterPartition = <Key extends string>(scope: string, keys: ReadonlyArray<Key>, value: (key: Key) => string): string =>
  [scope, ...keys.map((k) => `${k}=${value(k)}`)].join("|")

/** The filters a list was given, in the filters' order (the combination whose order it walks). */
export const givenFilters = <Key extends string>(filters: ReadonlyArray<Key>, filter: { readonly [K in Key]?: string | undefined }): ReadonlyArray<Key> =>
  filters.filter((k) => filter[k] !== undefined)

/**
 * A table's keyset orders for lists sorted by any of `sorts` and filtered by any combination of `filters`, named by
 * `filterOrderName` and partitioned by `filterPartition`. Only the orders of `countedSort` keep their partition's
 * count: the orders of one combination under different sorts hold the same rows, so one of them counts them for all
 * (half the count rows every write touches; they are shared by a whole scope, so writers queue on them).
 */
export const filteredOrders = <Row, Key extends string, Sort extends string>(def: {
  readonly filters: ReadonlyArray<Key>
  readonly sorts: ReadonlyArray<Sort>
  readonly scope: (row: Row) => string
  readonly value: (row: Row, key: Key) => string
  readonly sort: (row: Row, sortBy: Sort) => Store.SortValue
  readonly countedSort: Sort
}): Readonly<Record<string, Store.Order<Row>>> =>
  Object.fromEntries(Object.values(filterCombinations(def.filters, (keys) => keys.join("+"))).flatMap((keys) =>
    def.sorts.map((sortBy) => [filterOrderName(sortBy, keys), {
      partition: (row: Row) => filterPartition(def.scope(row), keys, (k) => def.value(row, k)),
      sort: (row: Row) => def.sort(row, sortBy),
      counted: sortBy === def.countedSort
    }])
  ))

/** What a list of `scope` filtered by `filter` and sorted by `sortBy` walks (`filteredOrders`), for `listPage`. */
export const filteredList = <Key extends string>(
  filters: ReadonlyArray<Key>,
  countedSort: string,
  scope: string,
  filter: { readonly [K in Key]?: string | undefined },
  sortBy: string
): { readonly order: string; readonly partition: string; readonly countOrder: string } => {
  const keys = givenFilters(filters, filter)
  return {
    order: filterOrderName(sortBy, keys),
    partition: filterPartition(scope, keys, (k) => filter[k]!),
    countOrder: filterOrderName(countedSort, keys)
  }
}
