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
  type SimulatedOriginChange,
  toIso,
  type WalletId,
  type WalletCeremony as WalletCeremonyWire,
  type WalletSigner as WalletSignerWire,
  type WalletSignerId
} from "@fos/contract"
import { Effect, Schema } from "effect"
import type * as Auth from "../tenancy/Auth.ts"
import * as Claims from "./Claims.ts"
import * as Domain from "../kernel/Domain.ts"
import * as IdGenerator from "../kernel/IdGenerator.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Roster from "./Roster.ts"
import * as Settings from "./Settings.ts"
import * as SignerMachine from "./SignerMachine.ts"
import * as Store from "../kernel/Store.ts"
import * as Timers from "../kernel/Timers.ts"
import * as Topics from "../kernel/Topics.ts"
import * as Wallets from "../money/Wallets.ts"

/** A ceremony's admin approval link runs out, `ceremonyTtlMs` after it was issued (a reissued link bumps `linkVersion`). */
export const expiryTimer = Timers.kind("signing.ceremony_expiry", Schema.Struct({ ceremonyId: Schema.String, linkVersion: Schema.Number }), "ceremonyId")

// --- the roster's outside actors ---------------------------------------------------------------------------------

/** A signer whose claim failed cannot act: the roster went with it. */
const liveClaim = (signer: Roster.StoredSigner) =>
  Effect.gen(function*() {
    const claim = yield* Roster.getClaimForUpdate(signer.claimId)
    if (claim === undefined || claim.status === "failed") return yield* Problem.apiError("RESOURCE_TERMINAL", "The signer's claim failed; start a new claim.")
    return claim
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
    const enrolled = yield* Roster.saveSigner(signer, outcome.next.signer, at.iso)
    yield* Roster.emitRosterEvent(signer, "wallet_signer.enrolled", { walletSignerId: signer.id, customerId: signer.customerId, passkeyCount: count, occurredAt: at.iso })
    yield* Claims.resolveIfReady(claim)
    return Roster.signerToWire(enrolled)
  })

const approvalUrl = (ceremonyId: string) =>
  Effect.map(IdGenerator.randomString("0123456789abcdef", 32), (secret) => `${Settings.signingSettings.signingOrigin}/approvals/${ceremonyId}/${secret}`)

/**
 * Stores a new ceremony waiting for an admin: a signer's (`walletSignerId`) or its roster's (`claimId`), with its
 * first row of history and its expiry timer.
 */
const insertCeremony = (
  owner: Pick<Roster.StoredClaim, "organizationId" | "environment" | "customerId">,
  about: Pick<Roster.StoredCeremony, "walletSignerId" | "claimId" | "origin" | "type">
) =>
  Effect.gen(function*() {
    const at = yield* Roster.now
    const id = yield* Roster.mintRosterId("cer")
    const ceremony: Roster.StoredCeremony = {
      organizationId: owner.organizationId,
      environment: owner.environment,
      customerId: owner.customerId,
      id,
      ...about,
      status: "awaiting_admin_approval",
      adminVerificationUrl: yield* approvalUrl(id),
      expiresAt: toIso(at.ms + Settings.signingSettings.ceremonyTtlMs),
      linkVersion: 1,
      createdAt: at.iso,
      updatedAt: at.iso
    }
    yield* Roster.addCeremony(ceremony)
    yield* Timers.schedule(expiryTimer, at.ms + Settings.signingSettings.ceremonyTtlMs, { ceremonyId: id, linkVersion: 1 }, Roster.scope(ceremony))
    return { ceremony, at }
  })

/** Opens a ceremony of `signer` waiting for an admin, with its expiry timer. */
const openCeremony = (signer: Roster.StoredSigner, type: SignerMachine.SignerCeremonyType) =>
  Effect.gen(function*() {
    const { at, ceremony } = yield* insertCeremony(signer, { walletSignerId: signer.id, type })
    yield* Roster.saveSigner(signer, { ceremonyId: ceremony.id }, at.iso)
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

const approvalOf = (signer: Roster.StoredSigner, c: Roster.StoredCeremony) => ({
  walletSignerId: signer.id,
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
    return approvalOf(signer, ceremony)
  })

/**
 * `POST /v2/customers/{customerId}/wallet-signers/{signerId}/reissue-admin-approval`: a fresh link for the waiting
 * passkey. Its refusals come in a fixed order (docs/signing.md, "The order of a roster write's refusals"); a request
 * that breaks two rules gets the first:
 * 1. the path's customer (404 CUSTOMER_NOT_FOUND, 422 CUSTOMER_NOT_ONBOARDED);
 * 2. the signer, of that customer (404 NOT_FOUND);
 * 3. its state, the table's (409 CONFLICT when no additional passkey waits, RESOURCE_TERMINAL for a removed signer).
 */
export const reissueAdminApproval = (caller: Auth.Caller, customerId: CustomerId, id: WalletSignerId) =>
  Effect.gen(function*() {
    yield* Wallets.onboardedCustomer(caller, customerId)
    const signer = yield* Roster.getSigner(caller, id)
    if (signer.customerId !== customerId) return yield* Problem.apiError("NOT_FOUND", "The customer has no wallet signer with this id.")
    const { ceremony } = yield* Roster.moveSigner(signer, { type: "reissue_approval" })
    const at = yield* Roster.now
    const reissued = yield* Roster.reissueLink(ceremony!, {
      adminVerificationUrl: yield* approvalUrl(ceremony!.id),
      expiresAt: toIso(at.ms + Settings.signingSettings.ceremonyTtlMs)
    }, at.iso)
    yield* Timers.schedule(expiryTimer, at.ms + Settings.signingSettings.ceremonyTtlMs, { ceremonyId: reissued.id, linkVersion: reissued.linkVersion }, Roster.scope(reissued))
    yield* signerAwaitingApproval(reissued, at.iso)
    return approvalOf(signer, reissued)
  })

/**
 * `POST /v2/signer/ceremonies`: an admin of the roster (by its session) starts a promotion, demotion or removal. Its
 * refusals come in a fixed order (docs/signing.md, "The order of a roster write's refusals"); a request that breaks
 * two rules gets the first:
 * 1. the session (401 SIGNER_SESSION_INVALID, the handler's `Sessions.signerOf`), then its role, known before
 *    anything is read (403 INSUFFICIENT_ROLE);
 * 2. the subject, a signer of the session's roster (404 NOT_FOUND);
 * 3. the subject's state: its claim failed (409 RESOURCE_TERMINAL; a session of a failed claim's roster is invalid
 *    already, so only a signer of another roster could reach it, and step 2 refuses that one), then the table's
 *    refusals (422 UNPROCESSABLE_ENTITY, 409 CONFLICT, 409 RESOURCE_TERMINAL).
 */
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
    const { outcome } = yield* Roster.moveSigner(signer, m)
    const at = yield* Roster.now
    const next = outcome.next.signer
    const updatedSigner = yield* Roster.saveSigner(signer, next, at.iso)
    const closed = yield* Roster.closeCeremony(ceremony, outcome.next.ceremony!.status, at.iso)
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
    if (ceremony.walletSignerId === undefined) return yield* decideOriginChange(admin, ceremony, outcome)
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

const expireOnTime = (payload: { readonly ceremonyId: string; readonly linkVersion: number }) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const ceremony = yield* store.getForUpdate(Roster.WalletCeremonies, payload.ceremonyId)
    // A reissued link replaced this timer's, or the ceremony closed first.
    if (ceremony === undefined || ceremony.status !== "awaiting_admin_approval" || ceremony.linkVersion !== payload.linkVersion) return
    if (ceremony.walletSignerId === undefined) {
      yield* Effect.orDie(applyOriginChangeMove(ceremony, "expire_ceremony"))
      return
    }
    const signer = yield* store.getForUpdate(Roster.WalletSigners, ceremony.walletSignerId)
    if (signer === undefined) return
    yield* Effect.orDie(applyCeremonyMove(signer, ceremony, { type: "expire_ceremony" }))
  })

// --- the roster-wide ceremony: webauthn_origin_change ------------------------------------------------------------

/**
 * The organization feature that offers webauthn_origin_change. The spec sends that ceremony type "only to
 * organizations using custom domains once enabled", and refuses what an organization's features do not include
 * with 403 FEATURE_NOT_ENABLED (Authentication rule 9: "feature is per account"); the operator sets features
 * (`fos orgs set --org ORG_ID --features custom_domains`, or the seed).
 */
export const customDomainsFeature = "custom_domains"

/** The resolved claim whose roster signs for `walletId`, with the roster's admins that can act. */
const rosterOfWallet = (caller: Auth.Caller, walletId: WalletId) =>
  Effect.gen(function*() {
    const wallet = yield* Wallets.get(caller, walletId)
    if (wallet.custody !== "non_custodial") {
      return yield* Problem.apiError("UNPROCESSABLE_ENTITY", "A custodial wallet has no roster of signers; only a non-custodial wallet's roster changes its WebAuthn origin.")
    }
    const store = yield* Store.Store
    // A customer's claims are few (one resolved, and any that failed before it); their wallets name the claim.
    const claims = yield* store.page(Roster.Claims, {
      order: "byCustomer",
      partition: `${Roster.scope(wallet)}/${wallet.customerId}`,
      descending: true,
      backward: false,
      from: undefined,
      limit: 100
    })
    const found = claims.find((c) => c.walletIds.includes(wallet.id))
    const claim = found === undefined ? undefined : yield* Roster.getClaimForUpdate(found.id)
    if (claim === undefined || claim.status !== "completed") return yield* Problem.apiError("UNPROCESSABLE_ENTITY", "The wallet's claim has not completed; its roster cannot change its origin yet.")
    return claim
  })

const originChangeState = (claim: Roster.StoredClaim) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const latest = claim.originChangeId === undefined ? undefined : yield* store.getForUpdate(Roster.WalletCeremonies, claim.originChangeId)
    const roster = yield* Roster.rosterOf(claim.id)
    const activeAdmins = roster.filter((s) => s.role === "admin" && SignerMachine.isActive(s.status)).length
    return { latest, state: { latest: latest?.status, activeAdmins } satisfies SignerMachine.OriginChangeState }
  })

/**
 * `POST /sandbox/v2/simulate/wallets/{walletId}/webauthn-origin-change`: the customer asks that the roster of a
 * non-custodial wallet sign for its custom domain. The ceremony waits for an admin of the roster
 * (wallet_ceremony.awaiting_admin_approval, no walletSignerId: it is the roster's) and expires like the others.
 */
export const startOriginChange = (caller: Auth.Caller, walletId: WalletId, body: SimulatedOriginChange): Effect.Effect<WalletCeremonyWire, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    if (!caller.organization.features.includes(customDomainsFeature)) {
      return yield* Problem.apiError("FEATURE_NOT_ENABLED", `A WebAuthn origin change needs the organization's ${customDomainsFeature} feature.`)
    }
    const claim = yield* rosterOfWallet(caller, walletId)
    const { state } = yield* originChangeState(claim)
    const outcome = SignerMachine.originChange(state, "start")
    if ("refused" in outcome) return yield* Problem.apiError(outcome.refused, outcome.reason)
    const { at, ceremony } = yield* insertCeremony(claim, { walletSignerId: undefined, claimId: claim.id, origin: body.origin, type: "webauthn_origin_change" })
    yield* Roster.recordOriginChange(claim, ceremony.id, at.iso)
    yield* Roster.emitRosterEvent(ceremony, "wallet_ceremony.awaiting_admin_approval", {
      ceremonyId: ceremony.id,
      customerId: ceremony.customerId,
      type: ceremony.type,
      adminVerificationUrl: ceremony.adminVerificationUrl,
      expiresAt: ceremony.expiresAt,
      occurredAt: at.iso
    })
    return Roster.ceremonyToWire(ceremony)
  })

/** Applies a decided or expired origin change: the ceremony, the roster's origin when it completed, the event. */
const applyOriginChangeMove = (ceremony: Roster.StoredCeremony, move: SignerMachine.OriginChangeMove) =>
  Effect.gen(function*() {
    const claim = yield* Roster.getClaimForUpdate(ceremony.claimId!)
    if (claim === undefined) return yield* Problem.apiError("RESOURCE_TERMINAL", "The ceremony's roster is gone.")
    const { latest, state } = yield* originChangeState(claim)
    // Only the roster's latest origin change can be open; an older one closed before it started.
    const outcome = SignerMachine.originChange(latest?.id === ceremony.id ? state : { ...state, latest: ceremony.status }, move)
    if ("refused" in outcome) return yield* Problem.apiError(outcome.refused, outcome.reason)
    const at = yield* Roster.now
    const closed = yield* Roster.closeCeremony(ceremony, outcome.next, at.iso)
    if (outcome.next === "completed") yield* Roster.adoptOrigin(claim, ceremony.origin, at.iso)
    const head = { ceremonyId: closed.id, customerId: closed.customerId, type: closed.type }
    for (const event of outcome.events) {
      if (event === "wallet_ceremony.completed") yield* Roster.emitRosterEvent(closed, event, { ...head, occurredAt: at.iso })
      else if (event === "wallet_ceremony.failed") yield* Roster.emitRosterEvent(closed, event, { ...head, status: closed.status, occurredAt: at.iso })
      else return yield* Effect.die(new Error(`an origin change decision emitted ${event}`))
    }
    return closed
  })

/** An admin of the roster (by its session) co-stamps or declines the roster's origin change. */
const decideOriginChange = (admin: Roster.StoredSigner, ceremony: Roster.StoredCeremony, outcome: "approved" | "declined") =>
  Effect.gen(function*() {
    if (ceremony.status !== "awaiting_admin_approval") return yield* Problem.apiError("RESOURCE_TERMINAL", `The ceremony is already ${ceremony.status}.`)
    if (admin.role !== "admin" || admin.claimId !== ceremony.claimId || !SignerMachine.isActive(admin.status)) {
      return yield* Problem.apiError("INSUFFICIENT_ROLE", "Only an admin of the wallet's roster co-stamps its origin change.")
    }
    const closed = yield* applyOriginChangeMove(ceremony, outcome === "approved" ? "approve_ceremony" : "decline_ceremony")
    return Roster.ceremonyToWire(closed)
  })

/** `POST /sandbox/v2/simulate/wallet-signers/{signerId}/remove`: ops remove a signer (reason ops_removed). */
export const simulateOpsRemoval = (caller: Auth.Caller, id: WalletSignerId): Effect.Effect<WalletSignerWire, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const signer = yield* Roster.getSigner(caller, id)
    const { outcome, ceremony } = yield* Roster.moveSigner(signer, { type: "ops_remove" })
    const at = yield* Roster.now
    const removed = yield* Roster.saveSigner(signer, outcome.next.signer, at.iso)
    if (Roster.hasSignerEvent(outcome.events, "wallet_ceremony.failed") && ceremony !== undefined) {
      // The machine cancels the signer's open ceremony first (SignerMachine.ts, ops_remove).
      const cancelled = yield* Roster.closeCeremony(ceremony, outcome.next.ceremony!.status, at.iso)
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

/** The expiry of each ceremony's admin approval link (the ceremonies' rows are Roster.ts's). */
export const domain = Domain.make({
  name: "signing/Ceremonies",
  timers: [Timers.handle(expiryTimer, expireOnTime, (id) => `expires wallet ceremony ${id} unless decided`)]
})
