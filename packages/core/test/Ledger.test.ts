import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as fc from "fast-check"
import * as Ledger from "../src/money/Ledger.ts"
import * as MemoryStore from "../src/kernel/MemoryStore.ts"
import * as Store from "../src/kernel/Store.ts"

const scope = "org_ledger/sandbox"
const wallet = (id: string): Ledger.Holder => ({ scope, type: "wallet", id })
const world: Ledger.Holder = { scope, type: "world", id: "chain:base" }
const liquidity: Ledger.Holder = { scope, type: "liquidity", id: "service" }
const fees: Ledger.Holder = { scope, type: "fees", id: "service" }
const usdc: Ledger.LedgerAsset = { code: "USDC", chain: "base" }
const eth: Ledger.LedgerAsset = { code: "ETH", chain: "base" }

const posted = (id: string, debit: Ledger.Holder, credit: Ledger.Holder, amount: bigint, asset = usdc): Ledger.TransferRequest => ({
  kind: "posted",
  id,
  debit,
  credit,
  asset,
  amount,
  code: "test"
})
const pending = (id: string, debit: Ledger.Holder, credit: Ledger.Holder, amount: bigint, asset = usdc): Ledger.TransferRequest => ({
  kind: "pending",
  id,
  debit,
  credit,
  asset,
  amount,
  code: "test"
})

const refusalOf = <A>(exit: Exit.Exit<A, Ledger.LedgerRefusal>) =>
  Exit.isFailure(exit) && exit.cause.reasons[0]?._tag === "Fail" ? (exit.cause.reasons[0].error as Ledger.LedgerRefusal).reason : undefined

describe("the ledger", () => {
  it.effect("books a deposit from the outside world and shows it as available", () =>
    Effect.gen(function*() {
      yield* Ledger.transfer([posted("t1", world, wallet("w1"), 250_000000n)])
      const balance = yield* Ledger.balanceIn(wallet("w1"), usdc)
      expect(balance).toMatchObject({ available: 250_000000n, pending: 0n, posted: 250_000000n })
      expect(Ledger.balanceToWire(balance)).toEqual({ code: "USDC", chain: "base", available: "250.000000", pending: "0.000000" })
      // The outside world's account goes negative: it is where deposits come from.
      expect((yield* Ledger.balanceIn(world, usdc)).posted).toBe(-250_000000n)
    }).pipe(Effect.provide(MemoryStore.layer)))

  it.effect("refuses to take a customer account below zero, and books nothing of the batch", () =>
    Effect.gen(function*() {
      yield* Ledger.transfer([posted("in", world, wallet("w1"), 100n)])
      const exit = yield* Effect.exit(Ledger.transfer([posted("fee", wallet("w1"), fees, 10n), posted("out", wallet("w1"), world, 95n)]))
      expect(refusalOf(exit)).toBe("insufficient_funds")
      expect((yield* Ledger.balanceIn(wallet("w1"), usdc)).available).toBe(100n)
      expect(yield* (yield* Store.Store).get(Ledger.LedgerTransfers, "fee")).toBeUndefined()
    }).pipe(Effect.provide(MemoryStore.layer)))

  it.effect("counts reservations: a pending transfer holds funds until it is posted or voided", () =>
    Effect.gen(function*() {
      yield* Ledger.transfer([posted("in", world, wallet("w1"), 100n)])
      yield* Ledger.transfer([pending("hold", wallet("w1"), world, 70n)])
      expect(yield* Ledger.balanceIn(wallet("w1"), usdc)).toMatchObject({ available: 30n, pending: 70n, posted: 100n })
      // A second payout of 40 would spend money the first one reserved.
      expect(refusalOf(yield* Effect.exit(Ledger.transfer([pending("hold2", wallet("w1"), world, 40n)])))).toBe("insufficient_funds")
      // Posting less than was reserved releases the rest.
      yield* Ledger.transfer([{ kind: "post", id: "settle", pendingId: "hold", amount: 60n, code: "test" }])
      expect(yield* Ledger.balanceIn(wallet("w1"), usdc)).toMatchObject({ available: 40n, pending: 0n, posted: 40n })
      expect(yield* Ledger.balanceIn(world, usdc)).toMatchObject({ posted: -40n })
    }).pipe(Effect.provide(MemoryStore.layer)))

  it.effect("posts from the caller's copy of a pending transfer as from the stored one, still at most once", () =>
    Effect.gen(function*() {
      const [, hold] = yield* Ledger.transfer([posted("in", world, wallet("w1"), 100n), pending("hold", wallet("w1"), world, 50n)])
      const kept = hold!
      expect(Exit.isFailure(yield* Effect.exit(Ledger.transfer([{ kind: "post", id: "p0", pendingId: "in", pending: kept, code: "t" }])))).toBe(true)
      yield* Ledger.transfer([{ kind: "post", id: "p1", pendingId: "hold", pending: kept, amount: 30n, code: "t" }])
      expect(yield* Ledger.balanceIn(wallet("w1"), usdc)).toMatchObject({ available: 70n, pending: 0n, posted: 70n })
      expect(refusalOf(yield* Effect.exit(Ledger.transfer([{ kind: "void", id: "v1", pendingId: "hold", pending: kept, code: "t" }]))))
        .toBe("pending_already_resolved")
    }).pipe(Effect.provide(MemoryStore.layer)))

  it.effect("resolves a pending transfer at most once, and never for more than it reserved", () =>
    Effect.gen(function*() {
      yield* Ledger.transfer([posted("in", world, wallet("w1"), 100n), pending("hold", wallet("w1"), world, 50n)])
      expect(refusalOf(yield* Effect.exit(Ledger.transfer([{ kind: "post", id: "p1", pendingId: "hold", amount: 51n, code: "t" }]))))
        .toBe("exceeds_pending_amount")
      yield* Ledger.transfer([{ kind: "void", id: "v1", pendingId: "hold", code: "t" }])
      expect(refusalOf(yield* Effect.exit(Ledger.transfer([{ kind: "post", id: "p2", pendingId: "hold", code: "t" }])))).toBe("pending_already_resolved")
      yield* Ledger.transfer([pending("hold2", wallet("w1"), world, 10n)])
      expect(refusalOf(yield* Effect.exit(Ledger.transfer([
        { kind: "void", id: "v2", pendingId: "hold2", code: "t" },
        { kind: "post", id: "p3", pendingId: "hold2", code: "t" }
      ])))).toBe("pending_already_resolved")
      expect(refusalOf(yield* Effect.exit(Ledger.transfer([{ kind: "post", id: "p4", pendingId: "in", code: "t" }])))).toBe("pending_not_found")
      // The refused batch took nothing back: hold2 still holds its 10.
      expect(yield* Ledger.balanceIn(wallet("w1"), usdc)).toMatchObject({ available: 90n, pending: 10n })
    }).pipe(Effect.provide(MemoryStore.layer)))

  it.effect("refuses a transfer id it has booked, so a retried business step cannot book twice", () =>
    Effect.gen(function*() {
      yield* Ledger.transfer([posted("deposit/txn_1", world, wallet("w1"), 5n)])
      expect(refusalOf(yield* Effect.exit(Ledger.transfer([posted("deposit/txn_1", world, wallet("w1"), 5n)])))).toBe("transfer_exists")
      expect(refusalOf(yield* Effect.exit(Ledger.transfer([posted("zero", world, wallet("w1"), 0n)])))).toBe("not_positive")
      expect(refusalOf(yield* Effect.exit(Ledger.transfer([posted("loop", wallet("w1"), wallet("w1"), 1n)])))).toBe("same_account")
      expect((yield* Ledger.balanceIn(wallet("w1"), usdc)).available).toBe(5n)
    }).pipe(Effect.provide(MemoryStore.layer)))

  it.effect("books a conversion with its spread and fee legs as one linked batch that balances per asset", () =>
    Effect.gen(function*() {
      // 1,000 USDC in the customer's wallet; the service holds ETH liquidity.
      yield* Ledger.transfer([posted("in", world, wallet("usdc-wallet"), 1000_000000n), posted("liq", { ...world, id: "chain:base" }, liquidity, 10n ** 18n, eth)])
      // Convert 500 USDC at a mid rate of 2,500 USDC/ETH, a 1% spread and a 1 USDC fee: 499 USDC go to the
      // service's liquidity at the customer's rate, so the customer gets 499 / (2500 * 1.01) ETH, rounded down.
      const rateTimes100 = 2500n * 101n
      const ethOut = (499_000000n * 10n ** 12n * 100n) / rateTimes100
      yield* Ledger.transfer([
        posted("conv/fee", wallet("usdc-wallet"), fees, 1_000000n),
        posted("conv/source", wallet("usdc-wallet"), liquidity, 499_000000n),
        posted("conv/destination", liquidity, wallet("eth-wallet"), ethOut, eth)
      ])
      expect(yield* Ledger.balanceIn(wallet("usdc-wallet"), usdc)).toMatchObject({ available: 500_000000n })
      expect(yield* Ledger.balanceIn(wallet("eth-wallet"), eth)).toMatchObject({ available: ethOut })
      expect(yield* Ledger.balanceIn(fees, usdc)).toMatchObject({ posted: 1_000000n })
      yield* expectBalanced
      // A leg that cannot be booked takes the whole conversion back.
      const exit = yield* Effect.exit(Ledger.transfer([
        posted("conv2/fee", wallet("usdc-wallet"), fees, 1_000000n),
        posted("conv2/source", wallet("usdc-wallet"), liquidity, 600_000000n)
      ]))
      expect(refusalOf(exit)).toBe("insufficient_funds")
      expect(yield* Ledger.balanceIn(fees, usdc)).toMatchObject({ posted: 1_000000n })
    }).pipe(Effect.provide(MemoryStore.layer)))

  it.effect("lists a holder's balances, one per asset", () =>
    Effect.gen(function*() {
      yield* Ledger.transfer([posted("a", world, wallet("w1"), 3_000000n), posted("b", world, wallet("w1"), 2n * 10n ** 17n, eth)])
      const balances = yield* Ledger.balancesOf(wallet("w1"))
      expect(balances.map(Ledger.balanceToWire)).toEqual([
        { code: "ETH", chain: "base", available: "0.200000000000000000", pending: "0.000000000000000000" },
        { code: "USDC", chain: "base", available: "3.000000", pending: "0.000000" }
      ])
      expect(yield* Ledger.balancesOf(wallet("nobody"))).toEqual([])
    }).pipe(Effect.provide(MemoryStore.layer)))
})

// --- invariants ----------------------------------------------------------------------------------------------

/** Per asset, all accounts' posted and pending totals sum to zero, and no customer account is below zero. */
const expectBalanced = Effect.gen(function*() {
  const { accounts } = yield* snapshot
  const sums = new Map<string, { posted: bigint; pending: bigint }>()
  for (const a of accounts) {
    const key = `${a.asset}@${a.chain ?? ""}`
    const sum = sums.get(key) ?? { posted: 0n, pending: 0n }
    sum.posted += BigInt(a.creditsPosted) - BigInt(a.debitsPosted)
    sum.pending += BigInt(a.creditsPending) - BigInt(a.debitsPending)
    sums.set(key, sum)
    if (a.holderType === "wallet" || a.holderType === "virtual_account") {
      expect(BigInt(a.creditsPosted) - BigInt(a.debitsPosted) - BigInt(a.debitsPending), a.id).toBeGreaterThanOrEqual(0n)
    }
  }
  for (const [asset, sum] of sums) expect(sum, asset).toEqual({ posted: 0n, pending: 0n })
})

const holders = [wallet("a"), wallet("b"), wallet("c"), { scope, type: "virtual_account", id: "v" } as Ledger.Holder, world, liquidity, fees]

/** Every account of the scope, and every transfer, read back through the store's orders. */
const snapshot = Effect.gen(function*() {
  const store = yield* Store.Store
  const accounts = yield* store.page(Ledger.LedgerAccounts, { order: "byScope", partition: scope, descending: false, backward: false, from: undefined, limit: 1000 })
  const transfers = new Map<string, Ledger.LedgerTransfer>()
  for (const account of accounts) {
    {
      for (const order of ["byDebit", "byCredit"]) {
        const rows = yield* store.page(Ledger.LedgerTransfers, { order, partition: account.id, descending: false, backward: false, from: undefined, limit: 10_000 })
        for (const t of rows) transfers.set(t.id, t)
      }
    }
  }
  return { accounts, transfers: [...transfers.values()] }
})

/** Each account's totals equal what its transfers add up to. */
const expectTotalsMatchTransfers = Effect.gen(function*() {
  const { accounts, transfers } = yield* snapshot
  const byId = new Map(transfers.map((t) => [t.id, t]))
  for (const account of accounts) {
    const totals = { debitsPosted: 0n, debitsPending: 0n, creditsPosted: 0n, creditsPending: 0n }
    for (const t of transfers) {
      const amount = BigInt(t.amount)
      const side = t.debitAccountId === account.id ? "debits" : t.creditAccountId === account.id ? "credits" : undefined
      if (side === undefined) continue
      if (t.kind === "posted") totals[`${side}Posted`] += amount
      if (t.kind === "pending") totals[`${side}Pending`] += amount
      if (t.kind === "post" || t.kind === "void") {
        totals[`${side}Pending`] -= BigInt(byId.get(t.resolves!)!.amount)
        if (t.kind === "post") totals[`${side}Posted`] += amount
      }
    }
    expect({
      debitsPosted: BigInt(account.debitsPosted),
      debitsPending: BigInt(account.debitsPending),
      creditsPosted: BigInt(account.creditsPosted),
      creditsPending: BigInt(account.creditsPending)
    }, account.id).toEqual(totals)
  }
})

type Op =
  | { readonly op: "deposit"; readonly to: number; readonly amount: bigint; readonly eth: boolean }
  | { readonly op: "move"; readonly from: number; readonly to: number; readonly amount: bigint; readonly eth: boolean; readonly twoPhase: boolean }
  | { readonly op: "post"; readonly which: number; readonly fraction: number }
  | { readonly op: "void"; readonly which: number }
  | { readonly op: "return"; readonly from: number; readonly amount: bigint }
  | { readonly op: "conversion"; readonly from: number; readonly to: number; readonly amount: bigint }

const customer = fc.integer({ min: 0, max: 3 })
const amount = fc.bigInt({ min: 1n, max: 1_000n })
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant("deposit" as const), to: customer, amount, eth: fc.boolean() }),
  fc.record({ op: fc.constant("move" as const), from: customer, to: fc.integer({ min: 0, max: 6 }), amount, eth: fc.boolean(), twoPhase: fc.boolean() }),
  fc.record({ op: fc.constant("post" as const), which: fc.nat(), fraction: fc.double({ min: 0.01, max: 1, noNaN: true }) }),
  fc.record({ op: fc.constant("void" as const), which: fc.nat() }),
  fc.record({ op: fc.constant("return" as const), from: customer, amount }),
  fc.record({ op: fc.constant("conversion" as const), from: customer, to: customer, amount })
)

describe("ledger invariants (property)", () => {
  it("after every step of random deposits, reservations, posts, voids, returns and conversions: per asset postings sum to zero, no customer account is negative counting reservations, and every balance is the sum of its transfers", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
        await Effect.runPromise(Effect.gen(function*() {
          const open: Array<string> = []
          let n = 0
          for (const step of ops) {
            const id = `t${n++}`
            let batch: ReadonlyArray<Ledger.TransferRequest>
            switch (step.op) {
              case "deposit":
                batch = [posted(id, world, holders[step.to]!, step.amount, step.eth ? eth : usdc)]
                break
              case "move":
                batch = [(step.twoPhase ? pending : posted)(id, holders[step.from]!, holders[step.to]!, step.amount, step.eth ? eth : usdc)]
                break
              case "post": {
                if (open.length === 0) continue
                const pendingId = open[step.which % open.length]!
                const reserved = BigInt((yield* (yield* Store.Store).get(Ledger.LedgerTransfers, pendingId))!.amount)
                const settle = BigInt(Math.max(1, Math.floor(Number(reserved) * step.fraction)))
                batch = [{ kind: "post", id, pendingId, amount: settle, code: "post" }]
                break
              }
              case "void": {
                if (open.length === 0) continue
                batch = [{ kind: "void", id, pendingId: open[step.which % open.length]!, code: "void" }]
                break
              }
              case "return":
                batch = [posted(id, holders[step.from]!, world, step.amount)]
                break
              case "conversion":
                batch = [
                  posted(`${id}/fee`, holders[step.from]!, fees, 1n),
                  posted(`${id}/source`, holders[step.from]!, liquidity, step.amount),
                  posted(`${id}/destination`, liquidity, holders[step.to]!, step.amount * 3n, eth)
                ]
                break
            }
            const exit = yield* Effect.exit(Ledger.transfer(batch))
            if (Exit.isSuccess(exit)) {
              for (const t of exit.value) {
                if (t.kind === "pending") open.push(t.id)
                if (t.resolves !== undefined) open.splice(open.indexOf(t.resolves), 1)
              }
            } else {
              // Refused for a reason the ledger names, and nothing of the batch was booked.
              expect(["insufficient_funds", "same_account", "pending_already_resolved"]).toContain(refusalOf(exit))
              for (const request of batch) expect(yield* (yield* Store.Store).get(Ledger.LedgerTransfers, request.id)).toBeUndefined()
            }
            yield* expectBalanced
            yield* expectTotalsMatchTransfers
          }
        }).pipe(Effect.provide(MemoryStore.layer)))
      }),
      { numRuns: 200 }
    )
  })
})
