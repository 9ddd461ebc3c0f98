/**
 * @fos/core: the engine. The store port and the memory store, tenancy and authentication, rate limits,
 * idempotency, timers and the virtual clock, lists, webhooks, onboarding and the money domains; the wire shapes
 * it answers with are @fos/contract's. Imports no runtime module.
 */
export * from "./kernel/Problem.ts"
export * from "./kernel/IdGenerator.ts"
export * from "./kernel/RealClock.ts"
export * from "./kernel/Wire.ts"
export * from "./kernel/Store.ts"
export * from "./kernel/MemoryStore.ts"
export * from "./kernel/RateLimit.ts"
export * from "./kernel/Timers.ts"
export * from "./kernel/Idempotency.ts"
export * from "./kernel/Paging.ts"
export * from "./kernel/Outbox.ts"
export * from "./tenancy/Tenancy.ts"
export * from "./tenancy/Auth.ts"
export * from "./tenancy/Operator.ts"
export * from "./tenancy/Seed.ts"
export * from "./webhooks/Webhooks.ts"
export * from "./onboarding/Requirements.ts"
export * from "./onboarding/Completeness.ts"
export * from "./onboarding/ReviewSettings.ts"
export * from "./onboarding/Documents.ts"
export * from "./onboarding/Customers.ts"
export * from "./onboarding/Applications.ts"
export * from "./money/VirtualAccounts.ts"
export * from "./Engine.ts"
