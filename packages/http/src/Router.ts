/**
 * Serves the HttpApi's endpoints as plain HttpRouter routes, one per endpoint under each base address
 * (`/sandbox/...` and `/live/...`), with the pipeline folded into each route when the server is built.
 *
 * Why not `HttpApiBuilder.layer`: its per-request path re-merges the handler's whole context, runs a generator and
 * the Schema interpreter's effect form for every decode and encode, and cannot know the base address, so fos had to
 * rewrite every request's URL before routing. Measured on the foundation bench, a bare HttpApi route cost about
 * 12 µs of CPU more than a bare HttpRouter route answering the same bytes (29 against 17 µs), and HttpRouter alone
 * was within a few per cent of raw `node:http` (docs/performance.md). Here the same definitions are used (the
 * endpoints' schemas, the handlers registered with `group` of HandlerGroups.ts, typed as `HttpApiBuilder.group`
 * types them, the OpenAPI document from `openApiDocument`); only the per-request work is compiled once: decoders
 * and encoders are the Schema's synchronous forms, the status comes from the endpoint's success schema, and the
 * environment is the route's own.
 *
 * What the endpoint run does, in the order HttpApi did it: decode the path parameters, then the query, then the
 * JSON body, call the handler, and encode its value with the success schema under its status (204 with no body
 * when the endpoint declares none). A plain success schema is written by its compiled JSON writer (JsonWriter.ts),
 * which gives the same text as encoding then `JSON.stringify`. A decoding failure is the problem `fromSchemaError`
 * maps it to; an encoding failure is a defect (a 500), as it is in HttpApi.
 */
import type { Auth, Engine } from "@fos/core"
import { Problem, Wire } from "@fos/core"
import { type Environment, openApiDocument, policyOf } from "@fos/contract"
import { Cause, Context, Effect, Exit, Fiber, Layer, Schema, SchemaAST, type Stream } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { type HttpApi, type HttpApiEndpoint, type HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { BasePath } from "./BasePath.ts"
import { CurrentCaller, ServerApi } from "./ServerApi.ts"
import { handlersOf, type HandlerItem } from "./HandlerGroups.ts"
import { faultTargetOf } from "./Faults.ts"
import { compileJsonWriter } from "./JsonWriter.ts"
import { Edge } from "./Pipeline.ts"
import { type EndpointRun, fromSchemaError, parsedBody, type SchemaFailureKind } from "./RequestInfo.ts"
import { refusedParameters } from "./RefusedText.ts"
import { pathMethodsOf, servedApi, servedEnvironments, ServedParts } from "./Served.ts"

/** The status of a success schema: its `HttpApiSchema.status` annotation (on the schema, a check, or its key), else 200. */
export const statusOf = (ast: SchemaAST.AST): number => {
  for (const check of [...(ast.checks ?? [])].reverse()) {
    const status = check.annotations?.httpApiStatus
    if (typeof status === "number") return status
  }
  const own = ast.annotations?.httpApiStatus ?? ast.context?.annotations?.httpApiStatus
  return typeof own === "number" ? own : 200
}

/**
 * The media type of a streamed success schema (`HttpApiSchema.StreamUint8Array`, `StreamSse`), or undefined for
 * any other. Effect marks those schemas with a type id it does not export a guard for.
 */
const streamContentTypeOf = (success: Schema.Top | undefined): string | undefined =>
  success !== undefined && "~effect/http-api/HttpApiSchema/Stream" in success ? (success as unknown as { readonly contentType: string }).contentType : undefined

/**
 * A decoder that answers at once: a Schema's synchronous form, failing with the problem HttpApi's failure maps to.
 * The body and the query refuse members their schema does not name (`onExcessProperty: "error"`), at every depth,
 * as the OpenAPI document's `additionalProperties: false` says (docs/decisions.md, "Unknown members").
 */
const decoder = (schema: Schema.Top | undefined, kind: SchemaFailureKind) => {
  if (schema === undefined) return undefined
  // Every problem, not the first: errors[] carries a pointer per problem, so a client fixes them in one go.
  const decode = Schema.decodeUnknownExit(schema as Schema.Codec<unknown, unknown>, {
    errors: "all",
    ...(kind === "Payload" || kind === "Query" ? { onExcessProperty: "error" } : {})
  })
  return (input: unknown): Exit.Exit<unknown, Problem.ApiError> => {
    const exit = decode(input)
    return Exit.isSuccess(exit) ? exit as Exit.Exit<unknown> : Exit.fail(fromSchemaError(kind, Cause.squash(exit.cause) as Schema.SchemaError))
  }
}

/**
 * The query decoder of an endpoint that declares none: every parameter is unknown. (Effect's `Struct({})` is any
 * object, so it cannot say this.)
 */
const refuseQuery = (query: unknown): Exit.Exit<unknown, Problem.ApiError> => {
  const names = Object.keys(query as object)
  if (names.length === 0) return Exit.succeed(query)
  return Exit.fail(Problem.invalidRequest(
    names.slice(0, Wire.maxErrorEntries).map((name) => ({ pointer: Problem.toPointer([name]), detail: "is not allowed" })),
    "query"
  ))
}

/**
 * The query parameters an endpoint requires: its query struct's members that are not optional. One that is absent is
 * "required parameter missing", 400 BAD_REQUEST in the spec's table of codes; one present but not valid is
 * VALIDATION_ERROR, as a body's member is.
 */
const requiredQueryOf = (schema: Schema.Top): ReadonlyArray<string> => {
  const ast = SchemaAST.toEncoded(schema.ast)
  return SchemaAST.isObjects(ast) ? ast.propertySignatures.filter((p) => !SchemaAST.isOptional(p.type)).map((p) => String(p.name)) : []
}

/** The refusal of a query that lacks a required parameter, naming the first one missing. */
const missingQuery = (required: ReadonlyArray<string>, query: unknown): Effect.Effect<never, Problem.ApiError> | undefined => {
  const missing = required.find((name) => !Object.hasOwn(query as object, name))
  return missing === undefined ? undefined : Effect.fail(Problem.apiError("BAD_REQUEST", `The required query parameter ${missing} is missing.`))
}

/** Whether a request target carries a query with anything in it (a bare `?` names no parameter). */
const hasQuery = (url: string): boolean => {
  const q = url.indexOf("?")
  return q >= 0 && q < url.length - 1
}

/**
 * The body check of an endpoint that takes none: an empty body or `{}` is accepted, anything else refused like an
 * unknown member, each of an object's members named (up to the usual count). The text is already valid JSON.
 */
const refuseBody = (body: string): Exit.Exit<unknown, Problem.ApiError> => {
  const value: unknown = JSON.parse(body)
  const isObject = typeof value === "object" && value !== null && !Array.isArray(value)
  if (isObject && Object.keys(value).length === 0) return Exit.void
  const errors = isObject
    ? Object.keys(value).slice(0, Wire.maxErrorEntries).map((name) => ({ pointer: Problem.toPointer([name]), detail: "is not allowed" }))
    : [{ pointer: "", detail: "must be empty: this endpoint takes no body" }]
  return Exit.fail(Problem.invalidRequest(errors))
}

/** A decoder's failure as the endpoint run's. */
const failed = (exit: Exit.Failure<unknown, Problem.ApiError>) => exit as unknown as Effect.Effect<never, Problem.ApiError>

/** The JSON body's schema of an endpoint, or undefined when it takes none (or takes an upload, which the gate reads). */
const jsonPayloadOf = (endpoint: HttpApiEndpoint.Top, group: HttpApiGroup.Top): Schema.Top | undefined => {
  if (policyOf(endpoint, group).upload !== undefined) return undefined
  const json = endpoint.payload.get("application/json")
  if (json === undefined) return undefined
  return json.schemas.length === 1 ? json.schemas[0] : Schema.Union(json.schemas)
}

/**
 * An endpoint's run: decoding, the handler with the caller, and the response, as one effect over the request's
 * body text (read and checked by the gate). The edge runs it in a context that holds the engine's services.
 */
export const compileEndpoint = (
  endpoint: HttpApiEndpoint.Top,
  group: HttpApiGroup.Top,
  handler: HandlerItem["handler"]
): EndpointRun => {
  const decodeParams = decoder(endpoint.params, "Params")
  // An endpoint that declares no query takes none: any parameter it is sent is refused like an unknown one.
  const takesQuery = endpoint.query !== undefined
  const decodeQuery = takesQuery ? decoder(Schema.toCodecArrayFromSingle(endpoint.query!), "Query")! : refuseQuery
  const requiredQuery = takesQuery ? requiredQueryOf(endpoint.query!) : []
  const decodeHeaders = decoder(endpoint.headers, "Headers")
  const policy = policyOf(endpoint, group)
  const payload = jsonPayloadOf(endpoint, group)
  const decodePayload = policy.decodedByEngine ? undefined : decoder(payload, "Payload")
  const nullOnEmpty = payload !== undefined && SchemaAST.isNull(SchemaAST.toEncoded(payload.ast))
  // An endpoint with neither a JSON body nor an upload takes no body at all.
  const takesNoBody = payload === undefined && policy.upload === undefined
  const successes = [...endpoint.success] as ReadonlyArray<Schema.Top>
  if (successes.length > 1) throw new Error(`${group.identifier}.${endpoint.identifier}: the router takes one success schema per endpoint`)
  const success = successes[0]
  // The handler's value to its response; a value that does not encode is a defect (thrown, so a 500).
  const streamed = streamContentTypeOf(success)
  const attachment = policy.attachment
  const respond: (value: unknown) => HttpServerResponse.HttpServerResponse = attachment !== undefined
    // A file (a snapshot's export): its text as the engine wrote it (a value, for a handler that gives one, as JSON),
    // unencoded, since the engine's text is the file, byte for byte; `attachmentOf` adds its name.
    ? (value) => HttpServerResponse.text(typeof value === "string" ? value : JSON.stringify(value), { status: 200, contentType: "application/json" })
    : streamed !== undefined
    // A streamed body (the live stream's server-sent events): the handler's stream, sent as it comes, never cached
    // or buffered by a proxy.
    ? (value) =>
      HttpServerResponse.stream(value as Stream.Stream<Uint8Array>, {
        contentType: streamed,
        headers: { "cache-control": "no-store", "x-accel-buffering": "no" }
      })
    : success === undefined || HttpApiSchema.isNoContent(success.ast)
      ? (() => {
        const response = HttpServerResponse.empty({ status: success === undefined ? 204 : statusOf(success.ast) })
        return () => response
      })()
      : (() => {
        const status = statusOf(success.ast)
        const write = compileJsonWriter(success.ast)
        const encode = Schema.encodeUnknownExit(success as Schema.Codec<unknown, unknown>)
        const json = (value: unknown): string => {
          const exit = encode(value)
          if (Exit.isFailure(exit)) throw new Error(`${group.identifier}.${endpoint.identifier}: the handler's value does not encode`, { cause: exit.cause })
          return JSON.stringify(exit.value)
        }
        // The compiled writer when the schema has one and the value fits; else Effect's encoder, which also words
        // the failure when the value does not fit.
        return (value) => HttpServerResponse.text((write === undefined ? undefined : write(value)) ?? json(value), { status, contentType: "application/json" })
      })()
  const run = (
    request: HttpServerRequest.HttpServerRequest,
    body: string | undefined,
    caller: Auth.Caller,
    context: Context.Context<never> | undefined
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, Problem.ApiError> => {
    const input: Record<string, unknown> = { request, endpoint, group }
    if (decodeParams !== undefined) {
      const params = decodeParams(Context.getUnsafe(context!, HttpRouter.RouteContext).params)
      if (Exit.isFailure(params)) return failed(params)
      const refused = refusedParameters(params.value as Readonly<Record<string, unknown>>, "path")
      if (refused !== undefined) return Effect.fail(refused)
      input.params = params.value
    }
    if (decodeHeaders !== undefined) {
      const headers = decodeHeaders(request.headers)
      if (Exit.isFailure(headers)) return failed(headers)
      input.headers = headers.value
    }
    if (takesQuery) {
      const searchParams = Context.getUnsafe(context!, HttpServerRequest.ParsedSearchParams)
      const missing = requiredQuery.length === 0 ? undefined : missingQuery(requiredQuery, searchParams)
      if (missing !== undefined) return missing
      const query = decodeQuery(searchParams)
      if (Exit.isFailure(query)) return failed(query)
      const refused = refusedParameters(searchParams, "query", request.url)
      if (refused !== undefined) return Effect.fail(refused)
      input.query = query.value
    } else if (context !== undefined && hasQuery(request.url)) {
      const query = decodeQuery(Context.getUnsafe(context, HttpServerRequest.ParsedSearchParams))
      if (Exit.isFailure(query)) return failed(query)
    }
    if (policy.decodedByEngine) {
      // The engine decodes this body itself, in its own order (Policies.ts, `DecodedByEngine`).
      input.payload = body === undefined || body === "" ? undefined : parsedBody(request, body)
    } else if (decodePayload !== undefined) {
      const decoded = decodePayload(body === undefined || body === "" ? (nullOnEmpty ? null : undefined) : parsedBody(request, body))
      if (Exit.isFailure(decoded)) return failed(decoded)
      input.payload = decoded.value
    } else if (takesNoBody && body !== undefined && body !== "") {
      const refused = refuseBody(body)
      if (Exit.isFailure(refused)) return failed(refused)
    }
    // The caller joins the request's context in place, as HttpRouter adds the route's own: the request restores
    // its context when it ends. `Effect.provideService` would cost the request two more steps of its chain.
    const fiber = Fiber.getCurrent()!
    fiber.setContext(Context.add(fiber.context, CurrentCaller, caller))
    const answered = Effect.map(handler(input), respond) as Effect.Effect<HttpServerResponse.HttpServerResponse, Problem.ApiError>
    if (attachment === undefined) return answered
    const name = attachment((input.params ?? {}) as Readonly<Record<string, unknown>>)
    return Effect.map(answered, (response) => HttpServerResponse.setHeader(response, "content-disposition", `attachment; filename="${name}"`))
  }
  // The path parameters and the query are read from the fiber's context; an endpoint with neither skips that step
  // unless it was sent a query to refuse, since every step of the per-request chain costs (docs/performance.md).
  const withContext: EndpointRun = (request, body, caller) => Effect.withFiber((fiber) => run(request, body, caller, fiber.context))
  return decodeParams === undefined && !takesQuery
    ? (request, body, caller) => hasQuery(request.url) ? withContext(request, body, caller) : run(request, body, caller, undefined)
    : withContext
}

/**
 * The API's routes under both base addresses, and its OpenAPI document at `<base>/v2/openapi.json` (public, like the
 * reference page), all under the engine's base path: of them, what the engine serves (`ServedParts`, Served.ts). Needs
 * the groups' handlers (`group`, HandlerGroups.ts) and the edge.
 */
export const layerApiRoutes = (whole: HttpApi.Top = ServerApi as unknown as HttpApi.Top) =>
  HttpRouter.use(Effect.fnUntraced(function*(router) {
    const services = yield* Effect.context<never>()
    const edge = Context.get(services as Context.Context<Edge>, Edge)
    const served = yield* ServedParts
    const api = servedApi(whole, served)
    const bases: ReadonlyArray<Environment> = servedEnvironments(served)
    const mount = yield* BasePath
    const routes: Array<HttpRouter.Route<never, never>> = []
    for (const group of Object.values(api.groups) as ReadonlyArray<HttpApiGroup.Top>) {
      const handlers = handlersOf(services, group)
      if (handlers === undefined) return yield* Effect.die(new Error(`no handlers for the HttpApi group "${group.identifier}"`))
      for (const { endpoint, handler } of handlers.values()) {
        const gated = edge.gate(endpoint, group, compileEndpoint(endpoint, group, handler))
        const { operationId } = faultTargetOf(endpoint, group)
        for (const environment of bases) {
          const path = `${mount}/${environment}${endpoint.path}`
          routes.push(HttpRouter.route(endpoint.method, path as HttpRouter.PathInput, edge.serve(environment, gated, operationId)))
        }
      }
    }
    for (const environment of bases) {
      // Each environment's own document: what it serves, under its own base address. Built on its first request,
      // since building it takes a while and most engines (a test's, an embedded one) are never asked for it.
      let openapi: HttpServerResponse.HttpServerResponse | undefined
      const document = Effect.sync(() => (openapi ??= HttpServerResponse.jsonUnsafe(openApiDocument(api, environment, mount))))
      const path = `${mount}/${environment}/v2/openapi.json`
      routes.push(HttpRouter.route("GET", path as HttpRouter.PathInput, edge.serve(environment, () => document)))
    }
    // OPTIONS on every route (the spec names it among a read-only key's methods): 204, and the path's methods in
    // Allow; HEAD where GET is, as the router answers it.
    for (const [path, { environment, methods }] of pathMethodsOf(api, served, mount)) {
      const allow = [...methods, ...(methods.has("GET") ? ["HEAD"] : []), "OPTIONS"].sort().join(", ")
      routes.push(HttpRouter.route("OPTIONS", path as HttpRouter.PathInput, edge.serve(environment, edge.options(allow))))
    }
    yield* router.addAll(routes)
  })) as Layer.Layer<never, never, HttpRouter.HttpRouter | Edge | Engine.EngineServices>
