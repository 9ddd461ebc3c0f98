#!/usr/bin/env node
/**
 * The `fos` command (src/bin.ts is the command line itself).
 *
 * JavaScript, not TypeScript, and first, so that Node's compile cache is on before any TypeScript is loaded: the cache
 * keeps the type-stripped sources too, and a start that finds them all there never loads Node's TypeScript stripper
 * (about 140 ms of WebAssembly, most of what `fos orgs list` used to cost; docs/decisions/0010). The cache is
 * Node's own: in NODE_COMPILE_CACHE, else the system's temporary directory; NODE_DISABLE_COMPILE_CACHE=1 turns it
 * off. The cache keeps the server's bundle's compiled code as well.
 *
 * Written for any Node, so that an older one is told in one line which it needs: every import here exists on old
 * versions too (a named import of `enableCompileCache` would fail before a line of this file ran).
 */
import { existsSync, readFileSync } from "node:fs"
import * as nodeModule from "node:module"

const { engines } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"))
const needed = /^>=(\d+)\.(\d+)/.exec(engines.node)
const [major, minor] = process.versions.node.split(".").map(Number)
// In the repository the sources sit beside this file; an installed package has only the built JavaScript.
const source = new URL("../src/bin.ts", import.meta.url)
const inRepository = existsSync(source)
if (needed !== null && (major < Number(needed[1]) || (major === Number(needed[1]) && minor < Number(needed[2])))) {
  const how = inRepository
    ? "in the repository, npx fos and npm start run the Node 24 that npm install puts in node_modules"
    : "install Node 24 from https://nodejs.org (or nvm install 24)"
  console.error(`fos: needs Node ${needed[1]}.${needed[2]} or later, not ${process.version}: ${how}`)
  process.exit(1)
}

nodeModule.enableCompileCache()
// What runs is the server's bundle, a few files that load in a fraction of the time the modules they hold take
// (scripts/bundle-server.ts, docs/decisions/0020-the-server-bundle.md): installed, the one `npm run build` wrote in
// dist/server/; in the repository, one of the sources as they are now, rebuilt when one changed. FOS_NO_BUNDLE=1,
// or a repository where no bundle can be built, runs the modules themselves.
const bundle = process.env.FOS_NO_BUNDLE === "1"
  ? undefined
  : inRepository
  ? await (await import("../../../scripts/bundle-server.ts")).serverBundle()
  : [new URL("../dist/server/fos.js", import.meta.url)].find((url) => existsSync(url))
if (bundle !== undefined) {
  await import(bundle.href)
} else {
  // The repository's packages are read from their sources (the "@fos/source" condition each package's exports map
  // has), as `npm start` asks with --conditions; `npx fos` asks nothing, so the condition is added here.
  if (inRepository && import.meta.resolve("@fos/node/cli") !== source.href) {
    nodeModule.registerHooks({
      resolve: (specifier, context, nextResolve) => nextResolve(specifier, { ...context, conditions: [...context.conditions, "@fos/source"] })
    })
  }
  await import("@fos/node/cli")
}
