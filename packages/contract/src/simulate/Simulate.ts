/**
 * The sandbox's simulate surface as a caller sees it: the virtual clock, and the outside actors' decisions
 * (compliance, operations) that tests drive.
 */
import { Schema } from "effect"
import "../kernel/Annotations.ts"
import { OrganizationId, SnapshotId, VirtualAccountId, WalletId } from "../kernel/Ids.ts"
import { NonBlankString } from "../kernel/Primitives.ts"
import { AssetAmount, PayoutRail, TransactionFailureCode, WireReceiveDetails } from "../money/Transactions.ts"
import { ApplicationFailureCodes, RejectionCategories } from "../onboarding/Applications.ts"
import { WebhookDelivery } from "../webhooks/Webhooks.ts"
import { maxForkStreamLength, maxSnapshotLabelLength } from "./Limits.ts"

/** The clock's time, and which clock it is: only a `virtual` one can be advanced. */
export const ClockNow = Schema.Struct({ now: Schema.String, mode: Schema.Literals(["system", "virtual"]) }).annotate({ identifier: "ClockNow", description: "The sandbox's virtual time." })
export type ClockNow = typeof ClockNow.Type

/** A count per name: timers by kind, events by type. */
const Counts = Schema.Struct({ total: Schema.Number, by: Schema.Record(Schema.String, Schema.Number) })

/**
 * What an advance did (docs/clock.md): where the caller's clock landed, the timers it fired by kind (fos's own names
 * for its deadlines), the events the sandbox's outbox received meanwhile by type, and when the clock's next pending
 * timer is due (omitted when none is left).
 */
export const ClockAdvanced = Schema.Struct({
  now: Schema.String,
  mode: Schema.Literals(["system", "virtual"]),
  /** The clock's time when the advance began. */
  from: Schema.String,
  timersFired: Counts,
  eventsEmitted: Counts,
  nextDueAt: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "ClockAdvanced" })
export type ClockAdvanced = typeof ClockAdvanced.Type

/** The longest advance, in seconds: ten years. */
export const maxAdvanceSeconds = 10 * 365 * 24 * 3600

/** Advance by whole seconds, or to an instant: exactly one of the two. */
export const ClockAdvance = Schema.Struct({
  seconds: Schema.optionalKey(Schema.Number.check(Schema.isInt(), Schema.isBetween({ minimum: 0, maximum: maxAdvanceSeconds }, {
    fosDetail: "must be a whole number of seconds from 0 to ten years"
  }))),
  to: Schema.optionalKey(Schema.String)
}).check(Schema.makeFilter((a) => (a.seconds === undefined) !== (a.to === undefined), {
  fosDetail: "must have exactly one of seconds or to"
})).annotate({ identifier: "ClockAdvance", description: "How far to move the sandbox clock: seconds, or a time to move to." })
export type ClockAdvance = typeof ClockAdvance.Type

const Reason = NonBlankString.check(Schema.isMaxLength(500, { fosDetail: "must be at most 500 characters" }))

/** An application's review outcome, as compliance decides it. */
export const ApplicationDecision = Schema.Struct({
  outcome: Schema.Literals(["approved", "rejected"]),
  category: Schema.optionalKey(Schema.Literals(RejectionCategories)),
  reason: Schema.optionalKey(Reason)
}).annotate({ identifier: "ApplicationDecision", description: "The decision on an application under review." })
export type ApplicationDecision = typeof ApplicationDecision.Type

/** A compliance result that arrives after an organization's application was approved. */
export const LateComplianceResult = Schema.Struct({
  failureCode: Schema.optionalKey(Schema.Literals(ApplicationFailureCodes)),
  failureMessage: Schema.optionalKey(Reason),
  resubmittable: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "LateComplianceResult", description: "A compliance result that arrives after the application was decided." })
export type LateComplianceResult = typeof LateComplianceResult.Type

export const CustomerRestriction = Schema.Struct({ type: Schema.optionalKey(Schema.Literals(["account", "monitoring"])) })
export const OrganizationRestriction = Schema.Struct({ organizationId: Schema.String, restricted: Schema.Boolean })

/**
 * `POST /simulate/deposits`: the outside sender sends `assetAmount` to a destination of the caller's: a virtual
 * account over `rail` (by default the first rail its deposit instructions offer in that currency), or a wallet, by
 * its id or its deposit address, from `sender.address` on the wallet's chain.
 */
export const SimulatedDeposit = Schema.Struct({
  destination: Schema.Union([
    Schema.Struct({ type: Schema.Literal("virtual_account"), virtualAccountId: VirtualAccountId }),
    Schema.Struct({ type: Schema.Literal("wallet"), walletId: WalletId }),
    // A wallet's deposit address, as a sender outside knows it.
    Schema.Struct({ type: Schema.Literal("deposit_address"), address: NonBlankString.check(Schema.isMaxLength(128)) })
  ]),
  assetAmount: AssetAmount,
  /** For a bank transfer into a virtual account. */
  rail: Schema.optionalKey(PayoutRail),
  /** For an on-chain deposit: the address it came from (a fresh outside address when omitted). */
  sender: Schema.optionalKey(Schema.Struct({ address: NonBlankString.check(Schema.isMaxLength(128)) })),
  /**
   * The sender's details did not come with the transfer: the deposit parks in awaiting_sender_information until the
   * caller supplies them (`POST /v2/transactions/{id}/sender-information`) or the window ends.
   */
  senderInformationMissing: Schema.optionalKey(Schema.Boolean),
  /** For a wire (fedwire, swift, international_wire) into a virtual account: what the sender's bank sends with it. */
  wireReceiveDetails: Schema.optionalKey(WireReceiveDetails)
}).check(Schema.makeFilter((d) =>
  /^0(\.0+)?$/.test(d.assetAmount.amount) ? { path: ["assetAmount", "amount"], issue: "must be greater than zero" } : undefined
)).annotate({ identifier: "SimulatedDeposit", description: "An incoming deposit: where it lands (a wallet address or a virtual account) and the amount." })
export type SimulatedDeposit = typeof SimulatedDeposit.Type

/**
 * `POST /simulate/wallets/{walletId}/unsupported-deposits`: a transfer of a coin the service does not support for the
 * wallet arrives at its address (the sandbox names it by `assetAmount`, on the wallet's chain). It is not credited;
 * it goes back to its sender (a fresh outside address when omitted) as a deposit_return, which a non-custodial
 * wallet's roster must sign (transaction.awaiting_return_signature).
 */
export const SimulatedUnsupportedDeposit = Schema.Struct({
  assetAmount: AssetAmount,
  sender: Schema.optionalKey(Schema.Struct({ address: NonBlankString.check(Schema.isMaxLength(128)) }))
}).check(Schema.makeFilter((d) =>
  /^0(\.0+)?$/.test(d.assetAmount.amount) ? { path: ["assetAmount", "amount"], issue: "must be greater than zero" } : undefined
)).annotate({ identifier: "SimulatedUnsupportedDeposit", description: "A coin a wallet does not support, sent to it." })
export type SimulatedUnsupportedDeposit = typeof SimulatedUnsupportedDeposit.Type

/** `POST /simulate/transactions/{id}/terminal`: how the outside world ended the transaction. */
export const TransactionTerminal = Schema.Struct({
  outcome: Schema.Literals(["completed", "failed", "cancelled"]),
  /** With outcome failed; provider_rejected when omitted. */
  failureCode: Schema.optionalKey(TransactionFailureCode),
  /** Kept for the sandbox's own record; never the failureMessage, which is always the catalog text. */
  reason: Schema.optionalKey(Reason)
}).check(Schema.makeFilter((t) =>
  t.failureCode !== undefined && t.outcome !== "failed" ? { path: ["failureCode"], issue: "is sent only with outcome failed" } : undefined
)).annotate({ identifier: "TransactionTerminal", description: "The terminal outcome to force on a transaction." })
export type TransactionTerminal = typeof TransactionTerminal.Type

/** `POST /simulate/transactions/{id}/review`: what the service's reviewers do. */
export const TransactionReview = Schema.Struct({
  action: Schema.Literals(["enter", "request_information", "clear", "reject"]),
  /** With action reject: the document types the reviewer would accept (transaction.rejected). */
  acceptedDocumentTypes: Schema.optionalKey(Schema.Array(NonBlankString).check(Schema.isMaxLength(20)))
}).check(Schema.makeFilter((r) =>
  r.acceptedDocumentTypes !== undefined && r.action !== "reject" ? { path: ["acceptedDocumentTypes"], issue: "is sent only with action reject" } : undefined
)).annotate({ identifier: "TransactionReview", description: "A compliance review hold on a transaction." })
export type TransactionReview = typeof TransactionReview.Type

/**
 * `POST /simulate/transactions/{id}/return`: the beneficiary's bank returns a completed bank payout. Any code is
 * taken (on ACH a Nacha code such as R01); `returnReason` defaults to the Nacha catalog's text for a known Nacha
 * code and to a generic text otherwise.
 */
export const TransactionReturn = Schema.Struct({
  returnCode: NonBlankString.check(Schema.isMaxLength(16)),
  returnReason: Schema.optionalKey(NonBlankString.check(Schema.isMaxLength(200)))
}).annotate({ identifier: "TransactionReturn", description: "The return of a deposit to its sender." })
export type TransactionReturn = typeof TransactionReturn.Type

/** How many rows of each kind a sandbox holds: what a reset removed, or what a snapshot saved. */
export const SandboxCounts = Schema.Struct({
  customers: Schema.Number,
  applications: Schema.Number,
  documents: Schema.Number,
  virtualAccounts: Schema.Number,
  wallets: Schema.Number,
  webhookEndpoints: Schema.Number,
  webhookDeliveries: Schema.Number,
  events: Schema.Number,
  timers: Schema.Number,
  idempotencyRecords: Schema.Number,
  transactions: Schema.Number,
  ledgerTransfers: Schema.Number,
  orders: Schema.Number,
  quoteOptions: Schema.Number,
  recipients: Schema.Number,
  rfis: Schema.Number,
  claims: Schema.Number,
  walletSigners: Schema.Number,
  walletCeremonies: Schema.Number,
  signingRequests: Schema.Number
}).annotate({ identifier: "SandboxCounts" })
export type SandboxCounts = typeof SandboxCounts.Type

/**
 * What `POST /v2/simulate/reset` removed from the caller's sandbox: how many rows of each kind. The organization,
 * its users and its keys stay.
 */
export const SandboxReset = Schema.Struct({
  organizationId: Schema.String,
  environment: Schema.Literal("sandbox"),
  removed: SandboxCounts
}).annotate({ identifier: "SandboxReset", description: "What a sandbox reset removed, by kind." })
export type SandboxReset = typeof SandboxReset.Type

/**
 * `POST /simulate/webhooks/flush`: what the wait for the caller's deliveries came to. `deliveries` are those whose
 * attempt was due or in flight when the flush began, as they are now; `complete` is false when the wait's bound
 * (the 5-second receiver limit and a second to record) ran out first, leaving some of them `processing`.
 */
export const WebhookFlush = Schema.Struct({
  deliveries: Schema.Array(WebhookDelivery),
  complete: Schema.Boolean
}).annotate({ identifier: "WebhookFlush" })
export type WebhookFlush = typeof WebhookFlush.Type

/**
 * A saved copy of an organization's whole sandbox (`POST /v2/simulate/snapshots`, docs/snapshots.md): what a reset
 * removes, plus the ledger, the timers and the sandbox's clock. `createdAt` is the sandbox's time when it was taken;
 * `rows` is every row it holds; `contents` counts them by kind, as a reset does.
 */
export const Snapshot = Schema.Struct({
  id: SnapshotId,
  organizationId: Schema.String,
  environment: Schema.Literal("sandbox"),
  createdAt: Schema.String,
  rows: Schema.Number,
  contents: SandboxCounts,
  label: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "Snapshot", description: "A saved copy of an organization's whole sandbox." })
export type Snapshot = typeof Snapshot.Type

/**
 * What a save or an import may say of the snapshot it makes (`POST /v2/simulate/snapshots?label=…`,
 * `POST /v2/simulate/snapshots/import?label=…`): a label it carries and lists with, which fos never reads (a test
 * package writes who made the snapshot and until when it is needed, docs/testing.md).
 */
export const SnapshotQuery = Schema.Struct({
  label: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(maxSnapshotLabelLength)))
})

/**
 * How a fork may be made (`POST /v2/simulate/snapshots/{id}/fork?stream=…`): a name for its seeded streams, such as a
 * test file's path, so that on a seeded engine its organization and its ids follow from the seed, the parent and the
 * name alone (docs/snapshots.md, "Forks").
 */
export const ForkQuery = Schema.Struct({
  stream: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(maxForkStreamLength)))
})

/**
 * A fork in a list (`GET /v2/simulate/forks`): an organization of its own whose sandbox began as a snapshot of the
 * caller's (`snapshotId`). `createdAt` is the fork's time when it was made: the snapshot's.
 */
export const ForkSummary = Schema.Struct({
  organizationId: OrganizationId,
  parentOrganizationId: OrganizationId,
  snapshotId: SnapshotId,
  environment: Schema.Literal("sandbox"),
  createdAt: Schema.String
}).annotate({
  identifier: "ForkSummary",
  description: "A fork of the organization's sandbox: another organization, made from one of its snapshots."
})
export type ForkSummary = typeof ForkSummary.Type

/**
 * A fork as made (`POST /v2/simulate/snapshots/{id}/fork`, docs/snapshots.md, "Forks"): a new organization whose
 * sandbox holds the snapshot's world, with its own clock (at the snapshot's time) and its own seeded stream.
 * `apiKey` is a read-write sandbox key of the fork, shown this once. `ids` maps every id of the snapshot's world to
 * the fork's (ids are unique across a store, so the fork's rows take new ones), its keys in code point order; wallet
 * deposit addresses are the same in every fork.
 */
export const Fork = Schema.Struct({
  organizationId: OrganizationId,
  parentOrganizationId: OrganizationId,
  snapshotId: SnapshotId,
  environment: Schema.Literal("sandbox"),
  apiKey: Schema.String,
  ids: Schema.Record(Schema.String, Schema.String),
  createdAt: Schema.String
}).annotate({
  identifier: "Fork",
  description: "A fork of a snapshot: a new organization holding the snapshot's world, its read-write sandbox key (shown once) and the map of the world's ids to its own."
})
export type Fork = typeof Fork.Type

/** The name a snapshot file gives its format (`format`), so that no other JSON document is taken for one. */
export const snapshotFileFormat = "fos-snapshot"

/**
 * The version of the snapshot file's format this fos writes, and the newest it reads. A change of the file's shape
 * is a new version; a fos refuses a file of a newer version than its own with 422, naming both (docs/snapshots.md).
 */
export const snapshotFileVersion = 2

/**
 * The largest snapshot file an import takes, in bytes (256 MiB), and so the largest an export answers: every file
 * fos exports, fos imports. A sandbox at the snapshot's row bound (500,000 rows of about 400 bytes) is about 200 MB.
 */
export const maxSnapshotFileBytes = 256 * 1024 * 1024

/**
 * A snapshot as a file (`GET /v2/simulate/snapshots/{id}/export`, docs/snapshots.md, "Files"): to commit beside a
 * test suite and import into any fos of the same major version (`POST /v2/simulate/snapshots/import`). Its members
 * come in this order, its tables by name and each table's rows by key, so the same world is the same bytes:
 * - `format` and `version`: what the file is, read first by an import;
 * - `fosVersion`: the version of the fos that wrote it (`fos --version`);
 * - `snapshot`: the snapshot as it was listed (`createdAt` is the sandbox's time when it was taken: a restore puts
 *   the sandbox's clock there);
 * - `sequence`: the store's sequence when it was taken, above every number its rows hold (an import moves the
 *   importing store's sequence past it);
 * - `data` (optional, from version 2): any JSON a suite keeps with its fixture (what the fixture's build answered),
 *   which an import keeps with the snapshot and its export writes again;
 * - `tables`: every row the snapshot holds, as the store keeps it, by table.
 * Version 1 is version 2 without `data`, written as one line; both are read.
 */
export const SnapshotFile = Schema.Struct({
  format: Schema.Literal(snapshotFileFormat),
  version: Schema.Literals([1, snapshotFileVersion]),
  fosVersion: Schema.String.check(
    Schema.isPattern(/^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]*)?$/u, { fosDetail: "must be a fos version, such as 0.1.0" })
  ),
  snapshot: Snapshot,
  sequence: Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0, { fosDetail: "must be a whole number, at least 0" })),
  data: Schema.optionalKey(Schema.Unknown),
  tables: Schema.Record(Schema.String, Schema.Array(Schema.Record(Schema.String, Schema.Unknown)))
}).annotate({ identifier: "SnapshotFile", description: "A snapshot of a sandbox as a file, to keep with a test suite and import into another fos." })
export type SnapshotFile = typeof SnapshotFile.Type
