/**
 * A running engine with its HTTP application: what the servers serve and what a host embeds.
 *
 * `createEngine` builds the engine services once (store, clock, limiter, scheduler), applies a seed, and
 * exposes the same HTTP semantics as a fetch-style function with no port, the virtual clock's controls, and the
 * webhook deliveries it sent. `layerEmbedded` is the same engine as a Layer, for hosts written with Effect. Many
 * engines can run side by side in one process; they share nothing.
 */
import type { Tenancy, Transport, WorldModel } from "@fos/core"
import { Auth, Clocks, Engine as EngineModule, Forks, Lifecycle, Listeners, MemoryStore, Operator, Problem, RandomStreams, Readiness, RefusedText, Seed, SnapshotFiles, Snapshots, Store, Timers } from "@fos/core"
import { createClient, type PromiseClient } from "@fos/client"
import type { Fork, ForkSummary, Snapshot, WebhookFlush } from "@fos/contract"
import { Clock, Context, Duration, Effect, Layer, ManagedRuntime, Metric, Tracer } from "effect"
import { constTrue } from "effect/Function"
import { OtlpExporter } from "effect/observability"
import { HttpMiddleware, HttpRouter, HttpServer, type HttpServerRequest } from "effect/http"
import { layerRoutes } from "./App.ts"
import { basePathOf } from "./BasePath.ts"
import { settleScopeSites } from "./ScopeSites.ts"
import * as EngineTime from "./EngineTime.ts"
import type { HostIdentity } from "./HostIdentity.ts"
import type { ServeOptions } from "./Served.ts"
import * as LiveFeed from "./LiveFeed.ts"
import { metricsText } from "./Metrics.ts"
import { requestRecord, type RequestLogger } from "./RequestLog.ts"
import { Deliveries, type DeliveriesService, flushWebhooks, type FlushOptions, makeRecorder } from "./SentDeliveries.ts"
import { checkOtlp, type EngineLogger, layerLogger, layerOtlp, type TelemetryOptions } from "./Telemetry.ts"
import { httpTransport } from "./Transport.ts"

// The engine's time and the deliveries it sent are modules of their own (EngineTime.ts, SentDeliveries.ts); the
// package exports them from here, as it always has, and keeps what they share with this module to itself.
export {
  advanceBy,
  advanceSandboxBy,
  advanceSandboxTo,
  advanceTo,
  type IdleReport,
  runSandboxUntilIdle,
  runUntilIdle,
  type RunUntilIdleOptions,
  type SandboxAdvanceReport,
  sandboxNow
} from "./EngineTime.ts"
export {
  type Answer,
  Deliveries,
  type DeliveriesService,
  type DeliveryAttempt,
  flushWebhooks,
  type FlushOptions,
  type SentDelivery,
  type WebhookEnvelope
} from "./SentDeliveries.ts"

// --- options -----------------------------------------------------------------------------------------------------

/**
 * The engine's time: `"system"`, or `"virtual"`, which stands still until told to move and starts at `start` (an ISO
 * 8601 instant with its zone, a Date, or epoch milliseconds). Without a
 * `randomSeed` the default is `"system"` and a virtual clock starts at the real time; with one, the default is
 * `"virtual"` and it starts at `Clocks.seededStartMs` (Tuesday 2026-03-03T09:00:00.000Z), so that the seed alone
 * reproduces a run whatever the day and hour it runs (docs/testing.md).
 */
export type ClockOption =
  | "system"
  | "virtual"
  | { readonly mode: "system" }
  | { readonly mode: "virtual"; readonly start?: string | number | Date }

/**
 * How webhook deliveries leave the engine: `"http"` (the default: POSTs to the endpoints' URLs), `"memory"` (an
 * in-process receiver that records every delivery in `engine.deliveries` and answers 200, or what
 * `engine.deliveries.answerWith` says), or any transport (`Transport.callback(...)` from `@fos/core`).
 */
export type WebhookTransportOption = "http" | "memory" | Transport.WebhookTransportService

/** `StoreError`: how the store's layer may fail to open (`layerEmbedded`'s error, with a seed's `ApiError`). */
export interface CreateEngineOptions<StoreError = unknown> extends Omit<EngineModule.EngineOptions, "store" | "clock" | "webhookTransport"> {
  /** `"memory"` (the default) or a store Layer (`layerPgliteStore(dir)`, `layerPostgresStore(url)` from `@fos/sql`). */
  readonly store?: "memory" | Layer.Layer<Store.Store, StoreError>
  /**
   * How long the PostgreSQL store waits for an answer from its database (a statement, or a connection's start)
   * before it takes it as unreachable and the request answers 503 SERVICE_UNAVAILABLE: a duration ("10 seconds", the
   * default) or milliseconds. A store layer given a timeout of its own keeps it; the memory and PGlite stores have no
   * network and none.
   */
  readonly storeTimeout?: Duration.Input
  readonly clock?: ClockOption
  readonly webhookTransport?: WebhookTransportOption
  /**
   * Records what any transport sent in `engine.deliveries` (always on with the `"memory"` transport). The record
   * grows with every attempt and lives in memory, so long-running servers leave it off.
   */
  readonly recordDeliveries?: boolean
  /**
   * Makes every id, secret, address, account number, hash and correlation id the engine invents reproducible: each
   * organization's environment draws from a stream of its own derived from this seed (docs/testing.md). Without
   * one, values are random, and secrets come from WebCrypto.
   */
  readonly randomSeed?: string | number
  /** Organizations, users and keys to create first (the same shape as `fos serve --seed`). */
  readonly seed?: Seed.SeedFile
  /** Turns the operator surface (`/operator/...`) on, guarded by this bearer token. */
  readonly operatorToken?: string
  /**
   * The path the host mounts the engine at (`/fos`): every route is under it, as a server at that path would have
   * them, so a host forwards `/fos/...` unchanged to `fetch`, and every address fos hands out carries it (problems'
   * `docs` and `instance`, the OpenAPI documents' `servers`, the error reference's, the inspector's and the
   * reference page's links). A path without it is a 404. `/` and segments of letters, digits, `-`, `.`, `_` and
   * `~`; none by default (docs/embedding.md, "A mount path").
   */
  readonly basePath?: string
  /**
   * Receives one entry per request `engine.fetch` answers (off by default: a test suite's output stays its own).
   * `(entry) => console.log(formatRequestLog(entry, "pretty"))` prints what `fos serve` prints. Whether given or
   * not, the engine keeps each organization's last 500 requests for `GET /sandbox/v2/simulate/requests` and its live
   * stream (docs/inspect.md).
   */
  readonly requestLog?: RequestLogger
  /**
   * Receives the engine's log records instead of standard output (docs/observability.md, "Logs"): its warnings and
   * errors (a timer that failed, a webhook send that failed, an unexpected failure of a request), each with what is
   * known of it (a request's `correlationId` and `organizationId`, a timer's id and kind), and, from `createEngine`,
   * one `info` record per request answered (the request log's entry as fields). Without it, Effect's console logger
   * prints the warnings and errors, as any Effect program's; an Effect host (`layerEmbedded`) gets them through its own
   * `Logger` when it gives none.
   */
  readonly logger?: EngineLogger
  /**
   * Where traces, metrics and logs go (docs/observability.md). `tracer`: an Effect `Tracer` (a host's own) that
   * receives a span per request, store transaction, clock advance, timer fired, webhook attempt, snapshot, restore
   * and fork, joined to a request's `traceparent`. `otlp`: a collector's base URL, or `{ url, headers }`, to which they
   * are exported over OTLP/HTTP (JSON) in the background; `engine.close()` sends what is left. Off by default, and
   * then no span is made at all.
   */
  readonly telemetry?: TelemetryOptions
  /**
   * What of the API the engine serves; everything by default. A part left out is no route: `{ live: false }`, `{
   * sandbox: false }`, `{ simulate: false }` (every `/sandbox/v2/simulate/...` endpoint), `{ faults: false }` (the
   * fault endpoints, and every request fault), `{ operator: false }` (docs/embedding.md, "What the engine serves").
   */
  readonly serve?: ServeOptions
}

/** The caller a host authenticated itself: an organization, an environment, an access and, if the host names one, a user. */
export type HostCaller = Auth.HostCaller

/**
 * What `engine.fetch` takes beside the request: a `RequestInit`, and what the host says of the request, which never
 * travels in it (docs/embedding.md, "The host's identity"). `caller`: the caller the host authenticated, admitted
 * with no `x-api-key` (any sent is not read). `clientAddress`: the client's IP address, for the per-address buckets,
 * a key's allowlist and the request log (127.0.0.1 when not given).
 */
export interface EngineRequestInit extends RequestInit {
  readonly caller?: Auth.HostCaller | undefined
  readonly clientAddress?: string | undefined
}

/** A seed as `fos serve --random-seed` takes it (1 to 256 visible ASCII characters), or a safe integer. */
const randomSeedOf = (seed: string | number): string | number => {
  if (typeof seed === "number" ? !Number.isSafeInteger(seed) : !/^[\x21-\x7e]{1,256}$/.test(seed)) {
    throw new RangeError(`randomSeed: ${JSON.stringify(seed)} is not a whole number or 1 to 256 visible ASCII characters`)
  }
  return seed
}

/** `storeTimeout` in milliseconds: 1 ms to about 24 days (what a runtime's timer takes). */
const storeTimeoutMsOf = (timeout: Duration.Input): number => {
  const ms = Duration.toMillis(Duration.fromInputUnsafe(timeout))
  if (!(ms >= 1 && ms <= 2_147_483_647)) throw new RangeError(`storeTimeout: ${String(timeout)} is not a duration from 1 ms to about 24 days`)
  return Math.ceil(ms)
}

/** The clock `clock` names; `seeded`: the engine has a random seed, which makes a virtual clock at a fixed start the default. */
const clockOf = (clock: ClockOption | undefined, seeded: boolean): NonNullable<EngineModule.EngineOptions["clock"]> => {
  const unstarted = seeded ? { mode: "virtual", startMs: Clocks.seededStartMs } as const : { mode: "virtual" } as const
  if (clock === undefined) return seeded ? unstarted : { mode: "system" }
  if (clock === "system") return { mode: "system" }
  if (clock === "virtual") return unstarted
  if (clock.mode === "system") return clock
  return clock.start === undefined ? unstarted : { mode: "virtual", startMs: EngineTime.instantMs(clock.start, "clock.start") }
}

// --- the engine as a Layer ---------------------------------------------------------------------------------------

/** What `layerEmbedded` provides: the engine services and the record of deliveries. */
export type EmbeddedServices = EngineModule.EngineServices | Deliveries

/**
 * The engine for hosts written with Effect, from the same options as `createEngine` (the operator token, the request
 * log, `serve` and the base path aside: they belong to the routes, `layerRoutes`'s options, with `identify` for the callers a host
 * names). Serve it with `layerRoutes(layerEmbedded(options))`, which adds the HTTP application,
 * or turn that into a fetch-style handler with `HttpRouter.toWebHandler`; drive time with `advanceBy`,
 * `advanceTo` and `runUntilIdle`, and read `Deliveries`. Closing its scope drains the engine first, as
 * `engine.close()` does with the default deadline (docs/embedding.md, "Lifecycle").
 */
export const layerEmbedded = <E = never>(options: CreateEngineOptions<E> = {}): Layer.Layer<EmbeddedServices, E | Problem.ApiError> =>
  Layer.unwrap(Effect.sync(() => {
    // First, before any scope of the engine is made (ScopeSites.ts).
    settleScopeSites()
    const { store, storeTimeout, clock, webhookTransport, recordDeliveries, seed, logger, telemetry, operatorToken: _, requestLog: __, serve: ___, basePath: ____, ...rest } = options
    if (telemetry?.otlp !== undefined) checkOtlp(telemetry.otlp)
    const inner = webhookTransport === undefined || webhookTransport === "http"
      ? httpTransport
      : webhookTransport === "memory"
      ? undefined
      : webhookTransport
    const recorder = makeRecorder(inner, inner === undefined || recordDeliveries === true)
    const engine = EngineModule.layer({
      ...rest,
      // Secrets (API keys, webhook signing secrets) are minted from this when there is no seed: WebCrypto, which
      // Node, Bun, Deno and browsers all have, and not Effect's default `Math.random`.
      random: rest.random ?? RandomStreams.randomFromBytes((words) => globalThis.crypto.getRandomValues(words)),
      ...(rest.randomSeed === undefined ? {} : { randomSeed: randomSeedOf(rest.randomSeed) }),
      // A seed may change the world model's money rules too; the embedding option wins over it.
      worldModel: { ...seed?.worldModel, ...rest.worldModel } as WorldModel.WorldModelOptions,
      store: store === undefined || store === "memory"
        ? MemoryStore.layer
        : storeTimeout === undefined
        ? store
        : Layer.provide(store, Layer.succeed(Store.StoreTimeout, storeTimeoutMsOf(storeTimeout))),
      clock: clockOf(clock, rest.randomSeed !== undefined),
      webhookTransport: recorder.transport
    })
    const deliveries = Layer.effect(
      Deliveries,
      Effect.gen(function*() {
        return recorder.attach(yield* Store.Store, yield* Timers.TimeControl, yield* Timers.TimerHandlers)
      })
    )
    const seeded = seed === undefined ? Layer.empty : Layer.effectDiscard(Seed.apply(seed))
    const built = Layer.mergeAll(deliveries, seeded).pipe(Layer.provideMerge(engine), Layer.provideMerge(layerObserved(logger, telemetry, rest.realClock)))
    // The tracer is in the context the engine is built in, so its background fibers (the scheduler, the delivery
    // worker) trace too, and in the engine's context, so its requests and `engine.run` do.
    return telemetry?.tracer === undefined ? built : built.pipe(Layer.provideMerge(Layer.succeed(Tracer.Tracer, telemetry.tracer)))
  }))

/**
 * The loggers and exporters the engine is built under, so that its background work (the scheduler, the webhook
 * sends) and its requests (served in its context) log and trace through them. Built before the engine and closed
 * after it, so the export's last batch holds the close. The export keeps to real time: the clock of the context
 * the engine is built in, never the engine's virtual one.
 */
const layerObserved = (logger: EngineLogger | undefined, telemetry: TelemetryOptions | undefined, realClock: Clock.Clock | undefined): Layer.Layer<never> => {
  if (logger === undefined && telemetry?.otlp === undefined) return Layer.empty
  return Layer.unwrap(Effect.map(Clock.Clock, (clock) => {
    const loggers = logger === undefined ? Layer.empty : layerLogger(logger, realClock ?? clock)
    if (telemetry?.otlp === undefined) return loggers
    // One registry for the exporter to read and the engine to count into (kernel/Metrics.ts takes the context's).
    const registry = Layer.effect(Metric.MetricRegistry, Effect.sync((): Metric.MetricRegistry => new Map()))
    return Layer.flatMap(Layer.provideMerge(layerOtlp(telemetry.otlp, telemetry.otlpClient), Layer.merge(loggers, registry)), (context) => Layer.succeedContext(Context.omit(OtlpExporter.Flusher)(context)))
  }))
}

// --- the engine for hosts that do not use Effect -------------------------------------------------------------------

export interface EngineClock {
  readonly mode: "system" | "virtual"
  /** The clock's time in epoch milliseconds. */
  readonly now: () => Promise<number>
  /** Virtual clock: moves time forward ("15 minutes", "30 seconds", "1 hour", or ms), firing every timer due on the way. */
  readonly advance: (by: Duration.Input) => Promise<void>
  /** Virtual clock: moves time forward to an instant (ISO 8601 with a zone, a Date, or epoch ms). */
  readonly advanceTo: (instant: string | number | Date) => Promise<void>
  /** Virtual clock: fires everything due and everything it leads to; see `runUntilIdle`. */
  readonly runUntilIdle: (options?: EngineTime.RunUntilIdleOptions) => Promise<EngineTime.IdleReport>
}

export interface EngineDeliveries extends DeliveriesService {
  /**
   * Waits until every delivery caused so far has had its attempt (sends run in the background: a request answers
   * before its receivers do); see `flushWebhooks`. Works with every transport, recording or not.
   */
  readonly flush: (options?: FlushOptions) => Promise<WebhookFlush>
}

/** One organization's sandbox clock, embedded: what `POST /sandbox/v2/simulate/clock/advance` does for it. */
export interface SandboxClock {
  readonly mode: "system" | "virtual"
  /** The sandbox clock's time in epoch milliseconds. */
  readonly now: () => Promise<number>
  /** Virtual clock: moves this sandbox's clock forward, firing its timers due on the way; answers what it did. */
  readonly advance: (by: Duration.Input) => Promise<EngineTime.SandboxAdvanceReport>
  /** Virtual clock: moves this sandbox's clock to an instant (ISO 8601 with a zone, a Date, or epoch ms). */
  readonly advanceTo: (instant: string | number | Date) => Promise<EngineTime.SandboxAdvanceReport>
  /** Virtual clock: fires everything due in this sandbox and everything it leads to; see `runUntilIdle`. */
  readonly runUntilIdle: (options?: EngineTime.RunUntilIdleOptions) => Promise<EngineTime.IdleReport>
}

/** An engine's organizations, made and changed as the operator does, with no key minted (`Operator` of `@fos/core`). */
export interface EngineOrganizations {
  /** Makes an organization: `onboarding` and its sandbox provisioned unless told; `rateLimit` is its own limit. */
  readonly create: (input: Operator.NewOrganization) => Promise<Tenancy.Organization>
  /** Rejects with 404 NOT_FOUND for an id that names none. */
  readonly get: (id: string) => Promise<Tenancy.Organization>
  /** Every organization, oldest first. */
  readonly list: () => Promise<ReadonlyArray<Tenancy.Organization>>
  /** Changes an organization (its status, features, own rate limit, ...); answers it as it now is. */
  readonly update: (id: string, change: Tenancy.OrganizationChange) => Promise<Tenancy.Organization>
}

/** An engine's users, made and removed as the operator does. */
export interface EngineUsers {
  readonly create: (input: Operator.NewUser) => Promise<Tenancy.User>
  /** Rejects with 404 USER_NOT_FOUND for an id that names none, or a removed user. */
  readonly get: (id: string) => Promise<Tenancy.User>
  /** An organization's users, its removed ones too (`removedAt`). */
  readonly list: (organizationId: string) => Promise<ReadonlyArray<Tenancy.User>>
  /** Removes a user and revokes the keys it made; its organization's last admin stays (409 LAST_ORG_ADMIN). */
  readonly remove: (id: string) => Promise<{ readonly revokedKeys: number }>
}

/** What `engine.client` binds its client to. */
export interface EngineClientOptions {
  /** The caller every request is made as (see `EngineRequestInit`); its environment is the client's base address. */
  readonly caller: Auth.HostCaller
  readonly clientAddress?: string
  /** The origin the requests name, which a problem's `docs` is on; `http://localhost` when not given. */
  readonly origin?: string
}

export interface Engine {
  /**
   * The HTTP API with no port: `fetch`'s signature, so it can stand in for `fetch` in any HTTP client; beside a
   * `RequestInit`, it takes the caller a host authenticated and the client's address (`EngineRequestInit`).
   * Rejects with a TypeError for a caller or address that is not one, and, as `fetch` does on a network error,
   * when a sandbox fault drops the connection (docs/embedding.md, "Lifecycle").
   */
  readonly fetch: (input: Request | string | URL, init?: EngineRequestInit) => Promise<Response>
  /**
   * Runs an engine operation (operator calls, reads) against this engine's services. A failure rejects with its
   * error: an `ApiError`'s message is `"<CODE>: <detail>"`, and its `problem` is on it.
   */
  readonly run: <A, E>(effect: Effect.Effect<A, E, EmbeddedServices>) => Promise<A>
  /** The organizations, for a host that maps its own users to them (docs/embedding.md, "The host's identity"). */
  readonly organizations: EngineOrganizations
  readonly users: EngineUsers
  /**
   * The typed client of `@fos/client` (`createClient`) over `engine.fetch`, every request made as `caller`: no key.
   * A problem rejects with its `ProblemError`.
   */
  readonly client: (options: EngineClientOptions) => PromiseClient
  /** The engine services, for a server adapter to serve. */
  readonly context: Context.Context<EmbeddedServices>
  readonly operatorToken: string | undefined
  /** The path every route is under (`CreateEngineOptions.basePath`): `""`, or `/fos`. */
  readonly basePath: string
  /**
   * The engine's root clock, and with it every organization's sandbox clock behind it: an advance moves them all
   * (docs/clock.md). On a system clock, the system's time.
   */
  readonly clock: EngineClock
  /** One organization's sandbox clock: moving it moves no other organization's. */
  readonly clockOf: (organizationId: string) => SandboxClock
  /** The webhook deliveries this engine sent (see `CreateEngineOptions.recordDeliveries`), and the wait for them. */
  readonly deliveries: EngineDeliveries
  /**
   * Saves an organization's whole sandbox (docs/snapshots.md): `organizationId`, or the engine's only organization
   * when it holds one. Rejects with the problem's `ApiError` past the limit of snapshots.
   */
  readonly snapshot: (options?: { readonly organizationId?: string }) => Promise<Snapshot>
  /** Puts the sandbox of the snapshot's organization back as the snapshot saved it, in one transaction. */
  readonly restore: (id: string) => Promise<Snapshot>
  /** An organization's snapshots (the engine's only one when not given), oldest first. */
  readonly snapshots: (options?: { readonly organizationId?: string }) => Promise<ReadonlyArray<Snapshot>>
  /** Deletes a snapshot. */
  readonly deleteSnapshot: (id: string) => Promise<void>
  /**
   * A snapshot as a file (docs/snapshots.md, "Files"): its text, byte for byte what
   * `GET /sandbox/v2/simulate/snapshots/{id}/export` answers, to write to disk and commit.
   */
  readonly exportSnapshot: (id: string) => Promise<string>
  /**
   * Imports a snapshot file (its text, or its JSON already parsed) as a new snapshot of an organization's sandbox:
   * `organizationId`, or the engine's only organization when it holds one. `restore` it to put its world in place.
   * Rejects with the problem's `ApiError` for a file it refuses, having written nothing.
   */
  readonly importSnapshot: (file: unknown, options?: { readonly organizationId?: string }) => Promise<Snapshot>
  /**
   * Forks a snapshot (docs/snapshots.md, "Forks"): a new organization whose sandbox holds the snapshot's world, with
   * its own clock and seeded stream; answers its id, a read-write sandbox key and the map of the world's ids to its
   * own, as `POST /sandbox/v2/simulate/snapshots/{id}/fork` does. The snapshot's id names its organization;
   * `organizationId`, when given, must be it; `stream` names the fork's seeded streams, as `?stream=` does. Rejects
   * with the problem's `ApiError` (404, or 409 past the bound or for a stream whose fork exists).
   */
  readonly fork: (snapshotId: string, options?: { readonly organizationId?: string; readonly stream?: string }) => Promise<Fork>
  /** An organization's forks (the engine's only one, its forks aside, when not given), oldest first. */
  readonly forks: (options?: { readonly organizationId?: string }) => Promise<ReadonlyArray<ForkSummary>>
  /** Deletes a fork with everything in it: its sandbox, snapshots, keys and user. */
  readonly deleteFork: (forkOrganizationId: string) => Promise<void>
  /**
   * The engine's metrics in Prometheus' text format: what `GET /metrics` answers with the operator token
   * (docs/observability.md, "Metrics"). They are this engine's alone, unless the host built it in a context that
   * provides a `Metric.MetricRegistry` of its own: then they are in it too, beside the host's.
   */
  readonly metrics: () => Promise<string>
  /**
   * Stops the engine (docs/embedding.md, "Lifecycle"): from the call on, every new request answers 503
   * SERVICE_UNAVAILABLE with Retry-After; the requests in flight and the timer being fired finish, for up to
   * `deadlineMs` (10 seconds by default), then the store closes. Webhook sends in flight are left to their lease.
   * Once it has resolved the engine answers every request 503, and nothing else. A second call waits for the first.
   */
  readonly close: (options?: CloseOptions) => Promise<void>
  /**
   * Whether the engine can do its work now, as `GET /readyz` answers it (docs/observability.md, "Readiness"): `{ ready:
   * true }` once its store answered a trivial query within 2 seconds, else `{ ready: false, reason }` (the store out
   * of reach or slow, or the engine closing or closed). Never rejects.
   */
  readonly ready: () => Promise<Readiness.Readiness>
}

export interface CloseOptions {
  /** How long the requests in flight may take to finish, in milliseconds of real time; 10,000 by default. */
  readonly deadlineMs?: number
}

/**
 * The organization an embedded snapshot call names: the one given, or the engine's only organization (an engine
 * built for one test suite holds one; the forks it made are organizations too, and not counted), else a TypeError
 * asking for it.
 */
const organizationOf = (options: { readonly organizationId?: string } | undefined) =>
  options?.organizationId !== undefined
    ? Effect.succeed(options.organizationId)
    : Effect.flatMap(Operator.listOrganizations, (all) => {
      const organizations = all.filter((o) => o.forkedFrom === undefined)
      return organizations.length === 1
        ? Effect.succeed(organizations[0]!.id as string)
        : Effect.die(new TypeError(`this engine holds ${organizations.length} organizations: name one, as { organizationId }`))
    })

/**
 * A snapshot file given as text, parsed: 400 MALFORMED_JSON for text that is not JSON, as the HTTP import answers. A
 * file given as a value is copied, since the import keeps its rows as they come (SnapshotFiles.ts, `decode`) and the
 * caller may change the value afterwards; one that cannot be copied (it holds a function) is read as it is. Either
 * holding text the API refuses (a NUL character, an unpaired surrogate: RefusedText.ts) is 400 VALIDATION_ERROR, as
 * the HTTP import's body is; a value is walked whole, text only when it holds such an escape.
 */
const parsedFile = (file: unknown) =>
  Effect.flatMap(
    typeof file !== "string"
      ? Effect.sync(() => {
        try {
          return structuredClone(file)
        } catch {
          return file
        }
      })
      : Effect.try({ try: () => JSON.parse(file) as unknown, catch: () => Problem.apiError("MALFORMED_JSON", "The snapshot file is not valid JSON.") }),
    (value) => {
      const errors = typeof file === "string" && !RefusedText.mayHoldRefusedText(file) ? [] : RefusedText.refusedTextErrors(value)
      return errors.length === 0 ? Effect.succeed(value) : Effect.fail(Problem.invalidRequest(errors))
    }
  )

export const createEngine = async (options: CreateEngineOptions = {}): Promise<Engine> => {
  const basePath = basePathOf(options.basePath)
  // The engine's request span is the server span (Edge.ts), so Effect's own (named by the method alone) is not made:
  // a server serving `engine.context` (fos serve) has the same.
  const runtime = ManagedRuntime.make(Layer.merge(layerEmbedded(options), Layer.succeed(HttpMiddleware.TracerDisabledWhen, constTrue)))
  const context = await runtime.context()
  // The routes' recent requests and live streams, kept here so that a close can end the streams (LiveFeed.ts).
  const feed = LiveFeed.makeOf(context)
  // Built on the first `fetch`: a server adapter serves `context` and never calls it, so it need not build and hold
  // a second copy of the routes.
  let web: { readonly handler: (request: Request) => Promise<Response>; readonly dispose: () => Promise<void> } | undefined
  // The requests whose connection a sandbox fault dropped after their write committed (docs/faults.md): their
  // `fetch` rejects as a network error would, with no answer.
  const dropped = new WeakSet<object>()
  const dropConnection = (request: HttpServerRequest.HttpServerRequest) => {
    dropped.add(request.source as object)
    return true
  }
  // What the host said of each request beside it, keyed by the request (HostIdentity.ts): never read from the
  // request itself, so nothing a client sends can name a caller.
  const identities = new WeakMap<object, HostIdentity>()
  const identify = (request: HttpServerRequest.HttpServerRequest) => identities.get(request.source as object)
  // A host's logger gets a record per request answered, beside the request log's entry if one is asked for too.
  const logger = options.logger
  const requestLog: RequestLogger | undefined = logger === undefined
    ? options.requestLog
    : (entry) => {
      options.requestLog?.(entry)
      logger(requestRecord(entry))
    }
  const handler = (request: Request): Promise<Response> => {
    web ??= HttpRouter.toWebHandler(
      layerRoutes(Layer.succeedContext(context), {
        operatorToken: options.operatorToken,
        requestLog,
        dropConnection,
        identify,
        serve: options.serve,
        basePath,
        liveFeed: feed
      }).pipe(Layer.provide(HttpServer.layerServices)),
      { disableLogger: true }
    )
    return web.handler(request).then((response) => {
      if (!dropped.has(request)) return response
      void response.body?.cancel()
      return Promise.reject(new TypeError("fetch failed", { cause: new Error("the connection was dropped with no answer (a sandbox fault's dropped_connection)") }))
    })
  }
  const run = <A, E>(effect: Effect.Effect<A, E, EmbeddedServices>) => runtime.runPromise(effect)
  const fetch: Engine["fetch"] = (input, init) => {
    if (init === undefined) return handler(input instanceof Request ? input : new Request(input))
    const { caller, clientAddress, ...rest } = init
    const fault = caller === undefined ? undefined : Auth.hostCallerFault(caller)
    if (fault !== undefined) return Promise.reject(new TypeError(`engine.fetch: ${fault}`))
    if (clientAddress !== undefined && (typeof clientAddress !== "string" || !Auth.isIpAddress(clientAddress))) {
      return Promise.reject(new TypeError(`engine.fetch: clientAddress: an IPv4 or IPv6 address, not ${JSON.stringify(clientAddress)}`))
    }
    const request = input instanceof Request && Object.keys(rest).length === 0 ? input : new Request(input, rest)
    if (caller !== undefined || clientAddress !== undefined) identities.set(request, { caller, clientAddress })
    return handler(request)
  }
  let closed: Promise<void> | undefined
  const close = (closeOptions: CloseOptions = {}): Promise<void> => {
    const deadlineMs = closeOptions.deadlineMs ?? Lifecycle.defaultDeadlineMs
    if (!Number.isFinite(deadlineMs) || deadlineMs < 0) {
      return Promise.reject(new RangeError(`close: deadlineMs is a number of milliseconds, at least 0, not ${String(deadlineMs)}`))
    }
    // The live streams end and the `fos listen` polls waiting are answered first, as `fos serve` does: a poll
    // would otherwise hold the drain to its deadline. The routes' handler stays: after the close it answers every
    // request with the closing engine's 503, and holds nothing of the store.
    return closed ??= run(Effect.andThen(
      Effect.andThen(feed.closeAll, Context.get(context, Listeners.ListenerHub).close),
      Context.get(context, Lifecycle.Lifecycle).drain(deadlineMs)
    )).then(() => runtime.dispose())
  }
  return {
    fetch,
    run,
    organizations: {
      create: (input) => run(Operator.createOrganization(input)),
      get: (id) => run(Operator.getOrganization(id)),
      list: () => run(Operator.listOrganizations),
      update: (id, change) => run(Operator.updateOrganization(id, change))
    },
    users: {
      create: (input) => run(Operator.createUser(input)),
      get: (id) => run(Operator.getUser(id)),
      list: (organizationId) => run(Operator.listUsers(organizationId)),
      remove: (id) => run(Operator.removeUser(id))
    },
    client: (clientOptions) => {
      const fault = Auth.hostCallerFault(clientOptions.caller)
      if (fault !== undefined) throw new TypeError(`engine.client: ${fault}`)
      const bound = { caller: clientOptions.caller, clientAddress: clientOptions.clientAddress }
      return createClient({
        baseUrl: `${(clientOptions.origin ?? "http://localhost").replace(/\/+$/, "")}${basePath}/${clientOptions.caller.environment}`,
        fetch: (input, requestInit) => fetch(input, { ...requestInit, ...bound })
      })
    },
    context,
    operatorToken: options.operatorToken,
    basePath,
    clock: {
      mode: Context.get(context, Timers.TimeControl).mode,
      now: () => run(Context.get(context, Timers.TimeControl).now),
      advance: (by) => run(EngineTime.advanceBy(by)),
      advanceTo: (instant) => run(EngineTime.advanceTo(instant)),
      runUntilIdle: (runOptions) => run(EngineTime.runUntilIdle(runOptions))
    },
    clockOf: (organizationId) => ({
      mode: Context.get(context, Timers.TimeControl).mode,
      now: () => run(EngineTime.sandboxNow(organizationId)),
      advance: (by) => run(EngineTime.advanceSandboxBy(organizationId, by)),
      advanceTo: (instant) => run(EngineTime.advanceSandboxTo(organizationId, instant)),
      runUntilIdle: (runOptions) => run(EngineTime.runSandboxUntilIdle(organizationId, runOptions))
    }),
    deliveries: { ...Context.get(context, Deliveries), flush: (flushOptions) => run(flushWebhooks(flushOptions)) },
    snapshot: (snapshotOptions) => run(Effect.flatMap(organizationOf(snapshotOptions), Snapshots.take)),
    restore: (id) => run(Effect.flatMap(Snapshots.owner(id), (organizationId) => Snapshots.restore(organizationId, id))),
    snapshots: (listOptions) => run(Effect.flatMap(organizationOf(listOptions), Snapshots.all)),
    deleteSnapshot: (id) => run(Effect.flatMap(Snapshots.owner(id), (organizationId) => Snapshots.deleteSnapshot(organizationId, id))),
    exportSnapshot: (id) =>
      run(Effect.flatMap(Snapshots.owner(id), (organizationId) => Effect.map(SnapshotFiles.exportFile(organizationId, id), (exported) => exported.text))),
    importSnapshot: (file, importOptions) =>
      run(Effect.flatMap(Effect.all([organizationOf(importOptions), parsedFile(file)]), ([organizationId, parsed]) => SnapshotFiles.importFile(organizationId, parsed))),
    fork: (snapshotId, forkOptions) =>
      run(Effect.flatMap(
        forkOptions?.organizationId === undefined ? Snapshots.owner(snapshotId) : Effect.succeed(forkOptions.organizationId),
        (organizationId) => Forks.make(organizationId, snapshotId, { stream: forkOptions?.stream })
      )),
    forks: (listOptions) => run(Effect.flatMap(organizationOf(listOptions), Forks.list)),
    deleteFork: (forkOrganizationId) => run(Effect.flatMap(Forks.parentOf(forkOrganizationId), (parent) => Forks.remove(parent, forkOrganizationId))),
    metrics: () => run(metricsText(feed)),
    close,
    ready: () => {
      const notReady = { ready: false, reason: Readiness.closingReason } as const
      return closed !== undefined ? Promise.resolve(notReady) : run(Readiness.check).catch(() => notReady)
    }
  }
}
