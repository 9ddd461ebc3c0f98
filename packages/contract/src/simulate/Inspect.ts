/**
 * What the sandbox shows of its own workings, for a tester asking "why hasn't this happened yet?": the pending
 * timers, the log of emitted events, and the ledger (an account's journal and an audit of its invariants).
 * docs/inspect.md describes each shape.
 */
import { Schema } from "effect"
import "../kernel/Annotations.ts"
import { VirtualAccountId, WalletId, WebhookDeliveryId } from "../kernel/Ids.ts"
import { ListMeta, listOf, listQuery } from "../kernel/Lists.ts"
import { openEnum } from "../kernel/OpenEnum.ts"
import { EventType } from "../events/Events.ts"

/** Every kind of durable timer the engine schedules (core kernel/Timers.ts and inspect/PendingTimers.ts describe each). */
export const TimerKinds = [
  "idempotency.expire",
  "application.review",
  "application.cancel",
  "application.late_compliance",
  "virtual_account.activate",
  "deposit.confirm",
  "deposit.settle",
  "deposit.sender_information_expiry",
  "payout.start",
  "payout.review_end",
  "payout.send",
  "payout.settle",
  "payout.late_references",
  "payout.scripted_return",
  "order.lock_expiry",
  "order.start",
  "order.settle",
  "order.signed",
  "order.deposit_return",
  "quote.expiry",
  "rfi.deadline",
  "signing.window_expiry",
  "signing.queue_timeout",
  "signing.return_broadcast",
  "signing.return_confirmed",
  "signing.claim_provisioning",
  "signing.ceremony_expiry",
  "webhook.attempt"
] as const
export type TimerKind = typeof TimerKinds[number]

/**
 * The engine's timer kinds, as the OpenAPI document names them (`TimerKind`). A timer's `kind` is open: a later
 * version adds kinds, and an embedding host schedules its own (`openEnum`).
 */
export const TimerKind = Schema.Literals(TimerKinds).annotate({ identifier: "TimerKind", description: "A kind of timer the engine schedules, as this version knows them." })

/** A durable deadline of the caller's sandbox: what fires when, and what it will do. */
export const PendingTimer = Schema.Struct({
  id: Schema.String,
  kind: openEnum(TimerKind),
  dueAt: Schema.String,
  /** The resource the deadline belongs to; omitted when it belongs to none. */
  resourceId: Schema.optionalKey(Schema.String),
  /** What firing it will do, in words: "settles payout txn_… on ach (it completes)". */
  action: Schema.String
}).annotate({ identifier: "PendingTimer" })
export type PendingTimer = typeof PendingTimer.Type

export const PendingTimerList = listOf(PendingTimer).annotate({ identifier: "PendingTimerList" })
/**
 * The pending timers' query: paging, and `housekeeping=true` to list the engine's own housekeeping too (an idempotency
 * key's retention), which is left out by default.
 */
export const PendingTimerQuery = Schema.Struct({
  ...listQuery(["dueAt"] as const).fields,
  housekeeping: Schema.optionalKey(Schema.Literals(["true", "false"]).annotate({
    description: "`true` lists the engine's housekeeping timers too (idempotency keys' retention); they are left out by default."
  }))
})

/** An emitted event as the sandbox's event log shows it: the webhook envelope and the resource it is about. */
export const LoggedEvent = Schema.Struct({
  id: Schema.String,
  type: Schema.String,
  createdAt: Schema.String,
  apiVersion: Schema.Literal("2"),
  mode: Schema.Literals(["sandbox", "live"]),
  resourceId: Schema.optionalKey(Schema.String),
  data: Schema.Unknown
}).annotate({ identifier: "LoggedEvent" })
export type LoggedEvent = typeof LoggedEvent.Type

export const LoggedEventList = listOf(LoggedEvent).annotate({ identifier: "LoggedEventList" })
export const LoggedEventQuery = Schema.Struct({
  ...listQuery(["createdAt"] as const).fields,
  resourceId: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(128))),
  type: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(128)))
})

/** A customer account's balance from its holder's side, at the asset's precision. */
export const JournalBalance = Schema.Struct({
  posted: Schema.String,
  available: Schema.String,
  pending: Schema.String,
  incoming: Schema.String
}).annotate({ identifier: "JournalBalance" })

export const JournalEntry = Schema.Struct({
  transferId: Schema.String,
  sequence: Schema.Number,
  createdAt: Schema.String,
  kind: Schema.Literals(["posted", "pending", "post", "void"]),
  side: Schema.Literals(["debit", "credit"]),
  amount: Schema.String,
  counterpartyAccountId: Schema.String,
  code: Schema.String,
  transactionId: Schema.optionalKey(Schema.String),
  resolves: Schema.optionalKey(Schema.String),
  balance: JournalBalance
}).annotate({ identifier: "JournalEntry" })

export const AccountJournal = Schema.Struct({
  account: Schema.Struct({
    id: Schema.String,
    holderType: Schema.String,
    holderId: Schema.String,
    asset: Schema.String,
    chain: Schema.optionalKey(Schema.String),
    balance: JournalBalance
  }),
  data: Schema.Array(JournalEntry),
  meta: ListMeta
}).annotate({ identifier: "AccountJournal" })

export const JournalParams = { holderId: Schema.Union([WalletId, VirtualAccountId]) }
export const JournalQuery = Schema.Struct({
  cursor: Schema.optionalKey(Schema.String),
  limit: listQuery(["sequence"] as const).fields.limit,
  asset: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(16))),
  chain: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(32)))
})

export const AuditCheckNames = ["zero_sum", "no_negative_customer_account", "totals_match_transfers", "holds_match_transactions"] as const

export const LedgerAudit = Schema.Struct({
  clean: Schema.Boolean,
  checkedAt: Schema.String,
  scanned: Schema.Struct({ accounts: Schema.Number, transfers: Schema.Number, transactions: Schema.Number, assets: Schema.Number }),
  checks: Schema.Array(Schema.Struct({ name: Schema.Literals(AuditCheckNames), description: Schema.String, violations: Schema.Number })),
  violations: Schema.Array(Schema.Struct({
    check: Schema.Literals(AuditCheckNames),
    detail: Schema.String,
    accountId: Schema.optionalKey(Schema.String),
    transferId: Schema.optionalKey(Schema.String),
    transactionId: Schema.optionalKey(Schema.String),
    asset: Schema.optionalKey(Schema.String)
  })),
  violationCount: Schema.Number
}).annotate({ identifier: "LedgerAudit" })
export type LedgerAudit = typeof LedgerAudit.Type

/** What set a state change off: a request (with its correlation id), a simulate call, a timer, or the engine itself. */
export const TimelineCause = Schema.Union([
  Schema.Struct({ type: Schema.Literal("request"), method: Schema.String, path: Schema.String, correlationId: Schema.String }),
  Schema.Struct({ type: Schema.Literal("simulate"), operation: Schema.String, method: Schema.String, path: Schema.String, correlationId: Schema.String }),
  Schema.Struct({ type: Schema.Literal("timer"), kind: openEnum(TimerKind), timerId: Schema.String }),
  Schema.Struct({ type: Schema.Literal("engine") })
]).annotate({ identifier: "TimelineCause" })

const entryHead = { at: Schema.String, sequence: Schema.Number, summary: Schema.String }

/** One entry of a resource's timeline (docs/inspect.md): a state change, an event, a transfer, or a timer. */
export const TimelineEntry = Schema.Union([
  Schema.Struct({
    ...entryHead,
    kind: Schema.Literal("state"),
    from: Schema.optionalKey(Schema.String),
    to: Schema.String,
    fromStage: Schema.optionalKey(Schema.String),
    toStage: Schema.optionalKey(Schema.String),
    cause: TimelineCause
  }),
  Schema.Struct({ ...entryHead, kind: Schema.Literal("event"), eventId: Schema.String, eventType: openEnum(EventType), resourceSequence: Schema.optionalKey(Schema.Number) }),
  Schema.Struct({
    ...entryHead,
    kind: Schema.Literal("transfer"),
    transferId: Schema.String,
    state: Schema.Literals(["pending", "posted", "voided"]),
    bookedAs: Schema.String,
    amount: Schema.String,
    asset: Schema.String,
    chain: Schema.optionalKey(Schema.String),
    accountId: Schema.String,
    debitAccountId: Schema.String,
    creditAccountId: Schema.String,
    code: Schema.String
  }),
  Schema.Struct({ ...entryHead, kind: Schema.Literal("timer_scheduled"), timerId: Schema.String, timerKind: openEnum(TimerKind), dueAt: Schema.String, pending: Schema.Boolean }),
  Schema.Struct({ ...entryHead, kind: Schema.Literal("timer_fired"), timerId: Schema.String, timerKind: openEnum(TimerKind), dueAt: Schema.String })
]).annotate({ identifier: "TimelineEntry" })
export type TimelineEntry = typeof TimelineEntry.Type

export const TimelineResourceTypes = ["transaction", "order", "application", "rfi", "webhook_delivery", "wallet_signer", "wallet_ceremony", "claim"] as const

/** A resource's timeline, oldest entry first, and what it waits for next (absent once it has ended). */
export const Timeline = Schema.Struct({
  resourceId: Schema.String,
  resourceType: Schema.Literals(TimelineResourceTypes),
  transactionType: Schema.optionalKey(Schema.String),
  status: Schema.optionalKey(Schema.String),
  entries: Schema.Array(TimelineEntry),
  truncated: Schema.Boolean,
  waitingFor: Schema.optionalKey(Schema.Struct({
    description: Schema.String,
    at: Schema.optionalKey(Schema.String),
    timerId: Schema.optionalKey(Schema.String),
    timerKind: Schema.optionalKey(openEnum(TimerKind))
  }))
}).annotate({ identifier: "Timeline" })
export type Timeline = typeof Timeline.Type

export const TimelineParams = { resourceId: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(128)) }
/**
 * A request the sandbox answered, as its recent requests (`GET /v2/simulate/requests`) and the live stream show it:
 * the request log's entry of the caller's organization, with the operation it was and its JSON body, secrets
 * redacted (no header or query string is ever kept).
 */
export const RecentRequest = Schema.Struct({
  /** When the answer was ready, in real time. */
  time: Schema.String,
  method: Schema.String,
  /** The path as requested, base address included, without the query string. */
  path: Schema.String,
  status: Schema.Number,
  /** The problem's `type` (its error code) on an error answer. */
  type: Schema.optionalKey(Schema.String),
  /** From the request reaching the server's pipeline to its answer, in real-time milliseconds. */
  durationMs: Schema.Number,
  correlationId: Schema.String,
  /** The client's IP address: the connection's, or the one a host that embeds fos gave for the request. */
  clientAddress: Schema.String,
  /** The id of the sandbox fault that shaped the answer, if one did. */
  injected: Schema.optionalKey(Schema.String),
  /** The server process that answered it: one of several sharing a PostgreSQL database. */
  answeredBy: Schema.String,
  /** The OpenAPI operation the request was, once a route matched it. */
  operationId: Schema.optionalKey(Schema.String),
  /**
   * A sandbox request's JSON body, as sent but for its secrets: every API key, webhook secret, token, password and
   * passkey credential in it reads "[redacted]". Kept for a body of at most 4 KiB (`bodyBytes` says how large one
   * was); a live request's body is never kept.
   */
  body: Schema.optionalKey(Schema.Unknown),
  /** How many bytes the request's JSON body had, when it had one: a body over 4 KiB is counted, not kept. */
  bodyBytes: Schema.optionalKey(Schema.Number),
  /**
   * True when the answer was replayed from the idempotency record of an earlier request with the same
   * Idempotency-Key (a retry: it changed nothing); omitted otherwise.
   */
  replayed: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "RecentRequest" })
export type RecentRequest = typeof RecentRequest.Type

export const RecentRequestList = listOf(RecentRequest).annotate({ identifier: "RecentRequestList" })
/** Newest first, the only order: `limit` and `cursor` only. */
export const RecentRequestQuery = Schema.Struct({
  cursor: Schema.optionalKey(Schema.String),
  limit: listQuery(["time"] as const).fields.limit
})

/** `topics`: a comma-separated list of `events` and `requests` (both when omitted). `after`: an event id to resume after. */
export const StreamQuery = Schema.Struct({
  topics: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(64))),
  after: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(128)))
})

/** One move the inspector can offer on a resource, and whether the resource's state table allows it now. */
export const ResourceAction = Schema.Struct({
  /** The endpoint's name: `settleTransaction`, `cancelOrder`, `retryDelivery`, ... */
  name: Schema.String,
  method: Schema.Literals(["POST", "DELETE"]),
  /** The path to call, under the sandbox's base address (`/v2/simulate/transactions/txn_…/settle`). */
  path: Schema.String,
  allowed: Schema.Boolean,
  /** Why the state table refuses it, when it does: the problem's code and the state that refuses it. */
  reason: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "ResourceAction" })

export const ResourceActions = Schema.Struct({
  resourceId: Schema.String,
  resourceType: Schema.Literals(["transaction", "order", "application", "rfi", "wallet_signer", "wallet_ceremony", "claim", "webhook_delivery"]),
  actions: Schema.Array(ResourceAction)
}).annotate({ identifier: "ResourceActions" })
export type ResourceActions = typeof ResourceActions.Type

export const ResourceActionsParams = { resourceId: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(128)) }

/**
 * One attempt of a sandbox delivery with what it sent (core webhooks/AttemptRequests.ts): the URL, the headers the
 * engine signed and handed to the transport (X-Service-Signature among them, never the secret) and the body; and
 * the receiver's answer as the public attempt holds it.
 */
export const SentAttempt = Schema.Struct({
  attemptId: Schema.String,
  run: Schema.Number,
  attemptNumber: Schema.Number,
  at: Schema.String,
  /** Omitted for an attempt recorded before fos kept what attempts sent. */
  request: Schema.optionalKey(Schema.Struct({
    url: Schema.String,
    headers: Schema.Record(Schema.String, Schema.String),
    body: Schema.String
  })),
  response: Schema.Struct({
    /** Omitted when no answer came (refused, timed out, an address the rules forbid). */
    status: Schema.optionalKey(Schema.Number),
    latencyMs: Schema.Number,
    /** Omitted when the receiver answered 2xx. */
    error: Schema.optionalKey(Schema.String)
  })
}).annotate({ identifier: "SentAttempt" })
export type SentAttempt = typeof SentAttempt.Type

export const SentAttemptList = listOf(SentAttempt).annotate({ identifier: "SentAttemptList" })
export const SentAttemptQuery = listQuery(["at"] as const)
export const SentAttemptParams = { deliveryId: WebhookDeliveryId }
