import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Me } from "../tenancy/Tenancy.ts"
import { common } from "./Policies.ts"
import { documented } from "./OpenApiDocument.ts"

export const Portal = HttpApiGroup.make("portal").add(
  HttpApiEndpoint.get("me", "/v2/portal/users/me", { success: Me, error: common }).annotateMerge(documented("Get the calling user", "Reads the user and organization the API key belongs to."))
)
