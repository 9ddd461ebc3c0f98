/**
 * Webhook sends run in the background: a write answers while its receiver still holds the request, on either clock;
 * `POST /simulate/webhooks/flush` (and `engine.deliveries.flush()`) waits until the attempts due or in flight are
 * recorded; and an advance made while an attempt is in flight still keeps the retry timetable.
 */
import { Transport } from "@fos/core"
import { createEngine, type Engine } from "@fos/http"
import { afterEach, describe, expect, it } from "vitest"
import { liveKey, orgSeed, sandboxKey, seedOf, START_MS } from "./support.ts"

const key = sandboxKey("background")
const live = liveKey("background")
const otherKey = sandboxKey("bgother")
const seed = seedOf(
  orgSeed("background", { keys: [{ key, access: "read_write" }, { key: live, access: "read_write" }] }),
  orgSeed("bgother", { keys: [{ key: otherKey, access: "read_write" }] })
)

let engine: Engine
afterEach(async () => engine?.close())

/** A receiver that holds every request until the test answers it. */
const holdingReceiver = () => {
  const held: Array<{ readonly request: Transport.DeliveryRequest; readonly answer: (status: number) => void }> = []
  let arrived: () => void = () => {}
  const transport = Transport.callback((request) =>
    new Promise<{ status: number }>((resolve) => {
      held.push({ request, answer: (status) => resolve({ status }) })
      arrived()
    }))
  /** Resolves once `n` requests have arrived. */
  const until = (n: number) =>
    new Promise<void>((resolve) => {
      const check = () => (held.length >= n ? resolve() : (arrived = check))
      check()
    })
  return { held, transport, until }
}

const call = async (method: string, path: string, body?: unknown, apiKey = key) => {
  const response = await engine.fetch(new Request(`http://fos/sandbox${path}`, {
    method,
    headers: { "x-api-key": apiKey, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  }))
  const text = await response.text()
  return { status: response.status, json: text === "" ? undefined : JSON.parse(text) }
}

const setUp = async (clock: "virtual" | "system") => {
  const receiver = holdingReceiver()
  engine = await createEngine({
    seed,
    clock: clock === "virtual" ? { mode: "virtual", start: START_MS } : "system",
    webhookTransport: receiver.transport
  })
  expect((await call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.example.com/fos" })).status).toBe(201)
  return receiver
}

describe("a write never waits for a webhook receiver", () => {
  for (const clock of ["virtual", "system"] as const) {
    it(`answers while the receiver still holds the request (${clock} clock)`, async () => {
      const receiver = await setUp(clock)
      const emitted = await call("POST", "/v2/simulate/events", { type: "customer.created" })
      expect(emitted.status).toBe(201)
      // The write has answered; its attempt reaches the receiver, which has not answered, and the delivery is in flight.
      await receiver.until(1)
      const [delivery] = (await call("GET", "/v2/webhooks/deliveries")).json.data
      expect(delivery).toMatchObject({ eventId: emitted.json.id, status: "processing", attempts: 0 })
      // Another write while the receiver still holds it answers too.
      expect((await call("POST", "/v2/simulate/events", { type: "order.created" })).status).toBe(201)
      await receiver.until(2)
      expect(receiver.held).toHaveLength(2)

      for (const { answer } of receiver.held) answer(204)
      const flushed = await call("POST", "/v2/simulate/webhooks/flush")
      expect(flushed.status).toBe(200)
      expect(flushed.json.complete).toBe(true)
      expect(flushed.json.deliveries.map((d: { status: string; attempts: number }) => [d.status, d.attempts])).toEqual([
        ["succeeded", 1],
        ["succeeded", 1]
      ])
      const detail = (await call("GET", `/v2/webhooks/deliveries/${delivery.id}`)).json
      expect(detail.attemptList.map((a: { responseStatus: number }) => a.responseStatus)).toEqual([204])
    })
  }
})

describe("flush", () => {
  it("returns once the attempts in flight are recorded, the caller's organization only", async () => {
    const receiver = await setUp("virtual")
    await call("POST", "/v2/simulate/events", { type: "customer.created" })
    await receiver.until(1)
    const flushing = call("POST", "/v2/simulate/webhooks/flush")
    // The other organization has nothing due or in flight: its flush answers while ours still waits.
    const other = await call("POST", "/v2/simulate/webhooks/flush", undefined, otherKey)
    expect(other).toEqual({ status: 200, json: { deliveries: [], complete: true } })
    let answered = false
    void flushing.then(() => (answered = true))
    expect(answered).toBe(false)
    receiver.held[0]!.answer(500)
    const flushed = await flushing
    expect(flushed.json.complete).toBe(true)
    // Recorded: the attempt failed, the retry is due 30 s after it.
    expect(flushed.json.deliveries).toEqual([
      expect.objectContaining({ status: "pending", attempts: 1, nextAttemptAt: new Date(START_MS + 30_000).toISOString() })
    ])
    // A retry later on the clock was attempted already: a flush does not wait for it.
    expect(await call("POST", "/v2/simulate/webhooks/flush")).toEqual({ status: 200, json: { deliveries: [], complete: true } })
  })

  it("is sandbox-only: 404 under /live", async () => {
    await setUp("virtual")
    const response = await engine.fetch(new Request("http://fos/live/v2/simulate/webhooks/flush", {
      method: "POST",
      headers: { "x-api-key": live }
    }))
    expect(response.status).toBe(404)
  })

  it("embedded: engine.deliveries.flush() waits for every organization's attempts", async () => {
    const receiver = await setUp("virtual")
    await call("POST", "/v2/simulate/events", { type: "customer.created" })
    await receiver.until(1)
    const flushing = engine.deliveries.flush()
    receiver.held[0]!.answer(200)
    const report = await flushing
    expect(report.complete).toBe(true)
    expect(report.deliveries).toEqual([expect.objectContaining({ status: "succeeded", attempts: 1 })])
  })
})

describe("the retry timetable with sends in the background", () => {
  it("an advance made while an attempt is in flight waits for its outcome: the retry is still 30 s after the attempt", async () => {
    const receiver = await setUp("virtual")
    await call("POST", "/v2/simulate/events", { type: "customer.created" })
    await receiver.until(1)
    // The receiver still holds the first attempt when the advance starts. The advance ends on the retry's instant,
    // and answers once the retry it fires there has had its answer too: what that answer schedules is the clock's
    // next timer, which the advance reports.
    const advancing = call("POST", "/v2/simulate/clock/advance", { seconds: 30 })
    // Answered a little later, so that an advance that did not wait would have moved the clock first (the result
    // does not depend on this pause: with the wait, the outcome is the same whichever comes first).
    await new Promise((resolve) => setTimeout(resolve, 100))
    receiver.held[0]!.answer(503)
    await receiver.until(2)
    receiver.held[1]!.answer(503)
    const advanced = await advancing
    expect(advanced.status).toBe(200)
    // The first attempt's failure was recorded at its own instant, so the advance made the retry at +30 s; the
    // retry failed there, so the third attempt, 2 minutes after it, is the clock's next timer.
    expect(advanced.json.nextDueAt).toBe(new Date(START_MS + 150_000).toISOString())
    expect((await call("POST", "/v2/simulate/webhooks/flush")).json.complete).toBe(true)
    const events = receiver.held.map((h) => JSON.parse(h.request.body).id as string)
    expect(new Set(events).size).toBe(1)
    const [delivery] = (await call("GET", "/v2/webhooks/deliveries")).json.data
    const detail = (await call("GET", `/v2/webhooks/deliveries/${delivery.id}`)).json
    expect(detail.attemptList.map((a: { startedAt: string }) => a.startedAt)).toEqual([
      new Date(START_MS).toISOString(),
      new Date(START_MS + 30_000).toISOString()
    ])
    // The second attempt was made at +30 s and failed: the third is due 2 minutes after it.
    expect(detail).toMatchObject({ status: "pending", attempts: 2, nextAttemptAt: new Date(START_MS + 150_000).toISOString() })
  })
})
