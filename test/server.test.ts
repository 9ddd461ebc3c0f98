/**
 * The real Node server (`fos serve`) over real HTTP: a subset of the contract checks, the CLI's refusals of bad
 * flags and bad seed files, the demo organization, and shutdown on SIGTERM.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { killAllFos, type RunningFos, startFos } from "./fosProcess.ts"
import { expectProblem, httpCall, keysOf, noRateHeaders, orgSeed, rateHeaders, sandboxKey, type Seed, seedOf, START_MS } from "./support.ts"

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const bin = ["adapters/node/src/bin.ts"]
const tmp = mkdtempSync(path.join(tmpdir(), "fos-server-test-"))
const children = new Set<ChildProcess>()

const writeSeed = (name: string, content: unknown): string => {
  const file = path.join(tmp, name)
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content, null, 2))
  return file
}

const env = () => {
  const e: NodeJS.ProcessEnv = { ...process.env }
  delete e.PORT
  return e
}

type Running = RunningFos

/** Spawns `fos serve` on the memory store with `args`; resolves once it prints its base addresses. */
const startServer = (args: ReadonlyArray<string>): Promise<Running> => startFos(["--store", "memory", ...args])

/** Runs the CLI to its exit. */
const runCli = (args: ReadonlyArray<string>): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...bin, ...args], { cwd: repoRoot, env: env(), stdio: ["ignore", "pipe", "pipe"] })
    children.add(child)
    let stdout = ""
    let stderr = ""
    child.stdout!.setEncoding("utf8").on("data", (c: string) => (stdout += c))
    child.stderr!.setEncoding("utf8").on("data", (c: string) => (stderr += c))
    child.on("error", reject)
    child.on("exit", (code) => {
      children.delete(child)
      resolve({ code, stdout, stderr })
    })
  })

afterAll(() => {
  for (const child of children) child.kill("SIGKILL")
  killAllFos()
  rmSync(tmp, { recursive: true, force: true })
})

// ---------------------------------------------------------------------------------------------------------------

const S = keysOf("srv")
const seed: Seed = seedOf(
  orgSeed("srv", {
    keys: [
      { key: S.sandbox, access: "read_write" },
      { key: S.live, access: "read_write" },
      { key: sandboxKey("srv/loopback"), access: "read_only", ipAllowlist: ["127.0.0.0/8", "::1/128"] },
      { key: sandboxKey("srv/ten"), access: "read_only", ipAllowlist: ["10.0.0.0/8"] }
    ]
  }),
  orgSeed("srvslow", { rateLimit: { sustainedPerSecond: 1, burst: 2 }, keys: [{ key: sandboxKey("srvslow"), access: "read_only" }] })
)
const startIso = new Date(START_MS).toISOString()

describe("fos serve over HTTP", () => {
  let server: Running
  beforeAll(async () => {
    server = await startServer(["--port", "0", "--clock", "virtual", "--clock-start", startIso, "--seed", writeSeed("seed.json", seed)])
  })
  afterAll(() => {
    server?.child.kill("SIGKILL")
  })

  const me = "/sandbox/v2/portal/users/me"

  it("prints one base address per environment", () => {
    expect(server.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(server.stdout()).toMatch(/^live: http:\/\/127\.0\.0\.1:\d+\/live\s*$/m)
    // The seed's keys are never printed.
    expect(server.stdout()).not.toContain(S.sandbox)
  })

  it("GET /healthz is 200 with a correlation id", async () => {
    const r = await httpCall(server.origin, "/healthz")
    expect(r.status).toBe(200)
    expect(r.headers.get("x-correlation-id")).toBeTruthy()
  })

  it("no key: a 401 API_KEY_MISSING problem with the full shape and no rate-limit headers", async () => {
    const r = await httpCall(server.origin, me)
    // Nothing has advanced the clock yet: the problem is stamped with --clock-start.
    expectProblem(r, { type: "API_KEY_MISSING", status: 401, instance: me, nowMs: START_MS })
    noRateHeaders(r)
  })

  it("an authenticated GET /v2/portal/users/me", async () => {
    const r = await httpCall(server.origin, me, { key: S.sandbox })
    expect(r.status).toBe(200)
    expect(r.json.organization.id).toBe("org_srv")
    expect(r.json.apiKey).toEqual({ access: "read_write", environment: "sandbox", last4: S.sandbox.slice(-4) })
    expect(rateHeaders(r).limit).toBe(400)
    expect(rateHeaders(await httpCall(server.origin, "/live/v2/portal/users/me", { key: S.live })).limit).toBe(100)
  })

  it("echoes x-client-correlation-id", async () => {
    const r = await httpCall(server.origin, me, { key: S.sandbox, headers: { "x-client-correlation-id": "srv-trace-1" } })
    expect(r.headers.get("x-client-correlation-id")).toBe("srv-trace-1")
    const e = await httpCall(server.origin, me, { headers: { "x-client-correlation-id": "srv-trace-2" } })
    expect(e.headers.get("x-client-correlation-id")).toBe("srv-trace-2")
  })

  it("INVALID_OID_FORMAT with the path as instance, query stripped", async () => {
    const r = await httpCall(server.origin, "/sandbox/v2/customers/org_abc?x=1", { key: S.sandbox })
    expectProblem(r, { type: "INVALID_OID_FORMAT", status: 400, instance: "/sandbox/v2/customers/org_abc" })
  })

  it("an unknown route is 401 without a key and 404 NOT_FOUND with one; outside the bases it is 404", async () => {
    expectProblem(await httpCall(server.origin, "/sandbox/v2/nowhere"), { type: "API_KEY_MISSING", status: 401, instance: "/sandbox/v2/nowhere" })
    expectProblem(await httpCall(server.origin, "/sandbox/v2/nowhere", { key: S.sandbox }), {
      type: "NOT_FOUND",
      status: 404,
      instance: "/sandbox/v2/nowhere"
    })
    expectProblem(await httpCall(server.origin, "/v2/customers", { key: S.sandbox }), { type: "NOT_FOUND", status: 404, instance: "/v2/customers" })
  })

  it("the caller's socket address is checked against the key's allowlist", async () => {
    expect((await httpCall(server.origin, me, { key: sandboxKey("srv/loopback") })).status).toBe(200)
    expectProblem(await httpCall(server.origin, me, { key: sandboxKey("srv/ten") }), { type: "API_KEY_IP_NOT_ALLOWED", status: 403, instance: me })
  })

  it("request bodies: MALFORMED_JSON, UNSUPPORTED_MEDIA_TYPE, PAYLOAD_TOO_LARGE", async () => {
    const p = "/sandbox/v2/simulate/clock/advance"
    expectProblem(await httpCall(server.origin, p, { method: "POST", key: S.sandbox, body: "{" }), { type: "MALFORMED_JSON", status: 400, instance: p })
    expectProblem(await httpCall(server.origin, p, { method: "POST", key: S.sandbox, body: "{", noContentType: true }), {
      type: "MALFORMED_JSON",
      status: 400,
      instance: p
    })
    expectProblem(await httpCall(server.origin, p, { method: "POST", key: S.sandbox, body: "{}", headers: { "content-type": "text/plain" } }), {
      type: "UNSUPPORTED_MEDIA_TYPE",
      status: 415,
      instance: p
    })
    const big = JSON.stringify({ seconds: 1, pad: "x".repeat(1024 * 1024) })
    expectProblem(await httpCall(server.origin, p, { method: "POST", key: S.sandbox, body: big }), { type: "PAYLOAD_TOO_LARGE", status: 413, instance: p })
  })

  it("an idempotent clock advance replays byte for byte and moves the clock once", async () => {
    const clock = async () => (await httpCall(server.origin, "/sandbox/v2/simulate/clock", { key: S.sandbox })).json.now as string
    const before = Date.parse(await clock())
    const send = () =>
      httpCall(server.origin, "/sandbox/v2/simulate/clock/advance", {
        method: "POST",
        key: S.sandbox,
        body: { seconds: 90 },
        headers: { "idempotency-key": "srv-idem-1" }
      })
    const first = await send()
    expect(first.status).toBe(200)
    expect(first.json.now).toBe(new Date(before + 90_000).toISOString())
    expect(first.headers.get("idempotency-replayed")).toBeNull()
    const second = await send()
    expect(second.status).toBe(200)
    expect(second.text).toBe(first.text)
    expect(second.headers.get("idempotency-replayed")).toBe("true")
    expect(await clock()).toBe(new Date(before + 90_000).toISOString())
  })

  it("rate limits and problem timestamps run on the server's virtual clock", async () => {
    const clock = async () => (await httpCall(server.origin, "/sandbox/v2/simulate/clock", { key: S.sandbox })).json.now as string
    const slow = sandboxKey("srvslow")
    const statuses: Array<number> = []
    for (let i = 0; i < 3; i++) statuses.push((await httpCall(server.origin, "/sandbox/v2/customers", { key: slow })).status)
    expect(statuses).toEqual([200, 200, 429])
    const advanced = await httpCall(server.origin, "/sandbox/v2/simulate/clock/advance", { method: "POST", key: S.sandbox, body: { seconds: 3600 } })
    expect(advanced.status).toBe(200)
    const now = await clock()
    // A problem rendered by the edge (unknown route) and one by the gate both carry the virtual time.
    const edge = await httpCall(server.origin, "/nowhere")
    expect(edge.json.timestamp).toBe(now)
    const refill = await httpCall(server.origin, "/sandbox/v2/customers", { key: slow })
    expect(refill.status).toBe(200)
    expect(refill.headers.get("x-ratelimit-remaining")).toBe("1")
    const gate = await httpCall(server.origin, "/sandbox/v2/customers/cus_missing", { key: slow })
    expect(gate.json.timestamp).toBe(now)
  })

  it("under --clock virtual, a client that spent its burst is served again after a second of real time", async () => {
    const slow = sandboxKey("srvslow")
    const status = async (key?: string) => (await httpCall(server.origin, "/sandbox/v2/customers", key === undefined ? {} : { key })).status
    const statuses: Array<number> = []
    for (let i = 0; i < 100 && statuses.at(-1) !== 429; i++) statuses.push(await status(slow))
    expect(statuses.at(-1)).toBe(429)
    const keyless: Array<number> = []
    for (let i = 0; i < 100 && keyless.at(-1) !== 429; i++) keyless.push(await status())
    expect(keyless.at(-1)).toBe(429)
    // Nobody advances the virtual clock: real time alone refills the buckets.
    await new Promise((resolve) => setTimeout(resolve, 1100))
    expect(await status(slow)).toBe(200)
    expect(await status()).toBe(401)
  })
})

describe("fos serve refuses bad input", () => {
  it("an unknown flag: non-zero exit naming the flag", async () => {
    const r = await runCli(["serve", "--store", "memory", "--bogus-flag"])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain("--bogus-flag")
    expect(r.stdout).not.toMatch(/sandbox: http/)
  })

  it("a bad --clock value: non-zero exit naming --clock", async () => {
    const r = await runCli(["serve", "--store", "memory", "--port", "0", "--clock", "sometimes"])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain("--clock")
  })

  it("a bad --port: non-zero exit naming --port", async () => {
    const r = await runCli(["serve", "--store", "memory", "--port", "seventy"])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain("--port")
  })

  it("a seed file that does not exist: non-zero exit naming the file", async () => {
    const missing = path.join(tmp, "no-such-seed.json")
    const r = await runCli(["serve", "--store", "memory", "--port", "0", "--seed", missing])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain(missing)
  })

  it("a seed file that is not JSON: non-zero exit naming the file and the problem", async () => {
    const file = writeSeed("broken.json", "{ organizations: [")
    const r = await runCli(["serve", "--store", "memory", "--port", "0", "--seed", file])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain(file)
    expect(r.stderr).toMatch(/JSON/)
    expect(r.stdout).not.toMatch(/sandbox: http/)
  })

  it("a seed file of the wrong shape: non-zero exit naming the offending field", async () => {
    const bad = seedOf(orgSeed("x"))
    ;(bad.organizations[0] as unknown as Record<string, unknown>).status = "dormant"
    const file = writeSeed("wrong-shape.json", bad)
    const r = await runCli(["serve", "--store", "memory", "--port", "0", "--seed", file])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain("/organizations/0/status")
  })

  it("a seed file with a malformed API key: non-zero exit naming the key's place", async () => {
    const file = writeSeed("bad-key.json", seedOf(orgSeed("y", { keys: [{ key: "ck_sandbox_not-hex", access: "read_write" }] })))
    const r = await runCli(["serve", "--store", "memory", "--port", "0", "--seed", file])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain("/organizations/0/apiKeys/0")
    expect(r.stdout).not.toMatch(/sandbox: http/)
  })

  it("a seed file whose key names an unknown creator: non-zero exit", async () => {
    const file = writeSeed("bad-creator.json", seedOf(orgSeed("z", { keys: [{ key: sandboxKey("z"), createdBy: "usr_ghost" }] })))
    const r = await runCli(["serve", "--store", "memory", "--port", "0", "--seed", file])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toMatch(/usr_ghost|apiKeys\/0/)
  })
})

describe("fos serve lifecycle", () => {
  it("without --seed, a first start creates a demo organization and prints working keys once", async () => {
    const server = await startServer(["--port", "0", "--clock", "virtual"])
    try {
      const sandbox = /sandbox key:\s*(ck_sandbox_[0-9a-f]{64})/.exec(server.stdout())
      const live = /live key:\s*(ck_live_[0-9a-f]{64})/.exec(server.stdout())
      expect(sandbox, server.stdout()).not.toBeNull()
      expect(live, server.stdout()).not.toBeNull()
      const r = await httpCall(server.origin, "/sandbox/v2/portal/users/me", { key: sandbox![1]! })
      expect(r.status).toBe(200)
      expect(r.json.apiKey.access).toBe("read_write")
      expect((await httpCall(server.origin, "/live/v2/portal/users/me", { key: live![1]! })).status).toBe(200)
    } finally {
      server.child.kill("SIGKILL")
    }
  })

  it("SIGTERM stops the server with exit code 0", async () => {
    const server = await startServer(["--port", "0", "--clock", "virtual", "--seed", writeSeed("term.json", seed)])
    expect((await httpCall(server.origin, "/healthz")).status).toBe(200)
    server.child.kill("SIGTERM")
    const exit = await server.exited
    expect(exit.signal).toBeNull()
    expect(exit.code).toBe(0)
    await expect(fetch(`${server.origin}/healthz`)).rejects.toThrow()
  })
})
