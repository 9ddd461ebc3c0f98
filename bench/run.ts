/**
 * `npm run bench`: throughput, latency and memory of `fos serve` against a bare `node:http` baseline.
 *
 * Method (docs/performance.md explains it at length):
 *   1. Writes a seed (one organization whose rate limit is raised out of the way, one user, one sandbox key)
 *      into a temporary directory and starts `fos serve --port 0 --seed <file>` as a child process, with the node
 *      flags of `npm start` (package.json).
 *   2. Reads the child's idle RSS, fetches `GET /sandbox/v2/portal/users/me` once, and starts
 *      bench/raw-server.ts as another child process that answers with the same status, headers and body, and
 *      bench/effect-server.ts, Effect's HTTP server answering the same from one route with no pipeline (the
 *      ceiling: what fos pays before its own work).
 *   3. Sends 100,000 requests to fos (checking every body) and reads its RSS again.
 *   4. A warm-up run of each target, then rounds: in each round a timed run of each target, raw, the Effect route
 *      and fos, the first of them moving on by one every round, with the same autocannon settings. A VM's speed
 *      drifts from one minute to the next; alternating short runs puts every target under the same drift, and
 *      each round's ratio compares runs seconds apart. The ratios are the median of the rounds'.
 *   5. Prints a markdown table, writes bench/results/latest.json, and rewrites the section of
 *      docs/performance.md between `<!-- bench:foundation:start -->` and `<!-- bench:foundation:end -->`.
 *
 * A second `fos serve` with `--otlp` to bench/otlp-sink.ts runs in the same rounds: the cost of telemetry when on.
 *
 * Settings can be changed through the environment: BENCH_CONNECTIONS (32), BENCH_ROUNDS (5), BENCH_DURATION
 * (seconds per target and round, 3), BENCH_WARMUP (seconds, 3), BENCH_AMOUNT (100000). BENCH_NO_DOCS=1 leaves
 * docs/performance.md alone.
 *
 * The goals (throughput at least 0.5× raw, p99 at most 2× raw) are reported, never enforced: timing depends on
 * the machine. The exit code is non-zero only when something is wrong: a server fails to start, or a run saw
 * errors, timeouts, non-2xx responses or unexpected bodies.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { availableParallelism, cpus, release, tmpdir, totalmem } from "node:os"
import { dirname, join, resolve } from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { nodeStartArgs as startArgs, sourceConditionFlag, v8StartFlags } from "../test/fosProcess.ts"
import { measuredAt, recordSection, writeBenchSeed } from "./record.ts"
import { combine, LatencyRecorder, type Round, roundOrder, roundRatios, type Run } from "./rounds.ts"

// ---------------------------------------------------------------------------------------------------------------
// autocannon has no type declarations; this is the part of its programmatic API the bench uses.

interface AutocannonOptions {
  readonly url: string
  readonly connections: number
  readonly duration?: number
  readonly amount?: number
  readonly headers?: Record<string, string>
  readonly timeout?: number
  readonly expectBody?: string
}

interface AutocannonStats {
  readonly average: number
  readonly mean: number
  readonly stddev: number
  readonly min: number
  readonly max: number
  readonly total: number
  readonly p50: number
  readonly p90: number
  readonly p99: number
}

interface AutocannonResult {
  readonly duration: number
  readonly errors: number
  readonly timeouts: number
  readonly mismatches: number
  readonly non2xx: number
  readonly resets: number
  readonly "2xx": number
  readonly statusCodeStats: Record<string, { readonly count: number }>
  readonly latency: AutocannonStats
  readonly requests: AutocannonStats & { readonly sent: number }
  readonly throughput: AutocannonStats
}

interface AutocannonInstance extends PromiseLike<AutocannonResult> {
  on(
    event: "response",
    listener: (client: unknown, statusCode: number | string, resBytes: number, responseTimeMs: number) => void
  ): AutocannonInstance
  stop(): void
}

const autocannon = createRequire(import.meta.url)("autocannon") as (options: AutocannonOptions) => AutocannonInstance

// ---------------------------------------------------------------------------------------------------------------
// Settings

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const path = "/v2/portal/users/me"

const intFromEnv = (name: string, fallback: number, min: number): number => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be a whole number, at least ${min}; got ${JSON.stringify(raw)}`)
  return n
}

const settings = {
  connections: intFromEnv("BENCH_CONNECTIONS", 32, 1),
  rounds: intFromEnv("BENCH_ROUNDS", 5, 1),
  durationSeconds: intFromEnv("BENCH_DURATION", 3, 1),
  warmupSeconds: intFromEnv("BENCH_WARMUP", 3, 0),
  amount: intFromEnv("BENCH_AMOUNT", 100_000, 1),
  /** Another checkout of fos, with its dependencies installed, to measure in the same rounds: before and after. */
  compare: process.env.BENCH_COMPARE === undefined || process.env.BENCH_COMPARE === "" ? undefined : resolve(process.env.BENCH_COMPARE),
  pipelining: 1,
  timeoutSeconds: 10
}

const startTimeoutMs = 60_000
const stopTimeoutMs = 25_000

// ---------------------------------------------------------------------------------------------------------------
// Child processes

interface Child {
  readonly name: string
  readonly proc: ChildProcess
  readonly pid: number
  /** Everything the child wrote to stdout and stderr, most recent 64 KiB. */
  log: string
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined
  readonly exited: Promise<void>
}

/** Spawns `node <args>` in `cwd` (the repository root) and resolves once a stdout line starts with `prefix`. */
const startChild = (
  name: string,
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  prefix: string,
  cwd = root
): Promise<{ child: Child; value: string }> => {
  const proc = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
  if (proc.pid === undefined) return Promise.reject(new Error(`${name}: could not spawn ${process.execPath}`))
  let resolveExited!: () => void
  const child: Child = {
    name,
    proc,
    pid: proc.pid,
    log: "",
    exit: undefined,
    exited: new Promise<void>((r) => { resolveExited = r })
  }
  const append = (chunk: Buffer) => {
    child.log = (child.log + chunk.toString("utf8")).slice(-65_536)
  }
  return new Promise((resolvePromise, reject) => {
    let settled = false
    let pending = ""
    const timer = setTimeout(() => {
      if (settled) return
      settled = true
      proc.kill("SIGKILL")
      reject(new Error(`${name} did not print "${prefix}..." within ${startTimeoutMs / 1000} s. Its output:\n${child.log}`))
    }, startTimeoutMs)
    proc.stdout!.on("data", (chunk: Buffer) => {
      append(chunk)
      if (settled) return
      pending += chunk.toString("utf8")
      const lines = pending.split("\n")
      pending = lines.pop() ?? ""
      for (const line of lines) {
        if (line.startsWith(prefix)) {
          settled = true
          clearTimeout(timer)
          resolvePromise({ child, value: line.slice(prefix.length).trim() })
          return
        }
      }
    })
    proc.stderr!.on("data", append)
    proc.on("error", (e) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      reject(new Error(`${name}: ${e.message}`))
    })
    proc.on("exit", (code, signal) => {
      child.exit = { code, signal }
      resolveExited()
      if (settled) return
      settled = true
      clearTimeout(timer)
      reject(new Error(`${name} exited (code ${code}, signal ${signal}) before printing "${prefix}...". Its output:\n${child.log}`))
    })
  })
}

/** SIGTERM, then SIGKILL if the child has not exited within `stopTimeoutMs`. */
const stopChild = async (child: Child): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number; killed: boolean }> => {
  const t0 = performance.now()
  if (child.exit === undefined) child.proc.kill("SIGTERM")
  let killed = false
  const timer = setTimeout(() => {
    killed = true
    child.proc.kill("SIGKILL")
  }, stopTimeoutMs)
  await child.exited
  clearTimeout(timer)
  return { code: child.exit?.code ?? null, signal: child.exit?.signal ?? null, ms: Math.round(performance.now() - t0), killed }
}

// ---------------------------------------------------------------------------------------------------------------
// /proc readings (Linux)

interface Memory {
  /** Resident set size now, KiB. */
  readonly rssKiB: number | undefined
  /** Peak resident set size since the process started, KiB. */
  readonly peakKiB: number | undefined
}

const readMemory = (pid: number): Memory => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    const field = (name: string) => {
      const m = new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)
      return m === null ? undefined : Number(m[1])
    }
    return { rssKiB: field("VmRSS"), peakKiB: field("VmHWM") }
  } catch {
    return { rssKiB: undefined, peakKiB: undefined }
  }
}

/** Nanoseconds the process has spent on a CPU (all threads), from /proc/<pid>/schedstat. */
const readCpuNs = (pid: number): number | undefined => {
  try {
    const first = readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]
    return first === undefined ? undefined : Number(first)
  } catch {
    return undefined
  }
}

/** Milliseconds all CPUs of the machine have spent busy, from /proc/stat (USER_HZ is 100 on Linux). */
const readMachineBusyMs = (): number | undefined => {
  try {
    const fields = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "").trim().split(/\s+/).slice(1).map(Number)
    // user nice system idle iowait irq softirq steal
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields
    return (user + nice + system + irq + softirq + steal) * 10
  } catch {
    return undefined
  }
}

const machine = () => {
  let model: string | undefined
  try {
    model = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1]?.trim()
  } catch {
    // not Linux
  }
  return {
    cores: availableParallelism(),
    model: model ?? cpus()[0]?.model ?? "unknown",
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: `${process.platform} ${release()} ${process.arch}`
  }
}

const commit = (cwd = root): string | undefined => {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim()
  } catch {
    return undefined
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Load

const load = async (
  target: string,
  url: string,
  pid: number,
  limit: { readonly duration: number } | { readonly amount: number },
  headers: Record<string, string>,
  expectBody?: string,
  /** Where the run's response times go; a target's rounds share one, so that its percentiles cover them all. */
  latencies = new LatencyRecorder()
): Promise<Run> => {
  const cpu0 = readCpuNs(pid)
  const busy0 = readMachineBusyMs()
  const self0 = process.cpuUsage()
  const t0 = performance.now()
  const instance = autocannon({
    url,
    connections: settings.connections,
    timeout: settings.timeoutSeconds,
    headers,
    ...limit,
    ...(expectBody === undefined ? {} : { expectBody })
  })
  instance.on("response", (_client, statusCode, _bytes, ms) => {
    const status = Number(statusCode)
    if (status >= 200 && status < 300) latencies.push(ms)
  })
  const result = await instance
  const wallMs = performance.now() - t0
  const cpu1 = readCpuNs(pid)
  const busy1 = readMachineBusyMs()
  const self = process.cpuUsage(self0)
  const serverCpuMs = cpu0 === undefined || cpu1 === undefined ? undefined : (cpu1 - cpu0) / 1e6
  const selfCpuMs = (self.user + self.system) / 1000
  const otherCpuMs = busy0 === undefined || busy1 === undefined || serverCpuMs === undefined ? undefined : Math.max(0, busy1 - busy0 - serverCpuMs - selfCpuMs)
  const statusCodes: Record<string, number> = {}
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = count
  return {
    target,
    url,
    connections: settings.connections,
    durationSeconds: result.duration,
    requestsPerSecond: {
      mean: result.requests.average,
      stddev: result.requests.stddev,
      overall: result["2xx"] / (wallMs / 1000)
    },
    completed2xx: result["2xx"],
    wallMs,
    serverCpuMs,
    loadGeneratorCpuMs: selfCpuMs,
    otherCpuMs,
    latencyMs: latencies.summary(),
    autocannonLatencyMs: { mean: result.latency.average, p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    mismatches: result.mismatches,
    resets: result.resets,
    statusCodes,
    serverCpuPercent: serverCpuMs === undefined ? undefined : (serverCpuMs / wallMs) * 100,
    serverCpuPerRequestUs: serverCpuMs === undefined || result["2xx"] === 0 ? undefined : (serverCpuMs * 1000) / result["2xx"],
    loadGeneratorCpuPercent: (selfCpuMs / wallMs) * 100,
    otherCpuPercent: otherCpuMs === undefined ? undefined : (otherCpuMs / wallMs) * 100
  }
}

interface Target {
  readonly name: string
  readonly url: string
  readonly pid: number
  readonly headers: Record<string, string>
}

/**
 * A warm-up run of each target (discarded), then `settings.rounds` rounds of one timed run per target, in
 * `roundOrder`.
 */
const measureRounds = async (targets: ReadonlyArray<Target>): Promise<{ readonly runs: ReadonlyArray<Run>; readonly rounds: ReadonlyArray<Round> }> => {
  if (settings.warmupSeconds > 0) {
    for (const target of targets) {
      log(`${target.name}: warm-up, ${settings.warmupSeconds} s`)
      await load(target.name, target.url, target.pid, { duration: settings.warmupSeconds }, target.headers)
    }
  }
  const runs = targets.map(() => [] as Array<Run>)
  const latencies = targets.map(() => new LatencyRecorder())
  const rounds: Array<Round> = []
  for (let round = 0; round < settings.rounds; round++) {
    const result: Round = {}
    for (const i of roundOrder(round, targets.length)) {
      const target = targets[i]!
      log(`round ${round + 1} of ${settings.rounds}: ${target.name}, ${settings.durationSeconds} s with ${settings.connections} connections`)
      const run = await load(target.name, target.url, target.pid, { duration: settings.durationSeconds }, target.headers, undefined, latencies[i])
      runs[i]!.push(run)
      result[target.name] = run.requestsPerSecond.mean
    }
    rounds.push(result)
  }
  return { runs: runs.map((r, i) => combine(r, latencies[i]!)), rounds }
}

const problems = (run: Run): number => run.errors + run.timeouts + run.non2xx + run.mismatches

// ---------------------------------------------------------------------------------------------------------------
// Output

const log = (line: string) => console.error(`[bench] ${line}`)

const fmtInt = (n: number) => Math.round(n).toLocaleString("en-US")
const fmtMs = (n: number) => n.toFixed(2)
const fmtRatio = (n: number) => `${n.toFixed(2)}×`
const fmtMiB = (kib: number | undefined) => (kib === undefined ? "n/a" : `${(kib / 1024).toFixed(1)} MiB`)
const fmtUs = (n: number | undefined) => (n === undefined ? "n/a" : n.toFixed(1))
const fmtPct = (n: number | undefined) => (n === undefined ? "n/a" : `${Math.round(n)} %`)
/** The rounds' ratios in order, then their spread. */
const fmtRounds = (ratios: { readonly each: ReadonlyArray<number>; readonly min: number; readonly max: number }) =>
  `${ratios.each.map((v) => v.toFixed(2)).join(", ")} (${fmtRatio(ratios.min)}–${fmtRatio(ratios.max)})`

interface Results {
  readonly date: string
  readonly node: string
  readonly machine: ReturnType<typeof machine>
  readonly commit: string | undefined
  readonly settings: typeof settings & { readonly path: string }
  readonly raw: Run
  /** Effect's HTTP server with one route and no pipeline (bench/effect-server.ts): what fos pays before its own work. */
  readonly effect: Run
  readonly fos: Run
  /** Each round's throughput of every target, req/s. */
  readonly rounds: ReadonlyArray<Round>
  /** The same server with `--otlp` to a collector that drops what it is sent (bench/otlp-sink.ts). */
  readonly traced: { readonly run: Run; readonly overFos: ReturnType<typeof roundRatios>; readonly exportedBytes: number }
  /** Another build of fos measured in the same rounds (`BENCH_COMPARE`). */
  readonly compared?: {
    readonly name: string
    readonly run: Run
    readonly throughput: ReturnType<typeof roundRatios>
    readonly fosOverOther: ReturnType<typeof roundRatios>
  }
  readonly ratios: {
    /** The median over the rounds of fos's throughput over raw's; `throughputRounds` has the rest. */
    readonly throughput: number
    readonly throughputRounds: ReturnType<typeof roundRatios>
    readonly effectThroughputRounds: ReturnType<typeof roundRatios>
    readonly fosOverEffectRounds: ReturnType<typeof roundRatios>
    readonly p50: number
    readonly p99: number
    readonly cpuPerRequest: number | undefined
    readonly effectThroughput: number
    readonly effectCpuPerRequest: number | undefined
  }
  readonly goals: {
    readonly throughput: { readonly atLeast: number; readonly met: boolean }
    readonly p99: { readonly atMost: number; readonly met: boolean }
  }
  readonly memory: {
    readonly fosIdleRssKiB: number | undefined
    readonly fosRssAfterAmountKiB: number | undefined
    readonly fosRssAtEndKiB: number | undefined
    readonly fosPeakRssKiB: number | undefined
    readonly rawIdleRssKiB: number | undefined
    readonly rawRssAtEndKiB: number | undefined
    readonly amountRun: Run
  }
  readonly shutdown: {
    readonly fos: Awaited<ReturnType<typeof stopChild>>
    readonly raw: Awaited<ReturnType<typeof stopChild>>
    readonly effect: Awaited<ReturnType<typeof stopChild>>
  }
}

const markdown = (r: Results): string => {
  const mark = (met: boolean) => (met ? "met" : "**missed**")
  const lines = [
    `Measured at ${measuredAt()} on ${r.machine.cores} × ${r.machine.model} (${r.machine.memoryGiB} GiB, ${r.machine.os}), ` +
      `Node ${r.node}. ` +
      `\`GET /sandbox${r.settings.path}\`, ${r.settings.connections} connections, no pipelining, ` +
      `${r.settings.warmupSeconds} s warm-up per target, then ${r.settings.rounds} rounds of ${r.settings.durationSeconds} s per target, the targets alternating; ` +
      "load generator and servers on the same machine. A throughput ratio is the median of the rounds' ratios; the other figures cover all the rounds.",
    "",
    "| | raw `node:http` | fos | fos / raw | goal |",
    "|---|---:|---:|---:|---|",
    `| throughput, req/s (all rounds) | ${fmtInt(r.raw.requestsPerSecond.mean)} | ${fmtInt(r.fos.requestsPerSecond.mean)} | ${fmtRatio(r.ratios.throughput)} | ≥ ${r.goals.throughput.atLeast}×: ${mark(r.goals.throughput.met)} |`,
    `| throughput in each round, req/s | ${r.rounds.map((round) => fmtInt(round.raw!)).join(", ")} | ${r.rounds.map((round) => fmtInt(round.fos!)).join(", ")} | ${fmtRounds(r.ratios.throughputRounds)} | |`,
    `| latency p50, ms | ${fmtMs(r.raw.latencyMs.p50)} | ${fmtMs(r.fos.latencyMs.p50)} | ${fmtRatio(r.ratios.p50)} | |`,
    `| latency p99, ms | ${fmtMs(r.raw.latencyMs.p99)} | ${fmtMs(r.fos.latencyMs.p99)} | ${fmtRatio(r.ratios.p99)} | ≤ ${r.goals.p99.atMost}×: ${mark(r.goals.p99.met)} |`,
    `| latency max, ms | ${fmtMs(r.raw.latencyMs.max)} | ${fmtMs(r.fos.latencyMs.max)} | | |`,
    `| requests answered 2xx | ${fmtInt(r.raw.completed2xx)} | ${fmtInt(r.fos.completed2xx)} | | |`,
    `| errors + timeouts | ${r.raw.errors + r.raw.timeouts} | ${r.fos.errors + r.fos.timeouts} | | 0 |`,
    `| non-2xx responses | ${r.raw.non2xx} | ${r.fos.non2xx} | | 0 |`,
    `| server CPU, % of one core | ${fmtPct(r.raw.serverCpuPercent)} | ${fmtPct(r.fos.serverCpuPercent)} | | |`,
    `| server CPU per request, µs | ${fmtUs(r.raw.serverCpuPerRequestUs)} | ${fmtUs(r.fos.serverCpuPerRequestUs)} | ${r.ratios.cpuPerRequest === undefined ? "" : fmtRatio(r.ratios.cpuPerRequest)} | |`,
    `| load generator CPU, % of one core | ${fmtPct(r.raw.loadGeneratorCpuPercent)} | ${fmtPct(r.fos.loadGeneratorCpuPercent)} | | |`,
    `| other processes' CPU, % of one core | ${fmtPct(r.raw.otherCpuPercent)} | ${fmtPct(r.fos.otherCpuPercent)} | | ≈ 0 |`,
    "",
    "| fos process memory | RSS |",
    "|---|---:|",
    `| idle, after start | ${fmtMiB(r.memory.fosIdleRssKiB)} |`,
    `| after ${fmtInt(r.settings.amount)} requests (${fmtInt(r.memory.amountRun.requestsPerSecond.overall)} req/s, ${r.memory.amountRun.non2xx + r.memory.amountRun.errors + r.memory.amountRun.timeouts + r.memory.amountRun.mismatches} bad responses) | ${fmtMiB(r.memory.fosRssAfterAmountKiB)} |`,
    `| at the end of the bench (${fmtInt(r.settings.amount + r.fos.completed2xx)}+ requests) | ${fmtMiB(r.memory.fosRssAtEndKiB)} |`,
    `| peak (VmHWM) | ${fmtMiB(r.memory.fosPeakRssKiB)} |`,
    `| for comparison: raw \`node:http\` server, idle | ${fmtMiB(r.memory.rawIdleRssKiB)} |`,
    `| for comparison: raw \`node:http\` server, after its ${fmtInt(r.raw.completed2xx)}+ requests | ${fmtMiB(r.memory.rawRssAtEndKiB)} |`,
    "",
    "The ceiling: Effect's HTTP server answering the same bytes from one route, with no pipeline (bench/effect-server.ts, `npm start`'s V8 flags). fos cannot come closer to raw than this.",
    "",
    "| | raw `node:http` | Effect route | Effect / raw | fos / Effect |",
    "|---|---:|---:|---:|---:|",
    `| throughput, req/s (all rounds) | ${fmtInt(r.raw.requestsPerSecond.mean)} | ${fmtInt(r.effect.requestsPerSecond.mean)} | ${fmtRatio(r.ratios.effectThroughput)} | ${fmtRatio(r.ratios.fosOverEffectRounds.median)} |`,
    `| throughput in each round, req/s | ${r.rounds.map((round) => fmtInt(round.raw!)).join(", ")} | ${r.rounds.map((round) => fmtInt(round["Effect route"]!)).join(", ")} | ${fmtRounds(r.ratios.effectThroughputRounds)} | ${fmtRounds(r.ratios.fosOverEffectRounds)} |`,
    `| server CPU per request, µs | ${fmtUs(r.raw.serverCpuPerRequestUs)} | ${fmtUs(r.effect.serverCpuPerRequestUs)} | ${r.ratios.effectCpuPerRequest === undefined ? "" : fmtRatio(r.ratios.effectCpuPerRequest)} | ${r.fos.serverCpuPerRequestUs === undefined || r.effect.serverCpuPerRequestUs === undefined ? "" : fmtRatio(r.fos.serverCpuPerRequestUs / r.effect.serverCpuPerRequestUs)} |`,
    `| other processes' CPU, % of one core | ${fmtPct(r.raw.otherCpuPercent)} | ${fmtPct(r.effect.otherCpuPercent)} | | |`,
    "",
    `Telemetry: the same server with \`--otlp\`, exporting traces, metrics and logs over OTLP/HTTP JSON to a collector that drops them (bench/otlp-sink.ts; ${fmtMiB(r.traced.exportedBytes / 1024)} sent). Off is the default, so the first table is the cost with telemetry off. Goal: on within 15 % of off.`,
    "",
    `| | fos | fos \`--otlp\` | on / off |`,
    "|---|---:|---:|---:|",
    `| throughput, req/s (all rounds) | ${fmtInt(r.fos.requestsPerSecond.mean)} | ${fmtInt(r.traced.run.requestsPerSecond.mean)} | ${fmtRatio(r.traced.overFos.median)} |`,
    `| throughput in each round, req/s | ${r.rounds.map((round) => fmtInt(round.fos!)).join(", ")} | ${r.rounds.map((round) => fmtInt(round[tracedName]!)).join(", ")} | ${fmtRounds(r.traced.overFos)} |`,
    `| latency p99, ms | ${fmtMs(r.fos.latencyMs.p99)} | ${fmtMs(r.traced.run.latencyMs.p99)} | |`,
    `| server CPU per request, µs | ${fmtUs(r.fos.serverCpuPerRequestUs)} | ${fmtUs(r.traced.run.serverCpuPerRequestUs)} | ${r.fos.serverCpuPerRequestUs === undefined || r.traced.run.serverCpuPerRequestUs === undefined ? "" : fmtRatio(r.traced.run.serverCpuPerRequestUs / r.fos.serverCpuPerRequestUs)} |`,
    ...(r.compared === undefined ? [] : [
      "",
      `Another build in the same rounds (\`BENCH_COMPARE\`): ${r.compared.name}, started by its own \`npm start\` script.`,
      "",
      `| | ${r.compared.name} | fos | ${r.compared.name} / raw | fos / ${r.compared.name} |`,
      "|---|---:|---:|---:|---:|",
      `| throughput, req/s (all rounds) | ${fmtInt(r.compared.run.requestsPerSecond.mean)} | ${fmtInt(r.fos.requestsPerSecond.mean)} | ${fmtRatio(r.compared.throughput.median)} | ${fmtRatio(r.compared.fosOverOther.median)} |`,
      `| throughput in each round, req/s | ${r.rounds.map((round) => fmtInt(round[r.compared!.name]!)).join(", ")} | ${r.rounds.map((round) => fmtInt(round.fos!)).join(", ")} | ${fmtRounds(r.compared.throughput)} | ${fmtRounds(r.compared.fosOverOther)} |`,
      `| latency p99, ms | ${fmtMs(r.compared.run.latencyMs.p99)} | ${fmtMs(r.fos.latencyMs.p99)} | | |`,
      `| server CPU per request, µs | ${fmtUs(r.compared.run.serverCpuPerRequestUs)} | ${fmtUs(r.fos.serverCpuPerRequestUs)} | | ${r.fos.serverCpuPerRequestUs === undefined || r.compared.run.serverCpuPerRequestUs === undefined ? "" : fmtRatio(r.fos.serverCpuPerRequestUs / r.compared.run.serverCpuPerRequestUs)} |`
    ])
  ]
  return lines.join("\n")
}


// ---------------------------------------------------------------------------------------------------------------

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/**
 * `fos serve` from another checkout (`BENCH_COMPARE`), started as that checkout's `npm start` starts it, on the same
 * seed, so that the bench measures two builds in the same rounds. It must answer the route with 200; its body may
 * differ (another build, other timestamps).
 */
const startOther = async (dir: string, seedPath: string, headers: Record<string, string>) => {
  const script = (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { scripts: { start: string } }).scripts.start
  const [exec, command, ...args] = script.trim().split(/\s+/)
  if (exec !== "exec" || command !== "node" || args.at(-1) !== "serve") throw new Error(`${dir}: its start script is not "exec node ... serve": ${script}`)
  const name = `fos at ${commit(dir) ?? dir}`
  log(`starting ${name}: exec node ${args.join(" ")}`)
  const started = await startChild(name, [...args, "--store", "memory", "--port", "0", "--host", "127.0.0.1", "--seed", seedPath, "--quiet"], {}, "sandbox: ", dir)
  const url = `${started.value}${path}`
  const answer = await fetch(url, { headers })
  if (answer.status !== 200) throw new Error(`${name} answered ${answer.status} to GET ${url}`)
  await answer.text()
  return { name, child: started.child, url }
}

const tracedName = "fos --otlp"

const main = async () => {
  const tmp = mkdtempSync(join(tmpdir(), "fos-bench-"))
  const children: Array<Child> = []
  try {
    const key = `ck_sandbox_${randomBytes(32).toString("hex")}`
    const seedPath = writeBenchSeed(tmp, key)

    log(`starting fos serve as npm start runs it: exec node ${startArgs.join(" ")}`)
    const fosStart = await startChild(
      "fos serve",
      [...startArgs, "--store", "memory", "--port", "0", "--host", "127.0.0.1", "--seed", seedPath, "--quiet"],
      {},
      "sandbox: "
    )
    const fos = fosStart.child
    children.push(fos)
    const fosUrl = `${fosStart.value}${path}`
    log(`fos listening, pid ${fos.pid}: ${fosUrl}`)
    await sleep(2000)
    const fosIdle = readMemory(fos.pid)

    const headers = { "x-api-key": key }
    const probe = await fetch(fosUrl, { headers })
    const body = await probe.text()
    if (probe.status !== 200) {
      throw new Error(`fos answered ${probe.status} to GET ${fosUrl}:\n${[...probe.headers].map(([k, v]) => `${k}: ${v}`).join("\n")}\n\n${body}\n\nserver output:\n${fos.log}`)
    }
    const skip = new Set(["date", "connection", "keep-alive", "transfer-encoding"])
    const payloadPath = join(tmp, "payload.json")
    writeFileSync(payloadPath, JSON.stringify({ status: probe.status, headers: [...probe.headers].filter(([k]) => !skip.has(k)), body }))

    // A baseline answers what fos answered, checked once, or the comparison would be of different work.
    const startBaseline = async (name: string, args: ReadonlyArray<string>, env: Record<string, string>, prefix: string) => {
      log(`starting the ${name}`)
      const started = await startChild(name, args, { BENCH_PAYLOAD: payloadPath, ...env }, prefix)
      children.push(started.child)
      const url = `${started.value}/sandbox${path}`
      const answer = await fetch(url)
      if (answer.status !== probe.status || (await answer.text()) !== body) throw new Error(`the ${name} does not answer what fos answered`)
      return { child: started.child, url }
    }
    const { child: raw, url: rawUrl } = await startBaseline("raw node:http server", ["bench/raw-server.ts"], {}, "raw: ")
    await sleep(500)
    const rawIdle = readMemory(raw.pid)
    const { child: effect, url: effectUrl } = await startBaseline(
      "Effect route",
      [...v8StartFlags, sourceConditionFlag, "bench/effect-server.ts"],
      { BENCH_PATH: `/sandbox${path}` },
      "effect: "
    )

    // The same server exporting its traces, metrics and logs over OTLP/HTTP to a collector that drops them: what
    // telemetry costs when it is on. (Off is the default, so `fos` above is the cost when it is off.)
    const sink = await startChild("OTLP sink", ["bench/otlp-sink.ts"], {}, "otlp: ")
    children.push(sink.child)
    const tracedStart = await startChild(
      "fos serve --otlp",
      [...startArgs, "--store", "memory", "--port", "0", "--host", "127.0.0.1", "--seed", seedPath, "--quiet", "--otlp", sink.value],
      {},
      "sandbox: "
    )
    const traced = tracedStart.child
    children.push(traced)
    const tracedUrl = `${tracedStart.value}${path}`
    const tracedProbe = await fetch(tracedUrl, { headers: { "x-api-key": key } })
    if (tracedProbe.status !== 200) throw new Error(`fos serve --otlp answered ${tracedProbe.status} to GET ${tracedUrl}`)
    await tracedProbe.text()

    log(`fos: ${fmtInt(settings.amount)} requests for memory, checking every body`)
    const amountRun = await load("fos", fosUrl, fos.pid, { amount: settings.amount }, headers, body)
    const fosAfterAmount = readMemory(fos.pid)

    const other = settings.compare === undefined ? undefined : await startOther(settings.compare, seedPath, headers)
    if (other !== undefined) children.push(other.child)
    const measured = await measureRounds([
      { name: "raw", url: rawUrl, pid: raw.pid, headers: {} },
      { name: "Effect route", url: effectUrl, pid: effect.pid, headers: {} },
      { name: "fos", url: fosUrl, pid: fos.pid, headers },
      { name: tracedName, url: tracedUrl, pid: traced.pid, headers },
      ...(other === undefined ? [] : [{ name: other.name, url: other.url, pid: other.child.pid, headers }])
    ])
    const [rawRun, effectRun, fosRun, tracedRun, otherRun] = measured.runs as [Run, Run, Run, Run, Run | undefined]
    const throughputRounds = roundRatios(measured.rounds, "fos", "raw")
    const effectThroughputRounds = roundRatios(measured.rounds, "Effect route", "raw")
    const fosEnd = readMemory(fos.pid)
    const rawEnd = readMemory(raw.pid)

    log("stopping servers")
    const [fosStop, rawStop, effectStop] = await Promise.all([stopChild(fos), stopChild(raw), stopChild(effect), stopChild(traced), ...(other === undefined ? [] : [stopChild(other.child)])])
    await stopChild(sink.child)
    const exportedBytes = Number(/otlp received: (\d+)/.exec(sink.child.log)?.[1] ?? Number.NaN)

    const ratios = {
      throughput: throughputRounds.median,
      throughputRounds,
      effectThroughputRounds,
      fosOverEffectRounds: roundRatios(measured.rounds, "fos", "Effect route"),
      p50: fosRun.latencyMs.p50 / rawRun.latencyMs.p50,
      p99: fosRun.latencyMs.p99 / rawRun.latencyMs.p99,
      cpuPerRequest: fosRun.serverCpuPerRequestUs === undefined || rawRun.serverCpuPerRequestUs === undefined
        ? undefined
        : fosRun.serverCpuPerRequestUs / rawRun.serverCpuPerRequestUs,
      effectThroughput: effectThroughputRounds.median,
      effectCpuPerRequest: effectRun.serverCpuPerRequestUs === undefined || rawRun.serverCpuPerRequestUs === undefined
        ? undefined
        : effectRun.serverCpuPerRequestUs / rawRun.serverCpuPerRequestUs
    }
    const results: Results = {
      date: new Date().toISOString(),
      node: process.version,
      machine: machine(),
      commit: commit(),
      settings: { ...settings, path },
      raw: rawRun,
      effect: effectRun,
      fos: fosRun,
      rounds: measured.rounds,
      traced: { run: tracedRun, overFos: roundRatios(measured.rounds, tracedName, "fos"), exportedBytes },
      ...(other === undefined || otherRun === undefined
        ? {}
        : { compared: { name: other.name, run: otherRun, throughput: roundRatios(measured.rounds, other.name, "raw"), fosOverOther: roundRatios(measured.rounds, "fos", other.name) } }),
      ratios,
      goals: {
        throughput: { atLeast: 0.5, met: ratios.throughput >= 0.5 },
        p99: { atMost: 2, met: ratios.p99 <= 2 }
      },
      memory: {
        fosIdleRssKiB: fosIdle.rssKiB,
        fosRssAfterAmountKiB: fosAfterAmount.rssKiB,
        fosRssAtEndKiB: fosEnd.rssKiB,
        fosPeakRssKiB: fosEnd.peakKiB,
        rawIdleRssKiB: rawIdle.rssKiB,
        rawRssAtEndKiB: rawEnd.rssKiB,
        amountRun
      },
      shutdown: { fos: fosStop, raw: rawStop, effect: effectStop }
    }

    const table = markdown(results)
    console.log(table)
    const resultsDir = join(root, "bench", "results")
    mkdirSync(resultsDir, { recursive: true })
    writeFileSync(join(resultsDir, "latest.json"), `${JSON.stringify(results, null, 2)}\n`)
    log("wrote bench/results/latest.json")
    if (process.env.BENCH_NO_DOCS !== "1") {
      recordSection("foundation", table)
      log("updated docs/performance.md")
    }

    const timed = [rawRun, effectRun, fosRun, tracedRun, ...(otherRun === undefined ? [] : [otherRun])]
    const bad = [amountRun, ...timed].filter((run) => problems(run) > 0)
    for (const run of bad) {
      log(`${run.target} (${run.url}): ${run.errors} errors, ${run.timeouts} timeouts, ${run.non2xx} non-2xx, ${run.mismatches} unexpected bodies; status codes ${JSON.stringify(run.statusCodes)}`)
    }
    if (fosStop.killed) log(`fos did not exit within ${stopTimeoutMs / 1000} s of SIGTERM and was killed. Its output:\n${fos.log}`)
    const busy = timed.filter((run) => (run.otherCpuPercent ?? 0) > 20)
    if (busy.length > 0) log(`other processes used CPU during the ${busy.map((run) => run.target).join(" and ")} run(s); the numbers are disturbed, run again on a quiet machine`)
    if (bad.length > 0 || fosStop.killed) process.exitCode = 1
  } finally {
    for (const child of children) if (child.exit === undefined) child.proc.kill("SIGKILL")
    rmSync(tmp, { recursive: true, force: true })
  }
}

main().catch((e: unknown) => {
  console.error(`[bench] failed: ${e instanceof Error ? e.message : String(e)}`)
  process.exitCode = 1
})
