/**
 * Decisions: an application approved or rejected (the spec's application table, "open → approval → approved
 * (terminal)", "open → rejection → rejected (terminal)", "any decided → decision again → 409
 * APPLICATION_ALREADY_DECIDED"), and the late compliance result that corrects a rejection ("a late compliance
 * result may emit a second application.rejected correcting failureMessage, resubmittable and (except
 * organization_onboarding) failureCode").
 *
 * "An organization_onboarding rejection with resubmittable true opens a fresh draft; with false it is final." So a
 * late result that makes the rejection final withdraws the draft the first result opened (ApplicationMachine.ts,
 * Withdraw), and one that makes it resubmittable opens one.
 *
 * Who decides: the world model's review on the clock (ApplicationTimers.ts), or the sandbox's simulate decision,
 * which alone can still decide a cancelled application. Rejection categories are the sandbox's (docs/onboarding.md).
 */
import { Clock, Effect } from "effect"
import {
  type Application as ApplicationWire,
  type ApplicationFailureCode,
  type ApplicationId,
  type RejectionCategory,
  toIso
} from "@fos/contract"
import * as ApplicationMachine from "./ApplicationMachine.ts"
import * as Applications from "./Applications.ts"
import * as ApprovalEffects from "./ApprovalEffects.ts"
import type * as Auth from "../tenancy/Auth.ts"
import * as IdGenerator from "../kernel/IdGenerator.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Store from "../kernel/Store.ts"

/** The sandbox rejection categories of KYB applications, and what each decides. */
export const rejectionOutcomes = {
  documents: { failureCode: "rejected_by_ops", resubmittable: true, message: "Documents were missing, unreadable or expired." },
  ownership: { failureCode: "rejected_by_ops", resubmittable: true, message: "The ownership and control structure could not be verified." },
  business_information: { failureCode: "rejected_by_ops", resubmittable: true, message: "The business information did not match the registry." },
  compliance: { failureCode: "compliance_denied", resubmittable: false, message: "The application did not pass compliance review." },
  prohibited_business: { failureCode: "compliance_denied", resubmittable: false, message: "The business operates in a prohibited industry." }
} as const satisfies Record<RejectionCategory, { failureCode: ApplicationFailureCode; resubmittable: boolean; message: string }>

const defaultMessages: Record<ApplicationFailureCode, string> = {
  rejected_by_ops: "The application was rejected by operations review.",
  compliance_denied: "The application did not pass compliance review."
}

/** KYB applications: businesses (customer onboarding of a business) and the organization itself. */
const isKyb = (a: Applications.Application) => a.type === "organization_onboarding" || (a.type === "customer_onboarding" && a.customerType === "business")

export interface ApplicationDecision {
  readonly outcome: "approved" | "rejected"
  readonly category?: RejectionCategory | undefined
  readonly reason?: string | undefined
  readonly failureCode?: ApplicationFailureCode | undefined
  readonly bySimulate: boolean
}

/**
 * Decides an application in the current transaction: the state move, what approval creates, the events and the
 * organization's fresh draft after a resubmittable rejection.
 */
export const decide = (application: Applications.Application, decision: ApplicationDecision): Effect.Effect<Applications.Application, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    if (decision.category !== undefined && !isKyb(application)) {
      return yield* Problem.apiError(
        "REJECTION_CATEGORY_NOT_APPLICABLE",
        "A rejection category applies only to KYB applications (a business's customer onboarding, or the organization's)."
      )
    }
    const outcome = yield* Applications.move(application, { _tag: "Decide", outcome: decision.outcome, bySimulate: decision.bySimulate })
    const now = toIso(yield* Clock.currentTimeMillis)
    if (outcome.next === "approved") {
      const approved: Applications.Application = { ...Applications.moved(application, outcome, now), decidedAt: now }
      yield* Applications.saveMoved(application, approved)
      yield* Applications.emitApplicationEvents(approved, outcome.events, now)
      yield* ApprovalEffects.approvalEffects(approved, now)
      return approved
    }
    const category = decision.category === undefined ? undefined : rejectionOutcomes[decision.category]
    const failureCode = category?.failureCode ?? decision.failureCode ?? "rejected_by_ops"
    const rejected: Applications.Application = {
      ...Applications.moved(application, outcome, now),
      failureCode,
      failureMessage: decision.reason ?? category?.message ?? defaultMessages[failureCode],
      resubmittable: application.type === "organization_onboarding"
        ? category?.resubmittable ?? failureCode === "rejected_by_ops"
        : undefined,
      decidedAt: now
    }
    yield* Applications.saveMoved(application, rejected)
    yield* Applications.emitApplicationEvents(rejected, outcome.events, now)
    if (rejected.type === "organization_onboarding" && rejected.resubmittable === true) yield* openDraft(rejected, now)
    return rejected
  })

/** A fresh organization_onboarding draft after a resubmittable rejection. */
const openDraft = (rejected: Applications.Application, now: string) =>
  Effect.gen(function*() {
    const draft: Applications.Application = {
      ...rejected,
      id: yield* IdGenerator.newId("app"),
      status: ApplicationMachine.initialStatus.draft,
      persons: [],
      submission: undefined,
      failureCode: undefined,
      failureMessage: undefined,
      resubmittable: undefined,
      decidedAt: undefined,
      ordinal: rejected.ordinal + 1,
      createdAt: now,
      updatedAt: now
    }
    yield* Effect.orDie(Applications.add(draft))
  })

/** `POST /sandbox/v2/simulate/applications/{id}/decision`: decides as the reviewer would, even a cancelled one. */
export const simulate = (
  caller: Auth.Caller,
  id: ApplicationId,
  decision: Omit<ApplicationDecision, "bySimulate">
): Effect.Effect<ApplicationWire, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    if (decision.outcome === "approved" && decision.category !== undefined) {
      return yield* Problem.invalidRequest([{ pointer: "/category", detail: "applies only to a rejection" }])
    }
    const application = yield* Applications.get(caller, id, true)
    return Applications.toWire(yield* decide(application, { ...decision, bySimulate: true }))
  })

/**
 * A late compliance result: a second application.rejected correcting failureMessage, resubmittable and (except for
 * organization_onboarding) failureCode. Receivers keep the later one (the spec: do not deduplicate by applicationId).
 */
export const lateComplianceResult = (
  application: Applications.Application,
  correction: { readonly failureCode?: ApplicationFailureCode | undefined; readonly failureMessage?: string | undefined; readonly resubmittable?: boolean | undefined }
): Effect.Effect<Applications.Application, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const outcome = yield* Applications.move(application, { _tag: "LateCompliance" })
    const isOrganization = application.type === "organization_onboarding"
    if (isOrganization && correction.failureCode !== undefined && correction.failureCode !== application.failureCode) {
      return yield* Problem.apiError("UNPROCESSABLE_ENTITY", "An organization_onboarding rejection's failureCode is not corrected; send failureMessage or resubmittable.")
    }
    const now = toIso(yield* Clock.currentTimeMillis)
    const failureCode = isOrganization ? application.failureCode : correction.failureCode ?? "compliance_denied"
    const corrected: Applications.Application = {
      ...Applications.moved(application, outcome, now),
      failureCode,
      failureMessage: correction.failureMessage ?? defaultMessages[failureCode ?? "compliance_denied"],
      resubmittable: isOrganization ? correction.resubmittable ?? false : undefined
    }
    yield* Applications.saveMoved(application, corrected)
    yield* Applications.emitApplicationEvents(corrected, outcome.events, now)
    if (isOrganization && corrected.resubmittable !== application.resubmittable) {
      const current = yield* Applications.currentOrganization(application.organizationId)
      // Now final: the draft the first result opened is withdrawn. Now resubmittable: a draft opens.
      if (corrected.resubmittable === false && current !== undefined) {
        const withdrawn = Applications.allowedApplicationMove(current, { _tag: "Withdraw" })
        if (withdrawn !== undefined) yield* Applications.saveMoved(current, Applications.moved(current, withdrawn, now))
      } else if (corrected.resubmittable === true && current?.id === corrected.id) yield* openDraft(corrected, now)
    }
    return corrected
  })

export const simulateLateCompliance = (
  caller: Auth.Caller,
  id: ApplicationId,
  correction: Parameters<typeof lateComplianceResult>[1]
): Effect.Effect<ApplicationWire, Problem.ApiError, Store.Store> =>
  Effect.flatMap(Applications.get(caller, id, true), (application) => Effect.map(lateComplianceResult(application, correction), Applications.toWire))
