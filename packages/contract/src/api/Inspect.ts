import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import {
  AccountJournal,
  JournalParams,
  JournalQuery,
  LedgerAudit,
  LoggedEventList,
  LoggedEventQuery,
  PendingTimerList,
  PendingTimerQuery,
  Timeline,
  TimelineParams,
  RecentRequestList,
  RecentRequestQuery,
  ResourceActions,
  ResourceActionsParams,
  SentAttemptList,
  SentAttemptParams,
  SentAttemptQuery,
  StreamQuery
} from "../simulate/Inspect.ts"
import { documented } from "./OpenApiDocument.ts"
import { common, OpenWhenRestricted, SandboxOnly } from "./Policies.ts"

/**
 * The sandbox's view into its own workings (served under /sandbox only, read-only): what is pending, what was
 * emitted, and the ledger. A group of its own beside `simulate`, whose calls act; these only read.
 */
export const Inspect = HttpApiGroup.make("inspect")
  .add(HttpApiEndpoint.get("listTimers", "/v2/simulate/timers", {
    query: PendingTimerQuery,
    success: PendingTimerList,
    error: common
  }).annotateMerge(documented("List pending timers", "The caller's pending sandbox timers, soonest first: kind, due time, resource and what firing will do. The engine's housekeeping (idempotency keys' retention) is left out unless housekeeping=true.")))
  .add(HttpApiEndpoint.get("listEvents", "/v2/simulate/events", {
    query: LoggedEventQuery,
    success: LoggedEventList,
    error: common
  }).annotateMerge(documented("List emitted events", "Every event emitted in the caller's sandbox, oldest first, subscribed or not; filtered by resourceId and type.")))
  .add(HttpApiEndpoint.get("accountJournal", "/v2/simulate/ledger/accounts/:holderId/journal", {
    params: JournalParams,
    query: JournalQuery,
    success: AccountJournal,
    error: common
  }).annotateMerge(documented("Read an account's journal", "A wallet's or virtual account's ledger account: its transfers, oldest first, each with the balance after it.")))
  .add(HttpApiEndpoint.get("auditLedger", "/v2/simulate/ledger/audit", {
    success: LedgerAudit,
    error: common
  }).annotateMerge(documented("Audit the ledger", "Checks the sandbox ledger's invariants and answers each check made and every violation found.")))
  .add(HttpApiEndpoint.get("resourceTimeline", "/v2/simulate/timeline/:resourceId", {
    params: TimelineParams,
    success: Timeline,
    error: common
  }).annotateMerge(documented(
    "Read a resource's timeline",
    "A transaction's, order's, application's, RFI's, webhook delivery's, wallet signer's, ceremony's or claim's state changes with their causes, events, ledger transfers and timers, oldest first (the latest 500), and what it waits for next."
  )))
  .add(HttpApiEndpoint.get("listRecentRequests", "/v2/simulate/requests", {
    query: RecentRequestQuery,
    success: RecentRequestList,
    error: common
  }).annotateMerge(documented(
    "List recent requests",
    "The last requests the caller's sandbox answered (at most 500), newest first, by every server process sharing the store: time, method, path, status, error type, duration, correlation id and the process that answered; never a header, query or body."
  )))
  .add(HttpApiEndpoint.get("streamSandbox", "/v2/simulate/stream", {
    query: StreamQuery,
    success: HttpApiSchema.StreamUint8Array({ contentType: "text/event-stream" }),
    error: common
  }).annotateMerge(documented(
    "Stream events and requests",
    "Server-sent events, pushed as they happen: `event: event` for each event emitted in the caller's sandbox (as the event log shows it, with `id:` its id; resume with Last-Event-ID or `after`), `event: request` for each request it answers. `topics=events,requests` (both by default); a comment every 15 s; at most 10 open streams per organization (429 beyond)."
  )))
  .add(HttpApiEndpoint.get("resourceActions", "/v2/simulate/actions/:resourceId", {
    params: ResourceActionsParams,
    success: ResourceActions,
    error: common
  }).annotateMerge(documented(
    "List a resource's actions",
    "The simulate and public actions of a transaction, order, application, RFI, signer, ceremony, claim or webhook delivery, each with whether the resource's state table allows it now and, when not, why."
  )))
  .add(HttpApiEndpoint.get("listSentAttempts", "/v2/simulate/webhooks/deliveries/:deliveryId/attempts", {
    params: SentAttemptParams,
    query: SentAttemptQuery,
    success: SentAttemptList,
    error: common
  }).annotateMerge(documented(
    "List what a delivery's attempts sent",
    "A sandbox delivery's attempts, oldest first, each with the request it sent (URL, headers with the X-Service-Signature, body) and the receiver's status, latency and error. Kept for sandbox attempts only; 404 for a delivery of another organization."
  )))
  .annotate(OpenWhenRestricted, true)
  .annotate(SandboxOnly, true)
