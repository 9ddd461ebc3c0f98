/**
 * A snapshot carried from one store to another (bench/tester.ts, bench/snapshots.ts): a world built once through the
 * API on the memory store, then put into the SQL stores as the same snapshot, with no rebuilding.
 */
import { Domain, Snapshots, Store } from "@fos/core"
import type { Engine } from "@fos/http"
import { Effect } from "effect"

export interface Carried {
  readonly snapshot: Snapshots.StoredSnapshot
  readonly rows: ReadonlyArray<{ readonly table: string; readonly row: unknown }>
}

/** A snapshot of `engine`'s organization: its `Snapshots` row and every row of its copy. */
export const carried = async (engine: Engine): Promise<Carried> => {
  const taken = await engine.snapshot()
  const [snapshot, rows] = await engine.run(Effect.flatMap(Store.Store, (store) =>
    Effect.all([store.get(Snapshots.Snapshots, taken.id), store.copies.rows(taken.id)])))
  return { snapshot: snapshot!, rows }
}

/** Puts a carried snapshot into `engine`'s store, a table's rows at a time; answers its id. */
export const put = async (engine: Engine, world: Carried): Promise<string> => {
  const registry = await engine.run(Domain.Domains)
  const tablesByName = new Map(registry.sandboxTables.map((step) => [step.table.name, step.table]))
  await engine.run(Effect.flatMap(Store.Store, (store) =>
    store.transaction(Effect.gen(function*() {
      yield* Effect.orDie(store.insert(Snapshots.Snapshots, world.snapshot))
      // Ids made of the store's sequence (a timer's) must not be made again for the rows carried in: the sequence
      // moves past the one the snapshot was taken at, which is past every number its rows hold.
      while ((yield* store.nextSequence) < world.snapshot.sequence) continue
      const byTable = new Map<string, Array<unknown>>()
      for (const { table, row } of world.rows) byTable.set(table, [...(byTable.get(table) ?? []), row])
      for (const [table, rows] of byTable) {
        for (let i = 0; i < rows.length; i += 200) yield* store.copies.saveRows(world.snapshot.id, tablesByName.get(table)!, rows.slice(i, i + 200))
      }
    }))))
  return world.snapshot.id
}
