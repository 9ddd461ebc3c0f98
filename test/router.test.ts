/**
 * Router.ts serves the HttpApi's endpoints itself; these check that it reads each endpoint the way HttpApi does,
 * against what HttpApi's own OpenAPI generator documents for the same endpoint.
 */
import { Api } from "@fos/contract"
import { nonTransactional } from "@fos/http"
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

  it("names only endpoints of the API among those that run outside a store transaction", () => {
    const names = new Set(Object.values(Api.groups).flatMap((group) =>
      Object.values(group.endpoints).map((endpoint) => `${group.identifier}.${endpoint.identifier}`)
    ))
    expect(nonTransactional.size).toBeGreaterThan(0)
    for (const name of nonTransactional) expect(names.has(name), name).toBe(true)
  })
})
