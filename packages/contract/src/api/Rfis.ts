import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { RfiId } from "../kernel/Ids.ts"
import { Rfi, RfiResponseCreate } from "../money/Rfis.ts"
import { common, Idempotency, problem, withBody } from "./Policies.ts"

/** Requests for information: read one, answer it. */
export const Rfis = HttpApiGroup.make("rfis")
  .add(HttpApiEndpoint.get("get", "/v2/rfis/:id", { params: { id: RfiId }, success: Rfi, error: common }))
  .add(
    HttpApiEndpoint.post("respond", "/v2/rfis/:id/responses", {
      params: { id: RfiId },
      payload: RfiResponseCreate,
      success: Rfi.pipe(HttpApiSchema.status(201)),
      error: [...withBody, problem(422)]
    }).annotate(Idempotency, "required")
  )
