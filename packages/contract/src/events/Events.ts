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
 * docs/webhooks.md, "Webhook event payloads"):
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
 *
 * It is over 1,000 lines because it is the catalog: every event type's payload schema, each a few lines, in one
 * place so the conventions above hold across them and the OpenAPI document's event list is read from one table.
 */
import { Schema } from "effect"
import "../kernel/Annotations.ts"
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
} from "../kernel/Ids.ts"
import { AssetCode, Chain, isFiat } from "../kernel/Money.ts"
import { NonBlankString, UtcTimestamp } from "../kernel/Primitives.ts"
import {
  AssetAmount,
  CancellationReasons,
  Fee,
  PayoutRail,
  TransactionCancellationMessages,
  TransactionFailureMessages,
  TransactionFailureCode,
  TransactionSide,
  TransactionStage,
  TransactionType
} from "../money/Transactions.ts"
import { DepositBlock, VirtualAccountAsset } from "../money/VirtualAccounts.ts"
import { ApplicationFailureCodes, type ApplicationType, ApplicationTypes } from "../onboarding/Applications.ts"

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
export const EventType = Schema.Literals(EventTypes).annotate({ identifier: "EventType", description: "An event type, as this version knows them." })

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

// --- transactions ----------------------------------------------------------------------------------------------

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
  // Omitted when the transaction opens in no stage (representation rule 3: the spec does not call it nullable).
  stage: Schema.optionalKey(TransactionStage),
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
  // failureCode when there is one; omitted for a failure with no actionable code (rule 3: not nullable in the spec).
  reasonCode: Schema.optionalKey(TransactionFailureCode),
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
      readonly reasonCode?: TransactionFailureCode
      readonly reasonMessage: string
      readonly failureCode?: TransactionFailureCode
      readonly failureMessage: string
      readonly returnedAt?: string
      readonly returnReason?: string
      readonly returnCode?: string
    }) => {
      if (d.reasonCode !== d.failureCode) return { path: ["reasonCode"], issue: "must equal failureCode (omitted without one)" }
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
  // Every wallet fos opens has its address from the start.
  address: NonBlankString,
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
  // The order's transaction's failureCode when the signing of its source transfer (a non-custodial wallet's) failed.
  failureCode: Schema.optionalKey(TransactionFailureCode),
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
  destination: { type: "external_crypto", address: evmAddress, assetAmount: usdcOnBase }
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
  "transaction.created": { ...payoutHead, sequence: 1, occurredAt: at },
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
