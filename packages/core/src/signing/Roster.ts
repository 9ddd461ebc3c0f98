/**
 * Non-custodial wallets: the claim, its roster of signers and their ceremonies (spec, "Claims, virtual accounts,
 * wallets" and "Wallet signers and ceremonies"; the moves are SignerMachine.ts's).
 *
 * | State | Trigger | Next | Also |
 * |---|---|---|---|
 * | claim accepted (202) | every roster signer enrolled and wallets activated | resolved | claim.completed, then crypto_wallet.completed when the end user has finished |
 * | claim accepted (202) | provisioning fails | failed | claim.failed |
 *
 * - `POST /v2/customers/{customerId}/wallets/claim-non-custodial` takes the chains, the roster and the threshold.
 *   Problems of the roster or the threshold are 400 VALIDATION_ERROR with a pointer each, a chain that cannot hold a
 *   non-custodial wallet (Stellar) is 422 NON_CUSTODIAL_SOURCE_NOT_SUPPORTED, a customer whose jurisdiction is not
 *   offered crypto wallets (or who is restricted) is 422 UNPROCESSABLE_ENTITY, and so is a chain without an approved
 *   crypto_wallet application; a customer with a claim pending or resolved is 409 CONFLICT. All of these write and
 *   emit nothing. Otherwise 202: each signer is invited (wallet_signer.added and wallet_signer.invited) and the
 *   wallet provider starts provisioning.
 * - Provisioning succeeds on its own after `provisioningMs` (a durable timer), or as the simulate call says; a
 *   failure fails the claim (claim.failed) and its roster with it (its signers can no longer enroll).
 * - The claim's status moves only through ClaimMachine.ts (`claimTransition`), the table above as one pure function.
 * - When the claim is provisioned and every signer of its roster (not removed) has enrolled, its wallets open (one
 *   per chain, custody non_custodial, wallet.created each), then claim.completed with their ids and
 *   crypto_wallet.completed: the end user's part ends with the last enrollment, so both come in that transaction.
 */
import {
  type Chain,
  type ClaimAccepted,
  type ClaimId,
  type ClaimNonCustodial,
  type ClaimState,
  type CustomerId,
  type Environment,
  type ErrorEntry,
  maxRosterSize,
  toIso,
  type WalletCeremony as WalletCeremonyWire,
  type WalletId,
  type WalletSigner as WalletSignerWire,
  type WalletSignerId
} from "@fos/contract"
import { Clock, Effect } from "effect"
import { newId, randomString } from "../kernel/IdGenerator.ts"
import { apiError, type ApiError } from "../kernel/Problem.ts"
import { Store, table } from "../kernel/Store.ts"
import { schedule, type TimerHandler } from "../kernel/Timers.ts"
import { publish, topic } from "../kernel/Topics.ts"
import { toWire } from "../kernel/Wire.ts"
import { cryptoWalletApproved, nonCustodialChains, onboardedCustomer, openWallet } from "../money/Wallets.ts"
import { cryptoEligible } from "../onboarding/Requirements.ts"
import { Customers } from "../onboarding/Customers.ts"
import type { Caller } from "../tenancy/Auth.ts"
import { scopeOf } from "../tenancy/Tenancy.ts"
import { emitEvent } from "../kernel/Outbox.ts"
import { type ClaimStatus, claimTransition, initialClaim } from "./ClaimMachine.ts"
import { signingSettings } from "./Settings.ts"
import {
  type CeremonyStatus,
  type CeremonyType,
  type CredentialType,
  isActive,
  type Move,
  type RosterState,
  type SignerEvent,
  type SignerRole,
  type SignerStatus,
  transition
} from "./SignerMachine.ts"

// --- storage -----------------------------------------------------------------------------------------------------

interface Owned {
  readonly organizationId: string
  readonly environment: Environment
  readonly customerId: CustomerId
}

export interface StoredClaim extends Owned {
  readonly id: ClaimId
  readonly chains: ReadonlyArray<Chain>
  readonly threshold: number
  readonly signerIds: ReadonlyArray<WalletSignerId>
  readonly status: ClaimStatus
  readonly provisioned: boolean
  readonly walletIds: ReadonlyArray<WalletId>
  readonly clientReferenceId: string | undefined
  readonly createdAt: string
  readonly updatedAt: string
}

export interface StoredSigner extends Owned {
  readonly id: WalletSignerId
  readonly claimId: ClaimId
  readonly role: SignerRole
  readonly credentialType: CredentialType
  readonly status: SignerStatus
  readonly passkeyCount: number
  readonly email: string | undefined
  readonly name: string | undefined
  readonly invitationExpiresAt: string
  /** The signer's latest ceremony. */
  readonly ceremonyId: string | undefined
  readonly createdAt: string
  readonly updatedAt: string
}

export interface StoredCeremony extends Owned {
  readonly id: string
  readonly walletSignerId: WalletSignerId
  readonly type: CeremonyType
  readonly status: CeremonyStatus
  readonly adminVerificationUrl: string
  readonly expiresAt: string
  /** Bumped by each reissued link, so the expiry timer of an older link does nothing. */
  readonly linkVersion: number
  readonly createdAt: string
  readonly updatedAt: string
}

const scope = (row: Owned) => scopeOf(row.organizationId, row.environment)
const byCustomer = (row: Owned) => `${scope(row)}/${row.customerId}`

export const Claims = table<StoredClaim>({
  name: "wallet_claims",
  key: (c) => c.id,
  orders: { byCustomer: { partition: byCustomer, sort: (c) => c.createdAt }, byScope: { partition: scope, sort: (c) => c.createdAt, counted: false } }
})

export const WalletSigners = table<StoredSigner>({
  name: "wallet_signers",
  key: (s) => s.id,
  orders: { byClaim: { partition: (s) => s.claimId, sort: (s) => s.createdAt }, byScope: { partition: scope, sort: (s) => s.createdAt, counted: false } }
})

export const WalletCeremonies = table<StoredCeremony>({
  name: "wallet_ceremonies",
  key: (c) => c.id,
  orders: { byScope: { partition: scope, sort: (c) => c.createdAt, counted: false } }
})

/**
 * A signer left its roster's signing pool (removed by ops or by a ceremony), published after it is stored: the
 * signing of transfers fails the transfers the change breaks with roster_changed (TransferSigning.ts
 * `onSignerLeftPool`; Subscriptions.ts names every subscriber). A topic, because TransferSigning.ts imports this
 * module for the roster.
 */
export const SignerLeftPool = topic<StoredSigner>("fos/SignerLeftPool")

const ceremonyExpiryKind = "signing.ceremony_expiry"
const provisioningKind = "signing.claim_provisioning"


// --- wire --------------------------------------------------------------------------------------------------------

export const signerToWire = (s: StoredSigner): WalletSignerWire =>
  toWire({
    id: s.id,
    customerId: s.customerId,
    claimId: s.claimId,
    role: s.role,
    credentialType: s.credentialType,
    status: s.status,
    passkeyCount: s.passkeyCount,
    email: s.email,
    name: s.name,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt
  }) as WalletSignerWire

export const ceremonyToWire = (c: StoredCeremony): WalletCeremonyWire => ({
  id: c.id,
  customerId: c.customerId,
  walletSignerId: c.walletSignerId,
  type: c.type,
  status: c.status,
  adminVerificationUrl: c.adminVerificationUrl,
  expiresAt: c.expiresAt,
  createdAt: c.createdAt,
  updatedAt: c.updatedAt
})

const claimStateOf = (c: StoredClaim): ClaimState => ({
  claimId: c.id,
  customerId: c.customerId,
  status: c.status,
  provisioned: c.provisioned,
  walletIds: [...c.walletIds]
})

// --- helpers -----------------------------------------------------------------------------------------------------

const now = Effect.map(Clock.currentTimeMillis, (ms) => ({ ms, iso: toIso(ms) }))

const emit = (row: Owned, type: Parameters<typeof emitEvent>[0]["type"], data: Record<string, unknown>) =>
  emitEvent({ type, organizationId: row.organizationId, environment: row.environment, data })

const opaque = randomString("0123456789abcdefghjkmnpqrstvwxyz", 24)

const mint = <P extends "clm" | "cer">(p: P) => Effect.map(opaque, (o) => `${p}_${o}`)

const validation = (errors: ReadonlyArray<ErrorEntry>) => apiError("VALIDATION_ERROR", "The request body failed validation; see errors[].", { errors })

const inScope = <R extends Owned>(row: R | undefined, caller: Caller): row is R =>
  row !== undefined && row.organizationId === caller.organization.id && row.environment === caller.environment

/** The caller's signer, or 404 NOT_FOUND (the spec names no code of its own for a signer). */
export const getSigner = (caller: Caller, id: WalletSignerId): Effect.Effect<StoredSigner, ApiError, Store> =>
  Effect.gen(function*() {
    const signer = yield* (yield* Store).getForUpdate(WalletSigners, id)
    if (!inScope(signer, caller)) return yield* apiError("NOT_FOUND", "No wallet signer with this id exists in this organization and environment.")
    return signer
  })

const getClaimForUpdate = (id: ClaimId) => Effect.flatMap(Store, (store) => store.getForUpdate(Claims, id))

/** The signers of one claim's roster (at most `maxRosterSize`). */
const rosterOf = (claimId: ClaimId) =>
  Effect.flatMap(Store, (store) =>
    store.page(WalletSigners, { order: "byClaim", partition: claimId, descending: false, backward: false, from: undefined, limit: maxRosterSize }))

/** The table's state for `signer`: its latest ceremony and how many other admins of its roster can act. */
const rosterState = (signer: StoredSigner) =>
  Effect.gen(function*() {
    const store = yield* Store
    const ceremony = signer.ceremonyId === undefined ? undefined : yield* store.getForUpdate(WalletCeremonies, signer.ceremonyId)
    const roster = yield* rosterOf(signer.claimId)
    const otherAdmins = roster.filter((s) => s.id !== signer.id && s.role === "admin" && isActive(s.status)).length
    const state: RosterState = {
      signer: { status: signer.status, role: signer.role, credentialType: signer.credentialType, passkeyCount: signer.passkeyCount },
      ceremony: ceremony === undefined ? undefined : { type: ceremony.type, status: ceremony.status },
      otherAdmins
    }
    return { state, ceremony }
  })

/** Runs one move of the table on `signer`, or fails with its refusal. */
const move = (signer: StoredSigner, m: Move) =>
  Effect.gen(function*() {
    const { state, ceremony } = yield* rosterState(signer)
    const outcome = transition(state, m)
    if ("refused" in outcome) return yield* apiError(outcome.refused, outcome.reason)
    return { outcome, ceremony }
  })

const has = (events: ReadonlyArray<SignerEvent>, type: SignerEvent) => events.includes(type)

// --- the claim ---------------------------------------------------------------------------------------------------

const rosterProblems = (body: ClaimNonCustodial): ReadonlyArray<ErrorEntry> => {
  const errors: Array<ErrorEntry> = []
  if (body.roster.length > maxRosterSize) errors.push({ pointer: "/roster", detail: `must name at most ${maxRosterSize} signers` })
  const emails = new Set<string>()
  body.roster.forEach((entry, i) => {
    if (entry.credentialType === "passkey") {
      if (entry.email === undefined) errors.push({ pointer: `/roster/${i}/email`, detail: "is required for a passkey signer" })
      else if (emails.has(entry.email.toLowerCase())) errors.push({ pointer: `/roster/${i}/email`, detail: "names a signer already on the roster" })
      else emails.add(entry.email.toLowerCase())
    } else {
      if (entry.email !== undefined) errors.push({ pointer: `/roster/${i}/email`, detail: "is only for passkey signers" })
      if (entry.name === undefined) errors.push({ pointer: `/roster/${i}/name`, detail: "is required for an api_key signer" })
    }
  })
  if (!body.roster.some((entry) => entry.role === "admin")) errors.push({ pointer: "/roster", detail: "must include at least one admin" })
  if (body.threshold < 1 || body.threshold > body.roster.length) {
    errors.push({ pointer: "/threshold", detail: `must be from 1 to the number of signers on the roster (${body.roster.length})` })
  }
  body.chains.forEach((chain, i) => {
    if (body.chains.indexOf(chain) !== i) errors.push({ pointer: `/chains/${i}`, detail: "names a chain twice" })
  })
  return errors
}

/** `POST /v2/customers/{customerId}/wallets/claim-non-custodial`. */
export const claimNonCustodial = (caller: Caller, customerId: CustomerId, body: ClaimNonCustodial): Effect.Effect<ClaimAccepted, ApiError, Store> =>
  Effect.gen(function*() {
    const store = yield* Store
    const customer = yield* onboardedCustomer(caller, customerId)
    const problems = rosterProblems(body)
    if (problems.length > 0) return yield* validation(problems)
    const unsupported = body.chains.find((c) => !nonCustodialChains.includes(c))
    if (unsupported !== undefined) {
      return yield* apiError(
        "NON_CUSTODIAL_SOURCE_NOT_SUPPORTED",
        `Non-custodial wallets are offered on ${nonCustodialChains.join(", ")}; not on ${unsupported}.`
      )
    }
    if (!cryptoEligible(customer)) return yield* apiError("UNPROCESSABLE_ENTITY", "Crypto wallets are not offered in the customer's jurisdiction.")
    if (customer.status !== "active") return yield* apiError("UNPROCESSABLE_ENTITY", "The customer is restricted; a claim cannot start.")
    for (const chain of body.chains) {
      if (!(yield* cryptoWalletApproved(caller, customerId, chain))) {
        return yield* apiError(
          "UNPROCESSABLE_ENTITY",
          `The customer has no approved crypto_wallet application for ${chain}; apply with POST /v2/customers/{customerId}/features first.`
        )
      }
    }
    // The customer's row lock serialises its claims, so two at once cannot both pass the check below.
    yield* store.getForUpdate(Customers, customerId)
    const earlier = yield* store.page(Claims, {
      order: "byCustomer",
      partition: `${scopeOf(caller.organization.id, caller.environment)}/${customerId}`,
      descending: true,
      backward: false,
      from: undefined,
      limit: 1
    })
    if (earlier[0] !== undefined && earlier[0].status !== "failed") {
      return yield* apiError("CONFLICT", `The customer already has a ${earlier[0].status} claim (${earlier[0].id}); its roster signs for its wallets.`)
    }
    const at = yield* now
    const owner = { organizationId: caller.organization.id, environment: caller.environment, customerId }
    const claimId = (yield* mint("clm")) as ClaimId
    const invitationExpiresAt = toIso(at.ms + signingSettings.invitationTtlMs)
    const signers: Array<StoredSigner> = []
    for (const entry of body.roster) {
      const signer: StoredSigner = {
        ...owner,
        id: yield* newId("wsg"),
        claimId,
        role: entry.role,
        credentialType: entry.credentialType,
        status: "pending_activation",
        passkeyCount: 0,
        email: entry.email,
        name: entry.name,
        invitationExpiresAt,
        ceremonyId: undefined,
        createdAt: at.iso,
        updatedAt: at.iso
      }
      // The table's invite: wallet_signer.added with wallet_signer.invited.
      const outcome = transition({ signer: undefined, ceremony: undefined, otherAdmins: 0 }, { type: "invite", role: signer.role, credentialType: signer.credentialType })
      if ("refused" in outcome) return yield* Effect.die(new Error(`invite refused: ${outcome.reason}`))
      yield* Effect.orDie(store.insert(WalletSigners, signer))
      yield* emit(signer, "wallet_signer.added", { walletSignerId: signer.id, customerId, role: signer.role, credentialType: signer.credentialType, occurredAt: at.iso })
      yield* emit(signer, "wallet_signer.invited", {
        walletSignerId: signer.id,
        customerId,
        verificationUrl: `${signingSettings.signingOrigin}/enroll/${yield* randomString("0123456789abcdef", 32)}`,
        expiresAt: invitationExpiresAt,
        occurredAt: at.iso
      })
      signers.push(signer)
    }
    const claim: StoredClaim = {
      ...owner,
      id: claimId,
      chains: body.chains,
      threshold: body.threshold,
      signerIds: signers.map((s) => s.id),
      ...initialClaim,
      walletIds: [],
      clientReferenceId: body.clientReferenceId,
      createdAt: at.iso,
      updatedAt: at.iso
    }
    yield* Effect.orDie(store.insert(Claims, claim))
    yield* schedule(provisioningKind, at.ms + signingSettings.provisioningMs, { claimId }, scope(claim))
    return toWire({
      claimId,
      customerId,
      status: "pending" as const,
      chains: [...body.chains],
      threshold: body.threshold,
      signers: signers.map(signerToWire),
      clientReferenceId: body.clientReferenceId,
      createdAt: at.iso
    }) as ClaimAccepted
  })

/** Resolves the claim once it is provisioned and every signer of its roster can act. */
const resolveIfReady = (claim: StoredClaim) =>
  Effect.gen(function*() {
    if (claim.status !== "pending" || !claim.provisioned) return claim
    const roster = (yield* rosterOf(claim.id)).filter((s) => s.status !== "removed")
    const outcome = claimTransition(claim, { type: "resolve", rosterSize: roster.length, rosterActive: roster.every((s) => isActive(s.status)) })
    if ("refused" in outcome) return claim
    const store = yield* Store
    const walletIds: Array<WalletId> = []
    for (const chain of claim.chains) {
      const wallet = yield* Effect.orDie(openWallet(claim, claim.customerId, chain, undefined, "non_custodial"))
      walletIds.push(wallet.id)
    }
    const at = yield* now
    const resolved: StoredClaim = { ...claim, ...outcome.next, walletIds, updatedAt: at.iso }
    yield* Effect.orDie(store.update(Claims, resolved))
    yield* emit(claim, "claim.completed", { claimId: claim.id, customerId: claim.customerId, walletIds, occurredAt: at.iso })
    yield* emit(claim, "crypto_wallet.completed", { customerId: claim.customerId, claimId: claim.id, occurredAt: at.iso })
    return resolved
  })

/** The provider's answer: provisioned (then the claim resolves if its roster has enrolled), or failed. */
const provision = (claim: StoredClaim, outcome: "succeeded" | "failed") =>
  Effect.gen(function*() {
    const store = yield* Store
    const at = yield* now
    const moved = claimTransition(claim, { type: outcome === "succeeded" ? "provisioned" : "provisioning_failed" })
    if ("refused" in moved) return yield* Effect.die(new Error(`claim ${claim.id}: ${moved.reason}`))
    if (outcome === "succeeded") {
      const provisioned: StoredClaim = { ...claim, ...moved.next, updatedAt: at.iso }
      yield* Effect.orDie(store.update(Claims, provisioned))
      return yield* resolveIfReady(provisioned)
    }
    const failed: StoredClaim = { ...claim, ...moved.next, updatedAt: at.iso }
    yield* Effect.orDie(store.update(Claims, failed))
    yield* emit(claim, "claim.failed", {
      claimId: claim.id,
      customerId: claim.customerId,
      failureCode: "provisioning_failed",
      failureMessage: "The non-custodial wallets could not be provisioned. Start a new claim.",
      occurredAt: at.iso
    })
    return failed
  })

const provisionOnTime: TimerHandler = (payload: { readonly claimId: ClaimId }) =>
  Effect.gen(function*() {
    const claim = yield* getClaimForUpdate(payload.claimId)
    if (claim === undefined || claim.status !== "pending" || claim.provisioned) return
    yield* provision(claim, "succeeded")
  })

/** `POST /sandbox/v2/simulate/claims/{claimId}/provisioning`: the wallet provider answers before its own time. */
export const simulateProvisioning = (caller: Caller, claimId: ClaimId, outcome: "succeeded" | "failed"): Effect.Effect<ClaimState, ApiError, Store> =>
  Effect.gen(function*() {
    const claim = yield* getClaimForUpdate(claimId)
    if (!inScope(claim, caller)) return yield* apiError("NOT_FOUND", "No claim with this id exists in this organization and environment.")
    const refusal = claimTransition(claim, { type: outcome === "succeeded" ? "provisioned" : "provisioning_failed" })
    if ("refused" in refusal) return yield* apiError(refusal.refused, refusal.reason)
    return claimStateOf(yield* provision(claim, outcome))
  })

// --- the roster's outside actors ---------------------------------------------------------------------------------

/** A signer whose claim failed cannot act: the roster went with it. */
const liveClaim = (signer: StoredSigner) =>
  Effect.gen(function*() {
    const claim = yield* getClaimForUpdate(signer.claimId)
    if (claim === undefined || claim.status === "failed") return yield* apiError("RESOURCE_TERMINAL", "The signer's claim failed; start a new claim.")
    return claim
  })

const saveSigner = (signer: StoredSigner, next: Partial<StoredSigner>, iso: string) =>
  Effect.flatMap(Store, (store) => Effect.as(Effect.orDie(store.update(WalletSigners, { ...signer, ...next, updatedAt: iso })), { ...signer, ...next, updatedAt: iso }))

/** `POST /sandbox/v2/simulate/wallet-signers/{signerId}/enroll`: the end user (or machine) enrolls its credential. */
export const simulateEnrollment = (caller: Caller, id: WalletSignerId, passkeyCount: number | undefined): Effect.Effect<WalletSignerWire, ApiError, Store> =>
  Effect.gen(function*() {
    const signer = yield* getSigner(caller, id)
    const claim = yield* liveClaim(signer)
    const at = yield* now
    if (signer.status === "pending_activation" && at.iso > signer.invitationExpiresAt) {
      return yield* apiError("UNPROCESSABLE_ENTITY", "The signer's invitation expired; it can no longer enroll.")
    }
    const count = passkeyCount ?? (signer.credentialType === "api_key" ? 0 : signer.role === "admin" ? 2 : 1)
    const { outcome } = yield* move(signer, { type: "enroll", passkeyCount: count })
    const enrolled = yield* saveSigner(signer, outcome.next.signer, at.iso)
    yield* emit(signer, "wallet_signer.enrolled", { walletSignerId: signer.id, customerId: signer.customerId, passkeyCount: count, occurredAt: at.iso })
    yield* resolveIfReady(claim)
    return signerToWire(enrolled)
  })

const approvalUrl = (ceremonyId: string) =>
  Effect.map(randomString("0123456789abcdef", 32), (secret) => `${signingSettings.signingOrigin}/approvals/${ceremonyId}/${secret}`)

/** Opens a ceremony of `signer` waiting for an admin, with its expiry timer. */
const openCeremony = (signer: StoredSigner, type: CeremonyType) =>
  Effect.gen(function*() {
    const store = yield* Store
    const at = yield* now
    const id = yield* mint("cer")
    const ceremony: StoredCeremony = {
      organizationId: signer.organizationId,
      environment: signer.environment,
      customerId: signer.customerId,
      id,
      walletSignerId: signer.id,
      type,
      status: "awaiting_admin_approval",
      adminVerificationUrl: yield* approvalUrl(id),
      expiresAt: toIso(at.ms + signingSettings.ceremonyTtlMs),
      linkVersion: 1,
      createdAt: at.iso,
      updatedAt: at.iso
    }
    yield* Effect.orDie(store.insert(WalletCeremonies, ceremony))
    yield* saveSigner(signer, { ceremonyId: id }, at.iso)
    yield* schedule(ceremonyExpiryKind, at.ms + signingSettings.ceremonyTtlMs, { ceremonyId: id, linkVersion: 1 }, scope(ceremony))
    return ceremony
  })

const signerAwaitingApproval = (ceremony: StoredCeremony, iso: string) =>
  emit(ceremony, "wallet_signer.awaiting_admin_approval", {
    walletSignerId: ceremony.walletSignerId,
    customerId: ceremony.customerId,
    signerId: ceremony.walletSignerId,
    adminVerificationUrl: ceremony.adminVerificationUrl,
    expiresAt: ceremony.expiresAt,
    occurredAt: iso
  })

const approvalOf = (c: StoredCeremony) => ({
  walletSignerId: c.walletSignerId,
  ceremonyId: c.id,
  adminVerificationUrl: c.adminVerificationUrl,
  expiresAt: c.expiresAt
})

/** `POST /sandbox/v2/simulate/wallet-signers/{signerId}/passkeys`: an enrolled signer registers one more passkey. */
export const simulatePasskeyAddition = (caller: Caller, id: WalletSignerId) =>
  Effect.gen(function*() {
    const signer = yield* getSigner(caller, id)
    yield* liveClaim(signer)
    yield* move(signer, { type: "add_passkey" })
    const ceremony = yield* openCeremony(signer, "passkey_addition")
    yield* signerAwaitingApproval(ceremony, ceremony.createdAt)
    return approvalOf(ceremony)
  })

/** `POST /v2/customers/{customerId}/wallet-signers/{signerId}/reissue-admin-approval`: a fresh link for the waiting passkey. */
export const reissueAdminApproval = (caller: Caller, customerId: CustomerId, id: WalletSignerId) =>
  Effect.gen(function*() {
    const store = yield* Store
    yield* onboardedCustomer(caller, customerId)
    const signer = yield* getSigner(caller, id)
    if (signer.customerId !== customerId) return yield* apiError("NOT_FOUND", "The customer has no wallet signer with this id.")
    const { ceremony } = yield* move(signer, { type: "reissue_approval" })
    const at = yield* now
    const reissued: StoredCeremony = {
      ...ceremony!,
      adminVerificationUrl: yield* approvalUrl(ceremony!.id),
      expiresAt: toIso(at.ms + signingSettings.ceremonyTtlMs),
      linkVersion: ceremony!.linkVersion + 1,
      updatedAt: at.iso
    }
    yield* Effect.orDie(store.update(WalletCeremonies, reissued))
    yield* schedule(ceremonyExpiryKind, at.ms + signingSettings.ceremonyTtlMs, { ceremonyId: reissued.id, linkVersion: reissued.linkVersion }, scope(reissued))
    yield* signerAwaitingApproval(reissued, at.iso)
    return approvalOf(reissued)
  })

/** `POST /v2/signer/ceremonies`: an admin of the roster (by its session) starts a promotion, demotion or removal. */
export const startCeremony = (
  caller: Caller,
  admin: StoredSigner,
  type: "signer_promotion" | "signer_demotion" | "signer_removal",
  subjectId: WalletSignerId
): Effect.Effect<WalletCeremonyWire, ApiError, Store> =>
  Effect.gen(function*() {
    if (admin.role !== "admin") return yield* apiError("INSUFFICIENT_ROLE", "Only an admin of the roster starts a roster ceremony.")
    const subject = yield* getSigner(caller, subjectId)
    if (subject.claimId !== admin.claimId) return yield* apiError("NOT_FOUND", "The session's roster has no wallet signer with this id.")
    yield* liveClaim(subject)
    yield* move(subject, { type: "start_ceremony", ceremony: type })
    const ceremony = yield* openCeremony(subject, type)
    yield* emit(ceremony, "wallet_ceremony.awaiting_admin_approval", {
      ceremonyId: ceremony.id,
      customerId: ceremony.customerId,
      walletSignerId: ceremony.walletSignerId,
      type,
      adminVerificationUrl: ceremony.adminVerificationUrl,
      expiresAt: ceremony.expiresAt,
      occurredAt: ceremony.createdAt
    })
    return ceremonyToWire(ceremony)
  })

const ceremonyHead = (c: StoredCeremony) => ({ ceremonyId: c.id, customerId: c.customerId, walletSignerId: c.walletSignerId, type: c.type })

/** Applies a decided ceremony move's outcome: the signer, the ceremony, and their events in the table's order. */
const applyCeremonyMove = (signer: StoredSigner, ceremony: StoredCeremony, m: Move, approvedBy?: StoredSigner) =>
  Effect.gen(function*() {
    const store = yield* Store
    const { outcome } = yield* move(signer, m)
    const at = yield* now
    const next = outcome.next.signer
    const updatedSigner = yield* saveSigner(signer, next, at.iso)
    const closed: StoredCeremony = { ...ceremony, status: outcome.next.ceremony!.status, updatedAt: at.iso }
    yield* Effect.orDie(store.update(WalletCeremonies, closed))
    const head = { walletSignerId: signer.id, customerId: signer.customerId }
    for (const event of outcome.events) {
      switch (event) {
        case "wallet_ceremony.completed":
          yield* emit(closed, event, { ...ceremonyHead(closed), occurredAt: at.iso })
          break
        case "wallet_ceremony.failed":
          yield* emit(closed, event, { ...ceremonyHead(closed), status: closed.status, occurredAt: at.iso })
          break
        case "wallet_signer.enrollment_approved":
          yield* emit(signer, event, { ...head, approvedByWalletSignerId: approvedBy!.id, approvedAt: at.iso, occurredAt: at.iso })
          break
        case "wallet_signer.promoted":
        case "wallet_signer.demoted":
          yield* emit(signer, event, { ...head, role: next.role, credentialType: next.credentialType, passkeyCount: next.passkeyCount, occurredAt: at.iso })
          break
        case "wallet_signer.removed":
          yield* emit(signer, event, { ...head, reason: outcome.removalReason!, occurredAt: at.iso })
          break
        default:
          return yield* Effect.die(new Error(`a ceremony move emitted ${event}`))
      }
    }
    if (next.status === "removed" && signer.status !== "removed") yield* publish(SignerLeftPool, updatedSigner)
    return { signer: updatedSigner, ceremony: closed }
  })

/** `POST /sandbox/v2/simulate/wallet-ceremonies/{ceremonyId}/decision`: an admin (by its session) co-stamps or declines. */
export const decideCeremony = (
  caller: Caller,
  admin: StoredSigner,
  ceremonyId: string,
  outcome: "approved" | "declined"
): Effect.Effect<WalletCeremonyWire, ApiError, Store> =>
  Effect.gen(function*() {
    const store = yield* Store
    const ceremony = yield* store.getForUpdate(WalletCeremonies, ceremonyId)
    if (!inScope(ceremony, caller)) return yield* apiError("NOT_FOUND", "No wallet ceremony with this id exists in this organization and environment.")
    const signer = yield* getSigner(caller, ceremony.walletSignerId)
    // Only the signer's latest ceremony can be open; an older one closed before it started.
    if (ceremony.id !== signer.ceremonyId || ceremony.status !== "awaiting_admin_approval") {
      return yield* apiError("RESOURCE_TERMINAL", `The ceremony is already ${ceremony.status}.`)
    }
    if (admin.role !== "admin" || admin.claimId !== signer.claimId) {
      return yield* apiError("INSUFFICIENT_ROLE", "Only an admin of the signer's roster co-stamps its ceremonies.")
    }
    const decided = yield* applyCeremonyMove(signer, ceremony, { type: outcome === "approved" ? "approve_ceremony" : "decline_ceremony" }, admin)
    return ceremonyToWire(decided.ceremony)
  })

const expireOnTime: TimerHandler = (payload: { readonly ceremonyId: string; readonly linkVersion: number }) =>
  Effect.gen(function*() {
    const store = yield* Store
    const ceremony = yield* store.getForUpdate(WalletCeremonies, payload.ceremonyId)
    // A reissued link replaced this timer's, or the ceremony closed first.
    if (ceremony === undefined || ceremony.status !== "awaiting_admin_approval" || ceremony.linkVersion !== payload.linkVersion) return
    const signer = yield* store.getForUpdate(WalletSigners, ceremony.walletSignerId)
    if (signer === undefined) return
    yield* Effect.orDie(applyCeremonyMove(signer, ceremony, { type: "expire_ceremony" }))
  })

/** `POST /sandbox/v2/simulate/wallet-signers/{signerId}/remove`: ops remove a signer (reason ops_removed). */
export const simulateOpsRemoval = (caller: Caller, id: WalletSignerId): Effect.Effect<WalletSignerWire, ApiError, Store> =>
  Effect.gen(function*() {
    const store = yield* Store
    const signer = yield* getSigner(caller, id)
    const { outcome, ceremony } = yield* move(signer, { type: "ops_remove" })
    const at = yield* now
    const removed = yield* saveSigner(signer, outcome.next.signer, at.iso)
    if (has(outcome.events, "wallet_ceremony.failed") && ceremony !== undefined) {
      // The machine cancels the signer's open ceremony first (SignerMachine.ts, ops_remove).
      const cancelled: StoredCeremony = { ...ceremony, status: outcome.next.ceremony!.status, updatedAt: at.iso }
      yield* Effect.orDie(store.update(WalletCeremonies, cancelled))
      yield* emit(cancelled, "wallet_ceremony.failed", { ...ceremonyHead(cancelled), status: cancelled.status, occurredAt: at.iso })
    }
    yield* emit(signer, "wallet_signer.removed", { walletSignerId: signer.id, customerId: signer.customerId, reason: "ops_removed", occurredAt: at.iso })
    if (signer.status !== "removed") yield* publish(SignerLeftPool, removed)
    // A pending signer's removal may leave the rest of the roster enrolled.
    const claim = yield* getClaimForUpdate(signer.claimId)
    if (claim !== undefined) yield* resolveIfReady(claim)
    return signerToWire(removed)
  })

/** `POST /sandbox/v2/simulate/wallet-signers/{signerId}/sessions` checks the signer can log in. */
export const signerForLogin = (caller: Caller, id: WalletSignerId, authentication: "succeeded" | "failed") =>
  Effect.gen(function*() {
    const signer = yield* getSigner(caller, id)
    if (authentication === "failed") return yield* apiError("SIGNER_AUTH_FAILED", "The signer's passkey authentication failed.")
    const claim = yield* getClaimForUpdate(signer.claimId)
    if (claim === undefined || claim.status === "failed") return yield* apiError("SIGNER_AUTH_FAILED", "The signer's claim failed; its roster no longer signs.")
    if (!isActive(signer.status)) {
      return yield* apiError("SIGNER_AUTH_FAILED", signer.status === "removed" ? "The signer was removed from the roster." : "The signer has not enrolled a credential yet.")
    }
    return signer
  })

export const signingTimerHandlers: Record<string, TimerHandler> = {
  [provisioningKind]: provisionOnTime,
  [ceremonyExpiryKind]: expireOnTime
}
