import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { DocumentId } from "../kernel/Ids.ts"
import { Document, DocumentForm, maxDocumentBytes } from "../onboarding/Documents.ts"
import { common, Idempotency, OpenWhenRestricted, problem, RateBucket, Upload, withBody } from "./Policies.ts"

export const Documents = HttpApiGroup.make("documents")
  .add(
    HttpApiEndpoint.post("upload", "/v2/documents", {
      payload: DocumentForm,
      success: Document.pipe(HttpApiSchema.status(201)),
      error: [...withBody, problem(422)]
    })
      .annotate(Upload, { fileField: "file", maxFileBytes: maxDocumentBytes })
      .annotate(RateBucket, "documents")
      .annotate(Idempotency, "accepted")
      // Paperwork moves nothing and onboards no one; the submission that would is refused.
      .annotate(OpenWhenRestricted, true)
  )
  .add(HttpApiEndpoint.get("get", "/v2/documents/:id", { params: { id: DocumentId }, success: Document, error: common }))
