/**
 * Non-custodial wallets' wire shapes: the claim that starts them (a roster of signers and a threshold), the roster's
 * signers, their ceremonies, and the signer session a signer's own endpoints take as `Authorization: Bearer`.
 * Fields the spec does not show are fos's (docs/signing.md).
 */
import { Schema } from "effect"
import "../kernel/Annotations.ts"
import { type SigningIdPrefix, SigningIdPrefixes } from "../kernel/IdPrefixes.ts"
import { Chain } from "../kernel/Money.ts"
import { NonBlankString, UtcTimestamp } from "../kernel/Primitives.ts"
import { TransactionSide } from "../money/Transactions.ts"
import { withArticle } from "../kernel/Text.ts"

/**
 * An id of a resource the spec's identifier table has no prefix for (claims `clm_`, ceremonies `cer_`): fos mints
 * them with a prefix of its own (`SigningIdPrefixes`), and a path parameter of another shape is 400
 * INVALID_OID_FORMAT like any id. The pattern has no `u` flag, unlike `idPattern`'s, so the OpenAPI document leaves
 * it out, as it always has.
 */
const plainOid = (prefix: SigningIdPrefix) =>
  Schema.String.check(
    Schema.isPattern(new RegExp(`^${prefix}_[0-9A-Za-z]{1,64}$`), {
      fosCode: "INVALID_OID_FORMAT",
      fosDetail: `must be ${withArticle(SigningIdPrefixes[prefix].toLowerCase())} id (${prefix}_ followed by 1 to 64 letters or digits)`
    })
  )

export const ClaimId = plainOid("clm").pipe(Schema.brand("ClaimId"))
export type ClaimId = typeof ClaimId.Type
export const CeremonyId = plainOid("cer").pipe(Schema.brand("CeremonyId"))
export type CeremonyId = typeof CeremonyId.Type

export const SignerRoles = ["signer", "admin"] as const
export type SignerRole = typeof SignerRoles[number]
/** A person signs with passkeys; a machine signer with an API key of its own (spec: "a machine (api_key) admin"). */
export const CredentialTypes = ["passkey", "api_key"] as const
export type CredentialType = typeof CredentialTypes[number]

/** The most signers a roster holds. */
export const maxRosterSize = 10

/** One roster entry: a person (passkey) named by email, or a machine signer (api_key) named by a label. */
export const RosterEntry = Schema.Struct({
  credentialType: Schema.Literals(CredentialTypes),
  role: Schema.Literals(SignerRoles),
  /** A person's email, where the invitation is sent; required for passkey signers, refused for api_key ones. */
  email: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { fosDetail: "must be an email address" }))),
  /** A machine signer's label; required for api_key signers, optional for persons. */
  name: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(128, { fosDetail: "must be at most 128 characters" })))
}).annotate({ identifier: "RosterEntry", description: "A signer of a claim: who they are and their role." })
export type RosterEntry = typeof RosterEntry.Type

/** `POST /v2/customers/{customerId}/wallets/claim-non-custodial`. */
export const ClaimNonCustodial = Schema.Struct({
  /** The chains to open a non-custodial wallet on; each needs the customer's approved crypto_wallet application. */
  chains: Schema.Array(Chain).check(Schema.isMinLength(1, { fosDetail: "must name at least one chain" })),
  roster: Schema.Array(RosterEntry).check(Schema.isMinLength(1, { fosDetail: "must name at least one signer" })),
  /** How many signers' stamps a transfer needs: 1 to the roster's size. */
  threshold: Schema.Number.check(Schema.isInt()),
  clientReferenceId: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(128, { fosDetail: "must be at most 128 characters" })))
}).annotate({ identifier: "ClaimNonCustodial", description: "A claim of a non-custodial wallet: its signers and their threshold." })
export type ClaimNonCustodial = typeof ClaimNonCustodial.Type

export const WalletSignerStatuses = ["pending_activation", "enrolled", "approved", "removed"] as const

/** A roster signer as fos shows it. */
export const WalletSigner = Schema.Struct({
  id: Schema.String,
  customerId: Schema.String,
  claimId: Schema.String,
  role: Schema.Literals(SignerRoles),
  credentialType: Schema.Literals(CredentialTypes),
  status: Schema.Literals(WalletSignerStatuses),
  passkeyCount: Schema.Number,
  email: Schema.optionalKey(Schema.String),
  name: Schema.optionalKey(Schema.String),
  createdAt: UtcTimestamp,
  updatedAt: UtcTimestamp
}).annotate({ identifier: "WalletSigner", description: "A signer of a wallet: its role, status and passkeys." })
export type WalletSigner = typeof WalletSigner.Type

/** The 202 of a claim: its id, and the roster it invited. */
export const ClaimAccepted = Schema.Struct({
  claimId: Schema.String,
  customerId: Schema.String,
  status: Schema.Literal("pending"),
  chains: Schema.Array(Chain),
  threshold: Schema.Number,
  signers: Schema.Array(WalletSigner),
  clientReferenceId: Schema.optionalKey(Schema.String),
  createdAt: UtcTimestamp
}).annotate({ identifier: "ClaimAccepted", description: "A wallet claim accepted: its id and the signers it enrolls." })
export type ClaimAccepted = typeof ClaimAccepted.Type

/** An admin approval link, as reissued. */
export const AdminApproval = Schema.Struct({
  walletSignerId: Schema.String,
  ceremonyId: Schema.String,
  adminVerificationUrl: Schema.String,
  expiresAt: UtcTimestamp
}).annotate({ identifier: "AdminApproval", description: "An admin approval link for a wallet signer, and when it expires." })
export type AdminApproval = typeof AdminApproval.Type

export const WalletCeremonyStatuses = ["awaiting_admin_approval", "completed", "failed", "cancelled"] as const

/** A roster ceremony. */
export const WalletCeremony = Schema.Struct({
  id: Schema.String,
  customerId: Schema.String,
  /** The signer it is about; omitted on the roster-wide webauthn_origin_change. */
  walletSignerId: Schema.optionalKey(Schema.String),
  /** webauthn_origin_change only: the custom domain's origin the roster's passkeys are to sign for. */
  origin: Schema.optionalKey(Schema.String),
  type: Schema.Literals(["passkey_addition", "signer_promotion", "signer_demotion", "signer_removal", "webauthn_origin_change"]),
  status: Schema.Literals(WalletCeremonyStatuses),
  adminVerificationUrl: Schema.String,
  expiresAt: UtcTimestamp,
  createdAt: UtcTimestamp,
  updatedAt: UtcTimestamp
}).annotate({
  identifier: "WalletCeremony",
  description: "A wallet ceremony an admin co-stamps and its status: about one signer (a passkey addition, a promotion, a demotion, a removal), or the whole roster (webauthn_origin_change, with the custom_domains feature)."
})
export type WalletCeremony = typeof WalletCeremony.Type

/** `POST /v2/signer/ceremonies`: an admin starts a roster change that another admin's co-stamp completes. */
export const CeremonyStart = Schema.Struct({
  type: Schema.Literals(["signer_promotion", "signer_demotion", "signer_removal"]),
  walletSignerId: Schema.String.check(Schema.isPattern(/^wsg_[0-9A-Za-z]{1,64}$/, { fosDetail: "must be a wallet signer id (wsg_...)" }))
}).annotate({ identifier: "CeremonyStart", description: "The ceremony to start for the session's signer." })
export type CeremonyStart = typeof CeremonyStart.Type

/** A signer session: the token a signer's endpoints take as `Authorization: Bearer`, and when it expires. */
export const SignerSession = Schema.Struct({
  token: Schema.String,
  walletSignerId: Schema.String,
  customerId: Schema.String,
  expiresAt: UtcTimestamp
}).annotate({ identifier: "SignerSession", description: "A signer session token, and when it expires." })
export type SignerSession = typeof SignerSession.Type

/** The signer a session belongs to, as `GET /v2/signer/session` shows it. */
export const SignerSessionInfo = Schema.Struct({
  signer: WalletSigner,
  expiresAt: UtcTimestamp
}).annotate({ identifier: "SignerSessionInfo", description: "The wallet signer a session belongs to, and when the session expires." })

/** The headers of a signer endpoint: the session token. A missing or malformed one is 401, never 400. */
export const SignerHeaders = Schema.Struct({ authorization: Schema.optionalKey(Schema.String) })

// --- the outside actors (simulate) -----------------------------------------------------------------------------

/** The end user (or the machine) enrolls its credential from the invitation: passkeys for a person, none for a machine. */
export const SimulatedEnrollment = Schema.Struct({
  passkeyCount: Schema.optionalKey(Schema.Number.check(Schema.isInt()))
}).annotate({ identifier: "SimulatedEnrollment", description: "The enrollment to complete for a signer." })
export type SimulatedEnrollment = typeof SimulatedEnrollment.Type

/** The signer logs in: its passkey (or key) authentication succeeds, or fails (401 SIGNER_AUTH_FAILED). */
export const SimulatedSignerLogin = Schema.Struct({
  authentication: Schema.optionalKey(Schema.Literals(["succeeded", "failed"]))
}).annotate({ identifier: "SimulatedSignerLogin", description: "The passkey login to simulate for a signer." })
export type SimulatedSignerLogin = typeof SimulatedSignerLogin.Type

/** An admin's co-stamp on a waiting ceremony (the admin's session in `Authorization: Bearer`). */
export const SimulatedCeremonyDecision = Schema.Struct({
  outcome: Schema.Literals(["approved", "declined"])
}).annotate({ identifier: "SimulatedCeremonyDecision", description: "The admin's decision on a wallet ceremony." })
export type SimulatedCeremonyDecision = typeof SimulatedCeremonyDecision.Type

/**
 * The custom domain a roster's passkeys are to sign for, as a WebAuthn origin: `https://` and a lower-case host
 * (an optional port), no path. `POST /sandbox/v2/simulate/wallets/{walletId}/webauthn-origin-change`.
 */
export const SimulatedOriginChange = Schema.Struct({
  origin: Schema.String.check(
    Schema.isPattern(/^https:\/\/[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+(?::\d{1,5})?$/, {
      fosDetail: "must be an https origin of a custom domain, such as https://pay.acme.example (no path)"
    }),
    Schema.isMaxLength(253, { fosDetail: "must be at most 253 characters" })
  )
}).annotate({ identifier: "SimulatedOriginChange", description: "The custom domain's origin the roster's passkeys are to sign for." })
export type SimulatedOriginChange = typeof SimulatedOriginChange.Type

/** The wallet provider's answer to a claim's provisioning. */
export const SimulatedProvisioning = Schema.Struct({
  outcome: Schema.Literals(["succeeded", "failed"])
}).annotate({ identifier: "SimulatedProvisioning", description: "The outcome of a claim's provisioning." })
export type SimulatedProvisioning = typeof SimulatedProvisioning.Type

/** A claim as the provisioning simulate answers it. */
export const ClaimState = Schema.Struct({
  claimId: Schema.String,
  customerId: Schema.String,
  status: Schema.Literals(["pending", "completed", "failed"]),
  provisioned: Schema.Boolean,
  walletIds: Schema.Array(Schema.String)
}).annotate({ identifier: "ClaimState", description: "A wallet claim's state." })
export type ClaimState = typeof ClaimState.Type

// --- signing a transfer ----------------------------------------------------------------------------------------

/**
 * A signing request: one attempt of a transfer's signing, for its machine signers (spec: `GET /v2/signing-requests/{id}`,
 * "signing details for a machine signer"; transaction.awaiting_signature carries its id as `signingRequestId` in the
 * programmatic modes). fos mints `sr_` ids.
 */
export const SigningRequestId = plainOid("sr").pipe(Schema.brand("SigningRequestId"))
export type SigningRequestId = typeof SigningRequestId.Type

/**
 * pending: the attempt waits for stamps; approved: the quorum was met; expired: its window passed (a later attempt,
 * or the transfer's failure user_signature_expired, replaced it); failed: the transfer's signing failed in this
 * attempt (a decline, a roster change) or the transfer failed otherwise; cancelled: the transfer was cancelled.
 */
export const SigningRequestStatuses = ["pending", "approved", "expired", "failed", "cancelled"] as const

/** A signing request as `GET /v2/signing-requests/{id}` shows it: what the machine signer is asked to sign. */
export const SigningRequest = Schema.Struct({
  id: Schema.String,
  transactionId: Schema.String,
  customerId: Schema.String,
  walletId: Schema.String,
  signingMode: Schema.Literals(["passkey_required", "programmatic", "programmatic_unattended"]),
  attempt: Schema.Number,
  status: Schema.Literals(SigningRequestStatuses),
  /** Stamps collected in this attempt, and how many the roster's threshold needs. */
  collected: Schema.Number,
  required: Schema.Number,
  /** The signers whose stamps this attempt collected, in order. */
  signedBy: Schema.Array(Schema.String),
  /** The transfer to sign: its source (the non-custodial wallet) and destination, with their amounts. */
  transfer: Schema.Struct({ source: TransactionSide, destination: TransactionSide }),
  expiresAt: UtcTimestamp,
  createdAt: UtcTimestamp
}).annotate({ identifier: "SigningRequest", description: "A request for a wallet signer's signature on a transaction." })
export type SigningRequest = typeof SigningRequest.Type

/**
 * A passkey signer stamps (or declines) a transfer at its `verificationUrl` (the signer's session in
 * `Authorization: Bearer`). `attempt` names the attempt the signer's link was for (the current one when omitted): a
 * stamp for an older attempt is refused. `provider` stands for the signing provider's answer to the stamped
 * request: `rejected` is 422 SIGNATURE_REJECTED and `unavailable` 502 SIGNING_PROVIDER_UNAVAILABLE, both changing
 * nothing (the session stays valid).
 */
export const SimulatedSignature = Schema.Struct({
  decision: Schema.Literals(["approve", "decline"]),
  attempt: Schema.optionalKey(Schema.Number.check(Schema.isInt())),
  provider: Schema.optionalKey(Schema.Literals(["accepted", "rejected", "unavailable"]))
}).annotate({ identifier: "SimulatedSignature", description: "A signer's signature to add to a transaction." })
export type SimulatedSignature = typeof SimulatedSignature.Type
