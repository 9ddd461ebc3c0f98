import type { WalletStatus } from "@fos/contract"
import { describe, expect, it } from "vitest"
import { type WalletMove, walletTransition } from "../src/money/Wallets.ts"

const freeze: WalletMove = { type: "freeze" }
const retire: WalletMove = { type: "retire", replacedByWalletId: "wlt_next" as never, rotationEndsAt: "2026-01-02T00:00:00.000Z" }

describe("the wallet status table (Wallets.moveWallet)", () => {
  it("freezes or retires an active wallet", () => {
    expect(walletTransition("active", freeze)).toBe("frozen")
    expect(walletTransition("active", retire)).toBe("retired")
  })

  it("refuses every move on a frozen or retired wallet: both are final", () => {
    for (const status of ["frozen", "retired"] as ReadonlyArray<WalletStatus>) {
      for (const move of [freeze, retire]) expect(walletTransition(status, move), `${status} ${move.type}`).toBeUndefined()
    }
  })
})
