/**
 * Documents: the types a document may be, the file types and size `POST /v2/documents` takes, and the document
 * resource.
 */
import { Schema } from "effect"
import { Multipart } from "effect/http"
import { HttpApiSchema } from "effect/http-api"
import { CustomerId } from "../kernel/Ids.ts"

export const DocumentTypes = [
  "certificate_of_incorporation",
  "articles_of_association",
  "shareholder_register",
  "ownership_structure",
  "proof_of_address",
  "bank_statement",
  "tax_registration",
  "passport",
  "national_id",
  "drivers_license",
  // A payout's supporting documents (its review asks for them): the types a payout names in acceptedTypes,
  // acceptedDocumentTypes and its refusal's detail, besides bank_statement and proof_of_address above.
  "invoice",
  "contract",
  "other"
] as const
export type DocumentType = typeof DocumentTypes[number]

/** The largest file accepted, in bytes: 10 MiB (docs/onboarding.md, "Documents"). */
export const maxDocumentBytes = 10 * 1024 * 1024

/** The content types accepted; the engine checks each file's bytes against its declared type. */
export const DocumentContentTypes = ["application/pdf", "image/jpeg", "image/png"] as const
export type DocumentContentType = typeof DocumentContentTypes[number]

export const Document = Schema.Struct({
  id: Schema.String,
  type: Schema.Literals(DocumentTypes),
  fileName: Schema.String,
  contentType: Schema.Literals(DocumentContentTypes),
  size: Schema.Number,
  sha256: Schema.String,
  customerId: Schema.optionalKey(Schema.String),
  createdAt: Schema.String
}).annotate({ identifier: "Document", description: "An uploaded document's metadata: type, content type, size and owner." })
export type Document = typeof Document.Type

/**
 * The upload form, for the OpenAPI document and the typed client. The server reads and checks the form itself
 * (it needs the parts before the handler runs, for the idempotency fingerprint), so it never pulls this stream.
 */
export const DocumentForm = Schema.Struct({
  file: Multipart.SingleFileSchema,
  type: Schema.Literals(DocumentTypes),
  customerId: Schema.optionalKey(CustomerId)
}).pipe(HttpApiSchema.asMultipartStream())
