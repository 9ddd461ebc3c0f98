/**
 * `fos serve` configured by its environment, as a container is: every flag from `FOS_` and its name, the command
 * line winning, and a refused value named by the variable that set it.
 */
import { describe, expect, it } from "vitest"
import { parseServeArgs, serveEnvironment, serveHelp, UsageError } from "../adapters/serve/src/Options.ts"

describe("fos serve's environment", () => {
  it("sets every flag the help lists", () => {
    const flags = new Set([...serveHelp("fos").matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1]!))
    flags.delete("--help")
    expect([...flags].sort()).toEqual(Object.values(serveEnvironment).sort())
    for (const [variable, flag] of Object.entries(serveEnvironment)) expect(variable).toBe(`FOS_${flag.slice(2).replaceAll("-", "_").toUpperCase()}`)
  })

  it("reads each variable as its flag", () => {
    const options = parseServeArgs([], {
      FOS_PORT: "4100",
      FOS_HOST: "0.0.0.0",
      FOS_BASE_PATH: "/fos",
      FOS_STORE: "memory",
      FOS_CLOCK: "virtual",
      FOS_CLOCK_START: "2026-03-02T09:00:00Z",
      FOS_RANDOM_SEED: "42",
      FOS_INSECURE_WEBHOOKS: "true",
      FOS_IDEMPOTENCY_RETENTION_SECONDS: "60",
      FOS_STORE_TIMEOUT_SECONDS: "3",
      FOS_OPERATOR_TOKEN: "a-token-of-sixteen-characters",
      FOS_LOG_FORMAT: "json",
      FOS_QUIET: "1"
    })
    expect(options).toMatchObject({
      port: 4100,
      host: "0.0.0.0",
      basePath: "/fos",
      store: "memory",
      clock: "virtual",
      clockStartMs: Date.UTC(2026, 2, 2, 9),
      randomSeed: "42",
      insecureWebhooks: true,
      idempotencyRetentionMs: 60_000,
      storeTimeoutMs: 3_000,
      operatorToken: "a-token-of-sixteen-characters",
      logFormat: "json",
      quiet: true
    })
  })

  it("lets the command line win, and PORT stand in for FOS_PORT", () => {
    expect(parseServeArgs(["--port", "4300"], { FOS_PORT: "4200", PORT: "4100" }).port).toBe(4300)
    expect(parseServeArgs([], { FOS_PORT: "4200", PORT: "4100" }).port).toBe(4200)
    expect(parseServeArgs([], { PORT: "4100" }).port).toBe(4100)
    expect(parseServeArgs(["--store=memory"], { FOS_STORE: "/data" }).store).toBe("memory")
    expect(parseServeArgs([], { FOS_QUIET: "false" }).quiet).toBe(false)
    expect(parseServeArgs([], { FOS_STORE: "" }).store).toBe("./.fos")
  })

  it("takes FOS_LOAD's pairs unless the command line loads", () => {
    // A missing file is refused under FOS_LOAD, which shows the pairs were read one by one.
    expect(() => parseServeArgs([], { FOS_LOAD: "org_a=/nonexistent/a.json  org_b=/nonexistent/b.json" })).toThrow(
      "FOS_LOAD: --load \"org_a=/nonexistent/a.json\": cannot read the file (ENOENT)"
    )
    // The command line's --load replaces the list: its own missing file is the one refused.
    expect(() => parseServeArgs(["--load", "org_c=/nonexistent/c.json"], { FOS_LOAD: "org_a=/nonexistent/a.json" })).toThrow(
      /^--load "org_c=\/nonexistent\/c.json": cannot read/
    )
  })

  it("takes FOS_SEED as a file's path or as the seed itself", () => {
    const seed = { organizations: [{ id: "org_ci", name: "CI", status: "active", users: [{ id: "usr_ci", email: "ci@ci.test", role: "admin" }] }] }
    expect(parseServeArgs([], { FOS_SEED: JSON.stringify(seed) }).seed?.organizations[0]?.id).toBe("org_ci")
    expect(() => parseServeArgs([], { FOS_SEED: `{"organizations":[{"id":"org_ci"}]}` })).toThrow(/^--seed \(the JSON given\): /)
    expect(() => parseServeArgs([], { FOS_SEED: "/nonexistent/seed.json" })).toThrow("--seed \"/nonexistent/seed.json\": cannot read the file (ENOENT)")
  })

  it("names the variable that set a refused value", () => {
    const refused = (env: Record<string, string>) => {
      try {
        parseServeArgs([], env)
      } catch (e) {
        expect(e).toBeInstanceOf(UsageError)
        return (e as Error).message
      }
      throw new Error("accepted")
    }
    expect(refused({ FOS_LOG_FORMAT: "xml" })).toBe(`FOS_LOG_FORMAT: --log-format is pretty or json, not "xml"`)
    expect(refused({ FOS_QUIET: "yes" })).toBe(`FOS_QUIET is 1, true, 0 or false, not "yes"`)
    expect(refused({ FOS_STORE: "redis://x" })).toMatch(/^--store is memory, .*, not a "redis:\/\/" URL$/)
    expect(refused({ FOS_PORT: "many" })).toBe(`--port (FOS_PORT, PORT) is a whole number from 0 to 65535, not "many"`)
  })
})
