import { describe, expect, it } from "vitest"
import { type ClaimMove, type ClaimOutcome, type ClaimState, claimTransition, initialClaim } from "../src/signing/ClaimMachine.ts"

const provisioned: ClaimMove = { type: "provisioned" }
const provisioningFailed: ClaimMove = { type: "provisioning_failed" }
const resolve = (rosterSize = 3, rosterActive = true): ClaimMove => ({ type: "resolve", rosterSize, rosterActive })
const allMoves: ReadonlyArray<ClaimMove> = [provisioned, provisioningFailed, resolve()]

const walk = (state: ClaimState, ...path: ReadonlyArray<ClaimMove>) => {
  const events: Array<string> = []
  for (const move of path) {
    const outcome = claimTransition(state, move)
    if ("refused" in outcome) throw new Error(`${move.type} refused with ${outcome.refused}: ${outcome.reason}`)
    events.push(...outcome.events)
    state = outcome.next
  }
  return { state, events }
}

const refusal = (outcome: ClaimOutcome) => ("refused" in outcome ? outcome.refused : "accepted")

describe("the claim table", () => {
  it("accepts a claim pending and unprovisioned", () => {
    expect(initialClaim).toEqual({ status: "pending", provisioned: false })
  })

  it("resolves once provisioned and every signer of the roster can act: claim.completed, then crypto_wallet.completed", () => {
    expect(walk(initialClaim, provisioned)).toEqual({ state: { status: "pending", provisioned: true }, events: [] })
    expect(walk(initialClaim, provisioned, resolve())).toEqual({
      state: { status: "completed", provisioned: true },
      events: ["claim.completed", "crypto_wallet.completed"]
    })
  })

  it("fails when provisioning fails: claim.failed", () => {
    expect(walk(initialClaim, provisioningFailed)).toEqual({ state: { status: "failed", provisioned: false }, events: ["claim.failed"] })
  })

  it("refuses to resolve before it is provisioned, with an empty roster, or with a signer not yet enrolled", () => {
    expect(refusal(claimTransition(initialClaim, resolve()))).toBe("CONFLICT")
    const ready = walk(initialClaim, provisioned).state
    expect(refusal(claimTransition(ready, resolve(0, true)))).toBe("CONFLICT")
    expect(refusal(claimTransition(ready, resolve(3, false)))).toBe("CONFLICT")
  })

  it("refuses provisioning twice, or failing provisioning once provisioned, with CONFLICT", () => {
    const ready = walk(initialClaim, provisioned).state
    expect(refusal(claimTransition(ready, provisioned))).toBe("CONFLICT")
    expect(refusal(claimTransition(ready, provisioningFailed))).toBe("CONFLICT")
  })

  it("refuses every move on a completed or failed claim with RESOURCE_TERMINAL", () => {
    for (const ended of [walk(initialClaim, provisioned, resolve()).state, walk(initialClaim, provisioningFailed).state]) {
      for (const move of allMoves) expect(refusal(claimTransition(ended, move)), `${ended.status} ${move.type}`).toBe("RESOURCE_TERMINAL")
    }
  })
})
