/**
 * The examples the OpenAPI document shows (OpenApiDocument.ts puts them in place):
 * - one realistic request body per operation that takes a JSON body, by operation id (`group.endpoint`);
 * - one instance of each resource a success response returns, by its schema's name: the response's example where
 *   it is that resource, or (`listExample`) a page of it;
 * - the example of a success response that is neither, by operation id.
 * The resources are answers the engine gave in the black-box suites (recorded with FOS_RESPONSE_RECORDS, see
 * test/responseSchemas.setup.ts), lists cut to one or two items. test/openapi.test.ts decodes each request example
 * with its endpoint's payload schema, validates every request and response example against its schema in the
 * served document with ajv, and names every body and success response that has none.
 *
 * It is over 1,000 lines of data, not logic: one example per resource and response, beside one another so a reader
 * compares them and a recording replaces them whole.
 */
import { signatureScheme } from "../webhooks/Webhooks.ts"

const berlin = { line1: "Unter den Linden 1", city: "Berlin", postalCode: "10117", country: "DEU" }
const newYork = { line1: "1 Wall St", city: "New York", state: "NY", postalCode: "10005", country: "USA" }

/** A sandbox's rows per table, as a reset removes them and a snapshot holds them (the same registry, Reset.ts). */
const sandboxTableCounts = {
  customers: 1,
  applications: 4,
  documents: 6,
  virtualAccounts: 1,
  wallets: 2,
  webhookEndpoints: 1,
  webhookDeliveries: 14,
  events: 14,
  timers: 28,
  idempotencyRecords: 9,
  transactions: 4,
  ledgerTransfers: 7,
  orders: 1,
  quoteOptions: 2,
  recipients: 2,
  rfis: 1,
  claims: 0,
  walletSigners: 0,
  walletCeremonies: 0,
  signingRequests: 0
}

/** A snapshot's file: the sandbox's clock and one webhook endpoint, as the store keeps them. */
const snapshotFileExample = {
  format: "fos-snapshot",
  version: 2,
  fosVersion: "0.1.0",
  snapshot: {
    id: "snp_01jd8x4m2q7rz5k3n9v6t0w1ym",
    organizationId: "org_acme",
    environment: "sandbox",
    createdAt: "2026-03-01T12:00:35.000Z",
    rows: 2,
    contents: { ...Object.fromEntries(Object.keys(sandboxTableCounts).map((k) => [k, 0])), webhookEndpoints: 1 }
  },
  sequence: 412,
  data: { endpointId: "wep_01jd8x4m2q7rz5k3n9v6t0w1yn" },
  tables: {
    clocks: [{ id: "org_acme/sandbox", nowMs: 1772366435000 }],
    webhook_endpoints: [{
      id: "wep_01jd8x4m2q7rz5k3n9v6t0w1yn",
      organizationId: "org_acme",
      environment: "sandbox",
      url: "https://hooks.acme.example/fos",
      subscription: { mode: "all" },
      status: "active",
      secret: "whsec_47719683794b834f56eea11daa7af5489b4ea09748ac58d4b00ebc1eee872b6b",
      createdAt: "2026-03-01T12:00:00.000Z",
      updatedAt: "2026-03-01T12:00:00.000Z"
    }]
  }
}

export const requestExamples: Readonly<Record<string, unknown>> = {
  "simulate.importSnapshot": snapshotFileExample,
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
  "simulate.setRate": { sourceAsset: "USD", destinationAsset: "EUR", mid: "0.9215", afterHours: true },
  "simulate.failOrder": { reasonCode: "provider_unavailable", at: "execution" },
  "simulate.returnTransaction": { returnCode: "R01", returnReason: "Insufficient funds" },
  "simulate.publishRfi": { questions: [{ text: "What is the source of these funds?" }, { text: "Upload the invoice for this payment.", kind: "document" }], deadlineSeconds: 604800 },
  "simulate.reviewRfi": { action: "resolve" },
  "simulate.advanceClock": { seconds: 3600 },
  "simulate.provisionClaim": { outcome: "succeeded" },
  "simulate.enrollSigner": { passkeyCount: 1 },
  "simulate.signerLogin": { authentication: "succeeded" },
  "simulate.decideCeremony": { outcome: "approved" },
  "simulate.startOriginChange": { origin: "https://pay.acme.example" },
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

/** One realistic instance of each resource a success response returns, by its schema's name in the document. */
export const resourceExamples: Readonly<Record<string, unknown>> = {
  AccountJournal: {
    account: {
      id: "virtual_account/vac_8yqd7j2d1kyhbq9xvncac1ye/USD",
      holderType: "virtual_account",
      holderId: "vac_8yqd7j2d1kyhbq9xvncac1ye",
      asset: "USD",
      balance: { posted: "749.00", available: "749.00", pending: "0.00", incoming: "0.00" }
    },
    data: [
      {
        transferId: "txn_06vwwgwrkbs504w11s6et9e0/credit",
        sequence: 10,
        createdAt: "2026-03-01T12:00:30.000Z",
        kind: "pending",
        side: "credit",
        amount: "1000.00",
        counterpartyAccountId: "world/rail:rtp/USD#106",
        code: "deposit",
        transactionId: "txn_06vwwgwrkbs504w11s6et9e0",
        balance: { posted: "0.00", available: "0.00", pending: "0.00", incoming: "1000.00" }
      },
      {
        transferId: "txn_06vwwgwrkbs504w11s6et9e0/post/0",
        sequence: 13,
        createdAt: "2026-03-01T12:00:30.000Z",
        kind: "post",
        side: "credit",
        amount: "1000.00",
        counterpartyAccountId: "world/rail:rtp/USD#106",
        code: "deposit.settle",
        transactionId: "txn_06vwwgwrkbs504w11s6et9e0",
        resolves: "txn_06vwwgwrkbs504w11s6et9e0/credit",
        balance: { posted: "1000.00", available: "1000.00", pending: "0.00", incoming: "0.00" }
      }
    ],
    meta: { mode: "cursor", nextCursor: null, previousCursor: null, total: 6 }
  },
  AdminApproval: {
    walletSignerId: "wsg_zm4df6mrhvrrqw6d00pmw4ky",
    ceremonyId: "cer_myjgjcjyn9923ndk5kexscwr",
    adminVerificationUrl: "https://sign.fos.dev/approvals/cer_myjgjcjyn9923ndk5kexscwr/f062f7fa86c02578b8403bad4e1c810d",
    expiresAt: "2026-03-02T12:00:30.000Z"
  },
  Application: {
    applicationId: "app_c8jtqa8sdwqhkzf3sycnby6j",
    applicationType: "customer_onboarding",
    status: "approved",
    customerId: "cus_xr1rse87as0v0qp5hvxdqt06",
    customerType: "business",
    country: "DEU",
    clientReferenceId: "signing-customer-10",
    houseAccount: false,
    persons: [
      {
        referenceId: "ubo-1",
        roles: ["owner", "controller"],
        firstName: "Erika",
        lastName: "Mustermann",
        email: "erika@acme.example",
        ownershipPercent: 60,
        verificationStatus: "completed"
      }
    ],
    decidedAt: "2026-03-01T12:00:00.000Z",
    createdAt: "2026-03-01T12:00:00.000Z",
    updatedAt: "2026-03-01T12:00:00.000Z"
  },
  ClaimAccepted: {
    claimId: "clm_89pc6kzdw61z8z6bb0e8zfvm",
    customerId: "cus_0k8q3k4dnxn395h32dee1anp",
    status: "pending",
    chains: ["base"],
    threshold: 2,
    signers: [
      {
        id: "wsg_tdn7fr5455tev5x8ghbyrcrd",
        customerId: "cus_0k8q3k4dnxn395h32dee1anp",
        claimId: "clm_89pc6kzdw61z8z6bb0e8zfvm",
        role: "admin",
        credentialType: "passkey",
        status: "pending_activation",
        passkeyCount: 0,
        email: "alice@acme.example",
        createdAt: "2026-03-02T12:00:00.000Z",
        updatedAt: "2026-03-02T12:00:00.000Z"
      },
      {
        id: "wsg_347neqwk17xsegjs5ef8z9ve",
        customerId: "cus_0k8q3k4dnxn395h32dee1anp",
        claimId: "clm_89pc6kzdw61z8z6bb0e8zfvm",
        role: "signer",
        credentialType: "passkey",
        status: "pending_activation",
        passkeyCount: 0,
        email: "bob@acme.example",
        createdAt: "2026-03-02T12:00:00.000Z",
        updatedAt: "2026-03-02T12:00:00.000Z"
      }
    ],
    createdAt: "2026-03-02T12:00:00.000Z"
  },
  ClaimState: {
    claimId: "clm_aq16t0bn3015hzjt66t95kx4",
    customerId: "cus_wddqgwctr1by5a0tms8ttmyg",
    status: "completed",
    provisioned: true,
    walletIds: ["wlt_5q2m8kx0v7c3hd9rb1tn4y6e"]
  },
  ClockAdvanced: {
    now: "2026-03-04T09:00:30.000Z",
    mode: "virtual",
    from: "2026-03-02T09:00:30.000Z",
    timersFired: {
      total: 60,
      by: {
        "deposit.confirm": 1,
        "payout.start": 1,
        "webhook.attempt": 52,
        "payout.send": 1,
        "application.review": 3,
        "order.lock_expiry": 1,
        "payout.settle": 1
      }
    },
    eventsEmitted: { total: 3, by: { "transaction.processing": 1, "order.cancelled": 1, "transaction.completed": 1 } },
    nextDueAt: "2026-04-01T09:00:00.000Z"
  },
  ClockNow: { now: "2026-03-02T09:00:30.000Z", mode: "virtual" },
  Customer: {
    id: "cus_zssbwvn7j0ndxxeje4dzhhx4",
    type: "business",
    status: "active",
    name: "Acme Holding GmbH",
    country: "DEU",
    clientReferenceId: "acme-gmbh",
    houseAccount: false,
    createdAt: "2026-03-01T12:00:00.000Z",
    updatedAt: "2026-03-01T12:02:00.000Z"
  },
  Document: {
    id: "doc_46vz9kceb45nymfmate48dep",
    type: "shareholder_register",
    fileName: "shareholder_register.pdf",
    contentType: "application/pdf",
    size: 32,
    sha256: "5030f2b8d99da8b94afcd87a12d6f47949d8908fd9736e9f95ef9af98315351f",
    customerId: "cus_zssbwvn7j0ndxxeje4dzhhx4",
    createdAt: "2026-03-01T12:00:00.000Z"
  },
  Event: {
    id: "evt_9c4tf79y3tam7ae0bzrvvfpf",
    type: "order.created",
    createdAt: "2026-03-01T12:00:00.000Z",
    apiVersion: "2",
    mode: "sandbox",
    data: {
      orderId: "ord_01j9x3f7h2k5m8p1r4t6v9x0yz",
      customerId: "cus_01j9wq3m8d5k2t7v4x6z8b0c1e",
      clientReferenceId: "order-4411",
      lockExpiresAt: "2026-03-01T12:30:00.000Z",
      depositInstructions: {
        address: "0x52908400098527886e0f7030069857d2e4169ee7",
        assetAmount: { code: "USDC", amount: "250.000000", chain: "base" }
      },
      occurredAt: "2026-03-01T12:00:00.000Z"
    }
  },
  Fault: {
    id: "flt_66kj6ncr9p6a4bvq962ph5g6",
    target: "request",
    match: { method: "POST", path: "/v2/webhooks/endpoints" },
    effect: { type: "problem", code: "IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS" },
    count: 1,
    remaining: 1,
    applied: 0,
    createdAt: "2026-03-01T12:00:00.000Z"
  },
  FaultList: {
    data: [
      {
        id: "flt_4dkwwq2vt0evbt2vxgmejm4y",
        target: "request",
        match: { path: "/v2/customers" },
        effect: { type: "latency", ms: 1 },
        count: 1,
        remaining: 1,
        applied: 0,
        createdAt: "2026-03-01T12:00:00.000Z"
      },
      {
        id: "flt_beahnveam7mvhd5tan58e0ax",
        target: "request",
        match: { path: "/v2/customers" },
        effect: { type: "latency", ms: 1 },
        count: 1,
        remaining: 1,
        applied: 0,
        createdAt: "2026-03-01T12:00:00.000Z"
      }
    ],
    meta: { mode: "cursor", nextCursor: null, previousCursor: null, total: 2 }
  },
  FaultsCleared: { removed: 1 },
  FeatureRequirements: {
    type: "crypto_wallet",
    requirements: [
      {
        pointer: "/asset/code",
        required: true,
        description: "The asset the wallet holds.",
        allowedValues: ["USDC", "USDT"]
      },
      {
        pointer: "/asset/chain",
        required: true,
        description: "The chain of the asset.",
        allowedValues: ["ethereum", "base"]
      }
    ]
  },
  IdvLink: {
    applicationId: "app_dhxeebd9zxm5e7dba6dgakar",
    referenceId: "ubo-1",
    url: "https://verify.fos.dev/session/3f2e443ceffa6b9a3e647b9890bd31fc",
    shortUrl: "https://fos.dev/v/81289730",
    expiresAt: "2026-03-08T12:00:00.000Z"
  },
  LedgerAudit: {
    clean: false,
    checkedAt: "2026-03-01T12:00:30.000Z",
    scanned: { accounts: 4, transfers: 4, transactions: 2, assets: 1 },
    checks: [
      {
        name: "zero_sum",
        description: "per asset (and chain), the debits of all accounts equal their credits, posted and pending",
        violations: 1
      },
      {
        name: "no_negative_customer_account",
        description: "no wallet or virtual account has spent or reserved more than it was credited",
        violations: 1
      }
    ],
    violations: [
      {
        check: "totals_match_transfers",
        detail: "virtual_account/vac_6m193mqat5xf1gpmtz4fwr30/USD keeps debitsPosted 500000, creditsPosted 100100; its transfers sum to debitsPosted 0, creditsPosted 100000 (units)",
        accountId: "virtual_account/vac_6m193mqat5xf1gpmtz4fwr30/USD",
        asset: "USD"
      },
      {
        check: "no_negative_customer_account",
        detail: "virtual_account/vac_6m193mqat5xf1gpmtz4fwr30/USD has spent and reserved 525100 units against 100100 credited",
        accountId: "virtual_account/vac_6m193mqat5xf1gpmtz4fwr30/USD",
        asset: "USD"
      }
    ],
    violationCount: 5
  },
  LoggedEventList: {
    data: [
      {
        id: "evt_p1jsfcknet41m4m2gdwrywh7",
        type: "application.approved",
        createdAt: "2026-03-01T12:00:00.000Z",
        apiVersion: "2",
        mode: "sandbox",
        resourceId: "app_300hanxqwy9w9q0x029yza2r",
        data: {
          applicationId: "app_300hanxqwy9w9q0x029yza2r",
          applicationType: "customer_onboarding",
          customerId: "cus_2ttpdc60m5pnzdt78ej4gjfr",
          clientReferenceId: "customer-3",
          occurredAt: "2026-03-01T12:00:00.000Z"
        }
      },
      {
        id: "evt_y24gvkz6e6jzg7tamdspd271",
        type: "customer.created",
        createdAt: "2026-03-01T12:00:00.000Z",
        apiVersion: "2",
        mode: "sandbox",
        resourceId: "cus_2ttpdc60m5pnzdt78ej4gjfr",
        data: {
          customerId: "cus_2ttpdc60m5pnzdt78ej4gjfr",
          applicationId: "app_300hanxqwy9w9q0x029yza2r",
          clientReferenceId: "customer-3",
          occurredAt: "2026-03-01T12:00:00.000Z"
        }
      }
    ],
    meta: { mode: "cursor", nextCursor: null, previousCursor: null, total: 9 }
  },
  Me: {
    user: {
      id: "usr_acmeadmin",
      email: "admin@acme.example",
      role: "admin",
      emailVerified: true,
      createdAt: "2026-03-01T12:00:00.000Z"
    },
    organization: {
      id: "org_acme",
      name: "Organization acme",
      status: "active",
      features: [],
      createdAt: "2026-03-01T12:00:00.000Z"
    },
    apiKey: { access: "read_write", environment: "sandbox", last4: "7c41" }
  },
  OnboardingRequirements: {
    country: "GBR",
    legalStructures: [
      { value: "private_limited_company", label: "Private limited company (Ltd)" },
      { value: "public_limited_company", label: "Public limited company (plc)" }
    ],
    classifications: {
      primaryIndustry: [{ key: "payments", label: "Payments and money transmission" }, { key: "lending", label: "Lending" }]
    },
    business: {
      fields: [
        { pointer: "/businessInfo/legalName", description: "The registered legal name." },
        { pointer: "/businessInfo/registeredAddress", description: "The registered office address." }
      ],
      documents: [
        { type: "certificate_of_incorporation", description: "Certificate of incorporation." },
        { type: "shareholder_register", description: "The register of members or PSC register." }
      ]
    },
    persons: {
      ownerThresholdPercent: 25,
      minimumControllers: 1,
      fields: [{ pointer: "/firstName", description: "Given name." }, { pointer: "/lastName", description: "Family name." }],
      documents: [
        {
          slot: "identity",
          acceptedTypes: ["passport", "drivers_license"],
          description: "A current government-issued photo identity document."
        },
        {
          slot: "address",
          acceptedTypes: ["proof_of_address"],
          description: "A utility bill or bank statement from the last three months."
        }
      ]
    },
    individual: {
      fields: [{ pointer: "/firstName", description: "Given name." }, { pointer: "/lastName", description: "Family name." }],
      documents: [
        {
          slot: "identity",
          acceptedTypes: ["passport", "drivers_license"],
          description: "A current government-issued photo identity document."
        },
        {
          slot: "address",
          acceptedTypes: ["proof_of_address"],
          description: "A utility bill or bank statement from the last three months."
        }
      ]
    }
  },
  Order: {
    id: "ord_4kdrm11fr4x3qdgz6t9jzkpf",
    customerId: "cus_yp604zs36tth4xcf3d1mr9gn",
    status: "succeeded",
    direction: "offramp",
    source: {
      type: "wallet",
      walletId: "wlt_3mkx5c1wxggw9wgznrj3dmbv",
      assetAmount: { code: "USDC", amount: "40.000000", chain: "base" }
    },
    destination: {
      type: "virtual_account",
      virtualAccountId: "vac_he8m4fpy8qcx8vw2xrtd74wy",
      assetAmount: { code: "EUR", amount: "36.85" }
    },
    lockSide: "source",
    rate: "0.9212962962705",
    fees: [{ owner: "service", assetAmount: { code: "USDC", amount: "0.100000", chain: "base" }, invoiced: false }],
    totalDebit: { code: "USDC", amount: "40.100000", chain: "base" },
    lockExpiresAt: "2026-03-02T09:17:30.000Z",
    autoExecute: true,
    autoPayout: {
      rail: "sepa",
      purpose: "rent",
      documents: ["doc_3xc1a90d7kw7cp35djw545g8"],
      recipient: { name: "Erika Mustermann", country: "DEU", iban: "DE89370400440532013000" }
    },
    payoutTransactionId: "txn_vvryejv2wx31gf346kzbm3ve",
    transactionId: "txn_w9pgdredmq9bn9120peadsn7",
    createdAt: "2026-03-02T09:02:30.000Z",
    updatedAt: "2026-03-02T09:03:32.000Z"
  },
  // A Monday's call with afterHours: the pair's market opens again at the next Sunday 22:00 UTC.
  PairPricing: { sourceAsset: "USD", destinationAsset: "EUR", mid: "0.9215", spreadBps: 30, available: true, afterHoursUntil: "2026-03-08T22:00:00.000Z" },
  PayoutRequirements: {
    recipient: [
      {
        pointer: "/destination/address",
        required: true,
        description: "an address on base (or a registered address)"
      }
    ],
    purpose: { required: true, examples: ["invoice_payment", "supplier_payment"] },
    documents: { required: false, acceptedTypes: ["invoice", "contract"] },
    travelRule: {
      required: false,
      threshold: "1000.000000",
      fields: [
        { pointer: "/travelRule/beneficiaryName", required: true, description: "the beneficiary's full name" },
        {
          pointer: "/travelRule/beneficiaryCountry",
          required: true,
          description: "the beneficiary's country (ISO 3166-1 alpha-3)"
        }
      ]
    },
    fee: "0.500000"
  },
  PendingTimerList: {
    data: [
      {
        id: "tmr_00mm7p7ncw00000000002z",
        kind: "deposit.confirm",
        dueAt: "2026-03-01T12:00:32.000Z",
        resourceId: "txn_1dfkj3mg38znpj1xnj9qs5ht",
        action: "confirms deposit txn_1dfkj3mg38znpj1xnj9qs5ht (it starts processing)"
      },
      {
        id: "tmr_00mm7p7ncw00000000004x",
        kind: "payout.start",
        dueAt: "2026-03-01T12:00:32.000Z",
        resourceId: "txn_171rxfr2cr87eajzmqak7fva",
        action: "starts payout txn_171rxfr2cr87eajzmqak7fva (its screening ends: processing, or under_review)"
      }
    ],
    meta: { mode: "cursor", nextCursor: null, previousCursor: null, total: 8 }
  },
  PersonField: { referenceId: "ubo-1", field: "dateOfBirth", value: "1980-02-29" },
  Quote: {
    options: [
      {
        id: "qop_sqed0h8tk274pymrajhkf0b1",
        expiresAt: "2026-03-02T09:01:00.000Z",
        recipientType: "virtual_account",
        sourceAssetRef: { code: "USD" },
        destinationAssetRef: { code: "EUR" },
        lockSide: "source",
        rate: "0.9212962962705",
        sourceAmount: { code: "USD", amount: "10.00" },
        destinationAmount: { code: "EUR", amount: "9.21" },
        fees: [
          { owner: "service", assetAmount: { code: "USD", amount: "0.02" }, invoiced: false },
          { owner: "organization", assetAmount: { code: "USD", amount: "0.50" }, invoiced: false }
        ],
        totalDebit: { code: "USD", amount: "10.52" },
        markupBps: 20,
        markupAmount: "0.50"
      },
      {
        id: "qop_5akb3j823tqhvnxq8t8q4z5s",
        expiresAt: "2026-03-02T09:01:00.000Z",
        recipientType: "external_bank",
        sourceAssetRef: { code: "USD" },
        destinationAssetRef: { code: "EUR" },
        lockSide: "source",
        rate: "0.9212962962705",
        sourceAmount: { code: "USD", amount: "10.00" },
        destinationAmount: { code: "EUR", amount: "9.21" },
        fees: [
          { owner: "service", assetAmount: { code: "USD", amount: "0.02" }, invoiced: false },
          { owner: "organization", assetAmount: { code: "USD", amount: "0.50" }, invoiced: false }
        ],
        totalDebit: { code: "USD", amount: "10.52" },
        markupBps: 20,
        markupAmount: "0.50"
      }
    ],
    createdAt: "2026-03-02T09:00:00.000Z"
  },
  RegisteredAddress: {
    id: "rad_a212nyvdrgc8rkbq3cp7vz8d",
    customerId: "cus_t4czr785nt53nn80e9hn46td",
    chain: "base",
    address: "0x52908400098527886E0F7030069857D2E4169EE7",
    label: "cold storage",
    createdAt: "2026-03-01T12:00:00.000Z"
  },
  Rfi: {
    id: "rfi_e0kardhke0455q108vc0td60",
    customerId: "cus_szq61e37bpenjren1jvcqazn",
    transactionId: "txn_9fhgpswd76s0vahvh5y89606",
    status: "awaiting_response",
    questions: [
      { id: "q1", text: "What is the payment for?", kind: "text", askedAt: "2026-03-01T12:00:30.000Z" },
      { id: "q2", text: "Send the invoice", kind: "document", askedAt: "2026-03-01T12:01:30.000Z" }
    ],
    deadline: "2026-03-08T12:01:30.000Z",
    responses: [
      { submittedAt: "2026-03-01T12:01:30.000Z", answers: [{ questionId: "q1", text: "Invoice 42" }] },
      {
        submittedAt: "2026-03-01T12:01:30.000Z",
        answers: [{ questionId: "q1", documentIds: ["doc_9twm67vkmq8de1d3jnqh69h6"] }]
      }
    ],
    createdAt: "2026-03-01T12:00:30.000Z",
    updatedAt: "2026-03-01T12:01:30.000Z"
  },
  ListenerPoll: {
    requests: [
      {
        attemptId: "wda_01jd8x4m2q7rz5k3n9v6t0w1ym",
        deliveryId: "wdl_01jd8x4m2q7rz5k3n9v6t0w1yn",
        headers: {
          "content-type": "application/json",
          "webhook-id": "evt_01jd8x4m2q7rz5k3n9v6t0w1yp",
          "webhook-timestamp": "1772366400",
          "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        },
        body: "{\"id\":\"evt_01jd8x4m2q7rz5k3n9v6t0w1yp\",\"type\":\"customer.created\",\"createdAt\":\"2026-03-01T12:00:00.000Z\",\"apiVersion\":\"2\",\"mode\":\"sandbox\",\"data\":{\"customerId\":\"cus_01j9wq3m8d5k2t7v4x6z8b0c1e\"}}"
      }
    ]
  },
  ListenerReportResult: { recorded: true },
  OutcomeRule: {
    id: "otr_01jd8x4m2q7rz5k3n9v6t0w1yq",
    match: { type: "withdrawal", rail: "ach", clientReferenceId: "payout-2026-114" },
    outcome: { type: "return", returnCode: "R01", afterSeconds: 172800 },
    count: 1,
    remaining: 0,
    applied: 1,
    transactionIds: ["txn_01j9x4k2m7q8r3t5v6w8y0z2ab"],
    createdAt: "2026-03-01T12:00:00.000Z"
  },
  OutcomeRulesCleared: { removed: 2 },
  RecentRequest: {
    time: "2026-11-25T21:08:19.304Z",
    method: "GET",
    path: "/sandbox/v2/customers/cus_01j9wq3m8d5k2t7v4x6z8b0c1e",
    status: 404,
    type: "CUSTOMER_NOT_FOUND",
    durationMs: 1.532,
    correlationId: "f49e05556fc8bdb40000000000000001",
    clientAddress: "203.0.113.7",
    answeredBy: "9f2c41d07ab35e18",
    operationId: "customers.get"
  },
  ResourceActions: {
    resourceId: "txn_01j9x4k2m7q8r3t5v6w8y0z2ab",
    resourceType: "transaction",
    actions: [
      { name: "settleTransaction", method: "POST", path: "/v2/simulate/transactions/txn_01j9x4k2m7q8r3t5v6w8y0z2ab/settle", allowed: true },
      {
        name: "returnTransaction",
        method: "POST",
        path: "/v2/simulate/transactions/txn_01j9x4k2m7q8r3t5v6w8y0z2ab/return",
        allowed: false,
        reason: "TRANSACTION_NOT_RETURNABLE: only a completed transaction can be returned (status processing)."
      }
    ]
  },
  SandboxReset: {
    organizationId: "org_acme",
    environment: "sandbox",
    removed: sandboxTableCounts
  },
  SignerSession: {
    token: "fss.wsg_xkaqgn58q8kjn6vv6qh13e4g.org_acme.sandbox.1772367310000.5c257b8ac5ea3f6dae5f564b95e561c4d285992de2ee6fa483d40de9c767ecf6",
    walletSignerId: "wsg_xkaqgn58q8kjn6vv6qh13e4g",
    customerId: "cus_wddqgwctr1by5a0tms8ttmyg",
    expiresAt: "2026-03-01T12:15:10.000Z"
  },
  SignerSessionInfo: {
    signer: {
      id: "wsg_hda7wqf59xgtwz8zh5zp20d3",
      customerId: "cus_xr1rse87as0v0qp5hvxdqt06",
      claimId: "clm_j6kzrrxrwr67wmgyv12tjz82",
      role: "admin",
      credentialType: "passkey",
      status: "enrolled",
      passkeyCount: 2,
      email: "alice@acme.example",
      createdAt: "2026-03-01T12:00:00.000Z",
      updatedAt: "2026-03-01T12:00:00.000Z"
    },
    expiresAt: "2026-03-01T12:15:00.000Z"
  },
  SigningRequest: {
    id: "sr_pntmd1s07mzf2k57ydqbfh18",
    transactionId: "txn_attwc6as8w4ne97wt8ekayce",
    customerId: "cus_63dyjw723ssm6n834bjmgfyz",
    walletId: "wlt_vmwtqj8ttsnsdgksk5ppn28k",
    signingMode: "programmatic",
    attempt: 1,
    status: "approved",
    collected: 2,
    required: 2,
    signedBy: ["wsg_6gkvf3yzgns4qrbex1exw9fy", "wsg_qyj7j0x1t8k4be55brzczp03"],
    transfer: {
      source: {
        type: "wallet",
        walletId: "wlt_vmwtqj8ttsnsdgksk5ppn28k",
        assetAmount: { code: "USDC", amount: "100.500000", chain: "base" }
      },
      destination: {
        type: "external_crypto",
        address: "0x52908400098527886E0F7030069857D2E4169EE7",
        txHash: "0x10d9ecf56a18534098453ce18e909101095191fe7e5ede6c7c8615a9c8242cec",
        assetAmount: { code: "USDC", amount: "100.000000", chain: "base" }
      }
    },
    expiresAt: "2026-03-02T12:15:34.000Z",
    createdAt: "2026-03-02T12:00:34.000Z"
  },
  SnapshotFile: snapshotFileExample,
  Snapshot: {
    id: "snp_01JD8X4M2Q7RZ5K3N9V6T0W1YM",
    organizationId: "org_acme",
    environment: "sandbox",
    createdAt: "2026-03-01T12:00:00.000Z",
    rows: 42,
    contents: sandboxTableCounts
  },
  Fork: {
    organizationId: "org_4xkq2m7r9v3t5w8y0z2b6n1pcd",
    parentOrganizationId: "org_acme",
    snapshotId: "snp_01jd8x4m2q7rz5k3n9v6t0w1ym",
    environment: "sandbox",
    apiKey: "ck_sandbox_3f9a1c7e5b2d8f4a6c0e9b7d5f3a1c8e6b4d2f0a9c7e5b3d1f8a6c4e2b0d9f7a",
    ids: {
      cus_01jd8x4m2q7rz5k3n9v6t0w1yp: "cus_8w2k5n9q3t7v1y4b6d0f2h5jmx",
      evt_01jd8x4m2q7rz5k3n9v6t0w1yq: "evt_2n6q9t3w7y1b5d8f0h4k6m9pry",
      wep_01jd8x4m2q7rz5k3n9v6t0w1yn: "wep_5r8t2w6y9b3d7f1h4k8m0p3sqz",
      wlt_01jd8x4m2q7rz5k3n9v6t0w1yr: "wlt_7t1w5y8b2d6f9h3k7m1p4s8vna"
    },
    createdAt: "2026-03-01T12:00:35.000Z"
  },
  ForkSummary: {
    organizationId: "org_4xkq2m7r9v3t5w8y0z2b6n1pcd",
    parentOrganizationId: "org_acme",
    snapshotId: "snp_01jd8x4m2q7rz5k3n9v6t0w1ym",
    environment: "sandbox",
    createdAt: "2026-03-01T12:00:35.000Z"
  },
  Timeline: {
    resourceId: "txn_01j9x4k2m7q8r3t5v6w8y0z2ab",
    resourceType: "transaction",
    transactionType: "withdrawal",
    status: "processing",
    entries: [
      {
        at: "2026-03-01T12:00:00.000Z",
        sequence: 411,
        summary: "created as pending by POST /v2/payouts",
        kind: "state",
        to: "pending",
        cause: { type: "request", method: "POST", path: "/sandbox/v2/payouts", correlationId: "f49e05556fc8bdb40000000000000002" }
      },
      {
        at: "2026-03-01T12:00:00.000Z",
        sequence: 412,
        summary: "250.00 USD held pending",
        kind: "transfer",
        transferId: "txn_01j9x4k2m7q8r3t5v6w8y0z2ab/payout",
        state: "pending",
        bookedAs: "pending",
        amount: "250.00",
        asset: "USD",
        accountId: "virtual_account/vac_8yqd7j2d1kyhbq9xvncac1ye/USD",
        debitAccountId: "virtual_account/vac_8yqd7j2d1kyhbq9xvncac1ye/USD",
        creditAccountId: "world/rail:ach/USD#17",
        code: "withdrawal"
      },
      {
        at: "2026-03-01T12:00:30.000Z",
        sequence: 420,
        summary: "pending to processing, by the payout.start timer",
        kind: "state",
        from: "pending",
        to: "processing",
        cause: { type: "timer", kind: "payout.start", timerId: "tmr_01jd8x4m2q7rz5k3n9v6t0w1yr" }
      },
      {
        at: "2026-03-01T12:00:30.000Z",
        sequence: 421,
        summary: "transaction.processing emitted",
        kind: "event",
        eventId: "evt_01jd8x4m2q7rz5k3n9v6t0w1ys",
        eventType: "transaction.processing",
        resourceSequence: 2
      }
    ],
    truncated: false,
    waitingFor: {
      description: "the engine: at 2026-03-02T14:00:00.000Z it settles payout txn_01j9x4k2m7q8r3t5v6w8y0z2ab on ach (it completes)",
      at: "2026-03-02T14:00:00.000Z",
      timerId: "tmr_01jd8x4m2q7rz5k3n9v6t0w1yt",
      timerKind: "payout.settle"
    }
  },
  Transaction: {
    id: "txn_hsr4veqxxz0rhc1rsytne21t",
    type: "withdrawal",
    status: "completed",
    customerId: "cus_kvg0ysgdqqyfx8kzvq2xcrqg",
    linkedOrderId: "ord_wtwax7rhrmc9fmmfkbvxgw03",
    source: {
      type: "wallet",
      walletId: "wlt_asye91va9dddks1raf1m3f6g",
      assetAmount: { code: "USDC", amount: "99.500000", chain: "base" }
    },
    destination: {
      type: "external_crypto",
      address: "0x52908400098527886E0F7030069857D2E4169EE7",
      txHash: "0x5359c0604687169e190d370b2809a59226481b5de4741368c90d351d26978bc2",
      assetAmount: { code: "USDC", amount: "97.500000", chain: "base" }
    },
    fees: [
      { owner: "network", assetAmount: { code: "USDC", amount: "0.500000", chain: "base" }, invoiced: false },
      { owner: "organization", assetAmount: { code: "USDC", amount: "1.500000", chain: "base" }, invoiced: false }
    ],
    hasRfi: false,
    createdAt: "2026-03-02T09:03:32.000Z",
    updatedAt: "2026-03-02T09:04:36.000Z"
  },
  VirtualAccount: {
    id: "vac_fyjkbv1ryj6zj9bq7tnjrzge",
    customerId: "cus_jrsc078t4qz5p803ma685eq7",
    applicationId: "app_kw1k0cm7bhbj24js6m7j8e35",
    asset: { code: "USD" },
    status: "active",
    depositInstructions: [
      {
        railFamily: "us_domestic",
        currency: "USD",
        bankName: "fos Sandbox Bank",
        accountHolderName: "Acme GmbH",
        accountNumber: "187097665327",
        routingNumber: "244326854"
      },
      {
        railFamily: "swift",
        currency: "USD",
        bankName: "fos Sandbox Bank",
        accountHolderName: "Acme GmbH",
        accountNumber: "312414956837",
        bic: "FOSBUS33"
      }
    ],
    balances: [{ code: "USD", available: "4558.00", pending: "442.00" }],
    activatedAt: "2026-03-01T12:00:30.000Z",
    createdAt: "2026-03-01T12:00:00.000Z",
    updatedAt: "2026-03-01T12:00:30.000Z"
  },
  Wallet: {
    id: "wlt_af31ejbvc2wvfhpef6cgysjg",
    customerId: "cus_a138z5r6sa195nmyvdsga41e",
    chain: "base",
    custody: "custodial",
    status: "active",
    address: "0x5fD31dC1dDA37bd5257697dB7066D6BF273360Fa",
    balances: [
      { code: "ETH", chain: "base", available: "0.250000000000000000", pending: "0.000000000000000000" },
      { code: "USDC", chain: "base", available: "250.500000", pending: "0.000000" }
    ],
    createdAt: "2026-03-01T12:00:00.000Z",
    updatedAt: "2026-03-01T12:00:00.000Z"
  },
  WalletCeremony: {
    id: "cer_zhrhtnzrqwp5dgmejff0y9x2",
    customerId: "cus_cctmghd2gargqtdswr00wem8",
    walletSignerId: "wsg_mnz6cc2h212mep6p4gpsqpvj",
    type: "signer_promotion",
    status: "awaiting_admin_approval",
    adminVerificationUrl: "https://sign.fos.dev/approvals/cer_zhrhtnzrqwp5dgmejff0y9x2/aba3f013adc4139c05fb3cfa905bcc7f",
    expiresAt: "2026-03-02T12:00:30.000Z",
    createdAt: "2026-03-01T12:00:30.000Z",
    updatedAt: "2026-03-01T12:00:30.000Z"
  },
  WalletSigner: {
    id: "wsg_xtynwkqjcez0402jzw8wazed",
    customerId: "cus_9jgr4g55wv7cd8vp5pr56ddc",
    claimId: "clm_9e66xc9y0cj9cda3se14d8tk",
    role: "signer",
    credentialType: "passkey",
    status: "enrolled",
    passkeyCount: 1,
    email: "carol@acme.example",
    createdAt: "2026-03-02T12:00:00.000Z",
    updatedAt: "2026-03-02T12:00:00.000Z"
  },
  WebhookDelivery: {
    id: "wdl_68fw7gdvz7jrwtw4m3he3j6d",
    endpointId: "wep_3pxkggkrfawfj2s417zapbwj",
    eventId: "evt_48bvxw92w0f4g6zgr2sgx3at",
    eventType: "customer.created",
    status: "pending",
    attempts: 0,
    run: 2,
    nextAttemptAt: "2026-03-01T14:00:00.000Z",
    lastAttemptAt: "2026-03-01T13:17:30.000Z",
    createdAt: "2026-03-01T12:00:00.000Z",
    updatedAt: "2026-03-01T14:00:00.000Z"
  },
  WebhookDeliveryDetail: {
    id: "wdl_68fw7gdvz7jrwtw4m3he3j6d",
    endpointId: "wep_3pxkggkrfawfj2s417zapbwj",
    eventId: "evt_48bvxw92w0f4g6zgr2sgx3at",
    eventType: "customer.created",
    status: "succeeded",
    attempts: 1,
    run: 2,
    lastAttemptAt: "2026-03-01T14:00:00.000Z",
    createdAt: "2026-03-01T12:00:00.000Z",
    updatedAt: "2026-03-01T14:00:00.000Z",
    attemptList: [
      {
        id: "wda_gwt1thsh9jvd0taaxfc4a34p",
        run: 1,
        number: 1,
        startedAt: "2026-03-01T12:00:00.000Z",
        responseStatus: 503,
        latencyMs: 2,
        error: "answered 503"
      },
      {
        id: "wda_3mkpak4qv27fmvgkxpbkxmwy",
        run: 1,
        number: 2,
        startedAt: "2026-03-01T12:00:30.000Z",
        responseStatus: 503,
        latencyMs: 0,
        error: "answered 503"
      }
    ]
  },
  WebhookEndpoint: {
    id: "wep_ejv76sfm2j3grg0rgj421gw4",
    url: "https://hooks.acme.test/fos",
    subscription: { mode: "selected", eventTypes: ["transaction.created", "transaction.processing"] },
    status: "active",
    createdAt: "2026-06-01T09:00:00.000Z",
    updatedAt: "2026-06-01T09:00:00.000Z",
    secret: "whsec_cea691dc6ecbec5111d7308f793331a448d250acee109d0a077de8e62690c23c",
    signature: signatureScheme
  },
  WebhookFlush: {
    deliveries: [
      {
        id: "wdl_68fw7gdvz7jrwtw4m3he3j6d",
        endpointId: "wep_3pxkggkrfawfj2s417zapbwj",
        eventId: "evt_48bvxw92w0f4g6zgr2sgx3at",
        eventType: "customer.created",
        status: "pending",
        attempts: 0,
        run: 2,
        nextAttemptAt: "2026-03-01T14:00:00.000Z",
        lastAttemptAt: "2026-03-01T13:17:30.000Z",
        createdAt: "2026-03-01T12:00:00.000Z",
        updatedAt: "2026-03-01T14:00:00.000Z"
      }
    ],
    complete: true
  },
  WhitelistRecipient: {
    id: "wlr_0cdjxhp4f711c57kqwtgdyqx",
    customerId: "cus_6hswcwe330b3rqqp6ye9kyw3",
    rail: "ach",
    name: "Ada Lovelace",
    address: { line1: "1 Main St", city: "New York", state: "NY", postalCode: "10001", country: "USA" },
    accountNumberLast4: "6789",
    routingNumber: "021000021",
    accountType: "checking",
    clientReferenceId: "ada-checking",
    createdAt: "2026-03-01T12:00:00.000Z"
  }
}

/** The example of a success response that is not a resource or a page of one, by operation id. */
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
        body: JSON.stringify({
          id: "evt_01JD8X4M2Q7RZ5K3N9V6T0W1YM",
          type: "transaction.completed",
          createdAt: "2026-03-01T12:00:00.000Z",
          apiVersion: "2",
          mode: "sandbox",
          data: { transactionId: "txn_01JD8X4M2Q7RZ5K3N9V6T0W1YN", status: "completed" }
        })
      },
      response: { status: 503, latencyMs: 41, error: "answered 503" }
    }],
    meta: { mode: "cursor", nextCursor: null, previousCursor: null, total: 1 }
  },
  "simulate.restrictOrganization": { organizationId: "org_acme", restricted: true },
  "simulate.unrestrictOrganization": { organizationId: "org_acme", restricted: false },
  "webhooks.eventTypes": {
    data: [
      {
        type: "order.succeeded",
        deprecated: false,
        example: {
          id: "evt_example",
          type: "order.succeeded",
          createdAt: "2026-01-01T00:00:00.000Z",
          apiVersion: "2",
          mode: "sandbox",
          data: {
            orderId: "ord_01j9x3f7h2k5m8p1r4t6v9x0yz",
            customerId: "cus_01j9wq3m8d5k2t7v4x6z8b0c1e",
            clientReferenceId: "order-4411",
            transactionId: "txn_01j9x4k2m7q8r3t5v6w8y0z2ab",
            txHash: "0x3a1b2c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809",
            succeededAt: "2026-03-01T12:00:00.000Z",
            occurredAt: "2026-03-01T12:00:00.000Z"
          }
        }
      },
      {
        type: "transaction.completed",
        deprecated: false,
        example: {
          id: "evt_example",
          type: "transaction.completed",
          createdAt: "2026-01-01T00:00:00.000Z",
          apiVersion: "2",
          mode: "sandbox",
          data: {
            transactionId: "txn_01j9x4k2m7q8r3t5v6w8y0z2ab",
            customerId: "cus_01j9wq3m8d5k2t7v4x6z8b0c1e",
            type: "offramp",
            source: {
              type: "wallet",
              walletId: "wlt_01j9w8a2c4e6g8j0l2n4q6s8u0",
              assetAmount: { code: "USDC", amount: "250.000000", chain: "base" }
            },
            destination: { type: "external_bank", assetAmount: { code: "USD", amount: "248.75" } },
            linkedOrderId: "ord_01j9x3f7h2k5m8p1r4t6v9x0yz",
            sequence: 3,
            fees: [
              { owner: "service", assetAmount: { code: "USD", amount: "1.25" }, invoiced: false },
              { owner: "organization", assetAmount: { code: "USD", amount: "0.50" }, invoiced: true }
            ],
            payout: { rail: null },
            completedAt: "2026-03-01T12:00:00.000Z",
            occurredAt: "2026-03-01T12:00:00.000Z"
          }
        }
      }
    ],
    meta: { mode: "cursor", nextCursor: null, previousCursor: null, total: 48 }
  }
}

/** A first page of a list whose one item is `item`, as a list response carries it. */
export const listExample = (item: unknown) => ({ data: [item], meta: { mode: "cursor", nextCursor: null, previousCursor: null, total: 1 } })
