/**
 * An embedded engine's requests stay in V8's young generation, whatever the engine's start left V8 to decide
 * (ScopeSites.ts; docs/performance.md, "An embedded engine's memory"): in a host process with no V8 flags, the
 * scavenges during the requests promote about as little as a bare Effect handler's (kilobytes), not the megabytes
 * (or megabytes) of a process where V8 allocates each request's scopes or contexts in the old generation.
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { settleScopeSites, settlingScopes, settlingServices } from "../packages/http/src/ScopeSites.ts"

const repoRoot = resolve(import.meta.dirname, "..")
// A host's environment, not the test runner's (vitest sets NODE_ENV=test).
const hostEnv: NodeJS.ProcessEnv = { ...process.env }
delete hostEnv.NODE_ENV

/** The bytes each scavenge promoted between the host's `requests: start` and `requests: end` (`--trace-gc-nvp`). */
const promotedPerScavenge = (output: string): Array<number> => {
  const lines = output.split("\n")
  const during = lines.slice(lines.indexOf("requests: start"), lines.indexOf("requests: end"))
  return during.filter((line) => / gc=s /.test(line)).map((line) => Number(/ promoted=(\d+)/.exec(line)?.[1]))
}

describe("the scope sites an engine settles", () => {
  it("are settled once per process, by scopes that die at once", () => {
    // This suite's process has created no engine: the first call makes the scopes, later ones nothing.
    expect(settlingScopes).toBeGreaterThanOrEqual(1_000)
    expect(settleScopeSites()).toBe(true)
    expect(settleScopeSites()).toBe(false)
  })

  it("settle a context's literal as @fos/http loads, before the contract's modules add their annotations", () => {
    // Enough for V8 to decide (100), few enough that V8 counts them all (it does not count optimized code's).
    expect(settlingServices).toBeGreaterThanOrEqual(200)
    expect(settlingServices).toBeLessThanOrEqual(500)
    const index = readFileSync(resolve(repoRoot, "packages/http/src/index.ts"), "utf8")
    expect(index.split("\n")[0]).toBe('import "./ScopeSites.ts"')
  })

  // V8's decision follows the timing of its background threads: without ScopeSites.ts, about half the hosts (and
  // two in three under this runner) tenure them. Three hosts, each of which must keep its requests young.
  it.each([1, 2, 3])("keep a request's objects young: host %i's scavenges promote kilobytes, not hundreds of them", () => {
    const output = execFileSync(process.execPath, ["--trace-gc-nvp", "--conditions=@fos/source", resolve(repoRoot, "test/fixtures/scopeSitesHost.ts"), "6000"], {
      cwd: repoRoot,
      env: hostEnv,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024
    })
    const promoted = promotedPerScavenge(output)
    expect(promoted.length, output.slice(-2000)).toBeGreaterThanOrEqual(5)
    // The median: the first scavenge of the requests still promotes what the engine's start left young (megabytes).
    // Requests in the old generation promote 400 KB and more at every scavenge; young ones a few KB.
    const median = [...promoted].sort((a, b) => a - b)[Math.floor(promoted.length / 2)]!
    expect(median, `promoted per scavenge: ${promoted.join(", ")}`).toBeLessThan(200 * 1024)
  }, 120_000)
})
