/**
 * The representation rules as code: the one encoder every response body goes through, the schema helpers
 * requests are decoded with, and the mapping of schema issues to `errors[]` entries.
 *
 * - An optional field with no value is omitted (`undefined` keys are dropped, never sent as null).
 * - A nullable field is present as null (null is kept).
 * - Empty collections are `[]`.
 * - A required text made only of spaces counts as missing.
 */
import type { ErrorCode, ErrorEntry } from "@fos/contract"
import { Schema, SchemaAST, type SchemaIssue } from "effect"
import * as Problem from "./Problem.ts"

const utf8 = new TextEncoder()

/**
 * How many bytes a text is in UTF-8, as it is sent (half a surrogate pair as the replacement character, 3 bytes): a
 * long text (a snapshot file, a body of megabytes) is encoded, which the runtime does natively in a fraction of the
 * time a loop over its characters takes; a short one is counted, which allocates nothing.
 */
export const utf8Length = (text: string): number => {
  if (text.length > 1024) return utf8.encode(text).length
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x80) bytes += 1
    else if (c < 0x800) bytes += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4
      i++
    } else bytes += 3
  }
  return bytes
}

/** The members of `A` that may be `undefined`: optional on the wire, where such a member is left out. */
type MaybeAbsent<A> = { [K in keyof A]-?: undefined extends A[K] ? K : never }[keyof A]

/**
 * What `toWire` makes of a value of type `A`, as a type: every member that may be `undefined` becomes optional and
 * never `undefined`, all the way down. So a payload built with `toWire` is still one the compiler can check against
 * its event's schema (`Outbox.emitEvent`).
 */
export type Wire<A> = A extends string | number | boolean | bigint | null | undefined ? A
  : A extends ReadonlyArray<infer E> ? ReadonlyArray<Wire<E>>
  // A record of unknowns says nothing a compiler could check: it stays as it is.
  : A extends object ? string extends keyof A ? A
  : { readonly [K in Exclude<keyof A, MaybeAbsent<A>>]: Wire<A[K]> } & { readonly [K in MaybeAbsent<A>]?: Wire<Exclude<A[K], undefined>> }
  : A

/**
 * The members `K` of the wire shape `W` as a stored row keeps them: typed by the contract's schema, so a row does
 * not write a second time what its wire shape says, and each present on the row, where a member the wire omits when
 * it has no value is `undefined` (a row is written whole, so forgetting one is a compile error). A row's other
 * members, those the wire does not show or shows in another form (a branded id, null where the wire omits), are
 * its own: `interface StoredWallet extends Wire.Stored<Wallet, "chain" | "status"> { readonly id: WalletId }`.
 */
export type Stored<W, K extends keyof W> = { readonly [P in K]-?: W[P] | ({} extends Pick<W, P> ? undefined : never) }

/**
 * Normalises a value for the wire: drops `undefined` members, keeps `null`, and keeps arrays as arrays.
 * Values are plain data (records, arrays, strings, numbers, booleans, null) by construction of the domain.
 */
export const toWire = <A>(value: A): Wire<A> => normalise(value) as Wire<A>

const normalise = (value: unknown): unknown => {
  if (value === null || typeof value !== "object") return value
  if (Array.isArray(value)) return value.map(normalise)
  const out: Record<string, unknown> = {}
  for (const key in value) {
    const member = (value as Record<string, unknown>)[key]
    if (member !== undefined) out[key] = normalise(member)
  }
  return out
}

/** The outcome of mapping a schema failure: the problem code and one entry per issue. */
export interface DecodeFailure {
  readonly code: ErrorCode
  readonly errors: ReadonlyArray<ErrorEntry>
}

const describe = (ast: SchemaAST.AST): string => {
  switch (ast._tag) {
    case "String":
    case "TemplateLiteral":
      return "must be a string"
    case "Number":
      return "must be a number"
    case "Boolean":
      return "must be a boolean"
    case "BigInt":
      return "must be an integer"
    case "Objects":
      return SchemaAST.isArrays(ast) ? "must be an array" : "must be an object"
    case "Arrays":
      return "must be an array"
    case "Literal":
      return `must be ${JSON.stringify(ast.literal)}`
    case "Null":
      return "must be null"
    case "Union": {
      const literals = ast.types.filter(SchemaAST.isLiteral)
      if (literals.length === ast.types.length) return `must be one of: ${literals.map((l) => String(l.literal)).join(", ")}`
      const described = new Set(ast.types.map(describe))
      return described.size === 1 ? [...described][0]! : "has an unexpected type"
    }
    default:
      return "has an unexpected type"
  }
}

/**
 * The most `errors[]` entries a problem lists. Decoding reports every problem, and a body of a megabyte could
 * hold hundreds of thousands; the first hundred are enough to fix, and the answer stays small.
 */
export const maxErrorEntries = 100

/**
 * A whole number from `minimum` to `maximum`, as a stored row holds a count, a sequence or an instant: one check, so
 * a refusal names it once (`fosDetail`).
 */
export const wholeNumber = (minimum: number, maximum: number, fosDetail = `must be a whole number from ${minimum} to ${maximum}`) =>
  Schema.Number.check(Schema.makeFilter((n: number) => Number.isSafeInteger(n) && n >= minimum && n <= maximum, { fosDetail }))

/** An instant as a row holds it: epoch milliseconds that a date can hold. */
export const epochMillis = wholeNumber(0, 8_640_000_000_000_000, "must be a whole number of milliseconds since 1970 that a date can hold")

/** A store-wide sequence number as a row holds it. */
export const sequenceNumber = wholeNumber(1, Number.MAX_SAFE_INTEGER, "must be a whole number, at least 1")

/**
 * Flattens a schema issue tree into `errors[]` entries with JSON Pointers, at most `maxErrorEntries`. Details come
 * from fos's own annotations or the expected type, never from the rejected input. A check annotated with `fosCode`
 * makes that the problem's code (INVALID_OID_FORMAT for ids).
 */
export const decodeFailure = (issue: SchemaIssue.Issue, basePath: ReadonlyArray<PropertyKey> = []): DecodeFailure => {
  const errors: Array<ErrorEntry> = []
  let code: ErrorCode = "VALIDATION_ERROR"
  const seen = new Set<string>()
  const push = (path: ReadonlyArray<PropertyKey>, detail: string) => {
    if (errors.length >= maxErrorEntries) return
    const pointer = Problem.toPointer(path)
    const key = pointer + "\u0000" + detail
    if (seen.has(key)) return
    seen.add(key)
    errors.push({ pointer, detail })
  }
  const walk = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey>, detailHint: string | undefined): void => {
    switch (issue._tag) {
      case "Pointer":
        return walk(issue.issue, [...path, ...issue.path], detailHint)
      case "Composite":
      case "AnyOf":
        if (issue._tag === "AnyOf" && issue.issues.length === 0) return push(path, describe(issue.ast))
        for (const inner of issue.issues) walk(inner, path, detailHint)
        return
      case "Filter": {
        const annotations = issue.filter.annotations
        if (annotations?.fosCode !== undefined) code = annotations.fosCode
        return walk(issue.issue, path, annotations?.fosDetail ?? detailHint)
      }
      case "Encoding":
        return walk(issue.issue, path, detailHint)
      case "MissingKey":
        return push(path, "is required")
      case "UnexpectedKey":
        return push(path, "is not allowed")
      case "InvalidType":
        return push(path, describe(issue.ast))
      case "OneOf":
        return push(path, "matches more than one accepted shape")
      case "InvalidValue":
      case "Forbidden":
        return push(path, issue.annotations?.message ?? detailHint ?? "is invalid")
    }
  }
  walk(issue, basePath, undefined)
  if (errors.length === 0) errors.push({ pointer: Problem.toPointer(basePath), detail: "is invalid" })
  return { code, errors }
}
