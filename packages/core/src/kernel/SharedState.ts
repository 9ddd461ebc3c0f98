/**
 * What several processes sharing one store keep for the service as a whole: the state a client can observe that
 * must not depend on which process answered (docs/storage.md, "What a process keeps"). A store that several
 * processes may share (PostgreSQL) gives it as `Store.StoreService.shared`; a store that serves one process (memory,
 * PGlite) gives none, and that process keeps the same state in its memory, as exactly and more cheaply.
 *
 * Two pieces live here; the third that must be the service's, the stream cap, is a table of the store itself
 * (LiveFeed's open streams, counted with Liveness.ts), since it costs a write only when a stream opens.
 */
import type { Environment } from "@fos/contract"
import type { Effect } from "effect"

export interface BucketSpec {
  readonly perSecond: number
  readonly burst: number
}

/** The rate limit's token buckets, one per bucket for every process (kernel/RateLimit.ts takes from them). */
export interface SharedBuckets {
  /**
   * Refills the bucket `name` of `scope` (made full by `spec` on its first use) to the present and takes up to
   * `want` whole tokens from it: how many it took, and the tokens left. The present is `realNowMs` (the caller's
   * real time) plus every clock advance of every process (`advanced`), so that an advance refills the buckets on
   * every process, as it does on one (docs/decisions.md, "Rate limits"). A present behind the bucket's last one
   * (another process's real clock a little ahead) refills nothing, and never takes the bucket back in time.
   */
  readonly take: (
    scope: string,
    name: string,
    spec: BucketSpec,
    want: number,
    realNowMs: number
  ) => Effect.Effect<{ readonly taken: number; readonly tokens: number }>
  /** Counts `ms` more as passed for every process's buckets: a clock advance of `ms` on any process. */
  readonly advanced: (ms: number) => Effect.Effect<void>
}

/** A recent request as the service keeps it: who answered it, when, and the feed's own JSON of it. */
export interface SharedRequestRecord {
  readonly organizationId: string
  readonly environment: Environment
  /** When it was answered, in the answering process's real time (ms): the list's order. */
  readonly answeredMs: number
  /** The process that answered it (Liveness.ts's process id). */
  readonly answeredBy: string
  /** How many requests that process had recorded before this one: orders two of one process in one millisecond. */
  readonly n: number
  /** The request as the feed shows it, as JSON text (the store keeps it as written). */
  readonly json: string
}

/** A position in the service's request list, newest first: the record at it and everything older come after it. */
export interface RequestPosition {
  readonly answeredMs: number
  readonly answeredBy: string
  readonly n: number
}

/** How many recent requests each organization's environment keeps, for the service or for one process. */
export const requestsKeptPerScope = 500

/** The recent requests of every organization's environments, for every process. */
export interface SharedRequests {
  /**
   * Keeps a record for the service, soon (the store takes the records of a moment in one statement, so a request
   * does not wait for it) and tells every process of it (`subscribe`). Only the newest `requestsKeptPerScope` of
   * each organization's environment stay.
   */
  readonly record: (record: SharedRequestRecord) => void
  /**
   * Up to `limit` records of an organization's environment older than `before`, newest first, and how many it
   * keeps; every record this process made before the call is among them.
   */
  readonly newest: (
    organizationId: string,
    environment: Environment,
    before: RequestPosition | undefined,
    limit: number
  ) => Effect.Effect<{ readonly records: ReadonlyArray<SharedRequestRecord>; readonly total: number }>
  /**
   * Calls `listener` with every sandbox record any process keeps (this one's included), as the store tells them,
   * from the moment `listening` ends; the returned function stops it.
   */
  readonly subscribe: (listener: (record: SharedRequestRecord) => void) => () => void
  /** Ends once the store tells this process of the records kept (or, if it cannot, a moment later). */
  readonly listening: Effect.Effect<void>
}

export interface SharedState {
  readonly buckets: SharedBuckets
  readonly requests: SharedRequests
}
