/**
 * `npm run bench:money`: the money domain's two rows.
 *
 * 1. **Ledger: a balance read does not grow with postings.** Two wallet accounts in one store, `hot` and `cold`,
 *    each credited once from the world's account; their balance is read (`balanceIn`: one `ledger_accounts` row
 *    through the store port, and `balancesOf`: the holder's page of accounts, what a wallet read shows). Then `hot`
 *    gets N more postings through `transfer()`, in linked batches (`BENCH_MONEY_BATCH`, 1,000 by default), and both
 *    are read again. Reads alternate between the two accounts (ABBA), so drift on a shared machine hits both alike;
 *    each read is timed on its own, inside one Effect (no runtime entry per read). Goal: the read on N postings
 *    within 1.5× of the read on 1, compared on medians. On the memory store N is `BENCH_MONEY_POSTINGS` (1,000,000);
 *    on PostgreSQL (a fresh database of DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test) it is
 *    `BENCH_MONEY_PG_POSTINGS` (300,000 by default: every transfer there is six statements, and booking runs at
 *    1,000 to 3,800 a second on a 2-core machine, so a million would take 5 to 15 minutes).
 * 2. **Money write: a deposit settled through the API on PostgreSQL**, against the storage bench's idempotent write
 *    on the same server. `fos serve --store postgres://...` (virtual clock, the benches' seed) with one active EUR
 *    virtual account per connection, made through the API (onboarding, a virtual_account application, its approval, 30 s on the
 *    clock). Each autocannon connection loops over `POST /sandbox/v2/simulate/deposits` (SEPA, 100.00 EUR) and
 *    `POST /sandbox/v2/simulate/transactions/{id}/settle` on the deposit it just made, each with a fresh
 *    Idempotency-Key, as an integration would send them. Settled deposits per second, and their requests per second,
 *    against idempotent writes per second (bench/writes.ts, the storage bench's own write), alternated for
 *    `BENCH_MONEY_ROUNDS` rounds, then one round on a single connection (the cost of a deposit with nothing to wait
 *    for). Goal: at least 0.5×, read per request: a settled deposit is two requests, each doing all an idempotent
 *    write does and its money besides, so settled deposits can never reach half the writes.
 *    While deposits run, pg_stat_activity is sampled for backends waiting on row locks.
 *    At the end the accounts' balances must hold the deposits settled.
 * 3. **Order: created and executed through the API on PostgreSQL**, against the same baseline. Each customer also
 *    holds a USD virtual account; each autocannon connection loops over `POST /sandbox/v2/orders` converting 1.00 EUR
 *    of its (deposit-funded) EUR account into USD with `autoExecute`, so the one request creates the order, prices
 *    it, checks the balance and opens its transaction with every leg held (the work `POST .../execute` does after
 *    reading the order; that endpoint's dedicated bucket of 5 a second would otherwise cap the bench). An order
 *    answered 201 with a transactionId is the unit. Goal: at least 0.3×. The clock is moved to the next weekday
 *    12:00 UTC first if the foreign-exchange market is closed.
 *
 * Results go to stdout and to the section of docs/performance.md between `<!-- bench:money:start -->` and
 * `<!-- bench:money:end -->` (BENCH_NO_DOCS=1 leaves the docs alone). Nothing here asserts a time.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type AssetCode } from "@fos/contract"
import type { Store } from "@fos/core"
import { Ledger, MemoryStore } from "@fos/core"
import { layerPostgresClient, layerPostgresStore } from "@fos/sql"
import { Effect, type Layer, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { freshDatabase } from "../adapters/sql/test/databases.ts"
import { startFos } from "../test/fosProcess.ts"
import { measuredAt, recordSection, writeBenchSeed } from "./record.ts"
import { autocannon, checkClean, idempotentWrites } from "./writes.ts"

const adminUrl = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test"
const memoryPostings = Number(process.env.BENCH_MONEY_POSTINGS ?? 1_000_000)
const pgPostings = Number(process.env.BENCH_MONEY_PG_POSTINGS ?? 300_000)
const batchSize = Number(process.env.BENCH_MONEY_BATCH ?? 1_000)
const readsPerAccount = Number(process.env.BENCH_MONEY_READS ?? 20_000)
const connections = Number(process.env.BENCH_STORE_CONNECTIONS ?? 16)
const seconds = Number(process.env.BENCH_STORE_DURATION ?? 10)
const rounds = Number(process.env.BENCH_MONEY_ROUNDS ?? 2)
/** One virtual account per connection, so the deposits in flight land on different accounts. */
const virtualAccounts = connections
const key = `ck_sandbox_${"ef".repeat(32)}`
const log = (line: string) => console.error(`[bench:money] ${line}`)

// ---------------------------------------------------------------------------------------------------------------
// 1. The ledger's balance read

const scope = "org_bench/sandbox"
const usdc = { code: "USDC" as AssetCode, chain: "base" as const }
const world: Ledger.Holder = { scope, type: "world", id: "chain:base" }
const hot: Ledger.Holder = { scope, type: "wallet", id: "wlt_hot" }
const cold: Ledger.Holder = { scope, type: "wallet", id: "wlt_cold" }

interface Stats {
  readonly median: number
  readonly p99: number
}

const statsOf = (samples: Array<number>): Stats => {
  const sorted = Float64Array.from(samples).sort()
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
  return { median: at(0.5), p99: at(0.99) }
}

/** Books `count` postings of 1 unit from the world into `holder`, numbered from `from`, in linked batches. */
const book = (holder: Ledger.Holder, from: number, count: number) =>
  Effect.gen(function*() {
    const started = performance.now()
    let lastLog = started
    for (let i = from; i < from + count; i += batchSize) {
      const batch: Array<Ledger.TransferRequest> = []
      for (let j = i; j < Math.min(i + batchSize, from + count); j++) {
        batch.push({ kind: "posted", id: `${holder.id}/${j}`, debit: world, credit: holder, asset: usdc, amount: 1n, code: "deposit" })
      }
      yield* Effect.orDie(Ledger.transfer(batch))
      if (performance.now() - lastLog > 10_000) {
        lastLog = performance.now()
        const done = i + batch.length - from
        log(`  ${done.toLocaleString("en")} of ${count.toLocaleString("en")} postings (${Math.round(done / ((lastLog - started) / 1000)).toLocaleString("en")}/s)`)
      }
    }
    return (performance.now() - started) / 1000
  })

type Read = (holder: Ledger.Holder) => Effect.Effect<unknown, never, Store.Store>
const readOne: Read = (holder) => Ledger.balanceIn(holder, usdc)
const readHolder: Read = (holder) => Ledger.balancesOf(holder)

/** Each read of `a` and `b`, alternating ABBA, timed one by one in ms: `readsPerAccount` each after a warm-up. */
const timeReads = (read: Read, a: Ledger.Holder, b: Ledger.Holder) =>
  Effect.gen(function*() {
    for (let i = 0; i < Math.min(2_000, readsPerAccount); i++) {
      yield* read(a)
      yield* read(b)
    }
    const samples: [Array<number>, Array<number>] = [[], []]
    const holders = [a, b] as const
    for (let i = 0; i < readsPerAccount; i++) {
      for (const k of i % 2 === 0 ? [0, 1] as const : [1, 0] as const) {
        const t0 = performance.now()
        yield* read(holders[k])
        samples[k].push(performance.now() - t0)
      }
    }
    return [statsOf(samples[0]), statsOf(samples[1])] as const
  })

interface LedgerResult {
  readonly store: string
  readonly postings: number
  readonly bookingSeconds: number
  /** [read, holder read] × [hot, cold], before and after the postings. */
  readonly before: { readonly one: readonly [Stats, Stats]; readonly holder: readonly [Stats, Stats] }
  readonly after: { readonly one: readonly [Stats, Stats]; readonly holder: readonly [Stats, Stats] }
}

const ledgerBench = async (name: string, layer: Layer.Layer<Store.Store, unknown>, postings: number): Promise<LedgerResult> => {
  const runtime = ManagedRuntime.make(layer)
  try {
    return await runtime.runPromise(Effect.gen(function*() {
      yield* book(hot, 0, 1)
      yield* book(cold, 0, 1)
      log(`${name}: reading, 1 posting each`)
      const before = { one: yield* timeReads(readOne, hot, cold), holder: yield* timeReads(readHolder, hot, cold) }
      log(`${name}: booking ${(postings - 1).toLocaleString("en")} more postings on one account, in linked batches of ${batchSize.toLocaleString("en")}`)
      const bookingSeconds = yield* book(hot, 1, postings - 1)
      const balance = yield* Ledger.balanceIn(hot, usdc)
      if (balance.posted !== BigInt(postings)) throw new Error(`${name}: the account holds ${balance.posted} units after ${postings} postings`)
      log(`${name}: reading, ${postings.toLocaleString("en")} postings against 1`)
      const after = { one: yield* timeReads(readOne, hot, cold), holder: yield* timeReads(readHolder, hot, cold) }
      return { store: name, postings, bookingSeconds, before, after }
    }))
  } finally {
    await runtime.dispose()
  }
}

// ---------------------------------------------------------------------------------------------------------------
// 2. A deposit settled through the API

interface Reply {
  readonly status: number
  readonly json: any
  readonly text: string
}

/** A client of the bench organization's sandbox; a 429 (the onboarding buckets are 10 a burst) waits and retries. */
const clientOf = (origin: string) => {
  const send = async (path: string, init: RequestInit): Promise<Reply> => {
    for (;;) {
      const response = await fetch(`${origin}/sandbox${path}`, { ...init, headers: { "x-api-key": key, ...init.headers } })
      const text = await response.text()
      if (response.status === 429) {
        await new Promise((ok) => setTimeout(ok, 1000 * Number(response.headers.get("retry-after") ?? 1)))
        continue
      }
      return { status: response.status, text, json: text === "" ? undefined : JSON.parse(text) }
    }
  }
  let keys = 0
  const call = async (method: string, path: string, body?: unknown, expected = 200): Promise<any> => {
    const reply = await send(path, {
      method,
      headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...(method === "POST" ? { "idempotency-key": `setup-${++keys}` } : {}) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    if (reply.status !== expected) throw new Error(`${method} ${path}: ${reply.status} ${reply.text.slice(0, 300)}`)
    return reply.json
  }
  const upload = async (type: string): Promise<string> => {
    const form = new FormData()
    form.set("type", type)
    form.set("file", new Blob([new TextEncoder().encode(`%PDF-1.7\n% ${type}\n`)], { type: "application/pdf" }), `${type}.pdf`)
    const reply = await send("/v2/documents", { method: "POST", body: form })
    if (reply.status !== 201) throw new Error(`upload ${type}: ${reply.status} ${reply.text.slice(0, 300)}`)
    return reply.json.id
  }
  return { call, upload }
}

const address = { line1: "Unter den Linden 1", city: "Berlin", postalCode: "10117", country: "DEU" }

/** `count` onboarded DEU customers, each with an active EUR and an active USD virtual account, made through the API. */
const activeAccounts = async (client: ReturnType<typeof clientOf>, count: number): Promise<Array<{ readonly eur: string; readonly usd: string }>> => {
  const customers: Array<string> = []
  for (let i = 0; i < count; i++) {
    const documentIds = [await client.upload("certificate_of_incorporation"), await client.upload("articles_of_association")]
    const passport = await client.upload("passport")
    const submitted = await client.call("POST", "/v2/onboarding", {
      country: "DEU",
      businessInfo: { legalName: `Bench ${i} GmbH`, taxId: "DE123456789", registrationNumber: "HRB 123456", incorporationDate: "2019-04-01", registeredAddress: address },
      documentIds,
      ownership: {
        persons: [{
          referenceId: "ubo-1",
          roles: ["owner", "controller"],
          ownershipPercent: 60,
          firstName: "Erika",
          lastName: "Mustermann",
          dateOfBirth: "1980-02-29",
          nationality: "DEU",
          email: "erika@bench.example",
          address,
          taxId: "12345678901",
          documentIds: [passport]
        }]
      },
      companyClassification: { legalStructure: "gmbh", primaryIndustry: "software" },
      clientReferenceId: `bench-${i}`
    }, 201)
    const decided = await client.call("POST", `/v2/simulate/applications/${submitted.applicationId}/decision`, { outcome: "approved" })
    for (const code of ["EUR", "USD"]) {
      const applied = await client.call("POST", `/v2/customers/${decided.customerId}/features`, { type: "virtual_account", asset: { code } }, 201)
      await client.call("POST", `/v2/simulate/applications/${applied.applicationId}/decision`, { outcome: "approved" })
    }
    customers.push(decided.customerId)
  }
  await client.call("POST", "/v2/simulate/clock/advance", { seconds: 30 })
  const accounts: Array<{ eur: string; usd: string }> = []
  for (const customerId of customers) {
    const list = (await client.call("GET", `/v2/customers/${customerId}/virtual-accounts`)).data as Array<{ id: string; status: string; balances: Array<{ code: string }> }>
    const of = (code: string) => list.find((a) => a.status === "active" && a.balances.some((b) => b.code === code))?.id
    const eur = of("EUR")
    const usd = of("USD")
    if (eur === undefined || usd === undefined) throw new Error(`customer ${customerId}: no active EUR and USD virtual accounts (${JSON.stringify(list)})`)
    accounts.push({ eur, usd })
  }
  return accounts
}

/**
 * What the database's backends are doing while `during` runs, sampled every 100 ms from pg_stat_activity: how
 * many run a statement, and how many of those wait for a row lock another transaction holds, by the statement
 * that waits (a `FOR UPDATE` read, such as a ledger account's lock; a count's upsert; anything else).
 */
const lockWaits = async <A>(databaseUrl: string, during: () => Promise<A>) => {
  const name = new URL(databaseUrl).pathname.slice(1)
  const monitor = ManagedRuntime.make(layerPostgresClient(adminUrl, { maxConnections: 1 }))
  const sample = Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ waiting: string | null; query: string }>`SELECT wait_event_type AS waiting, query FROM pg_stat_activity
      WHERE datname = ${name} AND state = 'active' AND pid <> pg_backend_pid()`)
  const totals = { samples: 0, active: 0, waiting: 0, forUpdateLock: 0, countLock: 0, otherLock: 0 }
  let running = true
  const sampling = (async () => {
    while (running) {
      const rows = await monitor.runPromise(sample)
      totals.samples++
      totals.active += rows.length
      for (const row of rows) {
        if (row.waiting !== "Lock") continue
        totals.waiting++
        if (row.query.includes("fos_count")) totals.countLock++
        else if (row.query.includes("FOR UPDATE")) totals.forUpdateLock++
        else totals.otherLock++
      }
      await new Promise((ok) => setTimeout(ok, 100))
    }
  })()
  try {
    const result = await during()
    return { result, totals }
  } finally {
    running = false
    await sampling
    await monitor.dispose()
  }
}

let deposited = 0
let settledTotal = 0

/** Deposits made and settled per second by `connections` connections, each looping deposit then settle. */
const settledDeposits = async (origin: string, accounts: ReadonlyArray<string>, connections: number) => {
  const headers = { "x-api-key": key, "content-type": "application/json" }
  const pairs: Array<number> = []
  let recording = false
  // Each connection deposits into a virtual account of its own, as the header says.
  let nextAccount = 0
  type Context = { t0?: number; id?: string; account?: string }
  const run = (duration: number) =>
    autocannon({
      url: origin,
      connections,
      duration,
      requests: [
        {
          method: "POST",
          path: "/sandbox/v2/simulate/deposits",
          headers,
          setupRequest: (request: { headers: Record<string, string>; body: string }, context: Context) => {
            const n = deposited++
            context.account ??= accounts[nextAccount++ % accounts.length]!
            context.t0 = performance.now()
            request.headers = { ...headers, "idempotency-key": `deposit-${process.pid}-${n}` }
            request.body = JSON.stringify({
              destination: { type: "virtual_account", virtualAccountId: context.account },
              assetAmount: { code: "EUR", amount: "100.00" },
              rail: "sepa"
            })
            return request
          },
          onResponse: (status: number, body: string, context: Context) => {
            if (status === 201) context.id = (JSON.parse(body) as { id: string }).id
          }
        },
        {
          method: "POST",
          setupRequest: (request: { headers: Record<string, string>; path: string }, context: Context) => {
            if (context.id === undefined) return undefined
            request.path = `/sandbox/v2/simulate/transactions/${context.id}/settle`
            request.headers = { "x-api-key": key, "idempotency-key": `settle-${context.id}` }
            return request
          },
          onResponse: (status: number, body: string, context: Context) => {
            if (status !== 200 || (JSON.parse(body) as { status: string }).status !== "completed") return
            settledTotal++
            if (recording && context.t0 !== undefined) pairs.push(performance.now() - context.t0)
          }
        }
      ]
    })
  checkClean("deposit warm-up", await run(2))
  recording = true
  const result = await run(seconds)
  recording = false
  checkClean("deposits", result)
  const perSecond = pairs.length / seconds
  return { perSecond, requestsPerSecond: result.requests.mean, ...statsOf(pairs) }
}

let ordered = 0

/** Orders created and executed per second (autoExecute) by `connections` connections, each converting 1.00 EUR. */
const executedOrders = async (origin: string, accounts: ReadonlyArray<{ readonly eur: string; readonly usd: string }>, connections: number) => {
  const headers = { "x-api-key": key, "content-type": "application/json" }
  let executed = 0
  let recording = false
  const run = (duration: number) =>
    autocannon({
      url: origin,
      connections,
      duration,
      requests: [{
        method: "POST",
        path: "/sandbox/v2/orders",
        headers,
        setupRequest: (request: { headers: Record<string, string>; body: string }) => {
          const n = ordered++
          const pair = accounts[n % accounts.length]!
          request.headers = { ...headers, "idempotency-key": `order-${process.pid}-${n}` }
          request.body = JSON.stringify({
            source: { type: "virtual_account", virtualAccountId: pair.eur },
            destination: { type: "virtual_account", virtualAccountId: pair.usd },
            amount: "1.00",
            lockSide: "source",
            autoExecute: true
          })
          return request
        },
        onResponse: (status: number, body: string) => {
          if (recording && status === 201 && (JSON.parse(body) as { transactionId: string | null }).transactionId !== null) executed++
        }
      }]
    })
  checkClean("order warm-up", await run(2))
  recording = true
  const result = await run(seconds)
  recording = false
  checkClean("orders", result)
  return { perSecond: executed / seconds, p50: result.latency.p50, p99: result.latency.p99 }
}

/** Moves the server's virtual clock to the next weekday at 12:00 UTC when the foreign-exchange market is closed. */
const marketOpen = async (client: ReturnType<typeof clientOf>) => {
  const now = Date.parse((await client.call("GET", "/v2/simulate/clock")).now)
  const day = new Date(now).getUTCDay()
  const hour = new Date(now).getUTCHours()
  const closed = day === 6 || (day === 5 && hour >= 22) || (day === 0 && hour < 22)
  if (!closed) return
  const monday = new Date(now)
  monday.setUTCDate(monday.getUTCDate() + ((8 - day) % 7 || 7))
  monday.setUTCHours(12, 0, 0, 0)
  await client.call("POST", "/v2/simulate/clock/advance", { to: monday.toISOString() })
}

interface OrderRound {
  readonly connections: number
  readonly baseline: { readonly perSecond: number; readonly p50: number; readonly p99: number }
  readonly orders: { readonly perSecond: number; readonly p50: number; readonly p99: number }
}

interface WriteRound {
  readonly connections: number
  readonly locks: { readonly samples: number; readonly active: number; readonly waiting: number; readonly forUpdateLock: number; readonly countLock: number; readonly otherLock: number }
  readonly baseline: { readonly perSecond: number; readonly p50: number; readonly p99: number }
  readonly deposits: { readonly perSecond: number; readonly requestsPerSecond: number; readonly median: number; readonly p99: number }
}

const moneyWrites = async (): Promise<{ readonly deposits: Array<WriteRound>; readonly orders: Array<OrderRound> }> => {
  const tmp = mkdtempSync(join(tmpdir(), "fos-bench-money-"))
  const database = await freshDatabase("money", adminUrl)
  try {
    const server = await startFos(["--store", database.url, "--port", "0", "--clock", "virtual", "--seed", writeBenchSeed(tmp, key), "--quiet"])
    try {
      const client = clientOf(server.origin)
      log(`PostgreSQL: ${virtualAccounts} active virtual accounts through the API`)
      const pairs = await activeAccounts(client, virtualAccounts)
      const accounts = pairs.map((p) => p.eur)
      const out: Array<WriteRound> = []
      // The goal's rounds, then one on a single connection: the cost of a deposit with nothing to wait for.
      for (const [round, clients] of [...Array.from({ length: rounds }, (_, i) => [i + 1, connections] as const), [rounds + 1, 1] as const]) {
        log(`PostgreSQL, round ${round}: idempotent writes (the storage bench's), ${clients} connection(s), ${seconds} s`)
        const baseline = await idempotentWrites(server.origin, { key, connections: clients, seconds })
        log(`PostgreSQL, round ${round}: deposits settled, ${clients} connection(s), ${seconds} s`)
        const { result: deposits, totals: locks } = await lockWaits(database.url, () => settledDeposits(server.origin, accounts, clients))
        log(`  ${Math.round(baseline.perSecond)} writes/s, ${Math.round(deposits.perSecond)} deposits settled/s; backends running a statement ${(locks.active / locks.samples).toFixed(1)}, waiting for a lock ${(locks.waiting / locks.samples).toFixed(1)}`)
        out.push({ connections: clients, locks, baseline, deposits })
      }
      // Every settled deposit is in a balance, and nothing else is.
      let held = 0
      for (const id of accounts) {
        const balances = (await client.call("GET", `/v2/virtual-accounts/${id}`)).balances as Array<{ code: string; available: string; pending: string }>
        held += Number(balances.find((b) => b.code === "EUR")?.available ?? "0")
      }
      // A run's end can cut off a settle the server still completes: at most one per connection and run.
      const unseen = Math.round(held) / 100 - settledTotal
      if (unseen < 0 || unseen > (rounds * 2 + 2) * connections) {
        throw new Error(`the virtual accounts hold ${held.toFixed(2)} EUR, but ${settledTotal} deposits of 100.00 EUR settled`)
      }
      log(`checked: the accounts hold ${held.toLocaleString("en")} EUR; ${settledTotal.toLocaleString("en")} settles answered, ${unseen} cut off at a run's end`)
      // The orders spend what the deposits credited (1.0015 EUR each), on an open market.
      await marketOpen(client)
      const orders: Array<OrderRound> = []
      for (const [round, clients] of [...Array.from({ length: rounds }, (_, i) => [i + 1, connections] as const), [rounds + 1, 1] as const]) {
        log(`PostgreSQL, round ${round}: idempotent writes, ${clients} connection(s), ${seconds} s`)
        const baseline = await idempotentWrites(server.origin, { key, connections: clients, seconds })
        log(`PostgreSQL, round ${round}: orders created and executed, ${clients} connection(s), ${seconds} s`)
        const executed = await executedOrders(server.origin, pairs, clients)
        log(`  ${Math.round(baseline.perSecond)} writes/s, ${Math.round(executed.perSecond)} orders executed/s`)
        orders.push({ connections: clients, baseline, orders: executed })
      }
      return { deposits: out, orders }
    } finally {
      await server.stop()
    }
  } finally {
    await database.drop()
    rmSync(tmp, { recursive: true, force: true })
  }
}

// ---------------------------------------------------------------------------------------------------------------

const us = (ms: number) => (ms * 1000).toFixed(1)
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`

const main = async () => {
  const ledgers: Array<LedgerResult> = []
  log(`memory: ledger with ${memoryPostings.toLocaleString("en")} postings`)
  ledgers.push(await ledgerBench("memory", MemoryStore.layer, memoryPostings))
  const database = await freshDatabase("ledger", adminUrl)
  try {
    log(`PostgreSQL: ledger with ${pgPostings.toLocaleString("en")} postings`)
    ledgers.push(await ledgerBench("PostgreSQL", layerPostgresStore(database.url, { maxConnections: 2 }), pgPostings))
  } finally {
    await database.drop()
  }
  const { deposits: writes, orders } = await moneyWrites()

  const ledgerRows = ledgers.flatMap((l) => {
    const [hotAfter, coldAfter] = l.after.one
    const [hotBefore] = l.before.one
    const [holderHot, holderCold] = l.after.holder
    const n = l.postings.toLocaleString("en")
    const goal = (a: Stats, b: Stats) => `${ratio(a.median, b.median)} (${a.median / b.median <= 1.5 ? "met" : "not met"})`
    return [
      `| ${l.store} | \`balanceIn\`, 1 posting (before the ${n} were booked) | ${us(hotBefore.median)} | ${us(hotBefore.p99)} | |`,
      `| ${l.store} | \`balanceIn\`, 1 posting (beside them) | ${us(coldAfter.median)} | ${us(coldAfter.p99)} | |`,
      `| ${l.store} | \`balanceIn\`, **${n} postings** | ${us(hotAfter.median)} | ${us(hotAfter.p99)} | ${goal(hotAfter, coldAfter)} |`,
      `| ${l.store} | \`balancesOf\` (a wallet read's balances), 1 posting | ${us(holderCold.median)} | ${us(holderCold.p99)} | |`,
      `| ${l.store} | \`balancesOf\`, ${n} postings | ${us(holderHot.median)} | ${us(holderHot.p99)} | ${goal(holderHot, holderCold)} |`
    ]
  })
  const bookings = ledgers.map((l) =>
    `${l.store}: ${l.postings.toLocaleString("en")} postings in ${l.bookingSeconds.toFixed(0)} s (${Math.round(l.postings / l.bookingSeconds).toLocaleString("en")}/s)`
  ).join("; ")
  const table = [
    `Measured at ${measuredAt()}, Node ${process.version}.`,
    "",
    `**Ledger: a balance read against the postings behind it.** One account credited once, another credited N times through \`transfer()\` in linked batches of ${batchSize.toLocaleString("en")} (${bookings}); ${readsPerAccount.toLocaleString("en")} reads of each, alternated, in process. Ratio: N postings against 1 posting in the same store, on medians (goal ≤ 1.5×).`,
    "",
    "| store | read | median µs | p99 µs | N / 1 |",
    "|---|---|---:|---:|---|",
    ...ledgerRows,
    "",
    `**Money write: a deposit settled through the API, PostgreSQL.** \`fos serve\`, ${connections} connections, ${seconds} s per run after a 2 s warm-up, runs alternated. A settled deposit is \`POST /sandbox/v2/simulate/deposits\` (100.00 EUR by SEPA into the connection's own active virtual account) then \`POST /sandbox/v2/simulate/transactions/{id}/settle\`, each with a fresh Idempotency-Key; its latency is from the deposit's send to the settle's answer. The baseline is the storage bench's idempotent write on the same server. Each of the two requests does all the baseline does (authentication, the key's claim and record, its expiry timer) and its money besides, so settled deposits per second can never reach half the baseline's writes: the goal (≥ 0.5×) is read per request, deposit and settle requests per second against idempotent writes per second.`,
    "",
    "| round | connections | idempotent writes/s (p50 / p99 ms) | deposits settled/s (requests/s) | settled deposit median / p99 ms | settled deposits ÷ writes (≤ 0.5 by construction) | requests ÷ writes (goal ≥ 0.5×) | backends running a statement / waiting for a row lock (on a `FOR UPDATE`, on a count) |",
    "|---|---:|---:|---:|---:|---|---|---|",
    ...writes.map((w, i) => {
      const r = w.deposits.requestsPerSecond / w.baseline.perSecond
      const per = (n: number) => (n / w.locks.samples).toFixed(1)
      return `| ${i + 1} | ${w.connections} | ${Math.round(w.baseline.perSecond).toLocaleString("en")} (${w.baseline.p50} / ${w.baseline.p99}) | ${Math.round(w.deposits.perSecond).toLocaleString("en")} (${Math.round(w.deposits.requestsPerSecond).toLocaleString("en")}) | ${w.deposits.median.toFixed(1)} / ${w.deposits.p99.toFixed(1)} | ${ratio(w.deposits.perSecond, w.baseline.perSecond)} | ${ratio(w.deposits.requestsPerSecond, w.baseline.perSecond)}${w.connections === connections ? ` (${r >= 0.5 ? "met" : "not met"})` : ""} | ${per(w.locks.active)} / ${per(w.locks.waiting)} (${per(w.locks.forUpdateLock)}, ${per(w.locks.countLock)}) |`
    }),
    "",
    `**Order: created and executed through the API, PostgreSQL.** The same server, after the deposits. \`POST /sandbox/v2/orders\` converting 1.00 EUR into USD between a customer's two virtual accounts with \`autoExecute\` (priced, balance checked, its transaction opened with every leg held as one linked batch), a fresh Idempotency-Key each; an order answered 201 with a transactionId is the unit. The baseline is the storage bench's idempotent write (goal ≥ 0.3×).`,
    "",
    "| round | connections | idempotent writes/s (p50 / p99 ms) | orders executed/s (p50 / p99 ms) | ratio |",
    "|---|---:|---:|---:|---|",
    ...orders.map((o, i) =>
      `| ${i + 1} | ${o.connections} | ${Math.round(o.baseline.perSecond).toLocaleString("en")} (${o.baseline.p50} / ${o.baseline.p99}) | ${Math.round(o.orders.perSecond).toLocaleString("en")} (${o.orders.p50} / ${o.orders.p99}) | ${ratio(o.orders.perSecond, o.baseline.perSecond)}${o.connections === connections ? ` (${o.orders.perSecond / o.baseline.perSecond >= 0.3 ? "met" : "not met"})` : ""} |`
    )
  ].join("\n")
  console.log(table)
  if (process.env.BENCH_NO_DOCS !== "1") {
    recordSection("money", table)
    log("updated docs/performance.md")
  }
}

main().catch((e: unknown) => {
  console.error(`[bench:money] failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}`)
  process.exitCode = 1
})
