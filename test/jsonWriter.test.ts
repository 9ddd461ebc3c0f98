/**
 * The compiled JSON writers (packages/http/src/JsonWriter.ts) are a faster way to what Effect's encoder and
 * `JSON.stringify` give, never a different one. Checked on every response schema of the API that gets a writer:
 * on values generated from the schema, and on the same values spoiled (extra fields, wrong types, missing fields).
 */
import { Api } from "@fos/contract"
import { Arbitrary, Effect, Exit, Schema, type SchemaAST } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { compileJsonWriter as compile } from "../packages/http/src/JsonWriter.ts"

const responseSchemas = Object.values(Api.groups).flatMap((group) =>
  Object.values(group.endpoints).flatMap((endpoint) =>
    ([...endpoint.success] as ReadonlyArray<Schema.Top>).map((schema) => ({ name: `${group.identifier}.${endpoint.identifier}`, schema }))
  )
)
const writtenBy = (generate: boolean) => responseSchemas.flatMap(({ name, schema }) => {
  const write = compile(schema.ast, { generate })
  return write === undefined ? [] : [{ name, schema, write, encode: Schema.encodeUnknownExit(schema as Schema.Codec<unknown, unknown>) }]
})

/** What a response carries without the writer: the encoder's value as JSON, or undefined when it does not encode. */
const viaEncoder = (encode: (value: unknown) => Exit.Exit<unknown, unknown>, value: unknown): string | undefined => {
  const exit = encode(value)
  return Exit.isSuccess(exit) ? JSON.stringify(exit.value) : undefined
}

/** A copy of `value` with one spot changed by `change`, chosen by `pick` among its objects and arrays' entries. */
const spoil = (value: unknown, pick: number, change: (old: unknown) => unknown): unknown => {
  const spots: Array<{ readonly parent: Record<string | number, unknown>; readonly key: string | number }> = []
  const copy = structuredClone(value)
  const walk = (node: unknown) => {
    if (typeof node !== "object" || node === null) return
    for (const key of Object.keys(node)) {
      spots.push({ parent: node as Record<string, unknown>, key: Array.isArray(node) ? Number(key) : key })
      walk((node as Record<string, unknown>)[key])
    }
  }
  walk(copy)
  if (spots.length === 0) return change(copy)
  const { parent, key } = spots[pick % spots.length]!
  const next = change(parent[key])
  if (next === undefined) delete parent[key]
  else parent[key] = next
  return copy
}

// Both forms of a writer: the generated function, and the closures a runtime that forbids generating code gets.
describe.each([
  { form: "generated", generate: true },
  { form: "closures", generate: false }
])("compiled JSON writers ($form)", ({ generate }) => {
  const written = writtenBy(generate)
  const compileJsonWriter = (ast: SchemaAST.AST) => compile(ast, { generate })

  it("cover the cheapest endpoint, users/me, and only schemas whose encoding is plain JSON", () => {
    expect(written.map((w) => w.name)).toContain("portal.me")
    // The generated form really is generated, not the closures it falls back to.
    for (const { name, write } of written) expect(String(write).includes("let o = "), name).toBe(generate)
    expect(compileJsonWriter(Schema.Struct({ at: Schema.Date }).ast)).toBeUndefined()
    expect(compileJsonWriter(Schema.Struct({ n: Schema.NumberFromString }).ast)).toBeUndefined()
    expect(compileJsonWriter(Schema.Struct({ s: Schema.String.check(Schema.isMinLength(1)) }).ast)).toBeUndefined()
    expect(compileJsonWriter(Schema.Record(Schema.String, Schema.String).ast)).toBeUndefined()
    expect(compileJsonWriter(Schema.Union([Schema.Struct({ a: Schema.String }), Schema.Null]).ast)).toBeUndefined()
  })

  it("write what the encoder and JSON.stringify write, for values of each schema", async () => {
    for (const { name, schema, write, encode } of written) {
      const values = await Effect.runPromise(Arbitrary.sampleEffect(Arbitrary.schema(schema as Schema.Codec<unknown, unknown>), { count: 200, seed: name }))
      for (const value of values) {
        const expected = viaEncoder(encode, value)
        expect(expected, name).toBeDefined()
        expect(write(value), name).toBe(expected)
      }
    }
  })

  it("on a spoiled value either write the encoder's text or leave it to the encoder", async () => {
    const changes: ReadonlyArray<(old: unknown) => unknown> = [
      () => undefined,
      () => null,
      () => 42,
      () => "text",
      () => true,
      () => [],
      () => ({}),
      (old) => (typeof old === "object" && old !== null ? { ...old, extra: "not declared" } : old),
      // The same fields in another order: the text is still in the schema's order.
      (old) => (typeof old === "object" && old !== null && !Array.isArray(old) ? Object.fromEntries(Object.entries(old).reverse()) : old)
    ]
    for (const { name, schema, write, encode } of written) {
      const values = await Effect.runPromise(Arbitrary.sampleEffect(Arbitrary.schema(schema as Schema.Codec<unknown, unknown>), { count: 20, seed: name }))
      fc.assert(
        fc.property(fc.constantFrom(...values), fc.nat(), fc.constantFrom(...changes), (value, pick, change) => {
          const spoiled = spoil(value, pick, change)
          const text = write(spoiled)
          if (text !== undefined) expect(text, name).toBe(viaEncoder(encode, spoiled))
        }),
        { numRuns: 300 }
      )
    }
  })

  it("escape strings as JSON.stringify does", () => {
    const write = compileJsonWriter(Schema.Struct({ s: Schema.String }).ast)!
    for (const text of ["", "plain", `quote "`, `back\\slash`, "tab\tnew\nline\u0000nul\u001f", "emoji 😀", "lone \ud800 surrogate", "é ü ß ✓", "</script>"]) {
      expect(write({ s: text })).toBe(JSON.stringify({ s: text }))
    }
  })

  it("write a value in the schema's own shape as JSON.stringify does, and any other in the schema's order", () => {
    const schema = Schema.Struct({ id: Schema.String, note: Schema.optionalKey(Schema.String), n: Schema.Number })
    const write = compileJsonWriter(schema.ast)!
    const encode = Schema.encodeUnknownExit(schema as Schema.Codec<unknown, unknown>)
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [{ id: "a", n: 1 }, `{"id":"a","n":1}`],
      [{ n: 1, id: "a" }, `{"id":"a","n":1}`],
      [{ n: 1, note: "x", id: "a" }, `{"id":"a","note":"x","n":1}`],
      // Not a plain object: a field on the prototype counts for the encoder, so it is written.
      [Object.assign(Object.create({ note: "inherited" }), { id: "a", n: 1 }), `{"id":"a","note":"inherited","n":1}`],
      // A field that is there but not enumerable counts for the encoder too.
      [Object.defineProperty({ id: "a", n: 1 }, "note", { value: "hidden", enumerable: false }), `{"id":"a","note":"hidden","n":1}`]
    ]
    for (const [value, text] of cases) {
      expect(write(value)).toBe(text)
      expect(viaEncoder(encode, value)).toBe(text)
    }
  })

  it("put the brace and the commas right whichever optional fields are there", () => {
    const schema = Schema.Struct({
      a: Schema.optionalKey(Schema.String),
      b: Schema.optionalKey(Schema.Number),
      c: Schema.String,
      d: Schema.optionalKey(Schema.Struct({ e: Schema.optionalKey(Schema.Boolean) }))
    })
    const write = compileJsonWriter(schema.ast)!
    const encode = Schema.encodeUnknownExit(schema as Schema.Codec<unknown, unknown>)
    for (const a of [undefined, "x"]) {
      for (const b of [undefined, 1]) {
        for (const d of [undefined, {}, { e: true }]) {
          const value = { ...(a === undefined ? {} : { a }), ...(b === undefined ? {} : { b }), c: "c", ...(d === undefined ? {} : { d }) }
          expect(write(value)).toBe(viaEncoder(encode, value))
        }
      }
    }
    const onlyOptional = compileJsonWriter(Schema.Struct({ a: Schema.optionalKey(Schema.String), b: Schema.optionalKey(Schema.String) }).ast)!
    expect([onlyOptional({}), onlyOptional({ b: "y" }), onlyOptional({ a: "x", b: "y" })]).toEqual([`{}`, `{"b":"y"}`, `{"a":"x","b":"y"}`])
  })

  it("leave out fields the schema does not declare, as the encoder does", () => {
    const write = compileJsonWriter(Schema.Struct({ id: Schema.String, note: Schema.optionalKey(Schema.NullOr(Schema.String)) }).ast)!
    expect(write({ id: "a", secret: "internal" })).toBe(`{"id":"a"}`)
    expect(write({ id: "a", note: null })).toBe(`{"id":"a","note":null}`)
    expect(write({ id: "a", note: undefined })).toBeUndefined()
    expect(write({ note: "n" })).toBeUndefined()
  })
})
