import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { CustomerId, OrderId } from "../kernel/Ids.ts"
import { listOf, listQuery } from "../kernel/Lists.ts"
import { Order, OrderCreate, OrderSorts, OrderStatus, Quote, QuoteRequest } from "../money/Orders.ts"
import { common, Idempotency, problem, RateBucket, withBody } from "./Policies.ts"
import { documented, ErrorCodes } from "./OpenApiDocument.ts"

const orderParams = { orderId: OrderId }

/** `POST /v2/quotes` prices a conversion; it refuses an Idempotency-Key (spec, Idempotency rule 2). */
export const Quotes = HttpApiGroup.make("quotes")
  .add(
    HttpApiEndpoint.post("create", "/v2/quotes", {
      payload: QuoteRequest,
      success: Quote.pipe(HttpApiSchema.status(201)),
      error: [...withBody, problem(422)]
    }).annotate(ErrorCodes, ["UNSUPPORTED_PAIR", "NO_PRICING_CONFIGURED", "AMOUNT_OUT_OF_RANGE", "CLIENT_MARKUP_NOT_ENABLED", "CLIENT_MARKUP_SPREAD_EXCEEDED", "RATE_UNAVAILABLE", "RATE_UNAVAILABLE_AFTER_HOURS"]).annotateMerge(documented("Request a quote", "Prices a conversion between two assets: each option has a rate, fees and an expiry, and is used once by an order.")).annotate(Idempotency, "refused")
  )

export const Orders = HttpApiGroup.make("orders")
  .add(
    HttpApiEndpoint.post("create", "/v2/orders", {
      payload: OrderCreate,
      success: Order.pipe(HttpApiSchema.status(201)),
      error: [...withBody, problem(422)]
    }).annotate(ErrorCodes, ["QUOTE_NOT_FOUND", "QUOTE_EXPIRED", "QUOTE_ALREADY_USED", "QUOTE_ASSET_MISMATCH", "QUOTE_RECIPIENT_TYPE_UNPRICED", "INVALID_ORDER_COMBO", "UNSUPPORTED_PAIR", "INSUFFICIENT_FUNDS", "MISSING_REQUIRED_FIELDS", "DUPLICATE_CLIENT_REFERENCE_ID", "RATE_UNAVAILABLE", "RATE_UNAVAILABLE_AFTER_HOURS"]).annotateMerge(documented("Create an order", "Creates a conversion order from a quote option, locking its price until lockExpiresAt; execute it to move the funds.")).annotate(Idempotency, "required")
  )
  .add(HttpApiEndpoint.get("list", "/v2/orders", {
    query: Schema.Struct({
      ...listQuery(OrderSorts).fields,
      status: Schema.optionalKey(OrderStatus),
      customerId: Schema.optionalKey(CustomerId)
    }),
    success: listOf(Order),
    error: common
  }).annotateMerge(documented("List orders", "Lists the organization's orders, filtered by status or customer, with cursor paging.")))
  .add(HttpApiEndpoint.get("get", "/v2/orders/:orderId", { params: orderParams, success: Order, error: common }).annotateMerge(documented("Get an order", "Reads one order: its status, source, destination, price and, when done, its transactions.")))
  .add(
    HttpApiEndpoint.post("execute", "/v2/orders/:orderId/execute", {
      params: orderParams,
      success: Order,
      error: [...withBody, problem(422)]
    }).annotate(ErrorCodes, ["ORDER_NOT_FOUND", "ORDER_NOT_EXECUTABLE", "ORDER_EXPIRED", "INSUFFICIENT_FUNDS", "PROVIDER_UNAVAILABLE"]).annotateMerge(documented("Execute an order", "Executes a pending order before its lock expires: the source is debited and the conversion runs; order.* events follow.")).annotate(Idempotency, "required").annotate(RateBucket, "order_execute")
  )
  .add(
    HttpApiEndpoint.post("cancel", "/v2/orders/:orderId/cancel", {
      params: orderParams,
      success: Order,
      error: [...withBody, problem(422)]
    }).annotate(ErrorCodes, ["ORDER_NOT_FOUND", "ORDER_NOT_CANCELLABLE", "ORDER_CANCEL_IN_PROGRESS"]).annotateMerge(documented("Cancel an order", "Cancels a pending order; succeeded and failed orders cannot be cancelled.")).annotate(Idempotency, "required")
  )
