/**
 * A sandbox reset: one organization's sandbox emptied, so a test suite can start clean without restarting the
 * server (`POST /sandbox/v2/simulate/reset`, `fos reset`). It spans every domain, so it lives beside Engine.ts.
 *
 * What goes: customers (and the ids applications reserved for them), applications, documents and their bytes,
 * virtual accounts, webhook endpoints, deliveries and their attempts, events, timers and idempotency records, each
 * of the organization's sandbox only. What stays: the organization (its status, features and restriction), its
 * users and its keys, every other organization, and the organization's live data, which no reset touches.
 * Money goes too: transactions and the ledger's accounts and transfers, and non-custodial claims with their
 * signers and ceremonies (wallets, orders and payouts join as they arrive).
 *
 * It is one transaction, so a request meanwhile sees the sandbox as it was or empty, never half of it. Rows are
 * removed by partition (`removePartition`); what is partitioned per parent (attempts by delivery, accounts by
 * customer, contents by document) is walked page by page, a bounded page at a time.
 */
import type { OrganizationId, SandboxReset } from "@fos/contract"
import { Effect } from "effect"
import { IdempotencyRecords } from "./kernel/Idempotency.ts"
import { OutboxEvents } from "./kernel/Outbox.ts"
import { type Position, Store, type StoreService, type Table } from "./kernel/Store.ts"
import { Timers } from "./kernel/Timers.ts"
import { LedgerAccounts, LedgerTransfers } from "./money/Ledger.ts"
import { Orders, ordersOfScope } from "./money/Orders.ts"
import { MarketRates } from "./money/Pricing.ts"
import { QuoteOptions } from "./money/Quotes.ts"
import { Recipients } from "./money/Recipients.ts"
import { Rfis } from "./money/Rfis.ts"
import { transactionsOfScope, Transactions } from "./money/Transactions.ts"
import { VirtualAccounts } from "./money/VirtualAccounts.ts"
import { Claims, WalletCeremonies, WalletSigners } from "./signing/Roster.ts"
import { SigningRequests, SigningSeats, TransferSignings } from "./signing/TransferSigning.ts"
import { Applications } from "./onboarding/Applications.ts"
import { Customers, ReservedCustomers } from "./onboarding/Customers.ts"
import { DocumentContents, Documents } from "./onboarding/Documents.ts"
import { scopeOf } from "./tenancy/Tenancy.ts"
import { WebhookAttempts, WebhookDeliveries, WebhookEndpoints } from "./webhooks/Webhooks.ts"

/** How many parent rows one step of a walk reads. */
const walkPage = 100

/** Calls `each` on every row of one partition of an order, a page at a time, and answers how many there were. */
const walk = <Row>(
  store: StoreService,
  table: Table<Row>,
  order: string,
  partition: string,
  each: (row: Row) => Effect.Effect<unknown>
): Effect.Effect<number> =>
  Effect.gen(function*() {
    const sortOf = table.orders[order]!.sort
    let from: Position | undefined = undefined
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

/** Empties one organization's sandbox; answers how many rows of each kind went. */
export const resetSandbox = (organizationId: OrganizationId): Effect.Effect<SandboxReset, never, Store> =>
  Effect.flatMap(Store, (store) =>
    store.transaction(Effect.gen(function*() {
      const scope = scopeOf(organizationId, "sandbox")
      // Children first, found through their parents while those are still there.
      let virtualAccounts = 0
      yield* walk(store, Customers, "createdAt", scope, (c) =>
        Effect.map(store.removePartition(VirtualAccounts, "byCustomer", `${scope}/${c.id}`), (n) => (virtualAccounts += n)))
      yield* walk(store, WebhookDeliveries, "byScope", scope, (d) => store.removePartition(WebhookAttempts, "byDelivery", d.id))
      yield* walk(store, Documents, "byScope", scope, (d) => store.remove(DocumentContents, d.id))
      const customers = yield* store.removePartition(Customers, "createdAt", scope)
      yield* store.removePartition(ReservedCustomers, "byScope", scope)
      const applications = yield* store.removePartition(Applications, "createdAt", scope)
      const documents = yield* store.removePartition(Documents, "byScope", scope)
      const webhookDeliveries = yield* store.removePartition(WebhookDeliveries, "byScope", scope)
      const webhookEndpoints = yield* store.removePartition(WebhookEndpoints, "byScope", scope)
      const events = yield* store.removePartition(OutboxEvents, "byScope", scope)
      const timers = yield* store.removePartition(Timers, "byScope", scope)
      const idempotencyRecords = yield* store.removePartition(IdempotencyRecords, "byScope", scope)
      const transactions = yield* store.removePartition(Transactions, transactionsOfScope, scope)
      const ledgerTransfers = yield* store.removePartition(LedgerTransfers, "byScope", scope)
      yield* store.removePartition(LedgerAccounts, "byScope", scope)
      // Non-custodial claims, their rosters and ceremonies (not counted in the answer).
      yield* store.removePartition(Claims, "byScope", scope)
      yield* store.removePartition(WalletSigners, "byScope", scope)
      yield* store.removePartition(WalletCeremonies, "byScope", scope)
      // Their transfers' signings, signing seats and signing requests.
      yield* store.removePartition(TransferSignings, "byScope", scope)
      yield* store.removePartition(SigningSeats, "byScope", scope)
      yield* store.removePartition(SigningRequests, "byScope", scope)
      // The market and the orders go too (not counted in the answer, whose shape predates them).
      yield* store.removePartition(Orders, ordersOfScope, scope)
      yield* store.removePartition(QuoteOptions, "byScope", scope)
      yield* store.removePartition(MarketRates, "byScope", scope)
      yield* store.removePartition(Recipients, "byScope", scope)
      yield* store.removePartition(Rfis, "byScope", scope)
      return {
        organizationId,
        environment: "sandbox" as const,
        removed: {
          customers,
          applications,
          documents,
          virtualAccounts,
          webhookEndpoints,
          webhookDeliveries,
          events,
          timers,
          idempotencyRecords,
          transactions,
          ledgerTransfers
        }
      }
    })))
