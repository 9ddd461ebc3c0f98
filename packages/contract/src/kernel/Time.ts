/**
 * Timestamps on the wire: ISO 8601, UTC, millisecond precision, `Z` suffix. All time is read from Effect's
 * `Clock`, never from the host.
 */
import { Clock, Effect, Schema } from "effect"

/** Renders epoch milliseconds as `2026-11-21T10:00:00.000Z`. */
export const toIso = (epochMs: number): string => new Date(epochMs).toISOString()

/** The Clock's time as a wire timestamp. */
export const nowIso: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, toIso)

const isoPattern = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/

const daysInMonth = (year: number, month: number): number =>
  month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31

/** Parses an ISO 8601 timestamp with an explicit offset; undefined when it is not one. */
export const parseIso = (s: string): number | undefined => {
  const m = isoPattern.exec(s)
  if (m === null) return undefined
  // Date.parse rolls impossible dates over (02-30 becomes 03-02, 24:00 the next day); refuse them instead.
  const [year, month, day, hour] = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])]
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23) return undefined
  const ms = Date.parse(s)
  return Number.isFinite(ms) ? ms : undefined
}

/** An incoming ISO 8601 timestamp with an offset, decoded to epoch milliseconds. */
export const IsoTimestamp = Schema.String.check(
  Schema.makeFilter((s: string) => parseIso(s) !== undefined, {
    fosDetail: "must be an ISO 8601 timestamp with a time zone, such as 2026-01-01T00:00:00.000Z",
    toJsonSchema: () => ({ format: "date-time" })
  })
)
