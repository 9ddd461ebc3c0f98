/**
 * The request pipeline, in the order a request meets it:
 *
 * - The edge, around every route (`Edge.serve`, applied to each route when the server is built): correlation ids,
 *   the request's base address (`/sandbox` or `/live`, which each route knows as its own), the engine's services
 *   when the server's context lacks them, the 500 for anything unexpected, and the response headers every answer
 *   carries. What no route matches goes to `Edge.unrouted`
 *   (a global middleware): `/healthz`, the `/docs` reference pages, the `/inspect` application, bad percent-encoding, and the unknown-route
 *   404 (after authentication, so routes cannot be probed without a key).
 * - The gate, around each endpoint (`Edge.gate`, settled per endpoint when the server is built): authentication,
 *   the rate limit, the body checks (media type, size, JSON; or on an endpoint marked `Upload`, the multipart form),
 *   idempotency, and the endpoint's run (Router.ts), given the admitted caller.
 *
 * Every problem body is rendered by `Problem.render` and sent as JSON, never with a stack trace.
 */
import type { Engine } from "@fos/core"
import {
  Auth,
  Clocks,
  Documents,
  History,
  Idempotency,
  IdGenerator,
  Payouts,
  Problem,
  RandomStreams,
  RateLimit,
  RealClock,
  Store,
  Tenancy,
  Timers,
  Wire
} from "@fos/core"
import {
  type DedicatedBucket,
  type Environment,
  type IdempotencyPolicy,
  policyOf,
  type ReplayRead,
  toIso,
  type UploadPolicy
} from "@fos/contract"
import { ByteSize, Cause, Clock, Context, Effect, Fiber, Layer, Option, Random, type Schema, Stream } from "effect"
import { HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse, Multipart } from "effect/http"
import type { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { DocsFiles, errorReferencePage, makeDocsPages } from "./Docs.ts"
import { DropConnection, faultableTarget, faultTargetOf, underFault } from "./Faults.ts"
import { inspectorPage } from "./Inspector.ts"
import { LiveFeed } from "./LiveFeed.ts"
import { problemTypeOf, RequestLog } from "./RequestLog.ts"
import { CurrentUpload } from "./ServerApi.ts"

/** What the pipeline knows of one request; filled in as the request moves through it. */
export interface RequestInfo {
  readonly correlationId: string
  readonly clientCorrelationId: string | undefined
  /** The base address's environment; undefined on the operator surface, which has none. */
  readonly environment: Environment | undefined
  /** The resolved path, base included, query stripped: the problem's `instance`. */
  readonly instance: string
  readonly clientIp: string
  rate: RateLimit.Decision | undefined
  /** The caller's organization, once its key is accepted (for the request log). */
  organizationId: string | undefined
  /**
   * The clock the request runs on, once its caller is known, under the virtual clock: its sandbox's, read once
   * (docs/clock.md). Undefined: the engine's.
   */
  clock: Clock.Clock | undefined
  /** When the request reached the edge, on the real clock's monotonic nanoseconds (for durations only). */
  readonly startedNs: bigint
  /** The request itself: a problem's `docs` is on its origin, worked out only when a problem is rendered. */
  readonly request: HttpServerRequest.HttpServerRequest
  /** The sandbox fault that shaped the answer, if one did (Faults.ts), for the request log. */
  injected: string | undefined
}

/**
 * One request header, by its lower-case name. Effect's `request.headers` copies every header of the request into a
 * record of its own on first read, lower-casing each name, and the edge reads two or three headers on every
 * request. Node's server holds that record already, with the names lower-cased and a repeated header's values
 * joined with ", " as Effect's copy has them, so on Node the edge reads Node's; a web `Request` (Bun, Deno,
 * `engine.fetch`) holds a `Headers` object instead, read through Effect's copy.
 */
export const headerOf = (request: HttpServerRequest.HttpServerRequest, name: string): string | undefined => {
  const own = (request.source as { readonly headers?: unknown }).headers
  if (typeof own !== "object" || own === null || typeof (own as { readonly get?: unknown }).get === "function") return request.headers[name]
  const value = (own as Readonly<Record<string, string | ReadonlyArray<string> | undefined>>)[name]
  return value === undefined || typeof value === "string" ? value : value.join(", ")
}

/** The largest JSON body accepted, in bytes (docs/decisions.md). */
export const maxJsonBodyBytes = 1024 * 1024

const jsonType = "application/json"

/**
 * The origin a request was sent to (`http://host:port`): the URL an embedded engine was called with when it is
 * absolute (a `Request` handed to the web handler, as on Bun and Deno), else the Host header and the server's
 * protocol (Node's server); `http://localhost` when neither can be read.
 */
export const originOf = (request: HttpServerRequest.HttpServerRequest): string => {
  const original = request.originalUrl
  if (/^https?:\/\//i.test(original)) {
    try {
      return new URL(original).origin
    } catch {
      // not a URL after all: the Host header's turn
    }
  }
  return Option.match(HttpServerRequest.toURL(request), { onNone: () => "http://localhost", onSome: (url) => url.origin })
}

export const problemResponse = (error: Problem.ApiError, info: RequestInfo, nowMs: number): HttpServerResponse.HttpServerResponse => {
  const body = Problem.render(error, {
    instance: info.instance,
    correlationId: info.correlationId,
    timestamp: toIso(nowMs),
    origin: originOf(info.request)
  })
  const response = HttpServerResponse.text(JSON.stringify(body), {
    status: error.status,
    contentType: jsonType,
    // A 413 leaves the body unread, and the server closes the connection rather than read the rest: it says so, so
    // that a client does not send its next request on a connection about to close (docs/decisions.md).
    ...(error.status === 413 ? { headers: { connection: "close" } } : {})
  })
  return error.retryAfterSeconds === undefined ? response : HttpServerResponse.setHeader(response, "retry-after", String(error.retryAfterSeconds))
}

/** Which part of a request failed to decode. */
export type SchemaFailureKind = "Params" | "Query" | "Headers" | "Payload"

/** Maps a decoding failure of a request's part to the spec's problem. */
export const fromSchemaError = (kind: SchemaFailureKind, error: Schema.SchemaError): Problem.ApiError => {
  const failure = Wire.decodeFailure(error.issue)
  if (kind === "Payload") {
    return Problem.invalidRequest(failure.errors)
  }
  if (failure.code === "INVALID_OID_FORMAT") {
    const first = failure.errors.find((e) => e.detail.includes(" id ")) ?? failure.errors[0]!
    return Problem.apiError("INVALID_OID_FORMAT", `${first.pointer.slice(1) || "The identifier"} ${first.detail}.`)
  }
  const where = kind === "Query" ? "query" : kind === "Params" ? "path" : "headers"
  return Problem.invalidRequest(failure.errors, where)
}

const bodyMethods = new Set(["POST", "PUT", "PATCH", "DELETE"])

/** The methods a read-only key may use (the spec's Authentication rule 4). */
const readMethods = new Set(["GET", "HEAD", "OPTIONS"])

/** Reads and checks a JSON body: media type, size and syntax. Returns the raw text. */
export const readJsonBody = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<string, Problem.ApiError> =>
  Effect.gen(function*() {
    const contentType = headerOf(request, "content-type")
    if (contentType !== undefined && contentType.split(";")[0]!.trim().toLowerCase() !== jsonType) {
      return yield* Problem.apiError("UNSUPPORTED_MEDIA_TYPE", "This endpoint takes Content-Type: application/json.")
    }
    // Built only when needed: an error captures a stack trace, and this runs on every write.
    const tooLarge = () => Problem.apiError("PAYLOAD_TOO_LARGE", `The request body is larger than ${maxJsonBodyBytes} bytes.`)
    const declared = Number(headerOf(request, "content-length"))
    if (Number.isFinite(declared) && declared > maxJsonBodyBytes) return yield* tooLarge()
    const text = yield* request.text.pipe(
      Effect.provideService(HttpIncomingMessage.MaxBodySize, BigInt(maxJsonBodyBytes) as never),
      Effect.mapError(tooLarge)
    )
    if (text.length > 0) {
      try {
        JSON.parse(text)
      } catch {
        return yield* Problem.apiError("MALFORMED_JSON", "The request body is not valid JSON.")
      }
    }
    return text
  })

/**
 * What an upload's body may carry beyond its file: the boundaries, the part headers and the small text fields. The
 * whole body is limited to the file limit plus this.
 */
export const multipartOverheadBytes = 64 * 1024

/** The most parts an upload form may have. */
export const maxUploadParts = 16

const multipartType = "multipart/form-data"

/** The parts of an upload form, and a digest of them that names the same form whatever its boundary. */
export interface UploadForm {
  readonly parts: ReadonlyArray<Documents.FormPart>
  readonly digest: string
}

/**
 * Reads and parses an upload endpoint's body with Effect's multipart parser (pure, so the same on Node, Bun and
 * Deno): only multipart/form-data (else 415); the whole body at most the file limit plus
 * `multipartOverheadBytes`, and each file at most the file limit (else 413 FILE_TOO_LARGE naming the field); a body
 * that is not well-formed multipart is 400 BAD_REQUEST. The form's own fields are checked by the endpoint.
 */
export const readUpload = (request: HttpServerRequest.HttpServerRequest, policy: UploadPolicy): Effect.Effect<UploadForm, Problem.ApiError> =>
  Effect.gen(function*() {
    const contentType = headerOf(request, "content-type")
    if (contentType === undefined || contentType.split(";")[0]!.trim().toLowerCase() !== multipartType) {
      return yield* Problem.apiError("UNSUPPORTED_MEDIA_TYPE", "This endpoint takes a file upload: Content-Type: multipart/form-data.")
    }
    const maxBodyBytes = policy.maxFileBytes + multipartOverheadBytes
    const tooLarge = (field: string) =>
      Problem.apiError(
        "FILE_TOO_LARGE",
        `Files may be at most ${policy.maxFileBytes} bytes (${policy.maxFileBytes / (1024 * 1024)} MiB), and the whole form at most ${maxBodyBytes} bytes.`,
        { field }
      )
    const declared = Number(headerOf(request, "content-length"))
    if (Number.isFinite(declared) && declared > maxBodyBytes) return yield* tooLarge(policy.fileField)
    const body = yield* request.arrayBuffer.pipe(
      Effect.provideService(HttpIncomingMessage.MaxBodySize, BigInt(maxBodyBytes) as never),
      Effect.mapError((e) =>
        (e.reason as { reason?: string }).reason === "BodyTooLarge"
          ? tooLarge(policy.fileField)
          : Problem.apiError("BAD_REQUEST", "The request body could not be read.")
      )
    )
    const malformed = () => Problem.apiError("BAD_REQUEST", "The request body is not well-formed multipart/form-data.")
    const parts = yield* Stream.make(new Uint8Array(body)).pipe(
      Stream.pipeThroughChannel(Multipart.makeChannel(request.headers)),
      Stream.mapEffect((part): Effect.Effect<Documents.FormPart, Multipart.MultipartError> =>
        part._tag === "Field"
          ? Effect.succeed({ _tag: "Field", name: part.key, value: part.value })
          : Effect.map(part.contentEffect, (bytes) => ({
            _tag: "File",
            name: part.key,
            fileName: part.name,
            contentType: part.contentType.split(";")[0]!.trim().toLowerCase(),
            bytes,
            sha256: Documents.sha256HexOfBytes(bytes)
          }))
      ),
      Stream.runCollect,
      // The body is already bounded; parts are counted so a form of thousands of empty parts is refused early.
      Effect.provideService(Multipart.MaxParts, maxUploadParts),
      Effect.provideService(Multipart.MaxFieldSize, ByteSize.bytes(BigInt(maxBodyBytes))),
      Effect.mapError((e) =>
        e.reason._tag === "TooManyParts"
          ? Problem.apiError("VALIDATION_ERROR", "The upload form failed validation; see errors[].", {
            errors: [{ pointer: "", detail: `must have at most ${maxUploadParts} parts` }]
          })
          : malformed()
      ),
      // effect 4.1.0's parser throws (a TypeError, so a defect) on a part whose headers do not end before the next
      // boundary; that is a malformed body too. Only this pure parse is covered, over bytes already in memory.
      Effect.catchDefect(() => Effect.fail(malformed()))
    )
    const oversized = parts.find((p) => p._tag === "File" && p.bytes.length > policy.maxFileBytes)
    if (oversized !== undefined) return yield* tooLarge(oversized.name)
    // A retry of the same form may come with another boundary, so the digest is of the parts, not the bytes: each
    // part's name, kind, and value or file name, type and SHA-256, in field-name order.
    const digest = JSON.stringify(
      [...parts]
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        .map((p) => (p._tag === "Field" ? [p.name, "field", p.value] : [p.name, "file", p.fileName, p.contentType, p.sha256]))
    )
    return { parts, digest }
  })

const toStored = (response: HttpServerResponse.HttpServerResponse): Idempotency.StoredResponse => {
  const body = response.body
  const text = body._tag === "Uint8Array" ? new TextDecoder().decode(body.body) : body._tag === "Empty" ? "" : String((body as { body?: unknown }).body ?? "")
  return { status: response.status, contentType: response.headers["content-type"] ?? jsonType, body: text }
}

const fromStored = (stored: Idempotency.StoredResponse) =>
  stored.body === "" && stored.status === 204
    ? HttpServerResponse.empty({ status: stored.status })
    : HttpServerResponse.text(stored.body, { status: stored.status, contentType: stored.contentType })

/**
 * Authentication, the rate limit, a read-only key's refusal and the organization's restriction over the engine's
 * services: the caller, with the bucket's decision recorded on the request for the response headers. The spec's
 * Limits: "once the key is accepted, every response carries" the rate headers, so the refusals that come after the
 * key is known good (rule 3's 403 for a suspended organization, rule 7's 403 API_KEY_READ_ONLY, and the restriction's
 * 403 ORGANIZATION_ACCESS_SUSPENDED) come
 * after the bucket, count against it and carry its headers. `restrictable` says the request is one a restricted
 * organization is refused (a write its endpoint does not keep open). Written as a short chain of effects: it runs
 * on every request. On a seeded engine (`streams`), what the caller's request invents comes from its organization's
 * stream (RandomStreams.ts).
 */
/** What a restricted organization's 403 tells the caller to do (docs/decisions.md, "A restriction restricts"). */
const restrictedResolution =
  "Reads, webhook management, documents and the organization's own onboarding stay open; new business waits until the restriction is lifted (contact support; in the sandbox, POST /v2/simulate/organization/unrestrict)."

/** What a request under the virtual clock reads with its key: its sandbox's clock (`<organization>/sandbox`). */
const clockLinks = (environment: Environment): ReadonlyArray<Store.Link> =>
  environment === "sandbox" ? [{ table: Clocks.Clocks, member: "organizationId", suffix: "/sandbox" }] : []

export const makeAdmit = (
  store: Store.StoreService,
  limiter: RateLimit.RateLimiterService,
  streams?: RandomStreams.RandomStreamsService,
  linked?: (environment: Environment) => ReadonlyArray<Store.Link>
) => {
  const authenticate = Auth.makeAuthenticate(store, limiter, linked)
  // A limiter whose takes cost a round trip (the buckets processes share) is asked for a known key's token while the
  // key is read, from the bucket the key's caller last counted against: one round trip for both. What the read finds
  // decides; a token taken from a bucket the request does not count against (the key refused since, the
  // organization's limit changed) goes back. The callers are those of keys admitted lately, in this process only.
  const lastAdmitted = limiter.refund === undefined ? undefined : new Map<string, Auth.Caller>()
  const maxRemembered = 4096
  const sameBucket = (a: ReturnType<typeof Auth.rateLimitFor>, b: ReturnType<typeof Auth.rateLimitFor>) =>
    a.scope === b.scope && a.name === b.name && a.spec.perSecond === b.spec.perSecond && a.spec.burst === b.spec.burst
  const asked = (taken: RateLimit.Decision | Effect.Effect<RateLimit.Decision>) => (Effect.isEffect(taken) ? taken : Effect.succeed(taken))
  // The admitted caller goes straight on to `then`: every step of the per-request chain costs (docs/performance.md).
  return <A, E, R>(
    info: RequestInfo,
    method: string,
    apiKey: string | undefined,
    dedicated: DedicatedBucket | undefined,
    restrictable: boolean,
    then: (caller: Auth.Caller) => Effect.Effect<A, E, R>
  ): Effect.Effect<A, Problem.ApiError | E, R> => {
    if (info.environment === undefined) return Effect.die(new Error("admit outside a base address"))
    const credentials: Auth.Credentials = { method: "GET", environment: info.environment, apiKey, clientIp: info.clientIp }
    const guess = apiKey === undefined ? undefined : lastAdmitted?.get(apiKey)
    if (guess === undefined || guess.environment !== info.environment) {
      return authenticate(credentials, (caller) => {
        if (lastAdmitted !== undefined && apiKey !== undefined) {
          if (lastAdmitted.size >= maxRemembered) lastAdmitted.clear()
          lastAdmitted.set(apiKey, caller)
        }
        const limit = Auth.rateLimitFor(caller, dedicated)
        return RateLimit.decide(limiter.take(limit.scope, limit.name, limit.spec), (decision) => admitted(caller, decision))
      })
    }
    const guessed = Auth.rateLimitFor(guess, dedicated)
    // Asked when the request runs, not when its effect is made: a shared bucket queues the asker at once.
    return Effect.flatMap(Effect.forkChild(Effect.suspend(() => asked(limiter.take(guessed.scope, guessed.name, guessed.spec)))), (token) => {
      let spent = false
      const giveBack = Effect.flatMap(Fiber.join(token), (decision) => (decision.allowed ? limiter.refund!(guessed.scope, guessed.name, guessed.spec) : Effect.void))
      return authenticate(credentials, (caller) => {
        spent = true
        lastAdmitted!.set(apiKey!, caller)
        const limit = Auth.rateLimitFor(caller, dedicated)
        if (sameBucket(limit, guessed)) return Effect.flatMap(Fiber.join(token), (decision) => admitted(caller, decision))
        return Effect.andThen(giveBack, Effect.suspend(() => RateLimit.decide(limiter.take(limit.scope, limit.name, limit.spec), (decision) => admitted(caller, decision))))
      }).pipe(Effect.onExit(() => {
        if (spent) return Effect.void
        lastAdmitted!.delete(apiKey!)
        return Effect.ignore(giveBack)
      }))
    })

    // Rule 7 (a read-only key on a write) is checked here, after the bucket, rather than by `authenticate`: it is
    // asked as a read, which every accepted key may make.
    function admitted(caller: Auth.Caller, decision: RateLimit.Decision): Effect.Effect<A, Problem.ApiError | E, R> {
      info.organizationId = caller.organization.id
      info.rate = decision
      if (!decision.allowed) {
        return Effect.fail(Problem.apiError("RATE_LIMITED", "The rate limit of this bucket is exhausted.", { retryAfterSeconds: decision.retryAfterSeconds! }))
      }
      if (Auth.isSuspended(caller)) return Effect.fail(Auth.suspendedError())
      if (caller.key.access === "read_only" && !readMethods.has(method)) {
        return Effect.fail(Problem.apiError("API_KEY_READ_ONLY", "A read-only key may use GET, HEAD and OPTIONS only."))
      }
      if (restrictable && caller.organization.restrictedIn !== undefined && Tenancy.isRestrictedIn(caller.organization, caller.environment)) {
        return Effect.fail(Problem.apiError("ORGANIZATION_ACCESS_SUSPENDED", "The organization is restricted: it may read and manage what it has, but not start new business.", {
          // The catalog's resolution speaks of a suspension (every key refused); a restriction refuses new business only.
          resolution: restrictedResolution
        }))
      }
      return streams === undefined
        ? then(caller)
        : Effect.provideService(then(caller), Random.Random, streams.of(Tenancy.scopeOf(caller.organization.id, caller.environment)))
    }
  }
}

/**
 * An endpoint's run (Router.ts compiles one per endpoint): decoding, the handler and its response, over the request,
 * its body text as the gate read and checked it (undefined on reads and uploads), and the caller the gate admitted.
 */
export type EndpointRun = (
  request: HttpServerRequest.HttpServerRequest,
  body: string | undefined,
  caller: Auth.Caller
) => Effect.Effect<HttpServerResponse.HttpServerResponse, Problem.ApiError>

/**
 * A route's work under the edge: the request and what the edge knows of it, to a response or a problem. The edge
 * runs it in a context that holds the engine's services.
 */
export type RouteRun = (
  request: HttpServerRequest.HttpServerRequest,
  info: RequestInfo
) => Effect.Effect<HttpServerResponse.HttpServerResponse, Problem.ApiError, Engine.EngineServices>

/** How a replayed answer is read again, for each `ReplayRead` an endpoint may name (contract/api/Policies.ts). */
const replayReads: { readonly [K in ReplayRead]: (caller: Auth.Caller, stored: Idempotency.StoredResponse) => Effect.Effect<Idempotency.StoredResponse, never, Store.Store> } = {
  payout: Payouts.replay
}

/**
 * A keyed or unkeyed write: the body checks (JSON, or an upload's form, which the handler then reads as
 * `CurrentUpload`), then idempotency as the endpoint declares it.
 */
const write = (
  endpointRun: (body: string | undefined) => Effect.Effect<HttpServerResponse.HttpServerResponse, Problem.ApiError>,
  request: HttpServerRequest.HttpServerRequest,
  info: RequestInfo,
  caller: Auth.Caller,
  policy: IdempotencyPolicy,
  transactional: boolean,
  upload: UploadPolicy | undefined,
  refresh?: ((caller: Auth.Caller, stored: Idempotency.StoredResponse) => Effect.Effect<Idempotency.StoredResponse, never, Store.Store>) | undefined,
  /** The sandbox's request faults, given the JSON body (Faults.ts); undefined when the caller has none. */
  faulted?: <R>(body: string | undefined, proceed: Effect.Effect<HttpServerResponse.HttpServerResponse, Problem.ApiError, R>) => Effect.Effect<HttpServerResponse.HttpServerResponse, Problem.ApiError, R | Store.Store>
) =>
  Effect.gen(function*() {
    let run: Effect.Effect<HttpServerResponse.HttpServerResponse, Problem.ApiError>
    let body: string
    if (upload === undefined) {
      body = yield* readJsonBody(request)
      run = endpointRun(body)
    } else {
      const form = yield* readUpload(request, upload)
      run = Effect.provideService(endpointRun(undefined), CurrentUpload, form.parts)
      body = form.digest
    }
    if (faulted !== undefined) return yield* faulted(upload === undefined ? body : undefined, keyedWrite(run, body, request, info, caller, policy, transactional, refresh))
    return yield* keyedWrite(run, body, request, info, caller, policy, transactional, refresh)
  })

/** A write's idempotency, as its endpoint declares it, around its run. */
const keyedWrite = (
  run: Effect.Effect<HttpServerResponse.HttpServerResponse, Problem.ApiError>,
  body: string,
  request: HttpServerRequest.HttpServerRequest,
  info: RequestInfo,
  caller: Auth.Caller,
  policy: IdempotencyPolicy,
  transactional: boolean,
  refresh: ((caller: Auth.Caller, stored: Idempotency.StoredResponse) => Effect.Effect<Idempotency.StoredResponse, never, Store.Store>) | undefined
) =>
  Effect.gen(function*() {
    const key = headerOf(request, "idempotency-key")
    if (key === undefined) {
      if (policy === "required") return yield* Problem.apiError("IDEMPOTENCY_KEY_REQUIRED", "This endpoint requires an Idempotency-Key header.")
      // A write without a key commits all or nothing too, as a keyed one does: its row locks must hold until it
      // ends, or a racing request or timer moves the same row between its read and its write.
      return yield* (transactional ? (yield* Store.Store).transaction(run) : run)
    }
    if (policy === "refused") {
      return yield* Problem.apiError("VALIDATION_ERROR", "This endpoint does not take an Idempotency-Key header.", {
        errors: [{ pointer: "/headers/idempotency-key", detail: "is not accepted on this endpoint" }]
      })
    }
    if (!Idempotency.isValidIdempotencyKey(key)) {
      return yield* Problem.apiError("VALIDATION_ERROR", "The Idempotency-Key header is not valid.", {
        errors: [{ pointer: "/headers/idempotency-key", detail: "must be 1 to 255 visible ASCII characters" }]
      })
    }
    const result = yield* Idempotency.runIdempotent(
      {
        scope: `${caller.organization.id}/${caller.environment}`,
        key,
        fingerprint: Auth.sha256Hex(`${request.method} ${info.instance}\n${body}`)
      },
      Effect.map(run, toStored),
      { transactional }
    )
    const response = fromStored(result.replayed && refresh !== undefined ? yield* refresh(caller, result.response) : result.response)
    return result.replayed ? HttpServerResponse.setHeader(response, "idempotency-replayed", "true") : response
  })

// --- the edge ------------------------------------------------------------------------------------------------

/**
 * Correlation ids: a random prefix and a counter, unique and cheap. Per engine; on a seeded engine per scope, with
 * the prefix from a stream of the scope's own, so that an organization's ids follow its own requests only and a
 * read does not move the stream its resources' ids come from.
 */
export interface CorrelationIds {
  /** The next id of a request of `scope` (its organization's environment; undefined before one is known). */
  readonly next: (scope: string | undefined) => string
  /** Whether ids depend on the scope: the edge then draws a request's id once its caller is known. */
  readonly perScope: boolean
}

export class Correlation extends Context.Service<Correlation, CorrelationIds>()("fos/http/Correlation") {}

const correlationId = (prefix: string, counter: number) => prefix + counter.toString(16).padStart(16, "0")

export const layerCorrelation: Layer.Layer<Correlation> = Layer.effect(
  Correlation,
  Effect.gen(function*() {
    const streams = yield* RandomStreams.RandomStreams
    if (streams === undefined) {
      const prefix = yield* IdGenerator.randomHex(16)
      let counter = 0
      return { perScope: false, next: () => correlationId(prefix, counter++) }
    }
    const scopes = new Map<string, { readonly prefix: string; counter: number }>()
    return {
      perScope: true,
      next: (scope) => {
        const key = scope ?? ""
        let ids = scopes.get(key)
        if (ids === undefined) {
          ids = { prefix: Effect.runSync(Effect.provideService(IdGenerator.randomHex(16), Random.Random, streams.of(`correlation:${key}`))), counter: 0 }
          scopes.set(key, ids)
        }
        return correlationId(ids.prefix, ids.counter++)
      }
    }
  })
)

/** The longest `x-client-correlation-id` echoed; a longer one is refused (docs/decisions.md, "Correlation ids"). */
export const maxClientCorrelationIdLength = 128
const visible = /^[\x21-\x7e]{1,128}$/
const badClientCorrelationId = Problem.apiError(
  "BAD_REQUEST",
  `The x-client-correlation-id header must be 1 to ${maxClientCorrelationIdLength} visible ASCII characters.`
)

/** The base address of a path: an environment or the operator surface. */
const baseOf = (path: string): { environment: Environment | undefined } | undefined => {
  if (path.startsWith("/sandbox/") || path === "/sandbox") return { environment: "sandbox" }
  if (path.startsWith("/live/") || path === "/live") return { environment: "live" }
  if (path.startsWith("/operator/")) return { environment: undefined }
  return undefined
}

/**
 * The headers every answer carries: correlation ids, and the rate limit once a key was accepted. As name and value
 * pairs, which Effect's Headers take without listing an object's entries first: a third less than a record on
 * every answer (docs/performance.md).
 */
const finish = (info: RequestInfo, response: HttpServerResponse.HttpServerResponse) => {
  const headers: Array<readonly [string, string]> = [["x-correlation-id", info.correlationId]]
  if (info.clientCorrelationId !== undefined) headers.push(["x-client-correlation-id", info.clientCorrelationId])
  const rate = info.rate
  if (rate !== undefined) {
    headers.push(["x-ratelimit-limit", String(rate.limit)], ["x-ratelimit-remaining", String(rate.remaining)], ["x-ratelimit-reset", String(rate.resetSeconds)])
  }
  return HttpServerResponse.setHeaders(response, headers)
}

const decodable = (path: string): boolean => {
  try {
    decodeURIComponent(path)
    return true
  } catch {
    return false
  }
}

/**
 * The path of a request target: up to its query, or its fragment. A request over HTTP never carries a fragment,
 * but a `Request` handed to the web handler may (`engine.fetch(new URL(problem.docs, base))`), and it is not part
 * of the path.
 */
export const pathOf = (url: string): string => {
  for (let i = 0; i < url.length; i++) {
    const c = url.charCodeAt(i)
    if (c === 63 || c === 35) return url.slice(0, i) // ? or #
  }
  return url
}

/** A parameter's segment as sent, decoded; undefined when it is not valid percent-encoding. */
const decodedSegment = (segment: string): string | undefined => {
  if (!segment.includes("%")) return segment
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}

/**
 * Whether `path` (as sent, query stripped) is exactly a path of the route `pattern` (`/sandbox/v2/customers/:id`):
 * every fixed segment equal to the pattern's, character for character (so case-sensitive, and never
 * percent-encoded); as many segments as the pattern (no trailing or doubled slash); and each parameter's segment
 * not empty, without `;` (a matrix parameter, which the router would cut off), and not `/`, `.` or `..` once
 * decoded (an encoded slash, a dot segment). The router is lenient on all of these; a proxy's path filter in
 * front of fos is not, so fos refuses them rather than answer a path the filter did not see
 * (docs/decisions.md, "What one path is").
 */
export const isExactPath = (pattern: string, path: string): boolean => {
  if (pattern === path) return true
  if (!pattern.includes("/:")) return false
  const want = pattern.split("/")
  const got = path.split("/")
  if (want.length !== got.length) return false
  for (let i = 0; i < want.length; i++) {
    const fixed = want[i]!
    const sent = got[i]!
    if (!fixed.startsWith(":")) {
      if (sent !== fixed) return false
      continue
    }
    if (sent === "" || sent.includes(";")) return false
    const value = decodedSegment(sent)
    if (value === undefined || value === "." || value === ".." || value.includes("/")) return false
  }
  return true
}

const isRouteNotFound = (e: unknown): boolean =>
  typeof e === "object" && e !== null && (e as { reason?: { _tag?: string } }).reason?._tag === "RouteNotFound"

const internalError = Problem.apiError("INTERNAL_ERROR", "An unexpected error occurred. Give the correlationId to support.")

/** How long a client is asked to wait while the store is out of reach: about one connection attempt's timeout. */
const storeRetryAfterSeconds = 5
const storeUnavailable = Problem.apiError("SERVICE_UNAVAILABLE", "The service cannot reach its database right now; nothing was changed. Retry shortly.", {
  retryAfterSeconds: storeRetryAfterSeconds
})

export interface EdgeService {
  /** A route under the edge, for `environment` (undefined on the operator surface). */
  readonly serve: (environment: Environment | undefined, run: RouteRun) => Effect.Effect<HttpServerResponse.HttpServerResponse>
  /** An endpoint's gate: what depends only on the endpoint is settled here, once. */
  readonly gate: (endpoint: HttpApiEndpoint.Top, group: HttpApiGroup.Top, run: EndpointRun) => RouteRun
  /** OPTIONS on a route: 204 with `allow` (the route's methods) in `Allow`, after authentication as a read. */
  readonly options: (allow: string) => RouteRun
  /** The global middleware for what no route matched. */
  readonly unrouted: (httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>) => Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>
}

export class Edge extends Context.Service<Edge, EdgeService>()("fos/http/Edge") {}

export const layerEdge: Layer.Layer<Edge, never, Engine.EngineServices | Correlation | LiveFeed> = Layer.effect(
  Edge,
  Effect.gen(function*() {
    const correlation = yield* Correlation
    const store = yield* Store.Store
    const time = yield* Timers.TimeControl
    // Under the virtual clock a sandbox request reads its clock once its caller is known: it is read with the key.
    const admit = makeAdmit(store, yield* RateLimit.RateLimiter, yield* RandomStreams.RandomStreams, time.mode === "virtual" ? clockLinks : undefined)
    // The engine's clock, taken once: a server may run requests in a context of its own.
    const clock = yield* Clock.Clock
    const nowMs = () => clock.currentTimeMillisUnsafe()
    // The request log, when one is configured, and the feed of recent requests (LiveFeed.ts), which is always on,
    // read real time at each end of a request: the monotonic clock (one hrtime read) for its duration, and the wall
    // clock (Date.now) at its end.
    const requestLog = yield* RequestLog
    // How the server drops a connection (a commit-then-lose fault's dropped_connection), when it can.
    const dropConnection = yield* DropConnection
    const feed = yield* LiveFeed
    const realClock = yield* RealClock.RealClock
    const docsFiles = yield* DocsFiles
    const docs = docsFiles === undefined ? undefined : makeDocsPages(docsFiles)
    const timerContext = yield* Effect.context<Store.Store | Timers.TimerHandlers>()
    const engineContext = yield* Effect.context<Engine.EngineServices>()
    // Under the virtual clock, what a write makes due at once in its scope (a first attempt) runs before the answer.
    // A write that made nothing due at once (`Timers.DueAtOnce`, most writes) skips the look.
    const settle = time.mode === "virtual"
      ? (caller: Auth.Caller, mark: Timers.DueMark) =>
        Effect.suspend(() =>
          mark.due
            ? Effect.flatMap(Clock.currentTimeMillis, (now) =>
              time.settle(Tenancy.scopeOf(caller.organization.id, caller.environment), now).pipe(Effect.provideContext(timerContext)))
            : Effect.void
        )
      : () => Effect.void
    // Under the virtual clock a request runs on its scope's clock (its sandbox's, or real time in live), read once
    // when its caller is known; on the system clock nothing is read.
    const onClockOf = time.mode === "virtual"
      ? <A, E, R>(info: RequestInfo, caller: Auth.Caller, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
        const scope = Tenancy.scopeOf(caller.organization.id, caller.environment)
        // The sandbox's clock row, read with the key (`clockLinks`): neither the clock nor an advance reads it again.
        const read: Clocks.ReadClockRow | undefined = caller.environment === "sandbox" && caller.linked !== undefined && caller.linked.length > 0
          ? { scope, row: caller.linked[0] as Clocks.StoredClock | undefined, used: false }
          : undefined
        return Effect.flatMap(
          time.clockFor(scope).pipe(Effect.provideService(Clocks.ReadClock, read), Effect.provideContext(timerContext)),
          (clock) => {
            info.clock = clock
            return effect.pipe(Effect.provideService(Clock.Clock, clock), Effect.provideService(Clocks.ReadClock, read))
          }
        )
      }
      : <A, E, R>(_info: RequestInfo, _caller: Auth.Caller, effect: Effect.Effect<A, E, R>) => effect
    /** The time a problem is stamped with: the request's clock once known, else the engine's. */
    const nowOf = (info: RequestInfo) => (info.clock ?? clock).currentTimeMillisUnsafe()

    const begin = (request: HttpServerRequest.HttpServerRequest, environment: Environment | undefined): RequestInfo => {
      const clientHeader = headerOf(request, "x-client-correlation-id")
      const info: RequestInfo = {
        correlationId: correlation.perScope ? "" : correlation.next(undefined),
        clientCorrelationId: clientHeader !== undefined && visible.test(clientHeader) ? clientHeader : undefined,
        environment,
        instance: pathOf(request.url),
        clientIp: Option.getOrElse(request.remoteAddress, () => "127.0.0.1"),
        rate: undefined,
        organizationId: undefined,
        clock: undefined,
        startedNs: realClock.monotonicTimeNanosUnsafe(),
        request,
        injected: undefined
      }
      // A seeded engine draws a request's id from its organization's ids when it is first read: after authentication
      // when there is a caller (every read of it is for the answer or the log).
      if (correlation.perScope) {
        let id: string | undefined
        Object.defineProperty(info, "correlationId", {
          get: () => (id ??= correlation.next(info.organizationId === undefined || environment === undefined ? undefined : Tenancy.scopeOf(info.organizationId, environment)))
        })
      }
      return info
    }

    /** A client correlation id sent but not one to echo is refused rather than silently dropped. */
    const refusesClientCorrelation = (request: HttpServerRequest.HttpServerRequest): boolean => {
      const sent = headerOf(request, "x-client-correlation-id")
      return sent !== undefined && !visible.test(sent)
    }

    /**
     * Records the request in its organization's recent requests (a caller once known) and sends its entry to the
     * log, if any; the response goes on unchanged.
     */
    const recorded = (request: HttpServerRequest.HttpServerRequest, info: RequestInfo, response: HttpServerResponse.HttpServerResponse) => {
      if (info.organizationId !== undefined && info.environment !== undefined) {
        feed.record(info.organizationId, info.environment, request.method, info.instance, response, info.startedNs, info.correlationId, info.injected)
      }
      return response
    }
    const logged = requestLog === undefined
      ? recorded
      : (request: HttpServerRequest.HttpServerRequest, info: RequestInfo, response: HttpServerResponse.HttpServerResponse) => {
        recorded(request, info, response)
        const endNs = realClock.monotonicTimeNanosUnsafe()
        requestLog({
          time: toIso(realClock.currentTimeMillisUnsafe()),
          method: request.method,
          path: info.instance,
          status: response.status,
          type: problemTypeOf(response),
          durationMs: Number(endNs - info.startedNs) / 1e6,
          correlationId: info.correlationId,
          organizationId: info.organizationId,
          environment: info.environment,
          injected: info.injected
        })
        return response
      }

    /**
     * An ApiError becomes its problem; the store out of reach is 503 SERVICE_UNAVAILABLE (nothing was committed, and
     * the store reconnects by itself); anything else but an interruption (a client gone) is logged and a 500.
     */
    const recover = (info: RequestInfo, cause: Cause.Cause<Problem.ApiError>) => {
      const failure = Cause.findErrorOption(cause)
      if (failure._tag === "Some") return Effect.succeed(problemResponse(failure.value, info, nowOf(info)))
      if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
      if (cause.reasons.some((r) => r._tag === "Die" && Store.isStoreUnavailable(r.defect))) {
        return Effect.succeed(problemResponse(storeUnavailable, info, nowOf(info)))
      }
      return Effect.as(
        Effect.logError("Unexpected failure", { correlationId: info.correlationId, cause: Cause.pretty(cause) }),
        problemResponse(internalError, info, nowOf(info))
      )
    }

    /**
     * What answers a path that is no route (or only the router's lenient reading of one): `/healthz` and `/docs`
     * are handled before; outside the base addresses it is 404 at once, and under one it is 404 after
     * authentication, so the route table cannot be probed without a key.
     */
    const unknownRoute = (request: HttpServerRequest.HttpServerRequest, path: string, info: RequestInfo) => {
      const problem = (error: Problem.ApiError) => Effect.succeed(logged(request, info, finish(info, problemResponse(error, info, nowMs()))))
      if (baseOf(path) === undefined) return problem(Problem.apiError("NOT_FOUND", "No such route. Base addresses are /sandbox and /live."))
      const badPath = path.includes("%") && !decodable(path)
      if (info.environment === undefined) {
        return problem(badPath ? Problem.apiError("BAD_REQUEST", "The request path is not valid percent-encoding.") : Problem.apiError("NOT_FOUND", "No such operator route."))
      }
      // Under an environment's base the key is checked first, so the refusal of a path carries the rate headers.
      const refusal = badPath ? Problem.apiError("BAD_REQUEST", "The request path is not valid percent-encoding.") : Problem.apiError("NOT_FOUND", "No such route.")
      return Effect.catch(admit(info, request.method, headerOf(request, "x-api-key"), undefined, false, () => Effect.fail(refusal)), problem)
    }

    const serve: EdgeService["serve"] = (environment, run) =>
      Effect.withFiber((fiber) => {
        const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
        const path = pathOf(request.url)
        const route = Context.getOrUndefined(fiber.context, HttpRouter.RouteContext)?.route
        let answered: Effect.Effect<HttpServerResponse.HttpServerResponse, never, Engine.EngineServices>
        if (route !== undefined && !isExactPath(route.path, path)) {
          answered = unknownRoute(request, path, begin(request, baseOf(path)?.environment))
        } else {
          const info = begin(request, environment)
          answered = Effect.matchCauseEffect(refusesClientCorrelation(request) ? Effect.fail(badClientCorrelationId) : run(request, info), {
            onSuccess: (response) => Effect.succeed(logged(request, info, finish(info, response))),
            onFailure: (cause) => Effect.map(recover(info, cause), (response) => logged(request, info, finish(info, response)))
          })
        }
        // The servers run requests in a context that holds this engine's services already (`serveEngine`, the web
        // handler). A host that serves the routes in a context of its own gets them added here, once, for all the
        // request does: the engine's services win over the host's, and what the request adds (its route, a
        // transaction) is kept.
        return Context.getOrUndefined(fiber.context, Store.Store) === store
          ? answered as Effect.Effect<HttpServerResponse.HttpServerResponse>
          : Effect.provideContext(answered, Context.merge(fiber.context, engineContext))
      })

    const gate: EdgeService["gate"] = (endpoint, group, run) => {
      const { bucket, idempotency: policy, transactional, upload, rereadOnReplay, sandboxOnly, openWhenRestricted: open, keepsTimers } = policyOf(endpoint, group)
      const refresh = rereadOnReplay === undefined ? undefined : replayReads[rereadOnReplay]
      const target = faultableTarget(endpoint, group)
      // A write's changes are caused by it: the sandbox's history records it (core kernel/History.ts), a simulate
      // call with its operation. The correlation id is read when a change is written (it may be drawn late).
      const operation = faultTargetOf(endpoint, group)
      const causeOf = (info: RequestInfo): History.Cause =>
        operation.path.startsWith("/v2/simulate/")
          ? {
            type: "simulate",
            operation: operation.operationId,
            method: operation.method,
            path: info.instance,
            get correlationId() {
              return info.correlationId
            }
          }
          : {
            type: "request",
            method: operation.method,
            path: info.instance,
            get correlationId() {
              return info.correlationId
            }
          }
      return (request, info): Effect.Effect<HttpServerResponse.HttpServerResponse, Problem.ApiError, Engine.EngineServices> =>
        admit(info, request.method, headerOf(request, "x-api-key"), bucket, !open && bodyMethods.has(request.method), (caller) => {
          if (sandboxOnly && info.environment !== "sandbox") {
            return Effect.fail(Problem.apiError("NOT_FOUND", "Simulate endpoints exist only under /sandbox."))
          }
          // Only an organization marked as having request faults looks them up (core simulate/Faults.ts).
          if (target !== undefined && caller.organization.sandboxFaults === true && caller.environment === "sandbox") {
            const faulted = <R>(body: string | undefined, proceed: Effect.Effect<HttpServerResponse.HttpServerResponse, Problem.ApiError, R>) =>
              underFault(caller, target, request, body, (id) => (info.injected = id), proceed, dropConnection)
            // A write whose answer a fault loses has committed: what it made due still runs.
            if (!bodyMethods.has(request.method)) return onClockOf(info, caller, faulted(undefined, run(request, undefined, caller)))
            const mark: Timers.DueMark = { due: false }
            return onClockOf(info, caller, Effect.ensuring(
              write((body) => History.causedBy(causeOf(info))(run(request, body, caller)), request, info, caller, policy, transactional, upload, refresh, faulted).pipe(
                Effect.provideService(Timers.DueAtOnce, mark)
              ),
              settle(caller, mark)
            ))
          }
          if (!bodyMethods.has(request.method)) return onClockOf(info, caller, run(request, undefined, caller))
          const mark: Timers.DueMark = { due: false }
          return onClockOf(info, caller, Effect.tap(
            write((body) => History.causedBy(causeOf(info))(run(request, body, caller)), request, info, caller, policy, transactional, upload, refresh).pipe(
              Effect.provideService(Timers.DueAtOnce, mark)
            ),
            () => keepsTimers ? Effect.void : settle(caller, mark)
          ))
        })
    }

    const unrouted: EdgeService["unrouted"] = (httpEffect) =>
      Effect.catchCause(httpEffect, (cause) => {
        const failure = Cause.findErrorOption(cause)
        if (failure._tag === "None" || !isRouteNotFound(failure.value)) return Effect.failCause(cause)
        const request = (failure.value as { reason: { request: HttpServerRequest.HttpServerRequest } }).reason.request
        const path = pathOf(request.url)
        const base = baseOf(path)
        const info = begin(request, base?.environment)
        const done = (response: HttpServerResponse.HttpServerResponse) => logged(request, info, finish(info, response))
        if (refusesClientCorrelation(request)) return Effect.succeed(done(problemResponse(badClientCorrelationId, info, nowMs())))
        if (path === "/healthz") return Effect.succeed(done(HttpServerResponse.jsonUnsafe({ status: "ok" })))
        // The reference pages are public documentation, like the OpenAPI documents they show: no key. The error
        // reference and the inspector (Inspector.ts, whose data needs a key) need no files, so every engine serves
        // them.
        const readable = request.method === "GET" || request.method === "HEAD"
        const page = readable ? errorReferencePage(path) ?? inspectorPage(path) ?? docs?.(path) : undefined
        if (page !== undefined) return Effect.succeed(done(page))
        return unknownRoute(request, path, info)
      })

    const options: EdgeService["options"] = (allow) => {
      const answer = HttpServerResponse.setHeader(HttpServerResponse.empty({ status: 204 }), "allow", allow)
      const answered = Effect.succeed(answer)
      return (request, info) => admit(info, "OPTIONS", headerOf(request, "x-api-key"), undefined, false, () => answered)
    }

    return { serve, gate, options, unrouted }
  })
)

/** `Edge.unrouted` as the router's global middleware. */
export const layerUnrouted = HttpRouter.middleware<{ provides: never }>()(
  Effect.gen(function*() {
    return (yield* Edge).unrouted as never
  }),
  { global: true }
)
