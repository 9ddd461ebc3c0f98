/**
 * What each sandbox attempt sent (`GET /sandbox/v2/simulate/webhooks/deliveries/{deliveryId}/attempts`, docs/inspect.md):
 * the public delivery read shows an attempt's status and latency only ("each attempt by wda_"), and a developer
 * whose receiver refuses a signature needs to see what it was handed: the URL, the headers (the spec's "Request
 * headers of a delivery": Content-Type, X-Service-Signature, X-Service-Delivery-Id, X-Service-Event) and the body.
 *
 * - Sandbox only: a live attempt keeps nothing more than its public row, so live pays nothing.
 * - Written in the transaction that records the attempt's result (Dispatch.ts), so a kept request always has its
 *   attempt and an attempt recorded from now on always has its request; the answer (status, latency, error) is
 *   read from the attempt's own row, not copied.
 * - The headers are those the engine signed and handed to the transport, the signature among them and never the
 *   endpoint's secret. A server's HTTP transport adds HTTP's own Host, Content-Length and Connection (the embedded
 *   fetch transport, fetch's own), and a listener's client forwards exactly these.
 * - The body is not copied: every attempt of a delivery sends the delivery's body, byte for byte (Dispatch signs
 *   and sends `delivery.body`, fixed when fan-out opened the delivery), so the read answers that one stored text.
 *   Copying it would store each event up to five times a run for nothing.
 * - Bounded: one row per attempt (5 a run, as the attempts), each a URL (at most `Endpoints`' URL limit) and five
 *   engine-written headers, about half a KiB; a reset, a snapshot and a restore cover the rows (`domain`, found
 *   through their deliveries).
 */
import { Effect } from "effect"
import type * as Auth from "../tenancy/Auth.ts"
import * as Deliveries from "./Deliveries.ts"
import * as Domain from "../kernel/Domain.ts"
import * as Paging from "../kernel/Paging.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Store from "../kernel/Store.ts"

/** What one sandbox attempt sent; its answer is the attempt row's (Deliveries.WebhookAttempts, same id). */
export interface AttemptRequest {
  /** The attempt's id (wda_), also sent as X-Service-Delivery-Id. */
  readonly id: string
  readonly deliveryId: string
  readonly run: number
  readonly number: number
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
}

export const AttemptRequests = Store.table<AttemptRequest>({
  name: "webhook_attempt_requests",
  key: (r) => r.id,
  orders: { byDelivery: { partition: (r) => r.deliveryId, sort: (r) => r.run * 100 + r.number, counted: false } }
})

/** What each sandbox attempt sent, listed under its delivery. */
export const domain = Domain.make({
  name: "webhooks/AttemptRequests",
  tables: [
    // What each sandbox attempt sent (webhooks/AttemptRequests.ts), found through its delivery like the attempts.
    Domain.underParents(AttemptRequests, "byDelivery", { table: Deliveries.WebhookDeliveries, order: "byScope", prefix: "" })
  ]
})

/**
 * Keeps what a sandbox attempt sent, in the caller's transaction (the one that recorded `attempt`); nothing for a
 * live one.
 */
export const keep = (
  delivery: Deliveries.WebhookDelivery,
  attempt: Deliveries.WebhookAttempt,
  request: { readonly url: string; readonly headers: Readonly<Record<string, string>> }
): Effect.Effect<void, never, Store.Store> =>
  delivery.environment !== "sandbox"
    ? Effect.void
    // Keyed by its attempt, a fresh row (`Deliveries.recordAttempt`).
    : Effect.flatMap(Store.Store, (store) =>
      store.insertFresh(AttemptRequests, {
        id: attempt.id,
        deliveryId: delivery.id,
        run: attempt.run,
        number: attempt.number,
        url: request.url,
        headers: { ...request.headers }
      }))

/** One attempt as the sandbox read shows it. */
export interface AttemptView {
  readonly attemptId: string
  readonly run: number
  readonly attemptNumber: number
  readonly at: string
  /** Omitted for an attempt recorded before requests were kept. */
  readonly request?: { readonly url: string; readonly headers: Readonly<Record<string, string>>; readonly body: string }
  readonly response: { readonly status?: number; readonly latencyMs: number; readonly error?: string }
}

/** A delivery's attempts, oldest first, each with what it sent; 404 for a delivery of another organization or of live. */
export const list = (caller: Auth.Caller, deliveryId: string, query: Paging.ListQuery) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const delivery = yield* store.get(Deliveries.WebhookDeliveries, deliveryId)
    if (delivery === undefined || delivery.organizationId !== caller.organization.id || delivery.environment !== caller.environment) {
      return yield* Problem.apiError("NOT_FOUND", "No webhook delivery with this id exists in this organization's sandbox.")
    }
    const page = yield* Paging.listPage(Deliveries.WebhookAttempts, { order: "byDelivery", partition: deliveryId, query, toWire: (a) => a })
    const data = yield* Effect.forEach(page.data, (attempt): Effect.Effect<AttemptView> =>
      Effect.map(store.get(AttemptRequests, attempt.id), (sent) => ({
        attemptId: attempt.id,
        run: attempt.run,
        attemptNumber: attempt.number,
        at: attempt.startedAt,
        ...(sent === undefined ? {} : { request: { url: sent.url, headers: sent.headers, body: delivery.body } }),
        response: {
          ...(attempt.responseStatus === null ? {} : { status: attempt.responseStatus }),
          latencyMs: attempt.latencyMs,
          ...(attempt.error === null ? {} : { error: attempt.error })
        }
      })))
    return { data, meta: page.meta }
  })

