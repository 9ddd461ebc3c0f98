/**
 * Router.ts serves the HttpApi's endpoints itself; these check that it reads each endpoint the way HttpApi does,
 * against what HttpApi's own OpenAPI generator documents for the same endpoint.
 */
import { Api, policyOf } from "@fos/contract"
import { statusOf } from "../packages/http/src/Router.ts"
import { group, handlersOf } from "../packages/http/src/HandlerGroups.ts"
import { describe, expect, it } from "vitest"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Context, Effect, Layer, Schema } from "effect"

describe("the router's reading of the API", () => {
  const document = OpenApi.fromApi(Api) as unknown as {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
  }
  const endpoints = Object.values(Api.groups).flatMap((group) => Object.values(group.endpoints))

  it("answers every endpoint with the success status its OpenAPI entry documents", () => {
    expect(endpoints.length).toBeGreaterThan(30)
    for (const endpoint of endpoints) {
      const successes = [...endpoint.success] as ReadonlyArray<Schema.Top>
      expect(successes.length, endpoint.identifier).toBeLessThanOrEqual(1)
      const status = successes.length === 0 ? 204 : statusOf(successes[0]!.ast)
      const path = endpoint.path.replace(/:(\w+)/g, "{$1}")
      const documented = Object.keys(document.paths[path]![endpoint.method.toLowerCase()]!.responses).map(Number).filter((s) => s < 300)
      expect(documented, `${endpoint.method} ${endpoint.path}`).toEqual([status])
    }
  })

  it("reads the policies the server does not take from HTTP from the contract's annotations", () => {
    const named = (pick: (policy: ReturnType<typeof policyOf>) => unknown) =>
      Object.values(Api.groups).flatMap((group) =>
        Object.values(group.endpoints).filter((endpoint) => pick(policyOf(endpoint, group))).map((endpoint) => `${group.identifier}.${endpoint.identifier}`)
      )
    // Each waits on something outside its own transaction: the clock's timers, the deliveries' attempts, a listener's
    // next request or its attempt's report; or, a snapshot file's import, checks its file before its one transaction.
    expect(named((p) => !p.transactional)).toEqual([
      "simulate.importSnapshot",
      "simulate.advanceClock",
      "simulate.flushWebhooks",
      "listeners.pollListener",
      "listeners.reportAttempt"
    ])
    expect(named((p) => p.rereadOnReplay)).toEqual(["payouts.create"])
    // A snapshot's file: a larger body, read by the engine in its own order; and an attachment.
    expect(named((p) => p.maxBodyBytes !== undefined)).toEqual(["simulate.importSnapshot"])
    expect(named((p) => p.decodedByEngine)).toEqual(["simulate.importSnapshot"])
    expect(named((p) => p.attachment !== undefined)).toEqual(["simulate.exportSnapshot"])
    // The simulate calls act, the faults break, the outcome rules decide, the listeners forward, the inspect reads
    // look: all are the sandbox's alone.
    const sandboxGroups = (["simulate", "faults", "outcomes", "listeners", "inspect"] as const).flatMap((g) => Object.keys(Api.groups[g].endpoints).map((name) => `${g}.${name}`))
    expect(named((p) => p.sandboxOnly)).toEqual(sandboxGroups)
  })
})

describe("a group's handlers (HandlerGroups.ts)", () => {
  const Things = HttpApiGroup.make("things")
    .add(HttpApiEndpoint.get("one", "/one", { success: Schema.String }))
    .add(HttpApiEndpoint.get("two", "/two", { success: Schema.String }))
  const Small = HttpApi.make("small").add(Things)
  const groupOf = Small.groups.things as unknown as HttpApiGroup.Top
  const build = (layer: Layer.Layer<any, any, any>) => Effect.runSync(Effect.scoped(Layer.build(layer as Layer.Layer<unknown>))) as Context.Context<never>

  it("keeps each endpoint with its handler, where the router reads them", () => {
    const one = () => Effect.succeed("1")
    const two = () => Effect.succeed("2")
    const handlers = handlersOf(build(group(Small, "things", (h) => h.handle("one", one).handle("two", two))), groupOf)!
    expect([...handlers.keys()]).toEqual(["one", "two"])
    expect(handlers.get("one")!.endpoint).toBe(Small.groups.things.endpoints.one)
    expect(handlers.get("two")!.handler).toBe(two)
    expect(handlersOf(Context.empty(), groupOf)).toBeUndefined()
  })

  it("refuses a second handler for an endpoint, and raw handlers, which the router does not serve", () => {
    const one = () => Effect.succeed("1")
    expect(() => build(group(Small, "things", (h) => (h as any).handle("one", one).handle("one", one).handle("two", one)))).toThrow(/already registered/)
    expect(() => build(group(Small, "things", (h) => (h as any).handleRaw("one", one)))).toThrow(/handleRaw/)
  })
})
