/**
 * The API reference at `/docs`: Swagger UI (the `swagger-ui-dist` npm package) over the generated OpenAPI
 * documents, served by fos itself so the page works with no network (docs/decisions.md).
 *
 * The page and its initializer are written here. Swagger UI's own files are read by the server's package and handed
 * in (`readDocsAssets` of @fos/serve, which alone depends on swagger-ui-dist): an embedding package carries no UI
 * bundle. An engine given no files (an embedded one, say) serves no `/docs`.
 *
 * The error reference at `/docs/errors`, where every problem's `docs` points, needs no file: it is rendered from the
 * catalog (`renderErrorsHtml`), so every engine serves it, embedded ones included.
 */
import { errorReferencePath, renderErrorsHtml } from "@fos/contract"
import { Context } from "effect"
import { HttpServerResponse } from "effect/http"

/** The files of `swagger-ui-dist` the page loads, by their name in the package. */
export const docsAssetNames = [
  "swagger-ui.css",
  "index.css",
  "swagger-ui-bundle.js",
  "swagger-ui-standalone-preset.js",
  "favicon-32x32.png",
  "favicon-16x16.png"
] as const

export type DocsAssetName = (typeof docsAssetNames)[number]

/** The contents of each of `docsAssetNames`, as the server read them from `swagger-ui-dist`. */
export type DocsAssets = { readonly [Name in DocsAssetName]: Uint8Array }

/** The reference page's files; none (the default) means no `/docs`. */
export class DocsFiles extends Context.Reference<DocsAssets | undefined>("fos/http/DocsFiles", {
  defaultValue: () => undefined
}) {}

/** The environments the page offers, first the one it opens on; each serves its own document. */
const documentsOf = (base: string) => [
  { url: `${base}/sandbox/v2/openapi.json`, name: "sandbox" },
  { url: `${base}/live/v2/openapi.json`, name: "live (production)" }
]

/** The page, its files under `base`, the engine's base path. */
const pageOf = (base: string) => `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>fos API reference</title>
    <link rel="stylesheet" href="${base}/docs/swagger-ui.css">
    <link rel="stylesheet" href="${base}/docs/index.css">
    <link rel="icon" type="image/png" href="${base}/docs/favicon-32x32.png" sizes="32x32">
    <link rel="icon" type="image/png" href="${base}/docs/favicon-16x16.png" sizes="16x16">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${base}/docs/swagger-ui-bundle.js"></script>
    <script src="${base}/docs/swagger-ui-standalone-preset.js"></script>
    <script src="${base}/docs/swagger-initializer.js"></script>
  </body>
</html>
`

/**
 * The source of `resolvablePart(spec, path)`, a function the page runs (so it names nothing outside itself): what
 * Swagger UI's resolver is given to resolve the part of the document at `path` (an operation, a path item, a webhook,
 * the security schemes, a schema). It is the document without its other paths and webhooks, and with only the
 * components that part reaches through `$ref`s, the security schemes among them; the whole document when the part
 * reaches anything outside `#/components/` (resolving follows only `$ref`s, so the part resolves as it would in the
 * whole).
 *
 * Why: Swagger UI resolves a part of an OpenAPI 3.1 document by refracting, dereferencing and normalizing the whole
 * document it is handed, on the page's one thread, once after the first render (the security schemes) and again
 * each time an operation opens. Handed the sandbox's whole document (1.45 MB), each took 5 to 11 s of a 2-core
 * machine, with the page frozen (docs/performance.md, "The reference page").
 */
export const resolvablePartSource = `function resolvablePart(spec, path) {
  const [section, name] = path
  const own = section === "components" ? spec.components?.[name] : section === "paths" || section === "webhooks" ? spec[section]?.[name] : undefined
  if (path.length < 2 || own === undefined) return spec
  const reached = { securitySchemes: spec.components?.securitySchemes ?? {} }
  const pending = [own]
  while (pending.length > 0) {
    const value = pending.pop()
    if (typeof value !== "object" || value === null) continue
    if (typeof value.$ref === "string") {
      if (!value.$ref.startsWith("#/components/")) return spec
      const [, , kind, key] = value.$ref.split("/")
      const component = spec.components?.[kind]?.[key]
      if (component === undefined) return spec
      if (reached[kind]?.[key] === undefined) {
        (reached[kind] ??= {})[key] = component
        pending.push(component)
      }
    }
    for (const member of Object.values(value)) pending.push(member)
  }
  const { paths, webhooks, components, ...rest } = spec
  const part = { ...rest, components: reached }
  if (section === "components") part.components[name] = own
  else part[section] = { [name]: own }
  return part
}`

// validatorUrl: null, because Swagger UI's default sends the document's address to validator.swagger.io. The plugin
// hands Swagger UI's resolver only the part it resolves (resolvablePartSource); `this` of `afterLoad` is the system,
// whose `fn` the resolver is read from on each call.
const initializerOf = (base: string) => `${resolvablePartSource}

const ResolveThePartOnly = {
  afterLoad() {
    const resolveSubtree = this.fn.resolveSubtree
    this.fn.resolveSubtree = (spec, path, options) => resolveSubtree(resolvablePart(spec, path), path, options)
  }
}

window.onload = function () {
  window.ui = SwaggerUIBundle({
    urls: ${JSON.stringify(documentsOf(base))},
    "urls.primaryName": ${JSON.stringify(documentsOf(base)[0]!.name)},
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl, ResolveThePartOnly],
    layout: "StandaloneLayout"
  })
}
`

/**
 * The browser may load nothing from anywhere but this origin. Swagger UI sets inline styles and shows images as
 * data: URLs; it needs no inline script and no eval.
 */
const contentSecurityPolicy = [
  "default-src 'self'",
  "img-src 'self' data:",
  "style-src 'self' 'unsafe-inline'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'self'"
].join("; ")

const contentTypes: Record<string, string> = {
  css: "text/css; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  png: "image/png"
}

const contentTypeOf = (name: string): string => contentTypes[name.slice(name.lastIndexOf(".") + 1)]!

/**
 * Swagger UI's files change only with the swagger-ui-dist version, so a browser keeps them for a day; the page
 * and the initializer, which name the documents, are checked on every load.
 */
const assetCache = "public, max-age=86400"
const pageCache = "no-cache"

const utf8 = new TextEncoder()

/**
 * The `/docs` responses, built once: `path` (query stripped, under the base path) to its response, or undefined when
 * not a page of it. `basePath` is the engine's (BasePath.ts): the page's files and documents are under it.
 */
export const makeDocsPages = (assets: DocsAssets, basePath = ""): (path: string) => HttpServerResponse.HttpServerResponse | undefined => {
  const common = { "x-content-type-options": "nosniff" }
  const pages = new Map<string, HttpServerResponse.HttpServerResponse>()
  const html = HttpServerResponse.uint8Array(utf8.encode(pageOf(basePath)), {
    contentType: "text/html; charset=utf-8",
    headers: { ...common, "cache-control": pageCache, "content-security-policy": contentSecurityPolicy }
  })
  pages.set("/docs", html)
  pages.set("/docs/", html)
  pages.set(
    "/docs/swagger-initializer.js",
    HttpServerResponse.uint8Array(utf8.encode(initializerOf(basePath)), {
      contentType: contentTypes.js!,
      headers: { ...common, "cache-control": pageCache }
    })
  )
  for (const name of docsAssetNames) {
    pages.set(
      `/docs/${name}`,
      HttpServerResponse.uint8Array(assets[name], { contentType: contentTypeOf(name), headers: { ...common, "cache-control": assetCache } })
    )
  }
  return (path) => pages.get(path)
}

/** The error reference needs no script, no stylesheet and no image: the browser may load nothing at all. */
const errorsPolicy = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"

/**
 * The error reference page, or undefined when `path` (query stripped, under the base path) is not its address;
 * `basePath` is the engine's, which its link to the reference page carries. The page changes only with fos's
 * version, and it is revalidated on every load like the reference page.
 */
export const errorReferencePage: (path: string, basePath?: string) => HttpServerResponse.HttpServerResponse | undefined = (() => {
  const pages = new Map<string, HttpServerResponse.HttpServerResponse>()
  return (path, basePath = "") => {
    if (path !== errorReferencePath) return undefined
    let page = pages.get(basePath)
    if (page === undefined) {
      page = HttpServerResponse.uint8Array(utf8.encode(renderErrorsHtml(basePath)), {
        contentType: "text/html; charset=utf-8",
        headers: { "x-content-type-options": "nosniff", "cache-control": pageCache, "content-security-policy": errorsPolicy }
      })
      pages.set(basePath, page)
    }
    return page
  }
})()
