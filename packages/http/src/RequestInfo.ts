/**
 * What the pipeline (Pipeline.ts) knows of one request as it passes it from the edge to the gate to the write, the
 * request's headers and path as sent, and the two shapes of work the pipeline runs: a route's under the edge, and
 * an endpoint's under the gate. The modules of the pipeline all read these; this one reads none of them.
 */
import type { Auth, Engine, RateLimit } from "@fos/core"
import { Problem, Wire } from "@fos/core"
import type { Environment } from "@fos/contract"
import type { Clock, Effect, Schema } from "effect"
import type { HttpServerRequest, HttpServerResponse } from "effect/http"

/** What the pipeline knows of one request; filled in as the request moves through it. */
export interface RequestInfo {
  readonly correlationId: string
  readonly clientCorrelationId: string | undefined
  /** The base address's environment; undefined on the operator surface, which has none. */
  readonly environment: Environment | undefined
  /** The resolved path, base included, query stripped: the problem's `instance`. */
  readonly instance: string
  readonly clientIp: string
  /** The caller the host that embeds the engine named beside the request (HostIdentity.ts), in the place of a key. */
  readonly hostCaller: Auth.HostCaller | undefined
  rate: RateLimit.Decision | undefined
  /** The caller's organization, once its key is accepted (for the request log). */
  organizationId: string | undefined
  /**
   * The clock the request runs on, once its caller is known, under the virtual clock: its sandbox's, read once
   * (docs/clock.md). Undefined: the engine's.
   */
  clock: Clock.Clock | undefined
  /** When the request reached the edge, on the real clock's monotonic nanoseconds (for durations only). */
  readonly startedNs: bigint
  /** The request itself: a problem's `docs` is on its origin, worked out only when a problem is rendered. */
  readonly request: HttpServerRequest.HttpServerRequest
  /** The sandbox fault that shaped the answer, if one did (Faults.ts), for the request log. */
  injected: string | undefined
  /** The route's pattern and the endpoint's operation id, once a route matched, for the metrics (kernel/Metrics.ts). */
  route?: string | undefined
  operation?: string | undefined
  /** The JSON body's text, once the write read it (LiveFeed.ts keeps it, redacted, in the recent requests). */
  body?: string | undefined
  /** Whether the answer was replayed from an idempotency record (Write.ts), for the recent requests. */
  replayed?: boolean | undefined
}

/**
 * A route's work under the edge: the request and what the edge knows of it, to a response or a problem. The edge
 * runs it in a context that holds the engine's services.
 */
export type RouteRun = (
  request: HttpServerRequest.HttpServerRequest,
  info: RequestInfo
) => Effect.Effect<HttpServerResponse.HttpServerResponse, Problem.ApiError, Engine.EngineServices>

/**
 * An endpoint's run (Router.ts compiles one per endpoint): decoding, the handler and its response, over the request,
 * its body text as the gate read and checked it (undefined on reads and uploads), and the caller the gate admitted.
 */
export type EndpointRun = (
  request: HttpServerRequest.HttpServerRequest,
  body: string | undefined,
  caller: Auth.Caller
) => Effect.Effect<HttpServerResponse.HttpServerResponse, Problem.ApiError>

/** The media type of every JSON body, read or written. */
export const jsonType = "application/json"

/**
 * A long JSON body's value, as the write's check parsed it (Write.ts, `readJsonBody`), by its request: the endpoint
 * run takes it (`parsedBody`) rather than parse megabytes again, which held the thread as long as the first parse.
 */
const parsedLongBodies = new WeakMap<HttpServerRequest.HttpServerRequest, { readonly text: string; readonly value: unknown }>()

/** Keeps the value a long body's check parsed, for `parsedBody`. */
export const keepParsedBody = (request: HttpServerRequest.HttpServerRequest, text: string, value: unknown): void => {
  parsedLongBodies.set(request, { text, value })
}

/** The value of the request's body `text`: the one its check kept (once), else parsed now. */
export const parsedBody = (request: HttpServerRequest.HttpServerRequest, text: string): unknown => {
  const kept = parsedLongBodies.get(request)
  if (kept === undefined || kept.text !== text) return JSON.parse(text)
  parsedLongBodies.delete(request)
  return kept.value
}

/**
 * One request header, by its lower-case name. Effect's `request.headers` copies every header of the request into a
 * record of its own on first read, lower-casing each name, and the edge reads two or three headers on every
 * request. Node's server holds that record already, with the names lower-cased and a repeated header's values
 * joined with ", " as Effect's copy has them, so on Node the edge reads Node's; a web `Request` (Bun, Deno,
 * `engine.fetch`) holds a `Headers` object instead, read through Effect's copy.
 */
export const headerOf = (request: HttpServerRequest.HttpServerRequest, name: string): string | undefined => {
  const own = (request.source as { readonly headers?: unknown }).headers
  if (typeof own !== "object" || own === null || typeof (own as { readonly get?: unknown }).get === "function") return request.headers[name]
  const value = (own as Readonly<Record<string, string | ReadonlyArray<string> | undefined>>)[name]
  return value === undefined || typeof value === "string" ? value : value.join(", ")
}

/**
 * The path of a request target: up to its query, or its fragment. A request over HTTP never carries a fragment,
 * but a `Request` handed to the web handler may (`engine.fetch(new URL(problem.docs, base))`), and it is not part
 * of the path.
 */
export const pathOf = (url: string): string => {
  for (let i = 0; i < url.length; i++) {
    const c = url.charCodeAt(i)
    if (c === 63 || c === 35) return url.slice(0, i) // ? or #
  }
  return url
}

/** Which part of a request failed to decode. */
export type SchemaFailureKind = "Params" | "Query" | "Headers" | "Payload"

/** Maps a decoding failure of a request's part to the spec's problem. */
export const fromSchemaError = (kind: SchemaFailureKind, error: Schema.SchemaError): Problem.ApiError => {
  const failure = Wire.decodeFailure(error.issue)
  if (kind === "Payload") {
    return Problem.invalidRequest(failure.errors)
  }
  if (failure.code === "INVALID_OID_FORMAT") {
    const first = failure.errors.find((e) => e.detail.includes(" id ")) ?? failure.errors[0]!
    return Problem.apiError("INVALID_OID_FORMAT", `${first.pointer.slice(1) || "The identifier"} ${first.detail}.`)
  }
  const where = kind === "Query" ? "query" : kind === "Params" ? "path" : "headers"
  return Problem.invalidRequest(failure.errors, where)
}
