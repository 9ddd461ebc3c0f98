/**
 * The store contract's shapes: the store a host hands it (`StoreUnderTest`), the cases it makes of it
 * (`StoreContractCase`: a name and a `run` that rejects when the store breaks the contract), and what a runner
 * supplies for the cases that need a child process (`Processes`). A runner (the Vitest one, the node:test one, or a
 * host's own) only registers each case with its framework.
 */
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import type * as Store from "../kernel/Store.ts"
import { render } from "./Expect.ts"

/** How hard the property case pushes: a SQL store pays a round trip per write, the memory store does not. */
export interface ContractScale {
  readonly propertyRows: number
  readonly propertyRuns: number
}

/**
 * A store that keeps what it committed, and how to open it again. A place is a string (a file, a directory, a
 * database URL) so that a child process can be given it.
 */
export interface DurableStore<E = unknown> {
  /** A new place, where `open` opens an empty store. */
  readonly place: () => Promise<string>
  /** The store at `place`: the same place opens the same store again. The store closes with the layer's scope. */
  readonly open: (place: string) => Layer.Layer<Store.Store, E>
  /** Removes what `place` made, once a case is done with it. */
  readonly remove?: (place: string) => Promise<void>
  /**
   * The module a child process imports to open the store, for the case that kills a process mid-commit: a URL (or
   * an absolute path) that `import()` takes, and the name of its export that is `open`. Without it, that case is left out.
   */
  readonly module?: { readonly url: string; readonly export: string }
}

/** The store the contract runs against. */
export interface StoreUnderTest<E = unknown> {
  readonly name: string
  /** A fresh, empty store, for each case. Without it, each case opens a new place of `durable`. */
  readonly fresh?: () => Layer.Layer<Store.Store, E>
  /** For a store that claims to be durable: the cases that close, reopen and kill it run only with this. */
  readonly durable?: DurableStore<E>
  readonly scale?: ContractScale
}

/** One case of the contract: `group` names the sections it is in, outermost first. */
export interface StoreContractCase {
  readonly group: ReadonlyArray<string>
  readonly name: string
  readonly run: () => Promise<void>
  /** How long the case may take, in milliseconds, when it needs more than a runner's default. */
  readonly timeout?: number
}

/** A child process that opens the store and commits in a loop (store-contract/child.ts), seen from its parent. */
export interface Committer {
  /** The numbers of the commits the child has acknowledged, in order. */
  readonly acknowledged: ReadonlyArray<number>
  /** Resolves once `count` commits are acknowledged; rejects if the child ends first, with what it wrote to stderr. */
  readonly acknowledgedAtLeast: (count: number) => Promise<void>
  /** Kills the child with SIGKILL; resolves once it is gone, with the signal that ended it. */
  readonly kill: () => Promise<{ readonly code: number | null; readonly signal: string | null; readonly stderr: string }>
}

/** What a runner gives the cases that need a child process. */
export interface Processes {
  readonly startCommitter: (options: {
    readonly module: { readonly url: string; readonly export: string }
    readonly place: string
    readonly commits: number
  }) => Committer
}

/** The layer a case runs its store on: `fresh`, or a new place of `durable`, removed after the case. */
export const freshLayer = <E>(store: StoreUnderTest<E>): Layer.Layer<Store.Store, E> => {
  if (store.fresh !== undefined) return store.fresh()
  const durable = store.durable
  if (durable === undefined) throw new Error(`store contract: ${store.name} has neither fresh nor durable`)
  return Layer.unwrap(
    Effect.map(
      Effect.acquireRelease(
        Effect.promise(() => durable.place()),
        (place) => Effect.promise(() => durable.remove?.(place) ?? Promise.resolve())
      ),
      durable.open
    )
  )
}

/**
 * Collects cases as a Vitest file declares tests (`describe`, `it`, `it.effect`, `it.live`), so that the suite reads
 * as one. `it.effect` runs under a test clock that starts at 0, as @effect/vitest's does; `it.live` on the real clock.
 */
export const collector = () => {
  const cases: Array<StoreContractCase> = []
  const group: Array<string> = []
  const describe = (name: string, body: () => void): void => {
    group.push(name)
    try {
      body()
    } finally {
      group.pop()
    }
  }
  // A store's failure that is not an Error (an Effect's typed failure) is reported as one, with what it was.
  const asError = (e: unknown) => {
    throw e instanceof Error ? e : new Error(`the store failed with ${render(e)}`, { cause: e })
  }
  const add = (name: string, run: () => Promise<void>, timeout?: number) =>
    void cases.push({ group: [...group], name, run: () => run().catch(asError), ...(timeout === undefined ? {} : { timeout }) })
  const it = Object.assign(add, {
    effect: <A, E>(name: string, self: () => Effect.Effect<A, E>, timeout?: number) =>
      add(name, () => Effect.runPromise(Effect.asVoid(Effect.provide(Effect.scoped(Effect.suspend(self)), TestClock.layer()))), timeout),
    live: <A, E>(name: string, self: () => Effect.Effect<A, E>, timeout?: number) =>
      add(name, () => Effect.runPromise(Effect.asVoid(Effect.scoped(Effect.suspend(self)))), timeout)
  })
  return { cases, describe, it }
}
