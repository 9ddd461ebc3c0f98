/**
 * What an approval creates, apart from the decision that calls it: the customer a customer_onboarding approval
 * creates, and its customer.created event, which must tell what was stored.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { ApplicationId, CustomerId } from "@fos/contract"
import type * as Applications from "../src/onboarding/Applications.ts"
import * as ApprovalEffects from "../src/onboarding/ApprovalEffects.ts"
import * as Customers from "../src/onboarding/Customers.ts"
import * as MemoryStore from "../src/kernel/MemoryStore.ts"
import * as Outbox from "../src/kernel/Outbox.ts"
import * as Store from "../src/kernel/Store.ts"

const now = "2026-03-02T09:00:00.000Z"
const scope = { organizationId: "org_t", environment: "sandbox" } as const

const onboarding: Applications.Application = {
  id: "app_b" as ApplicationId,
  ...scope,
  type: "customer_onboarding",
  status: "approved",
  customerId: "cus_b",
  customerType: "business",
  country: "US",
  clientReferenceId: "ref-1",
  houseAccount: true,
  asset: undefined,
  persons: [],
  submission: { businessInfo: { legalName: "B Corp", registeredAddress: { country: "US", state: "NY" } } },
  failureCode: undefined,
  failureMessage: undefined,
  resubmittable: undefined,
  cancelRequestedAt: undefined,
  decidedAt: now,
  ordinal: 0,
  createdAt: now,
  updatedAt: now
}

/** A customer already holding the application's clientReferenceId and the scope's house account. */
const holder: Customers.Customer = {
  id: "cus_a" as CustomerId,
  ...scope,
  type: "business",
  status: "active",
  name: "A Corp",
  country: "US",
  clientReferenceId: "ref-1",
  houseAccount: true,
  applicationId: "app_a",
  state: undefined,
  silentRestrictions: 0,
  createdAt: now,
  updatedAt: now
}

describe("a customer_onboarding approval", () => {
  it.effect("whose clientReferenceId another customer holds creates the customer without it, and customer.created says so", () =>
    Effect.gen(function*() {
      const store = yield* Store.Store
      yield* Effect.orDie(store.insert(Customers.Customers, holder))
      yield* store.transaction(ApprovalEffects.approvalEffects(onboarding, now))
      const created = yield* store.get(Customers.Customers, "cus_b")
      expect(created).toMatchObject({ id: "cus_b", clientReferenceId: undefined, houseAccount: false })
      const [event] = yield* Outbox.readEvents(undefined, 10)
      expect(event?.type).toBe("customer.created")
      expect(event?.data).toEqual({ customerId: "cus_b", applicationId: "app_b", occurredAt: now })
    }).pipe(Effect.provide(Layer.mergeAll(MemoryStore.layer, Layer.succeed(Outbox.EventWritten, [])))))

  it.effect("creates the customer with its clientReferenceId, and customer.created carries it", () =>
    Effect.gen(function*() {
      const store = yield* Store.Store
      yield* store.transaction(ApprovalEffects.approvalEffects(onboarding, now))
      const [event] = yield* Outbox.readEvents(undefined, 10)
      expect(event?.data).toEqual({ customerId: "cus_b", applicationId: "app_b", clientReferenceId: "ref-1", occurredAt: now })
    }).pipe(Effect.provide(Layer.mergeAll(MemoryStore.layer, Layer.succeed(Outbox.EventWritten, [])))))
})
