/**
 * Scripted faults (sandbox only): what a tester arms so that fos fails the way production fails, on demand.
 *
 * - A request fault matches requests by method, path template (as the OpenAPI document writes it, for example
 *   `/v2/customers/{customerId}`) or operation id (`customers.get`), and optionally a customer, and its effect is an
 *   injected catalog problem, added latency, or commit-then-lose (the write commits and the answer is lost).
 * - A receiver fault makes a webhook endpoint's next attempts fail with a status, or time out, as if its receiver
 *   did; the retry timetable runs as usual.
 *
 * Each applies to its next `count` matches, or to every match until it is deleted. A request fault with a
 * `probability` affects each matching request with that probability, and a latency may be a range: which requests
 * are affected, and how long each waits, is drawn from the engine's seed when it has one, so two runs with one seed
 * fail the same requests. docs/faults.md has the shapes.
 */
import { Schema } from "effect"
import "../kernel/Annotations.ts"
import { CustomerId } from "../kernel/Ids.ts"
import { listOf } from "../kernel/Lists.ts"

/** A fault's id: `flt_` and 1 to 64 letters or digits. */
export const FaultId = Schema.String.check(
  Schema.isPattern(/^flt_[0-9A-Za-z]{1,64}$/, {
    fosCode: "INVALID_OID_FORMAT",
    fosDetail: "must be a fault id (flt_ followed by 1 to 64 letters or digits)"
  })
).pipe(Schema.brand("FaultId"))
export type FaultId = typeof FaultId.Type

/** The most faults one organization's sandbox holds at once. */
export const maxFaultsPerOrganization = 50
/** The largest `count` a fault may be armed for. */
export const maxFaultCount = 1000
/** The longest latency a fault adds, in milliseconds. */
export const maxFaultLatencyMs = 30_000

/** The catalog problems a request fault may answer with. */
export const InjectableProblems = [
  "SERVICE_UNAVAILABLE",
  "BAD_GATEWAY",
  "INTERNAL_ERROR",
  "RATE_LIMITED",
  "POLICY_EVALUATION_UNAVAILABLE",
  "PROVIDER_UNAVAILABLE",
  "RATE_UNAVAILABLE",
  "IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS"
] as const

export const FaultMethods = ["GET", "POST", "PATCH", "PUT", "DELETE"] as const

/** A latency, in whole milliseconds. */
const FaultLatencyMs = Schema.Number.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: maxFaultLatencyMs }, {
  fosDetail: `must be a whole number of milliseconds from 1 to ${maxFaultLatencyMs}`
}))

/** A range of latencies: each affected request waits a whole number of milliseconds drawn from `min` to `max`, both included. */
export const FaultLatencyRange = Schema.Struct({
  min: FaultLatencyMs,
  max: FaultLatencyMs
}).check(Schema.makeFilter((r) => r.max < r.min ? { path: ["max"], issue: "must be at least min" } : undefined)).annotate({ identifier: "FaultLatencyRange" })
export type FaultLatencyRange = typeof FaultLatencyRange.Type

/** The chance that a fault affects a matching request: more than 0, at most 1 (every request, as without one). */
export const FaultProbability = Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1, exclusiveMinimum: true }, {
  fosDetail: "must be a number greater than 0 and at most 1, such as 0.3"
}))

/** Which requests a request fault applies to: every member given must match. */
export const FaultMatch = Schema.Struct({
  method: Schema.optionalKey(Schema.Literals(FaultMethods)),
  /** A path template of the OpenAPI document, without the base address: `/v2/customers/{customerId}`. */
  path: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(200))),
  /** An operation id of the OpenAPI document: `customers.get`. */
  operationId: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(100))),
  /** Only requests that name this customer: in the path, the query, or the body's top-level `customerId`. */
  customerId: Schema.optionalKey(CustomerId)
}).check(Schema.makeFilter((m) =>
  m.path === undefined && m.operationId === undefined ? { path: ["path"], issue: "path or operationId is required" } : undefined
)).annotate({ identifier: "FaultMatch" })
export type FaultMatch = typeof FaultMatch.Type

/** What a request fault does to a matching request. */
export const FaultEffect = Schema.Union([
  Schema.Struct({
    /** Answer a catalog problem instead of running the request: nothing is committed. */
    type: Schema.Literal("problem"),
    code: Schema.Literals(InjectableProblems),
    /** The Retry-After (and the problem's retryAfterSeconds); RATE_LIMITED's is 1 when omitted. */
    retryAfterSeconds: Schema.optionalKey(Schema.Number.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 3600 }, {
      fosDetail: "must be a whole number of seconds from 1 to 3600"
    })))
  }),
  Schema.Struct({
    /**
     * Hold the request this long (real time, as the network would) before running it as usual: `ms` milliseconds,
     * or a time drawn for each affected request from a range `{ "min": a, "max": b }`.
     */
    type: Schema.Literal("latency"),
    ms: Schema.Union([FaultLatencyMs, FaultLatencyRange])
  }),
  Schema.Struct({
    /**
     * Run the request and commit it (its idempotency record included), then lose its answer: the client cannot tell
     * whether it happened, and a retry with the same Idempotency-Key replays it.
     */
    type: Schema.Literal("commit_then_lose"),
    /**
     * How the answer is lost: `internal_error` (the default) answers 500 INTERNAL_ERROR instead; `dropped_connection`
     * closes the client's connection with no answer at all (on a server that can: Node's; see docs/faults.md).
     */
    lose: Schema.optionalKey(Schema.Literals(["internal_error", "dropped_connection"]))
  })
]).annotate({ identifier: "FaultEffect" })
export type FaultEffect = typeof FaultEffect.Type

const FaultCount = Schema.Number.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: maxFaultCount }, {
  fosDetail: `must be a whole number from 1 to ${maxFaultCount}`
}))

/**
 * `POST /simulate/faults`: a request fault, for the next `count` requests it affects, or until deleted when `count`
 * is omitted. With a `probability`, each matching request is affected with that chance (drawn from the engine's
 * seed when it has one); a request it spares runs as usual and uses none of the count.
 */
export const FaultCreate = Schema.Struct({
  match: FaultMatch,
  effect: FaultEffect,
  count: Schema.optionalKey(FaultCount),
  probability: Schema.optionalKey(FaultProbability)
}).annotate({ identifier: "FaultCreate" })
export type FaultCreate = typeof FaultCreate.Type

/** What a receiver fault makes each attempt of the endpoint's deliveries meet. */
export const ReceiverFaultEffect = Schema.Union([
  /** The receiver answers this status (any non-2xx makes the attempt fail). */
  Schema.Struct({
    type: Schema.Literal("status"),
    status: Schema.Number.check(Schema.isInt(), Schema.isBetween({ minimum: 100, maximum: 599 }, { fosDetail: "must be an HTTP status from 100 to 599" }))
  }),
  /** The receiver does not answer within the five seconds it is given. */
  Schema.Struct({ type: Schema.Literal("timeout") })
]).annotate({ identifier: "ReceiverFaultEffect" })
export type ReceiverFaultEffect = typeof ReceiverFaultEffect.Type

/** `POST /simulate/webhooks/endpoints/{id}/faults`: the endpoint's next `count` attempts (or all, until deleted). */
export const ReceiverFaultCreate = Schema.Struct({
  effect: ReceiverFaultEffect,
  count: Schema.optionalKey(FaultCount)
}).annotate({ identifier: "ReceiverFaultCreate" })
export type ReceiverFaultCreate = typeof ReceiverFaultCreate.Type

/** A fault as listed: what it matches, what it does, and how much of it is left. */
export const Fault = Schema.Struct({
  id: Schema.String,
  /** `request`: matches API requests; `receiver`: a webhook endpoint's delivery attempts. */
  target: Schema.Literals(["request", "receiver"]),
  /** A request fault's matcher. */
  match: Schema.optionalKey(FaultMatch),
  /** A receiver fault's endpoint. */
  webhookEndpointId: Schema.optionalKey(Schema.String),
  effect: Schema.Union([FaultEffect, ReceiverFaultEffect]),
  /** The count it was armed for; omitted when it applies until deleted. */
  count: Schema.optionalKey(Schema.Number),
  /** How many more requests it will affect; omitted when it applies until deleted. */
  remaining: Schema.optionalKey(Schema.Number),
  /** How many times it has applied. */
  applied: Schema.Number,
  /** A request fault's chance of affecting a matching request; omitted when it affects every one. */
  probability: Schema.optionalKey(Schema.Number),
  /** With a probability: how many matching requests it has drawn for, those it spared included. */
  draws: Schema.optionalKey(Schema.Number),
  createdAt: Schema.String
}).annotate({ identifier: "Fault" })
export type Fault = typeof Fault.Type

/** Every fault of the sandbox, oldest first (at most `maxFaultsPerOrganization`, so one page). */
export const FaultList = listOf(Fault).annotate({ identifier: "FaultList" })
export type FaultList = typeof FaultList.Type

/** What `DELETE /simulate/faults` removed. */
export const FaultsCleared = Schema.Struct({ removed: Schema.Number }).annotate({ identifier: "FaultsCleared" })
export type FaultsCleared = typeof FaultsCleared.Type
