/**
 * Organizations, their users and their API keys: who may call, in which environment, with what access.
 *
 * Every row of customer data is partitioned by organization and environment (`scopeOf`), so one organization
 * never reads another's rows, and sandbox never reads live.
 */
import type { Environment, KeyAccess, OrganizationId, OrganizationStatus, UserId, UserRole } from "@fos/contract"
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

export const Organizations = Store.table<Organization>({ name: "organizations", key: (o) => o.id, orders: { all: { partition: () => "", sort: (o) => o.createdAt } } })

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

/** The key prefix of each environment. */
export const keyPrefix = (environment: Environment): string => `ck_${environment}_`

export const keyPattern = /^ck_(sandbox|live)_[0-9a-f]{64}$/
