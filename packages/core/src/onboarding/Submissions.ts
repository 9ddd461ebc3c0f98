/**
 * Submissions: the four ways an application is born (the spec's endpoints), each open at once and reviewed on the
 * clock (ApplicationTimers.ts):
 *
 * | call | applicationType | what it checks |
 * |---|---|---|
 * | POST /v2/onboarding | customer_onboarding (business or individual) | the country's requirement set (422 ONBOARDING_NOT_READY, one entry per gap), documents, the house-account rules; reserves the customer id |
 * | POST /v2/customers/{customerId}/updates | customer_update | the customer's type, documents |
 * | POST /v2/customers/{customerId}/features | virtual_account or crypto_wallet | an active customer, the currencies and assets offered, the crypto jurisdiction rule (422, nothing stored, nothing emitted) |
 * | POST /v2/organization/onboarding | organization_onboarding | the organization still onboarding; fills the current draft (Submit) or starts the first application |
 *
 * What is 400 and what is 422, the client references and the house account: docs/onboarding.md.
 */
import { Clock, Effect } from "effect"
import {
  type Application as ApplicationWire,
  type ApplicationType,
  type CustomerId,
  type CustomerUpdateSubmission,
  type ErrorEntry,
  type FeatureSubmission,
  type OnboardingSubmission,
  type OrganizationSubmission,
  type PersonInput,
  toIso
} from "@fos/contract"
import * as ApplicationMachine from "./ApplicationMachine.ts"
import * as Applications from "./Applications.ts"
import * as ApplicationTimers from "./ApplicationTimers.ts"
import type * as Auth from "../tenancy/Auth.ts"
import * as Completeness from "./Completeness.ts"
import * as Customers from "./Customers.ts"
import * as Documents from "./Documents.ts"
import * as IdGenerator from "../kernel/IdGenerator.ts"
import * as Operator from "../tenancy/Operator.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Requirements from "./Requirements.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"

const notReady = (errors: ReadonlyArray<ErrorEntry>) =>
  Problem.apiError("ONBOARDING_NOT_READY", `The submission is incomplete: ${errors.length} requirement(s) are not met; see errors[].`, { errors })

const countryRequirements = (country: string) => {
  const requirements = Requirements.CountryRequirementSets[country]
  return requirements === undefined
    ? Effect.fail(Problem.apiError(
      "APPLICATION_COUNTRY_NOT_SUPPORTED",
      `Onboarding is not offered in ${country}; GET /v2/onboarding/requirements lists what is.`
    ))
    : Effect.succeed(requirements)
}

/** Every document id of a submission, with the pointer of each list, checked together: one error names them all. */
const resolveDocuments = (
  caller: Auth.Caller,
  lists: ReadonlyArray<{ readonly pointer: string; readonly ids: ReadonlyArray<string> | undefined }>,
  customerId: CustomerId | undefined
): Effect.Effect<Map<string, string>, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const types = new Map<string, string>()
    const errors: Array<ErrorEntry> = []
    for (const list of lists) {
      if (list.ids === undefined || list.ids.length === 0) continue
      const found = yield* Effect.result(Documents.require(caller, list.ids, { customerId, pointer: list.pointer }))
      if (found._tag === "Failure") {
        if (found.failure.code !== "DOCUMENT_IDS_NOT_FOUND") return yield* found.failure
        errors.push(...(found.failure.errors ?? []))
      } else for (const document of found.success) types.set(document.id, document.type)
    }
    if (errors.length > 0) {
      return yield* Problem.apiError("DOCUMENT_IDS_NOT_FOUND", "Some document ids do not exist or cannot be used here; see errors[].", { errors })
    }
    return types
  })

const classificationChecks = (
  classification: { readonly legalStructure?: string; readonly primaryIndustry?: string } | undefined,
  country: string
): Effect.Effect<void, Problem.ApiError> => {
  const requirements = Requirements.CountryRequirementSets[country]!
  const structure = classification?.legalStructure
  if (structure !== undefined && !requirements.legalStructures.some((s) => s.value === structure)) {
    return Effect.fail(Problem.apiError(
      "INVALID_LEGAL_STRUCTURE",
      `companyClassification.legalStructure is not among the values offered for ${country}; GET /v2/onboarding/requirements?country=${country} lists them.`
    ))
  }
  const industry = classification?.primaryIndustry
  const problem = industry === undefined ? undefined : Requirements.industryProblem(industry, country)
  if (problem !== undefined) {
    return Effect.fail(Problem.apiError(
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

const personOf = (p: PersonInput): Applications.Person => ({
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
  Problem.apiError("DUPLICATE_CLIENT_REFERENCE_ID", "This clientReferenceId is already used by another application of this type or by a customer.")

/** Inserts a new application with its review timer; unique-key clashes become the spec's problems. */
const insertApplication = (application: Applications.Application): Effect.Effect<void, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    yield* Applications.add(application).pipe(
      Effect.catchTag("UniqueViolation", (e: Store.UniqueViolation) =>
        Effect.fail(e.unique === "houseAccount"
          ? Problem.apiError("CONFLICT", "This organization already has a house account (or one under review) in this environment.")
          : duplicateReference()))
    )
    if (application.status === "open") yield* ApplicationTimers.scheduleReview(application)
  })

const blankApplication = (caller: Auth.Caller, type: ApplicationType, now: string): Omit<Applications.Application, "id"> => ({
  organizationId: caller.organization.id,
  environment: caller.environment,
  type,
  status: ApplicationMachine.initialStatus.submission,
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

/**
 * `POST /v2/onboarding`: a customer_onboarding application, open, with the customer id it reserves. Its refusals come
 * in a fixed order, the precedence the spec's error table implies (docs/onboarding.md, "The order of a submission's
 * refusals"); a request that breaks two rules gets the first:
 * 1. the request alone, before anything is read: its members for its customer type and its persons' references (400
 *    VALIDATION_ERROR), the country (409 APPLICATION_COUNTRY_NOT_SUPPORTED) and then its classification, whose legal
 *    structures are the country's (400 INVALID_LEGAL_STRUCTURE, INVALID_POLICY_SUBJECT), the house-account rules (409
 *    HOUSE_ACCOUNT_BUSINESS_ONLY, SANDBOX_HOUSE_ACCOUNT_RESERVED_REFERENCE);
 * 2. existence: every document id (400 DOCUMENT_IDS_NOT_FOUND);
 * 3. the country's requirements, which the documents' types fill (422 ONBOARDING_NOT_READY);
 * 4. state: the clientReferenceId held by a customer or an application (409 DUPLICATE_CLIENT_REFERENCE_ID), then the
 *    organization's house account held (409 CONFLICT), when the application is stored.
 */
export const submitOnboarding = (caller: Auth.Caller, body: OnboardingSubmission): Effect.Effect<ApplicationWire, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const customerType = body.customerType ?? "business"
    if (customerType === "business" && body.individual !== undefined) {
      return yield* Problem.invalidRequest([{ pointer: "/individual", detail: "is only for customerType individual" }])
    }
    if (customerType === "individual") {
      const wrong = (["businessInfo", "ownership", "companyClassification"] as const).filter((k) => body[k] !== undefined)
      if (wrong.length > 0) return yield* Problem.invalidRequest(wrong.map((k) => ({ pointer: `/${k}`, detail: "is only for customerType business" })))
    }
    const duplicates = duplicateReferences(body.ownership?.persons ?? [])
    if (duplicates.length > 0) return yield* Problem.invalidRequest(duplicates)
    const requirements = yield* countryRequirements(body.country)
    yield* classificationChecks(body.companyClassification, body.country)
    if (body.houseAccount === true && customerType !== "business") {
      return yield* Problem.apiError("HOUSE_ACCOUNT_BUSINESS_ONLY", "Only a business customer can be marked as the house account.")
    }
    if (
      caller.environment === "sandbox" && body.clientReferenceId?.trim().toLowerCase() === sandboxHouseAccountReference &&
      body.houseAccount !== true
    ) {
      return yield* Problem.apiError(
        "SANDBOX_HOUSE_ACCOUNT_RESERVED_REFERENCE",
        `In the sandbox, clientReferenceId "${sandboxHouseAccountReference}" is reserved for the house account; mark the submission houseAccount: true or choose another reference.`
      )
    }
    const documentTypes = yield* resolveDocuments(caller, documentLists(body), undefined)
    const typeOf = (id: string) => documentTypes.get(id)
    const gaps = customerType === "business" ? Completeness.kybGaps(body, requirements, typeOf) : Completeness.individualGaps(body, requirements, typeOf)
    if (gaps.length > 0) return yield* notReady(gaps)
    if (body.clientReferenceId !== undefined) {
      const taken = yield* store.findUnique(Customers.Customers, "clientReferenceId", `${Tenancy.scopeOf(caller.organization.id, caller.environment)}/${body.clientReferenceId}`)
      if (taken !== undefined) return yield* duplicateReference()
    }
    const now = toIso(yield* Clock.currentTimeMillis)
    const customerId = yield* IdGenerator.newId("cus")
    const persons = customerType === "business"
      ? (body.ownership?.persons ?? []).map(personOf)
      : [personOf({ ...body.individual!, referenceId: individualReferenceId, roles: ["owner"] })].map((p) => ({ ...p, roles: ["individual" as const] }))
    const application: Applications.Application = {
      ...blankApplication(caller, "customer_onboarding", now),
      id: yield* IdGenerator.newId("app"),
      customerId,
      customerType,
      country: body.country,
      clientReferenceId: body.clientReferenceId,
      houseAccount: body.houseAccount ?? false,
      persons,
      submission: body
    }
    yield* insertApplication(application)
    yield* Customers.reserve({ customerId, scope: Applications.applicationScope(application), applicationId: application.id })
    return Applications.toWire(application)
  })

/**
 * `POST /v2/customers/{customerId}/updates`: a customer_update application. Its refusals come in a fixed order, the
 * precedence the spec's error table implies (docs/onboarding.md, "The order of a submission's refusals"); a request
 * that breaks two rules gets the first:
 * 1. the request alone, before anything is read: its persons' references (400 VALIDATION_ERROR);
 * 2. existence: the customer (404 CUSTOMER_NOT_FOUND; 422 CUSTOMER_NOT_ONBOARDED while its onboarding is not approved);
 * 3. the members the customer's type rules out (400 VALIDATION_ERROR), which need the customer;
 * 4. existence and ownership of every document id: the organization's, or this customer's (400
 *    DOCUMENT_IDS_NOT_FOUND);
 * 5. state: the clientReferenceId held by another customer_update application (409 DUPLICATE_CLIENT_REFERENCE_ID),
 *    when the application is stored.
 */
export const submitCustomerUpdate = (
  caller: Auth.Caller,
  customerId: CustomerId,
  body: CustomerUpdateSubmission
): Effect.Effect<ApplicationWire, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const duplicates = duplicateReferences(body.ownership?.persons ?? [])
    if (duplicates.length > 0) return yield* Problem.invalidRequest(duplicates)
    const customer = yield* Customers.get(caller, customerId)
    if (customer.type === "business" && body.individual !== undefined) {
      return yield* Problem.invalidRequest([{ pointer: "/individual", detail: "is only for an individual customer" }])
    }
    if (customer.type === "individual" && (body.businessInfo !== undefined || body.ownership !== undefined)) {
      return yield* Problem.invalidRequest([{ pointer: body.businessInfo !== undefined ? "/businessInfo" : "/ownership", detail: "is only for a business customer" }])
    }
    yield* resolveDocuments(caller, documentLists(body), customer.id)
    const now = toIso(yield* Clock.currentTimeMillis)
    const application: Applications.Application = {
      ...blankApplication(caller, "customer_update", now),
      id: yield* IdGenerator.newId("app"),
      customerId: customer.id,
      customerType: customer.type,
      country: customer.country,
      clientReferenceId: body.clientReferenceId,
      persons: (body.ownership?.persons ?? []).map(personOf),
      submission: body
    }
    yield* insertApplication(application)
    return Applications.toWire(application)
  })

/**
 * `POST /v2/customers/{customerId}/features`: a virtual_account or crypto_wallet application. Its refusals come in a
 * fixed order, the precedence the spec's error table implies (docs/onboarding.md, "The order of a submission's
 * refusals"); a request that breaks two rules gets the first:
 * 1. the request alone, before anything is read: a chain on a virtual account, a crypto asset or chain not offered
 *    (400 VALIDATION_ERROR);
 * 2. existence: the customer (404 CUSTOMER_NOT_FOUND; 422 CUSTOMER_NOT_ONBOARDED while its onboarding is not approved);
 * 3. state: the customer active, not restricted (422 UNPROCESSABLE_ENTITY);
 * 4. what the customer is offered: a virtual account's currency for its country (400 VALIDATION_ERROR, whose detail
 *    names the customer's currencies, or 422 NO_ELIGIBLE_PROVIDER for a currency fos holds elsewhere), crypto wallets
 *    in its jurisdiction (422 UNPROCESSABLE_ENTITY);
 * 5. the clientReferenceId held by another application of the type (409 DUPLICATE_CLIENT_REFERENCE_ID), when the
 *    application is stored.
 */
export const submitFeatureApplication = (
  caller: Auth.Caller,
  customerId: CustomerId,
  body: FeatureSubmission
): Effect.Effect<ApplicationWire, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    if (body.type === "virtual_account") {
      if (body.asset.chain !== undefined) return yield* Problem.invalidRequest([{ pointer: "/asset/chain", detail: "must be omitted for a virtual account" }])
    } else {
      const offered = Requirements.cryptoWalletAssets.find((a) => a.code === body.asset.code)
      if (offered === undefined) {
        return yield* Problem.invalidRequest([{ pointer: "/asset/code", detail: `must be one of ${Requirements.cryptoWalletAssets.map((a) => a.code).join(", ")}` }])
      }
      if (body.asset.chain === undefined || !offered.chains.includes(body.asset.chain)) {
        return yield* Problem.invalidRequest([{ pointer: "/asset/chain", detail: `must be one of ${offered.chains.join(", ")} for ${offered.code}` }])
      }
    }
    const customer = yield* Customers.get(caller, customerId)
    if (customer.status !== "active") {
      return yield* Problem.apiError("UNPROCESSABLE_ENTITY", "The customer is restricted; new features cannot be requested.")
    }
    if (body.type === "virtual_account") {
      const allowed = Requirements.virtualAccountCurrencies(customer.country)
      if (!allowed.includes(body.asset.code)) {
        // A currency fos holds accounts in, but no provider does for this customer's country: the spec's
        // NO_ELIGIBLE_PROVIDER (a virtual account problem). A currency no virtual account collects is a bad input.
        return yield* (Requirements.virtualAccountCurrencyOffered(body.asset.code)
          ? Problem.apiError(
            "NO_ELIGIBLE_PROVIDER",
            `No provider holds ${body.asset.code} virtual accounts for a customer in ${customer.country}; this customer's currencies are ${allowed.join(", ")}.`
          )
          : Problem.invalidRequest([{ pointer: "/asset/code", detail: `must be one of ${allowed.join(", ")} for this customer` }]))
      }
    } else if (!Requirements.cryptoEligible(customer)) {
      // Refused before anything is written or emitted: an ineligible jurisdiction is a 422 with no event.
      return yield* Problem.apiError("UNPROCESSABLE_ENTITY", "Crypto wallets are not offered in the customer's jurisdiction.")
    }
    const now = toIso(yield* Clock.currentTimeMillis)
    const application: Applications.Application = {
      ...blankApplication(caller, body.type, now),
      id: yield* IdGenerator.newId("app"),
      customerId: customer.id,
      customerType: customer.type,
      country: customer.country,
      clientReferenceId: body.clientReferenceId,
      asset: body.asset,
      submission: body
    }
    yield* insertApplication(application)
    return Applications.toWire(application)
  })

/**
 * `POST /v2/organization/onboarding`: submits the organization's own KYB. It fills the current draft (one opens
 * after a resubmittable rejection) or starts the first application; it is refused while one is open, after a final
 * rejection, and once the organization is active. Its refusals come in a fixed order, the precedence the spec's error
 * table implies (docs/onboarding.md, "The order of a submission's refusals"); a request that breaks two rules gets
 * the first:
 * 1. the request alone, before anything is read: its persons' references (400 VALIDATION_ERROR), the country (409
 *    APPLICATION_COUNTRY_NOT_SUPPORTED) and then its classification (400 INVALID_LEGAL_STRUCTURE,
 *    INVALID_POLICY_SUBJECT);
 * 2. existence: every document id, of the organization's sandbox (400 DOCUMENT_IDS_NOT_FOUND);
 * 3. the country's requirements, which the documents' types fill (422 ONBOARDING_NOT_READY);
 * 4. state, last: the organization still onboarding, its current application neither under review nor finally
 *    rejected (409 APPLICATION_INVALID_STATUS).
 */
export const submitOrganizationOnboarding = (caller: Auth.Caller, body: OrganizationSubmission): Effect.Effect<ApplicationWire, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const duplicates = duplicateReferences(body.ownership?.persons ?? [])
    if (duplicates.length > 0) return yield* Problem.invalidRequest(duplicates)
    const requirements = yield* countryRequirements(body.country)
    yield* classificationChecks(body.companyClassification, body.country)
    const sandboxCaller: Auth.Caller = { ...caller, environment: "sandbox" }
    const documentTypes = yield* resolveDocuments(sandboxCaller, documentLists(body), undefined)
    const gaps = Completeness.kybGaps(body, requirements, (id) => documentTypes.get(id))
    if (gaps.length > 0) return yield* notReady(gaps)
    const organization = yield* Operator.getOrganization(caller.organization.id)
    if (organization.status !== "onboarding") {
      return yield* Problem.apiError("APPLICATION_INVALID_STATUS", `The organization is ${organization.status}; there is nothing to onboard.`)
    }
    const current = yield* Applications.currentOrganization(organization.id)
    if (current !== undefined && current.status !== "draft") {
      if (current.status === "open") return yield* Problem.apiError("APPLICATION_INVALID_STATUS", `Application ${current.id} is still under review.`)
      if (current.status === "rejected" && current.resubmittable === false) {
        return yield* Problem.apiError("APPLICATION_INVALID_STATUS", `Application ${current.id} was rejected and cannot be resubmitted; contact support.`)
      }
    }
    const now = toIso(yield* Clock.currentTimeMillis)
    const filled = {
      country: body.country,
      persons: (body.ownership?.persons ?? []).map(personOf),
      submission: body,
      updatedAt: now
    }
    if (current?.status === "draft") {
      const submitted: Applications.Application = { ...Applications.moved(current, yield* Applications.move(current, { _tag: "Submit" }), now), ...filled }
      yield* Applications.saveMoved(current, submitted)
      yield* ApplicationTimers.scheduleReview(submitted)
      return Applications.toWire(submitted)
    }
    const application: Applications.Application = {
      ...blankApplication(sandboxCaller, "organization_onboarding", now),
      id: yield* IdGenerator.newId("app"),
      ordinal: (current?.ordinal ?? 0) + 1,
      ...filled
    }
    yield* insertApplication(application)
    return Applications.toWire(application)
  })
