/**
 * `npm run bench:snapshots`: the time to snapshot and to restore an organization holding 10,000 transactions
 * (docs/snapshots.md), on the memory store and on PGlite, embedded (`createEngine`, virtual clock).
 *
 * The organization is built through the engine's HTTP API on the memory store: one onboarded DEU customer with an
 * active EUR virtual account, one webhook endpoint (the in-memory receiver answers 200), then
 * `BENCH_SNAPSHOT_TRANSACTIONS` (10,000) deposits of 1.00 EUR with Idempotency-Keys, the clock run until idle after
 * each thousand, so every deposit settles on its timer and its events are delivered. The same organization reaches
 * PGlite through a snapshot: the memory engine's snapshot rows are written to the PGlite store as they are and
 * restored once (untimed), which is much faster than making 10,000 deposits there again. Then, on each store,
 * `BENCH_SNAPSHOT_ROUNDS` (3) times: `engine.snapshot()` and `engine.restore(id)`, each timed on its own (wall clock,
 * one at a time; nothing else runs); the median is recorded, with the rows a snapshot holds. The snapshot is deleted
 * after each round, so every round saves the same sandbox.
 *
 * Results go to stdout and to the section of docs/performance.md between `<!-- bench:snapshots:start -->` and
 * `<!-- bench:snapshots:end -->` (BENCH_NO_DOCS=1 leaves the docs alone). Nothing here asserts a time.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createEngine, type Engine } from "@fos/http"
import { layerPgliteStore, userTemplateCache } from "@fos/sql"
import { deuSubmission } from "../test/submissions.ts"
import { type Carried, carried, put } from "./carry.ts"
import { engineClient } from "./engineClient.ts"
import { benchSeed, recordSection } from "./record.ts"

const key = `ck_sandbox_${"5a".repeat(32)}`
const transactions = Number(process.env.BENCH_SNAPSHOT_TRANSACTIONS ?? 10_000)
const rounds = Number(process.env.BENCH_SNAPSHOT_ROUNDS ?? 3)
const stores = (process.env.BENCH_SNAPSHOT_STORES ?? "memory,pglite").split(",")
const log = (line: string) => console.error(`[bench:snapshots] ${line}`)


/** The bench organization's world: a customer with an active EUR account, an endpoint, `transactions` settled deposits. */
const build = async (engine: Engine) => {
  const client = engineClient(engine, key)
  await client.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.bench.test/fos" }, 201)
  const docs = {
    register: await client.upload("certificate_of_incorporation"),
    articles: await client.upload("articles_of_association"),
    passport: await client.upload("passport")
  }
  const submitted = await client.call("POST", "/v2/onboarding", deuSubmission(docs, { clientReferenceId: "bench" }), 201)
  const decided = await client.call("POST", `/v2/simulate/applications/${submitted.applicationId}/decision`, { outcome: "approved" }, 200)
  const applied = await client.call("POST", `/v2/customers/${decided.customerId}/features`, { type: "virtual_account", asset: { code: "EUR" } }, 201)
  await client.call("POST", `/v2/simulate/applications/${applied.applicationId}/decision`, { outcome: "approved" }, 200)
  await engine.clock.runUntilIdle()
  const accountId = (await client.call("GET", `/v2/customers/${decided.customerId}/virtual-accounts`)).data[0].id as string
  for (let i = 1; i <= transactions; i++) {
    await client.call("POST", "/v2/simulate/deposits", { destination: { type: "virtual_account", virtualAccountId: accountId }, assetAmount: { code: "EUR", amount: "1.00" } }, 201)
    if (i % 1000 === 0 || i === transactions) {
      await engine.clock.runUntilIdle()
      log(`${i} deposits`)
    }
  }
  const total = (await client.call("GET", "/v2/transactions?limit=1")).meta.total as number
  if (total !== transactions) throw new Error(`the organization holds ${total} transactions, not ${transactions}`)
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

interface Result {
  readonly store: string
  readonly rows: number
  readonly buildSeconds: number
  readonly snapshotMs: ReadonlyArray<number>
  readonly restoreMs: ReadonlyArray<number>
}

const seed = benchSeed(key)

const open = (store: "memory" | ReturnType<typeof layerPgliteStore>) =>
  createEngine({ store, clock: { mode: "virtual", start: "2026-03-02T09:00:00.000Z" }, webhookTransport: "memory", seed: seed as never })

/** Timed rounds of snapshot and restore on an engine that holds the bench organization. */
const rounds_ = async (name: string, engine: Engine): Promise<Omit<Result, "buildSeconds">> => {
  const snapshotMs: Array<number> = []
  const restoreMs: Array<number> = []
  let rows = 0
  for (let round = 0; round < rounds; round++) {
    const t0 = performance.now()
    const snapshot = await engine.snapshot()
    snapshotMs.push(performance.now() - t0)
    rows = snapshot.rows
    const t1 = performance.now()
    await engine.restore(snapshot.id)
    restoreMs.push(performance.now() - t1)
    await engine.deleteSnapshot(snapshot.id)
    log(`${name}: round ${round + 1}: snapshot ${snapshotMs.at(-1)!.toFixed(0)} ms, restore ${restoreMs.at(-1)!.toFixed(0)} ms, ${rows} rows`)
  }
  return { store: name, rows, snapshotMs, restoreMs }
}

const main = async () => {
  const results: Array<Result> = []
  const memory = await open("memory")
  let world: Carried
  try {
    const built = performance.now()
    await build(memory)
    const buildSeconds = (performance.now() - built) / 1000
    log(`memory: built in ${buildSeconds.toFixed(0)} s`)
    if (stores.includes("memory")) results.push({ ...(await rounds_("memory", memory)), buildSeconds })
    world = await carried(memory)
  } finally {
    await memory.close()
  }
  if (stores.includes("pglite")) {
    const dir = mkdtempSync(join(tmpdir(), "fos-bench-snapshots-"))
    const engine = await open(layerPgliteStore(dir, { templateCache: userTemplateCache() }))
    try {
      const loaded = performance.now()
      await put(engine, world)
      await engine.restore(world.snapshot.id)
      await engine.deleteSnapshot(world.snapshot.id)
      const buildSeconds = (performance.now() - loaded) / 1000
      log(`pglite: loaded in ${buildSeconds.toFixed(0)} s`)
      results.push({ ...(await rounds_("pglite", engine)), buildSeconds })
    } finally {
      await engine.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }
  const table = [
    `**Snapshots: an organization holding ${transactions.toLocaleString("en-US")} transactions.** Embedded engine (\`createEngine\`, virtual clock), one customer with an active EUR virtual account and one webhook endpoint (in-memory receiver), ${transactions.toLocaleString("en-US")} settled deposits made through the API on the memory store (carried to PGlite as its snapshot's copy and one untimed restore); then ${rounds} rounds of \`engine.snapshot()\` and \`engine.restore(id)\`, each timed alone (the snapshot deleted after each round). Median of the rounds; all rounds in brackets. A snapshot and a restore are each one store transaction (docs/snapshots.md).`,
    "",
    "| store | rows in the snapshot | snapshot (ms) | restore (ms) |",
    "|---|---:|---:|---:|",
    ...results.map((r) =>
      `| ${r.store === "pglite" ? "PGlite" : r.store} | ${r.rows.toLocaleString("en-US")} | ${median(r.snapshotMs).toFixed(0)} (${r.snapshotMs.map((x) => x.toFixed(0)).join(", ")}) | ${median(r.restoreMs).toFixed(0)} (${r.restoreMs.map((x) => x.toFixed(0)).join(", ")}) |`)
  ].join("\n")
  console.log(table)
  if (process.env.BENCH_NO_DOCS !== "1") recordSection("snapshots", table)
}

main().catch((e: unknown) => {
  console.error(e)
  process.exit(1)
})
