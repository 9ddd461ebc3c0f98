/**
 * Organizations, their users and their API keys: who may call, in which environment, with what access.
 *
 * Every row of customer data is partitioned by organization and environment (`scopeOf`), so one organization
 * never reads another's rows, and sandbox never reads live.
 *
 * This module is their rows' one writer: the operator (Operator.ts), an approval (onboarding's
 * ApprovalEffects.ts), ops' restrictions (Restrictions.ts) and the request-fault mark (simulate/Faults.ts) change an
 * organization, a user or a key through the writes at its end, each named for what it means, so every way such a
 * row changes is read here.
 */
import type { Environment, KeyAccess, OrganizationId, OrganizationStatus, UserId, UserRole } from "@fos/contract"
import { Effect } from "effect"
import * as Domain from "../kernel/Domain.ts"
import * as Store from "../kernel/Store.ts"

/** A support override of the general bucket. */
export interface RateLimitOverride {
  readonly sustainedPerSecond: number
  readonly burst: number
}

export interface Organization {
  readonly id: OrganizationId
  readonly name: string
  readonly status: OrganizationStatus
  readonly sandboxProvisioned: boolean
  readonly apiKeyCreationEnabled: boolean
  readonly features: ReadonlyArray<string>
  readonly rateLimit: RateLimitOverride | undefined
  readonly createdAt: string
  /**
   * The environments where ops restricted the organization (organization.restricted): there it keeps reading and
   * managing what it has, and new business is refused (docs/decisions.md, "Organizations"). Absent means none.
   */
  readonly restrictedIn?: ReadonlyArray<Environment>
  /** Its sandbox may hold request faults (simulate/Faults.ts): only then do its sandbox requests look them up. */
  readonly sandboxFaults?: true
  /** Set on a fork (Forks.ts): the organization and the snapshot its sandbox was made from. */
  readonly forkedFrom?: ForkedFrom
}

/** Where a fork came from (Forks.ts, docs/snapshots.md, "Forks"). */
export interface ForkedFrom {
  /** The organization whose snapshot it was made from: the one that lists and deletes it. */
  readonly organizationId: OrganizationId
  readonly snapshotId: string
  /** The fork's time when it was made: the snapshot's. */
  readonly createdAt: string
  /** The store's sequence when it was made: its parent's forks are listed in the order they were made. */
  readonly sequence: number
}

/** Whether the organization is restricted in `environment`. */
export const isRestrictedIn = (organization: Organization, environment: Environment): boolean =>
  organization.restrictedIn?.includes(environment) === true

export interface User {
  readonly id: UserId
  readonly organizationId: OrganizationId
  readonly email: string
  readonly role: UserRole
  readonly emailVerified: boolean
  readonly createdAt: string
  /** Set when the user was removed from the organization; a removed user's keys are revoked with it. */
  readonly removedAt: string | undefined
}

/** An API key as stored: only the SHA-256 hash of the key, never the key. */
export interface ApiKey {
  /** Lower-case hex SHA-256 of the full key. */
  readonly hash: string
  readonly organizationId: OrganizationId
  readonly environment: Environment
  readonly access: KeyAccess
  readonly createdBy: UserId
  /** CIDR ranges; empty means any address. */
  readonly ipAllowlist: ReadonlyArray<string>
  /** The last four characters, so an operator can tell keys apart. */
  readonly last4: string
  readonly createdAt: string
  readonly revokedAt: string | undefined
}

export const Organizations = Store.table<Organization>({
  name: "organizations",
  key: (o) => o.id,
  orders: {
    all: { partition: () => "", sort: (o) => o.createdAt },
    // An organization's forks, in the order they were made, counted for their bound (Forks.ts).
    forks: { partition: (o) => o.forkedFrom?.organizationId, sort: (o) => o.forkedFrom?.sequence ?? 0 }
  }
})

export const Users = Store.table<User>({
  name: "users",
  key: (u) => u.id,
  unique: { email: (u) => (u.removedAt === undefined ? u.email.toLowerCase() : undefined) },
  orders: { byOrganization: { partition: (u) => u.organizationId, sort: (u) => u.createdAt } }
})

export const ApiKeys = Store.table<ApiKey>({
  name: "api_keys",
  key: (k) => k.hash,
  orders: {
    byOrganization: { partition: (k) => k.organizationId, sort: (k) => k.createdAt },
    byCreator: { partition: (k) => k.createdBy, sort: (k) => k.createdAt }
  }
})

/** The organizations, their users and their keys: no sandbox's data, so a reset keeps them. */
export const domain = Domain.make({ name: "tenancy/Tenancy", keptTables: [Organizations, Users, ApiKeys] })

/** The partition of customer data: one organization in one environment. */
export const scopeOf = (organizationId: string, environment: Environment): string => `${organizationId}/${environment}`

/** What a log record of work in a scope says of it (Effect log annotations): its organization and the scope. */
export const scopeLogAnnotations = (scope: string): Record<string, string> => {
  const at = scope.indexOf("/")
  return at < 0 ? { scope } : { organizationId: scope.slice(0, at), scope }
}

/** The key prefix of each environment. */
export const keyPrefix = (environment: Environment): string => `ck_${environment}_`

export const keyPattern = /^ck_(sandbox|live)_[0-9a-f]{64}$/

// --- writes: each in the caller's transaction; an update takes the row as the caller locked it -------------------

/** A new organization; an id already taken is the caller's `UniqueViolation`. */
export const addOrganization = (organization: Organization): Effect.Effect<void, Store.UniqueViolation, Store.Store> =>
  Effect.flatMap(Store.Store, (store) => store.insert(Organizations, organization))

const saveOrganization = (organization: Organization): Effect.Effect<Organization, never, Store.Store> =>
  Effect.as(Effect.orDie(Effect.flatMap(Store.Store, (store) => store.update(Organizations, organization))), organization)

/** What the operator may change of an organization (Operator.ts `updateOrganization`). */
export type OrganizationChange = Partial<Pick<Organization, "status" | "sandboxProvisioned" | "apiKeyCreationEnabled" | "features" | "rateLimit" | "name">>

/** The operator's change of an organization; answers it as it now is. */
export const changeOrganization = (organization: Organization, change: OrganizationChange): Effect.Effect<Organization, never, Store.Store> =>
  saveOrganization({ ...organization, ...change })

/** Its organization_onboarding application approved: the organization is active (the caller emits the event). */
export const activate = (organization: Organization): Effect.Effect<Organization, never, Store.Store> =>
  saveOrganization({ ...organization, status: "active" })

/** The environments where ops restrict the organization now (Restrictions.ts decides them and what they emit). */
export const setRestrictedIn = (organization: Organization, restrictedIn: ReadonlyArray<Environment>): Effect.Effect<Organization, never, Store.Store> =>
  saveOrganization({ ...organization, restrictedIn })

/**
 * Sets or clears the mark that the organization's sandbox may hold request faults (simulate/Faults.ts): cleared, the
 * member is gone from the row rather than false, as a row never marked has none.
 */
export const setSandboxFaults = (organization: Organization, marked: boolean): Effect.Effect<Organization, never, Store.Store> => {
  if (marked) return saveOrganization({ ...organization, sandboxFaults: true })
  const { sandboxFaults: _, ...unmarked } = organization
  return saveOrganization(unmarked)
}

/**
 * Removes the organization's row with its users and API keys, in the caller's transaction (a fork's deletion,
 * Forks.ts, which removes its data first): its keys authenticate no more, and its users' emails are free again.
 * Answers how many keys went.
 */
export const removeOrganization = (organizationId: string): Effect.Effect<number, never, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const keys = yield* store.removePartition(ApiKeys, "byOrganization", organizationId)
    yield* store.removePartition(Users, "byOrganization", organizationId)
    yield* store.remove(Organizations, organizationId)
    return keys
  })

/** A new user; an id or an email already taken is the caller's `UniqueViolation` (`unique` says which). */
export const addUser = (user: User): Effect.Effect<void, Store.UniqueViolation, Store.Store> =>
  Effect.flatMap(Store.Store, (store) => store.insert(Users, user))

/** The user leaves the organization at `at`: the row stays (lists show it, with `removedAt`), its email free again. */
export const markRemoved = (user: User, at: string): Effect.Effect<void, never, Store.Store> =>
  Effect.orDie(Effect.flatMap(Store.Store, (store) => store.update(Users, { ...user, removedAt: at })))

/** A new API key (its hash); a key already kept is the caller's `UniqueViolation`. */
export const addKey = (key: ApiKey): Effect.Effect<void, Store.UniqueViolation, Store.Store> =>
  Effect.flatMap(Store.Store, (store) => store.insert(ApiKeys, key))

/** Revokes the key at `at`; answers it revoked. */
export const revokeKey = (key: ApiKey, at: string): Effect.Effect<ApiKey, never, Store.Store> =>
  Effect.gen(function*() {
    const revoked = { ...key, revokedAt: at }
    yield* Effect.orDie((yield* Store.Store).update(ApiKeys, revoked))
    return revoked
  })
