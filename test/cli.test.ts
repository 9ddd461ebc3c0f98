/**
 * The `fos` command line against a real server process: the operator commands act on the store the server
 * serves, refusals and bad usage exit non-zero, and SIGTERM lets a request in flight finish before exiting. Its
 * help, and the start lines: which store and clock, how to get a key, an operator token that survives restarts.
 */
import { type ChildProcess, execFile, spawnSync } from "node:child_process"
import { createServer, request } from "node:http"
import { once } from "node:events"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { killAllFos, startFos } from "./fosProcess.ts"
import { guides } from "./guides.ts"

const root = resolve(import.meta.dirname, "..")
const token = "cli-test-operator-token"

const startServer = (args: ReadonlyArray<string> = []) =>
  startFos(["--store", "memory", "--port", "0", ...args], { FOS_OPERATOR_TOKEN: token })

/**
 * Runs `fos <args>` without blocking this process: a blocked event loop would not see the server close an idle
 * keep-alive connection, and the next fetch would be sent on it ("other side closed").
 */
const fos = (origin: string, ...args: Array<string>): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  fosWith(token, origin, ...args)

const fosWith = (operatorToken: string, origin: string, ...args: Array<string>): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((done) => {
    execFile(process.execPath, ["adapters/node/bin/fos.js", ...args], {
      cwd: root,
      env: { ...process.env, FOS_SERVER: origin, FOS_OPERATOR_TOKEN: operatorToken },
      encoding: "utf8"
    }, (error, stdout, stderr) => done({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr }))
  })

// Each command is a Node process; on a loaded machine a test of several takes more than the default 30 s.
describe("fos operator commands", { timeout: 120_000 }, () => {
  let server: { child: ChildProcess; origin: string }
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => {
    server.child.kill("SIGKILL")
  })

  it("create an organization, a user and a key that the server accepts at once", async () => {
    expect((await fos(server.origin, "orgs", "create", "--name", "Acme", "--id", "org_clitest", "--status", "active")).code).toBe(0)
    expect((await fos(server.origin, "users", "create", "--org", "org_clitest", "--email", "ada@cli.test", "--role", "admin", "--id", "usr_cliada")).code).toBe(0)
    const created = await fos(server.origin, "keys", "create", "--org", "org_clitest", "--user", "usr_cliada", "--env", "sandbox", "--access", "read_write", "--ip", "127.0.0.0/8", "--ip", "::1/128")
    expect(created.code).toBe(0)
    const key = JSON.parse(created.stdout).key as string
    expect(key).toMatch(/^ck_sandbox_[0-9a-f]{64}$/)
    const me = await fetch(`${server.origin}/sandbox/v2/portal/users/me`, { headers: { "x-api-key": key } })
    expect(me.status).toBe(200)
    expect(((await me.json()) as { user: { id: string } }).user.id).toBe("usr_cliada")

    expect((await fos(server.origin, "keys", "revoke", key)).code).toBe(0)
    const after = await fetch(`${server.origin}/sandbox/v2/portal/users/me`, { headers: { "x-api-key": key } })
    expect(((await after.json()) as { type: string }).type).toBe("API_KEY_INVALID")
  })

  it("fos reset empties an organization's sandbox and keeps its keys; an unknown organization is refused", async () => {
    await fos(server.origin, "orgs", "create", "--name", "Reset", "--id", "org_clireset", "--status", "active")
    await fos(server.origin, "users", "create", "--org", "org_clireset", "--email", "ada@reset.test", "--role", "admin", "--id", "usr_clireset")
    const key = JSON.parse((await fos(server.origin, "keys", "create", "--org", "org_clireset", "--user", "usr_clireset", "--env", "sandbox", "--access", "read_write")).stdout).key as string
    const headers = { "x-api-key": key, "content-type": "application/json" }
    const created = await fetch(`${server.origin}/sandbox/v2/webhooks/endpoints`, { method: "POST", headers, body: JSON.stringify({ url: "https://hooks.reset.test/fos" }) })
    expect(created.status).toBe(201)

    const reset = await fos(server.origin, "reset", "--org", "org_clireset")
    expect(reset.code, reset.stderr).toBe(0)
    expect(reset.stderr).toBe("")
    expect(JSON.parse(reset.stdout)).toMatchObject({ organizationId: "org_clireset", environment: "sandbox", removed: { webhookEndpoints: 1 } })
    const list = await fetch(`${server.origin}/sandbox/v2/webhooks/endpoints`, { headers })
    expect(list.status).toBe(200)
    expect(((await list.json()) as { data: Array<unknown> }).data).toEqual([])

    // The older spelling, a bare organization id, still runs, with a note on standard error that names --org.
    const older = await fos(server.origin, "reset", "org_clireset")
    expect(older.code, older.stderr).toBe(0)
    expect(JSON.parse(older.stdout)).toMatchObject({ organizationId: "org_clireset", environment: "sandbox" })
    expect(older.stderr).toBe("fos: note: fos reset takes the organization as --org ORG_ID; the bare \"org_clireset\" still works\n")

    const unknown = await fos(server.origin, "reset", "--org", "org_nobody")
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain("NOT_FOUND")
    expect((await fos(server.origin, "reset")).code).toBe(2)
  })

  // Seven commands, each a Node process: on a loaded machine that is more than the group's two minutes.
  it("fos faults arms, lists and deletes an organization's sandbox faults, which the running server applies", async () => {
    await fos(server.origin, "orgs", "create", "--name", "Faults", "--id", "org_clifaults", "--status", "active")
    await fos(server.origin, "users", "create", "--org", "org_clifaults", "--email", "ada@faults.test", "--role", "admin", "--id", "usr_clifaults")
    const key = JSON.parse((await fos(server.origin, "keys", "create", "--org", "org_clifaults", "--user", "usr_clifaults", "--env", "sandbox", "--access", "read_write")).stdout).key as string
    const armed = await fos(server.origin, "faults", "arm", "--org", "org_clifaults", "--fault", JSON.stringify({
      match: { operationId: "customers.list" },
      effect: { type: "problem", code: "POLICY_EVALUATION_UNAVAILABLE" }
    }))
    expect(armed.code, armed.stderr).toBe(0)
    const fault = JSON.parse(armed.stdout) as { id: string }
    const refused = await fetch(`${server.origin}/sandbox/v2/customers`, { headers: { "x-api-key": key } })
    expect(refused.status).toBe(503)
    expect(((await refused.json()) as { type: string }).type).toBe("POLICY_EVALUATION_UNAVAILABLE")
    const listed = JSON.parse((await fos(server.origin, "faults", "list", "--org", "org_clifaults")).stdout) as { data: Array<{ id: string; applied: number }> }
    expect(listed.data).toMatchObject([{ id: fault.id, applied: 1 }])
    expect((await fos(server.origin, "faults", "delete", "--org", "org_clifaults", fault.id)).code).toBe(0)
    expect((await fetch(`${server.origin}/sandbox/v2/customers`, { headers: { "x-api-key": key } })).status).toBe(200)
    // A matcher that names no operation is refused.
    const typo = await fos(server.origin, "faults", "arm", "--org", "org_clifaults", "--fault", JSON.stringify({ match: { path: "/v2/customer" }, effect: { type: "commit_then_lose" } }))
    expect(typo.code).toBe(1)
    expect(typo.stderr).toContain("VALIDATION_ERROR")
  }, 240_000)

  it("fos outcomes adds, lists and deletes an organization's sandbox outcome rules, as its own API sees them", async () => {
    await fos(server.origin, "orgs", "create", "--name", "Outcomes", "--id", "org_clioutcomes", "--status", "active")
    await fos(server.origin, "users", "create", "--org", "org_clioutcomes", "--email", "ada@outcomes.test", "--role", "admin", "--id", "usr_clioutcomes")
    const key = JSON.parse((await fos(server.origin, "keys", "create", "--org", "org_clioutcomes", "--user", "usr_clioutcomes", "--env", "sandbox", "--access", "read_write")).stdout).key as string
    const added = await fos(server.origin, "outcomes", "add", "--org", "org_clioutcomes", "--rule", JSON.stringify({
      match: { rail: "ach" },
      outcome: { type: "fail", failureCode: "insufficient_funds_at_settle" },
      count: 2
    }))
    expect(added.code, added.stderr).toBe(0)
    const rule = JSON.parse(added.stdout) as { id: string }
    const seen = await fetch(`${server.origin}/sandbox/v2/simulate/outcomes`, { headers: { "x-api-key": key } })
    expect(((await seen.json()) as { data: Array<{ id: string }> }).data).toMatchObject([{ id: rule.id, remaining: 2, applied: 0 }])
    const listed = JSON.parse((await fos(server.origin, "outcomes", "list", "--org", "org_clioutcomes", "--limit", "10")).stdout) as { data: Array<{ id: string }> }
    expect(listed.data.map((r) => r.id)).toEqual([rule.id])
    // A rule that could never apply is refused, as the API refuses it.
    const never = await fos(server.origin, "outcomes", "add", "--org", "org_clioutcomes", "--rule", JSON.stringify({ match: { rail: "ach" }, outcome: { type: "fail", failureCode: "chain_broadcast_failed" } }))
    expect(never.code).toBe(1)
    expect(never.stderr).toContain("VALIDATION_ERROR")
    expect((await fos(server.origin, "outcomes", "delete", "--org", "org_clioutcomes", rule.id)).code).toBe(0)
    expect(JSON.parse((await fos(server.origin, "outcomes", "list", "--org", "org_clioutcomes")).stdout).data).toEqual([])
  }, 240_000)

  it("print the problem and exit 1 when the server refuses", async () => {
    await fos(server.origin, "orgs", "create", "--name", "Beta", "--id", "org_clibeta")
    await fos(server.origin, "users", "create", "--org", "org_clibeta", "--email", "dev@cli.test", "--role", "developer", "--id", "usr_clidev")
    const refused = await fos(server.origin, "keys", "create", "--org", "org_clibeta", "--user", "usr_clidev", "--env", "sandbox", "--access", "read_write")
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("API_KEY_WRITE_REQUIRES_ADMIN")
  })

  it("reach a server under --base-path through --server <origin>/PATH", async () => {
    const mounted = await startServer(["--base-path", "/fos"])
    try {
      expect(mounted.origin).toMatch(/\/fos$/)
      const listed = await fos(mounted.origin, "orgs", "list")
      expect(listed.code, listed.stderr).toBe(0)
      // The demo organization, which the server made at its start.
      expect(JSON.parse(listed.stdout).data).toHaveLength(1)
    } finally {
      mounted.child.kill("SIGKILL")
    }
  })

  it("fos users list lists an organization's users, removed ones with their removedAt", async () => {
    await fos(server.origin, "orgs", "create", "--name", "Users", "--id", "org_cliusers")
    await fos(server.origin, "users", "create", "--org", "org_cliusers", "--email", "ada@users.test", "--role", "admin", "--id", "usr_cliuada")
    await fos(server.origin, "users", "create", "--org", "org_cliusers", "--email", "bob@users.test", "--role", "developer", "--id", "usr_cliubob")
    expect((await fos(server.origin, "users", "remove", "usr_cliubob")).code).toBe(0)
    const listed = await fos(server.origin, "users", "list", "--org", "org_cliusers")
    expect(listed.code, listed.stderr).toBe(0)
    const users = (JSON.parse(listed.stdout) as { data: Array<{ id: string; email: string; role: string; removedAt: string | null }> }).data
    expect(users.map((u) => [u.id, u.email, u.role, u.removedAt === null])).toEqual([
      ["usr_cliuada", "ada@users.test", "admin", true],
      ["usr_cliubob", "bob@users.test", "developer", false]
    ])
    const unknown = await fos(server.origin, "users", "list", "--org", "org_nobody")
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain("NOT_FOUND")
    expect((await fos(server.origin, "users", "list")).stderr).toContain("--org is required")
  }, 120_000)

  it("say \"unknown command\" before the usage (the command's own, for an unknown action), and exit 2", async () => {
    for (const [args, usage] of [[["frobnicate"], /fos users list --org ORG_ID/], [["users", "frobnicate"], /^usage: fos users list --org ORG_ID$/m], [["orgs"], /^usage: fos orgs list$/m]] as const) {
      const result = await fos(server.origin, ...args)
      expect(result.code, args.join(" ")).toBe(2)
      const lines = result.stderr.split("\n")
      expect(lines[0], args.join(" ")).toBe(`fos: unknown command ${JSON.stringify(args.join(" "))}`)
      expect(result.stderr, args.join(" ")).toMatch(usage)
    }
  }, 60_000)

  it("exit 2 with a message on bad usage, and refuse a wrong token", async () => {
    const bad = await fos(server.origin, "keys", "create", "--org", "org_clitest")
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("--user is required")
    const wrong = spawnSync(process.execPath, ["adapters/node/bin/fos.js", "orgs", "list"], {
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

describe("fos inspection commands", { timeout: 180_000 }, () => {
  it("fos timers, events, journal, audit and timeline read an organization's sandbox; bad usage exits 2", async () => {
    // The demo organization the server creates, and its sandbox key.
    const server = await startFos(["--store", "memory", "--port", "0", "--clock", "virtual"], { FOS_OPERATOR_TOKEN: token })
    try {
      const org = /demo organization (org_\S+) created/.exec(server.stdout())![1]!
      const key = /sandbox key: (ck_sandbox_[0-9a-f]{64})/.exec(server.stdout())![1]!
      // A webhook endpoint's first delivery is a pending timer once an event is emitted.
      const headers = { "x-api-key": key, "content-type": "application/json" }
      await fetch(`${server.origin}/sandbox/v2/webhooks/endpoints`, { method: "POST", headers, body: JSON.stringify({ url: "https://hooks.look.test/fos" }) })
      const emitted = await fetch(`${server.origin}/sandbox/v2/simulate/events`, { method: "POST", headers, body: JSON.stringify({ type: "customer.created" }) })
      expect(emitted.status).toBe(201)

      const [events, timers, audit, journal, usage] = await Promise.all([
        fos(server.origin, "events", "--org", org, "--type", "customer.created"),
        fos(server.origin, "timers", "--org", org, "--limit", "10"),
        fos(server.origin, "audit", "--org", org),
        fos(server.origin, "journal", "--org", org, "vac_nothing"),
        fos(server.origin, "audit")
      ])
      expect(events.code, events.stderr).toBe(0)
      // The demo customer's own customer.created, and the one emitted here.
      const emittedId = ((await emitted.json()) as { id: string }).id
      expect(JSON.parse(events.stdout).data.map((e: { type: string }) => e.type)).toEqual(["customer.created", "customer.created"])
      expect(JSON.parse(events.stdout).data.map((e: { id: string }) => e.id)).toContain(emittedId)
      expect(timers.code, timers.stderr).toBe(0)
      expect(JSON.parse(timers.stdout).data.map((t: { kind: string }) => t.kind)).toContain("webhook.attempt")
      // The engine's housekeeping (the endpoint's creation left no keyed request: a keyed one is made here) shows
      // only with --housekeeping.
      const keyed = await fetch(`${server.origin}/sandbox/v2/webhooks/endpoints`, {
        method: "POST",
        headers: { ...headers, "idempotency-key": "cli-housekeeping" },
        body: JSON.stringify({ url: "https://hooks.look.test/other" })
      })
      expect(keyed.status).toBe(201)
      const [world, everything, badSwitch] = await Promise.all([
        fos(server.origin, "timers", "--org", org),
        fos(server.origin, "timers", "--org", org, "--housekeeping", "--limit", "100"),
        fos(server.origin, "timers", "--org", org, "--housekeeping=yes")
      ])
      expect(JSON.parse(world.stdout).data.map((t: { kind: string }) => t.kind)).not.toContain("idempotency.expire")
      expect(JSON.parse(everything.stdout).data.map((t: { kind: string }) => t.kind)).toContain("idempotency.expire")
      expect(badSwitch.code).toBe(2)
      expect(audit.code, audit.stderr).toBe(0)
      expect(JSON.parse(audit.stdout)).toMatchObject({ clean: true, violationCount: 0 })
      expect(journal.code).toBe(1)
      expect(journal.stderr).toContain("NOT_FOUND")
      expect(usage.code).toBe(2)

      // The delivery's timeline, by the id its pending timer names.
      const deliveryId = JSON.parse(timers.stdout).data.find((t: { kind: string }) => t.kind === "webhook.attempt").resourceId as string
      const [timeline, unknown, noResource] = await Promise.all([
        fos(server.origin, "timeline", "--org", org, deliveryId),
        fos(server.origin, "timeline", "--org", org, "wdl_nothing"),
        fos(server.origin, "timeline", "--org", org)
      ])
      expect(timeline.code, timeline.stderr).toBe(0)
      expect(JSON.parse(timeline.stdout)).toMatchObject({ resourceId: deliveryId, resourceType: "webhook_delivery", truncated: false })
      expect(JSON.parse(timeline.stdout).entries.find((e: { kind: string }) => e.kind === "state")).toMatchObject({ to: "pending", cause: { type: "simulate" } })
      expect(unknown.code).toBe(1)
      expect(unknown.stderr).toContain("NOT_FOUND")
      expect(noResource.code).toBe(2)
    } finally {
      await server.stop()
    }
  })
})

describe("fos help", () => {
  const run = (...args: Array<string>) => spawnSync(process.execPath, ["adapters/node/bin/fos.js", ...args], { cwd: root, encoding: "utf8" })

  it("fos --help names every command, with examples; fos serve --help every flag with its meaning and default", () => {
    const general = run("--help")
    expect(general.status).toBe(0)
    for (const command of ["fos serve", "fos orgs list", "fos users list", "fos users create", "fos keys create", "fos reset", "examples:"]) {
      expect(general.stdout).toContain(command)
    }
    expect(run().stdout).toBe(general.stdout)
    expect(run("help").stdout).toBe(general.stdout)

    const serve = run("serve", "--help")
    expect(serve.status).toBe(0)
    expect(serve.stdout).not.toBe(general.stdout)
    const flags = ["--port", "--host", "--base-path", "--store", "--clock", "--clock-start", "--seed", "--random-seed", "--idempotency-retention-seconds", "--store-timeout-seconds", "--operator-token", "--insecure-webhooks", "--log-format", "--quiet", "--otlp"]
    const flagLines = serve.stdout.slice(serve.stdout.indexOf("flags:")).split("\n")
    for (const flag of flags) expect(flagLines.some((l) => l.startsWith(`  ${flag} `)), flag).toBe(true)
    for (const fact of ["(default: PORT, else 4000)", "(default: 127.0.0.1)", "(default: ./.fos)", "(default: system; virtual with --random-seed)", "(default: 2592000, 30 days)", "(default: pretty)", "loopback"]) {
      expect(serve.stdout).toContain(fact)
    }
    expect(serve.stdout).toMatch(/examples:\n {2}fos serve/)
    expect(run("serve", "-h").stdout).toBe(serve.stdout)
  }, 60_000)
})

describe("one command line", { timeout: 120_000 }, () => {
  const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
    spawnSync(process.execPath, ["adapters/node/bin/fos.js", ...args], { cwd: root, encoding: "utf8", env: { ...process.env, FOS_SERVER: "", FOS_API_KEY: "", FOS_OPERATOR_TOKEN: "", ...env } })

  it("every command that calls a server names it with --server or FOS_SERVER (--url too), and a failure to reach it says both", async () => {
    // A port nothing listens on: its listener is closed before the commands run.
    const closed = await new Promise<number>((done) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const port = (probe.address() as { port: number }).port
        probe.close(() => done(port))
      })
    })
    const nowhere = `http://127.0.0.1:${closed}`
    const commands: ReadonlyArray<ReadonlyArray<string>> = [
      ["orgs", "list", "--token", token],
      ["tail", "--key", "ck_sandbox_x"],
      ["listen", "--key", "ck_sandbox_x", "--forward-to", "http://127.0.0.1:3000/webhooks"]
    ]
    for (const command of commands) {
      for (const [args, env] of [[["--server", nowhere], {}], [["--url", nowhere], {}], [[], { FOS_SERVER: nowhere }]] as const) {
        const result = run([...command, ...args], env)
        expect(result.status, `${command.join(" ")} ${args.join(" ")}: ${result.stderr}`).toBe(1)
        expect(result.stderr).toContain(`cannot reach the server at ${nowhere}`)
        expect(result.stderr).toContain("--server URL or FOS_SERVER")
      }
    }
  })

  it("every command's --help lists each flag it takes, and each flag the README or a guide gives a command is among them", () => {
    const help = (command: string) => {
      const result = run([command, "--help"])
      expect(result.status, command).toBe(0)
      return result.stdout
    }
    // Every flag any command takes is in its help: the parsers' lists, and the connection's for those that call a server.
    for (const command of ["orgs", "users", "keys", "snapshots", "reset", "faults", "outcomes", "timers", "events", "journal", "audit", "timeline", "tail", "listen"]) {
      const text = help(command)
      for (const flag of ["--server", ...(command === "listen" || command === "tail" ? ["--key"] : []), ...(command === "listen" ? [] : ["--token"])]) {
        expect(text, `fos ${command} --help: ${flag}`).toContain(flag)
      }
    }
    // The commands of the README and the guides (fos ..., npx fos ... and npm run fos -- ...), each flag checked against its command's help.
    const readme = guides.map((g) => g.text).join("\n")
    const used = [...readme.matchAll(/(?:npm run fos --|npx fos|\bfos) (serve|orgs|users|keys|snapshots|reset|faults|outcomes|timers|events|journal|audit|timeline|tail|listen)\b([^`\n#|]*)/g)]
    expect(used.length).toBeGreaterThan(20)
    for (const [, command, rest] of used) {
      for (const [flag] of rest!.matchAll(/--[a-z][a-z-]*/g)) {
        expect(help(command!), `README or a guide: fos ${command} ${flag}`).toMatch(new RegExp(`${flag}(?![a-z-])`))
      }
    }
  })

  it("a restart's key hint names the server with --server when it is not the default 127.0.0.1:4000", async () => {
    const parent = mkdtempSync(join(tmpdir(), "fos-hint-"))
    const dir = join(parent, "store")
    try {
      const free = await new Promise<number>((done) => {
        const probe = createServer().listen(0, "127.0.0.1", () => {
          const port = (probe.address() as { port: number }).port
          probe.close(() => done(port))
        })
      })
      await (await startFos(["--store", dir, "--port", "0"])).stop()
      const second = await startFos(["--store", dir, "--port", String(free)])
      await second.stop()
      const hint = /^keys: .*make one with: (fos keys create .*--access read_write --server (\S+)) \(/m.exec(second.stdout())
      expect(hint, second.stdout()).not.toBeNull()
      expect(hint![2]).toBe(`http://127.0.0.1:${free}`)
      // On a free port (0), the hint says where the address is.
      const third = await startFos(["--store", dir, "--port", "0"])
      await third.stop()
      expect(third.stdout()).toMatch(/--access read_write --server ORIGIN \(.*ORIGIN is this server's address, on the sandbox: line below/m)
    } finally {
      rmSync(parent, { recursive: true, force: true })
    }
  })
})

describe("fos serve's start lines", () => {
  afterAll(killAllFos)

  it("say which store and which clock are in use", async () => {
    const memory = await startFos(["--store", "memory", "--port", "0"])
    await memory.stop()
    expect(memory.stdout()).toMatch(/^store: memory store \(nothing is kept when the process ends\)$/m)
    expect(memory.stdout()).toMatch(/^clock: system \(real time\)$/m)
    const virtual = await startFos(["--store", "memory", "--port", "0", "--clock", "virtual", "--clock-start", "2026-01-01T00:00:00Z"])
    await virtual.stop()
    // The time after the demo's moves: its virtual account activates 30 s after approval, and the demo waits for it.
    expect(virtual.stdout()).toMatch(/^clock: virtual, at 2026-01-01T00:00:30\.000Z; time moves only through POST \/sandbox\/v2\/simulate\/clock\/advance$/m)
    const seeded = await startFos(["--store", "memory", "--port", "0", "--seed", "{\"organizations\": []}", "--clock", "virtual", "--clock-start", "2026-01-01T00:00:00Z"])
    await seeded.stop()
    expect(seeded.stdout()).toMatch(/^clock: virtual, at 2026-01-01T00:00:00\.000Z; /m)
    // Before the base addresses, which stay the last start lines.
    const lines = virtual.stdout().split("\n")
    expect(lines.findIndex((l) => l.startsWith("clock: "))).toBeLessThan(lines.findIndex((l) => l.startsWith("sandbox: ")))
  }, 60_000)

  it("on a new PGlite directory, say it is being created; on a restart, say how to get a key, and keep the operator token", async () => {
    const parent = mkdtempSync(join(tmpdir(), "fos-restart-"))
    const dir = join(parent, "store")
    try {
      const first = await startFos(["--store", dir, "--port", "0"])
      await first.stop()
      const out1 = first.stdout()
      expect(out1.split("\n")[0]).toBe(`creating the PGlite database in ${dir} (first start; this takes a few seconds)...`)
      expect(out1).toMatch(/^ {2}sandbox key: ck_sandbox_[0-9a-f]{64}$/m)
      expect(out1).toMatch(new RegExp(`^store: PGlite directory ${dir}$`, "m"))
      const operatorToken = /^operator token \(.*the same at this store's next starts.*\): ([0-9a-f]{64})$/m.exec(out1)![1]!

      const second = await startFos(["--store", dir, "--port", "0"])
      try {
        const out2 = second.stdout()
        expect(out2).not.toContain("creating the PGlite database")
        expect(out2).not.toMatch(/ck_(sandbox|live)_/)
        expect(out2).not.toContain(operatorToken)
        expect(out2).toMatch(/^operator token: the one printed at this store's first start \(.+\), kept as its hash; /m)
        // The hint names the command that makes a key, with the organization's and its admin's ids.
        const hint = /^keys: .*make one with: (fos keys create --org (org_\w+) --user (usr_\w+) --env sandbox --access read_write)/m.exec(out2)
        expect(hint, out2).not.toBeNull()
        // The token printed at the first start still opens the operator surface; the hint's command runs as printed.
        const created = await fosWith(operatorToken, second.origin, ...hint![1]!.split(" ").slice(1))
        expect(created.code, created.stderr).toBe(0)
        const key = (JSON.parse(created.stdout) as { key: string }).key
        const me = await fetch(`${second.origin}/sandbox/v2/portal/users/me`, { headers: { "x-api-key": key } })
        expect(me.status).toBe(200)
        expect(((await me.json()) as { organization: { id: string } }).organization.id).toBe(hint![2])
        // A token given for a process wins for that process only.
        expect((await fosWith("not-the-operator-token", second.origin, "orgs", "list")).code).toBe(1)
      } finally {
        await second.stop()
      }
      const chosen = await startFos(["--store", dir, "--port", "0"], { FOS_OPERATOR_TOKEN: "a-chosen-operator-token" })
      try {
        expect(chosen.stdout()).not.toMatch(/^operator token/m)
        expect((await fosWith("a-chosen-operator-token", chosen.origin, "orgs", "list")).code).toBe(0)
        expect((await fosWith(operatorToken, chosen.origin, "orgs", "list")).code).toBe(1)
      } finally {
        await chosen.stop()
      }
    } finally {
      rmSync(parent, { recursive: true, force: true })
    }
  }, 120_000)
})
