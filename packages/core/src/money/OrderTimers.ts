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
 *   succeeds the order, or fails it with the failure the sandbox armed (`simulate/orders/{id}/fail`, or an outcome
 *   rule matching its transaction, simulate/Outcomes.ts).
 *
 * The chain confirming an order's deposit_return is a timer of its own module (DepositReturns.ts).
 *
 * A timer that finds its order moved on (cancelled, failed, already sent) does nothing: it asks the order table
 * (OrderMachine.ts `moves`), which holds every guard, rather than checking the order itself.
 */
import { OrderId, orderLegFailures } from "@fos/contract"
import { Clock, Effect, Schema } from "effect"
import * as Addresses from "./Addresses.ts"
import * as Domain from "../kernel/Domain.ts"
import * as Ledger from "./Ledger.ts"
import * as OrderMachine from "./OrderMachine.ts"
import * as Orders from "./Orders.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Timers from "../kernel/Timers.ts"
import * as Topics from "../kernel/Topics.ts"
import * as Transactions from "./Transactions.ts"
import * as WorldModel from "./WorldModel.ts"

import { openAutoPayout } from "./AutoPayouts.ts"

const scope = (o: Orders.StoredOrder) => Tenancy.scopeOf(o.organizationId, o.environment)

/** How often the sweep looks again at a deposit-funded order whose funding is still being checked at its deadline. */
const fundingRecheckMs = 60_000

/** Whether a transfer to a deposit-funded order's funding address is still being checked (its credit pending). */
const fundingBeingChecked = (order: Orders.StoredOrder) =>
  Effect.gen(function*() {
    if (!order.depositFunded) return false
    const account = yield* (yield* Store.Store).get(Ledger.LedgerAccounts, Orders.sourceAccountOf(order))
    return account !== undefined && BigInt(account.creditsPending) > 0n
  })

/** The lock expiry sweep: a pending order whose execution was not claimed is cancelled (reason expired). */
const lockExpired = (payload: { readonly orderId: OrderId }) =>
  Effect.gen(function*() {
    const order = yield* Orders.locked(payload.orderId)
    if (order === undefined) return
    const nowMs = yield* Clock.currentTimeMillis
    const move: OrderMachine.Move = { type: "expire", nowMs, fundingBeingChecked: yield* fundingBeingChecked(order) }
    if ("deferred" in OrderMachine.transition(order, move)) {
      // A transfer to the funding address is still being checked: the deadline waits for it.
      yield* Timers.schedule(Orders.lockExpiryTimer, nowMs + fundingRecheckMs, { orderId: order.id }, scope(order))
      return
    }
    yield* Effect.orDie(Orders.move(order, move))
  })

/** The world model sends the order's source transfer: its transaction starts (processing), and settles later. */
const started = (payload: { readonly orderId: OrderId }) =>
  Effect.gen(function*() {
    const order = yield* Orders.locked(payload.orderId)
    if (order === undefined || !OrderMachine.moves(order, { type: "send" })) return
    const processing = yield* Effect.orDie(Transactions.move(order.transactionId!, { type: "start" }))
    const model = yield* WorldModel.WorldModel
    if (processing.signingWalletId !== undefined) {
      // The source wallet's roster signs first; the quorum sends the transfer (`signed`), the service co-signing.
      yield* Topics.publish(Transactions.SignaturesRequested, { transaction: processing, onQuorum: { kind: orderSignedTimer.name, payload: { orderId: order.id }, delayMs: model.payouts.sendMs } })
      return
    }
    yield* sendSource(order)
  })

/** The source transfer is sent (the order can no longer be cancelled), and the conversion settles on the clock. */
const sendSource = (order: Orders.StoredOrder) =>
  Effect.gen(function*() {
    yield* Effect.orDie(Orders.move(order, { type: "send" }))
    const model = yield* WorldModel.WorldModel
    yield* Timers.schedule(Orders.settleTimer, (yield* Clock.currentTimeMillis) + model.orderSettlementMs[order.direction], { orderId: order.id }, scope(order))
  })

/** An order's source transfer out of a non-custodial wallet is sent, `sendMs` after its roster's quorum was met. */
export const orderSignedTimer = Timers.kind("order.signed", Schema.Struct({ orderId: OrderId }), "orderId")

/** The source transfer out of a non-custodial wallet met its roster's quorum: it is sent. */
const signed = (payload: { readonly orderId: OrderId }) =>
  Effect.gen(function*() {
    const order = yield* Orders.locked(payload.orderId)
    if (order === undefined || !OrderMachine.moves(order, { type: "send" })) return
    yield* sendSource(order)
  })

/** The conversion settles: every hold posts, the transaction completes and the order succeeds; or the armed failure. */
const settled = (payload: { readonly orderId: OrderId }) =>
  Effect.gen(function*() {
    const order = yield* Orders.locked(payload.orderId)
    if (order === undefined || !OrderMachine.moves(order, { type: "succeed" })) return
    if (order.forcedFailure !== undefined) {
      yield* Effect.orDie(Orders.fail(order, order.forcedFailure))
      return
    }
    const store = yield* Store.Store
    // A scripted failure of the conversion at settlement (simulate/Outcomes.ts): the order fails through its table.
    const leg = order.environment === "sandbox" ? yield* store.get(Transactions.Transactions, order.transactionId!) : undefined
    const scripted = leg === undefined ? undefined : yield* Transactions.scriptedOutcome(leg, "settle")
    const reasonCode = scripted === undefined ? undefined : orderLegFailures[scripted.failureCode]
    if (reasonCode !== undefined) {
      yield* Effect.orDie(Orders.fail(order, reasonCode))
      return
    }
    const transaction = yield* Effect.orDie(Transactions.move(order.transactionId!, { type: "settle" }))
    const chain = order.destination.side.chain ?? order.source.side.chain
    // The settle opened the autoPayout (executeFundedOrders) and may have run autoExecute orders on the destination;
    // read this one again before moving it.
    const current = (yield* store.get(Orders.Orders, order.id))!
    const payoutTransactionId = current.payoutTransactionId ?? (current.autoPayout === undefined ? undefined : yield* openAutoPayout(current))
    yield* Effect.orDie(Orders.move(current, { type: "succeed" }, { payoutTransactionId }, chain === undefined ? {} : { txHash: Addresses.sandboxTxHash(chain, transaction.id) }))
  })

/** An order's clock: its lock expiry sweep, its source transfer's sending (or signing) and its settlement. */
export const domain = Domain.make({
  name: "money/OrderTimers",
  timers: [
    Timers.handle(Orders.lockExpiryTimer, lockExpired, (id) => `ends the rate lock of order ${id} (it is cancelled as expired unless executed)`),
    Timers.handle(Orders.startTimer, started, (id) => `starts order ${id}'s conversion (processing)`),
    Timers.handle(Orders.settleTimer, settled, (id) => `settles order ${id} (it succeeds)`),
    Timers.handle(orderSignedTimer, signed, (id) => `sends order ${id}'s conversion, its roster's quorum met`)
  ]
})
