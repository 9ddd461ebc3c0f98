/**
 * What an engine serves of its API: both environments, the sandbox's simulate endpoints and its fault endpoints, by
 * default. A host that embeds the engine leaves out what it does not want reachable (`createEngine({ serve })`,
 * docs/embedding.md, "What the engine serves"); a left-out route is no route, answered as any unknown path is, and
 * the OpenAPI documents do not list it.
 */
import { type Environment, policyOf } from "@fos/contract"
import { Context } from "effect"
import { HttpApi, type HttpApiEndpoint, type HttpApiGroup } from "effect/http-api"

export interface ServeOptions {
  /** The sandbox environment, `/sandbox/...` (default true). */
  readonly sandbox?: boolean
  /** The live environment, `/live/...` (default true). */
  readonly live?: boolean
  /**
   * The sandbox-only endpoints, `/sandbox/v2/simulate/...`: the simulate controls, faults, scripted outcomes,
   * listeners and inspection, recent requests and the live stream among them, and the inspector at `/inspect`,
   * whose data they are (default true; false when `sandbox` is).
   */
  readonly simulate?: boolean
  /**
   * The fault endpoints (`/sandbox/v2/simulate/faults`, a webhook endpoint's receiver faults), and with them every
   * request fault: an engine that serves none applies none, so no sandbox user can make `engine.fetch` reject with
   * a dropped connection (default true; false when `simulate` is).
   */
  readonly faults?: boolean
  /** The operator surface, `/operator/...`, when an operator token is given (default true). */
  readonly operator?: boolean
}

/** `ServeOptions` settled: each part on or off. */
export type Served = { readonly [K in keyof ServeOptions]-?: boolean }

export const servedOf = (options: ServeOptions = {}): Served => {
  const sandbox = options.sandbox ?? true
  const simulate = sandbox && (options.simulate ?? true)
  return {
    sandbox,
    live: options.live ?? true,
    simulate,
    faults: simulate && (options.faults ?? true),
    operator: options.operator ?? true
  }
}

/** What the engine serves; everything when not told. */
export class ServedParts extends Context.Reference<Served>("fos/http/ServedParts", { defaultValue: () => servedOf() }) {}

/** The environments served, in the order their routes are added. */
export const servedEnvironments = (served: Served): ReadonlyArray<Environment> =>
  (["sandbox", "live"] as const).filter((environment) => served[environment])

const isSandboxOnly = (group: HttpApiGroup.Top) =>
  (Object.values(group.endpoints) as ReadonlyArray<HttpApiEndpoint.Top>).some((endpoint) => policyOf(endpoint, group).sandboxOnly)

/**
 * The API with only the groups served: without the sandbox-only groups when `simulate` is off, without the faults
 * group when `faults` is. The same API when every group is served, so its OpenAPI documents are built once.
 */
export const servedApi = <A extends HttpApi.Top>(api: A, served: Served): A => {
  const groups = Object.values(api.groups) as ReadonlyArray<HttpApiGroup.Top>
  const kept = groups.filter((group) => (served.simulate || !isSandboxOnly(group)) && (served.faults || group.identifier !== "faults"))
  if (kept.length === groups.length) return api
  return HttpApi.make(api.identifier).annotateMerge(api.annotations).add(...kept as [HttpApiGroup.Top]) as unknown as A
}

/** Each route's path (`/sandbox/v2/customers/:id`, under the base path) with its base's environment and methods. */
export type PathMethods = ReadonlyMap<string, { readonly environment: Environment; readonly methods: ReadonlySet<string> }>

/**
 * The methods each path of `api` takes under each base served, its OpenAPI document's GET among them: what a path's
 * OPTIONS answers in Allow, and what a 404 for a method the path does not take names. A sandbox-only endpoint lends
 * its path no method under /live, where it is 404.
 */
export const pathMethodsOf = (api: HttpApi.Top, served: Served, mount: string): PathMethods => {
  const methodsOf = new Map<string, { readonly environment: Environment; readonly methods: Set<string> }>()
  const add = (environment: Environment, path: string, method: string) => {
    const entry = methodsOf.get(path) ?? { environment, methods: new Set<string>() }
    entry.methods.add(method)
    methodsOf.set(path, entry)
  }
  const bases = servedEnvironments(served)
  for (const group of Object.values(api.groups) as ReadonlyArray<HttpApiGroup.Top>) {
    for (const endpoint of Object.values(group.endpoints) as ReadonlyArray<HttpApiEndpoint.Top>) {
      const sandboxOnly = policyOf(endpoint, group).sandboxOnly
      for (const environment of bases) {
        if (!sandboxOnly || environment === "sandbox") add(environment, `${mount}/${environment}${endpoint.path}`, endpoint.method)
      }
    }
  }
  for (const environment of bases) add(environment, `${mount}/${environment}/v2/openapi.json`, "GET")
  return methodsOf
}
