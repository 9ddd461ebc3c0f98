/**
 * A world: one organization's sandbox as a test sees it, over HTTP. The same calls reach an embedded engine (its
 * `fetch`, no port) and a running server (`fetch` over the network), so a helper written against a `World` runs
 * against either: the typed client with the organization's key, the sandbox's clock, its snapshots, its event log and
 * a webhook receiver of its own.
 *
 * Worlds come from `connect` (a key of a running server), `startEngine` (an embedded engine's one organization), and
 * `forkWorld` (a fork of a snapshot: a new organization holding the snapshot's world under new ids; `id()` maps a
 * fixture's id to the fork's). Each is only what its key reaches: two worlds on one server share nothing but the
 * server (docs/clock.md: each sandbox has its own clock).
 */
import { readFile, writeFile } from "node:fs/promises"
import type { CallOptions, PromiseClient } from "@fos/client"
import type { ClockAdvanced, EventType, Fork, LoggedEvent, Me, RecentRequest, Snapshot, SnapshotFile, WebhookFlush } from "@fos/contract"
import type { Duration } from "effect"
import { load } from "./Load.ts"
import type { Receiver, ReceiverOptions } from "./Receiver.ts"
import { createFork, createSnapshot, deleteFork, deleteSnapshot, type Fetch, globalFetch, requestJson, restoreSnapshot } from "./Requests.ts"

export type { Fetch } from "./Requests.ts"

/**
 * A length of time: milliseconds, as Effect's `Duration` writes it ("30 seconds", "15 minutes", "2 days"), or an ISO
 * 8601 duration in days, hours, minutes and seconds ("PT30S", "P1DT2H").
 */
export type DurationInput = Duration.Input | `P${string}`

const isoDuration = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d{1,3})?)S)?)?$/

/** An instant: ISO 8601 with its zone, a Date, or epoch milliseconds. */
export type Instant = string | number | Date

/**
 * A fork of a snapshot, as `POST /sandbox/v2/simulate/snapshots/{id}/fork` answers it: a new organization holding the
 * snapshot's world, its own key (shown once), and every id of the snapshot's world mapped to the fork's.
 */
export type { Fork }

export interface WaitForEventOptions {
  readonly type: EventType
  /** Only an event about this resource (the event log's `resourceId`: a `transaction.*` event's `transactionId`, …). */
  readonly resourceId?: string
  /** Only an event this accepts, among those of `type` (and `resourceId`). */
  readonly match?: (event: LoggedEvent) => boolean
  /**
   * Under a virtual clock: how far the sandbox's time may be moved to find it. The world steps its clock to each
   * next pending timer, in order, reading the log after each, until the event is there or the next timer is beyond
   * this. Without it, a virtual world is read once: nothing happens there until the clock moves.
   */
  readonly within?: DurationInput
  /** Under the system clock: how long to poll the log, in real time (5 seconds when omitted). */
  readonly timeoutMs?: number
  /**
   * Which events of the log count. Omitted, the whole log does, oldest first (in a suite, the fixture's events and
   * those of the file's set-up too). `"now"`: only an event logged after the wait began. An event (or its id): only
   * one logged after it.
   */
  readonly after?: "now" | string | Pick<LoggedEvent, "id">
  /**
   * Under a virtual clock, what a wait that finds nothing within `within` does with the steps it took: `"rewind"`
   * (the default) puts the sandbox back as the wait found it, its clock and everything its timers did, with a
   * snapshot taken before the first step (so the world must have room for one, docs/snapshots.md, "Bounds");
   * `"keep"` leaves the clock and what fired where the steps took them.
   */
  readonly onTimeout?: "rewind" | "keep"
}

/** A request a world sent (through its `client` or its `fetch`) that has had no answer yet. */
export interface PendingRequest {
  readonly method: string
  /** The path as sent, without the query string. */
  readonly path: string
  /** When it was sent, in real time (epoch milliseconds). */
  readonly sentAt: number
}

/**
 * Which requests of the service's request log to take (`requests`, `verify`): every member given must match. `path`
 * is the path without the base address (`/v2/customers/cus_…`), or a template as the OpenAPI document writes it
 * (`/v2/customers/{customerId}`), or a regular expression tried on it; `operationId` the OpenAPI document's
 * (`customers.get`); `since` keeps the requests answered at or after an instant of real time (the log's `time`).
 * `body` matches a request whose JSON body holds it: each member given, at any depth, equal (an object's other
 * members are free; an array must be equal whole). `replayed` takes only retries answered from an idempotency record
 * (true) or only the others (false).
 */
export interface RequestMatcher {
  readonly method?: string
  readonly path?: string | RegExp
  readonly operationId?: string
  readonly status?: number
  readonly body?: unknown
  readonly replayed?: boolean
  readonly since?: Instant
}

/**
 * How many requests `verify` wants: exactly `times`, or between `atLeast` and `atMost` (at least 1 when none is given).
 * The counts are of effects: a retry answered from the idempotency record of an earlier request (`replayed`) changed
 * nothing and is not counted, unless the matcher asks for retries (`replayed: true`), when the counts are of them.
 */
export interface VerifyCount {
  readonly times?: number
  readonly atLeast?: number
  readonly atMost?: number
  /**
   * How long to read the log again while too few match, in real time (1 second when omitted): another process
   * sharing a PostgreSQL store logs what it answered a round trip or two after its answer (docs/inspect.md).
   */
  readonly settleMs?: number
}

/** A restore's answer: the snapshot, and the requests of the world it waited for before restoring. */
export interface Restored extends Snapshot {
  readonly waitedFor: ReadonlyArray<PendingRequest>
}

export interface RestoreOptions {
  /**
   * How long to wait, in real time, for the world's requests still in flight before refusing to restore (30 seconds
   * when omitted): a request that lands after the restore would change the restored world.
   */
  readonly settleMs?: number
}

/** A receiver that a world registered as a webhook endpoint of its sandbox. */
export interface WorldReceiver extends Receiver {
  readonly endpointId: string
  /** The endpoint's signing secret, which the receiver verifies with. */
  readonly secret: string
}

export interface World<F = unknown> {
  /** The typed client (`@fos/client`), sending this world's key. */
  readonly client: PromiseClient
  /** `<origin>/sandbox`. */
  readonly baseUrl: string
  readonly apiKey: string
  readonly organizationId: string
  /** How requests are sent: the global `fetch`, or an embedded engine's. */
  readonly fetch: Fetch
  /** The fixture's data (what its build answered), its ids already this world's. */
  readonly fixture: F
  /** A fork's map of the snapshot's ids to its own; empty for a world that is no fork. */
  readonly ids: Readonly<Record<string, string>>
  /** This world's id for an id of the fixture (the fork's copy); the id itself when the world is no fork. */
  readonly id: (fixtureId: string) => string
  /** The sandbox clock's time, in epoch milliseconds. */
  readonly now: () => Promise<number>
  /** Moves the sandbox's clock forward (virtual clock), firing its timers due on the way; answers what it did. */
  readonly advance: (by: DurationInput) => Promise<ClockAdvanced>
  /** Moves the sandbox's clock forward to an instant. */
  readonly advanceTo: (instant: Instant) => Promise<ClockAdvanced>
  /** Saves the whole sandbox (docs/snapshots.md), with a label it carries and lists with when given. */
  readonly snapshot: (options?: { readonly label?: string }) => Promise<Snapshot>
  /**
   * Puts the sandbox back as the snapshot saved it (its clock too), and clears this world's receivers. It first waits
   * for the world's requests still in flight (`pending`: a request a test did not await), so that none lands in the
   * restored world, and answers them as `waitedFor`; one still in flight after `settleMs` refuses the restore, naming it.
   */
  readonly restore: (snapshotId: string, options?: RestoreOptions) => Promise<Restored>
  /** The requests this world sent that have had no answer yet, oldest first. */
  readonly pending: () => ReadonlyArray<PendingRequest>
  /**
   * The requests the sandbox answered that `matcher` takes, oldest first, from the service's request log
   * (`GET /sandbox/v2/simulate/requests`: its last 500, every process sharing the store included), whoever sent them;
   * the log's own reads are left out.
   */
  readonly requests: (matcher?: RequestMatcher) => Promise<ReadonlyArray<RecentRequest>>
  /**
   * Fails unless the request log holds as many requests as `count` asks that `matcher` takes, retries counted apart
   * (`VerifyCount`); answers every request it takes, retries included. Its error names, when none matched, the
   * request closest to the matcher and each member that differs.
   */
  readonly verify: (matcher: RequestMatcher, count?: VerifyCount) => Promise<ReadonlyArray<RecentRequest>>
  readonly deleteSnapshot: (snapshotId: string) => Promise<void>
  /**
   * The first event of a type (about a resource) in the sandbox's event log (`GET /sandbox/v2/simulate/events`). It
   * reads the log, which holds every event emitted, subscribed or not, so no real time need pass under a virtual
   * clock: there, what has not happened waits for the clock, which `within` moves (see `WaitForEventOptions`).
   */
  readonly waitForEvent: (options: WaitForEventOptions) => Promise<LoggedEvent>
  /** Waits until every delivery due or in flight has had its attempt (`POST /sandbox/v2/simulate/webhooks/flush`). */
  readonly flushWebhooks: () => Promise<WebhookFlush>
  /**
   * Starts an in-process receiver (`startReceiver`) and registers it as a webhook endpoint of this sandbox (every
   * event type, or `eventTypes`), with the endpoint's secret to verify with. The server must allow loopback webhook
   * URLs (`--insecure-webhooks`; `startEngine` does). Closed with the world.
   */
  readonly startReceiver: (options?: { readonly eventTypes?: ReadonlyArray<EventType> } & Omit<ReceiverOptions, "secret">) => Promise<WorldReceiver>
  /** Closes this world's receivers. */
  readonly close: () => Promise<void>
}

// --- requests ----------------------------------------------------------------------------------------------------

/**
 * Milliseconds of a duration, whole and not negative. Effect's `Duration` reads what is not ISO 8601, loaded at the
 * first such duration: a test file that never moves the clock loads none of Effect.
 */
const durationMs = async (input: DurationInput, what: string): Promise<number> => {
  const iso = typeof input === "string" && input !== "P" && !input.endsWith("T") ? isoDuration.exec(input) : null
  let ms: number | undefined
  if (iso !== null) ms = ((Number(iso[1] ?? 0) * 24 + Number(iso[2] ?? 0)) * 60 + Number(iso[3] ?? 0)) * 60_000 + Math.round(Number(iso[4] ?? 0) * 1000)
  else if (!(typeof input === "string" && input.startsWith("P"))) {
    const { fromInput, toMillis } = await load(() => import("effect/Duration"))
    const duration = fromInput(input as Duration.Input)
    ms = duration._tag === "Some" ? toMillis(duration.value) : undefined
  }
  if (ms === undefined || !Number.isSafeInteger(ms) || ms < 0) {
    throw new RangeError(`${what}: ${JSON.stringify(input)} is not a whole, non-negative number of milliseconds ("30 seconds", "15 minutes", "PT15M", 900000)`)
  }
  return ms
}

const isoOf = (instant: Instant, what: string): string => {
  const ms = typeof instant === "string" ? Date.parse(instant) : typeof instant === "number" ? instant : instant.getTime()
  if (!Number.isFinite(ms)) throw new RangeError(`${what}: ${String(instant)} is not an instant`)
  return new Date(ms).toISOString()
}

/** `value` with every string that is a key of `ids` replaced by its value, through arrays and plain objects. */
export const translateIds = <A>(value: A, ids: Readonly<Record<string, string>>): A => {
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return Object.hasOwn(ids, v) ? ids[v] : v
    if (Array.isArray(v)) return v.map(walk)
    if (typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype) {
      return Object.fromEntries(Object.entries(v).map(([k, inner]) => [k, walk(inner)]))
    }
    return v
  }
  return walk(value) as A
}

/** A member a body does not have, as `bodyDifferences` reports it. */
const absent: unique symbol = Symbol("absent")

/**
 * Where `holds` does not hold `wanted`: each member of `wanted` (an object's, at any depth) that `holds` lacks or
 * holds otherwise, with its JSON pointer-like place (`body.amount.value`). An array or a scalar must be equal whole.
 */
const bodyDifferences = (
  wanted: unknown,
  holds: unknown,
  at: string
): Array<{ readonly at: string; readonly holds: unknown; readonly wanted: unknown }> => {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)
  if (isObject(wanted)) {
    if (!isObject(holds)) return [{ at, holds, wanted }]
    return Object.entries(wanted).flatMap(([name, member]) =>
      Object.hasOwn(holds, name) ? bodyDifferences(member, holds[name], `${at}.${name}`) : [{ at: `${at}.${name}`, holds: absent, wanted: member }]
    )
  }
  return JSON.stringify(wanted) === JSON.stringify(holds) ? [] : [{ at, holds: holds === undefined ? absent : holds, wanted }]
}

// --- worlds ------------------------------------------------------------------------------------------------------

/** The most pages of the event log `waitForEvent` reads per look (100 events each). */
const maxEventPages = 100
/** The most timers `waitForEvent` steps the clock to. */
const maxTimerSteps = 1_000
/** How often `waitForEvent` reads the log under the system clock. */
const pollMs = 50
/** The label of the snapshot a wait takes to rewind with (`onTimeout`), which it deletes before it answers. */
export const waitLabel = "fos-testing role=wait"
/** How long a restore waits for the world's requests in flight, in real time, before refusing. */
const defaultSettleMs = 30_000

export interface WorldOptions<F = undefined> {
  /** `<origin>/sandbox`. */
  readonly baseUrl: string
  /** A read-write sandbox key. */
  readonly apiKey: string
  /** An embedded engine's `engine.fetch`; the global `fetch` when omitted. */
  readonly fetch?: Fetch
  /** The organization, when known (else read from `GET /v2/portal/users/me`). */
  readonly organizationId?: string
  /** A fork's ids. */
  readonly ids?: Readonly<Record<string, string>>
  /** The fixture's data, in the fixture's ids (translated with `ids`). */
  readonly fixture?: F
}

// --- the typed client, one per process -------------------------------------------------------------------------

/** The requests of one key sent through a `Channel` that have had no answer yet, and the `fetch` that keeps them. */
interface Tracker {
  readonly inFlight: Map<number, PendingRequest>
  readonly inFlightAnswers: Map<number, Promise<unknown>>
  readonly fetch: Fetch
}

/**
 * A base address and a way to send: the typed client over it, built once at its first call (building one costs tens
 * of milliseconds, more than a fork, and importing it some hundreds: `lazyClient`), and each key's requests in
 * flight. Every world of the process on the same address and `fetch` shares it: its client is the shared one sending
 * its key, and the shared client's requests are kept with the key they carry, so `pending` and a restore see the
 * world's own requests whichever of its clients sent them.
 */
interface Channel {
  readonly client: () => Promise<PromiseClient>
  readonly trackers: Map<string, Tracker>
  readonly send: Fetch
}

const channels = new Map<string, WeakMap<Fetch, Channel>>()

/** The `x-api-key` a request carries (the typed client sends headers as a plain record, a `fetch` caller as any `HeadersInit`). */
const keyOf = (input: Request | string | URL, init: RequestInit | undefined): string | undefined => {
  const headers = init?.headers ?? (input instanceof Request ? input.headers : undefined)
  if (headers === undefined) return undefined
  if (headers instanceof Headers) return headers.get("x-api-key") ?? undefined
  if (Array.isArray(headers)) return headers.find(([name]) => name.toLowerCase() === "x-api-key")?.[1]
  const record = headers as Record<string, string>
  return record["x-api-key"] ?? Object.entries(record).find(([name]) => name.toLowerCase() === "x-api-key")?.[1]
}

/** A `fetch` that keeps each request it sends until its answer's head arrives (`Tracker`). */
const makeTracker = (send: Fetch): Tracker => {
  const inFlight = new Map<number, PendingRequest>()
  const inFlightAnswers = new Map<number, Promise<unknown>>()
  let sent = 0
  const fetch: Fetch = (input, init) => {
    const n = sent++
    const url = input instanceof Request ? input.url : String(input)
    const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase()
    inFlight.set(n, { method, path: new URL(url, "http://fos").pathname, sentAt: Date.now() })
    let answer: Promise<Response>
    try {
      answer = send(input, init)
    } catch (error) {
      inFlight.delete(n)
      throw error
    }
    const settled = answer.finally(() => {
      inFlight.delete(n)
      inFlightAnswers.delete(n)
    })
    inFlightAnswers.set(n, settled)
    return settled
  }
  untracked.set(fetch, send)
  return { inFlight, inFlightAnswers, fetch }
}

/** A tracker's `fetch` to the `fetch` it sends with: a fork of a world sends as its parent does, tracked apart. */
const untracked = new WeakMap<Fetch, Fetch>()

/** How to send for a `fetch` given: a world's own (a tracker's) sends as the one it wraps, the global one when none. */
const sendOf = (fetch: Fetch | undefined): Fetch => (fetch === undefined ? globalFetch : untracked.get(fetch) ?? fetch)

const channelOf = (baseUrl: string, send: Fetch): Channel => {
  let bySend = channels.get(baseUrl)
  if (bySend === undefined) channels.set(baseUrl, (bySend = new WeakMap()))
  let channel = bySend.get(send)
  if (channel === undefined) {
    const trackers = new Map<string, Tracker>()
    const routed: Fetch = (input, init) => {
      const key = keyOf(input, init)
      const tracker = key === undefined ? undefined : trackers.get(key)
      return tracker === undefined ? send(input, init) : tracker.fetch(input, init)
    }
    let client: Promise<PromiseClient> | undefined
    channel = {
      client: () => (client ??= load(() => import("@fos/client")).then(({ createClient }) => createClient({ baseUrl, fetch: routed }))),
      trackers,
      send
    }
    bySend.set(send, channel)
  }
  return channel
}

const trackerOf = (channel: Channel, apiKey: string): Tracker => {
  let tracker = channel.trackers.get(apiKey)
  if (tracker === undefined) channel.trackers.set(apiKey, (tracker = makeTracker(channel.send)))
  return tracker
}

/**
 * The typed client sending `apiKey`, over the process's one client for `baseUrl` and `fetch`: a world, a fork or a
 * test file's own calls cost no client of their own.
 */
export const clientFor = (options: { readonly baseUrl: string; readonly apiKey: string; readonly fetch?: Fetch | undefined }): PromiseClient => {
  const channel = channelOf(options.baseUrl.replace(/\/+$/, ""), sendOf(options.fetch))
  trackerOf(channel, options.apiKey)
  return lazyClient(channel, { "x-api-key": options.apiKey })
}

type Method = (request: unknown, callOptions?: CallOptions) => Promise<unknown>
type Groups = Readonly<Record<string, Readonly<Record<string, Method>>>>

/**
 * The channel's client, sending `keyed` with every call, as the typed client it is (`client.customers.get(...)`)
 * but built at its first call: `@fos/client` is imported then, with the contract's every schema and Effect's HTTP
 * client (about 300 ms on Node, most of what the package costs a test file), so a file that calls fos only through
 * its world's own methods never loads it. Until then a group or a method is whatever is asked for (no `then`: it is
 * no promise); a name the API has not rejects at the call, as a call of a method that is not there would fail.
 * Once built, it is the built client's groups, keyed.
 */
const lazyClient = (channel: Channel, keyed: Readonly<Record<string, string>>): PromiseClient => {
  let built: Groups | undefined
  const build = () =>
    channel.client().then((client) => {
      const shared = client as unknown as Groups
      built ??= Object.fromEntries(Object.entries(shared).map(([group, methods]) => [
        group,
        Object.fromEntries(Object.entries(methods).map(([name, method]) => [
          name,
          (request: unknown, callOptions: CallOptions = {}) => method(request, { ...callOptions, headers: { ...callOptions.headers, ...keyed } })
        ]))
      ]))
      return built
    })
  const call = (group: string, name: string): Method => async (request, callOptions) => {
    const method = (await build())[group]?.[name]
    if (method === undefined) throw new TypeError(`client.${group}.${name} is not an operation of the API`)
    return method(request, callOptions)
  }
  const unbuilt = new Map<string, Readonly<Record<string, Method>>>()
  const groupOf = (group: string) => {
    let methods = unbuilt.get(group)
    if (methods === undefined) {
      const made = new Map<string, Method>()
      methods = new Proxy({} as Record<string, Method>, {
        get: (_, name) => {
          if (built !== undefined) return built[group]?.[name as string]
          if (typeof name !== "string" || name === "then" || name === "toJSON") return undefined
          let method = made.get(name)
          if (method === undefined) made.set(name, (method = call(group, name)))
          return method
        }
      })
      unbuilt.set(group, methods)
    }
    return methods
  }
  return new Proxy({} as Groups, {
    get: (_, group) => {
      if (built !== undefined) return built[group as string]
      if (typeof group !== "string" || group === "then" || group === "toJSON") return undefined
      return groupOf(group)
    },
    has: (_, group) => built !== undefined && group in built,
    ownKeys: () => (built === undefined ? [] : Reflect.ownKeys(built)),
    getOwnPropertyDescriptor: (_, group) => (built === undefined ? undefined : Reflect.getOwnPropertyDescriptor(built, group))
  }) as unknown as PromiseClient
}

/** A world over a key (see `connect`); the organization already known. */
export const makeWorld = <F = undefined>(options: WorldOptions<F> & { readonly organizationId: string }): World<F> => {
  const baseUrl = options.baseUrl.replace(/\/+$/, "")
  // Every request the world sends is known until its answer's head arrives (a streamed body does not hold it), so
  // that a restore can wait for what a test sent and did not await.
  const channel = channelOf(baseUrl, sendOf(options.fetch))
  const { inFlight, inFlightAnswers, fetch } = trackerOf(channel, options.apiKey)
  const pending = () => [...inFlight.values()]
  const client = clientFor({ baseUrl, apiKey: options.apiKey, ...(options.fetch === undefined ? {} : { fetch: options.fetch }) })
  const ids = options.ids ?? {}
  const organizationId = options.organizationId
  const receivers = new Set<Receiver>()
  // The world's own requests (`Requests.ts`) go over its tracked `fetch`, as its client's do.
  const self = { baseUrl, apiKey: options.apiKey, fetch }

  const readClock = () => client.simulate.clock()
  const now = async () => Date.parse((await readClock()).now)
  const advanceTo = (instant: Instant) => client.simulate.advanceClock({ payload: { to: isoOf(instant, "advanceTo") } })
  const advance = async (by: DurationInput) => {
    const ms = await durationMs(by, "advance")
    // Whole seconds as the endpoint takes them; a part of a second as the instant it leads to.
    return ms % 1000 === 0
      ? client.simulate.advanceClock({ payload: { seconds: ms / 1000 } })
      : advanceTo((await now()) + ms)
  }

  /** The first event of the log that `options` asks for, not among `skip` (the ids of events logged before it counts). */
  const findEvent = async (options: WaitForEventOptions, skip: ReadonlySet<string>): Promise<LoggedEvent | undefined> => {
    const wanted = (event: LoggedEvent) => !skip.has(event.id) && (options.match === undefined || options.match(event))
    let cursor: string | undefined
    for (let page = 0; page < maxEventPages; page++) {
      const { data, meta } = await client.inspect.listEvents({
        query: {
          type: options.type,
          limit: 100,
          ...(options.resourceId === undefined ? {} : { resourceId: options.resourceId }),
          ...(cursor === undefined ? {} : { cursor })
        }
      })
      const found = data.find(wanted)
      if (found !== undefined) return found
      if (meta.nextCursor === null || meta.nextCursor === undefined) return undefined
      cursor = meta.nextCursor
    }
    return undefined
  }

  /**
   * The ids of the events `after` rules out: every event of the type (and resource) in the log now, for `"now"`;
   * every event up to the one named, for an event, read from the start of the whole log.
   */
  const eventsBefore = async (options: WaitForEventOptions): Promise<ReadonlySet<string>> => {
    const seen = new Set<string>()
    if (options.after === undefined) return seen
    const marker = options.after === "now" ? undefined : typeof options.after === "string" ? options.after : options.after.id
    let cursor: string | undefined
    for (let page = 0; page < maxEventPages; page++) {
      const { data, meta } = await client.inspect.listEvents({
        query: {
          limit: 100,
          ...(marker !== undefined ? {} : { type: options.type }),
          ...(marker !== undefined || options.resourceId === undefined ? {} : { resourceId: options.resourceId }),
          ...(cursor === undefined ? {} : { cursor })
        }
      })
      for (const event of data) {
        seen.add(event.id)
        if (event.id === marker) return seen
      }
      if (meta.nextCursor === null || meta.nextCursor === undefined) break
      cursor = meta.nextCursor
    }
    if (marker !== undefined) throw new Error(`waitForEvent: after names ${marker}, which is not in ${organizationId}'s event log`)
    return seen
  }

  const waitForEvent = async (options: WaitForEventOptions): Promise<LoggedEvent> => {
    const what = `${options.type} event${options.resourceId === undefined ? "" : ` about ${options.resourceId}`}${options.match === undefined ? "" : " that matches"}` +
      (options.after === undefined ? "" : options.after === "now" ? " logged after the wait began" : ` logged after ${typeof options.after === "string" ? options.after : options.after.id}`)
    const skip = await eventsBefore(options)
    const first = await findEvent(options, skip)
    if (first !== undefined) return first
    const clock = await readClock()
    if (clock.mode === "virtual") {
      if (options.within === undefined) {
        throw new Error(
          `${organizationId}'s sandbox has no ${what} in its event log at ${clock.now}; its clock is virtual, so nothing happens ` +
            `until it moves: advance it, or pass within (such as "1 hour") to step it timer by timer`
        )
      }
      const horizon = Date.parse(clock.now) + (await durationMs(options.within, "waitForEvent within"))
      const rewind = options.onTimeout !== "keep"
      // Taken only once a step is due, so that a wait answered without one costs no snapshot.
      let saved: string | undefined
      const giveUp = async (message: string): Promise<never> => {
        if (saved !== undefined) {
          await client.simulate.restoreSnapshot({ params: { id: saved } })
          await client.simulate.deleteSnapshot({ params: { id: saved } })
          message += `; the sandbox is back as the wait found it, at ${clock.now} (onTimeout: "keep" leaves it where the steps took it)`
        }
        throw new Error(message)
      }
      try {
        for (let step = 0; step < maxTimerSteps; step++) {
          const next = (await client.inspect.listTimers({ query: { limit: 1 } })).data[0]
          if (next === undefined || Date.parse(next.dueAt) > horizon) {
            const after = next === undefined ? "no timer is pending" : `the next timer is due at ${next.dueAt}`
            return await giveUp(`${organizationId}'s sandbox emitted no ${what} by ${new Date(horizon).toISOString()} (${step} timers fired; ${after})`)
          }
          if (rewind && saved === undefined) saved = (await client.simulate.createSnapshot({ query: { label: waitLabel } })).id
          await advanceTo(Math.max(Date.parse(next.dueAt), Date.parse(clock.now)))
          const found = await findEvent(options, skip)
          if (found !== undefined) return found
        }
        return await giveUp(`${organizationId}'s sandbox emitted no ${what} in ${maxTimerSteps} timers`)
      } finally {
        // Found, or given up on: the wait's own snapshot goes (a rewind deleted it already).
        if (saved !== undefined) await client.simulate.deleteSnapshot({ params: { id: saved } }).catch(() => undefined)
      }
    }
    const timeoutMs = options.timeoutMs ?? 5_000
    const deadline = Date.now() + timeoutMs
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, pollMs))
      const found = await findEvent(options, skip)
      if (found !== undefined) return found
    }
    throw new Error(`${organizationId}'s sandbox emitted no ${what} within ${timeoutMs} ms`)
  }

  // The log's paths carry the base address (`/sandbox`, under the engine's base path); a matcher's do not.
  const basePath = new URL(baseUrl, "http://fos").pathname.replace(/\/+$/, "")
  const logReads = `${basePath}/v2/simulate/requests`
  const readLog = async (): Promise<Array<RecentRequest>> => {
    const all: Array<RecentRequest> = []
    let cursor: string | undefined
    for (let page = 0; page < 10; page++) {
      const { data, meta } = await client.inspect.listRecentRequests({ query: { limit: 100, ...(cursor === undefined ? {} : { cursor }) } })
      all.push(...data)
      if (meta.nextCursor === null || meta.nextCursor === undefined) break
      cursor = meta.nextCursor
    }
    return all.filter((r) => r.path !== logReads).reverse()
  }
  const pathOf = (r: RecentRequest) => (r.path.startsWith(`${basePath}/`) ? r.path.slice(basePath.length) : r.path)
  const bodyOf = (r: RecentRequest) => (r.body !== undefined ? r.body : r.bodyBytes === undefined ? undefined : `(a body of ${r.bodyBytes} bytes, too large to keep)`)
  /** The members of `matcher` that `r` does not match, each with what it holds. */
  const differences = (matcher: RequestMatcher, r: RecentRequest): Array<string> => {
    const differ: Array<string> = []
    if (matcher.method !== undefined && r.method !== matcher.method.toUpperCase()) differ.push(`method is ${r.method}, not ${matcher.method.toUpperCase()}`)
    if (matcher.path !== undefined) {
      const path = pathOf(r)
      const pattern = typeof matcher.path === "string"
        ? new RegExp(`^${matcher.path.split(/\{[^}/]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, "\\$&")).join("[^/]+")}$`)
        : matcher.path
      if (!pattern.test(path)) differ.push(`path is ${path}, not ${String(matcher.path)}`)
    }
    if (matcher.operationId !== undefined && r.operationId !== matcher.operationId) differ.push(`operationId is ${r.operationId ?? "none"}, not ${matcher.operationId}`)
    if (matcher.status !== undefined && r.status !== matcher.status) differ.push(`status is ${r.status}, not ${matcher.status}`)
    if (matcher.body !== undefined) {
      for (const { at, holds, wanted } of bodyDifferences(matcher.body, bodyOf(r), "body")) {
        differ.push(`${at} is ${holds === absent || holds === undefined ? "absent" : JSON.stringify(holds)}, not ${JSON.stringify(wanted)}`)
      }
    }
    if (matcher.replayed !== undefined && (r.replayed === true) !== matcher.replayed) differ.push(r.replayed === true ? "answer was replayed (a retry)" : "answer was not replayed (no retry)")
    if (matcher.since !== undefined && Date.parse(r.time) < Date.parse(isoOf(matcher.since, "since"))) differ.push(`it was answered at ${r.time}, before ${isoOf(matcher.since, "since")}`)
    return differ
  }
  const requests = async (matcher: RequestMatcher = {}) => (await readLog()).filter((r) => differences(matcher, r).length === 0)
  const verify = async (matcher: RequestMatcher, count: VerifyCount = {}) => {
    const atLeast = count.times ?? count.atLeast ?? (count.atMost === undefined ? 1 : 0)
    const atMost = count.times ?? count.atMost ?? Infinity
    const deadline = Date.now() + (count.settleMs ?? 1_000)
    // What is counted: effects, or the retries a matcher asks for (`VerifyCount`).
    const counted = (rs: ReadonlyArray<RecentRequest>) => (matcher.replayed === true ? rs : rs.filter((r) => r.replayed !== true))
    let log = await readLog()
    let matched = log.filter((r) => differences(matcher, r).length === 0)
    while (counted(matched).length < atLeast && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, pollMs))
      log = await readLog()
      matched = log.filter((r) => differences(matcher, r).length === 0)
    }
    const n = counted(matched).length
    if (n >= atLeast && n <= atMost) return matched
    const wanted = count.times !== undefined ? `exactly ${count.times}` : atMost === Infinity ? `at least ${atLeast}` : `${atLeast} to ${atMost}`
    const members = Object.entries(matcher).map(([k, v]) => `${k}: ${v instanceof RegExp ? String(v) : JSON.stringify(v)}`).join(", ")
    const retries = matched.length - n
    let message = `${organizationId}: ${n} requests match { ${members} }${retries === 0 ? "" : ` (and ${retries} retries replayed from their Idempotency-Key, not counted)`}, not ${wanted} (of the ${log.length} in the request log)`
    if (matched.length === 0 && log.length > 0) {
      // The closest: the fewest members that differ, the latest among equals.
      const closest = log.map((r) => ({ r, differ: differences(matcher, r) })).reduce((best, next) => (next.differ.length <= best.differ.length ? next : best))
      message += `; the closest is ${closest.r.method} ${pathOf(closest.r)} ${closest.r.status} at ${closest.r.time} (correlation id ${closest.r.correlationId}): its ${closest.differ.join("; its ")}`
    } else if (matched.length > 0) {
      message += `: ${matched.map((r) => `${r.method} ${pathOf(r)} ${r.status}${r.replayed === true ? " (replayed)" : ""} at ${r.time}`).join(", ")}`
    }
    throw new Error(message)
  }

  const restore = async (snapshotId: string, restoreOptions: RestoreOptions = {}): Promise<Restored> => {
    const waitedFor = pending()
    if (waitedFor.length > 0) {
      const settleMs = restoreOptions.settleMs ?? defaultSettleMs
      const settled = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), settleMs)
        const answers = [...inFlight.keys()].map((n) => inFlightAnswers.get(n)).filter((p) => p !== undefined)
        void Promise.allSettled(answers).then(() => {
          clearTimeout(timer)
          resolve(true)
        })
      })
      if (!settled) {
        const still = pending().filter((r) => waitedFor.includes(r)).map((r) => `${r.method} ${r.path}`)
        throw new Error(
          `${organizationId}: refusing to restore ${snapshotId} while ${still.join(", ")} is still in flight after ${settleMs} ms: ` +
            `its answer would land in the restored world. Await every request a test sends`
        )
      }
    }
    const restored = await restoreSnapshot(self, snapshotId)
    for (const receiver of receivers) receiver.clear()
    return { ...restored, waitedFor }
  }

  return {
    client,
    baseUrl,
    apiKey: options.apiKey,
    organizationId,
    fetch,
    fixture: translateIds(options.fixture as F, ids),
    ids,
    id: (fixtureId) => ids[fixtureId] ?? fixtureId,
    now,
    advance,
    advanceTo,
    snapshot: (snapshotOptions = {}) => createSnapshot(self, snapshotOptions.label),
    restore,
    pending,
    requests,
    verify,
    deleteSnapshot: (snapshotId) => deleteSnapshot(self, snapshotId),
    waitForEvent,
    flushWebhooks: () => client.simulate.flushWebhooks(),
    startReceiver: async (receiverOptions = {}) => {
      const { eventTypes, ...rest } = receiverOptions
      const { startReceiver } = await import("./Receiver.ts")
      const receiver = await startReceiver(rest)
      receivers.add(receiver)
      const endpoint = await client.webhooks.createEndpoint({
        payload: {
          url: receiver.url,
          ...(eventTypes === undefined ? {} : { subscription: { mode: "selected", eventTypes } })
        }
      })
      const secret = endpoint.secret!
      receiver.setSecret(secret)
      return { ...receiver, endpointId: endpoint.id, secret }
    },
    close: async () => {
      for (const receiver of receivers) await receiver.close()
      receivers.clear()
    }
  } satisfies World<F>
}

/** A world over a running server's sandbox key: `connect({ baseUrl: "http://127.0.0.1:4000/sandbox", apiKey })`. */
export const connect = async <F = undefined>(options: WorldOptions<F>): Promise<World<F>> => {
  if (options.organizationId !== undefined) return makeWorld({ ...options, organizationId: options.organizationId })
  const probe = makeWorld({ ...options, organizationId: "" })
  const me = await requestJson<Me>(probe, "GET", "/v2/portal/users/me")
  if (me.apiKey.environment !== "sandbox" || me.apiKey.access !== "read_write") {
    throw new TypeError(`connect: a read-write sandbox key is needed, not a ${me.apiKey.access} ${me.apiKey.environment} key`)
  }
  return makeWorld({ ...options, organizationId: me.organization.id })
}

// --- fixtures ----------------------------------------------------------------------------------------------------

/** A world saved to build the tests on: the snapshot, and what the build answered (ids the tests need). */
export interface Fixture<F = undefined> {
  readonly snapshotId: string
  readonly data: F
}

/**
 * Builds a world once and saves it: runs `build` in `world` (onboarding, funding, endpoints: anything through the
 * API), then snapshots the sandbox. `build`'s answer travels with the snapshot to every fork, its ids translated.
 * Give the engine a `randomSeed` and the same build makes the same ids every run.
 */
export const buildFixture = async <F>(world: World<unknown>, build: (world: World<unknown>) => Promise<F>): Promise<Fixture<F>> => {
  const data = await build(world)
  const snapshot = await world.snapshot()
  return { snapshotId: snapshot.id, data }
}

/**
 * Imports an exported snapshot file (docs/snapshots.md, "Files": a path, or the file's JSON already parsed) as a
 * snapshot of `world`'s sandbox, and answers it with the file's `data` (what `saveFixture` wrote: the build's answer,
 * in the file's ids; undefined for a file without it); `world.restore(fixture.snapshotId)` puts its world in place.
 * `label` is the snapshot's, as a save's (`?label=`).
 */
export const loadFixture = async <F = unknown>(world: World<unknown>, file: string | URL | SnapshotFile, options: { readonly label?: string } = {}): Promise<Fixture<F>> => {
  const text = typeof file === "string" || file instanceof URL ? await readFile(file, "utf8") : JSON.stringify(file)
  const query = options.label === undefined ? "" : `?label=${encodeURIComponent(options.label)}`
  const snapshot = await requestJson<Snapshot>(world, "POST", `/v2/simulate/snapshots/import${query}`, text)
  // The server took the file whole, so it is a JSON object; its `data` is the fixture's.
  return { snapshotId: snapshot.id, data: (JSON.parse(text) as { data?: F }).data as F }
}

/**
 * A fixture as a file to commit beside the tests: the snapshot's export (`GET /v2/simulate/snapshots/{id}/export`)
 * with the fixture's `data` in it (JSON: what the build answered), written as fos writes a file (one row to a line,
 * so that building the fixture again reads as a diff). `loadFixture` (and a suite's `fixture: path`) reads it back,
 * `data` and all. Answers the file's text, and writes it to `path` when one is given.
 */
export const saveFixture = async <F>(world: World<unknown>, fixture: Fixture<F>, path?: string | URL): Promise<string> => {
  const file = await requestJson<SnapshotFile>(world, "GET", `/v2/simulate/snapshots/${encodeURIComponent(fixture.snapshotId)}/export`)
  // The file's writer is the engine's, loaded only here: a suite that never saves a fixture does not pay for it.
  const { SnapshotFiles } = await load(() => import("@fos/core"))
  const text = SnapshotFiles.fileText(fixture.data === undefined ? file : { ...file, data: JSON.parse(JSON.stringify(fixture.data)) })
  if (path !== undefined) await writeFile(path, text)
  return text
}

// --- forks -------------------------------------------------------------------------------------------------------

/** A world over a fork, which `discard` removes (the organization and everything of it). */
export interface ForkedWorld<F = unknown> extends World<F> {
  readonly fork: Fork
  /** Closes the world and deletes the fork (`DELETE /sandbox/v2/simulate/forks/{organizationId}`). */
  readonly discard: () => Promise<void>
}

/**
 * Forks `snapshotId`, a snapshot of `world`'s sandbox: a new organization with the snapshot's world under new ids,
 * its own clock and its own key, on the same server. The fork's world answers `id(fixtureId)` with the fork's id,
 * and carries `world`'s fixture data with its ids translated. An organization has at most 64 forks at a time.
 */
export const forkWorld = async <F>(world: World<F>, snapshotId: string, options: { readonly stream?: string } = {}): Promise<ForkedWorld<F>> =>
  forkedWorld(world, await createFork(world, snapshotId, options.stream), world.fixture)

/** The world of a fork made already (its key is shown once, at its making). */
export const forkedWorld = <F>(
  parent: { readonly baseUrl: string; readonly apiKey: string; readonly fetch?: Fetch | undefined },
  fork: Fork,
  fixture: F
): ForkedWorld<F> => {
  const world = makeWorld<F>({
    baseUrl: parent.baseUrl,
    apiKey: fork.apiKey,
    ...(parent.fetch === undefined ? {} : { fetch: sendOf(parent.fetch) }),
    organizationId: fork.organizationId,
    ids: fork.ids,
    fixture
  })
  return {
    ...world,
    fork,
    discard: async () => {
      await world.close()
      await deleteFork({ baseUrl: parent.baseUrl, apiKey: parent.apiKey, fetch: parent.fetch ?? globalFetch }, fork.organizationId)
    }
  }
}
