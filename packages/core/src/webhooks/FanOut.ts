/**
 * Fan-out: an event becomes one delivery per endpoint that is to receive it (spec, Events, Delivery guarantees:
 * "A delivery to a disabled endpoint is not created"; Webhook endpoint: subscription "all (every event type) or
 * selected with a non-empty eventTypes array"; "excluded from fan-out; no new deliveries are queued" while disabled).
 *
 * It runs in the transaction that writes the event (the outbox's `EventWritten`, wired in Engine.ts): the endpoints
 * of the event's organization and environment that are active, not deleted and subscribed when the change commits
 * get a delivery each, with its first attempt's timer, so an endpoint created after the change does not get the
 * event. Each delivery carries the envelope serialised once, so every attempt sends the same bytes.
 */
import { Clock, Effect } from "effect"
import type { EventType } from "@fos/contract"
import * as Deliveries from "./Deliveries.ts"
import * as Endpoints from "./Endpoints.ts"
import * as Outbox from "../kernel/Outbox.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"

/** The envelope receivers get; serialised once per delivery, so every attempt sends the same bytes. */
export const envelopeOf = (event: Outbox.OutboxEvent) => ({
  id: event.id,
  type: event.type,
  createdAt: event.createdAt,
  apiVersion: "2" as const,
  mode: event.environment,
  data: event.data
})

const subscribed = (endpoint: Endpoints.WebhookEndpoint, type: string): boolean =>
  endpoint.subscription.mode === "all" || endpoint.subscription.eventTypes.includes(type as EventType)

/** Fan-out: one delivery per active endpoint of the event's organization and environment subscribed to it. */
export const fanOut = (event: Outbox.OutboxEvent): Effect.Effect<void, never, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const endpoints = yield* store.page(Endpoints.WebhookEndpoints, {
      order: "live",
      partition: Tenancy.scopeOf(event.organizationId, event.environment),
      descending: false,
      backward: false,
      from: undefined,
      limit: 10_000
    })
    const nowMs = yield* Clock.currentTimeMillis
    const body = JSON.stringify(envelopeOf(event))
    for (const endpoint of endpoints) {
      if (endpoint.status !== "active" || endpoint.deletedAt !== undefined || !subscribed(endpoint, event.type)) continue
      yield* Deliveries.open(event, endpoint.id, body, nowMs)
    }
  })
