/**
 * The spec's application state table as one pure function (States and transitions, Application):
 *
 * | State | Trigger | Next | Also |
 * |---|---|---|---|
 * | open | approval | approved (terminal) | application.approved; customer_onboarding approval creates the customer and emits customer.created; a virtual_account approval later emits virtual_account.activated |
 * | open | rejection | rejected (terminal) | application.rejected; a late compliance result may emit a second application.rejected correcting failureMessage, resubmittable and (except organization_onboarding) failureCode |
 * | any decided | decision again | unchanged | 409 APPLICATION_ALREADY_DECIDED; approved and rejected are final; a cancelled application is usually final, except that the sandbox simulate/decision call can still decide it |
 *
 * "An organization_onboarding rejection with resubmittable true opens a fresh draft; with false it is final."
 *
 * The moves fos adds where the spec's table is silent (docs/onboarding.md, "States"), each the reading of a rule
 * the spec states elsewhere:
 *
 * | State | Move | Next | Also |
 * |---|---|---|---|
 * | (new) | a submission | open | the review timer |
 * | (new) | a resubmittable organization_onboarding rejection | draft | a new application id |
 * | draft | Submit (POST /v2/organization/onboarding) | open | |
 * | open | RequestCancel (POST /v2/applications/{id}/cancel) | open, cancelling | CANCEL_IN_PROGRESS to any other review action meanwhile |
 * | open, cancelling | CompleteCancel (the cancel timer) | cancelled | persons cancelled; no event (the spec has none) |
 * | cancelled | Decide by simulate | approved or rejected | the spec's "except that the sandbox simulate/decision call can still decide it" |
 * | rejected | LateCompliance | rejected | a second application.rejected |
 * | draft | Withdraw (a late compliance result makes the rejection final) | cancelled | no event |
 * | open | IssueIdvLink | unchanged | a guard: links are offered only while the application is open |
 *
 * Withdraw is the one move out of `draft` besides Submit. The spec opens a draft only because the rejection is
 * resubmittable, and "with false it is final": when a late compliance result turns resubmittable to false, the
 * draft the first result opened must not stay open for a submission. fos ends it as `cancelled` (ended without a
 * decision, never submitted, so it holds no client reference), with no event, as it always has.
 *
 * Every other move is refused: a decision or cancel request on a decided application is
 * APPLICATION_ALREADY_DECIDED, any review action while a cancel runs is CANCEL_IN_PROGRESS, any other move out of
 * the wrong state is APPLICATION_INVALID_STATUS.
 */
import type { ApplicationStatus } from "@fos/contract"

export type Move =
  | { readonly _tag: "Submit" }
  | { readonly _tag: "Decide"; readonly outcome: "approved" | "rejected"; readonly bySimulate: boolean }
  | { readonly _tag: "RequestCancel" }
  | { readonly _tag: "CompleteCancel" }
  | { readonly _tag: "LateCompliance" }
  | { readonly _tag: "Withdraw" }
  | { readonly _tag: "IssueIdvLink" }

export type Refusal = "APPLICATION_ALREADY_DECIDED" | "APPLICATION_INVALID_STATUS" | "CANCEL_IN_PROGRESS"

/** The events a move emits (each with the application's payload, Applications.ts). */
export type ApplicationEvent = "application.approved" | "application.rejected"

/** What the move makes of the application's persons' verificationStatus; undefined: unchanged. */
export type PersonVerification = "completed" | "failed" | "cancelled"

export type Outcome =
  | {
    readonly next: ApplicationStatus
    /** Whether a cancel is in progress after the move (the application's cancelRequestedAt is set). */
    readonly cancelling: boolean
    readonly events: ReadonlyArray<ApplicationEvent>
    readonly persons: PersonVerification | undefined
  }
  | { readonly refused: Refusal }

/** The status an application is born in: a submission is open at once; the organization's fresh draft waits. */
export const initialStatus = { submission: "open", draft: "draft" } as const satisfies Record<string, ApplicationStatus>

const decided = (status: ApplicationStatus) => status === "approved" || status === "rejected"

const to = (
  next: ApplicationStatus,
  options: { readonly cancelling?: boolean; readonly events?: ReadonlyArray<ApplicationEvent>; readonly persons?: PersonVerification } = {}
): Outcome => ({ next, cancelling: options.cancelling ?? false, events: options.events ?? [], persons: options.persons })

const invalid = { refused: "APPLICATION_INVALID_STATUS" } as const

/** The part of an application the table decides on: its status, and whether a cancel of it is in progress. */
export interface State {
  readonly status: ApplicationStatus
  /** An open application with a cancel in progress. */
  readonly cancelling: boolean
}

/**
 * The state table as a function: the next status (with whether a cancel is in progress, the events and what
 * becomes of the persons), or the code the move is refused with.
 */
export const transition = ({ status, cancelling }: State, move: Move): Outcome => {
  switch (move._tag) {
    case "Submit":
      return status === "draft" ? to("open") : invalid
    case "Decide":
      if (decided(status)) return { refused: "APPLICATION_ALREADY_DECIDED" }
      if (cancelling) return { refused: "CANCEL_IN_PROGRESS" }
      if (status === "open" || (status === "cancelled" && move.bySimulate)) {
        return move.outcome === "approved"
          ? to("approved", { events: ["application.approved"], persons: "completed" })
          : to("rejected", { events: ["application.rejected"], persons: "failed" })
      }
      return invalid
    case "RequestCancel":
      if (decided(status)) return { refused: "APPLICATION_ALREADY_DECIDED" }
      if (cancelling) return { refused: "CANCEL_IN_PROGRESS" }
      return status === "open" ? to("open", { cancelling: true }) : invalid
    case "CompleteCancel":
      return status === "open" && cancelling ? to("cancelled", { persons: "cancelled" }) : invalid
    case "LateCompliance":
      return status === "rejected" ? to("rejected", { events: ["application.rejected"] }) : invalid
    case "Withdraw":
      return status === "draft" ? to("cancelled") : invalid
    case "IssueIdvLink":
      if (status === "open" && cancelling) return { refused: "CANCEL_IN_PROGRESS" }
      return status === "open" ? to("open") : invalid
  }
}
