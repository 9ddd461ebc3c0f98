/**
 * Wallets: a customer's on-chain accounts, one per chain, each with its deposit address. Custodial wallets are the
 * service's to sign for; non-custodial ones need the customer's own signers. A wallet retired by rotation names its
 * successor in `replacedByWalletId`.
 */
import { Schema } from "effect"
import "../kernel/Annotations.ts"
import { Chain } from "../kernel/Money.ts"
import { NonBlankString, UtcTimestamp } from "../kernel/Primitives.ts"
import { Balance } from "./Transactions.ts"

export const WalletCustodies = ["custodial", "non_custodial"] as const
export type WalletCustody = typeof WalletCustodies[number]

/** `active` takes deposits and sends; `retired` (by rotation) takes nothing new. */
/**
 * active; retired by rotation (its successor in replacedByWalletId); frozen: a non-custodial wallet whose signing
 * configuration blocks movement (failureCode crypto_wallet_misconfigured), which takes deposits but sends nothing.
 */
export const WalletStatuses = ["active", "retired", "frozen"] as const
export type WalletStatus = typeof WalletStatuses[number]

export const WalletSorts = ["createdAt"] as const

export const Wallet = Schema.Struct({
  id: Schema.String,
  customerId: Schema.String,
  chain: Chain,
  custody: Schema.Literals(WalletCustodies),
  status: Schema.Literals(WalletStatuses),
  /** Where deposits to the wallet are sent, in its chain's own format. */
  address: Schema.String,
  /** What the wallet holds, one entry per asset it has held, from the ledger. */
  balances: Schema.Array(Balance),
  clientReferenceId: Schema.optionalKey(Schema.String),
  /** Present once the wallet is retired by rotation. */
  replacedByWalletId: Schema.optionalKey(Schema.String),
  createdAt: UtcTimestamp,
  updatedAt: UtcTimestamp
}).annotate({ identifier: "Wallet", description: "A custodial wallet of a customer on one chain: its address, status and balances." })
export type Wallet = typeof Wallet.Type

/** `POST /v2/customers/{customerId}/wallets`: a custodial wallet on `chain`. */
export const WalletCreate = Schema.Struct({
  chain: Chain,
  clientReferenceId: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(128, { fosDetail: "must be at most 128 characters" })))
}).annotate({ identifier: "WalletCreate", description: "The chain of the wallet to create." })
export type WalletCreate = typeof WalletCreate.Type
