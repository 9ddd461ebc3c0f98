/**
 * Restrictions: what ops places on an organization or a customer (the spec's events: organization.restricted,
 * "restriction on organization", "reason and type never included"; customer.restricted, "restriction placed on a
 * customer", "restriction reason and type are never included; not every restriction type emits").
 *
 * - An organization is restricted per environment (docs/decisions.md, "Organizations"): ops restricts both, the
 *   sandbox's simulate call the sandbox alone. organization.restricted goes out in each environment newly restricted
 *   that the organization can use; lifting a restriction emits nothing (the spec has no event for it).
 * - A customer: `account` makes it restricted and emits customer.restricted; `monitoring` is a restriction that
 *   neither shows nor emits. A restricted customer cannot request new features (Submissions.ts); what the
 *   restriction does to its payouts is Payouts.ts's (`restrictCustomerWithPayouts`).
 *
 * Restricting again changes nothing and emits nothing.
 */
import { Clock, Effect } from "effect"
import { type CustomerId, type Environment, toIso } from "@fos/contract"
import type * as Auth from "../tenancy/Auth.ts"
import * as Customers from "./Customers.ts"
import * as Outbox from "../kernel/Outbox.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Wire from "../kernel/Wire.ts"

// --- organization restrictions (ops) --------------------------------------------------------------------------------

/**
 * Ops restricts the organization in `environments` (both by default, as an operator does; the sandbox's simulate
 * call restricts the sandbox alone). organization.restricted goes out in each environment newly restricted that
 * the organization can use (live only once active), reason never sent; restricting again changes nothing.
 */
export const restrictOrganization = (organizationId: string, environments: ReadonlyArray<Environment> = ["sandbox", "live"]) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const organization = yield* store.getForUpdate(Tenancy.Organizations, organizationId)
    if (organization === undefined) return yield* Problem.apiError("NOT_FOUND", `No organization ${organizationId}.`)
    const now = toIso(yield* Clock.currentTimeMillis)
    const added = environments.filter((e) => !Tenancy.isRestrictedIn(organization, e))
    if (added.length === 0) return organization
    const next = yield* Tenancy.setRestrictedIn(organization, [...(organization.restrictedIn ?? []), ...added])
    for (const environment of added) {
      if (environment === "live" && organization.status !== "active") continue
      yield* Outbox.emitEvent({ type: "organization.restricted", organizationId, environment, data: { organizationId, occurredAt: now } })
    }
    return next
  })

/** Ops lifts the organization's restriction in `environments` (both by default). No event: the spec has none. */
export const liftOrganization = (organizationId: string, environments: ReadonlyArray<Environment> = ["sandbox", "live"]) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const organization = yield* store.getForUpdate(Tenancy.Organizations, organizationId)
    if (organization === undefined) return yield* Problem.apiError("NOT_FOUND", `No organization ${organizationId}.`)
    const remaining = (organization.restrictedIn ?? []).filter((e) => !environments.includes(e))
    if (remaining.length === (organization.restrictedIn ?? []).length) return organization
    return yield* Tenancy.setRestrictedIn(organization, remaining)
  })

// --- customer restrictions (ops) -------------------------------------------------------------------------------------

/**
 * Ops restricts a customer. `account` restricts it (status restricted, customer.restricted, no reason or type
 * sent); `monitoring` is a restriction that does not emit and does not change the status (the spec: not every
 * restriction type emits). Restricting a restricted customer again changes nothing and emits nothing.
 */
export const restrictCustomer = (caller: Auth.Caller, customerId: CustomerId, type: "account" | "monitoring") =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const found = yield* Customers.get(caller, customerId)
    const customer = (yield* store.getForUpdate(Customers.Customers, found.id))!
    const now = toIso(yield* Clock.currentTimeMillis)
    if (type === "monitoring") return yield* Customers.restrict(customer, "monitoring", now)
    if (customer.status === "restricted") return customer
    const next = yield* Customers.restrict(customer, "account", now)
    yield* Outbox.emitEvent({
      type: "customer.restricted",
      organizationId: customer.organizationId,
      environment: customer.environment,
      data: Wire.toWire({ customerId: customer.id, clientReferenceId: customer.clientReferenceId, occurredAt: now })
    })
    return next
  })
