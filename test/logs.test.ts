/**
 * `createEngine({ logger })`: the engine's log records go to the host's function and nothing to standard output. A
 * request answered gives a record with its correlation id and organization; a warning or error the engine logs
 * (here, a timer of a kind no handler takes) gives one with what is known of it, as Effect log annotations; and no
 * record holds a key.
 */
import { Store, Timers } from "@fos/core"
import { createEngine, type LogRecord, redactSecrets } from "@fos/http"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { keysOf, orgSeed, seedOf, START_MS } from "./support.ts"

const key = keysOf("logs").sandbox

describe("the logger option", () => {
  let printed: Array<string> = []
  beforeEach(() => {
    printed = []
    const capture = (...args: Array<unknown>) => void printed.push(args.map(String).join(" "))
    vi.spyOn(console, "log").mockImplementation(capture)
    vi.spyOn(console, "info").mockImplementation(capture)
    vi.spyOn(console, "warn").mockImplementation(capture)
    vi.spyOn(console, "error").mockImplementation(capture)
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (printed.push(String(chunk)), true))
  })
  afterEach(() => void vi.restoreAllMocks())

  it("receives a record per request, with its correlation id and organization, and the engine's errors with what is known of them", async () => {
    const records: Array<LogRecord> = []
    const engine = await createEngine({ clock: { mode: "virtual", start: START_MS }, seed: seedOf(orgSeed("logs")) as never, logger: (record) => records.push(record) })
    try {
      const answered = await engine.fetch("http://fos.test/sandbox/v2/customers", { headers: { "x-api-key": key } })
      expect(answered.status).toBe(200)
      const refused = await engine.fetch("http://fos.test/sandbox/v2/customers", { headers: { "x-api-key": `${key.slice(0, -1)}0` } })
      expect(refused.status).toBe(401)

      const [ok, unauthorized] = records.filter((r) => r.path === "/sandbox/v2/customers")
      expect(ok).toMatchObject({
        level: "info",
        message: "GET /sandbox/v2/customers 200",
        correlationId: answered.headers.get("x-correlation-id"),
        organizationId: "org_logs",
        environment: "sandbox",
        method: "GET",
        status: 200
      })
      expect(ok!.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      expect(typeof ok!.durationMs).toBe("number")
      // Refused before its caller was known: its correlation id, no organization.
      expect(unauthorized).toMatchObject({ level: "info", status: 401, type: "API_KEY_INVALID", correlationId: refused.headers.get("x-correlation-id") })
      expect(unauthorized!.organizationId).toBeUndefined()

      // A timer of a kind no handler takes, due in the organization's sandbox: the engine keeps it and says so.
      await engine.run(Effect.flatMap(Store.Store, (store) =>
        Effect.orDie(store.insert(Timers.Timers, { id: "tmr_logs_unknown", kind: "logs/unknown", dueAtMs: START_MS + 1_000, payload: {}, scope: "org_logs/sandbox" }))))
      await engine.clock.advance("2 seconds")
      const kept = records.find((r) => r.level === "error" && r.timer === "tmr_logs_unknown")
      expect(kept, JSON.stringify(records)).toMatchObject({ kind: "logs/unknown", scope: "org_logs/sandbox" })
      expect(kept!.message).toMatch(/cannot fire/)

      for (const record of records) expect(JSON.stringify(record)).not.toContain(key.slice(11))
    } finally {
      await engine.close()
    }
    expect(printed).toEqual([])
  })

  it("masks keys and URL passwords in what it hands on", () => {
    expect(redactSecrets(`refused ${key} at postgres://fos:s3cret@db.example:5432/fos`)).toBe("refused ck_sandbox_[redacted] at postgres://fos:[redacted]@db.example:5432/fos")
  })
})
