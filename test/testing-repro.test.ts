/**
 * A suite's result does not depend on how Vitest schedules it (docs/testing.md, "Reproducible runs"): a small suite
 * of four files on one fixture, each recording the ids, secrets and bodies its tests get, run three times, with 1, 2
 * and 4 workers and the files and tests in an order shuffled by a different seed each time, records the same values
 * every time. Each file's world is a fork named after the file, and each test starts from a restore that puts the
 * sandbox's stream back, so neither the worker nor the files and tests that ran before matter.
 */
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"

const exec = promisify(execFile)
const root = join(import.meta.dirname, "..")

const config = `import { defineConfig } from "vitest/config"
const conditions = ["@fos/source", "module", "node", "development|production"]
export default defineConfig({
  resolve: { conditions }, ssr: { resolve: { conditions } }, environments: { __vitest__: { resolve: { conditions } } },
  test: { include: ["*.test.ts"], globalSetup: ["./fos.setup.ts"], testTimeout: 60_000, hookTimeout: 60_000 }
})
`

const setup = `import { fosGlobalSetup } from "@fos/testing/vitest"
export default fosGlobalSetup({
  randomSeed: 7,
  fixture: async (world) => {
    const endpoint = await world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.repro.test/fixture" } })
    await world.advance("1 hour")
    return { endpointId: endpoint.id }
  }
})
`

/** A test file that records, per test, what its requests answered: one line `<file> <test> <JSON>` each. */
const testFile = (name: string) => `import { appendFileSync } from "node:fs"
import { expect, it } from "vitest"
import { useWorld } from "@fos/testing/vitest"

const world = await useWorld<{ endpointId: string }>()
const record = (test: string, value: unknown) => appendFileSync("recorded.txt", ${JSON.stringify(name)} + " " + test + " " + JSON.stringify(value) + "\\n")
// What the file's set-up makes is part of its starting point.
const own = await world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.repro.test/${name}/own" } })

it("creates endpoints", async () => {
  const made = []
  for (const n of [1, 2]) {
    const endpoint = await world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.repro.test/${name}/" + n } })
    made.push([endpoint.id, endpoint.secret])
  }
  const listed = await world.client.webhooks.listEndpoints({ query: {} })
  record("creates", { organization: world.organizationId, fixture: world.fixture.endpointId, own: own.id, made, listed })
})

it("moves the clock and reads the events", async () => {
  await world.advance("2 days")
  const endpoint = await world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.repro.test/${name}/late" } })
  const clock = await world.client.simulate.clock()
  record("clock", { endpoint: [endpoint.id, endpoint.secret, endpoint.createdAt], now: clock.now })
})

it("starts from the file's starting point", async () => {
  const listed = await world.client.webhooks.listEndpoints({ query: {} })
  expect(listed.data.map((e) => e.id).sort()).toEqual([world.fixture.endpointId, own.id].sort())
  const endpoint = await world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.repro.test/${name}/again" } })
  record("start", { endpoint: endpoint.id })
})
`

const files = ["onboarding.test.ts", "deposits.test.ts", "payouts.test.ts", "webhooks.test.ts"]

/** Runs the suite in `dir` with Vitest and answers the lines its tests recorded, sorted. */
const run = async (dir: string, workers: number, seed: number): Promise<ReadonlyArray<string>> => {
  const recorded = join(dir, "recorded.txt")
  rmSync(recorded, { force: true })
  const report = join(dir, "report.json")
  await exec(process.execPath, [
    join(root, "node_modules/vitest/vitest.mjs"),
    "run",
    "--root",
    dir,
    `--maxWorkers=${workers}`,
    "--sequence.shuffle",
    `--sequence.seed=${seed}`,
    "--reporter=json",
    `--outputFile=${report}`
  ], { cwd: dir, timeout: 180_000 }).catch((e: { stdout?: string; stderr?: string }) => {
    const failures = existsSync(report)
      ? (JSON.parse(readFileSync(report, "utf8")) as { testResults: ReadonlyArray<{ assertionResults: ReadonlyArray<{ fullName: string; failureMessages: ReadonlyArray<string> }> }> })
        .testResults.flatMap((file) => file.assertionResults).flatMap((test) => test.failureMessages.map((message) => `${test.fullName}: ${message}`))
      : []
    throw new Error(`${e.stdout ?? ""}\n${e.stderr ?? ""}\n${failures.join("\n")}`)
  })
  const json = JSON.parse(readFileSync(report, "utf8")) as { numTotalTests: number; numPassedTests: number }
  expect(json.numPassedTests).toBe(files.length * 3)
  return readFileSync(recorded, "utf8").trim().split("\n").sort()
}

describe("a suite under Vitest's own scheduling", () => {
  it("records the same ids, secrets and bodies with 1, 2 and 4 workers and shuffled orders", async () => {
    const dir = mkdtempSync(join(root, ".testing-repro-"))
    try {
      writeFileSync(join(dir, "vitest.config.ts"), config)
      writeFileSync(join(dir, "fos.setup.ts"), setup)
      for (const name of files) writeFileSync(join(dir, name), testFile(name))
      const first = await run(dir, 1, 11)
      expect(first).toHaveLength(files.length * 3)
      // Each file's world is its own: no two files record the same organization or ids.
      const created = first.filter((line) => line.includes(" creates ")).map((line) => JSON.parse(line.slice(line.indexOf("{"))) as { organization: string; made: Array<Array<string>> })
      expect(new Set(created.map((c) => c.organization)).size).toBe(files.length)
      expect(new Set(created.flatMap((c) => c.made.map(([id]) => id))).size).toBe(files.length * 2)
      expect(await run(dir, 2, 22)).toEqual(first)
      expect(await run(dir, 4, 33)).toEqual(first)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 600_000)
})
