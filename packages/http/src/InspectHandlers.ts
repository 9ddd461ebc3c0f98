/**
 * The handlers of the sandbox's inspect group (contract api/Inspect.ts): thin reads of the caller's sandbox.
 */
import { AttemptRequests, EventLog, LedgerAudit, PendingTimers, ResourceActions, Timeline } from "@fos/core"
import { defaultPageSize } from "@fos/contract"
import { Effect } from "effect"
import { HttpServerRequest } from "effect/http"
import { group } from "./HandlerGroups.ts"
import { LiveFeed, parseTopics, recentPage } from "./LiveFeed.ts"
import { CurrentCaller, ServerApi } from "./ServerApi.ts"

const pageOf = (
  query: { readonly cursor?: string; readonly limit?: number; readonly direction?: "forward" | "backward"; readonly sortOrder?: "asc" | "desc" },
  sortBy: string
) => ({
  cursor: query.cursor,
  limit: query.limit ?? defaultPageSize,
  direction: query.direction ?? "forward",
  sortBy,
  // A log and a schedule read oldest (soonest) first.
  sortOrder: query.sortOrder ?? "asc"
})

const mutable = <A>(value: A) => value as { -readonly [K in keyof A]: A[K] }

export const InspectLive = group(ServerApi, "inspect", (handlers) =>
  Effect.map(Effect.service(LiveFeed), (feed) => handlers
    .handle("listTimers", ({ query }) =>
      CurrentCaller.use((caller) =>
        PendingTimers.list(caller.organization.id, caller.environment, pageOf(query, "dueAt"), { includeHousekeeping: query.housekeeping === "true" })
      ).pipe(
        Effect.map((page) => ({ data: page.data.map(mutable), meta: page.meta }))
      ))
    .handle("listEvents", ({ query }) =>
      CurrentCaller.use((caller) =>
        EventLog.listEvents(caller.organization.id, { resourceId: query.resourceId, type: query.type }, pageOf(query, "createdAt"))
      ).pipe(Effect.map((page) => ({ data: page.data.map(mutable), meta: page.meta }))))
    .handle("accountJournal", ({ params, query }) =>
      CurrentCaller.use((caller) =>
        LedgerAudit.accountJournal(caller.organization.id, params.holderId, {
          asset: query.asset,
          chain: query.chain,
          cursor: query.cursor,
          limit: query.limit ?? defaultPageSize
        })
      ).pipe(Effect.map((j) => ({ account: mutable(j.account), data: j.data.map(mutable), meta: j.meta }))))
    .handle("auditLedger", () =>
      CurrentCaller.use((caller) => LedgerAudit.auditLedger(caller.organization.id)).pipe(
        Effect.map((r) => ({ ...r, checks: r.checks.map(mutable), violations: r.violations.map(mutable) }))
      ))
    .handle("resourceTimeline", ({ params }) =>
      CurrentCaller.use((caller) => Timeline.timeline(caller.organization.id, params.resourceId)).pipe(
        Effect.map((t) => ({ ...t, entries: t.entries.map(mutable) }))
      ))
    .handle("listRecentRequests", ({ query }) =>
      CurrentCaller.use((caller) => recentPage(feed, caller.organization.id, caller.environment, query)).pipe(
        Effect.map((page) => ({ data: page.data.map(mutable), meta: page.meta }))
      ))
    .handle("streamSandbox", ({ query }) =>
      Effect.gen(function*() {
        const caller = yield* CurrentCaller
        const request = yield* HttpServerRequest.HttpServerRequest
        // `after` wins over the header a reconnecting EventSource-like client sends.
        const after = query.after ?? request.headers["last-event-id"]
        return yield* feed.stream({ organizationId: caller.organization.id, topics: yield* parseTopics(query.topics), after })
      }))
    .handle("listSentAttempts", ({ params, query }) =>
      CurrentCaller.use((caller) => AttemptRequests.list(caller, params.deliveryId, pageOf(query, "at"))).pipe(
        Effect.map((page) => ({ data: page.data.map(mutable), meta: page.meta }))
      ))
    .handle("resourceActions", ({ params }) => CurrentCaller.use((caller) => ResourceActions.resourceActions(caller.organization.id, params.resourceId)).pipe(
        Effect.map((r) => ({ ...r, actions: r.actions.map(mutable) }))
      ))))
