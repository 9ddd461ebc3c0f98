/**
 * Requests for information (RFIs): the service asking the caller for information about a transaction. While one
 * waits for the caller, the transaction shows `hasRfi: true` and stage `awaiting_customer_action`. The spec shows an
 * RFI's identifier and its rfi.* events only; docs/money.md ("Requests for information") gives fos's fields, statuses
 * and deadline rule.
 */
import { Schema } from "effect"
import "../kernel/Annotations.ts"
import { DocumentId } from "../kernel/Ids.ts"
import { NonBlankString, UtcTimestamp } from "../kernel/Primitives.ts"

/**
 * `awaiting_response`: published or more asked, the deadline runs; `under_review`: the caller answered, the service
 * reads; `resolved`, `cancelled`, `expired` (the deadline passed unanswered) end it, though a reviewer may reopen a
 * resolved one.
 */
export const RfiStatuses = ["awaiting_response", "under_review", "resolved", "cancelled", "expired"] as const
export type RfiStatus = typeof RfiStatuses[number]

export const RfiQuestion = Schema.Struct({
  id: Schema.String,
  text: Schema.String,
  /** `text`: an answer in words; `document`: one or more supporting documents. */
  kind: Schema.Literals(["text", "document"]),
  askedAt: UtcTimestamp
})

export const RfiAnswer = Schema.Struct({
  questionId: NonBlankString,
  text: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(4000, { fosDetail: "must be at most 4000 characters" }))),
  documentIds: Schema.optionalKey(Schema.Array(DocumentId).check(Schema.isMaxLength(10, { fosDetail: "must hold at most 10 document ids" })))
}).check(Schema.makeFilter((a) => (a.text === undefined && a.documentIds === undefined ? { path: ["text"], issue: "or documentIds is required" } : undefined)))

/** `POST /v2/rfis/{id}/responses` (Idempotency-Key required). */
export const RfiResponseCreate = Schema.Struct({
  answers: Schema.Array(RfiAnswer).check(Schema.isMinLength(1, { fosDetail: "must hold at least one answer" }), Schema.isMaxLength(50))
}).annotate({ identifier: "RfiResponseCreate", description: "The answers to a request for information, with the ids of any documents uploaded for it." })
export type RfiResponseCreate = typeof RfiResponseCreate.Type

export const Rfi = Schema.Struct({
  id: Schema.String,
  customerId: Schema.String,
  transactionId: Schema.String,
  status: Schema.Literals(RfiStatuses),
  questions: Schema.Array(RfiQuestion),
  /** When an unanswered RFI expires (docs/money.md). */
  deadline: UtcTimestamp,
  responses: Schema.Array(Schema.Struct({ submittedAt: UtcTimestamp, answers: Schema.Array(RfiAnswer) })),
  createdAt: UtcTimestamp,
  updatedAt: UtcTimestamp
}).annotate({ identifier: "Rfi", description: "A request for information compliance raised on a transaction: its questions, the answers given, its deadline and status." })
export type Rfi = typeof Rfi.Type

/** `POST /v2/simulate/transactions/{id}/rfi`: a reviewer publishes an RFI on the transaction. */
export const RfiPublish = Schema.Struct({
  questions: Schema.Array(Schema.Struct({ text: NonBlankString, kind: Schema.optionalKey(Schema.Literals(["text", "document"])) }))
    .check(Schema.isMinLength(1, { fosDetail: "must hold at least one question" }), Schema.isMaxLength(20)),
  /** How long the caller has to answer; the world model's default when omitted. */
  deadlineSeconds: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1), Schema.isLessThanOrEqualTo(90 * 86_400)))
}).annotate({ identifier: "RfiPublish", description: "A request for information to raise on a transaction." })
export type RfiPublish = typeof RfiPublish.Type

/** `POST /v2/simulate/rfis/{id}`: the reviewer's next move on an RFI. */
export const RfiReview = Schema.Struct({
  action: Schema.Literals(["request_more", "extend_deadline", "resolve", "reopen", "cancel"]),
  /** With request_more and reopen: the new questions. */
  questions: Schema.optionalKey(RfiPublish.fields.questions),
  /** With extend_deadline (and optionally request_more, reopen): seconds from now to the new deadline. */
  deadlineSeconds: Schema.optionalKey(RfiPublish.fields.deadlineSeconds.schema)
}).annotate({ identifier: "RfiReview", description: "Compliance's action on a request for information: resolve, ask for more, extend the deadline or cancel." })
export type RfiReview = typeof RfiReview.Type
