/**
 * The typed client against a running engine, through `engine.fetch` (no port): the Promise client and the Effect
 * client, the base address and the x-api-key header, idempotency keys, and problems as typed errors.
 */
import { CustomerId as CustomerIdSchema, WebhookEndpointId } from "@fos/contract"
import { createEngine, type Engine } from "@fos/http"
import { Effect, Layer } from "effect"
import { FetchHttpClient, type HttpClient } from "effect/http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createClient, makeClient, ProblemError, withIdempotencyKey } from "../src/Client.ts"

const sandboxKey = `ck_sandbox_${"c1".repeat(32)}`
const liveKey = `ck_live_${"c1".repeat(32)}`
const readOnlyKey = `ck_sandbox_${"c2".repeat(32)}`
const start = "2026-03-01T12:00:00.000Z"

let engine: Engine
beforeAll(async () => {
  engine = await createEngine({
    clock: { mode: "virtual", start },
    webhookTransport: "memory",
    seed: {
      organizations: [{
        id: "org_client",
        name: "Client Co",
        status: "active",
        users: [{ id: "usr_client", email: "c@client.test", role: "admin" }],
        apiKeys: [
          { key: sandboxKey, access: "read_write", createdBy: "usr_client" },
          { key: liveKey, access: "read_write", createdBy: "usr_client" },
          { key: readOnlyKey, access: "read_only", createdBy: "usr_client" }
        ]
      }]
    }
  })
})
afterAll(async () => engine?.close())

const sandbox = () => createClient({ baseUrl: "http://fos.test/sandbox", apiKey: sandboxKey, fetch: engine.fetch })

/** What a call rejected with. */
const rejection = (promise: Promise<unknown>) => promise.then(() => expect.unreachable("the call succeeded"), (e: unknown) => e)

describe("the Promise client", () => {
  it("sends the key to the base address and decodes the answer", async () => {
    const me = await sandbox().portal.me()
    expect(me.organization).toMatchObject({ id: "org_client", name: "Client Co" })
    expect(me.apiKey).toEqual({ access: "read_write", environment: "sandbox", last4: sandboxKey.slice(-4) })
    const live = await createClient({ baseUrl: "http://fos.test/live/", apiKey: liveKey, fetch: engine.fetch }).portal.me()
    expect(live.apiKey.environment).toBe("live")
  })

  it("encodes path parameters and the paging query", async () => {
    const client = sandbox()
    const created = []
    for (const n of [1, 2, 3]) {
      // A second apart: the virtual clock stands still otherwise, and equal times sort by id.
      await engine.clock.advance("1 second")
      created.push(await client.webhooks.createEndpoint({ payload: { url: `https://receiver.example.com/page/${n}` } }))
    }
    const all = await client.webhooks.listEndpoints({ query: { limit: 100 } })
    // Newest first by default; oldest first when asked; two at a time through the cursor.
    const newestFirst = all.data.map((e) => e.id)
    expect(newestFirst.slice(0, 3)).toEqual(created.map((e) => e.id).reverse())
    const seen: Array<string> = []
    let cursor: string | null = null
    do {
      const page: Awaited<ReturnType<typeof client.webhooks.listEndpoints>> = await client.webhooks.listEndpoints({
        query: { limit: 2, sortOrder: "asc", ...(cursor === null ? {} : { cursor }) }
      })
      expect(page.data.length).toBeLessThanOrEqual(2)
      seen.push(...page.data.map((e) => e.id))
      cursor = page.meta.nextCursor
    } while (cursor !== null)
    expect(seen).toEqual([...newestFirst].reverse())
    // An id read from one answer goes into the next call as it is.
    const one = await client.webhooks.getEndpoint({ params: { id: created[1]!.id } })
    expect(one.url).toBe("https://receiver.example.com/page/2")
    // A query value out of range fails the endpoint's own schema before anything is sent.
    let sent = 0
    const counting = createClient({
      baseUrl: "http://fos.test/sandbox",
      apiKey: sandboxKey,
      fetch: (input, init) => {
        sent++
        return engine.fetch(input, init)
      }
    })
    const tooMany = await rejection(counting.webhooks.listEndpoints({ query: { limit: 101 } }))
    // Refused before it is sent, with the problem the server would answer (a pointer at the query's member).
    expect(tooMany).toBeInstanceOf(ProblemError)
    expect((tooMany as ProblemError).problem).toMatchObject({ status: 400, type: "VALIDATION_ERROR" })
    expect(JSON.stringify((tooMany as ProblemError).problem)).toContain("limit")
    expect(sent).toBe(0)
  })

  it("rejects with the problem of an error answer", async () => {
    const client = sandbox()
    const missing = await rejection(client.customers.get({ params: { customerId: "cus_nobody" } }))
    expect(missing).toBeInstanceOf(ProblemError)
    const problem = (missing as ProblemError).problem
    expect(problem).toMatchObject({
      type: "CUSTOMER_NOT_FOUND",
      status: 404,
      instance: "/sandbox/v2/customers/cus_nobody",
      timestamp: new Date(await engine.clock.now()).toISOString()
    })
    expect(problem.correlationId).toMatch(/^[0-9a-f]{32}$/)
    expect((missing as ProblemError).status).toBe(404)
    // A key of the other environment, and a read-only key writing.
    const wrongBase = await rejection(createClient({ baseUrl: "http://fos.test/live", apiKey: sandboxKey, fetch: engine.fetch }).portal.me())
    expect((wrongBase as ProblemError).type).toBe("API_KEY_INVALID")
    const readOnly = createClient({ baseUrl: "http://fos.test/sandbox", apiKey: readOnlyKey, fetch: engine.fetch })
    const refused = await rejection(readOnly.webhooks.createEndpoint({ payload: { url: "https://receiver.example.com/a" } }))
    expect((refused as ProblemError).problem).toMatchObject({ type: "API_KEY_READ_ONLY", status: 403 })
  })

  it("rejects every way with an Error whose message says what went wrong", async () => {
    const missing = await rejection(sandbox().customers.get({ params: { customerId: "cus_nobody" } }))
    expect(String(missing)).toBe("ProblemError: 404 CUSTOMER_NOT_FOUND: No customer with this id exists in this organization and environment.")
    // An answer that is no problem of fos's (a proxy's), and no answer at all.
    const proxied = createClient({ baseUrl: "http://fos.test/sandbox", fetch: async () => new Response("bad gateway", { status: 502, headers: { "content-type": "text/plain" } }) })
    const gateway = await rejection(proxied.portal.me())
    expect(gateway).toBeInstanceOf(Error)
    expect((gateway as Error).message).toContain("502")
    const unreachable = createClient({ baseUrl: "http://fos.test/sandbox", fetch: () => Promise.reject(new TypeError("fetch failed")) })
    const lost = await rejection(unreachable.portal.me())
    expect(lost).toBeInstanceOf(Error)
    expect((lost as Error).message).toMatch(/Transport error/)
  })

  it("sends no x-api-key when given none", async () => {
    let sentKey: string | null = "unset"
    const keyless = createClient({
      baseUrl: "http://fos.test/sandbox",
      fetch: (input, init) => {
        sentKey = new Headers(init?.headers).get("x-api-key")
        return engine.fetch(input, init)
      }
    })
    const refused = await rejection(keyless.portal.me())
    expect(sentKey).toBeNull()
    expect((refused as ProblemError).type).toBe("API_KEY_MISSING")
  })

  it("sends an idempotency key per call: required on rotate, replayed on a repeat", async () => {
    const client = sandbox()
    const endpoint = await client.webhooks.createEndpoint({ payload: { url: "https://receiver.example.com/rotate" } })
    expect(endpoint.secret).toMatch(/^whsec_/)
    const without = await rejection(client.webhooks.rotateSecret({ params: { id: endpoint.id } }))
    expect((without as ProblemError).type).toBe("IDEMPOTENCY_KEY_REQUIRED")
    const rotated = await client.webhooks.rotateSecret({ params: { id: endpoint.id } }, { idempotencyKey: "rotate-once" })
    expect(rotated.secret).not.toBe(endpoint.secret)
    const replayed = await client.webhooks.rotateSecret({ params: { id: endpoint.id } }, { idempotencyKey: "rotate-once" })
    expect(replayed.secret).toBe(rotated.secret)
  })

  it("drives the sandbox: emits an event and advances the clock", async () => {
    const client = sandbox()
    await client.webhooks.createEndpoint({ payload: { url: "https://receiver.example.com/events" } })
    const event = await client.simulate.emitEvent({ payload: { type: "order.created" } })
    expect(event.type).toBe("order.created")
    // Sends run in the background: the flush answers once the event's attempts are recorded.
    const flushed = await client.simulate.flushWebhooks()
    expect(flushed.complete).toBe(true)
    const ours = flushed.deliveries.filter((d) => d.eventId === event.id)
    expect(ours.length).toBeGreaterThan(0)
    expect(ours.every((d) => d.status === "succeeded")).toBe(true)
    expect(engine.deliveries.list().some((d) => d.event.id === event.id)).toBe(true)
    const before = await engine.clock.now()
    expect(await client.simulate.advanceClock({ payload: { seconds: 90 } })).toMatchObject({ now: new Date(before + 90_000).toISOString(), mode: "virtual" })
  })

  it("refuses a base address that names no environment", () => {
    expect(() => createClient({ baseUrl: "http://fos.test", apiKey: sandboxKey })).toThrow(/\/sandbox or \/live/)
    expect(() => createClient({ baseUrl: "http://fos.test/sandbox/v2", apiKey: sandboxKey })).toThrow(TypeError)
  })
})

describe("the Effect client", () => {
  /** Runs with an HttpClient whose fetch is the engine's. */
  const run = <A, E>(effect: Effect.Effect<A, E, HttpClient.HttpClient>) =>
    Effect.runPromise(effect.pipe(
      Effect.provide(FetchHttpClient.layer.pipe(Layer.provide(Layer.succeed(FetchHttpClient.Fetch, engine.fetch as typeof fetch))))
    ))

  it("calls endpoints as Effects; a problem is a typed failure; withIdempotencyKey sets the header", async () => {
    const result = await run(Effect.gen(function*() {
      const client = yield* makeClient({ baseUrl: "http://fos.test/sandbox", apiKey: sandboxKey })
      const me = yield* client.portal.me()
      const missing = yield* Effect.flip(client.customers.get({ params: { customerId: CustomerIdSchema.make("cus_nobody") } }))
      const endpoint = yield* client.webhooks.createEndpoint({ payload: { url: "https://receiver.example.com/effect" } })
      // The Effect client takes ids as their branded types: decode one read from an answer.
      const id = WebhookEndpointId.make(endpoint.id)
      const unkeyed = yield* Effect.flip(client.webhooks.rotateSecret({ params: { id } }))
      const rotated = yield* client.webhooks.rotateSecret({ params: { id } }).pipe(withIdempotencyKey("effect-rotate"))
      return { me, missing, unkeyed, rotated, endpoint }
    }))
    expect(result.me.organization.id).toBe("org_client")
    expect(result.missing).toMatchObject({ type: "CUSTOMER_NOT_FOUND", status: 404 })
    expect(result.unkeyed).toMatchObject({ type: "IDEMPOTENCY_KEY_REQUIRED", status: 400 })
    expect(result.rotated.secret).toMatch(/^whsec_/)
    expect(result.rotated.secret).not.toBe(result.endpoint.secret)
  })
})
