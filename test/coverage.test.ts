/**
 * docs/coverage.md, the table of what fos implements of the spec, stays true: it is regenerated and compared, its
 * reading of the spec's tables is checked against the catalogs, and every endpoint it calls implemented or not is
 * asked through the web handler.
 */
import { readFileSync } from "node:fs"
import { EventTypes } from "@fos/contract"
import { type Engine } from "@fos/http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { assertedCodes, coverageDocPath, renderCoverageDoc } from "../scripts/coverage-doc.ts"
import { specFacts } from "../packages/core/test/spec.ts"
import { call, keysOf, makeEngine, orgSeed, seedOf } from "./support.ts"

describe("docs/coverage.md", () => {
  it("is up to date with scripts/coverage-doc.ts (run `node scripts/coverage-doc.ts`)", () => {
    expect(readFileSync(coverageDocPath, "utf8")).toBe(renderCoverageDoc())
  })

  it("counts an error code as raised only where a test asserts it as a problem's type, not where its name appears", () => {
    const text = [
      'expectProblem(r, { type: "CUSTOMER_NOT_FOUND", status: 404 })',
      'expect(reply.json.type).toBe("GONE")',
      'expect(other.json.type).not.toBe("FEATURE_NOT_ENABLED")',
      'expect(page).toContain("NO_ELIGIBLE_PROVIDER")',
      'const body = { name: "RATE_LIMITED" }',
      'const refused = async (body: Record<string, unknown>, type: string, status = 422) => expectProblem(await create(body), { type, status })',
      'await refused({ amount: "1" }, "INVALID_TRANSFER_PAIR")',
      'expectProblem(r, { type: "NOT_A_CATALOG_CODE", status: 400 })'
    ].join("\n")
    expect([...assertedCodes(text)].sort()).toEqual(["CUSTOMER_NOT_FOUND", "GONE", "INVALID_TRANSFER_PAIR"])
    // The table says the same: a code no test asserts is "not yet" even where the server's sources name it.
    const doc = readFileSync(coverageDocPath, "utf8")
    expect(doc).toContain("| [USER_ALREADY_EXISTS](errors.md#user_already_exists) | 409 | not yet |")
  })

  it("lists every event of the spec's table (spec-facts.json), and they are the event catalog", () => {
    expect([...specFacts().events].sort()).toEqual([...EventTypes].sort())
  })

  it("lists both endpoint tables of the spec, every row", () => {
    const doc = readFileSync(coverageDocPath, "utf8")
    const endpoints = specFacts().endpoints
    expect(endpoints.filter((e) => e.table === "Webhook management")).toHaveLength(10)
    for (const e of endpoints) expect(doc).toContain(`| ${e.method} | \`${e.path}\` | ${e.table} |`)
  })

  it("is linked from the README, whose first paragraph claims no more than it says", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8")
    const first = readme.split("\n\n")[1]!
    expect(first).toContain("docs/coverage.md")
    expect(first).not.toMatch(/every status, error `type`, header and field the spec names is contract/i)
  })
})

describe("the endpoints it lists, through the web handler", () => {
  const A = keysOf("cov")
  let engine: Engine
  beforeAll(async () => {
    engine = await makeEngine(seedOf(orgSeed("cov")))
  })
  afterAll(async () => engine?.close())

  /** The spec's path with each parameter given an id of the right prefix, so the path itself is well-formed. */
  const concrete = (path: string): string =>
    path.replace(/\{([^}]+)\}/g, (_, name: string, offset: number) => {
      const before = path.slice(0, offset)
      const prefix = name === "referenceId" ? "ref" : /customers\/$/.test(before) ? "cus" : /persons\/$/.test(before) ? "ref" : "x"
      return `${prefix}_coverage`
    })

  it("answers an implemented endpoint with something other than the unknown route, and the rest with it", async () => {
    const doc = readFileSync(coverageDocPath, "utf8")
    for (const e of specFacts().endpoints) {
      const row = doc.split("\n").find((line) => line.startsWith(`| ${e.method} | \`${e.path}\` |`))
      expect(row, `${e.method} ${e.path}`).toBeDefined()
      const implemented = row!.endsWith("| yes |")
      const path = `/sandbox${concrete(e.path)}`
      const reply = await call(engine, path, { method: e.method, key: A.sandbox, ...(e.method === "GET" || e.method === "DELETE" ? {} : { body: {} }) })
      const unknownRoute = reply.status === 404 && reply.json?.type === "NOT_FOUND" && String(reply.json?.detail).startsWith("No such route")
      expect(unknownRoute, `${e.method} ${path}: ${reply.status} ${reply.text.slice(0, 200)}`).toBe(!implemented)
    }
  })
})
