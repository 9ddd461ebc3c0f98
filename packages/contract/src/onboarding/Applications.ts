/**
 * Applications: the types, statuses and failure codes of the spec's application resource, the resource itself
 * with its persons, identity-verification links and the sensitive person fields read one at a time.
 */
import { Schema } from "effect"
import { AssetCode, Chain } from "../kernel/Money.ts"

export const ApplicationTypes = [
  "customer_onboarding",
  "organization_onboarding",
  "virtual_account",
  "crypto_wallet",
  "customer_update"
] as const
export type ApplicationType = typeof ApplicationTypes[number]

export const ApplicationStatuses = ["draft", "open", "approved", "rejected", "cancelled"] as const
export type ApplicationStatus = typeof ApplicationStatuses[number]

export const ApplicationFailureCodes = ["rejected_by_ops", "compliance_denied"] as const
export type ApplicationFailureCode = typeof ApplicationFailureCodes[number]

export const ApplicationSorts = ["createdAt", "updatedAt"] as const

/** The sandbox rejection categories of KYB applications (`POST /simulate/applications/{id}/decision`). */
export const RejectionCategories = ["documents", "ownership", "business_information", "compliance", "prohibited_business"] as const
export type RejectionCategory = typeof RejectionCategories[number]

/** The person fields never shown with the application; each is read on its own. */
export const SensitivePersonFields = ["dateOfBirth", "taxId"] as const
export type SensitivePersonField = typeof SensitivePersonFields[number]

export const CustomerTypes = ["business", "individual"] as const

export const PersonVerificationStatuses = ["in_progress", "completed", "failed", "cancelled"] as const

export const ApplicationPerson = Schema.Struct({
  referenceId: Schema.String,
  roles: Schema.Array(Schema.Literals(["owner", "controller", "individual"])),
  firstName: Schema.optionalKey(Schema.String),
  lastName: Schema.optionalKey(Schema.String),
  email: Schema.optionalKey(Schema.String),
  ownershipPercent: Schema.optionalKey(Schema.Number),
  verificationStatus: Schema.Literals(PersonVerificationStatuses)
}).annotate({ identifier: "ApplicationPerson", description: "A person on an application (an owner, a director, a controller) and their verification." })
export type ApplicationPerson = typeof ApplicationPerson.Type

export const Application = Schema.Struct({
  applicationId: Schema.String,
  applicationType: Schema.Literals(ApplicationTypes),
  status: Schema.Literals(ApplicationStatuses),
  customerId: Schema.optionalKey(Schema.String),
  customerType: Schema.optionalKey(Schema.Literals(CustomerTypes)),
  country: Schema.optionalKey(Schema.String),
  clientReferenceId: Schema.optionalKey(Schema.String),
  houseAccount: Schema.optionalKey(Schema.Boolean),
  asset: Schema.optionalKey(Schema.Struct({ code: AssetCode, chain: Schema.optionalKey(Chain) })),
  persons: Schema.Array(ApplicationPerson),
  failureCode: Schema.optionalKey(Schema.Literals(ApplicationFailureCodes)),
  failureMessage: Schema.optionalKey(Schema.String),
  resubmittable: Schema.optionalKey(Schema.Boolean),
  cancelRequestedAt: Schema.optionalKey(Schema.String),
  decidedAt: Schema.optionalKey(Schema.String),
  createdAt: Schema.String,
  updatedAt: Schema.String
}).annotate({ identifier: "Application", description: "An onboarding or feature application: its type, status, people and decision." })
export type Application = typeof Application.Type

export const IdvLink = Schema.Struct({
  applicationId: Schema.String,
  referenceId: Schema.String,
  url: Schema.String,
  shortUrl: Schema.String,
  expiresAt: Schema.String
}).annotate({ identifier: "IdvLink", description: "An identity-verification link for a person, and when it expires." })
export type IdvLink = typeof IdvLink.Type

export const PersonField = Schema.Struct({
  referenceId: Schema.String,
  field: Schema.Literals(SensitivePersonFields),
  value: Schema.String
}).annotate({ identifier: "PersonField", description: "One field of a person on an application." })
export type PersonField = typeof PersonField.Type
