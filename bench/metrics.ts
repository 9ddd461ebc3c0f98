/**
 * What the metrics cost a request (docs/performance.md, "Telemetry"): the edge's work for one answered request's
 * metrics (`Metrics.recordRequestUnsafe` with the duration's two monotonic reads), set beside the whole request it
 * belongs to, `GET /sandbox/v2/portal/users/me` through `engine.fetch`, in alternating rounds of the same process,
 * so a busy machine slows both alike. Prints the rounds and the medians; asserts nothing.
 */
import { Metrics, RealClock } from "@fos/core"
import { createEngine } from "@fos/http"
import { Context, Metric } from "effect"

const key = `ck_sandbox_${"ab".repeat(32)}`
const rounds = Number(process.env.BENCH_METRICS_ROUNDS ?? 8)
const requestsPerRound = Number(process.env.BENCH_METRICS_REQUESTS ?? 2_000)
const recordsPerRound = 200_000
const seed = {
  organizations: [{
    id: "org_bench",
    name: "Bench",
    status: "active" as const,
    rateLimit: { sustainedPerSecond: 1e9, burst: 1e9 },
    users: [{ id: "usr_bench", email: "bench@example.com", role: "admin" as const }],
    apiKeys: [{ key, access: "read_write" as const, createdBy: "usr_bench" }]
  }]
}

const engine = await createEngine({ seed })
const clock = Context.get(engine.context, RealClock.RealClock)
const registry = Context.make(Metric.MetricRegistry, new Map())

/** Microseconds per request, over `n` requests one after another. */
const requestRound = async (n: number) => {
  const start = performance.now()
  for (let i = 0; i < n; i++) {
    const response = await engine.fetch(new Request("http://fos/sandbox/v2/portal/users/me", { headers: { "x-api-key": key } }))
    await response.text()
  }
  return ((performance.now() - start) * 1000) / n
}

/** Nanoseconds per request's metrics, over `n` records. */
const recordRound = (n: number) => {
  const start = performance.now()
  for (let i = 0; i < n; i++) {
    const startedNs = clock.monotonicTimeNanosUnsafe()
    Metrics.recordRequestUnsafe(
      registry,
      "GET",
      "/sandbox/v2/portal/users/me",
      "portal.me",
      200,
      undefined,
      Number(clock.monotonicTimeNanosUnsafe() - startedNs) / 1e9
    )
  }
  return ((performance.now() - start) * 1e6) / n
}

await requestRound(3_000)
recordRound(recordsPerRound)
const requestUs: Array<number> = []
const recordNs: Array<number> = []
for (let r = 0; r < rounds; r++) {
  requestUs.push(await requestRound(requestsPerRound))
  recordNs.push(recordRound(recordsPerRound))
}
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
console.log(`request, µs: ${requestUs.map((x) => x.toFixed(1)).join(", ")} (median ${median(requestUs).toFixed(1)})`)
console.log(`its metrics, ns: ${recordNs.map((x) => x.toFixed(0)).join(", ")} (median ${median(recordNs).toFixed(0)})`)
console.log(`metrics ÷ request, medians: ${((median(recordNs) / 1000 / median(requestUs)) * 100).toFixed(2)} %`)
await engine.close()
