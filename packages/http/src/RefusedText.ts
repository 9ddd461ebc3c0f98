/**
 * Text the API does not accept: a NUL character (U+0000) or an unpaired surrogate (half a pair, U+D800..U+DFFF
 * alone). PostgreSQL keeps neither in its text or jsonb columns, so a store on it would refuse such a row at the
 * commit while the memory store kept it; the edge refuses it in every request instead, the same on every store
 * (docs/decisions.md, "Text the API refuses"). A JSON body (Write.ts, `readJsonBody`) names each string that holds it
 * in a 400 VALIDATION_ERROR's errors[]; the query and the path parameters are checked by the endpoint run (Router.ts)
 * and by the operator surface's readers of them (Operator.ts).
 */
import { Problem } from "@fos/core"
import type { ErrorEntry } from "@fos/contract"

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
    for (let p = place; p !== undefined; p = p.parent) tokens.push(`/${Problem.pointerToken(p.key)}`)
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

/**
 * The problem for a request's query or path parameters (decoded, by name) when one holds refused text: a 400
 * VALIDATION_ERROR naming each, as any other bad value of the part is; undefined when none does. A query whose
 * percent-encoding is not UTF-8 (`%FF`, or `%ED%A0%80`, a lone surrogate's bytes) is 400 BAD_REQUEST, as such a
 * path is (Edge.ts), where the router would have handed the value on undecoded: `url` is the request's, for that
 * check.
 */
export const refusedParameters = (
  values: Readonly<Record<string, unknown>>,
  part: "query" | "path",
  url?: string
): Problem.ApiError | undefined => {
  let errors: Array<ErrorEntry> | undefined
  for (const name in values) {
    const value = values[name]
    for (const one of Array.isArray(value) ? value : [value]) {
      if (typeof one !== "string") continue
      const detail = refusedTextOf(one)
      if (detail !== undefined) {
        ;(errors ??= []).push({ pointer: `/${Problem.pointerToken(name)}`, detail })
        break
      }
    }
    const nameDetail = refusedTextOf(name)
    if (nameDetail !== undefined) (errors ??= []).push({ pointer: "", detail: `has a parameter name that ${nameDetail}` })
  }
  if (url !== undefined && nonAsciiEscape.test(url) && !isUtf8Query(url)) return Problem.apiError("BAD_REQUEST", "The request query is not valid percent-encoding.")
  return errors === undefined ? undefined : Problem.invalidRequest(errors, part)
}

/** A percent-encoded byte past ASCII, which only a UTF-8 sequence may hold. */
const nonAsciiEscape = /%[89a-fA-F][0-9a-fA-F]/

/** Whether every name and value of `url`'s query that holds a byte past ASCII decodes from it as UTF-8. */
const isUtf8Query = (url: string): boolean => {
  const q = url.indexOf("?")
  if (q < 0) return true
  const hash = url.indexOf("#", q)
  for (const pair of url.slice(q + 1, hash < 0 ? undefined : hash).split("&")) {
    if (!nonAsciiEscape.test(pair)) continue
    try {
      decodeURIComponent(pair.replaceAll("+", " "))
    } catch {
      return false
    }
  }
  return true
}
