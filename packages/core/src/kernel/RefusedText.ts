/**
 * Text the API does not accept: a NUL character (U+0000) or an unpaired surrogate (half a pair, U+D800..U+DFFF
 * alone). PostgreSQL keeps neither in its text or jsonb columns, so a store on it would refuse such a row at the
 * commit while the memory store kept it; the engine refuses it wherever text comes in instead, the same on every
 * store (docs/decisions.md, "Text the API refuses"): a request (packages/http/src/RefusedText.ts, which checks its
 * body, query and path), a snapshot file and a seed (tenancy/Seed.ts).
 */
import type { ErrorEntry } from "@fos/contract"
import { pointerToken } from "./Problem.ts"

/**
 * Whether a JSON text may hold refused text: an escape of NUL or of a surrogate. Valid JSON cannot hold a NUL
 * character itself (a control character must be escaped), and UTF-8 decoding never gives a lone surrogate, so only
 * an escape brings one in; a match (a surrogate pair, or an escaped backslash before "u0000") is then confirmed on
 * the parsed value. One scan of the text, which fails at once on a body without a `\u` escape.
 */
export const mayHoldRefusedText = (text: string): boolean => text.includes("\\u") && /\\u(?:0000|[dD][89a-fA-F])/.test(text)

const suspect = /[\0\ud800-\udfff]/
const nul = /\0/
const unpaired = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** What is wrong with a string, or undefined when the API accepts it. */
export const refusedTextOf = (s: string): string | undefined =>
  !suspect.test(s)
    ? undefined
    : nul.test(s)
    ? "holds a NUL character (U+0000), which the API does not accept"
    : unpaired.test(s)
    ? "holds an unpaired surrogate (half a UTF-16 surrogate pair), which the API does not accept"
    : undefined

/**
 * An errors[] entry per string of a parsed JSON value that holds refused text, at any depth: a value by its own
 * pointer, a member name by its object's (the name itself is not echoed). Walked without recursion, so the deepest
 * body JSON.parse accepts is walked too, and each object once, so a value given to the embedded engine may hold
 * cycles.
 */
export const refusedTextErrors = (value: unknown): Array<ErrorEntry> => {
  const errors: Array<ErrorEntry> = []
  // Each place as its parent's and its own key, its pointer spelt out only for an error.
  interface Place {
    readonly parent: Place | undefined
    readonly key: string
  }
  const pointerOf = (place: Place | undefined): string => {
    const tokens: Array<string> = []
    for (let p = place; p !== undefined; p = p.parent) tokens.push(`/${pointerToken(p.key)}`)
    return tokens.reverse().join("")
  }
  const stack: Array<readonly [unknown, Place | undefined]> = [[value, undefined]]
  const seen = new Set<object>()
  while (stack.length > 0) {
    const [v, place] = stack.pop()!
    if (typeof v === "string") {
      const detail = refusedTextOf(v)
      if (detail !== undefined) errors.push({ pointer: pointerOf(place), detail })
      continue
    }
    if (typeof v !== "object" || v === null || seen.has(v)) continue
    seen.add(v)
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], { parent: place, key: String(i) }])
      continue
    }
    const keys = Object.keys(v)
    for (let i = keys.length - 1; i >= 0; i--) stack.push([(v as Record<string, unknown>)[keys[i]!], { parent: place, key: keys[i]! }])
    for (const key of keys) {
      const detail = refusedTextOf(key)
      if (detail !== undefined) errors.push({ pointer: pointerOf(place), detail: `has a member name that ${detail}` })
    }
  }
  return errors
}
