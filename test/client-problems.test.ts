/**
 * The typed client's refusals are the server's kind of error: a request whose payload or path its endpoint's schema
 * refuses is not sent, and rejects with a `ProblemError` whose problem is shaped as the server's answer to the same
 * request (VALIDATION_ERROR, status 400, the catalogue's title and resolution, a pointer per issue).
 */
import { createClient, ProblemError } from "@fos/client"
import { Problem } from "@fos/contract"
import { Timers } from "@fos/core"
import { createEngine } from "@fos/http"
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { closedAfterEach } from "./stores.ts"
import { keysOf, orgSeed, seedOf, START_MS } from "./support.ts"

const after = closedAfterEach()

describe("the typed client's refusals", () => {
  it("a payload of the wrong shape rejects with the problem error the server would answer, and sends nothing", async () => {
    const engine = after.engine(await createEngine({
      store: "memory",
      clock: { mode: "virtual", start: START_MS },
      realClock: Timers.makeVirtualClock(START_MS),
      webhookTransport: "memory",
      seed: seedOf(orgSeed("acme")) as never
    }))
    let sent = 0
    const client = createClient({ baseUrl: "http://fos/sandbox", apiKey: keysOf("acme").sandbox, fetch: (input, init) => (sent++, engine.fetch(new Request(input, init))) })
    const refused = await (client.webhooks.createEndpoint as (request: unknown) => Promise<unknown>)({ payload: { url: 42 } }).then(() => undefined, (e: unknown) => e)
    expect(sent).toBe(0)
    expect(refused).toBeInstanceOf(ProblemError)
    const problem = (refused as ProblemError).problem
    expect(Schema.is(Problem)(problem)).toBe(true)
    // The server's answer to the same request, sent past the client.
    const answer = await engine.fetch(new Request("http://fos/sandbox/v2/webhooks/endpoints", {
      method: "POST",
      headers: { "x-api-key": keysOf("acme").sandbox, "content-type": "application/json" },
      body: JSON.stringify({ url: 42 })
    }))
    const server = await answer.json() as Problem
    expect(answer.status).toBe(400)
    expect(Object.keys(problem).sort()).toEqual(Object.keys(server).sort())
    const { type, title, status, resolution, docs, instance } = server
    expect(problem).toMatchObject({ type, title, status, resolution, docs, instance })
    expect((refused as ProblemError).status).toBe(400)
    expect(problem.errors?.map((e) => e.pointer)).toEqual(server.errors?.map((e) => e.pointer))
  })
})
