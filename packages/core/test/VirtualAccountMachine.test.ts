import { describe, expect, it } from "vitest"
import * as VirtualAccountMachine from "../src/money/VirtualAccountMachine.ts"

const statuses: ReadonlyArray<VirtualAccountMachine.VirtualAccountStatus> = ["pending", "active"]
const moves: ReadonlyArray<VirtualAccountMachine.VirtualAccountMove> = [{ type: "activate" }, { type: "use" }]

/** Every move from every status, refused ones included. */
const table: Record<VirtualAccountMachine.VirtualAccountStatus, Record<VirtualAccountMachine.VirtualAccountMove["type"], ReturnType<typeof VirtualAccountMachine.virtualAccountTransition>>> = {
  pending: {
    activate: { next: "active", event: "virtual_account.activated" },
    use: { refused: "VIRTUAL_ACCOUNT_NOT_ACTIVE" }
  },
  active: {
    activate: { unchanged: true },
    use: { unchanged: true }
  }
}

describe("the virtual account state table", () => {
  it("an approved application creates its account pending", () => {
    expect(VirtualAccountMachine.initialVirtualAccountStatus).toBe("pending")
  })

  for (const status of statuses) {
    for (const move of moves) {
      it(`${status} → ${move.type}: ${JSON.stringify(table[status][move.type])}`, () => {
        expect(VirtualAccountMachine.virtualAccountTransition(status, move)).toEqual(table[status][move.type])
      })
    }
  }

  it("activation happens once: the account is active after it, and activating again changes nothing", () => {
    const first = VirtualAccountMachine.virtualAccountTransition(VirtualAccountMachine.initialVirtualAccountStatus, { type: "activate" })
    expect(first).toEqual({ next: "active", event: "virtual_account.activated" })
    if (!("next" in first)) throw new Error("unreachable")
    expect(VirtualAccountMachine.virtualAccountTransition(first.next, { type: "activate" })).toEqual({ unchanged: true })
    expect(VirtualAccountMachine.virtualAccountTransition(first.next, { type: "use" })).toEqual({ unchanged: true })
  })
})
