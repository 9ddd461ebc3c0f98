/**
 * `fos serve` on Node's HTTP server. What every runtime shares (the flags, the store, the seed or demo
 * organization, the start lines, the order of shutdown) is in @fos/serve; this file is the Node part.
 *
 * SIGTERM or SIGINT stops accepting connections, lets the requests in flight finish, then exits 0.
 *
 * What Node's HTTP parser refuses before the application sees it (`clientError`), an `Expect` it does not meet
 * (`checkExpectation`) and CONNECT (`connect`) are answered with a BAD_REQUEST problem (@fos/serve's
 * BareProblem.ts) instead of Node's bare status or a closed connection.
 */
import { createServer, type Server } from "node:http"
import type { Duplex } from "node:stream"
// Each module by its own path: the package's index also re-exports NodeRedis, whose `redis` client (installed as the
// package's peer) is about 650 modules that a start would load and never use (docs/decisions/0010).
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import {
  bareDetail,
  bareInstance,
  bareOrigin,
  bareProblem,
  hostOf,
  openEngine,
  rawAnswer,
  requestTargetOf,
  type ServedEngine,
  type ServeOptions,
  serveEngine
} from "@fos/serve"
import { Cause, Exit } from "effect"
import type { HttpServerRequest } from "effect/http"

/** The address `server` listens on, as a URL's host (for a problem's `docs` when the Host header is unreadable). */
const listeningOn = (server: Server): string => {
  const address = server.address()
  if (address === null || typeof address === "string") return "localhost"
  return address.family === "IPv6" ? `[${address.address}]:${address.port}` : `${address.address}:${address.port}`
}

/** Answers on `socket` with the problem for `code`, then closes it; a socket that cannot be written is destroyed. */
const refuse = (engine: ServedEngine, socket: Duplex, code: string | undefined, requestTarget: string | undefined, origin: string): void => {
  // A response already begun on this connection (the parser failed in a body the application reads) cannot be
  // followed by another: the connection is dropped, as Node does.
  const inProgress = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage
  if (!socket.writable || inProgress?.headersSent === true || code === "ECONNRESET") {
    socket.destroy()
    return
  }
  socket.end(rawAnswer(bareProblem(engine, bareDetail(code), bareInstance(requestTarget), origin)))
}

/**
 * Node's HTTP server, with problems for what its parser refuses, and no connection kept alive once a stop has begun
 * (`closeKeptConnections`).
 */
const makeServer = (engine: ServedEngine): Server => {
  const server = createServer()
  server.on("clientError", (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) => {
    const head = error.rawPacket?.toString("latin1")
    refuse(engine, socket, error.code, requestTargetOf(head), bareOrigin(hostOf(head), listeningOn(server)))
  })
  server.on("checkExpectation", (request, response) => {
    const problem = bareProblem(engine, bareDetail("EXPECTATION"), bareInstance(request.url), bareOrigin(request.headers.host, listeningOn(server)))
    response.shouldKeepAlive = false
    response.writeHead(problem.status, problem.headers).end(problem.body)
  })
  server.on("connect", (request, socket: Duplex) =>
    refuse(engine, socket, "CONNECT", request.url, bareOrigin(request.headers.host, listeningOn(server))))
  return server
}

export { infoRequested, ListenError, parseServeArgs, type ServeOptions, serveHelp, StoreError, storeLayer, UsageError } from "@fos/serve"

/**
 * A sandbox fault's `dropped_connection` (docs/faults.md): the response is destroyed with its socket, so the client
 * sees its connection close with no answer; the write it sent has committed.
 */
const dropConnection = (request: HttpServerRequest.HttpServerRequest): boolean => {
  NodeHttpServerRequest.toServerResponse(request).destroy()
  return true
}

/**
 * Makes every answer `server` gives from now on say `Connection: close` and end its connection; called as a stop
 * begins. Node's `close` stops listening and closes the connections idle at that moment, then waits for the others
 * to end; a keep-alive connection whose client sends its next request at once is never idle, and was answered 503
 * with `Connection: keep-alive` for as long as the client went on: the stop took the whole graceful shutdown (20
 * seconds) instead of milliseconds, and `podman stop` killed the process. Each connection now ends at its next
 * answer at the latest. The listener is added only then, so a request before a stop pays nothing for it.
 */
const closeKeptConnections = (server: Server | undefined): void => {
  // Before the application's listener, so the answer's headers, written later, carry it.
  server?.prependListener("request", (_request, response) => {
    response.shouldKeepAlive = false
  })
}

/** A stop signal once the runtime's own handling has begun (see `serve`). */
const ignoreStopSignal = (): void => {}

/** Starts the server and runs until SIGTERM or SIGINT. */
export const serve = async (options: ServeOptions, out: (line: string) => void): Promise<void> => {
  const engine = await openEngine(options, out)
  let node: Server | undefined
  const server = NodeHttpServer.layer(() => (node = makeServer(engine)), { port: options.port, host: options.host, gracefulShutdownTimeout: "20 seconds" })
  // The runtime stops on the first SIGTERM or SIGINT and removes its handlers when the server's fiber ends, before
  // `process.exit` has finished. A stop signal arriving after that would kill the process by the default action, and
  // one does arrive when the signal went to the whole process group: a terminal's Ctrl-C, or `npm start`, which
  // passes the group's signal on to the server a second time. The server then died of the signal instead of exiting
  // 0, and npm reported that. These handlers ignore every stop signal but the runtime's own handling of the first.
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, ignoreStopSignal)
  NodeRuntime.runMain(serveEngine(engine, options, server, out, dropConnection, () => closeKeptConnections(node)), {
    // A stop by SIGTERM or SIGINT is the normal end of a server.
    teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause) ? 0 : 1)
  })
}
