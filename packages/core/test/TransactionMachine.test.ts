import { describe, expect, it } from "vitest"
import * as TransactionMachine from "../src/money/TransactionMachine.ts"

const moves: ReadonlyArray<TransactionMachine.Move["type"]> = ["start", "enter_review", "request_information", "clear_review", "send", "settle", "fail", "reject", "cancel", "return"]

/** Applies moves in order, collecting the events; fails the test on a refusal. */
const walk = (state: TransactionMachine.MachineState, ...path: ReadonlyArray<TransactionMachine.Move["type"]>) => {
  const events: Array<string> = []
  for (const type of path) {
    const outcome = TransactionMachine.transition(state, { type })
    if ("refused" in outcome) throw new Error(`${type} refused with ${outcome.refused}`)
    events.push(...outcome.events)
    state = outcome.next
  }
  return { state, events }
}

describe("the transaction state table", () => {
  it("starts a new transaction pending, and moves it to processing once", () => {
    const { state, events } = walk(TransactionMachine.initialState(), "start")
    expect(state.status).toBe("processing")
    expect(events).toEqual(["transaction.processing"])
    expect(TransactionMachine.transition(state, { type: "start" })).toMatchObject({ refused: "SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY" })
  })

  it("ends a non-terminal transaction completed, failed, rejected or cancelled, with its event, and clears its stage", () => {
    for (const from of [walk(TransactionMachine.initialState()).state, walk(TransactionMachine.initialState(), "start").state, walk(TransactionMachine.initialState(), "enter_review").state]) {
      expect(walk(from, "settle")).toMatchObject({ state: { status: "completed", stage: null }, events: ["transaction.completed"] })
      expect(walk(from, "fail")).toMatchObject({ state: { status: "failed", stage: null }, events: ["transaction.failed"] })
      expect(walk(from, "reject")).toMatchObject({ state: { status: "failed", stage: null }, events: ["transaction.rejected"] })
      expect(walk(from, "cancel")).toMatchObject({ state: { status: "cancelled", stage: null }, events: ["transaction.cancelled"] })
    }
  })

  it("refuses every move on a terminal transaction with RESOURCE_TERMINAL", () => {
    for (const end of ["settle", "fail", "reject", "cancel"] as const) {
      const { state } = walk(TransactionMachine.initialState(), end)
      for (const type of moves) {
        // A completed transaction can still be returned by the bank (the one move out of a terminal status).
        if (end === "settle" && type === "return") continue
        expect(TransactionMachine.transition(state, { type }), `${end} then ${type}`).toMatchObject({ refused: "RESOURCE_TERMINAL" })
      }
    }
  })

  it("returns a completed transaction as failed with transaction.failed, and only a completed one", () => {
    const completed = walk(TransactionMachine.initialState(), "start", "send", "settle").state
    expect(walk(completed, "return")).toMatchObject({ state: { status: "failed", stage: null }, events: ["transaction.failed"] })
    expect(TransactionMachine.transition(walk(completed, "return").state, { type: "return" })).toMatchObject({ refused: "RESOURCE_TERMINAL" })
    expect(TransactionMachine.transition(walk(TransactionMachine.initialState(), "start", "send").state, { type: "return" })).toMatchObject({ refused: "SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY" })
  })

  it("says why in words of its own for each move a phase refuses", () => {
    const sent = walk(TransactionMachine.initialState(), "start", "send").state
    const reasons = (["clear_review", "reject", "return", "cancel", "send", "start"] as const).map((type) => {
      const outcome = TransactionMachine.transition(sent, { type })
      return "refused" in outcome ? outcome.reason : `${type} allowed`
    })
    // A processing payout refuses each of them, and no two say the same.
    expect(new Set(reasons).size).toBe(reasons.length)
    for (const reason of reasons) expect(reason).toMatch(/^The transaction .+\.$|^Only a completed transaction can be returned\.$/)
  })

  it("fires transaction.under_review once per review period", () => {
    // The first review opens a period; leaving and re-entering review does not open another.
    expect(walk(TransactionMachine.initialState(), "enter_review").events).toEqual(["transaction.under_review"])
    expect(walk(TransactionMachine.initialState(), "enter_review", "clear_review", "enter_review").events).toEqual(["transaction.under_review"])
    // Asking the caller for something, then reviewing again, is a new period.
    expect(walk(TransactionMachine.initialState(), "enter_review", "request_information", "enter_review").events)
      .toEqual(["transaction.under_review", "transaction.under_review"])
    expect(walk(TransactionMachine.initialState(), "enter_review", "request_information", "clear_review", "enter_review").events)
      .toEqual(["transaction.under_review"])
    // So is a review after the transaction was sent to the bank.
    expect(walk(TransactionMachine.initialState(), "enter_review", "clear_review", "send", "enter_review").events)
      .toEqual(["transaction.under_review", "transaction.under_review"])
    // A transaction created in review starts its first period only when it enters one.
    expect(walk(TransactionMachine.initialState("under_review"), "clear_review", "enter_review").events).toEqual(["transaction.under_review"])
  })

  it("refuses moves the phase does not allow", () => {
    const notReady = { refused: "SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY" }
    expect(TransactionMachine.transition(walk(TransactionMachine.initialState(), "enter_review").state, { type: "enter_review" })).toMatchObject(notReady)
    expect(TransactionMachine.transition(walk(TransactionMachine.initialState(), "request_information").state, { type: "request_information" })).toMatchObject(notReady)
    expect(TransactionMachine.transition(TransactionMachine.initialState(), { type: "clear_review" })).toMatchObject(notReady)
    const sent = walk(TransactionMachine.initialState(), "start", "send").state
    expect(TransactionMachine.transition(sent, { type: "send" })).toMatchObject(notReady)
    // Once sent, a payout can no longer be rejected or cancelled; it can still settle or fail.
    expect(TransactionMachine.transition(sent, { type: "reject" })).toMatchObject(notReady)
    expect(TransactionMachine.transition(sent, { type: "cancel" })).toMatchObject(notReady)
    expect(walk(sent, "fail").events).toEqual(["transaction.failed"])
  })

  it("answers every move from every reachable state (no move is left undecided)", () => {
    const seen = new Map<string, TransactionMachine.MachineState>()
    const queue = [TransactionMachine.initialState(), TransactionMachine.initialState("under_review"), TransactionMachine.initialState("awaiting_customer_action")]
    while (queue.length > 0) {
      const state = queue.pop()!
      const key = JSON.stringify(state)
      if (seen.has(key)) continue
      seen.set(key, state)
      for (const type of moves) {
        const outcome = TransactionMachine.transition(state, { type })
        expect("refused" in outcome || "next" in outcome).toBe(true)
        if ("next" in outcome) {
          // Every status event is emitted by a move that changed the status or entered review.
          for (const event of outcome.events) expect(event.startsWith("transaction.")).toBe(true)
          queue.push(outcome.next)
        }
      }
    }
    expect(seen.size).toBeGreaterThan(10)
  })
})
