/**
 * Migrations: applied once when several processes open one database at the same moment, and a database newer than
 * the code is refused with a message that says so. On PostgreSQL (DATABASE_URL) and PGlite.
 */
import { execFile, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Effect, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, describe, expect, it } from "vitest"
import { killAllFos, startFos } from "../../../test/fosProcess.ts"
import { latestVersion, layerPgliteClient, layerPostgresClient, migrate } from "../src/index.ts"
import { adminUrl, freshDatabase } from "./databases.ts"

const root = resolve(import.meta.dirname, "../../..")

const serve = (store: string) =>
  spawnSync(process.execPath, ["adapters/node/src/bin.ts", "serve", "--store", store, "--port", "0"], {
    cwd: root,
    encoding: "utf8",
    timeout: 60_000
  })

describe.skipIf(adminUrl === undefined || adminUrl === "")("migrations on PostgreSQL", () => {
  it("are applied once when four clients open a new database at the same moment", async () => {
    const database = await freshDatabase("migrate")
    const clients = Array.from({ length: 4 }, () => ManagedRuntime.make(layerPostgresClient(database.url, { maxConnections: 1 })))
    try {
      await Promise.all(clients.map((c) => c.runPromise(migrate)))
      const rows = await clients[0]!.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ version: number }>`SELECT version FROM fos_migrations ORDER BY version`))
      expect(rows.map((r) => Number(r.version))).toEqual(Array.from({ length: latestVersion }, (_, i) => i + 1))
    } finally {
      await Promise.all(clients.map((c) => c.dispose()))
      await database.drop()
    }
  }, 60_000)

  it("refuse a database migrated by a newer fos: fos serve exits non-zero and says so", async () => {
    const database = await freshDatabase("toonew")
    const client = ManagedRuntime.make(layerPostgresClient(database.url, { maxConnections: 1 }))
    try {
      await client.runPromise(migrate)
      await client.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`INSERT INTO fos_migrations (version, name) VALUES (${latestVersion + 1}, 'from the future')`))
      const run = serve(database.url)
      expect(run.status).not.toBe(0)
      expect(run.stderr).toContain(`schema version ${latestVersion + 1}, newer than this fos knows (${latestVersion})`)
      // Nothing was changed: the future version is still the latest.
      const rows = await client.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ version: number }>`SELECT max(version) AS version FROM fos_migrations`))
      expect(Number(rows[0]!.version)).toBe(latestVersion + 1)
    } finally {
      await client.dispose()
      await database.drop()
    }
  }, 60_000)
})

describe("stores an operator gets wrong", () => {
  it("an unreachable PostgreSQL: a message naming it, without the password, and a non-zero exit", () => {
    const run = serve("postgres://fos:s3cret@127.0.0.1:1/none")
    expect(run.status).not.toBe(0)
    expect(run.stderr).toContain("cannot connect")
    expect(run.stderr).toContain("127.0.0.1:1")
    expect(run.stderr).not.toContain("s3cret")
  }, 60_000)

  it.skipIf(adminUrl === undefined || adminUrl === "")("a role that cannot log in: authentication failed", () => {
    const url = new URL(adminUrl!)
    url.username = "no_such_fos_role"
    url.password = "wrong"
    const run = serve(url.toString())
    expect(run.status).not.toBe(0)
    expect(run.stderr).toContain("authentication failed")
    expect(run.stderr).not.toContain("wrong@")
  }, 60_000)

  it("a PGlite directory that cannot be created or written: a message and a non-zero exit", () => {
    const dir = mkdtempSync(join(tmpdir(), "fos-badstore-"))
    const file = join(dir, "a-file")
    writeFileSync(file, "not a directory")
    try {
      const run = serve(join(file, "data"))
      expect(run.status).not.toBe(0)
      expect(run.stderr).toContain("cannot create it")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)

})

describe("the PGlite directory lock", () => {
  afterAll(() => killAllFos())

  it("a directory another process holds: a message naming the holder, and the directory untouched", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fos-heldstore-"))
    // The holder is this test's process; fos serve is another one.
    const holder = ManagedRuntime.make(layerPgliteClient(dir))
    try {
      await holder.runPromise(migrate)
      // Run without blocking this process, whose event loop answers the lock's connections.
      const run = await new Promise<{ status: number | null; stderr: string }>((ok) =>
        execFile(process.execPath, ["adapters/node/src/bin.ts", "serve", "--store", dir, "--port", "0"], { cwd: root, timeout: 60_000 }, (error, _out, stderr) =>
          ok({ status: error === null ? 0 : (error.code as number | null), stderr })))
      expect(run.status).toBe(1)
      expect(run.stderr).toContain(`in use by another fos process (pid ${process.pid})`)
      const rows = await holder.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ n: number }>`SELECT count(*)::int AS n FROM fos_migrations`))
      expect(rows[0]!.n).toBe(latestVersion)
    } finally {
      await holder.dispose()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)

  it("a crash never leaves a lock that blocks a start: not after SIGKILL, nor when an old lock names a live pid", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fos-crashlock-"))
    try {
      const first = await startFos(["--store", dir, "--port", "0"])
      expect((await first.stop("SIGKILL")).signal).toBe("SIGKILL")
      // The killed process's lock is still on disk, and nobody listens on it.
      const second = await startFos(["--store", dir, "--port", "0"])
      expect((await fetch(`${second.origin}/healthz`)).status).toBe(200)
      expect((await second.stop("SIGKILL")).signal).toBe("SIGKILL")
      // A lock of an older fos, a pid file, naming a pid that is alive (as after a container restart, where pids
      // start again from 1 and the crashed server's pid is now another process's).
      rmSync(join(dir, "fos.lock"), { force: true })
      writeFileSync(join(dir, "fos.lock"), String(process.pid))
      const third = await startFos(["--store", dir, "--port", "0"])
      expect((await fetch(`${third.origin}/healthz`)).status).toBe(200)
      expect((await third.stop()).code).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
