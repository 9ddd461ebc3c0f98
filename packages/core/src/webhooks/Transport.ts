/**
 * The webhook transport port: how deliveries leave the engine (spec, Events: "Webhooks push events to registered
 * HTTPS endpoints"), and what the runtime gives the engine for it. The engine signs and checks; the transport only
 * sends the bytes it is handed, to the addresses the engine checked, and answers with the receiver's status: HTTP
 * in the servers (adapters/serve), or a callback in process for hosts and tests.
 */
import { Clock, Context, Data, Effect } from "effect"
import type { WebhookDelivery } from "./Deliveries.ts"

export interface DeliveryRequest {
  /** The delivery (wdl_) and this attempt of it (wda_, sent as X-Service-Delivery-Id). */
  readonly deliveryId: string
  readonly attemptId: string
  readonly url: string
  /**
   * The addresses the engine checked before this send, from resolving the URL's host (or the address written in the
   * URL): the transport connects to one of them, sending the URL's host as Host and as the TLS server name, so a name
   * that answers differently the next time (DNS rebinding) cannot move the delivery. Absent when the engine has no
   * `resolveHost`: the transport then resolves the name itself.
   */
  readonly addresses?: ReadonlyArray<string>
  readonly headers: Readonly<Record<string, string>>
  /** The exact bytes to send, as text (UTF-8). */
  readonly body: string
}

export class TransportError extends Data.TaggedError("TransportError")<{ readonly message: string }> {}

/** How deliveries leave the engine: HTTP by default, or a callback in process. */
export interface WebhookTransportService {
  /**
   * The receiver's status; and its latency when the transport measured it nearer the receiver than the engine can
   * (a listener's client, webhooks/Listeners.ts), else the engine times the send.
   */
  readonly send: (request: DeliveryRequest) => Effect.Effect<{ readonly status: number; readonly latencyMs?: number }, TransportError>
}

export class WebhookTransport extends Context.Service<WebhookTransport, WebhookTransportService>()("fos/WebhookTransport") {}

/**
 * The delivery a send is for, as its attempt's claim left it, and the time of the claim (`nowMs`, on the delivery's
 * clock): set around every send the engine makes, so that what wraps the transport (receiver faults, the host's
 * record of what was sent) reads the delivery's endpoint, run and clock from here instead of the store. On a virtual
 * clock the clock stands still while a send is under way (DeliveryWorker.ts), so `nowMs` is its time for the whole send.
 */
export interface SendingValue {
  readonly delivery: WebhookDelivery
  /** The delivery's endpoint as the claim read it: whether it carries the receiver-fault mark (webhooks/Endpoints.ts). */
  readonly endpoint: { readonly receiverFault?: true }
  readonly nowMs: number
}

export class Sending extends Context.Reference<SendingValue | undefined>("fos/webhooks/Sending", { defaultValue: () => undefined }) {}

/** A transport that hands each delivery to a function in this process, for hosts and tests. */
export const callback = (
  receive: (request: DeliveryRequest) => Promise<{ readonly status: number }> | { readonly status: number }
): WebhookTransportService => ({
  send: (request) =>
    Effect.tryPromise({
      try: async () => await receive(request),
      catch: (e) => new TransportError({ message: e instanceof Error ? e.message : String(e) })
    })
})

/** Resolves a host name to its addresses (the runtime's DNS); fails when it cannot. */
export type ResolveHost = (host: string) => Effect.Effect<ReadonlyArray<string>, TransportError>

/** Engine settings for webhooks. Without `resolveHost`, only addresses written in the URL itself are checked. */
export interface WebhookSettingsValue {
  readonly insecureWebhooks: boolean
  readonly resolveHost?: ResolveHost | undefined
  /** The clock whose time a signature's `t` carries; the engine's Clock when undefined (EngineOptions.signatureClock). */
  readonly signatureClock?: Clock.Clock | undefined
}

export class WebhookSettings extends Context.Reference<WebhookSettingsValue>("fos/WebhookSettings", {
  defaultValue: () => ({ insecureWebhooks: false })
}) {}
