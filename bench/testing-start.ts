/**
 * `npm run bench:testing-start`: what a test file pays to start with `@fos/testing`, each figure beside its baseline,
 * measured in one run. Nothing here asserts a time; the table goes to stdout and to docs/performance.md
 * (`bench:testing-start`, unless `BENCH_NO_DOCS=1`).
 *
 * Parts 1 and 2 run the package as a user has it: built (`npm run build`), packed and installed from its tarballs
 * (with @fos/client, @fos/contract, @fos/core, @fos/http and this repository's Vitest) into a project in the system's
 * temporary directory, run without the "@fos/source" condition, so Node loads dist/ and Vitest leaves the package
 * to Node as it does every installed one (not this repository's TypeScript through Vite's transform).
 *
 * 1. **A process**: `node -e 0`, beside a Node process that imports `@fos/testing` and takes a world from a running
 *    suite (`joinSuite` with the file's stream name, and the save before its first test), each part timed inside it.
 * 2. **Vitest**: a project of `BENCH_TESTING_FILES` (8) test files on one worker (`--maxWorkers=1`, so files add up),
 *    each file empty (one passing test); each taking a world first (`await useWorld()`, the fixture a webhook
 *    endpoint); each taking a world whose test makes one call of the typed client; and those again with Node's compile
 *    cache off (`NODE_DISABLE_COMPILE_CACHE=1`, the package's own in node_modules/.cache unused), in turns. The suite's
 *    set-up and teardown (once a run, timed inside the global set-up) are taken out; the difference per file is what
 *    importing the package and taking a world cost it, and what its first typed call adds.
 * 3. **A fork**: of a 7-row fixture snapshot (six webhook endpoints) and of the tester benches' fixture
 *    (bench/fixture.ts, about 900 rows), through the package (`forkWorld`: the fork over `engine.fetch` and over the
 *    served engine, and its world) beside `engine.fork` of the same snapshot, each deleted after (not timed) and each
 *    after a pause of 30 ms, so that none pays for what the one before it left running.
 *
 * `BENCH_TESTING_ROUNDS` (5) rounds of each, alternating; the median.
 */
import { execFile, execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { forkWorld, startEngine, startSuite } from "@fos/testing"
import { buildFixture as buildTesterFixture } from "./fixture.ts"
import { measuredAt, recordSection } from "./record.ts"

const root = join(import.meta.dirname, "..")
const rounds = Number(process.env.BENCH_TESTING_ROUNDS ?? 5)
const files = Number(process.env.BENCH_TESTING_FILES ?? 8)
const node = process.execPath
const execFileAsync = promisify(execFile)

const median = (xs: ReadonlyArray<number>): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const fmt = (ms: number): string => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1))
const timed = (run: () => void): number => {
  const started = performance.now()
  run()
  return performance.now() - started
}

// --- the package as installed ----------------------------------------------------------------------------------

/** A user's environment: none of this repository's source condition, nor npm's variables of this run. */
const userEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env }
  delete env.NODE_OPTIONS
  for (const key of Object.keys(env)) if (key.startsWith("npm_")) delete env[key]
  return env
}
const work = mkdtempSync(join(tmpdir(), "fos-bench-testing-start-"))
process.on("exit", () => rmSync(work, { recursive: true, force: true }))
execFileSync(join(root, "node_modules/.bin/tsc"), ["-b", "tsconfig.build.json"], { cwd: root, stdio: "inherit" })
const packed = JSON.parse(execFileSync("npm", [
  "pack", "--json", "--pack-destination", work,
  ...["@fos/testing", "@fos/client", "@fos/contract", "@fos/core", "@fos/http"].flatMap((name) => ["-w", name])
], { cwd: root, encoding: "utf8" })) as ReadonlyArray<{ readonly filename: string }>
const installed = join(work, "project")
mkdirSync(installed)
writeFileSync(join(installed, "package.json"), JSON.stringify({ name: "bench-testing-start", private: true, type: "module" }))
const vitestVersion = (JSON.parse(readFileSync(join(root, "node_modules/vitest/package.json"), "utf8")) as { version: string }).version
execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...packed.map((p) => join(work, p.filename)), `vitest@${vitestVersion}`], {
  cwd: installed,
  env: userEnv(),
  stdio: ["ignore", "ignore", "inherit"]
})

// --- 1. a process ---------------------------------------------------------------------------------------------

const fixture = `async (world) => { await world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.bench.test/fixture" } }); return undefined }`
const suite = await startSuite({
  randomSeed: 7,
  fixture: async (world) => {
    await world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.bench.test/fixture" } })
    return undefined
  }
})
const child = `
const t0 = performance.now()
const { joinSuite, eachTest } = await import("@fos/testing")
const t1 = performance.now()
const { world, leave } = await joinSuite(JSON.parse(process.env.SUITE), undefined, { stream: process.env.STREAM })
const hooks = eachTest(world)
await hooks.beforeEach("first")
const t2 = performance.now()
await hooks.after()
await leave()
console.log(JSON.stringify({ importMs: t1 - t0, worldMs: t2 - t1 }))
`
const processRuns: Array<{ readonly empty: number; readonly importMs: number; readonly worldMs: number; readonly wall: number }> = []
for (let round = 0; round < rounds; round++) {
  const empty = timed(() => execFileSync(node, ["-e", "0"]))
  // Spawned without blocking: the suite's engine, in this process, answers the child.
  const started = performance.now()
  const { stdout } = await execFileAsync(node, ["--input-type=module", "-e", child], {
    cwd: installed,
    env: { ...userEnv(), SUITE: JSON.stringify(suite.info), STREAM: `bench/file-${round}.test.ts` },
    encoding: "utf8"
  })
  const wall = performance.now() - started
  const inside = JSON.parse(stdout.trim().split("\n").at(-1)!) as { importMs: number; worldMs: number }
  processRuns.push({ empty, wall, ...inside })
}
await suite.close()

// --- 2. Vitest -------------------------------------------------------------------------------------------------

type Kind = "empty" | "world" | "call" | "cold"
const callFile = `import { expect, it } from "vitest"\nimport { useWorld } from "@fos/testing/vitest"\nconst world = await useWorld()\nit("lists the world's endpoints", async () => expect((await world.client.webhooks.listEndpoints({ query: {} })).data).toHaveLength(1))\n`
const project = (kind: Kind) => {
  const at = join(installed, kind)
  mkdirSync(at)
  writeFileSync(join(at, "vitest.config.ts"), `import { defineConfig } from "vitest/config"
export default defineConfig({
  test: { include: ["*.test.ts"], ${kind === "empty" ? "" : `globalSetup: ["./fos.setup.ts"], `}testTimeout: 60_000, hookTimeout: 60_000 }
})
`)
  if (kind !== "empty") {
    // The set-up and the teardown, once a run, timed here and taken out of the files' share.
    writeFileSync(join(at, "fos.setup.ts"), `import { appendFileSync } from "node:fs"
import { fosGlobalSetup } from "@fos/testing/vitest"
const setup = fosGlobalSetup({ randomSeed: 7, fixture: ${fixture} })
export default async (project: Parameters<typeof setup>[0]) => {
  const started = performance.now()
  const teardown = await setup(project)
  appendFileSync("once.txt", \`\${performance.now() - started}\n\`)
  return async () => {
    const started = performance.now()
    await teardown()
    appendFileSync("once.txt", \`\${performance.now() - started}\n\`)
  }
}
`)
  }
  const body = {
    empty: `import { expect, it } from "vitest"\nit("passes", () => expect(1).toBe(1))\n`,
    world: `import { expect, it } from "vitest"\nimport { useWorld } from "@fos/testing/vitest"\nconst world = await useWorld()\nit("has a world", () => expect(world.organizationId).toMatch(/^org_/))\n`,
    call: callFile,
    cold: callFile
  }[kind]
  for (let n = 0; n < files; n++) writeFileSync(join(at, `file-${n}.test.ts`), body)
  return at
}
const projects = { empty: project("empty"), world: project("world"), call: project("call"), cold: project("cold") }
/** One run of a project: its wall time, less the set-up and teardown it timed. */
const vitest = (kind: Kind) => {
  const at = projects[kind]
  rmSync(join(at, "once.txt"), { force: true })
  const wall = timed(() => {
    const result = spawnSync(node, [join(installed, "node_modules/vitest/vitest.mjs"), "run", "--maxWorkers=1"], {
      cwd: at,
      // "cold": the call's files without the compile cache the package keeps (node_modules/.cache/fos-testing).
      env: kind === "cold" ? { ...userEnv(), NODE_DISABLE_COMPILE_CACHE: "1" } : userEnv(),
      encoding: "utf8"
    })
    if (result.status !== 0) throw new Error(`${result.stdout}\n${result.stderr}`)
  })
  const once = kind === "empty" ? 0 : readFileSync(join(at, "once.txt"), "utf8").trim().split("\n").map(Number).reduce((a, b) => a + b, 0)
  return { wall, once }
}
const kinds: ReadonlyArray<Kind> = ["empty", "world", "call", "cold"]
const vitestRuns: Array<Record<Kind, { readonly wall: number; readonly once: number }>> = []
// One of each first, untimed: it fills the compile cache the package keeps, as a user's earlier run has.
for (const kind of kinds) vitest(kind)
for (let round = 0; round < rounds; round++) {
  const measured: Partial<Record<Kind, { wall: number; once: number }>> = {}
  for (let i = 0; i < kinds.length; i++) {
    const kind = kinds[(round + i) % kinds.length]!
    measured[kind] = vitest(kind)
  }
  vitestRuns.push(measured as Record<Kind, { wall: number; once: number }>)
}

// --- 3. a fork -------------------------------------------------------------------------------------------------

const fos = await startEngine({
  randomSeed: 7,
  // Deliveries answered in memory, as the tester benches build this world: no attempt retried against a real address.
  engine: { webhookTransport: "memory" },
  fixture: async (world) => {
    for (let n = 0; n < 6; n++) await world.client.webhooks.createEndpoint({ payload: { url: `https://hooks.bench.test/${n}` } })
    return undefined
  }
})
const served = await fos.serve()
const { connect } = await import("@fos/testing")
const overHttp = await connect({ baseUrl: served.baseUrl, apiKey: fos.world.apiKey, organizationId: fos.world.organizationId })
const small = fos.fixture!.snapshotId
// The tester benches' world (bench/fixture.ts) on top: 3 customers, 6 wallets, 20 settled deposits.
await buildTesterFixture(fos.engine, fos.world.apiKey, 1)
const large = await fos.world.snapshot()
/** The pause before each timed fork. */
const idleMs = 30
const time = async (run: () => Promise<void>) => {
  const started = performance.now()
  await run()
  return performance.now() - started
}
interface ForkRun { readonly pkg: number; readonly pkgEmbedded: number; readonly engine: number }
const forkRuns = new Map<string, Array<ForkRun>>([[small, []], [large.id, []]])
for (const snapshotId of forkRuns.keys()) {
  // One of each first, untimed: the snapshot's template is made by the first fork.
  await (await forkWorld(overHttp, snapshotId)).discard()
  for (let round = 0; round < rounds * 4; round++) {
    // Each target a fork and its deletion (untimed); the first moving on by one each round, so each meets the same
    // drift and the garbage of the forks before it alike.
    const targets: Record<keyof ForkRun, () => Promise<number>> = {
      pkg: async () => {
        let made: Awaited<ReturnType<typeof forkWorld>> | undefined
        const ms = await time(async () => {
          made = await forkWorld(overHttp, snapshotId, { stream: `bench-${round}` })
        })
        await made!.discard()
        return ms
      },
      pkgEmbedded: async () => {
        let made: Awaited<ReturnType<typeof forkWorld>> | undefined
        const ms = await time(async () => {
          made = await forkWorld(fos.world, snapshotId, { stream: `bench-embedded-${round}` })
        })
        await made!.discard()
        return ms
      },
      engine: async () => {
        let forked: { organizationId: string } | undefined
        const ms = await time(async () => {
          forked = await fos.engine.fork(snapshotId, { stream: `bench-engine-${round}` })
        })
        await fos.engine.deleteFork(forked!.organizationId)
        return ms
      }
    }
    const names = Object.keys(targets) as Array<keyof ForkRun>
    const measured: Partial<Record<keyof ForkRun, number>> = {}
    for (let i = 0; i < names.length; i++) {
      const name = names[(round + i) % names.length]!
      // Each from an idle process: what the target before it left to run (the engine's work after its answers, the
      // collection of its garbage) would otherwise land in a request over HTTP, which waits for the event loop's turn,
      // while a call of engine.fork or engine.fetch starts at once and leaves it to after its own timing.
      await new Promise((resolve) => setTimeout(resolve, idleMs))
      measured[name] = await targets[name]()
    }
    forkRuns.get(snapshotId)!.push(measured as ForkRun)
  }
}
await served.close()
await fos.close()

// --- the table -------------------------------------------------------------------------------------------------

const nodeEmpty = median(processRuns.map((r) => r.empty))
/** Per file, each run's wall time less its once-a-run set-up and teardown. */
const perFileOf = (kind: Kind) => median(vitestRuns.map((r) => (r[kind].wall - r[kind].once) / files))
const vitestEmpty = perFileOf("empty")
const vitestWorld = perFileOf("world")
const vitestCall = perFileOf("call")
const vitestCold = perFileOf("cold")
const compileCache = existsSync(join(installed, "node_modules/.cache/fos-testing"))
const once = median(vitestRuns.map((r) => r.world.once))
// The 7-row fixture's fork shows the wire's own cost, printed only; the page records a suite's fixture.
const forkLines = [...forkRuns.entries()].map(([snapshotId, runs]) => {
  const what = snapshotId === small ? "7 rows" : `${large.rows.toLocaleString("en-US")} rows (the tester benches' fixture)`
  const engine = median(runs.map((r) => r.engine))
  const embedded = median(runs.map((r) => r.pkgEmbedded))
  const http = median(runs.map((r) => r.pkg))
  return `| a fork of ${what}: \`engine.fork\` / \`forkWorld\` over \`engine.fetch\` / over HTTP | ${fmt(engine)} / ${fmt(embedded)} / ${fmt(http)} | ${(embedded / engine).toFixed(2)}×, ${(http / engine).toFixed(2)}× \`engine.fork\` |`
})
const processWall = median(processRuns.map((r) => r.wall))
const table = [
  `**A test file's start** (\`npm run bench:testing-start\`), measured at ${measuredAt()} on Node ${process.version}. ${rounds} rounds (forks ${rounds * 4}), ${files} Vitest files; medians. The package as installed from its tarballs (dist), its compile cache ${compileCache ? "warm (filled by an untimed first run)" : "not written"}.`,
  "",
  "| A test file's start | median ms | beside |",
  "|---|---:|---|",
  `| \`node -e 0\`; a Node process importing @fos/testing and taking a world (import + world) | ${fmt(nodeEmpty)}; ${fmt(processWall)} (${fmt(median(processRuns.map((r) => r.importMs)))} + ${fmt(median(processRuns.map((r) => r.worldMs)))}) | ${(processWall / nodeEmpty).toFixed(1)}× \`node -e 0\` |`,
  `| a Vitest file, one worker: empty / taking a world (\`await useWorld()\`) / and one typed call / the same, no compile cache (the suite's set-up and teardown, ${fmt(once)} ms once a run, left out) | ${fmt(vitestEmpty)} / ${fmt(vitestWorld)} / ${fmt(vitestCall)} / ${fmt(vitestCold)} | +${fmt(vitestWorld - vitestEmpty)} a file; +${fmt(vitestCall - vitestEmpty)}; +${fmt(vitestCold - vitestEmpty)} |`,
  forkLines[1]!
].join("\n")
console.log(table)
console.log(forkLines[0])
if (process.env.BENCH_NO_DOCS !== "1") recordSection("testing-start", table)
