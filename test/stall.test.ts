/**
 * No request waits for another organization's long work beyond its share (docs/storage.md, "Long work and other
 * requests"): while acme's import, restore and reset of about 10,000 rows and a 3-day advance firing hundreds of
 * timers run on a PGlite `fos serve`, `GET /healthz` and the rival organization's customer list are answered
 * (test/stall.ts sends them every 5 ms and measures each phase).
 *
 * The bound is the 50 ms at p99, but a loaded machine (CI's two shared cores) makes every request slower,
 * waiting or not, so a phase's bound is also a share of its own duration: half of it at p99, a quarter at the median.
 * Requests that waited for the whole work (what the server did before it paused) wait for about all of it, half of
 * them for more than half of it, and fail either way. The import is held to the median's bound only: the request's
 * own parse and fingerprint of its 4.5 MB body still hold the thread for a few hundred milliseconds before its
 * handler runs (docs/storage.md, "Long work and other requests"). The figures are printed; `npm run bench:stall`
 * records them (docs/performance.md).
 */
import { afterAll, describe, expect, it } from "vitest"
import { freshPgliteDirectory } from "../adapters/sql/test/pgliteDirectory.ts"
import { killAllFos, repoRoot } from "./fosProcess.ts"
import { measureStalls, phaseLines, worldFile } from "./stall.ts"

afterAll(() => killAllFos())

describe("a PGlite server under one organization's long work", () => {
  it("answers /healthz and another organization's read while an import, a restore, a reset and an advance run", async () => {
    const file = await worldFile()
    expect(file.rows).toBeGreaterThanOrEqual(10_000)
    const phases = await measureStalls({ store: await freshPgliteDirectory("stall"), file: file.text, checkout: repoRoot })
    console.log(phaseLines(phases).join("\n"))
    for (const phase of phases) {
      if (phase.name === "quiet") continue
      expect(phase.healthz.n, `${phase.name}: /healthz answered while it ran`).toBeGreaterThan(0)
      for (const [what, latencies] of [["/healthz", phase.healthz], ["the other organization's read", phase.otherOrganization]] as const) {
        expect(latencies.p50, `${phase.name}: ${what}, median (ms)`).toBeLessThanOrEqual(Math.max(50, phase.ms / 4))
        if (phase.name !== "import") expect(latencies.p99, `${phase.name}: ${what}, p99 (ms)`).toBeLessThanOrEqual(Math.max(50, phase.ms / 2))
      }
    }
  }, 180_000)
})
