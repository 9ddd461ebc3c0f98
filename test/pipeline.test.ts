/**
 * The request pipeline, black-box through the engine's fetch handler: authentication rules, correlation ids,
 * routing, identifiers, body checks, rate limits, representation rules and the virtual-clock endpoints.
 */
import { Operator, Timers } from "@fos/core"
import { createEngine, type Engine } from "@fos/http"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import {
  call,
  expectProblem,
  insertCustomers,
  isoMs,
  keysOf,
  makeEngine,
  noRateHeaders,
  orgSeed,
  rateHeaders,
  liveKey,
  type Reply,
  sandboxKey,
  seedOf,
  START_MS,
  toReply
} from "./support.ts"

const A = keysOf("a")
const B = keysOf("b")
const keys = {
  aReadOnly: sandboxKey("a/sandbox/ro"),
  aDeveloper: sandboxKey("a/sandbox/dev"),
  ipV4: sandboxKey("a/ip/v4"),
  ipV6: sandboxKey("a/ip/v6"),
  ipBoth: sandboxKey("a/ip/both"),
  ipLoopback8: sandboxKey("a/ip/lo8"),
  ipLoopback32: sandboxKey("a/ip/lo32"),
  ipLoopbackAndV6: sandboxKey("a/ip/lo-v6"),
  suspended: keysOf("susp"),
  onboarding: keysOf("onb"),
  unprovisioned: keysOf("noprov"),
  slow: keysOf("slow")
}

const seed = seedOf(
  orgSeed("a", {
    users: [{ id: "usr_adev", email: "dev@a.example", role: "developer" }],
    keys: [
      { key: A.sandbox, access: "read_write" },
      { key: A.live, access: "read_write" },
      { key: keys.aReadOnly, access: "read_only" },
      { key: keys.aDeveloper, access: "read_only", createdBy: "usr_adev" },
      { key: keys.ipV4, access: "read_write", ipAllowlist: ["10.0.0.0/8"] },
      { key: keys.ipV6, access: "read_write", ipAllowlist: ["2001:db8::/32"] },
      { key: keys.ipBoth, access: "read_write", ipAllowlist: ["10.0.0.0/8", "192.168.0.0/16", "2001:db8::/32", "::1/128"] },
      { key: keys.ipLoopback8, access: "read_write", ipAllowlist: ["127.0.0.0/8"] },
      { key: keys.ipLoopback32, access: "read_write", ipAllowlist: ["127.0.0.1/32"] },
      { key: keys.ipLoopbackAndV6, access: "read_write", ipAllowlist: ["2001:db8::/32", "127.0.0.0/8"] }
    ]
  }),
  orgSeed("b"),
  orgSeed("susp", { status: "suspended" }),
  orgSeed("onb", { status: "onboarding" }),
  orgSeed("noprov", { sandboxProvisioned: false }),
  orgSeed("slow", { rateLimit: { sustainedPerSecond: 1, burst: 3 } })
)

let engine: Engine
beforeEach(async () => {
  engine = await makeEngine(seed)
})
afterEach(async () => {
  await engine.close()
})

const get = (path: string, key?: string, headers?: Record<string, string>) =>
  call(engine, path, { ...(key === undefined ? {} : { key }), ...(headers === undefined ? {} : { headers }) })

const advance = (body: unknown, key: string = A.sandbox, extra: { headers?: Record<string, string>; noContentType?: boolean } = {}) =>
  call(engine, "/sandbox/v2/simulate/clock/advance", { method: "POST", key, body, ...extra })

const clockNow = async (): Promise<string> => (await get("/sandbox/v2/simulate/clock", A.sandbox)).json.now

const me = "/sandbox/v2/portal/users/me"
const meLive = "/live/v2/portal/users/me"

// ---------------------------------------------------------------------------------------------------------------

describe("authentication", () => {
  it("no x-api-key: 401 API_KEY_MISSING, without rate-limit headers", async () => {
    const r = await get(me)
    expectProblem(r, { type: "API_KEY_MISSING", status: 401, instance: me, nowMs: START_MS })
    noRateHeaders(r)
  })

  it("an empty x-api-key counts as missing", async () => {
    const r = await get(me, "")
    expectProblem(r, { type: "API_KEY_MISSING", status: 401, instance: me, nowMs: START_MS })
  })

  it("an unknown key of the right shape: 401 API_KEY_INVALID", async () => {
    const r = await get(me, sandboxKey("nobody"))
    expectProblem(r, { type: "API_KEY_INVALID", status: 401, instance: me, nowMs: START_MS })
    noRateHeaders(r)
  })

  it.each([
    ["garbage", "hello"],
    ["prefix only", "ck_sandbox_"],
    ["63 hex", `ck_sandbox_${"a".repeat(63)}`],
    ["65 hex", `ck_sandbox_${"a".repeat(65)}`],
    ["upper-case hex of a real key", A.sandbox.replace(/[a-f]/g, (c) => c.toUpperCase()).replace("CK_SANDBOX_", "ck_sandbox_")],
    ["other prefix", `ck_test_${"a".repeat(64)}`],
    ["real key with a trailing character", `${A.sandbox}0`]
  ])("a malformed key (%s): 401 API_KEY_INVALID", async (_, key) => {
    const r = await get(me, key)
    expectProblem(r, { type: "API_KEY_INVALID", status: 401, instance: me, nowMs: START_MS })
    noRateHeaders(r)
  })

  it("a revoked key: 401 API_KEY_INVALID", async () => {
    expect((await get(me, A.sandbox)).status).toBe(200)
    await engine.run(Operator.revokeApiKey(A.sandbox))
    const r = await get(me, A.sandbox)
    expectProblem(r, { type: "API_KEY_INVALID", status: 401, instance: me, nowMs: START_MS })
    // The organization's other keys keep working.
    expect((await get(meLive, A.live)).status).toBe(200)
  })

  it("a live key on /sandbox and a sandbox key on /live: 401 API_KEY_INVALID, saying which environment the key's form is for", async () => {
    const onSandbox = expectProblem(await get(me, A.live), { type: "API_KEY_INVALID", status: 401, instance: me, nowMs: START_MS })
    expect(onSandbox.detail).toBe("The API key has the form of a live key (ck_live_…); the sandbox takes sandbox keys (ck_sandbox_…).")
    const onLive = expectProblem(await get(meLive, A.sandbox), { type: "API_KEY_INVALID", status: 401, instance: meLive, nowMs: START_MS })
    expect(onLive.detail).toBe("The API key has the form of a sandbox key (ck_sandbox_…); the live environment takes live keys (ck_live_…).")
    // Said of the key's form alone, whether or not such a key exists: an unknown live-form key is told the same.
    expect((await get(me, liveKey("nobody"))).json.detail).toBe(onSandbox.detail)
    // Any other key is not an active key of the environment, as before.
    expect((await get(me, "hello")).json.detail).toBe("The API key is not an active key of the sandbox environment.")
    // and each on its own environment works
    expect((await get(me, A.sandbox)).json.apiKey.environment).toBe("sandbox")
    expect((await get(meLive, A.live)).json.apiKey.environment).toBe("live")
  })

  it("a suspended organization: 403 ORGANIZATION_ACCESS_SUSPENDED on both environments, with the rate headers (the key was accepted)", async () => {
    const sandbox = await get(me, keys.suspended.sandbox)
    expectProblem(sandbox, {
      type: "ORGANIZATION_ACCESS_SUSPENDED",
      status: 403,
      instance: me,
      nowMs: START_MS
    })
    expect(rateHeaders(sandbox).limit).toBe(400)
    const live = await get(meLive, keys.suspended.live)
    expectProblem(live, {
      type: "ORGANIZATION_ACCESS_SUSPENDED",
      status: 403,
      instance: meLive,
      nowMs: START_MS
    })
    expect(rateHeaders(live).limit).toBe(100)
  })

  it("suspending an organization refuses its keys at once, and reactivating admits them again", async () => {
    expect((await get(me, B.sandbox)).status).toBe(200)
    await engine.run(Operator.updateOrganization("org_b", { status: "suspended" }))
    expectProblem(await get(me, B.sandbox), { type: "ORGANIZATION_ACCESS_SUSPENDED", status: 403, instance: me, nowMs: START_MS })
    await engine.run(Operator.updateOrganization("org_b", { status: "active" }))
    expect((await get(me, B.sandbox)).status).toBe(200)
  })

  it("an onboarding organization: sandbox works, /live is 403 PRODUCTION_ACCESS_REQUIRED", async () => {
    const sandbox = await get(me, keys.onboarding.sandbox)
    expect(sandbox.status).toBe(200)
    expect(sandbox.json.organization.status).toBe("onboarding")
    expectProblem(await get(meLive, keys.onboarding.live), {
      type: "PRODUCTION_ACCESS_REQUIRED",
      status: 403,
      instance: meLive,
      nowMs: START_MS
    })
  })

  it("a sandbox not yet provisioned: 409 SANDBOX_NOT_PROVISIONED; /live still works", async () => {
    expectProblem(await get(me, keys.unprovisioned.sandbox), {
      type: "SANDBOX_NOT_PROVISIONED",
      status: 409,
      instance: me,
      nowMs: START_MS
    })
    expect((await get(meLive, keys.unprovisioned.live)).status).toBe(200)
    await engine.run(Operator.updateOrganization("org_noprov", { sandboxProvisioned: true }))
    expect((await get(me, keys.unprovisioned.sandbox)).status).toBe(200)
  })

  it.each([
    ["an IPv4 allowlist", keys.ipV4],
    ["an IPv6 allowlist", keys.ipV6],
    ["a mixed allowlist without 127.0.0.1", keys.ipBoth]
  ])("a caller outside %s: 403 API_KEY_IP_NOT_ALLOWED", async (_, key) => {
    expectProblem(await get(me, key), { type: "API_KEY_IP_NOT_ALLOWED", status: 403, instance: me, nowMs: START_MS })
  })

  it.each([
    ["127.0.0.0/8", keys.ipLoopback8],
    ["127.0.0.1/32", keys.ipLoopback32],
    ["a v6 range and 127.0.0.0/8", keys.ipLoopbackAndV6]
  ])("a caller inside the allowlist (%s) is admitted", async (_, key) => {
    expect((await get(me, key)).status).toBe(200)
  })

  it("a read-only key: GET and HEAD work, POST is 403 API_KEY_READ_ONLY and changes nothing", async () => {
    const path = "/sandbox/v2/simulate/clock/advance"
    expect((await get("/sandbox/v2/simulate/clock", keys.aReadOnly)).status).toBe(200)
    expect((await call(engine, "/sandbox/v2/customers", { method: "HEAD", key: keys.aReadOnly })).status).toBe(200)
    const r = await advance({ seconds: 60 }, keys.aReadOnly)
    expectProblem(r, { type: "API_KEY_READ_ONLY", status: 403, instance: path, nowMs: START_MS })
    expect(await clockNow()).toBe(new Date(START_MS).toISOString())
    // The same request with a read-write key of the organization goes through.
    expect((await advance({ seconds: 60 }, A.sandbox)).status).toBe(200)
  })

  it("the key accepted, a refusal carries the rate headers: 403 API_KEY_READ_ONLY, 400 BAD_REQUEST on a bad path", async () => {
    const readOnly = await advance({ seconds: 60 }, keys.aReadOnly)
    expectProblem(readOnly, { type: "API_KEY_READ_ONLY", status: 403, instance: "/sandbox/v2/simulate/clock/advance", nowMs: START_MS })
    expect(rateHeaders(readOnly).limit).toBe(400)
    const badPath = await get("/sandbox/v2/customers/%zz", A.sandbox)
    expectProblem(badPath, { type: "BAD_REQUEST", status: 400, instance: "/sandbox/v2/customers/%zz", nowMs: START_MS })
    rateHeaders(badPath)
    // Without a key nothing was accepted: the bad path is refused as any other unauthenticated request is.
    const keyless = await get("/sandbox/v2/customers/%zz")
    expectProblem(keyless, { type: "API_KEY_MISSING", status: 401, instance: "/sandbox/v2/customers/%zz", nowMs: START_MS })
    noRateHeaders(keyless)
  })

  it("new keys are read-only by default", async () => {
    const created = await engine.run(Operator.createApiKey({ organizationId: "org_a", environment: "sandbox", createdBy: "usr_aadmin" }))
    expect((await get(me, created.key)).json.apiKey.access).toBe("read_only")
    expectProblem(await advance({ seconds: 1 }, created.key), {
      type: "API_KEY_READ_ONLY",
      status: 403,
      instance: "/sandbox/v2/simulate/clock/advance",
      nowMs: START_MS
    })
  })

  it("removing a user stops every key that user created, and only those", async () => {
    const before = await get(me, keys.aDeveloper)
    expect(before.status).toBe(200)
    expect(before.json.user.id).toBe("usr_adev")
    const runtimeKey = await engine.run(Operator.createApiKey({ organizationId: "org_a", environment: "live", createdBy: "usr_adev" }))
    expect((await get(meLive, runtimeKey.key)).status).toBe(200)

    const removed = await engine.run(Operator.removeUser("usr_adev"))
    expect(removed.revokedKeys).toBe(2)

    expectProblem(await get(me, keys.aDeveloper), { type: "API_KEY_INVALID", status: 401, instance: me, nowMs: START_MS })
    expectProblem(await get(meLive, runtimeKey.key), { type: "API_KEY_INVALID", status: 401, instance: meLive, nowMs: START_MS })
    expect((await get(me, A.sandbox)).status).toBe(200)
    expect((await get(meLive, A.live)).status).toBe(200)
  })

  it("GET /v2/portal/users/me describes the key's user, organization and key", async () => {
    const r = await get(me, keys.aReadOnly)
    expect(r.status).toBe(200)
    expect(r.json.user).toMatchObject({ id: "usr_aadmin", email: "admin@a.example", role: "admin" })
    expect(r.json.user.createdAt).toMatch(isoMs)
    expect(r.json.organization).toMatchObject({ id: "org_a", status: "active", features: [] })
    expect(r.json.apiKey).toEqual({ access: "read_only", environment: "sandbox", last4: keys.aReadOnly.slice(-4) })
    expect(r.text).not.toContain(keys.aReadOnly)
  })
})

describe("organization isolation", () => {
  beforeEach(async () => {
    await insertCustomers(engine, [
      { id: "cus_aone", organizationId: "org_a", createdAt: "2026-01-01T00:00:00.000Z" },
      { id: "cus_alive", organizationId: "org_a", environment: "live", createdAt: "2026-01-02T00:00:00.000Z" },
      { id: "cus_bone", organizationId: "org_b", createdAt: "2026-01-03T00:00:00.000Z" }
    ])
  })

  it("a customer of organization A fetched with B's key is 404 CUSTOMER_NOT_FOUND", async () => {
    expect((await get("/sandbox/v2/customers/cus_aone", A.sandbox)).json.id).toBe("cus_aone")
    const r = await get("/sandbox/v2/customers/cus_aone", B.sandbox)
    expectProblem(r, { type: "CUSTOMER_NOT_FOUND", status: 404, instance: "/sandbox/v2/customers/cus_aone", nowMs: START_MS })
    // The answer is the same as for an id that exists nowhere.
    const missing = await get("/sandbox/v2/customers/cus_nowhere", B.sandbox)
    expectProblem(missing, { type: "CUSTOMER_NOT_FOUND", status: 404, instance: "/sandbox/v2/customers/cus_nowhere", nowMs: START_MS })
    expect(missing.json.detail).toBe(r.json.detail)
  })

  it("another organization's customers are never listed", async () => {
    const b = await get("/sandbox/v2/customers?limit=100", B.sandbox)
    expect(b.json.data.map((c: { id: string }) => c.id)).toEqual(["cus_bone"])
    expect(b.json.meta.total).toBe(1)
    const a = await get("/sandbox/v2/customers?limit=100", A.sandbox)
    expect(a.json.data.map((c: { id: string }) => c.id)).toEqual(["cus_aone"])
    expect(a.json.meta.total).toBe(1)
  })

  it("sandbox and production data never mix", async () => {
    expectProblem(await get("/live/v2/customers/cus_aone", A.live), {
      type: "CUSTOMER_NOT_FOUND",
      status: 404,
      instance: "/live/v2/customers/cus_aone",
      nowMs: START_MS
    })
    expectProblem(await get("/sandbox/v2/customers/cus_alive", A.sandbox), {
      type: "CUSTOMER_NOT_FOUND",
      status: 404,
      instance: "/sandbox/v2/customers/cus_alive",
      nowMs: START_MS
    })
    const live = await get("/live/v2/customers", A.live)
    expect(live.json.data.map((c: { id: string }) => c.id)).toEqual(["cus_alive"])
  })
})

describe("correlation ids and routing", () => {
  it("every response carries a fresh x-correlation-id: health, before auth, unknown base, errors and successes", async () => {
    const replies: Array<Reply> = [
      await get("/healthz"),
      await get(me),
      await get(me, sandboxKey("unknown")),
      await get("/v2/customers", A.sandbox),
      await get("/elsewhere"),
      await get("/sandbox/v2/nope", A.sandbox),
      await get("/sandbox/v2/customers/not_an_id", A.sandbox),
      await get(me, A.sandbox),
      await advance("{", A.sandbox)
    ]
    const ids = replies.map((r) => r.headers.get("x-correlation-id"))
    for (const id of ids) expect(id).toMatch(/^[\x21-\x7e]+$/)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it("GET /healthz answers without a key", async () => {
    const r = await get("/healthz")
    expect(r.status).toBe(200)
    expect(r.headers.get("x-correlation-id")).toBeTruthy()
    noRateHeaders(r)
  })

  it("x-client-correlation-id is echoed on successes and on errors", async () => {
    const trace = "client-trace-0042"
    for (const r of [
      await get(me, A.sandbox, { "x-client-correlation-id": trace }),
      await get(me, undefined, { "x-client-correlation-id": trace }),
      await get("/sandbox/v2/customers/nope", A.sandbox, { "x-client-correlation-id": trace }),
      await get("/healthz", undefined, { "x-client-correlation-id": trace })
    ]) {
      expect(r.headers.get("x-client-correlation-id")).toBe(trace)
      expect(r.headers.get("x-correlation-id")).toBeTruthy()
      expect(r.headers.get("x-correlation-id")).not.toBe(trace)
    }
  })

  it("an unknown route is 401 without a key and 404 NOT_FOUND with one", async () => {
    const path = "/sandbox/v2/does-not-exist"
    expectProblem(await get(path), { type: "API_KEY_MISSING", status: 401, instance: path, nowMs: START_MS })
    expectProblem(await get(path, sandboxKey("unknown")), { type: "API_KEY_INVALID", status: 401, instance: path, nowMs: START_MS })
    const r = await get(`${path}?x=1`, A.sandbox)
    expectProblem(r, { type: "NOT_FOUND", status: 404, instance: path, nowMs: START_MS })
    rateHeaders(r)
  })

  it("a known path with a method it does not take is 404 NOT_FOUND with a key, 401 without", async () => {
    const path = "/sandbox/v2/customers"
    expectProblem(await call(engine, path, { method: "DELETE" }), { type: "API_KEY_MISSING", status: 401, instance: path, nowMs: START_MS })
    expectProblem(await call(engine, path, { method: "DELETE", key: A.sandbox }), { type: "NOT_FOUND", status: 404, instance: path, nowMs: START_MS })
  })

  it.each(["/v2/customers", "/", "/sandboxx/v2/customers", "/production/v2/customers", "/elsewhere"])(
    "a path outside /sandbox and /live (%s) is 404 NOT_FOUND",
    async (path) => {
      expectProblem(await get(path, A.sandbox), { type: "NOT_FOUND", status: 404, instance: path, nowMs: START_MS })
      expectProblem(await get(path), { type: "NOT_FOUND", status: 404, instance: path, nowMs: START_MS })
    }
  )

  // One path is the route's exact text: case-sensitive, no matrix parameters, no trailing or doubled slash, no
  // encoded slash, no percent-encoded character in a fixed segment (docs/decisions.md, "What one path is").
  it.each([
    `${me};jsessionid=1`,
    "/sandbox/v2/portal;x=1/users/me",
    "/sandbox/V2/PORTAL/USERS/ME",
    "/sandbox/v2/portal/users/ME",
    `${me}/`,
    "/sandbox/v2//portal/users/me",
    "/sandbox/v2/portal/users%2Fme",
    "/sandbox/v2/%70ortal/users/me",
    "/sandbox/v2/customers/cus_x;jsessionid=1",
    "/sandbox/v2/customers/cus_x%2Fy",
    "/sandbox/v2/customers/cus_x%2fy",
    "/sandbox/v2/customers/",
    "/sandbox/v2/OPENAPI.json"
  ])("%s is not a path: 404 NOT_FOUND with a key, 401 without, as an unknown route", async (path) => {
    const r = await get(path, A.sandbox)
    expectProblem(r, { type: "NOT_FOUND", status: 404, instance: path, nowMs: START_MS })
    rateHeaders(r)
    expectProblem(await get(path), { type: "API_KEY_MISSING", status: 401, instance: path, nowMs: START_MS })
  })

  it.each(["/SANDBOX/v2/portal/users/me", "/Sandbox/v2/customers", "/HEALTHZ", "/healthz/", "/healthz;x=1", "//sandbox/v2/portal/users/me"])(
    "%s is outside the base addresses: 404 NOT_FOUND, key or not",
    async (path) => {
      expectProblem(await get(path, A.sandbox), { type: "NOT_FOUND", status: 404, instance: path, nowMs: START_MS })
      expectProblem(await get(path), { type: "NOT_FOUND", status: 404, instance: path, nowMs: START_MS })
    }
  )

  it("a parameter may be percent-encoded (it is decoded, then checked), and the exact path still answers", async () => {
    expect((await get(me, A.sandbox)).status).toBe(200)
    expect((await get(`${me}?`, A.sandbox)).status).toBe(200)
    const encoded = "/sandbox/v2/customers/cus%5Fdoesnotexist"
    expectProblem(await get(encoded, A.sandbox), { type: "CUSTOMER_NOT_FOUND", status: 404, instance: encoded, nowMs: START_MS })
  })

  it("the instance is the path without its query string", async () => {
    const r = await get("/sandbox/v2/customers/not_an_id?expand=all&x=%2F", A.sandbox)
    expectProblem(r, { type: "INVALID_OID_FORMAT", status: 400, instance: "/sandbox/v2/customers/not_an_id", nowMs: START_MS })
  })
})

describe("OPTIONS, correlation ids and bodies that are not taken", () => {
  const allowOf = (r: { headers: Headers }) => (r.headers.get("allow") ?? "").split(",").map((m) => m.trim()).sort()

  it("OPTIONS answers 204 with the route's methods in Allow, after authentication, for a read-only key too", async () => {
    const list = await call(engine, "/sandbox/v2/webhooks/endpoints", { method: "OPTIONS", key: keys.aReadOnly })
    expect(list.status).toBe(204)
    expect(list.text).toBe("")
    expect(allowOf(list)).toEqual(["GET", "HEAD", "OPTIONS", "POST"])
    rateHeaders(list)
    const one = await call(engine, "/sandbox/v2/orders/ord_x1/cancel", { method: "OPTIONS", key: A.sandbox })
    expect(one.status).toBe(204)
    expect(allowOf(one)).toEqual(["OPTIONS", "POST"])
    expect(allowOf(await call(engine, "/live/v2/customers", { method: "OPTIONS", key: A.live }))).toEqual(["GET", "HEAD", "OPTIONS"])
    expectProblem(await call(engine, "/sandbox/v2/customers", { method: "OPTIONS" }), { type: "API_KEY_MISSING", status: 401, instance: "/sandbox/v2/customers" })
    // The simulate routes exist only under /sandbox, for OPTIONS as for the others.
    expectProblem(await call(engine, "/live/v2/simulate/clock", { method: "OPTIONS", key: A.live }), { type: "NOT_FOUND", status: 404, instance: "/live/v2/simulate/clock" })
    expectProblem(await call(engine, "/sandbox/v2/nothing-here", { method: "OPTIONS", key: A.sandbox }), { type: "NOT_FOUND", status: 404, instance: "/sandbox/v2/nothing-here" })
  })

  it("an x-client-correlation-id longer than 128 characters is 400 BAD_REQUEST naming the header and the limit", async () => {
    const r = await get(me, A.sandbox, { "x-client-correlation-id": "c".repeat(129) })
    const p = expectProblem(r, { type: "BAD_REQUEST", status: 400, instance: me, nowMs: START_MS })
    expect(p.detail).toContain("x-client-correlation-id")
    expect(p.detail).toContain("128")
    expect(r.headers.get("x-client-correlation-id")).toBeNull()
    expect((await get(me, A.sandbox, { "x-client-correlation-id": "c".repeat(128) })).headers.get("x-client-correlation-id")).toBe("c".repeat(128))
  })

  it("an endpoint that takes no body refuses a non-empty one with 400 VALIDATION_ERROR; empty or {} is accepted", async () => {
    const paths: ReadonlyArray<readonly [string, string]> = [
      ["POST", "/sandbox/v2/orders/ord_x1/cancel"],
      ["POST", "/sandbox/v2/payouts/txn_x1/cancel"],
      ["DELETE", "/sandbox/v2/whitelist-recipients/wlr_x1"],
      ["DELETE", "/sandbox/v2/registered-addresses/rad_x1"],
      ["POST", "/sandbox/v2/customers/cus_x1/wallet-signers/wsg_x1/reissue-admin-approval"]
    ]
    const wide = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, i]))
    let n = 0
    // Each with its own Idempotency-Key: some of these endpoints require one.
    const headers = () => ({ "idempotency-key": `no-body-${n++}` })
    for (const [method, path] of paths) {
      const r = await call(engine, path, { method, key: A.sandbox, body: wide, headers: headers() })
      const p = expectProblem(r, { type: "VALIDATION_ERROR", status: 400, instance: path })
      expect(p.errors[0]).toEqual({ pointer: "/k0", detail: "is not allowed" })
      const scalar = expectProblem(await call(engine, path, { method, key: A.sandbox, body: "[1]", headers: headers() }), { type: "VALIDATION_ERROR", status: 400, instance: path })
      expect(scalar.errors).toEqual([{ pointer: "", detail: "must be empty: this endpoint takes no body" }])
      for (const body of [undefined, {}]) {
        const ok = await call(engine, path, { method, key: A.sandbox, headers: headers(), ...(body === undefined ? {} : { body }) })
        expect(ok.json?.type, `${method} ${path} ${JSON.stringify(body)}`).not.toBe("VALIDATION_ERROR")
      }
    }
  })
})

describe("identifiers", () => {
  it.each(["not_an_id", "org_abc", "cus_", "cus_a-b", "CUS_abc", "cus_" + "a".repeat(65)])(
    "GET /v2/customers/%s is 400 INVALID_OID_FORMAT",
    async (id) => {
      const path = `/sandbox/v2/customers/${id}`
      const r = await get(path, A.sandbox)
      expectProblem(r, { type: "INVALID_OID_FORMAT", status: 400, instance: path, nowMs: START_MS })
      expect(r.json.errors).toBeUndefined()
      rateHeaders(r)
    }
  )

  it("a well-formed customer id that does not exist is 404 CUSTOMER_NOT_FOUND", async () => {
    const path = "/sandbox/v2/customers/cus_doesnotexist"
    expectProblem(await get(path, A.sandbox), { type: "CUSTOMER_NOT_FOUND", status: 404, instance: path, nowMs: START_MS })
  })
})

describe("request bodies", () => {
  const path = "/sandbox/v2/simulate/clock/advance"

  it("invalid JSON with Content-Type application/json: 400 MALFORMED_JSON", async () => {
    const r = await advance('{"seconds": 1', A.sandbox)
    expectProblem(r, { type: "MALFORMED_JSON", status: 400, instance: path, nowMs: START_MS })
    expect(r.json.errors).toBeUndefined()
    rateHeaders(r)
  })

  it("invalid JSON with no Content-Type: 400 MALFORMED_JSON (no Content-Type is assumed JSON)", async () => {
    const r = await advance("{not json", A.sandbox, { noContentType: true })
    expectProblem(r, { type: "MALFORMED_JSON", status: 400, instance: path, nowMs: START_MS })
  })

  it("valid JSON with no Content-Type is accepted as JSON", async () => {
    const r = await advance('{"seconds":5}', A.sandbox, { noContentType: true })
    expect(r.status).toBe(200)
    expect(r.json.now).toBe(new Date(START_MS + 5000).toISOString())
  })

  it("application/json with a charset parameter is JSON", async () => {
    const r = await advance({ seconds: 5 }, A.sandbox, { headers: { "content-type": "application/json; charset=utf-8" } })
    expect(r.status).toBe(200)
  })

  it.each(["text/plain", "application/x-www-form-urlencoded", "application/xml"])(
    "Content-Type %s: 415 UNSUPPORTED_MEDIA_TYPE, nothing changes",
    async (type) => {
      const r = await advance('{"seconds":60}', A.sandbox, { headers: { "content-type": type } })
      expectProblem(r, { type: "UNSUPPORTED_MEDIA_TYPE", status: 415, instance: path, nowMs: START_MS })
      expect(await clockNow()).toBe(new Date(START_MS).toISOString())
    }
  )

  it("a body over 1 MiB: 413 PAYLOAD_TOO_LARGE", async () => {
    const body = JSON.stringify({ seconds: 1, padding: "x".repeat(1024 * 1024) })
    const r = await advance(body, A.sandbox)
    expectProblem(r, { type: "PAYLOAD_TOO_LARGE", status: 413, instance: path, nowMs: START_MS })
    expect(await clockNow()).toBe(new Date(START_MS).toISOString())
  })

  it("a streamed body over 1 MiB without Content-Length: 413 PAYLOAD_TOO_LARGE", async () => {
    const bytes = new TextEncoder().encode(JSON.stringify({ seconds: 1, padding: "x".repeat(2 * 1024 * 1024) }))
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 64 * 1024) controller.enqueue(bytes.slice(i, i + 64 * 1024))
        controller.close()
      }
    })
    const request = new Request(`http://localhost${path}`, {
      method: "POST",
      headers: { "x-api-key": A.sandbox, "content-type": "application/json" },
      body,
      duplex: "half"
    } as RequestInit)
    expect(request.headers.get("content-length")).toBeNull()
    const r = await toReply(await engine.fetch(request))
    expectProblem(r, { type: "PAYLOAD_TOO_LARGE", status: 413, instance: path, nowMs: START_MS })
    expect(await clockNow()).toBe(new Date(START_MS).toISOString())
  })

  it("a wrongly typed field: 400 VALIDATION_ERROR pointing at /seconds, never echoing the value", async () => {
    const secret = "zq-rejected-value-77"
    const r = await advance({ seconds: secret }, A.sandbox)
    const p = expectProblem(r, { type: "VALIDATION_ERROR", status: 400, instance: path, nowMs: START_MS })
    expect(p.errors.map((e: { pointer: string }) => e.pointer)).toContain("/seconds")
    expect(r.text).not.toContain(secret)
    rateHeaders(r)
  })

  it("an empty object: 400 VALIDATION_ERROR with errors[] entries", async () => {
    const p = expectProblem(await advance({}, A.sandbox), { type: "VALIDATION_ERROR", status: 400, instance: path, nowMs: START_MS })
    expect(p.errors.length).toBeGreaterThan(0)
    // Either the whole body ("exactly one of") or the members it lacks.
    for (const e of p.errors) expect(["", "/seconds", "/to"]).toContain(e.pointer)
  })

  it("an unparseable instant: 400 VALIDATION_ERROR pointing at /to, never echoing the value", async () => {
    const r = await advance({ to: "yesterday-zq-secret" }, A.sandbox)
    const p = expectProblem(r, { type: "VALIDATION_ERROR", status: 400, instance: path, nowMs: START_MS })
    expect(p.errors.map((e: { pointer: string }) => e.pointer)).toContain("/to")
    expect(r.text).not.toContain("yesterday")
  })

  it.each([
    ["a negative number of seconds", { seconds: -1 }, "/seconds"],
    ["a fractional number of seconds", { seconds: 1.5 }, "/seconds"],
    ["an impossible date", { to: "2026-02-30T00:00:00Z" }, "/to"],
    ["an instant without a time zone", { to: "2026-03-02T00:00:00" }, "/to"],
    ["an instant in the past", { to: "2026-03-01T11:00:00.000Z" }, "/to"],
    ["both seconds and to", { seconds: 1, to: "2026-03-02T00:00:00.000Z" }, ""]
  ])("%s: 400 VALIDATION_ERROR at %s", async (_, body, pointer) => {
    const p = expectProblem(await advance(body, A.sandbox), { type: "VALIDATION_ERROR", status: 400, instance: path, nowMs: START_MS })
    expect(p.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer)
    expect(await clockNow()).toBe(new Date(START_MS).toISOString())
  })

  it.each([["null"], ["[]"], ["42"], ['"seconds"']])("a JSON body that is not an object (%s): 400 VALIDATION_ERROR", async (body) => {
    expectProblem(await advance(body, A.sandbox), { type: "VALIDATION_ERROR", status: 400, instance: path, nowMs: START_MS })
  })
})

describe("rate limits", () => {
  it("sandbox successes carry X-RateLimit-* with a 400 bucket; Remaining counts down", async () => {
    const first = rateHeaders(await get(me, A.sandbox))
    const second = rateHeaders(await get(me, A.sandbox))
    expect(first.limit).toBe(400)
    expect(second.limit).toBe(400)
    expect(first.remaining).toBe(399)
    expect(second.remaining).toBe(398)
    expect(first.reset).toBeGreaterThanOrEqual(0)
  })

  it("live successes carry X-RateLimit-Limit 100", async () => {
    const h = rateHeaders(await get(meLive, A.live))
    expect(h.limit).toBe(100)
    expect(h.remaining).toBe(99)
  })

  it("sandbox and live buckets count apart, and so do organizations", async () => {
    await get(me, A.sandbox)
    await get(me, A.sandbox)
    expect(rateHeaders(await get(meLive, A.live)).remaining).toBe(99)
    expect(rateHeaders(await get(me, B.sandbox)).remaining).toBe(399)
  })

  it("errors after the key is accepted carry the headers; 401s do not", async () => {
    for (
      const r of [
        await get("/sandbox/v2/customers/not_an_id", A.sandbox),
        await get("/sandbox/v2/customers/cus_missing", A.sandbox),
        await get("/sandbox/v2/unknown", A.sandbox),
        await get("/sandbox/v2/customers?limit=0", A.sandbox),
        await advance("{", A.sandbox),
        await advance({ seconds: "x" }, A.sandbox),
        await get("/live/v2/simulate/clock", A.live)
      ]
    ) {
      expect(r.status).toBeGreaterThanOrEqual(400)
      rateHeaders(r)
    }
    noRateHeaders(await get(me))
    noRateHeaders(await get(me, sandboxKey("unknown")))
    noRateHeaders(await get(me, A.live))
  })

  it("past the burst: 429 RATE_LIMITED with Retry-After equal to retryAfterSeconds; the bucket refills on the clock", async () => {
    const path = me
    for (let i = 0; i < 3; i++) {
      const r = await get(path, keys.slow.sandbox)
      expect(r.status).toBe(200)
      const h = rateHeaders(r)
      expect(h.limit).toBe(3)
      expect(h.remaining).toBe(2 - i)
    }
    const limited = await get(path, keys.slow.sandbox)
    const p = expectProblem(limited, { type: "RATE_LIMITED", status: 429, instance: path, nowMs: START_MS })
    expect(p.retryAfterSeconds).toBeGreaterThanOrEqual(1)
    expect(limited.headers.get("retry-after")).toBe(String(p.retryAfterSeconds))
    const h = rateHeaders(limited)
    expect(h.limit).toBe(3)
    expect(h.remaining).toBe(0)
    expect(h.reset).toBeGreaterThanOrEqual(1)

    // Still limited without time passing.
    expect((await get(path, keys.slow.sandbox)).status).toBe(429)

    await engine.clock.advance(p.retryAfterSeconds * 1000)
    expect((await get(path, keys.slow.sandbox)).status).toBe(200)

    // A full refill gives the whole burst back, and no more.
    await engine.clock.advance(10_000)
    const statuses: Array<number> = []
    for (let i = 0; i < 4; i++) statuses.push((await get(path, keys.slow.sandbox)).status)
    expect(statuses).toEqual([200, 200, 200, 429])
  })

  it("an exhausted bucket limits only its own organization and environment", async () => {
    for (let i = 0; i < 3; i++) await get(me, keys.slow.sandbox)
    expect((await get(me, keys.slow.sandbox)).status).toBe(429)
    expect((await get(meLive, keys.slow.live)).status).toBe(200)
    expect((await get(me, A.sandbox)).status).toBe(200)
  })

  it("repeated invalid keys from one address: 401 until the per-IP bucket is empty, then 429", async () => {
    const statuses: Array<number> = []
    let limited: Reply | undefined
    for (let i = 0; i < 200; i++) {
      const r = await get(me, sandboxKey(`invalid-${i}`))
      statuses.push(r.status)
      if (r.status !== 401) {
        limited = r
        break
      }
      expectProblem(r, { type: "API_KEY_INVALID", status: 401, instance: me, nowMs: START_MS })
    }
    expect(statuses.length).toBeGreaterThan(1)
    expect(limited, "an invalid key flood is eventually refused with 429").toBeDefined()
    const p = expectProblem(limited!, { type: "RATE_LIMITED", status: 429, instance: me, nowMs: START_MS })

    // A valid key from the same address is not refused by the invalid-key bucket.
    expect((await get(me, A.sandbox)).status).toBe(200)

    await engine.clock.advance(p.retryAfterSeconds * 1000)
    expectProblem(await get(me, sandboxKey("invalid-after")), { type: "API_KEY_INVALID", status: 401, instance: me })
  })

  it("buckets refill as real time passes under a virtual clock, and a clock advance refills them too (a real clock of the test's own)", async () => {
    const real = Timers.makeVirtualClock(START_MS)
    const own = await createEngine({ clock: { mode: "virtual", start: START_MS }, realClock: real, seed: seed as never })
    try {
      const status = async (key?: string) => (await call(own, me, key === undefined ? {} : { key })).status
      const burst = async (key: string | undefined, n: number) => {
        const statuses: Array<number> = []
        for (let i = 0; i < n; i++) statuses.push(await status(key))
        return statuses
      }
      // A keyed client spends its burst of 3 (1 per second), a keyless one its 20, an invalid key its 10.
      expect(await burst(keys.slow.sandbox, 4)).toEqual([200, 200, 200, 429])
      expect((await burst(undefined, 21)).at(-1)).toBe(429)
      expect((await burst(sandboxKey("invalid-real"), 11)).at(-1)).toBe(429)
      // The virtual clock stands still; one second of real time gives a token back to each.
      real.set(START_MS + 1000)
      expect(await burst(keys.slow.sandbox, 2)).toEqual([200, 429])
      expect(await status()).toBe(401)
      expect(await burst(sandboxKey("invalid-real"), 2)).toEqual([401, 429])
      // Real time still; an advance of the virtual clock is time passing for the buckets as well.
      await own.clock.advance("1 second")
      expect(await burst(keys.slow.sandbox, 2)).toEqual([200, 429])
    } finally {
      await own.close()
    }
  })

  it("repeated requests without a key from one address: 401 until the per-IP bucket is empty, then 429", async () => {
    let limited: Reply | undefined
    let count = 0
    for (let i = 0; i < 500 && limited === undefined; i++) {
      const r = await get(me)
      count++
      if (r.status !== 401) limited = r
    }
    expect(count).toBeGreaterThan(1)
    expect(limited).toBeDefined()
    const p = expectProblem(limited!, { type: "RATE_LIMITED", status: 429, instance: me, nowMs: START_MS })
    await engine.clock.advance(p.retryAfterSeconds * 1000)
    expect((await get(me)).status).toBe(401)
  })
})

describe("representation", () => {
  beforeEach(async () => {
    await insertCustomers(engine, [
      { id: "cus_plain", organizationId: "org_a", createdAt: "2026-01-01T00:00:00.000Z" },
      { id: "cus_ref", organizationId: "org_a", clientReferenceId: "ref-1", createdAt: "2026-01-02T00:00:00.000Z" }
    ])
  })

  it("an optional field without a value is omitted, never null", async () => {
    const r = await get("/sandbox/v2/customers/cus_plain", A.sandbox)
    expect(r.status).toBe(200)
    expect(Object.keys(r.json)).not.toContain("clientReferenceId")
    expect(r.text).not.toContain("null")
    const withRef = await get("/sandbox/v2/customers/cus_ref", A.sandbox)
    expect(withRef.json.clientReferenceId).toBe("ref-1")
    const list = await get("/sandbox/v2/customers", A.sandbox)
    const plain = list.json.data.find((c: { id: string }) => c.id === "cus_plain")
    expect(Object.keys(plain)).not.toContain("clientReferenceId")
  })

  it("timestamps are ISO 8601 UTC with milliseconds and Z", async () => {
    const r = await get("/sandbox/v2/customers/cus_plain", A.sandbox)
    expect(r.json.createdAt).toMatch(isoMs)
    expect(r.json.updatedAt).toMatch(isoMs)
    expect(r.headers.get("content-type") ?? "").toMatch(/^application\/json/)
  })

  it("a list's last page has meta.nextCursor null; previousCursor is present as null on the first page", async () => {
    const r = await get("/sandbox/v2/customers", A.sandbox)
    expect(r.json.data).toHaveLength(2)
    expect(r.json.meta).toEqual({ mode: "cursor", nextCursor: null, previousCursor: null, total: 2 })
    expect(Object.keys(r.json).sort()).toEqual(["data", "meta"])
  })

  it("an empty list is data [] with total 0", async () => {
    const r = await get("/sandbox/v2/customers", B.sandbox)
    expect(r.status).toBe(200)
    expect(r.json).toEqual({ data: [], meta: { mode: "cursor", nextCursor: null, previousCursor: null, total: 0 } })
  })
})

describe("virtual clock endpoints", () => {
  it("GET /v2/simulate/clock returns the virtual now", async () => {
    const r = await get("/sandbox/v2/simulate/clock", A.sandbox)
    expect(r.status).toBe(200)
    expect(r.json).toEqual({ now: new Date(START_MS).toISOString(), mode: "virtual" })
    rateHeaders(r)
  })

  it("advance by seconds moves the clock exactly", async () => {
    const r = await advance({ seconds: 90 }, A.sandbox)
    expect(r.status).toBe(200)
    expect(r.json).toMatchObject({ now: new Date(START_MS + 90_000).toISOString(), mode: "virtual", from: new Date(START_MS).toISOString() })
    expect(await clockNow()).toBe(new Date(START_MS + 90_000).toISOString())
    // The caller's sandbox clock moved; the engine's root clock, which no request of a caller runs on, did not.
    expect(await engine.clockOf("org_a").now()).toBe(START_MS + 90_000)
    expect(await engine.clock.now()).toBe(START_MS)
    // The caller's errors now carry its new time; a request with no caller known carries the root clock's.
    expectProblem(await get("/sandbox/v2/customers/cus_000000000000000000000000", A.sandbox), { type: "CUSTOMER_NOT_FOUND", status: 404, instance: "/sandbox/v2/customers/cus_000000000000000000000000", nowMs: START_MS + 90_000 })
    expectProblem(await get(me), { type: "API_KEY_MISSING", status: 401, instance: me, nowMs: START_MS })
  })

  it("advance by 0 seconds leaves the clock where it is", async () => {
    const r = await advance({ seconds: 0 }, A.sandbox)
    expect(r.status).toBe(200)
    expect(r.json.now).toBe(new Date(START_MS).toISOString())
  })

  it("advance to an instant, with an offset, lands on it", async () => {
    const r = await advance({ to: "2026-03-01T14:30:00.250+01:00" }, A.sandbox)
    expect(r.status).toBe(200)
    expect(r.json.now).toBe("2026-03-01T13:30:00.250Z")
    const again = await advance({ to: "2026-03-01T13:30:00.250Z" }, A.sandbox)
    expect(again.json.now).toBe("2026-03-01T13:30:00.250Z")
  })

  it("the clock never leaves the wire format: past 9999-12-31 an advance is refused or timestamps stay YYYY-…Z", async () => {
    const edge = await advance({ to: "9999-12-31T23:59:59.000Z" }, A.sandbox)
    expect(edge.status).toBe(200)
    expect(edge.json.now).toBe("9999-12-31T23:59:59.000Z")
    const beyond = await advance({ seconds: 3600 }, A.sandbox)
    if (beyond.status === 200) expect(beyond.json.now).toMatch(isoMs)
    else expectProblem(beyond, { type: "VALIDATION_ERROR", status: 400, instance: "/sandbox/v2/simulate/clock/advance" })
    expect(await clockNow()).toMatch(isoMs)
    const problem = await get(me)
    expect(problem.json.timestamp).toMatch(isoMs)
  })

  it("engine.clock.advance is seen over HTTP", async () => {
    await engine.clock.advance(3_600_000)
    expect(await clockNow()).toBe(new Date(START_MS + 3_600_000).toISOString())
  })

  it("simulate endpoints do not exist on /live: 404 NOT_FOUND", async () => {
    expectProblem(await get("/live/v2/simulate/clock", A.live), {
      type: "NOT_FOUND",
      status: 404,
      instance: "/live/v2/simulate/clock",
      nowMs: START_MS
    })
    const r = await call(engine, "/live/v2/simulate/clock/advance", { method: "POST", key: A.live, body: { seconds: 60 } })
    expectProblem(r, { type: "NOT_FOUND", status: 404, instance: "/live/v2/simulate/clock/advance", nowMs: START_MS })
    expect(await engine.clock.now()).toBe(START_MS)
  })

  it("with the system clock the clock reads the time and the mode; an advance is 409 CONFLICT that says how to start", async () => {
    const system = await createEngine({ clock: { mode: "system" }, seed: seed as never })
    try {
      const get1 = await call(system, "/sandbox/v2/simulate/clock", { key: A.sandbox })
      expect(get1.status).toBe(200)
      expect(Object.keys(get1.json).sort()).toEqual(["mode", "now"])
      expect(get1.json.mode).toBe("system")
      expect(get1.json.now).toMatch(isoMs)
      const post = await call(system, "/sandbox/v2/simulate/clock/advance", { method: "POST", key: A.sandbox, body: { seconds: 60 } })
      const p = expectProblem(post, { type: "CONFLICT", status: 409, instance: "/sandbox/v2/simulate/clock/advance" })
      // Its own resolution, not the catalog's "read the resource's current state and retry", which no retry fixes.
      expect(p.resolution).toContain("--clock virtual")
      expect(p.resolution).not.toMatch(/retry/i)
      const keyed = await call(system, "/sandbox/v2/simulate/clock/advance", {
        method: "POST",
        key: A.sandbox,
        body: { seconds: 60 },
        headers: { "idempotency-key": "sys-1" }
      })
      expectProblem(keyed, { type: "CONFLICT", status: 409, instance: "/sandbox/v2/simulate/clock/advance" })
    } finally {
      await system.close()
    }
  })
})

describe("documents", () => {
  it("GET /sandbox/v2/openapi.json is the generated OpenAPI document", async () => {
    const r = await get("/sandbox/v2/openapi.json")
    expect(r.status).toBe(200)
    expect(r.json.openapi).toMatch(/^3\./)
    expect(Object.keys(r.json.paths)).toEqual(expect.arrayContaining(["/v2/customers", "/v2/customers/{customerId}", "/v2/simulate/clock"]))
    expect(r.headers.get("x-correlation-id")).toBeTruthy()
  })
})
