/**
 * Signing a transfer out of a non-custodial wallet: a payout, or an order's conversion whose source is such a wallet
 * (spec, "Non-custodial signing of a payout or conversion source transfer"). This module runs SigningMachine.ts's
 * table on the transfer's transaction, with the wallet's signing seat, the windows and queue waits as durable timers,
 * the signing requests of machine signers, and the events with their transaction's payload.
 *
 * - The transfer opens (reserving its funds on the path every payout or order takes) and goes to processing as any;
 *   there, instead of being sent, its signing starts: the wallet's one signing seat, or its queue.
 * - The seat: one transfer at a time signs per wallet (a wallet is on one chain, so per wallet and chain). The one
 *   holding it gets attempt 1 at once (transaction.awaiting_signature, no queue event); one that finds it taken
 *   enters the queue at the end (transaction.queue_position_changed with `queuePosition`, also on the transaction
 *   resource), moves forward as the queue does (the event again each time), and takes the seat when its turn comes
 *   (no queue event for leaving; `queuePosition` back to null). It fails user_signature_timeout `queueWaitMs` after
 *   entering the queue if it is still there.
 * - An attempt lasts `signingWindowMs` (its `expiresAt`); each has its own signing request (programmatic modes) and
 *   link; a window expiring with attempts left opens the next attempt (awaiting_signature again, attempt + 1, no
 *   stamps: the latest attempt is authoritative, and a stamp for an older one is refused); the last expiring fails the
 *   transfer user_signature_expired.
 * - A stamp of a signer of the roster's signing pool (its enrolled signers, admins or not) is
 *   transaction.signature_collected; the one that reaches the threshold adds transaction.quorum_met, frees the seat
 *   for the next transfer, and hands the transfer back to its own path (`onQuorum`, a timer: the service co-signs and
 *   broadcasts, and the payout or conversion goes on as any). A decline fails the transfer user_signature_declined; a
 *   signer leaving the pool fails it roster_changed when the machine says so (its stamps voided).
 * - A failed signing fails the transaction (transaction.failed with the code), which voids its reservation; a
 *   conversion's order fails with it (Orders.ts). Whatever ends the transaction (a cancel, a restriction, a
 *   failure) frees its seat or its place in the queue (`onTransferEnded`, a subscriber of TransactionEnded).
 *
 * Signing uses money and money never imports signing: a payout, an order or a deposit return asks for signatures by
 * publishing SignaturesRequested (money/Transactions.ts), and this module is its subscriber (Subscriptions.ts). A
 * transfer's signing is a row of its own (`TransferSignings`, keyed by its transaction's id); the transaction shows
 * only what its wire and its path need (`queuePosition`, `signed`), written through Transactions' `recordSigning`.
 * The wallet provider's freeze and the receive policy's recovery are WalletFreeze.ts; the machine signers' API on
 * signing requests is SigningRequests.ts; unsupported coins' returns are money/DepositReturns.ts.
 *
 * It is a little over 600 lines because it is one table's life, the signing of a transfer, from its first window to
 * its quorum or its failure, with that table's one writer and the wallet's queue that orders it; the pieces that
 * are not that life are the modules named above.
 */
import {
  type CustomerId,
  type Environment,
  maxRosterSize,
  type SigningRequest as SigningRequestWire,
  toIso,
  TransactionId
} from "@fos/contract"
import { Clock, Effect, Schema } from "effect"
import type * as Auth from "../tenancy/Auth.ts"
import * as Domain from "../kernel/Domain.ts"
import * as IdGenerator from "../kernel/IdGenerator.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Roster from "./Roster.ts"
import * as Settings from "./Settings.ts"
import * as SignerMachine from "./SignerMachine.ts"
import * as SigningMachine from "./SigningMachine.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Timers from "../kernel/Timers.ts"
import * as TransactionMachine from "../money/TransactionMachine.ts"
import * as Transactions from "../money/Transactions.ts"
import * as Wallets from "../money/Wallets.ts"
import type * as Wire from "../kernel/Wire.ts"

// --- storage -----------------------------------------------------------------------------------------------------

/** What a transfer does once its quorum is met: a timer of its own path (payout, order or return), `delayMs` later. */
export type Continuation = Transactions.SignatureRequest["onQuorum"]

interface Owned {
  readonly organizationId: string
  readonly environment: Environment
  readonly customerId: CustomerId
}

/** The signing of one transfer, keyed by its transaction's id. */
export interface TransferSigning extends Owned {
  readonly transactionId: TransactionId
  readonly walletId: string
  /** The claim whose roster signs (the customer's). */
  readonly claimId: string
  readonly state: SigningMachine.State
  readonly signingMode: SigningMachine.SigningMode
  /** The current attempt's signing request (programmatic modes). */
  readonly signingRequestId: string | undefined
  /** The current attempt's link for the passkey signers (not for a machine-only roster). */
  readonly verificationUrl: string | undefined
  /** When the current attempt's window closes. */
  readonly expiresAt: string | undefined
  readonly onQuorum: Continuation
  /**
   * A recovery (transaction.awaiting_recovery_signature, WalletFreeze.ts): a sent crypto payout the receive policy
   * held, whose funds the roster signs back to `returnAddress`; its quorum fails the payout rail_policy_rejected.
   */
  readonly recovery?: { readonly returnAddress: string } | undefined
  /**
   * The return of an unsupported coin to its sender (transaction.awaiting_return_signature): not a payout, so it
   * takes no seat; its quorum broadcasts the return.
   */
  readonly return?: { readonly destinationAddress: string } | undefined
}

/** A wallet's signing seat: the transfer signing now, and the ones waiting in order (the first is position 1). */
interface StoredSeat extends Owned {
  readonly walletId: string
  readonly holder: string | null
  readonly queue: ReadonlyArray<string>
}

/** One attempt's signing request, for the machine signers (SigningRequests.ts serves them). */
export interface StoredSigningRequest
  extends Owned, Wire.Stored<SigningRequestWire, "id" | "walletId" | "attempt" | "signingMode" | "expiresAt" | "createdAt">
{
  readonly transactionId: TransactionId
  /** A recovery's request, not the transfer's own signing. */
  readonly recovery?: true | undefined
}

const scope = (row: Owned) => Tenancy.scopeOf(row.organizationId, row.environment)

/**
 * An earlier build kept signings on their transaction's row (`signing`); adapters/sql's migration 7 moved the
 * stored ones here.
 */
export const TransferSignings = Store.table<TransferSigning>({
  name: "transfer_signings",
  key: (s) => s.transactionId,
  orders: { byScope: { partition: scope, sort: (s) => s.transactionId, counted: false } }
})

export const SigningSeats = Store.table<StoredSeat>({
  name: "signing_seats",
  key: (s) => s.walletId,
  orders: {
    byCustomer: { partition: (s) => `${scope(s)}/${s.customerId}`, sort: (s) => s.walletId, counted: false },
    byScope: { partition: scope, sort: (s) => s.walletId, counted: false }
  }
})

export const SigningRequests = Store.table<StoredSigningRequest>({
  name: "signing_requests",
  key: (r) => r.id,
  orders: { byScope: { partition: scope, sort: (r) => r.createdAt, counted: false } }
})

/** An attempt's signing window closes, at its `expiresAt` (`signingWindowMs` after it opened). */
export const windowTimer = Timers.kind(
  "signing.window_expiry",
  Schema.Struct({ transactionId: TransactionId, attempt: Schema.Number, expiresAt: Schema.optionalKey(Schema.String) }),
  "transactionId"
)

/** A queued transfer's wait for its wallet's signing seat runs out, `queueWaitMs` after it entered the queue. */
export const queueTimeoutTimer = Timers.kind("signing.queue_timeout", Schema.Struct({ transactionId: TransactionId }), "transactionId")

// --- helpers -----------------------------------------------------------------------------------------------------

const now = Effect.map(Clock.currentTimeMillis, (ms) => ({ ms, iso: toIso(ms) }))

export type At = { readonly ms: number; readonly iso: string }

/** The customer's resolved claim: its roster signs for all its non-custodial wallets (docs/signing.md). */
export const claimOf = (row: Owned): Effect.Effect<Roster.StoredClaim | undefined, never, Store.Store> =>
  Effect.gen(function*() {
    const claims = yield* (yield* Store.Store).page(Roster.Claims, {
      order: "byCustomer",
      partition: `${scope(row)}/${row.customerId}`,
      descending: true,
      backward: false,
      from: undefined,
      limit: 1
    })
    return claims[0]?.status === "completed" ? claims[0] : undefined
  })

/** The roster's signing pool: its signers that can act (enrolled or approved), admins or not. */
export const poolOf = (claimId: string) =>
  Effect.map(
    Effect.flatMap(Store.Store, (store) =>
      store.page(Roster.WalletSigners, { order: "byClaim", partition: claimId, descending: false, backward: false, from: undefined, limit: maxRosterSize })),
    (roster) => roster.filter((s) => SignerMachine.isActive(s.status))
  )

export const modeOf = (pool: ReadonlyArray<Roster.StoredSigner>): SigningMachine.SigningMode =>
  SigningMachine.signingModeOf({
    passkeySigners: pool.filter((s) => s.credentialType === "passkey").length,
    machineSigners: pool.filter((s) => s.credentialType === "api_key").length
  })

/** The machine's answer to a move the engine's own flows make; a refusal there is a bug. */
export const transitionOrDie = (state: SigningMachine.State, move: SigningMachine.Move) => {
  const outcome = SigningMachine.transition(state, move)
  if ("refused" in outcome) return Effect.die(new Error(`signing ${move.type} refused: ${outcome.reason}`))
  return Effect.succeed(outcome)
}

/** A transfer's signing, locked. */
export const signingOf = (id: string) => Effect.flatMap(Store.Store, (store) => store.getForUpdate(TransferSignings, id))

/** Stores a transfer's signing, as it now stands. */
const saveSigning = (s: TransferSigning) => Effect.as(Effect.orDie(Effect.flatMap(Store.Store, (store) => store.update(TransferSignings, s))), s)

/**
 * The wallet's seat (locked) empties: its holder and its queue are let go at once (WalletFreeze.ts: a frozen wallet
 * signs nothing, so no queued transfer may take the seat as the others end). Failing them is the caller's.
 */
export const emptySeat = (seat: StoredSeat): Effect.Effect<void, never, Store.Store> =>
  Effect.orDie(Effect.flatMap(Store.Store, (store) => store.update(SigningSeats, { ...seat, holder: null, queue: [] })))

/** The wallet's seat, locked; made on the wallet's first signed transfer. */
const seatOf = (t: Transactions.StoredTransaction, walletId: string) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const seat = yield* store.getForUpdate(SigningSeats, walletId)
    if (seat !== undefined) return seat
    const made: StoredSeat = {
      organizationId: t.organizationId,
      environment: t.environment,
      customerId: t.customerId,
      walletId,
      holder: null,
      queue: []
    }
    yield* Effect.orDie(store.insert(SigningSeats, made))
    return made
  })

const collectedFields = (s: TransferSigning) => ({ collected: s.state.collected.length, required: s.state.required, attempt: s.state.attempt })

// --- the table on a transfer -------------------------------------------------------------------------------------

/**
 * Opens the attempt the transfer's signing names (it holds the seat, or signs outside the seats): its signing
 * request and link, its window's timer, and transaction.awaiting_signature (with the deprecated
 * awaiting_user_signature while its window lasts), or the recovery's or the return's event.
 */
export const openAttempt = (t: Transactions.StoredTransaction, signing: TransferSigning, at: At) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const attempt = signing.state.attempt
    const expiresAtMs = at.ms + Settings.signingSettings.signingWindowMs
    const expiresAt = toIso(expiresAtMs)
    const signingRequestId = signing.signingMode === "passkey_required" ? undefined : yield* IdGenerator.newPlainId("sr")
    const verificationUrl = signing.signingMode === "programmatic_unattended"
      ? undefined
      : `${Settings.signingSettings.signingOrigin}/transfers/${t.id}/${yield* IdGenerator.randomHex(32)}`
    if (signingRequestId !== undefined) {
      yield* Effect.orDie(store.insert(SigningRequests, {
        organizationId: t.organizationId,
        environment: t.environment,
        customerId: t.customerId,
        id: signingRequestId,
        transactionId: t.id,
        walletId: signing.walletId,
        attempt,
        signingMode: signing.signingMode,
        expiresAt,
        ...(signing.recovery === undefined ? {} : { recovery: true as const }),
        createdAt: at.iso
      }))
    }
    yield* saveSigning({ ...signing, signingRequestId, verificationUrl, expiresAt })
    const next = yield* Transactions.recordSigning(t.id, { queuePosition: null })
    // The window's end names it: a recovery restarts at attempt 1, and an earlier signing's timer must find no match.
    yield* Timers.schedule(windowTimer, expiresAtMs, { transactionId: t.id, attempt, expiresAt }, scope(t))
    if (signing.return !== undefined) {
      yield* Transactions.emitTransactionEvent(next, "transaction.awaiting_return_signature", {
        destinationAddress: signing.return.destinationAddress,
        signingMode: signing.signingMode,
        verificationUrl,
        signingRequestId,
        expiresAt,
        attempt
      }, at.iso)
      return next
    }
    if (signing.recovery !== undefined) {
      yield* Transactions.emitTransactionEvent(next, "transaction.awaiting_recovery_signature", {
        returnAddress: signing.recovery.returnAddress,
        signingMode: signing.signingMode,
        verificationUrl,
        signingRequestId,
        expiresAt
      }, at.iso)
      return next
    }
    for (const event of SigningMachine.withDeprecatedEvents(["awaiting_signature"], at.ms, Settings.signingSettings.awaitingUserSignatureUntilMs)) {
      if (event === "awaiting_signature") {
        yield* Transactions.emitTransactionEvent(next, "transaction.awaiting_signature", {
          signingMode: signing.signingMode,
          verificationUrl,
          signingRequestId,
          expiresAt,
          attempt
        }, at.iso)
      } else if (verificationUrl !== undefined) {
        // The deprecated event always carried a person's link: a machine-only roster never had one.
        yield* Transactions.emitTransactionEvent(next, "transaction.awaiting_user_signature", { verificationUrl, expiresAt, attempt }, at.iso)
      }
    }
    return next
  })

/**
 * The subscriber of SignaturesRequested (Subscriptions.ts): a transfer `t` (locked, processing, with
 * `signingWalletId`) needs its roster's signatures. Asked again (a payout whose review ended while it was processing),
 * its signing goes on where it stands, and one whose quorum was met hands back at once.
 *
 * A transfer takes the wallet's seat or its queue; an unsupported coin's return signs outside the seats. A frozen
 * wallet fails it crypto_wallet_misconfigured, and a pool already below the threshold (signers removed since the
 * claim) roster_changed, at once. A non-custodial wallet always has its customer's resolved claim; without one the
 * transfer cannot be signed.
 */
export const startSigning = (request: Transactions.SignatureRequest): Effect.Effect<void, never, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const t = request.transaction
    const at = yield* now
    const existing = yield* signingOf(t.id)
    if (existing !== undefined) {
      if (existing.state.phase === "quorum_met" && existing.recovery === undefined) {
        yield* Timers.schedule(request.onQuorum.kind, at.ms + request.onQuorum.delayMs, request.onQuorum.payload, scope(t))
      }
      return
    }
    const walletId = t.signingWalletId!
    const claim = yield* claimOf(t)
    if (claim === undefined) return yield* Effect.die(new Error(`the non-custodial wallet ${walletId} has no resolved claim`))
    const pool = yield* poolOf(claim.id)
    const base: TransferSigning = {
      organizationId: t.organizationId,
      environment: t.environment,
      customerId: t.customerId,
      transactionId: t.id,
      walletId,
      claimId: claim.id,
      state: SigningMachine.initialState(claim.threshold, Settings.signingSettings.signingAttempts),
      signingMode: modeOf(pool),
      signingRequestId: undefined,
      verificationUrl: undefined,
      expiresAt: undefined,
      onQuorum: request.onQuorum,
      ...(request.return === undefined ? {} : { return: request.return })
    }
    yield* Effect.orDie(store.insert(TransferSignings, base))
    const wallet = yield* store.get(Wallets.Wallets, walletId)
    if (wallet?.status === "frozen") {
      // The wallet's signing configuration blocks movement: the transfer fails without signing.
      const frozen = yield* transitionOrDie(base.state, { type: "wallet_frozen" })
      yield* failSigning(t, base, frozen.next)
      return
    }
    if (request.return !== undefined) {
      // A return is not a payout: it takes no seat.
      const outcome = yield* transitionOrDie(base.state, { type: "start", seatFree: true, poolSize: pool.length })
      if (outcome.next.phase === "failed") yield* failSigning(t, base, outcome.next)
      else yield* openAttempt(t, { ...base, state: outcome.next }, at)
      return
    }
    const seat = yield* seatOf(t, walletId)
    const queuePosition = seat.queue.length + 1
    const outcome = yield* transitionOrDie(base.state, { type: "start", seatFree: seat.holder === null, queuePosition, poolSize: pool.length })
    // A pool already below the threshold could never sign it: it fails at once.
    if (outcome.next.phase === "failed") {
      yield* failSigning(t, base, outcome.next)
      return
    }
    if (seat.holder === null) {
      yield* Effect.orDie(store.update(SigningSeats, { ...seat, holder: t.id }))
      yield* openAttempt(t, { ...base, state: outcome.next }, at)
      return
    }
    yield* Effect.orDie(store.update(SigningSeats, { ...seat, queue: [...seat.queue, t.id] }))
    yield* saveSigning({ ...base, state: outcome.next })
    const queued = yield* Transactions.recordSigning(t.id, { queuePosition })
    yield* Transactions.emitTransactionEvent(queued, "transaction.queue_position_changed", { queuePosition }, at.iso)
    yield* Timers.schedule(queueTimeoutTimer, at.ms + Settings.signingSettings.queueWaitMs, { transactionId: t.id }, scope(t))
  })

/** Each transfer of `queue` takes its position (1 is next); one that moved forward fires queue_position_changed. */
const moveQueueForward = (queue: ReadonlyArray<string>, at: At) =>
  Effect.gen(function*() {
    for (const [i, id] of queue.entries()) {
      const signing = yield* signingOf(id)
      if (signing === undefined || signing.state.phase !== "queued" || signing.state.queuePosition === i + 1) continue
      const outcome = yield* transitionOrDie(signing.state, { type: "queue_advance", queuePosition: i + 1 })
      yield* saveSigning({ ...signing, state: outcome.next })
      const moved = yield* Transactions.recordSigning(signing.transactionId, { queuePosition: i + 1 })
      yield* Transactions.emitTransactionEvent(moved, "transaction.queue_position_changed", { queuePosition: i + 1 }, at.iso)
    }
  })

/** The seat's holder is done (quorum met, or ended): the first transfer still queued takes the seat. */
const freeSeat = (seat: StoredSeat, at: At) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const queue = [...seat.queue]
    let holder: string | null = null
    while (holder === null && queue.length > 0) {
      const q = yield* locked(queue.shift()! as TransactionId)
      const signing = q === undefined ? undefined : yield* signingOf(q.id)
      if (q === undefined || signing === undefined || TransactionMachine.terminalStatuses.has(q.status) || signing.state.phase !== "queued") continue
      // Taking the seat leaves the queue, which fires no queue_position_changed.
      const outcome = yield* transitionOrDie(signing.state, { type: "seat" })
      holder = q.id
      yield* openAttempt(q, { ...signing, state: outcome.next }, at)
    }
    yield* Effect.orDie(store.update(SigningSeats, { ...seat, holder, queue }))
    yield* moveQueueForward(queue, at)
  })

/**
 * A subscriber of TransactionEnded (Subscriptions.ts): a signed transfer that ended frees its wallet's seat, or its
 * place in the queue, so the next one signs.
 */
export const onTransferEnded = (t: Transactions.StoredTransaction): Effect.Effect<void, never, Store.Store> =>
  Effect.gen(function*() {
    if (t.signingWalletId === undefined) return
    const store = yield* Store.Store
    if ((yield* store.get(TransferSignings, t.id)) === undefined) return
    const seat = yield* store.getForUpdate(SigningSeats, t.signingWalletId)
    if (seat === undefined) return
    const at = yield* now
    if (seat.holder === t.id) return yield* freeSeat(seat, at)
    if (!seat.queue.includes(t.id)) return
    const queue = seat.queue.filter((id) => id !== t.id)
    yield* Effect.orDie(store.update(SigningSeats, { ...seat, queue }))
    yield* moveQueueForward(queue, at)
  })

/**
 * The signing failed (`state`, failed with the table's code): the transaction fails with it (its reservation
 * voided), which frees the seat. A recovery that fails closes instead; the payout stays held (docs/signing.md).
 */
export const failSigning = (t: Transactions.StoredTransaction, signing: TransferSigning, state: SigningMachine.State): Effect.Effect<Transactions.StoredTransaction, never, Store.Store> =>
  Effect.gen(function*() {
    yield* saveSigning({ ...signing, state })
    if (signing.recovery !== undefined && state.failureCode !== "crypto_wallet_misconfigured") return yield* Transactions.recordSigning(t.id)
    yield* Transactions.recordSigning(t.id, { queuePosition: null })
    return yield* Effect.orDie(Transactions.move(t.id, { type: "fail" }, { failureCode: state.failureCode! }))
  })

/** Applies a stamp's or a decline's outcome: the events, and at quorum the seat freed and the transfer handed back. */
const applySignerMove = (
  t: Transactions.StoredTransaction,
  current: TransferSigning,
  outcome: { readonly next: SigningMachine.State; readonly events: ReadonlyArray<string> }
) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const at = yield* now
    if (outcome.next.phase === "failed") return yield* failSigning(t, current, outcome.next)
    const signing = yield* saveSigning({ ...current, state: outcome.next })
    const quorum = outcome.next.phase === "quorum_met"
    const next = yield* Transactions.recordSigning(t.id, quorum && signing.recovery === undefined ? { signed: true } : {})
    for (const event of outcome.events) {
      if (event === "signature_collected") yield* Transactions.emitTransactionEvent(next, "transaction.signature_collected", collectedFields(signing), at.iso)
      if (event === "quorum_met") yield* Transactions.emitTransactionEvent(next, "transaction.quorum_met", collectedFields(signing), at.iso)
    }
    if (quorum && signing.recovery !== undefined) {
      // The roster approved the recovery: the held payout ends failed, its reservation voided (the funds are back).
      return yield* Effect.orDie(Transactions.move(t.id, { type: "fail" }, { failureCode: "rail_policy_rejected" }))
    }
    if (quorum) {
      const seat = yield* store.getForUpdate(SigningSeats, signing.walletId)
      if (seat !== undefined && seat.holder === t.id) yield* freeSeat(seat, at)
      yield* Timers.schedule(signing.onQuorum.kind, at.ms + signing.onQuorum.delayMs, signing.onQuorum.payload, scope(t))
    }
    return next
  })

export type SignerDecision = "approve" | "decline"

/** How the signing provider answers a stamped request (the sandbox's simulate stamp says which). */
export type ProviderAnswer = "accepted" | "rejected" | "unavailable"

/**
 * One signer's stamp or decline on the transfer `t` (locked), for `attempt` (the current one when undefined). The
 * table decides; the provider's refusal (422 SIGNATURE_REJECTED) or outage (502 SIGNING_PROVIDER_UNAVAILABLE) comes
 * after the checks and changes nothing, so the signer signs again with the same session.
 */
export const decideStamp = (
  t: Transactions.StoredTransaction,
  signer: Roster.StoredSigner,
  decision: SignerDecision,
  attempt: number | undefined,
  provider: ProviderAnswer
): Effect.Effect<Transactions.StoredTransaction, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    if (t.signingWalletId === undefined) {
      return yield* Problem.apiError("CONFLICT", "The transaction needs no signature: its source is not a non-custodial wallet.")
    }
    if (TransactionMachine.terminalStatuses.has(t.status)) return yield* Problem.apiError("RESOURCE_TERMINAL", `The transaction has already ended (status ${t.status}).`)
    const signing = yield* signingOf(t.id)
    if (signing === undefined) return yield* Problem.apiError("CONFLICT", "The transfer's signing has not started yet; it starts when the transfer is processing.")
    if (attempt !== undefined && signing.state.phase === "awaiting_signature" && attempt !== signing.state.attempt) {
      return yield* Problem.apiError(
        "CONFLICT",
        `Attempt ${attempt} is no longer authoritative: the transfer's signing is at attempt ${signing.state.attempt}; sign that one.`
      )
    }
    const inPool = signer.claimId === signing.claimId && SignerMachine.isActive(signer.status)
    const outcome = SigningMachine.transition(signing.state, decision === "approve" ? { type: "stamp", signerId: signer.id, inPool } : { type: "decline", signerId: signer.id, inPool })
    if ("refused" in outcome) return yield* Problem.apiError(outcome.refused, outcome.reason)
    if (provider === "rejected") return yield* Problem.apiError("SIGNATURE_REJECTED", "The signing provider rejected the stamped request; nothing changed. Sign again.")
    if (provider === "unavailable") return yield* Problem.apiError("SIGNING_PROVIDER_UNAVAILABLE", "The signing provider did not answer; nothing changed. Retry.")
    return yield* applySignerMove(t, signing, outcome)
  })

/** `POST /sandbox/v2/simulate/transactions/{id}/signatures`: a passkey signer, by its session, at its verificationUrl. */
export const simulateSignature = (
  caller: Auth.Caller,
  id: TransactionId,
  signer: Roster.StoredSigner,
  body: { readonly decision: SignerDecision; readonly attempt?: number | undefined; readonly provider?: ProviderAnswer | undefined }
): Effect.Effect<Transactions.StoredTransaction, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const t = yield* Transactions.get(caller, id, true)
    if (signer.credentialType !== "passkey") {
      return yield* Problem.apiError("FORBIDDEN", "A machine signer signs through its signing request (POST /v2/signing-requests/{id}/approve or /reject).")
    }
    return yield* decideStamp(t, signer, body.decision, body.attempt, body.provider ?? "accepted")
  })

// --- the clock and the roster ------------------------------------------------------------------------------------

export const locked = (id: TransactionId) => Effect.flatMap(Store.Store, (store) => store.getForUpdate(Transactions.Transactions, id))

/** An attempt's window closed: the next attempt, or the last one's failure user_signature_expired. */
const windowExpired = (payload: { readonly transactionId: TransactionId; readonly attempt: number; readonly expiresAt?: string }) =>
  Effect.gen(function*() {
    const t = yield* locked(payload.transactionId)
    if (t === undefined || TransactionMachine.terminalStatuses.has(t.status)) return
    const signing = yield* signingOf(t.id)
    if (signing === undefined || signing.state.phase !== "awaiting_signature" || signing.state.attempt !== payload.attempt) return
    if (payload.expiresAt !== undefined && payload.expiresAt !== signing.expiresAt) return
    const outcome = yield* transitionOrDie(signing.state, { type: "window_expired" })
    if (outcome.next.phase === "failed") {
      yield* failSigning(t, signing, outcome.next)
      return
    }
    yield* openAttempt(t, { ...signing, state: outcome.next }, yield* now)
  })

/** A transfer still queued `queueWaitMs` after it entered the queue fails user_signature_timeout. */
const queueTimedOut = (payload: { readonly transactionId: TransactionId }) =>
  Effect.gen(function*() {
    const t = yield* locked(payload.transactionId)
    if (t === undefined || TransactionMachine.terminalStatuses.has(t.status)) return
    const signing = yield* signingOf(t.id)
    if (signing === undefined || signing.state.phase !== "queued") return
    const outcome = yield* transitionOrDie(signing.state, { type: "queue_timeout" })
    yield* failSigning(t, signing, outcome.next)
  })

/**
 * A subscriber of SignerLeftPool (Subscriptions.ts): a signer left the signing pool (removed by ops or by a
 * customer's ceremony), and each transfer of its roster still signing fails roster_changed when the table says so.
 * One awaiting signatures fails when the signer had stamped the attempt or the pool left is below the threshold; a
 * queued one, and a recovery or a return (which sign outside the seats), when the pool left is below the threshold.
 * Each queue fails from its back, then the seat's holder, so no transfer moves forward into a seat it is about to
 * lose. Runs after the signer is stored as removed.
 */
export const onSignerLeftPool = (signer: Roster.StoredSigner): Effect.Effect<void, never, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const page = { descending: false, backward: false, from: undefined } as const
    // One seat per wallet: a customer has a wallet per chain, and a few rotated ones.
    const seats = yield* store.page(SigningSeats, { ...page, order: "byCustomer", partition: `${scope(signer)}/${signer.customerId}`, limit: 100 })
    const poolSize = (yield* poolOf(signer.claimId)).length
    const rosterChanged = (id: string) =>
      Effect.gen(function*() {
        const t = yield* locked(id as TransactionId)
        if (t === undefined || TransactionMachine.terminalStatuses.has(t.status)) return
        const signing = yield* signingOf(t.id)
        if (signing === undefined || signing.claimId !== signer.claimId) return
        if (signing.state.phase !== "awaiting_signature" && signing.state.phase !== "queued") return
        const outcome = yield* transitionOrDie(signing.state, { type: "roster_changed", signerId: signer.id, poolSize })
        if (outcome.next.phase === "failed") yield* failSigning(t, signing, outcome.next)
      })
    for (const seat of seats) {
      for (const id of [...seat.queue].reverse()) yield* rosterChanged(id)
      if (seat.holder !== null) yield* rosterChanged(seat.holder)
    }
    for (const type of ["withdrawal", "deposit_return"] as const) {
      const { order, partition } = Transactions.partitionIn(scope(signer), { type, status: "processing", customerId: signer.customerId as CustomerId })
      // A customer has a few recoveries or returns open at most.
      for (const t of yield* store.page(Transactions.Transactions, { ...page, order, partition, limit: 100 })) {
        if (t.signingWalletId === undefined) continue
        const signing = yield* store.get(TransferSignings, t.id)
        if (signing?.recovery !== undefined || signing?.return !== undefined) yield* rosterChanged(t.id)
      }
    }
  })

/** A sandbox's transfer signings, wallets' signing seats and signing requests, and the signing windows and queue waits. */
export const domain = Domain.make({
  name: "signing/TransferSigning",
  tables: [
    Domain.inScope(TransferSignings, "byScope"),
    Domain.inScope(SigningSeats, "byScope"),
    { ...Domain.inScope(SigningRequests, "byScope"), counted: "signingRequests" }
  ],
  timers: [
    Timers.handle(
      windowTimer,
      windowExpired,
      (id, p) => `ends signing attempt ${String(p.attempt ?? "")} of transaction ${id} (without a quorum, the next attempt opens or it fails)`
    ),
    Timers.handle(queueTimeoutTimer, queueTimedOut, (id) => `ends transaction ${id}'s wait in its wallet's signing queue`)
  ]
})
