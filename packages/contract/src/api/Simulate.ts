import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { EventType } from "../events/Events.ts"
import { CustomerId, OrderId, OrganizationId, RfiId, SnapshotId, TransactionId, WalletId, WalletSignerId } from "../kernel/Ids.ts"
import { listOf, listQuery } from "../kernel/Lists.ts"
import { Wallet } from "../money/Wallets.ts"
import { Order, OrderFailure, PairPricing, RateChange } from "../money/Orders.ts"
import { Rfi, RfiPublish, RfiReview } from "../money/Rfis.ts"
import { Transaction } from "../money/Transactions.ts"
import { Application } from "../onboarding/Applications.ts"
import { Customer } from "../onboarding/Customers.ts"
import {
  ApplicationDecision,
  ClockAdvance,
  ClockAdvanced,
  ClockNow,
  CustomerRestriction,
  LateComplianceResult,
  OrganizationRestriction,
  SimulatedDeposit,
  SimulatedUnsupportedDeposit,
  TransactionReturn,
  TransactionReview,
  TransactionTerminal,
  SandboxReset,
  WebhookFlush,
  Snapshot,
  SnapshotFile,
  SnapshotQuery,
  maxSnapshotFileBytes,
  Fork,
  ForkQuery,
  ForkSummary
} from "../simulate/Simulate.ts"
import { maxForksPerOrganization } from "../simulate/Limits.ts"
import { Event } from "../webhooks/Webhooks.ts"
import {
  AdminApproval,
  CeremonyId,
  ClaimId,
  ClaimState,
  SignerHeaders,
  SignerSession,
  SimulatedCeremonyDecision,
  SimulatedEnrollment,
  SimulatedOriginChange,
  SimulatedProvisioning,
  SimulatedSignature,
  SimulatedSignerLogin,
  WalletCeremony,
  WalletSigner
} from "../signing/Signers.ts"
import { applicationParams } from "./Applications.ts"
import { Attachment, common, DecodedByEngine, Idempotency, KeepsTimers, MaxBodyBytes, OpenWhenRestricted, OutsideTransaction, problem, SandboxOnly, withBody } from "./Policies.ts"
import { documented, ErrorCodes } from "./OpenApiDocument.ts"

const transactionParams = { id: TransactionId }

/** The sandbox's simulate endpoints (served under /sandbox only). */
export const Simulate = HttpApiGroup.make("simulate")
  .add(HttpApiEndpoint.post("emitEvent", "/v2/simulate/events", {
    payload: Schema.Struct({ type: EventType }),
    success: Event.pipe(HttpApiSchema.status(201)),
    error: withBody
  }).annotateMerge(documented("Send a sample event", "Records an event of the given type with the catalog's example payload and delivers it to subscribed endpoints, to test a webhook consumer.")))
  .add(HttpApiEndpoint.get("clock", "/v2/simulate/clock", { success: ClockNow, error: common }).annotateMerge(documented("Read the sandbox clock", "Reads the sandbox's virtual time, which drives every deadline and timer.")))
  .add(HttpApiEndpoint.post("decideApplication", "/v2/simulate/applications/:id/decision", {
    params: applicationParams,
    payload: ApplicationDecision,
    success: Application,
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Decide an application", "Approves or rejects an application under review, as compliance would.")))
  .add(HttpApiEndpoint.post("complianceResult", "/v2/simulate/applications/:id/compliance-result", {
    params: applicationParams,
    payload: LateComplianceResult,
    success: Application,
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Send a late compliance result", "Delivers a compliance result that arrives after the application was decided.")))
  .add(HttpApiEndpoint.post("restrictCustomer", "/v2/simulate/customers/:customerId/restrict", {
    params: { customerId: CustomerId },
    payload: CustomerRestriction,
    success: Customer,
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Restrict a customer", "Restricts a customer as ops would; it emits customer.restricted.")))
  .add(HttpApiEndpoint.post("restrictOrganization", "/v2/simulate/organization/restrict", {
    success: OrganizationRestriction,
    error: withBody
  }).annotateMerge(documented("Restrict the organization", "Restricts the calling organization as ops would: writes other than the open ones answer 403 ORGANIZATION_ACCESS_SUSPENDED.")))
  .add(HttpApiEndpoint.post("deposit", "/v2/simulate/deposits", {
    payload: SimulatedDeposit,
    success: Transaction.pipe(HttpApiSchema.status(201)),
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Simulate a deposit", "Credits a wallet or virtual account with an incoming deposit, as a transaction that then runs its course.")))
  .add(HttpApiEndpoint.post("confirmTransaction", "/v2/simulate/transactions/:id/confirm", {
    params: transactionParams,
    success: Transaction,
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Confirm a transaction", "Moves a transaction to processing, as the provider's confirmation would.")))
  .add(HttpApiEndpoint.post("settleTransaction", "/v2/simulate/transactions/:id/settle", {
    params: transactionParams,
    success: Transaction,
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Settle a transaction", "Completes a processing transaction, as its settlement would.")))
  .add(HttpApiEndpoint.post("endTransaction", "/v2/simulate/transactions/:id/terminal", {
    params: transactionParams,
    payload: TransactionTerminal,
    success: Transaction,
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("End a transaction", "Forces a transaction to a terminal outcome (failed, cancelled or rejected) viable in its current phase.")))
  .add(HttpApiEndpoint.post("reviewTransaction", "/v2/simulate/transactions/:id/review", {
    params: transactionParams,
    payload: TransactionReview,
    success: Transaction,
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Put a transaction under review", "Holds a transaction under compliance review.")))
  .add(HttpApiEndpoint.post("setRate", "/v2/simulate/rates", {
    payload: RateChange,
    success: PairPricing,
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Set a rate", "Sets the rate the sandbox quotes for an asset pair, makes it unavailable, or closes its market after hours until the next opening.")))
  .add(HttpApiEndpoint.post("failOrder", "/v2/simulate/orders/:orderId/fail", {
    params: { orderId: OrderId },
    payload: OrderFailure,
    success: Order,
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Fail an order", "Fails an executing order with one of the spec's reason codes.")))
  .add(HttpApiEndpoint.post("returnTransaction", "/v2/simulate/transactions/:id/return", {
    params: transactionParams,
    payload: TransactionReturn,
    success: Transaction,
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Return a transaction", "Returns a completed deposit to its sender.")))
  .add(HttpApiEndpoint.post("publishRfi", "/v2/simulate/transactions/:id/rfi", {
    params: transactionParams,
    payload: RfiPublish,
    success: Rfi.pipe(HttpApiSchema.status(201)),
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Raise a request for information", "Raises a request for information on a transaction, as compliance would.")))
  .add(HttpApiEndpoint.post("reviewRfi", "/v2/simulate/rfis/:id", {
    params: { id: RfiId },
    payload: RfiReview,
    success: Rfi,
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Review a request for information", "Resolves, asks for more, extends or cancels a request for information, as compliance would.")))
  .add(HttpApiEndpoint.post("unrestrictOrganization", "/v2/simulate/organization/unrestrict", {
    success: OrganizationRestriction,
    error: withBody
  }).annotateMerge(documented("Lift the organization's restriction", "Lifts a restriction set by restrictOrganization.")))
  .add(HttpApiEndpoint.post("reset", "/v2/simulate/reset", {
    success: SandboxReset,
    error: withBody
  }).annotateMerge(documented("Reset the sandbox", "Deletes everything the organization created in the sandbox and answers what was removed.")))
  // Snapshots of the caller's whole sandbox, restored in one transaction (docs/snapshots.md).
  .add(HttpApiEndpoint.post("createSnapshot", "/v2/simulate/snapshots", {
    query: SnapshotQuery,
    success: Snapshot.pipe(HttpApiSchema.status(201)),
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Save a snapshot", "Saves the caller's whole sandbox (everything a reset removes, plus the ledger, the timers and the sandbox's clock) and answers its id. At most 20 per organization. `label` (1 to 200 characters) is carried with the snapshot, listed and exported with it, and never read by fos.")))
  .add(HttpApiEndpoint.get("listSnapshots", "/v2/simulate/snapshots", {
    query: listQuery(["createdAt"] as const),
    success: listOf(Snapshot),
    error: common
  }).annotateMerge(documented("List snapshots", "Lists the organization's sandbox snapshots, newest first.")))
  .add(HttpApiEndpoint.get("getSnapshot", "/v2/simulate/snapshots/:id", { params: { id: SnapshotId }, success: Snapshot, error: common }).annotateMerge(documented("Get a snapshot", "Reads one snapshot: when it was taken and what it holds.")))
  .add(HttpApiEndpoint.post("restoreSnapshot", "/v2/simulate/snapshots/:id/restore", {
    params: { id: SnapshotId },
    success: Snapshot,
    error: withBody
  }).annotateMerge(documented("Restore a snapshot", "Puts the sandbox back as the snapshot saved it, in one transaction: every row, the ledger, the timers and the clock. Timers it restores fire at the next advance, not in the restore's own answer.")).annotate(KeepsTimers, true))
  .add(HttpApiEndpoint.delete("deleteSnapshot", "/v2/simulate/snapshots/:id", { params: { id: SnapshotId }, error: common }).annotateMerge(documented("Delete a snapshot", "Deletes a snapshot; the sandbox is unchanged.")))
  // A snapshot as a file, and a file as a snapshot (docs/snapshots.md, "Files").
  .add(HttpApiEndpoint.get("exportSnapshot", "/v2/simulate/snapshots/:id/export", { params: { id: SnapshotId }, success: SnapshotFile, error: [...common, problem(422)] })
    .annotateMerge(documented("Export a snapshot", "Answers the snapshot as one file (`SnapshotFile`, JSON, as an attachment): its format and version, the fos version that wrote it, and every row it holds, in an order that makes the same world the same bytes. Import it into any fos of the same major version."))
    .annotate(Attachment, (params) => `${String(params.id)}.fos-snapshot.json`))
  .add(HttpApiEndpoint.post("importSnapshot", "/v2/simulate/snapshots/import", {
    query: SnapshotQuery,
    payload: SnapshotFile,
    success: Snapshot.pipe(HttpApiSchema.status(201)),
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Import a snapshot", "Makes a snapshot of the caller's sandbox from a file an export answered, on this fos or another of the same major version; restore it to put its world in place. The file's organization becomes the caller's. The file is checked whole before anything is written: a file of another format is 400, of a newer format version or another major version of fos 422, one whose ids are taken by another organization's rows 409. `label` (1 to 200 characters) is carried with the snapshot and listed with it, as a save's, and never read by fos; its export writes the file's own snapshot again.")).annotate(MaxBodyBytes, maxSnapshotFileBytes).annotate(DecodedByEngine, true).annotate(OutsideTransaction, true))
  // Forks: a snapshot's world in a new organization of its own, one per parallel test worker (docs/snapshots.md, "Forks").
  .add(HttpApiEndpoint.post("createFork", "/v2/simulate/snapshots/:id/fork", {
    params: { id: SnapshotId },
    query: ForkQuery,
    success: Fork.pipe(HttpApiSchema.status(201)),
    error: withBody
  }).annotateMerge(documented("Fork a snapshot", `Makes a new organization whose sandbox holds the snapshot's world, with its own clock (at the snapshot's time) and its own seeded stream, and answers its id, a read-write sandbox key (shown once) and the map of every id of the world to the fork's. The caller's sandbox and the snapshot are unchanged. \`stream\` (1 to 500 characters, such as a test file's path) names the fork's seeded streams: on a seeded engine its organization, key and ids then follow from the seed, the caller's organization and the name alone. Refused in this order: a snapshot that is not the organization's 404, an organization holding ${maxForksPerOrganization} forks already 409, a stream whose fork exists 409.`)))
  .add(HttpApiEndpoint.get("listForks", "/v2/simulate/forks", {
    success: listOf(ForkSummary),
    error: common
  }).annotateMerge(documented("List forks", `Lists the organization's forks, oldest first (at most ${maxForksPerOrganization}).`)))
  .add(HttpApiEndpoint.delete("deleteFork", "/v2/simulate/forks/:organizationId", { params: { organizationId: OrganizationId }, error: common })
    .annotateMerge(documented("Delete a fork", "Deletes a fork of the organization with everything in it: its sandbox, its snapshots, its keys and its user. The organization's own sandbox and its other forks are unchanged.")))
  .add(
    HttpApiEndpoint.post("advanceClock", "/v2/simulate/clock/advance", {
      payload: ClockAdvance,
      success: ClockAdvanced,
      error: withBody
    }).annotateMerge(documented("Advance the sandbox clock", "Moves the sandbox's virtual time forward, firing every timer that falls due and sending its webhooks.")).annotate(Idempotency, "accepted").annotate(OutsideTransaction, true)
  )
  // Waits, within the receiver limit, until every delivery of the caller's due or in flight has had its attempt.
  .add(
    HttpApiEndpoint.post("flushWebhooks", "/v2/simulate/webhooks/flush", {
      success: WebhookFlush,
      error: withBody
    }).annotateMerge(documented("Wait for webhook deliveries", "Waits, within the 5-second receiver limit plus a second, until every delivery of the caller's that is in flight or due has had its attempt recorded; answers those deliveries and whether the wait completed. Sends run in the background, so this is how a test knows what its receivers got.")).annotate(OutsideTransaction, true)
  )
  // Non-custodial wallets' outside actors: the wallet provider, the end user, the roster's admins, ops.
  .add(HttpApiEndpoint.post("provisionClaim", "/v2/simulate/claims/:claimId/provisioning", {
    params: { claimId: ClaimId },
    payload: SimulatedProvisioning,
    success: ClaimState,
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Provision a claim", "Completes or fails a wallet claim's provisioning, as the signing provider would.")))
  .add(HttpApiEndpoint.post("enrollSigner", "/v2/simulate/wallet-signers/:signerId/enroll", {
    params: { signerId: WalletSignerId },
    payload: SimulatedEnrollment,
    success: WalletSigner,
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Enroll a signer", "Completes a wallet signer's enrollment, as the signer's device would.")))
  .add(HttpApiEndpoint.post("addPasskey", "/v2/simulate/wallet-signers/:signerId/passkeys", {
    params: { signerId: WalletSignerId },
    success: AdminApproval.pipe(HttpApiSchema.status(201)),
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Add a passkey", "Registers another passkey for a wallet signer.")))
  .add(HttpApiEndpoint.post("signerLogin", "/v2/simulate/wallet-signers/:signerId/sessions", {
    params: { signerId: WalletSignerId },
    payload: SimulatedSignerLogin,
    success: SignerSession.pipe(HttpApiSchema.status(201)),
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Log a signer in", "Issues a signer session token for a wallet signer, as a passkey login would.")))
  .add(HttpApiEndpoint.post("removeSigner", "/v2/simulate/wallet-signers/:signerId/remove", {
    params: { signerId: WalletSignerId },
    success: WalletSigner,
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Remove a signer", "Removes a wallet signer from its wallet.")))
  .add(HttpApiEndpoint.post("decideCeremony", "/v2/simulate/wallet-ceremonies/:ceremonyId/decision", {
    params: { ceremonyId: CeremonyId },
    headers: SignerHeaders,
    payload: SimulatedCeremonyDecision,
    success: WalletCeremony,
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Decide a ceremony", "Approves or declines a wallet ceremony awaiting an admin, as the admin would: a signer's (by an admin of its roster) or a roster's webauthn_origin_change (by an admin of that roster).")))
  // A passkey signer (by its session) stamps or declines a transfer at its verificationUrl.
  .add(HttpApiEndpoint.post("signTransaction", "/v2/simulate/transactions/:id/signatures", {
    params: transactionParams,
    headers: SignerHeaders,
    payload: SimulatedSignature,
    success: Transaction,
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Sign a transaction", "Adds a signer's signature to a transaction awaiting signatures.")))
  // The receive policy holds a broadcast crypto payout from a non-custodial wallet: its roster signs the recovery.
  .add(HttpApiEndpoint.post("holdByReceivePolicy", "/v2/simulate/transactions/:id/receive-policy", {
    params: transactionParams,
    success: Transaction,
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Hold a deposit by receive policy", "Holds an incoming transaction awaiting the sender's information, as a receive policy would.")))
  // A coin the wallet does not support arrives: it goes back to its sender (signed by a non-custodial wallet's roster).
  .add(HttpApiEndpoint.post("unsupportedDeposit", "/v2/simulate/wallets/:walletId/unsupported-deposits", {
    params: { walletId: WalletId },
    payload: SimulatedUnsupportedDeposit,
    success: Transaction.pipe(HttpApiSchema.status(201)),
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Simulate an unsupported deposit", "Sends a wallet a coin it does not support, which fos returns to the sender.")))
  // The wallet provider reports that a non-custodial wallet's signing configuration blocks movement: it freezes.
  .add(HttpApiEndpoint.post("misconfigureWallet", "/v2/simulate/wallets/:walletId/misconfigure", {
    params: { walletId: WalletId },
    success: Wallet,
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Misconfigure a wallet", "Breaks a wallet's configuration, to test how transfers from it fail.")))
  // With the custom_domains feature, the customer moves a non-custodial wallet's roster to its custom domain.
  .add(HttpApiEndpoint.post("startOriginChange", "/v2/simulate/wallets/:walletId/webauthn-origin-change", {
    params: { walletId: WalletId },
    payload: SimulatedOriginChange,
    success: WalletCeremony.pipe(HttpApiSchema.status(201)),
    error: [...withBody, problem(422)]
  }).annotate(ErrorCodes, ["FEATURE_NOT_ENABLED", "WALLET_NOT_FOUND", "CONFLICT", "UNPROCESSABLE_ENTITY"]).annotateMerge(documented(
    "Start a WebAuthn origin change",
    "Starts the roster-wide webauthn_origin_change ceremony of a non-custodial wallet's roster: its passkeys are to sign for the organization's custom domain (`origin`). It waits for an admin of the roster (wallet_ceremony.awaiting_admin_approval, with no walletSignerId), who decides it with the ceremony decision call. Only an organization with the `custom_domains` feature may start one (403 FEATURE_NOT_ENABLED otherwise); a custodial wallet, or a roster with no admin that can act, is 422; a roster with one already waiting is 409 CONFLICT."
  )))
  // The sandbox's outside actors and clock act on a restricted organization too (lifting the restriction among them).
  .annotate(OpenWhenRestricted, true)
  // Simulation is the sandbox's alone: there is no /live/v2/simulate.
  .annotate(SandboxOnly, true)
