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
 * - `advanceClock` moves one sandbox's clock and fires only that sandbox's timers. It writes itself on the clock's row
 *   first, with its target: a second advance of the same clock while one runs is refused (409 CONFLICT), in this
 *   process or any other. It holds while its process lives (Liveness.ts); one left by a crashed process is finished
 *   to its target by the next to touch the clock, a few seconds after the crash (`makeVirtualTimeControl`). Once
 *   begun, an advance runs to its end even if its caller is interrupted (a client gone).
 * - `advanceEvery` moves every virtual clock, each from its own time (`engine.clock` of an embedded engine): each
 *   sandbox clock of its own by its own timers, then the root clock with the sandboxes that follow it.
 */
import { toIso } from "@fos/contract"
import { Clock, Context, Effect, Semaphore } from "effect"
import * as Domain from "./Domain.ts"
import type * as Liveness from "./Liveness.ts"
import * as Outbox from "./Outbox.ts"
import * as Problem from "./Problem.ts"
import * as Store from "./Store.ts"
import * as Telemetry from "./Telemetry.ts"
import * as Timers from "./Timers.ts"

/**
 * An advance under way, as its clock's row keeps it: it is defined by its target, so whoever finishes it (its own
 * process, or the next to touch the clock after a crash) lands where it was asked to.
 */
export interface AdvanceUnderWay {
  /** Who runs it: a lease owner of a process (Liveness.ts). */
  readonly owner: string
  /** Where the clock was when the advance took it, and where it lands. */
  readonly fromMs: number
  readonly targetMs: number
  /** The Idempotency-Key of the request that asked for it, if any: a retry of that request answers its report. */
  readonly key?: string
  /** The store's sequence when it began: the events written since are its report's. */
  readonly firstSequence: number
  /** The timers fired so far, by kind, as of its last step. */
  readonly timersFired: Readonly<Record<string, number>>
}

export interface StoredClock {
  /** The sandbox's scope (`<organization>/sandbox`), or `rootClockId`. */
  readonly id: string
  readonly nowMs: number
  /** The advance under way, if any. */
  readonly advancing?: AdvanceUnderWay
  /**
   * The last advances asked for with an Idempotency-Key that finished, newest first (at most `keptAdvances`), and what
   * each did: a retry of a request whose process died before it answered finds its answer here, since its key's
   * record never got one.
   */
  readonly keyedAdvances?: ReadonlyArray<KeyedAdvance>
}

export interface KeyedAdvance {
  readonly key: string
  readonly report: Timers.AdvanceReport
}

/** How many finished keyed advances a clock keeps for the retries of requests that never answered. */
export const keptAdvances = 10

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
    // One sandbox's clock, for its snapshot and restore (`domain`); the root clock has no scope.
    byScope: { partition: (c) => (c.id === rootClockId ? undefined : c.id), sort: (c) => c.id, counted: false }
  }
})

/** Each sandbox's clock, which a reset keeps and a snapshot saves. */
export const domain = Domain.make({
  name: "kernel/Clocks",
  tables: [
    // The sandbox's clock (kernel/Clocks.ts): a reset empties the sandbox at the time it is at, since a clock never
    // goes back by itself (docs/clock.md); a restore puts the snapshot's time back, with the timers it held. An advance
    // under way is not state: restored, it would be finished to its target by whoever touched the clock next.
    {
      ...Domain.inScope(Clocks, "byScope"),
      keptByReset: true,
      saved: { as: ({ advancing: _, ...clock }: StoredClock) => clock }
    }
  ]
})

/**
 * A sandbox clock's row as a request read it with its caller (the pipeline has it read with the API key, one
 * statement: tenancy/Auth.ts), so neither the request's clock nor its advance reads it again. `row` is what a read
 * would have found then; the request's clock updates it when it finishes an advance a crash left, and an advance
 * takes it once (`used`), since what it writes makes it old.
 */
export interface ReadClockRow {
  readonly scope: string
  row: StoredClock | undefined
  used: boolean
}

export class ReadClock extends Context.Reference<ReadClockRow | undefined>("fos/ReadClock", { defaultValue: () => undefined }) {}

/** `scope`'s clock row: as the request read it with its caller, when it did and nothing has used it up, else read now. */
const readClock = (store: Store.StoreService, scope: string, use: boolean) =>
  Effect.flatMap(ReadClock, (read) => {
    if (read === undefined || read.scope !== scope || read.used) return store.get(Clocks, scope)
    if (use) read.used = true
    return Effect.succeed(read.row)
  })

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
    const after = { sort: afterSequence, key: "\uffff" }
    yield* Store.walk(store, Outbox.OutboxEvents, { order: "byScope", partition: scope, after, pageSize: eventsPage }, (event) =>
      Effect.sync(() => {
        counts[event.type] = (counts[event.type] ?? 0) + 1
      }))
    return counts
  })

export interface VirtualTimeControl extends Timers.TimeControlService {
  /** How far this process's advances have moved clocks, in all: the rate limiter counts it as time passed. */
  readonly advancedMs: () => number
}

/** A clock's advance was taken over by another process, which judged this one dead; that one finishes it. */
const takenOver = () =>
  Problem.apiError("CONFLICT", "Another process took this advance over (it judged this one stopped) and finishes it.", {
    resolution: "Retry with the same Idempotency-Key for the advance's answer, or read the clock."
  })

const inProgress = () =>
  Problem.apiError("CONFLICT", "Another advance of this organization's clock is running; nothing was changed.", {
    resolution: "Wait for the running advance to answer, then advance again: one advance of a clock runs at a time."
  })

/**
 * The virtual clocks' control over `root` (loaded with `Clocks.loadRoot`), with `realClock` for what runs on real time
 * (the live environment, and the sleeps of a clock standing still) and `liveness` for the leases of advances.
 *
 * `settled(scope)` waits for the work timers handed to the background (webhook sends) that is in flight, for one
 * sandbox or (undefined) for all: a clock stands still while a receiver answers, so an attempt's outcome belongs to
 * the instant it was made (a retry is due 30 s after its attempt, not after the receiver answered). A clock waits for
 * it before it moves forward, and an advance before it reports (what the sends schedule is the clock's next timer);
 * a write's settle does not move a clock, so never waits.
 *
 * An advance survives the crash of its process. It is stored with its target before it moves the clock, and each
 * step stores the step's time (and the timers fired so far) before it fires what is due, under the check that the
 * advance is still this process's. The process that next touches the clock (a request of the sandbox, an advance of
 * it, `engine.clock`) once the crashed process counts as dead (Liveness.ts: a few seconds) takes the advance over
 * and finishes it to its target: every timer due by then fires once (a timer fires in its own transaction, which
 * removes it), and no request sees the clock short of it. A retry of the request that asked for it (its
 * Idempotency-Key) answers what it did, and never advances again: it ends at the original target.
 */
export const makeVirtualTimeControl = (
  root: Timers.VirtualClock,
  realClock: Clock.Clock,
  liveness: Liveness.LivenessService,
  settled: (scope?: string) => Effect.Effect<void> = () => Effect.void,
  /** Told of every advance, by how far it moved its clock: buckets shared with other processes count it as passed. */
  advanced: (ms: number) => Effect.Effect<void> = () => Effect.void
): VirtualTimeControl => {
  // The advances this process runs now: its own leases hold for exactly as long, whatever real time says.
  const running = new Set<string>()
  let advancedMs = 0
  const holds = (advance: AdvanceUnderWay): Effect.Effect<boolean> =>
    liveness.isOwn(advance.owner)
      ? Effect.succeed(running.has(advance.owner))
      : liveness.isAlive(advance.owner)
  // Root advances take turns; they are the embedder's, in one process.
  const rootTurn = Semaphore.makeUnsafe(1).withPermits(1)

  /** A sandbox's time: its row's, never behind the root clock. */
  const timeOf = (row: StoredClock | undefined) => Math.max(row?.nowMs ?? 0, root.currentTimeMillisUnsafe())

  const saveRoot = (store: Store.StoreService, nowMs: number) => Effect.orDie(store.update(Clocks, { id: rootClockId, nowMs }))

  /** Runs `work` as a lease owner of this process, which holds for as long as it runs. */
  const asOwner = <A, E, R>(work: (owner: string) => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      const owner = liveness.newOwner()
      running.add(owner)
      return Effect.ensuring(work(owner), Effect.sync(() => running.delete(owner)))
    })

  /** Writes `next` over the clock's row if the advance there is still `owner`'s; fails with `takenOver` if not. */
  const writeIfOwned = (store: Store.StoreService, scope: string, owner: string, next: StoredClock) =>
    store.transaction(Effect.gen(function*() {
      const row = yield* store.getForUpdate(Clocks, scope)
      if (row?.advancing?.owner !== owner) return yield* takenOver()
      yield* Effect.orDie(store.update(Clocks, next))
    }))

  /**
   * Steps `advance` (owned by `owner`, the clock at `nowMs`) to its target, firing the sandbox's timers due on the way,
   * then lands and answers what it did.
   */
  const runToTarget = (store: Store.StoreService, scope: string, owner: string, fromNowMs: number, advance: AdvanceUnderWay, kept: StoredClock["keyedAdvances"]) =>
    Effect.gen(function*() {
      const lane = Timers.scope(scope)
      const timersFired: Record<string, number> = { ...advance.timersFired }
      const count = (timer: Timers.Timer) => void (timersFired[timer.kind] = (timersFired[timer.kind] ?? 0) + 1)
      let nowMs = fromNowMs
      // Whether a step has just fired what was due at `nowMs`: the next timer is then later, or made by the sends the
      // clock waits for, so it is read once, after them.
      let stepped = false
      while (true) {
        let next = stepped && advance.targetMs > nowMs ? undefined : yield* Timers.nextTimerIn(lane)
        if (advance.targetMs > nowMs && (next === undefined || next.dueAtMs > nowMs)) {
          // The clock is about to move: the sends in flight end first, and may schedule or remove timers.
          yield* settled(scope)
          next = yield* Timers.nextTimerIn(lane)
        }
        if (next === undefined || next.dueAtMs > advance.targetMs) break
        nowMs = Math.max(nowMs, next.dueAtMs)
        // The step's time is stored before its timers fire: a request of the sandbox meanwhile sees it, and a process
        // that finishes the advance after a crash starts from it.
        yield* writeIfOwned(store, scope, owner, { id: scope, nowMs, advancing: { ...advance, timersFired: { ...timersFired } }, ...keptOf(kept) })
        yield* Timers.fireDue(nowMs, lane, count, { knownDue: true }).pipe(Effect.provideService(Clock.Clock, fixedClock(nowMs, realClock)))
        stepped = true
      }
      // The report is read once the sends of the last instant have ended: whatever they schedule (a retry) is the
      // clock's next timer, on every store and however fast the receivers answer.
      yield* settled(scope)
      const eventsEmitted = yield* eventsSince(store, scope, advance.firstSequence)
      const next = yield* Timers.nextTimerIn(lane)
      const report: Timers.AdvanceReport = { fromMs: advance.fromMs, nowMs: advance.targetMs, timersFired, eventsEmitted, nextDueMs: next?.dueAtMs }
      const keyedAdvances = advance.key === undefined ? kept : [{ key: advance.key, report }, ...(kept ?? [])].slice(0, keptAdvances)
      yield* writeIfOwned(store, scope, owner, { id: scope, nowMs: advance.targetMs, ...keptOf(keyedAdvances) })
      return { report, key: advance.key }
    })

  /**
   * The advance `seen` on `scope`'s clock, if a crashed process left it, finished by `owner` first: its key and
   * report, or undefined when another finished it meanwhile. Fails with 409 CONFLICT when it is a running one.
   */
  const finishAbandoned = (store: Store.StoreService, scope: string, owner: string, seen: AdvanceUnderWay) =>
    Effect.gen(function*() {
      if (yield* holds(seen)) return yield* inProgress()
      // Taken over under the row lock: of two processes that found it abandoned, one finishes it.
      const taken = yield* store.transaction(Effect.gen(function*() {
        const row = yield* store.getForUpdate(Clocks, scope)
        if (row?.advancing === undefined) return undefined
        if (yield* holds(row.advancing)) return yield* inProgress()
        const advance: AdvanceUnderWay = { ...row.advancing, owner }
        yield* Effect.orDie(store.update(Clocks, { ...row, advancing: advance }))
        return { row, advance }
      }))
      if (taken === undefined) return undefined
      yield* Effect.logWarning("Finishing an advance left by a stopped process").pipe(Effect.annotateLogs({ clock: scope, targetMs: taken.advance.targetMs }))
      const finished = yield* runToTarget(store, scope, owner, taken.row.nowMs, taken.advance, taken.row.keyedAdvances)
      advancedMs += taken.advance.targetMs - taken.row.nowMs
      yield* advanced(taken.advance.targetMs - taken.row.nowMs)
      return finished
    })

  /**
   * Takes the clock for a new advance: its target, and where the clock was; or, for an advance that changes nothing,
   * its answer. `seen` is the clock's row as committed.
   */
  const claim = <E>(
    store: Store.StoreService,
    scope: string,
    owner: string,
    targetOf: (nowMs: number) => Effect.Effect<number, E>,
    key: string | undefined,
    seen: StoredClock | undefined
  ) =>
    Effect.gen(function*() {
      // Refused from committed state at once, without waiting on the running advance's transactions; the
      // transaction below checks again under the row lock.
      if (seen?.advancing !== undefined) return yield* inProgress()
      // An advance that neither moves the clock nor finds a timer due ({"seconds": 0} on a quiet sandbox) changes
      // nothing: it answers from committed state, without a lease or a write, so such advances never meet each
      // other's lease.
      const fromMs = timeOf(seen)
      if (Math.max(fromMs, yield* targetOf(fromMs)) === fromMs) {
        const next = yield* Timers.nextTimerIn(Timers.scope(scope))
        if (next === undefined || next.dueAtMs > fromMs) {
          return { idle: { fromMs, nowMs: fromMs, timersFired: {}, eventsEmitted: {}, nextDueMs: next?.dueAtMs } satisfies Timers.AdvanceReport } as const
        }
      }
      return yield* store.transaction(Effect.gen(function*() {
        let row = yield* store.getForUpdate(Clocks, scope)
        if (row === undefined) {
          // A sandbox's first advance: its row, from the root clock's time (another process may insert it first).
          yield* store.insert(Clocks, { id: scope, nowMs: root.currentTimeMillisUnsafe() }).pipe(Effect.catchTag("UniqueViolation", () => Effect.void))
          row = yield* store.getForUpdate(Clocks, scope)
        }
        if (row?.advancing !== undefined) return yield* inProgress()
        const fromMs = timeOf(row)
        const advance: AdvanceUnderWay = {
          owner,
          fromMs,
          targetMs: Math.max(fromMs, yield* targetOf(fromMs)),
          ...(key === undefined ? {} : { key }),
          // Every event written from here on has a higher number (Store.ts, `nextSequence`).
          firstSequence: yield* store.nextSequence,
          timersFired: {}
        }
        yield* Effect.orDie(store.update(Clocks, { id: scope, nowMs: fromMs, advancing: advance, ...keptOf(row?.keyedAdvances) }))
        return { advance, kept: row?.keyedAdvances } as const
      }))
    })

  /** A sandbox clock's advance in its span, which says where the clock went and how many timers fired. */
  const traced = <E, R>(scope: string, advance: Effect.Effect<Timers.AdvanceReport, E, R>) =>
    advance.pipe(
      Effect.tap((report) =>
        Telemetry.annotate({
          [Telemetry.Attribute.clockFrom]: toIso(report.fromMs),
          [Telemetry.Attribute.clockTo]: toIso(report.nowMs),
          [Telemetry.Attribute.timersFired]: Object.values(report.timersFired).reduce((a, b) => a + b, 0)
        })
      ),
      Telemetry.withSpan(Telemetry.SpanName.clockAdvance, { attributes: () => ({ [Telemetry.Attribute.clock]: scope, ...Telemetry.scopeAttributes(scope) }) })
    )

  /** One sandbox's advance; `counted`: it adds to the time the rate limiter sees passing. */
  const advanceOne = <E>(
    scope: string,
    targetOf: (nowMs: number) => Effect.Effect<number, E>,
    counted: boolean,
    keyed?: { readonly key: string; readonly resumed: boolean }
  ) =>
    Effect.uninterruptible(asOwner((owner) =>
      Effect.gen(function*() {
        const store = yield* Store.Store
        let seen = yield* readClock(store, scope, true)
        if (seen?.advancing !== undefined) {
          // An advance a crash left half done is finished first: this one starts where it was asked to end.
          const finished = yield* finishAbandoned(store, scope, owner, seen.advancing)
          // A retry of an advance whose process died before answering: what it did, and no second advance.
          if (keyed?.resumed === true && finished?.key === keyed.key) return finished.report
          seen = yield* store.get(Clocks, scope)
        }
        if (keyed?.resumed === true) {
          const kept = seen?.keyedAdvances?.find((a) => a.key === keyed.key)
          if (kept !== undefined) return kept.report
        }
        const claimed = yield* claim(store, scope, owner, targetOf, keyed?.key, seen)
        if ("idle" in claimed) return claimed.idle
        const { report } = yield* runToTarget(store, scope, owner, claimed.advance.fromMs, claimed.advance, claimed.kept)
        if (counted) {
          advancedMs += report.nowMs - report.fromMs
          yield* advanced(report.nowMs - report.fromMs)
        }
        return report
      })
    ))

  const advanceClock: Timers.TimeControlService["advanceClock"] = (scope, targetOf, keyed) => traced(scope, advanceOne(scope, targetOf, true, keyed))

  /**
   * Every clock to the target `targetOf` gives from its own time: first each sandbox clock of its own, by its own
   * timers, then the root clock with every sandbox that follows it, and the timers without a scope. A sandbox clock
   * is never behind the root, so the root's steps find none of the first ones' timers due.
   */
  const advanceEvery: Timers.TimeControlService["advanceEvery"] = (targetOf) =>
    Effect.uninterruptible(rootTurn(Effect.gen(function*() {
      const store = yield* Store.Store
      yield* Store.walk(store, Clocks, { order: "all", partition: "" }, (row) =>
        row.id === rootClockId ? Effect.void : Effect.orDie(traced(row.id, advanceOne(row.id, (now) => Effect.succeed(targetOf(now)), false))))
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
        yield* Timers.fireDue(root.currentTimeMillisUnsafe(), Timers.virtual, undefined, { knownDue: true }).pipe(Effect.provideService(Clock.Clock, root))
      }
      root.set(targetMs)
      yield* saveRoot(store, root.currentTimeMillisUnsafe())
      advancedMs += root.currentTimeMillisUnsafe() - fromMs
      yield* advanced(root.currentTimeMillisUnsafe() - fromMs)
      yield* Telemetry.annotate({ [Telemetry.Attribute.clockFrom]: toIso(fromMs), [Telemetry.Attribute.clockTo]: toIso(targetMs) })
    }).pipe(Telemetry.withSpan(Telemetry.SpanName.clockAdvance, { attributes: { [Telemetry.Attribute.clock]: "root" } }))))

  /**
   * The clock a sandbox request runs on: its row's time, read once. An advance left by a crashed process is finished
   * first, so no request sees the sandbox half advanced.
   */
  const sandboxClock = (scope: string) =>
    Effect.flatMap(Store.Store, (store) =>
      Effect.flatMap(readClock(store, scope, false), (row) => {
        if (row?.advancing === undefined) return Effect.succeed(fixedClock(timeOf(row), realClock))
        return Effect.gen(function*() {
          if (yield* holds(row.advancing!)) return fixedClock(timeOf(row), realClock)
          // Another request may be finishing it already: then this one runs at the time that one has reached.
          yield* Effect.uninterruptible(asOwner((owner) => Effect.ignore(finishAbandoned(store, scope, owner, row.advancing!))))
          const after = yield* store.get(Clocks, scope)
          const read = yield* ReadClock
          if (read?.scope === scope) read.row = after
          return fixedClock(timeOf(after), realClock)
        })
      }))

  return {
    mode: "virtual",
    now: root.currentTimeMillis,
    advanceTo: (targetMs) => advanceEvery((nowMs) => Math.max(nowMs, targetMs)),
    advanceEvery,
    clockFor: (scope) =>
      scope === undefined
        ? Effect.succeed(root)
        : Timers.isRealTimeScope(scope)
        ? Effect.succeed(realClock)
        : sandboxClock(scope),
    advanceClock,
    settle: (scope, nowMs) =>
      Timers.fireDue(nowMs, Timers.scope(scope)).pipe(
        Effect.provideService(Clock.Clock, Timers.isRealTimeScope(scope) ? realClock : fixedClock(nowMs, realClock))
      ),
    advancedMs: () => advancedMs
  }
}

/** The `keyedAdvances` member of a clock's row, present only when there are some. */
const keptOf = (kept: StoredClock["keyedAdvances"]) => kept === undefined || kept.length === 0 ? {} : { keyedAdvances: kept }
