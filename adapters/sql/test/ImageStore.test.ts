/**
 * The PGlite store (src/ImageStore.ts): the memory store with the PGlite database as its durable image. It passes
 * the storage contract, and what it committed is what a store opened again on the same database finds: rows,
 * indexes, unique values, copies and the sequence, after random writes, rollbacks and copies.
 */
import { rmSync } from "node:fs"
import { PGlite } from "@electric-sql/pglite"
import { Store } from "@fos/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { describeStoreContract } from "@fos/core/store-contract/vitest"
import { layerPgliteClient, layerPgliteStore, makeImageStore, migrate } from "../src/index.ts"
import { PgliteStatementError, preparedStatements } from "../src/PglitePrepared.ts"
import { freshPgliteDirectory } from "./pgliteDirectory.ts"

const dir = await freshPgliteDirectory("pglite-image")
let db: PGlite
beforeAll(async () => {
  // The migrations through the SQL client, as the store's layer runs them; then the database alone.
  const client = ManagedRuntime.make(layerPgliteClient(dir))
  await client.runPromise(migrate)
  await client.dispose()
  db = await PGlite.create(dir)
}, 60_000)
afterAll(async () => {
  await db.close()
  rmSync(dir, { recursive: true, force: true })
})

const empty = () => db.exec(`TRUNCATE fos_rows, fos_copies, fos_copy_rows, fos_log; ALTER SEQUENCE fos_sequence RESTART`)

/** A store on the emptied database. */
const freshStore = () => Layer.effect(Store.Store, Effect.andThen(Effect.promise(empty), Effect.suspend(() => makeImageStore(db))))

// Durable as fos serves it (layerPgliteStore): a directory of its own, closed and opened again, and killed mid-commit.
describeStoreContract({
  name: "PGlite image",
  fresh: freshStore,
  scale: { propertyRows: 300, propertyRuns: 4 },
  durable: {
    place: () => freshPgliteDirectory("pglite-image-durable"),
    open: layerPgliteStore,
    remove: async (place) => rmSync(place, { recursive: true, force: true }),
    module: { url: new URL("../src/index.ts", import.meta.url).href, export: "layerPgliteStore" }
  }
})

interface Account {
  readonly id: string
  readonly owner: string
  readonly balance: number
  readonly handle?: string
}

const Accounts = Store.table<Account>({
  name: "image_accounts",
  key: (a) => a.id,
  unique: { handle: (a) => a.handle },
  orders: { byOwner: { partition: (a) => a.owner, sort: (a) => a.balance } }
})

/** Everything observable of the accounts of `owners` and of copy `copy`, to compare two stores. */
const observe = (store: Store.StoreService, ids: ReadonlyArray<string>, owners: ReadonlyArray<string>, copy: string) =>
  Effect.gen(function*() {
    const rows = yield* Effect.forEach(ids, (id) => store.get(Accounts, id))
    const pages = yield* Effect.forEach(owners, (owner) =>
      store.page(Accounts, { order: "byOwner", partition: owner, descending: false, backward: false, from: undefined, limit: 1000 }))
    const counts = yield* Effect.forEach(owners, (owner) => store.count(Accounts, "byOwner", owner))
    const handles = yield* Effect.forEach(ids, (id) => Effect.map(store.findUnique(Accounts, "handle", `h-${id}`), (a) => a?.id))
    const copied = yield* store.copies.rows(copy)
    return { rows, pages, counts, handles, copied }
  })

type Step =
  | { readonly op: "put"; readonly id: string; readonly owner: string; readonly balance: number; readonly handle: boolean }
  | { readonly op: "remove"; readonly id: string }
  | { readonly op: "failed"; readonly id: string }
  | { readonly op: "save" }
  | { readonly op: "saveThenChange"; readonly id: string }
  | { readonly op: "drop" }
  | { readonly op: "restore" }
  | { readonly op: "number" }

const ids = ["a", "b", "c"]
const owners = ["o1", "o2"]
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constant("put" as const), id: fc.constantFrom(...ids), owner: fc.constantFrom(...owners), balance: fc.integer({ min: 0, max: 9 }), handle: fc.boolean() }),
  fc.record({ op: fc.constant("remove" as const), id: fc.constantFrom(...ids) }),
  fc.record({ op: fc.constant("failed" as const), id: fc.constantFrom(...ids) }),
  fc.constant({ op: "save" as const }),
  fc.record({ op: fc.constant("saveThenChange" as const), id: fc.constantFrom(...ids) }),
  fc.constant({ op: "drop" as const }),
  fc.constant({ op: "restore" as const }),
  fc.constant({ op: "number" as const })
)

const everyAccount = owners.map((owner): Store.Selection => ({ table: Accounts, order: "byOwner", partition: owner }))

const run = (store: Store.StoreService, s: Step): Effect.Effect<void> => {
  switch (s.op) {
    case "put":
      return store.transaction(Effect.gen(function*() {
        const row: Account = { id: s.id, owner: s.owner, balance: s.balance, ...(s.handle ? { handle: `h-${s.id}` } : {}) }
        const current = yield* store.getForUpdate(Accounts, s.id)
        yield* current === undefined ? store.insert(Accounts, row) : store.update(Accounts, row)
      })).pipe(Effect.ignore)
    case "remove":
      return store.remove(Accounts, s.id)
    case "failed":
      // A transaction that writes, then fails: nothing of it reaches the image.
      return store.transaction(Effect.gen(function*() {
        yield* store.remove(Accounts, s.id)
        yield* store.insert(Accounts, { id: `${s.id}-ghost`, owner: "o1", balance: 1 })
        yield* store.copies.save("ghost", everyAccount)
        return yield* Effect.fail("boom")
      })).pipe(Effect.ignore)
    case "save":
      return Effect.asVoid(store.copies.save("copy", everyAccount))
    case "saveThenChange":
      // The copy holds the row as it was when saved, not as the transaction leaves it.
      return store.transaction(Effect.gen(function*() {
        yield* store.copies.save("copy", everyAccount)
        const current = yield* store.getForUpdate(Accounts, s.id)
        if (current !== undefined) yield* Effect.orDie(store.update(Accounts, { ...current, balance: current.balance + 1 }))
      }))
    case "drop":
      return Effect.asVoid(store.copies.remove("copy"))
    case "restore":
      return Effect.asVoid(Effect.ignore(store.copies.restore("copy", { tables: [Accounts], replacing: everyAccount })))
    case "number":
      return Effect.asVoid(store.transaction(store.nextSequence))
  }
}

describe("the PGlite image", () => {
  // The log folded into the tables at each commit past 300 characters (every few), and never: the tables and the log
  // after any number of folds, replayed, are what the store committed.
  it.each([["folded often", 300], ["not folded", undefined]] as const)("is what the store committed: a store opened again finds the same rows, indexes, copies and sequence (%s)", async (_, foldAtChars) => {
    const options = foldAtChars === undefined ? {} : { foldAtChars }
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 30, size: "max" }), fc.integer({ min: 0, max: 30 }), async (steps, reopenAt) => {
        await empty()
        const program = Effect.gen(function*() {
          let live = yield* makeImageStore(db, options)
          for (const [i, s] of steps.entries()) {
            // Opened again in the middle too: a store that replayed a log writes on after it.
            if (i === reopenAt) live = yield* makeImageStore(db, options)
            yield* run(live, s)
          }
          const seen = yield* observe(live, [...ids, ...ids.map((id) => `${id}-ghost`)], owners, "copy")
          const handed = yield* live.nextSequence
          const reopened = yield* makeImageStore(db, options)
          expect(yield* observe(reopened, [...ids, ...ids.map((id) => `${id}-ghost`)], owners, "copy")).toEqual(seen)
          expect(yield* reopened.copies.rows("ghost")).toEqual([])
          // Numbers go on from those the committed transactions took (the one above committed nothing).
          expect(yield* reopened.nextSequence).toBeGreaterThanOrEqual(handed)
        })
        await Effect.runPromise(program)
      }),
      { numRuns: 25 }
    )
  }, 120_000)

  // A transaction of more than 500 entries is logged as several records (one PGlite transaction), replayed in turn.
  it.each([["pausing", true], ["not pausing", false]] as const)("takes a transaction of thousands of rows, written and removed, as it takes one of a few (%s)", async (_, pauses) => {
    await empty()
    const program = Effect.gen(function*() {
      const store = yield* makeImageStore(db, { pauses })
      const records = () => Effect.map(Effect.promise(() => db.query<{ n: number }>(`SELECT count(*)::int AS n FROM fos_log`)), (r) => r.rows[0]!.n)
      const many = Array.from({ length: 3000 }, (_, i): Account => ({ id: `m${String(i).padStart(4, "0")}`, owner: `o${i % 3}`, balance: i % 10, ...(i % 2 === 0 ? { handle: `h-m${i}` } : {}) }))
      yield* store.insertMany(Accounts, many)
      expect(yield* records()).toBe(6)
      yield* Effect.asVoid(store.copies.save("many", owners.concat("o0").map((owner): Store.Selection => ({ table: Accounts, order: "byOwner", partition: owner }))))
      // A copy of rows the tables do not hold (an import's), sent in its records, replacing one of the same name.
      yield* Effect.asVoid(store.copies.saveRows("sent", Accounts, many.slice(0, 100)))
      yield* store.transaction(Effect.gen(function*() {
        yield* Effect.asVoid(store.copies.remove("sent"))
        yield* Effect.asVoid(store.copies.saveRows("sent", Accounts, many.slice(0, 1200).map((a) => ({ ...a, balance: a.balance + 100 }))))
      }))
      yield* Effect.asVoid(store.removeRows([{ table: Accounts, order: "byOwner", partition: "o1" }]))
      // A restore of every row of a copy and the removal of the others; then of the 600 rows changed since, by key.
      const all = ["o0", ...owners].map((owner): Store.Selection => ({ table: Accounts, order: "byOwner", partition: owner }))
      yield* Effect.asVoid(store.copies.restore("sent", { tables: [Accounts], replacing: all }).pipe(Effect.orDie))
      yield* store.transaction(Effect.forEach(many.slice(0, 600), (a) => Effect.orDie(store.update(Accounts, { ...a, balance: a.balance + 1000 })), { discard: true }))
      yield* Effect.asVoid(store.copies.restore("sent", { tables: [Accounts], replacing: all }).pipe(Effect.orDie))
      const reopened = yield* makeImageStore(db)
      for (const owner of ["o0", "o1", "o2"]) expect(yield* reopened.count(Accounts, "byOwner", owner)).toBe(yield* store.count(Accounts, "byOwner", owner))
      expect(yield* reopened.count(Accounts, "byOwner", "o1")).toBe(400)
      expect((yield* reopened.findUnique(Accounts, "handle", "h-m2"))?.id).toBe("m0002")
      expect((yield* reopened.get(Accounts, "m0001"))?.balance).toBe(101)
      expect(yield* reopened.copies.rows("many")).toEqual(yield* store.copies.rows("many"))
      expect((yield* reopened.copies.rows("many")).length).toBe(3000)
      expect(yield* reopened.copies.rows("sent")).toEqual(yield* store.copies.rows("sent"))
      expect((yield* reopened.copies.rows("sent")).length).toBe(1200)
    })
    await Effect.runPromise(program)
  })

  it("rolls a transaction back when the image cannot take it", async () => {
    await empty()
    const program = Effect.gen(function*() {
      const store = yield* makeImageStore(db)
      yield* store.insert(Accounts, { id: "kept", owner: "o1", balance: 1 })
      // The image refuses: a row its table cannot hold (PostgreSQL refuses a NUL character in text).
      const refused = yield* Effect.exit(store.insert(Accounts, { id: "bad\u0000key", owner: "o1", balance: 2 }))
      expect(refused._tag).toBe("Failure")
      expect(yield* store.get(Accounts, "bad\u0000key")).toBeUndefined()
      expect(yield* store.count(Accounts, "byOwner", "o1")).toBe(1)
      const reopened = yield* makeImageStore(db)
      expect((yield* reopened.page(Accounts, { order: "byOwner", partition: "o1", descending: false, backward: false, from: undefined, limit: 10 })).map((a) => a.id)).toEqual(["kept"])
    })
    await Effect.runPromise(program)
  })

  it("keeps a restore of every row of a copy, logged as the copy's name alone, through a replay and a fold", async () => {
    await empty()
    const accounts = ids.map((id, i): Account => ({ id, owner: owners[i % 2]!, balance: i, handle: `h-${id}` }))
    const program = Effect.gen(function*() {
      // Folded at once, so that the restore is the log's one record: nothing else names the rows it put back.
      const folding = yield* makeImageStore(db, { foldAtChars: 1 })
      yield* folding.insertMany(Accounts, accounts)
      yield* Effect.asVoid(folding.copies.save("copy", everyAccount))
      yield* Effect.asVoid(folding.removeRows(everyAccount))
      const store = yield* makeImageStore(db, { foldAtChars: 4_000 })
      yield* Effect.asVoid(store.copies.restore("copy", { tables: [Accounts], replacing: everyAccount }))
      const logged = yield* Effect.promise(() => db.query<{ record: string }>(`SELECT record FROM fos_log ORDER BY n DESC LIMIT 1`))
      expect(JSON.parse(logged.rows[0]!.record).r).toEqual([["copy", null]])
      // Replayed by a store opened again, which then folds the log (a row past the bound) with the restored rows in it.
      const reopened = yield* makeImageStore(db, { foldAtChars: 4_000 })
      for (const account of accounts) expect(yield* reopened.get(Accounts, account.id)).toEqual(account)
      yield* reopened.insert(Accounts, { id: "large", owner: "o1", balance: 0, handle: "x".repeat(5_000) })
      const log = yield* Effect.promise(() => db.query<{ n: number }>(`SELECT count(*)::int AS n FROM fos_log`))
      expect(log.rows[0]!.n).toBe(0)
      const folded = yield* makeImageStore(db)
      for (const account of accounts) expect(yield* folded.get(Accounts, account.id)).toEqual(account)
      expect(yield* folded.count(Accounts, "byOwner", "o1")).toBe(3)
    })
    await Effect.runPromise(program)
  })

  it("refuses a row PostgreSQL could not store, which a later fold would fail on, and takes its look-alikes", async () => {
    await empty()
    const program = Effect.gen(function*() {
      const store = yield* makeImageStore(db, { foldAtChars: 1 })
      const half = yield* Effect.exit(store.insert(Accounts, { id: "half", owner: "o1", balance: 1, handle: "\ud800" }))
      expect(half._tag).toBe("Failure")
      // A backslash before "u0000", and a whole surrogate pair: text PostgreSQL takes.
      yield* store.insert(Accounts, { id: "look-alike", owner: "o1", balance: 2, handle: "\\u0000 \ud83d\ude00" })
      const reopened = yield* makeImageStore(db)
      expect(yield* reopened.get(Accounts, "half")).toBeUndefined()
      expect((yield* reopened.get(Accounts, "look-alike"))?.handle).toBe("\\u0000 \ud83d\ude00")
    })
    await Effect.runPromise(program)
  })

  it("runs a statement's text prepared once, and says what PGlite refused without breaking the session", async () => {
    await empty()
    const run = preparedStatements(db)
    const insert = `INSERT INTO fos_rows (tbl, key, data) VALUES ($1, $2, $3::json)`
    await run(insert, ["t", "one", `{"n":1}`])
    await run(insert, ["t", "two", `{"n":2}`])
    const prepared = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1`, [insert])
    expect(prepared.rows[0]!.n).toBe(1)
    const refused = await run(`INSERT INTO fos_rows VALUES (`, []).then(() => undefined, (e: unknown) => e)
    expect(refused).toBeInstanceOf(PgliteStatementError)
    expect((refused as PgliteStatementError).code).toBe("42601")
    const taken = await run(insert, ["t", "one", `{"n":3}`]).then(() => undefined, (e: unknown) => e)
    expect((taken as PgliteStatementError).code).toBe("23505")
    const missing = await run(insert, ["t", "three", null]).then(() => undefined, (e: unknown) => e)
    expect((missing as PgliteStatementError).code).toBe("23502")
    const rows = await db.query<{ key: string; data: string }>(`SELECT key, data::text AS data FROM fos_rows ORDER BY key`)
    expect(rows.rows).toEqual([{ key: "one", data: `{"n":1}` }, { key: "two", data: `{"n":2}` }])
  })
})
