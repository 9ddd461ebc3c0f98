/**
 * `fos listen --forward-to URL` against a real `fos serve` (virtual clock, memory store, and no
 * `--insecure-webhooks`: the server never connects to the receiver): the CLI runs as a child process of the repo's
 * bin, forwards each attempt to a receiver on loopback, which verifies the signature with the secret the CLI
 * printed; SIGINT deletes the endpoint and exits 0; a receiver that is down shows as failed attempts on the spec's
 * retry timetable (Events, Retries: 30 s, 2 min, 15 min, 1 h, then failed).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { once } from "node:events"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { verifyWebhook } from "@fos/client/webhooks"
import { MemoryStore, Store } from "@fos/core"
import { createEngine } from "@fos/http"
import { Layer } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { killAllFos, repoRoot, startFos } from "./fosProcess.ts"

const key = `ck_sandbox_${"5c".repeat(32)}`
const tmp = mkdtempSync(join(tmpdir(), "fos-listen-"))
const seedPath = join(tmp, "seed.json")
writeFileSync(seedPath, JSON.stringify({
  organizations: [{
    id: "org_listen",
    name: "Listen",
    status: "active",
    users: [{ id: "usr_listen", email: "listen@server.test", role: "admin" }],
    apiKeys: [{ key, access: "read_write", createdBy: "usr_listen" }]
  }]
}))
const servers: Array<Server> = []
const listeners = new Set<ChildProcess>()

afterAll(() => {
  killAllFos()
  for (const child of listeners) child.kill("SIGKILL")
  for (const server of servers) server.close()
  rmSync(tmp, { recursive: true, force: true })
})

const serve = () => startFos(["--store", "memory", "--port", "0", "--clock", "virtual", "--seed", seedPath, "--quiet"])

const api = async (origin: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${origin}/sandbox${path}`, {
    method,
    headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: response.status, json: (await response.json().catch(() => undefined)) as any }
}

const flush = async (origin: string) => {
  const flushed = await api(origin, "POST", "/v2/simulate/webhooks/flush")
  expect(flushed.status).toBe(200)
  expect(flushed.json.complete).toBe(true)
  return flushed.json as { deliveries: Array<{ id: string; status: string; attempts: number }> }
}

interface Hit {
  readonly raw: Buffer
  readonly headers: IncomingMessage["headers"]
}

/** A receiver on loopback answering `status`. */
const startReceiver = async (status: number) => {
  const hits: Array<Hit> = []
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      hits.push({ raw: Buffer.concat(chunks), headers: req.headers })
      res.writeHead(status).end()
    })
  })
  servers.push(server)
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, hits }
}

/** A loopback URL nothing listens on: a port taken, then given back. */
const downUrl = async () => {
  const server = createServer()
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  const port = (server.address() as AddressInfo).port
  await new Promise((done) => server.close(done))
  return `http://127.0.0.1:${port}/webhooks`
}

interface RunningListen {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly endpointId: string
  readonly secret: string
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
}

/** `fos listen <args>` through the repo's bin; resolves once it printed its endpoint and secret. */
const startListen = (origin: string, args: ReadonlyArray<string>): Promise<RunningListen> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["adapters/node/bin/fos.js", "listen", "--url", origin, "--key", key, ...args], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"]
    })
    listeners.add(child)
    let out = ""
    let err = ""
    let started = false
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
      child.on("exit", (code, signal) => {
        listeners.delete(child)
        done({ code, signal })
        if (!started) reject(new Error(`fos listen exited (${code ?? signal})\nstdout: ${out}\nstderr: ${err}`))
      })
    )
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (err += chunk))
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk
      const endpoint = /endpoint (wep_\w+)/.exec(out)
      const secret = /^signing secret: (whsec_[0-9a-f]{64})$/m.exec(out)
      if (!started && endpoint !== null && secret !== null) {
        started = true
        resolve({ child, stdout: () => out, endpointId: endpoint[1]!, secret: secret[1]!, exited })
      }
    })
  })

/** Waits until `predicate` holds of the CLI's output (its line is printed after its report is answered). */
const outputShows = async (listen: RunningListen, predicate: (out: string) => boolean) => {
  for (let i = 0; i < 200 && !predicate(listen.stdout()); i++) await new Promise((r) => setTimeout(r, 25))
  return listen.stdout()
}

describe("fos listen --forward-to", () => {
  it("forwards a delivery with its signature to a local receiver, prints it, and deletes its endpoint on SIGINT", async () => {
    const { origin } = await serve()
    const receiver = await startReceiver(200)
    const listen = await startListen(origin, ["--forward-to", receiver.url])

    const endpoints = await api(origin, "GET", "/v2/webhooks/endpoints")
    expect(endpoints.json.data).toEqual([expect.objectContaining({ id: listen.endpointId, url: `fos-listen://${listen.endpointId}`, subscription: { mode: "all" } })])

    const event = await api(origin, "POST", "/v2/simulate/events", { type: "transaction.completed" })
    expect(event.status).toBe(201)
    await flush(origin)
    const deliveries = await api(origin, "GET", "/v2/webhooks/deliveries")
    expect(deliveries.json.data).toEqual([expect.objectContaining({ status: "succeeded", attempts: 1 })])

    expect(receiver.hits).toHaveLength(1)
    const hit = receiver.hits[0]!
    const verified = await verifyWebhook(hit.raw, hit.headers["x-service-signature"] as string, { secret: listen.secret })
    expect(verified.id).toBe(event.json.id)
    expect(hit.headers["x-service-event"]).toBe("transaction.completed")
    expect(hit.headers["content-type"]).toBe("application/json")
    expect(hit.headers["user-agent"]).toBe("fos-webhooks/2")
    expect(hit.headers["x-service-delivery-id"]).toMatch(/^wda_/)

    const detail = await api(origin, "GET", `/v2/webhooks/deliveries/${deliveries.json.data[0].id}`)
    expect(detail.json.attemptList).toEqual([expect.objectContaining({ id: hit.headers["x-service-delivery-id"], responseStatus: 200 })])
    expect(detail.json.attemptList[0].error).toBeUndefined()

    const out = await outputShows(listen, (o) => o.includes(event.json.id))
    expect(out).toMatch(new RegExp(`transaction\\.completed\\s+${event.json.id}\\s+-> 200\\s+\\d+ms`))

    listen.child.kill("SIGINT")
    expect(await listen.exited).toEqual({ code: 0, signal: null })
    expect(listen.stdout()).toContain(`deleted endpoint ${listen.endpointId}`)
    expect((await api(origin, "GET", "/v2/webhooks/endpoints")).json.data).toEqual([])
  }, 60_000)

  it("shows a receiver that is down as failed attempts on the retry timetable, then failed", async () => {
    const { origin } = await serve()
    const listen = await startListen(origin, ["--forward-to", await downUrl(), "--events", "transaction.completed,transaction.failed"])
    expect((await api(origin, "GET", `/v2/webhooks/endpoints/${listen.endpointId}`)).json.subscription).toEqual({
      mode: "selected",
      eventTypes: ["transaction.completed", "transaction.failed"]
    })
    // Not subscribed: no delivery.
    expect((await api(origin, "POST", "/v2/simulate/events", { type: "order.succeeded" })).status).toBe(201)
    const event = await api(origin, "POST", "/v2/simulate/events", { type: "transaction.failed" })
    await flush(origin)
    const list = (await api(origin, "GET", "/v2/webhooks/deliveries")).json.data as Array<{ id: string; eventType: string }>
    expect(list.map((d) => d.eventType)).toEqual(["transaction.failed"])
    const deliveryId = list[0]!.id
    const delivery = async () => (await api(origin, "GET", `/v2/webhooks/deliveries/${deliveryId}`)).json
    expect(await delivery()).toMatchObject({ status: "pending", attempts: 1 })

    // The spec's waits after attempts 1 to 4; one second short of each, nothing is attempted.
    for (const [wait, attempts] of [[30, 2], [120, 3], [900, 4], [3600, 5]] as const) {
      expect((await api(origin, "POST", "/v2/simulate/clock/advance", { seconds: wait - 1 })).status).toBe(200)
      await flush(origin)
      expect((await delivery()).attempts).toBe(attempts - 1)
      expect((await api(origin, "POST", "/v2/simulate/clock/advance", { seconds: 1 })).status).toBe(200)
      await flush(origin)
      expect((await delivery()).attempts).toBe(attempts)
    }
    const detail = await delivery()
    expect(detail.status).toBe("failed")
    const started = detail.attemptList.map((a: { startedAt: string }) => Date.parse(a.startedAt))
    expect(started.map((t: number) => (t - started[0]) / 1000)).toEqual([0, 30, 150, 1050, 4650])
    for (const attempt of detail.attemptList) {
      expect(attempt.responseStatus).toBeUndefined()
      expect(attempt.error).toBe("connection refused")
    }
    const out = await outputShows(listen, (o) => o.split("failed (connection refused)").length - 1 === 5)
    expect(out.match(new RegExp(`transaction\\.failed\\s+${event.json.id}\\s+-> failed \\(connection refused\\)`, "g"))).toHaveLength(5)

    listen.child.kill("SIGINT")
    expect((await listen.exited).code).toBe(0)
  }, 90_000)

  it("fails an attempt at once when no fos listen is connected, and refuses what is not a listener", async () => {
    const { origin } = await serve()
    const created = await api(origin, "POST", "/v2/simulate/webhooks/listeners", {})
    expect(created.status).toBe(201)
    expect(created.json).toMatchObject({ url: `fos-listen://${created.json.id}`, secret: expect.stringMatching(/^whsec_/) })
    await api(origin, "POST", "/v2/simulate/events", { type: "transaction.completed" })
    await flush(origin)
    const deliveries = (await api(origin, "GET", "/v2/webhooks/deliveries")).json.data
    expect(deliveries).toEqual([expect.objectContaining({ status: "pending", attempts: 1 })])
    const id = deliveries[0].id
    expect((await api(origin, "GET", `/v2/webhooks/deliveries/${id}`)).json.attemptList[0].error).toMatch(/^connection refused/)

    // A poll with wait=0 answers at once and connects the listener: the next attempt is handed over, not refused.
    const poll = (query: string) => api(origin, "POST", `/v2/simulate/webhooks/listeners/${created.json.id}/poll${query}`)
    for (const wait of ["21", "-1", "1.5", "soon"]) {
      expect(await poll(`?wait=${wait}`)).toMatchObject({ status: 400, json: { type: expect.stringContaining("VALIDATION_ERROR") } })
    }
    expect(await poll("?wait=0")).toEqual({ status: 200, json: { requests: [] } })
    await api(origin, "POST", "/v2/simulate/events", { type: "transaction.completed" })
    const handed = api(origin, "POST", "/v2/simulate/webhooks/flush")
    let taken: Array<{ attemptId: string }> = []
    for (let i = 0; i < 100 && taken.length === 0; i++) taken = (await poll("?wait=1")).json.requests
    expect(taken).toHaveLength(1)
    const answered = await api(origin, "POST", `/v2/simulate/webhooks/listeners/${created.json.id}/attempts/${taken[0]!.attemptId}`, { status: 204, latencyMs: 2 })
    expect(answered.json).toEqual({ recorded: true })
    expect((await handed).status).toBe(200)

    // A report for an attempt no longer waiting is not recorded; an ordinary endpoint is no listener.
    const late = await api(origin, "POST", `/v2/simulate/webhooks/listeners/${created.json.id}/attempts/wda_${"0".repeat(26)}`, { status: 200, latencyMs: 3 })
    expect(late).toMatchObject({ status: 200, json: { recorded: false } })
    const ordinary = await api(origin, "POST", "/v2/webhooks/endpoints", { url: "https://hooks.example.com/fos" })
    expect((await api(origin, "POST", `/v2/simulate/webhooks/listeners/${ordinary.json.id}/poll`)).status).toBe(404)
    // An ordinary endpoint cannot be given a listener's URL.
    expect((await api(origin, "POST", "/v2/webhooks/endpoints", { url: `fos-listen://${created.json.id}` })).status).toBe(400)

    // At most 10 listeners per sandbox (ordinary endpoints do not count); deleting one makes room.
    for (let i = 0; i < 9; i++) expect((await api(origin, "POST", "/v2/simulate/webhooks/listeners", {})).status).toBe(201)
    const eleventh = await api(origin, "POST", "/v2/simulate/webhooks/listeners", {})
    expect(eleventh).toMatchObject({ status: 409, json: { type: expect.stringContaining("CONFLICT") } })
    expect((await api(origin, "DELETE", `/v2/webhooks/endpoints/${created.json.id}`)).status).toBe(204)
    expect((await api(origin, "POST", `/v2/simulate/webhooks/listeners/${created.json.id}/poll`)).status).toBe(410)
    expect((await api(origin, "POST", "/v2/simulate/webhooks/listeners", {})).status).toBe(201)
  }, 60_000)

  it("exits 2 on bad usage and 1 when the server refuses, having created nothing", async () => {
    const { origin } = await serve()
    const run = (...args: Array<string>) =>
      spawnSync(process.execPath, ["adapters/node/bin/fos.js", "listen", "--url", origin, ...args], { cwd: repoRoot, encoding: "utf8", env: { ...process.env, FOS_API_KEY: "" } })
    const noTarget = run("--key", key)
    expect(noTarget.status).toBe(2)
    expect(noTarget.stderr).toContain("--forward-to is required")
    expect(run("--key", key, "--forward-to", "ftp://localhost/x").status).toBe(2)
    const unknownEvent = run("--key", key, "--forward-to", "http://localhost:3000/webhooks", "--events", "no.such.event")
    expect(unknownEvent.status).toBe(1)
    expect(unknownEvent.stderr).toContain("VALIDATION_ERROR")
    const badKey = run("--key", `ck_sandbox_${"0".repeat(64)}`, "--forward-to", "http://localhost:3000/webhooks")
    expect(badKey.status).toBe(1)
    expect(badKey.stderr).toContain("401")
    expect((await api(origin, "GET", "/v2/webhooks/endpoints")).json.data).toEqual([])
  }, 60_000)

  it("hands an attempt made by one process to a client polling another that shares its store", async () => {
    // Two engines on one store stand for two fos serve processes on one PostgreSQL.
    const store = Layer.succeed(Store.Store, MemoryStore.make())
    const seed = {
      organizations: [{
        id: "org_listen",
        name: "Listen",
        status: "active",
        users: [{ id: "usr_listen", email: "listen@server.test", role: "admin" }],
        apiKeys: [{ key, access: "read_write", createdBy: "usr_listen" }]
      }]
    }
    const maker = await createEngine({ store, clock: { mode: "virtual" }, seed: seed as never })
    const polled = await createEngine({ store, clock: { mode: "virtual" }, seed: seed as never })
    try {
      const call = async (engine: typeof maker, path: string, body?: unknown) => {
        const response = await engine.fetch(`http://fos/sandbox${path}`, {
          method: "POST",
          headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        })
        return { status: response.status, json: (await response.json().catch(() => undefined)) as any }
      }
      const listener = await call(polled, "/v2/simulate/webhooks/listeners", {})
      expect(listener.status).toBe(201)
      // The client: polls `polled` only, verifies, and reports there.
      const received: Array<string> = []
      const client = (async () => {
        while (received.length === 0) {
          const got = await call(polled, `/v2/simulate/webhooks/listeners/${listener.json.id}/poll`)
          expect(got.status).toBe(200)
          for (const request of got.json.requests) {
            const event = await verifyWebhook(request.body, request.headers["x-service-signature"], { secret: listener.json.secret, toleranceSeconds: 1e9 })
            received.push(event.id)
            const reported = await call(polled, `/v2/simulate/webhooks/listeners/${listener.json.id}/attempts/${request.attemptId}`, { status: 202, latencyMs: 7 })
            expect(reported.json).toEqual({ recorded: true })
          }
        }
      })()
      // The event is written, and its attempt made, by the other engine.
      const event = await call(maker, "/v2/simulate/events", { type: "transaction.completed" })
      expect(event.status).toBe(201)
      await client
      expect(received).toEqual([event.json.id])
      await maker.deliveries.flush()
      const list = await (await maker.fetch("http://fos/sandbox/v2/webhooks/deliveries", { headers: { "x-api-key": key } })).json() as any
      expect(list.data).toEqual([expect.objectContaining({ status: "succeeded", attempts: 1 })])
      const detail = await (await maker.fetch(`http://fos/sandbox/v2/webhooks/deliveries/${list.data[0].id}`, { headers: { "x-api-key": key } })).json() as any
      // The client's report is the attempt's result: its status and its latency.
      expect(detail.attemptList).toEqual([expect.objectContaining({ responseStatus: 202, latencyMs: 7 })])
    } finally {
      await maker.close()
      await polled.close()
    }
  }, 60_000)
})
