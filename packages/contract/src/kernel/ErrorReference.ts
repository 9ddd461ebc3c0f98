/**
 * The error reference: one entry per code of the catalog (its anchor, HTTP status, title and resolution), rendered
 * two ways from the same entries: as markdown for the repository (docs/errors.md, written by scripts/errors-doc.ts)
 * and as the HTML page the server serves at `errorReferencePath`, where every problem's `docs` points.
 */
import { docsUrl, ErrorCatalog, type ErrorCode, errorReferencePath } from "./Errors.ts"

/** One entry of the reference. */
export interface ErrorReferenceEntry {
  readonly code: ErrorCode
  /** The entry's anchor: the fragment of the code's `docs` URL (the lower-case code). */
  readonly anchor: string
  readonly status: number
  readonly title: string
  readonly resolution: string
}

/** The anchor of a code's entry: the fragment of its `docs` URL. */
export const anchorOf = (code: ErrorCode): string => {
  const url = docsUrl(code)
  return url.slice(url.indexOf("#") + 1)
}

/** Every code of the catalog, in the catalog's order (by status). */
export const errorReference = (): ReadonlyArray<ErrorReferenceEntry> =>
  (Object.keys(ErrorCatalog) as Array<ErrorCode>).map((code) => ({ code, anchor: anchorOf(code), ...ErrorCatalog[code] }))

const intro = "Every error is an RFC 9457 problem object. Clients match on `type`, the stable code below; the title may change."

/**
 * Which problem a request that breaks several rules gets: always the same one, the first in a fixed precedence. Each
 * write states its own list in its entry function's comment and in the docs of its domain (docs/decisions.md, "The
 * order of refusals", lists them).
 */
const precedence = "A request that breaks several rules gets one problem, always the same: the first it breaks, in this order. " +
  "First what is checked before the endpoint runs (the API key and the rate limit, the body's media type, size and JSON, the Idempotency-Key, the body's schema); " +
  "then what the request says on its own; then whether what it names exists and belongs to the caller (404); " +
  "then the state of what it names (409, and 422 for a business rule); funds (422 `INSUFFICIENT_FUNDS`) come last."

/** The text the API refuses in every request, whatever its schema (packages/core/src/kernel/RefusedText.ts). */
const text = "A JSON body is UTF-8 text; one that is not is `MALFORMED_JSON`. " +
  "A NUL character (U+0000) or an unpaired surrogate (a lone escape such as `\\ud800`) in any string of a JSON body, member names included, " +
  "or in a query value or path parameter, is `VALIDATION_ERROR` with an `errors[]` entry naming where: no store keeps such text, so the API accepts none. " +
  "A query whose percent-encoding is not UTF-8 is `BAD_REQUEST`, as such a path is."

/**
 * The catalog's text as Markdown: outside its code spans, an angle bracket or ampersand is written as an entity, since
 * a renderer takes `<prefix>` for an HTML tag and drops it.
 */
export const inlineMarkdown = (text: string): string =>
  text.split("`").map((part, i) => (i % 2 === 1 ? part : part.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;"))).join("`")

/** The text of docs/errors.md. */
export const renderErrorsMarkdown = (): string => {
  const entries = errorReference()
  const lines: Array<string> = [
    "# Error codes",
    "",
    "<!-- Generated from packages/contract/src/kernel/Errors.ts by scripts/errors-doc.ts. Do not edit by hand. -->",
    "",
    intro,
    `The server serves this reference at \`${errorReferencePath}\`, where each problem's \`docs\` points.`,
    "",
    precedence,
    "",
    text,
    "",
    "| Code | HTTP status | Title |",
    "|---|---|---|",
    ...entries.map((e) => `| [${e.code}](#${e.anchor}) | ${e.status} | ${inlineMarkdown(e.title)} |`),
    ""
  ]
  for (const e of entries) {
    lines.push(
      `<a id="${e.anchor}"></a>`,
      "",
      `## ${e.code}`,
      "",
      `- **HTTP status:** ${e.status}`,
      `- **Title:** ${inlineMarkdown(e.title)}`,
      `- **Resolution:** ${inlineMarkdown(e.resolution)}`,
      ""
    )
  }
  return lines.join("\n")
}

const escapeHtml = (text: string): string =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll("\"", "&quot;")

/** Inline code spans (`x`) of the catalog's text as HTML, the rest escaped. */
const inlineHtml = (text: string): string =>
  text.split("`").map((part, i) => (i % 2 === 1 ? `<code>${escapeHtml(part)}</code>` : escapeHtml(part))).join("")

/**
 * The page served at `errorReferencePath`: self-contained HTML (no script, no other file), one `id` per code. Its
 * link to the API reference is under `basePath`, the path the server is mounted at (none by default).
 */
export const renderErrorsHtml = (basePath = ""): string => {
  const entries = errorReference()
  return `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>fos error reference</title>
    <style>
      body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; }
      table { border-collapse: collapse; } td, th { text-align: left; padding: 0.2rem 0.8rem 0.2rem 0; }
      section { border-top: 1px solid #ddd; padding-top: 0.5rem; } section:target { background: #fff8d6; }
      code { font-family: ui-monospace, monospace; }
    </style>
  </head>
  <body>
    <h1>Error codes</h1>
    <p>${inlineHtml(intro)} <a href="${basePath}/docs">The API reference</a>.</p>
    <p>${inlineHtml(precedence)}</p>
    <p>${inlineHtml(text)}</p>
    <table>
      <thead><tr><th>Code</th><th>HTTP status</th><th>Title</th></tr></thead>
      <tbody>
${entries.map((e) => `        <tr><td><a href="#${e.anchor}"><code>${e.code}</code></a></td><td>${e.status}</td><td>${escapeHtml(e.title)}</td></tr>`).join("\n")}
      </tbody>
    </table>
${entries.map((e) => `    <section id="${e.anchor}">
      <h2><code>${e.code}</code></h2>
      <dl>
        <dt>HTTP status</dt><dd>${e.status}</dd>
        <dt>Title</dt><dd>${escapeHtml(e.title)}</dd>
        <dt>Resolution</dt><dd>${inlineHtml(e.resolution)}</dd>
      </dl>
    </section>`).join("\n")}
  </body>
</html>
`
}
