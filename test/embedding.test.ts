/**
 * The embedding API (createEngine and layerEmbedded): its options, driving the virtual clock (advance, advanceTo,
 * runUntilIdle and its bounds), the deliveries an engine sent, fifty engines side by side sharing nothing, and the
 * same engine served by an Effect host on a real port.
 */
import { createHmac } from "node:crypto"
import { createServer } from "node:http"
import { NodeHttpServer } from "@effect/platform-node"
import { makeClient, withIdempotencyKey } from "@fos/client"
import { MemoryStore, type Problem, Timers, Transport } from "@fos/core"
import { WebhookEndpointId } from "@fos/contract"
import { advanceBy, createEngine, Deliveries, type EmbeddedServices, type Engine, flushWebhooks, layerEmbedded, layerRoutes } from "@fos/http"
import { it as effectIt } from "@effect/vitest"
import { Clock, Effect, Layer } from "effect"
import { FetchHttpClient, HttpRouter, HttpServer } from "effect/http"
import { afterEach, describe, expect, it } from "vitest"
import { keysOf, orgSeed, type Seed, seedOf, START_MS } from "./support.ts"

const keys = keysOf("embed")
const seed = seedOf(orgSeed("embed"))

const engines: Array<Engine> = []
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()))
})

/** A virtual-clock engine at START_MS with the memory webhook receiver, closed after the test. */
const start = async (options: Parameters<typeof createEngine>[0] = {}) => {
  const engine = await createEngine({ clock: { mode: "virtual", start: START_MS }, seed, webhookTransport: "memory", ...options })
  engines.push(engine)
  return engine
}

const request = async (engine: Engine, method: string, path: string, body?: unknown, headers: Record<string, string> = {}, key = keys.sandbox) => {
  const response = await engine.fetch(`http://fos.test${path}`, {
    method,
    headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, json: text === "" ? undefined : JSON.parse(text) as any }
}

const createEndpoint = async (engine: Engine, url = "https://receiver.example.com/hooks") => {
  const r = await request(engine, "POST", "/sandbox/v2/webhooks/endpoints", { url })
  expect(r.status).toBe(201)
  return r.json as { id: string; secret: string }
}

/** Emits a test event and waits for the attempts it caused (sends run in the background: the write answers first). */
const emit = async (engine: Engine, type = "customer.created") => {
  const r = await request(engine, "POST", "/sandbox/v2/simulate/events", { type })
  expect(r.status).toBe(201)
  await engine.deliveries.flush()
  return r.json as { id: string; type: string }
}

/** A receiver's check with node:crypto, from the raw body: one v1 matches HMAC-SHA256 of `<t>.<body>`. */
const signedBy = (body: string, signature: string, secret: string): { t: number; valid: boolean } => {
  const t = Number(/t=(\d+)/.exec(signature)![1])
  const expected = createHmac("sha256", secret).update(`${t}.${body}`).digest("hex")
  return { t, valid: signature.split(",").includes(`v1=${expected}`) }
}

const minute = 60_000

describe("options", () => {
  it("clock: \"virtual\" stands still until moved; start takes an ISO instant, a Date or epoch ms", async () => {
    const still = await start({ clock: "virtual" })
    const t = await still.clock.now()
    await request(still, "GET", "/sandbox/v2/customers")
    expect(await still.clock.now()).toBe(t)
    expect(still.clock.mode).toBe("virtual")

    for (const [clock, expected] of [
      [{ mode: "virtual", start: "2026-01-01T00:00:00.000Z" }, Date.UTC(2026, 0, 1)],
      [{ mode: "virtual", start: "2026-01-01T02:00:00+02:00" }, Date.UTC(2026, 0, 1)],
      [{ mode: "virtual", start: new Date(Date.UTC(2027, 5, 1)) }, Date.UTC(2027, 5, 1)],
      [{ mode: "virtual", start: 86_400_000 }, 86_400_000]
    ] as const) {
      const engine = await start({ clock })
      expect(await engine.clock.now()).toBe(expected)
      // The HTTP clock reads the same time.
      expect((await request(engine, "GET", "/sandbox/v2/simulate/clock")).json).toEqual({ now: new Date(expected).toISOString(), mode: "virtual" })
    }
  })

  it("refuses a start that is not an instant", async () => {
    await expect(start({ clock: { mode: "virtual", start: "2026-01-01" } })).rejects.toThrow(RangeError)
    await expect(start({ clock: { mode: "virtual", start: "yesterday" } })).rejects.toThrow(/clock\.start/)
    await expect(start({ clock: { mode: "virtual", start: Number.NaN } })).rejects.toThrow(RangeError)
  })

  it("store: \"memory\" and a store Layer each give an engine its own empty store", async () => {
    const a = await start({ store: "memory" })
    const b = await start({ store: MemoryStore.layer })
    await createEndpoint(a)
    expect((await request(a, "GET", "/sandbox/v2/webhooks/endpoints")).json.data).toHaveLength(1)
    expect((await request(b, "GET", "/sandbox/v2/webhooks/endpoints")).json.data).toHaveLength(0)
  })

  it("engine.fetch takes what fetch takes: a Request, or a URL with init", async () => {
    const engine = await start()
    const viaRequest = await engine.fetch(new Request("http://fos.test/sandbox/v2/portal/users/me", { headers: { "x-api-key": keys.sandbox } }))
    const viaUrl = await engine.fetch(new URL("http://fos.test/sandbox/v2/portal/users/me"), { headers: { "x-api-key": keys.sandbox } })
    const viaText = await engine.fetch("http://fos.test/sandbox/v2/portal/users/me", { headers: { "x-api-key": keys.sandbox } })
    for (const r of [viaRequest, viaUrl, viaText]) expect(((await r.json()) as any).organization.id).toBe("org_embed")
  })
})

describe("advance and advanceTo", () => {
  it("advance takes duration strings and milliseconds", async () => {
    const engine = await start()
    await engine.clock.advance("15 minutes")
    expect(await engine.clock.now()).toBe(START_MS + 15 * minute)
    await engine.clock.advance("30 seconds")
    await engine.clock.advance("1 hour")
    await engine.clock.advance(1_500)
    await engine.clock.advance({ minutes: 2 })
    expect(await engine.clock.now()).toBe(START_MS + 15 * minute + 30_000 + 60 * minute + 1_500 + 2 * minute)
  })

  it("refuses what is not a whole, finite, forward length of time, and leaves the clock where it was", async () => {
    const engine = await start()
    for (const bad of ["2 fortnights", "Infinity", -1, 1.5, "-5 seconds"] as const) {
      await expect(engine.clock.advance(bad as never), String(bad)).rejects.toThrow(RangeError)
    }
    expect(await engine.clock.now()).toBe(START_MS)
  })

  it("advanceTo moves to an instant, never back", async () => {
    const engine = await start()
    await engine.clock.advanceTo("2026-03-02T00:00:00.000Z")
    expect(await engine.clock.now()).toBe(Date.UTC(2026, 2, 2))
    await engine.clock.advanceTo(new Date(Date.UTC(2026, 2, 3)))
    expect(await engine.clock.now()).toBe(Date.UTC(2026, 2, 3))
    await expect(engine.clock.advanceTo("2026-03-01T00:00:00.000Z")).rejects.toThrow(/only moves forward/)
    await expect(engine.clock.advanceTo("10000-01-01T00:00:00.000Z")).rejects.toThrow(RangeError)
    expect(await engine.clock.now()).toBe(Date.UTC(2026, 2, 3))
  })

  it("an advance fires each timer on the way at its own due time", async () => {
    const fired: Array<{ label: string; atMs: number }> = []
    const record: Timers.TimerHandler = (payload: { label: string }) =>
      Effect.map(Clock.currentTimeMillis, (atMs) => void fired.push({ label: payload.label, atMs }))
    const engine = await start({ timerHandlers: { "test.record": record } })
    await engine.run(Effect.all([
      Timers.schedule("test.record", START_MS + 2 * minute, { label: "second" }),
      Timers.schedule("test.record", START_MS + minute, { label: "first" }),
      Timers.schedule("test.record", START_MS + 10 * minute, { label: "later" })
    ]))
    await engine.clock.advance("5 minutes")
    expect(fired).toEqual([{ label: "first", atMs: START_MS + minute }, { label: "second", atMs: START_MS + 2 * minute }])
    expect(await engine.clock.now()).toBe(START_MS + 5 * minute)
  })

  it("a system-clock engine refuses to move time", async () => {
    const engine = await start({ clock: "system" })
    expect(engine.clock.mode).toBe("system")
    await expect(engine.clock.advance("1 minute")).rejects.toThrow(/system clock/)
    await expect(engine.clock.runUntilIdle()).rejects.toThrow(/system clock/)
  })
})

describe("runUntilIdle", () => {
  it("goes through the whole webhook retry timetable: 5 attempts, waits of 30 s, 2 min, 15 min and 1 h", async () => {
    const engine = await start()
    engine.deliveries.answerWith(500)
    const endpoint = await createEndpoint(engine)
    const event = await emit(engine)
    // The first attempt went out once the request committed; the retries wait on the clock.
    expect(engine.deliveries.list()).toHaveLength(1)
    const report = await engine.clock.runUntilIdle()
    const sent = engine.deliveries.list()
    expect(sent.map((d) => d.attempt)).toEqual([1, 2, 3, 4, 5])
    expect(sent.map((d) => Date.parse(d.sentAt) - START_MS)).toEqual([0, 30_000, 150_000, 1_050_000, 4_650_000])
    expect(sent.every((d) => d.status === 500 && d.event.id === event.id && d.endpointId === endpoint.id && d.run === 1)).toBe(true)
    expect(report).toEqual({ now: START_MS + 4_650_000, steps: 4, stoppedBy: "idle", nextDueMs: undefined })
    const delivery = (await request(engine, "GET", "/sandbox/v2/webhooks/deliveries")).json.data[0]
    expect(delivery).toMatchObject({ status: "failed", attempts: 5 })
    // No next attempt: omitted, not null (rule 3).
    expect(delivery).not.toHaveProperty("nextAttemptAt")
  })

  it("leaves timers beyond its horizon pending (idempotency retention, 30 days) unless given a longer one", async () => {
    const engine = await start()
    const keyed = await request(engine, "POST", "/sandbox/v2/webhooks/endpoints", { url: "https://receiver.example.com/k" }, { "idempotency-key": "k-1" })
    expect(keyed.status).toBe(201)
    const retentionDueMs = START_MS + 30 * 24 * 60 * minute
    const report = await engine.clock.runUntilIdle()
    expect(report).toEqual({ now: START_MS, steps: 0, stoppedBy: "horizon", nextDueMs: retentionDueMs })
    // The keyed request still replays.
    const replay = await request(engine, "POST", "/sandbox/v2/webhooks/endpoints", { url: "https://receiver.example.com/k" }, { "idempotency-key": "k-1" })
    expect(replay.json.id).toBe(keyed.json.id)
    expect(await engine.clock.runUntilIdle({ within: "31 days" })).toEqual({ now: retentionDueMs, steps: 1, stoppedBy: "idle", nextDueMs: undefined })
  })

  it("does not follow a periodic timer forever: it stops at the horizon, or after maxSteps", async () => {
    const ticks: Array<number> = []
    // A timer that schedules the next one a minute on, for ever.
    const everyMinute: Timers.TimerHandler = () =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        ticks.push(now)
        yield* Timers.schedule("test.every-minute", now + minute, {})
      })
    const engine = await start({ timerHandlers: { "test.every-minute": everyMinute } })
    await engine.run(Timers.schedule("test.every-minute", START_MS + minute, {}))
    const limited = await engine.clock.runUntilIdle({ maxSteps: 5 })
    expect(limited).toEqual({ now: START_MS + 5 * minute, steps: 5, stoppedBy: "maxSteps", nextDueMs: START_MS + 6 * minute })
    const day = await engine.clock.runUntilIdle()
    // One day on from where it started: every minute up to and including the horizon.
    expect(day).toEqual({ now: START_MS + 5 * minute + 1440 * minute, steps: 1440, stoppedBy: "horizon", nextDueMs: START_MS + 1446 * minute })
    expect(ticks).toHaveLength(1445)
  })
})

describe("engine.deliveries", () => {
  it("records what was sent, in order: event, endpoint, url, signed headers, body, status, run and attempt", async () => {
    const real = Timers.makeVirtualClock(Date.parse("2031-01-01T00:00:00.000Z"))
    const engine = await start({ realClock: real })
    const a = await createEndpoint(engine, "https://a.example.com/hooks")
    const b = await createEndpoint(engine, "https://b.example.com/hooks")
    const events = []
    for (const type of ["customer.created", "transaction.completed", "order.failed"]) events.push(await emit(engine, type))
    const sent = engine.deliveries.list()
    expect(sent).toHaveLength(6)
    for (const endpoint of [a, b]) {
      const mine = sent.filter((d) => d.endpointId === endpoint.id)
      expect(mine.map((d) => d.event.type)).toEqual(["customer.created", "transaction.completed", "order.failed"])
      expect(mine.map((d) => d.event.id)).toEqual(events.map((e) => e.id))
      for (const d of mine) {
        expect(d).toMatchObject({ status: 200, error: null, run: 1, attempt: 1, sentAt: new Date(START_MS).toISOString() })
        expect(d.url).toBe(endpoint === a ? "https://a.example.com/hooks" : "https://b.example.com/hooks")
        expect(JSON.parse(d.body)).toEqual(d.event)
        expect(d.headers["x-service-event"]).toBe(d.event.type)
        expect(d.deliveryId).toMatch(/^wdl_/)
        expect(d.headers["x-service-delivery-id"]).toBe(d.attemptId)
        expect(d.attemptId).toMatch(/^wda_/)
        // Signed with real time, what a receiver checks against its own clock; sent at the engine's time.
        const signature = signedBy(d.body, d.headers["x-service-signature"]!, endpoint.secret)
        expect(signature).toEqual({ t: real.currentTimeMillisUnsafe() / 1000, valid: true })
      }
    }
  })

  it("answers as told: failures then success, a thrown error as no answer; a manual retry starts run 2", async () => {
    const engine = await start()
    engine.deliveries.answerWith((attempt) => attempt.attempt < 3 ? 503 : 200)
    await createEndpoint(engine)
    await emit(engine)
    await engine.clock.runUntilIdle()
    expect(engine.deliveries.list().map((d) => [d.attempt, d.status])).toEqual([[1, 503], [2, 503], [3, 200]])

    engine.deliveries.clear()
    engine.deliveries.answerWith(() => {
      throw new Error("connection refused")
    })
    await emit(engine, "order.created")
    await engine.clock.runUntilIdle()
    const failed = engine.deliveries.list()
    expect(failed.map((d) => [d.attempt, d.status, d.error])).toEqual([1, 2, 3, 4, 5].map((n) => [n, null, "connection refused"]))
    // The engine recorded the same outcome.
    const detail = await request(engine, "GET", `/sandbox/v2/webhooks/deliveries/${failed[0]!.deliveryId}`)
    expect(detail.json.attemptList.map((x: { error: string }) => x.error)).toEqual(Array(5).fill("connection refused"))

    engine.deliveries.answerWith(204)
    const retried = await request(engine, "POST", `/sandbox/v2/webhooks/deliveries/${failed[0]!.deliveryId}/retry`)
    expect(retried.status).toBe(202)
    await engine.deliveries.flush()
    const last = engine.deliveries.list().at(-1)!
    expect(last).toMatchObject({ deliveryId: failed[0]!.deliveryId, run: 2, attempt: 1, status: 204 })
  })

  it("records over another transport only when asked; answerWith needs the memory transport", async () => {
    const silent = await start({ webhookTransport: Transport.callback(() => ({ status: 200 })) })
    expect(() => silent.deliveries.list()).toThrow(/does not record/)
    const statuses = [418]
    const recorded = await start({ webhookTransport: Transport.callback(() => ({ status: statuses.shift() ?? 200 })), recordDeliveries: true })
    await createEndpoint(recorded)
    await emit(recorded)
    expect(recorded.deliveries.list().map((d) => d.status)).toEqual([418])
    expect(() => recorded.deliveries.answerWith(200)).toThrow(/memory transport/)
  })
})

describe("many engines in one process", () => {
  it("50 engines, driven at once, share no data and no time", async () => {
    const count = 50
    const setups = Array.from({ length: count }, (_, i) => ({
      name: `many${i}`,
      startMs: START_MS + i * 3_600_000,
      advanceMs: (i + 1) * minute
    }))
    const all = await Promise.all(setups.map(async (s) => {
      // Signed with each engine's own clock, so that the signatures show each engine's time.
      const engine = await start({ clock: { mode: "virtual", start: s.startMs }, seed: seedOf(orgSeed(s.name)) as Seed, signatureClock: "engine" })
      return { ...s, engine, key: keysOf(s.name).sandbox }
    }))
    // Every engine's steps run interleaved with the others'.
    const results = await Promise.all(all.map(async ({ engine, key, name, advanceMs }) => {
      const endpoint = await request(engine, "POST", "/sandbox/v2/webhooks/endpoints", { url: `https://${name}.example.com/hooks` }, {}, key)
      const first = await request(engine, "POST", "/sandbox/v2/simulate/events", { type: "customer.created" }, {}, key)
      await engine.clock.advance(advanceMs)
      const second = await request(engine, "POST", "/sandbox/v2/simulate/events", { type: "order.created" }, {}, key)
      await engine.deliveries.flush()
      return { endpoint: endpoint.json, events: [first.json.id, second.json.id] }
    }))
    await Promise.all(all.map(async ({ engine, key, name, startMs, advanceMs }, i) => {
      const now = startMs + advanceMs
      expect(await engine.clock.now()).toBe(now)
      expect((await request(engine, "GET", "/sandbox/v2/simulate/clock", undefined, {}, key)).json).toEqual({ now: new Date(now).toISOString(), mode: "virtual" })
      expect((await request(engine, "GET", "/sandbox/v2/portal/users/me", undefined, {}, key)).json.organization.id).toBe(`org_${name}`)
      const endpoints = (await request(engine, "GET", "/sandbox/v2/webhooks/endpoints", undefined, {}, key)).json.data
      expect(endpoints.map((e: { url: string }) => e.url)).toEqual([`https://${name}.example.com/hooks`])
      const sent = engine.deliveries.list()
      expect(sent.map((d) => d.event.id)).toEqual(results[i]!.events)
      expect(sent.every((d) => d.url === `https://${name}.example.com/hooks`)).toBe(true)
      expect(sent.map((d) => signedBy(d.body, d.headers["x-service-signature"]!, results[i]!.endpoint.secret)))
        .toEqual([{ t: startMs / 1000, valid: true }, { t: now / 1000, valid: true }])
      // Another engine's key is unknown here.
      const stranger = keysOf(all[(i + 1) % count]!.name).sandbox
      expect((await request(engine, "GET", "/sandbox/v2/portal/users/me", undefined, {}, stranger)).status).toBe(401)
    }))
  })
})

describe("an Effect host", () => {
  // One engine for the host's routes and for its own code: a layer is built once wherever one graph uses it.
  const engine = layerEmbedded({ clock: { mode: "virtual", start: START_MS }, seed, webhookTransport: "memory" })
  const server = HttpRouter.serve(layerRoutes(engine), { disableLogger: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
  )
  const host = Layer.mergeAll(server, engine, FetchHttpClient.layer)

  effectIt.effect("serves layerRoutes(layerEmbedded(...)) on a port, drives its clock and reads its deliveries", () =>
    Effect.gen(function*() {
      const address = (yield* HttpServer.HttpServer).address
      if (!("port" in address)) return expect.unreachable("a TCP server")
      const client = yield* makeClient({ baseUrl: `http://127.0.0.1:${address.port}/sandbox`, apiKey: keys.sandbox })
      expect((yield* client.portal.me()).organization.id).toBe("org_embed")
      const created = yield* client.webhooks.createEndpoint({ payload: { url: "https://receiver.example.com/effect" } })
      // A keyed write keeps its record in the engine's store and runs in its transaction, though the host's own
      // context holds neither: the same key replays the same answer.
      const rotate = client.webhooks.rotateSecret({ params: { id: WebhookEndpointId.make(created.id) } }).pipe(withIdempotencyKey("host-rotate"))
      const rotated = yield* rotate
      expect(yield* rotate).toEqual(rotated)
      const event = yield* client.simulate.emitEvent({ payload: { type: "customer.created" } })
      yield* advanceBy("1 hour")
      yield* flushWebhooks()
      // The routes serve the engine the host's own code moved.
      expect(yield* client.simulate.clock()).toEqual({ now: new Date(START_MS + 3_600_000).toISOString(), mode: "virtual" })
      const deliveries = yield* Deliveries
      expect(deliveries.list().map((d) => d.event.id)).toEqual([event.id])
    }).pipe(Effect.provide(host)))

  it("turns the routes layer into a web handler: HttpRouter.toWebHandler, with no context to pass and no cast", async () => {
    // The types are the test as much as the answer: `handler` takes a Request alone (a routes layer with an
    // untyped requirement would make it ask for a Context<unknown>), and the engine's only error is the seed's.
    const engine: Layer.Layer<EmbeddedServices, Problem.ApiError> = layerEmbedded({ seed })
    const web = HttpRouter.toWebHandler(layerRoutes(engine).pipe(Layer.provide(HttpServer.layerServices)), { disableLogger: true })
    const handler: (request: Request) => Promise<Response> = web.handler
    try {
      const answer = await handler(new Request("http://host/sandbox/v2/portal/users/me", { headers: { "x-api-key": keys.sandbox } }))
      expect(answer.status).toBe(200)
      expect(await answer.json()).toMatchObject({ organization: { id: "org_embed" } })
    } finally {
      await web.dispose()
    }
  })
})
