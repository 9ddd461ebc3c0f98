import { describe, expect, it } from "vitest"
import * as VirtualAccountMachine from "../src/money/VirtualAccountMachine.ts"

const statuses: ReadonlyArray<VirtualAccountMachine.VirtualAccountStatus> = ["pending", "active"]
const moves: ReadonlyArray<VirtualAccountMachine.Move> = [{ type: "activate" }, { type: "use" }]

/** Every move from every status, refused ones included. */
const table: Record<VirtualAccountMachine.VirtualAccountStatus, Record<VirtualAccountMachine.Move["type"], ReturnType<typeof VirtualAccountMachine.transition>>> = {
  pending: {
    activate: { next: "active", events: ["virtual_account.activated"] },
    use: { refused: "VIRTUAL_ACCOUNT_NOT_ACTIVE" }
  },
  active: {
    activate: { unchanged: true },
    use: { unchanged: true }
  }
}

describe("the virtual account state table", () => {
  it("an approved application creates its account pending", () => {
    expect(VirtualAccountMachine.initialStatus).toBe("pending")
  })

  for (const status of statuses) {
    for (const move of moves) {
      it(`${status} → ${move.type}: ${JSON.stringify(table[status][move.type])}`, () => {
        expect(VirtualAccountMachine.transition(status, move)).toEqual(table[status][move.type])
      })
    }
  }

  it("activation happens once: the account is active after it, and activating again changes nothing", () => {
    const first = VirtualAccountMachine.transition(VirtualAccountMachine.initialStatus, { type: "activate" })
    expect(first).toEqual({ next: "active", events: ["virtual_account.activated"] })
    if (!("next" in first)) throw new Error("unreachable")
    expect(VirtualAccountMachine.transition(first.next, { type: "activate" })).toEqual({ unchanged: true })
    expect(VirtualAccountMachine.transition(first.next, { type: "use" })).toEqual({ unchanged: true })
  })
})
