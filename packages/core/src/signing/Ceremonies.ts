/**
 * The roster's outside actors (spec, "Wallet signers and ceremonies"): an end user enrolling a credential or adding a
 * passkey, an admin approving or refusing a ceremony (promote, demote, remove, a credential), a ceremony's approval
 * link expiring or being reissued, ops removing a signer, and a signer logging in. Every move is SignerMachine.ts's
 * (`moveSigner`); the rows are Roster.ts's.
 *
 * | State | Trigger | Next | Also |
 * |---|---|---|---|
 * | pending_activation | signer completes credential enrollment | enrolled | wallet_signer.enrolled (passkeyCount) |
 * | enrolled | admin co-stamp approves a credential ceremony | approved | wallet_signer.enrollment_approved |
 * | roster | promote ceremony | admin | wallet_signer.promoted |
 * | roster | demote ceremony | signer | wallet_signer.demoted |
 * | roster | removal | removed | wallet_signer.removed |
 * | ceremony pending | admin approval needed | awaiting admin | wallet_ceremony.awaiting_admin_approval; expires at expiresAt and auto-fails |
 * | ceremony | completes | completed | wallet_ceremony.completed |
 * | ceremony | expires, fails, or is cancelled | failed or cancelled | wallet_ceremony.failed |
 */
import {
  type CustomerId,
  toIso,
  type WalletCeremony as WalletCeremonyWire,
  type WalletSigner as WalletSignerWire,
  type WalletSignerId
} from "@fos/contract"
import { Effect } from "effect"
import { randomString } from "../kernel/IdGenerator.ts"
import { apiError, type ApiError } from "../kernel/Problem.ts"
import { Store } from "../kernel/Store.ts"
import { schedule, type TimerHandler } from "../kernel/Timers.ts"
import { publish } from "../kernel/Topics.ts"
import { onboardedCustomer } from "../money/Wallets.ts"
import type { Caller } from "../tenancy/Auth.ts"
import { resolveIfReady } from "./Claims.ts"
import { signingSettings } from "./Settings.ts"
import { type CeremonyType, isActive, type Move } from "./SignerMachine.ts"
import {
  type StoredCeremony,
  type StoredSigner,
  ceremonyToWire,
  emitRosterEvent,
  getClaimForUpdate,
  getSigner,
  hasSignerEvent,
  inCallerScope,
  mintRosterId,
  moveSigner,
  rosterNow,
  rosterScope,
  SignerLeftPool,
  signerToWire,
  WalletCeremonies,
  WalletSigners
} from "./Roster.ts"

/** A ceremony's admin approval link runs out. */
export const ceremonyExpiryKind = "signing.ceremony_expiry"

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
    const at = yield* rosterNow
    if (signer.status === "pending_activation" && at.iso > signer.invitationExpiresAt) {
      return yield* apiError("UNPROCESSABLE_ENTITY", "The signer's invitation expired; it can no longer enroll.")
    }
    const count = passkeyCount ?? (signer.credentialType === "api_key" ? 0 : signer.role === "admin" ? 2 : 1)
    const { outcome } = yield* moveSigner(signer, { type: "enroll", passkeyCount: count })
    const enrolled = yield* saveSigner(signer, outcome.next.signer, at.iso)
    yield* emitRosterEvent(signer, "wallet_signer.enrolled", { walletSignerId: signer.id, customerId: signer.customerId, passkeyCount: count, occurredAt: at.iso })
    yield* resolveIfReady(claim)
    return signerToWire(enrolled)
  })

const approvalUrl = (ceremonyId: string) =>
  Effect.map(randomString("0123456789abcdef", 32), (secret) => `${signingSettings.signingOrigin}/approvals/${ceremonyId}/${secret}`)

/** Opens a ceremony of `signer` waiting for an admin, with its expiry timer. */
const openCeremony = (signer: StoredSigner, type: CeremonyType) =>
  Effect.gen(function*() {
    const store = yield* Store
    const at = yield* rosterNow
    const id = yield* mintRosterId("cer")
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
    yield* schedule(ceremonyExpiryKind, at.ms + signingSettings.ceremonyTtlMs, { ceremonyId: id, linkVersion: 1 }, rosterScope(ceremony))
    return ceremony
  })

const signerAwaitingApproval = (ceremony: StoredCeremony, iso: string) =>
  emitRosterEvent(ceremony, "wallet_signer.awaiting_admin_approval", {
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
    yield* moveSigner(signer, { type: "add_passkey" })
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
    const { ceremony } = yield* moveSigner(signer, { type: "reissue_approval" })
    const at = yield* rosterNow
    const reissued: StoredCeremony = {
      ...ceremony!,
      adminVerificationUrl: yield* approvalUrl(ceremony!.id),
      expiresAt: toIso(at.ms + signingSettings.ceremonyTtlMs),
      linkVersion: ceremony!.linkVersion + 1,
      updatedAt: at.iso
    }
    yield* Effect.orDie(store.update(WalletCeremonies, reissued))
    yield* schedule(ceremonyExpiryKind, at.ms + signingSettings.ceremonyTtlMs, { ceremonyId: reissued.id, linkVersion: reissued.linkVersion }, rosterScope(reissued))
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
    yield* moveSigner(subject, { type: "start_ceremony", ceremony: type })
    const ceremony = yield* openCeremony(subject, type)
    yield* emitRosterEvent(ceremony, "wallet_ceremony.awaiting_admin_approval", {
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
    const { outcome } = yield* moveSigner(signer, m)
    const at = yield* rosterNow
    const next = outcome.next.signer
    const updatedSigner = yield* saveSigner(signer, next, at.iso)
    const closed: StoredCeremony = { ...ceremony, status: outcome.next.ceremony!.status, updatedAt: at.iso }
    yield* Effect.orDie(store.update(WalletCeremonies, closed))
    const head = { walletSignerId: signer.id, customerId: signer.customerId }
    for (const event of outcome.events) {
      switch (event) {
        case "wallet_ceremony.completed":
          yield* emitRosterEvent(closed, event, { ...ceremonyHead(closed), occurredAt: at.iso })
          break
        case "wallet_ceremony.failed":
          yield* emitRosterEvent(closed, event, { ...ceremonyHead(closed), status: closed.status, occurredAt: at.iso })
          break
        case "wallet_signer.enrollment_approved":
          yield* emitRosterEvent(signer, event, { ...head, approvedByWalletSignerId: approvedBy!.id, approvedAt: at.iso, occurredAt: at.iso })
          break
        case "wallet_signer.promoted":
        case "wallet_signer.demoted":
          yield* emitRosterEvent(signer, event, { ...head, role: next.role, credentialType: next.credentialType, passkeyCount: next.passkeyCount, occurredAt: at.iso })
          break
        case "wallet_signer.removed":
          yield* emitRosterEvent(signer, event, { ...head, reason: outcome.removalReason!, occurredAt: at.iso })
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
    if (!inCallerScope(ceremony, caller)) return yield* apiError("NOT_FOUND", "No wallet ceremony with this id exists in this organization and environment.")
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
    const { outcome, ceremony } = yield* moveSigner(signer, { type: "ops_remove" })
    const at = yield* rosterNow
    const removed = yield* saveSigner(signer, outcome.next.signer, at.iso)
    if (hasSignerEvent(outcome.events, "wallet_ceremony.failed") && ceremony !== undefined) {
      // The machine cancels the signer's open ceremony first (SignerMachine.ts, ops_remove).
      const cancelled: StoredCeremony = { ...ceremony, status: outcome.next.ceremony!.status, updatedAt: at.iso }
      yield* Effect.orDie(store.update(WalletCeremonies, cancelled))
      yield* emitRosterEvent(cancelled, "wallet_ceremony.failed", { ...ceremonyHead(cancelled), status: cancelled.status, occurredAt: at.iso })
    }
    yield* emitRosterEvent(signer, "wallet_signer.removed", { walletSignerId: signer.id, customerId: signer.customerId, reason: "ops_removed", occurredAt: at.iso })
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

export const ceremonyTimerHandlers: Record<string, TimerHandler> = {
  [ceremonyExpiryKind]: expireOnTime
}
