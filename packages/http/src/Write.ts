/**
 * The write: what a request with a body does once the gate (Gate.ts) has admitted its caller, in this order:
 *
 * 1. The body: a JSON body's media type, size, encoding and syntax (`readJsonBody`), or on an endpoint marked
 *    `Upload` its multipart form (`readUpload`), which the handler then reads as `CurrentUpload`.
 * 2. The sandbox's request faults, when the caller's organization has any (Faults.ts): an injected problem commits
 *    nothing, and a lost answer comes after the commit.
 * 3. Idempotency, as the endpoint declares it (`keyedWrite`): a key is claimed, the endpoint runs and its answer is
 *    recorded in one store transaction (`Idempotency.runIdempotent`); a replay answers the stored response. A write
 *    without a key runs in a store transaction too, unless its endpoint is marked `OutsideTransaction`.
 * 4. The endpoint's run, with the changes it makes recorded in the sandbox's history as caused by the request.
 * 5. Under the virtual clock, what the write made due at once in the caller's scope (a webhook's first attempt) runs
 *    before the answer (`makeSettle`).
 */
import type { Engine } from "@fos/core"
import { Auth, Documents, History, Idempotency, Payouts, Problem, RefusedText, Store, Tenancy, Timers } from "@fos/core"
import type { EndpointPolicy, ReplayRead, UploadPolicy } from "@fos/contract"
import { ByteSize, Clock, type Context, Effect, Stream } from "effect"
import { HttpIncomingMessage, type HttpServerRequest, HttpServerResponse, Multipart } from "effect/http"
import type { FaultTarget, RequestFaults } from "./Faults.ts"
import { type EndpointRun, headerOf, jsonType, keepParsedBody, type RequestInfo } from "./RequestInfo.ts"
import { CurrentUpload } from "./ServerApi.ts"

// --- the body ----------------------------------------------------------------------------------------------------

/**
 * The largest JSON body accepted, in bytes (docs/decisions.md), but on an endpoint that declares its own
 * (`MaxBodyBytes`: a snapshot file's import, docs/snapshots.md).
 */
export const maxJsonBodyBytes = 1024 * 1024

/** A body longer than this many characters is read in steps, with yields between them (`readJsonBody`). */
const longBodyChars = 256 * 1024

/** UTF-8 as Effect's `request.text` decodes it (a leading byte order mark dropped), but failing on bytes it is not. */
const utf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * Reads and checks a JSON body: media type, size (at most `maxBytes`), UTF-8 and syntax, and no string holding
 * text the API refuses (RefusedText.ts). Returns the raw text.
 */
export const readJsonBody = (request: HttpServerRequest.HttpServerRequest, maxBytes: number = maxJsonBodyBytes): Effect.Effect<string, Problem.ApiError> =>
  Effect.gen(function*() {
    const contentType = headerOf(request, "content-type")
    if (contentType !== undefined && contentType.split(";")[0]!.trim().toLowerCase() !== jsonType) {
      return yield* Problem.apiError("UNSUPPORTED_MEDIA_TYPE", "This endpoint takes Content-Type: application/json.")
    }
    // Built only when needed: an error captures a stack trace, and this runs on every write.
    const tooLarge = () => Problem.apiError("PAYLOAD_TOO_LARGE", `The request body is larger than ${maxBytes} bytes.`)
    const declared = Number(headerOf(request, "content-length"))
    if (Number.isFinite(declared) && declared > maxBytes) return yield* tooLarge()
    const bytes = yield* request.arrayBuffer.pipe(
      Effect.provideService(HttpIncomingMessage.MaxBodySize, BigInt(maxBytes) as never),
      Effect.mapError(tooLarge)
    )
    // JSON text is UTF-8 (RFC 8259, 8.1): bytes that are not are refused, not read as U+FFFD.
    let text: string
    try {
      text = utf8.decode(bytes)
    } catch {
      return yield* Problem.apiError("MALFORMED_JSON", "The request body is not valid UTF-8, which JSON text must be.")
    }
    // A long body (a snapshot file's, megabytes) is read, parsed (the value kept for the endpoint, `keepParsedBody`)
    // and hashed, each holding the thread for tens of milliseconds: the fiber yields between them, so that other
    // requests are answered meanwhile (docs/storage.md, "Long work and other requests").
    const long = text.length > longBodyChars
    if (long) yield* Effect.yieldNow
    if (text.length > 0) {
      let value: unknown
      try {
        value = JSON.parse(text)
      } catch {
        return yield* Problem.apiError("MALFORMED_JSON", "The request body is not valid JSON.")
      }
      // A NUL character or an unpaired surrogate, which no store keeps alike (RefusedText.ts), in any string.
      if (RefusedText.mayHoldRefusedText(text)) {
        const errors = RefusedText.refusedTextErrors(value)
        if (errors.length > 0) return yield* Problem.invalidRequest(errors)
      }
      if (long) keepParsedBody(request, text, value)
    }
    if (long) yield* Effect.yieldNow
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

// --- idempotency -------------------------------------------------------------------------------------------------

const toStored = (response: HttpServerResponse.HttpServerResponse): Idempotency.StoredResponse => {
  const body = response.body
  const text = body._tag === "Uint8Array" ? new TextDecoder().decode(body.body) : body._tag === "Empty" ? "" : String((body as { body?: unknown }).body ?? "")
  return { status: response.status, contentType: response.headers["content-type"] ?? jsonType, body: text }
}

const fromStored = (stored: Idempotency.StoredResponse) =>
  stored.body === "" && stored.status === 204
    ? HttpServerResponse.empty({ status: stored.status })
    : HttpServerResponse.text(stored.body, { status: stored.status, contentType: stored.contentType })

/** How a replayed answer is read again before it is answered. */
type ReplayReading = (caller: Auth.Caller, stored: Idempotency.StoredResponse) => Effect.Effect<Idempotency.StoredResponse, never, Store.Store>

/** How a replayed answer is read again, for each `ReplayRead` an endpoint may name (contract/api/Policies.ts). */
const replayReads: { readonly [K in ReplayRead]: ReplayReading } = {
  payout: Payouts.replay
}

/**
 * A write's idempotency, as its endpoint declares it (`policy`), around its run: over the request, its caller, the
 * run, and the body as the key's fingerprint reads it (an upload's digest of its parts).
 */
const makeKeyedWrite = (policy: EndpointPolicy) => {
  const { idempotency, transactional } = policy
  const refresh = policy.rereadOnReplay === undefined ? undefined : replayReads[policy.rereadOnReplay]
  return (
    info: RequestInfo,
    caller: Auth.Caller,
    run: Effect.Effect<HttpServerResponse.HttpServerResponse, Problem.ApiError>,
    body: string
  ) =>
    Effect.gen(function*() {
      const request = info.request
      const key = headerOf(request, "idempotency-key")
      if (key === undefined) {
        if (idempotency === "required") return yield* Problem.apiError("IDEMPOTENCY_KEY_REQUIRED", "This endpoint requires an Idempotency-Key header.")
        // A write without a key commits all or nothing too, as a keyed one does: its row locks must hold until it
        // ends, or a racing request or timer moves the same row between its read and its write.
        return yield* (transactional ? (yield* Store.Store).transaction(run) : run)
      }
      if (idempotency === "refused") {
        return yield* Problem.apiError("VALIDATION_ERROR", "This endpoint does not take an Idempotency-Key header.", {
          errors: [{ pointer: "/headers/idempotency-key", detail: "is not accepted on this endpoint" }]
        })
      }
      if (!Idempotency.isValidIdempotencyKey(key)) {
        return yield* Problem.apiError("VALIDATION_ERROR", "The Idempotency-Key header is not valid.", {
          errors: [{ pointer: "/headers/idempotency-key", detail: "must be 1 to 255 visible ASCII characters" }]
        })
      }
      // A long body (a snapshot file's) is hashed in pieces, so that other requests are answered meanwhile.
      const fingerprinted = `${request.method} ${info.instance}\n${body}`
      const fingerprint = fingerprinted.length > Auth.hashPieceChars ? yield* Auth.sha256HexInPieces(fingerprinted) : Auth.sha256Hex(fingerprinted)
      const result = yield* Idempotency.runIdempotent(
        { scope: `${caller.organization.id}/${caller.environment}`, key, fingerprint },
        Effect.map(run, toStored),
        { transactional }
      )
      const response = fromStored(result.replayed && refresh !== undefined ? yield* refresh(caller, result.response) : result.response)
      if (!result.replayed) return response
      info.replayed = true
      return HttpServerResponse.setHeader(response, "idempotency-replayed", "true")
    })
}

// --- the timers a write made due ---------------------------------------------------------------------------------

/** Runs what a write made due at once in the caller's scope, as `mark` tells (`Timers.DueAtOnce`). */
export type Settle = (caller: Auth.Caller, mark: Timers.DueMark) => Effect.Effect<void>

/**
 * Under the virtual clock, what a write makes due at once in its scope (a first attempt) runs before the answer. A
 * write that made nothing due at once (`Timers.DueAtOnce`, most writes) skips the look. Under the system clock the
 * scheduler fires it, and this does nothing.
 */
export const makeSettle = (time: Timers.TimeControlService, timerContext: Context.Context<Store.Store | Timers.TimerHandlers>): Settle =>
  time.mode === "virtual"
    ? (caller, mark) =>
      Effect.suspend(() =>
        mark.due
          ? Effect.flatMap(Clock.currentTimeMillis, (now) =>
            time.settle(Tenancy.scopeOf(caller.organization.id, caller.environment), now).pipe(Effect.provideContext(timerContext)))
          : Effect.void
      )
    : () => Effect.void

// --- the write ---------------------------------------------------------------------------------------------------

/** What an endpoint's write is made of, settled once per endpoint when the server is built. */
export interface WriteOptions {
  /** The endpoint's policy (`policyOf`): its idempotency, transaction, upload, replay reading and timers. */
  readonly policy: EndpointPolicy
  /** The operation the endpoint is, which the sandbox's history names as the cause of what the write changes. */
  readonly operation: FaultTarget
  readonly settle: Settle
}

/**
 * A request's write, given the caller the gate admitted, the endpoint's run, and the endpoint's request faults when
 * the caller's organization has any. The request is `info.request`.
 */
export type Write = (
  info: RequestInfo,
  caller: Auth.Caller,
  run: EndpointRun,
  faulted: RequestFaults | undefined
) => Effect.Effect<HttpServerResponse.HttpServerResponse, Problem.ApiError, Engine.EngineServices>

/** An endpoint's write: the steps of the module comment, in their order. */
export const makeWrite = (options: WriteOptions): Write => {
  const { policy, operation, settle } = options
  const { upload, keepsTimers } = policy
  const maxBodyBytes = policy.maxBodyBytes ?? maxJsonBodyBytes
  const keyedWrite = makeKeyedWrite(policy)
  // A write's changes are caused by it: the sandbox's history records it (core kernel/History.ts), a simulate
  // call with its operation. The correlation id is read when a change is written (it may be drawn late).
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
  return (info, caller, run, faulted) => {
    const request = info.request
    const endpointRun = (body: string | undefined) => History.causedBy(causeOf(info))(run(request, body, caller))
    const mark: Timers.DueMark = { due: false }
    const written = Effect.gen(function*() {
      let work: Effect.Effect<HttpServerResponse.HttpServerResponse, Problem.ApiError>
      let body: string
      if (upload === undefined) {
        body = yield* readJsonBody(request, maxBodyBytes)
        info.body = body
        work = endpointRun(body)
      } else {
        const form = yield* readUpload(request, upload)
        work = Effect.provideService(endpointRun(undefined), CurrentUpload, form.parts)
        body = form.digest
      }
      if (faulted !== undefined) return yield* faulted(caller, info, upload === undefined ? body : undefined, keyedWrite(info, caller, work, body))
      return yield* keyedWrite(info, caller, work, body)
    }).pipe(Effect.provideService(Timers.DueAtOnce, mark))
    // A write whose answer a fault loses has committed: what it made due still runs.
    return faulted === undefined
      ? Effect.tap(written, () => keepsTimers ? Effect.void : settle(caller, mark))
      : Effect.ensuring(written, settle(caller, mark))
  }
}
