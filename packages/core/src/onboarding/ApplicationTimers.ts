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
import { Clock, Effect, Schema } from "effect"
import * as Applications from "./Applications.ts"
import * as Decisions from "./Decisions.ts"
import * as Domain from "../kernel/Domain.ts"
import * as ReviewSettings from "./ReviewSettings.ts"
import * as Store from "../kernel/Store.ts"
import * as Timers from "../kernel/Timers.ts"

/** A submitted application's review by the world model, `reviewDelayMs[type]` after its submission. */
export const reviewTimer = Timers.kind("application.review", Schema.Struct({ applicationId: Schema.String }), "applicationId")

/** The late compliance result of an application the review rejected with `fos:late-reject`, `lateComplianceDelayMs` later. */
export const lateComplianceTimer = Timers.kind("application.late_compliance", Schema.Struct({ applicationId: Schema.String }), "applicationId")

/** Schedules the world model's review of a submitted application (unless reviews are off: simulate decides). */
export const scheduleReview = (application: Applications.Application) =>
  Effect.gen(function*() {
    const settings = yield* ReviewSettings.ReviewSettings
    if (!settings.automatic) return
    const now = yield* Clock.currentTimeMillis
    yield* Timers.schedule(reviewTimer, now + settings.reviewDelayMs[application.type], { applicationId: application.id }, Applications.applicationScope(application))
  })

const markers = (application: Applications.Application): string => {
  const s = application.submission as {
    readonly businessInfo?: { readonly legalName?: string }
    readonly individual?: { readonly firstName?: string; readonly lastName?: string }
  } | undefined
  return [s?.businessInfo?.legalName, s?.individual?.firstName, s?.individual?.lastName, application.clientReferenceId]
    .filter((t) => t !== undefined).join(" ").toLowerCase()
}

/** The world model's review: deterministic on the application's own data, by the engine's ReviewSettings. */
const review = (payload: { readonly applicationId: string }) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const application = yield* store.getForUpdate(Applications.Applications, payload.applicationId)
    // Decided by simulate, cancelled, or being cancelled meanwhile: the review has nothing to do.
    if (application === undefined || Applications.allowedApplicationMove(application, { _tag: "Decide", outcome: "approved", bySimulate: false }) === undefined) return
    const text = markers(application)
    if (text.includes("fos:manual")) return
    const settings = yield* ReviewSettings.ReviewSettings
    if (text.includes("fos:late-reject")) {
      yield* Decisions.decide(application, { outcome: "rejected", failureCode: "rejected_by_ops", bySimulate: false })
      yield* Timers.schedule(
        lateComplianceTimer,
        (yield* Clock.currentTimeMillis) + settings.lateComplianceDelayMs,
        { applicationId: application.id },
        Applications.applicationScope(application)
      )
      return
    }
    if (text.includes("fos:reject")) {
      yield* Decisions.decide(application, { outcome: "rejected", failureCode: "compliance_denied", bySimulate: false })
      return
    }
    yield* Decisions.decide(application, { outcome: "approved", bySimulate: false })
  }).pipe(Effect.orDie)

const lateCompliance = (payload: { readonly applicationId: string }) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const application = yield* store.getForUpdate(Applications.Applications, payload.applicationId)
    if (application === undefined || Applications.allowedApplicationMove(application, { _tag: "LateCompliance" }) === undefined) return
    yield* Decisions.lateComplianceResult(application, { failureCode: "compliance_denied", resubmittable: false })
  }).pipe(Effect.orDie)

/** The world model's review of applications and its late compliance results (the cancel timer is Cancellation.ts's). */
export const domain = Domain.make({
  name: "onboarding/ApplicationTimers",
  timers: [
    Timers.handle(reviewTimer, review, (id) => `reviews application ${id} (the world model approves or rejects it)`),
    Timers.handle(lateComplianceTimer, lateCompliance, (id) => `delivers a late compliance result for application ${id}`)
  ]
})
