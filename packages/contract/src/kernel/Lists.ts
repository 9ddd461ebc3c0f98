/**
 * Lists: the envelope every list answers with (`data`, `meta`) and the paging query every list takes. Cursors are
 * opaque; `sortBy` values are per list.
 */
import { Schema } from "effect"
import "./Annotations.ts"

export const maxPageSize = 100
export const defaultPageSize = 20

export const ListMeta = Schema.Struct({
  mode: Schema.Literals(["cursor", "offset"]),
  nextCursor: Schema.NullOr(Schema.String),
  previousCursor: Schema.NullOr(Schema.String),
  total: Schema.Number
})
export type ListMeta = typeof ListMeta.Type

/** The list envelope of `item`. */
export const listOf = <S extends Schema.Top>(item: S) => Schema.Struct({ data: Schema.Array(item), meta: ListMeta })

/** A list answered whole, on one page (a list with no paging query: faults, event types). */
export const wholeList = <A>(data: ReadonlyArray<A>): { readonly data: ReadonlyArray<A>; readonly meta: ListMeta } => ({
  data,
  meta: { mode: "cursor", nextCursor: null, previousCursor: null, total: data.length }
})

const PageSize = Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: maxPageSize }, {
  fosDetail: `must be an integer from 1 to ${maxPageSize}`
}))

export const Directions = ["forward", "backward"] as const
export const SortOrders = ["asc", "desc"] as const

/** The paging query every list takes, with the list's own `sortBy` values. */
export const listQuery = <const Sorts extends ReadonlyArray<string>>(sorts: Sorts) =>
  Schema.Struct({
    // Any text: a cursor that is not one of ours is INVALID_CURSOR, decided when it is read.
    cursor: Schema.optionalKey(Schema.String),
    limit: Schema.optionalKey(PageSize),
    direction: Schema.optionalKey(Schema.Literals(Directions)),
    sortBy: Schema.optionalKey(Schema.Literals(sorts as unknown as [Sorts[number], ...Array<Sorts[number]>])),
    sortOrder: Schema.optionalKey(Schema.Literals(SortOrders))
  })
