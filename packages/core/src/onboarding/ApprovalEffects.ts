/**
 * Approval effects: what an approved application creates, by its type (the spec's application table, "open →
 * approval → approved": "customer_onboarding approval creates the customer and emits customer.created; a
 * virtual_account approval later emits virtual_account.activated").
 *
 * | applicationType | approval creates |
 * |---|---|
 * | customer_onboarding | the customer (under the id the submission reserved), customer.created, paired with application.approved |
 * | customer_update | the customer's name and state, as submitted; no event (the spec has none) |
 * | virtual_account | the account, pending; it activates on the clock (money/VirtualAccounts.ts, told through `VirtualAccountApproved`) |
 * | crypto_wallet | nothing itself: it lets the customer create wallets on that chain (money/Wallets.ts) |
 * | organization_onboarding | the organization active, organization.activated |
 *
 * They run in the decision's transaction, after application.approved is written. Money, a layer above onboarding,
 * hears of a virtual_account approval through a topic (Subscriptions.ts), so that onboarding imports nothing of it.
 */
import { Effect } from "effect"
import { type CustomerId, type CustomerUpdateSubmission, type OnboardingSubmission } from "@fos/contract"
import type * as Applications from "./Applications.ts"
import * as Customers from "./Customers.ts"
import * as Outbox from "../kernel/Outbox.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Topics from "../kernel/Topics.ts"
import * as Wire from "../kernel/Wire.ts"

/** A virtual_account application was approved, in its decision's transaction: money opens its account. */
export interface ApprovedAccount {
  readonly application: Applications.Application
  /** The decision's time. */
  readonly now: string
}

export const VirtualAccountApproved = Topics.topic<ApprovedAccount>("fos/VirtualAccountApproved")

/** What an approval creates, by application type. */
export const approvalEffects = (application: Applications.Application, now: string): Effect.Effect<void, never, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    switch (application.type) {
      case "customer_onboarding": {
        const submission = application.submission as OnboardingSubmission
        const name = application.customerType === "individual"
          ? `${submission.individual?.firstName ?? ""} ${submission.individual?.lastName ?? ""}`.trim()
          : submission.businessInfo?.legalName ?? ""
        const address = application.customerType === "individual" ? submission.individual?.address : submission.businessInfo?.registeredAddress
        const customer = yield* Customers.create({
          id: application.customerId as CustomerId,
          organizationId: application.organizationId,
          environment: application.environment,
          type: application.customerType ?? "business",
          status: "active",
          name,
          country: application.country ?? address?.country ?? "",
          clientReferenceId: application.clientReferenceId,
          houseAccount: application.houseAccount,
          applicationId: application.id,
          state: address?.state,
          silentRestrictions: 0,
          createdAt: now,
          updatedAt: now
        })
        yield* Outbox.emitEvent({
          type: "customer.created",
          organizationId: application.organizationId,
          environment: application.environment,
          data: Wire.toWire({ customerId: customer.id, applicationId: application.id, clientReferenceId: customer.clientReferenceId, occurredAt: now })
        })
        return
      }
      case "customer_update": {
        const customer = yield* store.getForUpdate(Customers.Customers, application.customerId!)
        if (customer === undefined) return
        const submission = application.submission as CustomerUpdateSubmission
        const name = customer.type === "business"
          ? submission.businessInfo?.legalName ?? customer.name
          : [submission.individual?.firstName ?? customer.name.split(" ")[0], submission.individual?.lastName ?? customer.name.split(" ").slice(1).join(" ")]
            .join(" ").trim()
        const address = submission.businessInfo?.registeredAddress ?? submission.individual?.address
        yield* Customers.applyUpdate(customer, { name, state: address?.state ?? customer.state }, now)
        return
      }
      case "virtual_account": {
        yield* Topics.publish(VirtualAccountApproved, { application, now })
        return
      }
      case "crypto_wallet":
        return
      case "organization_onboarding": {
        const organization = yield* store.getForUpdate(Tenancy.Organizations, application.organizationId)
        if (organization === undefined || organization.status !== "onboarding") return
        yield* Tenancy.activate(organization)
        yield* Outbox.emitEvent({
          type: "organization.activated",
          organizationId: organization.id,
          environment: "sandbox",
          data: { organizationId: organization.id, occurredAt: now }
        })
        return
      }
    }
  })
