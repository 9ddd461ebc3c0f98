/**
 * The sandbox's scripted faults (simulate/Faults.ts): armed, listed and deleted under /sandbox/v2/simulate/faults,
 * and a webhook endpoint's receiver faults armed under its own simulate path.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { WebhookEndpointId } from "../kernel/Ids.ts"
import { Fault, FaultCreate, FaultId, FaultList, FaultsCleared, ReceiverFaultCreate } from "../simulate/Faults.ts"
import { documented } from "./OpenApiDocument.ts"
import { common, OpenWhenRestricted, problem, SandboxOnly, withBody } from "./Policies.ts"

export const Faults = HttpApiGroup.make("faults")
  .add(HttpApiEndpoint.post("createFault", "/v2/simulate/faults", {
    payload: FaultCreate,
    success: Fault.pipe(HttpApiSchema.status(201)),
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Arm a fault", "Arms a scripted fault: the next matching requests (by method and path template or operation id, optionally a customer) get a catalog problem, added latency, or a committed write whose answer is lost. Applies to `count` requests, or until deleted; at most 50 per sandbox.")))
  .add(HttpApiEndpoint.get("listFaults", "/v2/simulate/faults", { success: FaultList, error: common }).annotateMerge(documented("List faults", "Lists the sandbox's armed request and receiver faults, with how often each applied and how many uses remain.")))
  .add(HttpApiEndpoint.delete("deleteFault", "/v2/simulate/faults/:faultId", { params: { faultId: FaultId }, error: common }).annotateMerge(documented("Delete a fault", "Disarms one fault.")))
  .add(HttpApiEndpoint.delete("clearFaults", "/v2/simulate/faults", { success: FaultsCleared, error: common }).annotateMerge(documented("Delete every fault", "Disarms every fault of the sandbox and answers how many were removed.")))
  .add(HttpApiEndpoint.post("createReceiverFault", "/v2/simulate/webhooks/endpoints/:id/faults", {
    params: { id: WebhookEndpointId },
    payload: ReceiverFaultCreate,
    success: Fault.pipe(HttpApiSchema.status(201)),
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Make a receiver fail", "Makes the endpoint's next attempts fail with a given status, or time out, without calling the receiver; the retry timetable runs as usual. One receiver fault per endpoint.")))
  .annotate(OpenWhenRestricted, true)
  .annotate(SandboxOnly, true)
