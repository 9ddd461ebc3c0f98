/**
 * The storage bench's idempotent write, shared by `bench/store.ts` (its baseline on each store) and
 * `bench/money.ts` (the baseline a settled deposit is compared with): `POST /sandbox/v2/simulate/clock/advance`
 * with `{"seconds":0}` and a fresh Idempotency-Key per request, through autocannon, after a 2 s warm-up.
 */
import { createRequire } from "node:module"

const require = createRequire(import.meta.url)

export interface AutocannonResult {
  readonly requests: { readonly mean: number; readonly total: number }
  readonly non2xx: number
  readonly errors: number
  readonly timeouts: number
  readonly duration: number
  readonly latency: { readonly p50: number; readonly p99: number }
  readonly statusCodeStats: Record<string, { count: number }>
}

export const autocannon = require("autocannon") as (options: object) => Promise<AutocannonResult>

/** Fails with what went wrong when a run had any non-2xx answer, error or timeout. */
export const checkClean = (label: string, result: AutocannonResult): void => {
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(`${label}: ${result.non2xx} non-2xx (${JSON.stringify(result.statusCodeStats)}), ${result.errors} errors, ${result.timeouts} timeouts`)
  }
}

let written = 0

/** Idempotent POSTs per second against a running server, each with its own key; p50 and p99 in ms. */
export const idempotentWrites = async (origin: string, options: { readonly key: string; readonly connections: number; readonly seconds: number }) => {
  const run = (duration: number) =>
    autocannon({
      url: `${origin}/sandbox/v2/simulate/clock/advance`,
      connections: options.connections,
      duration,
      requests: [{
        method: "POST",
        headers: { "x-api-key": options.key, "content-type": "application/json" },
        body: "{\"seconds\":0}",
        setupRequest: (request: { headers: Record<string, string> }) => {
          request.headers = { ...request.headers, "idempotency-key": `bench-${process.pid}-${written++}` }
          return request
        }
      }]
    })
  await run(2)
  const result = await run(options.seconds)
  checkClean(origin, result)
  return { perSecond: result.requests.mean, p50: result.latency.p50, p99: result.latency.p99 }
}
