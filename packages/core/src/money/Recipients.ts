/**
 * Saved payout destinations (the spec's idempotency rule 1 lists "registered addresses, whitelist recipients" among
 * the keyed calls; their fields and paths are not shown, docs/money.md "Recipients" gives fos's design):
 *
 * - a **whitelist recipient** (`wlr_`) is a customer's bank account on one rail, checked for that rail when saved;
 * - a **registered address** (`rad_`) is a customer's external address on one chain, checked by the chain's
 *   validator (Addresses.ts), the one every address the API takes goes through.
 *
 * Checks and their codes: the body's shape (types, required keys, the spec's address rule with state required for
 * USA) is the schema's, 400 VALIDATION_ERROR as on every body. The banking checks are 422
 * RECIPIENT_VALIDATION_FAILED with one `errors[]` entry per problem: the fields a rail needs and the ones it does not
 * take, the ABA routing number's Federal Reserve prefix and check digit (the refusal names which), the IBAN's country, length and ISO 13616 check digits, the sort code,
 * the BIC. Each detail's value has one check (`bankDetailProblem`), which an order's autoPayout recipient goes through
 * too. An EVM address in mixed case that is not EIP-55 is 400 INVALID_ADDRESS_FORMAT, any other bad address
 * 422 RECIPIENT_VALIDATION_FAILED. A detail never repeats the rejected value, except that it may name a routing
 * number (the spec's rule for errors[]).
 *
 * Removal (`DELETE`) takes the recipient out of lists and reads (410 GONE afterwards; a second removal is 204 as
 * the first); a payout already made keeps its own copy of the destination.
 */
import {
  type Chain,
  type CustomerId,
  type Environment,
  type ErrorEntry,
  type PayoutRail,
  RegisteredAddress as RegisteredAddressSchema,
  type RegisteredAddress as RegisteredAddressWire,
  type RegisteredAddressCreate,
  toIso,
  WhitelistRecipient as WhitelistRecipientSchema,
  type WhitelistRecipient as WhitelistRecipientWire,
  type WhitelistRecipientCreate
} from "@fos/contract"
import { Clock, Effect } from "effect"
import * as Addresses from "./Addresses.ts"
import type * as Auth from "../tenancy/Auth.ts"
import * as Domain from "../kernel/Domain.ts"
import * as IdGenerator from "../kernel/IdGenerator.ts"
import * as Paging from "../kernel/Paging.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Wallets from "./Wallets.ts"
import * as Wire from "../kernel/Wire.ts"

import { abaRoutingNumberProblem } from "./AbaRoutingNumbers.ts"

export type RecipientKind = "whitelist_recipient" | "registered_address"

/**
 * A recipient's row, of either kind: the members of its kind's wire shape it keeps as they are (typed by the
 * contract's `WhitelistRecipient` and `RegisteredAddress`, each absent on the other kind's row), and its own.
 */
export interface StoredRecipient
  extends
    Partial<Wire.Stored<WhitelistRecipientWire, "rail" | "name" | "address" | "routingNumber" | "bic" | "sortCode" | "accountType">>,
    Partial<Wire.Stored<RegisteredAddressWire, "chain" | "label">>,
    Wire.Stored<WhitelistRecipientWire, "id" | "createdAt">
{
  readonly kind: RecipientKind
  readonly organizationId: string
  readonly environment: Environment
  readonly customerId: CustomerId
  readonly removed: boolean
  /** A whitelist recipient's bank account, kept whole: a payout sends to it; reads show the last four only. */
  readonly accountNumber?: string | undefined
  readonly iban?: string | undefined
  /** A registered address's address (`address` is a whitelist recipient's postal one). */
  readonly cryptoAddress?: string | undefined
  readonly clientReferenceId?: string | undefined
  /** Whether a payout has gone to it (the world model may review the first one). */
  readonly paidOut?: boolean | undefined
}

const scope = (r: StoredRecipient) => Tenancy.scopeOf(r.organizationId, r.environment)

export const Recipients = Store.table<StoredRecipient>({
  name: "recipients",
  key: (r) => r.id,
  unique: {
    clientReferenceId: (r) => (r.clientReferenceId === undefined ? undefined : `${scope(r)}/${r.kind}/${r.clientReferenceId}`)
  },
  orders: {
    // A removed recipient leaves its customer's list.
    byCustomer: { partition: (r) => (r.removed ? undefined : `${scope(r)}/${r.customerId}/${r.kind}`), sort: (r) => r.createdAt },
    byScope: { partition: scope, sort: (r) => r.id, counted: false }
  }
})

/** A sandbox's whitelist recipients and registered addresses. */
export const domain = Domain.make({
  name: "money/Recipients",
  tables: [{
    ...Domain.inScope(Recipients, "byScope"),
    counted: "recipients",
    readsAs: (r: StoredRecipient) =>
      r.kind === "registered_address"
        ? { schema: RegisteredAddressSchema, value: registeredAddressToWire(r), members: { address: "cryptoAddress" } }
        : { schema: WhitelistRecipientSchema, value: whitelistRecipientToWire(r) }
  }]
})

// --- bank account checks -------------------------------------------------------------------------------------------

/** The US rails: an ABA routing number and an account number. */
const usRails: ReadonlySet<PayoutRail> = new Set(["ach", "fedwire", "rtp", "fednow"])
const wireRails: ReadonlySet<PayoutRail> = new Set(["swift", "international_wire"])

/** The ABA routing number rule (AbaRoutingNumbers.ts), the one fos mints its own by. */
export { isAbaRoutingNumber } from "./AbaRoutingNumbers.ts"

/** IBAN lengths per country (ISO 13616 registry, SWIFT release 2025). */
const ibanLengths: Readonly<Record<string, number>> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BR: 29, BY: 28, CH: 21, CR: 22, CY: 28,
  CZ: 24, DE: 22, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FO: 18, FR: 27, GB: 22, GE: 22, GI: 23, GL: 18,
  GR: 27, GT: 28, HR: 21, HU: 28, IE: 22, IL: 23, IQ: 23, IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LC: 32,
  LI: 21, LT: 20, LU: 20, LV: 21, MC: 27, MD: 24, ME: 22, MK: 19, MR: 27, MT: 31, MU: 30, NL: 18, NO: 15, PK: 24,
  PL: 28, PS: 29, PT: 25, QA: 29, RO: 24, RS: 22, SA: 24, SC: 31, SE: 24, SI: 19, SK: 24, SM: 27, ST: 25, SV: 28,
  TL: 23, TN: 24, TR: 26, UA: 29, VA: 22, VG: 24, XK: 20
}

/** The countries of the SEPA scheme whose IBANs a sepa payout reaches. */
const sepaCountries: ReadonlySet<string> = new Set(
  "AD AT BE BG CH CY CZ DE DK EE ES FI FR GB GI GR HR HU IE IS IT LI LT LU LV MC MT NL NO PL PT RO SE SI SK SM VA".split(" ")
)

/** An IBAN without its spaces, in upper case. */
const compactIban = (s: string) => s.replaceAll(" ", "").toUpperCase()

/** What is wrong with an IBAN (compact form), or undefined: its country, its length, its ISO 7064 mod 97-10 check digits. */
export const ibanProblem = (iban: string): string | undefined => {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]+$/.test(iban)) return "must be an IBAN: a country code, two check digits and the account's letters and digits"
  const length = ibanLengths[iban.slice(0, 2)]
  if (length === undefined) return "must be an IBAN of a country that issues IBANs"
  if (iban.length !== length) return `must have ${length} characters for its country`
  const rearranged = iban.slice(4) + iban.slice(0, 4)
  let remainder = 0
  for (const c of rearranged) {
    const value = c >= "A" ? String(c.charCodeAt(0) - 55) : c
    for (const digit of value) remainder = (remainder * 10 + Number(digit)) % 97
  }
  return remainder === 1 ? undefined : "has check digits that do not match the account"
}

const bicPattern = /^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/

/** The fields each rail needs (`required`) and may take (`optional`); any other bank field is refused. */
const railFields = (rail: PayoutRail) => {
  if (usRails.has(rail)) return { required: ["routingNumber", "accountNumber"], optional: ["accountType"] } as const
  if (rail === "sepa") return { required: ["iban"], optional: ["bic"] } as const
  if (rail === "faster_payments") return { required: ["sortCode", "accountNumber"], optional: [] } as const
  return { required: ["bic"], optional: ["iban", "accountNumber"] } as const
}

const bankFields = ["accountNumber", "routingNumber", "iban", "bic", "sortCode", "accountType"] as const
type BankField = typeof bankFields[number]

/** The bank details whose value has a rule of its own, in the order their problems are listed. */
export const checkedBankDetails = ["routingNumber", "accountNumber", "sortCode", "bic", "iban"] as const
export type CheckedBankDetail = typeof checkedBankDetails[number]

/**
 * The one check of a bank detail's value on `rail`, wherever the detail comes from (a whitelist recipient when it is
 * saved, an order's autoPayout recipient): what is wrong with it, as a predicate of the field, or undefined.
 */
export const bankDetailProblem = (rail: PayoutRail, field: CheckedBankDetail, value: string): string | undefined => {
  switch (field) {
    case "routingNumber":
      // Its cause named: the form, the Federal Reserve prefix or the check digit.
      return abaRoutingNumberProblem(value)
    case "accountNumber":
      if (usRails.has(rail) && !/^\d{4,17}$/.test(value)) return "must be 4 to 17 digits"
      if (rail === "faster_payments" && !/^\d{8}$/.test(value)) return "must be 8 digits"
      if (wireRails.has(rail) && !/^[A-Za-z0-9]{4,34}$/.test(value)) return "must be 4 to 34 letters or digits"
      return undefined
    case "sortCode":
      return /^\d{2}-?\d{2}-?\d{2}$/.test(value) ? undefined : "must be a UK sort code: 6 digits, optionally as 12-34-56"
    case "bic":
      return bicPattern.test(value.toUpperCase()) ? undefined : "must be a BIC of 8 or 11 letters and digits"
    case "iban": {
      const iban = compactIban(value)
      const problem = ibanProblem(iban)
      if (problem !== undefined) return problem
      return rail === "sepa" && !sepaCountries.has(iban.slice(0, 2)) ? "must be an IBAN of a SEPA country on the sepa rail" : undefined
    }
  }
}

/** Every problem of a bank account for its rail, one entry per field. */
export const bankAccountProblems = (body: WhitelistRecipientCreate): ReadonlyArray<ErrorEntry> => {
  const errors: Array<ErrorEntry> = []
  const { required, optional } = railFields(body.rail)
  const allowed = new Set<BankField>([...required, ...optional])
  const at = (field: BankField, detail: string) => errors.push({ pointer: `/${field}`, detail })
  for (const field of bankFields) {
    if (body[field] !== undefined && !allowed.has(field)) at(field, `is not used on the ${body.rail} rail`)
  }
  for (const field of required) if (body[field] === undefined) at(field, `is required on the ${body.rail} rail`)
  for (const field of checkedBankDetails) {
    const value = body[field]
    if (!allowed.has(field) || value === undefined) continue
    const problem = bankDetailProblem(body.rail, field, value)
    // A routing number may be named in a detail (the spec's rule for errors[]); no other value is.
    if (problem !== undefined) at(field, field === "routingNumber" ? `routing number ${value} ${problem}` : problem)
  }
  if (wireRails.has(body.rail) && body.iban === undefined && body.accountNumber === undefined) {
    errors.push({ pointer: "/accountNumber", detail: `is required on the ${body.rail} rail when no iban is given` })
  }
  return errors
}

// --- reads and writes -----------------------------------------------------------------------------------------------

const last4 = (s: string) => s.slice(-4)

export const whitelistRecipientToWire = (r: StoredRecipient): WhitelistRecipientWire =>
  Wire.toWire({
    id: r.id,
    customerId: r.customerId,
    rail: r.rail,
    name: r.name,
    address: r.address,
    accountNumberLast4: r.accountNumber === undefined ? undefined : last4(r.accountNumber),
    routingNumber: r.routingNumber,
    ibanMasked: r.iban === undefined ? undefined : `${r.iban.slice(0, 2)}••••${last4(r.iban)}`,
    bic: r.bic,
    sortCode: r.sortCode,
    accountType: r.accountType,
    clientReferenceId: r.clientReferenceId,
    createdAt: r.createdAt
  }) as WhitelistRecipientWire

export const registeredAddressToWire = (r: StoredRecipient): RegisteredAddressWire =>
  Wire.toWire({
    id: r.id,
    customerId: r.customerId,
    chain: r.chain,
    address: r.cryptoAddress,
    label: r.label,
    clientReferenceId: r.clientReferenceId,
    createdAt: r.createdAt
  }) as RegisteredAddressWire

const nouns: Readonly<Record<RecipientKind, string>> = { whitelist_recipient: "whitelist recipient", registered_address: "registered address" }

/**
 * The caller's recipient of `kind`. A removed one is 410 GONE, the spec's "resource permanently removed", to a read
 * and to a payout that names it; an id that never was one of the caller's is 404 NOT_FOUND (docs/decisions.md, "GONE").
 */
export const get = (caller: Auth.Caller, kind: RecipientKind, id: string): Effect.Effect<StoredRecipient, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const found = yield* store.get(Recipients, id)
    if (found === undefined || found.kind !== kind || scope(found) !== Tenancy.scopeOf(caller.organization.id, caller.environment)) {
      return yield* Problem.apiError("NOT_FOUND", `No ${nouns[kind]} with this id exists in this organization and environment.`)
    }
    if (found.removed) return yield* Problem.apiError("GONE", `The ${nouns[kind]} was removed; add it again to use it.`)
    return found
  })

export const list = <A>(
  caller: Auth.Caller,
  kind: RecipientKind,
  customerId: CustomerId,
  query: Paging.ListQuery,
  render: (r: StoredRecipient) => A
): Effect.Effect<Paging.ListEnvelope<A>, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    yield* Wallets.onboardedCustomer(caller, customerId)
    return yield* Paging.listPage(Recipients, {
      order: "byCustomer",
      partition: `${Tenancy.scopeOf(caller.organization.id, caller.environment)}/${customerId}/${kind}`,
      query,
      toWire: render
    })
  })

/** `DELETE`: the recipient leaves lists and reads; an already removed one answers the same. */
export const remove = (caller: Auth.Caller, kind: RecipientKind, id: string): Effect.Effect<void, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const found = yield* store.getForUpdate(Recipients, id)
    if (found === undefined || found.kind !== kind || scope(found) !== Tenancy.scopeOf(caller.organization.id, caller.environment)) {
      return yield* Problem.apiError("NOT_FOUND", `No ${nouns[kind]} with this id exists in this organization and environment.`)
    }
    if (!found.removed) yield* Effect.orDie(store.update(Recipients, { ...found, removed: true }))
  })

/** A payout goes to the recipient for the first time (Payouts.ts), in the payout's transaction. */
export const markPaidOut = (recipient: StoredRecipient): Effect.Effect<void, never, Store.Store> =>
  Effect.orDie(Effect.flatMap(Store.Store, (store) => store.update(Recipients, { ...recipient, paidOut: true })))

const insertRecipient = (recipient: StoredRecipient) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const inserted = yield* Effect.exit(store.insert(Recipients, recipient))
    if (inserted._tag === "Failure") {
      return yield* Problem.apiError("DUPLICATE_CLIENT_REFERENCE_ID", `This clientReferenceId is already used by another ${nouns[recipient.kind]}.`)
    }
    return recipient
  })

const validationFailed = (errors: ReadonlyArray<ErrorEntry>) =>
  Problem.apiError("RECIPIENT_VALIDATION_FAILED", "The recipient failed validation; see errors[].", { errors })

/**
 * `POST /v2/customers/{customerId}/whitelist-recipients`. Its refusals, and those of `createRegisteredAddress`, come
 * in a fixed order, the precedence the spec's error table implies (docs/money.md, "The order of a recipient's
 * refusals"); a request that breaks two rules gets the first:
 * 1. the details alone, before anything is read: the bank account for its rail (422 RECIPIENT_VALIDATION_FAILED),
 *    or the address on its chain (400 INVALID_ADDRESS_FORMAT, 422 RECIPIENT_VALIDATION_FAILED);
 * 2. the path's customer (404 CUSTOMER_NOT_FOUND, 422 CUSTOMER_NOT_ONBOARDED);
 * 3. a clientReferenceId already used by another recipient of the kind (409 DUPLICATE_CLIENT_REFERENCE_ID), which
 *    the insert finds last.
 */
export const createWhitelist = (
  caller: Auth.Caller,
  customerId: CustomerId,
  body: WhitelistRecipientCreate
): Effect.Effect<StoredRecipient, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const errors = bankAccountProblems(body)
    if (errors.length > 0) return yield* validationFailed(errors)
    yield* Wallets.onboardedCustomer(caller, customerId)
    return yield* insertRecipient({
      id: yield* IdGenerator.newId("wlr"),
      kind: "whitelist_recipient",
      organizationId: caller.organization.id,
      environment: caller.environment,
      customerId,
      removed: false,
      rail: body.rail,
      name: body.name,
      address: body.address,
      accountNumber: body.accountNumber,
      routingNumber: body.routingNumber,
      iban: body.iban === undefined ? undefined : compactIban(body.iban),
      bic: body.bic?.toUpperCase(),
      sortCode: body.sortCode?.replaceAll("-", ""),
      accountType: body.accountType ?? (usRails.has(body.rail) ? "checking" : undefined),
      clientReferenceId: body.clientReferenceId,
      createdAt: toIso(yield* Clock.currentTimeMillis)
    })
  })

/**
 * An external address on `chain`, as a payout or a registered address takes it: its canonical form, 400
 * INVALID_ADDRESS_FORMAT for an EVM address in a letter case that is not EIP-55, or 422 RECIPIENT_VALIDATION_FAILED.
 */
export const recipientAddress = (chain: Chain, address: string, pointer: string): Effect.Effect<string, Problem.ApiError> => {
  const checked = Addresses.checkAddress(chain, address)
  if (checked.ok) return Effect.succeed(checked.normalized)
  return Effect.fail(
    checked.code === "INVALID_ADDRESS_FORMAT"
      ? Problem.apiError("INVALID_ADDRESS_FORMAT", `The EVM address at ${pointer} is neither all-lowercase nor correctly EIP-55 checksummed.`)
      : validationFailed([{ pointer, detail: checked.detail }])
  )
}

/** `POST /v2/customers/{customerId}/registered-addresses`; its refusals come in the order `createWhitelist` states. */
export const createRegisteredAddress = (
  caller: Auth.Caller,
  customerId: CustomerId,
  body: RegisteredAddressCreate
): Effect.Effect<StoredRecipient, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const address = yield* recipientAddress(body.chain, body.address, "/address")
    yield* Wallets.onboardedCustomer(caller, customerId)
    return yield* insertRecipient({
      id: yield* IdGenerator.newId("rad"),
      kind: "registered_address",
      organizationId: caller.organization.id,
      environment: caller.environment,
      customerId,
      removed: false,
      chain: body.chain,
      cryptoAddress: address,
      label: body.label,
      clientReferenceId: body.clientReferenceId,
      createdAt: toIso(yield* Clock.currentTimeMillis)
    })
  })
