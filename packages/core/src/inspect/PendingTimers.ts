/**
 * What is pending in a sandbox (`GET /sandbox/v2/simulate/timers`): its durable timers, soonest first, each with the
 * resource it belongs to and what firing it will do, in words.
 *
 * Every deadline of the engine is a timer row (kernel/Timers.ts) carrying its kind, its scope and the payload its
 * handler reads. `timerDescriptions` is the one table from a kind to its resource (the payload member that names
 * it) and its sentence; a kind it does not know (a host's own, `EngineOptions.timerHandlers`) is shown by the
 * first `…Id` member of its payload and "fires a <kind> timer".
 */
import { type Environment, isTimerKind, type TimerKind, toIso } from "@fos/contract"
import { Effect } from "effect"
import * as Paging from "../kernel/Paging.ts"
import type * as Problem from "../kernel/Problem.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Timers from "../kernel/Timers.ts"
import * as Transactions from "../money/Transactions.ts"

/** A pending timer as the list shows it. */
export interface PendingTimer {
  readonly id: string
  readonly kind: string
  readonly dueAt: string
  /** The resource the deadline belongs to; omitted when it belongs to none (an idempotency key's retention). */
  readonly resourceId?: string
  /** What firing it will do, e.g. "settles payout txn_… on ach". */
  readonly action: string
}

type Payload = Readonly<Record<string, unknown>>

interface TimerDescription {
  /** The payload member naming the timer's resource. */
  readonly resource?: string
  /** The sentence, given the resource id, the payload and where a transaction's money goes (`on ach`, `on base`). */
  readonly action: (id: string, payload: Payload, route: string) => string
}

/** Every timer kind of the engine, its resource and what it does when it fires. */
export const timerDescriptions: Readonly<Record<TimerKind, TimerDescription>> = {
  "idempotency.expire": {
    action: (_id, p) => `forgets the stored answer of idempotency key ${String(p.id ?? "").split("/").slice(2).join("/")} (its retention ends)`
  },
  "application.review": { resource: "applicationId", action: (id) => `reviews application ${id} (the world model approves or rejects it)` },
  "application.cancel": { resource: "applicationId", action: (id) => `completes the cancellation of application ${id}` },
  "application.late_compliance": { resource: "applicationId", action: (id) => `delivers a late compliance result for application ${id}` },
  "virtual_account.activate": { resource: "virtualAccountId", action: (id) => `activates virtual account ${id}` },
  "deposit.confirm": { resource: "transactionId", action: (id, _p, route) => `confirms deposit ${id}${route} (it starts processing)` },
  "deposit.settle": { resource: "transactionId", action: (id, _p, route) => `settles deposit ${id}${route} (it completes)` },
  "deposit.sender_information_expiry": {
    resource: "transactionId",
    action: (id) => `ends the window for deposit ${id}'s sender information (it fails with travel_rule_rejected unless supplied)`
  },
  "payout.start": { resource: "transactionId", action: (id) => `starts payout ${id} (its screening ends: processing, or under_review)` },
  "payout.review_end": { resource: "transactionId", action: (id) => `ends the compliance review of payout ${id}` },
  "payout.send": { resource: "transactionId", action: (id, _p, route) => `sends payout ${id}${route}` },
  "payout.settle": { resource: "transactionId", action: (id, _p, route) => `settles payout ${id}${route} (it completes)` },
  "payout.late_references": { resource: "transactionId", action: (id) => `adds the bank's late references to payout ${id}` },
  "payout.scripted_return": {
    resource: "transactionId",
    action: (id, p, route) => `returns payout ${id}${route} with ${String(p.returnCode ?? "")} (an outcome rule scripted it; it fails with returned_by_sender)`
  },
  "order.payout_settle": { resource: "transactionId", action: (id) => `sends and settles the autoPayout withdrawal ${id}` },
  "order.lock_expiry": { resource: "orderId", action: (id) => `ends the rate lock of order ${id} (it is cancelled as expired unless executed)` },
  "order.start": { resource: "orderId", action: (id) => `starts order ${id}'s conversion (processing)` },
  "order.settle": { resource: "orderId", action: (id) => `settles order ${id} (it succeeds)` },
  "order.signed": { resource: "orderId", action: (id) => `sends order ${id}'s conversion, its roster's quorum met` },
  "order.deposit_return": { resource: "transactionId", action: (id, _p, route) => `confirms the return of deposit ${id}${route}` },
  "quote.expiry": { resource: "optionId", action: (id) => `expires quote option ${id}` },
  "rfi.deadline": { resource: "rfiId", action: (id) => `ends RFI ${id}'s deadline (unanswered, it expires and its transaction fails with compliance_hold)` },
  "signing.window_expiry": {
    resource: "transactionId",
    action: (id, p) => `ends signing attempt ${String(p.attempt ?? "")} of transaction ${id} (without a quorum, the next attempt opens or it fails)`
  },
  "signing.queue_timeout": { resource: "transactionId", action: (id) => `ends transaction ${id}'s wait in its wallet's signing queue` },
  "signing.return_broadcast": { resource: "transactionId", action: (id, _p, route) => `broadcasts the return ${id}${route}` },
  "signing.return_confirmed": { resource: "transactionId", action: (id, _p, route) => `confirms the return ${id}${route} (it completes)` },
  "signing.claim_provisioning": { resource: "claimId", action: (id) => `provisions claim ${id}'s wallets (the wallet provider answers)` },
  "signing.ceremony_expiry": { resource: "ceremonyId", action: (id) => `expires wallet ceremony ${id} unless decided` },
  "webhook.attempt": { resource: "deliveryId", action: (id) => `sends the next attempt of webhook delivery ${id}` },
  "webhook.fanout": { resource: "eventId", action: (id) => `fans event ${id} out to the subscribed webhook endpoints` }
}

/** The first string member of a payload whose name ends in `Id`: the resource of a kind the table does not know. */
const firstIdMember = (payload: Payload): string | undefined =>
  Object.keys(payload).find((k) => k.endsWith("Id") && typeof payload[k] === "string")

/** ` on ach`, ` on base`: where a transaction's money moves, when it names it. */
const routeOf = (transactionId: string): Effect.Effect<string, never, Store.Store> =>
  Effect.map(Effect.flatMap(Store.Store, (store) => store.get(Transactions.Transactions, transactionId)), (t) => {
    const route = t?.route
    if (route !== undefined) return ` on ${"rail" in route ? route.rail : route.chain}`
    return t?.payoutRail ? ` on ${t.payoutRail}` : ""
  })

export const describeTimer = (timer: Timers.Timer): Effect.Effect<PendingTimer, never, Store.Store> =>
  Effect.gen(function*() {
    const payload: Payload = typeof timer.payload === "object" && timer.payload !== null ? timer.payload as Payload : {}
    const description = isTimerKind(timer.kind) ? timerDescriptions[timer.kind] : undefined
    const member = description === undefined ? firstIdMember(payload) : description.resource
    const value = member === undefined ? undefined : payload[member]
    const resourceId = typeof value === "string" ? value : undefined
    const route = resourceId !== undefined && member === "transactionId" ? yield* routeOf(resourceId) : ""
    const action = timer.unhandled === true
      ? `is kept, not fired: this engine has no handler for ${timer.kind} timers (the first engine on this store that has one fires it)`
      : description === undefined
      ? `fires a ${timer.kind} timer`
      : description.action(resourceId ?? "", payload, route)
    return {
      id: timer.id,
      kind: timer.kind,
      dueAt: toIso(timer.dueAtMs),
      ...(resourceId === undefined ? {} : { resourceId }),
      action
    }
  })

/**
 * One page of an organization's pending timers in one environment, soonest first (`sortOrder=desc`: latest first).
 * The engine's housekeeping (an idempotency key's retention: `Timer.housekeeping`) is left out unless
 * `includeHousekeeping`: in a tester's journey it was eight timers of nine, all 30 days out, and drowned the world's.
 * The two are orders of their own (`byScope`, `worldByScope`), so pages are full and `total` counts what is listed.
 */
export const list = (
  organizationId: string,
  environment: Environment,
  query: Paging.ListQuery,
  options: { readonly includeHousekeeping?: boolean } = {}
): Effect.Effect<Paging.ListEnvelope<PendingTimer>, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const page = yield* Paging.listPage(Timers.Timers, {
      order: options.includeHousekeeping === true ? "byScope" : "worldByScope",
      partition: Tenancy.scopeOf(organizationId, environment),
      query,
      toWire: (t: Timers.Timer) => t
    })
    return { data: yield* Effect.forEach(page.data, describeTimer), meta: page.meta }
  })
