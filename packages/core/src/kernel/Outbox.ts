/**
 * The outbox: every event the engine emits is written here in the same transaction as the change that caused it,
 * so a crash never loses an event and never emits one for a change that did not happen. Webhook fan-out reads it
 * in sequence order (see the webhooks issue).
 */
import { Clock, Effect } from "effect"
import { type Environment, type EventId, toIso } from "@fos/contract"
import { newId } from "./IdGenerator.ts"
import { Store, table } from "./Store.ts"

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

export const OutboxEvents = table<OutboxEvent>({
  name: "outbox",
  key: (e) => e.id,
  orders: {
    bySequence: { partition: () => "", sort: (e) => e.sequence, counted: false },
    // One organization's events in one environment, for a sandbox reset.
    byScope: { partition: (e) => `${e.organizationId}/${e.environment}`, sort: (e) => e.sequence, counted: false }
  }
})

/** Writes an event; call it inside the transaction of the change it reports. */
export const appendEvent = (event: {
  readonly type: string
  readonly organizationId: string
  readonly environment: Environment
  readonly data: unknown
}): Effect.Effect<OutboxEvent, never, Store> =>
  Effect.gen(function*() {
    const store = yield* Store
    const row: OutboxEvent = {
      id: yield* newId("evt"),
      sequence: yield* store.nextSequence,
      createdAt: toIso(yield* Clock.currentTimeMillis),
      ...event
    }
    yield* store.insertFresh(OutboxEvents, row)
    return row
  })

/** Up to `limit` events after `afterSequence`, in sequence order. */
export const readEvents = (afterSequence: number | undefined, limit: number): Effect.Effect<ReadonlyArray<OutboxEvent>, never, Store> =>
  Effect.flatMap(Store, (store) =>
    store.page(OutboxEvents, {
      order: "bySequence",
      partition: "",
      descending: false,
      backward: false,
      from: afterSequence === undefined ? undefined : { sort: afterSequence, key: "\uffff" },
      limit
    }))
