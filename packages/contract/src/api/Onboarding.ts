import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Country } from "../kernel/Geo.ts"
import { Application } from "../onboarding/Applications.ts"
import { OnboardingRequirements } from "../onboarding/Requirements.ts"
import { OnboardingSubmission, OrganizationSubmission } from "../onboarding/Submissions.ts"
import { common, Idempotency, OpenWhenRestricted, problem, RateBucket, withBody } from "./Policies.ts"

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
      error: [...withBody, problem(422)]
    }).annotate(Idempotency, "required").annotate(RateBucket, "application_submit")
  )
  .add(
    HttpApiEndpoint.post("submitOrganization", "/v2/organization/onboarding", {
      payload: OrganizationSubmission,
      success: Application.pipe(HttpApiSchema.status(201)),
      error: [...withBody, problem(422)]
    }).annotate(Idempotency, "required").annotate(RateBucket, "application_submit").annotate(OpenWhenRestricted, true)
  )
