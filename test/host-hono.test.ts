/**
 * A Hono host on Bun embeds fos at `/fos` beside its own routes and names its users' callers (test/hosts/hono.ts):
 * two tenants kept apart, a read-only caller refused on writes, no key anywhere, and every link fos hands out
 * resolves under `/fos`. The node:http host of test/host-identity.test.ts checks the rest of the caller's rules.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { createInterface } from "node:readline"
import { resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { repoRoot, sourceConditionFlag } from "./fosProcess.ts"
import { followLinks } from "./links.ts"

interface Host {
  readonly origin: string
  readonly operatorToken: string
  readonly acme: string
  readonly globex: string
}

describe("a Hono host on Bun", () => {
  let child: ChildProcess
  let host: Host
  const send = async (method: string, path: string, user: string | undefined, body?: unknown) => {
    const response = await fetch(`${host.origin}${path}`, {
      method,
      headers: { ...(user === undefined ? {} : { "x-host-user": user }), ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    return { status: response.status, json: text.startsWith("{") ? JSON.parse(text) : text }
  }

  beforeAll(async () => {
    child = spawn(resolve(repoRoot, "node_modules/.bin/bun"), [sourceConditionFlag, "test/hosts/hono.ts"], { cwd: repoRoot, stdio: ["ignore", "pipe", "inherit"] })
    const lines = createInterface({ input: child.stdout! })
    const [first] = (await Promise.race([once(lines, "line"), once(child, "exit").then(() => { throw new Error("the Hono host exited before it listened") })])) as [string]
    host = JSON.parse(first) as Host
  })
  afterAll(() => {
    child?.kill("SIGKILL")
  })

  it("serves its own routes beside fos's, and its own 404 outside /fos", async () => {
    expect(await send("GET", "/hello", undefined)).toEqual({ status: 200, json: "the host's own route" })
    expect((await send("GET", "/sandbox/v2/portal/users/me", "alice")).status).toBe(404)
    const me = await send("GET", "/fos/sandbox/v2/portal/users/me", "alice")
    expect(me.status).toBe(200)
    expect(me.json.organization.id).toBe(host.acme)
  })

  it("keeps the tenants apart, refuses a read-only caller's write, and holds no key", async () => {
    const created = await send("POST", "/fos/sandbox/v2/webhooks/endpoints", "alice", { url: "https://hooks.acme.example/fos" })
    expect(created.status).toBe(201)
    const theirs = await send("GET", `/fos/sandbox/v2/webhooks/endpoints/${created.json.id}`, "bob")
    expect([theirs.status, theirs.json.type]).toEqual([404, "WEBHOOK_ENDPOINT_NOT_FOUND"])
    const readOnly = await send("POST", "/fos/sandbox/v2/webhooks/endpoints", "auditor", { url: "https://hooks.acme.example/ro" })
    expect([readOnly.status, readOnly.json.type]).toEqual([403, "API_KEY_READ_ONLY"])
    const anonymous = await send("GET", "/fos/sandbox/v2/webhooks/endpoints", undefined)
    expect([anonymous.status, anonymous.json.type]).toEqual([401, "API_KEY_MISSING"])
    for (const organizationId of [host.acme, host.globex]) {
      const keys = await fetch(`${host.origin}/fos/operator/organizations/${organizationId}/api-keys`, { headers: { authorization: `Bearer ${host.operatorToken}` } })
      expect(keys.status).toBe(200)
      expect(((await keys.json()) as { data: ReadonlyArray<unknown> }).data).toEqual([])
    }
  })

  it("hands out only links that resolve under /fos", async () => {
    const failures = await followLinks({
      origin: host.origin,
      base: "/fos",
      callerHeaders: (env) => ({ "x-host-user": env === "sandbox" ? "alice" : "alice-live" }),
      operatorToken: host.operatorToken,
      docsPage: false
    })
    expect(failures).toEqual([])
  })
})
