/**
 * The durable stores as layers: PostgreSQL at a URL, served by the SQL store (SqlStore.ts), and PGlite (the same SQL
 * dialect, in process) in a directory, served by the memory store with the database as its image (ImageStore.ts).
 * Both run the same migrations.
 *
 * The migrations (and the SQL store's tests on PGlite) reach PGlite through an Effect `SqlClient` over its own API,
 * in the process (PgliteClient.ts), so one SQL client interface runs every statement of the schema on both, and
 * nothing listens on a port (docs/storage.md says why this route was chosen).
 */
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs"
import { connect, createServer, type Server } from "node:net"
import { homedir } from "node:os"
import { join, relative } from "node:path"
import { PGlite } from "@electric-sql/pglite"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Store } from "@fos/core"
import { Duration, Effect, Layer, Redacted } from "effect"
import { foldLog, makeImageStore } from "./ImageStore.ts"
import { layerPgliteSqlClient } from "./PgliteClient.ts"
import { latestVersion, migrate } from "./Migrations.ts"
import { makeSharedState } from "./SharedState.ts"
import { endpointOf, watchedConnection } from "./SilentServer.ts"
import { makeSqlStore } from "./SqlStore.ts"

/** The store over whatever SQL client the layer is given: migrations first. */
export const layerSqlStore = Layer.effect(Store.Store, Effect.andThen(migrate, makeSqlStore))

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

export interface PostgresOptions {
  /** How many connections the pool opens at most; 20 by default. */
  readonly maxConnections?: number
  /**
   * How long a statement, or a connection's start, may go unanswered before the database is taken as unreachable
   * and the request answers 503 (SilentServer.ts): `Store.StoreTimeout` by default (10 seconds, or `createEngine`'s
   * `storeTimeout`). A duration ("10 seconds") or milliseconds.
   */
  readonly timeout?: Duration.Input
}

/** The timeout `options` gives in milliseconds (a RangeError at once for one that is not a duration), else the engine's. */
const timeoutMsOf = (options: PostgresOptions): Effect.Effect<number> => {
  if (options.timeout === undefined) return Effect.gen(function*() { return yield* Store.StoreTimeout })
  const ms = Duration.toMillis(Duration.fromInputUnsafe(options.timeout))
  if (!(ms >= 1 && ms <= 2_147_483_647)) throw new RangeError(`timeout: ${String(options.timeout)} is not a duration from 1 ms to about 24 days`)
  return Effect.succeed(Math.ceil(ms))
}

/**
 * A SQL client for PostgreSQL at `url`, with a pool of connections, each watched for a silent server
 * (SilentServer.ts). A connect that fails fails within 5 seconds, or the timeout when it is shorter.
 */
export const layerPostgresClient = (url: string, options: PostgresOptions = {}) =>
  Layer.unwrap(Effect.map(timeoutMsOf(options), (timeoutMs) => {
    const endpoint = endpointOf(url)
    return PgClient.layer({
      url: Redacted.make(url),
      maxConnections: options.maxConnections ?? 20,
      connectTimeout: Duration.millis(Math.min(5_000, timeoutMs)),
      stream: () => watchedConnection(endpoint, timeoutMs),
      startupParameters: { statement_timeout: String(timeoutMs) },
      applicationName: "fos"
    })
  }))

/** A SQL client with one connection and no timeout, for what may rightly take long: the migrations at a start. */
const layerUnboundedClient = (url: string) =>
  PgClient.layer({ url: Redacted.make(url), maxConnections: 1, connectTimeout: "5 seconds", applicationName: "fos" })

/**
 * The store on PostgreSQL at `url`, with what the processes sharing its database keep for the service (rate-limit
 * buckets, recent requests: SharedState.ts). The migrations run first on a connection of their own with no timeout:
 * a migration may rewrite a large table, and a start waits for another process's migrations, for longer than a
 * request should.
 */
export const layerPostgresStore = (url: string, options: PostgresOptions = {}) =>
  Layer.effect(
    Store.Store,
    Effect.gen(function*() {
      yield* Effect.scoped(Layer.build(layerUnboundedClient(url)).pipe(Effect.flatMap((client) => Effect.provideContext(migrate, client))))
      const store = yield* makeSqlStore
      return { ...store, shared: yield* makeSharedState }
    })
  ).pipe(Layer.provide(layerPostgresClient(url, options)))

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

/** The lock's socket path: `<dir>/fos.lock`, or relative to the working directory when that is shorter. */
const lockPathOf = (dir: string): string => {
  const absolute = join(dir, "fos.lock")
  // A Unix socket's path is at most 104 bytes on macOS, 108 on Linux.
  const fits = (path: string) => new TextEncoder().encode(path).length < 100
  if (fits(absolute)) return absolute
  const near = relative(process.cwd(), absolute)
  if (fits(near)) return near
  throw new StoreOpenError(`PGlite directory ${dir}: its path is too long for its lock (a Unix socket path, at most 100 bytes); use a shorter one`)
}

/** Listens on the Unix socket `path`; every connection is told this process's pid. */
const listenOn = (path: string): Promise<Server> =>
  new Promise((ok, fail) => {
    const server = createServer((socket) => {
      socket.unref()
      socket.end(String(process.pid))
    })
    server.once("error", fail)
    server.listen({ path, exclusive: true }, () => {
      server.off("error", fail)
      // The lock never keeps the process alive by itself.
      server.unref()
      ok(server)
    })
  })

/**
 * Who listens on `path`: `{ pid }` of a live holder (the pid it says, when it says it within a second), or
 * undefined when nothing does: no socket, or a socket whose process is gone (the system refuses the connection).
 */
const holderOf = (path: string): Promise<{ readonly pid: string | undefined } | undefined> =>
  new Promise((ok) => {
    const socket = connect({ path })
    let connected = false
    let said = ""
    const done = () => {
      socket.destroy()
      ok(connected ? { pid: /^\d+$/.test(said) ? said : undefined } : undefined)
    }
    socket.on("connect", () => {
      connected = true
      socket.setTimeout(1000, done)
    })
    socket.on("data", (chunk: Buffer) => (said += chunk.toString("latin1")))
    socket.on("end", done)
    socket.on("error", done)
  })

/**
 * Takes `<dir>/fos.lock` for this process: a Unix socket it listens on. The operating system closes the socket when
 * the process ends, however it ends, so a crash never leaves a lock that blocks a start: a connection to a socket
 * nobody listens on is refused, and such a leftover (or an older fos's pid file) is removed and taken. A socket
 * that answers is another live fos, and is refused, because two processes on one PGlite directory would corrupt it
 * (docs/storage.md says why not a pid). Resolves to the release.
 */
const lockDirectory = async (dir: string): Promise<() => Promise<void>> => {
  try {
    mkdirSync(dir, { recursive: true })
  } catch (e) {
    throw new StoreOpenError(`PGlite directory ${dir}: cannot create it (${(e as NodeJS.ErrnoException).code})`)
  }
  const lockPath = lockPathOf(dir)
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const server = await listenOn(lockPath)
      return () => new Promise<void>((done) => server.close(() => done()))
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      if (code !== "EADDRINUSE") throw new StoreOpenError(`PGlite directory ${dir}: cannot write to it (${code})`)
      const holder = await holderOf(lockPath)
      if (holder !== undefined) {
        throw new StoreOpenError(
          `PGlite directory ${dir} is in use by another fos process${holder.pid === undefined ? "" : ` (pid ${holder.pid})`}; stop it or use another directory`
        )
      }
      rmSync(lockPath, { force: true })
    }
  }
  throw new StoreOpenError(`PGlite directory ${dir}: cannot take its lock`)
}

/** How a PGlite store or client opens its directory. */
export interface PgliteOptions {
  /**
   * A directory of the caller's choice where a new PGlite directory's cluster is kept as a template, made there once
   * by PGlite's initdb and copied into each new directory (`pgliteClusterTemplate`). Undefined (the default): a new
   * directory runs its own initdb, and nothing is written outside it. `fos serve` passes the user's cache
   * (`userTemplateCache`).
   */
  readonly templateCache?: string | undefined
  /**
   * True: the store's long work pauses for the event loop after each commit and every few hundred rows of a bulk
   * write, so that other requests of the process are answered meanwhile (docs/storage.md, "Long work and other
   * requests"); what the process runs during a pause is whatever is ready, its own background work (webhook sends)
   * included. False (the default): it runs as it always has, the order of an embedded engine's work decided by its
   * caller alone. `fos serve` passes true.
   */
  readonly pauses?: boolean | undefined
}

/** The user's cache for fos: `$XDG_CACHE_HOME/fos`, else `~/.cache/fos` (where `fos serve` keeps the template). */
export const userTemplateCache = (): string => join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "fos")

/**
 * The cluster fos makes, smaller than initdb's own (docs/storage.md, "What a PGlite directory holds"): write-ahead
 * segments of 1 MB instead of 16, at most 2 MB of them kept for reuse and 64 MB written between checkpoints, and
 * without the two template databases, which only `CREATE DATABASE` reads. `templateRecipe` names this recipe in a
 * template's path, so a template made by an earlier one is not copied. The same recipe whether a directory is copied
 * from a template or runs its own initdb.
 */
const templateRecipe = "small-1"

/**
 * How fos starts PGlite: its own start parameters, with a buffer pool of 16 MB instead of PostgreSQL's 128. PGlite
 * zeroes its whole pool in WebAssembly at every start, which was most of a start's time in PGlite (650 to 860 ms of
 * `PGlite.create` on this VM; 200 ms with 16 MB). The PGlite store reads the database once at its start and then only
 * appends to its log (ImageStore.ts), so a large pool bought nothing; it also cost the process 112 MB of memory.
 * Given at each start, so directories made before get it too (docs/decisions/0011-a-new-pglite-directory.md).
 */
const pgliteStartParams: ReadonlyArray<string> = [...PGlite.defaultStartParams, "-c", "shared_buffers=16MB"]

/** Opens PGlite on `dir`, which holds no cluster yet: initdb, then the recipe, which the next start reads. */
const initCluster = async (dir: string): Promise<PGlite> => {
  const db = await PGlite.create(dir, { initDbStartParams: ["--wal-segsize=1"], startParams: [...pgliteStartParams] })
  await db.exec(`ALTER SYSTEM SET min_wal_size = '2MB'`)
  await db.exec(`ALTER SYSTEM SET max_wal_size = '64MB'`)
  await db.exec(`UPDATE pg_database SET datistemplate = false WHERE datname IN ('template0', 'template1')`)
  // One statement each: DROP DATABASE cannot run in the transaction a multi-statement exec is.
  await db.exec(`DROP DATABASE template0`)
  await db.exec(`DROP DATABASE template1`)
  return db
}

/**
 * The template cluster in `cache`: one that PGlite's initdb made once (`initCluster`), kept per PGlite version and
 * recipe, and copied into each new directory. initdb is most of what opening a new store costs (seconds of CPU,
 * against a fraction of one for the copy: docs/decisions/0011); fos's migrations run on the copy as
 * on any new store. Made in a directory of its own and renamed into place, so a process that finds it finds it
 * whole. Undefined when `cache` cannot be written: the directory then gets its own initdb. Made once per process and
 * cache.
 */
export const pgliteClusterTemplate = (cache: string): Promise<string | undefined> => {
  let made = templates.get(cache)
  if (made === undefined) templates.set(cache, (made = makeTemplate(cache)))
  return made
}
const templates = new Map<string, Promise<string | undefined>>()

const makeTemplate = async (cache: string): Promise<string | undefined> => {
  try {
    // This package's manifest by module resolution, which finds it from the server's bundle too (scripts/bundle-server.ts).
    const pin = (JSON.parse(readFileSync(new URL(import.meta.resolve("@fos/sql/package.json")), "utf8")) as { dependencies: Record<string, string> })
      .dependencies["@electric-sql/pglite"]
    const template = join(cache, `pglite-cluster-${pin}-${templateRecipe}`)
    if (existsSync(join(template, "PG_VERSION"))) return template
    const building = `${template}.building-${process.pid}`
    rmSync(building, { recursive: true, force: true })
    mkdirSync(building, { recursive: true })
    const db = await initCluster(building)
    await db.exec(`CHECKPOINT`)
    await db.close()
    try {
      renameSync(building, template)
    } catch {
      // Another process put its own in place first.
      rmSync(building, { recursive: true, force: true })
    }
    return existsSync(join(template, "PG_VERSION")) ? template : undefined
  } catch {
    return undefined
  }
}

/**
 * PGlite on `dir`: a directory with a cluster is opened; a new one gets a copy of the template in `templateCache`
 * when one is given and can be made, else its own initdb.
 */
const startPglite = async (dir: string, options: PgliteOptions): Promise<PGlite> => {
  if (!existsSync(join(dir, "PG_VERSION"))) {
    const template = options.templateCache === undefined ? undefined : await pgliteClusterTemplate(options.templateCache)
    if (template === undefined) return initCluster(dir)
    cpSync(template, dir, { recursive: true })
  }
  return PGlite.create(dir, { startParams: [...pgliteStartParams] })
}

/** The store on PGlite in `dir`: durable, in process, no set-up. The memory store with PGlite as its image (ImageStore.ts). */
export const layerPgliteStore = (dir: string, options: PgliteOptions = {}) =>
  Layer.effect(
    Store.Store,
    Effect.gen(function*() {
      const db = yield* openPglite(dir, options)
      yield* migratePglite(db)
      return yield* makeImageStore(db, { pauses: options.pauses === true })
    })
  )

/** A SQL client for PGlite in `dir`, which it locks for this process (the SQL store's tests and the migrations use it). */
export const layerPgliteClient = (dir: string, options: PgliteOptions = {}) =>
  Layer.unwrap(Effect.map(openPglite(dir, options), layerPgliteSqlClient))

/** PGlite in `dir`, locked for this process and closed with the scope. */
const openPglite = (dir: string, options: PgliteOptions) =>
  Effect.gen(function*() {
    const release = yield* Effect.tryPromise({ try: () => lockDirectory(dir), catch: (e) => e as StoreOpenError })
    yield* Effect.addFinalizer(() => Effect.promise(release))
    const db = yield* Effect.tryPromise({
      try: () => startPglite(dir, options),
      catch: (e) => new StoreOpenError(`PGlite directory ${dir}: cannot open the database (${(e as Error).message})`)
    })
    yield* Effect.addFinalizer(() => Effect.promise(() => db.close()).pipe(Effect.ignore))
    return db
  })

/**
 * Runs the migrations `db` lacks, through a SQL client over it (PgliteClient.ts) that lives only while they run. A
 * directory already at the latest version (every restart of the same fos) is told so by one query, without the
 * client.
 */
const migratePglite = (db: PGlite) =>
  Effect.gen(function*() {
    const version = yield* Effect.promise(async () => {
      const found = await db.query<{ found: boolean }>(`SELECT to_regclass('fos_migrations') IS NOT NULL AS found`)
      if (found.rows[0]?.found !== true) return 0
      return Number((await db.query<{ version: number | null }>(`SELECT max(version) AS version FROM fos_migrations`)).rows[0]?.version ?? 0)
    })
    if (version === latestVersion) return
    // The rows the log holds are not in the tables yet: a migration that converts stored rows must see them.
    if (version >= 19) yield* Effect.promise(() => foldLog(db))
    yield* Effect.provide(migrate, layerPgliteSqlClient(db))
  })
