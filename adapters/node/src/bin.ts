#!/usr/bin/env node
/**
 * The `fos` command line: `fos serve` runs the server (what `npm start` runs); `fos orgs|users|keys|reset` are the
 * operator commands, which call a running server's operator surface.
 */
import { OperatorRefused, operatorUsage, runOperator } from "./operator.ts"
import { infoRequested, ListenError, parseServeArgs, serve, StoreError, UsageError } from "./serve.ts"

const usage = `usage: fos serve [--port N] [--host H] [--store memory|DIR|postgres://URL] [--clock system|virtual] [--clock-start ISO]
                 [--seed FILE] [--insecure-webhooks] [--idempotency-retention-seconds N] [--operator-token T]
                 [--log-format pretty|json] [--quiet]
${operatorUsage}`

const main = async (argv: ReadonlyArray<string>) => {
  const [command, ...args] = argv
  // `fos --help`, `fos --version`, and either among `fos serve`'s flags.
  const info = command === undefined || command === "serve" || command.startsWith("-") ? infoRequested(argv, usage) : undefined
  if (info !== undefined) return console.log(info)
  switch (command) {
    case "serve":
      return serve(parseServeArgs(args, process.env), (line) => console.log(line))
    case "orgs":
    case "users":
    case "keys":
    case "reset":
      console.log(JSON.stringify(await runOperator(command, args, process.env), null, 2))
      return
    case undefined:
    case "help":
    case "--help":
      console.log(usage)
      return
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}\n${usage}`)
  }
}

main(process.argv.slice(2)).catch((e: unknown) => {
  if (e instanceof UsageError) {
    console.error(`fos: ${e.message}`)
    process.exit(2)
  }
  if (e instanceof OperatorRefused || e instanceof StoreError || e instanceof ListenError) {
    console.error(`fos: ${e.message}`)
    process.exit(1)
  }
  console.error(e)
  process.exit(1)
})
