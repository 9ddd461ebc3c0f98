#!/usr/bin/env node
/**
 * The `fos` command line: `fos serve` runs the server (what `npm start` runs); `fos orgs|users|keys|snapshots|reset` are the
 * operator commands, which call a running server's operator surface; `fos listen` forwards a sandbox's webhooks to a local
 * receiver (listen.ts).
 */
import { enableCompileCache, flushCompileCache } from "node:module"
import { infoRequested, ListenError, quoted, serveHelp, StoreError, UsageError } from "@fos/serve/cli"
import { listen, ListenRefused, listenUsage, parseListenArgs } from "./listen.ts"
import { operatorCommands, OperatorRefused, operatorHelp, operatorUsage, RawOutput, runOperator } from "./operator.ts"
import { runTail, tailHelp, tailUsage } from "./tail.ts"

/** What `fos`, `fos help` and `fos --help` print; `fos <command> --help` prints the command's own. */
const usage = `usage: fos serve [flags]          runs the server (npm start in the repository)
       fos orgs|users|keys|snapshots ...   the operator commands, below: they call a running server
       fos reset --org ORG_ID    empties an organization's sandbox
       fos faults ...            an organization's sandbox faults (docs/faults.md)
       fos tail [--org ORG_ID]   a sandbox's events and requests, live (docs/inspect.md)
       fos outcomes ...          an organization's sandbox outcome rules (docs/outcomes.md)
       fos listen --forward-to URL   forwards a sandbox's webhooks to a local receiver (docs/listen.md)
       fos --version             prints the version
Every command's --help lists its flags, with examples (fos users --help).

operator commands (--server URL or FOS_SERVER, --token T or FOS_OPERATOR_TOKEN):
${operatorUsage}
${tailUsage}

examples:
  fos serve --store memory --port 0
  export FOS_OPERATOR_TOKEN=...                      # printed by fos serve at its store's first start
  fos orgs list
  fos users list --org org_acme
  fos keys create --org org_acme --user usr_ada --env sandbox --access read_write
  FOS_API_KEY=ck_sandbox_... fos tail --types events
  fos listen --forward-to http://localhost:3000/webhooks --key ck_sandbox_...`

const main = async (argv: ReadonlyArray<string>) => {
  const [command, ...args] = argv
  // `fos --help`, `fos --version`, and either among a command's flags: each command's help lists every flag it takes.
  const info = command === "serve"
    ? infoRequested(args, serveHelp("fos"))
    : command === "listen"
    ? infoRequested(args, listenUsage)
    : command === "tail"
    ? infoRequested(args, tailHelp)
    : command !== undefined && operatorCommands.has(command)
    ? infoRequested(args, operatorHelp(command))
    : command === undefined || command.startsWith("-")
    ? infoRequested(argv, usage)
    : undefined
  if (info !== undefined) return console.log(info)
  switch (command) {
    case "serve": {
      // The engine is loaded by the command that runs it, so that the others (and --version) start in milliseconds.
      // V8's code for its modules, the type-stripped sources included, is kept on disk between starts (Node's compile
      // cache: bin/fos.js turns it on first; this call is for a run of this file alone), so a start compiles only
      // what changed (docs/decisions/0010-a-start-loads-what-it-uses.md).
      enableCompileCache()
      const { parseServeArgs, serve } = await import("./serve.ts")
      return serve(parseServeArgs(args, process.env), (line) => {
        console.log(line)
        // The cache is written once the server is ready (its last start line), rather than at exit, which a server
        // stopped by kill -9 (a test's SIGKILL) never reaches; after the line, so writing it never delays "ready".
        if (line.startsWith("live: ")) setImmediate(flushCompileCache)
      })
    }
    case "listen":
      await listen(parseListenArgs(args, process.env), (line) => console.log(line))
      // Its sockets to the server and the receiver may idle on keep-alive a while: the work is done.
      return process.exit(0)
    case "tail":
      await runTail(args, process.env, (line) => console.log(line))
      // Ended by Ctrl-C or SIGTERM: a clean end.
      process.exit(0)
      return
    case undefined:
    case "help":
    case "--help":
      console.log(usage)
      return
    default:
      if (operatorCommands.has(command)) {
        const output = await runOperator(command, args, process.env, (line) => console.error(`fos: ${line}`))
        // A snapshot's file goes out as the server wrote it (`fos snapshots export ID > world.json`); the rest as JSON.
        if (output instanceof RawOutput) return void process.stdout.write(output.text)
        return console.log(JSON.stringify(output, null, 2))
      }
      throw new UsageError(`unknown command ${quoted(command)}\n${usage}`)
  }
}

main(process.argv.slice(2)).catch((e: unknown) => {
  if (e instanceof UsageError) {
    console.error(`fos: ${e.message}`)
    process.exit(2)
  }
  if (e instanceof OperatorRefused || e instanceof StoreError || e instanceof ListenError || e instanceof ListenRefused) {
    console.error(`fos: ${e.message}`)
    process.exit(1)
  }
  console.error(e)
  process.exit(1)
})
