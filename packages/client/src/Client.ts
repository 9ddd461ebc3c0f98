/**
 * The typed client, derived with Effect's `HttpApiClient` from the HttpApi definition the server is built from
 * (`Api` in `@fos/contract`): a call of the wrong shape (an unknown endpoint, a missing parameter, a payload field of
 * the wrong type) fails to compile, and responses are decoded with the endpoints' own schemas.
 *
 * Two ways to use it: `makeClient` for Effect programs (needs an `HttpClient`), and `createClient`, the same
 * endpoints as plain async functions over `fetch` (or an engine's `engine.fetch`, with no port).
 */
import { Api, docsUrl, ErrorCatalog, Problem as ProblemSchema, toIso } from "@fos/contract"
import { Brand, Cause, Clock, Context, Effect, Exit, Layer, Schema, SchemaIssue } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { type HttpApi, HttpApiClient, type HttpApiEndpoint, type HttpApiGroup } from "effect/http-api"

/** The typed client for every endpoint of the API, grouped as the API is (`client.customers.get(...)`). */
export type FosClient = HttpApiClient.ForApi<typeof Api>

/** An RFC 9457 problem, as every error response carries it. */
export type Problem = typeof ProblemSchema.Type

export interface ClientOptions {
  /** The base address: `<origin>/sandbox` or `<origin>/live` (the spec's `{sandbox_base_url}`). */
  readonly baseUrl: string | URL
  /**
   * Sent as `x-api-key` with every request. Left out, requests carry no key: for a `fetch` that names the caller
   * itself (an embedded engine's `engine.client({ caller })`); over the network fos answers 401 API_KEY_MISSING.
   */
  readonly apiKey?: string | undefined
}

/** The base address without a trailing slash; it must name an environment. */
const baseUrlOf = (baseUrl: string | URL): string => {
  const text = String(baseUrl).replace(/\/+$/, "")
  if (!URL.canParse(text) || !/^https?:\/\/[^/]+(\/.*)?\/(sandbox|live)$/.test(text)) {
    throw new TypeError(`baseUrl must be an http(s) address ending with /sandbox or /live (the base address of an environment), not ${text}`)
  }
  return text
}

/** Headers added to the requests made inside one call; set them with `withHeaders` or `withIdempotencyKey`. */
export class CallHeaders extends Context.Reference<Readonly<Record<string, string>>>("fos/client/CallHeaders", {
  defaultValue: () => ({})
}) {}

/** Adds headers to the requests `self` makes. */
export const withHeaders = (headers: Readonly<Record<string, string>>) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.gen(function*() {
    const current = yield* CallHeaders
    return yield* Effect.provideService(self, CallHeaders, { ...current, ...headers })
  })

/**
 * Sends `Idempotency-Key: key` with the requests `self` makes: required by some endpoints (rotating a webhook
 * secret), accepted by every other POST, PATCH and DELETE. Reuse the key when retrying the same call.
 */
export const withIdempotencyKey = (key: string) => withHeaders({ "idempotency-key": key })

/** The typed client for Effect programs. */
export const makeClient = (options: ClientOptions): Effect.Effect<FosClient, never, HttpClient.HttpClient> =>
  HttpApiClient.make(Api, {
    baseUrl: baseUrlOf(options.baseUrl),
    transformClient: HttpClient.mapRequestEffect((request) =>
      Effect.gen(function*() {
        const headers = yield* CallHeaders
        return HttpClientRequest.setHeaders(request, options.apiKey === undefined ? headers : { "x-api-key": options.apiKey, ...headers })
      }))
  })

// --- the Promise client --------------------------------------------------------------------------------------

/**
 * A value as a caller writes it: branded types (ids such as `CustomerId`) as the plain strings and numbers they
 * are on the wire, so ids read from one response can be passed to the next call as they are.
 */
export type Plain<T> = T extends Brand.Brand<any> ? (T extends string ? string : T extends number ? number : T)
  : T extends FormData | Blob | Uint8Array | Date ? T
  : T extends ReadonlyArray<infer U> ? ReadonlyArray<Plain<U>>
  : T extends object ? { readonly [K in keyof T]: Plain<T[K]> }
  : T

type Part<K extends string, S extends Schema.Constraint> = [S["Type"]] extends [never] ? {} : { readonly [P in K]: Plain<S["Type"]> }

type PromiseRequest<E extends HttpApiEndpoint.ConstraintRequest> =
  & Part<"params", E["~Params"]>
  & Part<"query", E["~Query"]>
  & Part<"headers", E["~Headers"]>
  & Part<"payload", E["~Payload"]> extends infer Request ? keyof Request extends never ? void : Request : never

/** Per call: the idempotency key and any other headers. */
export interface CallOptions {
  readonly idempotencyKey?: string
  readonly headers?: Readonly<Record<string, string>>
}

type Groups = typeof Api extends HttpApi.HttpApi<infer _Id, infer G> ? G : never

/** The client with every endpoint a function returning a Promise of its decoded success. */
export type PromiseClient = {
  readonly [G in Groups as HttpApiGroup.Identifier<G>]: {
    readonly [E in Extract<HttpApiGroup.Endpoints<G>, HttpApiEndpoint.ConstraintRequest> as HttpApiEndpoint.Identifier<E>]: (
      request: PromiseRequest<E>,
      options?: CallOptions
    ) => Promise<HttpApiClient.SuccessType<E["~Success"]>>
  }
}

/** An error response: the problem it carries, as thrown by the Promise client. */
export class ProblemError extends Error {
  override readonly name = "ProblemError"
  readonly problem: Problem
  readonly status: number
  readonly type: string
  constructor(problem: Problem) {
    super(`${problem.status} ${problem.type}: ${problem.detail}`)
    this.problem = problem
    this.status = problem.status
    this.type = problem.type
  }
}

const isProblem = Schema.is(ProblemSchema)

const standardIssues = SchemaIssue.makeFormatterStandardSchemaV1()

/** Escapes one JSON Pointer reference token (RFC 6901). */
const pointerToken = (key: PropertyKey): string => String(key).replaceAll("~", "~0").replaceAll("/", "~1")

/**
 * The problem a request the client refuses to send carries (a payload, path or query of the wrong shape, caught by
 * the endpoint's schema before anything is sent): VALIDATION_ERROR with a pointer per issue, shaped as the server's
 * answer to the same request would be, so a caller handles one kind of error. What only a server has, it has not:
 * `correlationId` is empty; `instance` is the path the request would have been sent to.
 */
const refusedRequestProblem = (error: Schema.SchemaError, where: { readonly origin: string; readonly instance: string }, nowMs: number): Problem => {
  const spec = ErrorCatalog.VALIDATION_ERROR
  const errors = standardIssues(error.issue).issues.map((issue) => ({
    pointer: (issue.path ?? []).map((key) => "/" + pointerToken(typeof key === "object" && key !== null && "key" in key ? key.key : key as PropertyKey)).join(""),
    detail: issue.message
  }))
  return {
    type: "VALIDATION_ERROR",
    title: spec.title,
    status: spec.status,
    detail: "The request failed validation before it was sent; see errors[].",
    resolution: spec.resolution,
    docs: where.origin + docsUrl("VALIDATION_ERROR"),
    instance: where.instance,
    correlationId: "",
    // The client's own clock (Effect's): the problem was found here, when the call was made.
    timestamp: toIso(nowMs) as Problem["timestamp"],
    errors
  }
}

export interface PromiseClientOptions extends ClientOptions {
  /** How requests are sent: the global `fetch` when omitted; an engine's `engine.fetch` reaches it with no port. */
  readonly fetch?: (input: Request | string | URL, init?: RequestInit) => Promise<Response>
}

/**
 * The client as plain async functions: `await client.customers.get({ params: { customerId } })`. An error
 * response rejects with a `ProblemError`; a failure to reach the server or to read its answer rejects with the
 * underlying error.
 */
export const createClient = (options: PromiseClientOptions): PromiseClient => {
  const http = options.fetch === undefined
    ? FetchHttpClient.layer
    : FetchHttpClient.layer.pipe(Layer.provide(Layer.succeed(FetchHttpClient.Fetch, options.fetch as typeof globalThis.fetch)))
  const client = Effect.runSync(makeClient(options).pipe(Effect.provide(http))) as unknown as Record<
    string,
    Record<string, (request: unknown) => Effect.Effect<unknown, unknown>>
  >
  const base = new URL(baseUrlOf(options.baseUrl))
  const endpoints = (Api as unknown as { readonly groups: Record<string, { readonly endpoints: Record<string, { readonly path: string }> }> }).groups
  const call = async (group: string, name: string, method: (request: unknown) => Effect.Effect<unknown, unknown>, request: unknown, callOptions: CallOptions = {}) => {
    const headers = { ...callOptions.headers, ...(callOptions.idempotencyKey === undefined ? {} : { "idempotency-key": callOptions.idempotencyKey }) }
    const exit = await Effect.runPromiseExit(method(request).pipe(withHeaders(headers)))
    if (Exit.isSuccess(exit)) return exit.value
    const error = Cause.squash(exit.cause)
    if (isProblem(error)) throw new ProblemError(error)
    // A request its endpoint's schema refuses is never sent: the same problem error as a server's refusal.
    if (Schema.isSchemaError(error)) {
      const params = (request as { readonly params?: Record<string, unknown> } | undefined)?.params ?? {}
      const path = (endpoints[group]?.endpoints[name]?.path ?? "").replace(/:(\w+)/g, (whole, param: string) => param in params ? encodeURIComponent(String(params[param])) : whole)
      throw new ProblemError(refusedRequestProblem(error, { origin: base.origin, instance: base.pathname + path }, Effect.runSync(Clock.currentTimeMillis)))
    }
    throw error
  }
  return Object.fromEntries(Object.entries(client).map(([group, methods]) => [
    group,
    Object.fromEntries(Object.entries(methods).map(([name, method]) => [
      name,
      (request: unknown, callOptions?: CallOptions) => call(group, name, method, request, callOptions)
    ]))
  ])) as PromiseClient
}
