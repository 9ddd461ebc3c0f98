/**
 * What an organization's sandbox shows live, for the inspector and `fos tail` (docs/inspect.md, "Recent requests"
 * and "The live stream"):
 *
 * - **Recent requests.** Every answered request of a known caller is recorded here, the last
 *   `recentRequestsPerScope` per organization and environment: `GET /sandbox/v2/simulate/requests` reads the
 *   sandbox's, newest first, each naming the process that answered it. One process keeps them in a ring in memory
 *   (typed arrays, no object per request; `Ring` says why), whatever the `--quiet` flag or the engine's
 *   `requestLog` option say, which a restart empties. Processes sharing a PostgreSQL store keep them in the store
 *   (SharedState.ts), so each lists and streams every process's. An entry holds no header or query string; it
 *   names the request's operation, marks an answer replayed from an idempotency record, and holds a sandbox
 *   request's JSON body up to `maxKeptBodyBytes`, its secrets redacted when it is read (`redactBody`).
 * - **The live stream.** `GET /sandbox/v2/simulate/stream` answers server-sent events: each request entry as it is
 *   recorded (`event: request`), and each event of the sandbox's outbox (`event: event`, with `id:` the event's id,
 *   so a client resumes with `Last-Event-ID` or `?after=`). Events come from the outbox, not from the code that
 *   emits them, so an event is shown only once committed: a stream reads the outbox right after every answered
 *   request of its organization (the request's transactions have committed by then), right after every timer of its
 *   sandbox this process fires (`Outbox.committed`, told by `Timers.fireDue`: the system clock's scheduler, an
 *   advance), right after another process tells of a request of the organization, and once a second of real time
 *   (`tailIntervalMs`) for what another process sharing a PostgreSQL store commits outside a request.
 *
 * Sequence numbers are handed out before commit (kernel/Store.ts, `nextSequence`), so two transactions may commit
 * out of number order. Each read starts `reorderWindow` numbers below the highest event sent and skips the ids sent
 * already: an event committed after one numbered up to that many later is still pushed.
 *
 * Bounds: at most `maxStreamsPerOrganization` open streams per organization, counted over every process sharing
 * the store (`admit`; the next is `429 RATE_LIMITED`); a
 * stream whose client reads too slowly to take `streamBufferMessages` messages is ended (reconnect with
 * `Last-Event-ID`). Closing the connection ends the stream's fibers and unregisters it.
 */
import { EventLog, Liveness, Outbox, Paging, Problem, RealClock, SharedState, Store, Tenancy, Wire } from "@fos/core"
import { defaultPageSize, type Environment, toIso } from "@fos/contract"
import { Clock, Context, Deferred, Effect, Layer, Queue, Stream } from "effect"
import type { HttpServerResponse } from "effect/http"
import { problemTypeOf } from "./RequestLog.ts"
import { redactSecrets } from "./Telemetry.ts"

/** How many requests each organization's environment keeps. */
export const recentRequestsPerScope = SharedState.requestsKeptPerScope
/** How many streams one organization may have open at once (operator streams of it included). */
export const maxStreamsPerOrganization = 10
/** How often a stream sends a comment line when nothing else was sent, in real time. */
export const heartbeatMs = 15_000
/** How often a stream reads the outbox for what committed outside this process's requests, in real time. */
export const tailIntervalMs = 1_000
/** How many messages a stream holds for a slow client before it is ended. */
export const streamBufferMessages = 1_024
/** How far below the highest event sent a read starts, in sequence numbers (see the module comment). */
export const reorderWindow = 256
const tailPage = 100
/**
 * The largest request body a recent request keeps, in UTF-8 bytes: a larger one (a snapshot file's import) is counted
 * (`bodyBytes`) but not kept, so that a scope's 500 kept requests hold at most 2 MiB of bodies, and a kept request's
 * line stays within one PostgreSQL notification (SharedState.ts), so other processes stream it too.
 */
export const maxKeptBodyBytes = 4 * 1024

/** A request as the feed shows it: the request log's entry without the organization and environment. */
export interface RecentRequest {
  readonly time: string
  readonly method: string
  readonly path: string
  readonly status: number
  readonly type?: string
  readonly durationMs: number
  readonly correlationId: string
  /** The client's IP address: the connection's, or the one the embedding host gave (HostIdentity.ts). */
  readonly clientAddress: string
  readonly injected?: string
  /** The process that answered it (its id in Liveness.ts): one of several sharing a PostgreSQL store. */
  readonly answeredBy: string
  readonly operationId?: string
  /** The request's JSON body, its secrets redacted (`redactBody`), when it had one of at most `maxKeptBodyBytes`. */
  readonly body?: unknown
  readonly bodyBytes?: number
  /** Answered from an idempotency record (a retry). */
  readonly replayed?: true
}

/** A request as it was answered: raw numbers, turned into a `RecentRequest` only when read. */
interface Recorded {
  seq: number
  /** The wall clock at the answer, in ms. */
  readonly endMs: number
  /** From the request reaching the edge to its answer, on the monotonic clock. */
  readonly durationNs: number
  readonly method: string
  readonly path: string
  readonly status: number
  readonly type: string | undefined
  readonly correlationId: string
  readonly clientAddress: string
  readonly injected: string | undefined
  readonly operationId: string | undefined
  /** The body's text as sent, when it is at most `maxKeptBodyBytes`; redacted only when read. */
  readonly body: string | undefined
  /** The body's size in UTF-8 bytes; 0 for a request without one. */
  readonly bodyBytes: number
  readonly replayed: boolean
}

/**
 * A member whose value is a secret, by its name: a key, a webhook secret, a token, a password, a passkey's or other
 * credential's material (WebAuthn's `clientDataJSON`, `authenticatorData`, `attestationObject`, a `signature`). A
 * count or a flag under such a name (`passkeyCount`) is not one.
 */
const secretMember = /secret|password|passphrase|token|api_?key|private_?key|credential|passkey|clientdatajson|authenticatordata|attestationobject|signature|mnemonic/i

/**
 * A JSON body with its secrets replaced by "[redacted]": the value of every member `secretMember` names (a number,
 * a boolean or null is kept), and, in every string, an API key, a webhook secret and a URL's password
 * (`redactSecrets`).
 */
export const redactBody = (value: unknown): unknown => {
  if (typeof value === "string") return redactSecrets(value)
  if (Array.isArray(value)) return value.map(redactBody)
  if (typeof value !== "object" || value === null) return value
  const out: Record<string, unknown> = {}
  for (const [name, member] of Object.entries(value)) {
    out[name] = secretMember.test(name) && member !== null && typeof member !== "number" && typeof member !== "boolean" ? "[redacted]" : redactBody(member)
  }
  return out
}

/** The size a recent request keeps of a body's text, in UTF-8 bytes: 0 for none. */
const bodyBytesOf = (text: string | undefined): number => (text === undefined || text === "" ? 0 : Wire.utf8Length(text))

/** The body members of a recent request, redacted (the text was JSON: the write checked it). */
const bodyMembers = (r: Recorded): { body?: unknown; bodyBytes?: number } =>
  r.bodyBytes === 0 ? {} : r.body === undefined ? { bodyBytes: r.bodyBytes } : { body: redactBody(JSON.parse(r.body)), bodyBytes: r.bodyBytes }

const toRecentRequest = (r: Recorded, answeredBy: string): RecentRequest => ({
  time: toIso(r.endMs),
  method: r.method,
  path: r.path,
  status: r.status,
  ...(r.type === undefined ? {} : { type: r.type }),
  durationMs: Math.round(r.durationNs / 1e3) / 1e3,
  correlationId: r.correlationId,
  clientAddress: r.clientAddress,
  ...(r.injected === undefined ? {} : { injected: r.injected }),
  answeredBy,
  ...(r.operationId === undefined ? {} : { operationId: r.operationId }),
  ...bodyMembers(r),
  ...(r.replayed ? { replayed: true as const } : {})
})

const methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
const methodCodes = new Map(methods.map((method, i) => [method, i + 1]))
/**
 * Room for a path, a correlation id and a client's address (an IPv6 address's text is at most 45 characters) in a
 * slot's characters; a longer or non-ASCII one is kept as its string.
 */
const pathWidth = 128
const idWidth = 40
const addressWidth = 45
const slotWidth = pathWidth + idWidth + addressWidth
/**
 * The strings a slot may hold: a method, path, id or address that did not fit, the problem type, the fault, the
 * operation id (the route's own string, shared by every request of it) and the body's text (writes only).
 */
const stringsPerSlot = 8

/**
 * The last `capacity` requests of one scope; `count` is how many were ever recorded (the next one's number).
 *
 * It keeps them in typed arrays (numbers, and a path and correlation id as ASCII characters), not as an object per
 * request: an entry lives for the next `capacity` requests, long enough to outlive a young-generation collection,
 * so entries kept as objects and strings would be copied by every collection and then promoted, growing V8's young
 * generation and filling the old one with garbage (docs/performance.md, "An embedded engine's memory"). The
 * arrays grow by doubling up to `capacity`, so a scope with few requests stays small. The one string a request
 * brings of its own is a sandbox write's body text (at most `maxKeptBodyBytes`), the one the write read already.
 */
class Ring {
  readonly capacity: number
  count = 0
  private slots = 0
  private endMs = new Float64Array(0)
  private durationNs = new Float64Array(0)
  private status = new Uint16Array(0)
  private method = new Uint8Array(0)
  private replayed = new Uint8Array(0)
  private bodyBytes = new Uint32Array(0)
  /** Per slot: the path's, the id's and the address's lengths, in `chars`. */
  private lengths = new Uint8Array(0)
  private chars = new Uint8Array(0)
  private readonly strings: Array<string | undefined> = []
  /** The last path and address pushed, which a slot may share (`push`). */
  private lastPath: string | undefined = undefined
  private lastAddress: string | undefined = undefined
  constructor(capacity: number) {
    this.capacity = capacity
  }
  private grow(): void {
    const slots = Math.min(this.capacity, Math.max(16, this.slots * 2))
    const widen = <T extends Float64Array | Uint32Array | Uint16Array | Uint8Array>(from: T, make: (n: number) => T, perSlot: number): T => {
      const to = make(slots * perSlot)
      to.set(from)
      return to
    }
    this.endMs = widen(this.endMs, (n) => new Float64Array(n), 1)
    this.durationNs = widen(this.durationNs, (n) => new Float64Array(n), 1)
    this.status = widen(this.status, (n) => new Uint16Array(n), 1)
    this.method = widen(this.method, (n) => new Uint8Array(n), 1)
    this.replayed = widen(this.replayed, (n) => new Uint8Array(n), 1)
    this.bodyBytes = widen(this.bodyBytes, (n) => new Uint32Array(n), 1)
    this.lengths = widen(this.lengths, (n) => new Uint8Array(n), 3)
    this.chars = widen(this.chars, (n) => new Uint8Array(n), slotWidth)
    this.slots = slots
  }
  /** Writes `text` into the slot's characters at `offset`; false when it is too long or not ASCII. */
  private put(text: string, offset: number, width: number): boolean {
    if (text.length > width) return false
    const chars = this.chars
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c > 0x7f) return false
      chars[offset + i] = c
    }
    return true
  }
  private text(offset: number, length: number): string {
    return String.fromCharCode.apply(null, this.chars.subarray(offset, offset + length) as unknown as Array<number>)
  }
  push(recorded: Recorded): void {
    const slot = this.count % this.capacity
    if (slot >= this.slots) this.grow()
    this.endMs[slot] = recorded.endMs
    this.durationNs[slot] = recorded.durationNs
    this.status[slot] = recorded.status
    const code = methodCodes.get(recorded.method) ?? 0
    this.method[slot] = code
    const base = slot * stringsPerSlot
    const strings = this.strings
    strings[base] = code === 0 ? recorded.method : undefined
    const at = slot * slotWidth
    // A path or an address the same as the last one is kept as that one string, which the ring holds already, and
    // the request's own is left to die young: a client polling one route from one address costs a comparison, not
    // a copy of its characters.
    const path = recorded.path
    if (path === this.lastPath) {
      strings[base + 1] = this.lastPath
      this.lengths[slot * 3] = 0
    } else {
      const pathFits = this.put(path, at, pathWidth)
      strings[base + 1] = pathFits ? undefined : path
      this.lengths[slot * 3] = pathFits ? path.length : 0
      this.lastPath = path
    }
    const idFits = this.put(recorded.correlationId, at + pathWidth, idWidth)
    strings[base + 2] = idFits ? undefined : recorded.correlationId
    this.lengths[slot * 3 + 1] = idFits ? recorded.correlationId.length : 0
    const address = recorded.clientAddress
    if (address === this.lastAddress) {
      strings[base + 5] = this.lastAddress
      this.lengths[slot * 3 + 2] = 0
    } else {
      const addressFits = this.put(address, at + pathWidth + idWidth, addressWidth)
      strings[base + 5] = addressFits ? undefined : address
      this.lengths[slot * 3 + 2] = addressFits ? address.length : 0
      this.lastAddress = address
    }
    strings[base + 3] = recorded.type
    strings[base + 4] = recorded.injected
    strings[base + 6] = recorded.operationId
    strings[base + 7] = recorded.body
    this.replayed[slot] = recorded.replayed ? 1 : 0
    this.bodyBytes[slot] = recorded.bodyBytes
    this.count++
  }
  private at(seq: number): Recorded {
    const slot = seq % this.capacity
    const base = slot * stringsPerSlot
    const strings = this.strings
    const at = slot * slotWidth
    const code = this.method[slot]!
    return {
      seq,
      endMs: this.endMs[slot]!,
      durationNs: this.durationNs[slot]!,
      method: code === 0 ? strings[base]! : methods[code - 1]!,
      path: strings[base + 1] ?? this.text(at, this.lengths[slot * 3]!),
      status: this.status[slot]!,
      type: strings[base + 3],
      correlationId: strings[base + 2] ?? this.text(at + pathWidth, this.lengths[slot * 3 + 1]!),
      clientAddress: strings[base + 5] ?? this.text(at + pathWidth + idWidth, this.lengths[slot * 3 + 2]!),
      injected: strings[base + 4],
      operationId: strings[base + 6],
      body: strings[base + 7],
      bodyBytes: this.bodyBytes[slot]!,
      replayed: this.replayed[slot] === 1
    }
  }
  get size(): number {
    return Math.min(this.count, this.capacity)
  }
  /** Up to `limit` entries numbered below `before`, newest first. */
  newestBefore(before: number, limit: number): ReadonlyArray<Recorded> {
    const out: Array<Recorded> = []
    const oldest = this.count - this.size
    for (let seq = Math.min(before, this.count) - 1; seq >= oldest && out.length < limit; seq--) out.push(this.at(seq))
    return out
  }
}

export type Topic = "events" | "requests"
export const topics: ReadonlyArray<Topic> = ["events", "requests"]

interface Subscriber {
  readonly topics: ReadonlySet<Topic>
  readonly send: (message: string) => void
  readonly nudge: () => void
}

const encoder = new TextEncoder()

/** One server-sent event; `data` is one line of JSON (JSON.stringify never writes a newline). */
const sse = (event: string, data: string, id?: string): string => `${id === undefined ? "" : `id: ${id}\n`}event: ${event}\ndata: ${data}\n\n`

export const requestMessage = (request: RecentRequest): string => sse("request", JSON.stringify(request))
export const eventMessage = (event: Outbox.OutboxEvent): string => sse("event", JSON.stringify(EventLog.loggedEventToWire(event)), event.id)

export interface StreamOptions {
  readonly organizationId: string
  readonly topics: ReadonlySet<Topic>
  /** Resume after this event (Last-Event-ID or `?after=`); else from the events committed from now on. */
  readonly after: string | undefined
}

/** An answered request of a known caller, as the edge hands it to the feed. */
export interface AnsweredRequest {
  readonly organizationId: string
  readonly environment: Environment
  readonly method: string
  /** The resolved path, base included, query stripped. */
  readonly path: string
  readonly response: HttpServerResponse.HttpServerResponse
  /** When the request reached the edge, on the real clock's monotonic nanoseconds. */
  readonly startedNs: bigint
  /** How long it took, in nanoseconds, when its caller measured it already (the edge, for its metrics); else measured here. */
  readonly durationNs?: number | undefined
  readonly correlationId: string
  /** The client's IP address: the connection's, or the one the embedding host gave (HostIdentity.ts). */
  readonly clientAddress: string
  /** The sandbox fault that shaped the answer, if one did (Faults.ts). */
  readonly injected: string | undefined
  /** The OpenAPI operation, once a route matched. */
  readonly operationId?: string | undefined
  /** The JSON body's text, when the request had one (RequestInfo.ts). */
  readonly body?: string | undefined
  /** Answered from an idempotency record. */
  readonly replayed?: boolean | undefined
}

export interface LiveFeedService {
  /** Records an answered request of a known caller; what the edge calls once per request. */
  readonly record: (answered: AnsweredRequest) => void
  /**
   * A page of an organization's environment's recent requests, newest first, below `before` (a cursor's position:
   * a number in one process's ring, a text in the service's list); 400 INVALID_CURSOR for a position of the other kind.
   */
  readonly recent: (
    organizationId: string,
    environment: Environment,
    before: Store.SortValue | undefined,
    limit: number
  ) => Effect.Effect<{ readonly data: ReadonlyArray<RecentRequest>; readonly next: Store.SortValue | undefined; readonly total: number }, Problem.ApiError>
  /** The stream of server-sent events of an organization's sandbox; fails with 429 or 400 before it starts. */
  readonly stream: (options: StreamOptions) => Effect.Effect<Stream.Stream<Uint8Array>, Problem.ApiError, Store.Store>
  /** Ends every open stream (a server shutting down: it then need not wait for them). */
  readonly closeAll: Effect.Effect<void>
  /** How many streams are open in this process now (the `fos.streams.open` metric). */
  readonly openStreams: () => number
}

export class LiveFeed extends Context.Service<LiveFeed, LiveFeedService>()("fos/http/LiveFeed") {}

/** Starts with `evt_`, as every event id does; anything else cannot name one. */
const eventIdPattern = /^evt_[A-Za-z0-9_-]{1,100}$/

export interface FeedOptions {
  /** This process's id (Liveness.ts), which every request it answers names; `local` when omitted. */
  readonly processId?: string | undefined
  /** The store's live streams and liveness, so the stream cap counts every process's streams (Liveness.ts). */
  readonly liveness?: Liveness.LivenessService | undefined
  /** The service's recent requests, when several processes share the store (SharedState.ts). */
  readonly shared?: SharedState.SharedRequests | undefined
}

/** A position in the service's list as a cursor's sort value: the answer's time, the count and the process. */
const positionText = (p: SharedState.RequestPosition): string => `${p.answeredMs}:${p.n}:${p.answeredBy}`
const positionPattern = /^(\d+(?:\.\d+)?):(\d+):([0-9a-f]{1,64})$/
const positionOf = (text: string): SharedState.RequestPosition | undefined => {
  const match = positionPattern.exec(text)
  return match === null ? undefined : { answeredMs: Number(match[1]), n: Number(match[2]), answeredBy: match[3]! }
}
const invalidCursor = () => Problem.apiError("INVALID_CURSOR", "The cursor is malformed.")

export const make = (realClock: Clock.Clock, options: FeedOptions = {}): LiveFeedService => {
  const processId = options.processId ?? "local"
  const { liveness, shared } = options
  // organization → environment → ring: two lookups and no string built per request.
  const rings = new Map<string, { sandbox?: Ring; live?: Ring }>()
  const subscribers = new Map<string, Set<Subscriber>>()
  const open = new Set<Effect.Effect<void>>()

  // What commits outside a request of this process (a timer fired by the scheduler or an advance): the stores this
  // feed's streams read, each listened to once, from its first stream on.
  const listenedStores = new WeakSet<object>()
  const sandboxSuffix = "/sandbox"
  const onCommitted = (scope: string) => {
    if (!scope.endsWith(sandboxSuffix)) return
    const streams = subscribers.get(scope.slice(0, -sandboxSuffix.length))
    if (streams !== undefined) for (const subscriber of streams) subscriber.nudge()
  }

  const ringOf = (organizationId: string, environment: Environment, create: boolean): Ring | undefined => {
    let scopes = rings.get(organizationId)
    if (scopes === undefined) {
      if (!create) return undefined
      scopes = {}
      rings.set(organizationId, scopes)
    }
    return scopes[environment] ?? (create ? (scopes[environment] = new Ring(recentRequestsPerScope)) : undefined)
  }

  /** Tells an organization's streams of a request: its line, and a read of the outbox for what it committed. */
  const tell = (organizationId: string, message: string) => {
    const listening = subscribers.get(organizationId)
    if (listening === undefined) return
    for (const subscriber of listening) {
      if (subscriber.topics.has("requests")) subscriber.send(message)
      subscriber.nudge()
    }
  }
  // The requests other processes answer reach this one's streams as the store tells of them, while a stream is
  // open here; its own, at once.
  let stopHearing: (() => void) | undefined
  const hearOthers: Effect.Effect<void> = Effect.suspend(() => {
    if (shared === undefined) return Effect.void
    stopHearing ??= shared.subscribe((r) => {
      if (r.answeredBy !== processId && subscribers.has(r.organizationId)) tell(r.organizationId, sse("request", r.json))
    })
    return shared.listening
  })
  const stopHearingOthers = () => {
    if (subscribers.size > 0 || stopHearing === undefined) return
    stopHearing()
    stopHearing = undefined
  }
  let recordedCount = 0

  // The request being recorded: one object for every request, filled anew, since the ring copies it into its arrays
  // and the text of a stream's line is made from it at once (`Ring.push`, `toRecentRequest`).
  const recorded: { -readonly [K in keyof Recorded]: Recorded[K] } = {
    seq: 0,
    endMs: 0,
    durationNs: 0,
    method: "",
    path: "",
    status: 0,
    type: undefined,
    correlationId: "",
    clientAddress: "",
    injected: undefined,
    operationId: undefined,
    body: undefined,
    bodyBytes: 0,
    replayed: false
  }
  const record: LiveFeedService["record"] = (answered) => {
    const { organizationId, environment, response, body } = answered
    const bodyBytes = bodyBytesOf(body)
    recorded.endMs = realClock.currentTimeMillisUnsafe()
    recorded.durationNs = answered.durationNs ?? Number(realClock.monotonicTimeNanosUnsafe() - answered.startedNs)
    recorded.method = answered.method
    recorded.path = answered.path
    recorded.status = response.status
    // Only an error's body is read for its type.
    recorded.type = response.status >= 400 ? problemTypeOf(response) : undefined
    recorded.correlationId = answered.correlationId
    recorded.clientAddress = answered.clientAddress
    recorded.injected = answered.injected
    recorded.operationId = answered.operationId
    // The text when small enough, and its size.
    recorded.body = bodyBytes > 0 && bodyBytes <= maxKeptBodyBytes ? body : undefined
    recorded.bodyBytes = bodyBytes
    recorded.replayed = answered.replayed === true
    if (shared !== undefined) {
      // The service keeps it; the text is made once, for the store and for this process's streams.
      const json = JSON.stringify(toRecentRequest(recorded, processId))
      shared.record({ organizationId, environment, answeredMs: recorded.endMs, answeredBy: processId, n: recordedCount++, json })
      if (environment === "sandbox" && subscribers.has(organizationId)) tell(organizationId, sse("request", json))
      return
    }
    ringOf(organizationId, environment, true)!.push(recorded)
    // What the request committed is in the outbox now.
    if (environment === "sandbox" && subscribers.has(organizationId)) tell(organizationId, requestMessage(toRecentRequest(recorded, processId)))
  }

  const recent: LiveFeedService["recent"] = (organizationId, environment, before, limit) => {
    if (shared !== undefined) {
      const position = before === undefined ? undefined : typeof before === "string" ? positionOf(before) : undefined
      if (before !== undefined && position === undefined) return Effect.fail(invalidCursor())
      // One more than the page, so that `next` is given only when there is more.
      return Effect.map(shared.newest(organizationId, environment, position, limit + 1), ({ records, total }) => {
        const page = records.slice(0, limit)
        const last = page[page.length - 1]
        return {
          data: page.map((r) => JSON.parse(r.json) as RecentRequest),
          next: records.length > limit && last !== undefined ? positionText(last) : undefined,
          total
        }
      })
    }
    if (before !== undefined && typeof before !== "number") return Effect.fail(invalidCursor())
    const ring = ringOf(organizationId, environment, false)
    if (ring === undefined) return Effect.succeed({ data: [], next: undefined, total: 0 })
    const page = ring.newestBefore(before ?? ring.count, limit)
    const last = page[page.length - 1]
    const oldest = ring.count - ring.size
    return Effect.succeed({
      data: page.map((r) => toRecentRequest(r, processId)),
      next: last !== undefined && last.seq > oldest ? last.seq : undefined,
      total: ring.size
    })
  }

  /** The outbox's rows of the sandbox after `afterSequence`, in sequence order, a page at a time. */
  const readAfter = (store: Store.StoreService, partition: string, afterSequence: number) =>
    store.page(Outbox.OutboxEvents, {
      order: "byScope",
      partition,
      descending: false,
      backward: false,
      from: { sort: afterSequence, key: "\uffff" },
      limit: tailPage
    })

  const startingPoint = (store: Store.StoreService, organizationId: string, after: string | undefined) =>
    Effect.gen(function*() {
      const partition = Tenancy.scopeOf(organizationId, "sandbox")
      if (after !== undefined) {
        const row = eventIdPattern.test(after) ? yield* store.get(Outbox.OutboxEvents, after) : undefined
        if (row === undefined || row.organizationId !== organizationId || row.environment !== "sandbox") {
          return yield* Problem.apiError("VALIDATION_ERROR", "The event to resume after is not one of this sandbox's events; reconnect without Last-Event-ID or after.", {
            errors: [{ pointer: "/after", detail: "names no event of this sandbox" }]
          })
        }
        return row.sequence
      }
      const last = yield* store.page(Outbox.OutboxEvents, { order: "byScope", partition, descending: true, backward: false, from: undefined, limit: 1 })
      return last[0]?.sequence ?? 0
    })

  const refused = () =>
    Problem.apiError("RATE_LIMITED", `At most ${maxStreamsPerOrganization} streams of an organization are open at once; close one first.`, {
      retryAfterSeconds: heartbeatMs / 1000
    })

  /**
   * A place among the organization's open streams, counted over every process sharing the store: the row that holds
   * it, or 429. The organization's row is locked while its streams are counted, so a burst of opens on several
   * processes is counted one at a time. Rows of dead processes are removed as they are found. Without the store's
   * liveness (a feed made alone), this process's streams are counted.
   */
  const admit = (store: Store.StoreService, organizationId: string): Effect.Effect<string | undefined, Problem.ApiError> => {
    if (liveness === undefined) {
      return (subscribers.get(organizationId)?.size ?? 0) >= maxStreamsPerOrganization ? Effect.fail(refused()) : Effect.void as Effect.Effect<undefined>
    }
    return store.transaction(Effect.gen(function*() {
      yield* store.getForUpdate(Tenancy.Organizations, organizationId)
      const rows = yield* store.page(Liveness.OpenStreams, {
        order: "byOrganization",
        partition: organizationId,
        descending: false,
        backward: false,
        from: undefined,
        limit: 1_000
      })
      let held = 0
      for (const row of rows) {
        if (liveness.isOwn(row.owner) || (yield* liveness.isAlive(row.owner)) === true) held++
        else yield* store.remove(Liveness.OpenStreams, row.id)
      }
      if (held >= maxStreamsPerOrganization) return yield* refused()
      const owner = liveness.newOwner()
      yield* Effect.orDie(store.insert(Liveness.OpenStreams, { id: owner, organizationId, owner }))
      return owner
    }))
  }

  const stream: LiveFeedService["stream"] = (options) =>
    Effect.gen(function*() {
      const store = yield* Store.Store
      if (!listenedStores.has(store)) {
        listenedStores.add(store)
        Outbox.onCommitted(store, onCommitted)
      }
      const { organizationId } = options
      const admitted = yield* admit(store, organizationId)
      // A stream admitted but never started (its client gone before the answer) holds no place.
      const release = admitted === undefined ? Effect.void : Effect.ignore(store.remove(Liveness.OpenStreams, admitted))
      const start = options.topics.has("events") ? yield* startingPoint(store, organizationId, options.after) : 0
      const partition = Tenancy.scopeOf(organizationId, "sandbox")
      return Stream.callback<Uint8Array>((queue) =>
        Effect.gen(function*() {
          let wake = Deferred.makeUnsafe<void>()
          let ended = false
          let lastSentMs = realClock.currentTimeMillisUnsafe()
          const end = () => {
            if (ended) return
            ended = true
            Queue.endUnsafe(queue)
          }
          const send = (message: string) => {
            if (ended) return
            lastSentMs = realClock.currentTimeMillisUnsafe()
            // A client too slow to take what is sent is ended rather than held in memory without bound.
            if (!Queue.offerUnsafe(queue, encoder.encode(message))) end()
          }
          const subscriber: Subscriber = {
            topics: options.topics,
            send,
            nudge: () => Deferred.doneUnsafe(wake, Effect.void)
          }
          let set = subscribers.get(organizationId)
          if (set === undefined) subscribers.set(organizationId, (set = new Set()))
          set.add(subscriber)
          yield* hearOthers
          const closeThis = Effect.sync(end)
          open.add(closeThis)
          yield* Effect.addFinalizer(() =>
            Effect.andThen(
              Effect.sync(() => {
                open.delete(closeThis)
                set.delete(subscriber)
                if (set.size === 0 && subscribers.get(organizationId) === set) subscribers.delete(organizationId)
                stopHearingOthers()
              }),
              release
            )
          )
          // Asks the client to wait two seconds before reconnecting, and sends something at once so that the
          // response starts (some clients wait for the first bytes).
          send("retry: 2000\n: connected\n\n")
          // Heartbeats keep proxies and clients from timing the connection out while nothing happens.
          yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Effect.sleep(heartbeatMs / 3), () =>
            Effect.sync(() => {
              if (realClock.currentTimeMillisUnsafe() - lastSentMs >= heartbeatMs) send(": heartbeat\n\n")
            }))).pipe(Effect.provideService(Clock.Clock, realClock)))
          if (!options.topics.has("events")) return
          // The outbox's tail: after every request of the organization (a nudge) and every `tailIntervalMs`.
          let high = start
          const sent = new Map<string, number>()
          // What was committed before the stream began, within the window, was not the client's to see: it is
          // marked sent. On a resume, the window's events after the resumed one are sent.
          for (const row of yield* readAfter(store, partition, Math.max(0, start - reorderWindow))) {
            if (row.sequence > start) break
            sent.set(row.id, row.sequence)
          }
          const readOnce = Effect.gen(function*() {
            // From the window's start, page by page; at most 20 pages a round, the rest in the next.
            let from = Math.max(0, high - reorderWindow)
            for (let pages = 0; pages < 20 && !ended; pages++) {
              const rows = yield* readAfter(store, partition, from)
              for (const row of rows) {
                if (sent.has(row.id)) continue
                sent.set(row.id, row.sequence)
                if (row.sequence > high) high = row.sequence
                send(eventMessage(row))
              }
              if (rows.length < tailPage) break
              from = rows[rows.length - 1]!.sequence
            }
            for (const [id, sequence] of sent) if (sequence <= high - reorderWindow) sent.delete(id)
          })
          yield* Effect.forkScoped(Effect.forever(Effect.gen(function*() {
            wake = Deferred.makeUnsafe<void>()
            yield* readOnce
            yield* Effect.raceFirst(Deferred.await(wake), Effect.sleep(tailIntervalMs))
          })).pipe(Effect.provideService(Clock.Clock, realClock)))
        }), { bufferSize: streamBufferMessages, strategy: "dropping" })
    })

  const closeAll = Effect.suspend(() => Effect.forEach([...open], (close) => close, { discard: true }))

  return { record, recent, stream, closeAll, openStreams: () => open.size }
}

/**
 * The feed of an engine, from its context: its real clock (RealClock.ts), its process id and liveness (Liveness.ts),
 * and the recent requests of the service when its store is shared (SharedState.ts).
 */
export const makeOf = (context: Context.Context<RealClock.RealClock | Liveness.Liveness | Store.Store>): LiveFeedService => {
  const liveness = Context.get(context, Liveness.Liveness)
  return make(Context.get(context, RealClock.RealClock), {
    processId: liveness.processId,
    liveness,
    shared: Context.get(context, Store.Store).shared?.requests
  })
}

/** The engine's feed, from the layer's context (`makeOf`). */
export const layer: Layer.Layer<LiveFeed, never, RealClock.RealClock | Liveness.Liveness | Store.Store> = Layer.effect(
  LiveFeed,
  Effect.map(Effect.context<RealClock.RealClock | Liveness.Liveness | Store.Store>(), makeOf)
)

/** `topics` of a stream request: a comma-separated list of `events` and `requests`; both when omitted. */
export const parseTopics = (text: string | undefined): Effect.Effect<ReadonlySet<Topic>, Problem.ApiError> => {
  if (text === undefined) return Effect.succeed(new Set(topics))
  const names = text.split(",").map((t) => t.trim())
  const unknown = names.filter((t) => !(topics as ReadonlyArray<string>).includes(t))
  if (unknown.length > 0 || names.length === 0) {
    return Effect.fail(Problem.invalidRequest([{ pointer: "/topics", detail: "must be a comma-separated list of events and requests" }], "query"))
  }
  return Effect.succeed(new Set(names as ReadonlyArray<Topic>))
}

/** The list a recent-requests cursor belongs to: one organization's environment. */
const requestsList = (organizationId: string, environment: Environment) => Paging.listBinding("requests", "recent", Tenancy.scopeOf(organizationId, environment))

/** A page of recent requests as a list envelope, `cursor` read and `nextCursor` made as every list's are. */
export const recentPage = (
  feed: LiveFeedService,
  organizationId: string,
  environment: Environment,
  query: { readonly cursor?: string | undefined; readonly limit?: number | undefined }
) =>
  Effect.gen(function*() {
    const list = requestsList(organizationId, environment)
    const before = query.cursor === undefined ? undefined : (yield* Paging.decodeCursor(query.cursor, list, "time", "desc")).sort
    const page = yield* feed.recent(organizationId, environment, before, query.limit ?? defaultPageSize)
    return {
      data: page.data,
      meta: {
        mode: "cursor" as const,
        nextCursor: page.next === undefined ? null : Paging.encodeCursor(list, "time", "desc", { sort: page.next, key: "" }),
        previousCursor: null,
        total: page.total
      }
    }
  })
