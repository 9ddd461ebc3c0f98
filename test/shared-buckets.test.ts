/**
 * The rate-limit buckets processes share on PostgreSQL (DATABASE_URL), as a request meets them: a key admitted before
 * has its organization's token asked for while the key is read (one round trip for both, Gate.ts `makeAdmit`),
 * and what the read finds decides. A token taken for a key refused since, or from a bucket whose limit changed, goes
 * back: a client sees what one process with its buckets in memory would show.
 */
import { createEngine, type Engine } from "@fos/http"
import { layerPostgresStore } from "@fos/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { adminUrl, freshDatabase } from "../adapters/sql/test/databases.ts"

const token = "operator-token-for-tests"
const keyOf = (n: number) => `ck_sandbox_${n.toString(16).padStart(2, "0").repeat(32)}`
const kept = keyOf(0x41)
/** Keys to revoke: each admitted once, so this process asks for its token while it reads it. */
const revoked = [0x42, 0x43, 0x44, 0x45, 0x46].map(keyOf)

describe.skipIf(adminUrl === undefined || adminUrl === "")("buckets shared on PostgreSQL, asked while the key is read", () => {
  let database: Awaited<ReturnType<typeof freshDatabase>> | undefined
  let engine: Engine
  beforeAll(async () => {
    database = await freshDatabase("shared_buckets")
    engine = await createEngine({
      store: layerPostgresStore(database.url),
      operatorToken: token,
      seed: {
        organizations: [{
          id: "org_buckets",
          name: "Buckets",
          status: "active",
          // A slow refill: a token taken and not given back shows for seconds.
          rateLimit: { sustainedPerSecond: 1, burst: 50 },
          users: [{ id: "usr_buckets", email: "b@buckets.test", role: "admin" }],
          apiKeys: [kept, ...revoked].map((key) => ({ key, access: "read_write", createdBy: "usr_buckets" }))
        }]
      } as never
    })
  }, 60_000)
  afterAll(async () => {
    await engine?.close()
    await database?.drop()
  })

  const get = async (key: string) => {
    const response = await engine.fetch(new Request("http://fos/sandbox/v2/portal/users/me", { headers: { "x-api-key": key } }))
    await response.text()
    return { status: response.status, limit: response.headers.get("x-ratelimit-limit"), remaining: Number(response.headers.get("x-ratelimit-remaining")) }
  }
  const op = (method: string, path: string, body: unknown) =>
    engine.fetch(new Request(`http://fos${path}`, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) }))

  it("gives back the tokens taken for a key revoked since it was last admitted, and counts from a changed limit at once", async () => {
    // Every key admitted once: each is known to this process, with its organization's bucket.
    for (const key of revoked) expect((await get(key)).status).toBe(200)
    const before = await get(kept)
    expect(before).toMatchObject({ status: 200, limit: "50" })
    for (const key of revoked) expect((await op("POST", "/operator/api-keys/revoke", { key })).status).toBe(200)
    for (const key of revoked) expect((await get(key)).status).toBe(401)
    // Five refused requests spent nothing of the organization's bucket: the next request leaves one token less than
    // before, or more as the bucket refills (six fewer had the five not been given back).
    const after = await get(kept)
    expect(after.status).toBe(200)
    expect(after.remaining).toBeGreaterThanOrEqual(before.remaining - 1)
    // A new limit counts from the next request, though the process last saw the old one.
    expect((await op("PATCH", "/operator/organizations/org_buckets", { rateLimit: { sustainedPerSecond: 1, burst: 7 } })).status).toBe(200)
    const changed = await get(kept)
    expect(changed).toMatchObject({ status: 200, limit: "7" })
    expect(changed.remaining).toBeLessThanOrEqual(6)
  })
})
