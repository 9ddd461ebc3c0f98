/**
 * `fos serve` on Bun, with Bun's own HTTP server (`Bun.serve`):
 *
 *   npx bun adapters/bun/src/main.ts serve [flags]
 *
 * The flags, the start lines and the exit statuses are those of `fos serve` on Node (@fos/serve has them).
 */
import { runServeCommand } from "@fos/serve"

/** The part of Bun's API used here (the project type-checks against Node's types, not Bun's). */
interface BunServer {
  readonly port: number
  requestIP(request: Request): { readonly address: string } | null
  stop(closeActiveConnections?: boolean): Promise<void>
}
interface BunGlobal {
  serve(options: {
    readonly port: number
    readonly hostname: string
    readonly idleTimeout: number
    readonly development: boolean
    readonly fetch: (request: Request, server: BunServer) => Promise<Response>
  }): BunServer
}
const Bun = (globalThis as unknown as { readonly Bun: BunGlobal }).Bun

runServeCommand(process.argv.slice(2), process.env, {
  command: "bun adapters/bun/src/main.ts",
  listen: ({ hostname, port }, handler) => {
    const server = Bun.serve({
      port,
      hostname,
      // Bun closes a connection silent for this many seconds, even while its request is being handled (a clock
      // advance can fire many timers); 255 is Bun's longest, near Node's 300-second request timeout.
      idleTimeout: 255,
      development: false,
      fetch: (request, server) => handler(request, server.requestIP(request)?.address)
    })
    return { port: server.port, stop: () => server.stop() }
  },
  onStopSignal: (stop) => {
    process.on("SIGTERM", stop)
    process.on("SIGINT", stop)
  },
  exit: (code) => process.exit(code)
})
