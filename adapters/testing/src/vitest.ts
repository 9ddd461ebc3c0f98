/**
 * @fos/testing for Vitest. `fosGlobalSetup(options)` is a `globalSetup` file's default export: in Vitest's main
 * process it starts fos (an embedded engine served on 127.0.0.1, or a running server), builds or loads the fixture
 * once, and `provide`s that to the workers. In a test file, `await useWorld()` forks the fixture for the file, its
 * stream named after the file's path relative to the project's root, and registers a `beforeEach` that returns it to
 * the file's starting point before every test; the fork goes after the file. So a file's world and its ids follow
 * from the seed, the fixture and the file alone, whichever worker runs it and whatever ran there before
 * (docs/testing.md, "Reproducible runs").
 *
 * ```ts
 * // vitest.config.ts: test: { globalSetup: ["./fos.setup.ts"] }
 * // fos.setup.ts
 * export default fosGlobalSetup({ randomSeed: 7, fixture: async (world) => ({ customerId: "…" }) })
 * // a test file
 * const world = await useWorld<{ customerId: string }>()
 * ```
 */
import { relative, sep } from "node:path"
import { afterAll, afterEach, beforeEach, expect, inject } from "vitest"
import type { TestProject } from "vitest/node"
import { eachTest, joinSuite, type SuiteInfo, type SuiteOptions, startSuite } from "./Suite.ts"
import type { World } from "./World.ts"

declare module "vitest" {
  export interface ProvidedContext {
    /** What `fosGlobalSetup` hands the workers. */
    "fos/testing": SuiteInfo
  }
}

const key = "fos/testing"

/**
 * A `globalSetup` module's default export. Forks nothing at set-up (each test file forks its own) unless `workers`
 * says; the teardown stops the embedded engine, or deletes the fixture's snapshot it made on a running server.
 */
export const fosGlobalSetup = <F = undefined>(options: SuiteOptions<F> = {}) => async (project: TestProject): Promise<() => Promise<void>> => {
  const suite = await startSuite({ workers: 0, ...options })
  project.provide(key, suite.info as SuiteInfo)
  return suite.close
}

/**
 * The test file's world, a fork of the fixture made for the file: call it at the top of the file (`const world =
 * await useWorld()`). What the file does at its top before its first test (a receiver, more set-up) is part of the
 * starting point every test of the file gets back; the fixture's data is `world.fixture`, its ids the world's own.
 * Set up at the top, not in a `describe`'s `beforeAll`: one starting point serves the whole file, so a later
 * `describe`'s `beforeAll` would make what the restore before its first test removes.
 */
export const useWorld = async <F = unknown>(): Promise<World<F>> => {
  const info = inject(key) as SuiteInfo<F> | undefined
  if (info === undefined) throw new Error(`useWorld: nothing was provided as "${key}": add a globalSetup file whose default export is fosGlobalSetup(...)`)
  const testPath = expect.getState().testPath
  const file = testPath === undefined ? undefined : relative(process.cwd(), testPath).split(sep).join("/")
  const { world, leave } = await joinSuite(info, undefined, file === undefined ? {} : { file, stream: file })
  const hooks = eachTest(world)
  beforeEach((context) => hooks.beforeEach(context.task.name))
  afterEach((context) => hooks.afterEach(context.task.name))
  afterAll(async () => {
    await hooks.after()
    await leave()
  })
  return world
}
