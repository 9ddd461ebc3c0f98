/**
 * A store the previous schema version wrote opens, migrates and reads back: fixtures/previous-store.sql (its
 * writer, fixtures/writePreviousStore.ts, says what it holds) loaded into a fresh store at that version, then
 * opened by this fos, on PGlite (its rows in the tables, or still in the log) and on PostgreSQL. Every resource
 * reads back, the rows earlier builds left are what this code reads, and their timers fire.
 */
import { readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { type Domain, Domains, Idempotency, type Store } from "@fos/core"
import { createEngine, type Engine } from "@fos/http"
import { Effect, Layer, Result } from "effect"
import { SqlClient } from "effect/sql"
import { afterEach, describe, expect, it } from "vitest"
import { acmeKey, rivalKey } from "../../../test/journey.ts"
import { call, ok } from "../../../test/support.ts"
import { layerPgliteClient, layerPgliteStore, layerPostgresClient, layerPostgresStore, migrations } from "../src/index.ts"
import { adminUrl, freshDatabase } from "./databases.ts"
import { freshPgliteDirectory } from "./pgliteDirectory.ts"

/** The schema version the fixture was written at. */
const previousVersion = 20
const fixture = readFileSync(join(import.meta.dirname, "fixtures/previous-store.sql"), "utf8")
// Each statement ends a line with `;`; no row's JSON holds a line break.
const fixtureStatements = fixture.split(/;\n/).map((s) => s.replace(/^--.*\n/gm, "").trim()).filter((s) => s !== "")

/** Migrates a fresh database to `previousVersion`, as that fos did, and loads the fixture into it. */
const loadPrevious = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`CREATE TABLE fos_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`
    for (const migration of migrations.filter((m) => m.version <= previousVersion)) {
      for (const statement of migration.statements) yield* sql.unsafe(statement)
      yield* sql`INSERT INTO fos_migrations (version, name) VALUES (${migration.version}, ${migration.name})`
    }
    for (const statement of fixtureStatements) yield* sql.unsafe(statement)
  }))
})

/**
 * The fixture's rows moved from the tables into one record of the log, as a PGlite directory holds the
 * transactions committed since its last fold (ImageStore.ts).
 */
const intoTheLog = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`INSERT INTO fos_log (n, record) SELECT 1, json_build_object(
      'w', (SELECT json_object_agg(tbl, rows) FROM (SELECT tbl, json_agg(json_build_array(key, data) ORDER BY key) AS rows FROM fos_rows GROUP BY tbl) t),
      's', (SELECT last_value FROM fos_sequence))::text`)
  yield* sql`DELETE FROM fos_rows`
})

/** The timer kinds this fos fires. */
const registeredKinds: ReadonlySet<string> = new Set((Domains.all as ReadonlyArray<Domain.Domain>).flatMap((domain) => (domain.timers ?? []).map((handling) => handling.kind.name)))

const run = (layer: Layer.Layer<SqlClient.SqlClient, unknown>, effect: Effect.Effect<void, unknown, SqlClient.SqlClient>) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(Layer.build(layer), (context) => Effect.provideContext(effect, context))))

let opened: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of opened.reverse()) await close()
  opened = []
})

/** The fixture's store opened by this fos, on `name`'s store; undefined when that store is not at hand. */
const openPrevious = async (name: "PGlite" | "PGlite, log not folded" | "PostgreSQL"): Promise<Engine> => {
  let store: Layer.Layer<Store.Store, unknown>
  if (name === "PostgreSQL") {
    const database = await freshDatabase("previous")
    opened.push(database.drop)
    await run(layerPostgresClient(database.url, { maxConnections: 1 }), loadPrevious)
    store = layerPostgresStore(database.url)
  } else {
    const dir = await freshPgliteDirectory("previous")
    opened.push(async () => rmSync(dir, { recursive: true, force: true }))
    await run(layerPgliteClient(dir), name === "PGlite" ? loadPrevious : Effect.andThen(loadPrevious, intoTheLog))
    store = layerPgliteStore(dir)
  }
  const engine = await createEngine({ store, clock: { mode: "virtual" }, webhookTransport: "memory" })
  opened.push(() => engine.close())
  return engine
}

const get = (engine: Engine, path: string, key = acmeKey) => ok(call(engine, `/sandbox${path}`, { key }))
const post = (engine: Engine, path: string, body: unknown = {}, key = acmeKey) => call(engine, `/sandbox${path}`, { key, body })

const stores = ["PGlite", "PGlite, log not folded", ...(adminUrl === undefined || adminUrl === "" ? [] : ["PostgreSQL"] as const)] as const

describe.each(stores)("a store the previous version wrote, on %s", (name) => {
  it("migrates, reads every resource back, and fires the timers its legacy rows became", async () => {
    const engine = await openPrevious(name)

    // Every resource, through the API (each answer checked against the OpenAPI document).
    const customers = (await get(engine, "/v2/customers")).data
    expect(customers).toHaveLength(1)
    const customerId = customers[0].id
    const [wallet] = (await get(engine, `/v2/customers/${customerId}/wallets`)).data
    const [account] = (await get(engine, `/v2/customers/${customerId}/virtual-accounts`)).data
    await get(engine, `/v2/wallets/${wallet.id}`)
    await get(engine, `/v2/virtual-accounts/${account.id}`)
    expect((await get(engine, "/v2/applications")).data).toHaveLength(3)
    expect((await get(engine, `/v2/customers/${customerId}/whitelist-recipients`)).data).toHaveLength(1)
    expect((await get(engine, "/v2/orders")).data.map((o: { status: string }) => o.status)).toEqual(["succeeded"])
    const transactions = (await get(engine, "/v2/transactions?limit=100")).data as Array<{ id: string; type: string; status: string; destination: { type: string } }>
    expect(transactions).toHaveLength(5)
    const legacyPayout = transactions.find((t) => t.type === "withdrawal" && t.destination.type === "external_crypto")!
    expect(legacyPayout.status).toBe("pending")
    for (const t of transactions) await get(engine, `/v2/transactions/${t.id}`)
    const [endpoint] = (await get(engine, "/v2/webhooks/endpoints")).data
    await get(engine, `/v2/webhooks/endpoints/${endpoint.id}`)
    const deliveries = (await get(engine, "/v2/webhooks/deliveries?limit=100")).data
    expect(deliveries.length).toBeGreaterThan(0)
    const events = (await get(engine, "/v2/simulate/events?limit=100")).data
    expect(events.length).toBeGreaterThan(10)
    expect((await get(engine, "/v2/simulate/snapshots")).data).toHaveLength(1)
    expect((await get(engine, "/v2/simulate/ledger/audit")).clean).toBe(true)

    // The timers earlier builds scheduled are gone: the autoPayout's settle is its payout's start, and the fan-out
    // timer is no more (a fan-out runs with its event's write).
    const pendingKinds = async () =>
      ((await get(engine, "/v2/simulate/timers?limit=100")).data as Array<{ kind: string; resourceId?: string }>)
    const kinds = await pendingKinds()
    expect(kinds.map((t) => t.kind)).not.toContain("order.payout_settle")
    expect(kinds.map((t) => t.kind)).not.toContain("webhook.fanout")
    expect(kinds.filter((t) => t.resourceId === legacyPayout.id).map((t) => t.kind)).toEqual(["payout.start"])

    // They fire: the autoPayout withdrawal of before is started, sent and settled as a payout is.
    await ok(post(engine, "/v2/simulate/clock/advance", { seconds: 24 * 3600 }))
    expect((await get(engine, `/v2/transactions/${legacyPayout.id}`)).status).toBe("completed")
    expect((await get(engine, "/v2/simulate/ledger/audit")).clean).toBe(true)

    // The advance a crashed fos of before the liveness table left on rival's clock is finished by the next advance.
    const rivalBefore = (await get(engine, "/v2/simulate/clock", rivalKey)).now
    const rivalAdvanced = await ok(post(engine, "/v2/simulate/clock/advance", { seconds: 1 }, rivalKey))
    expect(Date.parse(rivalAdvanced.now)).toBe(Date.parse(rivalBefore) + 1000)

    // The claim a crashed request left before claims named their process no longer holds its key: the request runs.
    const retried = await engine.run(Effect.result(Idempotency.runIdempotent(
      { scope: "org_acme/sandbox", key: "crashed-request", fingerprint: "a".repeat(64) },
      Effect.succeed({ status: 200, contentType: "application/json", body: "{\"ran\":true}" })
    )))
    expect(Result.isSuccess(retried) && retried.success.replayed === false).toBe(true)

    // The snapshot taken with the legacy timers in it restores to timers this fos fires.
    const [snapshot] = (await get(engine, "/v2/simulate/snapshots")).data
    await ok(post(engine, `/v2/simulate/snapshots/${snapshot.id}/restore`))
    expect((await get(engine, `/v2/transactions/${legacyPayout.id}`)).status).toBe("pending")
    const restored = await pendingKinds()
    expect(restored.map((t) => t.kind)).not.toContain("order.payout_settle")
    expect(restored.map((t) => t.kind)).not.toContain("webhook.fanout")
    await ok(post(engine, "/v2/simulate/clock/advance", { seconds: 24 * 3600 }))
    expect((await get(engine, `/v2/transactions/${legacyPayout.id}`)).status).toBe("completed")

    // No row of the sandbox holds a timer this fos does not fire: the export of a snapshot of it lists every row.
    const taken = await ok(post(engine, "/v2/simulate/snapshots"), 201)
    const exported = await ok(call(engine, `/sandbox/v2/simulate/snapshots/${taken.id}/export`, { key: acmeKey }))
    const timerKinds = (exported.tables.timers as Array<{ kind: string }>).map((t) => t.kind)
    expect(timerKinds.filter((kind) => !registeredKinds.has(kind))).toEqual([])
  }, 120_000)

})
