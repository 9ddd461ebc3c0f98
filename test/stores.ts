/**
 * The stores a test runs an engine on, each made fresh and dropped after: the memory store, a PGlite directory, and a
 * PostgreSQL database when DATABASE_URL names a server the tests may create databases on (CI sets it).
 */
import { rmSync } from "node:fs"
import type { Store } from "@fos/core"
import { layerPgliteStore, layerPostgresStore } from "@fos/sql"
import type { Layer } from "effect"
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
