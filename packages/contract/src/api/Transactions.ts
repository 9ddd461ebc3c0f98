import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { CustomerId, TransactionId } from "../kernel/Ids.ts"
import { listOf, listQuery } from "../kernel/Lists.ts"
import { SenderInformation, Transaction, TransactionSorts, TransactionStatus, TransactionType } from "../money/Transactions.ts"
import { common, Idempotency, problem, withBody } from "./Policies.ts"
import { documented } from "./OpenApiDocument.ts"

export const Transactions = HttpApiGroup.make("transactions")
  .add(HttpApiEndpoint.get("list", "/v2/transactions", {
    query: Schema.Struct({
      ...listQuery(TransactionSorts).fields,
      type: Schema.optionalKey(TransactionType),
      status: Schema.optionalKey(TransactionStatus),
      customerId: Schema.optionalKey(CustomerId)
    }),
    success: listOf(Transaction),
    error: common
  }).annotateMerge(documented("List transactions", "Lists the organization's transactions (deposits, payouts, transfers, conversions), filtered and paged by cursor.")))
  .add(HttpApiEndpoint.get("get", "/v2/transactions/:id", { params: { id: TransactionId }, success: Transaction, error: common }).annotateMerge(documented("Get a transaction", "Reads one transaction: its type, status, stage, amounts, fees and sequence of status events.")))
  .add(
    HttpApiEndpoint.post("senderInformation", "/v2/transactions/:id/sender-information", {
      params: { id: TransactionId },
      payload: SenderInformation,
      success: Transaction,
      error: [...withBody, problem(422)]
    }).annotateMerge(documented("Provide sender information", "Supplies the sender's details a held deposit awaits (transaction.awaiting_sender_information).")).annotate(Idempotency, "required")
  )
