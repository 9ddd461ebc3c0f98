/**
 * Webhook endpoints and deliveries as the API shows them: the subscription, the signature scheme returned on create
 * and rotate, deliveries with their attempts, the event-types catalog entry and an emitted event.
 */
import { Schema } from "effect"
import "../kernel/Annotations.ts"
import { openEnum } from "../kernel/OpenEnum.ts"
import { NonBlankString } from "../kernel/Primitives.ts"
import { EventModes, EventType } from "../events/Events.ts"

export const Subscription = Schema.Union([
  Schema.Struct({ mode: Schema.Literal("all") }),
  Schema.Struct({
    mode: Schema.Literal("selected"),
    eventTypes: Schema.Array(EventType).check(Schema.isMinLength(1, { fosDetail: "must list at least one event type" }))
  })
]).annotate({ identifier: "Subscription", description: "The event types an endpoint receives: all, or those selected." })
export type Subscription = typeof Subscription.Type

export const EndpointStatuses = ["active", "disabled"] as const

/** How deliveries are signed, as the scheme returned on create and rotate says it. */
export const signatureScheme = {
  algorithm: "HMAC-SHA256",
  header: "X-Service-Signature",
  format: "t=<unix-seconds>,v1=<hex>[,v1=<hex>]",
  signedPayload: "<t>.<raw request body>",
  key: "the full secret, whsec_ prefix included",
  encoding: "lowercase hex, 64 characters",
  toleranceSeconds: 300,
  rotationGraceHours: 48
} as const

export const SignatureScheme = Schema.Struct({
  algorithm: Schema.Literal("HMAC-SHA256"),
  header: Schema.Literal("X-Service-Signature"),
  format: Schema.String,
  signedPayload: Schema.String,
  key: Schema.String,
  encoding: Schema.String,
  toleranceSeconds: Schema.Number,
  rotationGraceHours: Schema.Number
}).annotate({ identifier: "SignatureScheme", description: "How deliveries to an endpoint are signed, and the replay tolerance." })

export const WebhookEndpoint = Schema.Struct({
  id: Schema.String,
  url: Schema.String,
  subscription: Subscription,
  status: Schema.Literals(EndpointStatuses),
  createdAt: Schema.String,
  updatedAt: Schema.String,
  secret: Schema.optionalKey(Schema.String),
  signature: Schema.optionalKey(SignatureScheme)
}).annotate({ identifier: "WebhookEndpoint", description: "An HTTPS URL that receives the event types it subscribes to, signed with its secret." })
export type WebhookEndpoint = typeof WebhookEndpoint.Type

export const EndpointCreate = Schema.Struct({ url: NonBlankString, subscription: Schema.optionalKey(Subscription) })
export const EndpointUpdate = Schema.Struct({
  subscription: Schema.optionalKey(Subscription),
  status: Schema.optionalKey(Schema.Literals(EndpointStatuses))
})

export const DeliveryStatuses = ["pending", "processing", "succeeded", "failed"] as const
export type DeliveryStatus = typeof DeliveryStatuses[number]

export const WebhookDelivery = Schema.Struct({
  id: Schema.String,
  endpointId: Schema.String,
  eventId: Schema.String,
  eventType: openEnum(EventType),
  status: Schema.Literals(DeliveryStatuses),
  attempts: Schema.Number,
  run: Schema.Number,
  // Each omitted while there is none (rule 3: the spec does not call them nullable).
  nextAttemptAt: Schema.optionalKey(Schema.String),
  lastAttemptAt: Schema.optionalKey(Schema.String),
  createdAt: Schema.String,
  updatedAt: Schema.String
}).annotate({ identifier: "WebhookDelivery", description: "A delivery of one event to one endpoint: its status and attempts." })
export type WebhookDelivery = typeof WebhookDelivery.Type

export const WebhookAttempt = Schema.Struct({
  id: Schema.String,
  run: Schema.Number,
  number: Schema.Number,
  startedAt: Schema.String,
  // Omitted when no answer came (rule 3), as `error` is when one did.
  responseStatus: Schema.optionalKey(Schema.Number),
  latencyMs: Schema.Number,
  error: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "WebhookAttempt", description: "One attempt of a delivery: the response status and latency." })
export type WebhookAttempt = typeof WebhookAttempt.Type

export const WebhookDeliveryDetail = Schema.Struct({
  ...WebhookDelivery.fields,
  attemptList: Schema.Array(WebhookAttempt)
}).annotate({ identifier: "WebhookDeliveryDetail", description: "A delivery with its event and every attempt." })
export type WebhookDeliveryDetail = typeof WebhookDeliveryDetail.Type

export const EventTypeInfo = Schema.Struct({
  type: openEnum(EventType),
  deprecated: Schema.Boolean,
  example: Schema.Unknown
}).annotate({ identifier: "EventTypeInfo", description: "An event type fos sends, with an example payload." })
export type EventTypeInfo = typeof EventTypeInfo.Type

/** An event as delivered: the envelope, with its `data` read as any JSON (`EventEnvelope` checks each type's). */
export const Event = Schema.Struct({
  id: Schema.String,
  type: Schema.String,
  createdAt: Schema.String,
  apiVersion: Schema.Literal("2"),
  mode: Schema.Literals(EventModes),
  data: Schema.Unknown
}).annotate({ identifier: "Event" })
export type Event = typeof Event.Type
