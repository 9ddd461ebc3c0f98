/**
 * Sandbox snapshots: one organization's whole sandbox saved, and put back later in one transaction
 * (`POST /sandbox/v2/simulate/snapshots`, `.../{id}/restore`, `fos snapshots`, `engine.snapshot()`), so a test suite
 * builds its world once and returns to it before every test (docs/snapshots.md).
 *
 * What a snapshot holds is exactly what the engine's registry names (kernel/Domain.ts, the descriptors' `tables`): everything a reset
 * removes (the ledger's accounts, with their balances, and transfers, the timers, the outbox, the idempotency
 * records among them), and the tables a reset keeps but a restore puts back (`keptByReset`). A table a descriptor
 * adds is saved and restored with no change here. The organization, its users and keys, and its live data are never in a
 * snapshot, and a restore never touches them.
 *
 * Storage: a `Snapshots` row per snapshot, and the store's copy of the same id (Store.ts, `Copies`), which holds each
 * saved row with its index entries and unique values, so no stored value grows with the sandbox, and a snapshot is
 * durable on every durable store. The rows are found by where the tables' orders put them (the descriptors'
 * selections), never read one by one: on the SQL stores a snapshot is one statement that the database runs, and a
 * restore two (what changed since removed, then the copy's rows that are not there written back). Both run in one
 * store transaction that first locks the organization's row, so snapshots, restores and deletes of one organization
 * take turns, and a restore commits whole or not at all: no reader ever sees half of one.
 *
 * Nothing of a sandbox is cached in a process (each request reads the store), so a restore committed through one
 * process is what every process sharing the store serves next.
 */
import type { ListMeta, OrganizationId, SandboxCounts, Snapshot } from "@fos/contract"
import { toIso } from "@fos/contract"
import { Clock, Effect } from "effect"
import * as Domain from "./kernel/Domain.ts"
import * as IdGenerator from "./kernel/IdGenerator.ts"
import * as Paging from "./kernel/Paging.ts"
import * as Problem from "./kernel/Problem.ts"
import * as RandomStreams from "./kernel/RandomStreams.ts"
import * as Reset from "./Reset.ts"
import * as Store from "./kernel/Store.ts"
import * as Telemetry from "./kernel/Telemetry.ts"
import * as Tenancy from "./tenancy/Tenancy.ts"
import * as Timers from "./kernel/Timers.ts"
import type * as Wire from "./kernel/Wire.ts"

/** The most snapshots one organization keeps; past it, a new one is refused until one is deleted. */
export const maxSnapshotsPerOrganization = 20

/**
 * The most rows one snapshot holds: an organization with 10,000 settled deposits (each with its Idempotency-Key, its
 * events delivered to one endpoint) has about 240,000 (docs/performance.md, "Snapshots").
 */
export const maxSnapshotRows = 500_000

/** How many rows of a snapshot taken before copies one write carries into its copy (`copyLegacy`). */
const writeBatch = 200

/** How many rows one read of a table's partition takes. */
const readPage = 500

/** A snapshot's row: its wire members (the contract's `Snapshot`), and where its rows are. */
export interface StoredSnapshot extends Wire.Stored<Snapshot, "id" | "organizationId" | "createdAt" | "rows" | "contents"> {
  /** What its taker said of it (`?label=`), kept as given and never read by fos. */
  readonly label?: string
  /** The store's sequence when it was taken: lists it in the order snapshots were taken, even within one instant. */
  readonly sequence: number
  /**
   * Its rows are in the store's copy of the same id (Store.ts, `Copies`); absent on a snapshot taken before, whose
   * rows are `SnapshotRows`, made into a copy at its first restore.
   */
  readonly copied?: true
  /**
   * For a snapshot `fos serve --load` imported: the SHA-256 of its file (SnapshotFiles.ts, `digestOf`), so that the
   * next start loading the same file restores it rather than importing it again.
   */
  readonly loadedFrom?: string
  /** For an imported snapshot: its file's `data` (what the fixture's build answered), which its export writes again. */
  readonly data?: unknown
  /**
   * For an imported snapshot: what its file said of the snapshot it was exported from (`snapshot`, its organization
   * aside, and `sequence`), and whether the import added the sandbox's clock (a file without one), which its export
   * writes again (SnapshotFiles.ts): a file imported and exported again is the same bytes.
   */
  readonly file?: ImportedFile
  /**
   * On a seeded engine, where the sandbox's stream stood when it was taken (RandomStreams.ts): a restore puts it back
   * there, so the same requests after each restore mint the same ids. Absent on an imported snapshot, whose restore
   * starts the stream as its import did (salted with its id), and on a snapshot taken before streams were recorded.
   */
  readonly stream?: RandomStreams.StreamPosition
}

/** What an imported snapshot keeps of its file's head (`StoredSnapshot.file`). */
export interface ImportedFile {
  readonly snapshot: Snapshot
  readonly sequence: number
  readonly clockAdded?: true
}

export const Snapshots = Store.table<StoredSnapshot>({
  name: "snapshots",
  key: (s) => s.id,
  orders: { byOrganization: { partition: (s) => s.organizationId, sort: (s) => s.sequence } }
})

/** One saved row of a snapshot taken before snapshots were copies: the table it goes back to and the row as it was stored. */
export interface SnapshotRow {
  /** `<snapshot id>/<n>`. */
  readonly id: string
  readonly snapshotId: string
  /** Its place in the snapshot: rows go back in the order they were saved. */
  readonly n: number
  readonly tbl: string
  readonly row: unknown
}

export const SnapshotRows = Store.table<SnapshotRow>({
  name: "snapshot_rows",
  key: (r) => r.id,
  orders: { bySnapshot: { partition: (r) => r.snapshotId, sort: (r) => r.n, counted: false } }
})

/** The snapshots themselves are no sandbox's rows: a reset keeps them (a suite resets, then restores). */
export const domain = Domain.make({ name: "Snapshots", keptTables: [Snapshots, SnapshotRows] })

/** The tables a snapshot's rows go back to, by name. */
const tablesByName = (registry: Domain.Registry): ReadonlyMap<string, Store.Table<any>> =>
  new Map(registry.sandboxTables.map((step) => [step.table.name, step.table]))

export const toWire = (s: StoredSnapshot): Snapshot => ({
  id: s.id,
  organizationId: s.organizationId,
  environment: "sandbox",
  createdAt: s.createdAt,
  rows: s.rows,
  contents: s.contents,
  ...(s.label === undefined ? {} : { label: s.label })
})

/** The organization's row, locked: snapshots, restores and deletes of one organization take turns. */
const lockOrganization = (store: Store.StoreService, organizationId: string) =>
  Effect.flatMap(store.getForUpdate(Tenancy.Organizations, organizationId), (o) =>
    o === undefined ? Effect.fail(Problem.apiError("NOT_FOUND", `No organization ${organizationId}.`)) : Effect.succeed(o))

/** A snapshot of this organization, or 404: another organization's snapshot is not found, as an unknown id. */
const findSnapshot = (store: Store.StoreService, organizationId: string, id: string) =>
  Effect.flatMap(store.get(Snapshots, id), (s) =>
    s === undefined || s.organizationId !== organizationId
      ? Effect.fail(Problem.apiError("NOT_FOUND", "No snapshot with this id exists in this organization's sandbox."))
      : Effect.succeed(s))

/** 409 when the organization holds as many snapshots as it may keep. */
const refuseOverLimit = (store: Store.StoreService, organizationId: string) =>
  Effect.flatMap(store.count(Snapshots, "byOrganization", organizationId), (held) =>
    held < maxSnapshotsPerOrganization
      ? Effect.void
      : Effect.fail(Problem.apiError("CONFLICT", `This organization holds ${held} snapshots, the most it may keep.`, {
        resolution: "Delete a snapshot (DELETE /v2/simulate/snapshots/{id}) before taking another."
      })))

/** A snapshot's take or restore in its span (kernel/Telemetry.ts), which names the organization and the snapshot. */
const traced = <E, R>(name: string, organizationId: string, id: string | undefined, work: Effect.Effect<Snapshot, E, R>) =>
  work.pipe(
    Effect.tap((snapshot) => Telemetry.annotate({ [Telemetry.Attribute.snapshotId]: snapshot.id })),
    Telemetry.withSpan(name, { attributes: { [Telemetry.Attribute.organization]: organizationId, [Telemetry.Attribute.snapshotId]: id } })
  )

/** A snapshot's id, from the organization's stream that a restore never rewinds (RandomStreams.ts, `lastingStream`). */
const newSnapshotId = (organizationId: string) =>
  IdGenerator.newId("snp").pipe(RandomStreams.withStream(RandomStreams.lastingStream(Tenancy.scopeOf(organizationId, "sandbox"))))

/** Saves the organization's whole sandbox, with the label the caller gave it (fos never reads one); answers the snapshot. */
export const take = (organizationId: OrganizationId | string, options: { readonly label?: string | undefined } = {}): Effect.Effect<Snapshot, Problem.ApiError, Store.Store | Domain.Domains> =>
  traced(Telemetry.SpanName.snapshot, organizationId, undefined, Effect.flatMap(Effect.all([Store.Store, Domain.Domains]), ([store, registry]) =>
    store.transaction(Effect.gen(function*() {
      yield* lockOrganization(store, organizationId)
      yield* refuseOverLimit(store, organizationId)
      const id = yield* newSnapshotId(organizationId)
      const scope = Tenancy.scopeOf(organizationId, "sandbox")
      const contents: { -readonly [K in keyof SandboxCounts]: number } = { ...Reset.emptyCounts }
      const count = (step: Domain.SandboxTable, added: number) => {
        if (step.counted !== undefined) contents[step.counted] += added
        return added
      }
      // Every table the database copies at once, in one statement on the SQL stores; a row found twice (a wallet
      // through two parents) is saved once.
      const copied = registry.sandboxTables.filter((step) => step.saved !== false && Domain.savedAs(step) === undefined)
      const added = yield* store.copies.save(id, copied.map((step) => ({ ...step.rows(scope), except: Domain.savedExcept(step) })))
      let rows = copied.reduce((sum, step, i) => sum + count(step, added[i]!), 0)
      // The few rows saved as a function gives them, through the process.
      for (const step of registry.sandboxTables) {
        const as = Domain.savedAs(step)
        if (as === undefined) continue
        const where = step.rows(scope)
        if (!("partition" in where)) return yield* Effect.die(new Error(`${step.table.name}: a row saved through the process is found by its partition`))
        const saved: Array<unknown> = []
        yield* Store.walk(store, step.table, { order: where.order, partition: where.partition, pageSize: readPage }, (row) => Effect.sync(() => saved.push(as(row))))
        rows += count(step, yield* store.copies.saveRows(id, step.table, saved))
      }
      if (rows > maxSnapshotRows) {
        return yield* Problem.apiError("UNPROCESSABLE_ENTITY", `The sandbox holds more than ${maxSnapshotRows} rows, the most a snapshot takes.`, {
          resolution: "Snapshot a smaller sandbox: reset it, or build the world the tests need in a fresh organization."
        })
      }
      const stream = yield* RandomStreams.positionOf(scope)
      const snapshot: StoredSnapshot = {
        id,
        organizationId,
        sequence: yield* store.nextSequence,
        createdAt: toIso(yield* Clock.currentTimeMillis),
        rows,
        contents,
        ...(options.label === undefined ? {} : { label: options.label }),
        copied: true,
        ...(stream === undefined ? {} : { stream })
      }
      yield* Effect.orDie(store.insert(Snapshots, snapshot))
      return toWire(snapshot)
    }))))

/**
 * A snapshot taken before snapshots were copies (`SnapshotRows`, a row per saved row) made into one,
 * at its first restore: its rows go into the copy, a batch of one table's rows at a time, and its old rows go.
 */
const copyLegacy = (store: Store.StoreService, registry: Domain.Registry, snapshot: StoredSnapshot) =>
  Effect.gen(function*() {
    const tables = tablesByName(registry)
    let batch: Array<unknown> = []
    let batchTable: Store.Table<any> | undefined
    const flush = Effect.suspend(() => {
      const t = batchTable
      const rows = batch
      batch = []
      return t === undefined || rows.length === 0 ? Effect.void : Effect.asVoid(store.copies.saveRows(snapshot.id, t, rows))
    })
    yield* Store.walk(store, SnapshotRows, { order: "bySnapshot", partition: snapshot.id, pageSize: readPage }, (saved) =>
      Effect.gen(function*() {
        const t = tables.get(saved.tbl)
        if (t === undefined) return yield* unknownTable(saved.tbl)
        if (t !== batchTable || batch.length >= writeBatch) {
          yield* flush
          batchTable = t
        }
        batch.push(saved.row)
      }))
    yield* flush
    yield* store.removePartition(SnapshotRows, "bySnapshot", snapshot.id)
    yield* Effect.orDie(store.update(Snapshots, { ...snapshot, copied: true }))
  })

const unknownTable = (table: string) =>
  Effect.fail(Problem.apiError("CONFLICT", `The snapshot holds rows of ${table}, which this version of fos does not keep.`))

/**
 * Puts the organization's sandbox back as the snapshot saved it, in one transaction: the snapshot's copy in place of
 * every sandbox row (a reset's, and the tables a reset keeps), all at once, so that a store writes only what changed
 * since; on a seeded engine, its stream too (`StoredSnapshot.stream`). The snapshot stays, to be restored again.
 */
export const restore = (organizationId: OrganizationId | string, id: string): Effect.Effect<Snapshot, Problem.ApiError, Store.Store | Domain.Domains> =>
  traced(Telemetry.SpanName.restore, organizationId, id, Effect.flatMap(Effect.all([Store.Store, Domain.Domains]), ([store, registry]) =>
    store.transaction(Effect.gen(function*() {
      yield* lockOrganization(store, organizationId)
      const snapshot = yield* findSnapshot(store, organizationId, id)
      if (snapshot.copied !== true) yield* copyLegacy(store, registry, snapshot)
      yield* store.copies.restore(snapshot.id, { tables: [...tablesByName(registry).values()], replacing: Reset.sandboxSelections(registry, Tenancy.scopeOf(organizationId, "sandbox")) }).pipe(
        Effect.catchTags({
          UniqueViolation: (v) =>
            Effect.fail(Problem.apiError("CONFLICT", `The snapshot cannot be restored: its ${v.table} row ${v.key} is taken by another row (${v.unique}).`)),
          UnknownTable: (u) => unknownTable(u.table)
        })
      )
      // The timers put back may be due at the clock put back with them.
      yield* Timers.markDue
      // The sandbox's stream back where the snapshot found it, once the rows it minted are surely back too.
      const scope = Tenancy.scopeOf(organizationId, "sandbox")
      if (snapshot.stream !== undefined) yield* store.afterCommit(RandomStreams.rewind(scope, snapshot.stream))
      else if (snapshot.file !== undefined) yield* store.afterCommit(RandomStreams.reseed(scope, snapshot.id))
      return toWire(snapshot)
    }))))

/** The organization's snapshot `id` (404 for another's, as for an unknown id), read only. */
export const find = (organizationId: string, id: string): Effect.Effect<StoredSnapshot, Problem.ApiError, Store.Store> =>
  Effect.flatMap(Store.Store, (store) => findSnapshot(store, organizationId, id))

/**
 * Every row a snapshot holds, with the table each belongs to, in table and key order as the store keeps them. Reads
 * only: a snapshot taken before snapshots were copies is read from its `SnapshotRows`.
 */
export const rowsOf = (snapshot: StoredSnapshot): Effect.Effect<ReadonlyArray<{ readonly table: string; readonly row: unknown }>, never, Store.Store> =>
  Effect.flatMap(Store.Store, (store) =>
    store.transaction(Effect.gen(function*() {
      if (snapshot.copied === true) return yield* store.copies.rows(snapshot.id)
      const rows: Array<{ readonly table: string; readonly row: unknown }> = []
      yield* Store.walk(store, SnapshotRows, { order: "bySnapshot", partition: snapshot.id, pageSize: readPage }, (saved) =>
        Effect.sync(() => rows.push({ table: saved.tbl, row: saved.row })))
      return rows
    })))

/** The snapshot `id` of the organization with every row it holds (`rowsOf`): a snapshot's export, SnapshotFiles.ts. */
export const readRows = (organizationId: string, id: string): Effect.Effect<{
  readonly snapshot: StoredSnapshot
  readonly rows: ReadonlyArray<{ readonly table: string; readonly row: unknown }>
}, Problem.ApiError, Store.Store> =>
  Effect.flatMap(Store.Store, (store) =>
    store.transaction(Effect.gen(function*() {
      const snapshot = yield* findSnapshot(store, organizationId, id)
      return { snapshot, rows: yield* rowsOf(snapshot) }
    })))

/** Rows of an imported snapshot, by table, each checked to be a row of the sandbox it is imported into (SnapshotFiles.ts). */
export interface ImportedRows {
  readonly tables: ReadonlyArray<{ readonly step: Domain.SandboxTable; readonly rows: ReadonlyArray<unknown> }>
  /** The sandbox's time when the snapshot was taken (its `createdAt`). */
  readonly createdAt: string
  /** The source store's sequence when it was taken: above every number the rows hold. */
  readonly sequence: number
  readonly loadedFrom?: string | undefined
  /** What the importer said of the snapshot (`?label=`), as a save's label: kept as given, never read by fos. */
  readonly label?: string | undefined
  /** The file's `data`, kept with the snapshot. */
  readonly data?: unknown
  /** The file's head, kept with the snapshot (`StoredSnapshot.file`). */
  readonly file?: ImportedFile
}

/** `value` with every string that `moved` names replaced by what it names, through arrays and objects. */
export const swapStrings = (value: unknown, moved: ReadonlyMap<string, string>): unknown => {
  if (typeof value === "string") return moved.get(value) ?? value
  if (Array.isArray(value)) return value.map((item) => swapStrings(item, moved))
  if (value === null || typeof value !== "object") return value
  const out: Record<string, unknown> = {}
  for (const [name, inner] of Object.entries(value)) out[name] = swapStrings(inner, moved)
  return out
}

/**
 * Rows another store wrote, with the keys this store gives them: the keys of a table numbered anew on import (its
 * descriptor's `renumberedOnImport`: the history's) take numbers taken now from this store, given in the order of
 * the old ones, and every string of every row equal to such an old key the new one. Taken, not counted from the
 * sequence's value: another process sharing the store may number rows of its own while the import runs, and a number
 * taken is handed to no one else. The rows' order is kept.
 */
const renumber = (store: Store.StoreService, tables: ImportedRows["tables"]): Effect.Effect<ImportedRows["tables"]> =>
  Effect.gen(function*() {
    const numbered: Array<{ readonly key: string; readonly number: number; readonly keys: Domain.SequencedKeys }> = []
    for (const { step, rows } of tables) {
      if (step.renumberedOnImport !== true) continue
      const keys = step.sequenced
      if (keys === undefined) return yield* Effect.die(new Error(`${step.table.name}: renumbered on import, its keys carry no number of the store's`))
      for (const row of rows) {
        const key = step.table.key(row)
        const number = keys.numberOf(key)
        if (number === undefined) return yield* Effect.die(new Error(`${step.table.name}: the key ${key} is not one fos numbers, which the file's check let through`))
        numbered.push({ key, number, keys })
      }
    }
    if (numbered.length === 0) return tables
    numbered.sort((a, b) => a.number - b.number)
    const taken = yield* store.takeNumbers(numbered.length)
    const moved = new Map(numbered.map(({ key, keys }, i) => [key, keys.withNumber(key, taken[i]!)]))
    // Every row is rebuilt: a few hundred at a time, with the store's pauses between (docs/storage.md, "Long work and
    // other requests").
    const pause = store.pause ?? Effect.void
    const renumbered: Array<ImportedRows["tables"][number]> = []
    let done = 0
    for (const { step, rows } of tables) {
      const out: Array<unknown> = []
      for (const row of rows) {
        out.push(swapStrings(row, moved))
        if (++done % Store.pauseEveryRows === 0) yield* pause
      }
      renumbered.push({ step, rows: out })
    }
    return renumbered
  })

/**
 * Keeps checked rows as a snapshot of the organization's sandbox, in one transaction: counted against the snapshots
 * it may keep, its rows in a copy (the history's keys numbered anew, `renumber`), which must be restorable in place of
 * the sandbox (no key or unique value of it held by a row outside the sandbox, ids being the store's), and the
 * store's sequence moved past the rows' numbers.
 * Refused whole: 409 past the limit of snapshots or for a row taken, and then nothing is written.
 */
export const keepImported = (organizationId: string, imported: ImportedRows): Effect.Effect<Snapshot, Problem.ApiError, Store.Store | Domain.Domains> =>
  Effect.flatMap(Effect.all([Store.Store, Domain.Domains]), ([store, registry]) =>
    store.transaction(Effect.gen(function*() {
      yield* lockOrganization(store, organizationId)
      yield* refuseOverLimit(store, organizationId)
      const id = yield* newSnapshotId(organizationId)
      const contents: { -readonly [K in keyof SandboxCounts]: number } = { ...Reset.emptyCounts }
      let rows = 0
      const renumbered = yield* renumber(store, imported.tables)
      // Between the long steps of a large file's import (docs/storage.md, "Long work and other requests").
      yield* Store.pause
      for (const { step, rows: saved } of renumbered) {
        if (saved.length === 0) continue
        const added = yield* store.copies.saveRows(id, step.table, saved)
        if (step.counted !== undefined) contents[step.counted] += added
        rows += added
      }
      const scope = Tenancy.scopeOf(organizationId, "sandbox")
      yield* Store.pause
      const taken = yield* store.copies.conflict(id, { tables: [...tablesByName(registry).values()], replacing: Reset.sandboxSelections(registry, scope) }).pipe(
        Effect.catchTag("UnknownTable", (u) => Effect.die(new Error(`an imported snapshot holds rows of ${u.table}, which its file's check let through`)))
      )
      if (taken !== undefined) {
        const what = taken.unique === "primary" ? "id" : `${taken.unique} value`
        return yield* Problem.apiError("CONFLICT", `The file's ${taken.table} row ${taken.key} cannot be imported: its ${what} is another organization's (ids are unique in a store, and this store holds that row outside this sandbox). Nothing was written.`, {
          resolution: "Import the file into a fos whose store does not hold that world already (a fresh one), or into the organization it was exported from."
        })
      }
      // The sequence past the file's, so that nothing this store numbers next sorts before the rows' numbers or takes
      // a timer's key (timers keep theirs).
      yield* store.raiseSequence(imported.sequence)
      const snapshot: StoredSnapshot = {
        id,
        organizationId,
        sequence: yield* store.nextSequence,
        createdAt: imported.createdAt,
        rows,
        contents,
        ...(imported.label === undefined ? {} : { label: imported.label }),
        copied: true,
        ...(imported.loadedFrom === undefined ? {} : { loadedFrom: imported.loadedFrom }),
        ...(imported.data === undefined ? {} : { data: imported.data }),
        ...(imported.file === undefined ? {} : { file: imported.file })
      }
      yield* Effect.orDie(store.insert(Snapshots, snapshot))
      return toWire(snapshot)
    })))

/** The snapshot of the organization an earlier `fos serve --load` made from the file of this digest, if it still has one. */
export const loadedFrom = (organizationId: string, digest: string): Effect.Effect<Snapshot | undefined, never, Store.Store> =>
  Effect.flatMap(Store.Store, (store) =>
    Effect.map(
      store.page(Snapshots, { order: "byOrganization", partition: organizationId, descending: true, backward: false, from: undefined, limit: maxSnapshotsPerOrganization }),
      (rows) => {
        const found = rows.find((s) => s.loadedFrom === digest)
        return found === undefined ? undefined : toWire(found)
      }
    ))

/** The organization's snapshots, newest first by default. */
export const list = (organizationId: string, query: Paging.ListQuery): Effect.Effect<{ readonly data: ReadonlyArray<Snapshot>; readonly meta: ListMeta }, Problem.ApiError, Store.Store> =>
  Paging.listPage(Snapshots, { order: "byOrganization", partition: organizationId, query, toWire: toWire })

/** Every snapshot of the organization, oldest first (at most `maxSnapshotsPerOrganization`): operators, embedding. */
export const all = (organizationId: string): Effect.Effect<ReadonlyArray<Snapshot>, never, Store.Store> =>
  Effect.flatMap(Store.Store, (store) =>
    store.page(Snapshots, { order: "byOrganization", partition: organizationId, descending: false, backward: false, from: undefined, limit: maxSnapshotsPerOrganization })).pipe(
      Effect.map((rows) => rows.map(toWire))
    )

export const get = (organizationId: string, id: string): Effect.Effect<Snapshot, Problem.ApiError, Store.Store> =>
  Effect.flatMap(Store.Store, (store) => Effect.map(findSnapshot(store, organizationId, id), toWire))

/** The organization a snapshot belongs to, for callers that name only the snapshot (operators, embedding). */
export const owner = (id: string): Effect.Effect<string, Problem.ApiError, Store.Store> =>
  Effect.flatMap(Store.Store, (store) =>
    Effect.flatMap(store.get(Snapshots, id), (s) =>
      s === undefined ? Effect.fail(Problem.apiError("NOT_FOUND", `No snapshot ${id}.`)) : Effect.succeed(s.organizationId)))

/**
 * Deletes every snapshot of the organization with its rows, in the caller's transaction (a fork's deletion,
 * Forks.ts); answers how many went.
 */
export const removeAll = (organizationId: string): Effect.Effect<number, never, Store.Store> =>
  Effect.flatMap(Store.Store, (store) =>
    store.transaction(Effect.gen(function*() {
      const held: Array<string> = []
      yield* Store.walk(store, Snapshots, { order: "byOrganization", partition: organizationId, pageSize: readPage }, (s) => Effect.sync(() => held.push(s.id)))
      for (const id of held) {
        yield* store.copies.remove(id)
        yield* store.removePartition(SnapshotRows, "bySnapshot", id)
      }
      yield* store.removePartition(Snapshots, "byOrganization", organizationId)
      return held.length
    })))

/** Deletes a snapshot and its rows. */
export const deleteSnapshot = (organizationId: string, id: string): Effect.Effect<void, Problem.ApiError, Store.Store> =>
  Effect.flatMap(Store.Store, (store) =>
    store.transaction(Effect.gen(function*() {
      yield* lockOrganization(store, organizationId)
      yield* findSnapshot(store, organizationId, id)
      yield* store.copies.remove(id)
      yield* store.removePartition(SnapshotRows, "bySnapshot", id)
      yield* store.remove(Snapshots, id)
    })))
