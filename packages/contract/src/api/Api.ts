/**
 * The HttpApi definition: every endpoint with its path, inputs, success and problem responses, and its policies
 * (Policies.ts). The server, the OpenAPI document and the typed client all come from this one value; each group
 * is a file of its own beside this one.
 *
 * Paths are relative to a base address (`<origin>/sandbox` or `<origin>/live`).
 */
import { HttpApi, OpenApi } from "effect/http-api"
import { Applications } from "./Applications.ts"
import { Customers } from "./Customers.ts"
import { Documents } from "./Documents.ts"
import { Faults } from "./Faults.ts"
import { Onboarding } from "./Onboarding.ts"
import { Orders, Quotes } from "./Orders.ts"
import { Payouts } from "./Payouts.ts"
import { Portal } from "./Portal.ts"
import { Recipients } from "./Recipients.ts"
import { Rfis } from "./Rfis.ts"
import { Signers } from "./Signers.ts"
import { Inspect } from "./Inspect.ts"
import { Outcomes } from "./Outcomes.ts"
import { Listeners } from "./Listeners.ts"
import { Simulate } from "./Simulate.ts"
import { Transactions } from "./Transactions.ts"
import { Wallets } from "./Wallets.ts"
import { Webhooks } from "./Webhooks.ts"

/**
 * Every endpoint takes the environment's API key in `x-api-key`. The server checks it before the endpoint runs,
 * so HttpApi does not know of it and documents `security: []`; this says so in the document (and gives the
 * reference page its Authorize). Signer endpoints also take the signer's session as a bearer token.
 */
function documentApiKey(spec: Record<string, any>): Record<string, any> {
  spec.components = {
    ...spec.components,
    securitySchemes: {
      apiKey: { type: "apiKey", in: "header", name: "x-api-key", description: "An API key of this environment: ck_sandbox_… on /sandbox, ck_live_… on /live." },
      signerSession: {
        type: "http",
        scheme: "bearer",
        description: "A wallet signer's session token (Authentication rule 10), beside the API key, on the signer endpoints; docs/signing.md says how it is issued."
      }
    }
  }
  type Operation = { security?: unknown; parameters?: ReadonlyArray<{ readonly in?: string; readonly name?: string }> }
  for (const item of Object.values(spec.paths as Record<string, Record<string, Operation>>)) {
    for (const operation of Object.values(item)) {
      // A signer endpoint declares the Authorization header it reads the session from.
      const signer = (operation.parameters ?? []).some((p) => p.in === "header" && p.name?.toLowerCase() === "authorization")
      operation.security = signer ? [{ apiKey: [], signerSession: [] }] : [{ apiKey: [] }]
    }
  }
  return spec
}

export const Api = HttpApi.make("fos")
  .add(Portal.annotate(OpenApi.Description, "The calling user and organization."))
  .add(Customers.annotate(OpenApi.Description, "Customers of the organization, their feature applications and virtual accounts."))
  .add(Webhooks.annotate(OpenApi.Description, "Webhook endpoints, deliveries and the event types fos sends (each described under Webhooks)."))
  .add(Simulate.annotate(OpenApi.Description, "Sandbox-only controls: decide applications, move money and time, raise events. Under /live they are 404."))
  .add(Faults.annotate(OpenApi.Description, "Sandbox-only scripted faults: answer the next matching requests with an infrastructure problem, add latency, or commit and lose the answer; and make a webhook endpoint's receiver fail. Under /live they are 404."))
  .add(Outcomes.annotate(OpenApi.Description, "Sandbox-only scripted outcomes: rules that decide how the next matching transactions end and at which phase (a failure at send or settlement, a bank return after completion, a compliance hold). Under /live they are 404."))
  .add(Listeners.annotate(OpenApi.Description, "Sandbox-only webhook listeners, what `fos listen --forward-to URL` uses: an endpoint whose deliveries are handed to a polling client, which forwards them to a receiver on its own machine and reports the answer. Under /live they are 404."))
  .add(Inspect.annotate(OpenApi.Description, "Sandbox-only reads of what is pending and what happened: timers, the event log, an account's ledger journal and the ledger audit. Under /live they are 404."))
  .add(Documents.annotate(OpenApi.Description, "Uploaded documents for onboarding and requests for information."))
  .add(Onboarding.annotate(OpenApi.Description, "Onboarding requirements per country, and customer and organization onboarding."))
  .add(Applications.annotate(OpenApi.Description, "Onboarding and feature applications, and their identity verification."))
  .add(Transactions.annotate(OpenApi.Description, "Deposits, payouts, transfers and conversion legs."))
  .add(Wallets.annotate(OpenApi.Description, "Custodial wallets and their balances."))
  .add(Signers.annotate(OpenApi.Description, "Wallet signers, their sessions, ceremonies and signing requests."))
  .add(Quotes.annotate(OpenApi.Description, "Prices for conversions."))
  .add(Orders.annotate(OpenApi.Description, "Conversion orders: create from a quote, execute, cancel."))
  .add(Recipients.annotate(OpenApi.Description, "Whitelisted payout recipients and registered crypto addresses."))
  .add(Payouts.annotate(OpenApi.Description, "Payouts to recipients, and what they require."))
  .add(Rfis.annotate(OpenApi.Description, "Requests for information raised by compliance, and their answers."))
  .annotate(OpenApi.Title, "Financial Operations Service API (fos)")
  .annotate(OpenApi.Version, "2")
  .annotate(OpenApi.License, { name: "MIT", url: "https://opensource.org/license/mit" })
  .annotate(OpenApi.Description, "The reference implementation of the Financial Operations Service API v2. Paths are relative to a base address: `<origin>/sandbox` or `<origin>/live`.")
  .annotate(OpenApi.Transform, documentApiKey)
