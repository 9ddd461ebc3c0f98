/**
 * `fos serve` on Deno, with Deno's own HTTP server (`Deno.serve`):
 *
 *   npx deno task serve [flags]          (deno.json: deno run -A adapters/deno/src/main.ts serve)
 *
 * The flags, the start lines and the exit statuses are those of `fos serve` on Node (@fos/serve has them).
 */
import { runServeCommand } from "@fos/serve"

/** The part of Deno's API used here (the project type-checks against Node's types, not Deno's). */
interface DenoServer {
  readonly addr: { readonly port: number }
  shutdown(): Promise<void>
}
type Signal = "SIGTERM" | "SIGINT"
interface DenoGlobal {
  readonly args: ReadonlyArray<string>
  readonly env: { toObject(): Record<string, string> }
  serve(
    options: { readonly port: number; readonly hostname: string; readonly onListen: () => void },
    handler: (request: Request, info: { readonly remoteAddr: { readonly hostname: string } }) => Promise<Response>
  ): DenoServer
  addSignalListener(signal: Signal, listener: () => void): void
  exit(code: number): never
}
const Deno = (globalThis as unknown as { readonly Deno: DenoGlobal }).Deno

runServeCommand(Deno.args, Deno.env.toObject(), {
  command: "deno run -A adapters/deno/src/main.ts",
  listen: ({ hostname, port }, handler) => {
    // onListen replaces Deno's own "Listening on" line: fos prints its start lines once the application is in.
    const server = Deno.serve({ port, hostname, onListen: () => {} }, (request, info) => handler(request, info.remoteAddr.hostname))
    return { port: server.addr.port, stop: () => server.shutdown() }
  },
  onStopSignal: (stop) => {
    Deno.addSignalListener("SIGTERM", stop)
    Deno.addSignalListener("SIGINT", stop)
  },
  exit: (code) => Deno.exit(code)
})
