import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { TransactionId } from "../kernel/Ids.ts"
import { PayoutCreate, PayoutRequirements, PayoutRequirementsRequest } from "../money/Payouts.ts"
import { Transaction } from "../money/Transactions.ts"
import { common, Idempotency, problem, RereadOnReplay, withBody } from "./Policies.ts"

/** Payouts: a payout is its withdrawal transaction, read and cancelled by its txn_ id. */
export const Payouts = HttpApiGroup.make("payouts")
  .add(
    HttpApiEndpoint.post("requirements", "/v2/payouts/requirements", {
      payload: PayoutRequirementsRequest,
      success: PayoutRequirements,
      error: [...withBody, problem(422)]
    }).annotate(Idempotency, "refused")
  )
  .add(
    HttpApiEndpoint.post("create", "/v2/payouts", {
      payload: PayoutCreate,
      success: Transaction.pipe(HttpApiSchema.status(201)),
      error: [...withBody, problem(410), problem(422)]
    }).annotate(Idempotency, "required").annotate(RereadOnReplay, "payout")
  )
  .add(HttpApiEndpoint.get("get", "/v2/payouts/:id", { params: { id: TransactionId }, success: Transaction, error: common }))
  .add(
    HttpApiEndpoint.post("cancel", "/v2/payouts/:id/cancel", {
      params: { id: TransactionId },
      success: Transaction,
      error: [...withBody, problem(422)]
    }).annotate(Idempotency, "required")
  )
