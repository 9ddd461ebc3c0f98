import { describe, expect, it } from "vitest"
import * as OrderMachine from "../src/money/OrderMachine.ts"

const lock = 1_000
const before = lock - 1

const pending = OrderMachine.initialState(lock)
const executing: OrderMachine.State = { ...pending, executing: true }
const sent: OrderMachine.State = { ...executing, sent: true }
const succeeded: OrderMachine.State = { ...sent, status: "succeeded" }
const failed: OrderMachine.State = { ...sent, status: "failed" }
const cancelled: OrderMachine.State = { ...pending, status: "cancelled", cancellationReason: "client_cancelled" }
const expired: OrderMachine.State = { ...pending, status: "cancelled", cancellationReason: "expired" }

const moves: ReadonlyArray<OrderMachine.Move> = [
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
    expect(OrderMachine.transition(pending, { type: "execute", nowMs: before })).toEqual({ next: executing, events: [] })
  })

  it("refuses execution once the lock passed (ORDER_EXPIRED), of an executing or ended order (ORDER_NOT_EXECUTABLE), and of an expired one (ORDER_EXPIRED)", () => {
    expect(OrderMachine.transition(pending, { type: "execute", nowMs: lock })).toEqual({ refused: "ORDER_EXPIRED" })
    expect(OrderMachine.transition(expired, { type: "execute", nowMs: before })).toEqual({ refused: "ORDER_EXPIRED" })
    for (const state of [executing, sent, succeeded, failed, cancelled]) {
      expect(OrderMachine.transition(state, { type: "execute", nowMs: before })).toEqual({ refused: "ORDER_NOT_EXECUTABLE" })
    }
  })

  it("executes a deposit-funded order whose funding arrived in time past its funding deadline: the sweep, not the clock, ends it", () => {
    const funded = OrderMachine.initialState(lock, true)
    expect(OrderMachine.transition(funded, { type: "execute", nowMs: lock + 60_000 })).toEqual({ next: { ...funded, executing: true }, events: [] })
  })

  it("cancels a pending order, executing or not, while its source transfer is not sent (reason client_cancelled)", () => {
    for (const state of [pending, executing]) {
      expect(OrderMachine.transition(state, { type: "cancel" })).toEqual({
        next: { ...state, status: "cancelled", cancellationReason: "client_cancelled" },
        events: ["order.cancelled"]
      })
    }
  })

  it("answers a cancel of a cancelled order unchanged, refuses it once the source transfer is sent (transient) and on an ended order", () => {
    expect(OrderMachine.transition(cancelled, { type: "cancel" })).toEqual({ unchanged: true })
    expect(OrderMachine.transition(expired, { type: "cancel" })).toEqual({ unchanged: true })
    expect(OrderMachine.transition(sent, { type: "cancel" })).toEqual({ refused: "ORDER_CANCEL_IN_PROGRESS" })
    expect(OrderMachine.transition(succeeded, { type: "cancel" })).toEqual({ refused: "ORDER_NOT_CANCELLABLE" })
    expect(OrderMachine.transition(failed, { type: "cancel" })).toEqual({ refused: "ORDER_NOT_CANCELLABLE" })
  })

  it("sweeps a pending order whose lock passed before execution was claimed into cancelled (reason expired), and nothing else", () => {
    expect(OrderMachine.transition(pending, { type: "expire", nowMs: lock })).toEqual({
      next: { ...pending, status: "cancelled", cancellationReason: "expired" },
      events: ["order.cancelled"]
    })
    expect(OrderMachine.transition(pending, { type: "expire", nowMs: before })).toEqual({ unchanged: true })
    for (const state of [executing, sent, succeeded, failed, cancelled, expired]) {
      expect(OrderMachine.transition(state, { type: "expire", nowMs: lock + 1 })).toEqual({ unchanged: true })
    }
  })

  it("sends an executing order's source transfer once, then succeeds it (order.succeeded)", () => {
    expect(OrderMachine.transition(executing, { type: "send" })).toEqual({ next: sent, events: [] })
    expect(OrderMachine.transition(sent, { type: "send" })).toEqual({ unchanged: true })
    expect(OrderMachine.transition(sent, { type: "succeed" })).toEqual({ next: succeeded, events: ["order.succeeded"] })
    expect(OrderMachine.transition(executing, { type: "succeed" })).toEqual({ next: { ...executing, status: "succeeded" }, events: ["order.succeeded"] })
    expect(OrderMachine.transition(pending, { type: "succeed" })).toEqual({ unchanged: true })
    expect(OrderMachine.transition(pending, { type: "send" })).toEqual({ unchanged: true })
  })

  it("fails a pending order, executing or not (order.failed)", () => {
    for (const state of [pending, executing, sent]) {
      expect(OrderMachine.transition(state, { type: "fail" })).toEqual({ next: { ...state, status: "failed" }, events: ["order.failed"] })
    }
  })

  it("leaves every ended order as it is under the engine's own moves", () => {
    for (const state of [succeeded, failed, cancelled, expired]) {
      for (const move of moves.filter((m) => m.type !== "execute" && m.type !== "cancel")) {
        expect(OrderMachine.transition(state, move), `${state.status} ${move.type}`).toEqual({ unchanged: true })
      }
    }
  })
})

describe("the order state table, walked whole", () => {
  const funded = OrderMachine.initialState(lock, true)
  const states: Readonly<Record<string, OrderMachine.State>> = { pending, executing, sent, succeeded, failed, cancelled, expired, funded }
  const walked: Readonly<Record<string, OrderMachine.Move>> = {
    "execute before the lock": { type: "execute", nowMs: before },
    "execute at the lock": { type: "execute", nowMs: lock },
    cancel: { type: "cancel" },
    "expire before the lock": { type: "expire", nowMs: before },
    "expire at the lock": { type: "expire", nowMs: lock },
    "expire at the lock, funding being checked": { type: "expire", nowMs: lock, fundingBeingChecked: true },
    send: { type: "send" },
    succeed: { type: "succeed" },
    fail: { type: "fail" }
  }
  const to = (state: OrderMachine.State, next: Partial<OrderMachine.State>, event?: OrderMachine.Event): OrderMachine.Outcome => ({
    next: { ...state, ...next },
    events: event === undefined ? [] : [event]
  })
  const unchanged = { unchanged: true }
  const refused = (code: string) => ({ refused: code })
  const asCancelled = { status: "cancelled", cancellationReason: "client_cancelled" } as const
  const asExpired = { status: "cancelled", cancellationReason: "expired" } as const
  /** Every state under every move: the next state and its event, the refusal, unchanged, or deferred. */
  const table: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
    pending: {
      "execute before the lock": to(pending, { executing: true }),
      "execute at the lock": refused("ORDER_EXPIRED"),
      cancel: to(pending, asCancelled, "order.cancelled"),
      "expire before the lock": unchanged,
      "expire at the lock": to(pending, asExpired, "order.cancelled"),
      // Only a deposit-funded order waits for its funding.
      "expire at the lock, funding being checked": to(pending, asExpired, "order.cancelled"),
      send: unchanged,
      succeed: unchanged,
      fail: to(pending, { status: "failed" }, "order.failed")
    },
    executing: {
      "execute before the lock": refused("ORDER_NOT_EXECUTABLE"),
      "execute at the lock": refused("ORDER_NOT_EXECUTABLE"),
      cancel: to(executing, asCancelled, "order.cancelled"),
      "expire before the lock": unchanged,
      "expire at the lock": unchanged,
      "expire at the lock, funding being checked": unchanged,
      send: to(executing, { sent: true }),
      succeed: to(executing, { status: "succeeded" }, "order.succeeded"),
      fail: to(executing, { status: "failed" }, "order.failed")
    },
    sent: {
      "execute before the lock": refused("ORDER_NOT_EXECUTABLE"),
      "execute at the lock": refused("ORDER_NOT_EXECUTABLE"),
      cancel: refused("ORDER_CANCEL_IN_PROGRESS"),
      "expire before the lock": unchanged,
      "expire at the lock": unchanged,
      "expire at the lock, funding being checked": unchanged,
      send: unchanged,
      succeed: to(sent, { status: "succeeded" }, "order.succeeded"),
      fail: to(sent, { status: "failed" }, "order.failed")
    },
    // An ended order: the engine's moves change nothing; execute is refused, and cancel too unless it was cancelled.
    ...Object.fromEntries(([
      ["succeeded", refused("ORDER_NOT_CANCELLABLE")],
      ["failed", refused("ORDER_NOT_CANCELLABLE")],
      ["cancelled", unchanged],
      ["expired", unchanged]
    ] as const).map(([name, cancel]) => [name, {
      "execute before the lock": refused(name === "expired" ? "ORDER_EXPIRED" : "ORDER_NOT_EXECUTABLE"),
      "execute at the lock": refused(name === "expired" ? "ORDER_EXPIRED" : "ORDER_NOT_EXECUTABLE"),
      cancel,
      "expire before the lock": unchanged,
      "expire at the lock": unchanged,
      "expire at the lock, funding being checked": unchanged,
      send: unchanged,
      succeed: unchanged,
      fail: unchanged
    }])),
    funded: {
      "execute before the lock": to(funded, { executing: true }),
      // Its lockExpiresAt is a funding deadline: a deposit that arrived in time executes it after the deadline.
      "execute at the lock": to(funded, { executing: true }),
      cancel: to(funded, asCancelled, "order.cancelled"),
      "expire before the lock": unchanged,
      "expire at the lock": to(funded, asExpired, "order.cancelled"),
      "expire at the lock, funding being checked": { deferred: true },
      send: unchanged,
      succeed: unchanged,
      fail: to(funded, { status: "failed" }, "order.failed")
    }
  }

  it("answers every move in every state as the table says, refused ones included", () => {
    expect(Object.keys(table).sort()).toEqual(Object.keys(states).sort())
    for (const [stateName, state] of Object.entries(states)) {
      expect(Object.keys(table[stateName]!).sort(), stateName).toEqual(Object.keys(walked).sort())
      for (const [moveName, move] of Object.entries(walked)) {
        const expected = table[stateName]![moveName]
        expect(OrderMachine.transition(state, move), `${stateName}, ${moveName}`).toEqual(expected)
        expect(OrderMachine.moves(state, move), `${stateName}, ${moveName} moves`).toBe("next" in (expected as object))
      }
    }
  })

  it("walks every kind of move", () => {
    const kinds = new Set(Object.values(walked).map((m) => m.type))
    expect([...kinds].sort()).toEqual(["cancel", "execute", "expire", "fail", "send", "succeed"])
  })
})
