import { describe, expect, it } from "vitest"
import * as fc from "fast-check"
import { comparePositions, SortedIndex } from "../src/kernel/SortedIndex.ts"
import type * as Store from "../src/kernel/Store.ts"

const position = fc.record({ sort: fc.integer({ min: 0, max: 50 }), key: fc.string({ unit: fc.constantFrom(..."abcdef"), minLength: 1, maxLength: 3 }) })

describe("SortedIndex", () => {
  it("agrees with a sorted array through inserts, removals and pages in both directions (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), position), { minLength: 1, maxLength: 3000 }),
        fc.array(fc.tuple(fc.option(position, { nil: undefined }), fc.boolean(), fc.integer({ min: 0, max: 700 })), { maxLength: 12 }),
        (ops, pages) => {
          const index = new SortedIndex()
          let reference: Array<Store.Position> = []
          for (const [add, p] of ops) {
            const at = reference.findIndex((r) => comparePositions(r, p) === 0)
            if (add && at < 0) {
              index.insert(p)
              reference.push(p)
              reference.sort(comparePositions)
            } else if (!add) {
              expect(index.remove(p)).toBe(at >= 0)
              if (at >= 0) reference = reference.filter((_, i) => i !== at)
            }
          }
          expect(index.size).toBe(reference.length)
          for (const [from, ascending, limit] of pages) {
            const expected = ascending
              ? reference.filter((r) => from === undefined || comparePositions(r, from) > 0).slice(0, limit)
              : [...reference].reverse().filter((r) => from === undefined || comparePositions(r, from) < 0).slice(0, limit)
            expect(index.take(from, ascending, limit)).toEqual(expected)
          }
        }
      ),
      { numRuns: 60 }
    )
  })

  it("keeps order across many chunks, and empties cleanly", () => {
    const index = new SortedIndex()
    const n = 5000
    for (let i = n - 1; i >= 0; i--) index.insert({ sort: i % 97, key: String(i).padStart(5, "0") })
    const all = index.take(undefined, true, n)
    expect(all).toHaveLength(n)
    for (let i = 1; i < n; i++) expect(comparePositions(all[i - 1]!, all[i]!)).toBeLessThan(0)
    for (const p of all) expect(index.remove(p)).toBe(true)
    expect(index.size).toBe(0)
    expect(index.take(undefined, false, 10)).toEqual([])
  })
})
