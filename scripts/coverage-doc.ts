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
 * - Error codes: each code of the catalog (`ErrorCatalog`, which a test holds to the spec's table) is reachable when
 *   the server's code (packages/{core,http,contract}/src and adapters/<name>/src, the catalog itself aside) names it
 *   as a string, which is how every problem is raised (`apiError("CUSTOMER_NOT_FOUND", ...)`).
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

/** The error codes the server can raise. */
export const reachableCodes = (): Set<string> => {
  const adapters = readdirSync(join(repoRoot, "adapters")).map((name) => `adapters/${name}/src`).filter((dir) => {
    try {
      return statSync(join(repoRoot, dir)).isDirectory()
    } catch {
      return false
    }
  })
  const catalog = new Set(["kernel/Errors.ts", "kernel/ErrorReference.ts"].map((f) => join(repoRoot, "packages/contract/src", f)))
  const files = sources(["packages/core/src", "packages/http/src", "packages/contract/src", ...adapters]).filter((f) => !catalog.has(f))
  return quoted(files, /"([A-Z][A-Z0-9_]+)"/g)
}

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
  const reachable = reachableCodes()

  const lines: Array<string> = [
    "# Coverage of the spec",
    "",
    "<!-- Generated by scripts/coverage-doc.ts from the API definition, the event and error catalogs and the engine's sources, against the spec's tables. Do not edit by hand. -->",
    "",
    "What fos implements today, row by row of the spec's own tables. Every event of the spec, with its payload",
    "schema, and every error code are in the contract's catalogs (`@fos/contract`), and what fos serves follows the",
    "spec; but not every event is emitted and not every error code can be met yet. A path the spec names that fos",
    "does not serve answers `404 NOT_FOUND`, as any unknown route does.",
    "",
    `- **Endpoints:** ${implemented.length} of the spec's ${endpoints.length} named endpoints are implemented, and ${extra.length} more that the spec leaves open (simulate endpoints, reads of what fos creates).`,
    `- **Events:** ${events.filter((e) => emitted.has(e)).length} of the spec's ${events.length} events are emitted by the engine; every one of them can be sent as its example by \`POST /sandbox/v2/simulate/events\`.`,
    `- **Error codes:** ${codes.filter((c) => reachable.has(c)).length} of the ${codes.length} codes of the catalog can be raised.`,
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
    "| Code | HTTP status | Reachable |",
    "|---|---|---|",
    ...codes.map((c) => `| [${c}](errors.md#${c.toLowerCase()}) | ${ErrorCatalog[c].status} | ${mark(reachable.has(c), "not yet")} |`),
    ""
  ]
  return lines.join("\n")
}

if (isMain(import.meta.url)) {
  writeFileSync(coverageDocPath, renderCoverageDoc())
  console.log(`wrote ${relative(process.cwd(), coverageDocPath)}`)
}
