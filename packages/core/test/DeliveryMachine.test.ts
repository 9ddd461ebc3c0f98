import { describe, expect, it } from "vitest"
import * as DeliveryMachine from "../src/webhooks/DeliveryMachine.ts"
import { section, specAbsent, specFacts, specText } from "./spec.ts"

const moves: ReadonlyArray<DeliveryMachine.Move> = [
  { type: "open" },
  { type: "begin" },
  { type: "succeed" },
  { type: "fail" },
  { type: "abandon" },
  { type: "retry" }
]

const pending: DeliveryMachine.State = { status: "pending", run: 1, attemptsInRun: 0 }
const processing: DeliveryMachine.State = { ...pending, status: "processing" }
const succeeded: DeliveryMachine.State = { ...pending, status: "succeeded", attemptsInRun: 1 }
const failed: DeliveryMachine.State = { ...pending, status: "failed", attemptsInRun: DeliveryMachine.attemptsPerRun }
const states = { pending, processing, succeeded, failed }

/** Applies moves in order; fails the test on a refusal or a move that does not apply. */
const walk = (state: DeliveryMachine.State | undefined, ...path: ReadonlyArray<DeliveryMachine.Move>) => {
  const timers: Array<string> = []
  for (const move of path) {
    const outcome = DeliveryMachine.transition(state, move)
    if (!("next" in outcome)) throw new Error(`${move.type} on ${state?.status} did not apply: ${JSON.stringify(outcome)}`)
    timers.push(outcome.timer === undefined ? "none" : `${outcome.timer.kind} ${outcome.timer.afterMs / 1000}s`)
    state = outcome.next
  }
  return { state: state!, timers }
}

const verdict = (outcome: DeliveryMachine.Outcome) => ("refused" in outcome ? outcome.refused : "unchanged" in outcome ? "unchanged" : outcome.next.status)

describe("the webhook delivery table", () => {
  // The state table is read from the spec's text where it is present; a fresh clone has none (spec.ts).
  it.skipIf(specText === undefined)(`has the spec's six rows, each as the machine moves${specText === undefined ? ` (skipped: ${specAbsent})` : ""}`, () => {
    // The state table is the second "### Webhook delivery" of the spec (the first is the resource).
    const tables = specText!.slice(specText!.indexOf("## States and transitions"))
    const rows = section("### Webhook delivery", tables).filter((l) => l.startsWith("| ") && !l.startsWith("| State"))
    expect(rows).toHaveLength(6)
    const trigger: Record<string, DeliveryMachine.Move> = {
      "dispatch begins": { type: "begin" },
      "endpoint answers 2xx": { type: "succeed" },
      "attempt fails, attempts remain": { type: "fail" },
      "attempt 5 fails": { type: "fail" },
      "manual retry": { type: "retry" }
    }
    for (const row of rows) {
      const [from, on, to, also] = row.split("|").slice(1, -1).map((c) => c.trim())
      for (const name of from!.split(", ")) {
        const state = on === "attempt 5 fails" ? { ...processing, attemptsInRun: DeliveryMachine.attemptsPerRun - 1 } : states[name as keyof typeof states]
        const outcome = DeliveryMachine.transition(state, trigger[on!]!)
        if (to === "unchanged") expect(verdict(outcome), row).toBe(also!.split(" ")[1])
        else expect(verdict(outcome), row).toBe(to)
      }
    }
  })

  it("waits 30 s, 2 min, 15 min and 1 h after attempts 1 to 4, as the spec's retry table, and fails on attempt 5", () => {
    expect(DeliveryMachine.retryDelaysSeconds).toEqual(specFacts().limits.webhookRetryWaitsSeconds)
    expect(DeliveryMachine.retryDelaysSeconds).toEqual([30, 120, 900, 3600])
    expect(DeliveryMachine.attemptsPerRun).toBe(specFacts().limits.webhookAttemptsPerRun)
    const failOnce: ReadonlyArray<DeliveryMachine.Move> = [{ type: "begin" }, { type: "fail" }]
    const { state, timers } = walk(undefined, { type: "open" }, ...failOnce, ...failOnce, ...failOnce, ...failOnce, ...failOnce)
    expect(timers).toEqual([
      "attempt 0s",
      "lease 60s", "attempt 30s",
      "lease 60s", "attempt 120s",
      "lease 60s", "attempt 900s",
      "lease 60s", "attempt 3600s",
      "lease 60s", "none"
    ])
    expect(state).toEqual({ status: "failed", run: 1, attemptsInRun: 5 })
    // "About 78 minutes after the first attempt": the waits add up to 77.5.
    expect(DeliveryMachine.retryDelaysSeconds.reduce((a, b) => a + b, 0) / 60).toBe(77.5)
  })

  it("opens a delivery pending in run 1 with its first attempt due at once, once", () => {
    expect(DeliveryMachine.transition(undefined, { type: "open" })).toEqual({ next: pending, timer: { kind: "attempt", afterMs: 0 } })
    for (const state of Object.values(states)) expect(DeliveryMachine.transition(state, { type: "open" })).toEqual({ unchanged: true })
  })

  it("changes nothing for a move on a delivery not opened yet", () => {
    for (const move of moves.filter((m) => m.type !== "open")) expect(DeliveryMachine.transition(undefined, move)).toEqual({ unchanged: true })
  })

  it("begins a pending delivery's attempt under a recovery lease, and begins a processing one again (the same attempt) when the lease fires", () => {
    expect(DeliveryMachine.transition(pending, { type: "begin" })).toEqual({ next: processing, timer: { kind: "lease", afterMs: DeliveryMachine.leaseMs }, send: "new" })
    expect(DeliveryMachine.transition(processing, { type: "begin" })).toEqual({ next: processing, timer: { kind: "lease", afterMs: DeliveryMachine.leaseMs }, send: "again" })
    expect(DeliveryMachine.leaseMs).toBe(60_000)
  })

  it("records a 2xx as succeeded, ending the delivery", () => {
    expect(DeliveryMachine.transition({ ...processing, attemptsInRun: 2 }, { type: "succeed" })).toEqual({
      next: { status: "succeeded", run: 1, attemptsInRun: 3 },
      timer: undefined
    })
  })

  it("records a failed attempt with attempts left as pending, its next attempt after the wait", () => {
    for (const [done, wait] of DeliveryMachine.retryDelaysSeconds.entries()) {
      expect(DeliveryMachine.transition({ ...processing, attemptsInRun: done }, { type: "fail" })).toEqual({
        next: { status: "pending", run: 1, attemptsInRun: done + 1 },
        timer: { kind: "attempt", afterMs: wait * 1000 }
      })
    }
  })

  it("abandons an open delivery of a deleted endpoint as failed", () => {
    for (const state of [pending, processing]) {
      expect(DeliveryMachine.transition(state, { type: "abandon" })).toEqual({ next: { ...state, status: "failed" }, timer: undefined })
    }
  })

  it("starts a new run of 5 attempts, at once, on a manual retry of a failed delivery, as often as it fails", () => {
    const retried = walk(failed, { type: "retry" })
    expect(retried).toEqual({ state: { status: "pending", run: 2, attemptsInRun: 0 }, timers: ["attempt 0s"] })
    const again = walk(retried.state, ...Array.from({ length: DeliveryMachine.attemptsPerRun }, () => [{ type: "begin" }, { type: "fail" }] as const).flat(), { type: "retry" })
    expect(again.state).toEqual({ status: "pending", run: 3, attemptsInRun: 0 })
  })

  it("refuses a manual retry of a pending, processing or succeeded delivery (WEBHOOK_DELIVERY_NOT_RETRYABLE)", () => {
    for (const state of [pending, processing, succeeded]) {
      expect(DeliveryMachine.transition(state, { type: "retry" })).toEqual({
        refused: "WEBHOOK_DELIVERY_NOT_RETRYABLE",
        reason: `The delivery is ${state.status}; only a failed delivery can be retried.`
      })
    }
  })

  it("changes nothing for the engine's moves on a delivery they no longer apply to", () => {
    const expected: Record<string, ReadonlyArray<string>> = {
      pending: ["unchanged", "processing", "unchanged", "unchanged", "failed", "WEBHOOK_DELIVERY_NOT_RETRYABLE"],
      processing: ["unchanged", "processing", "succeeded", "pending", "failed", "WEBHOOK_DELIVERY_NOT_RETRYABLE"],
      succeeded: ["unchanged", "unchanged", "unchanged", "unchanged", "unchanged", "WEBHOOK_DELIVERY_NOT_RETRYABLE"],
      failed: ["unchanged", "unchanged", "unchanged", "unchanged", "unchanged", "pending"]
    }
    // Every move from every state, refused ones included.
    for (const [name, state] of Object.entries(states)) {
      expect(moves.map((move) => verdict(DeliveryMachine.transition(state, move))), name).toEqual(expected[name])
    }
  })
})
