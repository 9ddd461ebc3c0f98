/**
 * Wire primitives every resource and event uses: required text, timestamps as fos sends them, and decimal
 * amounts as strings.
 */
import { Schema } from "effect"
import "./Annotations.ts"
import { parseIso } from "./Time.ts"

/** A required text: after trimming it must not be empty (spaces only counts as missing). */
export const NonBlankString = Schema.String.check(
  Schema.makeFilter((s: string) => s.trim().length > 0, { fosDetail: "is required" })
)

const utcPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** A timestamp as fos sends it: ISO 8601, UTC, milliseconds, `Z` (`2026-03-01T12:00:00.000Z`). */
export const UtcTimestamp = Schema.String.check(
  Schema.makeFilter((s: string) => utcPattern.test(s) && parseIso(s) !== undefined, {
    fosDetail: "must be an ISO 8601 UTC timestamp with milliseconds, such as 2026-03-01T12:00:00.000Z",
    // What the OpenAPI document says of it: a date-time, in fos's one form.
    toJsonSchema: () => ({ format: "date-time", pattern: utcPattern.source, examples: ["2026-03-01T12:00:00.000Z"] })
  })
)

/** A non-negative decimal string (`"10.50"`); never a JSON number, so no precision is lost. */
export const DecimalString = Schema.String.check(
  Schema.isPattern(/^(0|[1-9]\d*)(\.\d+)?$/u, { fosDetail: "must be a non-negative decimal string such as 10.50" })
)
