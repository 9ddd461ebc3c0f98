/**
 * Whether the engine still takes work, and the drain that ends it: a close stops taking requests at once (the HTTP
 * pipeline answers each new one 503 SERVICE_UNAVAILABLE with Retry-After), lets the work in flight (requests, and
 * the timer the scheduler is firing) finish up to a deadline of real time, and only then lets the engine's scope
 * close its store. Work still running at the deadline is answered as refused when it ends (a request: 503), so no
 * 2xx follows a close; the store closes under it, and a transaction it had not committed rolls back. A webhook send in flight is not
 * waited for: its attempt holds a lease (webhooks/DeliveryWorker.ts), and is sent again when the lease runs out.
 *
 * One drain serves every way an engine ends: `engine.close()`, the scope of `layerEmbedded`, and `fos serve` on
 * SIGTERM, which all reach `drain`.
 */
import { type Cause, Clock, Context, Deferred, Duration, Effect } from "effect"

/** How long a close waits for the work in flight when not told: 10 seconds. */
export const defaultDeadlineMs = 10_000

/** How long a client refused by a closing engine is asked to wait (`Retry-After`): a restart's time, about. */
export const closingRetryAfterSeconds = 5

export interface LifecycleService {
  /** Whether the engine is closing (or closed): it takes no new work. */
  readonly closing: () => boolean
  /**
   * Runs `work` as work in flight, which a drain waits for; once the engine is closing, `refused` instead. The
   * refusal is decided when the effect starts, so work admitted before a close finishes even as the close begins.
   * Work that ends after a drain's deadline passed is answered with `late` (`refused` when not given) instead of
   * its own result: the close has resolved by then.
   */
  readonly admit: <A, E, R, A2, E2, R2>(
    work: Effect.Effect<A, E, R>,
    refused: Effect.Effect<A2, E2, R2>,
    late?: Effect.Effect<A2, E2, R2>
  ) => Effect.Effect<A | A2, E | E2, R | R2>
  /**
   * `admit`, with what the work's end becomes told by `admission` (`Admission`): the request pipeline's, whose
   * answer is finished and recorded in the same step of the fiber as the count goes down.
   */
  readonly admitWith: <A, E, R, A2, E2, R2>(work: Effect.Effect<A, E, R>, admission: Admission<A, E, R, A2, E2, R2>) => Effect.Effect<A | A2, E | E2, R | R2>
  /**
   * Stops taking work and waits until what is in flight has finished, or `deadlineMs` of real time has passed,
   * whichever is first. A second drain waits on the same work with its own deadline.
   */
  readonly drain: (deadlineMs?: number) => Effect.Effect<void>
}

/**
 * What becomes of work in flight besides its own run (`admitWith`), as methods, so that one object made per piece
 * of work (a request's) is all it takes: `end`, its value as it ends, before it leaves the work in flight (a
 * request's answer finished and recorded); `rescue`, what a failure of it becomes (a request's problem), whose value
 * ends as the work's would; `refused` and `late`, the answer once the engine is closing and past a close's deadline.
 */
export interface Admission<A, E, R, A2, E2, R2> {
  end(value: A): A
  rescue(cause: Cause.Cause<E>): Effect.Effect<A, E, R>
  refused(): Effect.Effect<A2, E2, R2>
  late(): Effect.Effect<A2, E2, R2>
}

/** What plain `admit` makes of its work: the work's own end, `refused` and `late`. */
const plainAdmission = <A, E, R, A2, E2, R2>(refused: Effect.Effect<A2, E2, R2>, late: Effect.Effect<A2, E2, R2>): Admission<A, E, R, A2, E2, R2> => ({
  end: (value) => value,
  rescue: (cause) => Effect.failCause(cause),
  refused: () => refused,
  late: () => late
})

/** A lifecycle that measures its deadline on `realClock` (the engine's real time, whatever its own clock). */
export const make = (realClock: Clock.Clock): LifecycleService => {
  let closing = false
  let inFlight = 0
  // A drain's deadline passed with work in flight: that work is refused when it ends, and later drains wait no more.
  let expired = false
  const idle = Deferred.makeUnsafe<void>()
  /** Ends one piece of work in flight; true when a drain's deadline passed meanwhile. */
  const leave = (): boolean => {
    inFlight--
    if (closing && inFlight === 0) Deferred.doneUnsafe(idle, Effect.void)
    return expired
  }
  // Every request runs through here, so it takes as few steps of the fiber as it can (about 900 instructions
  // each, docs/performance.md): the count goes down in the match's own continuations, which see every end of the
  // work (a success, a failure, an interruption), rather than in a finalizer and a second look at its exit. The
  // mask keeps an interruption from falling between the count going up and the match being in place; its function
  // runs when the effect does, so the refusal is decided then without a step of its own.
  const admitWith = <A, E, R, A2, E2, R2>(work: Effect.Effect<A, E, R>, admission: Admission<A, E, R, A2, E2, R2>) =>
    Effect.uninterruptibleMask((restore): Effect.Effect<A | A2, E | E2, R | R2> => {
      if (closing) return restore(admission.refused())
      inFlight++
      // Work that ends past a close's deadline is answered `late`: the close has resolved by then, and nothing may
      // answer as if the engine were still open.
      const onSuccess = (value: A): Effect.Effect<A | A2, E2, R2> => {
        // It leaves first, so that an `end` that throws cannot keep it in flight; a late answer's own value still
        // ends (is recorded) as it did.
        const overtaken = leave()
        const ended = admission.end(value)
        return overtaken ? restore(admission.late()) : Effect.succeed(ended)
      }
      const onFailure = (cause: Cause.Cause<E>): Effect.Effect<A2, E | E2, R2> => (leave() ? restore(admission.late()) : Effect.failCause(cause))
      return Effect.matchCauseEffect(restore(work), {
        onSuccess,
        // Suspended, so that a rescue that throws still meets the match that leaves.
        onFailure: (cause) => Effect.matchCauseEffect(restore(Effect.suspend(() => admission.rescue(cause))), { onSuccess, onFailure })
      })
    })
  return {
    closing: () => closing,
    admit: (work, refused, late = refused) => admitWith(work, plainAdmission(refused, late)),
    admitWith,
    drain: (deadlineMs = defaultDeadlineMs) =>
      Effect.suspend(() => {
        closing = true
        if (inFlight === 0 || expired) Deferred.doneUnsafe(idle, Effect.void)
        return Deferred.await(idle).pipe(
          Effect.timeoutOrElse({
            duration: Duration.millis(Math.max(0, deadlineMs)),
            orElse: () => Effect.sync(() => {
              expired = true
            })
          }),
          Effect.provideService(Clock.Clock, realClock)
        )
      })
  }
}

/**
 * The engine's lifecycle (`Engine.layer` provides one per engine). Without one, work is always taken and a drain
 * waits for nothing: the scheduler and the pipeline run as they did in tests that build them alone.
 */
export class Lifecycle extends Context.Reference<LifecycleService>("fos/Lifecycle", {
  defaultValue: () => ({
    closing: () => false,
    admit: (work) => work,
    admitWith: (work, admission) => Effect.map(Effect.catchCause(work, (cause) => admission.rescue(cause)), (value) => admission.end(value)),
    drain: () => Effect.void
  })
}) {}
