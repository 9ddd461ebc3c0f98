/**
 * Payouts: a customer's funds moved out (spec: "Payouts move funds out to external crypto addresses or external bank
 * accounts"), from a wallet to an address on its chain, or from a virtual account to a bank account over a
 * rail. A payout is its `withdrawal` transaction, read by its `txn_` id at `GET /v2/payouts/{id}` as at
 * `GET /v2/transactions/{id}`.
 *
 * Money: creating a payout reserves the amount and its fee as pending ledger transfers from the source (customer
 * accounts never go below zero counting reservations, so a payout the balance does not cover is refused with 422
 * INSUFFICIENT_FUNDS and nothing is reserved). Completion posts them; a failure, a rejection or a cancel voids them,
 * so the available balance is exactly what it was; a bank return after completion books new transfers bringing the
 * principal back (Transactions.ts).
 *
 * A payout from a non-custodial wallet keeps that reservation while the wallet's roster signs it
 * (signing/TransferSigning.ts): it is sent only once the quorum is met, and a failed signing voids it.
 *
 * The world model (WorldModel.ts `payouts`) carries a payout on the clock, each step a durable timer:
 *
 * | step | when | transition | events |
 * |---|---|---|---|
 * | compliance clears | `complianceMs` after creation, or when a review clears | pending -> processing | transaction.processing |
 * | sent | `sendMs` after processing | sent (no longer cancellable or rejectable) | none; references the network gives at sending appear |
 * | settles | the rail's settlement time (as deposits) or the chain's confirmation time after sending | completed, reservation posted | transaction.completed |
 * | late references | `lateReferenceMs` after completion (Fedwire) | fedwireOmad appears | none |
 *
 * A payout the rules send to review (amount threshold, recipient country, first payout to a saved recipient) enters
 * review at creation (transaction.under_review) and clears after `reviewMs`; a simulate call can review any payout
 * at any step, and a timer that finds the payout in review leaves it for the review's end to resume.
 *
 * In the sandbox, the opening, the send and the settlement ask the tester's outcome rules (simulate/Outcomes.ts)
 * first: a rule may hold the payout in review, fail it at its send or settlement instead, or schedule its return
 * after completion (`payout.scripted_return`). Each is the same move the world model or a simulate call would make.
 *
 * Network references per rail (spec: "each only when the network exposes it ... on some rails these arrive shortly
 * after the completed event"): ach `achTraceNumber` at sending; fedwire `fedwireImad` at sending and `fedwireOmad`
 * after completion; swift and international_wire `swiftUetr` at sending; rtp `rtpTransactionId` and fednow
 * `fedNowMessageId` at completion; sepa and faster_payments none (the spec names no reference for them); crypto
 * `txHash` at broadcast (sending).
 *
 * It is a little over 600 lines and one concept, the payout: its checks and its opening, its steps on the clock
 * (the timers above), the references each rail gives at each step, and the sandbox's return. A saved destination is
 * Recipients.ts's, the money's legs and every write of the row are Transactions.ts's.
 */
import {
  type AssetCode,
  type Chain,
  type CustomerId,
  type DocumentId,
  type Environment,
  formatAmount,
  isFiat,
  type OrderId,
  parseAmount,
  type PayoutCreate,
  type PayoutRail,
  TransactionId,
  type TransactionReturn,
  type TransactionSide,
  toIso
} from "@fos/contract"
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js"
import { Clock, Effect, Schema } from "effect"
import * as Addresses from "./Addresses.ts"
import type * as Auth from "../tenancy/Auth.ts"
import * as Customers from "../onboarding/Customers.ts"
import * as Documents from "../onboarding/Documents.ts"
import * as Domain from "../kernel/Domain.ts"
import * as Outcomes from "../simulate/Outcomes.ts"
import type * as Idempotency from "../kernel/Idempotency.ts"
import type * as Ledger from "./Ledger.ts"
import * as PayoutRequirements from "./PayoutRequirements.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Recipients from "./Recipients.ts"
import * as Restrictions from "../onboarding/Restrictions.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Timers from "../kernel/Timers.ts"
import * as Topics from "../kernel/Topics.ts"
import * as TransactionMachine from "./TransactionMachine.ts"
import * as Transactions from "./Transactions.ts"
import * as VirtualAccounts from "./VirtualAccounts.ts"
import * as Wallets from "./Wallets.ts"
import * as WorldModel from "./WorldModel.ts"

import { refuseNonCustodialSource, refuseRestricted } from "./SourceRules.ts"

const onePayout = Schema.Struct({ transactionId: TransactionId })

/** A payout's screening ends, `complianceMs` after its creation. */
export const startTimer = Timers.kind("payout.start", onePayout, "transactionId")
/** A payout is sent, `sendMs` after it began processing (or its roster's quorum was met). */
export const sendTimer = Timers.kind("payout.send", onePayout, "transactionId")
/** A sent payout settles, at its rail's settlement time or its chain's confirmation time. */
export const settleTimer = Timers.kind("payout.settle", onePayout, "transactionId")
/** A payout's compliance review ends, `reviewMs` after it entered review at its creation. */
export const reviewEndTimer = Timers.kind("payout.review_end", onePayout, "transactionId")
/** A completed Fedwire payout's late references arrive, `lateReferenceMs` after its completion. */
export const lateReferencesTimer = Timers.kind("payout.late_references", onePayout, "transactionId")
/** A completed payout comes back, when the outcome rule that scripted its return says. */
export const scriptedReturnTimer = Timers.kind(
  "payout.scripted_return",
  Schema.Struct({ transactionId: TransactionId, returnCode: Schema.String, returnReason: Schema.optional(Schema.String) }),
  "transactionId"
)

// --- creating ---------------------------------------------------------------------------------------------------------

const invalidBody = (pointer: string, detail: string) =>
  Problem.invalidRequest([{ pointer, detail }])

/**
 * The rules a payout request breaks by itself, before anything is read: the first of its refusals. The order of a
 * payout's refusals, the precedence the spec's error table implies (docs/money.md, "The order of a payout's
 * refusals"); a request that breaks two rules gets the first:
 * 1. the request alone: its members (400 VALIDATION_ERROR, after the schema's own), then its combination of source
 *    and destination (422 UNPROCESSABLE_ENTITY), here;
 * 2. existence and ownership: the source (404), then the saved recipient, of the source's customer;
 * 3. state: the source active (WALLET_NOT_ACTIVE, VIRTUAL_ACCOUNT_NOT_ACTIVE), its asset, the customer not
 *    restricted, the recipient's rail, the amount (AMOUNT_OUT_OF_RANGE), the travel rule and documents
 *    (MISSING_REQUIRED_FIELDS);
 * 4. funds: INSUFFICIENT_FUNDS, when the ledger reserves the amount (`open`), last.
 */
const refuseRequest = (body: PayoutCreate): Effect.Effect<void, Problem.ApiError> => {
  const toBank = body.destination.type === "external_bank"
  const fromWallet = body.source.type === "wallet"
  if (fromWallet && body.asset === undefined) return Effect.fail(invalidBody("/asset", "is required for a payout from a wallet"))
  if (toBank && body.travelRule !== undefined) return Effect.fail(invalidBody("/travelRule", "is sent only for a crypto payout"))
  if (!toBank && body.rail !== undefined) return Effect.fail(invalidBody("/rail", "is sent only for a bank payout"))
  if (fromWallet && isFiat(body.asset!)) return Effect.fail(Problem.apiError("UNPROCESSABLE_ENTITY", "A wallet pays out on-chain assets; asset must be one."))
  if (fromWallet && toBank) {
    return Effect.fail(Problem.apiError("UNPROCESSABLE_ENTITY", "A bank payout is paid from a virtual account; a wallet pays out to crypto addresses."))
  }
  if (!fromWallet && !toBank) {
    return Effect.fail(Problem.apiError("UNPROCESSABLE_ENTITY", "A crypto payout is paid from a wallet; a virtual account pays out to bank accounts."))
  }
  return Effect.void
}

/** Where the money goes: the transaction's destination side (without its amount) and what routes it. */
export interface PayoutTarget {
  readonly side: (amount: TransactionSide["assetAmount"]) => TransactionSide
  readonly route: { readonly rail: PayoutRail } | { readonly chain: Chain }
  readonly recipient: Recipients.StoredRecipient | undefined
  readonly country: string | undefined
}

/** A saved recipient of the payout's customer; one of another customer is refused like a bad recipient. */
const savedRecipient = (caller: Auth.Caller, kind: "whitelist_recipient" | "registered_address", id: string, customerId: CustomerId, pointer: string) =>
  Effect.flatMap(Recipients.get(caller, kind, id), (recipient) =>
    recipient.customerId === customerId
      ? Effect.succeed(recipient)
      : Effect.fail(Problem.apiError("RECIPIENT_VALIDATION_FAILED", "The recipient failed validation; see errors[].", {
        errors: [{ pointer, detail: "must be a recipient saved for the customer that owns the source" }]
      })))

/** A payout validated (by `POST /v2/payouts`, or by the order whose autoPayout it is), ready to open. */
export interface PayoutOpening {
  readonly organizationId: string
  readonly environment: Environment
  readonly customerId: CustomerId
  readonly asset: AssetCode
  /** The source wallet's chain; undefined for a virtual account. */
  readonly chain: Chain | undefined
  readonly holder: Ledger.Holder
  readonly sourceSide: (amount: TransactionSide["assetAmount"]) => TransactionSide
  readonly target: PayoutTarget
  /** What reaches the recipient, in the asset's units; the fee (and any margin) comes on top. */
  readonly amount: bigint
  readonly purpose: string | undefined
  readonly documents: ReadonlyArray<DocumentId> | undefined
  readonly documentsRequired: boolean
  readonly clientReferenceId: string | undefined
  /** The order whose autoPayout this is. */
  readonly linkedOrderId?: OrderId | undefined
  /** The client's margin on an order's autoPayout: an organization fee, out of the source on top of the amount. */
  readonly margin?: bigint | undefined
}

/**
 * Opens a validated payout, the one code path of every payout: reserves the amount, its fee (and a margin) as pending
 * ledger transfers, opens the withdrawal, and hands it to the world model (compliance review by the rules, or the
 * compliance step on the clock). 422 INSUFFICIENT_FUNDS, reserving nothing, when the balance does not cover it all.
 */
export const open = (p: PayoutOpening): Effect.Effect<Transactions.StoredTransaction, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const model = (yield* WorldModel.WorldModel).payouts
    const scope = Tenancy.scopeOf(p.organizationId, p.environment)
    const { asset, chain, holder, target } = p
    const rail = "rail" in target.route ? target.route.rail : undefined
    const fee = PayoutRequirements.feeOf(model, asset, rail)
    const margin = p.margin ?? 0n
    const amountOf = (units: bigint) => ({ code: asset, amount: formatAmount({ asset, units }), ...(chain === undefined ? {} : { chain }) })
    const world: Ledger.Holder = { scope, type: "world", id: "rail" in target.route ? `rail:${target.route.rail}` : `chain:${target.route.chain}` }
    const ledgerAsset = { code: asset, chain }
    // A payout out of a non-custodial wallet (by POST /v2/payouts, or an order's autoPayout out of its destination)
    // is signed by the wallet's roster once it is processing (signing/TransferSigning.ts).
    const sourceWallet = holder.type === "wallet" ? yield* store.get(Wallets.Wallets, holder.id) : undefined
    // The world model's compliance rules: a payout that must be reviewed is born in review.
    const firstToRecipient = target.recipient !== undefined && !target.recipient.paidOut
    // A scripted compliance hold (simulate/Outcomes.ts), chosen before the payout exists so that it opens in review
    // as the rules' reviews do (transaction.created carries the stage), but with no review end on the clock: the
    // tester's clear or reject (`simulate/transactions/{id}/review`) decides.
    const hold = yield* Outcomes.choose(p.organizationId, p.environment, {
      customerId: p.customerId,
      type: "withdrawal",
      route: target.route,
      amount: amountOf(p.amount).amount,
      clientReferenceId: p.clientReferenceId,
      destinationType: target.side(amountOf(p.amount)).type
    }, "opened")
    const reviewed = p.documentsRequired || (model.reviewNewRecipients && firstToRecipient) || hold !== undefined
    const transaction = yield* Transactions.open({
      organizationId: p.organizationId,
      environment: p.environment,
      customerId: p.customerId,
      type: "withdrawal",
      source: p.sourceSide(amountOf(p.amount + fee + margin)),
      destination: target.side(amountOf(p.amount)),
      fees: [
        ...(fee > 0n ? [{ owner: rail === undefined ? "network" as const : "service" as const, assetAmount: amountOf(fee), invoiced: false }] : []),
        ...(margin > 0n ? [{ owner: "organization" as const, assetAmount: amountOf(margin), invoiced: false }] : [])
      ],
      clientReferenceId: p.clientReferenceId,
      linkedOrderId: p.linkedOrderId,
      payoutRail: rail,
      signingWalletId: sourceWallet?.custody === "non_custodial" ? sourceWallet.id : undefined,
      route: target.route,
      payoutPurpose: p.purpose,
      payoutDocumentIds: p.documents,
      payoutRecipientId: target.recipient?.id,
      then: reviewed ? { type: "enter_review" } : undefined,
      holds: (id) => [
        { kind: "pending", id: `${id}/payout`, debit: holder, credit: world, asset: ledgerAsset, amount: p.amount, code: "withdrawal", transactionId: id },
        ...(fee > 0n
          ? [{ kind: "pending", id: `${id}/fee`, debit: holder, credit: { scope, type: "fees", id: "service" }, asset: ledgerAsset, amount: fee, code: "withdrawal.fee", transactionId: id } as const]
          : []),
        ...(margin > 0n
          ? [{ kind: "pending", id: `${id}/markup`, debit: holder, credit: { scope, type: "fees", id: "organization" }, asset: ledgerAsset, amount: margin, code: "withdrawal.markup", transactionId: id } as const]
          : [])
      ]
    }).pipe(Effect.catchTag("LedgerRefusal", (refusal) =>
      refusal.reason === "insufficient_funds"
        ? Effect.fail(Problem.apiError(
          "INSUFFICIENT_FUNDS",
          `The available balance does not cover the amount and its fee of ${formatAmount({ asset, units: fee })} ${asset}; nothing was reserved.`
        ))
        : Effect.die(refusal)))
    const now = yield* Clock.currentTimeMillis
    if (target.recipient !== undefined && firstToRecipient) {
      yield* Recipients.markPaidOut(target.recipient)
    }
    if (hold !== undefined) {
      yield* Outcomes.use(hold, transaction.id)
      return transaction
    }
    if (reviewed) {
      yield* Timers.schedule(reviewEndTimer, now + model.reviewMs, { transactionId: transaction.id }, scope)
      return transaction
    }
    yield* Timers.schedule(startTimer, now + model.complianceMs, { transactionId: transaction.id }, scope)
    return transaction
  })

/** `POST /v2/payouts`: validates, reserves the amount and its fee, and opens the withdrawal. */
export const create = (caller: Auth.Caller, body: PayoutCreate): Effect.Effect<Transactions.StoredTransaction, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const model = (yield* WorldModel.WorldModel).payouts
    yield* refuseRequest(body)

    // The source: whose money, in which asset, held where.
    let customerId: CustomerId
    let asset: AssetCode
    let holder: Ledger.Holder
    let sourceSide: (amount: TransactionSide["assetAmount"]) => TransactionSide
    let chain: Chain | undefined
    if (body.source.type === "wallet") {
      const wallet = yield* Wallets.get(caller, body.source.walletId)
      if (wallet.status !== "active") return yield* Problem.apiError("WALLET_NOT_ACTIVE", Wallets.notActiveDetail(wallet))
      yield* refuseNonCustodialSource(wallet, "A non-custodial wallet pays out")
      customerId = wallet.customerId
      asset = body.asset!
      chain = wallet.chain
      holder = Wallets.holder(wallet)
      sourceSide = (assetAmount) => ({ type: "wallet", walletId: wallet.id, assetAmount })
    } else {
      const account = yield* VirtualAccounts.get(caller, body.source.virtualAccountId)
      if (account.status !== "active") return yield* Problem.apiError("VIRTUAL_ACCOUNT_NOT_ACTIVE", "The virtual account is not active yet.")
      if (body.asset !== undefined && body.asset !== account.asset.code) {
        return yield* Problem.apiError("VIRTUAL_ACCOUNT_ASSET_MISMATCH", `The virtual account holds ${account.asset.code}; asset must be that currency or omitted.`)
      }
      customerId = account.customerId as CustomerId
      asset = account.asset.code
      chain = undefined
      holder = VirtualAccounts.holder(account)
      sourceSide = (assetAmount) => ({ type: "virtual_account", virtualAccountId: account.id, assetAmount })
    }
    yield* refuseRestricted(yield* Customers.get(caller, customerId), "payouts")

    // The destination, and the rail or chain it goes over.
    let target: PayoutTarget
    const destination = body.destination
    if (destination.type === "external_bank") {
      const recipient = yield* savedRecipient(caller, "whitelist_recipient", destination.whitelistRecipientId, customerId, "/destination/whitelistRecipientId")
      const rail = body.rail ?? recipient.rail!
      if (rail !== recipient.rail) {
        return yield* Problem.apiError("RECIPIENT_VALIDATION_FAILED", "The recipient failed validation; see errors[].", {
          errors: [{ pointer: "/rail", detail: `must be the rail the whitelist recipient was saved for (${recipient.rail})` }]
        })
      }
      const carried = PayoutRequirements.railCurrencies[rail]
      if (carried !== "any" && !carried.includes(asset)) {
        return yield* Problem.apiError("UNPROCESSABLE_ENTITY", `The ${rail} rail carries ${carried.join(", ")}; the virtual account holds ${asset}.`)
      }
      target = { side: (assetAmount) => ({ type: "external_bank", assetAmount }), route: { rail }, recipient, country: recipient.address?.country }
    } else {
      // A crypto payout comes from a wallet (`refuseRequest`), which gave its chain.
      if (chain === undefined) return yield* Effect.die(new Error("a crypto payout without its wallet's chain"))
      let address: string
      let recipient: Recipients.StoredRecipient | undefined
      if (destination.type === "external_crypto") {
        if (destination.chain !== chain) {
          return yield* Problem.apiError("UNPROCESSABLE_ENTITY", `The wallet is on ${chain}; the destination must be an address on that chain.`)
        }
        address = yield* Recipients.recipientAddress(chain, destination.address, "/destination/address")
      } else {
        recipient = yield* savedRecipient(caller, "registered_address", destination.registeredAddressId, customerId, "/destination/registeredAddressId")
        if (recipient.chain !== chain) {
          return yield* Problem.apiError("UNPROCESSABLE_ENTITY", `The wallet is on ${chain}; the registered address is on ${recipient.chain}.`)
        }
        address = recipient.cryptoAddress!
      }
      target = {
        side: (assetAmount) => ({ type: "external_crypto", address, assetAmount }),
        route: { chain },
        recipient,
        country: body.travelRule?.beneficiaryCountry
      }
    }

    // The amount, the travel rule and the documents.
    const amount = parseAmount(asset, body.amount)
    if (amount === undefined) return yield* invalidBody("/amount", "has more decimal places than the asset has")
    if (amount.units <= 0n) return yield* Problem.apiError("AMOUNT_OUT_OF_RANGE", "The amount must be more than zero.")
    if ("chain" in target.route && body.travelRule === undefined && PayoutRequirements.atLeast(amount.units, PayoutRequirements.unitsOf(asset, model.travelRuleThreshold[asset]))) {
      return yield* Problem.apiError(
        "MISSING_REQUIRED_FIELDS",
        `A crypto payout of ${model.travelRuleThreshold[asset]} ${asset} or more must carry travelRule (beneficiaryName, beneficiaryCountry, walletType); see POST /v2/payouts/requirements.`
      )
    }
    // What POST /v2/payouts/requirements answers as `documents.required`.
    const documentsRequired = yield* PayoutRequirements.payoutDocumentsRequired(asset, amount.units, target)
    if (documentsRequired && (body.documents === undefined || body.documents.length === 0)) {
      return yield* Problem.apiError(
        "MISSING_REQUIRED_FIELDS",
        `This payout goes to compliance review and must carry documents (supporting document ids: ${PayoutRequirements.payoutDocumentTypes.join(", ")}); see POST /v2/payouts/requirements.`
      )
    }
    if (body.documents !== undefined) yield* Documents.require(caller, body.documents, { customerId, pointer: "/documents" })

    return yield* open({
      organizationId: caller.organization.id,
      environment: caller.environment,
      customerId,
      asset,
      chain,
      holder,
      sourceSide,
      target,
      amount: amount.units,
      purpose: body.purpose,
      documents: body.documents,
      documentsRequired,
      clientReferenceId: body.clientReferenceId
    })
  })

// --- reading and cancelling --------------------------------------------------------------------------------------------

/** The caller's payout: a withdrawal transaction (any other transaction is no payout: 404 NOT_FOUND). */
export const get = (caller: Auth.Caller, id: TransactionId, forUpdate = false): Effect.Effect<Transactions.StoredTransaction, Problem.ApiError, Store.Store> =>
  Effect.flatMap(Transactions.get(caller, id, forUpdate), (t) =>
    t.type === "withdrawal" ? Effect.succeed(t) : Effect.fail(Problem.apiError("NOT_FOUND", "No payout with this id exists in this organization and environment.")))

/**
 * `POST /v2/payouts/{id}/cancel`: while the transfer is not yet sent, the payout is cancelled and its reservation
 * voided (transaction.cancelled, client_cancelled). A cancelled payout answers 200 again; a payout already sent,
 * completed or failed is 409 CONFLICT.
 *
 * Under compliance review (stage under_review) the review holds the funds, so the cancel races the review's outcome
 * (spec: "a cancel that races a compliance rejection ends as transaction.failed"): it is recorded and answered
 * with the payout as it stands (200, still under review); when the review clears, the payout is cancelled
 * (transaction.cancelled); when the reviewer rejects the supporting document, it ends failed with compliance_rejected
 * through transaction.failed (not transaction.rejected: the caller has withdrawn it and resubmits nothing).
 *
 * Its refusals: existence (404 NOT_FOUND, a transaction that is no payout included), then the payout's state (409
 * CONFLICT). A found payout is in one state, so no request breaks two of these rules (docs/money.md, "Cancelling").
 */
export const cancel = (caller: Auth.Caller, id: TransactionId): Effect.Effect<Transactions.StoredTransaction, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const payout = yield* get(caller, id, true)
    if (payout.status === "cancelled") return payout
    if (TransactionMachine.terminalStatuses.has(payout.status)) return yield* Problem.apiError("CONFLICT", `The payout has already ended (status ${payout.status}); it cannot be cancelled.`)
    if (payout.sent) return yield* Problem.apiError("CONFLICT", "The payout's transfer has already been sent; it can no longer be cancelled.")
    if (payout.stage === "under_review") return yield* Transactions.requestPayoutCancel(id)
    return yield* Transactions.move(id, { type: "cancel" }, { cancellationReason: "client_cancelled" })
  })

/**
 * Idempotency rule 6 on a replayed `POST /v2/payouts`: once the payout has failed, the retry answers it as it is now
 * (failed, with its failureCode), so the caller sees the key is bound to a failed attempt and needs a fresh one.
 * Any other replay answers the original response (rule 3).
 */
export const replay = (_caller: Auth.Caller, stored: Idempotency.StoredResponse): Effect.Effect<Idempotency.StoredResponse, never, Store.Store> =>
  Effect.gen(function*() {
    if (stored.status !== 201) return stored
    const id = (JSON.parse(stored.body) as { readonly id?: unknown }).id
    if (typeof id !== "string") return stored
    const t = yield* (yield* Store.Store).get(Transactions.Transactions, id)
    return t?.status === "failed" ? { ...stored, body: JSON.stringify(Transactions.toWire(t)) } : stored
  })

// --- the world model on the clock ------------------------------------------------------------------------------------------

/** A reference derived from the transaction's id: deterministic, in the network's format, held by no real transfer. */
const digest = (t: Transactions.StoredTransaction, label: string) => bytesToHex(sha256(utf8ToBytes(`fos/${label}/${t.id}`)))
const digits = (hex: string, n: number) => BigInt(`0x${hex}`).toString().slice(0, n).padStart(n, "0")
const yyyymmdd = (ms: number) => new Date(ms).toISOString().slice(0, 10).replaceAll("-", "")

type ReferenceStep = "send" | "complete" | "late"

/** The references the network gives at a step, per rail (the module's comment). */
const referencesAt = (t: Transactions.StoredTransaction, step: ReferenceStep, nowMs: number): Record<string, string> => {
  const route = t.route
  if (route === undefined) return {}
  if ("chain" in route) return step === "send" ? { txHash: Addresses.sandboxTxHash(route.chain, t.id) } : {}
  const h = digest(t, route.rail)
  switch (route.rail) {
    case "ach":
      // The originating bank's 8-digit routing prefix and a 7-digit sequence.
      return step === "send" ? { achTraceNumber: `02100002${digits(h, 7)}` } : {}
    case "fedwire":
      if (step === "send") return { fedwireImad: `${yyyymmdd(nowMs)}FOSB${h.slice(0, 4).toUpperCase()}${digits(h, 6)}` }
      return step === "late" ? { fedwireOmad: `${yyyymmdd(nowMs)}FOSR${h.slice(4, 8).toUpperCase()}${digits(h.slice(8), 6)}` } : {}
    case "swift":
    case "international_wire":
      // A UETR is a UUID version 4.
      return step === "send"
        ? { swiftUetr: `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${"89ab"[Number.parseInt(h[16]!, 16) % 4]}${h.slice(17, 20)}-${h.slice(20, 32)}` }
        : {}
    case "rtp":
      return step === "complete" ? { rtpTransactionId: `${yyyymmdd(nowMs)}FOS${h.slice(0, 24).toUpperCase()}` } : {}
    case "fednow":
      return step === "complete" ? { fedNowMessageId: `${yyyymmdd(nowMs)}FOS${h.slice(0, 24).toUpperCase()}` } : {}
    case "sepa":
    case "faster_payments":
      return {}
  }
}

/** Adds the references of `step` to the destination (in the caller's store transaction). */
const addReferences = (t: Transactions.StoredTransaction, step: ReferenceStep, nowMs: number) => Transactions.addDestinationReferences(t.id, referencesAt(t, step, nowMs))

const settleTime = (t: Transactions.StoredTransaction, nowMs: number) =>
  Effect.map(WorldModel.WorldModel, (model) => {
    const route = t.route!
    return "rail" in route ? WorldModel.settlesAt(nowMs, model.railSettlement[route.rail]) : nowMs + model.chainSettlementMs[route.chain]
  })

/**
 * Moves a payout on from where it stands, unless it is in review or ended (a review's end resumes it): pending ->
 * processing (and sending after `sendMs`); processing -> sending; sent -> settling on the rail's clock. A payout out
 * of a non-custodial wallet is signed before it is sent: processing starts its signing, and the quorum sends it
 * (the service co-signs and broadcasts, `sendMs` later).
 */
const resume = (t: Transactions.StoredTransaction) =>
  Effect.gen(function*() {
    if (TransactionMachine.terminalStatuses.has(t.status) || t.stage !== null) return
    if (t.cancelRequested === true && !t.sent) {
      yield* Effect.orDie(Transactions.move(t.id, { type: "cancel" }, { cancellationReason: "client_cancelled" }))
      return
    }
    const model = (yield* WorldModel.WorldModel).payouts
    const now = yield* Clock.currentTimeMillis
    const scope = Tenancy.scopeOf(t.organizationId, t.environment)
    const sendAfterQuorum = { kind: sendTimer.name, payload: { transactionId: t.id }, delayMs: model.sendMs }
    if (t.status === "pending") {
      const processing = yield* Effect.orDie(Transactions.move(t.id, { type: "start" }))
      if (t.signingWalletId !== undefined) yield* Topics.publish(Transactions.SignaturesRequested, { transaction: processing, onQuorum: sendAfterQuorum })
      else yield* Timers.schedule(sendTimer, now + model.sendMs, { transactionId: t.id }, scope)
    } else if (t.signingWalletId !== undefined && !t.sent) {
      // A review ended while processing: the signing starts, or goes on where it stands (the quorum already met
      // sends it).
      yield* Topics.publish(Transactions.SignaturesRequested, { transaction: t, onQuorum: sendAfterQuorum })
    } else if (!t.sent) {
      yield* Timers.schedule(sendTimer, now + model.sendMs, { transactionId: t.id }, scope)
    } else {
      yield* Timers.schedule(settleTimer, yield* settleTime(t, now), { transactionId: t.id }, scope)
    }
  })

/** After a simulate call cleared a payout's review: the world model carries it on. */
export const resumeAfterReview = (id: TransactionId): Effect.Effect<void, never, Store.Store> =>
  Effect.flatMap(Store.Store, (store) =>
    Effect.flatMap(store.get(Transactions.Transactions, id), (t) => (t === undefined || t.type !== "withdrawal" ? Effect.void : resume(t))))

const payoutTimer = (step: (t: Transactions.StoredTransaction) => Effect.Effect<void, never, Store.Store>) =>
  (payload: { readonly transactionId: TransactionId }) =>
    Effect.gen(function*() {
      const store = yield* Store.Store
      const t = yield* store.getForUpdate(Transactions.Transactions, payload.transactionId)
      if (t === undefined || TransactionMachine.terminalStatuses.has(t.status)) return
      yield* step(t)
    })

// A simulate call may have started it already: then the world model still sends it (a send scheduled twice sends once).
const onStart = payoutTimer((t) => (t.sent ? Effect.void : resume(t)))

const onReviewEnd = payoutTimer((t) =>
  Effect.gen(function*() {
    if (t.stage !== "under_review") return
    const cleared = yield* Effect.orDie(Transactions.move(t.id, { type: "clear_review" }))
    yield* resume(cleared)
  }))

const onSend = payoutTimer((t) =>
  Effect.gen(function*() {
    if (t.status !== "processing" || t.sent || t.stage !== null) return
    // A non-custodial wallet's payout is sent only once its roster's quorum is met.
    if (t.signingWalletId !== undefined && t.signed !== true) return
    // A scripted failure at the send (simulate/Outcomes.ts): nothing leaves, the reservation is released.
    const scripted = yield* Transactions.scriptedOutcome(t, "send")
    if (scripted !== undefined) {
      yield* Effect.orDie(Transactions.move(t.id, { type: "fail" }, { failureCode: scripted.failureCode }))
      return
    }
    const now = yield* Clock.currentTimeMillis
    const sent = yield* Effect.orDie(Transactions.move(t.id, { type: "send" }))
    yield* addReferences(sent, "send", now)
    yield* Timers.schedule(settleTimer, yield* settleTime(t, now), { transactionId: t.id }, Tenancy.scopeOf(t.organizationId, t.environment))
  }))

const onSettle = payoutTimer((t) =>
  Effect.gen(function*() {
    if (t.status !== "processing" || !t.sent || t.stage !== null) return
    // The receive policy held it (signing/WalletFreeze.ts, a recovery): it does not settle.
    if (t.heldByReceivePolicy === true) return
    // A scripted failure at settlement (simulate/Outcomes.ts), insufficient_funds_at_settle among them.
    const scripted = yield* Transactions.scriptedOutcome(t, "settle")
    if (scripted !== undefined) {
      yield* Effect.orDie(Transactions.move(t.id, { type: "fail" }, { failureCode: scripted.failureCode }))
      return
    }
    const now = yield* Clock.currentTimeMillis
    yield* addReferences(t, "complete", now)
    const completed = yield* Effect.orDie(Transactions.move(t.id, { type: "settle" }))
    // A scripted return after completion: the beneficiary's bank sends it back on a durable timer.
    const scriptedReturn = yield* Transactions.scriptedOutcome(completed, "completed")
    if (scriptedReturn !== undefined) {
      const payload: ScriptedReturn = { transactionId: t.id, returnCode: scriptedReturn.returnCode, returnReason: scriptedReturn.returnReason }
      yield* Timers.schedule(scriptedReturnTimer, now + scriptedReturn.afterSeconds * 1000, payload, Tenancy.scopeOf(t.organizationId, t.environment))
    }
    if (t.route !== undefined && "rail" in t.route && t.route.rail === "fedwire") {
      const model = (yield* WorldModel.WorldModel).payouts
      yield* Timers.schedule(lateReferencesTimer, now + model.lateReferenceMs, { transactionId: t.id }, Tenancy.scopeOf(t.organizationId, t.environment))
    }
  }))

const onLateReferences = (payload: { readonly transactionId: TransactionId }) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const t = yield* store.getForUpdate(Transactions.Transactions, payload.transactionId)
    if (t === undefined || t.status !== "completed") return
    yield* addReferences(t, "late", yield* Clock.currentTimeMillis)
  })

interface ScriptedReturn {
  readonly transactionId: TransactionId
  readonly returnCode: string
  readonly returnReason?: string | undefined
}

/** A return a rule scripted (simulate/Outcomes.ts) comes due: booked as `simulate/transactions/{id}/return` books one. */
const onScriptedReturn = (payload: ScriptedReturn) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const t = yield* store.getForUpdate(Transactions.Transactions, payload.transactionId)
    if (t === undefined || t.status !== "completed") return
    yield* Effect.orDie(bookReturn(t.id, payload.returnCode, payload.returnReason))
  })

/** A payout's steps on the world model's clock (the table of the module's comment), and its scripted return. */
export const domain = Domain.make({
  name: "money/Payouts",
  timers: [
    Timers.handle(startTimer, onStart, (id) => `starts payout ${id} (its screening ends: processing, or under_review)`),
    Timers.handle(reviewEndTimer, onReviewEnd, (id) => `ends the compliance review of payout ${id}`),
    Timers.handle(sendTimer, onSend, (id, _p, route) => `sends payout ${id}${route}`),
    Timers.handle(settleTimer, onSettle, (id, _p, route) => `settles payout ${id}${route} (it completes)`),
    Timers.handle(lateReferencesTimer, onLateReferences, (id) => `adds the bank's late references to payout ${id}`),
    Timers.handle(
      scriptedReturnTimer,
      onScriptedReturn,
      (id, p, route) => `returns payout ${id}${route} with ${String(p.returnCode ?? "")} (an outcome rule scripted it; it fails with returned_by_sender)`
    )
  ]
})

// --- returns and restrictions -------------------------------------------------------------------------------------------

/** Return reasons of the Nacha codes seen most (the text the return carries when the simulate call names none). */
const nachaReasons: Readonly<Record<string, string>> = {
  R01: "Insufficient funds",
  R02: "Account closed",
  R03: "No account or unable to locate account",
  R04: "Invalid account number structure",
  R06: "Returned per ODFI's request",
  R07: "Authorization revoked by customer",
  R08: "Payment stopped",
  R10: "Customer advises not authorized",
  R16: "Account frozen",
  R17: "File record edit criteria",
  R20: "Non-transaction account",
  R23: "Credit entry refused by receiver",
  R29: "Corporate customer advises not authorized"
}

/**
 * `POST /sandbox/v2/simulate/transactions/{id}/return`: the beneficiary's bank returns a completed bank payout. The
 * payout becomes failed with returned_by_sender, `returnedAt`, `returnReason` and `returnCode` (on ACH a Nacha code,
 * R followed by two digits), transaction.failed fires, and the principal comes back to the source as new transfers.
 */
export const simulateReturn = (caller: Auth.Caller, id: TransactionId, body: TransactionReturn): Effect.Effect<Transactions.StoredTransaction, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const t = yield* Transactions.get(caller, id, true)
    if (t.type !== "withdrawal" || t.destination.type !== "external_bank") {
      if (t.status !== "completed" && TransactionMachine.terminalStatuses.has(t.status)) return yield* Problem.apiError("RESOURCE_TERMINAL", `The transaction has already ended (status ${t.status}).`)
      return yield* Problem.apiError("SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY", "Only a bank payout can be returned by the beneficiary's bank.")
    }
    const ach = t.payoutRail === "ach"
    if (ach && !/^R\d{2}$/.test(body.returnCode)) return yield* invalidBody("/returnCode", "must be a Nacha return code (R and two digits) on an ACH payout")
    return yield* bookReturn(id, body.returnCode, body.returnReason)
  })

/** The return of a completed bank payout: failed with returned_by_sender, the principal back as new transfers. */
const bookReturn = (id: TransactionId, returnCode: string, returnReason: string | undefined) =>
  Effect.gen(function*() {
    const reason = returnReason ?? nachaReasons[returnCode] ?? "The beneficiary's bank returned the transfer."
    return yield* Transactions.move(id, { type: "return" }, {
      returned: { returnedAt: toIso(yield* Clock.currentTimeMillis), returnReason: reason, returnCode }
    })
  })

/**
 * A restriction placed on a customer (`simulate/customers/{id}/restrict`, type account) bites its payouts: each one
 * not yet sent fails with capability_suspended and its reservation returns; one already sent goes on. New payouts
 * are refused (422 UNPROCESSABLE_ENTITY) while the customer is restricted.
 */
export const restrictCustomerWithPayouts = (caller: Auth.Caller, customerId: CustomerId, type: "account" | "monitoring") =>
  Effect.gen(function*() {
    const restricted = yield* Restrictions.restrictCustomer(caller, customerId, type)
    if (restricted.status !== "restricted") return restricted
    const store = yield* Store.Store
    for (const status of ["pending", "processing"] as const) {
      const { order, partition } = Transactions.partition(caller, { type: "withdrawal", status, customerId })
      // A customer has few payouts in flight; they are walked a bounded page at a time.
      yield* Store.walk(store, Transactions.Transactions, { order, partition }, (t) =>
        t.sent ? Effect.void : Effect.orDie(Transactions.move(t.id, { type: "fail" }, { failureCode: "capability_suspended" })))
    }
    return restricted
  })
