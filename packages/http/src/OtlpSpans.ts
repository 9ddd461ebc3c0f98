/**
 * The tracer of `telemetry.otlp` (Telemetry.ts's `layerOtlp`): spans exported over OTLP/HTTP in the JSON encoding,
 * the bytes Effect's `OtlpTracer` sends (the same resource, scope, ids, kinds, status, attributes, events and links,
 * in the same batches through Effect's `OtlpExporter`), made for less.
 *
 * Effect's tracer keeps each ended span as an OTLP object graph (an object per attribute and per value) until its
 * batch is sent, then `JSON.stringify`s the batch: on a request that answers in some 30 µs, that graph, its garbage
 * and its stringify cost as much as the request again. Here a span is written as its OTLP/JSON text once, when it
 * ends, and the batch is those texts joined: what waits for the export is one string a span.
 *
 * Ids are 16 and 8 random bytes drawn from the runtime's `crypto.getRandomValues` in blocks, never from the engine's
 * `Random`, so a seeded engine answers the same bytes traced or not (kernel/Telemetry.ts).
 */
import { Cause, Duration, Effect, type Exit, Layer, Option, type Scope, Tracer, Version } from "effect"
import { type Headers, HttpBody, type HttpClient } from "effect/http"
import { OtlpExporter, OtlpResource } from "effect/observability"

/** Where spans go, and who sends them; the defaults are Effect's `OtlpTracer`'s. */
export interface OtlpSpansOptions {
  /** The collector's traces endpoint (`…/v1/traces`). */
  readonly url: string
  readonly headers?: Headers.Input | undefined
  readonly resource?: { readonly serviceName?: string | undefined } | undefined
  readonly exportInterval?: Duration.Input | undefined
  readonly maxBatchSize?: number | undefined
  readonly shutdownTimeout?: Duration.Input | undefined
}

// --- ids ---------------------------------------------------------------------------------------------------------

const hexOfByte = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"))
/** Random bytes drawn a block at a time: one call to the runtime's generator serves some 170 spans. */
const pool = new Uint8Array(4096)
let drawn = pool.length

/** `bytes` random bytes as lower-case hex. */
const randomHex = (bytes: number): string => {
  if (drawn + bytes > pool.length) {
    globalThis.crypto.getRandomValues(pool)
    drawn = 0
  }
  let hex = ""
  for (let end = drawn + bytes; drawn < end; drawn++) hex += hexOfByte[pool[drawn]!]
  return hex
}

// --- OTLP/JSON ---------------------------------------------------------------------------------------------------

/** OTLP's `intValue` is a signed 64-bit integer. */
const int64Bound = 2 ** 63

/** OTLP/JSON writes NaN and the infinities as strings, where `JSON.stringify` writes null. */
const nonFiniteToString = (_key: string, value: unknown) => typeof value === "number" && !Number.isFinite(value) ? String(value) : value

/** What JSON escapes in a string (and a surrogate, which `JSON.stringify` escapes when it is alone). */
const escaped = /["\\\u0000-\u001f\ud800-\udfff]/

/** `text` as a JSON string: most of a span's texts (names, paths, ids) need no escape, and a test is cheaper. */
const quoted = (text: string): string => escaped.test(text) ? JSON.stringify(text) : `"${text}"`

/** An attribute's value as OTLP/JSON's AnyValue, as Effect's `unknownToAttributeValue` makes it. */
const anyValue = (value: unknown): string => {
  switch (typeof value) {
    case "string":
      return `{"stringValue":${quoted(value)}}`
    case "boolean":
      return value ? `{"boolValue":true}` : `{"boolValue":false}`
    case "number":
      // A finite number's JSON is its `String`; an unsafe integer is written as a string, which JSON cannot round.
      if (Number.isInteger(value) && value >= -int64Bound && value < int64Bound) {
        return Number.isSafeInteger(value) ? `{"intValue":${value}}` : `{"intValue":"${BigInt(value)}"}`
      }
      return Number.isFinite(value) ? `{"doubleValue":${value}}` : `{"doubleValue":"${value}"}`
    default:
      // Arrays, big integers and objects are rare on a span: Effect's own conversion.
      return JSON.stringify(OtlpResource.unknownToAttributeValue(value), nonFiniteToString)
  }
}

/** `{"key":…,"value":` for each attribute name seen, which are few (kernel/Telemetry.ts's, Effect's). */
const keyPrefixes = new Map<string, string>()
const keyPrefix = (key: string): string => {
  let prefix = keyPrefixes.get(key)
  if (prefix === undefined) {
    prefix = `{"key":${JSON.stringify(key)},"value":`
    // A span may be given names without end (an annotation's); those are written each time.
    if (keyPrefixes.size < 1_000) keyPrefixes.set(key, prefix)
  }
  return prefix
}

const attributesOf = (entries: Iterable<readonly [string, unknown]>, extra = ""): string => {
  let json = ""
  for (const [key, value] of entries) json += `${json === "" ? "" : ","}${keyPrefix(key)}${anyValue(value)}}`
  if (extra !== "") json += json === "" ? extra : `,${extra}`
  return `[${json}]`
}

const entriesOf = (attributes: Readonly<Record<string, unknown>> | undefined) => attributes === undefined ? [] : Object.entries(attributes)

const spanKind: Record<Tracer.SpanKind, number> = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 }

type Event = readonly [name: string, startTime: bigint, attributes: Record<string, unknown> | undefined]

const eventJson = ([name, time, attributes]: Event) =>
  `{"name":${quoted(name)},"timeUnixNano":"${time}","attributes":${attributesOf(entriesOf(attributes))},"droppedAttributesCount":0}`

/** A span's OTLP/JSON Span message, ended at `endTime` with `exit`. */
const spanJson = (span: OtlpSpan, startTime: bigint, endTime: bigint, exit: Exit.Exit<unknown, unknown>): string => {
  let status: string
  let interrupted = ""
  let exceptions = ""
  if (exit._tag === "Success") status = `{"code":1}`
  else if (Cause.hasInterruptsOnly(exit.cause)) {
    status = `{"code":0}`
    interrupted = `{"key":"effect.fiber.interrupted","value":{"boolValue":true}}`
  } else {
    const errors = Cause.prettyErrors(exit.cause, { includeCauseInStack: true })
    status = errors.length > 0 ? `{"code":2,"message":${JSON.stringify(errors[0]!.message)}}` : `{"code":1}`
    for (const error of errors) {
      exceptions += `,{"name":"exception","timeUnixNano":"${endTime}","droppedAttributesCount":0,"attributes":[` +
        `{"key":"exception.type","value":{"stringValue":${JSON.stringify(error.name)}}},` +
        `{"key":"exception.message","value":{"stringValue":${JSON.stringify(error.message)}}},` +
        `{"key":"exception.stacktrace","value":{"stringValue":${JSON.stringify(error.stack ?? "No stack trace available")}}}]}`
    }
  }
  let events = ""
  if (span.eventList !== undefined) for (const event of span.eventList) events += `${events === "" ? "" : ","}${eventJson(event)}`
  if (exceptions !== "") events = events === "" ? exceptions.slice(1) : events + exceptions
  let links = ""
  for (const link of span.links) {
    links += `${links === "" ? "" : ","}{"traceId":${JSON.stringify(link.span.traceId.padStart(32, "0"))},"spanId":${JSON.stringify(link.span.spanId)},` +
      `"attributes":${attributesOf(Object.entries(link.attributes))},"droppedAttributesCount":0}`
  }
  const parent = span.parent._tag === "Some" ? `"parentSpanId":${JSON.stringify(span.parent.value.spanId)},` : ""
  return `{"traceId":${JSON.stringify(span.traceId.padStart(32, "0"))},"spanId":"${span.spanId}",${parent}"name":${quoted(span.name)},` +
    `"kind":${spanKind[span.kind]},"startTimeUnixNano":"${startTime}","endTimeUnixNano":"${endTime}",` +
    `"attributes":${attributesOf(span.attributeMap ?? [], interrupted)},"droppedAttributesCount":0,"events":[${events}],"droppedEventsCount":0,` +
    `"status":${status},"links":[${links}],"droppedLinksCount":0}`
}

// --- the span ----------------------------------------------------------------------------------------------------

type SpanOptions = Parameters<Tracer.Tracer["span"]>[0]

/** A span that writes itself as OTLP/JSON when it ends and hands the text to `send` (when sampled). */
class OtlpSpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly name: string
  readonly parent: Option.Option<Tracer.AnySpan>
  readonly annotations: SpanOptions["annotations"]
  readonly links: Array<Tracer.SpanLink>
  readonly kind: Tracer.SpanKind
  readonly sampled: boolean
  status: Tracer.SpanStatus
  attributeMap: Map<string, unknown> | undefined = undefined
  eventList: Array<Event> | undefined = undefined
  private traceIdValue: string | undefined = undefined
  private spanIdValue: string | undefined = undefined
  private readonly send: (json: string) => void

  constructor(options: SpanOptions, send: (json: string) => void) {
    this.name = options.name
    this.parent = options.parent
    this.annotations = options.annotations
    this.links = options.links
    this.kind = options.kind
    this.sampled = options.sampled
    this.status = { _tag: "Started", startTime: options.startTime }
    this.send = send
  }

  get traceId(): string {
    return this.traceIdValue ??= this.parent._tag === "Some" ? this.parent.value.traceId : randomHex(16)
  }

  get spanId(): string {
    return this.spanIdValue ??= randomHex(8)
  }

  get attributes(): Map<string, unknown> {
    return this.attributeMap ??= new Map()
  }

  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    if (this.status._tag === "Ended") return
    const startTime = this.status.startTime
    this.status = { _tag: "Ended", startTime, endTime, exit }
    if (this.sampled) this.send(spanJson(this, startTime, endTime, exit))
  }

  attribute(key: string, value: unknown): void {
    if (this.status._tag === "Ended") return
    this.attributes.set(key, value)
  }

  event(name: string, startTime: bigint, attributes?: Record<string, unknown>): void {
    if (this.status._tag === "Ended") return
    ;(this.eventList ??= []).push([name, startTime, attributes])
  }

  addLinks(links: ReadonlyArray<Tracer.SpanLink>): void {
    if (this.status._tag === "Ended") return
    for (const link of links) this.links.push(link)
  }
}

const encoder = new TextEncoder()
const blockSize = 64 * 1024

/** An ExportTraceServiceRequest: `head`, the spans separated by commas, `tail`. */
const batchOf = (head: Uint8Array, spans: ReadonlyArray<Uint8Array>, tail: Uint8Array): Uint8Array => {
  let length = head.length + tail.length + Math.max(0, spans.length - 1)
  for (const span of spans) length += span.length
  const batch = new Uint8Array(length)
  batch.set(head)
  let at = head.length
  for (let i = 0; i < spans.length; i++) {
    if (i > 0) batch[at++] = 0x2c
    batch.set(spans[i]!, at)
    at += spans[i]!.length
  }
  batch.set(tail, at)
  return batch
}

// --- the tracer --------------------------------------------------------------------------------------------------

/**
 * A tracer whose ended, sampled spans are sent to `options.url` in batches (every 5 s, or at 1,000 spans), through
 * Effect's exporter: its retries, its pause after a failure, its flush on close.
 */
export const make = (options: OtlpSpansOptions): Effect.Effect<Tracer.Tracer, never, OtlpExporter.Flusher | HttpClient.HttpClient | Scope.Scope> =>
  Effect.gen(function*() {
    const resource = yield* OtlpResource.fromConfig(options.resource)
    // Effect's scope, as its OtlpTracer names it: the instrumentation is Effect's tracing.
    const head = `{"resourceSpans":[{"resource":${JSON.stringify(resource, nonFiniteToString)},"scopeSpans":[{"scope":${JSON.stringify({ name: "effect", version: Version.getCurrentVersion() })},"spans":[`
    const tail = encoder.encode("]}]}]}")
    const headBytes = encoder.encode(head)
    const exporter = yield* OtlpExporter.make({
      label: "OtlpTracer",
      url: options.url,
      headers: options.headers,
      exportInterval: options.exportInterval ?? Duration.seconds(5),
      maxBatchSize: options.maxBatchSize ?? 1000,
      body: (spans: Array<Uint8Array>) => [HttpBody.uint8Array(batchOf(headBytes, spans, tail), "application/json"), Effect.void],
      shutdownTimeout: options.shutdownTimeout ?? Duration.seconds(3)
    })
    // Each span's UTF-8 goes into a block shared with the spans ended next to it, and the batch copies the blocks'
    // bytes once: no span's text waits for the export as a string, and no batch is a string to encode. What a span
    // wrote is never written over (a full block is left for a new one), so a batch sent or dropped holds its own bytes.
    let block = new Uint8Array(blockSize)
    let used = 0
    const send = (json: string) => {
      // UTF-8 takes at most 3 bytes for each UTF-16 unit.
      if (blockSize - used < json.length * 3) {
        if (json.length * 3 > blockSize) return exporter.push(encoder.encode(json))
        block = new Uint8Array(blockSize)
        used = 0
      }
      const { written } = encoder.encodeInto(json, block.subarray(used))
      exporter.push(block.subarray(used, used += written))
    }
    return Tracer.make({ span: (spanOptions) => new OtlpSpan(spanOptions, send) })
  })

/** `make` as the context's `Tracer`, with the `Flusher` that sends what is left. */
export const layer = (options: OtlpSpansOptions): Layer.Layer<OtlpExporter.Flusher, never, HttpClient.HttpClient> =>
  Layer.effect(Tracer.Tracer, make(options)).pipe(Layer.provideMerge(OtlpExporter.layerFlusher))
