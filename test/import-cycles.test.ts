/**
 * The core's modules import one way: kernel, then tenancy and webhooks, then onboarding and money, then signing
 * (signing uses money; money never imports signing), with Engine.ts and Subscriptions.ts on top. A cycle between
 * modules is a dependency that runs both ways, so this test fails on any, type-only imports included (issue 23).
 * dpdm reads the imports as TypeScript sees them, without running anything.
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

describe("packages/core", () => {
  it("has no import cycle", async () => {
    const tree = await parseDependencyTree(sources(core).map((file) => relative(root, file)), {
      context: root,
      cwd: root,
      tsconfig: join(root, "tsconfig.json"),
      // Only the core's own modules: @fos/contract and effect are below it and cannot import it back.
      include: /packages\/core\/src\//,
      transform: false,
      skipDynamicImports: false
    })
    const cycles = parseCircular(tree).map((cycle) => cycle.join(" -> "))
    expect(cycles).toEqual([])
  }, 60_000)
})
