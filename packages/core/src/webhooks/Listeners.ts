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
 * - The hub holding the waiting polls and the attempts in flight is this process's memory. With several processes
 *   sharing a PostgreSQL store, an attempt is made by the process whose timer fired, and reaches the client only if
 *   that client polls the same process; otherwise the attempt fails as not connected and is retried on the timetable
 *   (docs/listen.md says how to run it: one process, or the CLI pointed at each).
 * - Bounds: `maxListenersPerSandbox` listeners per sandbox; a poll hands over at most `maxRequestsPerPoll`; the
 *   attempts in flight are bounded by the delivery worker's pool, each ending within the receiver limit.
 *
 * Real time throughout (the RealClock): a client's wait and the receiver's limit are the developer's seconds,
 * whatever clock the sandbox runs on.
 */
import {
  listenerPollWaitMs,
  listenerUrlScheme,
  maxListenersPerSandbox,
  maxRequestsPerPoll,
  type Subscription
} from "@fos/contract"
import { Clock, Context, Deferred, Duration, Effect } from "effect"
import type * as Auth from "../tenancy/Auth.ts"
import * as Endpoints from "./Endpoints.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Transport from "./Transport.ts"

/** How long after a poll answers its listener still counts as connected. */
export const connectedGraceMs = 10_000

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

interface InFlight {
  readonly request: Transport.DeliveryRequest
  readonly outcome: Deferred.Deferred<Report>
}

interface Connection {
  /** Attempts not yet handed to a poll, oldest first. */
  readonly queue: Array<InFlight>
  /** Attempts queued or handed over, waiting for their report, by attempt id. */
  readonly inFlight: Map<string, InFlight>
  /** The polls waiting now, woken when an attempt comes. */
  readonly wakers: Set<Deferred.Deferred<void>>
  /** When the last poll answered (real time); -Infinity before any. */
  lastAnsweredMs: number
}

export interface ListenerHubService {
  /** The transport's side: hands the attempt to the listener's client and waits for its report. */
  readonly deliver: (listenerId: string, request: Transport.DeliveryRequest) => Effect.Effect<{ readonly status: number; readonly latencyMs: number }, Transport.TransportError>
  /** The client's side: the attempts waiting, after waiting up to `waitMs` for one. */
  readonly poll: (listenerId: string, waitMs: number) => Effect.Effect<ReadonlyArray<Transport.DeliveryRequest>>
  /** The client's report of an attempt; false when the attempt is no longer waiting for one. */
  readonly report: (listenerId: string, attemptId: string, report: Report) => Effect.Effect<boolean>
  /** Forgets a deleted listener's connection. */
  readonly forget: (listenerId: string) => Effect.Effect<void>
  /**
   * Answers every waiting poll now, and every later one at once: a server stopping calls it before it waits for
   * its requests in flight, which a poll waiting 20 seconds would otherwise hold up.
   */
  readonly close: Effect.Effect<void>
}

/** This process's listener connections (the engine's: Engine.ts builds one). */
export class ListenerHub extends Context.Service<ListenerHub, ListenerHubService>()("fos/ListenerHub") {}

export const makeHub = (realClock: Clock.Clock): ListenerHubService => {
  const connections = new Map<string, Connection>()
  let closed = false
  const realNow = () => realClock.currentTimeMillisUnsafe()
  const connectionOf = (id: string): Connection => {
    let c = connections.get(id)
    if (c === undefined) {
      c = { queue: [], inFlight: new Map(), wakers: new Set(), lastAnsweredMs: -Infinity }
      connections.set(id, c)
    }
    return c
  }
  const connected = (c: Connection | undefined): c is Connection =>
    c !== undefined && (c.wakers.size > 0 || realNow() - c.lastAnsweredMs <= connectedGraceMs)
  return {
    deliver: (listenerId, request) =>
      Effect.suspend(() => {
        const c = connections.get(listenerId)
        if (!connected(c)) {
          return Effect.fail(new Transport.TransportError({ message: "connection refused: no fos listen is polling this listener (on the server process that made the attempt)" }))
        }
        const item: InFlight = { request, outcome: Deferred.makeUnsafe<Report>() }
        c.queue.push(item)
        c.inFlight.set(request.attemptId, item)
        for (const waker of c.wakers) Deferred.doneUnsafe(waker, Effect.void)
        // Dispatch's receiver limit interrupts the wait; the attempt then leaves the queue unforwarded.
        return Deferred.await(item.outcome).pipe(
          Effect.ensuring(Effect.sync(() => {
            c.inFlight.delete(request.attemptId)
            const at = c.queue.indexOf(item)
            if (at >= 0) c.queue.splice(at, 1)
          })),
          Effect.flatMap((report) =>
            report.status === undefined
              ? Effect.fail(new Transport.TransportError({ message: report.error ?? "the local receiver did not answer" }))
              : Effect.succeed({ status: report.status, latencyMs: report.latencyMs })
          )
        )
      }),
    poll: (listenerId, waitMs) =>
      Effect.suspend(() => {
        const c = connectionOf(listenerId)
        const take = Effect.sync(() => c.queue.splice(0, maxRequestsPerPoll).map((item) => item.request))
        if (c.queue.length > 0 || closed) return Effect.ensuring(take, Effect.sync(() => (c.lastAnsweredMs = realNow())))
        const waker = Deferred.makeUnsafe<void>()
        c.wakers.add(waker)
        return Effect.raceFirst(Deferred.await(waker), Effect.sleep(Duration.millis(waitMs))).pipe(
          Effect.provideService(Clock.Clock, realClock),
          Effect.ensuring(Effect.sync(() => {
            c.wakers.delete(waker)
            c.lastAnsweredMs = realNow()
          })),
          Effect.andThen(take)
        )
      }),
    report: (listenerId, attemptId, report) =>
      Effect.sync(() => {
        const item = connections.get(listenerId)?.inFlight.get(attemptId)
        if (item === undefined) return false
        return Deferred.doneUnsafe(item.outcome, Effect.succeed(report))
      }),
    close: Effect.sync(() => {
      closed = true
      for (const c of connections.values()) for (const waker of c.wakers) Deferred.doneUnsafe(waker, Effect.void)
    }),
    forget: (listenerId) =>
      Effect.sync(() => {
        const c = connections.get(listenerId)
        if (c === undefined || c.inFlight.size > 0 || c.wakers.size > 0) return
        connections.delete(listenerId)
      })
  }
}

/**
 * The transport with listeners in front: an attempt to a listener's endpoint goes to its client through `hub`;
 * every other attempt goes to `transport` unchanged.
 */
export const withListeners = (hub: ListenerHubService, transport: Transport.WebhookTransportService): Transport.WebhookTransportService => ({
  send: (request) => (isListenerUrl(request.url) ? hub.deliver(listenerIdOf(request.url), request) : transport.send(request))
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
    let from: Store.Position | undefined = undefined
    while (true) {
      const page: ReadonlyArray<Endpoints.WebhookEndpoint> = yield* store.page(Endpoints.WebhookEndpoints, { order: "live", partition, descending: false, backward: false, from, limit: 100 })
      count += page.filter((e) => isListenerUrl(e.url)).length
      if (page.length < 100) return count
      const last = page.at(-1)!
      from = { sort: last.createdAt, key: last.id }
    }
  })

/** Creates a listener: a webhook endpoint at `fos-listen://{id}`, answered with its secret (once). */
export const create = (caller: Auth.Caller, input: { readonly subscription?: Subscription }) =>
  Effect.gen(function*() {
    const held = yield* countListeners(caller)
    if (held >= maxListenersPerSandbox) {
      return yield* Problem.apiError("CONFLICT", `This sandbox holds ${held} webhook listeners, the most it may keep.`, {
        resolution: "Delete a listener's endpoint (DELETE /v2/webhooks/endpoints/{id}; its URL starts with fos-listen://) before creating another."
      })
    }
    return yield* Endpoints.insert(caller, listenerUrl, input.subscription)
  })

/** The attempts to forward, after waiting up to `listenerPollWaitMs` for one. */
export const poll = (caller: Auth.Caller, id: string) =>
  Effect.gen(function*() {
    const hub = yield* ListenerHub
    const endpoint = yield* findListener(caller, id)
    if (endpoint.deletedAt !== undefined) {
      yield* hub.forget(id)
      return yield* Problem.apiError("GONE", "The listener's endpoint was deleted; it receives nothing more. Create a new listener.")
    }
    const requests = yield* hub.poll(id, listenerPollWaitMs)
    return {
      requests: requests.map((r) => ({ attemptId: r.attemptId, deliveryId: r.deliveryId, headers: { ...r.headers }, body: r.body }))
    }
  })

/** Records the local receiver's answer to a forwarded attempt, if the attempt still waits for it. */
export const report = (caller: Auth.Caller, id: string, attemptId: string, outcome: Report) =>
  Effect.gen(function*() {
    const hub = yield* ListenerHub
    yield* findListener(caller, id)
    return { recorded: yield* hub.report(id, attemptId, outcome) }
  })
