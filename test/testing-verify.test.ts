/**
 * @fos/testing's `world.requests` and `world.verify` read the service's request log, so they see what every process
 * of a server answered: two `fos serve` processes on one PostgreSQL database of the test's own, one world on each;
 * and, on an embedded engine, what the log holds of each request (its operation, its body with the secrets
 * redacted, a replay marked) and how `verify` counts retries apart from effects.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { connect, type FosEngine, startEngine, type World } from "@fos/testing"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { adminUrl, freshDatabase } from "../adapters/sql/test/databases.ts"
import { killAllFos, startFos } from "./fosProcess.ts"

const key = `ck_sandbox_${"7e".repeat(32)}`

/** A keyed write sent twice: the second is answered from the idempotency record. */
const createTwice = async (world: World, other: World, idempotencyKey: string, body: unknown) => {
  const send = (via: World) =>
    via.fetch(`${via.baseUrl}/v2/webhooks/endpoints`, {
      method: "POST",
      headers: { "x-api-key": via.apiKey, "content-type": "application/json", "idempotency-key": idempotencyKey },
      body: JSON.stringify(body)
    })
  const first = await send(world)
  const again = await send(other)
  expect(first.status, await first.clone().text()).toBe(201)
  expect(again.headers.get("idempotency-replayed")).toBe("true")
  return (await first.json()) as { id: string; secret: string }
}

describe("what the request log holds of a request, and how verify counts retries", () => {
  let fos: FosEngine
  let world: World
  beforeAll(async () => {
    fos = await startEngine()
    world = fos.world
  })
  afterAll(() => fos?.close())

  it("keeps each request's operation id and JSON body, secrets redacted; a large body is counted, not kept", async () => {
    const secretKey = `ck_sandbox_${"ab".repeat(32)}`
    const since = Date.now()
    // Refused, but logged with what it carried: a key in a string, a secret and a token by their names.
    const refused = await world.fetch(`${world.baseUrl}/v2/simulate/events`, {
      method: "POST",
      headers: { "x-api-key": world.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ type: "no.such_event", note: `key ${secretKey}`, webhookSecret: "whsec_" + "0".repeat(64), auth: { token: "t0k3n", passkeyCount: 2 } })
    })
    expect(refused.status).toBe(400)
    await world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.verify.test/a" } })
    const large = await world.fetch(`${world.baseUrl}/v2/simulate/events`, {
      method: "POST",
      headers: { "x-api-key": world.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ type: "no.such_event", padding: "é".repeat(5_000) })
    })
    expect(large.status).toBe(400)

    const logged = await world.requests({ since, method: "POST" })
    expect(logged).toHaveLength(3)
    expect(logged[0]).toMatchObject({
      operationId: "simulate.emitEvent",
      status: 400,
      body: { type: "no.such_event", note: "key ck_sandbox_[redacted]", webhookSecret: "[redacted]", auth: { token: "[redacted]", passkeyCount: 2 } }
    })
    expect(JSON.stringify(logged)).not.toContain(secretKey)
    expect(logged[1]).toMatchObject({ operationId: "webhooks.createEndpoint", status: 201, body: { url: "https://hooks.verify.test/a" } })
    expect(logged[1]!.replayed).toBeUndefined()
    // 10,000 bytes of é and the rest: over the 4 KiB kept.
    expect(logged[2]).toMatchObject({ operationId: "simulate.emitEvent", bodyBytes: JSON.stringify({ type: "no.such_event", padding: "" }).length + 10_000 })
    expect(logged[2]!.body).toBeUndefined()
    // A read has no body, and names its operation.
    expect((await world.requests({ since, method: "GET", operationId: "webhooks.listEndpoints" }))).toEqual([])
    await world.client.webhooks.listEndpoints({ query: {} })
    expect(await world.requests({ since, operationId: "webhooks.listEndpoints" })).toMatchObject([{ method: "GET", status: 200 }])
    expect((await world.requests({ since, operationId: "webhooks.listEndpoints" }))[0]).not.toHaveProperty("body")

    await world.verify({ operationId: "webhooks.createEndpoint", body: { url: "https://hooks.verify.test/a" } }, { times: 1 })
    await expect(world.verify({ operationId: "webhooks.createEndpoint", body: { url: "https://hooks.verify.test/b" } }, { settleMs: 0 })).rejects.toThrow(
      /0 requests match .*; the closest is POST \/v2\/webhooks\/endpoints 201 at .*: its body\.url is "https:\/\/hooks\.verify\.test\/a", not "https:\/\/hooks\.verify\.test\/b"$/
    )
    await expect(world.verify({ operationId: "webhooks.createEndpoint", body: { subscription: { mode: "all" } } }, { settleMs: 0 })).rejects.toThrow(
      /its body\.subscription is absent, not \{"mode":"all"\}$/
    )
  })

  it("marks a replay from an idempotency record as a retry: times counts effects, replayed: true counts retries", async () => {
    const since = Date.now()
    const body = { url: "https://hooks.verify.test/retried" }
    const created = await createTwice(world, world, "verify-retry-1", body)
    const logged = await world.requests({ since, body })
    expect(logged.map((r) => r.replayed)).toEqual([undefined, true])
    // The answer's secret is the response's, never the log's: the body holds none.
    expect(JSON.stringify(logged)).not.toContain(created.secret)

    expect(await world.verify({ method: "POST", body }, { times: 1 })).toHaveLength(2)
    expect(await world.verify({ method: "POST", body, replayed: true }, { times: 1 })).toHaveLength(1)
    expect(await world.verify({ method: "POST", body, replayed: false }, { times: 1 })).toHaveLength(1)
    await expect(world.verify({ method: "POST", body }, { times: 2, settleMs: 0 })).rejects.toThrow(
      /1 requests match \{ method: "POST", body: .* \} \(and 1 retries replayed from their Idempotency-Key, not counted\), not exactly 2/
    )
  })
})

describe.skipIf(adminUrl === undefined || adminUrl === "")("world.verify against two fos serve processes on one PostgreSQL", () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>
  let tmp: string
  let viaA: World
  let viaB: World

  beforeAll(async () => {
    database = await freshDatabase("testing_verify")
    tmp = mkdtempSync(join(tmpdir(), "fos-testing-verify-"))
    const seed = join(tmp, "seed.json")
    writeFileSync(seed, JSON.stringify({
      organizations: [{
        id: "org_verify",
        name: "Verify",
        status: "active",
        users: [{ id: "usr_verify", email: "verify@multi.test", role: "admin" }],
        apiKeys: [{ key, access: "read_write", createdBy: "usr_verify" }]
      }]
    }))
    const start = async () => (await startFos(["--store", database.url, "--port", "0", "--seed", seed], {})).origin
    // One first: it applies the seed, the second finds it applied.
    const a = await start()
    const b = await start()
    viaA = await connect({ baseUrl: `${a}/sandbox`, apiKey: key })
    viaB = await connect({ baseUrl: `${b}/sandbox`, apiKey: key })
  }, 60_000)

  afterAll(async () => {
    killAllFos()
    await database?.drop()
    rmSync(tmp, { recursive: true, force: true })
  })

  it("counts what either process answered, by method, path template and status; names the closest miss", async () => {
    const since = Date.now()
    const endpoint = await viaA.client.webhooks.createEndpoint({ payload: { url: "https://hooks.verify.test/fos" } })
    await viaB.client.webhooks.getEndpoint({ params: { id: endpoint.id } })
    await viaB.client.webhooks.getEndpoint({ params: { id: endpoint.id } })
    await expect(viaB.client.webhooks.getEndpoint({ params: { id: "wep_missing" } })).rejects.toMatchObject({ status: 404 })

    // Each world reads the one log: B's reads through A's world, A's write through B's.
    expect(await viaA.verify({ method: "GET", path: "/v2/webhooks/endpoints/{endpointId}", status: 200, since }, { times: 2 })).toHaveLength(2)
    await viaB.verify({ method: "POST", path: "/v2/webhooks/endpoints", status: 201 }, { times: 1 })
    const answeredBy = new Set((await viaA.requests({ since })).map((r) => r.answeredBy))
    expect(answeredBy.size).toBe(2)
    expect(await viaA.requests({ path: /^\/v2\/webhooks\/endpoints\/wep_missing$/ })).toMatchObject([{ status: 404, type: expect.any(String) }])

    await expect(viaA.verify({ method: "POST", path: "/v2/webhooks/endpoints", status: 400 }, { settleMs: 0 })).rejects.toThrow(
      /0 requests match \{ method: "POST", path: "\/v2\/webhooks\/endpoints", status: 400 \}, not at least 1 .*; the closest is POST \/v2\/webhooks\/endpoints 201 at .*: its status is 201, not 400$/
    )
    await expect(viaA.verify({ method: "GET", path: "/v2/webhooks/endpoints/{endpointId}", status: 200 }, { atMost: 1 })).rejects.toThrow(/2 requests match .*, not 0 to 1/)
  }, 60_000)

  it("holds each process's bodies and operation ids, and counts a retry on the other process apart", async () => {
    const since = Date.now()
    const body = { url: "https://hooks.verify.test/two-processes" }
    // The first on A, its retry (the same Idempotency-Key) on B, answered from the record A wrote.
    await createTwice(viaA, viaB, "verify-two-processes", body)
    const logged = await viaB.requests({ since, operationId: "webhooks.createEndpoint" })
    expect(logged).toMatchObject([{ body, status: 201 }, { body, status: 201, replayed: true }])
    expect(new Set(logged.map((r) => r.answeredBy)).size).toBe(2)
    expect(logged[0]!.replayed).toBeUndefined()

    expect(await viaA.verify({ operationId: "webhooks.createEndpoint", body, since }, { times: 1 })).toHaveLength(2)
    await viaA.verify({ operationId: "webhooks.createEndpoint", body, since, replayed: true }, { times: 1 })
    await expect(viaB.verify({ operationId: "webhooks.createEndpoint", body: { url: "https://hooks.verify.test/other" }, since }, { settleMs: 0 })).rejects.toThrow(
      /the closest is POST \/v2\/webhooks\/endpoints 201 .*: its body\.url is "https:\/\/hooks\.verify\.test\/two-processes", not "https:\/\/hooks\.verify\.test\/other"$/
    )
  }, 60_000)
})
