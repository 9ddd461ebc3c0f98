/**
 * @fos/testing for node:test. `fosGlobalSetup(options)` gives the `globalSetup` and `globalTeardown` that `node
 * --test --test-global-setup=<file>` calls: the set-up starts fos (an embedded engine served on 127.0.0.1, or a
 * running server) and builds or loads the fixture once, and hands the test processes what they need through the
 * environment (`FOS_TESTING_SUITE`, JSON). node:test runs each file in a process of its own and names no worker,
 * so `await useWorld()` forks the fixture for its file, returns to the file's starting point before each test, and
 * deletes the fork after the file.
 *
 * ```ts
 * // fos.setup.ts
 * export const { globalSetup, globalTeardown } = fosGlobalSetup({ randomSeed: 7, fixture: async (world) => ({ … }) })
 * // a test file
 * const world = await useWorld<{ customerId: string }>()
 * ```
 */
import { relative, sep } from "node:path"
import { after, afterEach, beforeEach } from "node:test"
import { eachTest, joinSuite, type StartedSuite, type SuiteInfo, type SuiteOptions, startSuite } from "./Suite.ts"
import type { World } from "./World.ts"

/** The stream names this process's worlds took (`useWorld`). */
const namedHere = new Set<string>()

/** The environment variable the set-up hands the test processes the suite in. */
export const suiteVariable = "FOS_TESTING_SUITE"

/** What a `--test-global-setup` module exports: `export const { globalSetup, globalTeardown } = fosGlobalSetup(...)`. */
export const fosGlobalSetup = <F = undefined>(options: SuiteOptions<F> = {}) => {
  let suite: StartedSuite<F> | undefined
  return {
    globalSetup: async (): Promise<void> => {
      // No forks at set-up: node:test's files fork their own.
      suite = await startSuite({ workers: 0, ...options })
      process.env[suiteVariable] = JSON.stringify(suite.info)
    },
    globalTeardown: async (): Promise<void> => {
      await suite?.close()
      suite = undefined
    }
  }
}

/**
 * The test file's world, a fork of the fixture: call it at the top of the file (`const world = await useWorld()`).
 * What the file does at its top before its first test is part of the starting point every test of the file gets
 * back (set up there, not in a `describe`'s `before`, which the restore before its first test would undo).
 */
export const useWorld = async <F = unknown>(): Promise<World<F>> => {
  const text = process.env[suiteVariable]
  if (text === undefined) {
    throw new Error(`useWorld: ${suiteVariable} is not set: run node --test with --test-global-setup=<a file exporting fosGlobalSetup(...)'s globalSetup and globalTeardown>`)
  }
  // The fork's stream named after the file (relative to the directory node --test started in): the file's ids
  // follow from the seed, the fixture and the file alone. Files sharing one process (--test-isolation=none) share
  // its entry point: the first names its fork after it, the others fork unnamed.
  const entry = process.argv[1]
  const file = entry === undefined ? undefined : relative(process.cwd(), entry).split(sep).join("/")
  const stream = file === undefined || namedHere.has(file) ? undefined : file
  if (stream !== undefined) namedHere.add(stream)
  const { world, leave } = await joinSuite(JSON.parse(text) as SuiteInfo<F>, undefined, stream === undefined ? {} : { file: stream, stream })
  const hooks = eachTest(world)
  beforeEach((context) => hooks.beforeEach(context.name))
  afterEach((context) => hooks.afterEach(context.name))
  after(async () => {
    await hooks.after()
    await leave()
  })
  return world
}
