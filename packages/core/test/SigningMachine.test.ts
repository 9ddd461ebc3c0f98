import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as SigningMachine from "../src/signing/SigningMachine.ts"

const walk = (state: SigningMachine.State, ...path: ReadonlyArray<SigningMachine.Move>) => {
  const events: Array<string> = []
  for (const move of path) {
    const outcome = SigningMachine.transition(state, move)
    if ("refused" in outcome) throw new Error(`${move.type} refused with ${outcome.refused}: ${outcome.reason}`)
    events.push(...outcome.events)
    state = outcome.next
  }
  return { state, events }
}

const refusal = (outcome: SigningMachine.Outcome) => ("refused" in outcome ? outcome.refused : "accepted")

const twoOfThree = SigningMachine.initialState(2, 3)
const start: SigningMachine.Move = { type: "start", seatFree: true, poolSize: 3 }
const stamp = (signerId: string, inPool = true): SigningMachine.Move => ({ type: "stamp", signerId, inPool })
const expire: SigningMachine.Move = { type: "window_expired" }

const allMoves: ReadonlyArray<SigningMachine.Move> = [
  start,
  { type: "start", seatFree: false, poolSize: 3, queuePosition: 1 },
  { type: "queue_advance", queuePosition: 1 },
  { type: "seat" },
  { type: "queue_timeout" },
  stamp("wsg_a"),
  expire,
  { type: "decline", signerId: "wsg_a", inPool: true },
  { type: "roster_changed", signerId: "wsg_a", poolSize: 0 },
  { type: "wallet_frozen" }
]

describe("the signing table", () => {
  it("reaches quorum on a 2-of-3 roster: awaiting_signature, a signature_collected per stamp, then quorum_met", () => {
    const { state, events } = walk(twoOfThree, start, stamp("wsg_a"), stamp("wsg_b"))
    expect(events).toEqual(["awaiting_signature", "signature_collected", "signature_collected", "quorum_met"])
    expect(state).toMatchObject({ phase: "quorum_met", attempt: 1, collected: ["wsg_a", "wsg_b"], failureCode: null })
  })

  it("refuses a stamp twice from one signer, or from outside the signing pool", () => {
    const { state } = walk(twoOfThree, start, stamp("wsg_a"))
    expect(refusal(SigningMachine.transition(state, stamp("wsg_a")))).toBe("CONFLICT")
    expect(refusal(SigningMachine.transition(state, stamp("wsg_z", false)))).toBe("CONFLICT")
    expect(refusal(SigningMachine.transition(state, { type: "decline", signerId: "wsg_z", inPool: false }))).toBe("CONFLICT")
  })

  it("opens a new attempt when a window expires with attempts left, voiding its stamps; the final attempt's expiry fails it user_signature_expired", () => {
    const second = walk(twoOfThree, start, stamp("wsg_a"), expire)
    expect(second.state).toMatchObject({ phase: "awaiting_signature", attempt: 2, collected: [] })
    expect(second.events.at(-1)).toBe("awaiting_signature")
    // The stamp of attempt 1 does not count in attempt 2: the same signer stamps again.
    expect(walk(second.state, stamp("wsg_a")).state.collected).toEqual(["wsg_a"])
    const last = walk(second.state, expire)
    expect(last.state.attempt).toBe(3)
    const failed = walk(last.state, expire)
    expect(failed).toMatchObject({ state: { phase: "failed", failureCode: "user_signature_expired", collected: [] }, events: ["failed"] })
  })

  it("fails on a decline (user_signature_declined)", () => {
    expect(walk(twoOfThree, start, stamp("wsg_a"), { type: "decline", signerId: "wsg_b", inPool: true })).toMatchObject({
      state: { phase: "failed", failureCode: "user_signature_declined", collected: [] },
      events: ["awaiting_signature", "signature_collected", "failed"]
    })
  })

  it("fails on a roster change that voids a stamp or leaves too few signers (roster_changed); otherwise keeps waiting", () => {
    const stamped = walk(twoOfThree, start, stamp("wsg_a")).state
    expect(walk(stamped, { type: "roster_changed", signerId: "wsg_a", poolSize: 2 })).toMatchObject({
      state: { phase: "failed", failureCode: "roster_changed", collected: [] },
      events: ["failed"]
    })
    expect(walk(stamped, { type: "roster_changed", signerId: "wsg_c", poolSize: 1 }).state.failureCode).toBe("roster_changed")
    expect(walk(stamped, { type: "roster_changed", signerId: "wsg_c", poolSize: 2 })).toEqual({ state: stamped, events: [] })
  })

  it("fails a queued transfer the pool left can no longer sign, and one that starts with too small a pool, without a window", () => {
    const queued = walk(twoOfThree, { type: "start", seatFree: false, poolSize: 3, queuePosition: 1 }).state
    expect(walk(queued, { type: "roster_changed", signerId: "wsg_a", poolSize: 2 })).toEqual({ state: queued, events: [] })
    expect(walk(queued, { type: "roster_changed", signerId: "wsg_a", poolSize: 1 })).toMatchObject({
      state: { phase: "failed", failureCode: "roster_changed", queuePosition: null },
      events: ["failed"]
    })
    for (const seatFree of [true, false]) {
      expect(walk(twoOfThree, { type: "start", seatFree, poolSize: 1, queuePosition: 1 })).toMatchObject({
        state: { phase: "failed", failureCode: "roster_changed", attempt: 0 },
        events: ["failed"]
      })
    }
    expect(walk(twoOfThree, { type: "start", seatFree: true, poolSize: 2 }).events).toEqual(["awaiting_signature"])
  })

  it("queues a transfer that finds the seat taken: queue_position_changed on entry and each move forward, none on taking the seat", () => {
    const { state, events } = walk(twoOfThree, { type: "start", seatFree: false, poolSize: 3, queuePosition: 2 }, { type: "queue_advance", queuePosition: 1 }, { type: "seat" })
    expect(events).toEqual(["queue_position_changed", "queue_position_changed", "awaiting_signature"])
    expect(state).toMatchObject({ phase: "awaiting_signature", queuePosition: null, attempt: 1 })
    // A transfer that gets the seat at once never hears of the queue.
    expect(walk(twoOfThree, start).events).toEqual(["awaiting_signature"])
    const queued = walk(twoOfThree, { type: "start", seatFree: false, poolSize: 3, queuePosition: 2 }).state
    expect(queued.queuePosition).toBe(2)
    expect(refusal(SigningMachine.transition(queued, { type: "queue_advance", queuePosition: 2 }))).toBe("CONFLICT")
    expect(refusal(SigningMachine.transition(queued, { type: "queue_advance", queuePosition: 3 }))).toBe("CONFLICT")
    expect(refusal(SigningMachine.transition(queued, { type: "queue_advance", queuePosition: 0 }))).toBe("CONFLICT")
    expect(refusal(SigningMachine.transition(twoOfThree, { type: "start", seatFree: false, poolSize: 3 }))).toBe("CONFLICT")
    expect(walk(queued, { type: "queue_timeout" })).toMatchObject({ state: { phase: "failed", failureCode: "user_signature_timeout", queuePosition: null }, events: ["failed"] })
  })

  it("fails whatever signs from a wallet the provider froze, started or not, with crypto_wallet_misconfigured", () => {
    const phases = [twoOfThree, walk(twoOfThree, { type: "start", seatFree: false, poolSize: 3, queuePosition: 2 }).state, walk(twoOfThree, start, stamp("wsg_a")).state]
    for (const state of phases) {
      expect(walk(state, { type: "wallet_frozen" })).toMatchObject({
        state: { phase: "failed", failureCode: "crypto_wallet_misconfigured", queuePosition: null, collected: [] },
        events: ["failed"]
      })
    }
  })

  it("refuses what each phase does not allow", () => {
    const phases: Record<string, SigningMachine.State> = {
      not_started: twoOfThree,
      queued: walk(twoOfThree, { type: "start", seatFree: false, poolSize: 3, queuePosition: 3 }).state,
      awaiting_signature: walk(twoOfThree, start).state
    }
    const allowed: Record<string, ReadonlyArray<string>> = {
      not_started: ["start", "wallet_frozen"],
      queued: ["queue_advance", "seat", "queue_timeout", "roster_changed", "wallet_frozen"],
      awaiting_signature: ["stamp", "window_expired", "decline", "roster_changed", "wallet_frozen"]
    }
    for (const [phase, state] of Object.entries(phases)) {
      for (const move of allMoves) {
        expect(refusal(SigningMachine.transition(state, move)), `${phase} ${move.type}`).toBe(allowed[phase]!.includes(move.type) ? "accepted" : "CONFLICT")
      }
    }
  })

  it("refuses every move once signing is over, quorum met or failed", () => {
    const over = [walk(twoOfThree, start, stamp("wsg_a"), stamp("wsg_b")).state, walk(twoOfThree, start, { type: "decline", signerId: "wsg_a", inPool: true }).state]
    for (const state of over) for (const move of allMoves) expect(refusal(SigningMachine.transition(state, move)), move.type).toBe("RESOURCE_TERMINAL")
  })

  it("derives the signing mode from the pool, and pairs awaiting_signature with the deprecated event while the window lasts", () => {
    expect(SigningMachine.signingModeOf({ passkeySigners: 3, machineSigners: 0 })).toBe("passkey_required")
    expect(SigningMachine.signingModeOf({ passkeySigners: 2, machineSigners: 1 })).toBe("programmatic")
    expect(SigningMachine.signingModeOf({ passkeySigners: 0, machineSigners: 2 })).toBe("programmatic_unattended")
    const events = ["awaiting_signature", "signature_collected"] as const
    expect(SigningMachine.withDeprecatedEvents(events, 99, 100)).toEqual(["awaiting_signature", "awaiting_user_signature", "signature_collected"])
    expect(SigningMachine.withDeprecatedEvents(events, 100, 100)).toEqual(events)
  })
})

describe("the signing table's invariants, over random move sequences", () => {
  const signer = fc.constantFrom("wsg_a", "wsg_b", "wsg_c")
  const moveArb: fc.Arbitrary<SigningMachine.Move> = fc.oneof(
    fc.record({ type: fc.constant("start" as const), seatFree: fc.boolean(), queuePosition: fc.integer({ min: 0, max: 4 }), poolSize: fc.integer({ min: 0, max: 3 }) }),
    fc.record({ type: fc.constant("queue_advance" as const), queuePosition: fc.integer({ min: 0, max: 4 }) }),
    fc.constantFrom<SigningMachine.Move>({ type: "seat" }, { type: "queue_timeout" }, { type: "window_expired" }, { type: "wallet_frozen" }),
    fc.record({ type: fc.constant("stamp" as const), signerId: signer, inPool: fc.boolean() }),
    fc.record({ type: fc.constant("decline" as const), signerId: signer, inPool: fc.boolean() }),
    fc.record({ type: fc.constant("roster_changed" as const), signerId: signer, poolSize: fc.integer({ min: 0, max: 3 }) })
  )

  it("never collects a quorum it does not report, never passes its last attempt, and fails with a code", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 4 }), fc.array(moveArb, { maxLength: 40 }), (required, maxAttempts, path) => {
        let state = SigningMachine.initialState(required, maxAttempts)
        let quorumEvents = 0
        for (const move of path) {
          const outcome = SigningMachine.transition(state, move)
          if ("refused" in outcome) continue
          const previous = state
          state = outcome.next
          quorumEvents += outcome.events.filter((e) => e === "quorum_met").length
          expect(state.attempt).toBeLessThanOrEqual(maxAttempts)
          expect(new Set(state.collected).size).toBe(state.collected.length)
          expect(state.phase === "quorum_met").toBe(state.collected.length >= required)
          expect(state.failureCode !== null).toBe(state.phase === "failed")
          expect(state.queuePosition !== null).toBe(state.phase === "queued")
          if (previous.phase === "queued" && state.phase === "queued" && outcome.events.length > 0) expect(state.queuePosition!).toBeLessThan(previous.queuePosition!)
          // A new attempt starts empty.
          if (state.attempt > previous.attempt) expect(state.collected).toEqual([])
        }
        expect(quorumEvents).toBe(state.phase === "quorum_met" ? 1 : 0)
      })
    )
  })
})
