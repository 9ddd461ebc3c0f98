/**
 * Shared helpers for the black-box tests: seed builders, deterministic API keys, request helpers over an
 * engine's fetch handler (or a real server's origin), and the one assertion of the spec's problem shape.
 */
import { createHash } from "node:crypto"
import { type CustomerId, EventData, type EventType } from "@fos/contract"
import { Customers, type Domain, Outbox, Store, Timers } from "@fos/core"
import { createEngine, type Engine } from "@fos/http"
import { Effect, Schema } from "effect"
import { expect } from "vitest"
import { recording } from "./responseRecorder.ts"

// --- time ------------------------------------------------------------------------------------------------------

/** Where every virtual clock in these tests starts. */
export const START_MS = Date.parse("2026-03-01T12:00:00.000Z")

/** The spec's wire timestamp: ISO 8601, UTC, milliseconds, Z. */
export const isoMs = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

// --- keys ------------------------------------------------------------------------------------------------------

/** 64 lower-case hex characters derived from a label, so tests can name their keys. */
export const hex64 = (label: string): string => createHash("sha256").update(label).digest("hex")

export const sandboxKey = (label: string): string => `ck_sandbox_${hex64(label)}`
export const liveKey = (label: string): string => `ck_live_${hex64(label)}`

// --- seeds -----------------------------------------------------------------------------------------------------

export interface SeedKey {
  key: string
  access?: "read_only" | "read_write"
  createdBy: string
  ipAllowlist?: Array<string>
}

export interface SeedUser {
  id: string
  email: string
  role: "admin" | "developer"
}

export interface SeedOrg {
  id: string
  name: string
  status?: "active" | "onboarding" | "suspended"
  sandboxProvisioned?: boolean
  apiKeyCreationEnabled?: boolean
  features?: Array<string>
  rateLimit?: { sustainedPerSecond: number; burst: number }
  users?: Array<SeedUser>
  apiKeys?: Array<SeedKey>
}

export interface Seed {
  organizations: Array<SeedOrg>
}

/**
 * An organization named `name` (id `org_<name>`) with one admin (`usr_<name>admin`) and, by default, a
 * read-write sandbox key and a read-write live key labelled after the organization.
 */
export const orgSeed = (
  name: string,
  options: Partial<Omit<SeedOrg, "id" | "name">> & { keys?: Array<Omit<SeedKey, "createdBy"> & { createdBy?: string }> } = {}
): SeedOrg => {
  const admin = `usr_${name}admin`
  const { keys, users, ...rest } = options
  const apiKeys = (keys ?? [
    { key: sandboxKey(`${name}/sandbox/rw`), access: "read_write" as const },
    { key: liveKey(`${name}/live/rw`), access: "read_write" as const }
  ]).map((k) => ({ createdBy: admin, ...k }))
  return {
    id: `org_${name}`,
    name: `Organization ${name}`,
    status: "active",
    ...rest,
    users: [{ id: admin, email: `admin@${name}.example`, role: "admin" }, ...(users ?? [])],
    apiKeys
  }
}

/** The default keys `orgSeed` gives an organization. */
export const keysOf = (name: string) => ({
  sandbox: sandboxKey(`${name}/sandbox/rw`),
  live: liveKey(`${name}/live/rw`)
})

export const seedOf = (...organizations: Array<SeedOrg>): Seed => ({ organizations })

/** A virtual-clock engine at START_MS with `seed`. */
export const makeEngine = (
  seed: Seed,
  options: { idempotencyRetentionMs?: number; startMs?: number; domains?: ReadonlyArray<Domain.Domain> } = {}
): Promise<Engine> =>
  createEngine({
    clock: { mode: "virtual", start: options.startMs ?? START_MS },
    // Real time stands still in these engines, so their buckets refill only on clock advances and a slow machine
    // cannot give a test a token it did not expect.
    realClock: Timers.makeVirtualClock(options.startMs ?? START_MS),
    seed: seed as never,
    ...(options.idempotencyRetentionMs === undefined ? {} : { idempotencyRetentionMs: options.idempotencyRetentionMs }),
    ...(options.domains === undefined ? {} : { domains: options.domains })
  })

// --- events ----------------------------------------------------------------------------------------------------

/** The events `engine` wrote to its outbox, oldest first (of one type when given), their data as any JSON. */
export const outboxEvents = async (engine: Engine, type?: string): Promise<Array<Outbox.OutboxEvent & { data: any }>> => {
  const all = await engine.run(Outbox.readEvents(undefined, 10_000)) as Array<Outbox.OutboxEvent & { data: any }>
  return type === undefined ? all : all.filter((e) => e.type === type)
}

/** Every event `engine` wrote is one the event catalog accepts: its data decodes with its type's schema. */
export const expectCatalogEvents = async (engine: Engine): Promise<void> => {
  for (const event of await outboxEvents(engine)) {
    const decoded = Schema.decodeUnknownExit(EventData[event.type as EventType] as Schema.Top as Schema.Codec<unknown, unknown>)(event.data)
    expect(decoded._tag, `${event.type} ${JSON.stringify(event.data)}`).toBe("Success")
  }
}

// --- requests --------------------------------------------------------------------------------------------------

export interface Call {
  readonly method?: string
  readonly key?: string
  readonly headers?: Record<string, string>
  /** A string is sent as is (with Content-Type application/json unless headers say otherwise); else JSON. */
  readonly body?: unknown
  /** Send the body with no Content-Type header. */
  readonly noContentType?: boolean
}

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: any
  /** The URL the request was sent to, when known: a problem's `docs` is on its origin. */
  readonly url?: string
}

/** Builds a Request for `path` (absolute path, e.g. /sandbox/v2/customers) on `origin`. */
export const buildRequest = (origin: string, path: string, call: Call = {}): Request => {
  const headers = new Headers(call.headers ?? {})
  if (call.key !== undefined) headers.set("x-api-key", call.key)
  let body: string | undefined
  if (call.body !== undefined) {
    body = typeof call.body === "string" ? call.body : JSON.stringify(call.body)
    if (!call.noContentType && !headers.has("content-type")) headers.set("content-type", "application/json")
  }
  const method = call.method ?? (body === undefined ? "GET" : "POST")
  // A string body makes Request add "text/plain;charset=UTF-8"; bytes add no Content-Type at all.
  const payload = body === undefined ? undefined : call.noContentType ? new TextEncoder().encode(body) : body
  return new Request(origin + path, { method, headers, ...(payload === undefined ? {} : { body: payload }) })
}

export const toReply = async (response: Response, url: string = response.url): Promise<Reply> => {
  const text = await response.text()
  let json: unknown = undefined
  try {
    json = text === "" ? undefined : JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, text, json, ...(url === "" ? {} : { url }) }
}

/** One request through an engine's fetch handler. */
export const call = async (engine: Engine, path: string, c: Call = {}): Promise<Reply> => {
  const request = buildRequest("http://localhost", path, c)
  return toReply(await recording(engine.fetch)(request), request.url)
}

/** One request over real HTTP. */
export const httpCall = async (origin: string, path: string, c: Call = {}): Promise<Reply> =>
  toReply(await recording(fetch)(buildRequest(origin, path, c)))

// --- assertions ------------------------------------------------------------------------------------------------

const problemKeys = ["type", "title", "status", "detail", "resolution", "docs", "instance", "correlationId", "timestamp"]
const optionalProblemKeys = ["errors", "retryAfterSeconds", "field"]
/** The members UNSUPPORTED_PAIR adds (the pair; chains null for fiat), and only it. */
const pairProblemKeys = ["sourceAsset", "destinationAsset", "sourceChain", "destinationChain"]

/** The JSON of a reply that answered `status` (200 unless named); a test fails on any other, showing the body. */
export const ok = async (reply: Promise<{ status: number; text: string; json: any }>, status = 200): Promise<any> => {
  const r = await reply
  expect(r.status, r.text).toBe(status)
  return r.json
}

export interface ProblemExpectation {
  readonly type: string
  readonly status: number
  /** The request path without query, base included. */
  readonly instance: string
  /** The virtual clock's time when the error was rendered; when given, timestamp must equal it. */
  readonly nowMs?: number
}

/**
 * The full RFC 9457 problem shape of the spec: every member present and typed, instance = path without
 * query, correlationId = the x-correlation-id header, timestamp ms-precision UTC with Z (equal to the virtual
 * clock when `nowMs` is given), errors[] only on the codes that carry it, retryAfterSeconds only on 429.
 */
export const expectProblem = (reply: Reply, expected: ProblemExpectation): any => {
  const p = reply.json
  expect(reply.status, `status of ${expected.type}: ${reply.text}`).toBe(expected.status)
  expect(reply.headers.get("content-type") ?? "").toMatch(/^application\/(problem\+)?json/)
  expect(p, `body is JSON: ${reply.text}`).toBeTypeOf("object")
  expect(p.type).toBe(expected.type)
  expect(p.status).toBe(expected.status)
  for (const key of problemKeys) expect(p, `problem member ${key}`).toHaveProperty(key)
  const allowed = [...problemKeys, ...optionalProblemKeys, ...(p.type === "UNSUPPORTED_PAIR" ? pairProblemKeys : [])]
  for (const key of Object.keys(p)) expect(allowed, `unexpected member ${key}`).toContain(key)
  if (p.type === "UNSUPPORTED_PAIR") for (const key of pairProblemKeys) expect(p, `UNSUPPORTED_PAIR member ${key}`).toHaveProperty(key)
  for (const key of ["title", "detail", "resolution", "docs", "instance", "correlationId", "timestamp"]) {
    expect(typeof p[key], `${key} is a string`).toBe("string")
    expect(p[key].length, `${key} is not empty`).toBeGreaterThan(0)
  }
  // The code's entry on the error reference the server serves, an absolute URL on the request's own origin.
  const docs = new URL(p.docs)
  expect(p.docs).toBe(`${docs.origin}/docs/errors#${String(p.type).toLowerCase()}`)
  expect(docs.protocol).toMatch(/^https?:$/)
  if (reply.url !== undefined) expect(docs.origin).toBe(new URL(reply.url).origin)
  expect(p.instance).toBe(expected.instance)
  expect(p.instance).not.toContain("?")
  const correlation = reply.headers.get("x-correlation-id")
  expect(correlation, "x-correlation-id header").toBeTruthy()
  expect(p.correlationId).toBe(correlation)
  expect(p.timestamp).toMatch(isoMs)
  if (expected.nowMs !== undefined) expect(p.timestamp).toBe(new Date(expected.nowMs).toISOString())
  if (p.errors !== undefined) {
    // The spec's three, and RECIPIENT_VALIDATION_FAILED: its errors[] rule names a routing number, which only a
    // recipient's checks meet (docs/decisions.md, "Recipients").
    expect(["VALIDATION_ERROR", "ONBOARDING_NOT_READY", "DOCUMENT_IDS_NOT_FOUND", "RECIPIENT_VALIDATION_FAILED"]).toContain(p.type)
    expect(Array.isArray(p.errors)).toBe(true)
    for (const entry of p.errors) {
      expect(typeof entry.pointer).toBe("string")
      expect(entry.pointer === "" || entry.pointer.startsWith("/")).toBe(true)
      expect(typeof entry.detail).toBe("string")
    }
  }
  if (p.type === "VALIDATION_ERROR") expect(Array.isArray(p.errors), "VALIDATION_ERROR carries errors[]").toBe(true)
  // retryAfterSeconds is on every 429, and may accompany a 503.
  if (expected.status === 429 || (expected.status === 503 && p.retryAfterSeconds !== undefined)) {
    expect(Number.isInteger(p.retryAfterSeconds)).toBe(true)
    expect(reply.headers.get("retry-after")).toBe(String(p.retryAfterSeconds))
  } else {
    expect(p.retryAfterSeconds).toBeUndefined()
  }
  return p
}

/** The three rate-limit headers, as numbers; asserts they are present. */
export const rateHeaders = (reply: Reply) => {
  const limit = reply.headers.get("x-ratelimit-limit")
  const remaining = reply.headers.get("x-ratelimit-remaining")
  const reset = reply.headers.get("x-ratelimit-reset")
  expect(limit, "X-RateLimit-Limit").not.toBeNull()
  expect(remaining, "X-RateLimit-Remaining").not.toBeNull()
  expect(reset, "X-RateLimit-Reset").not.toBeNull()
  for (const v of [limit, remaining, reset]) expect(v).toMatch(/^\d+$/)
  return { limit: Number(limit), remaining: Number(remaining), reset: Number(reset) }
}

export const noRateHeaders = (reply: Reply) => {
  expect(reply.headers.get("x-ratelimit-limit")).toBeNull()
  expect(reply.headers.get("x-ratelimit-remaining")).toBeNull()
  expect(reply.headers.get("x-ratelimit-reset")).toBeNull()
}

/** A deterministic customer id of the spec's shape (cus_ + alphanumerics). */
export const customerId = (n: number, tag = ""): string => `cus_${tag}${n.toString().padStart(6, "0")}`

// --- direct engine operations ----------------------------------------------------------------------------------

export interface CustomerRow {
  readonly id: string
  readonly organizationId: string
  readonly environment?: "sandbox" | "live"
  readonly type?: "business" | "individual"
  readonly name?: string
  readonly country?: string
  readonly clientReferenceId?: string
  readonly createdAt: string
  readonly updatedAt?: string
}

/** Inserts customers straight into the engine's store, skipping onboarding (for list and paging tests at scale). */
export const insertCustomers = (engine: Engine, rows: ReadonlyArray<CustomerRow>): Promise<void> =>
  engine.run(Effect.flatMap(Store.Store, (store) =>
    Effect.forEach(rows, (r) =>
      store.insert(Customers.Customers, {
        id: r.id as CustomerId,
        organizationId: r.organizationId,
        environment: r.environment ?? "sandbox",
        type: r.type ?? "business",
        status: "active",
        name: r.name ?? `Customer ${r.id}`,
        country: r.country ?? "USA",
        clientReferenceId: r.clientReferenceId,
        houseAccount: false,
        applicationId: "app_seeded",
        state: undefined,
        silentRestrictions: 0,
        createdAt: r.createdAt,
        updatedAt: r.updatedAt ?? r.createdAt
      }), { discard: true }).pipe(Effect.orDie)))
