/**
 * The in-process half of `npm run bench`: what fos's pipeline costs per request with no socket in the way, and
 * what a list page costs deep in a long list.
 *
 * 1. Pipeline cost: the same `GET /sandbox/v2/portal/users/me` through `engine.fetch` (the whole pipeline:
 *    edge, authentication, rate limit, gate, handler) and through a bare HttpApi route that answers the same
 *    JSON with no pipeline at all, both as fetch-style handlers in this process. Best of several rounds, since
 *    the other processes on a shared machine only ever make a round slower. Sockets are left out on purpose: on
 *    a virtual machine the cost of waking the load generator on every write dominates the network numbers.
 * 2. Keyset paging: `GET /sandbox/v2/customers?limit=20` at the start of a list of 1,000,000 customers and at
 *    its end (through a cursor), to show that a page costs the same at any depth.
 *
 * Results go to stdout and to the section of docs/performance.md between `<!-- bench:pipeline:start -->` and
 * `<!-- bench:pipeline:end -->` (BENCH_NO_DOCS=1 leaves the docs alone). Nothing here asserts a time.
 */
import { type CustomerId } from "@fos/contract"
import { Customers, Store } from "@fos/core"
import { createEngine } from "@fos/http"
import { Effect, Layer, Schema } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { measuredAt, recordSection } from "./record.ts"

const key = `ck_sandbox_${"ab".repeat(32)}`
const rounds = Number(process.env.BENCH_PIPELINE_ROUNDS ?? 5)
const perRound = Number(process.env.BENCH_PIPELINE_REQUESTS ?? 20_000)
const listSize = Number(process.env.BENCH_LIST_SIZE ?? 1_000_000)
const log = (line: string) => console.error(`[bench:pipeline] ${line}`)

const seed = {
  organizations: [{
    id: "org_bench",
    name: "Bench",
    status: "active" as const,
    rateLimit: { sustainedPerSecond: 1e9, burst: 1e9 },
    users: [{ id: "usr_bench", email: "bench@example.com", role: "admin" as const }],
    apiKeys: [{ key, access: "read_write" as const, createdBy: "usr_bench" }]
  }]
}

/** Microseconds per request of `fetch` on `path`: the best of `rounds` rounds after a warm-up. */
const measure = async (fetch: (request: Request) => Promise<Response>, path: string, expectBody?: string) => {
  const once = async () => {
    const response = await fetch(new Request(`http://fos${path}`, { headers: { "x-api-key": key } }))
    const body = await response.text()
    if (response.status !== 200 || (expectBody !== undefined && body !== expectBody)) throw new Error(`${path}: ${response.status} ${body.slice(0, 200)}`)
  }
  for (let i = 0; i < 3_000; i++) await once()
  let best = Infinity
  for (let r = 0; r < rounds; r++) {
    const start = performance.now()
    for (let i = 0; i < perRound; i++) await once()
    best = Math.min(best, ((performance.now() - start) * 1000) / perRound)
  }
  return best
}

const main = async () => {
  const engine = await createEngine({ seed })
  const meResponse = await engine.fetch(new Request("http://fos/sandbox/v2/portal/users/me", { headers: { "x-api-key": key } }))
  const meBody = await meResponse.text()

  // The same route and body with no pipeline: HttpApi decoding, routing and Schema encoding only.
  const Me = Schema.Unknown
  const Bare = HttpApi.make("bare").add(HttpApiGroup.make("p").add(HttpApiEndpoint.get("me", "/sandbox/v2/portal/users/me", { success: Me })))
  const meValue: unknown = JSON.parse(meBody)
  const bare = HttpRouter.toWebHandler(
    HttpApiBuilder.layer(Bare).pipe(
      Layer.provide(HttpApiBuilder.group(Bare, "p", (h) => h.handle("me", () => Effect.succeed(meValue)))),
      Layer.provide(HttpServer.layerServices)
    ),
    { disableLogger: true }
  )
  const bareFetch = bare.handler as (request: Request) => Promise<Response>

  log(`pipeline: ${rounds} rounds of ${perRound} requests each`)
  const bareUs = await measure(bareFetch, "/sandbox/v2/portal/users/me", meBody)
  const fosUs = await measure(engine.fetch, "/sandbox/v2/portal/users/me", meBody)

  log(`keyset: inserting ${listSize} customers`)
  await engine.run(Effect.gen(function*() {
    const store = yield* Store.Store
    const t0 = Date.UTC(2026, 0, 1)
    for (let i = 0; i < listSize; i++) {
      const at = new Date(t0 + i * 1000).toISOString()
      yield* Effect.orDie(store.insert(Customers.Customers, {
        id: `cus_${i.toString(36).padStart(8, "0")}` as CustomerId,
        organizationId: "org_bench",
        environment: "sandbox",
        type: "business",
        status: "active",
        name: `Customer ${i}`,
        country: "USA",
        clientReferenceId: undefined,
        houseAccount: false,
        applicationId: "app_bench",
        state: undefined,
        silentRestrictions: 0,
        createdAt: at,
        updatedAt: at
      }))
    }
  }))
  const first = await measure(engine.fetch, "/sandbox/v2/customers?limit=20")
  // The last page of the list: a cursor just before its final 20 rows.
  const lastCursor = await (async () => {
    const response = await engine.fetch(new Request("http://fos/sandbox/v2/customers?limit=20&direction=backward&sortOrder=desc", { headers: { "x-api-key": key } }))
    const page = (await response.json()) as { meta: { previousCursor: string | null } }
    if (page.meta.previousCursor === null) throw new Error("no cursor at the end of the list")
    return page.meta.previousCursor
  })()
  const deep = await measure(engine.fetch, `/sandbox/v2/customers?limit=20&cursor=${encodeURIComponent(lastCursor)}`)
  await engine.close()
  await bare.dispose()

  const table = [
    `Measured at ${measuredAt()}, Node ${process.version}; best of ${rounds} rounds of ${perRound.toLocaleString("en")} requests, in process (no sockets).`,
    "",
    "| | µs per request |",
    "|---|---:|",
    `| bare HttpApi route, same JSON, no pipeline | ${bareUs.toFixed(1)} |`,
    `| fos, whole pipeline (\`GET /sandbox/v2/portal/users/me\`) | ${fosUs.toFixed(1)} |`,
    `| fos pipeline's own cost (difference) | ${(fosUs - bareUs).toFixed(1)} |`,
    `| \`GET /sandbox/v2/customers?limit=20\`, first page of ${listSize.toLocaleString("en")} | ${first.toFixed(1)} |`,
    `| the same page size at the end of the list (cursor) | ${deep.toFixed(1)} |`
  ].join("\n")
  console.log(table)
  if (process.env.BENCH_NO_DOCS !== "1") {
    recordSection("pipeline", table)
    log("updated docs/performance.md")
  }
}

main().catch((e: unknown) => {
  console.error(`[bench:pipeline] failed: ${e instanceof Error ? e.message : String(e)}`)
  process.exitCode = 1
})
