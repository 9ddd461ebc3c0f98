/**
 * Non-custodial wallets: the rows of a claim, its roster of signers and their ceremonies, their wire shapes, and the
 * reads and moves the claim (Claims.ts) and the roster's outside actors (Ceremonies.ts) share (spec, "Claims, virtual
 * accounts, wallets" and "Wallet signers and ceremonies"; the moves are SignerMachine.ts's and ClaimMachine.ts's).
 * A signer leaving its roster's signing pool is the topic `SignerLeftPool`.
 *
 * Claims.ts and Ceremonies.ts decide what happens; the rows change only through the writes at the end of this
 * module, each with the row of history a change of status leaves, so every way a claim, a signer or a ceremony
 * changes is read here.
 */
import {
  type Chain,
  type ClaimId,
  type ClaimState,
  type CustomerId,
  type Environment,
  maxRosterSize,
  toIso,
  type WalletCeremony as WalletCeremonyWire,
  type WalletId,
  type WalletSigner as WalletSignerWire,
  type WalletSignerId
} from "@fos/contract"
import { Clock, Effect } from "effect"
import type * as Auth from "../tenancy/Auth.ts"
import type * as ClaimMachine from "./ClaimMachine.ts"
import * as Domain from "../kernel/Domain.ts"
import * as History from "../kernel/History.ts"
import * as IdGenerator from "../kernel/IdGenerator.ts"
import * as Outbox from "../kernel/Outbox.ts"
import * as Problem from "../kernel/Problem.ts"
import * as SignerMachine from "./SignerMachine.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Topics from "../kernel/Topics.ts"
import * as Wire from "../kernel/Wire.ts"

// --- storage -----------------------------------------------------------------------------------------------------

export interface Owned {
  readonly organizationId: string
  readonly environment: Environment
  readonly customerId: CustomerId
}

/**
 * A claim's row: its own ids and state, and the roster's settings. Each row of this module keeps the members its
 * wire shape shows as they are, typed by the contract's schema (`Wire.Stored`), and its ids branded.
 */
export interface StoredClaim extends Owned, Wire.Stored<ClaimState, "provisioned"> {
  readonly id: ClaimId
  readonly chains: ReadonlyArray<Chain>
  readonly threshold: number
  readonly signerIds: ReadonlyArray<WalletSignerId>
  readonly status: ClaimMachine.Status
  readonly walletIds: ReadonlyArray<WalletId>
  readonly clientReferenceId: string | undefined
  /** The roster's latest webauthn_origin_change ceremony (SignerMachine.ts `originChange`), if it has had one. */
  readonly originChangeId?: string | undefined
  /** The WebAuthn origin the roster's passkeys sign for, once an origin change completed (else fos's signing origin). */
  readonly webauthnOrigin?: string | undefined
  readonly createdAt: string
  readonly updatedAt: string
}

export interface StoredSigner
  extends Owned, Wire.Stored<WalletSignerWire, "role" | "credentialType" | "passkeyCount" | "email" | "name" | "createdAt" | "updatedAt">
{
  readonly id: WalletSignerId
  readonly claimId: ClaimId
  readonly status: SignerMachine.SignerStatus
  readonly invitationExpiresAt: string
  /** The signer's latest ceremony. */
  readonly ceremonyId: string | undefined
}

export interface StoredCeremony
  extends Owned, Wire.Stored<WalletCeremonyWire, "type" | "status" | "adminVerificationUrl" | "expiresAt" | "createdAt" | "updatedAt">
{
  readonly id: string
  /** The signer it is about; undefined for the roster-wide webauthn_origin_change. */
  readonly walletSignerId: WalletSignerId | undefined
  /** The roster's claim, on a roster-wide ceremony. */
  readonly claimId?: ClaimId | undefined
  /** The origin a webauthn_origin_change moves the roster's passkeys to. */
  readonly origin?: string | undefined
  /** Bumped by each reissued link, so the expiry timer of an older link does nothing. */
  readonly linkVersion: number
}

export const scope = (row: Owned) => Tenancy.scopeOf(row.organizationId, row.environment)
const byCustomer = (row: Owned) => `${scope(row)}/${row.customerId}`

export const Claims = Store.table<StoredClaim>({
  name: "wallet_claims",
  key: (c) => c.id,
  orders: { byCustomer: { partition: byCustomer, sort: (c) => c.createdAt }, byScope: { partition: scope, sort: (c) => c.createdAt, counted: false } }
})

export const WalletSigners = Store.table<StoredSigner>({
  name: "wallet_signers",
  key: (s) => s.id,
  orders: { byClaim: { partition: (s) => s.claimId, sort: (s) => s.createdAt }, byScope: { partition: scope, sort: (s) => s.createdAt, counted: false } }
})

export const WalletCeremonies = Store.table<StoredCeremony>({
  name: "wallet_ceremonies",
  key: (c) => c.id,
  orders: { byScope: { partition: scope, sort: (c) => c.createdAt, counted: false } }
})

/** A sandbox's non-custodial claims, their rosters' signers and their ceremonies (their timers are Claims.ts's and Ceremonies.ts's). */
export const domain = Domain.make({
  name: "signing/Roster",
  tables: [
    { ...Domain.inScope(Claims, "byScope"), counted: "claims" },
    { ...Domain.inScope(WalletSigners, "byScope"), counted: "walletSigners" },
    { ...Domain.inScope(WalletCeremonies, "byScope"), counted: "walletCeremonies" }
  ]
})

/**
 * A signer left its roster's signing pool (removed by ops or by a ceremony), published after it is stored: the
 * signing of transfers fails the transfers the change breaks with roster_changed (TransferSigning.ts
 * `onSignerLeftPool`; Subscriptions.ts names every subscriber). A topic, because TransferSigning.ts imports this
 * module for the roster.
 */
export const SignerLeftPool = Topics.topic<StoredSigner>("fos/SignerLeftPool")

// --- wire --------------------------------------------------------------------------------------------------------

export const signerToWire = (s: StoredSigner): WalletSignerWire =>
  Wire.toWire({
    id: s.id,
    customerId: s.customerId,
    claimId: s.claimId,
    role: s.role,
    credentialType: s.credentialType,
    status: s.status,
    passkeyCount: s.passkeyCount,
    email: s.email,
    name: s.name,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt
  }) as WalletSignerWire

export const ceremonyToWire = (c: StoredCeremony): WalletCeremonyWire => ({
  id: c.id,
  customerId: c.customerId,
  // A roster-wide ceremony is about no one signer: the member is omitted.
  ...(c.walletSignerId === undefined ? {} : { walletSignerId: c.walletSignerId }),
  ...(c.origin === undefined ? {} : { origin: c.origin }),
  type: c.type,
  status: c.status,
  adminVerificationUrl: c.adminVerificationUrl,
  expiresAt: c.expiresAt,
  createdAt: c.createdAt,
  updatedAt: c.updatedAt
})

export const claimStateOf = (c: StoredClaim): ClaimState => ({
  claimId: c.id,
  customerId: c.customerId,
  status: c.status,
  provisioned: c.provisioned,
  walletIds: [...c.walletIds]
})

// --- helpers -----------------------------------------------------------------------------------------------------

export const now = Effect.map(Clock.currentTimeMillis, (ms) => ({ ms, iso: toIso(ms) }))

export const emitRosterEvent = (row: Owned, type: Parameters<typeof Outbox.emitEvent>[0]["type"], data: Record<string, unknown>) =>
  Outbox.emitEvent({ type, organizationId: row.organizationId, environment: row.environment, data })

const opaque = IdGenerator.randomString("0123456789abcdefghjkmnpqrstvwxyz", 24)

export const mintRosterId = <P extends "clm" | "cer">(p: P) => Effect.map(opaque, (o) => `${p}_${o}`)

export const inCallerScope = <R extends Owned>(row: R | undefined, caller: Auth.Caller): row is R =>
  row !== undefined && row.organizationId === caller.organization.id && row.environment === caller.environment

/** The caller's signer, or 404 NOT_FOUND (the spec names no code of its own for a signer). */
export const getSigner = (caller: Auth.Caller, id: WalletSignerId): Effect.Effect<StoredSigner, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const signer = yield* (yield* Store.Store).getForUpdate(WalletSigners, id)
    if (!inCallerScope(signer, caller)) return yield* Problem.apiError("NOT_FOUND", "No wallet signer with this id exists in this organization and environment.")
    return signer
  })

export const getClaimForUpdate = (id: ClaimId) => Effect.flatMap(Store.Store, (store) => store.getForUpdate(Claims, id))

/** The signers of one claim's roster (at most `maxRosterSize`). */
export const rosterOf = (claimId: ClaimId) =>
  Effect.flatMap(Store.Store, (store) =>
    store.page(WalletSigners, { order: "byClaim", partition: claimId, descending: false, backward: false, from: undefined, limit: maxRosterSize }))

/** The table's state for `signer`: its latest ceremony and how many other admins of its roster can act. */
export const rosterState = (signer: StoredSigner) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const ceremony = signer.ceremonyId === undefined ? undefined : yield* store.getForUpdate(WalletCeremonies, signer.ceremonyId)
    const roster = yield* rosterOf(signer.claimId)
    const otherAdmins = roster.filter((s) => s.id !== signer.id && s.role === "admin" && SignerMachine.isActive(s.status)).length
    const state: SignerMachine.RosterState = {
      signer: { status: signer.status, role: signer.role, credentialType: signer.credentialType, passkeyCount: signer.passkeyCount },
      // A signer's latest ceremony is always one of its own (the roster-wide one is the claim's).
      ceremony: ceremony === undefined || ceremony.type === "webauthn_origin_change" ? undefined : { type: ceremony.type, status: ceremony.status },
      otherAdmins
    }
    return { state, ceremony }
  })

/** Runs one move of the table on `signer`, or fails with its refusal. */
export const moveSigner = (signer: StoredSigner, m: SignerMachine.Move) =>
  Effect.gen(function*() {
    const { state, ceremony } = yield* rosterState(signer)
    const outcome = SignerMachine.transition(state, m)
    if ("refused" in outcome) return yield* Problem.apiError(outcome.refused, outcome.reason)
    return { outcome, ceremony }
  })

export const hasSignerEvent = (events: ReadonlyArray<SignerMachine.SignerEvent>, type: SignerMachine.SignerEvent) => events.includes(type)

// --- writes: each in the caller's transaction; an update takes the row as the caller locked it -------------------

/** A new claim, accepted, with its first row of history. */
export const addClaim = (claim: StoredClaim): Effect.Effect<void, never, Store.Store> =>
  Effect.andThen(Effect.orDie(Effect.flatMap(Store.Store, (store) => store.insert(Claims, claim))), History.recordState(undefined, claim))

/** Stores `after`, a move of the claim `before` (ClaimMachine.ts), with its change of status in the history. */
export const saveClaim = (before: StoredClaim, after: StoredClaim): Effect.Effect<void, never, Store.Store> =>
  Effect.andThen(Effect.orDie(Effect.flatMap(Store.Store, (store) => store.update(Claims, after))), History.recordState(before.status, after))

/** The roster's latest webauthn_origin_change ceremony is `ceremonyId` (SignerMachine.ts `originChange` reads it). */
export const recordOriginChange = (claim: StoredClaim, ceremonyId: string, iso: string): Effect.Effect<void, never, Store.Store> =>
  Effect.orDie(Effect.flatMap(Store.Store, (store) => store.update(Claims, { ...claim, originChangeId: ceremonyId, updatedAt: iso })))

/** An origin change completed: the roster's passkeys sign for `origin` from now on. */
export const adoptOrigin = (claim: StoredClaim, origin: string | undefined, iso: string): Effect.Effect<void, never, Store.Store> =>
  Effect.orDie(Effect.flatMap(Store.Store, (store) => store.update(Claims, { ...claim, webauthnOrigin: origin, updatedAt: iso })))

/** A new signer of a claim's roster, invited, with its first row of history. */
export const addSigner = (signer: StoredSigner): Effect.Effect<void, never, Store.Store> =>
  Effect.andThen(Effect.orDie(Effect.flatMap(Store.Store, (store) => store.insert(WalletSigners, signer))), History.recordState(undefined, signer))

/** Stores a move of `signer` (SignerMachine.ts), with its change of status in the history; answers the signer saved. */
export const saveSigner = (signer: StoredSigner, next: Partial<StoredSigner>, iso: string): Effect.Effect<StoredSigner, never, Store.Store> =>
  Effect.gen(function*() {
    const saved: StoredSigner = { ...signer, ...next, updatedAt: iso }
    yield* Effect.orDie((yield* Store.Store).update(WalletSigners, saved))
    yield* History.recordState(signer.status, saved)
    return saved
  })

/** A new ceremony waiting for an admin, with its first row of history (its expiry timer is Ceremonies.ts's). */
export const addCeremony = (ceremony: StoredCeremony): Effect.Effect<void, never, Store.Store> =>
  Effect.andThen(Effect.orDie(Effect.flatMap(Store.Store, (store) => store.insert(WalletCeremonies, ceremony))), History.recordState(undefined, ceremony))

/**
 * A fresh admin approval link for a waiting ceremony: its `linkVersion` bumped, so the expiry timer of the older link
 * does nothing. Answers the ceremony reissued.
 */
export const reissueLink = (
  ceremony: StoredCeremony,
  link: Pick<StoredCeremony, "adminVerificationUrl" | "expiresAt">,
  iso: string
): Effect.Effect<StoredCeremony, never, Store.Store> =>
  Effect.gen(function*() {
    const reissued: StoredCeremony = {
      ...ceremony,
      adminVerificationUrl: link.adminVerificationUrl,
      expiresAt: link.expiresAt,
      linkVersion: ceremony.linkVersion + 1,
      updatedAt: iso
    }
    yield* Effect.orDie((yield* Store.Store).update(WalletCeremonies, reissued))
    return reissued
  })

/** The ceremony ends `status` (completed, failed or cancelled), with its change in the history; answers it closed. */
export const closeCeremony = (ceremony: StoredCeremony, status: SignerMachine.CeremonyStatus, iso: string): Effect.Effect<StoredCeremony, never, Store.Store> =>
  Effect.gen(function*() {
    const closed: StoredCeremony = { ...ceremony, status, updatedAt: iso }
    yield* Effect.orDie((yield* Store.Store).update(WalletCeremonies, closed))
    yield* History.recordState(ceremony.status, closed)
    return closed
  })
