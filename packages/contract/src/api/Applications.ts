import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { ApplicationId } from "../kernel/Ids.ts"
import { listOf, listQuery } from "../kernel/Lists.ts"
import { Application, ApplicationSorts, ApplicationTypes, IdvLink, PersonField, SensitivePersonFields } from "../onboarding/Applications.ts"
import { common, Idempotency, OpenWhenRestricted } from "./Policies.ts"

export const applicationParams = { id: ApplicationId }
const personParams = { id: ApplicationId, referenceId: Schema.String }

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
    }).annotate(Idempotency, "required").annotate(OpenWhenRestricted, true)
  )
  .add(HttpApiEndpoint.post("idvLink", "/v2/applications/:id/persons/:referenceId/idv-link", {
    params: personParams,
    success: IdvLink.pipe(HttpApiSchema.status(201)),
    error: common
  }).annotate(OpenWhenRestricted, true))
  .add(HttpApiEndpoint.get("personField", "/v2/applications/:id/persons/:referenceId/fields/:field", {
    params: { ...personParams, field: Schema.Literals(SensitivePersonFields) },
    success: PersonField,
    error: common
  }))
