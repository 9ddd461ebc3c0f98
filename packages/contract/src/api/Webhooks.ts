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

const endpointParams = { id: WebhookEndpointId }
const deliveryParams = { id: WebhookDeliveryId }

export const Webhooks = HttpApiGroup.make("webhooks")
  .add(HttpApiEndpoint.post("createEndpoint", "/v2/webhooks/endpoints", {
    payload: EndpointCreate,
    success: WebhookEndpoint.pipe(HttpApiSchema.status(201)),
    error: withBody
  }))
  .add(HttpApiEndpoint.get("listEndpoints", "/v2/webhooks/endpoints", {
    query: listQuery(["createdAt"] as const),
    success: listOf(WebhookEndpoint),
    error: common
  }))
  // A deleted endpoint is 410 GONE to these three (Endpoints.ts).
  .add(HttpApiEndpoint.get("getEndpoint", "/v2/webhooks/endpoints/:id", { params: endpointParams, success: WebhookEndpoint, error: [...common, problem(410)] }))
  .add(HttpApiEndpoint.patch("updateEndpoint", "/v2/webhooks/endpoints/:id", {
    params: endpointParams,
    payload: EndpointUpdate,
    success: WebhookEndpoint,
    error: [...withBody, problem(410)]
  }))
  .add(HttpApiEndpoint.delete("deleteEndpoint", "/v2/webhooks/endpoints/:id", { params: endpointParams, error: common }))
  .add(
    HttpApiEndpoint.post("rotateSecret", "/v2/webhooks/endpoints/:id/rotate", {
      params: endpointParams,
      success: WebhookEndpoint,
      error: [...withBody, problem(410)]
    }).annotate(Idempotency, "required")
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
  }))
  .add(HttpApiEndpoint.get("getDelivery", "/v2/webhooks/deliveries/:id", { params: deliveryParams, success: WebhookDeliveryDetail, error: common }))
  .add(HttpApiEndpoint.post("retryDelivery", "/v2/webhooks/deliveries/:id/retry", {
    params: deliveryParams,
    success: WebhookDelivery.pipe(HttpApiSchema.status(202)),
    error: [...common, problem(422)]
  }))
  .add(HttpApiEndpoint.get("eventTypes", "/v2/webhooks/event-types", { success: listOf(EventTypeInfo), error: common }))
  // A restricted organization keeps hearing about itself.
  .annotate(OpenWhenRestricted, true)
