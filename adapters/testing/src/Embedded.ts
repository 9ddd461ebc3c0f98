/**
 * An embedded engine for tests (`createEngine` from `@fos/http`) with one organization and its key, seeded and on a
 * virtual clock unless told otherwise, optionally started from a fixture; and the same engine served over node:http,
 * for what cannot call `engine.fetch` (test workers in other processes, the application under test).
 *
 * Serving is a bridge of a few lines from node:http's request to the engine's `fetch` and back, rather than `fos
 * serve` (`@fos/node`, which brings the command line, PGlite and `@effect/platform-node`): a test suite installs
 * `@fos/testing` and its engine and nothing more, and the served engine is the one the suite configured (its seed,
 * clock, fixture and options).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Readable } from "node:stream"
import type { SnapshotFile } from "@fos/contract"
import type { ClockOption, CreateEngineOptions, Engine } from "@fos/http"
import { load } from "./Load.ts"
import { buildFixture, type Fixture, loadFixture, makeWorld, type World } from "./World.ts"

/** The seed an engine of `startEngine` gets unless given one: tests reproduce by default (docs/testing.md). */
export const defaultRandomSeed = 1

/** How a fixture is given: built by a function in the world, or an exported snapshot file (a path, or its JSON). */
export type FixtureSource<F> = ((world: World<unknown>) => Promise<F>) | string | URL | SnapshotFile

export interface StartEngineOptions<F = undefined> {
  /**
   * Every id, secret and number the engine invents comes from it, each organization's from a stream of its own
   * (docs/testing.md): the same test gives the same ids. 1 when omitted.
   */
  readonly randomSeed?: string | number
  /**
   * The engine's time: virtual by default, from the seed's fixed instant (Tuesday 2026-03-03T09:00:00.000Z), or
   * `{ mode: "virtual", start }`; `"system"` for real time.
   */
  readonly clock?: ClockOption
  /** The organization's id: `org_test` when omitted. */
  readonly organizationId?: string
  /**
   * A world to start from: built once by a function (its answer is the fixture's `data`, `world.fixture`), or an
   * exported snapshot file imported and restored.
   */
  readonly fixture?: FixtureSource<F>
  /**
   * The rest of `createEngine`'s options (store, worldModel, webhookTransport, signatureClock, …). Loopback webhook
   * URLs are allowed (`insecureWebhooks: true`) unless this says otherwise, for receivers in the test's process.
   */
  readonly engine?: Omit<CreateEngineOptions, "randomSeed" | "clock" | "seed">
}

/** An engine served over HTTP on this machine. */
export interface ServedEngine {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string
  /** `<origin>/sandbox`, what `connect` and `createClient` take. */
  readonly baseUrl: string
  /** Stops listening (the engine stays open). */
  readonly close: () => Promise<void>
}

export interface FosEngine<F = undefined> {
  readonly engine: Engine
  /** The organization's sandbox, over `engine.fetch`. */
  readonly world: World<F>
  /** The fixture the engine started from, when given: restore `fixture.snapshotId` to go back to it. */
  readonly fixture: Fixture<F> | undefined
  /** Serves the engine over node:http (127.0.0.1 and a free port unless told), until `close`. */
  readonly serve: (options?: { readonly port?: number; readonly host?: string }) => Promise<ServedEngine>
  /** Closes the world's receivers, the servers and the engine. */
  readonly close: () => Promise<void>
}

/** A read-write sandbox key: the prefix and 64 hex characters, from a cryptographic source. */
const newSandboxKey = (): string =>
  `ck_sandbox_${[...crypto.getRandomValues(new Uint8Array(32))].map((b) => b.toString(16).padStart(2, "0")).join("")}`

/**
 * Starts an embedded engine holding one active organization with an admin and a read-write sandbox key, on a
 * virtual clock, seeded; and the fixture, built or imported, in its sandbox.
 */
export const startEngine = async <F = undefined>(options: StartEngineOptions<F> = {}): Promise<FosEngine<F>> => {
  const organizationId = options.organizationId ?? "org_test"
  const apiKey = newSandboxKey()
  // The engine, loaded by the first call: a suite against a running server, and every test file, loads none of it.
  const { createEngine } = await load(() => import("@fos/http"))
  const engine = await createEngine({
    insecureWebhooks: true,
    ...options.engine,
    randomSeed: options.randomSeed ?? defaultRandomSeed,
    clock: options.clock ?? "virtual",
    seed: {
      organizations: [{
        id: organizationId,
        name: "fos testing",
        status: "active",
        users: [{ id: "usr_test", email: "test@fos-testing.test", role: "admin" }],
        apiKeys: [{ key: apiKey, access: "read_write", createdBy: "usr_test" }]
      }]
    }
  })
  const servers: Array<ServedEngine> = []
  const worldOf = <D>(fixture: D) =>
    makeWorld<D>({ baseUrl: `http://fos${engine.basePath}/sandbox`, apiKey, fetch: engine.fetch, organizationId, fixture })
  try {
    let fixture: Fixture<F> | undefined
    const source = options.fixture
    if (typeof source === "function") {
      fixture = await buildFixture(worldOf(undefined), source)
    } else if (source !== undefined) {
      const base = worldOf(undefined)
      const loaded = await loadFixture(base, source)
      await base.restore(loaded.snapshotId)
      fixture = loaded as Fixture<unknown> as Fixture<F>
    }
    const world = worldOf(fixture?.data as F)
    return {
      engine,
      world,
      fixture,
      serve: async (serveOptions = {}) => {
        const served = await serveEngine(engine, serveOptions)
        servers.push(served)
        return served
      },
      close: async () => {
        await world.close()
        for (const server of servers.splice(0)) await server.close()
        await engine.close()
      }
    }
  } catch (error) {
    await engine.close()
    throw error
  }
}

/** Node's request as a web `Request` for the engine: the same method, target, headers and body stream. */
const webRequest = (request: IncomingMessage, origin: string, signal: AbortSignal): Request => {
  const headers = new Headers()
  for (let i = 0; i + 1 < request.rawHeaders.length; i += 2) headers.append(request.rawHeaders[i]!, request.rawHeaders[i + 1]!)
  const method = request.method ?? "GET"
  const body = method === "GET" || method === "HEAD" ? undefined : Readable.toWeb(request) as ReadableStream<Uint8Array>
  return new Request(new URL(request.url ?? "/", `http://${request.headers.host ?? origin}`), {
    method,
    headers,
    signal,
    ...(body === undefined ? {} : { body, duplex: "half" })
  } as RequestInit)
}

/** Writes the engine's answer; a streamed body (the live stream) is piped until the client goes. */
const writeResponse = (response: Response, to: ServerResponse): void => {
  to.statusCode = response.status
  for (const [name, value] of response.headers) if (name !== "set-cookie") to.setHeader(name, value)
  const cookies = response.headers.getSetCookie()
  if (cookies.length > 0) to.setHeader("set-cookie", cookies)
  if (response.body === null) {
    to.end()
    return
  }
  Readable.fromWeb(response.body as import("node:stream/web").ReadableStream<Uint8Array>).on("error", () => to.destroy()).pipe(to)
}

/**
 * Serves an engine over node:http: every request to `engine.fetch`, and its answer back, streamed. A request the
 * engine drops with no answer (a sandbox fault's `dropped_connection`) closes its connection, as `fos serve` does.
 * The caller's IP address is not passed on, so keep API keys without an IP allowlist. The base URL is under the
 * engine's base path, when it has one.
 */
export const serveEngine = async (
  engine: Pick<Engine, "fetch"> & { readonly basePath?: string },
  options: { readonly port?: number; readonly host?: string } = {}
): Promise<ServedEngine> => {
  const host = options.host ?? "127.0.0.1"
  let origin = ""
  const server = createServer((request, response) => {
    const aborted = new AbortController()
    response.on("close", () => aborted.abort())
    engine.fetch(webRequest(request, origin.slice("http://".length), aborted.signal)).then(
      (answer) => writeResponse(answer, response),
      () => response.destroy()
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, host, () => resolve())
  })
  const address = server.address() as AddressInfo
  origin = `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`
  return {
    origin,
    baseUrl: `${origin}${engine.basePath ?? ""}/sandbox`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}
