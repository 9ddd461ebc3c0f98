/**
 * The non-custodial claim: accepting it, inviting its roster, provisioning its wallets and resolving it (spec,
 * "Claims, virtual accounts, wallets"). Its rows are Roster.ts's; the roster's outside actors are Ceremonies.ts's.
 *
 * | State | Trigger | Next | Also |
 * |---|---|---|---|
 * | claim accepted (202) | every roster signer enrolled and wallets activated | resolved | claim.completed, then crypto_wallet.completed when the end user has finished |
 * | claim accepted (202) | provisioning fails | failed | claim.failed |
 *
 * - `POST /v2/customers/{customerId}/wallets/claim-non-custodial` takes the chains, the roster and the threshold.
 *   Problems of the roster or the threshold are 400 VALIDATION_ERROR with a pointer each, a chain that cannot hold a
 *   non-custodial wallet (Stellar) is 422 NON_CUSTODIAL_SOURCE_NOT_SUPPORTED, a customer whose jurisdiction is not
 *   offered crypto wallets (or who is restricted) is 422 UNPROCESSABLE_ENTITY, and so is a chain without an approved
 *   crypto_wallet application; a customer with a claim pending or resolved is 409 CONFLICT. All of these write and
 *   emit nothing. Otherwise 202: each signer is invited (wallet_signer.added and wallet_signer.invited) and the
 *   wallet provider starts provisioning.
 * - Provisioning succeeds on its own after `provisioningMs` (a durable timer), or as the simulate call says; a
 *   failure fails the claim (claim.failed) and its roster with it (its signers can no longer enroll).
 * - The claim's status moves only through ClaimMachine.ts (`transition`), the table above as one pure function.
 * - When the claim is provisioned and every signer of its roster (not removed) has enrolled, its wallets open (one
 *   per chain, custody non_custodial, wallet.created each), then claim.completed with their ids and
 *   crypto_wallet.completed: the end user's part ends with the last enrollment, so both come in that transaction.
 */
import {
  type ClaimAccepted,
  ClaimId,
  type ClaimNonCustodial,
  type ClaimState,
  type CustomerId,
  type ErrorEntry,
  maxRosterSize,
  toIso,
  type WalletId,
  withArticle
} from "@fos/contract"
import { Effect, Schema } from "effect"
import type * as Auth from "../tenancy/Auth.ts"
import * as ClaimMachine from "./ClaimMachine.ts"
import * as Customers from "../onboarding/Customers.ts"
import * as Domain from "../kernel/Domain.ts"
import * as IdGenerator from "../kernel/IdGenerator.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Requirements from "../onboarding/Requirements.ts"
import * as Roster from "./Roster.ts"
import * as Settings from "./Settings.ts"
import * as SignerMachine from "./SignerMachine.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Timers from "../kernel/Timers.ts"
import * as Wallets from "../money/Wallets.ts"
import * as Wire from "../kernel/Wire.ts"

/** The wallet provider's provisioning of a claim, on time: `provisioningMs` after the claim is accepted. */
export const provisioningTimer = Timers.kind("signing.claim_provisioning", Schema.Struct({ claimId: ClaimId }), "claimId")

// --- the claim ---------------------------------------------------------------------------------------------------

const rosterProblems = (body: ClaimNonCustodial): ReadonlyArray<ErrorEntry> => {
  const errors: Array<ErrorEntry> = []
  if (body.roster.length > maxRosterSize) errors.push({ pointer: "/roster", detail: `must name at most ${maxRosterSize} signers` })
  const emails = new Set<string>()
  body.roster.forEach((entry, i) => {
    if (entry.credentialType === "passkey") {
      if (entry.email === undefined) errors.push({ pointer: `/roster/${i}/email`, detail: "is required for a passkey signer" })
      else if (emails.has(entry.email.toLowerCase())) errors.push({ pointer: `/roster/${i}/email`, detail: "names a signer already on the roster" })
      else emails.add(entry.email.toLowerCase())
    } else {
      if (entry.email !== undefined) errors.push({ pointer: `/roster/${i}/email`, detail: "is only for passkey signers" })
      if (entry.name === undefined) errors.push({ pointer: `/roster/${i}/name`, detail: "is required for an api_key signer" })
    }
  })
  if (!body.roster.some((entry) => entry.role === "admin")) errors.push({ pointer: "/roster", detail: "must include at least one admin" })
  if (body.threshold < 1 || body.threshold > body.roster.length) {
    errors.push({ pointer: "/threshold", detail: `must be from 1 to the number of signers on the roster (${body.roster.length})` })
  }
  body.chains.forEach((chain, i) => {
    if (body.chains.indexOf(chain) !== i) errors.push({ pointer: `/chains/${i}`, detail: "names a chain twice" })
  })
  return errors
}

/**
 * `POST /v2/customers/{customerId}/wallets/claim-non-custodial`. Its refusals come in a fixed order, the precedence
 * the spec's error table implies (docs/signing.md, "The order of a claim's refusals"); a request that breaks two
 * rules gets the first:
 * 1. the request alone, before anything is read: its roster, threshold and chains (400 VALIDATION_ERROR), then a
 *    chain where non-custodial wallets cannot sign (422 NON_CUSTODIAL_SOURCE_NOT_SUPPORTED);
 * 2. the path's customer (404 CUSTOMER_NOT_FOUND, 422 CUSTOMER_NOT_ONBOARDED);
 * 3. the customer's state: its jurisdiction, a restriction, then each chain's approved crypto_wallet application
 *    (422 UNPROCESSABLE_ENTITY), then a claim of its own pending or resolved (409 CONFLICT).
 */
export const claimNonCustodial = (caller: Auth.Caller, customerId: CustomerId, body: ClaimNonCustodial): Effect.Effect<ClaimAccepted, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const problems = rosterProblems(body)
    if (problems.length > 0) return yield* Problem.invalidRequest(problems)
    const unsupported = body.chains.find((c) => !Wallets.nonCustodialChains.includes(c))
    if (unsupported !== undefined) {
      return yield* Problem.apiError(
        "NON_CUSTODIAL_SOURCE_NOT_SUPPORTED",
        `Non-custodial wallets are offered on ${Wallets.nonCustodialChains.join(", ")}; not on ${unsupported}.`
      )
    }
    const customer = yield* Wallets.onboardedCustomer(caller, customerId)
    if (!Requirements.cryptoEligible(customer)) return yield* Problem.apiError("UNPROCESSABLE_ENTITY", "Crypto wallets are not offered in the customer's jurisdiction.")
    if (customer.status !== "active") return yield* Problem.apiError("UNPROCESSABLE_ENTITY", "The customer is restricted; a claim cannot start.")
    for (const chain of body.chains) {
      if (!(yield* Wallets.cryptoWalletApproved(caller, customerId, chain))) return yield* Wallets.noCryptoWalletFeature(chain)
    }
    // The customer's row lock serialises its claims, so two at once cannot both pass the check below.
    yield* store.getForUpdate(Customers.Customers, customerId)
    const earlier = yield* store.page(Roster.Claims, {
      order: "byCustomer",
      partition: `${Tenancy.scopeOf(caller.organization.id, caller.environment)}/${customerId}`,
      descending: true,
      backward: false,
      from: undefined,
      limit: 1
    })
    if (earlier[0] !== undefined && earlier[0].status !== "failed") {
      return yield* Problem.apiError("CONFLICT", `The customer already has ${withArticle(earlier[0].status)} claim (${earlier[0].id}); its roster signs for its wallets.`)
    }
    const at = yield* Roster.now
    const owner = { organizationId: caller.organization.id, environment: caller.environment, customerId }
    const claimId = (yield* Roster.mintRosterId("clm")) as ClaimId
    const invitationExpiresAt = toIso(at.ms + Settings.signingSettings.invitationTtlMs)
    const signers: Array<Roster.StoredSigner> = []
    for (const entry of body.roster) {
      const signer: Roster.StoredSigner = {
        ...owner,
        id: yield* IdGenerator.newId("wsg"),
        claimId,
        role: entry.role,
        credentialType: entry.credentialType,
        status: "pending_activation",
        passkeyCount: 0,
        email: entry.email,
        name: entry.name,
        invitationExpiresAt,
        ceremonyId: undefined,
        createdAt: at.iso,
        updatedAt: at.iso
      }
      // The table's invite: wallet_signer.added with wallet_signer.invited.
      const outcome = SignerMachine.transition({ signer: undefined, ceremony: undefined, otherAdmins: 0 }, { type: "invite", role: signer.role, credentialType: signer.credentialType })
      if ("refused" in outcome) return yield* Effect.die(new Error(`invite refused: ${outcome.reason}`))
      yield* Roster.addSigner(signer)
      yield* Roster.emitRosterEvent(signer, "wallet_signer.added", { walletSignerId: signer.id, customerId, role: signer.role, credentialType: signer.credentialType, occurredAt: at.iso })
      yield* Roster.emitRosterEvent(signer, "wallet_signer.invited", {
        walletSignerId: signer.id,
        customerId,
        verificationUrl: `${Settings.signingSettings.signingOrigin}/enroll/${yield* IdGenerator.randomString("0123456789abcdef", 32)}`,
        expiresAt: invitationExpiresAt,
        occurredAt: at.iso
      })
      signers.push(signer)
    }
    const claim: Roster.StoredClaim = {
      ...owner,
      id: claimId,
      chains: body.chains,
      threshold: body.threshold,
      signerIds: signers.map((s) => s.id),
      ...ClaimMachine.initialState,
      walletIds: [],
      clientReferenceId: body.clientReferenceId,
      createdAt: at.iso,
      updatedAt: at.iso
    }
    yield* Roster.addClaim(claim)
    yield* Timers.schedule(provisioningTimer, at.ms + Settings.signingSettings.provisioningMs, { claimId }, Roster.scope(claim))
    return Wire.toWire({
      claimId,
      customerId,
      status: "pending" as const,
      chains: [...body.chains],
      threshold: body.threshold,
      signers: signers.map(Roster.signerToWire),
      clientReferenceId: body.clientReferenceId,
      createdAt: at.iso
    }) as ClaimAccepted
  })

/** Resolves the claim once it is provisioned and every signer of its roster can act. */
export const resolveIfReady = (claim: Roster.StoredClaim) =>
  Effect.gen(function*() {
    if (claim.status !== "pending" || !claim.provisioned) return claim
    const roster = (yield* Roster.rosterOf(claim.id)).filter((s) => s.status !== "removed")
    const outcome = ClaimMachine.transition(claim, { type: "resolve", rosterSize: roster.length, rosterActive: roster.every((s) => SignerMachine.isActive(s.status)) })
    if ("refused" in outcome) return claim
    const walletIds: Array<WalletId> = []
    for (const chain of claim.chains) {
      const wallet = yield* Effect.orDie(Wallets.open(claim, claim.customerId, chain, undefined, "non_custodial"))
      walletIds.push(wallet.id)
    }
    const at = yield* Roster.now
    const resolved: Roster.StoredClaim = { ...claim, ...outcome.next, walletIds, updatedAt: at.iso }
    yield* Roster.saveClaim(claim, resolved)
    yield* Roster.emitRosterEvent(claim, "claim.completed", { claimId: claim.id, customerId: claim.customerId, walletIds, occurredAt: at.iso })
    yield* Roster.emitRosterEvent(claim, "crypto_wallet.completed", { customerId: claim.customerId, claimId: claim.id, occurredAt: at.iso })
    return resolved
  })

/** The provider's answer: provisioned (then the claim resolves if its roster has enrolled), or failed. */
const provision = (claim: Roster.StoredClaim, outcome: "succeeded" | "failed") =>
  Effect.gen(function*() {
    const at = yield* Roster.now
    const moved = ClaimMachine.transition(claim, { type: outcome === "succeeded" ? "provisioned" : "provisioning_failed" })
    if ("refused" in moved) return yield* Effect.die(new Error(`claim ${claim.id}: ${moved.reason}`))
    if (outcome === "succeeded") {
      const provisioned: Roster.StoredClaim = { ...claim, ...moved.next, updatedAt: at.iso }
      yield* Roster.saveClaim(claim, provisioned)
      return yield* resolveIfReady(provisioned)
    }
    const failed: Roster.StoredClaim = { ...claim, ...moved.next, updatedAt: at.iso }
    yield* Roster.saveClaim(claim, failed)
    yield* Roster.emitRosterEvent(claim, "claim.failed", {
      claimId: claim.id,
      customerId: claim.customerId,
      failureCode: "provisioning_failed",
      failureMessage: "The non-custodial wallets could not be provisioned. Start a new claim.",
      occurredAt: at.iso
    })
    return failed
  })

const provisionOnTime = (payload: { readonly claimId: ClaimId }) =>
  Effect.gen(function*() {
    const claim = yield* Roster.getClaimForUpdate(payload.claimId)
    if (claim === undefined || claim.status !== "pending" || claim.provisioned) return
    yield* provision(claim, "succeeded")
  })

/** `POST /sandbox/v2/simulate/claims/{claimId}/provisioning`: the wallet provider answers before its own time. */
export const simulateProvisioning = (caller: Auth.Caller, claimId: ClaimId, outcome: "succeeded" | "failed"): Effect.Effect<ClaimState, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const claim = yield* Roster.getClaimForUpdate(claimId)
    if (!Roster.inCallerScope(claim, caller)) return yield* Problem.apiError("NOT_FOUND", "No claim with this id exists in this organization and environment.")
    const refusal = ClaimMachine.transition(claim, { type: outcome === "succeeded" ? "provisioned" : "provisioning_failed" })
    if ("refused" in refusal) return yield* Problem.apiError(refusal.refused, refusal.reason)
    return Roster.claimStateOf(yield* provision(claim, outcome))
  })

/** The wallet provider's provisioning of each claim, on time (the claims' rows are Roster.ts's). */
export const domain = Domain.make({
  name: "signing/Claims",
  timers: [Timers.handle(provisioningTimer, provisionOnTime, (id) => `provisions claim ${id}'s wallets (the wallet provider answers)`)]
})
