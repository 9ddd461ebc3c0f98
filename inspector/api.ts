/**
 * The credential and the API: how the inspector calls fos, as any client does (the key in `x-api-key`, the operator
 * token as a bearer token, an Idempotency-Key on every write), and what it knows of the calls it makes.
 *
 * Every call to the public, simulate and inspect endpoints names its endpoint of the contract's HttpApi definition
 * (`Api` in @fos/contract) as `group.name`, and the compiler checks the rest against it: that the method is the
 * endpoint's, that the path is the endpoint's path with its parameters filled in (and any query string), that the
 * body is its payload, and the answer is typed as its success. Those are types only: the definition's value (its
 * schemas, Effect) stays out of the bundle (scripts/inspector-assets.ts). The operator surface is not in the
 * contract (packages/http/src/Operator.ts), so its paths and answers are the inspector's own (`OperatorPath`).
 */
import type { Api, Environment, ListMeta, Me, OrganizationStatus, Problem } from "@fos/contract"
import type { HttpApi, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { type Inputs, useEffect, useState } from "preact/hooks"

// --- the contract's endpoints, as types --------------------------------------------------------------------------

type Groups = typeof Api extends HttpApi.HttpApi<infer _Id, infer G> ? G : never

type EndpointsByGroup = {
  readonly [G in Groups as HttpApiGroup.Identifier<G>]: {
    readonly [E in HttpApiGroup.Endpoints<G> as HttpApiEndpoint.Identifier<E>]: E
  }
}

/** An endpoint of the API, as `group.name`: `inspect.listTimers`, `orders.execute`. */
export type EndpointKey = { readonly [G in keyof EndpointsByGroup]: `${G}.${keyof EndpointsByGroup[G] & string}` }[keyof EndpointsByGroup]

type EndpointOf<K extends EndpointKey> = K extends `${infer G extends keyof EndpointsByGroup}.${infer N}`
  ? N extends keyof EndpointsByGroup[G] ? EndpointsByGroup[G][N] : never
  : never

/** A path with each `:param` filled in by any text: `/v2/orders/:orderId/execute` is `/v2/orders/${string}/execute`. */
type Filled<P extends string> = P extends `${infer Head}:${infer _Param}/${infer Rest}` ? `${Head}${string}/${Filled<Rest>}`
  : P extends `${infer Head}:${infer _Param}` ? `${Head}${string}`
  : P

// Each of these distributes over K first, so that an endpoint left unnamed (`never`, the default of `call` and
// `useGet`) gives `never`, which no path is: a call must name its endpoint.

/** The endpoint's path as the contract declares it: `/v2/orders/:orderId/execute`. */
export type DeclaredPath<K extends EndpointKey> = K extends unknown
  ? EndpointOf<K> extends { readonly path: infer P extends string } ? P : never
  : never

/** The endpoint's path as the inspector requests it: its parameters filled in, with or without a query string. */
export type Path<K extends EndpointKey> = K extends unknown ? Filled<DeclaredPath<K>> | `${Filled<DeclaredPath<K>>}?${string}` : never

/** The endpoint's method. */
export type Method<K extends EndpointKey> = K extends unknown ? EndpointOf<K> extends { readonly method: infer M } ? M : never : never

/**
 * What the endpoint answers on success: its success schema's type, which is the shape of its JSON (the schema's
 * encoded side is typed as any JSON there); ids are branded strings in it.
 */
export type Answer<K extends EndpointKey> = K extends unknown
  ? EndpointOf<K> extends { readonly "~Success": { readonly Type: infer A } } ? A : never
  : never

/** The body the endpoint takes. */
export type Body<K extends EndpointKey> = K extends unknown
  ? EndpointOf<K> extends { readonly "~Payload": { readonly Type: infer A } } ? A : never
  : never

/** The endpoints read with GET. */
export type ReadKey = { readonly [K in EndpointKey]: Method<K> extends "GET" ? K : never }[EndpointKey]

/** A path of some endpoint read with GET. */
export type ReadPath = Path<ReadKey>

/** An answer of a list endpoint: a page of rows and its meta. */
export interface Page<Row> {
  readonly data: ReadonlyArray<Row>
  readonly meta: ListMeta
}

/** A row of a list endpoint's answer. */
export type Row<K extends EndpointKey> = Answer<K> extends { readonly data: ReadonlyArray<infer R> } ? R : never

/** A path of the operator surface (`/operator/...`), which the contract does not describe. */
export type OperatorPath = `/operator/${string}`

/** A list of the operator surface: its rows, with no meta (packages/http/src/Operator.ts). */
export interface OperatorList<Row> {
  readonly data: ReadonlyArray<Row>
}

/**
 * Holds (is `true`) when `Listed` names every value of the contract's `Union`: `Check<Whole<DeliveryStatus, …>>`
 * fails to compile once the contract adds a value the inspector's list lacks.
 */
export type Whole<Union, Listed extends Union> = [Exclude<Union, Listed>] extends [never] ? true : false

/**
 * Compiles only when `T` is `true`: a check of the compiler's, which leaves nothing in the bundle. A check is an
 * exported alias (`export type _Name = Check<…>`), since the type check refuses an unused local one.
 */
export type Check<T extends true> = T

// --- the credential ----------------------------------------------------------------------------------------------

export const storageKey = "fos-inspector-session"

/**
 * An organization as the operator surface lists it (`GET /operator/organizations`): what the inspector reads of it,
 * in the contract's words for its status.
 */
export interface OperatorOrganization {
  readonly id: string
  readonly name: string
  readonly status: OrganizationStatus
  readonly features: ReadonlyArray<string>
  readonly createdAt: string
}

/** A session of an environment's key; `me`, the caller as signing in read it. */
export interface KeySession {
  readonly kind: "key"
  readonly credential: string
  readonly environment: Environment
  readonly me?: Me
}

/** A session of the operator token; `me`, the organizations signing in listed. */
export interface OperatorSession {
  readonly kind: "operator"
  readonly credential: string
  readonly me?: OperatorList<OperatorOrganization>
}

/** What the user signed in with: an environment's key, or the operator token. */
export type Session = KeySession | OperatorSession

/** What the user signed in with: an environment's key, or the operator token. */
export const sessionOf = (credential: string): Session => {
  const key = /^ck_(sandbox|live)_/.exec(credential)
  // The pattern captures only an environment's name.
  return key === null ? { kind: "operator", credential } : { kind: "key", credential, environment: key[1] as Environment }
}

export const loadStored = (): Session | undefined => {
  try {
    const stored = window.sessionStorage.getItem(storageKey)
    return stored === null ? undefined : sessionOf(stored)
  } catch {
    return undefined
  }
}

// --- the API -----------------------------------------------------------------------------------------------------

export class ApiError extends Error {
  readonly status: number
  /** The answer's problem; undefined when its body was empty or not JSON. */
  readonly problem: Problem | undefined
  constructor(status: number, problem: Problem | undefined) {
    super(problem?.detail ?? problem?.title ?? `HTTP ${status}`)
    this.status = status
    this.problem = problem
  }
}

/**
 * What a call rejects with: an ApiError (the server's answer), or what `fetch` threw (a network failure, an abort),
 * an Error too. The inspector throws nothing else, so a caught value is taken as one (`failureOf`).
 */
export type Failure = ApiError | Error

export const failureOf = (caught: unknown): Failure => caught as Failure

/** The HTTP status of a failed call: the server's answer's, or undefined when none came. */
export const httpStatus = (error: Failure | undefined): number | undefined => (error instanceof ApiError ? error.status : undefined)

/** A fresh Idempotency-Key: every write the inspector sends carries one, as a careful client's does. */
const idempotencyKey = () => `inspector-${crypto.randomUUID()}`

export const headersOf = (session: Session): Record<string, string> =>
  session.kind === "key" ? { "x-api-key": session.credential } : { authorization: `Bearer ${session.credential}` }

/**
 * The path fos is mounted at (`/fos`), as the page names it in its `fos-base-path` meta element; `""` at the
 * origin's root, where the page names none.
 */
const mount = document.querySelector<HTMLMetaElement>('meta[name="fos-base-path"]')?.content ?? ""

/** The environment's base (`/sandbox` or `/live`, under the mount) for a key; the operator surface's is the mount. */
export const baseOf = (session: Session): string => (session.kind === "key" ? `${mount}/${session.environment}` : mount)

/** How many calls are in flight, shown on the root element as `data-pending` (a test waits for 0). */
let inFlight = 0
const track = (delta: number) => {
  inFlight += delta
  document.documentElement.dataset.pending = String(inFlight)
}

/**
 * One call: `path` under the session's base; resolves to the JSON answer, rejects with an ApiError (its problem).
 * Untyped: `call` and `callOperator` name what is called; `send`, what the server named (an action's path).
 */
export const request = async (session: Session, method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<unknown> => {
  track(1)
  try {
    return await send(session, method, path, body, signal)
  } finally {
    track(-1)
  }
}

/** A call to an endpoint of the API, `K`; it answers what the endpoint's success schema says. */
export const call = <K extends EndpointKey = never>(
  session: Session,
  method: NoInfer<Method<K>>,
  path: NoInfer<Path<K>>,
  body?: NoInfer<Body<K>>,
  signal?: AbortSignal
): Promise<Answer<K>> =>
  // The server is built from the same definition, so its answer is the endpoint's success.
  request(session, method, path, body, signal) as Promise<Answer<K>>

/** A read of the operator surface, answering `A`. */
export const callOperator = <A>(session: Session, path: OperatorPath): Promise<A> => request(session, "GET", path) as Promise<A>

/** Signs in: reads the key's user and organization, or the organizations the operator token sees. */
export const signIn = async (session: Session): Promise<Session> =>
  session.kind === "key"
    ? { ...session, me: await call<"portal.me">(session, "GET", "/v2/portal/users/me") }
    : { ...session, me: await callOperator<OperatorList<OperatorOrganization>>(session, "/operator/organizations") }

/**
 * The correlation ids of the reads this page made itself (its lists, counts and polls), so that the recent requests
 * can leave them out: the server logs them like any client's. Bounded: the oldest go first. The live stream can show
 * a read before its own answer reaches the page and names it, so a view that leaves them out subscribes, to draw its
 * rows again once it knows. The ids are kept for the tab (sessionStorage: they are no secret), so that after a reload
 * the reads of the page before it are still known as its own.
 */
const readsKey = "fos-inspector-own-reads"
export const readsOfThisPage = new (class extends Set<string> {
  readonly #listeners = new Set<() => void>()
  #saving: ReturnType<typeof setTimeout> | undefined
  constructor() {
    super()
    // Outside a browser (a test importing the application) there is no tab to keep them in.
    const kept = typeof window === "undefined" ? null : window.sessionStorage.getItem(readsKey)
    for (const id of (kept ?? "").split(" ")) if (id !== "") super.add(id)
  }
  /** Forgets them, in the tab too (signing out). */
  forget(): void {
    clearTimeout(this.#saving)
    this.#saving = undefined
    super.clear()
    window.sessionStorage.removeItem(readsKey)
  }
  /** Calls `listener` after each id added; answers how to stop. */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }
  override add(id: string | null | undefined) {
    if (id === null || id === undefined) return this
    // At its bound, it has a first (oldest) id.
    if (this.size >= 2000) this.delete(this.values().next().value!)
    super.add(id)
    for (const listener of this.#listeners) listener()
    // Written once for a burst of reads.
    if (typeof window !== "undefined") this.#saving ??= setTimeout(() => {
      this.#saving = undefined
      window.sessionStorage.setItem(readsKey, [...this].join(" "))
    }, 200)
    return this
  }
})()

const send = async (session: Session, method: string, path: string, body: unknown, signal: AbortSignal | undefined): Promise<unknown> => {
  const headers: Record<string, string> = { accept: "application/json", ...headersOf(session) }
  if (method !== "GET") headers["idempotency-key"] = idempotencyKey()
  if (body !== undefined) headers["content-type"] = "application/json"
  const response = await fetch(`${baseOf(session)}${path}`, {
    method,
    headers,
    body: body === undefined ? null : JSON.stringify(body),
    cache: "no-store",
    credentials: "omit",
    // A read a view no longer wants is let finish rather than cut off: the server answers and logs it all the same,
    // and only its answer names it as the page's own, for the recent requests to leave out.
    signal: method === "GET" ? null : signal ?? null
  })
  if (method === "GET") readsOfThisPage.add(response.headers.get("x-correlation-id"))
  const text = await response.text()
  if (signal?.aborted === true) throw signal.reason
  let json: unknown
  try {
    json = text === "" ? undefined : JSON.parse(text)
  } catch {
    json = undefined
  }
  // An error answer's body is a problem (RFC 9457), as every fos error is.
  if (!response.ok) throw new ApiError(response.status, json as Problem | undefined)
  return json
}

/** The session the views read with: the App sets it on every render. */
export const SessionContext: { current: Session | undefined } = { current: undefined }

/** A read's state: its answer, or its failure (a 404 is kept as `error.status`), and `reload`. */
export interface Loaded<A> {
  readonly data: A | undefined
  readonly error: Failure | undefined
  readonly loading: boolean
  readonly reload: () => void
}

/** Loads `path` (GET) when `deps` change; untyped, as `useGet` and `useOperatorGet` are not. */
export const useLoad = <A>(path: string | undefined, deps: Inputs = []): Loaded<A> => {
  const [state, setState] = useState<Omit<Loaded<A>, "reload">>({ data: undefined, error: undefined, loading: path !== undefined })
  const [nonce, setNonce] = useState(0)
  useEffect(() => {
    if (path === undefined) return
    const controller = new AbortController()
    setState((s) => ({ ...s, loading: true }))
    // The views render only once a session is signed in, which sets SessionContext first.
    request(SessionContext.current!, "GET", path, undefined, controller.signal).then(
      (data) => setState({ data: data as A, error: undefined, loading: false }),
      (caught: unknown) => {
        const error = failureOf(caught)
        if (error?.name !== "AbortError") setState({ data: undefined, error, loading: false })
      }
    )
    return () => controller.abort()
  }, [path, nonce, ...deps])
  return { ...state, reload: () => setNonce((n) => n + 1) }
}

/** Loads the endpoint `K` at `path` when `deps` change: `{data, error, loading, reload}`. */
export const useGet = <K extends ReadKey = never>(path: NoInfer<Path<K>> | undefined, deps?: Inputs): Loaded<Answer<K>> => useLoad(path, deps)

/** Loads a read of the operator surface, answering `A`. */
export const useOperatorGet = <A>(path: OperatorPath, deps?: Inputs): Loaded<A> => useLoad(path, deps)
