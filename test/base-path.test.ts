/**
 * An engine mounted at a path of a host's (`createEngine({ basePath: "/fos" })`): a plain `node:http` host forwards
 * `/fos/...` unchanged to `engine.fetch` and answers everything else itself, its own 404 included. Every link fos
 * hands out is followed (test/links.ts) and none is the host's 404; without the option, the same links are today's.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Readable } from "node:stream"
import { createClient } from "@fos/client"
import { createEngine, type Engine, layerEmbedded, layerRoutes } from "@fos/http"
import { startEngine } from "@fos/testing"
import { Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { followLinks } from "./links.ts"
import { keysOf, orgSeed, seedOf, START_MS } from "./support.ts"

const keys = keysOf("mounted")
const realFetch = globalThis.fetch
const operatorToken = "base-path-operator-token"

/** The host's own answer for what is not fos's: a 404 no fos answer looks like. */
const hostNotFound = (res: ServerResponse) => {
  res.writeHead(404, { "content-type": "text/plain", "x-answered-by": "host" })
  res.end("the host has no such page")
}

/** `engine` in a node:http host at `base`, beside the host's own `/host/...` routes. */
const host = (engine: Engine, base: string): Promise<Server> => {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? "/"
    if (url.startsWith("/host/")) {
      res.writeHead(200, { "content-type": "text/plain" })
      res.end("the host's own page")
      return
    }
    if (base !== "" && url !== base && !url.startsWith(`${base}/`) && !url.startsWith(`${base}?`)) return hostNotFound(res)
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const headers = new Headers()
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value)
      const body = chunks.length === 0 ? undefined : Buffer.concat(chunks)
      const controller = new AbortController()
      res.on("close", () => controller.abort())
      engine.fetch(new Request(`http://${req.headers.host}${url}`, { method: req.method!, headers, body: body ?? null, signal: controller.signal })).then(
        (response) => {
          res.writeHead(response.status, Object.fromEntries(response.headers))
          if (response.body === null) res.end()
          else Readable.fromWeb(response.body as never).on("error", () => res.destroy()).pipe(res)
        },
        () => res.destroy()
      )
    })
  })
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)))
}

const mounted = async (basePath: string | undefined) => {
  const engine = await createEngine({
    clock: { mode: "virtual", start: START_MS },
    seed: seedOf(orgSeed("mounted")) as never,
    operatorToken,
    ...(basePath === undefined ? {} : { basePath })
  })
  const server = await host(engine, basePath ?? "")
  return { engine, server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

describe("an engine mounted at /fos in a node:http host", () => {
  let site: Awaited<ReturnType<typeof mounted>>
  beforeAll(async () => {
    site = await mounted("/fos")
  })
  afterAll(async () => {
    site?.server.close()
    await site?.engine.close()
  })

  it("every link fos hands out resolves under /fos: none is the host's 404", async () => {
    const failures = await followLinks({
      origin: site.origin,
      base: "/fos",
      sandboxKey: keys.sandbox,
      liveKey: keys.live,
      operatorToken,
      docsPage: false
    })
    expect(failures).toEqual([])
  })

  it("the host keeps its own routes", async () => {
    expect((await fetch(`${site.origin}/host/hello`)).status).toBe(200)
    const outside = await fetch(`${site.origin}/sandbox/v2/customers`, { headers: { "x-api-key": keys.sandbox } })
    expect([outside.status, outside.headers.get("x-answered-by")]).toEqual([404, "host"])
  })

  it("engine.fetch answers only under its base path: a path without it is fos's unknown route", async () => {
    const response = await site.engine.fetch("http://fos.test/sandbox/v2/customers", { headers: { "x-api-key": keys.sandbox } })
    const problem = await response.json()
    expect([response.status, problem.type, problem.instance]).toEqual([404, "NOT_FOUND", "/sandbox/v2/customers"])
    expect(problem.detail).toContain("/fos/sandbox")
    expect(problem.docs).toBe("http://fos.test/fos/docs/errors#not_found")
    const under = await site.engine.fetch("http://fos.test/fos/sandbox/v2/customers", { headers: { "x-api-key": keys.sandbox } })
    expect(under.status).toBe(200)
  })

  it("the engine says where it is mounted", () => {
    expect(site.engine.basePath).toBe("/fos")
  })

  it("the inspector's application calls the API under the base path its page names", async () => {
    const page = await (await fetch(`${site.origin}/fos/inspect`)).text()
    const mount = /<meta name="fos-base-path" content="([^"]*)">/.exec(page)?.[1]
    const called: Array<string> = []
    // The browser's globals the module reads: the page's meta element, and fetch on the page's origin.
    vi.stubGlobal("document", {
      querySelector: (selector: string) => (selector === 'meta[name="fos-base-path"]' && mount !== undefined ? { content: mount } : null),
      documentElement: { dataset: {} }
    })
    vi.stubGlobal("fetch", (path: string, init: RequestInit) => {
      called.push(path)
      return realFetch(`${site.origin}${path}`, init)
    })
    try {
      vi.resetModules()
      const inspector = await import("../inspector/api.ts")
      const key = await inspector.signIn(inspector.sessionOf(keys.sandbox))
      expect(key.kind === "key" && key.me?.organization.id).toBe("org_mounted")
      const operator = await inspector.signIn(inspector.sessionOf(operatorToken))
      expect(operator.kind === "operator" && operator.me?.data.length).toBe(1)
    } finally {
      vi.unstubAllGlobals()
    }
    expect(called).toEqual(["/fos/sandbox/v2/portal/users/me", "/fos/operator/organizations"])
  })
})

describe("the base path elsewhere", () => {
  it("the typed client takes <origin>/fos/sandbox as its base URL over engine.fetch", async () => {
    const engine = await createEngine({ clock: { mode: "virtual", start: START_MS }, seed: seedOf(orgSeed("mounted")) as never, basePath: "/fos" })
    try {
      const client = createClient({ baseUrl: "http://fos.test/fos/sandbox", apiKey: keys.sandbox, fetch: engine.fetch })
      expect((await client.portal.me()).organization.id).toBe("org_mounted")
    } finally {
      await engine.close()
    }
  })

  it("@fos/testing's engine and its server take the engine's base path", async () => {
    const fos = await startEngine({ engine: { basePath: "/fos" } })
    try {
      expect(fos.world.baseUrl).toBe("http://fos/fos/sandbox")
      expect((await fos.world.client.portal.me()).organization.id).toBe("org_test")
      const served = await fos.serve()
      expect(served.baseUrl).toBe(`${served.origin}/fos/sandbox`)
      expect((await fetch(`${served.baseUrl}/v2/portal/users/me`, { headers: { "x-api-key": fos.world.apiKey } })).status).toBe(200)
    } finally {
      await fos.close()
    }
  })

  it("an Effect host gives the path to layerRoutes", async () => {
    const routes = layerRoutes(layerEmbedded({ clock: { mode: "virtual", start: START_MS }, seed: seedOf(orgSeed("mounted")) as never }), { basePath: "/fos" })
    const web = HttpRouter.toWebHandler(routes.pipe(Layer.provide(HttpServer.layerServices)) as never, { disableLogger: true })
    try {
      const handler = web.handler as (request: Request) => Promise<Response>
      const document = await (await handler(new Request("http://fos.test/fos/live/v2/openapi.json"))).json()
      expect(document.servers[0].url).toBe("/fos/live")
      const me = await handler(new Request("http://fos.test/fos/sandbox/v2/portal/users/me", { headers: { "x-api-key": keys.sandbox } }))
      expect(me.status).toBe(200)
      const outside = await (await handler(new Request("http://fos.test/sandbox/v2/portal/users/me", { headers: { "x-api-key": keys.sandbox } }))).json()
      expect([outside.type, outside.docs]).toEqual(["NOT_FOUND", "http://fos.test/fos/docs/errors#not_found"])
    } finally {
      await web.dispose()
    }
  })
})

describe("an engine without a base path", () => {
  let site: Awaited<ReturnType<typeof mounted>>
  beforeAll(async () => {
    site = await mounted(undefined)
  })
  afterAll(async () => {
    site?.server.close()
    await site?.engine.close()
  })

  it("hands out today's links, and every one resolves", async () => {
    const failures = await followLinks({ origin: site.origin, base: "", sandboxKey: keys.sandbox, liveKey: keys.live, operatorToken, docsPage: false })
    expect(failures).toEqual([])
    const problem = await (await fetch(`${site.origin}/sandbox/v2/customers`)).json()
    expect([problem.docs, problem.instance]).toEqual([`${site.origin}/docs/errors#api_key_missing`, "/sandbox/v2/customers"])
    const document = await (await fetch(`${site.origin}/sandbox/v2/openapi.json`)).json()
    expect(document.servers[0].url).toBe("/sandbox")
    expect(await (await fetch(`${site.origin}/inspect`)).text()).toContain(`<link rel="stylesheet" href="/inspect/app.css">`)
    expect(site.engine.basePath).toBe("")
  })
})

describe("basePath is checked", () => {
  it.each([
    ["fos", "does not start with /"],
    ["/fos//x", "an empty segment"],
    ["/fos/../x", "a dot segment"],
    ["/fos?x=1", "a query"],
    ["/f%6fs", "percent-encoding"]
  ])("%s (%s) is refused with a message naming it", async (basePath) => {
    await expect(createEngine({ basePath })).rejects.toThrow(/basePath/)
  })

  it("/ and a trailing slash are the same as none and as without it", async () => {
    const root = await createEngine({ basePath: "/" })
    const trailing = await createEngine({ basePath: "/fos/" })
    try {
      expect([root.basePath, trailing.basePath]).toEqual(["", "/fos"])
    } finally {
      await Promise.all([root.close(), trailing.close()])
    }
  })
})
