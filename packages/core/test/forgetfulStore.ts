/**
 * A store that says it is durable and is not: the memory store on an image that starts empty at every open and
 * whose commit keeps nothing. The store contract must fail it (StoreContract.test.ts); `open` is the export its
 * committing child process opens it with.
 */
import { Effect, Layer } from "effect"
import * as MemoryStore from "../src/kernel/MemoryStore.ts"
import * as Store from "../src/kernel/Store.ts"

export const open = (_place: string): Layer.Layer<Store.Store> =>
  Layer.sync(Store.Store, () => MemoryStore.make({ rows: new Map(), copies: new Map(), sequence: 0, commit: () => Effect.void }))
