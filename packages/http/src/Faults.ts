/**
 * Scripted request faults at the gate (core simulate/Faults.ts, docs/faults.md): which operation an endpoint is, as
 * the OpenAPI document names it, and what a fault does to a request of it. An injected problem is the catalog's
 * problem, rendered like any other (its correlation id, its rate-limit headers, its Retry-After) and commits
 * nothing; latency holds the request and then runs it; commit-then-lose runs it, commits it, and answers 500. A
 * request that a fault's probability spares, or that meets none, runs as usual.
 */
import type { Auth, Store } from "@fos/core"
import { Faults, Problem } from "@fos/core"
import { ErrorCatalog, type FaultEffect } from "@fos/contract"
import { Clock, Context, Duration, Effect } from "effect"
import { HttpRouter, type HttpServerRequest, type HttpServerResponse } from "effect/http"
import type { HttpApi, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { OpenApi } from "effect/http-api"
import type { RequestInfo } from "./RequestInfo.ts"
import { ServerApi } from "./ServerApi.ts"

/**
 * How a server drops a request's connection with no answer (commit-then-lose with `lose: "dropped_connection"`):
 * true when it did. Node's server destroys the socket (adapters/node); an embedded engine's `fetch` rejects as a
 * network error would (Engine.ts). Where none is given (Bun's and Deno's servers, whose handlers cannot drop a
 * connection) the lost answer is the 500 form.
 */
export type ConnectionDropper = (request: HttpServerRequest.HttpServerRequest) => boolean

export class DropConnection extends Context.Reference<ConnectionDropper | undefined>("fos/http/DropConnection", {
  defaultValue: () => undefined
}) {}

/** The group whose endpoints arm and clear faults: no fault matches them, so a tester cannot lock them out. */
const faultsGroup = "faults"

/** An endpoint as a fault's matcher names it. */
export interface FaultTarget {
  readonly method: string
  /** The OpenAPI path template: `/v2/customers/{customerId}`. */
  readonly path: string
  readonly operationId: string
}

/** An endpoint's operation, named as `OpenApi.fromApi` names it: its Identifier annotation, else `group.endpoint`. */
export const faultTargetOf = (endpoint: HttpApiEndpoint.Top, group: HttpApiGroup.Top): FaultTarget => ({
  method: endpoint.method,
  path: endpoint.path.replace(/:(\w+)/g, "{$1}"),
  operationId: Context.getOrElse(endpoint.annotations, OpenApi.Identifier, () => `${group.identifier}.${endpoint.identifier}`)
})

/** Every operation a fault may match: the API's, but for the faults group's own. */
export const faultTargets: ReadonlyArray<FaultTarget> = (Object.values((ServerApi as unknown as HttpApi.Top).groups) as ReadonlyArray<HttpApiGroup.Top>)
  .filter((group) => group.identifier !== faultsGroup)
  .flatMap((group) => (Object.values(group.endpoints) as ReadonlyArray<HttpApiEndpoint.Top>).map((endpoint) => faultTargetOf(endpoint, group)))

/** The target a fault may match for an endpoint; undefined for the faults group's own endpoints. */
export const faultableTarget = (endpoint: HttpApiEndpoint.Top, group: HttpApiGroup.Top): FaultTarget | undefined =>
  group.identifier === faultsGroup ? undefined : faultTargetOf(endpoint, group)

/** How long a client is asked to wait by an injected problem that sets no Retry-After but whose code has one. */
const defaultRetryAfter: Partial<Record<string, number>> = { RATE_LIMITED: 1, SERVICE_UNAVAILABLE: 5 }

const injectedProblem = (fault: Faults.TakenFault, effect: Extract<FaultEffect, { type: "problem" }>): Problem.ApiError => {
  const retryAfterSeconds = effect.retryAfterSeconds ?? defaultRetryAfter[effect.code]
  return Problem.apiError(effect.code, `${ErrorCatalog[effect.code].title} (injected by the sandbox fault ${fault.id}).`, {
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds })
  })
}

const lostAnswer = (fault: Faults.TakenFault): Problem.ApiError =>
  Problem.apiError("INTERNAL_ERROR", `The request was carried out, but its answer was lost (the sandbox fault ${fault.id}).`, {
    resolution: "Retry with the same Idempotency-Key: the first request's answer is replayed, and nothing is done twice."
  })

/** The customers a request names: its path's and query's `customerId`, and its JSON body's top-level one. */
const customersOf = (request: HttpServerRequest.HttpServerRequest, body: string | undefined, params: Readonly<Record<string, string | undefined>>): Array<string> => {
  const found: Array<string> = []
  if (params.customerId !== undefined) found.push(params.customerId)
  const q = request.url.indexOf("?")
  if (q >= 0) {
    const fromQuery = new URLSearchParams(request.url.slice(q + 1)).get("customerId")
    if (fromQuery !== null) found.push(fromQuery)
  }
  if (body !== undefined && body !== "") {
    try {
      const value = (JSON.parse(body) as { customerId?: unknown } | null)?.customerId
      if (typeof value === "string") found.push(value)
    } catch {
      // the gate has refused a body that is not JSON already
    }
  }
  return found
}

/**
 * What the sandbox's request faults do to a request of one endpoint (core simulate/Faults.ts): `proceed` runs under
 * the fault the request meets, if any, and the request is marked with the fault's id (`info.injected`, for the
 * request log) when one applies. `body` is the JSON body's text (undefined on reads and uploads).
 */
export type RequestFaults = <R>(
  caller: Auth.Caller,
  info: RequestInfo,
  body: string | undefined,
  proceed: Effect.Effect<HttpServerResponse.HttpServerResponse, Problem.ApiError, R>
) => Effect.Effect<HttpServerResponse.HttpServerResponse, Problem.ApiError, R | Store.Store>

/**
 * The request faults of the endpoint `target` names, settled when the server is built; `dropConnection` is how the
 * server drops a connection, when it can, and `realClock` the engine's real time (core kernel/RealClock.ts), on which
 * a latency fault waits.
 */
export const requestFaults = (target: FaultTarget, dropConnection: ConnectionDropper | undefined, realClock: Clock.Clock): RequestFaults => (caller, info, body, proceed) =>
  Effect.withFiber((fiber) => {
    const params = Context.getOrUndefined(fiber.context, HttpRouter.RouteContext)?.params ?? {}
    const request = info.request
    const faulted: Faults.FaultedRequest = { ...target, customerIds: customersOf(request, body, params) }
    return Effect.flatMap(Faults.takeRequestFault(caller, faulted), (fault): typeof proceed => {
      if (fault === undefined) return proceed
      info.injected = fault.id
      const effect = fault.effect
      switch (effect.type) {
        case "problem":
          return Effect.fail(injectedProblem(fault, effect))
        case "latency":
          // Latency is the network's, so real time whatever the engine's clock (as a receiver's time limit is). A
          // range's wait was drawn when the fault was taken (core simulate/Faults.ts).
          return Effect.andThen(Effect.sleep(Duration.millis(effect.ms)).pipe(Effect.provideService(Clock.Clock, realClock)), proceed)
        case "commit_then_lose":
          // What failed commits nothing and loses nothing: its answer goes out as usual. A dropped connection is
          // dropped once the write has committed; the 500 then goes nowhere (the request log still records it).
          return Effect.flatMap(proceed, (response) => {
            if (response.status >= 400) return Effect.succeed(response)
            if (effect.lose === "dropped_connection") dropConnection?.(request)
            return Effect.fail(lostAnswer(fault))
          })
      }
    })
  })
