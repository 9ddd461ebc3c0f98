/**
 * The one error every engine operation fails with, and the one encoder that renders it as RFC 9457.
 *
 * Domain code fails with `ApiError` (a catalog code plus this occurrence's detail); the HTTP pipeline renders it
 * with the request's `instance`, `correlationId` and `timestamp`. Nothing else renders errors.
 */
import { docsUrl, ErrorCatalog, type ErrorCode, type ErrorEntry, type Problem } from "@fos/contract"
import { Data } from "effect"

export class ApiError extends Data.TaggedError("ApiError")<{
  readonly code: ErrorCode
  readonly detail: string
  readonly errors?: ReadonlyArray<ErrorEntry>
  readonly retryAfterSeconds?: number
  /** Multipart rejections name the offending form field. */
  readonly field?: string
  /** UNSUPPORTED_PAIR: the pair, each chain null for a fiat asset. */
  readonly pair?: PairDetails
  /**
   * This occurrence's own resolution, where the catalog's general one would mislead (a 409 that no retry fixes);
   * the catalog's otherwise.
   */
  readonly resolution?: string
}> {
  get status(): number {
    return ErrorCatalog[this.code].status
  }

  /**
   * `"<CODE>: <detail>"`, so that an ApiError a host meets outside a request (a rejection of `engine.run`, a log
   * line, `String(error)`) says what it is, as any Error does.
   */
  override get message(): string {
    return `${this.code}: ${this.detail}`
  }

  /** The problem this error renders as, but for what only a request knows (`instance`, `correlationId`, `timestamp`, `docs`). */
  get problem(): ErrorProblem {
    return problemOf(this)
  }
}

/** A problem as an `ApiError` carries it, before a request gives it its `instance`, `correlationId`, `timestamp` and `docs`. */
export type ErrorProblem = Omit<ProblemBody, "instance" | "correlationId" | "timestamp" | "docs">

/** The members of the problem that follow from the error alone, in the wire's order. */
const headOf = (error: ApiError): Record<string, unknown> => {
  const spec = ErrorCatalog[error.code]
  return { type: error.code, title: spec.title, status: spec.status, detail: error.detail, resolution: error.resolution ?? spec.resolution }
}

/** The members only some problems have, after the ones every problem has, as the wire orders them. */
const withExtras = (error: ApiError, body: Record<string, unknown>): Record<string, unknown> => {
  if (error.errors !== undefined) body.errors = error.errors
  if (error.retryAfterSeconds !== undefined) body.retryAfterSeconds = error.retryAfterSeconds
  if (error.field !== undefined) body.field = error.field
  if (error.pair !== undefined) Object.assign(body, error.pair)
  return body
}

const problemOf = (error: ApiError): ErrorProblem => withExtras(error, headOf(error)) as unknown as ErrorProblem

/** The members UNSUPPORTED_PAIR adds to its problem. */
export interface PairDetails {
  readonly sourceAsset: string
  readonly destinationAsset: string
  readonly sourceChain: string | null
  readonly destinationChain: string | null
}

/** Shorthand: `fail("NOT_FOUND", "No customer with this id.")`. */
export const apiError = (
  code: ErrorCode,
  detail: string,
  extra?: { errors?: ReadonlyArray<ErrorEntry>; retryAfterSeconds?: number; field?: string; pair?: PairDetails; resolution?: string }
): ApiError => new ApiError({ code, detail, ...extra })

/**
 * 400 VALIDATION_ERROR: the request's body (or query) broke its schema or a rule checked with it, each problem an
 * entry of `errors[]` named by its JSON Pointer. The one wording every such answer has.
 */
export const invalidRequest = (errors: ReadonlyArray<ErrorEntry>, part: "body" | "query" | "path" | "headers" = "body"): ApiError =>
  apiError("VALIDATION_ERROR", `The request ${part} failed validation; see errors[].`, { errors })

/** A problem as fos renders it: the contract's `Problem`, its `type` a code of the catalog. */
export type ProblemBody = Omit<Problem, "type"> & { readonly type: ErrorCode }

/**
 * Renders an `ApiError` for one request. `instance` is the resolved path with the query stripped; `origin` is the
 * request's own (`https://host:port`, no trailing slash), so `docs`, the spec's "string (URL)", is an absolute URL
 * of the error reference on the fos that answered.
 */
export const render = (
  error: ApiError,
  request: { readonly instance: string; readonly correlationId: string; readonly timestamp: string; readonly origin: string }
): ProblemBody => {
  const body = headOf(error)
  body.docs = request.origin + docsUrl(error.code)
  body.instance = request.instance
  body.correlationId = request.correlationId
  body.timestamp = request.timestamp
  withExtras(error, body)
  return body as unknown as ProblemBody
}

/** Escapes one JSON Pointer reference token (RFC 6901). */
export const pointerToken = (key: PropertyKey): string => String(key).replaceAll("~", "~0").replaceAll("/", "~1")

/** Builds a JSON Pointer from a path. */
export const toPointer = (path: ReadonlyArray<PropertyKey>): string => path.map((k) => "/" + pointerToken(k)).join("")
