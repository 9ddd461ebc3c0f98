import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { CustomerId, OrderId } from "../kernel/Ids.ts"
import { listOf, listQuery } from "../kernel/Lists.ts"
import { Order, OrderCreate, OrderSorts, OrderStatus, Quote, QuoteRequest } from "../money/Orders.ts"
import { common, Idempotency, problem, RateBucket, withBody } from "./Policies.ts"

const orderParams = { orderId: OrderId }

/** `POST /v2/quotes` prices a conversion; it refuses an Idempotency-Key (spec, Idempotency rule 2). */
export const Quotes = HttpApiGroup.make("quotes")
  .add(
    HttpApiEndpoint.post("create", "/v2/quotes", {
      payload: QuoteRequest,
      success: Quote.pipe(HttpApiSchema.status(201)),
      error: [...withBody, problem(422), problem(503)]
    }).annotate(Idempotency, "refused")
  )

export const Orders = HttpApiGroup.make("orders")
  .add(
    HttpApiEndpoint.post("create", "/v2/orders", {
      payload: OrderCreate,
      success: Order.pipe(HttpApiSchema.status(201)),
      error: [...withBody, problem(422), problem(503)]
    }).annotate(Idempotency, "required")
  )
  .add(HttpApiEndpoint.get("list", "/v2/orders", {
    query: Schema.Struct({
      ...listQuery(OrderSorts).fields,
      status: Schema.optionalKey(OrderStatus),
      customerId: Schema.optionalKey(CustomerId)
    }),
    success: listOf(Order),
    error: common
  }))
  .add(HttpApiEndpoint.get("get", "/v2/orders/:orderId", { params: orderParams, success: Order, error: common }))
  .add(
    HttpApiEndpoint.post("execute", "/v2/orders/:orderId/execute", {
      params: orderParams,
      success: Order,
      error: [...withBody, problem(422), problem(503)]
    }).annotate(Idempotency, "required").annotate(RateBucket, "order_execute")
  )
  .add(
    HttpApiEndpoint.post("cancel", "/v2/orders/:orderId/cancel", {
      params: orderParams,
      success: Order,
      error: [...withBody, problem(422)]
    }).annotate(Idempotency, "required")
  )
