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
 * session outlives nothing: its signer is gone, so its token is refused. Which tables those are, and where a
 * sandbox's rows are in each, the domains' descriptors say (kernel/Domain.ts, `tables`), read from the engine's
 * registry; the answer counts each kind. The same registry is what a snapshot saves and a restore puts back
 * (Snapshots.ts), so a table a descriptor adds is reset, snapshotted and restored alike.
 *
 * It is one transaction, so a request meanwhile sees the sandbox as it was or empty, never half of it. Every row
 * goes in one removal (`removeRows`), named by where the tables' orders put it, what is partitioned per parent
 * (attempts by delivery, accounts by customer, contents by document) through its parents' entries: on the SQL stores
 * that is one statement, whatever the sandbox holds, and no row is read.
 */
import type { OrganizationId, SandboxReset } from "@fos/contract"
import { Effect } from "effect"
import * as Domain from "./kernel/Domain.ts"
import * as Store from "./kernel/Store.ts"
import * as Tenancy from "./tenancy/Tenancy.ts"

/** The counts a reset answers with, one per kind of row (SandboxReset's `removed`). */
type Removed = SandboxReset["removed"]

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
const sandboxSteps = (registry: Domain.Registry, options: { readonly keptByReset: boolean }) =>
  registry.sandboxTables.filter((step) => step.keptByReset !== true || options.keptByReset)

/** Where every row of the sandbox `scope` is (a restore puts a snapshot back in their place). */
export const sandboxSelections = (registry: Domain.Registry, scope: string): ReadonlyArray<Store.Selection> =>
  sandboxSteps(registry, { keptByReset: true }).map((step) => step.rows(scope))

/**
 * Removes the sandbox rows of `scope` in the caller's store transaction, all at once (`removeRows`): every table of
 * the registry, or, with `keptByReset`, those a reset keeps too (a restore). Answers how many rows of each counted
 * kind went.
 */
export const clearSandbox = (
  store: Store.StoreService,
  registry: Domain.Registry,
  scope: string,
  options: { readonly keptByReset: boolean }
): Effect.Effect<Removed> =>
  Effect.gen(function*() {
    const steps = sandboxSteps(registry, options)
    const gone = yield* store.removeRows(steps.map((step) => step.rows(scope)))
    const removed: { -readonly [K in keyof Removed]: number } = { ...emptyCounts }
    steps.forEach((step, i) => {
      if (step.counted !== undefined) removed[step.counted] += gone[i]!
    })
    return removed
  })

/** Empties one organization's sandbox; answers how many rows of each kind went. */
export const resetSandbox = (organizationId: OrganizationId): Effect.Effect<SandboxReset, never, Store.Store | Domain.Domains> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const registry = yield* Domain.Domains
    return yield* store.transaction(Effect.map(clearSandbox(store, registry, Tenancy.scopeOf(organizationId, "sandbox"), { keptByReset: false }), (removed) => ({
      organizationId,
      environment: "sandbox" as const,
      removed
    })))
  })
