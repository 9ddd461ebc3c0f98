/**
 * The request log of the real server: one line per request after the start lines (method, path, status, the
 * problem's type on an error, duration, organization, correlation id), pretty by default, JSON with `--log-format json`, none with `--quiet`,
 * and never a key, a webhook secret, the operator token, a query string or a body.
 */
import { afterAll, describe, expect, it } from "vitest"
import { killAllFos, type RunningFos, startFos } from "./fosProcess.ts"

const token = "request-log-test-operator-token"

afterAll(killAllFos)

/** Starts a server, sends the same requests to it, stops it, and answers its log lines and what it learnt. */
const session = async (flags: ReadonlyArray<string>) => {
  const server: RunningFos = await startFos(["--store", "memory", "--port", "0", "--clock", "virtual", ...flags], { FOS_OPERATOR_TOKEN: token })
  const key = /sandbox key: (ck_sandbox_[0-9a-f]{64})/.exec(server.stdout())![1]!
  const me = await fetch(`${server.origin}/sandbox/v2/portal/users/me`, { headers: { "x-api-key": key } })
  const meBody = (await me.json()) as { organization: { id: string } }
  const created = await fetch(`${server.origin}/sandbox/v2/webhooks/endpoints`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ url: "https://hooks.body-text.test/fos" })
  })
  const secret = ((await created.json()) as { secret: string }).secret
  // A query string (whatever it holds) never reaches the log either.
  const keyless = await fetch(`${server.origin}/sandbox/v2/customers?cursor=query-text`)
  const keylessType = ((await keyless.json()) as { type: string }).type
  const operator = await fetch(`${server.origin}/operator/organizations`, { headers: { authorization: `Bearer ${token}` } })
  await fetch(`${server.origin}/healthz`)
  expect([me.status, created.status, keyless.status, operator.status]).toEqual([200, 201, 401, 200])
  const exit = await server.stop()
  expect(exit.code).toBe(0)
  const out = server.stdout()
  const logLines = out.slice(out.indexOf("\nlive: ") + 1).split("\n").slice(1).filter((l) => l !== "")
  return {
    logLines,
    stdout: out,
    origin: server.origin,
    key,
    secret,
    organizationId: meBody.organization.id,
    keylessType,
    correlationIds: [me, created, keyless, operator].map((r) => r.headers.get("x-correlation-id"))
  }
}

/** Nothing secret, no query and no body in any line. */
const expectClean = (lines: ReadonlyArray<string>, s: { key: string; secret: string }) => {
  for (const line of lines) {
    for (const hidden of [s.key, s.secret, token, "query-text", "body-text", "?"]) expect(line).not.toContain(hidden)
  }
}

describe("the request log of fos serve", () => {
  it("prints one pretty line per request by default", async () => {
    const s = await session([])
    expect(s.logLines).toHaveLength(5)
    const pattern = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (\S+) +(\S+) (\d{3})(?: ([A-Z][A-Z0-9_]+))? +(\d+(?:\.\d)?)ms (\S+) ([0-9a-f]{32})$/
    const parsed = s.logLines.map((line) => {
      const m = pattern.exec(line)
      expect(m, line).not.toBeNull()
      return { method: m![2], path: m![3], status: Number(m![4]), type: m![5], organization: m![7], correlationId: m![8] }
    })
    // An error's line names the problem's type, as its body does; a success's has none.
    expect(s.keylessType).toMatch(/^API_KEY_/)
    expect(parsed.map((p) => [p.method, p.path, p.status, p.type, p.organization])).toEqual([
      ["GET", "/sandbox/v2/portal/users/me", 200, undefined, s.organizationId],
      ["POST", "/sandbox/v2/webhooks/endpoints", 201, undefined, s.organizationId],
      ["GET", "/sandbox/v2/customers", 401, s.keylessType, "-"],
      ["GET", "/operator/organizations", 200, undefined, "-"],
      ["GET", "/healthz", 200, undefined, "-"]
    ])
    expect(parsed.slice(0, 4).map((p) => p.correlationId)).toEqual(s.correlationIds)
    // Piped, not a terminal: no colour codes.
    for (const line of s.logLines) expect(line).not.toContain("\u001b[")
    expectClean(s.logLines, s)
  }, 60_000)

  it("prints one JSON record per line with --log-format json, the start lines and one per request", async () => {
    const s = await session(["--log-format", "json"])
    // Every line of standard output is a record: the start lines too.
    const records = s.stdout.split("\n").filter((l) => l !== "").map((line) => JSON.parse(line) as Record<string, unknown>)
    for (const r of records) {
      expect(typeof r.level, JSON.stringify(r)).toBe("string")
      expect(typeof r.message).toBe("string")
      expect(r.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    }
    expect(records.map((r) => r.message)).toContain(`sandbox: ${s.origin}/sandbox`)
    const entries = records.filter((r) => typeof r.method === "string")
    expect(entries.map((e) => [e.level, e.message, e.method, e.path, e.status, e.type, e.organizationId, e.environment])).toEqual([
      ["info", "GET /sandbox/v2/portal/users/me 200", "GET", "/sandbox/v2/portal/users/me", 200, undefined, s.organizationId, "sandbox"],
      ["info", "POST /sandbox/v2/webhooks/endpoints 201", "POST", "/sandbox/v2/webhooks/endpoints", 201, undefined, s.organizationId, "sandbox"],
      ["info", "GET /sandbox/v2/customers 401", "GET", "/sandbox/v2/customers", 401, s.keylessType, undefined, "sandbox"],
      ["info", "GET /operator/organizations 200", "GET", "/operator/organizations", 200, undefined, undefined, undefined],
      ["info", "GET /healthz 200", "GET", "/healthz", 200, undefined, undefined, undefined]
    ])
    expect(entries.slice(0, 4).map((e) => e.correlationId)).toEqual(s.correlationIds)
    for (const e of entries) {
      expect(typeof e.durationMs).toBe("number")
      expect(e.durationMs as number).toBeGreaterThanOrEqual(0)
    }
    // A key is printed once at a first start, as the demo's; no request record holds one.
    expectClean(entries.map((e) => JSON.stringify(e)), s)
  }, 60_000)

  it("keeps the body of a sandbox request in the recent requests, never a live one's", async () => {
    const server: RunningFos = await startFos(["--store", "memory", "--port", "0", "--clock", "virtual", "--quiet"], { FOS_OPERATOR_TOKEN: token })
    try {
      const out = server.stdout()
      const sandboxKey = /sandbox key: (ck_sandbox_[0-9a-f]{64})/.exec(out)![1]!
      const liveKey = /live key: +(ck_live_[0-9a-f]{64})/.exec(out)![1]!
      const body = { url: "https://hooks.body-text.test/fos", description: "customer data" }
      const answers: Array<number> = []
      for (const [environment, key] of [["sandbox", sandboxKey], ["live", liveKey]] as const) {
        const sent = await fetch(`${server.origin}/${environment}/v2/webhooks/endpoints`, {
          method: "POST",
          headers: { "x-api-key": key, "content-type": "application/json" },
          body: JSON.stringify(body)
        })
        answers.push(sent.status)
        await sent.body?.cancel()
      }
      const me = (await (await fetch(`${server.origin}/sandbox/v2/portal/users/me`, { headers: { "x-api-key": sandboxKey } })).json()) as { organization: { id: string } }
      const recent = async (environment: "sandbox" | "live") => {
        const page = await fetch(`${server.origin}/operator/organizations/${me.organization.id}/requests?environment=${environment}`, { headers: { authorization: `Bearer ${token}` } })
        expect(page.status).toBe(200)
        const { data } = (await page.json()) as { data: Array<Record<string, unknown>> }
        return data.filter((r) => r.method === "POST")
      }
      const [sandbox] = await recent("sandbox")
      const [live] = await recent("live")
      // Whatever each answered, both were logged: the sandbox's with its body, the live one's without.
      expect(sandbox, JSON.stringify(answers)).toMatchObject({ path: "/sandbox/v2/webhooks/endpoints", body })
      expect(live, JSON.stringify(answers)).toMatchObject({ path: "/live/v2/webhooks/endpoints" })
      expect(live).not.toHaveProperty("body")
      expect(live).not.toHaveProperty("bodyBytes")
      expect(JSON.stringify(live)).not.toContain("customer data")
    } finally {
      await server.stop()
    }
  }, 60_000)

  it("prints no request lines with --quiet", async () => {
    const s = await session(["--quiet"])
    expect(s.logLines).toEqual([])
  }, 60_000)

  it("refuses an unknown --log-format", async () => {
    await expect(startFos(["--store", "memory", "--port", "0", "--log-format", "xml"])).rejects.toThrow(/--log-format is pretty or json/)
  })
})
