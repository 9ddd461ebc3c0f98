/**
 * The arithmetic of `npm run bench`'s rounds (bench/run.ts): a run's latencies, a target's runs combined into one,
 * the order targets run in each round, and the median of the rounds' throughput ratios. Kept apart from the
 * script, which starts servers and load, so that test/bench.test.ts can check it.
 */

/** Every 2xx response time of a run, in milliseconds, at full precision (autocannon's histogram keeps whole ms). */
export class LatencyRecorder {
  private values = new Float64Array(1 << 16)
  private n = 0
  push(ms: number) {
    if (this.n === this.values.length) {
      const bigger = new Float64Array(this.values.length * 2)
      bigger.set(this.values)
      this.values = bigger
    }
    this.values[this.n++] = ms
  }
  summary() {
    const sorted = this.values.slice(0, this.n).sort()
    // Nearest rank, in whole per-mille so that the rank is exact: (99.9 / 100) * 100,000 is 99,900.00000000001 in
    // floating point, whose ceiling is one rank too far.
    const at = (perMille: number) => (this.n === 0 ? 0 : sorted[Math.min(this.n - 1, Math.max(0, Math.ceil((perMille * this.n) / 1000) - 1))]!)
    let sum = 0
    for (let i = 0; i < this.n; i++) sum += sorted[i]!
    return {
      count: this.n,
      mean: this.n === 0 ? 0 : sum / this.n,
      p50: at(500),
      p90: at(900),
      p99: at(990),
      p999: at(999),
      max: this.n === 0 ? 0 : sorted[this.n - 1]!
    }
  }
}

export interface Run {
  readonly target: string
  readonly url: string
  readonly connections: number
  readonly durationSeconds: number
  /**
   * `mean` and `stddev` are autocannon's, over the run's 1 s samples; `overall` is 2xx responses over wall time. For
   * a target's rounds together (`combine`), `mean` is the overall figure and `stddev` is across the rounds.
   */
  readonly requestsPerSecond: { readonly mean: number; readonly stddev: number; readonly overall: number }
  /** Wall time of the run, and the CPU times the percentages below are made of, in milliseconds. */
  readonly wallMs: number
  readonly serverCpuMs: number | undefined
  readonly loadGeneratorCpuMs: number
  readonly otherCpuMs: number | undefined
  readonly completed2xx: number
  readonly latencyMs: ReturnType<LatencyRecorder["summary"]>
  /** autocannon's own histogram, whole milliseconds. */
  readonly autocannonLatencyMs: { readonly mean: number; readonly p50: number; readonly p99: number; readonly max: number }
  readonly errors: number
  readonly timeouts: number
  readonly non2xx: number
  readonly mismatches: number
  readonly resets: number
  readonly statusCodes: Record<string, number>
  /** CPU time of the server process over the run, as a percentage of one core. */
  readonly serverCpuPercent: number | undefined
  /**
   * CPU time of the server process per 2xx response, microseconds. Less sensitive than throughput to a machine
   * shared with other work, since it counts the server's own time only.
   */
  readonly serverCpuPerRequestUs: number | undefined
  /** CPU time of this process (the load generator) over the run, as a percentage of one core. */
  readonly loadGeneratorCpuPercent: number
  /**
   * CPU time of everything else on the machine over the run, as a percentage of one core: the busy time of all
   * CPUs minus the server and the load generator. Well above a few percent means the numbers are disturbed.
   */
  readonly otherCpuPercent: number | undefined
}

const sum = (values: ReadonlyArray<number>) => values.reduce((a, b) => a + b, 0)
const sumOrUndefined = (values: ReadonlyArray<number | undefined>) => values.some((v) => v === undefined) ? undefined : sum(values as ReadonlyArray<number>)

/** The middle value (the mean of the middle two for an even count). */
export const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** A target's timed runs as one: totals over the rounds, percentiles over every response (`latencies`). */
export const combine = (runs: ReadonlyArray<Run>, latencies: LatencyRecorder): Run => {
  const first = runs[0]!
  const wallMs = sum(runs.map((r) => r.wallMs))
  const completed2xx = sum(runs.map((r) => r.completed2xx))
  const serverCpuMs = sumOrUndefined(runs.map((r) => r.serverCpuMs))
  const loadGeneratorCpuMs = sum(runs.map((r) => r.loadGeneratorCpuMs))
  const otherCpuMs = sumOrUndefined(runs.map((r) => r.otherCpuMs))
  const perRound = runs.map((r) => r.requestsPerSecond.mean)
  const meanOfRounds = sum(perRound) / perRound.length
  const statusCodes: Record<string, number> = {}
  for (const run of runs) for (const [code, count] of Object.entries(run.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + count
  return {
    target: first.target,
    url: first.url,
    connections: first.connections,
    durationSeconds: sum(runs.map((r) => r.durationSeconds)),
    requestsPerSecond: {
      mean: completed2xx / (wallMs / 1000),
      stddev: Math.sqrt(sum(perRound.map((v) => (v - meanOfRounds) ** 2)) / perRound.length),
      overall: completed2xx / (wallMs / 1000)
    },
    completed2xx,
    wallMs,
    serverCpuMs,
    loadGeneratorCpuMs,
    otherCpuMs,
    latencyMs: latencies.summary(),
    autocannonLatencyMs: {
      mean: sum(runs.map((r) => r.autocannonLatencyMs.mean * r.completed2xx)) / Math.max(1, completed2xx),
      p50: median(runs.map((r) => r.autocannonLatencyMs.p50)),
      p99: Math.max(...runs.map((r) => r.autocannonLatencyMs.p99)),
      max: Math.max(...runs.map((r) => r.autocannonLatencyMs.max))
    },
    errors: sum(runs.map((r) => r.errors)),
    timeouts: sum(runs.map((r) => r.timeouts)),
    non2xx: sum(runs.map((r) => r.non2xx)),
    mismatches: sum(runs.map((r) => r.mismatches)),
    resets: sum(runs.map((r) => r.resets)),
    statusCodes,
    serverCpuPercent: serverCpuMs === undefined ? undefined : (serverCpuMs / wallMs) * 100,
    serverCpuPerRequestUs: serverCpuMs === undefined || completed2xx === 0 ? undefined : (serverCpuMs * 1000) / completed2xx,
    loadGeneratorCpuPercent: (loadGeneratorCpuMs / wallMs) * 100,
    otherCpuPercent: otherCpuMs === undefined ? undefined : (otherCpuMs / wallMs) * 100
  }
}

/** Each round's throughput of every target, in req/s, by target name. */
export type Round = Record<string, number>

/**
 * The order the targets run in round `round` (indices into the list of `count` targets): round `i` starts with
 * target `i` (modulo the count), so no target always runs first, right after another's load.
 */
export const roundOrder = (round: number, count: number): ReadonlyArray<number> =>
  Array.from({ length: count }, (_, k) => (round + k) % count)

/** The median over the rounds of `a`'s throughput over `b`'s, with the lowest and highest. */
export const roundRatios = (rounds: ReadonlyArray<Round>, a: string, b: string) => {
  const each = rounds.map((round) => round[a]! / round[b]!)
  return { median: median(each), min: Math.min(...each), max: Math.max(...each), each }
}
