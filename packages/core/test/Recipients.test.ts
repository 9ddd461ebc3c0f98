import { describe, expect, it } from "vitest"
import { mintAbaRoutingNumber } from "../src/money/AbaRoutingNumbers.ts"
import * as Recipients from "../src/money/Recipients.ts"

/** Published IBANs: the ISO 13616 / SWIFT registry examples of several countries. */
const ibans = [
  "DE89370400440532013000",
  "GB82WEST12345698765432",
  "FR1420041010050500013M02606",
  "NL91ABNA0417164300",
  "BE68539007547034",
  "CH9300762011623852957",
  "NO9386011117947",
  "MT84MALT011000012345MTLCAST001S",
  "TR330006100519786457841326",
  "BR1800360305000010009795493C1"
]

describe("IBAN check", () => {
  it("accepts published IBANs", () => {
    for (const iban of ibans) expect(Recipients.ibanProblem(iban), iban).toBeUndefined()
  })

  it("refuses every single-digit change, a wrong length, and a country without IBANs", () => {
    for (const iban of ibans) {
      for (let i = 2; i < iban.length; i++) {
        if (!/\d/.test(iban[i]!)) continue
        for (let d = 0; d <= 9; d++) {
          if (String(d) === iban[i]) continue
          const changed = iban.slice(0, i) + d + iban.slice(i + 1)
          expect(Recipients.ibanProblem(changed), changed).toBeDefined()
        }
      }
    }
    expect(Recipients.ibanProblem("DE8937040044053201300")).toBe("must have 22 characters for its country")
    expect(Recipients.ibanProblem("US12345678901234")).toBe("must be an IBAN of a country that issues IBANs")
    expect(Recipients.ibanProblem("de89370400440532013000")).toBeDefined()
  })
})

describe("ABA routing numbers", () => {
  it("accepts real routing numbers and refuses a wrong check digit or Federal Reserve prefix", () => {
    for (const n of ["021000021", "011000015", "026009593", "121000358", "322271627", "071000013"]) expect(Recipients.isAbaRoutingNumber(n), n).toBe(true)
    for (const n of ["021000022", "12345678", "0210000210", "02100002a", "131000017", "990000000"]) expect(Recipients.isAbaRoutingNumber(n), n).toBe(false)
  })

  it("mints only numbers it accepts, from any digits, over every Federal Reserve prefix", () => {
    const prefixes = new Set<string>()
    for (let i = 0; i < 10_000; i++) {
      const n = mintAbaRoutingNumber(String(i * 7919 % 100_000_000).padStart(8, "0"))
      expect(Recipients.isAbaRoutingNumber(n), n).toBe(true)
      prefixes.add(n.slice(0, 2))
    }
    expect(prefixes.size).toBe(13 + 12 + 12 + 1)
  })
})

describe("bank account checks per rail", () => {
  const address = { line1: "1 Main St", city: "New York", state: "NY", country: "USA" }
  it("names every problem once, by field", () => {
    expect(Recipients.bankAccountProblems({ rail: "ach", name: "A", address, routingNumber: "021000021", accountNumber: "123456" })).toEqual([])
    expect(Recipients.bankAccountProblems({ rail: "sepa", name: "A", address, iban: "GB82 WEST 1234 5698 7654 32", sortCode: "123456" })).toEqual([
      { pointer: "/sortCode", detail: "is not used on the sepa rail" }
    ])
    expect(Recipients.bankAccountProblems({ rail: "faster_payments", name: "A", address })).toEqual([
      { pointer: "/sortCode", detail: "is required on the faster_payments rail" },
      { pointer: "/accountNumber", detail: "is required on the faster_payments rail" }
    ])
  })
})
