/**
 * The HttpApi definition: every endpoint with its path, inputs, success and problem responses, plus what the
 * pipeline needs to know of it (its idempotency policy and its dedicated rate bucket). The server, the OpenAPI
 * document and the typed client all come from this one value.
 *
 * Paths are relative to a base address (`/sandbox` or `/live`); Router.ts serves each endpoint under both.
 */
import {
  ApiError,
  AssetCode,
  Chain,
  Country,
  ApplicationId,
  ApplicationSorts,
  ApplicationTypes,
  CustomerUpdateSubmission,
  FeatureTypes,
  OnboardingSubmission,
  OrganizationSubmission,
  RejectionCategories,
  SensitivePersonFields,
  VirtualAccountId,
  type Caller,
  CustomerId,
  type DedicatedBucket,
  DocumentContentTypes,
  DocumentId,
  DocumentTypes,
  type FormPart,
  maxDocumentBytes,
  EventType,
  type IdempotencyPolicy,
  NonBlankString,
  WebhookDeliveryId,
  WebhookEndpointId
} from "@fos/core"
import { Context, Schema, SchemaGetter } from "effect"
import { Multipart } from "effect/http"
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

/** A file upload endpoint's form: the field that carries the file, and the largest file it takes in bytes. */
export interface UploadPolicy {
  readonly fileField: string
  readonly maxFileBytes: number
}

/**
 * Marks a file upload endpoint: the gate then takes only multipart/form-data, reads and parses the form itself
 * (FILE_TOO_LARGE past the limit) and hands the parts to the handler as `CurrentUpload`.
 */
export class Upload extends Context.Reference<UploadPolicy | undefined>("fos/http/Upload", {
  defaultValue: () => undefined
}) {}

/** The parsed form of an upload endpoint's request, set by the gate; undefined on every other endpoint. */
export class CurrentUpload extends Context.Reference<ReadonlyArray<FormPart> | undefined>("fos/http/CurrentUpload", {
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
 * The gate's error, declared so that handlers may fail with `ApiError`. The gate renders an `ApiError` as a Problem
 * under its own status, which each endpoint documents, so this declares no body of its own: HttpApi then merges it
 * into the endpoint's 500 Problem (same description) instead of documenting an opaque `{}` beside it. It is never
 * encoded (the gate renders it) nor decoded (a client reads the endpoint's Problem).
 */
const GateError = Schema.Void.pipe(Schema.decodeTo(Schema.instanceOf(ApiError), {
  decode: SchemaGetter.forbidden(() => "an ApiError is sent as a Problem; the endpoint's Problem schema reads it"),
  encode: SchemaGetter.forbidden(() => "the gate renders an ApiError as a Problem itself")
})).annotate({ description: "Problem" })

/**
 * Runs authentication, rate limits, idempotency and the problem encoder around every endpoint. Handlers fail
 * with `ApiError`; the gate renders it, so it never reaches HttpApi's own error encoding.
 */
export class Gate extends HttpApiMiddleware.Service<Gate, { provides: CurrentCaller }>()("fos/http/Gate", {
  error: GateError
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

// --- onboarding and applications ------------------------------------------------------------------------------

const FieldRequirement = Schema.Struct({
  pointer: Schema.String,
  description: Schema.String,
  format: Schema.optionalKey(Schema.Struct({ pattern: Schema.String, example: Schema.String }))
})

const PersonDocumentSlot = Schema.Struct({
  slot: Schema.Literals(["identity", "address"]),
  acceptedTypes: Schema.Array(Schema.String),
  description: Schema.String
})

export const OnboardingRequirements = Schema.Struct({
  country: Schema.String,
  legalStructures: Schema.Array(Schema.Struct({ value: Schema.String, label: Schema.String })),
  classifications: Schema.Struct({ primaryIndustry: Schema.Array(Schema.Struct({ key: Schema.String, label: Schema.String })) }),
  business: Schema.Struct({
    fields: Schema.Array(FieldRequirement),
    documents: Schema.Array(Schema.Struct({ type: Schema.String, description: Schema.String }))
  }),
  persons: Schema.Struct({
    ownerThresholdPercent: Schema.Number,
    minimumControllers: Schema.Number,
    fields: Schema.Array(FieldRequirement),
    documents: Schema.Array(PersonDocumentSlot)
  }),
  individual: Schema.Struct({ fields: Schema.Array(FieldRequirement), documents: Schema.Array(PersonDocumentSlot) })
}).annotate({ identifier: "OnboardingRequirements" })

export const ApplicationPerson = Schema.Struct({
  referenceId: Schema.String,
  roles: Schema.Array(Schema.Literals(["owner", "controller", "individual"])),
  firstName: Schema.optionalKey(Schema.String),
  lastName: Schema.optionalKey(Schema.String),
  email: Schema.optionalKey(Schema.String),
  ownershipPercent: Schema.optionalKey(Schema.Number),
  verificationStatus: Schema.Literals(["in_progress", "completed", "failed", "cancelled"])
}).annotate({ identifier: "ApplicationPerson" })

const AssetRefWire = Schema.Struct({ code: Schema.String, chain: Schema.optionalKey(Schema.String) })

export const Application = Schema.Struct({
  applicationId: Schema.String,
  applicationType: Schema.Literals(ApplicationTypes),
  status: Schema.Literals(["draft", "open", "approved", "rejected", "cancelled"]),
  customerId: Schema.optionalKey(Schema.String),
  customerType: Schema.optionalKey(Schema.Literals(["business", "individual"])),
  country: Schema.optionalKey(Schema.String),
  clientReferenceId: Schema.optionalKey(Schema.String),
  houseAccount: Schema.optionalKey(Schema.Boolean),
  asset: Schema.optionalKey(AssetRefWire),
  persons: Schema.Array(ApplicationPerson),
  failureCode: Schema.NullOr(Schema.Literals(["rejected_by_ops", "compliance_denied"])),
  failureMessage: Schema.NullOr(Schema.String),
  resubmittable: Schema.optionalKey(Schema.NullOr(Schema.Boolean)),
  cancelRequestedAt: Schema.NullOr(Schema.String),
  decidedAt: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  updatedAt: Schema.String
}).annotate({ identifier: "Application" })

export const IdvLink = Schema.Struct({
  applicationId: Schema.String,
  referenceId: Schema.String,
  url: Schema.String,
  shortUrl: Schema.String,
  expiresAt: Schema.String
}).annotate({ identifier: "IdvLink" })

export const PersonField = Schema.Struct({
  referenceId: Schema.String,
  field: Schema.Literals(SensitivePersonFields),
  value: Schema.String
}).annotate({ identifier: "PersonField" })

export const FeatureRequirements = Schema.Struct({
  type: Schema.Literals(FeatureTypes),
  requirements: Schema.Array(Schema.Struct({
    pointer: Schema.String,
    required: Schema.Boolean,
    description: Schema.String,
    allowedValues: Schema.optionalKey(Schema.Array(Schema.String))
  }))
}).annotate({ identifier: "FeatureRequirements" })

export const FeatureSubmission = Schema.Struct({
  type: Schema.Literals(FeatureTypes),
  asset: Schema.Struct({ code: AssetCode, chain: Schema.optionalKey(Chain) }),
  clientReferenceId: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(128, { fosDetail: "must be at most 128 characters" })))
}).annotate({ identifier: "FeatureSubmission" })

export const VirtualAccount = Schema.Struct({
  id: Schema.String,
  customerId: Schema.String,
  applicationId: Schema.String,
  asset: Schema.Struct({ code: Schema.String }),
  status: Schema.Literals(["pending", "active"]),
  depositInstructions: Schema.Array(Schema.Record(Schema.String, Schema.String)),
  activatedAt: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  updatedAt: Schema.String
}).annotate({ identifier: "VirtualAccount" })

const applicationParams = { id: ApplicationId }
const personParams = { id: ApplicationId, referenceId: Schema.String }

// --- customers ----------------------------------------------------------------------------------------------

export const Customer = Schema.Struct({
  id: Schema.String,
  type: Schema.Literals(["business", "individual"]),
  status: Schema.Literals(["active", "restricted"]),
  name: Schema.String,
  country: Schema.String,
  clientReferenceId: Schema.optionalKey(Schema.String),
  houseAccount: Schema.Boolean,
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
    error: [...common, problem(422)]
  }))
  .add(
    HttpApiEndpoint.post("submitUpdate", "/v2/customers/:customerId/updates", {
      params: { customerId: CustomerId },
      payload: CustomerUpdateSubmission,
      success: Application.pipe(HttpApiSchema.status(201)),
      error: [...common, problem(413), problem(415), problem(422)]
    }).annotate(Idempotency, "required").annotate(RateBucket, "application_submit")
  )
  .add(HttpApiEndpoint.get("featureRequirements", "/v2/customers/:customerId/features/requirements", {
    params: { customerId: CustomerId },
    // VIRTUAL_ACCOUNT as the spec writes it, or virtual_account as applications name the type.
    query: Schema.Struct({ type: Schema.String }),
    success: FeatureRequirements,
    error: [...common, problem(422)]
  }))
  .add(
    HttpApiEndpoint.post("submitFeature", "/v2/customers/:customerId/features", {
      params: { customerId: CustomerId },
      payload: FeatureSubmission,
      success: Application.pipe(HttpApiSchema.status(201)),
      error: [...common, problem(413), problem(415), problem(422)]
    }).annotate(Idempotency, "required")
  )
  .add(HttpApiEndpoint.get("listVirtualAccounts", "/v2/customers/:customerId/virtual-accounts", {
    params: { customerId: CustomerId },
    query: listQuery(["createdAt"] as const),
    success: listOf(VirtualAccount),
    error: [...common, problem(422)]
  }))
  .add(HttpApiEndpoint.get("getVirtualAccount", "/v2/virtual-accounts/:id", {
    params: { id: VirtualAccountId },
    success: VirtualAccount,
    error: common
  }))

export const Onboarding = HttpApiGroup.make("onboarding")
  .add(HttpApiEndpoint.get("requirements", "/v2/onboarding/requirements", {
    query: Schema.Struct({ country: Country }),
    success: OnboardingRequirements,
    error: common
  }))
  .add(
    HttpApiEndpoint.post("submit", "/v2/onboarding", {
      payload: OnboardingSubmission,
      success: Application.pipe(HttpApiSchema.status(201)),
      error: [...common, problem(413), problem(415), problem(422)]
    }).annotate(Idempotency, "required").annotate(RateBucket, "application_submit")
  )
  .add(
    HttpApiEndpoint.post("submitOrganization", "/v2/organization/onboarding", {
      payload: OrganizationSubmission,
      success: Application.pipe(HttpApiSchema.status(201)),
      error: [...common, problem(413), problem(415), problem(422)]
    }).annotate(Idempotency, "required").annotate(RateBucket, "application_submit")
  )

export const Applications = HttpApiGroup.make("applications")
  .add(HttpApiEndpoint.get("list", "/v2/applications", {
    query: Schema.Struct({ ...listQuery(ApplicationSorts).fields, applicationType: Schema.optionalKey(Schema.Literals(ApplicationTypes)) }),
    success: listOf(Application),
    error: common
  }))
  .add(HttpApiEndpoint.get("get", "/v2/applications/:id", { params: applicationParams, success: Application, error: common }))
  .add(
    HttpApiEndpoint.post("cancel", "/v2/applications/:id/cancel", {
      params: applicationParams,
      success: Application.pipe(HttpApiSchema.status(202)),
      error: common
    }).annotate(Idempotency, "required")
  )
  .add(HttpApiEndpoint.post("idvLink", "/v2/applications/:id/persons/:referenceId/idv-link", {
    params: personParams,
    success: IdvLink.pipe(HttpApiSchema.status(201)),
    error: common
  }))
  .add(HttpApiEndpoint.get("personField", "/v2/applications/:id/persons/:referenceId/fields/:field", {
    params: { ...personParams, field: Schema.Literals(SensitivePersonFields) },
    success: PersonField,
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
  .add(HttpApiEndpoint.post("decideApplication", "/v2/simulate/applications/:id/decision", {
    params: applicationParams,
    payload: Schema.Struct({
      outcome: Schema.Literals(["approved", "rejected"]),
      category: Schema.optionalKey(Schema.Literals(Object.keys(RejectionCategories) as [keyof typeof RejectionCategories])),
      reason: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(500, { fosDetail: "must be at most 500 characters" })))
    }),
    success: Application,
    error: [...common, problem(413), problem(415), problem(422)]
  }))
  .add(HttpApiEndpoint.post("complianceResult", "/v2/simulate/applications/:id/compliance-result", {
    params: applicationParams,
    payload: Schema.Struct({
      failureCode: Schema.optionalKey(Schema.Literals(["rejected_by_ops", "compliance_denied"])),
      failureMessage: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(500, { fosDetail: "must be at most 500 characters" }))),
      resubmittable: Schema.optionalKey(Schema.Boolean)
    }),
    success: Application,
    error: [...common, problem(413), problem(415), problem(422)]
  }))
  .add(HttpApiEndpoint.post("restrictCustomer", "/v2/simulate/customers/:customerId/restrict", {
    params: { customerId: CustomerId },
    payload: Schema.Struct({ type: Schema.optionalKey(Schema.Literals(["account", "monitoring"])) }),
    success: Customer,
    error: [...common, problem(413), problem(415), problem(422)]
  }))
  .add(HttpApiEndpoint.post("restrictOrganization", "/v2/simulate/organization/restrict", {
    success: Schema.Struct({ organizationId: Schema.String, restricted: Schema.Boolean }),
    error: [...common, problem(413), problem(415)]
  }))
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

// --- documents ----------------------------------------------------------------------------------------------

export const Document = Schema.Struct({
  id: Schema.String,
  type: Schema.Literals(DocumentTypes),
  fileName: Schema.String,
  contentType: Schema.Literals(Object.keys(DocumentContentTypes) as Array<keyof typeof DocumentContentTypes>),
  size: Schema.Number,
  sha256: Schema.String,
  customerId: Schema.optionalKey(Schema.String),
  createdAt: Schema.String
}).annotate({ identifier: "Document" })

/**
 * The upload form, for the OpenAPI document and the typed client. The gate reads and checks the form itself
 * (it needs the parts before the handler runs, for the idempotency fingerprint), so the handler never pulls this
 * stream.
 */
export const DocumentForm = Schema.Struct({
  file: Multipart.SingleFileSchema,
  type: Schema.Literals(DocumentTypes),
  customerId: Schema.optionalKey(CustomerId)
}).pipe(HttpApiSchema.asMultipartStream())

export const Documents = HttpApiGroup.make("documents")
  .add(
    HttpApiEndpoint.post("upload", "/v2/documents", {
      payload: DocumentForm,
      success: Document.pipe(HttpApiSchema.status(201)),
      error: [...common, problem(413), problem(415), problem(422)]
    })
      .annotate(Upload, { fileField: "file", maxFileBytes: maxDocumentBytes })
      .annotate(RateBucket, "documents")
      .annotate(Idempotency, "accepted")
  )
  .add(HttpApiEndpoint.get("get", "/v2/documents/:id", { params: { id: DocumentId }, success: Document, error: common }))

/**
 * Every endpoint takes the environment's API key in `x-api-key`. The gate checks it, so HttpApi does not know of
 * it and documents `security: []`; this says so in the document (and gives the reference page its Authorize).
 */
function documentApiKey(spec: Record<string, any>): Record<string, any> {
  spec.components = {
    ...spec.components,
    securitySchemes: { apiKey: { type: "apiKey", in: "header", name: "x-api-key", description: "An API key of this environment: ck_sandbox_… on /sandbox, ck_live_… on /live." } }
  }
  for (const item of Object.values(spec.paths as Record<string, Record<string, { security?: unknown }>>)) {
    for (const operation of Object.values(item)) operation.security = [{ apiKey: [] }]
  }
  return spec
}

export const Api = HttpApi.make("fos")
  .add(Portal)
  .add(Customers)
  .add(Webhooks)
  .add(Simulate)
  .add(Documents)
  .add(Onboarding)
  .add(Applications)
  .middleware(Gate)
  .annotate(OpenApi.Title, "Financial Operations Service API (fos)")
  .annotate(OpenApi.Version, "2")
  .annotate(OpenApi.Description, "The reference implementation of the Financial Operations Service API v2. Paths are relative to a base address: <origin>/sandbox or <origin>/live.")
  // Relative to the document's own address (<base>/v2/openapi.json), so each environment's document names its base.
  .annotate(OpenApi.Servers, [{ url: "..", description: "This environment (the base address this document is served from)" }])
  .annotate(OpenApi.Transform, documentApiKey)
