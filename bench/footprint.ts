/**
 * What the memory store keeps of the worlds a suite makes and throws away: the heap after a full collection, before and after `N` (300) forks of the small fixture, each
 * deleted (after 50 more, not counted, as a warm-up), then after `N` resets of the parent, each followed by a
 * restore. A store that keeps nothing of a deleted fork grows by what the engine keeps per organization it has
 * seen; run with `node --expose-gc`.
 *
 *   node --expose-gc --conditions=@fos/source bench/footprint.ts
 */
import { createEngine } from "@fos/http"
import { engineClient } from "./engineClient.ts"
import { buildFixture } from "./fixture.ts"
import { benchSeed } from "./record.ts"

const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error("run with node --expose-gc")
const rounds = Number(process.env.N ?? 300)
const key = `ck_sandbox_${"6b".repeat(32)}`
const engine = await createEngine({
  store: "memory",
  clock: { mode: "virtual", start: "2026-03-03T09:00:00.000Z" },
  webhookTransport: "memory",
  seed: benchSeed(key) as never,
  randomSeed: 1
})
const heapMb = () => {
  gc()
  return process.memoryUsage().heapUsed / 1e6
}
try {
  await buildFixture(engine, key, 1)
  const snapshot = await engine.snapshot()
  // A warm-up, so that what V8 compiles on the way is not counted as kept.
  for (let i = 0; i < 50; i++) await engine.deleteFork((await engine.fork(snapshot.id)).organizationId)
  const before = heapMb()
  for (let i = 0; i < rounds; i++) await engine.deleteFork((await engine.fork(snapshot.id)).organizationId)
  const afterForks = heapMb()
  const client = engineClient(engine, key, "footprint")
  for (let i = 0; i < rounds; i++) {
    await client.call("POST", "/v2/simulate/reset", undefined, 200)
    await engine.restore(snapshot.id)
  }
  const afterRestores = heapMb()
  console.log(`heap ${before.toFixed(1)} MB; after ${rounds} forks, each deleted: +${(afterForks - before).toFixed(1)} MB ` +
    `(${((afterForks - before) * 1000 / rounds).toFixed(1)} KB a fork); after ${rounds} resets and restores: +${(afterRestores - afterForks).toFixed(1)} MB`)
} finally {
  await engine.close()
}
