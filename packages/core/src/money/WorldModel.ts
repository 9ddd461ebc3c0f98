/**
 * The world model's money rules: how long the outside world takes to settle what it sends, and what an inbound
 * transfer costs, when no simulate call decides. Configurable per engine (`EngineOptions.worldModel`);
 * docs/money.md documents the defaults, which follow the rails and chains as they usually behave:
 *
 * - chains: the time to the confirmations fos waits for (Ethereum about 12 blocks, Bitcoin 6 blocks, ...);
 * - ACH and SEPA: the next business day (Monday to Friday, UTC) at a fixed hour;
 * - wires (Fedwire, SWIFT, international wires): within hours;
 * - instant rails (RTP, FedNow, Faster Payments): seconds.
 *
 * Every deposit first confirms (`processing`: the chain saw it, the bank accepted it) and later settles
 * (`completed`, the balance is credited).
 *
 * The market (Pricing.ts reads it): every pair the service prices has a rule, a mid rate (units of the destination
 * asset per unit of the source asset, exact decimal text) and the service's spread in basis points. The default
 * rules derive each pair's mid from reference prices in USD (`referencePricesUsd`, rounded once by Rates.ts), with
 * a spread by the kind of pair; `pricing` in the options (or the seed's `worldModel`) replaces a pair's rule, and
 * `null` removes it (NO_PRICING_CONFIGURED). Fiat rates follow the foreign-exchange market's hours.
 */
import { type AssetCode, type Chain, isFiat, type OrderDirection, type PayoutRail } from "@fos/contract"
import { Context } from "effect"
import * as Rates from "./Rates.ts"

/** A pair's price: its mid rate (destination units per source unit, decimal text) and the service's spread. */
export interface PricingRule {
  readonly mid: string
  readonly spreadBps: number
}

/** The key of a pair's rule: `USD/USDC`. A rule prices the pair on every chain its assets are converted on. */
export const pairKey = (source: AssetCode, destination: AssetCode): string => `${source}/${destination}`

/** What one unit of each asset the market trades is worth in USD (deterministic, roughly the market of 2026). */
export const referencePricesUsd: Readonly<Partial<Record<AssetCode, string>>> = {
  USD: "1",
  EUR: "1.08",
  GBP: "1.27",
  USDC: "1",
  USDT: "1",
  EURC: "1.08",
  ETH: "3000",
  BTC: "60000",
  SOL: "150",
  HKD: "0.128",
  SGD: "0.74"
}

/**
 * Assets the market converts into but never out of: the spec's Versioning rule 6 accepts HKD and SGD as target
 * assets of a quote, and no customer holds them (there are no HKD or SGD virtual accounts), so they are paid out,
 * never spent.
 */
export const targetOnlyAssets: ReadonlySet<AssetCode> = new Set(["HKD", "SGD"])

const stablecoins: ReadonlySet<AssetCode> = new Set(["USDC", "USDT", "EURC"])

/** The default spread of a pair: by the kinds of its assets. */
const defaultSpreadBps = (source: AssetCode, destination: AssetCode): number => {
  if (source === destination) return 5 // a bridge: the same asset on another chain
  const volatile = (a: AssetCode) => !isFiat(a) && !stablecoins.has(a)
  if (volatile(source) || volatile(destination)) return 100
  if (isFiat(source) && isFiat(destination)) return 30
  if (!isFiat(source) && !isFiat(destination)) return 10
  return 50
}

/** Every pair of the reference assets (and each crypto asset with itself, a bridge), priced from the reference. */
export const defaultPricing: Readonly<Record<string, PricingRule>> = Object.fromEntries(
  (Object.keys(referencePricesUsd) as Array<AssetCode>).filter((source) => !targetOnlyAssets.has(source)).flatMap((source) =>
    (Object.keys(referencePricesUsd) as Array<AssetCode>)
      .filter((destination) => destination !== source || !isFiat(source))
      .map((destination) => [pairKey(source, destination), {
        mid: Rates.ratio(referencePricesUsd[source]!, referencePricesUsd[destination]!),
        spreadBps: defaultSpreadBps(source, destination)
      }])
  )
)

/** How a rail settles: after a fixed delay, or on the next business day at an hour of the day (UTC). */
export type Settlement = { readonly afterMs: number } | { readonly nextBusinessDayAtHourUtc: number }

export interface WorldModelValue {
  /** The time from a deposit's broadcast to the confirmations fos waits for, per chain. */
  readonly chainSettlementMs: Readonly<Record<Chain, number>>
  /** When an inbound bank transfer settles, per rail. */
  readonly railSettlement: Readonly<Record<PayoutRail, Settlement>>
  /** How long after it arrives a deposit is confirmed (processing), on every rail and chain. */
  readonly confirmationMs: number
  /** What the service charges for an inbound transfer, per rail, in units of the currency's major unit (decimal text). */
  readonly inboundFee: Readonly<Partial<Record<PayoutRail, string>>>
  /** How long a deposit that arrived without its sender's details waits for them. */
  readonly senderInformationWindowMs: number
  /** The most of an asset a wallet may hold and still rotate (decimal text); none means nothing at all. */
  readonly dustFloor: Readonly<Partial<Record<AssetCode, string>>>
  /**
   * How long a rotation lasts: for this long after it, what arrives at the retired wallet's address is credited to
   * its successor, and neither wallet can rotate (WALLET_ROTATION_IN_PROGRESS).
   */
  readonly rotationForwardingMs: number
  /** The market's rule per pair (`pairKey`); a pair without one is NO_PRICING_CONFIGURED. */
  readonly pricing: Readonly<Record<string, PricingRule>>
  /** The foreign-exchange market's week (UTC): it closes on Friday at one hour and opens on Sunday at another. */
  readonly fxMarket: { readonly closesFridayAtHourUtc: number; readonly opensSundayAtHourUtc: number }
  /** The service's fee per order direction, in basis points of the principal, in the source asset. */
  readonly orderFeeBps: Readonly<Record<OrderDirection, number>>
  /** How long a quote option can be redeemed. */
  readonly quoteTtlMs: number
  /** How long an order's price is locked: its lockExpiresAt is this long after its creation. */
  readonly orderLockMs: number
  /** From an order's execution to its source transfer being sent (its transaction moving to processing). */
  readonly orderStartMs: number
  /** From the source transfer being sent to the conversion settling, per direction. */
  readonly orderSettlementMs: Readonly<Record<OrderDirection, number>>
  /** The smallest and largest amount an order may convert, per source asset (decimal text). */
  readonly orderBounds: Readonly<Partial<Record<AssetCode, { readonly min: string; readonly max: string }>>>
  /** Payouts (Payouts.ts): what they cost, how long each step takes, which go to review. */
  readonly payouts: PayoutModel
  /** How long the caller has to answer a request for information when the reviewer names no deadline. */
  readonly rfiDeadlineMs: number
}

/** The world model's payout rules; docs/money.md ("Payouts") lists the defaults. */
export interface PayoutModel {
  /** The service's fee for a bank payout, per rail, in the currency's major unit (decimal text). */
  readonly railFee: Readonly<Partial<Record<PayoutRail, string>>>
  /** The network fee of a crypto payout, per asset (decimal text). */
  readonly networkFee: Readonly<Partial<Record<AssetCode, string>>>
  /** From creation to compliance clearing (processing), for a payout that is not reviewed. */
  readonly complianceMs: number
  /** From processing to the transfer being sent to the rail or broadcast on the chain. */
  readonly sendMs: number
  /** How long the world model's own review of a payout lasts before it clears. */
  readonly reviewMs: number
  /** A payout of at least this amount (per asset, decimal text) goes to review. */
  readonly reviewThreshold: Readonly<Partial<Record<AssetCode, string>>>
  /** A bank payout to a recipient in one of these countries (ISO 3166-1 alpha-3) goes to review. */
  readonly reviewCountries: ReadonlyArray<string>
  /** Whether the first payout to a saved recipient (whitelist recipient or registered address) goes to review. */
  readonly reviewNewRecipients: boolean
  /** A crypto payout of at least this amount (per asset, decimal text) must carry travel-rule information. */
  readonly travelRuleThreshold: Readonly<Partial<Record<AssetCode, string>>>
  /** How long after completion the references that arrive late (fedwireOmad) arrive. */
  readonly lateReferenceMs: number
}

const minute = 60_000
const hour = 60 * minute

export const defaultWorldModel: WorldModelValue = {
  chainSettlementMs: {
    ethereum: 3 * minute,
    base: minute,
    polygon: 2 * minute,
    arbitrum: minute,
    optimism: minute,
    avalanche: 30_000,
    bsc: 45_000,
    solana: 15_000,
    tron: minute,
    stellar: 10_000,
    bitcoin: hour
  },
  railSettlement: {
    ach: { nextBusinessDayAtHourUtc: 14 },
    sepa: { nextBusinessDayAtHourUtc: 10 },
    fedwire: { afterMs: 2 * hour },
    swift: { afterMs: 4 * hour },
    international_wire: { afterMs: 4 * hour },
    rtp: { afterMs: 5_000 },
    fednow: { afterMs: 5_000 },
    faster_payments: { afterMs: 10_000 }
  },
  confirmationMs: 2_000,
  inboundFee: { fedwire: "10", swift: "15", international_wire: "15" },
  senderInformationWindowMs: 72 * hour,
  dustFloor: { USDC: "0.01", USDT: "0.01", DAI: "0.01", EURC: "0.01", PYUSD: "0.01", ETH: "0.00001", BTC: "0.00001", SOL: "0.0001", TRX: "1" },
  rotationForwardingMs: 24 * hour,
  pricing: defaultPricing,
  fxMarket: { closesFridayAtHourUtc: 22, opensSundayAtHourUtc: 22 },
  orderFeeBps: { onramp: 25, offramp: 25, conversion: 10, fiat_conversion: 15 },
  quoteTtlMs: minute,
  orderLockMs: 15 * minute,
  orderStartMs: 2_000,
  orderSettlementMs: { onramp: minute, offramp: minute, conversion: 30_000, fiat_conversion: minute },
  orderBounds: {
    USD: { min: "1", max: "1000000" },
    EUR: { min: "1", max: "1000000" },
    GBP: { min: "1", max: "1000000" },
    USDC: { min: "1", max: "1000000" },
    USDT: { min: "1", max: "1000000" },
    EURC: { min: "1", max: "1000000" },
    ETH: { min: "0.0001", max: "500" },
    BTC: { min: "0.00001", max: "20" },
    SOL: { min: "0.01", max: "10000" }
  },
  payouts: {
    railFee: { ach: "1", rtp: "1", fednow: "1", fedwire: "15", swift: "25", international_wire: "25", sepa: "1", faster_payments: "1" },
    networkFee: { USDC: "0.5", USDT: "0.5", DAI: "0.5", EURC: "0.5", PYUSD: "0.5", ETH: "0.0005", BTC: "0.0001", SOL: "0.001", TRX: "1" },
    complianceMs: 2_000,
    sendMs: 2_000,
    reviewMs: 30 * minute,
    reviewThreshold: { USD: "10000", EUR: "10000", GBP: "10000", USDC: "10000", USDT: "10000", DAI: "10000", EURC: "10000", PYUSD: "10000" },
    reviewCountries: [],
    reviewNewRecipients: false,
    travelRuleThreshold: { USDC: "1000", USDT: "1000", DAI: "1000", EURC: "1000", PYUSD: "1000", ETH: "0.3", BTC: "0.01", SOL: "5", TRX: "3000" },
    lateReferenceMs: minute
  },
  rfiDeadlineMs: 7 * 24 * hour
}

/** What an engine's options may change: any rule, per chain or rail; the rest keeps its default. */
export interface WorldModelOptions {
  readonly chainSettlementMs?: Partial<Record<Chain, number>>
  readonly railSettlement?: Partial<Record<PayoutRail, Settlement>>
  readonly confirmationMs?: number
  readonly inboundFee?: Partial<Record<PayoutRail, string>>
  readonly dustFloor?: Partial<Record<AssetCode, string>>
  readonly rotationForwardingMs?: number
  readonly senderInformationWindowMs?: number
  /** Rules per pair (`USD/USDC`) over the defaults; `null` removes a pair's rule. */
  readonly pricing?: Readonly<Record<string, PricingRule | null>>
  readonly fxMarket?: WorldModelValue["fxMarket"]
  readonly orderFeeBps?: Partial<Record<OrderDirection, number>>
  readonly quoteTtlMs?: number
  readonly orderLockMs?: number
  readonly orderStartMs?: number
  readonly orderSettlementMs?: Partial<Record<OrderDirection, number>>
  readonly orderBounds?: Partial<Record<AssetCode, { readonly min: string; readonly max: string }>>,
  readonly payouts?: Partial<PayoutModel>
  readonly rfiDeadlineMs?: number
}

export const worldModelOf = (options: WorldModelOptions = {}): WorldModelValue => ({
  chainSettlementMs: { ...defaultWorldModel.chainSettlementMs, ...options.chainSettlementMs } as WorldModelValue["chainSettlementMs"],
  railSettlement: { ...defaultWorldModel.railSettlement, ...options.railSettlement } as WorldModelValue["railSettlement"],
  confirmationMs: options.confirmationMs ?? defaultWorldModel.confirmationMs,
  inboundFee: { ...defaultWorldModel.inboundFee, ...options.inboundFee },
  dustFloor: { ...defaultWorldModel.dustFloor, ...options.dustFloor },
  rotationForwardingMs: options.rotationForwardingMs ?? defaultWorldModel.rotationForwardingMs,
  senderInformationWindowMs: options.senderInformationWindowMs ?? defaultWorldModel.senderInformationWindowMs,
  pricing: Object.fromEntries(
    Object.entries({ ...defaultWorldModel.pricing, ...options.pricing }).filter((entry): entry is [string, PricingRule] => entry[1] !== null)
  ),
  fxMarket: options.fxMarket ?? defaultWorldModel.fxMarket,
  orderFeeBps: { ...defaultWorldModel.orderFeeBps, ...options.orderFeeBps },
  quoteTtlMs: options.quoteTtlMs ?? defaultWorldModel.quoteTtlMs,
  orderLockMs: options.orderLockMs ?? defaultWorldModel.orderLockMs,
  orderStartMs: options.orderStartMs ?? defaultWorldModel.orderStartMs,
  orderSettlementMs: { ...defaultWorldModel.orderSettlementMs, ...options.orderSettlementMs },
  orderBounds: { ...defaultWorldModel.orderBounds, ...options.orderBounds },
  payouts: { ...defaultWorldModel.payouts, ...options.payouts },
  rfiDeadlineMs: options.rfiDeadlineMs ?? defaultWorldModel.rfiDeadlineMs
})

export class WorldModel extends Context.Reference<WorldModelValue>("fos/WorldModel", {
  defaultValue: () => defaultWorldModel
}) {}

const dayMs = 24 * hour

/** When something sent at `nowMs` settles under `settlement`. */
export const settlesAt = (nowMs: number, settlement: Settlement): number => {
  if ("afterMs" in settlement) return nowMs + settlement.afterMs
  let day = Math.floor(nowMs / dayMs) * dayMs
  do day += dayMs
  while ([0, 6].includes(new Date(day).getUTCDay()))
  return day + settlement.nextBusinessDayAtHourUtc * hour
}
