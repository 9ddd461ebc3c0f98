/**
 * The spec's virtual account state table as one pure function (States and transitions, "Claims, virtual accounts,
 * wallets"):
 *
 * | State | Trigger | Next | Also |
 * |---|---|---|---|
 * | virtual account created | asynchronous activation | active | virtual_account.activated |
 *
 * and the application table's "a virtual_account approval later emits virtual_account.activated". fos's reading
 * (docs/onboarding.md, "Virtual accounts and crypto wallets"): the approval creates the account `pending`, and its
 * activation timer makes it `active`. The spec's error table names the one refusal, 422 VIRTUAL_ACCOUNT_NOT_ACTIVE.
 *
 * | State | Move | Next | Also |
 * |---|---|---|---|
 * | (new) | an approved virtual_account application | pending | the activation timer |
 * | pending | activate (the timer) | active | virtual_account.activated, with the deposit instructions |
 * | active | activate | unchanged | a timer that fires again changes nothing |
 * | active | use (a deposit arrives; a payout or order takes it as a side) | unchanged | |
 * | pending | use | refused | 422 VIRTUAL_ACCOUNT_NOT_ACTIVE |
 *
 * "Any move not listed in these tables: not shown": an account never leaves `active` in fos.
 */
import type { VirtualAccountStatuses } from "@fos/contract"

export type VirtualAccountStatus = typeof VirtualAccountStatuses[number]

export type Move = { readonly type: "activate" } | { readonly type: "use" }

/** The one refusal of the table: money cannot move through an account that is not active yet. */
export type Refusal = "VIRTUAL_ACCOUNT_NOT_ACTIVE"

export type Outcome =
  | { readonly next: VirtualAccountStatus; readonly events: ReadonlyArray<"virtual_account.activated"> }
  | { readonly unchanged: true }
  | { readonly refused: Refusal }

/** The status an approved application creates its account in. */
export const initialStatus: VirtualAccountStatus = "pending"

export const transition = (status: VirtualAccountStatus, move: Move): Outcome => {
  switch (move.type) {
    case "activate":
      return status === "pending" ? { next: "active", events: ["virtual_account.activated"] } : { unchanged: true }
    case "use":
      return status === "active" ? { unchanged: true } : { refused: "VIRTUAL_ACCOUNT_NOT_ACTIVE" }
  }
}
