/**
 * What each endpoint declares beyond its shapes, as annotations the server reads: whether it requires, accepts or
 * refuses an Idempotency-Key, the dedicated rate bucket it counts against, the form of an upload, and whether an
 * organization under restriction may still call it. Also the
 * problem responses endpoints document.
 */
import { Context } from "effect"
import { HttpApiSchema } from "effect/http-api"
import { Problem } from "../kernel/Errors.ts"

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

/** The problem response of `status`. */
export const problem = (status: number) => Problem.pipe(HttpApiSchema.status(status))

/** The problems every authenticated endpoint can answer with. */
export const common = [problem(400), problem(401), problem(403), problem(404), problem(409), problem(429), problem(500)]

/** The problems of an endpoint that takes a body, besides `common`. */
export const withBody = [...common, problem(413), problem(415)]
