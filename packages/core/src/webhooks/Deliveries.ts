/**
 * Webhook deliveries (spec, Resources, Webhook delivery: "Identified by wdl_; each attempt by wda_. Status values:
 * pending, processing, succeeded, failed"), their one writer, and the deliveries API (Webhook management):
 *
 * | GET | /webhooks/deliveries | query endpointId, status, eventType, paging | list envelope of deliveries |
 * | GET | /webhooks/deliveries/{id} | | delivery detail |
 * | POST | /webhooks/deliveries/{id}/retry | | starts a new run of 5 attempts; 422 WEBHOOK_DELIVERY_NOT_RETRYABLE unless status failed |
 *
 * "endpointId, status and eventType are all optional and combine freely."
 *
 * This module owns the delivery and attempt rows: fan-out opens a delivery, dispatch claims it and records its
 * attempts, the API retries it, each through a named operation here, and every status change is a step of the
 * DeliveryMachine, written with the timer the step asks for.
 */
import { Clock, Effect, Schema } from "effect"
import { type DeliveryStatus, type Environment, parseIso, toIso, WebhookAttempt as WebhookAttemptSchema, type WebhookAttempt as WebhookAttemptWire, WebhookDelivery as DeliverySchema, type WebhookDelivery as DeliveryWire } from "@fos/contract"
import type * as Auth from "../tenancy/Auth.ts"
import * as DeliveryMachine from "./DeliveryMachine.ts"
import * as Domain from "../kernel/Domain.ts"
import * as History from "../kernel/History.ts"
import * as IdGenerator from "../kernel/IdGenerator.ts"
import type * as Outbox from "../kernel/Outbox.ts"
import * as Paging from "../kernel/Paging.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Timers from "../kernel/Timers.ts"

export interface WebhookDelivery {
  readonly id: string
  readonly organizationId: string
  readonly environment: Environment
  readonly endpointId: string
  readonly eventId: string
  readonly eventType: string
  readonly status: DeliveryStatus
  /** Runs of 5 attempts: 1 at first, one more per manual retry. */
  readonly run: number
  /** Attempts made in the current run. */
  readonly attemptsInRun: number
  readonly body: string
  /** The timer that will act next on this delivery (an attempt or a recovery lease). */
  readonly timerId: string | undefined
  /**
   * The attempt claimed and not yet recorded (while processing): a recovery lease sends it again under this id, since
   * it is the same attempt, and the attempt is recorded under it.
   */
  readonly attemptId?: string | undefined
  readonly nextAttemptAt: string | null
  readonly lastAttemptAt: string | null
  readonly createdAt: string
  readonly updatedAt: string
}

/** The filters of `GET /webhooks/deliveries`, which combine freely. */
const deliveryFilterNames = ["endpointId", "status", "eventType"] as const
type DeliveryFilterName = (typeof deliveryFilterNames)[number]

/** How a delivery order's name spells each filter. */
const deliveryOrderWords: Readonly<Record<DeliveryFilterName, string>> = { endpointId: "Endpoint", status: "Status", eventType: "EventType" }

/**
 * One keyset order per combination of the delivery filters, so that every filtered list walks exactly the
 * deliveries it shows: full pages, a true total, and a page that costs the same however many deliveries the filters
 * leave out. The partition is the scope and the filters' values, in this order, joined by "/"; only the last can be
 * free text (an event type), so no two combinations of values give one partition. A status change moves the
 * delivery in the four orders that hold the status (the store keeps orders on update). The combinations are
 * kernel/Paging.ts's; the names are the ones stored: byScope, byEndpoint, byEndpointStatus, ...
 */
const deliveryOrders = Paging.filterCombinations(deliveryFilterNames, (names) =>
  names.length === 0 ? "byScope" : `by${names.map((name) => deliveryOrderWords[name]).join("")}`)

/** The organization's environment a delivery belongs to (its timers carry it, so a reset finds them). */
const deliveryScope = (d: WebhookDelivery) => Tenancy.scopeOf(d.organizationId, d.environment)

const deliveryPartition = (scope: string, names: ReadonlyArray<DeliveryFilterName>, values: DeliveryFilter): string =>
  [scope, ...names.map((name) => values[name])].join("/")

export const WebhookDeliveries = Store.table<WebhookDelivery>({
  name: "webhook_deliveries",
  key: (d) => d.id,
  orders: Object.fromEntries(Object.entries(deliveryOrders).map(([order, names]) => [order, {
    partition: (d: WebhookDelivery) => deliveryPartition(deliveryScope(d), names, d),
    sort: (d: WebhookDelivery) => d.createdAt
  }]))
})

export interface WebhookAttempt {
  readonly id: string
  readonly deliveryId: string
  readonly run: number
  readonly number: number
  readonly startedAt: string
  readonly responseStatus: number | null
  readonly latencyMs: number
  readonly error: string | null
}

export const WebhookAttempts = Store.table<WebhookAttempt>({
  name: "webhook_attempts",
  key: (a) => a.id,
  orders: { byDelivery: { partition: (a) => a.deliveryId, sort: (a) => a.run * 100 + a.number } }
})

/** A sandbox's webhook deliveries and their attempts, listed under each delivery (their timer is Dispatch.ts's). */
export const domain = Domain.make({
  name: "webhooks/Deliveries",
  tables: [
    {
      ...Domain.underParents(WebhookAttempts, "byDelivery", { table: WebhookDeliveries, order: "byScope", prefix: "" }),
      readsAs: (a: WebhookAttempt) => ({ schema: WebhookAttemptSchema, value: attemptToWire(a) })
    },
    { ...Domain.inScope(WebhookDeliveries, "byScope"), counted: "webhookDeliveries", readsAs: (d: WebhookDelivery) => ({ schema: DeliverySchema, value: toWire(d) }) }
  ]
})

// --- the writer: every change of a delivery is a step of the machine ---------------------------------------------

/** A delivery's next attempt, or its claimed attempt's recovery lease: the timer kind of both (Dispatch.ts handles it). */
export const attemptTimer = Timers.kind("webhook.attempt", Schema.Struct({ deliveryId: Schema.String }), "deliveryId")

const stateOf = (d: WebhookDelivery): DeliveryMachine.State => ({ status: d.status, run: d.run, attemptsInRun: d.attemptsInRun })

/** A move's step on a delivery, or undefined when the move does not apply (a refusal here is a stale move). */
const stepOf = (d: WebhookDelivery, move: DeliveryMachine.Move): DeliveryMachine.Step | undefined => {
  const outcome = DeliveryMachine.transition(stateOf(d), move)
  return DeliveryMachine.isStep(outcome) ? outcome : undefined
}

/** Schedules the timer a step asks for, in the delivery's scope. */
const timerOf = (deliveryId: string, scope: string, step: DeliveryMachine.Step, nowMs: number): Effect.Effect<string | undefined, never, Store.Store> =>
  step.timer === undefined ? Effect.succeed(undefined) : Timers.schedule(attemptTimer, nowMs + step.timer.afterMs, { deliveryId }, scope)

/** Writes a step onto a delivery: its state, the timer that acts next, when the next attempt is due, and `fields`. */
const write = (
  delivery: WebhookDelivery,
  step: DeliveryMachine.Step,
  timerId: string | undefined,
  nowMs: number,
  fields: Partial<Pick<WebhookDelivery, "attemptId" | "lastAttemptAt">>
): Effect.Effect<WebhookDelivery, never, Store.Store> =>
  Effect.gen(function*() {
    const next: WebhookDelivery = {
      ...delivery,
      ...step.next,
      timerId,
      // A lease is not an attempt: the claimed attempt keeps its due time.
      nextAttemptAt: step.timer === undefined ? null : step.timer.kind === "attempt" ? toIso(nowMs + step.timer.afterMs) : delivery.nextAttemptAt,
      updatedAt: toIso(nowMs),
      ...fields
    }
    yield* Effect.orDie((yield* Store.Store).update(WebhookDeliveries, next))
    yield* History.recordState(delivery.status, next)
    return next
  })

/** Fan-out's delivery of `event` to one endpoint: pending in run 1, its first attempt due at once. */
export const open = (event: Outbox.OutboxEvent, endpointId: string, body: string, nowMs: number): Effect.Effect<void, never, Store.Store> =>
  Effect.gen(function*() {
    const outcome = DeliveryMachine.transition(undefined, { type: "open" })
    if (!DeliveryMachine.isStep(outcome)) return
    const store = yield* Store.Store
    const now = toIso(nowMs)
    const id = yield* IdGenerator.newId("wdl")
    const timerId = yield* timerOf(id, Tenancy.scopeOf(event.organizationId, event.environment), outcome, nowMs)
    yield* store.insertFresh(WebhookDeliveries, {
      id,
      organizationId: event.organizationId,
      environment: event.environment,
      endpointId,
      eventId: event.id,
      eventType: event.type,
      status: outcome.next.status,
      run: outcome.next.run,
      attemptsInRun: outcome.next.attemptsInRun,
      body,
      timerId,
      nextAttemptAt: now,
      lastAttemptAt: null,
      createdAt: now,
      updatedAt: now
    })
    yield* History.recordState(undefined, { id, organizationId: event.organizationId, environment: event.environment, status: outcome.next.status })
  })

/** A delivery claimed for an attempt: the attempt's id, and the recovery lease that is now its timer. */
export interface Claimed {
  readonly delivery: WebhookDelivery
  readonly attemptId: string
  readonly lease: string | undefined
}

/**
 * Dispatch begins: claims the delivery's attempt under a recovery lease. Each attempt has its own id; a lease that
 * finds its attempt claimed but never recorded sends it again as is. Undefined when the delivery has ended.
 */
export const claim = (delivery: WebhookDelivery, nowMs: number): Effect.Effect<Claimed | undefined, never, Store.Store> =>
  Effect.gen(function*() {
    const step = stepOf(delivery, { type: "begin" })
    if (step === undefined) return undefined
    const lease = yield* timerOf(delivery.id, deliveryScope(delivery), step, nowMs)
    const attemptId = step.send === "again" && delivery.attemptId !== undefined ? delivery.attemptId : yield* IdGenerator.newId("wda")
    return { delivery: yield* write(delivery, step, lease, nowMs, { attemptId }), attemptId, lease }
  })

/** A deleted endpoint receives nothing more: its open delivery ends failed. */
export const abandon = (delivery: WebhookDelivery, nowMs: number): Effect.Effect<void, never, Store.Store> =>
  Effect.gen(function*() {
    const step = stepOf(delivery, { type: "abandon" })
    if (step !== undefined) yield* write(delivery, step, undefined, nowMs, { attemptId: undefined })
  })

/** What one attempt came to. */
export interface AttemptResult {
  readonly id: string
  readonly startedMs: number
  readonly responseStatus: number | null
  readonly latencyMs: number
  /** Null when the endpoint answered 2xx. */
  readonly error: string | null
}

/**
 * Records the claimed attempt of a processing delivery (its recovery lease is its timer) and moves the delivery on:
 * succeeded, its next attempt scheduled, or failed at the end of the run. Answers the attempt's row, or undefined
 * when the delivery was no longer waiting for it.
 */
export const recordAttempt = (current: WebhookDelivery, attempt: AttemptResult): Effect.Effect<WebhookAttempt | undefined, never, Store.Store> =>
  Effect.gen(function*() {
    const step = stepOf(current, { type: attempt.error === null ? "succeed" : "fail" })
    if (step === undefined) return undefined
    const store = yield* Store.Store
    if (current.timerId !== undefined) yield* Timers.cancel(current.timerId)
    const row: WebhookAttempt = {
      id: attempt.id,
      deliveryId: current.id,
      run: current.run,
      number: step.next.attemptsInRun,
      startedAt: toIso(attempt.startedMs),
      responseStatus: attempt.responseStatus,
      latencyMs: attempt.latencyMs,
      error: attempt.error
    }
    // Its id was made by the claim, which this transaction's lock on the delivery still holds: a fresh row, which a
    // SQL store sends with the delivery's own write at the commit.
    yield* store.insertFresh(WebhookAttempts, row)
    const nowMs = yield* Clock.currentTimeMillis
    const timerId = yield* timerOf(current.id, deliveryScope(current), step, nowMs)
    yield* write(current, step, timerId, nowMs, { attemptId: undefined, lastAttemptAt: toIso(attempt.startedMs) })
    return row
  })

/**
 * The deliveries of one scope (scopeOf) that owe an attempt at `nowMs`: in flight (processing), or pending with
 * their next attempt due. What a flush (DeliveryWorker.ts) waits for. Both statuses are read in one store
 * transaction, pending first: a send that begins between two separate reads moved its delivery from the partition
 * not yet read to the one already read, and the flush answered at once without it (a CI run caught it).
 */
export const unfinished = (scope: string, nowMs: number): Effect.Effect<ReadonlyArray<WebhookDelivery>, never, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const inStatus = (status: DeliveryStatus) =>
      store.page(WebhookDeliveries, {
        order: "byStatus",
        partition: deliveryPartition(scope, ["status"], { endpointId: undefined, status, eventType: undefined }),
        descending: false,
        backward: false,
        from: undefined,
        limit: 100_000
      })
    const [pending, processing] = yield* store.transaction(Effect.all([inStatus("pending"), inStatus("processing")]))
    const due = pending.filter((d) => d.nextAttemptAt !== null && parseIso(d.nextAttemptAt)! <= nowMs)
    return [...processing, ...due]
  })

// --- the deliveries API ------------------------------------------------------------------------------------------

export const toWire = (d: WebhookDelivery): DeliveryWire => ({
  id: d.id,
  endpointId: d.endpointId,
  eventId: d.eventId,
  eventType: d.eventType,
  status: d.status,
  attempts: d.attemptsInRun,
  run: d.run,
  // Stored null while there is none; omitted on the wire (representation rule 3).
  ...(d.nextAttemptAt === null ? {} : { nextAttemptAt: d.nextAttemptAt }),
  ...(d.lastAttemptAt === null ? {} : { lastAttemptAt: d.lastAttemptAt }),
  createdAt: d.createdAt,
  updatedAt: d.updatedAt
})

export interface DeliveryFilter {
  readonly endpointId: string | undefined
  readonly status: DeliveryStatus | undefined
  readonly eventType: string | undefined
}

/** Lists deliveries; filters combine freely, and each combination walks its own order (`deliveryOrders`). */
export const list = (caller: Auth.Caller, filter: DeliveryFilter, query: Paging.ListQuery) => {
  const given = deliveryFilterNames.filter((name) => filter[name] !== undefined)
  const [order, names] = Object.entries(deliveryOrders).find(([, names]) =>
    names.length === given.length && names.every((name) => given.includes(name)))!
  const partition = deliveryPartition(Tenancy.scopeOf(caller.organization.id, caller.environment), names, filter)
  return Paging.listPage(WebhookDeliveries, { order, partition, query, toWire: toWire })
}

export const get = (caller: Auth.Caller, id: string) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const delivery = yield* store.get(WebhookDeliveries, id)
    if (delivery === undefined || delivery.organizationId !== caller.organization.id || delivery.environment !== caller.environment) {
      return yield* Problem.apiError("NOT_FOUND", "No webhook delivery with this id exists in this organization and environment.")
    }
    const attempts = yield* store.page(WebhookAttempts, { order: "byDelivery", partition: id, descending: false, backward: false, from: undefined, limit: 1000 })
    return {
      ...toWire(delivery),
      attemptList: attempts.map(attemptToWire)
    }
  })

/** An attempt as a delivery's read lists it. */
export const attemptToWire = (a: WebhookAttempt): WebhookAttemptWire => ({
  id: a.id,
  run: a.run,
  number: a.number,
  startedAt: a.startedAt,
  ...(a.responseStatus === null ? {} : { responseStatus: a.responseStatus }),
  latencyMs: a.latencyMs,
  ...(a.error === null ? {} : { error: a.error })
})

/**
 * A manual retry: only of a failed delivery, which starts a new run of 5 attempts at once. Its refusals: existence
 * (404 NOT_FOUND), then the delivery's state (422 WEBHOOK_DELIVERY_NOT_RETRYABLE); it takes no body, so no request
 * breaks two of these rules.
 */
export const retry = (caller: Auth.Caller, id: string) =>
  Effect.flatMap(Store.Store, (store) =>
    store.transaction(Effect.gen(function*() {
      const delivery = yield* store.getForUpdate(WebhookDeliveries, id)
      if (delivery === undefined || delivery.organizationId !== caller.organization.id || delivery.environment !== caller.environment) {
        return yield* Problem.apiError("NOT_FOUND", "No webhook delivery with this id exists in this organization and environment.")
      }
      const outcome = DeliveryMachine.transition(stateOf(delivery), { type: "retry" })
      if ("refused" in outcome) return yield* Problem.apiError(outcome.refused, outcome.reason)
      if (!DeliveryMachine.isStep(outcome)) return toWire(delivery)
      const nowMs = yield* Clock.currentTimeMillis
      const timerId = yield* timerOf(delivery.id, deliveryScope(delivery), outcome, nowMs)
      const next = yield* write(delivery, outcome, timerId, nowMs, {})
      return toWire(next)
    })))
