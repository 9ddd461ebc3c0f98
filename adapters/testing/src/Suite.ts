/**
 * A suite across processes, whatever the test runner: a set-up process that starts fos (or reaches a running one),
 * builds or loads the fixture once and forks it into one world per worker; workers that take their world, restore
 * it at the start of each test file, and return to each file's starting point before each test. The Vitest and
 * node:test adapters (`@fos/testing/vitest`, `@fos/testing/node-test`) are these calls wired to their hooks.
 *
 * A set-up process and its workers share no memory, so workers reach fos over HTTP: the set-up serves its embedded
 * engine on 127.0.0.1 (`serveEngine`), and hands the workers `SuiteInfo`, plain JSON: the address, the fixture's
 * organization, snapshot and data, and the forks it made, each with its key. The forks are made in the set-up, in
 * order, so that with a seed worker N gets the same organization and ids every run.
 */
import { createClient } from "@fos/client"
import { type Fork, maxForksPerOrganization, type SnapshotFile } from "@fos/contract"
import type { ClockOption, CreateEngineOptions } from "@fos/http"
import { buildFixture, connect, type Fixture, forkedWorld, type ForkedWorld, forkWorld, loadFixture, type World } from "./World.ts"

/** A fork the set-up made for a worker: the fork, and the snapshot of it taken at its making (its world as forked). */
export interface WorkerWorld {
  readonly fork: Fork
  readonly snapshotId: string
}

/** What workers are handed (JSON): where fos is, the fixture, and one fork per worker. */
export interface SuiteInfo<F = unknown> {
  /** `<origin>/sandbox`. */
  readonly baseUrl: string
  /** The fixture organization's key: a worker without a fork of its own forks with it. */
  readonly apiKey: string
  readonly organizationId: string
  /** The fixture's snapshot, in the fixture organization. */
  readonly snapshotId: string
  /** What the fixture's build answered, in the fixture's ids (each world has them in its own). */
  readonly fixture: F
  /** The forks made at set-up: worker N (from 1) takes the Nth. */
  readonly worlds: ReadonlyArray<WorkerWorld>
}

export interface SuiteOptions<F = undefined> {
  /**
   * A running fos to reach (`fos serve`: give it `--random-seed`, `--clock virtual` and `--insecure-webhooks` for
   * what this package offers): its sandbox base address and a read-write sandbox key of the organization the fixture
   * is built in. Without it, the set-up starts an embedded engine and serves it on 127.0.0.1.
   */
  readonly server?: { readonly baseUrl: string; readonly apiKey: string }
  /** The world every test starts from: built once by a function, or an exported snapshot file (a path, or its JSON). */
  readonly fixture?: ((world: World<unknown>) => Promise<F>) | string | URL | SnapshotFile
  /** How many worlds to fork at set-up: one per worker (at most 64, the bound of forks per organization). */
  readonly workers?: number
  /** The embedded engine's seed (1 when omitted; docs/testing.md). */
  readonly randomSeed?: string | number
  /** The embedded engine's clock: virtual from the seed's fixed instant when omitted. */
  readonly clock?: ClockOption
  /** The rest of the embedded engine's options. */
  readonly engine?: Omit<CreateEngineOptions, "randomSeed" | "clock" | "seed">
  /** Where the embedded engine listens: 127.0.0.1 and a free port when omitted. */
  readonly port?: number
  readonly host?: string
}

/** A suite's fos, started: what to hand the workers, and the teardown. */
export interface StartedSuite<F> {
  readonly info: SuiteInfo<F>
  readonly close: () => Promise<void>
}

/**
 * The set-up: starts an embedded engine and serves it (or connects to `server`), builds or loads the fixture, and
 * forks it `workers` times. `close` deletes what it made on a running server (the forks, the fixture's snapshot), or
 * stops the embedded engine.
 */
export const startSuite = async <F = undefined>(options: SuiteOptions<F> = {}): Promise<StartedSuite<F>> => {
  const cleanups: Array<() => Promise<void>> = []
  const close = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  }
  try {
    let world: World<unknown>
    let baseUrl: string
    if (options.server === undefined) {
      const { startEngine } = await import("./Embedded.ts")
      const fos = await startEngine({
        ...(options.randomSeed === undefined ? {} : { randomSeed: options.randomSeed }),
        ...(options.clock === undefined ? {} : { clock: options.clock }),
        ...(options.engine === undefined ? {} : { engine: options.engine })
      })
      cleanups.push(fos.close)
      const served = await fos.serve({
        ...(options.port === undefined ? {} : { port: options.port }),
        ...(options.host === undefined ? {} : { host: options.host })
      })
      world = fos.world
      baseUrl = served.baseUrl
    } else {
      world = await connect(options.server)
      baseUrl = world.baseUrl
      cleanups.push(world.close)
    }
    const source = options.fixture
    let fixture: Fixture<unknown>
    if (typeof source === "function") fixture = await buildFixture(world, source)
    else if (source !== undefined) fixture = await loadFixture(world, source)
    else fixture = await buildFixture(world, async () => undefined)
    if (options.server !== undefined) cleanups.push(() => world.deleteSnapshot(fixture.snapshotId))

    const workers = Math.min(Math.max(options.workers ?? 1, 0), maxForksPerOrganization)
    const worlds: Array<WorkerWorld> = []
    for (let n = 0; n < workers; n++) {
      const forked = await forkWorld(world, fixture.snapshotId)
      if (options.server !== undefined) cleanups.push(forked.discard)
      worlds.push({ fork: forked.fork, snapshotId: (await forked.snapshot()).id })
    }
    return {
      info: { baseUrl, apiKey: world.apiKey, organizationId: world.organizationId, snapshotId: fixture.snapshotId, fixture: fixture.data as F, worlds },
      close
    }
  } catch (error) {
    await close()
    throw error
  }
}

/** A worker's world, and what the worker does with it when done. */
export interface JoinedWorld<F> {
  readonly world: World<F>
  /** Deletes the fork when the worker made it itself; closes the world's receivers otherwise. */
  readonly leave: () => Promise<void>
}

/**
 * A worker's world: the set-up's fork for worker `worker` (from 1), restored to its making so that what an earlier
 * test file of the same worker did is gone; or, without one (node:test, which has no worker ids, or more workers than
 * forks), a fork made now, which `leave` deletes.
 */
export const joinSuite = async <F>(info: SuiteInfo<F>, worker?: number): Promise<JoinedWorld<F>> => {
  const parent = { baseUrl: info.baseUrl, apiKey: info.apiKey, fetch: (input: Request | string | URL, init?: RequestInit) => globalThis.fetch(input, init) }
  const made = worker === undefined ? undefined : info.worlds[worker - 1]
  if (made !== undefined) {
    const world = forkedWorld(parent, made.fork, info.fixture)
    await world.restore(made.snapshotId)
    return { world, leave: world.close }
  }
  const fork = await createClient(parent).simulate.createFork({ params: { id: info.snapshotId } })
  const world: ForkedWorld<F> = forkedWorld(parent, fork, info.fixture)
  return { world, leave: world.discard }
}

/**
 * What a test file does around its tests: before the first, save the world as the file's set-up left it; before
 * each later one, restore that; after the last, delete the save (an organization keeps at most 20 snapshots).
 */
export const eachTest = (world: World<unknown>) => {
  let start: string | undefined
  return {
    beforeEach: async () => {
      if (start === undefined) start = (await world.snapshot()).id
      else await world.restore(start)
    },
    after: async () => {
      if (start !== undefined) await world.deleteSnapshot(start)
      start = undefined
    }
  }
}
