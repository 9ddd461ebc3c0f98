/**
 * The `fos` command line against a real server process: the operator commands act on the store the server
 * serves, refusals and bad usage exit non-zero, and SIGTERM lets a request in flight finish before exiting.
 */
import { type ChildProcess, spawnSync } from "node:child_process"
import { request } from "node:http"
import { once } from "node:events"
import { resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startFos } from "./fosProcess.ts"

const root = resolve(import.meta.dirname, "..")
const token = "cli-test-operator-token"

const startServer = (args: ReadonlyArray<string> = []) =>
  startFos(["--store", "memory", "--port", "0", ...args], { FOS_OPERATOR_TOKEN: token })

/**
 * `fos` runs the CLI with spawnSync, which blocks this process's event loop: a keep-alive socket the server closes
 * meanwhile (Node's 5-second idle timeout, which a few CLI runs on a loaded machine pass) cannot be noticed before
 * fetch reuses it ("other side closed"). The tests' own requests therefore close their connection.
 */
const closing = { connection: "close" }

const fos = (origin: string, ...args: Array<string>) => {
  const result = spawnSync(process.execPath, ["adapters/node/src/bin.ts", ...args], {
    cwd: root,
    env: { ...process.env, FOS_SERVER: origin, FOS_OPERATOR_TOKEN: token },
    encoding: "utf8"
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

describe("fos operator commands", () => {
  let server: { child: ChildProcess; origin: string }
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => {
    server.child.kill("SIGKILL")
  })

  it("create an organization, a user and a key that the server accepts at once", async () => {
    expect(fos(server.origin, "orgs", "create", "--name", "Acme", "--id", "org_clitest", "--status", "active").code).toBe(0)
    expect(fos(server.origin, "users", "create", "--org", "org_clitest", "--email", "ada@cli.test", "--role", "admin", "--id", "usr_cliada").code).toBe(0)
    const created = fos(server.origin, "keys", "create", "--org", "org_clitest", "--user", "usr_cliada", "--env", "sandbox", "--access", "read_write", "--ip", "127.0.0.0/8", "--ip", "::1/128")
    expect(created.code).toBe(0)
    const key = JSON.parse(created.stdout).key as string
    expect(key).toMatch(/^ck_sandbox_[0-9a-f]{64}$/)
    const me = await fetch(`${server.origin}/sandbox/v2/portal/users/me`, { headers: { ...closing, "x-api-key": key } })
    expect(me.status).toBe(200)
    expect(((await me.json()) as { user: { id: string } }).user.id).toBe("usr_cliada")

    expect(fos(server.origin, "keys", "revoke", key).code).toBe(0)
    const after = await fetch(`${server.origin}/sandbox/v2/portal/users/me`, { headers: { ...closing, "x-api-key": key } })
    expect(((await after.json()) as { type: string }).type).toBe("API_KEY_INVALID")
  })

  it("fos reset empties an organization's sandbox and keeps its keys; an unknown organization is refused", async () => {
    fos(server.origin, "orgs", "create", "--name", "Reset", "--id", "org_clireset", "--status", "active")
    fos(server.origin, "users", "create", "--org", "org_clireset", "--email", "ada@reset.test", "--role", "admin", "--id", "usr_clireset")
    const key = JSON.parse(fos(server.origin, "keys", "create", "--org", "org_clireset", "--user", "usr_clireset", "--env", "sandbox", "--access", "read_write").stdout).key as string
    const headers = { ...closing, "x-api-key": key, "content-type": "application/json" }
    const created = await fetch(`${server.origin}/sandbox/v2/webhooks/endpoints`, { method: "POST", headers, body: JSON.stringify({ url: "https://hooks.reset.test/fos" }) })
    expect(created.status).toBe(201)

    const reset = fos(server.origin, "reset", "org_clireset")
    expect(reset.code, reset.stderr).toBe(0)
    expect(JSON.parse(reset.stdout)).toMatchObject({ organizationId: "org_clireset", environment: "sandbox", removed: { webhookEndpoints: 1 } })
    const list = await fetch(`${server.origin}/sandbox/v2/webhooks/endpoints`, { headers })
    expect(list.status).toBe(200)
    expect(((await list.json()) as { data: Array<unknown> }).data).toEqual([])

    const unknown = fos(server.origin, "reset", "org_nobody")
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain("NOT_FOUND")
    expect(fos(server.origin, "reset").code).toBe(2)
  })

  it("print the problem and exit 1 when the server refuses", () => {
    fos(server.origin, "orgs", "create", "--name", "Beta", "--id", "org_clibeta")
    fos(server.origin, "users", "create", "--org", "org_clibeta", "--email", "dev@cli.test", "--role", "developer", "--id", "usr_clidev")
    const refused = fos(server.origin, "keys", "create", "--org", "org_clibeta", "--user", "usr_clidev", "--env", "sandbox", "--access", "read_write")
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("API_KEY_WRITE_REQUIRES_ADMIN")
  })

  it("exit 2 with a message on bad usage, and refuse a wrong token", () => {
    const bad = fos(server.origin, "keys", "create", "--org", "org_clitest")
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("--user is required")
    const wrong = spawnSync(process.execPath, ["adapters/node/src/bin.ts", "orgs", "list"], {
      cwd: root,
      env: { ...process.env, FOS_SERVER: server.origin, FOS_OPERATOR_TOKEN: "not-the-token" },
      encoding: "utf8"
    })
    expect(wrong.status).toBe(1)
    expect(wrong.stderr).toContain("UNAUTHORIZED")
  })
})

describe("fos serve shutdown", () => {
  it("finishes a request in flight on SIGTERM, then exits", async () => {
    const { child, origin } = await startServer(["--clock", "virtual"])
    const url = new URL(`${origin}/sandbox/v2/simulate/clock/advance`)
    // A request whose body is still arriving when SIGTERM comes.
    const pending = new Promise<{ status: number; body: string }>((ok, fail) => {
      const req = request({ hostname: url.hostname, port: url.port, path: url.pathname, method: "POST", headers: { "content-type": "application/json", "content-length": "14", "x-api-key": "ck_sandbox_" + "0".repeat(64) } }, (res) => {
        let body = ""
        res.on("data", (c: Buffer) => (body += c.toString()))
        res.on("end", () => ok({ status: res.statusCode!, body }))
      })
      req.on("error", fail)
      req.write("{\"seconds\"")
      setTimeout(() => {
        child.kill("SIGTERM")
        setTimeout(() => req.end(": 1}"), 300)
      }, 300)
    })
    const answered = await pending
    // The key is unknown, so the answer is a 401 problem: what matters is that it was answered in full.
    expect(answered.status).toBe(401)
    expect(JSON.parse(answered.body).type).toBe("API_KEY_INVALID")
    const [code] = (await once(child, "exit")) as [number | null]
    expect(code).toBe(0)
  })
})
