/**
 * `fos serve` on any runtime: the engine on its store with the seed or the demo organization, the operator token,
 * and the application on the runtime's HTTP server, with the start lines once it listens.
 *
 * One process serves both environments, sandbox at `<origin>/sandbox` and production at `<origin>/live` (under
 * `--base-path`, when given: `<origin>/fos/sandbox`), and prints one line per environment once it listens.
 * Interrupting the served effect (SIGTERM or SIGINT, by the runtime's adapter) drains the engine (new requests
 * answer 503, those in flight finish), stops the server, then closes the engine.
 *
 * Only `node:dns`, `node:fs` and `node:net` are used here (and `node:http`, `node:https` by the webhook transport),
 * which Bun and Deno implement too.
 */
import { lookup } from "node:dns/promises"
import { existsSync, readFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { Lifecycle, Listeners, Operator, Seed, SnapshotFiles, Store, Transport } from "@fos/core"
import { toIso } from "@fos/contract"
import {
  type ConnectionDropper,
  createEngine,
  type Engine,
  exportOnly,
  formatLogRecord,
  formatRequestLog,
  layerRoutes,
  LiveFeed,
  type LogRecord,
  type OperatorSecret
} from "@fos/http"
import { Context, Effect, Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { makeDemoCustomer } from "./Demo.ts"
import { readDocsAssets } from "./DocsAssets.ts"
import { ListenError, quoted, type ServeOptions, StoreError, storeLayer, UsageError } from "./Options.ts"
import { nodeOtlpClient } from "./OtlpClient.ts"
import { nodeWebhookTransport } from "./Transport.ts"

/** Every address `host` resolves to, by the system's resolver (so /etc/hosts counts, as it would for curl). */
export const resolveHost = (host: string): Promise<ReadonlyArray<string>> =>
  lookup(host, { all: true }).then((addresses) => addresses.map((a) => a.address))

/**
 * Refuses with `ListenError` when the server could not listen on `host`:`port` (in use, or not permitted), by
 * listening there for a moment. Called before the store is opened, so a port in use leaves the store as it was and
 * creates no demo organization whose keys would be printed and lost. Port 0 always succeeds.
 */
export const checkListen = (host: string, port: number): Promise<void> =>
  port === 0
    ? Promise.resolve()
    : new Promise((ok, fail) => {
      const probe = createServer()
      probe.once("error", (e: NodeJS.ErrnoException) => {
        const why = e.code === "EADDRINUSE"
          ? "is in use (another server listens there); stop it or choose another with --port"
          : e.code === "EACCES"
          ? "may not be taken by this user; choose another with --port"
          : `cannot be listened on (${e.code ?? e.message})`
        fail(new ListenError(`port ${port} on ${host} ${why}`))
      })
      probe.listen({ host, port, exclusive: true }, () => probe.close(() => ok()))
    })

/** A record of a request answered through `engine.fetch` (RequestLog.ts, `requestRecord`). */
const isEngineRequest = (record: LogRecord): boolean => typeof record.method === "string" && typeof record.status === "number"

/** Whether the output is a terminal that takes colour (NO_COLOR, https://no-color.org, turns it off). */
const colorAllowed = (): boolean => {
  const proc = (globalThis as { process?: { stdout?: { isTTY?: boolean }; env?: Record<string, string | undefined> } }).process
  return proc?.stdout?.isTTY === true && (proc.env?.NO_COLOR ?? "") === ""
}

const mintToken = (): string =>
  Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0")).join("")

/**
 * Standard output as `--log-format` asks: `line` prints one of the server's own lines (a start line) as it is, or as
 * a JSON log record; `record` prints one of the engine's records, for people or as JSON.
 */
const printerOf = (options: ServeOptions, write: (line: string) => void) => ({
  line: options.logFormat === "json"
    ? (text: string) => write(JSON.stringify({ level: "info", message: text, timestamp: toIso(Date.now()) }))
    : write,
  record: (record: LogRecord) => write(options.logFormat === "json" ? JSON.stringify(record) : formatLogRecord(record))
})

/** An engine as `fos serve` runs it: with the secret its operator surface checks. */
export type ServedEngine = Engine & { readonly operatorSecret: OperatorSecret }

/**
 * Opens the store and builds the engine; on a first start without a seed, creates the demo organization and
 * prints its keys, and on later starts says how to get a key. Throws `ListenError` first when the server could not
 * listen (nothing is written then), `UsageError` for a seed the store refuses and `StoreError` for a store that
 * cannot be opened.
 *
 * The operator token is the one given (`--operator-token`, FOS_OPERATOR_TOKEN) for this process; otherwise the
 * store's: minted and printed on the store's first start, kept as its hash, and the same at every later start
 * (docs/decisions.md, "The operator token"). The memory store keeps nothing, so it mints one at every start.
 */
export const openEngine = async (options: ServeOptions, write: (line: string) => void): Promise<ServedEngine> => {
  const printer = printerOf(options, write)
  const out = printer.line
  await checkListen(options.host, options.port)
  const store = await storeLayer(options.store, options.storeTimeoutMs)
  // Creating a PGlite database takes seconds; say so rather than stay silent.
  if (store.directory !== undefined && !existsSync(join(store.directory, "PG_VERSION"))) {
    out(`creating the PGlite database in ${store.directory} (first start; this takes a few seconds)...`)
  }
  const engine = await createEngine({
    store: store.layer,
    basePath: options.basePath,
    // The engine's warnings and errors on standard output, as `--log-format` prints; the records of the requests the
    // server makes of its engine itself (the demo customer's) are not the request log, which serveEngine writes.
    logger: (record) => {
      if (!isEngineRequest(record)) printer.record(record)
    },
    ...(options.otlp === undefined ? {} : { telemetry: { otlp: options.otlp, otlpClient: nodeOtlpClient } }),
    insecureWebhooks: options.insecureWebhooks,
    // Deliveries go to the addresses checked before each send, with the delivery's headers only.
    webhookTransport: nodeWebhookTransport,
    resolveHost: (host: string) =>
      Effect.tryPromise({
        try: () => resolveHost(host),
        catch: (e) => new Transport.TransportError({ message: `cannot resolve ${host}: ${(e as NodeJS.ErrnoException).code ?? "error"}` })
      }),
    clock: options.clock === "virtual"
      ? (options.clockStartMs === undefined ? { mode: "virtual" } : { mode: "virtual", start: options.clockStartMs })
      : { mode: "system" },
    ...(options.idempotencyRetentionMs === undefined ? {} : { idempotencyRetentionMs: options.idempotencyRetentionMs }),
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(options.randomSeed === undefined ? {} : { randomSeed: options.randomSeed })
  }).catch(async (e: unknown) => {
    if (typeof e === "object" && e !== null && "detail" in e) throw new UsageError(String((e as { detail: unknown }).detail))
    // Loaded here, as storeLayer loads the SQL stores: a start on the memory store does not load @fos/sql.
    const { describeStoreFailure } = await import("@fos/sql")
    throw new StoreError(describeStoreFailure(store.where, e))
  })
  // The sandbox whose time the clock line states: the demo's, which the demo moves (Demo.ts), else the engine's.
  let demoSandbox: string | undefined
  if (options.seed !== undefined) out("keys: those of the seed file (--seed)")
  else {
    const demo = await engine.run(Seed.ensureDemoOrganization)
    if (demo !== undefined) {
      out(`demo organization ${demo.organizationId} created; its keys are shown once:`)
      out(`  sandbox key: ${demo.sandboxKey}`)
      out(`  live key:    ${demo.liveKey}`)
      // A demo that could not be made is a fos bug, said in one line; the organization and its keys still serve.
      const customer = await makeDemoCustomer(engine, demo.sandboxKey, options.clock).catch((e: unknown) => {
        out(`demo customer: not made (${e instanceof Error ? e.message : String(e)})`)
        return undefined
      })
      if (customer !== undefined) {
        demoSandbox = demo.organizationId
        const active = customer.virtualAccountActive ? "active" : "active 30 seconds after this start"
        out(`demo customer ${customer.customerId}, onboarded: USDC wallet ${customer.walletId} on base (${customer.walletAddress}), USD virtual account ${customer.virtualAccountId} (${active})`)
        out(`  for the quick start: export FOS_API_KEY=${demo.sandboxKey} CUSTOMER=${customer.customerId} WALLET=${customer.walletId} ACCOUNT=${customer.virtualAccountId}`)
      }
    } else out(await keyHint(engine, options))
  }
  if (options.loads.length > 0) await loadFiles(engine, options, out)
  let operatorSecret: OperatorSecret
  if (options.operatorToken !== undefined) operatorSecret = options.operatorToken
  else {
    const minted = mintToken()
    const kept = await engine.run(Operator.keepOperatorToken(minted))
    operatorSecret = { sha256: kept.sha256 }
    out(kept.minted
      ? `operator token (for fos keys/orgs/users; ${options.store === "memory" ? "" : "the same at this store's next starts; "}set FOS_OPERATOR_TOKEN to choose it): ${minted}`
      : `operator token: the one printed at this store's first start (${kept.createdAt}), kept as its hash; FOS_OPERATOR_TOKEN or --operator-token sets another for this process`)
  }
  if (options.randomSeed !== undefined) out(`random seed: ${options.randomSeed} (every value fos invents comes from it; the operator token does not)`)
  out(`store: ${store.where}${options.store === "memory" ? " (nothing is kept when the process ends)" : ""}`)
  out(options.clock === "virtual"
    ? `clock: virtual, at ${toIso(await (demoSandbox === undefined ? engine.clock : engine.clockOf(demoSandbox)).now())}; time moves only through POST ${options.basePath}/sandbox/v2/simulate/clock/advance`
    : "clock: system (real time)")
  return { ...engine, operatorSecret }
}

/**
 * `--load ORG=FILE`: each file's world restored in its organization's sandbox, all in one store transaction, so a
 * start whose files do not all load loads none (SnapshotFiles.ts, `load`), and fails with the problem (status 2).
 */
const loadFiles = async (engine: Engine, options: ServeOptions, out: (line: string) => void): Promise<void> => {
  const loaded = await engine.run(Effect.flatMap(Store.Store, (store) =>
    store.transaction(Effect.forEach(options.loads, (load) =>
      SnapshotFiles.load(load.organizationId, load.file).pipe(
        Effect.mapError((problem) => ({ load, problem })),
        Effect.map((done) => ({ load, ...done }))
      ))))).catch(async (e: unknown) => {
    await engine.close()
    const failed = e as { load?: ServeOptions["loads"][number]; problem?: { code: string; detail: string; errors?: ReadonlyArray<{ pointer: string; detail: string }> } }
    if (failed.load === undefined || failed.problem === undefined) throw e
    const errors = (failed.problem.errors ?? []).slice(0, 10).map((entry) => `\n  ${entry.pointer} ${entry.detail}`).join("")
    throw new UsageError(`--load ${quoted(`${failed.load.organizationId}=${failed.load.path}`)}: ${failed.problem.code}: ${failed.problem.detail}${errors}`)
  })
  for (const { load, snapshot, imported } of loaded) {
    out(`loaded ${load.path} into ${load.organizationId}'s sandbox: snapshot ${snapshot.id} (${snapshot.rows} rows${imported ? "" : ", imported at an earlier start"}), restored`)
  }
}

/**
 * On a start that created no keys: keys are shown only when created, so this says how to create one. The command
 * names this server with `--server` unless it is the command line's default (127.0.0.1:4000, no base path); a free
 * port (0) is known only once the server listens, on the base address lines below.
 */
const keyHint = async (engine: Engine, options: ServeOptions): Promise<string> => {
  const organizations = await engine.run(Operator.listOrganizations)
  const first = organizations[0]
  const users = first === undefined ? [] : await engine.run(Effect.orElseSucceed(Operator.listUsers(first.id), () => []))
  const admin = users.find((u) => u.role === "admin" && u.removedAt === undefined)
  const org = first?.id ?? "ORG_ID"
  const server = options.port === 4000 && options.host === "127.0.0.1" && options.basePath === ""
    ? ""
    : options.port === 0
    ? " --server ORIGIN"
    : ` --server http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${options.port}${options.basePath}`
  const origin = options.port === 0 ? "; ORIGIN is this server's address, on the sandbox: line below without /sandbox" : ""
  return `keys: shown only when created (stored as hashes); make one with: fos keys create --org ${org} --user ${admin?.id ?? "USER_ID"} --env sandbox --access read_write${server} (npx fos ... in the repository; fos users list --org ${org}${server} lists the users${origin})`
}

/**
 * Serves `engine` on `server` until interrupted. Prints the start lines once the server listens; on interruption
 * the live streams end first (a stream is a request that never finishes by itself, and the server waits for the
 * requests in flight), then the server stops, then the engine closes.
 */
export const serveEngine = <E>(
  engine: ServedEngine,
  options: ServeOptions,
  server: Layer.Layer<HttpServer.HttpServer, E>,
  write: (line: string) => void,
  /** How the runtime's server drops a connection with no answer (a sandbox fault's `dropped_connection`), if it can. */
  dropConnection?: ConnectionDropper,
  /** What the runtime's server does as a stop begins, before the engine refuses new requests. */
  stopping?: () => void
): Effect.Effect<never, E> => {
  const feed = LiveFeed.makeOf(engine.context)
  const out = printerOf(options, write).line
  const app = HttpRouter.serve(layerRoutes(Layer.succeedContext(engine.context), {
    operatorToken: engine.operatorSecret,
    basePath: engine.basePath,
    // The reference page at /docs, with Swagger UI's files from the installed swagger-ui-dist.
    docs: readDocsAssets((file) => readFileSync(file)),
    // One line per request on the same output as the start lines; coloured only in a terminal that allows it.
    requestLog: options.quiet ? undefined : (entry) => write(formatRequestLog(entry, options.logFormat, { color: colorAllowed() })),
    dropConnection,
    liveFeed: feed
  }), {
    disableLogger: true,
    disableListenLog: true
  }).pipe(
    // Requests then run in a context that holds the engine's services, so the pipeline adds only the caller to it.
    Layer.provide(Layer.succeedContext(engine.context)),
    Layer.provideMerge(server)
  )
  return Effect.gen(function*() {
    const address = (yield* HttpServer.HttpServer).address
    const port = "port" in address ? address.port : options.port
    // Where fos is: the origin, and the base path under it when one is given.
    const origin = `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${port}${engine.basePath}`
    // The inspector first: the base addresses stay the last start lines, which scripts and tests wait for.
    out(`inspector: ${origin}/inspect`)
    out(`sandbox: ${origin}/sandbox`)
    out(`live: ${origin}/live`)
    // The start, to the export too (printed already): a log pipeline sees each start of the service.
    if (options.otlp !== undefined) {
      yield* Effect.promise(() => engine.run(exportOnly(Effect.logInfo("fos serving").pipe(Effect.annotateLogs({ sandbox: `${origin}/sandbox`, live: `${origin}/live` })))))
    }
    // A stop ends the live streams and answers the `fos listen` polls waiting first, so that the wait for the
    // requests in flight is not held up by them (LiveFeed.ts, webhooks/Listeners.ts). Then the runtime's server is
    // told (`stopping`: Node's ends each connection at its next answer), and the engine's drain, the
    // one `engine.close()` runs (kernel/Lifecycle.ts): a request on a connection still open answers 503 from now
    // on, and those in flight finish; the server then stops with nothing left to wait for, and the engine closes.
    return yield* Effect.onInterrupt(
      Effect.never,
      () =>
        Effect.andThen(
          Effect.andThen(feed.closeAll, Context.get(engine.context, Listeners.ListenerHub).close),
          Effect.andThen(Effect.sync(() => stopping?.()), Context.get(engine.context, Lifecycle.Lifecycle).drain())
        )
    )
  }).pipe(Effect.provide(app), Effect.ensuring(Effect.promise(() => engine.close())))
}
