/**
 * @fos/core/store-contract: the behaviour a store of the store port must show, as a list of cases that any test
 * runner can run, on any store a host writes (docs/stores.md). `storeContract(store)` makes the cases; the runners
 * register them, one test each: `@fos/core/store-contract/vitest` and `@fos/core/store-contract/node` (node:test).
 * This module imports no test framework and no runtime module; the case that kills a child process needs one that
 * can start processes, which the runners give it.
 */
import { behaviourCases } from "./Cases.ts"
import { durabilityCases } from "./Durability.ts"
import type { Processes, StoreContractCase, StoreUnderTest } from "./Suite.ts"

export { commitLoop } from "./Durability.ts"
export { ContractAssertion, expect } from "./Expect.ts"
export type { Committer, ContractScale, DurableStore, Processes, StoreContractCase, StoreUnderTest } from "./Suite.ts"

/**
 * The contract's cases on `store`: the behaviour cases on its fresh stores, and, for a durable store, the cases
 * that close and reopen it, and (given `processes` and `store.durable.module`) the one that kills it mid-commit.
 */
export const storeContract = <E>(store: StoreUnderTest<E>, options: { readonly processes?: Processes } = {}): ReadonlyArray<StoreContractCase> => [
  ...behaviourCases(store),
  ...durabilityCases(store, options.processes)
]

/** The cases by their groups, outermost first, for a runner that nests them (`describe`). */
export interface CaseTree {
  readonly cases: ReadonlyArray<StoreContractCase>
  readonly groups: ReadonlyArray<readonly [name: string, tree: CaseTree]>
}

export const caseTree = (cases: ReadonlyArray<StoreContractCase>, depth = 0): CaseTree => {
  const groups = new Map<string, Array<StoreContractCase>>()
  const here: Array<StoreContractCase> = []
  for (const c of cases) {
    const name = c.group[depth]
    if (name === undefined) here.push(c)
    else groups.set(name, [...(groups.get(name) ?? []), c])
  }
  return { cases: here, groups: [...groups].map(([name, inside]) => [name, caseTree(inside, depth + 1)] as const) }
}
