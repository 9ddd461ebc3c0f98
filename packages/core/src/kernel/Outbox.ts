/**
 * The outbox: every event the engine emits is written here in the same transaction as the change that caused it,
 * so a crash never loses an event and never emits one for a change that did not happen (spec, Events, Delivery
 * guarantees: "At-least-once delivery; the same event may arrive more than once. Deduplicate by id.").
 *
 * A domain that reports a change calls `emitEvent` and imports nothing else of webhooks. What an event sets off
 * (webhook fan-out: a delivery per subscribed endpoint, in the same transaction) is the one subscriber of the topic
 * `EventWritten`, named in Subscriptions.ts; the outbox knows nothing of delivery.
 */
import { Clock, Effect, Schema } from "effect"
import { type Environment, type EventData, type EventId, type EventType, EventTypes, envelopeSchema, toIso } from "@fos/contract"
import * as IdGenerator from "./IdGenerator.ts"
import * as Store from "./Store.ts"
import * as Topics from "./Topics.ts"
import * as Wire from "./Wire.ts"

export interface OutboxEvent {
  readonly id: EventId
  /** The store-wide sequence number: the order events are read in. */
  readonly sequence: number
  readonly type: string
  readonly organizationId: string
  readonly environment: Environment
  readonly createdAt: string
  readonly data: unknown
}

/** The resource an event type is about: the part of the type before the dot (`transaction` of `transaction.completed`). */
export type EventResource = EventType extends `${infer Resource}.${string}` ? Resource : never

/**
 * The member of an event's `data` that names the resource the event is about, by the type's resource:
 * `transaction.completed` is about `data.transactionId`. One entry per resource of the catalogue (a resource the
 * catalogue gains is a compile error here), each a member every one of its types' data has (packages/core
 * test/Events.test.ts), so the sandbox's event log (`listEvents`) finds every event of the catalogue by its resource.
 */
export const eventResourceMembers: Readonly<Record<EventResource, string>> = {
  application: "applicationId",
  claim: "claimId",
  crypto_wallet: "claimId",
  customer: "customerId",
  idv_link: "applicationId",
  order: "orderId",
  organization: "organizationId",
  rfi: "rfiId",
  transaction: "transactionId",
  virtual_account: "virtualAccountId",
  wallet: "walletId",
  wallet_ceremony: "ceremonyId",
  wallet_signer: "walletSignerId"
}

/**
 * The id of the resource an event is about (`eventResourceMembers`): every event of the catalogue has one; undefined
 * only for a type the catalogue does not have.
 */
export const eventResourceId = (event: { readonly type: string; readonly data: unknown }): string | undefined => {
  const member = (eventResourceMembers as Readonly<Record<string, string | undefined>>)[event.type.slice(0, event.type.indexOf("."))]
  const value = member === undefined || typeof event.data !== "object" || event.data === null
    ? undefined
    : (event.data as Record<string, unknown>)[member]
  return typeof value === "string" ? value : undefined
}

/**
 * The sandbox's event log is filtered by resource and type (`listEvents`): one order per combination of the two,
 * over sandbox events only (a live event has no entry in them, so live writes cost nothing more). They keep no
 * count; a list's total counts its index entries, which only a sandbox list pays for.
 */
const sandboxEventOrder = (partition: (e: OutboxEvent) => string) => ({
  partition: (e: OutboxEvent) => e.environment === "sandbox" ? `${e.organizationId}/${e.environment}|${partition(e)}` : undefined,
  sort: (e: OutboxEvent) => e.sequence,
  counted: false
})

export const OutboxEvents = Store.table<OutboxEvent>({
  name: "outbox",
  key: (e) => e.id,
  orders: {
    bySequence: { partition: () => "", sort: (e) => e.sequence, counted: false },
    // One organization's events in one environment, for a sandbox reset and the sandbox's event log.
    byScope: { partition: (e) => `${e.organizationId}/${e.environment}`, sort: (e) => e.sequence, counted: false },
    sandboxByResource: sandboxEventOrder((e) => `resourceId=${eventResourceId(e) ?? ""}`),
    sandboxByType: sandboxEventOrder((e) => `type=${e.type}`),
    sandboxByResourceType: sandboxEventOrder((e) => `resourceId=${eventResourceId(e) ?? ""}|type=${e.type}`)
  }
})

/**
 * Writes an event row as it is, untyped: the store's contract suite and `emitEvent` use it. A domain emits with
 * `emitEvent`, whose payload the catalog checks.
 */
export const appendEvent = (event: {
  readonly type: string
  readonly organizationId: string
  readonly environment: Environment
  readonly data: unknown
}): Effect.Effect<OutboxEvent, never, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const row: OutboxEvent = {
      id: yield* IdGenerator.newId("evt"),
      sequence: yield* store.nextSequence,
      createdAt: toIso(yield* Clock.currentTimeMillis),
      ...event
    }
    yield* store.insertFresh(OutboxEvents, row)
    return row
  })

/** Up to `limit` events after `afterSequence`, in sequence order. */
export const readEvents = (afterSequence: number | undefined, limit: number): Effect.Effect<ReadonlyArray<OutboxEvent>, never, Store.Store> =>
  Effect.flatMap(Store.Store, (store) =>
    store.page(OutboxEvents, {
      order: "bySequence",
      partition: "",
      descending: false,
      backward: false,
      from: afterSequence === undefined ? undefined : { sort: afterSequence, key: "\uffff" },
      limit
    }))

/**
 * An event was written: a topic like every other (kernel/Topics.ts), whose subscriber, webhook fan-out, is named in
 * Subscriptions.ts and runs in the writing transaction. As with every topic, an engine built without its
 * subscribers dies at the first event rather than write one no endpoint ever hears of.
 */
export const EventWritten = Topics.topic<OutboxEvent>("fos/EventWritten")

/**
 * Who hears that a scope's transaction has committed outside a request: the live stream of the http layer
 * (packages/http/src/LiveFeed.ts) reads the outbox then, rather than at its next tail. A request's commits are
 * heard by the request pipeline itself when it answers; what commits in the background (a timer fired by the
 * scheduler or by an advance of the virtual clock) is told here, by the timer's scope (`Timers.fireDue`). Listeners
 * are kept per store, so engines in one process hear only their own; a store nobody listens to costs one lookup.
 */
const commitListeners = new WeakMap<object, Set<(scope: string) => void>>()

/** Listens for commits of `store`'s scopes outside requests; returns the call that stops listening. */
export const onCommitted = (store: Store.StoreService, listener: (scope: string) => void): () => void => {
  let listeners = commitListeners.get(store)
  if (listeners === undefined) commitListeners.set(store, (listeners = new Set()))
  listeners.add(listener)
  return () => {
    listeners.delete(listener)
  }
}

/** Tells the listeners of `store` that a transaction of `scope` has committed (nothing when none listens). */
export const committed = (store: Store.StoreService, scope: string | undefined): void => {
  if (scope === undefined) return
  const listeners = commitListeners.get(store)
  if (listeners === undefined) return
  for (const listener of listeners) listener(scope)
}

/** Each type's row as its envelope (and its sequence), in the encoded form the outbox keeps, made at first use. */
const rowSchemas = new Map<EventType, Schema.Top>()
const rowSchemaOf = (type: EventType): Schema.Top => {
  let schema = rowSchemas.get(type)
  if (schema === undefined) {
    // Flipped: the row holds the encoded envelope, so what is checked is that it decodes, as a client of the
    // event log or a webhook receiver decodes it.
    schema = Schema.flip(Schema.Struct({ ...envelopeSchema(type).fields, sequence: Wire.sequenceNumber }))
    rowSchemas.set(type, schema)
  }
  return schema
}

/**
 * An event's row as the event log, the live stream and its webhook deliveries send it: its type's envelope in the
 * catalog (contract Events.ts), its `data` that type's, and its sequence a whole number (kernel/Domain.ts, `readsAs`).
 */
export const readAs = (row: OutboxEvent): { readonly schema: Schema.Top; readonly value: unknown; readonly members?: Readonly<Record<string, string>> } =>
  (EventTypes as ReadonlyArray<unknown>).includes(row.type)
    ? {
      schema: rowSchemaOf(row.type as EventType),
      value: { id: row.id, type: row.type, createdAt: row.createdAt, apiVersion: "2", mode: row.environment, data: row.data, sequence: row.sequence },
      members: { mode: "environment" }
    }
    : { schema: Schema.Struct({ type: Schema.Literals(EventTypes) }), value: { type: row.type } }

/** The `data` of an event type as it is sent: the encoded form of its schema in the catalog (contract Events.ts). */
export type EventDataOf<T extends EventType> = typeof EventData[T]["Encoded"]

/**
 * A payload's type with its non-empty arrays (`[A, ...A[]]`) read as arrays: the rows the engine builds payloads
 * from hold plain arrays (a virtual account's deposit instructions), and that an array is not empty is a check the
 * catalog makes at run time (as it does the rules that tie fields together), not a type the rows carry.
 */
type Relaxed<T> = T extends readonly [infer A, ...Array<unknown>] ? ReadonlyArray<Relaxed<A>>
  : T extends object ? { readonly [K in keyof T]: Relaxed<T[K]> }
  : T

/**
 * The payload `emitEvent` takes for type `T` when handed `D`: a payload the compiler can see into must fit the
 * catalog's schema for `T`, so a missing, misspelt or mistyped field is a compile error. A payload it cannot see into
 * (a record of unknowns, such as the signing events' fields) is taken as it is; the black-box tests check those
 * payloads at run time, decoding every event an engine wrote with its catalog schema (`expectCatalogEvents`,
 * test/support.ts).
 */
export type EventDataArgument<T extends EventType, D> = unknown extends D ? D
  : string extends keyof D ? D
  : Relaxed<EventDataOf<T>>

/**
 * Emits an event: the outbox row and what it sets off (webhook fan-out), in the caller's transaction. The fan-out
 * reads the scope's endpoints once and writes a delivery (with its first attempt's timer) for each one subscribed,
 * so an event reaches exactly the endpoints that existed when its change committed, and an event nobody subscribes
 * to costs the outbox row and one read. (Fan-out used to be a timer of its own per event: two more writes and a
 * firing transaction for every event, which were most of a deposit's statements.)
 */
export const emitEvent = <T extends EventType, D>(event: {
  readonly type: T
  readonly organizationId: string
  readonly environment: Environment
  readonly data: EventDataArgument<T, D>
}): Effect.Effect<OutboxEvent, never, Store.Store> =>
  Effect.gen(function*() {
    const written = yield* appendEvent(event)
    yield* Topics.publish(EventWritten, written)
    return written
  })
