/**
 * The rules on a source of funds that every movement out of a customer's accounts checks, whichever call opens it:
 * `POST /v2/payouts`, and `POST /v2/orders` with its execution (an order's autoPayout is a payout opened by the
 * order, so the order's checks stand for it). Each rule is written once, here; the endpoints keep their own words.
 *
 * - Spec, Errors: "422 NON_CUSTODIAL_SOURCE_NOT_SUPPORTED: non-custodial source allowed on EVM chains (Ethereum,
 *   Base, Polygon), Solana and Tron; rejected on Stellar". A non-custodial wallet is a source only on a chain its
 *   roster signs on (Wallets.ts `nonCustodialChains`).
 * - A restricted customer makes no new payouts and no new orders (not shown; docs/money.md, Orders, "A restricted customer", and Payouts, "Failures"): 422
 *   UNPROCESSABLE_ENTITY while the restriction lasts. What is already under way goes on.
 */
import type { Chain } from "@fos/contract"
import { Effect } from "effect"
import * as Problem from "../kernel/Problem.ts"
import * as Wallets from "./Wallets.ts"

/**
 * 422 NON_CUSTODIAL_SOURCE_NOT_SUPPORTED for a non-custodial `wallet` on a chain its roster cannot sign on. `allowed`
 * is the endpoint's words for what the rule allows ("A non-custodial wallet pays out"), followed by the chains.
 */
export const refuseNonCustodialSource = (
  wallet: { readonly custody: string; readonly chain: Chain },
  allowed: string
): Effect.Effect<void, Problem.ApiError> =>
  wallet.custody === "non_custodial" && !Wallets.nonCustodialChains.includes(wallet.chain)
    ? Effect.fail(Problem.apiError("NON_CUSTODIAL_SOURCE_NOT_SUPPORTED", `${allowed} on ${Wallets.nonCustodialChains.join(", ")}; not on ${wallet.chain}.`))
    : Effect.void

/** Whether a customer is restricted now. */
export const isRestricted = (customer: { readonly status: string } | undefined): boolean => customer?.status === "restricted"

/** 422 UNPROCESSABLE_ENTITY when `customer` is restricted: it makes no new `movements` ("payouts", "orders"). */
export const refuseRestricted = (customer: { readonly status: string } | undefined, movements: "payouts" | "orders"): Effect.Effect<void, Problem.ApiError> =>
  isRestricted(customer)
    ? Effect.fail(Problem.apiError("UNPROCESSABLE_ENTITY", `The customer is restricted; it cannot make new ${movements} while the restriction lasts.`))
    : Effect.void
