/**
 * Customers: the organization's own clients. Approving a customer_onboarding application creates one (see
 * ApprovalEffects.ts); this module holds their table, wire shape and reads. The restrictions ops can place on one
 * are Restrictions.ts's.
 *
 * A customer id exists from the moment its onboarding application is submitted (the application reserves it), but
 * the customer does not until approval: using the id before then is 422 CUSTOMER_NOT_ONBOARDED, not 404.
 */
import { Effect } from "effect"
import type {
  Customer as CustomerWire,
  CustomerId
} from "@fos/contract"
import type * as Auth from "../tenancy/Auth.ts"
import * as Domain from "../kernel/Domain.ts"
import * as Paging from "../kernel/Paging.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Wire from "../kernel/Wire.ts"

export interface Customer {
  readonly id: CustomerId
  readonly organizationId: string
  readonly environment: "sandbox" | "live"
  readonly type: "business" | "individual"
  readonly status: "active" | "restricted"
  readonly name: string
  readonly country: string
  readonly clientReferenceId: string | undefined
  /** The organization's own account, held as a customer (business only; one per organization and environment). */
  readonly houseAccount: boolean
  /** The application that onboarded the customer. */
  readonly applicationId: string
  /** Where the customer is based: the registered or residential address, when given (crypto eligibility). */
  readonly state: string | undefined
  /** Restrictions ops placed that do not show in `status` (monitoring); never on the wire. */
  readonly silentRestrictions: number
  readonly createdAt: string
  readonly updatedAt: string
}

const scope = (c: Customer) => Tenancy.scopeOf(c.organizationId, c.environment)

export const Customers = Store.table<Customer>({
  name: "customers",
  key: (c) => c.id,
  unique: {
    clientReferenceId: (c) => (c.clientReferenceId === undefined ? undefined : `${scope(c)}/${c.clientReferenceId}`),
    houseAccount: (c) => (c.houseAccount ? scope(c) : undefined)
  },
  orders: {
    createdAt: { partition: scope, sort: (c) => c.createdAt },
    updatedAt: { partition: scope, sort: (c) => c.updatedAt }
  }
})

/** The sorts `GET /v2/customers` offers. */

/** A customer on the wire: through `toWire`, so an absent clientReferenceId is omitted, never null. */
export const toWire = (c: Customer): CustomerWire =>
  Wire.toWire({
    id: c.id,
    type: c.type,
    status: c.status,
    name: c.name,
    country: c.country,
    clientReferenceId: c.clientReferenceId,
    houseAccount: c.houseAccount,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt
  }) as CustomerWire

/**
 * The ids onboarding applications reserved, so a customer id that is not a customer yet is told apart from one
 * that never existed. Written with the application, in its transaction.
 */
export interface ReservedCustomer {
  readonly customerId: string
  readonly scope: string
  readonly applicationId: string
}

export const ReservedCustomers = Store.table<ReservedCustomer>({
  name: "reserved_customers",
  key: (r) => r.customerId,
  orders: { byScope: { partition: (r) => r.scope, sort: (r) => r.customerId, counted: false } }
})

/** A sandbox's customers and the customer ids its applications reserved. */
export const domain = Domain.make({
  name: "onboarding/Customers",
  tables: [
    { ...Domain.inScope(Customers, "createdAt"), counted: "customers" },
    Domain.inScope(ReservedCustomers, "byScope")
  ]
})

/**
 * A customer of the caller's organization and environment. Another organization's is "not found"; one whose
 * onboarding is not approved is 422 CUSTOMER_NOT_ONBOARDED.
 */
export const get = (caller: Auth.Caller, id: CustomerId): Effect.Effect<Customer, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const callerScope = Tenancy.scopeOf(caller.organization.id, caller.environment)
    const customer = yield* store.get(Customers, id)
    if (customer !== undefined && scope(customer) === callerScope) return customer
    const reserved = customer === undefined ? yield* store.get(ReservedCustomers, id) : undefined
    if (reserved !== undefined && reserved.scope === callerScope) {
      return yield* Problem.apiError(
        "CUSTOMER_NOT_ONBOARDED",
        `The customer's onboarding (application ${reserved.applicationId}) is not approved; the customer cannot be used yet.`
      )
    }
    return yield* Problem.apiError("CUSTOMER_NOT_FOUND", "No customer with this id exists in this organization and environment.")
  })

export const list = (caller: Auth.Caller, query: Paging.ListQuery): Effect.Effect<Paging.ListEnvelope<CustomerWire>, Problem.ApiError, Store.Store> =>
  Paging.listPage(Customers, {
    order: query.sortBy,
    partition: Tenancy.scopeOf(caller.organization.id, caller.environment),
    query,
    toWire: toWire
  })
