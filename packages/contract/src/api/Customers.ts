import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { CustomerId, VirtualAccountId } from "../kernel/Ids.ts"
import { listOf, listQuery } from "../kernel/Lists.ts"
import { VirtualAccount } from "../money/VirtualAccounts.ts"
import { Application } from "../onboarding/Applications.ts"
import { Customer, CustomerSorts } from "../onboarding/Customers.ts"
import { FeatureRequirements, FeatureSubmission } from "../onboarding/Requirements.ts"
import { CustomerUpdateSubmission } from "../onboarding/Submissions.ts"
import { common, Idempotency, problem, RateBucket, withBody } from "./Policies.ts"
import { documented } from "./OpenApiDocument.ts"

export const Customers = HttpApiGroup.make("customers")
  .add(HttpApiEndpoint.get("list", "/v2/customers", {
    query: listQuery(CustomerSorts),
    success: listOf(Customer),
    error: common
  }).annotateMerge(documented("List customers", "Lists the organization's customers, with cursor paging.")))
  .add(HttpApiEndpoint.get("get", "/v2/customers/:customerId", {
    params: { customerId: CustomerId },
    success: Customer,
    error: [...common, problem(422)]
  }).annotateMerge(documented("Get a customer", "Reads one customer: its type, status and the features enabled for it.")))
  .add(
    HttpApiEndpoint.post("submitUpdate", "/v2/customers/:customerId/updates", {
      params: { customerId: CustomerId },
      payload: CustomerUpdateSubmission,
      success: Application.pipe(HttpApiSchema.status(201)),
      error: [...withBody, problem(422)]
    }).annotateMerge(documented("Submit a customer update", "Submits changed onboarding facts of an approved customer as a new application, reviewed like the first one.")).annotate(Idempotency, "required").annotate(RateBucket, "application_submit")
  )
  .add(HttpApiEndpoint.get("featureRequirements", "/v2/customers/:customerId/features/requirements", {
    params: { customerId: CustomerId },
    // VIRTUAL_ACCOUNT as the spec writes it, or virtual_account as applications name the type.
    query: Schema.Struct({ type: Schema.String }),
    success: FeatureRequirements,
    error: [...common, problem(422)]
  }).annotateMerge(documented("Get a feature's requirements", "Says what a customer must submit to enable a feature (the `type` query, VIRTUAL_ACCOUNT say): the fields, documents and people it needs.")))
  .add(
    HttpApiEndpoint.post("submitFeature", "/v2/customers/:customerId/features", {
      params: { customerId: CustomerId },
      payload: FeatureSubmission,
      success: Application.pipe(HttpApiSchema.status(201)),
      error: [...withBody, problem(422)]
    }).annotateMerge(documented("Apply for a feature", "Submits a feature application for a customer, with what the feature's requirements ask; the application is reviewed and decided by an application.* event.")).annotate(Idempotency, "required")
  )
  .add(HttpApiEndpoint.get("listVirtualAccounts", "/v2/customers/:customerId/virtual-accounts", {
    params: { customerId: CustomerId },
    query: listQuery(["createdAt"] as const),
    success: listOf(VirtualAccount),
    error: [...common, problem(422)]
  }).annotateMerge(documented("List a customer's virtual accounts", "Lists the virtual accounts (bank deposit details) opened for a customer.")))
  .add(HttpApiEndpoint.get("getVirtualAccount", "/v2/virtual-accounts/:id", {
    params: { id: VirtualAccountId },
    success: VirtualAccount,
    error: common
  }).annotateMerge(documented("Get a virtual account", "Reads one virtual account: its asset, status and the deposit instructions a payer uses.")))
