/**
 * Converting an amount of one asset into another at a rate: the one place fos rounds money. A rate is exact decimal
 * text (`"0.92"` EUR per USD), never a float. The result is an integer of the target asset's smallest unit, so it
 * is rounded, always in the service's favour:
 *
 * - what the customer **receives** rounds **down** (a partial unit stays with the service);
 * - what the customer **pays** rounds **up** (a partial unit is charged).
 *
 * Either way the rounding is less than one smallest unit of the target asset.
 */
import { type Amount, type AssetCode, AssetPrecision } from "@fos/contract"

const ratePattern = /^(0|[1-9]\d*)(\.\d+)?$/

/** A positive decimal rate as an exact fraction; undefined when the text is not one. */
export const parseRate = (rate: string): { readonly numerator: bigint; readonly denominator: bigint } | undefined => {
  if (!ratePattern.test(rate)) return undefined
  const [whole, fraction = ""] = rate.split(".") as [string, string?]
  const numerator = BigInt(whole + fraction)
  return numerator === 0n ? undefined : { numerator, denominator: 10n ** BigInt(fraction.length) }
}

/** Who the converted amount goes to, which decides the rounding. */
export type Rounding = "customer_receives" | "customer_pays"

/** `amount` converted into `to` at `rate` (units of `to` per one unit of `amount.asset`), rounded as `rounding` says. */
export const convertAmount = (amount: Amount, rate: string, to: AssetCode, rounding: Rounding): Amount => {
  const r = parseRate(rate)
  if (r === undefined) throw new Error(`not a positive decimal rate: ${rate}`)
  // units_to = units_from * rate * 10^(precision_to - precision_from), as one fraction.
  const numerator = amount.units * r.numerator * 10n ** BigInt(AssetPrecision[to])
  const denominator = r.denominator * 10n ** BigInt(AssetPrecision[amount.asset])
  const floor = numerator / denominator
  const exact = numerator % denominator === 0n
  return { asset: to, units: rounding === "customer_receives" || exact ? floor : floor + 1n }
}
