/**
 * The foreign-exchange market's next regular opening, which a pair held after hours (`simulate/rates` with
 * `afterHours`) waits for: the next Sunday at its opening hour, UTC, strictly after now.
 */
import { describe, expect, it } from "vitest"
import * as fc from "fast-check"
import * as Pricing from "../src/money/Pricing.ts"

const hours = { closesFridayAtHourUtc: 22, opensSundayAtHourUtc: 22 }
const at = (iso: string) => Date.parse(iso)

describe("the foreign-exchange market's next opening", () => {
  it("is the coming Sunday 22:00 UTC from any day, that evening on a Sunday before it, and the next week's from the opening on", () => {
    const sunday = at("2026-03-08T22:00:00.000Z")
    expect(Pricing.nextFxOpening(at("2026-03-03T09:00:00.000Z"), hours)).toBe(sunday) // Tuesday
    expect(Pricing.nextFxOpening(at("2026-03-06T23:00:00.000Z"), hours)).toBe(sunday) // Friday, closed
    expect(Pricing.nextFxOpening(at("2026-03-07T12:00:00.000Z"), hours)).toBe(sunday) // Saturday
    expect(Pricing.nextFxOpening(at("2026-03-08T00:00:00.000Z"), hours)).toBe(sunday) // Sunday's first instant
    expect(Pricing.nextFxOpening(sunday - 1, hours)).toBe(sunday)
    // Strictly after now: at the opening, and after it, the next is a week on.
    expect(Pricing.nextFxOpening(sunday, hours)).toBe(sunday + 7 * 86_400_000)
    expect(Pricing.nextFxOpening(at("2026-03-08T23:30:00.000Z"), hours)).toBe(sunday + 7 * 86_400_000)
    // Another opening hour of the world model.
    expect(Pricing.nextFxOpening(at("2026-03-08T12:00:00.000Z"), { ...hours, opensSundayAtHourUtc: 17 })).toBe(at("2026-03-08T17:00:00.000Z"))
  })

  it("is a Sunday at the opening hour, strictly after now and at most a week on (property)", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 4_000_000_000_000 }), fc.integer({ min: 0, max: 23 }), (nowMs, hour) => {
      const next = Pricing.nextFxOpening(nowMs, { ...hours, opensSundayAtHourUtc: hour })
      const opening = new Date(next)
      expect(opening.getUTCDay()).toBe(0)
      expect(next % 3_600_000).toBe(0)
      expect(opening.getUTCHours()).toBe(hour)
      expect(next).toBeGreaterThan(nowMs)
      expect(next - nowMs).toBeLessThanOrEqual(7 * 86_400_000)
    }))
  })
})
