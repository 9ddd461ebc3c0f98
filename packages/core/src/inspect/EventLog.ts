/**
 * The sandbox's event log (`GET /sandbox/v2/simulate/events`): every event the engine emitted for the caller's
 * sandbox, whether or not a webhook endpoint was subscribed to it, filtered by the resource it is about and by its
 * type, oldest first.
 *
 * It reads the outbox itself: every event is written there in the transaction of its change (kernel/Outbox.ts) and
 * kept until the sandbox is reset (`POST /simulate/reset` removes them with the rest of the sandbox). The filters
 * walk the outbox's sandbox orders, so a page costs the same however many events a filter leaves out.
 */
import { type Environment } from "@fos/contract"
import { Effect } from "effect"
import * as Outbox from "../kernel/Outbox.ts"
import * as Paging from "../kernel/Paging.ts"
import type * as Problem from "../kernel/Problem.ts"
import type * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"

export interface EventLogFilter {
  readonly resourceId?: string | undefined
  readonly type?: string | undefined
}

/** An event as the log shows it: the envelope a webhook receiver gets, with the resource it is about. */
export interface LoggedEvent {
  readonly id: string
  readonly type: string
  readonly createdAt: string
  readonly apiVersion: "2"
  readonly mode: Environment
  /** The id of the resource the event is about (`data.transactionId` for a transaction's event); omitted when none. */
  readonly resourceId?: string
  readonly data: unknown
}

export const loggedEventToWire = (event: Outbox.OutboxEvent): LoggedEvent => {
  const resourceId = Outbox.eventResourceId(event)
  return {
    id: event.id,
    type: event.type,
    createdAt: event.createdAt,
    apiVersion: "2",
    mode: event.environment,
    ...(resourceId === undefined ? {} : { resourceId }),
    data: event.data
  }
}

/** One page of an organization's sandbox events, in the order they were emitted (or the reverse, `sortOrder=desc`). */
export const listEvents = (
  organizationId: string,
  filter: EventLogFilter,
  query: Paging.ListQuery
): Effect.Effect<Paging.ListEnvelope<LoggedEvent>, Problem.ApiError, Store.Store> => {
  const scope = Tenancy.scopeOf(organizationId, "sandbox")
  const { resourceId, type } = filter
  const [order, partition] = resourceId !== undefined && type !== undefined
    ? ["sandboxByResourceType", `${scope}|resourceId=${resourceId}|type=${type}`]
    : resourceId !== undefined
    ? ["sandboxByResource", `${scope}|resourceId=${resourceId}`]
    : type !== undefined
    ? ["sandboxByType", `${scope}|type=${type}`]
    : ["byScope", scope]
  return Paging.listPage(Outbox.OutboxEvents, { order, partition, query, toWire: loggedEventToWire })
}
