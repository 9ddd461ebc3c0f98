/**
 * Which processes sharing the store are alive: the owners of the leases a crash leaves behind (an advance of a
 * sandbox clock, an Idempotency-Key's in-progress claim).
 *
 * Each engine names itself with a process id and keeps a row of the `processes` table alive: it writes it when it
 * starts, renews it every second (`heartbeatMs`) on real time, and marks it dead when it closes. A lease names the
 * process that holds it (`<process id>.<n>`), so another process tells a lease left by a crash from a running one by
 * that row: a process not heard from for `aliveForMs` is dead, and its leases are free a few seconds after a kill -9,
 * not after a minute. A live process's leases hold for as long as its work runs, however long that is.
 *
 * A process wrongly judged dead (its heartbeat late by seconds, under a load that starves it of connections) is made
 * safe where its lease is used: an advance checks at each step that it still owns its clock, and a keyed request
 * checks that it still owns its claim when it commits, so a taken-over owner stops instead of acting twice.
 *
 * A lease whose process has no row is dead: rows of processes dead for a day are removed when an engine starts, so
 * the table does not grow with restarts.
 */
import { Clock, Context, Duration, Effect, Layer } from "effect"
import * as Domain from "./Domain.ts"
import * as IdGenerator from "./IdGenerator.ts"
import * as Store from "./Store.ts"

export interface ProcessRow {
  readonly id: string
  /** Until when (real time) the process counts as alive; 0 once it closed. */
  readonly aliveUntilMs: number
}

export const Processes = Store.table<ProcessRow>({
  name: "processes",
  key: (p) => p.id,
  // The long-dead first, for the clean-up at start; nothing reads a total.
  orders: { byAliveUntil: { partition: () => "", sort: (p) => p.aliveUntilMs, counted: false } }
})

/**
 * A live stream a process holds open (LiveFeed.ts in @fos/http): the streams of an organization are counted over
 * every process sharing the store, so the cap holds for the service. A row whose owner is dead (a process killed
 * with its streams open) no longer counts, and is removed by the next count that finds it.
 */
export interface OpenStreamRow {
  readonly id: string
  readonly organizationId: string
  /** The lease owner of the process holding it (`newOwner`). */
  readonly owner: string
}

export const OpenStreams = Store.table<OpenStreamRow>({
  name: "open_streams",
  key: (s) => s.id,
  orders: { byOrganization: { partition: (s) => s.organizationId, sort: (s) => s.id, counted: false } }
})

/** The processes sharing the store and the live streams they hold open: no sandbox's, so a reset keeps them. */
export const domain = Domain.make({ name: "kernel/Liveness", keptTables: [Processes, OpenStreams] })

/** How often a process renews its row. */
export const heartbeatMs = 1_000

/** How long after its last renewal a process counts as alive: a crashed process's leases are free this long after. */
export const aliveForMs = 3_000

/** How long a dead process's row is kept before an engine's start removes it, and how many one start removes. */
const keepDeadMs = 24 * 60 * 60 * 1000
const removedPerStart = 100

export interface LivenessService {
  /** This process's id, the prefix of the leases it takes (`ownerOf`). */
  readonly processId: string
  /** A fresh lease owner of this process: `<process id>.<n>`. */
  readonly newOwner: () => string
  /** Whether `owner` (a lease owner) is this process's. */
  readonly isOwn: (owner: string) => boolean
  /** Whether the process that holds `owner` (a lease owner) is alive: its row says so (a process with none is dead). */
  readonly isAlive: (owner: string) => Effect.Effect<boolean>
}

export class Liveness extends Context.Service<Liveness, LivenessService>()("fos/Liveness") {}

/**
 * This process's liveness over `store`, on `realClock`: its row written now and renewed every second until the
 * layer's scope closes, which marks it dead. The process id comes from the unseeded source (`random` of the layer's
 * context): a seed reproduces what a client sees, and two processes of one seed must not share an id.
 */
export const layer = (realClock: Clock.Clock): Layer.Layer<Liveness, never, Store.Store> =>
  Layer.effect(
    Liveness,
    Effect.gen(function*() {
      const store = yield* Store.Store
      const processId = yield* IdGenerator.randomHex(16)
      const realNow = () => realClock.currentTimeMillisUnsafe()
      const beat = Effect.orDie(store.transaction(Effect.gen(function*() {
        const row = { id: processId, aliveUntilMs: realNow() + aliveForMs }
        const current = yield* store.getForUpdate(Processes, processId)
        yield* current === undefined ? store.insert(Processes, row) : store.update(Processes, row)
      })))
      yield* beat
      yield* removeLongDead(store, realNow())
      yield* Effect.forkScoped(
        // A store that is down for a moment must not end the heartbeat for good.
        Effect.forever(Effect.andThen(Effect.sleep(Duration.millis(heartbeatMs)), Effect.catchCause(beat, () => Effect.void))).pipe(
          // The sleep is real time's, whatever clock the engine runs on.
          Effect.provideService(Clock.Clock, realClock)
        )
      )
      // A closed process's leases are free at once: its row says it is gone. A close does not wait for it past a
      // second (work that outlived a close's deadline may hold the store, kernel/Lifecycle.ts): the row then runs out
      // on its own, as a crashed process's does.
      yield* Effect.addFinalizer(() =>
        Effect.ignore(store.update(Processes, { id: processId, aliveUntilMs: 0 })).pipe(
          Effect.timeoutOrElse({ duration: Duration.seconds(1), orElse: () => Effect.void }),
          Effect.provideService(Clock.Clock, realClock)
        )
      )
      let owners = 0
      const service: LivenessService = {
        processId,
        newOwner: () => `${processId}.${owners++}`,
        isOwn: (owner) => owner.startsWith(`${processId}.`),
        isAlive: (owner) =>
          Effect.map(store.get(Processes, owner.split(".", 1)[0]!), (row) => row !== undefined && row.aliveUntilMs > realNow())
      }
      return service
    })
  )

/** Removes up to `removedPerStart` rows of processes dead for longer than `keepDeadMs`. */
const removeLongDead = (store: Store.StoreService, nowMs: number) =>
  Effect.gen(function*() {
    const oldest = yield* store.page(Processes, { order: "byAliveUntil", partition: "", descending: false, backward: false, from: undefined, limit: removedPerStart })
    for (const row of oldest) {
      if (row.aliveUntilMs >= nowMs - keepDeadMs) break
      yield* store.remove(Processes, row.id)
    }
  })
