/**
 * `fos tail` against a real `fos serve --clock virtual` process: with the demo organization's sandbox key it prints
 * the requests and events of that sandbox as they happen, pretty or as JSON lines; with an organization id it reads
 * the operator's stream; SIGINT ends it with exit 0, and the server still stops at once afterwards.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { resolve } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { killAllFos, startFos } from "./fosProcess.ts"

const root = resolve(import.meta.dirname, "..")
const token = "tail-test-operator-token"

/** `fos tail <args>` running, with its output so far and a wait for a line that matches. */
const tail = (origin: string, env: Record<string, string>, ...args: Array<string>) => {
  const child: ChildProcess = spawn(process.execPath, ["adapters/node/bin/fos.js", "tail", ...args], {
    cwd: root,
    env: { ...process.env, FOS_SERVER: origin, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  let err = ""
  const waiters: Array<() => void> = []
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk
    for (const wake of waiters.splice(0)) wake()
  })
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (err += chunk))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.on("exit", (code, signal) => done({ code, signal })))
  const lines = () => out.split("\n").filter((line) => line !== "")
  /** Waits until some line matches `pattern`; the test's own timeout bounds the wait. */
  const waitFor = async (pattern: RegExp): Promise<string> => {
    while (true) {
      const found = lines().find((line) => pattern.test(line))
      if (found !== undefined) return found
      if (child.exitCode !== null) throw new Error(`fos tail exited ${child.exitCode}\nstdout: ${out}\nstderr: ${err}`)
      await new Promise<void>((wake) => waiters.push(wake))
    }
  }
  return { child, lines, waitFor, exited, stderr: () => err }
}

afterAll(() => killAllFos())

describe("fos tail", { timeout: 180_000 }, () => {
  it("prints a sandbox's requests and events live, pretty and as JSON, and ends with exit 0 on SIGINT", async () => {
    const server = await startFos(["--store", "memory", "--port", "0", "--clock", "virtual", "--quiet"], { FOS_OPERATOR_TOKEN: token })
    try {
      const org = /demo organization (org_\S+) created/.exec(server.stdout())![1]!
      const key = /sandbox key: (ck_sandbox_[0-9a-f]{64})/.exec(server.stdout())![1]!
      const pretty = tail(server.origin, { FOS_API_KEY: key })
      const json = tail(server.origin, { FOS_OPERATOR_TOKEN: token }, "--org", org, "--json", "--types", "events")
      // Each stream is open once the server has recorded its request; a request made then reaches both.
      const opened = async () => {
        for (let tries = 0; tries < 600; tries++) {
          const recent = await fetch(`${server.origin}/sandbox/v2/simulate/requests`, { headers: { "x-api-key": key } })
          const paths = ((await recent.json()) as { data: Array<{ path: string }> }).data.map((r) => r.path)
          if (paths.includes("/sandbox/v2/simulate/stream")) return
          await new Promise((r) => setTimeout(r, 100))
        }
      }
      await opened()
      const headers = { "x-api-key": key, "content-type": "application/json" }
      const emitted = await fetch(`${server.origin}/sandbox/v2/simulate/events`, { method: "POST", headers, body: JSON.stringify({ type: "customer.created" }) })
      expect(emitted.status).toBe(201)
      const event = (await emitted.json()) as { id: string; data: { customerId: string } }
      await fetch(`${server.origin}/sandbox/v2/customers/cus_000000000000000000000000`, { headers: { "x-api-key": key } })

      expect(await pretty.waitFor(/POST\s+\/sandbox\/v2\/simulate\/events 201/)).toMatch(/^\S+Z POST {3}\/sandbox\/v2\/simulate\/events 201 [\d.]+ms \S+ by:[0-9a-f]{16}$/)
      expect(await pretty.waitFor(/ event  customer\.created /)).toContain(`customer.created ${event.data.customerId} ${event.id}`)
      expect(await pretty.waitFor(/CUSTOMER_NOT_FOUND/)).toMatch(/GET {4}\/sandbox\/v2\/customers\/cus_0+ 404 CUSTOMER_NOT_FOUND/)

      // The operator's stream is no request of the organization's, so nothing says when it is open: events are sent
      // until one reaches it.
      let line: any
      while (line === undefined) {
        const more = await fetch(`${server.origin}/sandbox/v2/simulate/events`, { method: "POST", headers, body: JSON.stringify({ type: "customer.restricted" }) })
        const sent = (await more.json()) as { id: string; data: { customerId: string } }
        const shown = await Promise.race([json.waitFor(new RegExp(sent.id)), new Promise<undefined>((r) => setTimeout(r, 500, undefined))])
        if (shown !== undefined) line = { sent, shown: JSON.parse(shown) }
      }
      expect(line.shown).toEqual({
        event: "event",
        id: line.sent.id,
        data: expect.objectContaining({ id: line.sent.id, type: "customer.restricted", resourceId: line.sent.data.customerId, mode: "sandbox" })
      })
      // --types events: no request line.
      expect(json.lines().every((l) => JSON.parse(l).event === "event")).toBe(true)

      pretty.child.kill("SIGINT")
      json.child.kill("SIGINT")
      expect(await pretty.exited).toEqual({ code: 0, signal: null })
      expect(await json.exited).toEqual({ code: 0, signal: null })
      // Its streams closed with it: the server stops without waiting for them.
      expect((await server.stop()).code).toBe(0)
    } finally {
      await server.stop()
    }
  })

  it("refuses bad usage with exit 2 and a refused key with exit 1", async () => {
    const server = await startFos(["--store", "memory", "--port", "0", "--quiet"], { FOS_OPERATOR_TOKEN: token })
    try {
      const noKey = tail(server.origin, {})
      expect((await noKey.exited).code).toBe(2)
      const badTypes = tail(server.origin, { FOS_API_KEY: "x" }, "--types", "timers")
      expect((await badTypes.exited).code).toBe(2)
      const refused = tail(server.origin, { FOS_API_KEY: `ck_sandbox_${"0".repeat(64)}` })
      expect((await refused.exited).code).toBe(1)
      expect(refused.stderr()).toContain("API_KEY_INVALID")
    } finally {
      await server.stop()
    }
  })
})
