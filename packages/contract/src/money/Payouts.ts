/**
 * Payouts: a customer's funds moved out, from a wallet or a virtual account to an external crypto address or to a
 * bank account over a rail. A payout is its `withdrawal` transaction: `POST /v2/payouts` answers the transaction,
 * and `GET /v2/payouts/{id}` reads it by its `txn_` id (the spec shows no payout fields beyond `stage`,
 * `queuePosition` and `payout.rail`, all of which the transaction carries). docs/money.md, "Payouts".
 */
import { Schema } from "effect"
import "../kernel/Annotations.ts"
import { Country } from "../kernel/Geo.ts"
import { DocumentId, RegisteredAddressId, VirtualAccountId, WalletId, WhitelistRecipientId } from "../kernel/Ids.ts"
import { AssetCode, Chain } from "../kernel/Money.ts"
import { DecimalString, NonBlankString } from "../kernel/Primitives.ts"
import { PayoutRail } from "./Transactions.ts"

const text = (max: number) => NonBlankString.check(Schema.isMaxLength(max, { fosDetail: `must be at most ${max} characters` }))

/** Where a payout takes its money from, named as orders name their source. */
export const PayoutSource = Schema.Union([
  Schema.Struct({ type: Schema.Literal("wallet"), walletId: WalletId }),
  Schema.Struct({ type: Schema.Literal("virtual_account"), virtualAccountId: VirtualAccountId })
])
export type PayoutSource = typeof PayoutSource.Type

/** Where a payout sends the money: an address on a chain (given, or registered), or a whitelisted bank account. */
export const PayoutDestination = Schema.Union([
  Schema.Struct({ type: Schema.Literal("external_crypto"), address: text(128), chain: Chain }),
  Schema.Struct({ type: Schema.Literal("registered_address"), registeredAddressId: RegisteredAddressId }),
  Schema.Struct({ type: Schema.Literal("external_bank"), whitelistRecipientId: WhitelistRecipientId })
])
export type PayoutDestination = typeof PayoutDestination.Type

/** What the travel rule asks of a crypto payout at or above its threshold (`POST /v2/payouts/requirements` says when). */
export const TravelRule = Schema.Struct({
  beneficiaryName: text(140),
  beneficiaryCountry: Country,
  /** Whether the address is held at a virtual asset service provider (`hosted`) or by the beneficiary (`unhosted`). */
  walletType: Schema.Literals(["hosted", "unhosted"]),
  /** The provider holding a hosted address. */
  vaspName: Schema.optionalKey(text(140))
}).annotate({ identifier: "TravelRule", description: "Travel-rule details of a transfer: who sends and who receives." })
export type TravelRule = typeof TravelRule.Type

/** `POST /v2/payouts` (Idempotency-Key required). */
export const PayoutCreate = Schema.Struct({
  source: PayoutSource,
  destination: PayoutDestination,
  /** A decimal string in the source's asset; the fees come on top of it. */
  amount: DecimalString,
  /** The asset to send: required from a wallet (an asset on its chain); from a virtual account, its currency. */
  asset: Schema.optionalKey(AssetCode),
  /** A bank payout's rail; the whitelist recipient's rail when omitted, and it must be that rail when given. */
  rail: Schema.optionalKey(PayoutRail),
  /** Why the money moves (for example `invoice_payment`, `payroll`, `supplier_payment`). */
  purpose: text(100),
  /** Supporting documents (doc_ ids of the customer). */
  documents: Schema.optionalKey(Schema.Array(DocumentId).check(Schema.isMaxLength(10, { fosDetail: "must hold at most 10 document ids" }))),
  travelRule: Schema.optionalKey(TravelRule),
  clientReferenceId: Schema.optionalKey(text(128))
}).annotate({ identifier: "PayoutCreate", description: "A payout: the source to debit, the recipient, the amount and, where the rail needs them, travel-rule details." })
export type PayoutCreate = typeof PayoutCreate.Type

/** `POST /v2/payouts/requirements` (refuses an Idempotency-Key). */
export const PayoutRequirementsRequest = Schema.Struct({
  source: Schema.Struct({ type: Schema.Literals(["wallet", "virtual_account"]) }),
  destinationType: Schema.Literals(["external_crypto", "external_bank"]),
  /** Required for external_bank. */
  rail: Schema.optionalKey(PayoutRail),
  asset: AssetCode,
  /** Required for external_crypto. */
  chain: Schema.optionalKey(Chain),
  /** The beneficiary's country. */
  country: Country,
  amount: DecimalString
}).annotate({ identifier: "PayoutRequirementsRequest", description: "The destination (asset, rail, recipient type) to read a payout's requirements for." })
export type PayoutRequirementsRequest = typeof PayoutRequirementsRequest.Type

const Requirement = Schema.Struct({
  /** JSON Pointer into the payout body (or into a whitelist recipient's body, under `recipient`). */
  pointer: Schema.String,
  required: Schema.Boolean,
  description: Schema.String
})

export const PayoutRequirements = Schema.Struct({
  /** The fields of the saved destination: a whitelist recipient for the rail, or a registered address. */
  recipient: Schema.Array(Requirement),
  purpose: Schema.Struct({ required: Schema.Boolean, examples: Schema.Array(Schema.String) }),
  documents: Schema.Struct({ required: Schema.Boolean, acceptedTypes: Schema.Array(Schema.String) }),
  travelRule: Schema.Struct({
    required: Schema.Boolean,
    /** The amount from which the travel rule applies, in the payout's asset; null for fiat payouts. */
    /** Omitted where no amount threshold applies (a bank payout; rule 3). */
    threshold: Schema.optionalKey(DecimalString),
    fields: Schema.Array(Requirement)
  }),
  /** The fee the payout would carry, in the payout's asset. */
  fee: DecimalString
}).annotate({ identifier: "PayoutRequirements", description: "What a payout to a destination needs: the recipient and travel-rule fields required." })
export type PayoutRequirements = typeof PayoutRequirements.Type
