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
 */
import type { AssetCode, Chain, PayoutRail } from "@fos/contract"
import { Context } from "effect"

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
  dustFloor: { USDC: "0.01", USDT: "0.01", DAI: "0.01", EURC: "0.01", PYUSD: "0.01", ETH: "0.00001", BTC: "0.00001", SOL: "0.0001", TRX: "1" }
}

/** What an engine's options may change: any rule, per chain or rail; the rest keeps its default. */
export interface WorldModelOptions {
  readonly chainSettlementMs?: Partial<Record<Chain, number>>
  readonly railSettlement?: Partial<Record<PayoutRail, Settlement>>
  readonly confirmationMs?: number
  readonly inboundFee?: Partial<Record<PayoutRail, string>>
  readonly dustFloor?: Partial<Record<AssetCode, string>>
  readonly senderInformationWindowMs?: number
}

export const worldModelOf = (options: WorldModelOptions = {}): WorldModelValue => ({
  chainSettlementMs: { ...defaultWorldModel.chainSettlementMs, ...options.chainSettlementMs } as WorldModelValue["chainSettlementMs"],
  railSettlement: { ...defaultWorldModel.railSettlement, ...options.railSettlement } as WorldModelValue["railSettlement"],
  confirmationMs: options.confirmationMs ?? defaultWorldModel.confirmationMs,
  inboundFee: { ...defaultWorldModel.inboundFee, ...options.inboundFee },
  dustFloor: { ...defaultWorldModel.dustFloor, ...options.dustFloor },
  senderInformationWindowMs: options.senderInformationWindowMs ?? defaultWorldModel.senderInformationWindowMs
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
