/**
 * Where the values fos invents come from: ids, secrets, addresses and every number derived from them.
 *
 * Everything draws from Effect's `Random`. Without a seed that is the engine's source of randomness, which must be a
 * cryptographic one where secrets are minted (`randomFromBytes` over `crypto.getRandomValues`, which the runtimes
 * give: the core uses no runtime global). With a seed (`fos serve --random-seed`, `createEngine({ randomSeed })`),
 * each organization's environment draws from a stream of its own, derived from the seed and its scope
 * (`scopeOf`), so one suite's ids never depend on another suite's traffic. The operator surface's calls draw from a
 * stream of their own, and so does the demo organization `fos serve` creates on a first start without a seed file:
 * the same operator calls then mint the same ids and keys on a server (which made the demo organization first) and
 * on an embedded engine (which made none). What is left (the seed file, a request not yet authenticated, a host's
 * own calls) draws from the root stream. The streams are ISAAC generators (Effect's `Random.withSeed`), kept in
 * memory for the life of the engine.
 *
 * A seeded engine opened on a store that already holds organizations (a restart on PGlite or PostgreSQL, a second
 * process on one database) salts its streams with the store's sequence: the streams of its first run would mint the
 * ids that run already stored.
 *
 * A snapshot records where its sandbox's stream stands (`position`: how many draws it has made since it began), and
 * a restore puts the stream back there (`rewind`), so that the requests a test sends after a restore mint the ids
 * they minted the first time, whatever ran before. What a restore does not put back is minted from a stream a restore
 * never moves (`lastingStream`): the ids of snapshots and forks, which outlive the sandbox's rows. A fork made with a
 * stream name (`namedStream`) mints its organization, user and key from a generator of the seed, its parent and the
 * name alone, and its sandbox's streams start from the seed: its world and its ids depend on nothing else.
 *
 * A draw that must not depend on what was drawn before it (which requests a sandbox fault's probability picks,
 * simulate/Faults.ts) is a keyed draw instead (`keyedDouble`): with a seed, SHA-256 of the seed and a key that names
 * the draw, so it moves no stream (adding chaos to a run changes none of its ids) and needs no salt (the key names
 * a row the store holds once, so a restart draws what the first run would have).
 */
import { sha256 } from "@noble/hashes/sha2.js"
import { utf8ToBytes } from "@noble/hashes/utils.js"
import { Context, Effect, Random } from "effect"

/**
 * Where a stream stands (`RandomStreamsService.position`): the engine salt it was made under, the salt a reseed gave it
 * (`origin`, none for a stream as the seed made it), and how many draws it has made.
 */
export interface StreamPosition {
  readonly salt: string
  readonly origin?: string
  readonly draws: number
}

/** The seeded streams of an engine. */
export interface RandomStreamsService {
  /** The stream of `key` (a scope, or `rootStream`): the same key, the same stream, for the life of the engine. */
  readonly of: (key: string) => Random.Random
  /** A number in [0, 1) decided by the seed and `key` alone (unsalted: the same on every run and every process). */
  readonly keyed: (key: ReadonlyArray<string | number>) => number
  /**
   * Starts the stream of `key` anew from the seed, the engine's salt, `key` and `salt`: a sandbox that takes in rows
   * another engine minted from the same seed (an imported snapshot, Snapshots.ts) would otherwise mint their ids
   * again.
   */
  readonly reseed: (key: string, salt: string) => void
  /**
   * Drops the stream of `key`, for a scope that no longer exists (a deleted fork's, Forks.ts): kept, each would stay
   * for the life of the engine (an ISAAC generator, about 4.6 KB). A key used again afterwards starts its stream anew
   * from the seed, which mints its first ids again: only a scope whose rows are all gone may be forgotten (a fork of
   * a stream name made again wants exactly that), and only once its end has committed (`Store.afterCommit`).
   */
  readonly forget: (key: string) => void
  /** Where the stream of `key` stands now (`StreamPosition`). */
  readonly position: (key: string) => StreamPosition
  /**
   * Puts the stream of `key` back at `position`: made again from the seed and advanced by its draws. A position of
   * another engine salt (a snapshot taken before a restart, or by another process sharing the store) names draws of a
   * stream this engine does not hold, which may have minted rows still stored: the stream starts anew instead, salted
   * with the position, so that each restore of that snapshot mints the same ids again.
   */
  readonly rewind: (key: string, position: StreamPosition) => void
  /** A generator of `key` made from the seed now and never kept: the same draws on every call. */
  readonly fresh: (key: string) => Random.Random
  /** The keys of the streams held, in the order first drawn from: a diagnostic (a deleted fork's must be gone). */
  readonly held: () => ReadonlyArray<string>
}

/** The key of the stream of work that belongs to no organization. */
export const rootStream = ""

/** The keys of the operator surface's stream and of the demo organization's making (no scope has them: a scope holds a `/`). */
export const operatorStream = "operator"
export const demoStream = "demo"

/** The engine's seeded streams; undefined when the engine has no seed (every draw then uses the ambient `Random`). */
export const RandomStreams = Context.Reference<RandomStreamsService | undefined>("fos/RandomStreams", { defaultValue: () => undefined })

/** An ISAAC generator seeded with `seed` (the one `Random.withSeed` provides). */
const isaac = (seed: string): Random.Random => Effect.runSync(Random.withSeed(Random.Random.useSync((random) => random), seed))

/** A stream that counts its draws: each of `nextDoubleUnsafe` and `nextIntUnsafe` is one double of the generator. */
interface Counted {
  readonly random: Random.Random
  readonly origin: string | undefined
  draws: number
}

/** The generator of `seed`, its first `skip` draws made (a rewound stream), counting what it draws after. */
const counted = (seed: string, origin: string | undefined, skip: number): Counted => {
  const inner = isaac(seed)
  for (let i = 0; i < skip; i++) inner.nextDoubleUnsafe()
  const stream: Counted = {
    origin,
    draws: skip,
    random: {
      nextDoubleUnsafe: () => {
        stream.draws++
        return inner.nextDoubleUnsafe()
      },
      nextIntUnsafe: () => {
        stream.draws++
        return inner.nextIntUnsafe()
      }
    }
  }
  return stream
}

/**
 * The streams of `seed`, salted with `salt` ("" for a store's first run). Each stream's seed is the JSON of
 * (seed, salt, key), so no two keys can spell the same seed.
 */
export const seededStreams = (seed: string, salt: string): RandomStreamsService => {
  const streams = new Map<string, Counted>()
  const seedOf = (key: string, origin: string | undefined) => JSON.stringify(origin === undefined ? [seed, salt, key] : [seed, salt, key, origin])
  const streamOf = (key: string): Counted => {
    let stream = streams.get(key)
    if (stream === undefined) {
      stream = counted(seedOf(key, undefined), undefined, 0)
      streams.set(key, stream)
    }
    return stream
  }
  return {
    keyed: (key) => doubleOf(sha256(utf8ToBytes(JSON.stringify([seed, ...key])))),
    of: (key) => streamOf(key).random,
    reseed: (key, more) => {
      streams.set(key, counted(seedOf(key, more), more, 0))
    },
    position: (key) => {
      const stream = streamOf(key)
      return { salt, ...(stream.origin === undefined ? {} : { origin: stream.origin }), draws: stream.draws }
    },
    rewind: (key, position) => {
      if (position.salt === salt) streams.set(key, counted(seedOf(key, position.origin), position.origin, position.draws))
      else {
        const origin = JSON.stringify(["rewound", position.salt, position.origin ?? null, position.draws])
        streams.set(key, counted(seedOf(key, origin), origin, 0))
      }
    },
    fresh: (key) => isaac(JSON.stringify([seed, salt, "fresh", key])),
    forget: (key) => {
      streams.delete(key)
    },
    held: () => [...streams.keys()]
  }
}

/** Starts the stream of `key` anew with `salt` (`RandomStreamsService.reseed`), on a seeded engine; nothing otherwise. */
export const reseed = (key: string, salt: string): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    fiber.getRef(RandomStreams)?.reseed(key, salt)
    return Effect.void
  })

/** Where the stream of `key` stands, on a seeded engine; undefined otherwise. */
export const positionOf = (key: string): Effect.Effect<StreamPosition | undefined> =>
  Effect.withFiber((fiber) => Effect.succeed(fiber.getRef(RandomStreams)?.position(key)))

/** Puts the stream of `key` back at `position` (`RandomStreamsService.rewind`), on a seeded engine; nothing otherwise. */
export const rewind = (key: string, position: StreamPosition): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    fiber.getRef(RandomStreams)?.rewind(key, position)
    return Effect.void
  })

/**
 * The key of the stream of a scope's ids that outlive its rows (its snapshots', its forks' organizations): a restore
 * rewinds the scope's stream, never this one, so a save taken after a restore never takes an id a save already holds.
 */
export const lastingStream = (scope: string): string => `lasting:${scope}`

/** The key of the generator a fork made with a stream name mints its organization from (`fresh`). */
export const namedStream = (parent: string, name: string): string => JSON.stringify(["fork", parent, name])

/**
 * Runs `effect` drawing from a generator of `key` made from the seed now and never kept (`fresh`), when the engine is
 * seeded; unchanged otherwise.
 */
export const withFreshStream = (key: string) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    const streams = fiber.getRef(RandomStreams)
    return streams === undefined ? effect : Effect.provideService(effect, Random.Random, streams.fresh(key))
  })

/** Drops the stream of `key` (`RandomStreamsService.forget`), on a seeded engine; nothing otherwise. */
export const forget = (key: string): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    fiber.getRef(RandomStreams)?.forget(key)
    return Effect.void
  })

/** 53 bits of the first eight of `bytes` as a number in [0, 1), as `randomFromBytes` makes one from two words. */
const doubleOf = (bytes: Uint8Array): number => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return ((view.getUint32(0) & 0x1fffff) * 4294967296 + view.getUint32(4)) / 9007199254740992
}

/**
 * A number in [0, 1) for the draw `key` names (strings and numbers, such as a fault's id and the number of the
 * request it draws for): on a seeded engine decided by the seed and the key alone, whatever was drawn before and
 * whichever process draws; otherwise drawn from the ambient `Random`.
 */
export const keyedDouble = (key: ReadonlyArray<string | number>): Effect.Effect<number> =>
  Effect.withFiber((fiber) => {
    const streams = fiber.getRef(RandomStreams)
    return streams === undefined ? Random.next : Effect.succeed(streams.keyed(key))
  })

/**
 * Runs `effect` drawing from the stream of `scope` (the root stream when undefined), when the engine is seeded;
 * unchanged otherwise.
 */
export const withStream = (scope: string | undefined) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    const streams = fiber.getRef(RandomStreams)
    return streams === undefined ? effect : Effect.provideService(effect, Random.Random, streams.of(scope ?? rootStream))
  })

/** How many 32-bit words a `randomFromBytes` source fetches at once: one call of the source per 512 draws. */
const poolWords = 1024

/**
 * A `Random` over a source of random bytes, such as `(words) => crypto.getRandomValues(words)`: the source fills
 * a pool, and each draw takes 53 bits of it.
 */
export const randomFromBytes = (fill: (words: Uint32Array) => void): Random.Random => {
  const pool = new Uint32Array(poolWords)
  let next = poolWords
  const word = (): number => {
    if (next === poolWords) {
      fill(pool)
      next = 0
    }
    return pool[next++]!
  }
  const nextDoubleUnsafe = () => ((word() & 0x1fffff) * 4294967296 + word()) / 9007199254740992
  return {
    nextDoubleUnsafe,
    nextIntUnsafe: () => Math.floor(nextDoubleUnsafe() * (Number.MAX_SAFE_INTEGER - Number.MIN_SAFE_INTEGER + 1)) + Number.MIN_SAFE_INTEGER
  }
}
