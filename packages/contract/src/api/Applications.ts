import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { ApplicationId } from "../kernel/Ids.ts"
import { listOf, listQuery } from "../kernel/Lists.ts"
import { Application, ApplicationSorts, ApplicationTypes, IdvLink, PersonField, SensitivePersonFields } from "../onboarding/Applications.ts"
import { common, Idempotency, OpenWhenRestricted } from "./Policies.ts"
import { documented } from "./OpenApiDocument.ts"

export const applicationParams = { id: ApplicationId }
const personParams = { id: ApplicationId, referenceId: Schema.String }

export const Applications = HttpApiGroup.make("applications")
  .add(HttpApiEndpoint.get("list", "/v2/applications", {
    query: Schema.Struct({ ...listQuery(ApplicationSorts).fields, applicationType: Schema.optionalKey(Schema.Literals(ApplicationTypes)) }),
    success: listOf(Application),
    error: common
  }).annotateMerge(documented("List applications", "Lists the organization's onboarding and feature applications, newest first by default, with cursor paging.")))
  .add(HttpApiEndpoint.get("get", "/v2/applications/:id", { params: applicationParams, success: Application, error: common }).annotateMerge(documented("Get an application", "Reads one application: its type, status, the people on it and, once decided, the decision.")))
  .add(
    HttpApiEndpoint.post("cancel", "/v2/applications/:id/cancel", {
      params: applicationParams,
      success: Application.pipe(HttpApiSchema.status(202)),
      error: common
    }).annotateMerge(documented("Withdraw an application", "Withdraws an application that is still under review; a decided application is final and answers 409 APPLICATION_ALREADY_DECIDED.")).annotate(Idempotency, "required").annotate(OpenWhenRestricted, true)
  )
  .add(HttpApiEndpoint.post("idvLink", "/v2/applications/:id/persons/:referenceId/idv-link", {
    params: personParams,
    success: IdvLink.pipe(HttpApiSchema.status(201)),
    error: common
  }).annotateMerge(documented("Create an identity-verification link", "Issues a link a person on the application opens to verify their identity; the idv_link.created event carries it too.")).annotate(OpenWhenRestricted, true))
  .add(HttpApiEndpoint.get("personField", "/v2/applications/:id/persons/:referenceId/fields/:field", {
    params: { ...personParams, field: Schema.Literals(SensitivePersonFields) },
    success: PersonField,
    error: common
  }).annotateMerge(documented("Read a person's field", "Reads one field of a person on the application by the person's referenceId; 404 APPLICATION_PERSON_FIELD_EMPTY while it has no value.")))
