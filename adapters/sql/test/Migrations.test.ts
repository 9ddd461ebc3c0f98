/**
 * Migrations: applied once when several processes open one database at the same moment, and a database newer than
 * the code is refused with a message that says so. On PostgreSQL (DATABASE_URL) and PGlite.
 */
import { execFile, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Effect, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, describe, expect, it } from "vitest"
import { killAllFos, startFos } from "../../../test/fosProcess.ts"
import { Applications, type Auth, Deliveries, Endpoints, Outbox, Store, Timers, Transactions, TransferSigning, Wallets } from "@fos/core"
import { latestVersion, layerPgliteClient, layerPostgresClient, makeSqlStore, migrate, migrations } from "../src/index.ts"
import { adminUrl, freshDatabase } from "./databases.ts"
import { freshPgliteDirectory } from "./pgliteDirectory.ts"

const root = resolve(import.meta.dirname, "../../..")

const serve = (store: string) =>
  spawnSync(process.execPath, ["adapters/node/bin/fos.js", "serve", "--store", store, "--port", "0"], {
    cwd: root,
    encoding: "utf8",
    timeout: 60_000
  })

describe.skipIf(adminUrl === undefined || adminUrl === "")("migrations on PostgreSQL", () => {
  it("are applied once when four clients open a new database at the same moment", async () => {
    const database = await freshDatabase("migrate")
    const clients = Array.from({ length: 4 }, () => ManagedRuntime.make(layerPostgresClient(database.url, { maxConnections: 1 })))
    try {
      await Promise.all(clients.map((c) => c.runPromise(migrate)))
      const rows = await clients[0]!.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ version: number }>`SELECT version FROM fos_migrations ORDER BY version`))
      expect(rows.map((r) => Number(r.version))).toEqual(Array.from({ length: latestVersion }, (_, i) => i + 1))
    } finally {
      await Promise.all(clients.map((c) => c.dispose()))
      await database.drop()
    }
  }, 60_000)

  it("refuse a database migrated by a newer fos: fos serve exits non-zero and says so", async () => {
    const database = await freshDatabase("toonew")
    const client = ManagedRuntime.make(layerPostgresClient(database.url, { maxConnections: 1 }))
    try {
      await client.runPromise(migrate)
      await client.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`INSERT INTO fos_migrations (version, name) VALUES (${latestVersion + 1}, 'from the future')`))
      const run = serve(database.url)
      expect(run.status).not.toBe(0)
      expect(run.stderr).toContain(`schema version ${latestVersion + 1}, newer than this fos knows (${latestVersion})`)
      // Nothing was changed: the future version is still the latest.
      const rows = await client.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ version: number }>`SELECT max(version) AS version FROM fos_migrations`))
      expect(Number(rows[0]!.version)).toBe(latestVersion + 1)
    } finally {
      await client.dispose()
      await database.drop()
    }
  }, 60_000)
})

describe("stores an operator gets wrong", () => {
  it("an unreachable PostgreSQL: a message naming it, without the password, and a non-zero exit", () => {
    const run = serve("postgres://fos:s3cret@127.0.0.1:1/none")
    expect(run.status).not.toBe(0)
    expect(run.stderr).toContain("cannot connect")
    expect(run.stderr).toContain("127.0.0.1:1")
    expect(run.stderr).not.toContain("s3cret")
  }, 60_000)

  it.skipIf(adminUrl === undefined || adminUrl === "")("a role that cannot log in: authentication failed", () => {
    const url = new URL(adminUrl!)
    url.username = "no_such_fos_role"
    url.password = "wrong"
    const run = serve(url.toString())
    expect(run.status).not.toBe(0)
    expect(run.stderr).toContain("authentication failed")
    expect(run.stderr).not.toContain("wrong@")
  }, 60_000)

  it("a PGlite directory that cannot be created or written: a message and a non-zero exit", () => {
    const dir = mkdtempSync(join(tmpdir(), "fos-badstore-"))
    const file = join(dir, "a-file")
    writeFileSync(file, "not a directory")
    try {
      const run = serve(join(file, "data"))
      expect(run.status).not.toBe(0)
      expect(run.stderr).toContain("cannot create it")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)

})

describe("PGlite's start", () => {
  it("gives every directory a buffer pool of 16 MB, one whose own configuration says otherwise too", async () => {
    const dir = await freshPgliteDirectory("buffers")
    const showBuffers = Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ shared_buffers: string }>`SHOW shared_buffers`)
    try {
      const first = ManagedRuntime.make(layerPgliteClient(dir))
      expect((await first.runPromise(showBuffers))[0]!.shared_buffers).toBe("16MB")
      // A directory made by an earlier fos kept PostgreSQL's default in its configuration.
      await first.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`ALTER SYSTEM SET shared_buffers = '128MB'`))
      await first.dispose()
      const again = ManagedRuntime.make(layerPgliteClient(dir))
      expect((await again.runPromise(showBuffers))[0]!.shared_buffers).toBe("16MB")
      await again.dispose()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})

describe("the PGlite directory lock", () => {
  afterAll(() => killAllFos())

  it("a directory another process holds: a message naming the holder, and the directory untouched", async () => {
    const dir = await freshPgliteDirectory("heldstore")
    // The holder is this test's process; fos serve is another one.
    const holder = ManagedRuntime.make(layerPgliteClient(dir))
    try {
      await holder.runPromise(migrate)
      // Run without blocking this process, whose event loop answers the lock's connections.
      const run = await new Promise<{ status: number | null; stderr: string }>((ok) =>
        execFile(process.execPath, ["adapters/node/bin/fos.js", "serve", "--store", dir, "--port", "0"], { cwd: root, timeout: 60_000 }, (error, _out, stderr) =>
          ok({ status: error === null ? 0 : (error.code as number | null), stderr })))
      expect(run.status).toBe(1)
      expect(run.stderr).toContain(`in use by another fos process (pid ${process.pid})`)
      const rows = await holder.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ n: number }>`SELECT count(*)::int AS n FROM fos_migrations`))
      expect(rows[0]!.n).toBe(latestVersion)
    } finally {
      await holder.dispose()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)

  it("a crash never leaves a lock that blocks a start: not after SIGKILL, nor when an old lock names a live pid", async () => {
    const dir = await freshPgliteDirectory("crashlock")
    try {
      const first = await startFos(["--store", dir, "--port", "0"])
      expect((await first.stop("SIGKILL")).signal).toBe("SIGKILL")
      // The killed process's lock is still on disk, and nobody listens on it.
      const second = await startFos(["--store", dir, "--port", "0"])
      expect((await fetch(`${second.origin}/healthz`)).status).toBe(200)
      expect((await second.stop("SIGKILL")).signal).toBe("SIGKILL")
      // A lock of an older fos, a pid file, naming a pid that is alive (as after a container restart, where pids
      // start again from 1 and the crashed server's pid is now another process's).
      rmSync(join(dir, "fos.lock"), { force: true })
      writeFileSync(join(dir, "fos.lock"), String(process.pid))
      const third = await startFos(["--store", dir, "--port", "0"])
      expect((await fetch(`${third.origin}/healthz`)).status).toBe(200)
      expect((await third.stop()).code).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})

/** The orders migration 3 declared, each with its table. */
/** The orders migrations 4 and 5 added, with the index entries they write for rows already stored. */
const backfilledOrders: ReadonlyArray<readonly [string, string]> = [
  ["applications", "byCustomer"],
  ["webhook_endpoints", "live"],
  ["webhook_deliveries", "byEndpointStatus"],
  ["webhook_deliveries", "byEndpointEventType"],
  ["webhook_deliveries", "byStatusEventType"],
  ["webhook_deliveries", "byEndpointStatusEventType"],
  ["applications", "byTypeUpdatedAt"]
]

/**
 * Writes rows through the store (which indexes them in every declared order), forgets the orders migrations 4 and
 * 5 added, as a database written before it holds them, runs the migration's statements, and expects the index and
 * the counts the store wrote: the SQL of the migration computes the partitions and sorts the engine declares.
 */
const backfillMatchesTheStore = (client: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>) =>
  client.runPromise(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* migrate
    const store = yield* makeSqlStore
    const endpoint = (id: string, org: string, deletedAt?: string): Endpoints.WebhookEndpoint => ({
      id,
      organizationId: org,
      environment: "sandbox",
      url: "https://hooks.example.com/",
      subscription: { mode: "all" },
      status: deletedAt === undefined ? "active" : "disabled",
      secret: "whsec_x",
      previousSecret: undefined,
      createdAt: `2026-01-0${id.length % 9}T00:00:00.000Z`,
      updatedAt: "2026-02-01T00:00:00.000Z",
      deletedAt
    })
    for (const e of [endpoint("wep_1", "org_a"), endpoint("wep_22", "org_a", "2026-03-01T00:00:00.000Z"), endpoint("wep_333", "org_b")]) {
      yield* store.insert(Endpoints.WebhookEndpoints, e)
    }
    const statuses = ["pending", "processing", "succeeded", "failed"] as const
    for (let i = 0; i < 12; i++) {
      const delivery: Deliveries.WebhookDelivery = {
        id: `wdl_${i}`,
        organizationId: i % 5 === 0 ? "org_b" : "org_a",
        environment: i % 4 === 0 ? "live" : "sandbox",
        endpointId: `wep_${i % 3}`,
        eventId: `evt_${i}`,
        eventType: ["customer.created", "order.created"][i % 2]!,
        status: "pending",
        run: 1,
        attemptsInRun: 0,
        body: "{}",
        timerId: undefined,
        nextAttemptAt: null,
        lastAttemptAt: null,
        createdAt: `2026-01-01T00:00:${String(i % 7).padStart(2, "0")}.000Z`,
        updatedAt: "2026-01-01T00:00:00.000Z"
      }
      yield* store.insert(Deliveries.WebhookDeliveries, delivery)
      yield* store.update(Deliveries.WebhookDeliveries, { ...delivery, status: statuses[i % 4]! })
    }
    for (let i = 0; i < 4; i++) {
      yield* store.insert(Applications.Applications, {
        id: `app_${i}`,
        organizationId: "org_a",
        customerId: i === 0 ? undefined : `cus_${i % 2}`,
        environment: i === 3 ? "live" : "sandbox",
        type: i % 2 === 0 ? "customer_onboarding" : "virtual_account",
        ordinal: 0,
        houseAccount: false,
        clientReferenceId: undefined,
        createdAt: "2026-01-01T00:00:00.000Z",
        updatedAt: `2026-01-0${i + 1}T00:00:00.000Z`
      } as unknown as Applications.Application)
    }
    const snapshot = Effect.gen(function*() {
      const index = yield* sql<{ tbl: string; ord: string; part: string; sort: string; key: string }>`
        SELECT tbl, ord, part, sort, key FROM fos_orders ORDER BY tbl, ord, part, sort, key`
      const counts = yield* sql<{ tbl: string; ord: string; part: string; n: string }>`
        SELECT tbl, ord, part, sum(n)::text AS n FROM (
          SELECT tbl, ord, part, n FROM fos_counts UNION ALL SELECT tbl, ord, part, n FROM fos_count_shards) c
        GROUP BY tbl, ord, part HAVING sum(n) <> 0 ORDER BY tbl, ord, part`
      const declared = (r: { tbl: string; ord: string }) => backfilledOrders.some(([t, o]) => t === r.tbl && o === r.ord)
      return { index: index.filter(declared), counts: counts.filter(declared) }
    })
    const written = yield* snapshot
    expect(written.index.length).toBeGreaterThan(40)
    expect(written.index.some((r) => r.tbl === "webhook_endpoints" && r.key === "wep_22")).toBe(false)
    for (const [tbl, ord] of backfilledOrders) {
      yield* sql`DELETE FROM fos_orders WHERE tbl = ${tbl} AND ord = ${ord}`
      yield* sql`DELETE FROM fos_counts WHERE tbl = ${tbl} AND ord = ${ord}`
      yield* sql`DELETE FROM fos_count_shards WHERE tbl = ${tbl} AND ord = ${ord}`
    }
    const backfills = migrations.filter((m) => m.version === 4 || m.version === 5).flatMap((m) => m.statements)
    yield* sql.withTransaction(Effect.forEach(backfills, (s) => sql.unsafe(s), { discard: true }))
    expect(yield* snapshot).toEqual(written)
  }))

describe("migrations 4 and 5 index the rows already stored as the store indexes new ones", () => {
  it("on PGlite", async () => {
    const dir = await freshPgliteDirectory("backfill")
    const client = ManagedRuntime.make(layerPgliteClient(dir))
    try {
      await backfillMatchesTheStore(client)
    } finally {
      await client.dispose()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)

  it.skipIf(adminUrl === undefined || adminUrl === "")("on PostgreSQL", async () => {
    const database = await freshDatabase("backfill")
    const client = ManagedRuntime.make(layerPostgresClient(database.url, { maxConnections: 1 }))
    try {
      await backfillMatchesTheStore(client)
    } finally {
      await client.dispose()
      await database.drop()
    }
  }, 60_000)
})

/**
 * Migration 8 gives the sandbox events stored before the event log's orders (packages/core inspect/EventLog.ts) the
 * entries the store writes for new ones: the same partitions (resource and type, sandbox events only) and sorts.
 */
const eventLogBackfill = (client: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>) =>
  client.runPromise(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* migrate
    const store = yield* makeSqlStore
    const events = [
      { type: "transaction.created", data: { transactionId: "txn_1", customerId: "cus_1" } },
      { type: "transaction.completed", data: { transactionId: "txn_1" } },
      { type: "wallet_signer.added", data: { walletSignerId: "wsg_1", customerId: "cus_1" } },
      { type: "crypto_wallet.completed", data: { claimId: "clm_1", customerId: "cus_1" } },
      { type: "organization.activated", data: { organizationId: "org_a" } },
      { type: "something.unknown", data: { id: "x_1" } }
    ]
    for (const [i, e] of events.entries()) {
      for (const environment of ["sandbox", "live"] as const) {
        yield* Effect.provideService(Outbox.appendEvent({ ...e, organizationId: i % 2 === 0 ? "org_a" : "org_b", environment }), Store.Store, store)
      }
    }
    const orders = ["sandboxByResource", "sandboxByType", "sandboxByResourceType"]
    const snapshot = sql<{ ord: string; part: string; sort: string; key: string }>`
      SELECT ord, part, sort, key FROM fos_orders WHERE tbl = 'outbox' AND ord IN ${sql.in(orders)} ORDER BY ord, part, sort, key`
    const written = yield* snapshot
    expect(written.length).toBe(events.length * orders.length)
    expect(written.map((r) => r.part)).toContain("org_a/sandbox|resourceId=txn_1|type=transaction.created")
    expect(written.map((r) => r.part)).toContain("org_b/sandbox|resourceId=|type=something.unknown")
    yield* sql`DELETE FROM fos_orders WHERE tbl = 'outbox' AND ord IN ${sql.in(orders)}`
    const backfill = migrations.find((m) => m.version === 8)!.statements
    yield* sql.withTransaction(Effect.forEach(backfill, (s) => sql.unsafe(s), { discard: true }))
    expect(yield* snapshot).toEqual(written)
  }))

describe("migration 8 indexes the sandbox events already stored as the store indexes new ones", () => {
  it("on PGlite", async () => {
    const dir = await freshPgliteDirectory("eventlog")
    const client = ManagedRuntime.make(layerPgliteClient(dir))
    try {
      await eventLogBackfill(client)
    } finally {
      await client.dispose()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})

/**
 * Migration 7 moves each transfer's signing off its transaction (rows stored before it kept it as `signing`) into
 * the transfer_signings table: the moved rows read, page and update through the store as the engine writes them,
 * and the transaction keeps `signed` and `heldByReceivePolicy` as the engine now records them.
 */
const signingsMove = (client: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>) =>
  client.runPromise(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* migrate
    const store = yield* makeSqlStore
    const state = (phase: string, collected: ReadonlyArray<string> = []) => ({
      phase,
      queuePosition: phase === "queued" ? 2 : null,
      attempt: phase === "queued" ? 0 : 1,
      maxAttempts: 3,
      required: 2,
      collected,
      failureCode: null
    })
    const signing = (walletId: string, phase: string, extra: Record<string, unknown> = {}) => ({
      walletId,
      claimId: "clm_1",
      state: state(phase, phase === "quorum_met" ? ["wsg_a", "wsg_b"] : []),
      signingMode: "passkey_required",
      verificationUrl: "https://sign.example/x",
      expiresAt: "2026-01-01T00:10:00.000Z",
      onQuorum: { kind: "payout.send", payload: { transactionId: "x" }, delayMs: 1000 },
      ...extra
    })
    const transaction = (id: string, withSigning?: Record<string, unknown>) => ({
      id,
      organizationId: "org_a",
      environment: "sandbox",
      customerId: "cus_1",
      type: "withdrawal",
      status: "processing",
      stage: null,
      queuePosition: null,
      hasRfi: false,
      signingWalletId: withSigning === undefined ? undefined : withSigning.walletId,
      createdAt: `2026-01-01T00:00:0${id.length}.000Z`,
      updatedAt: "2026-01-01T00:00:00.000Z",
      ...(withSigning === undefined ? {} : { signing: withSigning })
    })
    const stored = {
      txn_queued: signing("wlt_1", "queued"),
      txn_signed: signing("wlt_1", "quorum_met"),
      txn_held: signing("wlt_2", "awaiting_signature", { recovery: { returnAddress: "0xabc" } })
    }
    for (const [id, s] of Object.entries(stored)) yield* store.insert(Transactions.Transactions, transaction(id, s) as unknown as Transactions.StoredTransaction)
    yield* store.insert(Transactions.Transactions, transaction("txn_plain") as unknown as Transactions.StoredTransaction)
    const move = migrations.find((m) => m.version === 7)!.statements
    yield* sql.withTransaction(Effect.forEach(move, (s) => sql.unsafe(s), { discard: true }))

    for (const [id, s] of Object.entries(stored)) {
      expect(yield* store.get(TransferSigning.TransferSignings, id)).toEqual({ ...s, transactionId: id, organizationId: "org_a", environment: "sandbox", customerId: "cus_1" })
      const t = (yield* store.get(Transactions.Transactions, id)) as unknown as Record<string, unknown>
      expect(t.signing).toBeUndefined()
      expect(t.signed).toBe(id === "txn_queued" ? undefined : true)
      expect(t.heldByReceivePolicy).toBe(id === "txn_held" ? true : undefined)
    }
    expect(yield* store.get(TransferSigning.TransferSignings, "txn_plain")).toBeUndefined()
    expect((yield* store.get(Transactions.Transactions, "txn_plain"))?.id).toBe("txn_plain")
    const page = () =>
      store.page(TransferSigning.TransferSignings, { order: "byScope", partition: "org_a/sandbox", descending: false, backward: false, from: undefined, limit: 10 })
    expect((yield* page()).map((s) => s.transactionId)).toEqual(["txn_held", "txn_queued", "txn_signed"])
    // A moved row updates and leaves as any: the index entries the migration wrote are the store's.
    const queued = (yield* store.get(TransferSigning.TransferSignings, "txn_queued"))!
    yield* store.update(TransferSigning.TransferSignings, { ...queued, state: { ...queued.state, queuePosition: 1 } })
    expect((yield* page()).length).toBe(3)
    expect(yield* store.removePartition(TransferSigning.TransferSignings, "byScope", "org_a/sandbox")).toBe(3)
    expect(yield* page()).toEqual([])
  }))

describe("migration 7 moves transfer signings off their transactions", () => {
  it("on PGlite", async () => {
    const dir = await freshPgliteDirectory("signings")
    const client = ManagedRuntime.make(layerPgliteClient(dir))
    try {
      await signingsMove(client)
    } finally {
      await client.dispose()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)

  it.skipIf(adminUrl === undefined || adminUrl === "")("on PostgreSQL", async () => {
    const database = await freshDatabase("signings")
    const client = ManagedRuntime.make(layerPostgresClient(database.url, { maxConnections: 1 }))
    try {
      await signingsMove(client)
    } finally {
      await client.dispose()
      await database.drop()
    }
  }, 60_000)
})

/**
 * Migration 8 puts the timers stored before it in the `byClock` order, as the store puts new ones: live timers on
 * real time, every other (sandbox, or no scope) on the virtual clocks.
 */
describe("migration 9 indexes stored timers by the clock they run on", () => {
  it("on PGlite", async () => {
    const dir = await freshPgliteDirectory("timers")
    const client = ManagedRuntime.make(layerPgliteClient(dir))
    try {
      await client.runPromise(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* migrate
        const store = yield* makeSqlStore
        yield* Timers.schedule("t.live", 3000, {}, "org_a/live").pipe(Effect.provideService(Store.Store, store))
        yield* Timers.schedule("t.sandbox", 1000, {}, "org_a/sandbox").pipe(Effect.provideService(Store.Store, store))
        yield* Timers.schedule("t.none", 2000, {}).pipe(Effect.provideService(Store.Store, store))
        const entries = () => sql<{ part: string; sort: string; key: string }>`
          SELECT part, sort, key FROM fos_orders WHERE tbl = 'timers' AND ord = 'byClock' ORDER BY part, sort, key`
        const written = yield* entries()
        expect(written.map((e) => e.part)).toEqual(["real", "virtual", "virtual"])
        yield* sql`DELETE FROM fos_orders WHERE tbl = 'timers' AND ord = 'byClock'`
        yield* sql.withTransaction(Effect.forEach(migrations.find((m) => m.version === 9)!.statements, (s) => sql.unsafe(s), { discard: true }))
        expect(yield* entries()).toEqual(written)
        const lane = (partition: string) =>
          store.page(Timers.Timers, { order: "byClock", partition, descending: false, backward: false, from: undefined, limit: 10 })
        expect((yield* lane("virtual")).map((t) => t.kind)).toEqual(["t.sandbox", "t.none"])
        expect((yield* lane("real")).map((t) => t.kind)).toEqual(["t.live"])
      }))
    } finally {
      await client.dispose()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})

/**
 * Migration 10 puts the sandbox timers stored before it in the `sandboxByResource` order, as the store puts new ones:
 * by the payload member their kind names (or a host kind's first `…Id` member), and none for a live timer or one
 * that belongs to no resource.
 */
describe("migration 10 indexes stored sandbox timers by their resource", () => {
  it("on PGlite", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fos-timer-resources-"))
    const client = ManagedRuntime.make(layerPgliteClient(dir))
    try {
      await client.runPromise(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* migrate
        const store = yield* makeSqlStore
        const schedule = (kind: string, dueAtMs: number, payload: unknown, scope?: string) =>
          Timers.schedule(kind, dueAtMs, payload, scope).pipe(Effect.provideService(Store.Store, store))
        yield* schedule("payout.settle", 1000, { transactionId: "txn_1" }, "org_a/sandbox")
        yield* schedule("webhook.attempt", 2000, { deliveryId: "wdl_1" }, "org_a/sandbox")
        yield* schedule("host.kind", 3000, { note: 1, widgetId: "wgt_1" }, "org_a/sandbox")
        yield* schedule("idempotency.expire", 4000, { id: "org_a/sandbox/key" }, "org_a/sandbox")
        yield* schedule("payout.settle", 5000, { transactionId: "txn_2" }, "org_a/live")
        const entries = () => sql<{ part: string; sort: string; key: string }>`
          SELECT part, sort, key FROM fos_orders WHERE tbl = 'timers' AND ord = 'sandboxByResource' ORDER BY part, sort, key`
        const written = yield* entries()
        expect(written.map((e) => e.part)).toEqual(["org_a/sandbox|txn_1", "org_a/sandbox|wdl_1", "org_a/sandbox|wgt_1"])
        yield* sql`DELETE FROM fos_orders WHERE tbl = 'timers' AND ord = 'sandboxByResource'`
        yield* sql.withTransaction(Effect.forEach(migrations.find((m) => m.version === 10)!.statements, (s) => sql.unsafe(s), { discard: true }))
        expect(yield* entries()).toEqual(written)
      }))
    } finally {
      await client.dispose()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})

/** Runs `test` against a new PGlite store, migrated to the latest version: its SQL client and its store. */
const onMigratedPglite = async (
  label: string,
  test: (sql: SqlClient.SqlClient, store: Store.StoreService) => Effect.Effect<void, unknown, SqlClient.SqlClient>
): Promise<void> => {
  const dir = await freshPgliteDirectory(label)
  const client = ManagedRuntime.make(layerPgliteClient(dir))
  try {
    await client.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* migrate
      yield* test(sql, yield* makeSqlStore)
    }))
  } finally {
    await client.dispose()
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * Migration 12 keeps rows as written (`json`): an object's keys come back in the order they were written, as the
 * memory store gives them, where `jsonb` ordered them by length.
 */
describe("migration 12 keeps a row's JSON as written", () => {
  it("on PGlite", () =>
    onMigratedPglite("json-rows", (sql, store) =>
      Effect.gen(function*() {
        const payload = { transactionId: "txn_1", type: "deposit", destination: { virtualAccountId: "vac_1", assetAmount: { code: "USD", amount: "1.00" } } }
        yield* Timers.schedule("host.kind", 1000, payload, "org_a/sandbox").pipe(Effect.provideService(Store.Store, store))
        const [row] = yield* sql<{ data: string }>`SELECT data::text AS data FROM fos_rows WHERE tbl = 'timers'`
        expect(row!.data).toContain(JSON.stringify(payload))
        const [column] = yield* sql<{ type: string }>`SELECT data_type AS type FROM information_schema.columns WHERE table_name = 'fos_rows' AND column_name = 'data'`
        expect(column!.type).toBe("json")
        const [read] = yield* store.page(Timers.Timers, { order: "byScope", partition: "org_a/sandbox", descending: false, backward: false, from: undefined, limit: 1 })
        expect(JSON.stringify(read!.payload)).toBe(JSON.stringify(payload))
      })), 60_000)
})

/**
 * Migration 13 indexes the timers stored before it in the `worldByScope` order, as the store indexes new ones, and
 * marks the stored `idempotency.expire` timers as housekeeping, which that order leaves out.
 */
describe("migration 13 indexes stored timers of the world, their housekeeping left out", () => {
  it("on PGlite", () =>
    onMigratedPglite("world-timers", (sql, store) =>
      Effect.gen(function*() {
        const schedule = (kind: string, dueAtMs: number, payload: unknown, scope?: string, housekeeping?: boolean) =>
          Timers.schedule(kind, dueAtMs, payload, scope, { housekeeping: housekeeping === true }).pipe(Effect.provideService(Store.Store, store))
        yield* schedule("payout.settle", 1000, { transactionId: "txn_1" }, "org_a/sandbox")
        yield* schedule("idempotency.expire", 2000, { id: "org_a/sandbox/new" }, "org_a/sandbox", true)
        yield* schedule("webhook.attempt", 3000, { deliveryId: "wdl_1" }, "org_a/live")
        yield* schedule("host.kind", 4000, {})
        const entries = () => sql<{ part: string; sort: string; key: string }>`
          SELECT part, sort, key FROM fos_orders WHERE tbl = 'timers' AND ord = 'worldByScope' ORDER BY part, sort, key`
        const written = yield* entries()
        expect(written.map((e) => e.part)).toEqual(["", "org_a/live", "org_a/sandbox"])
        // A retention timer stored before timers said they were housekeeping.
        yield* schedule("idempotency.expire", 5000, { id: "org_a/sandbox/old" }, "org_a/sandbox")
        yield* sql`DELETE FROM fos_orders WHERE tbl = 'timers' AND ord = 'worldByScope'`
        yield* sql.withTransaction(Effect.forEach(migrations.find((m) => m.version === 13)!.statements, (s) => sql.unsafe(s), { discard: true }))
        expect(yield* entries()).toEqual(written)
        const all = yield* store.page(Timers.Timers, { order: "byScope", partition: "org_a/sandbox", descending: false, backward: false, from: undefined, limit: 10 })
        expect(all.map((t) => [t.kind, t.housekeeping ?? false])).toEqual([["payout.settle", false], ["idempotency.expire", true], ["idempotency.expire", true]])
      })), 60_000)
})

/**
 * Migration 18 makes a wallet's deposit address unique per organization and environment (packages/core Wallets.ts):
 * a wallet stored before it keeps being found at its address, and so does one a snapshot copied before it, once the
 * copy is restored (its older version has its values made again).
 */
const walletAddressesMigrate = (client: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>) =>
  client.runPromise(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* migrate
    const store = yield* makeSqlStore
    const wallet = (id: string, organizationId: string, address: string): Wallets.StoredWallet => ({
      id: id as never,
      organizationId,
      environment: "sandbox",
      customerId: "cus_1" as never,
      chain: "base",
      custody: "custodial",
      status: "active",
      address,
      clientReferenceId: undefined,
      replacedByWalletId: undefined,
      createdAt: "2026-01-01T00:00:00.000Z",
      updatedAt: "2026-01-01T00:00:00.000Z"
    })
    const caller = (organizationId: string) => ({ organization: { id: organizationId }, environment: "sandbox" }) as unknown as Auth.Caller
    const at = (organizationId: string, address: string) =>
      Effect.map(Wallets.at(caller(organizationId), "base", address).pipe(Effect.provideService(Store.Store, store)), (w) => w?.id)
    yield* store.insert(Wallets.Wallets, wallet("wlt_a", "org_a", "0xAAA"))
    yield* store.insert(Wallets.Wallets, wallet("wlt_b", "org_b", "0xBBB"))
    const copied = { table: Wallets.Wallets, order: "byCustomer", partition: "org_b/sandbox/cus_1" }
    yield* store.copies.save("snp_b", [copied])
    // As a fos before migration 18 wrote them: the address alone, in the row's unique values and in the copy's.
    yield* sql`UPDATE fos_uniques SET value = split_part(value, '/', 3) WHERE tbl = 'wallets' AND name = 'address'`
    yield* sql`UPDATE fos_copy_rows SET uniques = json_build_array(json_build_array('address', 'base:0xBBB')) WHERE copy = 'snp_b'`
    yield* sql`UPDATE fos_copies SET version = 17 WHERE copy = 'snp_b'`
    expect(yield* at("org_a", "0xAAA")).toBeUndefined()
    yield* sql.withTransaction(Effect.forEach(migrations.find((m) => m.version === 18)!.statements, (s) => sql.unsafe(s), { discard: true }))
    expect(yield* at("org_a", "0xAAA")).toBe("wlt_a")
    expect(yield* at("org_b", "0xBBB")).toBe("wlt_b")
    // Another organization's sandbox does not find it, and may hold a wallet at the same address.
    expect(yield* at("org_b", "0xAAA")).toBeUndefined()
    yield* store.insert(Wallets.Wallets, wallet("wlt_c", "org_c", "0xAAA"))
    expect(yield* at("org_c", "0xAAA")).toBe("wlt_c")
    expect(yield* at("org_a", "0xAAA")).toBe("wlt_a")
    // The copy saved before: restored in place of the wallet, its value is the new one.
    yield* store.removeRows([copied])
    expect(yield* store.copies.restore("snp_b", { tables: [Wallets.Wallets], replacing: [copied] })).toBe(1)
    expect(yield* at("org_b", "0xBBB")).toBe("wlt_b")
    const [value] = yield* sql<{ value: string }>`SELECT value FROM fos_uniques WHERE tbl = 'wallets' AND key = 'wlt_b'`
    expect(value!.value).toBe("org_b/sandbox/base:0xBBB")
  }))

describe("migration 18 makes a wallet's address unique per sandbox, and a wallet stored before is found at it", () => {
  it("on PGlite", async () => {
    const dir = await freshPgliteDirectory("wallet-addresses")
    const client = ManagedRuntime.make(layerPgliteClient(dir))
    try {
      await walletAddressesMigrate(client)
    } finally {
      await client.dispose()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)

  it.skipIf(adminUrl === undefined || adminUrl === "")("on PostgreSQL", async () => {
    const database = await freshDatabase("wallet_addresses")
    const client = ManagedRuntime.make(layerPostgresClient(database.url, { maxConnections: 1 }))
    try {
      await walletAddressesMigrate(client)
    } finally {
      await client.dispose()
      await database.drop()
    }
  }, 60_000)
})
