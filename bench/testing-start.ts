/**
 * `npm run bench:testing-start`: what a test file pays to start with `@fos/testing`, each figure beside its baseline,
 * measured in one run. Nothing here asserts a time; the table goes to stdout and to docs/performance.md
 * (`bench:testing-start`, unless `BENCH_NO_DOCS=1`).
 *
 * 1. **A process**: `node -e 0`, beside a Node process that imports `@fos/testing` and takes a world from a running
 *    suite (`joinSuite` with the file's stream name, and the save before its first test), each part timed inside it.
 * 2. **Vitest**: a project of `BENCH_TESTING_FILES` (8) test files on one worker (`--maxWorkers=1`, so files add up),
 *    each file empty (one passing test), and each file taking a world first (`await useWorld()`, the fixture a webhook
 *    endpoint), run in turns; the difference per file is what importing the package and taking a world cost it.
 * 3. **A fork**: of a 7-row fixture snapshot (six webhook endpoints) and of the tester benches' fixture
 *    (bench/fixture.ts, about 900 rows), through the package (`forkWorld`: the fork over `engine.fetch` and over the
 *    served engine, and its world) beside `engine.fork` of the same snapshot, each deleted after (not timed).
 *
 * `BENCH_TESTING_ROUNDS` (5) rounds of each, alternating; the median.
 */
import { execFile, execFileSync, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
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

// --- 1. a process ---------------------------------------------------------------------------------------------

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
  const { stdout } = await execFileAsync(node, ["--conditions=@fos/source", "--input-type=module", "-e", child], {
    cwd: root,
    env: { ...process.env, SUITE: JSON.stringify(suite.info), STREAM: `bench/file-${round}.test.ts` },
    encoding: "utf8"
  })
  const wall = performance.now() - started
  const inside = JSON.parse(stdout.trim().split("\n").at(-1)!) as { importMs: number; worldMs: number }
  processRuns.push({ empty, wall, ...inside })
}
await suite.close()

// --- 2. Vitest -------------------------------------------------------------------------------------------------

const dir = mkdtempSync(join(root, ".bench-testing-start-"))
const conditions = `["@fos/source", "module", "node", "development|production"]`
const project = (name: string, withWorld: boolean) => {
  const at = join(dir, name)
  execFileSync("mkdir", ["-p", at])
  writeFileSync(join(at, "vitest.config.ts"), `import { defineConfig } from "vitest/config"
const conditions = ${conditions}
export default defineConfig({
  resolve: { conditions }, ssr: { resolve: { conditions } }, environments: { __vitest__: { resolve: { conditions } } },
  test: { include: ["*.test.ts"], ${withWorld ? `globalSetup: ["./fos.setup.ts"], ` : ""}testTimeout: 60_000, hookTimeout: 60_000 }
})
`)
  if (withWorld) {
    writeFileSync(join(at, "fos.setup.ts"), `import { fosGlobalSetup } from "@fos/testing/vitest"
export default fosGlobalSetup({ randomSeed: 7, fixture: async (world) => { await world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.bench.test/f" } }); return undefined } })
`)
  }
  for (let n = 0; n < files; n++) {
    writeFileSync(join(at, `file-${n}.test.ts`), withWorld
      ? `import { expect, it } from "vitest"\nimport { useWorld } from "@fos/testing/vitest"\nconst world = await useWorld()\nit("has a world", () => expect(world.organizationId).toMatch(/^org_/))\n`
      : `import { expect, it } from "vitest"\nit("passes", () => expect(1).toBe(1))\n`)
  }
  return at
}
const emptyProject = project("empty", false)
const worldProject = project("world", true)
const vitest = (at: string) =>
  timed(() => {
    const result = spawnSync(node, [join(root, "node_modules/vitest/vitest.mjs"), "run", "--root", at, "--maxWorkers=1"], { cwd: at, encoding: "utf8" })
    if (result.status !== 0) throw new Error(`${result.stdout}\n${result.stderr}`)
  })
const vitestRuns: Array<{ readonly empty: number; readonly world: number }> = []
try {
  vitest(emptyProject)
  vitest(worldProject)
  for (let round = 0; round < rounds; round++) vitestRuns.push({ empty: vitest(emptyProject), world: vitest(worldProject) })
} finally {
  rmSync(dir, { recursive: true, force: true })
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
      measured[name] = await targets[name]()
    }
    forkRuns.get(snapshotId)!.push(measured as ForkRun)
  }
}
await served.close()
await fos.close()

// --- the table -------------------------------------------------------------------------------------------------

const nodeEmpty = median(processRuns.map((r) => r.empty))
const vitestEmpty = median(vitestRuns.map((r) => r.empty))
const vitestWorld = median(vitestRuns.map((r) => r.world))
const perFile = (vitestWorld - vitestEmpty) / files
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
  `**A test file's start** (\`npm run bench:testing-start\`), measured at ${measuredAt()} on Node ${process.version}. ${rounds} rounds (forks ${rounds * 4}), ${files} Vitest files; medians.`,
  "",
  "| A test file's start | median ms | beside |",
  "|---|---:|---|",
  `| \`node -e 0\`; a Node process importing @fos/testing and taking a world (import + world) | ${fmt(nodeEmpty)}; ${fmt(processWall)} (${fmt(median(processRuns.map((r) => r.importMs)))} + ${fmt(median(processRuns.map((r) => r.worldMs)))}) | ${(processWall / nodeEmpty).toFixed(1)}× \`node -e 0\` |`,
  `| a Vitest file, one worker: empty / taking a world (\`await useWorld()\`) | ${fmt(vitestEmpty / files)} / ${fmt(vitestWorld / files)} | +${fmt(perFile)} a file |`,
  forkLines[1]!
].join("\n")
console.log(table)
console.log(forkLines[0])
if (process.env.BENCH_NO_DOCS !== "1") recordSection("testing-start", table)
