/**
 * What onboarding asks for: `GET /v2/onboarding/requirements` (per country) and
 * `GET /v2/customers/{customerId}/features/requirements` (per feature), and the feature application body.
 */
import { Schema } from "effect"
import { AssetCode, Chain } from "../kernel/Money.ts"
import { NonBlankString } from "../kernel/Primitives.ts"

/** A field a country requires, by its JSON Pointer in the submission body. */
export const FieldRequirement = Schema.Struct({
  pointer: Schema.String,
  description: Schema.String,
  /** A pattern the value must match, when the country fixes a format (tax ids). */
  format: Schema.optionalKey(Schema.Struct({ pattern: Schema.String, example: Schema.String }))
})
export type FieldRequirement = typeof FieldRequirement.Type

export const DocumentRequirement = Schema.Struct({ type: Schema.String, description: Schema.String })
export type DocumentRequirement = typeof DocumentRequirement.Type

/** A document slot of each person: one document of any of `acceptedTypes`. */
export const PersonDocumentSlot = Schema.Struct({
  slot: Schema.Literals(["identity", "address"]),
  acceptedTypes: Schema.Array(Schema.String),
  description: Schema.String
})
export type PersonDocumentSlot = typeof PersonDocumentSlot.Type

export const LegalStructure = Schema.Struct({ value: Schema.String, label: Schema.String })
export type LegalStructure = typeof LegalStructure.Type

export const OnboardingRequirements = Schema.Struct({
  country: Schema.String,
  legalStructures: Schema.Array(LegalStructure),
  classifications: Schema.Struct({ primaryIndustry: Schema.Array(Schema.Struct({ key: Schema.String, label: Schema.String })) }),
  business: Schema.Struct({
    fields: Schema.Array(FieldRequirement),
    documents: Schema.Array(DocumentRequirement)
  }),
  persons: Schema.Struct({
    ownerThresholdPercent: Schema.Number,
    minimumControllers: Schema.Number,
    fields: Schema.Array(FieldRequirement),
    documents: Schema.Array(PersonDocumentSlot)
  }),
  individual: Schema.Struct({ fields: Schema.Array(FieldRequirement), documents: Schema.Array(PersonDocumentSlot) })
}).annotate({ identifier: "OnboardingRequirements", description: "What onboarding needs for a country and customer type: fields, documents, people, legal structures and classification keys." })
export type OnboardingRequirements = typeof OnboardingRequirements.Type

export const FeatureTypes = ["virtual_account", "crypto_wallet"] as const
export type FeatureType = typeof FeatureTypes[number]

/** One entry of a feature's requirements: a pointer into the application body and the values it accepts. */
export const FeatureRequirement = Schema.Struct({
  pointer: Schema.String,
  required: Schema.Boolean,
  description: Schema.String,
  allowedValues: Schema.optionalKey(Schema.Array(Schema.String))
})
export type FeatureRequirement = typeof FeatureRequirement.Type

export const FeatureRequirements = Schema.Struct({
  type: Schema.Literals(FeatureTypes),
  requirements: Schema.Array(FeatureRequirement)
}).annotate({ identifier: "FeatureRequirements", description: "What a feature needs from a customer: fields, documents and people." })
export type FeatureRequirements = typeof FeatureRequirements.Type

/** `POST /v2/customers/{customerId}/features`: a virtual_account or crypto_wallet application. */
export const FeatureSubmission = Schema.Struct({
  type: Schema.Literals(FeatureTypes),
  asset: Schema.Struct({ code: AssetCode, chain: Schema.optionalKey(Chain) }),
  clientReferenceId: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(128, { fosDetail: "must be at most 128 characters" })))
}).annotate({ identifier: "FeatureSubmission", description: "A feature application (crypto_wallet, virtual_account, ...) with what the feature's requirements ask." })
export type FeatureSubmission = typeof FeatureSubmission.Type
