/**
 * The application timers: how an application moves on the clock when nobody calls simulate (DESIGN.md, "World
 * model": "compliance rules ... documented, configurable defaults"; docs/onboarding.md, "The world model's review").
 *
 * | timer | scheduled when | fires |
 * |---|---|---|
 * | application.review | an application is submitted (open) | the review decides it, by the markers in its data |
 * | application.cancel | a cancel is requested (Cancellation.ts) | the cancel completes |
 * | application.late_compliance | the review rejected it with `fos:late-reject` | a late compliance result makes the rejection compliance_denied and final |
 *
 * Each handler asks the state table first: an application decided by simulate, cancelled, or being cancelled
 * meanwhile has nothing left for the timer to do.
 */
import { Clock, Effect } from "effect"
import { Store } from "../kernel/Store.ts"
import { schedule, type TimerHandler } from "../kernel/Timers.ts"
import { allowedApplicationMove, type Application, Applications, applicationScope } from "./Applications.ts"
import { cancelTimerKind, completeCancel } from "./Cancellation.ts"
import { decide, lateComplianceResult } from "./Decisions.ts"
import { ReviewSettings, type ReviewSettingsValue } from "./ReviewSettings.ts"

export const reviewTimerKind = "application.review"
export const lateComplianceTimerKind = "application.late_compliance"

/** Schedules the world model's review of a submitted application (unless reviews are off: simulate decides). */
export const scheduleReview = (application: Application) =>
  Effect.gen(function*() {
    const settings = yield* ReviewSettings
    if (!settings.automatic) return
    const now = yield* Clock.currentTimeMillis
    yield* schedule(reviewTimerKind, now + settings.reviewDelayMs[application.type], { applicationId: application.id }, applicationScope(application))
  })

const markers = (application: Application): string => {
  const s = application.submission as {
    readonly businessInfo?: { readonly legalName?: string }
    readonly individual?: { readonly firstName?: string; readonly lastName?: string }
  } | undefined
  return [s?.businessInfo?.legalName, s?.individual?.firstName, s?.individual?.lastName, application.clientReferenceId]
    .filter((t) => t !== undefined).join(" ").toLowerCase()
}

/** The world model's review: deterministic on the application's own data (see ReviewSettings). */
const review: TimerHandler = (payload: { readonly applicationId: string }) =>
  Effect.gen(function*() {
    const store = yield* Store
    const application = yield* store.getForUpdate(Applications, payload.applicationId)
    // Decided by simulate, cancelled, or being cancelled meanwhile: the review has nothing to do.
    if (application === undefined || allowedApplicationMove(application, { _tag: "Decide", outcome: "approved", bySimulate: false }) === undefined) return
    const text = markers(application)
    if (text.includes("fos:manual")) return
    const settings = yield* ReviewSettings
    if (text.includes("fos:late-reject")) {
      yield* decide(application, { outcome: "rejected", failureCode: "rejected_by_ops", bySimulate: false })
      yield* schedule(
        lateComplianceTimerKind,
        (yield* Clock.currentTimeMillis) + settings.lateComplianceDelayMs,
        { applicationId: application.id },
        applicationScope(application)
      )
      return
    }
    if (text.includes("fos:reject")) {
      yield* decide(application, { outcome: "rejected", failureCode: "compliance_denied", bySimulate: false })
      return
    }
    yield* decide(application, { outcome: "approved", bySimulate: false })
  }).pipe(Effect.orDie)

const lateCompliance: TimerHandler = (payload: { readonly applicationId: string }) =>
  Effect.gen(function*() {
    const store = yield* Store
    const application = yield* store.getForUpdate(Applications, payload.applicationId)
    if (application === undefined || allowedApplicationMove(application, { _tag: "LateCompliance" }) === undefined) return
    yield* lateComplianceResult(application, { failureCode: "compliance_denied", resubmittable: false })
  }).pipe(Effect.orDie)

/** The application timers, over the review settings the engine was built with. */
export const applicationTimerHandlers = (settings: ReviewSettingsValue): Record<string, TimerHandler> => {
  const withSettings = (handler: TimerHandler): TimerHandler => (payload) =>
    handler(payload).pipe(Effect.provideService(ReviewSettings, settings))
  return {
    [reviewTimerKind]: withSettings(review),
    [cancelTimerKind]: completeCancel,
    [lateComplianceTimerKind]: lateCompliance
  }
}
