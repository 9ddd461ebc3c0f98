import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import * as MemoryStore from "../src/kernel/MemoryStore.ts"
import * as Store from "../src/kernel/Store.ts"
import { describeStoreContract } from "@fos/core/store-contract/vitest"

describeStoreContract({ name: "memory", fresh: () => MemoryStore.layer })

interface Attempt {
  readonly id: string
  readonly delivery: string
  readonly status: string
}

/** Partitions that come and go with their resources, as a delivery's attempts do. */
const Attempts = Store.table<Attempt>({
  name: "footprint_attempts",
  key: (a) => a.id,
  orders: {
    byDelivery: { partition: (a) => a.delivery, sort: (a) => a.id },
    byStatus: { partition: (a) => a.status, sort: (a) => a.id, counted: false }
  }
})

const attempt = (id: string, delivery: string, status = "pending"): Attempt => ({ id, delivery, status })

describe("the memory store's footprint", () => {
  it.effect("drops a partition with its last row, however the row goes, and brings it back with an undone removal", () =>
    Effect.gen(function*() {
      const store = MemoryStore.make()
      const held = () => MemoryStore.partitionsHeld(store)
      yield* Effect.orDie(store.insertMany(Attempts, [attempt("a1", "d1"), attempt("a2", "d1"), attempt("a3", "d2"), attempt("a4", "d3")]))
      // d1, d2, d3 by delivery; pending by status.
      expect(held()).toBe(4)

      yield* store.remove(Attempts, "a3")
      expect(held()).toBe(3)
      yield* Effect.orDie(store.update(Attempts, attempt("a4", "d1", "failed")))
      expect(held()).toBe(3) // d3 went, failed came
      yield* store.removePartition(Attempts, "byDelivery", "d1")
      expect(held()).toBe(0)

      yield* Effect.orDie(store.insertMany(Attempts, [attempt("b1", "e1"), attempt("b2", "e2")]))
      const rolledBack = yield* Effect.exit(store.transaction(Effect.andThen(store.removePartition(Attempts, "byDelivery", "e1"), Effect.fail("undo"))))
      expect(rolledBack._tag).toBe("Failure")
      expect(held()).toBe(3)
      expect(yield* store.count(Attempts, "byDelivery", "e1")).toBe(1)
      const page = yield* store.page(Attempts, { order: "byStatus", partition: "pending", from: undefined, limit: 10, descending: false, backward: false })
      expect(page.map((a) => a.id)).toEqual(["b1", "b2"])
    }))

  it.effect("holds no partition for a copy's rows once a restore has replaced them with an empty copy's", () =>
    Effect.gen(function*() {
      const store = MemoryStore.make()
      const sandbox: Store.Selection = { table: Attempts, order: "byStatus", partition: "pending" }
      yield* store.copies.save("empty", [sandbox])
      yield* Effect.orDie(store.insertMany(Attempts, [attempt("c1", "f1"), attempt("c2", "f2")]))
      expect(MemoryStore.partitionsHeld(store)).toBe(3)
      yield* Effect.orDie(store.copies.restore("empty", { tables: [Attempts], replacing: [sandbox] }))
      expect(MemoryStore.partitionsHeld(store)).toBe(0)
    }))
})

const pageOf = (store: Store.StoreService, order: "byDelivery" | "byStatus", partition: string) =>
  Effect.map(store.page(Attempts, { order, partition, from: undefined, limit: 100, descending: false, backward: false }), (rows) => rows.map((a) => `${a.id}:${a.status}`))

describe("reads while a transaction runs", () => {
  it.effect("answers a page or a count of a partition the transaction moved no entry of at once, with the rows as committed, and waits for the others", () =>
    Effect.gen(function*() {
      const store = MemoryStore.make()
      yield* Effect.orDie(store.insertMany(Attempts, [attempt("a1", "d1"), attempt("a2", "d2"), attempt("a3", "d2")]))
      const go = yield* Deferred.make<void>()
      const inside = yield* Deferred.make<void>()
      // d1's attempt fails (an entry moves from pending to failed); a2 is written again as it was, in place.
      const running = yield* Effect.forkChild(store.transaction(Effect.gen(function*() {
        yield* Effect.orDie(store.update(Attempts, attempt("a1", "d1", "failed")))
        yield* Effect.orDie(store.update(Attempts, { ...attempt("a2", "d2"), status: "pending" }))
        yield* Deferred.succeed(inside, undefined)
        yield* Deferred.await(go)
      })))
      yield* Deferred.await(inside)
      expect(yield* pageOf(store, "byDelivery", "d2")).toEqual(["a2:pending", "a3:pending"])
      expect(yield* store.count(Attempts, "byDelivery", "d2")).toBe(2)
      const waiting = yield* Effect.forkChild(pageOf(store, "byStatus", "pending"))
      yield* Effect.yieldNow
      expect(waiting.pollUnsafe()).toBeUndefined()
      yield* Deferred.succeed(go, undefined)
      yield* Fiber.join(running)
      expect(yield* Fiber.join(waiting)).toEqual(["a2:pending", "a3:pending"])
    }))

  it.effect("with an image that pauses: pauses within a bulk write and after its commit, and commits it whole", () =>
    Effect.gen(function*() {
      let pauses = 0
      let committed = 0
      const store = MemoryStore.make({
        rows: new Map(),
        copies: new Map(),
        sequence: 0,
        commit: (changes) => Effect.sync(() => void (committed += changes.rows.length)),
        pause: Effect.sync(() => void pauses++)
      })
      const many = Array.from({ length: 2 * Store.pauseEveryRows + 1 }, (_, i) => attempt(`p${String(i).padStart(5, "0")}`, "d1"))
      yield* Effect.orDie(store.insertMany(Attempts, many))
      // Two pauses within the insert's 1,001 rows, one after its commit.
      expect([pauses, committed]).toEqual([3, many.length])
      expect(yield* store.removePartition(Attempts, "byDelivery", "d1")).toBe(many.length)
      expect(pauses).toBe(6)
    }))
})
