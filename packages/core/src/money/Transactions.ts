/**
 * Transactions: the record of every movement of money (deposits now; conversions, payouts and orders' legs as they
 * arrive), driven through the spec's state table (TransactionMachine.ts).
 *
 * A transaction holds its money in the ledger as pending transfers (`holds`) while it is open: a deposit's credit,
 * a payout's reservation. Its ledger legs always match its status: open, the holds are pending; completed, every
 * hold is posted; failed or cancelled, every hold is voided, except a bank payout returned after completion, whose
 * holds stay posted and whose principal comes back as new posted transfers (move `return`). The state change, the
 * ledger legs, the status events (with their `sequence`) and any timer commit in one store transaction.
 *
 * `failureMessage` is always the catalog text of `failureCode` (TransactionFailureMessages); a simulate call's
 * reason never reaches it, as the spec requires.
 *
 * This module is the only writer of the transactions table. A transaction is born whole (`Transactions.open` takes
 * everything it starts with: its route, a payout's purpose, documents and recipient, the wallet whose roster signs
 * it, a deposit's sender-information window), and every later change is a named operation here: `Transactions.move`
 * for the state table's moves, and `setHasRfi`, `recordSenderInformation`, `requestPayoutCancel`,
 * `addDestinationReferences` and `recordSigning` for the facts other modules report. The signing of a transfer
 * keeps its own state in its own table (signing/TransferSigning.ts); the transaction keeps only what its wire and
 * its own path need of it: `queuePosition`, whether the quorum was met (`signed`), and whether the receive policy
 * holds it (`heldByReceivePolicy`).
 *
 * Money never imports signing or orders: what they do when a transaction ends, or when a transfer needs its
 * roster's signatures, they subscribe to through the topics declared here (`TransactionEnded`,
 * `SignaturesRequested`); Subscriptions.ts names every subscriber.
 *
 * It is a little over 600 lines because it is the table's one writer: each named operation is short, and moving
 * some of them elsewhere would give the table a second writer again, which is what this module exists to prevent.
 */
import {
  type CancellationReason,
  type Chain,
  type CustomerId,
  DepositReturnedFailureMessage,
  type Environment,
  type Fee,
  type OrderId,
  type PayoutRail,
  type SenderInformation,
  Transaction as TransactionSchema,
  type Transaction as TransactionWire,
  TransactionCancellationMessages,
  type TransactionFailureCode,
  TransactionFailureMessages,
  type TransactionId,
  type TransactionSide,
  TransactionSorts,
  type TransactionStage,
  type TransactionStatus,
  type TransactionType,
  toIso,
  type WireReceiveDetails
} from "@fos/contract"
import { Clock, Effect } from "effect"
import type * as Auth from "../tenancy/Auth.ts"
import * as Domain from "../kernel/Domain.ts"
import * as History from "../kernel/History.ts"
import * as IdGenerator from "../kernel/IdGenerator.ts"
import * as Ledger from "./Ledger.ts"
import * as Outbox from "../kernel/Outbox.ts"
import * as Outcomes from "../simulate/Outcomes.ts"
import * as Paging from "../kernel/Paging.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Topics from "../kernel/Topics.ts"
import * as TransactionMachine from "./TransactionMachine.ts"
import * as Wire from "../kernel/Wire.ts"

/**
 * A transaction's row: the wire's members it keeps as they are, typed by the contract's `Transaction`, its machine's
 * state, and its own. Its failure and return fields are null until set, where the wire omits them.
 */
export interface StoredTransaction
  extends
    TransactionMachine.MachineState,
    Wire.Stored<TransactionWire, "id" | "customerId" | "type" | "source" | "destination" | "fees" | "clientReferenceId" | "linkedOrderId" | "hasRfi" | "createdAt" | "updatedAt">
{
  readonly organizationId: string
  readonly environment: Environment
  /** Fiat payouts only: the rail (null while not known). */
  readonly payoutRail: PayoutRail | null | undefined
  readonly failureCode: TransactionFailureCode | null
  readonly returnedAt: string | null
  readonly returnReason: string | null
  readonly returnCode: string | null
  readonly queuePosition: number | null
  /** While a deposit waits for its sender's details: when the window ends. */
  readonly senderInformationExpiresAt?: string | undefined
  /** The sender's details, as the caller supplied them. */
  readonly senderInformation?: SenderInformation | undefined
  /** A wire deposit into a virtual account: what the sender's bank sent with it (the wire's originator fields). */
  readonly wireReceiveDetails?: WireReceiveDetails | undefined
  /** A deposit's way in or a payout's way out (its bank rail or chain), which decides when it settles. */
  readonly route?: { readonly rail: PayoutRail } | { readonly chain: Chain } | undefined
  /**
   * A deposit to an order's funding address: the service-managed wallet behind it, which no read shows, so the
   * deposit's side is the `deposit_address` and this is the ledger holder it credits (`creditedWalletId`).
   */
  readonly fundingWalletId?: string | undefined
  /** A payout's purpose, as the caller gave it. */
  readonly payoutPurpose?: string | undefined
  /** A payout's supporting documents (doc_ ids), for its reviewers. */
  readonly payoutDocumentIds?: ReadonlyArray<string> | undefined
  /** A payout's cancel asked while compliance reviewed it: the review's end decides (Payouts.ts, cancelPayout). */
  readonly cancelRequested?: boolean | undefined
  /** The saved recipient (whitelist recipient or registered address) a payout was sent to. */
  readonly payoutRecipientId?: string | undefined
  /**
   * A transfer out of a non-custodial wallet (a payout, an order's conversion, an unsupported coin's return): the
   * wallet whose roster must sign it. Its signing's state is in its own table (signing/TransferSigning.ts).
   */
  readonly signingWalletId?: string | undefined
  /** The roster's quorum was met: the transfer may be sent (a payout's send waits for it). */
  readonly signed?: true | undefined
  /** A sent crypto payout the receive policy held (signing/WalletFreeze.ts): it no longer settles. */
  readonly heldByReceivePolicy?: true | undefined
  /**
   * The pending ledger transfers the transaction holds while it is open, as booked, so posting or voiding them needs
   * no read (a row an earlier build stored keeps only their ids).
   */
  readonly holds: ReadonlyArray<Ledger.LedgerTransfer | string>
  /** The sequence of its last status event (1 after transaction.created). */
  readonly sequence: number
}

// --- lists ---------------------------------------------------------------------------------------------------------

/** The filters of `GET /v2/transactions`; any combination pages over a keyset order of its own. */
export interface TransactionFilter {
  readonly type?: TransactionType | undefined
  readonly status?: TransactionStatus | undefined
  readonly customerId?: string | undefined
}

const filterKeys = ["type", "status", "customerId"] as const
type FilterKey = typeof filterKeys[number]

const filterValue = (t: StoredTransaction, key: FilterKey): string => (key === "customerId" ? t.customerId : t[key])

/** One keyset order per sort and combination of the filters (kernel/Paging.ts); the createdAt ones count. */
export const Transactions = Store.table<StoredTransaction>({
  name: "transactions",
  key: (t) => t.id,
  orders: Paging.filteredOrders({
    filters: filterKeys,
    sorts: TransactionSorts,
    scope: (t: StoredTransaction) => Tenancy.scopeOf(t.organizationId, t.environment),
    value: filterValue,
    sort: (t, sortBy) => t[sortBy],
    countedSort: "createdAt"
  })
})

/** The order of every transaction of a scope (no filter), whose partition is the scope itself. */
export const ofScope = Paging.filterOrderName("createdAt", [])

/** A sandbox's transactions (payouts, deposits, returns, an order's legs); their timers are their owners'. */
export const domain = Domain.make({
  name: "money/Transactions",
  tables: [{ ...Domain.inScope(Transactions, ofScope), counted: "transactions", readsAs: (t: StoredTransaction) => ({ schema: TransactionSchema, value: toWire(t) }) }]
})

/** The rail or chain a transaction's money moves over. */
const routeOf = (t: StoredTransaction): { readonly rail?: PayoutRail; readonly chain?: Chain } => {
  if (t.route !== undefined) return t.route
  if (t.payoutRail !== undefined && t.payoutRail !== null) return { rail: t.payoutRail }
  const chain = t.destination.assetAmount.chain ?? t.source.assetAmount.chain
  if (chain !== undefined) return { chain }
  // A bank deposit keeps its rail only in its ledger legs: the outside world's account of that rail (Deposits.ts).
  for (const hold of t.holds) {
    const rail = typeof hold === "string" ? undefined : /\/world\/rail:([a-z_]+)\//.exec(hold.debitAccountId)?.[1]
    if (rail !== undefined) return { rail: rail as PayoutRail }
  }
  return {}
}

/** The amount a rule's bounds compare: what the recipient gets on a payout, what the source sends on any other. */
const amountOf = (t: StoredTransaction): string => (t.type === "withdrawal" ? t.destination : t.source).assetAmount.amount

/** What a scripted outcome rule reads of a transaction (simulate/Outcomes.ts). */
export const outcomeFactsOf = (t: StoredTransaction): Outcomes.TransactionFacts => ({
  customerId: t.customerId,
  type: t.type,
  route: routeOf(t),
  amount: amountOf(t),
  clientReferenceId: t.clientReferenceId,
  destinationType: t.destination.type
})

/**
 * The sandbox's scripted outcome for the transaction at `phase`, if a rule matches it (used once for it); undefined
 * when none does, or outside the sandbox. Runs in the caller's store transaction.
 */
export const scriptedOutcome = <P extends Outcomes.Phase>(t: StoredTransaction, phase: P) => Outcomes.take(t, outcomeFactsOf(t), phase)

/** The wallet a transaction's destination credits: a `wallet` side's, or the one behind an order's funding address. */
export const creditedWalletId = (t: StoredTransaction): string | undefined =>
  t.destination.type === "wallet" ? t.destination.walletId : t.destination.type === "deposit_address" ? t.fundingWalletId : undefined

export const toWire = (t: StoredTransaction): TransactionWire =>
  Wire.toWire({
    id: t.id,
    type: t.type,
    status: t.status,
    // Representation rule 3: stage, the failure and return fields and queuePosition are not nullable in the spec,
    // so each is omitted until it has a value (docs/decisions.md lists the nullable fields fos sends).
    stage: t.stage ?? undefined,
    customerId: t.customerId,
    clientReferenceId: t.clientReferenceId,
    linkedOrderId: t.linkedOrderId,
    source: t.source,
    destination: t.destination,
    fees: t.fees,
    failureCode: t.failureCode ?? undefined,
    failureMessage: failureMessageOf(t) ?? undefined,
    returnedAt: t.returnedAt ?? undefined,
    returnReason: t.returnReason ?? undefined,
    returnCode: t.returnCode ?? undefined,
    queuePosition: t.queuePosition ?? undefined,
    hasRfi: t.hasRfi,
    payout: t.payoutRail === undefined ? undefined : { rail: t.payoutRail },
    // Nullable (representation rule 4): on every deposit, null unless a wire into a virtual account brought it.
    wireReceiveDetails: t.type === "deposit" ? t.wireReceiveDetails ?? null : undefined,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt
  }) as TransactionWire

/**
 * The catalog text of a failed transaction's failureCode; a deposit_return (funds sent back from an order's funding
 * address) fails with no failureCode and the catalog's fixed text.
 */
const failureMessageOf = (t: StoredTransaction): string | null =>
  t.failureCode !== null
    ? TransactionFailureMessages[t.failureCode]
    : t.status === "failed" && t.type === "deposit_return"
    ? DepositReturnedFailureMessage
    : null

const notFound = () => Problem.apiError("NOT_FOUND", "No transaction with this id exists in this organization and environment.")

export const get = (caller: Auth.Caller, id: TransactionId, forUpdate = false): Effect.Effect<StoredTransaction, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const found = yield* (forUpdate ? store.getForUpdate(Transactions, id) : store.get(Transactions, id))
    if (found === undefined || found.organizationId !== caller.organization.id || found.environment !== caller.environment) {
      return yield* notFound()
    }
    return found
  })

export const list = (
  caller: Auth.Caller,
  filter: TransactionFilter,
  query: Paging.ListQuery
): Effect.Effect<Paging.ListEnvelope<TransactionWire>, Problem.ApiError, Store.Store> => {
  const keys = filterKeys.filter((k) => filter[k] !== undefined)
  return Paging.listPage(Transactions, {
    order: Paging.filterOrderName(query.sortBy, keys),
    partition: Paging.filterPartition(Tenancy.scopeOf(caller.organization.id, caller.environment), keys, (k) => filter[k]!),
    query,
    toWire: toWire,
    countOrder: Paging.filterOrderName("createdAt", keys)
  })
}

/** The keyset order and partition that hold a scope's transactions matching `filter` (oldest first by createdAt). */
export const partition = (caller: Auth.Caller, filter: TransactionFilter) =>
  partitionIn(Tenancy.scopeOf(caller.organization.id, caller.environment), filter)

/** The same, in a scope (`organizationId/environment`) rather than a caller's: for the engine's own work. */
export const partitionIn = (scope: string, filter: TransactionFilter) => {
  const keys = filterKeys.filter((k) => filter[k] !== undefined)
  return { order: Paging.filterOrderName("createdAt", keys), partition: Paging.filterPartition(scope, keys, (k) => filter[k]!) }
}

// --- events --------------------------------------------------------------------------------------------------------

/** What every transaction.* event carries (spec, Ordering of transaction status events, 4). */
const head = (t: StoredTransaction) => ({
  transactionId: t.id,
  customerId: t.customerId,
  clientReferenceId: t.clientReferenceId,
  type: t.type,
  source: t.source,
  destination: t.destination,
  linkedOrderId: t.linkedOrderId
})

/**
 * Emits a transaction event that reports no status change (spec, Ordering of transaction status events, 3: no
 * sequence, no stage): the head every transaction.* event carries, `fields`, and occurredAt.
 */
export const emitTransactionEvent = (
  t: StoredTransaction,
  type:
    | "transaction.awaiting_signature"
    | "transaction.awaiting_user_signature"
    | "transaction.awaiting_recovery_signature"
    | "transaction.awaiting_return_signature"
    | "transaction.queue_position_changed"
    | "transaction.signature_collected"
    | "transaction.quorum_met",
  fields: Record<string, unknown>,
  occurredAt: string
): Effect.Effect<void, never, Store.Store> =>
  Effect.asVoid(Outbox.emitEvent({
    type,
    organizationId: t.organizationId,
    environment: t.environment,
    // `fields` differ by type and come from the signing modules untyped: this payload is checked at run time, where
    // the black-box tests decode every event with its catalog schema.
    data: Wire.toWire<Record<string, unknown>>({ ...head(t), ...fields, occurredAt })
  }))

/** Why a transaction ended, for the payloads of its terminal events. */
export interface Ending {
  /** null: a failure with no actionable code (a deposit_return). */
  readonly failureCode?: TransactionFailureCode | null | undefined
  /** The funds did leave although the transaction failed (a deposit_return): its holds post instead of being voided. */
  readonly postHolds?: boolean | undefined
  readonly cancellationReason?: CancellationReason | undefined
  /** transaction.rejected: the document types the reviewer would accept. */
  readonly acceptedDocumentTypes?: ReadonlyArray<string> | undefined
  /** A return after completion (move `return`): when, why and the bank's code. */
  readonly returned?: { readonly returnedAt: string; readonly returnReason: string; readonly returnCode: string } | undefined
}

const statusEventData = (event: TransactionMachine.StatusEvent, t: StoredTransaction, sequence: number, occurredAt: string, ending: Ending) => {
  const base = { ...head(t), sequence, occurredAt }
  switch (event) {
    case "transaction.processing":
    case "transaction.under_review":
      return base
    case "transaction.completed":
      return { ...base, fees: t.fees, payout: t.payoutRail === undefined ? undefined : { rail: t.payoutRail }, completedAt: occurredAt }
    case "transaction.failed": {
      const code = t.failureCode
      const message = failureMessageOf(t)!
      // No actionable code (a deposit_return): reasonCode and failureCode are omitted (rule 3), the message stays.
      if (code === null) return { ...base, status: "failed", reasonMessage: message, failureMessage: message }
      const returned = code === "returned_by_sender"
        ? { returnedAt: t.returnedAt ?? undefined, returnReason: t.returnReason ?? undefined, returnCode: t.returnCode ?? undefined }
        : {}
      return { ...base, status: "failed", reasonCode: code, reasonMessage: message, failureCode: code, failureMessage: message, ...returned }
    }
    case "transaction.rejected": {
      const message = TransactionFailureMessages.compliance_rejected
      return {
        ...base,
        status: "failed",
        reasonCode: "compliance_rejected",
        reasonMessage: message,
        failureCode: "compliance_rejected",
        failureMessage: message,
        acceptedDocumentTypes: ending.acceptedDocumentTypes ?? []
      }
    }
    case "transaction.cancelled": {
      const reason = ending.cancellationReason ?? "client_cancelled"
      return { ...base, status: "cancelled", reasonCode: reason, reasonMessage: TransactionCancellationMessages[reason], cancellationReason: reason }
    }
  }
}

// --- opening and moving ----------------------------------------------------------------------------------------------

export interface NewTransaction {
  readonly organizationId: string
  readonly environment: Environment
  readonly customerId: CustomerId
  readonly type: TransactionType
  /** The source, or how to make it from the transaction's id (a sandbox transfer's hash derives from it). */
  readonly source: TransactionSide | ((id: TransactionId) => TransactionSide)
  readonly destination: TransactionSide
  readonly fees: ReadonlyArray<Fee>
  readonly clientReferenceId?: string | undefined
  readonly linkedOrderId?: OrderId | undefined
  readonly payoutRail?: PayoutRail | null | undefined
  readonly stage?: TransactionStage | null | undefined
  /** The pending ledger transfers it holds, given its id (transfer ids derive from it). */
  readonly holds: (id: TransactionId) => ReadonlyArray<Ledger.TransferRequest>
  /** Its way in or out (a bank rail or a chain). */
  readonly route?: StoredTransaction["route"]
  /** A deposit to an order's funding address: the wallet behind it. */
  readonly fundingWalletId?: string | undefined
  /** A transfer out of a non-custodial wallet: the wallet whose roster signs it. */
  readonly signingWalletId?: string | undefined
  /** A payout: the caller's purpose, supporting documents and saved recipient. */
  readonly payoutPurpose?: string | undefined
  readonly payoutDocumentIds?: ReadonlyArray<string> | undefined
  readonly payoutRecipientId?: string | undefined
  /** A deposit that arrived without its sender's details: when the window to supply them ends. */
  readonly senderInformationExpiresAt?: string | undefined
  /** A wire deposit into a virtual account: what the sender's bank sent with it. */
  readonly wireReceiveDetails?: WireReceiveDetails | undefined
  /**
   * A move it makes as it opens (a payout that compliance must review enters review): the row is written once, in
   * its state after the move, and the move's events follow transaction.created as if it were made apart.
   */
  readonly then?: TransactionMachine.Move | undefined
}

/** What a transaction is born with beside its state, as stored (an absent fact is left out of the row). */
const bornWith = (input: NewTransaction) => {
  const facts = {
    route: input.route,
    fundingWalletId: input.fundingWalletId,
    signingWalletId: input.signingWalletId,
    payoutPurpose: input.payoutPurpose,
    payoutDocumentIds: input.payoutDocumentIds,
    payoutRecipientId: input.payoutRecipientId,
    senderInformationExpiresAt: input.senderInformationExpiresAt,
    wireReceiveDetails: input.wireReceiveDetails
  }
  return Object.fromEntries(Object.entries(facts).filter(([, v]) => v !== undefined)) as Partial<typeof facts>
}

/** Opens a transaction: books its holds, stores it pending, and emits transaction.created (sequence 1). */
export const open = (input: NewTransaction): Effect.Effect<StoredTransaction, Ledger.LedgerRefusal, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const id = yield* IdGenerator.newId("txn")
    const now = toIso(yield* Clock.currentTimeMillis)
    const holds = input.holds(id)
    for (const hold of holds) if (hold.kind !== "pending") return yield* Effect.die(new Error("a transaction's holds are pending transfers"))
    const booked = yield* Ledger.transfer(holds)
    const born: StoredTransaction = {
      ...TransactionMachine.initialState(input.stage ?? null),
      id,
      organizationId: input.organizationId,
      environment: input.environment,
      customerId: input.customerId,
      type: input.type,
      source: typeof input.source === "function" ? input.source(id) : input.source,
      destination: input.destination,
      fees: input.fees,
      clientReferenceId: input.clientReferenceId,
      linkedOrderId: input.linkedOrderId,
      payoutRail: input.payoutRail,
      failureCode: null,
      returnedAt: null,
      returnReason: null,
      returnCode: null,
      queuePosition: null,
      hasRfi: false,
      ...bornWith(input),
      holds: booked,
      sequence: 1,
      createdAt: now,
      updatedAt: now
    }
    const outcome = input.then === undefined ? { next: born, events: [] } : TransactionMachine.transition(born, input.then)
    // Only a move that keeps it open: an opening never ends a transaction (no ledger legs, no TransactionEnded).
    if ("refused" in outcome || TransactionMachine.terminalStatuses.has(outcome.next.status)) {
      return yield* Effect.die(new Error(`a transaction cannot open with the move ${input.then?.type}`))
    }
    const stored: StoredTransaction = { ...born, ...outcome.next, sequence: 1 + outcome.events.length }
    yield* store.insertFresh(Transactions, stored)
    yield* History.recordState(undefined, stored)
    yield* Outbox.emitEvent({
      type: "transaction.created",
      organizationId: stored.organizationId,
      environment: stored.environment,
      // The stage it opens in, after its first move (a payout born in review, a deposit waiting for its sender):
      // the same stage the read shows (spec: only transaction.created carries stage; omitted when it has none, as
      // representation rule 3 asks of a field the spec does not call nullable).
      data: Wire.toWire({ ...head(stored), sequence: 1 as const, stage: stored.stage ?? undefined, occurredAt: now })
    })
    let sequence = 1
    for (const event of outcome.events) {
      sequence += 1
      yield* Outbox.emitEvent({
        type: event,
        organizationId: stored.organizationId,
        environment: stored.environment,
        data: Wire.toWire(statusEventData(event, stored, sequence, now, {}))
      })
    }
    return stored
  })

/** The transfers that undo the principal of a posted transaction: each non-fee hold, from its credit side back. */
const returnLegs = (t: StoredTransaction) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const legs: Array<Ledger.TransferRequest> = []
    for (const [i, held] of t.holds.entries()) {
      const hold = typeof held === "string" ? yield* store.get(Ledger.LedgerTransfers, held) : held
      if (hold === undefined || hold.code.endsWith(".fee")) continue
      const debit = yield* store.get(Ledger.LedgerAccounts, hold.debitAccountId)
      const credit = yield* store.get(Ledger.LedgerAccounts, hold.creditAccountId)
      if (debit === undefined || credit === undefined) continue
      legs.push({
        kind: "posted",
        id: `${t.id}/return/${i}`,
        debit: { scope: credit.scope, type: credit.holderType, id: credit.holderId },
        credit: { scope: debit.scope, type: debit.holderType, id: debit.holderId },
        asset: { code: hold.asset, chain: hold.chain },
        amount: BigInt(hold.amount),
        code: `${t.type}.return`,
        transactionId: t.id
      })
    }
    return legs
  })

/**
 * Applies `move` to the transaction `id` (locked): the table's next state, the ledger legs its end calls for, and
 * its status events, each with the next sequence number. A refused move is the table's code, and changes nothing.
 */
export const move = (
  id: TransactionId,
  move: TransactionMachine.Move,
  ending: Ending = {}
): Effect.Effect<StoredTransaction, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const current = yield* store.getForUpdate(Transactions, id)
    if (current === undefined) return yield* notFound()
    const outcome = TransactionMachine.transition(current, move)
    if ("refused" in outcome) {
      return yield* Problem.apiError(outcome.refused, outcome.reason)
    }
    const now = toIso(yield* Clock.currentTimeMillis)
    const { next, events } = outcome
    const failureCode = next.status === "failed"
      ? (move.type === "reject" ? "compliance_rejected" : move.type === "return" ? "returned_by_sender" : ending.failureCode === undefined ? "provider_rejected" : ending.failureCode)
      : null
    if (move.type === "return") {
      // What it posted stays posted (a transfer is never edited); the return is new transfers that bring the
      // principal back. Fees (legs booked with a `.fee` code) are not returned: the service did its part.
      yield* Effect.orDie(Effect.flatMap(returnLegs(current), Ledger.transfer))
    } else if (next.status !== current.status && (next.status === "completed" || next.status === "failed" || next.status === "cancelled")) {
      // The money follows the status: a completed transaction posts what it held, a failed or cancelled one releases it.
      yield* Effect.orDie(Ledger.transfer(current.holds.map((hold, i): Ledger.TransferRequest => {
        const held = typeof hold === "string" ? { pendingId: hold } : { pendingId: hold.id, pending: hold }
        return next.status === "completed" || ending.postHolds === true
          ? { kind: "post", id: `${id}/post/${i}`, ...held, code: `${current.type}.settle`, transactionId: id }
          : { kind: "void", id: `${id}/void/${i}`, ...held, code: `${current.type}.${next.status}`, transactionId: id }
      })))
    }
    const moved: StoredTransaction = {
      ...current,
      ...next,
      ...(ending.returned ?? {}),
      failureCode,
      sequence: current.sequence + events.length,
      updatedAt: now
    }
    yield* Effect.orDie(store.update(Transactions, moved))
    yield* History.recordState(current, moved)
    let sequence = current.sequence
    for (const event of events) {
      sequence += 1
      yield* Outbox.emitEvent({
        type: event,
        organizationId: moved.organizationId,
        environment: moved.environment,
        data: Wire.toWire(statusEventData(event, moved, sequence, now, ending))
      })
    }
    // The transaction ended (money landed on a customer's account, or a deposit failed): what waits for it (an
    // autoExecute order, a signing seat) moves in this store transaction.
    if (TransactionMachine.terminalStatuses.has(moved.status) && !TransactionMachine.terminalStatuses.has(current.status)) yield* Topics.publish(TransactionEnded, moved)
    return moved
  })

// --- what others report ----------------------------------------------------------------------------------------------

/** Applies `change` to the transaction `id` (locked) and stores it; the change decides updatedAt. */
const patch = (id: TransactionId, change: (t: StoredTransaction, now: string) => StoredTransaction | undefined) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const current = yield* store.getForUpdate(Transactions, id)
    if (current === undefined) return yield* Effect.die(new Error(`no transaction ${id}`))
    const next = change(current, toIso(yield* Clock.currentTimeMillis))
    if (next === undefined) return current
    yield* Effect.orDie(store.update(Transactions, next))
    return next
  })

/** Whether an RFI of the transaction is open (Rfis.ts); not a change of the resource's own, so updatedAt stays. */
export const setHasRfi = (id: TransactionId, hasRfi: boolean): Effect.Effect<StoredTransaction, never, Store.Store> =>
  patch(id, (t) => (t.hasRfi === hasRfi ? undefined : { ...t, hasRfi }))

/** The sender's details, supplied for a deposit waiting on them (Deposits.ts): its window closes. */
export const recordSenderInformation = (id: TransactionId, information: SenderInformation): Effect.Effect<StoredTransaction, never, Store.Store> =>
  patch(id, (t) => ({ ...t, senderInformation: information, senderInformationExpiresAt: undefined }))

/** A payout's cancel asked while compliance reviews it: the review's end decides (Payouts.ts). */
export const requestPayoutCancel = (id: TransactionId): Effect.Effect<StoredTransaction, never, Store.Store> =>
  patch(id, (t) => ({ ...t, cancelRequested: true }))

/** References the network gave the transfer (a txHash, a trace number): added to its destination. */
export const addDestinationReferences = (
  id: TransactionId,
  references: Readonly<Record<string, string>>
): Effect.Effect<StoredTransaction, never, Store.Store> =>
  patch(id, (t) => (Object.keys(references).length === 0 ? undefined : { ...t, destination: { ...t.destination, ...references } as TransactionSide }))

/** What a transfer's signing shows on its transaction; each report is a change of the resource (updatedAt). */
export interface SigningReport {
  /** Its place in its wallet's signing queue (1 is next), or null once it left the queue. */
  readonly queuePosition?: number | null | undefined
  /** The roster's quorum was met. */
  readonly signed?: true | undefined
  /** The receive policy held it after it was sent. */
  readonly heldByReceivePolicy?: true | undefined
}

/** Records a step of the transfer's signing (signing/TransferSigning.ts, signing/WalletFreeze.ts). */
export const recordSigning = (id: TransactionId, report: SigningReport = {}): Effect.Effect<StoredTransaction, never, Store.Store> =>
  patch(id, (t, now) => ({
    ...t,
    ...(report.queuePosition === undefined ? {} : { queuePosition: report.queuePosition }),
    ...(report.signed === undefined ? {} : { signed: report.signed }),
    ...(report.heldByReceivePolicy === undefined ? {} : { heldByReceivePolicy: report.heldByReceivePolicy }),
    updatedAt: now
  }))

/** The failure codes a transfer's signing fails it with (signing/SigningMachine.ts, and a frozen wallet's). */
const signingFailureCodes: ReadonlySet<TransactionFailureCode | null> = new Set<TransactionFailureCode>([
  "user_signature_expired",
  "user_signature_timeout",
  "user_signature_declined",
  "roster_changed",
  "crypto_wallet_misconfigured"
])

/** Whether the transfer failed in its roster's signing (an order's conversion fails with it, Orders.ts). */
export const failedInSigning = (t: StoredTransaction): boolean =>
  t.status === "failed" && t.signingWalletId !== undefined && t.signed !== true && signingFailureCodes.has(t.failureCode)

// --- topics ----------------------------------------------------------------------------------------------------------

/**
 * A transaction reached its first terminal status, in the store transaction that moved it: orders execute what its
 * credit covers or fail what waited on it; signing frees its wallet's seat (Subscriptions.ts).
 */
export const TransactionEnded = Topics.topic<StoredTransaction>("fos/TransactionEnded")

/** What a transfer asks of its roster's signing: what its quorum hands back to, and whether it is a return. */
export interface SignatureRequest {
  /** The transfer (processing, with `signingWalletId`). */
  readonly transaction: StoredTransaction
  /** What its quorum hands back to: a timer of its own path, `delayMs` later. */
  readonly onQuorum: { readonly kind: string; readonly payload: unknown; readonly delayMs: number }
  /** An unsupported coin's return to its sender: signed without a seat (it is not a payout). */
  readonly return?: { readonly destinationAddress: string } | undefined
}

/**
 * A transfer out of a non-custodial wallet is processing and needs its roster's signatures: signing starts it, or
 * (asked again after a review) goes on where it stands, handing back at once when the quorum was already met.
 */
export const SignaturesRequested = Topics.topic<SignatureRequest>("fos/SignaturesRequested")
