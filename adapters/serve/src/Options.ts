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
import { layerPgliteStore, layerPostgresStore, redactUrl } from "@fos/sql"
import { Effect, type Layer } from "effect"

export interface ServeOptions {
  readonly port: number
  readonly host: string
  readonly store: string
  readonly clock: "system" | "virtual"
  readonly clockStartMs: number | undefined
  readonly seed: Seed.SeedFile | undefined
  /** Makes every value fos invents reproducible (`--random-seed`); random when undefined. */
  readonly randomSeed: string | undefined
  readonly insecureWebhooks: boolean
  readonly idempotencyRetentionMs: number | undefined
  /** The operator surface's bearer token; one is minted and printed when none is given. */
  readonly operatorToken: string | undefined
  /** How the request log prints: a line for people (`pretty`, the default) or one JSON object per line. */
  readonly logFormat: "pretty" | "json"
  /** No request log (the start lines are still printed). */
  readonly quiet: boolean
}

/** The flags, for usage messages. */
export const serveUsage = `serve [--port N] [--host H] [--store memory|DIR|postgres://URL] [--clock system|virtual] [--clock-start ISO]
      [--seed FILE] [--random-seed N] [--insecure-webhooks] [--idempotency-retention-seconds N] [--operator-token T]
      [--log-format pretty|json] [--quiet]`

/** What `<command> serve --help` prints: every flag with its meaning and default, and examples. */
export const serveHelp = (command: string): string => `usage: ${command} ${serveUsage}

Serves the Financial Operations Service API: sandbox at <origin>/sandbox, production at <origin>/live, the operator
surface at <origin>/operator (for the fos orgs/users/keys commands) and the reference page at <origin>/docs.

flags:
  --port N                          port to listen on; 0 picks a free one              (default: PORT, else 4000)
  --host H                          address to listen on                               (default: 127.0.0.1)
  --store S                         memory: nothing kept after the process ends;
                                    a directory: embedded PGlite, created if missing;
                                    postgres://user:pass@host:port/db: PostgreSQL        (default: ./.fos)
  --clock system|virtual            virtual: time moves only through the clock endpoints
                                    (default: system; virtual with --random-seed)
  --clock-start ISO                 where a new store's virtual clocks start
                                    (default: now; 2026-03-03T09:00:00.000Z with --random-seed)
  --seed FILE                       organizations, users and keys to create (JSON, see the README's "Seed file");
                                    no demo organization then
  --random-seed N                   every id, secret, address, number and hash fos invents comes from N (such as
                                    42), each organization's from a stream of its own, and the clock is virtual from
                                    a fixed instant: on a fresh store, the same requests get the same answers,
                                    whatever the day (docs/testing.md)                  (default: random)
  --idempotency-retention-seconds N how long an idempotent response is replayed         (default: 2592000, 30 days)
  --operator-token T                the operator surface's bearer token, at least 16 characters
                                    (default: FOS_OPERATOR_TOKEN, else the store's: minted and printed at its first
                                    start, the same at later starts)
  --insecure-webhooks               allows webhook URLs on loopback hosts (http:// or https:// to 127.0.0.1, ::1,
                                    localhost), for a receiver on this machine           (default: off)
  --log-format pretty|json          the request log: a line per request, or a JSON object per line (default: pretty)
  --quiet                           no request log (the start lines are still printed)
  --help, --version                 print this, or the version

On its first start on a store, and without --seed, fos creates a demo organization and prints its keys once.

examples:
  ${command} serve                                         # ./.fos, port 4000, the system clock
  ${command} serve --store memory --port 0                 # throwaway data, a free port
  ${command} serve --clock virtual --clock-start 2026-01-01T00:00:00Z --seed seed.json
  ${command} serve --store memory --seed seed.json --random-seed 42      # reproducible: virtual clock from 2026-03-03T09:00Z
  ${command} serve --store postgres://fos:secret@127.0.0.1:5432/fos --log-format json`

/** A bad flag or seed: the message names the problem; the process exits with status 2 having written nothing. */
export class UsageError extends Error {}

/** fos's version: this package's own (src/ and an installed dist/ both sit one folder below its package.json). */
export const fosVersion = (): string =>
  (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version

/** What `--help` and `--version` print, when `args` asks for either (whatever else it holds); else undefined. */
export const infoRequested = (args: ReadonlyArray<string>, usage: string): string | undefined =>
  args.includes("--help") || args.includes("-h") ? usage : args.includes("--version") ? `fos ${fosVersion()}` : undefined

/** A store that cannot be opened: the message says which and why; the data is left as it was. */
export class StoreError extends Error {}

/** An address the server cannot listen on (a port in use, a port it may not take): one line, status 1. */
export class ListenError extends Error {}

const flagValue = (args: ReadonlyArray<string>, i: number, name: string): string => {
  const value = args[i + 1]
  if (value === undefined || value.startsWith("--")) throw new UsageError(`${name} needs a value`)
  return value
}

/** Parses `fos serve` flags; `env` gives PORT and FOS_OPERATOR_TOKEN. */
export const parseServeArgs = (args: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>>): ServeOptions => {
  let port = env.PORT === undefined ? 4000 : Number(env.PORT)
  let host = "127.0.0.1"
  let store = "./.fos"
  let clockFlag: "system" | "virtual" | undefined
  let clockStart: string | undefined
  let seedPath: string | undefined
  let randomSeed: string | undefined
  let insecureWebhooks = false
  let retention: string | undefined
  let operatorToken = env.FOS_OPERATOR_TOKEN
  let logFormat: "pretty" | "json" = "pretty"
  let quiet = false
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    const [name, inline] = arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined]
    const value = () => {
      if (inline !== undefined) return inline
      const v = flagValue(args, i, name)
      i++
      return v
    }
    switch (name) {
      case "--port": port = Number(value()); break
      case "--host": host = value(); break
      case "--store": store = value(); break
      case "--clock": {
        const v = value()
        if (v !== "system" && v !== "virtual") throw new UsageError(`--clock is system or virtual, not ${JSON.stringify(v)}`)
        clockFlag = v
        break
      }
      case "--clock-start": clockStart = value(); break
      case "--seed": seedPath = value(); break
      case "--random-seed": {
        const v = value()
        if (!/^[\x21-\x7e]{1,256}$/.test(v)) throw new UsageError("--random-seed is 1 to 256 visible ASCII characters, such as 42")
        randomSeed = v
        break
      }
      case "--insecure-webhooks": insecureWebhooks = true; break
      case "--idempotency-retention-seconds": retention = value(); break
      case "--operator-token": operatorToken = value(); break
      case "--log-format": {
        const v = value()
        if (v !== "pretty" && v !== "json") throw new UsageError(`--log-format is pretty or json, not ${JSON.stringify(v)}`)
        logFormat = v
        break
      }
      case "--quiet": quiet = true; break
      default: throw new UsageError(`unknown flag ${JSON.stringify(arg)}`)
    }
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError("--port (or PORT) is a whole number from 0 to 65535")
  if (store === "") throw new UsageError("--store is memory, a directory (PGlite) or a postgres:// URL")
  // A URL of another database is not a directory name: refused before anything is created.
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(store)?.[1]
  if (scheme !== undefined && !/^postgres(ql)?$/i.test(scheme)) {
    throw new UsageError(`--store ${scheme}://...: fos stores in memory, in a directory (PGlite) or in PostgreSQL (postgres:// or postgresql://), not ${scheme}`)
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
  let seed: Seed.SeedFile | undefined
  if (seedPath !== undefined) {
    let text: string
    try {
      text = readFileSync(seedPath, "utf8")
    } catch (e) {
      throw new UsageError(`--seed ${seedPath}: cannot read the file (${(e as NodeJS.ErrnoException).code ?? "error"})`)
    }
    const parsed = Effect.runSync(Effect.result(Seed.parse(text)))
    if (parsed._tag === "Failure") throw new UsageError(`--seed ${seedPath}: ${parsed.failure.detail}`)
    seed = parsed.success
  }
  if (operatorToken !== undefined && operatorToken.length < 16) throw new UsageError("--operator-token (or FOS_OPERATOR_TOKEN) needs at least 16 characters")
  return { port, host, store, clock, clockStartMs, seed, randomSeed, insecureWebhooks, idempotencyRetentionMs, operatorToken, logFormat, quiet }
}

/** The store a `--store` value names: memory, PostgreSQL by URL, or PGlite in a directory. */
export const storeLayer = (store: string): {
  readonly layer: Layer.Layer<Store.Store, unknown>
  readonly where: string
  /** PGlite's directory, absolute. */
  readonly directory?: string
} => {
  if (store === "memory") return { layer: MemoryStore.layer, where: "memory store" }
  if (/^postgres(ql)?:\/\//i.test(store)) return { layer: layerPostgresStore(store), where: `PostgreSQL ${redactUrl(store)}` }
  const dir = resolve(store)
  return { layer: layerPgliteStore(dir), where: `PGlite directory ${dir}`, directory: dir }
}
