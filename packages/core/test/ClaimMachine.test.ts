import { describe, expect, it } from "vitest"
import * as ClaimMachine from "../src/signing/ClaimMachine.ts"

const provisioned: ClaimMachine.Move = { type: "provisioned" }
const provisioningFailed: ClaimMachine.Move = { type: "provisioning_failed" }
const resolve = (rosterSize = 3, rosterActive = true): ClaimMachine.Move => ({ type: "resolve", rosterSize, rosterActive })
const allMoves: ReadonlyArray<ClaimMachine.Move> = [provisioned, provisioningFailed, resolve()]

const walk = (state: ClaimMachine.State, ...path: ReadonlyArray<ClaimMachine.Move>) => {
  const events: Array<string> = []
  for (const move of path) {
    const outcome = ClaimMachine.transition(state, move)
    if ("refused" in outcome) throw new Error(`${move.type} refused with ${outcome.refused}: ${outcome.reason}`)
    events.push(...outcome.events)
    state = outcome.next
  }
  return { state, events }
}

const refusal = (outcome: ClaimMachine.Outcome) => ("refused" in outcome ? outcome.refused : "accepted")

describe("the claim table", () => {
  it("accepts a claim pending and unprovisioned", () => {
    expect(ClaimMachine.initialState).toEqual({ status: "pending", provisioned: false })
  })

  it("resolves once provisioned and every signer of the roster can act: claim.completed, then crypto_wallet.completed", () => {
    expect(walk(ClaimMachine.initialState, provisioned)).toEqual({ state: { status: "pending", provisioned: true }, events: [] })
    expect(walk(ClaimMachine.initialState, provisioned, resolve())).toEqual({
      state: { status: "completed", provisioned: true },
      events: ["claim.completed", "crypto_wallet.completed"]
    })
  })

  it("fails when provisioning fails: claim.failed", () => {
    expect(walk(ClaimMachine.initialState, provisioningFailed)).toEqual({ state: { status: "failed", provisioned: false }, events: ["claim.failed"] })
  })

  it("refuses to resolve before it is provisioned, with an empty roster, or with a signer not yet enrolled", () => {
    expect(refusal(ClaimMachine.transition(ClaimMachine.initialState, resolve()))).toBe("CONFLICT")
    const ready = walk(ClaimMachine.initialState, provisioned).state
    expect(refusal(ClaimMachine.transition(ready, resolve(0, true)))).toBe("CONFLICT")
    expect(refusal(ClaimMachine.transition(ready, resolve(3, false)))).toBe("CONFLICT")
  })

  it("refuses provisioning twice, or failing provisioning once provisioned, with CONFLICT", () => {
    const ready = walk(ClaimMachine.initialState, provisioned).state
    expect(refusal(ClaimMachine.transition(ready, provisioned))).toBe("CONFLICT")
    expect(refusal(ClaimMachine.transition(ready, provisioningFailed))).toBe("CONFLICT")
  })

  it("refuses every move on a completed or failed claim with RESOURCE_TERMINAL", () => {
    for (const ended of [walk(ClaimMachine.initialState, provisioned, resolve()).state, walk(ClaimMachine.initialState, provisioningFailed).state]) {
      for (const move of allMoves) expect(refusal(ClaimMachine.transition(ended, move)), `${ended.status} ${move.type}`).toBe("RESOURCE_TERMINAL")
    }
  })
})
