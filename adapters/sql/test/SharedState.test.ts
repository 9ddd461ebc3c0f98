/**
 * What the processes sharing a PostgreSQL database keep for the service (SharedState.ts), on DATABASE_URL: two
 * stores standing for two processes, each with its own connection pool. Runs when DATABASE_URL is set (CI sets it).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect, ManagedRuntime } from "effect"
import { SharedState, Store } from "@fos/core"
import { layerPostgresStore } from "../src/index.ts"
import { adminUrl, freshDatabase } from "./databases.ts"

let database: Awaited<ReturnType<typeof freshDatabase>> | undefined
let runtimes: Array<ManagedRuntime.ManagedRuntime<Store.Store, unknown>> = []
const sharedOf = async (runtime: ManagedRuntime.ManagedRuntime<Store.Store, unknown>) =>
  (await runtime.runPromise(Effect.service(Store.Store))).shared!

describe.skipIf(adminUrl === undefined || adminUrl === "")("the shared state of a PostgreSQL store", () => {
  beforeAll(async () => {
    database = await freshDatabase("shared")
    runtimes = [ManagedRuntime.make(layerPostgresStore(database.url, { maxConnections: 4 })), ManagedRuntime.make(layerPostgresStore(database.url, { maxConnections: 4 }))]
    for (const runtime of runtimes) await runtime.runPromise(Effect.void)
  }, 60_000)
  afterAll(async () => {
    for (const runtime of runtimes) await runtime.dispose()
    await database?.drop()
  })

  it("takes a bucket's tokens once for both processes, refills it on real time and on any process's advances", async () => {
    const [a, b] = [await sharedOf(runtimes[0]!), await sharedOf(runtimes[1]!)]
    const spec = { perSecond: 2, burst: 5 }
    const take = (shared: typeof a, want: number, nowMs: number) => runtimes[0]!.runPromise(shared.buckets.take("org_x", "general", spec, want, nowMs))
    expect(await take(a, 3, 1_000)).toEqual({ taken: 3, tokens: 2 })
    expect(await take(b, 3, 1_000)).toEqual({ taken: 2, tokens: 0 })
    // Half a second refills one token; a clock a little behind refills nothing and takes nothing back.
    expect(await take(a, 3, 1_500)).toEqual({ taken: 1, tokens: 0 })
    expect(await take(b, 1, 1_400)).toEqual({ taken: 0, tokens: 0 })
    // An advance on one process counts for both.
    await runtimes[1]!.runPromise(b.buckets.advanced(1_000))
    expect(await take(a, 5, 1_500)).toEqual({ taken: 2, tokens: 0 })
    // Another bucket, and another scope, are full and apart.
    expect(await runtimes[0]!.runPromise(a.buckets.take("org_x", "documents", spec, 1, 1_500))).toEqual({ taken: 1, tokens: 4 })
    expect(await runtimes[0]!.runPromise(a.buckets.take("org_y", "general", spec, 1, 1_500))).toEqual({ taken: 1, tokens: 4 })
  })

  it("keeps both processes' requests in one list, newest first, paged, the newest 500 of each scope, and tells each process", async () => {
    const [a, b] = [await sharedOf(runtimes[0]!), await sharedOf(runtimes[1]!)]
    const heardByB: Array<SharedState.SharedRequestRecord> = []
    const stop = b.requests.subscribe((r) => heardByB.push(r))
    await runtimes[1]!.runPromise(b.requests.listening)
    const record = (shared: typeof a, by: string, n: number, answeredMs: number, environment: "sandbox" | "live" = "sandbox") =>
      shared.requests.record({ organizationId: "org_list", environment, answeredMs, answeredBy: by, n, json: JSON.stringify({ n, by }) })
    // Interleaved in time, recorded by two processes.
    for (let i = 0; i < 10; i++) record(i % 2 === 0 ? a : b, i % 2 === 0 ? "aaaa" : "bbbb", i, 1_000 + i)
    record(a, "aaaa", 100, 5_000, "live")
    // A process's own records are in its reads; the other's, once its insert is in.
    await new Promise((r) => setTimeout(r, 200))
    const first = await runtimes[0]!.runPromise(a.requests.newest("org_list", "sandbox", undefined, 4))
    expect(first.total).toBe(10)
    expect(first.records.map((r) => r.n)).toEqual([9, 8, 7, 6])
    expect(first.records.map((r) => r.answeredBy)).toEqual(["bbbb", "aaaa", "bbbb", "aaaa"])
    const last = first.records[3]!
    const second = await runtimes[0]!.runPromise(a.requests.newest("org_list", "sandbox", last, 100))
    expect(second.records.map((r) => r.n)).toEqual([5, 4, 3, 2, 1, 0])
    expect((await runtimes[1]!.runPromise(b.requests.newest("org_list", "live", undefined, 10))).records.map((r) => r.json)).toEqual([JSON.stringify({ n: 100, by: "aaaa" })])
    // B heard every sandbox record, its own and A's, and none of the live one.
    expect(heardByB.map((r) => r.n).sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    stop()

    // Past the bound: the newest 500 are read, and the older are removed.
    for (let i = 0; i < 1_200; i++) record(a, "aaaa", 1_000 + i, 10_000 + i)
    const page = await runtimes[0]!.runPromise(a.requests.newest("org_list", "sandbox", undefined, 1))
    expect(page.total).toBe(SharedState.requestsKeptPerScope)
    expect(page.records[0]!.n).toBe(2_199)
  })
})
