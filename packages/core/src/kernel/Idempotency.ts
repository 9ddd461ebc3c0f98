/**
 * Idempotency: rules 1 to 7 of the spec, independent of HTTP.
 *
 * A keyed request first claims its key in a short transaction (an in-progress record with a lease), then runs
 * its effect in a second transaction that also writes the completed record, so the record commits with the
 * effect it protects or not at all.
 *
 * - same key, same body after a success: the stored response, marked replayed;
 * - same key, other body after a success or a 5xx: IDEMPOTENCY_KEY_CONFLICT;
 * - same key while the first is still running: IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS. A claim this engine holds is
 *   running for as long as its request is, whatever the clock says: an advance of the virtual clock (even the keyed
 *   request's own) can pass a lease while the request that took it still runs. A claim of another process holds
 *   while that process is alive (Liveness.ts): a claim left by a crash is free a few seconds after it, and one of a
 *   live process holds however long its request runs. A claim whose process has no liveness row keeps its lease,
 *   which runs on real time (`RealClock`) whatever the engine's clock: it guards a crash, not business. A request
 *   whose claim was taken over (its process judged dead while it ran) finds so when it commits, and commits nothing;
 * - a 4xx commits nothing and frees the key; a 5xx binds the key to its body, and the same body runs again;
 * - keys are scoped to one organization and environment;
 * - records are kept for the configured retention, then removed by a durable timer.
 */
import { Clock, Context, Effect, Exit, Layer, Schema } from "effect"
import * as Domain from "./Domain.ts"
import * as Liveness from "./Liveness.ts"
import * as Problem from "./Problem.ts"
import * as RealClock from "./RealClock.ts"
import * as Store from "./Store.ts"
import * as Timers from "./Timers.ts"
import * as Wire from "./Wire.ts"

/** A response as kept for replay: byte-identical body and its content type. */
export interface StoredResponse {
  readonly status: number
  readonly contentType: string
  readonly body: string
}

export interface IdempotencyRecord {
  /** `<organization>/<environment>/<key>` */
  readonly id: string
  readonly fingerprint: string
  readonly state: "in_progress" | "completed" | "failed"
  readonly response: StoredResponse | undefined
  /**
   * The in-progress claim's token, a lease owner of the process running its request (Liveness.ts): by it the engine
   * that took it knows it is its own and still running, and another knows it holds while that process lives.
   */
  readonly claim?: string
  readonly expiresAtMs: number
}

const recordFields = {
  id: Schema.String,
  fingerprint: Schema.String.check(Schema.isPattern(/^[0-9a-f]{64}$/, { fosDetail: "must be a SHA-256 in lower-case hex" })),
  claim: Schema.optionalKey(Schema.String),
  expiresAtMs: Wire.epochMillis
}
const CompletedRecord = Schema.Struct({
  ...recordFields,
  state: Schema.Literal("completed"),
  response: Schema.Struct({
    status: Wire.wholeNumber(200, 599, "must be an HTTP status from 200 to 599"),
    contentType: Schema.String,
    body: Schema.String
  })
})
const FailedRecord = Schema.Struct({ ...recordFields, state: Schema.Literal("failed") })

/**
 * A kept record as a replay reads it (kernel/Domain.ts, `readsAs`): a completed one answers its response again, so
 * that must be one (a status, a content type, a body); a claim still running is never saved.
 */
export const readAs = (row: IdempotencyRecord): { readonly schema: Schema.Top; readonly value: unknown } =>
  row.state === "completed"
    ? { schema: CompletedRecord, value: row }
    : row.state === "failed"
    ? { schema: FailedRecord, value: row }
    : { schema: Schema.Struct({ state: Schema.Literals(["completed", "failed"]) }), value: { state: row.state } }

/** The scope of a record (`<organization>/<environment>`): its id up to the second slash (keys may hold slashes). */
const recordScope = (r: IdempotencyRecord): string => r.id.split("/", 2).join("/")

export const IdempotencyRecords = Store.table<IdempotencyRecord>({
  name: "idempotency",
  key: (r) => r.id,
  orders: { byScope: { partition: recordScope, sort: (r) => r.id, counted: false } }
})

/**
 * How long a kept response is replayed. The spec states both 30 days and 300 seconds; fos keeps 30 days by
 * default (docs/decisions.md): a late retry then replays instead of moving money twice.
 */
export class IdempotencyRetention extends Context.Reference<number>("fos/IdempotencyRetention", {
  defaultValue: () => 30 * 24 * 60 * 60 * 1000
}) {}

/** When an in-progress claim's record says it expires (`expiresAtMs`); its process's liveness decides whether it holds. */
const claimExpiryMs = 60_000

/** The claims whose requests this engine is running now. */
export interface RunningClaimsService {
  /** A new claim token, running until released. */
  readonly take: () => string
  readonly release: (token: string) => void
  /**
   * Whether an in-progress claim is still running: this engine's while its request runs, another's while its process
   * is alive.
   */
  readonly holds: (record: IdempotencyRecord) => Effect.Effect<boolean>
}

export class RunningClaims extends Context.Service<RunningClaims, RunningClaimsService>()("fos/RunningClaims") {}

export const layerRunningClaims: Layer.Layer<RunningClaims, never, Liveness.Liveness> = Layer.effect(
  RunningClaims,
  Effect.map(Liveness.Liveness, (liveness): RunningClaimsService => {
    const running = new Set<string>()
    return {
      take: () => {
        const token = liveness.newOwner()
        running.add(token)
        return token
      },
      release: (token) => void running.delete(token),
      holds: (record) => {
        if (record.state !== "in_progress" || record.claim === undefined) return Effect.succeed(false)
        return liveness.isOwn(record.claim) ? Effect.succeed(running.has(record.claim)) : liveness.isAlive(record.claim)
      }
    }
  })
)

/**
 * Whether the keyed request running is a retry of one that never answered: its process died while it ran, or it
 * ended in a 5xx. What that one did may be this one's answer (an advance of the virtual clock: kernel/Clocks.ts).
 */
export const ResumedClaim = Context.Reference<boolean>("fos/ResumedClaim", { defaultValue: () => false })

/** Key constraints: 1 to 255 visible ASCII characters. */
export const isValidIdempotencyKey = (key: string): boolean => /^[\x21-\x7e]{1,255}$/.test(key)

/** A kept response's retention: its record (`<organization>/<environment>/<key>`) is forgotten when it ends. */
export const expireTimer = Timers.kind("idempotency.expire", Schema.Struct({ id: Schema.String }))

/** The timer handler that forgets a record once its retention is over. */
export const expireRecord = (payload: { readonly id: string }) =>
  Effect.flatMap(Store.Store, (store) => store.remove(IdempotencyRecords, payload.id))

/** The kept responses of each sandbox, and their retention's end (housekeeping). */
export const domain = Domain.make({
  name: "kernel/Idempotency",
  tables: [
    {
      ...Domain.inScope(IdempotencyRecords, "byScope"),
      counted: "idempotencyRecords",
      readsAs: readAs,
      // A claim is a request still running, whose work has not committed (the snapshot's own request among them):
      // restored, it would hold its key for a request that never ends, against other processes until its lease ran
      // out (on the virtual clock, until an advance).
      saved: { except: { field: "state", equals: "in_progress" } }
    }
  ],
  timers: [
    Timers.handle(
      expireTimer,
      expireRecord,
      (_id, p) => `forgets the stored answer of idempotency key ${String(p.id ?? "").split("/").slice(2).join("/")} (its retention ends)`
    )
  ]
})

export interface IdempotentResult {
  readonly response: StoredResponse
  readonly replayed: boolean
}

/**
 * Runs `run` once per key. By default `run` and the kept response commit in one transaction. An effect that must
 * not run inside a transaction (the virtual clock's advance, which fires timers and sends webhooks in transactions
 * of their own) passes `transactional: false`: its response is kept in a transaction right after it.
 */
export const runIdempotent = <R>(
  request: { readonly scope: string; readonly key: string; readonly fingerprint: string },
  run: Effect.Effect<StoredResponse, Problem.ApiError, R>,
  options: { readonly transactional?: boolean } = {}
): Effect.Effect<IdempotentResult, Problem.ApiError, R | Store.Store | RunningClaims | RealClock.RealClock> =>
  Effect.flatMap(RunningClaims, (claims) => {
    const claim = claims.take()
    return Effect.ensuring(runClaimed(request, run, options, claims, claim), Effect.sync(() => claims.release(claim)))
  })

const runClaimed = <R>(
  request: { readonly scope: string; readonly key: string; readonly fingerprint: string },
  run: Effect.Effect<StoredResponse, Problem.ApiError, R>,
  options: { readonly transactional?: boolean },
  claims: RunningClaimsService,
  claim: string
): Effect.Effect<IdempotentResult, Problem.ApiError, R | Store.Store | RealClock.RealClock> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const realClock = yield* RealClock.RealClock
    const realNow = () => realClock.currentTimeMillisUnsafe()
    const id = `${request.scope}/${request.key}`
    const conflict = () =>
      Problem.apiError("IDEMPOTENCY_KEY_CONFLICT", "This Idempotency-Key was already used with a different request body.")
    const inProgress = () => Problem.apiError("IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS", "A request with this Idempotency-Key is still running.")
    const claimRecord = (): IdempotencyRecord => ({
      id,
      fingerprint: request.fingerprint,
      state: "in_progress",
      response: undefined,
      claim,
      expiresAtMs: realNow() + claimExpiryMs
    })
    // A key seen for the first time is claimed by one insert, which answers the key's record when there is one: a
    // duplicate of a running request, a replay and a conflict are answered from committed state without waiting for
    // any transaction (the takeover below checks again under the row lock). Another request inserting the key at the
    // same moment makes this one a duplicate of a running request.
    // The claim this request wrote, as it wrote it (`stillOurs` below).
    let ours = claimRecord()
    const seen = yield* store.insertIfAbsent(IdempotencyRecords, ours).pipe(Effect.catchTag("UniqueViolation", () => Effect.fail(inProgress())))
    if (seen !== undefined) {
      if (seen.state === "completed") {
        if (seen.fingerprint !== request.fingerprint) return yield* conflict()
        return { response: seen.response!, replayed: true }
      }
      if (yield* claims.holds(seen)) return yield* inProgress()
    }
    // Whether this request takes the key over from one that never answered (its process died, or it ended in a 5xx).
    let resumed = false
    const claimed = seen === undefined
      ? undefined
      : yield* store.transaction(
      Effect.gen(function*() {
        const existing = yield* store.getForUpdate(IdempotencyRecords, id)
        if (existing !== undefined) {
          if (existing.state === "completed") {
            if (existing.fingerprint !== request.fingerprint) return yield* conflict()
            return existing.response
          }
          if (yield* claims.holds(existing)) return yield* inProgress()
          if (existing.fingerprint !== request.fingerprint) return yield* conflict()
        }
        ours = claimRecord()
        if (existing === undefined) {
          // Two first requests at once on a store with real concurrency: the row lock cannot cover a row that does
          // not exist yet, so the loser of the insert learns here that the other one is running.
          yield* store.insert(IdempotencyRecords, ours).pipe(Effect.catchTag("UniqueViolation", () => Effect.fail(inProgress())))
        } else {
          resumed = true
          yield* Effect.orDie(store.update(IdempotencyRecords, ours))
        }
        return undefined
      })
    )
    if (claimed !== undefined) return { response: claimed, replayed: true }
    // Whether the key is still this request's: another process takes a claim over once it judges this one dead, and
    // writes its own claim. (A restore removes the claim with the sandbox's other records, the restore's own claim
    // among them: no record is this request's still.) Locking the record costs nothing more, since its update reads
    // it locked anyway; and a store may take it as this request wrote it, checking that at the commit (a SQL store
    // whose transaction has not begun then writes the kept response and its timer in one statement).
    const stillOurs = Effect.suspend(() =>
      Effect.map(store.getForUpdate(IdempotencyRecords, id, { assumed: ours }), (current) => current === undefined || (current.state === "in_progress" && current.claim === claim)))
    const takenOver = () =>
      Problem.apiError("IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS", "Another process took this Idempotency-Key's request over; nothing of this one was kept.")
    const keep = (response: StoredResponse) =>
      Effect.gen(function*() {
        if (!(yield* stillOurs)) return yield* takenOver()
        const now = yield* Clock.currentTimeMillis
        const expiresAtMs = now + (yield* IdempotencyRetention)
        yield* Effect.orDie(store.update(IdempotencyRecords, {
          id,
          fingerprint: request.fingerprint,
          state: "completed",
          response,
          expiresAtMs
        }))
        yield* Timers.schedule(expireTimer, expiresAtMs, { id }, request.scope, { housekeeping: true })
        return response
      })
    const runs = Effect.provideService(run, ResumedClaim, resumed)
    const exit = yield* Effect.exit(
      options.transactional === false
        ? Effect.flatMap(runs, (response) => store.transaction(keep(response)))
        : store.transaction(Effect.flatMap(runs, keep))
    )
    if (Exit.isSuccess(exit)) return { response: exit.value, replayed: false }

    // The effect did not commit. A 4xx frees the key; anything else binds it to this body; a key another process
    // took over is its own.
    const clientError = Exit.findErrorOption(exit)
    const freesKey = clientError._tag === "Some" && clientError.value.status < 500
    yield* store.transaction(Effect.gen(function*() {
      if (!(yield* stillOurs)) return
      if (freesKey) return yield* store.remove(IdempotencyRecords, id)
      const now = yield* Clock.currentTimeMillis
      const expiresAtMs = now + (yield* IdempotencyRetention)
      yield* Effect.orDie(store.update(IdempotencyRecords, {
        id,
        fingerprint: request.fingerprint,
        state: "failed",
        response: undefined,
        expiresAtMs
      }))
      yield* Timers.schedule(expireTimer, expiresAtMs, { id }, request.scope, { housekeeping: true })
    }))
    return yield* Effect.failCause(exit.cause)
  })

