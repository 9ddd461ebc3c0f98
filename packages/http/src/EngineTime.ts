/**
 * An embedded engine's time, driven by its host (Engine.ts): the virtual clock moved by a length or to an instant,
 * run until no timer is left, for the engine's root clock (and every sandbox clock behind it) or for one
 * organization's sandbox. `engine.clock` and `engine.clockOf` call these; a host written with Effect calls them
 * itself. On the system clock a move is a defect: only the virtual clock is the engine's to move.
 */
import type { Engine as EngineModule, Problem } from "@fos/core"
import { DeliveryWorker, Store, Tenancy, Timers } from "@fos/core"
import { parseIso, toIso } from "@fos/contract"
import { Duration, Effect, Option } from "effect"

/** The last instant a wire timestamp (four-digit year) can show; the clock never goes past it. */
const maxInstantMs = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

/** Epoch milliseconds of an instant given as ISO 8601 text with a zone, a Date, or epoch milliseconds. */
export const instantMs = (instant: string | number | Date, what: string): number => {
  const ms = typeof instant === "string" ? parseIso(instant) : typeof instant === "number" ? instant : instant.getTime()
  if (ms === undefined || !Number.isInteger(ms) || ms < 0 || ms > maxInstantMs) {
    throw new RangeError(`${what}: ${String(instant)} is not an instant from 1970 to 9999 (ISO 8601 with a zone, a Date, or whole epoch milliseconds)`)
  }
  return ms
}

/** A length of time as Effect's `Duration` takes it ("15 minutes", "30 seconds", a number of ms, ...). */
const durationMs = (input: Duration.Input, what: string): number => {
  const ms = Option.map(Duration.fromInput(input), Duration.toMillis)
  if (Option.isNone(ms) || !Number.isInteger(ms.value) || ms.value < 0) {
    throw new RangeError(`${what}: ${JSON.stringify(input)} is not a whole, finite, non-negative number of milliseconds ("15 minutes", "30 seconds", "1 hour", 900000)`)
  }
  return ms.value
}

// --- the root clock ----------------------------------------------------------------------------------------------

const virtualOnly = (time: Timers.TimeControlService) =>
  time.mode === "virtual"
    ? Effect.void
    : Effect.die(new Error("this engine runs on the system clock; create it with clock: \"virtual\" to move time"))

/**
 * Virtual clock: moves time forward by `by` ("15 minutes", "30 seconds", "1 hour", or ms), firing every timer due on
 * the way: the root clock and every organization's sandbox clock, each by `by` from its own time.
 */
export const advanceBy = (by: Duration.Input): Effect.Effect<void, never, EngineModule.EngineServices> =>
  Effect.gen(function*() {
    const time = yield* Timers.TimeControl
    yield* virtualOnly(time)
    const ms = durationMs(by, "advance")
    if ((yield* time.now) + ms > maxInstantMs) return yield* Effect.die(new RangeError(`advance: would move the clock past ${toIso(maxInstantMs)}`))
    // Every clock moves by `by` from its own time: a sandbox advanced on its own stays that far ahead.
    yield* time.advanceEvery((now) => Math.min(maxInstantMs, now + ms))
  })

/** Virtual clock: moves time forward to `instant` (not before now), firing every timer due on the way. */
export const advanceTo = (instant: string | number | Date): Effect.Effect<void, never, EngineModule.EngineServices> =>
  Effect.gen(function*() {
    const time = yield* Timers.TimeControl
    yield* virtualOnly(time)
    const target = instantMs(instant, "advanceTo")
    const now = yield* time.now
    if (target < now) return yield* Effect.die(new RangeError(`advanceTo: ${toIso(target)} is before the clock's time ${toIso(now)}; the clock only moves forward`))
    yield* time.advanceTo(target)
  })

export interface RunUntilIdleOptions {
  /**
   * How far past the clock's time at the call it may go ("1 day" when omitted). Timers due later stay pending:
   * idempotency retention (30 days) and anything periodic are not jumped over.
   */
  readonly within?: Duration.Input
  /** The most due times it steps to (10,000 when omitted), a bound for timers that keep making new ones. */
  readonly maxSteps?: number
}

export interface IdleReport {
  /** The clock's time at the end: the due time of the last timer fired, or the time at the call if none was. */
  readonly now: number
  /** How many due times it stepped to. */
  readonly steps: number
  /** `idle`: no timer is left; `horizon`: the next one is due after `within`; `maxSteps`: the bound was hit. */
  readonly stoppedBy: "idle" | "horizon" | "maxSteps"
  /** When the next pending timer is due, if one is left. */
  readonly nextDueMs: number | undefined
}

/** One virtual clock as `runUntilIdle` drives it: its time, its timers, and a move to a time. */
interface DrivenClock {
  readonly now: Effect.Effect<number, never, EngineModule.EngineServices>
  readonly lane: Timers.TimerLane
  readonly moveTo: (targetMs: number) => Effect.Effect<void, never, EngineModule.EngineServices>
}

const untilIdle = (clock: DrivenClock, options: RunUntilIdleOptions): Effect.Effect<IdleReport, never, EngineModule.EngineServices> =>
  Effect.gen(function*() {
    const start = yield* clock.now
    const horizon = start + durationMs(options.within ?? "1 day", "runUntilIdle within")
    const maxSteps = options.maxSteps ?? 10_000
    const worker = yield* DeliveryWorker.DeliveryWorker
    let steps = 0
    while (true) {
      // The sends in flight may schedule a retry or end their delivery's lease: the next timer is known after them.
      yield* worker.settled()
      const next = yield* Timers.nextTimerIn(clock.lane)
      const report = (stoppedBy: IdleReport["stoppedBy"]) =>
        Effect.map(clock.now, (now): IdleReport => ({ now, steps, stoppedBy, nextDueMs: next?.dueAtMs }))
      if (next === undefined) return yield* report("idle")
      if (next.dueAtMs > horizon) return yield* report("horizon")
      if (steps >= maxSteps) return yield* report("maxSteps")
      // A timer already overdue (one whose handler failed is moved a minute on) fires at the current time.
      yield* clock.moveTo(Math.max(next.dueAtMs, yield* clock.now))
      steps++
    }
  })

/**
 * Virtual clock: fires what is due now and everything it leads to, stepping the clock to each next pending timer
 * in due order (so a webhook's retries at 30 s, 2 min, 15 min and 1 h all run), until no timer is left within
 * `within` or `maxSteps` due times were stepped to. The clock stops at the last timer fired, not at the horizon.
 * This is the engine's root clock, with every sandbox clock behind it (`engine.clock`); `runSandboxUntilIdle` runs
 * one organization's.
 */
export const runUntilIdle = (options: RunUntilIdleOptions = {}): Effect.Effect<IdleReport, never, EngineModule.EngineServices> =>
  Effect.gen(function*() {
    const time = yield* Timers.TimeControl
    yield* virtualOnly(time)
    return yield* untilIdle({ now: time.now, lane: Timers.virtual, moveTo: time.advanceTo }, options)
  })

// --- one organization's sandbox clock ------------------------------------------------------------------------------

/** An advance of one sandbox's clock as the embedding API reports it (the HTTP advance's report, in epoch ms). */
export type SandboxAdvanceReport = Timers.AdvanceReport

/** The sandbox scope of an organization that exists; a defect names an unknown one. */
const sandboxOf = (organizationId: string): Effect.Effect<string, never, EngineModule.EngineServices> =>
  Effect.flatMap(Store.Store, (store) =>
    Effect.flatMap(store.get(Tenancy.Organizations, organizationId), (organization) =>
      organization === undefined
        ? Effect.die(new RangeError(`no organization ${organizationId} in this engine`))
        : Effect.succeed(Tenancy.scopeOf(organizationId, "sandbox"))))

/** An advance's refusal (another advance of the clock runs) as the error an embedder sees. */
const orThrow = <A>(effect: Effect.Effect<A, Problem.ApiError, EngineModule.EngineServices>): Effect.Effect<A, never, EngineModule.EngineServices> =>
  Effect.catch(effect, (error) => Effect.die(new Error(`${error.code}: ${error.detail}`)))

/** The time of an organization's sandbox clock (the engine's Clock on the system clock). */
export const sandboxNow = (organizationId: string): Effect.Effect<number, never, EngineModule.EngineServices> =>
  Effect.gen(function*() {
    const time = yield* Timers.TimeControl
    const clock = yield* time.clockFor(yield* sandboxOf(organizationId))
    return clock.currentTimeMillisUnsafe()
  })

const advanceSandbox = (organizationId: string, targetOf: (nowMs: number) => number) =>
  Effect.gen(function*() {
    const time = yield* Timers.TimeControl
    yield* virtualOnly(time)
    const scope = yield* sandboxOf(organizationId)
    return yield* orThrow(time.advanceClock(scope, (now) => Effect.sync(() => targetOf(now))))
  })

/**
 * Virtual clock: moves one organization's sandbox clock forward by `by`, firing that sandbox's timers due on the way
 * (the HTTP advance, for that organization). Another advance of the same clock running meanwhile is an error.
 */
export const advanceSandboxBy = (organizationId: string, by: Duration.Input): Effect.Effect<SandboxAdvanceReport, never, EngineModule.EngineServices> => {
  const ms = durationMs(by, "advance")
  return advanceSandbox(organizationId, (now) => {
    if (now + ms > maxInstantMs) throw new RangeError(`advance: would move the clock past ${toIso(maxInstantMs)}`)
    return now + ms
  })
}

/** Virtual clock: moves one organization's sandbox clock to `instant` (not before its time). */
export const advanceSandboxTo = (organizationId: string, instant: string | number | Date): Effect.Effect<SandboxAdvanceReport, never, EngineModule.EngineServices> => {
  const target = instantMs(instant, "advanceTo")
  return advanceSandbox(organizationId, (now) => {
    if (target < now) throw new RangeError(`advanceTo: ${toIso(target)} is before the clock's time ${toIso(now)}; the clock only moves forward`)
    return target
  })
}

/** `runUntilIdle` on one organization's sandbox clock: its timers only. */
export const runSandboxUntilIdle = (organizationId: string, options: RunUntilIdleOptions = {}): Effect.Effect<IdleReport, never, EngineModule.EngineServices> =>
  Effect.gen(function*() {
    const time = yield* Timers.TimeControl
    yield* virtualOnly(time)
    const scope = yield* sandboxOf(organizationId)
    return yield* untilIdle({
      now: sandboxNow(organizationId),
      lane: Timers.scope(scope),
      moveTo: (targetMs) => Effect.asVoid(orThrow(time.advanceClock(scope, (now) => Effect.succeed(Math.max(now, targetMs)))))
    }, options)
  })
