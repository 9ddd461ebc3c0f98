/**
 * `npm run bench:webhooks` (also part of `npm run bench`): webhook delivery speed.
 *
 * 1. Deliveries per second to a local receiver: `fos serve` (memory store, virtual clock, --insecure-webhooks)
 *    with 20 endpoints pointing at a bare node:http receiver on loopback that answers 204; events are emitted
 *    through `POST /sandbox/v2/simulate/events` by 8 concurrent clients for 10 seconds. Under the virtual clock each
 *    emit answers once its deliveries are made, so the receiver's count over the wall time is the delivery rate.
 *    Goal: at least 500 per second.
 * 2. 10,000 endpoints that always fail, in process (`createEngine`, memory store, a transport that answers 500):
 *    one event fans out to all of them and makes their first attempts; then one 2-hour clock advance takes every
 *    delivery through attempts 2 to 5. Goal: the advance under 10 seconds.
 *
 * 3. What a page of `GET /v2/webhooks/deliveries` costs with a selective filter against no filter, in process
 *    (`createEngine`) over 100,000 deliveries on the memory store and 10,000 on PostgreSQL (a fresh database of
 *    DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test): the first page and a page deep in the list, of
 *    20, for no filter, one endpoint of 10, and one endpoint, status and event type together (about 1 delivery in
 *    600). Each filter combination walks an order of its own, so the three should cost about the same; a list that
 *    filtered after cutting the page would read the whole table for the rare filter.
 *
 * Results go to stdout and to the section of docs/performance.md between `<!-- bench:webhooks:start -->` and
 * `<!-- bench:webhooks:end -->` (BENCH_NO_DOCS=1 leaves the docs alone). Nothing here asserts a time.
 */
import { once } from "node:events"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Deliveries, Endpoints, Store, Transport } from "@fos/core"
import { createEngine } from "@fos/http"
import { layerPostgresStore } from "@fos/sql"
import { Effect, type Layer } from "effect"
import { freshDatabase } from "../adapters/sql/test/databases.ts"
import { startFos } from "../test/fosProcess.ts"
import { measuredAt, recordSection } from "./record.ts"

const key = `ck_sandbox_${"be".repeat(32)}`
const seconds = Number(process.env.BENCH_WEBHOOK_DURATION ?? 10)
const failingEndpoints = Number(process.env.BENCH_WEBHOOK_ENDPOINTS ?? 10_000)
const log = (line: string) => console.error(`[bench:webhooks] ${line}`)

const seed = {
  organizations: [{
    id: "org_hookbench",
    name: "Hook bench",
    status: "active" as const,
    rateLimit: { sustainedPerSecond: 1e9, burst: 1e9 },
    users: [{ id: "usr_hookbench", email: "hooks@bench.test", role: "admin" as const }],
    apiKeys: [{ key, access: "read_write" as const, createdBy: "usr_hookbench" }]
  }]
}

const deliveryRate = async () => {
  let received = 0
  const receiver = createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      received++
      res.writeHead(204).end()
    })
  })
  receiver.listen(0, "127.0.0.1")
  await once(receiver, "listening")
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`

  const tmp = mkdtempSync(join(tmpdir(), "fos-bench-hooks-"))
  const seedPath = join(tmp, "seed.json")
  writeFileSync(seedPath, JSON.stringify(seed))
  const server = await startFos(["--store", "memory", "--port", "0", "--clock", "virtual", "--insecure-webhooks", "--seed", seedPath, "--quiet"])
  try {
    const origin = server.origin
    const call = (path: string, body: unknown) =>
      fetch(`${origin}/sandbox${path}`, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify(body) })
    const endpoints = 20
    for (let i = 0; i < endpoints; i++) {
      const r = await call("/v2/webhooks/endpoints", { url })
      if (r.status !== 201) throw new Error(`endpoint: ${r.status} ${await r.text()}`)
    }
    const emitFor = async (ms: number) => {
      const until = performance.now() + ms
      await Promise.all(Array.from({ length: 8 }, async () => {
        while (performance.now() < until) {
          const r = await call("/v2/simulate/events", { type: "customer.created" })
          if (r.status !== 201) throw new Error(`emit: ${r.status} ${await r.text()}`)
        }
      }))
    }
    log("deliveries to a local receiver: warming up")
    await emitFor(2_000)
    const before = received
    const start = performance.now()
    log(`deliveries to a local receiver: ${seconds} s`)
    await emitFor(seconds * 1000)
    const elapsed = (performance.now() - start) / 1000
    return { perSecond: (received - before) / elapsed, endpoints }
  } finally {
    await server.stop()
    receiver.close()
    rmSync(tmp, { recursive: true, force: true })
  }
}

const failingTimetable = async () => {
  let attempts = 0
  const engine = await createEngine({
    seed,
    clock: { mode: "virtual" },
    webhookTransport: Transport.callback(() => {
      attempts++
      return { status: 500 }
    })
  })
  try {
    const post = (path: string, body: unknown) =>
      engine.fetch(new Request(`http://fos/sandbox${path}`, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify(body) }))
    log(`${failingEndpoints} failing endpoints: creating`)
    for (let i = 0; i < failingEndpoints; i++) {
      const r = await post("/v2/webhooks/endpoints", { url: `https://failing-${i}.example.com/hook` })
      if (r.status !== 201) throw new Error(`endpoint: ${r.status}`)
      await r.text()
    }
    const fanoutStart = performance.now()
    const emitted = await post("/v2/simulate/events", { type: "order.failed" })
    if (emitted.status !== 201) throw new Error(`emit: ${emitted.status}`)
    const fanoutSeconds = (performance.now() - fanoutStart) / 1000
    const firstAttempts = attempts
    log(`${failingEndpoints} failing endpoints: one 2-hour advance`)
    const start = performance.now()
    await engine.clock.advance(2 * 60 * 60 * 1000)
    const advanceSeconds = (performance.now() - start) / 1000
    const failed = await engine.run(Effect.flatMap(Store.Store, (store) =>
      store.count(Deliveries.WebhookDeliveries, "byStatus", "org_hookbench/sandbox/failed")))
    const endpoints = await engine.run(Effect.flatMap(Store.Store, (store) => store.count(Endpoints.WebhookEndpoints, "byScope", "org_hookbench/sandbox")))
    return { endpoints, fanoutSeconds, firstAttempts, attempts, advanceSeconds, failed }
  } finally {
    await engine.close()
  }
}

/** The PostgreSQL the list measure creates its database in. */
const adminUrl = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test"
const pageRepeats = Number(process.env.BENCH_LIST_REPEATS ?? 200)

/** The filters the list measure compares, with the query each sends. */
const listFilters = [
  ["no filter", ""],
  ["endpointId (1 endpoint of 10)", "endpointId=wep_bench3"],
  ["endpointId + status=failed + eventType", "endpointId=wep_bench3&status=failed&eventType=order.failed"]
] as const
const benchTypes = ["customer.created", "order.created", "order.failed", "payout.completed", "application.approved"]

/** Mean µs per page of 20 for each filter, first page and a deep one, over `rows` deliveries in `store`. */
const listPages = async (store: "memory" | Layer.Layer<Store.Store, unknown>, rows: number) => {
  const engine = await createEngine({ seed, clock: { mode: "virtual" }, store })
  try {
    const delivery = (i: number): Deliveries.WebhookDelivery => ({
      id: `wdl_bench${i.toString().padStart(7, "0")}`,
      organizationId: "org_hookbench",
      environment: "sandbox",
      endpointId: `wep_bench${Math.floor(i / 3) % 10}`,
      eventId: `evt_bench${i}`,
      eventType: benchTypes[Math.floor(i / 7) % 5]!,
      status: (i * 31) % 53 < 4 ? "failed" : "succeeded",
      run: 1,
      attemptsInRun: 1,
      body: "{}",
      timerId: undefined,
      nextAttemptAt: null,
      lastAttemptAt: null,
      createdAt: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
      updatedAt: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString()
    })
    for (let from = 0; from < rows; from += 500) {
      await engine.run(Effect.flatMap(Store.Store, (s) =>
        s.transaction(Effect.forEach(Array.from({ length: Math.min(500, rows - from) }, (_, k) => delivery(from + k)), (d) =>
          Effect.orDie(s.insert(Deliveries.WebhookDeliveries, d)), { discard: true }))))
    }
    const get = async (query: string) => {
      const r = await engine.fetch(new Request(`http://fos/sandbox/v2/webhooks/deliveries?${query}`, { headers: { "x-api-key": key } }))
      if (r.status !== 200) throw new Error(`list: ${r.status} ${await r.text()}`)
      return (await r.json()) as { data: Array<unknown>; meta: { nextCursor: string | null; total: number } }
    }
    const time = async (query: string) => {
      for (let i = 0; i < 20; i++) await get(query)
      const start = performance.now()
      for (let i = 0; i < pageRepeats; i++) await get(query)
      return ((performance.now() - start) * 1000) / pageRepeats
    }
    const results = []
    for (const [label, filter] of listFilters) {
      const first = await get(`${filter}&limit=20`)
      // A cursor about half way down the list: walk pages of 100 there.
      let cursor = first.meta.nextCursor
      for (let walked = 20; cursor !== null && walked < first.meta.total / 2; walked += 100) {
        cursor = (await get(`${filter}&limit=100&cursor=${cursor}`)).meta.nextCursor
      }
      results.push({
        label,
        total: first.meta.total,
        firstUs: await time(`${filter}&limit=20`),
        deepUs: cursor === null ? undefined : await time(`${filter}&limit=20&cursor=${cursor}`)
      })
    }
    return results
  } finally {
    await engine.close()
  }
}

const main = async () => {
  const rate = await deliveryRate()
  const failing = await failingTimetable()
  log("list pages: deliveries on the memory store")
  const memoryPages = await listPages("memory", Number(process.env.BENCH_LIST_ROWS ?? 100_000))
  const database = await freshDatabase("listbench", adminUrl)
  let postgresPages: Awaited<ReturnType<typeof listPages>>
  try {
    log("list pages: deliveries on PostgreSQL")
    postgresPages = await listPages(layerPostgresStore(database.url), Number(process.env.BENCH_LIST_ROWS_POSTGRES ?? 10_000))
  } finally {
    await database.drop()
  }
  const pageRows = (store: string, results: typeof memoryPages) =>
    results.map((r) =>
      `| ${store} | ${r.label} | ${r.total.toLocaleString("en")} | ${Math.round(r.firstUs)} | ${r.deepUs === undefined ? "" : Math.round(r.deepUs)} |`)
  const table = [
    `Measured at ${measuredAt()}, Node ${process.version}.`,
    "",
    "| | result | goal |",
    "|---|---:|---|",
    `| deliveries per second to a local receiver (fos serve, ${rate.endpoints} endpoints, 8 emitting clients) | ${Math.round(rate.perSecond).toLocaleString("en")} | ≥ 500: ${rate.perSecond >= 500 ? "met" : "**missed**"} |`,
    `| ${failing.endpoints.toLocaleString("en")} failing endpoints: fan-out and first attempts (in process) | ${failing.fanoutSeconds.toFixed(2)} s, ${failing.firstAttempts.toLocaleString("en")} attempts | |`,
    `| the same, one 2-hour advance through attempts 2 to 5 | ${failing.advanceSeconds.toFixed(2)} s, ${(failing.attempts - failing.firstAttempts).toLocaleString("en")} attempts, ${failing.failed.toLocaleString("en")} deliveries failed | < 10 s: ${failing.advanceSeconds < 10 ? "met" : "**missed**"} |`,
    "",
    `A page of 20 deliveries, in process (\`engine.fetch\`), mean of ${pageRepeats} requests; the deep page is about half way down the list.`,
    "",
    "| store | filter | deliveries listed (total) | first page µs | deep page µs |",
    "|---|---|---:|---:|---:|",
    ...pageRows(`memory, ${(memoryPages[0]!.total).toLocaleString("en")} deliveries`, memoryPages),
    ...pageRows(`PostgreSQL, ${(postgresPages[0]!.total).toLocaleString("en")} deliveries`, postgresPages)
  ].join("\n")
  console.log(table)
  if (failing.attempts !== failing.endpoints * 5 || failing.failed !== failing.endpoints) {
    console.error(`[bench:webhooks] expected ${failing.endpoints * 5} attempts and ${failing.endpoints} failed deliveries`)
    process.exitCode = 1
  }
  if (process.env.BENCH_NO_DOCS !== "1") {
    recordSection("webhooks", table)
    log("updated docs/performance.md")
  }
}

main().catch((e: unknown) => {
  console.error(`[bench:webhooks] failed: ${e instanceof Error ? e.message : String(e)}`)
  process.exitCode = 1
})
