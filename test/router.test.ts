/**
 * Router.ts serves the HttpApi's endpoints itself; these check that it reads each endpoint the way HttpApi does,
 * against what HttpApi's own OpenAPI generator documents for the same endpoint.
 */
import { Api, policyOf } from "@fos/contract"
import { statusOf } from "../packages/http/src/Router.ts"
import { describe, expect, it } from "vitest"
import { OpenApi } from "effect/http-api"
import type { Schema } from "effect"

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
    expect(named((p) => !p.transactional)).toEqual(["simulate.advanceClock"])
    expect(named((p) => p.rereadOnReplay)).toEqual(["payouts.create"])
    const simulate = Object.keys(Api.groups.simulate.endpoints).map((name) => `simulate.${name}`)
    expect(named((p) => p.sandboxOnly)).toEqual(simulate)
  })
})
