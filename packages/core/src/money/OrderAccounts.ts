/**
 * An order's accounts: the source it debits and the destination it credits (spec, Order; POST /v2/orders "source,
 * destination"), each one of the customer's accounts, and the one side of a transaction or of an order on the wire
 * they make.
 *
 * - A named account is the caller's and active (404 as its reads, 422 WALLET_NOT_ACTIVE / VIRTUAL_ACCOUNT_NOT_ACTIVE).
 *   A wallet holds on-chain assets (a fiat asset on one is INVALID_ORDER_COMBO).
 * - A non-custodial source wallet signs the conversion's source transfer, so it is allowed only on the chains its
 *   roster signs on (spec: 422 NON_CUSTODIAL_SOURCE_NOT_SUPPORTED; SourceRules.ts, the rule payouts check too).
 * - An order without a source (spec: "depositInstructions (present when the order was created without an explicit
 *   source; carries the address to fund)") is funded on chain, at a service-managed funding address opened for it;
 *   it cannot redeem a quote option ("never together with depositInstructions").
 */
import {
  CryptoAssets,
  type CustomerId,
  type OrderCreate,
  type OrderId,
  type OrderSide,
  type TransactionSide
} from "@fos/contract"
import { Effect } from "effect"
import type * as Auth from "../tenancy/Auth.ts"
import type * as Ledger from "./Ledger.ts"
import type * as Pricing from "./Pricing.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as VirtualAccounts from "./VirtualAccounts.ts"
import * as Wallets from "./Wallets.ts"

import { refuseNonCustodialSource } from "./SourceRules.ts"

/** One of the customer's accounts an order names, with the asset it converts and its ledger holder. */
export interface OrderAccountOf {
  readonly type: "wallet" | "virtual_account"
  readonly id: string
  readonly side: Pricing.PairSide
  readonly holder: Ledger.Holder
  /** A non-custodial wallet: as the source, its roster signs the conversion's source transfer. */
  readonly nonCustodial?: boolean | undefined
}

/** The ledger asset of a side of a pair. */
export const ledgerAsset = (side: Pricing.PairSide): Ledger.LedgerAsset => (side.chain === undefined ? { code: side.asset } : { code: side.asset, chain: side.chain })

/**
 * The side an account is on the wire, with `assetAmount`: an order's source or destination, its transaction's, and
 * the source of its autoPayout (out of its destination). One shape for all three (OrderSide is a TransactionSide).
 */
export const accountSide = (account: OrderAccountOf, assetAmount: TransactionSide["assetAmount"]): OrderSide =>
  account.type === "wallet"
    ? { type: "wallet", walletId: account.id as never, assetAmount }
    : { type: "virtual_account", virtualAccountId: account.id as never, assetAmount }

/** The account an order names, checked to be the caller's and able to take part. */
export const resolveAccount = (caller: Auth.Caller, account: NonNullable<OrderCreate["source"]>, role: "source" | "destination") =>
  Effect.gen(function*() {
    if (account.type === "wallet") {
      const wallet = yield* Wallets.get(caller, account.walletId)
      if (wallet.status !== "active") return yield* Problem.apiError("WALLET_NOT_ACTIVE", Wallets.notActiveDetail(wallet, `${role} wallet`))
      if (!CryptoAssets.has(account.asset)) {
        return yield* Problem.apiError("INVALID_ORDER_COMBO", `A wallet holds on-chain assets; the ${role} names ${account.asset}, a fiat currency.`)
      }
      const nonCustodial = wallet.custody === "non_custodial"
      if (role === "source") yield* refuseNonCustodialSource(wallet, "A non-custodial source wallet is allowed")
      return {
        customerId: wallet.customerId,
        account: {
          type: "wallet",
          id: wallet.id,
          side: { asset: account.asset, chain: wallet.chain },
          holder: Wallets.holder(wallet),
          ...(nonCustodial ? { nonCustodial: true } : {})
        } as OrderAccountOf
      }
    }
    const va = yield* VirtualAccounts.get(caller, account.virtualAccountId)
    if (va.status !== "active") return yield* Problem.apiError("VIRTUAL_ACCOUNT_NOT_ACTIVE", `The ${role} virtual account is not active yet.`)
    return {
      customerId: va.customerId as CustomerId,
      account: {
        type: "virtual_account",
        id: va.id,
        side: { asset: va.asset.code },
        holder: { scope: Tenancy.scopeOf(caller.organization.id, caller.environment), type: "virtual_account", id: va.id }
      } as OrderAccountOf
    }
  })

/** A deposit-funded order's source: a new funding address on the source asset's chain. */
export const fundingAccount = (caller: Auth.Caller, body: OrderCreate, customerId: CustomerId, orderId: OrderId) =>
  Effect.gen(function*() {
    const asset = body.sourceAsset
    if (asset === undefined) return yield* Problem.apiError("MISSING_REQUIRED_FIELDS", "An order without a source needs sourceAsset: the asset and chain its deposit arrives in.")
    if (asset.chain === undefined) {
      return yield* Problem.apiError("INVALID_ORDER_COMBO", "An order without a source is funded on chain; a fiat source needs its virtual account as the source.")
    }
    if (body.quoteOptionId !== undefined) {
      return yield* Problem.apiError("INVALID_ORDER_COMBO", "An order funded by a deposit cannot redeem a quote option (depositInstructions and quoteOptionId never go together).")
    }
    const wallet = yield* Wallets.openFunding({ organizationId: caller.organization.id, environment: caller.environment, customerId }, asset.chain, orderId)
    return {
      customerId,
      address: wallet.address,
      account: { type: "wallet", id: wallet.id, side: { asset: asset.asset, chain: asset.chain }, holder: Wallets.holder(wallet) } as OrderAccountOf
    }
  })
