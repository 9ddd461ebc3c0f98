/**
 * Scripted outcomes (sandbox only; contract simulate/Outcomes.ts, docs/outcomes.md): the rules that decide how the
 * next matching transactions end, and the look-up the engine's own flows make at each phase where a transaction
 * would move on anyway.
 *
 * A rule never builds a state by hand: the flow that consults it (Payouts.ts, Deposits.ts) makes the move the
 * spec's state table has for that outcome (TransactionMachine.ts: `fail`, `return`, `enter_review`), so the ledger
 * holds are voided or the return is booked as usual, and the status events carry their `sequence`. The look-up runs
 * in the store transaction of the step that consults it: the rule's use and the transaction's move commit together.
 *
 * The phases, and who consults them:
 *
 * | phase | where | outcomes |
 * |---|---|---|
 * | opened | a payout opens (Payouts.open) | `review`: a compliance hold |
 * | send | a payout is sent: broadcast on chain, handed to the bank (Payouts onSend) | `fail` with phase send |
 * | settle | a payout or a deposit settles (Payouts onSettle, Deposits onSettle), or an order's conversion (OrderTimers settled) | `fail` with phase settle |
 * | completed | a bank payout has completed (Payouts onSettle) | `return`, on a timer `afterSeconds` later |
 *
 * A rule matches a transaction only where its outcome is viable: `chain_broadcast_failed` and
 * `insufficient_onchain_balance` a crypto payout, a return a bank payout (an ACH one only with a Nacha code), a hold
 * a payout, a failure of an order's conversion leg only `provider_rejected` or `rail_unavailable` at settlement (the
 * order fails through its own table with provider_rejected or provider_unavailable). When several rules match, the oldest applies, and only it. A spent rule (its count used up) stays
 * listed with `remaining: 0`, so the tester can read which transactions it ended, until it is deleted.
 *
 * Only the world model's own steps consult the rules; a simulate call on a transaction does what it says.
 */
import {
  type Chain,
  chainOnlyFailureCodes,
  defaultFailurePhase,
  type Environment,
  maxOutcomeRulesPerOrganization,
  nachaReturnCode,
  orderLegFailures,
  orderLegTypes,
  type OutcomeMatch,
  type OutcomeRule,
  type OutcomeRuleCreate,
  type OutcomeRulesCleared,
  outcomeRuleTransactionsShown,
  type PayoutRail,
  type ScriptedOutcome,
  toIso,
  type TransactionSide,
  type TransactionType
} from "@fos/contract"
import { Clock, Effect } from "effect"
import * as Domain from "../kernel/Domain.ts"
import * as IdGenerator from "../kernel/IdGenerator.ts"
import * as Paging from "../kernel/Paging.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"

export interface OutcomeRuleRow {
  readonly id: string
  readonly organizationId: string
  readonly environment: "sandbox"
  /** The store's sequence when created: rules are tried oldest first. */
  readonly seq: number
  readonly createdAt: string
  readonly match: OutcomeMatch
  readonly outcome: ScriptedOutcome
  readonly count?: number
  readonly remaining?: number
  readonly applied: number
  /** The latest transactions it applied to, oldest first. */
  readonly transactionIds: ReadonlyArray<string>
}

export const OutcomeRules = Store.table<OutcomeRuleRow>({
  name: "simulated_outcomes",
  key: (r) => r.id,
  orders: { byScope: { partition: (r) => Tenancy.scopeOf(r.organizationId, r.environment), sort: (r) => r.seq } }
})

/** A sandbox's scripted outcome rules. */
export const domain = Domain.make({
  name: "simulate/Outcomes",
  tables: [
    // Outcome rules are sandbox state like faults: a reset removes them, a snapshot saves and restores them.
    Domain.inScope(OutcomeRules, "byScope")
  ]
})

export const toWire = (r: OutcomeRuleRow): OutcomeRule => ({
  id: r.id,
  match: r.match,
  outcome: r.outcome,
  ...(r.count === undefined ? {} : { count: r.count, remaining: r.remaining ?? 0 }),
  applied: r.applied,
  transactionIds: [...r.transactionIds],
  createdAt: r.createdAt
})

/** Whose rules: an API caller, or an organization an operator names (`fos outcomes`), always in the sandbox. */
export interface OutcomeOwner {
  readonly organization: { readonly id: string }
  readonly environment: Environment
}

const sandboxOnly = (owner: OutcomeOwner) =>
  owner.environment === "sandbox" ? Effect.void : Effect.fail(Problem.apiError("NOT_FOUND", "Simulate endpoints exist only under /sandbox."))

const invalid = (pointer: string, detail: string) =>
  Effect.fail(Problem.invalidRequest([{ pointer, detail }]))

/** Compares two decimal strings as numbers: "10" and "10.00" are equal. */
export const compareDecimals = (a: string, b: string): number => {
  const [ai = "0", af = ""] = a.split(".")
  const [bi = "0", bf = ""] = b.split(".")
  const scale = Math.max(af.length, bf.length)
  const x = BigInt(ai + af.padEnd(scale, "0"))
  const y = BigInt(bi + bf.padEnd(scale, "0"))
  return x < y ? -1 : x > y ? 1 : 0
}

/**
 * Refuses a rule that could never apply (400 VALIDATION_ERROR with a pointer), so a tester's mistake is not a rule
 * that silently waits forever: a rail with a chain, bounds that exclude each other, an outcome no matching
 * transaction can meet.
 */
const checkRule = (body: OutcomeRuleCreate) => {
  const { match, outcome } = body
  if (match.rail !== undefined && match.chain !== undefined) return invalid("/match/chain", "cannot be given with rail: money moves over a bank rail or on a chain, not both")
  if (match.minAmount !== undefined && match.maxAmount !== undefined && compareDecimals(match.minAmount, match.maxAmount) > 0) {
    return invalid("/match/maxAmount", "must be at least minAmount")
  }
  if (match.amount !== undefined) {
    if (match.minAmount !== undefined && compareDecimals(match.amount, match.minAmount) < 0) return invalid("/match/amount", "must be at least minAmount")
    if (match.maxAmount !== undefined && compareDecimals(match.amount, match.maxAmount) > 0) return invalid("/match/amount", "must be at most maxAmount")
  }
  const deposit = match.type === "deposit"
  if (match.type !== undefined && orderLegTypes.has(match.type)) {
    if (outcome.type !== "fail") return invalid("/outcome/type", "an order's conversion leg only fails (type fail), at settlement, through its order")
    if (orderLegFailures[outcome.failureCode] === undefined) {
      return invalid("/outcome/failureCode", `an order's conversion leg fails with ${Object.keys(orderLegFailures).join(" or ")} (the order with provider_rejected or provider_unavailable)`)
    }
    if (outcome.phase === "send") return invalid("/outcome/phase", "an order's conversion leg fails at settlement; phase must be settle")
  }
  switch (outcome.type) {
    case "review":
      return deposit ? invalid("/outcome/type", "a compliance hold applies to payouts (type withdrawal), not to deposits") : Effect.void
    case "return":
      if (deposit || match.chain !== undefined) return invalid("/outcome/type", "a return applies to bank payouts (type withdrawal over a rail)")
      if (match.rail === "ach" && !nachaReturnCode.test(outcome.returnCode)) return invalid("/outcome/returnCode", "must be a Nacha return code (R and two digits) on an ACH payout")
      return Effect.void
    case "fail": {
      const phase = outcome.phase ?? defaultFailurePhase(outcome.failureCode)
      if (chainOnlyFailureCodes.has(outcome.failureCode)) {
        if (phase !== "send") return invalid("/outcome/phase", `${outcome.failureCode} happens at the send (nothing was broadcast); phase must be send`)
        if (deposit || match.rail !== undefined) return invalid("/outcome/failureCode", `${outcome.failureCode} applies to crypto payouts (type withdrawal on a chain)`)
      }
      if (outcome.failureCode === "insufficient_funds_at_settle" && phase !== "settle") return invalid("/outcome/phase", "insufficient_funds_at_settle happens at settlement; phase must be settle")
      if (phase === "send" && deposit) return invalid("/outcome/phase", "a deposit is not sent by fos; a deposit's phase is settle")
      return Effect.void
    }
  }
}

/** `POST /simulate/outcomes`: stores a rule of the owner's sandbox, within the bound. */
export const create = (owner: OutcomeOwner, body: OutcomeRuleCreate): Effect.Effect<OutcomeRule, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    yield* sandboxOnly(owner)
    yield* checkRule(body)
    const store = yield* Store.Store
    return yield* store.transaction(Effect.gen(function*() {
      // The organization's row lock orders concurrent creations, so the bound holds.
      yield* store.getForUpdate(Tenancy.Organizations, owner.organization.id)
      const scope = Tenancy.scopeOf(owner.organization.id, "sandbox")
      if ((yield* store.count(OutcomeRules, "byScope", scope)) >= maxOutcomeRulesPerOrganization) {
        // 409, as a snapshot past its bound is (docs/decisions.md): the sandbox's rules refuse it, and deleting one clears it.
        return yield* Problem.apiError("CONFLICT", `A sandbox holds at most ${maxOutcomeRulesPerOrganization} outcome rules, spent ones included; delete some first.`, {
          resolution: "Delete rules you no longer need (DELETE /v2/simulate/outcomes/{ruleId}, or DELETE /v2/simulate/outcomes for all), then create this one."
        })
      }
      const row: OutcomeRuleRow = {
        id: yield* IdGenerator.newPlainId("otr"),
        organizationId: owner.organization.id,
        environment: "sandbox",
        seq: yield* store.nextSequence,
        createdAt: toIso(yield* Clock.currentTimeMillis),
        match: body.match,
        outcome: body.outcome,
        ...(body.count === undefined ? {} : { count: body.count, remaining: body.count }),
        applied: 0,
        transactionIds: []
      }
      yield* Effect.orDie(store.insert(OutcomeRules, row))
      return toWire(row)
    }))
  })

/** `GET /simulate/outcomes`: the sandbox's rules, oldest first, paged. */
export const list = (owner: OutcomeOwner, query: Paging.ListQuery): Effect.Effect<Paging.ListEnvelope<OutcomeRule>, Problem.ApiError, Store.Store> =>
  Effect.andThen(
    sandboxOnly(owner),
    Paging.listPage(OutcomeRules, { order: "byScope", partition: Tenancy.scopeOf(owner.organization.id, "sandbox"), query, toWire })
  )

/** `DELETE /simulate/outcomes/{ruleId}`: one rule; another organization's is 404 as a missing one. */
export const remove = (owner: OutcomeOwner, id: string): Effect.Effect<void, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    yield* sandboxOnly(owner)
    const store = yield* Store.Store
    const row = yield* store.get(OutcomeRules, id)
    if (row === undefined || row.organizationId !== owner.organization.id) return yield* Problem.apiError("NOT_FOUND", "No outcome rule with this id.")
    yield* store.remove(OutcomeRules, id)
  })

/** `DELETE /simulate/outcomes`: every rule of the sandbox. */
export const clear = (owner: OutcomeOwner): Effect.Effect<OutcomeRulesCleared, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    yield* sandboxOnly(owner)
    const store = yield* Store.Store
    return { removed: yield* store.removePartition(OutcomeRules, "byScope", Tenancy.scopeOf(owner.organization.id, "sandbox")) }
  })

// --- the look-up at a phase ------------------------------------------------------------------------------------------

/** Where a transaction is when a flow consults the rules (the module's table). */
export type Phase = "opened" | "send" | "settle" | "completed"

/** The outcomes a phase can carry out, by their `type`. */
export type OutcomeAt<P extends Phase> = P extends "opened" ? Extract<ScriptedOutcome, { type: "review" }>
  : P extends "completed" ? Extract<ScriptedOutcome, { type: "return" }>
  : Extract<ScriptedOutcome, { type: "fail" }>

const phaseOf = (outcome: ScriptedOutcome): Phase =>
  outcome.type === "review" ? "opened" : outcome.type === "return" ? "completed" : outcome.phase ?? defaultFailurePhase(outcome.failureCode)

/**
 * What a rule's matcher reads of a transaction: of a stored one (money/Transactions.ts `outcomeFactsOf`), or of a
 * payout about to open. Money hands it over, so that this module, below money, knows no stored transaction.
 */
export interface TransactionFacts {
  readonly customerId: string
  readonly type: TransactionType
  readonly route: { readonly rail?: PayoutRail | undefined; readonly chain?: Chain | undefined }
  /** The amount the bounds compare (`amountOf`). */
  readonly amount: string
  readonly clientReferenceId: string | undefined
  readonly destinationType: TransactionSide["type"]
}

const matches = (rule: OutcomeRuleRow, t: TransactionFacts, phase: Phase): boolean => {
  const { match, outcome } = rule
  if (phaseOf(outcome) !== phase) return false
  const { route, amount } = t
  const matched = (match.customerId === undefined || match.customerId === t.customerId) &&
    (match.type === undefined || match.type === t.type) &&
    (match.rail === undefined || match.rail === route.rail) &&
    (match.chain === undefined || match.chain === route.chain) &&
    (match.amount === undefined || compareDecimals(amount, match.amount) === 0) &&
    (match.minAmount === undefined || compareDecimals(amount, match.minAmount) >= 0) &&
    (match.maxAmount === undefined || compareDecimals(amount, match.maxAmount) <= 0) &&
    (match.clientReferenceId === undefined || match.clientReferenceId === t.clientReferenceId)
  if (!matched) return false
  // Viability: only a transaction the outcome can happen to.
  switch (outcome.type) {
    case "review":
      return t.type === "withdrawal"
    case "return":
      return t.type === "withdrawal" && t.destinationType === "external_bank" && (route.rail !== "ach" || nachaReturnCode.test(outcome.returnCode))
    case "fail":
      if (orderLegTypes.has(t.type)) return phase === "settle" && orderLegFailures[outcome.failureCode] !== undefined
      if (t.type !== "withdrawal" && t.type !== "deposit") return false
      if (chainOnlyFailureCodes.has(outcome.failureCode)) return t.type === "withdrawal" && route.chain !== undefined
      return phase === "settle" || t.type === "withdrawal"
  }
}

/** A rule chosen for a transaction (locked), with the outcome it carries out at the phase it was chosen at. */
export interface Chosen<P extends Phase> {
  readonly rule: OutcomeRuleRow
  readonly outcome: OutcomeAt<P>
}

/**
 * The oldest rule of the sandbox that matches `facts` at `phase`, locked but not yet used; undefined when none
 * does, or outside the sandbox. A payout about to open chooses its hold before it exists (so it opens in review, and
 * transaction.created carries the stage), then `use`s it with its id.
 */
export const choose = <P extends Phase>(
  organizationId: string,
  environment: Environment,
  facts: TransactionFacts,
  phase: P
): Effect.Effect<Chosen<P> | undefined, never, Store.Store> =>
  Effect.gen(function*() {
    if (environment !== "sandbox") return undefined
    const store = yield* Store.Store
    const rules = yield* store.page(OutcomeRules, {
      order: "byScope",
      partition: Tenancy.scopeOf(organizationId, "sandbox"),
      descending: false,
      backward: false,
      from: undefined,
      limit: maxOutcomeRulesPerOrganization
    })
    for (const candidate of rules) {
      if (candidate.remaining === 0 || !matches(candidate, facts, phase)) continue
      const rule = yield* store.getForUpdate(OutcomeRules, candidate.id)
      // Spent or deleted by a concurrent step meanwhile: the next rule may still match.
      if (rule === undefined || rule.remaining === 0) continue
      return { rule, outcome: rule.outcome as OutcomeAt<P> }
    }
    return undefined
  })

/** Uses a chosen rule once, for `transactionId`: counted, and the id recorded. */
export const use = (chosen: Chosen<Phase>, transactionId: string): Effect.Effect<void, never, Store.Store> =>
  Effect.gen(function*() {
    const rule = chosen.rule
    yield* Effect.orDie((yield* Store.Store).update(OutcomeRules, {
      ...rule,
      applied: rule.applied + 1,
      ...(rule.remaining === undefined ? {} : { remaining: rule.remaining - 1 }),
      transactionIds: [...rule.transactionIds, transactionId].slice(-outcomeRuleTransactionsShown)
    }))
  })

/**
 * The oldest rule of the transaction's sandbox that matches it at `phase`, used once for it (counted, and its id
 * recorded); undefined when none does, or outside the sandbox. Runs in the caller's store transaction.
 */
export const take = <P extends Phase>(
  t: { readonly id: string; readonly organizationId: string; readonly environment: Environment },
  facts: TransactionFacts,
  phase: P
): Effect.Effect<OutcomeAt<P> | undefined, never, Store.Store> =>
  Effect.gen(function*() {
    const chosen = yield* choose(t.organizationId, t.environment, facts, phase)
    if (chosen === undefined) return undefined
    yield* use(chosen, t.id)
    return chosen.outcome
  })
