/**
 * Statements on PGlite, each text parsed and planned once: the first run of a text makes it a named prepared
 * statement of PGlite's session, and later runs only bind and execute it, all in one message of PostgreSQL's wire
 * protocol (`execProtocolRaw`).
 *
 * Why not `PGlite.query`: it parses and plans every statement again, and crosses into PGlite's WebAssembly six times
 * per statement (parse, two describes, bind, execute, sync). A commit of the PGlite store (ImageStore.ts) is one
 * statement of a few shapes, run a hundred times in a test's journey: prepared, it took 0.2 ms instead of 0.5
 * (docs/decisions/0004-pglite-as-an-image.md). PGlite exports no serializer of the protocol, and the
 * four messages needed (Parse, Bind, Execute, Sync; protocol 3.0, text parameters) are small.
 */
import type { PGlite } from "@electric-sql/pglite"

const encoder = new TextEncoder()
const decoder = new TextDecoder()

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

/** One frontend message: its type byte, its length, its body. */
const message = (type: string, parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const body = concat(parts)
  const out = new Uint8Array(5 + body.length)
  out[0] = type.charCodeAt(0)
  new DataView(out.buffer).setInt32(1, 4 + body.length)
  out.set(body, 5)
  return out
}

const cstring = (text: string): Uint8Array => {
  const bytes = encoder.encode(text)
  const out = new Uint8Array(bytes.length + 1)
  out.set(bytes)
  return out
}

const int16 = (n: number): Uint8Array => {
  const out = new Uint8Array(2)
  new DataView(out.buffer).setInt16(0, n)
  return out
}

const int32 = (n: number): Uint8Array => {
  const out = new Uint8Array(4)
  new DataView(out.buffer).setInt32(0, n)
  return out
}


/** A statement PGlite refused: its message and SQLSTATE. */
export class PgliteStatementError extends Error {
  override readonly name = "PgliteStatementError"
  readonly code: string | undefined
  constructor(message: string, code: string | undefined) {
    super(message)
    this.code = code
  }
}

/** What the backend answered: whether it parsed the statement, and its error if any. */
const readReply = (reply: Uint8Array): { readonly parsed: boolean; readonly error: PgliteStatementError | undefined } => {
  const view = new DataView(reply.buffer, reply.byteOffset, reply.byteLength)
  let parsed = false
  let error: PgliteStatementError | undefined
  for (let at = 0; at + 5 <= reply.length; at += 1 + view.getInt32(at + 1)) {
    const type = String.fromCharCode(reply[at]!)
    if (type === "1") parsed = true
    if (type === "E" && error === undefined) {
      // Fields: a code byte and a C string each, ended by a zero byte. 'M' is the message, 'C' the SQLSTATE.
      const fields = new Map<string, string>()
      const end = at + 1 + view.getInt32(at + 1)
      let p = at + 5
      while (p < end && reply[p] !== 0) {
        const code = String.fromCharCode(reply[p]!)
        const stop = reply.indexOf(0, p + 1)
        fields.set(code, decoder.decode(reply.subarray(p + 1, stop)))
        p = stop + 1
      }
      error = new PgliteStatementError(fields.get("M") ?? "statement failed", fields.get("C"))
    }
  }
  return { parsed, error }
}

/** Each PGlite session's prepared statements, by text. */
const sessions = new WeakMap<PGlite, Map<string, string>>()

/** Statements kept prepared at most: past this many texts, a text is parsed at each run. */
const preparedAtMost = 256

/**
 * A runner of statements on `db` with text parameters (`null` for NULL), prepared per text. It answers nothing: the
 * PGlite store's statements only write. The caller runs one statement at a time.
 */
export const preparedStatements = (db: PGlite) => {
  // The statements are the session's: every runner on one PGlite shares their names.
  const names = sessions.get(db) ?? new Map<string, string>()
  sessions.set(db, names)
  return async (text: string, values: ReadonlyArray<string | null>): Promise<void> => {
    let name = names.get(text)
    const parse = name === undefined
    if (parse && names.size < preparedAtMost) name = `fos_${names.size + 1}`
    const parameters = values.map((value) => (value === null ? null : encoder.encode(value)))
    const request = concat([
      ...(parse ? [message("P", [cstring(name ?? ""), cstring(text), int16(0)])] : []),
      message("B", [
        cstring(""),
        cstring(name ?? ""),
        int16(0),
        int16(parameters.length),
        ...parameters.flatMap((bytes) => (bytes === null ? [int32(-1)] : [int32(bytes.length), bytes])),
        int16(0)
      ]),
      message("E", [cstring(""), int32(0)]),
      message("S", [])
    ])
    const { parsed, error } = readReply(await db.execProtocolRaw(request))
    if (parse && parsed && name !== undefined) names.set(text, name)
    if (error !== undefined) throw error
  }
}

export type PreparedStatements = ReturnType<typeof preparedStatements>
