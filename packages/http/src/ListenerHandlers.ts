/**
 * The listeners group's handlers (contract api/Listeners.ts): what `fos listen --forward-to URL` calls. The work is
 * the engine's (webhooks/Listeners.ts); the deletion is the ordinary endpoint's DELETE.
 */
import { Listeners } from "@fos/core"
import { Effect } from "effect"
import { group } from "./HandlerGroups.ts"
import { CurrentCaller, ServerApi } from "./ServerApi.ts"

export const ListenersLive = group(ServerApi, "listeners", (handlers) =>
  handlers
    .handle("createListener", ({ payload }) => CurrentCaller.use((caller) => Listeners.create(caller, payload)).pipe(Effect.map((e) => e as never)))
    .handle("pollListener", ({ params, query }) =>
      CurrentCaller.use((caller) => Listeners.poll(caller, params.id, query.wait === undefined ? undefined : query.wait * 1000)).pipe(Effect.map((p) => p as never)))
    .handle("reportAttempt", ({ params, payload }) => CurrentCaller.use((caller) => Listeners.report(caller, params.id, params.attemptId, payload))))
