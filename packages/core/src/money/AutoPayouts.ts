/**
 * autoPayout: the payout an order chains after its conversion (spec, Order: "autoPayout for an OFFRAMP order: rail,
 * purpose (required), documents (optional supporting document ids), recipient. For an ONRAMP order: purpose
 * (required), documents (optional), recipient with chain, address, attestation; recipient.chain must equal the
 * destination wallet's chain"; Errors: "INVALID_ORDER_COMBO ... autoPayout not matching the direction",
 * "CLIENT_MARKUP_EXCEEDS_PAYOUT autoPayout margin reaches the converted amount").
 *
 * - Checked when the order is created, as `POST /v2/payouts` checks a payout: the fields the direction needs, the
 *   recipient (its address by the chain's validator, its bank details by Recipients.ts's one check of each detail),
 *   the rail's currency, the supporting documents a payout the review rules catch needs, the client's margin.
 * - Opened as a payout (Payouts.ts `Payouts.open`, the code path of `POST /v2/payouts`) when the conversion settles, in
 *   the same store transaction, with `linkedOrderId`: the converted amount out of the destination account, of which
 *   the payout's fee and the client's margin are fees and the rest reaches the recipient. From there it is a payout
 *   like any: compliance (and review by the rules), processing, sending, settlement on the chain's or rail's clock,
 *   network references, cancel, failures and returns.
 */
import {
  type AutoPayout,
  type CustomerId,
  type OrderId,
  parseAmount,
  type TransactionId,
  withArticle
} from "@fos/contract"
import { Effect } from "effect"
import * as Addresses from "./Addresses.ts"
import type * as Auth from "../tenancy/Auth.ts"
import * as Customers from "../onboarding/Customers.ts"
import * as Documents from "../onboarding/Documents.ts"
import * as PayoutRequirements from "./PayoutRequirements.ts"
import * as Payouts from "./Payouts.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Quotes from "./Quotes.ts"
import * as Rates from "./Rates.ts"
import * as Recipients from "./Recipients.ts"
import * as Store from "../kernel/Store.ts"
import * as Transactions from "./Transactions.ts"

import { accountSide, type OrderAccountOf } from "./OrderAccounts.ts"

import { isRestricted } from "./SourceRules.ts"

/** The bank details an autoPayout recipient carries that have a check of their own (Recipients.ts). */
const recipientBankDetails = ["routingNumber", "accountNumber", "iban"] as const

/** The recipient fields of a bank payout (an offramp's), and those of a payout on a chain (an onramp's). */
const bankRecipientFields = ["name", "country", "iban", "accountNumber", "routingNumber"] as const
const chainRecipientFields = ["chain", "address", "attestation"] as const

/**
 * An autoPayout of the other direction's kind is the spec's INVALID_ORDER_COMBO ("autoPayout not matching the
 * direction"), not a payout missing fields: a crypto payout after an offramp, or a rail or bank recipient after an
 * onramp. A rail on an onramp is refused there rather than as a 400 VALIDATION_ERROR on /autoPayout/rail: the field
 * is well formed and belongs to the body's shape; only the order's direction makes it wrong, which is what the
 * catalog's INVALID_ORDER_COMBO names. (Stored and ignored, it would promise a rail the payout never takes.)
 */
const directionMismatch = (direction: "onramp" | "offramp", payout: AutoPayout): string | undefined => {
  const recipient = payout.recipient ?? {}
  const bank = bankRecipientFields.filter((f) => recipient[f] !== undefined)
  if (direction === "offramp") {
    return bank.length === 0 && chainRecipientFields.some((f) => recipient[f] !== undefined)
      ? "An offramp order's autoPayout goes to a bank account (rail, recipient.name, recipient.country, recipient.iban or recipient.accountNumber), not to an address on a chain."
      : undefined
  }
  const foreign = [...(payout.rail === undefined ? [] : ["rail"]), ...bank.map((f) => `recipient.${f}`)]
  return foreign.length === 0 ? undefined : `An onramp order's autoPayout goes to an address on the destination wallet's chain: it takes no ${foreign.join(", ")}.`
}

/**
 * Checks an order's autoPayout against its direction and destination, and answers the client's margin on it in the
 * destination asset: INVALID_ORDER_COMBO for a direction with no payout or a payout of the other direction's kind, MISSING_REQUIRED_FIELDS (as well as the
 * supporting documents a payout the review rules catch needs, as for `POST /v2/payouts`), RECIPIENT_VALIDATION_FAILED,
 * UNPROCESSABLE_ENTITY for a rail that does not carry the destination's currency, DOCUMENT_IDS_NOT_FOUND,
 * CLIENT_MARKUP_NOT_ENABLED, CLIENT_MARKUP_EXCEEDS_PAYOUT (the margin and the payout's fee reach the converted
 * amount), AMOUNT_OUT_OF_RANGE (with no margin, the payout's fee alone does). Answers the autoPayout as the order
 * keeps it: the recipient's address in the chain's canonical form and markupAmount at the asset's precision.
 */
export const checkAutoPayout = (caller: Auth.Caller, payout: AutoPayout, terms: Quotes.Terms, destination: OrderAccountOf, customerId: CustomerId) =>
  Effect.gen(function*() {
    if (terms.direction !== "onramp" && terms.direction !== "offramp") {
      return yield* Problem.apiError("INVALID_ORDER_COMBO", `autoPayout chains a payout after an onramp or an offramp, not after ${withArticle(terms.direction)}.`)
    }
    const mismatch = directionMismatch(terms.direction, payout)
    if (mismatch !== undefined) return yield* Problem.apiError("INVALID_ORDER_COMBO", mismatch)
    yield* Quotes.checkMarkupAllowed(caller, payout)
    const recipient = payout.recipient
    // An on-chain recipient's address in the chain's canonical form (EIP-55 on the EVM chains), as a payout keeps it.
    let address: string | undefined
    const missing = (fields: ReadonlyArray<string>) => Problem.apiError("MISSING_REQUIRED_FIELDS", `autoPayout needs ${fields.join(", ")} for this order.`)
    const invalid = (detail: string) => Problem.apiError("RECIPIENT_VALIDATION_FAILED", detail)
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
      const checked = Addresses.checkAddress(recipient!.chain!, recipient!.address!)
      if (!checked.ok) return yield* invalid(`recipient.address is not an address on ${recipient!.chain}.`)
      address = checked.normalized
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
      // The same check of each bank detail as a whitelist recipient's, for the rail the payout goes over.
      for (const field of recipientBankDetails) {
        const value = recipient![field]
        const problem = value === undefined ? undefined : Recipients.bankDetailProblem(payout.rail!, field, value)
        if (problem !== undefined) return yield* invalid(`recipient.${field} ${problem}.`)
      }
      if (recipient!.chain !== undefined || recipient!.address !== undefined) return yield* invalid("A bank recipient has no chain or address.")
      if (!PayoutRequirements.railCarries(payout.rail!, destination.side.asset)) {
        return yield* Problem.apiError("UNPROCESSABLE_ENTITY", `The ${payout.rail} rail does not carry ${destination.side.asset}, the destination's currency.`)
      }
    }
    const converted = terms.destinationAmount
    const margin = (payout.markupBps === undefined ? 0n : Rates.bpsOf({ asset: destination.side.asset, units: converted }, payout.markupBps).units) +
      (payout.markupAmount === undefined ? 0n : parseAmount(destination.side.asset, payout.markupAmount)?.units ?? converted)
    const fee = yield* PayoutRequirements.payoutFee(destination.side.asset, destination.side.chain === undefined ? payout.rail : undefined)
    if (margin + fee >= converted) {
      const fees = `${Quotes.amountOf(destination.side, fee).amount} ${destination.side.asset}`
      return yield* margin > 0n
        ? Problem.apiError(
          "CLIENT_MARKUP_EXCEEDS_PAYOUT",
          `The payout's margin of ${Quotes.amountOf(destination.side, margin).amount} and its fee of ${fees} reach the converted amount of ${Quotes.amountOf(destination.side, converted).amount}.`
        )
        : Problem.apiError("AMOUNT_OUT_OF_RANGE", `The payout's fee of ${fees} reaches the converted amount of ${Quotes.amountOf(destination.side, converted).amount}.`)
    }
    // The supporting documents, as POST /v2/payouts asks them of a payout the review rules catch.
    const documentsRequired = yield* PayoutRequirements.payoutDocumentsRequired(destination.side.asset, converted - margin - fee, autoPayoutTarget(destination, payout))
    if (documentsRequired && (payout.documents === undefined || payout.documents.length === 0)) {
      return yield* Problem.apiError(
        "MISSING_REQUIRED_FIELDS",
        `This autoPayout goes to compliance review and must carry documents (supporting document ids: ${PayoutRequirements.payoutDocumentTypes.join(", ")}); see POST /v2/payouts/requirements.`
      )
    }
    if (payout.documents !== undefined) yield* Documents.require(caller, payout.documents, { customerId, pointer: "/autoPayout/documents" })
    const stored: AutoPayout = {
      ...payout,
      ...(address === undefined ? {} : { recipient: { ...recipient, address } }),
      // At the destination asset's precision, as every amount fos answers; a decimal string as it was sent.
      ...(payout.markupAmount === undefined ? {} : { markupAmount: Quotes.amountOf(destination.side, parseAmount(destination.side.asset, payout.markupAmount)!.units).amount })
    }
    return { margin, payout: stored }
  })

/** Where an order's autoPayout goes: an address on the destination wallet's chain, or a bank account over its rail. */
const autoPayoutTarget = (destination: OrderAccountOf, payout: AutoPayout): Payouts.PayoutTarget => {
  const chain = destination.side.chain
  const recipient = payout.recipient!
  return chain === undefined
    ? { side: (assetAmount) => ({ type: "external_bank", assetAmount }), route: { rail: payout.rail! }, recipient: undefined, country: recipient.country }
    : { side: (assetAmount) => ({ type: "external_crypto", address: recipient.address!, assetAmount }), route: { chain }, recipient: undefined, country: undefined }
}

/** What of an order its autoPayout is opened from (a stored order has it all). */
export interface AutoPayoutOrder extends Pick<Payouts.PayoutOpening, "organizationId" | "environment" | "customerId" | "clientReferenceId"> {
  readonly id: OrderId
  readonly destination: OrderAccountOf
  /** The converted amount, in the destination's units, as decimal text. */
  readonly destinationAmount: string
  readonly autoPayout?: AutoPayout | undefined
  /** The client's margin on the payout, as `checkAutoPayout` answered it. */
  readonly payoutMarkup?: string | undefined
}

/**
 * An order's autoPayout is a payout (Payouts.ts), opened through the one code path of every payout when the
 * conversion settles, in its store transaction: out of the destination account, the converted amount less the
 * payout's fee and the client's margin to the recipient, with `linkedOrderId`. From there it is reviewed, timed,
 * referenced, cancellable and fails as any payout. A customer restricted while the order ran gets its payout failed
 * at once with capability_suspended (as its payouts in flight): the converted funds stay in the destination account.
 */
export const openAutoPayout = (order: AutoPayoutOrder): Effect.Effect<TransactionId, never, Store.Store> =>
  Effect.gen(function*() {
    const payout = order.autoPayout!
    const side = order.destination.side
    const margin = BigInt(order.payoutMarkup ?? "0")
    const converted = BigInt(order.destinationAmount)
    const target = autoPayoutTarget(order.destination, payout)
    const fee = yield* PayoutRequirements.payoutFee(side.asset, "rail" in target.route ? target.route.rail : undefined)
    const amount = converted - margin - fee
    const opened = yield* Effect.orDie(Payouts.open({
      organizationId: order.organizationId,
      environment: order.environment,
      customerId: order.customerId,
      asset: side.asset,
      chain: side.chain,
      holder: order.destination.holder,
      sourceSide: (assetAmount) => accountSide(order.destination, assetAmount),
      target,
      amount,
      purpose: payout.purpose,
      documents: payout.documents,
      documentsRequired: yield* PayoutRequirements.payoutDocumentsRequired(side.asset, amount, target),
      clientReferenceId: order.clientReferenceId,
      linkedOrderId: order.id,
      margin
    }))
    if (isRestricted(yield* (yield* Store.Store).get(Customers.Customers, order.customerId))) {
      yield* Effect.orDie(Transactions.move(opened.id, { type: "fail" }, { failureCode: "capability_suspended" }))
    }
    return opened.id
  })
