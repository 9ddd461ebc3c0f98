/**
 * The text the API refuses (core's kernel/RefusedText.ts: a NUL character, an unpaired surrogate) in a request's
 * parts: a JSON body (Write.ts, `readJsonBody`) names each string that holds it in a 400 VALIDATION_ERROR's
 * errors[]; the query and the path parameters are checked by the endpoint run (Router.ts) and by the operator
 * surface's readers of them (Operator.ts).
 */
import { Problem, RefusedText } from "@fos/core"
import type { ErrorEntry } from "@fos/contract"

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
      const detail = RefusedText.refusedTextOf(one)
      if (detail !== undefined) {
        ;(errors ??= []).push({ pointer: `/${Problem.pointerToken(name)}`, detail })
        break
      }
    }
    const nameDetail = RefusedText.refusedTextOf(name)
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
