/**
 * The request log: one entry per answered request (method, path, status, the problem's `type` on an error,
 * duration, correlation id, organization),
 * what `fos serve` prints a line of, pretty or as JSON, unless `--quiet`. An embedded engine logs nothing unless
 * given a `requestLog` function (docs/decisions.md, "Request logs"). Apart from this log, and whatever it is set to,
 * every engine keeps each organization's last requests in memory for `GET /sandbox/v2/simulate/requests` and the
 * live stream (LiveFeed.ts).
 *
 * An entry never holds a header, a query string or a body, so no API key, webhook secret or operator token can
 * reach a log. Its time and duration are real time (the engine's `RealClock`), whatever the engine's clock says: a
 * log is read against the wall clock, and a virtual clock that stands still would give every request 0 ms.
 */
import type { Environment } from "@fos/contract"
import { Context } from "effect"
import type { HttpServerResponse } from "effect/http"
import type { LogRecord } from "./Telemetry.ts"

export interface RequestLogEntry {
  /** When the answer was ready, in real time: ISO 8601, UTC, milliseconds. */
  readonly time: string
  readonly method: string
  /** The path as requested, base address included, without the query string. */
  readonly path: string
  readonly status: number
  /** The problem's `type` (its error code) when the answer is one; what a reader of a 4xx or 5xx line asks first. */
  readonly type?: string | undefined
  /** From the request reaching the pipeline to its answer, in real time. */
  readonly durationMs: number
  readonly correlationId: string
  /** The caller's organization, once its key was accepted. */
  readonly organizationId: string | undefined
  /** The base address's environment; undefined outside `/sandbox` and `/live`. */
  readonly environment: Environment | undefined
  /**
   * The client's IP address: the connection's on a server, the one the embedding host gave `engine.fetch`
   * (127.0.0.1 when it gave none). `formatRequestLog` leaves it out of the server's line.
   */
  readonly clientAddress?: string | undefined
  /** The id of the sandbox fault that shaped the answer (an injected problem, latency, a lost answer), if one did. */
  readonly injected?: string | undefined
}

export type RequestLogger = (entry: RequestLogEntry) => void

/** Where the edge sends each request's entry; nothing is logged (and no clock read for it) when undefined. */
export class RequestLog extends Context.Reference<RequestLogger | undefined>("fos/http/RequestLog", {
  defaultValue: () => undefined
}) {}

/**
 * The problem `type` of an error answer, read from the start of its body, where every problem puts it
 * (`{"type":"CODE",...`); undefined for a success or a body that is not one. Only a logged error pays for it.
 */
export const problemTypeOf = (response: HttpServerResponse.HttpServerResponse): string | undefined => {
  if (response.status < 400) return undefined
  const body = response.body
  const head = body._tag === "Uint8Array"
    ? new TextDecoder().decode(body.body.subarray(0, 80))
    : body._tag === "Raw" && typeof body.body === "string"
    ? body.body.slice(0, 80)
    : ""
  return /^\{"type":"([A-Z][A-Z0-9_]*)"/.exec(head)?.[1]
}

export type RequestLogFormat = "pretty" | "json"

const statusColor = (status: number): string => (status >= 500 ? "31" : status >= 400 ? "33" : status >= 300 ? "36" : "32")

/**
 * An entry as a log record (Telemetry.ts): `info`, or `error` for a 5xx answer, its message `METHOD path status`,
 * its time the record's `timestamp`, and the entry's members as fields, those it does not have left out (the client's
 * address always: a log pipeline keeps what it gets longer than fos does).
 */
export const requestRecord = (entry: RequestLogEntry): LogRecord => ({
  level: entry.status >= 500 ? "error" : "info",
  message: `${entry.method} ${entry.path} ${entry.status}`,
  timestamp: entry.time,
  method: entry.method,
  path: entry.path,
  status: entry.status,
  ...(entry.type === undefined ? {} : { type: entry.type }),
  durationMs: Math.round(entry.durationMs * 1000) / 1000,
  correlationId: entry.correlationId,
  ...(entry.organizationId === undefined ? {} : { organizationId: entry.organizationId }),
  ...(entry.environment === undefined ? {} : { environment: entry.environment }),
  ...(entry.injected === undefined ? {} : { injected: entry.injected })
})

/**
 * One line of the log. `json`: the entry's log record (`requestRecord`) as one JSON object, as `--log-format json`
 * writes every record of the server. `pretty`: `time method path status [type] duration organization
 * correlation-id`, the status coloured by class when `color` (a terminal), the type only on an error.
 */
export const formatRequestLog = (entry: RequestLogEntry, format: RequestLogFormat, options: { readonly color?: boolean } = {}): string => {
  const durationMs = Math.round(entry.durationMs * 1000) / 1000
  if (format === "json") return JSON.stringify(requestRecord(entry))
  const status = options.color === true ? `\u001b[${statusColor(entry.status)}m${entry.status}\u001b[0m` : String(entry.status)
  const duration = `${durationMs < 10 ? durationMs.toFixed(1) : Math.round(durationMs)}ms`
  const dim = (text: string) => (options.color === true ? `\u001b[2m${text}\u001b[0m` : text)
  const type = entry.type === undefined ? "" : ` ${entry.type}`
  const injected = entry.injected === undefined ? "" : ` injected:${entry.injected}`
  return `${dim(entry.time)} ${entry.method.padEnd(6)} ${entry.path} ${status}${type} ${duration.padStart(6)} ${entry.organizationId ?? "-"} ${dim(entry.correlationId)}${injected}`
}
