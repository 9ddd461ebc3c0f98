/**
 * What an embedded engine holds in memory after many requests, against a bare Effect HTTP handler after the same
 * requests (docs/performance.md, "An embedded engine's memory"; docs/embedding.md, "Memory"). Each side runs in a
 * child process of its own, started with no V8 flags, as a host's process is:
 *
 * - `effect`: `HttpRouter.toWebHandler` of one route answering the JSON body fos gives; it loads no fos module.
 * - `engine`: `createEngine`'s `fetch` (memory store, the benches' seed, a virtual clock so every answer is the same).
 *
 * Each sends authenticated `GET /sandbox/v2/portal/users/me` (an `x-api-key`) through its fetch-style handler, one
 * at a time, and reads `process.memoryUsage()` and the committed size of each of V8's heap spaces when its handler
 * is ready and after each count of `BENCH_REQUESTS` (`20000,200000`); then `BENCH_CONCURRENT` (2,000) more, 32 at a
 * time, another reading, and one after a full collection (what is still reachable). `BENCH_RUNS` (3) runs of each,
 * alternated; the table gives each run's figures, the ratio is of the medians. `BENCH_NODE_FLAGS` gives both
 * children V8 flags, to compare with what a flag does. Nothing here asserts a figure.
 *
 * `BENCH_FOS=dist` loads fos's built JavaScript (packages' dist/, `npm run build`), what a host installs from the
 * tarballs; the default, `source`, its TypeScript sources, which Node strips of their types as it loads them (a few
 * MiB more RSS: the stripped texts and the stripper's WebAssembly memory). `npm run bench:embedded-memory` builds
 * and uses `dist`.
 *
 *   node --conditions=@fos/source bench/embedded-memory.ts
 *
 * Results go to stdout and to docs/performance.md between `<!-- bench:embedded-memory:start -->` and its end marker
 * (BENCH_NO_DOCS=1 leaves the docs alone).
 */
import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { benchSeed, recordSection } from "./record.ts"

type Kind = "effect" | "engine"
const kinds: ReadonlyArray<Kind> = ["effect", "engine"]
const key = `ck_sandbox_${"6b".repeat(32)}`
const path = "/sandbox/v2/portal/users/me"
const counts = (process.env.BENCH_REQUESTS ?? "20000,200000").split(",").map(Number)
const concurrent = Number(process.env.BENCH_CONCURRENT ?? 2_000)
const runs = Number(process.env.BENCH_RUNS ?? 3)
const nodeFlags = (process.env.BENCH_NODE_FLAGS ?? "").split(" ").filter((flag) => flag !== "")
const fosFrom = process.env.BENCH_FOS ?? "source"
if (fosFrom !== "source" && fosFrom !== "dist") throw new Error(`BENCH_FOS: source or dist, not ${fosFrom}`)
const log = (line: string) => console.error(`[bench:embedded-memory] ${line}`)
const engineOptions = { seed: benchSeed(key) as never, clock: { mode: "virtual", start: "2026-03-03T09:00:00.000Z" } as const }

interface Reading {
  readonly label: string
  readonly rss: number
  readonly heapUsed: number
  readonly heapTotal: number
  readonly external: number
  readonly arrayBuffers: number
  /** Committed bytes of each of V8's heap spaces, by name (`new_space` is both semi-spaces). */
  readonly spaces: Readonly<Record<string, number>>
}

const read = (label: string): Reading => {
  const m = process.memoryUsage()
  const spaces: Record<string, number> = {}
  for (const s of getHeapSpaceStatistics()) spaces[s.space_name] = s.physical_space_size
  return { label, rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers, spaces }
}

/** One child: builds its handler, sends the requests, prints its readings as one JSON line on stdout. */
const child = async (kind: Kind, effectBody: string) => {
  const request = () => new Request(`http://fos${path}`, { headers: { "x-api-key": key } })
  let fetch: (request: Request) => Promise<Response>
  let dispose: () => Promise<void>
  let body = effectBody
  if (kind === "engine") {
    const { createEngine } = await import("@fos/http")
    const engine = await createEngine(engineOptions)
    fetch = engine.fetch
    dispose = engine.close
    body = await (await fetch(request())).text()
  } else {
    const { Effect } = await import("effect")
    const { HttpRouter, HttpServerResponse } = await import("effect/http")
    const route = HttpRouter.route("GET", path, Effect.sync(() => HttpServerResponse.text(body, { contentType: "application/json" })))
    const web = HttpRouter.toWebHandler(HttpRouter.use((router) => router.addAll([route])), { disableLogger: true })
    fetch = web.handler as (request: Request) => Promise<Response>
    dispose = () => web.dispose()
  }
  const once = async () => {
    const response = await fetch(request())
    const text = await response.text()
    if (response.status !== 200 || text !== body) throw new Error(`${kind}: ${response.status} ${text.slice(0, 200)}`)
  }
  const readings = [read("ready")]
  let sent = 0
  for (const count of counts) {
    for (; sent < count; sent++) await once()
    readings.push(read(`after ${count.toLocaleString("en")} requests`))
  }
  for (let i = 0; i < concurrent; i += 32) await Promise.all(Array.from({ length: Math.min(32, concurrent - i) }, once))
  readings.push(read(`after ${concurrent.toLocaleString("en")} more, 32 at a time`))
  // The flag only now, so that it changes nothing before: what is still reachable after a full collection.
  setFlagsFromString("--expose-gc")
  ;(runInNewContext("gc") as () => void)()
  readings.push(read("after a full collection"))
  console.log(JSON.stringify(readings))
  await dispose()
}

/** The body fos answers, fetched once in this process, which the Effect handler then answers too. */
const fosBody = async () => {
  const { createEngine } = await import("@fos/http")
  const engine = await createEngine(engineOptions)
  try {
    const response = await engine.fetch(new Request(`http://fos${path}`, { headers: { "x-api-key": key } }))
    if (response.status !== 200) throw new Error(`${path}: ${response.status}`)
    return await response.text()
  } finally {
    await engine.close()
  }
}

const mib = (bytes: number) => (bytes / 1048576).toFixed(1)
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const main = async () => {
  if (fosFrom === "dist" && !existsSync(fileURLToPath(new URL("../packages/http/dist/index.js", import.meta.url)))) {
    throw new Error("BENCH_FOS=dist: no packages/http/dist/index.js; npm run build first")
  }
  const body = await fosBody()
  const results: Record<Kind, Array<ReadonlyArray<Reading>>> = { effect: [], engine: [] }
  for (let r = 0; r < runs; r++) {
    for (const kind of r % 2 === 0 ? kinds : [...kinds].reverse()) {
      const out = execFileSync(process.execPath, [...nodeFlags, ...(fosFrom === "source" ? ["--conditions=@fos/source"] : []), import.meta.filename], {
        encoding: "utf8",
        env: { ...process.env, BENCH_CHILD: kind, BENCH_BODY: body },
        stdio: ["ignore", "pipe", "inherit"],
        maxBuffer: 16 * 1024 * 1024
      })
      const readings = JSON.parse(out.trim().split("\n").pop()!) as ReadonlyArray<Reading>
      results[kind].push(readings)
      log(`${kind} run ${r + 1}: ` + readings.map((x) => `${x.label}: RSS ${mib(x.rss)}, heap ${mib(x.heapUsed)}, new space ${mib(x.spaces.new_space ?? 0)}, old space ${mib(x.spaces.old_space ?? 0)}`).join("; "))
    }
  }
  const labels = results.engine[0]!.map((x) => x.label)
  const cell = (kind: Kind, i: number, pick: (x: Reading) => number) => results[kind].map((run) => mib(pick(run[i]!))).join(", ")
  const ratio = (i: number) => median(results.engine.map((run) => run[i]!.rss)) / median(results.effect.map((run) => run[i]!.rss))
  const table = [
    `Node ${process.version}${nodeFlags.length === 0 ? ", no V8 flags" : `, ${nodeFlags.join(" ")}`}; fos from its ${fosFrom === "dist" ? "built JavaScript (dist/)" : "TypeScript sources"}; sequential \`GET ${path}\` with an \`x-api-key\`, ` +
    `then ${concurrent.toLocaleString("en")} more 32 at a time; MiB, ${runs} runs of each (the ratio is of the medians).`,
    "",
    "| reading | RSS, Effect handler | RSS, engine | engine / Effect | heap used, Effect / engine | new space, Effect / engine | old space, Effect / engine |",
    "|---|---|---|---:|---|---|---|",
    ...labels.map((label, i) =>
      `| ${label} | ${cell("effect", i, (x) => x.rss)} | ${cell("engine", i, (x) => x.rss)} | ${ratio(i).toFixed(2)}× | ` +
      `${cell("effect", i, (x) => x.heapUsed)} / ${cell("engine", i, (x) => x.heapUsed)} | ` +
      `${cell("effect", i, (x) => x.spaces.new_space ?? 0)} / ${cell("engine", i, (x) => x.spaces.new_space ?? 0)} | ` +
      `${cell("effect", i, (x) => x.spaces.old_space ?? 0)} / ${cell("engine", i, (x) => x.spaces.old_space ?? 0)} |`
    )
  ].join("\n")
  console.log(table)
  if (process.env.BENCH_NO_DOCS !== "1") {
    recordSection("embedded-memory", table)
    log("updated docs/performance.md")
  }
}

const kind = process.env.BENCH_CHILD
if (kind === "effect" || kind === "engine") await child(kind, process.env.BENCH_BODY ?? "")
else await main()
