/**
 * The spec's webhook delivery table as one pure function (States and transitions, Webhook delivery):
 *
 * | State | Trigger | Next | Also |
 * |---|---|---|---|
 * | pending | dispatch begins | processing | |
 * | processing | endpoint answers 2xx | succeeded | |
 * | processing | attempt fails, attempts remain | pending | next attempt scheduled after the delay in the retry table |
 * | processing | attempt 5 fails | failed | about 78 minutes after the first attempt |
 * | failed | manual retry | pending | starts a new run of 5 attempts |
 * | pending, processing | manual retry | unchanged | 422 WEBHOOK_DELIVERY_NOT_RETRYABLE |
 *
 * and its retry table (Events, Retries): "A delivery gets 5 attempts in total. The wait after a failed attempt:
 * 1: 30 seconds, 2: 2 minutes, 3: 15 minutes, 4: 1 hour. The delivery becomes failed when attempt 5 fails. A manual
 * retry works only on a failed delivery and starts a new run of 5 attempts."
 *
 * The outcome says what to do besides the next state: the timer that acts next on the delivery (its next attempt
 * after a wait, or the recovery lease of the attempt just claimed), or none once the delivery has ended.
 *
 * fos's readings where the table is silent (docs/webhooks.md, "Webhook endpoints and delivery"):
 * - (new) → pending: fan-out opens a delivery in run 1 with its first attempt due at once.
 * - "Dispatch begins" claims the attempt and holds a 60-second recovery lease: a process that dies between sending
 *   and recording leaves the delivery processing, and the lease begins it again, sending the same attempt once more
 *   (at least once). So `begin` also applies to a processing delivery.
 * - A deleted endpoint receives nothing more: its open deliveries end failed at their next attempt (`abandon`).
 * - A manual retry of a succeeded delivery is refused too ("422 unless status failed", Webhook management).
 * - The engine's own moves (begin, succeed, fail, abandon) on a delivery they no longer apply to change nothing:
 *   a stale timer, or an attempt recorded after another process took the delivery over.
 */
import type { DeliveryStatus } from "@fos/contract"

/** Waits after attempts 1 to 4 of a run; attempt 5 failing ends the run. */
export const retryDelaysSeconds = [30, 120, 900, 3600] as const
export const attemptsPerRun = retryDelaysSeconds.length + 1
/** How long a claimed attempt may take before its recovery lease sends it again. */
export const leaseMs = 60_000

/** The part of a delivery the table decides on; undefined before fan-out opens it. */
export interface State {
  readonly status: DeliveryStatus
  /** Runs of 5 attempts: 1 at first, one more per manual retry. */
  readonly run: number
  /** Attempts recorded in the current run. */
  readonly attemptsInRun: number
}

export type Move =
  /** Fan-out: an active endpoint subscribed to the event gets a delivery. */
  | { readonly type: "open" }
  /** Dispatch begins: the attempt's timer, or the lease of an attempt never recorded, fired. */
  | { readonly type: "begin" }
  /** The endpoint answered 2xx. */
  | { readonly type: "succeed" }
  /** The attempt failed: an answer other than 2xx, no answer in time, or an address refused. */
  | { readonly type: "fail" }
  /** The endpoint was deleted. */
  | { readonly type: "abandon" }
  /** POST /webhooks/deliveries/{id}/retry. */
  | { readonly type: "retry" }

/** The timer that acts next on a delivery. */
export type Timer =
  /** The next attempt, due after `afterMs` (the delivery's nextAttemptAt). */
  | { readonly kind: "attempt"; readonly afterMs: number }
  /** The recovery lease of the attempt just claimed (nextAttemptAt stays the claimed attempt's). */
  | { readonly kind: "lease"; readonly afterMs: number }

export interface Step {
  readonly next: State
  /** What acts next on the delivery; undefined once it has ended (succeeded or failed). */
  readonly timer: Timer | undefined
  /** `begin` only: send a new attempt, or the claimed one again under its id (its lease ran out unrecorded). */
  readonly send?: "new" | "again"
}

/** The one refusal of the table: a manual retry of a delivery that has not failed. */
export type Refusal = "WEBHOOK_DELIVERY_NOT_RETRYABLE"

export type Outcome =
  | Step
  | { readonly refused: Refusal; readonly reason: string }
  | { readonly unchanged: true }

const unchanged = { unchanged: true } as const

const attemptAfter = (afterMs: number): Timer => ({ kind: "attempt", afterMs })

/** The statuses a delivery ends in: nothing acts on it next (a manual retry of a failed one starts a run anew). */
export const endedStatuses: ReadonlySet<DeliveryStatus> = new Set(["succeeded", "failed"])

export const transition = (state: State | undefined, move: Move): Outcome => {
  if (state === undefined) {
    return move.type === "open" ? { next: { status: "pending", run: 1, attemptsInRun: 0 }, timer: attemptAfter(0) } : unchanged
  }
  switch (move.type) {
    case "open":
      return unchanged
    case "begin":
      if (state.status === "pending") return { next: { ...state, status: "processing" }, timer: { kind: "lease", afterMs: leaseMs }, send: "new" }
      if (state.status === "processing") return { next: state, timer: { kind: "lease", afterMs: leaseMs }, send: "again" }
      return unchanged
    case "succeed":
      if (state.status !== "processing") return unchanged
      return { next: { ...state, status: "succeeded", attemptsInRun: state.attemptsInRun + 1 }, timer: undefined }
    case "fail": {
      if (state.status !== "processing") return unchanged
      const number = state.attemptsInRun + 1
      if (number >= attemptsPerRun) return { next: { ...state, status: "failed", attemptsInRun: number }, timer: undefined }
      return { next: { ...state, status: "pending", attemptsInRun: number }, timer: attemptAfter(retryDelaysSeconds[number - 1]! * 1000) }
    }
    case "abandon":
      if (endedStatuses.has(state.status)) return unchanged
      return { next: { ...state, status: "failed" }, timer: undefined }
    case "retry":
      if (state.status !== "failed") {
        return { refused: "WEBHOOK_DELIVERY_NOT_RETRYABLE", reason: `The delivery is ${state.status}; only a failed delivery can be retried.` }
      }
      return { next: { status: "pending", run: state.run + 1, attemptsInRun: 0 }, timer: attemptAfter(0) }
  }
}

/** Whether an outcome is a step (the move applies), rather than a refusal or nothing to do. */
export const isStep = (outcome: Outcome): outcome is Step => "next" in outcome
