/**
 * The store contract's committing child (processes.ts starts it): `child <module url> <export> <place> <commits>`.
 * It opens the store with the module's export at the place, commits in a loop and writes each acknowledged
 * commit's number on a line of stdout, then holds the store open until it is killed (or two minutes pass).
 */
import { pathToFileURL } from "node:url"
import { commitLoop } from "@fos/core/store-contract"
import type { Store } from "@fos/core"
import { Effect, type Layer } from "effect"

const [url = "", name = "", place = "", commits = "0"] = process.argv.slice(2)
setTimeout(() => process.exit(3), 120_000)
try {
  const module = (await import(/^[a-z][a-z0-9+.-]+:/i.test(url) ? url : pathToFileURL(url).href)) as Record<string, unknown>
  const open = module[name]
  if (typeof open !== "function") throw new Error(`${url} has no export ${name} that opens a store`)
  await Effect.runPromise(commitLoop((open as (place: string) => Layer.Layer<Store.Store, unknown>)(place), Number(commits), (n) => {
    process.stdout.write(`${n}\n`)
  }))
} catch (e) {
  process.stderr.write(`${e instanceof Error ? e.stack ?? e.message : String(e)}\n`)
  process.exit(1)
}
