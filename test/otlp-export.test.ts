/**
 * `fos serve --otlp URL` (and OTEL_EXPORTER_OTLP_ENDPOINT) exports traces, metrics and logs over OTLP/HTTP: a
 * receiver here takes what arrives, the server is stopped by SIGTERM (which sends what is left), and each body is
 * decoded as the OTLP specification's JSON encoding (opentelemetry-proto's ExportTraceServiceRequest,
 * ExportMetricsServiceRequest and ExportLogsServiceRequest, `application/json`). A collector that does not answer
 * costs no request anything and is logged once.
 */
import { once } from "node:events"
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, describe, expect, it } from "vitest"
import { parseServeArgs } from "@fos/serve"
import { killAllFos, startFos } from "./fosProcess.ts"

afterAll(killAllFos)

interface Received {
  readonly path: string
  readonly contentType: string | undefined
  readonly body: any
}

/** An OTLP/HTTP receiver on a free port: answers 200 to every export, keeping what it decoded. */
const receiver = async () => {
  const received: Array<Received> = []
  const server: Server = createServer(async (request: IncomingMessage, response) => {
    const chunks: Array<Buffer> = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    received.push({ path: request.url ?? "", contentType: request.headers["content-type"], body: JSON.parse(Buffer.concat(chunks).toString("utf8")) })
    response.writeHead(200, { "content-type": "application/json" }).end("{}")
  })
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, close: () => new Promise((done) => server.close(done)) }
}

/** An OTLP attribute list as a record of plain values (AnyValue: stringValue, intValue as a string, ...). */
const attributesOf = (list: ReadonlyArray<{ key: string; value: Record<string, unknown> }> | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map(({ key, value }) => [key, value.stringValue ?? value.intValue ?? value.doubleValue ?? value.boolValue ?? value]))

const nanos = /^\d{16,20}$/

/** Runs a server exporting to `receiver`, makes requests, stops it, and answers what arrived, decoded. */
const session = async (flags: ReadonlyArray<string>, env: Record<string, string>) => {
  const server = await startFos(["--store", "memory", "--port", "0", "--quiet", ...flags], env)
  const key = /sandbox key: (ck_sandbox_[0-9a-f]{64})/.exec(server.stdout())![1]!
  const paths = ["/sandbox/v2/customers", "/sandbox/v2/webhooks/endpoints", "/sandbox/v2/portal/users/me"]
  for (const path of paths) expect((await fetch(`${server.origin}${path}`, { headers: { "x-api-key": key } })).status).toBe(200)
  expect((await server.stop()).code).toBe(0)
  return { key, paths, stdout: server.stdout() }
}

const decode = (received: ReadonlyArray<Received>, serviceName: string) => {
  for (const r of received) expect(r.contentType).toMatch(/^application\/json/)
  const of = (path: string) => received.filter((r) => r.path === path).map((r) => r.body)
  const resourceOk = (resource: { attributes: Array<{ key: string; value: Record<string, unknown> }> }) =>
    expect(attributesOf(resource.attributes)["service.name"]).toBe(serviceName)

  const spans = of("/v1/traces").flatMap((body) =>
    body.resourceSpans.flatMap((rs: any) => {
      resourceOk(rs.resource)
      return rs.scopeSpans.flatMap((ss: any) => ss.spans)
    })
  )
  for (const span of spans) {
    expect(span.traceId).toMatch(/^[0-9a-f]{32}$/)
    expect(span.spanId).toMatch(/^[0-9a-f]{16}$/)
    expect(span.startTimeUnixNano).toMatch(nanos)
    expect(BigInt(span.endTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(span.startTimeUnixNano))
    expect(typeof span.name).toBe("string")
  }
  const metrics = of("/v1/metrics").flatMap((body) =>
    body.resourceMetrics.flatMap((rm: any) => {
      resourceOk(rm.resource)
      return rm.scopeMetrics.flatMap((sm: any) => sm.metrics)
    })
  )
  for (const metric of metrics) {
    expect(typeof metric.name).toBe("string")
    const data = metric.sum ?? metric.gauge ?? metric.histogram ?? metric.exponentialHistogram ?? metric.summary
    expect(data, JSON.stringify(metric)).toBeDefined()
    for (const point of data.dataPoints) expect(point.timeUnixNano).toMatch(nanos)
  }
  const logs = of("/v1/logs").flatMap((body) =>
    body.resourceLogs.flatMap((rl: any) => {
      resourceOk(rl.resource)
      return rl.scopeLogs.flatMap((sl: any) => sl.logRecords)
    })
  )
  for (const log of logs) {
    expect(log.timeUnixNano).toMatch(nanos)
    expect(typeof log.severityText).toBe("string")
    expect(log.severityNumber).toBeGreaterThan(0)
  }
  return { spans, metrics, logs, resourceMetrics: of("/v1/metrics").flatMap((body) => body.resourceMetrics) }
}

/** What every export session must have sent: a server span per request, the metrics' resource, the start's record. */
const expectExported = (decoded: ReturnType<typeof decode>, ran: { readonly paths: ReadonlyArray<string> }) => {
  const serverSpans = decoded.spans.filter((s: any) => s.kind === 2)
  for (const path of ran.paths) {
    const span = serverSpans.find((s: any) => attributesOf(s.attributes)["url.path"] === path)
    expect(span, `a server span for ${path}`).toBeDefined()
    expect(Number(attributesOf(span.attributes)["http.response.status_code"])).toBe(200)
    // Every span of the request's trace is the server span or under it, however many fos adds.
    const trace = decoded.spans.filter((s: any) => s.traceId === span.traceId)
    const ids = new Set(trace.map((s: any) => s.spanId))
    for (const s of trace) if (s !== span) expect(ids.has(s.parentSpanId), `${s.name} under a span of its trace`).toBe(true)
  }
  // Each request is a trace of its own.
  expect(new Set(ran.paths.map((path) => serverSpans.find((s: any) => attributesOf(s.attributes)["url.path"] === path).traceId)).size).toBe(ran.paths.length)
  expect(decoded.resourceMetrics.length).toBeGreaterThan(0)
  // fos's own metrics (docs/observability.md, "Metrics") among them, the requests counted.
  expect(decoded.metrics.map((m: any) => m.name)).toEqual(expect.arrayContaining(["fos.server.requests", "http.server.request.duration"]))
  const start = decoded.logs.find((l: any) => l.body?.stringValue === "fos serving")
  expect(start, JSON.stringify(decoded.logs)).toBeDefined()
  // INFO, as the specification numbers severities (9 to 12).
  expect(start.severityNumber).toBe(9)
  expect(attributesOf(start.attributes).sandbox).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/sandbox$/)
}

describe("fos serve's OTLP export", () => {
  it("exports traces, metrics and logs to --otlp, and sends what is left on SIGTERM", async () => {
    const collector = await receiver()
    try {
      const s = await session(["--otlp", collector.url], {})
      const decoded = decode(collector.received, "fos")
      expectExported(decoded, s)
      // Nothing of a key reaches the export.
      expect(JSON.stringify(collector.received)).not.toContain(s.key.slice(11))
    } finally {
      await collector.close()
    }
  }, 60_000)

  it("reads OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_SERVICE_NAME as OpenTelemetry's SDKs do", async () => {
    const collector = await receiver()
    try {
      const s = await session([], { OTEL_EXPORTER_OTLP_ENDPOINT: `${collector.url}/`, OTEL_SERVICE_NAME: "fos-under-test" })
      expectExported(decode(collector.received, "fos-under-test"), s)
    } finally {
      await collector.close()
    }
  }, 60_000)

  it("answers every request when the collector is down, says so once, and stops", async () => {
    const gone = await receiver()
    await gone.close()
    const s = await session(["--otlp", gone.url], {})
    const warnings = s.stdout.split("\n").filter((line) => line.includes("OTLP export"))
    expect(warnings, s.stdout).toHaveLength(1)
    expect(warnings[0]).toMatch(/WARN OTLP export to http:\/\/127\.0\.0\.1:\d+\/ failed/)
  }, 60_000)

  it("refuses an --otlp that is not an http(s) URL, and reads OTEL_EXPORTER_OTLP_HEADERS", () => {
    expect(() => parseServeArgs(["--otlp", "grpc://127.0.0.1:4317"], {})).toThrow(/--otlp is an http:\/\/ or https:\/\/ URL/)
    expect(() => parseServeArgs([], { OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT is a collector's base URL/)
    expect(parseServeArgs([], { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_EXPORTER_OTLP_HEADERS: "api-key=s%3Dcret, x-team = payments" }).otlp).toEqual({
      url: "http://127.0.0.1:4318",
      headers: { "api-key": "s=cret", "x-team": "payments" },
      serviceName: "fos"
    })
    // The flag wins over the environment; neither: no export.
    expect(parseServeArgs(["--otlp", "https://collector.example"], { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }).otlp?.url).toBe("https://collector.example")
    expect(parseServeArgs([], {}).otlp).toBeUndefined()
  })
})
