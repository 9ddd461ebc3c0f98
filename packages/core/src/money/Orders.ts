/**
 * Orders: a customer converting between assets, from one of its accounts to another (spec, "Order", the order state
 * table of OrderMachine.ts, POST /orders, /orders/{id}/execute, /orders/{id}/cancel).
 *
 * - Creating an order prices it (Pricing.ts, or the quote option it redeems) and locks that price until
 *   `lockExpiresAt`; there is no balance check or reservation. It emits order.created and schedules the lock expiry
 *   sweep as a durable timer: a pending order whose lock passes before execution is claimed is cancelled (reason
 *   expired), and later funding does not revive it.
 * - Executing it (`POST .../execute`, or autoExecute once the source's available balance covers `totalDebit`)
 *   claims execution and opens the order's transaction (type = the order's direction, `linkedOrderId`), whose holds
 *   are every leg of the conversion as one linked ledger batch: the principal and the fees out of the customer's
 *   source, the converted amount into the destination, and what the spread and the client's markup keep into their
 *   fee accounts. An available balance below `totalDebit` is 422 INSUFFICIENT_FUNDS, which commits nothing (so the
 *   same Idempotency-Key works again once the balance covers it).
 * - The world model then sends the source transfer (transaction processing) and settles the conversion on the
 *   clock: the holds post, the transaction completes and the order succeeds (order.succeeded with transactionId,
 *   and txHash when a chain leg ran), all in one store transaction.
 * - A failure the sandbox forces (`simulate/orders/{id}/fail`) fails the transaction, releases the holds and fails
 *   the order with order.failed (reasonCode, catalog failureMessage).
 *
 * - A deposit-funded order (no `source`, a `sourceAsset` on chain instead) gets `depositInstructions`: a
 *   service-managed funding address (a wallet no read shows and no wallet.created announces) and the amount to send.
 *   It executes by itself once a deposit there settles and covers totalDebit; its lockExpiresAt is the funding
 *   deadline, which the sweep enforces only once no deposit to the address is still being checked. Whatever sits at
 *   the address once the order has ended (a late deposit, a surplus, funds of an order that expired underfunded) goes
 *   back to the address it came from as a `deposit_return` transaction, which ends failed with no failureCode and the
 *   catalog's fixed failureMessage once the chain confirms it.
 *
 * - autoPayout chains a payout after the conversion: checked at creation, opened when the conversion settles
 *   (AutoPayouts.ts).
 *
 * This module is the order resource and its lifecycle: the row and its lists, create, get, execute, cancel, fail,
 * every move through the state table, and every write of the row (FundedOrders.ts records through
 * `recordAutoPayout` and `recordFundingSender`). Beside it: the state table (OrderMachine.ts), the timers that move an
 * order on the clock (OrderTimers.ts), an order's accounts and the side they make (OrderAccounts.ts), autoPayout
 * (AutoPayouts.ts), and what a transaction's end does to orders (FundedOrders.ts). It is a little over 600 lines
 * because it still holds what an ended deposit-funded order leaves at its funding address (`returnLeftover`,
 * `returnFunding`; the returns themselves are DepositReturns.ts's, shared with signing).
 */
import {
  type AutoPayout,
  type CustomerId,
  type Environment,
  Order as OrderSchema,
  type Order as OrderWire,
  type OrderCancellationReason,
  type OrderCreate,
  OrderFailureMessages,
  type OrderFailureReasonCode,
  OrderId,
  OrderSorts,
  type OrderStatus,
  type RecipientType,
  toIso,
  type TransactionFailureCode,
  type TransactionId,
  withArticle
} from "@fos/contract"
import { Clock, Effect, Schema } from "effect"
import type * as Auth from "../tenancy/Auth.ts"
import * as Customers from "../onboarding/Customers.ts"
import * as DepositReturns from "./DepositReturns.ts"
import * as Domain from "../kernel/Domain.ts"
import * as History from "../kernel/History.ts"
import * as IdGenerator from "../kernel/IdGenerator.ts"
import * as Ledger from "./Ledger.ts"
import * as OrderMachine from "./OrderMachine.ts"
import * as Outbox from "../kernel/Outbox.ts"
import * as Paging from "../kernel/Paging.ts"
import * as Pricing from "./Pricing.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Quotes from "./Quotes.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Timers from "../kernel/Timers.ts"
import * as Transactions from "./Transactions.ts"
import * as Wire from "../kernel/Wire.ts"
import * as WorldModel from "./WorldModel.ts"

import { checkAutoPayout } from "./AutoPayouts.ts"

import { accountSide, fundingAccount, ledgerAsset, type OrderAccountOf, resolveAccount } from "./OrderAccounts.ts"

import { refuseRestricted } from "./SourceRules.ts"

export type { OrderAccountOf } from "./OrderAccounts.ts"

/**
 * An order's row: the wire's members it keeps as they are (the contract's `Order`), its machine's state, and its own:
 * the accounts behind its sides and its amounts in units, from which the wire's are worked out.
 */
export interface StoredOrder
  extends
    OrderMachine.State,
    Wire.Stored<
      OrderWire,
      "id" | "customerId" | "direction" | "lockSide" | "rate" | "fees" | "autoExecute" | "quoteOptionId" | "markupBps" | "clientReferenceId" | "createdAt" | "updatedAt"
    >
{
  readonly organizationId: string
  readonly environment: Environment
  readonly source: OrderAccountOf
  readonly destination: OrderAccountOf
  readonly mid: string
  readonly spreadBps: number
  /** Units of the assets' smallest units, as decimal text (rows are JSON). */
  readonly principal: string
  readonly fee: string
  readonly markupAmount: string
  readonly totalDebit: string
  readonly destinationAmount: string
  readonly spreadAmount: string
  readonly markupBpsAmount: string
  readonly transactionId: TransactionId | null
  readonly reasonCode: OrderFailureReasonCode | null
  /** A failure the sandbox armed for the order's execution. */
  readonly forcedFailure: OrderFailureReasonCode | undefined
  /** A refusal the sandbox armed for the order's execution attempts (provider_unavailable: until `untilMs`). */
  readonly executionRefusal?: { readonly reasonCode: "provider_rejected" | "provider_unavailable" | "cancelled"; readonly untilMs: number } | undefined
  /** The payout chained after the conversion, as requested, and the client's margin on it (destination units). */
  readonly autoPayout?: AutoPayout | undefined
  readonly payoutMarkup?: string | undefined
  readonly payoutTransactionId?: TransactionId | undefined
  /** A deposit-funded order: its funding address (the source wallet's), and who last sent funds there. */
  readonly fundingAddress?: string | undefined
  readonly fundingSender?: string | undefined
  /** Why the order's transaction failed, when its source transfer's signing failed (order.failed `failureCode`). */
  readonly transactionFailureCode?: TransactionFailureCode | undefined
}

const scope = (o: StoredOrder) => Tenancy.scopeOf(o.organizationId, o.environment)

// --- lists -------------------------------------------------------------------------------------------------------------

/** The filters of `GET /v2/orders` (the paging query's `direction` leaves the order's own direction out of them). */
export interface OrderFilter {
  readonly status?: OrderStatus | undefined
  readonly customerId?: string | undefined
}

const filterKeys = ["status", "customerId"] as const

/** The ledger account an order's source debits: where the balance autoExecute waits for lands. */
export const sourceAccountOf = (o: { readonly source: OrderAccountOf }) => Ledger.accountId(o.source.holder, ledgerAsset(o.source.side))

export const Orders = Store.table<StoredOrder>({
  name: "orders",
  key: (o) => o.id,
  unique: { clientReferenceId: (o) => (o.clientReferenceId === undefined ? undefined : `${scope(o)}/${o.clientReferenceId}`) },
  orders: {
    // One keyset order per sort and combination of the filters (kernel/Paging.ts), as transactions.
    ...Paging.filteredOrders({
      filters: filterKeys,
      sorts: OrderSorts,
      scope,
      value: (o: StoredOrder, key) => o[key],
      sort: (o, sortBy) => o[sortBy],
      countedSort: "createdAt"
    }),
    // autoExecute orders waiting for their source's balance, oldest first; an order leaves it once it is claimed or ends.
    awaitingFunds: {
      partition: (o) => (o.autoExecute && o.status === "pending" && !o.executing ? sourceAccountOf(o) : undefined),
      sort: (o) => o.createdAt,
      counted: false
    }
  }
})

/** The order of every order of a scope (no filter). */
export const ofScope = Paging.filterOrderName("createdAt", [])

/** A sandbox's orders; their timers are OrderTimers.ts's. */
export const domain = Domain.make({
  name: "money/Orders",
  tables: [{ ...Domain.inScope(Orders, ofScope), counted: "orders", readsAs: (o: StoredOrder) => ({ schema: OrderSchema, value: toWire(o) }) }]
})

export const list = (caller: Auth.Caller, filter: OrderFilter, query: Paging.ListQuery): Effect.Effect<Paging.ListEnvelope<OrderWire>, Problem.ApiError, Store.Store> =>
  Paging.listPage(Orders, {
    ...Paging.filteredList(filterKeys, "createdAt", Tenancy.scopeOf(caller.organization.id, caller.environment), filter, query.sortBy),
    query,
    toWire: toWire
  })

// --- wire ----------------------------------------------------------------------------------------------------------------

export const toWire = (o: StoredOrder): OrderWire =>
  Wire.toWire({
    id: o.id,
    customerId: o.customerId,
    status: o.status,
    direction: o.direction,
    source: o.depositFunded ? undefined : accountSide(o.source, Quotes.amountOf(o.source.side, BigInt(o.principal))),
    destination: accountSide(o.destination, Quotes.amountOf(o.destination.side, BigInt(o.destinationAmount))),
    lockSide: o.lockSide,
    rate: o.rate,
    fees: o.fees,
    totalDebit: Quotes.amountOf(o.source.side, BigInt(o.totalDebit)),
    lockExpiresAt: toIso(o.lockExpiresAtMs),
    autoExecute: o.autoExecute,
    autoPayout: o.autoPayout,
    payoutTransactionId: o.payoutTransactionId,
    quoteOptionId: o.quoteOptionId,
    depositInstructions: depositInstructionsOf(o),
    markupBps: o.markupBps,
    // The shape it was declared in (docs/decisions.md, "markupAmount").
    markupAmount: BigInt(o.markupAmount) > 0n ? Quotes.amountOf(o.source.side, BigInt(o.markupAmount)).amount : undefined,
    clientReferenceId: o.clientReferenceId,
    // Representation rule 3: none of these is nullable in the spec, so each is omitted until it has a value.
    transactionId: o.transactionId ?? undefined,
    reasonCode: o.reasonCode ?? undefined,
    failureMessage: o.reasonCode === null ? undefined : OrderFailureMessages[o.reasonCode],
    cancellationReason: o.cancellationReason ?? undefined,
    createdAt: o.createdAt,
    updatedAt: o.updatedAt
  }) as OrderWire

/** Where and what to send to fund a deposit-funded order: its totalDebit, at its funding address. */
const depositInstructionsOf = (o: StoredOrder) =>
  o.fundingAddress === undefined ? undefined : { address: o.fundingAddress, assetAmount: Quotes.amountOf(o.source.side, BigInt(o.totalDebit)) }

const notFound = () => Problem.apiError("ORDER_NOT_FOUND", "No order with this id exists in this organization and environment.")

export const get = (caller: Auth.Caller, id: OrderId, forUpdate = false): Effect.Effect<StoredOrder, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const order = yield* (forUpdate ? store.getForUpdate(Orders, id) : store.get(Orders, id))
    if (order === undefined || scope(order) !== Tenancy.scopeOf(caller.organization.id, caller.environment)) return yield* notFound()
    return order
  })

// --- creating ------------------------------------------------------------------------------------------------------------

const oneOrder = Schema.Struct({ orderId: OrderId })

/**
 * The lock expiry sweep, at an order's lockExpiresAt (or a minute later, again and again, while a transfer to a
 * deposit-funded order's funding address is still being checked). OrderTimers.ts handles the order's kinds.
 */
export const lockExpiryTimer = Timers.kind("order.lock_expiry", oneOrder, "orderId")
/** The world model sends an executing order's source transfer, `orderStartMs` after its execution was claimed. */
export const startTimer = Timers.kind("order.start", oneOrder, "orderId")
/** The conversion settles, `orderSettlementMs` of its direction after its source transfer was sent. */
export const settleTimer = Timers.kind("order.settle", oneOrder, "orderId")

/**
 * A restricted customer makes no new orders (SourceRules.ts, as no new payouts): creating or executing one is 422
 * UNPROCESSABLE_ENTITY while the restriction lasts. An order already executing goes on.
 */
const refuseRestrictedCustomer = (customerId: CustomerId): Effect.Effect<void, Problem.ApiError, Store.Store> =>
  Effect.flatMap(Store.Store, (store) => Effect.flatMap(store.get(Customers.Customers, customerId), (customer) => refuseRestricted(customer, "orders")))

/**
 * `POST /v2/orders`. Its refusals come in a fixed order, the precedence the spec's error table implies (docs/money.md,
 * "The order of an order's refusals"); a request that breaks two rules gets the first:
 * 1. the caller: markup fields without the organization's client_markup feature (403 CLIENT_MARKUP_NOT_ENABLED);
 * 2. the request alone, before anything is read: an order without a quoteOptionId must carry amount and lockSide
 *    (422 MISSING_REQUIRED_FIELDS);
 * 3. existence and state of each side: the destination, its customer not restricted, then the source (404s,
 *    WALLET_NOT_ACTIVE, VIRTUAL_ACCOUNT_NOT_ACTIVE, UNPROCESSABLE_ENTITY);
 * 4. the two sides together (INVALID_TRANSFER_PAIR, INVALID_ORDER_COMBO), then the quote option (QUOTE_*), or the
 *    amount at its asset's precision (AMOUNT_OUT_OF_RANGE) and the price, as on a quote (UNSUPPORTED_PAIR,
 *    NO_PRICING_CONFIGURED, RATE_UNAVAILABLE, the terms at the price), then the autoPayout's checks;
 * 5. funds: INSUFFICIENT_FUNDS, at execution.
 */
export const create = (caller: Auth.Caller, body: OrderCreate): Effect.Effect<OrderWire, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    yield* Quotes.checkMarkupAllowed(caller, body)
    if (body.quoteOptionId === undefined && (body.amount === undefined || body.lockSide === undefined)) {
      const missing = [body.amount === undefined ? "amount" : undefined, body.lockSide === undefined ? "lockSide" : undefined].filter((f) => f !== undefined)
      return yield* Problem.apiError("MISSING_REQUIRED_FIELDS", `An order without a quoteOptionId needs ${missing.join(" and ")}.`)
    }
    const orderId = yield* IdGenerator.newId("ord")
    const destination = yield* resolveAccount(caller, body.destination, "destination")
    yield* refuseRestrictedCustomer(destination.customerId)
    const source = body.source === undefined ? yield* fundingAccount(caller, body, destination.customerId, orderId) : yield* resolveAccount(caller, body.source, "source")
    const depositFunded = body.source === undefined
    if (depositFunded) {
      // The funding address is the order's own: nothing to check between it and the destination.
    } else if (source.account.type === "wallet" && destination.account.type === "wallet") {
      const s = source.account.side
      const d = destination.account.side
      if (source.account.id === destination.account.id || source.customerId !== destination.customerId || (s.chain !== d.chain && s.asset !== d.asset)) {
        return yield* Problem.apiError(
          "INVALID_TRANSFER_PAIR",
          "A conversion runs between two different active wallets of the same customer: a swap on one chain, or a bridge of one asset between chains."
        )
      }
    } else if (source.customerId !== destination.customerId) {
      return yield* Problem.apiError("INVALID_ORDER_COMBO", "The source and the destination belong to different customers.")
    } else if (source.account.type === "virtual_account" && destination.account.type === "virtual_account" && source.account.id === destination.account.id) {
      return yield* Problem.apiError("INVALID_ORDER_COMBO", "The source and the destination are the same virtual account.")
    }
    const scoped = Tenancy.scopeOf(caller.organization.id, caller.environment)
    const payout = body.autoPayout
    const recipientType: RecipientType = payout === undefined
      ? destination.account.type
      : destination.account.side.chain === undefined
      ? "external_bank"
      : "external_crypto"
    let terms: Quotes.Terms
    let quoteOptionId: string | undefined
    if (body.quoteOptionId !== undefined) {
      const option = yield* Quotes.redeemableOption(caller, body.quoteOptionId)
      const sameSide = (a: Pricing.PairSide, b: Pricing.PairSide) => a.asset === b.asset && a.chain === b.chain
      if (!sameSide(option.input.source, source.account.side) || !sameSide(option.input.destination, destination.account.side)) {
        return yield* Problem.apiError("QUOTE_ASSET_MISMATCH", "The quote option is priced for other assets than this order's source and destination.")
      }
      if (option.recipientType !== recipientType) {
        return yield* Problem.apiError("QUOTE_RECIPIENT_TYPE_UNPRICED", `The quote option is priced for ${withArticle(option.recipientType)} recipient; this order pays ${withArticle(recipientType)}.`)
      }
      terms = yield* Quotes.termsOf(option.price, option.input)
      quoteOptionId = option.id
    } else {
      // Both present: checked first of all, above.
      if (body.amount === undefined || body.lockSide === undefined) return yield* Effect.die(new Error("an order's amount and lockSide, checked above"))
      const input: Quotes.TermsInput = {
        source: source.account.side,
        destination: destination.account.side,
        amount: body.amount,
        lockSide: body.lockSide,
        markupBps: body.markupBps,
        markupAmount: body.markupAmount
      }
      // As on a quote: an amount of nothing at its asset's precision before the pair and its price.
      yield* Quotes.refuseZeroAmount(input)
      const price = yield* Pricing.priceOf(scoped, source.account.side, destination.account.side)
      terms = yield* Quotes.termsOf(price, input)
    }
    const checkedPayout = payout === undefined ? undefined : yield* checkAutoPayout(caller, payout, terms, destination.account, destination.customerId)
    const store = yield* Store.Store
    const model = yield* WorldModel.WorldModel
    const nowMs = yield* Clock.currentTimeMillis
    const now = toIso(nowMs)
    const order: StoredOrder = {
      autoPayout: checkedPayout?.payout,
      payoutMarkup: checkedPayout?.margin.toString(),
      ...OrderMachine.initialState(nowMs + model.orderLockMs, depositFunded),
      id: orderId,
      organizationId: caller.organization.id,
      environment: caller.environment,
      customerId: source.customerId,
      direction: terms.direction,
      source: source.account,
      destination: destination.account,
      lockSide: terms.lockSide,
      rate: terms.rate,
      mid: terms.mid,
      spreadBps: terms.spreadBps,
      markupBps: terms.markupBps,
      principal: terms.principal.toString(),
      fee: terms.fee.toString(),
      markupAmount: terms.markupAmount.toString(),
      totalDebit: terms.totalDebit.toString(),
      destinationAmount: terms.destinationAmount.toString(),
      spreadAmount: terms.spreadAmount.toString(),
      markupBpsAmount: terms.markupBpsAmount.toString(),
      fees: Quotes.feesOf(terms),
      // A deposit-funded order executes when its deposit lands, whatever autoExecute says.
      autoExecute: depositFunded || (body.autoExecute ?? false),
      quoteOptionId,
      clientReferenceId: body.clientReferenceId,
      transactionId: null,
      reasonCode: null,
      forcedFailure: undefined,
      fundingAddress: "address" in source ? source.address as string : undefined,
      fundingSender: undefined,
      createdAt: now,
      updatedAt: now
    }
    yield* Outbox.emitEvent({
      type: "order.created",
      organizationId: order.organizationId,
      environment: order.environment,
      data: Wire.toWire({
        orderId: order.id,
        customerId: order.customerId,
        clientReferenceId: order.clientReferenceId,
        lockExpiresAt: toIso(order.lockExpiresAtMs),
        depositInstructions: depositInstructionsOf(order),
        quoteOptionId: order.quoteOptionId,
        occurredAt: now
      })
    })
    // autoExecute: at once when the balance covers totalDebit already (the order is stored once, executing), else
    // when a credit covers it (TransactionEnded).
    const stored = order.autoExecute ? yield* Effect.catch(claim(order), () => Effect.succeed(order)) : order
    const inserted = yield* Effect.exit(store.insert(Orders, stored))
    if (inserted._tag === "Failure") return yield* Problem.apiError("DUPLICATE_CLIENT_REFERENCE_ID", "This clientReferenceId is already used by another order.")
    yield* History.recordState(undefined, stored)
    if (quoteOptionId !== undefined) {
      const option = (yield* store.get(Quotes.QuoteOptions, quoteOptionId))!
      yield* Quotes.markUsed(option, order.id)
    }
    // The sweep is for an order whose execution is not claimed; an executing order never expires.
    if (!stored.executing) yield* Timers.schedule(lockExpiryTimer, order.lockExpiresAtMs, { orderId: order.id }, scoped)
    return toWire(stored)
  })

// --- moving --------------------------------------------------------------------------------------------------------------

const refusalDetail = {
  ORDER_NOT_EXECUTABLE: "Only a pending order whose execution is not claimed yet can be executed",
  ORDER_EXPIRED: "The order passed its lockExpiresAt before execution was claimed",
  ORDER_NOT_CANCELLABLE: "A succeeded or failed order cannot be cancelled",
  ORDER_CANCEL_IN_PROGRESS: "The order's source transfer is already sent and the order is about to end; read it or retry"
} as const

/**
 * What OrderMachine sets with every move that emits the event reading it (a cancel's reason, a failure's code): its
 * absence is a defect, not a payload to send.
 */
const setByMachine = <A>(order: StoredOrder, value: A | null, what: string): A => {
  if (value === null) throw new Error(`order ${order.id} moved to ${order.status} without its ${what}`)
  return value
}

/** Applies `move` to `order` (locked by the caller): the next state stored, and its events emitted, in order. */
export const move = (
  order: StoredOrder,
  move: OrderMachine.Move,
  extra: Partial<StoredOrder> = {},
  eventData: Record<string, unknown> = {}
): Effect.Effect<StoredOrder, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const outcome = OrderMachine.transition(order, move)
    if ("refused" in outcome) return yield* Problem.apiError(outcome.refused, `${refusalDetail[outcome.refused]} (status ${order.status}).`)
    if ("unchanged" in outcome || "deferred" in outcome) return order
    const store = yield* Store.Store
    const now = toIso(yield* Clock.currentTimeMillis)
    const moved: StoredOrder = { ...order, ...outcome.next, ...extra, updatedAt: now }
    yield* Effect.orDie(store.update(Orders, moved))
    yield* History.recordState(order.status, moved)
    for (const event of outcome.events) {
      const head = { orderId: moved.id, customerId: moved.customerId, clientReferenceId: moved.clientReferenceId }
      const data = event === "order.cancelled"
        ? { ...head, reason: setByMachine(moved, moved.cancellationReason, "cancellation reason"), occurredAt: now }
        : event === "order.failed"
        ? {
          ...head,
          reasonCode: setByMachine(moved, moved.reasonCode, "reason code"),
          failureMessage: OrderFailureMessages[setByMachine(moved, moved.reasonCode, "reason code")],
          failureCode: moved.transactionFailureCode,
          occurredAt: now
        }
        : { ...head, transactionId: setByMachine(moved, moved.transactionId, "transaction"), ...eventData, succeededAt: now, occurredAt: now }
      yield* Outbox.emitEvent({ type: event, organizationId: moved.organizationId, environment: moved.environment, data: Wire.toWire(data) })
    }
    if (moved.depositFunded && moved.status !== "pending") yield* returnLeftover(moved)
    return moved
  })

/** Stores `order` as it now is (locked by the caller), in the caller's transaction, and answers it. */
const save = (order: StoredOrder): Effect.Effect<StoredOrder, never, Store.Store> =>
  Effect.as(Effect.orDie(Effect.flatMap(Store.Store, (store) => store.update(Orders, order))), order)

/**
 * The order's own autoPayout opened as its conversion's transaction completed (FundedOrders.ts): the order names the
 * payout, so no later credit opens it again. No event: the payout's transaction announces itself.
 */
export const recordAutoPayout = (order: StoredOrder, payoutTransactionId: TransactionId): Effect.Effect<StoredOrder, never, Store.Store> =>
  save({ ...order, payoutTransactionId })

/**
 * A deposit in the order's asset reached its funding address (FundedOrders.ts): who sent it, which is where anything
 * left over once the order ends goes back to.
 */
export const recordFundingSender = (order: StoredOrder, sender: string | undefined): Effect.Effect<StoredOrder, never, Store.Store> =>
  save({ ...order, fundingSender: sender })

/**
 * What sits at an ended deposit-funded order's funding address goes back to the address it came from: a
 * deposit_return transaction per asset, holding the funds until the chain confirms the transfer back. Every asset the
 * address holds goes, not only the order's: a deposit in another asset was sent back when it arrived, and one still
 * there (from before that was so) goes now.
 */
export const returnLeftover = (order: StoredOrder): Effect.Effect<void, never, Store.Store> =>
  Effect.gen(function*() {
    if (order.fundingSender === undefined) return
    for (const balance of yield* Ledger.balancesOf(order.source.holder)) {
      if (balance.available > 0n) yield* returnFunding(order, { asset: balance.asset, chain: balance.chain }, balance.available, order.fundingSender)
    }
  })

/** Sends `units` of `side` at the order's funding address back to `sender`, as a deposit_return (DepositReturns.ts). */
export const returnFunding = (order: StoredOrder, side: Pricing.PairSide, units: bigint, sender: string): Effect.Effect<void, never, Store.Store> =>
  order.fundingAddress === undefined || side.chain === undefined
    ? Effect.void
    : DepositReturns.returnFromFundingAddress({
      organizationId: order.organizationId,
      environment: order.environment,
      customerId: order.customerId,
      orderId: order.id,
      fundingAddress: order.fundingAddress,
      from: order.source.holder,
      asset: { ...ledgerAsset(side), chain: side.chain },
      assetAmount: Quotes.amountOf(side, units),
      units,
      sender
    })

/** Every leg of the conversion, as the transaction's pending holds: one linked batch. */
const legsOf = (order: StoredOrder, id: TransactionId): ReadonlyArray<Ledger.TransferRequest> => {
  const scoped = scope(order)
  const liquidity: Ledger.Holder = { scope: scoped, type: "liquidity", id: "market" }
  const serviceFees: Ledger.Holder = { scope: scoped, type: "fees", id: "service" }
  const organizationFees: Ledger.Holder = { scope: scoped, type: "fees", id: "organization" }
  const from = ledgerAsset(order.source.side)
  const to = ledgerAsset(order.destination.side)
  const leg = (name: string, debit: Ledger.Holder, credit: Ledger.Holder, asset: Ledger.LedgerAsset, amount: string): ReadonlyArray<Ledger.TransferRequest> =>
    BigInt(amount) > 0n
      ? [{ kind: "pending", id: `${id}/${name}`, debit, credit, asset, amount: BigInt(amount), code: `${order.direction}.${name}`, transactionId: id }]
      : []
  return [
    ...leg("principal", order.source.holder, liquidity, from, order.principal),
    ...leg("fee", order.source.holder, serviceFees, from, order.fee),
    ...leg("markup", order.source.holder, organizationFees, from, order.markupAmount),
    ...leg("credit", liquidity, order.destination.holder, to, order.destinationAmount),
    ...leg("spread", liquidity, serviceFees, to, order.spreadAmount),
    ...leg("markup_rate", liquidity, organizationFees, to, order.markupBpsAmount)
  ]
}

const insufficient = (order: StoredOrder, available: bigint) =>
  Problem.apiError(
    "INSUFFICIENT_FUNDS",
    `The source's available balance of ${Quotes.amountOf(order.source.side, available).amount} ${order.source.side.asset} does not cover the order's totalDebit of ${
      Quotes.amountOf(order.source.side, BigInt(order.totalDebit)).amount
    }.`
  )

/**
 * Claims execution of `order` and opens its transaction with every leg held, answering the order as it is now (for
 * the caller to store: execution changes no status and fires no order event); INSUFFICIENT_FUNDS when the source's
 * available balance does not cover totalDebit. Writes nothing when it fails.
 */
const claim = (order: StoredOrder): Effect.Effect<StoredOrder, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const nowMs = yield* Clock.currentTimeMillis
    const outcome = OrderMachine.transition(order, { type: "execute", nowMs })
    if ("refused" in outcome) return yield* Problem.apiError(outcome.refused, `${refusalDetail[outcome.refused]} (status ${order.status}).`)
    if (!("next" in outcome)) return yield* Effect.die(new Error("the order table answers execute with a move or a refusal"))
    yield* refuseRestrictedCustomer(order.customerId)
    const refusal = order.executionRefusal
    if (refusal !== undefined && nowMs < refusal.untilMs) {
      switch (refusal.reasonCode) {
        case "provider_rejected":
          return yield* Problem.apiError("PROVIDER_REJECTED", "The provider refused the conversion; no funds moved.")
        case "cancelled":
          return yield* Problem.apiError("CANCELLED", "The provider cancelled the conversion; no funds moved.")
        case "provider_unavailable":
          return yield* Problem.apiError("PROVIDER_UNAVAILABLE", "The provider is unavailable; no funds moved. Retry after retryAfterSeconds.", {
            retryAfterSeconds: Math.ceil((refusal.untilMs - nowMs) / 1000)
          })
      }
    }
    const balance = yield* Ledger.balanceIn(order.source.holder, ledgerAsset(order.source.side))
    if (balance.available < BigInt(order.totalDebit)) return yield* insufficient(order, balance.available)
    const transaction = yield* Transactions.open({
      organizationId: order.organizationId,
      environment: order.environment,
      customerId: order.customerId,
      type: order.direction,
      source: accountSide(order.source, Quotes.amountOf(order.source.side, BigInt(order.totalDebit))),
      destination: accountSide(order.destination, Quotes.amountOf(order.destination.side, BigInt(order.destinationAmount))),
      fees: order.fees,
      clientReferenceId: order.clientReferenceId,
      linkedOrderId: order.id,
      // A non-custodial source: its roster signs the source transfer once the transaction is processing.
      signingWalletId: order.source.nonCustodial === true ? order.source.id : undefined,
      holds: (id) => legsOf(order, id)
    }).pipe(Effect.catchTag("LedgerRefusal", (refusal) =>
      refusal.reason === "insufficient_funds" ? Effect.fail(insufficient(order, balance.available)) : Effect.die(refusal)))
    const model = yield* WorldModel.WorldModel
    yield* Timers.schedule(startTimer, nowMs + model.orderStartMs, { orderId: order.id }, scope(order))
    return { ...order, ...outcome.next, transactionId: transaction.id, updatedAt: toIso(nowMs) }
  })

/** Claims execution of `order` (locked, stored) and stores it executing. */
const execute = (order: StoredOrder): Effect.Effect<StoredOrder, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const claimed = yield* claim(order)
    yield* Effect.orDie((yield* Store.Store).update(Orders, claimed))
    return claimed
  })

/** autoExecute: executes the order when its source's balance covers it, else leaves it waiting. */
export const tryExecute = (order: StoredOrder): Effect.Effect<StoredOrder, never, Store.Store> =>
  Effect.catch(execute(order), () => Effect.succeed(order))

/**
 * `POST /v2/orders/{orderId}/execute`: one attempt. Its refusals come in a fixed order, the precedence the spec's
 * error table implies (docs/money.md, "The order of an order's refusals"), `claim`'s; a request that breaks two rules
 * gets the first:
 * 1. existence: the order, of the caller's organization and environment (404 ORDER_NOT_FOUND);
 * 2. the order's state, by the state table: ORDER_EXPIRED, ORDER_NOT_EXECUTABLE (409);
 * 3. the state around it: its customer not restricted (422 UNPROCESSABLE_ENTITY), then a refusal the sandbox armed
 *    for the provider (422 PROVIDER_REJECTED, CANCELLED, 503 PROVIDER_UNAVAILABLE);
 * 4. funds: INSUFFICIENT_FUNDS, last, so that the same key works once the balance covers totalDebit.
 */
export const executeOrder = (caller: Auth.Caller, id: OrderId): Effect.Effect<OrderWire, Problem.ApiError, Store.Store> =>
  Effect.map(Effect.flatMap(get(caller, id, true), execute), toWire)

/**
 * `POST /v2/orders/{orderId}/cancel`. Its refusals: existence (404 ORDER_NOT_FOUND), then the order's state by the
 * state table (409 ORDER_NOT_CANCELLABLE, ORDER_CANCEL_IN_PROGRESS). A found order is in one state, so no request
 * breaks two of these rules.
 */
export const cancel = (caller: Auth.Caller, id: OrderId): Effect.Effect<OrderWire, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const order = yield* get(caller, id, true)
    const outcome = OrderMachine.transition(order, { type: "cancel" })
    // Cancelling an executing order whose source transfer is not sent cancels its transaction too, releasing the holds.
    if ("next" in outcome && order.executing && order.transactionId !== null) {
      yield* Transactions.move(order.transactionId, { type: "cancel" }, { cancellationReason: "client_cancelled" })
    }
    return toWire(yield* move(order, { type: "cancel" }))
  })

/** The transaction failure code an order failure reason fails the order's transaction with. */
const transactionFailureOf: { readonly [C in OrderFailureReasonCode]: TransactionFailureCode | "cancelled" } = {
  insufficient_funds: "insufficient_funds",
  insufficient_onchain_balance: "insufficient_onchain_balance",
  source_account_unavailable: "source_account_unavailable",
  provider_unavailable: "rail_unavailable",
  provider_rejected: "provider_rejected",
  internal_error: "provider_rejected",
  cancelled: "cancelled"
}

/** Fails the order (locked) with `reasonCode`: its transaction fails (or is cancelled) and its holds are released. */
export const fail = (order: StoredOrder, reasonCode: OrderFailureReasonCode): Effect.Effect<StoredOrder, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    if (order.transactionId !== null) {
      const failure = transactionFailureOf[reasonCode]
      yield* failure === "cancelled"
        ? Transactions.move(order.transactionId, { type: "cancel" }, { cancellationReason: "client_cancelled" })
        : Transactions.move(order.transactionId, { type: "fail" }, { failureCode: failure })
    }
    return yield* move(order, { type: "fail" }, { reasonCode })
  })

/**
 * `POST /sandbox/v2/simulate/orders/{orderId}/fail`: the provider fails the order. An executing order fails now; a
 * pending one fails when its execution would settle. An ended order is 409 RESOURCE_TERMINAL.
 */
export const simulateOrderFailure = (
  caller: Auth.Caller,
  id: OrderId,
  reasonCode: OrderFailureReasonCode,
  at: "settlement" | "execution" = "settlement"
): Effect.Effect<OrderWire, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const order = yield* get(caller, id, true)
    if (order.status !== "pending") return yield* Problem.apiError("RESOURCE_TERMINAL", `The order has already ended (status ${order.status}).`)
    if (at === "execution") {
      if (order.executing) return yield* Problem.apiError("SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY", "The order's execution is already claimed; fail it at settlement instead.")
      const nowMs = yield* Clock.currentTimeMillis
      const armed: StoredOrder = {
        ...order,
        executionRefusal: {
          reasonCode: reasonCode as "provider_rejected" | "provider_unavailable" | "cancelled",
          untilMs: reasonCode === "provider_unavailable" ? nowMs + providerOutageMs : Number.MAX_SAFE_INTEGER
        },
        updatedAt: toIso(nowMs)
      }
      yield* Effect.orDie((yield* Store.Store).update(Orders, armed))
      return toWire(armed)
    }
    if (order.executing) return toWire(yield* fail(order, reasonCode))
    const store = yield* Store.Store
    const armed: StoredOrder = { ...order, forcedFailure: reasonCode, updatedAt: toIso(yield* Clock.currentTimeMillis) }
    yield* Effect.orDie(store.update(Orders, armed))
    return toWire(armed)
  })

/** How long a provider outage the sandbox arms refuses an order's execution attempts. */
const providerOutageMs = 30_000

// --- the clock (OrderTimers.ts) ------------------------------------------------------------------------------------------------

/** An order, locked for the timer or the transaction end that moves it. */
export const locked = (id: OrderId) => Effect.flatMap(Store.Store, (store) => store.getForUpdate(Orders, id))

/** The rows of an order's transaction (for tests and reads). */
export const transaction = (order: StoredOrder) =>
  Effect.flatMap(Store.Store, (store) => (order.transactionId === null ? Effect.succeed(undefined) : store.get(Transactions.Transactions, order.transactionId)))

export type { OrderCancellationReason }
