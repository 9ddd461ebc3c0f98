/**
 * A host that authenticates its own users embeds fos on its terms (docs/embedding.md, "The host's identity"): a
 * plain node:http host, with routes of its own and fos's under `/fos`, maps its users to two fos organizations and
 * passes each request's caller to `engine.fetch` beside the request, with no API key anywhere. Isolation, read-only
 * access, the environments, idempotency, rate limits and the request log hold as they do for a key.
 */
import { once } from "node:events"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Readable } from "node:stream"
import { NodeHttpServer } from "@effect/platform-node"
import { it as effectIt } from "@effect/vitest"
import { makeClient, ProblemError } from "@fos/client"
import { Auth, Operator, Problem, Timers } from "@fos/core"
import { createEngine, type EmbeddedServices, type Engine, layerEmbedded, layerRoutes } from "@fos/http"
import { Effect, Layer } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest, HttpRouter, HttpServer, type HttpServerRequest } from "effect/http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { followLinks } from "./links.ts"
import { orgSeed, seedOf, START_MS } from "./support.ts"

const operatorToken = "host-operator-token"

/** The host's own users, as its own sign-in knows them, and the fos caller each one is. */
interface HostUser {
  readonly caller: Auth.HostCaller
}

/**
 * The host: its own route `/hello`, and fos mounted at `/fos` (the engine's `basePath`), to which it forwards the
 * requests under `/fos` as they came. Its users sign in with its own
 * header (a stand-in for its session); it names the caller to fos beside the request and passes the client's
 * address its own proxy reported (`x-host-client-address`), or the socket's.
 */
const startHost = async (engine: Engine, users: ReadonlyMap<string, HostUser>): Promise<{ server: Server; origin: string }> => {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      // The origin the host was reached at: fos makes its absolute links (a problem's `docs`) on it.
      const url = new URL(req.url ?? "/", `http://${req.headers.host ?? "host.internal"}`)
      if (url.pathname === "/hello") {
        res.writeHead(200, { "content-type": "text/plain" }).end("the host's own route")
        return
      }
      if (!url.pathname.startsWith("/fos/")) {
        res.writeHead(404).end()
        return
      }
      const user = users.get(String(req.headers["x-host-user"] ?? ""))
      const chunks: Array<Buffer> = []
      for await (const chunk of req) chunks.push(chunk as Buffer)
      const headers = new Headers()
      for (const [name, value] of Object.entries(req.headers)) {
        // The host's own sign-in stays the host's.
        if (value === undefined || name === "x-host-user" || name === "host") continue
        headers.set(name, Array.isArray(value) ? value.join(", ") : value)
      }
      const body = chunks.length === 0 ? undefined : Buffer.concat(chunks)
      const request = new Request(url, {
        method: req.method ?? "GET",
        headers,
        ...(body === undefined ? {} : { body })
      })
      const clientAddress = String(req.headers["x-host-client-address"] ?? req.socket.remoteAddress ?? "127.0.0.1")
      const response = await engine.fetch(request, { ...(user === undefined ? {} : { caller: user.caller }), clientAddress })
      res.writeHead(response.status, Object.fromEntries(response.headers))
      // Streamed as it comes: the live stream never ends by itself.
      if (response.body === null) res.end()
      else Readable.fromWeb(response.body as never).on("error", () => res.destroy()).pipe(res)
    })().catch((error: unknown) => {
      res.writeHead(500).end(String(error))
    })
  })
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly json: any
}

const send = async (origin: string, method: string, path: string, options: { user?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Reply> => {
  const response = await fetch(`${origin}${path}`, {
    method,
    headers: {
      ...(options.user === undefined ? {} : { "x-host-user": options.user }),
      ...(options.body === undefined ? {} : { "content-type": "application/json" }),
      ...options.headers
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
  })
  const text = await response.text()
  return { status: response.status, headers: response.headers, json: text === "" ? undefined : JSON.parse(text) }
}

describe("a node:http host that names its users' callers", () => {
  let engine: Engine
  let host: { server: Server; origin: string }
  let acme: string
  let globex: string
  const users = new Map<string, HostUser>()

  beforeAll(async () => {
    engine = await createEngine({
      clock: { mode: "virtual", start: START_MS },
      realClock: Timers.makeVirtualClock(START_MS),
      webhookTransport: "memory",
      operatorToken,
      basePath: "/fos",
      // The host limits its own users; fos does not.
      rateLimits: false
    })
    // Two organizations and their users, with no key minted.
    acme = (await engine.organizations.create({ name: "Acme", status: "active" })).id
    globex = (await engine.organizations.create({ name: "Globex", status: "active" })).id
    const alice = await engine.users.create({ organizationId: acme, email: "alice@acme.example", role: "admin" })
    const bob = await engine.users.create({ organizationId: globex, email: "bob@globex.example", role: "admin" })
    users.set("alice", { caller: { organizationId: acme, environment: "sandbox", access: "read_write", userId: alice.id } })
    users.set("alice-live", { caller: { organizationId: acme, environment: "live", access: "read_write", userId: alice.id } })
    users.set("auditor", { caller: { organizationId: acme, environment: "sandbox", access: "read_only" } })
    users.set("bob", { caller: { organizationId: globex, environment: "sandbox", access: "read_write", userId: bob.id } })
    users.set("stranger", { caller: { organizationId: "org_nosuchorganization", environment: "sandbox", access: "read_write" } })
    users.set("impostor", { caller: { organizationId: globex, environment: "sandbox", access: "read_write", userId: alice.id } })
    host = await startHost(engine, users)
  })
  afterAll(async () => {
    host.server.close()
    await engine.close()
  })

  it("serves its own routes beside fos's", async () => {
    const own = await fetch(`${host.origin}/hello`)
    expect(await own.text()).toBe("the host's own route")
    const me = await send(host.origin, "GET", "/fos/sandbox/v2/portal/users/me", { user: "alice" })
    expect(me.status).toBe(200)
    expect(me.json).toMatchObject({
      user: { email: "alice@acme.example", role: "admin" },
      organization: { id: acme, name: "Acme" },
      apiKey: { access: "read_write", environment: "sandbox", last4: "" }
    })
    expect(me.headers.get("x-ratelimit-limit")).not.toBeNull()
  })

  it("keeps the tenants apart: one's resources are 404 to the other", async () => {
    const created = await send(host.origin, "POST", "/fos/sandbox/v2/webhooks/endpoints", { user: "alice", body: { url: "https://hooks.acme.example/fos" } })
    expect(created.status).toBe(201)
    const theirs = await send(host.origin, "GET", `/fos/sandbox/v2/webhooks/endpoints/${created.json.id}`, { user: "bob" })
    expect(theirs.status).toBe(404)
    expect(theirs.json.type).toBe("WEBHOOK_ENDPOINT_NOT_FOUND")
    expect((await send(host.origin, "GET", "/fos/sandbox/v2/webhooks/endpoints", { user: "bob" })).json.data).toEqual([])
    const own = await send(host.origin, "GET", `/fos/sandbox/v2/webhooks/endpoints/${created.json.id}`, { user: "alice" })
    expect(own.status).toBe(200)
  })

  it("refuses a read-only caller's write with the spec's API_KEY_READ_ONLY, and serves its reads", async () => {
    const write = await send(host.origin, "POST", "/fos/sandbox/v2/webhooks/endpoints", { user: "auditor", body: { url: "https://hooks.acme.example/ro" } })
    expect(write.status).toBe(403)
    expect(write.json.type).toBe("API_KEY_READ_ONLY")
    expect((await send(host.origin, "GET", "/fos/sandbox/v2/webhooks/endpoints", { user: "auditor" })).status).toBe(200)
  })

  it("refuses a caller on another environment's routes, as a key of the other environment is", async () => {
    const live = await send(host.origin, "GET", "/fos/live/v2/webhooks/endpoints", { user: "alice" })
    expect(live.status).toBe(401)
    expect(live.json.type).toBe("API_KEY_INVALID")
    // The same user, named for live, reaches live.
    expect((await send(host.origin, "GET", "/fos/live/v2/webhooks/endpoints", { user: "alice-live" })).status).toBe(200)
  })

  it("refuses a caller naming an unknown organization, or a user of another one, and a suspended organization", async () => {
    const stranger = await send(host.origin, "GET", "/fos/sandbox/v2/webhooks/endpoints", { user: "stranger" })
    expect([stranger.status, stranger.json.type]).toEqual([401, "API_KEY_INVALID"])
    const impostor = await send(host.origin, "GET", "/fos/sandbox/v2/webhooks/endpoints", { user: "impostor" })
    expect([impostor.status, impostor.json.type]).toEqual([401, "API_KEY_INVALID"])
    const suspended = await engine.organizations.create({ name: "Initech", status: "active" })
    users.set("peter", { caller: { organizationId: suspended.id, environment: "sandbox", access: "read_write" } })
    expect((await send(host.origin, "GET", "/fos/sandbox/v2/webhooks/endpoints", { user: "peter" })).status).toBe(200)
    await engine.organizations.update(suspended.id, { status: "suspended" })
    const refused = await send(host.origin, "GET", "/fos/sandbox/v2/webhooks/endpoints", { user: "peter" })
    expect([refused.status, refused.json.type]).toEqual([403, "ORGANIZATION_ACCESS_SUSPENDED"])
  })

  it("takes no caller from the network: a request the host names none for needs a key", async () => {
    const anonymous = await send(host.origin, "GET", "/fos/sandbox/v2/webhooks/endpoints", {
      headers: { "x-fos-caller": JSON.stringify(users.get("alice")!.caller), caller: JSON.stringify(users.get("alice")!.caller) }
    })
    expect([anonymous.status, anonymous.json.type]).toEqual([401, "API_KEY_MISSING"])
  })

  it("replays an idempotent write, as for a key", async () => {
    const body = { url: "https://hooks.globex.example/once" }
    const first = await send(host.origin, "POST", "/fos/sandbox/v2/webhooks/endpoints", { user: "bob", body, headers: { "idempotency-key": "once-1" } })
    const second = await send(host.origin, "POST", "/fos/sandbox/v2/webhooks/endpoints", { user: "bob", body, headers: { "idempotency-key": "once-1" } })
    expect(first.status).toBe(201)
    expect(second.status).toBe(201)
    expect(second.headers.get("idempotency-replayed")).toBe("true")
    expect(second.json.id).toBe(first.json.id)
    const listed = await send(host.origin, "GET", "/fos/sandbox/v2/webhooks/endpoints", { user: "bob" })
    expect(listed.json.data.filter((e: { url: string }) => e.url === body.url)).toHaveLength(1)
  })

  it("has no API key in its store", async () => {
    for (const organizationId of [acme, globex]) {
      const keys = await engine.fetch(`http://fos/fos/operator/organizations/${organizationId}/api-keys`, { headers: { authorization: `Bearer ${operatorToken}` } })
      expect(keys.status).toBe(200)
      expect((await keys.json()).data).toEqual([])
    }
  })

  it("hands out only links that resolve under /fos, with the callers the host names and no key", async () => {
    const failures = await followLinks({
      origin: host.origin,
      base: "/fos",
      callerHeaders: (env) => ({ "x-host-user": env === "sandbox" ? "alice" : "alice-live" }),
      operatorToken,
      docsPage: false
    })
    expect(failures).toEqual([])
  })

  it("with rate limits off, 1,000 sequential GETs of one tenant meet no 429", async () => {
    const statuses = new Set<number>()
    for (let i = 0; i < 1_000; i++) statuses.add((await send(host.origin, "GET", "/fos/sandbox/v2/webhooks/endpoints", { user: "bob" })).status)
    expect([...statuses]).toEqual([200])
  })

  it("logs each request with the client's address the host gave", async () => {
    await send(host.origin, "GET", "/fos/sandbox/v2/webhooks/endpoints?limit=1", { user: "alice", headers: { "x-host-client-address": "203.0.113.9" } })
    await send(host.origin, "GET", "/fos/sandbox/v2/portal/users/me", { user: "alice", headers: { "x-host-client-address": "2001:db8::7" } })
    // The socket's address when the host's proxy reported none.
    const recent = await send(host.origin, "GET", "/fos/sandbox/v2/simulate/requests?limit=2", { user: "alice" })
    expect(recent.status).toBe(200)
    expect(recent.json.data.map((r: { path: string; clientAddress: string }) => [r.path, r.clientAddress])).toEqual([
      ["/fos/sandbox/v2/portal/users/me", "2001:db8::7"],
      ["/fos/sandbox/v2/webhooks/endpoints", "203.0.113.9"]
    ])
    const own = await send(host.origin, "GET", "/fos/sandbox/v2/simulate/requests?limit=1", { user: "alice" })
    expect(own.json.data[0]).toMatchObject({ path: "/fos/sandbox/v2/simulate/requests", clientAddress: "127.0.0.1" })
  })
})

describe("a host's caller in the engine's own APIs", () => {
  let engine: Engine
  let acme: string
  let userId: string
  beforeAll(async () => {
    engine = await createEngine({ clock: { mode: "virtual", start: START_MS }, realClock: Timers.makeVirtualClock(START_MS) })
    acme = (await engine.organizations.create({ name: "Acme", status: "active" })).id
    userId = (await engine.users.create({ organizationId: acme, email: "dev@acme.example", role: "developer" })).id
  })
  afterAll(() => engine.close())

  it("engine.client({ caller }) is the typed client bound to the caller, with no key", async () => {
    const client = engine.client({ caller: { organizationId: acme, environment: "sandbox", access: "read_write", userId } })
    const me = await client.portal.me()
    expect([me.organization.id, me.user.id, me.apiKey.access]).toEqual([acme, userId, "read_write"])
    const created = await client.webhooks.createEndpoint({ payload: { url: "https://hooks.acme.example/client" } })
    expect((await client.webhooks.listEndpoints({ query: {} })).data.map((e) => e.id)).toEqual([created.id])
  })

  it("a client's problem rejects with an Error that says the code and detail and carries the problem", async () => {
    const client = engine.client({ caller: { organizationId: acme, environment: "sandbox", access: "read_only" } })
    const error = await client.webhooks.createEndpoint({ payload: { url: "https://hooks.acme.example/ro" } }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ProblemError)
    expect(error).toBeInstanceOf(Error)
    expect((error as ProblemError).message).toBe("403 API_KEY_READ_ONLY: A read-only key may use GET, HEAD and OPTIONS only.")
    expect(String(error)).toBe("ProblemError: 403 API_KEY_READ_ONLY: A read-only key may use GET, HEAD and OPTIONS only.")
    expect((error as ProblemError).problem).toMatchObject({ type: "API_KEY_READ_ONLY", status: 403, instance: "/sandbox/v2/webhooks/endpoints" })
  })

  it("engine.run and the Promise APIs reject with an ApiError whose message is the code and detail", async () => {
    const error = await engine.run(Operator.getOrganization("org_missing")).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Problem.ApiError)
    expect(error).toBeInstanceOf(Error)
    expect((error as Problem.ApiError).message).toBe("NOT_FOUND: No organization org_missing.")
    expect(String(error)).toBe("ApiError: NOT_FOUND: No organization org_missing.")
    expect((error as Problem.ApiError).problem).toMatchObject({ type: "NOT_FOUND", status: 404, detail: "No organization org_missing." })
    const user = await engine.users.create({ organizationId: acme, email: "not an address", role: "developer" }).catch((e: unknown) => e)
    expect(String(user)).toBe("ApiError: VALIDATION_ERROR: The email address is not valid.")
  })

  it("engine.fetch rejects a caller or an address that is not one with a TypeError, before anything runs", async () => {
    const url = "http://fos/sandbox/v2/portal/users/me"
    await expect(engine.fetch(url, { caller: { organizationId: acme, environment: "staging", access: "read_write" } as never })).rejects.toThrow(
      /engine\.fetch: caller\.environment: "sandbox" or "live"/
    )
    await expect(engine.fetch(url, { caller: { organizationId: acme, environment: "sandbox", access: "admin" } as never })).rejects.toThrow(TypeError)
    await expect(engine.fetch(url, { clientAddress: "not-an-address" })).rejects.toThrow(/clientAddress/)
  })

  it("a caller without a user reads its organization but has no user to show", async () => {
    const response = await engine.fetch("http://fos/sandbox/v2/portal/users/me", { caller: { organizationId: acme, environment: "sandbox", access: "read_only" } })
    expect(response.status).toBe(404)
    expect((await response.json()).type).toBe("USER_NOT_FOUND")
  })

  it("a removed user is refused, as the keys it made are", async () => {
    const admin = await engine.users.create({ organizationId: acme, email: "admin@acme.example", role: "admin" })
    const leaving = await engine.users.create({ organizationId: acme, email: "leaving@acme.example", role: "developer" })
    const caller = { organizationId: acme, environment: "sandbox", access: "read_write", userId: leaving.id } as const
    expect((await engine.fetch("http://fos/sandbox/v2/portal/users/me", { caller })).status).toBe(200)
    await engine.users.remove(leaving.id)
    const refused = await engine.fetch("http://fos/sandbox/v2/portal/users/me", { caller })
    expect(refused.status).toBe(401)
    expect((await refused.json()).type).toBe("API_KEY_INVALID")
    expect((await engine.users.list(acme)).map((u) => u.id)).toContain(admin.id)
  })
})

describe("rate limits a host sets", () => {
  let engine: Engine
  beforeAll(async () => {
    // Real time stands still: no bucket refills during the test.
    engine = await createEngine({ clock: { mode: "virtual", start: START_MS }, realClock: Timers.makeVirtualClock(START_MS) })
  })
  afterAll(() => engine.close())

  it("per organization: each organization's own limit, apart from the others'", async () => {
    const tight = (await engine.organizations.create({ name: "Tight", status: "active", rateLimit: { sustainedPerSecond: 1, burst: 3 } })).id
    const roomy = (await engine.organizations.create({ name: "Roomy", status: "active" })).id
    const get = (organizationId: string) =>
      engine.fetch("http://fos/sandbox/v2/webhooks/endpoints", { caller: { organizationId, environment: "sandbox", access: "read_only" } })
    const statuses: Array<number> = []
    for (let i = 0; i < 4; i++) statuses.push((await get(tight)).status)
    expect(statuses).toEqual([200, 200, 200, 429])
    const roomyAnswer = await get(roomy)
    expect(roomyAnswer.status).toBe(200)
    expect(roomyAnswer.headers.get("x-ratelimit-limit")).toBe("400")
    // A limit changed later holds from the next request.
    await engine.organizations.update(roomy, { rateLimit: { sustainedPerSecond: 1, burst: 2 } })
    const after: Array<[number, string | null]> = []
    for (let i = 0; i < 3; i++) {
      const answer = await get(roomy)
      after.push([answer.status, answer.headers.get("x-ratelimit-limit")])
    }
    expect(after).toEqual([[200, "2"], [200, "2"], [429, "2"]])
  })

  it("counts the per-address buckets by the client's address the host gave", async () => {
    // Without a caller or a key: the per-address bucket for unauthenticated requests (20 at once).
    const anonymous = (clientAddress: string) => engine.fetch("http://fos/sandbox/v2/webhooks/endpoints", { clientAddress })
    const statuses = new Set<number>()
    for (let i = 0; i < 20; i++) statuses.add((await anonymous("203.0.113.50")).status)
    expect([...statuses]).toEqual([401])
    expect((await anonymous("203.0.113.50")).status).toBe(429)
    expect((await anonymous("203.0.113.51")).status).toBe(401)
  })

  it("checks a key's allowlist against the client's address the host gave", async () => {
    const organizationId = (await engine.organizations.create({ name: "Keyed", status: "active" })).id
    const admin = await engine.users.create({ organizationId, email: "admin@keyed.example", role: "admin" })
    const { key } = await engine.run(Operator.createApiKey({ organizationId, environment: "sandbox", createdBy: admin.id, ipAllowlist: ["203.0.113.0/24"] }))
    const get = (clientAddress?: string) =>
      engine.fetch("http://fos/sandbox/v2/webhooks/endpoints", { headers: { "x-api-key": key }, ...(clientAddress === undefined ? {} : { clientAddress }) })
    expect((await get("203.0.113.8")).status).toBe(200)
    const outside = await get("198.51.100.8")
    expect([outside.status, (await outside.json()).type]).toEqual([403, "API_KEY_IP_NOT_ALLOWED"])
    expect((await get()).status).toBe(403)
  })
})

describe("an Effect host that names its users' callers", () => {
  // Organizations and users from the seed, and no key.
  const engine = layerEmbedded({ clock: { mode: "virtual", start: START_MS }, seed: seedOf(orgSeed("effecthost", { keys: [] })) as never })
  const caller: Auth.HostCaller = { organizationId: "org_effecthost", environment: "sandbox", access: "read_write", userId: "usr_effecthostadmin" }
  // The host's own sign-in, read where the host serves the routes; a request it does not vouch for has no caller.
  const identify = (request: HttpServerRequest.HttpServerRequest) => (request.headers["x-host-session"] === "ada" ? { caller, clientAddress: "192.0.2.10" } : undefined)
  const server = HttpRouter.serve(layerRoutes(engine, { identify }), { disableLogger: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
  )
  const host = Layer.mergeAll(server, engine, FetchHttpClient.layer) as Layer.Layer<HttpServer.HttpServer | EmbeddedServices | HttpClient.HttpClient, unknown>

  effectIt.effect("layerRoutes(engine, { identify }) admits the host's caller with no key", () =>
    Effect.gen(function*() {
      const address = (yield* HttpServer.HttpServer).address
      if (!("port" in address)) return expect.unreachable("a TCP server")
      const signedIn = HttpClient.mapRequest(yield* HttpClient.HttpClient, HttpClientRequest.setHeader("x-host-session", "ada"))
      const client = yield* makeClient({ baseUrl: `http://127.0.0.1:${address.port}/sandbox` }).pipe(Effect.provideService(HttpClient.HttpClient, signedIn))
      const me = yield* client.portal.me()
      expect([me.organization.id, me.user.id, me.apiKey.last4]).toEqual(["org_effecthost", "usr_effecthostadmin", ""])
      const recent = yield* client.inspect.listRecentRequests({ query: {} })
      expect(recent.data[0]).toMatchObject({ path: "/sandbox/v2/portal/users/me", clientAddress: "192.0.2.10" })
      const anonymous = yield* makeClient({ baseUrl: `http://127.0.0.1:${address.port}/sandbox` })
      const refused = yield* Effect.flip(anonymous.portal.me())
      expect(refused).toMatchObject({ type: "API_KEY_MISSING", status: 401 })
    }).pipe(Effect.provide(host)))
})
