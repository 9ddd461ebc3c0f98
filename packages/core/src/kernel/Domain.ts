/**
 * A domain's descriptor: everything the engine must know about one module's state, said by that module in one typed
 * value, and the engine's registry composed from them (docs/architecture.md, "A domain's descriptor").
 *
 * - `tables`: where a sandbox's rows of each table are (`SandboxTable`), so a reset removes them and a snapshot saves
 *   and restores them; `keptTables`: the tables that hold no sandbox's data (an organization's keys, the processes
 *   sharing the store), which a reset leaves alone on purpose.
 * - `timers`: each kind of timer it fires (`Timers.Handling`): its payload's schema, the resource it belongs to, its
 *   handler and what firing it does in words.
 *
 * The engine (Engine.ts) composes the list of descriptors (Domains.ts) into one `Registry`, provides the services
 * the handlers read once, and the parts that need a table or a kind read the registry (`Domains`, and
 * `Timers.TimerHandlers` for the scheduler), never a list of their own. So adding a table or a kind of timer touches
 * the module that owns it; a host adds its own through `EngineOptions.domains`. The kernel names no domain: this
 * module knows only the shapes.
 *
 * Who reacts to whose topic is not here but in Subscriptions.ts, one table of every topic and its subscribers in
 * order: a subscriber's place in that order is part of the behaviour, which a list spread over descriptors would hide.
 */
import type { SandboxCounts } from "@fos/contract"
import { Context, Effect, type Schema } from "effect"
import * as History from "./History.ts"
import * as Outbox from "./Outbox.ts"
import type * as Store from "./Store.ts"
import * as Timers from "./Timers.ts"

/**
 * What a snapshot saves of a table's rows (Snapshots.ts): every row (the default); none (`false`: what lives only as
 * long as a connection); every row but those `except` names (a running request's claim, whose work has not
 * committed); or, for a table of a row or two per scope, each row as `as` gives it, read through the process.
 */
export type Saved = false | { readonly except: NonNullable<Store.Selection["except"]> } | { readonly as: (row: any) => unknown }

/**
 * One kind of sandbox row and where a scope's rows of it are (`rows`, a `Store.Selection`), so that a reset removes
 * them and a snapshot copies them all at once, whatever their number, without reading them. `counted`: the count of
 * a reset's answer (and a snapshot's contents) its rows add to. `keptByReset` marks a table a reset leaves alone but
 * a snapshot saves and a restore puts back (the organization's own clock, once it has one); `saved` is what of it a
 * snapshot saves.
 */
export interface SandboxTable {
  readonly table: Store.Table<any>
  readonly rows: (scope: string) => Store.Selection
  readonly counted?: keyof SandboxCounts
  readonly keptByReset?: true
  readonly saved?: Saved
  /**
   * For a table whose keys are the store's sequence and nothing else shows (the history's): an imported snapshot's
   * rows (Snapshots.ts) take new keys, numbers taken from the importing store (`Store.takeNumbers`, through
   * `sequenced`) in the order of the old ones, since the other store's numbers are likely keys here already; every
   * string of the snapshot equal to an old key becomes the new one. (A timer's key carries the sequence too, but a
   * client sees it, and the timeline orders by its number: timers keep theirs.)
   */
  readonly renumberedOnImport?: true
  /**
   * For a table renumbered on import: the key a file writes a row under, the one fos gave it when it was written
   * (the history's: `hst_` and its sequence), whatever number an import or a fork gave it since; so a file imported
   * and exported again is the same bytes. A file's rows must have distinct ones (SnapshotFiles.ts).
   */
  readonly fileKey?: (row: any) => string
  /**
   * For a table whose keys carry the store's sequence (the history's, the timers'): the number a key carries and the
   * key with another in its place. A fork (Forks.ts) copies rows within the store, whose sandbox copied keeps its
   * keys: the copies' keys take new numbers (`Store.takeNumbers`), in the order of the old ones.
   */
  readonly sequenced?: SequencedKeys
  /**
   * For a table of rows a client reads (resources, and the events, history and kept answers the sandbox shows or
   * replays): the row as it is read (`ReadAs`). An imported snapshot file's rows are checked through it
   * (SnapshotFiles.ts), so that a row the API could not answer is refused by the import, not met as a 500 by a later
   * read.
   */
  readonly readsAs?: (row: any) => ReadAs
}

/**
 * A row as the API answers it: the contract's schema of the resource (what the endpoint encodes its answer with) and
 * the row made into that resource by its module's own `toWire`. `members` names the row's member behind a wire
 * member of another name (an application's `applicationId` is its row's `id`), so a refusal points at the row's.
 */
export interface ReadAs {
  readonly schema: Schema.Top
  readonly value: unknown
  readonly members?: Readonly<Record<string, string>>
}

/** Keys that carry the store's sequence (`SandboxTable.sequenced`). */
export interface SequencedKeys {
  /** The number a key carries; undefined for a key fos did not make. */
  readonly numberOf: (key: string) => number | undefined
  /** The key with `n` in place of its number, all else kept. */
  readonly withNumber: (key: string, n: number) => string
  /** Whether a client sees these keys (a timer's id is listed; a history entry's is shown nowhere): a fork maps them. */
  readonly shown: boolean
}

/** The table's rows in the scope's partition of `order`. */
export const inScope = (table: Store.Table<any>, order: string): SandboxTable => ({ table, rows: (scope) => ({ table, order, partition: scope }) })

/** The table's rows in `order`'s partitions `<scope>/<parent key>` (or `<parent key>`), one per parent of the scope. */
export const underParents = (
  table: Store.Table<any>,
  order: string,
  parent: { readonly table: Store.Table<any>; readonly order: string; readonly prefix: "scope/" | "" }
): SandboxTable => ({
  table,
  rows: (scope) => ({
    table,
    order,
    prefix: parent.prefix === "" ? "" : `${scope}/`,
    parents: { table: parent.table, order: parent.order, partition: scope }
  })
})

/** The rows a snapshot leaves out of a table it copies whole (`Saved`'s `except`). */
export const savedExcept = (step: SandboxTable): Store.Selection["except"] =>
  step.saved !== undefined && step.saved !== false && "except" in step.saved ? step.saved.except : undefined

/** How a snapshot saves each row of a table it saves through the process (`Saved`'s `as`); undefined for the rest. */
export const savedAs = (step: SandboxTable): ((row: any) => unknown) | undefined =>
  step.saved !== undefined && step.saved !== false && "as" in step.saved ? step.saved.as : undefined

/**
 * One module's descriptor. `R`: the engine's services its timers' handlers read beyond the store (the review
 * settings, the webhook transport), which the engine provides when it composes the registry.
 */
export interface Domain<R = never> {
  /** The module, as errors name it. */
  readonly name: string
  readonly tables?: ReadonlyArray<SandboxTable>
  readonly keptTables?: ReadonlyArray<Store.Table<any>>
  readonly timers?: ReadonlyArray<Timers.Handling<any, R>>
}

/** A descriptor, its literal kinds kept in its type (Domains.ts checks every kind the contract names is handled). */
export const make = <const D extends Domain<any>>(domain: D): D => domain

/** The kind names a list of descriptors handles, as a type. */
export type HandledKinds<D> = D extends { readonly timers?: ReadonlyArray<infer H> } ? H extends { readonly kind: { readonly name: infer N } } ? N : never
  : never

/** The engine's descriptors composed: what reset, snapshots, the scheduler and the inspector read. */
export interface Registry {
  /** Every table holding a sandbox's rows, in the order of the descriptors. */
  readonly sandboxTables: ReadonlyArray<SandboxTable>
  readonly keptTables: ReadonlyArray<Store.Table<any>>
  /** Every kind of timer, by name, its handler's services provided. */
  readonly timerHandlers: ReadonlyMap<string, Timers.Handling<any>>
}

export class Domains extends Context.Service<Domains, Registry>()("fos/Domains") {}

/**
 * Composes descriptors into the registry, with `services` given to every handler. A table or a kind declared by two
 * descriptors (or a table both a sandbox's and kept) is a mistake no run could be trusted with: it throws, and the
 * engine does not start.
 */
export const compose = <R>(domains: ReadonlyArray<Domain<R>>, services: Context.Context<R>): Registry => {
  const owners = new Map<string, string>()
  const claim = (what: string, owner: string) => {
    const first = owners.get(what)
    if (first !== undefined && first !== owner) throw new Error(`${what} is declared by both ${first} and ${owner}`)
    owners.set(what, owner)
  }
  const timerHandlers = new Map<string, Timers.Handling<any>>()
  for (const domain of domains) {
    for (const step of domain.tables ?? []) claim(`The table ${step.table.name}`, domain.name)
    for (const table of domain.keptTables ?? []) claim(`The table ${table.name}`, `${domain.name} (kept)`)
    for (const handling of domain.timers ?? []) {
      claim(`The timer kind ${handling.kind.name}`, `${domain.name}'s timers`)
      if (timerHandlers.has(handling.kind.name)) throw new Error(`The timer kind ${handling.kind.name} is handled twice by ${domain.name}`)
      timerHandlers.set(handling.kind.name, { ...handling, fire: (payload: unknown) => Effect.provideContext(handling.fire(payload), services) })
    }
  }
  return {
    sandboxTables: domains.flatMap((d) => d.tables ?? []),
    keptTables: domains.flatMap((d) => d.keptTables ?? []),
    timerHandlers
  }
}

/**
 * The kernel's own tables, declared here because the modules that own them are below this one (the scheduler
 * imports the outbox and the history): a sandbox's events, its timers (kept ones included) and what caused each
 * state change and which timers fired, for a resource's timeline (inspect/Timeline.ts).
 */
export const kernel = make({
  name: "kernel",
  tables: [
    { ...inScope(Outbox.OutboxEvents, "byScope"), counted: "events", readsAs: Outbox.readAs },
    { ...inScope(Timers.Timers, "byScope"), counted: "timers", sequenced: Timers.keyNumbers },
    { ...inScope(History.History, "byScope"), renumberedOnImport: true, sequenced: History.keyNumbers, readsAs: History.readAs, fileKey: History.writtenKey }
  ]
})
