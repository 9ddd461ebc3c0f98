/**
 * Virtual accounts: fiat accounts a customer's payers send money to, with one block of deposit instructions per
 * rail family, and the resource.
 */
import { Schema } from "effect"
import "../kernel/Annotations.ts"
import { AssetCode, isFiat } from "../kernel/Money.ts"
import { NonBlankString } from "../kernel/Primitives.ts"
import { AssetRef, Balance } from "./Transactions.ts"

/** A fiat asset code (virtual accounts and bank deposit blocks are fiat). */
const FiatCode = AssetCode.check(Schema.makeFilter((code: AssetCode) => isFiat(code), { fosDetail: "must be a fiat currency" }))

/** The asset of a virtual account: a fiat currency, so `{ code }` with no chain. */
export const VirtualAccountAsset = AssetRef.check(
  Schema.makeFilter((asset: { readonly code: AssetCode }) => isFiat(asset.code) ? undefined : { path: ["code"], issue: "must be a fiat currency" })
)

export const RailFamilies = ["us_domestic", "swift", "sepa", "uk_domestic"] as const

const bankBlockHead = { currency: FiatCode, bankName: NonBlankString, accountHolderName: NonBlankString }
const Bic = NonBlankString.check(Schema.isPattern(/^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$/, { fosDetail: "must be a BIC" }))

/** How to pay into a virtual account over one rail family; each block carries its own currency. */
export const DepositBlock = Schema.Union([
  Schema.Struct({
    railFamily: Schema.Literal("us_domestic"),
    ...bankBlockHead,
    accountNumber: NonBlankString,
    routingNumber: Schema.String.check(Schema.isPattern(/^\d{9}$/, { fosDetail: "must be 9 digits" }))
  }),
  Schema.Struct({ railFamily: Schema.Literal("swift"), ...bankBlockHead, accountNumber: NonBlankString, bic: Bic }),
  Schema.Struct({
    railFamily: Schema.Literal("sepa"),
    ...bankBlockHead,
    iban: Schema.String.check(Schema.isPattern(/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/, { fosDetail: "must be an IBAN" })),
    bic: Bic
  }),
  Schema.Struct({
    railFamily: Schema.Literal("uk_domestic"),
    ...bankBlockHead,
    accountNumber: Schema.String.check(Schema.isPattern(/^\d{8}$/, { fosDetail: "must be 8 digits" })),
    sortCode: Schema.String.check(Schema.isPattern(/^\d{6}$/, { fosDetail: "must be 6 digits" }))
  })
])

export type DepositBlock = typeof DepositBlock.Type

export const VirtualAccountStatuses = ["pending", "active"] as const

export const VirtualAccount = Schema.Struct({
  id: Schema.String,
  customerId: Schema.String,
  applicationId: Schema.String,
  asset: Schema.Struct({ code: AssetCode }),
  status: Schema.Literals(VirtualAccountStatuses),
  depositInstructions: Schema.Array(DepositBlock),
  /** What the account holds, from the ledger: one entry, in the currency it collects. */
  balances: Schema.Array(Balance),
  /** Omitted until the account is active (rule 3: the spec does not call it nullable). */
  activatedAt: Schema.optionalKey(Schema.String),
  createdAt: Schema.String,
  updatedAt: Schema.String
}).annotate({ identifier: "VirtualAccount", description: "A customer's virtual bank account: asset, status and deposit instructions." })
export type VirtualAccount = typeof VirtualAccount.Type
