/**
 * `telemetry.otlp`'s tracer (packages/http/src/OtlpSpans.ts) writes each span's OTLP/JSON itself: the same spans
 * through it and through Effect's `OtlpTracer` must make the same ExportTraceServiceRequest (resource, scope, ids,
 * parents, kinds, times, status, attributes of every value type, events, exceptions, links), ids aside, which are
 * random in both; and what it writes is JSON as the OTLP specification encodes it (hex ids of 32 and 16 digits,
 * times as decimal strings, 64-bit integers that JSON cannot hold as strings, non-finite doubles as strings).
 */
import { Cause, Context, Effect, Exit, Layer, ManagedRuntime, Option, Tracer } from "effect"
import { HttpClient, HttpClientResponse } from "effect/http"
import { type OtlpExporter, OtlpSerialization, OtlpTracer } from "effect/observability"
import { describe, expect, it } from "vitest"
import { Telemetry } from "@fos/core"
import * as OtlpSpans from "../packages/http/src/OtlpSpans.ts"

/** An HTTP client that keeps every body it is given and answers 200. */
const collecting = () => {
  const bodies: Array<string> = []
  const client = HttpClient.make((request) => {
    const body = request.body
    bodies.push(body._tag === "Uint8Array" ? new TextDecoder().decode(body.body) : "")
    return Effect.succeed(HttpClientResponse.fromWeb(request, new Response("{}", { status: 200, headers: { "content-type": "application/json" } })))
  })
  return { bodies, layer: Layer.succeed(HttpClient.HttpClient, client) }
}

const url = "http://collector.test/v1/traces"
const resource = { serviceName: "fos-test" }

/** The same spans, whatever the tracer: every shape a span can take. */
const makeSpans = (tracer: Tracer.Tracer, failure: Exit.Exit<unknown, unknown>, serverError: Exit.Exit<unknown, unknown>) => {
  const open = (name: string, parent: Tracer.AnySpan | undefined, kind: Tracer.SpanKind, startTime: bigint, sampled = true, links: Array<Tracer.SpanLink> = []) =>
    tracer.span({ name, parent: Option.fromUndefinedOr(parent), annotations: Context.empty(), links, startTime, kind, root: false, sampled })
  const remote = Tracer.externalSpan({ traceId: "0af7651916cd43dd", spanId: "b7ad6b7169203331" })

  const request = open("payouts.create", undefined, "server", 1_764_000_000_000_000_001n)
  const values: Record<string, unknown> = {
    text: "caf\u00e9 \"quoted\" \\ line\nbreak \u2028 \ud83d\ude00 \u0001",
    empty: "",
    lone: "\ud800 alone",
    int: 200,
    negative: -42,
    zero: -0,
    unsafeInt: 2 ** 60,
    beyondInt64: 2 ** 64,
    double: 0.1,
    tiny: 5e-324,
    huge: 1e300,
    nan: Number.NaN,
    infinity: Number.POSITIVE_INFINITY,
    negativeInfinity: Number.NEGATIVE_INFINITY,
    yes: true,
    no: false,
    bigint: 9_007_199_254_740_993n,
    bigBeyond: 2n ** 70n,
    list: ["a", 1, 2.5, true, [Number.NaN]],
    object: { nested: { deep: [1, "two"] } },
    missing: undefined,
    nothing: null
  }
  for (const [key, value] of Object.entries(values)) request.attribute(key, value)
  request.attribute("int", 201)
  request.event("fos.store.transaction.retry", 1_764_000_000_000_000_002n, { [Telemetry.Attribute.retryReason]: "conflict", count: 1 })
  request.event("no attributes", 1_764_000_000_000_000_003n)

  const child = open("fos.store.transaction", request, "internal", 1_764_000_000_000_000_004n, true, [{ span: remote, attributes: { why: "follows", n: 3 } }])
  child.addLinks([{ span: request, attributes: {} }])
  // Attributes set, then read as the span's Map, then set again: the Map has them all and keeps what follows.
  child.attribute("before", 1)
  child.attribute("replaced", "first")
  if (child.attributes.get("before") !== 1) throw new Error("a span's attributes do not show what was set")
  child.attribute("replaced", "second")
  child.attribute("after", true)
  child.end(1_764_000_000_000_000_005n, failure)

  const client = open("fos.webhook.attempt", remote, "client", 1_764_000_000_000_000_006n)
  client.end(1_764_000_000_000_000_007n, Exit.interrupt(1))
  const producer = open("producer \"name\"", request, "producer", 1_764_000_000_000_000_008n)
  producer.end(1_764_000_000_000_000_009n, serverError)
  const consumer = open("consumer", undefined, "consumer", 1_764_000_000_000_000_010n)
  consumer.end(1_764_000_000_000_000_011n, Exit.failCause(Cause.die("gone")))
  const unsampled = open("unsampled", undefined, "internal", 1_764_000_000_000_000_012n, false)
  unsampled.end(1_764_000_000_000_000_013n, Exit.void)

  request.end(1_764_000_000_000_000_014n, Exit.succeed("answered"))
  // Ended already: nothing changes, nothing is sent again.
  request.attribute("late", true)
  request.end(1_764_000_000_000_000_015n, Exit.void)
}

/** The spans the tracer of `layer` sends, decoded, and the bodies as sent. */
const exported = async (layer: (client: Layer.Layer<HttpClient.HttpClient>) => Layer.Layer<OtlpExporter.Flusher>, failure: Exit.Exit<unknown, unknown>, serverError: Exit.Exit<unknown, unknown>) => {
  const sink = collecting()
  const runtime = ManagedRuntime.make(layer(sink.layer))
  const tracer = await runtime.runPromise(Effect.tracer)
  makeSpans(tracer, failure, serverError)
  await runtime.dispose()
  return sink.bodies
}

/**
 * `body` as a receiver decodes it: OTLP/JSON (proto3's JSON mapping) may leave out a field at its default (an empty
 * list, a zero count, an UNSET status), which fos's tracer does and Effect's does not.
 */
const withDefaults = (body: any) => {
  const keyValues = (of: any) => {
    of.attributes ??= []
    of.droppedAttributesCount ??= 0
  }
  for (const rs of body.resourceSpans) {
    keyValues(rs.resource)
    for (const ss of rs.scopeSpans) {
      for (const span of ss.spans) {
        keyValues(span)
        span.events ??= []
        for (const event of span.events) keyValues(event)
        span.droppedEventsCount ??= 0
        span.status ??= {}
        span.status.code ??= 0
        span.links ??= []
        for (const link of span.links) keyValues(link)
        span.droppedLinksCount ??= 0
      }
    }
  }
  return body
}

/** `body` with each id replaced by its first-seen order, so that two exports of the same spans compare equal. */
const withIdsInOrder = (body: any) => {
  const seen = new Map<string, string>()
  const order = (id: string) => {
    if (!seen.has(id)) seen.set(id, `id${seen.size}`)
    return seen.get(id)!
  }
  for (const rs of body.resourceSpans) {
    for (const ss of rs.scopeSpans) {
      for (const span of ss.spans) {
        span.traceId = order(span.traceId)
        span.spanId = order(span.spanId)
        if (span.parentSpanId !== undefined) span.parentSpanId = order(span.parentSpanId)
        for (const link of span.links) {
          link.traceId = order(link.traceId)
          link.spanId = order(link.spanId)
        }
      }
    }
  }
  return body
}

describe("telemetry.otlp's spans", () => {
  it("are the ExportTraceServiceRequest Effect's OtlpTracer sends for the same spans, ids aside", async () => {
    const failure = Exit.fail(new Error("boom"))
    const serverError = Telemetry.failed("500 INTERNAL")
    const effects = await exported((client) =>
      OtlpTracer.layer({ url, resource }).pipe(Layer.provide(OtlpSerialization.layerJson), Layer.provide(client)), failure, serverError)
    const fos = await exported((client) => OtlpSpans.layer({ url, resource }).pipe(Layer.provide(client)), failure, serverError)
    expect(fos).toHaveLength(1)
    expect(effects).toHaveLength(1)
    const decoded = JSON.parse(fos[0]!)
    expect(withIdsInOrder(withDefaults(structuredClone(decoded)))).toEqual(withIdsInOrder(JSON.parse(effects[0]!)))

    // As the specification encodes them, not merely as Effect does.
    const spans = decoded.resourceSpans[0].scopeSpans[0].spans
    expect(spans.map((s: any) => s.name)).toEqual(["fos.store.transaction", "fos.webhook.attempt", "producer \"name\"", "consumer", "payouts.create"])
    for (const span of spans) {
      expect(span.traceId).toMatch(/^[0-9a-f]{32}$/)
      expect(span.spanId).toMatch(/^[0-9a-f]{16}$/)
      expect(span.startTimeUnixNano).toMatch(/^\d+$/)
    }
    const [child, client, producer, consumer, request] = spans
    expect([child.kind, client.kind, producer.kind, consumer.kind, request.kind]).toEqual([1, 3, 4, 5, 2])
    expect(child.parentSpanId).toBe(request.spanId)
    expect(child.traceId).toBe(request.traceId)
    expect(client.traceId).toBe("00000000000000000af7651916cd43dd")
    expect(client.parentSpanId).toBe("b7ad6b7169203331")
    expect(request.parentSpanId).toBeUndefined()
    expect(request.status).toEqual({ code: 1 })
    // UNSET, the default, left out; nothing dropped, no empty list written.
    expect(client.status).toBeUndefined()
    expect(consumer.links).toBeUndefined()
    expect(fos[0]).not.toContain("dropped")
    expect(client.attributes).toEqual([{ key: "effect.fiber.interrupted", value: { boolValue: true } }])
    expect(child.status).toEqual({ code: 2, message: "boom" })
    expect(child.events.map((e: any) => e.name)).toEqual(["exception"])
    expect(child.links.map((l: any) => l.spanId)).toEqual(["b7ad6b7169203331", request.spanId])
    expect(producer.status.code).toBe(2)
    const values = Object.fromEntries(request.attributes.map((a: any) => [a.key, a.value]))
    expect(values.int).toEqual({ intValue: 201 })
    expect(values.unsafeInt).toEqual({ intValue: String(2n ** 60n) })
    expect(values.beyondInt64).toEqual({ doubleValue: 2 ** 64 })
    expect(values.nan).toEqual({ doubleValue: "NaN" })
    expect(values.negativeInfinity).toEqual({ doubleValue: "-Infinity" })
    expect(values.bigBeyond).toEqual({ stringValue: String(2n ** 70n) })
    expect(values.text).toEqual({ stringValue: "caf\u00e9 \"quoted\" \\ line\nbreak \u2028 \ud83d\ude00 \u0001" })
    expect(values.late).toBeUndefined()
    expect(request.events).toHaveLength(2)
  })

  it("are sent in batches of at most 1,000, each a whole request", async () => {
    const sink = collecting()
    const runtime = ManagedRuntime.make(OtlpSpans.layer({ url, resource }).pipe(Layer.provide(sink.layer)))
    const tracer = await runtime.runPromise(Effect.tracer)
    const ended: Array<[string, string]> = []
    for (let i = 0; i < 2_500; i++) {
      const span = tracer.span({ name: `span ${i} ${"ü".repeat(i % 7)}`, parent: Option.none(), annotations: Context.empty(), links: [], startTime: BigInt(i), kind: "internal", root: false, sampled: true })
      span.attribute("i", i)
      // A value repeated from the span before is copied as written then: it must read back as set.
      span.attribute("same", "repeated")
      span.attribute("run", i >> 2)
      // Larger than a block of 64 KB, now and then: moved to a block of its own as it is written.
      if (i % 1_000 === 500) span.attribute("large", `${"x".repeat(100_000)}\u00e9${i}`)
      span.end(BigInt(i + 1), Exit.void)
      // Ids read only after the end (drawn as the span was written) are the ones it was sent with.
      if (i < 3) ended.push([span.traceId, span.spanId])
    }
    await runtime.dispose()
    const batches = sink.bodies.map((body) => JSON.parse(body).resourceSpans[0].scopeSpans[0].spans as Array<any>)
    expect(batches.map((b) => b.length)).toEqual([1_000, 1_000, 500])
    expect(batches[0]!.slice(0, 3).map((s) => [s.traceId, s.spanId])).toEqual(ended)
    expect(batches.flat().map((s) => s.name)).toEqual(Array.from({ length: 2_500 }, (_, i) => `span ${i} ${"ü".repeat(i % 7)}`))
    expect(batches.flat().map((s) => s.attributes)).toEqual(Array.from({ length: 2_500 }, (_, i) => [
      { key: "i", value: { intValue: i } },
      { key: "same", value: { stringValue: "repeated" } },
      { key: "run", value: { intValue: i >> 2 } },
      ...(i % 1_000 === 500 ? [{ key: "large", value: { stringValue: `${"x".repeat(100_000)}\u00e9${i}` } }] : [])
    ]))
    expect(batches.flat().map((s) => s.startTimeUnixNano)).toEqual(Array.from({ length: 2_500 }, (_, i) => String(i)))
  })

  it("write each time's decimal digits exactly, across the digits they keep from one span to the next", async () => {
    const sink = collecting()
    const runtime = ManagedRuntime.make(OtlpSpans.layer({ url, resource }).pipe(Layer.provide(sink.layer)))
    const tracer = await runtime.runPromise(Effect.tracer)
    const times = [1_764_999_999_999_999_999n, 1_765_000_000_000_000_001n, 1_765_000_000_000_000_000n, 7n, 10n ** 15n, 2n ** 64n - 1n, 1_765_000_123_456_789_012n]
    for (const time of times) {
      const span = tracer.span({ name: "t", parent: Option.none(), annotations: Context.empty(), links: [], startTime: time, kind: "internal", root: false, sampled: true })
      span.end(time, Exit.void)
    }
    await runtime.dispose()
    const spans = JSON.parse(sink.bodies[0]!).resourceSpans[0].scopeSpans[0].spans as Array<any>
    expect(spans.map((s) => [s.startTimeUnixNano, s.endTimeUnixNano])).toEqual(times.map((t) => [String(t), String(t)]))
  })
})
