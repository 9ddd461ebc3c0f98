/**
 * What an embedded engine serves (`createEngine({ serve })`, docs/embedding.md, "What the engine serves"): a part
 * a host leaves out is no route, answered as a path that was never a route is, and its OpenAPI document does not
 * list it. Left out, the fault endpoints take every request fault with them.
 */
import { type CreateEngineOptions, createEngine, type Engine } from "@fos/http"
import { Timers } from "@fos/core"
import { afterEach, describe, expect, it } from "vitest"
import { keysOf, orgSeed, seedOf, START_MS } from "./support.ts"

const keys = keysOf("acme")
const operatorToken = "serves-operator-token"
const engines: Array<Engine> = []
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()))
})

const engineWith = async (options: Partial<CreateEngineOptions> = {}, token: string | null = operatorToken): Promise<Engine> => {
  const engine = await createEngine({
    clock: { mode: "virtual", start: START_MS },
    realClock: Timers.makeVirtualClock(START_MS),
    seed: seedOf(orgSeed("acme")) as never,
    webhookTransport: "memory",
    ...(token === null ? {} : { operatorToken: token }),
    ...options
  })
  engines.push(engine)
  return engine
}

interface Answer {
  readonly status: number
  readonly body: any
}

const ask = async (engine: Engine, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> => {
  const key = path.startsWith("/live/") ? keys.live : keys.sandbox
  const response = await engine.fetch(`http://fos${path}`, {
    method,
    headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
}

/** What a problem says, but for what differs per request. */
const said = (answer: Answer) => ({ status: answer.status, type: answer.body?.type, detail: answer.body?.detail })

const paths = async (engine: Engine, environment: "sandbox" | "live"): Promise<Array<string>> => {
  const response = await engine.fetch(`http://fos/${environment}/v2/openapi.json`)
  expect(response.status).toBe(200)
  return Object.keys((await response.json()).paths)
}

describe("createEngine({ serve })", () => {
  it("serves everything by default", async () => {
    const engine = await engineWith()
    expect((await ask(engine, "GET", "/sandbox/v2/simulate/requests")).status).toBe(200)
    expect((await ask(engine, "GET", "/sandbox/v2/simulate/faults")).status).toBe(200)
    expect((await ask(engine, "GET", "/live/v2/webhooks/endpoints")).status).toBe(200)
    expect((await engine.fetch("http://fos/operator/organizations", { headers: { authorization: `Bearer ${operatorToken}` } })).status).toBe(200)
    expect((await engine.fetch("http://fos/inspect")).status).toBe(200)
    expect((await paths(engine, "sandbox")).filter((p) => p.startsWith("/v2/simulate/"))).not.toEqual([])
  })

  it("simulate: false leaves every sandbox-only endpoint out, as paths that were never routes", async () => {
    const engine = await engineWith({ serve: { simulate: false } })
    const never = said(await ask(engine, "GET", "/sandbox/v2/no-such-route"))
    expect(never).toEqual({ status: 404, type: "NOT_FOUND", detail: "No such route." })
    for (const [method, path] of [["GET", "/sandbox/v2/simulate/requests"], ["POST", "/sandbox/v2/simulate/clock/advance"], ["GET", "/sandbox/v2/simulate/faults"], ["OPTIONS", "/sandbox/v2/simulate/requests"]] as const) {
      expect(said(await ask(engine, method, path, method === "POST" ? { seconds: 1 } : undefined)), `${method} ${path}`).toEqual(never)
    }
    expect((await ask(engine, "GET", "/sandbox/v2/webhooks/endpoints")).status).toBe(200)
    const listed = await paths(engine, "sandbox")
    expect(listed.filter((p) => p.startsWith("/v2/simulate/"))).toEqual([])
    expect(listed).toContain("/v2/webhooks/endpoints")
    // The inspector, whose data they are, goes with them: /inspect is a path outside the base addresses.
    const inspect = await engine.fetch("http://fos/inspect")
    expect(said({ status: inspect.status, body: await inspect.json() })).toEqual(said(await ask(engine, "GET", "/no-such-page")))
  })

  it("faults: false leaves the fault endpoints out and applies no request fault; the other simulate endpoints stay", async () => {
    const fault = { match: { method: "POST", path: "/v2/webhooks/endpoints" }, effect: { type: "commit_then_lose", lose: "dropped_connection" }, count: 1 }
    const post = (engine: Engine) =>
      engine.fetch("http://fos/sandbox/v2/webhooks/endpoints", {
        method: "POST",
        headers: { "x-api-key": keys.sandbox, "content-type": "application/json", "idempotency-key": "drop-1" },
        body: JSON.stringify({ url: "https://hooks.acme.example/fos" })
      })
    const arm = async (engine: Engine) => {
      const armed = await engine.fetch("http://fos/operator/organizations/org_acme/faults", {
        method: "POST",
        headers: { authorization: `Bearer ${operatorToken}`, "content-type": "application/json" },
        body: JSON.stringify(fault)
      })
      expect(armed.status).toBe(201)
    }
    // An engine that serves faults drops the connection; one that does not answers.
    const faulty = await engineWith()
    await arm(faulty)
    await expect(post(faulty)).rejects.toThrow(TypeError)
    const engine = await engineWith({ serve: { faults: false } })
    await arm(engine)
    expect((await post(engine)).status).toBe(201)

    const never = said(await ask(engine, "GET", "/sandbox/v2/no-such-route"))
    expect(said(await ask(engine, "GET", "/sandbox/v2/simulate/faults"))).toEqual(never)
    expect(said(await ask(engine, "POST", "/sandbox/v2/simulate/faults", fault))).toEqual(never)
    expect((await ask(engine, "GET", "/sandbox/v2/simulate/requests")).status).toBe(200)
    const listed = await paths(engine, "sandbox")
    expect(listed.filter((p) => p.includes("/faults"))).toEqual([])
    expect(listed).toContain("/v2/simulate/requests")
  })

  it("live: false leaves /live out, its OpenAPI document too; sandbox: false leaves /sandbox out", async () => {
    const sandboxOnly = await engineWith({ serve: { live: false } })
    const neverLive = said(await ask(sandboxOnly, "GET", "/live/v2/no-such-route"))
    expect(neverLive).toEqual({ status: 404, type: "NOT_FOUND", detail: "No such route." })
    expect(said(await ask(sandboxOnly, "GET", "/live/v2/webhooks/endpoints"))).toEqual(neverLive)
    expect(said(await ask(sandboxOnly, "GET", "/live/v2/openapi.json"))).toEqual(neverLive)
    expect((await ask(sandboxOnly, "GET", "/sandbox/v2/webhooks/endpoints")).status).toBe(200)

    const liveOnly = await engineWith({ serve: { sandbox: false } })
    const neverSandbox = said(await ask(liveOnly, "GET", "/sandbox/v2/no-such-route"))
    expect(said(await ask(liveOnly, "GET", "/sandbox/v2/webhooks/endpoints"))).toEqual(neverSandbox)
    expect(said(await ask(liveOnly, "GET", "/sandbox/v2/simulate/requests"))).toEqual(neverSandbox)
    expect(said(await ask(liveOnly, "GET", "/sandbox/v2/openapi.json"))).toEqual(neverSandbox)
    expect((await ask(liveOnly, "GET", "/live/v2/webhooks/endpoints")).status).toBe(200)
  })

  it("operator: false leaves the operator surface out, though a token is given", async () => {
    const engine = await engineWith({ serve: { operator: false } })
    const without = await engineWith({}, null)
    const bearer = { headers: { authorization: `Bearer ${operatorToken}` } }
    const answer = async (e: Engine) => {
      const response = await e.fetch("http://fos/operator/organizations", bearer)
      return said({ status: response.status, body: await response.json() })
    }
    expect(await answer(engine)).toMatchObject({ status: 404, type: "NOT_FOUND" })
    expect(await answer(engine)).toEqual(await answer(without))
  })
})
