/**
 * Generates docs/coverage.md: how much of the spec fos implements today, measured against the spec's own tables.
 *
 * The spec's tables are read from spec-facts.json (packages/core/test/spec.ts), which a test holds to the spec's text.
 *
 * - Endpoints: each row of the spec's two endpoint tables ("Webhook management", "Other endpoints that are named")
 *   is implemented when the API definition (`Api`, packages/contract/src/api) has an endpoint of that method and
 *   path (parameter names aside). Endpoints fos has beyond those tables are listed after them.
 * - Events: each event of the spec's Events table is emitted when the engine (packages/core/src) names it as a
 *   string, which is how every emission is written (`emitEvent({ type: "customer.created", ... })`); the event
 *   catalog (`EventTypes`) has them all, and `POST /sandbox/v2/simulate/events` sends any of them as its example.
 * - Error codes: each code of the catalog (`ErrorCatalog`, which a test holds to the spec's table) counts as raised
 *   only where a black-box test raises it through the API and asserts it: a test file under test/ (they drive the
 *   running server or the engine's web handler, never the engine's functions for this) holds the code as a
 *   problem's `type` in an expectation. Three forms are read, the ones those tests write: a member `type: "CODE"`
 *   (the expected problem given to `expectProblem`, or a `toMatchObject`/`toEqual` of a problem body),
 *   `.type).toBe("CODE")` (a `.not.toBe` is not a claim that the code was raised, and does not match), and the code
 *   given to a file's own helper that hands its `type: string` parameter to `expectProblem` (written on one line,
 *   `const refused = async (body, type: string) => expectProblem(..., { type, ... })`). A code whose
 *   name only appears in the server's sources does not count: naming it is not meeting it. A test that builds the
 *   code from a variable (`it.each` tables) is not seen, so the count can only err low. Codes are upper-case
 *   identifiers only the problem catalog has, so a match is not confused with an event type or a request value.
 *
 * Run with `node scripts/coverage-doc.ts`; a test regenerates it and compares, so the table cannot fall behind.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { Api } from "../packages/contract/src/api/Api.ts"
import { EventTypes } from "../packages/contract/src/events/Events.ts"
import { ErrorCatalog, type ErrorCode } from "../packages/contract/src/kernel/Errors.ts"
import { type SpecFacts, specFacts } from "../packages/core/test/spec.ts"
import { isMain } from "./isMain.ts"

const repoRoot = fileURLToPath(new URL("..", import.meta.url))

/** Where the generated file lives. */
export const coverageDocPath: string = fileURLToPath(new URL("../docs/coverage.md", import.meta.url))

/** A path with its parameters' names dropped: `/v2/customers/{customerId}` and `/v2/customers/:id` agree. */
const shape = (path: string): string => path.replace(/\{[^}]+\}|:[A-Za-z]+/g, "{}")

/** The TypeScript sources under `dirs` (relative to the repository), tests and builds aside. */
const sources = (dirs: ReadonlyArray<string>): Array<string> => {
  const walk = (dir: string): Array<string> =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) return name === "node_modules" || name === "dist" || name === "test" ? [] : walk(path)
      return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : []
    })
  return dirs.flatMap((dir) => walk(join(repoRoot, dir))).sort()
}

/** Every double-quoted string in `files` matching `pattern`. */
const quoted = (files: ReadonlyArray<string>, pattern: RegExp): Set<string> => {
  const found = new Set<string>()
  for (const file of files) for (const match of readFileSync(file, "utf8").matchAll(pattern)) found.add(match[1]!)
  return found
}

/** The event types the engine emits. */
export const emittedEvents = (): Set<string> => quoted(sources(["packages/core/src"]), /"([a-z_]+\.[a-z_]+)"/g)

/**
 * The black-box test files: test/*.test.ts, which drive the API (the server or the engine's web handler); the test
 * of this table aside, whose examples of the rule raise nothing.
 */
const apiTestFiles = (): Array<string> => {
  const dir = join(repoRoot, "test")
  return readdirSync(dir).filter((name) => name.endsWith(".test.ts") && name !== "coverage.test.ts").map((name) => join(dir, name)).sort()
}

/** The catalog's codes one test file's text asserts as a raised problem's `type` (the rule is at the top of this file). */
export const assertedCodes = (text: string): Set<string> => {
  const found = new Set<string>()
  for (const match of text.matchAll(/\btype:\s*"([A-Z][A-Z0-9_]+)"/g)) found.add(match[1]!)
  for (const match of text.matchAll(/\.type\)\s*\.toBe\(\s*"([A-Z][A-Z0-9_]+)"\s*\)/g)) found.add(match[1]!)
  // A helper of the file that asserts the problem type it is given: `const NAME = (..., type: string, ...) => ...expectProblem(..., { type`.
  for (const helper of text.matchAll(/const (\w+) = (?:async )?\([^)\n]*\btype: string[^)\n]*\) =>[^\n]*expectProblem\([^\n]*\{ type\b/g)) {
    for (const line of text.split("\n")) {
      if (!line.includes(`${helper[1]}(`) || line.includes(`const ${helper[1]} =`)) continue
      for (const code of line.matchAll(/"([A-Z][A-Z0-9_]+)"/g)) found.add(code[1]!)
    }
  }
  return new Set([...found].filter((code) => code in ErrorCatalog))
}

/** The error codes the black-box tests raise through the API and assert. */
export const raisedCodes = (): Set<string> => new Set(apiTestFiles().flatMap((file) => [...assertedCodes(readFileSync(file, "utf8"))]))

const mark = (yes: boolean, no: string): string => (yes ? "yes" : no)

/** The full text of docs/coverage.md, measured against the spec's tables (spec-facts.json). */
export const renderCoverageDoc = (spec: SpecFacts = specFacts()): string => {
  const apiEndpoints = Object.values(Api.groups).flatMap((group) =>
    Object.values(group.endpoints).map((endpoint) => ({ method: endpoint.method, path: endpoint.path }))
  )
  const served = new Set(apiEndpoints.map((e) => `${e.method} ${shape(e.path)}`))
  const endpoints = spec.endpoints
  const inSpec = new Set(endpoints.map((e) => `${e.method} ${shape(e.path)}`))
  const extra = apiEndpoints.filter((e) => !inSpec.has(`${e.method} ${shape(e.path)}`))
  const implemented = endpoints.filter((e) => served.has(`${e.method} ${shape(e.path)}`))

  const events = spec.events
  const emitted = emittedEvents()
  const catalogEvents = new Set<string>(EventTypes)
  const codes = Object.keys(ErrorCatalog) as Array<ErrorCode>
  const raised = raisedCodes()

  const lines: Array<string> = [
    "# Coverage of the spec",
    "",
    "<!-- Generated by scripts/coverage-doc.ts from the API definition, the event and error catalogs, the engine's sources and the black-box tests, against the spec's tables. Do not edit by hand. -->",
    "",
    "What fos implements today, row by row of the spec's own tables. Every event of the spec, with its payload",
    "schema, and every error code are in the contract's catalogs (`@fos/contract`), and what fos serves follows the",
    "spec; but not every event is emitted and not every error code is met yet (a code counts once a test meets it",
    "through the API). A path the spec names that fos",
    "does not serve answers `404 NOT_FOUND`, as any unknown route does.",
    "",
    `- **Endpoints:** ${implemented.length} of the spec's ${endpoints.length} named endpoints are implemented, and ${extra.length} more that the spec leaves open (simulate endpoints, reads of what fos creates).`,
    `- **Events:** ${events.filter((e) => emitted.has(e)).length} of the spec's ${events.length} events are emitted by the engine; every one of them can be sent as its example by \`POST /sandbox/v2/simulate/events\`.`,
    `- **Error codes:** ${codes.filter((c) => raised.has(c)).length} of the ${codes.length} codes of the catalog are raised through the API by a test that asserts them.`,
    "",
    "How each column is decided is written at the top of `scripts/coverage-doc.ts`.",
    "",
    "## Endpoints named by the spec",
    "",
    "| Method | Path | Spec table | Implemented |",
    "|---|---|---|---|",
    ...endpoints.map((e) => `| ${e.method} | \`${e.path}\` | ${e.table} | ${mark(served.has(`${e.method} ${shape(e.path)}`), "not yet")} |`),
    "",
    "## Endpoints beyond the spec's tables",
    "",
    "The spec says its endpoint list is not complete, and that simulate endpoints exist without giving their paths.",
    "",
    "| Method | Path |",
    "|---|---|",
    ...extra.map((e) => `| ${e.method} | \`${e.path.replace(/:([A-Za-z]+)/g, "{$1}")}\` |`),
    "",
    "## Events",
    "",
    "| Event | In the catalog | Emitted by the engine |",
    "|---|---|---|",
    ...events.map((e) => `| \`${e}\` | ${mark(catalogEvents.has(e), "no")} | ${mark(emitted.has(e), "not yet")} |`),
    "",
    "## Error codes",
    "",
    "| Code | HTTP status | Raised by a test through the API |",
    "|---|---|---|",
    ...codes.map((c) => `| [${c}](errors.md#${c.toLowerCase()}) | ${ErrorCatalog[c].status} | ${mark(raised.has(c), "not yet")} |`),
    ""
  ]
  return lines.join("\n")
}

if (isMain(import.meta.url)) {
  writeFileSync(coverageDocPath, renderCoverageDoc())
  console.log(`wrote ${relative(process.cwd(), coverageDocPath)}`)
}
