/**
 * A sandbox reset: one organization's sandbox emptied, so a test suite can start clean without restarting the
 * server (`POST /sandbox/v2/simulate/reset`, `fos reset`). It spans every domain, so it lives beside Engine.ts.
 *
 * What goes: customers (and the ids applications reserved for them), applications, documents and their bytes,
 * webhook endpoints, deliveries and their attempts (with what each sent), events, timers and idempotency records, each
 * of the organization's sandbox only. What stays: the organization (its status, features and restriction), its
 * users and its keys, every other organization, and the organization's live data, which no reset touches.
 * Money goes too: wallets (funding addresses included), virtual accounts, transactions (payouts among them), the
 * ledger's accounts and transfers, orders, quotes and the market's rates, recipients and registered addresses,
 * RFIs, and non-custodial claims with their signers, ceremonies, signing seats and signing requests. A signer
 * session outlives nothing: its signer is gone, so its token is refused. `sandboxTables` lists every table a reset
 * empties; the answer counts each kind. The same registry is what a snapshot saves and a restore puts back
 * (Snapshots.ts), so a table added to it is reset, snapshotted and restored alike.
 *
 * It is one transaction, so a request meanwhile sees the sandbox as it was or empty, never half of it. Every row
 * goes in one removal (`removeRows`), named by where the tables' orders put it, what is partitioned per parent
 * (attempts by delivery, accounts by customer, contents by document) through its parents' entries: on the SQL stores
 * that is one statement, whatever the sandbox holds, and no row is read.
 */
import type { OrganizationId, SandboxReset } from "@fos/contract"
import { Effect } from "effect"
import * as Applications from "./onboarding/Applications.ts"
import * as AttemptRequests from "./webhooks/AttemptRequests.ts"
import * as Clocks from "./kernel/Clocks.ts"
import * as Liveness from "./kernel/Liveness.ts"
import * as Customers from "./onboarding/Customers.ts"
import * as Deliveries from "./webhooks/Deliveries.ts"
import * as Documents from "./onboarding/Documents.ts"
import * as Endpoints from "./webhooks/Endpoints.ts"
import * as Faults from "./simulate/Faults.ts"
import * as History from "./kernel/History.ts"
import * as Outcomes from "./simulate/Outcomes.ts"
import * as Listeners from "./webhooks/Listeners.ts"
import * as Idempotency from "./kernel/Idempotency.ts"
import * as Ledger from "./money/Ledger.ts"
import * as Operator from "./tenancy/Operator.ts"
import * as Orders from "./money/Orders.ts"
import * as Outbox from "./kernel/Outbox.ts"
import * as Pricing from "./money/Pricing.ts"
import * as Quotes from "./money/Quotes.ts"
import * as Recipients from "./money/Recipients.ts"
import * as Rfis from "./money/Rfis.ts"
import * as Roster from "./signing/Roster.ts"
import * as SnapshotTables from "./SnapshotTables.ts"
import * as Store from "./kernel/Store.ts"
import * as Tenancy from "./tenancy/Tenancy.ts"
import * as Timers from "./kernel/Timers.ts"
import * as Transactions from "./money/Transactions.ts"
import * as TransferSigning from "./signing/TransferSigning.ts"
import * as VirtualAccounts from "./money/VirtualAccounts.ts"
import * as Wallets from "./money/Wallets.ts"

/** The counts a reset answers with, one per kind of row (SandboxReset's `removed`). */
type Removed = SandboxReset["removed"]

/**
 * What a snapshot saves of a table's rows (Snapshots.ts): every row (the default); none (`false`: what lives only as
 * long as a connection); every row but those `except` names (a running request's claim, whose work has not
 * committed); or, for a table of a row or two per scope, each row as `as` gives it, read through the process.
 */
export type Saved = false | { readonly except: NonNullable<Store.Selection["except"]> } | { readonly as: (row: any) => unknown }

/**
 * One kind of sandbox row and where a scope's rows of it are (`rows`, a `Store.Selection`), so that a reset removes
 * them and a snapshot copies them all at once, whatever their number, without reading them. `keptByReset` marks a
 * table a reset leaves alone but a snapshot saves and a restore puts back (the organization's own clock, once it has
 * one); `saved` is what of it a snapshot saves.
 */
export interface SandboxTable {
  readonly table: Store.Table<any>
  readonly rows: (scope: string) => Store.Selection
  readonly counted?: keyof Removed
  readonly keptByReset?: true
  readonly saved?: Saved
}

/** The rows a snapshot leaves out of a table it copies whole (`Saved`'s `except`). */
export const savedExcept = (step: SandboxTable): Store.Selection["except"] =>
  step.saved !== undefined && step.saved !== false && "except" in step.saved ? step.saved.except : undefined

/** How a snapshot saves each row of a table it saves through the process (`Saved`'s `as`); undefined for the rest. */
export const savedAs = (step: SandboxTable): ((row: any) => unknown) | undefined =>
  step.saved !== undefined && step.saved !== false && "as" in step.saved ? step.saved.as : undefined

/** The table's rows in the scope's partition of `order`. */
const inScope = (table: Store.Table<any>, order: string): SandboxTable => ({ table, rows: (scope) => ({ table, order, partition: scope }) })

/** The table's rows in `order`'s partitions `<scope>/<parent key>` (or `<parent key>`), one per parent of the scope. */
const underParents = (table: Store.Table<any>, order: string, parent: Store.Table<any>, parentOrder: string, prefix: "scope/" | ""): SandboxTable => ({
  table,
  rows: (scope) => ({ table, order, prefix: prefix === "" ? "" : `${scope}/`, parents: { table: parent, order: parentOrder, partition: scope } })
})

/**
 * Every table that holds a sandbox's data. A new table that holds an organization's data belongs here:
 * `test/reset.test.ts` fails on a table that is neither here nor in `keptTables`.
 */
export const sandboxTables: ReadonlyArray<SandboxTable> = [
  { ...underParents(VirtualAccounts.VirtualAccounts, "byCustomer", Customers.Customers, "createdAt", "scope/"), counted: "virtualAccounts" },
  { ...underParents(Wallets.Wallets, "byCustomer", Customers.Customers, "createdAt", "scope/"), counted: "wallets" },
  // A deposit-funded order's funding address is a wallet listed under no customer.
  { ...inScope(Wallets.Wallets, "funding"), counted: "wallets" },
  // What each sandbox attempt sent (webhooks/AttemptRequests.ts), found through its delivery like the attempts.
  underParents(AttemptRequests.AttemptRequests, "byDelivery", Deliveries.WebhookDeliveries, "byScope", ""),
  underParents(Deliveries.WebhookAttempts, "byDelivery", Deliveries.WebhookDeliveries, "byScope", ""),
  {
    table: Documents.DocumentContents,
    rows: (scope) => ({ table: Documents.DocumentContents, sameKeys: { table: Documents.Documents, order: "byScope", partition: scope } })
  },
  { ...inScope(Customers.Customers, "createdAt"), counted: "customers" },
  inScope(Customers.ReservedCustomers, "byScope"),
  { ...inScope(Applications.Applications, "createdAt"), counted: "applications" },
  { ...inScope(Documents.Documents, "byScope"), counted: "documents" },
  { ...inScope(Deliveries.WebhookDeliveries, "byScope"), counted: "webhookDeliveries" },
  { ...inScope(Endpoints.WebhookEndpoints, "byScope"), counted: "webhookEndpoints" },
  // A listener's attempts in flight and its client's presence (webhooks/Listeners.ts) live only as long as a
  // connection does: a snapshot saves neither.
  { ...inScope(Listeners.ListenerAttempts, "byScope"), saved: false },
  { ...inScope(Listeners.ListenerPresences, "byScope"), saved: false },
  { ...inScope(Outbox.OutboxEvents, "byScope"), counted: "events" },
  { ...inScope(Timers.Timers, "byScope"), counted: "timers" },
  // What caused each state change, and the timers that fired, for a resource's timeline (inspect/Timeline.ts).
  inScope(History.History, "byScope"),
  {
    ...inScope(Idempotency.IdempotencyRecords, "byScope"),
    counted: "idempotencyRecords",
    // A claim is a request still running, whose work has not committed (the snapshot's own request among them):
    // restored, it would hold its key for a request that never ends, against other processes until its lease ran
    // out (on the virtual clock, until an advance).
    saved: { except: { field: "state", equals: "in_progress" } }
  },
  { ...inScope(Transactions.Transactions, Transactions.ofScope), counted: "transactions" },
  { ...inScope(Ledger.LedgerTransfers, "byScope"), counted: "ledgerTransfers" },
  inScope(Ledger.LedgerAccounts, "byScope"),
  { ...inScope(Roster.Claims, "byScope"), counted: "claims" },
  { ...inScope(Roster.WalletSigners, "byScope"), counted: "walletSigners" },
  { ...inScope(Roster.WalletCeremonies, "byScope"), counted: "walletCeremonies" },
  inScope(TransferSigning.TransferSignings, "byScope"),
  inScope(TransferSigning.SigningSeats, "byScope"),
  { ...inScope(TransferSigning.SigningRequests, "byScope"), counted: "signingRequests" },
  { ...inScope(Orders.Orders, Orders.ofScope), counted: "orders" },
  { ...inScope(Quotes.QuoteOptions, "byScope"), counted: "quoteOptions" },
  inScope(Pricing.MarketRates, "byScope"),
  { ...inScope(Recipients.Recipients, "byScope"), counted: "recipients" },
  { ...inScope(Rfis.Rfis, "byScope"), counted: "rfis" },
  // The organization's request-fault mark is cleared by the next look-up that finds none (simulate/Faults.ts).
  inScope(Faults.SimulatedFaults, "byScope"),
  // Outcome rules are sandbox state like faults: a reset removes them, a snapshot saves and restores them.
  inScope(Outcomes.OutcomeRules, "byScope"),
  // The sandbox's clock (kernel/Clocks.ts): a reset empties the sandbox at the time it is at, since a clock never
  // goes back by itself (docs/clock.md); a restore puts the snapshot's time back, with the timers it held. An advance
  // under way is not state: restored, it would be finished to its target by whoever touched the clock next.
  {
    ...inScope(Clocks.Clocks, "byScope"),
    keptByReset: true,
    saved: { as: ({ advancing: _, ...clock }: Clocks.StoredClock) => clock }
  }
]

/**
 * The tables a reset keeps: the organization itself, its users and keys (tenancy), its snapshots (a suite resets,
 * then restores), and what belongs to no organization: the operator token and the processes sharing the store
 * (kernel/Liveness.ts, with the live streams they hold open; the engine's signer-session key is not exported). A sandbox's clock is kept by a reset too,
 * but saved and restored by a snapshot (`sandboxTables`).
 */
export const keptTables: ReadonlyArray<Store.Table<any>> = [
  Tenancy.Organizations,
  Tenancy.Users,
  Tenancy.ApiKeys,
  Operator.OperatorTokens,
  SnapshotTables.Snapshots,
  SnapshotTables.SnapshotRows,
  Liveness.Processes,
  Liveness.OpenStreams
]

/** A sandbox with nothing in it: the counts a reset and a snapshot start from. */
export const emptyCounts: Removed = {
  customers: 0,
  applications: 0,
  documents: 0,
  virtualAccounts: 0,
  wallets: 0,
  webhookEndpoints: 0,
  webhookDeliveries: 0,
  events: 0,
  timers: 0,
  idempotencyRecords: 0,
  transactions: 0,
  ledgerTransfers: 0,
  orders: 0,
  quoteOptions: 0,
  recipients: 0,
  rfis: 0,
  claims: 0,
  walletSigners: 0,
  walletCeremonies: 0,
  signingRequests: 0
}

/** The tables a reset empties, or, with `keptByReset`, every table of a sandbox (a restore's). */
const sandboxSteps = (options: { readonly keptByReset: boolean }) => sandboxTables.filter((step) => step.keptByReset !== true || options.keptByReset)

/** Where every row of the sandbox `scope` is (a restore puts a snapshot back in their place). */
export const sandboxSelections = (scope: string): ReadonlyArray<Store.Selection> => sandboxSteps({ keptByReset: true }).map((step) => step.rows(scope))

/**
 * Removes the sandbox rows of `scope` in the caller's store transaction, all at once (`removeRows`): every table of
 * `sandboxTables`, or, with `keptByReset`, those a reset keeps too (a restore). Answers how many rows of each counted
 * kind went.
 */
export const clearSandbox = (store: Store.StoreService, scope: string, options: { readonly keptByReset: boolean }): Effect.Effect<Removed> =>
  Effect.gen(function*() {
    const steps = sandboxSteps(options)
    const gone = yield* store.removeRows(steps.map((step) => step.rows(scope)))
    const removed: { -readonly [K in keyof Removed]: number } = { ...emptyCounts }
    steps.forEach((step, i) => {
      if (step.counted !== undefined) removed[step.counted] += gone[i]!
    })
    return removed
  })

/** Empties one organization's sandbox; answers how many rows of each kind went. */
export const resetSandbox = (organizationId: OrganizationId): Effect.Effect<SandboxReset, never, Store.Store> =>
  Effect.flatMap(Store.Store, (store) =>
    store.transaction(Effect.map(clearSandbox(store, Tenancy.scopeOf(organizationId, "sandbox"), { keptByReset: false }), (removed) => ({
      organizationId,
      environment: "sandbox" as const,
      removed
    }))))
