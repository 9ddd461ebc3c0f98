/**
 * The onboarding submission: its schema (what a 400 VALIDATION_ERROR rejects) and its completeness check against
 * the country's requirement set (what a 422 ONBOARDING_NOT_READY reports, one `errors[]` entry per gap, each with a
 * pointer, a detail and a category of field, document or individual).
 *
 * Shape problems (a wrong type, a malformed date or country) are 400; gaps the country's requirements name (a
 * missing tax id, a missing document, an owner without identity) are 422, so an integration can build its form
 * from `GET /v2/onboarding/requirements` and learn exactly what is left.
 */
import { Schema } from "effect"
import { Address, Country } from "./Geo.ts"
import { DocumentId } from "./Ids.ts"
import type { ErrorEntry } from "./Problem.ts"
import {
  type CountryRequirements,
  type FieldRequirement,
  matchesFormat,
  type PersonDocumentSlot
} from "./Requirements.ts"
import { NonBlankString } from "./Wire.ts"

const isDate = (s: string): boolean => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s)
  if (m === null) return false
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const probe = new Date(Date.UTC(y, mo - 1, d))
  return probe.getUTCFullYear() === y && probe.getUTCMonth() === mo - 1 && probe.getUTCDate() === d
}

/** A calendar date, `YYYY-MM-DD`. */
export const CalendarDate = Schema.String.check(Schema.makeFilter(isDate, { fosDetail: "must be a date (YYYY-MM-DD)" }))

const Email = Schema.String.check(Schema.isPattern(/^[^\s@]{1,64}@[^\s@]{1,255}\.[^\s@]{2,63}$/, { fosDetail: "must be an email address" }))

const Text = (max: number) =>
  NonBlankString.check(Schema.isMaxLength(max, { fosDetail: `must be at most ${max} characters` }))

/** Your reference for an application or customer: unique within its resource type. */
export const ClientReferenceId = NonBlankString.check(
  Schema.isMaxLength(128, { fosDetail: "must be at most 128 characters" })
)

const ReferenceId = Schema.String.check(
  Schema.isPattern(/^[A-Za-z0-9_-]{1,64}$/, { fosDetail: "must be 1 to 64 letters, digits, _ or -" })
)

const DocumentIds = (max: number) =>
  Schema.Array(DocumentId).check(Schema.isMaxLength(max, { fosDetail: `must list at most ${max} documents` }))

/** The personal details shared by an owner or controller and by an individual customer. */
const personalFields = {
  firstName: Schema.optionalKey(Text(100)),
  lastName: Schema.optionalKey(Text(100)),
  dateOfBirth: Schema.optionalKey(CalendarDate),
  nationality: Schema.optionalKey(Country),
  email: Schema.optionalKey(Email),
  address: Schema.optionalKey(Address),
  taxId: Schema.optionalKey(Text(64)),
  documentIds: Schema.optionalKey(DocumentIds(10))
}

export const PersonRoles = ["owner", "controller"] as const

export const PersonInput = Schema.Struct({
  referenceId: ReferenceId,
  roles: Schema.Array(Schema.Literals(PersonRoles)).check(Schema.isMinLength(1, { fosDetail: "must list at least one role" })),
  ownershipPercent: Schema.optionalKey(Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 100 }, {
    fosDetail: "must be a number from 0 to 100"
  }))),
  ...personalFields
})
export type PersonInput = typeof PersonInput.Type

export const IndividualInput = Schema.Struct(personalFields)
export type IndividualInput = typeof IndividualInput.Type

export const BusinessInfo = Schema.Struct({
  legalName: Schema.optionalKey(Text(200)),
  tradingName: Schema.optionalKey(Text(200)),
  taxId: Schema.optionalKey(Text(64)),
  registrationNumber: Schema.optionalKey(Text(64)),
  incorporationDate: Schema.optionalKey(CalendarDate),
  registeredAddress: Schema.optionalKey(Address),
  website: Schema.optionalKey(Text(2048)),
  email: Schema.optionalKey(Email),
  phone: Schema.optionalKey(Text(32))
})
export type BusinessInfo = typeof BusinessInfo.Type

export const CompanyClassification = Schema.Struct({
  legalStructure: Schema.optionalKey(Text(64)),
  primaryIndustry: Schema.optionalKey(Text(64))
})

const Ownership = Schema.Struct({
  persons: Schema.Array(PersonInput).check(Schema.isMaxLength(25, { fosDetail: "must list at most 25 persons" }))
})

/** Fields of a business's KYB submission, shared by customer and organization onboarding. */
const kybFields = {
  country: Country,
  businessInfo: Schema.optionalKey(BusinessInfo),
  documentIds: Schema.optionalKey(DocumentIds(50)),
  ownership: Schema.optionalKey(Ownership),
  companyClassification: Schema.optionalKey(CompanyClassification)
}

/** `POST /v2/onboarding`. */
export const OnboardingSubmission = Schema.Struct({
  customerType: Schema.optionalKey(Schema.Literals(["business", "individual"])),
  ...kybFields,
  individual: Schema.optionalKey(IndividualInput),
  clientReferenceId: Schema.optionalKey(ClientReferenceId),
  houseAccount: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "OnboardingSubmission" })
export type OnboardingSubmission = typeof OnboardingSubmission.Type

/** The organization's own KYB submission (`POST /v2/organization/onboarding`). */
export const OrganizationSubmission = Schema.Struct(kybFields).annotate({ identifier: "OrganizationOnboardingSubmission" })
export type OrganizationSubmission = typeof OrganizationSubmission.Type

/** `POST /v2/customers/{customerId}/updates`: the changed parts only, at least one. */
export const CustomerUpdateSubmission = Schema.Struct({
  businessInfo: Schema.optionalKey(BusinessInfo),
  individual: Schema.optionalKey(IndividualInput),
  documentIds: Schema.optionalKey(DocumentIds(50)),
  ownership: Schema.optionalKey(Ownership),
  clientReferenceId: Schema.optionalKey(ClientReferenceId)
}).check(Schema.makeFilter((u) =>
  u.businessInfo !== undefined || u.individual !== undefined || u.documentIds !== undefined || u.ownership !== undefined
    ? undefined
    : "must change at least one of businessInfo, individual, documentIds or ownership",
  { fosDetail: "must change at least one of businessInfo, individual, documentIds or ownership" }
)).annotate({ identifier: "CustomerUpdateSubmission" })
export type CustomerUpdateSubmission = typeof CustomerUpdateSubmission.Type

// --- completeness -------------------------------------------------------------------------------------------------

/** The value at a JSON pointer of `root`, or undefined. */
const at = (root: unknown, pointer: string): unknown => {
  let value: unknown = root
  for (const token of pointer.split("/").slice(1)) {
    if (value === null || typeof value !== "object") return undefined
    value = (value as Record<string, unknown>)[token]
  }
  return value
}

const missing = (value: unknown) => value === undefined || (typeof value === "string" && value.trim() === "")

/** What a document id resolved to: its type, for slot matching. */
export type DocumentTypeOf = (id: string) => string | undefined

const fieldGaps = (
  country: string,
  root: unknown,
  base: string,
  fields: ReadonlyArray<FieldRequirement>,
  category: "field" | "individual"
): Array<ErrorEntry> => {
  const gaps: Array<ErrorEntry> = []
  for (const requirement of fields) {
    const value = at(root, requirement.pointer)
    const pointer = base + requirement.pointer
    if (missing(value)) gaps.push({ pointer, detail: `is required in ${country}: ${requirement.description}`, category })
    else if (typeof value === "string" && !matchesFormat(country, requirement, value)) {
      gaps.push({ pointer, detail: `does not match the ${country} format (for example ${requirement.format!.example})`, category })
    }
  }
  return gaps
}

const slotGaps = (
  ids: ReadonlyArray<string> | undefined,
  slots: ReadonlyArray<PersonDocumentSlot>,
  typeOf: DocumentTypeOf,
  pointer: string
): Array<ErrorEntry> => {
  const types = new Set((ids ?? []).map(typeOf))
  return slots
    .filter((slot) => !slot.acceptedTypes.some((t) => types.has(t)))
    .map((slot) => ({
      pointer,
      detail: `needs a ${slot.slot} document (one of ${slot.acceptedTypes.join(", ")})`,
      category: "document" as const
    }))
}

/** The gaps of a business (KYB) submission against its country's requirements; empty when it is complete. */
export const kybGaps = (
  submission: {
    readonly businessInfo?: BusinessInfo
    readonly documentIds?: ReadonlyArray<string>
    readonly ownership?: { readonly persons: ReadonlyArray<PersonInput> }
    readonly companyClassification?: { readonly legalStructure?: string; readonly primaryIndustry?: string }
  },
  requirements: CountryRequirements,
  typeOf: DocumentTypeOf
): ReadonlyArray<ErrorEntry> => {
  const { country } = requirements
  const gaps: Array<ErrorEntry> = fieldGaps(country, submission, "", requirements.business, "field")
  for (const key of ["legalStructure", "primaryIndustry"] as const) {
    if (missing(submission.companyClassification?.[key])) {
      gaps.push({ pointer: `/companyClassification/${key}`, detail: `is required in ${country}`, category: "field" })
    }
  }
  const companyTypes = new Set((submission.documentIds ?? []).map(typeOf))
  for (const document of requirements.documents) {
    if (!companyTypes.has(document.type)) {
      gaps.push({ pointer: "/documentIds", detail: `needs a ${document.type} document: ${document.description}`, category: "document" })
    }
  }
  const persons = submission.ownership?.persons ?? []
  const rules = requirements.persons
  const controllers = persons.filter((p) => p.roles.includes("controller")).length
  if (controllers < rules.minimumControllers) {
    gaps.push({
      pointer: "/ownership/persons",
      detail: `must list at least ${rules.minimumControllers} controller (a director or other person with significant control)`,
      category: "individual"
    })
  }
  const totalOwnership = persons.reduce((sum, p) => sum + (p.ownershipPercent ?? 0), 0)
  if (totalOwnership > 100) {
    gaps.push({ pointer: "/ownership/persons", detail: "ownership percentages add up to more than 100", category: "individual" })
  }
  persons.forEach((person, i) => {
    const base = `/ownership/persons/${i}`
    const isOwner = person.roles.includes("owner")
    if (isOwner && person.ownershipPercent === undefined) {
      gaps.push({ pointer: `${base}/ownershipPercent`, detail: "is required for an owner", category: "individual" })
    }
    // Owners under the threshold are listed but not verified; controllers always are.
    const verified = person.roles.includes("controller") || (isOwner && (person.ownershipPercent ?? 0) >= rules.ownerThresholdPercent)
    if (!verified) return
    gaps.push(...fieldGaps(country, person, base, rules.fields, "individual"))
    gaps.push(...slotGaps(person.documentIds, rules.documents, typeOf, `${base}/documentIds`))
  })
  return gaps
}

/** The gaps of an individual's submission. */
export const individualGaps = (
  submission: { readonly individual?: IndividualInput; readonly documentIds?: ReadonlyArray<string> },
  requirements: CountryRequirements,
  typeOf: DocumentTypeOf
): ReadonlyArray<ErrorEntry> => {
  if (submission.individual === undefined) {
    return [{ pointer: "/individual", detail: "is required for an individual customer", category: "individual" }]
  }
  const ids = [...(submission.documentIds ?? []), ...(submission.individual.documentIds ?? [])]
  return [
    ...fieldGaps(requirements.country, submission.individual, "/individual", requirements.individual.fields, "individual"),
    ...slotGaps(ids, requirements.individual.documents, typeOf, "/individual/documentIds")
  ]
}
