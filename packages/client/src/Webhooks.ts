/**
 * Verifying webhook deliveries, for receivers (the spec's "Signature" section).
 *
 * Every delivery carries `X-Service-Signature: t=<unix-seconds>,v1=<hex>[,v1=<hex>]`: each v1 is the lowercase hex
 * HMAC-SHA256 of `<t>.<raw body>` keyed with the endpoint's whole secret (`whsec_` included). A receiver checks the
 * raw bytes it received before it parses or trusts anything in them, accepts a match on any v1 (two are sent for
 * 48 hours after a rotation), compares in constant time, and refuses a `t` outside its tolerance (300 seconds).
 *
 * Only Web Crypto (`crypto.subtle`) and Effect's Clock are used, so this module runs unchanged on Node, Bun, Deno,
 * workers and browsers, and a receiver can take it alone (`@fos/client/webhooks`). The receiver's time is Effect's
 * Clock: `verifyWebhookEffect` reads it from its context (so a TestClock governs it), the Promise form from the
 * default Clock, and either takes an explicit `now`.
 */
import { Clock, Effect } from "effect"

/** The header that carries the signature (header names are case-insensitive). */
export const signatureHeaderName = "X-Service-Signature"

/** How far `t` may be from the receiver's clock, either way, by default: the spec's 300 seconds. */
export const defaultToleranceSeconds = 300

/** Bounds on what a header may hold: any more is not a header fos sends. */
const maxHeaderLength = 1024
const maxSignatures = 8

/** Why a delivery was refused. */
export type VerificationFailure =
  | "missing_signature"
  | "malformed_signature"
  | "signature_mismatch"
  | "timestamp_too_old"
  | "timestamp_in_future"
  | "malformed_body"

export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError"
  readonly reason: VerificationFailure
  constructor(reason: VerificationFailure, message: string) {
    super(message)
    this.reason = reason
  }
}

/** The event envelope every delivery carries. */
export interface WebhookEvent<Data = unknown> {
  readonly id: string
  readonly type: string
  readonly createdAt: string
  readonly apiVersion: string
  readonly mode: "live" | "sandbox"
  readonly data: Data
}

export interface VerifyOptions {
  /**
   * The endpoint's secret, `whsec_` prefix included. Give two while your own copy changes over after a rotation:
   * a delivery is accepted when any of them matches any v1.
   */
  readonly secret: string | ReadonlyArray<string>
  /** How far `t` may be from `now`, in the past or the future (300 when omitted). */
  readonly toleranceSeconds?: number
  /**
   * The receiver's time: epoch milliseconds or a Date; Effect's Clock when omitted. fos signs with real time, so a
   * receiver leaves this out; an embedded engine created with `signatureClock: "engine"` signs with its own clock, and
   * a receiver of it passes that clock's time (`await engine.clock.now()`).
   */
  readonly now?: number | Date
}

const fail = (reason: VerificationFailure, message: string): never => {
  throw new WebhookVerificationError(reason, message)
}

interface ParsedHeader {
  readonly t: number
  readonly v1: ReadonlyArray<Uint8Array<ArrayBuffer>>
}

const hexPattern = /^[0-9a-f]{64}$/

const hexToBytes = (hex: string): Uint8Array<ArrayBuffer> => {
  const bytes = new Uint8Array(hex.length / 2)
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16)
  return bytes
}

/** Parses `t=...,v1=...[,v1=...]`; names other than t and v1 are skipped, as later schemes may add some. */
const parseHeader = (header: string): ParsedHeader => {
  if (header.length > maxHeaderLength) fail("malformed_signature", `the signature header is longer than ${maxHeaderLength} characters`)
  let t: number | undefined
  const v1: Array<Uint8Array<ArrayBuffer>> = []
  for (const part of header.split(",")) {
    const eq = part.indexOf("=")
    const name = (eq < 0 ? part : part.slice(0, eq)).trim()
    const value = eq < 0 ? "" : part.slice(eq + 1).trim()
    if (name === "t") {
      if (t !== undefined) fail("malformed_signature", "the signature header has more than one t")
      if (!/^\d{1,12}$/.test(value)) fail("malformed_signature", "t is not a whole number of seconds")
      t = Number(value)
    } else if (name === "v1") {
      if (!hexPattern.test(value)) fail("malformed_signature", "a v1 is not 64 lowercase hex characters")
      v1.push(hexToBytes(value))
    }
  }
  if (t === undefined) return fail("malformed_signature", "the signature header has no t")
  if (v1.length === 0) fail("malformed_signature", "the signature header has no v1")
  if (v1.length > maxSignatures) fail("malformed_signature", `the signature header has more than ${maxSignatures} v1`)
  return { t, v1 }
}

const encoder = new TextEncoder()

const isEnvelope = (u: unknown): u is WebhookEvent =>
  typeof u === "object" && u !== null && !Array.isArray(u) &&
  ["id", "type", "createdAt", "apiVersion"].every((k) => typeof (u as Record<string, unknown>)[k] === "string") &&
  ((u as Record<string, unknown>)["mode"] === "live" || (u as Record<string, unknown>)["mode"] === "sandbox") &&
  "data" in u

/**
 * Verifies a delivery from its raw body (the exact bytes received, or their text) and its `X-Service-Signature`
 * header, and only then parses it. Resolves to the event; rejects with a `WebhookVerificationError` naming why.
 */
export const verifyWebhook = async <Data = unknown>(
  body: string | Uint8Array,
  signature: string | null | undefined,
  options: VerifyOptions
): Promise<WebhookEvent<Data>> => {
  if (signature === null || signature === undefined || signature.trim() === "") {
    return fail("missing_signature", `the delivery has no ${signatureHeaderName} header`)
  }
  const { t, v1 } = parseHeader(signature)
  const bodyBytes = typeof body === "string" ? encoder.encode(body) : body
  const prefix = encoder.encode(`${t}.`)
  const signed = new Uint8Array(prefix.length + bodyBytes.length)
  signed.set(prefix)
  signed.set(bodyBytes, prefix.length)
  const secrets = typeof options.secret === "string" ? [options.secret] : options.secret
  if (secrets.length === 0) throw new TypeError("verifyWebhook: no secret given")
  let matched = false
  for (const secret of secrets) {
    const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["verify"])
    // Web Crypto's HMAC verify compares the digests in constant time (the spec's requirement), in every runtime.
    for (const candidate of v1) if (await crypto.subtle.verify("HMAC", key, candidate, signed)) matched = true
  }
  if (!matched) fail("signature_mismatch", "no v1 matches the body signed with the secret")
  // The time is checked once the signature proves `t` is the sender's: an older delivery is a replay.
  const tolerance = options.toleranceSeconds ?? defaultToleranceSeconds
  const nowMs = options.now === undefined
    ? Effect.runSync(Clock.currentTimeMillis)
    : typeof options.now === "number"
    ? options.now
    : options.now.getTime()
  const ageSeconds = Math.floor(nowMs / 1000) - t
  if (ageSeconds > tolerance) fail("timestamp_too_old", `t is ${ageSeconds} seconds old; at most ${tolerance} are accepted`)
  // A t ahead of the receiver's clock is the two clocks' difference at most; beyond the tolerance it is refused.
  if (-ageSeconds > tolerance) fail("timestamp_in_future", `t is ${-ageSeconds} seconds in the future; at most ${tolerance} are accepted`)
  let event: unknown
  try {
    event = JSON.parse(typeof body === "string" ? body : new TextDecoder("utf-8", { fatal: true }).decode(body))
  } catch {
    return fail("malformed_body", "the body is not UTF-8 JSON")
  }
  if (!isEnvelope(event)) fail("malformed_body", "the body is not an event envelope (id, type, createdAt, apiVersion, mode, data)")
  return event as WebhookEvent<Data>
}

/** `verifyWebhook` as an Effect: without `now`, the receiver's time is the Clock of its context. */
export const verifyWebhookEffect = <Data = unknown>(
  body: string | Uint8Array,
  signature: string | null | undefined,
  options: VerifyOptions
): Effect.Effect<WebhookEvent<Data>, WebhookVerificationError> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.tryPromise({
      try: () => verifyWebhook<Data>(body, signature, { ...options, now: options.now ?? now }),
      catch: (e) => e instanceof WebhookVerificationError ? e : new WebhookVerificationError("malformed_body", String(e))
    }))

/** `verifyWebhook` for a fetch-style `Request` (Bun, Deno, Node's web handlers, workers): reads its raw body once. */
export const verifyWebhookRequest = async <Data = unknown>(request: Request, options: VerifyOptions): Promise<WebhookEvent<Data>> =>
  verifyWebhook<Data>(new Uint8Array(await request.arrayBuffer()), request.headers.get(signatureHeaderName), options)
