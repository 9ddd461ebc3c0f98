/**
 * The operator surface: what the spec puts in "the dashboard". Organizations (create, activate, suspend,
 * sandbox provisioning, features, key creation), users (admin or developer; removal revokes their keys) and
 * API keys (read-only or read-write, IP allowlist, revoke). The CLI and the seed file call these.
 *
 * The spec's rules hold here too: a read-write key needs an admin creator (API_KEY_WRITE_REQUIRES_ADMIN), key
 * creation can be disabled per organization (API_KEY_CREATION_DISABLED), new keys are read-only by default,
 * and a key is returned once and stored only as its SHA-256 hash.
 *
 * The operator token that guards this surface on a server is kept in the store the same way, as its SHA-256 hash,
 * so it survives restarts (docs/decisions.md, "The operator token").
 */
import { Clock, Effect } from "effect"
import * as Auth from "./Auth.ts"
import * as Domain from "../kernel/Domain.ts"
import * as IdGenerator from "../kernel/IdGenerator.ts"
import * as Outbox from "../kernel/Outbox.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "./Tenancy.ts"

import {
  type Environment,
  isId,
  type KeyAccess,
  type OrganizationId,
  type OrganizationStatus,
  toIso,
  type UserId,
  type UserRole
} from "@fos/contract"

const nowIso = Effect.map(Clock.currentTimeMillis, toIso)

export interface NewOrganization {
  readonly id?: string
  readonly name: string
  readonly status?: OrganizationStatus
  readonly sandboxProvisioned?: boolean
  readonly apiKeyCreationEnabled?: boolean
  readonly features?: ReadonlyArray<string>
  readonly rateLimit?: Tenancy.RateLimitOverride
}

export const createOrganization = (input: NewOrganization): Effect.Effect<Tenancy.Organization, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    if (input.id !== undefined && !isId("org", input.id)) {
      return yield* Problem.apiError("INVALID_OID_FORMAT", "An organization id is org_ followed by 1 to 64 letters or digits.")
    }
    if (input.rateLimit !== undefined && !(input.rateLimit.sustainedPerSecond > 0 && input.rateLimit.burst >= 1)) {
      return yield* Problem.apiError("VALIDATION_ERROR", "rateLimit needs sustainedPerSecond > 0 and burst >= 1.")
    }
    const organization: Tenancy.Organization = {
      id: (input.id ?? (yield* IdGenerator.newId("org"))) as OrganizationId,
      name: input.name,
      status: input.status ?? "onboarding",
      sandboxProvisioned: input.sandboxProvisioned ?? true,
      apiKeyCreationEnabled: input.apiKeyCreationEnabled ?? true,
      features: input.features ?? [],
      rateLimit: input.rateLimit,
      createdAt: yield* nowIso
    }
    yield* Tenancy.addOrganization(organization).pipe(
      Effect.catchTag("UniqueViolation", () => Effect.fail(Problem.apiError("CONFLICT", `Organization ${organization.id} already exists.`)))
    )
    return organization
  })

export const getOrganization = (id: string): Effect.Effect<Tenancy.Organization, Problem.ApiError, Store.Store> =>
  Effect.flatMap(Store.Store, (store) =>
    Effect.flatMap(store.get(Tenancy.Organizations, id), (o) =>
      o === undefined ? Effect.fail(Problem.apiError("NOT_FOUND", `No organization ${id}.`)) : Effect.succeed(o)))

/** Changes an organization; the change is one transaction. */
export const updateOrganization = (
  id: string,
  change: Tenancy.OrganizationChange
): Effect.Effect<Tenancy.Organization, Problem.ApiError, Store.Store> =>
  Effect.flatMap(Store.Store, (store) =>
    store.transaction(Effect.gen(function*() {
      const current = yield* store.getForUpdate(Tenancy.Organizations, id)
      if (current === undefined) return yield* Problem.apiError("NOT_FOUND", `No organization ${id}.`)
      const next = yield* Tenancy.changeOrganization(current, change)
      // Production opens: the same event an approved organization_onboarding application emits.
      if (current.status === "onboarding" && next.status === "active") {
        yield* Outbox.emitEvent({ type: "organization.activated", organizationId: id, environment: "sandbox", data: { organizationId: id, occurredAt: yield* nowIso } })
      }
      return next
    })))

export const listOrganizations: Effect.Effect<ReadonlyArray<Tenancy.Organization>, never, Store.Store> = Effect.flatMap(Store.Store, (store) =>
  store.page(Tenancy.Organizations, { order: "all", partition: "", descending: false, backward: false, from: undefined, limit: 10_000 }))

export interface NewUser {
  readonly id?: string
  readonly organizationId: string
  readonly email: string
  readonly role: UserRole
  readonly emailVerified?: boolean
}

const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export const createUser = (input: NewUser): Effect.Effect<Tenancy.User, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    yield* getOrganization(input.organizationId)
    if (input.id !== undefined && !isId("usr", input.id)) {
      return yield* Problem.apiError("INVALID_OID_FORMAT", "A user id is usr_ followed by 1 to 64 letters or digits.")
    }
    if (!emailPattern.test(input.email)) return yield* Problem.apiError("VALIDATION_ERROR", "The email address is not valid.")
    const user: Tenancy.User = {
      id: (input.id ?? (yield* IdGenerator.newId("usr"))) as UserId,
      organizationId: input.organizationId as OrganizationId,
      email: input.email,
      role: input.role,
      emailVerified: input.emailVerified ?? true,
      createdAt: yield* nowIso,
      removedAt: undefined
    }
    yield* Tenancy.addUser(user).pipe(
      Effect.catchTag("UniqueViolation", (e) =>
        Effect.fail(Problem.apiError(
          e.unique === "email" ? "USER_ALREADY_BELONGS_TO_ORG" : "USER_ALREADY_EXISTS",
          e.unique === "email" ? "A user with this email already belongs to an organization." : `User ${user.id} already exists.`
        )))
    )
    return user
  })

export const getUser = (id: string): Effect.Effect<Tenancy.User, Problem.ApiError, Store.Store> =>
  Effect.flatMap(Store.Store, (store) =>
    Effect.flatMap(store.get(Tenancy.Users, id), (u) =>
      u === undefined || u.removedAt !== undefined ? Effect.fail(Problem.apiError("USER_NOT_FOUND", `No user ${id}.`)) : Effect.succeed(u)))

/** Removes a user and revokes every key the user created, in one transaction. The last admin stays. */
export const removeUser = (id: string): Effect.Effect<{ readonly revokedKeys: number }, Problem.ApiError, Store.Store> =>
  Effect.flatMap(Store.Store, (store) =>
    store.transaction(Effect.gen(function*() {
      const locked = yield* store.getForUpdate(Tenancy.Users, id)
      if (locked === undefined || locked.removedAt !== undefined) return yield* Problem.apiError("USER_NOT_FOUND", `No user ${id}.`)
      const user = locked
      if (user.role === "admin") {
        const colleagues = yield* store.page(Tenancy.Users, { order: "byOrganization", partition: user.organizationId, descending: false, backward: false, from: undefined, limit: 10_000 })
        if (!colleagues.some((u) => u.id !== user.id && u.role === "admin" && u.removedAt === undefined)) {
          return yield* Problem.apiError("LAST_ORG_ADMIN", "The organization's last admin cannot be removed.")
        }
      }
      const now = yield* nowIso
      yield* Tenancy.markRemoved(user, now)
      const keys = yield* store.page(Tenancy.ApiKeys, { order: "byCreator", partition: user.id, descending: false, backward: false, from: undefined, limit: 10_000 })
      let revokedKeys = 0
      for (const key of keys) {
        if (key.revokedAt !== undefined) continue
        yield* Tenancy.revokeKey(key, now)
        revokedKeys++
      }
      return { revokedKeys }
    })))

/** An organization's users, oldest first; removed ones too, with their `removedAt`. */
export const listUsers = (organizationId: string): Effect.Effect<ReadonlyArray<Tenancy.User>, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    yield* getOrganization(organizationId)
    return yield* store.page(Tenancy.Users, { order: "byOrganization", partition: organizationId, descending: false, backward: false, from: undefined, limit: 10_000 })
  })

export interface NewApiKey {
  readonly organizationId: string
  readonly environment: Environment
  /** Defaults to read_only, as the spec says. */
  readonly access?: KeyAccess
  readonly createdBy: string
  readonly ipAllowlist?: ReadonlyArray<string>
  /** A given key (seed file); otherwise one is minted. */
  readonly key?: string
}

export interface CreatedApiKey {
  /** The key in plain text: shown this once, never stored. */
  readonly key: string
  readonly record: Tenancy.ApiKey
}

export const createApiKey = (input: NewApiKey): Effect.Effect<CreatedApiKey, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const organization = yield* getOrganization(input.organizationId)
    const creator = yield* getUser(input.createdBy)
    if (creator.organizationId !== organization.id) {
      return yield* Problem.apiError("USER_NOT_FOUND", `No user ${input.createdBy} in organization ${organization.id}.`)
    }
    if (!organization.apiKeyCreationEnabled) {
      return yield* Problem.apiError("API_KEY_CREATION_DISABLED", "API key creation is not enabled for this organization.")
    }
    const access = input.access ?? "read_only"
    if (access === "read_write" && creator.role !== "admin") {
      return yield* Problem.apiError("API_KEY_WRITE_REQUIRES_ADMIN", "Only an organization admin can create a read-write key.")
    }
    const ipAllowlist = input.ipAllowlist ?? []
    const badCidr = ipAllowlist.find((c) => !Auth.isCidr(c))
    if (badCidr !== undefined) return yield* Problem.apiError("VALIDATION_ERROR", "An IP allowlist entry is not a CIDR range (for example 203.0.113.0/24 or 2001:db8::/32).")
    const key = input.key ?? Tenancy.keyPrefix(input.environment) + (yield* IdGenerator.randomHex(64))
    if (!Tenancy.keyPattern.test(key) || !key.startsWith(Tenancy.keyPrefix(input.environment))) {
      return yield* Problem.apiError("VALIDATION_ERROR", `A ${input.environment} key is ${Tenancy.keyPrefix(input.environment)} followed by 64 lower-case hex characters.`)
    }
    const record: Tenancy.ApiKey = {
      hash: Auth.sha256Hex(key),
      organizationId: organization.id,
      environment: input.environment,
      access,
      createdBy: creator.id,
      ipAllowlist,
      last4: key.slice(-4),
      createdAt: yield* nowIso,
      revokedAt: undefined
    }
    yield* Tenancy.addKey(record).pipe(
      Effect.catchTag("UniqueViolation", () => Effect.fail(Problem.apiError("CONFLICT", "This API key already exists.")))
    )
    return { key, record }
  })

/** Revokes a key given in plain text or as its SHA-256 hash. Revoking a revoked key changes nothing. */
export const revokeApiKey = (keyOrHash: string): Effect.Effect<Tenancy.ApiKey, Problem.ApiError, Store.Store> =>
  Effect.flatMap(Store.Store, (store) =>
    store.transaction(Effect.gen(function*() {
      const hash = Tenancy.keyPattern.test(keyOrHash) ? Auth.sha256Hex(keyOrHash) : keyOrHash.toLowerCase()
      const key = yield* store.getForUpdate(Tenancy.ApiKeys, hash)
      if (key === undefined) return yield* Problem.apiError("NOT_FOUND", "No such API key.")
      if (key.revokedAt !== undefined) return key
      return yield* Tenancy.revokeKey(key, yield* nowIso)
    })))

export const listApiKeys = (organizationId: string): Effect.Effect<ReadonlyArray<Tenancy.ApiKey>, never, Store.Store> =>
  Effect.flatMap(Store.Store, (store) =>
    store.page(Tenancy.ApiKeys, { order: "byOrganization", partition: organizationId, descending: false, backward: false, from: undefined, limit: 10_000 }))

/** The operator token a store's servers share: only its SHA-256 hash is kept, as for API keys. One row. */
export interface StoredOperatorToken {
  readonly id: "operator"
  /** Lower-case hex SHA-256 of the token. */
  readonly sha256: string
  readonly createdAt: string
}

export const OperatorTokens = Store.table<StoredOperatorToken>({ name: "operator_token", key: (r) => r.id })

/** The operator token, which belongs to no organization: a reset keeps it. */
export const domain = Domain.make({ name: "tenancy/Operator", keptTables: [OperatorTokens] })

/**
 * The store's operator token: the one kept already, or else `minted`, kept now (its hash). `minted` tells which:
 * true when `minted` became the token, and only then may it be shown. Several processes starting together on one
 * database agree on the first one kept.
 */
export const keepOperatorToken = (minted: string): Effect.Effect<StoredOperatorToken & { readonly minted: boolean }, never, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const kept = yield* store.get(OperatorTokens, "operator")
    if (kept !== undefined) return { ...kept, minted: false }
    const row: StoredOperatorToken = { id: "operator", sha256: Auth.sha256Hex(minted), createdAt: yield* nowIso }
    return yield* store.insert(OperatorTokens, row).pipe(
      Effect.as({ ...row, minted: true }),
      // Another process kept its token first: that one is the store's.
      Effect.catchTag("UniqueViolation", () =>
        Effect.map(store.get(OperatorTokens, "operator"), (first) => ({ ...(first ?? row), minted: first === undefined })))
    )
  }).pipe(Effect.orDie)
