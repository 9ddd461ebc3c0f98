/**
 * `npm run bench:tester`: what a test suite pays for fos, each figure beside its baseline, measured in one run.
 * Nothing here asserts a time; the table goes to stdout and to docs/performance.md (`bench:tester`,
 * unless `BENCH_NO_DOCS=1`).
 *
 * 1. **Start**, spawn to the first `GET /healthz` answered 200 (what a suite waits for), and the CPU the server used
 *    by then, beside a bare Effect HTTP server's start on the same Node with `npm start`'s flags
 *    (bench/effect-server.ts, which imports only what it uses) and the same compile cache: `fos serve` on the memory
 *    store (a first start, with the demo, and with a seed file, as a suite starts it, also without the compile
 *    cache), on PGlite (a restart on a directory made before, and a first start on a new directory), and on
 *    PostgreSQL (a restart on a database migrated before) when DATABASE_URL is set. One untimed start of each first
 *    (the compile cache a repeated start finds is a suite's case), then `BENCH_TESTER_ROUNDS` (5) rounds, the
 *    targets alternating; the median.
 * 2. **The command line**: `fos --version` and `fos orgs list` (against a running server), beside `node -e 0`.
 * 3. **Snapshot, restore and fork** of a fixture of 3 customers, each onboarded with two USDC wallets, and 20 settled
 *    deposits, and of ten times that, on each store (embedded engines, virtual clock), beside the memory store: a
 *    snapshot, a restore after a test's change (one deposit, settled), a restore after a reset (every row written
 *    back), and a fork of the snapshot (every row written into a new organization, its ids new; docs/snapshots.md,
 *    "Forks"), beside that restore. The fixture is built once through the API on the memory store and carried to the
 *    SQL stores as its snapshot's copy (bench/carry.ts). `BENCH_TESTER_SNAPSHOT_ROUNDS` (15) rounds, going round
 *    the stores. On PostgreSQL, each round also times the floor the goal is held to: psql copying the same rows
 *    with their index entries (`copyFloor`), into empty tables and into tables that held them (a restore after a
 *    reset writes into tables where each of its keys was just deleted).
 * 4. **The journey** (test/journey.ts: about 40 requests, from a webhook endpoint and onboarding to an order and a
 *    payout, with clock advances) on each store, embedded, beside the memory store. On PostgreSQL one more journey,
 *    untimed, goes through a relay that reads the protocol (test/pgRelay.ts) and counts the statements fos sent: in
 *    all, and per request.
 * 5. **An advance**: a sandbox whose webhook receiver answers 500 to every attempt, a wallet and `BENCH_TESTER_DEPOSITS`
 *    (40) deposits, each event's delivery retrying on the clock; then one 3-day `POST /v2/simulate/clock/advance`,
 *    timed, which fires every retry and settle (about 400 timers); on each store, beside the memory store, with its
 *    statements counted on PostgreSQL as above.
 *
 * `BENCH_TESTER_ONLY` (starts, commands, snapshots, journey, advance) runs those parts alone, `BENCH_TESTER_STORES` (PGlite,
 * PostgreSQL) those SQL stores beside memory, and neither records anything.
 *
 * `BENCH_COMPARE` names another checkout (its dependencies installed): its starts and command line are measured in
 * the same rounds, as "before".
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { type AddressInfo, createServer as createNetServer } from "node:net"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { createEngine, type Engine } from "@fos/http"
import { layerPgliteStore, layerPostgresStore, userTemplateCache } from "@fos/sql"
import { freshDatabase } from "../adapters/sql/test/databases.ts"
import { listeningOrigin, startArgsOf, v8StartFlags } from "../test/fosProcess.ts"
import { acmeKey, journey, journeySeed } from "../test/journey.ts"
import { deuSubmission } from "../test/onboardingFixtures.ts"
import { protocolReader, relayTo, throughRelay, type Wire } from "../test/pgRelay.ts"
import { type Carried, carried, put } from "./carry.ts"
import { engineClient } from "./engineClient.ts"
import { buildFixture } from "./fixture.ts"
import { benchSeed, measuredAt, recordSection } from "./record.ts"
import { median } from "./rounds.ts"

const rounds = Number(process.env.BENCH_TESTER_ROUNDS ?? 5)
const snapshotRounds = Number(process.env.BENCH_TESTER_SNAPSHOT_ROUNDS ?? 15)
const root = resolve(import.meta.dirname, "..")
const compare = process.env.BENCH_COMPARE === undefined || process.env.BENCH_COMPARE === "" ? undefined : resolve(process.env.BENCH_COMPARE)
const postgres = process.env.DATABASE_URL === undefined || process.env.DATABASE_URL === "" ? undefined : process.env.DATABASE_URL
const log = (line: string) => console.error(`[bench:tester] ${line}`)
const work = mkdtempSync(join(tmpdir(), "fos-bench-tester-"))
const ms = (x: number) => (x < 10 ? x.toFixed(1) : x.toFixed(0))
const ratio = (x: number, base: number) => `${(x / base).toFixed(1)}×`

// ---- 1. Start --------------------------------------------------------------------------------------------------

const payload = join(work, "payload.json")
const seedFile = join(work, "seed.json")
writeFileSync(seedFile, JSON.stringify({ organizations: [{ id: "org_bench", name: "Bench", status: "active" }] }))
writeFileSync(payload, JSON.stringify({ status: 200, headers: [["content-type", "application/json"]], body: "{}" }))
const token = "bench-tester-operator-token"

/** A port of 127.0.0.1 that was free a moment ago, for a server to listen on. */
const freePort = (): Promise<number> =>
  new Promise((ok, fail) => {
    const probe = createNetServer()
    probe.once("error", fail)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => ok(port))
    })
  })

/** `GET /healthz` on `port` of 127.0.0.1, on a connection of its own: the status, or undefined while nothing listens. */
const healthz = (port: number): Promise<number | undefined> =>
  new Promise((ok) => {
    const request = httpRequest({ host: "127.0.0.1", port, path: "/healthz", agent: false }, (response) => {
      response.resume()
      response.once("end", () => ok(response.statusCode))
    })
    request.once("error", () => ok(undefined))
    request.end()
  })

/** The CPU time (user and system, every thread) process `pid` has used, in ms; from /proc, so undefined off Linux. */
const cpuMsOf = (pid: number | undefined): number | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    // utime and stime, fields 14 and 15 of proc(5), in clock ticks of 1/100 s.
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return undefined
  }
}

interface Start {
  /** Spawn to the first `GET /healthz` answered 200, in ms. */
  readonly ms: number
  /** The CPU time the server had used by then, in ms (undefined off Linux). */
  readonly cpuMs: number | undefined
}

/** How to start a server on `port`: node's arguments, and what it adds to the environment. */
type Spawn = (port: number) => { readonly args: ReadonlyArray<string>; readonly env: Record<string, string> }

/**
 * Spawns `on(port)` in `cwd`, a free port given, and asks `GET /healthz` every 5 ms until it answers 200: what a
 * suite waits for before its first request, rather than a line the server prints. The server is then stopped with
 * SIGTERM, so that it writes Node's compile cache as it exits (fos writes its own once ready as well).
 */
const startTime = async (cwd: string, on: Spawn): Promise<Start> => {
  const port = await freePort()
  const { args, env } = on(port)
  const t0 = performance.now()
  const child: ChildProcess = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
  let out = ""
  child.stdout!.on("data", (c: Buffer) => (out += c))
  child.stderr!.on("data", (c: Buffer) => (out += c))
  let exitCode: number | null | undefined
  const exited = new Promise<void>((ok) => child.once("exit", (code) => ((exitCode = code), ok())))
  try {
    for (;;) {
      if (exitCode !== undefined) throw new Error(`${args.join(" ")} exited ${exitCode} before it answered /healthz\n${out}`)
      // A bound for a stuck start only: a new PGlite directory took over two minutes on a busy 2-core machine.
      if (performance.now() - t0 > 600_000) throw new Error(`${args.join(" ")} did not answer /healthz 200 within 600 s\n${out}`)
      if ((await healthz(port)) === 200) return { ms: performance.now() - t0, cpuMs: cpuMsOf(child.pid) }
      await new Promise((ok) => setTimeout(ok, 5))
    }
  } finally {
    child.kill("SIGTERM")
    const killer = setTimeout(() => child.kill("SIGKILL"), 20_000)
    await exited
    clearTimeout(killer)
  }
}

interface StartTarget {
  readonly name: string
  /** The target this one is divided by: the bare Effect server with the same compile cache. */
  readonly baseline: string
  readonly run: () => Promise<Start>
  /** Runs before each timed start (untimed): a new directory for a first start. */
  readonly before?: () => void
}

/** `fos serve` as `npm start` runs it in `checkout` (a checkout "before" may start another entry point), on `port`. */
const serveArgsOf = (checkout: string, port = 0) => [...startArgsOf(checkout), "--port", String(port), "--quiet", "--operator-token", token]

/**
 * Node's compile cache: one directory for every start of the bench, where V8 keeps what it compiled of a module (and
 * the TypeScript stripped) for the next start of the same source. `fos` turns it on itself (adapters/node/bin/fos.js);
 * the bare server gets it from NODE_COMPILE_CACHE, so that the ratio is between like starts. The rows without it are
 * a first start after an install, or any start with NODE_DISABLE_COMPILE_CACHE=1.
 */
const compileCache = { NODE_COMPILE_CACHE: join(work, "compile-cache") }
const noCompileCache = { NODE_DISABLE_COMPILE_CACHE: "1" }
const bare = "bare Effect HTTP server"
const bareNoCache = "bare Effect HTTP server, no compile cache"

const startTargets = async (): Promise<Array<StartTarget>> => {
  // bench/effect-server.ts answers its one route, here /healthz, with the payload.
  const bareOn = (cache: Record<string, string>): Spawn => (port) => ({
    args: [...v8StartFlags, "bench/effect-server.ts"],
    env: { ...cache, BENCH_PAYLOAD: payload, BENCH_PATH: "/healthz", BENCH_PORT: String(port) }
  })
  const targets: Array<StartTarget> = [
    { name: bare, baseline: bare, run: () => startTime(root, bareOn(compileCache)) },
    { name: bareNoCache, baseline: bareNoCache, run: () => startTime(root, bareOn(noCompileCache)) }
  ]
  for (const [label, checkout] of [["", root], ...(compare === undefined ? [] : [[" (before)", compare]])] as const) {
    const fos = (cache: Record<string, string>, ...store: ReadonlyArray<string>) => () =>
      startTime(checkout, (port) => ({ args: [...serveArgsOf(checkout, port), "--store", ...store], env: cache }))
    // A first start without a seed makes the demo organization and its customer (adapters/serve/src/Demo.ts); a
    // suite's own start passes its seed, and makes neither.
    targets.push({ name: `fos, memory (with the demo)${label}`, baseline: bare, run: fos(compileCache, "memory") })
    targets.push({ name: `fos, memory, --seed${label}`, baseline: bare, run: fos(compileCache, "memory", "--seed", seedFile) })
    targets.push({ name: `fos, memory, --seed, no compile cache${label}`, baseline: bareNoCache, run: fos(noCompileCache, "memory", "--seed", seedFile) })
    const restartDir = join(work, `pglite-restart${label === "" ? "" : "-before"}`)
    await fos(compileCache, restartDir)()
    targets.push({ name: `fos, PGlite, restart${label}`, baseline: bare, run: fos(compileCache, restartDir) })
    const firstDir = join(work, `pglite-first${label === "" ? "" : "-before"}`)
    targets.push({
      name: `fos, PGlite, first start (a new directory)${label}`,
      baseline: bare,
      before: () => rmSync(firstDir, { recursive: true, force: true }),
      run: fos(compileCache, firstDir)
    })
    if (postgres !== undefined) {
      const database = await freshDatabase("bench_tester")
      dropAtEnd.push(database.drop)
      await fos(compileCache, database.url)()
      targets.push({ name: `fos, PostgreSQL, restart${label}`, baseline: bare, run: fos(compileCache, database.url) })
    }
  }
  return targets
}

const dropAtEnd: Array<() => Promise<void>> = []

const measureStarts = async () => {
  const targets = await startTargets()
  const times = new Map<string, Array<Start>>()
  for (const t of targets) {
    t.before?.()
    await t.run()
  }
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < targets.length; i++) {
      const t = targets[(i + round) % targets.length]!
      t.before?.()
      const took = await t.run()
      times.set(t.name, [...(times.get(t.name) ?? []), took])
      log(`start: ${t.name}: ${ms(took.ms)} ms, CPU ${took.cpuMs === undefined ? "n/a" : `${ms(took.cpuMs)} ms`}`)
    }
    log(`start: round ${round + 1} of ${rounds}`)
  }
  const medianOf = (name: string, of: (s: Start) => number | undefined) => {
    const values = times.get(name)!.map(of)
    return values.some((v) => v === undefined) ? undefined : median(values as Array<number>)
  }
  return [
    "| Start, spawn to the first `GET /healthz` 200 | median ms (rounds) | × the bare Effect server | CPU ms, median | × the bare Effect server |",
    "|---|---:|---:|---:|---:|",
    ...targets.map((t) => {
      const runs = times.get(t.name)!
      const wall = median(runs.map((r) => r.ms))
      const cpu = medianOf(t.name, (r) => r.cpuMs)
      const baseCpu = medianOf(t.baseline, (r) => r.cpuMs)
      const against = t.baseline === t.name ? "1.0×" : `${ratio(wall, median(times.get(t.baseline)!.map((r) => r.ms)))}${t.baseline === bare ? "" : " (of the bare server without it)"}`
      return `| ${t.name} | ${ms(wall)} (${runs.map((r) => ms(r.ms)).join(", ")}) | ${against} | ${cpu === undefined ? "n/a" : ms(cpu)} | ${cpu === undefined || baseCpu === undefined ? "n/a" : t.baseline === t.name ? "1.0×" : ratio(cpu, baseCpu)} |`
    })
  ]
}

// ---- 2. The command line ---------------------------------------------------------------------------------------

const commandTime = (cwd: string, args: ReadonlyArray<string>, env: Record<string, string> = {}): number => {
  const t0 = performance.now()
  execFileSync(process.execPath, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "inherit"] })
  return performance.now() - t0
}

const measureCommands = async () => {
  const server = spawn(process.execPath, [...serveArgsOf(root), "--store", "memory"], { cwd: root, stdio: ["ignore", "pipe", "inherit"] })
  const origin = await listeningOrigin(server)
  try {
    const env = { FOS_SERVER: origin, FOS_OPERATOR_TOKEN: token }
    const commands: Array<[string, string, ReadonlyArray<string>]> = [["node -e 0", root, ["-e", "0"]]]
    for (const [label, checkout] of [["", root], ...(compare === undefined ? [] : [[" (before)", compare]])] as const) {
      const fos = startArgsOf(checkout).slice(0, -1)
      commands.push([`fos --version${label}`, checkout, [...fos, "--version"]])
      commands.push([`fos orgs list${label}`, checkout, [...fos, "orgs", "list"]])
    }
    const times = new Map<string, Array<number>>()
    for (let round = 0; round <= rounds * 2; round++) {
      for (const [name, cwd, args] of commands) {
        const took = commandTime(cwd, args, env)
        if (round > 0) times.set(name, [...(times.get(name) ?? []), took])
      }
    }
    const base = median(times.get("node -e 0")!)
    return [
      "| The command line | median ms | × `node -e 0` |",
      "|---|---:|---:|",
      ...commands.map(([name]) => `| ${name} | ${ms(median(times.get(name)!))} | ${name === "node -e 0" ? "1.0×" : ratio(median(times.get(name)!), base)} |`)
    ]
  } finally {
    server.kill("SIGKILL")
  }
}

// ---- 3. Snapshot and restore; 4. the journey -------------------------------------------------------------------

const benchKey = `ck_sandbox_${"6b".repeat(32)}`
const seed = benchSeed(benchKey)

type StoreName = "memory" | "PGlite" | "PostgreSQL"
const storeNames: ReadonlyArray<StoreName> = ["memory", "PGlite", ...(postgres === undefined ? [] : ["PostgreSQL" as const])].filter((name) =>
  process.env.BENCH_TESTER_STORES === undefined || name === "memory" || process.env.BENCH_TESTER_STORES.split(",").includes(name)) as Array<StoreName>

/**
 * A new engine on a new store of `name`, with `seedFile`; `close` also removes the store. `wires`, on PostgreSQL: the
 * engine reaches the database through a relay that records every statement sent into it (a relay costs the bench
 * process CPU, so only untimed runs take one).
 */
const open = async (name: StoreName, seedFile: unknown, randomSeed = 2, wires?: Array<Wire>) => {
  let remove = async () => {}
  let url: string | undefined
  let store: "memory" | ReturnType<typeof layerPgliteStore> | ReturnType<typeof layerPostgresStore> = "memory"
  if (name === "PGlite") {
    const dir = mkdtempSync(join(work, "pglite-"))
    // As a suite would open it: a new directory is a copy of the template in the user's cache (docs/storage.md).
    store = layerPgliteStore(dir, { templateCache: userTemplateCache() })
    remove = async () => rmSync(dir, { recursive: true, force: true })
  }
  if (name === "PostgreSQL") {
    const database = await freshDatabase("bench_tester")
    url = database.url
    if (wires === undefined) {
      store = layerPostgresStore(database.url)
      remove = database.drop
    } else {
      const relay = await relayTo(new URL(database.url), protocolReader(wires))
      store = layerPostgresStore(throughRelay(database.url, relay))
      remove = async () => {
        await relay.down()
        await database.drop()
      }
    }
  }
  // Seeded, so that every run builds the same fixture, row for row (unseeded, the ledger's shards of the world's
  // accounts fell differently, 914 to 916 rows). The fixture's engine has a seed of its own: an engine given the
  // same seed would mint the fixture's ids again (its snapshots' first of all).
  const engine = await createEngine({ store, clock: { mode: "virtual", start: "2026-03-03T09:00:00.000Z" }, webhookTransport: "memory", seed: seedFile as never, randomSeed })
  return { engine, url, close: async () => { await engine.close(); await remove() } }
}

/** The tables a store's row and its index entries live in, on PostgreSQL (adapters/sql/src/Migrations.ts). */
const rowTables = ["fos_rows", "fos_orders", "fos_uniques"] as const

/**
 * PostgreSQL's floor for writing a world: the time psql takes to copy the same rows with their index entries (the
 * rows a snapshot's copy holds, and their orders and unique values) into tables made like the store's, with the same
 * keys and indexes, in one transaction. `stage` selects them once into tables of their own (untimed); each `copy`
 * makes the target tables, then times the copy's statements by psql's `\timing` (each statement's round trip), and
 * drops them. `copy(true)` first fills the new tables with the same rows and deletes them (untimed, committed), so
 * that the copy meets what a restore after a reset meets: each key's dead version in the table and its indexes,
 * which every insert of that key into a unique index visits (about 1.4× an insert into empty tables).
 */
const copyFloor = (url: string) => {
  const psql = (script: string) => execFileSync("psql", ["-X", "-q", "-v", "ON_ERROR_STOP=1", url], { input: script }).toString()
  return {
    stage: () => {
      const copied = "EXISTS (SELECT 1 FROM fos_copy_rows c WHERE c.tbl = t.tbl AND c.key = t.key)"
      psql(rowTables.map((table) => `CREATE TABLE ${table}_floor_source AS SELECT * FROM ${table} t WHERE ${copied};`).join("\n"))
      const [rows, entries] = psql(`\\t on\nSELECT (SELECT count(*) FROM fos_rows_floor_source), (SELECT count(*) FROM fos_orders_floor_source) + (SELECT count(*) FROM fos_uniques_floor_source);`)
        .trim().split("|").map((n) => Number(n.trim()))
      return { rows: rows!, entries: entries! }
    },
    copy: (afterDelete = false): number => {
      const out = psql([
        ...rowTables.map((table) => `CREATE TABLE ${table}_floor (LIKE ${table} INCLUDING ALL);`),
        ...(afterDelete ? rowTables.map((table) => `INSERT INTO ${table}_floor SELECT * FROM ${table}_floor_source; DELETE FROM ${table}_floor;`) : []),
        "\\timing on",
        "BEGIN;",
        ...rowTables.map((table) => `INSERT INTO ${table}_floor SELECT * FROM ${table}_floor_source;`),
        "COMMIT;",
        "\\timing off",
        `DROP TABLE ${rowTables.map((table) => `${table}_floor`).join(", ")};`
      ].join("\n"))
      return [...out.matchAll(/^Time: ([\d.]+) ms/gm)].reduce((sum, [, t]) => sum + Number(t), 0)
    }
  }
}

/** Puts a carried snapshot into `engine`'s store and restores it once (untimed); answers the snapshot's id. */
const putAndRestore = async (engine: Engine, world: Carried) => {
  const id = await put(engine, world)
  await engine.restore(id)
  return id
}

/**
 * Each round: a snapshot (then deleted); a test's change (a deposit, settled) and a restore; a reset and a restore,
 * which writes the whole sandbox back; a fork of the snapshot (then deleted). Only the snapshot, the restores, the
 * reset (through the API, as a suite calls it) and the fork are timed. Every store's engine is open at once and the rounds go round the stores, one untimed round first,
 * so that a ratio compares times taken minutes apart at most, whatever the machine does meanwhile;
 * `BENCH_TESTER_SNAPSHOT_ROUNDS` (15) rounds, since one is a few milliseconds on the small fixture.
 */
const measureSnapshots = async () => {
  const floors: Array<string> = []
  const lines = [
    "| Snapshot, restore and fork | rows | store | snapshot, median ms | × memory | restore after a test's deposit | × memory | reset | × memory | restore after a reset | × memory | fork | × memory | fork ÷ restore after a reset |",
    "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  ]
  for (const scale of [1, 10]) {
    const memory = await open("memory", seed, 1)
    let world: Carried
    try {
      await buildFixture(memory.engine, benchKey, scale)
      world = await carried(memory.engine)
    } finally {
      await memory.close()
    }
    const fixture = scale === 1 ? "3 customers, 6 wallets, 20 deposits" : "ten times that"
    const address = (world.rows.find((r) => r.table === "wallets")!.row as { address: string }).address
    const stores: Array<{ name: StoreName; opened: Awaited<ReturnType<typeof open>>; id: string; times: Record<"snapshot" | "afterTest" | "reset" | "afterReset" | "fork", Array<number>> }> = []
    let floor: { readonly copy: (afterDelete?: boolean) => number; readonly times: Array<number>; readonly afterDelete: Array<number>; readonly rows: number; readonly entries: number } | undefined
    try {
      for (const name of storeNames) {
        const opened = await open(name, seed)
        stores.push({ name, opened, id: await putAndRestore(opened.engine, world), times: { snapshot: [], afterTest: [], reset: [], afterReset: [], fork: [] } })
        if (name === "PostgreSQL") {
          const psql = copyFloor(opened.url!)
          floor = { copy: psql.copy, times: [], afterDelete: [], ...psql.stage() }
        }
      }
      for (let round = 0; round <= snapshotRounds; round++) {
        for (const { opened: { engine }, id, times } of stores) {
          const client = engineClient(engine, benchKey, "bench-test")
          const timed = async (into: Array<number>, f: () => Promise<unknown>) => {
            const t0 = performance.now()
            await f()
            if (round > 0) into.push(performance.now() - t0)
          }
          let taken = ""
          await timed(times.snapshot, async () => (taken = (await engine.snapshot()).id))
          await engine.deleteSnapshot(taken)
          await client.call("POST", "/v2/simulate/deposits", { destination: { type: "deposit_address", address }, assetAmount: { code: "USDC", amount: "1.00", chain: "base" } })
          await engine.clock.runUntilIdle()
          await timed(times.afterTest, () => engine.restore(id))
          await timed(times.reset, () => client.call("POST", "/v2/simulate/reset", undefined, 200))
          await timed(times.afterReset, () => engine.restore(id))
          let forked = ""
          await timed(times.fork, async () => (forked = (await engine.fork(id)).organizationId))
          await engine.deleteFork(forked)
        }
        if (floor !== undefined) {
          const took = floor.copy()
          const tookAfterDelete = floor.copy(true)
          if (round > 0) {
            floor.times.push(took)
            floor.afterDelete.push(tookAfterDelete)
          }
        }
      }
    } finally {
      for (const { opened } of stores) await opened.close()
    }
    const results = new Map(stores.map(({ name, times }) => {
      const r = { snapshot: median(times.snapshot), afterTest: median(times.afterTest), reset: median(times.reset), afterReset: median(times.afterReset), fork: median(times.fork) }
      log(`snapshots: ${scale}× on ${name}: snapshot ${ms(r.snapshot)} ms, restore after a test ${ms(r.afterTest)} ms, reset ${ms(r.reset)} ms, restore after it ${ms(r.afterReset)} ms, fork ${ms(r.fork)} ms`)
      return [name, r] as const
    }))
    const base = results.get("memory")!
    for (const [name, r] of results) {
      lines.push(`| ${fixture} | ${world.rows.length.toLocaleString("en-US")} | ${name} | ${ms(r.snapshot)} | ${ratio(r.snapshot, base.snapshot)} | ${ms(r.afterTest)} | ${ratio(r.afterTest, base.afterTest)} | ${ms(r.reset)} | ${ratio(r.reset, base.reset)} | ${ms(r.afterReset)} | ${ratio(r.afterReset, base.afterReset)} | ${ms(r.fork)} | ${ratio(r.fork, base.fork)} | ${(r.fork / r.afterReset).toFixed(2)} |`)
    }
    const onPostgres = results.get("PostgreSQL")
    if (floor !== undefined && onPostgres !== undefined) {
      const copy = median(floor.times)
      const afterDelete = median(floor.afterDelete)
      log(`snapshots: ${scale}× psql's copy of ${floor.rows} rows and ${floor.entries} index entries: ${ms(copy)} ms; into tables that held them: ${ms(afterDelete)} ms`)
      floors.push(`| ${fixture} | ${floor.rows.toLocaleString("en-US")} + ${floor.entries.toLocaleString("en-US")} | ${ms(copy)} | ${ms(afterDelete)} | ${ratio(onPostgres.snapshot, copy)} | ${ratio(onPostgres.afterReset, copy)} | ${ratio(onPostgres.afterReset, afterDelete)} | ${ratio(onPostgres.reset, copy)} |`)
    }
  }
  return floors.length === 0 ? lines : [
    ...lines,
    "",
    "| PostgreSQL's floor: psql copying the same rows with their index entries | rows + entries | psql, median ms: into empty tables | into tables that held them, deleted (as after a reset) | snapshot × the floor | restore after a reset × the floor | × the floor after a delete | reset × the floor |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
    ...floors
  ]
}

/** How many statements `wires` hold: every exchange's, on every connection. */
const statementsIn = (wires: ReadonlyArray<Wire>) => wires.reduce((n, wire) => n + wire.exchanges.reduce((m, statements) => m + statements.length, 0), 0)

/**
 * Runs `prepare` on a new engine of each store, untimed, then the work it answers, timed (which answers how many
 * requests, or timers, it took), `rounds` rounds going round the stores; then once more on PostgreSQL through a
 * relay, untimed, counting the statements it sent. Answers the table's rows: the median, each round, × memory, and
 * on PostgreSQL the statements, in all and `each`.
 */
const roundsOnEachStore = async (part: string, seedOf: unknown, prepare: (engine: Engine) => Promise<() => Promise<number>>, each = "a request") => {
  const times = new Map<StoreName, Array<number>>()
  for (let round = 0; round < rounds; round++) {
    for (const name of storeNames) {
      const opened = await open(name, seedOf)
      try {
        const timed = await prepare(opened.engine)
        const t0 = performance.now()
        await timed()
        times.set(name, [...(times.get(name) ?? []), performance.now() - t0])
      } finally {
        await opened.close()
      }
    }
    log(`${part}: round ${round + 1} of ${rounds}`)
  }
  let counted: { readonly statements: number; readonly requests: number } | undefined
  if (storeNames.includes("PostgreSQL")) {
    const wires: Array<Wire> = []
    const opened = await open("PostgreSQL", seedOf, 2, wires)
    try {
      const timed = await prepare(opened.engine)
      const before = statementsIn(wires)
      const requests = await timed()
      counted = { statements: statementsIn(wires) - before, requests }
    } finally {
      await opened.close()
    }
  }
  const base = median(times.get("memory")!)
  return storeNames.map((name) => {
    const statements = name === "PostgreSQL" && counted !== undefined
      ? `${counted.statements.toLocaleString("en-US")} (${(counted.statements / counted.requests).toFixed(1)} ${each})`
      : "n/a"
    return `| ${name} | ${ms(median(times.get(name)!))} (${times.get(name)!.map(ms).join(", ")}) | ${ratio(median(times.get(name)!), base)} | ${statements} |`
  })
}

const measureJourneys = async () => [
  "| The journey (about 40 requests) | median ms (rounds) | × memory | statements sent to PostgreSQL |",
  "|---|---:|---:|---:|",
  ...(await roundsOnEachStore("journey", journeySeed, async (engine) => async () =>
    (await journey(engine.fetch, "http://fos", acmeKey, "https://hooks.bench.test/journey")).answers.length))
]

const deposits = Number(process.env.BENCH_TESTER_DEPOSITS ?? 40)

/**
 * A sandbox with a webhook endpoint whose receiver answers 500 to every attempt, a customer's wallet and `deposits`
 * deposits: every event's delivery retries on the clock (30 s, 2 min, 15 min, 1 h), so a 3-day advance fires their
 * retries and the deposits' settles. As test/advance-crash.test.ts builds it, through the API.
 */
const advanceWorld = async (engine: Engine) => {
  engine.deliveries.answerWith(500)
  const client = engineClient(engine, acmeKey, "advance")
  await client.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.bench.test/refusing" })
  const documents = { register: await client.upload("certificate_of_incorporation"), articles: await client.upload("articles_of_association"), passport: await client.upload("passport") }
  const onboarding = await client.call("POST", "/v2/onboarding", deuSubmission(documents))
  const { customerId } = await client.call("POST", `/v2/simulate/applications/${onboarding.applicationId}/decision`, { outcome: "approved" }, 200)
  const application = await client.call("POST", `/v2/customers/${customerId}/features`, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } })
  await client.call("POST", `/v2/simulate/applications/${application.applicationId}/decision`, { outcome: "approved" }, 200)
  const wallet = await client.call("POST", `/v2/customers/${customerId}/wallets`, { chain: "base" })
  for (let i = 0; i < deposits; i++) {
    await client.call("POST", "/v2/simulate/deposits", { destination: { type: "deposit_address", address: wallet.address }, assetAmount: { code: "USDC", amount: `${i + 1}.00`, chain: "base" } })
  }
  return client
}

let timersFired = 0
const measureAdvances = async () => {
  const rows = await roundsOnEachStore("advance", journeySeed, async (engine) => {
    const client = await advanceWorld(engine)
    return async () => {
      const report = await client.call("POST", "/v2/simulate/clock/advance", { seconds: 3 * 86_400 }, 200)
      timersFired = report.timersFired.total
      return timersFired
    }
  }, "a timer")
  return [
    `| A 3-day advance (${deposits} deposits, every delivery refused: ${timersFired} timers) | median ms (rounds) | × memory | statements sent to PostgreSQL |`,
    "|---|---:|---:|---:|",
    ...rows
  ]
}

/** `BENCH_TESTER_ONLY` (a comma-separated list of starts, commands, snapshots, journey, advance) runs those parts alone, and records nothing. */
const only = process.env.BENCH_TESTER_ONLY?.split(",")
const parts: ReadonlyArray<[string, () => Promise<Array<string>>]> = [
  ["starts", measureStarts],
  ["commands", measureCommands],
  ["snapshots", measureSnapshots],
  ["journey", measureJourneys],
  ["advance", measureAdvances]
]
try {
  const sections = [
    `Measured at ${measuredAt()} on Node ${process.version}${compare === undefined ? "" : `; "before" is ${execFileSync("git", ["-C", compare, "rev-parse", "--short", "HEAD"]).toString().trim()}`}. ${rounds} rounds (snapshots ${snapshotRounds}); medians.`
  ]
  for (const [name, measure] of parts) if (only === undefined || only.includes(name)) sections.push("", ...(await measure()))
  console.log(sections.join("\n"))
  if (process.env.BENCH_NO_DOCS !== "1" && only === undefined && process.env.BENCH_TESTER_STORES === undefined) recordSection("tester", sections.join("\n"))
} finally {
  for (const drop of dropAtEnd) await drop()
  rmSync(work, { recursive: true, force: true })
}
