/**
 * The history of a sandbox's resources: one row per change of a resource's status, written by the machine's move in
 * the store transaction of the change, with what caused it. It is what a resource's timeline (inspect/Timeline.ts,
 * `GET /sandbox/v2/simulate/timeline/{resourceId}`) shows beside the events, transfers and timers the engine keeps
 * anyway; those say what happened, this says when each status began and why.
 *
 * The cause is read from a fiber reference (`CurrentCause`) that whatever runs the change sets: the request pipeline
 * for a write (`request`, with its method, path and correlation id; `simulate` for a call under `/simulate`, with its
 * operation), the timer scheduler while a timer's handler runs (`timer`, with its kind and id). Work outside both
 * (a webhook attempt's answer coming back to the background worker, a host's `engine.run`) is `engine`.
 *
 * Only sandboxes keep history: the timeline is a sandbox read, a sandbox reset empties it with the rest, and live
 * writes pay nothing for it. A fired timer is written here too (`timer_fired`), since its row is gone once it fires.
 */
import { type Environment, toIso, UtcTimestamp } from "@fos/contract"
import { Clock, Context, Effect, Schema } from "effect"
import * as Store from "./Store.ts"
import * as Wire from "./Wire.ts"

/** What set a change off. */
export type Cause =
  | { readonly type: "request"; readonly method: string; readonly path: string; readonly correlationId: string }
  | {
    readonly type: "simulate"
    /** The OpenAPI operation id of the simulate call (`simulate.advanceClock`). */
    readonly operation: string
    readonly method: string
    readonly path: string
    readonly correlationId: string
  }
  | { readonly type: "timer"; readonly kind: string; readonly timerId: string }
  | { readonly type: "engine" }

/**
 * The cause of the changes the current fiber makes. A request's correlation id may be drawn only once it is first
 * read (a seeded engine's), so the pipeline may hand a cause whose `correlationId` is a getter: it is read when a
 * change is written.
 */
export class CurrentCause extends Context.Reference<Cause>("fos/HistoryCause", { defaultValue: () => ({ type: "engine" }) }) {}

/** Runs `effect` with `cause` as the cause of the changes it makes. */
export const causedBy = (cause: Cause) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => Effect.provideService(effect, CurrentCause, cause)

/** A fired timer, as its `timer_fired` row keeps it. */
export interface FiredTimer {
  readonly id: string
  readonly kind: string
  readonly dueAtMs: number
  /** When it was scheduled; absent for a timer scheduled before timers kept it. */
  readonly scheduledAtMs?: number
}

export interface HistoryRow {
  /** `hst_` and the sequence. */
  readonly id: string
  /** The store-wide sequence (`nextSequence`): orders the row among the resource's events and transfers. */
  readonly sequence: number
  /** The organization and environment (`scopeOf`). */
  readonly scope: string
  readonly resourceId: string
  readonly at: string
  readonly kind: "state" | "timer_fired"
  /** A state change's status before (absent when the resource was created) and after. */
  readonly from?: string
  readonly to?: string
  /** A transaction's stage (`under_review`, `awaiting_customer_action`) before and after, when it had one. */
  readonly fromStage?: string
  readonly toStage?: string
  readonly cause: Cause
  readonly timer?: FiredTimer
}

/** A cause as a row keeps it (`Cause`). */
const CauseRow = Schema.Union([
  Schema.Struct({ type: Schema.Literal("request"), method: Schema.String, path: Schema.String, correlationId: Schema.String }),
  Schema.Struct({ type: Schema.Literal("simulate"), operation: Schema.String, method: Schema.String, path: Schema.String, correlationId: Schema.String }),
  Schema.Struct({ type: Schema.Literal("timer"), kind: Schema.String, timerId: Schema.String }),
  Schema.Struct({ type: Schema.Literal("engine") })
])
const rowFields = { id: Schema.String, sequence: Wire.sequenceNumber, scope: Schema.String, resourceId: Schema.String, at: UtcTimestamp, cause: CauseRow }
const StateRow = Schema.Struct({
  ...rowFields,
  kind: Schema.Literal("state"),
  from: Schema.optionalKey(Schema.String),
  to: Schema.String,
  fromStage: Schema.optionalKey(Schema.String),
  toStage: Schema.optionalKey(Schema.String)
})
const TimerFiredRow = Schema.Struct({
  ...rowFields,
  kind: Schema.Literal("timer_fired"),
  timer: Schema.Struct({ id: Schema.String, kind: Schema.String, dueAtMs: Wire.epochMillis, scheduledAtMs: Schema.optionalKey(Wire.epochMillis) })
})

/**
 * A row as a resource's timeline reads it (inspect/Timeline.ts): of its kind's members, each of its type, its
 * instants ones a date can hold (kernel/Domain.ts, `readsAs`).
 */
export const readAs = (row: HistoryRow): { readonly schema: Schema.Top; readonly value: unknown } =>
  row.kind === "state"
    ? { schema: StateRow, value: row }
    : row.kind === "timer_fired"
    ? { schema: TimerFiredRow, value: row }
    : { schema: Schema.Struct({ kind: Schema.Literals(["state", "timer_fired"]) }), value: { kind: row.kind } }

/** The key a row was written under: `hst_` and its sequence (`historyId`), whatever key an import or a fork gave it since. */
export const writtenKey = (row: HistoryRow): string => historyId(row.sequence)

export const History = Store.table<HistoryRow>({
  name: "history",
  key: (h) => h.id,
  orders: {
    // A resource's rows, for its timeline, and a scope's, for a reset; nothing reads a total.
    byResource: { partition: (h) => `${h.scope}|${h.resourceId}`, sort: (h) => h.sequence, counted: false },
    byScope: { partition: (h) => h.scope, sort: (h) => h.sequence, counted: false }
  }
})

/** The partition of one resource's history in `byResource`. */
export const resourcePartition = (scope: string, resourceId: string) => `${scope}|${resourceId}`

const isSandboxScope = (scope: string) => scope.endsWith("/sandbox")

/** A plain copy of the cause: a getter (a correlation id drawn late) is read now. */
const plainCause = (cause: Cause): Cause => {
  switch (cause.type) {
    case "request":
      return { type: "request", method: cause.method, path: cause.path, correlationId: cause.correlationId }
    case "simulate":
      return { type: "simulate", operation: cause.operation, method: cause.method, path: cause.path, correlationId: cause.correlationId }
    default:
      return cause
  }
}

const insert = (row: Omit<HistoryRow, "id" | "sequence" | "at" | "cause">) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const sequence = yield* store.nextSequence
    const cause = plainCause(yield* CurrentCause)
    yield* store.insertFresh(History, { id: historyId(sequence), sequence, at: toIso(yield* Clock.currentTimeMillis), cause, ...row })
  })

/** A row's key: `hst_` and the store's sequence in base 36, twelve digits, so the keys sort as the rows were written. */
const historyId = (sequence: number): string => `hst_${sequence.toString(36).padStart(12, "0")}`

/**
 * The store's number a row's key carries, and the key of another number: how a fork numbers its copies of the
 * history anew, and an import the history it brings (Forks.ts, Snapshots.ts; kernel/Domain.ts,
 * `SandboxTable.sequenced`). `numberOf` is undefined for a key fos did not make.
 */
export const keyNumbers = {
  numberOf: (id: string): number | undefined => {
    const m = /^hst_([0-9a-z]{12})$/.exec(id)
    return m === null ? undefined : parseInt(m[1]!, 36)
  },
  withNumber: (_id: string, n: number): string => historyId(n),
  shown: false
}

/** A resource whose status a machine moves; a transaction's stage is part of its state too. */
export interface Tracked {
  readonly id: string
  readonly organizationId: string
  readonly environment: Environment
  readonly status: string
  readonly stage?: string | null | undefined
}

/** A state a resource was in: its status, or its status and stage. */
export type State = string | { readonly status: string; readonly stage?: string | null | undefined }

/**
 * Records that `resource` moved from `from` (undefined: it was created) to its state, in the caller's store
 * transaction. Nothing when the state did not change, or outside a sandbox.
 */
export const recordState = (from: State | undefined, resource: Tracked): Effect.Effect<void, never, Store.Store> => {
  if (resource.environment !== "sandbox") return Effect.void
  const fromStatus = typeof from === "string" ? from : from?.status
  const fromStage = typeof from === "object" ? from.stage ?? undefined : undefined
  const toStage = resource.stage ?? undefined
  if (fromStatus === resource.status && fromStage === toStage) return Effect.void
  return insert({
    scope: `${resource.organizationId}/${resource.environment}`,
    resourceId: resource.id,
    kind: "state",
    ...(fromStatus === undefined ? {} : { from: fromStatus }),
    ...(fromStage === undefined ? {} : { fromStage }),
    to: resource.status,
    ...(toStage === undefined ? {} : { toStage })
  })
}

/** Records that a timer of a sandbox's resource fired, in its firing transaction. */
export const recordTimerFired = (scope: string | undefined, resourceId: string | undefined, timer: FiredTimer): Effect.Effect<void, never, Store.Store> =>
  scope === undefined || resourceId === undefined || !isSandboxScope(scope)
    ? Effect.void
    : insert({ scope, resourceId, kind: "timer_fired", timer })
