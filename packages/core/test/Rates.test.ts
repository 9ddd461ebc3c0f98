import { describe, expect, it } from "vitest"
import * as fc from "fast-check"
import * as Rates from "../src/money/Rates.ts"

describe("converting at a rate", () => {
  it("rounds what the customer receives down and what the customer pays up, each by less than one unit", () => {
    // 100.00 USD at 0.92345 EUR per USD is 92.345 EUR exactly.
    expect(Rates.convertAmount({ asset: "USD", units: 10000n }, "0.92345", "EUR", "customer_receives")).toEqual({ asset: "EUR", units: 9234n })
    expect(Rates.convertAmount({ asset: "USD", units: 10000n }, "0.92345", "EUR", "customer_pays")).toEqual({ asset: "EUR", units: 9235n })
    // Exact results are not rounded either way.
    expect(Rates.convertAmount({ asset: "USD", units: 10000n }, "0.92", "EUR", "customer_pays")).toEqual({ asset: "EUR", units: 9200n })
    // Across precisions: 1.5 ETH (18 decimals) at 2500.5 USDC (6 decimals) per ETH.
    expect(Rates.convertAmount({ asset: "ETH", units: 15n * 10n ** 17n }, "2500.5", "USDC", "customer_receives")).toEqual({ asset: "USDC", units: 3750_750000n })
    // Into a currency without minor units.
    expect(Rates.convertAmount({ asset: "USD", units: 1001n }, "150.37", "JPY", "customer_receives")).toEqual({ asset: "JPY", units: 1505n })
  })

  it("never rounds against the service (property)", () => {
    fc.assert(fc.property(
      fc.bigInt({ min: 0n, max: 10n ** 24n }),
      fc.integer({ min: 1, max: 10 ** 9 }),
      fc.integer({ min: 0, max: 8 }),
      (units, digits, scale) => {
        const rate = (digits / 10 ** scale).toFixed(scale)
        const { numerator, denominator } = Rates.parse(rate)!
        const exact = (units * numerator * 10n ** 2n) // USD (2) to EUR (2): same precision
        const receives = Rates.convertAmount({ asset: "USD", units }, rate, "EUR", "customer_receives").units
        const pays = Rates.convertAmount({ asset: "USD", units }, rate, "EUR", "customer_pays").units
        // receives * denominator <= exact value <= pays * denominator, and they differ by at most one unit.
        expect(receives * denominator * 10n ** 2n <= exact).toBe(true)
        expect(pays * denominator * 10n ** 2n >= exact).toBe(true)
        expect(pays - receives <= 1n).toBe(true)
      }
    ))
  })

  it("takes exact decimal rates only", () => {
    for (const bad of ["", "0", "0.0", "-1", "1e3", "1.", ".5", "01.2", "NaN", "1,5"]) expect(Rates.parse(bad), bad).toBeUndefined()
    expect(Rates.parse("0.0001")).toEqual({ numerator: 1n, denominator: 10000n })
  })
})
