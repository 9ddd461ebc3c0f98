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
  .add(Portal)
  .add(Customers)
  .add(Webhooks)
  .add(Simulate)
  .add(Faults)
  .add(Inspect)
  .add(Documents)
  .add(Onboarding)
  .add(Applications)
  .add(Transactions)
  .add(Wallets)
  .add(Signers)
  .add(Quotes)
  .add(Orders)
  .add(Recipients)
  .add(Payouts)
  .add(Rfis)
  .annotate(OpenApi.Title, "Financial Operations Service API (fos)")
  .annotate(OpenApi.Version, "2")
  .annotate(OpenApi.Description, "The reference implementation of the Financial Operations Service API v2. Paths are relative to a base address: <origin>/sandbox or <origin>/live.")
  // Relative to the document's own address (<base>/v2/openapi.json), so each environment's document names its base.
  .annotate(OpenApi.Servers, [{ url: "..", description: "This environment (the base address this document is served from)" }])
  .annotate(OpenApi.Transform, documentApiKey)
