import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { DocumentId } from "../kernel/Ids.ts"
import { Document, DocumentForm, maxDocumentBytes } from "../onboarding/Documents.ts"
import { common, Idempotency, OpenWhenRestricted, problem, RateBucket, Upload, withBody } from "./Policies.ts"
import { documented } from "./OpenApiDocument.ts"

export const Documents = HttpApiGroup.make("documents")
  .add(
    HttpApiEndpoint.post("upload", "/v2/documents", {
      payload: DocumentForm,
      success: Document.pipe(HttpApiSchema.status(201)),
      error: [...withBody, problem(422)]
    }).annotateMerge(documented("Upload a document", "Uploads one document (a PDF, PNG or JPEG) as multipart/form-data, with its `type` and, for a customer's paperwork, its `customerId`; reference its id in an onboarding submission."))
      .annotate(Upload, { fileField: "file", maxFileBytes: maxDocumentBytes })
      .annotate(RateBucket, "documents")
      .annotate(Idempotency, "accepted")
      // Paperwork moves nothing and onboards no one; the submission that would is refused.
      .annotate(OpenWhenRestricted, true)
  )
  .add(HttpApiEndpoint.get("get", "/v2/documents/:id", { params: { id: DocumentId }, success: Document, error: common }).annotateMerge(documented("Get a document", "Reads an uploaded document's metadata: its type, content type, size and owner.")))
