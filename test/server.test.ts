/**
 * The real Node server (`fos serve`) over real HTTP: a subset of the contract checks, the CLI's refusals of bad
 * flags and bad seed files, the demo organization, and shutdown on SIGTERM (under keep-alive writes, on Bun and
 * Deno too).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { request } from "node:http"
import { type AddressInfo, connect, createServer as createNetServer, type Socket } from "node:net"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { killAllFos, type RunningFos, startFos, stopUnderRepeatedSignals } from "./fosProcess.ts"
import { followLinks } from "./links.ts"
import { expectProblem, httpCall, type Reply, keysOf, noRateHeaders, orgSeed, rateHeaders, sandboxKey, type Seed, seedOf, START_MS } from "./support.ts"
import { pgliteDirectoryAt } from "../adapters/sql/test/pgliteDirectory.ts"

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const bin = [path.join(repoRoot, "adapters/node/bin/fos.js")]
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
const runCli = (args: ReadonlyArray<string>, cwd = repoRoot): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...bin, ...args], { cwd, env: env(), stdio: ["ignore", "pipe", "pipe"] })
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

  it("one path is the route's exact text: matrix parameters, other case, extra slashes and encoded slashes are 404", async () => {
    for (const path of [`${me};jsessionid=1`, "/sandbox/V2/PORTAL/USERS/ME", `${me}/`, "/sandbox/v2//portal/users/me", "/sandbox/v2/customers/cus_x%2Fy", "/sandbox/v2/%70ortal/users/me"]) {
      const r = await httpCall(server.origin, path, { key: S.sandbox })
      expectProblem(r, { type: "NOT_FOUND", status: 404, instance: path })
      rateHeaders(r)
    }
    expectProblem(await httpCall(server.origin, "/SANDBOX/v2/portal/users/me"), { type: "NOT_FOUND", status: 404, instance: "/SANDBOX/v2/portal/users/me" })
    // Dot segments, which fetch would resolve before sending, over a raw connection.
    for (const path of ["/sandbox/v2/portal/users/../users/me", "/sandbox/v2/portal/./users/me", "/sandbox/v2/customers/..", "/sandbox/v2/customers/%2e%2e"]) {
      const answers = parseAnswers(await rawExchange(server.origin, `GET ${path} HTTP/1.1\r\nHost: x\r\nx-api-key: ${S.sandbox}\r\nConnection: close\r\n\r\n`))
      expect(answers, path).toHaveLength(1)
      expectProblem(answers[0]!, { type: "NOT_FOUND", status: 404, instance: path })
    }
    expect((await httpCall(server.origin, me, { key: S.sandbox })).status).toBe(200)
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

  it("rate limits and problem timestamps run on the server's virtual clocks", async () => {
    const clock = async () => (await httpCall(server.origin, "/sandbox/v2/simulate/clock", { key: S.sandbox })).json.now as string
    const slow = sandboxKey("srvslow")
    const statuses: Array<number> = []
    for (let i = 0; i < 3; i++) statuses.push((await httpCall(server.origin, "/sandbox/v2/customers", { key: slow })).status)
    expect(statuses).toEqual([200, 200, 429])
    const advanced = await httpCall(server.origin, "/sandbox/v2/simulate/clock/advance", { method: "POST", key: S.sandbox, body: { seconds: 3600 } })
    expect(advanced.status).toBe(200)
    const now = await clock()
    expect(now).not.toBe(startIso)
    // A problem of a caller carries its sandbox's time; one rendered before any caller is known (an unknown route)
    // carries the engine's root clock, which the advance of one organization did not move (docs/clock.md).
    expect((await httpCall(server.origin, "/sandbox/v2/customers/cus_missing", { key: S.sandbox })).json.timestamp).toBe(now)
    const edge = await httpCall(server.origin, "/nowhere")
    expect(edge.json.timestamp).toBe(startIso)
    const refill = await httpCall(server.origin, "/sandbox/v2/customers", { key: slow })
    expect(refill.status).toBe(200)
    expect(refill.headers.get("x-ratelimit-remaining")).toBe("1")
    const gate = await httpCall(server.origin, "/sandbox/v2/customers/cus_missing", { key: slow })
    expect(gate.json.timestamp).toBe(startIso)
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

describe("fos serve --base-path /fos", () => {
  const operatorToken = "base-path-server-operator-token"
  let server: Running
  let origin = ""
  beforeAll(async () => {
    server = await startServer(["--port", "0", "--base-path", "/fos/", "--seed", writeSeed("base-path.json", seed), "--operator-token", operatorToken])
    origin = new URL(server.origin).origin
  })
  afterAll(() => {
    server?.child.kill("SIGKILL")
  })

  it("prints the base addresses and the inspector under /fos", () => {
    expect(server.origin).toBe(`${origin}/fos`)
    expect(server.stdout()).toMatch(/^inspector: http:\/\/127\.0\.0\.1:\d+\/fos\/inspect$/m)
    expect(server.stdout()).toMatch(/^sandbox: http:\/\/127\.0\.0\.1:\d+\/fos\/sandbox$/m)
    expect(server.stdout()).toMatch(/^live: http:\/\/127\.0\.0\.1:\d+\/fos\/live$/m)
  })

  it("every link it hands out resolves under /fos, the reference page and its documents included", async () => {
    expect(await followLinks({ origin, base: "/fos", sandboxKey: S.sandbox, liveKey: S.live, operatorToken, docsPage: true })).toEqual([])
  })

  it("serves nothing outside /fos, and a problem below the application has its docs under /fos too", async () => {
    const outside = await httpCall(origin, "/sandbox/v2/portal/users/me", { headers: { "x-api-key": S.sandbox } })
    expect([outside.status, outside.json.type, outside.json.instance, outside.json.docs]).toEqual([404, "NOT_FOUND", "/sandbox/v2/portal/users/me", `${origin}/fos/docs/errors#not_found`])
    expect(outside.json.detail).toBe("No such route. Base addresses are /fos/sandbox and /fos/live.")
    expect((await httpCall(origin, "/healthz")).status).toBe(404)
    const [bare] = parseAnswers(await rawExchange(origin, "GET /fos/healthz HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n"))
    expect(bare!.json.docs).toBe("http://x/fos/docs/errors#bad_request")
  })

  it("a bad --base-path: exit 2 naming the flag", async () => {
    const r = await runCli(["serve", "--store", "memory", "--port", "0", "--base-path", "fos"])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/--base-path: "fos" is not a path such as \/fos/)
  })
})

/** The answers read from one raw connection, parsed as HTTP/1.1 (Content-Length or chunked bodies). */
const parseAnswers = (bytes: Buffer): Array<Reply & { readonly raw: string }> => {
  const answers: Array<Reply & { readonly raw: string }> = []
  let rest = bytes
  while (rest.length > 0) {
    const end = rest.indexOf("\r\n\r\n")
    if (end < 0) break
    const head = rest.subarray(0, end).toString("latin1").split("\r\n")
    const status = Number(head[0]!.split(" ")[1])
    const headers = new Headers()
    for (const line of head.slice(1)) headers.append(line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 1).trim())
    let body = rest.subarray(end + 4)
    let text: string
    if (headers.get("transfer-encoding") === "chunked") {
      const chunks: Array<Buffer> = []
      for (;;) {
        const lineEnd = body.indexOf("\r\n")
        const size = parseInt(body.subarray(0, lineEnd).toString("latin1"), 16)
        if (size === 0) {
          body = body.subarray(lineEnd + 4)
          break
        }
        chunks.push(body.subarray(lineEnd + 2, lineEnd + 2 + size))
        body = body.subarray(lineEnd + 2 + size + 2)
      }
      text = Buffer.concat(chunks).toString("utf8")
      rest = body
    } else {
      const length = Number(headers.get("content-length") ?? 0)
      text = body.subarray(0, length).toString("utf8")
      rest = body.subarray(length)
    }
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    answers.push({ status, headers, text, json, raw: head.join("\n") + "\n\n" + text })
  }
  return answers
}

/** Opens a raw connection to `origin`. */
const rawSocket = (origin: string): Promise<Socket> =>
  new Promise((ok, fail) => {
    const url = new URL(origin)
    const socket = connect(Number(url.port), url.hostname, () => ok(socket))
    socket.once("error", fail)
  })

/** Sends `data` on a new connection and reads until the server closes it. */
const rawExchange = async (origin: string, data: string | Buffer): Promise<Buffer> => {
  const socket = await rawSocket(origin)
  return new Promise((ok) => {
    const chunks: Array<Buffer> = []
    socket.on("data", (c: Buffer) => chunks.push(c))
    // A reset after the answer (the server closes while the client still writes) still leaves the answer read.
    socket.on("error", () => {})
    socket.on("close", () => ok(Buffer.concat(chunks)))
    socket.write(data)
  })
}

describe("answers below the application (Node's HTTP parser) are problems", () => {
  let server: Running
  beforeAll(async () => {
    server = await startServer(["--port", "0", "--seed", writeSeed("raw.json", seed)])
  })
  afterAll(() => {
    server?.child.kill("SIGKILL")
  })

  const cases: ReadonlyArray<readonly [string, string | Buffer]> = [
    ["an unknown method", "FROB /healthz HTTP/1.1\r\nHost: x\r\n\r\n"],
    ["raw non-ASCII bytes in the path", Buffer.concat([Buffer.from("GET /sandbox/v2/caf"), Buffer.from([0xc3, 0xa9]), Buffer.from(" HTTP/1.1\r\nHost: x\r\n\r\n")])],
    ["a malformed header", "GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n"],
    ["both Content-Length and Transfer-Encoding", "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"],
    ["a 70 KB request line", `GET /${"a".repeat(70 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`],
    ["headers larger than Node's limit", `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"b".repeat(20 * 1024)}\r\n\r\n`],
    ["an Expect other than 100-continue", "GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n"],
    ["CONNECT", "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"],
    ["not HTTP at all", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n"]
  ]

  for (const [what, data] of cases) {
    it(`${what}: a BAD_REQUEST problem with a correlation id, and the connection closed`, async () => {
      const answers = parseAnswers(await rawExchange(server.origin, data))
      expect(answers, "one answer").toHaveLength(1)
      const answer = answers[0]!
      expectProblem(answer, { type: "BAD_REQUEST", status: 400, instance: answer.json?.instance ?? "?" })
      expect(answer.json.instance).toMatch(/^\//)
      expect(answer.headers.get("connection")).toBe("close")
      expect(answer.json.detail, answer.raw).not.toMatch(/HPE_|Parse Error/)
    })
  }

  it("a request line with a readable path names it as the instance", async () => {
    const [answer] = parseAnswers(await rawExchange(server.origin, "GET /sandbox/v2/customers?x=1 HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n"))
    expectProblem(answer!, { type: "BAD_REQUEST", status: 400, instance: "/sandbox/v2/customers" })
  })

  it("a 413 on a chunked body over a keep-alive connection says Connection: close, then closes it", async () => {
    const p = "/sandbox/v2/simulate/clock/advance"
    const socket = await rawSocket(server.origin)
    const chunks: Array<Buffer> = []
    socket.on("data", (c: Buffer) => chunks.push(c))
    socket.on("error", () => {})
    const closed = new Promise((ok) => socket.on("close", ok))
    socket.write(`POST ${p} HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nContent-Type: application/json\r\nx-api-key: ${S.sandbox}\r\nTransfer-Encoding: chunked\r\n\r\n`)
    const piece = "x".repeat(64 * 1024)
    const chunk = `${piece.length.toString(16)}\r\n${piece}\r\n`
    // More than the 1 MiB limit, sent as long as the server reads; then the body's end.
    for (let i = 0; i < 20 && !socket.destroyed; i++) await new Promise<void>((ok) => socket.write(chunk, () => ok()))
    if (!socket.destroyed) socket.write("0\r\n\r\n")
    await closed
    const answers = parseAnswers(Buffer.concat(chunks))
    expect(answers).toHaveLength(1)
    expectProblem(answers[0]!, { type: "PAYLOAD_TOO_LARGE", status: 413, instance: p })
    // A client that pools the connection is told it will not be reused.
    expect(answers[0]!.headers.get("connection")).toBe("close")
  })

  it("a 413 on a declared Content-Length says Connection: close too", async () => {
    const p = "/sandbox/v2/simulate/clock/advance"
    const answers = parseAnswers(await rawExchange(
      server.origin,
      `POST ${p} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-api-key: ${S.sandbox}\r\nContent-Length: ${2 * 1024 * 1024}\r\n\r\n{`
    ))
    expect(answers).toHaveLength(1)
    expectProblem(answers[0]!, { type: "PAYLOAD_TOO_LARGE", status: 413, instance: p })
    expect(answers[0]!.headers.get("connection")).toBe("close")
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

describe("fos serve's manners", () => {
  const version = (JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { version: string }).version

  it("a port that is taken: one line naming the port, exit 1, and the store is not touched", async () => {
    const taken = createNetServer()
    await new Promise<void>((ok) => taken.listen(0, "127.0.0.1", ok))
    const port = (taken.address() as AddressInfo).port
    try {
      const store = path.join(tmp, "taken-port-store")
      const r = await runCli(["serve", "--port", String(port), "--store", store])
      expect(r.code).toBe(1)
      expect(r.stderr.trim().split("\n"), r.stderr).toHaveLength(1)
      expect(r.stderr).toContain(String(port))
      expect(r.stdout).not.toContain("demo organization")
      expect(r.stdout).not.toContain("key")
      expect(existsSync(store)).toBe(false)
    } finally {
      await new Promise((ok) => taken.close(ok))
    }
  })

  it("--store with a URL scheme other than postgres: exit 2 naming the scheme, nothing written", async () => {
    // In a directory of its own: the repository's root is shared with other test files, which make directories there.
    const cwd = mkdtempSync(path.join(tmpdir(), "fos-bad-store-"))
    for (const url of ["mysql://localhost/db", "sqlite:///tmp/x.db", "http://127.0.0.1:5432/db"]) {
      const r = await runCli(["serve", "--port", "0", "--store", url], cwd)
      expect(r.code, url).toBe(2)
      expect(r.stderr).toContain("--store")
      expect(r.stderr).toContain(url.slice(0, url.indexOf(":")))
      expect(r.stdout).toBe("")
    }
    expect(readdirSync(cwd)).toEqual([])
    rmSync(cwd, { recursive: true, force: true })
  })

  it("--help prints the usage and --version the package's version, each exiting 0, for fos and fos serve", async () => {
    for (const args of [["--help"], ["serve", "--help"], ["serve", "--store", "memory", "--help"]]) {
      const r = await runCli(args)
      expect(r.code, args.join(" ")).toBe(0)
      expect(r.stdout).toContain("usage: fos serve")
      expect(r.stdout).toContain("--store")
      expect(r.stderr).toBe("")
    }
    for (const args of [["--version"], ["serve", "--version"]]) {
      const r = await runCli(args)
      expect(r.code, args.join(" ")).toBe(0)
      expect(r.stdout.trim()).toBe(`fos ${version}`)
    }
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

  it("SIGTERM sent to npm start's own process stops the server and releases its store", async () => {
    // A copy of an initdb'd cluster: this test is about the stop, not the first start (cli.test.ts has that).
    const store = await pgliteDirectoryAt(mkdtempSync(path.join(tmp, "npm-start-")))
    // As the README starts it, with the flags after npm's `--`.
    const npm = spawn("npm", ["start", "--", "--port", "0", "--store", store], { cwd: repoRoot, env: env(), stdio: ["ignore", "pipe", "pipe"] })
    children.add(npm)
    const leftovers = () => {
      try {
        return execFileSync("pgrep", ["-f", "--", `--store ${store}`], { encoding: "utf8" }).trim().split("\n").filter((pid) => pid !== "").map(Number)
      } catch {
        return []
      }
    }
    try {
      let out = ""
      const origin = await new Promise<string>((ok, fail) => {
        npm.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
          out += chunk
          const m = /^sandbox: (http:\/\/\S+)\/sandbox\s*$/m.exec(out)
          if (m !== null) ok(m[1]!)
        })
        npm.on("exit", (code) => fail(new Error(`npm start exited (${code}) before listening: ${out}`)))
      })
      expect((await httpCall(origin, "/healthz")).status).toBe(200)
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((ok) => npm.on("exit", (code, signal) => ok({ code, signal })))
      npm.kill("SIGTERM")
      const exit = await exited
      expect(exit.code).toBe(0)
      // npm waited for the server, so nothing of it is left: no process, no listener, and the store opens again.
      expect(leftovers()).toEqual([])
      await expect(fetch(`${origin}/healthz`)).rejects.toThrow()
      const again = await startFos(["--port", "0", "--store", store])
      expect((await httpCall(again.origin, "/healthz")).status).toBe(200)
      expect((await again.stop()).code).toBe(0)
    } finally {
      for (const pid of leftovers()) process.kill(pid, "SIGKILL")
    }
  }, 60_000)

  it("SIGTERM stops the server with exit code 0", async () => {
    const server = await startServer(["--port", "0", "--clock", "virtual", "--seed", writeSeed("term.json", seed)])
    expect((await httpCall(server.origin, "/healthz")).status).toBe(200)
    server.child.kill("SIGTERM")
    const exit = await server.exited
    expect(exit.signal).toBeNull()
    expect(exit.code).toBe(0)
    await expect(fetch(`${server.origin}/healthz`)).rejects.toThrow()
  })

  // Node's `close` waits for every connection that is not idle at that moment; a keep-alive client that sends its next
  // request at once never lets its connection be idle, and the stop used to wait out the whole graceful shutdown (20
  // s): `podman stop -t 5` then killed the container (docs/container.md, "The image", its Stop row). Bun's `stop` and
  // Deno's `shutdown` end such a connection themselves, with no `Connection: close` on the 503s before; the same case
  // guards them.
  it.each(["node", "bun", "deno"] as const)("stops on SIGTERM within 5 s on %s while writes keep arriving on keep-alive connections, refusing each with 503, with every 201 kept", async (runtime) => {
    const store = await pgliteDirectoryAt(mkdtempSync(path.join(tmp, `stop-${runtime}-`)))
    const first = await startFos(["--port", "0", "--store", store, "--clock", "virtual"], {}, runtime)
    const exported = /^ {2}for the quick start: export (.+)$/m.exec(first.stdout())![1]!
    const { FOS_API_KEY: key, ACCOUNT: account } = Object.fromEntries(exported.split(" ").map((pair) => pair.split("=") as [string, string]))
    const headers = { "x-api-key": key!, "content-type": "application/json" }
    const deposit = (i: number) => JSON.stringify({ destination: { type: "virtual_account", virtualAccountId: account }, assetAmount: { code: "USD", amount: `${i + 1}.00` }, rail: "rtp" })
    const url = new URL(`${first.origin}/sandbox/v2/simulate/deposits`)
    // A deposit whose body is still arriving when the signal comes holds the stop open a while, so that the writer
    // below is answered during it.
    const body = deposit(0)
    const held = request({ hostname: url.hostname, port: url.port, path: url.pathname, method: "POST", agent: false, headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } })
    const heldAnswer = new Promise<{ status: number; id?: string }>((ok, fail) => {
      held.on("response", (res) => {
        let text = ""
        res.setEncoding("utf8").on("data", (c: string) => (text += c)).on("end", () => ok({ status: res.statusCode!, id: res.statusCode === 201 ? JSON.parse(text).id : undefined }))
      })
      held.on("error", fail)
    })
    held.write(body.slice(0, 10))
    const acknowledged: Array<string> = []
    const afterSignal: Array<{ status: number; connection: string | null }> = []
    let signalled = false
    let writing = true
    const writer = (async () => {
      for (let i = 1; writing; i++) {
        const response = await fetch(url, { method: "POST", headers, body: deposit(i) }).catch(() => undefined)
        if (response === undefined) {
          await new Promise((r) => setTimeout(r, 5))
          continue
        }
        if (signalled) afterSignal.push({ status: response.status, connection: response.headers.get("connection") })
        if (response.status === 201) acknowledged.push((await response.json()).id)
        else await response.arrayBuffer()
      }
    })()
    while (acknowledged.length < 5) await new Promise((r) => setTimeout(r, 20))
    const sent = performance.now()
    signalled = true
    first.child.kill("SIGTERM")
    while (afterSignal.filter((a) => a.status === 503).length < 3 && performance.now() - sent < 3_000) await new Promise((r) => setTimeout(r, 10))
    held.end(body.slice(10))
    const exit = await first.exited
    const stoppedMs = performance.now() - sent
    writing = false
    await writer
    expect(exit).toEqual({ code: 0, signal: null })
    expect(stoppedMs).toBeLessThan(5_000)
    // The writer was refused during the stop; on Node, each refusal ended its connection.
    const refused = afterSignal.filter((a) => a.status !== 201)
    expect(refused.length).toBeGreaterThan(0)
    expect(refused).toEqual(refused.map((a) => ({ status: 503, connection: runtime === "node" ? "close" : a.connection })))
    const last = await heldAnswer
    if (last.id !== undefined) acknowledged.push(last.id)

    const second = await startFos(["--port", "0", "--store", store, "--clock", "virtual"], {}, runtime)
    for (const id of acknowledged) expect((await httpCall(second.origin, `/sandbox/v2/transactions/${id}`, { key: key! })).status, id).toBe(200)
    expect((await second.stop()).code).toBe(0)
  }, 60_000)

  // A terminal's Ctrl-C, or `npm start` passing on the signal its process group got, reaches the server twice or
  // more; the later ones can land while the process is exiting, after the runtime has removed its own handlers.
  it("stop signals repeated until the server has exited still end in exit code 0", async () => {
    const server = await startServer(["--port", "0"])
    expect(await stopUnderRepeatedSignals(server)).toEqual({ code: 0, signal: null })
  })
})
