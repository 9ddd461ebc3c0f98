import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { RfiId } from "../kernel/Ids.ts"
import { Rfi, RfiResponseCreate } from "../money/Rfis.ts"
import { common, Idempotency, problem, withBody } from "./Policies.ts"
import { documented } from "./OpenApiDocument.ts"

/** Requests for information: read one, answer it. */
export const Rfis = HttpApiGroup.make("rfis")
  .add(HttpApiEndpoint.get("get", "/v2/rfis/:id", { params: { id: RfiId }, success: Rfi, error: common }).annotateMerge(documented("Get a request for information", "Reads a request for information compliance raised on a transaction: its questions, deadline and status.")))
  .add(
    HttpApiEndpoint.post("respond", "/v2/rfis/:id/responses", {
      params: { id: RfiId },
      payload: RfiResponseCreate,
      success: Rfi.pipe(HttpApiSchema.status(201)),
      error: [...withBody, problem(422)]
    }).annotateMerge(documented("Answer a request for information", "Submits the answers (and document ids) to a request for information before its deadline; rfi.* events report the review.")).annotate(Idempotency, "required")
  )
