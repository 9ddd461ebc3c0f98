import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { CustomerId, RegisteredAddressId, WhitelistRecipientId } from "../kernel/Ids.ts"
import { listOf, listQuery } from "../kernel/Lists.ts"
import {
  RecipientSorts,
  RegisteredAddress,
  RegisteredAddressCreate,
  WhitelistRecipient,
  WhitelistRecipientCreate
} from "../money/Recipients.ts"
import { common, Idempotency, problem, withBody } from "./Policies.ts"

/** Saved payout destinations: whitelist recipients (bank accounts) and registered addresses (crypto). */
export const Recipients = HttpApiGroup.make("recipients")
  .add(
    HttpApiEndpoint.post("createWhitelistRecipient", "/v2/customers/:customerId/whitelist-recipients", {
      params: { customerId: CustomerId },
      payload: WhitelistRecipientCreate,
      success: WhitelistRecipient.pipe(HttpApiSchema.status(201)),
      error: [...withBody, problem(422)]
    }).annotate(Idempotency, "required")
  )
  .add(HttpApiEndpoint.get("listWhitelistRecipients", "/v2/customers/:customerId/whitelist-recipients", {
    params: { customerId: CustomerId },
    query: listQuery(RecipientSorts),
    success: listOf(WhitelistRecipient),
    error: [...common, problem(422)]
  }))
  .add(HttpApiEndpoint.get("getWhitelistRecipient", "/v2/whitelist-recipients/:id", {
    params: { id: WhitelistRecipientId },
    success: WhitelistRecipient,
    // 410 GONE once removed (core Recipients.ts).
    error: [...common, problem(410)]
  }))
  .add(HttpApiEndpoint.delete("removeWhitelistRecipient", "/v2/whitelist-recipients/:id", { params: { id: WhitelistRecipientId }, error: common }))
  .add(
    HttpApiEndpoint.post("createRegisteredAddress", "/v2/customers/:customerId/registered-addresses", {
      params: { customerId: CustomerId },
      payload: RegisteredAddressCreate,
      success: RegisteredAddress.pipe(HttpApiSchema.status(201)),
      error: [...withBody, problem(422)]
    }).annotate(Idempotency, "required")
  )
  .add(HttpApiEndpoint.get("listRegisteredAddresses", "/v2/customers/:customerId/registered-addresses", {
    params: { customerId: CustomerId },
    query: listQuery(RecipientSorts),
    success: listOf(RegisteredAddress),
    error: [...common, problem(422)]
  }))
  .add(HttpApiEndpoint.get("getRegisteredAddress", "/v2/registered-addresses/:id", {
    params: { id: RegisteredAddressId },
    success: RegisteredAddress,
    // 410 GONE once removed (core Recipients.ts).
    error: [...common, problem(410)]
  }))
  .add(HttpApiEndpoint.delete("removeRegisteredAddress", "/v2/registered-addresses/:id", { params: { id: RegisteredAddressId }, error: common }))
