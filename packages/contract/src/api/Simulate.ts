import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { EventType } from "../events/Events.ts"
import { CustomerId, OrderId, RfiId, SnapshotId, TransactionId, WalletId, WalletSignerId } from "../kernel/Ids.ts"
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
  Snapshot
} from "../simulate/Simulate.ts"
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
  SimulatedProvisioning,
  SimulatedSignature,
  SimulatedSignerLogin,
  WalletCeremony,
  WalletSigner
} from "../signing/Signers.ts"
import { applicationParams } from "./Applications.ts"
import { common, Idempotency, KeepsTimers, OpenWhenRestricted, OutsideTransaction, problem, SandboxOnly, withBody } from "./Policies.ts"

const transactionParams = { id: TransactionId }

/** The sandbox's simulate endpoints (served under /sandbox only). */
export const Simulate = HttpApiGroup.make("simulate")
  .add(HttpApiEndpoint.post("emitEvent", "/v2/simulate/events", {
    payload: Schema.Struct({ type: EventType }),
    success: Event.pipe(HttpApiSchema.status(201)),
    error: withBody
  }))
  .add(HttpApiEndpoint.get("clock", "/v2/simulate/clock", { success: ClockNow, error: common }))
  .add(HttpApiEndpoint.post("decideApplication", "/v2/simulate/applications/:id/decision", {
    params: applicationParams,
    payload: ApplicationDecision,
    success: Application,
    error: [...withBody, problem(422)]
  }))
  .add(HttpApiEndpoint.post("complianceResult", "/v2/simulate/applications/:id/compliance-result", {
    params: applicationParams,
    payload: LateComplianceResult,
    success: Application,
    error: [...withBody, problem(422)]
  }))
  .add(HttpApiEndpoint.post("restrictCustomer", "/v2/simulate/customers/:customerId/restrict", {
    params: { customerId: CustomerId },
    payload: CustomerRestriction,
    success: Customer,
    error: [...withBody, problem(422)]
  }))
  .add(HttpApiEndpoint.post("restrictOrganization", "/v2/simulate/organization/restrict", {
    success: OrganizationRestriction,
    error: withBody
  }))
  .add(HttpApiEndpoint.post("deposit", "/v2/simulate/deposits", {
    payload: SimulatedDeposit,
    success: Transaction.pipe(HttpApiSchema.status(201)),
    error: [...withBody, problem(422)]
  }))
  .add(HttpApiEndpoint.post("confirmTransaction", "/v2/simulate/transactions/:id/confirm", {
    params: transactionParams,
    success: Transaction,
    error: [...withBody, problem(422)]
  }))
  .add(HttpApiEndpoint.post("settleTransaction", "/v2/simulate/transactions/:id/settle", {
    params: transactionParams,
    success: Transaction,
    error: [...withBody, problem(422)]
  }))
  .add(HttpApiEndpoint.post("endTransaction", "/v2/simulate/transactions/:id/terminal", {
    params: transactionParams,
    payload: TransactionTerminal,
    success: Transaction,
    error: [...withBody, problem(422)]
  }))
  .add(HttpApiEndpoint.post("reviewTransaction", "/v2/simulate/transactions/:id/review", {
    params: transactionParams,
    payload: TransactionReview,
    success: Transaction,
    error: [...withBody, problem(422)]
  }))
  .add(HttpApiEndpoint.post("setRate", "/v2/simulate/rates", {
    payload: RateChange,
    success: PairPricing,
    error: [...withBody, problem(422)]
  }))
  .add(HttpApiEndpoint.post("failOrder", "/v2/simulate/orders/:orderId/fail", {
    params: { orderId: OrderId },
    payload: OrderFailure,
    success: Order,
    error: [...withBody, problem(422)]
  }))
  .add(HttpApiEndpoint.post("returnTransaction", "/v2/simulate/transactions/:id/return", {
    params: transactionParams,
    payload: TransactionReturn,
    success: Transaction,
    error: [...withBody, problem(422)]
  }))
  .add(HttpApiEndpoint.post("publishRfi", "/v2/simulate/transactions/:id/rfi", {
    params: transactionParams,
    payload: RfiPublish,
    success: Rfi.pipe(HttpApiSchema.status(201)),
    error: [...withBody, problem(422)]
  }))
  .add(HttpApiEndpoint.post("reviewRfi", "/v2/simulate/rfis/:id", {
    params: { id: RfiId },
    payload: RfiReview,
    success: Rfi,
    error: [...withBody, problem(422)]
  }))
  .add(HttpApiEndpoint.post("unrestrictOrganization", "/v2/simulate/organization/unrestrict", {
    success: OrganizationRestriction,
    error: withBody
  }))
  .add(HttpApiEndpoint.post("reset", "/v2/simulate/reset", {
    success: SandboxReset,
    error: withBody
  }))
  // Snapshots of the caller's whole sandbox, restored in one transaction (docs/snapshots.md).
  .add(HttpApiEndpoint.post("createSnapshot", "/v2/simulate/snapshots", {
    success: Snapshot.pipe(HttpApiSchema.status(201)),
    error: [...withBody, problem(422)]
  }))
  .add(HttpApiEndpoint.get("listSnapshots", "/v2/simulate/snapshots", {
    query: listQuery(["createdAt"] as const),
    success: listOf(Snapshot),
    error: common
  }))
  .add(HttpApiEndpoint.get("getSnapshot", "/v2/simulate/snapshots/:id", { params: { id: SnapshotId }, success: Snapshot, error: common }))
  .add(HttpApiEndpoint.post("restoreSnapshot", "/v2/simulate/snapshots/:id/restore", {
    params: { id: SnapshotId },
    success: Snapshot,
    error: withBody
  }).annotate(KeepsTimers, true))
  .add(HttpApiEndpoint.delete("deleteSnapshot", "/v2/simulate/snapshots/:id", { params: { id: SnapshotId }, error: common }))
  .add(
    HttpApiEndpoint.post("advanceClock", "/v2/simulate/clock/advance", {
      payload: ClockAdvance,
      success: ClockNow,
      error: withBody
    }).annotate(Idempotency, "accepted").annotate(OutsideTransaction, true)
  )
  // Non-custodial wallets' outside actors: the wallet provider, the end user, the roster's admins, ops.
  .add(HttpApiEndpoint.post("provisionClaim", "/v2/simulate/claims/:claimId/provisioning", {
    params: { claimId: ClaimId },
    payload: SimulatedProvisioning,
    success: ClaimState,
    error: [...withBody, problem(422)]
  }))
  .add(HttpApiEndpoint.post("enrollSigner", "/v2/simulate/wallet-signers/:signerId/enroll", {
    params: { signerId: WalletSignerId },
    payload: SimulatedEnrollment,
    success: WalletSigner,
    error: [...withBody, problem(422)]
  }))
  .add(HttpApiEndpoint.post("addPasskey", "/v2/simulate/wallet-signers/:signerId/passkeys", {
    params: { signerId: WalletSignerId },
    success: AdminApproval.pipe(HttpApiSchema.status(201)),
    error: [...withBody, problem(422)]
  }))
  .add(HttpApiEndpoint.post("signerLogin", "/v2/simulate/wallet-signers/:signerId/sessions", {
    params: { signerId: WalletSignerId },
    payload: SimulatedSignerLogin,
    success: SignerSession.pipe(HttpApiSchema.status(201)),
    error: [...withBody, problem(422)]
  }))
  .add(HttpApiEndpoint.post("removeSigner", "/v2/simulate/wallet-signers/:signerId/remove", {
    params: { signerId: WalletSignerId },
    success: WalletSigner,
    error: [...withBody, problem(422)]
  }))
  .add(HttpApiEndpoint.post("decideCeremony", "/v2/simulate/wallet-ceremonies/:ceremonyId/decision", {
    params: { ceremonyId: CeremonyId },
    headers: SignerHeaders,
    payload: SimulatedCeremonyDecision,
    success: WalletCeremony,
    error: [...withBody, problem(422)]
  }))
  // A passkey signer (by its session) stamps or declines a transfer at its verificationUrl.
  .add(HttpApiEndpoint.post("signTransaction", "/v2/simulate/transactions/:id/signatures", {
    params: transactionParams,
    headers: SignerHeaders,
    payload: SimulatedSignature,
    success: Transaction,
    error: [...withBody, problem(422), problem(502)]
  }))
  // The receive policy holds a broadcast crypto payout from a non-custodial wallet: its roster signs the recovery.
  .add(HttpApiEndpoint.post("holdByReceivePolicy", "/v2/simulate/transactions/:id/receive-policy", {
    params: transactionParams,
    success: Transaction,
    error: [...withBody, problem(422)]
  }))
  // A coin the wallet does not support arrives: it goes back to its sender (signed by a non-custodial wallet's roster).
  .add(HttpApiEndpoint.post("unsupportedDeposit", "/v2/simulate/wallets/:walletId/unsupported-deposits", {
    params: { walletId: WalletId },
    payload: SimulatedUnsupportedDeposit,
    success: Transaction.pipe(HttpApiSchema.status(201)),
    error: [...withBody, problem(422)]
  }))
  // The wallet provider reports that a non-custodial wallet's signing configuration blocks movement: it freezes.
  .add(HttpApiEndpoint.post("misconfigureWallet", "/v2/simulate/wallets/:walletId/misconfigure", {
    params: { walletId: WalletId },
    success: Wallet,
    error: [...withBody, problem(422)]
  }))
  // The sandbox's outside actors and clock act on a restricted organization too (lifting the restriction among them).
  .annotate(OpenWhenRestricted, true)
  // Simulation is the sandbox's alone: there is no /live/v2/simulate.
  .annotate(SandboxOnly, true)
