/**
 * The API reference at `/docs`, through the real server: the page and Swagger UI's files are served by fos with
 * their content types and cache headers and no key, they name no other host, and headless Chromium, with every
 * other host unreachable, renders the page listing every operation of the OpenAPI document, Authorize and the first
 * operation on its first screen, laid out at a phone's width on a phone. The error reference is its own page,
 * `/docs/errors`, listing every problem type. Also the document itself: every problem response is the Problem
 * schema, never an empty `{}`, and the part of it Swagger UI's resolver is handed resolves as the whole does.
 *
 * Chromium is Debian's `chromium`; without it the browser test is skipped, unless FOS_REQUIRE_CHROMIUM=1 (as CI
 * sets), when it fails. The screenshot of one opened operation (its description, its request example and its
 * response example) is saved as an artifact: `test-artifacts/docs-operation.png`, or in FOS_ARTIFACTS_DIR.
 */
import { execFile } from "node:child_process"
import { accessSync, constants, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import { ErrorCatalog, type ErrorCode } from "@fos/contract"
import { createEngine, resolvablePartSource } from "@fos/http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { withChromiumPage } from "./chromium.ts"
import { killAllFos, repoRoot, type RunningFos, startFos } from "./fosProcess.ts"

let server: RunningFos
let origin: string

beforeAll(async () => {
  server = await startFos(["--store", "memory", "--port", "0"])
  origin = server.origin
})

afterAll(async () => {
  await server?.stop()
  killAllFos()
})

const swaggerUiDist = join(repoRoot, "node_modules", "swagger-ui-dist")

/** Every http(s) URL in `text` whose origin is not the server's. */
const foreignUrls = (text: string): Array<string> =>
  [...text.matchAll(/https?:\/\/[^\s"'`<>)]+/g)].map((m) => m[0]).filter((url) => new URL(url).origin !== origin)

/** The local files the page loads: its `src` and `href` attributes. */
const referencedFiles = (html: string): Array<string> => [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)

describe("/docs", () => {
  it("serves the page with no key, naming only its own files, under a policy that loads nothing from elsewhere", async () => {
    const response = await fetch(`${origin}/docs`)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(response.headers.get("cache-control")).toBe("no-cache")
    expect(response.headers.get("content-security-policy")).toContain("default-src 'self'")
    expect(response.headers.get("x-correlation-id")).toMatch(/^[0-9a-f]{32}$/)
    const html = await response.text()
    expect(foreignUrls(html)).toEqual([])
    // Laid out at the device's width: without it a phone lays the page out 980 px wide and shrinks it.
    expect(html).toContain(`<meta name="viewport" content="width=device-width, initial-scale=1">`)
    expect(referencedFiles(html).sort()).toEqual([
      "/docs/favicon-16x16.png",
      "/docs/favicon-32x32.png",
      "/docs/index.css",
      "/docs/swagger-initializer.js",
      "/docs/swagger-ui-bundle.js",
      "/docs/swagger-ui-standalone-preset.js",
      "/docs/swagger-ui.css"
    ])
    // With or without the trailing slash: the page names its files by absolute path.
    const slash = await fetch(`${origin}/docs/`)
    expect(slash.status).toBe(200)
    expect(await slash.text()).toBe(html)
  })

  it("serves Swagger UI's files from the installed swagger-ui-dist, with content types and a cache header", async () => {
    const expected: Record<string, string> = {
      "swagger-ui.css": "text/css; charset=utf-8",
      "index.css": "text/css; charset=utf-8",
      "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
      "swagger-ui-standalone-preset.js": "text/javascript; charset=utf-8",
      "favicon-32x32.png": "image/png",
      "favicon-16x16.png": "image/png"
    }
    for (const [name, contentType] of Object.entries(expected)) {
      const response = await fetch(`${origin}/docs/${name}`)
      expect(response.status, name).toBe(200)
      expect(response.headers.get("content-type"), name).toBe(contentType)
      expect(response.headers.get("cache-control"), name).toBe("public, max-age=86400")
      expect(response.headers.get("x-content-type-options"), name).toBe("nosniff")
      expect(Buffer.from(await response.arrayBuffer()).equals(readFileSync(join(swaggerUiDist, name))), name).toBe(true)
    }
    // The stylesheets load nothing from elsewhere either: every url(...) in them is inline data (their SVGs name
    // the SVG namespace, http://www.w3.org/2000/svg, which is an identifier, not a load).
    for (const name of ["swagger-ui.css", "index.css"]) {
      const urls = [...readFileSync(join(swaggerUiDist, name), "utf8").matchAll(/url\(\s*["']?([^"')]*)/g)].map((m) => m[1]!)
      expect(urls.filter((url) => !url.startsWith("data:")), name).toEqual([])
    }
  })

  it("has an initializer of its own that opens each environment's document from this origin", async () => {
    const response = await fetch(`${origin}/docs/swagger-initializer.js`)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect(response.headers.get("cache-control")).toBe("no-cache")
    const script = await response.text()
    expect(foreignUrls(script)).toEqual([])
    // swagger-ui-dist's own initializer points at petstore.swagger.io; this one is not that file.
    expect(script).not.toBe(readFileSync(join(swaggerUiDist, "swagger-initializer.js"), "utf8"))
    expect(script).toContain(`"/sandbox/v2/openapi.json"`)
    expect(script).toContain(`"/live/v2/openapi.json"`)
    // Swagger UI's default would send the document's address to validator.swagger.io.
    expect(script).toContain("validatorUrl: null")
    // Swagger UI's resolver is handed the part of the document it resolves, not the whole (the test below).
    expect(script).toContain(resolvablePartSource)
    expect(script).toMatch(/plugins: \[[^\]]*ResolveThePartOnly\]/)
    for (const base of ["/sandbox", "/live"]) {
      const document = await fetch(`${origin}${base}/v2/openapi.json`)
      expect(document.status, base).toBe(200)
      expect((await document.json()).openapi).toMatch(/^3\./)
    }
  })

  it("serves only its own files", async () => {
    for (const path of ["/docs/index.html", "/docs/errors/", "/docs/errors.html", "/docs/swagger-initializer", "/docs/swagger-ui-bundle.js.map", "/docs/..%2Fpackage.json", "/docsx"]) {
      const response = await fetch(`${origin}${path}`)
      expect(response.status, path).toBe(404)
      expect((await response.json()).type, path).toBe("NOT_FOUND")
    }
    const post = await fetch(`${origin}/docs`, { method: "POST" })
    expect(post.status).toBe(404)
  })

  it("is not served by an engine given no files (an embedded one)", async () => {
    const engine = await createEngine()
    try {
      const response = await engine.fetch(new Request("http://fos.test/docs"))
      expect(response.status).toBe(404)
      expect((await response.json()).type).toBe("NOT_FOUND")
    } finally {
      await engine.close()
    }
  })
})

describe("/docs/errors", () => {
  const codes = Object.keys(ErrorCatalog) as Array<ErrorCode>
  const idsOf = (html: string) => new Set([...html.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]!))

  it("serves the error reference with no key: one anchor per code of the catalog, nothing loaded from elsewhere", async () => {
    const response = await fetch(`${origin}/docs/errors`)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(response.headers.get("content-security-policy")).toContain("default-src 'none'")
    expect(response.headers.get("x-correlation-id")).toMatch(/^[0-9a-f]{32}$/)
    const html = await response.text()
    expect(foreignUrls(html)).toEqual([])
    expect(html).toContain(`<meta name="viewport" content="width=device-width, initial-scale=1">`)
    const ids = idsOf(html)
    for (const code of codes) expect(ids.has(code.toLowerCase()), code).toBe(true)
    expect(ids.size).toBe(codes.length)
    // Its table lists every problem type with its status, each linking its entry.
    const rows = [...html.matchAll(/<tr><td><a href="#([^"]+)"><code>([A-Z_0-9]+)<\/code><\/a><\/td><td>(\d+)<\/td>/g)].map((m) => `${m[2]} ${m[3]} #${m[1]}`)
    expect(rows).toEqual(codes.map((code) => `${code} ${ErrorCatalog[code].status} #${code.toLowerCase()}`))
    expect((await fetch(`${origin}/docs/errors`, { method: "HEAD" })).status).toBe(200)
  })

  it("is where a problem's docs leads: an absolute URL on the request's origin, through the running server", async () => {
    const seen = new Set<string>()
    for (const path of ["/sandbox/v2/portal/users/me", "/sandbox/v2/customers/org_x", "/nowhere", "/live/v2/webhooks/endpoints"]) {
      const request = `${origin}${path}`
      const problem = await (await fetch(request)).json()
      const docs = new URL(problem.docs)
      expect(docs.origin + docs.pathname, path).toBe(`${origin}/docs/errors`)
      expect(docs.hash, path).toBe(`#${problem.type.toLowerCase()}`)
      const page = await fetch(docs)
      expect(page.status).toBe(200)
      expect(idsOf(await page.text()).has(docs.hash.slice(1)), `${problem.type}'s anchor`).toBe(true)
      seen.add(problem.type)
    }
    expect(seen.size).toBeGreaterThan(1)
  })

  it("is served by an engine given no files (an embedded one), where its problems' docs resolve too", async () => {
    const engine = await createEngine()
    try {
      const problem = await (await engine.fetch(new Request("http://fos.test/sandbox/v2/customers"))).json()
      // The URL the engine was called with gives the origin.
      const docs = new URL(problem.docs)
      expect(docs.origin).toBe("http://fos.test")
      const page = await engine.fetch(new Request(docs))
      expect(page.status).toBe(200)
      expect(idsOf(await page.text()).has(docs.hash.slice(1))).toBe(true)
    } finally {
      await engine.close()
    }
  })
})

describe("the OpenAPI document", () => {
  const operations = (document: any): Array<[string, string, any]> =>
    Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]): [string, string, any] => [method, path, operation])
    )

  /** Where under `schema` (not following $ref) an empty schema `{}` is. */
  const emptySchemas = (schema: unknown, at: string): Array<string> => {
    if (typeof schema !== "object" || schema === null) return []
    if (!Array.isArray(schema) && Object.keys(schema).length === 0) return [at]
    return Object.entries(schema).flatMap(([key, value]) => emptySchemas(value, `${at}/${key}`))
  }

  it("introduces itself with a link to the error reference, not a table of every code above the operations", async () => {
    const document = await (await fetch(`${origin}/sandbox/v2/openapi.json`)).json()
    const description: string = document.info.description
    expect(description).toContain("[error reference](/docs/errors)")
    expect(description).not.toMatch(/^\|/m)
    const codes = Object.keys(ErrorCatalog).filter((code) => description.includes(code))
    expect(codes).toEqual([])
  })

  /** `value` with every `#/components/...` reference of `spec` put in its place (a reference back into itself kept). */
  const inlined = (value: unknown, spec: any, open: ReadonlyArray<string> = []): unknown => {
    if (Array.isArray(value)) return value.map((v) => inlined(v, spec, open))
    if (typeof value !== "object" || value === null) return value
    const { $ref, ...rest } = value as Record<string, unknown>
    const own = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, inlined(v, spec, open)]))
    if (typeof $ref !== "string") return own
    if (open.includes($ref)) return { ...own, $ref }
    const [, , kind, name] = $ref.split("/")
    return { ...own, "(ref)": $ref, "(is)": inlined(spec.components[kind!][name!], spec, [...open, $ref]) }
  }

  it("hands Swagger UI's resolver a part of the document that resolves as the whole does, and is a fraction of it", async () => {
    const resolvablePart = new Function(`return ${resolvablePartSource}`)() as (spec: any, path: ReadonlyArray<string>) => any
    const document = await (await fetch(`${origin}/sandbox/v2/openapi.json`)).json()
    const whole = JSON.stringify(document).length
    const parts: Array<ReadonlyArray<string>> = [
      ...operations(document).flatMap(([method, path]) => [["paths", path, method], ["paths", path]]),
      ...Object.entries(document.webhooks as Record<string, object>).map(([type]) => ["webhooks", type, "post"]),
      ["components", "securitySchemes"],
      ...["Order", "LoggedEvent", "Problem"].map((name) => ["components", "schemas", name])
    ]
    const sizes: Array<number> = []
    for (const path of parts) {
      const part = resolvablePart(document, path)
      const at = (spec: any) => path.reduce((v: any, key) => v?.[key], spec)
      expect(at(part), path.join(" ")).toBeDefined()
      expect(inlined(at(part), part), path.join(" ")).toEqual(inlined(at(document), document))
      // What normalizing an operation reads beside it: the document's security, servers and security schemes.
      expect([part.security, part.servers, part.components.securitySchemes], path.join(" ")).toEqual([document.security, document.servers, document.components.securitySchemes])
      if (path[0] !== "components") expect(Object.keys(part[path[0]!]), path.join(" ")).toEqual([path[1]])
      sizes.push(JSON.stringify(part).length)
    }
    // An operation's part is a few percent of the document; the largest (the event log's, every envelope) a fifth.
    expect(sizes.sort((a, b) => a - b)[Math.floor(sizes.length / 2)]! / whole).toBeLessThan(0.05)
    expect(Math.max(...sizes) / whole).toBeLessThan(0.25)
    // A part it cannot tell from the rest (the whole document, a section) is the whole document.
    for (const path of [[], ["paths"], ["components", "nothing"], ["info", "title"]]) expect(resolvablePart(document, path)).toBe(document)
    // So is a part that reaches outside the components.
    const elsewhere = structuredClone(document)
    elsewhere.paths["/v2/customers"].get.responses["200"] = { $ref: "#/paths/~1v2~1customers/post/responses/201" }
    expect(resolvablePart(elsewhere, ["paths", "/v2/customers", "get"])).toBe(elsewhere)
  })

  it("documents every problem response as the Problem schema, and no response as an empty {}", async () => {
    const document = await (await fetch(`${origin}/sandbox/v2/openapi.json`)).json()
    const all = operations(document)
    expect(all.length).toBeGreaterThan(10)
    for (const [method, path, operation] of all) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, any>)) {
        const where = `${method} ${path} ${status}`
        for (const [type, media] of Object.entries((response.content ?? {}) as Record<string, any>)) {
          expect(emptySchemas(media.schema, `${where} ${type}`)).toEqual([])
        }
        if (Number(status) >= 400) {
          expect(response.content, where).toEqual({ "application/json": { schema: { $ref: "#/components/schemas/Problem" } } })
        }
      }
      expect(Object.keys(operation.responses), `${method} ${path}`).toEqual(expect.arrayContaining(["401", "429", "500"]))
    }
  })

  it("says every operation takes the environment's key in x-api-key, signer endpoints a bearer session beside it, and that paths are under the document's base", async () => {
    // The sandbox's document, which has every operation (the live one lacks the simulate endpoints).
    const document = await (await fetch(`${origin}/sandbox/v2/openapi.json`)).json()
    expect(document.components.securitySchemes).toEqual({
      apiKey: expect.objectContaining({ type: "apiKey", in: "header", name: "x-api-key" }),
      signerSession: expect.objectContaining({ type: "http", scheme: "bearer" })
    })
    const signerEndpoints = [
      "GET /v2/signer/session",
      "POST /v2/signer/ceremonies",
      "POST /v2/simulate/wallet-ceremonies/{ceremonyId}/decision",
      "POST /v2/simulate/transactions/{id}/signatures",
      "POST /v2/signing-requests/{id}/approve",
      "POST /v2/signing-requests/{id}/reject"
    ]
    for (const [method, path, operation] of operations(document)) {
      const signer = signerEndpoints.includes(`${method.toUpperCase()} ${path}`)
      expect(operation.security, `${method} ${path}`).toEqual(signer ? [{ apiKey: [], signerSession: [] }] : [{ apiKey: [] }])
    }
    expect(operations(document).filter(([, , o]) => o.security[0].signerSession !== undefined)).toHaveLength(signerEndpoints.length)
    // The server URL is the environment's base on the document's origin, with no trailing slash to join a path onto.
    const live = await (await fetch(`${origin}/live/v2/openapi.json`)).json()
    expect(live.servers.map((s: { url: string }) => new URL(s.url, `${origin}/live/v2/openapi.json`).href)).toEqual([`${origin}/live`])
  })
})

// --- in headless Chromium --------------------------------------------------------------------------------------

const findChromium = (): string | undefined => {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(dir, "chromium")
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {
      // not in this directory
    }
  }
  return undefined
}

const chromium = findChromium()
const chromiumRequired = process.env.FOS_REQUIRE_CHROMIUM === "1"

/** Loads `url` in headless Chromium and returns the DOM once the page has settled, and Chromium's log. */
const renderInChromium = (binary: string, url: string): Promise<{ dom: string; log: string }> => {
  const profile = mkdtempSync(join(tmpdir(), "fos-chromium-"))
  const args = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    `--user-data-dir=${profile}`,
    // Every host but this one fails to resolve: the page must render with nothing from the network.
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    // The page's console goes to stderr, so a refused or failed load shows.
    "--enable-logging=stderr",
    "--v=0",
    // Virtual time runs ahead while the page is idle; it waits for the document's fetch.
    "--virtual-time-budget=15000",
    "--dump-dom",
    url
  ]
  return new Promise((resolve, reject) => {
    execFile(binary, args, { timeout: 100_000, killSignal: "SIGKILL", maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      rmSync(profile, { recursive: true, force: true })
      if (error !== null) reject(new Error(`chromium failed: ${error.message}\n${stderr}`))
      else resolve({ dom: stdout, log: stderr })
    })
  })
}

/**
 * Opens `url` in headless Chromium (`withChromiumPage`), waits until `ready` (a
 * script) is true, and returns the page's DOM, the value of `measure` (a script), the visible text (`innerText`) of
 * the element whose id is `id` and a PNG of it, from its top down to the bottom of `until` inside it (Chromium's own
 * --screenshot captures a viewport, and the page scrolls to a deep-linked operation after load, which that capture
 * does not wait for); then, the window made a phone's (390 CSS pixels wide, mobile), the width the page is laid out
 * at. One Chromium gives all of it: each start of it is seconds of CPU.
 */
const inspectInChromium = (binary: string, url: string, id: string, until: string, ready: string, measure: string): Promise<{ dom: string; measured: any; text: string; png: Buffer; phoneLayoutWidth: number }> =>
  withChromiumPage(binary, { width: 1280, height: 2200, flags: ["--hide-scrollbars"] }, async ({ send, evaluate }) => {
    await send("Page.navigate", { url })
    const deadline = Date.now() + 60_000
    while (!(await evaluate(ready))) {
      if (Date.now() > deadline) {
        const seen = await evaluate("location.href + ': ' + document.querySelectorAll('.opblock').length + ' operations, open: ' + [...document.querySelectorAll('.opblock.is-open')].map((o) => o.id).join(' ')")
        throw new Error(`the page did not get ready (${ready}); it shows ${seen}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    const box = await evaluate(`(() => {
      const element = document.getElementById(${JSON.stringify(id)})
      const top = element.getBoundingClientRect().top + window.scrollY
      const bottom = element.querySelector(${JSON.stringify(until)}).getBoundingClientRect().bottom + window.scrollY
      return { text: element.innerText, x: 0, y: top, width: document.documentElement.clientWidth, height: bottom - top }
    })()`)
    const dom = await evaluate("document.documentElement.outerHTML")
    const measured = await evaluate(measure)
    const shot = await send("Page.captureScreenshot", { format: "png", captureBeyondViewport: true, clip: { x: box.x, y: box.y, width: box.width, height: box.height, scale: 1 } })
    await send("Emulation.setDeviceMetricsOverride", { width: 390, height: 844, deviceScaleFactor: 3, mobile: true })
    const phoneLayoutWidth = await evaluate("document.documentElement.clientWidth")
    return { dom, measured, text: box.text, png: Buffer.from(shot.data, "base64"), phoneLayoutWidth }
  })

describe("/docs in headless Chromium", () => {
  it("renders the reference, listing every operation of the document, with nothing loaded from elsewhere", async (context) => {
    if (chromium === undefined) {
      if (chromiumRequired) throw new Error("FOS_REQUIRE_CHROMIUM=1 but there is no chromium on the PATH (apt-get install chromium)")
      context.skip("chromium is not on the PATH (apt-get install chromium); FOS_REQUIRE_CHROMIUM=1 makes this a failure")
      return
    }
    const { dom, log } = await renderInChromium(chromium, `${origin}/docs`)
    const rendered = new Set([...dom.matchAll(/opblock-summary-method">([A-Z]+)<\/span>.*?data-path="([^"]+)"/g)].map((m) => `${m[1]} ${m[2]}`))
    expect(rendered).toContain("GET /v2/customers")
    expect(rendered).toContain("POST /v2/webhooks/endpoints")
    expect(rendered).toContain("GET /v2/webhooks/endpoints/{id}")
    const document = await (await fetch(`${origin}/sandbox/v2/openapi.json`)).json()
    // Every operation, and every webhook (an event type's POST to the receiver).
    const documented = [document.paths, document.webhooks].flatMap((items: Record<string, object>) =>
      Object.entries(items).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
    )
    expect([...rendered].sort()).toEqual(documented.sort())
    // The environment picker offers both documents.
    expect(dom).toContain(`<option value="/sandbox/v2/openapi.json">sandbox</option>`)
    expect(dom).toContain(`<option value="/live/v2/openapi.json">live (production)</option>`)
    // No console message: no load refused by the page's policy, none failed, no script error.
    expect(log.split("\n").filter((line) => line.includes(":CONSOLE"))).toEqual([])
  }, 120_000)

  it("shows Authorize and the operations first, an opened operation's description, its rules, its request and response examples and the webhooks, and fits a phone; its screenshot is an artifact", async (context) => {
    if (chromium === undefined) {
      if (chromiumRequired) throw new Error("FOS_REQUIRE_CHROMIUM=1 but there is no chromium on the PATH (apt-get install chromium)")
      context.skip("chromium is not on the PATH (apt-get install chromium); FOS_REQUIRE_CHROMIUM=1 makes this a failure")
      return
    }
    // Deep-linked to POST /v2/orders, which the page opens expanded.
    const page = `${origin}/docs#/orders/orders.create`
    // Swagger UI's id of the operation's block (it escapes the dot of the operation id).
    const block = "operations-orders-orders\\.create"
    // Where on the page Authorize and the first operation are, and what the introduction holds.
    const layout = `(() => {
      const top = (element) => element === null ? null : element.getBoundingClientRect().top + window.scrollY
      const info = document.querySelector(".information-container")
      return {
        authorize: top(document.querySelector(".auth-wrapper .authorize")),
        firstOperation: top(document.querySelector(".opblock")),
        tablesInTheIntroduction: info.querySelectorAll("table").length,
        errorReferenceLinks: [...info.querySelectorAll("a")].map((a) => a.getAttribute("href")).filter((href) => href.includes("/docs/errors"))
      }
    })()`
    const { dom, measured, text: visible, png, phoneLayoutWidth } = await inspectInChromium(
      chromium,
      page,
      block,
      ".responses-table .response",
      `document.getElementById(${JSON.stringify(block)})?.matches(".is-open") && !!document.getElementById(${JSON.stringify(block)}).querySelector(".responses-table .response .microlight")`,
      layout
    )
    const document = await (await fetch(`${origin}/sandbox/v2/openapi.json`)).json()
    const operation = document.paths["/v2/orders"].post
    // The opened operation is the only one whose body Swagger UI renders: its parameters and its responses.
    const opened = [...dom.matchAll(/<div class="opblock opblock-(\w+) is-open" id="operations-([^"]+)">/g)].map((m) => `${m[1]} ${m[2]}`)
    expect(opened).toEqual(["post orders-orders\\.create"])
    const text = dom.replace(/<[^>]+>/g, " ").replace(/&quot;/g, "\"").replace(/\s+/g, " ")
    // The operation's own description, and the rules the document adds to it.
    expect(text).toContain("Creates a conversion order from a quote option")
    expect(text).toContain("requires an Idempotency-Key header")
    expect(text).toContain("IDEMPOTENCY_KEY_REQUIRED")
    // Its request body's example and its 201 response's example (Examples.ts), each in its example value (Swagger UI
    // highlights the JSON, spacing the colons).
    const member = (name: string, value: string) => new RegExp(`"${name}"\\s*:\\s*"${value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}"`)
    expect(text).toMatch(member("clientReferenceId", operation.requestBody.content["application/json"].example.clientReferenceId))
    const created = operation.responses["201"].content["application/json"].example
    expect(text).toMatch(member("id", created.id))
    expect(text).toMatch(member("direction", created.direction))
    // The webhooks, one per event type.
    expect(text).toContain("Webhooks")
    expect(text).toContain("wallet_signer.removed")
    // Operations first: Authorize, then the first operation within the first screen (of 900 px); the introduction
    // links the error reference, which is its own page (/docs/errors, above), and holds no table of codes.
    expect(measured.authorize).toBeGreaterThan(0)
    expect(measured.firstOperation).toBeGreaterThan(measured.authorize)
    expect(measured.firstOperation).toBeLessThan(900)
    expect(measured.tablesInTheIntroduction).toBe(0)
    expect(measured.errorReferenceLinks).toEqual(["/docs/errors"])
    // A phone lays the page out at its own width (the viewport tag), not at 980 px.
    expect(phoneLayoutWidth).toBe(390)

    // What a reader sees of the opened operation: its visible text holds the description and both examples, and its
    // picture, from its summary down to its 201 response's example, is kept as the run's artifact.
    expect(visible).toContain("Creates a conversion order from a quote option")
    expect(visible).toMatch(member("clientReferenceId", operation.requestBody.content["application/json"].example.clientReferenceId))
    expect(visible).toMatch(member("id", created.id))
    const artifacts = process.env.FOS_ARTIFACTS_DIR ?? join(repoRoot, "test-artifacts")
    mkdirSync(artifacts, { recursive: true })
    const screenshot = join(artifacts, "docs-operation.png")
    writeFileSync(screenshot, png)
    expect(png.subarray(0, 8).toString("hex")).toBe("89504e470d0a1a0a")
    // The IHDR's width: the page's.
    expect(png.readUInt32BE(16)).toBeGreaterThan(1000)
  }, 180_000)
})
