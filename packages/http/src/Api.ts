/**
 * The HttpApi definition: every endpoint with its path, inputs, success and problem responses, plus what the
 * pipeline needs to know of it (its idempotency policy and its dedicated rate bucket). The server, the OpenAPI
 * document and the typed client all come from this one value.
 *
 * Paths are relative to a base address (`/sandbox` or `/live`); the edge strips the base before routing.
 */
import {
  ApiError,
  type Caller,
  CustomerId,
  type DedicatedBucket,
  EventType,
  type IdempotencyPolicy,
  NonBlankString,
  WebhookDeliveryId,
  WebhookEndpointId
} from "@fos/core"
import { Context, Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, OpenApi } from "effect/http-api"

/** Whether an endpoint requires, accepts or refuses the Idempotency-Key header. */
export class Idempotency extends Context.Reference<IdempotencyPolicy | undefined>("fos/http/Idempotency", {
  defaultValue: () => undefined
}) {}

/**
 * False for an endpoint whose effect must not run inside a store transaction (the virtual clock's advance fires
 * timers and sends webhooks in transactions of their own); its idempotency record is then kept right after it.
 */
export class Transactional extends Context.Reference<boolean>("fos/http/Transactional", {
  defaultValue: () => true
}) {}

/** The dedicated rate bucket an endpoint counts against, instead of the general one. */
export class RateBucket extends Context.Reference<DedicatedBucket | undefined>("fos/http/RateBucket", {
  defaultValue: () => undefined
}) {}

/** An RFC 9457 problem, as documented on every endpoint. */
export const ProblemEntry = Schema.Struct({
  pointer: Schema.String,
  detail: Schema.String,
  category: Schema.optionalKey(Schema.Literals(["field", "document", "individual"]))
})

export const Problem = Schema.Struct({
  type: Schema.String,
  title: Schema.String,
  status: Schema.Number,
  detail: Schema.String,
  resolution: Schema.String,
  docs: Schema.String,
  instance: Schema.String,
  correlationId: Schema.String,
  timestamp: Schema.String,
  errors: Schema.optionalKey(Schema.Array(ProblemEntry)),
  retryAfterSeconds: Schema.optionalKey(Schema.Number),
  field: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "Problem" })

const problem = (status: number) => Problem.pipe(HttpApiSchema.status(status))
/** The problems every authenticated endpoint can answer with. */
const common = [problem(400), problem(401), problem(403), problem(404), problem(409), problem(429), problem(500)]

/** The authenticated caller, for handlers; the gate provides it. */
export class CurrentCaller extends Context.Service<CurrentCaller, Caller>()("fos/http/CurrentCaller") {}

/**
 * Runs authentication, rate limits, idempotency and the problem encoder around every endpoint. Handlers fail
 * with `ApiError`; the gate renders it, so it never reaches HttpApi's own error encoding.
 */
export class Gate extends HttpApiMiddleware.Service<Gate, { provides: CurrentCaller }>()("fos/http/Gate", {
  error: Schema.instanceOf(ApiError)
}) {}

export const ListMeta = Schema.Struct({
  mode: Schema.Literals(["cursor", "offset"]),
  nextCursor: Schema.NullOr(Schema.String),
  previousCursor: Schema.NullOr(Schema.String),
  total: Schema.Number
})

export const listOf = <S extends Schema.Top>(item: S) => Schema.Struct({ data: Schema.Array(item), meta: ListMeta })

const PageSize = Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 100 }, {
  fosDetail: "must be an integer from 1 to 100"
}))

/** The paging query every list takes; `sortBy` values are per list. */
export const listQuery = <const Sorts extends ReadonlyArray<string>>(sorts: Sorts) =>
  Schema.Struct({
    // Any text: a cursor that is not one of ours is INVALID_CURSOR, decided when it is read.
    cursor: Schema.optionalKey(Schema.String),
    limit: Schema.optionalKey(PageSize),
    direction: Schema.optionalKey(Schema.Literals(["forward", "backward"])),
    sortBy: Schema.optionalKey(Schema.Literals(sorts as unknown as [Sorts[number], ...Array<Sorts[number]>])),
    sortOrder: Schema.optionalKey(Schema.Literals(["asc", "desc"]))
  })

// --- portal -------------------------------------------------------------------------------------------------

export const Me = Schema.Struct({
  user: Schema.Struct({
    id: Schema.String,
    email: Schema.String,
    role: Schema.Literals(["admin", "developer"]),
    emailVerified: Schema.Boolean,
    createdAt: Schema.String
  }),
  organization: Schema.Struct({
    id: Schema.String,
    name: Schema.String,
    status: Schema.Literals(["onboarding", "active", "suspended"]),
    features: Schema.Array(Schema.String),
    createdAt: Schema.String
  }),
  apiKey: Schema.Struct({
    access: Schema.Literals(["read_only", "read_write"]),
    environment: Schema.Literals(["sandbox", "live"]),
    last4: Schema.String
  })
}).annotate({ identifier: "Me" })

export const Portal = HttpApiGroup.make("portal").add(
  HttpApiEndpoint.get("me", "/v2/portal/users/me", { success: Me, error: common })
)

// --- customers ----------------------------------------------------------------------------------------------

export const Customer = Schema.Struct({
  id: Schema.String,
  type: Schema.Literals(["business", "individual"]),
  status: Schema.Literals(["active", "restricted"]),
  name: Schema.String,
  country: Schema.String,
  clientReferenceId: Schema.optionalKey(Schema.String),
  createdAt: Schema.String,
  updatedAt: Schema.String
}).annotate({ identifier: "Customer" })

export const CustomerSortBy = ["createdAt", "updatedAt"] as const

export const Customers = HttpApiGroup.make("customers")
  .add(HttpApiEndpoint.get("list", "/v2/customers", {
    query: listQuery(CustomerSortBy),
    success: listOf(Customer),
    error: common
  }))
  .add(HttpApiEndpoint.get("get", "/v2/customers/:customerId", {
    params: { customerId: CustomerId },
    success: Customer,
    error: common
  }))

// --- simulate (sandbox only) --------------------------------------------------------------------------------

export const ClockNow = Schema.Struct({ now: Schema.String }).annotate({ identifier: "ClockNow" })

/** Advance by whole seconds, or to an instant: exactly one of the two. */
export const ClockAdvance = Schema.Struct({
  seconds: Schema.optionalKey(Schema.Number.check(Schema.isInt(), Schema.isBetween({ minimum: 0, maximum: 10 * 365 * 24 * 3600 }, {
    fosDetail: "must be a whole number of seconds from 0 to ten years"
  }))),
  to: Schema.optionalKey(Schema.String)
}).check(Schema.makeFilter((a) => (a.seconds === undefined) !== (a.to === undefined), {
  fosDetail: "must have exactly one of seconds or to"
})).annotate({ identifier: "ClockAdvance" })

export const EmittedEvent = Schema.Struct({
  id: Schema.String,
  type: Schema.String,
  createdAt: Schema.String,
  apiVersion: Schema.Literal("2"),
  mode: Schema.Literals(["live", "sandbox"]),
  data: Schema.Unknown
}).annotate({ identifier: "Event" })

export const Simulate = HttpApiGroup.make("simulate")
  .add(HttpApiEndpoint.post("emitEvent", "/v2/simulate/events", {
    payload: Schema.Struct({ type: EventType }),
    success: EmittedEvent.pipe(HttpApiSchema.status(201)),
    error: [...common, problem(413), problem(415)]
  }))
  .add(HttpApiEndpoint.get("clock", "/v2/simulate/clock", { success: ClockNow, error: common }))
  .add(
    HttpApiEndpoint.post("advanceClock", "/v2/simulate/clock/advance", {
      payload: ClockAdvance,
      success: ClockNow,
      error: [...common, problem(413), problem(415)]
    }).annotate(Idempotency, "accepted").annotate(Transactional, false)
  )

// --- webhooks -------------------------------------------------------------------------------------------------

export const Subscription = Schema.Union([
  Schema.Struct({ mode: Schema.Literal("all") }),
  Schema.Struct({
    mode: Schema.Literal("selected"),
    eventTypes: Schema.Array(EventType).check(Schema.isMinLength(1, { fosDetail: "must list at least one event type" }))
  })
]).annotate({ identifier: "Subscription" })

export const SignatureScheme = Schema.Struct({
  algorithm: Schema.Literal("HMAC-SHA256"),
  header: Schema.Literal("X-Service-Signature"),
  format: Schema.String,
  signedPayload: Schema.String,
  key: Schema.String,
  encoding: Schema.String,
  toleranceSeconds: Schema.Number,
  rotationGraceHours: Schema.Number
}).annotate({ identifier: "SignatureScheme" })

export const WebhookEndpoint = Schema.Struct({
  id: Schema.String,
  url: Schema.String,
  subscription: Subscription,
  status: Schema.Literals(["active", "disabled"]),
  createdAt: Schema.String,
  updatedAt: Schema.String,
  secret: Schema.optionalKey(Schema.String),
  signature: Schema.optionalKey(SignatureScheme)
}).annotate({ identifier: "WebhookEndpoint" })

export const WebhookDelivery = Schema.Struct({
  id: Schema.String,
  endpointId: Schema.String,
  eventId: Schema.String,
  eventType: Schema.String,
  status: Schema.Literals(["pending", "processing", "succeeded", "failed"]),
  attempts: Schema.Number,
  run: Schema.Number,
  nextAttemptAt: Schema.NullOr(Schema.String),
  lastAttemptAt: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  updatedAt: Schema.String
}).annotate({ identifier: "WebhookDelivery" })

export const WebhookAttempt = Schema.Struct({
  id: Schema.String,
  run: Schema.Number,
  number: Schema.Number,
  startedAt: Schema.String,
  responseStatus: Schema.NullOr(Schema.Number),
  latencyMs: Schema.Number,
  error: Schema.NullOr(Schema.String)
}).annotate({ identifier: "WebhookAttempt" })

export const WebhookDeliveryDetail = Schema.Struct({
  ...WebhookDelivery.fields,
  attemptList: Schema.Array(WebhookAttempt)
}).annotate({ identifier: "WebhookDeliveryDetail" })

export const EventTypeInfo = Schema.Struct({
  type: Schema.String,
  deprecated: Schema.Boolean,
  example: Schema.Unknown
}).annotate({ identifier: "EventTypeInfo" })

const endpointParams = { id: WebhookEndpointId }
const deliveryParams = { id: WebhookDeliveryId }

export const Webhooks = HttpApiGroup.make("webhooks")
  .add(HttpApiEndpoint.post("createEndpoint", "/v2/webhooks/endpoints", {
    payload: Schema.Struct({ url: NonBlankString, subscription: Schema.optionalKey(Subscription) }),
    success: WebhookEndpoint.pipe(HttpApiSchema.status(201)),
    error: [...common, problem(413), problem(415)]
  }))
  .add(HttpApiEndpoint.get("listEndpoints", "/v2/webhooks/endpoints", {
    query: listQuery(["createdAt"] as const),
    success: listOf(WebhookEndpoint),
    error: common
  }))
  .add(HttpApiEndpoint.get("getEndpoint", "/v2/webhooks/endpoints/:id", { params: endpointParams, success: WebhookEndpoint, error: common }))
  .add(HttpApiEndpoint.patch("updateEndpoint", "/v2/webhooks/endpoints/:id", {
    params: endpointParams,
    payload: Schema.Struct({ subscription: Schema.optionalKey(Subscription), status: Schema.optionalKey(Schema.Literals(["active", "disabled"])) }),
    success: WebhookEndpoint,
    error: [...common, problem(413), problem(415)]
  }))
  .add(HttpApiEndpoint.delete("deleteEndpoint", "/v2/webhooks/endpoints/:id", { params: endpointParams, error: common }))
  .add(
    HttpApiEndpoint.post("rotateSecret", "/v2/webhooks/endpoints/:id/rotate", {
      params: endpointParams,
      success: WebhookEndpoint,
      error: [...common, problem(413), problem(415)]
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

export const Api = HttpApi.make("fos")
  .add(Portal)
  .add(Customers)
  .add(Webhooks)
  .add(Simulate)
  .middleware(Gate)
  .annotate(OpenApi.Title, "Financial Operations Service API (fos)")
  .annotate(OpenApi.Version, "2")
  .annotate(OpenApi.Description, "The reference implementation of the Financial Operations Service API v2. Paths are relative to a base address: <origin>/sandbox or <origin>/live.")
