/**
 * An ordered set of positions (sort value, key), for the memory store's keyset orders.
 *
 * A sorted list of sorted chunks of at most `chunkSize` entries: finding a place is two bisections, and an insert
 * or a removal moves at most one chunk's entries, so it stays cheap at a million entries (a plain sorted array
 * moves half the array on every insert in the middle).
 */
import type * as Store from "./Store.ts"

const chunkSize = 512

const compareSort = (a: Store.SortValue, b: Store.SortValue): number =>
  typeof a === "number" && typeof b === "number" ? a - b : String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0

export const comparePositions = (a: Store.Position, b: Store.Position): number =>
  compareSort(a.sort, b.sort) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)

/** Index of the first entry of `entries` not less than `p`. */
const lowerBound = (entries: ReadonlyArray<Store.Position>, p: Store.Position): number => {
  let lo = 0
  let hi = entries.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (comparePositions(entries[mid]!, p) < 0) lo = mid + 1
    else hi = mid
  }
  return lo
}

export class SortedIndex {
  private readonly chunks: Array<Array<Store.Position>> = []
  private count = 0

  get size(): number {
    return this.count
  }

  /** The chunk that holds, or would hold, `p`: the last chunk whose first entry is not greater than `p`. */
  private chunkOf(p: Store.Position): number {
    let lo = 0
    let hi = this.chunks.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1
      if (comparePositions(this.chunks[mid]![0]!, p) <= 0) lo = mid
      else hi = mid - 1
    }
    return lo
  }

  insert(p: Store.Position): void {
    if (this.chunks.length === 0) {
      this.chunks.push([p])
      this.count++
      return
    }
    const c = this.chunkOf(p)
    const chunk = this.chunks[c]!
    chunk.splice(lowerBound(chunk, p), 0, p)
    this.count++
    if (chunk.length > chunkSize) this.chunks.splice(c + 1, 0, chunk.splice(chunkSize >>> 1))
  }

  remove(p: Store.Position): boolean {
    if (this.chunks.length === 0) return false
    const c = this.chunkOf(p)
    const chunk = this.chunks[c]!
    const i = lowerBound(chunk, p)
    if (i >= chunk.length || comparePositions(chunk[i]!, p) !== 0) return false
    chunk.splice(i, 1)
    this.count--
    if (chunk.length === 0) this.chunks.splice(c, 1)
    return true
  }

  /**
   * Entries strictly after `from` in ascending order (all of them without `from`), or strictly before it in
   * descending order, up to `limit`.
   */
  take(from: Store.Position | undefined, ascending: boolean, limit: number): Array<Store.Position> {
    const out: Array<Store.Position> = []
    if (this.chunks.length === 0 || limit <= 0) return out
    if (ascending) {
      let c = from === undefined ? 0 : this.chunkOf(from)
      let i = 0
      if (from !== undefined) {
        i = lowerBound(this.chunks[c]!, from)
        if (i < this.chunks[c]!.length && comparePositions(this.chunks[c]![i]!, from) === 0) i++
      }
      for (; c < this.chunks.length && out.length < limit; c++, i = 0) {
        const chunk = this.chunks[c]!
        for (; i < chunk.length && out.length < limit; i++) out.push(chunk[i]!)
      }
    } else {
      let c = from === undefined ? this.chunks.length - 1 : this.chunkOf(from)
      let i = from === undefined ? this.chunks[c]!.length - 1 : lowerBound(this.chunks[c]!, from) - 1
      for (; c >= 0 && out.length < limit; c--, i = c >= 0 ? this.chunks[c]!.length - 1 : 0) {
        const chunk = this.chunks[c]!
        for (; i >= 0 && out.length < limit; i--) out.push(chunk[i]!)
      }
    }
    return out
  }
}
