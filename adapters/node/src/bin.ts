#!/usr/bin/env node
/**
 * The `fos` command line. `fos serve` runs the server (what `npm start` runs).
 */
import { parseServeArgs, serve, UsageError } from "./serve.ts"

const usage = `usage: fos serve [--port N] [--host H] [--store memory] [--clock system|virtual] [--clock-start ISO]
                 [--seed FILE] [--insecure-webhooks] [--idempotency-retention-seconds N]`

const main = async (argv: ReadonlyArray<string>) => {
  const [command, ...args] = argv
  switch (command) {
    case "serve":
      return serve(parseServeArgs(args, process.env), (line) => console.log(line))
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
  console.error(e)
  process.exit(1)
})
