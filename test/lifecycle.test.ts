/**
 * The engine's lifecycle alone (packages/core/src/kernel/Lifecycle.ts): `admitWith`, the request pipeline's way in,
 * ends its work's value in the same step as the count goes down, answers a failure with its rescue, and refuses
 * once a drain has begun; test/engine-close.test.ts sees the same through an engine.
 */
import { Lifecycle } from "@fos/core"
import { Cause, Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"

const realClock = Effect.runSync(Effect.clockWith(Effect.succeed))

const admission = (log: Array<string>): Lifecycle.Admission<string, string, never, string, never, never> => ({
  end: (value) => {
    log.push(`end ${value}`)
    return `${value}!`
  },
  rescue: (cause) => Effect.succeed(`rescued ${Cause.squash(cause)}`),
  refused: () => Effect.succeed("refused"),
  late: () => Effect.succeed("late")
})

describe("admitWith", () => {
  it("ends the work's value, rescues a failure and ends the rescue's, and a drain then waits for nothing", async () => {
    const lifecycle = Lifecycle.make(realClock)
    const log: Array<string> = []
    expect(await Effect.runPromise(lifecycle.admitWith(Effect.succeed("ok"), admission(log)))).toBe("ok!")
    expect(await Effect.runPromise(lifecycle.admitWith(Effect.fail("bad"), admission(log)))).toBe("rescued bad!")
    expect(log).toEqual(["end ok", "end rescued bad"])
    // Nothing is in flight: the drain returns at once, and what comes after it is refused.
    await Effect.runPromise(lifecycle.drain(10_000))
    expect(await Effect.runPromise(lifecycle.admitWith(Effect.succeed("ok"), admission(log)))).toBe("refused")
  })

  it("lets an interruption through, leaving the work in flight", async () => {
    const lifecycle = Lifecycle.make(realClock)
    const exit = await Effect.runPromiseExit(lifecycle.admitWith(Effect.interrupt, { ...admission([]), rescue: (cause) => Effect.failCause(cause) }))
    expect(Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)).toBe(true)
    // Had the interruption kept it in flight, this drain would wait out its deadline and later work be `late`.
    await Effect.runPromise(lifecycle.drain(60_000))
  })
})
