/**
 * Cancellation: `POST /v2/applications/{id}/cancel` starts it and the clock completes it (docs/onboarding.md: 202,
 * done after `cancelDelayMs`, 30 s by default). The spec's error table: 409 CANCEL_IN_PROGRESS is "another review
 * action active", so while the cancel runs every other review action on the application is refused with it.
 *
 * | State | Move | Next |
 * |---|---|---|
 * | open | RequestCancel | open, cancelling (cancelRequestedAt set); the cancel timer |
 * | open, cancelling | CompleteCancel (the timer) | cancelled; persons cancelled; no event (the spec has none) |
 *
 * A cancelled application frees its client reference and house-account claim, and only the sandbox's simulate
 * decision can still decide it (the spec: "a cancelled application is usually final, except...").
 */
import { Clock, Effect, Schema } from "effect"
import { type Application as ApplicationWire, type ApplicationId, toIso } from "@fos/contract"
import * as Applications from "./Applications.ts"
import type * as Auth from "../tenancy/Auth.ts"
import * as Domain from "../kernel/Domain.ts"
import type * as Problem from "../kernel/Problem.ts"
import * as ReviewSettings from "./ReviewSettings.ts"
import * as Store from "../kernel/Store.ts"
import * as Timers from "../kernel/Timers.ts"

/** A requested cancel's completion, `cancelDelayMs` after the request. */
export const cancelTimer = Timers.kind("application.cancel", Schema.Struct({ applicationId: Schema.String }), "applicationId")

/**
 * `POST /v2/applications/{id}/cancel`: starts a cancellation, which completes on the clock. A request breaks one rule
 * at most, so its refusals have no order to keep (docs/onboarding.md, "The order of the other writes' refusals"): an
 * application the caller cannot see is 404 APPLICATION_NOT_FOUND, and one it can has a single state, which the table
 * refuses with one code (409 APPLICATION_ALREADY_DECIDED, CANCEL_IN_PROGRESS or APPLICATION_INVALID_STATUS).
 */
export const requestCancel = (caller: Auth.Caller, id: ApplicationId): Effect.Effect<ApplicationWire, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const application = yield* Applications.get(caller, id, true)
    const outcome = yield* Applications.move(application, { _tag: "RequestCancel" })
    const nowMs = yield* Clock.currentTimeMillis
    const cancelling = Applications.moved(application, outcome, toIso(nowMs))
    yield* Applications.saveMoved(application, cancelling)
    yield* Timers.schedule(cancelTimer, nowMs + (yield* ReviewSettings.ReviewSettings).cancelDelayMs, { applicationId: id }, Applications.applicationScope(application))
    return Applications.toWire(cancelling)
  })

/** The cancel timer: completes the cancel, unless a decision or another move got there first. */
export const completeCancel = (payload: { readonly applicationId: string }) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const application = yield* store.getForUpdate(Applications.Applications, payload.applicationId)
    if (application === undefined) return
    const outcome = Applications.allowedApplicationMove(application, { _tag: "CompleteCancel" })
    if (outcome === undefined) return
    yield* Applications.saveMoved(application, Applications.moved(application, outcome, toIso(yield* Clock.currentTimeMillis)))
  })

/** The cancel timer, which completes a requested cancel. */
export const domain = Domain.make({
  name: "onboarding/Cancellation",
  timers: [Timers.handle(cancelTimer, completeCancel, (id) => `completes the cancellation of application ${id}`)]
})
