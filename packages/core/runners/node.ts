/**
 * The store contract under node:test: `describeStoreContract(store)` in a test file (run with `node --test`)
 * registers one test per case of `@fos/core/store-contract`, in nested `describe`s, with the kill case's child
 * processes on Node.
 */
import { describe, it } from "node:test"
import { type CaseTree, caseTree, storeContract, type StoreUnderTest } from "@fos/core/store-contract"
import { nodeProcesses } from "./processes.ts"

const register = (tree: CaseTree): void => {
  for (const c of tree.cases) it(c.name, c.timeout === undefined ? {} : { timeout: c.timeout }, () => c.run())
  for (const [name, inner] of tree.groups) describe(name, () => register(inner))
}

export const describeStoreContract = <E>(store: StoreUnderTest<E>): void =>
  void describe(`Store contract: ${store.name}`, () => register(caseTree(storeContract(store, { processes: nodeProcesses }))))
