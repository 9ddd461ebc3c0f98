/**
 * Converting an amount of one asset into another at a rate: the one place fos rounds money. A rate is exact decimal
 * text (`"0.92"` EUR per USD), never a float. The result is an integer of the target asset's smallest unit, so it
 * is rounded, always in the service's favour:
 *
 * - what the customer **receives** rounds **down** (a partial unit stays with the service);
 * - what the customer **pays** rounds **up** (a partial unit is charged).
 *
 * Either way the rounding is less than one smallest unit of the target asset. The same rule rounds a fee charged
 * in basis points (the customer pays it: up), the source amount an order needs for a fixed destination amount (the
 * customer pays it: up), and a mid rate derived from two reference prices (what the customer receives per unit:
 * down, at `Rates.digits` significant digits). A spread or markup in basis points applied to a decimal rate stays an
 * exact decimal and needs no rounding.
 */
import { type Amount, type AssetCode, AssetPrecision } from "@fos/contract"

const ratePattern = /^(0|[1-9]\d*)(\.\d+)?$/

/** A positive decimal rate as an exact fraction; undefined when the text is not one. */
export const parse = (rate: string): { readonly numerator: bigint; readonly denominator: bigint } | undefined => {
  if (!ratePattern.test(rate)) return undefined
  const [whole, fraction = ""] = rate.split(".") as [string, string?]
  const numerator = BigInt(whole + fraction)
  return numerator === 0n ? undefined : { numerator, denominator: 10n ** BigInt(fraction.length) }
}

/** Who the converted amount goes to, which decides the rounding. */
export type Rounding = "customer_receives" | "customer_pays"

/** The rate `rate` less `bps` basis points (the service's spread, a client's markup): exact decimal text. */
export const lessBps = (rate: string, bps: number): string => {
  const r = parse(rate)
  if (r === undefined) throw new Error(`not a positive decimal rate: ${rate}`)
  return decimalText(r.numerator * BigInt(10_000 - bps), r.denominator * 10_000n)
}

/** An exact fraction whose denominator is a power of ten, as decimal text without trailing zeros. */
const decimalText = (numerator: bigint, denominator: bigint): string => {
  const places = denominator.toString().length - 1
  const digits = numerator.toString().padStart(places + 1, "0")
  if (places === 0) return digits
  const text = `${digits.slice(0, -places)}.${digits.slice(-places)}`.replace(/0+$/, "").replace(/\.$/, "")
  return text
}

/** Significant digits of a mid rate derived from two reference prices. */
export const digits = 10

/** `from` / `to` (two positive decimal prices) as a rate, rounded down to `Rates.digits` significant digits. */
export const ratio = (from: string, to: string): string => {
  const a = parse(from)
  const b = parse(to)
  if (a === undefined || b === undefined) throw new Error(`not positive decimal prices: ${from}, ${to}`)
  const numerator = a.numerator * b.denominator
  const denominator = a.denominator * b.numerator
  // Scale so that the integer part of numerator * 10^places / denominator has rateDigits digits.
  let places = 0
  while ((numerator * 10n ** BigInt(places)) / denominator < 10n ** BigInt(digits - 1)) places++
  return decimalText((numerator * 10n ** BigInt(places)) / denominator, 10n ** BigInt(places))
}

/** `bps` basis points of `amount`, which the customer pays: rounded up. */
export const bpsOf = (amount: Amount, bps: number): Amount => {
  const numerator = amount.units * BigInt(bps)
  return { asset: amount.asset, units: numerator / 10_000n + (numerator % 10_000n === 0n ? 0n : 1n) }
}

/**
 * What the customer pays in `from` so that `rate` gives at least `destination`: the source amount of an order that
 * fixes its destination amount. Rounded up.
 */
export const sourceFor = (destination: Amount, rate: string, from: AssetCode): Amount => {
  const r = parse(rate)
  if (r === undefined) throw new Error(`not a positive decimal rate: ${rate}`)
  // units_from = units_to / rate * 10^(precision_from - precision_to), as one fraction.
  const numerator = destination.units * r.denominator * 10n ** BigInt(AssetPrecision[from])
  const denominator = r.numerator * 10n ** BigInt(AssetPrecision[destination.asset])
  return { asset: from, units: numerator / denominator + (numerator % denominator === 0n ? 0n : 1n) }
}

/** `amount` converted into `to` at `rate` (units of `to` per one unit of `amount.asset`), rounded as `rounding` says. */
export const convertAmount = (amount: Amount, rate: string, to: AssetCode, rounding: Rounding): Amount => {
  const r = parse(rate)
  if (r === undefined) throw new Error(`not a positive decimal rate: ${rate}`)
  // units_to = units_from * rate * 10^(precision_to - precision_from), as one fraction.
  const numerator = amount.units * r.numerator * 10n ** BigInt(AssetPrecision[to])
  const denominator = r.denominator * 10n ** BigInt(AssetPrecision[amount.asset])
  const floor = numerator / denominator
  const exact = numerator % denominator === 0n
  return { asset: to, units: rounding === "customer_receives" || exact ? floor : floor + 1n }
}
