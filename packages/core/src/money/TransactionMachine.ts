/**
 * The spec's transaction state table as one pure function (States and transitions, Transaction):
 *
 * | State | Trigger | Next state | Also |
 * |---|---|---|---|
 * | (new) | initiation | pending | transaction.created (with stage and sequence 1) |
 * | pending | payout clears compliance, or a conversion's transaction starts | processing | transaction.processing |
 * | any non-terminal | enters review | stage under_review | transaction.under_review, once per review period; no event when review closes |
 * | non-terminal | settles | completed | transaction.completed |
 * | non-terminal | fails | failed | transaction.failed with failureCode |
 * | accepted payout before execution | reviewer rejects the supporting document | failed (compliance_rejected) | transaction.rejected |
 * | non-terminal | client cancels | cancelled | transaction.cancelled |
 * | completed bank payout | the beneficiary's bank returns it | failed (returned_by_sender) | transaction.failed |
 *
 * The last row is fos's reading of the failureCode table ("returned_by_sender: a bank returned the transfer; may
 * carry returnedAt, returnReason, returnCode") and the "after completion a bank can return the transfer":
 * the one move out of a terminal status. Its money moves as new ledger transfers (Transactions.ts).
 *
 * "A review period starts when the transaction enters review after the service asked the caller for something
 * (stage awaiting_customer_action), or after it was sent to the bank; otherwise moving between reviews does not
 * fire the event again." The first review of a transaction opens its first period.
 *
 * Any move not in the table is refused: on a terminal transaction with RESOURCE_TERMINAL, otherwise with
 * SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY (the simulate endpoints are the only callers that can ask for a move
 * the phase does not allow; the engine's own flows never do).
 */
import type { TransactionStage, TransactionStatus } from "@fos/contract"

/** The part of a transaction the table decides on. */
export interface MachineState {
  readonly status: TransactionStatus
  readonly stage: TransactionStage | null
  /** Whether entering review now starts a new review period (and so fires transaction.under_review). */
  readonly reviewPeriodOpen: boolean
  /** Whether the transaction was sent out (to the bank or the chain): it can no longer be rejected or cancelled. */
  readonly sent: boolean
}

export type Move =
  | { readonly type: "start" }
  | { readonly type: "enter_review" }
  | { readonly type: "request_information" }
  | { readonly type: "clear_review" }
  | { readonly type: "send" }
  | { readonly type: "settle" }
  | { readonly type: "fail" }
  | { readonly type: "reject" }
  | { readonly type: "cancel" }
  | { readonly type: "return" }

/** The status events a move emits, in order; each takes the transaction's next sequence number. */
export type StatusEvent =
  | "transaction.processing"
  | "transaction.under_review"
  | "transaction.completed"
  | "transaction.failed"
  | "transaction.rejected"
  | "transaction.cancelled"

export type Refusal = "RESOURCE_TERMINAL" | "SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY"

export type Outcome =
  | { readonly next: MachineState; readonly events: ReadonlyArray<StatusEvent> }
  | { readonly refused: Refusal; readonly reason: string }

export const terminalStatuses: ReadonlySet<TransactionStatus> = new Set(["completed", "failed", "cancelled"])

/** The state of a transaction just initiated: pending, with the stage it starts in. */
export const initialState = (stage: TransactionStage | null = null): MachineState => ({
  status: "pending",
  stage,
  reviewPeriodOpen: true,
  sent: false
})

/** A move the transaction's phase does not allow, with the reason in words of its own (the inspector shows it). */
const notReady = (reason: string) => ({ refused: "SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY", reason } as const)

export const transition = (state: MachineState, move: Move): Outcome => {
  const ended = { refused: "RESOURCE_TERMINAL", reason: `The transaction has already ended (${state.status}).` } as const
  if (move.type === "return") {
    if (state.status === "completed") return { next: { ...state, status: "failed", stage: null }, events: ["transaction.failed"] }
    return terminalStatuses.has(state.status) ? ended : notReady("Only a completed transaction can be returned.")
  }
  if (terminalStatuses.has(state.status)) return ended
  switch (move.type) {
    case "start":
      return state.status === "pending" ? { next: { ...state, status: "processing" }, events: ["transaction.processing"] } : notReady("The transaction has already started.")
    case "enter_review":
      if (state.stage === "under_review") return notReady("The transaction is already under review.")
      return {
        next: { ...state, stage: "under_review", reviewPeriodOpen: false },
        events: state.reviewPeriodOpen || state.stage === "awaiting_customer_action" ? ["transaction.under_review"] : []
      }
    case "request_information":
      return state.stage === "awaiting_customer_action"
        ? notReady("The transaction already waits for the customer's information.")
        : { next: { ...state, stage: "awaiting_customer_action" }, events: [] }
    case "clear_review":
      // Closing a review fires nothing; answering a request for information leaves the stage too.
      return state.stage === null ? notReady("The transaction is not under review.") : { next: { ...state, stage: null }, events: [] }
    case "send":
      return state.sent ? notReady("The transaction has already been sent.") : { next: { ...state, sent: true, reviewPeriodOpen: true }, events: [] }
    case "settle":
      return { next: { ...state, status: "completed", stage: null }, events: ["transaction.completed"] }
    case "fail":
      return { next: { ...state, status: "failed", stage: null }, events: ["transaction.failed"] }
    case "reject":
      // Only an accepted payout, before it is sent, can have its supporting document rejected.
      return state.sent
        ? notReady("The transaction has been sent: its supporting document can no longer be rejected.")
        : { next: { ...state, status: "failed", stage: null }, events: ["transaction.rejected"] }
    case "cancel":
      return state.sent
        ? notReady("The transaction has been sent: it can no longer be cancelled.")
        : { next: { ...state, status: "cancelled", stage: null }, events: ["transaction.cancelled"] }
  }
}
