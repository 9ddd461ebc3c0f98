/**
 * `npm run bench:docs-page`: how long `/docs` (Swagger UI over the sandbox's document) takes to show its first
 * operation, and to show a deep-linked operation opened, in headless Chromium (Debian's `chromium`), through
 * `fos serve --store memory`.
 *
 * Each of `BENCH_DOCS_ROUNDS` (5) rounds starts a fresh Chromium (an empty profile, so nothing is cached) per page and
 * target, opens the page over the DevTools protocol and reads, in the page, the time from navigation start
 * (`performance.now()`'s origin) to the frame after the one in which what it waits for is first laid out: that frame
 * has been drawn and the page's thread is free again. It waits for the first operation's block (`.opblock`) on
 * `/docs`, and for the 201 example of `POST /v2/orders` on `/docs#/orders/orders.create`. The median and the range
 * are recorded, on one line, with how far down the page the first operation is and the documents' sizes.
 * `BENCH_COMPARE=<another checkout, installed>` measures its server in the same rounds, the targets alternating.
 *
 * Results go to stdout and to docs/performance.md between `<!-- bench:docs-page:start -->` and
 * `<!-- bench:docs-page:end -->` (BENCH_NO_DOCS=1 leaves the docs alone). Nothing here asserts a time.
 */
import { spawn } from "node:child_process"
import { resolve } from "node:path"
import { withChromiumPage } from "../test/chromium.ts"
import { killAllFos, listeningOrigin, repoRoot, startArgsOf, startFos } from "../test/fosProcess.ts"
import { measuredAt, recordSection } from "./record.ts"

const rounds = Number(process.env.BENCH_DOCS_ROUNDS ?? 5)
const log = (line: string) => console.error(`[bench:docs-page] ${line}`)

/**
 * Installed before the page's own scripts: on every frame, until `shown` (an expression) gives an element with a
 * box, looks again; the time recorded is that of the next frame, when the one that laid it out has been drawn (a
 * long task right after the render delays it), with the element's distance from the top of the page.
 */
const watchFor = (shown: string) => `(() => {
  const look = () => {
    const box = (${shown})?.getBoundingClientRect()
    if (box !== undefined && box.height > 0) requestAnimationFrame(() => { window.__shown = { at: performance.now(), top: box.top + scrollY } })
    else requestAnimationFrame(look)
  }
  requestAnimationFrame(look)
})()`

const pages = [
  { name: "`/docs`, the first operation", path: "/docs", shown: `document.querySelector(".opblock")` },
  {
    name: "`/docs#/orders/orders.create`, that operation opened (its 201 example)",
    path: "/docs#/orders/orders.create",
    // Swagger UI's id of the operation's block escapes the dot of its operation id with a backslash.
    shown: `document.getElementById(${JSON.stringify("operations-orders-orders\\.create")})?.querySelector(".responses-table .response .microlight")`
  }
] as const

/**
 * Opens `url` in a fresh headless Chromium and resolves with the milliseconds until `shown` is on the screen and its
 * distance from the top of the page, in CSS pixels.
 */
const timeUntilShown = (url: string, shown: string): Promise<{ readonly at: number; readonly top: number }> =>
  withChromiumPage("chromium", { width: 1280, height: 900 }, async ({ send, evaluate }) => {
    await send("Page.addScriptToEvaluateOnNewDocument", { source: watchFor(shown) })
    await send("Page.navigate", { url })
    const started = performance.now()
    for (;;) {
      const value = await evaluate("window.__shown")
      if (typeof value?.at === "number") return value
      if (performance.now() - started > 120_000) throw new Error(`${url} showed nothing in 120 s`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  })

/** Starts `fos serve --store memory` of the checkout `root`; resolves once it listens. */
const start = async (root: string) => {
  if (root === repoRoot) return startFos(["--store", "memory", "--port", "0"])
  const child = spawn(process.execPath, [...startArgsOf(root), "--store", "memory", "--port", "0", "--quiet"], { cwd: root, stdio: ["ignore", "pipe", "inherit"] })
  const origin = await listeningOrigin(child)
  return { origin, stop: async () => void child.kill("SIGKILL") }
}

const compare = process.env.BENCH_COMPARE === undefined || process.env.BENCH_COMPARE === "" ? undefined : resolve(process.env.BENCH_COMPARE)
const targets = [{ name: "this checkout", root: repoRoot }, ...(compare === undefined ? [] : [{ name: `BENCH_COMPARE (${measuredAt(compare)})`, root: compare }])]
const servers = await Promise.all(targets.map((t) => start(t.root)))
try {
  const sizes: Array<string> = []
  for (const [t, server] of servers.entries()) {
    for (const environment of ["sandbox", "live"]) {
      const bytes = (await (await fetch(`${server.origin}/${environment}/v2/openapi.json`)).arrayBuffer()).byteLength
      sizes.push(`${targets[t]!.name}, ${environment}: ${(bytes / 1e6).toFixed(2)} MB`)
    }
  }
  const results = new Map<string, Array<{ at: number; top: number }>>()
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < targets.length; i++) {
      const t = (i + round) % targets.length
      for (const [p, page] of pages.entries()) {
        const shown = await timeUntilShown(`${servers[t]!.origin}${page.path}`, page.shown)
        results.set(`${t}/${p}`, [...(results.get(`${t}/${p}`) ?? []), shown])
        log(`round ${round + 1}, ${targets[t]!.name}, ${page.path}: ${(shown.at / 1000).toFixed(2)} s, ${Math.round(shown.top)} px down`)
      }
    }
  }
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`
  const figures = targets.map((target, t) =>
    `${target.name}: ` + pages.map((page, p) => {
      const runs = results.get(`${t}/${p}`)!
      const times = runs.map((r) => r.at).sort((a, b) => a - b)
      const top = p === 0 ? `, ${Math.round(runs[0]!.top)} px down` : ""
      return `${page.name} ${s(times[Math.floor(times.length / 2)]!)} (${s(times[0]!)} to ${s(times.at(-1)!)})${top}`
    }).join("; ")
  )
  // One line: the figures a reader compares, in a page that keeps to its length.
  const table = `Measured on ${measuredAt()}; ${rounds} rounds, each page in a fresh headless Chromium (1280×900, nothing cached); ` +
    `median (fastest to slowest) until it is on the screen (goal: the first operation under 3 s). ${figures.join(". ")}. ` +
    `Documents on the wire: ${sizes.join("; ")}.`
  console.log(table)
  if (process.env.BENCH_NO_DOCS !== "1") recordSection("docs-page", table)
} finally {
  for (const server of servers) await server.stop()
  killAllFos()
}
