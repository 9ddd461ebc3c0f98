/**
 * What is pending in a sandbox (`GET /sandbox/v2/simulate/timers`): its durable timers, soonest first, each with the
 * resource it belongs to and what firing it will do, in words.
 *
 * Every deadline of the engine is a timer row (kernel/Timers.ts) carrying its kind, its scope, the resource it
 * belongs to and the payload its handler reads. What firing it does, in words, is its kind's `action`, declared with
 * its handler in its domain's descriptor (kernel/Domain.ts) and read from the engine's registry; a kind declared by
 * name alone (a host's own, `EngineOptions.timerHandlers`) "fires a <kind> timer".
 */
import { type Environment, toIso } from "@fos/contract"
import { Effect } from "effect"
import * as Paging from "../kernel/Paging.ts"
import type * as Problem from "../kernel/Problem.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Timers from "../kernel/Timers.ts"
import * as Transactions from "../money/Transactions.ts"

/** A pending timer as the list shows it. */
export interface PendingTimer {
  readonly id: string
  readonly kind: string
  readonly dueAt: string
  /** The resource the deadline belongs to; omitted when it belongs to none (an idempotency key's retention). */
  readonly resourceId?: string
  /** What firing it will do, e.g. "settles payout txn_… on ach". */
  readonly action: string
}

/** ` on ach`, ` on base`: where a transaction's money moves, when it names it. */
const routeOf = (transactionId: string): Effect.Effect<string, never, Store.Store> =>
  Effect.map(Effect.flatMap(Store.Store, (store) => store.get(Transactions.Transactions, transactionId)), (t) => {
    const route = t?.route
    if (route !== undefined) return ` on ${"rail" in route ? route.rail : route.chain}`
    return t?.payoutRail ? ` on ${t.payoutRail}` : ""
  })

/**
 * A timer as the list shows it: its resource, and its sentence from the handling its kind's descriptor declares. A
 * timer kept for want of a handler says so; one whose payload its kind's schema refused says why.
 */
export const describeTimer = (timer: Timers.Timer): Effect.Effect<PendingTimer, never, Store.Store | Timers.TimerHandlers> =>
  Effect.gen(function*() {
    const handling = (yield* Timers.TimerHandlers).get(timer.kind)
    const resourceId = Timers.resourceIdOf(timer)
    const route = resourceId !== undefined && handling?.kind.resource === "transactionId" ? yield* routeOf(resourceId) : ""
    const action = timer.unhandled === true
      ? timer.keptBecause === undefined
        ? `is kept, not fired: this engine has no handler for ${timer.kind} timers (the first engine on this store that has one fires it)`
        : `is kept, not fired: ${timer.keptBecause}`
      : handling === undefined
      ? `fires a ${timer.kind} timer`
      : handling.action(resourceId ?? "", timer.payload, route)
    return {
      id: timer.id,
      kind: timer.kind,
      dueAt: toIso(timer.dueAtMs),
      ...(resourceId === undefined ? {} : { resourceId }),
      action
    }
  })

/**
 * One page of an organization's pending timers in one environment, soonest first (`sortOrder=desc`: latest first).
 * The engine's housekeeping (an idempotency key's retention: `Timer.housekeeping`) is left out unless
 * `includeHousekeeping`: in a tester's journey it was eight timers of nine, all 30 days out, and drowned the world's.
 * The two are orders of their own (`byScope`, `worldByScope`), so pages are full and `total` counts what is listed.
 */
export const list = (
  organizationId: string,
  environment: Environment,
  query: Paging.ListQuery,
  options: { readonly includeHousekeeping?: boolean } = {}
): Effect.Effect<Paging.ListEnvelope<PendingTimer>, Problem.ApiError, Store.Store | Timers.TimerHandlers> =>
  Effect.gen(function*() {
    const page = yield* Paging.listPage(Timers.Timers, {
      order: options.includeHousekeeping === true ? "byScope" : "worldByScope",
      partition: Tenancy.scopeOf(organizationId, environment),
      query,
      toWire: (t: Timers.Timer) => t
    })
    return { data: yield* Effect.forEach(page.data, describeTimer), meta: page.meta }
  })
