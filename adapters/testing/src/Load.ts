/**
 * What the package loads only when a test uses it (the typed client, the engine, the receiver's verifier, Effect's
 * `Duration`), loaded through Node's compile cache: V8's code for those modules, kept on disk, spares the next
 * process compiling them again, and under Vitest every test file is a process of its own (a tenth to a quarter of
 * what a file's first typed call adds, a quarter of the client's import in plain Node: `bench:testing-start`).
 *
 * The cache is written inside the project's own node_modules, in `node_modules/.cache/fos-testing` (where tools keep
 * their caches, and what version control already leaves out), never in the system's temporary directory (Node's
 * default): only for a package installed in a node_modules; from its first load on, for every module the process
 * compiles after (the cache is the process's). `NODE_COMPILE_CACHE=dir` (the user's own cache, on before the package
 * is loaded) is kept as it is, and `NODE_DISABLE_COMPILE_CACHE=1` turns it off (docs/testing.md).
 */
import * as nodeModule from "node:module"
import { fileURLToPath } from "node:url"

/** The project's `node_modules/.cache/fos-testing`: the first node_modules on the way to this file; none outside one. */
const cacheDirectory = (): string | undefined => {
  const file = fileURLToPath(import.meta.url)
  const at = /[\\/]node_modules[\\/]/.exec(file)
  return at === null ? undefined : `${file.slice(0, at.index + at[0].length)}.cache${file[at.index]}fos-testing`
}

let tried = false
const enable = () => {
  if (tried) return
  tried = true
  const directory = cacheDirectory()
  // Bun and Deno have no compile cache of Node's; a failure to enable one is no failure of the import.
  if (directory !== undefined && typeof nodeModule.enableCompileCache === "function") nodeModule.enableCompileCache(directory)
}

/** `importer()` (an `import()` of what the caller needs), with the compile cache on, and flushed once loaded. */
export const load = async <A>(importer: () => Promise<A>): Promise<A> => {
  enable()
  const loaded = await importer()
  // Written now, not at the process's exit: a test runner ends its workers without letting them exit.
  if (typeof nodeModule.flushCompileCache === "function") nodeModule.flushCompileCache()
  return loaded
}
