import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { CustomerId, WalletId } from "../kernel/Ids.ts"
import { listOf, listQuery } from "../kernel/Lists.ts"
import { Wallet, WalletCreate, WalletSorts } from "../money/Wallets.ts"
import { common, Idempotency, problem, withBody } from "./Policies.ts"
import { documented, ErrorCodes } from "./OpenApiDocument.ts"

export const Wallets = HttpApiGroup.make("wallets")
  .add(
    HttpApiEndpoint.post("create", "/v2/customers/:customerId/wallets", {
      params: { customerId: CustomerId },
      payload: WalletCreate,
      success: Wallet.pipe(HttpApiSchema.status(201)),
      error: [...withBody, problem(422)]
    }).annotate(ErrorCodes, ["CUSTOMER_NOT_ONBOARDED", "DUPLICATE_CLIENT_REFERENCE_ID"]).annotateMerge(documented("Create a wallet", "Creates a custodial wallet for a customer on a chain; wallet.created follows once it has an address.")).annotate(Idempotency, "required")
  )
  .add(HttpApiEndpoint.get("list", "/v2/customers/:customerId/wallets", {
    params: { customerId: CustomerId },
    query: listQuery(WalletSorts),
    success: listOf(Wallet),
    error: [...common, problem(422)]
  }).annotateMerge(documented("List a customer's wallets", "Lists a customer's wallets with their balances.")))
  .add(HttpApiEndpoint.get("get", "/v2/wallets/:walletId", { params: { walletId: WalletId }, success: Wallet, error: common }).annotateMerge(documented("Get a wallet", "Reads one wallet: its chain, address, status and balances.")))
  .add(
    HttpApiEndpoint.post("rotate", "/v2/wallets/:walletId/rotate", {
      params: { walletId: WalletId },
      success: Wallet.pipe(HttpApiSchema.status(201)),
      error: [...withBody, problem(422)]
    }).annotate(ErrorCodes, ["WALLET_NOT_FOUND", "WALLET_NOT_ROTATABLE", "WALLET_ROTATION_IN_PROGRESS", "WALLET_ROTATION_BLOCKED_BALANCE", "WALLET_ROTATION_BLOCKED_RETURN"]).annotateMerge(documented("Rotate a wallet", "Replaces an active wallet's address with a new one; funds above the dust floor must be moved out first.")).annotate(Idempotency, "required")
  )
