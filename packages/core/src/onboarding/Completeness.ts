/**
 * The completeness check of an onboarding submission against the country's requirement set: what a 422
 * ONBOARDING_NOT_READY reports, one `errors[]` entry per gap, each with a pointer, a detail and a category of
 * field, document or individual.
 *
 * Shape problems (a wrong type, a malformed date or country) are 400, decided by the submission schemas of
 * @fos/contract; gaps the country's requirements name (a missing tax id, a missing document, an owner without
 * identity) are 422, so an integration can build its form from `GET /v2/onboarding/requirements` and learn exactly
 * what is left.
 */
import type {
  BusinessInfo,
  ErrorEntry,
  FieldRequirement,
  IndividualInput,
  PersonDocumentSlot,
  PersonInput
} from "@fos/contract"
import { withArticle } from "@fos/contract"
import * as Requirements from "./Requirements.ts"

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
    else if (typeof value === "string" && !Requirements.matchesFormat(country, requirement, value)) {
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
      detail: `needs ${withArticle(slot.slot)} document (one of ${slot.acceptedTypes.join(", ")})`,
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
  requirements: Requirements.CountryRequirements,
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
      gaps.push({ pointer: "/documentIds", detail: `needs ${withArticle(document.type)} document: ${document.description}`, category: "document" })
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
  requirements: Requirements.CountryRequirements,
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
