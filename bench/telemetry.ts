/**
 * `npm run bench:telemetry`: what fos's spans cost on the foundation bench's request (`GET
 * /sandbox/v2/portal/users/me` with an API key) and on a write (`POST /sandbox/v2/quotes`, which opens a store
 * transaction), in process through `engine.fetch`, as bench/pipeline.ts measures the pipeline.
 *
 * Three engines answer in the same rounds, the first of them moving on by one each round so that a machine's drift
 * falls on all three alike: `before`, the engine of another checkout (BENCH_COMPARE, the build before a change; left
 * out when not given), `off`, this checkout's with no telemetry, and `on`, this checkout's exporting its traces,
 * metrics and logs as `fos serve --otlp` does (`telemetry.otlp`, sent by node:http) to a sink on 127.0.0.1, in
 * this process, that reads and drops what it is sent. Each
 * figure is the median over the rounds of microseconds per request; the ratios are the medians of each round's
 * ratio. Results go to stdout and to docs/performance.md between `<!-- bench:telemetry:start -->` and
 * `<!-- bench:telemetry:end -->` (BENCH_NO_DOCS=1 leaves the docs alone). Nothing here asserts a time.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { createEngine } from "@fos/http"
import { nodeOtlpClient } from "../adapters/serve/src/OtlpClient.ts"
import { measuredAt, recordSection } from "./record.ts"

const key = `ck_sandbox_${"ab".repeat(32)}`
const rounds = Number(process.env.BENCH_TELEMETRY_ROUNDS ?? 7)
const perRound = Number(process.env.BENCH_TELEMETRY_REQUESTS ?? 10_000)
const compare = process.env.BENCH_COMPARE === undefined || process.env.BENCH_COMPARE === "" ? undefined : resolve(process.env.BENCH_COMPARE)
const log = (line: string) => console.error(`[bench:telemetry] ${line}`)

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

type Fetch = (request: Request) => Promise<Response>

const read = (fetch: Fetch) => async () => {
  const response = await fetch(new Request("http://fos/sandbox/v2/portal/users/me", { headers: { "x-api-key": key } }))
  await response.text()
  if (response.status !== 200) throw new Error(`users/me: ${response.status}`)
}

const write = (fetch: Fetch) => {
  return async () => {
    const response = await fetch(new Request("http://fos/sandbox/v2/quotes", {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ source: { asset: "USD" }, target: { asset: "USDC", chain: "base", country: "DEU" }, amount: "100", lockSide: "source", rail: "ach" })
    }))
    const body = await response.text()
    if (response.status !== 201) throw new Error(`quotes: ${response.status} ${body.slice(0, 200)}`)
  }
}

const timeOf = async (once: () => Promise<void>, count: number) => {
  const start = performance.now()
  for (let i = 0; i < count; i++) await once()
  return ((performance.now() - start) * 1000) / count
}

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const main = async () => {
  // The OTLP sink: reads every export and drops it.
  let exported = 0
  const sink = createServer((request, response) => {
    request.on("data", (chunk: Buffer) => (exported += chunk.length)).on("end", () => response.writeHead(200, { "content-type": "application/json" }).end("{}"))
  })
  await new Promise<void>((done) => sink.listen(0, "127.0.0.1", done))
  const url = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`
  const targets: Array<{ readonly name: string; readonly fetch: Fetch; readonly close: () => Promise<void> }> = []
  if (compare !== undefined) {
    const before = await import(pathToFileURL(resolve(compare, "packages/http/src/index.ts")).href) as { createEngine: typeof createEngine }
    const engine = await before.createEngine({ seed })
    targets.push({ name: "before", fetch: engine.fetch, close: () => engine.close() })
  }
  const off = await createEngine({ seed })
  targets.push({ name: "off", fetch: off.fetch, close: () => off.close() })
  const on = await createEngine({ seed, telemetry: { otlp: url, otlpClient: nodeOtlpClient } })
  targets.push({ name: "on", fetch: on.fetch, close: () => on.close() })

  const kinds = [{ name: "GET users/me", make: read }, { name: "POST quotes", make: write }]
  const results: Record<string, Record<string, Array<number>>> = {}
  for (const kind of kinds) {
    const runs = targets.map((t) => ({ target: t.name, once: kind.make(t.fetch) }))
    for (const r of runs) await timeOf(r.once, 2_000)
    const perTarget: Record<string, Array<number>> = Object.fromEntries(targets.map((t) => [t.name, []]))
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < runs.length; i++) {
        const r = runs[(round + i) % runs.length]!
        perTarget[r.target]!.push(await timeOf(r.once, perRound))
      }
      log(`${kind.name}, round ${round + 1}/${rounds}: ${targets.map((t) => `${t.name} ${perTarget[t.name]!.at(-1)!.toFixed(1)} µs`).join(", ")}`)
    }
    results[kind.name] = perTarget
  }
  for (const t of targets) await t.close()
  sink.close()

  const ratio = (kind: string, a: string, b: string) => median(results[kind]![a]!.map((v, i) => v / results[kind]![b]![i]!))
  const pct = (r: number) => `${r >= 1 ? "+" : ""}${((r - 1) * 100).toFixed(1)} %`
  const header = `| request | ${targets.map((t) => `${t.name} (µs)`).join(" | ")} |${compare === undefined ? "" : " off vs before |"} on vs off |`
  const rule = `|---|${targets.map(() => "---|").join("")}${compare === undefined ? "" : "---|"}---|`
  const rows = kinds.map((k) => {
    const cells = targets.map((t) => median(results[k.name]![t.name]!).toFixed(1))
    return `| ${k.name} | ${cells.join(" | ")} |${compare === undefined ? "" : ` ${pct(ratio(k.name, "off", "before"))} |`} ${pct(ratio(k.name, "on", "off"))} |`
  })
  const table = [
    `Measured at ${measuredAt()}, Node ${process.version}; median of ${rounds} alternating rounds of ${perRound.toLocaleString("en")} requests per engine, in process. The exporter sent ${(exported / 1e6).toFixed(1)} MB of OTLP JSON.`,
    "",
    header,
    rule,
    ...rows
  ].join("\n")
  console.log(table)
  if (process.env.BENCH_NO_DOCS !== "1") recordSection("telemetry", table)
}

void main().then(() => process.exit(0), (e: unknown) => {
  console.error(e)
  process.exit(1)
})
