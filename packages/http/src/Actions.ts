import { Problem } from "@fos/core"
import { Effect } from "effect"
export const resourceActions = (_organizationId: string, _id: string) => Effect.fail(Problem.apiError("NOT_FOUND", "No such resource."))
