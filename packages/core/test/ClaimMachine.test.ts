import { describe, expect, it } from "vitest"
import * as ClaimMachine from "../src/signing/ClaimMachine.ts"

const provisioned: ClaimMachine.ClaimMove = { type: "provisioned" }
const provisioningFailed: ClaimMachine.ClaimMove = { type: "provisioning_failed" }
const resolve = (rosterSize = 3, rosterActive = true): ClaimMachine.ClaimMove => ({ type: "resolve", rosterSize, rosterActive })
const allMoves: ReadonlyArray<ClaimMachine.ClaimMove> = [provisioned, provisioningFailed, resolve()]

const walk = (state: ClaimMachine.ClaimState, ...path: ReadonlyArray<ClaimMachine.ClaimMove>) => {
  const events: Array<string> = []
  for (const move of path) {
    const outcome = ClaimMachine.claimTransition(state, move)
    if ("refused" in outcome) throw new Error(`${move.type} refused with ${outcome.refused}: ${outcome.reason}`)
    events.push(...outcome.events)
    state = outcome.next
  }
  return { state, events }
}

const refusal = (outcome: ClaimMachine.ClaimOutcome) => ("refused" in outcome ? outcome.refused : "accepted")

describe("the claim table", () => {
  it("accepts a claim pending and unprovisioned", () => {
    expect(ClaimMachine.initialClaim).toEqual({ status: "pending", provisioned: false })
  })

  it("resolves once provisioned and every signer of the roster can act: claim.completed, then crypto_wallet.completed", () => {
    expect(walk(ClaimMachine.initialClaim, provisioned)).toEqual({ state: { status: "pending", provisioned: true }, events: [] })
    expect(walk(ClaimMachine.initialClaim, provisioned, resolve())).toEqual({
      state: { status: "completed", provisioned: true },
      events: ["claim.completed", "crypto_wallet.completed"]
    })
  })

  it("fails when provisioning fails: claim.failed", () => {
    expect(walk(ClaimMachine.initialClaim, provisioningFailed)).toEqual({ state: { status: "failed", provisioned: false }, events: ["claim.failed"] })
  })

  it("refuses to resolve before it is provisioned, with an empty roster, or with a signer not yet enrolled", () => {
    expect(refusal(ClaimMachine.claimTransition(ClaimMachine.initialClaim, resolve()))).toBe("CONFLICT")
    const ready = walk(ClaimMachine.initialClaim, provisioned).state
    expect(refusal(ClaimMachine.claimTransition(ready, resolve(0, true)))).toBe("CONFLICT")
    expect(refusal(ClaimMachine.claimTransition(ready, resolve(3, false)))).toBe("CONFLICT")
  })

  it("refuses provisioning twice, or failing provisioning once provisioned, with CONFLICT", () => {
    const ready = walk(ClaimMachine.initialClaim, provisioned).state
    expect(refusal(ClaimMachine.claimTransition(ready, provisioned))).toBe("CONFLICT")
    expect(refusal(ClaimMachine.claimTransition(ready, provisioningFailed))).toBe("CONFLICT")
  })

  it("refuses every move on a completed or failed claim with RESOURCE_TERMINAL", () => {
    for (const ended of [walk(ClaimMachine.initialClaim, provisioned, resolve()).state, walk(ClaimMachine.initialClaim, provisioningFailed).state]) {
      for (const move of allMoves) expect(refusal(ClaimMachine.claimTransition(ended, move)), `${ended.status} ${move.type}`).toBe("RESOURCE_TERMINAL")
    }
  })
})
