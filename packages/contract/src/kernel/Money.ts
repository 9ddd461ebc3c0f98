/**
 * Assets, chains and exact amounts. Amounts are decimal strings on the wire and scaled bigints inside (never
 * floats), each asset with its own precision: ISO 4217 minor units for fiat, the token's decimals on chain.
 */
import { Schema } from "effect"

/** Decimal places of every asset code of the spec. */
export const AssetPrecision = {
  USD: 2, EUR: 2, GBP: 2, CHF: 2, JPY: 0, CAD: 2, AUD: 2, NZD: 2, SGD: 2, HKD: 2, CNY: 2, KRW: 0, INR: 2,
  BRL: 2, MXN: 2, ARS: 2, CLP: 0, COP: 2, PEN: 2, ZAR: 2, NGN: 2, KES: 2, GHS: 2, EGP: 2, AED: 2, SAR: 2,
  ILS: 2, TRY: 2, PLN: 2, CZK: 2, HUF: 2, SEK: 2, NOK: 2, DKK: 2, THB: 2, IDR: 2, MYR: 2, PHP: 2, VND: 0,
  TWD: 2, USDC: 6, USDT: 6, DAI: 18, EURC: 6, PYUSD: 6, BTC: 8, ETH: 18, SOL: 9, TRX: 6
} as const

export type AssetCode = keyof typeof AssetPrecision
export const AssetCodes = Object.keys(AssetPrecision) as ReadonlyArray<AssetCode>
export const AssetCode = Schema.Literals(AssetCodes as [AssetCode, ...Array<AssetCode>])

/** On-chain assets; every other asset code is fiat and carries no chain. */
export const CryptoAssets: ReadonlySet<AssetCode> = new Set(["USDC", "USDT", "DAI", "EURC", "PYUSD", "BTC", "ETH", "SOL", "TRX"])
export const isFiat = (asset: AssetCode): boolean => !CryptoAssets.has(asset)

export const Chains = [
  "ethereum", "base", "solana", "polygon", "arbitrum", "optimism", "avalanche", "tron", "stellar", "bsc", "bitcoin"
] as const
export type Chain = typeof Chains[number]
export const Chain = Schema.Literals(Chains)

/** An exact amount of one asset: `units` of 10^-precision. */
export interface Amount {
  readonly asset: AssetCode
  readonly units: bigint
}

const decimalPattern = /^(0|[1-9]\d*)(\.\d+)?$/

/** Parses a non-negative decimal string within the asset's precision; undefined when it is not one. */
export const parseAmount = (asset: AssetCode, text: string): Amount | undefined => {
  if (!decimalPattern.test(text)) return undefined
  const precision = AssetPrecision[asset]
  const [whole, fraction = ""] = text.split(".") as [string, string?]
  if (fraction.length > precision) return undefined
  return { asset, units: BigInt(whole + fraction.padEnd(precision, "0")) }
}

/** Renders an amount with exactly the asset's precision: `formatAmount({ asset: "USD", units: 1050n })` is "10.50". */
export const formatAmount = ({ asset, units }: Amount): string => {
  const precision = AssetPrecision[asset]
  const negative = units < 0n
  const digits = (negative ? -units : units).toString().padStart(precision + 1, "0")
  const text = precision === 0 ? digits : `${digits.slice(0, -precision)}.${digits.slice(-precision)}`
  return negative ? `-${text}` : text
}

const sameAsset = (a: Amount, b: Amount): void => {
  if (a.asset !== b.asset) throw new Error(`asset mismatch: ${a.asset} and ${b.asset}`)
}

export const addAmounts = (a: Amount, b: Amount): Amount => (sameAsset(a, b), { asset: a.asset, units: a.units + b.units })
export const subtractAmounts = (a: Amount, b: Amount): Amount => (sameAsset(a, b), { asset: a.asset, units: a.units - b.units })
