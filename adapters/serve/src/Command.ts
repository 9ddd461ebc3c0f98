/**
 * The `serve` command on a runtime with a web-standard server (Bun, Deno): the adapter gives its server, its
 * signals and its exit; everything else is what `fos serve` does on Node.
 *
 * Exit status: 0 for --help and --version; 2 for bad usage (a bad flag or seed, nothing written), 1 for a store
 * that cannot be opened or a server that cannot listen (checked before the store is opened), 0 after SIGTERM or SIGINT once the requests in flight are answered.
 */
import { Cause, Exit, Layer, Runtime } from "effect"
import { HttpServer } from "effect/http"
import { infoRequested, ListenError, parseServeArgs, quoted, serveHelp, serveUsage, StoreError, UsageError } from "./Options.ts"
import { openEngine, resolveHost, serveEngine } from "./Serve.ts"
import { type Listen, makeWebServer } from "./WebServer.ts"

export interface WebRuntime {
  /** How the usage line starts, e.g. `bun adapters/bun/src/main.ts`. */
  readonly command: string
  readonly listen: Listen
  /** Calls `stop` on every SIGTERM and SIGINT, for the rest of the process. */
  readonly onStopSignal: (stop: () => void) => void
  readonly exit: (code: number) => void
}

/**
 * Runs `effect` as the process's main fiber: a stop signal interrupts it; its end exits the process. The listeners
 * stay until the process is gone: a signal sent to the process group (a terminal's Ctrl-C, a kill of `npm start`'s
 * group) comes again through npm, and one landing after they were removed would kill the process by the default
 * action instead of letting it exit 0 (docs/decisions.md, "A second stop signal is ignored"). Interrupting the
 * fiber again, or once it has ended, does nothing.
 */
const runMain = (runtime: WebRuntime) =>
  Runtime.makeRunMain(({ fiber, teardown }) => {
    runtime.onStopSignal(() => fiber.interruptUnsafe(fiber.id))
    fiber.addObserver((exit) => teardown(exit, runtime.exit))
  })

/** `<command> serve [flags]`, with `argv` the arguments after the script and `env` the environment. */
export const runServeCommand = (argv: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>>, runtime: WebRuntime): void => {
  const out = (line: string) => console.log(line)
  const usage = `usage: ${runtime.command} ${serveUsage}`
  const start = async () => {
    const [command, ...args] = argv
    if (command === undefined || command === "help") return out(serveHelp(runtime.command))
    const info = command === "serve" || command.startsWith("-") ? infoRequested(argv, serveHelp(runtime.command)) : undefined
    if (info !== undefined) return out(info)
    if (command !== "serve") throw new UsageError(`unknown command ${quoted(command)}\n${usage}`)
    const options = parseServeArgs(args, env)
    // Bun and Deno take an address to listen on; Node's server resolves a name itself, to its first address.
    const hostname = await resolveHost(options.host).then(
      (addresses) => addresses[0],
      () => undefined
    )
    if (hostname === undefined) throw new UsageError(`--host ${quoted(options.host)}: cannot resolve the name`)
    const engine = await openEngine(options, out)
    const server = Layer.merge(
      Layer.effect(HttpServer.HttpServer, makeWebServer(runtime.listen, { hostname, port: options.port })),
      HttpServer.layerServices
    )
    runMain(runtime)(serveEngine(engine, options, server, out), {
      // A stop by SIGTERM or SIGINT is the normal end of a server.
      teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause) ? 0 : 1)
    })
  }
  start().catch((e: unknown) => {
    console.error(e instanceof UsageError || e instanceof StoreError || e instanceof ListenError ? `fos: ${e.message}` : e)
    runtime.exit(e instanceof UsageError ? 2 : 1)
  })
}
