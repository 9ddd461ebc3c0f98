import { describe, expect, it } from "vitest"
import { initialOrderState, type OrderMove, type OrderState, orderTransition } from "../src/money/OrderMachine.ts"

const lock = 1_000
const before = lock - 1

const pending = initialOrderState(lock)
const executing: OrderState = { ...pending, executing: true }
const sent: OrderState = { ...executing, sent: true }
const succeeded: OrderState = { ...sent, status: "succeeded" }
const failed: OrderState = { ...sent, status: "failed" }
const cancelled: OrderState = { ...pending, status: "cancelled", cancellationReason: "client_cancelled" }
const expired: OrderState = { ...pending, status: "cancelled", cancellationReason: "expired" }

const moves: ReadonlyArray<OrderMove> = [
  { type: "execute", nowMs: before },
  { type: "cancel" },
  { type: "expire", nowMs: lock },
  { type: "send" },
  { type: "succeed" },
  { type: "fail" }
]

describe("the order state table", () => {
  it("starts pending, not executing, with its lock", () => {
    expect(pending).toEqual({ status: "pending", executing: false, sent: false, lockExpiresAtMs: lock, cancellationReason: null, depositFunded: false })
  })

  it("claims execution of a pending order before its lock passes, with no event", () => {
    expect(orderTransition(pending, { type: "execute", nowMs: before })).toEqual({ next: executing, event: undefined })
  })

  it("refuses execution once the lock passed (ORDER_EXPIRED), of an executing or ended order (ORDER_NOT_EXECUTABLE), and of an expired one (ORDER_EXPIRED)", () => {
    expect(orderTransition(pending, { type: "execute", nowMs: lock })).toEqual({ refused: "ORDER_EXPIRED" })
    expect(orderTransition(expired, { type: "execute", nowMs: before })).toEqual({ refused: "ORDER_EXPIRED" })
    for (const state of [executing, sent, succeeded, failed, cancelled]) {
      expect(orderTransition(state, { type: "execute", nowMs: before })).toEqual({ refused: "ORDER_NOT_EXECUTABLE" })
    }
  })

  it("executes a deposit-funded order whose funding arrived in time past its funding deadline: the sweep, not the clock, ends it", () => {
    const funded = initialOrderState(lock, true)
    expect(orderTransition(funded, { type: "execute", nowMs: lock + 60_000 })).toEqual({ next: { ...funded, executing: true }, event: undefined })
  })

  it("cancels a pending order, executing or not, while its source transfer is not sent (reason client_cancelled)", () => {
    for (const state of [pending, executing]) {
      expect(orderTransition(state, { type: "cancel" })).toEqual({
        next: { ...state, status: "cancelled", cancellationReason: "client_cancelled" },
        event: "order.cancelled"
      })
    }
  })

  it("answers a cancel of a cancelled order unchanged, refuses it once the source transfer is sent (transient) and on an ended order", () => {
    expect(orderTransition(cancelled, { type: "cancel" })).toEqual({ unchanged: true })
    expect(orderTransition(expired, { type: "cancel" })).toEqual({ unchanged: true })
    expect(orderTransition(sent, { type: "cancel" })).toEqual({ refused: "ORDER_CANCEL_IN_PROGRESS" })
    expect(orderTransition(succeeded, { type: "cancel" })).toEqual({ refused: "ORDER_NOT_CANCELLABLE" })
    expect(orderTransition(failed, { type: "cancel" })).toEqual({ refused: "ORDER_NOT_CANCELLABLE" })
  })

  it("sweeps a pending order whose lock passed before execution was claimed into cancelled (reason expired), and nothing else", () => {
    expect(orderTransition(pending, { type: "expire", nowMs: lock })).toEqual({
      next: { ...pending, status: "cancelled", cancellationReason: "expired" },
      event: "order.cancelled"
    })
    expect(orderTransition(pending, { type: "expire", nowMs: before })).toEqual({ unchanged: true })
    for (const state of [executing, sent, succeeded, failed, cancelled, expired]) {
      expect(orderTransition(state, { type: "expire", nowMs: lock + 1 })).toEqual({ unchanged: true })
    }
  })

  it("sends an executing order's source transfer once, then succeeds it (order.succeeded)", () => {
    expect(orderTransition(executing, { type: "send" })).toEqual({ next: sent, event: undefined })
    expect(orderTransition(sent, { type: "send" })).toEqual({ unchanged: true })
    expect(orderTransition(sent, { type: "succeed" })).toEqual({ next: succeeded, event: "order.succeeded" })
    expect(orderTransition(executing, { type: "succeed" })).toEqual({ next: { ...executing, status: "succeeded" }, event: "order.succeeded" })
    expect(orderTransition(pending, { type: "succeed" })).toEqual({ unchanged: true })
    expect(orderTransition(pending, { type: "send" })).toEqual({ unchanged: true })
  })

  it("fails a pending order, executing or not (order.failed)", () => {
    for (const state of [pending, executing, sent]) {
      expect(orderTransition(state, { type: "fail" })).toEqual({ next: { ...state, status: "failed" }, event: "order.failed" })
    }
  })

  it("leaves every ended order as it is under the engine's own moves", () => {
    for (const state of [succeeded, failed, cancelled, expired]) {
      for (const move of moves.filter((m) => m.type !== "execute" && m.type !== "cancel")) {
        expect(orderTransition(state, move), `${state.status} ${move.type}`).toEqual({ unchanged: true })
      }
    }
  })
})
