import { Effect, Exit, Layer } from "effect"
import { describe, expect, it } from "vitest"
import * as MemoryStore from "../src/kernel/MemoryStore.ts"
import * as Topics from "../src/kernel/Topics.ts"

const Happened = Topics.topic<string>("fos/test/Happened")

describe("topics", () => {
  it("run every subscriber in the order they are declared", async () => {
    const seen: Array<string> = []
    const subscribers = Layer.succeed(Happened, [(e: string) => Effect.sync(() => seen.push(`a:${e}`)), (e: string) => Effect.sync(() => seen.push(`b:${e}`))])
    await Effect.runPromise(Topics.publish(Happened, "x").pipe(Effect.provide(Layer.merge(subscribers, MemoryStore.layer))))
    expect(seen).toEqual(["a:x", "b:x"])
  })

  it("die when the engine was built without its subscribers, rather than skip them", async () => {
    const exit = await Effect.runPromiseExit(Topics.publish(Happened, "x").pipe(Effect.provide(MemoryStore.layer)))
    expect(Exit.isFailure(exit)).toBe(true)
    expect(String(exit)).toContain("no subscribers declared for fos/test/Happened")
  })
})
