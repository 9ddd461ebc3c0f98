import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { WebhookDeliveryId, WebhookEndpointId } from "../kernel/Ids.ts"
import { listOf, listQuery } from "../kernel/Lists.ts"
import {
  EndpointCreate,
  EndpointUpdate,
  EventTypeInfo,
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookEndpoint
} from "../webhooks/Webhooks.ts"
import { common, Idempotency, OpenWhenRestricted, problem, withBody } from "./Policies.ts"
import { documented, ErrorCodes } from "./OpenApiDocument.ts"

const endpointParams = { id: WebhookEndpointId }
const deliveryParams = { id: WebhookDeliveryId }

export const Webhooks = HttpApiGroup.make("webhooks")
  .add(HttpApiEndpoint.post("createEndpoint", "/v2/webhooks/endpoints", {
    payload: EndpointCreate,
    success: WebhookEndpoint.pipe(HttpApiSchema.status(201)),
    error: withBody
  }).annotateMerge(documented("Create a webhook endpoint", "Registers an HTTPS URL to receive the event types it subscribes to; the answer carries the signing secret once.")))
  .add(HttpApiEndpoint.get("listEndpoints", "/v2/webhooks/endpoints", {
    query: listQuery(["createdAt"] as const),
    success: listOf(WebhookEndpoint),
    error: common
  }).annotateMerge(documented("List webhook endpoints", "Lists the organization's webhook endpoints.")))
  // A deleted endpoint is 410 GONE to these three (Endpoints.ts).
  .add(HttpApiEndpoint.get("getEndpoint", "/v2/webhooks/endpoints/:id", { params: endpointParams, success: WebhookEndpoint, error: [...common, problem(410)] }).annotateMerge(documented("Get a webhook endpoint", "Reads one webhook endpoint: its URL, subscribed event types and status.")))
  .add(HttpApiEndpoint.patch("updateEndpoint", "/v2/webhooks/endpoints/:id", {
    params: endpointParams,
    payload: EndpointUpdate,
    success: WebhookEndpoint,
    error: [...withBody, problem(410)]
  }).annotateMerge(documented("Update a webhook endpoint", "Changes an endpoint's URL, event types or status.")))
  .add(HttpApiEndpoint.delete("deleteEndpoint", "/v2/webhooks/endpoints/:id", { params: endpointParams, error: common }).annotateMerge(documented("Delete a webhook endpoint", "Deletes an endpoint; nothing more is delivered to it.")))
  .add(
    HttpApiEndpoint.post("rotateSecret", "/v2/webhooks/endpoints/:id/rotate", {
      params: endpointParams,
      success: WebhookEndpoint,
      error: [...withBody, problem(410)]
    }).annotateMerge(documented("Rotate an endpoint's secret", "Issues a new signing secret; the old one still verifies during the grace period.")).annotate(Idempotency, "required")
  )
  .add(HttpApiEndpoint.get("listDeliveries", "/v2/webhooks/deliveries", {
    query: Schema.Struct({
      ...listQuery(["createdAt"] as const).fields,
      endpointId: Schema.optionalKey(WebhookEndpointId),
      status: Schema.optionalKey(Schema.String),
      eventType: Schema.optionalKey(Schema.String)
    }),
    success: listOf(WebhookDelivery),
    error: common
  }).annotateMerge(documented("List webhook deliveries", "Lists deliveries of events to the organization's endpoints, with their attempts and outcome.")))
  .add(HttpApiEndpoint.get("getDelivery", "/v2/webhooks/deliveries/:id", { params: deliveryParams, success: WebhookDeliveryDetail, error: common }).annotateMerge(documented("Get a webhook delivery", "Reads one delivery with its event and every attempt.")))
  .add(HttpApiEndpoint.post("retryDelivery", "/v2/webhooks/deliveries/:id/retry", {
    params: deliveryParams,
    success: WebhookDelivery.pipe(HttpApiSchema.status(202)),
    error: [...common, problem(422)]
  }).annotate(ErrorCodes, ["WEBHOOK_DELIVERY_NOT_RETRYABLE"]).annotateMerge(documented("Retry a webhook delivery", "Delivers a failed delivery's event again; only a failed delivery can be retried.")))
  .add(HttpApiEndpoint.get("eventTypes", "/v2/webhooks/event-types", { success: listOf(EventTypeInfo), error: common }).annotateMerge(documented("List event types", "Lists every event type fos sends, with an example payload of each.")))
  // A restricted organization keeps hearing about itself.
  .annotate(OpenWhenRestricted, true)
