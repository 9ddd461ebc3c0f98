/**
 * A client of one organization's sandbox on an embedded engine, for the benches that build a world through the API
 * (bench/snapshots.ts, bench/tester.ts): JSON calls with an Idempotency-Key on every POST, and document uploads. It
 * throws on an unexpected status. A 429 (the documents' dedicated bucket allows 5 a second) is waited out by
 * advancing the engine's clock, which refills the buckets.
 */
import type { Engine } from "@fos/http"
import { Duration } from "effect"

/** `keyPrefix` keeps its Idempotency-Keys apart from another client's (one whose world a snapshot brought back). */
export const engineClient = (engine: Engine, key: string, keyPrefix = "bench") => {
  let keys = 0
  const send = async (request: () => Promise<Response>): Promise<Response> => {
    while (true) {
      const response = await request()
      if (response.status !== 429) return response
      await response.text()
      await engine.clock.advance(Duration.seconds(Number(response.headers.get("retry-after") ?? "1")))
    }
  }
  /** A JSON call; `expected` is 201 for a POST and 200 otherwise unless given. */
  const call = async (method: string, path: string, body?: unknown, expected = method === "POST" ? 201 : 200): Promise<any> => {
    const response = await send(() =>
      engine.fetch(`http://fos/sandbox${path}`, {
        method,
        headers: {
          "x-api-key": key,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(method === "POST" ? { "idempotency-key": `${keyPrefix}-${++keys}` } : {})
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      }))
    const text = await response.text()
    if (response.status !== expected) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`)
    return text === "" ? undefined : JSON.parse(text)
  }
  /** Uploads a small PDF document of `type`; answers its id. */
  const upload = async (type: string): Promise<string> => {
    const form = new FormData()
    form.set("type", type)
    form.set("file", new Blob([new TextEncoder().encode(`%PDF-1.7\n% ${type}\n`)], { type: "application/pdf" }), `${type}.pdf`)
    const response = await send(() => engine.fetch("http://fos/sandbox/v2/documents", { method: "POST", headers: { "x-api-key": key }, body: form }))
    const text = await response.text()
    if (response.status !== 201) throw new Error(`upload ${type}: ${response.status} ${text.slice(0, 300)}`)
    return JSON.parse(text).id
  }
  return { call, upload }
}
