/**
 * Dispatch: signed, at-least-once delivery with retries on the Clock (spec, Events: Request headers of a delivery,
 * Signature, Retries; Limits: "Receiver response time: 2xx within 5 seconds").
 *
 * | Header | Value |
 * |---|---|
 * | Content-Type | application/json |
 * | X-Service-Signature | t=<unix-seconds>,v1=<hex>[,v1=<hex>] |
 * | X-Service-Delivery-Id | unique ID of this delivery attempt |
 * | X-Service-Event | event type name |
 *
 * "Each v1 is the lowercase hex of HMAC-SHA256 over the string <t>.<raw-body>, keyed with the full endpoint secret
 * including its whsec_ prefix."
 *
 * Every attempt is a durable timer (`webhook.attempt`): it claims the delivery in its transaction (processing, plus
 * a recovery lease: the same timer kind again, 60 s on), and after that transaction commits hands the send to the
 * delivery worker (DeliveryWorker.ts), so the request or advance that fired the timer never waits for the receiver.
 * The worker sends the signed body and records the attempt in a new transaction (shared with the records of the other
 * sends that ended meanwhile), which schedules the next attempt (30 s, 2 min, 15 min, 1 h) or ends the run; the
 * DeliveryMachine decides which. A crash between sending and
 * recording leaves the lease, which sends the same event again: at least once. In a sandbox, the same transaction
 * keeps what the attempt sent (URL and headers, the signature among them; AttemptRequests.ts).
 */
import { hmac } from "@noble/hashes/hmac.js"
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js"
import { Clock, Duration, Effect } from "effect"
import * as AddressRules from "./AddressRules.ts"
import * as AttemptRequests from "./AttemptRequests.ts"
import * as Deliveries from "./Deliveries.ts"
import * as DeliveryWorker from "./DeliveryWorker.ts"
import * as Domain from "../kernel/Domain.ts"
import * as Endpoints from "./Endpoints.ts"
import * as Listeners from "./Listeners.ts"
import * as Metrics from "../kernel/Metrics.ts"
import * as Store from "../kernel/Store.ts"
import * as RealClock from "../kernel/RealClock.ts"
import * as Telemetry from "../kernel/Telemetry.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Timers from "../kernel/Timers.ts"
import * as Transport from "./Transport.ts"

/** The most a receiver is given to answer. */
export const receiverTimeoutMs = 5_000

/** The X-Service-Signature value for `body` at `t` (unix seconds), one v1 per secret. */
export const signatureHeader = (t: number, body: string, secrets: ReadonlyArray<string>): string =>
  [`t=${t}`, ...secrets.map((secret) => `v1=${bytesToHex(hmac(sha256, utf8ToBytes(secret), utf8ToBytes(`${t}.${body}`)))}`)].join(",")

/** A claimed attempt's send, and the scope (scopeOf) of its delivery. */
interface Send {
  readonly scope: string
  readonly send: Effect.Effect<DeliveryWorker.Recording, never, Store.Store | Transport.WebhookTransport | RealClock.RealClock>
}

const attempt = (payload: { readonly deliveryId: string }): Effect.Effect<Send | undefined, never, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const delivery = yield* store.getForUpdate(Deliveries.WebhookDeliveries, payload.deliveryId)
    if (delivery === undefined) return undefined
    const endpoint = yield* store.get(Endpoints.WebhookEndpoints, delivery.endpointId)
    const nowMs = yield* Clock.currentTimeMillis
    if (endpoint === undefined || endpoint.deletedAt !== undefined) {
      // A deleted endpoint receives nothing more.
      yield* Deliveries.abandon(delivery, nowMs)
      return undefined
    }
    const claimed = yield* Deliveries.claim(delivery, nowMs)
    if (claimed === undefined) return undefined
    // `t` guards the transport: the engine's time by default, real time when the receivers check their own clock.
    const signedMs = (yield* Transport.WebhookSettings).signatureClock?.currentTimeMillisUnsafe() ?? nowMs
    const request: Transport.DeliveryRequest = {
      deliveryId: delivery.id,
      attemptId: claimed.attemptId,
      url: endpoint.url,
      body: delivery.body,
      headers: {
        "content-type": "application/json",
        "x-service-signature": signatureHeader(Math.floor(signedMs / 1000), delivery.body, Endpoints.signingSecrets(endpoint, nowMs)),
        "x-service-delivery-id": claimed.attemptId,
        "x-service-event": delivery.eventType,
        "user-agent": "fos-webhooks/2"
      }
    }
    return { scope: Tenancy.scopeOf(delivery.organizationId, delivery.environment), send: sendAndRecord(claimed, endpoint, request, nowMs) }
  })

/**
 * Sends one attempt and answers its record (DeliveryWorker.ts, `Recording`), which the worker runs in a transaction
 * that may hold other attempts' records too; the next attempt, or the end of the run, is scheduled in it.
 */
const sendAndRecord = (claimed: Deliveries.Claimed, endpoint: Endpoints.WebhookEndpoint, request: Transport.DeliveryRequest, startedMs: number): Effect.Effect<DeliveryWorker.Recording, never, Store.Store | Transport.WebhookTransport | RealClock.RealClock> =>
  Effect.gen(function*() {
    const transport = yield* Transport.WebhookTransport
    const settings = yield* Transport.WebhookSettings
    // The receiver's time limit is real time, whatever clock the engine runs on.
    const realClock = yield* RealClock.RealClock
    const realStart = realClock.currentTimeMillisUnsafe()
    // Checked again before each send, since a name can come to resolve somewhere else, and sent to the address that
    // was checked, so that the name cannot answer differently in between (DNS rebinding).
    // A listener's attempt goes to the client polling it, never over the network (Listeners.ts): no address to check.
    const target = yield* Effect.result(
      Listeners.isListenerUrl(request.url) ? Effect.succeed(undefined) : AddressRules.deliveryAddresses(request.url, settings)
    )
    const outcome = target._tag === "Failure"
      ? { status: null, error: target.failure, latencyMs: undefined }
      : yield* transport.send(target.success === undefined ? request : { ...request, addresses: target.success }).pipe(
        Effect.timeoutOrElse({
          duration: Duration.millis(receiverTimeoutMs),
          orElse: () => Effect.fail(new Transport.TransportError({ message: `no answer within ${receiverTimeoutMs / 1000} seconds` }))
        }),
        Effect.provideService(Clock.Clock, realClock),
        Effect.provideService(Transport.Sending, { delivery: claimed.delivery, endpoint, nowMs: startedMs }),
        Effect.match({
          onFailure: (e) => ({ status: null, error: e.message, latencyMs: undefined }),
          onSuccess: (r) => ({ status: r.status, error: r.status >= 200 && r.status < 300 ? null : `answered ${r.status}`, latencyMs: r.latencyMs })
        })
      )
    const latencyMs = outcome.latencyMs ?? Math.max(0, realClock.currentTimeMillisUnsafe() - realStart)
    yield* Metrics.webhookAttempted(Metrics.attemptOutcomeOf(outcome.status), latencyMs / 1000)
    yield* Telemetry.annotate({
      [Telemetry.Attribute.httpStatus]: outcome.status ?? undefined,
      [Telemetry.Attribute.latencyMs]: latencyMs,
      [Telemetry.Attribute.errorType]: outcome.error === null ? undefined : outcome.status === null ? "no_answer" : String(outcome.status)
    })
    const store = yield* Store.Store
    const record = Effect.gen(function*() {
      const current = yield* store.getForUpdate(Deliveries.WebhookDeliveries, claimed.delivery.id)
      // Another process took this delivery over after our lease ran out: its attempt is the one that counts.
      if (current === undefined || current.timerId !== claimed.lease) return
      const recorded = yield* Deliveries.recordAttempt(current, { id: claimed.attemptId, startedMs, responseStatus: outcome.status, latencyMs, error: outcome.error })
      // What a sandbox attempt sent, in the same transaction as its result (AttemptRequests.ts).
      if (recorded !== undefined) yield* AttemptRequests.keep(current, recorded, request)
    })
    // The record runs later, on the worker, with what the send ran with: the store, the timer's clock and random
    // stream, and this attempt's span as its parent.
    const context = yield* Effect.context<Store.Store>()
    return {
      store,
      // The delivery, and the lease the record cancels (`Deliveries.recordAttempt`).
      locks: [
        { table: Deliveries.WebhookDeliveries, key: claimed.delivery.id },
        ...(claimed.lease === undefined ? [] : [{ table: Timers.Timers, key: claimed.lease }])
      ],
      record: Effect.provideContext(record, context)
    } satisfies DeliveryWorker.Recording
  }).pipe(
    Telemetry.withSpan(Telemetry.SpanName.webhookAttempt, {
      kind: "client",
      attributes: () => ({
        [Telemetry.Attribute.endpointId]: claimed.delivery.endpointId,
        [Telemetry.Attribute.deliveryId]: claimed.delivery.id,
        [Telemetry.Attribute.attemptId]: claimed.attemptId,
        [Telemetry.Attribute.eventType]: claimed.delivery.eventType,
        [Telemetry.Attribute.organization]: claimed.delivery.organizationId,
        [Telemetry.Attribute.environment]: claimed.delivery.environment
      })
    })
  )

/**
 * An attempt's timer, over the transport the engine delivers with (`Transport.WebhookTransport`, its settings and
 * its delivery worker, which the engine provides). Its work after its claim commits is only to queue the send on
 * the worker, with the context the timer fired in (the store, the engine's clock).
 */
const fireAttempt = (payload: { readonly deliveryId: string }) =>
  Effect.gen(function*() {
    const transport = yield* Transport.WebhookTransport
    const settings = yield* Transport.WebhookSettings
    const worker = yield* DeliveryWorker.DeliveryWorker
    const realClock = yield* RealClock.RealClock
    const provide = <A>(effect: Effect.Effect<A, never, Store.Store | Transport.WebhookTransport | RealClock.RealClock>) =>
      effect.pipe(
        Effect.provideService(Transport.WebhookTransport, transport),
        Effect.provideService(Transport.WebhookSettings, settings),
        Effect.provideService(RealClock.RealClock, realClock)
      )
    const claimed = yield* provide(attempt(payload))
    if (claimed === undefined) return undefined
    const send = provide(claimed.send)
    const handOff: Timers.AfterCommit = Effect.flatMap(Effect.context<Store.Store>(), (context) => worker.submit(claimed.scope, Effect.provideContext(send, context)))
    return handOff
  })

/** A delivery's attempts, sent through the engine's transport on its delivery worker. */
export const domain = Domain.make({
  name: "webhooks/Dispatch",
  timers: [Timers.handle(Deliveries.attemptTimer, fireAttempt, (id) => `sends the next attempt of webhook delivery ${id}`, {
    locks: (payload) => ({ table: Deliveries.WebhookDeliveries, key: payload.deliveryId })
  })]
})
