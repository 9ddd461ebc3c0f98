/**
 * Follows every link fos hands out, from one origin and base path (`""` for none, `/fos` for an engine mounted
 * there): each problem's `docs` and `instance`, any `Location`, the OpenAPI documents' `servers` joined with each
 * of their paths, the error reference's, the inspector's and (when served) the reference page's links and assets,
 * `/healthz`, the operator surface and the live stream. Answers what went wrong, one line each: empty when every
 * link resolved.
 *
 * A link that lost the base path is the host's 404 in a host (test/base-path.test.ts) and fos's unknown-route 404 in
 * a server at that path (test/server.test.ts); either way it is named here.
 */
export interface LinkSite {
  /** `http://host:port`. */
  readonly origin: string
  /** Where fos is mounted: `""` or `/fos`. */
  readonly base: string
  readonly sandboxKey?: string
  readonly liveKey?: string
  /**
   * What names the caller of each environment instead of a key: a host that authenticates its own users sends its
   * own headers, and names the caller to fos beside the request (docs/embedding.md, "The host's identity").
   */
  readonly callerHeaders?: (env: "sandbox" | "live") => Record<string, string>
  readonly operatorToken: string
  /** Whether the reference page (`/docs`) is served: by the server, not by an embedded engine. */
  readonly docsPage: boolean
}

/**
 * Paths fos names that a base path must precede, as they would appear in a body or a link without it. The OpenAPI
 * documents' examples of a recorded request's `path` are illustrations, not addresses.
 */
const unprefixed = /(?<!"path":)["'(=]\/(sandbox|live|docs|inspect|operator|healthz)\b/g

export const followLinks = async (site: LinkSite): Promise<ReadonlyArray<string>> => {
  const { origin, base } = site
  const failures: Array<string> = []
  const fail = (what: string) => failures.push(what)
  const key = (env: "sandbox" | "live"): Record<string, string> =>
    site.callerHeaders?.(env) ?? { "x-api-key": (env === "sandbox" ? site.sandboxKey : site.liveKey) ?? "" }
  const operator = { authorization: `Bearer ${site.operatorToken}` }

  /** One request; its `Location`, if any, followed too. Its JSON or HTML is read for paths that lost the base. */
  const send = async (url: string, init: RequestInit = {}): Promise<{ response: Response; text: string }> => {
    const response = await fetch(url, { redirect: "manual", ...init })
    const type = response.headers.get("content-type") ?? ""
    const text = type.startsWith("text/event-stream") ? "" : await response.text()
    // JSON and HTML name addresses; a script names the paths it calls under the base it is told (the inspector's).
    if (base !== "" && (type.includes("json") || type.includes("html"))) {
      for (const match of text.matchAll(unprefixed)) fail(`${init.method ?? "GET"} ${url}: its body names ${match[0].slice(1)} without ${base}`)
    }
    const location = response.headers.get("location")
    if (location !== null) {
      const next = await fetch(new URL(location, url), { redirect: "manual", headers: init.headers ?? {} })
      if (next.status === 404) fail(`Location ${location} of ${url}: 404`)
    }
    return { response, text }
  }

  const expectOk = async (url: string, headers: Record<string, string> = {}) => {
    const { response, text } = await send(url, { headers })
    if (response.status !== 200) fail(`GET ${url}: ${response.status} ${text.slice(0, 200)}`)
    return text
  }

  // --- /healthz and the operator surface ---
  await expectOk(`${origin}${base}/healthz`)
  await expectOk(`${origin}${base}/operator/organizations`, operator)

  // --- problems: docs and instance ---
  const problems: ReadonlyArray<{ readonly method: string; readonly path: string; readonly headers: Record<string, string>; readonly body?: string }> = [
    { method: "GET", path: "/sandbox/v2/customers", headers: {} },
    { method: "GET", path: "/sandbox/v2/customers/cus_0000000000000000000000000000", headers: key("sandbox") },
    { method: "GET", path: "/sandbox/v2/no-such-route", headers: key("sandbox") },
    {
      method: "POST",
      path: "/sandbox/v2/webhooks/endpoints",
      headers: { ...key("sandbox"), "content-type": "application/json", "idempotency-key": "links-1" },
      body: "{}"
    },
    { method: "GET", path: "/live/v2/transactions/txn_0000000000000000000000000000", headers: key("live") },
    { method: "GET", path: "/operator/organizations", headers: {} },
    { method: "GET", path: "/operator/no-such-route", headers: operator }
  ]
  const errorPages = new Map<string, string>()
  for (const p of problems) {
    const url = `${origin}${base}${p.path}`
    const { response, text } = await send(url, { method: p.method, headers: p.headers, ...(p.body === undefined ? {} : { body: p.body }) })
    if (response.status < 400) {
      fail(`${p.method} ${url}: ${response.status}, not a problem`)
      continue
    }
    const problem = parsed(text) as { type: string; docs: string; instance: string } | undefined
    if (problem === undefined) {
      fail(`${p.method} ${url}: ${response.status}, not a problem: ${text.slice(0, 100)}`)
      continue
    }
    const docs = new URL(problem.docs)
    if (docs.origin !== origin || docs.pathname !== `${base}/docs/errors`) fail(`${p.method} ${url}: docs is ${problem.docs}`)
    const page = errorPages.get(docs.pathname) ?? await expectOk(`${docs.origin}${docs.pathname}`)
    errorPages.set(docs.pathname, page)
    if (!page.includes(`id="${docs.hash.slice(1)}"`)) fail(`${problem.docs}: the page has no entry ${docs.hash}`)
    if (problem.instance !== `${base}${p.path}`) fail(`${p.method} ${url}: instance is ${problem.instance}`)
    // The instance locates the same thing: the same request there is the same problem.
    const again = await send(`${origin}${problem.instance}`, { method: p.method, headers: p.headers, ...(p.body === undefined ? {} : { body: p.body }) })
    const type = (parsed(again.text) as { type?: string } | undefined)?.type
    if (again.response.status !== response.status || type !== problem.type) fail(`${p.method} ${origin}${problem.instance}: ${again.response.status} ${type}, not ${response.status} ${problem.type}`)
  }

  // --- the error reference page's links ---
  const errors = await expectOk(`${origin}${base}/docs/errors`)
  for (const href of attributes(errors, "href")) {
    if (href.startsWith("#")) {
      if (!errors.includes(`id="${href.slice(1)}"`)) fail(`the error reference links ${href}, which it does not hold`)
    } else if (href === `${base}/docs` && !site.docsPage) {
      // An engine with no reference page: the link is where the page is once served.
    } else await expectOk(new URL(href, `${origin}${base}/docs/errors`).href)
  }

  // --- the OpenAPI documents: servers joined with every path ---
  for (const env of ["sandbox", "live"] as const) {
    const document = parsed(await expectOk(`${origin}${base}/${env}/v2/openapi.json`)) as {
      servers?: ReadonlyArray<{ url: string }>
      paths?: Record<string, Record<string, unknown>>
    } | undefined
    const server = document?.servers?.[0]?.url
    if (server !== `${base}/${env}`) fail(`the ${env} document's server is ${server}`)
    if (document?.paths === undefined) continue
    for (const [path, item] of Object.entries(document.paths)) {
      const url = new URL(`${server}${path.replace(/\{[^}]+\}/g, "x1")}`, origin).href
      const { response } = await send(url, { method: "OPTIONS", headers: key(env) })
      const allow = response.headers.get("allow") ?? ""
      const missing = Object.keys(item).filter((m) => ["get", "post", "put", "patch", "delete"].includes(m) && !allow.includes(m.toUpperCase()))
      if (response.status !== 204 || missing.length > 0) fail(`OPTIONS ${url}: ${response.status}, Allow ${allow}`)
    }
  }

  // --- the inspector: its page, files and where its script calls ---
  const inspector = await expectOk(`${origin}${base}/inspect`)
  for (const link of [...attributes(inspector, "href"), ...attributes(inspector, "src")]) {
    if (!link.startsWith("data:")) await expectOk(new URL(link, `${origin}${base}/inspect`).href)
  }
  const mount = /<meta name="fos-base-path" content="([^"]*)">/.exec(inspector)?.[1] ?? ""
  if (mount !== base) fail(`the inspector's page says fos is at ${JSON.stringify(mount)}`)

  // --- the reference page, its files and the documents it shows ---
  if (site.docsPage) {
    const page = await expectOk(`${origin}${base}/docs`)
    for (const link of [...attributes(page, "href"), ...attributes(page, "src")]) await expectOk(new URL(link, `${origin}${base}/docs`).href)
    const initializer = await expectOk(`${origin}${base}/docs/swagger-initializer.js`)
    const urls = (parsed(/urls: (\[.*\]),/.exec(initializer)?.[1] ?? "[]") ?? []) as ReadonlyArray<{ url: string }>
    if (urls.length !== 2) fail(`the reference page shows ${urls.length} documents`)
    for (const { url } of urls) await expectOk(new URL(url, origin).href)
  }

  // --- the live stream ---
  const controller = new AbortController()
  const stream = await fetch(`${origin}${base}/sandbox/v2/simulate/stream`, { headers: key("sandbox"), signal: controller.signal })
  if (stream.status !== 200 || !stream.headers.get("content-type")?.startsWith("text/event-stream")) fail(`the live stream: ${stream.status}`)
  controller.abort()
  await stream.body?.cancel().catch(() => undefined)

  return failures
}

/** The values of every `name="..."` attribute of an HTML page. */
const attributes = (html: string, name: string): ReadonlyArray<string> => [...html.matchAll(new RegExp(` ${name}="([^"]*)"`, "g"))].map((m) => m[1]!)

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
