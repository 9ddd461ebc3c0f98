/**
 * Documents: files a caller uploads (`POST /v2/documents`) so that onboarding submissions and customer updates can
 * reference them by `doc_` id.
 *
 * - The upload is a multipart form: `file` (one PDF, JPEG or PNG of at most `maxDocumentBytes`), `type` (one of
 *   `DocumentTypes`) and an optional `customerId`. The pipeline reads and parses the body; `Documents.upload` checks
 *   the parsed form and keeps the document.
 * - A file's first bytes must carry the signature of its declared content type (the WHATWG MIME Sniffing
 *   signatures), so a renamed executable is refused whatever it is called.
 * - The file name is metadata only: reduced to its last path segment without control or bidirectional-override
 *   characters. Bytes are kept through the store port (`DocumentContents`, base64), never on a path the request
 *   names.
 * - A document belongs to one organization and environment; with `customerId` it is attached to that customer and
 *   usable only for them, without it it is usable for any of the organization's submissions (`Documents.require`).
 */
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex } from "@noble/hashes/utils.js"
import { Effect } from "effect"
import { Base64 } from "effect/encoding"
import type * as Auth from "../tenancy/Auth.ts"
import * as Customers from "./Customers.ts"
import * as Domain from "../kernel/Domain.ts"
import * as IdGenerator from "../kernel/IdGenerator.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Wire from "../kernel/Wire.ts"

import {
  type CustomerId,
  Document as DocumentSchema,
  type Document as DocumentWire,
  type DocumentContentType,
  DocumentContentTypes,
  type DocumentId,
  type DocumentType,
  DocumentTypes,
  type Environment,
  type ErrorEntry,
  isId,
  nowIso
} from "@fos/contract"

/**
 * The byte signature each accepted content type's files start with (WHATWG MIME Sniffing, "Matching an image type
 * pattern" and the PDF pattern).
 */
const contentTypeSignatures: { readonly [T in DocumentContentType]: ReadonlyArray<number> } = {
  "application/pdf": [0x25, 0x50, 0x44, 0x46, 0x2d],
  "image/jpeg": [0xff, 0xd8, 0xff],
  "image/png": [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
}

/** The longest file name kept, in characters; a longer one keeps its first characters. */
export const maxFileNameLength = 255

export interface Document {
  readonly id: DocumentId
  readonly organizationId: string
  readonly environment: Environment
  readonly type: DocumentType
  readonly fileName: string
  readonly contentType: DocumentContentType
  /** Bytes. */
  readonly size: number
  /** Lower-case hex SHA-256 of the bytes. */
  readonly sha256: string
  readonly customerId: CustomerId | undefined
  readonly createdAt: string
}

/** Keyed by id; `byScope` orders an organization's documents in one environment by creation (and counts them). */
export const Documents = Store.table<Document>({
  name: "documents",
  key: (d) => d.id,
  orders: { byScope: { partition: (d) => Tenancy.scopeOf(d.organizationId, d.environment), sort: (d) => d.createdAt } }
})

/** A document's bytes, apart from its metadata so that metadata reads never load them. */
export interface DocumentContent {
  readonly id: DocumentId
  readonly base64: string
}

export const DocumentContents = Store.table<DocumentContent>({ name: "document_contents", key: (c) => c.id })

/** A sandbox's documents, and their bytes, found by their documents' keys. */
export const domain = Domain.make({
  name: "onboarding/Documents",
  tables: [
    {
      table: DocumentContents,
      rows: (scope) => ({ table: DocumentContents, sameKeys: { table: Documents, order: "byScope", partition: scope } })
    },
    { ...Domain.inScope(Documents, "byScope"), counted: "documents", readsAs: (d: Document) => ({ schema: DocumentSchema, value: toWire(d) }) }
  ]
})

/** A document's metadata on the wire; never its bytes. An organization-level document has no customerId. */
export const toWire = (d: Document): DocumentWire =>
  Wire.toWire({
    id: d.id,
    type: d.type,
    fileName: d.fileName,
    contentType: d.contentType,
    size: d.size,
    sha256: d.sha256,
    customerId: d.customerId,
    createdAt: d.createdAt
  }) as DocumentWire

/** Lower-case hex SHA-256 of some bytes. */
export const sha256HexOfBytes = (bytes: Uint8Array): string => bytesToHex(sha256(bytes))

/** One part of a parsed multipart form, as the pipeline hands it over. */
export type FormPart =
  | { readonly _tag: "Field"; readonly name: string; readonly value: string }
  | {
    readonly _tag: "File"
    readonly name: string
    /** As sent, unsanitized. */
    readonly fileName: string
    /** The part's declared media type, without parameters, lower case. */
    readonly contentType: string
    readonly bytes: Uint8Array
    readonly sha256: string
  }

/**
 * A file name as metadata: the last segment after any `/` or `\`, without control characters, bidirectional
 * overrides (which can disguise an extension) or leading dots, at most `maxFileNameLength` characters; `document`
 * when nothing is left.
 */
export const sanitizeFileName = (raw: string): string => {
  const segment = raw.normalize("NFC").split(/[/\\]/).pop() ?? ""
  const cleaned = segment
    .replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, "")
    .trim()
    .replace(/^\.+/, "")
  const kept = [...cleaned].slice(0, maxFileNameLength).join("").trim()
  return kept === "" ? "document" : kept
}

/** True when `bytes` start with the signature of `contentType`. */
export const matchesSignature = (contentType: DocumentContentType, bytes: Uint8Array): boolean => {
  const signature = contentTypeSignatures[contentType]
  return bytes.length >= signature.length && signature.every((b, i) => bytes[i] === b)
}

const isDocumentType = (s: string): s is DocumentType => (DocumentTypes as ReadonlyArray<string>).includes(s)
const isContentType = (s: string): s is DocumentContentType => (DocumentContentTypes as ReadonlyArray<string>).includes(s)

/** The checked upload form. */
export interface DocumentUpload {
  readonly file: Extract<FormPart, { _tag: "File" }> & { readonly contentType: DocumentContentType }
  readonly type: DocumentType
  readonly customerId: CustomerId | undefined
}

const formFields = ["file", "type", "customerId"] as const

/**
 * Checks the form's parts: every problem becomes one `errors[]` entry (pointer `/<field>`), and `field` names the
 * first offending field. A part of any other name is refused (`is not allowed`), as an unknown member of a JSON body
 * is (docs/decisions.md, "Unknown members").
 */
export const checkUploadForm = (parts: ReadonlyArray<FormPart>): Effect.Effect<DocumentUpload, Problem.ApiError> =>
  Effect.suspend(() => {
    const errors: Array<ErrorEntry & { readonly field: string }> = []
    const fail = (field: string, detail: string) => errors.push({ pointer: `/${field}`, detail, field })
    const byName = (name: string) => parts.filter((p) => p.name === name)
    const single = (name: (typeof formFields)[number]): FormPart | undefined => {
      const found = byName(name)
      if (found.length > 1) fail(name, "must be sent once")
      return found.length === 1 ? found[0] : undefined
    }

    let file: DocumentUpload["file"] | undefined
    const filePart = single("file")
    if (byName("file").length === 0) fail("file", "is required")
    else if (filePart !== undefined) {
      if (filePart._tag !== "File") fail("file", "must be a file part (Content-Disposition with a filename)")
      else if (!isContentType(filePart.contentType)) fail("file", `must have one of the content types: ${DocumentContentTypes.join(", ")}`)
      else if (filePart.bytes.length === 0) fail("file", "must not be empty")
      else if (!matchesSignature(filePart.contentType, filePart.bytes)) {
        fail("file", "must have content that matches its declared content type")
      } else file = { ...filePart, contentType: filePart.contentType }
    }

    let type: DocumentType | undefined
    const typePart = single("type")
    if (byName("type").length === 0) fail("type", "is required")
    else if (typePart !== undefined) {
      if (typePart._tag !== "Field") fail("type", "must be a text field")
      else if (typePart.value.trim() === "") fail("type", "is required")
      else if (!isDocumentType(typePart.value)) fail("type", `must be one of: ${DocumentTypes.join(", ")}`)
      else type = typePart.value
    }

    let customerId: CustomerId | undefined
    const customerPart = single("customerId")
    if (customerPart !== undefined) {
      if (customerPart._tag !== "Field") fail("customerId", "must be a text field")
      else if (!isId("cus", customerPart.value)) fail("customerId", "must be a customer id (cus_ followed by 1 to 64 letters or digits)")
      else customerId = customerPart.value as CustomerId
    }

    const unknown = new Set(parts.map((p) => p.name).filter((name) => !(formFields as ReadonlyArray<string>).includes(name)))
    for (const name of unknown) errors.push({ pointer: Problem.toPointer([name]), detail: "is not allowed", field: name })

    if (errors.length > 0 || file === undefined || type === undefined) {
      return Effect.fail(Problem.apiError("VALIDATION_ERROR", "The upload form failed validation; see errors[].", {
        errors: errors.map(({ pointer, detail }) => ({ pointer, detail })),
        field: errors[0]?.field ?? "file"
      }))
    }
    return Effect.succeed({ file, type, customerId })
  })

/**
 * Keeps an uploaded document: checks the form, the customer it names (CUSTOMER_NOT_FOUND unless it is the
 * caller's), then writes the metadata and the bytes in one transaction. Nothing is written on any failure. Its
 * refusals come in a fixed order (docs/onboarding.md, "The order of the other writes' refusals"); a request that
 * breaks two rules gets the first:
 * 1. the size of each file, while the pipeline reads the body (413 FILE_TOO_LARGE), before the form is looked at;
 * 2. the form alone (400 VALIDATION_ERROR: every field's problems at once, `field` naming the first);
 * 3. the customer it names (404 CUSTOMER_NOT_FOUND; 422 CUSTOMER_NOT_ONBOARDED while its onboarding is not approved).
 */
export const upload = (caller: Auth.Caller, parts: ReadonlyArray<FormPart>): Effect.Effect<DocumentWire, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const upload = yield* checkUploadForm(parts)
    if (upload.customerId !== undefined) yield* Customers.get(caller, upload.customerId)
    const store = yield* Store.Store
    const document: Document = {
      id: yield* IdGenerator.newId("doc"),
      organizationId: caller.organization.id,
      environment: caller.environment,
      type: upload.type,
      fileName: sanitizeFileName(upload.file.fileName),
      contentType: upload.file.contentType,
      size: upload.file.bytes.length,
      sha256: upload.file.sha256,
      customerId: upload.customerId,
      createdAt: yield* nowIso
    }
    yield* store.transaction(Effect.gen(function*() {
      yield* Effect.orDie(store.insert(Documents, document))
      yield* Effect.orDie(store.insert(DocumentContents, { id: document.id, base64: Base64.encode(upload.file.bytes) }))
    }))
    return toWire(document)
  })

const ofCaller = (caller: Auth.Caller, d: Document | undefined): d is Document =>
  d !== undefined && Tenancy.scopeOf(d.organizationId, d.environment) === Tenancy.scopeOf(caller.organization.id, caller.environment)

/** A document of the caller's organization and environment; another's is 404 NOT_FOUND, as a missing one. */
export const get = (caller: Auth.Caller, id: DocumentId): Effect.Effect<Document, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const document = yield* (yield* Store.Store).get(Documents, id)
    if (!ofCaller(caller, document)) {
      return yield* Problem.apiError("NOT_FOUND", "No document with this id exists in this organization and environment.")
    }
    return document
  })

/**
 * The documents a submission references, in the order given (one per id). Each must exist in the caller's
 * organization and environment and be usable for `customerId`: a document attached to a customer is usable only
 * for that customer; an organization-level one for any submission. Otherwise 400 DOCUMENT_IDS_NOT_FOUND with one
 * `errors[]` entry per unusable id at `<pointer>/<index>` (the first `maxErrorEntries` of them), whose detail never
 * repeats the id.
 */
export const require = (
  caller: Auth.Caller,
  ids: ReadonlyArray<DocumentId | string>,
  options: { readonly customerId?: CustomerId | undefined; readonly pointer: string }
): Effect.Effect<ReadonlyArray<Document>, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const found: Array<Document> = []
    const errors: Array<ErrorEntry> = []
    const detail = options.customerId === undefined
      ? "must be the id of a document of this organization that is not attached to a customer"
      : "must be the id of a document of this organization, attached to this customer or to no customer"
    for (const [index, id] of ids.entries()) {
      const document = isId("doc", id) ? yield* store.get(Documents, id) : undefined
      const usable = ofCaller(caller, document) && (document.customerId === undefined || document.customerId === options.customerId)
      if (usable) found.push(document)
      else errors.push({ pointer: `${options.pointer}/${index}`, detail })
      // Counted in the detail, listed up to the cap (a body of a megabyte holds tens of thousands of ids).
      if (errors.length > Wire.maxErrorEntries) break
    }
    if (errors.length > 0) {
      const n = errors.length
      const where = options.customerId === undefined ? "organization" : "customer"
      return yield* Problem.apiError(
        "DOCUMENT_IDS_NOT_FOUND",
        n > Wire.maxErrorEntries
          ? `More than ${Wire.maxErrorEntries} referenced documents were not found for this ${where}; errors[] lists the first ${Wire.maxErrorEntries}.`
          : `${n} referenced document${n === 1 ? " was" : "s were"} not found for this ${where}; see errors[].`,
        { errors: errors.slice(0, Wire.maxErrorEntries) }
      )
    }
    return found
  })
