import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import * as Clocks from "../src/kernel/Clocks.ts"
import * as MemoryStore from "../src/kernel/MemoryStore.ts"
import * as Store from "../src/kernel/Store.ts"
import * as Timers from "../src/kernel/Timers.ts"

const t0 = Date.parse("2026-01-01T00:00:00.000Z")

/** A store and handlers that record (kind payload, clock time) in firing order. */
const harness = () => {
  const fired: Array<string> = []
  const handlers = Timers.layerTimerHandlers({
    record: (payload: { name: string }) => Effect.sync(() => void fired.push(payload.name)),
    // A timer that schedules another one 30 s later, as webhook retries will.
    chain: (payload: { name: string; left: number; atMs: number }) =>
      Effect.gen(function*() {
        fired.push(payload.name)
        if (payload.left > 0) {
          yield* Timers.schedule("chain", payload.atMs + 30_000, { name: `${payload.name}+`, left: payload.left - 1, atMs: payload.atMs + 30_000 })
        }
      })
  })
  return { fired, layer: Layer.mergeAll(MemoryStore.layer, handlers) }
}

describe("durable timers", () => {
  it.effect("fire in due order, each once, and only when due", () => {
    const { fired, layer } = harness()
    return Effect.gen(function*() {
      yield* Timers.schedule("record", t0 + 3000, { name: "c" })
      yield* Timers.schedule("record", t0 + 1000, { name: "a" })
      yield* Timers.schedule("record", t0 + 2000, { name: "b" })
      expect(yield* Timers.fireDue(t0 + 999)).toBe(0)
      expect(yield* Timers.fireDue(t0 + 2000)).toBe(2)
      expect(fired).toEqual(["a", "b"])
      expect(yield* Timers.fireDue(t0 + 2000)).toBe(0)
      expect(yield* Timers.fireDue(t0 + 5000)).toBe(1)
      expect(fired).toEqual(["a", "b", "c"])
      const store = yield* Store.Store
      expect(yield* store.count(Timers.Timers, "due", "")).toBe(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("timers due at the same instant fire in the order they were scheduled", () => {
    const { fired, layer } = harness()
    const names = Array.from({ length: 20 }, (_, i) => `t${i}`)
    return Effect.gen(function*() {
      const store = yield* Store.Store
      // Some scheduled in one transaction, the rest each in its own: either way, scheduling order is firing order.
      yield* store.transaction(Effect.forEach(names.slice(0, 10), (name) => Timers.schedule("record", t0 + 1000, { name }), { discard: true }))
      for (const name of names.slice(10)) yield* Timers.schedule("record", t0 + 1000, { name })
      yield* Timers.schedule("record", t0 + 999, { name: "earlier" })
      expect(yield* Timers.fireDue(t0 + 1000)).toBe(21)
      expect(fired).toEqual(["earlier", ...names])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a timer scheduled inside a rolled-back transaction never fires", () => {
    const { fired, layer } = harness()
    return Effect.gen(function*() {
      const store = yield* Store.Store
      yield* store.transaction(Effect.andThen(Timers.schedule("record", t0, { name: "ghost" }), Effect.fail("boom"))).pipe(Effect.ignore)
      expect(yield* Timers.fireDue(t0 + 1)).toBe(0)
      expect(fired).toEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.effect("the system-clock scheduler fires on the Clock: at +30 s, not at +29 s", () => {
    const { fired, layer } = harness()
    return Effect.gen(function*() {
      yield* Timers.schedule("record", 30_000, { name: "retry" })
      const fiber = yield* Effect.forkChild(Timers.runScheduler())
      yield* TestClock.adjust("29 seconds")
      expect(fired).toEqual([])
      yield* TestClock.adjust("1 second")
      expect(fired).toEqual(["retry"])
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a virtual advance fires every due timer in order, including timers created on the way", () => {
    const { fired, layer } = harness()
    return Effect.gen(function*() {
      const clock = Timers.makeVirtualClock(yield* Clocks.loadRoot(yield* Store.Store, t0))
      // One process alone: its own advances' leases are the only ones.
      let owners = 0
      const liveness = { processId: "p", newOwner: () => `p.${owners++}`, isOwn: (owner: string) => owner.startsWith("p."), isAlive: () => Effect.succeed(false) }
      const time = Clocks.makeVirtualTimeControl(clock, Timers.makeVirtualClock(t0), liveness)
      yield* Timers.schedule("chain", t0 + 10_000, { name: "x", left: 3, atMs: t0 + 10_000 })
      yield* Timers.schedule("record", t0 + 45_000, { name: "y" })
      yield* Timers.schedule("record", t0 + 500_000, { name: "late" })
      // x at +10 s makes x+ at +40 s, x++ at +70 s, x+++ at +100 s; y is at +45 s.
      yield* time.advanceTo(t0 + 100_000)
      expect(fired).toEqual(["x", "x+", "y", "x++", "x+++"])
      expect(clock.currentTimeMillisUnsafe()).toBe(t0 + 100_000)
      yield* time.advanceTo(t0 + 499_999)
      expect(fired).not.toContain("late")
      yield* time.advanceTo(t0 + 500_000)
      expect(fired.at(-1)).toBe("late")
    }).pipe(Effect.provide(layer))
  })

  it.effect("a failing handler neither stops the sweep nor spins: its timer moves a minute later", () => {
    const fired: Array<string> = []
    const layer = Layer.mergeAll(MemoryStore.layer, Timers.layerTimerHandlers({
      boom: () => Effect.die(new Error("handler bug")),
      record: (payload: { name: string }) => Effect.sync(() => void fired.push(payload.name))
    }))
    return Effect.gen(function*() {
      yield* Timers.schedule("boom", t0 + 1000, {})
      yield* Timers.schedule("record", t0 + 2000, { name: "after" })
      expect(yield* Timers.fireDue(t0 + 5000)).toBe(2)
      expect(fired).toEqual(["after"])
      const store = yield* Store.Store
      const left = yield* store.page(Timers.Timers, { order: "due", partition: "", descending: false, backward: false, from: undefined, limit: 10 })
      expect(left.map((t) => [t.kind, t.dueAtMs])).toEqual([["boom", t0 + 5000 + 60_000]])
      expect(yield* Timers.fireDue(t0 + 5000)).toBe(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("the timers of a sweep that are due fire in one transaction; a failing one alone is retried, one each", () => {
    const fired: Array<string> = []
    let transactions = 0
    // The memory store, counting the transactions begun through it.
    const counting = Layer.effect(Store.Store, Effect.map(Store.Store, (store): Store.StoreService => ({
      ...store,
      transaction: (effect) => Effect.suspend(() => (transactions++, store.transaction(effect)))
    }))).pipe(Layer.provide(MemoryStore.layer))
    let failing = false
    const layer = Layer.mergeAll(counting, Timers.layerTimerHandlers({
      record: (payload: { name: string }) =>
        failing && payload.name === "b2" ? Effect.die(new Error("handler bug")) : Effect.sync(() => void fired.push(payload.name))
    }))
    return Effect.gen(function*() {
      for (const name of ["a1", "a2", "a3"]) yield* Timers.schedule("record", t0 + 1000, { name })
      transactions = 0
      // An advance's step knows a timer is due: its first look takes them all.
      expect(yield* Timers.fireDue(t0 + 1000, Timers.all, undefined, { knownDue: true })).toBe(3)
      expect(fired).toEqual(["a1", "a2", "a3"])
      expect(transactions).toBe(1)

      for (const name of ["b1", "b2", "b3"]) yield* Timers.schedule("record", t0 + 2000, { name })
      failing = true
      transactions = 0
      expect(yield* Timers.fireDue(t0 + 2000, Timers.all, undefined, { knownDue: true })).toBe(3)
      // The batch ran b1, then b2 failed and rolled it back; then one transaction each (b1's second run is the one
      // that commits: a handler's work is its store writes), and one more moving the failing timer a minute on.
      expect(fired).toEqual(["a1", "a2", "a3", "b1", "b1", "b3"])
      expect(transactions).toBe(1 + 3 + 1)
      const store = yield* Store.Store
      const left = yield* store.page(Timers.Timers, { order: "due", partition: "", descending: false, backward: false, from: undefined, limit: 10 })
      expect(left.map((t) => [(t.payload as { name: string }).name, t.dueAtMs])).toEqual([["b2", t0 + 2000 + 60_000]])
    }).pipe(Effect.provide(layer))
  })

  it.effect("the virtual clock never moves backwards", () =>
    Effect.sync(() => {
      const clock = Timers.makeVirtualClock(t0)
      clock.set(t0 - 1000)
      expect(clock.currentTimeMillisUnsafe()).toBe(t0)
    }))
})
