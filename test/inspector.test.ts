/**
 * The inspector (`/inspect`) as served, without a browser (test/inspector-browser.test.ts drives it in Chromium):
 * every engine serves it, an embedded one included, from the generated module that is what
 * scripts/inspector-assets.ts builds now; its page loads only its own two files under a policy with no inline
 * script, eval or inline style; its source renders nothing as HTML; and the order state table it draws is the
 * core's.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { OrderMachine } from "@fos/core"
import { createEngine, type Engine } from "@fos/http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { orderEdges, type OrderState, orderStates } from "../inspector/orderGraph.ts"
import { inspectorAssetsPath, renderInspectorAssets } from "../scripts/inspector-assets.ts"
import { repoRoot } from "./fosProcess.ts"

let engine: Engine

beforeAll(async () => {
  // An embedded engine: given no files, as a host's engine is.
  engine = await createEngine()
})
afterAll(async () => {
  await engine?.close()
})

const get = (path: string, method = "GET") => engine.fetch(new Request(`http://fos.test${path}`, { method }))

/** Every http(s) URL in `text` that is not an XML namespace (Preact names SVG's and XLink's, which load nothing). */
const urlsIn = (text: string): Array<string> =>
  [...text.matchAll(/https?:\/\/[^\s"'`<>)\\]+/g)].map((m) => m[0]).filter((url) => !url.startsWith("http://www.w3.org/"))

describe("/inspect", () => {
  it("is served by an embedded engine with no key: the page, its script and its stylesheet", async () => {
    const page = await get("/inspect")
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(page.headers.get("x-content-type-options")).toBe("nosniff")
    expect(page.headers.get("cache-control")).toBe("no-cache")
    const html = await page.text()
    expect((await (await get("/inspect/")).text())).toBe(html)
    // It loads its own two files, by absolute path, and nothing else (the favicon is an empty data: URL).
    const loads = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)
    expect(loads.sort()).toEqual(["/inspect/app.css", "/inspect/app.js", "data:,"])
    expect(html).not.toMatch(/<script>|<script [^>]*>[^<]/)
    expect(html).not.toMatch(/ style=/)

    const script = await get("/inspect/app.js")
    expect(script.status).toBe(200)
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    const code = await script.text()
    expect(code).toContain("Preact")
    expect(urlsIn(code)).toEqual([])
    const style = await get("/inspect/app.css")
    expect(style.headers.get("content-type")).toBe("text/css; charset=utf-8")
    expect(urlsIn(await style.text())).toEqual([])
    expect((await get("/inspect", "HEAD")).status).toBe(200)
  })

  it("is served under a policy with no inline script, no eval, no inline style and no framing", async () => {
    const policy = (await get("/inspect")).headers.get("content-security-policy")!
    const directives = Object.fromEntries(policy.split(";").map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name!, values]))
    expect(directives["default-src"]).toEqual(["'self'"])
    expect(directives["script-src"]).toEqual(["'self'"])
    expect(directives["style-src"]).toEqual(["'self'"])
    expect(directives["connect-src"]).toEqual(["'self'"])
    expect(directives["object-src"]).toEqual(["'none'"])
    expect(directives["base-uri"]).toEqual(["'none'"])
    expect(directives["frame-ancestors"]).toEqual(["'none'"])
    expect(policy).not.toContain("unsafe")
  })

  it("serves only its own addresses, and nothing but GET and HEAD", async () => {
    for (const path of ["/inspect/index.html", "/inspect/app.js.map", "/inspect/x", "/inspectx", "/inspect/../docs"]) {
      const response = await get(path)
      expect(response.status, path).toBe(404)
      expect((await response.json()).type, path).toBe("NOT_FOUND")
    }
    expect((await get("/inspect", "POST")).status).toBe(404)
  })

  it("is served from the generated module that scripts/inspector-assets.ts writes from the application now", async () => {
    const committed = readFileSync(inspectorAssetsPath, "utf8")
    // Run `node scripts/inspector-assets.ts` after changing inspector/ or the pinned Preact or htm.
    expect(committed === (await renderInspectorAssets()), "packages/http/src/InspectorAssets.ts is out of date: run node scripts/inspector-assets.ts").toBe(true)
    const served = await (await get("/inspect/app.css")).text()
    expect(served).toBe(readFileSync(join(repoRoot, "inspector/app.css"), "utf8"))
  })

  it("renders every string as text: its source sets no HTML and evaluates no string", () => {
    const modules = readdirSync(join(repoRoot, "inspector")).filter((file) => file.endsWith(".ts"))
    expect(modules).toContain("app.ts")
    for (const file of modules) {
      const source = readFileSync(join(repoRoot, "inspector", file), "utf8")
      for (const sink of ["innerHTML", "outerHTML", "dangerouslySetInnerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "localStorage"]) {
        expect(source.includes(sink), `${file}: ${sink}`).toBe(false)
      }
    }
  })
})

describe("the order state table as the inspector draws it (inspector/orderGraph.ts)", () => {
  // The picture's states as the table's (OrderMachine.State): `pending` told apart by whether its execution is
  // claimed and its source transfer sent; the lock expires at `lock`.
  const lock = 1_000
  const tableState = (state: Exclude<OrderState, "new">): OrderMachine.State => {
    const pending = OrderMachine.initialState(lock)
    switch (state) {
      case "pending":
        return pending
      case "executing":
        return { ...pending, executing: true }
      case "sent":
        return { ...pending, executing: true, sent: true }
      default:
        return { ...pending, status: state }
    }
  }
  const pictureState = (state: OrderMachine.State): OrderState =>
    state.status !== "pending" ? state.status : state.sent ? "sent" : state.executing ? "executing" : "pending"
  // Before the lock expires, except the sweep's, which comes at it.
  const move = (type: OrderMachine.Move["type"]): OrderMachine.Move =>
    type === "execute" ? { type, nowMs: 0 } : type === "expire" ? { type, nowMs: lock } : { type }
  const moveTypes = ["execute", "cancel", "expire", "send", "succeed", "fail"] as const

  it("draws every state once, and each edge as moves the table makes from its state to the next", () => {
    expect(orderStates.map((s) => s.id).sort()).toEqual(["cancelled", "executing", "failed", "new", "pending", "sent", "succeeded"])
    for (const [from, to, label, moves] of orderEdges) {
      for (const type of moves) {
        if (type === "create") {
          // Creation: a new order is pending, neither executing nor sent.
          expect([from, to, pictureState(OrderMachine.initialState(lock))], label).toEqual(["new", "pending", "pending"])
          continue
        }
        expect(from, label).not.toBe("new")
        const outcome = OrderMachine.transition(tableState(from as Exclude<OrderState, "new">), move(type))
        expect("next" in outcome ? pictureState(outcome.next) : outcome, `${from} --${type}--> (${label})`).toBe(to)
      }
    }
  })

  it("leaves out two moves of the table, and names them", () => {
    // A pending order that fails before its execution is claimed, and an executing one that succeeds before its
    // source is marked sent: the table allows both moves; the picture, a summary, draws neither. Drawing them
    // changes the picture; until then, a move the table gains or loses shows here.
    const drawn = new Set(orderEdges.flatMap(([from, , , moves]) => moves.map((type) => `${from} ${type}`)))
    const undrawn: Array<string> = []
    for (const { id } of orderStates) {
      if (id === "new") continue
      for (const type of moveTypes) {
        const outcome = OrderMachine.transition(tableState(id), move(type))
        if ("next" in outcome && !drawn.has(`${id} ${type}`)) undrawn.push(`${id} --${type}--> ${pictureState(outcome.next)}`)
      }
    }
    expect(undrawn).toEqual(["pending --fail--> failed", "executing --succeed--> succeeded"])
  })
})
