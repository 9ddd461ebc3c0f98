/**
 * The stores a test runs an engine on, each made fresh and dropped after: the memory store, a PGlite directory, and a
 * PostgreSQL database when DATABASE_URL names a server the tests may create databases on (CI sets it).
 */
import { rmSync } from "node:fs"
import type { Store } from "@fos/core"
import type { Engine } from "@fos/http"
import { layerPgliteStore, layerPostgresStore } from "@fos/sql"
import type { Layer } from "effect"
import { afterEach } from "vitest"
import { adminUrl, freshDatabase } from "../adapters/sql/test/databases.ts"
import { freshPgliteDirectory } from "../adapters/sql/test/pgliteDirectory.ts"

/** A store for `createEngine`'s `store`, and how to drop it once the engine is closed. */
export interface MadeStore {
  readonly store: "memory" | Layer.Layer<Store.Store, unknown>
  readonly cleanup: () => Promise<void> | void
}

/** The stores by name (`memory`, `PGlite`, `PostgreSQL` when reachable); `label` names their directories and databases. */
export const storeMakers = (label: string): Record<string, () => Promise<MadeStore>> => ({
  memory: async () => ({ store: "memory", cleanup: () => {} }),
  PGlite: async () => {
    const dir = await freshPgliteDirectory(label)
    return { store: layerPgliteStore(dir), cleanup: () => rmSync(dir, { recursive: true, force: true }) }
  },
  ...(adminUrl === undefined || adminUrl === ""
    ? {}
    : {
      PostgreSQL: async () => {
        const database = await freshDatabase(label)
        return { store: layerPostgresStore(database.url), cleanup: database.drop }
      }
    })
})

/**
 * What a test opens and must let go after it, closed and dropped after each test of the suite that calls this: the
 * engines first (`engine`), then the stores and files they used (`cleanup`), in the order they were given.
 */
export const closedAfterEach = () => {
  let engines: Array<Engine> = []
  let cleanups: Array<() => Promise<void> | void> = []
  afterEach(async () => {
    for (const e of engines) await e.close()
    engines = []
    for (const c of cleanups) await c()
    cleanups = []
  })
  return {
    engine: <E extends Engine>(engine: E): E => {
      engines.push(engine)
      return engine
    },
    cleanup: (f: () => Promise<void> | void): void => {
      cleanups.push(f)
    },
    /** A fresh store of `name` (`storeMakers`), dropped after the test. */
    store: async (name: string, label: string): Promise<MadeStore["store"]> => {
      const made = await storeMakers(label)[name]!()
      cleanups.push(made.cleanup)
      return made.store
    }
  }
}
