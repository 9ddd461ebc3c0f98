/**
 * The tables sandbox snapshots are kept in (Snapshots.ts). Apart from it, since the registry of what a reset keeps
 * (Reset.ts, `keptTables`) names them and Snapshots.ts reads that registry.
 */
import type { SandboxCounts, SnapshotId } from "@fos/contract"
import * as Store from "./kernel/Store.ts"

export interface StoredSnapshot {
  readonly id: SnapshotId
  readonly organizationId: string
  /** The store's sequence when it was taken: lists it in the order snapshots were taken, even within one instant. */
  readonly sequence: number
  readonly createdAt: string
  readonly rows: number
  readonly contents: SandboxCounts
  /**
   * Its rows are in the store's copy of the same id (Store.ts, `Copies`); absent on a snapshot taken before, whose
   * rows are `SnapshotRows`, made into a copy at its first restore.
   */
  readonly copied?: true
}

export const Snapshots = Store.table<StoredSnapshot>({
  name: "snapshots",
  key: (s) => s.id,
  orders: { byOrganization: { partition: (s) => s.organizationId, sort: (s) => s.sequence } }
})

/** One saved row of a snapshot taken before snapshots were copies: the table it goes back to and the row as it was stored. */
export interface SnapshotRow {
  /** `<snapshot id>/<n>`. */
  readonly id: string
  readonly snapshotId: string
  /** Its place in the snapshot: rows go back in the order they were saved. */
  readonly n: number
  readonly tbl: string
  readonly row: unknown
}

export const SnapshotRows = Store.table<SnapshotRow>({
  name: "snapshot_rows",
  key: (r) => r.id,
  orders: { bySnapshot: { partition: (r) => r.snapshotId, sort: (r) => r.n, counted: false } }
})

