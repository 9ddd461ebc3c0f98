/**
 * `fos serve`: the engine's HTTP application on Node's HTTP server.
 *
 * One process serves both environments, sandbox at `<origin>/sandbox` and production at `<origin>/live`, and
 * prints one line per environment once it listens. SIGTERM or SIGINT stops accepting connections, lets the
 * requests in flight finish, then exits.
 */
import { createServer } from "node:http"
import { randomBytes } from "node:crypto"
import { lookup } from "node:dns/promises"
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { ensureDemoOrganization, layerMemoryStore, parseIso, parseSeed, type SeedFile, type Store, TransportError } from "@fos/core"
import { describeStoreFailure, layerPgliteStore, layerPostgresStore, redactUrl } from "@fos/sql"
import { createEngine, layerRoutes } from "@fos/http"
import { Cause, Effect, Exit, Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"

export interface ServeOptions {
  readonly port: number
  readonly host: string
  readonly store: string
  readonly clock: "system" | "virtual"
  readonly clockStartMs: number | undefined
  readonly seed: SeedFile | undefined
  readonly insecureWebhooks: boolean
  readonly idempotencyRetentionMs: number | undefined
  /** The operator surface's bearer token; one is minted and printed when none is given. */
  readonly operatorToken: string | undefined
}

/** A bad flag or seed: the message names the problem; the process exits non-zero having written nothing. */
export class UsageError extends Error {}

const flagValue = (args: ReadonlyArray<string>, i: number, name: string): string => {
  const value = args[i + 1]
  if (value === undefined || value.startsWith("--")) throw new UsageError(`${name} needs a value`)
  return value
}

/** Parses `fos serve` flags (DESIGN.md §2). */
export const parseServeArgs = (args: ReadonlyArray<string>, env: Record<string, string | undefined>): ServeOptions => {
  let port = env.PORT === undefined ? 4000 : Number(env.PORT)
  let host = "127.0.0.1"
  let store = "./.fos"
  let clock: "system" | "virtual" = "system"
  let clockStart: string | undefined
  let seedPath: string | undefined
  let insecureWebhooks = false
  let retention: string | undefined
  let operatorToken = env.FOS_OPERATOR_TOKEN
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
        clock = v
        break
      }
      case "--clock-start": clockStart = value(); break
      case "--seed": seedPath = value(); break
      case "--insecure-webhooks": insecureWebhooks = true; break
      case "--idempotency-retention-seconds": retention = value(); break
      case "--operator-token": operatorToken = value(); break
      default: throw new UsageError(`unknown flag ${JSON.stringify(arg)}`)
    }
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError("--port (or PORT) is a whole number from 0 to 65535")
  if (store === "") throw new UsageError("--store is memory, a directory (PGlite) or a postgres:// URL")
  let clockStartMs: number | undefined
  if (clockStart !== undefined) {
    if (clock !== "virtual") throw new UsageError("--clock-start goes with --clock virtual")
    clockStartMs = parseIso(clockStart)
    if (clockStartMs === undefined) throw new UsageError("--clock-start is an ISO 8601 timestamp with a time zone, such as 2026-01-01T00:00:00Z")
  }
  let idempotencyRetentionMs: number | undefined
  if (retention !== undefined) {
    const seconds = Number(retention)
    if (!Number.isInteger(seconds) || seconds < 1) throw new UsageError("--idempotency-retention-seconds is a whole number of seconds, at least 1")
    idempotencyRetentionMs = seconds * 1000
  }
  let seed: SeedFile | undefined
  if (seedPath !== undefined) {
    let text: string
    try {
      text = readFileSync(seedPath, "utf8")
    } catch (e) {
      throw new UsageError(`--seed ${seedPath}: cannot read the file (${(e as NodeJS.ErrnoException).code ?? "error"})`)
    }
    const parsed = Effect.runSync(Effect.result(parseSeed(text)))
    if (parsed._tag === "Failure") throw new UsageError(`--seed ${seedPath}: ${parsed.failure.detail}`)
    seed = parsed.success
  }
  if (operatorToken !== undefined && operatorToken.length < 16) throw new UsageError("--operator-token (or FOS_OPERATOR_TOKEN) needs at least 16 characters")
  return { port, host, store, clock, clockStartMs, seed, insecureWebhooks, idempotencyRetentionMs, operatorToken }
}

/** Starts the server and runs until SIGTERM or SIGINT. */
/** The store a `--store` value names: memory, PostgreSQL by URL, or PGlite in a directory. */
export const storeLayer = (store: string): { readonly layer: Layer.Layer<Store, unknown>; readonly where: string } => {
  if (store === "memory") return { layer: layerMemoryStore, where: "memory store" }
  if (/^postgres(ql)?:\/\//.test(store)) return { layer: layerPostgresStore(store), where: `PostgreSQL ${redactUrl(store)}` }
  const dir = resolve(store)
  return { layer: layerPgliteStore(dir), where: `PGlite directory ${dir}` }
}

/** A store that cannot be opened: the message says which and why; the data is left as it was. */
export class StoreError extends Error {}

export const serve = async (options: ServeOptions, out: (line: string) => void): Promise<void> => {
  const operatorToken = options.operatorToken ?? randomBytes(32).toString("hex")
  const store = storeLayer(options.store)
  const engine = await createEngine({
    store: store.layer,
    insecureWebhooks: options.insecureWebhooks,
    resolveHost: (host: string) =>
      Effect.tryPromise({
        try: async () => (await lookup(host, { all: true })).map((a) => a.address),
        catch: (e) => new TransportError({ message: `cannot resolve ${host}: ${(e as NodeJS.ErrnoException).code ?? "error"}` })
      }),
    operatorToken,
    clock: options.clock === "virtual"
      ? (options.clockStartMs === undefined ? { mode: "virtual" } : { mode: "virtual", startMs: options.clockStartMs })
      : { mode: "system" },
    ...(options.idempotencyRetentionMs === undefined ? {} : { idempotencyRetentionMs: options.idempotencyRetentionMs }),
    ...(options.seed === undefined ? {} : { seed: options.seed })
  }).catch((e: unknown) => {
    if (typeof e === "object" && e !== null && "detail" in e) throw new UsageError(String((e as { detail: unknown }).detail))
    throw new StoreError(describeStoreFailure(store.where, e))
  })
  if (options.seed === undefined) {
    const demo = await engine.run(ensureDemoOrganization)
    if (demo !== undefined) {
      out(`demo organization ${demo.organizationId} created; its keys are shown once:`)
      out(`  sandbox key: ${demo.sandboxKey}`)
      out(`  live key:    ${demo.liveKey}`)
    }
  }
  if (options.operatorToken === undefined) out(`operator token (for fos keys/orgs/users; set FOS_OPERATOR_TOKEN to choose it): ${operatorToken}`)
  const app = HttpRouter.serve(layerRoutes(Layer.succeedContext(engine.context), { operatorToken }), { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: options.port, host: options.host, gracefulShutdownTimeout: "20 seconds" }))
  )
  const main = Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const address = server.address
    const port = "port" in address ? address.port : options.port
    const origin = `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${port}`
    out(`sandbox: ${origin}/sandbox`)
    out(`live: ${origin}/live`)
    yield* Effect.addFinalizer(() => Effect.promise(() => engine.close()))
    return yield* Effect.never
  }).pipe(Effect.scoped, Effect.provide(app))
  // A stop by SIGTERM or SIGINT is the normal end of a server: exit 0 once the requests in flight are done.
  NodeRuntime.runMain(main as Effect.Effect<never, unknown>, {
    teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause) ? 0 : 1)
  })
}
