/**
 * The application: the HttpApi with its handlers and the pipeline, over the services of one engine. The servers
 * serve it, and `createEngine` (Engine.ts) turns it into a fetch-style handler for embedding and tests.
 */
import type { EngineServices } from "@fos/core"
import { Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "./Api.ts"
import { type DocsAssets, DocsFiles } from "./Docs.ts"
import { layerHandlers } from "./Handlers.ts"
import { layerOperatorRoutes, OperatorToken } from "./Operator.ts"
import { layerCorrelation, layerEdge, layerGate } from "./Pipeline.ts"

export interface RoutesOptions {
  /** Turns the operator surface on, guarded by this bearer token. */
  readonly operatorToken?: string | undefined
  /** Serves the reference page at `/docs` with these files (`readDocsAssets`); without them there is no `/docs`. */
  readonly docs?: DocsAssets | undefined
}

/** The routes and the pipeline over the engine services `engine` provides. */
export const layerRoutes = <E>(engine: Layer.Layer<EngineServices, E>, options: RoutesOptions = {}) =>
  Layer.mergeAll(
    HttpApiBuilder.layer(Api, { openapiPath: "/v2/openapi.json" }).pipe(Layer.provide(layerHandlers), Layer.provide(layerGate)),
    layerOperatorRoutes,
    layerEdge
  ).pipe(
    Layer.provide(layerCorrelation),
    Layer.provideMerge(engine),
    Layer.provide(Layer.succeed(OperatorToken, options.operatorToken)),
    Layer.provide(Layer.succeed(DocsFiles, options.docs))
  )
