/**
 * The inspector at `/inspect`: a web application to see and drive a running fos in a browser. It reads
 * and acts through the same public, sandbox and operator endpoints a client uses, with the credential the user signs
 * in with, so it has no access of its own and no private route.
 *
 * Its script (the application, in inspector/ at the repository's root, bundled with Preact and htm) and stylesheet
 * are base64 constants of the generated module InspectorAssets.ts (scripts/inspector-assets.ts), part of this
 * package's code: every engine serves the inspector, an embedded one included, with no file read and no network.
 * The script is browser code: its timers and the Idempotency-Keys it draws are a browser client's, outside the
 * engine's clock and seed, so the package holds it as bytes rather than as source among the engine's.
 *
 * The page is public (it holds no data; the data needs a key), like `/docs`. Its policy lets the browser load
 * nothing but this origin's script, stylesheet and API: no inline script, no eval, no inline style attribute, no
 * frame, no form posted elsewhere.
 */
import { base64 } from "@scure/base"
import { HttpServerResponse } from "effect/http"
import { inspectorScriptBase64, inspectorStyleBase64 } from "./InspectorAssets.ts"

/** Where the inspector is served. */
export const inspectorPath = "/inspect"

/**
 * The page of an engine mounted at `base` (BasePath.ts): its files are under it, and a mounted engine's page names
 * its base path in a `fos-base-path` meta element, where the application reads the base of the API it calls.
 */
const pageOf = (base: string) => `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="referrer" content="no-referrer">
${base === "" ? "" : `    <meta name="fos-base-path" content="${base}">\n`}    <title>fos inspector</title>
    <link rel="icon" href="data:,">
    <link rel="stylesheet" href="${base}${inspectorPath}/app.css">
  </head>
  <body>
    <div id="app"><noscript>The fos inspector needs JavaScript.</noscript></div>
    <script src="${base}${inspectorPath}/app.js"></script>
  </body>
</html>
`

/**
 * `default-src 'self'`: script, style, fetches (the API and its event stream) only from this origin. `script-src`
 * names no 'unsafe-inline' and no 'unsafe-eval', and `style-src` no 'unsafe-inline'. Images: this origin and the
 * empty `data:` favicon. The page may not be framed by another origin (clickjacking of its buttons).
 */
export const inspectorContentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

/** The page and its files change only with fos's version; the browser revalidates them on every load. */
const cache = "no-cache"

const utf8 = new TextEncoder()

const common = {
  "x-content-type-options": "nosniff",
  "cache-control": cache,
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY"
}

const build = (base: string): Map<string, HttpServerResponse.HttpServerResponse> => {
  const pages = new Map<string, HttpServerResponse.HttpServerResponse>()
  const html = HttpServerResponse.uint8Array(utf8.encode(pageOf(base)), {
    contentType: "text/html; charset=utf-8",
    headers: { ...common, "content-security-policy": inspectorContentSecurityPolicy }
  })
  pages.set(inspectorPath, html)
  pages.set(`${inspectorPath}/`, html)
  pages.set(
    `${inspectorPath}/app.js`,
    HttpServerResponse.uint8Array(base64.decode(inspectorScriptBase64), { contentType: "text/javascript; charset=utf-8", headers: common })
  )
  pages.set(
    `${inspectorPath}/app.css`,
    HttpServerResponse.uint8Array(base64.decode(inspectorStyleBase64), { contentType: "text/css; charset=utf-8", headers: common })
  )
  return pages
}

/**
 * The inspector's response for `path` (query stripped, under the base path `basePath`), or undefined when it is not
 * one of its addresses. Built on the first request for it, so an engine that never serves it pays nothing for it.
 */
export const inspectorPage: (path: string, basePath?: string) => HttpServerResponse.HttpServerResponse | undefined = (() => {
  const built = new Map<string, Map<string, HttpServerResponse.HttpServerResponse>>()
  return (path, basePath = "") => {
    if (!path.startsWith(inspectorPath)) return undefined
    let pages = built.get(basePath)
    if (pages === undefined) {
      pages = build(basePath)
      built.set(basePath, pages)
    }
    return pages.get(path)
  }
})()
