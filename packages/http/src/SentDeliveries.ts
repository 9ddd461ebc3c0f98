/**
 * The webhook deliveries an engine sent, as its host reads them: the record of every attempt (`Deliveries`, kept by
 * a transport that records what it sends, `makeRecorder`), the memory receiver's answers, and the wait for the
 * attempts due or in flight (`flushWebhooks`). The engine's own truth stays in its store (core
 * webhooks/Deliveries.ts); this is what a test or a host looks at.
 */
import type { Engine as EngineModule, FanOut } from "@fos/core"
import { Deliveries as DeliveriesModule, DeliveryWorker, Store, Tenancy, Timers, Transport } from "@fos/core"
import { type Environment, toIso, type WebhookFlush } from "@fos/contract"
import { Context, Effect, Exit, Option } from "effect"

/** What receivers get: the event envelope. */
export type WebhookEnvelope = ReturnType<typeof FanOut.envelopeOf>

/** One delivery attempt as the engine sent it. */
export interface DeliveryAttempt {
  readonly deliveryId: string
  /** The attempt's own id (wda_), sent as `x-service-delivery-id` and listed in the delivery's `attemptList`. */
  readonly attemptId: string
  readonly endpointId: string
  readonly url: string
  /** The envelope, parsed from `body`. */
  readonly event: WebhookEnvelope
  /** The exact bytes sent, as text: what a receiver verifies the signature over. */
  readonly body: string
  /** As sent, lower-case names: `x-service-signature`, `x-service-delivery-id`, `x-service-event`, ... */
  readonly headers: Readonly<Record<string, string>>
  /** The run of 5 attempts (1, then one more per manual retry) and the attempt's number in it (1 to 5). */
  readonly run: number
  readonly attempt: number
  /** The engine's clock when it was sent (virtual time on a virtual clock). */
  readonly sentAt: string
}

export interface SentDelivery extends DeliveryAttempt {
  /** The receiver's status, or null when none came (no answer in time, refused, the transport failed). */
  readonly status: number | null
  /** Why the attempt failed without a status; null otherwise. */
  readonly error: string | null
}

/** How the memory receiver answers an attempt: a status, or a thrown error for "no answer" (a network failure). */
export type Answer = number | ((attempt: DeliveryAttempt) => number)

export interface DeliveriesService {
  /** Every attempt sent so far, in the order sent (answered attempts only: a send in flight shows once it ends). */
  readonly list: () => ReadonlyArray<SentDelivery>
  /** Memory transport: how the receiver answers from now on (200 until told otherwise). */
  readonly answerWith: (answer: Answer) => void
  /** Forgets what was recorded so far. */
  readonly clear: () => void
}

/** The deliveries an engine sent, for tests and hosts; see `CreateEngineOptions.recordDeliveries`. */
export class Deliveries extends Context.Service<Deliveries, DeliveriesService>()("fos/http/Deliveries") {}

export interface Recorder {
  readonly transport: Transport.WebhookTransportService
  readonly attach: (store: Store.StoreService, time: Timers.TimeControlService, handlers: Timers.TimerHandlers["Service"]) => DeliveriesService
}

/**
 * A transport that records what it sends, over `inner` or, when `inner` is undefined, over the memory receiver.
 * The attempt's run and number come from the delivery row (the engine's truth), read when the send starts.
 */
export const makeRecorder = (inner: Transport.WebhookTransportService | undefined, recording: boolean): Recorder => {
  let services: { readonly store: Store.StoreService; readonly time: Timers.TimeControlService; readonly handlers: Timers.TimerHandlers["Service"] } | undefined
  let answer: Answer = 200
  let sends = 0
  let sent: Array<{ readonly order: number; readonly delivery: SentDelivery }> = []

  const sentAtOf = (row: { readonly organizationId: string; readonly environment: Environment } | undefined, sending: Transport.SendingValue | undefined) =>
    Effect.gen(function*() {
      const { store, time, handlers } = services!
      if (row === undefined) return yield* time.now
      const scope = Tenancy.scopeOf(row.organizationId, row.environment)
      // A sandbox clock stands still while its send is under way: the claim's time is its time, unread.
      if (sending !== undefined && time.mode === "virtual" && !Timers.isRealTimeScope(scope)) return sending.nowMs
      const clock = yield* time.clockFor(scope).pipe(
        Effect.provideService(Store.Store, store),
        Effect.provideService(Timers.TimerHandlers, handlers)
      )
      return clock.currentTimeMillisUnsafe()
    })

  const attemptOf = (request: Transport.DeliveryRequest) =>
    Effect.gen(function*() {
      if (services === undefined) return yield* Effect.die(new Error("the delivery recorder was used before its engine was built"))
      // The engine's own sends name their delivery as claimed (`Transport.Sending`); another's is read.
      const claimed = yield* Transport.Sending
      const sending = claimed?.delivery.id === request.deliveryId ? claimed : undefined
      const row = sending?.delivery ?? (yield* services.store.get(DeliveriesModule.WebhookDeliveries, request.deliveryId))
      const attempt: DeliveryAttempt = {
        deliveryId: request.deliveryId,
        attemptId: request.attemptId,
        endpointId: row?.endpointId ?? "",
        url: request.url,
        event: JSON.parse(request.body) as WebhookEnvelope,
        body: request.body,
        headers: request.headers,
        run: row?.run ?? 1,
        attempt: (row?.attemptsInRun ?? 0) + 1,
        // The clock of the delivery's scope: its sandbox's on a virtual clock (the send itself runs on real time).
        sentAt: toIso(yield* sentAtOf(row, sending))
      }
      return attempt
    })

  const receive = (attempt: DeliveryAttempt): Effect.Effect<{ readonly status: number }, Transport.TransportError> =>
    Effect.try({
      try: () => ({ status: typeof answer === "number" ? answer : answer(attempt) }),
      catch: (e) => new Transport.TransportError({ message: e instanceof Error ? e.message : String(e) })
    })

  const transport: Transport.WebhookTransportService = {
    send: (request) =>
      Effect.gen(function*() {
        const order = sends++
        const attempt = yield* attemptOf(request)
        const send = inner === undefined ? receive(attempt) : inner.send(request)
        return yield* send.pipe(Effect.onExit((exit) =>
          Effect.sync(() => {
            const status = Exit.isSuccess(exit) ? exit.value.status : null
            const error = Exit.isSuccess(exit)
              ? null
              : Exit.findErrorOption(exit).pipe(Option.map((e) => e.message), Option.getOrElse(() => "the send was interrupted"))
            sent.push({ order, delivery: { ...attempt, status, error } })
          })
        ))
      })
  }

  const notRecording = () => {
    throw new Error("this engine does not record deliveries: create it with webhookTransport: \"memory\" or recordDeliveries: true")
  }
  return {
    transport: recording ? transport : (inner ?? transport),
    attach: (store, time, handlers) => {
      services = { store, time, handlers }
      return {
        list: () => recording ? [...sent].sort((a, b) => a.order - b.order).map((s) => s.delivery) : notRecording(),
        answerWith: (next) => {
          if (inner !== undefined) throw new Error("answerWith needs the memory transport (webhookTransport: \"memory\")")
          answer = next
        },
        clear: () => {
          sent = []
        }
      }
    }
  }
}

export interface FlushOptions {
  /** One organization's deliveries (both environments unless `environment` says); every organization's if omitted. */
  readonly organizationId?: string
  readonly environment?: Environment
}

/**
 * Waits until every delivery whose attempt is due or in flight has had that attempt recorded, for at most about 6
 * seconds of real time (the spec's 5-second receiver limit and a second to record): what
 * `POST /sandbox/v2/simulate/webhooks/flush` does for the caller's organization. Deliveries waiting for a retry
 * later on the clock had their attempt already; advance the clock, then flush again. On a virtual clock it first
 * fires what is due at the clock's time.
 */
export const flushWebhooks = (options: FlushOptions = {}): Effect.Effect<WebhookFlush, never, EngineModule.EngineServices> =>
  Effect.map(
    DeliveryWorker.flushDeliveries(
      options.organizationId === undefined
        ? undefined
        : (options.environment === undefined ? (["sandbox", "live"] as const) : [options.environment]).map((environment) => ({
          organizationId: options.organizationId!,
          environment
        }))
    ),
    (report) => ({ deliveries: report.deliveries.map(DeliveriesModule.toWire), complete: report.complete })
  )
