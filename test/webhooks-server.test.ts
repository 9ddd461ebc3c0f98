/**
 * Webhooks through the real server: a receiver on loopback, the server's virtual clock advanced over HTTP, and a
 * crash between sending and recording, after which the same event is sent again.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import { once } from "node:events"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { verifyWebhook } from "@fos/client/webhooks"
import { afterAll, describe, expect, it } from "vitest"
import { killAllFos, startFos } from "./fosProcess.ts"
import { pgliteDirectoryAt } from "../adapters/sql/test/pgliteDirectory.ts"

const key = `ck_sandbox_${"9a".repeat(32)}`
const tmp = mkdtempSync(join(tmpdir(), "fos-hooks-server-"))
const seedPath = join(tmp, "seed.json")
writeFileSync(seedPath, JSON.stringify({
  organizations: [{
    id: "org_hooks",
    name: "Hooks",
    status: "active",
    users: [{ id: "usr_hooks", email: "hooks@server.test", role: "admin" }],
    apiKeys: [{ key, access: "read_write", createdBy: "usr_hooks" }]
  }]
}))
const servers: Array<Server> = []

afterAll(() => {
  killAllFos()
  for (const server of servers) server.close()
  rmSync(tmp, { recursive: true, force: true })
})

const serve = (store: string) =>
  startFos(["--store", store, "--port", "0", "--clock", "virtual", "--insecure-webhooks", "--seed", seedPath])

interface Hit {
  readonly headers: IncomingMessage["headers"]
  readonly raw: Buffer
  readonly respond: (status: number) => void
}

/** A receiver on loopback; `onHit` decides when and how to answer. */
const startReceiver = async (onHit: (hit: Hit) => void) => {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => onHit({ headers: req.headers, raw: Buffer.concat(chunks), respond: (status) => res.writeHead(status).end() }))
  })
  servers.push(server)
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
}

const api = async (origin: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${origin}/sandbox${path}`, {
    method,
    headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: response.status, json: (await response.json().catch(() => undefined)) as any }
}

/** Waits until the attempts due or in flight are recorded: sends run in the background, after the write answered. */
const flush = async (origin: string) => {
  const flushed = await api(origin, "POST", "/v2/simulate/webhooks/flush")
  expect(flushed.status).toBe(200)
  return flushed.json as { deliveries: Array<{ id: string; status: string; attempts: number }>; complete: boolean }
}

/** The signature check a receiver does, with node:crypto over the raw bytes. */
const signedBy = (hit: Hit, secret: string): boolean => {
  const parts = String(hit.headers["x-service-signature"]).split(",").map((p) => p.split("=") as [string, string])
  const t = parts.find(([k]) => k === "t")![1]
  const expected = createHmac("sha256", secret).update(Buffer.concat([Buffer.from(`${t}.`), hit.raw])).digest()
  return parts.filter(([k]) => k === "v1").some(([, v]) => timingSafeEqual(Buffer.from(v, "hex"), expected))
}

describe("webhooks through fos serve", () => {
  it("delivers to a loopback receiver, signed, and retries when the clock is advanced over HTTP", async () => {
    const hits: Array<Hit> = []
    const url = await startReceiver((hit) => {
      hits.push(hit)
      hit.respond(hits.length === 1 ? 500 : 204)
    })
    const { origin } = await serve("memory")
    const endpoint = await api(origin, "POST", "/v2/webhooks/endpoints", { url })
    expect(endpoint.status).toBe(201)
    const event = await api(origin, "POST", "/v2/simulate/events", { type: "transaction.completed" })
    expect(event.status).toBe(201)
    expect(await flush(origin)).toMatchObject({ complete: true, deliveries: [{ status: "pending", attempts: 1 }] })
    expect(hits).toHaveLength(1)
    expect(signedBy(hits[0]!, endpoint.json.secret)).toBe(true)
    expect(JSON.parse(hits[0]!.raw.toString()).id).toBe(event.json.id)
    expect(hits[0]!.headers["x-service-event"]).toBe("transaction.completed")

    expect((await api(origin, "POST", "/v2/simulate/clock/advance", { seconds: 29 })).status).toBe(200)
    expect(hits).toHaveLength(1)
    expect((await api(origin, "POST", "/v2/simulate/clock/advance", { seconds: 1 })).status).toBe(200)
    await flush(origin)
    expect(hits).toHaveLength(2)
    expect(hits[1]!.raw.equals(hits[0]!.raw)).toBe(true)
    const deliveries = await api(origin, "GET", "/v2/webhooks/deliveries")
    expect(deliveries.json.data[0]).toMatchObject({ status: "succeeded", attempts: 2 })
  }, 60_000)

  it("signs with real time under a virtual clock: a delivery after a 49-hour advance verifies against the receiver's own clock", async () => {
    const hits: Array<Hit> = []
    const url = await startReceiver((hit) => {
      hits.push(hit)
      hit.respond(204)
    })
    const { origin } = await serve("memory")
    const endpoint = await api(origin, "POST", "/v2/webhooks/endpoints", { url })
    expect(endpoint.status).toBe(201)
    expect((await api(origin, "POST", "/v2/simulate/clock/advance", { seconds: 49 * 3600 })).status).toBe(200)
    const now = (await api(origin, "GET", "/v2/simulate/clock")).json.now as string
    const event = await api(origin, "POST", "/v2/simulate/events", { type: "customer.created" })
    expect(event.status).toBe(201)
    await flush(origin)
    expect(hits).toHaveLength(1)
    // The client's verifier, on this process's real clock (no `now` given), with the spec's 300 seconds.
    const verified = await verifyWebhook(hits[0]!.raw, String(hits[0]!.headers["x-service-signature"]), {
      secret: endpoint.json.secret,
      toleranceSeconds: 300
    })
    expect(verified.id).toBe(event.json.id)
    // The event itself is business time: it follows the virtual clock.
    expect(verified.createdAt).toBe(now)
  }, 60_000)

  it("a delivery carries the spec's headers and HTTP's own, nothing of the engine's tracing or of fetch", async () => {
    const hits: Array<Hit> = []
    const url = await startReceiver((hit) => {
      hits.push(hit)
      hit.respond(204)
    })
    const { origin } = await serve("memory")
    const endpoint = await api(origin, "POST", "/v2/webhooks/endpoints", { url })
    expect(endpoint.status).toBe(201)
    expect((await api(origin, "POST", "/v2/simulate/events", { type: "order.created" })).status).toBe(201)
    await flush(origin)
    expect(hits).toHaveLength(1)
    const headers = hits[0]!.headers
    expect(Object.keys(headers).sort()).toEqual([
      "connection",
      "content-length",
      "content-type",
      "host",
      "user-agent",
      "x-service-delivery-id",
      "x-service-event",
      "x-service-signature"
    ])
    expect(headers).toMatchObject({
      host: new URL(url).host,
      "content-type": "application/json",
      "content-length": String(hits[0]!.raw.byteLength),
      "user-agent": "fos-webhooks/2",
      "x-service-event": "order.created"
    })
    expect(signedBy(hits[0]!, endpoint.json.secret)).toBe(true)
  }, 60_000)

  it("a receiver that never answers does not slow a write: the write answers while it holds the request", async () => {
    const hits: Array<Hit> = []
    let arrived!: () => void
    const firstArrived = new Promise<void>((ok) => (arrived = ok))
    // Holds every request open and never answers.
    const url = await startReceiver((hit) => {
      hits.push(hit)
      arrived()
    })
    const { origin } = await serve("memory")
    expect((await api(origin, "POST", "/v2/webhooks/endpoints", { url })).status).toBe(201)
    const event = await api(origin, "POST", "/v2/simulate/events", { type: "customer.created" })
    expect(event.status).toBe(201)
    await firstArrived
    // The receiver holds the attempt; writes and reads answer meanwhile.
    const [delivery] = (await api(origin, "GET", "/v2/webhooks/deliveries")).json.data
    expect(delivery).toMatchObject({ eventId: event.json.id, status: "processing", attempts: 0 })
    expect((await api(origin, "POST", "/v2/simulate/events", { type: "order.created" })).status).toBe(201)
    // The flush waits out the receiver's 5 seconds: the attempt is then recorded as failed, its retry on the clock.
    const flushed = await flush(origin)
    expect(flushed.complete).toBe(true)
    expect(flushed.deliveries).toHaveLength(2)
    expect(flushed.deliveries.map((d) => [d.status, d.attempts])).toEqual([["pending", 1], ["pending", 1]])
    const detail = await api(origin, "GET", `/v2/webhooks/deliveries/${delivery.id}`)
    expect(detail.json.attemptList).toEqual([expect.objectContaining({ error: "no answer within 5 seconds" })])
    // No answer: no status, omitted rather than null (rule 3).
    expect(detail.json.attemptList[0]).not.toHaveProperty("responseStatus")
    expect(hits).toHaveLength(2)
  }, 60_000)

  it("after a crash between sending and recording, sends the same event again once restarted on a durable store", async () => {
    const hits: Array<Hit> = []
    let sent!: () => void
    const firstSent = new Promise<void>((ok) => (sent = ok))
    const url = await startReceiver((hit) => {
      hits.push(hit)
      if (hits.length === 1) sent() // hold the first request: the server dies before it hears back
      else hit.respond(200)
    })
    const store = await pgliteDirectoryAt(join(tmp, "pglite"))
    const first = await serve(store)
    const endpoint = await api(first.origin, "POST", "/v2/webhooks/endpoints", { url })
    expect(endpoint.status).toBe(201)
    // The emit answers at once; its first attempt reaches the receiver, which holds it.
    expect((await api(first.origin, "POST", "/v2/simulate/events", { type: "order.succeeded" })).status).toBe(201)
    await firstSent
    first.child.kill("SIGKILL")
    await once(first.child, "exit")

    const second = await serve(store)
    // The claimed attempt's recovery lease is due 60 s after the claim.
    expect((await api(second.origin, "POST", "/v2/simulate/clock/advance", { seconds: 61 })).status).toBe(200)
    expect(hits).toHaveLength(2)
    const [a, b] = hits.map((h) => JSON.parse(h.raw.toString()))
    expect(b.id).toBe(a.id)
    // The same attempt, never recorded, sent again: the same attempt id, the one its record then shows.
    expect(hits[0]!.headers["x-service-delivery-id"]).toMatch(/^wda_/)
    expect(hits[1]!.headers["x-service-delivery-id"]).toBe(hits[0]!.headers["x-service-delivery-id"])
    expect(signedBy(hits[1]!, endpoint.json.secret)).toBe(true)
    const deliveries = await api(second.origin, "GET", "/v2/webhooks/deliveries")
    expect(deliveries.json.data).toHaveLength(1)
    expect(deliveries.json.data[0]).toMatchObject({ status: "succeeded", attempts: 1 })
    const detail = await api(second.origin, "GET", `/v2/webhooks/deliveries/${deliveries.json.data[0].id}`)
    expect(detail.json.attemptList.map((a: { id: string }) => a.id)).toEqual([hits[0]!.headers["x-service-delivery-id"]])
  }, 90_000)
})
