/**
 * Scripted outcomes (sandbox only): rules that decide how the next matching transactions end, and at which phase,
 * so a tester can force the failures production brings without chasing a transaction id.
 *
 * A rule matches transactions by customer, type, rail or chain, amount (exact, or within bounds) and
 * `clientReferenceId`, and names an outcome that the engine's own flows carry out where they would move the
 * transaction on anyway: a payout failing at its send (`chain_broadcast_failed`: "broadcast or signing did not reach
 * finality; no funds left the wallet") or at its settlement (`insufficient_funds_at_settle`, a payment-rail
 * failure); a bank payout returned after completion ("returned_by_sender: a bank returned the transfer; may carry
 * returnedAt, returnReason, returnCode (Nacha code when sent)"); or a payout held in compliance review. Each applies
 * to its next `count` matches, or to every match until it is deleted. docs/outcomes.md has the shapes and phases.
 */
import { Schema } from "effect"
import "../kernel/Annotations.ts"
import { CustomerId } from "../kernel/Ids.ts"
import { listOf, listQuery } from "../kernel/Lists.ts"
import { Chain } from "../kernel/Money.ts"
import { DecimalString, NonBlankString } from "../kernel/Primitives.ts"
import { PayoutRail } from "../money/Transactions.ts"

/** An outcome rule's id: `otr_` and 1 to 64 letters or digits. */
export const OutcomeRuleId = Schema.String.check(
  Schema.isPattern(/^otr_[0-9A-Za-z]{1,64}$/, {
    fosCode: "INVALID_OID_FORMAT",
    fosDetail: "must be an outcome rule id (otr_ followed by 1 to 64 letters or digits)"
  })
).pipe(Schema.brand("OutcomeRuleId"))
export type OutcomeRuleId = typeof OutcomeRuleId.Type

/** The most outcome rules one organization's sandbox holds at once (spent ones included, until deleted). */
export const maxOutcomeRulesPerOrganization = 50
/** The largest `count` a rule may be given. */
export const maxOutcomeRuleCount = 1000
/** The longest a scripted return may wait after the payout completed: 90 days, in seconds. */
export const maxReturnDelaySeconds = 90 * 24 * 60 * 60
/** How many of the transactions a rule applied to it lists (the latest). */
export const outcomeRuleTransactionsShown = 20

/**
 * The transaction types whose phases consult the rules: payouts (`withdrawal`, an order's autoPayout too), deposits,
 * and an order's conversion legs (`onramp`, `offramp`, `conversion`, `fiat_conversion`), which end through their order.
 */
export const ScriptableTransactionTypes = ["withdrawal", "deposit", "onramp", "offramp", "conversion", "fiat_conversion"] as const

/** An order's conversion legs: they fail at settlement only, through the order (order.failed with its reasonCode). */
export const orderLegTypes: ReadonlySet<string> = new Set(["onramp", "offramp", "conversion", "fiat_conversion"])

/** The failure codes a rule may end a transaction with (the spec's failureCode table). */
export const ScriptableFailureCodes = [
  "chain_broadcast_failed",
  "insufficient_onchain_balance",
  "insufficient_funds_at_settle",
  "rail_unavailable",
  "rail_policy_rejected",
  "provider_rejected"
] as const
export type ScriptableFailureCode = typeof ScriptableFailureCodes[number]

/** The codes of a transfer on chain, which only a crypto payout's send can meet: nothing was broadcast. */
export const chainOnlyFailureCodes: ReadonlySet<ScriptableFailureCode> = new Set(["chain_broadcast_failed", "insufficient_onchain_balance"])

/** Where a failure happens: at the payout's send (broadcast, or hand-off to the bank) or at settlement. */
export const FailurePhases = ["send", "settle"] as const
export type FailurePhase = typeof FailurePhases[number]

/**
 * The failure codes an order's conversion leg may be scripted with, and the order's reasonCode for each (the
 * inverse of the order's own mapping, Orders.ts): the transaction fails with the code, the order with the reason.
 */
export const orderLegFailures: Readonly<Partial<Record<ScriptableFailureCode, "provider_rejected" | "provider_unavailable">>> = {
  provider_rejected: "provider_rejected",
  rail_unavailable: "provider_unavailable"
}

/** The phase a failure code happens at when the rule names none. */
export const defaultFailurePhase = (code: ScriptableFailureCode): FailurePhase => (chainOnlyFailureCodes.has(code) ? "send" : "settle")

/** A Nacha return code: what an ACH payout's return carries. */
export const nachaReturnCode = /^R\d{2}$/

/** Which transactions a rule applies to: every member given must match; none given matches every transaction. */
export const OutcomeMatch = Schema.Struct({
  customerId: Schema.optionalKey(CustomerId),
  /** `withdrawal` (a payout), `deposit`, or an order's leg: `onramp`, `offramp`, `conversion`, `fiat_conversion`. */
  type: Schema.optionalKey(Schema.Literals(ScriptableTransactionTypes)),
  /** The bank rail the money moves over. */
  rail: Schema.optionalKey(PayoutRail),
  /** The chain the money moves on. */
  chain: Schema.optionalKey(Chain),
  /**
   * The amount exactly, compared as a number ("10" matches "10.00"): a payout's amount (its destination's), and
   * otherwise what the transaction's source sends (a deposit's amount sent, an order leg's debit).
   */
  amount: Schema.optionalKey(DecimalString),
  /** At least this amount. */
  minAmount: Schema.optionalKey(DecimalString),
  /** At most this amount. */
  maxAmount: Schema.optionalKey(DecimalString),
  clientReferenceId: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(128, { fosDetail: "must be at most 128 characters" })))
}).annotate({ identifier: "OutcomeMatch" })
export type OutcomeMatch = typeof OutcomeMatch.Type

/** How a matching transaction ends. */
export const ScriptedOutcome = Schema.Union([
  Schema.Struct({
    /** The transaction fails with `failureCode` at `phase`; what it held is released (transaction.failed). */
    type: Schema.Literal("fail"),
    failureCode: Schema.Literals(ScriptableFailureCodes),
    /** `send` (a payout only) or `settle`; by default `send` for the chain codes and `settle` for the others. */
    phase: Schema.optionalKey(Schema.Literals(FailurePhases))
  }),
  Schema.Struct({
    /** A bank payout completes, then its beneficiary's bank returns it `afterSeconds` later (returned_by_sender). */
    type: Schema.Literal("return"),
    /** On ACH a Nacha code, R and two digits (R01); the rule then applies only to ACH payouts if it is one of those. */
    returnCode: NonBlankString.check(Schema.isMaxLength(16, { fosDetail: "must be at most 16 characters" })),
    /** The return's reason; by default the Nacha code's own text. */
    returnReason: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(200, { fosDetail: "must be at most 200 characters" }))),
    afterSeconds: Schema.Number.check(Schema.isInt(), Schema.isBetween({ minimum: 0, maximum: maxReturnDelaySeconds }, {
      fosDetail: `must be a whole number of seconds from 0 to ${maxReturnDelaySeconds} (90 days)`
    }))
  }),
  Schema.Struct({
    /**
     * A compliance hold: the payout enters review as it opens (transaction.under_review) and stays there, whatever
     * the world model's reviewers would do, until `POST /simulate/transactions/{id}/review` clears or rejects it.
     */
    type: Schema.Literal("review")
  })
]).annotate({ identifier: "ScriptedOutcome" })
export type ScriptedOutcome = typeof ScriptedOutcome.Type

const OutcomeRuleCount = Schema.Number.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: maxOutcomeRuleCount }, {
  fosDetail: `must be a whole number from 1 to ${maxOutcomeRuleCount}`
}))

/** `POST /simulate/outcomes`: a rule for the next `count` matching transactions, or until deleted when omitted. */
export const OutcomeRuleCreate = Schema.Struct({
  match: OutcomeMatch,
  outcome: ScriptedOutcome,
  count: Schema.optionalKey(OutcomeRuleCount)
}).annotate({ identifier: "OutcomeRuleCreate" })
export type OutcomeRuleCreate = typeof OutcomeRuleCreate.Type

/** A rule as listed: what it matches, what it does, how much of it is left, and the transactions it ended. */
export const OutcomeRule = Schema.Struct({
  id: Schema.String,
  match: OutcomeMatch,
  outcome: ScriptedOutcome,
  /** The count it was given; omitted when it applies until deleted. */
  count: Schema.optionalKey(Schema.Number),
  /** How many more transactions it applies to (0: spent, listed until deleted); omitted when it applies until deleted. */
  remaining: Schema.optionalKey(Schema.Number),
  /** How many transactions it has applied to. */
  applied: Schema.Number,
  /** The transactions it applied to, oldest first (the latest 20). */
  transactionIds: Schema.Array(Schema.String),
  createdAt: Schema.String
}).annotate({ identifier: "OutcomeRule" })
export type OutcomeRule = typeof OutcomeRule.Type

/** The sandbox's rules, oldest first, paged. */
export const OutcomeRuleList = listOf(OutcomeRule).annotate({ identifier: "OutcomeRuleList" })
export const OutcomeRuleQuery = listQuery(["createdAt"] as const)
export type OutcomeRuleList = typeof OutcomeRuleList.Type

/** What `DELETE /simulate/outcomes` removed. */
export const OutcomeRulesCleared = Schema.Struct({ removed: Schema.Number }).annotate({ identifier: "OutcomeRulesCleared" })
export type OutcomeRulesCleared = typeof OutcomeRulesCleared.Type
