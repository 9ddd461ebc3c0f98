/**
 * The behaviour every implementation of the store port must show: rows, transactions, unique keys, keyset pages,
 * partitions, selections and copies, the sequence and the outbox, the ledger and timers. Each case runs on a fresh,
 * empty store (`StoreUnderTest.fresh`), so a SQL store may share one database and empty it per case.
 */
import { Cause, Deferred, Effect, Exit, Fiber, Random } from "effect"
import * as Ledger from "../money/Ledger.ts"
import * as Outbox from "../kernel/Outbox.ts"
import * as Store from "../kernel/Store.ts"
import * as Timers from "../kernel/Timers.ts"
import { expect } from "./Expect.ts"
import { collector, type ContractScale, freshLayer, type StoreContractCase, type StoreUnderTest } from "./Suite.ts"

interface Person {
  readonly id: string
  readonly org: string
  readonly name: string
  readonly rank: number
  readonly email?: string
  readonly handle?: string
}

const People = Store.table<Person>({
  name: "contract_people",
  key: (p) => p.id,
  unique: { email: (p) => p.email, handle: (p) => p.handle },
  orders: {
    byRank: { partition: (p) => p.org, sort: (p) => p.rank },
    byName: { partition: (p) => p.org, sort: (p) => p.name }
  }
})

interface Note {
  readonly id: string
  readonly text: string
}

const Notes = Store.table<Note>({ name: "contract_notes", key: (n) => n.id })

/** An order whose count the store does not keep: pages and counts must still be right. */
const Events = Store.table<Note>({
  name: "contract_events",
  key: (n) => n.id,
  orders: { byText: { partition: () => "", sort: (n) => n.text, counted: false } }
})

/** Rows in two orders with different partitions: removing one order's partition must clean the other order too. */
interface Item {
  readonly id: string
  readonly owner: string
  readonly tag: string
  readonly code?: string
}

const Items = Store.table<Item>({
  name: "contract_items",
  key: (i) => i.id,
  unique: { code: (i) => i.code },
  orders: {
    byOwner: { partition: (i) => i.owner, sort: (i) => i.id },
    byTag: { partition: (i) => i.tag, sort: (i) => i.id },
    byOwnerUncounted: { partition: (i) => i.owner, sort: (i) => i.id, counted: false }
  }
})

/** An order that leaves some rows out: only unarchived people are listed, per org. */
interface Filed {
  readonly id: string
  readonly org: string
  readonly rank: number
  readonly archived: boolean
}

const Files = Store.table<Filed>({
  name: "contract_files",
  key: (f) => f.id,
  orders: {
    live: { partition: (f) => (f.archived ? undefined : f.org), sort: (f) => f.rank },
    all: { partition: (f) => f.org, sort: (f) => f.rank }
  }
})

interface Counter {
  readonly id: string
  readonly value: number
}

const Counters = Store.table<Counter>({ name: "contract_counters", key: (c) => c.id })

const filed = (id: string, org: string, rank: number, archived = false): Filed => ({ id, org, rank, archived })

const person = (id: string, extra: Partial<Person> = {}): Person => ({ id, org: "o1", name: id, rank: 0, ...extra })

const compareSort = (a: Store.SortValue, b: Store.SortValue): number =>
  typeof a === "number" && typeof b === "number" ? a - b : String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0

/** The reference order of a keyset order: (sort, key). */
const byPosition = (a: Store.Position, b: Store.Position): number => compareSort(a.sort, b.sort) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)

const ids = (rows: ReadonlyArray<{ readonly id: string }>): Array<string> => rows.map((r) => r.id)

class Boom {
  readonly _tag = "Boom"
}

/**
 * A transaction that inserts `row` (or, with `update`, writes it over the committed row), then holds its uncommitted
 * write until `release`, then rolls back. Resolves once the write is made.
 */
const holdUncommitted = (store: Store.StoreService, row: Person, options: { readonly update?: boolean } = {}) =>
  Effect.gen(function*() {
    const written = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const writer = yield* Effect.forkChild(
      Effect.exit(
        store.transaction(
          Effect.gen(function*() {
            yield* (options.update === true ? Effect.orDie(store.update(People, row)) : store.insert(People, row))
            yield* Deferred.succeed(written, undefined)
            yield* Deferred.await(release)
            return yield* Effect.fail(new Boom())
          })
        )
      )
    )
    yield* Deferred.await(written)
    return {
      /** Lets the writer roll back; its exit. */
      release: Effect.andThen(Deferred.succeed(release, undefined), Fiber.join(writer))
    }
  })

const defaultScale: ContractScale = { propertyRows: 1000, propertyRuns: 8 }

/** The behaviour cases of the contract, on `subject`'s fresh stores. */
export const behaviourCases = <E>(subject: StoreUnderTest<E>): ReadonlyArray<StoreContractCase> => {
  const { cases, describe, it } = collector()
  const scale = subject.scale ?? defaultScale
  /** Runs a test program against a fresh, empty store. */
  const run = <A, E2>(program: (store: Store.StoreService) => Effect.Effect<A, E2, Store.Store>): Effect.Effect<A, E | E2> =>
    Effect.gen(function*() {
      const store = yield* Store.Store
      return yield* program(store)
    }).pipe(Effect.provide(freshLayer(subject)))

  /** A snapshot of everything observable about People and Notes, to compare before and after a rolled-back write. */
  const snapshot = (store: Store.StoreService, keys: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const rows: Record<string, Person | undefined> = {}
      for (const k of keys) rows[k] = yield* store.get(People, k)
      const emails: Record<string, string | undefined> = {}
      for (const e of ["a@x", "b@x", "c@x", "new@x", "other@x"]) emails[e] = (yield* store.findUnique(People, "email", e))?.id
      const all = (order: string, partition: string, descending: boolean) =>
        store.page(People, { order, partition, descending, backward: false, from: undefined, limit: 1000 }).pipe(Effect.map(ids))
      return {
        rows,
        emails,
        byRank: yield* all("byRank", "o1", false),
        byRankDesc: yield* all("byRank", "o1", true),
        byName: yield* all("byName", "o1", false),
        byRankO2: yield* all("byRank", "o2", false),
        countO1: yield* store.count(People, "byRank", "o1"),
        countO2: yield* store.count(People, "byRank", "o2"),
        note: yield* store.get(Notes, "n1")
      }
    })

  /** a, b, c in partition o1 and d in o2, plus one note. */
  const seed = (store: Store.StoreService) =>
    Effect.gen(function*() {
      yield* store.insert(People, person("a", { rank: 1, email: "a@x", handle: "ha" }))
      yield* store.insert(People, person("b", { rank: 2, email: "b@x" }))
      yield* store.insert(People, person("c", { rank: 3, email: "c@x" }))
      yield* store.insert(People, person("d", { org: "o2", rank: 1 }))
      yield* store.insert(Notes, { id: "n1", text: "hello" })
    })

  const seededKeys = ["a", "b", "c", "d", "e", "x"]

  /** Writes of every kind, to be rolled back: insert, update (moves sort, partition and unique), remove, other table. */
  const writeEverything = (store: Store.StoreService) =>
    Effect.gen(function*() {
      yield* store.insert(People, person("x", { rank: 0, email: "new@x" }))
      yield* store.update(People, person("a", { rank: 9, org: "o2", email: "other@x", name: "zz" }))
      yield* store.remove(People, "b")
      yield* store.update(Notes, { id: "n1", text: "changed" })
      yield* store.insert(Notes, { id: "n2", text: "new" })
    })

  // The cases, in the sections a runner nests them in.
  {
    describe("rows", () => {
      it.effect("inserts, reads, updates and removes", () =>
        run((store) =>
          Effect.gen(function*() {
            expect(yield* store.get(People, "a")).toBeUndefined()
            const a = person("a", { email: "a@x", rank: 4 })
            yield* store.insert(People, a)
            expect(yield* store.get(People, "a")).toEqual(a)
            expect(yield* store.getForUpdate(People, "a")).toEqual(a)
            expect(yield* store.findUnique(People, "email", "a@x")).toEqual(a)
            expect(yield* store.findUnique(People, "email", "b@x")).toBeUndefined()
            expect(yield* store.findUnique(People, "handle", "a@x")).toBeUndefined()

            const a2 = { ...a, email: "a2@x", rank: 5 }
            yield* store.update(People, a2)
            expect(yield* store.get(People, "a")).toEqual(a2)
            expect(yield* store.findUnique(People, "email", "a@x")).toBeUndefined()
            expect(yield* store.findUnique(People, "email", "a2@x")).toEqual(a2)

            yield* store.remove(People, "a")
            expect(yield* store.get(People, "a")).toBeUndefined()
            expect(yield* store.findUnique(People, "email", "a2@x")).toBeUndefined()
            expect(yield* store.count(People, "byRank", "o1")).toBe(0)
            // Removing a missing row is not an error.
            yield* store.remove(People, "a")
          })
        ))

      it.effect("reads a row with the rows it names, inside a transaction and out", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* store.insert(Notes, { id: "n1", text: "o1" })
            yield* store.insert(Notes, { id: "o1/x", text: "suffixed" })
            yield* store.insert(People, person("o1"))
            const links: ReadonlyArray<Store.Link> = [
              { table: People, member: "text" },
              { table: Notes, member: "text", suffix: "/x" },
              { table: Notes, member: "missing" },
              { table: People, member: "id" }
            ]
            const expected = { row: { id: "n1", text: "o1" }, linked: [person("o1"), { id: "o1/x", text: "suffixed" }, undefined, undefined] }
            expect(yield* store.getLinked(Notes, "n1", links)).toEqual(expected)
            expect(yield* store.transaction(store.getLinked(Notes, "n1", links))).toEqual(expected)
            expect(yield* store.getLinked(Notes, "absent", links)).toEqual({ row: undefined, linked: [undefined, undefined, undefined, undefined] })
            expect(yield* store.getLinked(Notes, "n1", [])).toEqual({ row: { id: "n1", text: "o1" }, linked: [] })
          })
        ))

      it.effect("keeps tables apart", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* store.insert(People, person("same"))
            yield* store.insert(Notes, { id: "same", text: "note" })
            expect((yield* store.get(People, "same"))?.name).toBe("same")
            expect((yield* store.get(Notes, "same"))?.text).toBe("note")
          })
        ))

      it.effect("leaves rows without a unique value out of that key", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* store.insert(People, person("a"))
            yield* store.insert(People, person("b"))
            expect(yield* store.count(People, "byRank", "o1")).toBe(2)
            yield* store.update(People, person("a", { email: "a@x" }))
            yield* store.update(People, person("a"))
            expect(yield* store.findUnique(People, "email", "a@x")).toBeUndefined()
            yield* store.insert(People, person("c", { email: "a@x" }))
            expect((yield* store.findUnique(People, "email", "a@x"))?.id).toBe("c")
          })
        ))
    })

    describe("transactions", () => {
      it.effect("commit every write", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* seed(store)
            const result = yield* store.transaction(Effect.as(writeEverything(store), "done"))
            expect(result).toBe("done")
            const s = yield* snapshot(store, seededKeys)
            expect(s.rows.x?.email).toBe("new@x")
            expect(s.rows.a).toEqual(person("a", { rank: 9, org: "o2", email: "other@x", name: "zz" }))
            expect(s.rows.b).toBeUndefined()
            expect(s.emails).toEqual({ "a@x": undefined, "b@x": undefined, "c@x": "c", "new@x": "x", "other@x": "a" })
            expect(s.byRank).toEqual(["x", "c"])
            expect(s.byRankO2).toEqual(["d", "a"])
            expect(s.countO1).toBe(2)
            expect(s.countO2).toBe(2)
            expect(s.note).toEqual({ id: "n1", text: "changed" })
            expect(yield* store.get(Notes, "n2")).toEqual({ id: "n2", text: "new" })
          })
        ))

      it.effect("roll back every write, index changes included, on a failure", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* seed(store)
            const before = yield* snapshot(store, seededKeys)
            const error = yield* Effect.flip(store.transaction(Effect.andThen(writeEverything(store), Effect.fail(new Boom()))))
            expect(error).toBeInstanceOf(Boom)
            expect(yield* snapshot(store, seededKeys)).toEqual(before)
            expect(yield* store.get(Notes, "n2")).toBeUndefined()
            // The store still works after the rollback, and the rolled-back keys are free.
            yield* store.insert(People, person("x", { email: "new@x" }))
            yield* store.insert(Notes, { id: "n2", text: "again" })
          })
        ))

      it.effect("roll back every write on a defect", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* seed(store)
            const before = yield* snapshot(store, seededKeys)
            const exit = yield* Effect.exit(
              store.transaction(
                Effect.andThen(
                  writeEverything(store),
                  Effect.sync(() => {
                    throw new Error("bug")
                  })
                )
              )
            )
            expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
            expect(yield* snapshot(store, seededKeys)).toEqual(before)
          })
        ))

      it.effect("roll back every write on interruption", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* seed(store)
            const before = yield* snapshot(store, seededKeys)
            const written = yield* Deferred.make<void>()
            const fiber = yield* Effect.forkChild(
              store.transaction(
                Effect.gen(function*() {
                  yield* writeEverything(store)
                  yield* Deferred.succeed(written, undefined)
                  return yield* Effect.never
                })
              )
            )
            yield* Deferred.await(written)
            yield* Fiber.interrupt(fiber)
            expect(yield* snapshot(store, seededKeys)).toEqual(before)
          })
        ))

      it.effect("see their own writes", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* store.transaction(
              Effect.gen(function*() {
                yield* store.insert(People, person("a", { email: "a@x", rank: 2 }))
                yield* store.insert(People, person("b", { rank: 1 }))
                expect((yield* store.get(People, "a"))?.id).toBe("a")
                expect((yield* store.getForUpdate(People, "b"))?.id).toBe("b")
                expect((yield* store.findUnique(People, "email", "a@x"))?.id).toBe("a")
                expect(yield* store.count(People, "byRank", "o1")).toBe(2)
                const page = yield* store.page(People, { order: "byRank", partition: "o1", descending: false, backward: false, from: undefined, limit: 10 })
                expect(ids(page)).toEqual(["b", "a"])
              })
            )
          })
        ))

      it.effect("a nested transaction joins the outer one", () =>
        run((store) =>
          Effect.gen(function*() {
            // The inner transaction sees the outer's writes, and its own writes are undone with the outer's.
            const error = yield* Effect.flip(
              store.transaction(
                Effect.gen(function*() {
                  yield* store.insert(People, person("outer"))
                  yield* store.transaction(
                    Effect.gen(function*() {
                      expect((yield* store.get(People, "outer"))?.id).toBe("outer")
                      yield* store.insert(People, person("inner", { email: "inner@x" }))
                    })
                  )
                  expect((yield* store.get(People, "inner"))?.id).toBe("inner")
                  return yield* Effect.fail(new Boom())
                })
              )
            )
            expect(error).toBeInstanceOf(Boom)
            expect(yield* store.get(People, "outer")).toBeUndefined()
            expect(yield* store.get(People, "inner")).toBeUndefined()
            expect(yield* store.findUnique(People, "email", "inner@x")).toBeUndefined()
            expect(yield* store.count(People, "byRank", "o1")).toBe(0)

            // And when the outer one succeeds, both commit.
            yield* store.transaction(
              Effect.gen(function*() {
                yield* store.insert(People, person("outer"))
                yield* store.transaction(store.insert(People, person("inner")))
              })
            )
            expect(yield* store.count(People, "byRank", "o1")).toBe(2)
          })
        ))

      it.effect("do not let another transaction see uncommitted writes", () =>
        run((store) =>
          Effect.gen(function*() {
            const writer = yield* holdUncommitted(store, person("dirty"))
            const reader = yield* Effect.forkChild(store.transaction(store.get(People, "dirty")))
            const exit = yield* writer.release
            expect(Exit.isFailure(exit)).toBe(true)
            expect(yield* Fiber.join(reader)).toBeUndefined()
            expect(yield* store.get(People, "dirty")).toBeUndefined()
          })
        ))

      it.effect("do not let a read outside any transaction see uncommitted writes", () =>
        run((store) =>
          Effect.gen(function*() {
            const writer = yield* holdUncommitted(store, person("dirty", { email: "d@x" }))
            const readers = yield* Effect.forkChild(Effect.all([
              store.get(People, "dirty"),
              store.findUnique(People, "email", "d@x"),
              store.count(People, "byRank", "o1"),
              store.page(People, { order: "byRank", partition: "o1", descending: false, backward: false, from: undefined, limit: 10 })
            ]))
            // Let the readers run (or block) while the write is still uncommitted.
            for (let i = 0; i < 10; i++) yield* Effect.yieldNow
            yield* writer.release
            const [row, unique, count, page] = yield* Fiber.join(readers)
            expect(row).toBeUndefined()
            expect(unique).toBeUndefined()
            expect(count).toBe(0)
            expect(page).toEqual([])
          })
        ))

      it.effect("let a read outside any transaction see a row another has changed as it was committed", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* store.insert(People, person("kept", { name: "committed" }))
            const writer = yield* holdUncommitted(store, person("kept", { name: "uncommitted" }), { update: true })
            const reader = yield* Effect.forkChild(store.get(People, "kept"))
            for (let i = 0; i < 10; i++) yield* Effect.yieldNow
            yield* writer.release
            expect((yield* Fiber.join(reader))?.name).toBe("committed")
            expect((yield* store.get(People, "kept"))?.name).toBe("committed")
          })
        ))

      it.effect("serialise read-modify-write through getForUpdate", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* store.insert(Counters, { id: "c", value: 0 })
            const increment = store.transaction(
              Effect.gen(function*() {
                const current = yield* store.getForUpdate(Counters, "c")
                yield* Effect.yieldNow
                yield* store.update(Counters, { id: "c", value: current!.value + 1 })
              })
            )
            yield* Effect.all(Array.from({ length: 25 }, () => increment), { concurrency: "unbounded" })
            expect((yield* store.get(Counters, "c"))?.value).toBe(25)
          })
        ))

      it.effect("run what they were asked to after their commit once it is sure, once each, and never after a rollback", () =>
        run((store) =>
          Effect.gen(function*() {
            const ran: Array<string> = []
            const note = (what: string) => Effect.sync(() => void ran.push(what))

            // Outside a transaction, at once.
            yield* store.afterCommit(note("alone"))
            expect(ran).toEqual(["alone"])

            // Inside one, after it returns, in the order asked, and seeing what it committed; a nested transaction's
            // wait for the outer one's commit.
            yield* store.transaction(
              Effect.gen(function*() {
                yield* store.insert(Notes, { id: "n1", text: "hello" })
                yield* store.afterCommit(Effect.flatMap(store.get(Notes, "n1"), (n) => note(`first: ${n?.text}`)))
                yield* store.transaction(store.afterCommit(note("inner")))
                expect(ran).toEqual(["alone"])
              })
            )
            expect(ran).toEqual(["alone", "first: hello", "inner"])

            // Never for a transaction that fails, dies, or whose nested one's failure escapes.
            yield* Effect.exit(store.transaction(Effect.andThen(store.afterCommit(note("failed")), Effect.fail(new Boom()))))
            yield* Effect.exit(store.transaction(Effect.andThen(store.afterCommit(note("died")), Effect.die("boom"))))
            yield* Effect.exit(store.transaction(store.transaction(Effect.andThen(store.afterCommit(note("nested")), Effect.fail(new Boom())))))
            expect(ran).toEqual(["alone", "first: hello", "inner"])

            // A defect of one is not the caller's: the transaction committed, and the rest still run.
            const exit = yield* Effect.exit(store.transaction(Effect.gen(function*() {
              yield* store.insert(Notes, { id: "n2", text: "kept" })
              yield* store.afterCommit(Effect.die("after"))
              yield* store.afterCommit(note("after the defect"))
            })))
            expect(exit._tag).toBe("Success")
            expect((yield* store.get(Notes, "n2"))?.text).toBe("kept")
            expect(ran.at(-1)).toBe("after the defect")

            // Once per commit, however many times a store runs a transaction's body (a SQL store runs it again when
            // what it read for update changed, or the database chose it as a deadlock's victim).
            yield* store.insert(Counters, { id: "c", value: 0 })
            let committed = 0
            const increment = store.transaction(
              Effect.gen(function*() {
                const current = yield* store.getForUpdate(Counters, "c")
                yield* store.afterCommit(Effect.sync(() => void committed++))
                yield* Effect.yieldNow
                yield* store.update(Counters, { id: "c", value: current!.value + 1 })
              })
            )
            yield* Effect.all(Array.from({ length: 25 }, () => increment), { concurrency: "unbounded" })
            expect((yield* store.get(Counters, "c"))?.value).toBe(25)
            expect(committed).toBe(25)
          })
        ))
    })

    describe("unique keys", () => {
      it.effect("refuse a taken primary key and write nothing", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* seed(store)
            const before = yield* snapshot(store, seededKeys)
            const error = yield* Effect.flip(store.insert(People, person("a", { rank: 7, email: "new@x", handle: "hx" })))
            expect(error).toBeInstanceOf(Store.UniqueViolation)
            expect(error).toMatchObject({ _tag: "UniqueViolation", table: "contract_people", unique: "primary" })
            expect(yield* snapshot(store, seededKeys)).toEqual(before)
            expect(yield* store.findUnique(People, "handle", "hx")).toBeUndefined()
          })
        ))

      it.effect("refuse a taken declared unique key on insert and write nothing", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* seed(store)
            const before = yield* snapshot(store, seededKeys)
            const error = yield* Effect.flip(store.insert(People, person("e", { rank: 0, email: "b@x", handle: "he" })))
            expect(error).toMatchObject({ _tag: "UniqueViolation", table: "contract_people", unique: "email" })
            const handleTaken = yield* Effect.flip(store.insert(People, person("e", { handle: "ha" })))
            expect(handleTaken).toMatchObject({ _tag: "UniqueViolation", unique: "handle" })
            expect(yield* snapshot(store, seededKeys)).toEqual(before)
            expect(yield* store.get(People, "e")).toBeUndefined()
            expect(yield* store.findUnique(People, "handle", "he")).toBeUndefined()
            expect((yield* store.findUnique(People, "email", "b@x"))?.id).toBe("b")
            // Nothing was reserved by the failed insert.
            yield* store.insert(People, person("f", { handle: "he" }))
          })
        ))

      it.effect("refuse a taken unique key on update and keep the row", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* seed(store)
            const before = yield* snapshot(store, seededKeys)
            const error = yield* Effect.flip(store.update(People, person("a", { rank: 8, email: "c@x", handle: "ha" })))
            expect(error).toMatchObject({ _tag: "UniqueViolation", table: "contract_people", unique: "email" })
            expect(yield* snapshot(store, seededKeys)).toEqual(before)
            // A row keeps its own unique values on update.
            yield* store.update(People, person("a", { rank: 8, email: "a@x", handle: "ha" }))
            expect((yield* store.get(People, "a"))?.rank).toBe(8)
          })
        ))

      it.effect("roll back the whole transaction when a violation escapes it", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* seed(store)
            const before = yield* snapshot(store, seededKeys)
            const error = yield* Effect.flip(
              store.transaction(
                Effect.gen(function*() {
                  yield* writeEverything(store)
                  yield* store.insert(People, person("e", { email: "c@x" }))
                })
              )
            )
            expect(error).toMatchObject({ _tag: "UniqueViolation", unique: "email" })
            expect(yield* snapshot(store, seededKeys)).toEqual(before)
          })
        ))

      it.effect("let a transaction recover from a violation it catches", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* seed(store)
            yield* store.transaction(
              Effect.gen(function*() {
                yield* store.insert(People, person("e", { rank: 5 }))
                const error = yield* Effect.flip(store.insert(People, person("x", { email: "a@x", rank: 6 })))
                expect(error).toBeInstanceOf(Store.UniqueViolation)
                yield* store.insert(Notes, { id: "n2", text: "after" })
              })
            )
            expect((yield* store.get(People, "e"))?.rank).toBe(5)
            expect(yield* store.get(People, "x")).toBeUndefined()
            expect((yield* store.findUnique(People, "email", "a@x"))?.id).toBe("a")
            expect(yield* store.get(Notes, "n2")).toEqual({ id: "n2", text: "after" })
            expect(yield* store.count(People, "byRank", "o1")).toBe(4)
          })
        ))

      it.effect("after a refused update in a transaction, read, page and update the row as it was before it", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* seed(store)
            yield* store.transaction(
              Effect.gen(function*() {
                const b = (yield* store.getForUpdate(People, "b"))!
                yield* store.update(People, { ...b, rank: 50 })
                const error = yield* Effect.flip(store.update(People, { ...b, rank: 60, email: "a@x" }))
                expect(error).toMatchObject({ _tag: "UniqueViolation", unique: "email" })
                expect((yield* store.get(People, "b"))?.rank).toBe(50)
                expect((yield* store.getForUpdate(People, "b"))?.email).toBe(b.email)
                // The update after the refused one moves the row's entries from where the store has them.
                yield* store.update(People, { ...b, rank: 70 })
              })
            )
            expect((yield* store.get(People, "b"))?.rank).toBe(70)
            const ranks = yield* store.page(People, { order: "byRank", partition: "o1", descending: true, backward: false, from: undefined, limit: 10 })
            expect(ranks.filter((p) => p.id === "b").length).toBe(1)
            expect(ranks[0]?.id).toBe("b")
            expect(yield* store.count(People, "byRank", "o1")).toBe(3)
          })
        ))

      it.effect("in one transaction, update a row several times and remove one it wrote, keeping pages and counts", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* seed(store)
            yield* store.transaction(
              Effect.gen(function*() {
                yield* store.insert(People, person("e", { rank: 5 }))
                yield* store.update(People, person("e", { rank: 6, org: "o2" }))
                yield* store.update(People, person("e", { rank: 7, org: "o2" }))
                expect((yield* store.get(People, "e"))?.rank).toBe(7)
                yield* store.remove(People, "e")
                expect(yield* store.get(People, "e")).toBeUndefined()
                yield* store.insert(People, person("f", { rank: 8 }))
                yield* store.update(People, person("f", { rank: 9 }))
              })
            )
            expect(yield* store.get(People, "e")).toBeUndefined()
            expect(yield* store.count(People, "byRank", "o2")).toBe(1)
            expect(yield* store.count(People, "byRank", "o1")).toBe(4)
            const ranks = yield* store.page(People, { order: "byRank", partition: "o1", descending: true, backward: false, from: undefined, limit: 10 })
            expect(ranks.map((p) => [p.id, p.rank])[0]).toEqual(["f", 9])
            expect(ranks.length).toBe(4)
          })
        ))

      it.effect("lock several rows at once, in key order, and update several at once, all or none", () =>
        run((store) =>
          Effect.gen(function*() {
            const file = (id: string, org: string, archived = false): Filed => ({ id, org, rank: Number(id.slice(1)), archived })
            yield* store.insert(Files, file("f3", "alice"))
            yield* store.insert(Files, file("f1", "bob"))
            yield* store.insert(Files, file("f2", "alice"))
            yield* store.transaction(Effect.gen(function*() {
              const locked = yield* store.getManyForUpdate(Files, ["f3", "nope", "f1", "f3"])
              expect(locked.map((f) => f.id)).toEqual(["f1", "f3"])
              yield* store.updateMany(Files, [{ ...locked[0]!, org: "carol" }, { ...locked[1]!, archived: true }])
              // A row this transaction has not locked yet is locked by the update itself.
              yield* store.updateMany(Files, [{ ...(yield* store.get(Files, "f2"))!, org: "carol" }])
            }))
            expect((yield* store.get(Files, "f1"))?.org).toBe("carol")
            expect((yield* store.get(Files, "f3"))?.archived).toBe(true)
            expect(yield* store.count(Files, "all", "carol")).toBe(2)
            expect(yield* store.count(Files, "all", "alice")).toBe(1)
            expect(yield* store.count(Files, "live", "alice")).toBe(0)
            const live = yield* store.page(Files, { order: "live", partition: "carol", descending: false, backward: false, from: undefined, limit: 10 })
            expect(live.map((f) => f.id)).toEqual(["f1", "f2"])
            const exit = yield* Effect.exit(store.transaction(Effect.andThen(
              store.updateMany(Files, [file("f1", "dave"), file("f2", "dave")]),
              Effect.fail(new Boom())
            )))
            expect(exit._tag).toBe("Failure")
            expect((yield* store.get(Files, "f1"))?.org).toBe("carol")
            expect(yield* store.count(Files, "all", "dave")).toBe(0)
          })
        ))

      it.effect("insert several rows at once, all or none, naming the row refused", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* seed(store)
            const before = yield* snapshot(store, [...seededKeys, "p", "q", "r"])
            const refused = (rows: ReadonlyArray<Person>) => Effect.flip(store.insertMany(People, rows))
            // A key another row holds, a unique value another row holds, and either twice within the rows.
            expect(yield* refused([person("p"), person("a"), person("q")])).toMatchObject({ unique: "primary", key: "a" })
            expect(yield* refused([person("p"), person("q", { email: "b@x" })])).toMatchObject({ unique: "email", key: "q" })
            expect(yield* refused([person("p"), person("p")])).toMatchObject({ unique: "primary", key: "p" })
            expect(yield* refused([person("p", { handle: "h" }), person("q", { handle: "h" })])).toMatchObject({ unique: "handle", key: "q" })
            // Inside a transaction that goes on after catching the refusal, nothing of the refused rows stays.
            yield* store.transaction(Effect.gen(function*() {
              yield* Effect.flip(store.insertMany(People, [person("r", { email: "r@x" }), person("q", { email: "c@x" })]))
              expect(yield* store.get(People, "r")).toBeUndefined()
              expect(yield* store.findUnique(People, "email", "r@x")).toBeUndefined()
            }))
            expect(yield* snapshot(store, [...seededKeys, "p", "q", "r"])).toEqual(before)
            yield* store.insertMany(People, [person("p", { rank: 7, email: "p@x" }), person("q", { org: "o2", rank: 8 })])
            expect((yield* store.findUnique(People, "email", "p@x"))?.id).toBe("p")
            expect(yield* store.count(People, "byRank", "o1")).toBe(4)
            expect(yield* store.count(People, "byRank", "o2")).toBe(2)
            const o2 = yield* store.page(People, { order: "byRank", partition: "o2", descending: false, backward: false, from: undefined, limit: 10 })
            expect(ids(o2)).toEqual(["d", "q"])
          })
        ))

      it.effect("insert rows of several tables at once, indexed as inserts index them, all or none, naming the row refused", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* seed(store)
            const before = yield* snapshot(store, [...seededKeys, "p", "q", "r"])
            const refused = (groups: Parameters<Store.StoreService["insertRows"]>[0]) => Effect.flip(store.insertRows(groups))
            // A key or unique value a stored row holds (the first refused row in the order given is named), and a key
            // or value twice within one table's rows; the same key in two tables is no conflict.
            expect(yield* refused([{ table: Notes, rows: [{ id: "n9", text: "x" }] }, { table: People, rows: [person("p"), person("a")] }])).toMatchObject({ table: "contract_people", unique: "primary", key: "a" })
            expect(yield* refused([{ table: People, rows: [person("p"), person("q", { email: "b@x" }), person("r")] }])).toMatchObject({ unique: "email", key: "q" })
            expect(yield* refused([{ table: People, rows: [person("p")] }, { table: People, rows: [person("p")] }])).toMatchObject({ unique: "primary", key: "p" })
            expect(yield* refused([{ table: People, rows: [person("p", { handle: "h" }), person("q", { handle: "h" })] }])).toMatchObject({ unique: "handle", key: "q" })
            expect(yield* refused([{ table: Notes, rows: [{ id: "n1", text: "again" }] }])).toMatchObject({ table: "contract_notes", unique: "primary", key: "n1" })
            // Inside a transaction that goes on after catching the refusal, nothing of the refused rows stays.
            yield* store.transaction(Effect.gen(function*() {
              yield* Effect.flip(store.insertRows([{ table: Notes, rows: [{ id: "n8", text: "gone" }] }, { table: People, rows: [person("r", { email: "r@x" }), person("q", { email: "c@x" })] }]))
              expect(yield* store.get(People, "r")).toBeUndefined()
              expect(yield* store.get(Notes, "n8")).toBeUndefined()
              expect(yield* store.findUnique(People, "email", "r@x")).toBeUndefined()
            }))
            expect(yield* snapshot(store, [...seededKeys, "p", "q", "r"])).toEqual(before)
            expect(yield* store.get(Notes, "n9")).toBeUndefined()
            // Taken: rows, unique values, entries and counts, in a transaction that reads them back, and committed.
            yield* store.transaction(Effect.gen(function*() {
              yield* store.insertRows([
                { table: People, rows: [person("p", { rank: 7, email: "p@x" }), person("q", { org: "o2", rank: 8 })] },
                { table: Notes, rows: [{ id: "p", text: "a note keyed like a person" }] },
                { table: Items, rows: [{ id: "i1", owner: "alice", tag: "red", code: "c1" }] }
              ])
              expect(yield* store.count(People, "byRank", "o1")).toBe(4)
            }))
            expect((yield* store.findUnique(People, "email", "p@x"))?.id).toBe("p")
            expect((yield* store.findUnique(Items, "code", "c1"))?.id).toBe("i1")
            expect(yield* store.get(Notes, "p")).toEqual({ id: "p", text: "a note keyed like a person" })
            expect(yield* store.count(People, "byRank", "o1")).toBe(4)
            expect(yield* store.count(People, "byRank", "o2")).toBe(2)
            expect(yield* store.count(Items, "byOwner", "alice")).toBe(1)
            const o2 = yield* store.page(People, { order: "byRank", partition: "o2", descending: false, backward: false, from: undefined, limit: 10 })
            expect(ids(o2)).toEqual(["d", "q"])
            const uncounted = yield* store.page(Items, { order: "byOwnerUncounted", partition: "alice", descending: false, backward: false, from: undefined, limit: 10 })
            expect(ids(uncounted)).toEqual(["i1"])
            // The rows are as given, byte for byte as any insert keeps them.
            yield* store.insertRows([{ table: Notes, rows: [{ id: "u", text: "ünïcødé \u2028 and \"quotes\"" }] }])
            expect(yield* store.get(Notes, "u")).toEqual({ id: "u", text: "ünïcødé \u2028 and \"quotes\"" })
            yield* store.insertRows([])
          })
        ))

      it.effect("take a row read for update as the caller says it wrote it, and never commit on a wrong assumption", () =>
        run((store) =>
          Effect.gen(function*() {
            const written = { id: "n1", text: "a" }
            yield* store.insert(Notes, written)
            // Right: the row is as assumed, and the write on it commits.
            yield* store.transaction(Effect.gen(function*() {
              const row = yield* store.getForUpdate(Notes, "n1", { assumed: written })
              yield* store.update(Notes, { ...row!, text: `${row!.text}b` })
            }))
            expect(yield* store.get(Notes, "n1")).toEqual({ id: "n1", text: "ab" })
            // Wrong (the row changed since): what commits is built on the row as it is, whatever the store answered
            // first.
            const seen = yield* store.transaction(Effect.gen(function*() {
              const row = yield* store.getForUpdate(Notes, "n1", { assumed: written })
              yield* store.update(Notes, { ...row!, text: `${row!.text}c` })
              return row!.text
            }))
            expect(seen).toBe("ab")
            expect(yield* store.get(Notes, "n1")).toEqual({ id: "n1", text: "abc" })
            // Assumed present but gone: the transaction sees it gone.
            yield* store.remove(Notes, "n1")
            const gone = yield* store.transaction(Effect.gen(function*() {
              const row = yield* store.getForUpdate(Notes, "n1", { assumed: written })
              if (row !== undefined) yield* store.update(Notes, { ...row, text: "revived" })
              return row
            }))
            expect(gone).toBeUndefined()
            expect(yield* store.get(Notes, "n1")).toBeUndefined()
          })
        ))

      it.effect("remove rows in a transaction: its reads, pages and counts see them gone at once, and a rollback keeps them", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* store.insertMany(Files, [filed("r1", "alice", 1), filed("r2", "alice", 2), filed("r3", "alice", 3)])
            const ids = (rows: ReadonlyArray<Filed>) => rows.map((f) => f.id)
            const all = () => store.page(Files, { order: "all", partition: "alice", descending: false, backward: false, from: undefined, limit: 10 })
            const exit = yield* Effect.exit(store.transaction(Effect.gen(function*() {
              yield* store.remove(Files, "r1")
              // A fresh row removed before the commit, and a removed key written again.
              yield* store.insertFresh(Files, filed("r4", "alice", 4))
              yield* store.remove(Files, "r4")
              yield* store.remove(Files, "r2")
              yield* store.insertFresh(Files, filed("r2", "alice", 5))
              expect(yield* store.get(Files, "r1")).toBeUndefined()
              expect(yield* store.get(Files, "r4")).toBeUndefined()
              expect(ids(yield* all())).toEqual(["r3", "r2"])
              expect(yield* store.count(Files, "all", "alice")).toBe(2)
              return yield* Effect.fail("undone")
            })))
            expect(exit._tag).toBe("Failure")
            expect(ids(yield* all())).toEqual(["r1", "r2", "r3"])
            expect(yield* store.count(Files, "all", "alice")).toBe(3)
            yield* store.transaction(Effect.gen(function*() {
              const row = yield* store.getForUpdate(Files, "r1")
              yield* store.remove(Files, row!.id)
              yield* store.insertFresh(Files, filed("r4", "alice", 4))
              yield* store.remove(Files, "r4")
              yield* store.remove(Files, "absent")
            }))
            expect(yield* store.get(Files, "r1")).toBeUndefined()
            expect(yield* store.get(Files, "r4")).toBeUndefined()
            expect(ids(yield* all())).toEqual(["r2", "r3"])
            expect(yield* store.count(Files, "all", "alice")).toBe(2)
            expect(yield* store.count(Files, "live", "alice")).toBe(2)
          })
        ))

      it.effect("insert a row unless its key is taken, else answer the row that holds it and write nothing", () =>
        run((store) =>
          Effect.gen(function*() {
            expect(yield* store.insertIfAbsent(Files, filed("c1", "alice", 1))).toBeUndefined()
            expect(yield* store.get(Files, "c1")).toEqual(filed("c1", "alice", 1))
            expect(yield* store.count(Files, "all", "alice")).toBe(1)
            // The key is taken: the holder comes back, and the row, its entries and its counts stay as they were.
            expect(yield* store.insertIfAbsent(Files, filed("c1", "bob", 2))).toEqual(filed("c1", "alice", 1))
            expect(yield* store.count(Files, "all", "bob")).toBe(0)
            expect(yield* store.count(Files, "all", "alice")).toBe(1)
            const alice = yield* store.page(Files, { order: "live", partition: "alice", descending: false, backward: false, from: undefined, limit: 10 })
            expect(alice.map((f) => f.id)).toEqual(["c1"])
            // In a transaction that rolls back, the claim goes with it.
            const exit = yield* Effect.exit(store.transaction(Effect.gen(function*() {
              expect(yield* store.insertIfAbsent(Files, filed("c2", "carol", 3))).toBeUndefined()
              expect(yield* store.insertIfAbsent(Files, filed("c2", "dave", 4))).toEqual(filed("c2", "carol", 3))
              return yield* Effect.fail("undone")
            })))
            expect(exit._tag).toBe("Failure")
            expect(yield* store.get(Files, "c2")).toBeUndefined()
            expect(yield* store.count(Files, "all", "carol")).toBe(0)
            // A table with unique keys cannot be claimed this way.
            const refused = yield* Effect.exit(store.insertIfAbsent(People, person("z")))
            expect(refused._tag === "Failure" && Cause.hasDies(refused.cause)).toBe(true)
          })
        ))

      it.live("answer a claim made at the same moment by another transaction as its holder or as taken, never as free", () =>
        run((store) =>
          Effect.gen(function*() {
            const inside = yield* Deferred.make<void>()
            const release = yield* Deferred.make<void>()
            const holder = yield* Effect.forkChild(store.transaction(Effect.gen(function*() {
              yield* store.insert(Files, filed("c3", "erin", 5))
              yield* Deferred.succeed(inside, undefined)
              yield* Deferred.await(release)
            })))
            yield* Deferred.await(inside)
            const claim = yield* Effect.forkChild(Effect.exit(store.insertIfAbsent(Files, filed("c3", "frank", 6))))
            yield* Effect.sleep("20 millis")
            yield* Deferred.succeed(release, undefined)
            yield* Fiber.join(holder)
            const answer = yield* Fiber.join(claim)
            if (answer._tag === "Success") expect(answer.value).toEqual(filed("c3", "erin", 5))
            else expect(Cause.findErrorOption(answer.cause)).toMatchObject({ value: { _tag: "UniqueViolation", key: "c3" } })
            expect(yield* store.get(Files, "c3")).toEqual(filed("c3", "erin", 5))
            expect(yield* store.count(Files, "all", "frank")).toBe(0)
          })
        ))

      it.effect("insert fresh rows and update rows in a transaction: its own reads, pages and counts see them, the commit keeps them", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* store.insert(Files, filed("f1", "alice", 1))
            yield* store.transaction(Effect.gen(function*() {
              yield* store.insertFresh(Files, filed("f2", "alice", 2))
              yield* store.insertFresh(Files, filed("f3", "bob", 3))
              // Several writes to one row: the last version counts once, in its last partition.
              yield* store.update(Files, filed("f3", "carol", 4))
              yield* store.update(Files, filed("f1", "carol", 5))
              yield* store.update(Files, filed("f1", "carol", 6, true))
              expect((yield* store.get(Files, "f3"))?.org).toBe("carol")
              expect((yield* store.getForUpdate(Files, "f2"))?.rank).toBe(2)
              expect((yield* store.getManyForUpdate(Files, ["f3", "f2", "f1"])).map((f) => [f.id, f.rank])).toEqual([["f1", 6], ["f2", 2], ["f3", 4]])
              expect(yield* store.count(Files, "all", "carol")).toBe(2)
              const live = yield* store.page(Files, { order: "live", partition: "carol", descending: false, backward: false, from: undefined, limit: 10 })
              expect(live.map((f) => f.id)).toEqual(["f3"])
              // Written after a read of its table: held again, and sent at the commit.
              yield* store.insertFresh(Files, filed("f4", "alice", 7))
              yield* store.updateMany(Files, [filed("f2", "dave", 8), filed("f4", "dave", 9)])
            }))
            expect((yield* store.get(Files, "f4"))?.org).toBe("dave")
            expect(yield* store.count(Files, "all", "alice")).toBe(0)
            expect(yield* store.count(Files, "all", "bob")).toBe(0)
            expect(yield* store.count(Files, "all", "carol")).toBe(2)
            expect(yield* store.count(Files, "all", "dave")).toBe(2)
            expect(yield* store.count(Files, "live", "carol")).toBe(1)
            const dave = yield* store.page(Files, { order: "all", partition: "dave", descending: true, backward: false, from: undefined, limit: 10 })
            expect(dave.map((f) => f.id)).toEqual(["f4", "f2"])
            // Outside a transaction, at once.
            yield* store.insertFresh(Files, filed("f5", "erin", 10))
            expect(yield* store.count(Files, "all", "erin")).toBe(1)
          })
        ))

      it.effect("roll back fresh rows and held updates with their transaction, and make a taken fresh key a defect that takes the whole transaction back", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* store.insert(Files, filed("f1", "alice", 1))
            const failed = yield* Effect.exit(store.transaction(Effect.gen(function*() {
              yield* store.insertFresh(Files, filed("f2", "alice", 2))
              yield* store.update(Files, filed("f1", "bob", 3))
              return yield* Effect.fail(new Boom())
            })))
            expect(failed._tag).toBe("Failure")
            expect(yield* store.get(Files, "f2")).toBeUndefined()
            expect((yield* store.get(Files, "f1"))?.org).toBe("alice")
            expect(yield* store.count(Files, "all", "alice")).toBe(1)
            expect(yield* store.count(Files, "all", "bob")).toBe(0)
            const taken = yield* Effect.exit(store.transaction(Effect.gen(function*() {
              yield* store.insertFresh(Notes, { id: "n9", text: "new" })
              yield* store.update(Files, filed("f1", "carol", 4))
              yield* store.insertFresh(Files, filed("f1", "dave", 5))
            })))
            expect(taken._tag === "Failure" && Cause.hasDies(taken.cause)).toBe(true)
            expect(yield* store.get(Notes, "n9")).toBeUndefined()
            expect((yield* store.get(Files, "f1"))?.org).toBe("alice")
            // A fresh key that only the database knows is taken: refused when the write is sent.
            const late = yield* Effect.exit(store.transaction(Effect.gen(function*() {
              yield* store.insertFresh(Notes, { id: "n9", text: "new" })
              yield* store.insertFresh(Files, filed("f1", "dave", 5))
            })))
            expect(late._tag === "Failure" && Cause.hasDies(late.cause)).toBe(true)
            expect(yield* store.get(Notes, "n9")).toBeUndefined()
            expect(yield* store.count(Files, "all", "dave")).toBe(0)
          })
        ))

      it.effect("in one transaction, read again what it wrote since a first read: rows, pages and counts", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* seed(store)
            const o1 = (order: string) => store.page(People, { order, partition: "o1", descending: false, backward: false, from: undefined, limit: 10 })
            yield* store.transaction(Effect.gen(function*() {
              expect(ids(yield* o1("byRank"))).toEqual(["a", "b", "c"])
              expect(yield* store.get(People, "e")).toBeUndefined()
              expect((yield* store.get(Notes, "n1"))?.text).toBe("hello")
              yield* store.insert(People, person("e", { rank: 0 }))
              yield* store.update(Notes, { id: "n1", text: "again" })
              expect(ids(yield* o1("byRank"))).toEqual(["e", "a", "b", "c"])
              expect((yield* store.get(People, "e"))?.rank).toBe(0)
              expect((yield* store.get(Notes, "n1"))?.text).toBe("again")
              yield* store.update(People, person("e", { rank: 9 }))
              expect(ids(yield* o1("byRank"))).toEqual(["a", "b", "c", "e"])
              yield* store.remove(People, "a")
              expect(yield* store.get(People, "a")).toBeUndefined()
              expect(ids(yield* o1("byRank"))).toEqual(["b", "c", "e"])
              expect(yield* store.count(People, "byRank", "o1")).toBe(3)
              // A page read twice with nothing written between reads the same.
              expect(ids(yield* o1("byName"))).toEqual(ids(yield* o1("byName")))
            }))
            expect(ids(yield* o1("byRank"))).toEqual(["b", "c", "e"])
          })
        ))

      it.effect("free a unique value when its row is removed or changed", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* seed(store)
            yield* store.remove(People, "a")
            yield* store.insert(People, person("e", { email: "a@x", handle: "ha" }))
            yield* store.update(People, person("b", { email: "b2@x" }))
            yield* store.insert(People, person("f", { email: "b@x" }))
            expect((yield* store.findUnique(People, "email", "a@x"))?.id).toBe("e")
            expect((yield* store.findUnique(People, "handle", "ha"))?.id).toBe("e")
            expect((yield* store.findUnique(People, "email", "b@x"))?.id).toBe("f")
            expect((yield* store.findUnique(People, "email", "b2@x"))?.id).toBe("b")
          })
        ))
    })

    describe("keyset pages", () => {
      // o1 by rank: (1,a) (2,b) (3,c1) (3,c2) (3,c3) (5,e) (8,f); o2 holds one row.
      const rows = [
        person("f", { rank: 8, name: "Fay" }),
        person("c2", { rank: 3, name: "Cy" }),
        person("a", { rank: 1, name: "Al" }),
        person("e", { rank: 5, name: "Ed" }),
        person("c3", { rank: 3, name: "Cyd" }),
        person("b", { rank: 2, name: "Bo" }),
        person("c1", { rank: 3, name: "Cat" }),
        person("z", { org: "o2", rank: 4, name: "Zed" })
      ]
      const ascending = ["a", "b", "c1", "c2", "c3", "e", "f"]
      const descending = [...ascending].reverse()
      const positionOf = (id: string): Store.Position => {
        const r = rows.find((p) => p.id === id)!
        return { sort: r.rank, key: r.id }
      }
      const withRows = <A, E2>(f: (store: Store.StoreService) => Effect.Effect<A, E2, Store.Store>) =>
        run((store) =>
          Effect.gen(function*() {
            for (const r of rows) yield* store.insert(People, r)
            return yield* f(store)
          })
        )
      const pageIds = (
        store: Store.StoreService,
        q: { descending: boolean; backward: boolean; from?: Store.Position; limit: number; order?: string; partition?: string }
      ) =>
        store.page(People, {
          order: q.order ?? "byRank",
          partition: q.partition ?? "o1",
          descending: q.descending,
          backward: q.backward,
          from: q.from,
          limit: q.limit
        }).pipe(Effect.map(ids))

      it.effect("walk an ascending order forward", () =>
        withRows((store) =>
          Effect.gen(function*() {
            expect(yield* pageIds(store, { descending: false, backward: false, limit: 100 })).toEqual(ascending)
            expect(yield* pageIds(store, { descending: false, backward: false, limit: 3 })).toEqual(["a", "b", "c1"])
            // Strictly after the position, ties broken by key.
            expect(yield* pageIds(store, { descending: false, backward: false, from: positionOf("c1"), limit: 3 })).toEqual(["c2", "c3", "e"])
            expect(yield* pageIds(store, { descending: false, backward: false, from: positionOf("e"), limit: 3 })).toEqual(["f"])
            expect(yield* pageIds(store, { descending: false, backward: false, from: positionOf("f"), limit: 3 })).toEqual([])
            // A position need not be a row's.
            expect(yield* pageIds(store, { descending: false, backward: false, from: { sort: 3, key: "c15" }, limit: 2 })).toEqual(["c2", "c3"])
            expect(yield* pageIds(store, { descending: false, backward: false, from: { sort: 4, key: "" }, limit: 5 })).toEqual(["e", "f"])
          })
        ))

      it.effect("walk an ascending order backward, returning rows in the order's direction", () =>
        withRows((store) =>
          Effect.gen(function*() {
            expect(yield* pageIds(store, { descending: false, backward: true, limit: 2 })).toEqual(["e", "f"])
            expect(yield* pageIds(store, { descending: false, backward: true, from: positionOf("e"), limit: 2 })).toEqual(["c2", "c3"])
            expect(yield* pageIds(store, { descending: false, backward: true, from: positionOf("c2"), limit: 5 })).toEqual(["a", "b", "c1"])
            expect(yield* pageIds(store, { descending: false, backward: true, from: positionOf("a"), limit: 5 })).toEqual([])
            expect(yield* pageIds(store, { descending: false, backward: true, from: { sort: 3, key: "c15" }, limit: 2 })).toEqual(["b", "c1"])
          })
        ))

      it.effect("walk a descending order forward and backward", () =>
        withRows((store) =>
          Effect.gen(function*() {
            expect(yield* pageIds(store, { descending: true, backward: false, limit: 100 })).toEqual(descending)
            expect(yield* pageIds(store, { descending: true, backward: false, limit: 2 })).toEqual(["f", "e"])
            expect(yield* pageIds(store, { descending: true, backward: false, from: positionOf("c3"), limit: 2 })).toEqual(["c2", "c1"])
            expect(yield* pageIds(store, { descending: true, backward: false, from: positionOf("a"), limit: 2 })).toEqual([])
            expect(yield* pageIds(store, { descending: true, backward: true, limit: 2 })).toEqual(["b", "a"])
            expect(yield* pageIds(store, { descending: true, backward: true, from: positionOf("c1"), limit: 2 })).toEqual(["c3", "c2"])
            expect(yield* pageIds(store, { descending: true, backward: true, from: positionOf("e"), limit: 5 })).toEqual(["f"])
            expect(yield* pageIds(store, { descending: true, backward: true, from: positionOf("f"), limit: 5 })).toEqual([])
          })
        ))

      it.effect("sort text values and keep partitions apart", () =>
        withRows((store) =>
          Effect.gen(function*() {
            expect(yield* pageIds(store, { order: "byName", descending: false, backward: false, limit: 100 })).toEqual([
              "a", "b", "c1", "c2", "c3", "e", "f"
            ])
            expect(yield* pageIds(store, { order: "byName", descending: false, backward: false, from: { sort: "Cy", key: "c2" }, limit: 100 })).toEqual([
              "c3", "e", "f"
            ])
            expect(yield* pageIds(store, { partition: "o2", descending: false, backward: false, limit: 100 })).toEqual(["z"])
            expect(yield* pageIds(store, { partition: "nope", descending: false, backward: false, limit: 100 })).toEqual([])
            expect(yield* pageIds(store, { partition: "nope", descending: true, backward: true, limit: 100 })).toEqual([])
          })
        ))

      it.effect("follow updates that move a row", () =>
        withRows((store) =>
          Effect.gen(function*() {
            yield* store.update(People, person("a", { rank: 4, name: "Al" }))
            expect(yield* pageIds(store, { descending: false, backward: false, limit: 100 })).toEqual(["b", "c1", "c2", "c3", "a", "e", "f"])
            yield* store.update(People, person("a", { org: "o2", rank: 4, name: "Al" }))
            expect(yield* pageIds(store, { descending: false, backward: false, limit: 100 })).toEqual(["b", "c1", "c2", "c3", "e", "f"])
            expect(yield* pageIds(store, { partition: "o2", descending: false, backward: false, limit: 100 })).toEqual(["a", "z"])
          })
        ))

      it.effect("continue from a position even when rows are added before it", () =>
        withRows((store) =>
          Effect.gen(function*() {
            const first = yield* pageIds(store, { descending: false, backward: false, limit: 3 })
            expect(first).toEqual(["a", "b", "c1"])
            yield* store.insert(People, person("a0", { rank: 0 }))
            yield* store.insert(People, person("c0", { rank: 3 }))
            yield* store.remove(People, "c1")
            expect(yield* pageIds(store, { descending: false, backward: false, from: positionOf("c1"), limit: 10 })).toEqual(["c2", "c3", "e", "f"])
          })
        ))

      it.effect("count the rows of one partition", () =>
        withRows((store) =>
          Effect.gen(function*() {
            expect(yield* store.count(People, "byRank", "o1")).toBe(7)
            expect(yield* store.count(People, "byName", "o1")).toBe(7)
            expect(yield* store.count(People, "byRank", "o2")).toBe(1)
            expect(yield* store.count(People, "byRank", "nope")).toBe(0)
            yield* store.remove(People, "f")
            yield* store.update(People, person("e", { org: "o2", rank: 5 }))
            expect(yield* store.count(People, "byRank", "o1")).toBe(5)
            expect(yield* store.count(People, "byRank", "o2")).toBe(2)
            yield* Effect.exit(store.transaction(Effect.andThen(store.insert(People, person("g")), Effect.fail(new Boom()))))
            expect(yield* store.count(People, "byRank", "o1")).toBe(5)
          })
        ))

      it.effect("page and count an order whose count is not kept", () =>
        run((store) =>
          Effect.gen(function*() {
            for (const [id, text] of [["1", "b"], ["2", "a"], ["3", "c"]] as const) yield* store.insert(Events, { id, text })
            yield* store.remove(Events, "3")
            expect(yield* store.count(Events, "byText", "")).toBe(2)
            const page = yield* store.page(Events, { order: "byText", partition: "", descending: false, backward: false, from: undefined, limit: 10 })
            expect(page.map((n) => n.text)).toEqual(["a", "b"])
          })
        ))

      it.effect("leave a row out of an order whose partition is undefined for it, and follow it in and out", () =>
        run((store) =>
          Effect.gen(function*() {
            const file = (id: string, rank: number, archived: boolean, org = "o1"): Filed => ({ id, org, rank, archived })
            const live = (org = "o1") =>
              store.page(Files, { order: "live", partition: org, descending: false, backward: false, from: undefined, limit: 100 }).pipe(Effect.map(ids))
            yield* store.insert(Files, file("a", 1, false))
            yield* store.insert(Files, file("b", 2, true))
            yield* store.insert(Files, file("c", 3, false))
            yield* store.insert(Files, file("d", 4, true))
            expect(yield* live()).toEqual(["a", "c"])
            expect(yield* store.count(Files, "live", "o1")).toBe(2)
            expect(yield* store.count(Files, "all", "o1")).toBe(4)
            // Out by an update, in by another, and moved to another partition.
            yield* store.update(Files, file("a", 1, true))
            yield* store.update(Files, file("b", 2, false))
            yield* store.update(Files, file("d", 4, false, "o2"))
            expect(yield* live()).toEqual(["b", "c"])
            expect(yield* store.count(Files, "live", "o1")).toBe(2)
            expect(yield* live("o2")).toEqual(["d"])
            expect(yield* store.count(Files, "live", "o2")).toBe(1)
            // Removing a row that is out of the order, and one that is in it.
            yield* store.remove(Files, "a")
            yield* store.remove(Files, "c")
            expect(yield* live()).toEqual(["b"])
            expect(yield* store.count(Files, "live", "o1")).toBe(1)
            expect(yield* store.count(Files, "all", "o1")).toBe(1)
            // A rolled-back move out leaves the row in.
            yield* Effect.exit(store.transaction(Effect.andThen(store.update(Files, file("b", 2, true)), Effect.fail(new Boom()))))
            expect(yield* live()).toEqual(["b"])
            expect(yield* store.count(Files, "live", "o1")).toBe(1)
          })
        ))

      it.effect("return nothing for limit 0", () =>
        withRows((store) =>
          Effect.gen(function*() {
            expect(yield* pageIds(store, { descending: false, backward: false, limit: 0 })).toEqual([])
            expect(yield* pageIds(store, { descending: true, backward: true, limit: 0 })).toEqual([])
          })
        ))

      // Each run draws its rows from a seed of its own, so a failure is the same on every run of the suite.
      it.live(`page through ${scale.propertyRows} rows with ties in every direction without duplicates or gaps (property)`, () =>
        Effect.forEach(Array.from({ length: scale.propertyRuns }, (_, i) => i), (runNumber) =>
          Effect.gen(function*() {
            const pick = <A>(of: ReadonlyArray<A>) => Effect.map(Random.nextIntBetween(0, of.length - 1), (i) => of[i]!)
            const text = (unit: ReadonlyArray<string>, maxLength: number) =>
              Effect.flatMap(Random.nextIntBetween(1, maxLength), (length) =>
                Effect.map(Effect.forEach(Array.from({ length }), () => pick(unit)), (units) => units.join("")))
            const taken = new Set<string>()
            while (taken.size < scale.propertyRows) taken.add(yield* text([..."0123456789abcdef"], 6))
            const keys = [...taken]
            const rows = Array.from({ length: scale.propertyRows })
            const ranks = yield* Effect.forEach(rows, () => Random.nextIntBetween(-5, 20))
            const names = yield* Effect.forEach(rows, () => text(["a", "b", "c"], 2))
            const partitions = yield* Effect.forEach(rows, () => pick(["p0", "p1"]))
            const limits = yield* Effect.forEach(Array.from({ length: 8 }), () => Random.nextIntBetween(1, 120))
            const all = keys.map((id, i): Person => ({ id, org: partitions[i]!, rank: ranks[i]!, name: names[i]! }))
            yield* (
              run((store) =>
                Effect.gen(function*() {
                  yield* store.transaction(Effect.forEach(all, (p) => store.insert(People, p), { discard: true }))
                  let li = 0
                  for (const order of ["byRank", "byName"] as const) {
                    const sortOf = (p: Person): Store.SortValue => (order === "byRank" ? p.rank : p.name)
                    for (const partition of ["p0", "p1"]) {
                      const expected = all
                        .filter((p) => p.org === partition)
                        .map((p) => ({ sort: sortOf(p), key: p.id }))
                        .sort(byPosition)
                        .map((p) => p.key)
                      expect(yield* store.count(People, order, partition)).toBe(expected.length)
                      for (const descending of [false, true]) {
                        const inOrder = descending ? [...expected].reverse() : expected
                        const limit = limits[li++ % limits.length]!
                        const byId = new Map(all.map((p) => [p.id, p]))
                        const pos = (id: string): Store.Position => ({ sort: sortOf(byId.get(id)!), key: id })

                        // Forward from the start.
                        const forward: Array<string> = []
                        let from: Store.Position | undefined = undefined
                        for (;;) {
                          const page = ids(yield* store.page(People, { order, partition, descending, backward: false, from, limit }))
                          expect(page.length).toBe(Math.min(limit, inOrder.length - forward.length))
                          forward.push(...page)
                          if (page.length < limit) break
                          from = pos(page[page.length - 1]!)
                        }
                        expect(forward).toEqual(inOrder)

                        // Backward from the end.
                        const backward: Array<string> = []
                        from = undefined
                        for (;;) {
                          const page = ids(yield* store.page(People, { order, partition, descending, backward: true, from, limit }))
                          expect(page.length).toBe(Math.min(limit, inOrder.length - backward.length))
                          backward.unshift(...page)
                          if (page.length < limit) break
                          from = pos(page[0]!)
                        }
                        expect(backward).toEqual(inOrder)

                        // From a position in the middle, both ways.
                        if (inOrder.length > 0) {
                          const mid = Math.floor(inOrder.length / 2)
                          const at = pos(inOrder[mid]!)
                          const after = ids(yield* store.page(People, { order, partition, descending, backward: false, from: at, limit }))
                          expect(after).toEqual(inOrder.slice(mid + 1, mid + 1 + limit))
                          const before = ids(yield* store.page(People, { order, partition, descending, backward: true, from: at, limit }))
                          expect(before).toEqual(inOrder.slice(Math.max(0, mid - limit), mid))
                        }
                      }
                    }
                  }
                })
              )
            )
          }).pipe(Random.withSeed(`store contract pages ${runNumber}`)), { discard: true }), 120_000)
    })

    describe("removing a partition", () => {
      const items = (store: Store.StoreService) =>
        Effect.gen(function*() {
          yield* store.insert(Items, { id: "i1", owner: "alice", tag: "red", code: "c1" })
          yield* store.insert(Items, { id: "i2", owner: "alice", tag: "blue", code: "c2" })
          yield* store.insert(Items, { id: "i3", owner: "alice", tag: "red" })
          yield* store.insert(Items, { id: "i4", owner: "bob", tag: "red", code: "c4" })
          yield* store.insert(Items, { id: "i5", owner: "alicea", tag: "blue" })
          yield* store.insert(Notes, { id: "i1", text: "same key, other table" })
        })
      const inOrder = (store: Store.StoreService, order: string, partition: string) =>
        store.page(Items, { order, partition, descending: false, backward: false, from: undefined, limit: 100 }).pipe(Effect.map(ids))

      it.effect("removes every row of the partition, with its unique values and its entries in every order", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* items(store)
            expect(yield* store.removePartition(Items, "byOwner", "alice")).toBe(3)
            for (const id of ["i1", "i2", "i3"]) expect(yield* store.get(Items, id)).toBeUndefined()
            expect(yield* inOrder(store, "byOwner", "alice")).toEqual([])
            expect(yield* inOrder(store, "byOwnerUncounted", "alice")).toEqual([])
            expect(yield* inOrder(store, "byTag", "red")).toEqual(["i4"])
            expect(yield* inOrder(store, "byTag", "blue")).toEqual(["i5"])
            expect(yield* store.count(Items, "byOwner", "alice")).toBe(0)
            expect(yield* store.count(Items, "byOwnerUncounted", "alice")).toBe(0)
            expect(yield* store.count(Items, "byTag", "red")).toBe(1)
            expect(yield* store.count(Items, "byTag", "blue")).toBe(1)
            expect(yield* store.findUnique(Items, "code", "c1")).toBeUndefined()
            // The unique value is free again.
            yield* store.insert(Items, { id: "i6", owner: "carol", tag: "red", code: "c1" })
            expect(yield* store.count(Items, "byTag", "red")).toBe(2)
          })
        ))

      it.effect("leaves other partitions, a partition whose name extends it, and other tables alone", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* items(store)
            yield* store.removePartition(Items, "byOwner", "alice")
            expect(yield* store.get(Items, "i4")).toEqual({ id: "i4", owner: "bob", tag: "red", code: "c4" })
            expect(yield* store.findUnique(Items, "code", "c4")).toBeDefined()
            expect(yield* inOrder(store, "byOwner", "alicea")).toEqual(["i5"])
            expect(yield* store.count(Items, "byOwner", "bob")).toBe(1)
            expect((yield* store.get(Notes, "i1"))?.text).toBe("same key, other table")
            // An empty or unknown partition removes nothing.
            expect(yield* store.removePartition(Items, "byOwner", "nobody")).toBe(0)
            expect(yield* store.removePartition(Items, "byOwner", "alice")).toBe(0)
          })
        ))

      it.effect("removes several partitions at once, each matched exactly, a repeated one once", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* items(store)
            expect(yield* store.removePartition(Items, "byOwner", ["bob", "alicea", "nobody", "bob"])).toBe(2)
            for (const id of ["i4", "i5"]) expect(yield* store.get(Items, id)).toBeUndefined()
            expect(yield* inOrder(store, "byOwner", "alice")).toEqual(["i1", "i2", "i3"])
            expect(yield* inOrder(store, "byTag", "red")).toEqual(["i1", "i3"])
            expect(yield* inOrder(store, "byTag", "blue")).toEqual(["i2"])
            expect(yield* store.count(Items, "byTag", "red")).toBe(2)
            expect(yield* store.count(Items, "byOwner", "bob")).toBe(0)
            expect(yield* store.findUnique(Items, "code", "c4")).toBeUndefined()
            expect(yield* store.findUnique(Items, "code", "c1")).toBeDefined()
            expect((yield* store.get(Notes, "i1"))?.text).toBe("same key, other table")
            // No partitions, nothing removed.
            expect(yield* store.removePartition(Items, "byOwner", [])).toBe(0)
            expect(yield* store.count(Items, "byOwner", "alice")).toBe(3)
          })
        ))

      it.effect("removes by an order whose count is not kept", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* items(store)
            expect(yield* store.removePartition(Items, "byOwnerUncounted", "bob")).toBe(1)
            expect(yield* store.get(Items, "i4")).toBeUndefined()
            expect(yield* store.count(Items, "byTag", "red")).toBe(2)
            expect(yield* store.count(Items, "byOwner", "bob")).toBe(0)
          })
        ))

      it.effect("is rolled back with its transaction, and seen by the rest of its transaction", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* items(store)
            const exit = yield* Effect.exit(store.transaction(Effect.gen(function*() {
              yield* store.removePartition(Items, "byOwner", "alice")
              expect(yield* store.get(Items, "i1")).toBeUndefined()
              expect(yield* store.count(Items, "byTag", "red")).toBe(1)
              return yield* Effect.fail(new Boom())
            })))
            expect(Exit.isFailure(exit)).toBe(true)
            expect(yield* inOrder(store, "byOwner", "alice")).toEqual(["i1", "i2", "i3"])
            expect(yield* inOrder(store, "byTag", "red")).toEqual(["i1", "i3", "i4"])
            expect(yield* store.count(Items, "byTag", "red")).toBe(3)
            expect(yield* store.count(Items, "byOwner", "alice")).toBe(3)
            expect((yield* store.findUnique(Items, "code", "c2"))?.id).toBe("i2")
          })
        ))

      it.effect("removes rows written earlier in the same transaction", () =>
        run((store) =>
          Effect.gen(function*() {
            const removed = yield* store.transaction(Effect.gen(function*() {
              yield* items(store)
              return yield* store.removePartition(Items, "byTag", "red")
            }))
            expect(removed).toBe(3)
            expect(yield* inOrder(store, "byOwner", "alice")).toEqual(["i2"])
            expect(yield* store.count(Items, "byOwner", "alice")).toBe(1)
          })
        ))
    })

    describe("selections and copies", () => {
      // Parents: the owners, listed in Events' one partition; their keys name Items' byOwner partitions and Notes' keys.
      const world = (store: Store.StoreService) =>
        Effect.gen(function*() {
          yield* store.insert(Events, { id: "alice", text: "a" })
          yield* store.insert(Events, { id: "bob", text: "b" })
          yield* store.insert(Items, { id: "i1", owner: "alice", tag: "red", code: "c1" })
          yield* store.insert(Items, { id: "i2", owner: "alice", tag: "blue", code: "c2" })
          yield* store.insert(Items, { id: "i3", owner: "bob", tag: "red" })
          yield* store.insert(Items, { id: "i4", owner: "carol", tag: "red", code: "c4" })
          yield* store.insert(Notes, { id: "alice", text: "alice's note" })
          yield* store.insert(Notes, { id: "dave", text: "no owner of that name" })
        })
      const owners: Store.Partition = { table: Events, order: "byText", partition: "" }
      const selections: ReadonlyArray<Store.Selection> = [
        { table: Items, order: "byOwner", prefix: "", parents: owners },
        { table: Notes, sameKeys: owners },
        owners
      ]
      const view = (store: Store.StoreService) =>
        Effect.gen(function*() {
          const inOrder = (order: string, partition: string) =>
            store.page(Items, { order, partition, descending: false, backward: false, from: undefined, limit: 100 }).pipe(Effect.map(ids))
          return {
            items: [yield* store.get(Items, "i1"), yield* store.get(Items, "i2"), yield* store.get(Items, "i3"), yield* store.get(Items, "i4")],
            red: yield* inOrder("byTag", "red"),
            alice: yield* inOrder("byOwner", "alice"),
            counts: [yield* store.count(Items, "byTag", "red"), yield* store.count(Items, "byOwner", "alice"), yield* store.count(Events, "byText", "")],
            c1: (yield* store.findUnique(Items, "code", "c1"))?.id,
            notes: [yield* store.get(Notes, "alice"), yield* store.get(Notes, "dave")],
            owners: yield* store.page(Events, { order: "byText", partition: "", descending: false, backward: false, from: undefined, limit: 10 }).pipe(Effect.map(ids))
          }
        })

      it.effect("removes every selection's rows at once: children through their parents, rows under their parents' keys, the parents", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* world(store)
            expect(yield* store.removeRows(selections)).toEqual([3, 1, 2])
            const after = yield* view(store)
            expect(after.items.map((i) => i?.id)).toEqual([undefined, undefined, undefined, "i4"])
            expect(after.red).toEqual(["i4"])
            expect(after.counts).toEqual([1, 0, 0])
            expect(after.c1).toBeUndefined()
            expect(after.notes.map((n) => n?.id)).toEqual([undefined, "dave"])
            expect(yield* store.removeRows(selections)).toEqual([0, 0, 0])
          })
        ))

      it.effect("leaves out the rows a selection's except names, and counts a row found twice once", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* world(store)
            const removed = yield* store.removeRows([
              { table: Items, order: "byTag", partition: "red", except: { field: "owner", equals: "bob" } },
              { table: Items, order: "byOwner", partition: "alice" }
            ])
            expect(removed).toEqual([2, 1])
            expect((yield* view(store)).items.map((i) => i?.id)).toEqual([undefined, undefined, "i3", undefined])
          })
        ))

      it.effect("saves selections into a copy and puts it back in place of the rows that changed since", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* world(store)
            const before = yield* view(store)
            expect(yield* store.copies.save("copy1", selections)).toEqual([3, 1, 2])
            // A row already in the copy is not added again.
            expect(yield* store.copies.saveRows("copy1", Notes, [{ id: "alice", text: "ignored" }, { id: "extra", text: "given by value" }])).toBe(1)
            expect((yield* store.copies.rows("copy1")).map((r) => `${r.table}/${(r.row as { id: string }).id}`)).toEqual([
              "contract_events/alice", "contract_events/bob", "contract_items/i1", "contract_items/i2", "contract_items/i3",
              "contract_notes/alice", "contract_notes/extra"
            ])
            // A test: a row changed, one removed, one added, a unique value moved.
            yield* store.update(Items, { id: "i1", owner: "alice", tag: "blue" })
            yield* store.remove(Items, "i2")
            yield* store.insert(Items, { id: "i9", owner: "bob", tag: "red", code: "c2" })
            yield* store.insert(Events, { id: "erin", text: "e" })
            const restored = yield* store.copies.restore("copy1", { tables: [Items, Notes, Events], replacing: selections })
            expect(restored).toBe(7)
            expect(yield* view(store)).toEqual(before)
            expect(yield* store.get(Items, "i9")).toBeUndefined()
            expect((yield* store.get(Notes, "extra"))?.text).toBe("given by value")
            expect((yield* store.findUnique(Items, "code", "c2"))?.id).toBe("i2")
            // Again, with nothing changed: the same world.
            yield* store.copies.restore("copy1", { tables: [Items, Notes, Events], replacing: selections })
            expect(yield* view(store)).toEqual(before)
            expect(yield* store.copies.remove("copy1")).toBe(7)
            expect(yield* store.copies.rows("copy1")).toEqual([])
          })
        ))

      it.effect("refuses a copy whose key or unique value another row holds, and changes nothing", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* world(store)
            yield* store.copies.save("copy1", selections)
            yield* store.removeRows(selections)
            // Carol's item, outside the replaced rows, takes alice's code.
            yield* store.update(Items, { id: "i4", owner: "carol", tag: "red", code: "c1" })
            const before = yield* view(store)
            const refused = yield* Effect.flip(store.copies.restore("copy1", { tables: [Items, Notes, Events], replacing: selections }))
            expect(refused).toMatchObject({ _tag: "UniqueViolation", table: "contract_items", unique: "code", key: "i1" })
            expect(yield* view(store)).toEqual(before)
            const unknown = yield* Effect.flip(store.copies.restore("copy1", { tables: [Items, Events], replacing: selections }))
            expect(unknown).toMatchObject({ _tag: "UnknownTable", table: "contract_notes" })
            expect(yield* view(store)).toEqual(before)
          })
        ))

      it.effect("finds what a restore would refuse, before it is tried: a key or unique value held outside the rows replaced", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* world(store)
            const options = { tables: [Items, Notes, Events], replacing: selections }
            // A copy that holds the rows as they are is in nobody's way; one of a table not named is refused.
            yield* store.copies.save("same", selections)
            expect(yield* store.copies.conflict("same", options)).toBeUndefined()
            expect(yield* Effect.flip(store.copies.conflict("same", { ...options, tables: [Items, Events] }))).toMatchObject({ _tag: "UnknownTable", table: "contract_notes" })
            expect(yield* store.copies.conflict("no such copy", options)).toBeUndefined()
            // Rows given by value, as an import brings them: alice's item again (replaced, so taken by nothing), an
            // item whose key i4 carol holds, one whose code carol's item holds, and one clear of everything.
            yield* store.copies.saveRows("imported", Items, [
              { id: "i1", owner: "alice", tag: "green", code: "c1" },
              { id: "i5", owner: "bob", tag: "red", code: "c4" },
              { id: "i6", owner: "bob", tag: "red", code: "c6" }
            ])
            expect(yield* store.copies.conflict("imported", options)).toMatchObject({ _tag: "UniqueViolation", table: "contract_items", unique: "code", key: "i5" })
            yield* store.copies.saveRows("imported", Items, [{ id: "i4", owner: "alice", tag: "red" }])
            expect(yield* store.copies.conflict("imported", options)).toMatchObject({ _tag: "UniqueViolation", table: "contract_items", unique: "primary", key: "i4" })
            // What it names is what the restore refuses, and neither changed anything.
            const before = yield* view(store)
            expect(yield* Effect.flip(store.copies.restore("imported", options))).toMatchObject({ _tag: "UniqueViolation", table: "contract_items" })
            expect(yield* view(store)).toEqual(before)
            // With carol's item among the rows replaced, nothing is in the way, and the restore takes every row.
            const wider = { ...options, replacing: [...selections, { table: Items, order: "byOwner", partition: "carol" }] }
            expect(yield* store.copies.conflict("imported", wider)).toBeUndefined()
            expect(yield* store.copies.restore("imported", wider)).toBe(4)
            expect((yield* store.findUnique(Items, "code", "c4"))?.id).toBe("i5")
          })
        ))

      it.effect("is written and rolled back with its transaction", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* world(store)
            const exit = yield* Effect.exit(store.transaction(Effect.gen(function*() {
              yield* store.copies.save("copy1", selections)
              return yield* Effect.fail(new Boom())
            })))
            expect(Exit.isFailure(exit)).toBe(true)
            expect(yield* store.copies.rows("copy1")).toEqual([])
          })
        ))
    })

    describe("sequence and outbox", () => {
      it.effect("hand out increasing numbers that a rollback does not take back", () =>
        run((store) =>
          Effect.gen(function*() {
            const a = yield* store.nextSequence
            yield* Effect.exit(store.transaction(Effect.andThen(store.nextSequence, Effect.fail(new Boom()))))
            const b = yield* store.nextSequence
            expect(b).toBeGreaterThan(a + 1)
          })
        ))

      it.effect("are raised past numbers another store handed out, never lowered, in or out of a transaction", () =>
        run((store) =>
          Effect.gen(function*() {
            const a = yield* store.nextSequence
            yield* store.raiseSequence(a + 7)
            expect(yield* store.nextSequence).toBeGreaterThan(a + 7)
            expect(yield* store.nextNumber).toBeGreaterThan(a + 7)
            // Far past, as a snapshot from a busy store's is.
            const far = a + 5_000_000
            const taken = yield* store.transaction(Effect.gen(function*() {
              const first = yield* store.nextSequence
              yield* store.raiseSequence(far)
              return [first, yield* store.nextSequence, yield* store.nextSequence, yield* store.nextNumber] as const
            }))
            expect(taken[0]).toBeLessThan(far)
            for (const n of taken.slice(1)) expect(n).toBeGreaterThan(far)
            const next = yield* store.nextSequence
            yield* store.raiseSequence(a)
            expect(yield* store.nextSequence).toBeGreaterThan(next)
          })
        ))

      it.effect("hand out many numbers at once, increasing, above every number before and below every one after", () =>
        run((store) =>
          Effect.gen(function*() {
            const before = yield* store.nextSequence
            const taken = yield* store.transaction(Effect.gen(function*() {
              // Numbers a transaction took a block of earlier may still be handed out below them.
              yield* store.nextSequence
              return yield* store.takeNumbers(300)
            }))
            expect(taken).toHaveLength(300)
            expect([...taken].sort((x, y) => x - y)).toEqual(taken)
            expect(new Set(taken).size).toBe(300)
            expect(taken[0]).toBeGreaterThan(before)
            expect(yield* store.nextSequence).toBeGreaterThan(taken[299]!)
            expect(yield* store.takeNumbers(0)).toEqual([])
            // Beside concurrent callers, no number is handed out twice.
            const runs = yield* Effect.forEach(Array.from({ length: 12 }, (_, i) => i), (i) =>
              i % 3 === 0 ? store.takeNumbers(50) : store.transaction(Effect.forEach([1, 2, 3], () => store.nextSequence)), { concurrency: 6 })
            const all = runs.flat()
            expect(new Set(all).size).toBe(all.length)
          })
        ))

      it.effect("hand out distinct numbers to concurrent callers, increasing within each transaction", () =>
        run((store) =>
          Effect.gen(function*() {
            const runs = yield* Effect.forEach(Array.from({ length: 40 }, (_, i) => i), () =>
              store.transaction(Effect.gen(function*() {
                const taken: Array<number> = []
                for (let i = 0; i < 5; i++) taken.push(yield* store.nextSequence)
                return taken
              })), { concurrency: 8 })
            for (const taken of runs) expect([...taken].sort((x, y) => x - y)).toEqual(taken)
            const all = runs.flat()
            expect(new Set(all).size).toBe(all.length)
          })
        ))

      it.effect("read events in the order they were written, with a rolled-back change's events gone", () =>
        run((store) =>
          Effect.gen(function*() {
            const emit = (type: string) => Outbox.appendEvent({ type, organizationId: "org_x", environment: "sandbox", data: { type } })
            yield* store.transaction(Effect.andThen(emit("a.one"), emit("a.two")))
            yield* Effect.exit(store.transaction(Effect.andThen(emit("ghost"), Effect.fail(new Boom()))))
            const third = yield* emit("b.three")
            const all = yield* Outbox.readEvents(undefined, 10)
            expect(all.map((e) => e.type)).toEqual(["a.one", "a.two", "b.three"])
            expect(all.map((e) => e.sequence)).toEqual([...all.map((e) => e.sequence)].sort((x, y) => x - y))
            expect((yield* Outbox.readEvents(all[1]!.sequence, 10)).map((e) => e.id)).toEqual([third.id])
            expect(all[0]!.data).toEqual({ type: "a.one" })
          })
        ))
    })

    describe("the ledger", () => {
      const scope = "org_contract/sandbox"
      const wallet: Ledger.Holder = { scope, type: "wallet", id: "wlt_race" }
      const world: Ledger.Holder = { scope, type: "world", id: "chain:base" }
      const usdc = { code: "USDC", chain: "base" } as const
      const payout = (id: string, kind: "posted" | "pending"): Ledger.TransferRequest =>
        ({ kind, id, debit: wallet, credit: world, asset: usdc, amount: 60n, code: "payout" })

      // Live: the racing transactions really sleep while they hold their locks.
      it.live("lets only one of two racing payouts spend the same balance, reserved or posted", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* Ledger.transfer([{ kind: "posted", id: "deposit", debit: world, credit: wallet, asset: usdc, amount: 100n, code: "deposit" }])
            for (const kind of ["pending", "posted"] as const) {
              // Each payout in a transaction of its own that holds on a little after booking, so both are in flight.
              const racing = (id: string) =>
                Effect.exit(store.transaction(Effect.andThen(Ledger.transfer([payout(`${kind}-${id}`, kind)]), Effect.sleep("20 millis"))))
              const [a, b] = yield* Effect.all([racing("a"), racing("b")], { concurrency: 2 })
              expect([a, b].filter(Exit.isSuccess)).toHaveLength(kind === "pending" ? 1 : 0)
              const refused = [a, b].filter(Exit.isFailure).map((e) => Cause.findErrorOption(e.cause))
              for (const r of refused) expect(r._tag === "Some" && r.value instanceof Ledger.LedgerRefusal && r.value.reason).toBe("insufficient_funds")
            }
            // 60 reserved by the pending payout that won; nothing else could be spent.
            expect(yield* Ledger.balanceIn(wallet, usdc)).toMatchObject({ available: 40n, pending: 60n, posted: 100n })
            expect(yield* Ledger.balanceIn(world, usdc)).toMatchObject({ posted: -100n })
          })
        ))

      it.effect("takes a whole linked batch back when one of its transfers is refused", () =>
        run((store) =>
          Effect.gen(function*() {
            yield* Ledger.transfer([{ kind: "posted", id: "deposit", debit: world, credit: wallet, asset: usdc, amount: 100n, code: "deposit" }])
            const exit = yield* Effect.exit(Ledger.transfer([payout("first", "posted"), payout("second", "posted")]))
            expect(Exit.isFailure(exit)).toBe(true)
            expect(yield* Ledger.balanceIn(wallet, usdc)).toMatchObject({ available: 100n, pending: 0n })
            // The refused batch left nothing behind: the same ids book once the money is there.
            yield* Ledger.transfer([{ kind: "posted", id: "more", debit: world, credit: wallet, asset: usdc, amount: 20n, code: "deposit" }])
            yield* Ledger.transfer([payout("first", "posted"), payout("second", "posted")])
            expect(yield* Ledger.balanceIn(wallet, usdc)).toMatchObject({ available: 0n })
          })
        ))
    })

    describe("timers", () => {
      it.effect("fire in due order, each once, only when due, and not when their transaction rolled back", () => {
        const fired: Array<string> = []
        const handlers = Timers.layerTimerHandlers({ note: (p: { name: string }) => Effect.sync(() => void fired.push(p.name)) })
        return run(() =>
          Effect.gen(function*() {
            const store = yield* Store.Store
            yield* Timers.schedule("note", 3_000, { name: "c" })
            yield* store.transaction(Effect.andThen(Timers.schedule("note", 1_000, { name: "a" }), Timers.schedule("note", 2_000, { name: "b" })))
            yield* Effect.exit(store.transaction(Effect.andThen(Timers.schedule("note", 500, { name: "ghost" }), Effect.fail(new Boom()))))
            expect(yield* Timers.fireDue(999)).toBe(0)
            yield* Timers.fireDue(2_000)
            expect(fired).toEqual(["a", "b"])
            yield* Timers.fireDue(2_000)
            expect(fired).toEqual(["a", "b"])
            yield* Timers.fireDue(10_000)
            expect(fired).toEqual(["a", "b", "c"])
            expect(yield* Timers.nextTimer).toBeUndefined()
          }).pipe(Effect.provide(handlers))
        )
      })
    })
  }
  return cases
}
