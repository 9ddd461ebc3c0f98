/**
 * The seed file (DESIGN.md §2) and the first-start demo organization.
 *
 * A seed is validated whole and applied in one transaction: a bad seed writes nothing. Keys are given in plain
 * text and stored only as hashes. Without a seed, a first start on an empty store creates one demo organization
 * and returns its new sandbox and live read-write keys, to be printed once.
 */
import { Effect, Schema } from "effect"
import * as Operator from "./Operator.ts"
import * as Problem from "../kernel/Problem.ts"
import * as RandomStreams from "../kernel/RandomStreams.ts"
import * as RefusedText from "../kernel/RefusedText.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "./Tenancy.ts"
import * as Wire from "../kernel/Wire.ts"

import { AssetCodes, Chains, Country, type ErrorEntry, KeyAccess, OrderDirections, OrganizationStatus, PayoutRails, UserRole } from "@fos/contract"

const SeedUser = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  role: UserRole,
  emailVerified: Schema.optionalKey(Schema.Boolean)
})

const SeedKey = Schema.Struct({
  key: Schema.String,
  access: Schema.optionalKey(KeyAccess),
  createdBy: Schema.String,
  ipAllowlist: Schema.optionalKey(Schema.Array(Schema.String))
})

const SeedOrganization = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  status: Schema.optionalKey(OrganizationStatus),
  sandboxProvisioned: Schema.optionalKey(Schema.Boolean),
  apiKeyCreationEnabled: Schema.optionalKey(Schema.Boolean),
  features: Schema.optionalKey(Schema.Array(Schema.String)),
  rateLimit: Schema.optionalKey(Schema.Struct({ sustainedPerSecond: Schema.Number, burst: Schema.Number })),
  users: Schema.optionalKey(Schema.Array(SeedUser)),
  apiKeys: Schema.optionalKey(Schema.Array(SeedKey))
})

const Milliseconds = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 365 * 24 * 3600_000 }, { fosDetail: "must be a whole number of milliseconds up to a year" }))
const Decimal = Schema.String.check(Schema.isPattern(/^(0|[1-9]\d*)(\.\d+)?$/, { fosDetail: "must be a non-negative decimal string such as 10.50" }))
const partialOf = <K extends string, S extends Schema.Top>(keys: ReadonlyArray<K>, value: S) =>
  Schema.Struct(Object.fromEntries(keys.map((key) => [key, Schema.optionalKey(value)])) as { readonly [P in K]: Schema.optionalKey<S> })
const PositiveDecimal = Decimal.check(Schema.makeFilter((s: string) => !/^0(\.0+)?$/.test(s), { fosDetail: "must be greater than zero" }))
const Hour = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 23 }, { fosDetail: "must be an hour from 0 to 23" }))
const SeedSettlement = Schema.Union([
  Schema.Struct({ afterMs: Milliseconds }),
  Schema.Struct({ nextBusinessDayAtHourUtc: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 23 }, { fosDetail: "must be an hour from 0 to 23" })) })
])

/** The world model's money rules a seed may change (docs/money.md has the defaults); the rest keeps its default. */
const SeedWorldModel = Schema.Struct({
  chainSettlementMs: Schema.optionalKey(partialOf(Chains, Milliseconds)),
  railSettlement: Schema.optionalKey(partialOf(PayoutRails, SeedSettlement)),
  confirmationMs: Schema.optionalKey(Milliseconds),
  inboundFee: Schema.optionalKey(partialOf(PayoutRails, Decimal)),
  dustFloor: Schema.optionalKey(partialOf(AssetCodes, Decimal)),
  rotationForwardingMs: Schema.optionalKey(Milliseconds),
  senderInformationWindowMs: Schema.optionalKey(Milliseconds),
  // A pair's rule ("USD/USDC"): its mid rate and the service's spread; null removes the pair's default rule.
  pricing: Schema.optionalKey(Schema.Record(
    Schema.String.check(Schema.makeFilter((k: string) => {
      const [source, destination, ...rest] = k.split("/")
      return rest.length === 0 && (AssetCodes as ReadonlyArray<string>).includes(source ?? "") &&
        (AssetCodes as ReadonlyArray<string>).includes(destination ?? "")
    }, { fosDetail: "must name a pair as SOURCE/DESTINATION asset codes, such as USD/USDC" })),
    Schema.NullOr(Schema.Struct({
      mid: PositiveDecimal,
      spreadBps: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 9_999 }, { fosDetail: "must be a whole number of basis points from 0 to 9999" }))
    }))
  )),
  fxMarket: Schema.optionalKey(Schema.Struct({ closesFridayAtHourUtc: Hour, opensSundayAtHourUtc: Hour })),
  orderFeeBps: Schema.optionalKey(partialOf(OrderDirections, Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 1_000 }, { fosDetail: "must be a whole number of basis points from 0 to 1000" })))),
  quoteTtlMs: Schema.optionalKey(Milliseconds),
  orderLockMs: Schema.optionalKey(Milliseconds),
  orderStartMs: Schema.optionalKey(Milliseconds),
  orderSettlementMs: Schema.optionalKey(partialOf(OrderDirections, Milliseconds)),
  orderBounds: Schema.optionalKey(partialOf(AssetCodes, Schema.Struct({ min: PositiveDecimal, max: PositiveDecimal }))),
  payouts: Schema.optionalKey(Schema.Struct({
    railFee: Schema.optionalKey(partialOf(PayoutRails, Decimal)),
    networkFee: Schema.optionalKey(partialOf(AssetCodes, Decimal)),
    complianceMs: Schema.optionalKey(Milliseconds),
    sendMs: Schema.optionalKey(Milliseconds),
    reviewMs: Schema.optionalKey(Milliseconds),
    reviewThreshold: Schema.optionalKey(partialOf(AssetCodes, Decimal)),
    reviewCountries: Schema.optionalKey(Schema.Array(Country).check(Schema.isMaxLength(300))),
    reviewNewRecipients: Schema.optionalKey(Schema.Boolean),
    travelRuleThreshold: Schema.optionalKey(partialOf(AssetCodes, Decimal)),
    lateReferenceMs: Schema.optionalKey(Milliseconds)
  })),
  rfiDeadlineMs: Schema.optionalKey(Milliseconds)
})

export const SeedFile = Schema.Struct({ organizations: Schema.Array(SeedOrganization), worldModel: Schema.optionalKey(SeedWorldModel) })
export type SeedFile = typeof SeedFile.Type

/** Parses and validates seed text; the error names the first problem with its JSON Pointer. */
export const parse = (text: string): Effect.Effect<SeedFile, Problem.ApiError> =>
  Effect.suspend(() => {
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      return Effect.fail(Problem.apiError("MALFORMED_JSON", "The seed file is not valid JSON."))
    }
    return Schema.decodeUnknownEffect(SeedFile)(json, { onExcessProperty: "error" }).pipe(
      Effect.mapError((e) => invalidSeed(Wire.decodeFailure(e.issue).errors)),
      Effect.tap(refused)
    )
  })

/** A seed's VALIDATION_ERROR: its first problem in the detail, with its pointer, and every problem in errors[]. */
const invalidSeed = (errors: ReadonlyArray<ErrorEntry>): Problem.ApiError =>
  Problem.apiError("VALIDATION_ERROR", `Seed file: ${errors[0]!.pointer || "/"} ${errors[0]!.detail}.`, { errors })

/**
 * Fails when a string of the seed holds text the API refuses (a NUL character, an unpaired surrogate:
 * kernel/RefusedText.ts), which the memory store would keep and PostgreSQL refuse at the commit.
 */
const refused = (seed: SeedFile): Effect.Effect<void, Problem.ApiError> => {
  const errors = RefusedText.refusedTextErrors(seed)
  return errors.length === 0 ? Effect.void : Effect.fail(invalidSeed(errors))
}

/**
 * Applies a seed in one transaction; any error leaves the store as it was. Several processes of one deployment
 * start with the same seed, so a seed whose organizations all exist already is skipped; one that only some of
 * them exist for is refused, since it cannot be applied whole. Processes that start together race: the one whose
 * insert meets another's committed organization (a CONFLICT) decides again on what is there now, and finds the
 * seed applied.
 */
export const apply = (seed: SeedFile): Effect.Effect<"applied" | "already applied", Problem.ApiError, Store.Store> =>
  Effect.andThen(refused(seed), applyOnce(seed).pipe(Effect.catchIf((e) => e.code === "CONFLICT", () => applyOnce(seed))))

const applyOnce = (seed: SeedFile): Effect.Effect<"applied" | "already applied", Problem.ApiError, Store.Store> =>
  Effect.flatMap(Store.Store, (store) =>
    store.transaction(Effect.gen(function*() {
      const existing: Array<string> = []
      for (const org of seed.organizations) if ((yield* store.get(Tenancy.Organizations, org.id)) !== undefined) existing.push(org.id)
      if (existing.length > 0 && existing.length === seed.organizations.length) return "already applied" as const
      if (existing.length > 0) {
        return yield* Problem.apiError("CONFLICT", `Seed file: organization ${existing[0]} already exists but others of the seed do not; the seed cannot be applied whole.`)
      }
      for (const [i, org] of seed.organizations.entries()) {
        const at = (detail: string) => Effect.mapError((e: Problem.ApiError) => Problem.apiError(e.code, `Seed file: /organizations/${i}${detail}: ${e.detail}`))
        yield* Operator.createOrganization({
          id: org.id,
          name: org.name,
          ...(org.status === undefined ? {} : { status: org.status }),
          ...(org.sandboxProvisioned === undefined ? {} : { sandboxProvisioned: org.sandboxProvisioned }),
          ...(org.apiKeyCreationEnabled === undefined ? {} : { apiKeyCreationEnabled: org.apiKeyCreationEnabled }),
          ...(org.features === undefined ? {} : { features: org.features }),
          ...(org.rateLimit === undefined ? {} : { rateLimit: org.rateLimit })
        }).pipe(at(""))
        for (const [j, user] of (org.users ?? []).entries()) {
          yield* Operator.createUser({ ...user, organizationId: org.id }).pipe(at(`/users/${j}`))
        }
        for (const [j, key] of (org.apiKeys ?? []).entries()) {
          const environment = key.key.startsWith("ck_live_") ? "live" : "sandbox"
          yield* Operator.createApiKey({
            organizationId: org.id,
            environment,
            access: key.access ?? "read_only",
            createdBy: key.createdBy,
            ipAllowlist: key.ipAllowlist ?? [],
            key: key.key
          }).pipe(at(`/apiKeys/${j}`))
        }
      }
      return "applied" as const
    })))

export interface DemoOrganization {
  readonly organizationId: string
  readonly sandboxKey: string
  readonly liveKey: string
}

/**
 * On an empty store, creates the demo organization and returns its keys; otherwise does nothing. On a seeded engine
 * it draws from a stream of its own, so the ids the operator's calls mint afterwards are those an engine with no demo
 * organization mints.
 */
export const ensureDemoOrganization: Effect.Effect<DemoOrganization | undefined, never, Store.Store> = Effect.flatMap(Store.Store, (store) =>
  store.transaction(Effect.gen(function*() {
    if ((yield* Operator.listOrganizations).length > 0) return undefined
    const org = yield* Operator.createOrganization({ name: "Demo organization", status: "active", sandboxProvisioned: true })
    const admin = yield* Operator.createUser({ organizationId: org.id, email: "admin@demo.fos.test", role: "admin" })
    const sandbox = yield* Operator.createApiKey({ organizationId: org.id, environment: "sandbox", access: "read_write", createdBy: admin.id })
    const live = yield* Operator.createApiKey({ organizationId: org.id, environment: "live", access: "read_write", createdBy: admin.id })
    return { organizationId: org.id, sandboxKey: sandbox.key, liveKey: live.key }
  }).pipe(Effect.orDie))).pipe(RandomStreams.withStream(RandomStreams.demoStream))
