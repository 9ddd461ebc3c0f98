/**
 * The market: what a pair of assets costs now, as the world model (WorldModel.ts) and the sandbox's simulate calls
 * decide it.
 *
 * - A pair the service does not convert at all (an asset the market does not trade, or an asset on a chain it is not
 *   converted on) is 422 UNSUPPORTED_PAIR, with `sourceAsset`, `destinationAsset`, `sourceChain` and
 *   `destinationChain` (null for fiat) in the problem. The same asset on the same chain is no conversion at all:
 *   422 INVALID_ORDER_COMBO.
 * - HKD and SGD are target assets only (the spec's Versioning rule 6): a pair that converts out of them is
 *   UNSUPPORTED_PAIR too.
 * - A pair of traded assets without a rule is 404 NO_PRICING_CONFIGURED.
 * - A pair with a fiat asset follows the foreign-exchange market's hours. While the market is closed, the last
 *   rate of the pair seen while it was open (or set by `simulate/rates`) is used; when there is none, the answer is
 *   503 RATE_UNAVAILABLE_AFTER_HOURS. Crypto pairs trade all week.
 * - `POST /sandbox/v2/simulate/rates` changes a pair's mid rate from then on, or makes the pair's rate unavailable
 *   (503 RATE_UNAVAILABLE) until it is made available again. The market's state is kept per organization and
 *   environment (`MarketRates`), so one organization's sandbox never moves another's.
 */
import { type AssetCode, type Chain, isFiat, type PairPricing, type RateChange, toIso } from "@fos/contract"
import { Clock, Effect } from "effect"
import type * as Auth from "../tenancy/Auth.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as WorldModel from "./WorldModel.ts"

/** The chains each on-chain asset the market trades is converted on; a fiat asset the market trades has none. */
export const marketChains: Readonly<Partial<Record<AssetCode, ReadonlyArray<Chain>>>> = {
  USD: [],
  EUR: [],
  GBP: [],
  HKD: [],
  SGD: [],
  USDC: ["ethereum", "base", "solana", "polygon", "arbitrum", "optimism", "avalanche", "stellar"],
  USDT: ["ethereum", "tron", "solana", "polygon"],
  EURC: ["ethereum", "base", "solana"],
  ETH: ["ethereum", "base", "arbitrum", "optimism"],
  BTC: ["bitcoin"],
  SOL: ["solana"]
}

/** One side of a pair: an asset, with its chain when it is on-chain. */
export interface PairSide {
  readonly asset: AssetCode
  readonly chain?: Chain | undefined
}

/** What the market holds for a pair of an organization's environment, once it was priced or simulated. */
export interface MarketRate {
  readonly scope: string
  readonly pair: string
  /** The mid rate a simulate call set; the rule's mid when undefined. */
  readonly mid: string | undefined
  readonly available: boolean
  readonly updatedAt: string
}

export const MarketRates = Store.table<MarketRate>({
  name: "market_rates",
  key: (r) => `${r.scope}/${r.pair}`,
  orders: { byScope: { partition: (r) => r.scope, sort: (r) => r.pair, counted: false } }
})

/** A pair's price now. */
export interface Price {
  readonly mid: string
  readonly spreadBps: number
}

const traded = (side: PairSide): boolean => {
  const chains = marketChains[side.asset]
  if (chains === undefined) return false
  return isFiat(side.asset) ? side.chain === undefined : side.chain !== undefined && chains.includes(side.chain)
}

const unsupported = (source: PairSide, destination: PairSide) =>
  Problem.apiError("UNSUPPORTED_PAIR", `The service does not convert ${describe(source)} to ${describe(destination)}.`, {
    pair: {
      sourceAsset: source.asset,
      destinationAsset: destination.asset,
      sourceChain: source.chain ?? null,
      destinationChain: destination.chain ?? null
    }
  })

const describe = (side: PairSide) => (side.chain === undefined ? side.asset : `${side.asset} on ${side.chain}`)

const noPricing = (source: AssetCode, destination: AssetCode) =>
  Problem.apiError("NO_PRICING_CONFIGURED", `There is no pricing rule for ${source} to ${destination}.`)

/** Whether the foreign-exchange market is open at `nowMs`: from Sunday's opening hour to Friday's closing hour, UTC. */
export const fxMarketOpen = (nowMs: number, hours: WorldModel.WorldModelValue["fxMarket"]): boolean => {
  const at = new Date(nowMs)
  const day = at.getUTCDay()
  const hour = at.getUTCHours()
  if (day === 6) return false
  if (day === 5) return hour < hours.closesFridayAtHourUtc
  if (day === 0) return hour >= hours.opensSundayAtHourUtc
  return true
}

/**
 * The price of `source` to `destination` for the organization's environment `scope`, now; or why there is none.
 * The first price of a pair while its market is open is kept, as the prior rate a closed market falls back on.
 */
export const priceOf = (scope: string, source: PairSide, destination: PairSide): Effect.Effect<Price, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    if (!traded(source) || WorldModel.targetOnlyAssets.has(source.asset) || !traded(destination)) return yield* unsupported(source, destination)
    if (source.asset === destination.asset && source.chain === destination.chain) {
      return yield* Problem.apiError("INVALID_ORDER_COMBO", "The source and the destination are the same asset on the same chain; there is nothing to convert.")
    }
    const model = yield* WorldModel.WorldModel
    const pair = WorldModel.pairKey(source.asset, destination.asset)
    const rule = model.pricing[pair]
    if (rule === undefined) return yield* noPricing(source.asset, destination.asset)
    const store = yield* Store.Store
    const known = yield* store.get(MarketRates, `${scope}/${pair}`)
    if (known !== undefined && !known.available) {
      return yield* Problem.apiError("RATE_UNAVAILABLE", `The rate for ${source.asset} to ${destination.asset} is unavailable right now; retry later.`)
    }
    const now = yield* Clock.currentTimeMillis
    const fiat = isFiat(source.asset) || isFiat(destination.asset)
    if (fiat && !fxMarketOpen(now, model.fxMarket) && known === undefined) {
      return yield* Problem.apiError(
        "RATE_UNAVAILABLE_AFTER_HOURS",
        `The foreign-exchange market is closed and there is no prior rate for ${source.asset} to ${destination.asset}; retry when it opens (Sunday ${model.fxMarket.opensSundayAtHourUtc}:00 UTC).`
      )
    }
    if (known === undefined) {
      // The market's first quote of this pair: the prior rate once the market closes. A racing first quote wrote the same.
      yield* Effect.exit(store.insert(MarketRates, { scope, pair, mid: undefined, available: true, updatedAt: toIso(now) }))
    }
    return { mid: known?.mid ?? rule.mid, spreadBps: rule.spreadBps }
  })

/** `POST /sandbox/v2/simulate/rates`: moves a pair's mid rate, or its availability, from now on. */
export const setRate = (caller: Auth.Caller, change: RateChange): Effect.Effect<PairPricing, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const source = change.sourceAsset
    const destination = change.destinationAsset
    if (marketChains[source] === undefined || marketChains[destination] === undefined) {
      return yield* unsupported({ asset: source }, { asset: destination })
    }
    const model = yield* WorldModel.WorldModel
    const pair = WorldModel.pairKey(source, destination)
    const rule = model.pricing[pair]
    if (rule === undefined) return yield* noPricing(source, destination)
    const store = yield* Store.Store
    const scope = Tenancy.scopeOf(caller.organization.id, caller.environment)
    const now = toIso(yield* Clock.currentTimeMillis)
    const known = yield* store.getForUpdate(MarketRates, `${scope}/${pair}`)
    const next: MarketRate = {
      scope,
      pair,
      mid: change.mid ?? known?.mid,
      available: change.available ?? known?.available ?? true,
      updatedAt: now
    }
    yield* Effect.orDie(known === undefined ? store.insert(MarketRates, next) : store.update(MarketRates, next))
    return { sourceAsset: source, destinationAsset: destination, mid: next.mid ?? rule.mid, spreadBps: rule.spreadBps, available: next.available }
  })
