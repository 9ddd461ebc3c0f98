/**
 * The views a team queries on PostgreSQL (docs/storage.md, "Reading the data with SQL"): after a journey, each
 * resource's rows read through `fos.<resource>` with typed columns, and what they say is what the API answered.
 */
import { layerPostgresClient, layerPostgresStore } from "@fos/sql"
import { createEngine, type Engine } from "@fos/http"
import { Effect, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { adminUrl, freshDatabase } from "../adapters/sql/test/databases.ts"
import { acmeKey, journey, journeySeed } from "./journey.ts"
import { clientOf } from "./onboardingFixtures.ts"

describe.skipIf(adminUrl === undefined || adminUrl === "")("the fos schema's views on PostgreSQL, after a journey", () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>
  let engine: Engine
  let psql: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>
  const query = <Row extends object>(text: string) => psql.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<Row>(text)))
  const api = () => clientOf(engine.fetch, "http://fos", acmeKey)

  beforeAll(async () => {
    database = await freshDatabase("views")
    engine = await createEngine({
      store: layerPostgresStore(database.url),
      clock: { mode: "virtual", start: "2026-03-03T09:00:00.000Z" },
      webhookTransport: "memory",
      seed: journeySeed as never,
      randomSeed: 56
    })
    await journey(engine.fetch, "http://fos", acmeKey, "https://hooks.views.test/journey")
    psql = ManagedRuntime.make(layerPostgresClient(database.url, { maxConnections: 1 }))
  }, 120_000)

  afterAll(async () => {
    await psql?.dispose()
    await engine?.close()
    await database?.drop()
  })

  it("answers which payouts are pending, and which completed, with their amounts as numbers", async () => {
    const payouts = (await api().call("GET", "/v2/transactions?type=withdrawal")).json.data as Array<{ id: string; status: string }>
    const rows = await query<{ id: string; status: string; destination_amount: string; rail: string; created_at: Date }>(
      `SELECT id, status, destination_amount, rail, created_at FROM fos.payouts WHERE organization_id = 'org_acme' ORDER BY created_at`
    )
    expect(rows.map((r) => [r.id, r.status])).toEqual(payouts.map((p) => [p.id, p.status]))
    expect(rows[0]).toMatchObject({ status: "completed", rail: "ach" })
    expect(Number(rows[0]!.destination_amount)).toBe(250)
    expect(rows[0]!.created_at).toBeInstanceOf(Date)
    expect(await query(`SELECT id FROM fos.payouts WHERE status = 'pending'`)).toEqual([])
  })

  it("shows every transaction, customer, wallet and order the API lists, with the API's statuses", async () => {
    const client = api()
    const pairs = async (path: string) =>
      ((await client.call("GET", path)).json.data as Array<{ id: string; status: string }>).map((r) => [r.id, r.status]).sort()
    const viewPairs = async (view: string) =>
      (await query<{ id: string; status: string }>(`SELECT id, status FROM fos.${view} WHERE organization_id = 'org_acme' AND environment = 'sandbox'`))
        .map((r) => [r.id, r.status]).sort()
    expect(await viewPairs("transactions")).toEqual(await pairs("/v2/transactions?limit=100"))
    expect(await viewPairs("customers")).toEqual(await pairs("/v2/customers"))
    const [customer] = await query<{ id: string }>(`SELECT id FROM fos.customers WHERE organization_id = 'org_acme'`)
    expect(await viewPairs("wallets")).toEqual(await pairs(`/v2/customers/${customer!.id}/wallets`))
    const [order] = await query<{ id: string; status: string; principal: string; total_debit: string; destination_amount: string }>(
      `SELECT id, status, principal, total_debit, destination_amount FROM fos.orders WHERE organization_id = 'org_acme'`
    )
    const wire = (await client.call("GET", `/v2/orders/${order!.id}`)).json
    expect(order!.status).toBe(wire.status)
    // Kept in smallest units, shown in the asset's: the wire's decimal, as a number.
    expect(order!.total_debit).toBe(wire.totalDebit.amount)
    expect(Number(order!.principal)).toBe(100)
  })

  it("types ids and statuses as text, amounts as numeric and times as timestamptz, in every view", async () => {
    const columns = await query<{ table_name: string; column_name: string; data_type: string }>(
      `SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'fos' ORDER BY table_name, ordinal_position`
    )
    const views = [...new Set(columns.map((c) => c.table_name))]
    for (const view of ["customers", "payouts", "transactions", "deposits", "orders", "wallets", "virtual_accounts", "webhook_deliveries", "events"]) {
      expect(views).toContain(view)
    }
    for (const c of columns) {
      if (/_at$|^deadline$/.test(c.column_name)) expect(c.data_type, `${c.table_name}.${c.column_name}`).toBe("timestamp with time zone")
      if (/amount$|^principal$|^total_debit$/.test(c.column_name)) expect(c.data_type, `${c.table_name}.${c.column_name}`).toBe("numeric")
      if (c.column_name === "id" || c.column_name === "status") expect(c.data_type, `${c.table_name}.${c.column_name}`).toBe("text")
    }
    // Every view reads, on a store with rows of most tables.
    for (const view of views) await query(`SELECT count(*) FROM fos.${view}`)
  })
})
