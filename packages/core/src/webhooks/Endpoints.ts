/**
 * Webhook endpoints (spec, Resources, Webhook endpoint; Webhook management; States and transitions, Webhook
 * endpoint):
 *
 * | State | Trigger | Next | Also |
 * |---|---|---|---|
 * | active | PATCH status disabled | disabled | excluded from fan-out; no new deliveries are queued; deliveries already queued keep retrying |
 * | disabled | PATCH status active | active | new deliveries resume |
 *
 * An endpoint's secret is "returned only on create and on rotate, once; shaped whsec_ followed by 64 hex
 * characters". "During the grace period after rotation (about 48 hours)" deliveries carry a second v1 signed with
 * the previous secret; "after the grace period only the current secret signs. The grace deadline is not exposed on
 * endpoint reads." DELETE answers 204, also for an endpoint deleted before; "an id that never existed in the
 * organization returns 404 WEBHOOK_ENDPOINT_NOT_FOUND". fos keeps a deleted endpoint's row for that, out of lists and
 * fan-out; a read, change or rotation of it is 410 GONE (docs/webhooks.md, "Webhook endpoints and delivery").
 *
 * No write here has refusals to order (docs/webhooks.md, "The order of a webhook write's refusals"): after the
 * schema, creating checks one member, the URL (400 VALIDATION_ERROR at /url, the first of AddressRules.ts's rules it
 * breaks); a change and a rotation check existence (404 WEBHOOK_ENDPOINT_NOT_FOUND), then deletion (410 GONE), which
 * one request cannot both break; a deletion checks existence only.
 */
import { Clock, Effect } from "effect"
import { type Subscription, signatureScheme, toIso, WebhookEndpoint as WebhookEndpointSchema, type WebhookEndpoint as WebhookEndpointWire, type Environment } from "@fos/contract"
import * as AddressRules from "./AddressRules.ts"
import type * as Auth from "../tenancy/Auth.ts"
import * as Domain from "../kernel/Domain.ts"
import * as IdGenerator from "../kernel/IdGenerator.ts"
import * as Paging from "../kernel/Paging.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Transport from "./Transport.ts"

export interface WebhookEndpoint {
  readonly id: string
  readonly organizationId: string
  readonly environment: Environment
  readonly url: string
  readonly subscription: Subscription
  readonly status: "active" | "disabled"
  readonly secret: string
  /** The secret before the last rotation, still signing until `untilMs`. Never shown. */
  readonly previousSecret: { readonly secret: string; readonly untilMs: number } | undefined
  readonly createdAt: string
  readonly updatedAt: string
  readonly deletedAt: string | undefined
  /**
   * The endpoint may have a receiver fault (simulate/Faults.ts): only a marked endpoint's attempts look one up. Set in
   * the transaction that arms one, cleared by the look-up that finds none. Never in an endpoint's answers; a snapshot
   * file, which holds the rows as kept, carries it.
   */
  readonly receiverFault?: true
}

export const WebhookEndpoints = Store.table<WebhookEndpoint>({
  name: "webhook_endpoints",
  key: (e) => e.id,
  orders: {
    /** Every endpoint of an organization and environment, deleted ones included. */
    byScope: { partition: (e) => Tenancy.scopeOf(e.organizationId, e.environment), sort: (e) => e.createdAt },
    /** The endpoints not deleted: what the list shows and what fan-out reads. A deletion takes the endpoint out. */
    live: { partition: (e) => (e.deletedAt === undefined ? Tenancy.scopeOf(e.organizationId, e.environment) : undefined), sort: (e) => e.createdAt }
  }
})

/** A sandbox's webhook endpoints. */
export const domain = Domain.make({
  name: "webhooks/Endpoints",
  tables: [{ ...Domain.inScope(WebhookEndpoints, "byScope"), counted: "webhookEndpoints", readsAs: (e: WebhookEndpoint) => ({ schema: WebhookEndpointSchema, value: toWire(e) }) }]
})

export const toWire = (e: WebhookEndpoint, reveal = false): WebhookEndpointWire => ({
  id: e.id,
  url: e.url,
  subscription: e.subscription,
  status: e.status,
  createdAt: e.createdAt,
  updatedAt: e.updatedAt,
  ...(reveal ? { secret: e.secret, signature: signatureScheme } : {})
})

/** How long the previous secret keeps signing after a rotation (spec: "about 48 hours"). */
const rotationGraceMs = 48 * 60 * 60 * 1000

/** The secrets that sign a delivery sent at `nowMs`: the current one, and the previous one during its grace period. */
export const signingSecrets = (endpoint: WebhookEndpoint, nowMs: number): ReadonlyArray<string> =>
  endpoint.previousSecret !== undefined && nowMs < endpoint.previousSecret.untilMs
    ? [endpoint.secret, endpoint.previousSecret.secret]
    : [endpoint.secret]

const newSecret = Effect.map(IdGenerator.randomHex(64), (hex) => `whsec_${hex}`)

const nowIso = Effect.map(Clock.currentTimeMillis, toIso)

const notFound = () => Problem.apiError("WEBHOOK_ENDPOINT_NOT_FOUND", "No webhook endpoint with this id exists in this organization and environment.")

/**
 * A deleted endpoint read, changed or rotated: the spec's 410 GONE ("resource permanently removed"). The spec's DELETE
 * row tells a deleted endpoint (204 again) from one that never existed (404); a read keeps the same distinction.
 */
const gone = () => Problem.apiError("GONE", "The webhook endpoint was deleted; it cannot be read, changed or rotated. Create a new one.")

/** An endpoint of the caller's organization and environment, deleted ones included. */
export const findEndpoint = (caller: Auth.Caller, id: string, lock = false) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const endpoint = yield* (lock ? store.getForUpdate(WebhookEndpoints, id) : store.get(WebhookEndpoints, id))
    if (endpoint === undefined || endpoint.organizationId !== caller.organization.id || endpoint.environment !== caller.environment) {
      return yield* notFound()
    }
    return endpoint
  })

export const create = (caller: Auth.Caller, input: { readonly url: string; readonly subscription?: Subscription }) =>
  Effect.gen(function*() {
    const settings = yield* Transport.WebhookSettings
    const url = yield* AddressRules.checkWebhookUrl(input.url, settings)
    return yield* insert(caller, () => url, input.subscription)
  })

/**
 * Stores a new endpoint whose URL is already checked, or made by the engine from the endpoint's id (a listener's,
 * webhooks/Listeners.ts), and answers it with its secret.
 */
export const insert = (caller: Auth.Caller, urlOf: (id: string) => string, subscription: Subscription | undefined) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const now = yield* nowIso
    const id = yield* IdGenerator.newId("wep")
    const endpoint: WebhookEndpoint = {
      id,
      organizationId: caller.organization.id,
      environment: caller.environment,
      url: urlOf(id),
      subscription: subscription ?? { mode: "all" },
      status: "active",
      secret: yield* newSecret,
      previousSecret: undefined,
      createdAt: now,
      updatedAt: now,
      deletedAt: undefined
    }
    yield* Effect.orDie(store.insert(WebhookEndpoints, endpoint))
    return toWire(endpoint, true)
  })

export const get = (caller: Auth.Caller, id: string) =>
  Effect.flatMap(findEndpoint(caller, id), (e) => (e.deletedAt !== undefined ? Effect.fail(gone()) : Effect.succeed(toWire(e))))

export const list = (caller: Auth.Caller, query: Paging.ListQuery): Effect.Effect<Paging.ListEnvelope<WebhookEndpointWire>, Problem.ApiError, Store.Store> =>
  // Deleted endpoints keep their row (so a second DELETE is 204) but are not listed: the `live` order leaves them out.
  Paging.listPage(WebhookEndpoints, {
    order: "live",
    partition: Tenancy.scopeOf(caller.organization.id, caller.environment),
    query,
    toWire: (e) => toWire(e)
  })

export const update = (
  caller: Auth.Caller,
  id: string,
  change: { readonly subscription?: Subscription; readonly status?: "active" | "disabled" }
) =>
  Effect.flatMap(Store.Store, (store) =>
    store.transaction(Effect.gen(function*() {
      const endpoint = yield* findEndpoint(caller, id, true)
      if (endpoint.deletedAt !== undefined) return yield* gone()
      const next: WebhookEndpoint = { ...endpoint, ...change, updatedAt: yield* nowIso }
      yield* Effect.orDie(store.update(WebhookEndpoints, next))
      return toWire(next)
    })))

/** Deletes an endpoint: 204 also when it was deleted before; 404 only for an id that never existed here. */
export const deleteEndpoint = (caller: Auth.Caller, id: string) =>
  Effect.flatMap(Store.Store, (store) =>
    store.transaction(Effect.gen(function*() {
      const endpoint = yield* findEndpoint(caller, id, true)
      if (endpoint.deletedAt !== undefined) return
      const now = yield* nowIso
      yield* Effect.orDie(store.update(WebhookEndpoints, { ...endpoint, status: "disabled", deletedAt: now, updatedAt: now }))
    })))

/**
 * Sets or clears the endpoint's receiver-fault mark (`receiverFault`), on its row as read under its lock: cleared, the
 * member is gone from the row rather than false, as a row never marked has none.
 */
export const setReceiverFault = (endpoint: WebhookEndpoint, marked: boolean): Effect.Effect<void, never, Store.Store> =>
  Effect.flatMap(Store.Store, (store) => {
    const { receiverFault: _, ...unmarked } = endpoint
    return Effect.orDie(store.update(WebhookEndpoints, marked ? { ...unmarked, receiverFault: true } : unmarked))
  })

/** A new secret, returned once; the previous one keeps signing for the grace period. */
export const rotateSecret = (caller: Auth.Caller, id: string) =>
  Effect.flatMap(Store.Store, (store) =>
    store.transaction(Effect.gen(function*() {
      const endpoint = yield* findEndpoint(caller, id, true)
      if (endpoint.deletedAt !== undefined) return yield* gone()
      const nowMs = yield* Clock.currentTimeMillis
      const next: WebhookEndpoint = {
        ...endpoint,
        secret: yield* newSecret,
        previousSecret: { secret: endpoint.secret, untilMs: nowMs + rotationGraceMs },
        updatedAt: toIso(nowMs)
      }
      yield* Effect.orDie(store.update(WebhookEndpoints, next))
      return toWire(next, true)
    })))
