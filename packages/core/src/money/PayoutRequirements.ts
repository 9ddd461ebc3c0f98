/**
 * What a payout must carry and what it costs, before it exists: `POST /v2/payouts/requirements` (the recipient's
 * fields per rail or chain, the purpose, supporting documents and the travel-rule fields above their thresholds, and
 * the fee), and the same rules as `POST /v2/payouts` and an order's autoPayout apply them (Payouts.ts,
 * AutoPayouts.ts): which currencies a rail carries, the fee, whether documents are required. The thresholds and fees
 * are the world model's (WorldModel.ts `payouts`; docs/money.md, "Payouts").
 */
import {
  type AssetCode,
  type Chain,
  type DocumentType,
  formatAmount,
  isFiat,
  parseAmount,
  type PayoutRail,
  type PayoutRequirements,
  type PayoutRequirementsRequest
} from "@fos/contract"
import { Effect } from "effect"
import * as Problem from "../kernel/Problem.ts"
import * as WorldModel from "./WorldModel.ts"

/** The currencies a rail carries; swift carries any fiat currency. */
export const railCurrencies: Readonly<Record<PayoutRail, ReadonlyArray<AssetCode> | "any">> = {
  ach: ["USD"],
  fedwire: ["USD"],
  rtp: ["USD"],
  fednow: ["USD"],
  // The announced replacement of swift and fedwire for international USD payments.
  international_wire: ["USD"],
  swift: "any",
  sepa: ["EUR"],
  faster_payments: ["GBP"]
}

/** The purposes fos suggests; any text is taken. */
const purposeExamples = ["invoice_payment", "supplier_payment", "payroll", "personal_transfer", "treasury_transfer"]

/**
 * The supporting document types a reviewer accepts for a payout: each one `POST /v2/documents` takes (typed as the
 * upload's types, so a payout never names a type that cannot be uploaded).
 */
export const payoutDocumentTypes: Array<DocumentType> = ["invoice", "contract", "bank_statement", "proof_of_address"]

export const unitsOf = (asset: AssetCode, text: string | undefined): bigint | undefined =>
  text === undefined ? undefined : parseAmount(asset, text)?.units

export const feeOf = (model: WorldModel.PayoutModel, asset: AssetCode, rail: PayoutRail | undefined): bigint =>
  unitsOf(asset, rail === undefined ? model.networkFee[asset] : model.railFee[rail]) ?? 0n

export const atLeast = (units: bigint, threshold: bigint | undefined) => threshold !== undefined && units >= threshold

// --- requirements ----------------------------------------------------------------------------------------------------

const bankRecipientFields = (rail: PayoutRail) => {
  const field = (name: string, required: boolean, description: string) => ({ pointer: `/recipient/${name}`, required, description })
  const common = [
    field("name", true, "the account holder's name"),
    field("address", true, "the account holder's address; state is required when country is USA")
  ]
  switch (rail) {
    case "ach":
    case "fedwire":
    case "rtp":
    case "fednow":
      return [...common, field("routingNumber", true, "the 9-digit ABA routing number"), field("accountNumber", true, "4 to 17 digits"), field("accountType", false, "checking (default) or savings")]
    case "sepa":
      return [...common, field("iban", true, "an IBAN of a SEPA country"), field("bic", false, "the bank's BIC")]
    case "faster_payments":
      return [...common, field("sortCode", true, "the 6-digit sort code"), field("accountNumber", true, "8 digits")]
    case "swift":
    case "international_wire":
      return [...common, field("bic", true, "the bank's BIC"), field("iban", false, "the IBAN, where the country issues them"), field("accountNumber", false, "required when no iban is given")]
  }
}

/** `POST /v2/payouts/requirements`: what a payout of this shape needs. */
export const payoutRequirements = (body: PayoutRequirementsRequest): Effect.Effect<PayoutRequirements, Problem.ApiError> =>
  Effect.gen(function*() {
    const model = (yield* WorldModel.WorldModel).payouts
    const invalid = (pointer: string, detail: string) =>
      Problem.invalidRequest([{ pointer, detail }])
    const amount = parseAmount(body.asset, body.amount)
    if (amount === undefined) return yield* invalid("/amount", "has more decimal places than the asset has")
    if (body.destinationType === "external_bank") {
      if (body.rail === undefined) return yield* invalid("/rail", "is required for an external_bank destination")
      if (body.chain !== undefined) return yield* invalid("/chain", "is sent only for an external_crypto destination")
      if (body.source.type !== "virtual_account" || !isFiat(body.asset)) {
        return yield* Problem.apiError("UNPROCESSABLE_ENTITY", "A bank payout is paid from a virtual account in a fiat currency.")
      }
      const carried = railCurrencies[body.rail]
      if (carried !== "any" && !carried.includes(body.asset)) {
        return yield* Problem.apiError("UNPROCESSABLE_ENTITY", `The ${body.rail} rail carries ${carried.join(", ")}.`)
      }
      const reviewed = atLeast(amount.units, unitsOf(body.asset, model.reviewThreshold[body.asset])) || model.reviewCountries.includes(body.country)
      return {
        recipient: bankRecipientFields(body.rail),
        purpose: { required: true, examples: purposeExamples },
        documents: { required: reviewed, acceptedTypes: payoutDocumentTypes },
        travelRule: { required: false, fields: [] },
        fee: formatAmount({ asset: body.asset, units: feeOf(model, body.asset, body.rail) })
      }
    }
    if (body.chain === undefined) return yield* invalid("/chain", "is required for an external_crypto destination")
    if (body.rail !== undefined) return yield* invalid("/rail", "is sent only for an external_bank destination")
    if (body.source.type !== "wallet" || isFiat(body.asset)) {
      return yield* Problem.apiError("UNPROCESSABLE_ENTITY", "A crypto payout is paid from a wallet in an on-chain asset.")
    }
    const threshold = unitsOf(body.asset, model.travelRuleThreshold[body.asset])
    const travelRuleRequired = atLeast(amount.units, threshold)
    const field = (name: string, required: boolean, description: string) => ({ pointer: `/travelRule/${name}`, required, description })
    return {
      recipient: [
        { pointer: "/destination/address", required: true, description: `an address on ${body.chain} (or a registered address)` }
      ],
      purpose: { required: true, examples: purposeExamples },
      documents: { required: atLeast(amount.units, unitsOf(body.asset, model.reviewThreshold[body.asset])), acceptedTypes: payoutDocumentTypes },
      travelRule: {
        required: travelRuleRequired,
        ...(threshold === undefined ? {} : { threshold: formatAmount({ asset: body.asset, units: threshold }) }),
        fields: [
          field("beneficiaryName", true, "the beneficiary's full name"),
          field("beneficiaryCountry", true, "the beneficiary's country (ISO 3166-1 alpha-3)"),
          field("walletType", true, "hosted (at a provider) or unhosted"),
          field("vaspName", false, "the provider holding a hosted address")
        ]
      },
      fee: formatAmount({ asset: body.asset, units: feeOf(model, body.asset, undefined) })
    }
  })

/** Whether `rail` carries `asset`. */
export const railCarries = (rail: PayoutRail, asset: AssetCode): boolean => {
  const carried = railCurrencies[rail]
  return carried === "any" || carried.includes(asset)
}

/** The fee a payout of `asset` over `rail` (or on chain, without one) is charged, in the asset's units. */
export const payoutFee = (asset: AssetCode, rail: PayoutRail | undefined): Effect.Effect<bigint> =>
  Effect.map(WorldModel.WorldModel, (model) => feeOf(model.payouts, asset, rail))

/**
 * What `POST /v2/payouts/requirements` answers as `documents.required`: a payout the rules review by amount or (a
 * bank payout) by the recipient's country needs its supporting documents for the reviewer.
 */
export const payoutDocumentsRequired = (asset: AssetCode, units: bigint, target: { readonly route: { readonly rail: PayoutRail } | { readonly chain: Chain }; readonly country: string | undefined }): Effect.Effect<boolean> =>
  Effect.map(WorldModel.WorldModel, ({ payouts: model }) =>
    atLeast(units, unitsOf(asset, model.reviewThreshold[asset])) ||
    ("rail" in target.route && target.country !== undefined && model.reviewCountries.includes(target.country)))
