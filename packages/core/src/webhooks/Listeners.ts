/**
 * Webhook listeners (sandbox only): what `fos listen --forward-to URL` stands on (docs/listen.md). The spec sends
 * webhooks to "registered HTTPS endpoints"; a developer's receiver on their own machine is neither HTTPS nor
 * reachable from a server elsewhere, and the address rules (AddressRules.ts) rightly refuse it. A listener is a
 * webhook endpoint whose attempts are not sent over HTTP at all: the transport hands each signed request to the
 * client that polls the listener, which forwards it to the local receiver and reports the receiver's answer back,
 * and that answer is recorded as the attempt's result. Everything else is an ordinary endpoint's: fan-out, the
 * signature, the retry timetable (30 s, 2 min, 15 min, 1 h), the deliveries list, deletion.
 *
 * - Its URL is `fos-listen://{id}`. The scheme marks it: `POST /v2/webhooks/endpoints` accepts only http(s), so no
 *   ordinary endpoint can carry it, and the server never connects anywhere for it, so the address rules have
 *   nothing to check and stay as strict as they are for every other endpoint.
 * - Connected: while a poll waits, and for `connectedGraceMs` after one answers (the client forwards, reports, then
 *   polls again). An attempt made while no client is connected fails at once, as a refused connection would; one
 *   whose report does not come within the receiver limit (Dispatch's 5 seconds) is a timeout.
 * - The hand-off goes through the store, so that several processes sharing a PostgreSQL store work: the attempt is
 *   made by whichever process's timer fires, the client polls whichever process it reaches. The process making the
 *   attempt writes it (`ListenerAttempts`), a poll takes it, the report is written back on it, and the attempt's
 *   wait reads it and removes it. Within one process a cue wakes the other side at once (`ListenerHub`); across
 *   processes each side looks again every 250 ms (a poll) or 25 ms (an attempt waiting for its report).
 *   Whether a client is connected is in the store too (`ListenerPresences`).
 * - Bounds: `maxListenersPerSandbox` listeners per sandbox; a poll hands over at most `maxRequestsPerPoll`; the
 *   attempts in flight are bounded by the delivery worker's pool, each ending within the receiver limit, its row
 *   removed then (or, left by a process that stopped, by the next create's sweep); one presence row per listener.
 *
 * Real time throughout (the RealClock): a client's wait and the receiver's limit are the developer's seconds,
 * whatever clock the sandbox runs on.
 */
import {
  type Environment,
  listenerPollWaitMs,
  listenerUrlScheme,
  maxListenersPerSandbox,
  maxRequestsPerPoll,
  type Subscription
} from "@fos/contract"
import { Clock, Context, Deferred, Duration, Effect } from "effect"
import type * as Auth from "../tenancy/Auth.ts"
import * as Domain from "../kernel/Domain.ts"
import * as Endpoints from "./Endpoints.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Transport from "./Transport.ts"

/** How long after a poll answers its listener still counts as connected. */
export const connectedGraceMs = 10_000

/** How often a waiting poll looks in the store for attempts another process made. */
const pollStoreEveryMs = 250

/** How often an attempt waiting for its report looks in the store for one another process recorded. */
const reportStoreEveryMs = 25

/** A listener endpoint's URL. */
export const listenerUrl = (id: string): string => `${listenerUrlScheme}//${id}`

/** Whether an endpoint's URL is a listener's. */
export const isListenerUrl = (url: string): boolean => url.startsWith(listenerUrlScheme)

/** The endpoint id in a listener's URL. */
const listenerIdOf = (url: string): string => url.slice(listenerUrlScheme.length + 2)

/** What the client reported of one forwarded attempt. */
export interface Report {
  readonly status?: number | undefined
  readonly latencyMs: number
  readonly error?: string | undefined
}

/**
 * An attempt handed to a listener: written by the process that makes the attempt, taken by the process its client
 * polls, reported there, read back by the first. Removed when the attempt ends, answered or not.
 */
export interface ListenerAttempt {
  /** The attempt's id (wda_). */
  readonly id: string
  readonly listenerId: string
  readonly organizationId: string
  readonly environment: Environment
  readonly deliveryId: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** When it was handed over, in real time. */
  readonly createdMs: number
  readonly state: "waiting" | "taken" | "reported"
  readonly report: Report | undefined
}

export const ListenerAttempts = Store.table<ListenerAttempt>({
  name: "webhook_listener_attempts",
  key: (a) => a.id,
  orders: {
    /** The attempts no poll has taken yet, oldest first. */
    waiting: { partition: (a) => (a.state === "waiting" ? a.listenerId : undefined), sort: (a) => a.createdMs, counted: false },
    byScope: { partition: (a) => Tenancy.scopeOf(a.organizationId, a.environment), sort: (a) => a.createdMs, counted: false }
  }
})

/** Until when a listener counts as connected (real time): set by its polls, read by the process making an attempt. */
export interface ListenerPresence {
  /** The listener's endpoint id. */
  readonly id: string
  readonly organizationId: string
  readonly environment: Environment
  readonly connectedUntilMs: number
}

export const ListenerPresences = Store.table<ListenerPresence>({
  name: "webhook_listener_presence",
  key: (p) => p.id,
  orders: { byScope: { partition: (p) => Tenancy.scopeOf(p.organizationId, p.environment), sort: (p) => p.id, counted: false } }
})

/** A sandbox's listener attempts in flight and its clients' presence, which a reset removes and a snapshot skips. */
export const domain = Domain.make({
  name: "webhooks/Listeners",
  tables: [
    // A listener's attempts in flight and its client's presence (webhooks/Listeners.ts) live only as long as a
    // connection does: a snapshot saves neither.
    { ...Domain.inScope(ListenerAttempts, "byScope"), saved: false },
    { ...Domain.inScope(ListenerPresences, "byScope"), saved: false }
  ]
})

/**
 * This process's side of the hand-off: cues, so that a poll or an attempt waiting in this process hears at once of
 * what this process wrote, instead of at its next look in the store. What other processes write is found by looking.
 */
export interface ListenerHubService {
  /** Cues the polls of `listenerId` waiting in this process. */
  readonly cuePolls: (listenerId: string) => void
  /** Waits for a cue to a poll of `listenerId`, or for `ms` of real time. */
  readonly awaitPollCue: (listenerId: string, ms: number) => Effect.Effect<void>
  /** Cues the attempt `attemptId` waiting for its report in this process. */
  readonly cueReport: (attemptId: string) => void
  /** Waits for a cue to the attempt `attemptId`, or for `ms` of real time. */
  readonly awaitReportCue: (attemptId: string, ms: number) => Effect.Effect<void>
  /** Real time now. */
  readonly now: () => number
  /** True once the server is stopping: polls answer at once. */
  readonly closed: () => boolean
  /**
   * Answers every waiting poll now, and every later one at once: a server stopping calls it before it waits for
   * its requests in flight, which a poll waiting 20 seconds would otherwise hold up.
   */
  readonly close: Effect.Effect<void>
}

/** This process's listener cues (the engine's: Engine.ts builds one). */
export class ListenerHub extends Context.Service<ListenerHub, ListenerHubService>()("fos/ListenerHub") {}

export const makeHub = (realClock: Clock.Clock): ListenerHubService => {
  const pollCues = new Map<string, Set<Deferred.Deferred<void>>>()
  const reportCues = new Map<string, Deferred.Deferred<void>>()
  let closed = false
  const sleep = (ms: number) => Effect.sleep(Duration.millis(ms)).pipe(Effect.provideService(Clock.Clock, realClock))
  return {
    cuePolls: (listenerId) => {
      for (const cue of pollCues.get(listenerId) ?? []) Deferred.doneUnsafe(cue, Effect.void)
    },
    awaitPollCue: (listenerId, ms) =>
      Effect.suspend(() => {
        if (closed) return Effect.void
        const cue = Deferred.makeUnsafe<void>()
        const set = pollCues.get(listenerId) ?? new Set()
        set.add(cue)
        pollCues.set(listenerId, set)
        return Effect.raceFirst(Deferred.await(cue), sleep(ms)).pipe(Effect.ensuring(Effect.sync(() => {
          set.delete(cue)
          if (set.size === 0) pollCues.delete(listenerId)
        })))
      }),
    cueReport: (attemptId) => {
      const cue = reportCues.get(attemptId)
      if (cue !== undefined) Deferred.doneUnsafe(cue, Effect.void)
    },
    awaitReportCue: (attemptId, ms) =>
      Effect.suspend(() => {
        const cue = Deferred.makeUnsafe<void>()
        reportCues.set(attemptId, cue)
        return Effect.raceFirst(Deferred.await(cue), sleep(ms)).pipe(Effect.ensuring(Effect.sync(() => {
          if (reportCues.get(attemptId) === cue) reportCues.delete(attemptId)
        })))
      }),
    now: () => realClock.currentTimeMillisUnsafe(),
    closed: () => closed,
    close: Effect.sync(() => {
      closed = true
      for (const set of pollCues.values()) for (const cue of set) Deferred.doneUnsafe(cue, Effect.void)
    })
  }
}

const refused = () => new Transport.TransportError({ message: "connection refused: no fos listen is polling this listener" })

/**
 * The transport's side: hands the attempt to the listener's client through the store and waits for its report,
 * until Dispatch's receiver limit interrupts the wait. The attempt's row goes when the wait ends, answered or not.
 */
const deliver = (
  hub: ListenerHubService,
  store: Store.StoreService,
  listenerId: string,
  request: Transport.DeliveryRequest
): Effect.Effect<{ readonly status: number; readonly latencyMs: number }, Transport.TransportError> =>
  Effect.gen(function*() {
    const presence = yield* store.get(ListenerPresences, listenerId)
    if (presence === undefined || presence.connectedUntilMs < hub.now()) return yield* refused()
    // A lease's second send of the same attempt replaces what the first left.
    yield* store.remove(ListenerAttempts, request.attemptId)
    yield* Effect.orDie(store.insert(ListenerAttempts, {
      id: request.attemptId,
      listenerId,
      organizationId: presence.organizationId,
      environment: presence.environment,
      deliveryId: request.deliveryId,
      headers: request.headers,
      body: request.body,
      createdMs: hub.now(),
      state: "waiting",
      report: undefined
    }))
    hub.cuePolls(listenerId)
    while (true) {
      const row = yield* store.get(ListenerAttempts, request.attemptId)
      // Gone: the sandbox was reset meanwhile.
      if (row === undefined) return yield* new Transport.TransportError({ message: "the listener's attempt was removed before it was answered" })
      const report = row.report
      if (row.state === "reported" && report !== undefined) {
        if (report.status === undefined) return yield* new Transport.TransportError({ message: report.error ?? "the local receiver did not answer" })
        return { status: report.status, latencyMs: report.latencyMs }
      }
      yield* hub.awaitReportCue(request.attemptId, reportStoreEveryMs)
    }
  }).pipe(Effect.ensuring(store.remove(ListenerAttempts, request.attemptId)))

/**
 * The transport with listeners in front: an attempt to a listener's endpoint goes to its client through the store
 * the send runs with (the timer's); every other attempt goes to `transport` unchanged.
 */
export const withListeners = (hub: ListenerHubService, transport: Transport.WebhookTransportService): Transport.WebhookTransportService => ({
  send: (request) =>
    !isListenerUrl(request.url)
      ? transport.send(request)
      : Effect.flatMap(Effect.serviceOption(Store.Store), (store) =>
        store._tag === "None" ? Effect.fail(refused()) : deliver(hub, store.value, listenerIdOf(request.url), request))
})

// --- the API's side ----------------------------------------------------------------------------------------------

const notAListener = () =>
  Problem.apiError("WEBHOOK_ENDPOINT_NOT_FOUND", "No webhook listener with this id exists in this organization's sandbox (an ordinary endpoint is not a listener).")

/** A listener endpoint of the caller's: 404 for an unknown id or an ordinary endpoint, 410 once deleted. */
const findListener = (caller: Auth.Caller, id: string) =>
  Effect.gen(function*() {
    const endpoint = yield* Endpoints.findEndpoint(caller, id)
    if (!isListenerUrl(endpoint.url)) return yield* notAListener()
    return endpoint
  })

/** How many listeners the caller's sandbox holds (its undeleted endpoints with a listener's URL). */
const countListeners = (caller: Auth.Caller) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const partition = Tenancy.scopeOf(caller.organization.id, caller.environment)
    let count = 0
    yield* Store.walk(store, Endpoints.WebhookEndpoints, { order: "live", partition }, (e) => Effect.sync(() => isListenerUrl(e.url) && count++))
    return count
  })

/**
 * Removes what listeners left behind in the caller's sandbox: the presence of listeners whose endpoint is deleted,
 * and attempts older than the receiver limit (a process stopped while it waited for their report). Run at each
 * create, so that both stay about as many as the listeners (at most `maxListenersPerSandbox`) and their attempts in
 * flight.
 */
const sweep = (caller: Auth.Caller, nowMs: number) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const partition = Tenancy.scopeOf(caller.organization.id, caller.environment)
    const page = { partition, descending: false, backward: false, from: undefined, limit: 100 } as const
    for (const presence of yield* store.page(ListenerPresences, { ...page, order: "byScope" })) {
      const endpoint = yield* store.get(Endpoints.WebhookEndpoints, presence.id)
      if (endpoint === undefined || endpoint.deletedAt !== undefined) yield* store.remove(ListenerPresences, presence.id)
    }
    for (const attempt of yield* store.page(ListenerAttempts, { ...page, order: "byScope" })) {
      if (attempt.createdMs < nowMs - staleAfterMs) yield* store.remove(ListenerAttempts, attempt.id)
    }
  })

/** How old an attempt's row is when nothing waits for it any more: the receiver limit, and some. */
const staleAfterMs = 60_000

/** Creates a listener: a webhook endpoint at `fos-listen://{id}`, answered with its secret (once). */
export const create = (caller: Auth.Caller, input: { readonly subscription?: Subscription }) =>
  Effect.gen(function*() {
    const hub = yield* ListenerHub
    yield* sweep(caller, hub.now())
    const held = yield* countListeners(caller)
    if (held >= maxListenersPerSandbox) {
      return yield* Problem.apiError("CONFLICT", `This sandbox holds ${held} webhook listeners, the most it may keep.`, {
        resolution: "Delete a listener's endpoint (DELETE /v2/webhooks/endpoints/{id}; its URL starts with fos-listen://) before creating another."
      })
    }
    return yield* Endpoints.insert(caller, listenerUrl, input.subscription)
  })

/** Marks the listener connected until `untilMs`. */
const present = (store: Store.StoreService, caller: Auth.Caller, id: string, untilMs: number) =>
  Effect.gen(function*() {
    const row: ListenerPresence = { id, organizationId: caller.organization.id, environment: caller.environment, connectedUntilMs: untilMs }
    const inserted = yield* Effect.result(store.insert(ListenerPresences, row))
    if (inserted._tag === "Failure") yield* Effect.orDie(store.update(ListenerPresences, row))
  })

/** Takes the listener's waiting attempts (at most `maxRequestsPerPoll`), dropping any left from a stopped process. */
const take = (store: Store.StoreService, id: string, nowMs: number) =>
  Effect.gen(function*() {
    const waiting = yield* store.page(ListenerAttempts, { order: "waiting", partition: id, descending: false, backward: false, from: undefined, limit: maxRequestsPerPoll })
    const taken: Array<ListenerAttempt> = []
    for (const candidate of waiting) {
      const row = yield* store.transaction(Effect.gen(function*() {
        const row = yield* store.getForUpdate(ListenerAttempts, candidate.id)
        if (row === undefined || row.state !== "waiting") return undefined
        if (row.createdMs < nowMs - staleAfterMs) {
          yield* store.remove(ListenerAttempts, row.id)
          return undefined
        }
        const next: ListenerAttempt = { ...row, state: "taken" }
        yield* Effect.orDie(store.update(ListenerAttempts, next))
        return next
      }))
      if (row !== undefined) taken.push(row)
    }
    return taken
  })

/**
 * The attempts to forward, after waiting up to `waitMs` (`listenerPollWaitMs` when not given) for one: cued at once
 * by an attempt this process makes, found within `pollStoreEveryMs` when another process made it.
 */
export const poll = (caller: Auth.Caller, id: string, waitMs: number = listenerPollWaitMs) =>
  Effect.gen(function*() {
    const hub = yield* ListenerHub
    const store = yield* Store.Store
    const endpoint = yield* findListener(caller, id)
    if (endpoint.deletedAt !== undefined) {
      yield* store.remove(ListenerPresences, id)
      return yield* Problem.apiError("GONE", "The listener's endpoint was deleted; it receives nothing more. Create a new listener.")
    }
    const deadline = hub.now() + waitMs
    yield* present(store, caller, id, deadline + connectedGraceMs)
    let taken: ReadonlyArray<ListenerAttempt> = []
    while (true) {
      taken = yield* take(store, id, hub.now())
      const left = deadline - hub.now()
      if (taken.length > 0 || left <= 0 || hub.closed()) break
      yield* hub.awaitPollCue(id, Math.min(pollStoreEveryMs, left))
    }
    yield* present(store, caller, id, hub.now() + connectedGraceMs)
    return {
      requests: taken.map((a) => ({ attemptId: a.id, deliveryId: a.deliveryId, headers: { ...a.headers }, body: a.body }))
    }
  })

/** Records the local receiver's answer to a forwarded attempt, if the attempt still waits for it. */
export const report = (caller: Auth.Caller, id: string, attemptId: string, outcome: Report) =>
  Effect.gen(function*() {
    const hub = yield* ListenerHub
    const store = yield* Store.Store
    yield* findListener(caller, id)
    const recorded = yield* store.transaction(Effect.gen(function*() {
      const row = yield* store.getForUpdate(ListenerAttempts, attemptId)
      if (row === undefined || row.listenerId !== id || row.state === "reported") return false
      yield* Effect.orDie(store.update(ListenerAttempts, { ...row, state: "reported", report: outcome }))
      return true
    }))
    // After the commit: the attempt, if it waits in this process, reads it at once.
    if (recorded) hub.cueReport(attemptId)
    return { recorded }
  })
