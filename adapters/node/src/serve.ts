/**
 * `fos serve` on Node's HTTP server. What every runtime shares (the flags, the store, the seed or demo
 * organization, the start lines, the order of shutdown) is in @fos/serve; this file is the Node part.
 *
 * SIGTERM or SIGINT stops accepting connections, lets the requests in flight finish, then exits 0.
 */
import { createServer } from "node:http"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { openEngine, type ServeOptions, serveEngine } from "@fos/serve"
import { Cause, Exit } from "effect"

export { infoRequested, ListenError, parseServeArgs, type ServeOptions, StoreError, storeLayer, UsageError } from "@fos/serve"

/** Starts the server and runs until SIGTERM or SIGINT. */
export const serve = async (options: ServeOptions, out: (line: string) => void): Promise<void> => {
  const engine = await openEngine(options, out)
  const server = NodeHttpServer.layer(createServer, { port: options.port, host: options.host, gracefulShutdownTimeout: "20 seconds" })
  NodeRuntime.runMain(serveEngine(engine, options, server, out), {
    // A stop by SIGTERM or SIGINT is the normal end of a server.
    teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause) ? 0 : 1)
  })
}
