/**
 * The statements an idempotent write sends PostgreSQL, counted on the wire (an idempotent write makes at
 * most 4 round trips; docs/decisions/0003-lazy-transactions.md). A relay between the engine and the database
 * (test/pgRelay.ts) reads the client's side of PostgreSQL's protocol: each `Sync` ends an extended-protocol exchange
 * (Parse, Bind, Execute), each `Query` is a simple one, and the text of every statement bound is known from its
 * `Parse`. The engine's real clock stands still (a virtual one), so its heartbeat and its scheduler send nothing while
 * the writes run; the recent requests, which a process inserts off the request's path, are told apart by their table.
 *
 * Without this test a change that adds a statement to every write would go unseen until the next bench.
 */
import { Timers } from "@fos/core"
import { createEngine, type Engine } from "@fos/http"
import { layerPostgresStore } from "@fos/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { adminUrl, freshDatabase } from "../adapters/sql/test/databases.ts"
import { protocolReader, type Relay, relayTo, throughRelay, type Wire } from "./pgRelay.ts"
import { call, keysOf, orgSeed, seedOf, START_MS } from "./support.ts"

/** What a process sends off a request's path: the recent requests, and their notifications. */
const upkeep = /\bfos_requests\b|pg_notify|\bLISTEN\b/i

/** Every exchange recorded since `marks` (each connection's count of exchanges then) that is not upkeep. */
const exchangesSince = (wires: ReadonlyArray<Wire>, marks: ReadonlyArray<number>): Array<ReadonlyArray<string>> =>
  wires.flatMap((wire, i) => wire.exchanges.slice(marks[i] ?? 0)).filter((statements) => statements.length > 0 && !statements.some((s) => upkeep.test(s)))

describe.skipIf(adminUrl === undefined || adminUrl === "")("an idempotent write on PostgreSQL, on the wire", () => {
  const A = keysOf("a")
  let database: Awaited<ReturnType<typeof freshDatabase>>
  const wires: Array<Wire> = []
  let relay: Relay
  let engine: Engine

  beforeAll(async () => {
    database = await freshDatabase("round_trips")
    relay = await relayTo(new URL(database.url), protocolReader(wires))
    engine = await createEngine({
      store: layerPostgresStore(throughRelay(database.url, relay)),
      clock: { mode: "virtual", start: START_MS },
      realClock: Timers.makeVirtualClock(START_MS),
      seed: seedOf(orgSeed("a", { rateLimit: { sustainedPerSecond: 100_000, burst: 100_000 } })) as never
    })
  }, 60_000)

  afterAll(async () => {
    await engine?.close()
    await relay?.down()
    await database?.drop()
  })

  const advance = (key: string) =>
    call(engine, "/sandbox/v2/simulate/clock/advance", { method: "POST", key: A.sandbox, body: { seconds: 0 }, headers: { "idempotency-key": key } })

  it("sends at most 5 statements, in at most 5 exchanges, for a fresh Idempotency-Key, and 3 for a replay", async () => {
    // Warm: the key's hash, the statements prepared, the pool's connections open.
    for (let i = 0; i < 3; i++) expect((await advance(`warm-${i}`)).status).toBe(200)

    const sent: Array<number> = []
    const replayed: Array<number> = []
    for (let i = 0; i < 5; i++) {
      const marks = wires.map((w) => w.exchanges.length)
      expect((await advance(`fresh-${i}`)).status).toBe(200)
      const fresh = exchangesSince(wires, marks)
      sent.push(fresh.length, fresh.flat().length)

      const again = wires.map((w) => w.exchanges.length)
      const replay = await advance(`fresh-${i}`)
      expect(replay.headers.get("idempotency-replayed")).toBe("true")
      replayed.push(exchangesSince(wires, again).length)
    }
    // The key with its organization and clock, the shared bucket's take (sent at once beside it, so the two are one
    // round trip's wait), the claim, the look for a due timer, and the kept answer with its retention timer committed
    // in one statement: 5 statements on 4 round trips. (Each write's exchanges, then its statements.)
    expect(Math.max(...sent), JSON.stringify(sent)).toBeLessThanOrEqual(5)
    // A replay: the key (the bucket's take beside it) and the claim, which answers the kept response.
    expect(Math.max(...replayed), JSON.stringify(replayed)).toBeLessThanOrEqual(3)
  })
})
