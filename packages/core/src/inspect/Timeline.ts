/**
 * A resource's timeline (`GET /sandbox/v2/simulate/timeline/{resourceId}`): what happened to one transaction (a
 * payout or deposit), order, application, RFI, webhook delivery, wallet signer, wallet ceremony or claim, in the
 * order it happened, and what it waits for next. It answers the tester's "why hasn't this happened yet?" for one id.
 *
 * It merges four records the engine keeps, each written in the store transaction of its change:
 * - the sandbox's history (kernel/History.ts): every change of the resource's status with its cause, and the timers
 *   of the resource that fired;
 * - the event log (the outbox's sandbox order by resource, EventLog.ts), and for a webhook delivery the event it
 *   carries;
 * - a transaction's ledger transfers (`byTransaction`): a hold shows `pending`, and its post or void shows the same
 *   `transferId` as `posted` or `voided`; a transfer booked at once shows `posted`;
 * - the resource's pending timers (the timers' sandbox order by resource), each shown when it was scheduled.
 * Entries read oldest first, by time and then by the store's sequence (every record above takes its number from the
 * one store-wide sequence, so a change, its events and its transfers read in the order they were written).
 *
 * It ends with what the resource waits for next (`waitingFor`): an outside actor where its status waits on one (a
 * signer's stamp while a transfer awaits signatures, the caller while an RFI awaits its response, an admin while a
 * ceremony awaits approval), with the deadline of its window; else its first pending timer's sentence
 * (PendingTimers.ts). An ended resource waits for nothing, and has no `waitingFor`.
 *
 * Bounded: the latest `maxEntries` entries. Each record is read newest first up to that bound; when any has more, the
 * answer is `truncated`, and holds only what is later than the oldest entry every record could give in full, so no
 * gap hides in its middle.
 */
import { type AssetCode, formatAmount, toIso } from "@fos/contract"
import { Effect } from "effect"
import * as Ceremonies from "../signing/Ceremonies.ts"
import * as Deliveries from "../webhooks/Deliveries.ts"
import * as History from "../kernel/History.ts"
import * as Ledger from "../money/Ledger.ts"
import * as Orders from "../money/Orders.ts"
import * as Payouts from "../money/Payouts.ts"
import * as Outbox from "../kernel/Outbox.ts"
import * as PendingTimers from "./PendingTimers.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Resources from "./Resources.ts"
import * as Rfis from "../money/Rfis.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Timers from "../kernel/Timers.ts"
import * as TransferSigning from "../signing/TransferSigning.ts"

/** The most entries one timeline answers with: the latest ones. */
export const maxEntries = 500

/** The most pending timers read for one resource (a resource has a handful at once). */
const maxPendingTimers = 100

export type ResourceType = Resources.ResourceType

interface EntryHead {
  readonly at: string
  /** The store-wide sequence the entry was written with: orders entries of the same instant. */
  readonly sequence: number
  readonly summary: string
}

export type TimelineEntry =
  | EntryHead & {
    readonly kind: "state"
    readonly from?: string
    readonly to: string
    /** A transaction's stage before and after, when it had one (`under_review`, `awaiting_customer_action`). */
    readonly fromStage?: string
    readonly toStage?: string
    readonly cause: History.Cause
  }
  | EntryHead & {
    readonly kind: "event"
    readonly eventId: string
    readonly eventType: string
    /** The resource's own sequence the event carries (`data.sequence` of a transaction's events), when it has one. */
    readonly resourceSequence?: number
  }
  | EntryHead & {
    readonly kind: "transfer"
    /** The transfer's id; a post or void names the pending transfer it resolves, so one hold reads pending, then posted. */
    readonly transferId: string
    readonly state: "pending" | "posted" | "voided"
    /** The ledger row that booked this step (for a post or void, its own id). */
    readonly bookedAs: string
    readonly amount: string
    readonly asset: string
    readonly chain?: string
    /** The customer's account the transfer moved (its wallet's or virtual account's), else its debit account. */
    readonly accountId: string
    readonly debitAccountId: string
    readonly creditAccountId: string
    readonly code: string
  }
  | EntryHead & { readonly kind: "timer_scheduled"; readonly timerId: string; readonly timerKind: string; readonly dueAt: string; readonly pending: boolean }
  | EntryHead & { readonly kind: "timer_fired"; readonly timerId: string; readonly timerKind: string; readonly dueAt: string }

export interface WaitingFor {
  readonly description: string
  readonly at?: string
  readonly timerId?: string
  readonly timerKind?: string
}

export interface Timeline {
  readonly resourceId: string
  readonly resourceType: ResourceType
  /** The transaction's type (`payout`, `deposit`, ...), for a transaction. */
  readonly transactionType?: string
  readonly status?: string
  readonly entries: ReadonlyArray<TimelineEntry>
  /** Whether older entries were left out (only the latest `maxEntries` are shown). */
  readonly truncated: boolean
  readonly waitingFor?: WaitingFor
}

// --- the resource --------------------------------------------------------------------------------------------------

interface Found {
  readonly type: ResourceType
  readonly row: Resources.ResourceRow
  readonly ended: boolean
}

const notFound = () =>
  Problem.apiError("NOT_FOUND", "No transaction, order, application, RFI, webhook delivery, wallet signer, ceremony or claim with this id exists in this sandbox.")

const find = (organizationId: string, resourceId: string): Effect.Effect<Found, Problem.ApiError, Store.Store> =>
  Effect.flatMap(Resources.find(organizationId, resourceId), (found) =>
    found === undefined ? notFound() : Effect.succeed({ ...found, ended: Resources.resources[found.type].ended.has(found.row.status) }))

// --- entries -------------------------------------------------------------------------------------------------------

const causeWords = (cause: History.Cause): string => {
  switch (cause.type) {
    case "request":
      return `by ${cause.method} ${cause.path} (correlation id ${cause.correlationId})`
    case "simulate":
      return `by the simulate call ${cause.operation}, ${cause.method} ${cause.path} (correlation id ${cause.correlationId})`
    case "timer":
      return `when its ${cause.kind} timer ${cause.timerId} fired`
    case "engine":
      return "by the engine"
  }
}

const historyEntries = (type: ResourceType, row: History.HistoryRow): ReadonlyArray<TimelineEntry> => {
  if (row.kind === "state") {
    const from = row.fromStage === undefined ? row.from : `${row.from} (${row.fromStage})`
    const to = row.toStage === undefined ? row.to : `${row.to} (${row.toStage})`
    const what = from === undefined ? `The ${Resources.resources[type].word} was created ${to}` : `The ${Resources.resources[type].word} moved from ${from} to ${to}`
    return [{
      at: row.at,
      sequence: row.sequence,
      kind: "state",
      ...(row.from === undefined ? {} : { from: row.from }),
      to: row.to!,
      ...(row.fromStage === undefined ? {} : { fromStage: row.fromStage }),
      ...(row.toStage === undefined ? {} : { toStage: row.toStage }),
      cause: row.cause,
      summary: `${what} ${causeWords(row.cause)}.`
    }]
  }
  const timer = row.timer!
  const dueAt = toIso(timer.dueAtMs)
  const fired: TimelineEntry = {
    at: row.at,
    sequence: row.sequence,
    kind: "timer_fired",
    timerId: timer.id,
    timerKind: timer.kind,
    dueAt,
    summary: `The ${timer.kind} timer fired (due ${dueAt}).`
  }
  const scheduledSequence = timerSequence(timer.id)
  return timer.scheduledAtMs === undefined || scheduledSequence === undefined ? [fired] : [{
    at: toIso(timer.scheduledAtMs),
    sequence: scheduledSequence,
    kind: "timer_scheduled",
    timerId: timer.id,
    timerKind: timer.kind,
    dueAt,
    pending: false,
    summary: `A ${timer.kind} timer was scheduled for ${dueAt}.`
  }, fired]
}

/** The store sequence a timer's id carries (kernel/Timers.ts `schedule`: due time, then sequence, in base 36). */
const timerSequence = (timerId: string): number | undefined => {
  const n = parseInt(timerId.slice(-12), 36)
  return Number.isFinite(n) ? n : undefined
}

const eventEntry = (event: Outbox.OutboxEvent): TimelineEntry => {
  const data = typeof event.data === "object" && event.data !== null ? event.data as Readonly<Record<string, unknown>> : {}
  return {
    at: event.createdAt,
    sequence: event.sequence,
    kind: "event",
    eventId: event.id,
    eventType: event.type,
    ...(typeof data.sequence === "number" ? { resourceSequence: data.sequence } : {}),
    summary: `${event.type} was emitted.`
  }
}

/**
 * A ledger account's holder: its type and id, from the path the ledger keys it by (`org_…/sandbox/<type>/<id>/<asset>`,
 * Ledger.accountId), or from a journal's (`<type>/<id>/<asset>`).
 */
const holderOf = (accountId: string): { readonly type: string; readonly id: string } | undefined => {
  const all = accountId.split("/")
  const parts = all[0]?.startsWith("org_") ? all.slice(2) : all
  return parts.length < 3 ? undefined : { type: parts[0]!, id: parts.slice(1, -1).join("/") }
}

/** Whether a customer holds the account (a wallet or a virtual account), not the world, the market or the fees. */
const customerAccount = (accountId: string) => {
  const type = holderOf(accountId)?.type
  return type === "wallet" || type === "virtual_account"
}

/**
 * A ledger account in words, by its holder (`virtual account vac_…`, `the outside world (rail rtp)`), not by the path
 * the ledger keys it by (`org_…/sandbox/world/rail:rtp/USD#74`): the amount beside it names the asset.
 */
const accountWords = (accountId: string): string => {
  const holder = holderOf(accountId)
  if (holder === undefined) return accountId
  if (holder.type === "world") return `the outside world (${holder.id.replace(":", " ")})`
  return `${holder.type.replaceAll("_", " ")} ${holder.id}`
}

const transferEntry = (t: Ledger.LedgerTransfer): TimelineEntry => {
  const amount = formatAmount({ asset: t.asset as AssetCode, units: BigInt(t.amount) })
  const accountId = customerAccount(t.debitAccountId) || !customerAccount(t.creditAccountId) ? t.debitAccountId : t.creditAccountId
  const state = t.kind === "pending" ? "pending" : t.kind === "void" ? "voided" : "posted"
  const transferId = t.resolves ?? t.id
  const summary = t.kind === "pending"
    ? `${amount} ${t.asset} held, pending, from ${accountWords(t.debitAccountId)} to ${accountWords(t.creditAccountId)} (${t.code}).`
    : t.kind === "post"
    ? `The pending transfer ${transferId} was posted: ${amount} ${t.asset} moved (${t.code}).`
    : t.kind === "void"
    ? `The pending transfer ${transferId} was voided: ${amount} ${t.asset} released (${t.code}).`
    : `${amount} ${t.asset} posted from ${accountWords(t.debitAccountId)} to ${accountWords(t.creditAccountId)} (${t.code}).`
  return {
    at: toIso(t.createdAt),
    sequence: t.sequence,
    kind: "transfer",
    transferId,
    state,
    bookedAs: t.id,
    amount,
    asset: t.asset,
    ...(t.chain === undefined ? {} : { chain: t.chain }),
    accountId,
    debitAccountId: t.debitAccountId,
    creditAccountId: t.creditAccountId,
    code: t.code,
    summary
  }
}

const pendingTimerEntry = (timer: Timers.Timer, described: PendingTimers.PendingTimer): TimelineEntry | undefined => {
  const sequence = timerSequence(timer.id)
  if (timer.scheduledAtMs === undefined || sequence === undefined) return undefined
  return {
    at: toIso(timer.scheduledAtMs),
    sequence,
    kind: "timer_scheduled",
    timerId: timer.id,
    timerKind: timer.kind,
    dueAt: described.dueAt,
    pending: true,
    summary: `A ${timer.kind} timer was scheduled for ${described.dueAt}: it ${described.action}.`
  }
}

// --- what it waits for ---------------------------------------------------------------------------------------------

const timerWait = (timer: PendingTimers.PendingTimer, description: string): WaitingFor => ({
  description,
  at: timer.dueAt,
  timerId: timer.id,
  timerKind: timer.kind
})

/** What a resource waits on from outside the engine, by its status, with the pending timers that bound the wait. */
const outsideActor = (
  resourceId: string,
  found: Found,
  timers: ReadonlyArray<PendingTimers.PendingTimer>
): Effect.Effect<WaitingFor | undefined, never, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const timerOf = (kind: Timers.Kind<any>) => timers.find((t) => t.kind === kind.name)
    const row = found.row as any
    switch (found.type) {
      case "transaction": {
        const signing = yield* store.get(TransferSigning.TransferSignings, resourceId)
        const window = timerOf(TransferSigning.windowTimer)
        if (signing?.state.phase === "awaiting_signature") {
          const stamps = `${signing.state.collected.length} of ${signing.state.required} collected`
          const ends = signing.expiresAt ?? window?.dueAt
          const description = `a signer's stamp (attempt ${signing.state.attempt}, ${stamps}); the window ends at ${ends ?? "no set time"}`
          return window === undefined ? { description, ...(ends === undefined ? {} : { at: ends }) } : timerWait(window, description)
        }
        if (signing?.state.phase === "queued") {
          const timeout = timerOf(TransferSigning.queueTimeoutTimer)
          const description = `its turn in its wallet's signing queue (position ${signing.state.queuePosition ?? "?"})${timeout === undefined ? "" : `; the wait ends at ${timeout.dueAt}`}`
          return timeout === undefined ? { description } : timerWait(timeout, description)
        }
        if (row.stage === "awaiting_customer_action") {
          return { description: "the caller's response to the transaction's request for information (POST /v2/rfis/{rfiId}/responses)" }
        }
        if (row.stage === "under_review") {
          const end = timerOf(Payouts.reviewEndTimer)
          return end === undefined
            ? { description: `a compliance reviewer's decision (POST /sandbox/v2/simulate/transactions/${resourceId}/review clears it)` }
            : timerWait(end, `the end of its compliance review at ${end.dueAt}`)
        }
        return undefined
      }
      case "rfi":
        if (row.status === "awaiting_response") {
          const deadline = timerOf(Rfis.deadlineTimer)
          const description = `the caller's response (POST /v2/rfis/${resourceId}/responses); the deadline is ${row.deadline}`
          return deadline === undefined ? { description, at: row.deadline } : timerWait(deadline, description)
        }
        if (row.status === "under_review") return { description: `the reviewer's decision (POST /sandbox/v2/simulate/rfis/${resourceId})` }
        return undefined
      case "order": {
        const lock = timerOf(Orders.lockExpiryTimer)
        if (row.status === "pending" && !row.executing && lock !== undefined) {
          return timerWait(lock, `the caller's execution (POST /v2/orders/${resourceId}/execute); the rate lock ends at ${lock.dueAt}`)
        }
        return undefined
      }
      case "application":
        if (row.status === "draft") return { description: "the caller's submission of the application" }
        return timers.length === 0 && row.status === "open" ? { description: `a reviewer's decision (POST /sandbox/v2/simulate/applications/${resourceId}/decision)` } : undefined
      case "wallet_signer":
        if (row.status === "pending_activation") {
          return { description: `the signer's enrollment; the invitation ends at ${row.invitationExpiresAt}`, at: row.invitationExpiresAt }
        }
        return undefined
      case "wallet_ceremony":
        if (row.status === "awaiting_admin_approval") {
          const expiry = timerOf(Ceremonies.expiryTimer)
          const description = `an admin's approval; the link expires at ${row.expiresAt}`
          return expiry === undefined ? { description, at: row.expiresAt } : timerWait(expiry, description)
        }
        return undefined
      case "claim":
        return timers.length === 0 && row.status === "pending" ? { description: "the enrollment of every signer of its roster" } : undefined
      case "webhook_delivery":
        return undefined
    }
  })

const waitingFor = (
  resourceId: string,
  found: Found,
  timers: ReadonlyArray<PendingTimers.PendingTimer>
): Effect.Effect<WaitingFor | undefined, never, Store.Store> =>
  found.ended
    ? Effect.succeed(undefined)
    : Effect.map(outsideActor(resourceId, found, timers), (actor) => {
      if (actor !== undefined) return actor
      const first = timers[0]
      return first === undefined ? undefined : timerWait(first, `the engine: at ${first.dueAt} it ${first.action}`)
    })

// --- the timeline --------------------------------------------------------------------------------------------------

/** The latest `maxEntries + 1` rows of one partition, oldest first; `full` when the partition has more. */
const latest = <Row>(table: Store.Table<Row>, order: string, partition: string) =>
  Effect.map(
    Effect.flatMap(Store.Store, (store) => store.page(table, { order, partition, descending: true, backward: false, from: undefined, limit: maxEntries + 1 })),
    (rows) => ({ rows: rows.slice(0, maxEntries).reverse(), more: rows.length > maxEntries })
  )

const compareEntries = (a: TimelineEntry, b: TimelineEntry) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.sequence - b.sequence)

/**
 * The timeline of one resource of an organization's sandbox. `404 NOT_FOUND` for an id of no resource of that
 * sandbox (another organization's, a live one, an unknown one).
 */
export const timeline = (organizationId: string, resourceId: string): Effect.Effect<Timeline, Problem.ApiError, Store.Store | Timers.TimerHandlers> =>
  Effect.gen(function*() {
    const found = yield* find(organizationId, resourceId)
    const store = yield* Store.Store
    const scope = Tenancy.scopeOf(organizationId, "sandbox")
    const history = yield* latest(History.History, "byResource", History.resourcePartition(scope, resourceId))
    const events = yield* latest(Outbox.OutboxEvents, "sandboxByResource", `${scope}|resourceId=${resourceId}`)
    // A delivery is about an event of another resource: the event it carries opens its story.
    const carried = found.type === "webhook_delivery" ? yield* store.get(Outbox.OutboxEvents, (found.row as unknown as Deliveries.WebhookDelivery).eventId) : undefined
    const transfers = found.type === "transaction"
      ? yield* latest(Ledger.LedgerTransfers, "byTransaction", resourceId)
      : { rows: [] as ReadonlyArray<Ledger.LedgerTransfer>, more: false }
    const pendingRows = yield* store.page(Timers.Timers, {
      order: "sandboxByResource",
      partition: `${scope}|${resourceId}`,
      descending: false,
      backward: false,
      from: undefined,
      limit: maxPendingTimers
    })
    const pending = yield* Effect.forEach(pendingRows, PendingTimers.describeTimer)

    const sources: ReadonlyArray<{ readonly entries: ReadonlyArray<TimelineEntry>; readonly more: boolean }> = [
      { entries: history.rows.flatMap((row) => historyEntries(found.type, row)), more: history.more },
      { entries: [...(carried === undefined ? [] : [eventEntry(carried)]), ...events.rows.map(eventEntry)], more: events.more },
      { entries: transfers.rows.map(transferEntry), more: transfers.more },
      { entries: pendingRows.flatMap((t, i) => pendingTimerEntry(t, pending[i]!) ?? []), more: false }
    ]
    // A record that had more than it gave is complete only from its oldest entry given on: nothing earlier is shown.
    let floor: TimelineEntry | undefined
    for (const source of sources) {
      const oldest = source.entries.reduce<TimelineEntry | undefined>((min, e) => (min === undefined || compareEntries(e, min) < 0 ? e : min), undefined)
      if (source.more && oldest !== undefined && (floor === undefined || compareEntries(oldest, floor) > 0)) floor = oldest
    }
    const merged = sources.flatMap((s) => s.entries).filter((e) => floor === undefined || compareEntries(e, floor) >= 0).sort(compareEntries)
    const truncated = floor !== undefined || merged.length > maxEntries
    const entries = merged.length > maxEntries ? merged.slice(merged.length - maxEntries) : merged
    const waiting = yield* waitingFor(resourceId, found, pending)
    const row = found.row as { readonly type?: string }
    return {
      resourceId,
      resourceType: found.type,
      ...(found.type === "transaction" && row.type !== undefined ? { transactionType: row.type } : {}),
      status: found.row.status,
      entries,
      truncated,
      ...(waiting === undefined ? {} : { waitingFor: waiting })
    }
  })
