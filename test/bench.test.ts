/**
 * The arithmetic behind `npm run bench`'s tables (bench/rounds.ts): what the recorded ratios and percentiles are
 * made of, checked on runs whose answers are known, since the bench itself only ever meets a noisy machine.
 */
import { describe, expect, it } from "vitest"
import { combine, LatencyRecorder, median, roundOrder, roundRatios, type Run } from "../bench/rounds.ts"

/** A run of `rps` req/s over `seconds`, with the given CPU times and problems; latencies go to the recorder. */
const run = (overrides: Partial<Run> & { readonly rps: number; readonly seconds: number }): Run => {
  const { rps, seconds, ...rest } = overrides
  const completed2xx = rps * seconds
  return {
    target: "fos",
    url: "http://127.0.0.1:1/sandbox/v2/portal/users/me",
    connections: 32,
    durationSeconds: seconds,
    requestsPerSecond: { mean: rps, stddev: 0, overall: rps },
    wallMs: seconds * 1000,
    serverCpuMs: seconds * 900,
    loadGeneratorCpuMs: seconds * 500,
    otherCpuMs: seconds * 10,
    completed2xx,
    latencyMs: { count: 0, mean: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0 },
    autocannonLatencyMs: { mean: 2, p50: 2, p99: 5, max: 9 },
    errors: 0,
    timeouts: 0,
    non2xx: 0,
    mismatches: 0,
    resets: 0,
    statusCodes: { "200": completed2xx },
    serverCpuPercent: 90,
    serverCpuPerRequestUs: (900 * 1000) / rps,
    loadGeneratorCpuPercent: 50,
    otherCpuPercent: 1,
    ...rest
  }
}

describe("median", () => {
  it("is the middle value of an odd count and the mean of the middle two of an even one, whatever the order", () => {
    expect(median([3, 1, 2])).toBe(2)
    expect(median([0.49, 0.73, 0.55, 0.62, 0.53])).toBe(0.55)
    expect(median([4, 1, 3, 2])).toBe(2.5)
    expect(median([7])).toBe(7)
  })
})

describe("roundOrder", () => {
  it("starts each round with the next target, so that every target runs first once in as many rounds as targets", () => {
    expect([0, 1, 2, 3].map((round) => roundOrder(round, 3))).toEqual([[0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 1, 2]])
    for (let count = 1; count <= 4; count++) {
      const firsts = Array.from({ length: count }, (_, round) => roundOrder(round, count)[0])
      expect(new Set(firsts).size).toBe(count)
      for (let round = 0; round < count; round++) expect([...roundOrder(round, count)].sort()).toEqual(Array.from({ length: count }, (_, i) => i))
    }
  })
})

describe("roundRatios", () => {
  it("divides within each round, not the totals: a slow round of both targets does not move the ratio", () => {
    const rounds = [
      { fos: 10_000, raw: 20_000 },
      { fos: 5_000, raw: 8_000 }, // the machine slowed down for this round
      { fos: 12_000, raw: 20_000 }
    ]
    const ratios = roundRatios(rounds, "fos", "raw")
    expect(ratios.each).toEqual([0.5, 0.625, 0.6])
    expect(ratios.median).toBe(0.6)
    expect(ratios.min).toBe(0.5)
    expect(ratios.max).toBe(0.625)
    // The ratio of the totals would be 27,000 / 48,000 = 0.5625: not what is recorded.
  })
})

describe("LatencyRecorder", () => {
  it("gives the nearest-rank percentiles of every value pushed, past its first buffer's size", () => {
    const recorder = new LatencyRecorder()
    const count = 100_000 // more than the 65,536 the first buffer holds
    // Pushed out of order: 1 to 100,000 ms, odd values first.
    for (let v = 1; v <= count; v += 2) recorder.push(v)
    for (let v = 2; v <= count; v += 2) recorder.push(v)
    expect(recorder.summary()).toEqual({ count, mean: (count + 1) / 2, p50: 50_000, p90: 90_000, p99: 99_000, p999: 99_900, max: count })
  })

  it("sorts numerically (10 after 9) and reports zeros when empty", () => {
    const recorder = new LatencyRecorder()
    for (const v of [10, 9, 100, 1.5]) recorder.push(v)
    expect(recorder.summary()).toMatchObject({ count: 4, p50: 9, max: 100 })
    expect(new LatencyRecorder().summary()).toEqual({ count: 0, mean: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0 })
  })
})

describe("combine", () => {
  it("adds a target's rounds into one run: throughput over the whole wall time, CPU per request over every answer", () => {
    const latencies = new LatencyRecorder()
    for (const v of [1, 2, 3, 4]) latencies.push(v)
    const combined = combine(
      [
        run({ rps: 10_000, seconds: 3, serverCpuMs: 2_700, autocannonLatencyMs: { mean: 2, p50: 2, p99: 5, max: 9 } }),
        run({ rps: 20_000, seconds: 3, serverCpuMs: 2_400, non2xx: 2, statusCodes: { "200": 60_000, "429": 2 }, autocannonLatencyMs: { mean: 1, p50: 1, p99: 7, max: 8 } })
      ],
      latencies
    )
    expect(combined.completed2xx).toBe(90_000)
    expect(combined.wallMs).toBe(6_000)
    expect(combined.durationSeconds).toBe(6)
    expect(combined.requestsPerSecond.mean).toBe(15_000)
    expect(combined.requestsPerSecond.overall).toBe(15_000)
    // Across the rounds' own means (10,000 and 20,000).
    expect(combined.requestsPerSecond.stddev).toBe(5_000)
    expect(combined.serverCpuMs).toBe(5_100)
    expect(combined.serverCpuPercent).toBe(85)
    expect(combined.serverCpuPerRequestUs).toBeCloseTo((5_100 * 1000) / 90_000, 10)
    expect(combined.non2xx).toBe(2)
    expect(combined.statusCodes).toEqual({ "200": 90_000, "429": 2 })
    // autocannon's mean weighted by answers; its p99 and max the worst round's.
    expect(combined.autocannonLatencyMs).toEqual({ mean: (2 * 30_000 + 1 * 60_000) / 90_000, p50: 1.5, p99: 7, max: 9 })
    // Percentiles over every response of every round, not an average of the rounds'.
    expect(combined.latencyMs).toMatchObject({ count: 4, p50: 2, max: 4 })
  })

  it("leaves a CPU figure unknown when any round could not read it", () => {
    const combined = combine([run({ rps: 1_000, seconds: 3 }), run({ rps: 1_000, seconds: 3, serverCpuMs: undefined, otherCpuMs: undefined })], new LatencyRecorder())
    expect(combined.serverCpuMs).toBeUndefined()
    expect(combined.serverCpuPercent).toBeUndefined()
    expect(combined.serverCpuPerRequestUs).toBeUndefined()
    expect(combined.otherCpuPercent).toBeUndefined()
    expect(combined.loadGeneratorCpuPercent).toBe(50)
  })
})
