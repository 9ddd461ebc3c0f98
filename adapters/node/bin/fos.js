#!/usr/bin/env node
/**
 * The `fos` command (src/bin.ts is the command line itself).
 *
 * JavaScript, not TypeScript, and first, so that Node's compile cache is on before any TypeScript is loaded: the cache
 * keeps the type-stripped sources too, and a start that finds them all there never loads Node's TypeScript stripper
 * (about 140 ms of WebAssembly, most of what `fos orgs list` used to cost; docs/decisions/0010). The cache is
 * Node's own: in NODE_COMPILE_CACHE, else the system's temporary directory; NODE_DISABLE_COMPILE_CACHE=1 turns it
 * off. Installed, `@fos/node/cli` is the built JavaScript, which the cache spares compiling.
 */
import { enableCompileCache } from "node:module"

enableCompileCache()
await import("@fos/node/cli")
