import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as SignerMachine from "../src/signing/SignerMachine.ts"

const allMoves: ReadonlyArray<SignerMachine.Move> = [
  { type: "invite", role: "signer", credentialType: "passkey" },
  { type: "enroll", passkeyCount: 1 },
  { type: "add_passkey" },
  { type: "start_ceremony", ceremony: "signer_promotion" },
  { type: "start_ceremony", ceremony: "signer_demotion" },
  { type: "start_ceremony", ceremony: "signer_removal" },
  { type: "approve_ceremony" },
  { type: "decline_ceremony" },
  { type: "expire_ceremony" },
  { type: "reissue_approval" },
  { type: "ops_remove" }
]

const empty: SignerMachine.RosterState = { signer: undefined, ceremony: undefined, otherAdmins: 1 }

/** Applies moves in order, collecting the events; fails the test on a refusal. */
const walk = (state: SignerMachine.RosterState, ...path: ReadonlyArray<SignerMachine.Move>) => {
  const events: Array<string> = []
  for (const move of path) {
    const outcome = SignerMachine.transition(state, move)
    if ("refused" in outcome) throw new Error(`${move.type} refused with ${outcome.refused}: ${outcome.reason}`)
    events.push(...outcome.events)
    state = { ...state, ...outcome.next }
  }
  return { state, events }
}

const refusal = (outcome: SignerMachine.Outcome) => ("refused" in outcome ? outcome.refused : "accepted")

const invite = (role: "signer" | "admin" = "signer", credentialType: "passkey" | "api_key" = "passkey"): SignerMachine.Move => ({ type: "invite", role, credentialType })
const enroll = (passkeyCount: number): SignerMachine.Move => ({ type: "enroll", passkeyCount })
const start = (ceremony: "signer_promotion" | "signer_demotion" | "signer_removal"): SignerMachine.Move => ({ type: "start_ceremony", ceremony })
const approve: SignerMachine.Move = { type: "approve_ceremony" }

describe("the signer table", () => {
  it("invites a new signer into pending_activation with wallet_signer.added and wallet_signer.invited, once", () => {
    const { state, events } = walk(empty, invite("admin", "api_key"))
    expect(state.signer).toEqual({ status: "pending_activation", role: "admin", credentialType: "api_key", passkeyCount: 0 })
    expect(events).toEqual(["wallet_signer.added", "wallet_signer.invited"])
    expect(refusal(SignerMachine.transition(state, invite()))).toBe("CONFLICT")
  })

  it("refuses every move but the invite before there is a signer", () => {
    for (const move of allMoves.filter((m) => m.type !== "invite")) expect(refusal(SignerMachine.transition(empty, move)), move.type).toBe("CONFLICT")
  })

  it("enrolls a pending signer with its passkeys: a passkey signer 1 or more, a passkey admin 2 or more, a machine signer none", () => {
    expect(walk(empty, invite(), enroll(1))).toMatchObject({ state: { signer: { status: "enrolled", passkeyCount: 1 } }, events: ["wallet_signer.added", "wallet_signer.invited", "wallet_signer.enrolled"] })
    expect(walk(empty, invite("admin"), enroll(2)).state.signer).toMatchObject({ status: "enrolled", role: "admin", passkeyCount: 2 })
    expect(walk(empty, invite("admin", "api_key"), enroll(0)).state.signer).toMatchObject({ status: "enrolled", passkeyCount: 0 })
    expect(refusal(SignerMachine.transition(walk(empty, invite()).state, enroll(0)))).toBe("UNPROCESSABLE_ENTITY")
    expect(refusal(SignerMachine.transition(walk(empty, invite()).state, enroll(11)))).toBe("UNPROCESSABLE_ENTITY")
    expect(refusal(SignerMachine.transition(walk(empty, invite("admin")).state, enroll(1)))).toBe("UNPROCESSABLE_ENTITY")
    expect(refusal(SignerMachine.transition(walk(empty, invite("signer", "api_key")).state, enroll(1)))).toBe("UNPROCESSABLE_ENTITY")
    // Once.
    expect(refusal(SignerMachine.transition(walk(empty, invite(), enroll(1)).state, enroll(1)))).toBe("CONFLICT")
  })

  it("refuses a pending signer everything but enrollment and ops removal", () => {
    const { state } = walk(empty, invite())
    const refused = allMoves.filter((m) => !["enroll", "ops_remove"].includes(m.type)).map((m) => [m.type, refusal(SignerMachine.transition(state, m))])
    expect(refused.every(([, r]) => r === "CONFLICT"), JSON.stringify(refused)).toBe(true)
  })

  it("approves an enrolled signer's extra passkey on an admin's co-stamp: awaiting approval, reissued, then approved with one more passkey", () => {
    const { state, events } = walk(empty, invite(), enroll(1), { type: "add_passkey" }, { type: "reissue_approval" }, approve)
    expect(state.signer).toMatchObject({ status: "approved", passkeyCount: 2 })
    expect(state.ceremony).toEqual({ type: "passkey_addition", status: "completed" })
    expect(events.slice(3)).toEqual([
      "wallet_signer.awaiting_admin_approval",
      "wallet_signer.awaiting_admin_approval",
      "wallet_ceremony.completed",
      "wallet_signer.enrollment_approved"
    ])
    // An approved signer may add another; a machine signer has no passkeys to add.
    expect(walk(state, { type: "add_passkey" }).state.ceremony).toEqual({ type: "passkey_addition", status: "awaiting_admin_approval" })
    expect(refusal(SignerMachine.transition(walk(empty, invite("signer", "api_key"), enroll(0)).state, { type: "add_passkey" }))).toBe("UNPROCESSABLE_ENTITY")
    expect(refusal(SignerMachine.transition(walk(empty, invite(), enroll(10)).state, { type: "add_passkey" }))).toBe("UNPROCESSABLE_ENTITY")
  })

  it("opens one ceremony at a time, and refuses to reissue a link that is not waiting", () => {
    const { state } = walk(empty, invite(), enroll(2), start("signer_promotion"))
    for (const move of [{ type: "add_passkey" } as SignerMachine.Move, start("signer_removal"), start("signer_promotion")]) {
      expect(refusal(SignerMachine.transition(state, move)), move.type).toBe("CONFLICT")
    }
    // Only an additional passkey's approval is reissued.
    expect(refusal(SignerMachine.transition(state, { type: "reissue_approval" }))).toBe("CONFLICT")
    expect(refusal(SignerMachine.transition(walk(empty, invite(), enroll(1)).state, { type: "reissue_approval" }))).toBe("CONFLICT")
  })

  it("promotes a signer on an admin's co-stamp: a passkey signer needs 2 passkeys, a machine signer none", () => {
    const promoted = walk(empty, invite(), enroll(2), start("signer_promotion"), approve)
    expect(promoted.state.signer).toMatchObject({ role: "admin" })
    expect(promoted.events.slice(3)).toEqual(["wallet_ceremony.awaiting_admin_approval", "wallet_ceremony.completed", "wallet_signer.promoted"])
    expect(walk(empty, invite("signer", "api_key"), enroll(0), start("signer_promotion"), approve).state.signer).toMatchObject({ role: "admin", passkeyCount: 0 })
    expect(refusal(SignerMachine.transition(walk(empty, invite(), enroll(1)).state, start("signer_promotion")))).toBe("UNPROCESSABLE_ENTITY")
    expect(refusal(SignerMachine.transition(promoted.state, start("signer_promotion")))).toBe("CONFLICT")
  })

  it("demotes an admin while another admin remains, and never the last", () => {
    const admin = walk(empty, invite("admin"), enroll(2)).state
    const demoted = walk(admin, start("signer_demotion"), approve)
    expect(demoted.state.signer).toMatchObject({ role: "signer" })
    expect(demoted.events).toEqual(["wallet_ceremony.awaiting_admin_approval", "wallet_ceremony.completed", "wallet_signer.demoted"])
    expect(refusal(SignerMachine.transition(demoted.state, start("signer_demotion")))).toBe("CONFLICT")
    expect(refusal(SignerMachine.transition({ ...admin, otherAdmins: 0 }, start("signer_demotion")))).toBe("CONFLICT")
    // The other admin left while the ceremony waited.
    const waiting = walk(admin, start("signer_demotion")).state
    expect(refusal(SignerMachine.transition({ ...waiting, otherAdmins: 0 }, approve))).toBe("CONFLICT")
  })

  it("removes a signer on an admin's co-stamp (customer_removed), never the last admin, and then refuses it everything", () => {
    const removed = walk(empty, invite(), enroll(1), start("signer_removal"))
    const outcome = SignerMachine.transition(removed.state, approve)
    expect(outcome).toMatchObject({ removalReason: "customer_removed", events: ["wallet_ceremony.completed", "wallet_signer.removed"], next: { signer: { status: "removed" } } })
    if ("refused" in outcome) throw new Error("refused")
    const gone = { ...removed.state, ...outcome.next }
    for (const move of allMoves.filter((m) => m.type !== "invite")) expect(refusal(SignerMachine.transition(gone, move)), move.type).toBe("RESOURCE_TERMINAL")
    const lastAdmin = { ...walk(empty, invite("admin"), enroll(2)).state, otherAdmins: 0 }
    expect(refusal(SignerMachine.transition(lastAdmin, start("signer_removal")))).toBe("CONFLICT")
    const waiting = walk(empty, invite("admin"), enroll(2), start("signer_removal")).state
    expect(refusal(SignerMachine.transition({ ...waiting, otherAdmins: 0 }, approve))).toBe("CONFLICT")
  })

  it("lets ops remove any signer (ops_removed), even the last admin, cancelling its open ceremony first", () => {
    expect(SignerMachine.transition(walk(empty, invite()).state, { type: "ops_remove" })).toMatchObject({ removalReason: "ops_removed", events: ["wallet_signer.removed"] })
    const waiting = { ...walk(empty, invite("admin"), enroll(2), start("signer_demotion")).state, otherAdmins: 0 }
    expect(SignerMachine.transition(waiting, { type: "ops_remove" })).toMatchObject({
      removalReason: "ops_removed",
      events: ["wallet_ceremony.failed", "wallet_signer.removed"],
      next: { signer: { status: "removed" }, ceremony: { type: "signer_demotion", status: "cancelled" } }
    })
  })

  it("fails a waiting ceremony on the clock (failed) or an admin's decline (cancelled), after which it takes no decision", () => {
    const waiting = walk(empty, invite(), enroll(2), start("signer_promotion")).state
    const expired = walk(waiting, { type: "expire_ceremony" })
    expect(expired).toMatchObject({ state: { ceremony: { status: "failed" }, signer: { role: "signer" } }, events: ["wallet_ceremony.failed"] })
    const declined = walk(waiting, { type: "decline_ceremony" })
    expect(declined).toMatchObject({ state: { ceremony: { status: "cancelled" } }, events: ["wallet_ceremony.failed"] })
    for (const closed of [expired.state, declined.state, walk(waiting, approve).state]) {
      for (const move of [approve, { type: "decline_ceremony" } as SignerMachine.Move, { type: "expire_ceremony" } as SignerMachine.Move]) {
        expect(refusal(SignerMachine.transition(closed, move)), move.type).toBe("RESOURCE_TERMINAL")
      }
      // A new ceremony may start once the last one closed.
      expect(refusal(SignerMachine.transition(closed, { type: "add_passkey" }))).toBe("accepted")
    }
    // With no ceremony at all, there is nothing to decide.
    const enrolled = walk(empty, invite(), enroll(1)).state
    for (const move of [approve, { type: "decline_ceremony" } as SignerMachine.Move, { type: "expire_ceremony" } as SignerMachine.Move]) expect(refusal(SignerMachine.transition(enrolled, move))).toBe("CONFLICT")
  })
})

describe("the signer table's invariants, over random move sequences", () => {
  const moveArb: fc.Arbitrary<SignerMachine.Move> = fc.oneof(
    fc.record({ type: fc.constant("invite" as const), role: fc.constantFrom("signer" as const, "admin" as const), credentialType: fc.constantFrom("passkey" as const, "api_key" as const) }),
    fc.record({ type: fc.constant("enroll" as const), passkeyCount: fc.integer({ min: -1, max: 12 }) }),
    fc.constantFrom<SignerMachine.Move>(
      { type: "add_passkey" },
      { type: "start_ceremony", ceremony: "signer_promotion" },
      { type: "start_ceremony", ceremony: "signer_demotion" },
      { type: "start_ceremony", ceremony: "signer_removal" },
      { type: "approve_ceremony" },
      { type: "decline_ceremony" },
      { type: "expire_ceremony" },
      { type: "reissue_approval" },
      { type: "ops_remove" }
    )
  )

  it("keeps a passkey admin at 2 passkeys or more, a machine signer at none, passkeys only growing, and removal final", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(moveArb, fc.integer({ min: 0, max: 2 })), { maxLength: 40 }), (path) => {
        let state: SignerMachine.RosterState = empty
        for (const [move, otherAdmins] of path) {
          const before = state
          const outcome = SignerMachine.transition({ ...state, otherAdmins }, move)
          if ("refused" in outcome) {
            expect(["CONFLICT", "UNPROCESSABLE_ENTITY", "RESOURCE_TERMINAL"]).toContain(outcome.refused)
            continue
          }
          expect(outcome.events.length).toBeGreaterThan(0)
          state = { ...state, ...outcome.next, otherAdmins }
          const s = state.signer!
          if (s.credentialType === "api_key") expect(s.passkeyCount).toBe(0)
          if (s.credentialType === "passkey" && s.role === "admin" && SignerMachine.isActive(s.status)) expect(s.passkeyCount).toBeGreaterThanOrEqual(2)
          if (before.signer !== undefined) {
            expect(s.passkeyCount).toBeGreaterThanOrEqual(before.signer.passkeyCount)
            if (before.signer.status === "removed") throw new Error("a removed signer moved")
          }
          // Every removal names its reason, and only a removal does.
          expect(outcome.removalReason !== undefined).toBe(s.status === "removed")
        }
      })
    )
  })
})

describe("the roster-wide origin change (webauthn_origin_change)", () => {
  const moves: ReadonlyArray<SignerMachine.OriginChangeMove> = ["start", "approve_ceremony", "decline_ceremony", "expire_ceremony"]
  const result = (outcome: SignerMachine.OriginChangeOutcome) => ("refused" in outcome ? outcome.refused : [outcome.next, ...outcome.events])

  it("waits for an admin, then completes, is cancelled or fails, each with its event", () => {
    const waiting = { latest: "awaiting_admin_approval" as const, activeAdmins: 1 }
    expect(result(SignerMachine.originChange({ latest: undefined, activeAdmins: 1 }, "start"))).toEqual(["awaiting_admin_approval", "wallet_ceremony.awaiting_admin_approval"])
    expect(result(SignerMachine.originChange(waiting, "approve_ceremony"))).toEqual(["completed", "wallet_ceremony.completed"])
    expect(result(SignerMachine.originChange(waiting, "decline_ceremony"))).toEqual(["cancelled", "wallet_ceremony.failed"])
    expect(result(SignerMachine.originChange(waiting, "expire_ceremony"))).toEqual(["failed", "wallet_ceremony.failed"])
  })

  it("refuses a second one while one waits, a roster with no admin that can act, and a decision on none or on a closed one", () => {
    expect(result(SignerMachine.originChange({ latest: "awaiting_admin_approval", activeAdmins: 2 }, "start"))).toBe("CONFLICT")
    expect(result(SignerMachine.originChange({ latest: undefined, activeAdmins: 0 }, "start"))).toBe("UNPROCESSABLE_ENTITY")
    for (const latest of ["completed", "failed", "cancelled"] as const) {
      expect(result(SignerMachine.originChange({ latest, activeAdmins: 1 }, "start")), latest).toEqual(["awaiting_admin_approval", "wallet_ceremony.awaiting_admin_approval"])
      for (const move of moves.slice(1)) expect(result(SignerMachine.originChange({ latest, activeAdmins: 1 }, move)), `${latest} ${move}`).toBe("RESOURCE_TERMINAL")
    }
    for (const move of moves.slice(1)) expect(result(SignerMachine.originChange({ latest: undefined, activeAdmins: 1 }, move)), move).toBe("CONFLICT")
  })

  it("never leaves two open, and closes only what is open (any sequence of moves)", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...moves), fc.integer({ min: 0, max: 2 })), { maxLength: 30 }), (path) => {
        let latest: SignerMachine.CeremonyStatus | undefined
        for (const [move, activeAdmins] of path) {
          const outcome = SignerMachine.originChange({ latest, activeAdmins }, move)
          if ("refused" in outcome) continue
          if (move === "start") expect(latest).not.toBe("awaiting_admin_approval")
          else expect(latest).toBe("awaiting_admin_approval")
          expect(outcome.events).toHaveLength(1)
          latest = outcome.next
        }
      })
    )
  })
})
