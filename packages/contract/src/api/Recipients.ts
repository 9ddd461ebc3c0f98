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
import { documented } from "./OpenApiDocument.ts"

/** Saved payout destinations: whitelist recipients (bank accounts) and registered addresses (crypto). */
export const Recipients = HttpApiGroup.make("recipients")
  .add(
    HttpApiEndpoint.post("createWhitelistRecipient", "/v2/customers/:customerId/whitelist-recipients", {
      params: { customerId: CustomerId },
      payload: WhitelistRecipientCreate,
      success: WhitelistRecipient.pipe(HttpApiSchema.status(201)),
      error: [...withBody, problem(422)]
    }).annotateMerge(documented("Whitelist a recipient", "Adds a bank or crypto recipient a customer may pay out to.")).annotate(Idempotency, "required")
  )
  .add(HttpApiEndpoint.get("listWhitelistRecipients", "/v2/customers/:customerId/whitelist-recipients", {
    params: { customerId: CustomerId },
    query: listQuery(RecipientSorts),
    success: listOf(WhitelistRecipient),
    error: [...common, problem(422)]
  }).annotateMerge(documented("List whitelisted recipients", "Lists a customer's whitelisted recipients.")))
  .add(HttpApiEndpoint.get("getWhitelistRecipient", "/v2/whitelist-recipients/:id", {
    params: { id: WhitelistRecipientId },
    success: WhitelistRecipient,
    // 410 GONE once removed (core Recipients.ts).
    error: [...common, problem(410)]
  }).annotateMerge(documented("Get a whitelisted recipient", "Reads one whitelisted recipient.")))
  .add(HttpApiEndpoint.delete("removeWhitelistRecipient", "/v2/whitelist-recipients/:id", { params: { id: WhitelistRecipientId }, error: common }).annotateMerge(documented("Remove a whitelisted recipient", "Removes a recipient from the whitelist; payouts to it are no longer accepted.")))
  .add(
    HttpApiEndpoint.post("createRegisteredAddress", "/v2/customers/:customerId/registered-addresses", {
      params: { customerId: CustomerId },
      payload: RegisteredAddressCreate,
      success: RegisteredAddress.pipe(HttpApiSchema.status(201)),
      error: [...withBody, problem(422)]
    }).annotateMerge(documented("Register a crypto address", "Registers a customer's own crypto address (first-party travel-rule address).")).annotate(Idempotency, "required")
  )
  .add(HttpApiEndpoint.get("listRegisteredAddresses", "/v2/customers/:customerId/registered-addresses", {
    params: { customerId: CustomerId },
    query: listQuery(RecipientSorts),
    success: listOf(RegisteredAddress),
    error: [...common, problem(422)]
  }).annotateMerge(documented("List registered addresses", "Lists a customer's registered crypto addresses.")))
  .add(HttpApiEndpoint.get("getRegisteredAddress", "/v2/registered-addresses/:id", {
    params: { id: RegisteredAddressId },
    success: RegisteredAddress,
    // 410 GONE once removed (core Recipients.ts).
    error: [...common, problem(410)]
  }).annotateMerge(documented("Get a registered address", "Reads one registered crypto address.")))
  .add(HttpApiEndpoint.delete("removeRegisteredAddress", "/v2/registered-addresses/:id", { params: { id: RegisteredAddressId }, error: common }).annotateMerge(documented("Remove a registered address", "Removes a registered crypto address.")))
