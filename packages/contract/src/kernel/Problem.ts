/**
 * The problem object (RFC 9457) as every error answer carries it: its members, its `errors[]` entries and its
 * `type`, a code of the catalog (Errors.ts). Apart from the catalog, so that the catalog imports nothing and the
 * annotations that name its codes (Annotations.ts) form no cycle with it.
 */
import { Schema } from "effect"
import { ErrorCatalog, type ErrorCode } from "./Errors.ts"
import { openEnum } from "./OpenEnum.ts"
import { UtcTimestamp } from "./Primitives.ts"

/** Which kind of gap an `errors[]` entry names; set by the requirements validator only. */
export const ErrorCategories = ["field", "document", "individual"] as const

/** One entry of a problem's `errors[]`: a JSON Pointer and a detail that never echoes the rejected value. */
export const ProblemEntry = Schema.Struct({
  pointer: Schema.String,
  detail: Schema.String,
  category: Schema.optionalKey(Schema.Literals(ErrorCategories))
})
export type ErrorEntry = typeof ProblemEntry.Type

/** The catalog's codes, as the OpenAPI document names them (`ProblemType`). */
export const ProblemType = Schema.Literals(Object.keys(ErrorCatalog) as Array<ErrorCode>).annotate({
  identifier: "ProblemType",
  description: "A problem's stable `type` code, as this version knows them (docs/errors.md has each one's meaning)."
})

/**
 * An RFC 9457 problem, as every error response carries it, in the order the spec lists its members. `type` is a
 * code of the catalog, or one a later version adds, which a client still decodes (`openEnum`).
 */
export const Problem = Schema.Struct({
  type: openEnum(ProblemType),
  title: Schema.String,
  status: Schema.Number,
  detail: Schema.String,
  resolution: Schema.String,
  docs: Schema.String,
  instance: Schema.String,
  correlationId: Schema.String,
  // Every timestamp on the wire is fos's one form (Representation rule 1); the document says so of this one too.
  timestamp: UtcTimestamp,
  errors: Schema.optionalKey(Schema.Array(ProblemEntry)),
  retryAfterSeconds: Schema.optionalKey(Schema.Number),
  field: Schema.optionalKey(Schema.String),
  // UNSUPPORTED_PAIR only: the pair the service does not convert (chains null for fiat assets).
  sourceAsset: Schema.optionalKey(Schema.String),
  destinationAsset: Schema.optionalKey(Schema.String),
  sourceChain: Schema.optionalKey(Schema.NullOr(Schema.String)),
  destinationChain: Schema.optionalKey(Schema.NullOr(Schema.String))
}).annotate({ identifier: "Problem", description: "An RFC 9457 problem: every error answer. Match on `type`, the stable code of the error reference; `title` may change." })
export type Problem = typeof Problem.Type
