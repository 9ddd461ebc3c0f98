/**
 * Webhook listeners as the API shows them (sandbox only): what `fos listen --forward-to URL` creates, the signed
 * requests it is handed to forward, and the receiver's answer it reports back (docs/listen.md).
 */
import { Schema } from "effect"
import "../kernel/Annotations.ts"
import { WebhookDeliveryAttemptId, WebhookDeliveryId } from "../kernel/Ids.ts"
import { NonBlankString } from "../kernel/Primitives.ts"
import { Subscription } from "./Webhooks.ts"

/** A listener's endpoint is a webhook endpoint of this URL scheme: no HTTP client speaks it, so nothing is sent over the network to it. */
export const listenerUrlScheme = "fos-listen:"

/** The most listeners (undeleted listener endpoints) a sandbox holds at once. */
export const maxListenersPerSandbox = 10

/** How long a poll waits for a request to forward before it answers an empty list, in milliseconds. */
export const listenerPollWaitMs = 20_000

/** The most requests one poll hands over. */
export const maxRequestsPerPoll = 100

/**
 * How long a poll may wait, in whole seconds (`?wait=`, 0 to 20; 20 when omitted). `wait=0` answers at once: the
 * CLI's first poll, so that the listener counts as connected before the CLI says it is listening.
 */
export const ListenerPollQuery = Schema.Struct({
  wait: Schema.optionalKey(Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 0, maximum: listenerPollWaitMs / 1000 }, {
    fosDetail: `must be a whole number of seconds from 0 to ${listenerPollWaitMs / 1000}`
  })))
}).annotate({ identifier: "ListenerPollQuery" })

export const ListenerCreate = Schema.Struct({ subscription: Schema.optionalKey(Subscription) }).annotate({
  identifier: "ListenerCreate",
  description: "The event types the listener's endpoint subscribes to; all when omitted."
})

export const ForwardedRequest = Schema.Struct({
  attemptId: WebhookDeliveryAttemptId,
  deliveryId: WebhookDeliveryId,
  headers: Schema.Record(Schema.String, Schema.String),
  body: Schema.String
}).annotate({
  identifier: "ForwardedRequest",
  description: "One delivery attempt to forward as it is: POST the body, with these headers, to the local receiver; the signature verifies with the endpoint's secret."
})

export const ListenerPoll = Schema.Struct({ requests: Schema.Array(ForwardedRequest) }).annotate({
  identifier: "ListenerPoll",
  description: "The attempts waiting to be forwarded; empty when none came within the poll's wait."
})

export const ListenerReport = Schema.Struct({
  status: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 100, maximum: 599 }, { fosDetail: "must be an HTTP status from 100 to 599" }))),
  latencyMs: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0, { fosDetail: "must be 0 or more" })),
  error: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(500, { fosDetail: "must be at most 500 characters" })))
}).annotate({
  identifier: "ListenerReport",
  description: "What the local receiver did with a forwarded attempt: its HTTP status, or the error that stopped it (refused, timed out), and the latency."
})

export const ListenerReportResult = Schema.Struct({ recorded: Schema.Boolean }).annotate({
  identifier: "ListenerReportResult",
  description: "Whether the report reached the attempt in time: false when it had already ended (the 5-second receiver limit ran out)."
})
