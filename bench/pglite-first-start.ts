/**
 * What an embedded engine's first start on a new PGlite directory costs, each way it can get its cluster
 * (docs/storage.md, "A new directory's cluster"): its own initdb (the default), a copy of the template in the
 * user's cache (`templateCache`), beside a restart on a directory made before. Each start is `createEngine` to its
 * resolution in a new Node process, so it pays PGlite's WebAssembly compile as a host's first start does; wall time
 * and the process's CPU time (user + system), `ROUNDS` (5) rounds, the modes alternating; medians. Prints; records
 * nothing. `node --conditions=@fos/source bench/pglite-first-start.ts`
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { median } from "./rounds.ts"

const rounds = Number(process.env.ROUNDS ?? 5)
const modes = ["own initdb", "template copy", "restart"] as const
type Mode = (typeof modes)[number]

if (process.argv[2] === "--child") {
  const { createEngine } = await import("@fos/http")
  const { layerPgliteStore, userTemplateCache } = await import("@fos/sql")
  const [mode, dir] = process.argv.slice(3) as [Mode, string]
  const t0 = performance.now()
  const engine = await createEngine({ store: layerPgliteStore(dir, mode === "template copy" ? { templateCache: userTemplateCache() } : {}) })
  const wall = performance.now() - t0
  const cpu = process.cpuUsage()
  await engine.close()
  process.stdout.write(JSON.stringify({ wall, cpu: (cpu.user + cpu.system) / 1000 }))
} else {
  const work = mkdtempSync(join(tmpdir(), "fos-bench-first-start-"))
  const start = (mode: Mode, dir: string): { wall: number; cpu: number } =>
    JSON.parse(execFileSync(process.execPath, ["--conditions=@fos/source", import.meta.filename, "--child", mode, dir], { encoding: "utf8" }))
  try {
    const restartDir = join(work, "restart")
    start("own initdb", restartDir)
    const times = new Map<Mode, Array<{ wall: number; cpu: number }>>(modes.map((m) => [m, []]))
    for (let round = 0; round < rounds; round++) {
      for (const mode of modes) {
        const dir = mode === "restart" ? restartDir : join(work, `new-${round}-${modes.indexOf(mode)}`)
        times.get(mode)!.push(start(mode, dir))
        if (mode !== "restart") rmSync(dir, { recursive: true, force: true })
      }
      console.error(`[pglite-first-start] round ${round + 1} of ${rounds}`)
    }
    console.log("| An embedded engine's start on PGlite | wall ms, median | CPU ms, median |")
    console.log("|---|---:|---:|")
    for (const [mode, list] of times) {
      console.log(`| ${mode} | ${median(list.map((t) => t.wall)).toFixed(0)} | ${median(list.map((t) => t.cpu)).toFixed(0)} |`)
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}
