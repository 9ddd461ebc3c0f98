/**
 * Representation rule 3 in the tests: an optional field with no value is omitted, never null. `expectWire` is
 * `toMatchObject` where a member expected `undefined` must be absent from the body (toMatchObject alone would ask
 * for the key to be there).
 */
import { expect } from "vitest"

const absentKeys = (value: unknown, shape: unknown, path: string): void => {
  if (shape === null || typeof shape !== "object" || Array.isArray(shape)) return
  for (const [key, expected] of Object.entries(shape)) {
    const member = (value as Record<string, unknown> | null | undefined)?.[key]
    if (expected === undefined) expect(value, `${path}${key} must be absent`).not.toHaveProperty([key])
    else absentKeys(member, expected, `${path}${key}.`)
  }
}

const present = (shape: unknown): unknown => {
  if (shape === null || typeof shape !== "object" || Array.isArray(shape)) return shape
  if (Object.getPrototypeOf(shape) !== Object.prototype) return shape
  return Object.fromEntries(Object.entries(shape).filter(([, v]) => v !== undefined).map(([k, v]) => [k, present(v)]))
}

export const expectWire = (value: unknown, shape: Record<string, unknown>): void => {
  absentKeys(value, shape, "")
  expect(value).toMatchObject(present(shape) as Record<string, unknown>)
}

/**
 * Every path in a body that holds null, as `a.b[0].c` with indexes written `[]`, so the paths of a list compare
 * with the nullable fields docs/decisions.md lists ("Null on the wire").
 */
export const nullPaths = (value: unknown, path = ""): Array<string> => {
  if (value === null) return [path]
  if (typeof value !== "object") return []
  if (Array.isArray(value)) return value.flatMap((v) => nullPaths(v, `${path}[]`))
  return Object.entries(value).flatMap(([k, v]) => nullPaths(v, path === "" ? k : `${path}.${k}`))
}
