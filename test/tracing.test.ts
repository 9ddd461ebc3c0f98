/**
 * fos's spans (docs/observability.md, "Spans"): an embedded engine given a host's recording `Tracer` runs the payout
 * journey (test/journey.ts) with a W3C `traceparent` on every request, and its spans make a tree joined to the
 * test's remote parent: a request span per request named by its operation, its store transactions under it, the
 * clock advances under theirs with the timers they fired, the webhook attempts under the timers that sent them, and a
 * snapshot, its restore and a fork. The same journey with no tracer answers the same bytes.
 */
import { Telemetry } from "@fos/core"
import { createEngine, type Engine, layerEmbedded, layerRoutes } from "@fos/http"
import { Layer, Tracer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { afterAll, describe, expect, it } from "vitest"
import { acmeKey, deliveriesSettled, journey, journeySeed, type Journey } from "./journey.ts"

/** A host's tracer that keeps every span it is asked for: Effect's own in-memory spans. */
const recordingTracer = () => {
  const spans: Array<Tracer.NativeSpan> = []
  const tracer = Tracer.make({
    span: (options) => {
      const span = new Tracer.NativeSpan(options)
      spans.push(span)
      return span
    }
  })
  return { tracer, spans }
}

/** The remote parent the test's requests name. */
const remoteTraceId = "4bf92f3577b34da6a3ce929d0e0e4736"
const remoteSpanId = "00f067aa0ba902b7"
const traceparent = `00-${remoteTraceId}-${remoteSpanId}-01`

const engines: Array<Engine> = []
afterAll(async () => {
  for (const engine of engines) await engine.close()
})

/** The journey on a fresh seeded engine, every request carrying `traceparent`; `tracer` when given receives its spans. */
const run = async (tracer?: Tracer.Tracer): Promise<{ engine: Engine; result: Journey; deliveries: Map<string, string> }> => {
  const engine = await createEngine({
    clock: { mode: "virtual", start: "2026-03-02T09:00:00.000Z" },
    webhookTransport: "memory",
    seed: journeySeed as never,
    randomSeed: 54,
    ...(tracer === undefined ? {} : { telemetry: { tracer } })
  })
  engines.push(engine)
  const fetch = (request: Request) => {
    const traced = new Request(request)
    traced.headers.set("traceparent", traceparent)
    return engine.fetch(traced)
  }
  const result = await journey(fetch, "http://fos", acmeKey, "https://hooks.acme.test/fos")
  await deliveriesSettled(fetch, "http://fos", acmeKey)
  return { engine, result, deliveries: new Map(engine.deliveries.list().map((d) => [d.attemptId, d.body])) }
}

const parentOf = (span: Tracer.NativeSpan): Tracer.AnySpan | undefined => span.parent._tag === "Some" ? span.parent.value : undefined
const attributesOf = (span: Tracer.NativeSpan) => Object.fromEntries(span.attributes)

describe("a host's tracer", () => {
  const recorder = recordingTracer()
  let traced: Awaited<ReturnType<typeof run>>

  it("receives a request span per request, a child of the traceparent's remote parent, named by its operation", async () => {
    traced = await run(recorder.tracer)
    const requests = recorder.spans.filter((s) => s.kind === "server")
    // One per request: each answer's correlation id is a span's.
    const ids = requests.map((s) => s.attributes.get("fos.correlation_id"))
    expect(new Set(ids).size).toBe(requests.length)
    for (const answer of traced.result.answers) expect(ids, answer.request).toContain(answer.correlationId)
    for (const span of requests) {
      expect(span.traceId).toBe(remoteTraceId)
      expect(parentOf(span)).toMatchObject({ _tag: "ExternalSpan", spanId: remoteSpanId, traceId: remoteTraceId })
      expect(span.status._tag).toBe("Ended")
    }
    const payout = requests.find((s) => s.name === "payouts.create")!
    expect(payout).toBeDefined()
    const answered = traced.result.answers.find((a) => a.request === "POST /v2/payouts")!
    expect(attributesOf(payout)).toMatchObject({
      "http.request.method": "POST",
      "http.route": "/sandbox/v2/payouts",
      "url.path": "/sandbox/v2/payouts",
      "http.response.status_code": 201,
      "fos.operation.id": "payouts.create",
      "fos.organization.id": "org_acme",
      "fos.environment": "sandbox",
      "fos.correlation_id": answered.correlationId
    })
    expect(attributesOf(payout)).not.toHaveProperty("fos.error.code")
    // A problem's code is its span's.
    const missing = requests.find((s) => s.attributes.get("url.path") === "/sandbox/v2/transactions/txn_000000000000000000000000")!
    expect(attributesOf(missing)).toMatchObject({ "http.response.status_code": 404, "fos.error.code": "NOT_FOUND" })
    expect(missing.status._tag === "Ended" && missing.status.exit._tag).toBe("Success")
    // Its store transactions are its children.
    const transactions = recorder.spans.filter((s) => s.name === Telemetry.SpanName.transaction && parentOf(s) === payout)
    expect(transactions.length).toBeGreaterThan(0)
    for (const t of transactions) expect(t.traceId).toBe(remoteTraceId)
  }, 120_000)

  it("nests the timers an advance fires under its span, and each webhook attempt under the timer that sent it", () => {
    const advances = recorder.spans.filter((s) => s.name === Telemetry.SpanName.clockAdvance)
    expect(advances.length).toBeGreaterThanOrEqual(4)
    for (const advance of advances) {
      const request = parentOf(advance) as Tracer.NativeSpan
      expect(request.name).toBe("simulate.advanceClock")
      expect(attributesOf(advance)).toMatchObject({ "fos.clock.id": "org_acme/sandbox", "fos.organization.id": "org_acme", "fos.environment": "sandbox" })
    }
    const twoDays = advances.find((a) => a.attributes.get("fos.clock.to") !== undefined && Date.parse(String(a.attributes.get("fos.clock.to"))) - Date.parse(String(a.attributes.get("fos.clock.from"))) === 2 * 24 * 3600_000)!
    expect(twoDays).toBeDefined()
    const fired = recorder.spans.filter((s) => s.name === Telemetry.SpanName.timer && parentOf(s) === twoDays)
    expect(fired.length).toBe(twoDays.attributes.get("fos.clock.timers_fired"))
    expect(fired.length).toBeGreaterThan(0)
    for (const timer of fired) {
      expect(attributesOf(timer)).toMatchObject({ "fos.timer.kind": expect.any(String), "fos.timer.id": expect.any(String), "fos.organization.id": "org_acme" })
      // The timer's own transaction is its child.
      expect(recorder.spans.some((s) => s.name === Telemetry.SpanName.transaction && parentOf(s) === timer)).toBe(true)
    }
    const settled = fired.find((t) => t.attributes.get("fos.resource.id") !== undefined && String(t.attributes.get("fos.resource.id")).startsWith("txn_"))
    expect(settled).toBeDefined()

    const attempts = recorder.spans.filter((s) => s.name === Telemetry.SpanName.webhookAttempt)
    expect(attempts.length).toBe(traced.deliveries.size)
    const endpointId = JSON.parse(traced.result.answers[0]!.body).id
    for (const attempt of attempts) {
      expect(attempt.kind).toBe("client")
      expect(attributesOf(attempt)).toMatchObject({
        "fos.webhook.endpoint.id": endpointId,
        "fos.event.type": expect.stringMatching(/^[a-z_]+\.[a-z_.]+$/),
        "fos.webhook.attempt.id": expect.any(String),
        "http.response.status_code": 200,
        "fos.webhook.latency_ms": expect.any(Number)
      })
      const timer = parentOf(attempt) as Tracer.NativeSpan
      expect(timer.name).toBe(Telemetry.SpanName.timer)
      expect(timer.attributes.get("fos.timer.kind")).toBe("webhook.attempt")
      expect(attempt.traceId).toBe(remoteTraceId)
    }
  })

  it("receives a span for a snapshot, its restore and a fork, each with its transaction", async () => {
    const { engine } = traced
    const before = recorder.spans.length
    const snapshot = await engine.snapshot({ organizationId: "org_acme" })
    await engine.restore(snapshot.id)
    const fork = await engine.fork(snapshot.id)
    const made = recorder.spans.slice(before)
    const one = (name: string) => {
      const found = made.filter((s) => s.name === name)
      expect(found).toHaveLength(1)
      expect(made.some((s) => s.name === Telemetry.SpanName.transaction && parentOf(s) === found[0])).toBe(true)
      return attributesOf(found[0]!)
    }
    expect(one(Telemetry.SpanName.snapshot)).toMatchObject({ "fos.organization.id": "org_acme", "fos.snapshot.id": snapshot.id })
    expect(one(Telemetry.SpanName.restore)).toMatchObject({ "fos.organization.id": "org_acme", "fos.snapshot.id": snapshot.id })
    expect(one(Telemetry.SpanName.fork)).toMatchObject({ "fos.organization.id": "org_acme", "fos.snapshot.id": snapshot.id, "fos.fork.organization.id": fork.organizationId })
  })

  it("changes no byte: the same journey with no tracer answers and delivers the same bytes", async () => {
    const untraced = await run()
    expect(untraced.result.answers.length).toBe(traced.result.answers.length)
    for (let i = 0; i < untraced.result.answers.length; i++) expect(traced.result.answers[i], untraced.result.answers[i]!.request).toEqual(untraced.result.answers[i])
    expect(traced.deliveries.size).toBeGreaterThan(10)
    expect(new Map([...traced.deliveries].sort())).toEqual(new Map([...untraced.deliveries].sort()))
  }, 120_000)
})

describe("an Effect host's tracer", () => {
  it("receives fos's request span as the child of the host's own server span, which read the traceparent", async () => {
    const recorder = recordingTracer()
    const web = HttpRouter.toWebHandler(
      layerRoutes(layerEmbedded({ clock: "virtual" })).pipe(
        Layer.provide(HttpServer.layerServices),
        Layer.provideMerge(Layer.succeed(Tracer.Tracer, recorder.tracer))
      ),
      { disableLogger: true }
    )
    try {
      const response = await web.handler(new Request("http://host/sandbox/v2/openapi.json", { headers: { traceparent } }))
      expect(response.status).toBe(200)
      await response.arrayBuffer()
      const fos = recorder.spans.find((s) => s.name === "GET /sandbox/v2/openapi.json")!
      expect(fos).toBeDefined()
      expect(attributesOf(fos)).toMatchObject({ "http.route": "/sandbox/v2/openapi.json", "http.response.status_code": 200, "fos.environment": "sandbox" })
      const host = parentOf(fos) as Tracer.NativeSpan
      expect(host).toMatchObject({ _tag: "Span", kind: "server", name: "GET" })
      expect(parentOf(host)).toMatchObject({ _tag: "ExternalSpan", spanId: remoteSpanId })
      expect(fos.traceId).toBe(remoteTraceId)
    } finally {
      await web.dispose()
    }
  })
})
