/**
 * What other requests wait for while one organization's long work runs on a `fos serve` (docs/storage.md, "Long work
 * and other requests"): for test/stall.test.ts and `npm run bench:stall`.
 *
 * The world: a file of about 10,000 rows (bench/fixture.ts's world at 12 times its size, every event delivered),
 * made once on an embedded memory engine and exported. On the server, in acme's sandbox: its import, a restore of it
 * into the empty sandbox, a reset, the restore again, a reset; then a wallet with 40 deposits whose webhook
 * receiver answers 500 to every attempt, and a 3-day advance, which fires their retries and settles (about 650
 * timers). Throughout, from this process, a `GET /healthz` and the rival organization's `GET /v2/customers` (an
 * authenticated list read) are sent every 5 ms whether or not the one before has answered, so that a request arriving
 * during a stall is one sample among many, as a client's would be; each phase's latencies are those of the requests
 * sent while it ran. `quiet` is a second of the same before any of it, with nothing else running.
 */
import { spawn } from "node:child_process"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { createEngine } from "@fos/http"
import { buildFixture } from "../bench/fixture.ts"
import { listeningOrigin, startArgsOf } from "./fosProcess.ts"
import { acmeKey, journeySeed, journeySeedFile, rivalKey } from "./journey.ts"
import { deuSubmission } from "./submissions.ts"

export const phaseNames = ["import", "restore", "reset", "restore after a reset", "reset again", "advance"] as const
export type PhaseName = (typeof phaseNames)[number]

export interface Latencies {
  readonly n: number
  readonly p50: number
  readonly p99: number
  readonly max: number
}

export interface Phase {
  readonly name: PhaseName | "quiet"
  /** How long the work took, as its client waited for it. */
  readonly ms: number
  readonly healthz: Latencies
  readonly otherOrganization: Latencies
}

/** The world's file: about 10,000 rows of acme's sandbox, as an export of an embedded memory engine writes it. */
export const worldFile = async (scale = 12): Promise<{ readonly text: string; readonly rows: number }> => {
  const engine = await createEngine({ store: "memory", clock: { mode: "virtual", start: "2026-03-03T09:00:00.000Z" }, webhookTransport: "memory", seed: journeySeed as never, randomSeed: 5 })
  try {
    await buildFixture(engine, acmeKey, scale)
    const headers = { "x-api-key": acmeKey, "content-type": "application/json" }
    const snapshot = await (await engine.fetch("http://fos/sandbox/v2/simulate/snapshots", { method: "POST", headers, body: "{}" })).json() as { id: string; rows: number }
    const text = await (await engine.fetch(`http://fos/sandbox/v2/simulate/snapshots/${snapshot.id}/export`, { headers })).text()
    return { text, rows: snapshot.rows }
  } finally {
    await engine.close()
  }
}

const quantile = (sorted: ReadonlyArray<number>, q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN

const latencies = (values: ReadonlyArray<number>): Latencies => {
  const sorted = [...values].sort((a, b) => a - b)
  return { n: sorted.length, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), max: sorted.at(-1) ?? Number.NaN }
}

/** Sends `GET url` every `everyMs`, each without waiting for the one before; keeps when each was sent and how long it took. */
const probe = (url: string, headers: Record<string, string>, everyMs = 5) => {
  const samples: Array<readonly [sentAt: number, ms: number]> = []
  const inFlight = new Set<Promise<void>>()
  let stopped = false
  const sending = (async () => {
    while (!stopped) {
      const sentAt = performance.now()
      const request: Promise<void> = fetch(url, { headers }).then(async (response) => {
        await response.arrayBuffer()
        if (response.status !== 200) throw new Error(`GET ${url}: ${response.status}`)
        samples.push([sentAt, performance.now() - sentAt])
      }).finally(() => inFlight.delete(request))
      inFlight.add(request)
      await new Promise((resolve) => setTimeout(resolve, everyMs))
    }
  })()
  return {
    between: (from: number, to: number) => latencies(samples.filter(([at]) => at >= from && at <= to).map(([, ms]) => ms)),
    stop: async () => {
      stopped = true
      await sending
      await Promise.all(inFlight)
    }
  }
}

/**
 * Runs the phases on a `fos serve` of `checkout` (this one by default) on `store` (a new PGlite directory, or
 * `memory`), with the world `file`; answers each phase's figures, `quiet` first.
 */
export const measureStalls = async (options: { readonly store: string; readonly file: string; readonly checkout: string }): Promise<ReadonlyArray<Phase>> => {
  const receiver = createServer((_, response) => {
    response.statusCode = 500
    response.end()
  })
  await new Promise<void>((listening) => receiver.listen(0, "127.0.0.1", listening))
  const child = spawn(process.execPath, [
    ...startArgsOf(options.checkout),
    "--store", options.store, "--port", "0", "--seed", journeySeedFile(), "--random-seed", "36", "--insecure-webhooks", "--quiet"
  ], { cwd: options.checkout, stdio: ["ignore", "pipe", "inherit"] })
  const exited = new Promise((done) => child.on("exit", done))
  try {
    const origin = await listeningOrigin(child)
    let keys = 0
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${origin}/sandbox${path}`, {
        method,
        headers: {
          "x-api-key": acmeKey,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(method === "POST" ? { "idempotency-key": `stall-${++keys}` } : {})
        },
        ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
      })
      const text = await response.text()
      if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`)
      return text === "" ? undefined : JSON.parse(text)
    }
    const upload = async (type: string) => {
      const form = new FormData()
      form.set("type", type)
      form.set("file", new Blob([new TextEncoder().encode(`%PDF-1.7\n% ${type}\n`)], { type: "application/pdf" }), `${type}.pdf`)
      const response = await fetch(`${origin}/sandbox/v2/documents`, { method: "POST", headers: { "x-api-key": acmeKey }, body: form })
      if (response.status !== 201) throw new Error(`upload ${type}: ${response.status} ${await response.text()}`)
      return (await response.json()).id as string
    }
    const healthz = probe(`${origin}/healthz`, {})
    const other = probe(`${origin}/sandbox/v2/customers`, { "x-api-key": rivalKey })
    const windows: Array<{ readonly name: Phase["name"]; readonly from: number; readonly to: number }> = []
    const timed = async <A>(name: Phase["name"], work: () => Promise<A>): Promise<A> => {
      await new Promise((resolve) => setTimeout(resolve, 100))
      const from = performance.now()
      const answer = await work()
      windows.push({ name, from, to: performance.now() })
      return answer
    }
    try {
      await timed("quiet", () => new Promise((resolve) => setTimeout(resolve, 1000)))
      const snapshot = await timed("import", () => call("POST", "/v2/simulate/snapshots/import", options.file))
      await timed("restore", () => call("POST", `/v2/simulate/snapshots/${snapshot.id}/restore`))
      await timed("reset", () => call("POST", "/v2/simulate/reset"))
      await timed("restore after a reset", () => call("POST", `/v2/simulate/snapshots/${snapshot.id}/restore`))
      await timed("reset again", () => call("POST", "/v2/simulate/reset"))
      // As test/advance-crash.test.ts builds it: every delivery refused, so each event's retries come due on the clock.
      await call("POST", "/v2/webhooks/endpoints", { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks` })
      const documents = { register: await upload("certificate_of_incorporation"), articles: await upload("articles_of_association"), passport: await upload("passport") }
      const onboarding = await call("POST", "/v2/onboarding", deuSubmission(documents))
      const { customerId } = await call("POST", `/v2/simulate/applications/${onboarding.applicationId}/decision`, { outcome: "approved" })
      const application = await call("POST", `/v2/customers/${customerId}/features`, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } })
      await call("POST", `/v2/simulate/applications/${application.applicationId}/decision`, { outcome: "approved" })
      const wallet = await call("POST", `/v2/customers/${customerId}/wallets`, { chain: "base" })
      for (let i = 0; i < 40; i++) {
        await call("POST", "/v2/simulate/deposits", { destination: { type: "deposit_address", address: wallet.address }, assetAmount: { code: "USDC", amount: `${i + 1}.00`, chain: "base" } })
      }
      const report = await timed("advance", () => call("POST", "/v2/simulate/clock/advance", { seconds: 3 * 86_400 }))
      if (report.timersFired.total < 500) throw new Error(`the advance fired ${report.timersFired.total} timers, not the hundreds it should`)
    } finally {
      await healthz.stop()
      await other.stop()
    }
    // Once every request has answered: those sent while a phase ran and answered after it are its own too.
    return windows.map(({ name, from, to }) => ({ name, ms: to - from, healthz: healthz.between(from, to), otherOrganization: other.between(from, to) }))
  } finally {
    child.kill("SIGTERM")
    await exited
    receiver.close()
  }
}

/** `phases` as the lines of a table. */
export const phaseLines = (phases: ReadonlyArray<Phase>): Array<string> =>
  phases.map((p) =>
    `${p.name.padEnd(22)} ${p.ms.toFixed(0).padStart(6)} ms | /healthz n=${p.healthz.n} p50 ${p.healthz.p50.toFixed(1)} p99 ${p.healthz.p99.toFixed(1)} ms | other organization n=${p.otherOrganization.n} p50 ${p.otherOrganization.p50.toFixed(1)} p99 ${p.otherOrganization.p99.toFixed(1)} ms`
  )
