import { describe, expect, it } from "@effect/vitest"
import { Effect, Random, Result, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as fc from "fast-check"
import countries from "i18n-iso-countries"
import {
  addAmounts,
  Address,
  CountryCodes,
  type Amount,
  type AssetCode,
  AssetCode as AssetCodeSchema,
  AssetCodes,
  AssetPrecision,
  Chain,
  Chains,
  Country,
  CryptoAssets,
  CustomerId,
  formatAmount,
  type IdPrefix,
  FosIdPrefixes,
  IdPrefixes,
  IdSchemas,
  isCountry,
  isFiat,
  isId,
  IsoTimestamp,
  NonBlankString,
  nowIso,
  OrderId,
  parseAmount,
  parseIso,
  subtractAmounts,
  toIso
} from "@fos/contract"
import * as IdGenerator from "../src/kernel/IdGenerator.ts"
import * as Wire from "../src/kernel/Wire.ts"
import * as Auth from "../src/tenancy/Auth.ts"

import { specFacts } from "./spec.ts"

// ---------------------------------------------------------------------------------------------------------------
// Helpers

/** The spec's facts (spec-facts.json, held to the spec's text by SpecFacts.test.ts). */
const spec = specFacts()

/** Decodes and maps the failure the way the edge does; undefined when the input is accepted. */
const failureOf = (schema: Schema.ConstraintDecoder<unknown>, input: unknown): Wire.DecodeFailure | undefined => {
  const result = Schema.decodeUnknownResult(schema, { errors: "all" })(input)
  return Result.isFailure(result) ? Wire.decodeFailure(result.failure.issue) : undefined
}

const accepts = (schema: Schema.ConstraintDecoder<unknown>, input: unknown): boolean => failureOf(schema, input) === undefined

const prefixes = Object.keys(IdPrefixes) as Array<IdPrefix>

// ---------------------------------------------------------------------------------------------------------------
// Ids

describe("Ids", () => {
  it("has exactly the prefixes of the spec's identifier table", () => {
    const rows = spec.identifierPrefixes
    expect(rows.length).toBeGreaterThan(10)
    // fos's own prefixes (FosIdPrefixes) stand for resources the table leaves without one.
    expect([...prefixes].filter((p) => !(p in FosIdPrefixes)).sort()).toEqual([...new Set(rows)].sort())
    expect(Object.keys(FosIdPrefixes).some((p) => rows.includes(p))).toBe(false)
    expect(Object.keys(IdSchemas).sort()).toEqual([...prefixes].sort())
  })

  describe.each(prefixes)("prefix %s", (prefix) => {
    const schema = IdSchemas[prefix]
    const valid = [`${prefix}_1`, `${prefix}_a`, `${prefix}_AbC123xyz`, `${prefix}_${"z".repeat(64)}`, `${prefix}_${"0".repeat(24)}`]
    const others = prefixes.filter((p) => p !== prefix)
    const invalid = [
      "",
      prefix,
      `${prefix}_`,
      `${prefix}-abc`,
      `${prefix}abc`,
      `${prefix}__abc`,
      `${prefix}_${"a".repeat(65)}`,
      `${prefix}_ab-c`,
      `${prefix}_ab c`,
      `${prefix}_abc `,
      ` ${prefix}_abc`,
      `${prefix}_abc\n`,
      `${prefix}_é`,
      `${prefix.toUpperCase()}_abc`,
      `x${prefix}_abc`,
      ...others.map((p) => `${p}_abc123`)
    ]

    it("accepts well-formed ids", () => {
      for (const id of valid) {
        expect(isId(prefix, id), id).toBe(true)
        const decoded = Schema.decodeUnknownExit(schema)(id)
        expect(decoded._tag, id).toBe("Success")
      }
    })

    it("rejects a wrong prefix or a bad shape with INVALID_OID_FORMAT", () => {
      for (const id of invalid) {
        expect(isId(prefix, id), id).toBe(false)
        expect(Schema.decodeUnknownExit(schema)(id)._tag, id).toBe("Failure")
        const failure = failureOf(schema, id)
        expect(failure?.code, id).toBe("INVALID_OID_FORMAT")
        expect(failure?.errors).toHaveLength(1)
        expect(failure?.errors[0]?.pointer).toBe("")
        expect(failure?.errors[0]?.detail).toContain(`${prefix}_`)
      }
    })

    it("rejects non-strings as a type error", () => {
      for (const input of [null, undefined, 1, {}, [`${prefix}_abc`]]) {
        expect(Schema.decodeUnknownExit(schema)(input)._tag).toBe("Failure")
        expect(failureOf(schema, input)?.errors[0]?.detail).toBe("must be a string")
      }
    })

    it.effect("mints valid ids", () =>
      Effect.gen(function*() {
        for (let i = 0; i < 20; i++) {
          const id = yield* IdGenerator.newId(prefix)
          expect(id).toMatch(new RegExp(`^${prefix}_[0-9a-z]{24}$`))
          expect(isId(prefix, id)).toBe(true)
          expect(Schema.decodeUnknownSync(schema)(id)).toBe(id)
        }
      }))
  })

  it.effect("mints the same ids under the same seed and different ids under another", () =>
    Effect.gen(function*() {
      const mint = Effect.all([IdGenerator.newId("cus"), IdGenerator.newId("ord"), IdGenerator.newId("txn"), IdGenerator.randomHex(32)])
      const a = yield* mint.pipe(Random.withSeed("fos"))
      const b = yield* mint.pipe(Random.withSeed("fos"))
      const c = yield* mint.pipe(Random.withSeed("other"))
      expect(a).toEqual(b)
      expect(c).not.toEqual(a)
      expect(new Set(a).size).toBe(a.length)
    }))

  it.effect("draws opaque parts from the whole lowercase base32 alphabet", () =>
    Effect.gen(function*() {
      const alphabet = "0123456789abcdefghjkmnpqrstvwxyz"
      const seen = new Set<string>()
      for (let i = 0; i < 200; i++) for (const ch of (yield* IdGenerator.newId("evt")).slice(4)) seen.add(ch)
      // Every character of the alphabet shows up (so the top of the range is reachable), and nothing else.
      expect([...seen].sort().join("")).toBe(alphabet)
    }).pipe(Random.withSeed(7)))

  it.effect("randomHex and randomString give the asked length from the alphabet", () =>
    Effect.gen(function*() {
      const hex = yield* IdGenerator.randomHex(64)
      expect(hex).toMatch(/^[0-9a-f]{64}$/)
      expect(yield* IdGenerator.randomString("ab", 0)).toBe("")
      const s = yield* IdGenerator.randomString("xy", 500)
      expect(s).toMatch(/^[xy]{500}$/)
      expect(s).toContain("x")
      expect(s).toContain("y")
    }))

  it("keeps brands apart at the type level and at runtime", () => {
    const cus = Schema.decodeUnknownSync(CustomerId)("cus_abc")
    expect(cus).toBe("cus_abc")
    expect(Schema.decodeUnknownExit(OrderId)(cus)._tag).toBe("Failure")
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Time

describe("Time", () => {
  const wire = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

  it("renders UTC with milliseconds and Z", () => {
    expect(toIso(0)).toBe("1970-01-01T00:00:00.000Z")
    expect(toIso(Date.UTC(2026, 10, 21, 10, 0, 0, 5))).toBe("2026-11-21T10:00:00.005Z")
    expect(toIso(Date.UTC(2026, 0, 1, 23, 59, 59, 999))).toBe("2026-01-01T23:59:59.999Z")
  })

  it("round-trips every epoch millisecond of years 1970 to 9999 (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Date.UTC(9999, 11, 31, 23, 59, 59, 999) }), (ms) => {
        const iso = toIso(ms)
        expect(iso).toMatch(wire)
        expect(parseIso(iso)).toBe(ms)
      })
    )
  })

  it("parses timestamps with an explicit zone", () => {
    expect(parseIso("2026-01-01T00:00:00Z")).toBe(Date.UTC(2026, 0, 1))
    expect(parseIso("2026-01-01T00:00:00.5Z")).toBe(Date.UTC(2026, 0, 1, 0, 0, 0, 500))
    expect(parseIso("2026-01-01T02:00:00.000+02:00")).toBe(Date.UTC(2026, 0, 1))
    expect(parseIso("2025-12-31T19:00:00-05:00")).toBe(Date.UTC(2026, 0, 1))
    expect(parseIso("2024-02-29T12:00:00Z")).toBe(Date.UTC(2024, 1, 29, 12))
    expect(parseIso("2000-02-29T00:00:00Z")).toBe(Date.UTC(2000, 1, 29))
    expect(parseIso("2026-01-01T00:00:00.123456789Z")).toBe(Date.UTC(2026, 0, 1, 0, 0, 0, 123))
  })

  it("rejects timestamps without a zone and malformed ones", () => {
    for (
      const s of [
        "2026-01-01T00:00:00",
        "2026-01-01T00:00:00.000",
        "2026-01-01",
        "2026-01-01 00:00:00Z",
        "2026-01-01T00:00Z",
        "2026-01-01T00:00:00z",
        "2026-01-01T00:00:00+0200",
        "2026-01-01T00:00:00+02",
        "20260101T000000Z",
        "2026-1-01T00:00:00Z",
        " 2026-01-01T00:00:00Z",
        "2026-01-01T00:00:00Z ",
        "2026-01-01T00:00:00.Z",
        "1767225600000",
        ""
      ]
    ) expect(parseIso(s), s).toBeUndefined()
  })

  it("rejects impossible dates and times instead of rolling them over", () => {
    for (
      const s of [
        "2026-02-30T00:00:00Z",
        "2026-02-29T00:00:00Z",
        "1900-02-29T00:00:00Z",
        "2026-04-31T00:00:00Z",
        "2026-13-01T00:00:00Z",
        "2026-00-10T00:00:00Z",
        "2026-01-00T00:00:00Z",
        "2026-01-32T00:00:00Z",
        "2026-01-01T24:00:00Z",
        "2026-01-01T23:60:00Z",
        "2026-01-01T23:59:60Z",
        "2026-01-01T00:00:00+25:00"
      ]
    ) expect(parseIso(s), s).toBeUndefined()
  })

  it("decodes IsoTimestamp only with a zone, naming the expected shape without the value", () => {
    expect(accepts(IsoTimestamp, "2026-01-01T00:00:00.000Z")).toBe(true)
    const failure = failureOf(IsoTimestamp, "2026-01-01T00:00:00")
    expect(failure?.code).toBe("VALIDATION_ERROR")
    expect(failure?.errors).toEqual([{ pointer: "", detail: expect.stringContaining("ISO 8601") }])
    expect(failureOf(IsoTimestamp, 0)?.errors[0]?.detail).toBe("must be a string")
  })

  it.effect("reads the time from the Clock", () =>
    Effect.gen(function*() {
      expect(yield* nowIso).toBe("1970-01-01T00:00:00.000Z")
      yield* TestClock.setTime(Date.UTC(2026, 10, 21, 10, 0, 0, 42))
      expect(yield* nowIso).toBe("2026-11-21T10:00:00.042Z")
      yield* TestClock.adjust("1 second")
      expect(yield* nowIso).toBe("2026-11-21T10:00:01.042Z")
    }))
})

// ---------------------------------------------------------------------------------------------------------------
// Money

const amount = (asset: AssetCode, text: string): Amount => {
  const a = parseAmount(asset, text)
  if (a === undefined) throw new Error(`not an amount of ${asset}: ${text}`)
  return a
}

describe("Money", () => {
  it("has exactly the spec's asset codes and chains", () => {
    expect([...AssetCodes]).toEqual(spec.assetCodes)
    expect([...Chains]).toEqual(spec.chains)
    for (const a of AssetCodes) expect(accepts(AssetCodeSchema, a)).toBe(true)
    for (const c of Chains) expect(accepts(Chain, c)).toBe(true)
    for (const bad of ["usd", "XYZ", "", "USD "]) expect(accepts(AssetCodeSchema, bad)).toBe(false)
    expect(accepts(Chain, "Ethereum")).toBe(false)
  })

  it("uses ISO 4217 minor units for fiat and token decimals on chain", () => {
    expect(AssetPrecision.USD).toBe(2)
    expect(AssetPrecision.JPY).toBe(0)
    expect(AssetPrecision.KRW).toBe(0)
    expect(AssetPrecision.USDC).toBe(6)
    expect(AssetPrecision.BTC).toBe(8)
    expect(AssetPrecision.ETH).toBe(18)
    expect(isFiat("USD")).toBe(true)
    expect(isFiat("EUR")).toBe(true)
    for (const c of CryptoAssets) expect(isFiat(c), c).toBe(false)
  })

  it("parses into scaled bigints", () => {
    expect(parseAmount("USD", "10.5")).toEqual({ asset: "USD", units: 1050n })
    expect(parseAmount("USD", "10.50")).toEqual({ asset: "USD", units: 1050n })
    expect(parseAmount("USD", "0")).toEqual({ asset: "USD", units: 0n })
    expect(parseAmount("JPY", "1500")).toEqual({ asset: "JPY", units: 1500n })
    expect(parseAmount("BTC", "0.00000001")).toEqual({ asset: "BTC", units: 1n })
    expect(parseAmount("ETH", "1")).toEqual({ asset: "ETH", units: 10n ** 18n })
    expect(parseAmount("ETH", "123456789012345678901234567890.123456789012345678")?.units).toBe(
      123456789012345678901234567890123456789012345678n
    )
    expect(typeof parseAmount("USD", "1.23")?.units).toBe("bigint")
  })

  it("enforces each asset's precision", () => {
    expect(parseAmount("USD", "1.001")).toBeUndefined()
    expect(parseAmount("USD", "1.000")).toBeUndefined()
    expect(parseAmount("JPY", "1.0")).toBeUndefined()
    expect(parseAmount("JPY", "1.5")).toBeUndefined()
    expect(parseAmount("BTC", "0.000000001")).toBeUndefined()
    expect(parseAmount("USDC", "1.1234567")).toBeUndefined()
    expect(parseAmount("USDC", "1.123456")?.units).toBe(1123456n)
    expect(parseAmount("ETH", `0.${"1".repeat(19)}`)).toBeUndefined()
  })

  it("rejects anything that is not a plain non-negative decimal", () => {
    for (const s of ["", "-1", "+1", "1.", ".5", "01", "00.1", "1e3", "1E3", " 1", "1 ", "1,00", "0x10", "NaN", "Infinity", "1.2.3", "١"]) {
      expect(parseAmount("USD", s), s).toBeUndefined()
    }
  })

  it("formats with exactly the asset's precision", () => {
    expect(formatAmount({ asset: "USD", units: 1050n })).toBe("10.50")
    expect(formatAmount({ asset: "USD", units: 5n })).toBe("0.05")
    expect(formatAmount({ asset: "USD", units: 0n })).toBe("0.00")
    expect(formatAmount({ asset: "USD", units: -5n })).toBe("-0.05")
    expect(formatAmount({ asset: "JPY", units: 1500n })).toBe("1500")
    expect(formatAmount({ asset: "JPY", units: 0n })).toBe("0")
    expect(formatAmount({ asset: "BTC", units: 1n })).toBe("0.00000001")
    expect(formatAmount({ asset: "ETH", units: 10n ** 18n })).toBe("1.000000000000000000")
  })

  it("adds without floating point", () => {
    expect(formatAmount(addAmounts(amount("USD", "0.1"), amount("USD", "0.2")))).toBe("0.30")
    expect(formatAmount(addAmounts(amount("ETH", "0.1"), amount("ETH", "0.2")))).toBe("0.300000000000000000")
    expect(formatAmount(addAmounts(amount("BTC", "20999999.99999999"), amount("BTC", "0.00000001")))).toBe("21000000.00000000")
    expect(formatAmount(subtractAmounts(amount("USD", "0.3"), amount("USD", "0.1")))).toBe("0.20")
    expect(formatAmount(subtractAmounts(amount("USD", "0.1"), amount("USD", "0.15")))).toBe("-0.05")
    expect(() => addAmounts(amount("USD", "1"), amount("EUR", "1"))).toThrow(/asset mismatch/)
    expect(() => subtractAmounts(amount("USDC", "1"), amount("USDT", "1"))).toThrow(/asset mismatch/)
  })

  const assetArb = fc.constantFrom(...AssetCodes)

  it("round-trips units through format and parse for every asset (property)", () => {
    fc.assert(
      fc.property(assetArb, fc.bigInt({ min: 0n, max: 10n ** 40n }), (asset, units) => {
        const text = formatAmount({ asset, units })
        const precision = AssetPrecision[asset]
        expect(text.split(".")[1]?.length ?? 0).toBe(precision)
        expect(parseAmount(asset, text)).toEqual({ asset, units })
      }),
      { numRuns: 500 }
    )
  })

  it("round-trips decimal text within precision, padding the fraction (property)", () => {
    const text = assetArb.chain((asset) =>
      fc.tuple(
        fc.constant(asset),
        fc.oneof(fc.constant("0"), fc.stringMatching(/^[1-9][0-9]{0,25}$/)),
        fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: 0, maxLength: AssetPrecision[asset] })
      )
    )
    fc.assert(
      fc.property(text, ([asset, whole, fraction]) => {
        const input = fraction === "" ? whole : `${whole}.${fraction}`
        const parsed = parseAmount(asset, input)
        expect(parsed).toBeDefined()
        const precision = AssetPrecision[asset]
        const expected = precision === 0 ? whole : `${whole}.${fraction.padEnd(precision, "0")}`
        expect(formatAmount(parsed!)).toBe(expected)
      }),
      { numRuns: 500 }
    )
  })

  it("adds like integer arithmetic on units (property)", () => {
    fc.assert(
      fc.property(assetArb, fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.bigInt({ min: 0n, max: 10n ** 30n }), (asset, a, b) => {
        const sum = addAmounts({ asset, units: a }, { asset, units: b })
        expect(sum).toEqual({ asset, units: a + b })
        expect(subtractAmounts(sum, { asset, units: b })).toEqual({ asset, units: a })
        expect(parseAmount(asset, formatAmount(sum))).toEqual(sum)
      })
    )
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Geo

describe("Geo", () => {
  it("knows exactly the alpha-3 codes of i18n-iso-countries (the contract carries them as data)", () => {
    expect([...CountryCodes].sort()).toEqual(Object.keys(countries.getAlpha3Codes()).sort())
  })

  it("accepts upper-case ISO 3166-1 alpha-3 codes only", () => {
    for (const c of ["USA", "DEU", "GBR", "FRA", "JPN", "BRA", "CHE"]) {
      expect(isCountry(c), c).toBe(true)
      expect(accepts(Country, c), c).toBe(true)
    }
    for (const c of ["usa", "Usa", "uSA", "XXX", "ZZZ", "US", "DE", "USAA", "", " USA", "840"]) {
      expect(isCountry(c), c).toBe(false)
      expect(accepts(Country, c), c).toBe(false)
    }
    expect(failureOf(Country, "usa")?.errors).toEqual([{ pointer: "", detail: expect.stringContaining("alpha-3") }])
  })

  const base = { line1: "1 Main St", city: "Springfield" }

  it("requires state when country is USA, with the error at /state", () => {
    const failure = failureOf(Address, { ...base, country: "USA" })
    expect(failure?.code).toBe("VALIDATION_ERROR")
    expect(failure?.errors).toHaveLength(1)
    expect(failure?.errors[0]?.pointer).toBe("/state")
    expect(failure?.errors[0]?.detail).toMatch(/required/)
    expect(accepts(Address, { ...base, country: "USA", state: "CA" })).toBe(true)
  })

  it("makes state optional elsewhere", () => {
    expect(accepts(Address, { ...base, country: "DEU" })).toBe(true)
    expect(accepts(Address, { ...base, country: "DEU", state: "BY" })).toBe(true)
    expect(accepts(Address, { ...base, country: "GBR", postalCode: "SW1A 1AA" })).toBe(true)
  })

  it("lets a state start with a digit", () => {
    for (const state of ["01", "9A", "13", "2B", "75 Paris"]) {
      expect(accepts(Address, { ...base, country: "FRA", state }), state).toBe(true)
    }
    expect(accepts(Address, { ...base, country: "USA", state: "1" })).toBe(true)
    for (const state of ["", " CA", "-CA", "C@"]) {
      expect(failureOf(Address, { ...base, country: "USA", state })?.errors[0]?.pointer, state).toBe("/state")
    }
  })

  it("makes postalCode optional for every country", () => {
    expect(accepts(Address, { ...base, country: "USA", state: "NY" })).toBe(true)
    expect(accepts(Address, { ...base, country: "USA", state: "NY", postalCode: "10001" })).toBe(true)
    expect(accepts(Address, { ...base, country: "IRL" })).toBe(true)
  })

  it("reports each bad field at its pointer", () => {
    const failure = failureOf(Address, { line1: "   ", country: "usa", line2: 5 })
    expect(failure?.errors.map((e) => e.pointer).sort()).toEqual(["/city", "/country", "/line1", "/line2"])
    expect(failure?.errors.find((e) => e.pointer === "/line1")?.detail).toBe("is required")
    expect(failure?.errors.find((e) => e.pointer === "/city")?.detail).toBe("is required")
    expect(failure?.errors.find((e) => e.pointer === "/line2")?.detail).toBe("must be a string")
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Wire

describe("long texts", () => {
  // Long: past one piece of the hash and the length's count; a surrogate pair and a lone half on a piece's edge.
  const piece = Auth.hashPieceChars
  const texts = [
    "a".repeat(piece),
    "a".repeat(piece + 1),
    `${"a".repeat(piece - 1)}\u{1F600}${"é".repeat(piece)}`,
    `${"b".repeat(piece - 1)}\ud800x${"€".repeat(3000)}\udc00`,
    "short \u{1F600} \ud800"
  ]

  it.effect("hashes a text in pieces to the digest of the whole", () =>
    Effect.gen(function*() {
      for (const text of texts) expect(yield* Auth.sha256HexInPieces(text)).toBe(Auth.sha256Hex(text))
    }))

  it("counts a text's UTF-8 bytes as its encoding has them", () => {
    for (const text of [...texts, "", "x".repeat(1024), `${"x".repeat(1023)}\u{1F600}`]) {
      expect(Wire.utf8Length(text)).toBe(new TextEncoder().encode(text).length)
      expect(Wire.utf8Length(text.slice(0, 1000))).toBe(new TextEncoder().encode(text.slice(0, 1000)).length)
    }
  })
})

describe("Wire.toWire", () => {
  it("drops undefined members, keeps null, keeps empty arrays", () => {
    const out = Wire.toWire({ a: undefined, b: null, c: [], d: { e: undefined, f: null, g: [] }, h: [{ i: undefined, j: 1 }], k: 0, l: "", m: false })
    expect(out).toEqual({ b: null, c: [], d: { f: null, g: [] }, h: [{ j: 1 }], k: 0, l: "", m: false })
    expect(Object.keys(out as object)).toEqual(["b", "c", "d", "h", "k", "l", "m"])
    expect(JSON.stringify(out)).toBe('{"b":null,"c":[],"d":{"f":null,"g":[]},"h":[{"j":1}],"k":0,"l":"","m":false}')
    expect(Array.isArray((out as { c: unknown }).c)).toBe(true)
  })

  it("passes primitives through and keeps member order", () => {
    for (const v of [null, 0, 1.5, "x", "", true, false]) expect(Wire.toWire(v)).toBe(v)
    expect(Wire.toWire(undefined)).toBeUndefined()
    expect(Object.keys(Wire.toWire({ z: 1, a: 2, m: undefined, b: 3 }) as object)).toEqual(["z", "a", "b"])
  })

  it("never outputs undefined members at any depth (property)", () => {
    const hasUndefinedMember = (v: unknown): boolean =>
      v !== null && typeof v === "object" &&
      (Array.isArray(v) ? v.some(hasUndefinedMember) : Object.values(v).some((m) => m === undefined || hasUndefinedMember(m)))
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: "small" },
        fc.constantFrom(null, undefined, 0, "", true),
        fc.string(),
        fc.integer(),
        fc.array(tie("obj"), { maxLength: 3 }),
        tie("obj")
      ),
      obj: fc.dictionary(fc.string({ maxLength: 4 }).filter((k) => k !== "__proto__"), tie("node"), { maxKeys: 4 })
    })).obj
    fc.assert(
      fc.property(value, (v) => {
        const out = Wire.toWire(v)
        expect(hasUndefinedMember(out)).toBe(false)
        // Exactly what JSON would have kept.
        expect(out).toEqual(JSON.parse(JSON.stringify(v)))
      })
    )
  })
})

describe("Wire.decodeFailure", () => {
  const Body = Schema.Struct({
    a: Schema.Struct({ b: Schema.Array(Schema.Number) }),
    name: NonBlankString,
    customerId: CustomerId,
    kind: Schema.Literals(["individual", "business"]),
    note: Schema.optionalKey(Schema.String)
  })
  const good = { a: { b: [1, 2] }, name: "Ada", customerId: "cus_abc", kind: "individual" }

  it("accepts a good body", () => {
    expect(failureOf(Body, good)).toBeUndefined()
  })

  it("points into nested objects and arrays", () => {
    const failure = failureOf(Body, { ...good, a: { b: [1, "two", 3] } })
    expect(failure).toEqual({ code: "VALIDATION_ERROR", errors: [{ pointer: "/a/b/1", detail: "must be a number" }] })
    expect(failureOf(Body, { ...good, a: { b: ["x"] } })?.errors[0]?.pointer).toBe("/a/b/0")
    expect(failureOf(Body, { ...good, a: [] })?.errors).toEqual([{ pointer: "/a", detail: "must be an object" }])
  })

  it("reports a missing key as required", () => {
    const { name: _, ...rest } = good
    expect(failureOf(Body, rest)).toEqual({ code: "VALIDATION_ERROR", errors: [{ pointer: "/name", detail: "is required" }] })
    const { b: __, ...emptyA } = good.a
    expect(failureOf(Body, { ...good, a: emptyA })?.errors).toEqual([{ pointer: "/a/b", detail: "is required" }])
  })

  it("treats text of only spaces as missing", () => {
    for (const blank of ["", " ", "    ", "\t", " \n "]) {
      expect(failureOf(Body, { ...good, name: blank })?.errors, JSON.stringify(blank)).toEqual([{ pointer: "/name", detail: "is required" }])
    }
    expect(accepts(NonBlankString, " a ")).toBe(true)
  })

  it("maps an id check failure to INVALID_OID_FORMAT", () => {
    const failure = failureOf(Body, { ...good, customerId: "ord_abc" })
    expect(failure?.code).toBe("INVALID_OID_FORMAT")
    expect(failure?.errors).toHaveLength(1)
    expect(failure?.errors[0]?.pointer).toBe("/customerId")
    expect(failure?.errors[0]?.detail).toContain("cus_")
    // A non-string id is a type error, not a format error.
    expect(failureOf(Body, { ...good, customerId: 7 })).toEqual({
      code: "VALIDATION_ERROR",
      errors: [{ pointer: "/customerId", detail: "must be a string" }]
    })
  })

  it("lists every problem with errors: all, and describes literals and types", () => {
    const failure = failureOf(Body, { a: { b: [true] }, name: " ", customerId: "cus_ok", kind: "nobody", note: 3 })
    expect(failure?.code).toBe("VALIDATION_ERROR")
    expect(failure?.errors).toEqual([
      { pointer: "/a/b/0", detail: "must be a number" },
      { pointer: "/name", detail: "is required" },
      { pointer: "/kind", detail: "must be one of: individual, business" },
      { pointer: "/note", detail: "must be a string" }
    ])
  })

  it("points at the root for a body that is not an object, and prefixes a base path", () => {
    expect(failureOf(Body, "hello")?.errors).toEqual([{ pointer: "", detail: "must be an object" }])
    expect(failureOf(Body, null)?.errors).toEqual([{ pointer: "", detail: "must be an object" }])
    const result = Schema.decodeUnknownResult(Body)({ ...good, name: "" })
    if (!Result.isFailure(result)) throw new Error("expected a failure")
    expect(Wire.decodeFailure(result.failure.issue, ["query", "a/b"]).errors).toEqual([{ pointer: "/query/a~1b/name", detail: "is required" }])
  })

  it("escapes keys in pointers", () => {
    const S = Schema.Struct({ "a/b": Schema.String, "m~n": Schema.Number })
    expect(failureOf(S, { "m~n": "x" })?.errors).toEqual([
      { pointer: "/a~1b", detail: "is required" },
      { pointer: "/m~0n", detail: "must be a number" }
    ])
  })

  it("never echoes the rejected value (property)", () => {
    const Typed = Schema.Struct({
      name: NonBlankString,
      customerId: CustomerId,
      country: Country,
      asset: AssetCodeSchema,
      at: IsoTimestamp,
      kind: Schema.Literals(["individual", "business"]),
      count: Schema.Number,
      tags: Schema.Array(NonBlankString)
    })
    const fields = ["name", "customerId", "country", "asset", "at", "kind", "count", "tags"]
    // Text the details may legitimately contain; a random value that happens to be part of it proves nothing.
    const knownText = [
      "is required",
      "must be a string",
      "must be a number",
      "must be an array",
      "must be an object",
      "is invalid",
      "has an unexpected type",
      "must be a customer id (cus_ followed by 1 to 64 letters or digits)",
      "must be an ISO 3166-1 alpha-3 country code in upper case",
      "must be an ISO 8601 timestamp with a time zone, such as 2026-01-01T00:00:00.000Z",
      "must be one of: individual, business",
      `must be one of: ${AssetCodes.join(", ")}`
    ].join("\n")
    const text = fc.string({ minLength: 1, maxLength: 40, unit: "binary" })
    const input = fc.record({
      name: text,
      customerId: text,
      country: text,
      asset: text,
      at: text,
      kind: text,
      count: text,
      tags: fc.array(text, { maxLength: 3 })
    })
    fc.assert(
      fc.property(input, (body) => {
        const values = [body.name, body.customerId, body.country, body.asset, body.at, body.kind, body.count, ...body.tags]
        const failure = failureOf(Typed, body)
        // `count` is always a string here, so the body never decodes.
        expect(failure).toBeDefined()
        for (const entry of failure!.errors) {
          expect(fields).toContain(entry.pointer.split("/")[1])
          for (const v of values) {
            if (!knownText.includes(v)) expect(entry.detail.includes(v), `${JSON.stringify(entry)} echoes ${JSON.stringify(v)}`).toBe(false)
          }
        }
      }),
      { numRuns: 300 }
    )
    // And with a marker no detail could contain by chance.
    fc.assert(
      fc.property(input, (body) => {
        const marked = Object.fromEntries(
          Object.entries(body).map(([k, v]) => [k, Array.isArray(v) ? v.map((t) => `SECRET<${t}>`) : `SECRET<${v}>`])
        )
        const failure = failureOf(Typed, marked)
        expect(failure).toBeDefined()
        expect(JSON.stringify(failure!.errors.map((e) => e.detail))).not.toContain("SECRET")
      }),
      { numRuns: 100 }
    )
  })
})
