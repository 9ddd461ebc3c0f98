/**
 * Funded-order execution: what a transaction's end does to orders (Transactions.ts `TransactionEnded`).
 *
 * - Spec, order table: "POST /v2/orders/{id}/execute or autoExecute | execution is claimed | ... autoExecute runs
 *   once available balance covers totalDebit". A completed transaction that credits a customer's account executes the
 *   autoExecute orders waiting on that account, oldest first, as far as the credit covers them.
 * - "An order without an explicit source auto-executes when its deposit lands": a deposit to a deposit-funded order's
 *   funding address records its sender (where anything left over goes back) and executes the order; a deposit in
 *   another asset than the order's, or one arriving after the order ended, goes back (Orders.ts, deposit_return).
 * - "execution fails | any terminal failure, or source deposit of an auto-execute ONRAMP order ends uncredited |
 *   failed": a failed deposit fails the autoExecute onramp orders waiting on its account (reasonCode
 *   insufficient_funds).
 * - An order's own autoPayout opens when its conversion's transaction completes, before any order waiting on the
 *   destination account can spend the credit (AutoPayouts.ts).
 * - The failed signing of an order's source transfer fails the order (not shown: reasonCode cancelled, with the
 *   transaction's failureCode beside it).
 */
import type { OrderId } from "@fos/contract"
import { parseAmount } from "@fos/contract"
import { Effect } from "effect"
import * as Ledger from "./Ledger.ts"
import * as Orders from "./Orders.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Transactions from "./Transactions.ts"
import * as Wallets from "./Wallets.ts"

import { openAutoPayout } from "./AutoPayouts.ts"

/** The ledger account a transaction's destination side credits, when it is a customer's account. */
const creditedAccount = (transaction: Transactions.StoredTransaction) => {
  const destination = transaction.destination
  const walletId = Transactions.creditedWalletId(transaction)
  const scoped = Tenancy.scopeOf(transaction.organizationId, transaction.environment)
  const holder: Ledger.Holder | undefined = walletId !== undefined
    ? { scope: scoped, type: "wallet", id: walletId }
    : destination.type === "virtual_account"
    ? { scope: scoped, type: "virtual_account", id: destination.virtualAccountId }
    : undefined
  if (holder === undefined) return undefined
  const asset = destination.assetAmount.chain === undefined
    ? { code: destination.assetAmount.code }
    : { code: destination.assetAmount.code, chain: destination.assetAmount.chain }
  return Ledger.accountId(holder, asset)
}

/** The autoExecute orders waiting on a ledger account, oldest first. */
const waitingOn = (account: string) =>
  Effect.flatMap(Store.Store, (store) =>
    store.page(Orders.Orders, {
      order: "awaitingFunds",
      partition: account,
      descending: false,
      backward: false,
      from: undefined,
      // A handful of orders wait on one account at most; the rest wait for the next credit.
      limit: 20
    }))

/**
 * TransactionEnded (Transactions.ts): a completed transaction executes the autoExecute orders its credit now covers;
 * a deposit that failed fails the autoExecute onramp orders waiting on its account (their source deposit ended
 * uncredited: order.failed, reasonCode insufficient_funds).
 */
export const onTransactionEnded = (transaction: Transactions.StoredTransaction): Effect.Effect<void, never, Store.Store> => {
  if (transaction.status === "completed") return executeFundedOrders(transaction)
  if (Transactions.failedInSigning(transaction) && transaction.linkedOrderId !== undefined) {
    return signingFailed(transaction)
  }
  if (transaction.status !== "failed" || transaction.type !== "deposit") return Effect.void
  const account = creditedAccount(transaction)
  if (account === undefined) return Effect.void
  return Effect.gen(function*() {
    const store = yield* Store.Store
    for (const candidate of yield* waitingOn(account)) {
      const order = yield* store.getForUpdate(Orders.Orders, candidate.id)
      if (order !== undefined && order.direction === "onramp") yield* Effect.orDie(Orders.fail(order, "insufficient_funds"))
    }
  })
}

/**
 * The signing of an order's source transfer failed (user_signature_*, roster_changed): its transaction failed with
 * that code and released the holds, and the order fails through order.failed, reasonCode cancelled (the conversion
 * did not happen and no funds moved; the spec's order reasonCodes name no signing failure) with the transaction's
 * failureCode beside it. A payout's signing (an autoPayout's too) fails only the payout.
 */
const signingFailed = (transaction: Transactions.StoredTransaction): Effect.Effect<void, never, Store.Store> =>
  Effect.gen(function*() {
    const order = yield* Orders.locked(transaction.linkedOrderId!)
    // An order already ended stays as it is: the table leaves it unchanged.
    if (order === undefined || order.transactionId !== transaction.id) return
    yield* Effect.orDie(Orders.move(order, { type: "fail" }, { reasonCode: "cancelled", transactionFailureCode: transaction.failureCode ?? undefined }))
  })

/** A completed transaction credited a customer's account: the autoExecute orders it now covers execute. */
const executeFundedOrders = (transaction: Transactions.StoredTransaction): Effect.Effect<void, never, Store.Store> =>
  Effect.gen(function*() {
    const credited = creditedAccount(transaction)
    if (credited === undefined) return
    const store = yield* Store.Store
    // An order's own autoPayout comes first: its payout reserves the credit before an autoExecute order waiting on
    // the same account can spend it.
    if (transaction.linkedOrderId !== undefined) {
      const converted = yield* store.getForUpdate(Orders.Orders, transaction.linkedOrderId)
      if (converted?.autoPayout !== undefined && converted.payoutTransactionId === undefined && converted.transactionId === transaction.id) {
        const payoutTransactionId = yield* openAutoPayout(converted)
        yield* Orders.recordAutoPayout(converted, payoutTransactionId)
      }
    }
    const walletId = Transactions.creditedWalletId(transaction)
    if (walletId !== undefined) {
      const wallet = yield* store.get(Wallets.Wallets, walletId)
      if (wallet?.fundingOrderId !== undefined) {
        const funded = yield* store.getForUpdate(Orders.Orders, wallet.fundingOrderId as OrderId)
        if (funded !== undefined) {
          // Who sent it: where anything left over goes back to.
          const sender = transaction.source.type === "external_crypto" ? transaction.source.address : funded.fundingSender
          const credit = transaction.destination.assetAmount
          if (credit.code !== funded.source.side.asset || (credit.chain ?? undefined) !== funded.source.side.chain) {
            // Another asset than the order's can never fund it: it goes back to its sender at once.
            if (sender !== undefined) yield* Orders.returnFunding(funded, { asset: credit.code, chain: credit.chain ?? undefined }, parseAmount(credit.code, credit.amount)!.units, sender)
          } else {
            const recorded = yield* Orders.recordFundingSender(funded, sender)
            // Funds that arrive after the order ended go back.
            if (recorded.status !== "pending") yield* Orders.returnLeftover(recorded)
          }
        }
      }
    }
    for (const candidate of yield* waitingOn(credited)) {
      const order = yield* store.getForUpdate(Orders.Orders, candidate.id)
      if (order !== undefined) yield* Orders.tryExecute(order)
    }
  })
