import type { ApplicationStatus } from "@fos/contract"
import { describe, expect, it } from "vitest"
import * as ApplicationMachine from "../src/onboarding/ApplicationMachine.ts"

/** The states the table decides on: every status, and an open application with a cancel in progress. */
const states: ReadonlyArray<{ readonly name: string; readonly status: ApplicationStatus; readonly cancelling: boolean }> = [
  { name: "draft", status: "draft", cancelling: false },
  { name: "open", status: "open", cancelling: false },
  { name: "open+cancelling", status: "open", cancelling: true },
  { name: "approved", status: "approved", cancelling: false },
  { name: "rejected", status: "rejected", cancelling: false },
  { name: "cancelled", status: "cancelled", cancelling: false }
]

const moves: ReadonlyArray<{ readonly name: string; readonly move: ApplicationMachine.Move }> = [
  { name: "Submit", move: { _tag: "Submit" } },
  { name: "Decide approved", move: { _tag: "Decide", outcome: "approved", bySimulate: false } },
  { name: "Decide rejected", move: { _tag: "Decide", outcome: "rejected", bySimulate: false } },
  { name: "simulate approved", move: { _tag: "Decide", outcome: "approved", bySimulate: true } },
  { name: "simulate rejected", move: { _tag: "Decide", outcome: "rejected", bySimulate: true } },
  { name: "RequestCancel", move: { _tag: "RequestCancel" } },
  { name: "CompleteCancel", move: { _tag: "CompleteCancel" } },
  { name: "LateCompliance", move: { _tag: "LateCompliance" } },
  { name: "Withdraw", move: { _tag: "Withdraw" } },
  { name: "IssueIdvLink", move: { _tag: "IssueIdvLink" } }
]

/** An outcome in one line: `next[+cancelling] [events] [persons→verification]`, or `!REFUSAL`. */
const show = (outcome: ApplicationMachine.Outcome): string => {
  if ("refused" in outcome) return `!${outcome.refused}`
  return [
    outcome.next + (outcome.cancelling ? "+cancelling" : ""),
    ...outcome.events,
    ...(outcome.persons === undefined ? [] : [`persons→${outcome.persons}`])
  ].join(" ")
}

const decided = "!APPLICATION_ALREADY_DECIDED"
const invalid = "!APPLICATION_INVALID_STATUS"
const cancelInProgress = "!CANCEL_IN_PROGRESS"
const approve = "approved application.approved persons→completed"
const reject = "rejected application.rejected persons→failed"

/** Every move from every state: the spec's table, fos's added moves, and every refusal with its code. */
const table: Record<string, Record<string, string>> = {
  draft: {
    "Submit": "open",
    "Decide approved": invalid,
    "Decide rejected": invalid,
    "simulate approved": invalid,
    "simulate rejected": invalid,
    "RequestCancel": invalid,
    "CompleteCancel": invalid,
    "LateCompliance": invalid,
    "Withdraw": "cancelled",
    "IssueIdvLink": invalid
  },
  open: {
    "Submit": invalid,
    "Decide approved": approve,
    "Decide rejected": reject,
    "simulate approved": approve,
    "simulate rejected": reject,
    "RequestCancel": "open+cancelling",
    "CompleteCancel": invalid,
    "LateCompliance": invalid,
    "Withdraw": invalid,
    "IssueIdvLink": "open"
  },
  "open+cancelling": {
    "Submit": invalid,
    "Decide approved": cancelInProgress,
    "Decide rejected": cancelInProgress,
    "simulate approved": cancelInProgress,
    "simulate rejected": cancelInProgress,
    "RequestCancel": cancelInProgress,
    "CompleteCancel": "cancelled persons→cancelled",
    "LateCompliance": invalid,
    "Withdraw": invalid,
    "IssueIdvLink": cancelInProgress
  },
  approved: {
    "Submit": invalid,
    "Decide approved": decided,
    "Decide rejected": decided,
    "simulate approved": decided,
    "simulate rejected": decided,
    "RequestCancel": decided,
    "CompleteCancel": invalid,
    "LateCompliance": invalid,
    "Withdraw": invalid,
    "IssueIdvLink": invalid
  },
  rejected: {
    "Submit": invalid,
    "Decide approved": decided,
    "Decide rejected": decided,
    "simulate approved": decided,
    "simulate rejected": decided,
    "RequestCancel": decided,
    "CompleteCancel": invalid,
    "LateCompliance": "rejected application.rejected",
    "Withdraw": invalid,
    "IssueIdvLink": invalid
  },
  cancelled: {
    "Submit": invalid,
    "Decide approved": invalid,
    "Decide rejected": invalid,
    "simulate approved": approve,
    "simulate rejected": reject,
    "RequestCancel": invalid,
    "CompleteCancel": invalid,
    "LateCompliance": invalid,
    "Withdraw": invalid,
    "IssueIdvLink": invalid
  }
}

describe("the application state table", () => {
  it("starts a submission open and the organization's fresh draft in draft", () => {
    expect(ApplicationMachine.initialStatus).toEqual({ submission: "open", draft: "draft" })
  })

  for (const state of states) {
    describe(`from ${state.name}`, () => {
      for (const { move, name } of moves) {
        it(`${name} → ${table[state.name]![name]}`, () => {
          expect(show(ApplicationMachine.transition(state, move))).toBe(table[state.name]![name])
        })
      }
    })
  }

  it("the walk above covers every state and every move", () => {
    expect(Object.keys(table).sort()).toEqual(states.map((s) => s.name).sort())
    for (const row of Object.values(table)) expect(Object.keys(row).sort()).toEqual(moves.map((m) => m.name).sort())
  })

  it("the spec's rows: open → approval → approved, open → rejection → rejected, a decided application is never decided again", () => {
    expect(ApplicationMachine.transition({ status: "open", cancelling: false }, { _tag: "Decide", outcome: "approved", bySimulate: false })).toMatchObject({ next: "approved", events: ["application.approved"] })
    expect(ApplicationMachine.transition({ status: "open", cancelling: false }, { _tag: "Decide", outcome: "rejected", bySimulate: false })).toMatchObject({ next: "rejected", events: ["application.rejected"] })
    for (const status of ["approved", "rejected"] as const) {
      for (const outcome of ["approved", "rejected"] as const) {
        for (const bySimulate of [false, true]) {
          expect(ApplicationMachine.transition({ status, cancelling: false }, { _tag: "Decide", outcome, bySimulate })).toEqual({ refused: "APPLICATION_ALREADY_DECIDED" })
        }
      }
    }
  })

  it("a cancelled application is final but for the sandbox's simulate decision", () => {
    expect(ApplicationMachine.transition({ status: "cancelled", cancelling: false }, { _tag: "Decide", outcome: "approved", bySimulate: false })).toEqual({ refused: "APPLICATION_INVALID_STATUS" })
    expect(ApplicationMachine.transition({ status: "cancelled", cancelling: false }, { _tag: "Decide", outcome: "approved", bySimulate: true })).toMatchObject({ next: "approved" })
  })

  it("withdraws only a draft (a late result made the rejection final), with no event", () => {
    expect(ApplicationMachine.transition({ status: "draft", cancelling: false }, { _tag: "Withdraw" })).toEqual({ next: "cancelled", cancelling: false, events: [], persons: undefined })
  })
})
