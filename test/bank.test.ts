/**
 * The bank-style check: many clients move money through HTTP at once, the sandbox's outside
 * actors end some of it, the virtual clock runs the world model, and afterwards the books must balance.
 *
 * - **Actors** (`actors`): one function per thing a client does. deposit sends money into a wallet or a virtual
 *   account (`POST /simulate/deposits`); payout sends money out of one (`POST /v2/payouts`, to a whitelisted bank
 *   account on its rail or to another wallet's address), cancelPayout cancels one, bankReturn has the beneficiary's
 *   bank return a completed one; confirm, settle, fail, return, cancel and review drive transactions through the
 *   simulate transaction calls; advance moves the virtual clock so the world model confirms, sends and settles the
 *   rest. `crowd` says how many concurrent loops run each actor and for how many steps. Orders come as new actors,
 *   new rows of `crowd` and new cases of `holdingsEffect`.
 * - **Invariants** (`checkBooks`): through the API, every deposit the clients were answered 201 for is listed, once;
 *   every balance is what the completed transactions credited to its holder, and their sum per asset is the sum of
 *   the completed deposits' credited amounts; nothing is negative. Through the store (the engine's, or the database
 *   the server processes share): every transaction's ledger legs match its status (`LedgerTransfers` by
 *   `byTransaction`: open holds pending, a completed one's holds posted, a failed one's voided); per asset all the
 *   scope's accounts (`LedgerAccounts` by `byScope`) sum to zero; every account's totals are the sum of its
 *   transfers; every transaction's status events are numbered 1, 2, 3, ... and end with the event of its status.
 *   What the clients were answered must agree with where each transaction ended (a fail answered 200 ended failed,
 *   and no move was accepted after a transaction was seen ended). Payouts: their holds debit the source for the
 *   amount and the fee; a balance's `pending` is exactly what its open payouts reserve; a payout returned after
 *   completion keeps its posted holds, has one return transfer of its amount, and ends with transaction.completed
 *   then transaction.failed.
 * - It runs on the memory store and PGlite (embedded engines), and on PostgreSQL with two `fos serve` processes
 *   sharing one database when DATABASE_URL is set. It asserts nothing about timing.
 *
 * The random choices come from a seeded generator (FOS_BANK_SEED overrides the seed; FOS_BANK_VERBOSE=1 prints it
 * and how the deposits ended); the interleaving is still the scheduler's, so a failure prints the seed and every
 * mismatch it found rather than stopping at the first.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type AssetCode, type Chain, formatAmount, parseAmount } from "@fos/contract"
import { Ledger, Outbox, Store, Tenancy, Timers, Transactions } from "@fos/core"
import { createEngine } from "@fos/http"
import { layerPgliteStore, layerPostgresStore } from "@fos/sql"
import { Effect, ManagedRuntime } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { adminUrl, freshDatabase } from "../adapters/sql/test/databases.ts"
import { killAllFos, startFos } from "./fosProcess.ts"
import { type Client, clientOf, deuDocuments, deuSubmission, idem } from "./onboardingFixtures.ts"
import { keysOf, orgSeed, seedOf, START_MS } from "./support.ts"
import { freshPgliteDirectory } from "../adapters/sql/test/pgliteDirectory.ts"

// --- where the bank runs -------------------------------------------------------------------------------------------

/** One organization, with a general rate limit no burst of the crowd reaches (the check is about money, not 429s). */
const seed = seedOf(orgSeed("bank", { rateLimit: { sustainedPerSecond: 1_000_000, burst: 1_000_000 } }))
const key = keysOf("bank").sandbox
const scope = Tenancy.scopeOf("org_bank", "sandbox")

interface Bank {
  /** One API client per server process (one for an embedded engine). */
  readonly clients: ReadonlyArray<Client>
  /** Reads the store directly: the engine's own, or the database the server processes share. */
  readonly read: <A>(effect: Effect.Effect<A, never, Store.Store>) => Promise<A>
  readonly close: () => Promise<void>
}

const embedded = async (store: "memory" | "pglite"): Promise<Bank> => {
  const dir = store === "pglite" ? await freshPgliteDirectory("bank") : undefined
  const engine = await createEngine({
    ...(dir === undefined ? {} : { store: layerPgliteStore(dir) }),
    clock: { mode: "virtual", start: START_MS },
    realClock: Timers.makeVirtualClock(START_MS),
    seed: seed as never
  })
  return {
    clients: [clientOf(engine.fetch, "http://fos", key)],
    read: (effect) => engine.run(effect),
    close: async () => {
      await engine.close()
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** Two `fos serve` processes on one fresh PostgreSQL database, with the same seed and the same virtual start. */
const twoServers = async (): Promise<Bank> => {
  const database = await freshDatabase("bank")
  const tmp = mkdtempSync(join(tmpdir(), "fos-bank-"))
  const seedPath = join(tmp, "seed.json")
  writeFileSync(seedPath, JSON.stringify(seed))
  const args = ["--store", database.url, "--port", "0", "--clock", "virtual", "--clock-start", new Date(START_MS).toISOString(), "--seed", seedPath, "--quiet"]
  // One after the other: the first applies the seed and the migrations, the second finds them applied.
  const a = await startFos(args)
  const b = await startFos(args)
  const reader = ManagedRuntime.make(layerPostgresStore(database.url, { maxConnections: 2 }))
  return {
    clients: [a, b].map((server) => clientOf((request) => fetch(request), server.origin, key)),
    read: (effect) => reader.runPromise(effect),
    close: async () => {
      await reader.dispose()
      await Promise.all([a.stop(), b.stop()])
      await database.drop()
      rmSync(tmp, { recursive: true, force: true })
    }
  }
}

// --- what the clients know -----------------------------------------------------------------------------------------

/** A wallet or virtual account money can be sent to, and what it takes. */
interface Holder {
  readonly type: Extract<Ledger.HolderType, "wallet" | "virtual_account">
  readonly id: string
  readonly customerId: string
  /** A wallet's chain and deposit address. */
  readonly chain?: Chain
  readonly address?: string
  readonly assets: ReadonlyArray<AssetCode>
  /** A virtual account's rails (`undefined`: the account's default). */
  readonly rails?: ReadonlyArray<string | undefined>
}

/** What a client was answered for one simulate call on a transaction, in the order of a shared logical clock. */
interface Answer {
  readonly actor: ActorName
  readonly sentAt: number
  readonly answeredAt: number
  readonly status: number
  /** 200: the transaction's status and failure code in the answer; else the problem type. */
  readonly result: { readonly status?: string | undefined; readonly failureCode?: string | null | undefined; readonly problem?: string | undefined }
  /** What a 200 must have answered. */
  readonly expected: { readonly status?: string; readonly failureCode?: string | null }
}

/** A deposit or a payout a client was answered 201 for. */
interface Known {
  readonly id: string
  readonly kind: "deposit" | "payout"
  /** The deposit's destination, or the payout's source. */
  readonly holder: Holder
  readonly asset: { readonly code: AssetCode; readonly chain?: Chain | undefined }
  /** Units of the asset: what the sender sent, what the receiver is credited on completion, the fee. A payout's sender is the holder. */
  readonly sent: bigint
  readonly credited: bigint
  readonly fee: bigint
  readonly answers: Array<Answer>
}

interface World {
  readonly bank: Bank
  readonly random: () => number
  readonly holders: ReadonlyArray<Holder>
  /** Per customer and rail, its whitelist recipient. */
  readonly recipients: Map<string, string>
  readonly known: Map<string, Known>
  /** Every answer no rule allows, in words; the check fails listing them. */
  readonly problems: Array<string>
  /** A logical clock: ticks on every send and every answer, so answers can be ordered against sends. */
  tick: number
  /** How many advances were sent: the next goes through the next process. */
  advances: number
}

const pick = <A>(w: World, items: ReadonlyArray<A>): A => items[Math.floor(w.random() * items.length)]!
const client = (w: World): Client => pick(w, w.bank.clients)

/** mulberry32: a small seeded generator, so a run's choices can be replayed. */
const seeded = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const assetKey = (code: string, chain?: string | null) => (chain === undefined || chain === null ? code : `${code}@${chain}`)
const units = (code: AssetCode, amount: string): bigint => {
  const parsed = parseAmount(code, amount)
  if (parsed === undefined) throw new Error(`not an amount of ${code}: ${amount}`)
  return parsed.units
}
const add = (sums: Map<string, bigint>, k: string, v: bigint) => sums.set(k, (sums.get(k) ?? 0n) + v)

const terminal = new Set(["completed", "failed", "cancelled"])

// --- the actors ----------------------------------------------------------------------------------------------------

/** One step of a client. `false`: nothing to act on yet (no deposit known), so the step is not counted. */
type Actor = (w: World) => Promise<boolean | void>

/** Everything a client of the bank does; orders and payouts add theirs. */
type ActorName = "deposit" | "payout" | "cancelPayout" | "bankReturn" | "confirm" | "settle" | "fail" | "return" | "cancel" | "review" | "advance"

/** The rails a virtual account in each currency pays out on (a whitelist recipient per customer and rail). */
const payoutRails: Readonly<Record<string, ReadonlyArray<string>>> = {
  USD: ["ach", "fedwire", "rtp", "fednow", "international_wire"],
  EUR: ["sepa"],
  GBP: ["faster_payments"]
}

/** A valid account per rail (docs/money.md, "Recipients"). */
const recipientOn = (rail: string): Record<string, unknown> => {
  const us = { line1: "1 Main St", city: "New York", state: "NY", country: "USA" }
  const de = { line1: "Unter den Linden 1", city: "Berlin", country: "DEU" }
  const gb = { line1: "10 Downing St", city: "London", country: "GBR" }
  switch (rail) {
    case "sepa":
      return { rail, name: "Max Mustermann", address: de, iban: "DE89370400440532013000" }
    case "faster_payments":
      return { rail, name: "Jane Doe", address: gb, sortCode: "123456", accountNumber: "12345678" }
    case "international_wire":
      return { rail, name: "Max Mustermann", address: de, bic: "DEUTDEFF", iban: "DE89370400440532013000" }
    default:
      return { rail, name: "Ada Lovelace", address: us, routingNumber: "021000021", accountNumber: "123456789" }
  }
}

/** The inbound fee of each rail the crowd uses (docs/money.md, the world model's defaults), in units. */
const inboundFee: Readonly<Record<string, bigint>> = { fedwire: 1000n }

/** A random amount of `code`: a few whole units and a fraction at the asset's precision, never below `floor`. */
const randomAmount = (w: World, code: AssetCode, floor = 0n): bigint => {
  const precision = BigInt(parseAmount(code, "1")!.units.toString().length - 1)
  const whole = BigInt(1 + Math.floor(w.random() * 500))
  const fraction = BigInt(Math.floor(w.random() * 1_000_000)) * 10n ** precision / 1_000_000n
  return floor + whole * 10n ** precision + fraction
}

/** A simulate call on a transaction the clients know: mostly one they have not seen end (often a new one), sometimes any. */
const simulate = async (
  w: World,
  actor: ActorName,
  step: string,
  body: unknown,
  expected: Answer["expected"],
  pool: (t: Known) => boolean = () => true
): Promise<boolean | void> => {
  const all = [...w.known.values()].filter(pool)
  if (all.length === 0) return false
  // The newest are the likeliest still open: the world model has had the least time to settle them.
  const open = all.filter((t) => !t.answers.some((a) => a.status === 200 && terminal.has(a.result.status ?? "")))
  const choice = w.random()
  const t = open.length === 0 || choice >= 0.85 ? pick(w, all) : choice < 0.5 ? pick(w, open.slice(-4)) : pick(w, open)
  const sentAt = ++w.tick
  const r = await client(w).call("POST", `/v2/simulate/transactions/${t.id}/${step}`, body)
  const answeredAt = ++w.tick
  const result = r.status === 200
    ? { status: r.json?.status, failureCode: r.json?.failureCode }
    : { problem: r.json?.type as string | undefined }
  t.answers.push({ actor, sentAt, answeredAt, status: r.status, result, expected })
  if (r.status === 200) {
    if (r.json?.id !== t.id) w.problems.push(`${actor} ${t.id}: answered another transaction: ${r.text}`)
    if (expected.status !== undefined && result.status !== expected.status) {
      w.problems.push(`${actor} ${t.id}: answered status ${result.status}, expected ${expected.status}`)
    }
    // null expects no failureCode: the read omits it (representation rule 3).
    if (expected.failureCode !== undefined && (result.failureCode ?? null) !== expected.failureCode) {
      w.problems.push(`${actor} ${t.id}: answered failureCode ${result.failureCode}, expected ${expected.failureCode}`)
    }
    return
  }
  // The two refusals a race can give: it ended already, or it is past the phase the move needs.
  if (r.status === 409 && result.problem === "RESOURCE_TERMINAL") return
  if (r.status === 422 && result.problem === "SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY") return
  w.problems.push(`${actor} ${t.id}: ${r.status} ${r.text}`)
}

const failureCodes = ["provider_rejected", "rail_unavailable", "compliance_rejected", "travel_rule_rejected", undefined] as const

const actors: Record<ActorName, Actor> = {
  /** The outside sender: money into a wallet (by id or by its address) or a virtual account (on one of its rails). */
  deposit: async (w) => {
    const holder = pick(w, w.holders)
    const code = pick(w, holder.assets)
    let body: Record<string, unknown>
    let asset: Known["asset"]
    if (holder.type === "virtual_account") {
      const rail = pick(w, holder.rails ?? [undefined])
      const amount = randomAmount(w, code, inboundFee[rail ?? ""] ?? 0n)
      asset = { code }
      body = {
        destination: { type: "virtual_account", virtualAccountId: holder.id },
        assetAmount: { code, amount: formatAmount({ asset: code, units: amount }) },
        ...(rail === undefined ? {} : { rail })
      }
    } else {
      const amount = randomAmount(w, code)
      asset = { code, chain: holder.chain }
      body = {
        destination: w.random() < 0.5 ? { type: "wallet", walletId: holder.id } : { type: "deposit_address", address: holder.address },
        assetAmount: { code, amount: formatAmount({ asset: code, units: amount }), chain: holder.chain }
      }
    }
    const r = await client(w).call("POST", "/v2/simulate/deposits", body)
    if (r.status !== 201) {
      w.problems.push(`deposit ${JSON.stringify(body)}: ${r.status} ${r.text}`)
      return
    }
    const t = r.json
    const sent = units(code, t.source.assetAmount.amount)
    const credited = units(code, t.destination.assetAmount.amount)
    const fee = (t.fees as Array<{ assetAmount: { amount: string } }>).reduce((sum, f) => sum + units(code, f.assetAmount.amount), 0n)
    if (t.status !== "pending") w.problems.push(`deposit ${t.id}: answered status ${t.status}, expected pending`)
    if (sent !== credited + fee) w.problems.push(`deposit ${t.id}: sent ${sent} is not credited ${credited} plus fees ${fee}`)
    const wantedHolder = holder.type === "wallet" ? t.destination.walletId : t.destination.virtualAccountId
    if (wantedHolder !== holder.id) w.problems.push(`deposit ${t.id}: credited ${wantedHolder}, sent to ${holder.id}`)
    w.known.set(t.id, { id: t.id, kind: "deposit", holder, asset, sent, credited, fee, answers: [] })
  },
  /** A customer paying out: from a virtual account to its whitelisted account on a rail, or from a wallet to another wallet's address. */
  payout: async (w) => {
    const holder = pick(w, w.holders)
    const code = pick(w, holder.assets)
    const amount = randomAmount(w, code) / 5n + 1n
    let body: Record<string, unknown>
    if (holder.type === "virtual_account") {
      const rail = pick(w, payoutRails[code]!)
      body = {
        source: { type: "virtual_account", virtualAccountId: holder.id },
        destination: { type: "external_bank", whitelistRecipientId: w.recipients.get(`${holder.customerId}/${rail}`) },
        amount: formatAmount({ asset: code, units: amount }),
        purpose: "supplier_payment"
      }
    } else {
      const to = pick(w, w.holders.filter((h) => h.chain === holder.chain && h.id !== holder.id))
      body = {
        source: { type: "wallet", walletId: holder.id },
        destination: { type: "external_crypto", chain: holder.chain, address: to.address },
        asset: code,
        amount: formatAmount({ asset: code, units: amount }),
        purpose: "treasury_transfer",
        travelRule: { beneficiaryName: "Bank Check", beneficiaryCountry: "DEU", walletType: "hosted", vaspName: "fos" }
      }
    }
    const r = await client(w).call("POST", "/v2/payouts", body, idem("payout"))
    // The balance may not cover it: refused with nothing reserved.
    if (r.status === 422 && r.json?.type === "INSUFFICIENT_FUNDS") return
    if (r.status !== 201) {
      w.problems.push(`payout ${JSON.stringify(body)}: ${r.status} ${r.text}`)
      return
    }
    const t = r.json
    const sent = units(code, t.source.assetAmount.amount)
    const credited = units(code, t.destination.assetAmount.amount)
    const fee = (t.fees as Array<{ assetAmount: { amount: string } }>).reduce((sum, f) => sum + units(code, f.assetAmount.amount), 0n)
    if (t.status !== "pending") w.problems.push(`payout ${t.id}: answered status ${t.status}, expected pending`)
    if (credited !== amount || sent !== credited + fee) w.problems.push(`payout ${t.id}: sends ${credited} of ${amount}, takes ${sent} with fees ${fee}`)
    w.known.set(t.id, { id: t.id, kind: "payout", holder, asset: { code, chain: holder.chain }, sent, credited, fee, answers: [] })
  },
  /** A customer cancelling a payout: cancelled before it is sent (or recorded while in review), else 409. */
  cancelPayout: async (w) => {
    const payouts = [...w.known.values()].filter((t) => t.kind === "payout")
    if (payouts.length === 0) return false
    const t = pick(w, payouts.slice(-6))
    const sentAt = ++w.tick
    const r = await client(w).call("POST", `/v2/payouts/${t.id}/cancel`, undefined, idem("cancel"))
    const answeredAt = ++w.tick
    const result = r.status === 200 ? { status: r.json?.status, failureCode: r.json?.failureCode } : { problem: r.json?.type as string | undefined }
    t.answers.push({ actor: "cancelPayout", sentAt, answeredAt, status: r.status, result, expected: {} })
    if (r.status === 200 && r.json?.status === "cancelled") return
    if (r.status === 200 && r.json?.stage === "under_review") return
    if (r.status === 409 && result.problem === "CONFLICT") return
    w.problems.push(`cancelPayout ${t.id}: ${r.status} ${r.text}`)
  },
  /** The beneficiary's bank returning a completed bank payout. */
  bankReturn: (w) =>
    simulate(w, "bankReturn", "return", { returnCode: "R01" }, { status: "failed", failureCode: "returned_by_sender" }, (t) =>
      t.kind === "payout" && t.holder.type === "virtual_account"),
  /** The chain or the bank confirming: pending to processing. */
  confirm: (w) => simulate(w, "confirm", "confirm", undefined, { status: "processing" }),
  /** The chain or the bank settling, by either call. */
  settle: (w) =>
    w.random() < 0.5
      ? simulate(w, "settle", "settle", undefined, { status: "completed", failureCode: null })
      : simulate(w, "settle", "terminal", { outcome: "completed" }, { status: "completed", failureCode: null }),
  /** The provider failing it, with a code or without (provider_rejected). */
  fail: (w) => {
    const failureCode = pick(w, failureCodes)
    return simulate(w, "fail", "terminal", { outcome: "failed", ...(failureCode === undefined ? {} : { failureCode }) }, {
      status: "failed",
      failureCode: failureCode ?? "provider_rejected"
    })
  },
  /** The sender's bank recalling it. */
  return: (w) =>
    simulate(w, "return", "terminal", { outcome: "failed", failureCode: "returned_by_sender", reason: "recalled by the sender's bank" }, {
      status: "failed",
      failureCode: "returned_by_sender"
    }),
  /** A client cancelling: a deposit is never cancelled, so only the refusals may come back (payouts will differ). */
  cancel: (w) => simulate(w, "cancel", "terminal", { outcome: "cancelled" }, { status: "cancelled" }),
  /** Compliance: into review, asking for information, clearing. Review never holds the money back. */
  review: (w) => simulate(w, "review", "review", { action: pick(w, ["enter", "request_information", "clear"]) }, {}),
  /** Time passing: seconds to an hour at a time, on every process's clock, so the world model moves. */
  advance: async (w) => {
    const seconds = pick(w, [1, 2, 5, 10, 30, 60, 90, 180, 600, 3600])
    await advanceAll(w, seconds)
  }
}

const advanceAll = async (w: World, seconds: number) => {
  // The organization's clock is kept in the store (docs/clock.md): one advance, through any process, moves it for
  // every process and fires each of its timers once. The processes take turns advancing.
  const c = w.bank.clients[w.advances++ % w.bank.clients.length]!
  const r = await c.call("POST", "/v2/simulate/clock/advance", { seconds })
  if (r.status !== 200) w.problems.push(`advance ${seconds}s: ${r.status} ${r.text}`)
}

/** How many concurrent loops run each actor, and how many steps each loop takes per phase. */
const crowd: ReadonlyArray<{ readonly actor: ActorName; readonly loops: number; readonly steps: number }> = [
  { actor: "deposit", loops: 5, steps: 10 },
  { actor: "payout", loops: 2, steps: 8 },
  { actor: "cancelPayout", loops: 1, steps: 3 },
  { actor: "bankReturn", loops: 1, steps: 4 },
  { actor: "confirm", loops: 1, steps: 8 },
  { actor: "settle", loops: 1, steps: 16 },
  { actor: "fail", loops: 1, steps: 8 },
  { actor: "return", loops: 1, steps: 8 },
  { actor: "cancel", loops: 1, steps: 3 },
  { actor: "review", loops: 1, steps: 12 },
  { actor: "advance", loops: 1, steps: 8 }
]

/** Runs the crowd once: every loop at once, each its steps one after another. */
const runCrowd = (w: World, scale: number) =>
  Promise.all(crowd.flatMap(({ actor, loops, steps }) =>
    Array.from({ length: loops }, async () => {
      // A step with nothing to act on yields to the others and is taken again, a bounded number of times.
      for (let done = 0, idle = 0; done < steps * scale && idle < 10_000;) {
        if ((await actors[actor](w)) === false) {
          idle++
          await new Promise((resolve) => setImmediate(resolve))
        } else done++
      }
    })
  ))

/** Longer than any settlement the world model schedules (ACH over a weekend), with room for timers retried late. */
const settleEverything = 7 * 24 * 3600

// --- setting the bank up -------------------------------------------------------------------------------------------

/** Customers, each with wallets on two chains and virtual accounts in three currencies, all active. */
const openAccounts = async (w: World, customers: number): Promise<Array<Holder>> => {
  const ok = (what: string, r: { status: number; text: string }, status: number) => expect(r.status, `${what}: ${r.text}`).toBe(status)
  const ids: Array<string> = []
  for (let i = 0; i < customers; i++) {
    const c = w.bank.clients[i % w.bank.clients.length]!
    const submitted = await c.call("POST", "/v2/onboarding", deuSubmission(await deuDocuments(c), { clientReferenceId: `bank-${i}` }), idem("bank"))
    ok("onboarding", submitted, 201)
    const decided = await c.call("POST", `/v2/simulate/applications/${submitted.json.applicationId}/decision`, { outcome: "approved" })
    ok("decision", decided, 200)
    const customerId = decided.json.customerId as string
    for (
      const feature of [
        { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } },
        { type: "crypto_wallet", asset: { code: "SOL", chain: "solana" } },
        { type: "virtual_account", asset: { code: "EUR" } },
        { type: "virtual_account", asset: { code: "USD" } },
        { type: "virtual_account", asset: { code: "GBP" } }
      ]
    ) {
      const applied = await c.call("POST", `/v2/customers/${customerId}/features`, feature, idem("bank"))
      ok("feature", applied, 201)
      ok("feature decision", await c.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" }), 200)
    }
    ids.push(customerId)
    // Virtual accounts open on the clock; the dedicated upload bucket refills with it.
    await advanceAll(w, 30)
  }
  const holders: Array<Holder> = []
  const rails: Record<string, ReadonlyArray<string | undefined>> = {
    EUR: [undefined, "sepa"],
    USD: [undefined, "fedwire", "rtp", "fednow"],
    GBP: [undefined, "faster_payments"]
  }
  const walletAssets: Partial<Record<Chain, ReadonlyArray<AssetCode>>> = { base: ["USDC", "ETH"], solana: ["SOL", "USDC"] }
  for (const [i, customerId] of ids.entries()) {
    const c = w.bank.clients[(i + 1) % w.bank.clients.length]!
    for (const rail of Object.values(payoutRails).flat()) {
      const saved = await c.call("POST", `/v2/customers/${customerId}/whitelist-recipients`, recipientOn(rail), idem("bank"))
      ok("whitelist recipient", saved, 201)
      w.recipients.set(`${customerId}/${rail}`, saved.json.id)
    }
    const accounts = await c.call("GET", `/v2/customers/${customerId}/virtual-accounts`)
    ok("virtual accounts", accounts, 200)
    expect(accounts.json.data).toHaveLength(3)
    for (const account of accounts.json.data) {
      expect(account.status).toBe("active")
      holders.push({ type: "virtual_account", id: account.id, customerId, assets: [account.asset.code], rails: rails[account.asset.code]! })
    }
    for (const chain of ["base", "solana"] as const) {
      const wallet = await c.call("POST", `/v2/customers/${customerId}/wallets`, { chain }, idem("bank"))
      ok("wallet", wallet, 201)
      holders.push({ type: "wallet", id: wallet.json.id, customerId, chain, address: wallet.json.address, assets: walletAssets[chain]! })
    }
  }
  return holders
}

// --- the invariants ------------------------------------------------------------------------------------------------

/** Every row of one partition of a keyset order, walking it a page at a time. */
const scan = <Row>(table: Store.Table<Row>, order: string, partition: string) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const rows: Array<Row> = []
    let from: Store.Position | undefined
    while (true) {
      const page = yield* store.page(table, { order, partition, descending: false, backward: false, from, limit: 500 })
      rows.push(...page)
      if (page.length < 500) return rows
      const last = page.at(-1)!
      from = { sort: table.orders[order]!.sort(last), key: table.key(last) }
    }
  })

/**
 * What a transaction does to its customers' holdings once completed, per asset key and holder: the one place the
 * next issues add their types (a payout takes from its source, an order's legs move between a customer's holders).
 */
const holdingsEffect = (t: any): ReadonlyArray<{ readonly holder: string; readonly asset: string; readonly units: bigint }> => {
  switch (t.type) {
    case "deposit": {
      const d = t.destination
      return [{ holder: d.walletId ?? d.virtualAccountId, asset: assetKey(d.assetAmount.code, d.assetAmount.chain), units: units(d.assetAmount.code, d.assetAmount.amount) }]
    }
    case "withdrawal": {
      // The source pays the amount and the fee; a bank return after completion brings the amount back.
      const s = t.source
      const taken = units(s.assetAmount.code, s.assetAmount.amount)
      const back = returned(t) ? units(t.destination.assetAmount.code, t.destination.assetAmount.amount) : 0n
      return [{ holder: s.walletId ?? s.virtualAccountId, asset: assetKey(s.assetAmount.code, s.assetAmount.chain), units: back - taken }]
    }
    default:
      throw new Error(`the bank check does not know what a ${t.type} transaction does to balances yet`)
  }
}

/** A payout the beneficiary's bank returned after it completed: its holds stay posted, the return is new transfers. */
// Representation rule 3: a read omits returnCode until the payout is returned.
const returned = (t: { readonly type: string; readonly returnCode?: string }) => t.type === "withdrawal" && t.returnCode !== undefined

/** Whether a transaction's money moved as completed (its holds posted): completed, or completed and returned. */
const posted = (t: any) => t.status === "completed" || returned(t)

/** The holds a transaction's ledger legs show, and how each was resolved. */
const legsOf = (transfers: ReadonlyArray<Ledger.LedgerTransfer>) => {
  const holds = transfers.filter((x) => x.kind === "pending")
  const resolutions = transfers.filter((x) => x.kind === "post" || x.kind === "void")
  const other = transfers.filter((x) => x.kind === "posted")
  return { holds, resolutions, other }
}

/**
 * The books, checked through the API and the store. `final`: after everything open was given time to settle, so
 * nothing may be open any more. Returns the problems found, in words.
 */
const checkBooks = async (w: World, final: boolean): Promise<Array<string>> => {
  const problems: Array<string> = []
  const bad = (message: string) => problems.push(message)

  // 1. Every deposit the clients were answered 201 for is listed, once, the same by every process.
  const listings = await Promise.all(w.bank.clients.map(async (c) => {
    const listed: Array<any> = []
    let cursor: string | null = null
    do {
      const page: any = await c.call("GET", `/v2/transactions?limit=100${cursor === null ? "" : `&cursor=${cursor}`}`)
      if (page.status !== 200) {
        bad(`GET /v2/transactions: ${page.status} ${page.text}`)
        break
      }
      listed.push(...page.json.data)
      cursor = page.json.meta.nextCursor
    } while (cursor !== null)
    return listed
  }))
  const listed = listings[0]!
  for (const [i, other] of listings.entries()) {
    if (JSON.stringify(other) !== JSON.stringify(listed)) bad(`process ${i} lists the transactions differently from process 0`)
  }
  const byId = new Map(listed.map((t) => [t.id as string, t]))
  if (byId.size !== listed.length) bad(`the list repeats transactions: ${listed.length} rows, ${byId.size} ids`)
  for (const id of w.known.keys()) if (!byId.has(id)) bad(`${id}: answered 201, not listed`)
  for (const id of byId.keys()) if (!w.known.has(id)) bad(`${id}: listed, never answered 201`)

  // 2. From the store: the transactions, their ledger legs, every account and transfer of the scope, the events.
  const stored = await w.bank.read(Effect.gen(function*() {
    const transactions = yield* scan(Transactions.Transactions, Transactions.ofScope, scope)
    const legs = new Map<string, ReadonlyArray<Ledger.LedgerTransfer>>()
    for (const t of transactions) legs.set(t.id, yield* scan(Ledger.LedgerTransfers, "byTransaction", t.id))
    return {
      transactions,
      legs,
      accounts: yield* scan(Ledger.LedgerAccounts, "byScope", scope),
      transfers: yield* scan(Ledger.LedgerTransfers, "byScope", scope),
      events: yield* scan(Outbox.OutboxEvents, "byScope", scope)
    }
  }))
  const storedById = new Map<string, Transactions.StoredTransaction>(stored.transactions.map((t) => [t.id, t]))
  if (storedById.size !== byId.size) bad(`the store holds ${storedById.size} transactions, the API lists ${byId.size}`)

  // 3. Every transaction's legs match its status: open, its holds pending; completed, posted; failed, voided.
  const completedHoldings = new Map<string, bigint>()
  const completedByAsset = new Map<string, bigint>()
  const completedFees = new Map<string, bigint>()
  for (const t of listed) {
    const row = storedById.get(t.id)
    if (row === undefined) {
      bad(`${t.id}: listed, not in the store`)
      continue
    }
    if (row.status !== t.status) bad(`${t.id}: the API says ${t.status}, the store ${row.status}`)
    if (final && !terminal.has(t.status)) bad(`${t.id}: still ${t.status} after every settlement time passed`)
    const known = w.known.get(t.id)
    const { holds, resolutions, other } = legsOf(stored.legs.get(t.id) ?? [])
    const heldIds = holds.map((h) => h.id).sort()
    // The transaction keeps its holds as booked: each must be exactly the ledger's pending transfer.
    const kept = row.holds.map((h) => (typeof h === "string" ? h : h.id)).sort()
    if (JSON.stringify(heldIds) !== JSON.stringify(kept)) bad(`${t.id}: holds ${kept.join(",")}, the ledger has ${heldIds.join(",")}`)
    for (const h of row.holds) {
      if (typeof h !== "string" && JSON.stringify(h) !== JSON.stringify(holds.find((x) => x.id === h.id))) bad(`${t.id}: hold ${h.id} differs from the ledger's`)
    }
    if (returned(t)) {
      // The return: one posted transfer bringing the amount back to the source.
      const back = units(t.destination.assetAmount.code, t.destination.assetAmount.amount)
      if (other.length !== 1 || BigInt(other[0]!.amount) !== back || other[0]!.code !== "withdrawal.return") {
        bad(`${t.id}: returned, its return transfers are ${other.map((x) => `${x.code} ${x.amount}`).join(",") || "none"}, expected one of ${back}`)
      }
    } else if (other.length > 0) bad(`${t.id}: posted transfers outside its holds: ${other.map((x) => x.id).join(",")}`)
    if (holds.length === 0) bad(`${t.id}: no hold in the ledger`)
    if (known?.kind === "payout") {
      const holder = Ledger.accountId({ scope, type: known.holder.type, id: known.holder.id }, known.asset)
      const debits = holds.filter((h) => h.debitAccountId === holder)
      const held = debits.reduce((sum, h) => sum + BigInt(h.amount), 0n)
      if (debits.length !== holds.length || held !== known.sent) bad(`${t.id}: holds ${held} from ${holder} in ${debits.length} of ${holds.length} holds, the payout takes ${known.sent}`)
    } else if (known !== undefined) {
      const holder = Ledger.accountId({ scope, type: known.holder.type, id: known.holder.id }, known.asset)
      const credit = holds.filter((h) => h.creditAccountId === holder)
      if (credit.length !== 1 || BigInt(credit[0]!.amount) !== known.credited) {
        bad(`${t.id}: expected one hold of ${known.credited} into ${holder}, found ${credit.map((h) => h.amount).join(",") || "none"}`)
      }
      const held = holds.reduce((sum, h) => sum + BigInt(h.amount), 0n)
      if (held !== known.sent) bad(`${t.id}: holds ${held} in all, the sender sent ${known.sent}`)
    }
    for (const hold of holds) {
      const of = resolutions.filter((x) => x.resolves === hold.id)
      const wanted = posted(t) ? "post" : t.status === "failed" || t.status === "cancelled" ? "void" : undefined
      if (wanted === undefined ? of.length !== 0 : of.length !== 1 || of[0]!.kind !== wanted || of[0]!.amount !== hold.amount) {
        bad(`${t.id} (${t.status}): hold ${hold.id} resolved by ${of.map((x) => `${x.kind} ${x.amount}`).join(",") || "nothing"}`)
      }
    }
    for (const x of resolutions) if (!holds.some((h) => h.id === x.resolves)) bad(`${t.id}: ${x.id} resolves ${x.resolves}, not one of its holds`)
    if (posted(t)) {
      for (const e of holdingsEffect(t)) {
        add(completedHoldings, `${e.holder}/${e.asset}`, e.units)
        add(completedByAsset, e.asset, e.units)
      }
      for (const f of t.fees as Array<any>) add(completedFees, assetKey(f.assetAmount.code, f.assetAmount.chain), units(f.assetAmount.code, f.assetAmount.amount))
    }
  }

  // 4. Per asset all accounts sum to zero; every account's totals are the sum of its transfers; no customer account
  //    is below zero counting reservations; after the end nothing is pending anywhere.
  const sums = new Map<string, { posted: bigint; pending: bigint }>()
  const recomputed = new Map<string, { dp: bigint; dP: bigint; cp: bigint; cP: bigint }>()
  const transferById = new Map(stored.transfers.map((x) => [x.id, x]))
  const totals = (id: string) => recomputed.get(id) ?? recomputed.set(id, { dp: 0n, dP: 0n, cp: 0n, cP: 0n }).get(id)!
  for (const x of stored.transfers) {
    const amount = BigInt(x.amount)
    const d = totals(x.debitAccountId)
    const c = totals(x.creditAccountId)
    if (x.kind === "posted") (d.dP += amount, c.cP += amount)
    else if (x.kind === "pending") (d.dp += amount, c.cp += amount)
    else {
      const reserved = BigInt(transferById.get(x.resolves ?? "")?.amount ?? "0")
      d.dp -= reserved
      c.cp -= reserved
      if (x.kind === "post") (d.dP += amount, c.cP += amount)
    }
    if (x.transactionId !== undefined && !byId.has(x.transactionId)) bad(`transfer ${x.id} names ${x.transactionId}, which is not listed`)
  }
  const inLegs = [...stored.legs.values()].reduce((n, l) => n + l.length, 0)
  if (inLegs !== stored.transfers.filter((x) => x.transactionId !== undefined).length) {
    bad(`byTransaction finds ${inLegs} transfers, byScope ${stored.transfers.length} with a transaction`)
  }
  const accountById = new Map<string, Ledger.LedgerAccount>(stored.accounts.map((a) => [a.id, a]))
  const feesHeld = new Map<string, bigint>()
  for (const id of recomputed.keys()) if (!accountById.has(id)) bad(`transfers touch account ${id}, which byScope does not list`)
  for (const a of stored.accounts) {
    const t = { dp: BigInt(a.debitsPending), dP: BigInt(a.debitsPosted), cp: BigInt(a.creditsPending), cP: BigInt(a.creditsPosted) }
    const r = recomputed.get(a.id) ?? { dp: 0n, dP: 0n, cp: 0n, cP: 0n }
    if (t.dp !== r.dp || t.dP !== r.dP || t.cp !== r.cp || t.cP !== r.cP) {
      bad(`account ${a.id}: totals ${JSON.stringify(a)} are not the sum of its transfers ${JSON.stringify(r, (_, v) => (typeof v === "bigint" ? v.toString() : v))}`)
    }
    const k = assetKey(a.asset, a.chain)
    const s = sums.get(k) ?? sums.set(k, { posted: 0n, pending: 0n }).get(k)!
    s.posted += t.cP - t.dP
    s.pending += t.cp - t.dp
    if ((a.holderType === "wallet" || a.holderType === "virtual_account") && t.cP - t.dP - t.dp < 0n) bad(`account ${a.id} is below zero`)
    if (final && (t.dp !== 0n || t.cp !== 0n)) bad(`account ${a.id}: still pending after the end (${t.dp} debits, ${t.cp} credits)`)
    // The fees holder's balance is spread over shards (Ledger.ts): summed below.
    if (a.holderType === "fees") feesHeld.set(k, (feesHeld.get(k) ?? 0n) + t.cP - t.dP)
  }
  for (const k of new Set([...feesHeld.keys(), ...completedFees.keys()])) {
    if ((feesHeld.get(k) ?? 0n) !== (completedFees.get(k) ?? 0n)) {
      bad(`the fees accounts hold ${feesHeld.get(k) ?? 0n} ${k}, the completed deposits list ${completedFees.get(k) ?? 0n} in fees`)
    }
  }
  for (const [k, s] of sums) if (s.posted !== 0n || s.pending !== 0n) bad(`${k}: the scope's accounts sum to ${s.posted} posted, ${s.pending} pending`)

  // 5. Through the API: every balance is what the completed transactions credited its holder, nothing negative,
  //    reserved exactly what its open payouts take, and the sum per asset is the sum of the completed movements.
  const reserved = new Map<string, bigint>()
  for (const t of listed) {
    if (t.type !== "withdrawal" || terminal.has(t.status)) continue
    const s = t.source
    add(reserved, `${s.walletId ?? s.virtualAccountId}/${assetKey(s.assetAmount.code, s.assetAmount.chain)}`, units(s.assetAmount.code, s.assetAmount.amount))
  }
  const balances = new Map<string, bigint>()
  for (const [i, h] of w.holders.entries()) {
    const c = w.bank.clients[i % w.bank.clients.length]!
    const r = await c.call("GET", h.type === "wallet" ? `/v2/wallets/${h.id}` : `/v2/virtual-accounts/${h.id}`)
    if (r.status !== 200) {
      bad(`GET ${h.id}: ${r.status} ${r.text}`)
      continue
    }
    const seen = new Set<string>()
    for (const b of r.json.balances as Array<{ code: AssetCode; chain?: Chain; available: string; pending: string }>) {
      const k = assetKey(b.code, b.chain)
      seen.add(k)
      const available = b.available.startsWith("-") ? -units(b.code, b.available.slice(1)) : units(b.code, b.available)
      const pending = b.pending.startsWith("-") ? -units(b.code, b.pending.slice(1)) : units(b.code, b.pending)
      if (available < 0n || pending < 0n) bad(`${h.id}: negative balance ${JSON.stringify(b)}`)
      if (pending !== (reserved.get(`${h.id}/${k}`) ?? 0n)) bad(`${h.id}: ${b.pending} ${k} reserved, its open payouts take ${reserved.get(`${h.id}/${k}`) ?? 0n}`)
      const expected = completedHoldings.get(`${h.id}/${k}`) ?? 0n
      if (available + pending !== expected) bad(`${h.id}: ${b.available} ${k} available, the completed deposits credited ${formatAmount({ asset: b.code, units: expected })}`)
      const account = accountById.get(Ledger.accountId({ scope, type: h.type, id: h.id }, { code: b.code, chain: b.chain }))
      if (account !== undefined && BigInt(account.creditsPosted) - BigInt(account.debitsPosted) - BigInt(account.debitsPending) !== available) {
        bad(`${h.id}: the API shows ${b.available} ${k}, the ledger account another balance`)
      }
      add(balances, k, available + pending)
    }
    for (const [hk, v] of completedHoldings) {
      const [holder, k] = [hk.slice(0, hk.indexOf("/")), hk.slice(hk.indexOf("/") + 1)]
      if (holder === h.id && v !== 0n && !seen.has(k)) bad(`${h.id}: credited ${v} ${k}, which its balances do not show`)
    }
  }
  for (const k of new Set([...balances.keys(), ...completedByAsset.keys()])) {
    if ((balances.get(k) ?? 0n) !== (completedByAsset.get(k) ?? 0n)) {
      bad(`${k}: balances sum to ${balances.get(k) ?? 0n}, the completed deposits to ${completedByAsset.get(k) ?? 0n}`)
    }
  }

  // 6. Status events: numbered 1, 2, 3, ... per transaction, created first, one terminal event, last, of its status.
  const eventsOf = new Map<string, Array<Outbox.OutboxEvent & { data: any }>>()
  for (const e of stored.events as Array<Outbox.OutboxEvent & { data: any }>) {
    if (!e.type.startsWith("transaction.")) continue
    const list = eventsOf.get(e.data.transactionId) ?? eventsOf.set(e.data.transactionId, []).get(e.data.transactionId)!
    list.push(e)
  }
  const endEvent: Record<string, string> = { completed: "transaction.completed", failed: "transaction.failed", cancelled: "transaction.cancelled" }
  for (const t of listed) {
    const events = (eventsOf.get(t.id) ?? []).sort((a, b) => a.sequence - b.sequence)
    const types = events.map((e) => e.type)
    const numbers = events.map((e) => e.data.sequence)
    if (JSON.stringify(numbers) !== JSON.stringify(events.map((_, i) => i + 1))) bad(`${t.id}: event sequence ${numbers.join(",")} (${types.join(",")})`)
    if (types[0] !== "transaction.created") bad(`${t.id}: first event ${types[0]}`)
    const ends = types.filter((type) => Object.values(endEvent).includes(type) || type === "transaction.rejected")
    const wantedEnds = returned(t) ? ["transaction.completed", "transaction.failed"] : terminal.has(t.status) ? [endEvent[t.status]] : []
    if (JSON.stringify(ends) !== JSON.stringify(wantedEnds) || (wantedEnds.length > 0 && types.at(-1) !== wantedEnds.at(-1))) {
      bad(`${t.id} (${t.status}): events ${types.join(",")}`)
    }
    if (types.filter((type) => type === "transaction.processing").length > 1) bad(`${t.id}: processing twice: ${types.join(",")}`)
  }

  // 7. What the clients were answered agrees with where each transaction ended.
  for (const known of w.known.values()) {
    const t = byId.get(known.id)
    if (t === undefined) continue
    // A bank return ends a payout a second time, after it completed; it is checked on its own.
    const bankReturns = known.answers.filter((a) => a.actor === "bankReturn" && a.status === 200)
    if (bankReturns.length > 1 || (bankReturns.length === 1) !== returned(t)) bad(`${known.id}: ${bankReturns.length} bank returns answered 200, returnCode ${t.returnCode}`)
    // A cancel of a payout answers 200 with the cancelled payout again: such answers must agree, and count as its end
    // only when nothing else ended it.
    const cancels = known.answers.filter((a) => a.actor === "cancelPayout" && a.status === 200 && a.result.status === "cancelled")
    if (cancels.length > 0 && t.status !== "cancelled") bad(`${known.id}: a cancel was answered cancelled, it ended ${t.status}`)
    const strict = known.answers.filter((a) => a.actor !== "bankReturn" && a.actor !== "cancelPayout" && a.status === 200 && terminal.has(a.result.status ?? ""))
    const ended = strict.length > 0 ? strict : cancels.slice(0, 1)
    if (ended.length > 1) bad(`${known.id}: ended ${ended.length} times: ${ended.map((a) => `${a.actor} ${a.result.status}`).join(", ")}`)
    for (const a of ended) {
      if (returned(t) ? a.result.status !== "completed" : a.result.status !== t.status || a.result.failureCode !== t.failureCode) {
        bad(`${known.id}: ${a.actor} was answered ${a.result.status} ${a.result.failureCode ?? ""}, it ended ${t.status} ${t.failureCode ?? ""}`)
      }
    }
    // Only the sandbox's fail and return calls fail a transaction; the world model only settles.
    if (t.status === "failed" && ended.length === 0 && !returned(t) && final) bad(`${known.id}: failed ${t.failureCode}, though no fail call was answered 200`)
    if (known.kind === "deposit" && known.answers.some((a) => a.actor === "cancel" && a.status === 200)) bad(`${known.id}: a deposit was cancelled`)
    // A payout ends cancelled only by a cancel the client was answered 200 for.
    if (t.status === "cancelled" && !known.answers.some((a) => (a.actor === "cancel" || a.actor === "cancelPayout") && a.status === 200)) {
      bad(`${known.id}: cancelled, though no cancel was answered 200`)
    }
    // Once a client saw it ended (a 200 that ended it, or a 409), no move sent later may be accepted.
    const seenEnded = Math.min(
      ...known.answers.filter((a) => (a.status === 200 && terminal.has(a.result.status ?? "")) || a.result.problem === "RESOURCE_TERMINAL").map((a) => a.answeredAt)
    )
    for (const a of known.answers) {
      // A cancel of a cancelled payout answers 200 again; a bank return follows completion.
      if (a.actor === "bankReturn" || (a.actor === "cancelPayout" && a.result.status === "cancelled")) continue
      if (a.status === 200 && a.sentAt > seenEnded) bad(`${known.id}: ${a.actor} sent after it was seen ended was answered 200 (${a.result.status})`)
    }
  }
  return problems
}

/**
 * The engine's own auditor (`GET /v2/simulate/ledger/audit`, packages/core inspect/LedgerAudit.ts) over the same
 * books: its violations, as problems. It must have read the transfers the check above read.
 */
const audit = async (w: World): Promise<ReadonlyArray<string>> => {
  const reply = await client(w).call("GET", "/v2/simulate/ledger/audit")
  if (reply.status !== 200) return [`GET /v2/simulate/ledger/audit: ${reply.status} ${reply.text}`]
  const report = reply.json as { clean: boolean; scanned: { transfers: number }; checks: Array<{ name: string }>; violations: Array<{ check: string; detail: string }> }
  const problems = report.violations.map((v) => `audit ${v.check}: ${v.detail}`)
  if (report.checks.length !== 4) problems.push(`the audit made ${report.checks.length} checks, not 4`)
  if (report.scanned.transfers === 0) problems.push("the audit read no transfer")
  if (!report.clean && problems.length === 0) problems.push("the audit is not clean but lists no violation")
  return problems
}

// --- the check -----------------------------------------------------------------------------------------------------

const check = async (bank: Bank, scale: number) => {
  const seedValue = Number(process.env.FOS_BANK_SEED ?? Math.floor(Math.random() * 2 ** 31))
  const w: World = { bank, random: seeded(seedValue), holders: [], recipients: new Map(), known: new Map(), problems: [], tick: 0, advances: 0 }
  const failWith = (stage: string, problems: ReadonlyArray<string>) =>
    expect(problems, `${stage} (FOS_BANK_SEED=${seedValue}, ${w.known.size} deposits and payouts)`).toEqual([])
  ;(w as { holders: ReadonlyArray<Holder> }).holders = await openAccounts(w, 3)

  // Two rounds of the crowd; between them, with money still moving, the books must already balance.
  await runCrowd(w, scale)
  failWith("answers of the first round", w.problems)
  failWith("books between rounds", await checkBooks(w, false))
  failWith("the ledger audit between rounds", await audit(w))
  await runCrowd(w, scale)
  failWith("answers of the second round", w.problems)

  // The reviewers finish: a payout a simulate call sent to review (or asked the caller about) waits for the review's
  // end, which only a reviewer gives (docs/money.md, "Compliance review"); deposits are never held by a review.
  for (const t of w.known.values()) {
    if (t.kind !== "payout") continue
    const read = await client(w).call("GET", `/v2/payouts/${t.id}`)
    if (read.status !== 200) w.problems.push(`GET /v2/payouts/${t.id}: ${read.status} ${read.text}`)
    else if (!terminal.has(read.json.status) && read.json.stage !== undefined) {
      const cleared = await client(w).call("POST", `/v2/simulate/transactions/${t.id}/review`, { action: "clear" })
      if (cleared.status !== 200) w.problems.push(`clearing the review of ${t.id}: ${cleared.status} ${cleared.text}`)
    }
  }
  failWith("the reviewers' end", w.problems)

  // Everything open settles once the longest settlement time has passed.
  await advanceAll(w, settleEverything)
  failWith("the final advance", w.problems)
  const statuses = new Map<string, number>()
  failWith("books at the end", await checkBooks(w, true))
  failWith("the ledger audit at the end", await audit(w))
  for (const t of w.known.values()) {
    const ended = t.answers.find((a) => a.status === 200 && terminal.has(a.result.status ?? ""))
    const k = ended === undefined ? "settled by the clock" : `${ended.actor}`
    statuses.set(k, (statuses.get(k) ?? 0) + 1)
  }
  if (process.env.FOS_BANK_VERBOSE !== undefined) console.log(`FOS_BANK_SEED=${seedValue}: ${w.known.size} deposits and payouts, ended by ${JSON.stringify(Object.fromEntries(statuses))}`)
  // The crowd must have exercised every ending, or the check proved less than it says.
  expect(w.known.size).toBeGreaterThan(0)
  expect([...w.known.values()].filter((t) => t.kind === "payout").length).toBeGreaterThan(0)
  // (Per kind of call, a run can be unlucky: the calls race the clock and each other for the same new deposits.)
  const endedBy = (...kinds: Array<string>) => kinds.reduce((n, k) => n + (statuses.get(k) ?? 0), 0)
  const endings = JSON.stringify(Object.fromEntries(statuses))
  expect(endedBy("settled by the clock"), endings).toBeGreaterThan(0)
  expect(endedBy("settle"), endings).toBeGreaterThan(0)
  expect(endedBy("fail", "return"), endings).toBeGreaterThan(0)
}

describe("the bank-style check", () => {
  it("balances on the memory store", async () => {
    const bank = await embedded("memory")
    try {
      await check(bank, 3)
    } finally {
      await bank.close()
    }
  }, 60_000)

  it("balances on PGlite", async () => {
    const bank = await embedded("pglite")
    try {
      await check(bank, 1)
    } finally {
      await bank.close()
    }
  }, 60_000)
})

describe.skipIf(adminUrl === undefined || adminUrl === "")("the bank-style check on PostgreSQL", () => {
  afterAll(() => killAllFos())

  it("balances with two server processes sharing one database", async () => {
    const bank = await twoServers()
    try {
      await check(bank, 1)
    } finally {
      await bank.close()
    }
  }, 90_000)
})
