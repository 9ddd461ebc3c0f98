/**
 * A wallet's status table as one pure function (the spec's "Claims, virtual accounts, wallets": "A wallet can only
 * be rotated while active", and the provider's freeze of a wallet whose signing configuration blocks movement,
 * signing/WalletFreeze.ts):
 *
 * | State | Move | Next | Also |
 * |---|---|---|---|
 * | (new) | created, or a rotation's successor | active | wallet.created |
 * | active | freeze (the provider reports its configuration blocks movement) | frozen | |
 * | active | retire (a rotation, for its successor) | retired | replacedByWalletId, rotationEndsAt |
 * | frozen, retired | any | refused | final: nothing moves them again |
 *
 * A refusal here is the caller's bug: Wallets.ts checks a wallet's status first, to answer with its own code
 * (WALLET_NOT_ROTATABLE, WALLET_NOT_ACTIVE), and moves it only when the table allows.
 */
import type { WalletId, WalletStatus } from "@fos/contract"

/** A wallet's moves: the provider freezes it, or a rotation retires it for its successor. */
export type Move =
  | { readonly type: "freeze" }
  | { readonly type: "retire"; readonly replacedByWalletId: WalletId; readonly rotationEndsAt: string }

/** Why a move is refused: the wallet's status is final. */
export type Refusal = "final"

export type Outcome =
  | { readonly next: WalletStatus }
  | { readonly refused: Refusal }

/** The status a wallet is born in. */
export const initialStatus: WalletStatus = "active"

export const transition = (status: WalletStatus, move: Move): Outcome =>
  status !== "active" ? { refused: "final" } : { next: move.type === "freeze" ? "frozen" : "retired" }
