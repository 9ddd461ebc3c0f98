/**
 * The spec's claim table as one pure function (States and transitions, "Claims, virtual accounts, wallets"):
 *
 * | State | Trigger | Next | Also |
 * |---|---|---|---|
 * | claim accepted (202) | every roster signer enrolled and wallets activated | resolved | claim.completed, then crypto_wallet.completed when the end user has finished |
 * | claim accepted (202) | provisioning fails | failed | claim.failed |
 *
 * fos's reading (signing/Roster.ts runs it): "accepted" is status pending; "resolved" is status completed. The
 * wallet provider's provisioning is a step of its own inside pending (`provisioned`), which the clock or the
 * sandbox's simulate call takes once; the claim resolves at the first moment it is provisioned and its roster (the
 * signers not removed, at least one) can all act, whichever came last.
 *
 * Refusals: any move on a completed or failed claim is RESOURCE_TERMINAL; provisioning twice is CONFLICT; resolving
 * before both conditions hold is CONFLICT.
 */
export type Status = "pending" | "completed" | "failed"

export interface State {
  readonly status: Status
  readonly provisioned: boolean
}

export type Move =
  | { readonly type: "provisioned" }
  | { readonly type: "provisioning_failed" }
  | { readonly type: "resolve"; readonly rosterSize: number; readonly rosterActive: boolean }

export type Event = "claim.completed" | "crypto_wallet.completed" | "claim.failed"

export type Refusal = "CONFLICT" | "RESOURCE_TERMINAL"

export type Outcome =
  | { readonly next: State; readonly events: ReadonlyArray<Event> }
  | { readonly refused: Refusal; readonly reason: string }

/** An accepted claim (202): pending, its wallets not yet provisioned. */
export const initialState: State = { status: "pending", provisioned: false }

/** The statuses a claim ends in: every move on it is RESOURCE_TERMINAL. */
export const endedStatuses: ReadonlySet<Status> = new Set(["completed", "failed"])

export const transition = (state: State, move: Move): Outcome => {
  if (endedStatuses.has(state.status)) return { refused: "RESOURCE_TERMINAL", reason: `The claim is already ${state.status}.` }
  switch (move.type) {
    case "provisioned":
      if (state.provisioned) return { refused: "CONFLICT", reason: "The claim's wallets are already provisioned; it waits for its signers to enroll." }
      return { next: { ...state, provisioned: true }, events: [] }
    case "provisioning_failed":
      if (state.provisioned) return { refused: "CONFLICT", reason: "The claim's wallets are already provisioned; it waits for its signers to enroll." }
      return { next: { ...state, status: "failed" }, events: ["claim.failed"] }
    case "resolve":
      if (!state.provisioned) return { refused: "CONFLICT", reason: "The claim's wallets are not provisioned yet." }
      if (move.rosterSize === 0 || !move.rosterActive) return { refused: "CONFLICT", reason: "Not every signer of the roster has enrolled yet." }
      return { next: { ...state, status: "completed" }, events: ["claim.completed", "crypto_wallet.completed"] }
  }
}
