/**
 * The sandbox's simulate surface as a caller sees it: the virtual clock, and the outside actors' decisions
 * (compliance, operations) that tests drive.
 */
import { Schema } from "effect"
import "../kernel/Annotations.ts"
import { NonBlankString } from "../kernel/Primitives.ts"
import { ApplicationFailureCodes, RejectionCategories } from "../onboarding/Applications.ts"

export const ClockNow = Schema.Struct({ now: Schema.String }).annotate({ identifier: "ClockNow" })
export type ClockNow = typeof ClockNow.Type

/** The longest advance, in seconds: ten years. */
export const maxAdvanceSeconds = 10 * 365 * 24 * 3600

/** Advance by whole seconds, or to an instant: exactly one of the two. */
export const ClockAdvance = Schema.Struct({
  seconds: Schema.optionalKey(Schema.Number.check(Schema.isInt(), Schema.isBetween({ minimum: 0, maximum: maxAdvanceSeconds }, {
    fosDetail: "must be a whole number of seconds from 0 to ten years"
  }))),
  to: Schema.optionalKey(Schema.String)
}).check(Schema.makeFilter((a) => (a.seconds === undefined) !== (a.to === undefined), {
  fosDetail: "must have exactly one of seconds or to"
})).annotate({ identifier: "ClockAdvance" })
export type ClockAdvance = typeof ClockAdvance.Type

const Reason = NonBlankString.check(Schema.isMaxLength(500, { fosDetail: "must be at most 500 characters" }))

/** An application's review outcome, as compliance decides it. */
export const ApplicationDecision = Schema.Struct({
  outcome: Schema.Literals(["approved", "rejected"]),
  category: Schema.optionalKey(Schema.Literals(RejectionCategories)),
  reason: Schema.optionalKey(Reason)
}).annotate({ identifier: "ApplicationDecision" })
export type ApplicationDecision = typeof ApplicationDecision.Type

/** A compliance result that arrives after an organization's application was approved. */
export const LateComplianceResult = Schema.Struct({
  failureCode: Schema.optionalKey(Schema.Literals(ApplicationFailureCodes)),
  failureMessage: Schema.optionalKey(Reason),
  resubmittable: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "LateComplianceResult" })
export type LateComplianceResult = typeof LateComplianceResult.Type

export const CustomerRestriction = Schema.Struct({ type: Schema.optionalKey(Schema.Literals(["account", "monitoring"])) })
export const OrganizationRestriction = Schema.Struct({ organizationId: Schema.String, restricted: Schema.Boolean })

/**
 * What `POST /v2/simulate/reset` removed from the caller's sandbox: how many rows of each kind. The organization,
 * its users and its keys stay.
 */
export const SandboxReset = Schema.Struct({
  organizationId: Schema.String,
  environment: Schema.Literal("sandbox"),
  removed: Schema.Struct({
    customers: Schema.Number,
    applications: Schema.Number,
    documents: Schema.Number,
    virtualAccounts: Schema.Number,
    webhookEndpoints: Schema.Number,
    webhookDeliveries: Schema.Number,
    events: Schema.Number,
    timers: Schema.Number,
    idempotencyRecords: Schema.Number
  })
}).annotate({ identifier: "SandboxReset" })
export type SandboxReset = typeof SandboxReset.Type
