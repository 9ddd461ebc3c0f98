/**
 * The response-schema check (responseSchemas.ts) finds each kind of break, on answers the engine really gave
 * and on the same answers deliberately broken: a member of the wrong type, a missing required member, a status the
 * operation does not declare, a content type it does not declare, a body where none is declared; and it matches
 * a path to its template (a literal segment before a parameter), and leaves answers to undocumented paths alone.
 */
import { createEngine, type Engine } from "@fos/http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { RecordedResponse } from "./responseRecorder.ts"
import { checkResponses } from "./responseSchemas.ts"
import { call, keysOf, orgSeed, seedOf } from "./support.ts"

let engine: Engine
const key = keysOf("acme").sandbox

beforeAll(async () => {
  engine = await createEngine({ clock: { mode: "virtual", start: "2026-06-01T09:00:00.000Z" }, seed: seedOf(orgSeed("acme")) as never })
})
afterAll(async () => {
  await engine?.close()
})

const answer = async (method: string, path: string, body?: unknown): Promise<RecordedResponse> => {
  const reply = await call(engine, path, { method, key, ...(body === undefined ? {} : { body }) })
  return { method, path, status: reply.status, contentType: reply.headers.get("content-type") ?? "", body: reply.text }
}

const withBody = (a: RecordedResponse, body: unknown): RecordedResponse => ({ ...a, body: JSON.stringify(body) })

describe("the response-schema check", () => {
  it("passes the engine's own answers: a list, a created resource, a problem, an empty 204", async () => {
    const list = await answer("GET", "/sandbox/v2/webhooks/endpoints")
    const created = await answer("POST", "/sandbox/v2/webhooks/endpoints", { url: "https://hooks.acme.example/fos" })
    const missing = await answer("GET", "/sandbox/v2/customers/cus_doesnotexist")
    const deleted = await answer("DELETE", `/sandbox/v2/webhooks/endpoints/${JSON.parse(created.body).id}`)
    expect([list.status, created.status, missing.status, deleted.status]).toEqual([200, 201, 404, 204])
    expect(checkResponses([list, created, missing, deleted])).toEqual({ checked: 4, unmatched: 0, findings: [] })
  })

  it("finds a member of the wrong type, and a missing required member", async () => {
    const created = await answer("POST", "/sandbox/v2/webhooks/endpoints", { url: "https://hooks.acme.example/fos" })
    const endpoint = JSON.parse(created.body)
    const { findings } = checkResponses([withBody(created, { ...endpoint, id: 42 }), withBody(created, { ...endpoint, url: undefined })])
    expect(findings).toHaveLength(2)
    expect(findings[0]).toMatch(/^POST \/v2\/webhooks\/endpoints \(webhooks\.createEndpoint\) answered 201: the body breaks the schema: \/id must be string/)
    expect(findings[1]).toMatch(/must have required property 'url'/)
  })

  it("finds a problem that is not the Problem schema, and a timestamp that is not a date-time", async () => {
    const missing = await answer("GET", "/sandbox/v2/customers/cus_doesnotexist")
    const problem = JSON.parse(missing.body)
    const { findings } = checkResponses([withBody(missing, { ...problem, status: "404" }), withBody(missing, { ...problem, timestamp: "yesterday" })])
    expect(findings).toHaveLength(2)
    expect(findings[0]).toContain("/status must be number")
    expect(findings[1]).toContain("/timestamp must match format \"date-time\"")
  })

  it("finds a status the operation does not declare, a content type it does not declare, and a body where none is declared", async () => {
    const list = await answer("GET", "/sandbox/v2/webhooks/endpoints")
    const created = await answer("POST", "/sandbox/v2/webhooks/endpoints", { url: "https://hooks.acme.example/fos" })
    const deleted = await answer("DELETE", `/sandbox/v2/webhooks/endpoints/${JSON.parse(created.body).id}`)
    const { findings } = checkResponses([{ ...list, status: 418 }, { ...list, contentType: "text/html" }, { ...deleted, body: "{}" }, { ...list, body: "<html>" }])
    expect(findings).toHaveLength(4)
    expect(findings[0]).toContain("declares no 418, 4XX or default response")
    expect(findings[1]).toContain("content type \"text/html\" is not among the declared application/json")
    expect(findings[2]).toContain("the declared response has no content, the answer has a body")
    expect(findings[3]).toContain("the body is not JSON")
  })

  it("matches a literal segment before a parameter, and the environment's own document", async () => {
    const requirements = await answer("POST", "/sandbox/v2/payouts/requirements", { destinationType: "nonsense" })
    expect(requirements.status).toBe(400)
    const { findings } = checkResponses([withBody({ ...requirements, status: 200 }, { wrong: true })])
    expect(findings[0]).toContain("(payouts.requirements) answered 200")
    // The live document has no simulate operation: a live answer there is not an operation's.
    const live = { ...requirements, path: "/live/v2/simulate/clock" }
    expect(checkResponses([live, { ...live, path: "/docs" }])).toEqual({ checked: 0, unmatched: 2, findings: [] })
  })
})
