/**
 * The assertions the store contract's cases make, with Vitest's meaning of each matcher it uses, so that the cases
 * fail the same way under any runner: a case throws an `Error` saying what differs, and its runner reports it. The
 * suite cannot take a runner's `expect`: node:test has none, and the cases must not import a test framework.
 */

/** Why a value did not match: one line, with JSON-like renderings of both sides. */
export class ContractAssertion extends Error {
  override readonly name = "ContractAssertion"
}

/** A value as a message shows it. */
export const render = (value: unknown): string => {
  if (value === undefined) return "undefined"
  const seen = new WeakSet<object>()
  try {
    const text = JSON.stringify(value, (_key, v: unknown) => {
      if (typeof v === "bigint") return `${v}n`
      if (typeof v === "object" && v !== null) {
        if (seen.has(v)) return "[circular]"
        seen.add(v)
        if (v instanceof Error) return { ...v, name: v.name, message: v.message }
      }
      return v
    })
    return text === undefined ? String(value) : text.length > 2000 ? `${text.slice(0, 2000)}…` : text
  } catch {
    return String(value)
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null

/** The enumerable own keys of `v` whose value is not undefined (`toEqual` treats a member set to undefined as absent). */
const definedKeys = (v: Record<string, unknown>): Array<string> => Object.keys(v).filter((k) => v[k] !== undefined)

/** Vitest's `toEqual`: structural equality that ignores undefined members and prototypes. */
export const equals = (a: unknown, b: unknown): boolean => {
  if (Object.is(a, b)) return true
  if (!isObject(a) || !isObject(b)) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime()
  if (a instanceof Map && b instanceof Map) {
    if (a.size !== b.size) return false
    for (const [k, v] of a) if (!b.has(k) || !equals(v, b.get(k))) return false
    return true
  }
  if (a instanceof Set && b instanceof Set) {
    if (a.size !== b.size) return false
    for (const v of a) if (![...b].some((w) => equals(v, w))) return false
    return true
  }
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => equals(v, b[i]))
  const keys = definedKeys(a)
  const other = definedKeys(b)
  return keys.length === other.length && keys.every((k) => Object.hasOwn(b, k) && equals(a[k], b[k]))
}

/** Vitest's `toMatchObject`: every member `expected` names matches, recursively; arrays match element by element. */
export const matches = (actual: unknown, expected: unknown): boolean => {
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && actual.length === expected.length && expected.every((v, i) => matches(actual[i], v))
  }
  if (!isObject(expected) || expected instanceof Date || expected instanceof Map || expected instanceof Set) return equals(actual, expected)
  if (!isObject(actual)) return false
  return Object.keys(expected).every((k) => k in actual && matches(actual[k], expected[k]))
}

export interface Matchers {
  readonly toBe: (expected: unknown) => void
  readonly toEqual: (expected: unknown) => void
  readonly toMatchObject: (expected: unknown) => void
  readonly toBeUndefined: () => void
  readonly toBeDefined: () => void
  readonly toBeInstanceOf: (type: abstract new(...args: never) => unknown) => void
  readonly toHaveLength: (length: number) => void
  readonly toBeGreaterThan: (n: number | bigint) => void
  readonly toBeGreaterThanOrEqual: (n: number | bigint) => void
  readonly toBeLessThan: (n: number | bigint) => void
}

/** `expect(actual).toEqual(expected)`, as in Vitest; `what` names the value in the message. */
export const expect = (actual: unknown, what?: string): Matchers => {
  const check = (ok: boolean, expectation: string, ...expected: [] | [unknown]) => {
    if (ok) return
    const wanted = expected.length === 0 ? "" : ` ${render(expected[0])}`
    throw new ContractAssertion(`${what === undefined ? "" : `${what}: `}expected ${render(actual)} ${expectation}${wanted}`)
  }
  const number = (n: unknown): n is number | bigint => typeof n === "number" || typeof n === "bigint"
  return {
    toBe: (expected) => check(Object.is(actual, expected), "to be", expected),
    toEqual: (expected) => check(equals(actual, expected), "to equal", expected),
    toMatchObject: (expected) => check(matches(actual, expected), "to match", expected),
    toBeUndefined: () => check(actual === undefined, "to be undefined"),
    toBeDefined: () => check(actual !== undefined, "to be defined"),
    toBeInstanceOf: (type) => check(actual instanceof type, `to be an instance of ${type.name}`),
    toHaveLength: (length) =>
      check(isObject(actual) && (actual as { length?: unknown }).length === length || typeof actual === "string" && actual.length === length, "to have length", length),
    toBeGreaterThan: (n) => check(number(actual) && actual > n, "to be greater than", n),
    toBeGreaterThanOrEqual: (n) => check(number(actual) && actual >= n, "to be at least", n),
    toBeLessThan: (n) => check(number(actual) && actual < n, "to be less than", n)
  }
}
