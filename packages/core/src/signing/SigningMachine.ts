/**
 * The spec's signing table of a payout or a conversion's source transfer from a non-custodial wallet, as one pure
 * function (States and transitions, "Non-custodial signing of a payout or conversion source transfer"):
 *
 * | State | Trigger | Condition | Next | Also |
 * |---|---|---|---|---|
 * | processing | signing starts | | awaiting signature | transaction.awaiting_signature (with attempt); if the payout waits for a turn, transaction.queue_position_changed on entry and each move forward |
 * | awaiting signature | a signer stamp is collected | | collecting | transaction.signature_collected per stamp (collected, required) |
 * | collecting | collected >= required | | quorum met | transaction.quorum_met; the service then co-signs and broadcasts |
 * | awaiting signature | window expires before quorum | attempts left | awaiting signature, new request | awaiting_signature re-fires with incremented attempt; the latest attempt is authoritative |
 * | awaiting signature | final attempt expires | | failed | failureCode user_signature_expired (a conversion fails via order.failed) |
 * | queue | waited too long | | failed | user_signature_timeout |
 * | awaiting signature | signer removed or demoted out of signing pool | | failed | roster_changed; collected stamps voided |
 * | awaiting signature | signer declines | | failed | user_signature_declined |
 * | not started, queue, awaiting signature | the wallet provider freezes the wallet | | failed | crypto_wallet_misconfigured (fos: the spec's failureCode for a wallet whose signing configuration blocks movement) |
 *
 * TransferSigning.ts runs it on payouts and on orders' source transfers. What fos chose where the spec says "not
 * shown" (docs/signing.md):
 * - One signing seat per wallet and chain. A transfer that finds the seat taken enters the queue at the position it
 *   is given (1 is next) and fires queue_position_changed on entry; each move forward fires it again; taking the seat
 *   (leaving the queue) fires none, and a transfer that gets the seat at once never fires it.
 * - "collecting" is awaiting signature with at least one stamp; a stamp is one signer's, once per attempt, and only
 *   from the signing pool (enrolled or approved signers of the roster). A new attempt starts with no stamps: the
 *   latest attempt is authoritative.
 * - A roster change fails the transfer when the signer that left had stamped the current attempt (its stamp is
 *   voided) or when the pool left can no longer reach the threshold; otherwise the transfer keeps waiting. A queued
 *   transfer is pending too: it fails when the pool left can no longer reach the threshold, rather than wait for a
 *   seat it could never use. A transfer whose signing starts with a pool already below the threshold fails
 *   roster_changed at once, without a window it could not meet.
 * - Every signing event is paired with the deprecated transaction.awaiting_user_signature while its compatibility
 *   window lasts (`withDeprecatedEvents`).
 *
 * Refusals: a move on a transfer whose signing is over (quorum met or failed) is RESOURCE_TERMINAL; a move the phase
 * does not allow is CONFLICT; a stamp from outside the pool, or twice from one signer, is CONFLICT too.
 */

export type SigningPhase = "not_started" | "queued" | "awaiting_signature" | "quorum_met" | "failed"

export type SigningFailureCode =
  | "user_signature_expired"
  | "user_signature_timeout"
  | "roster_changed"
  | "user_signature_declined"
  | "crypto_wallet_misconfigured"

export type SigningMode = "passkey_required" | "programmatic" | "programmatic_unattended"

export interface State {
  readonly phase: SigningPhase
  /** In the queue: 1 is next. */
  readonly queuePosition: number | null
  /** The current attempt; 0 before signing starts. */
  readonly attempt: number
  readonly maxAttempts: number
  /** The roster's threshold. */
  readonly required: number
  /** The signers that stamped the current attempt, in order. */
  readonly collected: ReadonlyArray<string>
  readonly failureCode: SigningFailureCode | null
}

export type Move =
  | { readonly type: "start"; readonly seatFree: boolean; readonly queuePosition?: number; readonly poolSize: number }
  | { readonly type: "queue_advance"; readonly queuePosition: number }
  | { readonly type: "seat" }
  | { readonly type: "queue_timeout" }
  | { readonly type: "stamp"; readonly signerId: string; readonly inPool: boolean }
  | { readonly type: "window_expired" }
  | { readonly type: "decline"; readonly signerId: string; readonly inPool: boolean }
  | { readonly type: "roster_changed"; readonly signerId: string; readonly poolSize: number }
  | { readonly type: "wallet_frozen" }

/**
 * The table's events by their name under `transaction.` (awaiting_signature is transaction.awaiting_signature): the
 * transfer that runs the table sends them with its transaction's payload.
 */
export type Event =
  | "awaiting_signature"
  | "queue_position_changed"
  | "signature_collected"
  | "quorum_met"
  | "failed"

export type Refusal = "CONFLICT" | "RESOURCE_TERMINAL"

export type Outcome =
  | { readonly next: State; readonly events: ReadonlyArray<Event> }
  | { readonly refused: Refusal; readonly reason: string }

/** A transfer before signing starts: `required` stamps of the roster, within `maxAttempts` windows. */
export const initialState = (required: number, maxAttempts: number): State => ({
  phase: "not_started",
  queuePosition: null,
  attempt: 0,
  maxAttempts,
  required,
  collected: [],
  failureCode: null
})

const refuse = (refused: Refusal, reason: string): Outcome => ({ refused, reason })

/** The refusal of a stamp or a decline from outside the pool; a signing request's decision gives it first (SigningRequests.ts). */
export const notInPool = "The signer is not in the wallet's signing pool."

const fail = (state: State, failureCode: SigningFailureCode): Outcome => ({
  next: { ...state, phase: "failed", queuePosition: null, collected: [], failureCode },
  events: ["failed"]
})

const firstAttempt = (state: State): Outcome => ({
  next: { ...state, phase: "awaiting_signature", queuePosition: null, attempt: 1, collected: [] },
  events: ["awaiting_signature"]
})

export const transition = (state: State, move: Move): Outcome => {
  if (state.phase === "quorum_met" || state.phase === "failed") return refuse("RESOURCE_TERMINAL", `The transfer's signing is over (${state.phase}).`)
  switch (move.type) {
    case "start":
      if (state.phase !== "not_started") return refuse("CONFLICT", "Signing has already started.")
      if (move.poolSize < state.required) return fail(state, "roster_changed")
      if (move.seatFree) return firstAttempt(state)
      if (move.queuePosition === undefined || move.queuePosition < 1) return refuse("CONFLICT", "A queued transfer needs its position (1 is next).")
      return { next: { ...state, phase: "queued", queuePosition: move.queuePosition }, events: ["queue_position_changed"] }
    case "queue_advance":
      if (state.phase !== "queued") return refuse("CONFLICT", "The transfer is not in the queue.")
      if (move.queuePosition < 1 || move.queuePosition >= state.queuePosition!) return refuse("CONFLICT", "A queued transfer only moves forward.")
      return { next: { ...state, queuePosition: move.queuePosition }, events: ["queue_position_changed"] }
    case "seat":
      // Leaving the queue fires no queue_position_changed.
      if (state.phase !== "queued") return refuse("CONFLICT", "The transfer is not in the queue.")
      return firstAttempt(state)
    case "queue_timeout":
      if (state.phase !== "queued") return refuse("CONFLICT", "The transfer is not in the queue.")
      return fail(state, "user_signature_timeout")
    case "stamp": {
      if (state.phase !== "awaiting_signature") return refuse("CONFLICT", "The transfer is not awaiting signatures.")
      if (!move.inPool) return refuse("CONFLICT", notInPool)
      if (state.collected.includes(move.signerId)) return refuse("CONFLICT", "The signer already stamped this attempt.")
      const collected = [...state.collected, move.signerId]
      if (collected.length >= state.required) {
        return { next: { ...state, phase: "quorum_met", collected }, events: ["signature_collected", "quorum_met"] }
      }
      return { next: { ...state, collected }, events: ["signature_collected"] }
    }
    case "window_expired":
      if (state.phase !== "awaiting_signature") return refuse("CONFLICT", "The transfer is not awaiting signatures.")
      if (state.attempt >= state.maxAttempts) return fail(state, "user_signature_expired")
      return { next: { ...state, attempt: state.attempt + 1, collected: [] }, events: ["awaiting_signature"] }
    case "decline":
      if (state.phase !== "awaiting_signature") return refuse("CONFLICT", "The transfer is not awaiting signatures.")
      if (!move.inPool) return refuse("CONFLICT", notInPool)
      return fail(state, "user_signature_declined")
    case "roster_changed":
      if (state.phase === "queued") return move.poolSize < state.required ? fail(state, "roster_changed") : { next: state, events: [] }
      if (state.phase !== "awaiting_signature") return refuse("CONFLICT", "The transfer is not awaiting signatures.")
      if (state.collected.includes(move.signerId) || move.poolSize < state.required) return fail(state, "roster_changed")
      return { next: state, events: [] }
    case "wallet_frozen":
      // Nothing can be sent from a frozen wallet: whatever signs from it fails, started or not.
      return fail(state, "crypto_wallet_misconfigured")
  }
}

/**
 * The signing mode of a roster (spec, transaction.awaiting_signature): passkeys only is passkey_required (a shared
 * verificationUrl); passkeys and machine signers is programmatic (a signingRequestId, and the verificationUrl for the
 * persons); machine signers only is programmatic_unattended (a signingRequestId, no verificationUrl).
 */
export const signingModeOf = (pool: { readonly passkeySigners: number; readonly machineSigners: number }): SigningMode =>
  pool.machineSigners === 0 ? "passkey_required" : pool.passkeySigners === 0 ? "programmatic_unattended" : "programmatic"

/**
 * The events to send for `events` at `nowMs`: each awaiting_signature is followed by the deprecated
 * awaiting_user_signature while its compatibility window (ending at `compatibilityEndsMs`) lasts.
 */
export const withDeprecatedEvents = (
  events: ReadonlyArray<Event>,
  nowMs: number,
  compatibilityEndsMs: number
): ReadonlyArray<Event | "awaiting_user_signature"> =>
  nowMs < compatibilityEndsMs
    ? events.flatMap((e) => (e === "awaiting_signature" ? [e, "awaiting_user_signature" as const] : [e]))
    : events
