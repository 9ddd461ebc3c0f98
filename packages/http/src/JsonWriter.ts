/**
 * A response schema compiled into a JSON writer: the JSON text of a value, written in one pass.
 *
 * What a response needs is `JSON.stringify(Schema.encode(value))`. For the schemas fos answers with, the encode
 * changes nothing but leaves out what the schema does not declare: they are plain structs, arrays, strings,
 * numbers, booleans, literals and null, with no transformations. Effect's encoder is a general interpreter that
 * builds a copy of the value to hand to `JSON.stringify`; on the cheapest endpoint that copy and its serialisation
 * were about a fifth of the server's CPU per request (docs/performance.md). A writer compiled from the same schema
 * writes the declared fields, in the schema's order, straight to text.
 *
 * It takes only the schema nodes whose encoding is the identity and which carry no checks, so it never has to
 * decide anything the schema could decide differently. A schema with anything else gets no writer
 * (`compileJsonWriter` answers undefined) and is encoded by Effect. A value the writer does not accept gets
 * undefined too, and the caller encodes it with Effect, which then reports the failure in its own words: the writer
 * is only ever a faster way to the same text (test/jsonWriter.test.ts checks this on every response schema).
 */
import type { SchemaAST } from "effect"

/** The JSON text of a value of the schema, or undefined when the value does not fit it. */
export type JsonWriter = (value: unknown) => string | undefined

const plain = (ast: SchemaAST.AST): boolean =>
  ast.encoding === undefined && ast.checks === undefined && !("encodingChecks" in ast && ast.encodingChecks !== undefined)

/**
 * A string as JSON: quoted as is when nothing in it needs escaping (the usual case: ids, timestamps, names), else
 * by `JSON.stringify`. Scanning is cheaper than the native call for the short strings responses are made of.
 */
const quote = (text: string): string => {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    // Control characters, the quote, the backslash, and surrogates (a lone one is escaped by JSON.stringify).
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(text)
  }
  return `"${text}"`
}

/** A scalar: a union may hold these only, so that which member a value matches is never in doubt. */
const scalarWriter = (ast: SchemaAST.AST): JsonWriter | undefined => {
  if (!plain(ast)) return undefined
  switch (ast._tag) {
    case "String":
      return (value) => (typeof value === "string" ? quote(value) : undefined)
    case "Number":
      return (value) => (typeof value === "number" ? JSON.stringify(value) : undefined)
    case "Boolean":
      return (value) => (value === true ? "true" : value === false ? "false" : undefined)
    case "Null":
      return (value) => (value === null ? "null" : undefined)
    case "Literal": {
      const literal = ast.literal
      if (typeof literal === "bigint") return undefined
      const text = JSON.stringify(literal)
      return (value) => (value === literal ? text : undefined)
    }
    default:
      return undefined
  }
}

const objectWriter = (ast: SchemaAST.Objects): JsonWriter | undefined => {
  if (ast.indexSignatures.length > 0) return undefined
  const fields: Array<{ readonly name: string; readonly key: string; readonly optional: boolean; readonly write: JsonWriter }> = []
  for (const property of ast.propertySignatures) {
    if (typeof property.name !== "string" || property.name === "__proto__") return undefined
    const write = compileJsonWriter(property.type)
    if (write === undefined) return undefined
    fields.push({ name: property.name, key: `${JSON.stringify(property.name)}:`, optional: property.type.context?.isOptional === true, write })
  }
  return (value) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined
    const record = value as Record<string, unknown>
    let out = "{"
    let first = true
    for (const field of fields) {
      // As the encoder reads a struct: a key counts as present when `in` finds it.
      if (!(field.name in record)) {
        if (field.optional) continue
        return undefined
      }
      const text = field.write(record[field.name])
      if (text === undefined) return undefined
      out += first ? field.key + text : "," + field.key + text
      first = false
    }
    return out + "}"
  }
}

/** The writer of a schema's AST, or undefined when the schema has more than plain JSON values in it. */
export const compileJsonWriter = (ast: SchemaAST.AST): JsonWriter | undefined => {
  if (!plain(ast)) return undefined
  switch (ast._tag) {
    case "Objects":
      return objectWriter(ast)
    case "Arrays": {
      if (ast.elements.length > 0 || ast.rest.length !== 1) return undefined
      const item = compileJsonWriter(ast.rest[0]!)
      if (item === undefined) return undefined
      return (value) => {
        if (!Array.isArray(value)) return undefined
        let out = "["
        for (let i = 0; i < value.length; i++) {
          const text = item(value[i])
          if (text === undefined) return undefined
          out += i === 0 ? text : "," + text
        }
        return out + "]"
      }
    }
    case "Union": {
      const members: Array<JsonWriter> = []
      for (const member of ast.types) {
        const write = scalarWriter(member)
        if (write === undefined) return undefined
        members.push(write)
      }
      return (value) => {
        for (const write of members) {
          const text = write(value)
          if (text !== undefined) return text
        }
        return undefined
      }
    }
    default:
      return scalarWriter(ast)
  }
}
