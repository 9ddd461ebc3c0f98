/**
 * The spec's signer and ceremony table as one pure function (States and transitions, Wallet signers and ceremonies):
 *
 * | State | Trigger | Next | Also |
 * |---|---|---|---|
 * | (new) | invite | pending_activation | wallet_signer.added and wallet_signer.invited |
 * | pending_activation | signer completes credential enrollment | enrolled | wallet_signer.enrolled (passkeyCount) |
 * | enrolled | admin co-stamp approves a credential ceremony | approved | wallet_signer.enrollment_approved |
 * | roster | promote ceremony | admin | wallet_signer.promoted |
 * | roster | demote ceremony | signer | wallet_signer.demoted |
 * | roster | removal | removed | wallet_signer.removed |
 * | ceremony pending | admin approval needed | awaiting admin | wallet_ceremony.awaiting_admin_approval; expires at expiresAt and auto-fails |
 * | ceremony | completes | completed | wallet_ceremony.completed |
 * | ceremony | expires, fails, or is cancelled | failed or cancelled | wallet_ceremony.failed |
 *
 * The state is one signer and its latest ceremony (a signer has at most one open at a time), with what the rules
 * need to know of the rest of the roster: how many other admins can act. What fos chose where the spec says
 * "not shown" (docs/signing.md):
 * - The credential ceremony an admin co-stamps is a passkey addition: an enrolled signer's extra passkey waits for
 *   an admin (wallet_signer.awaiting_admin_approval carries its adminVerificationUrl; reissuing the link re-fires
 *   it), and the approval makes the signer approved with one more passkey.
 * - Promotion, demotion and removal by the customer are ceremonies an admin co-stamps
 *   (wallet_ceremony.awaiting_admin_approval). "A passkey admin needs at least 2 passkeys; a machine (api_key)
 *   admin needs none": a passkey signer with fewer is not promoted, and a passkey admin of a claim's roster
 *   enrolls with at least 2. The roster always keeps an admin that can act: demoting or removing the last one is
 *   refused (ops removal excepted).
 * - An admin's decline cancels the ceremony (wallet_ceremony.failed, status cancelled); the clock's expiry fails it
 *   (status failed). Ops removing a signer cancels its open ceremony first.
 *
 * Refusals: a move on a removed signer, or a decision on a ceremony already closed, is RESOURCE_TERMINAL; a move the
 * state does not allow is CONFLICT; a move the roster rules forbid (passkey counts, credential kinds) is
 * UNPROCESSABLE_ENTITY.
 */

export const SignerStatuses = ["pending_activation", "enrolled", "approved", "removed"] as const
export type SignerStatus = typeof SignerStatuses[number]
export type SignerRole = "signer" | "admin"
export type CredentialType = "passkey" | "api_key"
export type RemovalReason = "customer_removed" | "ops_removed"

/**
 * The ceremonies fos runs: four about one signer, and webauthn_origin_change about the whole roster (its passkeys
 * move to the organization's custom domain; `originChange` below), offered only to an organization with the
 * custom_domains feature (Ceremonies.ts).
 */
export type SignerCeremonyType = "passkey_addition" | "signer_promotion" | "signer_demotion" | "signer_removal"
export type CeremonyStatus = "awaiting_admin_approval" | "completed" | "failed" | "cancelled"

/** The most passkeys a signer holds; a bound like every other. */
export const maxPasskeys = 10

/** The passkeys a passkey admin needs (spec: at least 2). */
export const adminPasskeys = 2

export interface SignerState {
  readonly status: SignerStatus
  readonly role: SignerRole
  readonly credentialType: CredentialType
  readonly passkeyCount: number
}

export interface CeremonyState {
  readonly type: SignerCeremonyType
  readonly status: CeremonyStatus
}

export interface RosterState {
  /** Undefined before the invite. */
  readonly signer: SignerState | undefined
  /** The signer's latest ceremony, open or closed. */
  readonly ceremony: CeremonyState | undefined
  /** Admins of the roster besides this signer that can act (enrolled or approved). */
  readonly otherAdmins: number
}

export type Move =
  | { readonly type: "invite"; readonly role: SignerRole; readonly credentialType: CredentialType }
  | { readonly type: "enroll"; readonly passkeyCount: number }
  | { readonly type: "add_passkey" }
  | { readonly type: "start_ceremony"; readonly ceremony: "signer_promotion" | "signer_demotion" | "signer_removal" }
  | { readonly type: "approve_ceremony" }
  | { readonly type: "decline_ceremony" }
  | { readonly type: "expire_ceremony" }
  | { readonly type: "reissue_approval" }
  | { readonly type: "ops_remove" }

export type SignerEvent =
  | "wallet_signer.added"
  | "wallet_signer.invited"
  | "wallet_signer.enrolled"
  | "wallet_signer.enrollment_approved"
  | "wallet_signer.awaiting_admin_approval"
  | "wallet_signer.promoted"
  | "wallet_signer.demoted"
  | "wallet_signer.removed"
  | "wallet_ceremony.awaiting_admin_approval"
  | "wallet_ceremony.completed"
  | "wallet_ceremony.failed"

export type Refusal = "CONFLICT" | "UNPROCESSABLE_ENTITY" | "RESOURCE_TERMINAL"

export type Outcome =
  | {
    readonly next: { readonly signer: SignerState; readonly ceremony: CeremonyState | undefined }
    readonly events: ReadonlyArray<SignerEvent>
    /** Set when the move removed the signer. */
    readonly removalReason?: RemovalReason
  }
  | { readonly refused: Refusal; readonly reason: string }

const refuse = (refused: Refusal, reason: string): Outcome => ({ refused, reason })

/** Whether the signer holds a credential and so can act (sign, co-stamp, log in). */
export const isActive = (status: SignerStatus): boolean => status === "enrolled" || status === "approved"

/** The statuses a ceremony ends in: a decision on it is RESOURCE_TERMINAL. */
export const ceremonyEndedStatuses: ReadonlySet<CeremonyStatus> = new Set(["completed", "failed", "cancelled"])

const open = (ceremony: CeremonyState | undefined): boolean => ceremony !== undefined && !ceremonyEndedStatuses.has(ceremony.status)

export const transition = (state: RosterState, move: Move): Outcome => {
  const { signer, ceremony } = state
  if (move.type === "invite") {
    if (signer !== undefined) return refuse("CONFLICT", "The signer is already on the roster.")
    return {
      next: { signer: { status: "pending_activation", role: move.role, credentialType: move.credentialType, passkeyCount: 0 }, ceremony: undefined },
      events: ["wallet_signer.added", "wallet_signer.invited"]
    }
  }
  if (signer === undefined) return refuse("CONFLICT", "The signer is not on the roster.")
  if (signer.status === "removed") return refuse("RESOURCE_TERMINAL", "The signer was removed from the roster.")
  const stay = (events: ReadonlyArray<SignerEvent>, next: Partial<SignerState> = {}, nextCeremony: CeremonyState | undefined = ceremony): Outcome => ({
    next: { signer: { ...signer, ...next }, ceremony: nextCeremony },
    events
  })
  const lastAdmin = signer.role === "admin" && state.otherAdmins === 0
  switch (move.type) {
    case "enroll": {
      if (signer.status !== "pending_activation") return refuse("CONFLICT", "The signer has already enrolled its credential.")
      if (signer.credentialType === "api_key") {
        if (move.passkeyCount !== 0) return refuse("UNPROCESSABLE_ENTITY", "A machine (api_key) signer enrolls its key, not passkeys.")
      } else {
        const least = signer.role === "admin" ? adminPasskeys : 1
        if (move.passkeyCount < least || move.passkeyCount > maxPasskeys) {
          return refuse("UNPROCESSABLE_ENTITY", `A passkey ${signer.role} enrolls ${least} to ${maxPasskeys} passkeys.`)
        }
      }
      return stay(["wallet_signer.enrolled"], { status: "enrolled", passkeyCount: move.passkeyCount })
    }
    case "add_passkey":
      if (signer.credentialType === "api_key") return refuse("UNPROCESSABLE_ENTITY", "A machine (api_key) signer holds no passkeys.")
      if (!isActive(signer.status)) return refuse("CONFLICT", "The signer has not enrolled yet; enrollment registers its first passkeys.")
      if (open(ceremony)) return refuse("CONFLICT", "The signer already has a ceremony waiting for an admin.")
      if (signer.passkeyCount >= maxPasskeys) return refuse("UNPROCESSABLE_ENTITY", `A signer holds at most ${maxPasskeys} passkeys.`)
      return stay(["wallet_signer.awaiting_admin_approval"], {}, { type: "passkey_addition", status: "awaiting_admin_approval" })
    case "start_ceremony": {
      if (!isActive(signer.status)) return refuse("CONFLICT", "The signer has not enrolled yet.")
      if (open(ceremony)) return refuse("CONFLICT", "The signer already has a ceremony waiting for an admin.")
      switch (move.ceremony) {
        case "signer_promotion":
          if (signer.role === "admin") return refuse("CONFLICT", "The signer is already an admin.")
          if (signer.credentialType === "passkey" && signer.passkeyCount < adminPasskeys) {
            return refuse("UNPROCESSABLE_ENTITY", `A passkey admin needs at least ${adminPasskeys} passkeys; add one first.`)
          }
          break
        case "signer_demotion":
          if (signer.role !== "admin") return refuse("CONFLICT", "The signer is not an admin.")
          if (lastAdmin) return refuse("CONFLICT", "The roster's last admin cannot be demoted.")
          break
        case "signer_removal":
          if (lastAdmin) return refuse("CONFLICT", "The roster's last admin cannot be removed.")
          break
      }
      return stay(["wallet_ceremony.awaiting_admin_approval"], {}, { type: move.ceremony, status: "awaiting_admin_approval" })
    }
    case "approve_ceremony": {
      if (ceremony === undefined) return refuse("CONFLICT", "The signer has no ceremony waiting for an admin.")
      if (!open(ceremony)) return refuse("RESOURCE_TERMINAL", `The ceremony is already ${ceremony.status}.`)
      const done: CeremonyState = { ...ceremony, status: "completed" }
      switch (ceremony.type) {
        case "passkey_addition":
          return stay(["wallet_ceremony.completed", "wallet_signer.enrollment_approved"], { status: "approved", passkeyCount: signer.passkeyCount + 1 }, done)
        case "signer_promotion":
          return stay(["wallet_ceremony.completed", "wallet_signer.promoted"], { role: "admin" }, done)
        case "signer_demotion":
          // Another admin may have left the roster since the ceremony started.
          if (lastAdmin) return refuse("CONFLICT", "The roster's last admin cannot be demoted.")
          return stay(["wallet_ceremony.completed", "wallet_signer.demoted"], { role: "signer" }, done)
        case "signer_removal":
          if (lastAdmin) return refuse("CONFLICT", "The roster's last admin cannot be removed.")
          return { ...stay(["wallet_ceremony.completed", "wallet_signer.removed"], { status: "removed" }, done), removalReason: "customer_removed" }
      }
    }
    case "decline_ceremony":
    case "expire_ceremony": {
      if (ceremony === undefined) return refuse("CONFLICT", "The signer has no ceremony waiting for an admin.")
      if (!open(ceremony)) return refuse("RESOURCE_TERMINAL", `The ceremony is already ${ceremony.status}.`)
      return stay(["wallet_ceremony.failed"], {}, { ...ceremony, status: move.type === "decline_ceremony" ? "cancelled" : "failed" })
    }
    case "reissue_approval":
      if (!open(ceremony) || ceremony!.type !== "passkey_addition") {
        return refuse("CONFLICT", "The signer has no additional passkey waiting for an admin's approval.")
      }
      return stay(["wallet_signer.awaiting_admin_approval"])
    case "ops_remove": {
      const cancelled = open(ceremony)
      return {
        next: { signer: { ...signer, status: "removed" }, ceremony: cancelled ? { ...ceremony!, status: "cancelled" } : ceremony },
        events: cancelled ? ["wallet_ceremony.failed", "wallet_signer.removed"] : ["wallet_signer.removed"],
        removalReason: "ops_removed"
      }
    }
  }
}

// --- the roster-wide ceremony ------------------------------------------------------------------------------------

/**
 * The webauthn_origin_change ceremony (spec, Versioning rule 4: a ceremony type "sent only to organizations using
 * custom domains once enabled"): the roster's passkeys are to sign for the organization's custom domain, a change
 * of every signer's WebAuthn origin at once, so it is about the roster, not one signer (its events carry no
 * walletSignerId). Like the signer's ceremonies it waits for an admin's co-stamp and expires at expiresAt:
 *
 * | State | Trigger | Next | Also |
 * |---|---|---|---|
 * | (none open) | start | awaiting admin | wallet_ceremony.awaiting_admin_approval |
 * | awaiting admin | an admin approves | completed | wallet_ceremony.completed; the roster signs for the new origin |
 * | awaiting admin | an admin declines, or it expires | cancelled or failed | wallet_ceremony.failed |
 *
 * A roster has at most one open at a time (CONFLICT), and one with no admin that can act cannot start one, as no
 * one could co-stamp it (UNPROCESSABLE_ENTITY); a decision on a closed one is RESOURCE_TERMINAL.
 */
export interface OriginChangeState {
  /** The status of the roster's latest origin change, or undefined when it has had none. */
  readonly latest: CeremonyStatus | undefined
  /** Admins of the roster that can act (enrolled or approved). */
  readonly activeAdmins: number
}

export type OriginChangeMove = "start" | "approve_ceremony" | "decline_ceremony" | "expire_ceremony"

export type OriginChangeOutcome =
  | { readonly next: CeremonyStatus; readonly events: ReadonlyArray<"wallet_ceremony.awaiting_admin_approval" | "wallet_ceremony.completed" | "wallet_ceremony.failed"> }
  | { readonly refused: Refusal; readonly reason: string }

export const originChange = (state: OriginChangeState, move: OriginChangeMove): OriginChangeOutcome => {
  const open = state.latest === "awaiting_admin_approval"
  if (move === "start") {
    if (open) return { refused: "CONFLICT", reason: "The roster already has a WebAuthn origin change waiting for an admin." }
    if (state.activeAdmins === 0) return { refused: "UNPROCESSABLE_ENTITY", reason: "The roster has no admin that can act to co-stamp the origin change." }
    return { next: "awaiting_admin_approval", events: ["wallet_ceremony.awaiting_admin_approval"] }
  }
  if (state.latest === undefined) return { refused: "CONFLICT", reason: "The roster has no origin change waiting for an admin." }
  if (!open) return { refused: "RESOURCE_TERMINAL", reason: `The ceremony is already ${state.latest}.` }
  switch (move) {
    case "approve_ceremony":
      return { next: "completed", events: ["wallet_ceremony.completed"] }
    case "decline_ceremony":
      return { next: "cancelled", events: ["wallet_ceremony.failed"] }
    case "expire_ceremony":
      return { next: "failed", events: ["wallet_ceremony.failed"] }
  }
}
