/**
 * Customers: the organization's own clients. Approving a customer_onboarding application creates one (see
 * ApprovalEffects.ts); this module holds their table, wire shape and reads, and is their rows' one writer:
 * a submission's reservation, an approval's customer and its changes, and ops' restrictions (Restrictions.ts decides
 * which, and what they emit) are the writes at its end, each named for what it means.
 *
 * A customer id exists from the moment its onboarding application is submitted (the application reserves it), but
 * the customer does not until approval: using the id before then is 422 CUSTOMER_NOT_ONBOARDED, not 404.
 */
import { Effect } from "effect"
import {
  Customer as CustomerSchema,
  type Customer as CustomerWire,
  type CustomerId
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
    { ...Domain.inScope(Customers, "createdAt"), counted: "customers", readsAs: (c: Customer) => ({ schema: CustomerSchema, value: toWire(c) }) },
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

// --- writes: each in the caller's transaction; an update takes the row as the caller locked it -------------------

/** A customer_onboarding submission reserves its customer's id, with the application. */
export const reserve = (reserved: ReservedCustomer): Effect.Effect<void, never, Store.Store> =>
  Effect.orDie(Effect.flatMap(Store.Store, (store) => store.insert(ReservedCustomers, reserved)))

/**
 * The customer its approved onboarding application reserved is created, and the id is no longer a reservation. A
 * clientReferenceId or house account another customer holds is dropped from the customer rather than failing the
 * decision. Answers the customer as stored, which is what its customer.created must tell.
 */
export const create = (customer: Customer): Effect.Effect<Customer, never, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const stored = yield* store.insert(Customers, customer).pipe(
      Effect.as(customer),
      Effect.catchTag("UniqueViolation", () => {
        const without: Customer = { ...customer, clientReferenceId: undefined, houseAccount: false }
        return Effect.as(store.insert(Customers, without), without)
      }),
      Effect.orDie
    )
    yield* store.remove(ReservedCustomers, customer.id)
    return stored
  })

const save = (customer: Customer): Effect.Effect<Customer, never, Store.Store> =>
  Effect.as(Effect.orDie(Effect.flatMap(Store.Store, (store) => store.update(Customers, customer))), customer)

/** An approved customer_update application's changes: the customer's name and state, as submitted. */
export const applyUpdate = (customer: Customer, change: Pick<Customer, "name" | "state">, now: string): Effect.Effect<Customer, never, Store.Store> =>
  save({ ...customer, name: change.name, state: change.state, updatedAt: now })

/**
 * Ops' restriction of the customer: `account` makes it restricted, `monitoring` counts one more restriction that does
 * not show. Whether it is restricted already, and what it emits, are Restrictions.ts's.
 */
export const restrict = (customer: Customer, type: "account" | "monitoring", now: string): Effect.Effect<Customer, never, Store.Store> =>
  save(
    type === "monitoring"
      ? { ...customer, silentRestrictions: customer.silentRestrictions + 1, updatedAt: now }
      : { ...customer, status: "restricted", updatedAt: now }
  )
