/**
 * Forks (docs/snapshots.md, "Forks"): a snapshot's world in a new organization of its own, made in
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
 *   snapshot are as they were; its stream too, since the fork's organization, user and key are minted from the
 *   parent's lasting stream (RandomStreams.ts), or, for a fork given a stream name (`?stream=`), from a generator of
 *   the seed, the parent and the name alone: a suite that names each test file's fork after the file gets the same
 *   fork, with the same ids, whatever else was forked before it.
 *
 * Rewriting. A row's key is its id across the store, so two organizations of one store cannot hold one id: every id
 * of the world gets a new one, and the answer maps each old id to its new one (`ids`; docs/decisions.md, "A fork's
 * ids"). Every string of a row, and every member's name, is rewritten by one regular expression, whole words only:
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
 * What follows from the snapshot alone is worked out once and kept (`Template`, per store, a few of them): its rows
 * by table, the world's ids, and where in each row the words to rewrite are. A fork then draws its ids and numbers
 * and makes its rows from it, sharing with the snapshot's rows every value that holds no such word. A snapshot's rows
 * never change, so a kept template is never stale, on any process sharing the store.
 *
 * The refusals of a fork, in this order (docs/decisions.md, "The order of refusals"): a snapshot that is not the
 * caller's organization's is 404 NOT_FOUND, as its read and restore are; an organization that holds
 * `maxForksPerOrganization` forks already is 409 CONFLICT; a stream name whose fork exists is 409 CONFLICT. The parent's row is locked first, so its forks, snapshots,
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
import * as Telemetry from "./kernel/Telemetry.ts"
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

/**
 * A snapshot's rows as a fork rewrites them, read once (see the module comment): each table's rows, each with where
 * its words that a fork gives new values are (`Plan`), and what the new values are drawn for. Everything in it
 * follows from the snapshot's rows, which never change, so it is kept for the next fork of the same snapshot
 * (`templates`); what a fork draws (ids, numbers) is drawn anew for each.
 */
interface Template {
  readonly tables: ReadonlyArray<{ readonly step: Domain.SandboxTable; readonly rows: ReadonlyArray<unknown>; readonly plans: ReadonlyArray<Plan | undefined> }>
  /** The world's ids by prefix, each prefix's in code point order. */
  readonly idsByPrefix: ReadonlyMap<string, ReadonlyArray<string>>
  /** The keys that carry the store's sequence, in the order of their numbers. */
  readonly numbered: ReadonlyArray<{ readonly key: string; readonly number: number; readonly keys: Domain.SequencedKeys }>
  /** The distinct numbers of `numbered`, ascending. */
  readonly numbers: ReadonlyArray<number>
  /** The characters of its strings: about what keeping it costs. */
  readonly size: number
}

/**
 * Where a value holds words a fork rewrites: a string cut at them (`slots`, between the `literals`), or an object's
 * or an array's members, each with its own plan or none (kept as it is), an object's names too. A value without such
 * words has no plan, and a fork's row shares it with the snapshot's (rows are never changed in place).
 */
type Plan =
  | { readonly kind: "text"; readonly literals: ReadonlyArray<string>; readonly slots: ReadonlyArray<string> }
  | { readonly kind: "array"; readonly items: ReadonlyArray<Plan | undefined> }
  | { readonly kind: "object"; readonly members: ReadonlyArray<readonly [name: string, renamed: Plan | undefined, value: Plan | undefined]> }

/** The words of `text` that may be ids, each with where it is. */
const wordsIn = (text: string, each: (word: string, at: number) => void) => {
  const word = new RegExp(idWord, "g")
  for (let m = word.exec(text); m !== null; m = word.exec(text)) each(m[0], m.index)
}

/** The plan of a string: undefined when it holds no word `rewritten` names. */
const textPlan = (text: string, rewritten: ReadonlySet<string>): Plan | undefined => {
  const literals: Array<string> = []
  const slots: Array<string> = []
  let last = 0
  wordsIn(text, (word, at) => {
    if (!rewritten.has(word)) return
    literals.push(text.slice(last, at))
    slots.push(word)
    last = at + word.length
  })
  if (slots.length === 0) return undefined
  literals.push(text.slice(last))
  return { kind: "text", literals, slots }
}

/** The plan of a value (`Plan`). */
const planOf = (value: unknown, rewritten: ReadonlySet<string>): Plan | undefined => {
  if (typeof value === "string") return textPlan(value, rewritten)
  if (value === null || typeof value !== "object") return undefined
  if (Array.isArray(value)) {
    const items = value.map((item) => planOf(item, rewritten))
    return items.some((item) => item !== undefined) ? { kind: "array", items } : undefined
  }
  let changed = false
  const members = Object.entries(value).map(([name, inner]) => {
    const namePlan = textPlan(name, rewritten)
    const valuePlan = planOf(inner, rewritten)
    if (namePlan !== undefined || valuePlan !== undefined) changed = true
    return [name, namePlan, valuePlan] as const
  })
  return changed ? { kind: "object", members } : undefined
}

/** `value` with its plan's words given their new values (`words`); what has no plan is shared. */
const applyPlan = (value: unknown, plan: Plan | undefined, words: ReadonlyMap<string, string>): unknown => {
  if (plan === undefined) return value
  switch (plan.kind) {
    case "text": {
      let text = plan.literals[0]!
      for (let i = 0; i < plan.slots.length; i++) text += words.get(plan.slots[i]!)! + plan.literals[i + 1]!
      return text
    }
    case "array":
      return (value as ReadonlyArray<unknown>).map((item, i) => applyPlan(item, plan.items[i], words))
    case "object": {
      const out: Record<string, unknown> = {}
      for (const [name, renamed, valuePlan] of plan.members) {
        out[renamed === undefined ? name : (applyPlan(name, renamed, words) as string)] = applyPlan((value as Record<string, unknown>)[name], valuePlan, words)
      }
      return out
    }
  }
}

/**
 * The templates a store's forks have made, by snapshot (its id and the store's sequence when it was taken, which no
 * other snapshot of the store shares), most recently used last. Per store, since a snapshot id means that store's
 * snapshot; bounded, since a template is about the size of its snapshot's rows.
 */
const templates = new WeakMap<Store.StoreService, Map<string, Template>>()
/** The most characters of templates a store keeps; a larger template is made for each fork and not kept. */
const maxTemplateChars = 64 * 1024 * 1024
const maxTemplates = 8

/**
 * The template of a snapshot's rows (`Template`): grouped by table; every string of them (and every member's name)
 * read once for the words that may be ids, the world's ids among them (the minted ones anywhere, and the rows' keys
 * shaped as ids), the keys that carry the store's sequence, and each row's plan of the words a fork rewrites (those,
 * the parent's organization id, and the sequenced keys).
 */
const templateOf = (
  registry: Domain.Registry,
  rows: ReadonlyArray<{ readonly table: string; readonly row: unknown }>,
  parent: string
): Effect.Effect<Template, Problem.ApiError> =>
  Effect.gen(function*() {
    const steps = new Map<string, Domain.SandboxTable>()
    for (const step of registry.sandboxTables) if (!steps.has(step.table.name)) steps.set(step.table.name, step)
    const grouped = new Map<string, { readonly step: Domain.SandboxTable; readonly rows: Array<unknown> }>()
    for (const { table, row } of rows) {
      let of = grouped.get(table)
      if (of === undefined) {
        const step = steps.get(table)
        if (step === undefined) return yield* Problem.apiError("CONFLICT", `The snapshot holds rows of ${table}, which this version of fos does not keep.`)
        grouped.set(table, (of = { step, rows: [] }))
      }
      of.rows.push(row)
    }
    // The world's ids: the minted ones anywhere in its rows (a string, or a member's name), and the rows' keys shaped
    // as ids; and the keys that carry the store's sequence.
    const found = new Set<string>()
    let size = 0
    const scan = (value: unknown): void => {
      if (typeof value === "string") {
        size += value.length
        wordsIn(value, (word) => {
          if (mintedId.test(word)) found.add(word)
        })
      } else if (Array.isArray(value)) value.forEach(scan)
      else if (value !== null && typeof value === "object") {
        for (const [name, inner] of Object.entries(value)) {
          scan(name)
          scan(inner)
        }
      }
    }
    const numbered: Array<{ readonly key: string; readonly number: number; readonly keys: Domain.SequencedKeys }> = []
    for (const [name, { step, rows: list }] of grouped) {
      for (const row of list) {
        scan(row)
        const key = step.table.key(row)
        if (step.sequenced !== undefined) {
          const number = step.sequenced.numberOf(key)
          if (number === undefined) return yield* Effect.die(new Error(`${name}: the key ${key} carries no number of the store's`))
          numbered.push({ key, number, keys: step.sequenced })
        } else if (idShaped.test(key)) found.add(key)
      }
    }
    const idsByPrefix = new Map<string, Array<string>>()
    for (const id of [...found].sort()) {
      const prefix = prefixOf(id)
      if (notTheWorlds.has(prefix)) continue
      const olds = idsByPrefix.get(prefix)
      if (olds === undefined) idsByPrefix.set(prefix, [id])
      else olds.push(id)
    }
    // The words a fork gives new values, whole words only; every other word stays as it is.
    const rewritten = new Set<string>([parent, ...numbered.map((n) => n.key)])
    for (const olds of idsByPrefix.values()) for (const id of olds) rewritten.add(id)
    const tables = [...grouped.values()].map(({ step, rows: list }) => ({ step, rows: list, plans: list.map((row) => planOf(row, rewritten)) }))
    numbered.sort((a, b) => a.number - b.number)
    return { tables, idsByPrefix, numbered, numbers: [...new Set(numbered.map((n) => n.number))], size }
  })

/** The template of the snapshot, kept by the store's forks or made (and kept, within the bounds). */
const templateFor = (store: Store.StoreService, registry: Domain.Registry, snapshot: Snapshots.StoredSnapshot) =>
  Effect.gen(function*() {
    let kept = templates.get(store)
    if (kept === undefined) templates.set(store, (kept = new Map()))
    const name = `${snapshot.id}/${snapshot.sequence}`
    const found = kept.get(name)
    if (found !== undefined) {
      kept.delete(name)
      kept.set(name, found)
      return found
    }
    const made = yield* templateOf(registry, yield* Snapshots.rowsOf(snapshot), snapshot.organizationId)
    if (made.size > maxTemplateChars) return made
    kept.set(name, made)
    let total = 0
    for (const t of kept.values()) total += t.size
    for (const [oldest, t] of kept) {
      if (kept.size <= maxTemplates && total <= maxTemplateChars) break
      kept.delete(oldest)
      total -= t.size
    }
    return made
  })

/**
 * The snapshot's rows as the fork holds them, from its template: every id of the world given a new one of its
 * prefix (drawn from the current stream, each prefix's sorted and given to its old ids in their order: two ids
 * compare as their old ones did, so a list ordered by id, or by time and then id, lists the fork's rows in the order
 * it lists the parent's), every sequenced key a number taken from the store (in the order of the old ones), and the
 * parent's organization id the fork's. Answers the rows by table and the ids a client sees, old to new.
 */
const fill = (store: Store.StoreService, template: Template, to: string, parent: string) =>
  Effect.gen(function*() {
    const ids = new Map<string, string>()
    for (const [prefix, olds] of template.idsByPrefix) {
      const made = [...yield* IdGenerator.newPlainIds(prefix, olds.length)].sort()
      olds.forEach((old, i) => ids.set(old, made[i]!))
    }
    const taken = yield* store.takeNumbers(template.numbers.length)
    const renumbered = new Map(template.numbers.map((n, i) => [n, taken[i]!]))
    const words = new Map(ids)
    const shown = new Map(ids)
    for (const { key, number, keys } of template.numbered) {
      const moved = keys.withNumber(key, renumbered.get(number)!)
      words.set(key, moved)
      if (keys.shown) shown.set(key, moved)
    }
    words.set(parent, to)
    const tables = template.tables.map(({ step, rows, plans }) => ({ table: step.table, rows: rows.map((row, i) => applyPlan(row, plans[i], words)) }))
    return { tables: tables as Array<{ readonly table: Store.Table<any>; readonly rows: ReadonlyArray<unknown> }>, shown }
  })
export interface MakeOptions {
  /**
   * A name for the fork's streams (`?stream=`, such as a test file's path): on a seeded engine the fork's
   * organization, its ids and everything its sandbox mints then follow from the seed, the parent and the name alone,
   * not from what the parent or its other forks did before (RandomStreams.ts). One fork of a name at a time: another
   * while it exists is 409 CONFLICT.
   */
  readonly stream?: string | undefined
}

/**
 * Forks the snapshot `snapshotId` of the organization (see the module comment): a new organization whose sandbox is
 * the snapshot's world, its key and the map of the world's ids to its own. Refused, in this order: 404 for a snapshot
 * that is not the organization's, 409 past `maxForksPerOrganization`, 409 for a stream whose fork exists.
 */
export const make = (
  organizationId: OrganizationId | string,
  snapshotId: string,
  options: MakeOptions = {}
): Effect.Effect<Fork, Problem.ApiError, Store.Store | Domain.Domains> =>
  Effect.flatMap(Effect.all([Store.Store, Domain.Domains]), ([store, registry]) =>
    store.transaction(Effect.gen(function*() {
      const parent = yield* lockOrganization(store, organizationId)
      // 1. The snapshot, the organization's.
      const snapshot = yield* Snapshots.find(organizationId, snapshotId)
      // 2. The bound.
      const held = yield* store.count(Tenancy.Organizations, "forks", organizationId)
      if (held >= maxForksPerOrganization) {
        return yield* Problem.apiError("CONFLICT", `This organization holds ${held} forks, the most it may hold at a time.`, {
          resolution: "Delete a fork (DELETE /v2/simulate/forks/{organizationId}) before making another."
        })
      }
      const template = yield* templateFor(store, registry, snapshot)
      const forkId = (yield* IdGenerator.newId("org")) as OrganizationId
      if (options.stream !== undefined && (yield* store.get(Tenancy.Organizations, forkId)) !== undefined) {
        return yield* Problem.apiError("CONFLICT", `A fork made with the stream ${JSON.stringify(options.stream)} exists already (${forkId}): a stream's fork is one organization at a time.`, {
          resolution: `Delete it (DELETE /v2/simulate/forks/${forkId}) before forking with this stream again, or fork with another stream.`
        })
      }
      const scope = Tenancy.scopeOf(forkId, "sandbox")
      // Its streams start from the seed: a stream's fork made again after its deletion mints what it minted before.
      yield* RandomStreams.forget(scope)
      yield* RandomStreams.forget(RandomStreams.lastingStream(scope))
      const { tables, shown } = yield* fill(store, template, forkId, organizationId).pipe(RandomStreams.withStream(scope))
      // The world's time travels with it: a sandbox that followed its engine's root clock gets one of its own.
      const clocks = registry.sandboxTables.find((step) => step.table === Clocks.Clocks)
      if (clocks !== undefined && !tables.some((t) => t.table === clocks.table)) {
        const clock: Clocks.StoredClock = { id: scope, nowMs: parseIso(snapshot.createdAt)! }
        tables.push({ table: clocks.table, rows: [clock] })
      }
      const faults = tables.find((t) => t.table === Faults.SimulatedFaults)?.rows as ReadonlyArray<Faults.FaultRow> | undefined
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
      yield* store.insertRows(tables).pipe(
        Effect.catchTag("UniqueViolation", (v) => Effect.die(new Error(`a fork's ${v.table} row ${v.key} is taken (${v.unique}): its ids were all made anew`)))
      )
      const ids: Record<string, string> = {}
      for (const old of [...shown.keys()].sort()) ids[old] = shown.get(old)!
      return {
        organizationId: forkId,
        parentOrganizationId: parent.id,
        snapshotId: snapshot.id as Fork["snapshotId"],
        environment: "sandbox" as const,
        apiKey: key.key,
        ids,
        createdAt: snapshot.createdAt
      }
    }).pipe(
      // The fork's organization, user and key: from its stream name's own generator, or the parent's lasting stream.
      options.stream === undefined
        ? RandomStreams.withStream(RandomStreams.lastingStream(Tenancy.scopeOf(organizationId, "sandbox")))
        : RandomStreams.withFreshStream(RandomStreams.namedStream(organizationId, options.stream))
    ))).pipe(
    Effect.tap((fork) => Telemetry.annotate({ [Telemetry.Attribute.forkOrganization]: fork.organizationId })),
    Telemetry.withSpan(Telemetry.SpanName.fork, { attributes: { [Telemetry.Attribute.organization]: organizationId, [Telemetry.Attribute.snapshotId]: snapshotId } })
  )

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
        const scope = Tenancy.scopeOf(forkId, environment)
        yield* Reset.clearSandbox(store, registry, scope, { keptByReset: true })
        // An organization's id is never made again, so neither is its stream wanted again, once the deletion is sure.
        yield* store.afterCommit(RandomStreams.forget(scope))
      }
      yield* Snapshots.removeAll(forkId)
      yield* Tenancy.removeOrganization(forkId)
    })))
