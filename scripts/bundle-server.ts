/**
 * The server's bundle: the `fos` command line (adapters/node/src/bin.ts) and everything it imports, fos's packages
 * and Effect included, in a few files of JavaScript by esbuild, so that a start loads a handful of modules instead
 * of some 630 (a third of `fos serve`'s start was Node's module loader: docs/decisions/0020-the-server-bundle.md).
 *
 * - `node scripts/bundle-server.ts` (run by `npm run build`) writes the published one, adapters/node/dist/server/,
 *   which the installed package's bin/fos.js runs.
 * - `serverBundle()` is the repository's: bin/fos.js asks it for the bundle of the sources as they are now, in
 *   node_modules/.cache/fos-server/, and it is rebuilt when any file it was made from changed since (`npm start`
 *   on a fresh clone builds it once). It never runs stale code: a file is checked by its ctime, which every
 *   write, checkout and `npm install` sets to the time it happened (unlike the mtime, which npm sets to 1985 and
 *   tools may set back), against the time the bundle began reading its sources.
 *
 * The bundle is split where the sources import dynamically, so a command loads what it runs: `fos --version` the
 * command line alone, a memory start no SQL store. Left out, and found beside the bundle at run time by module
 * resolution: PGlite (it reads its WebAssembly and data files relative to its own module), the optional native
 * helpers of `ws`, and what is read through `import.meta.resolve` (swagger-ui-dist, the packages' manifests).
 * @fos/node depends on what the bundle leaves out, so that npm puts each where the bundle finds it.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { isMain } from "./isMain.ts"

const root = resolve(import.meta.dirname, "..")
const entryPoint = join(root, "adapters/node/src/bin.ts")
/** What the bundle imports at run time rather than holding (see above). */
const external = ["@electric-sql/pglite", "@electric-sql/pglite/*", "bufferutil", "utf-8-validate"]
/** The file a start imports; the other files are chunks, named by their content. */
const entryName = "fos.js"

/** The files of a build, by their name in its folder, and the source files each was made from (relative to the root). */
interface Built {
  readonly files: ReadonlyMap<string, Uint8Array>
  readonly inputsOf: Readonly<Record<string, ReadonlyArray<string>>>
}

const bundle = async (): Promise<Built> => {
  const { build } = await import("esbuild")
  const outdir = join(root, ".bundle-server")
  const result = await build({
    entryPoints: { fos: entryPoint },
    absWorkingDir: root,
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node22",
    // The sources, as `npm start` runs them: the "@fos/source" condition of each workspace package's exports.
    conditions: ["@fos/source"],
    external,
    chunkNames: "chunk-[hash]",
    // The compiler options that change what JavaScript a source is, given here rather than found in tsconfig
    // files the bundle would then depend on (tsconfig.base.json has the same).
    tsconfigRaw: { compilerOptions: { target: "ES2022", verbatimModuleSyntax: true } },
    // The CommonJS packages bundled (ws) require Node's modules: an ES module has no `require` of its own.
    banner: { js: `import { createRequire as __fosCreateRequire } from "node:module"; const require = __fosCreateRequire(import.meta.url);` },
    metafile: true,
    write: false,
    logLevel: "silent"
  })
  const files = new Map(result.outputFiles.map((file) => [relative(outdir, file.path), file.contents]))
  const inputsOf = Object.fromEntries(Object.entries(result.metafile.outputs).map(([file, output]) => [relative(outdir, join(root, file)), Object.keys(output.inputs)]))
  return { files, inputsOf }
}

/** Writes `content` to `file` whole: a process that reads it, while this or another build writes it, reads one version. */
const writeWhole = (file: string, content: Uint8Array | string) => {
  const partial = `${file}.${process.pid}.partial`
  writeFileSync(partial, content)
  renameSync(partial, file)
}

/** Writes the published bundle into `outdir` (adapters/node/dist/server/ by default), replacing what was there. */
export const writePublishedBundle = async (outdir = join(root, "adapters/node/dist/server")): Promise<void> => {
  const built = await bundle()
  rmSync(outdir, { recursive: true, force: true })
  mkdirSync(outdir, { recursive: true })
  for (const [name, content] of built.files) writeFileSync(join(outdir, name), content)
}

// ---- The repository's bundle --------------------------------------------------------------------------------------

/** Where the repository's bundle is kept, with its manifest. */
export const repositoryBundleDir: string = join(root, "node_modules/.cache/fos-server")
const manifestFile = join(repositoryBundleDir, "manifest.json")
const lockDir = join(repositoryBundleDir, "building")

/** What the repository's bundle was made from, written beside it. */
export interface BundleManifest {
  /**
   * When the build began reading its sources, in ms, less a tenth of a second: a file's times come from the
   * kernel's coarse clock, which may lag the one Date.now() reads by a few ms.
   */
  readonly builtAt: number
  /** Every file whose change makes the bundle stale, relative to the repository's root. */
  readonly sources: ReadonlyArray<string>
  /** Each file of the bundle, by name, and the sources it holds: what test/start-modules.test.ts reads. */
  readonly inputsOf: Readonly<Record<string, ReadonlyArray<string>>>
}

/** The repository bundle's manifest, or undefined when there is none. */
export const readBundleManifest = (): BundleManifest | undefined => {
  try {
    return JSON.parse(readFileSync(manifestFile, "utf8")) as BundleManifest
  } catch {
    return undefined
  }
}

/** Whether the bundle `manifest` describes is whole and was made from the sources as they are. */
const isFresh = (manifest: BundleManifest | undefined): boolean => {
  if (manifest === undefined) return false
  for (const file of Object.keys(manifest.inputsOf)) if (statSync(join(repositoryBundleDir, file), { throwIfNoEntry: false }) === undefined) return false
  for (const source of manifest.sources) {
    const stat = statSync(join(root, source), { throwIfNoEntry: false })
    if (stat === undefined || stat.ctimeMs >= manifest.builtAt || stat.mtimeMs >= manifest.builtAt) return false
  }
  return true
}

/**
 * The sources a build depends on beyond its inputs: the manifest of each package an input belongs to (its exports
 * say which file an import is), this script, and esbuild's version.
 */
const sourcesOf = (inputs: Iterable<string>): ReadonlyArray<string> => {
  const manifests = new Set<string>()
  const seen = new Set<string>()
  for (const input of inputs) {
    for (let dir = dirname(join(root, input)); dir.startsWith(root) && !seen.has(dir); dir = dirname(dir)) {
      seen.add(dir)
      const manifest = join(dir, "package.json")
      if (statSync(manifest, { throwIfNoEntry: false }) !== undefined) {
        manifests.add(relative(root, manifest))
        break
      }
    }
  }
  return [...new Set([...inputs, ...manifests, relative(root, import.meta.filename), "node_modules/esbuild/package.json"])].sort()
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms))

/**
 * The URL of the repository bundle's entry, built now when it is missing or stale; undefined when it cannot be
 * built here (no esbuild installed, a folder that cannot be written), and the caller runs the sources instead.
 *
 * Processes started together (a test suite's) build it once: the first takes a lock (a folder, made or not in one
 * step), the others wait for it. A build writes its chunks, then the entry, then the manifest, each whole; a chunk's
 * name is its content's, so a process still starting on the build before finds that build's chunks, which are
 * kept until the build after this one.
 */
export const serverBundle = async (): Promise<URL | undefined> => {
  const entry = pathToFileURL(join(repositoryBundleDir, entryName))
  for (;;) {
    if (isFresh(readBundleManifest())) return entry
    try {
      mkdirSync(repositoryBundleDir, { recursive: true })
      mkdirSync(lockDir)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") return undefined
      // Another process is building. A lock left by a build that was killed is taken over after a minute.
      const lock = statSync(lockDir, { throwIfNoEntry: false })
      if (lock !== undefined && Date.now() - lock.mtimeMs > 60_000) rmSync(lockDir, { recursive: true, force: true })
      await sleep(50)
      continue
    }
    try {
      // Made by the process that held the lock before, perhaps.
      const previous = readBundleManifest()
      if (isFresh(previous)) return entry
      const builtAt = Date.now() - 100
      const built = await bundle()
      for (const [name, content] of built.files) {
        if (name !== entryName && statSync(join(repositoryBundleDir, name), { throwIfNoEntry: false }) === undefined) writeWhole(join(repositoryBundleDir, name), content)
      }
      writeWhole(join(repositoryBundleDir, entryName), built.files.get(entryName)!)
      const next: BundleManifest = { builtAt, sources: sourcesOf(Object.values(built.inputsOf).flat()), inputsOf: built.inputsOf }
      writeWhole(manifestFile, JSON.stringify(next))
      const kept = new Set(["manifest.json", "building", ...Object.keys(next.inputsOf), ...Object.keys(previous?.inputsOf ?? {})])
      for (const name of readdirSync(repositoryBundleDir)) if (!kept.has(name)) rmSync(join(repositoryBundleDir, name), { force: true })
      return entry
    } catch {
      return undefined
    } finally {
      rmSync(lockDir, { recursive: true, force: true })
    }
  }
}

if (isMain(import.meta.url)) {
  await writePublishedBundle()
  console.log(`wrote ${relative(root, join(root, "adapters/node/dist/server"))}/`)
}
