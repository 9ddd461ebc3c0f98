/**
 * The OpenAPI document of one environment, generated from the HttpApi (`OpenApi.fromApi`) and completed from the
 * facts the contract already holds, so that a client generated from it is correct without fos's prose:
 * - each operation's summary and description are its own (`documented`, below); to the description are added the
 *   rules the contract states elsewhere: its idempotency policy, its rate bucket, its upload form and its problems;
 * - the Idempotency-Key header where an operation takes one (required or optional), and the response headers every
 *   answer carries (x-correlation-id, the X-RateLimit trio, Retry-After on 429 and 503, Idempotency-Replayed on a
 *   replay);
 * - numbers as numbers: fos never sends a non-finite number (JSON has none), so Effect's `"Infinity" | "NaN"`
 *   alternative of `Schema.Number` is dropped; a list's `limit` is an integer;
 * - a `discriminator` on every union whose members are tagged by `type`, and an upload's file as binary content;
 * - a `webhooks` entry per event type, with its envelope's schema and the catalog's example, and the `Event`
 *   resource as the union of those envelopes;
 * - an example on every request body and every success response (Examples.ts): a resource's example where the
 *   response is that resource or a page of it, else the operation's own; the named schema shows it too;
 * - only what the environment serves (no sandbox-only operation under /live), and a `servers` entry that is the
 *   environment's base address, with no trailing slash to join paths onto.
 */
import { Context, Schema } from "effect"
import { type HttpApi, type HttpApiEndpoint, type HttpApiGroup, OpenApi } from "effect/http-api"
import { DeprecatedEventTypes, envelopeSchema, EventExamples, type EventType, EventTypes } from "../events/Events.ts"
import { ErrorCatalog, type ErrorCode, errorReferencePath } from "../kernel/Errors.ts"
import { defaultPageSize, maxPageSize } from "../kernel/Lists.ts"
import type { Environment } from "../tenancy/Tenancy.ts"
import { listExample, requestExamples, resourceExamples, responseExamples } from "./Examples.ts"
import { type Annotated, type EndpointPolicy, policyOf } from "./Policies.ts"

/**
 * An operation's own documentation: a short summary (a title, in the imperative) and a description in fos's own
 * words. Put it on an endpoint with `.annotateMerge(documented("…", "…"))`; the document adds the operation's rules
 * after it. Every operation must have one (test/openapi.test.ts says which do not).
 */
export const documented = (summary: string, description: string): Context.Context<never> =>
  OpenApi.annotations({ summary, description })

/** The domain problems of an endpoint beyond those its policies imply, for its description. */
export class ErrorCodes extends Context.Reference<ReadonlyArray<ErrorCode>>("fos/contract/ErrorCodes", {
  defaultValue: () => []
}) {}

/** The summary and own description of an endpoint, or undefined where it has none. */
export const documentationOf = (endpoint: Annotated): { summary: string | undefined; description: string | undefined } => ({
  summary: Context.getOrUndefined(endpoint.annotations, OpenApi.Summary),
  description: Context.getOrUndefined(endpoint.annotations, OpenApi.Description)
})

const bucketNames: Record<string, string> = {
  general: "the general bucket",
  order_execute: "the dedicated order_execute bucket",
  documents: "the dedicated documents bucket",
  application_submit: "the dedicated application_submit bucket"
}

/** The problems an endpoint's shape and policies imply, by status, before its own. */
const impliedCodes = (endpoint: HttpApiEndpoint.Top, policy: EndpointPolicy, paged: boolean): ReadonlyArray<ErrorCode> => {
  const write = endpoint.method !== "GET"
  // Any request line or header can be one the service does not understand: a path or query whose
  // percent-encoding is not UTF-8, an x-client-correlation-id past its limit.
  const codes: Array<ErrorCode> = ["BAD_REQUEST", "VALIDATION_ERROR"]
  if (write) codes.push("MALFORMED_JSON")
  if (endpoint.params !== undefined) codes.push("INVALID_OID_FORMAT")
  if (paged) codes.push("INVALID_CURSOR")
  if (policy.idempotency === "required") codes.push("IDEMPOTENCY_KEY_REQUIRED")
  codes.push("API_KEY_MISSING", "API_KEY_INVALID")
  if (write) codes.push("API_KEY_READ_ONLY")
  if (write && !policy.openWhenRestricted) codes.push("ORGANIZATION_ACCESS_SUSPENDED")
  codes.push("NOT_FOUND")
  if (write && policy.idempotency !== "refused") codes.push("IDEMPOTENCY_KEY_CONFLICT", "IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS")
  if (policy.upload !== undefined) codes.push("FILE_TOO_LARGE")
  else if (write) codes.push("PAYLOAD_TOO_LARGE")
  if (write) codes.push("UNSUPPORTED_MEDIA_TYPE")
  codes.push("RATE_LIMITED", "INTERNAL_ERROR", "BAD_GATEWAY", "SERVICE_UNAVAILABLE")
  return codes
}

/** The rules of an endpoint that its annotations state, as the paragraphs after its own description. */
const rulesOf = (endpoint: HttpApiEndpoint.Top, policy: EndpointPolicy, statuses: ReadonlyArray<number>, paged: boolean, errorsAt: string): string => {
  const lines: Array<string> = []
  const write = endpoint.method !== "GET"
  if (policy.idempotency === "required") {
    lines.push("**Idempotency:** requires an `Idempotency-Key` header (400 IDEMPOTENCY_KEY_REQUIRED without it). A retry with the same key and body answers the stored response with `Idempotency-Replayed: true`; the same key with a different body is 409 IDEMPOTENCY_KEY_CONFLICT.")
  } else if (policy.idempotency === "refused") {
    lines.push("**Idempotency:** refuses an `Idempotency-Key` header (400 VALIDATION_ERROR with the pointer `/headers/idempotency-key`): the operation changes nothing, so it is safe to repeat without one.")
  } else if (write) {
    lines.push("**Idempotency:** takes an optional `Idempotency-Key` header; with one, a retry with the same key and body answers the stored response with `Idempotency-Replayed: true`.")
  }
  lines.push(`**Rate limit:** counts against ${bucketNames[policy.bucket ?? "general"]}; every answer carries the X-RateLimit headers, and a 429 carries Retry-After.`)
  if (policy.upload !== undefined) {
    lines.push(`**Upload:** multipart/form-data with one file in the \`${policy.upload.fileField}\` field, at most ${policy.upload.maxFileBytes} bytes.`)
  }
  if (policy.maxBodyBytes !== undefined) lines.push(`**Body:** at most ${policy.maxBodyBytes} bytes (413 PAYLOAD_TOO_LARGE past it), more than other operations take.`)
  if (policy.attachment !== undefined) lines.push("**Answer:** a file, with `Content-Disposition: attachment` and its file name.")
  if (policy.sandboxOnly) lines.push("**Sandbox only:** served under /sandbox; under /live it is 404 NOT_FOUND.")
  if (write && policy.openWhenRestricted) lines.push("**Restricted organizations:** may still call it.")
  const own = Context.get(endpoint.annotations, ErrorCodes)
  const codes = [...new Set([...impliedCodes(endpoint, policy, paged), ...own])]
    .filter((code) => statuses.includes(ErrorCatalog[code].status))
    .sort((a, b) => ErrorCatalog[a].status - ErrorCatalog[b].status)
  const other = statuses.filter((status) => status >= 400 && !codes.some((code) => ErrorCatalog[code].status === status))
  lines.push(
    "**Errors** (the problem's `type`; see the error reference at " + errorsAt + "):\n" +
      codes.map((code) => `- ${ErrorCatalog[code].status} ${code}: ${ErrorCatalog[code].title}`).join("\n") +
      (other.length > 0 ? `\n- ${other.join(", ")}: the codes of that status the error reference lists for this resource` : "")
  )
  return lines.join("\n\n")
}

// --- headers -----------------------------------------------------------------------------------------------------

const headers = {
  "x-correlation-id": { description: "The service's id of this request (32 hex digits); give it to support.", schema: { type: "string", pattern: "^[0-9a-f]{32}$" } },
  "X-RateLimit-Limit": { description: "Requests allowed per window in the bucket this request counted against.", schema: { type: "integer", minimum: 0 } },
  "X-RateLimit-Remaining": { description: "Requests left in the current window of that bucket.", schema: { type: "integer", minimum: 0 } },
  "X-RateLimit-Reset": { description: "Seconds until the current window of that bucket ends.", schema: { type: "integer", minimum: 0 } },
  "Retry-After": { description: "Seconds to wait before sending more requests (the problem's retryAfterSeconds): on every 429, and on a 503 whose problem says when to retry.", schema: { type: "integer", minimum: 0 } },
  "Idempotency-Replayed": { description: "`true` when this is the stored answer of an earlier request with the same Idempotency-Key.", schema: { type: "string", enum: ["true"] } },
  "Content-Disposition": { description: "`attachment`, with the file's name: the answer is a file to keep (a snapshot's export).", schema: { type: "string", example: "attachment; filename=\"snp_01jd8x4m2q7rz5k3n9v6t0w1ym.fos-snapshot.json\"" } }
} as const

const headerRef = (name: keyof typeof headers) => ({ $ref: `#/components/headers/${name}` })

const idempotencyKeyParameter = (required: boolean) => ({
  name: "Idempotency-Key",
  in: "header",
  required,
  description: required
    ? "A unique key per intended operation (1 to 255 visible ASCII characters, a UUID say). Required: retries with the same key and body are answered once."
    : "Optional: a unique key per intended operation (1 to 255 visible ASCII characters). Retries with the same key and body are answered once.",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7E]+$" },
  example: "3f1c2a9e-7b4d-4c8e-9f61-0a2b3c4d5e6f"
})

// --- schema rewrites ---------------------------------------------------------------------------------------------

type Json = Record<string, any>

const pascal = (words: string): string => words.split(/[._]/).map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("")

const isNonFiniteAlternative = (s: Json): boolean =>
  s?.type === "string" && Array.isArray(s.enum) && s.enum.length === 3 && s.enum.includes("Infinity") && s.enum.includes("NaN")

/** Rewrites every schema under `node` in place, depth first (children before parents). */
const walk = (node: unknown, visit: (schema: Json, key: string) => Json, at = ""): unknown => {
  if (Array.isArray(node)) return node.map((child) => walk(child, visit, at))
  if (typeof node !== "object" || node === null) return node
  const out: Json = {}
  for (const [key, value] of Object.entries(node)) out[key] = key === "example" || key === "examples" ? value : walk(value, visit, key)
  return visit(out, at)
}

/** The member's single `type` tag, following a $ref into `schemas`; undefined when it has none. */
const tagOf = (member: Json, schemas: Json): string | undefined => {
  const target = typeof member.$ref === "string" ? schemas[member.$ref.slice("#/components/schemas/".length)] : member
  const tag = target?.properties?.type
  if (target?.type !== "object" || !Array.isArray(target.required) || !target.required.includes("type")) return undefined
  if (tag?.type === "string" && Array.isArray(tag.enum) && tag.enum.length === 1) return tag.enum[0]
  if (typeof tag?.const === "string") return tag.const
  return undefined
}

const rewriteSchemas = (spec: Json): void => {
  const schemas: Json = spec.components.schemas
  // The inline members of tagged unions, named (`WalletSource`: the `wallet` member of a `source`), so that the
  // discriminator can select them; one name per distinct shape.
  const hoisted: Json = {}
  const named = new Map<string, string>()
  const hoist = (member: Json, tag: string, at: string): Json => {
    if (typeof member.$ref === "string") return member
    const text = JSON.stringify(member)
    let name = named.get(text)
    if (name === undefined) {
      const stem = pascal(tag) + (/^[a-z]\w*$/.test(at) && !["items", "schema", "additionalProperties"].includes(at) ? pascal(at) : "Variant")
      name = stem
      for (let n = 2; name in schemas || name in hoisted; n++) name = `${stem}${n}`
      hoisted[name] = member
      named.set(text, name)
    }
    return { $ref: `#/components/schemas/${name}` }
  }
  const lookup: Json = new Proxy({}, { get: (_, name: string) => hoisted[name] ?? schemas[name] })
  const visit = (visited: Json, at: string): Json => {
    let schema = visited
    // Schema.Number's JSON form admits "Infinity" and "NaN" as strings; fos never sends a non-finite number.
    if (Array.isArray(schema.anyOf) && schema.anyOf.some(isNonFiniteAlternative)) {
      const { anyOf, ...rest } = schema
      const finite = anyOf.filter((member: Json) => !isNonFiniteAlternative(member))
      schema = finite.length === 1 ? { ...finite[0], ...rest } : { ...rest, anyOf: finite }
    }
    // A check's own keywords (a format, a pattern) come as an allOf of plain keyword sets: said on the schema itself.
    if (Array.isArray(schema.allOf) && schema.allOf.every((k: Json) => k.$ref === undefined && Object.keys(k).every((key) => !(key in schema) || key === "examples"))) {
      const { allOf, ...rest } = schema
      schema = Object.assign({}, ...allOf, rest)
    }
    // A union of one (a sortBy of a single value, say) is that one schema.
    if (Array.isArray(schema.anyOf) && schema.anyOf.length === 1 && Object.keys(schema.anyOf[0]).every((key) => !(key in schema))) {
      const { anyOf, ...rest } = schema
      schema = { ...anyOf[0], ...rest }
    }
    // A union tagged by `type`, each member with a tag of its own: a discriminated oneOf.
    const members = schema.anyOf ?? schema.oneOf
    if (Array.isArray(members) && members.length > 1) {
      const tags = members.flatMap((m: Json) => tagOf(m, lookup) ?? [])
      if (tags.length === members.length && new Set(tags).size === tags.length) {
        const { anyOf, oneOf, ...rest } = schema
        const refs = members.map((m: Json, i: number) => hoist(m, tags[i]!, at))
        const mapping = Object.fromEntries(refs.map((m: Json, i: number) => [tags[i], m.$ref]))
        return { ...rest, oneOf: refs, discriminator: { propertyName: "type", mapping } }
      }
    }
    return schema
  }
  spec.components.schemas = walk(schemas, visit)
  spec.paths = walk(spec.paths, visit)
  spec.webhooks = walk(spec.webhooks, visit)
  Object.assign(spec.components.schemas, hoisted)
}

// --- webhooks ----------------------------------------------------------------------------------------------------

/** The component name of an event type's envelope: `order.succeeded` is `OrderSucceededEvent`. */
export const eventSchemaName = (type: EventType): string => `${pascal(type)}Event`

const exampleEnvelope = (type: EventType) => ({
  id: "evt_01JD8X4M2Q7RZ5K3N9V6T0W1YB",
  type,
  createdAt: "2026-03-01T12:00:00.000Z",
  apiVersion: "2",
  mode: "sandbox",
  data: EventExamples[type]
})

/** Adds each event type's envelope to the components, the `webhooks` section, and `Event` as their union. */
const addWebhooks = (spec: Json): void => {
  const schemas: Json = spec.components.schemas
  const mapping: Record<string, string> = {}
  for (const type of EventTypes) {
    const name = eventSchemaName(type)
    const document = Schema.toJsonSchemaDocument(envelopeSchema(type))
    const rebase = (node: unknown): unknown =>
      JSON.parse(JSON.stringify(node).replaceAll("\"#/$defs/", "\"#/components/schemas/").replaceAll("\"#/definitions/", "\"#/components/schemas/"))
    for (const [defName, def] of Object.entries((document as Json).definitions ?? {})) schemas[defName] ??= rebase(def)
    schemas[name] = {
      ...(rebase(document.schema) as Json),
      description: `The envelope of a \`${type}\` event, as fos POSTs it to a subscribed endpoint.`,
      example: exampleEnvelope(type)
    }
    mapping[type] = `#/components/schemas/${name}`
    spec.webhooks[type] = {
      post: {
        operationId: `webhook.${type}`,
        summary: `${type} event`,
        description: `fos POSTs this to every webhook endpoint subscribed to \`${type}\`, signed as docs/webhooks.md says; answer with any 2xx within the timeout, or it is retried.` +
          (DeprecatedEventTypes.has(type) ? " Deprecated: still delivered during its compatibility window." : ""),
        tags: ["webhooks"],
        ...(DeprecatedEventTypes.has(type) ? { deprecated: true } : {}),
        requestBody: {
          required: true,
          description: `The \`${type}\` event envelope.`,
          content: { "application/json": { schema: { $ref: mapping[type] }, example: exampleEnvelope(type) } }
        },
        responses: { "200": { description: "Received: any 2xx acknowledges the delivery." } }
      }
    }
  }
  // The Event resource (GET /v2/webhooks/events and friends) is any of the envelopes, told apart by `type`.
  schemas.Event = {
    description: "A webhook event: the envelope of one of the event types, told apart by `type`; `data` is that type's payload.",
    oneOf: EventTypes.map((type) => ({ $ref: mapping[type] })),
    discriminator: { propertyName: "type", mapping }
  }
  // An entry of the sandbox's event log is the event as delivered, and the resource it is about: typed by its `type`
  // as the webhooks are, so a generated client narrows `data` on it (the contract's own schema keeps `data` opaque,
  // since the log answers the stored envelope as it is). It is open like the envelopes: said outright, since the
  // members' properties are not its own, and a validator that closes every object not said to be open (Redocly's
  // example rules) would otherwise refuse the envelope's own fields beside `resourceId`.
  if (schemas.LoggedEvent !== undefined) {
    schemas.LoggedEvent = {
      description: "An emitted event, as its webhook delivers it (one of the envelopes, told apart by `type`), with the resource it is about.",
      type: "object",
      properties: { resourceId: { type: "string", description: "The resource the event is about, when it is about one." } },
      additionalProperties: true,
      oneOf: EventTypes.map((type) => ({ $ref: mapping[type] })),
      discriminator: { propertyName: "type", mapping }
    }
  }
}

/**
 * The document introduction's word on errors: what a problem is and where the codes are. The reference itself is the
 * page at `errorsAt`, not a table here: a row per code above the operations would put them, and Authorize, thousands
 * of pixels down the page a reader opens.
 */
const errorsSection = (errorsAt: string): string =>
  [
    "## Errors",
    "",
    `Every error is an RFC 9457 problem (the Problem schema). Match on \`type\`, its stable code; every code, with its status, title and what to do, is on the [error reference](${errorsAt}), where each problem's \`docs\` links its entry.`
  ].join("\n")

// --- the document ------------------------------------------------------------------------------------------------

const openApiPath = (path: string): string => path.replace(/:(\w+)/g, "{$1}")

const built = new WeakMap<HttpApi.Top, Map<string, Json>>()

/**
 * The document an environment serves at `<base>/v2/openapi.json`, for a server mounted at `basePath` (`/fos`; none
 * by default): its `servers` and its links to the error reference are under it. Built once per API, environment
 * and base path in a process (it takes a while) and shared: a caller that changes it must change a copy.
 */
export const openApiDocument = (api: HttpApi.Top, environment: Environment, basePath = ""): Json => {
  const documents = built.get(api) ?? new Map<string, Json>()
  built.set(api, documents)
  const key = `${basePath}/${environment}`
  const known = documents.get(key)
  if (known !== undefined) return known
  const document = buildDocument(api, environment, basePath)
  documents.set(key, document)
  return document
}

const buildDocument = (api: HttpApi.Top, environment: Environment, basePath: string): Json => {
  const spec = OpenApi.fromApi(api) as unknown as Json
  const errorsAt = basePath + errorReferencePath
  spec.info.description = `${spec.info.description ?? ""}\n\n${errorsSection(errorsAt)}`
  spec.servers = [{ url: `${basePath}/${environment}`, description: `The ${environment} base address on this origin: every path below is under it.` }]
  spec.components.headers = { ...spec.components.headers, ...headers }
  spec.webhooks = {}
  for (const group of Object.values(api.groups) as ReadonlyArray<HttpApiGroup.Top>) {
    for (const endpoint of Object.values(group.endpoints) as ReadonlyArray<HttpApiEndpoint.Top>) {
      const path = openApiPath(endpoint.path)
      const method = endpoint.method.toLowerCase()
      const item: Json | undefined = spec.paths[path]
      const operation: Json | undefined = item?.[method]
      if (item === undefined || operation === undefined) continue
      const policy = policyOf(endpoint, group)
      if (policy.sandboxOnly && environment !== "sandbox") {
        delete item[method]
        if (Object.keys(item).length === 0) delete spec.paths[path]
        continue
      }
      decorate(operation, endpoint, policy, errorsAt)
      describeBody(operation, spec.components.schemas)
    }
  }
  addWebhooks(spec)
  addResponseExamples(spec)
  rewriteSchemas(spec)
  dropUnusedComponents(spec)
  return spec
}

/**
 * Removes the components nothing of the document reaches: the live document leaves out the sandbox's operations, and
 * the schemas only they use would stand in it unused (a linter's warning, and noise in a generated client). Among
 * them is `Event`, the union of the webhooks' envelopes, which only the sandbox's `POST /v2/simulate/events` answers
 * with: a live receiver has each event type's envelope under `webhooks`.
 */
const dropUnusedComponents = (spec: Json): void => {
  const reached = new Set<string>()
  const pending: Array<unknown> = [{ ...spec, components: undefined }]
  while (pending.length > 0) {
    const value = pending.pop()
    if (Array.isArray(value)) pending.push(...value)
    else if (typeof value === "object" && value !== null) {
      for (const member of Object.values(value)) {
        // A `$ref`, or a discriminator's mapping to a component: both name it by its pointer.
        if (typeof member === "string" && member.startsWith("#/components/") && !reached.has(member)) {
          reached.add(member)
          const [, , kind, name] = member.split("/")
          pending.push(spec.components?.[kind!]?.[name!])
        } else if (typeof member === "object") pending.push(member)
      }
    }
  }
  for (const [kind, entries] of Object.entries(spec.components ?? {}) as Array<[string, Json]>) {
    // Security schemes are named by `security`, not by `$ref`.
    if (kind === "securitySchemes") continue
    for (const name of Object.keys(entries)) if (!reached.has(`#/components/${kind}/${name}`)) delete entries[name]
  }
}

/** The name of the component a `$ref` points at, or undefined. */
const componentOf = (schema: Json | undefined): string | undefined =>
  typeof schema?.$ref === "string" && schema.$ref.startsWith("#/components/schemas/") ? schema.$ref.slice("#/components/schemas/".length) : undefined

/**
 * Each success response's example: the resource's (Examples.ts) where the response is a resource or a page of
 * them, unless the operation has its own. The resource's schema shows its example too.
 */
const addResponseExamples = (spec: Json): void => {
  const schemas: Json = spec.components.schemas
  const resources = resourceExamples
  for (const [name, example] of Object.entries(resources)) {
    if (schemas[name] !== undefined && schemas[name].example === undefined) schemas[name].examples ??= [example]
  }
  for (const item of Object.values(spec.paths as Record<string, Json>)) {
    for (const operation of Object.values(item) as Array<Json>) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
        const json = response.content?.["application/json"]
        if (Number(status) >= 300 || json === undefined) continue
        const own = componentOf(json.schema)
        // A page of resources, inline or named (`OutcomeRuleList`): its item's example, as a first page.
        const page: Json | undefined = own !== undefined ? schemas[own] : json.schema
        const item = page?.properties?.meta !== undefined ? componentOf(page.properties.data?.items) : undefined
        const example = responseExamples[operation.operationId] ??
          (own !== undefined && resources[own] !== undefined ? resources[own]
            : item !== undefined && resources[item] !== undefined ? listExample(resources[item])
            : undefined)
        if (example !== undefined) json.example = example
      }
    }
  }
}

/** A request body's description (its schema's, else the operation's summary) and its example (Examples.ts). */
const describeBody = (operation: Json, schemas: Json): void => {
  const body = operation.requestBody
  if (body === undefined) return
  const json = body.content["application/json"]
  const ref: string | undefined = (json ?? body.content["multipart/form-data"])?.schema?.$ref
  body.description ??= (ref === undefined ? undefined : schemas[ref.split("/").pop()!]?.description) ?? `The body of: ${operation.summary ?? operation.operationId}.`
  const example = requestExamples[operation.operationId]
  if (json === undefined || example === undefined) return
  json.example = example
  // The body's named schema shows it too, where the reference lists the schemas.
  const component = ref === undefined ? undefined : schemas[ref.split("/").pop()!]
  if (component !== undefined) component.examples ??= [example]
}

/** The operation's rules, headers, `limit` and upload, in place; `errorsAt`: where the error reference is served. */
const decorate = (operation: Json, endpoint: HttpApiEndpoint.Top, policy: EndpointPolicy, errorsAt: string): void => {
  const statuses = Object.keys(operation.responses).map(Number)
  const own = operation.description as string | undefined
  const paged = (operation.parameters ?? []).some((p: Json) => p.in === "query" && p.name === "cursor")
  operation.description = [own, rulesOf(endpoint, policy, statuses, paged, errorsAt)].filter((p) => p !== undefined).join("\n\n")
  operation["x-fos-idempotency"] = policy.idempotency
  operation["x-fos-rate-bucket"] = policy.bucket ?? "general"
  const parameters: Array<Json> = operation.parameters ?? []
  for (const parameter of parameters) {
    // The paging query's page size: text on the wire, an integer to a client.
    if (parameter.in === "query" && parameter.name === "limit") {
      parameter.schema = { type: "integer", minimum: 1, maximum: maxPageSize, default: defaultPageSize }
      parameter.description = `Page size, 1 to ${maxPageSize} (default ${defaultPageSize}).`
    }
    if (parameter.in === "query" && parameter.name === "cursor") parameter.description = "The nextCursor or previousCursor of the previous page; omit it for the first page."
  }
  const write = endpoint.method !== "GET"
  if (policy.idempotency === "required" || (policy.idempotency === "accepted" && write)) {
    parameters.push(idempotencyKeyParameter(policy.idempotency === "required"))
  }
  if (parameters.length > 0) operation.parameters = parameters
  for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
    const code = Number(status)
    // Effect names an empty response "<No Content>", which a Markdown renderer takes for an HTML tag and drops.
    if (response.description === "<No Content>") response.description = "No Content"
    response.headers = {
      "x-correlation-id": headerRef("x-correlation-id"),
      "X-RateLimit-Limit": headerRef("X-RateLimit-Limit"),
      "X-RateLimit-Remaining": headerRef("X-RateLimit-Remaining"),
      "X-RateLimit-Reset": headerRef("X-RateLimit-Reset"),
      ...(code === 429 || code === 503 ? { "Retry-After": headerRef("Retry-After") } : {}),
      ...(code < 400 && write && policy.idempotency !== "refused" ? { "Idempotency-Replayed": headerRef("Idempotency-Replayed") } : {}),
      ...(code < 400 && policy.attachment !== undefined ? { "Content-Disposition": headerRef("Content-Disposition") } : {})
    }
  }
  const form = operation.requestBody?.content?.["multipart/form-data"]
  if (policy.upload !== undefined && form !== undefined) {
    const file = form.schema?.properties?.[policy.upload.fileField]
    if (file !== undefined) {
      form.schema.properties[policy.upload.fileField] = {
        type: "string",
        format: "binary",
        contentMediaType: "application/octet-stream",
        description: `The file: PDF, PNG or JPEG, at most ${policy.upload.maxFileBytes} bytes.`
      }
      form.encoding = { [policy.upload.fileField]: { contentType: "application/pdf, image/png, image/jpeg" } }
    }
  }
}
