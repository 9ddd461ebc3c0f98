/**
 * Sandbox snapshots as files (docs/snapshots.md, "Files"): a snapshot exported as one JSON document a team commits
 * beside its tests (`GET /sandbox/v2/simulate/snapshots/{id}/export`, `fos snapshots export`, `engine.exportSnapshot`),
 * and such a file imported as a snapshot of another sandbox, on this fos or another (`POST .../snapshots/import`,
 * `fos snapshots import`, `engine.importSnapshot`, `fos serve --load`), which a restore then puts in place.
 *
 * The file (the contract's `SnapshotFile`) holds the rows the snapshot holds, as the store keeps them: whatever a
 * snapshot saves, the file carries, and nothing of the store that wrote it; and the `data` a suite keeps with its
 * fixture, which an import keeps with the snapshot. Its tables come by name and each table's rows by key (code point
 * order), one row to a line (`fileText`), so the same world is the same bytes on every store that numbers it alike,
 * and a fixture built again reads as a diff.
 *
 * An import is checked whole before anything is written, the refusals in this order (a file that breaks two rules
 * always gets the first):
 * 1. what the file is (400 VALIDATION_ERROR): a JSON object whose `format` is "fos-snapshot" and whose `version` is a
 *    whole number;
 * 2. whether this fos can read it (422 UNPROCESSABLE_ENTITY): a `version` of the format above this fos's, or a
 *    `fosVersion` of another major version;
 * 3. its size (422): more rows than a snapshot holds (Snapshots.ts, `maxSnapshotRows`);
 * 4. its tables (422): each one this fos's registry saves in a snapshot (kernel/Domain.ts);
 * 5. its shape (400, with a pointer per problem): the contract's `SnapshotFile`;
 * 6. its rows (400, with pointers): each is its table's row with a key of its own and no unique value another row
 *    of the file holds, names no organization but the file's and nothing of it outside its sandbox, and is one of
 *    the sandbox's rows where the registry looks for them (so a reset or a restore finds it again); and is a row a
 *    read of it can answer (`readProblems`: its resource's schema, a timer's kind and payload, exact ledger amounts),
 *    so that nothing an import takes answers a read with a 500;
 * 7. its ledger (422): the ledger audit's checks over the file's accounts, transfers and transactions (`ledgerRows`);
 * 8. the store (Snapshots.ts, `keepImported`): 409 past the organization's snapshots, or when a row's id or unique
 *    value is held outside this sandbox (another organization's row: ids are unique in a store).
 *
 * Organizations: a row names its organization as an `organizationId` member and in scopes and keys that begin with
 * `<organization id>/sandbox`. An import into another organization rewrites those, and only those, to the importing
 * organization's; every other id is kept, since the tests that hold them expect them, so a file's ids must be free in
 * the importing store. What is the store's own and not the world's, the keeping does (Snapshots.ts, `keepImported`):
 * the history's keys, which are the store's sequence, are renumbered; the store's sequence moves past the file's.
 *
 * Round trip: a file imported and exported again is the same bytes. A history row is written under the key fos
 * gave it (`hst_` and its sequence, `Domain.SandboxTable.fileKey`), whatever number the store holds it under; an
 * imported snapshot's export writes its file's `snapshot` (in the importing organization) and `sequence` again,
 * and leaves out the clock the import added to a file without one.
 *
 * Time: a sandbox that followed its engine's root clock (the file holds no clock of its own) is imported with one at
 * the snapshot's `createdAt`, so a restore puts the world's time back on any engine.
 */
import { AssetCodes, Chains, type ErrorEntry, maxSnapshotFileBytes, parseIso, type Snapshot, SnapshotFile, snapshotFileFormat, snapshotFileVersion, toIso } from "@fos/contract"
import { Cause, Effect, Exit, Schema } from "effect"
import corePackage from "../package.json" with { type: "json" }
import * as Clocks from "./kernel/Clocks.ts"
import * as Domain from "./kernel/Domain.ts"
import * as LedgerAudit from "./inspect/LedgerAudit.ts"
import * as Ledger from "./money/Ledger.ts"
import * as Problem from "./kernel/Problem.ts"
import * as RandomStreams from "./kernel/RandomStreams.ts"
import * as Store from "./kernel/Store.ts"
import * as Timers from "./kernel/Timers.ts"
import * as Transactions from "./money/Transactions.ts"
import * as Wire from "./kernel/Wire.ts"
import * as Snapshots from "./Snapshots.ts"
import * as Faults from "./simulate/Faults.ts"
import * as Auth from "./tenancy/Auth.ts"
import * as Tenancy from "./tenancy/Tenancy.ts"

/** The version of this fos (every fos package has the same; `fos --version` prints it), written in every file. */
export const fosVersion: string = corePackage.version

/** The major version of a fos version: a file imports into a fos of the same one. */
const majorOf = (version: string): string => version.split(".")[0]!

/** Code point order (what the SQL stores' "C" collation sorts by), so no store's own order shows in a file. */
export const compareCodePoints = (a: string, b: string): number => {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x === y) continue
    // UTF-16 puts the surrogates (code points past U+FFFF) below U+E000..U+FFFF; code points put them above.
    const lift = (c: number) => (c >= 0xe000 ? c - 0x800 : c >= 0xd800 ? c + 0x2000 : c)
    return lift(x) - lift(y)
  }
  return a.length - b.length
}

/** A snapshot's file, with its text: what an export answers, byte for byte. */
export interface Exported {
  readonly file: SnapshotFile
  readonly text: string
}

/**
 * The snapshot `id` of the organization as a file. 422 when its text would be larger than an import takes
 * (`maxSnapshotFileBytes`): every file fos exports, fos imports.
 */
export const exportFile = (organizationId: string, id: string): Effect.Effect<Exported, Problem.ApiError, Store.Store | Domain.Domains> =>
  Effect.gen(function*() {
    const registry = yield* Domain.Domains
    const { snapshot, rows: stored } = yield* Snapshots.readRows(organizationId, id)
    const keyOf = new Map(registry.sandboxTables.map((step) => [step.table.name, step.table.key]))
    // The rows' keys as a file writes them (`fileKey`): every string that names a row under another, the one it was
    // written under.
    const moved = new Map<string, string>()
    for (const step of registry.sandboxTables) {
      const fileKey = step.fileKey
      if (fileKey === undefined) continue
      for (const { table, row } of stored) {
        if (table !== step.table.name) continue
        const key = step.table.key(row)
        const written = fileKey(row)
        if (written !== key) moved.set(key, written)
      }
    }
    const added = snapshot.file?.clockAdded === true ? Clocks.Clocks.name : undefined
    const rows = stored.filter((r) => r.table !== added).map((r) => (moved.size === 0 ? r : { table: r.table, row: Snapshots.swapStrings(r.row, moved) }))
    const byTable = new Map<string, Array<{ readonly key: string; readonly row: unknown }>>()
    for (const { table, row } of rows) {
      const key = keyOf.get(table)
      if (key === undefined) {
        return yield* Problem.apiError("CONFLICT", `The snapshot holds rows of ${table}, which this version of fos does not keep.`)
      }
      let list = byTable.get(table)
      if (list === undefined) byTable.set(table, (list = []))
      list.push({ key: key(row), row })
    }
    const tables: Record<string, ReadonlyArray<Record<string, unknown>>> = {}
    for (const name of [...byTable.keys()].sort(compareCodePoints)) {
      tables[name] = byTable.get(name)!.sort((a, b) => compareCodePoints(a.key, b.key)).map((r) => r.row as Record<string, unknown>)
    }
    const file: SnapshotFile = {
      format: snapshotFileFormat,
      version: snapshotFileVersion,
      fosVersion,
      snapshot: snapshot.file === undefined ? Snapshots.toWire(snapshot) : { ...snapshot.file.snapshot, organizationId },
      sequence: snapshot.file?.sequence ?? snapshot.sequence,
      ...(snapshot.data === undefined ? {} : { data: snapshot.data }),
      tables
    }
    const text = fileText(file)
    const bytes = Wire.utf8Length(text)
    if (bytes > maxSnapshotFileBytes) {
      return yield* Problem.apiError("UNPROCESSABLE_ENTITY", `The snapshot's file would be ${bytes} bytes, more than the ${maxSnapshotFileBytes} an import takes.`, {
        resolution: "Snapshot a smaller sandbox: documents' bytes and delivered webhooks are most of a large one; reset it, or build the world the tests need in a fresh organization."
      })
    }
    return { file, text }
  })

/** JSON with every object's members in code point order, and no spacing: the same value is the same text. */
export const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item === undefined ? null : item)).join(",")}]`
  if (value !== null && typeof value === "object") {
    const members = Object.keys(value).filter((name) => (value as Record<string, unknown>)[name] !== undefined).sort(compareCodePoints)
    return `{${members.map((name) => `${JSON.stringify(name)}:${canonicalJson((value as Record<string, unknown>)[name])}`).join(",")}}`
  }
  return JSON.stringify(value)
}

/**
 * A file as fos writes it, to be read in a diff: the file's members in their order, one to a line; each table's rows
 * one to a line, in the file's order (tables by name, rows by key); every row, the snapshot and `data` as
 * `canonicalJson`. So a fixture built again shows, line for line, the rows that changed and nothing else.
 */
export const fileText = (file: SnapshotFile): string => {
  const lines = ["{"]
  const head: Array<[string, unknown]> = [["format", file.format], ["version", file.version], ["fosVersion", file.fosVersion], ["snapshot", file.snapshot], ["sequence", file.sequence]]
  if (file.data !== undefined) head.push(["data", file.data])
  for (const [name, value] of head) lines.push(`  ${JSON.stringify(name)}: ${canonicalJson(value)},`)
  const tables = Object.entries(file.tables)
  if (tables.length === 0) lines.push(`  "tables": {}`)
  else {
    lines.push(`  "tables": {`)
    tables.forEach(([name, rows], t) => {
      const end = t === tables.length - 1 ? "" : ","
      if (rows.length === 0) return lines.push(`    ${JSON.stringify(name)}: []${end}`)
      lines.push(`    ${JSON.stringify(name)}: [`)
      rows.forEach((row, i) => lines.push(`      ${canonicalJson(row)}${i === rows.length - 1 ? "" : ","}`))
      lines.push(`    ]${end}`)
    })
    lines.push("  }")
  }
  lines.push("}", "")
  return lines.join("\n")
}

// --- reading a file ----------------------------------------------------------------------------------------------

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

const invalid = (pointer: string, detail: string) => Problem.invalidRequest([{ pointer, detail }])

/**
 * Steps 1 to 5 of the module comment: the file as the contract's `SnapshotFile`, once this fos knows it can read it,
 * with the registry's table of each name.
 */
const decode = (input: unknown, registry: Domain.Registry) =>
  Effect.gen(function*() {
    // 1. What it is.
    if (!isObject(input)) return yield* invalid("", `must be a fos snapshot file: a JSON object whose format is "${snapshotFileFormat}"`)
    if (input.format !== snapshotFileFormat) return yield* invalid("/format", `must be "${snapshotFileFormat}"`)
    const version = input.version
    if (typeof version !== "number" || !Number.isInteger(version) || version < 1) return yield* invalid("/version", "must be a whole number, at least 1")
    const written = typeof input.fosVersion === "string" ? input.fosVersion : undefined
    // 2. Whether this fos reads it.
    if (version > snapshotFileVersion) {
      return yield* Problem.apiError("UNPROCESSABLE_ENTITY", `The file is version ${version} of fos's snapshot format${written === undefined ? "" : `, written by fos ${written}`}; this fos (${fosVersion}) reads version ${snapshotFileVersion} and earlier.`, {
        resolution: "Import it into a fos at least as new as the one that wrote it, or export the snapshot again from a fos of this version."
      })
    }
    if (written !== undefined && /^\d+\./.test(written) && majorOf(written) !== majorOf(fosVersion)) {
      return yield* Problem.apiError("UNPROCESSABLE_ENTITY", `The file was written by fos ${written}; this fos (${fosVersion}) imports files of fos ${majorOf(fosVersion)}.x only, since another major version may keep its rows otherwise.`, {
        resolution: `Import it into a fos ${majorOf(written)}.x, or build the world again on this one and export it.`
      })
    }
    // 3. Its size, and 4. its tables: counted and named before a row is read.
    const tables = input.tables
    if (isObject(tables)) {
      let rows = 0
      for (const list of Object.values(tables)) if (Array.isArray(list)) rows += list.length
      if (rows > Snapshots.maxSnapshotRows) {
        return yield* Problem.apiError("UNPROCESSABLE_ENTITY", `The file holds ${rows} rows, more than the ${Snapshots.maxSnapshotRows} a snapshot takes.`, {
          resolution: "Export a smaller sandbox."
        })
      }
      const saved = new Set(registry.sandboxTables.filter((step) => step.saved !== false).map((step) => step.table.name))
      const unknown = Object.keys(tables).filter((name) => !saved.has(name))
      if (unknown.length > 0) {
        return yield* Problem.apiError("UNPROCESSABLE_ENTITY", `The file holds rows of ${unknown.map((name) => JSON.stringify(name)).join(", ")}, which this fos (${fosVersion}) does not keep in a snapshot.`, {
          resolution: "Import it into the fos version that exported it, or a newer one."
        })
      }
    }
    // 5. Its shape. Rows that are all objects are what the schema takes (any members), and are kept as they came,
    // not copied: the schema would build each of 10,000 rows again, member by member, in one step. The rest of the
    // file is decoded without them; a file with a row of another kind is decoded whole, for the schema's own words.
    const decodeShape = (value: unknown) =>
      Schema.decodeUnknownEffect(SnapshotFile)(value, { errors: "all", onExcessProperty: "error" }).pipe(
        Effect.mapError((e) => Problem.invalidRequest(Wire.decodeFailure(e.issue).errors))
      )
    if (!isObject(tables) || !Object.values(tables).every((list) => Array.isArray(list) && list.every(isObject))) return yield* decodeShape(input)
    const head = yield* decodeShape({ ...input, tables: {} })
    return { ...head, tables: tables as SnapshotFile["tables"] }
  })

/**
 * How many of a file's rows its check goes through between two of its store's pauses: fewer than a bulk write's
 * (`Store.pauseEveryRows`), since checking a row (its schema's encode, its selection, its rewrite) costs more than
 * writing it.
 */
const checkedBetweenPauses = 100

/** A string that begins with an organization's id and a slash: a scope, or a key under one. */
const scoped = /^(org_[0-9A-Za-z]{1,64})(\/.*)$/su

/**
 * Step 6 of the module comment, for one file: every row with the file's organization rewritten to `organizationId`
 * (`organizationId` members, and the scopes and keys under `<organization>/sandbox`), checked, by table; or the
 * problems found, with pointers, at most `Wire.maxErrorEntries`.
 */
const checkRows = (file: SnapshotFile, registry: Domain.Registry, organizationId: string) => Effect.gen(function*() {
  const from = file.snapshot.organizationId
  const errors: Array<ErrorEntry> = []
  const problem = (path: ReadonlyArray<string | number>, detail: string) => {
    if (errors.length < Wire.maxErrorEntries) errors.push({ pointer: Problem.toPointer(path), detail })
  }
  /** A string as the importing organization names it, or undefined (and a problem) when it names what the file may not. */
  const rewriteString = (s: string, path: ReadonlyArray<string | number>, isOrganization: boolean): string | undefined => {
    if (isOrganization) {
      if (s === from) return organizationId
      problem(path, `names the organization ${s}, where the file's rows are all ${from}'s`)
      return undefined
    }
    const m = scoped.exec(s)
    if (m === null) return s
    if (m[1] !== from) {
      problem(path, `names the organization ${m[1]}, where the file's rows are all ${from}'s`)
      return undefined
    }
    const rest = m[2]!
    if (rest !== "/sandbox" && !rest.startsWith("/sandbox/")) {
      problem(path, "names the organization's data outside its sandbox, which no snapshot holds")
      return undefined
    }
    return organizationId + rest
  }
  /**
   * A value with its strings rewritten (`rewriteString`); the value itself when none changed (an import into the
   * organization that exported the file changes none), else a copy of it and of what holds a change. `path` is where
   * the value is, kept as a stack, since problems are few and values many.
   */
  const path: Array<string | number> = []
  const rewrite = (value: unknown, member: string | undefined): unknown => {
    if (typeof value === "string") return rewriteString(value, path, member === "organizationId") ?? value
    if (Array.isArray(value)) {
      let out: Array<unknown> | undefined
      for (let i = 0; i < value.length; i++) {
        path.push(i)
        const next = rewrite(value[i], undefined)
        path.pop()
        if (out === undefined && next !== value[i]) out = value.slice(0, i)
        if (out !== undefined) out.push(next)
      }
      return out ?? value
    }
    if (value !== null && typeof value === "object") {
      let out: Record<string, unknown> | undefined
      const members = Object.entries(value)
      for (let m = 0; m < members.length; m++) {
        const [name, inner] = members[m]!
        path.push(name)
        const renamed = rewriteString(name, path, false) ?? name
        const next = rewrite(inner, name)
        path.pop()
        if (out === undefined && (renamed !== name || next !== inner)) {
          out = {}
          for (let before = 0; before < m; before++) out[members[before]![0]] = members[before]![1]
        }
        if (out !== undefined) out[renamed] = next
      }
      return out ?? value
    }
    return value
  }

  // A table may be found in more than one place of a sandbox (the wallets under their customers, and the funding
  // ones under no customer): a row is the sandbox's when one of its table's selections names it.
  const steps = new Map<string, Array<Domain.SandboxTable>>()
  for (const step of registry.sandboxTables) {
    if (step.saved === false) continue
    const list = steps.get(step.table.name)
    if (list === undefined) steps.set(step.table.name, [step])
    else list.push(step)
  }
  const scope = Tenancy.scopeOf(organizationId, "sandbox")
  const rewritten = new Map<string, { readonly steps: ReadonlyArray<Domain.SandboxTable>; readonly rows: Array<Record<string, unknown>>; readonly keys: Array<string | undefined> }>()
  for (const [name, rows] of Object.entries(file.tables)) {
    const of = steps.get(name)!
    const step = of[0]!
    const keys: Array<string | undefined> = []
    const rewriteRow = (row: unknown, i: number) => {
      path.push("tables", name, i)
      const next = rewrite(row, undefined) as Record<string, unknown>
      path.length = 0
      let key: unknown
      try {
        key = step.table.key(next)
      } catch {
        key = undefined
      }
      if (typeof key !== "string" || key === "") problem(["tables", name, i], `is not a row of ${name}: it has no key`)
      else if (of.some((t) => t.renumberedOnImport === true && t.sequenced?.numberOf(key) === undefined)) problem(["tables", name, i], `is not a row of ${name}: its key ${key} is not one fos makes`)
      keys.push(typeof key === "string" && key !== "" ? key : undefined)
      return next
    }
    const out: Array<Record<string, unknown>> = []
    for (let i = 0; i < rows.length; i++) {
      out.push(rewriteRow(rows[i], i))
      if (i % checkedBetweenPauses === checkedBetweenPauses - 1) yield* Store.pause
    }
    rewritten.set(name, { steps: of, rows: out, keys })
  }

  /** The keys of the file's rows in one partition of an order, as the sandbox will hold them. */
  const partitions = new Map<string, ReadonlySet<string>>()
  const keysIn = (p: Store.Partition): ReadonlySet<string> => {
    const id = `${p.table.name}\u0000${p.order}\u0000${p.partition}`
    let keys = partitions.get(id)
    if (keys === undefined) {
      const found = new Set<string>()
      const of = rewritten.get(p.table.name)
      of?.rows.forEach((row, i) => {
        const key = of.keys[i]
        if (key !== undefined && partitionOf(p.table, p.order, row) === p.partition) found.add(key)
      })
      partitions.set(id, (keys = found))
    }
    return keys
  }
  /** Whether the sandbox's selection of a table names this row, the file's rows being the sandbox. */
  const selects = (selection: Store.Selection, row: Record<string, unknown>, key: string): boolean => {
    const except = selection.except
    if (except !== undefined && row[except.field] === except.equals) return false
    if ("sameKeys" in selection) return keysIn(selection.sameKeys).has(key)
    const partition = partitionOf(selection.table, selection.order, row)
    if (partition === undefined) return false
    if ("parents" in selection) return partition.startsWith(selection.prefix) && keysIn(selection.parents).has(partition.slice(selection.prefix.length))
    return partition === selection.partition
  }

  const ledger = ledgerRows(scope)
  // Each row with the selection that names it, so a snapshot counts it as a reset would.
  const placed = new Map<Domain.SandboxTable, Array<Record<string, unknown>>>()
  for (const [name, { steps: of, rows, keys }] of rewritten) {
    const table = of[0]!.table
    const selections = of.map((step) => [step, step.rows(scope)] as const)
    const seen = new Map<string, number>()
    const written = new Map<string, number>()
    const values = new Map<string, number>()
    const checkRow = (row: Record<string, unknown>, i: number) => {
      const key = keys[i]
      if (key === undefined) return
      const at = ["tables", name, i]
      const twin = seen.get(key)
      if (twin !== undefined) return problem(at, `has the key of row ${twin} (${key})`)
      seen.set(key, i)
      for (const [unique, valueOf] of Object.entries(table.unique)) {
        const value = guarded(() => valueOf(row))
        if (value === undefined) continue
        const other = values.get(`${unique}\u0000${value}`)
        if (other !== undefined) problem(at, `has the ${unique} of row ${other}`)
        else values.set(`${unique}\u0000${value}`, i)
      }
      const step = selections.find(([, selection]) => selects(selection, row, key))?.[0]
      if (step === undefined) return problem(at, `is not a row of the sandbox's ${name} (a claim of a request still running, or a row of another organization, environment or parent)`)
      // Kept as a snapshot keeps it (a clock without an advance under way, `Saved`'s `as`), whatever the file says.
      const as = Domain.savedAs(step)
      const kept = (as === undefined ? row : as(row)) as Record<string, unknown>
      const problems = readProblems(step, kept, registry)
      for (const found of problems) problem([...at, ...found.path], found.detail)
      // Each row written under a key of its own, so that the file this import exports again holds no two alike.
      const fileKey = problems.length === 0 && step.fileKey !== undefined ? guarded(() => step.fileKey!(kept)) : undefined
      if (fileKey !== undefined) {
        const other = written.get(fileKey)
        if (other !== undefined) problem(at, `would be written under the key of row ${other} (${fileKey}): each row's sequence must be its own`)
        else written.set(fileKey, i)
      }
      ledger.add(name, kept, i)
      const list = placed.get(step)
      if (list === undefined) placed.set(step, [kept])
      else list.push(kept)
    }
    for (let i = 0; i < rows.length; i++) {
      checkRow(rows[i]!, i)
      if (i % checkedBetweenPauses === checkedBetweenPauses - 1) yield* Store.pause
    }
  }
  for (const found of ledger.amountProblems()) problem(found.path, found.detail)
  // In the registry's order, each table's rows in the file's.
  return { errors, ledger, tables: registry.sandboxTables.flatMap((step) => placed.has(step) ? [{ step, rows: placed.get(step)! }] : []) }
})

/** A problem of one row, at a path within it. */
interface RowProblem {
  readonly path: ReadonlyArray<string | number>
  readonly detail: string
}

/** The issues of a schema's failure, each at its path. */
const issuesOf = (exit: Exit.Exit<unknown, unknown>): ReadonlyArray<RowProblem> => {
  if (Exit.isSuccess(exit)) return []
  const error = Cause.squash(exit.cause)
  if (!Schema.isSchemaError(error)) return [{ path: [], detail: "is not a row this fos can read" }]
  return Wire.decodeFailure(error.issue).errors.map((e) => ({ path: e.pointer === "" ? [] : e.pointer.slice(1).split("/").map(unescapeToken), detail: e.detail }))
}

const unescapeToken = (token: string) => token.replaceAll("~1", "/").replaceAll("~0", "~")

/**
 * Step 6's reading of a row: what a read of it would meet, so that an import takes no row that a later read answers
 * with a 500. A row of a resource clients read must be that resource as its module makes it (`readsAs`: the
 * contract's schema, which holds each state machine's states, each enumeration's values and each amount's form); a
 * timer must be of a kind this fos fires, its payload that kind's (what the scheduler decodes it with).
 */
const readProblems = (step: Domain.SandboxTable, row: Record<string, unknown>, registry: Domain.Registry): ReadonlyArray<RowProblem> => {
  if (step.readsAs !== undefined) {
    const readAs = guarded(() => step.readsAs!(row))
    if (readAs === undefined) return [{ path: [], detail: `is not a row of ${step.table.name} this fos can read: a member it needs is missing or of another type` }]
    const members = readAs.members ?? {}
    return issuesOf(Schema.encodeUnknownExit(readAs.schema as Schema.Codec<unknown, unknown>)(readAs.value, { errors: "all" })).map(({ path, detail }) =>
      path.length === 0 ? { path, detail } : { path: [members[String(path[0])] ?? path[0]!, ...path.slice(1)], detail }
    )
  }
  if (step.table === Timers.Timers) {
    const handling = typeof row.kind === "string" ? registry.timerHandlers.get(row.kind) : undefined
    if (handling === undefined) return [{ path: ["kind"], detail: "must be a kind of timer this fos fires" }]
    if (typeof row.dueAtMs !== "number" || !Number.isSafeInteger(row.dueAtMs)) return [{ path: ["dueAtMs"], detail: "must be a whole number of milliseconds" }]
    return issuesOf(Schema.decodeUnknownExit(handling.kind.payload as Schema.Decoder<unknown>)(row.payload, { errors: "all" })).map(({ path, detail }) => ({ path: ["payload", ...path], detail }))
  }
  return []
}

/** An amount as the ledger keeps it: a whole number of the asset's smallest unit, in decimal, with no sign. */
const ledgerAmount = /^(0|[1-9][0-9]{0,39})$/

/**
 * The file's ledger (its accounts and transfers) and its transactions' holds, gathered as the rows are checked: each
 * amount must be exact (`ledgerAmount`), and the whole must pass the ledger audit's checks (inspect/LedgerAudit.ts,
 * `auditRows`): the postings add up to the balances each account holds, each asset's sum is zero, no customer account
 * is below zero, and the open transactions' holds are pending.
 */
const ledgerRows = (scope: string) => {
  const accounts: Array<{ readonly row: Ledger.LedgerAccount; readonly at: number }> = []
  const transfers: Array<{ readonly row: Ledger.LedgerTransfer; readonly at: number }> = []
  const transactions: Array<{ readonly row: Transactions.StoredTransaction; readonly at: number }> = []
  const add = (table: string, row: Record<string, unknown>, at: number) => {
    if (table === Ledger.LedgerAccounts.name) accounts.push({ row: row as unknown as Ledger.LedgerAccount, at })
    else if (table === Ledger.LedgerTransfers.name) transfers.push({ row: row as unknown as Ledger.LedgerTransfer, at })
    else if (table === Transactions.Transactions.name) transactions.push({ row: row as unknown as Transactions.StoredTransaction, at })
  }
  const amountProblems = (): ReadonlyArray<RowProblem> => {
    const found: Array<RowProblem> = []
    const amount = (table: string, at: number, row: Record<string, unknown>, member: string) => {
      const value = row[member]
      if (typeof value !== "string" || !ledgerAmount.test(value)) found.push({ path: ["tables", table, at, member], detail: "must be a whole number of the asset's smallest unit, in decimal text (\"1500\")" })
    }
    const asset = (table: string, at: number, row: Record<string, unknown>) => {
      if (!(AssetCodes as ReadonlyArray<unknown>).includes(row.asset)) found.push({ path: ["tables", table, at, "asset"], detail: "must be an asset code" })
      if (row.chain !== undefined && !(Chains as ReadonlyArray<unknown>).includes(row.chain)) found.push({ path: ["tables", table, at, "chain"], detail: "must be a chain, or absent for a fiat asset" })
    }
    for (const { row, at } of accounts) {
      asset(Ledger.LedgerAccounts.name, at, row as never)
      for (const member of ["debitsPending", "debitsPosted", "creditsPending", "creditsPosted"]) amount(Ledger.LedgerAccounts.name, at, row as never, member)
      if (!(Ledger.HolderTypes as ReadonlyArray<unknown>).includes(row.holderType)) found.push({ path: ["tables", Ledger.LedgerAccounts.name, at, "holderType"], detail: `must be one of ${Ledger.HolderTypes.join(", ")}` })
    }
    for (const { row, at } of transfers) {
      asset(Ledger.LedgerTransfers.name, at, row as never)
      amount(Ledger.LedgerTransfers.name, at, row as never, "amount")
      if (!(Ledger.TransferKinds as ReadonlyArray<unknown>).includes(row.kind)) found.push({ path: ["tables", Ledger.LedgerTransfers.name, at, "kind"], detail: `must be one of ${Ledger.TransferKinds.join(", ")}` })
      for (const member of ["debitAccountId", "creditAccountId"] as const) {
        if (typeof row[member] !== "string") found.push({ path: ["tables", Ledger.LedgerTransfers.name, at, member], detail: "must be a ledger account's id" })
      }
    }
    for (const { row, at } of transactions) {
      const holds: unknown = row.holds
      if (!Array.isArray(holds) || !holds.every((h) => typeof h === "string" || (isObject(h) && typeof h.id === "string"))) {
        found.push({ path: ["tables", Transactions.Transactions.name, at, "holds"], detail: "must be the ledger transfers the transaction holds: an array of their ids" })
      }
    }
    return found
  }
  /** The audit's violations, each with the pointers of the rows it names; empty for a ledger that balances. */
  const unbalanced = (): ReadonlyArray<string> => {
    const { violations } = LedgerAudit.auditRows(scope, accounts.map((a) => a.row), transfers.map((t) => t.row), transactions.map((t) => t.row))
    const pointerOf = (table: string, list: ReadonlyArray<{ readonly row: { readonly id: string }; readonly at: number }>, id: string | undefined) => {
      const at = id === undefined ? undefined : list.find((r) => r.row.id === id)?.at
      return at === undefined ? [] : [Problem.toPointer(["tables", table, at])]
    }
    return violations.map((v) => {
      // A sum per asset that is not zero names the asset's accounts (the first few: one of them is off).
      const ofAsset = v.check === "zero_sum" && v.asset !== undefined
        ? accounts.filter((a) => (a.row.chain === undefined ? a.row.asset : `${a.row.asset}@${a.row.chain}`) === v.asset).slice(0, 5).map((a) => Problem.toPointer(["tables", Ledger.LedgerAccounts.name, a.at]))
        : []
      const pointers = [
        ...ofAsset,
        ...pointerOf(Ledger.LedgerAccounts.name, accounts, v.accountId === undefined ? undefined : `${scope}/${v.accountId}`),
        ...pointerOf(Ledger.LedgerTransfers.name, transfers, v.transferId),
        ...pointerOf(Transactions.Transactions.name, transactions, v.transactionId)
      ]
      return `${pointers.length === 0 ? "" : `${pointers.join(", ")}: `}${v.detail} (${v.check})`
    })
  }
  return { add, amountProblems, unbalanced }
}

/** A function of a row that may meet a row it does not expect (a file edited by hand): undefined when it throws. */
const guarded = <A>(f: () => A): A | undefined => {
  try {
    return f()
  } catch {
    return undefined
  }
}

const partitionOf = (table: Store.Table<any>, order: string, row: unknown): string | undefined => {
  const partition = guarded(() => table.orders[order]?.partition(row))
  // A member of another type where the order reads its partition (a file edited by hand) lists the row nowhere.
  return typeof partition === "string" ? partition : undefined
}

/** The SHA-256 of a file as fos writes it: the same for the same world, whatever spacing the file was saved with. */
export const digestOf = (file: SnapshotFile): string => Auth.sha256Hex(JSON.stringify(file))

/**
 * A file as the rows of a snapshot of `organizationId`'s sandbox: decoded and checked (steps 1 to 6 of the module
 * comment), or the first refusal. Writes nothing.
 */
export const read = (organizationId: string, input: unknown): Effect.Effect<{ readonly file: SnapshotFile; readonly rows: Snapshots.ImportedRows }, Problem.ApiError, Domain.Domains | Store.Store> =>
  Effect.gen(function*() {
    const registry = yield* Domain.Domains
    const file = yield* decode(input, registry)
    const createdAtMs = parseIso(file.snapshot.createdAt)
    if (createdAtMs === undefined) return yield* invalid("/snapshot/createdAt", "must be an ISO 8601 timestamp with a time zone, such as 2026-03-01T12:00:00.000Z")
    // A file of 10,000 rows takes tens of milliseconds to decode and as many to check: the other requests of a server
    // whose store pauses are answered between the two, and every few hundred rows of the check (docs/storage.md,
    // "Long work and other requests").
    yield* Store.pause
    const checked = yield* checkRows(file, registry, organizationId)
    yield* Store.pause
    if (checked.errors.length > 0) return yield* Problem.invalidRequest(checked.errors)
    const unbalanced = checked.ledger.unbalanced()
    if (unbalanced.length > 0) {
      const shown = unbalanced.slice(0, 10)
      return yield* Problem.apiError("UNPROCESSABLE_ENTITY", `The file's ledger does not balance: ${shown.join("; ")}${unbalanced.length > shown.length ? `; and ${unbalanced.length - shown.length} more` : ""}. Nothing was written.`, {
        resolution: "Every balance a file holds must be what its ledger's transfers add up to: export the snapshot again rather than editing its amounts, or edit the transfers and the accounts' totals together."
      })
    }
    const tables: Array<{ readonly step: Domain.SandboxTable; readonly rows: ReadonlyArray<unknown> }> = Faults.markFaultedEndpoints(checked.tables)
    // The world's time travels with it: a sandbox that followed its engine's root clock (no clock row of its own) is
    // imported with a clock at the snapshot's time, rather than taking the importing engine's (docs/snapshots.md).
    const scope = Tenancy.scopeOf(organizationId, "sandbox")
    const clock = registry.sandboxTables.find((step) => step.table === Clocks.Clocks)
    const clockAdded = clock !== undefined && !checked.tables.some((t) => t.step === clock && t.rows.length > 0)
    if (clockAdded) {
      const row: Clocks.StoredClock = { id: scope, nowMs: createdAtMs }
      tables.push({ step: clock, rows: [row] })
    }
    const head: Snapshots.ImportedFile = { snapshot: file.snapshot, sequence: file.sequence, ...(clockAdded ? { clockAdded: true as const } : {}) }
    return {
      file,
      rows: { tables, createdAt: toIso(createdAtMs), sequence: file.sequence, file: head, ...(file.data === undefined ? {} : { data: file.data }) }
    }
  })

/**
 * Imports a file (its JSON, parsed) as a new snapshot of the organization's sandbox, with the label the caller gave it
 * (as a save's: kept and listed, never read by fos; its export writes the file's own head again); answers the
 * snapshot, which a restore puts in place. Nothing is written unless all of it is. On a seeded engine the sandbox's random stream
 * starts anew, salted with the new snapshot's id: the file's ids came from a stream this engine may hold too (the
 * same seed and organization), and would be minted again.
 */
export const importFile = (
  organizationId: string,
  input: unknown,
  options: { readonly label?: string | undefined } = {}
): Effect.Effect<Snapshot, Problem.ApiError, Store.Store | Domain.Domains> =>
  Effect.gen(function*() {
    // After the request's own parse of the file's text, before its decode.
    yield* Store.pause
    const { rows } = yield* read(organizationId, input)
    const snapshot = yield* Snapshots.keepImported(organizationId, { ...rows, label: options.label })
    yield* RandomStreams.reseed(Tenancy.scopeOf(organizationId, "sandbox"), snapshot.id)
    return snapshot
  })

/**
 * `fos serve --load`: the file's world put in place in the organization's sandbox, in one transaction, and the
 * snapshot it came from. The snapshot an earlier load of the same file made (by its digest) is restored again, so a
 * server that loads a file at every start keeps one snapshot of it, not one per start.
 */
export const load = (organizationId: string, input: unknown): Effect.Effect<{ readonly snapshot: Snapshot; readonly imported: boolean }, Problem.ApiError, Store.Store | Domain.Domains> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const { file, rows } = yield* read(organizationId, input)
    const digest = digestOf(file)
    const done = yield* store.transaction(Effect.gen(function*() {
      const earlier = yield* Snapshots.loadedFrom(organizationId, digest)
      const snapshot = earlier ?? (yield* Snapshots.keepImported(organizationId, { ...rows, loadedFrom: digest }))
      yield* Snapshots.restore(organizationId, snapshot.id)
      return { snapshot, imported: earlier === undefined }
    }))
    if (done.imported) yield* RandomStreams.reseed(Tenancy.scopeOf(organizationId, "sandbox"), done.snapshot.id)
    return done
  })
