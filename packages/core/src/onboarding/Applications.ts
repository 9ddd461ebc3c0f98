/**
 * Applications: how customers, their features and the organization itself are onboarded, and the spec's state
 * table for them.
 *
 * | state     | move                                   | next                                                   |
 * |-----------|----------------------------------------|--------------------------------------------------------|
 * | draft     | submit (organization_onboarding only)  | open                                                   |
 * | open      | approval                               | approved (final)                                       |
 * | open      | rejection                              | rejected (final); organization_onboarding with         |
 * |           |                                        | resubmittable true opens a fresh draft                 |
 * | open      | cancel request                         | open with a cancel in progress (CANCEL_IN_PROGRESS to  |
 * |           |                                        | any other review action), then cancelled               |
 * | cancelled | simulate decision                      | approved or rejected (only simulate decides it)        |
 * | rejected  | late compliance result                 | rejected, with a second application.rejected           |
 *
 * Every other move is refused: deciding a decided application is 409 APPLICATION_ALREADY_DECIDED, any other move
 * out of the wrong state is 409 APPLICATION_INVALID_STATUS. `transition` is the table as one pure function, tested
 * move by move; the operations below run it and write the result, its events and its timers in one transaction.
 *
 * Without simulate calls, applications are decided by the review rules of `ReviewSettings` on the clock
 * (docs/onboarding.md).
 */
import { Clock, Effect } from "effect"
import { type Caller } from "../tenancy/Auth.ts"
import { type Customer, Customers, getCustomer, ReservedCustomers } from "./Customers.ts"
import { requireDocuments } from "./Documents.ts"
import {
  type Application as ApplicationWire,
  type ApplicationFailureCode,
  type ApplicationId,
  type ApplicationPerson,
  type ApplicationStatus,
  type ApplicationType,
  type ApplicationTypes,
  type AssetCode,
  type Chain,
  type CustomerId,
  type CustomerUpdateSubmission,
  type Environment,
  type ErrorEntry,
  type FeatureSubmission,
  type FeatureType,
  type OnboardingSubmission,
  type OrganizationSubmission,
  type PersonInput,
  type RejectionCategory,
  type SensitivePersonField,
  toIso
} from "@fos/contract"
import { newId, randomHex } from "../kernel/IdGenerator.ts"
import { individualGaps, kybGaps } from "./Completeness.ts"
import { getOrganization } from "../tenancy/Operator.ts"
import { type ListEnvelope, listPage, type ListQuery } from "../kernel/Paging.ts"
import { apiError, type ApiError } from "../kernel/Problem.ts"
import {
  CountryRequirementSets,
  cryptoIneligible,
  cryptoWalletAssets,
  industryProblem,
  virtualAccountCurrencies
} from "./Requirements.ts"
import { Store, table, type UniqueViolation } from "../kernel/Store.ts"
import { isRestrictedIn, type Organization, Organizations, scopeOf } from "../tenancy/Tenancy.ts"
import { schedule, type TimerHandler } from "../kernel/Timers.ts"
import { ReviewSettings, type ReviewSettingsValue } from "./ReviewSettings.ts"
import { createVirtualAccount } from "../money/VirtualAccounts.ts"
import { emitEvent } from "../kernel/Outbox.ts"
import { toWire } from "../kernel/Wire.ts"


export interface Person {
  readonly referenceId: string
  readonly roles: ReadonlyArray<"owner" | "controller" | "individual">
  readonly firstName: string | undefined
  readonly lastName: string | undefined
  readonly email: string | undefined
  readonly ownershipPercent: number | undefined
  /** Sensitive: only through the person-field read. */
  readonly dateOfBirth: string | undefined
  readonly taxId: string | undefined
  readonly verificationStatus: "in_progress" | "completed" | "failed" | "cancelled"
}

export interface Application {
  readonly id: ApplicationId
  readonly organizationId: string
  readonly environment: Environment
  readonly type: ApplicationType
  readonly status: ApplicationStatus
  /** customer_onboarding: the id reserved at submission; other customer types: the customer. */
  readonly customerId: string | undefined
  readonly customerType: "business" | "individual" | undefined
  readonly country: string | undefined
  readonly clientReferenceId: string | undefined
  readonly houseAccount: boolean
  readonly asset: { readonly code: AssetCode; readonly chain?: Chain } | undefined
  readonly persons: ReadonlyArray<Person>
  /** The submitted body, kept for what approval applies (customer name, update changes). */
  readonly submission: unknown
  readonly failureCode: ApplicationFailureCode | undefined
  readonly failureMessage: string | undefined
  readonly resubmittable: boolean | undefined
  readonly cancelRequestedAt: string | undefined
  readonly decidedAt: string | undefined
  /** organization_onboarding: 1 for the organization's first application, +1 for each draft after; else 0. */
  readonly ordinal: number
  readonly createdAt: string
  readonly updatedAt: string
}

const scope = (a: Application) => scopeOf(a.organizationId, a.environment)

/** The partition of `byCustomer` that holds a customer's applications of one type. */
export const customerApplications = (scope: string, customerId: string, type: ApplicationType) => `${scope}/${customerId}/${type}`
/** A rejected or cancelled application frees its client reference and its house-account claim. */
const holdsClaims = (a: Application) => a.status !== "rejected" && a.status !== "cancelled"

export const Applications = table<Application>({
  name: "applications",
  key: (a) => a.id,
  unique: {
    clientReferenceId: (a) =>
      a.clientReferenceId !== undefined && holdsClaims(a) ? `${scope(a)}/${a.type}/${a.clientReferenceId}` : undefined,
    houseAccount: (a) => (a.houseAccount && holdsClaims(a) ? scope(a) : undefined)
  },
  orders: {
    createdAt: { partition: scope, sort: (a) => a.createdAt },
    updatedAt: { partition: scope, sort: (a) => a.updatedAt },
    // The ordinal breaks ties within one millisecond, so "the organization's current application" is well defined.
    byType: { partition: (a) => `${scope(a)}/${a.type}`, sort: (a) => `${a.createdAt}#${String(a.ordinal).padStart(6, "0")}` },
    // A customer's applications of one type (a wallet needs its customer's approved crypto_wallet application).
    byCustomer: { partition: (a) => customerApplications(scope(a), a.customerId ?? "", a.type), sort: (a) => a.createdAt, counted: false },
    /** The list filtered by type under sortBy=updatedAt. */
    byTypeUpdatedAt: { partition: (a) => `${scope(a)}/${a.type}`, sort: (a) => a.updatedAt }
  }
})


export const reviewTimerKind = "application.review"
export const cancelTimerKind = "application.cancel"
export const lateComplianceTimerKind = "application.late_compliance"

// --- the state table ----------------------------------------------------------------------------------------------

export type Move =
  | { readonly _tag: "Submit" }
  | { readonly _tag: "Decide"; readonly outcome: "approved" | "rejected"; readonly bySimulate: boolean }
  | { readonly _tag: "RequestCancel" }
  | { readonly _tag: "CompleteCancel" }
  | { readonly _tag: "LateCompliance" }

/**
 * The state table as a function: the next status, or the error code the move is refused with. `cancelling` is an
 * open application with a cancel in progress.
 */
export const transition = (
  status: ApplicationStatus,
  cancelling: boolean,
  move: Move
): { readonly next: ApplicationStatus } | { readonly refused: "APPLICATION_ALREADY_DECIDED" | "APPLICATION_INVALID_STATUS" | "CANCEL_IN_PROGRESS" } => {
  const decided = status === "approved" || status === "rejected"
  switch (move._tag) {
    case "Submit":
      return status === "draft" ? { next: "open" } : { refused: "APPLICATION_INVALID_STATUS" }
    case "Decide":
      if (decided) return { refused: "APPLICATION_ALREADY_DECIDED" }
      if (cancelling) return { refused: "CANCEL_IN_PROGRESS" }
      if (status === "open" || (status === "cancelled" && move.bySimulate)) return { next: move.outcome }
      return { refused: "APPLICATION_INVALID_STATUS" }
    case "RequestCancel":
      if (decided) return { refused: "APPLICATION_ALREADY_DECIDED" }
      if (cancelling) return { refused: "CANCEL_IN_PROGRESS" }
      return status === "open" ? { next: "open" } : { refused: "APPLICATION_INVALID_STATUS" }
    case "CompleteCancel":
      return status === "open" && cancelling ? { next: "cancelled" } : { refused: "APPLICATION_INVALID_STATUS" }
    case "LateCompliance":
      return status === "rejected" ? { next: "rejected" } : { refused: "APPLICATION_INVALID_STATUS" }
  }
}

const refusalDetail = {
  APPLICATION_ALREADY_DECIDED: "The application is already decided; approved and rejected are final.",
  APPLICATION_INVALID_STATUS: "The application's status does not allow this.",
  CANCEL_IN_PROGRESS: "A cancellation of this application is in progress; wait for it to finish."
} as const

const move = (application: Application, m: Move): Effect.Effect<ApplicationStatus, ApiError> => {
  const result = transition(application.status, application.cancelRequestedAt !== undefined && application.status === "open", m)
  if ("next" in result) return Effect.succeed(result.next)
  return Effect.fail(apiError(result.refused, `${refusalDetail[result.refused]} (status ${application.status})`))
}

// --- wire ---------------------------------------------------------------------------------------------------------

/** The person as the API shows it: no date of birth or tax id (read those one field at a time). */
const personToWire = (p: Person) => ({
  referenceId: p.referenceId,
  roles: [...p.roles],
  firstName: p.firstName,
  lastName: p.lastName,
  email: p.email,
  ownershipPercent: p.ownershipPercent,
  verificationStatus: p.verificationStatus
})

export const applicationToWire = (a: Application) =>
  toWire({
    applicationId: a.id,
    applicationType: a.type,
    status: a.status,
    customerId: a.type === "organization_onboarding" ? undefined : a.customerId,
    customerType: a.customerType,
    country: a.country,
    clientReferenceId: a.clientReferenceId,
    houseAccount: a.type === "customer_onboarding" ? a.houseAccount : undefined,
    asset: a.asset,
    persons: a.persons.map(personToWire),
    failureCode: a.failureCode ?? null,
    failureMessage: a.failureMessage ?? null,
    resubmittable: a.type === "organization_onboarding" ? a.resubmittable ?? null : undefined,
    cancelRequestedAt: a.cancelRequestedAt ?? null,
    decidedAt: a.decidedAt ?? null,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt
  }) as ApplicationWire

// --- reads --------------------------------------------------------------------------------------------------------

const notFound = () => apiError("APPLICATION_NOT_FOUND", "No application with this id exists in this organization and environment.")

const callerScope = (caller: Caller) => scopeOf(caller.organization.id, caller.environment)

/** An application of the caller's organization; organization_onboarding applications live in the sandbox. */
export const getApplication = (caller: Caller, id: ApplicationId, forUpdate = false): Effect.Effect<Application, ApiError, Store> =>
  Effect.gen(function*() {
    const store = yield* Store
    const application = yield* (forUpdate ? store.getForUpdate(Applications, id) : store.get(Applications, id))
    if (application === undefined || scope(application) !== callerScope(caller)) return yield* notFound()
    return application
  })

export const listApplications = (
  caller: Caller,
  query: ListQuery,
  type: ApplicationType | undefined
): Effect.Effect<ListEnvelope<ApplicationWire>, ApiError, Store> =>
  type === undefined
    ? listPage(Applications, { order: query.sortBy, partition: callerScope(caller), query, toWire: applicationToWire })
    // A type filter walks the type's own order under the sort asked for, so its pages are full and cost the same as
    // the unfiltered list's.
    : listPage(Applications, {
      order: query.sortBy === "updatedAt" ? "byTypeUpdatedAt" : "byType",
      partition: `${callerScope(caller)}/${type}`,
      query,
      toWire: applicationToWire
    })

// --- events -------------------------------------------------------------------------------------------------------

const emit = (application: Application, type: "application.approved" | "application.rejected", occurredAt: string) =>
  emitEvent({
    type,
    organizationId: application.organizationId,
    environment: application.environment,
    data: toWire(type === "application.approved"
      ? {
        applicationId: application.id,
        applicationType: application.type,
        customerId: application.type === "organization_onboarding" ? undefined : application.customerId,
        asset: application.type === "virtual_account" ? application.asset : undefined,
        clientReferenceId: application.clientReferenceId,
        occurredAt
      }
      : {
        applicationId: application.id,
        applicationType: application.type,
        customerId: application.type === "organization_onboarding" ? undefined : application.customerId,
        asset: application.type === "virtual_account" ? application.asset : undefined,
        failureCode: application.failureCode,
        failureMessage: application.failureMessage,
        resubmittable: application.type === "organization_onboarding" ? application.resubmittable : undefined,
        clientReferenceId: application.clientReferenceId,
        occurredAt
      })
  })

// --- submissions --------------------------------------------------------------------------------------------------

const validationError = (errors: ReadonlyArray<ErrorEntry>) =>
  apiError("VALIDATION_ERROR", "The request body failed validation; see errors[].", { errors })

const notReady = (errors: ReadonlyArray<ErrorEntry>) =>
  apiError("ONBOARDING_NOT_READY", `The submission is incomplete: ${errors.length} requirement(s) are not met; see errors[].`, { errors })

const countryRequirements = (country: string) => {
  const requirements = CountryRequirementSets[country]
  return requirements === undefined
    ? Effect.fail(apiError(
      "APPLICATION_COUNTRY_NOT_SUPPORTED",
      `Onboarding is not offered in ${country}; GET /v2/onboarding/requirements lists what is.`
    ))
    : Effect.succeed(requirements)
}

/** Every document id of a submission, with the pointer of each list, checked together: one error names them all. */
const resolveDocuments = (
  caller: Caller,
  lists: ReadonlyArray<{ readonly pointer: string; readonly ids: ReadonlyArray<string> | undefined }>,
  customerId: CustomerId | undefined
): Effect.Effect<Map<string, string>, ApiError, Store> =>
  Effect.gen(function*() {
    const types = new Map<string, string>()
    const errors: Array<ErrorEntry> = []
    for (const list of lists) {
      if (list.ids === undefined || list.ids.length === 0) continue
      const found = yield* Effect.result(requireDocuments(caller, list.ids, { customerId, pointer: list.pointer }))
      if (found._tag === "Failure") {
        if (found.failure.code !== "DOCUMENT_IDS_NOT_FOUND") return yield* found.failure
        errors.push(...(found.failure.errors ?? []))
      } else for (const document of found.success) types.set(document.id, document.type)
    }
    if (errors.length > 0) {
      return yield* apiError("DOCUMENT_IDS_NOT_FOUND", "Some document ids do not exist or cannot be used here; see errors[].", { errors })
    }
    return types
  })

const classificationChecks = (
  classification: { readonly legalStructure?: string; readonly primaryIndustry?: string } | undefined,
  country: string
): Effect.Effect<void, ApiError> => {
  const requirements = CountryRequirementSets[country]!
  const structure = classification?.legalStructure
  if (structure !== undefined && !requirements.legalStructures.some((s) => s.value === structure)) {
    return Effect.fail(apiError(
      "INVALID_LEGAL_STRUCTURE",
      `companyClassification.legalStructure is not among the values offered for ${country}; GET /v2/onboarding/requirements?country=${country} lists them.`
    ))
  }
  const industry = classification?.primaryIndustry
  const problem = industry === undefined ? undefined : industryProblem(industry, country)
  if (problem !== undefined) {
    return Effect.fail(apiError(
      "INVALID_POLICY_SUBJECT",
      `companyClassification.primaryIndustry ${problem}; GET /v2/onboarding/requirements lists the selectable keys.`
    ))
  }
  return Effect.void
}

const duplicateReferences = (persons: ReadonlyArray<PersonInput>): ReadonlyArray<ErrorEntry> => {
  const seen = new Set<string>()
  const errors: Array<ErrorEntry> = []
  persons.forEach((p, i) => {
    if (seen.has(p.referenceId)) errors.push({ pointer: `/ownership/persons/${i}/referenceId`, detail: "must be unique within the application" })
    seen.add(p.referenceId)
  })
  return errors
}

const personOf = (p: PersonInput): Person => ({
  referenceId: p.referenceId,
  roles: [...new Set(p.roles)],
  firstName: p.firstName,
  lastName: p.lastName,
  email: p.email,
  ownershipPercent: p.ownershipPercent,
  dateOfBirth: p.dateOfBirth,
  taxId: p.taxId,
  verificationStatus: "in_progress"
})

/** The reference of an individual customer's one person. */
export const individualReferenceId = "individual"

/** The reserved sandbox reference: the house account fos treats as the organization's own (docs/onboarding.md). */
export const sandboxHouseAccountReference = "house-account"

const duplicateReference = () =>
  apiError("DUPLICATE_CLIENT_REFERENCE_ID", "This clientReferenceId is already used by another application of this type or by a customer.")

/** Inserts a new application with its review timer; unique-key clashes become the spec's problems. */
const insertApplication = (application: Application): Effect.Effect<void, ApiError, Store> =>
  Effect.gen(function*() {
    const store = yield* Store
    yield* store.insert(Applications, application).pipe(
      Effect.catchTag("UniqueViolation", (e: UniqueViolation) =>
        Effect.fail(e.unique === "houseAccount"
          ? apiError("CONFLICT", "This organization already has a house account (or one under review) in this environment.")
          : duplicateReference()))
    )
    if (application.status === "open") yield* scheduleReview(application)
  })

const scheduleReview = (application: Application) =>
  Effect.gen(function*() {
    const settings = yield* ReviewSettings
    if (!settings.automatic) return
    const now = yield* Clock.currentTimeMillis
    yield* schedule(reviewTimerKind, now + settings.reviewDelayMs[application.type], { applicationId: application.id }, scope(application))
  })

const blankApplication = (caller: Caller, type: ApplicationType, now: string): Omit<Application, "id"> => ({
  organizationId: caller.organization.id,
  environment: caller.environment,
  type,
  status: "open",
  customerId: undefined,
  customerType: undefined,
  country: undefined,
  clientReferenceId: undefined,
  houseAccount: false,
  asset: undefined,
  persons: [],
  submission: undefined,
  failureCode: undefined,
  failureMessage: undefined,
  resubmittable: undefined,
  cancelRequestedAt: undefined,
  decidedAt: undefined,
  ordinal: 0,
  createdAt: now,
  updatedAt: now
})

/** Every document list of a submission with its pointer: company documents, the individual's, each person's. */
const documentLists = (body: {
  readonly documentIds?: ReadonlyArray<string>
  readonly individual?: { readonly documentIds?: ReadonlyArray<string> }
  readonly ownership?: { readonly persons: ReadonlyArray<PersonInput> }
}) => [
  { pointer: "/documentIds", ids: body.documentIds },
  { pointer: "/individual/documentIds", ids: body.individual?.documentIds },
  ...(body.ownership?.persons ?? []).map((p, i) => ({ pointer: `/ownership/persons/${i}/documentIds`, ids: p.documentIds }))
]

/** `POST /v2/onboarding`: a customer_onboarding application, open, with the customer id it reserves. */
export const submitOnboarding = (caller: Caller, body: OnboardingSubmission): Effect.Effect<ApplicationWire, ApiError, Store> =>
  Effect.gen(function*() {
    const store = yield* Store
    const customerType = body.customerType ?? "business"
    if (customerType === "business" && body.individual !== undefined) {
      return yield* validationError([{ pointer: "/individual", detail: "is only for customerType individual" }])
    }
    if (customerType === "individual") {
      const wrong = (["businessInfo", "ownership", "companyClassification"] as const).filter((k) => body[k] !== undefined)
      if (wrong.length > 0) return yield* validationError(wrong.map((k) => ({ pointer: `/${k}`, detail: "is only for customerType business" })))
    }
    const duplicates = duplicateReferences(body.ownership?.persons ?? [])
    if (duplicates.length > 0) return yield* validationError(duplicates)
    const requirements = yield* countryRequirements(body.country)
    yield* classificationChecks(body.companyClassification, body.country)
    const documentTypes = yield* resolveDocuments(caller, documentLists(body), undefined)
    if (body.houseAccount === true && customerType !== "business") {
      return yield* apiError("HOUSE_ACCOUNT_BUSINESS_ONLY", "Only a business customer can be marked as the house account.")
    }
    if (
      caller.environment === "sandbox" && body.clientReferenceId?.trim().toLowerCase() === sandboxHouseAccountReference &&
      body.houseAccount !== true
    ) {
      return yield* apiError(
        "SANDBOX_HOUSE_ACCOUNT_RESERVED_REFERENCE",
        `In the sandbox, clientReferenceId "${sandboxHouseAccountReference}" is reserved for the house account; mark the submission houseAccount: true or choose another reference.`
      )
    }
    const typeOf = (id: string) => documentTypes.get(id)
    const gaps = customerType === "business" ? kybGaps(body, requirements, typeOf) : individualGaps(body, requirements, typeOf)
    if (gaps.length > 0) return yield* notReady(gaps)
    if (body.clientReferenceId !== undefined) {
      const taken = yield* store.findUnique(Customers, "clientReferenceId", `${callerScope(caller)}/${body.clientReferenceId}`)
      if (taken !== undefined) return yield* duplicateReference()
    }
    const now = toIso(yield* Clock.currentTimeMillis)
    const customerId = yield* newId("cus")
    const persons = customerType === "business"
      ? (body.ownership?.persons ?? []).map(personOf)
      : [personOf({ ...body.individual!, referenceId: individualReferenceId, roles: ["owner"] })].map((p) => ({ ...p, roles: ["individual" as const] }))
    const application: Application = {
      ...blankApplication(caller, "customer_onboarding", now),
      id: yield* newId("app"),
      customerId,
      customerType,
      country: body.country,
      clientReferenceId: body.clientReferenceId,
      houseAccount: body.houseAccount ?? false,
      persons,
      submission: body
    }
    yield* insertApplication(application)
    yield* Effect.orDie(store.insert(ReservedCustomers, { customerId, scope: scope(application), applicationId: application.id }))
    return applicationToWire(application)
  })

/** `POST /v2/customers/{customerId}/updates`: a customer_update application. */
export const submitCustomerUpdate = (
  caller: Caller,
  customerId: CustomerId,
  body: CustomerUpdateSubmission
): Effect.Effect<ApplicationWire, ApiError, Store> =>
  Effect.gen(function*() {
    const customer = yield* getCustomer(caller, customerId)
    if (customer.type === "business" && body.individual !== undefined) {
      return yield* validationError([{ pointer: "/individual", detail: "is only for an individual customer" }])
    }
    if (customer.type === "individual" && (body.businessInfo !== undefined || body.ownership !== undefined)) {
      return yield* validationError([{ pointer: body.businessInfo !== undefined ? "/businessInfo" : "/ownership", detail: "is only for a business customer" }])
    }
    const duplicates = duplicateReferences(body.ownership?.persons ?? [])
    if (duplicates.length > 0) return yield* validationError(duplicates)
    yield* resolveDocuments(caller, documentLists(body), customer.id)
    const now = toIso(yield* Clock.currentTimeMillis)
    const application: Application = {
      ...blankApplication(caller, "customer_update", now),
      id: yield* newId("app"),
      customerId: customer.id,
      customerType: customer.type,
      country: customer.country,
      clientReferenceId: body.clientReferenceId,
      persons: (body.ownership?.persons ?? []).map(personOf),
      submission: body
    }
    yield* insertApplication(application)
    return applicationToWire(application)
  })

/** Whether a crypto wallet may be offered to this customer (its jurisdiction). */
export const cryptoEligible = (customer: Customer): boolean =>
  !cryptoIneligible.countries.includes(customer.country) &&
  !(customer.country === "USA" && customer.state !== undefined && cryptoIneligible.usStates.includes(customer.state.toUpperCase()))

/** `POST /v2/customers/{customerId}/features`: a virtual_account or crypto_wallet application. */
export const submitFeatureApplication = (
  caller: Caller,
  customerId: CustomerId,
  body: FeatureSubmission
): Effect.Effect<ApplicationWire, ApiError, Store> =>
  Effect.gen(function*() {
    const customer = yield* getCustomer(caller, customerId)
    if (customer.status !== "active") {
      return yield* apiError("UNPROCESSABLE_ENTITY", "The customer is restricted; new features cannot be requested.")
    }
    if (body.type === "virtual_account") {
      const allowed = virtualAccountCurrencies(customer.country)
      if (!allowed.includes(body.asset.code)) {
        return yield* validationError([{ pointer: "/asset/code", detail: `must be one of ${allowed.join(", ")} for this customer` }])
      }
      if (body.asset.chain !== undefined) return yield* validationError([{ pointer: "/asset/chain", detail: "must be omitted for a virtual account" }])
    } else {
      // Refused before anything is written or emitted: an ineligible jurisdiction is a 422 with no event.
      if (!cryptoEligible(customer)) {
        return yield* apiError("UNPROCESSABLE_ENTITY", "Crypto wallets are not offered in the customer's jurisdiction.")
      }
      const offered = cryptoWalletAssets.find((a) => a.code === body.asset.code)
      if (offered === undefined) {
        return yield* validationError([{ pointer: "/asset/code", detail: `must be one of ${cryptoWalletAssets.map((a) => a.code).join(", ")}` }])
      }
      if (body.asset.chain === undefined || !offered.chains.includes(body.asset.chain)) {
        return yield* validationError([{ pointer: "/asset/chain", detail: `must be one of ${offered.chains.join(", ")} for ${offered.code}` }])
      }
    }
    const now = toIso(yield* Clock.currentTimeMillis)
    const application: Application = {
      ...blankApplication(caller, body.type, now),
      id: yield* newId("app"),
      customerId: customer.id,
      customerType: customer.type,
      country: customer.country,
      clientReferenceId: body.clientReferenceId,
      asset: body.asset,
      submission: body
    }
    yield* insertApplication(application)
    return applicationToWire(application)
  })

/**
 * The organization's current application: the newest, passing over drafts a late compliance result withdrew
 * (cancelled without ever being submitted).
 */
const currentOrganizationApplication = (organizationId: string) =>
  Effect.flatMap(Store, (store) =>
    Effect.map(
      store.page(Applications, {
        order: "byType",
        partition: `${scopeOf(organizationId, "sandbox")}/organization_onboarding`,
        descending: true,
        backward: false,
        from: undefined,
        limit: 10
      }),
      (rows) => rows.find((a) => !(a.status === "cancelled" && a.submission === undefined))
    ))

/**
 * `POST /v2/organization/onboarding`: submits the organization's own KYB. It fills the current draft (one opens
 * after a resubmittable rejection) or starts the first application; it is refused while one is open, after a final
 * rejection, and once the organization is active.
 */
export const submitOrganizationOnboarding = (caller: Caller, body: OrganizationSubmission): Effect.Effect<ApplicationWire, ApiError, Store> =>
  Effect.gen(function*() {
    const store = yield* Store
    const organization = yield* getOrganization(caller.organization.id)
    if (organization.status !== "onboarding") {
      return yield* apiError("APPLICATION_INVALID_STATUS", `The organization is ${organization.status}; there is nothing to onboard.`)
    }
    const current = yield* currentOrganizationApplication(organization.id)
    if (current !== undefined && current.status !== "draft") {
      if (current.status === "open") return yield* apiError("APPLICATION_INVALID_STATUS", `Application ${current.id} is still under review.`)
      if (current.status === "rejected" && current.resubmittable === false) {
        return yield* apiError("APPLICATION_INVALID_STATUS", `Application ${current.id} was rejected and cannot be resubmitted; contact support.`)
      }
    }
    const duplicates = duplicateReferences(body.ownership?.persons ?? [])
    if (duplicates.length > 0) return yield* validationError(duplicates)
    const requirements = yield* countryRequirements(body.country)
    yield* classificationChecks(body.companyClassification, body.country)
    const sandboxCaller: Caller = { ...caller, environment: "sandbox" }
    const documentTypes = yield* resolveDocuments(sandboxCaller, documentLists(body), undefined)
    const gaps = kybGaps(body, requirements, (id) => documentTypes.get(id))
    if (gaps.length > 0) return yield* notReady(gaps)
    const now = toIso(yield* Clock.currentTimeMillis)
    const filled = {
      country: body.country,
      persons: (body.ownership?.persons ?? []).map(personOf),
      submission: body,
      updatedAt: now
    }
    if (current?.status === "draft") {
      yield* move(current, { _tag: "Submit" })
      const submitted: Application = { ...current, ...filled, status: "open" }
      yield* Effect.orDie(store.update(Applications, submitted))
      yield* scheduleReview(submitted)
      return applicationToWire(submitted)
    }
    const application: Application = {
      ...blankApplication(sandboxCaller, "organization_onboarding", now),
      id: yield* newId("app"),
      ordinal: (current?.ordinal ?? 0) + 1,
      ...filled
    }
    yield* insertApplication(application)
    return applicationToWire(application)
  })

// --- decisions ----------------------------------------------------------------------------------------------------

/** The sandbox rejection categories of KYB applications, and what each decides. */
export const rejectionOutcomes = {
  documents: { failureCode: "rejected_by_ops", resubmittable: true, message: "Documents were missing, unreadable or expired." },
  ownership: { failureCode: "rejected_by_ops", resubmittable: true, message: "The ownership and control structure could not be verified." },
  business_information: { failureCode: "rejected_by_ops", resubmittable: true, message: "The business information did not match the registry." },
  compliance: { failureCode: "compliance_denied", resubmittable: false, message: "The application did not pass compliance review." },
  prohibited_business: { failureCode: "compliance_denied", resubmittable: false, message: "The business operates in a prohibited industry." }
} as const satisfies Record<RejectionCategory, { failureCode: ApplicationFailureCode; resubmittable: boolean; message: string }>

const defaultMessages: Record<ApplicationFailureCode, string> = {
  rejected_by_ops: "The application was rejected by operations review.",
  compliance_denied: "The application did not pass compliance review."
}

/** KYB applications: businesses (customer onboarding of a business) and the organization itself. */
const isKyb = (a: Application) => a.type === "organization_onboarding" || (a.type === "customer_onboarding" && a.customerType === "business")

export interface ApplicationDecision {
  readonly outcome: "approved" | "rejected"
  readonly category?: RejectionCategory | undefined
  readonly reason?: string | undefined
  readonly failureCode?: ApplicationFailureCode | undefined
  readonly bySimulate: boolean
}

/**
 * Decides an application in the current transaction: the state move, what approval creates, the events and the
 * organization's fresh draft after a resubmittable rejection.
 */
const decide = (application: Application, decision: ApplicationDecision): Effect.Effect<Application, ApiError, Store> =>
  Effect.gen(function*() {
    const store = yield* Store
    if (decision.category !== undefined && !isKyb(application)) {
      return yield* apiError(
        "REJECTION_CATEGORY_NOT_APPLICABLE",
        "A rejection category applies only to KYB applications (a business's customer onboarding, or the organization's)."
      )
    }
    const next = yield* move(application, { _tag: "Decide", outcome: decision.outcome, bySimulate: decision.bySimulate })
    const nowMs = yield* Clock.currentTimeMillis
    const now = toIso(nowMs)
    if (next === "approved") {
      const approved: Application = {
        ...application,
        status: "approved",
        cancelRequestedAt: undefined,
        persons: application.persons.map((p) => ({ ...p, verificationStatus: "completed" as const })),
        decidedAt: now,
        updatedAt: now
      }
      yield* Effect.orDie(store.update(Applications, approved))
      yield* emit(approved, "application.approved", now)
      yield* approvalEffects(approved, now)
      return approved
    }
    const category = decision.category === undefined ? undefined : rejectionOutcomes[decision.category]
    const failureCode = category?.failureCode ?? decision.failureCode ?? "rejected_by_ops"
    const rejected: Application = {
      ...application,
      status: "rejected",
      cancelRequestedAt: undefined,
      persons: application.persons.map((p) => ({ ...p, verificationStatus: "failed" as const })),
      failureCode,
      failureMessage: decision.reason ?? category?.message ?? defaultMessages[failureCode],
      resubmittable: application.type === "organization_onboarding"
        ? category?.resubmittable ?? failureCode === "rejected_by_ops"
        : undefined,
      decidedAt: now,
      updatedAt: now
    }
    yield* Effect.orDie(store.update(Applications, rejected))
    yield* emit(rejected, "application.rejected", now)
    if (rejected.type === "organization_onboarding" && rejected.resubmittable === true) yield* openDraft(rejected, now)
    return rejected
  })

/** A fresh organization_onboarding draft after a resubmittable rejection. */
const openDraft = (rejected: Application, now: string) =>
  Effect.gen(function*() {
    const store = yield* Store
    const draft: Application = {
      ...rejected,
      id: yield* newId("app"),
      status: "draft",
      persons: [],
      submission: undefined,
      failureCode: undefined,
      failureMessage: undefined,
      resubmittable: undefined,
      decidedAt: undefined,
      ordinal: rejected.ordinal + 1,
      createdAt: now,
      updatedAt: now
    }
    yield* Effect.orDie(store.insert(Applications, draft))
  })

/** What an approval creates, by application type. */
const approvalEffects = (application: Application, now: string): Effect.Effect<void, never, Store> =>
  Effect.gen(function*() {
    const store = yield* Store
    switch (application.type) {
      case "customer_onboarding": {
        const submission = application.submission as OnboardingSubmission
        const name = application.customerType === "individual"
          ? `${submission.individual?.firstName ?? ""} ${submission.individual?.lastName ?? ""}`.trim()
          : submission.businessInfo?.legalName ?? ""
        const address = application.customerType === "individual" ? submission.individual?.address : submission.businessInfo?.registeredAddress
        const customer: Customer = {
          id: application.customerId as CustomerId,
          organizationId: application.organizationId,
          environment: application.environment,
          type: application.customerType ?? "business",
          status: "active",
          name,
          country: application.country ?? address?.country ?? "",
          clientReferenceId: application.clientReferenceId,
          houseAccount: application.houseAccount,
          applicationId: application.id,
          state: address?.state,
          silentRestrictions: 0,
          createdAt: now,
          updatedAt: now
        }
        // A clientReferenceId or house account taken meanwhile (by a cancelled application decided later) is
        // dropped from the customer rather than failing the decision.
        yield* store.insert(Customers, customer).pipe(
          Effect.catchTag("UniqueViolation", () => store.insert(Customers, { ...customer, clientReferenceId: undefined, houseAccount: false })),
          Effect.orDie
        )
        yield* store.remove(ReservedCustomers, customer.id)
        yield* emitEvent({
          type: "customer.created",
          organizationId: application.organizationId,
          environment: application.environment,
          data: toWire({ customerId: customer.id, applicationId: application.id, clientReferenceId: customer.clientReferenceId, occurredAt: now })
        })
        return
      }
      case "customer_update": {
        const customer = yield* store.getForUpdate(Customers, application.customerId!)
        if (customer === undefined) return
        const submission = application.submission as CustomerUpdateSubmission
        const name = customer.type === "business"
          ? submission.businessInfo?.legalName ?? customer.name
          : [submission.individual?.firstName ?? customer.name.split(" ")[0], submission.individual?.lastName ?? customer.name.split(" ").slice(1).join(" ")]
            .join(" ").trim()
        const address = submission.businessInfo?.registeredAddress ?? submission.individual?.address
        yield* Effect.orDie(store.update(Customers, {
          ...customer,
          name,
          state: address?.state ?? customer.state,
          updatedAt: now
        }))
        return
      }
      case "virtual_account": {
        yield* createVirtualAccount(application, now)
        return
      }
      case "crypto_wallet":
        return
      case "organization_onboarding": {
        const organization = yield* store.getForUpdate(Organizations, application.organizationId)
        if (organization === undefined || organization.status !== "onboarding") return
        yield* Effect.orDie(store.update(Organizations, { ...organization, status: "active" }))
        yield* emitEvent({
          type: "organization.activated",
          organizationId: organization.id,
          environment: "sandbox",
          data: { organizationId: organization.id, occurredAt: now }
        })
        return
      }
    }
  })

/** `POST /sandbox/v2/simulate/applications/{id}/decision`: decides as the reviewer would, even a cancelled one. */
export const simulateDecision = (
  caller: Caller,
  id: ApplicationId,
  decision: Omit<ApplicationDecision, "bySimulate">
): Effect.Effect<ApplicationWire, ApiError, Store> =>
  Effect.gen(function*() {
    if (decision.outcome === "approved" && decision.category !== undefined) {
      return yield* validationError([{ pointer: "/category", detail: "applies only to a rejection" }])
    }
    const application = yield* getApplication(caller, id, true)
    return applicationToWire(yield* decide(application, { ...decision, bySimulate: true }))
  })

/** `POST /v2/applications/{id}/cancel`: starts a cancellation, which completes on the clock. */
export const requestCancel = (caller: Caller, id: ApplicationId): Effect.Effect<ApplicationWire, ApiError, Store> =>
  Effect.gen(function*() {
    const store = yield* Store
    const application = yield* getApplication(caller, id, true)
    yield* move(application, { _tag: "RequestCancel" })
    const nowMs = yield* Clock.currentTimeMillis
    const cancelling: Application = { ...application, cancelRequestedAt: toIso(nowMs), updatedAt: toIso(nowMs) }
    yield* Effect.orDie(store.update(Applications, cancelling))
    yield* schedule(cancelTimerKind, nowMs + (yield* ReviewSettings).cancelDelayMs, { applicationId: id }, scope(application))
    return applicationToWire(cancelling)
  })

/**
 * A late compliance result: a second application.rejected correcting failureMessage, resubmittable and (except for
 * organization_onboarding) failureCode. Receivers keep the later one (the spec: do not deduplicate by applicationId).
 */
export const lateComplianceResult = (
  application: Application,
  correction: { readonly failureCode?: ApplicationFailureCode | undefined; readonly failureMessage?: string | undefined; readonly resubmittable?: boolean | undefined }
): Effect.Effect<Application, ApiError, Store> =>
  Effect.gen(function*() {
    const store = yield* Store
    yield* move(application, { _tag: "LateCompliance" })
    const isOrganization = application.type === "organization_onboarding"
    if (isOrganization && correction.failureCode !== undefined && correction.failureCode !== application.failureCode) {
      return yield* apiError("UNPROCESSABLE_ENTITY", "An organization_onboarding rejection's failureCode is not corrected; send failureMessage or resubmittable.")
    }
    const now = toIso(yield* Clock.currentTimeMillis)
    const failureCode = isOrganization ? application.failureCode : correction.failureCode ?? "compliance_denied"
    const corrected: Application = {
      ...application,
      failureCode,
      failureMessage: correction.failureMessage ?? defaultMessages[failureCode ?? "compliance_denied"],
      resubmittable: isOrganization ? correction.resubmittable ?? false : undefined,
      updatedAt: now
    }
    yield* Effect.orDie(store.update(Applications, corrected))
    yield* emit(corrected, "application.rejected", now)
    if (isOrganization && corrected.resubmittable !== application.resubmittable) {
      const current = yield* currentOrganizationApplication(application.organizationId)
      // Now final: the draft the first result opened is withdrawn. Now resubmittable: a draft opens.
      if (corrected.resubmittable === false && current?.status === "draft") {
        yield* Effect.orDie(store.update(Applications, { ...current, status: "cancelled", updatedAt: now }))
      } else if (corrected.resubmittable === true && current?.id === corrected.id) yield* openDraft(corrected, now)
    }
    return corrected
  })

export const simulateLateCompliance = (
  caller: Caller,
  id: ApplicationId,
  correction: Parameters<typeof lateComplianceResult>[1]
): Effect.Effect<ApplicationWire, ApiError, Store> =>
  Effect.flatMap(getApplication(caller, id, true), (application) => Effect.map(lateComplianceResult(application, correction), applicationToWire))

// --- persons --------------------------------------------------------------------------------------------------------

const findPerson = (application: Application, referenceId: string) => {
  const person = application.persons.find((p) => p.referenceId === referenceId)
  return person === undefined
    ? Effect.fail(apiError("APPLICATION_PERSON_NOT_FOUND", "The application has no person with this referenceId."))
    : Effect.succeed(person)
}


/** One sensitive field of a person, read on its own so it is never part of a list or a log of the application. */
export const readPersonField = (caller: Caller, id: ApplicationId, referenceId: string, field: SensitivePersonField) =>
  Effect.gen(function*() {
    const person = yield* findPerson(yield* getApplication(caller, id), referenceId)
    const value = person[field]
    if (value === undefined) {
      return yield* apiError("APPLICATION_PERSON_FIELD_EMPTY", `The person's ${field} has no value.`)
    }
    return { referenceId, field, value }
  })

/** Links live this long; a fresh one can be fetched while verification is in progress. */
const idvLinkLifetimeMs = 7 * 24 * 60 * 60_000

/**
 * `POST /v2/applications/{id}/persons/{referenceId}/idv-link`: a fresh identity-verification link, while the
 * person's verification is in progress; emits idv_link.created (url, and the deprecated shortUrl).
 */
export const createIdvLink = (caller: Caller, id: ApplicationId, referenceId: string) =>
  Effect.gen(function*() {
    const application = yield* getApplication(caller, id, true)
    const person = yield* findPerson(application, referenceId)
    if (application.status === "open" && application.cancelRequestedAt !== undefined) {
      return yield* apiError("CANCEL_IN_PROGRESS", "A cancellation of this application is in progress.")
    }
    if (application.status !== "open" || person.verificationStatus !== "in_progress") {
      return yield* apiError("APPLICATION_INVALID_STATUS", "Identity verification is not in progress for this person; a link is offered only while it is.")
    }
    const nowMs = yield* Clock.currentTimeMillis
    const url = `https://verify.fos.dev/session/${yield* randomHex(32)}`
    const shortUrl = `https://fos.dev/v/${yield* randomHex(8)}`
    const customerId = application.type === "organization_onboarding" ? undefined : application.customerId
    yield* emitEvent({
      type: "idv_link.created",
      organizationId: application.organizationId,
      environment: application.environment,
      data: toWire({ applicationId: application.id, referenceId, customerId, url, shortUrl, occurredAt: toIso(nowMs) })
    })
    return toWire({ applicationId: application.id, referenceId, url, shortUrl, expiresAt: toIso(nowMs + idvLinkLifetimeMs) }) as {
      readonly applicationId: string
      readonly referenceId: string
      readonly url: string
      readonly shortUrl: string
      readonly expiresAt: string
    }
  })

// --- timers ---------------------------------------------------------------------------------------------------------

const markers = (application: Application): string => {
  const s = application.submission as {
    readonly businessInfo?: { readonly legalName?: string }
    readonly individual?: { readonly firstName?: string; readonly lastName?: string }
  } | undefined
  return [s?.businessInfo?.legalName, s?.individual?.firstName, s?.individual?.lastName, application.clientReferenceId]
    .filter((t) => t !== undefined).join(" ").toLowerCase()
}

/** The world model's review: deterministic on the application's own data (see ReviewSettings). */
const review: TimerHandler = (payload: { readonly applicationId: string }) =>
  Effect.gen(function*() {
    const store = yield* Store
    const application = yield* store.getForUpdate(Applications, payload.applicationId)
    // Decided by simulate, cancelled, or being cancelled meanwhile: the review has nothing to do.
    if (application === undefined || application.status !== "open" || application.cancelRequestedAt !== undefined) return
    const text = markers(application)
    if (text.includes("fos:manual")) return
    const settings = yield* ReviewSettings
    if (text.includes("fos:late-reject")) {
      yield* decide(application, { outcome: "rejected", failureCode: "rejected_by_ops", bySimulate: false })
      yield* schedule(lateComplianceTimerKind, (yield* Clock.currentTimeMillis) + settings.lateComplianceDelayMs, { applicationId: application.id }, scope(application))
      return
    }
    if (text.includes("fos:reject")) {
      yield* decide(application, { outcome: "rejected", failureCode: "compliance_denied", bySimulate: false })
      return
    }
    yield* decide(application, { outcome: "approved", bySimulate: false })
  }).pipe(Effect.orDie)

const completeCancel: TimerHandler = (payload: { readonly applicationId: string }) =>
  Effect.gen(function*() {
    const store = yield* Store
    const application = yield* store.getForUpdate(Applications, payload.applicationId)
    if (application === undefined) return
    const result = transition(application.status, application.cancelRequestedAt !== undefined, { _tag: "CompleteCancel" })
    if (!("next" in result)) return
    const now = toIso(yield* Clock.currentTimeMillis)
    yield* Effect.orDie(store.update(Applications, {
      ...application,
      status: "cancelled",
      cancelRequestedAt: undefined,
      persons: application.persons.map((p) => ({ ...p, verificationStatus: "cancelled" as const })),
      updatedAt: now
    }))
  })

const lateCompliance: TimerHandler = (payload: { readonly applicationId: string }) =>
  Effect.gen(function*() {
    const store = yield* Store
    const application = yield* store.getForUpdate(Applications, payload.applicationId)
    if (application === undefined || application.status !== "rejected") return
    yield* lateComplianceResult(application, { failureCode: "compliance_denied", resubmittable: false })
  }).pipe(Effect.orDie)

/** The application timers, over the review settings the engine was built with. */
export const applicationTimerHandlers = (settings: ReviewSettingsValue): Record<string, TimerHandler> => {
  const withSettings = (handler: TimerHandler): TimerHandler => (payload) =>
    handler(payload).pipe(Effect.provideService(ReviewSettings, settings))
  return {
    [reviewTimerKind]: withSettings(review),
    [cancelTimerKind]: completeCancel,
    [lateComplianceTimerKind]: lateCompliance
  }
}

// --- organization restrictions (ops) --------------------------------------------------------------------------------

/**
 * Ops restricts the organization in `environments` (both by default, as an operator does; the sandbox's simulate
 * call restricts the sandbox alone). organization.restricted goes out in each environment newly restricted that
 * the organization can use (live only once active), reason never sent; restricting again changes nothing.
 */
export const restrictOrganization = (organizationId: string, environments: ReadonlyArray<Environment> = ["sandbox", "live"]) =>
  Effect.gen(function*() {
    const store = yield* Store
    const organization = yield* store.getForUpdate(Organizations, organizationId)
    if (organization === undefined) return yield* apiError("NOT_FOUND", `No organization ${organizationId}.`)
    const now = toIso(yield* Clock.currentTimeMillis)
    const added = environments.filter((e) => !isRestrictedIn(organization, e))
    if (added.length === 0) return organization
    const next: Organization = { ...organization, restrictedIn: [...(organization.restrictedIn ?? []), ...added] }
    yield* Effect.orDie(store.update(Organizations, next))
    for (const environment of added) {
      if (environment === "live" && organization.status !== "active") continue
      yield* emitEvent({ type: "organization.restricted", organizationId, environment, data: { organizationId, occurredAt: now } })
    }
    return next
  })

/** Ops lifts the organization's restriction in `environments` (both by default). No event: the spec has none. */
export const liftOrganizationRestriction = (organizationId: string, environments: ReadonlyArray<Environment> = ["sandbox", "live"]) =>
  Effect.gen(function*() {
    const store = yield* Store
    const organization = yield* store.getForUpdate(Organizations, organizationId)
    if (organization === undefined) return yield* apiError("NOT_FOUND", `No organization ${organizationId}.`)
    const remaining = (organization.restrictedIn ?? []).filter((e) => !environments.includes(e))
    if (remaining.length === (organization.restrictedIn ?? []).length) return organization
    const next: Organization = { ...organization, restrictedIn: remaining }
    yield* Effect.orDie(store.update(Organizations, next))
    return next
  })

// --- customer restrictions (ops) -------------------------------------------------------------------------------------

/**
 * Ops restricts a customer. `account` restricts it (status restricted, customer.restricted, no reason or type
 * sent); `monitoring` is a restriction that does not emit and does not change the status (the spec: not every
 * restriction type emits). Restricting a restricted customer again changes nothing and emits nothing.
 */
export const restrictCustomer = (caller: Caller, customerId: CustomerId, type: "account" | "monitoring") =>
  Effect.gen(function*() {
    const store = yield* Store
    const found = yield* getCustomer(caller, customerId)
    const customer = (yield* store.getForUpdate(Customers, found.id))!
    const now = toIso(yield* Clock.currentTimeMillis)
    if (type === "monitoring") {
      const next = { ...customer, silentRestrictions: customer.silentRestrictions + 1, updatedAt: now }
      yield* Effect.orDie(store.update(Customers, next))
      return next
    }
    if (customer.status === "restricted") return customer
    const next: Customer = { ...customer, status: "restricted", updatedAt: now }
    yield* Effect.orDie(store.update(Customers, next))
    yield* emitEvent({
      type: "customer.restricted",
      organizationId: customer.organizationId,
      environment: customer.environment,
      data: toWire({ customerId: customer.id, clientReferenceId: customer.clientReferenceId, occurredAt: now })
    })
    return next
  })
