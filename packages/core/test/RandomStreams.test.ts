/**
 * The seeded streams (RandomStreams.ts): one stream per key, the same for the same seed, apart for different keys,
 * salts and seeds; a timer draws from its organization's stream whoever fires it; an unseeded engine's draws are
 * left to the ambient `Random`; a stream's position counts its draws and a rewind replays what followed it (a
 * position of another engine salt starts a stream of its own); a fresh generator moves no stream.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Random } from "effect"
import * as IdGenerator from "../src/kernel/IdGenerator.ts"
import * as MemoryStore from "../src/kernel/MemoryStore.ts"
import * as RandomStreams from "../src/kernel/RandomStreams.ts"
import * as Timers from "../src/kernel/Timers.ts"

const draws = (random: Random.Random, n = 4) => Array.from({ length: n }, () => random.nextDoubleUnsafe())

describe("seeded streams", () => {
  it("give the same values for the same seed, salt and key, and other values otherwise", () => {
    const a = draws(RandomStreams.seededStreams("42", "").of("org_a/sandbox"))
    expect(draws(RandomStreams.seededStreams("42", "").of("org_a/sandbox"))).toEqual(a)
    for (const other of [RandomStreams.seededStreams("42", "").of("org_b/sandbox"), RandomStreams.seededStreams("42", "").of("org_a/live"), RandomStreams.seededStreams("42", "7").of("org_a/sandbox"), RandomStreams.seededStreams("43", "").of("org_a/sandbox"), RandomStreams.seededStreams("42", "").of(RandomStreams.rootStream)]) {
      expect(draws(other)).not.toEqual(a)
    }
    // One stream per key for the life of the streams: a second `of` continues where the first left off.
    const streams = RandomStreams.seededStreams("42", "")
    const first = draws(streams.of("org_a/sandbox"), 2)
    expect([...first, ...draws(streams.of("org_a/sandbox"), 2)]).toEqual(a)
  })

  it.effect("leave draws to the ambient Random when the engine has no seed", () =>
    Effect.gen(function*() {
      const pinned: Random.Random = { nextDoubleUnsafe: () => 0, nextIntUnsafe: () => 0 }
      const id = yield* IdGenerator.newId("cus").pipe(RandomStreams.withStream("org_a/sandbox"), Effect.provideService(Random.Random, pinned))
      expect(id).toBe("cus_000000000000000000000000")
      const seeded = yield* IdGenerator.newId("cus").pipe(RandomStreams.withStream("org_a/sandbox"), Effect.provideService(Random.Random, pinned), Effect.provideService(RandomStreams.RandomStreams, RandomStreams.seededStreams("1", "")))
      expect(seeded).not.toBe(id)
    }))

  it.effect("make a timer draw from its organization's stream, whoever fires it", () => {
    const minted: Array<string> = []
    const handlers = Timers.layerTimerHandlers({ mint: () => Effect.map(IdGenerator.newId("cus"), (id) => void minted.push(id)) })
    return Effect.gen(function*() {
      yield* Timers.schedule("mint", 1000, {}, "org_a/sandbox")
      yield* Timers.schedule("mint", 1000, {}, "org_b/sandbox")
      yield* Timers.schedule("mint", 1000, {})
      // Fired from within org_b's stream, as a request of org_b's would.
      yield* Timers.fireDue(1000).pipe(RandomStreams.withStream("org_b/sandbox"))
      const expected = RandomStreams.seededStreams("9", "")
      const idOf = (key: string) => Effect.runSync(IdGenerator.newId("cus").pipe(Effect.provideService(Random.Random, expected.of(key))))
      expect(minted).toEqual([idOf("org_a/sandbox"), idOf("org_b/sandbox"), idOf(RandomStreams.rootStream)])
    }).pipe(Effect.provideService(RandomStreams.RandomStreams, RandomStreams.seededStreams("9", "")), Effect.provide(Layer.mergeAll(MemoryStore.layer, handlers)))
  })
})

describe("randomFromBytes", () => {
  it("draws 53-bit doubles in [0, 1) from the words its source fills, refilling when they run out", () => {
    let fills = 0
    const random = RandomStreams.randomFromBytes((words) => {
      fills++
      words.fill(0xffffffff)
    })
    const values = draws(random, 600)
    expect(values.every((v) => v < 1 && v > 0.999999)).toBe(true)
    expect(fills).toBe(2)
    let counter = 0
    const varied = RandomStreams.randomFromBytes((words) => words.forEach((_, i) => (words[i] = (counter++ * 2654435761) >>> 0)))
    expect(new Set(draws(varied, 100)).size).toBe(100)
  })
})

describe("ids minted at once", () => {
  it("are the ids as many calls of newPlainId mint, from the same draws, and leave the stream where they would", () => {
    const stream = (seed: string) => RandomStreams.seededStreams(seed, "").of("org_a/sandbox")
    const one = stream("ids")
    const byOne = Effect.runSync(Effect.forEach([1, 2, 3, 4, 5], () => IdGenerator.newPlainId("cus")).pipe(Effect.provideService(Random.Random, one)))
    const many = stream("ids")
    const atOnce = Effect.runSync(IdGenerator.newPlainIds("cus", 5).pipe(Effect.provideService(Random.Random, many)))
    expect(atOnce).toEqual(byOne)
    for (const id of atOnce) expect(id).toMatch(new RegExp(`^${IdGenerator.mintedIdSource}$`))
    expect(draws(many)).toEqual(draws(one))
    expect(Effect.runSync(IdGenerator.newPlainIds("cus", 0))).toEqual([])
  })
})

describe("a stream's position", () => {
  it("counts its draws, doubles and integers alike, and a rewind replays what followed it", () => {
    const streams = RandomStreams.seededStreams("42", "")
    const stream = streams.of("org_a/sandbox")
    draws(stream, 3)
    stream.nextIntUnsafe()
    const at = streams.position("org_a/sandbox")
    expect(at).toEqual({ salt: "", draws: 4 })
    const after = draws(stream, 5)
    streams.rewind("org_a/sandbox", at)
    expect(draws(streams.of("org_a/sandbox"), 5)).toEqual(after)
    expect(streams.position("org_a/sandbox")).toEqual({ salt: "", draws: 9 })
  })

  it("keeps a reseed's salt, and rewinds within the reseeded stream", () => {
    const streams = RandomStreams.seededStreams("42", "")
    streams.reseed("org_a/sandbox", "snp_imported")
    draws(streams.of("org_a/sandbox"), 2)
    const at = streams.position("org_a/sandbox")
    expect(at).toEqual({ salt: "", origin: "snp_imported", draws: 2 })
    const after = draws(streams.of("org_a/sandbox"))
    draws(streams.of("org_a/sandbox"), 7)
    streams.rewind("org_a/sandbox", at)
    expect(draws(streams.of("org_a/sandbox"))).toEqual(after)
  })

  it("of another engine salt starts a stream of its own, the same for each rewind to it", () => {
    const first = RandomStreams.seededStreams("42", "")
    draws(first.of("org_a/sandbox"), 3)
    const at = first.position("org_a/sandbox")
    const minted = draws(first.of("org_a/sandbox"))
    const restarted = RandomStreams.seededStreams("42", "17")
    restarted.rewind("org_a/sandbox", at)
    const anew = draws(restarted.of("org_a/sandbox"))
    expect(anew).not.toEqual(minted)
    expect(anew).not.toEqual(draws(RandomStreams.seededStreams("42", "17").of("org_a/sandbox")))
    restarted.rewind("org_a/sandbox", at)
    expect(draws(restarted.of("org_a/sandbox"))).toEqual(anew)
  })

  it("is not moved by a fresh generator, which gives the same draws at each call", () => {
    const streams = RandomStreams.seededStreams("42", "")
    const fresh = draws(streams.fresh("named"))
    expect(draws(streams.fresh("named"))).toEqual(fresh)
    expect(draws(streams.fresh("other"))).not.toEqual(fresh)
    expect(streams.held()).toEqual([])
  })
})
