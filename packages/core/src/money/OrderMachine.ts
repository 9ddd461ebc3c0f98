/**
 * The spec's order state table as one pure function (States and transitions, Order):
 *
 * | State | Trigger | Condition | Next state | Also |
 * |---|---|---|---|---|
 * | (new) | POST /v2/orders | always | pending | order.created; no balance check or reservation at creation |
 * | pending | POST /v2/orders/{id}/cancel | caller cancels; source transfer not yet sent | cancelled | order.cancelled, reason client_cancelled; cancelling a cancelled order returns 200 |
 * | pending | lock expiry sweep | lockExpiresAt passed before execution was claimed | cancelled | order.cancelled, reason expired; later funding does not revive it. For a deposit-funded order it fires only when no transfer to the funding address is still being checked |
 * | pending | execution completes | source debited, destination credited | succeeded | order.succeeded |
 * | pending | execution fails | any terminal failure | failed | order.failed with reasonCode |
 * | pending | POST /v2/orders/{id}/execute or autoExecute | execution is claimed | pending (executing) | explicit execute is one attempt |
 * | succeeded, failed | cancel | any | unchanged | 409 ORDER_NOT_CANCELLABLE |
 * | non-pending | execute | any | unchanged | 409 ORDER_NOT_EXECUTABLE; expired order: 409 ORDER_EXPIRED |
 *
 * fos's readings where the table is silent (docs/money.md, "Orders"):
 * - an order whose execution is claimed is executing: executing it again is ORDER_NOT_EXECUTABLE;
 * - a pending order past its lockExpiresAt that the sweep has not reached yet is already expired: ORDER_EXPIRED;
 * - cancelling an executing order whose source transfer is not sent yet cancels it (and its transaction); once the
 *   source transfer is sent the cancel is 409 ORDER_CANCEL_IN_PROGRESS, transient: the order is about to end,
 *   read it or retry (then ORDER_NOT_CANCELLABLE);
 * - the engine's own moves (send, succeed, fail, expire) on an order they no longer apply to change nothing; the
 *   timers that make them ask the table (`moves`) rather than check the order themselves;
 * - the sweep of a deposit-funded order whose funding is still being checked is deferred: it looks again later.
 */
import type { OrderCancellationReason, OrderStatus } from "@fos/contract"

/** The part of an order the table decides on. */
export interface State {
  readonly status: OrderStatus
  /** Execution is claimed: the order's transaction exists. */
  readonly executing: boolean
  /** The source transfer is sent (the order's transaction is processing). */
  readonly sent: boolean
  readonly lockExpiresAtMs: number
  readonly cancellationReason: OrderCancellationReason | null
  /**
   * Funded by a deposit to its funding address: its lockExpiresAt is a funding deadline that the sweep enforces
   * (waiting while a deposit is still being checked), so a deposit that arrived in time executes it even when it
   * settles after the deadline.
   */
  readonly depositFunded: boolean
}

export type Move =
  | { readonly type: "execute"; readonly nowMs: number }
  | { readonly type: "cancel" }
  | {
    readonly type: "expire"
    readonly nowMs: number
    /** A transfer to a deposit-funded order's funding address is still being checked (its credit is pending). */
    readonly fundingBeingChecked?: boolean | undefined
  }
  | { readonly type: "send" }
  | { readonly type: "succeed" }
  | { readonly type: "fail" }

/** The events a move emits, in order. */
export type Event = "order.cancelled" | "order.succeeded" | "order.failed"

export type Refusal = "ORDER_NOT_EXECUTABLE" | "ORDER_EXPIRED" | "ORDER_NOT_CANCELLABLE" | "ORDER_CANCEL_IN_PROGRESS"

export type Outcome =
  | { readonly next: State; readonly events: ReadonlyArray<Event> }
  | { readonly refused: Refusal }
  | { readonly unchanged: true }
  /** The sweep waits: it fires again later (deposit-funded order whose funding is still being checked). */
  | { readonly deferred: true }

export const initialState = (lockExpiresAtMs: number, depositFunded = false): State => ({
  status: "pending",
  executing: false,
  sent: false,
  lockExpiresAtMs,
  cancellationReason: null,
  depositFunded
})

const unchanged = { unchanged: true } as const

/** The statuses an order ends in: no move changes it from there. */
export const endedStatuses: ReadonlySet<OrderStatus> = new Set(["succeeded", "failed", "cancelled"])

export const transition = (state: State, move: Move): Outcome => {
  const pending = !endedStatuses.has(state.status)
  switch (move.type) {
    case "execute":
      if (state.status === "cancelled" && state.cancellationReason === "expired") return { refused: "ORDER_EXPIRED" }
      if (!pending || state.executing) return { refused: "ORDER_NOT_EXECUTABLE" }
      if (move.nowMs >= state.lockExpiresAtMs && !state.depositFunded) return { refused: "ORDER_EXPIRED" }
      return { next: { ...state, executing: true }, events: [] }
    case "cancel":
      if (state.status === "cancelled") return unchanged
      if (!pending) return { refused: "ORDER_NOT_CANCELLABLE" }
      if (state.sent) return { refused: "ORDER_CANCEL_IN_PROGRESS" }
      return { next: { ...state, status: "cancelled", cancellationReason: "client_cancelled" }, events: ["order.cancelled"] }
    case "expire":
      if (!pending || state.executing || move.nowMs < state.lockExpiresAtMs) return unchanged
      if (state.depositFunded && move.fundingBeingChecked === true) return { deferred: true }
      return { next: { ...state, status: "cancelled", cancellationReason: "expired" }, events: ["order.cancelled"] }
    case "send":
      return pending && state.executing && !state.sent ? { next: { ...state, sent: true }, events: [] } : unchanged
    case "succeed":
      return pending && state.executing ? { next: { ...state, status: "succeeded" }, events: ["order.succeeded"] } : unchanged
    case "fail":
      return pending ? { next: { ...state, status: "failed" }, events: ["order.failed"] } : unchanged
  }
}

/** Whether `move` moves `state` (rather than being refused, changing nothing, or waiting). */
export const moves = (state: State, move: Move): boolean => "next" in transition(state, move)
