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
import type * as Auth from "../tenancy/Auth.ts"
import * as Claims from "./Claims.ts"
import * as History from "../kernel/History.ts"
import * as IdGenerator from "../kernel/IdGenerator.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Roster from "./Roster.ts"
import * as Settings from "./Settings.ts"
import * as SignerMachine from "./SignerMachine.ts"
import * as Store from "../kernel/Store.ts"
import * as Timers from "../kernel/Timers.ts"
import * as Topics from "../kernel/Topics.ts"
import * as Wallets from "../money/Wallets.ts"

/** A ceremony's admin approval link runs out. */
export const expiryKind = "signing.ceremony_expiry"

// --- the roster's outside actors ---------------------------------------------------------------------------------

/** A signer whose claim failed cannot act: the roster went with it. */
const liveClaim = (signer: Roster.StoredSigner) =>
  Effect.gen(function*() {
    const claim = yield* Roster.getClaimForUpdate(signer.claimId)
    if (claim === undefined || claim.status === "failed") return yield* Problem.apiError("RESOURCE_TERMINAL", "The signer's claim failed; start a new claim.")
    return claim
  })

/** Stores a move of `signer`, with its change of status in the sandbox's history (kernel/History.ts). */
const saveSigner = (signer: Roster.StoredSigner, next: Partial<Roster.StoredSigner>, iso: string) =>
  Effect.gen(function*() {
    const saved: Roster.StoredSigner = { ...signer, ...next, updatedAt: iso }
    yield* Effect.orDie((yield* Store.Store).update(Roster.WalletSigners, saved))
    yield* History.recordState(signer.status, saved)
    return saved
  })

/** `POST /sandbox/v2/simulate/wallet-signers/{signerId}/enroll`: the end user (or machine) enrolls its credential. */
export const simulateEnrollment = (caller: Auth.Caller, id: WalletSignerId, passkeyCount: number | undefined): Effect.Effect<WalletSignerWire, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const signer = yield* Roster.getSigner(caller, id)
    const claim = yield* liveClaim(signer)
    const at = yield* Roster.now
    if (signer.status === "pending_activation" && at.iso > signer.invitationExpiresAt) {
      return yield* Problem.apiError("UNPROCESSABLE_ENTITY", "The signer's invitation expired; it can no longer enroll.")
    }
    const count = passkeyCount ?? (signer.credentialType === "api_key" ? 0 : signer.role === "admin" ? 2 : 1)
    const { outcome } = yield* Roster.moveSigner(signer, { type: "enroll", passkeyCount: count })
    const enrolled = yield* saveSigner(signer, outcome.next.signer, at.iso)
    yield* Roster.emitRosterEvent(signer, "wallet_signer.enrolled", { walletSignerId: signer.id, customerId: signer.customerId, passkeyCount: count, occurredAt: at.iso })
    yield* Claims.resolveIfReady(claim)
    return Roster.signerToWire(enrolled)
  })

const approvalUrl = (ceremonyId: string) =>
  Effect.map(IdGenerator.randomString("0123456789abcdef", 32), (secret) => `${Settings.signingSettings.signingOrigin}/approvals/${ceremonyId}/${secret}`)

/** Opens a ceremony of `signer` waiting for an admin, with its expiry timer. */
const openCeremony = (signer: Roster.StoredSigner, type: SignerMachine.CeremonyType) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const at = yield* Roster.now
    const id = yield* Roster.mintRosterId("cer")
    const ceremony: Roster.StoredCeremony = {
      organizationId: signer.organizationId,
      environment: signer.environment,
      customerId: signer.customerId,
      id,
      walletSignerId: signer.id,
      type,
      status: "awaiting_admin_approval",
      adminVerificationUrl: yield* approvalUrl(id),
      expiresAt: toIso(at.ms + Settings.signingSettings.ceremonyTtlMs),
      linkVersion: 1,
      createdAt: at.iso,
      updatedAt: at.iso
    }
    yield* Effect.orDie(store.insert(Roster.WalletCeremonies, ceremony))
    yield* History.recordState(undefined, ceremony)
    yield* saveSigner(signer, { ceremonyId: id }, at.iso)
    yield* Timers.schedule(expiryKind, at.ms + Settings.signingSettings.ceremonyTtlMs, { ceremonyId: id, linkVersion: 1 }, Roster.scope(ceremony))
    return ceremony
  })

const signerAwaitingApproval = (ceremony: Roster.StoredCeremony, iso: string) =>
  Roster.emitRosterEvent(ceremony, "wallet_signer.awaiting_admin_approval", {
    walletSignerId: ceremony.walletSignerId,
    customerId: ceremony.customerId,
    signerId: ceremony.walletSignerId,
    adminVerificationUrl: ceremony.adminVerificationUrl,
    expiresAt: ceremony.expiresAt,
    occurredAt: iso
  })

const approvalOf = (c: Roster.StoredCeremony) => ({
  walletSignerId: c.walletSignerId,
  ceremonyId: c.id,
  adminVerificationUrl: c.adminVerificationUrl,
  expiresAt: c.expiresAt
})

/** `POST /sandbox/v2/simulate/wallet-signers/{signerId}/passkeys`: an enrolled signer registers one more passkey. */
export const simulatePasskeyAddition = (caller: Auth.Caller, id: WalletSignerId) =>
  Effect.gen(function*() {
    const signer = yield* Roster.getSigner(caller, id)
    yield* liveClaim(signer)
    yield* Roster.moveSigner(signer, { type: "add_passkey" })
    const ceremony = yield* openCeremony(signer, "passkey_addition")
    yield* signerAwaitingApproval(ceremony, ceremony.createdAt)
    return approvalOf(ceremony)
  })

/** `POST /v2/customers/{customerId}/wallet-signers/{signerId}/reissue-admin-approval`: a fresh link for the waiting passkey. */
export const reissueAdminApproval = (caller: Auth.Caller, customerId: CustomerId, id: WalletSignerId) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    yield* Wallets.onboardedCustomer(caller, customerId)
    const signer = yield* Roster.getSigner(caller, id)
    if (signer.customerId !== customerId) return yield* Problem.apiError("NOT_FOUND", "The customer has no wallet signer with this id.")
    const { ceremony } = yield* Roster.moveSigner(signer, { type: "reissue_approval" })
    const at = yield* Roster.now
    const reissued: Roster.StoredCeremony = {
      ...ceremony!,
      adminVerificationUrl: yield* approvalUrl(ceremony!.id),
      expiresAt: toIso(at.ms + Settings.signingSettings.ceremonyTtlMs),
      linkVersion: ceremony!.linkVersion + 1,
      updatedAt: at.iso
    }
    yield* Effect.orDie(store.update(Roster.WalletCeremonies, reissued))
    yield* Timers.schedule(expiryKind, at.ms + Settings.signingSettings.ceremonyTtlMs, { ceremonyId: reissued.id, linkVersion: reissued.linkVersion }, Roster.scope(reissued))
    yield* signerAwaitingApproval(reissued, at.iso)
    return approvalOf(reissued)
  })

/** `POST /v2/signer/ceremonies`: an admin of the roster (by its session) starts a promotion, demotion or removal. */
export const start = (
  caller: Auth.Caller,
  admin: Roster.StoredSigner,
  type: "signer_promotion" | "signer_demotion" | "signer_removal",
  subjectId: WalletSignerId
): Effect.Effect<WalletCeremonyWire, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    if (admin.role !== "admin") return yield* Problem.apiError("INSUFFICIENT_ROLE", "Only an admin of the roster starts a roster ceremony.")
    const subject = yield* Roster.getSigner(caller, subjectId)
    if (subject.claimId !== admin.claimId) return yield* Problem.apiError("NOT_FOUND", "The session's roster has no wallet signer with this id.")
    yield* liveClaim(subject)
    yield* Roster.moveSigner(subject, { type: "start_ceremony", ceremony: type })
    const ceremony = yield* openCeremony(subject, type)
    yield* Roster.emitRosterEvent(ceremony, "wallet_ceremony.awaiting_admin_approval", {
      ceremonyId: ceremony.id,
      customerId: ceremony.customerId,
      walletSignerId: ceremony.walletSignerId,
      type,
      adminVerificationUrl: ceremony.adminVerificationUrl,
      expiresAt: ceremony.expiresAt,
      occurredAt: ceremony.createdAt
    })
    return Roster.ceremonyToWire(ceremony)
  })

const ceremonyHead = (c: Roster.StoredCeremony) => ({ ceremonyId: c.id, customerId: c.customerId, walletSignerId: c.walletSignerId, type: c.type })

/** Applies a decided ceremony move's outcome: the signer, the ceremony, and their events in the table's order. */
const applyCeremonyMove = (signer: Roster.StoredSigner, ceremony: Roster.StoredCeremony, m: SignerMachine.Move, approvedBy?: Roster.StoredSigner) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const { outcome } = yield* Roster.moveSigner(signer, m)
    const at = yield* Roster.now
    const next = outcome.next.signer
    const updatedSigner = yield* saveSigner(signer, next, at.iso)
    const closed: Roster.StoredCeremony = { ...ceremony, status: outcome.next.ceremony!.status, updatedAt: at.iso }
    yield* Effect.orDie(store.update(Roster.WalletCeremonies, closed))
    yield* History.recordState(ceremony.status, closed)
    const head = { walletSignerId: signer.id, customerId: signer.customerId }
    for (const event of outcome.events) {
      switch (event) {
        case "wallet_ceremony.completed":
          yield* Roster.emitRosterEvent(closed, event, { ...ceremonyHead(closed), occurredAt: at.iso })
          break
        case "wallet_ceremony.failed":
          yield* Roster.emitRosterEvent(closed, event, { ...ceremonyHead(closed), status: closed.status, occurredAt: at.iso })
          break
        case "wallet_signer.enrollment_approved":
          yield* Roster.emitRosterEvent(signer, event, { ...head, approvedByWalletSignerId: approvedBy!.id, approvedAt: at.iso, occurredAt: at.iso })
          break
        case "wallet_signer.promoted":
        case "wallet_signer.demoted":
          yield* Roster.emitRosterEvent(signer, event, { ...head, role: next.role, credentialType: next.credentialType, passkeyCount: next.passkeyCount, occurredAt: at.iso })
          break
        case "wallet_signer.removed":
          yield* Roster.emitRosterEvent(signer, event, { ...head, reason: outcome.removalReason!, occurredAt: at.iso })
          break
        default:
          return yield* Effect.die(new Error(`a ceremony move emitted ${event}`))
      }
    }
    if (next.status === "removed" && signer.status !== "removed") yield* Topics.publish(Roster.SignerLeftPool, updatedSigner)
    return { signer: updatedSigner, ceremony: closed }
  })

/** `POST /sandbox/v2/simulate/wallet-ceremonies/{ceremonyId}/decision`: an admin (by its session) co-stamps or declines. */
export const decide = (
  caller: Auth.Caller,
  admin: Roster.StoredSigner,
  ceremonyId: string,
  outcome: "approved" | "declined"
): Effect.Effect<WalletCeremonyWire, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const ceremony = yield* store.getForUpdate(Roster.WalletCeremonies, ceremonyId)
    if (!Roster.inCallerScope(ceremony, caller)) return yield* Problem.apiError("NOT_FOUND", "No wallet ceremony with this id exists in this organization and environment.")
    const signer = yield* Roster.getSigner(caller, ceremony.walletSignerId)
    // Only the signer's latest ceremony can be open; an older one closed before it started.
    if (ceremony.id !== signer.ceremonyId || ceremony.status !== "awaiting_admin_approval") {
      return yield* Problem.apiError("RESOURCE_TERMINAL", `The ceremony is already ${ceremony.status}.`)
    }
    if (admin.role !== "admin" || admin.claimId !== signer.claimId) {
      return yield* Problem.apiError("INSUFFICIENT_ROLE", "Only an admin of the signer's roster co-stamps its ceremonies.")
    }
    const decided = yield* applyCeremonyMove(signer, ceremony, { type: outcome === "approved" ? "approve_ceremony" : "decline_ceremony" }, admin)
    return Roster.ceremonyToWire(decided.ceremony)
  })

const expireOnTime: Timers.TimerHandler = (payload: { readonly ceremonyId: string; readonly linkVersion: number }) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const ceremony = yield* store.getForUpdate(Roster.WalletCeremonies, payload.ceremonyId)
    // A reissued link replaced this timer's, or the ceremony closed first.
    if (ceremony === undefined || ceremony.status !== "awaiting_admin_approval" || ceremony.linkVersion !== payload.linkVersion) return
    const signer = yield* store.getForUpdate(Roster.WalletSigners, ceremony.walletSignerId)
    if (signer === undefined) return
    yield* Effect.orDie(applyCeremonyMove(signer, ceremony, { type: "expire_ceremony" }))
  })

/** `POST /sandbox/v2/simulate/wallet-signers/{signerId}/remove`: ops remove a signer (reason ops_removed). */
export const simulateOpsRemoval = (caller: Auth.Caller, id: WalletSignerId): Effect.Effect<WalletSignerWire, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const signer = yield* Roster.getSigner(caller, id)
    const { outcome, ceremony } = yield* Roster.moveSigner(signer, { type: "ops_remove" })
    const at = yield* Roster.now
    const removed = yield* saveSigner(signer, outcome.next.signer, at.iso)
    if (Roster.hasSignerEvent(outcome.events, "wallet_ceremony.failed") && ceremony !== undefined) {
      // The machine cancels the signer's open ceremony first (SignerMachine.ts, ops_remove).
      const cancelled: Roster.StoredCeremony = { ...ceremony, status: outcome.next.ceremony!.status, updatedAt: at.iso }
      yield* Effect.orDie(store.update(Roster.WalletCeremonies, cancelled))
      yield* History.recordState(ceremony.status, cancelled)
      yield* Roster.emitRosterEvent(cancelled, "wallet_ceremony.failed", { ...ceremonyHead(cancelled), status: cancelled.status, occurredAt: at.iso })
    }
    yield* Roster.emitRosterEvent(signer, "wallet_signer.removed", { walletSignerId: signer.id, customerId: signer.customerId, reason: "ops_removed", occurredAt: at.iso })
    if (signer.status !== "removed") yield* Topics.publish(Roster.SignerLeftPool, removed)
    // A pending signer's removal may leave the rest of the roster enrolled.
    const claim = yield* Roster.getClaimForUpdate(signer.claimId)
    if (claim !== undefined) yield* Claims.resolveIfReady(claim)
    return Roster.signerToWire(removed)
  })

/** `POST /sandbox/v2/simulate/wallet-signers/{signerId}/sessions` checks the signer can log in. */
export const signerForLogin = (caller: Auth.Caller, id: WalletSignerId, authentication: "succeeded" | "failed") =>
  Effect.gen(function*() {
    const signer = yield* Roster.getSigner(caller, id)
    if (authentication === "failed") return yield* Problem.apiError("SIGNER_AUTH_FAILED", "The signer's passkey authentication failed.")
    const claim = yield* Roster.getClaimForUpdate(signer.claimId)
    if (claim === undefined || claim.status === "failed") return yield* Problem.apiError("SIGNER_AUTH_FAILED", "The signer's claim failed; its roster no longer signs.")
    if (!SignerMachine.isActive(signer.status)) {
      return yield* Problem.apiError("SIGNER_AUTH_FAILED", signer.status === "removed" ? "The signer was removed from the roster." : "The signer has not enrolled a credential yet.")
    }
    return signer
  })

export const timerHandlers: Record<string, Timers.TimerHandler> = {
  [expiryKind]: expireOnTime
}
