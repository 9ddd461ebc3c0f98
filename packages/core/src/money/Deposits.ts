/**
 * Deposits: money arriving from outside. `POST /sandbox/v2/simulate/deposits` plays the outside sender; the world
 * model (WorldModel.ts) confirms and settles what it sent on the clock, and the simulate transaction calls can
 * confirm, settle, fail or review it sooner.
 *
 * A deposit into a virtual account is a `deposit` transaction from `external_bank_inbound` (what the sender sent)
 * to the `virtual_account` (what was credited); the difference is the rail's inbound fee, listed in `fees`. While it
 * is open the credit and the fee are pending ledger transfers from the outside world's account of the rail; when it
 * completes they are posted, so the balance is credited in the same store transaction as transaction.completed.
 *
 * In the sandbox, the settlement asks the tester's outcome rules (simulate/Outcomes.ts) first: a rule may fail the
 * deposit there instead (insufficient_funds_at_settle, a rail failure), releasing its credit.
 */
import {
  type DepositBlock,
  type OrderId,
  formatAmount,
  parseAmount,
  type Chain,
  type PayoutRail,
  type SenderInformation,
  type SimulatedDeposit as SimulatedDepositBody,
  toIso,
  type TransactionFailureCode,
  TransactionId,
  type VirtualAccountId,
  withArticle
} from "@fos/contract"
import { Clock, Effect, Schema } from "effect"
import * as Addresses from "./Addresses.ts"
import type * as Auth from "../tenancy/Auth.ts"
import * as Domain from "../kernel/Domain.ts"
import type * as Ledger from "./Ledger.ts"
import * as Outbox from "../kernel/Outbox.ts"
import * as PayoutRequirements from "./PayoutRequirements.ts"
import * as Payouts from "./Payouts.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Timers from "../kernel/Timers.ts"
import * as TransactionMachine from "./TransactionMachine.ts"
import * as Transactions from "./Transactions.ts"
import * as VirtualAccounts from "./VirtualAccounts.ts"
import * as Wallets from "./Wallets.ts"
import * as Wire from "../kernel/Wire.ts"
import * as WorldModel from "./WorldModel.ts"

/** The rails each deposit block's family takes payments on; the first is the one a sender uses by default. */
const railsOfFamily: Readonly<Record<DepositBlock["railFamily"], ReadonlyArray<PayoutRail>>> = {
  us_domestic: ["ach", "fedwire", "rtp", "fednow"],
  sepa: ["sepa"],
  uk_domestic: ["faster_payments"],
  swift: ["swift", "international_wire"]
}

/** What `POST /simulate/deposits` takes (the contract's `SimulatedDeposit`). */
export type SimulatedDeposit = SimulatedDepositBody

/**
 * A deposit's confirmation, `confirmationMs` after it arrived (or sooner, when its rail settles sooner); it carries
 * when the deposit settles (absent from confirm timers written before, which came with a settle timer).
 */
export const confirmTimer = Timers.kind(
  "deposit.confirm",
  Schema.Struct({ transactionId: TransactionId, settleAtMs: Schema.optionalKey(Schema.Number) }),
  "transactionId"
)
/** A deposit's settlement on its rail's clock, scheduled when it confirms. */
export const settleTimer = Timers.kind("deposit.settle", Schema.Struct({ transactionId: TransactionId }), "transactionId")
/** The end of the window for a deposit's missing sender information, `senderInformationWindowMs` after it arrived. */
export const senderInformationExpiryTimer = Timers.kind(
  "deposit.sender_information_expiry",
  Schema.Struct({ transactionId: TransactionId }),
  "transactionId"
)

const world = (scope: string, rail: PayoutRail): Ledger.Holder => ({ scope, type: "world", id: `rail:${rail}` })
const fees = (scope: string): Ledger.Holder => ({ scope, type: "fees", id: "service" })

/** `POST /sandbox/v2/simulate/deposits`: the outside sender sends money; answers the open deposit transaction. */
export const simulate = (caller: Auth.Caller, body: SimulatedDeposit): Effect.Effect<Transactions.StoredTransaction, Problem.ApiError, Store.Store> => {
  const destination = body.destination
  switch (destination.type) {
    case "virtual_account":
      return bankDeposit(caller, destination.virtualAccountId, body)
    case "wallet":
      return Effect.flatMap(Wallets.get(caller, destination.walletId), (wallet) => chainDeposit(caller, wallet, body))
    case "deposit_address": {
      const chain = body.assetAmount.chain
      if (chain === undefined) {
        return Effect.fail(Problem.invalidRequest([{ pointer: "/assetAmount/chain", detail: "is required: a deposit address takes on-chain assets" }]))
      }
      // The address is checked by its chain's validator first, as every address the API takes is.
      return Addresses.validAddress(chain, destination.address, "/destination/address").pipe(
        Effect.flatMap((address) => Wallets.at(caller, chain, address)),
        Effect.flatMap((wallet) =>
          wallet === undefined
            ? Effect.fail(Problem.apiError("WALLET_NOT_FOUND", "No wallet of this organization and environment has this deposit address on the asset's chain."))
            : chainDeposit(caller, wallet, body)
        )
      )
    }
  }
}

/** The wire rails: a deposit over one carries the wire-receive bank details its sender's bank sent. */
const wireRails: ReadonlySet<PayoutRail> = new Set(["fedwire", "swift", "international_wire"])

/** A bank transfer into a virtual account. */
const bankDeposit = (caller: Auth.Caller, virtualAccountId: VirtualAccountId, body: SimulatedDeposit): Effect.Effect<Transactions.StoredTransaction, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const account = yield* VirtualAccounts.get(caller, virtualAccountId)
    if (body.sender !== undefined) {
      return yield* Problem.invalidRequest([{ pointer: "/sender", detail: "is sent only for an on-chain deposit into a wallet" }])
    }
    // 422s carry no errors[] (the spec keeps it for VALIDATION_ERROR and two others): the detail says what is wrong.
    if (account.status !== "active") {
      return yield* Problem.apiError("VIRTUAL_ACCOUNT_NOT_ACTIVE", "The virtual account is not active yet; deposits arrive once it is.")
    }
    const currency = body.assetAmount.code
    if (currency !== account.asset.code) {
      return yield* Problem.apiError("VIRTUAL_ACCOUNT_ASSET_MISMATCH", `The virtual account collects ${account.asset.code}; assetAmount.code must be that currency.`)
    }
    const families = account.depositInstructions.filter((block) => block.currency === currency).map((block) => block.railFamily)
    const offered = families.flatMap((family) => railsOfFamily[family])
    const rail = body.rail ?? offered[0]!
    if (!offered.includes(rail)) {
      return yield* Problem.apiError("UNPROCESSABLE_ENTITY", `The virtual account does not take payments on this rail; its deposit instructions offer ${offered.join(", ")}.`)
    }
    if (body.wireReceiveDetails !== undefined && !wireRails.has(rail)) {
      return yield* Problem.invalidRequest([{ pointer: "/wireReceiveDetails", detail: "is sent only for a wire (fedwire, swift, international_wire)" }])
    }
    const sent = parseAmount(currency, body.assetAmount.amount)!
    const model = yield* WorldModel.WorldModel
    const fee = parseAmount(currency, model.inboundFee[rail] ?? "0")?.units ?? 0n
    if (sent.units <= fee) {
      return yield* Problem.apiError("AMOUNT_OUT_OF_RANGE", `The amount must be more than the rail's inbound fee of ${formatAmount({ asset: currency, units: fee })} ${currency}.`)
    }
    const credited = sent.units - fee
    const scope = Tenancy.scopeOf(caller.organization.id, caller.environment)
    const accountHolder: Ledger.Holder = { scope, type: "virtual_account", id: account.id }
    const amountOf = (units: bigint) => ({ code: currency, amount: formatAmount({ asset: currency, units }) })
    const transaction = yield* Effect.orDie(Transactions.open({
      organizationId: caller.organization.id,
      environment: caller.environment,
      customerId: account.customerId as Transactions.StoredTransaction["customerId"],
      type: "deposit",
      source: { type: "external_bank_inbound", assetAmount: amountOf(sent.units) },
      destination: { type: "virtual_account", virtualAccountId: account.id, assetAmount: amountOf(credited) },
      fees: fee > 0n ? [{ owner: "service", assetAmount: amountOf(fee), invoiced: false }] : [],
      ...yield* senderWindow(body.senderInformationMissing === true, { rail }),
      wireReceiveDetails: body.wireReceiveDetails,
      holds: (id) => [
        { kind: "pending", id: `${id}/credit`, debit: world(scope, rail), credit: accountHolder, asset: { code: currency }, amount: credited, code: "deposit", transactionId: id },
        ...(fee > 0n
          ? [{ kind: "pending", id: `${id}/fee`, debit: world(scope, rail), credit: fees(scope), asset: { code: currency }, amount: fee, code: "deposit.fee", transactionId: id } as const]
          : [])
      ]
    }))
    return yield* arrived(transaction, { rail }, body.senderInformationMissing === true, null)
  })

/**
 * An on-chain transfer into a wallet: from `sender.address` (checked by the chain's validator) or a fresh outside
 * address, with a transaction hash in the chain's format, settled after the chain's confirmation time.
 */
const chainDeposit = (caller: Auth.Caller, addressed: Wallets.StoredWallet, body: SimulatedDeposit): Effect.Effect<Transactions.StoredTransaction, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    // A frozen wallet still receives: its address is on chain; only movement out is blocked. A retired one forwards
    // to its successor while their rotation lasts (Wallets.ts), and takes nothing after.
    const wallet = addressed.status === "retired" && Wallets.rotationUnderway(addressed, yield* Clock.currentTimeMillis)
      ? yield* Wallets.get(caller, addressed.replacedByWalletId!)
      : addressed
    if (wallet.status === "retired") return yield* Problem.apiError("WALLET_NOT_ACTIVE", "The wallet is retired; send to its successor (replacedByWalletId).")
    const { code, chain } = body.assetAmount
    if (chain !== wallet.chain) {
      return yield* Problem.apiError("UNPROCESSABLE_ENTITY", `The wallet is on ${wallet.chain}; assetAmount must be an asset on that chain.`)
    }
    if (body.rail !== undefined || body.wireReceiveDetails !== undefined) {
      const pointer = body.rail !== undefined ? "/rail" : "/wireReceiveDetails"
      return yield* Problem.invalidRequest([{ pointer, detail: "is sent only for a bank transfer into a virtual account" }])
    }
    const sender = body.sender?.address === undefined ? undefined : yield* Addresses.validAddress(chain, body.sender.address, "/sender/address")
    const amount = parseAmount(code, body.assetAmount.amount)!
    // At the asset's precision, as every amount fos answers (a bank deposit's are formatted too).
    const assetAmount = { code, amount: formatAmount(amount), chain }
    const scope = Tenancy.scopeOf(caller.organization.id, caller.environment)
    const transaction = yield* Effect.orDie(Transactions.open({
      organizationId: caller.organization.id,
      environment: caller.environment,
      customerId: wallet.customerId,
      type: "deposit",
      source: (id) => ({
        type: "external_crypto",
        address: sender ?? Addresses.depositAddress(chain, `sender/${id}`),
        txHash: Addresses.sandboxTxHash(chain, id),
        assetAmount
      }),
      // An order's funding address is a wallet no read shows: the deposit names the address and the order instead.
      ...(wallet.fundingOrderId === undefined
        ? { destination: { type: "wallet", walletId: wallet.id, assetAmount } }
        : {
          destination: { type: "deposit_address", address: wallet.address, assetAmount },
          fundingWalletId: wallet.id,
          linkedOrderId: wallet.fundingOrderId as OrderId
        }),
      fees: [],
      ...yield* senderWindow(body.senderInformationMissing === true, { chain }),
      holds: (id) => [{
        kind: "pending",
        id: `${id}/credit`,
        debit: { scope, type: "world", id: `chain:${chain}` },
        credit: Wallets.holder(wallet),
        asset: { code, chain },
        amount: amount.units,
        code: "deposit",
        transactionId: id
      }]
    }))
    const source = transaction.source as { readonly address: string }
    return yield* arrived(transaction, { chain }, body.senderInformationMissing === true, source.address)
  })

/** Where a deposit settles from: a bank rail or a chain. */
type Route = { readonly rail: PayoutRail } | { readonly chain: Chain }

const settlementTimeFrom = (nowMs: number, route: Route) =>
  Effect.map(WorldModel.WorldModel, (model) => ("rail" in route ? WorldModel.settlesAt(nowMs, model.railSettlement[route.rail]) : nowMs + model.chainSettlementMs[route.chain]))

/**
 * What a deposit arriving without its sender's details is born with: its route (its settlement, once they come,
 * runs from it) and the end of the window to supply them.
 */
const senderWindow = (senderInformationMissing: boolean, route: Route) =>
  Effect.gen(function*() {
    if (!senderInformationMissing) return {}
    const model = yield* WorldModel.WorldModel
    // It opens waiting for the caller (stage awaiting_customer_action), so transaction.created carries that stage.
    return {
      route,
      senderInformationExpiresAt: toIso((yield* Clock.currentTimeMillis) + model.senderInformationWindowMs),
      then: { type: "request_information" } as const
    }
  })

/** The world model takes a deposit in: it confirms and settles on the clock, unless it waits for its sender first. */
const arrived = (transaction: Transactions.StoredTransaction, route: Route, senderInformationMissing: boolean, sourceAddress: string | null) =>
  Effect.gen(function*() {
    const scope = Tenancy.scopeOf(transaction.organizationId, transaction.environment)
    const now = yield* Clock.currentTimeMillis
    if (!senderInformationMissing) {
      yield* scheduleSettlement(transaction, route, now)
      return transaction
    }
    const model = yield* WorldModel.WorldModel
    const expiresAt = transaction.senderInformationExpiresAt!
    // It opened parked (senderWindow's first move); only the event and the window's timer are left.
    const parked = transaction
    yield* Outbox.emitEvent({
      type: "transaction.awaiting_sender_information",
      organizationId: parked.organizationId,
      environment: parked.environment,
      data: Wire.toWire({
        transactionId: parked.id,
        customerId: parked.customerId,
        clientReferenceId: parked.clientReferenceId,
        type: parked.type,
        source: parked.source,
        destination: parked.destination,
        sourceAddress,
        assetAmount: parked.source.assetAmount,
        expiresAt,
        occurredAt: toIso(now)
      })
    })
    yield* Timers.schedule(senderInformationExpiryTimer, now + model.senderInformationWindowMs, { transactionId: parked.id }, scope)
    return parked
  })

/**
 * One timer per deposit: the confirmation, which carries when the deposit settles (reckoned from its arrival) and
 * schedules the settlement when it fires, unless the deposit has ended by then. (Scheduling both at arrival wrote a
 * second timer on every deposit, which a deposit the sandbox settles at once never needs.)
 */
const scheduleSettlement = (transaction: Transactions.StoredTransaction, route: Route, now: number) =>
  Effect.gen(function*() {
    const scope = Tenancy.scopeOf(transaction.organizationId, transaction.environment)
    const model = yield* WorldModel.WorldModel
    const payload: ConfirmPayload = { transactionId: transaction.id, settleAtMs: yield* settlementTimeFrom(now, route) }
    // A world model may settle a rail sooner than it confirms: then the deposit confirms as it settles.
    yield* Timers.schedule(confirmTimer, Math.min(now + model.confirmationMs, payload.settleAtMs!), payload, scope)
  })

interface ConfirmPayload {
  readonly transactionId: TransactionId
  /** When the deposit settles; absent from confirm timers written before this, which came with a settle timer. */
  readonly settleAtMs?: number
}

/**
 * `POST /v2/transactions/{id}/sender-information`: the caller names who sent a deposit that arrived without its
 * sender's details; the deposit leaves review and the world model confirms and settles it from now.
 *
 * Its refusals: existence (404 NOT_FOUND), then the transaction's state (409 CONFLICT: not waiting for sender
 * information, or ended). The body's rules are the schema's, so no request breaks two of these rules.
 */
export const supplySenderInformation = (
  caller: Auth.Caller,
  id: TransactionId,
  information: SenderInformation
): Effect.Effect<Transactions.StoredTransaction, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const transaction = yield* Transactions.get(caller, id, true)
    if (transaction.senderInformationExpiresAt === undefined || transaction.stage !== "awaiting_customer_action" || TransactionMachine.terminalStatuses.has(transaction.status)) {
      return yield* Problem.apiError("CONFLICT", "The transaction is not waiting for sender information.")
    }
    yield* Transactions.move(id, { type: "clear_review" })
    const supplied = yield* Transactions.recordSenderInformation(id, information)
    yield* scheduleSettlement(supplied, transaction.route!, yield* Clock.currentTimeMillis)
    return supplied
  })

/**
 * The sender information window ended with nothing supplied: the funds go back to the sender. The transaction fails
 * with travel_rule_rejected (the originator's details the travel rule asks for never came), and its credit is
 * released; sender_info_timeout is the spec's legacy code and is not set on new transactions.
 */
const senderInformationExpired = (payload: { readonly transactionId: TransactionId }) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const transaction = yield* store.get(Transactions.Transactions, payload.transactionId)
    if (transaction?.senderInformationExpiresAt === undefined || TransactionMachine.terminalStatuses.has(transaction.status)) return
    yield* Effect.ignore(Transactions.move(payload.transactionId, { type: "fail" }, { failureCode: "travel_rule_rejected" }))
  })

/**
 * The world model moving a deposit on: it confirms (processing), then settles (completed) at the time its confirm
 * timer carries. A deposit a simulate call has already moved past a point is left as it is there; one a simulate
 * call confirmed still settles on time.
 */
const onConfirm = (payload: ConfirmPayload) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const transaction = yield* store.get(Transactions.Transactions, payload.transactionId)
    if (transaction === undefined || (transaction.status !== "pending" && transaction.status !== "processing")) return
    if (transaction.status === "pending") yield* Effect.ignore(Transactions.move(payload.transactionId, { type: "start" }))
    if (payload.settleAtMs === undefined) return
    const scope = Tenancy.scopeOf(transaction.organizationId, transaction.environment)
    yield* Timers.schedule(settleTimer, Math.max(payload.settleAtMs, yield* Clock.currentTimeMillis), { transactionId: transaction.id }, scope)
  })

const onSettle = (payload: { readonly transactionId: TransactionId }) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const transaction = yield* store.get(Transactions.Transactions, payload.transactionId)
    if (transaction === undefined || (transaction.status !== "pending" && transaction.status !== "processing")) return
    // A scripted failure at settlement (simulate/Outcomes.ts): the credit it held is released.
    const scripted = yield* Transactions.scriptedOutcome(transaction, "settle")
    if (scripted !== undefined) {
      yield* Effect.ignore(Transactions.move(payload.transactionId, { type: "fail" }, { failureCode: scripted.failureCode }))
      return
    }
    yield* Effect.ignore(Transactions.move(payload.transactionId, { type: "settle" }))
  })

/** The row a deposit's confirmation or settlement locks first: its transaction. */
const lockTransaction = (payload: { readonly transactionId: TransactionId }) => ({ table: Transactions.Transactions, key: payload.transactionId })

/** A deposit's confirmation and settlement on the world model's clock, and its sender information's window. */
export const domain = Domain.make({
  name: "money/Deposits",
  timers: [
    // The deposits that confirm or settle together are locked in one statement with their timers (`Handling.locks`).
    Timers.handle(confirmTimer, onConfirm, (id, _p, route) => `confirms deposit ${id}${route} (it starts processing)`, { locks: lockTransaction }),
    Timers.handle(settleTimer, onSettle, (id, _p, route) => `settles deposit ${id}${route} (it completes)`, { locks: lockTransaction }),
    Timers.handle(
      senderInformationExpiryTimer,
      senderInformationExpired,
      (id) => `ends the window for deposit ${id}'s sender information (it fails with travel_rule_rejected unless supplied)`
    )
  ]
})

// --- the sandbox's outside actors on any transaction ------------------------------------------------------------------

/** Types a client can cancel (a payout, a conversion before its source transfer is sent). */
const cancellable: ReadonlySet<Transactions.StoredTransaction["type"]> = new Set(["withdrawal", "offramp", "onramp", "conversion", "fiat_conversion"])
/** Types whose supporting document a reviewer can reject (a payout). */
const rejectable: ReadonlySet<Transactions.StoredTransaction["type"]> = new Set(["withdrawal", "offramp"])

const notViable = (detail: string) => Problem.apiError("SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY", detail)

export type TerminalOutcome =
  | { readonly outcome: "completed" }
  | { readonly outcome: "failed"; readonly failureCode?: TransactionFailureCode | undefined }
  | { readonly outcome: "cancelled" }

/** `simulate/transactions/{id}/confirm`, `/settle` and `/terminal`: what the chain, the bank or the provider decided. */
export const simulateTransactionStep = (
  caller: Auth.Caller,
  id: TransactionId,
  step: { readonly type: "confirm" } | { readonly type: "settle" } | { readonly type: "terminal"; readonly terminal: TerminalOutcome }
): Effect.Effect<Transactions.StoredTransaction, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const transaction = yield* Transactions.get(caller, id, true)
    if (step.type === "confirm") return yield* Transactions.move(id, { type: "start" })
    if (step.type === "settle") return yield* Transactions.move(id, { type: "settle" })
    const terminal = step.terminal
    switch (terminal.outcome) {
      case "completed":
        return yield* Transactions.move(id, { type: "settle" })
      case "failed":
        return yield* Transactions.move(id, { type: "fail" }, { failureCode: terminal.failureCode ?? "provider_rejected" })
      case "cancelled":
        if (!TransactionMachine.terminalStatuses.has(transaction.status) && !cancellable.has(transaction.type)) {
          return yield* notViable(`A ${transaction.type} transaction cannot be cancelled; only payouts and conversions can.`)
        }
        return yield* Transactions.move(id, { type: "cancel" }, { cancellationReason: "client_cancelled" })
    }
  })

export type ReviewAction =
  | { readonly action: "enter" }
  | { readonly action: "request_information" }
  | { readonly action: "clear" }
  | { readonly action: "reject"; readonly acceptedDocumentTypes?: ReadonlyArray<string> | undefined }

/** `simulate/transactions/{id}/review`: compliance review, as the service's reviewers drive it. */
export const simulateReview = (caller: Auth.Caller, id: TransactionId, review: ReviewAction): Effect.Effect<Transactions.StoredTransaction, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const transaction = yield* Transactions.get(caller, id, true)
    switch (review.action) {
      case "enter":
        return yield* Transactions.move(id, { type: "enter_review" })
      case "request_information":
        return yield* Transactions.move(id, { type: "request_information" })
      case "clear": {
        yield* Transactions.move(id, { type: "clear_review" })
        // A payout the review held goes on from where it stood.
        yield* Payouts.resumeAfterReview(id)
        return yield* Transactions.get(caller, id)
      }
      case "reject":
        if (!TransactionMachine.terminalStatuses.has(transaction.status) && !rejectable.has(transaction.type)) {
          return yield* notViable(`Only a payout's supporting document can be rejected, not ${withArticle(transaction.type)}'s.`)
        }
        // A cancel the caller asked during the review lost the race: the payout ends failed (Payouts.ts, cancelPayout).
        if (transaction.cancelRequested === true && !TransactionMachine.terminalStatuses.has(transaction.status) && !transaction.sent) {
          return yield* Transactions.move(id, { type: "fail" }, { failureCode: "compliance_rejected" })
        }
        // A reviewer who names no document types accepts the ones a payout takes (POST /v2/payouts/requirements).
        return yield* Transactions.move(id, { type: "reject" }, { acceptedDocumentTypes: review.acceptedDocumentTypes ?? PayoutRequirements.payoutDocumentTypes })
    }
  })
