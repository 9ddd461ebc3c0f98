/**
 * The contract's durability cases, for a store that says it is durable (`StoreUnderTest.durable`): what a store
 * committed is what the store opened again at the same place finds, after a close, and after its process was
 * killed (SIGKILL) in the middle of its commits. A store that acknowledges a commit it has not made durable fails
 * them: the memory store with an image that keeps nothing does (packages/core/test/StoreContract.test.ts).
 */
import { Effect, type Layer } from "effect"
import * as Store from "../kernel/Store.ts"
import { expect } from "./Expect.ts"
import { collector, type Processes, type StoreContractCase, type StoreUnderTest } from "./Suite.ts"

interface Kept {
  readonly id: string
  readonly group: string
  readonly n: number
  readonly code?: string
}

const Kept = Store.table<Kept>({
  name: "contract_kept",
  key: (k) => k.id,
  unique: { code: (k) => k.code },
  orders: { byGroup: { partition: (k) => k.group, sort: (k) => k.n } }
})

/** One row per commit of the child process, and the number of the last commit, written by the same transaction. */
interface Commit {
  readonly id: string
  readonly n: number
  readonly text: string
}

const Commits = Store.table<Commit>({ name: "contract_commits", key: (c) => c.id })

const commitRow = (n: number): Commit => ({ id: `commit-${n}`, n, text: `commit ${n} ${"·".repeat(n % 64)}` })

/**
 * What the child process runs (store-contract/child.ts): `commits` transactions on the store `layer` opens, each
 * writing its own row and the last commit's number; `acknowledge(n)` once commit `n` has returned. Then it holds the
 * store open, so that the kill finds it open.
 */
export const commitLoop = <E>(layer: Layer.Layer<Store.Store, E>, commits: number, acknowledge: (n: number) => void): Effect.Effect<never, E> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    for (let n = 0; n < commits; n++) {
      yield* Effect.orDie(store.transaction(Effect.gen(function*() {
        yield* store.insert(Commits, commitRow(n))
        const last = yield* store.getForUpdate(Commits, "last")
        yield* last === undefined ? store.insert(Commits, { id: "last", n, text: "" }) : store.update(Commits, { ...last, n })
      })))
      acknowledge(n)
    }
    return yield* Effect.never
  }).pipe(Effect.provide(layer))

const groupRows = (store: Store.StoreService, group: string) =>
  Effect.map(
    store.page(Kept, { order: "byGroup", partition: group, descending: false, backward: false, from: undefined, limit: 100 }),
    (rows) => rows.map((r) => r.id)
  )

class Rollback {
  readonly _tag = "Rollback"
}

export const durabilityCases = <E>(subject: StoreUnderTest<E>, processes: Processes | undefined): ReadonlyArray<StoreContractCase> => {
  const durable = subject.durable
  if (durable === undefined) return []
  const { cases, describe, it } = collector()
  /** Runs `program` on the store at `place`, opened for it and closed after it. */
  const at = <A, E2>(place: string, program: (store: Store.StoreService) => Effect.Effect<A, E2, Store.Store>) =>
    Effect.provide(Effect.gen(function*() {
      return yield* program(yield* Store.Store)
    }), durable.open(place))
  const withPlace = (body: (place: string) => Promise<void>) => async () => {
    const place = await durable.place()
    try {
      await body(place)
    } finally {
      await durable.remove?.(place)
    }
  }

  describe("durability", () => {
    it("keeps what it committed across a close and a reopen, and nothing a rollback took back", withPlace(async (place) => {
      const first = await Effect.runPromise(at(place, (store) =>
        Effect.gen(function*() {
          yield* Effect.orDie(store.insertMany(Kept, [
            { id: "k1", group: "g1", n: 1, code: "c1" },
            { id: "k2", group: "g1", n: 2, code: "c2" },
            { id: "k3", group: "g1", n: 3 },
            { id: "k4", group: "g2", n: 4, code: "c4" }
          ]))
          yield* Effect.orDie(store.transaction(Effect.gen(function*() {
            yield* store.update(Kept, { id: "k2", group: "g2", n: 0, code: "c2b" })
            yield* store.remove(Kept, "k3")
          })))
          yield* Effect.exit(store.transaction(Effect.gen(function*() {
            yield* store.insert(Kept, { id: "k9", group: "g1", n: 9, code: "c9" })
            yield* store.update(Kept, { id: "k1", group: "g2", n: 1 })
            return yield* Effect.fail(new Rollback())
          })))
          // The numbers a committed transaction took are never handed out again (one taken outside any
          // transaction may be, as nothing committed holds it).
          return yield* store.transaction(Effect.gen(function*() {
            yield* store.copies.save("kept", [{ table: Kept, order: "byGroup", partition: "g1" }])
            return yield* store.nextSequence
          }))
        })))

      const second = await Effect.runPromise(at(place, (store) =>
        Effect.gen(function*() {
          expect(yield* store.get(Kept, "k1"), "k1 after a reopen").toEqual({ id: "k1", group: "g1", n: 1, code: "c1" })
          expect(yield* store.get(Kept, "k2"), "k2 after a reopen").toEqual({ id: "k2", group: "g2", n: 0, code: "c2b" })
          expect(yield* store.get(Kept, "k3"), "k3, removed").toBeUndefined()
          expect(yield* store.get(Kept, "k9"), "k9, rolled back").toBeUndefined()
          expect((yield* store.findUnique(Kept, "code", "c2b"))?.id, "the unique value c2b").toBe("k2")
          expect(yield* store.findUnique(Kept, "code", "c2"), "the unique value k2 left").toBeUndefined()
          expect(yield* store.findUnique(Kept, "code", "c9"), "the unique value of a rollback").toBeUndefined()
          expect(yield* groupRows(store, "g1"), "the order's partition g1").toEqual(["k1"])
          expect(yield* groupRows(store, "g2"), "the order's partition g2").toEqual(["k2", "k4"])
          expect(yield* store.count(Kept, "byGroup", "g2"), "the count of g2").toBe(2)
          expect((yield* store.copies.rows("kept")).map((r) => (r.row as Kept).id), "the copy's rows").toEqual(["k1"])
          expect(yield* store.nextSequence, "the sequence after a reopen").toBeGreaterThan(first)
          // A taken unique value is still taken.
          expect(yield* Effect.flip(store.insert(Kept, { id: "k5", group: "g1", n: 5, code: "c4" })), "a taken unique value").toMatchObject({ _tag: "UniqueViolation" })
          return yield* Effect.orDie(store.transaction(Effect.gen(function*() {
            yield* store.update(Kept, { id: "k1", group: "g1", n: 10, code: "c1" })
            yield* store.remove(Kept, "k4")
            yield* store.insert(Kept, { id: "k6", group: "g2", n: 6, code: "c4" })
            yield* store.copies.remove("kept")
            return yield* store.nextSequence
          })))
        })))

      await Effect.runPromise(at(place, (store) =>
        Effect.gen(function*() {
          expect(yield* store.get(Kept, "k1"), "k1 after a second reopen").toEqual({ id: "k1", group: "g1", n: 10, code: "c1" })
          expect(yield* store.get(Kept, "k4"), "k4, removed after the first reopen").toBeUndefined()
          expect((yield* store.findUnique(Kept, "code", "c4"))?.id, "c4, taken again").toBe("k6")
          expect(yield* groupRows(store, "g2"), "the order's partition g2").toEqual(["k2", "k6"])
          expect(yield* store.copies.rows("kept"), "a removed copy").toEqual([])
          expect(yield* store.nextSequence, "the sequence after a second reopen").toBeGreaterThan(second)
        })))
    }), 60_000)

    const module = durable.module
    if (module !== undefined && processes !== undefined) {
      it(`loses no acknowledged commit when its process is killed (SIGKILL) in the middle of its commits`, withPlace(async (place) => {
        const committer = processes.startCommitter({ module, place, commits: killCommits.commits })
        let ended: Awaited<ReturnType<typeof committer.kill>>
        try {
          await committer.acknowledgedAtLeast(killCommits.killAfter)
        } finally {
          ended = await committer.kill()
        }
        expect(ended.signal, `how the child ended (stderr: ${ended.stderr})`).toBe("SIGKILL")
        const acknowledged = [...committer.acknowledged]
        expect(acknowledged.length, "commits acknowledged before the kill").toBeGreaterThanOrEqual(killCommits.killAfter)
        // Killed in the middle of its commits, not after its last.
        expect(acknowledged.length, "commits acknowledged before the kill").toBeLessThan(killCommits.commits)
        await Effect.runPromise(at(place, (store) =>
          Effect.gen(function*() {
            const last = yield* store.get(Commits, "last")
            expect(last?.n, "the last commit the store holds").toBeGreaterThanOrEqual(acknowledged[acknowledged.length - 1]!)
            // Every commit up to the last one held, acknowledged or not: none is lost, and none is half there.
            for (let n = 0; n <= (last?.n ?? -1); n++) expect(yield* store.get(Commits, `commit-${n}`), `commit ${n}`).toEqual(commitRow(n))
            expect(yield* store.get(Commits, `commit-${(last?.n ?? -1) + 1}`), "the row of a commit the store does not count as made").toBeUndefined()
            for (const n of acknowledged) expect(yield* store.get(Commits, `commit-${n}`), `acknowledged commit ${n}`).toEqual(commitRow(n))
          })))
      }), 60_000)
    }
  })
  return cases
}

/** How many commits the child makes at most, and after how many acknowledged the parent kills it. */
const killCommits = { commits: 400, killAfter: 60 }
