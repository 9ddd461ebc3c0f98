/**
 * Organizations, users and keys as a caller sees them: the environments, the vocabularies of statuses, roles and
 * key access, and `GET /v2/portal/users/me`.
 */
import { Schema } from "effect"

export const Environments = ["sandbox", "live"] as const
export type Environment = typeof Environments[number]

/** `onboarding`: sandbox only; `active`: production open; `suspended`: keys and users refused. */
export const OrganizationStatus = Schema.Literals(["onboarding", "active", "suspended"])
export type OrganizationStatus = typeof OrganizationStatus.Type

export const UserRole = Schema.Literals(["admin", "developer"])
export type UserRole = typeof UserRole.Type

export const KeyAccess = Schema.Literals(["read_only", "read_write"])
export type KeyAccess = typeof KeyAccess.Type

/** The caller: its user, its organization and the key it called with. */
export const Me = Schema.Struct({
  user: Schema.Struct({
    id: Schema.String,
    email: Schema.String,
    role: UserRole,
    emailVerified: Schema.Boolean,
    createdAt: Schema.String
  }),
  organization: Schema.Struct({
    id: Schema.String,
    name: Schema.String,
    status: OrganizationStatus,
    features: Schema.Array(Schema.String),
    createdAt: Schema.String
  }),
  apiKey: Schema.Struct({
    access: KeyAccess,
    environment: Schema.Literals(Environments),
    last4: Schema.String
  })
}).annotate({ identifier: "Me", description: "The calling user and their organization." })
export type Me = typeof Me.Type
