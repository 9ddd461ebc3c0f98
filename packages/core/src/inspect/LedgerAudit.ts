/**
 * The sandbox's view into its ledger (money/Ledger.ts): an account's journal, and an audit of the invariants.
 *
 * - The **journal** of a customer account (`GET /sandbox/v2/simulate/ledger/accounts/{holderId}/journal`): its
 *   transfers in the order they were booked, each with the account's balance after it. The balance is carried
 *   from page to page in the cursor, so a page reads only its own transfers (and the pending transfers its posts
 *   and voids resolve), however long the journal.
 * - The **audit** (`GET /sandbox/v2/simulate/ledger/audit`) recomputes the ledger from its transfers, apart from
 *   the code that books them (TigerBeetle's auditor does the same), and answers every check it made and every
 *   violation it found:
 *   - `zero_sum`: per asset (and chain), debits equal credits, posted and pending: money is only ever moved.
 *   - `no_negative_customer_account`: no wallet or virtual account has spent or reserved more than it was credited.
 *   - `totals_match_transfers`: each account's four running totals equal the sum of its transfers.
 *   - `holds_match_transactions`: an open transaction's holds are pending transfers not yet resolved; an ended one
 *     has no pending transfer left unresolved (each was posted or voided).
 *
 *   It reads the whole of one sandbox's ledger and transactions, a page at a time: its cost grows with the sandbox,
 *   which a reset empties. At most `maxViolationsShown` violations are listed; `violationCount` counts them all.
 */
import { type AssetCode, type Chain, formatAmount, toIso } from "@fos/contract"
import { sha256 } from "@noble/hashes/sha2.js"
import { base64urlnopad, utf8 } from "@scure/base"
import { Clock, Effect } from "effect"
import * as Ledger from "../money/Ledger.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as TransactionMachine from "../money/TransactionMachine.ts"
import * as Transactions from "../money/Transactions.ts"

// --- the journal -----------------------------------------------------------------------------------------------------

/** An account's balance after a transfer, from its holder's side, at the asset's precision. */
export interface JournalBalance {
  /** Posted credits minus posted debits. */
  readonly posted: string
  /** What may be spent: posted, less what is reserved. */
  readonly available: string
  /** Reserved for transfers out not yet settled (pending debits). */
  readonly pending: string
  /** On its way in, not yet settled (pending credits). */
  readonly incoming: string
}

export interface JournalEntry {
  readonly transferId: string
  readonly sequence: number
  readonly createdAt: string
  /** `posted` at once, `pending` (a reservation), or the `post` or `void` that resolves one. */
  readonly kind: Ledger.LedgerTransfer["kind"]
  /** Which side of the transfer this account is on. */
  readonly side: "debit" | "credit"
  readonly amount: string
  readonly counterpartyAccountId: string
  readonly code: string
  readonly transactionId?: string
  /** The pending transfer a post or void resolves. */
  readonly resolves?: string
  readonly balance: JournalBalance
}

export interface JournalAccount {
  /** The account's id within the sandbox: `<holder type>/<holder id>/<asset>[@chain]`. */
  readonly id: string
  readonly holderType: string
  readonly holderId: string
  readonly asset: AssetCode
  readonly chain?: Chain
  readonly balance: JournalBalance
}

export interface Journal {
  readonly account: JournalAccount
  readonly data: ReadonlyArray<JournalEntry>
  readonly meta: { readonly mode: "cursor"; readonly nextCursor: string | null; readonly previousCursor: null; readonly total: number }
}

export interface JournalQuery {
  readonly asset?: string | undefined
  readonly chain?: string | undefined
  readonly cursor?: string | undefined
  readonly limit: number
}

interface Running {
  posted: bigint
  pendingOut: bigint
  pendingIn: bigint
}

const balanceView = (asset: AssetCode, r: Running): JournalBalance => ({
  posted: formatAmount({ asset, units: r.posted }),
  available: formatAmount({ asset, units: r.posted - r.pendingOut }),
  pending: formatAmount({ asset, units: r.pendingOut }),
  incoming: formatAmount({ asset, units: r.pendingIn })
})

const withoutScope = (scope: string, accountId: string) => accountId.startsWith(`${scope}/`) ? accountId.slice(scope.length + 1) : accountId

/** The cursor's binding to its account: the first 12 bytes of SHA-256 over the account's id. */
const journalBinding = (accountId: string) => base64urlnopad.encode(sha256(utf8.decode(`journal:${accountId}`)).subarray(0, 12))

const encodeJournalCursor = (accountId: string, sequence: number, r: Running) =>
  base64urlnopad.encode(utf8.decode(JSON.stringify({ l: journalBinding(accountId), s: sequence, b: [r.posted, r.pendingOut, r.pendingIn].map(String) })))

const invalidCursor = () => Problem.apiError("INVALID_CURSOR", "The cursor is malformed or belongs to another journal; start again without a cursor.")

const decodeJournalCursor = (accountId: string, cursor: string): Effect.Effect<{ sequence: number; running: Running }, Problem.ApiError> =>
  Effect.suspend(() => {
    try {
      const parsed = JSON.parse(utf8.encode(base64urlnopad.decode(cursor))) as { l?: unknown; s?: unknown; b?: unknown }
      const b = parsed.b
      if (
        parsed.l !== journalBinding(accountId) || typeof parsed.s !== "number" || !Number.isSafeInteger(parsed.s) ||
        !Array.isArray(b) || b.length !== 3 || !b.every((x) => typeof x === "string" && /^-?\d{1,40}$/.test(x))
      ) return Effect.fail(invalidCursor())
      return Effect.succeed({ sequence: parsed.s, running: { posted: BigInt(b[0]), pendingOut: BigInt(b[1]), pendingIn: BigInt(b[2]) } })
    } catch {
      return Effect.fail(invalidCursor())
    }
  })

/** The account a journal is asked for: a wallet's or virtual account's account in one asset (the only one it holds, when none is named). */
const journalAccount = (scope: string, holderId: string, query: JournalQuery): Effect.Effect<Ledger.LedgerAccount, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const accounts: Array<Ledger.LedgerAccount> = []
    for (const type of ["wallet", "virtual_account"] as const) {
      const rows = yield* store.page(Ledger.LedgerAccounts, {
        order: "byHolder",
        partition: `${scope}/${type}/${holderId}`,
        descending: false,
        backward: false,
        from: undefined,
        limit: 100
      })
      accounts.push(...rows)
    }
    if (accounts.length === 0) {
      return yield* Problem.apiError("NOT_FOUND", "No ledger account is held by the resource with this id in this sandbox: a wallet or virtual account has one once money has moved through it.")
    }
    const matching = accounts.filter((a) =>
      (query.asset === undefined || a.asset === query.asset.toUpperCase()) && (query.chain === undefined || a.chain === query.chain)
    )
    const held = accounts.map((a) => a.chain === undefined ? a.asset : `${a.asset}@${a.chain}`).join(", ")
    if (matching.length === 0) {
      return yield* Problem.invalidRequest([{ pointer: query.asset === undefined ? "/chain" : "/asset", detail: `${holderId} holds no account in that asset; it holds ${held}` }], "query")
    }
    if (matching.length > 1) {
      return yield* Problem.invalidRequest([{ pointer: "/asset", detail: `${holderId} holds several assets (${held}); name one with asset (and chain)` }], "query")
    }
    return matching[0]!
  })

/** How a transfer changes `account`'s running balance; `pending` is the pending transfer a post or void resolves. */
const applyToRunning = (r: Running, account: string, t: Ledger.LedgerTransfer, pending: Ledger.LedgerTransfer | undefined): void => {
  const amount = BigInt(t.amount)
  const debit = t.debitAccountId === account
  if (t.kind === "posted") r.posted += debit ? -amount : amount
  else if (t.kind === "pending") debit ? (r.pendingOut += amount) : (r.pendingIn += amount)
  else {
    const reserved = BigInt(pending?.amount ?? t.amount)
    if (debit) r.pendingOut -= reserved
    else r.pendingIn -= reserved
    if (t.kind === "post") r.posted += debit ? -amount : amount
  }
}

/** One page of a customer account's journal, oldest first, each entry with the balance after it. */
export const accountJournal = (organizationId: string, holderId: string, query: JournalQuery): Effect.Effect<Journal, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const scope = Tenancy.scopeOf(organizationId, "sandbox")
    const account = yield* journalAccount(scope, holderId, query)
    const from = query.cursor === undefined ? undefined : yield* decodeJournalCursor(account.id, query.cursor)
    const after: Store.Position | undefined = from === undefined ? undefined : { sort: from.sequence, key: "\uffff" }
    const side = (order: "byDebit" | "byCredit") =>
      store.page(Ledger.LedgerTransfers, { order, partition: account.id, descending: false, backward: false, from: after, limit: query.limit + 1 })
    // The account's transfers are its debits and its credits, two orders by sequence: merged, the first limit + 1.
    const merged = [...(yield* side("byDebit")), ...(yield* side("byCredit"))].sort((a, b) => a.sequence - b.sequence)
    const rows = merged.slice(0, query.limit)
    const running: Running = from?.running ?? { posted: 0n, pendingOut: 0n, pendingIn: 0n }
    const data: Array<JournalEntry> = []
    for (const t of rows) {
      const pending = t.resolves === undefined ? undefined : yield* store.get(Ledger.LedgerTransfers, t.resolves)
      applyToRunning(running, account.id, t, pending)
      const debit = t.debitAccountId === account.id
      data.push({
        transferId: t.id,
        sequence: t.sequence,
        createdAt: toIso(t.createdAt),
        kind: t.kind,
        side: debit ? "debit" : "credit",
        amount: formatAmount({ asset: t.asset, units: BigInt(t.amount) }),
        counterpartyAccountId: withoutScope(scope, debit ? t.creditAccountId : t.debitAccountId),
        code: t.code,
        ...(t.transactionId === undefined ? {} : { transactionId: t.transactionId }),
        ...(t.resolves === undefined ? {} : { resolves: t.resolves }),
        balance: balanceView(t.asset, running)
      })
    }
    const last = rows[rows.length - 1]
    const nextCursor = merged.length > query.limit && last !== undefined ? encodeJournalCursor(account.id, last.sequence, running) : null
    const total = (yield* store.count(Ledger.LedgerTransfers, "byDebit", account.id)) + (yield* store.count(Ledger.LedgerTransfers, "byCredit", account.id))
    const now: Running = {
      posted: BigInt(account.creditsPosted) - BigInt(account.debitsPosted),
      pendingOut: BigInt(account.debitsPending),
      pendingIn: BigInt(account.creditsPending)
    }
    return {
      account: {
        id: withoutScope(scope, account.id),
        holderType: account.holderType,
        holderId: account.holderId,
        asset: account.asset,
        ...(account.chain === undefined ? {} : { chain: account.chain }),
        balance: balanceView(account.asset, now)
      },
      data,
      meta: { mode: "cursor", nextCursor, previousCursor: null, total }
    }
  })

// --- the audit -------------------------------------------------------------------------------------------------------

export const AuditChecks = {
  zero_sum: "per asset (and chain), the debits of all accounts equal their credits, posted and pending",
  no_negative_customer_account: "no wallet or virtual account has spent or reserved more than it was credited",
  totals_match_transfers: "every account's posted and pending totals equal the sum of its transfers",
  holds_match_transactions: "every open transaction's holds are pending and unresolved; every ended one's were posted or voided"
} as const
export type AuditCheck = keyof typeof AuditChecks

export interface AuditViolation {
  readonly check: AuditCheck
  readonly detail: string
  readonly accountId?: string
  readonly transferId?: string
  readonly transactionId?: string
  readonly asset?: string
}

export interface LedgerAuditReport {
  /** True when no check found a violation. */
  readonly clean: boolean
  readonly checkedAt: string
  /** What the audit read. */
  readonly scanned: { readonly accounts: number; readonly transfers: number; readonly transactions: number; readonly assets: number }
  readonly checks: ReadonlyArray<{ readonly name: AuditCheck; readonly description: string; readonly violations: number }>
  /** The first `maxViolationsShown` violations, in the order found. */
  readonly violations: ReadonlyArray<AuditViolation>
  readonly violationCount: number
}

/** The most violations an audit lists; it counts them all. */
export const maxViolationsShown = 100

interface Totals {
  debitsPending: bigint
  debitsPosted: bigint
  creditsPending: bigint
  creditsPosted: bigint
}

const zero = (): Totals => ({ debitsPending: 0n, debitsPosted: 0n, creditsPending: 0n, creditsPosted: 0n })

/** Audits one organization's sandbox ledger; see the module's comment for the checks. */
export const auditLedger = (organizationId: string): Effect.Effect<LedgerAuditReport, never, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const scope = Tenancy.scopeOf(organizationId, "sandbox")
    const accounts: Array<Ledger.LedgerAccount> = []
    const transfers: Array<Ledger.LedgerTransfer> = []
    const transactions: Array<Transactions.StoredTransaction> = []
    yield* Store.walk(store, Ledger.LedgerAccounts, { order: "byScope", partition: scope }, (a) => Effect.sync(() => accounts.push(a)))
    yield* Store.walk(store, Ledger.LedgerTransfers, { order: "byScope", partition: scope }, (t) => Effect.sync(() => transfers.push(t)))
    yield* Store.walk(store, Transactions.Transactions, { order: Transactions.ofScope, partition: scope }, (t) => Effect.sync(() => transactions.push(t)))
    const { violations, counts, assets } = auditRows(scope, accounts, transfers, transactions)
    const violationCount = Object.values(counts).reduce((a, b) => a + b, 0)
    return {
      clean: violationCount === 0,
      checkedAt: toIso(yield* Clock.currentTimeMillis),
      scanned: { accounts: accounts.length, transfers: transfers.length, transactions: transactions.length, assets },
      checks: (Object.keys(AuditChecks) as Array<AuditCheck>).map((name) => ({ name, description: AuditChecks[name], violations: counts[name] })),
      violations,
      violationCount
    }
  })

/**
 * The audit's checks over one scope's ledger rows and transactions, however they were read: the sandbox's (the
 * audit), or a snapshot file's before it is imported (SnapshotFiles.ts). Amounts must be decimal integer text, as
 * the ledger writes them (a file's are checked for it before).
 */
export const auditRows = (
  scope: string,
  accounts: ReadonlyArray<Ledger.LedgerAccount>,
  transfers: ReadonlyArray<Ledger.LedgerTransfer>,
  transactions: ReadonlyArray<Pick<Transactions.StoredTransaction, "id" | "status" | "holds">>
): { readonly violations: ReadonlyArray<AuditViolation>; readonly counts: Readonly<Record<AuditCheck, number>>; readonly assets: number } => {
  const violations: Array<AuditViolation> = []
  const counts: Record<AuditCheck, number> = { zero_sum: 0, no_negative_customer_account: 0, totals_match_transfers: 0, holds_match_transactions: 0 }
  const report = (v: AuditViolation) => {
    counts[v.check]++
    if (violations.length < maxViolationsShown) violations.push(v)
  }
  const shown = (id: string) => withoutScope(scope, id)

  // Recompute every account's totals from the transfers alone.
  const byId = new Map<string, Ledger.LedgerTransfer>(transfers.map((t) => [t.id, t]))
  const recomputed = new Map<string, Totals>()
  const totalsOf = (id: string) => {
    let t = recomputed.get(id)
    if (t === undefined) recomputed.set(id, t = zero())
    return t
  }
  const resolved = new Set<string>()
  for (const t of transfers) {
    const amount = BigInt(t.amount)
    const debit = totalsOf(t.debitAccountId)
    const credit = totalsOf(t.creditAccountId)
    if (t.kind === "posted") {
      debit.debitsPosted += amount
      credit.creditsPosted += amount
    } else if (t.kind === "pending") {
      debit.debitsPending += amount
      credit.creditsPending += amount
    } else {
      const pending = t.resolves === undefined ? undefined : byId.get(t.resolves)
      if (pending === undefined || pending.kind !== "pending") {
        report({ check: "totals_match_transfers", transferId: t.id, detail: `${t.kind} ${t.id} resolves ${t.resolves ?? "nothing"}, which is not a pending transfer of this ledger` })
        continue
      }
      resolved.add(pending.id)
      const reserved = BigInt(pending.amount)
      debit.debitsPending -= reserved
      credit.creditsPending -= reserved
      if (t.kind === "post") {
        debit.debitsPosted += amount
        credit.creditsPosted += amount
      }
    }
  }

  const known = new Set(accounts.map((a) => a.id))
  for (const id of recomputed.keys()) {
    if (!known.has(id)) report({ check: "totals_match_transfers", accountId: shown(id), detail: `transfers name account ${shown(id)}, which does not exist` })
  }

  const sums = new Map<string, Totals>()
  for (const a of accounts) {
    const asset = a.chain === undefined ? a.asset : `${a.asset}@${a.chain}`
    const stored: Totals = {
      debitsPending: BigInt(a.debitsPending),
      debitsPosted: BigInt(a.debitsPosted),
      creditsPending: BigInt(a.creditsPending),
      creditsPosted: BigInt(a.creditsPosted)
    }
    const sum = sums.get(asset) ?? zero()
    for (const k of Object.keys(sum) as Array<keyof Totals>) sum[k] += stored[k]
    sums.set(asset, sum)
    const fromTransfers = recomputed.get(a.id) ?? zero()
    const differ = (Object.keys(stored) as Array<keyof Totals>).filter((k) => stored[k] !== fromTransfers[k])
    if (differ.length > 0) {
      report({
        check: "totals_match_transfers",
        accountId: shown(a.id),
        asset,
        detail: `${shown(a.id)} keeps ${differ.map((k) => `${k} ${stored[k]}`).join(", ")}; its transfers sum to ${differ.map((k) => `${k} ${fromTransfers[k]}`).join(", ")} (units)`
      })
    }
    if (Ledger.isCustomerHolder(a.holderType) && stored.debitsPosted + stored.debitsPending > stored.creditsPosted) {
      report({
        check: "no_negative_customer_account",
        accountId: shown(a.id),
        asset,
        detail: `${shown(a.id)} has spent and reserved ${stored.debitsPosted + stored.debitsPending} units against ${stored.creditsPosted} credited`
      })
    }
  }
  for (const [asset, s] of sums) {
    if (s.debitsPosted !== s.creditsPosted || s.debitsPending !== s.creditsPending) {
      report({
        check: "zero_sum",
        asset,
        detail: `${asset}: posted debits ${s.debitsPosted} against credits ${s.creditsPosted}; pending debits ${s.debitsPending} against credits ${s.creditsPending} (units)`
      })
    }
  }

  // Holds against their transactions' states.
  const pendingOf = new Map<string, Array<Ledger.LedgerTransfer>>()
  for (const t of transfers) {
    if (t.kind !== "pending" || t.transactionId === undefined) continue
    pendingOf.set(t.transactionId, [...(pendingOf.get(t.transactionId) ?? []), t])
  }
  for (const txn of transactions) {
    if (TransactionMachine.terminalStatuses.has(txn.status)) {
      for (const p of pendingOf.get(txn.id) ?? []) {
        if (!resolved.has(p.id)) {
          report({ check: "holds_match_transactions", transactionId: txn.id, transferId: p.id, detail: `${txn.id} is ${txn.status} but its hold ${p.id} is still pending` })
        }
      }
      continue
    }
    for (const hold of txn.holds) {
      const id = typeof hold === "string" ? hold : hold.id
      const booked = byId.get(id)
      if (booked === undefined || booked.kind !== "pending") {
        report({ check: "holds_match_transactions", transactionId: txn.id, transferId: id, detail: `${txn.id} is ${txn.status} and holds ${id}, which is not a pending transfer` })
      } else if (resolved.has(id)) {
        report({ check: "holds_match_transactions", transactionId: txn.id, transferId: id, detail: `${txn.id} is ${txn.status} and holds ${id}, which was already posted or voided` })
      }
    }
  }

  return { violations, counts, assets: sums.size }
}
