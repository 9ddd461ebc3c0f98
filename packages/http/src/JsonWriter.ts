/**
 * A response schema compiled into a JSON writer: the JSON text of a value, written in one pass.
 *
 * What a response needs is `JSON.stringify(Schema.encode(value))`. For the schemas fos answers with, the encode
 * changes nothing but leaves out what the schema does not declare: they are plain structs, arrays, strings,
 * numbers, booleans, literals and null, with no transformations. Effect's encoder is a general interpreter that
 * builds a copy of the value to hand to `JSON.stringify`; on the cheapest endpoint that copy and its serialisation
 * were about a fifth of the server's CPU per request (docs/performance.md). A writer compiled from the same schema
 * checks whether the value already is exactly what the encoder would make of it, and then hands it to
 * `JSON.stringify` as it is; otherwise it writes the declared fields, in the schema's order, straight to text.
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

/**
 * A compiled schema node: `exact` says that a value already is what the encoder would make of it (every field
 * declared, in the schema's order, and nothing else), so that `JSON.stringify` of the value itself is the text;
 * `write` writes any value that fits, leaving out what the schema does not declare.
 */
interface Node {
  readonly exact: (value: unknown) => boolean
  readonly write: JsonWriter
}

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

/** A string's characters as they stand between a JSON string's quotes: its own when nothing needs escaping. */
const escaped = (text: string): string => {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(text).slice(1, -1)
  }
  return text
}

/** A scalar: a union may hold these only, so that which member a value matches is never in doubt. */
const scalarNode = (ast: SchemaAST.AST): Node | undefined => {
  if (!plain(ast)) return undefined
  switch (ast._tag) {
    case "String":
      return { exact: (value) => typeof value === "string", write: (value) => (typeof value === "string" ? quote(value) : undefined) }
    case "Number":
      return { exact: (value) => typeof value === "number", write: (value) => (typeof value === "number" ? JSON.stringify(value) : undefined) }
    case "Boolean":
      return { exact: (value) => typeof value === "boolean", write: (value) => (value === true ? "true" : value === false ? "false" : undefined) }
    case "Null":
      return { exact: (value) => value === null, write: (value) => (value === null ? "null" : undefined) }
    case "Literal": {
      const literal = ast.literal
      if (typeof literal === "bigint") return undefined
      const text = JSON.stringify(literal)
      return { exact: (value) => value === literal, write: (value) => (value === literal ? text : undefined) }
    }
    default:
      return undefined
  }
}

const objectNode = (ast: SchemaAST.Objects): Node | undefined => {
  if (ast.indexSignatures.length > 0) return undefined
  const fields: Array<{ readonly name: string; readonly key: string; readonly optional: boolean; readonly node: Node }> = []
  for (const property of ast.propertySignatures) {
    if (typeof property.name !== "string" || property.name === "__proto__") return undefined
    const node = compileNode(property.type)
    if (node === undefined) return undefined
    fields.push({ name: property.name, key: `${JSON.stringify(property.name)}:`, optional: property.type.context?.isOptional === true, node })
  }
  const count = fields.length
  /** Skips `fields[i]` as absent: only an optional field that the value does not have at all. */
  const skippable = (record: object, i: number) => fields[i]!.optional && !(fields[i]!.name in record)
  return {
    // The value's own keys, walked in their order, must be the declared fields in the schema's order, each exact.
    // A plain object only: what `JSON.stringify` writes of any other (inherited fields, `toJSON`) may differ.
    exact: (value) => {
      if (typeof value !== "object" || value === null) return false
      const prototype = Object.getPrototypeOf(value)
      if (prototype !== Object.prototype && prototype !== null) return false
      let i = 0
      for (const key in value) {
        while (i < count && fields[i]!.name !== key) {
          if (!skippable(value, i)) return false
          i++
        }
        if (i === count || !fields[i]!.node.exact((value as Record<string, unknown>)[key])) return false
        i++
      }
      for (; i < count; i++) if (!skippable(value, i)) return false
      return true
    },
    write: (value) => {
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
        const text = field.node.write(record[field.name])
        if (text === undefined) return undefined
        out += first ? field.key + text : "," + field.key + text
        first = false
      }
      return out + "}"
    }
  }
}

/** The compiled node of a schema's AST, or undefined when the schema has more than plain JSON values in it. */
const compileNode = (ast: SchemaAST.AST): Node | undefined => {
  if (!plain(ast)) return undefined
  switch (ast._tag) {
    case "Objects":
      return objectNode(ast)
    case "Arrays": {
      if (ast.elements.length > 0 || ast.rest.length !== 1) return undefined
      const item = compileNode(ast.rest[0]!)
      if (item === undefined) return undefined
      return {
        exact: (value) => {
          if (!Array.isArray(value)) return false
          for (let i = 0; i < value.length; i++) if (!item.exact(value[i])) return false
          return true
        },
        write: (value) => {
          if (!Array.isArray(value)) return undefined
          let out = "["
          for (let i = 0; i < value.length; i++) {
            const text = item.write(value[i])
            if (text === undefined) return undefined
            out += i === 0 ? text : "," + text
          }
          return out + "]"
        }
      }
    }
    case "Union": {
      const members: Array<Node> = []
      for (const member of ast.types) {
        const node = scalarNode(member)
        if (node === undefined) return undefined
        members.push(node)
      }
      return {
        exact: (value) => {
          for (const member of members) if (member.exact(value)) return true
          return false
        },
        write: (value) => {
          for (const member of members) {
            const text = member.write(value)
            if (text !== undefined) return text
          }
          return undefined
        }
      }
    }
    default:
      return scalarNode(ast)
  }
}

/**
 * What a writer's source is written with: statements, and the constant text not yet appended to `o`. Constant text
 * waits for the next value and is appended with it (`o += "\",\"email\":\"" + v1`), so that a field costs one
 * concatenation for the text before it and its value together rather than several: a string field's quotes, the
 * separator and the next key are one literal.
 */
interface Emitter {
  readonly lines: Array<string>
  pending: string
}

/** Appends constant text (written with the next value or at the end). */
const text = (emit: Emitter, constant: string) => {
  emit.pending += constant
}

/** Appends the value of the expression `expression`, with the constant text before it. */
const value = (emit: Emitter, expression: string) => {
  emit.lines.push(emit.pending === "" ? `o += ${expression};` : `o += ${JSON.stringify(emit.pending)} + ${expression};`)
  emit.pending = ""
}

/** Appends the constant text waiting, before a statement whose effect on `o` depends on the value. */
const flush = (emit: Emitter) => {
  if (emit.pending !== "") emit.lines.push(`o += ${JSON.stringify(emit.pending)};`)
  emit.pending = ""
}

/**
 * The source of a writer's body for a schema node: statements that append the JSON text of the value in variable
 * `input` to `o`, or `return undefined` when the value does not fit. The same decisions as the node's `write`, in
 * the same order, spelt out for one schema: no closure per field, no megamorphic call per value, and the constant
 * text between values (`","name":"`) written as one literal.
 */
const sourceOf = (ast: SchemaAST.AST, input: string, fresh: () => string, emit: Emitter): void => {
  const literal = (constant: string) => JSON.stringify(constant)
  const { lines } = emit
  switch (ast._tag) {
    case "String":
      // The quotes are constant text; the characters between them are the string's own when nothing in them needs
      // escaping (`e`).
      lines.push(`if (typeof ${input} !== "string") return undefined;`)
      text(emit, "\"")
      value(emit, `e(${input})`)
      text(emit, "\"")
      return
    case "Number":
      // JSON.stringify's text for a number: its shortest round-trip form, and null for NaN and the infinities.
      lines.push(`if (typeof ${input} !== "number") return undefined;`)
      value(emit, `(Number.isFinite(${input}) ? "" + ${input} : "null")`)
      return
    case "Boolean":
      lines.push(`if (${input} !== true && ${input} !== false) return undefined;`)
      value(emit, `(${input} ? "true" : "false")`)
      return
    case "Null":
      lines.push(`if (${input} !== null) return undefined;`)
      text(emit, "null")
      return
    case "Literal":
      lines.push(`if (${input} !== ${JSON.stringify(ast.literal)}) return undefined;`)
      text(emit, JSON.stringify(ast.literal))
      return
    case "Objects": {
      const record = fresh()
      lines.push(`const ${record} = ${input};`, `if (typeof ${record} !== "object" || ${record} === null || Array.isArray(${record})) return undefined;`)
      // The separator before a field is known while every field before it is required: "{" before the first, ","
      // after. From the first optional field on it is a variable.
      let separator: string | undefined
      let first = true
      for (const property of ast.propertySignatures) {
        const name = property.name as string
        const field = fresh()
        const key = `${JSON.stringify(name)}:`
        if (property.type.context?.isOptional === true) {
          if (separator === undefined) {
            separator = fresh()
            lines.push(`let ${separator} = ${literal(first ? "{" : ",")};`)
          }
          flush(emit)
          lines.push(`if (${literal(name)} in ${record}) {`, `const ${field} = ${record}[${literal(name)}]; o += ${separator} + ${literal(key)}; ${separator} = ",";`)
          sourceOf(property.type, field, fresh, emit)
          flush(emit)
          lines.push(`}`)
        } else {
          // As the encoder reads a struct: a key counts as present when `in` finds it.
          lines.push(`if (!(${literal(name)} in ${record})) return undefined;`, `const ${field} = ${record}[${literal(name)}];`)
          if (separator === undefined) text(emit, (first ? "{" : ",") + key)
          else {
            flush(emit)
            lines.push(`o += ${separator} + ${literal(key)}; ${separator} = ",";`)
          }
          sourceOf(property.type, field, fresh, emit)
        }
        first = false
      }
      if (separator === undefined) text(emit, first ? "{}" : "}")
      else {
        flush(emit)
        lines.push(`o += ${separator} === "{" ? "{}" : "}";`)
      }
      return
    }
    case "Arrays": {
      const array = fresh()
      const index = fresh()
      const item = fresh()
      lines.push(`const ${array} = ${input};`, `if (!Array.isArray(${array})) return undefined;`)
      text(emit, "[")
      flush(emit)
      lines.push(`for (let ${index} = 0; ${index} < ${array}.length; ${index}++) {`, `if (${index} > 0) o += ",";`, `const ${item} = ${array}[${index}];`)
      sourceOf(ast.rest[0]!, item, fresh, emit)
      flush(emit)
      lines.push(`}`)
      text(emit, "]")
      return
    }
    case "Union": {
      // Scalars only (compileNode's rule), and every member that takes a value writes the same text for it, so
      // the first that takes it is as good as any.
      flush(emit)
      const tests = ast.types.map((member) => {
        switch (member._tag) {
          case "String":
            return `if (typeof ${input} === "string") o += q(${input});`
          case "Number":
            return `if (typeof ${input} === "number") o += Number.isFinite(${input}) ? "" + ${input} : "null";`
          case "Boolean":
            return `if (typeof ${input} === "boolean") o += ${input} ? "true" : "false";`
          case "Null":
            return `if (${input} === null) o += "null";`
          case "Literal":
            return `if (${input} === ${JSON.stringify(member.literal)}) o += ${literal(JSON.stringify(member.literal))};`
          default:
            throw new Error(`no writer source for a union member ${member._tag}`)
        }
      })
      lines.push(`${tests.join(" else ")} else return undefined;`)
      return
    }
    default:
      throw new Error(`no writer source for ${ast._tag}`)
  }
}

/**
 * The writer as one generated function, or undefined where the runtime forbids generating code (a host with a
 * content security policy of its own, say); the node's closures write the same text then.
 */
const generated = (ast: SchemaAST.AST): JsonWriter | undefined => {
  let count = 0
  try {
    const emit: Emitter = { lines: [], pending: "" }
    sourceOf(ast, "input", () => `v${count++}`, emit)
    flush(emit)
    const source = `let o = "";\n${emit.lines.join("\n")}\nreturn o;`
    return new Function("q", "e", `return (input) => {\n${source}\n}`)(quote, escaped) as JsonWriter
  } catch {
    return undefined
  }
}

/**
 * The writer of a schema's AST, or undefined when the schema has more than plain JSON values in it: a function
 * generated from the schema, which writes the declared fields in the schema's order straight to text. It is about
 * half again as fast as `JSON.stringify` of the value on the cheapest endpoint's answer (docs/performance.md), and
 * needs no check that the value has nothing the schema leaves out, since it never writes what the schema does not
 * declare.
 */
export const compileJsonWriter = (
  ast: SchemaAST.AST,
  /** `generate: false` takes the closures' form, which is what runs where code cannot be generated (for tests). */
  options: { readonly generate?: boolean } = {}
): JsonWriter | undefined => {
  const node = compileNode(ast)
  if (node === undefined) return undefined
  return (options.generate === false ? undefined : generated(ast)) ?? ((value) => (node.exact(value) ? JSON.stringify(value) : node.write(value)))
}
