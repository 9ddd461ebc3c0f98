/**
 * Webhook listeners (sandbox only; docs/listen.md): what `fos listen --forward-to URL` uses. Creating one registers
 * a webhook endpoint the server delivers to by handing each signed attempt to the connected CLI (polled here),
 * which forwards it to a receiver on the user's machine and reports the receiver's answer as the attempt's result.
 * The endpoint is an ordinary one otherwise: listed, deleted (`DELETE /v2/webhooks/endpoints/{id}`, which is how the
 * CLI removes it), retried on the spec's timetable.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { WebhookDeliveryAttemptId, WebhookEndpointId } from "../kernel/Ids.ts"
import { ListenerCreate, ListenerPoll, ListenerPollQuery, ListenerReport, ListenerReportResult } from "../webhooks/Listeners.ts"
import { WebhookEndpoint } from "../webhooks/Webhooks.ts"
import { documented } from "./OpenApiDocument.ts"
import { OpenWhenRestricted, OutsideTransaction, problem, SandboxOnly, withBody } from "./Policies.ts"

export const Listeners = HttpApiGroup.make("listeners")
  .add(HttpApiEndpoint.post("createListener", "/v2/simulate/webhooks/listeners", {
    payload: ListenerCreate,
    success: WebhookEndpoint.pipe(HttpApiSchema.status(201)),
    error: withBody
  }).annotateMerge(documented(
    "Create a webhook listener",
    "Registers a webhook endpoint whose deliveries are handed to the client that polls it (`fos listen`) instead of being sent over HTTP; its URL is `fos-listen://{id}`. The answer carries the signing secret once. At most 10 per sandbox; delete one with DELETE /v2/webhooks/endpoints/{id}."
  )))
  .add(HttpApiEndpoint.post("pollListener", "/v2/simulate/webhooks/listeners/:id/poll", {
    params: { id: WebhookEndpointId },
    query: ListenerPollQuery,
    success: ListenerPoll,
    error: [...withBody, problem(410)]
  }).annotateMerge(documented(
    "Take the attempts to forward",
    "Waits up to 20 seconds (or `wait` seconds) for delivery attempts to the listener and answers them (at most 100), each with the exact headers and body to forward. A listener counts as connected while a poll waits and for 10 seconds after one answers; an attempt made while none is connected fails at once, as a refused connection would."
  )).annotate(OutsideTransaction, true))
  .add(HttpApiEndpoint.post("reportAttempt", "/v2/simulate/webhooks/listeners/:id/attempts/:attemptId", {
    params: { id: WebhookEndpointId, attemptId: WebhookDeliveryAttemptId },
    payload: ListenerReport,
    success: ListenerReportResult,
    error: withBody
  }).annotateMerge(documented(
    "Report a forwarded attempt's answer",
    "Records what the local receiver answered (its status, or the error that stopped the request) and its latency as the attempt's result. The server waits for it within the spec's 5-second receiver limit; a report after that is answered `recorded: false`."
  )).annotate(OutsideTransaction, true))
  .annotate(OpenWhenRestricted, true)
  .annotate(SandboxOnly, true)
