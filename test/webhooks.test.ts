/**
 * Webhooks through the whole pipeline (engine.fetch), with deliveries received in process and the virtual clock
 * driven by the tests. Signatures are checked with node:crypto from the raw bytes received, not with fos's code.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import { verifyWebhook } from "@fos/client/webhooks"
import { EventTypes } from "@fos/contract"
import { Timers, Transport } from "@fos/core"
import { Effect } from "effect"
import { createEngine, type Engine } from "@fos/http"
import { afterEach, describe, expect, it } from "vitest"
import { recording } from "./responseRecorder.ts"
import { expectProblem, orgSeed, sandboxKey, seedOf, START_MS } from "./support.ts"

const key = sandboxKey("hooks")
const seed = seedOf(orgSeed("hooks", { keys: [{ key, access: "read_write" }] }))

let engine: Engine
afterEach(async () => engine?.close())

interface Received extends Transport.DeliveryRequest {
  readonly atMs: number
}

/** An engine whose receiver answers with `answer(n)` for the n-th delivery it gets (1-based). */
const start = async (
  answer: (n: number) => number = () => 200,
  options: Pick<Parameters<typeof createEngine>[0] & {}, "insecureWebhooks" | "signatureClock" | "realClock"> = {}
) => {
  const received: Array<Received> = []
  engine = await createEngine({
    seed,
    clock: { mode: "virtual", start: START_MS },
    ...options,
    webhookTransport: Transport.callback(async (request) => {
      received.push({ ...request, atMs: await engine.clock.now() })
      return { status: answer(received.length) }
    })
  })
  return received
}

const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const response = await recording(engine.fetch)(new Request(`http://fos/sandbox${path}`, {
    method,
    headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  }))
  const text = await response.text()
  return { status: response.status, headers: response.headers, text, json: text === "" ? undefined : JSON.parse(text) }
}

const createEndpoint = async (body: unknown = { url: "https://hooks.example.com/fos" }) => {
  const r = await call("POST", "/v2/webhooks/endpoints", body)
  expect(r.status).toBe(201)
  return r.json as { id: string; secret: string }
}

/**
 * Emits a test event and waits for the attempts it caused: sends run in the background, so the write answers
 * before its receivers do.
 */
const emit = async (type = "customer.created") => {
  const emitted = await call("POST", "/v2/simulate/events", { type })
  await engine.deliveries.flush()
  return emitted
}

/** Advances the clock and waits for the attempts made on the way's last instant. */
const advance = async (ms: number) => {
  await engine.clock.advance(ms)
  await engine.deliveries.flush()
}

/** Verifies a received delivery as a receiver would, with node:crypto: every v1 that matches one of `secrets`. */
const verify = (request: Transport.DeliveryRequest, secrets: ReadonlyArray<string>) => {
  const header = request.headers["x-service-signature"]!
  const parts = header.split(",").map((p) => p.split("=") as [string, string])
  const t = parts.find(([k]) => k === "t")![1]
  const v1s = parts.filter(([k]) => k === "v1").map(([, v]) => v)
  const matches = secrets.map((secret) => {
    const expected = createHmac("sha256", secret).update(`${t}.${request.body}`).digest()
    return v1s.some((v) => v.length === 64 && timingSafeEqual(Buffer.from(v, "hex"), expected))
  })
  return { t: Number(t), v1s, matches }
}

describe("webhook endpoints", () => {
  it("create returns the secret and the signature scheme once; reads never show them", async () => {
    await start()
    const created = await createEndpoint({ url: "https://hooks.example.com/a", subscription: { mode: "selected", eventTypes: ["order.created"] } })
    expect(created.secret).toMatch(/^whsec_[0-9a-f]{64}$/)
    expect((created as any).signature).toMatchObject({ algorithm: "HMAC-SHA256", header: "X-Service-Signature", toleranceSeconds: 300 })
    expect((created as any).subscription).toEqual({ mode: "selected", eventTypes: ["order.created"] })
    const read = await call("GET", `/v2/webhooks/endpoints/${created.id}`)
    expect(read.status).toBe(200)
    expect(read.json.secret).toBeUndefined()
    expect(read.json.signature).toBeUndefined()
    const list = await call("GET", "/v2/webhooks/endpoints")
    expect(list.json.data.map((e: { id: string }) => e.id)).toEqual([created.id])
    expect(JSON.stringify(list.json)).not.toContain(created.secret)
    // The default subscription is all.
    expect(((await createEndpoint()) as any).subscription).toEqual({ mode: "all" })
  })

  it("refuses plain http, private, loopback and link-local addresses, credentials and unknown event types", async () => {
    await start()
    for (const url of [
      "http://hooks.example.com/x",
      "https://127.0.0.1/x",
      "https://localhost/x",
      "https://10.1.2.3/x",
      "https://192.168.0.10/x",
      "https://169.254.169.254/latest/meta-data",
      "https://[::1]/x",
      "https://[fe80::1]/x",
      // A trailing dot is the same name to DNS.
      "https://localhost./x",
      "https://LOCALHOST./x",
      "https://api.localhost./x",
      "https://localhost../x",
      // IPv6 forms that carry an IPv4 address: IPv4-compatible (deprecated), IPv4-mapped, NAT64, 6to4.
      "https://[::127.0.0.1]/x",
      "https://[::10.0.0.1]/x",
      "https://[::93.184.216.34]/x",
      "https://[::ffff:127.0.0.1]/x",
      "https://[::ffff:10.0.0.1]/x",
      "https://[64:ff9b::127.0.0.1]/x",
      "https://[64:ff9b::10.0.0.1]/x",
      "https://[64:ff9b:1::a00:1]/x",
      "https://[2002:7f00:1::1]/x",
      "https://[2002:a00:1::1]/x",
      "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/x",
      "https://user:pass@hooks.example.com/x",
      "not a url"
    ]) {
      const r = await call("POST", "/v2/webhooks/endpoints", { url })
      expectProblem(r, { type: "VALIDATION_ERROR", status: 400, instance: "/sandbox/v2/webhooks/endpoints", nowMs: START_MS })
      expect(r.json.errors[0].pointer).toBe("/url")
      expect(r.json.errors[0].detail).not.toContain(url)
    }
    const unknown = await call("POST", "/v2/webhooks/endpoints", { url: "https://h.example.com", subscription: { mode: "selected", eventTypes: ["no.such"] } })
    expect(unknown.status).toBe(400)
    expect(unknown.json.errors[0].pointer).toBe("/subscription/eventTypes/0")
    const empty = await call("POST", "/v2/webhooks/endpoints", { url: "https://h.example.com", subscription: { mode: "selected", eventTypes: [] } })
    expect(empty.status).toBe(400)
  })

  it("refuses a name that resolves to a private address, and checks again before each send", async () => {
    const dns = new Map<string, Array<string>>([
      ["internal.example.com", ["10.0.0.5"]],
      ["mixed.example.com", ["93.184.216.34", "fd00::1"]],
      ["public.example.com", ["93.184.216.34"]]
    ])
    const sent: Array<string> = []
    engine = await createEngine({
      seed,
      clock: { mode: "virtual", start: START_MS },
      resolveHost: (host) => Effect.succeed(dns.get(host) ?? []),
      webhookTransport: Transport.callback((request) => {
        sent.push(request.url)
        return { status: 200 }
      })
    })
    for (const host of ["internal.example.com", "mixed.example.com"]) {
      const r = await call("POST", "/v2/webhooks/endpoints", { url: `https://${host}/h` })
      expect(r.status).toBe(400)
      expect(r.json.errors).toEqual([{ pointer: "/url", detail: "must not resolve to a private, loopback or link-local address" }])
    }
    expect((await call("POST", "/v2/webhooks/endpoints", { url: "https://public.example.com/h" })).status).toBe(201)
    // The name now leads somewhere private (DNS rebinding): the attempt is refused before anything is sent.
    dns.set("public.example.com", ["127.0.0.1"])
    await emit()
    expect(sent).toEqual([])
    const delivery = (await call("GET", "/v2/webhooks/deliveries")).json.data[0]
    const detail = await call("GET", `/v2/webhooks/deliveries/${delivery.id}`)
    expect(detail.json.attemptList[0]).toMatchObject({ error: "the endpoint's address is not allowed" })
    // No answer came: responseStatus is omitted, not null (rule 3).
    expect(detail.json.attemptList[0]).not.toHaveProperty("responseStatus")
    // The same at send time for the IPv6 forms of a private IPv4 address, and a name that stops resolving fails the attempt.
    for (const answer of [["::ffff:10.0.0.5"], ["64:ff9b::7f00:1"], ["2002:a00:1::1"], ["::a00:1"], []]) {
      dns.set("public.example.com", answer)
      await emit()
    }
    expect(sent).toEqual([])
    const errors = []
    for (const d of (await call("GET", "/v2/webhooks/deliveries")).json.data) {
      errors.push((await call("GET", `/v2/webhooks/deliveries/${d.id}`)).json.attemptList[0].error)
    }
    expect(errors.sort()).toEqual(["public.example.com resolves to no address", ...Array(5).fill("the endpoint's address is not allowed")])
  })

  it("judges IPv6 forms that carry an IPv4 address by that address, whether written in the URL or resolved", async () => {
    const dns = new Map<string, Array<string>>([
      ["mapped.example.com", ["::ffff:10.0.0.5"]],
      ["compat.example.com", ["::7f00:1"]],
      ["nat64.example.com", ["64:ff9b::a9fe:a9fe"]],
      ["sixtofour.example.com", ["2002:c0a8:1::1"]],
      ["dns64.example.com", ["64:ff9b::5db8:d822"]]
    ])
    engine = await createEngine({
      seed,
      clock: { mode: "virtual", start: START_MS },
      resolveHost: (host) => Effect.succeed(dns.get(host) ?? []),
      webhookTransport: Transport.callback(() => ({ status: 200 }))
    })
    for (const host of ["mapped.example.com", "compat.example.com", "nat64.example.com", "sixtofour.example.com"]) {
      const r = await call("POST", "/v2/webhooks/endpoints", { url: `https://${host}/h` })
      expect(r.status, host).toBe(400)
      expect(r.json.errors).toEqual([{ pointer: "/url", detail: "must not resolve to a private, loopback or link-local address" }])
    }
    // A public IPv4 address behind the NAT64 prefix (what DNS64 answers on an IPv6-only network), 6to4 or mapped.
    expect((await call("POST", "/v2/webhooks/endpoints", { url: "https://dns64.example.com/h" })).status).toBe(201)
    for (const literal of ["[64:ff9b::93.184.216.34]", "[2002:5db8:d822::1]", "[::ffff:93.184.216.34]"]) {
      expect((await call("POST", "/v2/webhooks/endpoints", { url: `https://${literal}/h` })).status, literal).toBe(201)
    }
  })

  it("--insecure-webhooks allows http on loopback only", async () => {
    await start(() => 200, { insecureWebhooks: true })
    expect((await call("POST", "/v2/webhooks/endpoints", { url: "http://127.0.0.1:9999/hook" })).status).toBe(201)
    expect((await call("POST", "/v2/webhooks/endpoints", { url: "http://localhost:9999/hook" })).status).toBe(201)
    expect((await call("POST", "/v2/webhooks/endpoints", { url: "http://hooks.example.com/hook" })).status).toBe(400)
    expect((await call("POST", "/v2/webhooks/endpoints", { url: "https://10.0.0.1/hook" })).status).toBe(400)
  })

  it("a refused http:// or loopback/private URL names --insecure-webhooks (insecureWebhooks when embedded), the setting that decides it", async () => {
    await start()
    for (const url of ["http://127.0.0.1:9999/hook", "http://hooks.example.com/hook", "https://127.0.0.1/hook", "https://localhost/hook", "https://10.0.0.1/hook"]) {
      const r = await call("POST", "/v2/webhooks/endpoints", { url })
      expectProblem(r, { type: "VALIDATION_ERROR", status: 400, instance: "/sandbox/v2/webhooks/endpoints", nowMs: START_MS })
      expect(r.json.errors[0].pointer).toBe("/url")
      expect(r.json.errors[0].detail, url).toContain("--insecure-webhooks")
      expect(r.json.errors[0].detail, url).toContain("insecureWebhooks: true")
    }
    // With the setting on, what stays refused says the setting allows loopback hosts only.
    await engine.close()
    await start(() => 200, { insecureWebhooks: true })
    for (const url of ["http://hooks.example.com/hook", "https://10.0.0.1/hook"]) {
      const r = await call("POST", "/v2/webhooks/endpoints", { url })
      expect(r.status).toBe(400)
      expect(r.json.errors[0].detail, url).toContain("loopback hosts only")
    }
  })

  it("DELETE is 204 twice; a deleted endpoint is 410 GONE to read, change or rotate; an id that never existed is 404 WEBHOOK_ENDPOINT_NOT_FOUND", async () => {
    await start()
    const { id } = await createEndpoint()
    expect((await call("DELETE", `/v2/webhooks/endpoints/${id}`)).status).toBe(204)
    expect((await call("DELETE", `/v2/webhooks/endpoints/${id}`)).status).toBe(204)
    const at = `/sandbox/v2/webhooks/endpoints/${id}`
    expectProblem(await call("GET", `/v2/webhooks/endpoints/${id}`), { type: "GONE", status: 410, instance: at, nowMs: START_MS })
    expectProblem(await call("PATCH", `/v2/webhooks/endpoints/${id}`, { status: "active" }), { type: "GONE", status: 410, instance: at, nowMs: START_MS })
    expectProblem(await call("POST", `/v2/webhooks/endpoints/${id}/rotate`, undefined, { "idempotency-key": "rot-gone" }), {
      type: "GONE",
      status: 410,
      instance: `${at}/rotate`,
      nowMs: START_MS
    })
    expect((await call("GET", "/v2/webhooks/endpoints")).json.data).toEqual([])
    const never = "wep_neverexisted"
    expectProblem(await call("GET", `/v2/webhooks/endpoints/${never}`), { type: "WEBHOOK_ENDPOINT_NOT_FOUND", status: 404, instance: `/sandbox/v2/webhooks/endpoints/${never}`, nowMs: START_MS })
    expectProblem(await call("DELETE", `/v2/webhooks/endpoints/${never}`), { type: "WEBHOOK_ENDPOINT_NOT_FOUND", status: 404, instance: `/sandbox/v2/webhooks/endpoints/${never}`, nowMs: START_MS })
    expect((await call("GET", "/v2/webhooks/endpoints/not_an_id")).json.type).toBe("INVALID_OID_FORMAT")
  })

  it("rotate requires an Idempotency-Key and returns a new secret once", async () => {
    await start()
    const { id, secret } = await createEndpoint()
    expectProblem(await call("POST", `/v2/webhooks/endpoints/${id}/rotate`), { type: "IDEMPOTENCY_KEY_REQUIRED", status: 400, instance: `/sandbox/v2/webhooks/endpoints/${id}/rotate`, nowMs: START_MS })
    const rotated = await call("POST", `/v2/webhooks/endpoints/${id}/rotate`, undefined, { "idempotency-key": "rot-1" })
    expect(rotated.status).toBe(200)
    expect(rotated.json.secret).toMatch(/^whsec_[0-9a-f]{64}$/)
    expect(rotated.json.secret).not.toBe(secret)
    const replay = await call("POST", `/v2/webhooks/endpoints/${id}/rotate`, undefined, { "idempotency-key": "rot-1" })
    expect(replay.text).toBe(rotated.text)
  })

  it("PATCH changes the subscription and the status", async () => {
    await start()
    const { id } = await createEndpoint()
    const r = await call("PATCH", `/v2/webhooks/endpoints/${id}`, { status: "disabled", subscription: { mode: "selected", eventTypes: ["order.failed"] } })
    expect(r.status).toBe(200)
    expect(r.json).toMatchObject({ status: "disabled", subscription: { mode: "selected", eventTypes: ["order.failed"] } })
  })

  it("refuses unknown members, nested ones included, with one errors[] pointer each, and changes nothing", async () => {
    await start()
    const { id } = await createEndpoint({ url: "https://hooks.example.com/a" })
    const path = `/v2/webhooks/endpoints/${id}`
    // The spec's PATCH takes subscription and status only: a url there was a silent no-op before.
    const url = await call("PATCH", path, { url: "https://hooks.example.com/b" })
    const problem = expectProblem(url, { type: "VALIDATION_ERROR", status: 400, instance: `/sandbox${path}`, nowMs: START_MS })
    expect(problem.errors).toEqual([{ pointer: "/url", detail: "is not allowed" }])
    const nested = await call("PATCH", path, {
      status: "disabled",
      statsu: "active",
      subscription: { mode: "selected", eventTypes: ["order.failed"], evenTypes: ["order.created"] },
      "a/b": 1
    })
    expectProblem(nested, { type: "VALIDATION_ERROR", status: 400, instance: `/sandbox${path}`, nowMs: START_MS })
    expect(nested.json.errors).toEqual(expect.arrayContaining([
      { pointer: "/statsu", detail: "is not allowed" },
      { pointer: "/subscription/evenTypes", detail: "is not allowed" },
      { pointer: "/a~1b", detail: "is not allowed" }
    ]))
    expect(nested.json.errors).toHaveLength(3)
    // A member of the other shape of the subscription union is unknown in this one.
    const other = await call("PATCH", path, { subscription: { mode: "all", eventTypes: ["order.failed"] } })
    expect(other.json.errors).toEqual([{ pointer: "/subscription/eventTypes", detail: "is not allowed" }])
    const read = await call("GET", path)
    expect(read.json).toMatchObject({ url: "https://hooks.example.com/a", status: "active", subscription: { mode: "all" } })
    // On create too, and nothing is created.
    const created = await call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.example.com/c", secret: "whsec_mine" })
    expect(created.json.errors).toEqual([{ pointer: "/secret", detail: "is not allowed" }])
    expect((await call("GET", "/v2/webhooks/endpoints")).json.meta.total).toBe(1)
  })

  it("refuses unknown query parameters, on lists and on endpoints that take no query", async () => {
    await start()
    const { id } = await createEndpoint()
    const list = await call("GET", "/v2/webhooks/endpoints?limit=5&limt=5")
    expectProblem(list, { type: "VALIDATION_ERROR", status: 400, instance: "/sandbox/v2/webhooks/endpoints", nowMs: START_MS })
    expect(list.json.errors).toEqual([{ pointer: "/limt", detail: "is not allowed" }])
    const deliveries = await call("GET", "/v2/webhooks/deliveries?statuss=failed&eventType=order.created")
    expect(deliveries.json.errors).toEqual([{ pointer: "/statuss", detail: "is not allowed" }])
    const one = await call("GET", `/v2/webhooks/endpoints/${id}?expand=deliveries`)
    expectProblem(one, { type: "VALIDATION_ERROR", status: 400, instance: `/sandbox/v2/webhooks/endpoints/${id}`, nowMs: START_MS })
    expect(one.json.errors).toEqual([{ pointer: "/expand", detail: "is not allowed" }])
    // An empty query string, or a bare `?`, names no parameter.
    expect((await call("GET", `/v2/webhooks/endpoints/${id}?`)).status).toBe(200)
    expect((await call("GET", "/v2/webhooks/endpoints?limit=5")).status).toBe(200)
  })

  it("lists the 48 event types, each with an example envelope, awaiting_user_signature deprecated", async () => {
    await start()
    const r = await call("GET", "/v2/webhooks/event-types")
    expect(r.json.data).toHaveLength(48)
    expect(r.json.data.map((t: { type: string }) => t.type)).toEqual([...EventTypes])
    const deprecated = r.json.data.filter((t: { deprecated: boolean }) => t.deprecated).map((t: { type: string }) => t.type)
    expect(deprecated).toEqual(["transaction.awaiting_user_signature"])
    for (const t of r.json.data) expect(t.example).toMatchObject({ type: t.type, apiVersion: "2" })
  })
})

describe("webhook delivery", () => {
  it("signs the raw bytes, sends the headers, and a receiver can verify with node:crypto", async () => {
    const received = await start()
    const { id, secret } = await createEndpoint()
    const beforeS = Math.floor(Date.now() / 1000)
    const emitted = await emit("order.created")
    const afterS = Math.floor(Date.now() / 1000)
    expect(emitted.status).toBe(201)
    expect(received).toHaveLength(1)
    const delivery = received[0]!
    expect(delivery.headers["x-service-event"]).toBe("order.created")
    expect(delivery.headers["x-service-delivery-id"]).toMatch(/^wda_/)
    expect(delivery.headers["content-type"]).toBe("application/json")
    const check = verify(delivery, [secret])
    expect(check.matches).toEqual([true])
    expect(check.v1s).toHaveLength(1)
    // `t` is real time (what the receiver checks against its own clock), while the event's time is the engine's.
    expect(check.t).toBeGreaterThanOrEqual(beforeS)
    expect(check.t).toBeLessThanOrEqual(afterS)
    const body = JSON.parse(delivery.body)
    expect(body).toMatchObject({ id: emitted.json.id, type: "order.created", apiVersion: "2", mode: "sandbox" })
    expect(body.createdAt).toBe(new Date(START_MS).toISOString())
    const list = await call("GET", `/v2/webhooks/deliveries?endpointId=${id}`)
    expect(list.json.data).toHaveLength(1)
    expect(list.json.data[0]).toMatchObject({ status: "succeeded", attempts: 1, eventType: "order.created" })
  })

  it("retries on the exact timetable: +30 s (not +29 s), +2 min, +15 min, +1 h, then failed at 77.5 minutes", async () => {
    const received = await start(() => 500)
    await createEndpoint()
    await emit()
    expect(received.map((r) => r.atMs - START_MS)).toEqual([0])
    await advance(29_000)
    expect(received).toHaveLength(1)
    await advance(1_000)
    expect(received.map((r) => r.atMs - START_MS)).toEqual([0, 30_000])
    await advance(2 * 60 * 60 * 1000)
    const offsets = received.map((r) => (r.atMs - START_MS) / 1000)
    expect(offsets).toEqual([0, 30, 150, 1050, 4650])
    // Every attempt sent the same event, byte for byte.
    expect(new Set(received.map((r) => r.body)).size).toBe(1)
    const deliveries = await call("GET", "/v2/webhooks/deliveries?status=FAILED")
    expect(deliveries.json.data).toHaveLength(1)
    const detail = await call("GET", `/v2/webhooks/deliveries/${deliveries.json.data[0].id}`)
    expect(detail.json.status).toBe("failed")
    expect(detail.json.attemptList.map((a: { number: number; responseStatus: number; error: string }) => [a.number, a.responseStatus, a.error])).toEqual(
      [1, 2, 3, 4, 5].map((n) => [n, 500, "answered 500"])
    )
    expect(detail.json.attemptList[4].startedAt).toBe(new Date(START_MS + 4_650_000).toISOString())
    // X-Service-Delivery-Id is the attempt's own id (wda_), one per attempt, the ids the attempt list shows.
    const sentIds = received.map((r) => r.headers["x-service-delivery-id"])
    expect(new Set(sentIds).size).toBe(5)
    for (const id of sentIds) expect(id).toMatch(/^wda_[0-9a-z]+$/)
    expect(detail.json.attemptList.map((a: { id: string }) => a.id)).toEqual(sentIds)
  })

  it("a manual retry works only on a failed delivery and starts a new run of 5 attempts", async () => {
    let healthy = false
    const received = await start(() => (healthy ? 200 : 503))
    await createEndpoint()
    await emit()
    const id = (await call("GET", "/v2/webhooks/deliveries")).json.data[0].id
    const early = await call("POST", `/v2/webhooks/deliveries/${id}/retry`)
    expectProblem(early, { type: "WEBHOOK_DELIVERY_NOT_RETRYABLE", status: 422, instance: `/sandbox/v2/webhooks/deliveries/${id}/retry`, nowMs: START_MS })
    await advance(2 * 60 * 60 * 1000)
    expect(received).toHaveLength(5)
    healthy = true
    const retried = await call("POST", `/v2/webhooks/deliveries/${id}/retry`)
    expect(retried.status).toBe(202)
    await engine.deliveries.flush()
    expect(received).toHaveLength(6)
    const detail = await call("GET", `/v2/webhooks/deliveries/${id}`)
    expect(detail.json).toMatchObject({ status: "succeeded", run: 2, attempts: 1 })
    expectProblem(await call("POST", `/v2/webhooks/deliveries/${id}/retry`), { type: "WEBHOOK_DELIVERY_NOT_RETRYABLE", status: 422, instance: `/sandbox/v2/webhooks/deliveries/${id}/retry` })
  })

  it("a deleted endpoint's queued delivery ends failed at its next attempt, sending nothing more", async () => {
    const received = await start(() => 503)
    const endpoint = await createEndpoint()
    await emit()
    expect(received).toHaveLength(1)
    const id = (await call("GET", "/v2/webhooks/deliveries")).json.data[0].id
    expect((await call("GET", `/v2/webhooks/deliveries/${id}`)).json).toMatchObject({ status: "pending", attempts: 1 })
    expect((await call("DELETE", `/v2/webhooks/endpoints/${endpoint.id}`)).status).toBe(204)
    await advance(30_000)
    expect(received).toHaveLength(1)
    const detail = (await call("GET", `/v2/webhooks/deliveries/${id}`)).json
    expect(detail).toMatchObject({ status: "failed", run: 1, attempts: 1 })
    expect(detail).not.toHaveProperty("nextAttemptAt")
    expect(detail.attemptList).toHaveLength(1)
  })

  it("signs with both secrets for 48 hours after a rotation, then with the new one only", async () => {
    const received = await start()
    const { id, secret: old } = await createEndpoint()
    const rotated = (await call("POST", `/v2/webhooks/endpoints/${id}/rotate`, undefined, { "idempotency-key": "r" })).json.secret as string
    await emit()
    const during = verify(received[0]!, [rotated, old])
    expect(during.v1s).toHaveLength(2)
    expect(during.matches).toEqual([true, true])
    await advance(48 * 60 * 60 * 1000 + 1000)
    await emit()
    const after = verify(received[1]!, [rotated, old])
    expect(after.v1s).toHaveLength(1)
    expect(after.matches).toEqual([true, false])
  })

  it("signatureClock: t is real time by default, the engine's clock with \"engine\"; createdAt follows the engine's clock either way", async () => {
    const by = 49 * 3600 * 1000
    const realMs = Date.parse("2030-06-01T08:00:00.000Z")
    const real = Timers.makeVirtualClock(realMs)
    const onReal = await start(() => 200, { realClock: real })
    const { secret } = await createEndpoint()
    await advance(by)
    real.set(realMs + 2000)
    await emit()
    // A receiver checks t against its own clock, as it does against the real service.
    expect(verify(onReal[0]!, [secret]).t).toBe(realMs / 1000 + 2)
    const event = await verifyWebhook(onReal[0]!.body, onReal[0]!.headers["x-service-signature"], { secret, now: realMs + 2000 })
    expect(event.createdAt).toBe(new Date(START_MS + by).toISOString())
    await expect(verifyWebhook(onReal[0]!.body, onReal[0]!.headers["x-service-signature"], { secret, now: await engine.clock.now() }))
      .rejects.toMatchObject({ reason: "timestamp_in_future" })
    await engine.close()

    const received = await start(() => 200, { signatureClock: "engine" })
    const second = await createEndpoint()
    await advance(by)
    await emit()
    // A receiver on the engine's (virtual) clock verifies against engine.clock.now().
    const onEngine = await verifyWebhook(received[0]!.body, received[0]!.headers["x-service-signature"], { secret: second.secret, now: await engine.clock.now() })
    expect(verify(received[0]!, [second.secret]).t).toBe((START_MS + by) / 1000)
    expect(onEngine.createdAt).toBe(new Date(START_MS + by).toISOString())
  })

  it("fans out to every active subscribed endpoint; a disabled endpoint gets nothing new but its queue keeps retrying", async () => {
    const received = await start(() => 500)
    const all = await createEndpoint({ url: "https://a.example.com/h" })
    const orders = await createEndpoint({ url: "https://b.example.com/h", subscription: { mode: "selected", eventTypes: ["order.created"] } })
    await emit("customer.created")
    expect(received.map((r) => r.url)).toEqual(["https://a.example.com/h"])
    await emit("order.created")
    expect(received.slice(1).map((r) => r.url).sort()).toEqual(["https://a.example.com/h", "https://b.example.com/h"])
    await call("PATCH", `/v2/webhooks/endpoints/${all.id}`, { status: "disabled" })
    await emit("order.created")
    expect(received.slice(3).map((r) => r.url)).toEqual(["https://b.example.com/h"])
    // The two deliveries queued for the now disabled endpoint still get their second attempt.
    await advance(30_000)
    expect(received.slice(4).filter((r) => r.url === "https://a.example.com/h")).toHaveLength(2)
    expect(orders.id).toMatch(/^wep_/)
  })

  it("deliveries list: status is case-insensitive; unknown or repeated status is 400; eventType is exact; filters combine", async () => {
    await start((n) => (n === 1 ? 200 : 500))
    const a = await createEndpoint({ url: "https://a.example.com/h" })
    await emit("customer.created")
    await createEndpoint({ url: "https://b.example.com/h" })
    await emit("order.created")
    const path = "/v2/webhooks/deliveries"
    expect((await call("GET", `${path}?status=Succeeded`)).json.data).toHaveLength(1)
    expect((await call("GET", `${path}?status=pending`)).json.data).toHaveLength(2)
    expectProblem(await call("GET", `${path}?status=done`), { type: "VALIDATION_ERROR", status: 400, instance: `/sandbox${path}` })
    expect((await call("GET", `${path}?status=pending&status=failed`)).status).toBe(400)
    expect((await call("GET", `${path}?eventType=order.created`)).json.data).toHaveLength(2)
    expect((await call("GET", `${path}?eventType=ORDER.CREATED`)).json.data).toEqual([])
    expect((await call("GET", `${path}?eventType=no.such.type`)).json.data).toEqual([])
    expect((await call("GET", `${path}?eventType=order.created&endpointId=${a.id}&status=pending`)).json.data).toHaveLength(1)
    expect((await call("GET", `${path}?endpointId=bad`)).json.type).toBe("INVALID_OID_FORMAT")
  })
})
