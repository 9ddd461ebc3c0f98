/**
 * What each sandbox attempt sent (`GET /sandbox/v2/simulate/webhooks/deliveries/{deliveryId}/attempts`,
 * docs/inspect.md), through the whole pipeline (engine.fetch): the headers and body the receiver got, a signature
 * that verifies with the endpoint's secret, the receiver's answer, and nothing for another organization.
 */
import { verifyWebhook } from "@fos/client/webhooks"
import { AttemptRequests, Deliveries, Store, Transport } from "@fos/core"
import { Effect } from "effect"
import { createEngine, type Engine } from "@fos/http"
import { afterEach, describe, expect, it } from "vitest"
import { expectProblem, liveKey, orgSeed, sandboxKey, seedOf, START_MS } from "./support.ts"

const key = sandboxKey("sent")
const rivalKey = sandboxKey("sentrival")
const seed = seedOf(orgSeed("sent", { keys: [{ key, access: "read_write" }, { key: liveKey("sent"), access: "read_write" }] }), orgSeed("sentrival", { keys: [{ key: rivalKey, access: "read_write" }] }))

let engine: Engine
afterEach(async () => engine?.close())

/** An engine whose receiver answers `answers[n]` to the n-th request it gets (200 past the end), keeping each. */
const start = async (answers: ReadonlyArray<number>) => {
  const received: Array<Transport.DeliveryRequest> = []
  engine = await createEngine({
    seed,
    clock: { mode: "virtual", start: START_MS },
    webhookTransport: Transport.callback((request) => {
      received.push(request)
      return { status: answers[received.length - 1] ?? 200 }
    })
  })
  return received
}

const call = async (method: string, path: string, body?: unknown, apiKey = key) => {
  const response = await engine.fetch(new Request(`http://fos${path}`, {
    method,
    headers: { "x-api-key": apiKey, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  }))
  const text = await response.text()
  return { status: response.status, headers: response.headers, text, json: text === "" ? undefined : JSON.parse(text) }
}

const attemptsPath = (deliveryId: string) => `/sandbox/v2/simulate/webhooks/deliveries/${deliveryId}/attempts`
const attemptsOf = (deliveryId: string, query = "", apiKey = key) => call("GET", `${attemptsPath(deliveryId)}${query}`, undefined, apiKey)
const notFound = (deliveryId: string) => ({ type: "NOT_FOUND", status: 404, instance: attemptsPath(deliveryId) })

describe("a sandbox delivery's attempts, with what each sent", () => {
  it("shows the exact headers and body the receiver got, a signature that verifies, and each attempt's answer", async () => {
    const received = await start([503, 200])
    const endpoint = await call("POST", "/sandbox/v2/webhooks/endpoints", { url: "https://hooks.example.com/fos" })
    expect(endpoint.status, endpoint.text).toBe(201)
    // The first attempt meets a receiver that never answers, without reaching ours.
    const fault = await call("POST", `/sandbox/v2/simulate/webhooks/endpoints/${endpoint.json.id}/faults`, { effect: { type: "timeout" }, count: 1 })
    expect(fault.status, fault.text).toBe(201)
    expect((await call("POST", "/sandbox/v2/simulate/events", { type: "customer.created" })).status).toBe(201)
    await engine.deliveries.flush()
    await engine.clock.advance(30_000)
    await engine.deliveries.flush()
    await engine.clock.advance(120_000)
    await engine.deliveries.flush()
    expect(received).toHaveLength(2)

    const [delivery] = (await call("GET", "/sandbox/v2/webhooks/deliveries")).json.data
    expect(delivery.status).toBe("succeeded")
    const read = await attemptsOf(delivery.id)
    expect(read.status, read.text).toBe(200)
    const attempts = read.json.data
    expect(read.json.meta).toEqual({ mode: "cursor", nextCursor: null, previousCursor: null, total: 3 })
    expect(attempts.map((a: any) => [a.run, a.attemptNumber])).toEqual([[1, 1], [1, 2], [1, 3]])

    // The two the receiver got: exactly its headers, URL and body.
    for (const [i, got] of received.entries()) {
      const attempt = attempts[i + 1]
      expect(attempt.attemptId).toBe(got.attemptId)
      expect(attempt.request).toEqual({ url: got.url, headers: got.headers, body: got.body })
    }
    expect(attempts[1].response).toEqual({ status: 503, latencyMs: attempts[1].response.latencyMs, error: "answered 503" })
    expect(attempts[2].response).toEqual({ status: 200, latencyMs: attempts[2].response.latencyMs })
    // The timed-out one has no status, and its error says so.
    expect(attempts[0].response).toEqual({ latencyMs: attempts[0].response.latencyMs, error: "no answer within 5 seconds" })
    expect(attempts[0].request.headers["x-service-delivery-id"]).toBe(attempts[0].attemptId)

    // Each attempt's signature verifies with the endpoint's secret, against the receiver's own clock (fos signs with
    // real time); the secret is nowhere.
    for (const attempt of attempts) {
      const event = await verifyWebhook(attempt.request.body, attempt.request.headers["x-service-signature"], { secret: endpoint.json.secret })
      expect(event.type).toBe("customer.created")
      expect(attempt.request.headers["x-service-event"]).toBe("customer.created")
      expect(attempt.request.headers["content-type"]).toBe("application/json")
    }
    expect(read.text).not.toContain(endpoint.json.secret)
    expect(read.text).not.toContain(endpoint.json.secret.slice("whsec_".length))

    // The public read of the delivery is as it was: status and latency per attempt, nothing sent.
    const detail = await call("GET", `/sandbox/v2/webhooks/deliveries/${delivery.id}`)
    expect(detail.json.attemptList).toEqual(attempts.map((a: any) => ({
      id: a.attemptId,
      run: a.run,
      number: a.attemptNumber,
      startedAt: a.at,
      ...(a.response.status === undefined ? {} : { responseStatus: a.response.status }),
      latencyMs: a.response.latencyMs,
      ...(a.response.error === undefined ? {} : { error: a.response.error })
    })))

    // Paged like every list.
    const first = await attemptsOf(delivery.id, "?limit=2")
    expect(first.json.data.map((a: any) => a.attemptId)).toEqual(attempts.slice(0, 2).map((a: any) => a.attemptId))
    const next = await attemptsOf(delivery.id, `?limit=2&cursor=${first.json.meta.nextCursor}`)
    expect(next.json.data.map((a: any) => a.attemptId)).toEqual([attempts[2].attemptId])
  })

  it("is 404 for another organization's delivery, an unknown one, and under /live", async () => {
    await start([])
    expect((await call("POST", "/sandbox/v2/webhooks/endpoints", { url: "https://hooks.example.com/fos" })).status).toBe(201)
    await call("POST", "/sandbox/v2/simulate/events", { type: "customer.created" })
    await engine.deliveries.flush()
    const [delivery] = (await call("GET", "/sandbox/v2/webhooks/deliveries")).json.data
    expect((await attemptsOf(delivery.id)).json.data).toHaveLength(1)

    expectProblem(await attemptsOf(delivery.id, "", rivalKey), notFound(delivery.id))
    expectProblem(await attemptsOf("wdl_01JD8X4M2Q7RZ5K3N9V6T0W1YC"), notFound("wdl_01JD8X4M2Q7RZ5K3N9V6T0W1YC"))
    const live = await call("GET", `/live/v2/simulate/webhooks/deliveries/${delivery.id}/attempts`, undefined, liveKey("sent"))
    expect(live.status, live.text).toBe(404)
    // Not a delivery id at all: the path's parameter is refused.
    expect((await attemptsOf("txn_01JD8X4M2Q7RZ5K3N9V6T0W1YC")).status).toBe(400)
  })

  it("keeps a sandbox attempt's request in its attempt's transaction, and nothing for a live one", async () => {
    await start([])
    await call("POST", "/sandbox/v2/webhooks/endpoints", { url: "https://hooks.example.com/fos" })
    await call("POST", "/sandbox/v2/simulate/events", { type: "customer.created" })
    await engine.deliveries.flush()
    const [listed] = (await call("GET", "/sandbox/v2/webhooks/deliveries")).json.data
    const kept = await engine.run(Effect.gen(function*() {
      const store = yield* Store.Store
      const delivery = (yield* store.get(Deliveries.WebhookDeliveries, listed.id))!
      const [attempt] = yield* store.page(Deliveries.WebhookAttempts, { order: "byDelivery", partition: delivery.id, descending: false, backward: false, from: undefined, limit: 10 })
      const sandboxRow = yield* store.get(AttemptRequests.AttemptRequests, attempt!.id)
      // The same attempt as a live delivery's: keep writes nothing.
      const liveAttempt = { ...attempt!, id: "wda_01JD8X4M2Q7RZ5K3N9V6T0W1YQ" }
      yield* store.transaction(AttemptRequests.keep({ ...delivery, environment: "live" }, liveAttempt, { url: "https://hooks.example.com/fos", headers: {} }))
      return { sandboxRow, liveRow: yield* store.get(AttemptRequests.AttemptRequests, liveAttempt.id) }
    }))
    expect(kept.sandboxRow).toMatchObject({ deliveryId: listed.id, run: 1, number: 1, url: "https://hooks.example.com/fos" })
    expect(Object.keys(kept.sandboxRow!.headers).sort()).toEqual(["content-type", "user-agent", "x-service-delivery-id", "x-service-event", "x-service-signature"])
    expect(kept.liveRow).toBeUndefined()
  })

  it("a reset removes what the attempts sent along with them", async () => {
    await start([])
    await call("POST", "/sandbox/v2/webhooks/endpoints", { url: "https://hooks.example.com/fos" })
    await call("POST", "/sandbox/v2/simulate/events", { type: "customer.created" })
    await engine.deliveries.flush()
    const [delivery] = (await call("GET", "/sandbox/v2/webhooks/deliveries")).json.data
    expect((await attemptsOf(delivery.id)).json.data[0].request).toBeDefined()
    expect((await call("POST", "/sandbox/v2/simulate/reset")).status).toBe(200)
    expectProblem(await attemptsOf(delivery.id), notFound(delivery.id))
  })
})
