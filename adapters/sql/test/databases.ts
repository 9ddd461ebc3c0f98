/**
 * A database of its own for each test file on the PostgreSQL of DATABASE_URL, so files that empty tables or
 * kill servers never disturb each other when vitest runs them in parallel.
 */
import { Effect, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { layerPostgresClient } from "../src/index.ts"

export const adminUrl = process.env.DATABASE_URL

/** Creates an empty database on the server of `server` (DATABASE_URL by default); returns its URL and a drop. */
export const freshDatabase = async (
  label: string,
  server: string | undefined = adminUrl
): Promise<{ readonly url: string; readonly drop: () => Promise<void> }> => {
  if (server === undefined || server === "") throw new Error("freshDatabase needs DATABASE_URL")
  const name = `fos_${label}_${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`
  const admin = ManagedRuntime.make(layerPostgresClient(server, { maxConnections: 1 }))
  await admin.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`CREATE DATABASE ${name}`)))
  const url = new URL(server)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      await admin.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))).catch(() => undefined)
      await admin.dispose()
    }
  }
}
