/**
 * The delivery worker: webhook sends run here, in the background, never in the request or the advance whose timer
 * claimed them, so no receiver sets the API's latency ("Receiver response time: 2xx within 5 seconds" is the
 * receiver's limit, not the caller's wait).
 *
 * An attempt's timer claims the delivery in its transaction (Dispatch.ts) and, once that commits, hands the send
 * to this worker: a bounded queue and a fixed pool of fibers forked in the engine's scope. A send hands back what it
 * records (`Recording`), and the records of the sends that ended meanwhile share one store transaction, where the
 * DeliveryMachine decides what comes next for each: an advance's instant fires tens of attempts at once, and a
 * transaction each paid a SQL store a commit and a read per row for every one (`recordTogether`). The queue is
 * memory only, and need not be more: a claimed attempt holds its 60-second recovery lease (DeliveryMachine.leaseMs),
 * so an attempt in flight when the process stops, or one the full queue had no room for, is sent again when the
 * lease runs out, as a crash between sending and recording always was.
 *
 * On a virtual clock the clock stands still while a receiver answers, so an attempt's outcome belongs to the
 * instant it was made: an advance waits for the sends in flight before it moves the clock (`settled`, which
 * makeVirtualTimeControl is given), and a retry is then due exactly 30 s, 2 min, ... after its attempt however long
 * the receiver took. A write never moves the clock, so it never waits.
 *
 * `flushDeliveries` is the testers' wait: until every delivery caused so far has had its attempt.
 */
import { Cause, Clock, Context, Deferred, Duration, Effect, Queue, type Scope } from "effect"
import type { Environment } from "@fos/contract"
import * as Deliveries from "./Deliveries.ts"
import * as RealClock from "../kernel/RealClock.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Timers from "../kernel/Timers.ts"

/** How many sends run at once, per engine. */
const workerCount = 64
/** How many sends may wait for a worker; past it an attempt waits for its lease instead (logged). */
const queueCapacity = 10_000
/** How many workers record at once, per engine: each transaction takes the records waiting when it begins. */
const recorderCount = 4
/** How many records one transaction takes at most, as a sweep fires at most `sweepBatch` timers (Timers.ts). */
const recordBatch = 100

/**
 * What a send leaves to record once its outcome is known: the body of a store transaction on `store` (`record`),
 * which another send's may share, and the rows it locks (`locks`), which the shared transaction locks up front, one
 * statement per table, so the records then find them held. Everything `record` needs is provided already.
 */
export interface Recording {
  readonly store: Store.StoreService
  readonly locks: ReadonlyArray<{ readonly table: Store.Table<any>; readonly key: string }>
  readonly record: Effect.Effect<void>
}

export interface DeliveryWorkerService {
  /**
   * Queues a send of the delivery scope `scope` (scopeOf), with everything it needs already provided, and what it
   * answers to record, if anything; never waits. A send that finds the queue full is left to its recovery lease.
   */
  readonly submit: (scope: string, send: Effect.Effect<Recording | void>) => Effect.Effect<void>
  /** Waits until the sends queued or running now (of `scope`, or of every scope) have ended, their records committed. */
  readonly settled: (scope?: string) => Effect.Effect<void>
  /** Waits until the next send of this process ends: a flush's cue to look again. */
  readonly nextEnd: Effect.Effect<void>
  /** The pool of fibers, forked in the calling scope (the engine's: `Engine.layer`). */
  readonly start: Effect.Effect<void, never, Scope.Scope>
}

export class DeliveryWorker extends Context.Service<DeliveryWorker, DeliveryWorkerService>()("fos/DeliveryWorker") {}

interface Job {
  readonly scope: string
  readonly send: Effect.Effect<Recording | void>
  readonly done: Deferred.Deferred<void>
}

/**
 * Runs the records of `jobs` (all of one store) in one transaction: their rows locked first, one statement per table,
 * then each record in the order its send ended. A batch that fails (a record's defect, a deadlock past the store's
 * retries) rolls back whole, and each record then runs in a transaction of its own, so one bad record loses no other.
 */
const recordTogether = (store: Store.StoreService, jobs: ReadonlyArray<readonly [Job, Recording]>) => {
  const alone = (job: Job, recording: Recording) =>
    store.transaction(recording.record).pipe(
      Effect.catchCause((cause) => Effect.logError("A webhook send failed", cause).pipe(Effect.annotateLogs(Tenancy.scopeLogAnnotations(job.scope))))
    )
  if (jobs.length === 1) return alone(...jobs[0]!)
  const byTable = new Map<Store.Table<any>, Array<string>>()
  for (const [, { locks }] of jobs) {
    for (const { table, key } of locks) {
      const keys = byTable.get(table)
      if (keys === undefined) byTable.set(table, [key])
      else keys.push(key)
    }
  }
  return store.transaction(Effect.gen(function*() {
    for (const [table, keys] of byTable) yield* store.getManyForUpdate(table, keys)
    for (const [, { record }] of jobs) yield* record
  })).pipe(
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.forEach(jobs, ([job, recording]) => alone(job, recording), { discard: true })
    )
  )
}

export const make: Effect.Effect<DeliveryWorkerService> = Effect.gen(function*() {
  const queue = yield* Queue.dropping<Job>(queueCapacity)
  // The sends that ended and wait for their records to commit, in the order they ended.
  const recordable: Array<readonly [Job, Recording]> = []
  // How many workers are recording now (at most `recorderCount`).
  let recorders = 0
  // Every job queued, running or waiting for its record, so that `settled` knows what to wait for.
  const open = new Set<Job>()
  let ended = Deferred.makeUnsafe<void>()
  const finish = (job: Job) =>
    Effect.sync(() => {
      if (!open.delete(job)) return
      Deferred.doneUnsafe(job.done, Effect.void)
      const cue = ended
      ended = Deferred.makeUnsafe<void>()
      Deferred.doneUnsafe(cue, Effect.void)
    })
  /**
   * Records what waits, a transaction per store, again until nothing does: the records of the sends that ended while
   * one transaction ran go together in the next (a group commit), and a lone send's record runs at once.
   */
  const record = (): Effect.Effect<void> =>
    Effect.suspend(() => {
      const taken = recordable.splice(0, recordBatch)
      if (taken.length === 0) {
        recorders--
        return Effect.void
      }
      const byStore = new Map<Store.StoreService, Array<readonly [Job, Recording]>>()
      for (const item of taken) {
        const jobs = byStore.get(item[1].store)
        if (jobs === undefined) byStore.set(item[1].store, [item])
        else jobs.push(item)
      }
      return Effect.forEach(byStore, ([store, jobs]) => recordTogether(store, jobs), { discard: true }).pipe(
        Effect.ensuring(Effect.forEach(taken, ([job]) => finish(job), { discard: true })),
        Effect.onInterrupt(() => Effect.sync(() => void recorders--)),
        Effect.flatMap(record)
      )
    })
  /** Hands a send's record on: this worker records it, with what else waits, unless enough workers are recording. */
  const toRecord = (job: Job, recording: Recording) =>
    Effect.suspend(() => {
      recordable.push([job, recording])
      if (recorders >= recorderCount) return Effect.void
      recorders++
      return record()
    })
  const work = Effect.forever(Effect.flatMap(Queue.take(queue), (job) =>
    job.send.pipe(
      Effect.catchCause((cause) => Effect.as(Effect.logError("A webhook send failed", cause).pipe(Effect.annotateLogs(Tenancy.scopeLogAnnotations(job.scope))), undefined)),
      Effect.flatMap((recording) => recording === undefined ? finish(job) : toRecord(job, recording)),
      Effect.onInterrupt(() => finish(job))
    )))
  return {
    submit: (scope, send) =>
      Effect.gen(function*() {
        const job: Job = { scope, send, done: Deferred.makeUnsafe<void>() }
        open.add(job)
        if (yield* Queue.offer(queue, job)) return
        open.delete(job)
        yield* Effect.logWarning("The webhook send queue is full; the attempt is sent again when its lease runs out").pipe(Effect.annotateLogs(Tenancy.scopeLogAnnotations(scope)))
      }),
    settled: (scope) =>
      Effect.suspend(() =>
        Effect.forEach([...open].filter((job) => scope === undefined || job.scope === scope), (job) => Deferred.await(job.done), {
          discard: true
        })
      ),
    nextEnd: Effect.suspend(() => Deferred.await(ended)),
    start: Effect.forEach(Array.from({ length: workerCount }), () => Effect.forkScoped(work), { discard: true })
  }
})

// --- the testers' wait -------------------------------------------------------------------------------------------

/**
 * How long a flush waits at most: the spec's receiver limit (an attempt ends within 5 seconds, answered or not),
 * plus a second to record the attempt and for the scheduler to pick up what is due.
 */
export const flushLimitMs = 6_000
/** How often a flush looks at the store, for attempts that other processes make. */
const flushPollMs = 25

/** What a flush waited for, as it stands when the flush answers. */
export interface FlushReport {
  /** Every delivery whose attempt was due or in flight when the flush began, as it is now. */
  readonly deliveries: ReadonlyArray<Deliveries.WebhookDelivery>
  /** False when `flushLimitMs` ran out with some of those attempts still unrecorded (they stay `processing`). */
  readonly complete: boolean
}

/** Whether a delivery has had the attempt it was waiting for when `before` was read. */
const attempted = (before: Deliveries.WebhookDelivery, now: Deliveries.WebhookDelivery | undefined): boolean =>
  now === undefined ||
  (now.status !== "processing" && (now.status !== "pending" || now.run !== before.run || now.attemptsInRun !== before.attemptsInRun))

/**
 * Waits until every delivery of the given organizations' environments whose attempt is due now or in flight has
 * had that attempt recorded, for at most `flushLimitMs` of real time. A delivery waiting for a retry later on the
 * clock has had its attempt already: the flush does not wait for it, nor move the clock (an advance does; flush
 * again after it). On a virtual clock it first fires what is due at the clock's time, as every write does.
 * Every organization and environment when `scopes` is omitted (the embedded engine's `flush()`).
 */
export const flushDeliveries = (
  scopes?: ReadonlyArray<{ readonly organizationId: string; readonly environment: Environment }>
): Effect.Effect<FlushReport, never, Store.Store | Timers.TimeControl | Timers.TimerHandlers | DeliveryWorker | RealClock.RealClock> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const time = yield* Timers.TimeControl
    const worker = yield* DeliveryWorker
    const realClock = yield* RealClock.RealClock
    const realNow = () => realClock.currentTimeMillisUnsafe()
    const deadline = realNow() + flushLimitMs
    if (time.mode === "virtual") yield* time.advanceTo(yield* time.now)
    const all = scopes ?? (yield* store.page(Tenancy.Organizations, {
      order: "all",
      partition: "",
      descending: false,
      backward: false,
      from: undefined,
      limit: 100_000
    })).flatMap((o) => (["sandbox", "live"] as const).map((environment) => ({ organizationId: o.id, environment })))
    const nowMs = yield* time.now
    const targets: Array<Deliveries.WebhookDelivery> = []
    for (const { organizationId, environment } of all) {
      targets.push(...(yield* Deliveries.unfinished(Tenancy.scopeOf(organizationId, environment), nowMs)))
    }
    let waiting = targets
    while (true) {
      const current = yield* Effect.forEach(waiting, (d) => Effect.map(store.get(Deliveries.WebhookDeliveries, d.id), (now) => [d, now] as const))
      waiting = current.filter(([before, now]) => !attempted(before, now)).map(([before]) => before)
      const left = deadline - realNow()
      if (waiting.length === 0 || left <= 0) break
      // Woken by a send of this process ending, or after a short while for the other processes' sends.
      yield* Effect.raceFirst(worker.nextEnd, Effect.sleep(Duration.millis(Math.min(flushPollMs, left)))).pipe(
        Effect.provideService(Clock.Clock, realClock)
      )
    }
    const deliveries = yield* Effect.forEach(targets, (d) => Effect.map(store.get(Deliveries.WebhookDeliveries, d.id), (now) => now ?? d))
    return { deliveries, complete: waiting.length === 0 }
  })
