/**
 * `npm run bench:service`: what sharing the rate-limit buckets through PostgreSQL costs one `fos serve` process on
 * PostgreSQL (DATABASE_URL), beside the same fos with every bucket in the process's memory (`BENCH_COMPARE`: another
 * checkout, its dependencies installed, from before the buckets were shared; without it, this checkout alone).
 *
 * Three organizations with rate limits of 99, 200 and 1,000,000 per second (the kinds of bucket a test suite
 * meets), each with a burst too large to empty in a run, so every answer is a 200 and the runs measure the
 * bookkeeping: the shared bucket's statement (one per batch of a process's concurrent requests) and the recent
 * requests' inserts (kernel/RateLimit.ts, adapters/sql SharedState.ts). The
 * request is the foundation bench's (`GET /sandbox/v2/portal/users/me`), with autocannon, in rounds that alternate
 * the targets. Writes its table into docs/performance.md (`bench:service`), unless `BENCH_NO_DOCS=1`.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { freshDatabase } from "../adapters/sql/test/databases.ts"
import { listeningOrigin, nodeStartArgs } from "../test/fosProcess.ts"
import { recordSection } from "./record.ts"
import { median } from "./rounds.ts"

const autocannon = createRequire(import.meta.url)("autocannon") as (options: Record<string, unknown>) => Promise<{
  requests: { average: number }
  latency: { p99: number }
  "2xx": number
  non2xx: number
  errors: number
}>

const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const duration = Number(process.env.BENCH_DURATION ?? 3)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32)
const compare = process.env.BENCH_COMPARE === undefined || process.env.BENCH_COMPARE === "" ? undefined : resolve(process.env.BENCH_COMPARE)
if (process.env.DATABASE_URL === undefined) throw new Error("bench:service needs DATABASE_URL (a PostgreSQL server)")

const buckets = [
  { name: "99/s", id: "org_slow", rate: 99, burst: 1_000_000_000 },
  { name: "200/s (the sandbox's)", id: "org_sandbox", rate: 200, burst: 1_000_000_000 },
  { name: "1,000,000/s", id: "org_wide", rate: 1_000_000, burst: 1_000_000_000 }
] as const
const keyOf = (i: number) => `ck_sandbox_${(0x41 + i).toString(16).repeat(32)}`

const dir = mkdtempSync(join(tmpdir(), "fos-bench-service-"))
const seed = join(dir, "seed.json")
writeFileSync(seed, JSON.stringify({
  organizations: buckets.map((b, i) => ({
    id: b.id,
    name: b.id,
    status: "active",
    rateLimit: { sustainedPerSecond: b.rate, burst: b.burst },
    users: [{ id: `usr_${i}`, email: `u${i}@bench.test`, role: "admin" }],
    apiKeys: [{ key: keyOf(i), access: "read_write", createdBy: `usr_${i}` }]
  }))
}))

/** Starts `fos serve` of the checkout `root` on a fresh database; resolves with its origin once it listens. */
const start = async (root: string) => {
  const database = await freshDatabase("bench_service")
  const child: ChildProcess = spawn(process.execPath, [...nodeStartArgs, "--store", database.url, "--port", "0", "--seed", seed, "--quiet"], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"]
  })
  const origin = await listeningOrigin(child)
  return { origin, stop: async () => { child.kill("SIGKILL"); await database.drop() } }
}

const targets = [{ name: "shared (this checkout)", root: resolve(import.meta.dirname, "..") }, ...(compare === undefined ? [] : [{ name: "per process (BENCH_COMPARE)", root: compare }])]
const servers = await Promise.all(targets.map((t) => start(t.root)))
const results = new Map<string, Array<{ rps: number; p99: number }>>()
try {
  for (let round = 0; round <= rounds; round++) {
    for (const [b, bucket] of buckets.entries()) {
      for (let i = 0; i < targets.length; i++) {
        const t = (i + round) % targets.length
        const result = await autocannon({
          url: `${servers[t]!.origin}/sandbox/v2/portal/users/me`,
          headers: { "x-api-key": keyOf(b) },
          connections,
          duration: round === 0 ? 1 : duration
        })
        if (result.non2xx > 0 || result.errors > 0) throw new Error(`${targets[t]!.name}, ${bucket.name}: ${result.non2xx} non-2xx, ${result.errors} errors`)
        // Round 0 warms each server up.
        if (round === 0) continue
        const key = `${t}/${b}`
        results.set(key, [...(results.get(key) ?? []), { rps: result.requests.average, p99: result.latency.p99 }])
        process.stderr.write(`round ${round} ${targets[t]!.name} ${bucket.name}: ${Math.round(result.requests.average)} req/s\n`)
      }
    }
  }
} finally {
  for (const s of servers) await s.stop()
  rmSync(dir, { recursive: true, force: true })
}

const cell = (t: number, b: number) => {
  const runs = results.get(`${t}/${b}`)!
  return { rps: median(runs.map((r) => r.rps)), p99: median(runs.map((r) => r.p99)) }
}
const lines = [
  `One \`fos serve\` on PostgreSQL, \`GET /sandbox/v2/portal/users/me\`, ${connections} connections, median of ${rounds} rounds of ${duration} s.`,
  "",
  `| Bucket | ${targets.map((t) => `${t.name}: req/s (p99 ms)`).join(" | ")} |${compare === undefined ? "" : " shared / per process |"}`,
  `|---|${targets.map(() => "---:").join("|")}|${compare === undefined ? "" : "---:|"}`,
  ...buckets.map((bucket, b) => {
    const cells = targets.map((_, t) => cell(t, b))
    const ratio = compare === undefined ? "" : ` ${(cells[0]!.rps / cells[1]!.rps).toFixed(2)}× |`
    return `| ${bucket.name} | ${cells.map((c) => `${Math.round(c.rps)} (${c.p99})`).join(" | ")} |${ratio}`
  })
]
console.log(lines.join("\n"))
if (process.env.BENCH_NO_DOCS !== "1") recordSection("service", lines.join("\n"))
