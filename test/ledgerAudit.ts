/**
 * The ledger of one organization's sandbox, for tests that compare it row for row, and its audit: the engine's own
 * (`LedgerAudit.auditLedger`, what `GET /sandbox/v2/simulate/ledger/audit` answers), as a list of violations; an
 * empty list is a clean audit.
 */
import { Ledger, LedgerAudit, Store } from "@fos/core"
import type { Engine } from "@fos/http"
import { Effect } from "effect"

const all = <Row>(engine: Engine, table: typeof Ledger.LedgerAccounts | typeof Ledger.LedgerTransfers, scope: string) =>
  engine.run(Effect.flatMap(Store.Store, (store) =>
    store.page(table as never, { order: "byScope", partition: scope, descending: false, backward: false, from: undefined, limit: 1_000_000 }))) as Promise<ReadonlyArray<Row>>

export const ledgerOf = async (engine: Engine, scope: string) => ({
  accounts: await all<Ledger.LedgerAccount>(engine, Ledger.LedgerAccounts, scope),
  transfers: await all<Ledger.LedgerTransfer>(engine, Ledger.LedgerTransfers, scope)
})

/** The sandbox ledger's audit (`scope` is `org_…/sandbox`): every violation, as `check: detail`. */
export const auditLedger = async (engine: Engine, scope: string): Promise<Array<string>> => {
  const report = await engine.run(LedgerAudit.auditLedger(scope.slice(0, scope.indexOf("/"))))
  return report.violations.map((v) => `${v.check}: ${v.detail}`)
}
