/**
 * The engine's metrics as Prometheus reads them (the catalog is kernel/Metrics.ts of @fos/core): `GET /metrics` on
 * the operator surface, under the base path, with the operator token (docs/observability.md, "Metrics"), and
 * `engine.metrics()` for a host, which gives the same text.
 *
 * Why the operator's token and not a port of its own: the counts are every organization's traffic, by operation and
 * error code, which no API key's holder should read, and the operator token is what a deployment already guards the
 * engine's own view with; Prometheus sends it as a bearer token (`authorization` in a scrape config). One port keeps
 * `fos serve` one listener behind one proxy, and an embedded engine opens no socket at all.
 */
import { Metrics, type Store, Timers } from "@fos/core"
import { Effect, Exit } from "effect"
import { HttpServerResponse } from "effect/http"
import type { LiveFeedService } from "./LiveFeed.ts"

/**
 * The metrics of the engine whose registry the context holds, in Prometheus' text format, with the gauges read now:
 * the timers pending in the store and `feed`'s open streams. A store that cannot answer leaves the pending timers
 * at their last reading, so the metrics still answer while the store is down.
 */
export const metricsText = (feed: LiveFeedService): Effect.Effect<string, never, Store.Store> =>
  Effect.gen(function*() {
    const pending = yield* Effect.exit(Timers.pendingCount)
    const context = yield* Effect.context<never>()
    Metrics.observeUnsafe(context, { pendingTimers: Exit.isSuccess(pending) ? pending.value : undefined, openStreams: feed.openStreams() })
    return Metrics.prometheusTextUnsafe(context)
  })

/** `metricsText` as the answer of `GET /metrics`. */
export const metricsResponse = (feed: LiveFeedService) =>
  Effect.map(metricsText(feed), (text) => HttpServerResponse.text(text, { contentType: Metrics.prometheusContentType }))
