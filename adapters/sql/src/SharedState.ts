/**
 * What the processes sharing a PostgreSQL database keep for the service (packages/core kernel/SharedState.ts), in
 * the tables of migration 14:
 *
 * - **Buckets**: a row per rate-limit bucket. `fos_take_tokens` refills and takes under the row's lock, in one
 *   statement, so two processes never spend one token; `fos_rate_time` holds how far every process's clock advances
 *   have moved, which the buckets count as time passed.
 * - **Recent requests**: `fos_requests`, the newest of each organization's environment. A process gathers the
 *   requests it answers while one insert is in flight and inserts them with the next (one statement for a moment's
 *   requests, off the requests' path), which also notifies every process of the sandbox's records (`NOTIFY
 *   fos_requests`, a notification per few kilobytes of records), for the live streams. Each process listens on one connection of its own, and listens again when that connection is lost.
 *
 * Its statements run outside any request's transaction, in the context the store was built in.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { SharedState, Store } from "@fos/core"
import { Clock, Deferred, Duration, Effect, Exit, Queue } from "effect"
import { sqlDefect } from "./SqlStore.ts"

/** The channel every process listens on for the requests the others answer. */
const channel = "fos_requests"
/** A notification's payload is at most 8000 bytes. */
const maxPayloadBytes = 7_900
const encoder = new TextEncoder()
/**
 * A process removes a scope's records past the kept ones once it has added this many to it: a scope holds at most
 * the kept ones and this many per process (a read takes the newest kept ones only).
 */
const pruneEvery = 500
/** The records one insert takes at most. */
const insertSlice = 1_000
/** How long a lost listening connection waits before listening again, in real time. */
const relistenMs = 1_000

type Row = { organization_id: string; environment: string; answered_ms: number; answered_by: string; n: string | number; entry: string }

const rowOf = (r: SharedState.SharedRequestRecord): Row => ({
  organization_id: r.organizationId,
  environment: r.environment,
  answered_ms: r.answeredMs,
  answered_by: r.answeredBy,
  n: r.n,
  entry: r.json
})

const recordOf = (row: Row): SharedState.SharedRequestRecord => ({
  organizationId: row.organization_id,
  environment: row.environment as SharedState.SharedRequestRecord["environment"],
  answeredMs: Number(row.answered_ms),
  answeredBy: row.answered_by,
  n: Number(row.n),
  json: row.entry
})

/** The shared state over the layer's PostgreSQL client; its listener lives as long as the layer's scope. */
export const makeSharedState = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient
  const context = yield* Effect.context<never>()
  // Statements of their own: never inside the transaction of the request that asks, whatever its context holds.
  const run = <A>(effect: Effect.Effect<A, unknown>): Effect.Effect<A> =>
    effect.pipe(Effect.catch((e) => Effect.die(sqlDefect(e as never))), Effect.provideContext(context))

  const buckets: SharedState.SharedBuckets = {
    take: (scope, name, spec, want, realNowMs) =>
      Effect.map(
        run(sql<{ o_taken: number; o_tokens: number }>`SELECT o_taken, o_tokens FROM fos_take_tokens(${scope}, ${name}, ${spec.perSecond}, ${spec.burst}, ${want}, ${realNowMs})`),
        (rows) => ({ taken: Number(rows[0]!.o_taken), tokens: Number(rows[0]!.o_tokens) })
      ),
    advanced: (ms) => ms <= 0 ? Effect.void : Effect.asVoid(run(sql`UPDATE fos_rate_time SET advanced_ms = advanced_ms + ${ms} WHERE id = 1`))
  }

  // The records gathered while an insert is in flight, and the two moments a reader may wait for.
  let pending: Array<SharedState.SharedRequestRecord> = []
  let wake = Deferred.makeUnsafe<void>()
  let gathered = Deferred.makeUnsafe<void>()
  let inFlight: Deferred.Deferred<void> | undefined
  const addedSincePrune = new Map<string, number>()

  /**
   * The notifications of a batch: the sandbox's records (what a stream shows), as JSON arrays of records, each
   * within a notification's bound. A record past it alone (a path of thousands of bytes) is kept, not told.
   */
  const notificationsOf = (batch: ReadonlyArray<SharedState.SharedRequestRecord>): Array<string> => {
    const out: Array<string> = []
    let parts: Array<string> = []
    let bytes = 2
    for (const r of batch) {
      if (r.environment !== "sandbox") continue
      const part = JSON.stringify([r.organizationId, r.environment, r.answeredMs, r.answeredBy, r.n, r.json])
      const size = encoder.encode(part).length + 1
      if (size + 2 > maxPayloadBytes) continue
      if (bytes + size > maxPayloadBytes) {
        out.push(`[${parts.join(",")}]`)
        parts = []
        bytes = 2
      }
      parts.push(part)
      bytes += size
    }
    if (parts.length > 0) out.push(`[${parts.join(",")}]`)
    return out
  }

  /**
   * One statement, of the same text whatever the batch (so PostgreSQL plans it once): the records, and the
   * notifications of them, sent when it commits.
   */
  const insert = (batch: ReadonlyArray<SharedState.SharedRequestRecord>) =>
    run(sql`WITH added AS (
        INSERT INTO fos_requests (organization_id, environment, answered_ms, answered_by, n, entry)
        SELECT r.organization_id, r.environment, r.answered_ms, r.answered_by, r.n, r.entry
        FROM json_to_recordset(${JSON.stringify(batch.map(rowOf))}::json)
          AS r (organization_id text, environment text, answered_ms float8, answered_by text, n bigint, entry text)
        ON CONFLICT DO NOTHING RETURNING 1)
      SELECT (SELECT count(*) FROM added) AS added,
        (SELECT count(pg_notify(${channel}, p)) FROM json_array_elements_text(${JSON.stringify(notificationsOf(batch))}::json) AS v (p)) AS told`)

  /** Removes what lies past the newest kept records of a scope. */
  const prune = (organizationId: string, environment: string) =>
    run(sql`DELETE FROM fos_requests WHERE organization_id = ${organizationId} AND environment = ${environment}
      AND (answered_ms, answered_by, n) < (
        SELECT answered_ms, answered_by, n FROM fos_requests WHERE organization_id = ${organizationId} AND environment = ${environment}
        ORDER BY answered_ms DESC, answered_by DESC, n DESC OFFSET ${SharedState.requestsKeptPerScope - 1} LIMIT 1)`)

  const flushOnce = Effect.gen(function*() {
    yield* Deferred.await(wake)
    wake = Deferred.makeUnsafe()
    const batch = pending
    const done = gathered
    pending = []
    gathered = Deferred.makeUnsafe()
    inFlight = done
    // A very busy moment's records go in slices.
    for (let i = 0; i < batch.length; i += insertSlice) yield* Effect.ignore(insert(batch.slice(i, i + insertSlice)))
    for (const record of batch) {
      const scope = `${record.organizationId}/${record.environment}`
      const added = (addedSincePrune.get(scope) ?? 0) + 1
      addedSincePrune.set(scope, added)
      if (added >= pruneEvery) {
        addedSincePrune.delete(scope)
        yield* Effect.ignore(prune(record.organizationId, record.environment))
      }
    }
    inFlight = undefined
    Deferred.doneUnsafe(done, Exit.void)
  })
  yield* Effect.forkScoped(Effect.forever(flushOnce))

  // Listening holds a connection and has every notification decoded: only while a stream of this process waits.
  const listeners = new Set<(record: SharedState.SharedRequestRecord) => void>()
  let wanted = Deferred.makeUnsafe<void>()
  let unwanted = Deferred.makeUnsafe<void>()
  // Done once PostgreSQL confirms the LISTEN: a new listener waits for it, so that it misses nothing told after.
  let listening = Deferred.makeUnsafe<void>()
  const listenOnce = Effect.scoped(Effect.gen(function*() {
    yield* Deferred.await(wanted)
    const stop = unwanted
    yield* Effect.addFinalizer(() => Effect.sync(() => {
      if (Deferred.isDoneUnsafe(listening)) listening = Deferred.makeUnsafe()
    }))
    const notes = yield* sql.listen(channel)
    Deferred.doneUnsafe(listening, Exit.void)
    while (true) {
      const note = yield* Effect.raceFirst(Queue.take(notes), Effect.as(Deferred.await(stop), undefined))
      if (note === undefined) return
      for (const [organizationId, environment, answeredMs, answeredBy, n, entry] of JSON.parse(note.payload) as Array<[string, string, number, string, number, string]>) {
        const record = recordOf({ organization_id: organizationId, environment, answered_ms: answeredMs, answered_by: answeredBy, n, entry })
        for (const listener of listeners) listener(record)
      }
    }
  }))
  yield* Effect.forkScoped(Effect.forever(Effect.catchCause(listenOnce, () => Effect.sleep(Duration.millis(relistenMs)))))

  const requests: SharedState.SharedRequests = {
    record: (record) => {
      pending.push(record)
      Deferred.doneUnsafe(wake, Exit.void)
    },
    newest: (organizationId, environment, before, limit) =>
      Effect.gen(function*() {
        // What this process recorded before the call is inserted before it is read.
        const waitFor = pending.length > 0 ? gathered : inFlight
        if (waitFor !== undefined) yield* Deferred.await(waitFor)
        const kept = sql`SELECT answered_ms, answered_by, n, entry FROM fos_requests
          WHERE organization_id = ${organizationId} AND environment = ${environment}
          ORDER BY answered_ms DESC, answered_by DESC, n DESC LIMIT ${SharedState.requestsKeptPerScope}`
        const rows = yield* run(sql<Row & { total: string | number }>`WITH kept AS (${kept})
          SELECT k.answered_ms, k.answered_by, k.n, k.entry, (SELECT count(*) FROM kept) AS total FROM kept k
          ${before === undefined ? sql`` : sql`WHERE (k.answered_ms, k.answered_by, k.n) < (${before.answeredMs}::float8, ${before.answeredBy}, ${before.n}::bigint)`}
          ORDER BY k.answered_ms DESC, k.answered_by DESC, k.n DESC LIMIT ${limit}`)
        const total = rows.length > 0
          ? Number(rows[0]!.total)
          : Number((yield* run(sql<{ total: string | number }>`SELECT count(*) AS total FROM (${kept}) AS kept`))[0]!.total)
        return { records: rows.map((row) => recordOf({ ...row, organization_id: organizationId, environment })), total }
      }),
    subscribe: (listener) => {
      listeners.add(listener)
      if (listeners.size === 1) {
        unwanted = Deferred.makeUnsafe()
        Deferred.doneUnsafe(wanted, Exit.void)
      }
      return () => {
        if (!listeners.delete(listener) || listeners.size > 0) return
        wanted = Deferred.makeUnsafe()
        Deferred.doneUnsafe(unwanted, Exit.void)
      }
    },
    // At most a second: a database that cannot be reached delays a stream's start, never holds it.
    listening: Effect.suspend(() => Effect.raceFirst(Deferred.await(listening), Effect.sleep(Duration.millis(relistenMs)))).pipe(Effect.provideContext(context))
  }

  /** Buckets left full are forgotten when a process starts: a missing bucket is a full one. */
  const startedMs = yield* Clock.currentTimeMillis
  yield* Effect.ignore(run(sql`DELETE FROM fos_rate_buckets
    WHERE tokens + greatest(0, ${startedMs} + coalesce((SELECT advanced_ms FROM fos_rate_time WHERE id = 1), 0) - at_ms) * per_second / 1000 >= burst`))

  return { buckets, requests } satisfies Store.StoreService["shared"]
})
