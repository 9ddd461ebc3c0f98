/**
 * The OpenAPI documents as a platform team uses them, with the tools such teams use (their npm packages):
 * - every operation has a summary and a description of its own (the list names those that have none);
 * - each served document passes Redocly's recommended ruleset, its example rules included, with no error and no
 *   warning, and swagger-parser validates it;
 * - it declares what a generated client needs: the Idempotency-Key header, response headers, numbers as numbers,
 *   `limit` as an integer, formats and patterns, discriminators, typed uploads, one webhook per event type, and
 *   only what its environment serves under a base address a client can join paths onto;
 * - every request body and every success response has an example, and ajv validates each example (request,
 *   response, named schema, webhook) against its own schema;
 * - a client generated from the served document with openapi-typescript and openapi-fetch type-checks a journey
 *   that uses no cast (Idempotency-Key included, and a typed event payload) and runs it against the engine, and ajv
 *   validates every response the journey got against its operation's response schema.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import SwaggerParser from "@apidevtools/swagger-parser"
import { Api, documentationOf, ErrorCatalog, ErrorCodes, EventTypes, policyOf, requestExamples, responseExamples, TimerKinds } from "@fos/contract"
import { Context, Schema } from "effect"
import { createEngine, type Engine } from "@fos/http"
import { createConfig, lintFromString } from "@redocly/openapi-core"
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js"
import addFormats from "ajv-formats"
import openapiTS, { astToString } from "openapi-typescript"
import ts from "typescript"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { repoRoot } from "./fosProcess.ts"
import { deuSubmission } from "./onboardingFixtures.ts"
import { keysOf, orgSeed, seedOf } from "./support.ts"

type Json = Record<string, any>

let engine: Engine
const documents: Record<"sandbox" | "live", Json> = { sandbox: {}, live: {} }

beforeAll(async () => {
  engine = await createEngine({ clock: { mode: "virtual", start: "2026-06-01T09:00:00.000Z" }, seed: seedOf(orgSeed("acme")) as never })
  for (const environment of ["sandbox", "live"] as const) {
    const response = await engine.fetch(`http://fos.test/${environment}/v2/openapi.json`)
    expect(response.status).toBe(200)
    documents[environment] = await response.json()
  }
})

afterAll(async () => {
  await engine?.close()
})

const operations = (document: Json): Array<{ method: string; path: string; operation: Json }> =>
  Object.entries(document.paths as Record<string, Json>).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ method, path, operation: operation as Json }))
  )

describe("the contract's documentation", () => {
  it("gives every endpoint a summary and a description of its own (documented(...) on the endpoint)", () => {
    const missing: Array<string> = []
    for (const group of Object.values(Api.groups)) {
      for (const endpoint of Object.values(group.endpoints)) {
        const { summary, description } = documentationOf(endpoint)
        if (!summary?.trim() || !description?.trim()) missing.push(`${group.identifier}.${endpoint.identifier} (${endpoint.method} ${endpoint.path})`)
      }
    }
    expect(missing).toEqual([])
  })

  it("names, among an endpoint's own problems (ErrorCodes), only codes of the statuses it documents", () => {
    const undocumented: Array<string> = []
    for (const group of Object.values(Api.groups)) {
      for (const endpoint of Object.values(group.endpoints)) {
        const operation = documents.sandbox.paths[endpoint.path.replace(/:(\w+)/g, "{$1}")][endpoint.method.toLowerCase()]
        for (const code of Context.get(endpoint.annotations, ErrorCodes)) {
          if (operation.responses[String(ErrorCatalog[code].status)] === undefined) undocumented.push(`${group.identifier}.${endpoint.identifier}: ${code}`)
          else expect(operation.description).toContain(code)
        }
      }
    }
    expect(undocumented).toEqual([])
  })

  it("gives every JSON request body an example that its endpoint decodes (Examples.ts)", () => {
    const missing: Array<string> = []
    const used = new Set<string>()
    for (const group of Object.values(Api.groups)) {
      for (const endpoint of Object.values(group.endpoints)) {
        const json = endpoint.payload.get("application/json")
        if (json === undefined || policyOf(endpoint, group).upload !== undefined) continue
        const id = `${group.identifier}.${endpoint.identifier}`
        const example = requestExamples[id]
        if (example === undefined) {
          missing.push(id)
          continue
        }
        used.add(id)
        const payload = json.schemas.length === 1 ? json.schemas[0]! : Schema.Union(json.schemas)
        const decoded = Schema.decodeUnknownExit(payload as Schema.Codec<unknown, unknown>, { errors: "all", onExcessProperty: "error" })(example)
        expect(decoded._tag === "Success" ? "decodes" : String(decoded.cause), id).toBe("decodes")
      }
    }
    expect(missing).toEqual([])
    expect(Object.keys(requestExamples).filter((id) => !used.has(id))).toEqual([])
  })

  it("gives each success example (Examples.ts responseExamples) an endpoint whose success schema encodes it", () => {
    const endpoints = new Map<string, { readonly success: ReadonlySet<Schema.Top> }>(Object.values(Api.groups).flatMap((group) =>
      Object.values(group.endpoints).map((endpoint) => [`${group.identifier}.${endpoint.identifier}`, endpoint] as const)))
    for (const [id, example] of Object.entries(responseExamples)) {
      const endpoint = endpoints.get(id)
      expect(endpoint, id).toBeDefined()
      const schemas = [...endpoint!.success]
      const success = schemas.length === 1 ? schemas[0]! : Schema.Union(schemas)
      const decoded = Schema.decodeUnknownExit(Schema.toType(success) as Schema.Codec<unknown, unknown>, { errors: "all", onExcessProperty: "error" })(example)
      expect(decoded._tag === "Success" ? "decodes" : String(decoded.cause), id).toBe("decodes")
    }
  })
})

/**
 * An ajv that resolves the document's `#/components/...` references, and compiles a schema of it once (one per
 * document, shared by the tests of this file: compiling is most of their time).
 */
const validators = new WeakMap<Json, (schema: Json) => ValidateFunction>()
const schemaValidator = (document: Json) => {
  const known = validators.get(document)
  if (known !== undefined) return known
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats.default(ajv)
  const base = "https://fos.test/openapi.json"
  ajv.addSchema({ $id: base, components: document.components })
  const compiled = new Map<string, ValidateFunction>()
  const compile = (schema: Json): ValidateFunction => {
    const key = JSON.stringify(schema)
    let validate = compiled.get(key)
    if (validate === undefined) {
      // A named schema is compiled once, as the document's own fragment; an inline one on its own.
      validate = typeof schema.$ref === "string" && Object.keys(schema).length === 1
        ? ajv.getSchema(`${base}${schema.$ref}`)!
        : ajv.compile(JSON.parse(key.replaceAll("\"#/components/", `"${base}#/components/`)))
      compiled.set(key, validate)
    }
    return validate
  }
  validators.set(document, compile)
  return compile
}

describe("the examples", () => {
  it("give every success response with a JSON body an example (Examples.ts)", () => {
    const missing: Array<string> = []
    for (const { method, path, operation } of operations(documents.sandbox)) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
        const json = response.content?.["application/json"]
        if (Number(status) < 300 && json !== undefined && json.example === undefined) missing.push(`${operation.operationId} (${method} ${path}) ${status}`)
      }
    }
    expect(missing).toEqual([])
  })

  it("each validate against their own schema with ajv: every request body's, every response's, every named schema's and every webhook's", () => {
    const compile = schemaValidator(documents.sandbox)
    const broken: Array<string> = []
    let checked = 0
    const check = (where: string, schema: Json | undefined, example: unknown) => {
      if (schema === undefined || example === undefined) return
      const validate = compile(schema)
      checked++
      if (!validate(example)) broken.push(`${where}: ${ajvErrors(validate.errors)}`)
    }
    for (const { operation } of operations(documents.sandbox)) {
      const body = operation.requestBody?.content?.["application/json"]
      check(`${operation.operationId} request`, body?.schema, body?.example)
      for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
        const json = response.content?.["application/json"]
        check(`${operation.operationId} ${status}`, json?.schema, json?.example)
      }
    }
    for (const [name, schema] of Object.entries(documents.sandbox.components.schemas as Record<string, Json>)) {
      for (const [i, example] of (schema.examples ?? []).entries()) check(`schema ${name} example ${i}`, { $ref: `#/components/schemas/${name}` }, example)
      if (schema.example !== undefined) check(`schema ${name} example`, { $ref: `#/components/schemas/${name}` }, schema.example)
    }
    for (const [type, item] of Object.entries(documents.sandbox.webhooks as Record<string, Json>)) {
      const body = item.post.requestBody.content["application/json"]
      check(`webhook ${type}`, body.schema, body.example)
    }
    expect(broken).toEqual([])
    expect(checked).toBeGreaterThan(300)
    // The check can fail: an example with a member of the wrong type does not validate.
    const order = documents.sandbox.paths["/v2/orders/{orderId}"].get.responses["200"].content["application/json"]
    expect(compile(order.schema)({ ...order.example, id: 42 })).toBe(false)
  })
})

const ajvErrors = (errors: ReadonlyArray<{ instancePath: string; message?: string }> | null | undefined): string =>
  (errors ?? []).slice(0, 5).map((e) => `${e.instancePath || "/"} ${e.message}`).join("; ")

describe("the served documents", () => {
  it("list the known values of each enumeration that grows, and accept a value a later version adds (Versioning rule 4)", () => {
    for (const document of [documents.sandbox, documents.live]) {
      const schemas = document.components.schemas
      expect(schemas.ProblemType.enum).toEqual(Object.keys(ErrorCatalog))
      expect(schemas.EventType.enum).toEqual([...EventTypes])
      const open = (ref: string) => ({ anyOf: [{ $ref: `#/components/schemas/${ref}` }, { type: "string" }] })
      expect(schemas.Problem.properties.type).toMatchObject(open("ProblemType"))
      expect(schemas.WebhookDelivery.properties.eventType).toMatchObject(open("EventType"))
      const validate = schemaValidator(document)
      const problem = {
        type: "CUSTOMER_NOT_FOUND",
        title: "Customer not found",
        status: 404,
        detail: "No customer with this id exists in this organization.",
        resolution: "Check the id.",
        docs: "https://fos.test/docs/errors#customer_not_found",
        instance: "/sandbox/v2/customers/cus_x",
        correlationId: "0".repeat(32),
        timestamp: "2026-03-03T09:00:00.000Z"
      }
      expect(validate({ $ref: "#/components/schemas/Problem" })(problem)).toBe(true)
      expect(validate({ $ref: "#/components/schemas/Problem" })({ ...problem, type: "A_CODE_ADDED_LATER" })).toBe(true)
      expect(validate({ $ref: "#/components/schemas/ProblemType" })("A_CODE_ADDED_LATER")).toBe(false)
      expect(validate({ $ref: "#/components/schemas/ProblemType" })("CUSTOMER_NOT_FOUND")).toBe(true)
    }
    const sandbox = documents.sandbox.components.schemas
    expect(sandbox.TimerKind.enum).toEqual([...TimerKinds])
    expect(sandbox.PendingTimer.properties.kind).toMatchObject({ anyOf: [{ $ref: "#/components/schemas/TimerKind" }, { type: "string" }] })
    expect(schemaValidator(documents.sandbox)({ $ref: "#/components/schemas/PendingTimer" })({ id: "tmr_1", kind: "host.own_kind", dueAt: "2026-03-03T09:00:00.000Z", action: "a host's own" })).toBe(true)
  })

  it("pass Redocly's recommended ruleset with no error and no warning, its example rules included", async () => {
    // The recommended ruleset as it is: its two example rules (no-invalid-media-type-examples,
    // no-invalid-schema-examples) validate every example against its schema with objects closed unless said to be
    // open, stricter than ajv in "the examples" above. They are most of the test's time (several seconds of CPU for
    // the two documents, five times the rest of the ruleset's), hence its own timeout on a busy machine.
    const config = await createConfig({ extends: ["recommended"] } as never)
    for (const environment of ["sandbox", "live"] as const) {
      const problems = await lintFromString({ source: JSON.stringify(documents[environment]), absoluteRef: `http://fos.test/${environment}/v2/openapi.json`, config })
      // Every problem, warnings included (the live document once kept 46 components only the sandbox's operations use).
      expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`), environment).toEqual([])
    }
  }, 90_000)

  it("write no raw angle bracket in their Markdown, which a renderer would take for an HTML tag and drop", () => {
    // Every description and summary is CommonMark: `<prefix>_<opaque>` outside a code span rendered as "_".
    const raw: Array<string> = []
    const walk = (value: unknown, at: string): void => {
      if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${at}/${i}`))
      else if (typeof value === "object" && value !== null) {
        for (const [key, v] of Object.entries(value)) {
          if ((key === "description" || key === "summary") && typeof v === "string") {
            const prose = v.replace(/`[^`]*`/g, "")
            if (/<[A-Za-z/!?]/.test(prose)) raw.push(`${at}/${key}: ${/.{0,30}<[A-Za-z/!?].{0,30}/.exec(prose)![0]}`)
          } else walk(v, `${at}/${key}`)
        }
      }
    }
    for (const environment of ["sandbox", "live"] as const) walk(documents[environment], environment)
    expect(raw).toEqual([])
  })

  it("are valid OpenAPI 3.1 to swagger-parser", async () => {
    for (const environment of ["sandbox", "live"] as const) {
      const api = await SwaggerParser.validate(structuredClone(documents[environment]) as never)
      expect(api.info.title, environment).toContain("fos")
    }
  })

  it("list only what their environment serves, under a base address a path joins onto", () => {
    const sandbox = operations(documents.sandbox)
    const live = operations(documents.live)
    expect(sandbox.some((o) => o.path.startsWith("/v2/simulate/"))).toBe(true)
    expect(live.filter((o) => o.path.startsWith("/v2/simulate/"))).toEqual([])
    for (const { method, path, operation } of sandbox) {
      const group = Object.values(Api.groups).find((g) => g.identifier === operation.tags[0])!
      const endpoint = Object.values(group.endpoints).find((e) => e.method.toLowerCase() === method && e.path.replace(/:(\w+)/g, "{$1}") === path)!
      expect(live.some((o) => o.method === method && o.path === path), `${method} ${path}`).toBe(!policyOf(endpoint, group).sandboxOnly)
    }
    for (const environment of ["sandbox", "live"] as const) {
      const [server] = documents[environment].servers
      // A naive join of the base and a path, and the URL relative to the document, both give the path's address.
      expect(`${new URL(server.url, `http://fos.test/${environment}/v2/openapi.json`).href}/v2/customers`).toBe(`http://fos.test/${environment}/v2/customers`)
      expect(server.url.endsWith("/")).toBe(false)
    }
  })

  it("declare the Idempotency-Key on the 18 operations that require it, and say which two refuse it", () => {
    const all = operations(documents.sandbox)
    const keyOf = (operation: Json) => (operation.parameters ?? []).find((p: Json) => p.in === "header" && p.name === "Idempotency-Key")
    const required = all.filter((o) => keyOf(o.operation)?.required === true)
    expect(required).toHaveLength(18)
    for (const { operation } of required) expect(operation.description).toContain("IDEMPOTENCY_KEY_REQUIRED")
    const refused = all.filter((o) => o.operation["x-fos-idempotency"] === "refused").map((o) => `${o.method} ${o.path}`)
    expect(refused.sort()).toEqual(["post /v2/payouts/requirements", "post /v2/quotes"])
    for (const { method, path, operation } of all.filter((o) => o.operation["x-fos-idempotency"] === "refused")) {
      expect(keyOf(operation), `${method} ${path}`).toBeUndefined()
      expect(operation.description, `${method} ${path}`).toContain("refuses an `Idempotency-Key`")
    }
  })

  it("list 400 BAD_REQUEST among every operation's errors: any request line or header can be one not understood", () => {
    for (const { method, path, operation } of operations(documents.sandbox)) {
      expect(operation.responses["400"], `${method} ${path}`).toBeDefined()
      expect(operation.description, `${method} ${path}`).toContain("- 400 BAD_REQUEST: Bad request")
    }
  })

  it("declare the response headers: correlation id and rate limit on every answer, Retry-After on 429 and 503, Idempotency-Replayed on a keyed write's success", () => {
    for (const { method, path, operation } of operations(documents.sandbox)) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
        const names = Object.keys(response.headers ?? {})
        expect(names, `${method} ${path} ${status}`).toEqual(expect.arrayContaining(["x-correlation-id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]))
        expect(names.includes("Retry-After"), `${method} ${path} ${status}`).toBe(status === "429" || status === "503")
      }
    }
    expect(Object.keys(documents.sandbox.paths["/v2/orders"].post.responses["201"].headers)).toContain("Idempotency-Replayed")
    expect(documents.sandbox.components.headers["Retry-After"].schema.type).toBe("integer")
  })

  it("type numbers as numbers and limit as an integer, with formats, patterns and discriminators", () => {
    const text = JSON.stringify(documents.sandbox)
    expect(text).not.toContain("\"Infinity\"")
    expect(text).not.toContain("\"NaN\"")
    const schemas = documents.sandbox.components.schemas
    expect(schemas.Problem.properties.status).toEqual({ type: "number" })
    const limits = operations(documents.sandbox).flatMap((o) => (o.operation.parameters ?? []).filter((p: Json) => p.name === "limit"))
    expect(limits.length).toBeGreaterThan(5)
    for (const limit of limits) expect(limit.schema).toMatchObject({ type: "integer", minimum: 1, maximum: 100 })
    expect(schemas.Order.properties.id.pattern).toBe("^ord_[0-9A-Za-z]{1,64}$")
    expect(schemas.Order.properties.createdAt.format).toBe("date-time")
    expect(text).toContain("\"pattern\":\"^(0|[1-9]\\\\d*)(\\\\.\\\\d+)?$\"")
    expect(text).toContain("\"pattern\":\"^[A-Z]{3}$\"")
    expect(schemas.Order.properties.source.discriminator).toMatchObject({ propertyName: "type", mapping: { wallet: expect.stringMatching(/^#\/components\/schemas\//) } })
    expect(schemas.Order.properties.source.oneOf.length).toBeGreaterThan(1)
    const upload = documents.sandbox.paths["/v2/documents"].post.requestBody.content["multipart/form-data"]
    expect(upload.schema.properties.file).toMatchObject({ type: "string", format: "binary", contentMediaType: "application/octet-stream" })
    expect(upload.schema.required).toEqual(expect.arrayContaining(["file", "type"]))
    // Calendar dates say so, for a generated client.
    const dates = [...text.matchAll(/"(dateOfBirth|incorporationDate)":(\{[^{}]*\})/g)].map((m) => JSON.parse(m[2]!))
    expect(dates.length).toBeGreaterThanOrEqual(2)
    for (const date of dates) expect(date).toMatchObject({ type: "string", format: "date" })
  })

  it("have a webhook per event type, with its envelope's schema and an example, and Event as their union", () => {
    const webhooks = documents.live.webhooks
    expect(Object.keys(webhooks).sort()).toEqual([...EventTypes].sort())
    for (const type of EventTypes) {
      const body = webhooks[type].post.requestBody.content["application/json"]
      expect(body.example.type, type).toBe(type)
      const envelope = documents.live.components.schemas[body.schema.$ref.split("/").pop()]
      expect(envelope.properties.type.enum, type).toEqual([type])
      expect(envelope.properties.data.type, type).toBe("object")
    }
    // The union, in the sandbox's document, where POST /v2/simulate/events answers with it; the live one, which has
    // no operation that does, keeps no unused component.
    expect(documents.sandbox.components.schemas.Event.discriminator.propertyName).toBe("type")
    expect(documents.live.components.schemas.Event).toBeUndefined()
  })
})

// --- a generated client -----------------------------------------------------------------------------------------

/** The journey, as a team writes it against the generated types: no `as`, no `any`. */
const journeySource = `import createClient, { type Middleware } from "openapi-fetch"
import type { components, paths } from "./api.ts"

type Submission = paths["/v2/onboarding"]["post"]["requestBody"]["content"]["application/json"]
export interface Recorded { readonly schemaPath: string; readonly method: string; readonly status: number; readonly body: unknown }
let keys = 0
const key = () => "journey-" + ++keys

export async function journey(fetch: (request: Request) => Promise<Response>, apiKey: string, submission: (docs: { register: string; articles: string; passport: string }) => Submission): Promise<Array<Recorded>> {
  const recorded: Array<Recorded> = []
  const record: Middleware = {
    async onResponse({ request, response, schemaPath }) {
      const text = await response.clone().text()
      recorded.push({ schemaPath, method: request.method.toLowerCase(), status: response.status, body: text === "" ? undefined : JSON.parse(text) })
    }
  }
  const fos = createClient<paths>({ baseUrl: "http://fos.test/sandbox", headers: { "x-api-key": apiKey }, fetch })
  fos.use(record)

  const upload = async (type: components["schemas"]["Document"]["type"]): Promise<string> => {
    const file: Blob = new Blob([new TextEncoder().encode("%PDF-1.7\\n% " + type + "\\n")], { type: "application/pdf" })
    const { data, error } = await fos.POST("/v2/documents", {
      body: { file, type },
      bodySerializer: (body) => {
        const form = new FormData()
        form.set("type", body.type)
        form.set("file", body.file, type + ".pdf")
        return form
      }
    })
    if (error !== undefined) throw new Error("upload: " + error.type)
    return data.id
  }
  const docs = { register: await upload("certificate_of_incorporation"), articles: await upload("articles_of_association"), passport: await upload("passport") }

  const onboarded = await fos.POST("/v2/onboarding", { params: { header: { "Idempotency-Key": key() } }, body: submission(docs) })
  if (onboarded.error !== undefined) throw new Error("onboarding: " + onboarded.error.type + " " + onboarded.error.detail)
  const decided = await fos.POST("/v2/simulate/applications/{id}/decision", { params: { path: { id: onboarded.data.applicationId } }, body: { outcome: "approved" } })
  if (decided.error !== undefined) throw new Error("decision: " + decided.error.type)
  const customerId = decided.data.customerId
  if (customerId === undefined) throw new Error("an approved onboarding names its customer")

  const feature = await fos.POST("/v2/customers/{customerId}/features", {
    params: { path: { customerId }, header: { "Idempotency-Key": key() } },
    body: { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } }
  })
  if (feature.error !== undefined) throw new Error("feature: " + feature.error.type)
  await fos.POST("/v2/simulate/applications/{id}/decision", { params: { path: { id: feature.data.applicationId } }, body: { outcome: "approved" } })
  const wallet = await fos.POST("/v2/customers/{customerId}/wallets", { params: { path: { customerId }, header: { "Idempotency-Key": key() } }, body: { chain: "base" } })
  if (wallet.error !== undefined) throw new Error("wallet: " + wallet.error.type)
  await fos.GET("/v2/wallets/{walletId}", { params: { path: { walletId: wallet.data.id } } })
  await fos.GET("/v2/customers", { params: { query: { limit: 5 } } })
  await fos.GET("/v2/transactions", { params: { query: { limit: 2 } } })

  // A typed event payload: the union narrows on type.
  const event = await fos.POST("/v2/simulate/events", { body: { type: "order.succeeded" } })
  if (event.error !== undefined) throw new Error("event: " + event.error.type)
  if (event.data.type !== "order.succeeded") throw new Error("the sent event is of the type asked for")
  const orderId: string = event.data.data.orderId
  if (!orderId.startsWith("ord_")) throw new Error("an order event names its order")

  // The event log's entries are typed by their type too.
  const logged = await fos.GET("/v2/simulate/events", { params: { query: { type: "customer.created", limit: 5 } } })
  if (logged.error !== undefined) throw new Error("events: " + logged.error.type)
  if (logged.data.data.length === 0) throw new Error("onboarding emitted customer.created")
  for (const entry of logged.data.data) {
    if (entry.type !== "customer.created") throw new Error("the log answers the type asked for")
    const created: string = entry.data.customerId
    if (created !== customerId) throw new Error("a customer event names its customer")
  }

  // A problem's status is a number a client compares, and its type one of the codes the document lists (a code
  // added later is still a string the client reads).
  const missing = await fos.GET("/v2/customers/{customerId}", { params: { path: { customerId: "cus_doesnotexist" } } })
  if (missing.error === undefined || !(missing.error.status >= 400 && missing.error.status < 500)) throw new Error("a missing customer is a 4xx problem")
  const notFound: components["schemas"]["ProblemType"] = "CUSTOMER_NOT_FOUND"
  // @ts-expect-error a code the API does not have
  const misspelt: components["schemas"]["ProblemType"] = "CUSTOMER_NOT_FOUNDD"
  if (missing.error.type !== notFound || misspelt === notFound) throw new Error("a missing customer is CUSTOMER_NOT_FOUND")

  // A timeline's entries are typed by their kind: a state change names the state it went to.
  const timeline = await fos.GET("/v2/simulate/timeline/{resourceId}", { params: { path: { resourceId: onboarded.data.applicationId } } })
  if (timeline.error !== undefined) throw new Error("timeline: " + timeline.error.type)
  const states: Array<string> = []
  for (const entry of timeline.data.entries) if (entry.kind === "state") states.push(entry.to)
  if (!states.includes("approved")) throw new Error("the application's timeline shows its approval")

  // The event types and timer kinds a delivery and a pending timer name are listed too.
  const created: components["schemas"]["EventType"] = "customer.created"
  // @ts-expect-error an event type the API does not have
  const noEvent: components["schemas"]["EventType"] = "customer.creatd"
  const attempt: components["schemas"]["TimerKind"] = "webhook.attempt"
  // @ts-expect-error a timer kind the engine does not have
  const noTimer: components["schemas"]["TimerKind"] = "webhook.attemp"
  const timers = await fos.GET("/v2/simulate/timers", { params: { query: { limit: 100 } } })
  if (timers.error !== undefined) throw new Error("timers: " + timers.error.type)
  const kinds: Array<string> = timers.data.data.map((timer) => timer.kind)
  if (kinds.includes(noTimer) || kinds.includes(noEvent)) throw new Error("no timer is of a kind the engine does not have")
  if (logged.data.data.some((entry) => entry.type !== created) || attempt !== "webhook.attempt") throw new Error("the log answers customer.created")
  return recorded
}
`

const run = promisify(execFile)

describe("a client generated from the served document", () => {
  it("type-checks a journey with no cast, runs it against the engine, and every response validates against its schema", async () => {
    const document = documents.sandbox
    const dir = mkdtempSync(join(repoRoot, ".openapi-client-"))
    try {
      // An upload's binary content is a Blob to a TypeScript client (openapi-typescript's documented transform).
      const ast = await openapiTS(structuredClone(document) as never, {
        transform(schema) {
          if (schema.format === "binary") return ts.factory.createTypeReferenceNode(ts.factory.createIdentifier("Blob"))
          return undefined
        }
      })
      writeFileSync(join(dir, "api.ts"), astToString(ast))
      writeFileSync(join(dir, "journey.ts"), journeySource)
      expect(journeySource).not.toMatch(/\bas\b|\bany\b/)
      const tsc = join(repoRoot, "node_modules", "typescript", "bin", "tsc")
      const result = await run(process.execPath, [
        tsc, "--noEmit", "--strict", "--exactOptionalPropertyTypes", "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext",
        "--allowImportingTsExtensions", "--skipLibCheck", "--lib", "es2022,dom", join(dir, "journey.ts")
      ], { cwd: dir }).catch((error: { stdout: string; stderr: string }) => ({ stdout: error.stdout, stderr: error.stderr, failed: true }))
      expect(result.stdout + result.stderr).toBe("")

      const { journey } = await import(join(dir, "journey.ts"))
      const recorded: Array<{ schemaPath: string; method: string; status: number; body: unknown }> = await journey(
        (request: Request) => engine.fetch(request),
        keysOf("acme").sandbox,
        deuSubmission
      )
      expect(recorded.length).toBeGreaterThan(10)

      const compile = schemaValidator(document)
      let checked = 0
      for (const { schemaPath, method, status, body } of recorded) {
        const where = `${method} ${schemaPath} ${status}`
        const response = document.paths[schemaPath][method].responses[String(status)]
        expect(response, where).toBeDefined()
        const schema = response.content?.["application/json"]?.schema
        if (schema === undefined) {
          expect(body, where).toBeUndefined()
          continue
        }
        const validate = compile(schema)
        expect(validate(body) ? [] : validate.errors, where).toEqual([])
        checked++
        // The check can fail: a resource whose id is a number does not validate.
        if (typeof body === "object" && body !== null && "id" in body) expect(validate({ ...body, id: 42 }), where).toBe(false)
      }
      expect(checked).toBeGreaterThan(10)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
