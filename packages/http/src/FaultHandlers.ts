/**
 * The faults group's handlers (contract api/Faults.ts): arm, list and delete the sandbox's scripted faults. A request
 * fault's matcher must name an operation of the API (by method and path template, or operation id), so a typo is a
 * 400 rather than a fault that never applies.
 */
import { Faults, Problem } from "@fos/core"
import type { FaultCreate } from "@fos/contract"
import { Effect } from "effect"
import { faultTargets } from "./Faults.ts"
import { group } from "./HandlerGroups.ts"
import { CurrentCaller, ServerApi } from "./ServerApi.ts"

const invalidMatch = (pointer: string, detail: string) =>
  Effect.fail(Problem.invalidRequest([{ pointer, detail }]))

/** Refuses a matcher that no operation of the API meets. */
export const checkMatch = (match: FaultCreate["match"]) => {
  if (match.path !== undefined && !faultTargets.some((t) => t.path === match.path)) {
    return invalidMatch("/match/path", "must be a path template of the OpenAPI document without the base address, such as /v2/customers/{customerId} (the faults endpoints cannot be matched)")
  }
  if (match.operationId !== undefined && !faultTargets.some((t) => t.operationId === match.operationId)) {
    return invalidMatch("/match/operationId", "must be an operation id of the OpenAPI document, such as customers.get (the faults endpoints cannot be matched)")
  }
  const met = faultTargets.some((t) =>
    (match.method === undefined || t.method === match.method) &&
    (match.path === undefined || t.path === match.path) &&
    (match.operationId === undefined || t.operationId === match.operationId))
  return met ? Effect.void : invalidMatch("/match", "names no operation of the API: the method, path and operationId given do not meet on one")
}

export const FaultsLive = group(ServerApi, "faults", (handlers) =>
  handlers
    .handle("createFault", ({ payload }) =>
      CurrentCaller.use((caller) => Effect.andThen(checkMatch(payload.match), Faults.armFault(caller, payload))).pipe(Effect.map((f) => f as never)))
    .handle("listFaults", () => CurrentCaller.use((caller) => Faults.list(caller)).pipe(Effect.map((l) => l as never)))
    .handle("deleteFault", ({ params }) => CurrentCaller.use((caller) => Faults.deleteFault(caller, params.faultId)))
    .handle("clearFaults", () => CurrentCaller.use((caller) => Faults.clear(caller)))
    .handle("createReceiverFault", ({ params, payload }) =>
      CurrentCaller.use((caller) => Faults.armReceiverFault(caller, params.id, payload)).pipe(Effect.map((f) => f as never))))
