/**
 * The webhook event catalog: the 48 event types of the spec's Events table, the `data` payload schema of each,
 * one realistic example payload each (for GET /webhooks/event-types and the tests), and the envelope.
 *
 * The schemas describe what fos sends, so they are strict where the spec is: an optional field with no value is
 * omitted (`Schema.optionalKey`, never null), a nullable field is always present and uses null
 * (`Schema.NullOr`), and rules that tie fields together (a customerId that depends on the applicationType, the
 * signing fields of each signing mode, reasonCode beside failureCode) are checks on the payload struct, so every
 * payload schema is still a `Schema.Struct` whose `fields` can be read.
 *
 * Where the spec says the payload is "not shown", the design below applies one set of names everywhere (see
 * docs/decisions.md, "Webhook event payloads"):
 * - every payload carries the id of its resource under the resource's name (`transactionId`, `orderId`,
 *   `walletSignerId`, ...), the `customerId` it belongs to when it belongs to a customer (`organizationId` on
 *   organization events), the caller's `clientReferenceId` when the resource has one set, and `occurredAt`, the
 *   time of the change (the spec's name on transaction and order events, used on every event);
 * - failures are `failureCode` (a lower-case code) and `failureMessage` (the service's catalog text for the code);
 *   order.failed keeps the spec's `reasonCode`, and transaction terminal events add the spec's reasonCode and
 *   reasonMessage beside them;
 * - times are wire timestamps (`2026-03-01T12:00:00.000Z`); the end of a link's or a signing window's life is
 *   `expiresAt`, an RFI's response deadline is `deadline`;
 * - ids with a prefix in the spec's table use the branded id schemas; the rest (claim, signing request, RFI,
 *   ceremony, quote option) are non-blank strings.
 */
import { Schema } from "effect"
import "./Annotations.ts"
import {
  ApplicationId,
  CustomerId,
  EventId,
  OrderId,
  OrganizationId,
  TransactionId,
  VirtualAccountId,
  WalletId,
  WalletSignerId
} from "./Ids.ts"
import { AssetCode, AssetPrecision, Chain, isFiat, parseAmount } from "./Money.ts"
import { parseIso } from "./Time.ts"
import { NonBlankString } from "./Wire.ts"

// --- the event types -------------------------------------------------------------------------------------------

/** Every event type of the spec's Events table, in the table's order. */
export const EventTypes = [
  "application.approved",
  "application.rejected",
  "claim.completed",
  "claim.failed",
  "crypto_wallet.completed",
  "customer.created",
  "customer.restricted",
  "idv_link.created",
  "order.created",
  "order.cancelled",
  "order.failed",
  "order.succeeded",
  "organization.activated",
  "organization.restricted",
  "rfi.published",
  "rfi.response_submitted",
  "rfi.more_info_requested",
  "rfi.deadline_extended",
  "rfi.resolved",
  "rfi.cancelled",
  "transaction.created",
  "transaction.processing",
  "transaction.queue_position_changed",
  "transaction.under_review",
  "transaction.awaiting_signature",
  "transaction.awaiting_user_signature",
  "transaction.awaiting_recovery_signature",
  "transaction.awaiting_return_signature",
  "transaction.awaiting_sender_information",
  "transaction.signature_collected",
  "transaction.quorum_met",
  "transaction.completed",
  "transaction.failed",
  "transaction.cancelled",
  "transaction.rejected",
  "virtual_account.activated",
  "wallet.created",
  "wallet_ceremony.awaiting_admin_approval",
  "wallet_ceremony.completed",
  "wallet_ceremony.failed",
  "wallet_signer.added",
  "wallet_signer.invited",
  "wallet_signer.enrolled",
  "wallet_signer.enrollment_approved",
  "wallet_signer.awaiting_admin_approval",
  "wallet_signer.promoted",
  "wallet_signer.demoted",
  "wallet_signer.removed"
] as const

export type EventType = typeof EventTypes[number]
export const EventType = Schema.Literals(EventTypes)

/** Announced deprecations (spec, Versioning 5): still delivered during a compatibility window. */
export const DeprecatedEventTypes: ReadonlySet<EventType> = new Set<EventType>(["transaction.awaiting_user_signature"])

/** The transaction status events: they carry `sequence` (1 for a transaction's first, +1 for each next). */
export const TransactionStatusEventTypes: ReadonlySet<EventType> = new Set<EventType>([
  "transaction.created",
  "transaction.processing",
  "transaction.under_review",
  "transaction.completed",
  "transaction.failed",
  "transaction.rejected",
  "transaction.cancelled"
])

// --- wire primitives -------------------------------------------------------------------------------------------

const utcPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** A timestamp as fos sends it: ISO 8601, UTC, milliseconds, `Z` (`2026-03-01T12:00:00.000Z`). */
export const UtcTimestamp = Schema.String.check(
  Schema.makeFilter((s: string) => utcPattern.test(s) && parseIso(s) !== undefined, {
    fosDetail: "must be an ISO 8601 UTC timestamp with milliseconds, such as 2026-03-01T12:00:00.000Z"
  })
)

/** A non-negative decimal string (`"10.50"`); never a JSON number, so no precision is lost. */
export const DecimalString = Schema.String.check(
  Schema.isPattern(/^(0|[1-9]\d*)(\.\d+)?$/, { fosDetail: "must be a non-negative decimal string such as 10.50" })
)

/** An absolute https URL (verification links, identity-verification links). */
const HttpsUrl = Schema.String.check(
  Schema.makeFilter((s: string) => URL.canParse(s) && new URL(s).protocol === "https:", { fosDetail: "must be an https URL" })
)

/** An id the spec gives no prefix (claim, signing request, RFI, ceremony, quote option): a non-blank string. */
const PlainId = NonBlankString

const PositiveInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))
const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** Marks a key the payload must not carry (for example `sequence` on a transaction event that is not a status event). */
const Forbidden = Schema.optionalKey(Schema.Never)

/** A fiat asset code (virtual accounts and bank deposit blocks are fiat). */
const FiatCode = AssetCode.check(Schema.makeFilter((code: AssetCode) => isFiat(code), { fosDetail: "must be a fiat currency" }))

// --- assets and amounts ----------------------------------------------------------------------------------------

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

/** The asset of a virtual account: a fiat currency, so `{ code }` with no chain. */
const VirtualAccountAsset = AssetRef.check(
  Schema.makeFilter((asset: { readonly code: AssetCode }) => isFiat(asset.code) ? undefined : { path: ["code"], issue: "must be a fiat currency" })
)

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

/**
 * The stage values the spec names. The full vocabulary is not shown; fos sends only these, and null on
 * transaction.created when the transaction is in neither (a nullable field: present, null for "not applicable").
 */
export const TransactionStages = ["under_review", "awaiting_customer_action"] as const
export const TransactionStage = Schema.Literals(TransactionStages)

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
  // txHash is null until the transfer is broadcast.
  Schema.Struct({
    type: Schema.Literal("external_crypto"),
    address: NonBlankString,
    txHash: Schema.NullOr(NonBlankString),
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

/** What every transaction.* event carries (spec, Ordering of transaction status events, 4). */
const transactionHead = {
  transactionId: TransactionId,
  customerId: CustomerId,
  clientReferenceId: Schema.optionalKey(NonBlankString),
  // Absent on retried deliveries of events sent before they existed.
  type: Schema.optionalKey(TransactionType),
  source: Schema.optionalKey(TransactionSide),
  destination: Schema.optionalKey(TransactionSide),
  linkedOrderId: Schema.optionalKey(OrderId)
}

/** Fields of a status event: sequence, and no stage (only transaction.created carries stage). */
const statusFields = { sequence: PositiveInt, stage: Forbidden }
/** Fields of a transaction event that reports no status change: neither sequence nor stage. */
const nonStatusFields = { sequence: Forbidden, stage: Forbidden }

export const SigningModes = ["passkey_required", "programmatic", "programmatic_unattended"] as const
type SigningMode = typeof SigningModes[number]

const signingFields = {
  signingMode: Schema.Literals(SigningModes),
  verificationUrl: Schema.optionalKey(HttpsUrl),
  signingRequestId: Schema.optionalKey(PlainId)
}

/**
 * passkey_required: the shared verificationUrl, no signing request. programmatic: a signingRequestId for the
 * machine signers, and a verificationUrl when the roster also has passkey signers. programmatic_unattended
 * (machine-only roster): a signingRequestId, no verificationUrl.
 */
const signingRule = Schema.makeFilter(
  (d: { readonly signingMode: SigningMode; readonly verificationUrl?: string; readonly signingRequestId?: string }) => {
    switch (d.signingMode) {
      case "passkey_required":
        if (d.verificationUrl === undefined) return { path: ["verificationUrl"], issue: "is required when signingMode is passkey_required" }
        if (d.signingRequestId !== undefined) return { path: ["signingRequestId"], issue: "is sent only in programmatic modes" }
        return undefined
      case "programmatic":
        return d.signingRequestId === undefined ? { path: ["signingRequestId"], issue: "is required in programmatic modes" } : undefined
      case "programmatic_unattended":
        if (d.signingRequestId === undefined) return { path: ["signingRequestId"], issue: "is required in programmatic modes" }
        if (d.verificationUrl !== undefined) return { path: ["verificationUrl"], issue: "is omitted for a machine-only roster" }
        return undefined
    }
  }
)

const sameTime = (field: string) =>
  Schema.makeFilter((d: { readonly occurredAt: string } & { readonly [k: string]: unknown }) =>
    d[field] === d.occurredAt ? undefined : { path: [field], issue: "must equal occurredAt" }
  )

const TransactionCreated = Schema.Struct({
  ...transactionHead,
  sequence: Schema.Literal(1),
  stage: Schema.NullOr(TransactionStage),
  occurredAt: UtcTimestamp
})

const TransactionProcessing = Schema.Struct({ ...transactionHead, ...statusFields, occurredAt: UtcTimestamp })

const TransactionQueuePositionChanged = Schema.Struct({
  ...transactionHead,
  ...nonStatusFields,
  queuePosition: PositiveInt,
  occurredAt: UtcTimestamp
})

const TransactionUnderReview = Schema.Struct({ ...transactionHead, ...statusFields, occurredAt: UtcTimestamp })

const TransactionAwaitingSignature = Schema.Struct({
  ...transactionHead,
  ...nonStatusFields,
  ...signingFields,
  expiresAt: UtcTimestamp,
  attempt: PositiveInt,
  occurredAt: UtcTimestamp
}).check(signingRule)

const TransactionAwaitingUserSignature = Schema.Struct({
  ...transactionHead,
  ...nonStatusFields,
  verificationUrl: HttpsUrl,
  expiresAt: UtcTimestamp,
  attempt: PositiveInt,
  occurredAt: UtcTimestamp
})

const TransactionAwaitingRecoverySignature = Schema.Struct({
  ...transactionHead,
  ...nonStatusFields,
  returnAddress: NonBlankString,
  ...signingFields,
  expiresAt: UtcTimestamp,
  occurredAt: UtcTimestamp
}).check(signingRule)

const TransactionAwaitingReturnSignature = Schema.Struct({
  ...transactionHead,
  ...nonStatusFields,
  destinationAddress: NonBlankString,
  ...signingFields,
  expiresAt: UtcTimestamp,
  attempt: PositiveInt,
  occurredAt: UtcTimestamp
}).check(signingRule)

const TransactionAwaitingSenderInformation = Schema.Struct({
  ...transactionHead,
  ...nonStatusFields,
  sourceAddress: Schema.NullOr(NonBlankString),
  assetAmount: AssetAmount,
  expiresAt: UtcTimestamp,
  occurredAt: UtcTimestamp
})

const TransactionSignatureCollected = Schema.Struct({
  ...transactionHead,
  ...nonStatusFields,
  collected: PositiveInt,
  required: PositiveInt,
  attempt: PositiveInt,
  occurredAt: UtcTimestamp
})

const TransactionQuorumMet = Schema.Struct({
  ...transactionHead,
  ...nonStatusFields,
  collected: PositiveInt,
  required: PositiveInt,
  attempt: PositiveInt,
  occurredAt: UtcTimestamp
}).check(
  Schema.makeFilter((d: { readonly collected: number; readonly required: number }) =>
    d.collected >= d.required ? undefined : { path: ["collected"], issue: "must be at least required" }
  )
)

const TransactionCompleted = Schema.Struct({
  ...transactionHead,
  ...statusFields,
  fees: Schema.Array(Fee),
  // Fiat payouts only; rail is null when not known.
  payout: Schema.optionalKey(Schema.Struct({ rail: Schema.NullOr(PayoutRail) })),
  completedAt: UtcTimestamp,
  occurredAt: UtcTimestamp
}).check(sameTime("completedAt"))

const TransactionFailed = Schema.Struct({
  ...transactionHead,
  ...statusFields,
  status: Schema.Literal("failed"),
  // failureCode when there is one; null for a failure with no actionable code.
  reasonCode: Schema.NullOr(TransactionFailureCode),
  reasonMessage: NonBlankString,
  failureCode: Schema.optionalKey(TransactionFailureCode),
  failureMessage: NonBlankString,
  returnedAt: Schema.optionalKey(UtcTimestamp),
  returnReason: Schema.optionalKey(NonBlankString),
  returnCode: Schema.optionalKey(NonBlankString),
  occurredAt: UtcTimestamp
}).check(
  Schema.makeFilter(
    (d: {
      readonly reasonCode: TransactionFailureCode | null
      readonly reasonMessage: string
      readonly failureCode?: TransactionFailureCode
      readonly failureMessage: string
      readonly returnedAt?: string
      readonly returnReason?: string
      readonly returnCode?: string
    }) => {
      if (d.reasonCode !== (d.failureCode ?? null)) return { path: ["reasonCode"], issue: "must equal failureCode (null without one)" }
      if (d.reasonMessage !== d.failureMessage) return { path: ["reasonMessage"], issue: "must equal failureMessage" }
      if (d.failureCode !== "returned_by_sender") {
        for (const key of ["returnedAt", "returnReason", "returnCode"] as const) {
          if (d[key] !== undefined) return { path: [key], issue: "is sent only with failureCode returned_by_sender" }
        }
      }
      return undefined
    }
  )
)

const TransactionCancelled = Schema.Struct({
  ...transactionHead,
  ...statusFields,
  status: Schema.Literal("cancelled"),
  reasonCode: Schema.Literals(CancellationReasons),
  reasonMessage: NonBlankString,
  cancellationReason: Schema.Literals(CancellationReasons),
  // No failure fields.
  failureCode: Forbidden,
  failureMessage: Forbidden,
  occurredAt: UtcTimestamp
}).check(
  Schema.makeFilter((d: { readonly reasonCode: string; readonly cancellationReason: string }) =>
    d.reasonCode === d.cancellationReason ? undefined : { path: ["reasonCode"], issue: "must equal cancellationReason" }
  )
)

const TransactionRejected = Schema.Struct({
  ...transactionHead,
  ...statusFields,
  status: Schema.Literal("failed"),
  reasonCode: Schema.Literal("compliance_rejected"),
  reasonMessage: NonBlankString,
  failureCode: Schema.Literal("compliance_rejected"),
  failureMessage: NonBlankString,
  acceptedDocumentTypes: Schema.Array(NonBlankString),
  occurredAt: UtcTimestamp
}).check(
  Schema.makeFilter((d: { readonly reasonMessage: string; readonly failureMessage: string }) =>
    d.reasonMessage === d.failureMessage ? undefined : { path: ["reasonMessage"], issue: "must equal failureMessage" }
  )
)

// --- applications, customers, organizations ----------------------------------------------------------------------

export const ApplicationTypes = [
  "customer_onboarding",
  "organization_onboarding",
  "virtual_account",
  "crypto_wallet",
  "customer_update"
] as const
type ApplicationType = typeof ApplicationTypes[number]

export const ApplicationFailureCodes = ["rejected_by_ops", "compliance_denied"] as const

interface ApplicationShape {
  readonly applicationType: ApplicationType
  readonly customerId?: string
  readonly asset?: unknown
  readonly resubmittable?: boolean
}

const presence = (d: object, key: string, rule: "required" | "absent" | "optional", why: string) => {
  const present = key in d && (d as Record<string, unknown>)[key] !== undefined
  if (rule === "required" && !present) return { path: [key], issue: `is required ${why}` }
  if (rule === "absent" && present) return { path: [key], issue: `is not sent ${why}` }
  return undefined
}

const applicationRules = (customerRule: (t: ApplicationType) => "required" | "absent" | "optional", resubmittable: boolean) =>
  Schema.makeFilter((d: ApplicationShape) => {
    const why = `for applicationType ${d.applicationType}`
    return presence(d, "customerId", customerRule(d.applicationType), why) ??
      presence(d, "asset", d.applicationType === "virtual_account" ? "required" : "absent", why) ??
      (resubmittable
        ? presence(d, "resubmittable", d.applicationType === "organization_onboarding" ? "required" : "absent", why)
        : undefined)
  })

const ApplicationApproved = Schema.Struct({
  applicationId: ApplicationId,
  applicationType: Schema.Literals(ApplicationTypes),
  customerId: Schema.optionalKey(CustomerId),
  asset: Schema.optionalKey(VirtualAccountAsset),
  clientReferenceId: Schema.optionalKey(NonBlankString),
  occurredAt: UtcTimestamp
}).check(applicationRules((t) => t === "organization_onboarding" ? "absent" : "required", false))

const ApplicationRejected = Schema.Struct({
  applicationId: ApplicationId,
  applicationType: Schema.Literals(ApplicationTypes),
  customerId: Schema.optionalKey(CustomerId),
  asset: Schema.optionalKey(VirtualAccountAsset),
  failureCode: Schema.Literals(ApplicationFailureCodes),
  failureMessage: NonBlankString,
  resubmittable: Schema.optionalKey(Schema.Boolean),
  clientReferenceId: Schema.optionalKey(NonBlankString),
  occurredAt: UtcTimestamp
}).check(applicationRules(
  (t) => t === "organization_onboarding" ? "absent" : t === "customer_onboarding" ? "optional" : "required",
  true
))

const CustomerCreated = Schema.Struct({
  customerId: CustomerId,
  // The approved application; receivers dedupe on (applicationId, customerId).
  applicationId: ApplicationId,
  clientReferenceId: Schema.optionalKey(NonBlankString),
  occurredAt: UtcTimestamp
})

// Restriction reason and type are never included.
const CustomerRestricted = Schema.Struct({
  customerId: CustomerId,
  clientReferenceId: Schema.optionalKey(NonBlankString),
  occurredAt: UtcTimestamp
})

const IdvLinkCreated = Schema.Struct({
  applicationId: ApplicationId,
  // The person's referenceId in the application's persons[].
  referenceId: NonBlankString,
  // Absent while the application has no customer yet (customer onboarding creates it on approval).
  customerId: Schema.optionalKey(CustomerId),
  // A resumable bearer secret: receivers must not log it.
  url: HttpsUrl,
  // Deprecated: one-time, works about five minutes after first open.
  shortUrl: Schema.optionalKey(HttpsUrl),
  occurredAt: UtcTimestamp
})

const OrganizationEvent = Schema.Struct({ organizationId: OrganizationId, occurredAt: UtcTimestamp })

// --- claims and wallets ------------------------------------------------------------------------------------------

const ClaimCompleted = Schema.Struct({
  claimId: PlainId,
  customerId: CustomerId,
  walletIds: Schema.NonEmptyArray(WalletId),
  occurredAt: UtcTimestamp
})

const ClaimFailed = Schema.Struct({
  claimId: PlainId,
  customerId: CustomerId,
  // The state table has one failure after 202: provisioning failed.
  failureCode: Schema.Literal("provisioning_failed"),
  failureMessage: NonBlankString,
  occurredAt: UtcTimestamp
})

const CryptoWalletCompleted = Schema.Struct({
  customerId: CustomerId,
  claimId: PlainId,
  occurredAt: UtcTimestamp
})

const WalletCreated = Schema.Struct({
  walletId: WalletId,
  customerId: CustomerId,
  chain: Chain,
  custody: Schema.Literals(["custodial", "non_custodial"]),
  // null until the wallet has an address.
  address: Schema.NullOr(NonBlankString),
  occurredAt: UtcTimestamp
})

/** Ceremony types; the spec names webauthn_origin_change, the rest follow the roster transitions. */
export const WalletCeremonyTypes = [
  "credential_enrollment",
  "passkey_addition",
  "signer_promotion",
  "signer_demotion",
  "signer_removal",
  "webauthn_origin_change"
] as const

const ceremonyHead = {
  ceremonyId: PlainId,
  customerId: CustomerId,
  // The signer the ceremony is about; absent for roster-wide ceremonies (webauthn_origin_change).
  walletSignerId: Schema.optionalKey(WalletSignerId),
  type: Schema.Literals(WalletCeremonyTypes)
}

const WalletCeremonyAwaitingAdminApproval = Schema.Struct({
  ...ceremonyHead,
  adminVerificationUrl: HttpsUrl,
  expiresAt: UtcTimestamp,
  occurredAt: UtcTimestamp
})

const WalletCeremonyCompleted = Schema.Struct({ ...ceremonyHead, occurredAt: UtcTimestamp })

const WalletCeremonyFailed = Schema.Struct({
  ...ceremonyHead,
  status: Schema.Literals(["failed", "cancelled"]),
  occurredAt: UtcTimestamp
})

const signerHead = { walletSignerId: WalletSignerId, customerId: CustomerId }
const SignerRole = Schema.Literals(["signer", "admin"])
const CredentialType = Schema.Literals(["passkey", "api_key"])

const WalletSignerAdded = Schema.Struct({
  ...signerHead,
  role: SignerRole,
  credentialType: CredentialType,
  occurredAt: UtcTimestamp
})

const WalletSignerInvited = Schema.Struct({
  ...signerHead,
  verificationUrl: HttpsUrl,
  expiresAt: UtcTimestamp,
  occurredAt: UtcTimestamp
})

const WalletSignerEnrolled = Schema.Struct({ ...signerHead, passkeyCount: NonNegativeInt, occurredAt: UtcTimestamp })

const WalletSignerEnrollmentApproved = Schema.Struct({
  ...signerHead,
  approvedByWalletSignerId: WalletSignerId,
  approvedAt: UtcTimestamp,
  occurredAt: UtcTimestamp
}).check(sameTime("approvedAt"))

const WalletSignerAwaitingAdminApproval = Schema.Struct({
  ...signerHead,
  // The spec's name for this event; the same value as walletSignerId.
  signerId: WalletSignerId,
  adminVerificationUrl: HttpsUrl,
  expiresAt: UtcTimestamp,
  occurredAt: UtcTimestamp
}).check(
  Schema.makeFilter((d: { readonly signerId: string; readonly walletSignerId: string }) =>
    d.signerId === d.walletSignerId ? undefined : { path: ["signerId"], issue: "must equal walletSignerId" }
  )
)

/** A passkey admin has at least 2 passkeys; a machine (api_key) signer has none. */
const passkeyRule = (minimumForPasskey: number) =>
  Schema.makeFilter((d: { readonly credentialType: "passkey" | "api_key"; readonly passkeyCount: number }) => {
    if (d.credentialType === "api_key") return d.passkeyCount === 0 ? undefined : { path: ["passkeyCount"], issue: "must be 0 for an api_key signer" }
    return d.passkeyCount >= minimumForPasskey
      ? undefined
      : { path: ["passkeyCount"], issue: `must be at least ${minimumForPasskey} for a passkey signer` }
  })

const WalletSignerPromoted = Schema.Struct({
  ...signerHead,
  role: Schema.Literal("admin"),
  credentialType: CredentialType,
  passkeyCount: NonNegativeInt,
  occurredAt: UtcTimestamp
}).check(passkeyRule(2))

const WalletSignerDemoted = Schema.Struct({
  ...signerHead,
  role: Schema.Literal("signer"),
  credentialType: CredentialType,
  passkeyCount: NonNegativeInt,
  occurredAt: UtcTimestamp
}).check(passkeyRule(1))

const WalletSignerRemoved = Schema.Struct({
  ...signerHead,
  reason: Schema.Literals(["customer_removed", "ops_removed"]),
  occurredAt: UtcTimestamp
})

// --- virtual accounts --------------------------------------------------------------------------------------------

export const RailFamilies = ["us_domestic", "swift", "sepa", "uk_domestic"] as const

const bankBlockHead = { currency: FiatCode, bankName: NonBlankString, accountHolderName: NonBlankString }
const Bic = NonBlankString.check(Schema.isPattern(/^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$/, { fosDetail: "must be a BIC" }))

/** How to pay into a virtual account over one rail family; each block carries its own currency. */
export const DepositBlock = Schema.Union([
  Schema.Struct({
    railFamily: Schema.Literal("us_domestic"),
    ...bankBlockHead,
    accountNumber: NonBlankString,
    routingNumber: Schema.String.check(Schema.isPattern(/^\d{9}$/, { fosDetail: "must be 9 digits" }))
  }),
  Schema.Struct({ railFamily: Schema.Literal("swift"), ...bankBlockHead, accountNumber: NonBlankString, bic: Bic }),
  Schema.Struct({
    railFamily: Schema.Literal("sepa"),
    ...bankBlockHead,
    iban: Schema.String.check(Schema.isPattern(/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/, { fosDetail: "must be an IBAN" })),
    bic: Bic
  }),
  Schema.Struct({
    railFamily: Schema.Literal("uk_domestic"),
    ...bankBlockHead,
    accountNumber: Schema.String.check(Schema.isPattern(/^\d{8}$/, { fosDetail: "must be 8 digits" })),
    sortCode: Schema.String.check(Schema.isPattern(/^\d{6}$/, { fosDetail: "must be 6 digits" }))
  })
])

const VirtualAccountActivated = Schema.Struct({
  virtualAccountId: VirtualAccountId,
  customerId: CustomerId,
  // The virtual_account application whose approval created the account.
  applicationId: ApplicationId,
  // The currency the account collects.
  asset: VirtualAccountAsset,
  depositInstructions: Schema.NonEmptyArray(DepositBlock),
  occurredAt: UtcTimestamp
})

// --- orders ------------------------------------------------------------------------------------------------------

export const OrderFailureReasonCodes = [
  "insufficient_funds",
  "insufficient_onchain_balance",
  "source_account_unavailable",
  "provider_unavailable",
  "provider_rejected",
  "internal_error",
  "cancelled"
] as const
export type OrderFailureReasonCode = typeof OrderFailureReasonCodes[number]

/** The catalog text of each order.failed reasonCode (order.failed `failureMessage`). */
export const OrderFailureMessages: { readonly [C in OrderFailureReasonCode]: string } = {
  insufficient_funds: "The available balance did not cover the order. Fund the source and create a new order.",
  insufficient_onchain_balance: "The source wallet lacks the on-chain balance for the order. Nothing was broadcast.",
  source_account_unavailable: "The source balance is on a bank account that is not active. No funds moved.",
  provider_unavailable: "The provider was unavailable. No funds moved; a retry may succeed.",
  provider_rejected: "The provider refused the conversion. A retry will not help.",
  internal_error: "The order failed because of an internal error. Contact support with the order id.",
  cancelled: "The conversion was cancelled. No funds moved."
}

const orderHead = { orderId: OrderId, customerId: CustomerId, clientReferenceId: Schema.optionalKey(NonBlankString) }

/** Where to send the funds of an order created without an explicit source: an address and the amount on its chain. */
const OrderDepositInstructions = Schema.Struct({ address: NonBlankString, assetAmount: AssetAmount }).check(
  Schema.makeFilter((d: { readonly assetAmount: { readonly code: AssetCode } }) =>
    isFiat(d.assetAmount.code) ? { path: ["assetAmount", "code"], issue: "must be an on-chain asset" } : undefined
  )
)

const OrderCreated = Schema.Struct({
  ...orderHead,
  lockExpiresAt: UtcTimestamp,
  depositInstructions: Schema.optionalKey(OrderDepositInstructions),
  quoteOptionId: Schema.optionalKey(PlainId),
  occurredAt: UtcTimestamp
}).check(
  Schema.makeFilter((d: { readonly depositInstructions?: unknown; readonly quoteOptionId?: string }) =>
    d.depositInstructions !== undefined && d.quoteOptionId !== undefined
      ? { path: ["quoteOptionId"], issue: "is never sent together with depositInstructions" }
      : undefined
  )
)

const OrderCancelled = Schema.Struct({
  ...orderHead,
  reason: Schema.Literals(["expired", "client_cancelled"]),
  occurredAt: UtcTimestamp
})

const OrderFailed = Schema.Struct({
  ...orderHead,
  reasonCode: Schema.Literals(OrderFailureReasonCodes),
  failureMessage: NonBlankString,
  occurredAt: UtcTimestamp
})

const OrderSucceeded = Schema.Struct({
  ...orderHead,
  // The order's conversion transaction.
  transactionId: TransactionId,
  // When a chain leg ran.
  txHash: Schema.optionalKey(NonBlankString),
  succeededAt: UtcTimestamp,
  occurredAt: UtcTimestamp
}).check(sameTime("succeededAt"))

// --- RFIs --------------------------------------------------------------------------------------------------------

const rfiHead = {
  rfiId: PlainId,
  customerId: CustomerId,
  // The transaction the RFI holds, when it holds one.
  transactionId: Schema.optionalKey(TransactionId)
}
const RfiEvent = Schema.Struct({ ...rfiHead, occurredAt: UtcTimestamp })
const RfiDeadlineExtended = Schema.Struct({ ...rfiHead, deadline: UtcTimestamp, occurredAt: UtcTimestamp })

// --- the catalog -------------------------------------------------------------------------------------------------

/** The `data` schema of every event type. */
export const EventData = {
  "application.approved": ApplicationApproved,
  "application.rejected": ApplicationRejected,
  "claim.completed": ClaimCompleted,
  "claim.failed": ClaimFailed,
  "crypto_wallet.completed": CryptoWalletCompleted,
  "customer.created": CustomerCreated,
  "customer.restricted": CustomerRestricted,
  "idv_link.created": IdvLinkCreated,
  "order.created": OrderCreated,
  "order.cancelled": OrderCancelled,
  "order.failed": OrderFailed,
  "order.succeeded": OrderSucceeded,
  "organization.activated": OrganizationEvent,
  "organization.restricted": OrganizationEvent,
  "rfi.published": RfiEvent,
  "rfi.response_submitted": RfiEvent,
  "rfi.more_info_requested": RfiEvent,
  "rfi.deadline_extended": RfiDeadlineExtended,
  "rfi.resolved": RfiEvent,
  "rfi.cancelled": RfiEvent,
  "transaction.created": TransactionCreated,
  "transaction.processing": TransactionProcessing,
  "transaction.queue_position_changed": TransactionQueuePositionChanged,
  "transaction.under_review": TransactionUnderReview,
  "transaction.awaiting_signature": TransactionAwaitingSignature,
  "transaction.awaiting_user_signature": TransactionAwaitingUserSignature,
  "transaction.awaiting_recovery_signature": TransactionAwaitingRecoverySignature,
  "transaction.awaiting_return_signature": TransactionAwaitingReturnSignature,
  "transaction.awaiting_sender_information": TransactionAwaitingSenderInformation,
  "transaction.signature_collected": TransactionSignatureCollected,
  "transaction.quorum_met": TransactionQuorumMet,
  "transaction.completed": TransactionCompleted,
  "transaction.failed": TransactionFailed,
  "transaction.cancelled": TransactionCancelled,
  "transaction.rejected": TransactionRejected,
  "virtual_account.activated": VirtualAccountActivated,
  "wallet.created": WalletCreated,
  "wallet_ceremony.awaiting_admin_approval": WalletCeremonyAwaitingAdminApproval,
  "wallet_ceremony.completed": WalletCeremonyCompleted,
  "wallet_ceremony.failed": WalletCeremonyFailed,
  "wallet_signer.added": WalletSignerAdded,
  "wallet_signer.invited": WalletSignerInvited,
  "wallet_signer.enrolled": WalletSignerEnrolled,
  "wallet_signer.enrollment_approved": WalletSignerEnrollmentApproved,
  "wallet_signer.awaiting_admin_approval": WalletSignerAwaitingAdminApproval,
  "wallet_signer.promoted": WalletSignerPromoted,
  "wallet_signer.demoted": WalletSignerDemoted,
  "wallet_signer.removed": WalletSignerRemoved
} as const satisfies { readonly [T in EventType]: Schema.Struct<Schema.Struct.Fields> }

/** The decoded `data` of an event type. */
export type EventPayload<T extends EventType> = typeof EventData[T]["Type"]

// --- examples ----------------------------------------------------------------------------------------------------

const ids = {
  app: "app_01j9vp2n6c4e8g0j3l5n7q9s1u",
  cus: "cus_01j9wq3m8d5k2t7v4x6z8b0c1e",
  org: "org_01j9v1a3c5e7g9j1l3n5q7s9u1",
  ord: "ord_01j9x3f7h2k5m8p1r4t6v9x0yz",
  txn: "txn_01j9x4k2m7q8r3t5v6w8y0z2ab",
  vac: "vac_01j9wa4e6g8j0l2n4q6s8u0w2y",
  wlt: "wlt_01j9w8a2c4e6g8j0l2n4q6s8u0",
  wlt2: "wlt_01j9w8b3d5f7h9k1m3p5r7t9v1",
  wsg: "wsg_01j9w9b3d5f7h9k1m3p5r7t9v1",
  wsgAdmin: "wsg_01j9w9c4e6g8j0l2n4q6s8u0w2"
} as const

const at = "2026-03-01T12:00:00.000Z"
const expires = "2026-03-01T12:15:00.000Z"
const evmAddress = "0x52908400098527886e0f7030069857d2e4169ee7"
const returnAddress = "0x8617e340b3d01fa5f11f306f4090fd50e238070d"
const txHash = "0x3a1b2c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809"

const usdcOnBase = { code: "USDC", amount: "250.000000", chain: "base" } as const
const usd = { code: "USD", amount: "250.00" } as const

/** A payout from a custodial wallet to an external crypto address. */
const payoutHead = {
  transactionId: ids.txn,
  customerId: ids.cus,
  clientReferenceId: "payout-2026-0301-0042",
  type: "withdrawal",
  source: { type: "wallet", walletId: ids.wlt, assetAmount: usdcOnBase },
  destination: { type: "external_crypto", address: evmAddress, txHash: null, assetAmount: usdcOnBase }
} as const

/** An offramp of an order: USDC from a wallet to the customer's bank, the fiat payout. */
const offrampHead = {
  transactionId: ids.txn,
  customerId: ids.cus,
  type: "offramp",
  source: { type: "wallet", walletId: ids.wlt, assetAmount: usdcOnBase },
  destination: { type: "external_bank", assetAmount: { code: "USD", amount: "248.75" } },
  linkedOrderId: ids.ord
} as const

/** One realistic `data` per event type; each decodes with its schema. */
export const EventExamples: { readonly [T in EventType]: typeof EventData[T]["Encoded"] } = {
  "application.approved": {
    applicationId: ids.app,
    applicationType: "virtual_account",
    customerId: ids.cus,
    asset: { code: "EUR" },
    clientReferenceId: "va-eur-acme",
    occurredAt: at
  },
  "application.rejected": {
    applicationId: ids.app,
    applicationType: "organization_onboarding",
    failureCode: "compliance_denied",
    failureMessage: "The application did not pass compliance review.",
    resubmittable: true,
    occurredAt: at
  },
  "claim.completed": { claimId: "clm_7f3a9c21", customerId: ids.cus, walletIds: [ids.wlt, ids.wlt2], occurredAt: at },
  "claim.failed": {
    claimId: "clm_7f3a9c21",
    customerId: ids.cus,
    failureCode: "provisioning_failed",
    failureMessage: "The non-custodial wallets could not be provisioned. Start a new claim.",
    occurredAt: at
  },
  "crypto_wallet.completed": { customerId: ids.cus, claimId: "clm_7f3a9c21", occurredAt: at },
  "customer.created": { customerId: ids.cus, applicationId: ids.app, clientReferenceId: "acme-gmbh", occurredAt: at },
  "customer.restricted": { customerId: ids.cus, clientReferenceId: "acme-gmbh", occurredAt: at },
  "idv_link.created": {
    applicationId: ids.app,
    referenceId: "ubo-1",
    url: "https://verify.fos.dev/session/6f1d0c2e9b7a4c3e8f5a1b2c3d4e5f60",
    shortUrl: "https://fos.dev/v/k3m9q2",
    occurredAt: at
  },
  "order.created": {
    orderId: ids.ord,
    customerId: ids.cus,
    clientReferenceId: "order-4411",
    lockExpiresAt: "2026-03-01T12:30:00.000Z",
    depositInstructions: { address: evmAddress, assetAmount: usdcOnBase },
    occurredAt: at
  },
  "order.cancelled": { orderId: ids.ord, customerId: ids.cus, reason: "expired", occurredAt: at },
  "order.failed": {
    orderId: ids.ord,
    customerId: ids.cus,
    reasonCode: "provider_unavailable",
    failureMessage: OrderFailureMessages.provider_unavailable,
    occurredAt: at
  },
  "order.succeeded": {
    orderId: ids.ord,
    customerId: ids.cus,
    clientReferenceId: "order-4411",
    transactionId: ids.txn,
    txHash,
    succeededAt: at,
    occurredAt: at
  },
  "organization.activated": { organizationId: ids.org, occurredAt: at },
  "organization.restricted": { organizationId: ids.org, occurredAt: at },
  "rfi.published": { rfiId: "rfi_2c8e4a61", customerId: ids.cus, transactionId: ids.txn, occurredAt: at },
  "rfi.response_submitted": { rfiId: "rfi_2c8e4a61", customerId: ids.cus, transactionId: ids.txn, occurredAt: at },
  "rfi.more_info_requested": { rfiId: "rfi_2c8e4a61", customerId: ids.cus, transactionId: ids.txn, occurredAt: at },
  "rfi.deadline_extended": {
    rfiId: "rfi_2c8e4a61",
    customerId: ids.cus,
    transactionId: ids.txn,
    deadline: "2026-03-08T12:00:00.000Z",
    occurredAt: at
  },
  "rfi.resolved": { rfiId: "rfi_2c8e4a61", customerId: ids.cus, transactionId: ids.txn, occurredAt: at },
  "rfi.cancelled": { rfiId: "rfi_2c8e4a61", customerId: ids.cus, occurredAt: at },
  "transaction.created": { ...payoutHead, sequence: 1, stage: null, occurredAt: at },
  "transaction.processing": { ...payoutHead, sequence: 2, occurredAt: at },
  "transaction.queue_position_changed": { ...payoutHead, queuePosition: 2, occurredAt: at },
  "transaction.under_review": { ...payoutHead, sequence: 2, occurredAt: at },
  "transaction.awaiting_signature": {
    ...payoutHead,
    signingMode: "passkey_required",
    verificationUrl: "https://sign.fos.dev/requests/5d2f7a90c1e34b6a",
    expiresAt: expires,
    attempt: 1,
    occurredAt: at
  },
  "transaction.awaiting_user_signature": {
    ...payoutHead,
    verificationUrl: "https://sign.fos.dev/requests/5d2f7a90c1e34b6a",
    expiresAt: expires,
    attempt: 1,
    occurredAt: at
  },
  "transaction.awaiting_recovery_signature": {
    ...payoutHead,
    returnAddress,
    signingMode: "programmatic",
    signingRequestId: "sr_9b1c3e5a7d",
    expiresAt: expires,
    occurredAt: at
  },
  "transaction.awaiting_return_signature": {
    transactionId: ids.txn,
    customerId: ids.cus,
    type: "deposit_return",
    source: { type: "deposit_address", address: evmAddress, assetAmount: { code: "DAI", amount: "12.5", chain: "ethereum" } },
    destination: {
      type: "external_crypto",
      address: returnAddress,
      txHash: null,
      assetAmount: { code: "DAI", amount: "12.5", chain: "ethereum" }
    },
    linkedOrderId: ids.ord,
    destinationAddress: returnAddress,
    signingMode: "programmatic_unattended",
    signingRequestId: "sr_4e6a8c0b2d",
    expiresAt: expires,
    attempt: 2,
    occurredAt: at
  },
  "transaction.awaiting_sender_information": {
    transactionId: ids.txn,
    customerId: ids.cus,
    type: "deposit",
    source: { type: "external_unknown", assetAmount: usdcOnBase },
    destination: { type: "wallet", walletId: ids.wlt, assetAmount: usdcOnBase },
    sourceAddress: null,
    assetAmount: usdcOnBase,
    expiresAt: "2026-03-04T12:00:00.000Z",
    occurredAt: at
  },
  "transaction.signature_collected": { ...payoutHead, collected: 1, required: 2, attempt: 1, occurredAt: at },
  "transaction.quorum_met": { ...payoutHead, collected: 2, required: 2, attempt: 1, occurredAt: at },
  "transaction.completed": {
    ...offrampHead,
    sequence: 3,
    fees: [
      { owner: "service", assetAmount: { code: "USD", amount: "1.25" }, invoiced: false },
      { owner: "organization", assetAmount: { code: "USD", amount: "0.50" }, invoiced: true }
    ],
    payout: { rail: null },
    completedAt: at,
    occurredAt: at
  },
  "transaction.failed": {
    transactionId: ids.txn,
    customerId: ids.cus,
    clientReferenceId: "payout-2026-0301-0043",
    type: "withdrawal",
    source: { type: "virtual_account", virtualAccountId: ids.vac, assetAmount: usd },
    destination: { type: "external_bank", achTraceNumber: "021000021234567", assetAmount: usd },
    sequence: 4,
    status: "failed",
    reasonCode: "returned_by_sender",
    reasonMessage: TransactionFailureMessages.returned_by_sender,
    failureCode: "returned_by_sender",
    failureMessage: TransactionFailureMessages.returned_by_sender,
    returnedAt: "2026-03-03T09:30:00.000Z",
    returnReason: "Account closed",
    returnCode: "R02",
    occurredAt: "2026-03-03T09:30:00.000Z"
  },
  "transaction.cancelled": {
    ...payoutHead,
    sequence: 2,
    status: "cancelled",
    reasonCode: "client_cancelled",
    reasonMessage: TransactionCancellationMessages.client_cancelled,
    cancellationReason: "client_cancelled",
    occurredAt: at
  },
  "transaction.rejected": {
    transactionId: ids.txn,
    customerId: ids.cus,
    clientReferenceId: "payout-2026-0301-0044",
    type: "withdrawal",
    source: { type: "virtual_account", virtualAccountId: ids.vac, assetAmount: usd },
    destination: { type: "external_bank", assetAmount: usd },
    sequence: 2,
    status: "failed",
    reasonCode: "compliance_rejected",
    reasonMessage: TransactionFailureMessages.compliance_rejected,
    failureCode: "compliance_rejected",
    failureMessage: TransactionFailureMessages.compliance_rejected,
    acceptedDocumentTypes: ["invoice", "purchase_order"],
    occurredAt: at
  },
  "virtual_account.activated": {
    virtualAccountId: ids.vac,
    customerId: ids.cus,
    applicationId: ids.app,
    asset: { code: "EUR" },
    depositInstructions: [
      {
        railFamily: "sepa",
        currency: "EUR",
        bankName: "Banco Ejemplo",
        accountHolderName: "Acme GmbH",
        iban: "DE89370400440532013000",
        bic: "COBADEFFXXX"
      },
      {
        railFamily: "swift",
        currency: "USD",
        bankName: "Banco Ejemplo",
        accountHolderName: "Acme GmbH",
        accountNumber: "0532013000",
        bic: "COBADEFF"
      }
    ],
    occurredAt: at
  },
  "wallet.created": {
    walletId: ids.wlt,
    customerId: ids.cus,
    chain: "base",
    custody: "custodial",
    address: evmAddress,
    occurredAt: at
  },
  "wallet_ceremony.awaiting_admin_approval": {
    ceremonyId: "cer_1a2b3c4d",
    customerId: ids.cus,
    walletSignerId: ids.wsg,
    type: "signer_promotion",
    adminVerificationUrl: "https://sign.fos.dev/ceremonies/cer_1a2b3c4d",
    expiresAt: expires,
    occurredAt: at
  },
  "wallet_ceremony.completed": {
    ceremonyId: "cer_1a2b3c4d",
    customerId: ids.cus,
    walletSignerId: ids.wsg,
    type: "signer_promotion",
    occurredAt: at
  },
  "wallet_ceremony.failed": {
    ceremonyId: "cer_5e6f7a8b",
    customerId: ids.cus,
    type: "webauthn_origin_change",
    status: "failed",
    occurredAt: at
  },
  "wallet_signer.added": { walletSignerId: ids.wsg, customerId: ids.cus, role: "signer", credentialType: "passkey", occurredAt: at },
  "wallet_signer.invited": {
    walletSignerId: ids.wsg,
    customerId: ids.cus,
    verificationUrl: "https://sign.fos.dev/enroll/8c7d6e5f4a3b2c1d",
    expiresAt: "2026-03-08T12:00:00.000Z",
    occurredAt: at
  },
  "wallet_signer.enrolled": { walletSignerId: ids.wsg, customerId: ids.cus, passkeyCount: 1, occurredAt: at },
  "wallet_signer.enrollment_approved": {
    walletSignerId: ids.wsg,
    customerId: ids.cus,
    approvedByWalletSignerId: ids.wsgAdmin,
    approvedAt: at,
    occurredAt: at
  },
  "wallet_signer.awaiting_admin_approval": {
    walletSignerId: ids.wsg,
    customerId: ids.cus,
    signerId: ids.wsg,
    adminVerificationUrl: "https://sign.fos.dev/approvals/2b4d6f8a0c1e3a5c",
    expiresAt: expires,
    occurredAt: at
  },
  "wallet_signer.promoted": {
    walletSignerId: ids.wsg,
    customerId: ids.cus,
    role: "admin",
    credentialType: "passkey",
    passkeyCount: 2,
    occurredAt: at
  },
  "wallet_signer.demoted": {
    walletSignerId: ids.wsgAdmin,
    customerId: ids.cus,
    role: "signer",
    credentialType: "api_key",
    passkeyCount: 0,
    occurredAt: at
  },
  "wallet_signer.removed": { walletSignerId: ids.wsg, customerId: ids.cus, reason: "customer_removed", occurredAt: at }
}

// --- the envelope ------------------------------------------------------------------------------------------------

export const EventModes = ["live", "sandbox"] as const

const makeEnvelope = <T extends EventType>(type: T) =>
  Schema.Struct({
    id: EventId,
    type: Schema.Literal(type),
    createdAt: UtcTimestamp,
    apiVersion: Schema.Literal("2"),
    mode: Schema.Literals(EventModes),
    data: EventData[type]
  })

/** The envelope schema of one event type. */
export type EnvelopeSchema<T extends EventType> = ReturnType<typeof makeEnvelope<T>>

const envelopes = Object.fromEntries(EventTypes.map((type) => [type, makeEnvelope(type)])) as {
  readonly [T in EventType]: EnvelopeSchema<T>
}

/** The envelope { id, type, createdAt, apiVersion "2", mode, data } of one event type. */
export const envelopeSchema = <T extends EventType>(type: T): EnvelopeSchema<T> => envelopes[type]

type AnyEnvelopeSchema = { readonly [T in EventType]: EnvelopeSchema<T> }[EventType]

/** Any event fos sends: the union of the 48 envelopes, discriminated by `type`. */
export const EventEnvelope = Schema.Union(EventTypes.map((type): AnyEnvelopeSchema => envelopes[type]))
export type EventEnvelope = typeof EventEnvelope.Type
