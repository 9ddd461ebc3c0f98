/**
 * The seeded streams (RandomStreams.ts): one stream per key, the same for the same seed, apart for different keys,
 * salts and seeds; a timer draws from its organization's stream whoever fires it; an unseeded engine's draws are
 * left to the ambient `Random`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Random } from "effect"
import { newId } from "../src/kernel/IdGenerator.ts"
import { layerMemoryStore } from "../src/kernel/MemoryStore.ts"
import { randomFromBytes, RandomStreams, rootStream, seededStreams, withStream } from "../src/kernel/RandomStreams.ts"
import { fireDue, layerTimerHandlers, schedule } from "../src/kernel/Timers.ts"

const draws = (random: Random.Random, n = 4) => Array.from({ length: n }, () => random.nextDoubleUnsafe())

describe("seeded streams", () => {
  it("give the same values for the same seed, salt and key, and other values otherwise", () => {
    const a = draws(seededStreams("42", "").of("org_a/sandbox"))
    expect(draws(seededStreams("42", "").of("org_a/sandbox"))).toEqual(a)
    for (const other of [seededStreams("42", "").of("org_b/sandbox"), seededStreams("42", "").of("org_a/live"), seededStreams("42", "7").of("org_a/sandbox"), seededStreams("43", "").of("org_a/sandbox"), seededStreams("42", "").of(rootStream)]) {
      expect(draws(other)).not.toEqual(a)
    }
    // One stream per key for the life of the streams: a second `of` continues where the first left off.
    const streams = seededStreams("42", "")
    const first = draws(streams.of("org_a/sandbox"), 2)
    expect([...first, ...draws(streams.of("org_a/sandbox"), 2)]).toEqual(a)
  })

  it.effect("leave draws to the ambient Random when the engine has no seed", () =>
    Effect.gen(function*() {
      const pinned: Random.Random = { nextDoubleUnsafe: () => 0, nextIntUnsafe: () => 0 }
      const id = yield* newId("cus").pipe(withStream("org_a/sandbox"), Effect.provideService(Random.Random, pinned))
      expect(id).toBe("cus_000000000000000000000000")
      const seeded = yield* newId("cus").pipe(withStream("org_a/sandbox"), Effect.provideService(Random.Random, pinned), Effect.provideService(RandomStreams, seededStreams("1", "")))
      expect(seeded).not.toBe(id)
    }))

  it.effect("make a timer draw from its organization's stream, whoever fires it", () => {
    const minted: Array<string> = []
    const handlers = layerTimerHandlers({ mint: () => Effect.map(newId("cus"), (id) => void minted.push(id)) })
    return Effect.gen(function*() {
      yield* schedule("mint", 1000, {}, "org_a/sandbox")
      yield* schedule("mint", 1000, {}, "org_b/sandbox")
      yield* schedule("mint", 1000, {})
      // Fired from within org_b's stream, as a request of org_b's would.
      yield* fireDue(1000).pipe(withStream("org_b/sandbox"))
      const expected = seededStreams("9", "")
      const idOf = (key: string) => Effect.runSync(newId("cus").pipe(Effect.provideService(Random.Random, expected.of(key))))
      expect(minted).toEqual([idOf("org_a/sandbox"), idOf("org_b/sandbox"), idOf(rootStream)])
    }).pipe(Effect.provideService(RandomStreams, seededStreams("9", "")), Effect.provide(Layer.mergeAll(layerMemoryStore, handlers)))
  })
})

describe("randomFromBytes", () => {
  it("draws 53-bit doubles in [0, 1) from the words its source fills, refilling when they run out", () => {
    let fills = 0
    const random = randomFromBytes((words) => {
      fills++
      words.fill(0xffffffff)
    })
    const values = draws(random, 600)
    expect(values.every((v) => v < 1 && v > 0.999999)).toBe(true)
    expect(fills).toBe(2)
    let counter = 0
    const varied = randomFromBytes((words) => words.forEach((_, i) => (words[i] = (counter++ * 2654435761) >>> 0)))
    expect(new Set(draws(varied, 100)).size).toBe(100)
  })
})
