/**
 * The RFI table as one pure function. The spec shows no RFI fields and no RFI states; this is fos's model
 * (money/Rfis.ts runs it, and says what each move does to the transaction):
 *
 * | RFI status | move | next | event |
 * |---|---|---|---|
 * | (new) | reviewer publishes | awaiting_response | rfi.published |
 * | awaiting_response | caller responds | under_review | rfi.response_submitted |
 * | under_review | caller adds information | under_review | rfi.response_submitted |
 * | under_review | reviewer asks for more | awaiting_response | rfi.more_info_requested |
 * | resolved | reviewer reopens | awaiting_response | rfi.more_info_requested |
 * | awaiting_response, under_review | reviewer extends the deadline | unchanged | rfi.deadline_extended |
 * | awaiting_response, under_review | reviewer resolves | resolved | rfi.resolved |
 * | awaiting_response, under_review | reviewer cancels | cancelled | rfi.cancelled |
 * | awaiting_response | the deadline passes | expired | rfi.cancelled (the catalog has no expiry event) |
 *
 * Refusals: the caller's response to an RFI that is not open is CONFLICT; a reviewer's move the status does not
 * allow is SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY (the reviewer's moves are the sandbox's simulate calls); a
 * deadline that passes on an RFI no longer waiting for its answer changes nothing (CONFLICT, which its timer
 * ignores: the caller did its part).
 */
import type { RfiStatus } from "@fos/contract"

export type Move =
  | { readonly type: "respond" }
  | { readonly type: "request_more" }
  | { readonly type: "reopen" }
  | { readonly type: "extend_deadline" }
  | { readonly type: "resolve" }
  | { readonly type: "cancel" }
  | { readonly type: "deadline_passed" }

export type Event =
  | "rfi.published"
  | "rfi.response_submitted"
  | "rfi.more_info_requested"
  | "rfi.deadline_extended"
  | "rfi.resolved"
  | "rfi.cancelled"

export type Refusal = "CONFLICT" | "SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY"

export type Outcome = { readonly next: RfiStatus; readonly events: ReadonlyArray<Event> } | { readonly refused: Refusal }

/** A published RFI: it waits for the caller's answer (rfi.published). */
export const initialStatus: { readonly status: "awaiting_response"; readonly events: ReadonlyArray<Event> } = {
  status: "awaiting_response",
  events: ["rfi.published"]
}

/** The statuses in which an RFI holds its transaction (`hasRfi`). */
export const openStatuses: ReadonlySet<RfiStatus> = new Set<RfiStatus>(["awaiting_response", "under_review"])

export const transition = (status: RfiStatus, move: Move): Outcome => {
  const open = openStatuses.has(status)
  const reviewer = (allowed: boolean, next: RfiStatus, event: Event): Outcome =>
    allowed ? { next, events: [event] } : { refused: "SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY" }
  switch (move.type) {
    case "respond":
      return open ? { next: "under_review", events: ["rfi.response_submitted"] } : { refused: "CONFLICT" }
    case "request_more":
      return reviewer(status === "under_review", "awaiting_response", "rfi.more_info_requested")
    case "reopen":
      return reviewer(status === "resolved", "awaiting_response", "rfi.more_info_requested")
    case "extend_deadline":
      return reviewer(open, status, "rfi.deadline_extended")
    case "resolve":
      return reviewer(open, "resolved", "rfi.resolved")
    case "cancel":
      return reviewer(open, "cancelled", "rfi.cancelled")
    case "deadline_passed":
      return status === "awaiting_response" ? { next: "expired", events: ["rfi.cancelled"] } : { refused: "CONFLICT" }
  }
}
