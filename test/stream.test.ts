/**
 * What the inspector and `fos tail` read live (docs/inspect.md, "Recent requests", "The live stream" and "A
 * resource's actions"): an organization's recent requests, newest first and paged; the server-sent events of its
 * sandbox (events and requests in order, a resume from Last-Event-ID, nothing of another organization, the bound on
 * open streams, a closed connection freeing its slot), through `engine.fetch` and through a real server; and the
 * actions a resource's state table allows.
 */
import { rmSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Timers } from "@fos/core"
import { createEngine, type Engine, LiveFeed } from "@fos/http"
import { layerPgliteStore } from "@fos/sql"
import { describe, expect, it } from "vitest"
import { approvedCustomer, type Client, clientOf, deuDocuments, deuSubmission, idem, twoOrganizationsPerTest } from "./onboardingFixtures.ts"
import { expectProblem, keysOf, makeEngine, orgSeed, seedOf, START_MS } from "./support.ts"
import { freshPgliteDirectory } from "../adapters/sql/test/pgliteDirectory.ts"

let engine: Engine
let acme: Client
let rival: Client

twoOrganizationsPerTest({ set: (world) => ({ engine, acme, rival } = world), current: () => engine, checkCatalog: false })

interface Message {
  readonly event: string | undefined
  readonly id: string | undefined
  readonly data: any
}

/** Reads server-sent events from a response body, one message at a time (comment-only blocks skipped). */
const sseOf = (response: Response) => {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  const next = async (): Promise<Message> => {
    while (true) {
      const end = buffer.indexOf("\n\n")
      if (end >= 0) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const fields = block.split("\n").filter((line) => !line.startsWith(":") && !line.startsWith("retry:"))
        if (fields.length === 0) continue
        const field = (name: string) => fields.find((line) => line.startsWith(`${name}: `))?.slice(name.length + 2)
        const data = field("data")
        return { event: field("event"), id: field("id"), data: data === undefined ? undefined : JSON.parse(data) }
      }
      const { value, done } = await reader.read()
      if (done) throw new Error("the stream ended")
      buffer += decoder.decode(value, { stream: true })
    }
  }
  /** The next messages until `count` of them are of `event` (the others are kept in `seen`). */
  const take = async (event: string, count: number) => {
    const got: Array<Message> = []
    while (got.length < count) {
      const message = await next()
      if (message.event === event) got.push(message)
    }
    return got
  }
  return { next, take, close: () => reader.cancel() }
}

const open = (fetch: (request: Request) => Promise<Response>, origin: string, key: string, query = "", headers: Record<string, string> = {}) =>
  fetch(new Request(`${origin}/sandbox/v2/simulate/stream${query}`, { headers: { "x-api-key": key, ...headers } }))

const emit = (client: Client, type = "customer.created") => client.call("POST", "/v2/simulate/events", { type })

describe("the recent requests", () => {
  it("list the caller's organization's requests newest first, paged, with their operation and JSON body but no header or query", async () => {
    await acme.call("GET", "/v2/customers?limit=5")
    const missing = await acme.call("GET", "/v2/customers/cus_000000000000000000000000")
    await acme.call("POST", "/v2/simulate/events", { type: "customer.created" })
    await rival.call("GET", "/v2/customers")
    const first = await acme.call("GET", "/v2/simulate/requests?limit=2")
    expect(first.status, first.text).toBe(200)
    expect(first.json.data).toEqual([
      {
        time: expect.stringMatching(/Z$/),
        method: "POST",
        path: "/sandbox/v2/simulate/events",
        status: 201,
        durationMs: expect.any(Number),
        correlationId: expect.any(String),
        clientAddress: "127.0.0.1",
        answeredBy: expect.stringMatching(/^[0-9a-f]{16}$/),
        operationId: "simulate.emitEvent",
        body: { type: "customer.created" },
        bodyBytes: JSON.stringify({ type: "customer.created" }).length
      },
      {
        time: expect.stringMatching(/Z$/),
        method: "GET",
        path: "/sandbox/v2/customers/cus_000000000000000000000000",
        status: 404,
        type: "CUSTOMER_NOT_FOUND",
        durationMs: expect.any(Number),
        correlationId: missing.headers.get("x-correlation-id"),
        clientAddress: "127.0.0.1",
        answeredBy: expect.stringMatching(/^[0-9a-f]{16}$/),
        operationId: "customers.get"
      }
    ])
    expect(first.json.meta).toEqual({ mode: "cursor", nextCursor: expect.any(String), previousCursor: null, total: 3 })
    const second = await acme.call("GET", `/v2/simulate/requests?limit=2&cursor=${first.json.meta.nextCursor}`)
    expect(second.json.data.map((r: any) => r.path)).toEqual(["/sandbox/v2/customers"])
    expect(second.json.meta.nextCursor).toBeNull()
    // The rival's list holds its own request (and this list call), never acme's; acme's cursor is not its list's.
    const theirs = await rival.call("GET", "/v2/simulate/requests")
    expect(theirs.json.data.map((r: any) => r.path)).toEqual(["/sandbox/v2/customers"])
    const instance = "/sandbox/v2/simulate/requests"
    expectProblem(await rival.call("GET", `/v2/simulate/requests?cursor=${first.json.meta.nextCursor}`), { status: 400, type: "INVALID_CURSOR", instance })
    expectProblem(await acme.call("GET", "/v2/simulate/requests?limit=0"), { status: 400, type: "VALIDATION_ERROR", instance })
  })

  it("keep the last 500 per organization, whatever the engine's request log option", async () => {
    // A bucket large enough for the calls (real time stands still in these engines, so it never refills).
    await engine.close()
    engine = await makeEngine(seedOf(orgSeed("acme", { rateLimit: { sustainedPerSecond: 1000, burst: 1000 } } as never)))
    acme = clientOf(engine.fetch, "http://fos", keysOf("acme").sandbox)
    for (let i = 0; i < LiveFeed.recentRequestsPerScope + 5; i++) await acme.call("GET", "/v2/simulate/clock")
    const page = await acme.call("GET", "/v2/simulate/requests?limit=100")
    expect(page.json.meta.total).toBe(LiveFeed.recentRequestsPerScope)
    let cursor: string | null = page.json.meta.nextCursor
    let seen = page.json.data.length
    let pages = 1
    while (cursor !== null) {
      const next = await acme.call("GET", `/v2/simulate/requests?limit=100&cursor=${cursor}`)
      seen += next.json.data.length
      cursor = next.json.meta.nextCursor
      pages++
    }
    // Each page read is a request too: it pushes the oldest entry out of the ring while the walk goes on.
    expect(seen).toBe(LiveFeed.recentRequestsPerScope - (pages - 1))
  })

  it("are sandbox-only", async () => {
    const live = clientOf(engine.fetch, "http://fos", keysOf("acme").live, "live")
    expectProblem(await live.call("GET", "/v2/simulate/requests"), { status: 404, type: "NOT_FOUND", instance: "/live/v2/simulate/requests" })
  })
})

describe("the live stream through engine.fetch", () => {
  it("pushes the organization's events and requests in order, never another organization's", async () => {
    const response = await open(engine.fetch, "http://fos", keysOf("acme").sandbox)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/)
    const stream = sseOf(response)
    await emit(rival, "customer.restricted")
    const emitted = await emit(acme)
    const customerId = await approvedCustomer(acme)
    const first = await stream.next()
    // The rival's request and event never appear: the first message is acme's own request.
    expect(first).toEqual({
      event: "request",
      id: undefined,
      data: expect.objectContaining({ method: "POST", path: "/sandbox/v2/simulate/events", status: 201 })
    })
    const second = await stream.next()
    expect(second).toEqual({
      event: "event",
      id: emitted.json.id,
      data: { ...emitted.json, resourceId: emitted.json.data.customerId }
    })
    // The customer's own creation comes among the events of its onboarding, in the order they were emitted.
    let created: Message | undefined
    const seen: Array<string> = []
    while (created === undefined) {
      const [message] = await stream.take("event", 1)
      seen.push(message!.data.type)
      if (message!.data.type === "customer.created") created = message
    }
    expect(created.data).toMatchObject({ resourceId: customerId, mode: "sandbox" })
    expect(seen.indexOf("customer.created")).toBeLessThan(seen.length)
    await stream.close()
  })

  it("resumes after Last-Event-ID or ?after= with the events since, and refuses an id of another sandbox", async () => {
    const a = await emit(acme)
    const b = await emit(acme, "customer.restricted")
    const c = await emit(acme, "order.created")
    const resumed = sseOf(await open(engine.fetch, "http://fos", keysOf("acme").sandbox, "?topics=events", { "last-event-id": a.json.id }))
    expect((await resumed.next()).id).toBe(b.json.id)
    expect((await resumed.next()).id).toBe(c.json.id)
    await resumed.close()
    const after = sseOf(await open(engine.fetch, "http://fos", keysOf("acme").sandbox, `?topics=events&after=${b.json.id}`))
    expect((await after.next()).id).toBe(c.json.id)
    await after.close()
    const theirs = await open(engine.fetch, "http://fos", keysOf("rival").sandbox, `?after=${a.json.id}`)
    expect(theirs.status).toBe(400)
    expect((await theirs.json()).type).toBe("VALIDATION_ERROR")
  })

  it("pushes what a timer commits outside any request at once (an advance of the embedded clock)", async () => {
    const { depositId } = await pendingDeposit()
    const stream = sseOf(await open(engine.fetch, "http://fos", keysOf("acme").sandbox, "?topics=events"))
    // No request follows, and real time stands still in this engine (no tail runs): only the timer's commit can tell
    // the stream.
    await engine.clock.advance("1 hour")
    let message = await stream.next()
    while (message.data.resourceId !== depositId) message = await stream.next()
    expect(message.data.type).toMatch(/^transaction\./)
    await stream.close()
  })

  it("sends only the topics asked for", async () => {
    const stream = sseOf(await open(engine.fetch, "http://fos", keysOf("acme").sandbox, "?topics=requests"))
    const emitted = await emit(acme)
    await acme.call("GET", "/v2/simulate/clock")
    const [one, two] = [await stream.next(), await stream.next()]
    expect([one.event, two.event]).toEqual(["request", "request"])
    expect(two.data.path).toBe("/sandbox/v2/simulate/clock")
    expect(emitted.status).toBe(201)
    await stream.close()
    const bad = await open(engine.fetch, "http://fos", keysOf("acme").sandbox, "?topics=events,timers")
    expect(bad.status).toBe(400)
  })

  it("bounds the open streams per organization, and a closed stream frees its slot", async () => {
    const streams = []
    for (let i = 0; i < LiveFeed.maxStreamsPerOrganization; i++) {
      const stream = sseOf(await open(engine.fetch, "http://fos", keysOf("acme").sandbox))
      await emit(acme)
      await stream.take("event", 1)
      streams.push(stream)
    }
    const refused = await open(engine.fetch, "http://fos", keysOf("acme").sandbox)
    expect(refused.status).toBe(429)
    expect((await refused.json()).type).toBe("RATE_LIMITED")
    // Another organization has slots of its own.
    const theirs = await open(engine.fetch, "http://fos", keysOf("rival").sandbox)
    expect(theirs.status).toBe(200)
    await theirs.body!.cancel()
    await streams.pop()!.close()
    // The slot is freed once the stream's fibers have ended; the next stream then opens.
    let reopened: Response | undefined
    for (let tries = 0; tries < 50 && reopened?.status !== 200; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 10))
      reopened = await open(engine.fetch, "http://fos", keysOf("acme").sandbox)
      if (reopened.status !== 200) await reopened.body?.cancel()
    }
    expect(reopened!.status).toBe(200)
    await reopened!.body!.cancel()
    for (const stream of streams) await stream.close()
  })

  it("needs a key, as every call does", async () => {
    const response = await engine.fetch(new Request("http://fos/sandbox/v2/simulate/stream"))
    expect(response.status).toBe(401)
  })
})

describe("the live stream on PGlite", () => {
  it("reads the events from SQL: live, and resumed after an id", async () => {
    await engine.close()
    const dir = await freshPgliteDirectory("stream")
    engine = await createEngine({
      store: layerPgliteStore(dir),
      clock: { mode: "virtual", start: START_MS },
      realClock: Timers.makeVirtualClock(START_MS),
      seed: seedOf(orgSeed("acme"), orgSeed("rival")) as never
    })
    acme = clientOf(engine.fetch, "http://fos", keysOf("acme").sandbox)
    rival = clientOf(engine.fetch, "http://fos", keysOf("rival").sandbox)
    try {
      const first = await emit(acme)
      const stream = sseOf(await open(engine.fetch, "http://fos", keysOf("acme").sandbox, "?topics=events"))
      await emit(rival)
      const second = await emit(acme, "customer.restricted")
      expect((await stream.next()).id).toBe(second.json.id)
      await stream.close()
      const resumed = sseOf(await open(engine.fetch, "http://fos", keysOf("acme").sandbox, `?topics=events&after=${first.json.id}`))
      expect((await resumed.next()).data).toEqual({ ...second.json, resourceId: second.json.data.customerId })
      await resumed.close()
    } finally {
      await engine.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})

describe("the live stream through a real server", () => {
  it("streams over HTTP, and the operator reads any organization's", async () => {
    const served = await createEngine({ clock: "virtual", seed: seedOf(orgSeed("acme")) as never, operatorToken: "op-token" })
    const { NodeHttpServer } = await import("@effect/platform-node")
    const { Effect, Layer } = await import("effect")
    const { HttpRouter } = await import("effect/http")
    const { layerRoutes } = await import("@fos/http")
    const server = createServer()
    const app = HttpRouter.serve(layerRoutes(Layer.succeedContext(served.context), { operatorToken: "op-token" }), { disableLogger: true, disableListenLog: true }).pipe(
      Layer.provide(Layer.succeedContext(served.context)),
      Layer.provideMerge(NodeHttpServer.layer(() => server, { port: 0, host: "127.0.0.1" }))
    )
    const { ManagedRuntime } = await import("effect")
    const runtime = ManagedRuntime.make(app as never)
    await runtime.runPromise(Effect.void as never)
    try {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const client = clientOf((r) => fetch(r), origin, keysOf("acme").sandbox)
      const stream = sseOf(await open((r) => fetch(r), origin, keysOf("acme").sandbox))
      const operator = sseOf(await fetch(`${origin}/operator/organizations/org_acme/stream?topics=events`, { headers: { authorization: "Bearer op-token" } }))
      const emitted = await emit(client)
      expect((await stream.take("event", 1))[0]!.id).toBe(emitted.json.id)
      expect((await operator.next()).id).toBe(emitted.json.id)
      const recent = await fetch(`${origin}/operator/organizations/org_acme/requests`, { headers: { authorization: "Bearer op-token" } })
      expect((await recent.json()).data[0]).toMatchObject({ method: "POST", path: "/sandbox/v2/simulate/events" })
      await stream.close()
      await operator.close()
      // A client that goes away frees its stream's slot on the server (once the server has seen the connection
      // close): every slot can be taken again, and the next is refused.
      const openOne = async () => {
        const abort = new AbortController()
        const response = await fetch(`${origin}/sandbox/v2/simulate/stream`, { headers: { "x-api-key": keysOf("acme").sandbox }, signal: abort.signal })
        if (response.status !== 200) await response.body?.cancel()
        return { abort, status: response.status }
      }
      const aborts: Array<AbortController> = []
      for (let refusals = 0; aborts.length < LiveFeed.maxStreamsPerOrganization && refusals < 200;) {
        const opened = await openOne()
        if (opened.status === 200) aborts.push(opened.abort)
        else {
          refusals++
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
      }
      expect(aborts.length).toBe(LiveFeed.maxStreamsPerOrganization)
      expect((await openOne()).status).toBe(429)
      aborts.pop()!.abort()
      let reopened = 429
      for (let tries = 0; tries < 200 && reopened !== 200; tries++) {
        const opened = await openOne()
        reopened = opened.status
        if (reopened === 200) aborts.push(opened.abort)
        else await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect(reopened).toBe(200)
      for (const abort of aborts) abort.abort()
    } finally {
      await runtime.dispose()
      await served.close()
    }
  })
})

// --- a resource's actions -------------------------------------------------------------------------------------------

/** An active USD virtual account of an approved customer, and a pending RTP deposit of 1000.00 to it. */
const pendingDeposit = async () => {
  const customerId = await approvedCustomer(acme)
  const applied = await acme.call("POST", `/v2/customers/${customerId}/features`, { type: "virtual_account", asset: { code: "USD" } }, idem())
  await acme.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
  await engine.clock.advance(30_000)
  const accountId = (await acme.call("GET", `/v2/customers/${customerId}/virtual-accounts`)).json.data[0].id as string
  const deposited = await acme.call("POST", "/v2/simulate/deposits", {
    destination: { type: "virtual_account", virtualAccountId: accountId },
    assetAmount: { code: "USD", amount: "1000.00" },
    rail: "rtp"
  })
  expect(deposited.status, deposited.text).toBe(201)
  return { customerId, accountId, depositId: deposited.json.id as string }
}

const actionsOf = async (client: Client, id: string) => {
  const reply = await client.call("GET", `/v2/simulate/actions/${id}`)
  expect(reply.status, reply.text).toBe(200)
  return reply.json as { resourceId: string; resourceType: string; actions: Array<{ name: string; method: string; path: string; allowed: boolean; reason?: string }> }
}
const named = (answer: Awaited<ReturnType<typeof actionsOf>>, name: string) => answer.actions.find((a) => a.name === name)!

describe("a resource's actions", () => {
  it("say what a transaction's state table allows, and the calls agree with them", async () => {
    const { depositId } = await pendingDeposit()
    const pending = await actionsOf(acme, depositId)
    expect(pending.resourceType).toBe("transaction")
    expect(named(pending, "settleTransaction")).toEqual({
      name: "settleTransaction",
      method: "POST",
      path: `/v2/simulate/transactions/${depositId}/settle`,
      allowed: true
    })
    // A return is of a completed transaction only.
    const returning = named(pending, "returnTransaction")
    expect(returning.allowed).toBe(false)
    expect(returning.reason).toMatch(/^SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY: /)
    // A deposit is no payout: no public cancel is offered.
    expect(pending.actions.some((a) => a.name === "cancelPayout")).toBe(false)
    const refusedReturn = await acme.call("POST", returning.path, { returnCode: "R01" })
    expect(refusedReturn.json.type).toBe("SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY")

    expect((await acme.call("POST", named(pending, "settleTransaction").path)).status).toBe(200)
    const settled = await actionsOf(acme, depositId)
    const settleAgain = named(settled, "settleTransaction")
    expect(settleAgain).toMatchObject({ allowed: false, reason: "RESOURCE_TERMINAL: The transaction has already ended (completed)." })
    expect((await acme.call("POST", settleAgain.path)).json.type).toBe("RESOURCE_TERMINAL")
    expect(named(settled, "returnTransaction").allowed).toBe(true)
    expect(named(settled, "enterReview").allowed).toBe(false)
  })

  it("say what an application's table allows before and after its decision", async () => {
    const docs = await deuDocuments(acme)
    const submitted = await acme.call("POST", "/v2/onboarding", deuSubmission(docs, { clientReferenceId: "actions-app" }), idem())
    const applicationId = submitted.json.applicationId as string
    const open = await actionsOf(acme, applicationId)
    expect(open.resourceType).toBe("application")
    expect(open.actions.map((a) => [a.name, a.allowed])).toEqual([
      ["approveApplication", true],
      ["rejectApplication", true],
      ["complianceResult", false],
      ["cancelApplication", true]
    ])
    await acme.call("POST", `/v2/simulate/applications/${applicationId}/decision`, { outcome: "rejected" })
    const rejected = await actionsOf(acme, applicationId)
    expect(named(rejected, "approveApplication")).toMatchObject({ allowed: false, reason: "APPLICATION_ALREADY_DECIDED: the application is rejected." })
    expect(named(rejected, "complianceResult").allowed).toBe(true)
    expect(named(rejected, "cancelApplication").allowed).toBe(false)
  })

  it("offer a delivery's retry once it has failed, and not before", async () => {
    const hooked = await createEngine({ clock: { mode: "virtual", start: START_MS }, webhookTransport: "memory", seed: seedOf(orgSeed("acme")) as never })
    try {
      hooked.deliveries.answerWith(500)
      const client = clientOf(hooked.fetch, "http://fos", keysOf("acme").sandbox)
      const created = await client.call("POST", "/v2/webhooks/endpoints", { url: "https://receiver.example/hook" }, idem())
      expect(created.status, created.text).toBe(201)
      await emit(client)
      await hooked.deliveries.flush()
      const delivery = (await client.call("GET", "/v2/webhooks/deliveries")).json.data[0]
      const retrying = await actionsOf(client, delivery.id)
      expect(retrying.resourceType).toBe("webhook_delivery")
      expect(retrying.actions).toEqual([{
        name: "retryDelivery",
        method: "POST",
        path: `/v2/webhooks/deliveries/${delivery.id}/retry`,
        allowed: false,
        reason: expect.stringMatching(/^WEBHOOK_DELIVERY_NOT_RETRYABLE: The delivery is (pending|processing); only a failed delivery can be retried\.$/)
      }])
      // The receiver keeps failing: the run of five attempts ends failed.
      for (let i = 0; i < 5; i++) {
        await hooked.clock.advance("1 hour")
        await hooked.deliveries.flush()
      }
      const failed = await actionsOf(client, delivery.id)
      expect(failed.actions[0]).toMatchObject({ allowed: true })
      expect(failed.actions[0]!.reason).toBeUndefined()
      const retried = await client.call("POST", failed.actions[0]!.path, undefined, idem())
      expect(retried.status, retried.text).toBeLessThan(300)
    } finally {
      await hooked.close()
    }
  })

  it("say what a claim's and its signers' tables allow, before and after enrollment", async () => {
    const customerId = await approvedCustomer(acme)
    for (const asset of [{ code: "USDC", chain: "base" }]) {
      const applied = await acme.call("POST", `/v2/customers/${customerId}/features`, { type: "crypto_wallet", asset }, idem())
      await acme.call("POST", `/v2/simulate/applications/${applied.json.applicationId}/decision`, { outcome: "approved" })
    }
    const accepted = await acme.call("POST", `/v2/customers/${customerId}/wallets/claim-non-custodial`, {
      chains: ["base"],
      roster: [{ credentialType: "passkey", role: "admin", email: "alice@acme.example" }],
      threshold: 1
    }, idem())
    expect(accepted.status, accepted.text).toBe(202)
    const claimId = accepted.json.claimId as string
    const signerId = accepted.json.signers[0].id as string

    const invited = await actionsOf(acme, signerId)
    expect(invited.resourceType).toBe("wallet_signer")
    expect(named(invited, "enrollSigner")).toEqual({ name: "enrollSigner", method: "POST", path: `/v2/simulate/wallet-signers/${signerId}/enroll`, allowed: true })
    expect(named(invited, "addPasskey")).toMatchObject({ allowed: false, reason: expect.stringMatching(/^CONFLICT: The signer has not enrolled yet/) })
    const pendingClaim = await actionsOf(acme, claimId)
    expect(pendingClaim.resourceType).toBe("claim")
    expect(pendingClaim.actions.map((a) => [a.name, a.allowed])).toEqual([["provisionClaim.succeeded", true], ["provisionClaim.failed", true]])

    expect((await acme.call("POST", named(invited, "enrollSigner").path, {})).status).toBe(200)
    const enrolled = await actionsOf(acme, signerId)
    expect(named(enrolled, "enrollSigner")).toMatchObject({ allowed: false, reason: "CONFLICT: The signer has already enrolled its credential." })
    expect((await acme.call("POST", named(enrolled, "enrollSigner").path, {})).json.type).toBe("CONFLICT")
    expect(named(enrolled, "removeSigner").allowed).toBe(true)
  })

  it("are 404 for another organization's resource and for an id of no such resource", async () => {
    const { depositId } = await pendingDeposit()
    const instance = (id: string) => `/sandbox/v2/simulate/actions/${id}`
    expectProblem(await rival.call("GET", `/v2/simulate/actions/${depositId}`), { status: 404, type: "NOT_FOUND", instance: instance(depositId) })
    expectProblem(await acme.call("GET", "/v2/simulate/actions/cus_000000000000000000000000"), { status: 404, type: "NOT_FOUND", instance: instance("cus_000000000000000000000000") })
    expectProblem(await acme.call("GET", "/v2/simulate/actions/txn_000000000000000000000000"), { status: 404, type: "NOT_FOUND", instance: instance("txn_000000000000000000000000") })
  })
})
