/**
 * The tracer of `telemetry.otlp` (Telemetry.ts's `layerOtlp`): spans exported over OTLP/HTTP in the JSON encoding,
 * what Effect's `OtlpTracer` sends (the same resource, scope, ids, kinds, status, attributes, events and links, in
 * the same batches through Effect's `OtlpExporter`), made for less.
 *
 * Effect's tracer keeps each ended span as an OTLP object graph (an object per attribute and per value) until its
 * batch is sent, then `JSON.stringify`s the batch: on a request that answers in some 30 µs, that graph, its garbage
 * and its stringify cost as much as the request again. Here a span is written once, when it ends, as UTF-8 bytes
 * straight into a block it shares with the spans ended next to it, and the batch copies those bytes: no string is
 * made for a span, to concatenate or to encode. Three things keep the writing short. A field at its default (a
 * count of nothing dropped, an empty list, an UNSET status) is left out, as OTLP/JSON, proto3's JSON mapping, allows:
 * a receiver reads it as the default, and a request's span is a tenth smaller. A KeyValue that repeats the last of
 * its key (the method, the route, the organization, from one request to the next) is its bytes copied. And a time
 * is its digits below 10^15 ns written from a number, with those above kept as long as they stay the same.
 *
 * Ids are 16 and 8 random bytes drawn from the runtime's `crypto.getRandomValues` in blocks, never from the engine's
 * `Random`, so a seeded engine answers the same bytes traced or not (kernel/Telemetry.ts). An id nothing read before
 * the span ended is written as hex from those bytes, and read back from what was written if asked for later.
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

/** Each byte's two hex digits, as ASCII. */
const hexDigits = new Uint8Array(512)
for (let byte = 0; byte < 256; byte++) {
  hexDigits[byte * 2] = hexOfByte[byte]!.charCodeAt(0)
  hexDigits[byte * 2 + 1] = hexOfByte[byte]!.charCodeAt(1)
}

// --- OTLP/JSON, written as UTF-8 ----------------------------------------------------------------------------------

const encoder = new TextEncoder()
const ascii = (text: string): Uint8Array => encoder.encode(text)
const blockSize = 64 * 1024

/** OTLP's `intValue` is a signed 64-bit integer. */
const int64Bound = 2 ** 63

/** OTLP/JSON writes NaN and the infinities as strings, where `JSON.stringify` writes null. */
const nonFiniteToString = (_key: string, value: unknown) => typeof value === "number" && !Number.isFinite(value) ? String(value) : value

/** Nanoseconds below this are written from a number; the digits above them are text kept while they stay the same. */
const timeSplit = 10n ** 15n

/** What a key's last KeyValue was, and its bytes while its value repeats. */
interface KeyEntry {
  /** `{"key":…,"value":` */
  readonly prefix: Uint8Array
  value: unknown
  bytes: Uint8Array | undefined
  /** How often the value was new in a row: a key whose value is new each time (an id) is not copied. */
  changes: number
}

/**
 * Writes spans as OTLP/JSON's UTF-8 into 64 KB blocks, each span after the one before it. What a span wrote is
 * never written over: a span that does not fit is moved, as written so far, to a new block, and the old one is left
 * to the spans in it. So each span is a view of a block, and waits for its batch as that view, not as a string.
 */
class Writer {
  block = new Uint8Array(blockSize)
  at = 0
  /** Where the span being written began. */
  start = 0
  private timeBase = -1n
  private timeHigh: Uint8Array = new Uint8Array(0)
  private readonly keys = new Map<string, KeyEntry>()

  /** Makes room for `bytes` more. */
  room(bytes: number): void {
    if (this.at + bytes <= this.block.length) return
    const written = this.at - this.start
    const next = new Uint8Array(Math.max(blockSize, (written + bytes) * 2))
    next.set(this.block.subarray(this.start, this.at))
    this.block = next
    this.start = 0
    this.at = written
  }

  /** Bytes made once (the fragments of the encoding). */
  bytes(bytes: Uint8Array): void {
    const length = bytes.length
    this.room(length)
    const block = this.block
    let at = this.at
    if (length < 32) for (let i = 0; i < length; i++) block[at++] = bytes[i]!
    else (block.set(bytes, at), at += length)
    this.at = at
  }

  /** Text that is ASCII (digits, hex): as it is. */
  ascii(text: string): void {
    const length = text.length
    this.room(length)
    const block = this.block
    let at = this.at
    for (let i = 0; i < length; i++) block[at++] = text.charCodeAt(i)
    this.at = at
  }

  /** `text` as a JSON string: most of a span's texts are ASCII with nothing to escape, copied a unit a byte. */
  string(text: string): void {
    const length = text.length
    this.room(length + 2)
    const block = this.block
    let at = this.at
    block[at++] = 0x22
    for (let i = 0; i < length; i++) {
      const unit = text.charCodeAt(i)
      // A control, `"`, `\` or anything past ASCII: JSON's own escapes, then UTF-8.
      if (unit < 0x20 || unit > 0x7e || unit === 0x22 || unit === 0x5c) return this.encoded(JSON.stringify(text))
      block[at++] = unit
    }
    block[at++] = 0x22
    this.at = at
  }

  /** Any text as UTF-8 (at most 3 bytes for each UTF-16 unit; a lone surrogate is escaped by `JSON.stringify`). */
  encoded(text: string): void {
    this.room(text.length * 3)
    this.at += encoder.encodeInto(text, this.block.subarray(this.at)).written
  }

  /** Nanoseconds since the epoch as a JSON string of decimal digits, without a big integer's `toString`. */
  time(nanos: bigint): void {
    let low = nanos - this.timeBase
    if (this.timeBase < 0n || low < 0n || low >= timeSplit) {
      this.timeBase = nanos - nanos % timeSplit
      this.timeHigh = this.timeBase === 0n ? new Uint8Array(0) : ascii(String(nanos / timeSplit))
      low = nanos - this.timeBase
    }
    this.bytes(quote)
    const high = this.timeHigh
    const rest = Number(low)
    if (high.length === 0) this.ascii(String(rest))
    else {
      this.bytes(high)
      // 15 digits, zeros first, in two runs that small-integer arithmetic takes (a number below 2^53 is exact).
      this.room(15)
      const upper = Math.floor(rest / 1e8)
      this.digits(upper, 7)
      this.digits(rest - upper * 1e8, 8)
    }
    this.bytes(quote)
  }

  /** `value` (below 10^count, at most 10^9) as `count` decimal digits, zeros first. */
  private digits(value: number, count: number): void {
    const block = this.block
    let rest = value | 0
    const at = this.at
    for (let i = at + count - 1; i >= at; i--) {
      const tenth = (rest / 10) | 0
      block[i] = 0x30 + rest - tenth * 10
      rest = tenth
    }
    this.at = at + count
  }

  /** `bytes` random bytes as a JSON string of hex digits: an id nobody read, which needs no string. */
  randomId(bytes: number): void {
    if (drawn + bytes > pool.length) {
      globalThis.crypto.getRandomValues(pool)
      drawn = 0
    }
    this.room(bytes * 2 + 2)
    const block = this.block
    let at = this.at
    block[at++] = 0x22
    for (const end = drawn + bytes; drawn < end; drawn++) {
      const byte = pool[drawn]! * 2
      block[at++] = hexDigits[byte]!
      block[at++] = hexDigits[byte + 1]!
    }
    block[at++] = 0x22
    this.at = at
  }

  /** An attribute's value as OTLP/JSON's AnyValue, as Effect's `unknownToAttributeValue` makes it. */
  anyValue(value: unknown): void {
    switch (typeof value) {
      case "string":
        this.bytes(stringValue)
        this.string(value)
        return this.bytes(closeBrace)
      case "boolean":
        return this.bytes(value ? boolTrue : boolFalse)
      case "number":
        // A finite number's JSON is its `String`; an unsafe integer is written as a string, which JSON cannot round.
        if (Number.isInteger(value) && value >= -int64Bound && value < int64Bound) {
          this.bytes(intValue)
          this.ascii(Number.isSafeInteger(value) ? String(value) : `"${BigInt(value)}"`)
        } else {
          this.bytes(doubleValue)
          this.ascii(Number.isFinite(value) ? String(value) : `"${value}"`)
        }
        return this.bytes(closeBrace)
      default:
        // Arrays, big integers and objects are rare on a span: Effect's own conversion.
        return this.encoded(JSON.stringify(OtlpResource.unknownToAttributeValue(value), nonFiniteToString))
    }
  }

  /** One KeyValue; one that repeats the last of its key (the same key and value) is its bytes copied. */
  keyValue(key: string, value: unknown): void {
    let entry = this.keys.get(key)
    if (entry === undefined) {
      entry = { prefix: ascii(`{"key":${JSON.stringify(key)},"value":`), value: undefined, bytes: undefined, changes: 0 }
      // A span may be given names without end (an annotation's); those are written each time.
      if (this.keys.size < 1_000) this.keys.set(key, entry)
    } else if (entry.bytes !== undefined && entry.value === value) return this.bytes(entry.bytes)
    const from = this.at - this.start
    this.bytes(entry.prefix)
    this.anyValue(value)
    this.bytes(closeBrace)
    const simple = typeof value === "string" || typeof value === "number" || typeof value === "boolean"
    if (simple && entry.changes < 8) {
      entry.changes = entry.value === value ? 0 : entry.changes + 1
      entry.value = value
      entry.bytes = this.block.slice(this.start + from, this.at)
    } else entry.bytes = undefined
  }

  /** `"name":[KeyValue,…]` and `prefix`, left out when there are none (an empty list is OTLP's default). */
  attributes(entries: Iterable<readonly [string, unknown]> | undefined, extra?: Uint8Array): void {
    let first = true
    if (entries instanceof Map) {
      // A span's own: walked with `forEach`, which makes no array for each entry.
      this.listed = 0
      entries.forEach(this.mapEntry)
      first = this.listed === 0
    } else if (entries !== undefined) {
      for (const [key, value] of entries) {
        this.bytes(first ? attributesOpen : comma)
        first = false
        this.keyValue(key, value)
      }
    }
    if (extra !== undefined) {
      this.bytes(first ? attributesOpen : comma)
      first = false
      this.bytes(extra)
    }
    if (!first) this.bytes(closeBracket)
  }

  /** How many entries `mapEntry` has written of the list being written. */
  private listed = 0
  private readonly mapEntry = (value: unknown, key: string): void => {
    this.bytes(this.listed++ === 0 ? attributesOpen : comma)
    this.keyValue(key, value)
  }

  /** The span's bytes: a view of its block, the next span written after it. */
  done(): Uint8Array {
    const span = this.block.subarray(this.start, this.at)
    this.start = this.at
    return span
  }
}

const quote = ascii(`"`)
const comma = ascii(",")
const closeBrace = ascii("}")
const closeBracket = ascii("]")
const stringValue = ascii(`{"stringValue":`)
const intValue = ascii(`{"intValue":`)
const doubleValue = ascii(`{"doubleValue":`)
const boolTrue = ascii(`{"boolValue":true}`)
const boolFalse = ascii(`{"boolValue":false}`)
const attributesOpen = ascii(`,"attributes":[`)
const interrupted = ascii(`{"key":"effect.fiber.interrupted","value":{"boolValue":true}}`)
const traceIdOpen = ascii(`{"traceId":`)
const spanIdOpen = ascii(`,"spanId":`)
const parentOpen = ascii(`,"parentSpanId":`)
const nameOpen = ascii(`,"name":`)
const kinds: Record<Tracer.SpanKind, Uint8Array> = {
  internal: ascii(`,"kind":1,"startTimeUnixNano":`),
  server: ascii(`,"kind":2,"startTimeUnixNano":`),
  client: ascii(`,"kind":3,"startTimeUnixNano":`),
  producer: ascii(`,"kind":4,"startTimeUnixNano":`),
  consumer: ascii(`,"kind":5,"startTimeUnixNano":`)
}
const endOpen = ascii(`,"endTimeUnixNano":`)
const eventsOpen = ascii(`,"events":[`)
const eventOpen = ascii(`{"name":`)
const eventTime = ascii(`,"timeUnixNano":`)
const linksOpen = ascii(`,"links":[`)
const statusOk = ascii(`,"status":{"code":1}}`)
const statusErrorOpen = ascii(`,"status":{"code":2,"message":`)
const closeTwo = ascii("}}")

type Event = readonly [name: string, startTime: bigint, attributes: Record<string, unknown> | undefined]

const entriesOf = (attributes: Readonly<Record<string, unknown>> | undefined) => attributes === undefined ? undefined : Object.entries(attributes)

/** The events of an exception, as Effect's tracer records a failure's errors. */
const exceptionAttributes = (error: { readonly name: string; readonly message: string; readonly stack?: string | undefined }): Array<[string, unknown]> => [
  ["exception.type", error.name],
  ["exception.message", error.message],
  ["exception.stacktrace", error.stack ?? "No stack trace available"]
]

/**
 * A span's OTLP/JSON Span message, ended at `endTime` with `exit`. Fields at their default (no parent, no attributes,
 * events or links, nothing dropped, an UNSET status) are left out, as OTLP/JSON (proto3's JSON mapping) allows:
 * a receiver reads them as their defaults.
 */
const writeSpan = (w: Writer, span: OtlpSpan, startTime: bigint, endTime: bigint, exit: Exit.Exit<unknown, unknown>): Uint8Array => {
  let errors: ReturnType<typeof Cause.prettyErrors> | undefined
  let interruptedOnly = false
  if (exit._tag === "Failure") {
    if (Cause.hasInterruptsOnly(exit.cause)) interruptedOnly = true
    else errors = Cause.prettyErrors(exit.cause, { includeCauseInStack: true })
  }
  // A root span's ids that nothing read (no child, no propagation) are drawn here, straight into the block.
  // Where they are is kept, so that one read later (a log after the end) is the id that was sent.
  w.bytes(traceIdOpen)
  let traceAt = -1
  if (span.traceIdValue === undefined && span.parent._tag === "None") {
    traceAt = w.at - w.start + 1
    w.randomId(16)
  } else w.string(span.traceId.padStart(32, "0"))
  w.bytes(spanIdOpen)
  let spanAt = -1
  if (span.spanIdValue === undefined) {
    spanAt = w.at - w.start + 1
    w.randomId(8)
  } else w.string(span.spanId)
  if (span.parent._tag === "Some") {
    w.bytes(parentOpen)
    w.string(span.parent.value.spanId)
  }
  w.bytes(nameOpen)
  w.string(span.name)
  w.bytes(kinds[span.kind])
  w.time(startTime)
  w.bytes(endOpen)
  w.time(endTime)
  w.attributes(span.attributeMap, interruptedOnly ? interrupted : undefined)
  const hasExceptions = errors !== undefined && errors.length > 0
  if (span.eventList !== undefined || hasExceptions) {
    w.bytes(eventsOpen)
    let first = true
    const event = (name: string, time: bigint, attributes: Iterable<readonly [string, unknown]> | undefined) => {
      if (!first) w.bytes(comma)
      first = false
      w.bytes(eventOpen)
      w.string(name)
      w.bytes(eventTime)
      w.time(time)
      w.attributes(attributes)
      w.bytes(closeBrace)
    }
    if (span.eventList !== undefined) for (const [name, time, attributes] of span.eventList) event(name, time, entriesOf(attributes))
    if (errors !== undefined) for (const error of errors) event("exception", endTime, exceptionAttributes(error))
    w.bytes(closeBracket)
  }
  if (span.links.length > 0) {
    w.bytes(linksOpen)
    let first = true
    for (const link of span.links) {
      if (!first) w.bytes(comma)
      first = false
      w.bytes(traceIdOpen)
      w.string(link.span.traceId.padStart(32, "0"))
      w.bytes(spanIdOpen)
      w.string(link.span.spanId)
      w.attributes(Object.entries(link.attributes))
      w.bytes(closeBrace)
    }
    w.bytes(closeBracket)
  }
  if (exit._tag === "Success" || (errors !== undefined && errors.length === 0)) w.bytes(statusOk)
  else if (errors !== undefined) {
    w.bytes(statusErrorOpen)
    w.string(errors[0]!.message)
    w.bytes(closeTwo)
  } else w.bytes(closeBrace)
  const written = w.done()
  if (traceAt >= 0 || spanAt >= 0) span.wroteIds(written, traceAt, spanAt)
  return written
}

/** Hex digits written to a block, read back as text. */
const textOf = (bytes: Uint8Array, at: number, length: number): string => String.fromCharCode.apply(null, bytes.subarray(at, at + length) as unknown as Array<number>)

// --- the span ----------------------------------------------------------------------------------------------------

type SpanOptions = Parameters<Tracer.Tracer["span"]>[0]

/** A span that writes itself as OTLP/JSON when it ends and hands its bytes to `push` (when sampled). */
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
  /** The ids once read; a span whose ids are never read has them written at its end, with no string made. */
  traceIdValue: string | undefined = undefined
  spanIdValue: string | undefined = undefined
  private readonly writer: Writer
  private readonly push: (span: Uint8Array) => void

  constructor(options: SpanOptions, writer: Writer, push: (span: Uint8Array) => void) {
    this.name = options.name
    this.parent = options.parent
    this.annotations = options.annotations
    this.links = options.links
    this.kind = options.kind
    this.sampled = options.sampled
    this.status = { _tag: "Started", startTime: options.startTime }
    this.writer = writer
    this.push = push
  }

  private written: Uint8Array | undefined = undefined
  private writtenTraceAt = -1
  private writtenSpanAt = -1

  get traceId(): string {
    return this.traceIdValue ??= this.writtenTraceAt >= 0
      ? textOf(this.written!, this.writtenTraceAt, 32)
      : this.parent._tag === "Some" ? this.parent.value.traceId : randomHex(16)
  }

  get spanId(): string {
    return this.spanIdValue ??= this.writtenSpanAt >= 0 ? textOf(this.written!, this.writtenSpanAt, 16) : randomHex(8)
  }

  /** The ids `writeSpan` drew, where they are in the span's bytes: read from there if asked for later. */
  wroteIds(written: Uint8Array, traceAt: number, spanAt: number): void {
    this.written = written
    this.writtenTraceAt = traceAt
    this.writtenSpanAt = spanAt
  }

  get attributes(): Map<string, unknown> {
    return this.attributeMap ??= new Map()
  }

  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    if (this.status._tag === "Ended") return
    const startTime = this.status.startTime
    this.status = { _tag: "Ended", startTime, endTime, exit }
    if (this.sampled) this.push(writeSpan(this.writer, this, startTime, endTime, exit))
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
    // A count of nothing dropped is OTLP's default, left out here as in each span.
    const shown = resource.droppedAttributesCount === 0 ? { attributes: resource.attributes } : resource
    const head = `{"resourceSpans":[{"resource":${JSON.stringify(shown, nonFiniteToString)},"scopeSpans":[{"scope":${JSON.stringify({ name: "effect", version: Version.getCurrentVersion() })},"spans":[`
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
    // The tracer's spans share one writer: a span is written whole when it ends, so no two are written at once.
    const writer = new Writer()
    const push = (span: Uint8Array) => exporter.push(span)
    return Tracer.make({ span: (spanOptions) => new OtlpSpan(spanOptions, writer, push) })
  })

/** `make` as the context's `Tracer`, with the `Flusher` that sends what is left. */
export const layer = (options: OtlpSpansOptions): Layer.Layer<OtlpExporter.Flusher, never, HttpClient.HttpClient> =>
  Layer.effect(Tracer.Tracer, make(options)).pipe(Layer.provideMerge(OtlpExporter.layerFlusher))
