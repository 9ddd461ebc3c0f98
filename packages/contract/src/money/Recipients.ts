/**
 * Saved payout destinations, the two kinds rule 1 of the spec's idempotency rules lists among the keyed calls:
 *
 * - a **whitelist recipient** (`wlr_`): a customer's bank account on one rail, validated for that rail when it is
 *   saved (ABA routing checksum, IBAN check digits, UK sort codes, BICs), the destination of fiat payouts;
 * - a **registered address** (`rad_`): a customer's external address on one chain, checked by the chain's address
 *   validator, a destination of crypto payouts.
 *
 * The spec shows neither record's fields nor their paths; docs/money.md ("Recipients") gives fos's design.
 * The account number and the IBAN are read back by their last four characters only: a read never returns a full
 * account identifier, so a leaked read-only key cannot harvest them.
 */
import { Schema } from "effect"
import "../kernel/Annotations.ts"
import { Address } from "../kernel/Geo.ts"
import { Chain } from "../kernel/Money.ts"
import { NonBlankString, UtcTimestamp } from "../kernel/Primitives.ts"
import { PayoutRail } from "./Transactions.ts"

const text = (max: number) => NonBlankString.check(Schema.isMaxLength(max, { fosDetail: `must be at most ${max} characters` }))

export const RecipientSorts = ["createdAt"] as const

/** The bank account fields a rail may take; which ones a rail needs is checked per rail (422 RECIPIENT_VALIDATION_FAILED). */
const bankAccountFields = {
  /** US rails (ach, fedwire, rtp, fednow): 4 to 17 digits; UK faster_payments: 8 digits; wires without an IBAN. */
  accountNumber: Schema.optionalKey(text(34)),
  /** US rails: the 9-digit ABA routing number, whose check digit must hold. */
  routingNumber: Schema.optionalKey(text(9)),
  /** sepa (required) and wires (or accountNumber): the IBAN, spaces allowed, whose check digits must hold. */
  iban: Schema.optionalKey(text(42)),
  /** Wires (required), sepa (optional): the 8- or 11-character BIC. */
  bic: Schema.optionalKey(text(11)),
  /** faster_payments: the 6-digit sort code, dashes allowed. */
  sortCode: Schema.optionalKey(text(8)),
  /** US rails: checking (default) or savings. */
  accountType: Schema.optionalKey(Schema.Literals(["checking", "savings"]))
}

/** `POST /v2/customers/{customerId}/whitelist-recipients`. */
export const WhitelistRecipientCreate = Schema.Struct({
  rail: PayoutRail,
  /** The account holder's name, as the bank knows it. */
  name: text(140),
  /** The account holder's address (state required when country is USA). */
  address: Address,
  ...bankAccountFields,
  clientReferenceId: Schema.optionalKey(text(128))
}).annotate({ identifier: "WhitelistRecipientCreate", description: "A recipient to whitelist for a customer." })
export type WhitelistRecipientCreate = typeof WhitelistRecipientCreate.Type

export const WhitelistRecipient = Schema.Struct({
  id: Schema.String,
  customerId: Schema.String,
  rail: PayoutRail,
  name: Schema.String,
  address: Address,
  /** The last four characters of the account number, when the rail takes one. */
  accountNumberLast4: Schema.optionalKey(Schema.String),
  routingNumber: Schema.optionalKey(Schema.String),
  /** The IBAN's country code and its last four characters (`DE••••3000`), when the rail takes one. */
  ibanMasked: Schema.optionalKey(Schema.String),
  bic: Schema.optionalKey(Schema.String),
  sortCode: Schema.optionalKey(Schema.String),
  accountType: Schema.optionalKey(Schema.Literals(["checking", "savings"])),
  clientReferenceId: Schema.optionalKey(Schema.String),
  createdAt: UtcTimestamp
}).annotate({ identifier: "WhitelistRecipient", description: "A recipient a customer may pay out to: a bank account or a crypto address, with the beneficiary." })
export type WhitelistRecipient = typeof WhitelistRecipient.Type

/** `POST /v2/customers/{customerId}/registered-addresses`. */
export const RegisteredAddressCreate = Schema.Struct({
  chain: Chain,
  address: text(128),
  label: Schema.optionalKey(text(100)),
  clientReferenceId: Schema.optionalKey(text(128))
}).annotate({ identifier: "RegisteredAddressCreate", description: "A crypto address to register as the customer's own." })
export type RegisteredAddressCreate = typeof RegisteredAddressCreate.Type

export const RegisteredAddress = Schema.Struct({
  id: Schema.String,
  customerId: Schema.String,
  chain: Chain,
  /** In the chain's canonical form (EIP-55 checksum on EVM chains). */
  address: Schema.String,
  label: Schema.optionalKey(Schema.String),
  clientReferenceId: Schema.optionalKey(Schema.String),
  createdAt: UtcTimestamp
}).annotate({ identifier: "RegisteredAddress", description: "A crypto address a customer registered as its own (first-party)." })
export type RegisteredAddress = typeof RegisteredAddress.Type
