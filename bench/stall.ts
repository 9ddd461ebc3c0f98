/**
 * `npm run bench:stall`: what `GET /healthz` and another organization's read wait for on a PGlite `fos serve` while
 * one organization's import, restore and reset of about 10,000 rows and a 3-day advance run (test/stall.ts builds the
 * world and measures each phase; docs/storage.md, "Long work and other requests").
 *
 * `BENCH_STALL_ROUNDS` (3) rounds, each on a new PGlite directory; `BENCH_COMPARE=<another checkout, installed>` runs
 * that build's server in the same rounds, alternating which goes first. The median over the rounds of each phase's
 * duration and of its p99s is recorded, between `<!-- bench:stall:start -->` and `<!-- bench:stall:end -->` of
 * docs/performance.md (BENCH_NO_DOCS=1 leaves it alone). Nothing here asserts a time.
 */
import { execFileSync } from "node:child_process"
import { loadavg } from "node:os"
import { resolve } from "node:path"
import { freshPgliteDirectory } from "../adapters/sql/test/pgliteDirectory.ts"
import { repoRoot } from "../test/fosProcess.ts"
import { measureStalls, type Phase, phaseNames, worldFile } from "../test/stall.ts"
import { measuredAt, recordSection } from "./record.ts"

const rounds = Number(process.env.BENCH_STALL_ROUNDS ?? 3)
const compare = process.env.BENCH_COMPARE === undefined || process.env.BENCH_COMPARE === "" ? undefined : resolve(process.env.BENCH_COMPARE)
const builds = [{ name: "this checkout", checkout: repoRoot }, ...(compare === undefined ? [] : [{ name: `before (${execFileSync("git", ["-C", compare, "rev-parse", "--short", "HEAD"]).toString().trim()})`, checkout: compare }])]
const log = (line: string) => console.error(`[bench:stall] ${line}`)

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor((sorted.length - 1) / 2)]!
}

const file = await worldFile()
log(`a file of ${file.rows} rows`)
const results = new Map<string, Array<ReadonlyArray<Phase>>>(builds.map((b) => [b.name, []]))
const loads: Array<number> = []
for (let round = 0; round < rounds; round++) {
  for (let i = 0; i < builds.length; i++) {
    const build = builds[(i + round) % builds.length]!
    loads.push(loadavg()[0]!)
    results.get(build.name)!.push(await measureStalls({ store: await freshPgliteDirectory("bench-stall"), file: file.text, checkout: build.checkout }))
  }
  log(`round ${round + 1} of ${rounds}`)
}

const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1))
const phases = ["quiet", ...phaseNames] as const
const cell = (build: string, name: (typeof phases)[number]) => {
  const of = results.get(build)!.map((run) => run.find((p) => p.name === name)!)
  return `${ms(median(of.map((p) => p.ms)))} ms: ${ms(median(of.map((p) => p.healthz.p99)))} / ${ms(median(of.map((p) => p.otherOrganization.p99)))}`
}
// One line, so that the page stays within its length (test/reference-docs.test.ts).
const lines = [
  `**\`npm run bench:stall\`: what other requests wait for on a PGlite server while one organization's import, restore, reset (10,000 rows) and 3-day advance run** (docs/storage.md, "Long work and other requests"). Measured at ${measuredAt()} on Node ${process.version}; ${rounds} rounds, a file of ${file.rows.toLocaleString("en-US")} rows; the 1-minute load average was ${ms(median(loads))} on 2 cores. Each phase's median duration, then the medians of its p99s of \`GET /healthz\` / of the other organization's list read (goal: 50 ms): ${
    builds.map((b) => `**${b.name}**: ${phases.map((name) => `${name} ${cell(b.name, name)}`).join("; ")}`).join(". ")
  }.`
]
console.log(lines.join("\n"))
if (process.env.BENCH_NO_DOCS !== "1") recordSection("stall", lines.join("\n"))
