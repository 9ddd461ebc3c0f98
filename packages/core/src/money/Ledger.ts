/**
 * The ledger: the one place money lives, on TigerBeetle's model of accounts and transfers.
 *
 * - An **account** belongs to one holder (a customer's wallet or virtual account, or a system account of the
 *   organization's environment: the outside world per chain or rail, the service's liquidity, its fees, money in
 *   transit) and holds one asset (with its chain). It keeps four running totals, posted and pending debits and
 *   credits, so reading a balance reads one row whatever the number of transfers behind it.
 * - A **transfer** moves an amount of one asset from a debit account to a credit account. It is never edited:
 *   a mistake or a return is a new transfer. A transfer is `posted` at once, or `pending` (a reservation), which a
 *   later `post` transfer settles (for the whole amount or less, releasing the rest) or a `void` transfer releases.
 *   A pending transfer resolves at most once: the store's unique key on `resolves` refuses a second post or void.
 * - **Customer accounts never go below zero, counting reservations** (TigerBeetle's
 *   `debits_must_not_exceed_credits`): debits posted plus debits pending never exceed credits posted. The check
 *   runs on the locked account rows inside the store transaction, so two racing payouts cannot both spend one
 *   balance. System accounts may go negative: the outside world's account is where deposits come from.
 * - **Linked transfers** (`transfer` with several requests) commit all or none, in the caller's store transaction,
 *   so a conversion's legs, the transaction's state change, its events and its timers commit together.
 *
 * - **System accounts are spread over shards.** Every deposit of an organization comes out of its rail's or chain's
 *   world account; kept as one row, that row's lock serialized them all (the money bench measured sixteen
 *   connections settling fewer deposits than one). A system holder's balance in an asset is kept on `systemShards`
 *   rows, a transfer touching the shard its id hashes to; its balance is their sum. A customer account is one row,
 *   whose lock is what keeps it from going below zero.
 *
 * Amounts are integers of the asset's smallest unit (Money.ts of @fos/contract), kept as decimal text in the
 * rows, which are JSON. A balance seen from the holder is credits minus debits: `available` is what may be spent
 * (posted credits minus posted and pending debits), `pending` what is reserved (pending debits).
 */
import { type AssetCode, type Chain, formatAmount } from "@fos/contract"
import { Clock, Data, Effect } from "effect"
import * as Domain from "../kernel/Domain.ts"
import * as Store from "../kernel/Store.ts"

/** Who holds an account. Customer holders are the ones whose accounts may never go below zero. */
export const HolderTypes = ["wallet", "virtual_account", "world", "liquidity", "fees", "in_transit"] as const
export type HolderType = typeof HolderTypes[number]

const customerHolders: ReadonlySet<HolderType> = new Set(["wallet", "virtual_account"])

/** Whether an account of `type` belongs to a customer, and so may never go below zero. */
export const isCustomerHolder = (type: HolderType): boolean => customerHolders.has(type)

/** An account's holder within one organization's environment (`scope`, as Tenancy's `scopeOf` gives it). */
export interface Holder {
  readonly scope: string
  readonly type: HolderType
  /** The wallet or virtual account id; for system accounts the chain or rail they stand for (`chain:base`). */
  readonly id: string
}

/** The asset an account holds: on-chain assets carry their chain. */
export interface LedgerAsset {
  readonly code: AssetCode
  readonly chain?: Chain | undefined
}

export interface LedgerAccount {
  /** `<scope>/<holder type>/<holder id>/<asset>[@chain]`: derived, so every writer names the same account. */
  readonly id: string
  readonly scope: string
  readonly holderType: HolderType
  readonly holderId: string
  readonly asset: AssetCode
  readonly chain?: Chain | undefined
  /** Which of a system holder's rows this is (customer accounts have one row and no shard). */
  readonly shard?: number | undefined
  readonly debitsPending: string
  readonly debitsPosted: string
  readonly creditsPending: string
  readonly creditsPosted: string
  readonly createdAt: number
}

export const TransferKinds = ["posted", "pending", "post", "void"] as const
export type TransferKind = typeof TransferKinds[number]

export interface LedgerTransfer {
  /** Chosen by the caller from the business fact it books (`<transaction id>/settle`), so a retry cannot book twice. */
  readonly id: string
  readonly scope: string
  readonly kind: TransferKind
  readonly debitAccountId: string
  readonly creditAccountId: string
  readonly asset: AssetCode
  readonly chain?: Chain | undefined
  /** Units of the asset: for `post` the amount settled, for `void` the amount released. */
  readonly amount: string
  /** The pending transfer a `post` or `void` resolves. */
  readonly resolves?: string | undefined
  /** The business transaction it belongs to, when there is one. */
  readonly transactionId?: string | undefined
  /** Why money moved (`deposit`, `fee`, `spread`, `return`, ...): for reading the ledger, never for logic. */
  readonly code: string
  /** The store-wide sequence number: the order transfers were booked in. */
  readonly sequence: number
  readonly createdAt: number
}

const holderOfAccount = (a: LedgerAccount) => `${a.scope}/${a.holderType}/${a.holderId}`

export const LedgerAccounts = Store.table<LedgerAccount>({
  name: "ledger_accounts",
  key: (a) => a.id,
  orders: {
    // A holder's accounts, one per asset: what a wallet or virtual account read shows.
    byHolder: {
      partition: holderOfAccount,
      sort: (a) => a.shard === undefined ? assetKey(a.asset, a.chain) : `${assetKey(a.asset, a.chain)}#${String(a.shard).padStart(2, "0")}`,
      counted: false
    },
    // Every account of an organization's environment: for audits (all balances sum to zero per asset) and reset.
    byScope: { partition: (a) => a.scope, sort: (a) => a.id, counted: false }
  }
})

export const LedgerTransfers = Store.table<LedgerTransfer>({
  name: "ledger_transfers",
  key: (t) => t.id,
  // A pending transfer is resolved (posted or voided) at most once.
  unique: { resolves: (t) => t.resolves },
  orders: {
    byDebit: { partition: (t) => t.debitAccountId, sort: (t) => t.sequence, counted: false },
    byCredit: { partition: (t) => t.creditAccountId, sort: (t) => t.sequence, counted: false },
    byTransaction: { partition: (t) => t.transactionId ?? "", sort: (t) => t.sequence, counted: false },
    // Every transfer of an organization's environment: for audits and reset.
    byScope: { partition: (t) => t.scope, sort: (t) => t.sequence, counted: false }
  }
})

/** The ledger's accounts and transfers of each sandbox. */
export const domain = Domain.make({
  name: "money/Ledger",
  tables: [
    { ...Domain.inScope(LedgerTransfers, "byScope"), counted: "ledgerTransfers" },
    Domain.inScope(LedgerAccounts, "byScope")
  ]
})

const assetKey = (code: AssetCode, chain: Chain | undefined) => (chain === undefined ? code : `${code}@${chain}`)

/** The id of the account `holder` keeps `asset` in (for a system holder, on `shard`). */
export const accountId = (holder: Holder, asset: LedgerAsset, shard?: number): string =>
  `${holder.scope}/${holder.type}/${holder.id}/${assetKey(asset.code, asset.chain)}${shard === undefined ? "" : `#${shard}`}`

/** How many rows a system holder's balance in one asset is spread over. */
export const systemShards = 256

/** The shard a transfer books a system holder's side on: a hash of the transfer's id (FNV-1a), so it is stable. */
const shardOf = (transferId: string): number => {
  let hash = 0x811c9dc5
  for (let i = 0; i < transferId.length; i++) hash = Math.imul(hash ^ transferId.charCodeAt(i), 0x01000193)
  return (hash >>> 0) % systemShards
}

/** The account a transfer books `holder`'s side on. */
const bookedAccount = (holder: Holder, asset: LedgerAsset, transferId: string) =>
  customerHolders.has(holder.type)
    ? { id: accountId(holder, asset), shard: undefined }
    : { id: accountId(holder, asset, shardOf(transferId)), shard: shardOf(transferId) }

/** What a caller asks the ledger to book. */
export type TransferRequest =
  | {
    readonly kind: "posted" | "pending"
    readonly id: string
    readonly debit: Holder
    readonly credit: Holder
    readonly asset: LedgerAsset
    readonly amount: bigint
    readonly code: string
    readonly transactionId?: string | undefined
  }
  | {
    readonly kind: "post"
    readonly id: string
    /** The pending transfer to settle. */
    readonly pendingId: string
    /** That pending transfer as `transfer` booked it, when the caller kept it: spares reading it. */
    readonly pending?: LedgerTransfer | undefined
    /** At most the pending amount; the rest is released. The whole pending amount when omitted. */
    readonly amount?: bigint | undefined
    readonly code: string
    readonly transactionId?: string | undefined
  }
  | {
    readonly kind: "void"
    readonly id: string
    readonly pendingId: string
    readonly pending?: LedgerTransfer | undefined
    readonly code: string
    readonly transactionId?: string | undefined
  }

type Resolving = Extract<TransferRequest, { readonly pendingId: string }>
const resolving = (request: TransferRequest): request is Resolving => request.kind === "post" || request.kind === "void"

/** Why the ledger refused a batch; nothing of the batch was booked. */
export class LedgerRefusal extends Data.TaggedError("LedgerRefusal")<{
  readonly reason:
    | "insufficient_funds"
    | "transfer_exists"
    | "pending_not_found"
    | "pending_already_resolved"
    | "exceeds_pending_amount"
    | "not_positive"
    | "same_account"
  /** The request of the batch that was refused. */
  readonly transferId: string
  /** The account that would have gone below zero, for insufficient_funds. */
  readonly accountId?: string | undefined
}> {}

interface Totals {
  debitsPending: bigint
  debitsPosted: bigint
  creditsPending: bigint
  creditsPosted: bigint
}

const totalsOf = (a: LedgerAccount): Totals => ({
  debitsPending: BigInt(a.debitsPending),
  debitsPosted: BigInt(a.debitsPosted),
  creditsPending: BigInt(a.creditsPending),
  creditsPosted: BigInt(a.creditsPosted)
})

/**
 * Books `requests` as one linked batch: every transfer, or none. Runs in the caller's store transaction (or one of
 * its own), locking each account it touches in id order, so concurrent batches never wait on each other in a
 * cycle. Fails with `LedgerRefusal` naming the first request that could not be booked.
 */
export const transfer = (requests: ReadonlyArray<TransferRequest>): Effect.Effect<ReadonlyArray<LedgerTransfer>, LedgerRefusal, Store.Store> =>
  Effect.flatMap(Store.Store, (store) =>
    store.transaction(Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis

      // The pending transfers the batch resolves, and the accounts every request touches.
      const pendings = new Map<string, LedgerTransfer>()
      const wanted = new Map<string, { holder: Holder; asset: LedgerAsset; shard: number | undefined }>()
      for (const request of requests) {
        if (!resolving(request)) {
          for (const holder of [request.debit, request.credit]) {
            const booked = bookedAccount(holder, request.asset, request.id)
            wanted.set(booked.id, { holder, asset: request.asset, shard: booked.shard })
          }
          continue
        }
        const pendingId = request.pendingId
        if (request.pending !== undefined && request.pending.id !== pendingId) {
          return yield* Effect.die(new Error(`transfer ${request.id}: the pending transfer given is ${request.pending.id}, not ${pendingId}`))
        }
        // A pending transfer is never edited, so the caller's copy is the row; whether it is still unresolved is the
        // store's unique key on \`resolves\` to say.
        const pending = pendings.get(pendingId) ?? request.pending ?? (yield* store.get(LedgerTransfers, pendingId))
        if (pending === undefined || pending.kind !== "pending") {
          return yield* new LedgerRefusal({ reason: "pending_not_found", transferId: request.id })
        }
        pendings.set(pending.id, pending)
      }

      // Lock in id order; an account seen for the first time is created empty.
      const accounts = new Map<string, LedgerAccount>()
      const totals = new Map<string, Totals>()
      const ids = [...new Set([...wanted.keys(), ...[...pendings.values()].flatMap((p) => [p.debitAccountId, p.creditAccountId])])].sort()
      // Every account that exists, locked in id order in one statement; then the ones to open, in id order. Two
      // batches sharing an existing account queue at the first step, before either opens anything, and batches
      // opening the same accounts open them in one order, so no two batches wait on each other in a cycle.
      for (const account of yield* store.getManyForUpdate(LedgerAccounts, ids)) accounts.set(account.id, account)
      for (const id of ids) {
        if (accounts.has(id)) continue
        const want = wanted.get(id)
        accounts.set(id, yield* (want === undefined ? lockExisting(id) : lockOrOpen(id, want.holder, want.asset, want.shard, now)))
      }
      for (const id of ids) totals.set(id, totalsOf(accounts.get(id)!))

      const booked: Array<LedgerTransfer> = []
      const resolvedInBatch = new Set<string>()
      for (const request of requests) {
        const sequence = yield* store.nextSequence
        const base = { id: request.id, code: request.code, transactionId: request.transactionId, sequence, createdAt: now }
        if (!resolving(request)) {
          const debitId = bookedAccount(request.debit, request.asset, request.id).id
          const creditId = bookedAccount(request.credit, request.asset, request.id).id
          if (request.amount <= 0n) return yield* new LedgerRefusal({ reason: "not_positive", transferId: request.id })
          if (debitId === creditId) return yield* new LedgerRefusal({ reason: "same_account", transferId: request.id })
          const debit = totals.get(debitId)!
          const credit = totals.get(creditId)!
          if (request.kind === "posted") {
            debit.debitsPosted += request.amount
            credit.creditsPosted += request.amount
          } else {
            debit.debitsPending += request.amount
            credit.creditsPending += request.amount
          }
          const refusal = overdrawn(accounts.get(debitId)!, debit, request.id)
          if (refusal !== undefined) return yield* refusal
          booked.push({
            ...base,
            scope: request.debit.scope,
            kind: request.kind,
            debitAccountId: debitId,
            creditAccountId: creditId,
            asset: request.asset.code,
            chain: request.asset.chain,
            amount: request.amount.toString()
          })
          continue
        }
        const pending = pendings.get(request.pendingId)!
        if (resolvedInBatch.has(pending.id)) return yield* new LedgerRefusal({ reason: "pending_already_resolved", transferId: request.id })
        resolvedInBatch.add(pending.id)
        const reserved = BigInt(pending.amount)
        const settled = request.kind === "post" ? request.amount ?? reserved : 0n
        if (request.kind === "post" && settled <= 0n) return yield* new LedgerRefusal({ reason: "not_positive", transferId: request.id })
        if (settled > reserved) return yield* new LedgerRefusal({ reason: "exceeds_pending_amount", transferId: request.id })
        const debit = totals.get(pending.debitAccountId)!
        const credit = totals.get(pending.creditAccountId)!
        debit.debitsPending -= reserved
        credit.creditsPending -= reserved
        debit.debitsPosted += settled
        credit.creditsPosted += settled
        booked.push({
          ...base,
          scope: pending.scope,
          kind: request.kind,
          debitAccountId: pending.debitAccountId,
          creditAccountId: pending.creditAccountId,
          asset: pending.asset,
          chain: pending.chain,
          amount: (request.kind === "post" ? settled : reserved).toString(),
          resolves: pending.id
        })
      }

      yield* Effect.catchTag(store.insertMany(LedgerTransfers, booked), "UniqueViolation", (violation) =>
        Effect.fail(new LedgerRefusal({
          reason: violation.unique === "resolves" ? "pending_already_resolved" : "transfer_exists",
          transferId: violation.key
        })))
      const changed: Array<LedgerAccount> = []
      for (const [id, t] of totals) {
        const before = accounts.get(id)!
        const next: LedgerAccount = {
          ...before,
          debitsPending: t.debitsPending.toString(),
          debitsPosted: t.debitsPosted.toString(),
          creditsPending: t.creditsPending.toString(),
          creditsPosted: t.creditsPosted.toString()
        }
        if (!sameTotals(before, next)) changed.push(next)
      }
      yield* store.updateMany(LedgerAccounts, changed)
      return booked
    })))

const sameTotals = (a: LedgerAccount, b: LedgerAccount) =>
  a.debitsPending === b.debitsPending && a.debitsPosted === b.debitsPosted && a.creditsPending === b.creditsPending &&
  a.creditsPosted === b.creditsPosted

/** A customer account whose debits (posted and pending) would exceed its posted credits. */
const overdrawn = (account: LedgerAccount, t: Totals, transferId: string): LedgerRefusal | undefined =>
  customerHolders.has(account.holderType) && t.debitsPosted + t.debitsPending > t.creditsPosted
    ? new LedgerRefusal({ reason: "insufficient_funds", transferId, accountId: account.id })
    : undefined

const lockExisting = (id: string) =>
  Effect.flatMap(Store.Store, (store) => store.getForUpdate(LedgerAccounts, id)).pipe(
    Effect.flatMap((account) => account === undefined ? Effect.die(new Error(`ledger account ${id} missing`)) : Effect.succeed(account))
  )

/** The account, locked; created empty when it does not exist yet (a racing creator's row is locked instead). */
const lockOrOpen = (id: string, holder: Holder, asset: LedgerAsset, shard: number | undefined, now: number): Effect.Effect<LedgerAccount, never, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const existing = yield* store.getForUpdate(LedgerAccounts, id)
    if (existing !== undefined) return existing
    const opened: LedgerAccount = {
      id,
      scope: holder.scope,
      holderType: holder.type,
      holderId: holder.id,
      asset: asset.code,
      chain: asset.chain,
      shard,
      debitsPending: "0",
      debitsPosted: "0",
      creditsPending: "0",
      creditsPosted: "0",
      createdAt: now
    }
    // Only a refused key means a racing creator's row: any other failure is a defect and stays one.
    const inserted = yield* store.insert(LedgerAccounts, opened).pipe(Effect.as(true), Effect.catchTag("UniqueViolation", () => Effect.succeed(false)))
    if (inserted) return opened
    return yield* lockExisting(id)
  })

/** What a holder may spend and what is reserved, in one asset: units, from the holder's side. */
export interface Balance {
  readonly asset: AssetCode
  readonly chain?: Chain | undefined
  /** Posted credits minus posted and pending debits. */
  readonly available: bigint
  /** Pending debits: reserved for transfers not yet settled. */
  readonly pending: bigint
  /** Posted credits minus posted debits (available plus pending). */
  readonly posted: bigint
}

export const balanceOf = (account: LedgerAccount): Balance => {
  const t = totalsOf(account)
  return {
    asset: account.asset,
    chain: account.chain,
    available: t.creditsPosted - t.debitsPosted - t.debitsPending,
    pending: t.debitsPending,
    posted: t.creditsPosted - t.debitsPosted
  }
}

/** The most assets one holder keeps; a wallet holds a handful. */
const maxAssetsPerHolder = 100

/** A holder's balances, one per asset it has ever held, in asset order (a system holder's shards summed). */
export const balancesOf = (holder: Holder): Effect.Effect<ReadonlyArray<Balance>, never, Store.Store> =>
  Effect.flatMap(Store.Store, (store) =>
    store.page(LedgerAccounts, {
      order: "byHolder",
      partition: `${holder.scope}/${holder.type}/${holder.id}`,
      descending: false,
      backward: false,
      from: undefined,
      limit: maxAssetsPerHolder * (customerHolders.has(holder.type) ? 1 : systemShards)
    })).pipe(Effect.map((accounts) => {
      const byAsset = new Map<string, Balance>()
      for (const account of accounts) {
        const key = assetKey(account.asset, account.chain)
        const balance = balanceOf(account)
        const sum = byAsset.get(key)
        byAsset.set(key, sum === undefined ? balance : {
          ...sum,
          available: sum.available + balance.available,
          pending: sum.pending + balance.pending,
          posted: sum.posted + balance.posted
        })
      }
      return [...byAsset.values()]
    }))

/** The balance of one holder in one asset (zero when it never held it). */
export const balanceIn = (holder: Holder, asset: LedgerAsset): Effect.Effect<Balance, never, Store.Store> =>
  customerHolders.has(holder.type)
    ? Effect.flatMap(Store.Store, (store) => store.get(LedgerAccounts, accountId(holder, asset))).pipe(
      Effect.map((account) => account === undefined ? emptyBalance(asset) : balanceOf(account))
    )
    : Effect.map(balancesOf(holder), (balances) =>
      balances.find((b) => b.asset === asset.code && b.chain === asset.chain) ?? emptyBalance(asset))

/** A balance of nothing in the asset: an account money has not moved through yet. */
export const emptyBalance = (asset: LedgerAsset): Balance => ({ asset: asset.code, chain: asset.chain, available: 0n, pending: 0n, posted: 0n })

/** A balance on the wire: decimal text at the asset's precision. */
export const balanceToWire = (b: Balance) => ({
  code: b.asset,
  ...(b.chain === undefined ? {} : { chain: b.chain }),
  available: formatAmount({ asset: b.asset, units: b.available }),
  pending: formatAmount({ asset: b.asset, units: b.pending })
})
