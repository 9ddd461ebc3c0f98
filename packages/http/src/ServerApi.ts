/**
 * The contract's HttpApi as the server serves it: every endpoint behind the gate, which authenticates the caller,
 * counts it against its rate bucket, checks the body and applies the endpoint's idempotency policy. The contract
 * declares each endpoint's policy (its annotations, read by `policyOf`) but knows nothing of the gate; the server
 * adds it here so that handlers may read `CurrentCaller` and fail with the engine's `ApiError`.
 */
import { Api } from "@fos/contract"
import type { Auth, Documents } from "@fos/core"
import { Problem } from "@fos/core"
import { Context, type Effect, Fiber, Schema, SchemaGetter } from "effect"
import { type HttpApi, type HttpApiGroup, HttpApiMiddleware } from "effect/http-api"

/** The authenticated caller, for handlers; the gate provides it. */
export class CurrentCaller extends Context.Service<CurrentCaller, Auth.Caller>()("fos/http/CurrentCaller") {}

/**
 * `CurrentCaller.use(f)` without its step of the fiber: the router adds the caller to the request's context before
 * it calls the handler (Router.ts), so a handler that asks at once finds it there; called anywhere else (no fiber,
 * or none with a caller), it is `CurrentCaller.use`.
 */
export const withCaller = <A, E, R>(f: (caller: Auth.Caller) => Effect.Effect<A, E, R>): Effect.Effect<A, E, R | CurrentCaller> => {
  const fiber = Fiber.getCurrent()
  const caller = fiber === undefined ? undefined : Context.getOrUndefined(fiber.context, CurrentCaller)
  return caller === undefined ? CurrentCaller.use(f) : f(caller)
}

/** The parsed form of an upload endpoint's request, set by the gate; undefined on every other endpoint. */
export class CurrentUpload extends Context.Reference<ReadonlyArray<Documents.FormPart> | undefined>("fos/http/CurrentUpload", {
  defaultValue: () => undefined
}) {}

/**
 * The gate's error, declared so that handlers may fail with `ApiError`. The gate renders an `ApiError` as a Problem
 * under its own status, which each endpoint documents, so this declares no body of its own: HttpApi then merges it
 * into the endpoint's 500 Problem (same description) instead of documenting an opaque `{}` beside it. It is never
 * encoded (the gate renders it) nor decoded (a client reads the endpoint's Problem).
 */
const GateError = Schema.Void.pipe(Schema.decodeTo(Schema.instanceOf(Problem.ApiError), {
  decode: SchemaGetter.forbidden(() => "an ApiError is sent as a Problem; the endpoint's Problem schema reads it"),
  encode: SchemaGetter.forbidden(() => "the gate renders an ApiError as a Problem itself")
})).annotate({ description: "Problem" })

/**
 * Runs authentication, rate limits, idempotency and the problem encoder around every endpoint. Handlers fail
 * with `ApiError`; the gate renders it, so it never reaches HttpApi's own error encoding. It is a declaration only,
 * for the handlers' types and the endpoints' documented problems: `Edge.gate` (Gate.ts) runs it, on the routes
 * Router.ts builds, and no layer implements it.
 */
export class Gate extends HttpApiMiddleware.Service<Gate, { provides: CurrentCaller }>()("fos/http/Gate", {
  error: GateError
}) {}

/** The API the server implements: the contract's, every endpoint behind the gate. */
export const ServerApi: ServerApi = Api.middleware(Gate)
/**
 * Its type, named: inferred, it is the whole contract's groups spelled out, which is longer than the compiler will
 * write into a declaration file (TS7056) once the contract grows.
 */
export type ServerApi = typeof Api extends HttpApi.HttpApi<infer Id, infer Groups> ? HttpApi.HttpApi<Id, HttpApiGroup.AddMiddleware<Groups, Gate>> : never
