/**
 * A start loads only what fos uses. `fos serve --store memory`, to its first answered request, loads modules of fos's
 * own packages and of the packages they depend on, and nothing else: not the `redis` client that npm installs as a
 * peer of `@effect/platform-node` (its index re-exports NodeRedis: some 650 modules of `@redis/*`), nor the SQL
 * stores' packages, which only a SQL store loads (docs/decisions/0010-a-start-loads-what-it-uses.md).
 *
 * A start runs the server's bundle (scripts/bundle-server.ts), whose few files each hold many modules: what it
 * loaded is the modules the files it loaded were made from, as the bundle's manifest lists them. The same start
 * from the modules themselves (FOS_NO_BUNDLE=1) is held to the same.
 *
 * The packages allowed are read from the workspace: every workspace package's dependencies and peers, and then, for
 * each of those, its own dependencies (not its peers: a peer is the installer's choice, and `redis` is one).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { readBundleManifest, repositoryBundleDir, serverBundle } from "../scripts/bundle-server.ts"
import { killAllFos, repoRoot, startFos } from "./fosProcess.ts"

interface Manifest {
  readonly name: string
  readonly dependencies?: Record<string, string>
  readonly optionalDependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
}

const readManifest = (file: string): Manifest => JSON.parse(readFileSync(file, "utf8")) as Manifest

const workspaceManifests = ["packages", "adapters"].flatMap((folder) =>
  readdirSync(join(repoRoot, folder))
    .map((name) => join(repoRoot, folder, name, "package.json"))
    .filter((file) => existsSync(file))
    .map((file) => ({ dir: dirname(file), manifest: readManifest(file) }))
)
const workspaceNames = new Set(workspaceManifests.map(({ manifest }) => manifest.name))

/** The installed package `name` as Node finds it from `fromDir`: the nearest node_modules holding it. */
const installedManifest = (name: string, fromDir: string): { dir: string; manifest: Manifest } | undefined => {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const file = join(dir, "node_modules", name, "package.json")
    if (existsSync(file)) return { dir: dirname(file), manifest: readManifest(file) }
    if (dirname(dir) === dir) return undefined
  }
}

/** The packages fos uses: the workspace's dependencies and peers, and their dependencies, transitively. */
const packagesFosUses = (): ReadonlySet<string> => {
  const allowed = new Set<string>()
  const queue: Array<{ name: string; from: string }> = []
  for (const { dir, manifest } of workspaceManifests) {
    for (const name of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies, ...manifest.peerDependencies })) queue.push({ name, from: dir })
  }
  while (queue.length > 0) {
    const { name, from } = queue.pop()!
    if (workspaceNames.has(name) || allowed.has(name)) continue
    allowed.add(name)
    const installed = installedManifest(name, from)
    if (installed === undefined) continue
    for (const dependency of Object.keys({ ...installed.manifest.dependencies, ...installed.manifest.optionalDependencies })) queue.push({ name: dependency, from: installed.dir })
  }
  return allowed
}

/** The package a loaded module's URL belongs to, by the last node_modules in its path; undefined for fos's own and Node's. */
const packageOf = (url: string): string | undefined => {
  const at = url.lastIndexOf("/node_modules/")
  if (at < 0) return undefined
  const [first, second] = url.slice(at + "/node_modules/".length).split("/")
  return first!.startsWith("@") ? `${first}/${second}` : first
}

const work = mkdtempSync(join(tmpdir(), "fos-start-modules-"))
afterAll(() => {
  killAllFos()
  rmSync(work, { recursive: true, force: true })
})

/**
 * The modules a start loaded, from the URLs it loaded: a file of the repository's bundle stands for the sources it
 * was made from.
 */
const modulesOf = (loaded: ReadonlyArray<string>): ReadonlyArray<string> => {
  const bundle = pathToFileURL(repositoryBundleDir).href + "/"
  const inputsOf = readBundleManifest()?.inputsOf ?? {}
  return loaded.flatMap((url) => {
    if (!url.startsWith(bundle)) return [url]
    const inputs = inputsOf[url.slice(bundle.length)]
    if (inputs === undefined) throw new Error(`${url} is not in the bundle's manifest`)
    return inputs.map((input) => pathToFileURL(join(repoRoot, input)).href)
  })
}

describe("a start's modules", () => {
  for (const from of ["the bundle", "the modules themselves"] as const) {
    it(`fos serve --store memory from ${from}, to its first answered request, loads no package fos does not use, and no SQL store`, { timeout: 120_000 }, async () => {
      const list = join(work, `modules-${from.length}.txt`)
      const hook = pathToFileURL(resolve(import.meta.dirname, "fixtures/loadedModules.mjs")).href
      // Built here when a source changed since, so that the start lists what a start runs, not a build's modules.
      expect(await serverBundle()).toBeDefined()
      const server = await startFos(["--store", "memory", "--port", "0", "--quiet"], {
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=${hook}`,
        FOS_LOADED_MODULES: list,
        ...(from === "the bundle" ? {} : { FOS_NO_BUNDLE: "1" })
      })
      const answer = await fetch(`${server.origin}/healthz`)
      expect(answer.status).toBe(200)
      await answer.text()
      expect(await server.stop()).toEqual({ code: 0, signal: null })

      const files = readFileSync(list, "utf8").split("\n")
      // What ran: the bundle's entry, or fos's sources.
      const ranTheBundle = files.includes(pathToFileURL(join(repositoryBundleDir, "fos.js")).href)
      expect(ranTheBundle).toBe(from === "the bundle")
      const loaded = modulesOf(files)
      const packages = new Set(loaded.map(packageOf).filter((name) => name !== undefined))
      // The list is real: the start loaded Effect's HTTP server and fos's own engine.
      expect(packages).toContain("effect")
      expect(packages).toContain("@effect/platform-node")
      expect(loaded.some((url) => url.includes("/packages/http/src/"))).toBe(true)

      const allowed = packagesFosUses()
      expect([...packages].filter((name) => !allowed.has(name))).toEqual([])
      expect([...packages].filter((name) => name === "redis" || name.startsWith("@redis/"))).toEqual([])
      // The SQL stores are loaded by a start that opens one (adapters/serve's storeLayer), not by the memory store's.
      expect([...packages].filter((name) => name === "@electric-sql/pglite" || name === "@effect/sql-pg")).toEqual([])
      expect(loaded.filter((url) => url.includes("/adapters/sql/src/"))).toEqual([])
    })
  }
})
