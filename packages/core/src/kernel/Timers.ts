/**
 * Durable timers and the one scheduler that fires them, and the virtual clock.
 *
 * Every deadline of the engine is a row of the timers table, written in the same transaction as the state it
 * belongs to. The scheduler fires due timers in (due time, id) order, and a timer's id carries the store's
 * sequence after its due time, so timers due together fire in the order they were scheduled. A timer fires in a
 * transaction that removes the row and runs the timer's handler, so a timer fires once and a restarted process
 * resumes where it was; the timers of one sweep that are due share one transaction (`fireDue`).
 *
 * With the system clock a background fiber sleeps on the Clock until the next due time. With the virtual clock
 * each organization's sandbox has a clock of its own, kept in the store (Clocks.ts): nothing of a sandbox moves
 * until its clock is advanced, which steps that clock to each of its timers' due times in order, fires what is due,
 * and lands on the target. A sweep reads one lane of timers (`TimerLane`): all of them, one scope's, or those of
 * one kind of clock.
 */
import { toIso } from "@fos/contract"
import { Cause, Clock, Context, Deferred, Duration, Effect, Exit, Layer, Schema } from "effect"
import * as History from "./History.ts"
import * as Lifecycle from "./Lifecycle.ts"
import * as Metrics from "./Metrics.ts"
import * as Outbox from "./Outbox.ts"
import type * as Problem from "./Problem.ts"
import * as RandomStreams from "./RandomStreams.ts"
import * as Store from "./Store.ts"
import * as Telemetry from "./Telemetry.ts"

export interface Timer {
  readonly id: string
  readonly kind: string
  readonly dueAtMs: number
  readonly payload: unknown
  /** The organization and environment (`scopeOf`) whose state the deadline belongs to, so a reset finds it. */
  readonly scope?: string
  /** When it was scheduled, on its scope's clock (a resource's timeline shows it); absent on timers stored before. */
  readonly scheduledAtMs?: number
  /**
   * The engine keeping itself tidy (an idempotency key's retention), not the tester's world: the pending timers'
   * list leaves it out unless asked (inspect/PendingTimers.ts). Its owner says so when it schedules it.
   */
  readonly housekeeping?: true
  /**
   * Came due in an engine that cannot fire it: no handler for its kind (one a later fos, or a host's own handler,
   * knows), or a payload its kind's schema refuses (`keptBecause`). Kept, out of every lane that fires, listed as
   * pending, and put back by the next engine start that has a handler (`resumeKept`): a refused payload is then
   * tried once more and kept again, which a fixed schema ends. Never dropped: the work it stands for would be lost.
   */
  readonly unhandled?: true
  /** Why it was kept, when a handler exists but its payload did not decode (`Kind.payload`). */
  readonly keptBecause?: string
  /** The resource it belongs to (`Kind.resource`); absent when it belongs to none, and on timers stored before. */
  readonly resourceId?: string
}

/**
 * A kind of timer as the code that schedules it knows it: its name, the schema of its payload, and the payload member
 * that names the resource a timer of it belongs to (a transaction, an order, ...), if any: a sandbox's timers are
 * listed per resource for its timeline, and the pending timers' list shows it. What firing it does is its owner's
 * `Handling` (`handle`), declared in its domain's descriptor (Domain.ts), not here: the kernel names no domain.
 */
export interface Kind<P, N extends string = string> {
  readonly name: N
  readonly payload: Schema.Decoder<P>
  readonly resource: (keyof P & string) | undefined
}

/** Declares a kind of timer: `Timers.kind("payout.settle", Schema.Struct({ transactionId: TransactionId }), "transactionId")`. */
export const kind = <const N extends string, S extends Schema.Decoder<any>>(
  name: N,
  payload: S,
  resource?: keyof S["Type"] & string
): Kind<S["Type"], N> => ({ name, payload, resource })

/**
 * What a kind of timer does when it fires (`fire`, in the firing transaction) and what that is in words (`action`,
 * after "it": "settles payout txn_… on ach"; `route` is " on <rail or chain>" for a transaction's timers, else "").
 * `R`: the engine's services the handler reads beyond the store, provided once when the engine is built (Domain.ts).
 */
export interface Handling<P, R = never, N extends string = string> {
  readonly kind: Kind<P, N>
  readonly fire: (payload: P) => Effect.Effect<void | AfterCommit, never, Store.Store | R>
  readonly action: (id: string, payload: P, route: string) => string
  /**
   * The row its firing locks first, when the payload names it (a webhook attempt's delivery): the timers that fire
   * together lock theirs in one statement per table with the timers themselves (`fireDue`), where each firing's own
   * lock was a round trip on a SQL store.
   */
  readonly locks?: ((payload: P) => { readonly table: Store.Table<any>; readonly key: string }) | undefined
}

export const handle = <P, R, const N extends string>(
  kind: Kind<P, N>,
  fire: (payload: P) => Effect.Effect<void | AfterCommit, never, R>,
  action: (id: string, payload: P, route: string) => string,
  options: { readonly locks?: Handling<P>["locks"] } = {}
): Handling<P, Exclude<R, Store.Store>, N> =>
  // R is Store | Exclude<R, Store> for every R the handler may need; TypeScript does not see it of a generic R.
  ({ kind, fire: fire as Handling<P, Exclude<R, Store.Store>, N>["fire"], action, ...(options.locks === undefined ? {} : { locks: options.locks }) })

/**
 * A kind only a name and a handler declare (a host's own, `EngineOptions.timerHandlers`): its payload is whatever
 * was scheduled, its resource the first string member whose name ends in `Id`, and its sentence "fires a <kind> timer".
 */
export const handleByName = (name: string, fire: TimerHandler): Handling<unknown> =>
  handle(kind(name, Schema.Unknown), fire, () => `fires a ${name} timer`)

/** The first string member of a payload whose name ends in `Id`: the resource of a kind declared by name alone. */
const firstIdMember = (payload: unknown): string | undefined => {
  if (typeof payload !== "object" || payload === null) return undefined
  const record = payload as Readonly<Record<string, unknown>>
  const member = Object.keys(record).find((k) => k.endsWith("Id") && typeof record[k] === "string")
  return member === undefined ? undefined : record[member] as string
}

/**
 * The id of the resource a timer belongs to, or undefined: the one its kind named when it was scheduled, or, for a
 * timer scheduled by name or stored before timers carried it, its payload's first `…Id` member (every kind of the
 * engine names its resource so, and nothing else: `idempotency.expire`'s `{ id }` names none).
 */
export const resourceIdOf = (timer: Pick<Timer, "payload" | "resourceId">): string | undefined =>
  timer.resourceId ?? firstIdMember(timer.payload)

const isSandboxScope = (scope: string | undefined) => scope !== undefined && scope.endsWith("/sandbox")

/**
 * Whether a timer runs on real time under the virtual clock: the live environment's timers do (docs/clock.md). Every
 * other timer runs on a virtual clock: its sandbox's, or the engine's root clock when it has no scope.
 */
export const isRealTimeScope = (scope: string | undefined): boolean => scope !== undefined && scope.endsWith("/live")

export const Timers = Store.table<Timer>({
  name: "timers",
  key: (t) => t.id,
  // Nothing reads a total of timers, so no count is kept.
  orders: {
    // The lanes a sweep fires (`TimerLane`) leave out a timer kept for want of a handler.
    due: { partition: (t) => (t.unhandled === true ? undefined : ""), sort: (t) => t.dueAtMs, counted: false },
    firing: { partition: (t) => (t.unhandled === true ? undefined : t.scope ?? ""), sort: (t) => t.dueAtMs, counted: false },
    // Under the virtual clock the live timers fire on real time and the rest on their clocks: each kind is a lane.
    byClock: {
      partition: (t) => (t.unhandled === true ? undefined : isRealTimeScope(t.scope) ? "real" : "virtual"),
      sort: (t) => t.dueAtMs,
      counted: false
    },
    // Every timer of a scope, kept ones included: what a reset removes, a snapshot saves and the full list shows.
    byScope: { partition: (t) => t.scope ?? "", sort: (t) => t.dueAtMs, counted: false },
    // The timers kept for want of a handler, for the engine that has one (`resumeKept`).
    unhandled: { partition: (t) => (t.unhandled === true ? "" : undefined), sort: (t) => t.dueAtMs, counted: false },
    // A scope's timers of the world, its housekeeping left out: what the pending timers' list shows by default.
    worldByScope: { partition: (t) => (t.housekeeping === true ? undefined : t.scope ?? ""), sort: (t) => t.dueAtMs, counted: false },
    // A sandbox resource's pending timers, for its timeline (inspect/Timeline.ts); a live timer has no entry.
    sandboxByResource: {
      partition: (t) => {
        if (!isSandboxScope(t.scope)) return undefined
        const resourceId = resourceIdOf(t)
        return resourceId === undefined ? undefined : `${t.scope}|${resourceId}`
      },
      sort: (t) => t.dueAtMs,
      counted: false
    }
  }
})

/** Which timers a sweep reads: one partition of one of the timers' orders, in due order. */
export interface TimerLane {
  readonly order: "due" | "firing" | "byClock"
  readonly partition: string
}

/** Every timer: the system clock's lane. */
export const all: TimerLane = { order: "due", partition: "" }
/** The timers of one scope (organization and environment); `""` for the timers with none. */
export const scope = (scope: string): TimerLane => ({ order: "firing", partition: scope })
/** Under the virtual clock: the timers on real time (live), and the timers on a virtual clock (all the others). */
export const realTime: TimerLane = { order: "byClock", partition: "real" }
export const virtual: TimerLane = { order: "byClock", partition: "virtual" }

/**
 * What a timer does when it fires; runs inside the firing transaction. It may return work to do after that
 * transaction commits; the scheduler runs it once the batch has committed, several at a time, and waits for it, so
 * it must be quick: I/O such as a webhook send is handed to a background worker there (webhooks/DeliveryWorker.ts),
 * never waited for by the request or advance that fired the timer.
 */
export type TimerHandler = (payload: any) => Effect.Effect<void | AfterCommit, never, Store.Store>

/** Work a timer hands back to run after its transaction commits. */
export type AfterCommit = Effect.Effect<void, never, Store.Store>

/** How many after-commit effects run at once. */
const afterCommitConcurrency = 64

/**
 * Every kind of timer the engine fires, by name, with what firing it does: composed once, when the engine is built,
 * from the domains' descriptors (Domain.ts), their services already provided.
 */
export class TimerHandlers extends Context.Service<TimerHandlers, ReadonlyMap<string, Handling<any>>>()("fos/TimerHandlers") {}

/**
 * A write's mark that it made a timer due at once (at or before its clock's time): under the virtual clock the
 * pipeline then fires what is due in the write's scope before it answers (`TimeControlService.settle`), and a write
 * that made nothing due skips that look. The pipeline gives each write a fresh mark; without one nothing is marked.
 */
export interface DueMark {
  due: boolean
}

export class DueAtOnce extends Context.Reference<DueMark | undefined>("fos/DueAtOnce", { defaultValue: () => undefined }) {}

/** Marks the running write as having made timers due at once (`DueAtOnce`): a restore puts back timers of any time. */
export const markDue: Effect.Effect<void> = Effect.flatMap(DueAtOnce, (mark) =>
  Effect.sync(() => {
    if (mark !== undefined) mark.due = true
  }))

/**
 * A timer's key: `tmr_`, its due time and the store's sequence in base 36 (ten and twelve digits), so keys sort by
 * due time, then in the order the timers were scheduled.
 */
const timerId = (dueAtMs: number, sequence: number): string =>
  `tmr_${dueAtMs.toString(36).padStart(10, "0")}${sequence.toString(36).padStart(12, "0")}`

const timerKey = /^tmr_([0-9a-z]{10})([0-9a-z]{12})$/

/**
 * The store's number a timer's key carries, and the key with another in its place (its due time kept): how a fork
 * numbers its copies of timers anew (Forks.ts; kernel/Domain.ts, `SandboxTable.sequenced`). `numberOf` is undefined
 * for a key fos did not make.
 */
export const keyNumbers = {
  numberOf: (id: string): number | undefined => {
    const m = timerKey.exec(id)
    return m === null ? undefined : parseInt(m[2]!, 36)
  },
  withNumber: (id: string, n: number): string => timerId(parseInt(timerKey.exec(id)![1]!, 36), n),
  shown: true
}

/**
 * Schedules a timer; call it inside the transaction of the state the deadline belongs to, with that state's scope
 * (organization and environment) when it has one. `housekeeping`: the timer keeps the engine tidy rather than moving
 * the tester's world (`Timer.housekeeping`).
 */
export const schedule = <P>(
  kind: Kind<P> | string,
  dueAtMs: number,
  payload: P,
  scope?: string,
  options: { readonly housekeeping?: boolean } = {}
): Effect.Effect<string, never, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    // The id sorts by due time, then by the store's sequence: timers due at the same instant fire in the order they
    // were scheduled (the scheduler reads them in (due time, id) order), so a seeded run fires them the same way
    // every time. A housekeeping timer changes nothing of the world whatever it fires beside, so its number need not
    // follow the others' (`nextNumber`: no round trip for the retention timer of every kept response).
    const sequence = yield* (options.housekeeping === true ? store.nextNumber : store.nextSequence)
    const id = timerId(dueAtMs, sequence)
    const scheduledAtMs = yield* Clock.currentTimeMillis
    if (dueAtMs <= scheduledAtMs) yield* markDue
    const member = typeof kind === "string" ? undefined : kind.resource
    const named = member === undefined ? undefined : (payload as Readonly<Record<string, unknown>>)[member]
    const resourceId = typeof kind === "string" ? firstIdMember(payload) : typeof named === "string" ? named : undefined
    yield* store.insertFresh(Timers, {
      id,
      kind: typeof kind === "string" ? kind : kind.name,
      dueAtMs,
      payload,
      ...(scope === undefined ? {} : { scope }),
      scheduledAtMs,
      ...(options.housekeeping === true ? { housekeeping: true as const } : {}),
      ...(resourceId === undefined ? {} : { resourceId })
    })
    return id
  })

/**
 * Removes the timer `id` before it fires, in the transaction of the state it belonged to (a webhook delivery's
 * recovery lease, once the attempt it guarded is recorded).
 */
export const cancel = (id: string): Effect.Effect<void, never, Store.Store> => Effect.flatMap(Store.Store, (store) => store.remove(Timers, id))

/** How long a timer whose handler failed waits before it is tried again. */
const retryAfterFailureMs = 60_000

/**
 * A handler that fails rolls its transaction back, so the timer is still there. It is moved a minute later and
 * logged, so one bad timer neither stops the scheduler nor keeps it spinning.
 */
/** What a log record of a timer says of it (Effect log annotations): its id and kind, and its scope when it has one. */
const timerAnnotations = (timer: Timer): Record<string, string> => ({
  timer: timer.id,
  kind: timer.kind,
  ...(timer.scope === undefined ? {} : { scope: timer.scope })
})

const retryLater = (timer: Timer, nowMs: number, cause: Cause.Cause<unknown>) =>
  Effect.gen(function*() {
    yield* Effect.logError("Timer handler failed; retrying later", cause).pipe(Effect.annotateLogs(timerAnnotations(timer)))
    const store = yield* Store.Store
    yield* store.transaction(Effect.gen(function*() {
      const current = yield* store.getForUpdate(Timers, timer.id)
      if (current !== undefined) yield* Effect.orDie(store.update(Timers, { ...current, dueAtMs: nowMs + retryAfterFailureMs }))
    }))
  }).pipe(Effect.catchCause(() => Effect.void))

/**
 * Keeps a timer this engine cannot fire (`Timer.unhandled`): no handler takes its kind, or its payload does not
 * decode as its kind's (`because`). Says so in the log.
 */
const keep = (timer: Timer, because?: string) =>
  Effect.gen(function*() {
    yield* Effect.logError(`A timer came due that this engine cannot fire: kept, not fired (${because ?? "no handler takes its kind"})`).pipe(
      Effect.annotateLogs(timerAnnotations(timer))
    )
    yield* Effect.orDie((yield* Store.Store).update(Timers, { ...timer, unhandled: true, ...(because === undefined ? {} : { keptBecause: because }) }))
  })

/**
 * Puts back into their lanes the timers kept for want of a handler that this engine has (`Timer.unhandled`): run at
 * the engine's start, so a timer a newer fos, or a host's handler, left waiting fires (at once, being due).
 */
export const resumeKept: Effect.Effect<number, never, Store.Store | TimerHandlers> = Effect.gen(function*() {
  const store = yield* Store.Store
  const handlers = yield* TimerHandlers
  const kept: Array<Timer> = []
  yield* Store.walk(store, Timers, { order: "unhandled", partition: "" }, (timer) => Effect.sync(() => handlers.has(timer.kind) && kept.push(timer)))
  for (const timer of kept) {
    yield* store.transaction(Effect.gen(function*() {
      const current = yield* store.getForUpdate(Timers, timer.id)
      if (current === undefined || current.unhandled !== true) return
      const { unhandled: _, keptBecause: _because, ...resumed } = current
      yield* Effect.orDie(store.update(Timers, resumed))
    }))
  }
  return kept.length
})

/**
 * Locks the rows the handlers of `timers` lock first (`Handling.locks`), in one statement per table; a payload that
 * does not decode locks nothing here (its firing keeps the timer).
 */
const lockFirst = (handlers: ReadonlyMap<string, Handling<any>>, timers: ReadonlyArray<Timer>) =>
  Effect.flatMap(Store.Store, (store) => {
    const byTable = new Map<Store.Table<any>, Array<string>>()
    for (const timer of timers) {
      const handling = handlers.get(timer.kind)
      if (handling?.locks === undefined) continue
      const payload = Schema.decodeUnknownExit(handling.kind.payload)(timer.payload)
      if (Exit.isFailure(payload)) continue
      const { table, key } = handling.locks(payload.value)
      const keys = byTable.get(table)
      if (keys === undefined) byTable.set(table, [key])
      else keys.push(key)
    }
    return Effect.forEach(byTable, ([table, keys]) => store.getManyForUpdate(table, keys), { discard: true })
  })

/** How many timers one sweep takes at most before looking again. */
const sweepBatch = 100

/** The earliest timer of a lane (every timer by default), if any. */
export const nextTimerIn = (lane: TimerLane): Effect.Effect<Timer | undefined, never, Store.Store> =>
  Effect.flatMap(Store.Store, (store) =>
    Effect.map(store.page(Timers, { ...lane, descending: false, backward: false, from: undefined, limit: 1 }), (rows) => rows[0]))

/** The earliest timer, if any. */
export const nextTimer: Effect.Effect<Timer | undefined, never, Store.Store> = nextTimerIn(all)

/** How many timers have not fired: those due to fire and those kept for want of a handler (a count of the index). */
export const pendingCount: Effect.Effect<number, never, Store.Store> = Effect.flatMap(Store.Store, (store) =>
  Effect.zipWith(store.count(Timers, "due", ""), store.count(Timers, "unhandled", ""), (due, kept) => due + kept))

/**
 * Fires every timer of `lane` (every timer by default) due at or before `nowMs`, in order; `onFired` hears of each
 * timer taken. Returns how many fired. `knownDue`: the caller has seen a timer due (an advance's step), so the first
 * look takes a whole batch rather than one.
 */
export const fireDue = (
  nowMs: number,
  lane: TimerLane = all,
  onFired?: (timer: Timer) => void,
  options: { readonly knownDue?: boolean } = {}
): Effect.Effect<number, never, Store.Store | TimerHandlers> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const handlers = yield* TimerHandlers
    const lifecycle = yield* Lifecycle.Lifecycle
    let fired = 0
    /** Fires `timer` in the running transaction: what its handler hands on after the commit, or "kept". */
    const fireIn = (timer: Timer) =>
      Effect.gen(function*() {
        // The row lock makes a timer fire once: another process waiting on it finds it gone. It is taken before
        // the handler runs, so the handler's work is done once too.
        const current = yield* store.getForUpdate(Timers, timer.id, { lockNow: true })
        if (current === undefined) return undefined
        const handling = handlers.get(current.kind)
        if (handling === undefined) {
          yield* keep(current)
          return "kept" as const
        }
        const payload = Schema.decodeUnknownExit(handling.kind.payload)(current.payload)
        if (Exit.isFailure(payload)) {
          const error = Cause.squash(payload.cause)
          const issue = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, " ")
          yield* keep(current, `its payload is not a ${current.kind} timer's: ${issue}`)
          return "kept" as const
        }
        yield* store.remove(Timers, timer.id)
        // A sandbox resource's timeline shows the timer fired, since its row is gone now (kernel/History.ts).
        yield* History.recordTimerFired(current.scope, resourceIdOf(current), {
          id: current.id,
          kind: current.kind,
          dueAtMs: current.dueAtMs,
          ...(current.scheduledAtMs === undefined ? {} : { scheduledAtMs: current.scheduledAtMs })
        })
        // Counted once its firing commits: a store that runs the transaction again counts it once.
        yield* store.afterCommit(Metrics.timerFired(current.kind))
        return yield* handling.fire(payload.value)
      }).pipe(
        // What the handler changes was caused by this timer.
        History.causedBy({ type: "timer", kind: timer.kind, timerId: timer.id })
      )
    /** `firing` (of `timer`) in the timer's span, with its organization's random stream. */
    const inSpan = <E>(timer: Timer, firing: Effect.Effect<void | AfterCommit | "kept" | undefined, E, Store.Store>) =>
      firing.pipe(
        // What it hands on after its commit (a webhook's send) is the timer span's child, however late it runs.
        Effect.flatMap((after): Effect.Effect<AfterCommit | "kept" | undefined> => Effect.isEffect(after) ? Telemetry.underCurrentSpan(after as AfterCommit) : Effect.succeed(after as "kept" | undefined)),
        // A seeded engine: what a timer invents comes from its organization's stream, whoever fires it.
        RandomStreams.withStream(timer.scope),
        Telemetry.withSpan(Telemetry.SpanName.timer, {
          attributes: () => ({
            [Telemetry.Attribute.timerKind]: timer.kind,
            [Telemetry.Attribute.timerId]: timer.id,
            [Telemetry.Attribute.timerDue]: toIso(timer.dueAtMs),
            [Telemetry.Attribute.resourceId]: resourceIdOf(timer),
            ...Telemetry.scopeAttributes(timer.scope)
          })
        })
      )
    // The first look takes two timers: most sweeps (the one after every write under the virtual clock) find none due,
    // and a page of the lane's next hundred timers cost a SQL store a hundred rows read and parsed for nothing; but
    // one that finds a timer due most often finds one alone, which a page of one could not tell, and read a page
    // of a hundred after it fired (on the journey of bench:tester, a page in every timer's firing).
    let limit = options.knownDue === true ? sweepBatch : 2
    while (true) {
      const batch = yield* store.page(Timers, { ...lane, descending: false, backward: false, from: undefined, limit })
      const due = batch.filter((t) => t.dueAtMs <= nowMs)
      if (due.length === 0) return fired
      // The page ended before `nowMs` (it held a later timer, or fewer rows than it asked for): once these fire, no
      // timer is due unless their firing made one due at once (`DueAtOnce`), so the next page is read only then.
      const lastPage = due.length < batch.length || batch.length < limit
      const madeDue: DueMark = { due: false }
      limit = sweepBatch
      const afterCommit: Array<AfterCommit> = []
      const taken = (timer: Timer, after: AfterCommit | "kept" | undefined) => {
        // Kept for want of a handler: nothing fired, and the timer is out of the lane now.
        if (after === "kept") return
        if (after !== undefined) afterCommit.push(RandomStreams.withStream(timer.scope)(after))
        // What the timer's transaction emitted is in the outbox now: a live stream of its scope reads it at once.
        Outbox.committed(store, timer.scope)
        onFired?.(timer)
        fired++
      }
      // The timers due together fire in one transaction, each as its own would fire it: on a SQL store that is one
      // BEGIN, one statement locking them all, their held writes sent together and one COMMIT, where a transaction
      // each paid those for every timer. A handler that fails rolls the whole batch back, and they fire again one
      // transaction each, so that the failing one alone is retried later and the others' work stands.
      const batched = due.length > 1 && !lifecycle.closing()
        ? yield* Effect.provideService(store.transaction(Effect.gen(function*() {
          // The first lock begins the transaction (`lockNow`); the rest are taken in one statement, in key order,
          // and then the rows the handlers lock first (`Handling.locks`), one statement per table.
          yield* store.getForUpdate(Timers, due[0]!.id, { lockNow: true })
          yield* store.getManyForUpdate(Timers, due.map((t) => t.id))
          yield* lockFirst(handlers, due)
          const results: Array<readonly [Timer, AfterCommit | "kept" | undefined]> = []
          for (const timer of due) {
            if (lifecycle.closing()) break
            results.push([timer, yield* inSpan(timer, fireIn(timer))] as const)
          }
          return results
        })), DueAtOnce, madeDue).pipe(Effect.catchCause(() => Effect.succeed(undefined)))
        : undefined
      if (batched !== undefined) {
        for (const [timer, after] of batched) taken(timer, after)
      } else {
        for (const timer of due) {
          // A closing engine fires no more: the timer under way finishes, the rest wait for the next start.
          if (lifecycle.closing()) break
          const after = yield* inSpan(timer, store.transaction(fireIn(timer)).pipe(
            Effect.provideService(DueAtOnce, madeDue),
            Effect.catchCause((cause) => Effect.as(retryLater(timer, nowMs, cause), undefined))
          ))
          taken(timer, after)
        }
      }
      yield* Effect.forEach(afterCommit, (work) => Effect.catchCause(work, (cause) =>
        Effect.logError("After-commit work of a timer failed", cause)), {
        concurrency: afterCommitConcurrency,
        discard: true
      }).pipe(Effect.provideService(DueAtOnce, madeDue))
      if (lifecycle.closing() || (lastPage && !madeDue.due)) return fired
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

/** What one advance of a virtual clock did. */
export interface AdvanceReport {
  /** The clock's time when the advance began, and where it landed. */
  readonly fromMs: number
  readonly nowMs: number
  /** How many timers fired, by kind. */
  readonly timersFired: Readonly<Record<string, number>>
  /** How many events the sandbox's outbox received while the advance ran, by type. */
  readonly eventsEmitted: Readonly<Record<string, number>>
  /** When the clock's next pending timer is due, if one is left. */
  readonly nextDueMs: number | undefined
}

/**
 * The engine's time: the system clock, or the virtual clocks (Clocks.ts) that only advances move. A scope is an
 * organization and environment (`scopeOf`); each sandbox scope has a virtual clock of its own.
 */
export interface TimeControlService {
  readonly mode: "system" | "virtual"
  /** The engine's own clock: under the virtual clock its root clock, which every sandbox never advanced follows. */
  readonly now: Effect.Effect<number>
  /**
   * Virtual mode: moves every virtual clock (the root and every sandbox's) to at least `targetMs`, firing every timer
   * on a virtual clock due on the way.
   */
  readonly advanceTo: (targetMs: number) => Effect.Effect<void, never, Store.Store | TimerHandlers>
  /**
   * Virtual mode: moves every virtual clock to the target `targetOf` gives from that clock's own time (`engine.clock`:
   * an advance by a duration moves each clock by it), firing its timers due on the way.
   */
  readonly advanceEvery: (targetOf: (nowMs: number) => number) => Effect.Effect<void, never, Store.Store | TimerHandlers>
  /**
   * The clock a request of `scope` runs on. Virtual mode: a sandbox's clock as stored (read once, standing still for
   * the request; an advance a crashed process left is finished first), real time for live, the root clock without a
   * scope. System mode: the engine's Clock.
   */
  readonly clockFor: (scope: string | undefined) => Effect.Effect<Clock.Clock, never, Store.Store | TimerHandlers>
  /**
   * Virtual mode: advances the clock of one sandbox scope to the target `targetOf` picks from its time, firing that
   * scope's timers due on the way. One advance of a clock at a time (a second is refused with 409 CONFLICT), and
   * once begun it runs to its end even if its caller is interrupted. `keyed`: the request's Idempotency-Key, and
   * whether the request resumes that key from one that never answered (`Idempotency.ResumedClaim`); such a retry of
   * an advance whose process died answers what that advance did, and advances no further.
   */
  readonly advanceClock: <E>(
    scope: string,
    targetOf: (nowMs: number) => Effect.Effect<number, E>,
    keyed?: { readonly key: string; readonly resumed: boolean }
  ) => Effect.Effect<AdvanceReport, E | Problem.ApiError, Store.Store | TimerHandlers>
  /** Virtual mode: fires what is due in `scope` at `nowMs`, the request's time (what a write made due at once). */
  readonly settle: (scope: string, nowMs: number) => Effect.Effect<void, never, Store.Store | TimerHandlers>
}

export class TimeControl extends Context.Service<TimeControl, TimeControlService>()("fos/TimeControl") {}

const systemOnly = (what: string) => Effect.die(new Error(`${what} needs the virtual clock`))

/** The system clock's control: every scope runs on `clock`, real time. */
export const systemTimeControl = (clock: Clock.Clock): TimeControlService => ({
  mode: "system",
  now: clock.currentTimeMillis,
  advanceTo: () => Effect.void,
  advanceEvery: () => Effect.void,
  clockFor: () => Effect.succeed(clock),
  advanceClock: () => systemOnly("advancing a clock"),
  settle: () => Effect.void
})

/** How long the system-clock scheduler sleeps at most, so timers written by other processes are seen. */
const pollMs = 250

/**
 * The scheduler loop on the Clock: fire what is due in `lane` (every timer by default), sleep until the next due time
 * (or the poll bound). The system clock runs it over every timer; the virtual clock over the live timers, on real time.
 */
export const runScheduler = (lane: TimerLane = all): Effect.Effect<never, never, Store.Store | TimerHandlers> => Effect.gen(function*() {
  const lifecycle = yield* Lifecycle.Lifecycle
  while (true) {
    const now = yield* Clock.currentTimeMillis
    // A sweep is work in flight, which a close lets finish; a closing engine starts none and waits for its end.
    yield* lifecycle.admit(fireDue(now, lane), Effect.never)
    const next = yield* nextTimerIn(lane)
    const waitMs = next === undefined ? pollMs : Math.min(pollMs, Math.max(0, next.dueAtMs - now))
    yield* Effect.sleep(Duration.millis(Math.max(waitMs, 1)))
  }
})

/** Timer kinds declared by name alone (`handleByName`), for tests of the scheduler without the engine's domains. */
export const layerTimerHandlers = (handlers: Record<string, TimerHandler>): Layer.Layer<TimerHandlers> =>
  Layer.succeed(TimerHandlers, new Map(Object.entries(handlers).map(([name, fire]) => [name, handleByName(name, fire)])))
