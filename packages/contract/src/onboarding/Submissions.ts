/**
 * The onboarding submissions: what `POST /v2/onboarding`, `POST /v2/organization/onboarding` and
 * `POST /v2/customers/{customerId}/updates` take. A body that does not match is 400 VALIDATION_ERROR; whether a
 * well-formed submission is complete for its country is the engine's check (422 ONBOARDING_NOT_READY).
 */
import { Schema } from "effect"
import "../kernel/Annotations.ts"
import { Address, Country } from "../kernel/Geo.ts"
import { DocumentId } from "../kernel/Ids.ts"
import { NonBlankString } from "../kernel/Primitives.ts"

const isDate = (s: string): boolean => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s)
  if (m === null) return false
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const probe = new Date(Date.UTC(y, mo - 1, d))
  return probe.getUTCFullYear() === y && probe.getUTCMonth() === mo - 1 && probe.getUTCDate() === d
}

/** A calendar date, `YYYY-MM-DD`. */
export const CalendarDate = Schema.String.check(Schema.makeFilter(isDate, {
  fosDetail: "must be a date (YYYY-MM-DD)",
  // What the OpenAPI document says of it, so that a generated client knows it for a date.
  toJsonSchema: () => ({ format: "date", examples: ["1990-05-17"] })
}))

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
}).annotate({ identifier: "OnboardingSubmission", description: "A customer's onboarding: its type and country, business or personal facts, people and document ids, as GET /v2/onboarding/requirements asks for them." })
export type OnboardingSubmission = typeof OnboardingSubmission.Type

/** The organization's own KYB submission (`POST /v2/organization/onboarding`). */
export const OrganizationSubmission = Schema.Struct(kybFields).annotate({ identifier: "OrganizationOnboardingSubmission", description: "The organization's own onboarding: its business facts, people and documents." })
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
)).annotate({ identifier: "CustomerUpdateSubmission", description: "Changed onboarding facts of an approved customer." })
export type CustomerUpdateSubmission = typeof CustomerUpdateSubmission.Type
