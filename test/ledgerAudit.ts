/**
 * A ledger audit of one organization's environment, for tests: every account's four totals are what its transfers
 * add up to, every transfer's accounts exist, balances sum to zero per asset (posted and pending alike: each transfer
 * debits one account what it credits another), and no customer account (wallet, virtual account) is below zero
 * counting reservations. Answers the problems found; an empty list is a clean audit.
 */
import { Ledger, Store } from "@fos/core"
import type { Engine } from "@fos/http"
import { Effect } from "effect"

const all = <Row>(engine: Engine, table: typeof Ledger.LedgerAccounts | typeof Ledger.LedgerTransfers, scope: string) =>
  engine.run(Effect.flatMap(Store.Store, (store) =>
    store.page(table as never, { order: "byScope", partition: scope, descending: false, backward: false, from: undefined, limit: 1_000_000 }))) as Promise<ReadonlyArray<Row>>

export const ledgerOf = async (engine: Engine, scope: string) => ({
  accounts: await all<Ledger.LedgerAccount>(engine, Ledger.LedgerAccounts, scope),
  transfers: await all<Ledger.LedgerTransfer>(engine, Ledger.LedgerTransfers, scope)
})

export const auditLedger = async (engine: Engine, scope: string): Promise<Array<string>> => {
  const { accounts, transfers } = await ledgerOf(engine, scope)
  const problems: Array<string> = []
  const totals = new Map(accounts.map((a) => [a.id, { dp: 0n, dP: 0n, cp: 0n, cP: 0n }]))
  const byId = new Map(transfers.map((t) => [t.id, t]))
  const of = (id: string) => {
    const t = totals.get(id)
    if (t === undefined) problems.push(`transfer names account ${id}, which does not exist`)
    return t ?? { dp: 0n, dP: 0n, cp: 0n, cP: 0n }
  }
  for (const t of [...transfers].sort((a, b) => a.sequence - b.sequence)) {
    const amount = BigInt(t.amount)
    const debit = of(t.debitAccountId)
    const credit = of(t.creditAccountId)
    if (t.kind === "posted") {
      debit.dP += amount
      credit.cP += amount
    } else if (t.kind === "pending") {
      debit.dp += amount
      credit.cp += amount
    } else {
      const pending = byId.get(t.resolves ?? "")
      if (pending === undefined) {
        problems.push(`${t.kind} ${t.id} resolves ${t.resolves}, which does not exist`)
        continue
      }
      debit.dp -= BigInt(pending.amount)
      credit.cp -= BigInt(pending.amount)
      if (t.kind === "post") {
        debit.dP += amount
        credit.cP += amount
      }
    }
  }
  const sums = new Map<string, { posted: bigint; pending: bigint }>()
  for (const a of accounts) {
    const t = totals.get(a.id)!
    const kept = { dp: BigInt(a.debitsPending), dP: BigInt(a.debitsPosted), cp: BigInt(a.creditsPending), cP: BigInt(a.creditsPosted) }
    if (kept.dp !== t.dp || kept.dP !== t.dP || kept.cp !== t.cp || kept.cP !== t.cP) {
      problems.push(`account ${a.id} keeps totals its transfers do not add up to`)
    }
    const asset = a.chain === undefined ? a.asset : `${a.asset}@${a.chain}`
    const sum = sums.get(asset) ?? { posted: 0n, pending: 0n }
    sums.set(asset, { posted: sum.posted + kept.cP - kept.dP, pending: sum.pending + kept.cp - kept.dp })
    if ((a.holderType === "wallet" || a.holderType === "virtual_account") && kept.dP + kept.dp > kept.cP) {
      problems.push(`customer account ${a.id} is below zero`)
    }
  }
  for (const [asset, sum] of sums) {
    if (sum.posted !== 0n || sum.pending !== 0n) problems.push(`${asset} does not sum to zero (posted ${sum.posted}, pending ${sum.pending})`)
  }
  return problems
}
