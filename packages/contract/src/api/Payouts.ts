import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { TransactionId } from "../kernel/Ids.ts"
import { PayoutCreate, PayoutRequirements, PayoutRequirementsRequest } from "../money/Payouts.ts"
import { Transaction } from "../money/Transactions.ts"
import { common, Idempotency, problem, RereadOnReplay, withBody } from "./Policies.ts"
import { documented, ErrorCodes } from "./OpenApiDocument.ts"

/** Payouts: a payout is its withdrawal transaction, read and cancelled by its txn_ id. */
export const Payouts = HttpApiGroup.make("payouts")
  .add(
    HttpApiEndpoint.post("requirements", "/v2/payouts/requirements", {
      payload: PayoutRequirementsRequest,
      success: PayoutRequirements,
      error: [...withBody, problem(422)]
    }).annotateMerge(documented("Get payout requirements", "Says which recipient and travel-rule fields a payout to a destination needs, before it is created.")).annotate(Idempotency, "refused")
  )
  .add(
    HttpApiEndpoint.post("create", "/v2/payouts", {
      payload: PayoutCreate,
      success: Transaction.pipe(HttpApiSchema.status(201)),
      error: [...withBody, problem(410), problem(422)]
    }).annotate(ErrorCodes, ["GONE", "INSUFFICIENT_FUNDS", "WALLET_NOT_ACTIVE", "VIRTUAL_ACCOUNT_NOT_ACTIVE", "VIRTUAL_ACCOUNT_ASSET_MISMATCH", "RECIPIENT_VALIDATION_FAILED", "MISSING_REQUIRED_FIELDS", "AMOUNT_OUT_OF_RANGE"]).annotateMerge(documented("Create a payout", "Sends funds from a wallet or virtual account to a recipient; the payout is a transaction whose transaction.* events report its progress.")).annotate(Idempotency, "required").annotate(RereadOnReplay, "payout")
  )
  .add(HttpApiEndpoint.get("get", "/v2/payouts/:id", { params: { id: TransactionId }, success: Transaction, error: common }).annotateMerge(documented("Get a payout", "Reads a payout: its transaction with status, amounts, fees and stage.")))
  .add(
    HttpApiEndpoint.post("cancel", "/v2/payouts/:id/cancel", {
      params: { id: TransactionId },
      success: Transaction,
      error: [...withBody, problem(422)]
    }).annotateMerge(documented("Cancel a payout", "Cancels a payout while it is still cancellable; the funds return to the source.")).annotate(Idempotency, "required")
  )
