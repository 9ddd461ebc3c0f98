/**
 * Keeps V8 from allocating each request's scopes in the old generation (docs/performance.md, "An embedded engine's
 * memory").
 *
 * V8 counts, for each object literal in a function (an allocation site), how many of its objects a scavenge finds
 * alive, and once nearly all of at least a hundred were, allocates that site's objects in the old generation from
 * then on ("allocation-site pretenuring"; a decision is made once and kept). Effect makes every scope, its
 * finalizers and the fibers that add them with literals of its own (`makeScope`, `scopeAddFinalizerUnsafe` and the
 * runtime's in effect's internal/effect.ts), the same literals for an engine's layers as for a request. An engine's
 * start makes hundreds of scopes that live as long as it does, so a scavenge during it can find nearly all of those
 * sites' objects alive and tenure them: each request's scopes then land in the old generation and keep what their
 * finalizers hold young alive until a full collection (0.4 to 6 MB a scavenge), and V8 doubles its young
 * generation. A host cannot set `--no-allocation-site-pretenuring`, so the engine settles those sites before it
 * builds anything: it makes scopes and finalizers that die at once, the next scavenge finds few of them alive and
 * decides not to tenure, for good. Tenuring only one of the sites still tenures the others (measured), so these
 * go through the public API as a request's do. A process that decided before (a host that built scopes of its own
 * first) keeps its decision.
 */
import { Effect, Scope } from "effect"

/** How many short-lived scopes settle the sites: several times the scopes an engine's start keeps. */
export const settlingScopes = 2_000

let settled = false

/**
 * Makes `settlingScopes` scopes with two finalizers each (the first is a scope's own literal, the second its map)
 * and lets them go; once per process, 10 to 40 ms. Returns whether this call made them.
 */
export const settleScopeSites = (): boolean => {
  if (settled) return false
  settled = true
  for (let i = 0; i < settlingScopes; i++) {
    const scope = Scope.makeUnsafe()
    Effect.runSync(Scope.addFinalizer(scope, Effect.void))
    Effect.runSync(Scope.addFinalizer(scope, Effect.void))
  }
  return true
}
