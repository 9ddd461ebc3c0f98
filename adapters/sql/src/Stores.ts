/**
 * The durable stores as layers: PostgreSQL at a URL, and PGlite (the same SQL dialect, in process) in a
 * directory. Both run the migrations, then serve the one SQL store.
 *
 * PGlite is reached through its socket server on 127.0.0.1 with one connection, so both stores share one SQL
 * client (`@effect/sql-pg`) and one implementation (docs/storage.md says why this route was chosen). PGlite is a
 * single session, so on it transactions run one at a time.
 */
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs"
import { join } from "node:path"
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { PgClient } from "@effect/sql-pg"
import { Store } from "@fos/core"
import { Effect, Layer, Redacted } from "effect"
import { migrate } from "./Migrations.ts"
import { makeSqlStore } from "./SqlStore.ts"

/** The store over whatever SQL client the layer is given: migrations first. */
export const layerSqlStore = Layer.effect(Store, Effect.andThen(migrate, makeSqlStore))

/** A store problem an operator can act on: the message says what and where. */
export class StoreOpenError extends Error {}

/** Says what went wrong opening a store, for an operator: the kind of SQL failure, never a stack trace. */
export const describeStoreFailure = (where: string, e: unknown): string => {
  if (e instanceof StoreOpenError) return e.message
  if (e instanceof Error && e.name === "DatabaseTooNew") return `${where}: ${e.message}`
  const reason = (e as { reason?: { _tag?: string; message?: string } })?.reason
  const tag = reason?._tag
  const what = tag === "AuthenticationError"
    ? "authentication failed (check the user name and password)"
    : tag === "ConnectionError"
    ? "cannot connect (is the server running, and is the host and port right?)"
    : tag === "AuthorizationError"
    ? "permission denied"
    : String((e as Error)?.message ?? reason?.message ?? e)
  return `${where}: ${what}`
}

/** A SQL client for PostgreSQL at `url`, with a pool of connections. */
export const layerPostgresClient = (url: string, options: { readonly maxConnections?: number } = {}) =>
  PgClient.layer({
    url: Redacted.make(url),
    maxConnections: options.maxConnections ?? 20,
    connectTimeout: "5 seconds",
    applicationName: "fos"
  })

/** The store on PostgreSQL at `url`. */
export const layerPostgresStore = (url: string, options: { readonly maxConnections?: number } = {}) =>
  layerSqlStore.pipe(Layer.provide(layerPostgresClient(url, options)))

/** The URL without its password, for messages. */
export const redactUrl = (url: string): string => {
  try {
    const u = new URL(url)
    if (u.password !== "") u.password = "***"
    return u.toString()
  } catch {
    return "(a URL that cannot be parsed)"
  }
}

const pidAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * Takes `<dir>/fos.lock` for this process. A lock whose process is gone (after a crash) is taken over; a live one
 * is refused, because two processes on one PGlite directory would corrupt it.
 */
const lockDirectory = (dir: string): (() => void) => {
  try {
    mkdirSync(dir, { recursive: true })
  } catch (e) {
    throw new StoreOpenError(`PGlite directory ${dir}: cannot create it (${(e as NodeJS.ErrnoException).code})`)
  }
  const lockPath = join(dir, "fos.lock")
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, "wx")
      writeSync(fd, String(process.pid))
      closeSync(fd)
      return () => rmSync(lockPath, { force: true })
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      if (code !== "EEXIST") throw new StoreOpenError(`PGlite directory ${dir}: cannot write to it (${code})`)
      const holder = Number(readFileSync(lockPath, "utf8").trim())
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && pidAlive(holder)) {
        throw new StoreOpenError(`PGlite directory ${dir} is in use by another fos process (pid ${holder}); stop it or use another directory`)
      }
      rmSync(lockPath, { force: true })
    }
  }
  throw new StoreOpenError(`PGlite directory ${dir}: cannot take its lock`)
}

/** The store on PGlite in `dir`: durable, in process, no set-up. */
export const layerPgliteStore = (dir: string) => layerSqlStore.pipe(Layer.provide(layerPgliteClient(dir)))

/** A SQL client for PGlite in `dir`, which it locks for this process. */
export const layerPgliteClient = (dir: string) =>
  Layer.unwrap(Effect.gen(function*() {
    const release = yield* Effect.try({ try: () => lockDirectory(dir), catch: (e) => e as StoreOpenError })
    yield* Effect.addFinalizer(() => Effect.sync(release))
    const db = yield* Effect.tryPromise({
      try: () => PGlite.create(dir),
      catch: (e) => new StoreOpenError(`PGlite directory ${dir}: cannot open the database (${(e as Error).message})`)
    })
    yield* Effect.addFinalizer(() => Effect.promise(() => db.close()).pipe(Effect.ignore))
    const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0 })
    yield* Effect.tryPromise({
      try: () => server.start(),
      catch: (e) => new StoreOpenError(`PGlite: cannot start its local socket (${(e as Error).message})`)
    })
    yield* Effect.addFinalizer(() => Effect.promise(() => server.stop()).pipe(Effect.ignore))
    const [host, port] = server.getServerConn().split(":") as [string, string]
    return PgClient.layer({ host, port: Number(port), username: "postgres", database: "postgres", maxConnections: 1 })
  }))
