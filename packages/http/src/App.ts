/**
 * The application: the HttpApi with its handlers and the pipeline, over one engine. `layerApp` is what a
 * server adapter serves; `makeWebHandler` is the same application as a fetch-style `Request -> Response`
 * function for Bun, Deno, embedding and tests.
 */
import { type EngineOptions, type EngineServices, layerEngine } from "@fos/core"
import { Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
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

/** The application for an engine built from `options`. */
export const layerApp = (options: EngineOptions = {}) => layerRoutes(layerEngine(options))

/** The application as a fetch-style handler, with no port. */
export const makeWebHandler = (options: EngineOptions = {}) =>
  HttpRouter.toWebHandler(layerApp(options).pipe(Layer.provide(HttpServer.layerServices)), { disableLogger: true })
