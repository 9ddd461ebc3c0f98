/**
 * The flags of `fos serve` (DESIGN.md §2) and the store a `--store` value names: the same on Node, Bun and Deno.
 *
 * Only `node:fs` and `node:path` are used here, which Bun and Deno implement too.
 */
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import type { Store } from "@fos/core"
import { Clocks, MemoryStore, Seed } from "@fos/core"
import { parseIso } from "@fos/contract"
import { basePathOf } from "@fos/http"
import { Effect, type Layer } from "effect"
import { isOrganizationId, quoted, unknownFlag, UsageError } from "./Cli.ts"

export * from "./Cli.ts"

export interface ServeOptions {
  readonly port: number
  readonly host: string
  /** The path every route is under (`--base-path /fos`): `""`, the default, or `/` and segments (BasePath.ts). */
  readonly basePath: string
  readonly store: string
  readonly clock: "system" | "virtual"
  readonly clockStartMs: number | undefined
  readonly seed: Seed.SeedFile | undefined
  /**
   * Snapshot files to start with, restored in their organizations' sandboxes (`--load ORG=FILE`, repeatable), in the
   * order given: each file's JSON, read and parsed (the engine checks the rest).
   */
  readonly loads: ReadonlyArray<{ readonly organizationId: string; readonly path: string; readonly file: unknown }>
  /** Makes every value fos invents reproducible (`--random-seed`); random when undefined. */
  readonly randomSeed: string | undefined
  readonly insecureWebhooks: boolean
  readonly idempotencyRetentionMs: number | undefined
  /** How long PostgreSQL may leave a statement unanswered before the store is taken as unreachable; 10 s when undefined. */
  readonly storeTimeoutMs: number | undefined
  /** The operator surface's bearer token; one is minted and printed when none is given. */
  readonly operatorToken: string | undefined
  /**
   * How standard output prints: lines for people (`pretty`, the default), or one JSON log record per line, the start
   * lines, the request log and the engine's warnings and errors alike (`json`).
   */
  readonly logFormat: "pretty" | "json"
  /**
   * Where traces, metrics and logs are exported over OTLP/HTTP (`--otlp`, else OTEL_EXPORTER_OTLP_ENDPOINT): the
   * collector's base URL, the headers of OTEL_EXPORTER_OTLP_HEADERS and the service name of OTEL_SERVICE_NAME ("fos"
   * when unset). Undefined: no export.
   */
  readonly otlp: { readonly url: string; readonly headers: Readonly<Record<string, string>>; readonly serviceName: string } | undefined
  /** No request log (the start lines are still printed). */
  readonly quiet: boolean
}

const flagValue = (args: ReadonlyArray<string>, i: number, name: string): string => {
  const value = args[i + 1]
  if (value === undefined || value.startsWith("--")) throw new UsageError(`${name} needs a value`)
  return value
}

/**
 * The environment variable that sets each flag of `fos serve`, as a container is configured: `FOS_` and the flag's
 * name. A flag on the command line wins over its variable; `--load` on the command line replaces `FOS_LOAD`'s list.
 * `FOS_LOAD` holds `ORG=FILE` pairs separated by white space; a switch's variable is `1`/`true` or `0`/`false`.
 */
export const serveEnvironment = {
  FOS_PORT: "--port",
  FOS_HOST: "--host",
  FOS_BASE_PATH: "--base-path",
  FOS_STORE: "--store",
  FOS_CLOCK: "--clock",
  FOS_CLOCK_START: "--clock-start",
  FOS_SEED: "--seed",
  FOS_LOAD: "--load",
  FOS_RANDOM_SEED: "--random-seed",
  FOS_INSECURE_WEBHOOKS: "--insecure-webhooks",
  FOS_IDEMPOTENCY_RETENTION_SECONDS: "--idempotency-retention-seconds",
  FOS_STORE_TIMEOUT_SECONDS: "--store-timeout-seconds",
  FOS_OPERATOR_TOKEN: "--operator-token",
  FOS_LOG_FORMAT: "--log-format",
  FOS_QUIET: "--quiet",
  FOS_OTLP: "--otlp"
} as const

const switches: ReadonlySet<string> = new Set(["--insecure-webhooks", "--quiet"])

/** The flags `env` sets, each with the variable it came from, in serveEnvironment's order. */
const flagsFromEnvironment = (env: Readonly<Record<string, string | undefined>>, args: ReadonlyArray<string>) => {
  const loadOnCommandLine = args.some((arg) => arg === "--load" || arg.startsWith("--load="))
  return Object.entries(serveEnvironment).flatMap(([variable, flag]): ReadonlyArray<{ readonly arg: string; readonly variable: string }> => {
    const value = env[variable]
    if (value === undefined || value === "") return []
    if (switches.has(flag)) {
      if (/^(1|true)$/i.test(value)) return [{ arg: flag, variable }]
      if (/^(0|false)$/i.test(value)) return []
      throw new UsageError(`${variable} is 1, true, 0 or false, not ${quoted(value)}`)
    }
    if (flag === "--load") return loadOnCommandLine ? [] : value.trim().split(/\s+/).map((pair) => ({ arg: `${flag}=${pair}`, variable }))
    return [{ arg: `${flag}=${value}`, variable }]
  })
}

/** Parses `fos serve` flags over the environment's (serveEnvironment; PORT too, as platforms set it). */
export const parseServeArgs = (commandLine: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>>): ServeOptions => {
  const fromEnvironment = flagsFromEnvironment(env, commandLine)
  const args = [...fromEnvironment.map((f) => f.arg), ...commandLine]
  let port = env.PORT === undefined ? 4000 : Number(env.PORT)
  let portGiven = env.PORT ?? "4000"
  let host = "127.0.0.1"
  let basePath = ""
  let store = "./.fos"
  let clockFlag: "system" | "virtual" | undefined
  let clockStart: string | undefined
  let seedPath: string | undefined
  const loadFlags: Array<{ readonly flag: string; readonly variable: string | undefined }> = []
  let randomSeed: string | undefined
  let insecureWebhooks = false
  let retention: string | undefined
  let storeTimeout: string | undefined
  let operatorToken: string | undefined
  let logFormat: "pretty" | "json" = "pretty"
  let quiet = false
  let otlpUrl = env.OTEL_EXPORTER_OTLP_ENDPOINT === "" ? undefined : env.OTEL_EXPORTER_OTLP_ENDPOINT
  let otlpFrom = "OTEL_EXPORTER_OTLP_ENDPOINT"
  let i = 0
  // The variable that set the flag being read, if one did.
  let variable: string | undefined
  for (; i < args.length; i++) {
    const arg = args[i]!
    variable = fromEnvironment[i]?.variable
    try {
      parseFlag(arg)
    } catch (e) {
      // What a variable set is refused under the variable's name, which is what the user wrote.
      if (variable !== undefined && e instanceof UsageError) throw new UsageError(`${variable}: ${e.message}`)
      throw e
    }
  }
  function parseFlag(arg: string) {
    const [name, inline] = arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined]
    const value = () => {
      if (inline !== undefined) return inline
      const v = flagValue(args, i, name)
      i++
      return v
    }
    switch (name) {
      case "--port": portGiven = value(); port = Number(portGiven); break
      case "--host": host = value(); break
      case "--base-path": {
        const v = value()
        try {
          basePath = basePathOf(v, "--base-path")
        } catch (e) {
          throw new UsageError((e as Error).message)
        }
        break
      }
      case "--store": store = value(); break
      case "--clock": {
        const v = value()
        if (v !== "system" && v !== "virtual") throw new UsageError(`--clock is system or virtual, not ${quoted(v)}`)
        clockFlag = v
        break
      }
      case "--clock-start": clockStart = value(); break
      case "--seed": seedPath = value(); break
      case "--load": loadFlags.push({ flag: value(), variable }); break
      case "--random-seed": {
        const v = value()
        if (!/^[\x21-\x7e]{1,256}$/.test(v)) throw new UsageError(`--random-seed is 1 to 256 visible ASCII characters, such as 42, not ${quoted(v)}`)
        randomSeed = v
        break
      }
      case "--insecure-webhooks": insecureWebhooks = true; break
      case "--idempotency-retention-seconds": retention = value(); break
      case "--store-timeout-seconds": storeTimeout = value(); break
      case "--operator-token": operatorToken = value(); break
      case "--log-format": {
        const v = value()
        if (v !== "pretty" && v !== "json") throw new UsageError(`--log-format is pretty or json, not ${quoted(v)}`)
        logFormat = v
        break
      }
      case "--quiet": quiet = true; break
      case "--otlp": {
        otlpUrl = value()
        otlpFrom = variable ?? "--otlp"
        break
      }
      default: throw unknownFlag(name, [...Object.values(serveEnvironment), "--help", "--version"], "fos serve")
    }
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port (FOS_PORT, PORT) is a whole number from 0 to 65535, not ${quoted(portGiven)}`)
  if (store === "") throw new UsageError("--store is memory, a directory (PGlite) or a postgres:// URL")
  // A URL of another database is not a directory name: refused before anything is created.
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(store)?.[1]
  if (scheme !== undefined && !/^postgres(ql)?$/i.test(scheme)) {
    // Only the scheme is named: the rest of a URL may hold a password.
    throw new UsageError(`--store is memory, a directory (PGlite) or a postgres:// or postgresql:// URL, not a ${quoted(`${scheme}://`)} URL`)
  }
  // A seed is for reproducing a run, so with one the clock is virtual and starts at a fixed instant unless a flag
  // says otherwise (Clocks.seededStartMs); without one, the system clock.
  const clock = clockFlag ?? (randomSeed === undefined ? "system" : "virtual")
  let clockStartMs = randomSeed === undefined ? undefined : Clocks.seededStartMs
  if (clockStart !== undefined) {
    if (clock !== "virtual") throw new UsageError(randomSeed === undefined ? "--clock-start goes with --clock virtual" : "--clock-start goes with a virtual clock, not --clock system")
    clockStartMs = parseIso(clockStart)
    if (clockStartMs === undefined) throw new UsageError("--clock-start is an ISO 8601 timestamp with a time zone, such as 2026-01-01T00:00:00Z")
  }
  if (clock === "system") clockStartMs = undefined
  let idempotencyRetentionMs: number | undefined
  if (retention !== undefined) {
    const seconds = Number(retention)
    if (!Number.isInteger(seconds) || seconds < 1) throw new UsageError("--idempotency-retention-seconds is a whole number of seconds, at least 1")
    idempotencyRetentionMs = seconds * 1000
  }
  let storeTimeoutMs: number | undefined
  if (storeTimeout !== undefined) {
    const seconds = Number(storeTimeout)
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > 86_400) throw new UsageError("--store-timeout-seconds is a whole number of seconds, from 1 to 86400")
    storeTimeoutMs = seconds * 1000
  }
  let seed: Seed.SeedFile | undefined
  if (seedPath !== undefined) {
    // The seed itself rather than its file's path (a `{`), for a container configured by variables alone.
    const inline = seedPath.trimStart().startsWith("{")
    const named = inline ? "--seed (the JSON given)" : `--seed ${quoted(seedPath)}`
    let text: string
    try {
      text = inline ? seedPath : readFileSync(seedPath, "utf8")
    } catch (e) {
      throw new UsageError(`${named}: cannot read the file (${(e as NodeJS.ErrnoException).code ?? "error"})`)
    }
    const parsed = Effect.runSync(Effect.result(Seed.parse(text)))
    if (parsed._tag === "Failure") throw new UsageError(`${named}: ${parsed.failure.detail}`)
    seed = parsed.success
  }
  const loads = loadFlags.map(({ flag, variable }) => {
    try {
      return loadOf(flag)
    } catch (e) {
      if (variable !== undefined && e instanceof UsageError) throw new UsageError(`${variable}: ${e.message}`)
      throw e
    }
  })
  function loadOf(flag: string) {
    const at = flag.indexOf("=")
    const organizationId = at < 0 ? "" : flag.slice(0, at)
    const path = at < 0 ? "" : flag.slice(at + 1)
    if (!isOrganizationId(organizationId) || path === "") {
      throw new UsageError(`--load is ORG=FILE, an organization's id and a snapshot file (such as org_acme=world.json), not ${quoted(flag)}`)
    }
    let text: string
    try {
      text = readFileSync(path, "utf8")
    } catch (e) {
      throw new UsageError(`--load ${quoted(flag)}: cannot read the file (${(e as NodeJS.ErrnoException).code ?? "error"})`)
    }
    try {
      return { organizationId, path, file: JSON.parse(text) as unknown }
    } catch {
      throw new UsageError(`--load ${quoted(flag)}: the file is not JSON (a snapshot file is what fos snapshots export prints)`)
    }
  }
  if (new Set(loads.map((l) => l.organizationId)).size !== loads.length) throw new UsageError("--load names an organization twice: one file per organization")
  if (operatorToken !== undefined && operatorToken.length < 16) throw new UsageError("--operator-token (FOS_OPERATOR_TOKEN) needs at least 16 characters")
  const otlp = otlpUrl === undefined
    ? undefined
    : { url: otlpEndpoint(otlpUrl, otlpFrom), headers: otlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS), serviceName: env.OTEL_SERVICE_NAME || "fos" }
  return { port, host, basePath, store, clock, clockStartMs, seed, loads, randomSeed, insecureWebhooks, idempotencyRetentionMs, storeTimeoutMs, operatorToken, logFormat, quiet, otlp }
}

/** An OTLP/HTTP collector's base URL, as OpenTelemetry's SDKs read OTEL_EXPORTER_OTLP_ENDPOINT: http or https. */
const otlpEndpoint = (url: string, from: string): string => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new UsageError(`${from} is a collector's base URL, such as http://127.0.0.1:4318, not ${quoted(url)}`)
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new UsageError(`${from} is an http:// or https:// URL (OTLP/HTTP), not a ${quoted(`${parsed.protocol}//`)} URL`)
  return url
}

/**
 * OTEL_EXPORTER_OTLP_HEADERS as OpenTelemetry's SDKs read it: `name=value` pairs separated by commas, each part
 * percent-decoded and trimmed; a pair without `=` is skipped.
 */
const otlpHeaders = (text: string | undefined): Record<string, string> => {
  const headers: Record<string, string> = {}
  for (const pair of (text ?? "").split(",")) {
    const at = pair.indexOf("=")
    if (at <= 0) continue
    try {
      headers[decodeURIComponent(pair.slice(0, at)).trim().toLowerCase()] = decodeURIComponent(pair.slice(at + 1)).trim()
    } catch {
      throw new UsageError("OTEL_EXPORTER_OTLP_HEADERS is name=value pairs separated by commas, percent-encoded")
    }
  }
  return headers
}

/**
 * The store a `--store` value names: memory, PostgreSQL by URL (with `timeoutMs`, `--store-timeout-seconds`), or
 * PGlite in a directory. The server keeps a new PGlite directory's template cluster in the user's cache
 * (docs/storage.md, "A new directory's cluster"), where an embedded engine keeps none, and its long work pauses for
 * the requests of other clients (docs/storage.md, "Long work and other requests"). The SQL stores' modules
 * (`@fos/sql`, PGlite, `@effect/sql-pg`) are loaded only for a store that needs them, so that a start on the memory
 * store does not pay for them (docs/decisions/0010-a-start-loads-what-it-uses.md).
 */
export const storeLayer = async (store: string, timeoutMs?: number): Promise<{
  readonly layer: Layer.Layer<Store.Store, unknown>
  readonly where: string
  /** PGlite's directory, absolute. */
  readonly directory?: string
}> => {
  if (store === "memory") return { layer: MemoryStore.layer, where: "memory store" }
  const { layerPgliteStore, layerPostgresStore, redactUrl, userTemplateCache } = await import("@fos/sql")
  if (/^postgres(ql)?:\/\//i.test(store)) return { layer: layerPostgresStore(store, timeoutMs === undefined ? {} : { timeout: timeoutMs }), where: `PostgreSQL ${redactUrl(store)}` }
  const dir = resolve(store)
  return { layer: layerPgliteStore(dir, { templateCache: userTemplateCache(), pauses: true }), where: `PGlite directory ${dir}`, directory: dir }
}
