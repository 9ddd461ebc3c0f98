/**
 * The receiver's verifier, rule by rule (spec "Signature"), against headers signed here with node:crypto, then
 * against real deliveries from an engine, including the two v1 sent after a rotation.
 */
import { execFile } from "node:child_process"
import { createHmac } from "node:crypto"
import { join } from "node:path"
import { promisify } from "node:util"
import { createEngine } from "@fos/http"
import { it as effectIt } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import { verifyWebhook, verifyWebhookEffect, verifyWebhookRequest, WebhookVerificationError } from "../src/Webhooks.ts"

const secret = `whsec_${"5e".repeat(32)}`
const otherSecret = `whsec_${"0f".repeat(32)}`
const nowMs = Date.parse("2026-03-01T12:00:00.000Z")
const nowS = nowMs / 1000
const body = JSON.stringify({
  id: "evt_0123456789abcdefghijklmn",
  type: "customer.created",
  createdAt: "2026-03-01T12:00:00.000Z",
  apiVersion: "2",
  mode: "sandbox",
  data: { customerId: "cus_1", note: "déjà vu" }
})

const v1 = (t: number, payload: string | Uint8Array, key = secret) =>
  createHmac("sha256", key).update(Buffer.concat([Buffer.from(`${t}.`), Buffer.from(payload)])).digest("hex")
const header = (t: number, ...signatures: Array<string>) => [`t=${t}`, ...signatures.map((s) => `v1=${s}`)].join(",")

/** The reason a verification was refused for. */
const refusal = async (promise: Promise<unknown>): Promise<string> => {
  const error = await promise.then(() => undefined, (e: unknown) => e)
  expect(error).toBeInstanceOf(WebhookVerificationError)
  return (error as WebhookVerificationError).reason
}

describe("verifyWebhook", () => {
  it("accepts a good signature and returns the parsed event, from text or from the raw bytes", async () => {
    const signature = header(nowS, v1(nowS, body))
    const fromText = await verifyWebhook(body, signature, { secret, now: nowMs })
    expect(fromText).toEqual(JSON.parse(body))
    const fromBytes = await verifyWebhook(new TextEncoder().encode(body), signature, { secret, now: new Date(nowMs) })
    expect(fromBytes.data).toEqual({ customerId: "cus_1", note: "déjà vu" })
  })

  it("refuses a tampered body, and checks the bytes before parsing them", async () => {
    const signature = header(nowS, v1(nowS, body))
    expect(await refusal(verifyWebhook(body.replace("cus_1", "cus_2"), signature, { secret, now: nowMs }))).toBe("signature_mismatch")
    // Bytes that are not even JSON are refused for their signature, never handed to the parser first.
    expect(await refusal(verifyWebhook("{not json", signature, { secret, now: nowMs }))).toBe("signature_mismatch")
    // One changed byte of the raw body, with the text's other bytes the same.
    const bytes = new TextEncoder().encode(body)
    bytes[bytes.length - 3]! ^= 1
    expect(await refusal(verifyWebhook(bytes, signature, { secret, now: nowMs }))).toBe("signature_mismatch")
  })

  it("refuses a signature made with another secret, or with the secret stripped of its whsec_ prefix", async () => {
    expect(await refusal(verifyWebhook(body, header(nowS, v1(nowS, body, otherSecret)), { secret, now: nowMs }))).toBe("signature_mismatch")
    expect(await refusal(verifyWebhook(body, header(nowS, v1(nowS, body, secret.slice(6))), { secret, now: nowMs }))).toBe("signature_mismatch")
    // The signed t is part of the message: the same v1 under another t does not verify.
    expect(await refusal(verifyWebhook(body, header(nowS - 1, v1(nowS, body)), { secret, now: nowMs }))).toBe("signature_mismatch")
  })

  it("takes a t up to 300 seconds old and refuses an older one", async () => {
    const edge = nowS - 300
    await expect(verifyWebhook(body, header(edge, v1(edge, body)), { secret, now: nowMs })).resolves.toBeDefined()
    const old = nowS - 301
    expect(await refusal(verifyWebhook(body, header(old, v1(old, body)), { secret, now: nowMs }))).toBe("timestamp_too_old")
    // A tolerance of the receiver's own.
    const ten = nowS - 11
    expect(await refusal(verifyWebhook(body, header(ten, v1(ten, body)), { secret, now: nowMs, toleranceSeconds: 10 }))).toBe("timestamp_too_old")
  })

  it("refuses a t in the future beyond the tolerance", async () => {
    const ahead = nowS + 301
    expect(await refusal(verifyWebhook(body, header(ahead, v1(ahead, body)), { secret, now: nowMs }))).toBe("timestamp_in_future")
    const skew = nowS + 2
    await expect(verifyWebhook(body, header(skew, v1(skew, body)), { secret, now: nowMs })).resolves.toBeDefined()
  })

  it("accepts a match on any v1: the second of two, as sent during a rotation", async () => {
    const signature = header(nowS, v1(nowS, body, otherSecret), v1(nowS, body))
    await expect(verifyWebhook(body, signature, { secret, now: nowMs })).resolves.toBeDefined()
    // A receiver holding both secrets while it changes over accepts either.
    await expect(verifyWebhook(body, header(nowS, v1(nowS, body, otherSecret)), { secret: [secret, otherSecret], now: nowMs }))
      .resolves.toBeDefined()
  })

  it("refuses a missing or malformed header", async () => {
    const good = v1(nowS, body)
    const cases: Array<[string | null | undefined, string]> = [
      [undefined, "missing_signature"],
      [null, "missing_signature"],
      ["", "missing_signature"],
      [`v1=${good}`, "malformed_signature"],
      [`t=${nowS}`, "malformed_signature"],
      [`t=${nowS},t=${nowS},v1=${good}`, "malformed_signature"],
      [`t=soon,v1=${good}`, "malformed_signature"],
      [`t=${nowS},v1=${good.toUpperCase()}`, "malformed_signature"],
      [`t=${nowS},v1=${good.slice(2)}`, "malformed_signature"],
      [`t=${nowS},v1=${good}zz`, "malformed_signature"],
      [`t=${nowS},${Array(9).fill(`v1=${good}`).join(",")}`, "malformed_signature"],
      [`t=${nowS},v1=${good},${"x".repeat(1100)}`, "malformed_signature"],
      ["garbage", "malformed_signature"]
    ]
    for (const [value, reason] of cases) {
      expect(await refusal(verifyWebhook(body, value, { secret, now: nowMs })), String(value)).toBe(reason)
    }
    // A scheme it does not know is skipped, not an error.
    await expect(verifyWebhook(body, `t=${nowS},v0=abc,v1=${good}`, { secret, now: nowMs })).resolves.toBeDefined()
  })

  it("refuses a correctly signed body that is not an event envelope", async () => {
    for (const text of ["[1,2]", "{\"id\":\"evt_1\"}", "not json"]) {
      expect(await refusal(verifyWebhook(text, header(nowS, v1(nowS, text)), { secret, now: nowMs }))).toBe("malformed_body")
    }
    const invalidUtf8 = new Uint8Array([0x7b, 0xff, 0x7d])
    expect(await refusal(verifyWebhook(invalidUtf8, header(nowS, v1(nowS, invalidUtf8)), { secret, now: nowMs }))).toBe("malformed_body")
  })

  it("verifies a fetch-style Request from its raw body and its header", async () => {
    const request = new Request("https://receiver.example.com/hooks", {
      method: "POST",
      headers: { "content-type": "application/json", "X-Service-Signature": header(nowS, v1(nowS, body)) },
      body
    })
    expect((await verifyWebhookRequest(request, { secret, now: nowMs })).id).toBe("evt_0123456789abcdefghijklmn")
  })
})

describe("verifying what an engine sends", () => {
  it("verifies real deliveries, before and after a secret rotation", async () => {
    const key = `ck_sandbox_${"7a".repeat(32)}`
    const engine = await createEngine({
      clock: { mode: "virtual", start: "2026-03-01T12:00:00.000Z" },
      webhookTransport: "memory",
      seed: {
        organizations: [{
          id: "org_verify",
          name: "Verify",
          status: "active",
          users: [{ id: "usr_verify", email: "v@verify.test", role: "admin" }],
          apiKeys: [{ key, access: "read_write", createdBy: "usr_verify" }]
        }]
      }
    })
    try {
      const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
        const r = await engine.fetch(`http://fos/sandbox${path}`, {
          method: "POST",
          headers: { "x-api-key": key, "content-type": "application/json", ...headers },
          body: JSON.stringify(body)
        })
        return (await r.json()) as Record<string, any>
      }
      const endpoint = await post("/v2/webhooks/endpoints", { url: "https://receiver.example.com/hooks" })
      const emitted = await post("/v2/simulate/events", { type: "customer.created" })
      // Sends run in the background: wait for the attempt the event caused.
      await engine.deliveries.flush()
      const [first] = engine.deliveries.list()
      // The engine signs with real time, whatever its clock: the receiver's own clock verifies it.
      const now = Date.now()
      const event = await verifyWebhook(first!.body, first!.headers["x-service-signature"], { secret: endpoint.secret })
      expect(event.id).toBe(emitted.id)

      const rotated = await post(`/v2/webhooks/endpoints/${endpoint.id}/rotate`, {}, { "idempotency-key": "rotate-1" })
      await post("/v2/simulate/events", { type: "customer.created" })
      await engine.deliveries.flush()
      const second = engine.deliveries.list()[1]!
      expect(second.headers["x-service-signature"]!.split(",").filter((p) => p.startsWith("v1="))).toHaveLength(2)
      // Both the new secret and the previous one verify during the grace period.
      for (const s of [rotated.secret, endpoint.secret]) {
        await expect(verifyWebhook(second.body, second.headers["x-service-signature"], { secret: s, now })).resolves.toBeDefined()
      }
      // An hour later, the same delivery is refused as a replay.
      const far = await refusal(verifyWebhook(second.body, second.headers["x-service-signature"], { secret: rotated.secret, now: now + 3_600_000 }))
      expect(far).toBe("timestamp_too_old")
    } finally {
      await engine.close()
    }
  })
})

describe("on every runtime", () => {
  const root = join(import.meta.dirname, "../../..")
  const fixture = join(import.meta.dirname, "fixtures/verify.ts")
  const runtimes: Array<[string, string, Array<string>]> = [
    ["Node", process.execPath, [fixture]],
    ["Bun", join(root, "node_modules/.bin/bun"), [fixture]],
    ["Deno", join(root, "node_modules/.bin/deno"), ["run", "--quiet", fixture]]
  ]
  for (const [name, bin, args] of runtimes) {
    it(`verifies with Web Crypto alone on ${name}`, async () => {
      const verify = async (payload: string) =>
        JSON.parse((await promisify(execFile)(bin, [...args, payload, header(nowS, v1(nowS, body)), secret, String(nowMs)], { timeout: 60_000 })).stdout)
      expect(await verify(body)).toEqual({ id: "evt_0123456789abcdefghijklmn" })
      expect(await verify(body.replace("cus_1", "cus_2"))).toEqual({ reason: "signature_mismatch" })
    }, 60_000)
  }
})

describe("verifyWebhookEffect", () => {
  effectIt.effect("takes the receiver's time from the Clock, so a TestClock governs the tolerance", () =>
    Effect.gen(function*() {
      const signature = header(nowS, v1(nowS, body))
      // The TestClock starts at epoch 0: a delivery signed in 2026 is far in its future.
      const early = yield* Effect.flip(verifyWebhookEffect(body, signature, { secret }))
      expect(early.reason).toBe("timestamp_in_future")
      yield* TestClock.setTime(nowMs + 300_000)
      expect((yield* verifyWebhookEffect(body, signature, { secret })).id).toBe(JSON.parse(body).id)
      yield* TestClock.adjust(1000)
      expect((yield* Effect.flip(verifyWebhookEffect(body, signature, { secret }))).reason).toBe("timestamp_too_old")
    }))
})
