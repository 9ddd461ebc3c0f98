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
 * It is one transaction, so a request meanwhile sees the sandbox as it was or empty, never half of it. Rows are
 * removed by partition (`removePartition`); what is partitioned per parent (attempts by delivery, accounts by
 * customer, contents by document) is walked page by page, a bounded page at a time, and each page's child
 * partitions go in one removal.
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

/** How many parent rows one step of a walk reads. */
const walkPage = 100

/**
 * Calls `each` on every row of one partition of an order, a page at a time, and answers how many there were (the
 * ledger audit reads a sandbox with it too).
 */
export const walk = <Row, E = never>(
  store: Store.StoreService,
  table: Store.Table<Row>,
  order: string,
  partition: string,
  each: (row: Row) => Effect.Effect<unknown, E>
): Effect.Effect<number, E> =>
  Effect.gen(function*() {
    const sortOf = table.orders[order]!.sort
    let from: Store.Position | undefined = undefined
    let seen = 0
    while (true) {
      const rows: ReadonlyArray<Row> = yield* store.page(table, { order, partition, descending: false, backward: false, from, limit: walkPage })
      for (const row of rows) yield* each(row)
      seen += rows.length
      if (rows.length < walkPage) return seen
      const last = rows[rows.length - 1]!
      from = { sort: sortOf(last), key: table.key(last) }
    }
  })

/** The counts a reset answers with, one per kind of row (SandboxReset's `removed`). */
type Removed = SandboxReset["removed"]

/**
 * Where a sandbox's rows of a table partitioned per parent are, for one parent row: one partition of an order, or
 * one row by key; `undefined` for none.
 */
export type ChildRows = { readonly order: string; readonly partition: string } | { readonly key: string } | undefined

/**
 * One kind of sandbox row and how a reset (and a snapshot, Snapshots.ts) finds a sandbox's rows of it: every row of
 * the scope's partition of `order`, or, for tables partitioned per parent, the `children` of each row of the
 * parent's scope order. `keptByReset` marks a table a reset leaves alone but a snapshot saves and a restore puts
 * back (the organization's own clock, once it has one); `saved` gives what of a row a snapshot saves, and leaves out
 * (undefined) the rows that are not state yet (a running request's idempotency claim).
 */
export type SandboxTable =
  | {
    readonly table: Store.Table<any>
    readonly order: string
    readonly counted?: keyof Removed
    readonly keptByReset?: true
    readonly saved?: (row: any) => unknown
  }
  | {
    readonly table: Store.Table<any>
    readonly parent: Store.Table<any>
    readonly parentOrder: string
    readonly children: (scope: string, parent: any) => ChildRows
    readonly counted?: keyof Removed
    readonly keptByReset?: true
    readonly saved?: (row: any) => unknown
  }

/**
 * Every table that holds a sandbox's data, children before their parents (a child is found through its parent
 * while that is still there). A new table that holds an organization's data belongs here: `test/reset.test.ts`
 * fails on a table that is neither here nor in `keptTables`.
 */
export const sandboxTables: ReadonlyArray<SandboxTable> = [
  {
    table: VirtualAccounts.VirtualAccounts,
    parent: Customers.Customers,
    parentOrder: "createdAt",
    children: (scope, c) => ({ order: "byCustomer", partition: `${scope}/${c.id}` }),
    counted: "virtualAccounts"
  },
  {
    table: Wallets.Wallets,
    parent: Customers.Customers,
    parentOrder: "createdAt",
    children: (scope, c) => ({ order: "byCustomer", partition: `${scope}/${c.id}` }),
    counted: "wallets"
  },
  {
    // A deposit-funded order's funding address is a wallet listed under no customer: found through its order.
    table: Wallets.Wallets,
    parent: Orders.Orders,
    parentOrder: Orders.ofScope,
    children: (_scope, o) => (o.fundingAddress === undefined ? undefined : { key: o.source.id }),
    counted: "wallets"
  },
  // What each sandbox attempt sent (webhooks/AttemptRequests.ts), found through its delivery like the attempts.
  { table: AttemptRequests.AttemptRequests, parent: Deliveries.WebhookDeliveries, parentOrder: "byScope", children: (_scope, d) => ({ order: "byDelivery", partition: d.id }) },
  { table: Deliveries.WebhookAttempts, parent: Deliveries.WebhookDeliveries, parentOrder: "byScope", children: (_scope, d) => ({ order: "byDelivery", partition: d.id }) },
  { table: Documents.DocumentContents, parent: Documents.Documents, parentOrder: "byScope", children: (_scope, d) => ({ key: d.id }) },
  { table: Customers.Customers, order: "createdAt", counted: "customers" },
  { table: Customers.ReservedCustomers, order: "byScope" },
  { table: Applications.Applications, order: "createdAt", counted: "applications" },
  { table: Documents.Documents, order: "byScope", counted: "documents" },
  { table: Deliveries.WebhookDeliveries, order: "byScope", counted: "webhookDeliveries" },
  { table: Endpoints.WebhookEndpoints, order: "byScope", counted: "webhookEndpoints" },
  // A listener's attempts in flight and its client's presence (webhooks/Listeners.ts) live only as long as a
  // connection does: a snapshot saves neither.
  { table: Listeners.ListenerAttempts, order: "byScope", saved: () => undefined },
  { table: Listeners.ListenerPresences, order: "byScope", saved: () => undefined },
  { table: Outbox.OutboxEvents, order: "byScope", counted: "events" },
  { table: Timers.Timers, order: "byScope", counted: "timers" },
  // What caused each state change, and the timers that fired, for a resource's timeline (inspect/Timeline.ts).
  { table: History.History, order: "byScope" },
  {
    table: Idempotency.IdempotencyRecords,
    order: "byScope",
    counted: "idempotencyRecords",
    // A claim is a request still running, whose work has not committed (the snapshot's own request among them):
    // restored, it would hold its key for a request that never ends, against other processes until its lease ran
    // out (on the virtual clock, until an advance).
    saved: (r: Idempotency.IdempotencyRecord) => (r.state !== "in_progress" ? r : undefined)
  },
  { table: Transactions.Transactions, order: Transactions.ofScope, counted: "transactions" },
  { table: Ledger.LedgerTransfers, order: "byScope", counted: "ledgerTransfers" },
  { table: Ledger.LedgerAccounts, order: "byScope" },
  { table: Roster.Claims, order: "byScope", counted: "claims" },
  { table: Roster.WalletSigners, order: "byScope", counted: "walletSigners" },
  { table: Roster.WalletCeremonies, order: "byScope", counted: "walletCeremonies" },
  { table: TransferSigning.TransferSignings, order: "byScope" },
  { table: TransferSigning.SigningSeats, order: "byScope" },
  { table: TransferSigning.SigningRequests, order: "byScope", counted: "signingRequests" },
  { table: Orders.Orders, order: Orders.ofScope, counted: "orders" },
  { table: Quotes.QuoteOptions, order: "byScope", counted: "quoteOptions" },
  { table: Pricing.MarketRates, order: "byScope" },
  { table: Recipients.Recipients, order: "byScope", counted: "recipients" },
  { table: Rfis.Rfis, order: "byScope", counted: "rfis" },
  // The organization's request-fault mark is cleared by the next look-up that finds none (simulate/Faults.ts).
  { table: Faults.SimulatedFaults, order: "byScope" },
  // Outcome rules are sandbox state like faults: a reset removes them, a snapshot saves and restores them.
  { table: Outcomes.OutcomeRules, order: "byScope" },
  // The sandbox's clock (kernel/Clocks.ts): a reset empties the sandbox at the time it is at, since a clock never
  // goes back by itself (docs/clock.md); a restore puts the snapshot's time back, with the timers it held. An advance
  // under way is not state: restored, it would be finished to its target by whoever touched the clock next.
  { table: Clocks.Clocks, order: "byScope", keptByReset: true, saved: ({ advancing: _, ...clock }: Clocks.StoredClock) => clock }
]

/**
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

/**
 * Removes the sandbox rows of `scope` in the caller's store transaction: every table of `sandboxTables`, or, with
 * `keptByReset`, those a reset keeps too (a restore). Answers how many rows of each counted kind went.
 */
export const clearSandbox = (store: Store.StoreService, scope: string, options: { readonly keptByReset: boolean }): Effect.Effect<Removed> =>
  Effect.gen(function*() {
    const removed: { -readonly [K in keyof Removed]: number } = { ...emptyCounts }
    for (const step of sandboxTables) {
      if (step.keptByReset === true && !options.keptByReset) continue
      let n = 0
      if ("order" in step) {
        n = yield* store.removePartition(step.table, step.order, scope)
      } else {
        // A page of parents' child partitions go in one removal: one per parent made a reset's statements grow with
        // the parents (a delivery's attempts), which on PGlite took seconds per thousand deliveries.
        const partitions = new Map<string, Array<string>>()
        const removeChildren = Effect.suspend(() => {
          const pending = [...partitions]
          partitions.clear()
          return Effect.forEach(pending, ([order, parts]) => Effect.map(store.removePartition(step.table, order, parts), (m) => (n += m)), { discard: true })
        })
        yield* walk(store, step.parent, step.parentOrder, scope, (parent) => {
          const children = step.children(scope, parent)
          if (children === undefined) return Effect.void
          if ("key" in children) return Effect.sync(() => (n += 1)).pipe(Effect.andThen(store.remove(step.table, children.key)))
          const parts = partitions.get(children.order) ?? []
          partitions.set(children.order, parts)
          parts.push(children.partition)
          return parts.length >= walkPage ? removeChildren : Effect.void
        })
        yield* removeChildren
      }
      if (step.counted !== undefined) removed[step.counted] += n
    }
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
