/**
 * One realistic request body per operation that takes a JSON body, by operation id (`group.endpoint`), as the
 * OpenAPI document shows it (the request body's `example`). test/openapi.test.ts decodes each with its endpoint's
 * payload schema, so an example that stops fitting its schema fails there, and names every body that has none.
 */

const berlin = { line1: "Unter den Linden 1", city: "Berlin", postalCode: "10117", country: "DEU" }
const newYork = { line1: "1 Wall St", city: "New York", state: "NY", postalCode: "10005", country: "USA" }

export const requestExamples: Readonly<Record<string, unknown>> = {
  "customers.submitUpdate": { businessInfo: { tradingName: "Acme Payments", website: "https://acme.example" }, clientReferenceId: "acme-update-7" },
  "customers.submitFeature": { type: "crypto_wallet", asset: { code: "USDC", chain: "base" }, clientReferenceId: "acme-wallets" },
  "webhooks.createEndpoint": {
    url: "https://hooks.acme.example/fos",
    subscription: { mode: "selected", eventTypes: ["transaction.completed", "transaction.failed", "order.succeeded"] }
  },
  "webhooks.updateEndpoint": { subscription: { mode: "all" }, status: "active" },
  "listeners.createListener": { subscription: { mode: "selected", eventTypes: ["transaction.completed", "transaction.failed"] } },
  "listeners.reportAttempt": { status: 200, latencyMs: 12 },
  "simulate.emitEvent": { type: "order.succeeded" },
  "faults.createFault": { match: { method: "POST", path: "/v2/payouts" }, effect: { type: "commit_then_lose" }, count: 1 },
  "faults.createReceiverFault": { effect: { type: "status", status: 503 }, count: 4 },
  "outcomes.createOutcomeRule": { match: { type: "withdrawal", rail: "ach", minAmount: "100.00" }, outcome: { type: "return", returnCode: "R01", afterSeconds: 172800 }, count: 1 },
  "simulate.decideApplication": { outcome: "approved" },
  "simulate.complianceResult": { failureCode: "compliance_denied", failureMessage: "Sanctions screening matched.", resubmittable: false },
  "simulate.restrictCustomer": { type: "account" },
  "simulate.deposit": {
    destination: { type: "deposit_address", address: "0x4b1e7f0c2a9d3e5f6a7b8c9d0e1f2a3b4c5d6e7f" },
    assetAmount: { code: "USDC", amount: "1000.25", chain: "base" }
  },
  "simulate.endTransaction": { outcome: "failed", failureCode: "chain_broadcast_failed", reason: "The node refused the broadcast." },
  "simulate.reviewTransaction": { action: "enter" },
  "simulate.setRate": { sourceAsset: "USD", destinationAsset: "EUR", mid: "0.9215" },
  "simulate.failOrder": { reasonCode: "provider_unavailable", at: "execution" },
  "simulate.returnTransaction": { returnCode: "R01", returnReason: "Insufficient funds" },
  "simulate.publishRfi": { questions: [{ text: "What is the source of these funds?" }, { text: "Upload the invoice for this payment.", kind: "document" }], deadlineSeconds: 604800 },
  "simulate.reviewRfi": { action: "resolve" },
  "simulate.advanceClock": { seconds: 3600 },
  "simulate.provisionClaim": { outcome: "succeeded" },
  "simulate.enrollSigner": { passkeyCount: 1 },
  "simulate.signerLogin": { authentication: "succeeded" },
  "simulate.decideCeremony": { outcome: "approved" },
  "simulate.signTransaction": { decision: "approve" },
  "simulate.unsupportedDeposit": { assetAmount: { code: "DAI", amount: "25", chain: "base" }, sender: { address: "0x9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b" } },
  "onboarding.submit": {
    customerType: "business",
    country: "DEU",
    businessInfo: { legalName: "Acme GmbH", taxId: "DE123456789", registrationNumber: "HRB 123456", incorporationDate: "2019-04-01", registeredAddress: berlin },
    documentIds: ["doc_01JD8X4M2Q7RZ5K3N9V6T0W1YC", "doc_01JD8X4M2Q7RZ5K3N9V6T0W1YD"],
    ownership: {
      persons: [{
        referenceId: "p1",
        roles: ["owner", "controller"],
        ownershipPercent: 100,
        firstName: "Anna",
        lastName: "Schmidt",
        dateOfBirth: "1985-02-14",
        nationality: "DEU",
        address: berlin,
        documentIds: ["doc_01JD8X4M2Q7RZ5K3N9V6T0W1YE"]
      }]
    },
    clientReferenceId: "acme-gmbh"
  },
  "onboarding.submitOrganization": {
    country: "USA",
    businessInfo: { legalName: "Gotham LLC", taxId: "12-3456789", incorporationDate: "2020-01-15", registeredAddress: newYork },
    documentIds: ["doc_01JD8X4M2Q7RZ5K3N9V6T0W1YF"]
  },
  "transactions.senderInformation": { name: "Jane Doe", country: "USA", address: newYork, accountNumber: "000123456789" },
  "wallets.create": { chain: "base", clientReferenceId: "acme-treasury" },
  "signers.claim": { chains: ["base"], roster: [{ credentialType: "passkey", role: "admin", email: "cfo@acme.example", name: "Anna Schmidt" }], threshold: 1 },
  "signers.startCeremony": { type: "signer_promotion", walletSignerId: "wsg_01JD8X4M2Q7RZ5K3N9V6T0W1YG" },
  "quotes.create": { source: { asset: "USD" }, target: { asset: "USDC", chain: "base" }, amount: "1000.00", lockSide: "source" },
  "orders.create": {
    source: { type: "virtual_account", virtualAccountId: "vac_01JD8X4M2Q7RZ5K3N9V6T0W1YH" },
    destination: { type: "wallet", walletId: "wlt_01JD8X4M2Q7RZ5K3N9V6T0W1YJ", asset: "USDC" },
    quoteOptionId: "qop_01JD8X4M2Q7RZ5K3N9V6T0W1YK",
    clientReferenceId: "order-2026-03-01-1"
  },
  "recipients.createWhitelistRecipient": {
    rail: "ach",
    name: "Jane Doe",
    address: newYork,
    accountNumber: "000123456789",
    routingNumber: "021000021",
    accountType: "checking"
  },
  "recipients.createRegisteredAddress": { chain: "base", address: "0x4b1e7f0c2a9d3e5f6a7b8c9d0e1f2a3b4c5d6e7f", label: "Treasury cold wallet" },
  "payouts.requirements": { source: { type: "wallet" }, destinationType: "external_crypto", asset: "USDC", chain: "base", country: "USA", amount: "250.00" },
  "payouts.create": {
    source: { type: "wallet", walletId: "wlt_01JD8X4M2Q7RZ5K3N9V6T0W1YJ" },
    destination: { type: "registered_address", registeredAddressId: "rad_01JD8X4M2Q7RZ5K3N9V6T0W1YL" },
    amount: "250.00",
    purpose: "Supplier invoice 2026-114",
    clientReferenceId: "payout-2026-114"
  },
  "rfis.respond": { answers: [{ questionId: "q1", text: "Revenue from the sale of software licences." }] }
}

const exampleBody = JSON.stringify({
  id: "evt_01JD8X4M2Q7RZ5K3N9V6T0W1YM",
  type: "transaction.completed",
  createdAt: "2026-03-01T12:00:00.000Z",
  apiVersion: "2",
  mode: "sandbox",
  data: { transactionId: "txn_01JD8X4M2Q7RZ5K3N9V6T0W1YN", status: "completed" }
})

/**
 * A success answer's example, by operation id, where the schema alone says too little (the OpenAPI document shows
 * it on the 2xx response). test/openapi.test.ts encodes each with its endpoint's success schema.
 */
export const responseExamples: Readonly<Record<string, unknown>> = {
  "inspect.listSentAttempts": {
    data: [{
      attemptId: "wda_01JD8X4M2Q7RZ5K3N9V6T0W1YP",
      run: 1,
      attemptNumber: 1,
      at: "2026-03-01T12:00:00.000Z",
      request: {
        url: "https://hooks.acme.example/fos",
        headers: {
          "content-type": "application/json",
          "x-service-signature": "t=1772366400,v1=5f0c8a7d3b2e1f4a6c9d8e7b0a1f2e3d4c5b6a7980f1e2d3c4b5a69788f9e0d1",
          "x-service-delivery-id": "wda_01JD8X4M2Q7RZ5K3N9V6T0W1YP",
          "x-service-event": "transaction.completed",
          "user-agent": "fos-webhooks/2"
        },
        body: exampleBody
      },
      response: { status: 503, latencyMs: 41, error: "answered 503" }
    }],
    meta: { mode: "cursor", nextCursor: null, previousCursor: null, total: 1 }
  }
}
