/**
 * The engine's metrics (docs/observability.md, "Metrics"): a journey's requests, rate-limited requests, timers,
 * webhook attempts, store transactions and open streams, read back from `GET /metrics` with a Prometheus text-format
 * parser; the table of docs/observability.md against what `/metrics` exposes; the operator token that guards it
 * under `fos serve --base-path`; two engines in one process counting apart; and a host's own registry receiving them.
 */
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { Metrics, Timers } from "@fos/core"
import { createEngine, type Engine, layerEmbedded, layerRoutes } from "@fos/http"
import { Context, Layer, Metric } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import parsePrometheusTextFormat from "parse-prometheus-text-format"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { killAllFos, repoRoot, startFos } from "./fosProcess.ts"
import { keysOf, orgSeed, seedOf, START_MS } from "./support.ts"

const operatorToken = "metrics-operator-token-0123456789"
const busy = keysOf("metricsbusy")
const limited = keysOf("metricslimited")
const seed = seedOf(
  orgSeed("metricsbusy"),
  // Two requests' burst and a trickle: real time stands still in this engine, so the third request is refused.
  orgSeed("metricslimited", { rateLimit: { sustainedPerSecond: 0.001, burst: 2 } })
)

const engines: Array<Engine> = []
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()))
})
afterAll(killAllFos)

const start = async () => {
  const engine = await createEngine({
    clock: { mode: "virtual", start: START_MS },
    realClock: Timers.makeVirtualClock(START_MS),
    seed,
    webhookTransport: "memory",
    operatorToken
  })
  engines.push(engine)
  return engine
}

const call = async (engine: Engine, method: string, path: string, key: string, body?: unknown) => {
  const response = await engine.fetch(`http://fos.test${path}`, {
    method,
    headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  await response.text()
  return response.status
}

// --- reading the exposition --------------------------------------------------------------------------------------

interface Sample {
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}
interface Family {
  readonly name: string
  readonly type: string
  readonly help: string
  readonly samples: ReadonlyArray<Sample>
}

/**
 * The families of an exposition, parsed by parse-prometheus-text-format. The parser folds every series of a
 * histogram into one, dropping their labels (it follows prom2json's output for one unlabelled histogram), so a
 * histogram's `_bucket`, `_sum` and `_count` lines are read a second time, with its TYPE line left out: the parser
 * then reads each as a family of its own, every sample with its labels.
 */
const parse = (text: string): ReadonlyMap<string, Family> => {
  const families = new Map<string, Family>()
  const sampled = (metrics: ReadonlyArray<{ labels?: Record<string, string>; value?: string }>) =>
    metrics.filter((m) => m.value !== undefined).map((m) => ({ labels: m.labels ?? {}, value: Number(m.value) }))
  for (const family of parsePrometheusTextFormat(text)) {
    families.set(family.name, { name: family.name, type: family.type.toLowerCase(), help: family.help, samples: family.type === "HISTOGRAM" ? [] : sampled(family.metrics) })
  }
  const histograms = [...families.values()].filter((f) => f.type === "histogram").map((f) => f.name)
  const untyped = text.split("\n").filter((line) => !histograms.some((name) => line === `# TYPE ${name} histogram` || line.startsWith(`# HELP ${name} `))).join("\n")
  for (const family of parsePrometheusTextFormat(untyped)) {
    const base = histograms.find((name) => [`${name}_bucket`, `${name}_sum`, `${name}_count`].includes(family.name))
    // Each series' lines come together, so the parser meets a part once per series: its samples add up.
    if (base !== undefined) {
      const seen = families.get(family.name)?.samples ?? []
      families.set(family.name, { name: family.name, type: "histogram part", help: "", samples: [...seen, ...sampled(family.metrics)] })
    }
  }
  return families
}

const samplesOf = (families: ReadonlyMap<string, Family>, name: string) => {
  const family = families.get(name)
  if (family === undefined) throw new Error(`no ${name} in the metrics; families: ${[...families.keys()].join(", ")}`)
  return family.samples
}

/** The one sample of `name` whose labels are exactly `labels`, or undefined. */
const sampleOf = (families: ReadonlyMap<string, Family>, name: string, labels: Readonly<Record<string, string>>) =>
  samplesOf(families, name).find((s) => JSON.stringify(Object.entries(s.labels).sort()) === JSON.stringify(Object.entries(labels).sort()))

const scrape = async (engine: Engine, headers: Record<string, string> = { authorization: `Bearer ${operatorToken}` }) => {
  const response = await engine.fetch("http://fos.test/metrics", { headers })
  return { status: response.status, contentType: response.headers.get("content-type"), text: await response.text() }
}

// --- the documented table ----------------------------------------------------------------------------------------

interface DocumentedMetric {
  readonly name: string
  readonly prometheus: string
  readonly type: string
  readonly unit: string
  readonly labels: ReadonlyArray<string>
}

/** The rows of the table in docs/observability.md's "Metrics" section. */
const documented = (): ReadonlyArray<DocumentedMetric> => {
  const doc = readFileSync(resolve(repoRoot, "docs/observability.md"), "utf8")
  const section = /^## Metrics\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(doc)?.[1]
  if (section === undefined) throw new Error("docs/observability.md has no ## Metrics section")
  const cell = (text: string) => text.trim().replace(/^`|`$/g, "")
  return section.split("\n").filter((line) => /^\| `[a-z]/.test(line)).map((line) => {
    const [name, prometheus, type, unit, labels] = line.split("|").slice(1, 6).map(cell)
    return {
      name: name!,
      prometheus: prometheus!,
      type: type!,
      unit: unit!,
      labels: labels === "" || labels === "none" ? [] : labels!.split(",").map((l) => cell(l))
    }
  })
}

const promLabel = (label: string) => label.replace(/[^a-zA-Z0-9_]/g, "_")

describe("metrics", () => {
  it("counts a journey's requests, refusals, timers, attempts, transactions and open streams, as /metrics shows them", async () => {
    const engine = await start()
    // The journey: 3 reads, a 404, a webhook endpoint and an event (its delivery's attempt fires as a timer), 3
    // requests of the limited organization (the third refused), and a live stream left open.
    for (let i = 0; i < 3; i++) expect(await call(engine, "GET", "/sandbox/v2/portal/users/me", busy.sandbox)).toBe(200)
    expect(await call(engine, "GET", "/sandbox/v2/customers/cus_doesnotexist", busy.sandbox)).toBe(404)
    expect(await call(engine, "POST", "/sandbox/v2/webhooks/endpoints", busy.sandbox, { url: "https://receiver.example.com/hooks" })).toBe(201)
    expect(await call(engine, "POST", "/sandbox/v2/simulate/events", busy.sandbox, { type: "customer.created" })).toBe(201)
    await engine.deliveries.flush()
    const limitedStatuses = [] as Array<number>
    for (let i = 0; i < 3; i++) limitedStatuses.push(await call(engine, "GET", "/sandbox/v2/portal/users/me", limited.sandbox))
    expect(limitedStatuses).toEqual([200, 200, 429])
    const stream = await engine.fetch("http://fos.test/sandbox/v2/simulate/stream", { headers: { "x-api-key": busy.sandbox } })
    expect(stream.status).toBe(200)
    const reader = stream.body!.getReader()
    await reader.read()
    // Refused without the operator's token: the metrics are every organization's traffic.
    const refused = await scrape(engine, {})
    expect(refused.status).toBe(401)
    const wrong = await scrape(engine, { authorization: "Bearer not-the-token-at-all-0000" })
    expect(wrong.status).toBe(401)

    const scraped = await scrape(engine)
    expect(scraped.status).toBe(200)
    expect(scraped.contentType).toBe("text/plain; version=0.0.4; charset=utf-8")
    await reader.cancel()
    const families = parse(scraped.text)

    // Every request before the scrape, each once, under its operation, status and code.
    const requests = samplesOf(families, "fos_server_requests_total")
    expect(requests.reduce((n, s) => n + s.value, 0)).toBe(3 + 1 + 2 + 3 + 1 + 2)
    expect(sampleOf(families, "fos_server_requests_total", { fos_operation: "portal.me", http_response_status_code: "200" })?.value).toBe(5)
    expect(sampleOf(families, "fos_server_requests_total", { fos_operation: "portal.me", http_response_status_code: "429", fos_error_code: "RATE_LIMITED" })?.value).toBe(1)
    expect(sampleOf(families, "fos_server_requests_total", { fos_operation: "customers.get", http_response_status_code: "404", fos_error_code: "CUSTOMER_NOT_FOUND" })?.value).toBe(1)
    expect(sampleOf(families, "fos_server_requests_total", { http_response_status_code: "401", fos_error_code: "UNAUTHORIZED" })?.value).toBe(2)
    expect(sampleOf(families, "fos_server_requests_total", { fos_operation: "inspect.streamSandbox", http_response_status_code: "200" })?.value).toBe(1)
    expect(samplesOf(families, "fos_server_rate_limited_total")).toEqual([{ labels: { fos_operation: "portal.me" }, value: 1 }])

    // The semantic conventions' duration, per method, route and status: its count is the requests'.
    const meCount = sampleOf(families, "http_server_request_duration_seconds_count", {
      http_request_method: "GET",
      http_route: "/sandbox/v2/portal/users/me",
      http_response_status_code: "200"
    })
    expect(meCount?.value).toBe(5)
    const meInf = sampleOf(families, "http_server_request_duration_seconds_bucket", {
      http_request_method: "GET",
      http_route: "/sandbox/v2/portal/users/me",
      http_response_status_code: "200",
      le: "+Inf"
    })
    expect(meInf?.value).toBe(5)
    expect(samplesOf(families, "http_server_request_duration_seconds_sum").every((s) => s.value >= 0)).toBe(true)

    // The event's delivery: one attempt, answered 200 by the memory receiver, fired as a webhook.attempt timer.
    expect(sampleOf(families, "fos_webhook_attempts_total", { fos_webhook_outcome: "ok" })?.value).toBe(1)
    expect(sampleOf(families, "fos_webhook_attempts_total", { fos_webhook_outcome: "rejected" })?.value).toBe(0)
    expect(sampleOf(families, "fos_webhook_attempt_duration_seconds_count", { fos_webhook_outcome: "ok" })?.value).toBe(1)
    expect(sampleOf(families, "fos_timer_fired_total", { fos_timer_kind: "webhook.attempt" })?.value).toBe(1)
    // Every kind the engine fires has its series from the start.
    expect(sampleOf(families, "fos_timer_fired_total", { fos_timer_kind: "payout.settle" })?.value).toBe(0)

    // Writes ran in store transactions; none was run again on the memory store.
    expect(samplesOf(families, "fos_store_transaction_duration_seconds_count")[0]!.value).toBeGreaterThan(0)
    expect(sampleOf(families, "fos_store_transaction_retries_total", { fos_store_retry_reason: "aborted" })?.value).toBe(0)

    // The gauges, read at the scrape: the stream was open, and the pending timers are the store's.
    expect(samplesOf(families, "fos_streams_open")).toEqual([{ labels: {}, value: 1 }])
    expect(samplesOf(families, "fos_timer_pending")).toEqual([{ labels: {}, value: await engine.run(Timers.pendingCount) }])
    expect(parse(await engine.metrics()).get("fos_streams_open")?.samples).toEqual([{ labels: {}, value: 0 }])

    // The documented table and the exposition agree: every metric is there, of its type, with its labels only.
    const table = documented()
    expect(table.map((m) => m.name)).toEqual(Metrics.catalog.map((d) => d.name))
    for (const metric of table) {
      const definition = Metrics.catalog.find((d) => d.name === metric.name)!
      expect({ prometheus: metric.prometheus, type: metric.type, unit: metric.unit, labels: metric.labels }).toEqual({
        prometheus: Metrics.prometheusName(definition),
        type: definition.type,
        unit: definition.unit,
        labels: definition.labels
      })
      const family = families.get(metric.prometheus)
      expect(family, metric.prometheus).toBeDefined()
      expect(family!.type).toBe(metric.type)
      const series = metric.type === "histogram" ? samplesOf(families, `${metric.prometheus}_count`) : family!.samples
      expect(series.length, metric.prometheus).toBeGreaterThan(0)
      const allowed = new Set(metric.labels.map(promLabel))
      const seen = new Set(series.flatMap((s) => Object.keys(s.labels)))
      expect([...seen].filter((l) => !allowed.has(l)), metric.prometheus).toEqual([])
      expect([...allowed].filter((l) => !seen.has(l)), metric.prometheus).toEqual([])
    }
  })

  it("keeps two engines' counts apart in one process", async () => {
    const one = await start()
    const two = await start()
    for (let i = 0; i < 2; i++) await call(one, "GET", "/sandbox/v2/portal/users/me", busy.sandbox)
    for (let i = 0; i < 5; i++) await call(two, "GET", "/sandbox/v2/portal/users/me", busy.sandbox)
    const count = async (engine: Engine) =>
      sampleOf(parse((await scrape(engine)).text), "fos_server_requests_total", { fos_operation: "portal.me", http_response_status_code: "200" })?.value
    expect(await count(one)).toBe(2)
    expect(await count(two)).toBe(5)
  })

  it("counts into the host's own registry when the host provides one", async () => {
    const registry: Metric.MetricRegistry = new Map()
    const web = HttpRouter.toWebHandler(
      layerRoutes(layerEmbedded({ clock: { mode: "virtual", start: START_MS }, seed, webhookTransport: "memory" })).pipe(
        Layer.provide(HttpServer.layerServices),
        Layer.provide(Layer.succeed(Metric.MetricRegistry, registry))
      ),
      { disableLogger: true }
    )
    try {
      const response = await web.handler(new Request("http://fos.test/sandbox/v2/portal/users/me", { headers: { "x-api-key": busy.sandbox } }))
      expect(response.status).toBe(200)
      const counted = Metric.snapshotUnsafe(Context.make(Metric.MetricRegistry, registry))
        .filter((m) => m.id === "fos.server.requests")
        .map((m) => ({ attributes: m.attributes, count: (m.state as { count: number }).count }))
      expect(counted).toEqual([{ attributes: { "fos.operation": "portal.me", "http.response.status_code": "200" }, count: 1 }])
    } finally {
      await web.dispose()
    }
  })

  it("serves /metrics under fos serve's base path, with the operator token only", async () => {
    const server = await startFos(["--store", "memory", "--port", "0", "--base-path", "/fos", "--quiet"], { FOS_OPERATOR_TOKEN: operatorToken })
    try {
      const origin = server.origin.replace(/\/fos$/, "")
      expect((await fetch(`${origin}/fos/metrics`)).status).toBe(401)
      expect((await fetch(`${origin}/metrics`, { headers: { authorization: `Bearer ${operatorToken}` } })).status).toBe(404)
      const healthz = await fetch(`${origin}/fos/healthz`)
      expect(healthz.status).toBe(200)
      const response = await fetch(`${origin}/fos/metrics`, { headers: { authorization: `Bearer ${operatorToken}` } })
      expect(response.status).toBe(200)
      const families = parse(await response.text())
      // The refused scrape and the health check before it, under the routes they matched.
      expect(sampleOf(families, "fos_server_requests_total", { http_response_status_code: "401", fos_error_code: "UNAUTHORIZED" })?.value).toBe(1)
      expect(samplesOf(families, "http_server_request_duration_seconds_count").find((s) => s.labels.http_route === "/fos/metrics")?.value).toBe(1)
      expect(families.get("fos_timer_pending")?.type).toBe("gauge")
    } finally {
      await server.stop()
    }
  })
})
