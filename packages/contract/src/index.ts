/**
 * @fos/contract: what a caller of the Financial Operations Service API v2 needs and nothing of the engine. The
 * ids, the asset and chain enumerations, the error catalog, every wire schema of a resource and of an event, and
 * the HttpApi definition the server, the OpenAPI document and the typed client are built from. Depends on effect
 * alone.
 */
export * from "./kernel/Errors.ts"
export * from "./kernel/ErrorReference.ts"
export * from "./kernel/Ids.ts"
export * from "./kernel/Money.ts"
export * from "./kernel/Time.ts"
export * from "./kernel/Primitives.ts"
export * from "./kernel/Geo.ts"
export * from "./kernel/Lists.ts"
export * from "./tenancy/Tenancy.ts"
export * from "./onboarding/Applications.ts"
export * from "./onboarding/Customers.ts"
export * from "./onboarding/Documents.ts"
export * from "./onboarding/Requirements.ts"
export * from "./onboarding/Submissions.ts"
export * from "./money/Transactions.ts"
export * from "./money/VirtualAccounts.ts"
export * from "./events/Events.ts"
export * from "./webhooks/Webhooks.ts"
export * from "./simulate/Simulate.ts"
export * from "./api/Policies.ts"
export * from "./api/Api.ts"
export * from "./api/Portal.ts"
export * from "./api/Customers.ts"
export * from "./api/Onboarding.ts"
export * from "./api/Applications.ts"
export * from "./api/Simulate.ts"
export * from "./api/Webhooks.ts"
export * from "./api/Documents.ts"
