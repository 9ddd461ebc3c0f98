/**
 * What an engine tells the world beside its answers: its log records, to a host's function (`createEngine`'s
 * `logger`), and its traces, metrics and logs over OTLP/HTTP to a collector (`telemetry.otlp`), as Effect's own
 * observability modules (`effect/observability`) export them (docs/observability.md).
 *
 * fos logs through Effect (`Effect.log...`), with what it knows of the work as log annotations (the request's
 * `correlationId` and `organizationId`, a timer's `timer` and `kind`, ...): an Effect host that serves the engine
 * gets the records through its own `Logger`, as any Effect program's. `createEngine` with a `logger` replaces
 * Effect's console logger by one that hands each record to the function, so nothing reaches standard output.
 *
 * A log record never holds a header, a body or a query string; what fos logs of a failure is its cause, and any API
 * key or URL password a cause's text holds is masked before it leaves (`redactSecrets`).
 *
 * The export runs in the background: a request never waits for it, and a collector that is down or slow costs a
 * request nothing. Effect's exporter sends a batch every few seconds, retries a failed one three times, then drops
 * it and pauses for a minute; fos logs the first failure once. Closing the engine sends what is left, for at most
 * `otlpShutdownTimeoutMs`.
 */
import { Cause, type Clock, Context, Effect, Layer, Logger, References, type Tracer } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { type OtlpExporter, OtlpLogger, OtlpMetrics, OtlpSerialization } from "effect/observability"
import { toIso } from "@fos/contract"
import * as OtlpSpans from "./OtlpSpans.ts"

/** A record's level, as OpenTelemetry's severity texts name them (lower case). */
export type LogLevel = "trace" | "debug" | "info" | "warn" | "error" | "fatal"

/**
 * One log record of the engine: its level, message and time (ISO 8601, UTC, real time), the request's correlation id
 * and organization when the record is of a request, and the record's other fields (`timer`, `kind`, `cause`, ...).
 */
export interface LogRecord {
  readonly level: LogLevel
  readonly message: string
  readonly timestamp?: string
  readonly correlationId?: string
  readonly organizationId?: string
  readonly [field: string]: unknown
}

/**
 * A record as a line for people (`fos serve`'s `pretty`): time, level and message, then its fields as `name=value`
 * (JSON values), and a cause on the lines below.
 */
export const formatLogRecord = (record: LogRecord): string => {
  const { level, message, timestamp, cause, ...fields } = record
  const named = Object.entries(fields).map(([name, value]) => ` ${name}=${typeof value === "string" && /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value)}`).join("")
  const below = typeof cause === "string" ? `\n${cause.replace(/^/gm, "  ")}` : ""
  return `${timestamp ?? ""} ${level.toUpperCase()} ${message}${named}${below}`.trimStart()
}

/** A host's logger: called once per record, synchronously, in the fiber that logged (so it should not block). */
export type EngineLogger = (record: LogRecord) => void

/** Where OTLP/HTTP export goes: a collector's base URL (`/v1/traces`, `/v1/metrics` and `/v1/logs` are appended). */
export type OtlpOption =
  | string
  | {
    readonly url: string
    /** Sent with every export request (a vendor's API key); never logged. */
    readonly headers?: Readonly<Record<string, string>>
    /** The resource's `service.name`; `"fos"` when not given. */
    readonly serviceName?: string
  }

/** What the engine's telemetry goes to. */
export interface TelemetryOptions {
  /** Receives every span of the engine; an Effect host may instead provide its `Tracer` to `layerEmbedded`. */
  readonly tracer?: Tracer.Tracer
  readonly otlp?: OtlpOption
  /**
   * The HTTP client the OTLP export sends with: `fetch`, which every runtime has, when not given. `fos serve` gives
   * `node:http`'s, which sends a batch for a fraction of `fetch`'s CPU (adapters/serve's OtlpClient.ts).
   */
  readonly otlpClient?: Layer.Layer<HttpClient.HttpClient> | undefined
}

/** How long a close waits for the last export of each signal: then what is left is dropped. */
export const otlpShutdownTimeoutMs = 3_000

const levels: Record<string, LogLevel> = { Trace: "trace", Debug: "debug", Info: "info", Warn: "warn", Error: "error", Fatal: "fatal" }

/**
 * Text with what must never reach a log masked: an API key (`ck_sandbox_...`, `ck_live_...`), a webhook secret
 * (`whsec_...`) and a URL's password (`postgres://user:secret@host`), which a driver's error may quote.
 */
export const redactSecrets = (text: string): string =>
  text.replace(/ck_(sandbox|live)_[0-9a-f]{8,}/g, "ck_$1_[redacted]").replace(/whsec_[0-9a-f]{8,}/g, "whsec_[redacted]")
    .replace(/(\/\/[^/\s:@]*):[^@\s/]*@/g, "$1:[redacted]@")

/**
 * A record sent to the export alone (`exportOnly`): the host's logger does not get it. `fos serve` sends its start
 * lines so, having printed them itself.
 */
export class ExportOnly extends Context.Reference<boolean>("fos/http/ExportOnly", { defaultValue: () => false }) {}

/** `log` for the export alone (see `ExportOnly`). */
export const exportOnly = <A, E, R>(log: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => Effect.provideService(log, ExportOnly, true)

/** The record of one of Effect's log calls: its string parts make the message, its objects' members its fields. */
export const recordOf = (options: Logger.Options<unknown>, realClock: Clock.Clock): LogRecord => {
  const parts = Array.isArray(options.message) ? options.message : [options.message]
  const words: Array<string> = []
  const fields: Record<string, unknown> = { ...options.fiber.getRef(References.CurrentLogAnnotations) }
  for (const part of parts) {
    if (typeof part === "string") words.push(part)
    else if (typeof part === "object" && part !== null && !Array.isArray(part)) Object.assign(fields, part)
    else words.push(String(part))
  }
  if (options.cause.reasons.length > 0) fields.cause = Cause.pretty(options.cause)
  for (const [name, value] of Object.entries(fields)) if (typeof value === "string") fields[name] = redactSecrets(value)
  return {
    ...fields,
    level: levels[options.logLevel] ?? "info",
    message: redactSecrets(words.join(" ")),
    timestamp: toIso(realClock.currentTimeMillisUnsafe())
  }
}

/**
 * The loggers of an engine given a `logger`: one that hands it each record (stamped on `realClock`, whatever the
 * engine's clock), and Effect's tracer logger, which puts a record on the span it was logged in as an event.
 */
export const layerLogger = (logger: EngineLogger, realClock: Clock.Clock): Layer.Layer<never> =>
  Logger.layer([
    Logger.make((options) => {
      if (options.fiber.getRef(ExportOnly)) return
      logger(recordOf(options, realClock))
    }),
    Logger.tracerLogger
  ])

const otlpTarget = (otlp: OtlpOption) => (typeof otlp === "string" ? { url: otlp } : otlp)

/** A URL as a log may show it: without its user and password, its query or its fragment. */
const shownUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`
  } catch {
    return "(not a URL)"
  }
}

/**
 * Checks an `otlp` option: an http(s) URL. Throws a TypeError naming what is wrong, so that `createEngine` refuses
 * it before anything runs.
 */
export const checkOtlp = (otlp: OtlpOption): void => {
  const { url } = otlpTarget(otlp)
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new TypeError(`telemetry.otlp: ${JSON.stringify(url)} is not a URL`)
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new TypeError(`telemetry.otlp: an http:// or https:// URL, not ${parsed.protocol}`)
}

/**
 * OTLP/HTTP export of the traces, metrics and logs of everything built under it (JSON encoding, sent by `sender`:
 * `fetch`, which every runtime has, unless given another). Its own requests are not traced. The first export that fails is logged once, at warning level; the
 * exporter drops what it could not send.
 */
export const layerOtlp = (otlp: OtlpOption, sender: Layer.Layer<HttpClient.HttpClient> = FetchHttpClient.layer): Layer.Layer<OtlpExporter.Flusher> => {
  const target = otlpTarget(otlp)
  let warned = false
  const client = Layer.effect(
    HttpClient.HttpClient,
    Effect.map(HttpClient.HttpClient, (base) =>
      HttpClient.tapError(base, (error) => {
        if (warned) return Effect.void
        warned = true
        return Effect.logWarning(`OTLP export to ${shownUrl(target.url)} failed; telemetry is dropped while the collector does not answer (this is logged once)`).pipe(
          Effect.annotateLogs({ reason: redactSecrets(error.message) })
        )
      }))
  ).pipe(Layer.provide(sender))
  const base = HttpClientRequest.get(target.url.replace(/\/+$/, ""))
  const url = (path: string) => HttpClientRequest.appendUrl(base, path).url
  const resource = { serviceName: target.serviceName ?? "fos" }
  const shutdownTimeout = `${otlpShutdownTimeoutMs} millis` as const
  // Effect's `Otlp.layerJson`, but for its tracer: fos's writes each span's JSON once, at its end (OtlpSpans.ts).
  return Layer.mergeAll(
    OtlpLogger.layer({ url: url("/v1/logs"), resource, headers: target.headers, shutdownTimeout, mergeWithExisting: true }),
    OtlpMetrics.layer({ url: url("/v1/metrics"), resource, headers: target.headers, shutdownTimeout }),
    OtlpSpans.layer({ url: url("/v1/traces"), resource, headers: target.headers, shutdownTimeout })
  ).pipe(Layer.provide(OtlpSerialization.layerJson), Layer.provide(client))
}
