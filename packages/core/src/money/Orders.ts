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
 * - autoPayout (onramp: to an address on the destination wallet's chain; offramp: to a bank account over a rail)
 *   opens a payout (Payouts.ts `openPayout`, the code path of `POST /v2/payouts`) when the conversion settles, in the
 *   same store transaction, with `linkedOrderId`: the converted amount out of the destination account, of which the
 *   payout's fee and the client's margin are fees and the rest reaches the recipient. From there it is a payout like
 *   any: compliance (and review by the rules), processing, sending, settlement on the chain's or rail's clock,
 *   network references, cancel, failures and returns.
 */
import {
  type AutoPayout,
  CryptoAssets,
  parseAmount,
  type CustomerId,
  type Environment,
  type Fee,
  type LockSide,
  type Order as OrderWire,
  type OrderCancellationReason,
  type OrderCreate,
  type OrderDirection,
  OrderFailureMessages,
  type OrderFailureReasonCode,
  type OrderId,
  OrderSorts,
  type OrderStatus,
  type RecipientType,
  toIso,
  type TransactionFailureCode,
  type TransactionId,
  type TransactionSide
} from "@fos/contract"
import { Clock, Effect } from "effect"
import { newId } from "../kernel/IdGenerator.ts"
import { type ListEnvelope, listPage, type ListQuery } from "../kernel/Paging.ts"
import { apiError, type ApiError } from "../kernel/Problem.ts"
import { Store, table } from "../kernel/Store.ts"
import { schedule, type TimerHandler } from "../kernel/Timers.ts"
import { publish } from "../kernel/Topics.ts"
import { toWire } from "../kernel/Wire.ts"
import { Customers } from "../onboarding/Customers.ts"
import { requireDocuments } from "../onboarding/Documents.ts"
import type { Caller } from "../tenancy/Auth.ts"
import { scopeOf } from "../tenancy/Tenancy.ts"
import { emitEvent } from "../webhooks/Webhooks.ts"
import { checkAddress, sandboxTxHash } from "./Addresses.ts"
import { accountId, balanceIn, balancesOf, type Holder, LedgerAccounts, type LedgerAsset, type TransferRequest } from "./Ledger.ts"
import { initialOrderState, type OrderMove, orderTransition, type OrderState } from "./OrderMachine.ts"
import { type PairSide, priceOf } from "./Pricing.ts"
import { amountOf, checkMarkupAllowed, feesOf, QuoteOptions, redeemableOption, type Terms, termsOf, type TermsInput } from "./Quotes.ts"
import { openPayout, type PayoutTarget, payoutDocumentsRequired, payoutDocumentTypes, payoutFee, railCarries } from "./Payouts.ts"
import { returnFromFundingAddress } from "./DepositReturns.ts"
import { failedInSigning, moveTransaction, openTransaction, SignaturesRequested, type StoredTransaction, Transactions } from "./Transactions.ts"
import { getVirtualAccount } from "./VirtualAccounts.ts"
import { getWallet, nonCustodialChains, notActiveDetail, openFundingWallet, Wallets, walletHolder } from "./Wallets.ts"
import { bpsOf } from "./Rates.ts"
import { WorldModel } from "./WorldModel.ts"

/** One of the customer's accounts an order names, with the asset it converts and its ledger holder. */
export interface OrderAccountOf {
  readonly type: "wallet" | "virtual_account"
  readonly id: string
  readonly side: PairSide
  readonly holder: Holder
  /** A non-custodial wallet: as the source, its roster signs the conversion's source transfer. */
  readonly nonCustodial?: boolean | undefined
}

export interface StoredOrder extends OrderState {
  readonly id: OrderId
  readonly organizationId: string
  readonly environment: Environment
  readonly customerId: CustomerId
  readonly direction: OrderDirection
  readonly source: OrderAccountOf
  readonly destination: OrderAccountOf
  readonly lockSide: LockSide
  readonly rate: string
  readonly mid: string
  readonly spreadBps: number
  readonly markupBps: number | undefined
  /** Units of the assets' smallest units, as decimal text (rows are JSON). */
  readonly principal: string
  readonly fee: string
  readonly markupAmount: string
  readonly totalDebit: string
  readonly destinationAmount: string
  readonly spreadAmount: string
  readonly markupBpsAmount: string
  readonly fees: ReadonlyArray<Fee>
  readonly autoExecute: boolean
  readonly quoteOptionId: string | undefined
  readonly clientReferenceId: string | undefined
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
  readonly createdAt: string
  readonly updatedAt: string
}

const scope = (o: StoredOrder) => scopeOf(o.organizationId, o.environment)

// --- lists -------------------------------------------------------------------------------------------------------------

/** The filters of `GET /v2/orders` (the paging query's `direction` leaves the order's own direction out of them). */
export interface OrderFilter {
  readonly status?: OrderStatus | undefined
  readonly customerId?: string | undefined
}

const filterKeys = ["status", "customerId"] as const
type FilterKey = typeof filterKeys[number]

const filterSets: ReadonlyArray<ReadonlyArray<FilterKey>> = Array.from({ length: 1 << filterKeys.length }, (_, bits) =>
  filterKeys.filter((_, i) => (bits & (1 << i)) !== 0))

const partitionOf = (scoped: string, keys: ReadonlyArray<FilterKey>, value: (key: FilterKey) => string) =>
  [scoped, ...keys.map((k) => `${k}=${value(k)}`)].join("|")

const orderName = (sortBy: string, keys: ReadonlyArray<FilterKey>) => `${sortBy}:${keys.join("+")}`

/** The ledger account an order's source debits: where the balance autoExecute waits for lands. */
const sourceAccountOf = (o: { readonly source: OrderAccountOf }) => accountId(o.source.holder, ledgerAsset(o.source.side))

export const Orders = table<StoredOrder>({
  name: "orders",
  key: (o) => o.id,
  unique: { clientReferenceId: (o) => (o.clientReferenceId === undefined ? undefined : `${scope(o)}/${o.clientReferenceId}`) },
  orders: {
    ...Object.fromEntries(filterSets.flatMap((keys) =>
      OrderSorts.map((sortBy) => [orderName(sortBy, keys), {
        partition: (o: StoredOrder) => partitionOf(scope(o), keys, (k) => o[k]),
        sort: (o: StoredOrder) => o[sortBy],
        // As transactions: the updatedAt order holds the rows its createdAt twin counts.
        counted: sortBy === "createdAt"
      }])
    )),
    // autoExecute orders waiting for their source's balance, oldest first; an order leaves it once it is claimed or ends.
    awaitingFunds: {
      partition: (o) => (o.autoExecute && o.status === "pending" && !o.executing ? sourceAccountOf(o) : undefined),
      sort: (o) => o.createdAt,
      counted: false
    }
  }
})

/** The order of every order of a scope (no filter). */
export const ordersOfScope = orderName("createdAt", [])

export const listOrders = (caller: Caller, filter: OrderFilter, query: ListQuery): Effect.Effect<ListEnvelope<OrderWire>, ApiError, Store> => {
  const keys = filterKeys.filter((k) => filter[k] !== undefined)
  return listPage(Orders, {
    order: orderName(query.sortBy, keys),
    partition: partitionOf(scopeOf(caller.organization.id, caller.environment), keys, (k) => filter[k]!),
    query,
    toWire: orderToWire,
    countOrder: orderName("createdAt", keys)
  })
}

// --- wire ----------------------------------------------------------------------------------------------------------------

const sideToWire = (account: OrderAccountOf, units: bigint) =>
  account.type === "wallet"
    ? { type: "wallet" as const, walletId: account.id, assetAmount: amountOf(account.side, units) }
    : { type: "virtual_account" as const, virtualAccountId: account.id, assetAmount: amountOf(account.side, units) }

export const orderToWire = (o: StoredOrder): OrderWire =>
  toWire({
    id: o.id,
    customerId: o.customerId,
    status: o.status,
    direction: o.direction,
    source: o.depositFunded ? undefined : sideToWire(o.source, BigInt(o.principal)),
    destination: sideToWire(o.destination, BigInt(o.destinationAmount)),
    lockSide: o.lockSide,
    rate: o.rate,
    fees: o.fees,
    totalDebit: amountOf(o.source.side, BigInt(o.totalDebit)),
    lockExpiresAt: toIso(o.lockExpiresAtMs),
    autoExecute: o.autoExecute,
    autoPayout: o.autoPayout,
    payoutTransactionId: o.payoutTransactionId,
    quoteOptionId: o.quoteOptionId,
    depositInstructions: depositInstructionsOf(o),
    markupBps: o.markupBps,
    markupAmount: BigInt(o.markupAmount) > 0n ? amountOf(o.source.side, BigInt(o.markupAmount)) : undefined,
    clientReferenceId: o.clientReferenceId,
    transactionId: o.transactionId,
    reasonCode: o.reasonCode,
    failureMessage: o.reasonCode === null ? null : OrderFailureMessages[o.reasonCode],
    cancellationReason: o.cancellationReason,
    createdAt: o.createdAt,
    updatedAt: o.updatedAt
  }) as OrderWire

/** Where and what to send to fund a deposit-funded order: its totalDebit, at its funding address. */
const depositInstructionsOf = (o: StoredOrder) =>
  o.fundingAddress === undefined ? undefined : { address: o.fundingAddress, assetAmount: amountOf(o.source.side, BigInt(o.totalDebit)) }

const notFound = () => apiError("ORDER_NOT_FOUND", "No order with this id exists in this organization and environment.")

export const getOrder = (caller: Caller, id: OrderId, forUpdate = false): Effect.Effect<StoredOrder, ApiError, Store> =>
  Effect.gen(function*() {
    const store = yield* Store
    const order = yield* (forUpdate ? store.getForUpdate(Orders, id) : store.get(Orders, id))
    if (order === undefined || scope(order) !== scopeOf(caller.organization.id, caller.environment)) return yield* notFound()
    return order
  })

// --- creating ------------------------------------------------------------------------------------------------------------

export const lockExpiryKind = "order.lock_expiry"
export const orderStartKind = "order.start"
export const orderSettleKind = "order.settle"

const ledgerAsset = (side: PairSide): LedgerAsset => (side.chain === undefined ? { code: side.asset } : { code: side.asset, chain: side.chain })

/** The account an order names, checked to be the caller's and able to take part. */
const resolveAccount = (caller: Caller, account: NonNullable<OrderCreate["source"]>, role: "source" | "destination") =>
  Effect.gen(function*() {
    if (account.type === "wallet") {
      const wallet = yield* getWallet(caller, account.walletId)
      if (wallet.status !== "active") return yield* apiError("WALLET_NOT_ACTIVE", notActiveDetail(wallet, `${role} wallet`))
      if (!CryptoAssets.has(account.asset)) {
        return yield* apiError("INVALID_ORDER_COMBO", `A wallet holds on-chain assets; the ${role} names ${account.asset}, a fiat currency.`)
      }
      const nonCustodial = wallet.custody === "non_custodial"
      if (nonCustodial && role === "source" && !nonCustodialChains.includes(wallet.chain)) {
        return yield* apiError(
          "NON_CUSTODIAL_SOURCE_NOT_SUPPORTED",
          `A non-custodial source wallet is allowed on ${nonCustodialChains.join(", ")}; not on ${wallet.chain}.`
        )
      }
      return {
        customerId: wallet.customerId,
        account: {
          type: "wallet",
          id: wallet.id,
          side: { asset: account.asset, chain: wallet.chain },
          holder: walletHolder(wallet),
          ...(nonCustodial ? { nonCustodial: true } : {})
        } as OrderAccountOf
      }
    }
    const va = yield* getVirtualAccount(caller, account.virtualAccountId)
    if (va.status !== "active") return yield* apiError("VIRTUAL_ACCOUNT_NOT_ACTIVE", `The ${role} virtual account is not active yet.`)
    return {
      customerId: va.customerId as CustomerId,
      account: {
        type: "virtual_account",
        id: va.id,
        side: { asset: va.asset.code },
        holder: { scope: scopeOf(caller.organization.id, caller.environment), type: "virtual_account", id: va.id }
      } as OrderAccountOf
    }
  })

/** An IBAN's ISO 13616 check: letters as numbers, the first four characters moved to the end, mod 97 is 1. */
const validIban = (iban: string): boolean => {
  const compact = iban.replaceAll(" ", "").toUpperCase()
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/.test(compact)) return false
  const digits = [...compact.slice(4) + compact.slice(0, 4)].map((c) => (/\d/.test(c) ? c : String(c.charCodeAt(0) - 55))).join("")
  return BigInt(digits) % 97n === 1n
}

/** An ABA routing number's checksum (3, 7, 1 weights, mod 10). */
const validRoutingNumber = (routing: string): boolean => {
  if (!/^\d{9}$/.test(routing)) return false
  const d = [...routing].map(Number)
  return (3 * (d[0]! + d[3]! + d[6]!) + 7 * (d[1]! + d[4]! + d[7]!) + d[2]! + d[5]! + d[8]!) % 10 === 0
}

/**
 * Checks an order's autoPayout against its direction and destination, and answers the client's margin on it in the
 * destination asset: INVALID_ORDER_COMBO for a direction with no payout, MISSING_REQUIRED_FIELDS (as well as the
 * supporting documents a payout the review rules catch needs, as for `POST /v2/payouts`), RECIPIENT_VALIDATION_FAILED,
 * UNPROCESSABLE_ENTITY for a rail that does not carry the destination's currency, DOCUMENT_IDS_NOT_FOUND,
 * CLIENT_MARKUP_NOT_ENABLED, CLIENT_MARKUP_EXCEEDS_PAYOUT (the margin and the payout's fee reach the converted
 * amount), AMOUNT_OUT_OF_RANGE (with no margin, the payout's fee alone does).
 */
const checkAutoPayout = (caller: Caller, payout: AutoPayout, terms: Terms, destination: OrderAccountOf, customerId: CustomerId) =>
  Effect.gen(function*() {
    if (terms.direction !== "onramp" && terms.direction !== "offramp") {
      return yield* apiError("INVALID_ORDER_COMBO", `autoPayout chains a payout after an onramp or an offramp, not after a ${terms.direction}.`)
    }
    yield* checkMarkupAllowed(caller, payout)
    const recipient = payout.recipient
    const missing = (fields: ReadonlyArray<string>) => apiError("MISSING_REQUIRED_FIELDS", `autoPayout needs ${fields.join(", ")} for this order.`)
    const invalid = (detail: string) => apiError("RECIPIENT_VALIDATION_FAILED", detail)
    if (terms.direction === "onramp") {
      const absent = [
        payout.purpose === undefined ? "purpose" : undefined,
        recipient?.chain === undefined ? "recipient.chain" : undefined,
        recipient?.address === undefined ? "recipient.address" : undefined,
        recipient?.attestation === undefined ? "recipient.attestation" : undefined
      ].filter((f) => f !== undefined)
      if (absent.length > 0) return yield* missing(absent)
      if (recipient!.chain !== destination.side.chain) {
        return yield* invalid(`recipient.chain must be the destination wallet's chain (${destination.side.chain}).`)
      }
      if (!checkAddress(recipient!.chain!, recipient!.address!).ok) return yield* invalid(`recipient.address is not an address on ${recipient!.chain}.`)
      if (recipient!.attestation !== true) return yield* invalid("recipient.attestation must confirm that the address is the recipient's own.")
    } else {
      const absent = [
        payout.rail === undefined ? "rail" : undefined,
        payout.purpose === undefined ? "purpose" : undefined,
        recipient?.name === undefined ? "recipient.name" : undefined,
        recipient?.country === undefined ? "recipient.country" : undefined,
        recipient?.iban === undefined && recipient?.accountNumber === undefined ? "recipient.iban or recipient.accountNumber" : undefined
      ].filter((f) => f !== undefined)
      if (absent.length > 0) return yield* missing(absent)
      if (recipient!.iban !== undefined && !validIban(recipient!.iban)) return yield* invalid("recipient.iban fails its check digits.")
      if (recipient!.routingNumber !== undefined && !validRoutingNumber(recipient!.routingNumber)) {
        return yield* invalid("recipient.routingNumber fails its ABA checksum.")
      }
      if (recipient!.chain !== undefined || recipient!.address !== undefined) return yield* invalid("A bank recipient has no chain or address.")
      if (!railCarries(payout.rail!, destination.side.asset)) {
        return yield* apiError("UNPROCESSABLE_ENTITY", `The ${payout.rail} rail does not carry ${destination.side.asset}, the destination's currency.`)
      }
    }
    const converted = terms.destinationAmount
    const margin = (payout.markupBps === undefined ? 0n : bpsOf({ asset: destination.side.asset, units: converted }, payout.markupBps).units) +
      (payout.markupAmount === undefined ? 0n : parseAmount(destination.side.asset, payout.markupAmount)?.units ?? converted)
    const fee = yield* payoutFee(destination.side.asset, destination.side.chain === undefined ? payout.rail : undefined)
    if (margin + fee >= converted) {
      const fees = `${amountOf(destination.side, fee).amount} ${destination.side.asset}`
      return yield* margin > 0n
        ? apiError(
          "CLIENT_MARKUP_EXCEEDS_PAYOUT",
          `The payout's margin of ${amountOf(destination.side, margin).amount} and its fee of ${fees} reach the converted amount of ${amountOf(destination.side, converted).amount}.`
        )
        : apiError("AMOUNT_OUT_OF_RANGE", `The payout's fee of ${fees} reaches the converted amount of ${amountOf(destination.side, converted).amount}.`)
    }
    // The supporting documents, as POST /v2/payouts asks them of a payout the review rules catch.
    const documentsRequired = yield* payoutDocumentsRequired(destination.side.asset, converted - margin - fee, autoPayoutTarget(destination, payout))
    if (documentsRequired && (payout.documents === undefined || payout.documents.length === 0)) {
      return yield* apiError(
        "MISSING_REQUIRED_FIELDS",
        `This autoPayout goes to compliance review and must carry documents (supporting document ids: ${payoutDocumentTypes.join(", ")}); see POST /v2/payouts/requirements.`
      )
    }
    if (payout.documents !== undefined) yield* requireDocuments(caller, payout.documents, { customerId, pointer: "/autoPayout/documents" })
    return margin
  })

/** Where an order's autoPayout goes: an address on the destination wallet's chain, or a bank account over its rail. */
const autoPayoutTarget = (destination: OrderAccountOf, payout: AutoPayout): PayoutTarget => {
  const chain = destination.side.chain
  const recipient = payout.recipient!
  return chain === undefined
    ? { side: (assetAmount) => ({ type: "external_bank", assetAmount }), route: { rail: payout.rail! }, recipient: undefined, country: recipient.country }
    : { side: (assetAmount) => ({ type: "external_crypto", address: recipient.address!, txHash: null, assetAmount }), route: { chain }, recipient: undefined, country: undefined }
}

/** A deposit-funded order's source: a new funding address on the source asset's chain. */
const fundingAccount = (caller: Caller, body: OrderCreate, customerId: CustomerId, orderId: OrderId) =>
  Effect.gen(function*() {
    const asset = body.sourceAsset
    if (asset === undefined) return yield* apiError("MISSING_REQUIRED_FIELDS", "An order without a source needs sourceAsset: the asset and chain its deposit arrives in.")
    if (asset.chain === undefined) {
      return yield* apiError("INVALID_ORDER_COMBO", "An order without a source is funded on chain; a fiat source needs its virtual account as the source.")
    }
    if (body.quoteOptionId !== undefined) {
      return yield* apiError("INVALID_ORDER_COMBO", "An order funded by a deposit cannot redeem a quote option (depositInstructions and quoteOptionId never go together).")
    }
    const wallet = yield* openFundingWallet({ organizationId: caller.organization.id, environment: caller.environment, customerId }, asset.chain, orderId)
    return {
      customerId,
      address: wallet.address,
      account: { type: "wallet", id: wallet.id, side: { asset: asset.asset, chain: asset.chain }, holder: walletHolder(wallet) } as OrderAccountOf
    }
  })

/**
 * A restricted customer makes no new orders (as no new payouts, Payouts.ts): creating or executing one is 422
 * UNPROCESSABLE_ENTITY while the restriction lasts. An order already executing goes on.
 */
const refuseRestricted = (customerId: CustomerId): Effect.Effect<void, ApiError, Store> =>
  Effect.flatMap(Store, (store) =>
    Effect.flatMap(store.get(Customers, customerId), (customer) =>
      customer?.status === "restricted"
        ? Effect.fail(apiError("UNPROCESSABLE_ENTITY", "The customer is restricted; it cannot make new orders while the restriction lasts."))
        : Effect.void))

/** `POST /v2/orders`. */
export const createOrder = (caller: Caller, body: OrderCreate): Effect.Effect<OrderWire, ApiError, Store> =>
  Effect.gen(function*() {
    yield* checkMarkupAllowed(caller, body)
    const orderId = yield* newId("ord")
    const destination = yield* resolveAccount(caller, body.destination, "destination")
    yield* refuseRestricted(destination.customerId)
    const source = body.source === undefined ? yield* fundingAccount(caller, body, destination.customerId, orderId) : yield* resolveAccount(caller, body.source, "source")
    const depositFunded = body.source === undefined
    if (depositFunded) {
      // The funding address is the order's own: nothing to check between it and the destination.
    } else if (source.account.type === "wallet" && destination.account.type === "wallet") {
      const s = source.account.side
      const d = destination.account.side
      if (source.account.id === destination.account.id || source.customerId !== destination.customerId || (s.chain !== d.chain && s.asset !== d.asset)) {
        return yield* apiError(
          "INVALID_TRANSFER_PAIR",
          "A conversion runs between two different active wallets of the same customer: a swap on one chain, or a bridge of one asset between chains."
        )
      }
    } else if (source.customerId !== destination.customerId) {
      return yield* apiError("INVALID_ORDER_COMBO", "The source and the destination belong to different customers.")
    } else if (source.account.type === "virtual_account" && destination.account.type === "virtual_account" && source.account.id === destination.account.id) {
      return yield* apiError("INVALID_ORDER_COMBO", "The source and the destination are the same virtual account.")
    }
    const scoped = scopeOf(caller.organization.id, caller.environment)
    const payout = body.autoPayout
    const recipientType: RecipientType = payout === undefined
      ? destination.account.type
      : destination.account.side.chain === undefined
      ? "external_bank"
      : "external_crypto"
    let terms: Terms
    let quoteOptionId: string | undefined
    if (body.quoteOptionId !== undefined) {
      const option = yield* redeemableOption(caller, body.quoteOptionId)
      const sameSide = (a: PairSide, b: PairSide) => a.asset === b.asset && a.chain === b.chain
      if (!sameSide(option.input.source, source.account.side) || !sameSide(option.input.destination, destination.account.side)) {
        return yield* apiError("QUOTE_ASSET_MISMATCH", "The quote option is priced for other assets than this order's source and destination.")
      }
      if (option.recipientType !== recipientType) {
        return yield* apiError("QUOTE_RECIPIENT_TYPE_UNPRICED", `The quote option is priced for a ${option.recipientType} recipient; this order pays a ${recipientType}.`)
      }
      terms = yield* termsOf(option.price, option.input)
      quoteOptionId = option.id
    } else {
      if (body.amount === undefined || body.lockSide === undefined) {
        const missing = [body.amount === undefined ? "amount" : undefined, body.lockSide === undefined ? "lockSide" : undefined].filter((f) => f !== undefined)
        return yield* apiError("MISSING_REQUIRED_FIELDS", `An order without a quoteOptionId needs ${missing.join(" and ")}.`)
      }
      const price = yield* priceOf(scoped, source.account.side, destination.account.side)
      const input: TermsInput = {
        source: source.account.side,
        destination: destination.account.side,
        amount: body.amount,
        lockSide: body.lockSide,
        markupBps: body.markupBps,
        markupAmount: body.markupAmount
      }
      terms = yield* termsOf(price, input)
    }
    const payoutMarkup = payout === undefined ? 0n : yield* checkAutoPayout(caller, payout, terms, destination.account, destination.customerId)
    const store = yield* Store
    const model = yield* WorldModel
    const nowMs = yield* Clock.currentTimeMillis
    const now = toIso(nowMs)
    const order: StoredOrder = {
      autoPayout: payout,
      payoutMarkup: payout === undefined ? undefined : payoutMarkup.toString(),
      ...initialOrderState(nowMs + model.orderLockMs, depositFunded),
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
      fees: feesOf(terms),
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
    yield* emitEvent({
      type: "order.created",
      organizationId: order.organizationId,
      environment: order.environment,
      data: toWire({
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
    if (inserted._tag === "Failure") return yield* apiError("DUPLICATE_CLIENT_REFERENCE_ID", "This clientReferenceId is already used by another order.")
    if (quoteOptionId !== undefined) {
      const option = (yield* store.get(QuoteOptions, quoteOptionId))!
      yield* Effect.orDie(store.update(QuoteOptions, { ...option, usedByOrderId: order.id }))
    }
    // The sweep is for an order whose execution is not claimed; an executing order never expires.
    if (!stored.executing) yield* schedule(lockExpiryKind, order.lockExpiresAtMs, { orderId: order.id }, scoped)
    return orderToWire(stored)
  })

// --- moving --------------------------------------------------------------------------------------------------------------

const refusalDetail = {
  ORDER_NOT_EXECUTABLE: "Only a pending order whose execution is not claimed yet can be executed",
  ORDER_EXPIRED: "The order passed its lockExpiresAt before execution was claimed",
  ORDER_NOT_CANCELLABLE: "A succeeded or failed order cannot be cancelled",
  ORDER_CANCEL_IN_PROGRESS: "The order's source transfer is already sent and the order is about to end; read it or retry"
} as const

/** Applies `move` to `order` (locked by the caller): the next state stored, and its event emitted. */
const moveOrder = (
  order: StoredOrder,
  move: OrderMove,
  extra: Partial<StoredOrder> = {},
  eventData: Record<string, unknown> = {}
): Effect.Effect<StoredOrder, ApiError, Store> =>
  Effect.gen(function*() {
    const outcome = orderTransition(order, move)
    if ("refused" in outcome) return yield* apiError(outcome.refused, `${refusalDetail[outcome.refused]} (status ${order.status}).`)
    if ("unchanged" in outcome) return order
    const store = yield* Store
    const now = toIso(yield* Clock.currentTimeMillis)
    const moved: StoredOrder = { ...order, ...outcome.next, ...extra, updatedAt: now }
    yield* Effect.orDie(store.update(Orders, moved))
    if (outcome.event !== undefined) {
      const head = { orderId: moved.id, customerId: moved.customerId, clientReferenceId: moved.clientReferenceId }
      const data = outcome.event === "order.cancelled"
        ? { ...head, reason: moved.cancellationReason, occurredAt: now }
        : outcome.event === "order.failed"
        ? {
          ...head,
          reasonCode: moved.reasonCode,
          failureMessage: OrderFailureMessages[moved.reasonCode!],
          failureCode: moved.transactionFailureCode,
          occurredAt: now
        }
        : { ...head, transactionId: moved.transactionId, ...eventData, succeededAt: now, occurredAt: now }
      yield* emitEvent({ type: outcome.event, organizationId: moved.organizationId, environment: moved.environment, data: toWire(data) })
    }
    if (moved.depositFunded && moved.status !== "pending") yield* returnLeftover(moved)
    return moved
  })

/**
 * What sits at an ended deposit-funded order's funding address goes back to the address it came from: a
 * deposit_return transaction per asset, holding the funds until the chain confirms the transfer back. Every asset the
 * address holds goes, not only the order's: a deposit in another asset was sent back when it arrived, and one still
 * there (from before that was so) goes now.
 */
const returnLeftover = (order: StoredOrder): Effect.Effect<void, never, Store> =>
  Effect.gen(function*() {
    if (order.fundingSender === undefined) return
    for (const balance of yield* balancesOf(order.source.holder)) {
      if (balance.available > 0n) yield* returnFunding(order, { asset: balance.asset, chain: balance.chain }, balance.available, order.fundingSender)
    }
  })

/** Sends `units` of `side` at the order's funding address back to `sender`, as a deposit_return (DepositReturns.ts). */
const returnFunding = (order: StoredOrder, side: PairSide, units: bigint, sender: string): Effect.Effect<void, never, Store> =>
  order.fundingAddress === undefined || side.chain === undefined
    ? Effect.void
    : returnFromFundingAddress({
      organizationId: order.organizationId,
      environment: order.environment,
      customerId: order.customerId,
      orderId: order.id,
      fundingAddress: order.fundingAddress,
      from: order.source.holder,
      asset: { ...ledgerAsset(side), chain: side.chain },
      assetAmount: amountOf(side, units),
      units,
      sender
    })

/** The order's transaction side of one of its accounts. */
const transactionSide = (account: OrderAccountOf, units: bigint): TransactionSide =>
  account.type === "wallet"
    ? { type: "wallet", walletId: account.id as never, assetAmount: amountOf(account.side, units) }
    : { type: "virtual_account", virtualAccountId: account.id as never, assetAmount: amountOf(account.side, units) }

/** Every leg of the conversion, as the transaction's pending holds: one linked batch. */
const legsOf = (order: StoredOrder, id: TransactionId): ReadonlyArray<TransferRequest> => {
  const scoped = scope(order)
  const liquidity: Holder = { scope: scoped, type: "liquidity", id: "market" }
  const serviceFees: Holder = { scope: scoped, type: "fees", id: "service" }
  const organizationFees: Holder = { scope: scoped, type: "fees", id: "organization" }
  const from = ledgerAsset(order.source.side)
  const to = ledgerAsset(order.destination.side)
  const leg = (name: string, debit: Holder, credit: Holder, asset: LedgerAsset, amount: string): ReadonlyArray<TransferRequest> =>
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
  apiError(
    "INSUFFICIENT_FUNDS",
    `The source's available balance of ${amountOf(order.source.side, available).amount} ${order.source.side.asset} does not cover the order's totalDebit of ${
      amountOf(order.source.side, BigInt(order.totalDebit)).amount
    }.`
  )

/**
 * Claims execution of `order` and opens its transaction with every leg held, answering the order as it is now (for
 * the caller to store: execution changes no status and fires no order event); INSUFFICIENT_FUNDS when the source's
 * available balance does not cover totalDebit. Writes nothing when it fails.
 */
const claim = (order: StoredOrder): Effect.Effect<StoredOrder, ApiError, Store> =>
  Effect.gen(function*() {
    const nowMs = yield* Clock.currentTimeMillis
    const outcome = orderTransition(order, { type: "execute", nowMs })
    if ("refused" in outcome) return yield* apiError(outcome.refused, `${refusalDetail[outcome.refused]} (status ${order.status}).`)
    if (!("next" in outcome)) return yield* Effect.die(new Error("the order table answers execute with a move or a refusal"))
    yield* refuseRestricted(order.customerId)
    const refusal = order.executionRefusal
    if (refusal !== undefined && nowMs < refusal.untilMs) {
      switch (refusal.reasonCode) {
        case "provider_rejected":
          return yield* apiError("PROVIDER_REJECTED", "The provider refused the conversion; no funds moved.")
        case "cancelled":
          return yield* apiError("CANCELLED", "The provider cancelled the conversion; no funds moved.")
        case "provider_unavailable":
          return yield* apiError("PROVIDER_UNAVAILABLE", "The provider is unavailable; no funds moved. Retry after retryAfterSeconds.", {
            retryAfterSeconds: Math.ceil((refusal.untilMs - nowMs) / 1000)
          })
      }
    }
    const balance = yield* balanceIn(order.source.holder, ledgerAsset(order.source.side))
    if (balance.available < BigInt(order.totalDebit)) return yield* insufficient(order, balance.available)
    const transaction = yield* openTransaction({
      organizationId: order.organizationId,
      environment: order.environment,
      customerId: order.customerId,
      type: order.direction,
      source: transactionSide(order.source, BigInt(order.totalDebit)),
      destination: transactionSide(order.destination, BigInt(order.destinationAmount)),
      fees: order.fees,
      clientReferenceId: order.clientReferenceId,
      linkedOrderId: order.id,
      // A non-custodial source: its roster signs the source transfer once the transaction is processing.
      signingWalletId: order.source.nonCustodial === true ? order.source.id : undefined,
      holds: (id) => legsOf(order, id)
    }).pipe(Effect.catchTag("LedgerRefusal", (refusal) =>
      refusal.reason === "insufficient_funds" ? Effect.fail(insufficient(order, balance.available)) : Effect.die(refusal)))
    const model = yield* WorldModel
    yield* schedule(orderStartKind, nowMs + model.orderStartMs, { orderId: order.id }, scope(order))
    return { ...order, ...outcome.next, transactionId: transaction.id, updatedAt: toIso(nowMs) }
  })

/** Claims execution of `order` (locked, stored) and stores it executing. */
const execute = (order: StoredOrder): Effect.Effect<StoredOrder, ApiError, Store> =>
  Effect.gen(function*() {
    const claimed = yield* claim(order)
    yield* Effect.orDie((yield* Store).update(Orders, claimed))
    return claimed
  })

/** autoExecute: executes the order when its source's balance covers it, else leaves it waiting. */
const tryExecute = (order: StoredOrder): Effect.Effect<StoredOrder, never, Store> =>
  Effect.catch(execute(order), () => Effect.succeed(order))

/** `POST /v2/orders/{orderId}/execute`: one attempt. */
export const executeOrder = (caller: Caller, id: OrderId): Effect.Effect<OrderWire, ApiError, Store> =>
  Effect.map(Effect.flatMap(getOrder(caller, id, true), execute), orderToWire)

/** `POST /v2/orders/{orderId}/cancel`. */
export const cancelOrder = (caller: Caller, id: OrderId): Effect.Effect<OrderWire, ApiError, Store> =>
  Effect.gen(function*() {
    const order = yield* getOrder(caller, id, true)
    const outcome = orderTransition(order, { type: "cancel" })
    // Cancelling an executing order whose source transfer is not sent cancels its transaction too, releasing the holds.
    if ("next" in outcome && order.executing && order.transactionId !== null) {
      yield* moveTransaction(order.transactionId, { type: "cancel" }, { cancellationReason: "client_cancelled" })
    }
    return orderToWire(yield* moveOrder(order, { type: "cancel" }))
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
const failOrder = (order: StoredOrder, reasonCode: OrderFailureReasonCode): Effect.Effect<StoredOrder, ApiError, Store> =>
  Effect.gen(function*() {
    if (order.transactionId !== null) {
      const failure = transactionFailureOf[reasonCode]
      yield* failure === "cancelled"
        ? moveTransaction(order.transactionId, { type: "cancel" }, { cancellationReason: "client_cancelled" })
        : moveTransaction(order.transactionId, { type: "fail" }, { failureCode: failure })
    }
    return yield* moveOrder(order, { type: "fail" }, { reasonCode })
  })

/**
 * `POST /sandbox/v2/simulate/orders/{orderId}/fail`: the provider fails the order. An executing order fails now; a
 * pending one fails when its execution would settle. An ended order is 409 RESOURCE_TERMINAL.
 */
export const simulateOrderFailure = (
  caller: Caller,
  id: OrderId,
  reasonCode: OrderFailureReasonCode,
  at: "settlement" | "execution" = "settlement"
): Effect.Effect<OrderWire, ApiError, Store> =>
  Effect.gen(function*() {
    const order = yield* getOrder(caller, id, true)
    if (order.status !== "pending") return yield* apiError("RESOURCE_TERMINAL", `The order has already ended (status ${order.status}).`)
    if (at === "execution") {
      if (order.executing) return yield* apiError("SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY", "The order's execution is already claimed; fail it at settlement instead.")
      const nowMs = yield* Clock.currentTimeMillis
      const armed: StoredOrder = {
        ...order,
        executionRefusal: {
          reasonCode: reasonCode as "provider_rejected" | "provider_unavailable" | "cancelled",
          untilMs: reasonCode === "provider_unavailable" ? nowMs + providerOutageMs : Number.MAX_SAFE_INTEGER
        },
        updatedAt: toIso(nowMs)
      }
      yield* Effect.orDie((yield* Store).update(Orders, armed))
      return orderToWire(armed)
    }
    if (order.executing) return orderToWire(yield* failOrder(order, reasonCode))
    const store = yield* Store
    const armed: StoredOrder = { ...order, forcedFailure: reasonCode, updatedAt: toIso(yield* Clock.currentTimeMillis) }
    yield* Effect.orDie(store.update(Orders, armed))
    return orderToWire(armed)
  })

/** How long a provider outage the sandbox arms refuses an order's execution attempts. */
const providerOutageMs = 30_000

// --- the clock ---------------------------------------------------------------------------------------------------------------

const lockedOrder = (id: OrderId) => Effect.flatMap(Store, (store) => store.getForUpdate(Orders, id))

/** The lock expiry sweep: a pending order whose execution was not claimed is cancelled (reason expired). */
const lockExpired: TimerHandler = (payload: { readonly orderId: OrderId }) =>
  Effect.gen(function*() {
    const order = yield* lockedOrder(payload.orderId)
    if (order === undefined) return
    const nowMs = yield* Clock.currentTimeMillis
    if (order.depositFunded && order.status === "pending" && !order.executing) {
      // A transfer to the funding address is still being checked: the deadline waits for it.
      const store = yield* Store
      const account = yield* store.get(LedgerAccounts, sourceAccountOf(order))
      if (account !== undefined && BigInt(account.creditsPending) > 0n) {
        yield* schedule(lockExpiryKind, nowMs + fundingRecheckMs, { orderId: order.id }, scope(order))
        return
      }
    }
    yield* Effect.orDie(moveOrder(order, { type: "expire", nowMs }))
  })

/** How often the sweep looks again at a deposit-funded order whose funding is still being checked at its deadline. */
const fundingRecheckMs = 60_000

/** The world model sends the order's source transfer: its transaction starts (processing), and settles later. */
const started: TimerHandler = (payload: { readonly orderId: OrderId }) =>
  Effect.gen(function*() {
    const order = yield* lockedOrder(payload.orderId)
    if (order === undefined || order.status !== "pending" || !order.executing || order.transactionId === null) return
    const processing = yield* Effect.orDie(moveTransaction(order.transactionId, { type: "start" }))
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
    if (order === undefined || order.status !== "pending" || !order.executing || order.sent || order.transactionId === null) return
    yield* sendSource(order)
  })

/** The conversion settles: every hold posts, the transaction completes and the order succeeds; or the armed failure. */
const settled: TimerHandler = (payload: { readonly orderId: OrderId }) =>
  Effect.gen(function*() {
    const order = yield* lockedOrder(payload.orderId)
    if (order === undefined || order.status !== "pending" || !order.executing || order.transactionId === null) return
    if (order.forcedFailure !== undefined) {
      yield* Effect.orDie(failOrder(order, order.forcedFailure))
      return
    }
    const transaction = yield* Effect.orDie(moveTransaction(order.transactionId, { type: "settle" }))
    const chain = order.destination.side.chain ?? order.source.side.chain
    const store = yield* Store
    // The settle opened the autoPayout (executeFundedOrders) and may have run autoExecute orders on the destination;
    // read this one again before moving it.
    const current = (yield* store.get(Orders, order.id))!
    const payoutTransactionId = current.payoutTransactionId ?? (current.autoPayout === undefined ? undefined : yield* openAutoPayout(current))
    yield* Effect.orDie(moveOrder(current, { type: "succeed" }, { payoutTransactionId }, chain === undefined ? {} : { txHash: sandboxTxHash(chain, transaction.id) }))
  })

/**
 * An order's autoPayout is a payout (Payouts.ts), opened through the one code path of every payout when the
 * conversion settles, in its store transaction: out of the destination account, the converted amount less the
 * payout's fee and the client's margin to the recipient, with `linkedOrderId`. From there it is reviewed, timed,
 * referenced, cancellable and fails as any payout. A customer restricted while the order ran gets its payout failed
 * at once with capability_suspended (as its payouts in flight): the converted funds stay in the destination account.
 */
const openAutoPayout = (order: StoredOrder): Effect.Effect<TransactionId, never, Store> =>
  Effect.gen(function*() {
    const payout = order.autoPayout!
    const side = order.destination.side
    const margin = BigInt(order.payoutMarkup ?? "0")
    const converted = BigInt(order.destinationAmount)
    const target = autoPayoutTarget(order.destination, payout)
    const fee = yield* payoutFee(side.asset, "rail" in target.route ? target.route.rail : undefined)
    const amount = converted - margin - fee
    const opened = yield* Effect.orDie(openPayout({
      organizationId: order.organizationId,
      environment: order.environment,
      customerId: order.customerId,
      asset: side.asset,
      chain: side.chain,
      holder: order.destination.holder,
      sourceSide: (assetAmount) =>
        order.destination.type === "wallet"
          ? { type: "wallet", walletId: order.destination.id as never, assetAmount }
          : { type: "virtual_account", virtualAccountId: order.destination.id as never, assetAmount },
      target,
      amount,
      purpose: payout.purpose,
      documents: payout.documents,
      documentsRequired: yield* payoutDocumentsRequired(side.asset, amount, target),
      clientReferenceId: order.clientReferenceId,
      linkedOrderId: order.id,
      margin
    }))
    const customer = yield* (yield* Store).get(Customers, order.customerId)
    if (customer?.status === "restricted") {
      yield* Effect.orDie(moveTransaction(opened.id, { type: "fail" }, { failureCode: "capability_suspended" }))
    }
    return opened.id
  })

/**
 * The timer of the minimal autoPayout withdrawal that orders chained before autoPayouts were payouts. None is
 * scheduled any more, but a database may still hold one (with its pending withdrawal): it does the old job, so that
 * withdrawal is sent (processing) and settles (completed).
 */
export const legacyAutoPayoutSettleKind = "order.payout_settle"

const legacyPayoutSettled: TimerHandler = (payload: { readonly transactionId: TransactionId }) =>
  Effect.gen(function*() {
    const store = yield* Store
    const transaction = yield* store.get(Transactions, payload.transactionId)
    if (transaction === undefined || transaction.status !== "pending") return
    yield* Effect.orDie(moveTransaction(payload.transactionId, { type: "start" }))
    yield* Effect.orDie(moveTransaction(payload.transactionId, { type: "settle" }))
  })

/** The ledger account a transaction's destination side credits, when it is a customer's account. */
const creditedAccount = (transaction: StoredTransaction) => {
  const destination = transaction.destination
  if (destination.type !== "wallet" && destination.type !== "virtual_account") return undefined
  const scoped = scopeOf(transaction.organizationId, transaction.environment)
  const holder: Holder = destination.type === "wallet"
    ? { scope: scoped, type: "wallet", id: destination.walletId }
    : { scope: scoped, type: "virtual_account", id: destination.virtualAccountId }
  const asset = destination.assetAmount.chain === undefined
    ? { code: destination.assetAmount.code }
    : { code: destination.assetAmount.code, chain: destination.assetAmount.chain }
  return accountId(holder, asset)
}

/** The autoExecute orders waiting on a ledger account, oldest first. */
const waitingOn = (account: string) =>
  Effect.flatMap(Store, (store) =>
    store.page(Orders, {
      order: "awaitingFunds",
      partition: account,
      descending: false,
      backward: false,
      from: undefined,
      // A handful of orders wait on one account at most; the rest wait for the next credit.
      limit: 20
    }))

/**
 * A subscriber of TransactionEnded (Transactions.ts; Subscriptions.ts names it): a completed transaction executes the
 * autoExecute orders its credit now covers; a deposit that failed fails the autoExecute onramp orders waiting on its
 * account (their source deposit ended uncredited: order.failed, reasonCode insufficient_funds).
 */
export const onTransactionEnded = (transaction: StoredTransaction): Effect.Effect<void, never, Store> => {
  if (transaction.status === "completed") return executeFundedOrders(transaction)
  if (failedInSigning(transaction) && transaction.linkedOrderId !== undefined) {
    return signingFailed(transaction)
  }
  if (transaction.status !== "failed" || transaction.type !== "deposit") return Effect.void
  const account = creditedAccount(transaction)
  if (account === undefined) return Effect.void
  return Effect.gen(function*() {
    const store = yield* Store
    for (const candidate of yield* waitingOn(account)) {
      const order = yield* store.getForUpdate(Orders, candidate.id)
      if (order !== undefined && order.direction === "onramp") yield* Effect.orDie(failOrder(order, "insufficient_funds"))
    }
  })
}

/**
 * The signing of an order's source transfer failed (user_signature_*, roster_changed): its transaction failed with
 * that code and released the holds, and the order fails through order.failed, reasonCode cancelled (the conversion
 * did not happen and no funds moved; the spec's order reasonCodes name no signing failure) with the transaction's
 * failureCode beside it. A payout's signing (an autoPayout's too) fails only the payout.
 */
const signingFailed = (transaction: StoredTransaction): Effect.Effect<void, never, Store> =>
  Effect.gen(function*() {
    const order = yield* lockedOrder(transaction.linkedOrderId!)
    if (order === undefined || order.transactionId !== transaction.id || order.status !== "pending") return
    yield* Effect.orDie(moveOrder(order, { type: "fail" }, { reasonCode: "cancelled", transactionFailureCode: transaction.failureCode ?? undefined }))
  })

/** A completed transaction credited a customer's account: the autoExecute orders it now covers execute. */
const executeFundedOrders = (transaction: StoredTransaction): Effect.Effect<void, never, Store> =>
  Effect.gen(function*() {
    const destination = transaction.destination
    const credited = creditedAccount(transaction)
    if (credited === undefined) return
    const store = yield* Store
    // An order's own autoPayout comes first: its payout reserves the credit before an autoExecute order waiting on
    // the same account can spend it.
    if (transaction.linkedOrderId !== undefined) {
      const converted = yield* store.getForUpdate(Orders, transaction.linkedOrderId)
      if (converted?.autoPayout !== undefined && converted.payoutTransactionId === undefined && converted.transactionId === transaction.id) {
        const payoutTransactionId = yield* openAutoPayout(converted)
        yield* Effect.orDie(store.update(Orders, { ...converted, payoutTransactionId }))
      }
    }
    if (destination.type === "wallet") {
      const wallet = yield* store.get(Wallets, destination.walletId)
      if (wallet?.fundingOrderId !== undefined) {
        const funded = yield* store.getForUpdate(Orders, wallet.fundingOrderId as OrderId)
        if (funded !== undefined) {
          // Who sent it: where anything left over goes back to.
          const sender = transaction.source.type === "external_crypto" ? transaction.source.address : funded.fundingSender
          const credit = transaction.destination.assetAmount
          if (credit.code !== funded.source.side.asset || (credit.chain ?? undefined) !== funded.source.side.chain) {
            // Another asset than the order's can never fund it: it goes back to its sender at once.
            if (sender !== undefined) yield* returnFunding(funded, { asset: credit.code, chain: credit.chain ?? undefined }, parseAmount(credit.code, credit.amount)!.units, sender)
          } else {
            const recorded: StoredOrder = { ...funded, fundingSender: sender }
            yield* Effect.orDie(store.update(Orders, recorded))
            // Funds that arrive after the order ended go back.
            if (recorded.status !== "pending") yield* returnLeftover(recorded)
          }
        }
      }
    }
    for (const candidate of yield* waitingOn(credited)) {
      const order = yield* store.getForUpdate(Orders, candidate.id)
      if (order !== undefined) yield* tryExecute(order)
    }
  })

export const orderTimerHandlers: Record<string, TimerHandler> = {
  [lockExpiryKind]: lockExpired,
  [orderStartKind]: started,
  [orderSettleKind]: settled,
  [orderSignedKind]: signed,
  [legacyAutoPayoutSettleKind]: legacyPayoutSettled
}

/** The rows of an order's transaction (for tests and reads). */
export const orderTransaction = (order: StoredOrder) =>
  Effect.flatMap(Store, (store) => (order.transactionId === null ? Effect.succeed(undefined) : store.get(Transactions, order.transactionId)))

export type { OrderCancellationReason }
