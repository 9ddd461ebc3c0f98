/**
 * The order's clock: the durable timers that move an order on by themselves (spec, order table: "pending | lock
 * expiry sweep | lockExpiresAt passed before execution was claimed | cancelled | order.cancelled, reason expired ...
 * For a deposit-funded order it fires only when no transfer to the funding address is still being checked";
 * "pending | execution completes | source debited, destination credited | succeeded | order.succeeded").
 *
 * - the lock expiry sweep (`order.lock_expiry`), scheduled at creation for lockExpiresAt;
 * - the world model sending the source transfer (`order.start`, after execution is claimed), or, out of a
 *   non-custodial wallet, its roster signing it first (`order.signed` once the quorum is met);
 * - the conversion settling on the clock (`order.settle`), which completes the transaction, opens the autoPayout and
 *   succeeds the order, or fails it with the failure the sandbox armed;
 * - the chain confirming a deposit_return (Orders.ts) and the legacy autoPayout withdrawal (AutoPayouts.ts).
 *
 * A timer that finds its order moved on (cancelled, failed, already sent) does nothing: it asks the order table
 * (OrderMachine.ts `orderMoves`), which holds every guard, rather than checking the order itself.
 */
import type { OrderId } from "@fos/contract"
import { Clock, Effect } from "effect"
import { Store } from "../kernel/Store.ts"
import { schedule, type TimerHandler } from "../kernel/Timers.ts"
import { scopeOf } from "../tenancy/Tenancy.ts"
import { publish } from "../kernel/Topics.ts"
import { sandboxTxHash } from "./Addresses.ts"
import { legacyAutoPayoutSettleKind, legacyPayoutSettled, openAutoPayout } from "./AutoPayouts.ts"
import { LedgerAccounts } from "./Ledger.ts"
import { type OrderMove, orderMoves, orderTransition } from "./OrderMachine.ts"
import {
  failOrder,
  lockedOrder,
  lockExpiryKind,
  moveOrder,
  Orders,
  orderSettleKind,
  orderStartKind,
  sourceAccountOf,
  type StoredOrder
} from "./Orders.ts"
import { moveTransaction, SignaturesRequested } from "./Transactions.ts"
import { WorldModel } from "./WorldModel.ts"

const scope = (o: StoredOrder) => scopeOf(o.organizationId, o.environment)

/** How often the sweep looks again at a deposit-funded order whose funding is still being checked at its deadline. */
const fundingRecheckMs = 60_000

/** Whether a transfer to a deposit-funded order's funding address is still being checked (its credit pending). */
const fundingBeingChecked = (order: StoredOrder) =>
  Effect.gen(function*() {
    if (!order.depositFunded) return false
    const account = yield* (yield* Store).get(LedgerAccounts, sourceAccountOf(order))
    return account !== undefined && BigInt(account.creditsPending) > 0n
  })

/** The lock expiry sweep: a pending order whose execution was not claimed is cancelled (reason expired). */
const lockExpired: TimerHandler = (payload: { readonly orderId: OrderId }) =>
  Effect.gen(function*() {
    const order = yield* lockedOrder(payload.orderId)
    if (order === undefined) return
    const nowMs = yield* Clock.currentTimeMillis
    const move: OrderMove = { type: "expire", nowMs, fundingBeingChecked: yield* fundingBeingChecked(order) }
    if ("deferred" in orderTransition(order, move)) {
      // A transfer to the funding address is still being checked: the deadline waits for it.
      yield* schedule(lockExpiryKind, nowMs + fundingRecheckMs, { orderId: order.id }, scope(order))
      return
    }
    yield* Effect.orDie(moveOrder(order, move))
  })

/** The world model sends the order's source transfer: its transaction starts (processing), and settles later. */
const started: TimerHandler = (payload: { readonly orderId: OrderId }) =>
  Effect.gen(function*() {
    const order = yield* lockedOrder(payload.orderId)
    if (order === undefined || !orderMoves(order, { type: "send" })) return
    const processing = yield* Effect.orDie(moveTransaction(order.transactionId!, { type: "start" }))
    const model = yield* WorldModel
    if (processing.signingWalletId !== undefined) {
      // The source wallet's roster signs first; the quorum sends the transfer (`signed`), the service co-signing.
      yield* publish(SignaturesRequested, { transaction: processing, onQuorum: { kind: orderSignedKind, payload: { orderId: order.id }, delayMs: model.payouts.sendMs } })
      return
    }
    yield* sendSource(order)
  })

/** The source transfer is sent (the order can no longer be cancelled), and the conversion settles on the clock. */
const sendSource = (order: StoredOrder) =>
  Effect.gen(function*() {
    yield* Effect.orDie(moveOrder(order, { type: "send" }))
    const model = yield* WorldModel
    yield* schedule(orderSettleKind, (yield* Clock.currentTimeMillis) + model.orderSettlementMs[order.direction], { orderId: order.id }, scope(order))
  })

export const orderSignedKind = "order.signed"

/** The source transfer out of a non-custodial wallet met its roster's quorum: it is sent. */
const signed: TimerHandler = (payload: { readonly orderId: OrderId }) =>
  Effect.gen(function*() {
    const order = yield* lockedOrder(payload.orderId)
    if (order === undefined || !orderMoves(order, { type: "send" })) return
    yield* sendSource(order)
  })

/** The conversion settles: every hold posts, the transaction completes and the order succeeds; or the armed failure. */
const settled: TimerHandler = (payload: { readonly orderId: OrderId }) =>
  Effect.gen(function*() {
    const order = yield* lockedOrder(payload.orderId)
    if (order === undefined || !orderMoves(order, { type: "succeed" })) return
    if (order.forcedFailure !== undefined) {
      yield* Effect.orDie(failOrder(order, order.forcedFailure))
      return
    }
    const transaction = yield* Effect.orDie(moveTransaction(order.transactionId!, { type: "settle" }))
    const chain = order.destination.side.chain ?? order.source.side.chain
    const store = yield* Store
    // The settle opened the autoPayout (executeFundedOrders) and may have run autoExecute orders on the destination;
    // read this one again before moving it.
    const current = (yield* store.get(Orders, order.id))!
    const payoutTransactionId = current.payoutTransactionId ?? (current.autoPayout === undefined ? undefined : yield* openAutoPayout(current))
    yield* Effect.orDie(moveOrder(current, { type: "succeed" }, { payoutTransactionId }, chain === undefined ? {} : { txHash: sandboxTxHash(chain, transaction.id) }))
  })

export const orderTimerHandlers: Record<string, TimerHandler> = {
  [lockExpiryKind]: lockExpired,
  [orderStartKind]: started,
  [orderSettleKind]: settled,
  [orderSignedKind]: signed,
  [legacyAutoPayoutSettleKind]: legacyPayoutSettled
}
