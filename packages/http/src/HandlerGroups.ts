/**
 * The handlers of an HttpApi group, registered as `HttpApiBuilder.group` registers them (`handlers.handle(name, f)`,
 * checked against the group's endpoints by the same types, every endpoint handled) and kept where the router reads
 * them: a service of fos's own per group, holding each endpoint and its handler.
 *
 * Why not `HttpApiBuilder.group` itself: the router serves the endpoints on routes of its own (Router.ts), so it
 * needs each endpoint's handler, and the service `HttpApiBuilder.group` provides declares no member to read them
 * by; reading its private map ties fos to one Effect release. It would also build HttpApi's own route for each
 * endpoint, wrapped in the declared middleware, which fos never serves.
 */
import { Context, Effect, Layer } from "effect"
import type { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { pipeArguments } from "effect/Pipeable"
import type { Problem } from "@fos/core"

/** One endpoint of a group and the handler registered for it. */
export interface HandlerItem {
  readonly endpoint: HttpApiEndpoint.Top
  readonly handler: (request: Record<string, unknown>) => Effect.Effect<unknown, Problem.ApiError, unknown>
}

/** The handlers of one group, by endpoint identifier. */
export interface GroupHandlers {
  readonly _: unique symbol
}

/** The key of a group's handlers: one per group identifier. */
const keyOf = (identifier: string) =>
  Context.Service<GroupHandlers, ReadonlyMap<string, HandlerItem>>(`fos/http/HandlerGroups/${identifier}`)

/** The handlers registered for `group` in `services`, or undefined when no layer registered any. */
export const handlersOf = (
  services: Context.Context<never>,
  group: HttpApiGroup.Top
): ReadonlyMap<string, HandlerItem> | undefined => Context.getOrUndefined(services, keyOf(group.identifier))

/**
 * A `Handlers` collection over `items`: what `build` is given. It has the members of HttpApiBuilder's `Handlers`
 * that fos's handlers use; `handleRaw` (the raw request, no decoding) and the `uninterruptible` option are
 * refused, since the router serves decoded endpoints only.
 */
const collect = (group: HttpApiGroup.Top, items: Map<string, HandlerItem>) => {
  const add = (identifier: string, handler: unknown, options?: { readonly uninterruptible?: boolean | undefined }) => {
    const endpoint = group.endpoints[identifier]
    if (endpoint === undefined) throw new Error(`HttpApiEndpoint "${identifier}" not found in HttpApiGroup "${group.identifier}"`)
    if (items.has(identifier)) throw new Error(`Handler for HttpApiEndpoint "${identifier}" is already registered in HttpApiGroup "${group.identifier}"`)
    if (options?.uninterruptible === true) throw new Error(`${group.identifier}.${identifier}: the router does not run handlers uninterruptibly`)
    items.set(identifier, { endpoint, handler: handler as HandlerItem["handler"] })
  }
  const handlers = {
    handle(identifier: string, handler: unknown, options?: { readonly uninterruptible?: boolean | undefined }) {
      add(identifier, handler, options)
      return handlers
    },
    handleAll(entries: Record<string, unknown>) {
      for (const [identifier, entry] of Object.entries(entries)) {
        if (typeof entry === "function") add(identifier, entry)
        else {
          const { handler, options } = entry as { readonly handler: unknown; readonly options?: { readonly uninterruptible?: boolean } }
          add(identifier, handler, options)
        }
      }
      return handlers
    },
    handleRaw(identifier: string): never {
      throw new Error(`${group.identifier}.${identifier}: the router serves decoded endpoints only (no handleRaw)`)
    },
    pipe() {
      return pipeArguments(handlers, arguments)
    }
  }
  return handlers
}

/**
 * The handlers of the group `groupIdentifier` of `api`, typed as `HttpApiBuilder.group` types them (a missing or
 * misnamed endpoint is a compile error), as a layer the router reads them from. `build` may also return an effect
 * of the handlers, which runs when the layer is built.
 */
export const group = <
  ApiId extends string,
  Groups extends HttpApiGroup.Constraint,
  const Identifier extends HttpApiGroup.Identifier<Groups>,
  Return
>(
  api: HttpApi.HttpApi<ApiId, Groups>,
  groupIdentifier: Identifier,
  build: (handlers: HttpApiBuilder.Handlers.FromGroup<HttpApiGroup.WithIdentifier<Groups, Identifier>>) => HttpApiBuilder.Handlers.ValidateReturn<Return>
): Layer.Layer<
  GroupHandlers,
  HttpApiBuilder.Handlers.Error<Return>,
  Return extends Effect.Effect<infer _A, infer _E, infer R> ? R : never
> =>
  Layer.effect(
    keyOf(groupIdentifier),
    Effect.suspend(() => {
      const target = (api.groups as unknown as Record<string, HttpApiGroup.Top>)[groupIdentifier]!
      const items = new Map<string, HandlerItem>()
      const result: unknown = build(collect(target, items) as never)
      return Effect.isEffect(result) ? Effect.as(result, items) : Effect.succeed(items)
    })
  ) as never
