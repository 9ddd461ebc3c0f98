/** Customers: the resource, as created by an approved onboarding application. */
import { Schema } from "effect"
import { CustomerTypes } from "./Applications.ts"

export const CustomerStatuses = ["active", "restricted"] as const
export const CustomerSorts = ["createdAt", "updatedAt"] as const

export const Customer = Schema.Struct({
  id: Schema.String,
  type: Schema.Literals(CustomerTypes),
  status: Schema.Literals(CustomerStatuses),
  name: Schema.String,
  country: Schema.String,
  clientReferenceId: Schema.optionalKey(Schema.String),
  houseAccount: Schema.Boolean,
  createdAt: Schema.String,
  updatedAt: Schema.String
}).annotate({ identifier: "Customer", description: "A customer of the organization: business or individual, with its status and enabled features." })
export type Customer = typeof Customer.Type
