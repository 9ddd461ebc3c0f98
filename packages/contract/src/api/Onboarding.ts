import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Country } from "../kernel/Geo.ts"
import { Application } from "../onboarding/Applications.ts"
import { OnboardingRequirements } from "../onboarding/Requirements.ts"
import { OnboardingSubmission, OrganizationSubmission } from "../onboarding/Submissions.ts"
import { common, Idempotency, OpenWhenRestricted, problem, RateBucket, withBody } from "./Policies.ts"
import { documented, ErrorCodes } from "./OpenApiDocument.ts"

export const Onboarding = HttpApiGroup.make("onboarding")
  .add(HttpApiEndpoint.get("requirements", "/v2/onboarding/requirements", {
    query: Schema.Struct({ country: Country }),
    success: OnboardingRequirements,
    error: common
  }).annotateMerge(documented("Get onboarding requirements", "Says what onboarding a customer of a country and type (`country`, `customerType`) needs: the fields, documents, people, legal structures and classification keys.")))
  .add(
    HttpApiEndpoint.post("submit", "/v2/onboarding", {
      payload: OnboardingSubmission,
      success: Application.pipe(HttpApiSchema.status(201)),
      error: [...withBody, problem(422)]
    }).annotate(ErrorCodes, ["ONBOARDING_NOT_READY", "INVALID_LEGAL_STRUCTURE", "INVALID_POLICY_SUBJECT", "DOCUMENT_IDS_NOT_FOUND", "APPLICATION_COUNTRY_NOT_SUPPORTED", "HOUSE_ACCOUNT_BUSINESS_ONLY", "SANDBOX_HOUSE_ACCOUNT_RESERVED_REFERENCE", "DUPLICATE_CLIENT_REFERENCE_ID"]).annotateMerge(documented("Onboard a customer", "Creates a customer and its onboarding application from one submission; the body is checked against the requirements, and every gap is listed in errors[] at once.")).annotate(Idempotency, "required").annotate(RateBucket, "application_submit")
  )
  .add(
    HttpApiEndpoint.post("submitOrganization", "/v2/organization/onboarding", {
      payload: OrganizationSubmission,
      success: Application.pipe(HttpApiSchema.status(201)),
      error: [...withBody, problem(422)]
    }).annotateMerge(documented("Onboard the organization", "Submits the organization's own onboarding; production access opens once it is approved.")).annotate(Idempotency, "required").annotate(RateBucket, "application_submit").annotate(OpenWhenRestricted, true)
  )
