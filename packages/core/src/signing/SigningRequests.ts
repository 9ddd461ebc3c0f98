/**
 * Signing requests: how a machine signer (an api_key credential of the roster) sees and signs a transfer's attempt
 * (spec, transaction.awaiting_signature `signingRequestId`; `GET /v2/signing-requests/{id}`, `/approve`, `/reject`).
 * Each attempt of a programmatic signing has one (TransferSigning.ts opens it with the attempt); its status is read
 * from the transfer's signing as it stands: pending while the attempt waits, approved at quorum (or once a recovery
 * replaced the transfer's own signing), expired when a later attempt took over or the last window closed, cancelled
 * with its transfer, failed otherwise. A stamp or a decline goes through the same table as a passkey signer's
 * (TransferSigning.ts `decideStamp`).
 */
import { type SigningRequest as SigningRequestWire, type SigningRequestId } from "@fos/contract"
import { Effect } from "effect"
import type * as Auth from "../tenancy/Auth.ts"
import * as Problem from "../kernel/Problem.ts"
import type * as Roster from "./Roster.ts"
import * as SigningMachine from "./SigningMachine.ts"
import * as Store from "../kernel/Store.ts"
import * as TransactionMachine from "../money/TransactionMachine.ts"
import * as Transactions from "../money/Transactions.ts"
import * as TransferSigning from "./TransferSigning.ts"

const requestNotFound = () =>
  Problem.apiError("COSIGN_ACTIVITY_NOT_FOUND", "No signing request with this id exists in this organization and environment.")

const requestOf = (caller: Auth.Caller, id: SigningRequestId) =>
  Effect.gen(function*() {
    const row = yield* (yield* Store.Store).get(TransferSigning.SigningRequests, id)
    if (row === undefined || row.organizationId !== caller.organization.id || row.environment !== caller.environment) return yield* requestNotFound()
    return row
  })

/** Whether the request belongs to the transaction's current signing (a recovery replaces the transfer's own). */
const ofCurrentSigning = (row: TransferSigning.StoredSigningRequest, signing: TransferSigning.TransferSigning | undefined) =>
  (row.recovery === true) === (signing?.recovery !== undefined)

const requestStatus = (row: TransferSigning.StoredSigningRequest, t: Transactions.StoredTransaction, signing: TransferSigning.TransferSigning): SigningRequestWire["status"] => {
  const state = signing.state
  // The transfer's own signing met its quorum before the receive policy held it.
  if (!ofCurrentSigning(row, signing)) return "approved"
  if (state.attempt !== row.attempt) return "expired"
  if (state.phase === "quorum_met") return "approved"
  if (t.status === "cancelled") return "cancelled"
  if (state.phase === "failed") return state.failureCode === "user_signature_expired" ? "expired" : "failed"
  return TransactionMachine.terminalStatuses.has(t.status) ? "failed" : "pending"
}

const requestToWire = (row: TransferSigning.StoredSigningRequest, t: Transactions.StoredTransaction, signing: TransferSigning.TransferSigning): SigningRequestWire => {
  const state = signing.state
  const current = state.attempt === row.attempt && ofCurrentSigning(row, signing)
  const signedBy = current ? [...state.collected] : []
  return {
    id: row.id,
    transactionId: row.transactionId,
    customerId: row.customerId,
    walletId: row.walletId,
    signingMode: row.signingMode,
    attempt: row.attempt,
    status: requestStatus(row, t, signing),
    collected: signedBy.length,
    required: state.required,
    signedBy,
    transfer: { source: t.source, destination: t.destination },
    expiresAt: row.expiresAt,
    createdAt: row.createdAt
  }
}

const alreadyDecided = (why: string) => Problem.apiError("CONFLICT", `The signing request was already decided: ${why}.`)

/** `GET /v2/signing-requests/{id}`. */
export const get = (caller: Auth.Caller, id: SigningRequestId): Effect.Effect<SigningRequestWire, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const row = yield* requestOf(caller, id)
    const store = yield* Store.Store
    const t = yield* store.get(Transactions.Transactions, row.transactionId)
    const signing = yield* store.get(TransferSigning.TransferSignings, row.transactionId)
    if (t === undefined || signing === undefined) return yield* requestNotFound()
    return requestToWire(row, t, signing)
  })

/**
 * `POST /v2/signing-requests/{id}/approve` and `/reject`: a machine signer (by its session) stamps or declines the
 * request's attempt. A request of an attempt that is no longer the latest is 409 CONFLICT (it exists, so not 404);
 * a passkey signer's session is 403 FORBIDDEN (a person signs at the verificationUrl). A request already decided
 * (its transfer met its quorum, its signing failed, or its transfer ended) is 409 CONFLICT too, "state conflict" in
 * the spec's catalog: RESOURCE_TERMINAL is the catalog's code for a simulate call against a terminal entity, and
 * this is no simulate call.
 *
 * Its refusals come in a fixed order, the precedence the spec's error table implies (docs/signing.md, "The order of
 * a signing request's refusals"); a request that breaks two rules gets the first:
 * 1. the session (401 SIGNER_SESSION_INVALID, the handler's `Sessions.signerOf`), then its kind of signer, known
 *    before anything is read: a passkey signer's (403 FORBIDDEN);
 * 2. the request (404 COSIGN_ACTIVITY_NOT_FOUND), then the signer's roster: a signer of another roster is outside
 *    the transfer's pool (409 CONFLICT, `SigningMachine.notInPool`), whatever the request's state;
 * 3. the request's state: its attempt no longer the latest, its transfer's quorum met, its signing failed or its
 *    transfer ended (409 CONFLICT), then the table's own refusals (a second stamp of the attempt, 409 CONFLICT).
 */
export const decide = (
  caller: Auth.Caller,
  id: SigningRequestId,
  signer: Roster.StoredSigner,
  decision: TransferSigning.SignerDecision
): Effect.Effect<SigningRequestWire, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    if (signer.credentialType !== "api_key") {
      return yield* Problem.apiError("FORBIDDEN", "A passkey signer signs at the transfer's verificationUrl; signing requests are for machine signers.")
    }
    const row = yield* requestOf(caller, id)
    const t = yield* Transactions.get(caller, row.transactionId, true)
    const signing = yield* TransferSigning.signingOf(t.id)
    // The table refuses a signer outside the pool too (TransferSigning.decideStamp), but only after the checks of
    // the request's state below: asked here, a signer of another roster gets the same answer whatever that state is.
    if (signing !== undefined && signer.claimId !== signing.claimId) return yield* Problem.apiError("CONFLICT", SigningMachine.notInPool)
    if (!ofCurrentSigning(row, signing)) return yield* alreadyDecided("its transfer met its quorum")
    if (signing !== undefined && signing.state.attempt !== row.attempt && !TransactionMachine.terminalStatuses.has(t.status)) {
      return yield* Problem.apiError("CONFLICT", `The request's attempt ${row.attempt} expired; the transfer's signing is at attempt ${signing.state.attempt}.`)
    }
    if (signing?.state.phase === "quorum_met") return yield* alreadyDecided("its transfer met its quorum")
    if (signing?.state.phase === "failed") return yield* alreadyDecided(`its transfer's signing failed (${signing.state.failureCode})`)
    if (TransactionMachine.terminalStatuses.has(t.status)) return yield* alreadyDecided(`its transfer has already ended (status ${t.status})`)
    const decided = yield* TransferSigning.decideStamp(t, signer, decision, row.attempt, "accepted")
    return requestToWire(row, decided, (yield* (yield* Store.Store).get(TransferSigning.TransferSignings, t.id))!)
  })
