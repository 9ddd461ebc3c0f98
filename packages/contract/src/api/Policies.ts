/**
 * What each endpoint declares beyond its shapes, as annotations on the endpoint (or its whole group) that the
 * server reads through `policyOf`, and nowhere else: whether it requires, accepts or refuses an Idempotency-Key,
 * the dedicated rate bucket it counts against, the form of an upload, whether an organization under restriction
 * may still call it, whether it runs outside a store transaction, what a replayed answer is read again as, whether
 * it exists only under /sandbox, a larger body, a body the engine decodes, and a file answered as an attachment.
 * Also the problem responses endpoints document.
 *
 * The annotations are Context keys, which the OpenAPI generator does not read: they change no document.
 */
import { Context } from "effect"
import { HttpApiSchema } from "effect/http-api"
import { Problem } from "../kernel/Problem.ts"

/** `required`: 400 IDEMPOTENCY_KEY_REQUIRED without the header; `refused`: the header is an error. */
export type IdempotencyPolicy = "required" | "accepted" | "refused"

/** The spec's dedicated rate buckets; every other endpoint counts against the general one. */
export type DedicatedBucket = "order_execute" | "documents" | "application_submit"

/** Whether an endpoint requires, accepts or refuses the Idempotency-Key header. */
export class Idempotency extends Context.Reference<IdempotencyPolicy | undefined>("fos/contract/Idempotency", {
  defaultValue: () => undefined
}) {}

/** The dedicated rate bucket an endpoint counts against, instead of the general one. */
export class RateBucket extends Context.Reference<DedicatedBucket | undefined>("fos/contract/RateBucket", {
  defaultValue: () => undefined
}) {}

/** A file upload endpoint's form: the field that carries the file, and the largest file it takes in bytes. */
export interface UploadPolicy {
  readonly fileField: string
  readonly maxFileBytes: number
}

/** Marks a file upload endpoint: it takes only multipart/form-data, with one file of at most `maxFileBytes`. */
export class Upload extends Context.Reference<UploadPolicy | undefined>("fos/contract/Upload", {
  defaultValue: () => undefined
}) {}

/**
 * Marks a writing endpoint (or a whole group) that an organization restricted by ops may still call: managing its
 * webhooks, its own onboarding and documents, withdrawing applications, the sandbox's simulate endpoints. Every
 * other endpoint that is not a read (GET, HEAD, OPTIONS) answers a restricted organization 403
 * ORGANIZATION_ACCESS_SUSPENDED (docs/decisions.md, "Organizations").
 */
export class OpenWhenRestricted extends Context.Reference<boolean>("fos/contract/OpenWhenRestricted", {
  defaultValue: () => false
}) {}

/**
 * Marks an endpoint whose effect must not run inside a store transaction: the virtual clock's advance fires timers
 * and sends webhooks in transactions of their own; a snapshot's import checks its file (seconds, for a large one)
 * before the one transaction that keeps it, so no lock is held meanwhile. Its idempotency record is kept right after
 * it. Every other write commits all or nothing, keyed or not.
 */
export class OutsideTransaction extends Context.Reference<boolean>("fos/contract/OutsideTransaction", {
  defaultValue: () => false
}) {}

/**
 * What a replayed answer of an endpoint is read again as before it is answered; the server holds one reading per
 * name. `payout`: idempotency rule 6, "a payout binds the key to a terminally failed attempt", so a retry with the
 * key of a payout that has since failed answers the failed payout (still marked replayed) and pays nothing again.
 */
export type ReplayRead = "payout"

/** Marks an endpoint whose replayed answer is read again (`ReplayRead`); any other replays its stored answer. */
export class RereadOnReplay extends Context.Reference<ReplayRead | undefined>("fos/contract/RereadOnReplay", {
  defaultValue: () => undefined
}) {}

/**
 * Marks a write after which the virtual clock does not fire what is due before answering: a snapshot's restore.
 * The timers it puts back may be due already on a clock that every organization shares, and firing them would change
 * the sandbox just restored; they fire at the next advance or write instead (docs/snapshots.md).
 */
export class KeepsTimers extends Context.Reference<boolean>("fos/contract/KeepsTimers", {
  defaultValue: () => false
}) {}

/**
 * Marks an endpoint whose JSON body may be larger than every other's (`maxJsonBodyBytes`, packages/http Write.ts):
 * the most bytes it takes. A snapshot file's import: a world's file is megabytes where a request is kilobytes.
 */
export class MaxBodyBytes extends Context.Reference<number | undefined>("fos/contract/MaxBodyBytes", {
  defaultValue: () => undefined
}) {}

/**
 * Marks an endpoint whose body the engine decodes itself, in an order of its own: the server hands the handler the
 * body's JSON as it came, and the payload schema documents it. A snapshot file's import reads the file's format and
 * version before its shape, so a file of a newer version is refused as one (422), not as a list of members this fos
 * does not know (400); the embedded engine and `fos serve --load` decode files the same way (docs/snapshots.md).
 */
export class DecodedByEngine extends Context.Reference<boolean>("fos/contract/DecodedByEngine", {
  defaultValue: () => false
}) {}

/**
 * Marks an endpoint whose answer is a file to keep: it comes with `Content-Disposition: attachment` and the file name
 * this gives for the request's path parameters, and its body is the handler's value as the engine wrote it (the
 * success schema documents it). A snapshot's export.
 */
export class Attachment extends Context.Reference<((params: Readonly<Record<string, unknown>>) => string) | undefined>("fos/contract/Attachment", {
  defaultValue: () => undefined
}) {}

/** Marks an endpoint (or a whole group) that exists only under /sandbox: under /live it is 404 NOT_FOUND. */
export class SandboxOnly extends Context.Reference<boolean>("fos/contract/SandboxOnly", {
  defaultValue: () => false
}) {}

/** What carries policy annotations: an endpoint, or its group. */
export interface Annotated {
  readonly annotations: Context.Context<never>
}

/** Everything an endpoint declares beyond its shapes, read from its annotations and its group's. */
export interface EndpointPolicy {
  readonly idempotency: IdempotencyPolicy
  /** The dedicated bucket, or undefined for the general one. */
  readonly bucket: DedicatedBucket | undefined
  /** The upload's form, or undefined for an endpoint that takes JSON (or no body). */
  readonly upload: UploadPolicy | undefined
  readonly openWhenRestricted: boolean
  /** False for an endpoint marked `OutsideTransaction`. */
  readonly transactional: boolean
  readonly rereadOnReplay: ReplayRead | undefined
  readonly sandboxOnly: boolean
  /** True for an endpoint marked `KeepsTimers`: no virtual-clock settle after it. */
  readonly keepsTimers: boolean
  /** The most bytes its JSON body may have, for an endpoint marked `MaxBodyBytes`; undefined for the general limit. */
  readonly maxBodyBytes: number | undefined
  /** True for an endpoint marked `DecodedByEngine`: its handler gets the body's JSON undecoded. */
  readonly decodedByEngine: boolean
  /** The file name of an endpoint marked `Attachment`, for the request's path parameters. */
  readonly attachment: ((params: Readonly<Record<string, unknown>>) => string) | undefined
}

/**
 * The one reading of an endpoint's policy annotations. An annotation on the endpoint wins over its group's; an
 * endpoint that declares no idempotency policy accepts a key.
 */
export const policyOf = (endpoint: Annotated, group: Annotated): EndpointPolicy => {
  const read = <S>(key: Context.Reference<S>): S => {
    const own = Context.getOrUndefined(endpoint.annotations, key)
    return own !== undefined ? own : Context.get(group.annotations, key)
  }
  return {
    idempotency: read(Idempotency) ?? "accepted",
    bucket: read(RateBucket),
    upload: read(Upload),
    openWhenRestricted: read(OpenWhenRestricted),
    transactional: !read(OutsideTransaction),
    rereadOnReplay: read(RereadOnReplay),
    sandboxOnly: read(SandboxOnly),
    keepsTimers: read(KeepsTimers),
    maxBodyBytes: read(MaxBodyBytes),
    decodedByEngine: read(DecodedByEngine),
    attachment: read(Attachment)
  }
}

/** The problem response of `status`. */
export const problem = (status: number) => Problem.pipe(HttpApiSchema.status(status))

/**
 * The problems every authenticated endpoint can answer with. 502 and 503 included: any request may meet the store
 * out of reach (503 SERVICE_UNAVAILABLE, with Retry-After) or, in the sandbox, a scripted fault's injected problem
 * (Faults.ts: BAD_GATEWAY, SERVICE_UNAVAILABLE, …), and a client must be able to read those answers too.
 */
export const common = [problem(400), problem(401), problem(403), problem(404), problem(409), problem(429), problem(500), problem(502), problem(503)]

/** The problems of an endpoint that takes a body, besides `common`. */
export const withBody = [...common, problem(413), problem(415)]
