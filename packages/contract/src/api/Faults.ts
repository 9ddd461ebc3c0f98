/**
 * The sandbox's scripted faults (simulate/Faults.ts): armed, listed and deleted under /sandbox/v2/simulate/faults,
 * and a webhook endpoint's receiver faults armed under its own simulate path.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { WebhookEndpointId } from "../kernel/Ids.ts"
import { Fault, FaultCreate, FaultId, FaultList, FaultsCleared, ReceiverFaultCreate } from "../simulate/Faults.ts"
import { common, OpenWhenRestricted, problem, SandboxOnly, withBody } from "./Policies.ts"

export const Faults = HttpApiGroup.make("faults")
  .add(HttpApiEndpoint.post("createFault", "/v2/simulate/faults", {
    payload: FaultCreate,
    success: Fault.pipe(HttpApiSchema.status(201)),
    error: [...withBody, problem(422)]
  }))
  .add(HttpApiEndpoint.get("listFaults", "/v2/simulate/faults", { success: FaultList, error: common }))
  .add(HttpApiEndpoint.delete("deleteFault", "/v2/simulate/faults/:faultId", { params: { faultId: FaultId }, error: common }))
  .add(HttpApiEndpoint.delete("clearFaults", "/v2/simulate/faults", { success: FaultsCleared, error: common }))
  .add(HttpApiEndpoint.post("createReceiverFault", "/v2/simulate/webhooks/endpoints/:id/faults", {
    params: { id: WebhookEndpointId },
    payload: ReceiverFaultCreate,
    success: Fault.pipe(HttpApiSchema.status(201)),
    error: [...withBody, problem(422)]
  }))
  .annotate(OpenWhenRestricted, true)
  .annotate(SandboxOnly, true)
