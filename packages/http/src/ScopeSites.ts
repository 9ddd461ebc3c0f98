/**
 * Keeps V8 from allocating each request's scopes and contexts in the old generation (docs/performance.md, "An
 * embedded engine's memory"; docs/embedding.md).
 *
 * V8 counts, for each object literal in a function (an allocation site), how many of its objects a scavenge finds
 * alive, and once nearly all of at least a hundred were, allocates that site's objects in the old generation from
 * then on ("allocation-site pretenuring"; a decision is made once and kept). Only unoptimized code counts: the
 * objects of a literal that V8 optimized (or inlined into a hot loop) are not counted at all. Two kinds of Effect's
 * literals are made both by what lives as long as the process and by each request:
 *
 * - Every scope, its finalizers and the fibers that add them (`makeScope`, `scopeAddFinalizerUnsafe` and the
 *   runtime's in effect's internal/effect.ts): an engine's start makes hundreds of scopes that live as long as it
 *   does. `settleScopeSites`, first in `createEngine` and `layerEmbedded`, makes scopes and finalizers that die at
 *   once, so the next scavenge finds few of them alive and decides not to tenure, for good. Tenuring only one of the
 *   sites still tenures the others (measured), so these go through the public API as a request's do.
 * - A context's overlay (`{ key, value, parent }` in `Context.addUnsafe`, under `Context.add`): the contract's
 *   endpoints add their annotations as their modules load, a few hundred long-lived contexts before any engine
 *   code runs, and each request adds its services the same way. When a scavenge falls among those annotations,
 *   V8 tenures the literal, and every request's contexts then keep its services (the request, its fiber's state)
 *   alive until a full collection: about 5.5 MB promoted per scavenge. This module, which index.ts imports first,
 *   adds `settlingServices` services that die at once as it loads, before the contract's modules: the scavenge
 *   that digests the annotations counts them too and decides not to tenure. Few enough that V8 runs them
 *   unoptimized (2,000 in one loop were optimized and not counted).
 *
 * Each wrong decision puts each request's young objects in the old generation until a full collection (0.4 to 6 MB a
 * scavenge), and V8 doubles its young generation. A host cannot set `--no-allocation-site-pretenuring`, and an
 * embedded engine must not set V8's flags. A process that decided before (a host that built scopes or contexts of
 * its own first) keeps its decision.
 */
import { Context, Effect, Scope } from "effect"

/** How many short-lived scopes settle the sites: several times the scopes an engine's start keeps. */
export const settlingScopes = 2_000

/** The key of the short-lived services this module adds as it loads. */
const settlingKey = "@fos/http/ScopeSites/settling"

/** How many short-lived services settle a context's overlay literal: few enough that V8 runs them unoptimized. */
export const settlingServices = 400

let settled = false

// At this module's evaluation, before the modules that build long-lived contexts (index.ts imports it first).
for (let i = 0; i < settlingServices; i++) Context.addUnsafe(Context.empty(), settlingKey, { i })

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
