import type { RfiStatus } from "@fos/contract"
import { describe, expect, it } from "vitest"
import * as RfiMachine from "../src/money/RfiMachine.ts"

const statuses: ReadonlyArray<RfiStatus> = ["awaiting_response", "under_review", "resolved", "cancelled", "expired"]
const moves: ReadonlyArray<RfiMachine.Move["type"]> = ["respond", "request_more", "reopen", "extend_deadline", "resolve", "cancel", "deadline_passed"]

/** Every move the table allows, from each status: the next status and its events. */
const table: Record<string, { readonly next: RfiStatus; readonly events: ReadonlyArray<string> }> = {
  "awaiting_response respond": { next: "under_review", events: ["rfi.response_submitted"] },
  "under_review respond": { next: "under_review", events: ["rfi.response_submitted"] },
  "under_review request_more": { next: "awaiting_response", events: ["rfi.more_info_requested"] },
  "resolved reopen": { next: "awaiting_response", events: ["rfi.more_info_requested"] },
  "awaiting_response extend_deadline": { next: "awaiting_response", events: ["rfi.deadline_extended"] },
  "under_review extend_deadline": { next: "under_review", events: ["rfi.deadline_extended"] },
  "awaiting_response resolve": { next: "resolved", events: ["rfi.resolved"] },
  "under_review resolve": { next: "resolved", events: ["rfi.resolved"] },
  "awaiting_response cancel": { next: "cancelled", events: ["rfi.cancelled"] },
  "under_review cancel": { next: "cancelled", events: ["rfi.cancelled"] },
  "awaiting_response deadline_passed": { next: "expired", events: ["rfi.cancelled"] }
}

describe("the RFI table", () => {
  it("publishes an RFI awaiting the caller's response (rfi.published), which holds its transaction while open", () => {
    expect(RfiMachine.initialStatus).toEqual({ status: "awaiting_response", events: ["rfi.published"] })
    expect([...RfiMachine.openStatuses]).toEqual(["awaiting_response", "under_review"])
  })

  it("walks every move from every status: the table's rows, and every other move refused", () => {
    for (const status of statuses) {
      for (const type of moves) {
        const outcome = RfiMachine.transition(status, { type } as RfiMachine.Move)
        const row = table[`${status} ${type}`]
        if (row !== undefined) {
          expect(outcome, `${status} ${type}`).toEqual(row)
          continue
        }
        // The caller's response and the deadline's timer are refused with CONFLICT; a reviewer's move with the
        // simulate endpoints' code.
        const code = type === "respond" || type === "deadline_passed" ? "CONFLICT" : "SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY"
        expect(outcome, `${status} ${type}`).toEqual({ refused: code })
      }
    }
  })

  it("lets a deadline expire only an RFI still waiting for its answer: an answered one is left alone", () => {
    expect(RfiMachine.transition("under_review", { type: "deadline_passed" })).toEqual({ refused: "CONFLICT" })
    expect(RfiMachine.transition("awaiting_response", { type: "deadline_passed" })).toEqual({ next: "expired", events: ["rfi.cancelled"] })
  })
})
