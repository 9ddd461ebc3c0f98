/**
 * A suite across processes, whatever the test runner: a set-up process that starts fos (or reaches a running one)
 * and builds or loads the fixture once; test files that each fork the fixture for themselves, the fork's stream named
 * after the file, and return to the file's starting point before each test. The Vitest and node:test adapters
 * (`@fos/testing/vitest`, `@fos/testing/node-test`) are these calls wired to their hooks.
 *
 * A set-up process and its workers share no memory, so workers reach fos over HTTP: the set-up serves its embedded
 * engine on 127.0.0.1 (`serveEngine`), and hands the workers `SuiteInfo`, plain JSON: the address, the fixture's
 * organization, snapshot and data, and the forks it made for a runner that wants one per worker (`workers`). A file's
 * own fork, named after it, is what makes a seeded suite's ids independent of the runner's schedule: its world
 * follows from the seed, the fixture and the file alone, not from the worker nor the files that ran there before.
 */
import { createHash } from "node:crypto"
import type { Fork, Snapshot, SnapshotFile } from "@fos/contract"
import { maxForksPerOrganization, maxSnapshotLabelLength } from "@fos/contract/limits"
import type { ClockOption, CreateEngineOptions } from "@fos/http"
import { createFork, globalFetch, listSnapshots } from "./Requests.ts"
import { buildFixture, connect, type Fixture, forkedWorld, type ForkedWorld, forkWorld, loadFixture, type PendingRequest, type World } from "./World.ts"

// --- labels ------------------------------------------------------------------------------------------------------

/**
 * What the package writes in the label of each save it takes and each file it imports on a server (`?label=`, which
 * fos keeps and never reads): that it made it, for which suite (`owner`), what it is (the fixture, built or imported;
 * a fork's making; a test file's starting point), until when a run needs it (`expires`, real time), and for a file's starting point, the file.
 */
export interface SaveLabel {
  readonly owner: string
  readonly role: "fixture" | "making" | "start"
  readonly expires: string
  readonly file?: string
}

const labelPrefix = "fos-testing"

export const formatSaveLabel = (label: SaveLabel): string => {
  const head = `${labelPrefix} owner=${encodeURIComponent(label.owner)} role=${label.role} expires=${label.expires}`
  if (label.file === undefined) return head
  // A long path keeps its end, the part that tells files apart.
  const room = maxSnapshotLabelLength - head.length - " file=".length
  const file = encodeURIComponent(label.file)
  return `${head} file=${file.length <= room ? file : file.slice(file.length - room).replace(/^[^%]{0,2}%?/, "")}`
}

export const parseSaveLabel = (label: string | undefined): SaveLabel | undefined => {
  if (label === undefined || !label.startsWith(`${labelPrefix} `)) return undefined
  const members = new Map(label.slice(labelPrefix.length + 1).split(" ").map((part) => {
    const at = part.indexOf("=")
    return [part.slice(0, at), part.slice(at + 1)] as const
  }))
  const owner = members.get("owner")
  const role = members.get("role")
  const expires = members.get("expires")
  if (owner === undefined || expires === undefined || (role !== "fixture" && role !== "making" && role !== "start")) return undefined
  const file = members.get("file")
  const decode = (text: string) => {
    try {
      return decodeURIComponent(text)
    } catch {
      return text
    }
  }
  return { owner: decode(owner), role, expires, ...(file === undefined ? {} : { file: decode(file) }) }
}

/** A suite's owner when none is given: its project's root (the directory the runner started in), hashed. */
export const defaultOwner = (): string => `suite-${createHash("sha256").update(process.cwd()).digest("hex").slice(0, 16)}`

/** How long a run's saves and forks are taken to be needed, in real time, when `ttlMs` is not given. */
export const defaultTtlMs = 60 * 60_000

/** Every snapshot of a world, newest first. */
const allSnapshots = async (world: World<unknown>): Promise<Array<Snapshot>> => {
  const all: Array<Snapshot> = []
  let cursor: string | undefined
  for (;;) {
    const { data, meta } = await listSnapshots(world, { limit: 100, cursor })
    all.push(...data)
    if (meta.nextCursor === null || meta.nextCursor === undefined) return all
    cursor = meta.nextCursor
  }
}

/** What a sweep removed. */
export interface Swept {
  readonly forks: ReadonlyArray<string>
  readonly snapshots: ReadonlyArray<string>
}

/**
 * Removes what earlier runs left in `world`'s organization: every fork and snapshot the package made for `owner`
 * (an earlier run of the same suite, interrupted before its teardown: its saves, and a fixture file's import, which
 * carries the same label), and every one of another owner whose expiry has passed. A fork is the owner's when the
 * snapshot it was forked from is; forks go first, while their snapshots still say whose they are. What the package did not make (no label of its own) is never touched.
 */
export const sweep = async (world: World<unknown>, owner: string, now = Date.now()): Promise<Swept> => {
  const snapshots = await allSnapshots(world)
  const stale = new Set(snapshots.filter((s) => {
    const label = parseSaveLabel(s.label)
    return label !== undefined && (label.owner === owner || !(Date.parse(label.expires) > now))
  }).map((s) => s.id))
  const forks = await removeForks(world, stale)
  for (const id of stale) await world.deleteSnapshot(id).catch(ignoreGone)
  return { forks, snapshots: [...stale] }
}

/** Deletes every fork of `world` made from one of `snapshots`; answers their organizations. */
const removeForks = async (world: World<unknown>, snapshots: ReadonlySet<string>): Promise<Array<string>> => {
  const forks = (await world.client.simulate.listForks()).data.filter((f) => snapshots.has(f.snapshotId)).map((f) => f.organizationId)
  for (const organizationId of forks) await world.client.simulate.deleteFork({ params: { organizationId } }).catch(ignoreGone)
  return forks
}

/** A 404 while removing: another sweep or teardown removed it first. */
const ignoreGone = (error: unknown) => {
  if ((error as { status?: number }).status !== 404) throw error
}

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
  /** Whose saves these are (`SuiteOptions.owner`), and until when the run needs them: the labels of its saves. */
  readonly owner: string
  readonly expires: string
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
  /** How many worlds to fork at set-up, for a runner that takes one per worker (at most 64, the bound of forks per organization; the adapters fork per file and take none). */
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
  /**
   * On a running server, which suite the saves and forks are (the labels of its saves): a set-up removes what an
   * earlier run of the same owner left. A hash of the directory the runner started in when omitted; give each suite
   * that shares an organization of a server a name of its own.
   */
  readonly owner?: string
  /**
   * How long a run's saves and forks are needed, in real time (1 hour when omitted): past it, another suite's set-up
   * on the same organization removes them as left behind.
   */
  readonly ttlMs?: number
  /**
   * On a running server, whether the teardown runs on SIGINT and SIGTERM too (true when omitted): the signal's
   * default (the process ends) follows the teardown, unless something else listens for it.
   */
  readonly teardownOnSignal?: boolean
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
  const owner = options.owner ?? defaultOwner()
  const expires = new Date(Date.now() + (options.ttlMs ?? defaultTtlMs)).toISOString()
  const label = (role: SaveLabel["role"]) => formatSaveLabel({ owner, role, expires })
  let closing: Promise<void> | undefined
  const close = () =>
    closing ??= (async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
    })()
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
      await sweep(world, owner)
      if (options.teardownOnSignal !== false) cleanups.push(teardownOnSignals(close))
    }
    const source = options.fixture
    let fixture: Fixture<unknown>
    const labelled: World<unknown> = options.server === undefined ? world : { ...world, snapshot: () => world.snapshot({ label: label("fixture") }) }
    if (typeof source === "function") fixture = await buildFixture(labelled, source)
    else if (source !== undefined) fixture = await loadFixture(world, source, options.server === undefined ? {} : { label: label("fixture") })
    else fixture = await buildFixture(labelled, async () => undefined)
    if (options.server !== undefined) {
      // The fixture's forks go before it, whoever made them (a file's own fork, left by a worker that never reached
      // its end, included): a fork whose snapshot is gone says no more whose it is, and a sweep cannot find it.
      cleanups.push(async () => {
        await removeForks(world, new Set([fixture.snapshotId]))
        await world.deleteSnapshot(fixture.snapshotId).catch(ignoreGone)
      })
    }

    const workers = Math.min(Math.max(options.workers ?? 1, 0), maxForksPerOrganization)
    const worlds: Array<WorkerWorld> = []
    for (let n = 0; n < workers; n++) {
      const forked = await forkWorld(world, fixture.snapshotId)
      if (options.server !== undefined) cleanups.push(() => forked.discard().catch(ignoreGone))
      worlds.push({ fork: forked.fork, snapshotId: (await forked.snapshot({ label: label("making") })).id })
    }
    return {
      info: { baseUrl, apiKey: world.apiKey, organizationId: world.organizationId, snapshotId: fixture.snapshotId, fixture: fixture.data as F, worlds, owner, expires },
      close
    }
  } catch (error) {
    await close()
    throw error
  }
}

/**
 * Runs `close` on SIGINT and SIGTERM (once), then lets the signal do what it would have: end the process, unless
 * something else listens for it. Answers the function that stops listening.
 */
const teardownOnSignals = (close: () => Promise<void>): (() => Promise<void>) => {
  const signals = ["SIGINT", "SIGTERM"] as const
  const on = (signal: (typeof signals)[number]) => {
    off()
    void close().finally(() => {
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal)
    })
  }
  const handlers = signals.map((signal) => [signal, () => on(signal)] as const)
  const off = () => {
    for (const [signal, handler] of handlers) process.off(signal, handler)
  }
  for (const [signal, handler] of handlers) process.once(signal, handler)
  return async () => off()
}

/** A worker's world, and what the worker does with it when done. */
export interface JoinedWorld<F> {
  readonly world: World<F>
  /** Deletes the fork when the worker made it itself; closes the world's receivers otherwise. */
  readonly leave: () => Promise<void>
  /** Who holds the world, for `eachTest`'s label on the file's starting point; undefined for a fork made for the file. */
  readonly claim: Claim | undefined
}

/** A test file holding a world: its path (relative to the project's root), for the suite `owner`, until `expires`. */
export interface Claim {
  readonly file: string
  readonly owner: string
  readonly expires: string
}

/** The starting points other files of the suite saved in `world` and still hold (not past their expiry), newest first. */
const claimsOf = async (world: World<unknown>, now = Date.now()) =>
  (await allSnapshots(world)).flatMap((snapshot) => {
    const label = parseSaveLabel(snapshot.label)
    return label?.role === "start" && label.file !== undefined && Date.parse(label.expires) > now ? [{ snapshot, file: label.file }] : []
  })

const takenError = (world: World<unknown>, file: string, holder: { readonly snapshot: Snapshot; readonly file: string }) =>
  new Error(
    `@fos/testing: ${file} and ${holder.file} take the same world (${world.organizationId}; ${holder.file} saved its starting point ` +
      `${holder.snapshot.id} in it): each restores the world before its tests, so they would wipe each other's data. A world serves one ` +
      `test file at a time: give each runner process its own worker number (Vitest's VITEST_POOL_ID), or fork a world for the file (joinSuite without a worker)`
  )

export interface JoinOptions {
  /** The test file taking the world, for the refusal of a world another file holds. */
  readonly file?: string
  /**
   * For a world forked now (no `worker`): the fork's stream name (`?stream=`), so that on a seeded engine the world
   * and its ids follow from the seed, the fixture and the name alone. The adapters give the test file's path.
   */
  readonly stream?: string
}

/**
 * A worker's world: the set-up's fork for worker `worker` (from 1), restored to its making so that what an earlier
 * test file of the same worker did is gone; or, without one (node:test, which has no worker ids, or more workers than
 * forks), a fork made now, which `leave` deletes. `file` names the test file taking it: a world another file of the
 * suite holds (its starting point saved and not deleted yet) is refused, before anything of it changes.
 */
export const joinSuite = async <F>(info: SuiteInfo<F>, worker?: number, options: JoinOptions = {}): Promise<JoinedWorld<F>> => {
  const parent = { baseUrl: info.baseUrl, apiKey: info.apiKey }
  const made = worker === undefined ? undefined : info.worlds[worker - 1]
  if (made !== undefined) {
    const world = forkedWorld(parent, made.fork, info.fixture)
    const file = options.file ?? `worker ${worker}'s file`
    for (const holder of await claimsOf(world)) {
      // The file's own, left by a run of it that never reached its end (a crash, a watch-mode rerun): no one holds it.
      if (holder.file === file) await world.deleteSnapshot(holder.snapshot.id).catch(ignoreGone)
      else throw takenError(world, file, holder)
    }
    await world.restore(made.snapshotId)
    return { world, leave: world.close, claim: { file, owner: info.owner ?? defaultOwner(), expires: info.expires ?? new Date(Date.now() + defaultTtlMs).toISOString() } }
  }
  const fork = await createFork({ ...parent, fetch: globalFetch }, info.snapshotId, options.stream)
  const world: ForkedWorld<F> = forkedWorld(parent, fork, info.fixture)
  return { world, leave: world.discard, claim: undefined }
}

export interface EachTestOptions {
  /** The file holding the world (`joinSuite`'s `claim`): the starting point is saved under its label. */
  readonly claim?: Claim | undefined
  /**
   * Told when a restore before `test` waited for requests an earlier test sent and did not await (`previous`, the
   * last test to end); `console.warn` when omitted.
   */
  readonly onWaited?: (report: { readonly test: string | undefined; readonly previous: string | undefined; readonly requests: ReadonlyArray<PendingRequest> }) => void
}

/**
 * What a test file does around its tests: before the first, save the world as the file's set-up left it; before
 * each later one, restore that; after the last, delete the save (an organization keeps at most 20 snapshots).
 *
 * Tests that run at the same time in one world (`describe.concurrent`) share one starting point: those that start
 * together start from one save (taken once) or one restore, and a test that starts while others still run waits for
 * them to end before the next restore, which would otherwise undo what they are doing. `beforeEach` and `afterEach`
 * take the test's name; a `beforeEach` given none is taken for a runner that runs one test at a time.
 */
export const eachTest = (world: World<unknown>, options: EachTestOptions = {}) => {
  let start: string | undefined
  /** The save or restore under way, which a test starting now shares. */
  let making: Promise<void> | undefined
  const running = new Set<string>()
  let drained: { readonly promise: Promise<void>; readonly resolve: () => void } | undefined
  let previous: string | undefined
  const onWaited = options.onWaited ?? ((report) => {
    const requests = report.requests.map((r) => `${r.method} ${r.path}`).join(", ")
    console.warn(
      `@fos/testing: the restore before ${report.test === undefined ? "a test" : `"${report.test}"`} first waited for ${requests}, sent by an earlier test` +
        `${report.previous === undefined ? "" : ` ("${report.previous}")`} and not awaited: its answer now lands before the restore, not in this test's world`
    )
  })

  const save = async () => {
    const claim = options.claim
    if (claim === undefined) {
      start = (await world.snapshot()).id
      return
    }
    const saved = await world.snapshot({ label: formatSaveLabel({ owner: claim.owner, role: "start", expires: claim.expires, file: claim.file }) })
    // Two files that joined the world at once both found it free: the one that saved first keeps it.
    const holders = await claimsOf(world)
    const older = holders.slice(holders.findIndex((h) => h.snapshot.id === saved.id) + 1).find((h) => h.file !== claim.file)
    if (older !== undefined) {
      await world.deleteSnapshot(saved.id)
      throw takenError(world, claim.file, older)
    }
    start = saved.id
  }
  const restore = async (test: string | undefined) => {
    const restored = await world.restore(start!)
    if (restored.waitedFor.length > 0) onWaited({ test, previous, requests: restored.waitedFor })
  }

  return {
    beforeEach: async (test?: string): Promise<void> => {
      for (;;) {
        if (making !== undefined) break
        if (test === undefined || running.size === 0) {
          making = (start === undefined ? save() : restore(test)).finally(() => {
            making = undefined
          })
          break
        }
        drained ??= (() => {
          let resolve!: () => void
          const promise = new Promise<void>((r) => (resolve = r))
          return { promise, resolve }
        })()
        await drained.promise
      }
      if (test !== undefined) running.add(test)
      try {
        await making
      } catch (error) {
        if (test !== undefined) running.delete(test)
        throw error
      }
    },
    afterEach: (test?: string): void => {
      if (test === undefined) return
      running.delete(test)
      previous = test
      if (running.size === 0 && drained !== undefined) {
        const done = drained
        drained = undefined
        done.resolve()
      }
    },
    after: async () => {
      if (start !== undefined) await world.deleteSnapshot(start)
      start = undefined
    }
  }
}
