/**
 * Orders and quotes: converting between assets (spec, "Order" resource, the order state table, POST /quotes, POST
 * /orders, /orders/{id}/execute and /orders/{id}/cancel).
 *
 * The spec names the order's fields (status, lockExpiresAt, totalDebit, autoExecute, autoPayout, depositInstructions,
 * quoteOptionId, markupBps / markupAmount) and a quote option's (id, expiry, sourceAssetRef, destinationAssetRef);
 * the rest is "not shown", and fos's choices are written down in docs/money.md ("Orders"). They reuse the money
 * vocabulary of Transactions.ts: `AssetRef`, `AssetAmount` and `Fee`.
 */
import { Schema } from "effect"
import "../kernel/Annotations.ts"
import { CustomerId, DocumentId, OrderId, TransactionId, VirtualAccountId, WalletId } from "../kernel/Ids.ts"
import { AssetCode, Chain, isFiat } from "../kernel/Money.ts"
import { DecimalString, NonBlankString, UtcTimestamp } from "../kernel/Primitives.ts"
import { Country } from "../kernel/Geo.ts"
import { AssetAmount, AssetRef, Fee, PayoutRail } from "./Transactions.ts"
import { OrderFailureReasonCodes } from "../events/Events.ts"

export const OrderStatuses = ["pending", "succeeded", "failed", "cancelled"] as const
export type OrderStatus = typeof OrderStatuses[number]
export const OrderStatus = Schema.Literals(OrderStatuses)

/** What an order converts: fiat to crypto, crypto to fiat, crypto to crypto, fiat to fiat (its transaction's type). */
export const OrderDirections = ["onramp", "offramp", "conversion", "fiat_conversion"] as const
export type OrderDirection = typeof OrderDirections[number]
export const OrderDirection = Schema.Literals(OrderDirections)

/** Which side's amount the order (or quote) fixes; the other side follows from the rate. */
export const LockSides = ["source", "destination"] as const
export type LockSide = typeof LockSides[number]
export const LockSide = Schema.Literals(LockSides)

/** Who a quote option is priced for: the customer's own account, or an outside recipient of an autoPayout. */
export const RecipientTypes = ["wallet", "virtual_account", "external_crypto", "external_bank"] as const
export type RecipientType = typeof RecipientTypes[number]
export const RecipientType = Schema.Literals(RecipientTypes)

export const OrderCancellationReasons = ["client_cancelled", "expired"] as const
export type OrderCancellationReason = typeof OrderCancellationReasons[number]

/** A positive decimal amount (the order's or quote's `amount`). */
const PositiveDecimal = DecimalString.check(
  Schema.makeFilter((s: string) => !/^0(\.0+)?$/.test(s), { fosDetail: "must be greater than zero" })
)

/** The client's margin in basis points: a whole number from 0 to 10000. */
export const MarkupBps = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 10_000 }, { fosDetail: "must be a whole number of basis points from 0 to 10000" }))

/** The chain rule of the spec's enumerations for an `{ asset, chain? }` pair. */
const chainRule = (a: { readonly asset: AssetCode; readonly chain?: Chain }) => {
  if (isFiat(a.asset)) return a.chain === undefined ? undefined : { path: ["chain"], issue: "must be omitted for a fiat asset" }
  return a.chain === undefined ? { path: ["chain"], issue: "is required for an on-chain asset" } : undefined
}

/** An asset as a quote names it: `{ asset, chain? }`, the chain present for on-chain assets only. */
export const QuoteAsset = Schema.Struct({ asset: AssetCode, chain: Schema.optionalKey(Chain) }).check(Schema.makeFilter(chainRule))

/** `POST /v2/quotes`. */
export const QuoteRequest = Schema.Struct({
  source: QuoteAsset,
  target: Schema.Struct({ asset: AssetCode, chain: Schema.optionalKey(Chain), country: Schema.optionalKey(Country) }).check(Schema.makeFilter(chainRule)),
  amount: PositiveDecimal,
  lockSide: LockSide,
  /** Recommended now; the spec says it will become required. */
  rail: Schema.optionalKey(PayoutRail),
  markupBps: Schema.optionalKey(MarkupBps),
  /** A flat margin in the source asset. */
  markupAmount: Schema.optionalKey(PositiveDecimal)
}).annotate({ identifier: "QuoteRequest", description: "What to price: the source and destination assets and one of the amounts." })
export type QuoteRequest = typeof QuoteRequest.Type

/** One priced option of a quote: single-use, until `expiresAt`. */
export const QuoteOption = Schema.Struct({
  id: NonBlankString,
  expiresAt: UtcTimestamp,
  recipientType: RecipientType,
  sourceAssetRef: AssetRef,
  destinationAssetRef: AssetRef,
  lockSide: LockSide,
  /** Destination units per source unit, the service's spread and any markupBps taken: exact decimal text. */
  rate: DecimalString,
  sourceAmount: AssetAmount,
  destinationAmount: AssetAmount,
  fees: Schema.Array(Fee),
  totalDebit: AssetAmount,
  markupBps: Schema.optionalKey(MarkupBps),
  /** As sent: a flat margin in the source asset, decimal text (at the asset's precision). */
  markupAmount: Schema.optionalKey(DecimalString)
}).annotate({ identifier: "QuoteOption", description: "One priced option of a quote: rate, fees, amounts and expiry; an order uses it once." })
export type QuoteOption = typeof QuoteOption.Type

export const Quote = Schema.Struct({
  options: Schema.Array(QuoteOption),
  createdAt: UtcTimestamp
}).annotate({ identifier: "Quote", description: "A price for a conversion: one option per rail or recipient type, each single-use until it expires." })
export type Quote = typeof Quote.Type

/** An account of the customer's, named as transaction sides name them; a wallet names the asset it converts. */
export const OrderAccount = Schema.Union([
  Schema.Struct({ type: Schema.Literal("wallet"), walletId: WalletId, asset: AssetCode }),
  Schema.Struct({ type: Schema.Literal("virtual_account"), virtualAccountId: VirtualAccountId })
])
export type OrderAccount = typeof OrderAccount.Type

/**
 * The payout an order chains after its conversion (spec: for an OFFRAMP order rail, purpose, documents, recipient;
 * for an ONRAMP order purpose, documents and a recipient with chain, address and attestation). Which fields a
 * direction needs is checked against the order (422 MISSING_REQUIRED_FIELDS, RECIPIENT_VALIDATION_FAILED), so the
 * recipient names every field either kind may carry. The margin fields are the client's, in the destination asset.
 */
export const AutoPayout = Schema.Struct({
  rail: Schema.optionalKey(PayoutRail),
  purpose: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(200, { fosDetail: "must be at most 200 characters" }))),
  documents: Schema.optionalKey(Schema.Array(DocumentId).check(Schema.isMaxLength(10, { fosDetail: "must list at most 10 documents" }))),
  recipient: Schema.optionalKey(Schema.Struct({
    // An on-chain recipient (onramp).
    chain: Schema.optionalKey(Chain),
    address: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(128))),
    /** The caller attests that the address is the recipient's own. */
    attestation: Schema.optionalKey(Schema.Boolean),
    // A bank recipient (offramp).
    name: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(200))),
    country: Schema.optionalKey(Country),
    iban: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(34))),
    accountNumber: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(34))),
    routingNumber: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(9)))
  })),
  markupBps: Schema.optionalKey(MarkupBps),
  markupAmount: Schema.optionalKey(PositiveDecimal)
}).annotate({ identifier: "AutoPayout", description: "An order's payout of the converted funds to a recipient once it succeeds." })
export type AutoPayout = typeof AutoPayout.Type

/** `POST /v2/orders`. */
export const OrderCreate = Schema.Struct({
  /** The account the order debits; omitted for a deposit-funded order, which names `sourceAsset` instead. */
  source: Schema.optionalKey(OrderAccount),
  /** A deposit-funded order's asset and chain: what its funding address takes. */
  sourceAsset: Schema.optionalKey(QuoteAsset),
  destination: OrderAccount,
  /** In the asset of the side `lockSide` fixes; with a quote option both come from the option. */
  amount: Schema.optionalKey(PositiveDecimal),
  lockSide: Schema.optionalKey(LockSide),
  autoExecute: Schema.optionalKey(Schema.Boolean),
  autoPayout: Schema.optionalKey(AutoPayout),
  markupBps: Schema.optionalKey(MarkupBps),
  markupAmount: Schema.optionalKey(PositiveDecimal),
  quoteOptionId: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(64))),
  clientReferenceId: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(128, { fosDetail: "must be at most 128 characters" })))
}).annotate({ identifier: "OrderCreate", description: "An order from a quote option: the source, the destination and, optionally, an automatic payout." })
export type OrderCreate = typeof OrderCreate.Type

/** An order's side on the wire: the account and the amount it gives or receives. */
export const OrderSide = Schema.Union([
  Schema.Struct({ type: Schema.Literal("wallet"), walletId: WalletId, assetAmount: AssetAmount }),
  Schema.Struct({ type: Schema.Literal("virtual_account"), virtualAccountId: VirtualAccountId, assetAmount: AssetAmount })
])
export type OrderSide = typeof OrderSide.Type

export const OrderSorts = ["createdAt", "updatedAt"] as const

/**
 * The order resource. `transactionId` is null until execution creates the order's transaction; `reasonCode` and
 * `failureMessage` are null unless the order failed, `cancellationReason` null unless it was cancelled.
 */
export const Order = Schema.Struct({
  id: OrderId,
  customerId: CustomerId,
  status: OrderStatus,
  direction: OrderDirection,
  /** Omitted for a deposit-funded order: it is funded at `depositInstructions.address`. */
  source: Schema.optionalKey(OrderSide),
  destination: OrderSide,
  lockSide: LockSide,
  rate: DecimalString,
  fees: Schema.Array(Fee),
  totalDebit: AssetAmount,
  lockExpiresAt: UtcTimestamp,
  autoExecute: Schema.Boolean,
  /** The payout chained after the conversion, as requested; its amounts follow from the order's. */
  autoPayout: Schema.optionalKey(AutoPayout),
  /** The payout's withdrawal transaction, once the conversion settled. */
  payoutTransactionId: Schema.optionalKey(TransactionId),
  quoteOptionId: Schema.optionalKey(NonBlankString),
  /** A deposit-funded order's funding address and the amount to send there (its totalDebit). */
  depositInstructions: Schema.optionalKey(Schema.Struct({ address: NonBlankString, assetAmount: AssetAmount })),
  markupBps: Schema.optionalKey(MarkupBps),
  /** As sent: a flat margin in the source asset, decimal text (at the asset's precision). */
  markupAmount: Schema.optionalKey(DecimalString),
  clientReferenceId: Schema.optionalKey(NonBlankString),
  transactionId: Schema.optionalKey(TransactionId),
  reasonCode: Schema.optionalKey(NonBlankString),
  failureMessage: Schema.optionalKey(NonBlankString),
  cancellationReason: Schema.optionalKey(Schema.Literals(OrderCancellationReasons)),
  createdAt: UtcTimestamp,
  updatedAt: UtcTimestamp
}).annotate({ identifier: "Order", description: "A conversion order: priced from a quote option and locked until lockExpiresAt, then executed. Amounts are decimal strings." })
export type Order = typeof Order.Type

/**
 * `POST /sandbox/v2/simulate/rates`: moves the market. `mid` replaces the pair's mid rate from now on (units of
 * `destinationAsset` per `sourceAsset`); `available: false` makes the pair's rate unavailable (503 RATE_UNAVAILABLE)
 * until `available: true`; `afterHours: true` closes the pair's market with no prior rate (503
 * RATE_UNAVAILABLE_AFTER_HOURS, with Retry-After) until the foreign-exchange market's next regular opening, and
 * `afterHours: false` reopens it at once. Only a pair with a fiat asset follows market hours: `afterHours` on any
 * other is 422 UNPROCESSABLE_ENTITY. The three combine; at least one is sent.
 */
export const RateChange = Schema.Struct({
  sourceAsset: AssetCode,
  destinationAsset: AssetCode,
  mid: Schema.optionalKey(PositiveDecimal),
  available: Schema.optionalKey(Schema.Boolean),
  afterHours: Schema.optionalKey(Schema.Boolean)
}).check(Schema.makeFilter((r) =>
  r.mid === undefined && r.available === undefined && r.afterHours === undefined
    ? { path: ["mid"], issue: "is required unless available or afterHours is sent" }
    : undefined
))
  .annotate({ identifier: "RateChange", description: "A rate to set for an asset pair, its unavailability, or its market closed after hours." })
export type RateChange = typeof RateChange.Type

/**
 * A pair's pricing as the market holds it now. `afterHoursUntil` is present only while a simulate call holds the
 * pair after hours: the instant its market opens again by itself.
 */
export const PairPricing = Schema.Struct({
  sourceAsset: AssetCode,
  destinationAsset: AssetCode,
  mid: DecimalString,
  spreadBps: Schema.Int,
  available: Schema.Boolean,
  afterHoursUntil: Schema.optionalKey(UtcTimestamp)
}).annotate({ identifier: "PairPricing", description: "The pricing the sandbox now quotes for an asset pair." })
export type PairPricing = typeof PairPricing.Type

/**
 * `POST /sandbox/v2/simulate/orders/{orderId}/fail`: the provider fails the order. `at: "settlement"` (the default)
 * fails its conversion (now when it runs, else when it would settle) with order.failed; `at: "execution"` refuses
 * the order's execution attempts synchronously instead: provider_rejected as 422 PROVIDER_REJECTED and cancelled as
 * 422 CANCELLED from then on, provider_unavailable as 503 PROVIDER_UNAVAILABLE for 30 seconds (retryAfterSeconds).
 */
export const OrderFailure = Schema.Struct({
  reasonCode: Schema.Literals(OrderFailureReasonCodes),
  at: Schema.optionalKey(Schema.Literals(["settlement", "execution"]))
}).check(Schema.makeFilter((f) =>
  f.at === "execution" && !["provider_rejected", "provider_unavailable", "cancelled"].includes(f.reasonCode)
    ? { path: ["reasonCode"], issue: "must be provider_rejected, provider_unavailable or cancelled with at execution" }
    : undefined
)).annotate({ identifier: "OrderFailure", description: "The reason an executing order fails." })
export type OrderFailure = typeof OrderFailure.Type
