/**
 * Durable timers and the one scheduler that fires them, and the virtual clock.
 *
 * Every deadline of the engine is a row of the timers table, written in the same transaction as the state it
 * belongs to. The scheduler fires due timers in (due time, id) order, and a timer's id carries the store's
 * sequence after its due time, so timers due together fire in the order they were scheduled. Each fires in its own
 * transaction that removes
 * the row and runs the timer's handler, so a timer fires once and a restarted process resumes where it was.
 *
 * With the system clock a background fiber sleeps on the Clock until the next due time. With the virtual clock
 * nothing moves until `advanceTo`, which steps the clock to each due time in order, fires what is due, and
 * lands on the target: an advance fires every due timer, including the timers those timers create.
 */
import { Cause, Clock, Context, Deferred, Duration, Effect, Layer, Semaphore } from "effect"
import { withStream } from "./RandomStreams.ts"
import { Store, table } from "./Store.ts"

export interface Timer {
  readonly id: string
  readonly kind: string
  readonly dueAtMs: number
  readonly payload: unknown
  /** The organization and environment (`scopeOf`) whose state the deadline belongs to, so a reset finds it. */
  readonly scope?: string
}

export const Timers = table<Timer>({
  name: "timers",
  key: (t) => t.id,
  // Every timer shares one partition and nothing reads their total, so no count is kept.
  orders: {
    due: { partition: () => "", sort: (t) => t.dueAtMs, counted: false },
    byScope: { partition: (t) => t.scope ?? "", sort: (t) => t.dueAtMs, counted: false }
  }
})

/**
 * What a timer does when it fires; runs inside the firing transaction. It may return work to do after that
 * transaction commits (I/O such as a webhook send, which must not hold a transaction open); the scheduler runs it
 * once the batch has committed, several at a time, and waits for it.
 */
export type TimerHandler = (payload: any) => Effect.Effect<void | AfterCommit, never, Store>

/** Work a timer hands back to run after its transaction commits. */
export type AfterCommit = Effect.Effect<void, never, Store>

/** How many after-commit effects run at once. */
const afterCommitConcurrency = 64

/** Timer kinds and their handlers, registered once when the engine is built. */
export class TimerHandlers extends Context.Service<TimerHandlers, ReadonlyMap<string, TimerHandler>>()("fos/TimerHandlers") {}

/**
 * Schedules a timer; call it inside the transaction of the state the deadline belongs to, with that state's scope
 * (organization and environment) when it has one.
 */
export const schedule = (kind: string, dueAtMs: number, payload: unknown, scope?: string): Effect.Effect<string, never, Store> =>
  Effect.gen(function*() {
    const store = yield* Store
    // The id sorts by due time, then by the store's sequence: timers due at the same instant fire in the order they
    // were scheduled (the scheduler reads them in (due time, id) order), so a seeded run fires them the same way
    // every time.
    const sequence = yield* store.nextSequence
    const id = `tmr_${dueAtMs.toString(36).padStart(10, "0")}${sequence.toString(36).padStart(12, "0")}`
    yield* store.insertFresh(Timers, scope === undefined ? { id, kind, dueAtMs, payload } : { id, kind, dueAtMs, payload, scope })
    return id
  })

/** How long a timer whose handler failed waits before it is tried again. */
const retryAfterFailureMs = 60_000

/**
 * A handler that fails rolls its transaction back, so the timer is still there. It is moved a minute later and
 * logged, so one bad timer neither stops the scheduler nor keeps it spinning.
 */
const retryLater = (timer: Timer, nowMs: number, cause: Cause.Cause<unknown>) =>
  Effect.gen(function*() {
    yield* Effect.logError("Timer handler failed; retrying later", { timer: timer.id, kind: timer.kind, cause: Cause.pretty(cause) })
    const store = yield* Store
    yield* store.transaction(Effect.gen(function*() {
      const current = yield* store.getForUpdate(Timers, timer.id)
      if (current !== undefined) yield* Effect.orDie(store.update(Timers, { ...current, dueAtMs: nowMs + retryAfterFailureMs }))
    }))
  }).pipe(Effect.catchCause(() => Effect.void))

/** How many timers one sweep takes at most before looking again. */
const sweepBatch = 100

/** The earliest timer, if any. */
export const nextTimer: Effect.Effect<Timer | undefined, never, Store> = Effect.flatMap(Store, (store) =>
  Effect.map(store.page(Timers, { order: "due", partition: "", descending: false, backward: false, from: undefined, limit: 1 }), (rows) => rows[0]))

/** Fires every timer due at or before `nowMs`, in order. Returns how many fired. */
export const fireDue = (nowMs: number): Effect.Effect<number, never, Store | TimerHandlers> =>
  Effect.gen(function*() {
    const store = yield* Store
    const handlers = yield* TimerHandlers
    let fired = 0
    while (true) {
      const batch = yield* store.page(Timers, { order: "due", partition: "", descending: false, backward: false, from: undefined, limit: sweepBatch })
      const due = batch.filter((t) => t.dueAtMs <= nowMs)
      if (due.length === 0) return fired
      const afterCommit: Array<AfterCommit> = []
      for (const timer of due) {
        const after = yield* store.transaction(
          Effect.gen(function*() {
            // The row lock makes a timer fire once: another process waiting on it finds it gone.
            const current = yield* store.getForUpdate(Timers, timer.id)
            if (current === undefined) return undefined
            yield* store.remove(Timers, timer.id)
            const handler = handlers.get(timer.kind)
            return handler === undefined ? undefined : yield* handler(timer.payload)
          })
        ).pipe(
          Effect.catchCause((cause) => Effect.as(retryLater(timer, nowMs, cause), undefined)),
          // A seeded engine: what a timer invents comes from its organization's stream, whoever fires it.
          withStream(timer.scope)
        )
        if (after !== undefined) afterCommit.push(withStream(timer.scope)(after))
        fired++
      }
      yield* Effect.forEach(afterCommit, (work) => Effect.catchCause(work, (cause) =>
        Effect.logError("After-commit work of a timer failed", { cause: Cause.pretty(cause) })), {
        concurrency: afterCommitConcurrency,
        discard: true
      })
    }
  })

/** A clock that stands still until told to move. */
export interface VirtualClock extends Clock.Clock {
  /** Moves the clock to `epochMs` (never backwards) and wakes the sleepers that are due. */
  readonly set: (epochMs: number) => void
}

export const makeVirtualClock = (startMs: number): VirtualClock => {
  let nowMs = startMs
  const sleepers: Array<{ atMs: number; wake: Deferred.Deferred<void> }> = []
  const clock: VirtualClock = {
    currentTimeMillisUnsafe: () => nowMs,
    currentTimeMillis: Effect.sync(() => nowMs),
    currentTimeNanosUnsafe: () => BigInt(nowMs) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(nowMs) * 1_000_000n),
    monotonicTimeNanosUnsafe: () => BigInt(nowMs) * 1_000_000n,
    monotonicTimeNanos: Effect.sync(() => BigInt(nowMs) * 1_000_000n),
    sleep: (duration) =>
      Effect.suspend(() => {
        const atMs = nowMs + Duration.toMillis(duration)
        if (atMs <= nowMs) return Effect.void
        const wake = Deferred.makeUnsafe<void>()
        sleepers.push({ atMs, wake })
        return Deferred.await(wake)
      }),
    set: (epochMs) => {
      nowMs = Math.max(nowMs, epochMs)
      for (let i = sleepers.length - 1; i >= 0; i--) {
        const s = sleepers[i]!
        if (s.atMs <= nowMs) {
          sleepers.splice(i, 1)
          Deferred.doneUnsafe(s.wake, Effect.void)
        }
      }
    }
  }
  return clock
}

/** The engine's time source: the system clock, or a virtual clock that only an advance moves. */
export interface TimeControlService {
  readonly mode: "system" | "virtual"
  readonly now: Effect.Effect<number>
  /** Virtual mode: fires every timer due up to `targetMs` in order, then sets the clock to it. */
  readonly advanceTo: (targetMs: number) => Effect.Effect<void, never, Store | TimerHandlers>
}

export class TimeControl extends Context.Service<TimeControl, TimeControlService>()("fos/TimeControl") {}

export const makeVirtualTimeControl = (clock: VirtualClock): TimeControlService => {
  // Serialises advances: two advances at once would interleave their steps.
  const serial = Semaphore.makeUnsafe(1).withPermits(1)
  return {
    mode: "virtual",
    now: clock.currentTimeMillis,
    advanceTo: (targetMs) =>
      Effect.gen(function*() {
        // Most advances find nothing due on the way: they move the clock without the lock, so they never queue
        // behind one another (the clock only moves forward). Advances that fire timers take turns.
        const first = yield* nextTimer
        if (first === undefined || first.dueAtMs > targetMs) return clock.set(targetMs)
        yield* serial(Effect.gen(function*() {
          while (true) {
            const next = yield* nextTimer
            if (next === undefined || next.dueAtMs > targetMs) break
            clock.set(next.dueAtMs)
            yield* fireDue(clock.currentTimeMillisUnsafe())
          }
          clock.set(targetMs)
        }))
      }).pipe(Effect.provideService(Clock.Clock, clock))
  }
}

export const systemTimeControl: TimeControlService = {
  mode: "system",
  now: Clock.currentTimeMillis,
  advanceTo: () => Effect.void
}

/** How long the system-clock scheduler sleeps at most, so timers written by other processes are seen. */
const pollMs = 250

/** The system-clock scheduler loop: fire what is due, sleep until the next due time (or the poll bound). */
export const runScheduler: Effect.Effect<never, never, Store | TimerHandlers> = Effect.gen(function*() {
  while (true) {
    const now = yield* Clock.currentTimeMillis
    yield* fireDue(now)
    const next = yield* nextTimer
    const waitMs = next === undefined ? pollMs : Math.min(pollMs, Math.max(0, next.dueAtMs - now))
    yield* Effect.sleep(Duration.millis(Math.max(waitMs, 1)))
  }
})

export const layerTimerHandlers = (handlers: Record<string, TimerHandler>): Layer.Layer<TimerHandlers> =>
  Layer.succeed(TimerHandlers, new Map(Object.entries(handlers)))
