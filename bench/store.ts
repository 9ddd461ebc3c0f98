/**
 * `npm run bench:store`: write throughput of an idempotent POST on each store, against pgbench running the same SQL.
 *
 * The write is `POST /sandbox/v2/simulate/clock/advance` with `{"seconds":0}` and a fresh Idempotency-Key per
 * request: a claim transaction (the key's record) and a transaction that runs the request and writes its kept
 * response and its retention timer. It is run through `fos serve` (virtual clock, rate limit raised) on memory, on
 * PGlite in a temporary directory, and on PostgreSQL in a fresh database of DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/test), with autocannon.
 *
 * pgbench runs `bench/store-transaction.sql`, the same statements fos sends for one such request, on another fresh
 * database migrated by fos, with the same number of clients, for the same time: the ceiling of this SQL on this
 * machine. The goals are at least 0.6x of pgbench on PostgreSQL, and PGlite within 3x of PostgreSQL.
 *
 * Results go to stdout and to the section of docs/performance.md between `<!-- bench:store:start -->` and
 * `<!-- bench:store:end -->` (BENCH_NO_DOCS=1 leaves the docs alone). Nothing here asserts a time.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { ManagedRuntime } from "effect"
import { layerPostgresClient, migrate } from "@fos/sql"
import { freshDatabase } from "../adapters/sql/test/databases.ts"
import { startFos } from "../test/fosProcess.ts"
import { measuredAt, recordSection } from "./record.ts"
import { idempotentWrites } from "./writes.ts"

const root = resolve(import.meta.dirname, "..")

/** The PostgreSQL the bench creates its databases in. */
const adminUrl = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test"
const connections = Number(process.env.BENCH_STORE_CONNECTIONS ?? 16)
const seconds = Number(process.env.BENCH_STORE_DURATION ?? 10)
const key = `ck_sandbox_${"cd".repeat(32)}`
const log = (line: string) => console.error(`[bench:store] ${line}`)

const seed = {
  organizations: [{
    id: "org_storebench",
    name: "Store bench",
    status: "active",
    rateLimit: { sustainedPerSecond: 1e9, burst: 1e9 },
    users: [{ id: "usr_storebench", email: "store@bench.test", role: "admin" }],
    apiKeys: [{ key, access: "read_write", createdBy: "usr_storebench" }]
  }]
}

const start = (store: string, seedPath: string) =>
  startFos(["--store", store, "--port", "0", "--clock", "virtual", "--seed", seedPath, "--quiet"])

const writes = (origin: string) => idempotentWrites(origin, { key, connections, seconds })

const pgbench = (url: string): number | undefined => {
  try {
    const out = execFileSync("pgbench", [
      "--no-vacuum", "-n", "-M", "prepared", "-c", String(connections), "-j", "2", "-T", String(seconds),
      "-f", join(root, "bench", "store-transaction.sql"), url
    ], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
    const m = /tps = ([\d.]+)/.exec(out)
    if (m === null) log(`pgbench printed no tps line:\n${out.trim()}`)
    return m === null ? undefined : Number(m[1])
  } catch (e) {
    // pgbench's own words: its stderr (a refused login, a failed statement, a missing file), else the exit or the
    // system's error (ENOENT: pgbench is not installed).
    const failure = e as NodeJS.ErrnoException & { stderr?: string; stdout?: string; status?: number | null }
    const said = [failure.stderr, failure.stdout].map((text) => text?.trim() ?? "").filter((text) => text !== "").join("\n")
    const why = failure.code === "ENOENT"
      ? "pgbench is not installed (it comes with PostgreSQL's client programs)"
      : said !== ""
      ? `pgbench exited with status ${failure.status ?? "?"}:\n${said}`
      : failure.message
    log(`pgbench did not run: ${why}`)
    return undefined
  }
}

const main = async () => {
  const tmp = mkdtempSync(join(tmpdir(), "fos-bench-store-"))
  const seedPath = join(tmp, "seed.json")
  writeFileSync(seedPath, JSON.stringify(seed))
  const rows: Array<{ name: string; perSecond: number; p50?: number; p99?: number }> = []
  try {
    for (const [name, store] of [["memory", "memory"], ["PGlite", join(tmp, "pglite")]] as const) {
      log(`${name}: starting`)
      const server = await start(store, seedPath)
      try {
        rows.push({ name: `fos, ${name}`, ...(await writes(server.origin)) })
      } finally {
        await server.stop()
      }
    }
    const database = await freshDatabase("fos", adminUrl)
    try {
      log("PostgreSQL: starting")
      const server = await start(database.url, seedPath)
      try {
        rows.push({ name: "fos, PostgreSQL", ...(await writes(server.origin)) })
      } finally {
        await server.stop()
      }
    } finally {
      await database.drop()
    }
    const raw = await freshDatabase("pgbench", adminUrl)
    try {
      const client = ManagedRuntime.make(layerPostgresClient(raw.url, { maxConnections: 1 }))
      await client.runPromise(migrate)
      await client.dispose()
      log("pgbench: running the same SQL")
      const tps = pgbench(raw.url)
      if (tps !== undefined) rows.push({ name: "pgbench, the same SQL transaction, PostgreSQL", perSecond: tps })
    } finally {
      await raw.drop()
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }

  const perSecond = (name: string) => rows.find((r) => r.name === name)?.perSecond
  const pg = perSecond("fos, PostgreSQL")
  const lite = perSecond("fos, PGlite")
  const bench = perSecond("pgbench, the same SQL transaction, PostgreSQL")
  const table = [
    `Measured at ${measuredAt()}, Node ${process.version}; ${connections} connections (pgbench: ${connections} clients), ${seconds} s after a 2 s warm-up; an idempotent \`POST /sandbox/v2/simulate/clock/advance\` with a fresh key each time.`,
    "",
    "| | writes/s | p50 ms | p99 ms |",
    "|---|---:|---:|---:|",
    ...rows.map((r) => `| ${r.name} | ${Math.round(r.perSecond).toLocaleString("en")} | ${r.p50 ?? ""} | ${r.p99 ?? ""} |`),
    "",
    `PostgreSQL against pgbench: ${pg !== undefined && bench !== undefined ? `${(pg / bench).toFixed(2)}×` : "n/a"} (goal ≥ 0.6×). ` +
    `PGlite against PostgreSQL: ${
      pg === undefined || lite === undefined ? "n/a" : lite >= pg ? `${(lite / pg).toFixed(2)}× as many writes` : `${(pg / lite).toFixed(2)}× slower`
    } (goal within 3×).`
  ].join("\n")
  console.log(table)
  if (process.env.BENCH_NO_DOCS !== "1") {
    recordSection("store", table)
    log("updated docs/performance.md")
  }
}

main().catch((e: unknown) => {
  console.error(`[bench:store] failed: ${e instanceof Error ? e.message : String(e)}`)
  process.exitCode = 1
})
