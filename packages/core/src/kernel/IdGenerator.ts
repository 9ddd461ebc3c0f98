/**
 * The id generator: the opaque part of ids fos mints is 24 characters of lowercase base32 from Effect's `Random`,
 * so a seeded `Random` gives the same ids run after run.
 */
import type { IdPrefix, IdSchemas } from "@fos/contract"
import { Effect, Random } from "effect"

const base32 = "0123456789abcdefghjkmnpqrstvwxyz"
const hex = "0123456789abcdef"

/** `n` characters drawn from `alphabet` with Effect's `Random`. */
export const randomString = (alphabet: string, n: number): Effect.Effect<string> =>
  Effect.gen(function*() {
    let out = ""
    for (let i = 0; i < n; i++) out += alphabet[yield* Random.nextIntBetween(0, alphabet.length - 1)]
    return out
  })

/**
 * `n` base32 characters: six characters from each 30-bit draw, so an id costs four draws of `Random` instead of
 * twenty-four (ids are minted on every write).
 */
const randomBase32 = (n: number): Effect.Effect<string> =>
  Effect.gen(function*() {
    let out = ""
    while (out.length < n) {
      let bits = yield* Random.nextIntBetween(0, 2 ** 30 - 1)
      for (let j = 0; j < 6 && out.length < n; j++) {
        out += base32[bits & 31]
        bits >>>= 5
      }
    }
    return out
  })

/**
 * An id this module mints, as a whole word of a text (a regular expression's source): a prefix of 2 to 5 lower-case
 * letters, `_`, and 24 characters of its base32 (`newId`, `newPlainId`, and the signing roster's ids, drawn from the
 * same alphabet). What a fork finds in a world's rows to give each a new one (Forks.ts): the form alone says it is an
 * id, whatever its prefix, so no list of prefixes has to follow every module that mints one.
 */
export const mintedIdSource = `\\b[a-z]{2,5}_[${base32}]{24}\\b`

/** Mints a new id of `prefix`. */
export const newId = <P extends IdPrefix>(prefix: P): Effect.Effect<typeof IdSchemas[P]["Type"]> =>
  Effect.map(randomBase32(24), (opaque) => `${prefix}_${opaque}` as typeof IdSchemas[P]["Type"])

/** `n` lowercase hex characters, for secrets and trace ids. */
export const randomHex = (n: number): Effect.Effect<string> => randomString(hex, n)

/** Mints an id of a resource the spec gives no prefix (a quote option): `<prefix>_` and 24 base32 characters. */
export const newPlainId = (prefix: string): Effect.Effect<string> => Effect.map(randomBase32(24), (opaque) => `${prefix}_${opaque}`)

/**
 * `count` ids of `prefix` at once, as `count` calls of `newPlainId` mint them (the same draws of `Random`, in the same
 * order), in one step: a fork mints an id for every id of a world (Forks.ts).
 */
export const newPlainIds = (prefix: string, count: number): Effect.Effect<ReadonlyArray<string>> =>
  Effect.withFiber((fiber) => {
    const random = fiber.getRef(Random.Random)
    const ids: Array<string> = []
    for (let i = 0; i < count; i++) {
      let out = ""
      while (out.length < 24) {
        // `Random.nextIntBetween(0, 2 ** 30 - 1)`, as `randomBase32` draws it.
        let bits = Math.floor(random.nextDoubleUnsafe() * 2 ** 30)
        for (let j = 0; j < 6 && out.length < 24; j++) {
          out += base32[bits & 31]
          bits >>>= 5
        }
      }
      ids.push(`${prefix}_${out}`)
    }
    return Effect.succeed(ids)
  })
