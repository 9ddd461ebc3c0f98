import { Effect, Exit, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { layerMemoryStore } from "../src/kernel/MemoryStore.ts"
import { publish, topic } from "../src/kernel/Topics.ts"

const Happened = topic<string>("fos/test/Happened")

describe("topics", () => {
  it("run every subscriber in the order they are declared", async () => {
    const seen: Array<string> = []
    const subscribers = Layer.succeed(Happened, [(e: string) => Effect.sync(() => seen.push(`a:${e}`)), (e: string) => Effect.sync(() => seen.push(`b:${e}`))])
    await Effect.runPromise(publish(Happened, "x").pipe(Effect.provide(Layer.merge(subscribers, layerMemoryStore))))
    expect(seen).toEqual(["a:x", "b:x"])
  })

  it("die when the engine was built without its subscribers, rather than skip them", async () => {
    const exit = await Effect.runPromiseExit(publish(Happened, "x").pipe(Effect.provide(layerMemoryStore)))
    expect(Exit.isFailure(exit)).toBe(true)
    expect(String(exit)).toContain("no subscribers declared for fos/test/Happened")
  })
})
