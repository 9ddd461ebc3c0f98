/**
 * Webhooks: endpoints, fan-out of outbox events to deliveries, and signed at-least-once delivery with retries on
 * the Clock.
 *
 * Everything that happens later is a durable timer:
 * - `webhook.fanout` (due at once, written with the event): one delivery per active endpoint subscribed to it;
 * - `webhook.attempt`: claims the delivery in its transaction (status processing, plus a recovery lease: the same
 *   timer kind again, 60 s on), and after that transaction commits sends the signed body and records the attempt
 *   in a new transaction, which schedules the next attempt (30 s, 2 min, 15 min, 1 h) or ends the run. A crash
 *   between sending and recording leaves the lease, which sends the same event again: at least once.
 */
import { hmac } from "@noble/hashes/hmac.js"
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js"
import { Clock, Context, Data, Duration, Effect } from "effect"
import ipaddr from "ipaddr.js"
import { type Caller } from "../tenancy/Auth.ts"
import {
  type DeliveryStatus,
  type EndpointStatus,
  type Environment,
  type EventType,
  EventTypes,
  signatureScheme,
  type Subscription,
  toIso,
  type WebhookDelivery as DeliveryWire,
  type WebhookEndpoint as WebhookEndpointWire
} from "@fos/contract"
import { newId, randomHex } from "../kernel/IdGenerator.ts"
import { appendEvent, type OutboxEvent, OutboxEvents } from "../kernel/Outbox.ts"
import { filterCombinations, type ListEnvelope, listPage, type ListQuery } from "../kernel/Paging.ts"
import { apiError, type ApiError } from "../kernel/Problem.ts"
import { Store, table } from "../kernel/Store.ts"
import { scopeOf } from "../tenancy/Tenancy.ts"
import { type AfterCommit, schedule, type TimerHandler, Timers } from "../kernel/Timers.ts"

// --- the transport port ----------------------------------------------------------------------------------------

export interface DeliveryRequest {
  /** The delivery (wdl_) and this attempt of it (wda_, sent as X-Service-Delivery-Id). */
  readonly deliveryId: string
  readonly attemptId: string
  readonly url: string
  /**
   * The addresses the engine checked before this send, from resolving the URL's host (or the address written in the
   * URL): the transport connects to one of them, sending the URL's host as Host and as the TLS server name, so a name
   * that answers differently the next time (DNS rebinding) cannot move the delivery. Absent when the engine has no
   * `resolveHost`: the transport then resolves the name itself.
   */
  readonly addresses?: ReadonlyArray<string>
  readonly headers: Readonly<Record<string, string>>
  /** The exact bytes to send, as text (UTF-8). */
  readonly body: string
}

export class TransportError extends Data.TaggedError("TransportError")<{ readonly message: string }> {}

/** How deliveries leave the engine: HTTP by default, or a callback in process. */
export interface WebhookTransportService {
  readonly send: (request: DeliveryRequest) => Effect.Effect<{ readonly status: number }, TransportError>
}

export class WebhookTransport extends Context.Service<WebhookTransport, WebhookTransportService>()("fos/WebhookTransport") {}

/** A transport that hands each delivery to a function in this process, for hosts and tests. */
export const callbackTransport = (
  receive: (request: DeliveryRequest) => Promise<{ readonly status: number }> | { readonly status: number }
): WebhookTransportService => ({
  send: (request) =>
    Effect.tryPromise({
      try: async () => await receive(request),
      catch: (e) => new TransportError({ message: e instanceof Error ? e.message : String(e) })
    })
})

/** Resolves a host name to its addresses (the runtime's DNS); fails when it cannot. */
export type ResolveHost = (host: string) => Effect.Effect<ReadonlyArray<string>, TransportError>

/** Engine settings for webhooks. Without `resolveHost`, only addresses written in the URL itself are checked. */
export interface WebhookSettingsValue {
  readonly insecureWebhooks: boolean
  readonly resolveHost?: ResolveHost | undefined
  /** The clock whose time a signature's `t` carries; the engine's Clock when undefined (EngineOptions.signatureClock). */
  readonly signatureClock?: Clock.Clock | undefined
}

export class WebhookSettings extends Context.Reference<WebhookSettingsValue>("fos/WebhookSettings", {
  defaultValue: () => ({ insecureWebhooks: false })
}) {}

// --- endpoints -------------------------------------------------------------------------------------------------

export interface WebhookEndpoint {
  readonly id: string
  readonly organizationId: string
  readonly environment: Environment
  readonly url: string
  readonly subscription: Subscription
  readonly status: "active" | "disabled"
  readonly secret: string
  /** The secret before the last rotation, still signing until `untilMs`. Never shown. */
  readonly previousSecret: { readonly secret: string; readonly untilMs: number } | undefined
  readonly createdAt: string
  readonly updatedAt: string
  readonly deletedAt: string | undefined
}

export const WebhookEndpoints = table<WebhookEndpoint>({
  name: "webhook_endpoints",
  key: (e) => e.id,
  orders: {
    /** Every endpoint of an organization and environment, deleted ones included. */
    byScope: { partition: (e) => scopeOf(e.organizationId, e.environment), sort: (e) => e.createdAt },
    /** The endpoints not deleted: what the list shows and what fan-out reads. A deletion takes the endpoint out. */
    live: { partition: (e) => (e.deletedAt === undefined ? scopeOf(e.organizationId, e.environment) : undefined), sort: (e) => e.createdAt }
  }
})

export const endpointToWire = (e: WebhookEndpoint, reveal = false): WebhookEndpointWire => ({
  id: e.id,
  url: e.url,
  subscription: e.subscription,
  status: e.status,
  createdAt: e.createdAt,
  updatedAt: e.updatedAt,
  ...(reveal ? { secret: e.secret, signature: signatureScheme } : {})
})

const rotationGraceMs = 48 * 60 * 60 * 1000
const maxUrlLength = 2048

const invalid = (pointer: string, detail: string) =>
  apiError("VALIDATION_ERROR", "The request body failed validation; see errors[].", { errors: [{ pointer, detail }] })

const nat64 = ipaddr.parseCIDR("64:ff9b::/96")
const ipv4Compatible = ipaddr.parseCIDR("::/96")

/** The IPv4 address of two 16-bit groups. */
const ipv4Of = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff])

/**
 * An address's range by ipaddr.js's names, where an IPv6 form that carries an IPv4 address is judged by that address,
 * since that is where a packet to it ends up: IPv4-mapped (`::ffff:a.b.c.d`, which `ipaddr.process` turns into the
 * IPv4 address), the NAT64 well-known prefix (`64:ff9b::/96`, what DNS64 answers on an IPv6-only network) and 6to4
 * (`2002:AABB:CCDD::/48`). IPv4-compatible addresses (`::a.b.c.d`, deprecated since 2006, which ipaddr.js counts as
 * unicast) are `ipv4Compatible`, refused whatever they carry: no receiver lives at one, and some stacks route them
 * to the IPv4 address. Other translation ranges (NAT64 local-use `64:ff9b:1::/48`, Teredo, RFC 6145) keep their own
 * names, which are not unicast. Undefined for text that is not an address.
 */
export const addressRange = (text: string): string | undefined => {
  if (!ipaddr.isValid(text)) return undefined
  const address = ipaddr.process(text)
  if (address.kind() === "ipv4") return address.range()
  const v6 = address as ipaddr.IPv6
  const range = v6.range()
  const parts = v6.parts
  if (range === "rfc6052" && v6.match(nat64)) return ipv4Of(parts[6]!, parts[7]!).range()
  if (range === "6to4") return ipv4Of(parts[1]!, parts[2]!).range()
  if (range === "unicast" && v6.match(ipv4Compatible)) return "ipv4Compatible"
  return range
}

/**
 * The address range of a URL host that is an IP literal, or undefined for a name. The WHATWG URL parser already
 * turns every IPv4 spelling (hex, octal, a single number) into dotted decimal and brackets IPv6, so only those two
 * shapes need parsing.
 */
const literalRange = (host: string): string | undefined => {
  const h = host.startsWith("[") ? host.slice(1, -1) : host
  if (!(host.startsWith("[") || /^\d{1,3}(\.\d{1,3}){3}$/.test(h))) return undefined
  return addressRange(h)
}

/** `localhost` and its subdomains, with or without the trailing dot of a fully qualified name (`localhost.`). */
const isLocalName = (host: string): boolean => {
  const h = host.toLowerCase().replace(/\.+$/, "")
  return h === "localhost" || h.endsWith(".localhost")
}

const isLoopbackHost = (host: string): boolean => isLocalName(host) || literalRange(host) === "loopback"

/** True for a host that is an address no webhook may reach (private, loopback, link-local and the like). */
export const isForbiddenAddress = (host: string): boolean => {
  if (isLocalName(host)) return true
  const range = literalRange(host)
  return range !== undefined && range !== "unicast"
}

/**
 * Checks a webhook URL: HTTPS; with `--insecure-webhooks` also http on loopback; never a private address, whether
 * written in the URL or, with a resolver, found by resolving its host. A name that does not resolve is let through
 * here (the send will fail); one that resolves to a forbidden address is refused.
 */
export const checkWebhookUrl = (raw: string, settings: WebhookSettingsValue): Effect.Effect<string, ApiError> =>
  Effect.flatMap(checkWebhookUrlText(raw, settings.insecureWebhooks), (url) => {
    const resolve = settings.resolveHost
    const host = new URL(url).hostname
    if (resolve === undefined || literalRange(host) !== undefined || isLocalName(host)) return Effect.succeed(url)
    return resolve(host).pipe(
      Effect.catch(() => Effect.succeed([] as ReadonlyArray<string>)),
      Effect.flatMap((addresses) =>
        answerForbidden(addresses, settings.insecureWebhooks)
          ? Effect.fail(invalid("/url", "must not resolve to a private, loopback or link-local address"))
          : Effect.succeed(url)
      )
    )
  })

const hostOf = (address: string) => (address.includes(":") ? `[${address}]` : address)

/** True when a resolver's answer holds an address no webhook may reach (loopback ones aside with `--insecure-webhooks`). */
const answerForbidden = (addresses: ReadonlyArray<string>, insecure: boolean): boolean => {
  const forbidden = addresses.filter((a) => isForbiddenAddress(hostOf(a)))
  return forbidden.length > 0 && !(insecure && forbidden.every((a) => isLoopbackHost(hostOf(a))))
}

/** Why the check before a send refused it: the text is the attempt's recorded error. */
const refusedAddress = "the endpoint's address is not allowed"

/**
 * The check before each send: the URL again, and its host resolved once, every address it answers checked. Gives the
 * addresses the transport may connect to (those the name answered, or the one written in the URL), or undefined
 * without a resolver (the transport resolves the name itself). Fails with the attempt's error: an address refused,
 * or the name not resolving.
 */
export const deliveryAddresses = (rawUrl: string, settings: WebhookSettingsValue): Effect.Effect<ReadonlyArray<string> | undefined, string> =>
  checkWebhookUrlText(rawUrl, settings.insecureWebhooks).pipe(
    Effect.mapError(() => refusedAddress),
    Effect.flatMap((url): Effect.Effect<ReadonlyArray<string> | undefined, string> => {
      const host = new URL(url).hostname
      if (literalRange(host) !== undefined) return Effect.succeed([host.startsWith("[") ? host.slice(1, -1) : host])
      const resolve = settings.resolveHost
      if (resolve === undefined) return Effect.succeed(undefined)
      return resolve(host.replace(/\.+$/, "")).pipe(
        Effect.mapError((e) => e.message),
        Effect.flatMap((addresses) => {
          if (addresses.length === 0) return Effect.fail(`${host} resolves to no address`)
          if (answerForbidden(addresses, settings.insecureWebhooks)) return Effect.fail(refusedAddress)
          // A localhost name is let through only with --insecure-webhooks, and then only to loopback addresses.
          if (isLocalName(host) && !addresses.every((a) => isLoopbackHost(hostOf(a)))) return Effect.fail(refusedAddress)
          return Effect.succeed(addresses)
        })
      )
    })
  )

const checkWebhookUrlText = (raw: string, insecure: boolean): Effect.Effect<string, ApiError> =>
  Effect.suspend(() => {
    if (raw.length > maxUrlLength) return Effect.fail(invalid("/url", `must be at most ${maxUrlLength} characters`))
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      return Effect.fail(invalid("/url", "must be an absolute HTTPS URL"))
    }
    if (url.username !== "" || url.password !== "") return Effect.fail(invalid("/url", "must not carry credentials"))
    const loopback = isLoopbackHost(url.hostname)
    if (url.protocol === "http:" && !(insecure && loopback)) {
      return Effect.fail(invalid("/url", insecure ? "must be HTTPS (http is allowed on loopback hosts only)" : "must be an HTTPS URL"))
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") return Effect.fail(invalid("/url", "must be an HTTPS URL"))
    if (isForbiddenAddress(url.hostname) && !(insecure && loopback)) {
      return Effect.fail(invalid("/url", "must not point to a private, loopback or link-local address"))
    }
    return Effect.succeed(url.toString())
  })

const newSecret = Effect.map(randomHex(64), (hex) => `whsec_${hex}`)

const nowIso = Effect.map(Clock.currentTimeMillis, toIso)

const notFound = () => apiError("WEBHOOK_ENDPOINT_NOT_FOUND", "No webhook endpoint with this id exists in this organization and environment.")

/** An endpoint of the caller's organization and environment, deleted ones included. */
const findEndpoint = (caller: Caller, id: string, lock = false) =>
  Effect.gen(function*() {
    const store = yield* Store
    const endpoint = yield* (lock ? store.getForUpdate(WebhookEndpoints, id) : store.get(WebhookEndpoints, id))
    if (endpoint === undefined || endpoint.organizationId !== caller.organization.id || endpoint.environment !== caller.environment) {
      return yield* notFound()
    }
    return endpoint
  })

export const createEndpoint = (caller: Caller, input: { readonly url: string; readonly subscription?: Subscription }) =>
  Effect.gen(function*() {
    const store = yield* Store
    const settings = yield* WebhookSettings
    const url = yield* checkWebhookUrl(input.url, settings)
    const now = yield* nowIso
    const endpoint: WebhookEndpoint = {
      id: yield* newId("wep"),
      organizationId: caller.organization.id,
      environment: caller.environment,
      url,
      subscription: input.subscription ?? { mode: "all" },
      status: "active",
      secret: yield* newSecret,
      previousSecret: undefined,
      createdAt: now,
      updatedAt: now,
      deletedAt: undefined
    }
    yield* Effect.orDie(store.insert(WebhookEndpoints, endpoint))
    return endpointToWire(endpoint, true)
  })

export const getEndpoint = (caller: Caller, id: string) =>
  Effect.flatMap(findEndpoint(caller, id), (e) => (e.deletedAt !== undefined ? Effect.fail(notFound()) : Effect.succeed(endpointToWire(e))))

export const listEndpoints = (caller: Caller, query: ListQuery): Effect.Effect<ListEnvelope<WebhookEndpointWire>, ApiError, Store> =>
  // Deleted endpoints keep their row (so a second DELETE is 204) but are not listed: the `live` order leaves them out.
  listPage(WebhookEndpoints, {
    order: "live",
    partition: scopeOf(caller.organization.id, caller.environment),
    query,
    toWire: (e) => endpointToWire(e)
  })

export const updateEndpoint = (
  caller: Caller,
  id: string,
  change: { readonly subscription?: Subscription; readonly status?: "active" | "disabled" }
) =>
  Effect.flatMap(Store, (store) =>
    store.transaction(Effect.gen(function*() {
      const endpoint = yield* findEndpoint(caller, id, true)
      if (endpoint.deletedAt !== undefined) return yield* notFound()
      const next: WebhookEndpoint = { ...endpoint, ...change, updatedAt: yield* nowIso }
      yield* Effect.orDie(store.update(WebhookEndpoints, next))
      return endpointToWire(next)
    })))

/** Deletes an endpoint: 204 also when it was deleted before; 404 only for an id that never existed here. */
export const deleteEndpoint = (caller: Caller, id: string) =>
  Effect.flatMap(Store, (store) =>
    store.transaction(Effect.gen(function*() {
      const endpoint = yield* findEndpoint(caller, id, true)
      if (endpoint.deletedAt !== undefined) return
      const now = yield* nowIso
      yield* Effect.orDie(store.update(WebhookEndpoints, { ...endpoint, status: "disabled", deletedAt: now, updatedAt: now }))
    })))

/** A new secret, returned once; the previous one keeps signing for the grace period. */
export const rotateSecret = (caller: Caller, id: string) =>
  Effect.flatMap(Store, (store) =>
    store.transaction(Effect.gen(function*() {
      const endpoint = yield* findEndpoint(caller, id, true)
      if (endpoint.deletedAt !== undefined) return yield* notFound()
      const nowMs = yield* Clock.currentTimeMillis
      const next: WebhookEndpoint = {
        ...endpoint,
        secret: yield* newSecret,
        previousSecret: { secret: endpoint.secret, untilMs: nowMs + rotationGraceMs },
        updatedAt: toIso(nowMs)
      }
      yield* Effect.orDie(store.update(WebhookEndpoints, next))
      return endpointToWire(next, true)
    })))

// --- events and fan-out ----------------------------------------------------------------------------------------

const fanoutKind = "webhook.fanout"
const attemptKind = "webhook.attempt"

/**
 * Emits an event: the outbox row and its fan-out, in the caller's transaction. The fan-out reads the scope's
 * endpoints once and writes a delivery (with its first attempt's timer) for each one subscribed, so an event
 * reaches exactly the endpoints that existed when its change committed, and an event nobody subscribes to costs
 * the outbox row and one read. (Fan-out used to be a timer of its own per event: two more writes and a firing
 * transaction for every event, which were most of a deposit's statements.)
 */
export const emitEvent = (event: {
  readonly type: EventType
  readonly organizationId: string
  readonly environment: Environment
  readonly data: unknown
}): Effect.Effect<OutboxEvent, never, Store> =>
  Effect.gen(function*() {
    const written = yield* appendEvent(event)
    yield* fanOut(written)
    return written
  })

/** The envelope receivers get; serialised once per delivery, so every attempt sends the same bytes. */
export const envelopeOf = (event: OutboxEvent) => ({
  id: event.id,
  type: event.type,
  createdAt: event.createdAt,
  apiVersion: "2" as const,
  mode: event.environment,
  data: event.data
})


export interface WebhookDelivery {
  readonly id: string
  readonly organizationId: string
  readonly environment: Environment
  readonly endpointId: string
  readonly eventId: string
  readonly eventType: string
  readonly status: DeliveryStatus
  /** Runs of 5 attempts: 1 at first, one more per manual retry. */
  readonly run: number
  /** Attempts made in the current run. */
  readonly attemptsInRun: number
  readonly body: string
  /** The timer that will act next on this delivery (an attempt or a recovery lease). */
  readonly timerId: string | undefined
  /**
   * The attempt claimed and not yet recorded (while processing): a recovery lease sends it again under this id, since
   * it is the same attempt, and the attempt is recorded under it.
   */
  readonly attemptId?: string | undefined
  readonly nextAttemptAt: string | null
  readonly lastAttemptAt: string | null
  readonly createdAt: string
  readonly updatedAt: string
}

/** The filters of `GET /webhooks/deliveries`, which combine freely. */
const deliveryFilterNames = ["endpointId", "status", "eventType"] as const
type DeliveryFilterName = (typeof deliveryFilterNames)[number]

/** How a delivery order's name spells each filter. */
const deliveryOrderWords: Readonly<Record<DeliveryFilterName, string>> = { endpointId: "Endpoint", status: "Status", eventType: "EventType" }

/**
 * One keyset order per combination of the delivery filters, so that every filtered list walks exactly the
 * deliveries it shows: full pages, a true total, and a page that costs the same however many deliveries the filters
 * leave out. The partition is the scope and the filters' values, in this order, joined by "/"; only the last can be
 * free text (an event type), so no two combinations of values give one partition. A status change moves the
 * delivery in the four orders that hold the status (the store keeps orders on update). The combinations are
 * kernel/Paging.ts's; the names are the ones stored: byScope, byEndpoint, byEndpointStatus, ...
 */
const deliveryOrders = filterCombinations(deliveryFilterNames, (names) =>
  names.length === 0 ? "byScope" : `by${names.map((name) => deliveryOrderWords[name]).join("")}`)

/** The organization's environment a delivery belongs to (its timers carry it, so a reset finds them). */
const deliveryScope = (d: WebhookDelivery) => scopeOf(d.organizationId, d.environment)

const deliveryPartition = (scope: string, names: ReadonlyArray<DeliveryFilterName>, values: DeliveryFilter): string =>
  [scope, ...names.map((name) => values[name])].join("/")

export const WebhookDeliveries = table<WebhookDelivery>({
  name: "webhook_deliveries",
  key: (d) => d.id,
  orders: Object.fromEntries(Object.entries(deliveryOrders).map(([order, names]) => [order, {
    partition: (d: WebhookDelivery) => deliveryPartition(deliveryScope(d), names, d),
    sort: (d: WebhookDelivery) => d.createdAt
  }]))
})

export interface WebhookAttempt {
  readonly id: string
  readonly deliveryId: string
  readonly run: number
  readonly number: number
  readonly startedAt: string
  readonly responseStatus: number | null
  readonly latencyMs: number
  readonly error: string | null
}

export const WebhookAttempts = table<WebhookAttempt>({
  name: "webhook_attempts",
  key: (a) => a.id,
  orders: { byDelivery: { partition: (a) => a.deliveryId, sort: (a) => a.run * 100 + a.number } }
})

const subscribed = (endpoint: WebhookEndpoint, type: string): boolean =>
  endpoint.subscription.mode === "all" || endpoint.subscription.eventTypes.includes(type as EventType)

/**
 * Fan-out timers stored by an earlier fos (which fanned out on a timer per event) still fire: they fan their
 * event out as `emitEvent` now does inline.
 */
const fanoutTimer: TimerHandler = (payload: { readonly eventId: string }) =>
  Effect.gen(function*() {
    const event = yield* Effect.flatMap(Store, (store) => store.get(OutboxEvents, payload.eventId))
    if (event !== undefined) yield* fanOut(event)
  })

/** Fan-out: one delivery per active endpoint of the event's organization and environment subscribed to it. */
const fanOut = (event: OutboxEvent): Effect.Effect<void, never, Store> =>
  Effect.gen(function*() {
    const store = yield* Store
    const endpoints = yield* store.page(WebhookEndpoints, {
      order: "live",
      partition: scopeOf(event.organizationId, event.environment),
      descending: false,
      backward: false,
      from: undefined,
      limit: 10_000
    })
    const nowMs = yield* Clock.currentTimeMillis
    const now = toIso(nowMs)
    const body = JSON.stringify(envelopeOf(event))
    for (const endpoint of endpoints) {
      if (endpoint.status !== "active" || endpoint.deletedAt !== undefined || !subscribed(endpoint, event.type)) continue
      const id = yield* newId("wdl")
      const timerId = yield* schedule(attemptKind, nowMs, { deliveryId: id }, scopeOf(event.organizationId, event.environment))
      yield* store.insertFresh(WebhookDeliveries, {
        id,
        organizationId: event.organizationId,
        environment: event.environment,
        endpointId: endpoint.id,
        eventId: event.id,
        eventType: event.type,
        status: "pending",
        run: 1,
        attemptsInRun: 0,
        body,
        timerId,
        nextAttemptAt: now,
        lastAttemptAt: null,
        createdAt: now,
        updatedAt: now
      })
    }
  })

// --- dispatch ----------------------------------------------------------------------------------------------------

/** Waits after attempts 1 to 4 of a run; attempt 5 failing ends the run. */
export const retryDelaysSeconds = [30, 120, 900, 3600] as const
export const attemptsPerRun = retryDelaysSeconds.length + 1
/** How long a claimed attempt may take before its recovery lease sends it again. */
const leaseMs = 60_000
/** The most a receiver is given to answer. */
export const receiverTimeoutMs = 5_000

/** The X-Service-Signature value for `body` at `t` (unix seconds), one v1 per secret. */
export const signatureHeader = (t: number, body: string, secrets: ReadonlyArray<string>): string =>
  [`t=${t}`, ...secrets.map((secret) => `v1=${bytesToHex(hmac(sha256, utf8ToBytes(secret), utf8ToBytes(`${t}.${body}`)))}`)].join(",")

const attempt: TimerHandler = (payload: { readonly deliveryId: string }) =>
  Effect.gen(function*() {
    const store = yield* Store
    const delivery = yield* store.getForUpdate(WebhookDeliveries, payload.deliveryId)
    if (delivery === undefined || delivery.status === "succeeded" || delivery.status === "failed") return undefined
    const endpoint = yield* store.get(WebhookEndpoints, delivery.endpointId)
    const nowMs = yield* Clock.currentTimeMillis
    if (endpoint === undefined || endpoint.deletedAt !== undefined) {
      // A deleted endpoint receives nothing more.
      yield* Effect.orDie(store.update(WebhookDeliveries, {
        ...delivery,
        status: "failed",
        timerId: undefined,
        attemptId: undefined,
        nextAttemptAt: null,
        updatedAt: toIso(nowMs)
      }))
      return undefined
    }
    const lease = yield* schedule(attemptKind, nowMs + leaseMs, { deliveryId: delivery.id }, deliveryScope(delivery))
    // Each attempt has its own id; a lease that finds its attempt claimed but never recorded sends it again as is.
    const attemptId = delivery.status === "processing" && delivery.attemptId !== undefined ? delivery.attemptId : yield* newId("wda")
    const claimed: WebhookDelivery = { ...delivery, status: "processing", timerId: lease, attemptId, updatedAt: toIso(nowMs) }
    yield* Effect.orDie(store.update(WebhookDeliveries, claimed))
    const secrets = endpoint.previousSecret !== undefined && nowMs < endpoint.previousSecret.untilMs
      ? [endpoint.secret, endpoint.previousSecret.secret]
      : [endpoint.secret]
    // `t` guards the transport: the engine's time by default, real time when the receivers check their own clock.
    const signedMs = (yield* WebhookSettings).signatureClock?.currentTimeMillisUnsafe() ?? nowMs
    const request: DeliveryRequest = {
      deliveryId: delivery.id,
      attemptId,
      url: endpoint.url,
      body: delivery.body,
      headers: {
        "content-type": "application/json",
        "x-service-signature": signatureHeader(Math.floor(signedMs / 1000), delivery.body, secrets),
        "x-service-delivery-id": attemptId,
        "x-service-event": delivery.eventType,
        "user-agent": "fos-webhooks/2"
      }
    }
    const send: AfterCommit = sendAndRecord(claimed, lease, request, nowMs)
    return send
  })

/** Sends one attempt and records it; the next attempt, or the end of the run, is scheduled in the same transaction. */
const sendAndRecord = (delivery: WebhookDelivery, lease: string, request: DeliveryRequest, startedMs: number): AfterCommit =>
  Effect.gen(function*() {
    const transport = yield* WebhookTransport
    const settings = yield* WebhookSettings
    // The receiver's time limit is real time, whatever clock the engine runs on.
    const realClock = Clock.Clock.defaultValue()
    const realStart = realClock.currentTimeMillisUnsafe()
    // Checked again before each send, since a name can come to resolve somewhere else, and sent to the address that
    // was checked, so that the name cannot answer differently in between (DNS rebinding).
    const target = yield* Effect.result(deliveryAddresses(request.url, settings))
    const outcome = target._tag === "Failure"
      ? { status: null, error: target.failure }
      : yield* transport.send(target.success === undefined ? request : { ...request, addresses: target.success }).pipe(
        Effect.timeoutOrElse({
          duration: Duration.millis(receiverTimeoutMs),
          orElse: () => Effect.fail(new TransportError({ message: `no answer within ${receiverTimeoutMs / 1000} seconds` }))
        }),
        Effect.provideService(Clock.Clock, realClock),
        Effect.match({
          onFailure: (e) => ({ status: null, error: e.message }),
          onSuccess: (r) => ({ status: r.status, error: r.status >= 200 && r.status < 300 ? null : `answered ${r.status}` })
        })
      )
    const latencyMs = Math.max(0, realClock.currentTimeMillisUnsafe() - realStart)
    const store = yield* Store
    yield* store.transaction(Effect.gen(function*() {
      const current = yield* store.getForUpdate(WebhookDeliveries, delivery.id)
      // Another process took this delivery over after our lease ran out: its attempt is the one that counts.
      if (current === undefined || current.timerId !== lease) return
      yield* store.remove(Timers, lease)
      const number = current.attemptsInRun + 1
      yield* Effect.orDie(store.insert(WebhookAttempts, {
        id: request.attemptId,
        deliveryId: current.id,
        run: current.run,
        number,
        startedAt: toIso(startedMs),
        responseStatus: outcome.status,
        latencyMs,
        error: outcome.error
      }))
      const nowMs = yield* Clock.currentTimeMillis
      const base = { ...current, attemptsInRun: number, attemptId: undefined, lastAttemptAt: toIso(startedMs), updatedAt: toIso(nowMs) }
      if (outcome.error === null) {
        return yield* Effect.orDie(store.update(WebhookDeliveries, { ...base, status: "succeeded", timerId: undefined, nextAttemptAt: null }))
      }
      if (number >= attemptsPerRun) {
        return yield* Effect.orDie(store.update(WebhookDeliveries, { ...base, status: "failed", timerId: undefined, nextAttemptAt: null }))
      }
      const dueMs = nowMs + retryDelaysSeconds[number - 1]! * 1000
      const timerId = yield* schedule(attemptKind, dueMs, { deliveryId: current.id }, deliveryScope(current))
      yield* Effect.orDie(store.update(WebhookDeliveries, { ...base, status: "pending", timerId, nextAttemptAt: toIso(dueMs) }))
    }))
  }) as AfterCommit

/** The engine's webhook timers, over the transport they deliver with. */
export const webhookTimerHandlers = (transport: WebhookTransportService, settings: WebhookSettingsValue): Record<string, TimerHandler> => {
  const provide = <A>(effect: Effect.Effect<A, never, Store | WebhookTransport>) =>
    effect.pipe(Effect.provideService(WebhookTransport, transport), Effect.provideService(WebhookSettings, settings))
  return {
    [fanoutKind]: fanoutTimer,
    [attemptKind]: (payload) =>
      Effect.map(provide(attempt(payload) as Effect.Effect<void | AfterCommit, never, Store>), (after) =>
        after === undefined ? undefined : provide(after as Effect.Effect<void, never, Store | WebhookTransport>))
  }
}

// --- deliveries API ------------------------------------------------------------------------------------------------

export const deliveryToWire = (d: WebhookDelivery): DeliveryWire => ({
  id: d.id,
  endpointId: d.endpointId,
  eventId: d.eventId,
  eventType: d.eventType,
  status: d.status,
  attempts: d.attemptsInRun,
  run: d.run,
  nextAttemptAt: d.nextAttemptAt,
  lastAttemptAt: d.lastAttemptAt,
  createdAt: d.createdAt,
  updatedAt: d.updatedAt
})

export interface DeliveryFilter {
  readonly endpointId: string | undefined
  readonly status: DeliveryStatus | undefined
  readonly eventType: string | undefined
}

/** Lists deliveries; filters combine freely, and each combination walks its own order (`deliveryOrders`). */
export const listDeliveries = (caller: Caller, filter: DeliveryFilter, query: ListQuery) => {
  const given = deliveryFilterNames.filter((name) => filter[name] !== undefined)
  const [order, names] = Object.entries(deliveryOrders).find(([, names]) =>
    names.length === given.length && names.every((name) => given.includes(name)))!
  const partition = deliveryPartition(scopeOf(caller.organization.id, caller.environment), names, filter)
  return listPage(WebhookDeliveries, { order, partition, query, toWire: deliveryToWire })
}

export const getDelivery = (caller: Caller, id: string) =>
  Effect.gen(function*() {
    const store = yield* Store
    const delivery = yield* store.get(WebhookDeliveries, id)
    if (delivery === undefined || delivery.organizationId !== caller.organization.id || delivery.environment !== caller.environment) {
      return yield* apiError("NOT_FOUND", "No webhook delivery with this id exists in this organization and environment.")
    }
    const attempts = yield* store.page(WebhookAttempts, { order: "byDelivery", partition: id, descending: false, backward: false, from: undefined, limit: 1000 })
    return {
      ...deliveryToWire(delivery),
      attemptList: attempts.map((a) => ({
        id: a.id,
        run: a.run,
        number: a.number,
        startedAt: a.startedAt,
        responseStatus: a.responseStatus,
        latencyMs: a.latencyMs,
        error: a.error
      }))
    }
  })

/** A manual retry: only a failed delivery, which starts a new run of 5 attempts at once. */
export const retryDelivery = (caller: Caller, id: string) =>
  Effect.flatMap(Store, (store) =>
    store.transaction(Effect.gen(function*() {
      const delivery = yield* store.getForUpdate(WebhookDeliveries, id)
      if (delivery === undefined || delivery.organizationId !== caller.organization.id || delivery.environment !== caller.environment) {
        return yield* apiError("NOT_FOUND", "No webhook delivery with this id exists in this organization and environment.")
      }
      if (delivery.status !== "failed") {
        return yield* apiError("WEBHOOK_DELIVERY_NOT_RETRYABLE", `The delivery is ${delivery.status}; only a failed delivery can be retried.`)
      }
      const nowMs = yield* Clock.currentTimeMillis
      const timerId = yield* schedule(attemptKind, nowMs, { deliveryId: id }, deliveryScope(delivery))
      const next: WebhookDelivery = {
        ...delivery,
        status: "pending",
        run: delivery.run + 1,
        attemptsInRun: 0,
        timerId,
        nextAttemptAt: toIso(nowMs),
        updatedAt: toIso(nowMs)
      }
      yield* Effect.orDie(store.update(WebhookDeliveries, next))
      return deliveryToWire(next)
    })))

export const isEventType = (s: string): s is EventType => (EventTypes as ReadonlyArray<string>).includes(s)

