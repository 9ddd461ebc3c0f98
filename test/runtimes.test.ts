/**
 * The same black-box scenario against the real server on Node, on Bun (`Bun.serve`) and on Deno (`Deno.serve`),
 * each started from its npm-installed binary as README says: authentication, problems, a list, an idempotent
 * replay, a signed webhook to a loopback receiver, its retry through a virtual clock advance, the caller's socket
 * address against a key's allowlist, and a clean stop on SIGTERM. On Bun and Deno, the durable stores too: a PGlite
 * directory across a restart, and PostgreSQL when DATABASE_URL is set.
 *
 * And the engine's own promise that lets it run on all three: packages/core imports no Node module and touches no
 * runtime's globals.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import { once } from "node:events"
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type IncomingMessage, request as httpRequest, type Server } from "node:http"
import { isBuiltin } from "node:module"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { adminUrl, freshDatabase } from "../adapters/sql/test/databases.ts"
import { type FosRuntime, killAllFos, repoRoot, type RunningFos, serveCommand, startFos, stopUnderRepeatedSignals, v8StartFlags } from "./fosProcess.ts"
import { expectProblem, httpCall, keysOf, orgSeed, type Reply, sandboxKey, seedOf, START_MS } from "./support.ts"
import { pgliteDirectoryAt } from "../adapters/sql/test/pgliteDirectory.ts"

const tmp = mkdtempSync(join(tmpdir(), "fos-runtimes-"))
const receivers: Array<Server> = []

afterAll(() => {
  killAllFos()
  for (const server of receivers) server.close()
  rmSync(tmp, { recursive: true, force: true })
})

const K = keysOf("rt")
// The socket address a request comes from decides these two: Linux routes all of 127.0.0.0/8 to loopback, so a
// request can leave from 127.0.0.2 while the server listens on 127.0.0.1.
const fromSecondLoopback = sandboxKey("rt/from-127.0.0.2")
const fromFirstLoopback = sandboxKey("rt/from-127.0.0.1")
const seedPath = join(tmp, "seed.json")
writeFileSync(seedPath, JSON.stringify(seedOf(orgSeed("rt", {
  keys: [
    { key: K.sandbox, access: "read_write" },
    { key: fromSecondLoopback, access: "read_only", ipAllowlist: ["127.0.0.2/32"] },
    { key: fromFirstLoopback, access: "read_only", ipAllowlist: ["127.0.0.1/32"] }
  ]
}))))

const runtimes: ReadonlyArray<FosRuntime> = ["node", "bun", "deno"]

/** A GET sent from `localAddress`, with node:http (fetch cannot choose the address it sends from). */
const getFrom = (localAddress: string, url: string, key: string): Promise<{ status: number; json: any }> =>
  new Promise((resolve, reject) => {
    const req = httpRequest(url, { localAddress, headers: { "x-api-key": key }, agent: false }, (res) => {
      let text = ""
      res.setEncoding("utf8").on("data", (c: string) => (text += c)).on("end", () => resolve({ status: res.statusCode!, json: JSON.parse(text) }))
    })
    req.on("error", reject).end()
  })

interface Hit {
  readonly headers: IncomingMessage["headers"]
  readonly raw: Buffer
}

/** A webhook receiver on loopback that answers each delivery with the next of `statuses` (then 204). */
const startReceiver = async (statuses: ReadonlyArray<number>) => {
  const hits: Array<Hit> = []
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      hits.push({ headers: req.headers, raw: Buffer.concat(chunks) })
      res.writeHead(statuses[hits.length - 1] ?? 204).end()
    })
  })
  receivers.push(server)
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  return { hits, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` }
}

/** The check a receiver does: HMAC-SHA256 of `<t>.<raw body>` keyed with the endpoint's secret. */
const signedBy = (hit: Hit, secret: string): boolean => {
  const parts = String(hit.headers["x-service-signature"]).split(",").map((p) => p.split("=") as [string, string])
  const t = parts.find(([k]) => k === "t")?.[1]
  if (t === undefined) return false
  const expected = createHmac("sha256", secret).update(Buffer.concat([Buffer.from(`${t}.`), hit.raw])).digest()
  return parts.filter(([k]) => k === "v1").some(([, v]) => timingSafeEqual(Buffer.from(v, "hex"), expected))
}

const sandbox = (server: RunningFos, path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Reply> =>
  httpCall(server.origin, `/sandbox${path}`, { key: K.sandbox, ...init })

describe.each(runtimes)("fos serve on %s", (runtime) => {
  let server: RunningFos
  beforeAll(async () => {
    server = await startFos(
      ["--store", "memory", "--port", "0", "--clock", "virtual", "--clock-start", new Date(START_MS).toISOString(), "--insecure-webhooks", "--seed", seedPath],
      {},
      runtime
    )
  }, 60_000)

  it("prints both base addresses, and answers on them", async () => {
    expect(server.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(server.stdout()).toContain(`live: ${server.origin}/live`)
    expect((await httpCall(server.origin, "/healthz")).json).toEqual({ status: "ok" })
  })

  it("authenticates: no key and an unknown key are 401 problems, a good key is 200", async () => {
    const me = "/sandbox/v2/portal/users/me"
    expectProblem(await httpCall(server.origin, me), { type: "API_KEY_MISSING", status: 401, instance: me })
    expectProblem(await httpCall(server.origin, me, { key: sandboxKey("rt/unknown") }), { type: "API_KEY_INVALID", status: 401, instance: me })
    const ok = await httpCall(server.origin, me, { key: K.sandbox })
    expect(ok.status).toBe(200)
    expect(ok.json.organization.id).toBe("org_rt")
  })

  it("checks the caller's socket address against the key's allowlist", async () => {
    const url = `${server.origin}/sandbox/v2/portal/users/me`
    expect((await getFrom("127.0.0.2", url, fromSecondLoopback)).status).toBe(200)
    const refused = await getFrom("127.0.0.2", url, fromFirstLoopback)
    expect(refused.status).toBe(403)
    expect(refused.json.type).toBe("API_KEY_IP_NOT_ALLOWED")
    expect((await getFrom("127.0.0.1", url, fromFirstLoopback)).status).toBe(200)
  })

  it("renders errors as problems: a malformed body and a malformed id", async () => {
    expectProblem(await sandbox(server, "/v2/webhooks/endpoints", { body: "{not json" }), {
      type: "MALFORMED_JSON",
      status: 400,
      instance: "/sandbox/v2/webhooks/endpoints"
    })
    expectProblem(await sandbox(server, "/v2/webhooks/endpoints/nope"), {
      type: "INVALID_OID_FORMAT",
      status: 400,
      instance: "/sandbox/v2/webhooks/endpoints/nope"
    })
  })

  it("replays an idempotent create, and lists what exists", async () => {
    // A receiver of its own: the next test's event goes to every endpoint.
    const body = { url: (await startReceiver([])).url }
    const headers = { "idempotency-key": `create-${runtime}` }
    const first = await sandbox(server, "/v2/webhooks/endpoints", { body, headers })
    expect(first.status).toBe(201)
    expect(first.headers.get("idempotency-replayed")).toBeNull()
    const again = await sandbox(server, "/v2/webhooks/endpoints", { body, headers })
    expect(again.status).toBe(201)
    expect(again.headers.get("idempotency-replayed")).toBe("true")
    expect(again.text).toBe(first.text)
    const list = await sandbox(server, "/v2/webhooks/endpoints")
    expect(list.status).toBe(200)
    expect(list.json.data.filter((e: { id: string }) => e.id === first.json.id)).toHaveLength(1)
  })

  it("delivers a signed webhook to a loopback receiver, and retries it when the virtual clock is advanced", async () => {
    const receiver = await startReceiver([500])
    const endpoint = await sandbox(server, "/v2/webhooks/endpoints", { body: { url: receiver.url } })
    expect(endpoint.status).toBe(201)
    const event = await sandbox(server, "/v2/simulate/events", { body: { type: "transaction.completed" } })
    expect(event.status).toBe(201)
    // An emit answers before its receivers; the flush answers once the attempts are recorded.
    expect((await sandbox(server, "/v2/simulate/webhooks/flush", { method: "POST" })).json.complete).toBe(true)
    expect(receiver.hits).toHaveLength(1)
    expect(signedBy(receiver.hits[0]!, endpoint.json.secret)).toBe(true)
    expect(JSON.parse(receiver.hits[0]!.raw.toString()).id).toBe(event.json.id)

    const before = Date.parse((await sandbox(server, "/v2/simulate/clock")).json.now)
    // The first retry is due 30 s after the failed attempt.
    const short = await sandbox(server, "/v2/simulate/clock/advance", { body: { seconds: 29 } })
    expect(Date.parse(short.json.now) - before).toBe(29_000)
    expect(receiver.hits).toHaveLength(1)
    await sandbox(server, "/v2/simulate/clock/advance", { body: { seconds: 1 } })
    await sandbox(server, "/v2/simulate/webhooks/flush", { method: "POST" })
    expect(receiver.hits).toHaveLength(2)
    expect(receiver.hits[1]!.raw.equals(receiver.hits[0]!.raw)).toBe(true)
    expect(signedBy(receiver.hits[1]!, endpoint.json.secret)).toBe(true)
    expect(Date.parse((await sandbox(server, "/v2/simulate/clock")).json.now) - before).toBe(30_000)
    const deliveries = await sandbox(server, `/v2/webhooks/deliveries?endpointId=${endpoint.json.id}`)
    expect(deliveries.json.data).toHaveLength(1)
    expect(deliveries.json.data[0]).toMatchObject({ status: "succeeded", attempts: 2 })
  })

  // The later signals stand for the second one a terminal's Ctrl-C or `npm start` sends, which can land anywhere in
  // the shutdown (docs/decisions.md, "A second stop signal is ignored").
  it("stops on SIGTERM with exit status 0, however many stop signals follow", async () => {
    const exit = await stopUnderRepeatedSignals(server)
    expect(exit).toEqual({ code: 0, signal: null })
    await expect(fetch(`${server.origin}/healthz`)).rejects.toThrow()
  })
})

describe.each(["bun", "deno"] as const)("durable stores on %s", (runtime) => {
  const start = (store: string) =>
    startFos(["--store", store, "--port", "0", "--clock", "virtual", "--seed", seedPath], {}, runtime)
  const endpointUrls = async (server: RunningFos) =>
    ((await sandbox(server, "/v2/webhooks/endpoints")).json.data as Array<{ url: string }>).map((e) => e.url)

  it("keeps its data in a PGlite directory across a stop and a start", async () => {
    const dir = await pgliteDirectoryAt(join(tmp, `pglite-${runtime}`))
    const first = await start(dir)
    const url = `https://hooks.example.com/pglite-${runtime}`
    expect((await sandbox(first, "/v2/webhooks/endpoints", { body: { url } })).status).toBe(201)
    expect(await first.stop("SIGTERM")).toEqual({ code: 0, signal: null })
    const second = await start(dir)
    expect(await endpointUrls(second)).toEqual([url])
    await second.stop("SIGTERM")
  }, 60_000)

  it.skipIf(adminUrl === undefined || adminUrl === "")("serves from PostgreSQL", async () => {
    const database = await freshDatabase(`runtimes_${runtime}`)
    try {
      const server = await start(database.url)
      const url = `https://hooks.example.com/postgres-${runtime}`
      expect((await sandbox(server, "/v2/webhooks/endpoints", { body: { url } })).status).toBe(201)
      expect(await endpointUrls(server)).toEqual([url])
      expect(await server.stop("SIGTERM")).toEqual({ code: 0, signal: null })
    } finally {
      await database.drop()
    }
  }, 60_000)
})

describe("the engine runs on any runtime", () => {
  const coreSrc = join(repoRoot, "packages", "core", "src")
  const files = readdirSync(coreSrc, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"))
  // Comments may name what the code must not use.
  const code = (file: string) => readFileSync(join(coreSrc, file), "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:])\/\/.*$/gm, "$1")

  it("packages/core imports no Node built-in module", () => {
    expect(files.length).toBeGreaterThan(0)
    for (const file of files) {
      const specifiers = [...code(file).matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map((m) => m[1]!)
      expect(specifiers.filter((s) => s.startsWith("node:") || isBuiltin(s)), file).toEqual([])
    }
  })

  it("starts Deno's V8 with the flags npm start gives Node's (deno task serve, and the servers these tests start)", () => {
    expect(v8StartFlags).toContain("--no-allocation-site-pretenuring")
    const task = /"command":\s*"([^"]*)"/.exec(readFileSync(join(repoRoot, "deno.json"), "utf8"))?.[1]
    expect(task).toContain(`--v8-flags=${v8StartFlags.join(",")} `)
    expect(serveCommand("deno").args).toContain(`--v8-flags=${v8StartFlags.join(",")}`)
    expect(serveCommand("node").args.slice(0, v8StartFlags.length)).toEqual(v8StartFlags)
  })

  it("packages/core uses none of Node's, Bun's or Deno's globals", () => {
    for (const file of files) {
      // A global used, not a member of the same name (`ipaddr.process(...)`).
      const globals = code(file).match(/(?<![.\w$])(?:process|Buffer|require|__dirname|__filename|global|setImmediate|Deno|Bun)\b(?=\s*[.([])/g) ?? []
      expect(globals, file).toEqual([])
    }
  })
})
