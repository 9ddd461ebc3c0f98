/**
 * Quotes, and the terms of a conversion that quotes and orders share.
 *
 * `POST /v2/quotes` prices a conversion and answers one option per recipient type the destination can have (the
 * customer's own account, or an outside recipient through autoPayout). An option is single-use and can be redeemed
 * until its `expiresAt` (the world model's `quoteTtlMs` after the quote); redeeming it after that is 409
 * QUOTE_EXPIRED, a second time 409 QUOTE_ALREADY_USED, an unknown one 404 QUOTE_NOT_FOUND. The expiry is a durable
 * timer that marks the option expired; a redemption also compares the clock, so the answer is the same whether or
 * not the scheduler has reached the timer yet.
 *
 * The terms of a conversion (`termsOf`), for `principal` units of the source asset:
 * - the customer's rate is the mid rate less the service's spread and the client's markupBps (exact decimals);
 * - the destination amount is the principal at that rate, rounded down (Rates.ts); with lockSide destination the
 *   principal is what that amount costs, rounded up;
 * - the service's fee is `orderFeeBps` of the principal, rounded up, and markupAmount is the client's flat margin,
 *   both in the source asset: `totalDebit` is principal plus both;
 * - what the spread and the markupBps keep, in the destination asset, is the difference between the principal at
 *   the mid rate (less the spread, for the markup) and what the customer receives: each is booked as its own leg.
 */
import {
  type AssetCode,
  formatAmount,
  type Fee,
  type LockSide,
  type OrderDirection,
  parseAmount,
  type Quote,
  type QuoteOption,
  type QuoteRequest,
  type RecipientType,
  isFiat,
  AssetPrecision,
  toIso
} from "@fos/contract"
import { Clock, Effect, Schema } from "effect"
import type * as Auth from "../tenancy/Auth.ts"
import * as Domain from "../kernel/Domain.ts"
import * as IdGenerator from "../kernel/IdGenerator.ts"
import * as Pricing from "./Pricing.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Rates from "./Rates.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Timers from "../kernel/Timers.ts"
import * as WorldModel from "./WorldModel.ts"

/** The organization feature that allows markupBps and markupAmount. */
export const clientMarkupFeature = "client_markup"

/** An order's direction from the kinds of its two assets. */
export const directionOf = (source: AssetCode, destination: AssetCode): OrderDirection =>
  isFiat(source) ? (isFiat(destination) ? "fiat_conversion" : "onramp") : isFiat(destination) ? "offramp" : "conversion"

/** What a conversion costs and gives, all in units of the assets' smallest units. */
export interface Terms {
  readonly source: Pricing.PairSide
  readonly destination: Pricing.PairSide
  readonly direction: OrderDirection
  readonly lockSide: LockSide
  readonly mid: string
  readonly spreadBps: number
  readonly markupBps: number | undefined
  /** The customer's rate: destination units per source unit. */
  readonly rate: string
  readonly principal: bigint
  readonly fee: bigint
  readonly markupAmount: bigint
  readonly totalDebit: bigint
  readonly destinationAmount: bigint
  /** What the service's spread keeps, in the destination asset. */
  readonly spreadAmount: bigint
  /** What the client's markupBps keeps, in the destination asset. */
  readonly markupBpsAmount: bigint
}

/** An amount as the caller sent it, cut to the asset's precision (an amount that rounds to zero is refused later). */
const unitsOf = (asset: AssetCode, text: string): bigint => {
  const [whole, fraction = ""] = text.split(".") as [string, string?]
  return parseAmount(asset, fraction.length > AssetPrecision[asset] ? `${whole}.${fraction.slice(0, AssetPrecision[asset])}` : text)!.units
}

/** An amount that rounds to zero: at the asset's precision (the request alone), or at the rate (`termsOf`). */
const roundsToZero = () => Problem.apiError("AMOUNT_OUT_OF_RANGE", "The amount rounds to zero at the asset's precision or at the rate; send a larger amount.")

/**
 * The amount the caller locks, cut to its asset's precision, refused when nothing is left (422 AMOUNT_OUT_OF_RANGE):
 * a check of the request alone, made before any price is read. `termsOf` makes it again, with the amount at the rate.
 */
export const refuseZeroAmount = (input: Pick<TermsInput, "source" | "destination" | "amount" | "lockSide">): Effect.Effect<void, Problem.ApiError> =>
  unitsOf(input.lockSide === "source" ? input.source.asset : input.destination.asset, input.amount) === 0n ? Effect.fail(roundsToZero()) : Effect.void

export interface TermsInput {
  readonly source: Pricing.PairSide
  readonly destination: Pricing.PairSide
  readonly amount: string
  readonly lockSide: LockSide
  readonly markupBps: number | undefined
  readonly markupAmount: string | undefined
}

/** The terms of converting at `price`, or why the amounts are refused. */
export const termsOf = (price: Pricing.Price, input: TermsInput): Effect.Effect<Terms, Problem.ApiError, never> =>
  Effect.gen(function*() {
    const model = yield* WorldModel.WorldModel
    const { source, destination, lockSide } = input
    const markupBps = input.markupBps ?? 0
    if (price.spreadBps + markupBps >= 10_000) {
      return yield* Problem.apiError(
        "CLIENT_MARKUP_SPREAD_EXCEEDED",
        `markupBps ${markupBps} with the service's spread of ${price.spreadBps} basis points leaves no rate; declare at most ${9_999 - price.spreadBps}.`
      )
    }
    const afterSpread = Rates.lessBps(price.mid, price.spreadBps)
    const rate = Rates.lessBps(price.mid, price.spreadBps + markupBps)
    const locked = unitsOf(lockSide === "source" ? source.asset : destination.asset, input.amount)
    const tooSmall = roundsToZero()
    if (locked === 0n) return yield* tooSmall
    const principal = lockSide === "source" ? locked : Rates.sourceFor({ asset: destination.asset, units: locked }, rate, source.asset).units
    const received = Rates.convertAmount({ asset: source.asset, units: principal }, rate, destination.asset, "customer_receives").units
    const destinationAmount = lockSide === "source" ? received : locked
    if (destinationAmount === 0n) return yield* tooSmall
    const bounds = model.orderBounds[source.asset]
    if (bounds !== undefined) {
      const min = parseAmount(source.asset, bounds.min)?.units ?? 0n
      const max = parseAmount(source.asset, bounds.max)?.units
      if (principal < min || (max !== undefined && principal > max)) {
        return yield* Problem.apiError(
          "AMOUNT_OUT_OF_RANGE",
          `The amount converts ${formatAmount({ asset: source.asset, units: principal })} ${source.asset}; orders from ${source.asset} convert from ${bounds.min} to ${bounds.max}.`
        )
      }
    }
    const atMid = Rates.convertAmount({ asset: source.asset, units: principal }, price.mid, destination.asset, "customer_receives").units
    const atSpread = Rates.convertAmount({ asset: source.asset, units: principal }, afterSpread, destination.asset, "customer_receives").units
    const direction = directionOf(source.asset, destination.asset)
    const fee = Rates.bpsOf({ asset: source.asset, units: principal }, model.orderFeeBps[direction]).units
    const markupAmount = input.markupAmount === undefined ? 0n : unitsOf(source.asset, input.markupAmount)
    return {
      source,
      destination,
      direction,
      lockSide,
      mid: price.mid,
      spreadBps: price.spreadBps,
      markupBps: input.markupBps,
      rate,
      principal,
      fee,
      markupAmount,
      totalDebit: principal + fee + markupAmount,
      destinationAmount,
      spreadAmount: atMid - atSpread,
      markupBpsAmount: atSpread - destinationAmount
    }
  })

const assetAmountOf = (side: Pricing.PairSide, units: bigint) =>
  side.chain === undefined
    ? { code: side.asset, amount: formatAmount({ asset: side.asset, units }) }
    : { code: side.asset, amount: formatAmount({ asset: side.asset, units }), chain: side.chain }

export const assetRefOf = (side: Pricing.PairSide) => (side.chain === undefined ? { code: side.asset } : { code: side.asset, chain: side.chain })

/** The fee entries of a conversion: the service's fee, then the client's margins (owner organization). */
export const feesOf = (terms: Terms): ReadonlyArray<Fee> => [
  ...(terms.fee > 0n ? [{ owner: "service" as const, assetAmount: assetAmountOf(terms.source, terms.fee), invoiced: false }] : []),
  ...(terms.markupAmount > 0n ? [{ owner: "organization" as const, assetAmount: assetAmountOf(terms.source, terms.markupAmount), invoiced: false }] : []),
  ...(terms.markupBpsAmount > 0n && terms.markupBps !== undefined
    ? [{ owner: "organization" as const, assetAmount: assetAmountOf(terms.destination, terms.markupBpsAmount), invoiced: false }]
    : [])
]

export const amountOf = assetAmountOf

/** The markup fields of a request, refused without the organization's client_markup feature. */
export const checkMarkupAllowed = (caller: Auth.Caller, body: { readonly markupBps?: number | undefined; readonly markupAmount?: string | undefined }) =>
  body.markupBps === undefined && body.markupAmount === undefined || caller.organization.features.includes(clientMarkupFeature)
    ? Effect.void
    : Effect.fail(Problem.apiError("CLIENT_MARKUP_NOT_ENABLED", "markupBps and markupAmount need the organization's client_markup feature."))

// --- quote options ---------------------------------------------------------------------------------------------------

export interface StoredQuoteOption {
  readonly id: string
  readonly scope: string
  readonly recipientType: RecipientType
  readonly input: TermsInput
  readonly price: Pricing.Price
  readonly expiresAtMs: number
  /** Set by the expiry timer. */
  readonly expired?: boolean | undefined
  readonly usedByOrderId: string | undefined
  readonly createdAt: string
}

export const QuoteOptions = Store.table<StoredQuoteOption>({
  name: "quote_options",
  key: (q) => q.id,
  orders: { byScope: { partition: (q) => q.scope, sort: (q) => q.createdAt, counted: false } }
})

/** The recipient types a destination asset can be priced for. */
/** A target-only currency (HKD, SGD) has no virtual account to land in: it can only be paid out to a bank. */
const recipientTypesOf = (destination: AssetCode): ReadonlyArray<RecipientType> =>
  WorldModel.targetOnlyAssets.has(destination) ? ["external_bank"] : isFiat(destination) ? ["virtual_account", "external_bank"] : ["wallet", "external_crypto"]

export const optionToWire = (option: StoredQuoteOption, terms: Terms): QuoteOption => ({
  id: option.id,
  expiresAt: toIso(option.expiresAtMs),
  recipientType: option.recipientType,
  sourceAssetRef: assetRefOf(terms.source),
  destinationAssetRef: assetRefOf(terms.destination),
  lockSide: terms.lockSide,
  rate: terms.rate,
  sourceAmount: assetAmountOf(terms.source, terms.principal),
  destinationAmount: assetAmountOf(terms.destination, terms.destinationAmount),
  fees: feesOf(terms),
  totalDebit: assetAmountOf(terms.source, terms.totalDebit),
  ...(terms.markupBps === undefined ? {} : { markupBps: terms.markupBps }),
  // In the shape the caller declared it (a decimal string in the source asset), as markupBps is (docs/decisions.md).
  ...(terms.markupAmount > 0n ? { markupAmount: assetAmountOf(terms.source, terms.markupAmount).amount } : {})
}) as QuoteOption

/**
 * `POST /v2/quotes`. Its refusals come in a fixed order (docs/money.md, "The order of a quote's refusals"); a request
 * that breaks two rules gets the first:
 * 1. the caller: markup fields without the organization's client_markup feature (403 CLIENT_MARKUP_NOT_ENABLED), as
 *    on an order;
 * 2. the request alone, before anything is read: its amount, which rounds to zero at its asset's precision (422
 *    AMOUNT_OUT_OF_RANGE), then its pair (422 UNSUPPORTED_PAIR; INVALID_ORDER_COMBO for no conversion at all);
 * 3. the price: the pair's rule (404 NO_PRICING_CONFIGURED), then the market's state (503 RATE_UNAVAILABLE, then
 *    RATE_UNAVAILABLE_AFTER_HOURS);
 * 4. the terms at that price, which need it: the markup with the spread (422 CLIENT_MARKUP_SPREAD_EXCEEDED), then the
 *    amount at the rate and within the bounds (422 AMOUNT_OUT_OF_RANGE).
 * A quote reserves nothing, so no funds are checked.
 */
export const create = (caller: Auth.Caller, body: QuoteRequest): Effect.Effect<Quote, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    yield* checkMarkupAllowed(caller, body)
    const source: Pricing.PairSide = { asset: body.source.asset, chain: body.source.chain }
    const destination: Pricing.PairSide = { asset: body.target.asset, chain: body.target.chain }
    const input: TermsInput = { source, destination, amount: body.amount, lockSide: body.lockSide, markupBps: body.markupBps, markupAmount: body.markupAmount }
    yield* refuseZeroAmount(input)
    const store = yield* Store.Store
    const scope = Tenancy.scopeOf(caller.organization.id, caller.environment)
    const price = yield* Pricing.priceOf(scope, source, destination)
    const terms = yield* termsOf(price, input)
    const now = yield* Clock.currentTimeMillis
    const model = yield* WorldModel.WorldModel
    const options: Array<QuoteOption> = []
    for (const recipientType of recipientTypesOf(destination.asset)) {
      const option: StoredQuoteOption = {
        id: yield* IdGenerator.newPlainId("qop"),
        scope,
        recipientType,
        input,
        price,
        expiresAtMs: now + model.quoteTtlMs,
        usedByOrderId: undefined,
        createdAt: toIso(now)
      }
      yield* Effect.orDie(store.insert(QuoteOptions, option))
      yield* Timers.schedule(expiryTimer, option.expiresAtMs, { optionId: option.id }, scope)
      options.push(optionToWire(option, terms))
    }
    return { options, createdAt: toIso(now) }
  })

/**
 * The option `id` of the caller's, locked, for an order to redeem now: QUOTE_NOT_FOUND, QUOTE_ALREADY_USED or
 * QUOTE_EXPIRED when it cannot be.
 */
export const redeemableOption = (caller: Auth.Caller, id: string): Effect.Effect<StoredQuoteOption, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const option = yield* store.getForUpdate(QuoteOptions, id)
    if (option === undefined || option.scope !== Tenancy.scopeOf(caller.organization.id, caller.environment)) {
      return yield* Problem.apiError("QUOTE_NOT_FOUND", "No quote option with this id exists in this organization and environment.")
    }
    if (option.usedByOrderId !== undefined) return yield* Problem.apiError("QUOTE_ALREADY_USED", "This quote option was already redeemed by an order.")
    if (option.expired === true || (yield* Clock.currentTimeMillis) >= option.expiresAtMs) {
      return yield* Problem.apiError("QUOTE_EXPIRED", `This quote option expired at ${toIso(option.expiresAtMs)}.`)
    }
    return option
  })

/** The option (locked by `redeemableOption`) is redeemed by order `orderId`, in the order's transaction. */
export const markUsed = (option: StoredQuoteOption, orderId: string): Effect.Effect<void, never, Store.Store> =>
  Effect.orDie(Effect.flatMap(Store.Store, (store) => store.update(QuoteOptions, { ...option, usedByOrderId: orderId })))

/** A quote option's expiry, at its `expiresAtMs`. */
export const expiryTimer = Timers.kind("quote.expiry", Schema.Struct({ optionId: Schema.String }), "optionId")

/** A quote option's expiry: an option not redeemed by then is expired. */
const expire = (payload: { readonly optionId: string }) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const option = yield* store.getForUpdate(QuoteOptions, payload.optionId)
    if (option === undefined || option.usedByOrderId !== undefined || option.expired === true) return
    yield* Effect.orDie(store.update(QuoteOptions, { ...option, expired: true }))
  })

/** A sandbox's quote options, and their expiry. */
export const domain = Domain.make({
  name: "money/Quotes",
  tables: [{ ...Domain.inScope(QuoteOptions, "byScope"), counted: "quoteOptions" }],
  timers: [Timers.handle(expiryTimer, expire, (id) => `expires quote option ${id}`)]
})
