/**
 * Customers: the organization's own clients. Onboarding creates them (see the onboarding issue); this module
 * holds their table, wire shape and reads.
 */
import { Effect } from "effect"
import type { CustomerId } from "./Ids.ts"
import { type ListEnvelope, listPage, type ListQuery } from "./Paging.ts"
import { apiError, type ApiError } from "./Problem.ts"
import { Store, table } from "./Store.ts"
import { type Caller } from "./Auth.ts"
import { scopeOf } from "./Tenancy.ts"
import { toWire } from "./Wire.ts"

export interface Customer {
  readonly id: CustomerId
  readonly organizationId: string
  readonly environment: "sandbox" | "live"
  readonly type: "business" | "individual"
  readonly status: "active" | "restricted"
  readonly name: string
  readonly country: string
  readonly clientReferenceId: string | undefined
  readonly createdAt: string
  readonly updatedAt: string
}

const scope = (c: Customer) => scopeOf(c.organizationId, c.environment)

export const Customers = table<Customer>({
  name: "customers",
  key: (c) => c.id,
  unique: { clientReferenceId: (c) => (c.clientReferenceId === undefined ? undefined : `${scope(c)}/${c.clientReferenceId}`) },
  orders: {
    createdAt: { partition: scope, sort: (c) => c.createdAt },
    updatedAt: { partition: scope, sort: (c) => c.updatedAt }
  }
})

/** The sorts `GET /v2/customers` offers. */
export const CustomerSorts = ["createdAt", "updatedAt"] as const

export interface CustomerWire {
  readonly id: string
  readonly type: Customer["type"]
  readonly status: Customer["status"]
  readonly name: string
  readonly country: string
  readonly clientReferenceId?: string
  readonly createdAt: string
  readonly updatedAt: string
}

/** A customer on the wire: through `toWire`, so an absent clientReferenceId is omitted, never null. */
export const customerToWire = (c: Customer): CustomerWire =>
  toWire({
    id: c.id,
    type: c.type,
    status: c.status,
    name: c.name,
    country: c.country,
    clientReferenceId: c.clientReferenceId,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt
  }) as CustomerWire

/** A customer of the caller's organization and environment; another's is "not found". */
export const getCustomer = (caller: Caller, id: CustomerId): Effect.Effect<Customer, ApiError, Store> =>
  Effect.gen(function*() {
    const store = yield* Store
    const customer = yield* store.get(Customers, id)
    if (customer === undefined || scope(customer) !== scopeOf(caller.organization.id, caller.environment)) {
      return yield* apiError("CUSTOMER_NOT_FOUND", "No customer with this id exists in this organization and environment.")
    }
    return customer
  })

export const listCustomers = (caller: Caller, query: ListQuery): Effect.Effect<ListEnvelope<CustomerWire>, ApiError, Store> =>
  listPage(Customers, {
    order: query.sortBy,
    partition: scopeOf(caller.organization.id, caller.environment),
    query,
    toWire: customerToWire
  })
