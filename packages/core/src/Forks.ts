/**
 * Forks (docs/snapshots.md, "Forks"; issue 41, point 2): a snapshot's world in a new organization of its own, made in
 * one store transaction, so that each worker of a test runner gets its own copy of the fixture at once
 * (`POST /sandbox/v2/simulate/snapshots/{id}/fork`, `engine.fork`). It spans every domain, so it lives beside
 * Snapshots.ts.
 *
 * A fork is:
 * - an organization, active, named after its parent ("Acme fork 3"), its `forkedFrom` naming the parent and the
 *   snapshot, with the parent's features and rate limit; a user made for it (its one admin, whose email is the
 *   fork's own) and a read-write sandbox key of that user, minted as every key is (Operator.ts);
 * - a sandbox holding the snapshot's rows, rewritten (below) and written in one store write (`Store.insertRows`), each
 *   indexed as any insert indexes it, with its own clock at the snapshot's time (the snapshot's clock, or one made at
 *   its `createdAt`, as an import makes one) and its own seeded stream (its scope's). The parent's sandbox and the
 *   snapshot are as they were.
 *
 * Rewriting. A row's key is its id across the store, so two organizations of one store cannot hold one id: every id
 * of the world gets a new one, and the answer maps each old id to its new one (`ids`; docs/decisions.md, "A fork's
 * ids"). Each table's rows are rewritten as JSON text by one regular expression, whole words only:
 * - the parent's organization id becomes the fork's wherever it is a word: the rows' `organizationId` members and
 *   the scopes and keys under `<organization>/sandbox`, which an import rewrites too (SnapshotFiles.ts), and the
 *   answers idempotency records keep;
 * - every id fos minted (IdGenerator.ts, `mintedIdSource`: a prefix, `_` and 24 characters of its base32, whatever
 *   the prefix), and every row key of the same shape with 1 to 64 letters or digits (an id an operator or a file
 *   gave), gets a new id of its prefix. Each prefix's new ids are drawn from the fork's stream and given, sorted, to
 *   its old ids in code point order: two ids compare as their old ones did, so a list ordered by time and then id
 *   lists the fork's rows as it lists the parent's, and a seeded engine forks the same ids on every run and store.
 *   Ids that are not the world's keep theirs: organizations (another's, in a kept answer), users and snapshots
 *   (`org_`, `usr_`, `snp_`); an API key is no such word;
 * - keys that carry the store's sequence (the descriptors' `sequenced`: timers, history entries) take new numbers
 *   (`Store.takeNumbers`), in the order of the old ones, so no other row holds or will hold them and a timer the fork
 *   schedules later sorts after the copied ones. The timers' are in `ids` (the pending timers list shows them); the
 *   history's are shown nowhere.
 * An id inside stored text is rewritten with the rest (a webhook delivery's body, an idempotency record's answer, a
 * signing URL): the fork replays and delivers its own ids. A digest of such text is not: an idempotency record's
 * fingerprint (SHA-256 of the request as it was sent), so a retry in the fork, with the fork's ids, of a fixture's
 * request that named an id conflicts (IDEMPOTENCY_KEY_CONFLICT) where the parent would replay it; and a recorded
 * attempt's signature, which is what was sent. Everything else is kept as it is, wallet deposit addresses included:
 * an address is unique within a sandbox (Wallets.ts), and a deposit sent to a fixture wallet's address in a fork
 * credits the fork's wallet.
 *
 * The refusals of a fork, in this order (docs/decisions.md, "The order of refusals"): a snapshot that is not the
 * caller's organization's is 404 NOT_FOUND, as its read and restore are; an organization that holds
 * `maxForksPerOrganization` forks already is 409 CONFLICT. The parent's row is locked first, so its forks, snapshots,
 * restores and deletes take turns, and the bound is never passed by two forks made at once.
 *
 * A fork is its parent's to list and delete. Deleting one (`remove`) removes its organization with everything of it:
 * its sandbox (what a reset removes, and what a reset keeps: its clock), its live environment's rows if it has any,
 * its snapshots, its keys, its user and its row; its key authenticates no more. A reset, a restore or a deletion of
 * the parent leaves its forks as they are, and a fork's own reset, snapshots and restores are its own.
 */
import { type Fork, type ForkSummary, maxForksPerOrganization, type OrganizationId, parseIso, toIso } from "@fos/contract"
import { Clock, Effect } from "effect"
import * as Clocks from "./kernel/Clocks.ts"
import * as Domain from "./kernel/Domain.ts"
import * as IdGenerator from "./kernel/IdGenerator.ts"
import * as Problem from "./kernel/Problem.ts"
import * as RandomStreams from "./kernel/RandomStreams.ts"
import * as Store from "./kernel/Store.ts"
import * as Reset from "./Reset.ts"
import * as Faults from "./simulate/Faults.ts"
import * as Snapshots from "./Snapshots.ts"
import * as Operator from "./tenancy/Operator.ts"
import * as Tenancy from "./tenancy/Tenancy.ts"

/** A word that may be an id: a prefix of 2 to 5 lower-case letters, `_`, and 1 to 64 letters or digits. */
const idWord = "\\b[a-z]{2,5}_[0-9A-Za-z]{1,64}\\b"
const idShaped = /^[a-z]{2,5}_[0-9A-Za-z]{1,64}$/
/** An id fos minted, whole. */
const mintedId = new RegExp(`^${IdGenerator.mintedIdSource}$`)

/** The prefixes of ids that are not a world's: organizations (the fork's is named apart), users, snapshots. */
const notTheWorlds = new Set(["org", "usr", "snp"])

const prefixOf = (id: string): string => id.slice(0, id.indexOf("_"))

/** The fork's row as a summary (ForkSummary). */
const toSummary = (o: Tenancy.Organization): ForkSummary => ({
  organizationId: o.id,
  parentOrganizationId: o.forkedFrom!.organizationId,
  snapshotId: o.forkedFrom!.snapshotId as ForkSummary["snapshotId"],
  environment: "sandbox",
  createdAt: o.forkedFrom!.createdAt
})

/** The organization's row, locked at once: its forks, snapshots, restores and deletes take turns. */
const lockOrganization = (store: Store.StoreService, organizationId: string) =>
  Effect.flatMap(store.getForUpdate(Tenancy.Organizations, organizationId, { lockNow: true }), (o) =>
    o === undefined ? Effect.fail(Problem.apiError("NOT_FOUND", `No organization ${organizationId}.`)) : Effect.succeed(o))

/** One table's rows of the world, with the table's step in the registry. */
interface TableRows {
  readonly step: Domain.SandboxTable
  rows: ReadonlyArray<unknown>
}

/** A table's rows as JSON text, with the words in it that may be ids and where each is. */
interface Scanned {
  readonly text: string
  readonly at: Array<number>
  readonly words: Array<string>
}

/**
 * The snapshot's rows, grouped by table, as the fork holds them: every id the rewrite gives a new one (see the module
 * comment), and the ids a client sees, old to new. Each table's text is read once for the words that may be ids, and
 * written again from where they are; the new ids are drawn from the current stream, the new numbers taken from the
 * store.
 */
const rewrite = (
  store: Store.StoreService,
  registry: Domain.Registry,
  rows: ReadonlyArray<{ readonly table: string; readonly row: unknown }>,
  from: string,
  to: string
) =>
  Effect.gen(function*() {
    const steps = new Map<string, Domain.SandboxTable>()
    for (const step of registry.sandboxTables) if (!steps.has(step.table.name)) steps.set(step.table.name, step)
    const tables = new Map<string, TableRows>()
    for (const { table, row } of rows) {
      let of = tables.get(table)
      if (of === undefined) {
        const step = steps.get(table)
        if (step === undefined) return yield* Problem.apiError("CONFLICT", `The snapshot holds rows of ${table}, which this version of fos does not keep.`)
        tables.set(table, (of = { step, rows: [] }))
      }
      ;(of.rows as Array<unknown>).push(row)
    }
    // The ids of the world: the minted ones anywhere in its rows, and the rows' keys shaped as ids.
    const found = new Set<string>()
    const scanned = new Map<string, Scanned>()
    const numbered: Array<{ readonly key: string; readonly number: number; readonly keys: Domain.SequencedKeys }> = []
    for (const [name, { step, rows: list }] of tables) {
      const text = JSON.stringify(list)
      const word = new RegExp(idWord, "g")
      const at: Array<number> = []
      const words: Array<string> = []
      for (let m = word.exec(text); m !== null; m = word.exec(text)) {
        at.push(m.index)
        words.push(m[0])
        if (mintedId.test(m[0])) found.add(m[0])
      }
      scanned.set(name, { text, at, words })
      for (const row of list) {
        const key = step.table.key(row)
        if (step.sequenced !== undefined) {
          const number = step.sequenced.numberOf(key)
          if (number === undefined) return yield* Effect.die(new Error(`${name}: the key ${key} carries no number of the store's`))
          numbered.push({ key, number, keys: step.sequenced })
        } else if (idShaped.test(key)) found.add(key)
      }
    }
    // Each prefix's new ids, sorted, given to its old ids in their order: two ids compare as their old ones did, so
    // a list ordered by id, or by time and then id, lists the fork's rows in the order it lists the parent's.
    const byPrefix = new Map<string, Array<string>>()
    for (const id of [...found].sort()) {
      const prefix = prefixOf(id)
      if (notTheWorlds.has(prefix)) continue
      const olds = byPrefix.get(prefix)
      if (olds === undefined) byPrefix.set(prefix, [id])
      else olds.push(id)
    }
    const ids = new Map<string, string>()
    for (const [prefix, olds] of byPrefix) {
      const made = [...yield* IdGenerator.newPlainIds(prefix, olds.length)].sort()
      olds.forEach((old, i) => ids.set(old, made[i]!))
    }
    // New numbers, in the order of the old ones (a number is the store's, so no two rows share one).
    const numbers = [...new Set(numbered.map((n) => n.number))].sort((a, b) => a - b)
    const taken = yield* store.takeNumbers(numbers.length)
    const renumbered = new Map(numbers.map((n, i) => [n, taken[i]!]))
    const moved = new Map<string, string>()
    for (const { key, number, keys } of numbered) moved.set(key, keys.withNumber(key, renumbered.get(number)!))
    const words = new Map([...ids, ...moved, [from, to]])
    for (const [name, of] of tables) {
      const { text, at, words: found } = scanned.get(name)!
      let out = ""
      let last = 0
      for (let i = 0; i < found.length; i++) {
        const made = words.get(found[i]!)
        if (made === undefined) continue
        out += text.slice(last, at[i]!) + made
        last = at[i]! + found[i]!.length
      }
      of.rows = JSON.parse(out + text.slice(last)) as Array<unknown>
    }
    // The ids a client sees: the world's, and the keys of the sequenced tables it is shown (the timers').
    const shown = new Map(ids)
    for (const { key, keys } of numbered) if (keys.shown) shown.set(key, moved.get(key)!)
    return { tables, shown }
  })

/**
 * Forks the snapshot `snapshotId` of the organization (see the module comment): a new organization whose sandbox is
 * the snapshot's world, its key and the map of the world's ids to its own. Refused, in this order: 404 for a snapshot
 * that is not the organization's, 409 past `maxForksPerOrganization`.
 */
export const make = (organizationId: OrganizationId | string, snapshotId: string): Effect.Effect<Fork, Problem.ApiError, Store.Store | Domain.Domains> =>
  Effect.flatMap(Effect.all([Store.Store, Domain.Domains]), ([store, registry]) =>
    store.transaction(Effect.gen(function*() {
      const parent = yield* lockOrganization(store, organizationId)
      // 1. The snapshot, the organization's.
      const { snapshot, rows } = yield* Snapshots.readRows(organizationId, snapshotId)
      // 2. The bound.
      const held = yield* store.count(Tenancy.Organizations, "forks", organizationId)
      if (held >= maxForksPerOrganization) {
        return yield* Problem.apiError("CONFLICT", `This organization holds ${held} forks, the most it may hold at a time.`, {
          resolution: "Delete a fork (DELETE /v2/simulate/forks/{organizationId}) before making another."
        })
      }
      const forkId = (yield* IdGenerator.newId("org")) as OrganizationId
      const scope = Tenancy.scopeOf(forkId, "sandbox")
      const { tables, shown } = yield* rewrite(store, registry, rows, organizationId, forkId).pipe(RandomStreams.withStream(scope))
      // The world's time travels with it: a sandbox that followed its engine's root clock gets one of its own.
      const clocks = registry.sandboxTables.find((step) => step.table === Clocks.Clocks)
      if (clocks !== undefined && !tables.has(clocks.table.name)) {
        const clock: Clocks.StoredClock = { id: scope, nowMs: parseIso(snapshot.createdAt)! }
        tables.set(clocks.table.name, { step: clocks, rows: [clock] })
      }
      const faults = tables.get(Faults.SimulatedFaults.name)?.rows as ReadonlyArray<Faults.FaultRow> | undefined
      const organization: Tenancy.Organization = {
        id: forkId,
        name: `${parent.name} fork ${held + 1}`,
        status: "active",
        sandboxProvisioned: true,
        apiKeyCreationEnabled: true,
        features: parent.features,
        rateLimit: parent.rateLimit,
        createdAt: toIso(yield* Clock.currentTimeMillis),
        // Its request faults are looked up only when it carries the mark (simulate/Faults.ts).
        ...(faults?.some((f) => f.target === "request") === true ? { sandboxFaults: true as const } : {}),
        forkedFrom: { organizationId: parent.id, snapshotId: snapshot.id, createdAt: snapshot.createdAt, sequence: yield* store.nextSequence }
      }
      yield* Effect.orDie(Tenancy.addOrganization(organization))
      const user = yield* Effect.orDie(Operator.createUser({ organizationId: forkId, email: `${forkId.toLowerCase()}@forks.fos.invalid`, role: "admin" }))
      const key = yield* Effect.orDie(Operator.createApiKey({ organizationId: forkId, environment: "sandbox", access: "read_write", createdBy: user.id }))
      yield* store.insertRows([...tables.values()].map(({ step, rows: list }) => ({ table: step.table, rows: list }))).pipe(
        Effect.catchTag("UniqueViolation", (v) => Effect.die(new Error(`a fork's ${v.table} row ${v.key} is taken (${v.unique}): its ids were all made anew`)))
      )
      const ids: Record<string, string> = {}
      for (const old of [...shown.keys()].sort()) ids[old] = shown.get(old)!
      return {
        organizationId: forkId,
        parentOrganizationId: parent.id,
        snapshotId: snapshot.id as Fork["snapshotId"],
        environment: "sandbox",
        apiKey: key.key,
        ids,
        createdAt: snapshot.createdAt
      }
    })))

/** The organization's forks, oldest first (at most `maxForksPerOrganization`). */
export const list = (organizationId: string): Effect.Effect<ReadonlyArray<ForkSummary>, never, Store.Store> =>
  Effect.flatMap(Store.Store, (store) =>
    Effect.map(
      store.page(Tenancy.Organizations, { order: "forks", partition: organizationId, descending: false, backward: false, from: undefined, limit: maxForksPerOrganization }),
      (rows) => rows.map(toSummary)
    ))

const notAFork = () => Problem.apiError("NOT_FOUND", "No fork with this id exists in this organization.")

/** The organization a fork was made from, for callers that name only the fork (embedding); 404 for any other id. */
export const parentOf = (forkId: string): Effect.Effect<string, Problem.ApiError, Store.Store> =>
  Effect.flatMap(Store.Store, (store) =>
    Effect.flatMap(store.get(Tenancy.Organizations, forkId), (o) =>
      o?.forkedFrom === undefined ? Effect.fail(notAFork()) : Effect.succeed(o.forkedFrom.organizationId)))

/**
 * Deletes the organization's fork `forkId` with everything of it (see the module comment), in one transaction; 404
 * for an id that is not a fork of the organization's.
 */
export const remove = (organizationId: string, forkId: string): Effect.Effect<void, Problem.ApiError, Store.Store | Domain.Domains> =>
  Effect.flatMap(Effect.all([Store.Store, Domain.Domains]), ([store, registry]) =>
    store.transaction(Effect.gen(function*() {
      const fork = yield* store.getForUpdate(Tenancy.Organizations, forkId, { lockNow: true })
      if (fork?.forkedFrom?.organizationId !== organizationId) return yield* notAFork()
      for (const environment of ["sandbox", "live"] as const) {
        yield* Reset.clearSandbox(store, registry, Tenancy.scopeOf(forkId, environment), { keptByReset: true })
      }
      yield* Snapshots.removeAll(forkId)
      yield* Tenancy.removeOrganization(forkId)
    })))
