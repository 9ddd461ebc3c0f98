/**
 * The outcomes group's handlers (contract api/Outcomes.ts): create, list and delete the sandbox's scripted outcome
 * rules (core simulate/Outcomes.ts), which the engine's own flows consult as transactions move on.
 */
import { Outcomes } from "@fos/core"
import { defaultPageSize } from "@fos/contract"
import { Effect } from "effect"
import { group } from "./HandlerGroups.ts"
import { CurrentCaller, ServerApi } from "./ServerApi.ts"

export const OutcomesLive = group(ServerApi, "outcomes", (handlers) =>
  handlers
    .handle("createOutcomeRule", ({ payload }) => CurrentCaller.use((caller) => Outcomes.create(caller, payload)).pipe(Effect.map((r) => r as never)))
    .handle("listOutcomeRules", ({ query }) =>
      CurrentCaller.use((caller) =>
        Outcomes.list(caller, {
          cursor: query.cursor,
          limit: query.limit ?? defaultPageSize,
          direction: query.direction ?? "forward",
          sortBy: "createdAt",
          // Rules apply oldest first, and are listed so.
          sortOrder: query.sortOrder ?? "asc"
        })
      ).pipe(Effect.map((page) => page as never)))
    .handle("deleteOutcomeRule", ({ params }) => CurrentCaller.use((caller) => Outcomes.remove(caller, params.ruleId)))
    .handle("clearOutcomeRules", () => CurrentCaller.use((caller) => Outcomes.clear(caller))))
