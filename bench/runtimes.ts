/**
 * `npm run bench` (its last part): the foundation bench's request, `GET /sandbox/v2/portal/users/me` with an API key,
 * against `fos serve` on Node, on Bun (`Bun.serve`) and on Deno (`Deno.serve`), each next to its runtime's raw
 * server answering the same bytes: `bench/raw-server.ts` (`node:http`) on Node, `bench/raw-web-server.ts` on Bun
 * and Deno.
 *
 * For each runtime in turn: start fos (memory store, a seed whose rate limit is out of the way) and read its idle
 * RSS; fetch the route once and start the raw server with that response; then for the raw server and for fos, a
 * warm-up run and a timed run with autocannon, checking every body. Servers run in their own processes, started from
 * the npm-installed binaries as README says (Node with its own type stripping, for fos and raw alike).
 *
 * Settings, in the variables bench/run.ts reads (with this bench's own defaults): BENCH_CONNECTIONS (32), BENCH_DURATION (seconds, 10), BENCH_WARMUP (seconds, 3).
 * Results go to stdout and to the section of docs/performance.md between `<!-- bench:runtimes:start -->` and
 * `<!-- bench:runtimes:end -->` (BENCH_NO_DOCS=1 leaves the docs alone). Nothing is asserted about time; the exit
 * status is non-zero only when a run saw errors, timeouts, non-2xx responses or unexpected bodies, or a server did
 * not stop cleanly on SIGTERM.
 */
import { execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { once } from "node:events"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { availableParallelism, release, tmpdir, totalmem } from "node:os"
import { join, resolve } from "node:path"
import { performance } from "node:perf_hooks"
import { measuredAt, recordSection, writeBenchSeed } from "./record.ts"
import { type FosRuntime, serveCommand, startFos } from "../test/fosProcess.ts"

interface AutocannonResult {
  readonly errors: number
  readonly timeouts: number
  readonly mismatches: number
  readonly non2xx: number
  readonly "2xx": number
  readonly requests: { readonly average: number }
}
interface AutocannonInstance extends PromiseLike<AutocannonResult> {
  on(event: "response", listener: (client: unknown, status: number, bytes: number, ms: number) => void): AutocannonInstance
}
const autocannon = createRequire(import.meta.url)("autocannon") as (options: object) => AutocannonInstance

const root = resolve(import.meta.dirname, "..")
const path = "/sandbox/v2/portal/users/me"
const setting = (name: string, fallback: number) => {
  const n = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number`)
  return n
}
const settings = { connections: setting("BENCH_CONNECTIONS", 32), durationSeconds: setting("BENCH_DURATION", 10), warmupSeconds: setting("BENCH_WARMUP", 3) }
const log = (line: string) => console.error(`[bench:runtimes] ${line}`)
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

// --- /proc readings (Linux; n/a elsewhere) ---------------------------------------------------------------------

const rssKiB = (pid: number): number | undefined => {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return m === null ? undefined : Number(m[1])
  } catch {
    return undefined
  }
}

/** CPU time of a process, all threads, nanoseconds. */
const cpuNs = (pid: number): number | undefined => {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0])
  } catch {
    return undefined
  }
}

/** Busy time of all CPUs, milliseconds (USER_HZ is 100). */
const machineBusyMs = (): number | undefined => {
  try {
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number)
    return (user + nice + system + irq + softirq + steal) * 10
  } catch {
    return undefined
  }
}

// --- load ------------------------------------------------------------------------------------------------------

interface Run {
  readonly requestsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly bad: number
  /** The server's CPU time per 2xx response, µs: the steadiest figure on a shared machine. */
  readonly cpuPerRequestUs: number | undefined
  /** The server's CPU time over the run, % of one core (Bun and Deno use more than one thread). */
  readonly cpuPercent: number | undefined
  /** CPU used by everything but the server and the load generator, % of one core. */
  readonly otherCpuPercent: number | undefined
}

/** One autocannon run; every response time kept at full precision (autocannon's histogram keeps whole ms). */
const load = async (url: string, pid: number, seconds: number, headers: Record<string, string>, expectBody: string): Promise<Run> => {
  const times: Array<number> = []
  const cpu0 = cpuNs(pid)
  const busy0 = machineBusyMs()
  const self0 = process.cpuUsage()
  const t0 = performance.now()
  const result = await autocannon({ url, connections: settings.connections, duration: seconds, timeout: 10, headers, expectBody })
    .on("response", (_c, status, _b, ms) => {
      if (status >= 200 && status < 300) times.push(ms)
    })
  const wallMs = performance.now() - t0
  const cpu1 = cpuNs(pid)
  const busy1 = machineBusyMs()
  const self = process.cpuUsage(self0)
  times.sort((a, b) => a - b)
  const at = (p: number) => times.length === 0 ? 0 : times[Math.min(times.length - 1, Math.ceil((p / 100) * times.length) - 1)]!
  const serverMs = cpu0 === undefined || cpu1 === undefined ? undefined : (cpu1 - cpu0) / 1e6
  const selfMs = (self.user + self.system) / 1000
  return {
    requestsPerSecond: result.requests.average,
    p50Ms: at(50),
    p99Ms: at(99),
    bad: result.errors + result.timeouts + result.mismatches + result.non2xx,
    cpuPerRequestUs: serverMs === undefined || result["2xx"] === 0 ? undefined : (serverMs * 1000) / result["2xx"],
    cpuPercent: serverMs === undefined ? undefined : (serverMs / wallMs) * 100,
    otherCpuPercent: serverMs === undefined || busy0 === undefined || busy1 === undefined
      ? undefined
      : Math.max(0, ((busy1 - busy0 - serverMs - selfMs) / wallMs) * 100)
  }
}

const measure = async (name: string, url: string, pid: number, headers: Record<string, string>, body: string): Promise<Run> => {
  if (settings.warmupSeconds > 0) await load(url, pid, settings.warmupSeconds, headers, body)
  log(`${name}: ${settings.durationSeconds} s`)
  return load(url, pid, settings.durationSeconds, headers, body)
}

// --- servers ---------------------------------------------------------------------------------------------------

/** The raw server of `runtime`, answering with the response in `payloadPath`. */
const startRaw = async (runtime: FosRuntime, payloadPath: string) => {
  const fos = serveCommand(runtime)
  // The same binary that runs fos, with the raw server's script in place of fos's.
  const args = runtime === "node" ? ["bench/raw-server.ts"] : runtime === "bun" ? ["bench/raw-web-server.ts"] : ["run", "-A", "bench/raw-web-server.ts"]
  const child = spawn(fos.file, args, { cwd: root, env: { ...process.env, BENCH_PAYLOAD: payloadPath }, stdio: ["ignore", "pipe", "inherit"] })
  let out = ""
  const url = await new Promise<string>((ok, fail) => {
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk
      const m = /^raw: (\S+)$/m.exec(out)
      if (m !== null) ok(m[1]!)
    })
    child.on("exit", (code) => fail(new Error(`the raw ${runtime} server exited (${code}) before listening: ${out}`)))
  })
  return { url, pid: child.pid!, stop: async () => {
    child.kill("SIGTERM")
    if (child.exitCode === null && child.signalCode === null) await once(child, "exit")
  } }
}

const version = (runtime: FosRuntime): string => {
  if (runtime === "node") return `Node ${process.version.slice(1)}`
  const out = execFileSync(serveCommand(runtime).file, ["--version"], { encoding: "utf8" })
  return runtime === "bun" ? `Bun ${out.trim()}` : `Deno ${/deno (\S+)/.exec(out)?.[1] ?? out.trim()}`
}

interface RuntimeResult {
  readonly runtime: FosRuntime
  readonly version: string
  readonly raw: Run
  readonly fos: Run
  readonly idleRssKiB: number | undefined
  readonly endRssKiB: number | undefined
  readonly stopCode: number | null
}

const benchRuntime = async (runtime: FosRuntime, seedPath: string, key: string, tmp: string): Promise<RuntimeResult> => {
  log(`${runtime}: starting fos serve`)
  const fos = await startFos(["--store", "memory", "--port", "0", "--seed", seedPath, "--quiet"], {}, runtime)
  const pid = fos.child.pid!
  try {
    await sleep(2000)
    const idleRssKiB = rssKiB(pid)
    const headers = { "x-api-key": key }
    const probe = await fetch(`${fos.origin}${path}`, { headers })
    const body = await probe.text()
    if (probe.status !== 200) throw new Error(`${runtime}: fos answered ${probe.status}: ${body}`)
    const skip = new Set(["date", "connection", "keep-alive", "transfer-encoding"])
    const payloadPath = join(tmp, `payload-${runtime}.json`)
    writeFileSync(payloadPath, JSON.stringify({ status: probe.status, headers: [...probe.headers].filter(([k]) => !skip.has(k)), body }))
    const raw = await startRaw(runtime, payloadPath)
    try {
      const rawUrl = `${raw.url}${path}`
      if ((await (await fetch(rawUrl)).text()) !== body) throw new Error(`${runtime}: the raw server does not answer what fos answered`)
      const rawRun = await measure(`${runtime} raw`, rawUrl, raw.pid, {}, body)
      const fosRun = await measure(`${runtime} fos`, `${fos.origin}${path}`, pid, headers, body)
      const endRssKiB = rssKiB(pid)
      const exit = await fos.stop("SIGTERM")
      return { runtime, version: version(runtime), raw: rawRun, fos: fosRun, idleRssKiB, endRssKiB, stopCode: exit.code }
    } finally {
      await raw.stop()
    }
  } finally {
    fos.child.kill("SIGKILL")
  }
}

// --- report ----------------------------------------------------------------------------------------------------

const int = (n: number) => Math.round(n).toLocaleString("en-US")
const num = (n: number | undefined, digits = 1) => n === undefined ? "n/a" : n.toFixed(digits)
const mib = (kib: number | undefined) => kib === undefined ? "n/a" : `${(kib / 1024).toFixed(0)}`

const machine = () => {
  let model = "unknown CPU"
  try {
    model = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1]?.trim() ?? model
  } catch {
    // not Linux
  }
  return `${availableParallelism()} × ${model} (${(totalmem() / 2 ** 30).toFixed(1)} GiB, ${process.platform} ${release()} ${process.arch})`
}

const markdown = (results: ReadonlyArray<RuntimeResult>): string => {
  const row = (label: string, cell: (r: RuntimeResult) => string) => `| ${label} | ${results.map(cell).join(" | ")} |`
  const rawName = (r: RuntimeResult) => r.runtime === "node" ? "`node:http`" : r.runtime === "bun" ? "`Bun.serve`" : "`Deno.serve`"
  return [
    `Measured at ${measuredAt()} on ${machine()}. \`GET ${path}\`, ${settings.connections} connections, no pipelining, ${settings.warmupSeconds} s warm-up then ${settings.durationSeconds} s per server; memory store; load generator (autocannon on Node) and servers on the same machine.`,
    "",
    `| | ${results.map((r) => r.version).join(" | ")} |`,
    `|---|${results.map(() => "---:").join("|")}|`,
    row("fos, req/s (mean of 1 s samples)", (r) => int(r.fos.requestsPerSecond)),
    row("raw server, req/s", (r) => `${int(r.raw.requestsPerSecond)} (${rawName(r)})`),
    row("fos / raw, throughput", (r) => `${(r.fos.requestsPerSecond / r.raw.requestsPerSecond).toFixed(2)}×`),
    row("fos latency p50 / p99, ms", (r) => `${num(r.fos.p50Ms, 2)} / ${num(r.fos.p99Ms, 2)}`),
    row("raw latency p50 / p99, ms", (r) => `${num(r.raw.p50Ms, 2)} / ${num(r.raw.p99Ms, 2)}`),
    row("fos CPU per request, µs", (r) => num(r.fos.cpuPerRequestUs)),
    row("raw CPU per request, µs", (r) => num(r.raw.cpuPerRequestUs)),
    row("fos CPU during its run, % of one core", (r) => `${num(r.fos.cpuPercent, 0)} %`),
    row("other processes' CPU during fos's run, % of one core", (r) => `${num(r.fos.otherCpuPercent, 0)} %`),
    row("fos RSS idle → after its runs, MiB", (r) => `${mib(r.idleRssKiB)} → ${mib(r.endRssKiB)}`),
    row("bad responses (errors, timeouts, non-2xx, wrong body)", (r) => `${r.fos.bad + r.raw.bad}`)
  ].join("\n")
}


const main = async () => {
  const tmp = mkdtempSync(join(tmpdir(), "fos-bench-runtimes-"))
  try {
    const key = `ck_sandbox_${randomBytes(32).toString("hex")}`
    const seedPath = writeBenchSeed(tmp, key)
    const results: Array<RuntimeResult> = []
    for (const runtime of ["node", "bun", "deno"] as const) results.push(await benchRuntime(runtime, seedPath, key, tmp))
    const table = markdown(results)
    console.log(table)
    if (process.env.BENCH_NO_DOCS !== "1") {
      recordSection("runtimes", table)
      log("updated docs/performance.md")
    }
    const failed = results.filter((r) => r.fos.bad + r.raw.bad > 0 || r.stopCode !== 0)
    for (const r of failed) log(`${r.runtime}: ${r.fos.bad} bad fos responses, ${r.raw.bad} bad raw responses, fos exit status ${r.stopCode} after SIGTERM`)
    if (failed.length > 0) process.exitCode = 1
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
}

main().catch((e: unknown) => {
  console.error(`[bench:runtimes] failed: ${e instanceof Error ? e.message : String(e)}`)
  process.exitCode = 1
})
