/**
 * The operator surface: organizations, users and API keys over /operator with the operator token, and the rules
 * of the spec's Authentication section that apply there (rules 3, 4, 5 and 7).
 */
import { createEngine, type Engine } from "@fos/http"
import { afterEach, describe, expect, it } from "vitest"

const token = "operator-token-for-tests"
const t0 = Date.parse("2026-03-01T12:00:00.000Z")

let engine: Engine
afterEach(async () => engine?.close())

const start = async (options: { readonly operatorSurface: boolean } = { operatorSurface: true }) => {
  engine = await createEngine({ clock: { mode: "virtual", start: t0 }, ...(options.operatorSurface ? { operatorToken: token } : {}) })
  return engine
}

const op = async (method: string, path: string, body?: unknown, bearer = token) => {
  const response = await engine.fetch(new Request(`http://fos${path}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  }))
  return { status: response.status, body: (await response.json()) as any, headers: response.headers }
}

const api = async (key: string, path: string, init: RequestInit = {}) => {
  const response = await engine.fetch(new Request(`http://fos${path}`, { ...init, headers: { "x-api-key": key, ...init.headers } }))
  return { status: response.status, body: (await response.json()) as any }
}

/** An organization with an admin and a developer. */
const organization = async (status = "active") => {
  expect((await op("POST", "/operator/organizations", { id: "org_acme", name: "Acme", status })).status).toBe(201)
  expect((await op("POST", "/operator/users", { id: "usr_admin", organizationId: "org_acme", email: "a@acme.test", role: "admin" })).status).toBe(201)
  expect((await op("POST", "/operator/users", { id: "usr_dev", organizationId: "org_acme", email: "d@acme.test", role: "developer" })).status).toBe(201)
}

const newKey = async (input: Record<string, unknown>) => op("POST", "/operator/api-keys", { organizationId: "org_acme", environment: "sandbox", ...input })

describe("operator surface", () => {
  it("needs the operator token, and does not exist without one", async () => {
    await start()
    const wrong = await op("GET", "/operator/organizations", undefined, "nope")
    expect(wrong.status).toBe(401)
    expect(wrong.body.type).toBe("UNAUTHORIZED")
    expect(wrong.body.instance).toBe("/operator/organizations")
    await engine.close()
    await start({ operatorSurface: false })
    const off = await op("GET", "/operator/organizations")
    expect(off.status).toBe(404)
    expect(off.body.type).toBe("NOT_FOUND")
  })

  it("creates keys that work at once, read-only by default, shown once and stored as a hash", async () => {
    await start()
    await organization()
    const created = await newKey({ createdBy: "usr_dev" })
    expect(created.status).toBe(201)
    expect(created.body.key).toMatch(/^ck_sandbox_[0-9a-f]{64}$/)
    expect(created.body.access).toBe("read_only")
    expect(created.body.hash).toMatch(/^[0-9a-f]{64}$/)
    expect(created.body.hash).not.toContain(created.body.key.slice(11, 30))
    const listed = await op("GET", "/operator/organizations/org_acme/api-keys")
    expect(JSON.stringify(listed.body)).not.toContain(created.body.key)
    const me = await api(created.body.key, "/sandbox/v2/portal/users/me")
    expect(me.status).toBe(200)
    expect(me.body.user.id).toBe("usr_dev")
    expect(me.body.apiKey).toEqual({ access: "read_only", environment: "sandbox", last4: created.body.key.slice(-4) })
  })

  it("refuses a read-write key created by a developer: API_KEY_WRITE_REQUIRES_ADMIN", async () => {
    await start()
    await organization()
    const refused = await newKey({ createdBy: "usr_dev", access: "read_write" })
    expect(refused.status).toBe(403)
    expect(refused.body.type).toBe("API_KEY_WRITE_REQUIRES_ADMIN")
    expect((await newKey({ createdBy: "usr_admin", access: "read_write" })).status).toBe(201)
  })

  it("refuses keys while key creation is disabled: API_KEY_CREATION_DISABLED", async () => {
    await start()
    await organization()
    expect((await op("PATCH", "/operator/organizations/org_acme", { apiKeyCreationEnabled: false })).status).toBe(200)
    const refused = await newKey({ createdBy: "usr_admin" })
    expect(refused.status).toBe(403)
    expect(refused.body.type).toBe("API_KEY_CREATION_DISABLED")
  })

  it("revokes a key: it stops at once, and revoking again changes nothing", async () => {
    await start()
    await organization()
    const { body } = await newKey({ createdBy: "usr_admin" })
    expect((await api(body.key, "/sandbox/v2/customers")).status).toBe(200)
    const revoked = await op("POST", "/operator/api-keys/revoke", { key: body.key })
    expect(revoked.status).toBe(200)
    expect(revoked.body.revokedAt).toBe("2026-03-01T12:00:00.000Z")
    expect((await api(body.key, "/sandbox/v2/customers")).body.type).toBe("API_KEY_INVALID")
    expect((await op("POST", "/operator/api-keys/revoke", { key: body.hash })).body.revokedAt).toBe("2026-03-01T12:00:00.000Z")
  })

  it("removing a user stops every key that user created, and keeps the last admin", async () => {
    await start()
    await organization()
    const devKey = (await newKey({ createdBy: "usr_dev" })).body.key
    const adminKey = (await newKey({ createdBy: "usr_admin" })).body.key
    const removed = await op("DELETE", "/operator/users/usr_dev")
    expect(removed.body).toEqual({ revokedKeys: 1 })
    expect((await api(devKey, "/sandbox/v2/customers")).body.type).toBe("API_KEY_INVALID")
    expect((await api(adminKey, "/sandbox/v2/customers")).status).toBe(200)
    const last = await op("DELETE", "/operator/users/usr_admin")
    expect(last.status).toBe(409)
    expect(last.body.type).toBe("LAST_ORG_ADMIN")
  })

  it("activation opens /live; suspension closes both environments", async () => {
    await start()
    await organization("onboarding")
    const live = (await newKey({ createdBy: "usr_admin", environment: "live" })).body.key
    const sandbox = (await newKey({ createdBy: "usr_admin" })).body.key
    expect((await api(live, "/live/v2/customers")).body.type).toBe("PRODUCTION_ACCESS_REQUIRED")
    expect((await api(sandbox, "/sandbox/v2/customers")).status).toBe(200)
    await op("PATCH", "/operator/organizations/org_acme", { status: "active" })
    expect((await api(live, "/live/v2/customers")).status).toBe(200)
    await op("PATCH", "/operator/organizations/org_acme", { status: "suspended" })
    expect((await api(live, "/live/v2/customers")).body.type).toBe("ORGANIZATION_ACCESS_SUSPENDED")
    expect((await api(sandbox, "/sandbox/v2/customers")).body.type).toBe("ORGANIZATION_ACCESS_SUSPENDED")
  })

  it("a rate-limit override takes effect as support would set it", async () => {
    await start()
    await organization()
    const key = (await newKey({ createdBy: "usr_admin" })).body.key
    await op("PATCH", "/operator/organizations/org_acme", { rateLimit: { sustainedPerSecond: 1, burst: 2 } })
    const statuses: Array<number> = []
    for (let i = 0; i < 3; i++) statuses.push((await api(key, "/sandbox/v2/customers")).status)
    expect(statuses).toEqual([200, 200, 429])
  })

  it("validates operator input with problems, and rejects a bad CIDR", async () => {
    await start()
    await organization()
    const bad = await op("POST", "/operator/organizations", { name: 3 })
    expect(bad.status).toBe(400)
    expect(bad.body.errors).toEqual([{ pointer: "/name", detail: "must be a string" }])
    const cidr = await newKey({ createdBy: "usr_admin", ipAllowlist: ["10.0.0.0/33"] })
    expect(cidr.status).toBe(400)
    expect(cidr.body.type).toBe("VALIDATION_ERROR")
    const dupe = await op("POST", "/operator/users", { organizationId: "org_acme", email: "A@acme.test", role: "developer" })
    expect(dupe.body.type).toBe("USER_ALREADY_BELONGS_TO_ORG")
  })

  it("refuses members its bodies do not name, as the API does", async () => {
    await start()
    await organization()
    const typo = await newKey({ createdBy: "usr_admin", acess: "read_write" })
    expect(typo.status).toBe(400)
    expect(typo.body.errors).toEqual([{ pointer: "/acess", detail: "is not allowed" }])
  })
})
