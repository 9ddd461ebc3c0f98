/**
 * The virtual clocks: one per organization's sandbox, and the engine's root clock, kept in the store
 * (docs/clock.md).
 *
 * A clock is a row of the `clocks` table, keyed by the sandbox's scope (`scopeOf(organization, "sandbox")`), or by
 * `rootClockId` for the root clock. Every process sharing a database reads the same rows, so they agree on every
 * sandbox's time, and a restarted process resumes each clock where it was. A sandbox whose clock was never advanced
 * on its own has no row and follows the root clock; a clock is never behind the root clock.
 *
 * - A request of a sandbox reads its clock once and runs on that instant (`clockFor`); the live environment runs on
 *   real time, so its timers fire on a real-time scheduler; what has no scope (the operator surface, the seed, a
 *   host's own timers) runs on the root clock.
 * - `advanceClock` moves one sandbox's clock and fires only that sandbox's timers. It takes a lease on the clock's row
 *   first: a second advance of the same clock while one runs is refused (409 CONFLICT), in this process or any other.
 *   The lease is renewed at every step and ends with the advance; one left by a crashed process lapses after a
 *   minute of real time. Once begun, an advance runs to its end even if its caller is interrupted (a client gone).
 * - `advanceEvery` moves every virtual clock, each from its own time (`engine.clock` of an embedded engine): each
 *   sandbox clock of its own by its own timers, then the root clock with the sandboxes that follow it.
 */
import { Clock, Effect, Semaphore } from "effect"
import * as IdGenerator from "./IdGenerator.ts"
import * as Outbox from "./Outbox.ts"
import * as Problem from "./Problem.ts"
import * as Store from "./Store.ts"
import * as Timers from "./Timers.ts"

export interface StoredClock {
  /** The sandbox's scope (`<organization>/sandbox`), or `rootClockId`. */
  readonly id: string
  readonly nowMs: number
  /** The advance under way, if any: who runs it, and until when (real time) its lease holds for other processes. */
  readonly advancing?: { readonly owner: string; readonly leaseUntilMs: number }
}

/** The root clock's row. */
export const rootClockId = ""

/**
 * Where a seeded engine's virtual clock starts when no start is given (`--random-seed` alone, `createEngine({
 * randomSeed })`): Tuesday 3 March 2026, 09:00 UTC. A seed is meant to reproduce a run, and a clock started at the
 * real time would make every timestamp, and the path (a payout made at 13:52 meets another ACH day than one made at
 * 14:05), depend on the minute the suite started. A weekday morning is inside every window the world model has: the
 * foreign-exchange market is open, ACH and SEPA settle on the next business day, and nothing waits for Monday.
 */
export const seededStartMs = Date.UTC(2026, 2, 3, 9, 0, 0, 0)

export const Clocks = Store.table<StoredClock>({
  name: "clocks",
  key: (c) => c.id,
  orders: {
    // Every clock, for an advance of them all (`engine.clock`); nothing reads their total.
    all: { partition: () => "", sort: (c) => c.id, counted: false },
    // One sandbox's clock, for its snapshot and restore (Reset.ts `sandboxTables`); the root clock has no scope.
    byScope: { partition: (c) => (c.id === rootClockId ? undefined : c.id), sort: (c) => c.id, counted: false }
  }
})

/** How long an advance's lease holds, in real time, past its last step, for other processes. */
const leaseMs = 60_000

/** How many outbox rows one read of the events an advance emitted takes. */
const eventsPage = 1000

/** A clock standing still at `nowMs` (a request's, a step's); its sleeps run on `sleeper`. */
export const fixedClock = (nowMs: number, sleeper: Clock.Clock): Clock.Clock => {
  const nanos = BigInt(nowMs) * 1_000_000n
  return {
    currentTimeMillisUnsafe: () => nowMs,
    currentTimeMillis: Effect.succeed(nowMs),
    currentTimeNanosUnsafe: () => nanos,
    currentTimeNanos: Effect.succeed(nanos),
    monotonicTimeNanosUnsafe: () => nanos,
    monotonicTimeNanos: Effect.succeed(nanos),
    sleep: (duration) => sleeper.sleep(duration)
  }
}

/**
 * The root clock's time as stored, written at `startMs` when the store has none: a restart resumes the clocks where
 * they were, and a start time given again is for a new store only.
 */
export const loadRoot = (store: Store.StoreService, startMs: number): Effect.Effect<number> =>
  Effect.gen(function*() {
    const stored = yield* store.get(Clocks, rootClockId)
    if (stored !== undefined) return stored.nowMs
    // Two processes starting on one new database at once: the second finds the first's row.
    const inserted = yield* store.insert(Clocks, { id: rootClockId, nowMs: startMs }).pipe(
      Effect.as(true),
      Effect.catchTag("UniqueViolation", () => Effect.succeed(false))
    )
    return inserted ? startMs : ((yield* store.get(Clocks, rootClockId))?.nowMs ?? startMs)
  })

/** The events of `scope`'s outbox after `afterSequence`, counted by type. */
const eventsSince = (store: Store.StoreService, scope: string, afterSequence: number) =>
  Effect.gen(function*() {
    const counts: Record<string, number> = {}
    let from = { sort: afterSequence as number, key: "\uffff" }
    while (true) {
      const page = yield* store.page(Outbox.OutboxEvents, { order: "byScope", partition: scope, descending: false, backward: false, from, limit: eventsPage })
      for (const event of page) counts[event.type] = (counts[event.type] ?? 0) + 1
      if (page.length < eventsPage) return counts
      const last = page[page.length - 1]!
      from = { sort: last.sequence, key: last.id }
    }
  })

export interface VirtualTimeControl extends Timers.TimeControlService {
  /** How far this process's advances have moved clocks, in all: the rate limiter counts it as time passed. */
  readonly advancedMs: () => number
}

/**
 * The virtual clocks' control over `root` (loaded with `Clocks.loadRoot`), with `realClock` for what runs on real time:
 * the live environment, leases, and the sleeps of a clock standing still.
 *
 * `settled(scope)` waits for the work timers handed to the background (webhook sends) that is in flight, for one
 * sandbox or (undefined) for all: a clock stands still while a receiver answers, so an attempt's outcome belongs to
 * the instant it was made (a retry is due 30 s after its attempt, not after the receiver answered). A clock waits for
 * it before it moves forward; a write's settle does not move a clock, so never waits.
 */
export const makeVirtualTimeControl = (
  root: Timers.VirtualClock,
  realClock: Clock.Clock,
  settled: (scope?: string) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<VirtualTimeControl> =>
  Effect.map(IdGenerator.randomHex(16), (engine) => {
    const realNow = () => realClock.currentTimeMillisUnsafe()
    // The advances this process runs now: its own leases hold for exactly as long, whatever real time says.
    const running = new Set<string>()
    let owners = 0
    let advancedMs = 0
    const holds = (lease: NonNullable<StoredClock["advancing"]>) =>
      lease.owner.startsWith(`${engine}.`) ? running.has(lease.owner) : lease.leaseUntilMs > realNow()
    const leaseOf = (owner: string) => ({ owner, leaseUntilMs: realNow() + leaseMs })
    // Root advances take turns; they are the embedder's, in one process.
    const rootTurn = Semaphore.makeUnsafe(1).withPermits(1)

    /** A sandbox's time: its row's, never behind the root clock. */
    const timeOf = (row: StoredClock | undefined) => Math.max(row?.nowMs ?? 0, root.currentTimeMillisUnsafe())

    const saveRoot = (store: Store.StoreService, nowMs: number) => Effect.orDie(store.update(Clocks, { id: rootClockId, nowMs }))

    const release = (owner: string) => Effect.sync(() => running.delete(owner))

    /** Takes the clock's lease, and the target its current time gives. */
    const inProgress = () =>
      Problem.apiError("CONFLICT", "Another advance of this organization's clock is running; nothing was changed.", {
        resolution: "Wait for the running advance to answer, then advance again: one advance of a clock runs at a time."
      })

    const claim = <E>(store: Store.StoreService, scope: string, owner: string, targetOf: (nowMs: number) => Effect.Effect<number, E>) =>
      Effect.gen(function*() {
        // Refused from committed state at once, without waiting on the running advance's transactions; the
        // transaction below checks again under the row lock.
        const seen = yield* store.get(Clocks, scope)
        if (seen?.advancing !== undefined && holds(seen.advancing)) return yield* inProgress()
        // An advance that neither moves the clock nor finds a timer due ({"seconds": 0} on a quiet sandbox) changes
        // nothing: it answers from committed state, without a lease or a write, so such advances never meet each
        // other's lease.
        const fromMs = timeOf(seen)
        if (Math.max(fromMs, yield* targetOf(fromMs)) === fromMs) {
          const next = yield* Timers.nextTimerIn(Timers.scope(scope))
          if (next === undefined || next.dueAtMs > fromMs) return { fromMs, targetMs: fromMs, idle: true, nextDueMs: next?.dueAtMs }
        }
        return { ...yield* claimLocked(store, scope, owner, targetOf), idle: false, nextDueMs: undefined }
      })

    const claimLocked = <E>(store: Store.StoreService, scope: string, owner: string, targetOf: (nowMs: number) => Effect.Effect<number, E>) =>
      store.transaction(Effect.gen(function*() {
        let row = yield* store.getForUpdate(Clocks, scope)
        if (row === undefined) {
          // A sandbox's first advance: its row, from the root clock's time (another process may insert it first).
          yield* store.insert(Clocks, { id: scope, nowMs: root.currentTimeMillisUnsafe() }).pipe(Effect.catchTag("UniqueViolation", () => Effect.void))
          row = yield* store.getForUpdate(Clocks, scope)
        }
        if (row?.advancing !== undefined && holds(row.advancing)) return yield* inProgress()
        const fromMs = timeOf(row)
        const targetMs = Math.max(fromMs, yield* targetOf(fromMs))
        yield* Effect.orDie(store.update(Clocks, { id: scope, nowMs: fromMs, advancing: leaseOf(owner) }))
        return { fromMs, targetMs }
      }))

    /** One sandbox's advance; `counted`: it adds to the time the rate limiter sees passing. */
    const advanceOne = <E>(scope: string, targetOf: (nowMs: number) => Effect.Effect<number, E>, counted: boolean) =>
      Effect.uninterruptible(Effect.gen(function*() {
        const store = yield* Store.Store
        const owner = `${engine}.${owners++}`
        running.add(owner)
        return yield* Effect.ensuring(
          Effect.gen(function*() {
            const { fromMs, targetMs, idle, nextDueMs } = yield* claim(store, scope, owner, targetOf)
            if (idle) return { fromMs, nowMs: fromMs, timersFired: {}, eventsEmitted: {}, nextDueMs } satisfies Timers.AdvanceReport
            // Every event written from here on has a higher number (Store.ts, `nextSequence`).
            const firstSequence = yield* store.nextSequence
            const lane = Timers.scope(scope)
            const timersFired: Record<string, number> = {}
            const count = (timer: Timers.Timer) => void (timersFired[timer.kind] = (timersFired[timer.kind] ?? 0) + 1)
            let nowMs = fromMs
            while (true) {
              let next = yield* Timers.nextTimerIn(lane)
              if (targetMs > nowMs && (next === undefined || next.dueAtMs > nowMs)) {
                // The clock is about to move: the sends in flight end first, and may schedule or remove timers.
                yield* settled(scope)
                next = yield* Timers.nextTimerIn(lane)
              }
              if (next === undefined || next.dueAtMs > targetMs) break
              nowMs = Math.max(nowMs, next.dueAtMs)
              // The step's time is stored before its timers fire: a request of the sandbox meanwhile sees it, and the
              // lease is renewed.
              yield* Effect.orDie(store.update(Clocks, { id: scope, nowMs, advancing: leaseOf(owner) }))
              yield* Timers.fireDue(nowMs, lane, count).pipe(Effect.provideService(Clock.Clock, fixedClock(nowMs, realClock)))
            }
            yield* Effect.orDie(store.update(Clocks, { id: scope, nowMs: targetMs }))
            if (counted) advancedMs += targetMs - fromMs
            const eventsEmitted = yield* eventsSince(store, scope, firstSequence)
            const next = yield* Timers.nextTimerIn(lane)
            const report: Timers.AdvanceReport = { fromMs, nowMs: targetMs, timersFired, eventsEmitted, nextDueMs: next?.dueAtMs }
            return report
          }),
          release(owner)
        )
      }))

    const advanceClock: Timers.TimeControlService["advanceClock"] = (scope, targetOf) => advanceOne(scope, targetOf, true)

    /**
     * Every clock to the target `targetOf` gives from its own time: first each sandbox clock of its own, by its own
     * timers, then the root clock with every sandbox that follows it, and the timers without a scope. A sandbox clock
     * is never behind the root, so the root's steps find none of the first ones' timers due.
     */
    const advanceEvery: Timers.TimeControlService["advanceEvery"] = (targetOf) =>
      Effect.uninterruptible(rootTurn(Effect.gen(function*() {
        const store = yield* Store.Store
        let from: { sort: string; key: string } | undefined
        while (true) {
          const rows = yield* store.page(Clocks, { order: "all", partition: "", descending: false, backward: false, from, limit: 100 })
          for (const row of rows) {
            if (row.id !== rootClockId) yield* Effect.orDie(advanceOne(row.id, (now) => Effect.succeed(targetOf(now)), false))
          }
          if (rows.length < 100) break
          from = { sort: rows[rows.length - 1]!.id, key: rows[rows.length - 1]!.id }
        }
        const fromMs = root.currentTimeMillisUnsafe()
        const targetMs = Math.max(fromMs, targetOf(fromMs))
        while (true) {
          let next = yield* Timers.nextTimerIn(Timers.virtual)
          if (targetMs > root.currentTimeMillisUnsafe() && (next === undefined || next.dueAtMs > root.currentTimeMillisUnsafe())) {
            yield* settled()
            next = yield* Timers.nextTimerIn(Timers.virtual)
          }
          if (next === undefined || next.dueAtMs > targetMs) break
          // A sandbox reads its clock as never behind the root clock, so moving the root moves every clock behind it.
          root.set(next.dueAtMs)
          yield* saveRoot(store, root.currentTimeMillisUnsafe())
          yield* Timers.fireDue(root.currentTimeMillisUnsafe(), Timers.virtual).pipe(Effect.provideService(Clock.Clock, root))
        }
        root.set(targetMs)
        yield* saveRoot(store, root.currentTimeMillisUnsafe())
        advancedMs += root.currentTimeMillisUnsafe() - fromMs
      })))

    const control: VirtualTimeControl = {
      mode: "virtual",
      now: root.currentTimeMillis,
      advanceTo: (targetMs) => advanceEvery((nowMs) => Math.max(nowMs, targetMs)),
      advanceEvery,
      clockFor: (scope) =>
        scope === undefined
          ? Effect.succeed(root)
          : Timers.isRealTimeScope(scope)
          ? Effect.succeed(realClock)
          : Effect.flatMap(Store.Store, (store) => Effect.map(store.get(Clocks, scope), (row) => fixedClock(timeOf(row), realClock))),
      advanceClock,
      settle: (scope, nowMs) =>
        Timers.fireDue(nowMs, Timers.scope(scope)).pipe(
          Effect.provideService(Clock.Clock, Timers.isRealTimeScope(scope) ? realClock : fixedClock(nowMs, realClock))
        ),
      advancedMs: () => advancedMs
    }
    return control
  })
