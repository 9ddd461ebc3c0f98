/**
 * @fos/testing's `world.requests` and `world.verify` read the service's request log, so they see what every process
 * of a server answered: two `fos serve` processes on one PostgreSQL database of the test's own, one world on each.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { connect, type World } from "@fos/testing"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { adminUrl, freshDatabase } from "../adapters/sql/test/databases.ts"
import { killAllFos, startFos } from "./fosProcess.ts"

const key = `ck_sandbox_${"7e".repeat(32)}`

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
})
