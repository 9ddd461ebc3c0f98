/**
 * Deposit returns: funds that arrived where they cannot stay go back to the address they came from, as a
 * deposit_return transaction (spec, transaction type deposit_return; its failureMessage is the contract's
 * `DepositReturnedFailureMessage`).
 * It is not credited back to anyone: it ends `failed` with no failureCode and the catalog's fixed failureMessage
 * (Transactions.ts) once the chain confirms the transfer back, its funds gone out (its holds post).
 *
 * Two ways in, one lifecycle's end:
 * - An order's funding address (Orders.ts): what sits there when a deposit-funded order ends, or arrives in another
 *   asset than the order's, goes back (`returnFromFundingAddress`). The service holds those funds: the return holds
 *   them as a pending transfer, is sent at once, and ends when the chain confirms it (created, then failed).
 * - An unsupported coin at a wallet's address (`simulateUnsupportedDeposit`): it is not credited (no balance holds
 *   it, so the ledger books nothing) and goes back from the wallet (created, then processing). From a custodial
 *   wallet the service signs and broadcasts it at once; from a non-custodial one its roster must approve it
 *   (SignaturesRequested, signed by signing/TransferSigning.ts outside the seats: it is not a payout), and the quorum
 *   broadcasts it; a decline or the last window expiring fails it (user_signature_*), the coin staying at the
 *   address. Broadcast (`txHash`), it ends when the chain confirms it. While it is open the wallet cannot rotate
 *   (422 WALLET_ROTATION_BLOCKED_RETURN, Wallets.ts).
 */
import {
  type AssetAmount,
  type Chain,
  type CustomerId,
  type Environment,
  type OrderId,
  formatAmount,
  parseAmount,
  TransactionId,
  type TransactionSide,
  type WalletId
} from "@fos/contract"
import { Clock, Effect, Schema } from "effect"
import * as Addresses from "./Addresses.ts"
import type * as Auth from "../tenancy/Auth.ts"
import * as Domain from "../kernel/Domain.ts"
import * as IdGenerator from "../kernel/IdGenerator.ts"
import type * as Ledger from "./Ledger.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Timers from "../kernel/Timers.ts"
import * as Topics from "../kernel/Topics.ts"
import * as TransactionMachine from "./TransactionMachine.ts"
import * as Transactions from "./Transactions.ts"
import * as Wallets from "./Wallets.ts"
import * as WorldModel from "./WorldModel.ts"

const oneReturn = Schema.Struct({ transactionId: TransactionId })

/**
 * The chain confirms a return from an order's funding address, its chain's settlement time after it was opened (the
 * kind predates this module; timers keep it).
 */
const fundingReturnConfirmedTimer = Timers.kind("order.deposit_return", oneReturn, "transactionId")
/** A return from a wallet is broadcast, `sendMs` after it opened or, from a non-custodial wallet, its quorum was met. */
const returnBroadcastTimer = Timers.kind("signing.return_broadcast", oneReturn, "transactionId")
/** The chain confirms a return from a wallet, its chain's settlement time after the broadcast. */
const returnConfirmedTimer = Timers.kind("signing.return_confirmed", oneReturn, "transactionId")

const scope = (t: { readonly organizationId: string; readonly environment: Environment }) => Tenancy.scopeOf(t.organizationId, t.environment)

/** A return of `units` of `asset` from an order's funding address (its ledger holder `from`) to `sender`. */
export interface FundingReturn {
  readonly organizationId: string
  readonly environment: Environment
  readonly customerId: CustomerId
  readonly orderId: OrderId
  readonly fundingAddress: string
  readonly from: Ledger.Holder
  readonly asset: Ledger.LedgerAsset & { readonly chain: Chain }
  readonly assetAmount: AssetAmount
  readonly units: bigint
  readonly sender: string
}

/** Sends funds at an order's funding address back to `sender`: the return holds them until the chain confirms it. */
export const returnFromFundingAddress = (r: FundingReturn): Effect.Effect<void, never, Store.Store> =>
  Effect.gen(function*() {
    const chain = r.asset.chain
    const scoped = Tenancy.scopeOf(r.organizationId, r.environment)
    const transaction = yield* Effect.orDie(Transactions.open({
      organizationId: r.organizationId,
      environment: r.environment,
      customerId: r.customerId,
      type: "deposit_return",
      source: { type: "deposit_address", address: r.fundingAddress, assetAmount: r.assetAmount },
      destination: { type: "external_crypto", address: r.sender, assetAmount: r.assetAmount },
      fees: [],
      linkedOrderId: r.orderId,
      holds: (id) => [{
        kind: "pending",
        id: `${id}/return`,
        debit: r.from,
        credit: { scope: scoped, type: "world", id: `chain:${chain}` },
        asset: r.asset,
        amount: r.units,
        code: "deposit_return",
        transactionId: id
      }]
    }))
    const model = yield* WorldModel.WorldModel
    yield* Timers.schedule(fundingReturnConfirmedTimer, (yield* Clock.currentTimeMillis) + model.chainSettlementMs[chain], { transactionId: transaction.id }, scoped)
  })

/**
 * `POST /sandbox/v2/simulate/wallets/{walletId}/unsupported-deposits`: a coin the service does not support for the
 * wallet arrives at its address, and goes back to its sender (the module's comment). A retired wallet is 422
 * WALLET_NOT_ACTIVE; an asset on another chain than the wallet's 422 UNPROCESSABLE_ENTITY.
 */
export const simulateUnsupportedDeposit = (
  caller: Auth.Caller,
  walletId: WalletId,
  body: { readonly assetAmount: TransactionSide["assetAmount"]; readonly sender?: { readonly address: string } | undefined }
): Effect.Effect<Transactions.StoredTransaction, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const wallet = yield* Wallets.get(caller, walletId, true)
    if (wallet.status === "retired") return yield* Problem.apiError("WALLET_NOT_ACTIVE", "The wallet is retired; nothing arrives at its address in the sandbox.")
    if (body.assetAmount.chain !== wallet.chain) {
      return yield* Problem.apiError("UNPROCESSABLE_ENTITY", `The wallet is on ${wallet.chain}; assetAmount must be on that chain.`)
    }
    const parsed = parseAmount(body.assetAmount.code, body.assetAmount.amount)
    if (parsed === undefined) {
      return yield* Problem.invalidRequest([{ pointer: "/assetAmount/amount", detail: "has more decimal places than the asset has" }])
    }
    // At the asset's precision, as every amount fos answers (a deposit's too).
    const assetAmount = { code: body.assetAmount.code, amount: formatAmount(parsed), chain: body.assetAmount.chain }
    const sender = body.sender === undefined ? undefined : yield* Addresses.validAddress(wallet.chain, body.sender.address, "/sender/address")
    const nonCustodial = wallet.custody === "non_custodial"
    const destinationAddress = sender ?? Addresses.depositAddress(wallet.chain, `unsupported-sender/${yield* IdGenerator.randomHex(16)}`)
    const opened = yield* Effect.orDie(Transactions.open({
      organizationId: wallet.organizationId,
      environment: wallet.environment,
      customerId: wallet.customerId,
      type: "deposit_return",
      source: { type: "wallet", walletId: wallet.id, assetAmount },
      destination: { type: "external_crypto", address: destinationAddress, assetAmount },
      fees: [],
      route: { chain: wallet.chain },
      signingWalletId: nonCustodial ? wallet.id : undefined,
      holds: () => []
    }))
    const processing = yield* Effect.orDie(Transactions.move(opened.id, { type: "start" }))
    const model = yield* WorldModel.WorldModel
    const onQuorum = { kind: returnBroadcastTimer.name, payload: { transactionId: processing.id }, delayMs: model.payouts.sendMs }
    if (!nonCustodial) {
      yield* Timers.schedule(returnBroadcastTimer, (yield* Clock.currentTimeMillis) + onQuorum.delayMs, onQuorum.payload, scope(processing))
      return processing
    }
    yield* Topics.publish(Transactions.SignaturesRequested, { transaction: processing, onQuorum, return: { destinationAddress } })
    return (yield* store.get(Transactions.Transactions, processing.id))!
  })

/** The return is signed (or needs no signature): it is broadcast with its hash, and confirmed on the chain's clock. */
const returnBroadcast = (payload: { readonly transactionId: TransactionId }) =>
  Effect.gen(function*() {
    const t = yield* (yield* Store.Store).getForUpdate(Transactions.Transactions, payload.transactionId)
    if (t === undefined || t.status !== "processing" || t.sent || t.route === undefined || !("chain" in t.route)) return
    const chain = t.route.chain
    yield* Effect.orDie(Transactions.move(t.id, { type: "send" }))
    yield* Transactions.addDestinationReferences(t.id, { txHash: Addresses.sandboxTxHash(chain, t.id) })
    const model = yield* WorldModel.WorldModel
    yield* Timers.schedule(returnConfirmedTimer, (yield* Clock.currentTimeMillis) + model.chainSettlementMs[chain], { transactionId: t.id }, scope(t))
  })

/** The chain confirmed a return: the deposit_return ends failed, with no failureCode, its funds gone out. */
const returnConfirmed = (payload: { readonly transactionId: TransactionId }) =>
  Effect.gen(function*() {
    const t = yield* (yield* Store.Store).getForUpdate(Transactions.Transactions, payload.transactionId)
    if (t === undefined || TransactionMachine.terminalStatuses.has(t.status)) return
    yield* Effect.orDie(Transactions.move(t.id, { type: "fail" }, { failureCode: null, postHolds: true }))
  })

/** A deposit_return's broadcast and its confirmation on the chain's clock. */
export const domain = Domain.make({
  name: "money/DepositReturns",
  timers: [
    Timers.handle(fundingReturnConfirmedTimer, returnConfirmed, (id, _p, route) => `confirms the return of deposit ${id}${route}`),
    Timers.handle(returnBroadcastTimer, returnBroadcast, (id, _p, route) => `broadcasts the return ${id}${route}`),
    Timers.handle(returnConfirmedTimer, returnConfirmed, (id, _p, route) => `confirms the return ${id}${route} (it completes)`)
  ]
})
