/**
 * Requests for information: the service asking the caller about a transaction (spec: "Compliance reviews and
 * requests for information (RFIs) can hold a transaction"; `hasRfi`; stage `awaiting_customer_action`; the rfi.*
 * events). The spec shows no RFI fields and no RFI states; fos's model, every move a real transition with its event:
 *
 * | RFI status | move | next | event | the transaction |
 * |---|---|---|---|---|
 * | (new) | reviewer publishes | awaiting_response | rfi.published | hasRfi true, stage awaiting_customer_action |
 * | awaiting_response | caller responds | under_review | rfi.response_submitted | enters review: a new review period, transaction.under_review |
 * | under_review | caller adds information | under_review | rfi.response_submitted | unchanged |
 * | under_review | reviewer asks for more | awaiting_response | rfi.more_info_requested | stage awaiting_customer_action |
 * | resolved | reviewer reopens | awaiting_response | rfi.more_info_requested | hasRfi true, stage awaiting_customer_action (if not ended) |
 * | awaiting_response, under_review | reviewer extends the deadline | unchanged | rfi.deadline_extended | unchanged |
 * | awaiting_response, under_review | reviewer resolves | resolved | rfi.resolved | hasRfi false, leaves review; a payout goes on |
 * | awaiting_response, under_review | reviewer cancels | cancelled | rfi.cancelled | hasRfi false, leaves review; a payout goes on |
 * | awaiting_response | the deadline passes | expired | rfi.cancelled | hasRfi false; fails with compliance_hold, reservation returned |
 *
 * The statuses move only through RfiMachine.ts's `transition`, this table as one pure function. `hasRfi` is true
 * while an RFI of the transaction is open (awaiting_response or under_review). The deadline is a
 * durable timer; an answered RFI (under_review) is not expired by it: the caller did its part. A transaction has at
 * most one open RFI. The reviewer's moves are the sandbox's simulate calls.
 */
import {
  type CustomerId,
  type Environment,
  Rfi as RfiSchema,
  type Rfi as RfiWire,
  RfiId,
  type RfiPublish,
  type RfiResponseCreate,
  type RfiReview,
  type RfiStatus,
  parseIso,
  toIso,
  type TransactionId
} from "@fos/contract"
import { Clock, Effect, Schema } from "effect"
import type * as Auth from "../tenancy/Auth.ts"
import * as Documents from "../onboarding/Documents.ts"
import * as Domain from "../kernel/Domain.ts"
import * as History from "../kernel/History.ts"
import * as IdGenerator from "../kernel/IdGenerator.ts"
import * as Outbox from "../kernel/Outbox.ts"
import * as Payouts from "./Payouts.ts"
import * as Problem from "../kernel/Problem.ts"
import * as RfiMachine from "./RfiMachine.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Timers from "../kernel/Timers.ts"
import * as TransactionMachine from "./TransactionMachine.ts"
import * as Transactions from "./Transactions.ts"
import * as Wire from "../kernel/Wire.ts"
import * as WorldModel from "./WorldModel.ts"

/** An RFI's row: the wire's members as they are (the contract's `Rfi`), its ids branded, and its owner. */
export interface StoredRfi extends Wire.Stored<RfiWire, "status" | "questions" | "deadline" | "responses" | "createdAt" | "updatedAt"> {
  readonly id: RfiId
  readonly organizationId: string
  readonly environment: Environment
  readonly customerId: CustomerId
  readonly transactionId: TransactionId
}

const scope = (r: StoredRfi) => Tenancy.scopeOf(r.organizationId, r.environment)

export const Rfis = Store.table<StoredRfi>({
  name: "rfis",
  key: (r) => r.id,
  orders: { byScope: { partition: scope, sort: (r) => r.id, counted: false } }
})

/** An RFI's deadline, at its `deadline`, which the timer carries: a timer of a deadline since moved does nothing. */
export const deadlineTimer = Timers.kind("rfi.deadline", Schema.Struct({ rfiId: RfiId, deadline: Schema.String }), "rfiId")

export const toWire = (r: StoredRfi): RfiWire =>
  Wire.toWire({
    id: r.id,
    customerId: r.customerId,
    transactionId: r.transactionId,
    status: r.status,
    questions: r.questions,
    deadline: r.deadline,
    responses: r.responses,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt
  }) as RfiWire

export const get = (caller: Auth.Caller, id: RfiId, forUpdate = false): Effect.Effect<StoredRfi, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const found = yield* (forUpdate ? store.getForUpdate(Rfis, id) : store.get(Rfis, id))
    if (found === undefined || scope(found) !== Tenancy.scopeOf(caller.organization.id, caller.environment)) {
      return yield* Problem.apiError("NOT_FOUND", "No request for information with this id exists in this organization and environment.")
    }
    return found
  })

/** Emits each of a move's events, in order. */
const emitRfi = (rfi: StoredRfi, events: ReadonlyArray<RfiMachine.Event>, now: string) =>
  Effect.forEach(events, (type) =>
    Outbox.emitEvent({
      type,
      organizationId: rfi.organizationId,
      environment: rfi.environment,
      data: Wire.toWire({
        rfiId: rfi.id,
        customerId: rfi.customerId,
        transactionId: rfi.transactionId,
        ...(type === "rfi.deadline_extended" ? { deadline: rfi.deadline } : {}),
        occurredAt: now
      })
    }), { discard: true })

/** Stores a move of an RFI that was `from`, with the change of status in the sandbox's history (kernel/History.ts). */
const save = (from: RfiStatus, rfi: StoredRfi) =>
  Effect.flatMap(Store.Store, (store) => Effect.andThen(Effect.orDie(store.update(Rfis, rfi)), History.recordState(from, rfi)))

const newQuestions = (rfi: Pick<StoredRfi, "questions">, asked: RfiPublish["questions"], now: string): StoredRfi["questions"] =>
  asked.map((q, i) => ({ id: `q${rfi.questions.length + i + 1}`, text: q.text, kind: q.kind ?? "text", askedAt: now }))

const scheduleDeadline = (rfi: StoredRfi) =>
  Timers.schedule(deadlineTimer, parseIso(rfi.deadline)!, { rfiId: rfi.id, deadline: rfi.deadline }, scope(rfi))

const notViable = (detail: string) => Problem.apiError("SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY", detail)

/** `POST /sandbox/v2/simulate/transactions/{id}/rfi`: a reviewer asks the caller about the transaction. */
export const publish = (caller: Auth.Caller, transactionId: TransactionId, body: RfiPublish): Effect.Effect<StoredRfi, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const transaction = yield* Transactions.get(caller, transactionId, true)
    if (TransactionMachine.terminalStatuses.has(transaction.status)) return yield* Problem.apiError("RESOURCE_TERMINAL", `The transaction has already ended (status ${transaction.status}).`)
    if (transaction.hasRfi) return yield* Problem.apiError("CONFLICT", "The transaction already has an open request for information.")
    if (transaction.stage === "awaiting_customer_action") return yield* notViable("The transaction is already waiting for the caller.")
    const nowMs = yield* Clock.currentTimeMillis
    const now = toIso(nowMs)
    const model = yield* WorldModel.WorldModel
    const rfi: StoredRfi = {
      id: yield* IdGenerator.newId("rfi"),
      organizationId: transaction.organizationId,
      environment: transaction.environment,
      customerId: transaction.customerId,
      transactionId,
      status: RfiMachine.initialStatus.status,
      questions: newQuestions({ questions: [] }, body.questions, now),
      deadline: toIso(nowMs + (body.deadlineSeconds === undefined ? model.rfiDeadlineMs : body.deadlineSeconds * 1000)),
      responses: [],
      createdAt: now,
      updatedAt: now
    }
    yield* Effect.orDie(store.insert(Rfis, rfi))
    yield* History.recordState(undefined, rfi)
    yield* Transactions.move(transactionId, { type: "request_information" })
    yield* Transactions.setHasRfi(transactionId, true)
    yield* scheduleDeadline(rfi)
    yield* emitRfi(rfi, RfiMachine.initialStatus.events, now)
    return rfi
  })

/**
 * `POST /v2/rfis/{id}/responses`: the caller answers (or adds to its answer); the transaction goes back to review.
 * Its refusals come in a fixed order, the precedence the spec's error table implies (docs/money.md, "The order of an
 * RFI response's refusals"); a request that breaks two rules gets the first:
 * 1. existence: the RFI, of the caller's organization and environment (404 NOT_FOUND);
 * 2. what the answers name: each one of the RFI's questions (400 VALIDATION_ERROR), then their documents, of the
 *    RFI's customer (400 DOCUMENT_IDS_NOT_FOUND);
 * 3. state: the RFI open (409 CONFLICT, RfiMachine's refusal).
 * Nothing is checked before the RFI is read: the schema checks the body's shape, and the rest is about the RFI.
 */
export const respond = (caller: Auth.Caller, id: RfiId, body: RfiResponseCreate): Effect.Effect<StoredRfi, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const rfi = yield* get(caller, id, true)
    const asked = new Set(rfi.questions.map((q) => q.id))
    const unknown = body.answers.flatMap((a, i) => (asked.has(a.questionId) ? [] : [{ pointer: `/answers/${i}/questionId`, detail: "must be the id of one of the RFI's questions" }]))
    if (unknown.length > 0) return yield* Problem.invalidRequest(unknown)
    for (const [i, answer] of body.answers.entries()) {
      if (answer.documentIds !== undefined) yield* Documents.require(caller, answer.documentIds, { customerId: rfi.customerId, pointer: `/answers/${i}/documentIds` })
    }
    const outcome = RfiMachine.transition(rfi.status, { type: "respond" })
    if ("refused" in outcome) return yield* Problem.apiError(outcome.refused, `The request for information is ${rfi.status}; it takes no responses.`)
    const now = toIso(yield* Clock.currentTimeMillis)
    const answered: StoredRfi = { ...rfi, status: outcome.next, responses: [...rfi.responses, { submittedAt: now, answers: body.answers }], updatedAt: now }
    yield* save(rfi.status, answered)
    if (rfi.status === "awaiting_response") {
      const transaction = yield* Transactions.get(caller, rfi.transactionId, true)
      if (!TransactionMachine.terminalStatuses.has(transaction.status) && transaction.stage === "awaiting_customer_action") {
        yield* Transactions.move(rfi.transactionId, { type: "enter_review" })
      }
    }
    yield* emitRfi(answered, outcome.events, now)
    return answered
  })

/** The RFI no longer holds the transaction: it leaves review, and a payout goes on. */
const release = (rfi: StoredRfi) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    yield* Transactions.setHasRfi(rfi.transactionId, false)
    const transaction = yield* store.get(Transactions.Transactions, rfi.transactionId)
    if (transaction === undefined || TransactionMachine.terminalStatuses.has(transaction.status) || transaction.stage === null) return
    yield* Effect.orDie(Transactions.move(rfi.transactionId, { type: "clear_review" }))
    yield* Payouts.resumeAfterReview(rfi.transactionId)
  })

/** `POST /sandbox/v2/simulate/rfis/{id}`: the reviewer's next move. */
export const review = (caller: Auth.Caller, id: RfiId, body: RfiReview): Effect.Effect<StoredRfi, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const rfi = yield* get(caller, id, true)
    const nowMs = yield* Clock.currentTimeMillis
    const now = toIso(nowMs)
    const deadlineFrom = (seconds: number | undefined) => (seconds === undefined ? undefined : toIso(nowMs + seconds * 1000))
    switch (body.action) {
      case "request_more":
      case "reopen": {
        const outcome = RfiMachine.transition(rfi.status, { type: body.action })
        if ("refused" in outcome) return yield* notViable(`Only ${body.action === "request_more" ? "an answered" : "a resolved"} request for information can ${body.action === "request_more" ? "be asked for more" : "be reopened"} (status ${rfi.status}).`)
        if (body.questions === undefined) {
          return yield* Problem.invalidRequest([{ pointer: "/questions", detail: `is required with action ${body.action}` }])
        }
        const transaction = yield* Transactions.get(caller, rfi.transactionId, true)
        const ended = TransactionMachine.terminalStatuses.has(transaction.status)
        if (body.action === "reopen" && ended) return yield* Problem.apiError("RESOURCE_TERMINAL", `The transaction has already ended (status ${transaction.status}).`)
        const model = yield* WorldModel.WorldModel
        const asked: StoredRfi = {
          ...rfi,
          status: outcome.next,
          questions: [...rfi.questions, ...newQuestions(rfi, body.questions, now)],
          // A new question gets the time it needs: the reviewer's, or the running deadline while it is still ahead,
          // else the default from now (an answered RFI's deadline may have passed while it was read).
          deadline: deadlineFrom(body.deadlineSeconds) ??
            (body.action === "request_more" && rfi.deadline > now ? rfi.deadline : toIso(nowMs + model.rfiDeadlineMs)),
          updatedAt: now
        }
        yield* save(rfi.status, asked)
        if (!ended && transaction.stage !== "awaiting_customer_action") yield* Transactions.move(rfi.transactionId, { type: "request_information" })
        yield* Transactions.setHasRfi(rfi.transactionId, true)
        if (asked.deadline !== rfi.deadline) yield* scheduleDeadline(asked)
        yield* emitRfi(asked, outcome.events, now)
        return asked
      }
      case "extend_deadline": {
        const outcome = RfiMachine.transition(rfi.status, { type: "extend_deadline" })
        if ("refused" in outcome) return yield* notViable(`The request for information is ${rfi.status}; its deadline no longer runs.`)
        const deadline = deadlineFrom(body.deadlineSeconds)
        if (deadline === undefined || deadline <= rfi.deadline) {
          return yield* Problem.invalidRequest([{ pointer: "/deadlineSeconds", detail: "is required and must move the deadline later than it is" }])
        }
        const extended: StoredRfi = { ...rfi, deadline, updatedAt: now }
        yield* save(rfi.status, extended)
        yield* scheduleDeadline(extended)
        yield* emitRfi(extended, outcome.events, now)
        return extended
      }
      case "resolve":
      case "cancel": {
        const outcome = RfiMachine.transition(rfi.status, { type: body.action })
        if ("refused" in outcome) return yield* notViable(`The request for information is ${rfi.status} already.`)
        const ended: StoredRfi = { ...rfi, status: outcome.next, updatedAt: now }
        yield* save(rfi.status, ended)
        yield* release(ended)
        yield* emitRfi(ended, outcome.events, now)
        return ended
      }
    }
  })

/**
 * The deadline passed. An RFI still waiting for its answer expires: rfi.cancelled fires (the catalog has no expiry
 * event), and the transaction it held fails with compliance_hold, returning what it reserved. An answered RFI, or a
 * deadline since moved, is left alone.
 */
const deadlinePassed = (payload: { readonly rfiId: RfiId; readonly deadline: string }) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const rfi = yield* store.getForUpdate(Rfis, payload.rfiId)
    if (rfi === undefined || rfi.deadline !== payload.deadline) return
    const outcome = RfiMachine.transition(rfi.status, { type: "deadline_passed" })
    if ("refused" in outcome) return
    const now = toIso(yield* Clock.currentTimeMillis)
    const expired: StoredRfi = { ...rfi, status: outcome.next, updatedAt: now }
    yield* save(rfi.status, expired)
    yield* Transactions.setHasRfi(rfi.transactionId, false)
    const transaction = yield* store.get(Transactions.Transactions, rfi.transactionId)
    if (transaction !== undefined && !TransactionMachine.terminalStatuses.has(transaction.status)) {
      yield* Effect.ignore(Transactions.move(rfi.transactionId, { type: "fail" }, { failureCode: "compliance_hold" }))
    }
    yield* emitRfi(expired, outcome.events, now)
  })

/** A sandbox's RFIs, and their deadlines. */
export const domain = Domain.make({
  name: "money/Rfis",
  tables: [{ ...Domain.inScope(Rfis, "byScope"), counted: "rfis", readsAs: (r: StoredRfi) => ({ schema: RfiSchema, value: toWire(r) }) }],
  timers: [
    Timers.handle(
      deadlineTimer,
      deadlinePassed,
      (id) => `ends RFI ${id}'s deadline (unanswered, it expires and its transaction fails with compliance_hold)`
    )
  ]
})
