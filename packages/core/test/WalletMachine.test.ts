import type { WalletStatus } from "@fos/contract"
import { describe, expect, it } from "vitest"
import * as WalletMachine from "../src/money/WalletMachine.ts"

const freeze: WalletMachine.Move = { type: "freeze" }
const retire: WalletMachine.Move = { type: "retire", replacedByWalletId: "wlt_next" as never, rotationEndsAt: "2026-01-02T00:00:00.000Z" }

describe("the wallet status table (WalletMachine.transition)", () => {
  it("freezes or retires an active wallet", () => {
    expect(WalletMachine.initialStatus).toBe("active")
    expect(WalletMachine.transition("active", freeze)).toEqual({ next: "frozen" })
    expect(WalletMachine.transition("active", retire)).toEqual({ next: "retired" })
  })

  it("refuses every move on a frozen or retired wallet: both are final", () => {
    for (const status of ["frozen", "retired"] as ReadonlyArray<WalletStatus>) {
      for (const move of [freeze, retire]) expect(WalletMachine.transition(status, move), `${status} ${move.type}`).toEqual({ refused: "final" })
    }
  })
})
