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
 * - A pair with a fiat asset follows the foreign-exchange market's hours (closed from Friday 22:00 to Sunday 22:00
 *   UTC, `worldModel.fxMarket`). The spec answers 503 RATE_UNAVAILABLE_AFTER_HOURS only when "the market is closed
 *   with no prior rate", and the real market always has a prior rate, its last close, whoever asks: so a closed
 *   market quotes the pair at its last close. With fos's deterministic pricing the last close is the pair's mid now
 *   (the rule's, or the one `simulate/rates` set), so a fresh sandbox quotes and executes every fiat pair on a
 *   weekend as on a weekday, and no quote writes a market row. Crypto pairs trade all week.
 * - `POST /sandbox/v2/simulate/rates` changes a pair's mid rate from then on; makes the pair's rate unavailable
 *   (503 RATE_UNAVAILABLE) until it is made available again; or, since the spec names the code and a client has to
 *   be able to test its handling of it, holds a pair with a fiat asset closed with no prior rate (`afterHours`) until
 *   the market's next regular opening: 503 RATE_UNAVAILABLE_AFTER_HOURS with Retry-After the whole seconds until then,
 *   rounded up. The instant is kept on the pair's row and compared with the clock, so the pair prices again by itself
 *   at the opening with no timer. Unavailable is checked first: it is the stronger state, and was there before.
 *   The market's state is kept per organization and environment (`MarketRates`), so one organization's sandbox never
 *   moves another's.
 */
import { type AssetCode, type Chain, isFiat, type PairPricing, type RateChange, toIso } from "@fos/contract"
import { Clock, Effect } from "effect"
import type * as Auth from "../tenancy/Auth.ts"
import * as Domain from "../kernel/Domain.ts"
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

/** What the market holds for a pair of an organization's environment, once a simulate call moved it. */
export interface MarketRate {
  readonly scope: string
  readonly pair: string
  /** The mid rate a simulate call set; the rule's mid when undefined. */
  readonly mid: string | undefined
  readonly available: boolean
  /** While a simulate call holds the pair after hours: the instant (ISO 8601) its market opens again. */
  readonly afterHoursUntil?: string | undefined
  readonly updatedAt: string
}

export const MarketRates = Store.table<MarketRate>({
  name: "market_rates",
  key: (r) => `${r.scope}/${r.pair}`,
  orders: { byScope: { partition: (r) => r.scope, sort: (r) => r.pair, counted: false } }
})

/** The market rates a sandbox's simulate calls set. */
export const domain = Domain.make({
  name: "money/Pricing",
  tables: [Domain.inScope(MarketRates, "byScope")]
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

const dayMs = 86_400_000

/**
 * The foreign-exchange market's next regular opening strictly after `nowMs`: the next Sunday at its opening hour,
 * UTC (on a Sunday before that hour, the same day's). UTC has no daylight saving, so whole days are exact.
 */
export const nextFxOpening = (nowMs: number, hours: WorldModel.WorldModelValue["fxMarket"]): number => {
  const at = new Date(nowMs)
  const midnight = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate())
  const sunday = midnight + ((7 - at.getUTCDay()) % 7) * dayMs + hours.opensSundayAtHourUtc * 3_600_000
  return sunday > nowMs ? sunday : sunday + 7 * dayMs
}

/** The instant a pair held after hours opens again, while it is still ahead of `nowMs`; undefined otherwise. */
const closedUntil = (rate: MarketRate | undefined, nowMs: number): number | undefined => {
  if (rate?.afterHoursUntil === undefined) return undefined
  const opensMs = Date.parse(rate.afterHoursUntil)
  return nowMs < opensMs ? opensMs : undefined
}

/**
 * The price of `source` to `destination` for the organization's environment `scope`, now; or why there is none.
 * It writes nothing: a closed market's prior rate is the pair's last close, which the rule (or a simulate call) gives.
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
    const opensMs = closedUntil(known, now)
    if (opensMs !== undefined) {
      return yield* Problem.apiError(
        "RATE_UNAVAILABLE_AFTER_HOURS",
        `The market for ${source.asset} to ${destination.asset} is closed after hours with no prior rate; it opens at ${toIso(opensMs)}.`,
        // Whole seconds, rounded up: a client that waits Retry-After finds the pair open.
        { retryAfterSeconds: Math.ceil((opensMs - now) / 1000) }
      )
    }
    return { mid: known?.mid ?? rule.mid, spreadBps: rule.spreadBps }
  })

/**
 * `POST /sandbox/v2/simulate/rates`: moves a pair's mid rate, its availability, or holds its market after hours, from
 * now on. Refusals in this order: UNSUPPORTED_PAIR, NO_PRICING_CONFIGURED, then `afterHours` on a pair with no fiat
 * asset (422 UNPROCESSABLE_ENTITY: such a pair trades all week, so it has no hours to be after).
 */
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
    if (change.afterHours !== undefined && !isFiat(source) && !isFiat(destination)) {
      return yield* Problem.apiError(
        "UNPROCESSABLE_ENTITY",
        `${source} to ${destination} has no fiat asset: it trades all week, so it has no market hours; afterHours applies only to a pair with a fiat asset.`
      )
    }
    const store = yield* Store.Store
    const scope = Tenancy.scopeOf(caller.organization.id, caller.environment)
    const nowMs = yield* Clock.currentTimeMillis
    const known = yield* store.getForUpdate(MarketRates, `${scope}/${pair}`)
    // An opening already passed is dropped: the pair opened by itself then.
    const opensMs = change.afterHours === true ? nextFxOpening(nowMs, model.fxMarket) : change.afterHours === false ? undefined : closedUntil(known, nowMs)
    const afterHoursUntil = opensMs === undefined ? undefined : toIso(opensMs)
    const next: MarketRate = {
      scope,
      pair,
      mid: change.mid ?? known?.mid,
      available: change.available ?? known?.available ?? true,
      ...(afterHoursUntil === undefined ? {} : { afterHoursUntil }),
      updatedAt: toIso(nowMs)
    }
    yield* Effect.orDie(known === undefined ? store.insert(MarketRates, next) : store.update(MarketRates, next))
    return {
      sourceAsset: source,
      destinationAsset: destination,
      mid: next.mid ?? rule.mid,
      spreadBps: rule.spreadBps,
      available: next.available,
      ...(afterHoursUntil === undefined ? {} : { afterHoursUntil })
    }
  })
