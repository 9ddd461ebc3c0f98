/**
 * The money vocabulary every transaction, order and payout shares: assets with and without an amount, the
 * transaction types, stages, failure codes and their catalog texts, payout rails, the sides of a transaction and
 * its fees. A new money resource reuses these and never defines a second shape for the same thing.
 */
import { Schema } from "effect"
import "../kernel/Annotations.ts"
import { CustomerId, OrderId, TransactionId, VirtualAccountId, WalletId } from "../kernel/Ids.ts"
import { Address, Country } from "../kernel/Geo.ts"
import { AssetCode, AssetPrecision, Chain, isFiat, parseAmount } from "../kernel/Money.ts"
import { DecimalString, NonBlankString, UtcTimestamp } from "../kernel/Primitives.ts"

/** The chain rule of the spec's enumerations: on-chain assets carry their chain, fiat assets omit it. */
const chainRule = (asset: { readonly code: AssetCode; readonly chain?: Chain }) => {
  if (isFiat(asset.code)) return asset.chain === undefined ? undefined : { path: ["chain"], issue: "must be omitted for a fiat asset" }
  return asset.chain === undefined ? { path: ["chain"], issue: "is required for an on-chain asset" } : undefined
}

/** An asset without an amount: `{ code, chain? }` (application.* and virtual_account.activated `asset`). */
export const AssetRef = Schema.Struct({
  code: AssetCode,
  chain: Schema.optionalKey(Chain)
}).check(Schema.makeFilter(chainRule))

/**
 * An amount of one asset: `{ code, amount, chain? }`.
 *
 * The spec names `assetAmount` (on every transaction side, on awaiting_sender_information, in fees) but not its
 * inner fields. fos makes it self-describing: `code` is the spec's asset code, `amount` a non-negative decimal
 * string within the asset's precision (ISO 4217 minor units for fiat, the token's decimals on chain; a string,
 * never a JSON number, so no precision is lost), and `chain` names the network for an on-chain asset and is
 * omitted for fiat, per the enumerations' rule "the chain is omitted for fiat assets".
 */
export const AssetAmount = Schema.Struct({
  code: AssetCode,
  amount: DecimalString,
  chain: Schema.optionalKey(Chain)
}).check(
  Schema.makeFilter((a: { readonly code: AssetCode; readonly amount: string; readonly chain?: Chain }) =>
    chainRule(a) ??
      (parseAmount(a.code, a.amount) === undefined
        ? { path: ["amount"], issue: `must have at most ${AssetPrecision[a.code]} decimal places` }
        : undefined)
  )
)

// --- transactions ----------------------------------------------------------------------------------------------

export const TransactionTypes = [
  "deposit",
  "onramp",
  "offramp",
  "withdrawal",
  "conversion",
  "fiat_conversion",
  "deposit_return"
] as const
export const TransactionType = Schema.Literals(TransactionTypes)
export type TransactionType = typeof TransactionTypes[number]

/**
 * The stage values the spec names. The full vocabulary is not shown; fos sends only these, and omits `stage` (on the
 * read and on transaction.created) when the transaction is in neither: the spec does not call it nullable (rule 3).
 */
export const TransactionStages = ["under_review", "awaiting_customer_action"] as const
export const TransactionStage = Schema.Literals(TransactionStages)
export type TransactionStage = typeof TransactionStages[number]

/** The status values the spec names. A rejected transaction is failed (failureCode compliance_rejected). */
export const TransactionStatuses = ["pending", "processing", "completed", "failed", "cancelled"] as const
export const TransactionStatus = Schema.Literals(TransactionStatuses)
export type TransactionStatus = typeof TransactionStatuses[number]

/** Every terminal failure code of the spec (Errors, "Terminal failure codes"). Terminal state of all: failed. */
export const TransactionFailureCodes = [
  "chain_broadcast_failed",
  "compliance_hold",
  "compliance_rejected",
  "compliance_review_rejected",
  "crypto_wallet_misconfigured",
  "insufficient_funds",
  "insufficient_funds_at_settle",
  "provider_rejected",
  "rail_policy_rejected",
  "rail_unavailable",
  "returned_by_sender",
  "roster_changed",
  "sender_info_timeout",
  "travel_rule_rejected",
  "user_signature_declined",
  "user_signature_expired",
  "user_signature_rejected_by_provider",
  "user_signature_timeout",
  "insufficient_onchain_balance",
  "source_account_unavailable",
  "capability_suspended"
] as const
export type TransactionFailureCode = typeof TransactionFailureCodes[number]
export const TransactionFailureCode = Schema.Literals(TransactionFailureCodes)

/**
 * The catalog text of each failure code: `failureMessage` is this text, the same for every transaction failing
 * with the code, in live and sandbox; it never carries bank, chain, travel-rule or simulator text.
 */
export const TransactionFailureMessages: { readonly [C in TransactionFailureCode]: string } = {
  chain_broadcast_failed: "The transfer was not broadcast or did not reach finality. No funds left the wallet.",
  compliance_hold: "The transaction is held by compliance review and cannot be retried without investigation.",
  compliance_rejected: "A reviewer rejected the supporting document. Submit a new payout with a fresh idempotency key.",
  compliance_review_rejected: "Compliance review rejected the transaction. It cannot be retried without investigation.",
  crypto_wallet_misconfigured: "The wallet's signing configuration blocks movement and the wallet is frozen. A retry will not help.",
  insufficient_funds: "The available balance does not cover the transaction. Nothing was reserved or moved.",
  insufficient_funds_at_settle: "The balance did not cover the transaction when it settled.",
  provider_rejected: "The transfer could not be built or sent. Adjust the inputs and submit a new transaction.",
  rail_policy_rejected: "The payment rail's policy rejected the transfer.",
  rail_unavailable: "The payment rail was unavailable.",
  returned_by_sender: "The bank returned the transfer.",
  roster_changed: "A signer left the signing pool before quorum; the collected signatures were voided.",
  sender_info_timeout: "Sender information was not provided in time.",
  travel_rule_rejected: "The travel-rule check failed or the counterparty rejected the transfer.",
  user_signature_declined: "A signer declined to sign. Submit a new transaction.",
  user_signature_expired: "The signing window expired before quorum. Submit a new transaction.",
  user_signature_rejected_by_provider: "The signing provider rejected the signature. Submit a new transaction.",
  user_signature_timeout: "The payout waited too long in the wallet's signing queue. Submit a new transaction.",
  insufficient_onchain_balance: "The wallet lacks the on-chain balance for the transfer. Nothing was broadcast.",
  source_account_unavailable: "The source balance is on a bank account that is not active. No funds moved.",
  capability_suspended: "A restriction on the customer took effect before sending. Reserved funds were returned."
}

/** The fixed failureMessage of a deposit sent back from an order's funding address (it has no failureCode). */
export const DepositReturnedFailureMessage =
  "The funds were sent back to the address they came from. See GET /v2/transactions?type=deposit_return."

export const CancellationReasons = ["client_cancelled", "expired"] as const
export type CancellationReason = typeof CancellationReasons[number]

/** reasonMessage of transaction.cancelled, by cancellationReason. */
export const TransactionCancellationMessages: { readonly [R in CancellationReason]: string } = {
  client_cancelled: "The client cancelled the transaction.",
  expired: "The transaction expired before it was sent."
}

/**
 * Rails of a fiat payout (`payout.rail`). The spec names swift and fedwire (to be replaced by international_wire
 * for international USD), and the networks behind the external_bank references (ACH, Fedwire, RTP, FedNow,
 * SWIFT); SEPA and UK Faster Payments are the rails of the sepa and uk_domestic deposit families.
 */
export const PayoutRails = ["ach", "fedwire", "rtp", "fednow", "swift", "international_wire", "sepa", "faster_payments"] as const
export const PayoutRail = Schema.Literals(PayoutRails)
export type PayoutRail = typeof PayoutRails[number]

/** References a bank network assigns, each present only when the network exposes it (on-us transfers carry none). */
const bankNetworkReferences = {
  swiftUetr: Schema.optionalKey(NonBlankString),
  fedwireImad: Schema.optionalKey(NonBlankString),
  fedwireOmad: Schema.optionalKey(NonBlankString),
  achTraceNumber: Schema.optionalKey(NonBlankString),
  rtpTransactionId: Schema.optionalKey(NonBlankString),
  fedNowMessageId: Schema.optionalKey(NonBlankString)
}

/** One side (source or destination) of a transaction, discriminated by `type`; every variant carries assetAmount. */
export const TransactionSide = Schema.Union([
  Schema.Struct({ type: Schema.Literal("wallet"), walletId: WalletId, assetAmount: AssetAmount }),
  Schema.Struct({ type: Schema.Literal("deposit_address"), address: NonBlankString, assetAmount: AssetAmount }),
  Schema.Struct({ type: Schema.Literal("virtual_account"), virtualAccountId: VirtualAccountId, assetAmount: AssetAmount }),
  Schema.Struct({
    type: Schema.Literal("external_crypto"),
    address: NonBlankString,
    // Omitted until the transfer is broadcast (rule 3: the spec says the side "carries" it, not that it is nullable).
    txHash: Schema.optionalKey(NonBlankString),
    assetAmount: AssetAmount
  }),
  Schema.Struct({ type: Schema.Literal("external_bank"), ...bankNetworkReferences, assetAmount: AssetAmount }),
  Schema.Struct({ type: Schema.Literal("external_bank_inbound"), assetAmount: AssetAmount }),
  Schema.Struct({ type: Schema.Literal("internal_transfer"), assetAmount: AssetAmount }),
  Schema.Struct({ type: Schema.Literal("external_unknown"), assetAmount: AssetAmount })
])

/**
 * A fee entry: who it belongs to (`service`: fos; `organization`: the caller's declared markup; `network`: chain
 * or bank network), the amount, and whether it is invoiced to the caller separately (then it does not change
 * the side amounts).
 */
export const Fee = Schema.Struct({
  owner: Schema.Literals(["service", "organization", "network"]),
  assetAmount: AssetAmount,
  invoiced: Schema.Boolean
})

export type TransactionSide = typeof TransactionSide.Type

/**
 * The wire-receive bank details of a deposit (the spec names them as nullable, representation rule 4): what the
 * sender's bank sent with a wire (fedwire, swift, international_wire) into a virtual account, the originator's
 * fields of the wire message. Each member is present only when the sending bank filled it.
 */
export const WireReceiveDetails = Schema.Struct({
  originatorName: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(200, { fosDetail: "must be at most 200 characters" }))),
  originatorAccountNumber: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(64, { fosDetail: "must be at most 64 characters" }))),
  originatorBankName: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(200, { fosDetail: "must be at most 200 characters" }))),
  /** The sending bank's routing number (fedwire) or BIC (swift, international_wire). */
  originatorBankId: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(34, { fosDetail: "must be at most 34 characters" }))),
  /** The sender's free text to the beneficiary. */
  reference: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(140, { fosDetail: "must be at most 140 characters" })))
}).annotate({ identifier: "WireReceiveDetails", description: "The bank details a payer uses to wire funds to a virtual account." })
export type WireReceiveDetails = typeof WireReceiveDetails.Type

export type AssetAmount = typeof AssetAmount.Type
export type Fee = typeof Fee.Type

export const TransactionSorts = ["createdAt", "updatedAt"] as const

/**
 * The transaction resource (`GET /v2/transactions/{id}`): the same sides, amounts and fees its events carry.
 * Representation rule 3: `stage`, the failure fields, the return fields, queuePosition, `clientReferenceId`,
 * `linkedOrderId` and `payout` (fiat payouts) are omitted when they have no value. Rule 4: `wireReceiveDetails`
 * is nullable, present on every deposit.
 */
export const Transaction = Schema.Struct({
  id: TransactionId,
  type: TransactionType,
  status: TransactionStatus,
  stage: Schema.optionalKey(TransactionStage),
  customerId: CustomerId,
  clientReferenceId: Schema.optionalKey(NonBlankString),
  linkedOrderId: Schema.optionalKey(OrderId),
  source: TransactionSide,
  destination: TransactionSide,
  fees: Schema.Array(Fee),
  failureCode: Schema.optionalKey(TransactionFailureCode),
  failureMessage: Schema.optionalKey(NonBlankString),
  returnedAt: Schema.optionalKey(UtcTimestamp),
  returnReason: Schema.optionalKey(NonBlankString),
  returnCode: Schema.optionalKey(NonBlankString),
  queuePosition: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))),
  hasRfi: Schema.Boolean,
  payout: Schema.optionalKey(Schema.Struct({ rail: Schema.NullOr(PayoutRail) })),
  /** Deposits only, always present there: null unless a wire into a virtual account brought them. */
  wireReceiveDetails: Schema.optionalKey(Schema.NullOr(WireReceiveDetails)),
  createdAt: UtcTimestamp,
  updatedAt: UtcTimestamp
}).annotate({ identifier: "Transaction", description: "A movement of funds (a deposit, a payout, a transfer or a conversion leg) with its status, stage, amounts and fees. Amounts are decimal strings." })
export type Transaction = typeof Transaction.Type

/**
 * A holder's balance in one asset, read from the ledger: `available` is what may be spent now, `pending` what is
 * reserved for transfers not yet settled (a payout on its way). Both are decimal text at the asset's precision;
 * what the holder owns is their sum.
 */
export const Balance = Schema.Struct({
  code: AssetCode,
  chain: Schema.optionalKey(Chain),
  available: DecimalString,
  pending: DecimalString
}).annotate({ identifier: "Balance", description: "A wallet's balance of one asset: available and pending, as decimal strings." })
export type Balance = typeof Balance.Type

/**
 * `POST /v2/transactions/{id}/sender-information`: who sent a deposit that arrived without it (the travel rule asks
 * the originator's name and country; an address and account make the match surer).
 */
export const SenderInformation = Schema.Struct({
  name: NonBlankString.check(Schema.isMaxLength(200, { fosDetail: "must be at most 200 characters" })),
  country: Country,
  address: Schema.optionalKey(Address),
  accountNumber: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(64, { fosDetail: "must be at most 64 characters" })))
}).annotate({ identifier: "SenderInformation", description: "The sender details a held deposit awaits." })
export type SenderInformation = typeof SenderInformation.Type
