/**
 * Every package's modules import one way. A cycle between modules is a dependency that runs both ways, so the first
 * test fails on any, in every package and adapter, type-only imports included. Inside the core the
 * folders are layers too: kernel, then tenancy, webhooks, simulate, onboarding, money, signing and
 * inspect, then storeContract (the published store contract, which the engine never imports), with Engine.ts,
 * Subscriptions.ts and the other modules at its root on top; a folder imports only the
 * folders below it, so an arrow that goes back fails the second test, which names it. dpdm reads the imports as
 * TypeScript sees them, without running anything.
 */
import { parseCircular, parseDependencyTree } from "dpdm"
import { readdirSync } from "node:fs"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "..")
const core = join(root, "packages/core/src")

const sources = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [])

/** Each module's imports among the files `include` matches, as TypeScript resolves them (type-only ones too). */
const dependencyTree = (files: ReadonlyArray<string>, include: RegExp) =>
  parseDependencyTree(files.map((file) => relative(root, file)), {
    context: root,
    cwd: root,
    tsconfig: join(root, "tsconfig.json"),
    include,
    transform: false,
    skipDynamicImports: false
  })

/** The core's folders, lowest first: each may import only those before it (and itself). */
const coreLayers = ["kernel", "tenancy", "webhooks", "simulate", "onboarding", "money", "signing", "inspect", "storeContract", "(root)"] as const

const layerOf = (file: string): string => {
  const inCore = relative(core, join(root, file)).split("/")
  return inCore.length === 1 ? "(root)" : inCore[0]!
}

describe("the packages and adapters", () => {
  it("have no import cycle", async () => {
    const roots = ["packages", "adapters"].flatMap((dir) =>
      readdirSync(join(root, dir), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => join(root, dir, e.name, "src")))
    const tree = await dependencyTree(roots.flatMap(sources), /(packages|adapters)\/[a-z]+\/src\//)
    const cycles = parseCircular(tree).map((cycle) => cycle.join(" -> "))
    expect(cycles).toEqual([])
  }, 120_000)
})

describe("packages/core", () => {
  it("imports one way between its folders: each only from the layers below it", async () => {
    // Only the core's own modules: @fos/contract and effect are below it and cannot import it back.
    const tree = await dependencyTree(sources(core), /packages\/core\/src\//)
    const backwards: Array<string> = []
    for (const [file, dependencies] of Object.entries(tree)) {
      if (!file.startsWith("packages/core/src/")) continue
      const from = coreLayers.indexOf(layerOf(file) as typeof coreLayers[number])
      expect(from, `${file} is in a folder the layers do not name`).toBeGreaterThanOrEqual(0)
      for (const dependency of dependencies ?? []) {
        if (dependency.id === null || !dependency.id.includes("packages/core/src/")) continue
        const to = coreLayers.indexOf(layerOf(dependency.id) as typeof coreLayers[number])
        if (to > from) backwards.push(`${file} -> ${dependency.id}`)
      }
    }
    expect(backwards).toEqual([])
  }, 60_000)
})
