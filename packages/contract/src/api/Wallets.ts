import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { CustomerId, WalletId } from "../kernel/Ids.ts"
import { listOf, listQuery } from "../kernel/Lists.ts"
import { Wallet, WalletCreate, WalletSorts } from "../money/Wallets.ts"
import { common, Idempotency, problem, withBody } from "./Policies.ts"

export const Wallets = HttpApiGroup.make("wallets")
  .add(
    HttpApiEndpoint.post("create", "/v2/customers/:customerId/wallets", {
      params: { customerId: CustomerId },
      payload: WalletCreate,
      success: Wallet.pipe(HttpApiSchema.status(201)),
      error: [...withBody, problem(422)]
    }).annotate(Idempotency, "required")
  )
  .add(HttpApiEndpoint.get("list", "/v2/customers/:customerId/wallets", {
    params: { customerId: CustomerId },
    query: listQuery(WalletSorts),
    success: listOf(Wallet),
    error: [...common, problem(422)]
  }))
  .add(HttpApiEndpoint.get("get", "/v2/wallets/:walletId", { params: { walletId: WalletId }, success: Wallet, error: common }))
  .add(
    HttpApiEndpoint.post("rotate", "/v2/wallets/:walletId/rotate", {
      params: { walletId: WalletId },
      success: Wallet.pipe(HttpApiSchema.status(201)),
      error: [...withBody, problem(422)]
    }).annotate(Idempotency, "required")
  )
