/**
 * Wallet freeze and receive-policy recovery: what the wallet provider and the receive policy do to a non-custodial
 * wallet's transfers from outside (spec, failureCodes crypto_wallet_misconfigured and rail_policy_rejected;
 * transaction.awaiting_recovery_signature).
 *
 * - The provider reports that a wallet's signing configuration blocks movement: the wallet is frozen (Wallets.ts
 *   `Wallets.move`), and every transfer signing from it fails crypto_wallet_misconfigured (SigningMachine.ts, move
 *   `wallet_frozen`); one still on its way to signing fails when it gets there (TransferSigning.ts).
 * - The receive policy holds a crypto payout after it was broadcast: it no longer settles (the transaction's
 *   `heldByReceivePolicy`), and its roster is asked to sign the recovery of the funds to the wallet's own address,
 *   with the windows and attempts of any signing but outside the seats (it sends nothing new). The quorum ends the
 *   payout failed rail_policy_rejected; a recovery declined or expired closes and the payout stays held
 *   (docs/signing.md).
 */
import { type TransactionId, type Wallet as WalletWire, type WalletId } from "@fos/contract"
import { Clock, Effect } from "effect"
import type * as Auth from "../tenancy/Auth.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Roster from "./Roster.ts"
import * as Settings from "./Settings.ts"
import * as SigningMachine from "./SigningMachine.ts"
import * as Store from "../kernel/Store.ts"
import * as TransactionMachine from "../money/TransactionMachine.ts"
import * as Transactions from "../money/Transactions.ts"
import * as TransferSigning from "./TransferSigning.ts"
import * as Wallets from "../money/Wallets.ts"

import { toIso } from "@fos/contract"

const now = Effect.map(Clock.currentTimeMillis, (ms) => ({ ms, iso: toIso(ms) }))

/**
 * `POST /sandbox/v2/simulate/wallets/{walletId}/misconfigure`: the wallet provider reports that a non-custodial
 * wallet's signing configuration blocks movement. The wallet is frozen (status frozen: it still takes deposits, and
 * nothing can be sent from it, 422 WALLET_NOT_ACTIVE), and every transfer signing from it (the seat's holder and its
 * queue) fails crypto_wallet_misconfigured, its reservation voided; one still on its way to signing fails when it
 * gets there. A custodial wallet is 422 UNPROCESSABLE_ENTITY; a frozen or retired one 409 RESOURCE_TERMINAL.
 */
export const simulateWalletMisconfigured = (caller: Auth.Caller, id: WalletId): Effect.Effect<WalletWire, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const wallet = yield* Wallets.get(caller, id, true)
    if (wallet.custody !== "non_custodial") {
      return yield* Problem.apiError("UNPROCESSABLE_ENTITY", "Only a non-custodial wallet has a signing configuration of the customer's roster to break.")
    }
    if (wallet.status !== "active") return yield* Problem.apiError("RESOURCE_TERMINAL", `The wallet is already ${wallet.status}.`)
    const frozen = yield* Wallets.move(wallet, { type: "freeze" })
    const seat = yield* store.getForUpdate(TransferSigning.SigningSeats, wallet.id)
    if (seat !== undefined) {
      // The seat empties first, so no queued transfer takes it as the others end.
      yield* TransferSigning.emptySeat(seat)
      for (const id of [...(seat.holder === null ? [] : [seat.holder]), ...seat.queue]) {
        const t = yield* TransferSigning.locked(id as TransactionId)
        const signing = yield* TransferSigning.signingOf(id)
        if (t === undefined || signing === undefined || TransactionMachine.terminalStatuses.has(t.status)) continue
        const outcome = SigningMachine.transition(signing.state, { type: "wallet_frozen" })
        if (!("refused" in outcome)) yield* TransferSigning.failSigning(t, signing, outcome.next)
      }
    }
    return yield* Wallets.toWire(frozen)
  })

/**
 * `POST /sandbox/v2/simulate/transactions/{id}/receive-policy`: the receive policy holds a crypto payout from a
 * non-custodial wallet after it was broadcast. It no longer settles; its roster is asked to sign the recovery of the
 * funds to the wallet's own address (transaction.awaiting_recovery_signature `{returnAddress, signingMode, ...}`),
 * with the windows and attempts of any signing (not the wallet's seat: it sends nothing new); the quorum ends the
 * payout failed rail_policy_rejected, its reservation voided. A recovery declined or expired closes and the payout
 * stays held: the same call opens a new one. A payout not yet sent, or not from a non-custodial wallet, is 422
 * SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY; one waiting on an open recovery 409 CONFLICT; an ended one 409
 * RESOURCE_TERMINAL.
 */
export const simulateReceivePolicyHold = (caller: Auth.Caller, id: TransactionId): Effect.Effect<Transactions.StoredTransaction, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const t = yield* Transactions.get(caller, id, true)
    if (TransactionMachine.terminalStatuses.has(t.status)) return yield* Problem.apiError("RESOURCE_TERMINAL", `The transaction has already ended (status ${t.status}).`)
    const signing = t.signingWalletId === undefined ? undefined : yield* TransferSigning.signingOf(t.id)
    if (t.type !== "withdrawal" || t.signingWalletId === undefined || signing === undefined || !t.sent) {
      return yield* Problem.apiError(
        "SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY",
        "Only a crypto payout from a non-custodial wallet, once broadcast, can be held by the receive policy."
      )
    }
    if (signing.recovery !== undefined && signing.state.phase === "awaiting_signature") {
      return yield* Problem.apiError("CONFLICT", "The payout's recovery already waits for its roster's signatures.")
    }
    const wallet = yield* store.get(Wallets.Wallets, t.signingWalletId)
    const pool = yield* TransferSigning.poolOf(signing.claimId)
    const claim = yield* store.get(Roster.Claims, signing.claimId)
    const base = SigningMachine.initialState(claim!.threshold, Settings.signingSettings.signingAttempts)
    const outcome = yield* TransferSigning.transitionOrDie(base, { type: "start", seatFree: true, poolSize: pool.length })
    if (outcome.next.phase === "failed") return yield* TransferSigning.failSigning(t, signing, outcome.next)
    const recovery: TransferSigning.TransferSigning = {
      ...signing,
      state: outcome.next,
      signingMode: TransferSigning.modeOf(pool),
      recovery: { returnAddress: wallet!.address }
    }
    const held = yield* Transactions.recordSigning(t.id, { heldByReceivePolicy: true })
    return yield* TransferSigning.openAttempt(held, recovery, yield* now)
  })
