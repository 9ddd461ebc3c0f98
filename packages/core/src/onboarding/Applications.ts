/**
 * Applications: how customers, their features and the organization itself are onboarded. This module is the
 * Application resource: its stored row and table, its wire shape, its reads and its events. `Applications.move` runs
 * the state table (ApplicationMachine.ts) on a stored application and `Applications.moved` is the row it decides; no
 * status is written but through them. It is the table's one writer: a new application goes in through
 * `add`, a move through `saveMoved`, each with its row of history.
 *
 * The rest of onboarding, by concept: the four submission flows (Submissions.ts), decisions and late compliance
 * results (Decisions.ts), what approval creates (ApprovalEffects.ts), cancellation (Cancellation.ts), identity
 * verification links (IdvLinks.ts), the application timers and the world model's review (ApplicationTimers.ts),
 * and the restrictions ops places on customers and organizations (Restrictions.ts).
 */
import { Effect } from "effect"
import * as ApplicationMachine from "./ApplicationMachine.ts"
import type * as Auth from "../tenancy/Auth.ts"
import * as Domain from "../kernel/Domain.ts"
import * as History from "../kernel/History.ts"
import * as Outbox from "../kernel/Outbox.ts"
import * as Paging from "../kernel/Paging.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Wire from "../kernel/Wire.ts"
import {
  Application as ApplicationSchema,
  type Application as ApplicationWire,
  type ApplicationFailureCode,
  type ApplicationId,
  type ApplicationStatus,
  type ApplicationType,
  type AssetCode,
  type Chain,
  type Environment,
  type SensitivePersonField
} from "@fos/contract"

export interface Person {
  readonly referenceId: string
  readonly roles: ReadonlyArray<"owner" | "controller" | "individual">
  readonly firstName: string | undefined
  readonly lastName: string | undefined
  readonly email: string | undefined
  readonly ownershipPercent: number | undefined
  /** Sensitive: only through the person-field read. */
  readonly dateOfBirth: string | undefined
  readonly taxId: string | undefined
  readonly verificationStatus: "in_progress" | "completed" | "failed" | "cancelled"
}

export interface Application {
  readonly id: ApplicationId
  readonly organizationId: string
  readonly environment: Environment
  readonly type: ApplicationType
  readonly status: ApplicationStatus
  /** customer_onboarding: the id reserved at submission; other customer types: the customer. */
  readonly customerId: string | undefined
  readonly customerType: "business" | "individual" | undefined
  readonly country: string | undefined
  readonly clientReferenceId: string | undefined
  readonly houseAccount: boolean
  readonly asset: { readonly code: AssetCode; readonly chain?: Chain } | undefined
  readonly persons: ReadonlyArray<Person>
  /** The submitted body, kept for what approval applies (customer name, update changes). */
  readonly submission: unknown
  readonly failureCode: ApplicationFailureCode | undefined
  readonly failureMessage: string | undefined
  readonly resubmittable: boolean | undefined
  readonly cancelRequestedAt: string | undefined
  readonly decidedAt: string | undefined
  /** organization_onboarding: 1 for the organization's first application, +1 for each draft after; else 0. */
  readonly ordinal: number
  readonly createdAt: string
  readonly updatedAt: string
}

export const applicationScope = (a: Application) => Tenancy.scopeOf(a.organizationId, a.environment)
const scope = applicationScope

/** The partition of `byCustomer` that holds a customer's applications of one type. */
export const customerApplications = (scope: string, customerId: string, type: ApplicationType) => `${scope}/${customerId}/${type}`
/** A rejected or cancelled application frees its client reference and its house-account claim. */
const holdsClaims = (a: Application) => a.status !== "rejected" && a.status !== "cancelled"

export const Applications = Store.table<Application>({
  name: "applications",
  key: (a) => a.id,
  unique: {
    clientReferenceId: (a) =>
      a.clientReferenceId !== undefined && holdsClaims(a) ? `${scope(a)}/${a.type}/${a.clientReferenceId}` : undefined,
    houseAccount: (a) => (a.houseAccount && holdsClaims(a) ? scope(a) : undefined)
  },
  orders: {
    createdAt: { partition: scope, sort: (a) => a.createdAt },
    updatedAt: { partition: scope, sort: (a) => a.updatedAt },
    // The ordinal breaks ties within one millisecond, so "the organization's current application" is well defined.
    byType: { partition: (a) => `${scope(a)}/${a.type}`, sort: (a) => `${a.createdAt}#${String(a.ordinal).padStart(6, "0")}` },
    // A customer's applications of one type (a wallet needs its customer's approved crypto_wallet application).
    byCustomer: { partition: (a) => customerApplications(scope(a), a.customerId ?? "", a.type), sort: (a) => a.createdAt, counted: false },
    /** The list filtered by type under sortBy=updatedAt. */
    byTypeUpdatedAt: { partition: (a) => `${scope(a)}/${a.type}`, sort: (a) => a.updatedAt }
  }
})

/** A sandbox's applications (their timers are ApplicationTimers.ts's and Cancellation.ts's). */
export const domain = Domain.make({
  name: "onboarding/Applications",
  tables: [{
    ...Domain.inScope(Applications, "createdAt"),
    counted: "applications",
    readsAs: (a: Application) => ({ schema: ApplicationSchema, value: toWire(a), members: { applicationId: "id", applicationType: "type" } })
  }]
})

// --- moves --------------------------------------------------------------------------------------------------------

/** An open application with a cancel in progress. */
export const isCancelling = (a: Application) => a.status === "open" && a.cancelRequestedAt !== undefined

/** What the application's table (ApplicationMachine.ts) decides on. */
export const machineState = (a: Application): ApplicationMachine.State => ({ status: a.status, cancelling: isCancelling(a) })

/** A move the table allows: the next status, whether a cancel is in progress, the events and the persons' fate. */
export type AllowedMove = Exclude<ApplicationMachine.Outcome, { readonly refused: ApplicationMachine.Refusal }>

const refusalDetail = {
  APPLICATION_ALREADY_DECIDED: "The application is already decided; approved and rejected are final.",
  APPLICATION_INVALID_STATUS: "The application's status does not allow this.",
  CANCEL_IN_PROGRESS: "A cancellation of this application is in progress; wait for it to finish."
} as const

/** Runs the state table: what the move makes of the application, or the spec's problem it is refused with. */
export const move = (application: Application, m: ApplicationMachine.Move): Effect.Effect<AllowedMove, Problem.ApiError> => {
  const outcome = ApplicationMachine.transition(machineState(application), m)
  if ("next" in outcome) return Effect.succeed(outcome)
  return Effect.fail(Problem.apiError(outcome.refused, `${refusalDetail[outcome.refused]} (status ${application.status})`))
}

/** What the move makes of the application, or undefined where the table refuses it (for the engine's own moves). */
export const allowedApplicationMove = (application: Application, m: ApplicationMachine.Move): AllowedMove | undefined => {
  const outcome = ApplicationMachine.transition(machineState(application), m)
  return "next" in outcome ? outcome : undefined
}

/** The application after an allowed move, at `now`: its status, cancel request, persons and updatedAt. */
export const moved = (application: Application, outcome: AllowedMove, now: string): Application => ({
  ...application,
  status: outcome.next,
  cancelRequestedAt: outcome.cancelling ? application.cancelRequestedAt ?? now : undefined,
  persons: outcome.persons === undefined
    ? application.persons
    : application.persons.map((p) => ({ ...p, verificationStatus: outcome.persons! })),
  updatedAt: now
})

/**
 * Stores a new application (a submission, or a draft after a resubmittable rejection) with its first row of history,
 * in the caller's transaction. A unique key taken (its clientReferenceId, a house account) is the caller's
 * `UniqueViolation`, and then nothing is written.
 */
export const add = (application: Application): Effect.Effect<void, Store.UniqueViolation, Store.Store> =>
  Effect.flatMap(Store.Store, (store) => Effect.andThen(store.insert(Applications, application), History.recordState(undefined, application)))

/**
 * Stores `after`, a move of `before` (locked by the caller), and writes the change of status into the sandbox's
 * history (kernel/History.ts) in the same transaction.
 */
export const saveMoved = (before: Application, after: Application): Effect.Effect<void, never, Store.Store> =>
  Effect.flatMap(Store.Store, (store) => Effect.andThen(Effect.orDie(store.update(Applications, after)), History.recordState(before.status, after)))

// --- wire ---------------------------------------------------------------------------------------------------------

/** The person as the API shows it: no date of birth or tax id (read those one field at a time). */
const personToWire = (p: Person) => ({
  referenceId: p.referenceId,
  roles: [...p.roles],
  firstName: p.firstName,
  lastName: p.lastName,
  email: p.email,
  ownershipPercent: p.ownershipPercent,
  verificationStatus: p.verificationStatus
})

export const toWire = (a: Application) =>
  Wire.toWire({
    applicationId: a.id,
    applicationType: a.type,
    status: a.status,
    customerId: a.type === "organization_onboarding" ? undefined : a.customerId,
    customerType: a.customerType,
    country: a.country,
    clientReferenceId: a.clientReferenceId,
    houseAccount: a.type === "customer_onboarding" ? a.houseAccount : undefined,
    asset: a.asset,
    persons: a.persons.map(personToWire),
    // Representation rule 3: none of these is nullable in the spec, so each is omitted until it has a value.
    failureCode: a.failureCode,
    failureMessage: a.failureMessage,
    resubmittable: a.type === "organization_onboarding" ? a.resubmittable : undefined,
    cancelRequestedAt: a.cancelRequestedAt,
    decidedAt: a.decidedAt,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt
  }) as ApplicationWire

// --- reads --------------------------------------------------------------------------------------------------------

const notFound = () => Problem.apiError("APPLICATION_NOT_FOUND", "No application with this id exists in this organization and environment.")

const callerScope = (caller: Auth.Caller) => Tenancy.scopeOf(caller.organization.id, caller.environment)

/** An application of the caller's organization; organization_onboarding applications live in the sandbox. */
export const get = (caller: Auth.Caller, id: ApplicationId, forUpdate = false): Effect.Effect<Application, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const application = yield* (forUpdate ? store.getForUpdate(Applications, id) : store.get(Applications, id))
    if (application === undefined || scope(application) !== callerScope(caller)) return yield* notFound()
    return application
  })

export const list = (
  caller: Auth.Caller,
  query: Paging.ListQuery,
  type: ApplicationType | undefined
): Effect.Effect<Paging.ListEnvelope<ApplicationWire>, Problem.ApiError, Store.Store> =>
  type === undefined
    ? Paging.listPage(Applications, { order: query.sortBy, partition: callerScope(caller), query, toWire: toWire })
    // A type filter walks the type's own order under the sort asked for, so its pages are full and cost the same as
    // the unfiltered list's.
    : Paging.listPage(Applications, {
      order: query.sortBy === "updatedAt" ? "byTypeUpdatedAt" : "byType",
      partition: `${callerScope(caller)}/${type}`,
      query,
      toWire: toWire
    })

/**
 * The organization's current application: the newest, passing over drafts a late compliance result withdrew
 * (cancelled without ever being submitted).
 */
export const currentOrganization = (organizationId: string) =>
  Effect.flatMap(Store.Store, (store) =>
    Effect.map(
      store.page(Applications, {
        order: "byType",
        partition: `${Tenancy.scopeOf(organizationId, "sandbox")}/organization_onboarding`,
        descending: true,
        backward: false,
        from: undefined,
        limit: 10
      }),
      (rows) => rows.find((a) => !(a.status === "cancelled" && a.submission === undefined))
    ))

export const findPerson = (application: Application, referenceId: string) => {
  const person = application.persons.find((p) => p.referenceId === referenceId)
  return person === undefined
    ? Effect.fail(Problem.apiError("APPLICATION_PERSON_NOT_FOUND", "The application has no person with this referenceId."))
    : Effect.succeed(person)
}

/** One sensitive field of a person, read on its own so it is never part of a list or a log of the application. */
export const readPersonField = (caller: Auth.Caller, id: ApplicationId, referenceId: string, field: SensitivePersonField) =>
  Effect.gen(function*() {
    const person = yield* findPerson(yield* get(caller, id), referenceId)
    const value = person[field]
    if (value === undefined) {
      return yield* Problem.apiError("APPLICATION_PERSON_FIELD_EMPTY", `The person's ${field} has no value.`)
    }
    return { referenceId, field, value }
  })

// --- events -------------------------------------------------------------------------------------------------------

/** The events an allowed move emits, each with the application's payload as it now stands. */
export const emitApplicationEvents = (application: Application, events: ReadonlyArray<ApplicationMachine.ApplicationEvent>, occurredAt: string) =>
  Effect.forEach(events, (type) => emit(application, type, occurredAt), { discard: true })

const emit = (application: Application, type: "application.approved" | "application.rejected", occurredAt: string) =>
  Outbox.emitEvent({
    type,
    organizationId: application.organizationId,
    environment: application.environment,
    data: Wire.toWire(type === "application.approved"
      ? {
        applicationId: application.id,
        applicationType: application.type,
        customerId: application.type === "organization_onboarding" ? undefined : application.customerId,
        asset: application.type === "virtual_account" ? application.asset : undefined,
        clientReferenceId: application.clientReferenceId,
        occurredAt
      }
      : {
        applicationId: application.id,
        applicationType: application.type,
        customerId: application.type === "organization_onboarding" ? undefined : application.customerId,
        asset: application.type === "virtual_account" ? application.asset : undefined,
        failureCode: application.failureCode,
        failureMessage: application.failureMessage,
        resubmittable: application.type === "organization_onboarding" ? application.resubmittable : undefined,
        clientReferenceId: application.clientReferenceId,
        occurredAt
      })
  })

