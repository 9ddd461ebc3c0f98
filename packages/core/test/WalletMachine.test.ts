import type { WalletStatus } from "@fos/contract"
import { describe, expect, it } from "vitest"
import * as Wallets from "../src/money/Wallets.ts"

const freeze: Wallets.WalletMove = { type: "freeze" }
const retire: Wallets.WalletMove = { type: "retire", replacedByWalletId: "wlt_next" as never, rotationEndsAt: "2026-01-02T00:00:00.000Z" }

describe("the wallet status table (Wallets.moveWallet)", () => {
  it("freezes or retires an active wallet", () => {
    expect(Wallets.transition("active", freeze)).toBe("frozen")
    expect(Wallets.transition("active", retire)).toBe("retired")
  })

  it("refuses every move on a frozen or retired wallet: both are final", () => {
    for (const status of ["frozen", "retired"] as ReadonlyArray<WalletStatus>) {
      for (const move of [freeze, retire]) expect(Wallets.transition(status, move), `${status} ${move.type}`).toBeUndefined()
    }
  })
})
