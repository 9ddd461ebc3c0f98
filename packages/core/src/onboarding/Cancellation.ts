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
import { Clock, Effect } from "effect"
import { type Application as ApplicationWire, type ApplicationId, toIso } from "@fos/contract"
import { type ApiError } from "../kernel/Problem.ts"
import { Store } from "../kernel/Store.ts"
import { schedule, type TimerHandler } from "../kernel/Timers.ts"
import { type Caller } from "../tenancy/Auth.ts"
import { allowedApplicationMove, Applications, applicationScope, applicationToWire, getApplication, moveApplication, movedApplication } from "./Applications.ts"
import { ReviewSettings } from "./ReviewSettings.ts"

export const cancelTimerKind = "application.cancel"

/** `POST /v2/applications/{id}/cancel`: starts a cancellation, which completes on the clock. */
export const requestCancel = (caller: Caller, id: ApplicationId): Effect.Effect<ApplicationWire, ApiError, Store> =>
  Effect.gen(function*() {
    const store = yield* Store
    const application = yield* getApplication(caller, id, true)
    const outcome = yield* moveApplication(application, { _tag: "RequestCancel" })
    const nowMs = yield* Clock.currentTimeMillis
    const cancelling = movedApplication(application, outcome, toIso(nowMs))
    yield* Effect.orDie(store.update(Applications, cancelling))
    yield* schedule(cancelTimerKind, nowMs + (yield* ReviewSettings).cancelDelayMs, { applicationId: id }, applicationScope(application))
    return applicationToWire(cancelling)
  })

/** The cancel timer: completes the cancel, unless a decision or another move got there first. */
export const completeCancel: TimerHandler = (payload: { readonly applicationId: string }) =>
  Effect.gen(function*() {
    const store = yield* Store
    const application = yield* store.getForUpdate(Applications, payload.applicationId)
    if (application === undefined) return
    const outcome = allowedApplicationMove(application, { _tag: "CompleteCancel" })
    if (outcome === undefined) return
    yield* Effect.orDie(store.update(Applications, movedApplication(application, outcome, toIso(yield* Clock.currentTimeMillis))))
  })
