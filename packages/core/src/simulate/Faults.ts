/**
 * Scripted faults (sandbox only; contract simulate/Faults.ts, docs/faults.md): the rows that say which requests, or
 * which webhook endpoint's attempts, fail and how, and the reads that take one fault for a request or an attempt.
 *
 * Every request of every organization would pay a store read to find out whether a fault matches it, so an
 * organization with request faults carries a mark (`Organization.sandboxFaults`), which authentication reads anyway:
 * only a marked organization's sandbox requests look faults up. Arming a request fault sets the mark in the same
 * transaction; the look-up that finds no request fault left (deleted, used up, or reset) clears it, under the
 * organization's row lock, so a fault armed meanwhile is never missed. Receiver faults do the same on the webhook
 * endpoint (`WebhookEndpoint.receiverFault`), which an attempt's claim reads anyway: on PostgreSQL the look-up was
 * one statement in every attempt, nearly half of what an advance of failing deliveries sent.
 *
 * A fault with a count applies to that many matches and is then removed; one without applies until it is deleted.
 *
 * Seeded chaos: a request fault with a `probability` affects the n-th matching request it meets when the
 * n-th draw, a number in [0, 1), is below it; a latency range's wait is drawn the same way. A draw is keyed by
 * (the fault's id, n) (RandomStreams.keyedDouble): on a seeded engine it is decided by the seed and the key alone,
 * never by which process answers, a restart, or what other traffic drew, and drawing moves no stream, so arming chaos
 * changes none of the run's ids. n is kept on the row (`draws`), counted in the store write that counts a use, under
 * the row's lock. A spared request uses none of the count and runs as usual: it does not go on to the next-oldest
 * matching fault, since only the oldest is ever considered (what applies to a request then depends on the faults
 * armed, not on another fault's draws), and "a probability of 0.3" keeps meaning 30 % of the matching requests.
 */
import {
  type Fault,
  type FaultCreate,
  type FaultEffect,
  type FaultMatch,
  type FaultsCleared,
  maxFaultsPerOrganization,
  type ReceiverFaultCreate,
  type ReceiverFaultEffect,
  toIso,
  type Environment,
  type FaultList,
  wholeList
} from "@fos/contract"
import { Clock, Effect } from "effect"
import * as Deliveries from "../webhooks/Deliveries.ts"
import * as Domain from "../kernel/Domain.ts"
import * as Endpoints from "../webhooks/Endpoints.ts"
import * as IdGenerator from "../kernel/IdGenerator.ts"
import * as Problem from "../kernel/Problem.ts"
import * as RandomStreams from "../kernel/RandomStreams.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Transport from "../webhooks/Transport.ts"

export interface FaultRow {
  readonly id: string
  readonly organizationId: string
  readonly environment: "sandbox"
  /** The store's sequence when armed: faults are tried oldest first. */
  readonly seq: number
  readonly createdAt: string
  readonly target: "request" | "receiver"
  readonly match?: FaultMatch
  readonly webhookEndpointId?: string
  readonly effect: FaultEffect | ReceiverFaultEffect
  readonly count?: number
  readonly remaining?: number
  readonly applied: number
  /** A request fault's chance of affecting a matching request; absent: every one. */
  readonly probability?: number
  /** With a probability: how many matching requests it has drawn for (n of the next draw). */
  readonly draws?: number
}

export const SimulatedFaults = Store.table<FaultRow>({
  name: "simulated_faults",
  key: (f) => f.id,
  // One receiver fault per endpoint: two would leave it unclear which attempt meets which.
  unique: { receiver: (f) => (f.target === "receiver" ? f.webhookEndpointId : undefined) },
  orders: { byScope: { partition: (f) => Tenancy.scopeOf(f.organizationId, f.environment), sort: (f) => f.seq } }
})

/** A sandbox's scripted faults. */
export const domain = Domain.make({
  name: "simulate/Faults",
  tables: [
    // The organization's request-fault mark is cleared by the next look-up that finds none (simulate/Faults.ts).
    Domain.inScope(SimulatedFaults, "byScope")
  ]
})

export const toWire = (f: FaultRow): Fault => ({
  id: f.id,
  target: f.target,
  ...(f.match === undefined ? {} : { match: f.match }),
  ...(f.webhookEndpointId === undefined ? {} : { webhookEndpointId: f.webhookEndpointId }),
  effect: f.effect,
  ...(f.count === undefined ? {} : { count: f.count, remaining: f.remaining ?? 0 }),
  applied: f.applied,
  ...(f.probability === undefined ? {} : { probability: f.probability, draws: f.draws ?? 0 }),
  createdAt: f.createdAt
})

/**
 * Whose faults: an API caller (`Caller` is one), or an organization an operator names (`fos faults`), always in
 * the sandbox.
 */
export interface FaultOwner {
  readonly organization: { readonly id: string }
  readonly environment: Environment
}

const sandboxOnly = (caller: FaultOwner) =>
  caller.environment === "sandbox" ? Effect.void : Effect.fail(Problem.apiError("NOT_FOUND", "Simulate endpoints exist only under /sandbox."))

const scopeFaults = (store: Store.StoreService, scope: string) =>
  store.page(SimulatedFaults, { order: "byScope", partition: scope, descending: false, backward: false, from: undefined, limit: maxFaultsPerOrganization })

/** Inserts a fault of the caller's sandbox, within the bound; `mark` sets the organization's request-fault mark. */
const arm = (caller: FaultOwner, fault: Omit<FaultRow, "id" | "organizationId" | "environment" | "seq" | "createdAt" | "applied">, mark: boolean) =>
  Effect.gen(function*() {
    yield* sandboxOnly(caller)
    const store = yield* Store.Store
    return yield* store.transaction(Effect.gen(function*() {
      const organization = yield* store.getForUpdate(Tenancy.Organizations, caller.organization.id)
      const scope = Tenancy.scopeOf(caller.organization.id, "sandbox")
      if ((yield* store.count(SimulatedFaults, "byScope", scope)) >= maxFaultsPerOrganization) {
        // Past the bound the sandbox's own state refuses, as a snapshot or an outcome rule past theirs: 409, cleared by deleting.
        return yield* Problem.apiError("CONFLICT", `A sandbox holds at most ${maxFaultsPerOrganization} faults; delete some first.`, {
          resolution: "Delete faults you no longer need (DELETE /v2/simulate/faults/{faultId}, or DELETE /v2/simulate/faults for all), then arm this one."
        })
      }
      const row: FaultRow = {
        id: yield* IdGenerator.newPlainId("flt"),
        organizationId: caller.organization.id,
        environment: "sandbox",
        seq: yield* store.nextSequence,
        createdAt: toIso(yield* Clock.currentTimeMillis),
        applied: 0,
        ...fault
      }
      yield* store.insert(SimulatedFaults, row).pipe(Effect.catchTag("UniqueViolation", () =>
        Effect.fail(Problem.apiError("CONFLICT", "This webhook endpoint has a receiver fault already.", {
          resolution: "Delete the endpoint's receiver fault (DELETE /v2/simulate/faults/{faultId}) before arming another."
        }))))
      if (mark && organization !== undefined && organization.sandboxFaults !== true) {
        yield* Tenancy.setSandboxFaults(organization, true)
      }
      if (row.webhookEndpointId !== undefined) {
        const endpoint = yield* store.getForUpdate(Endpoints.WebhookEndpoints, row.webhookEndpointId)
        if (endpoint !== undefined && endpoint.receiverFault !== true) yield* Endpoints.setReceiverFault(endpoint, true)
      }
      return toWire(row)
    }))
  })

/** Arms a request fault. The handler has checked that the matcher names an operation of the API. */
export const armFault = (caller: FaultOwner, body: FaultCreate): Effect.Effect<Fault, Problem.ApiError, Store.Store> =>
  arm(caller, {
    target: "request",
    match: body.match,
    effect: body.effect,
    ...(body.count === undefined ? {} : { count: body.count, remaining: body.count }),
    ...(body.probability === undefined ? {} : { probability: body.probability, draws: 0 })
  }, true)

/** Arms a receiver fault on one of the caller's webhook endpoints. */
export const armReceiverFault = (caller: FaultOwner, endpointId: string, body: ReceiverFaultCreate): Effect.Effect<Fault, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const endpoint = yield* Effect.flatMap(Store.Store, (store) => store.get(Endpoints.WebhookEndpoints, endpointId))
    if (endpoint === undefined || endpoint.organizationId !== caller.organization.id || endpoint.environment !== caller.environment || endpoint.deletedAt !== undefined) {
      return yield* Problem.apiError("WEBHOOK_ENDPOINT_NOT_FOUND", "No webhook endpoint with this id.")
    }
    return yield* arm(caller, {
      target: "receiver",
      webhookEndpointId: endpointId,
      effect: body.effect,
      ...(body.count === undefined ? {} : { count: body.count, remaining: body.count })
    }, false)
  })

export const list = (caller: FaultOwner): Effect.Effect<FaultList, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    yield* sandboxOnly(caller)
    const rows = yield* scopeFaults(yield* Store.Store, Tenancy.scopeOf(caller.organization.id, "sandbox"))
    return wholeList(rows.map(toWire))
  })

export const deleteFault = (caller: FaultOwner, id: string): Effect.Effect<void, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    yield* sandboxOnly(caller)
    const store = yield* Store.Store
    const row = yield* store.get(SimulatedFaults, id)
    if (row === undefined || row.organizationId !== caller.organization.id) return yield* Problem.apiError("NOT_FOUND", "No fault with this id.")
    yield* store.remove(SimulatedFaults, id)
  })

export const clear = (caller: FaultOwner): Effect.Effect<FaultsCleared, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    yield* sandboxOnly(caller)
    const store = yield* Store.Store
    return { removed: yield* store.removePartition(SimulatedFaults, "byScope", Tenancy.scopeOf(caller.organization.id, "sandbox")) }
  })

/** One use of a fault: counted (and its draw with it), and removed once its count is used up. */
const use = (store: Store.StoreService, row: FaultRow) => {
  const drawn = row.draws === undefined ? {} : { draws: row.draws + 1 }
  return row.remaining === undefined
    ? Effect.orDie(store.update(SimulatedFaults, { ...row, ...drawn, applied: row.applied + 1 }))
    : row.remaining <= 1
    ? store.remove(SimulatedFaults, row.id)
    : Effect.orDie(store.update(SimulatedFaults, { ...row, ...drawn, applied: row.applied + 1, remaining: row.remaining - 1 }))
}

/** A request the draw spared: counted among the fault's draws, and nothing else. */
const spare = (store: Store.StoreService, row: FaultRow) => Effect.orDie(store.update(SimulatedFaults, { ...row, draws: (row.draws ?? 0) + 1 }))

/** A request as a fault's matcher sees it. */
export interface FaultedRequest {
  readonly method: string
  /** The OpenAPI path template, without the base address: `/v2/customers/{customerId}`. */
  readonly path: string
  readonly operationId: string
  /** The customers the request names (path, query, body); a matcher's customerId must be among them. */
  readonly customerIds: ReadonlyArray<string>
}

const matches = (m: FaultMatch, request: FaultedRequest): boolean =>
  (m.method === undefined || m.method === request.method) &&
  (m.path === undefined || m.path === request.path) &&
  (m.operationId === undefined || m.operationId === request.operationId) &&
  (m.customerId === undefined || request.customerIds.includes(m.customerId))

/** A request fault's effect as one request meets it: a latency range's wait drawn, in milliseconds. */
export type AppliedFaultEffect = Exclude<FaultEffect, { readonly type: "latency" }> | { readonly type: "latency"; readonly ms: number }

/** The fault a request meets: its id and effect. */
export interface TakenFault {
  readonly id: string
  readonly effect: AppliedFaultEffect
}

/**
 * The n-th draw of fault `id` for `what` (`affects`: whether the request is affected; `latency`: its wait), a number
 * in [0, 1): the seed's (keyed, so decided by these alone) on a seeded engine, the engine's `Random` otherwise.
 */
const draw = (id: string, n: number, what: "affects" | "latency") => RandomStreams.keyedDouble(["fault", id, n, what])

/** The effect of `row` on the request it meets as its n-th: a latency range's wait drawn, from min to max both included. */
const appliedEffect = (row: FaultRow, n: number): Effect.Effect<AppliedFaultEffect> => {
  const effect = row.effect as FaultEffect
  if (effect.type !== "latency" || typeof effect.ms === "number") return Effect.succeed(effect as AppliedFaultEffect)
  const { min, max } = effect.ms
  return Effect.map(draw(row.id, n, "latency"), (u) => ({ type: "latency", ms: min + Math.floor(u * (max - min + 1)) }))
}

/**
 * The oldest request fault of the caller's sandbox that matches `request`, used once; undefined when none does, or
 * when its probability's draw spares the request (counted as a draw, not a use). Called only for an organization
 * marked as having request faults; the look-up that finds none clears the mark.
 */
export const takeRequestFault = (caller: FaultOwner, request: FaultedRequest): Effect.Effect<TakenFault | undefined, never, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    return yield* store.transaction(Effect.gen(function*() {
      const scope = Tenancy.scopeOf(caller.organization.id, "sandbox")
      const requestFaults = (yield* scopeFaults(store, scope)).filter((f) => f.target === "request")
      if (requestFaults.length === 0) {
        // The lock now, not deferred to the commit (Store.ts, `getForUpdate`): an arming that finds the mark set writes
        // no organization, so a commit's check that the row is unchanged would let this clear the mark of its fault.
        const organization = yield* store.getForUpdate(Tenancy.Organizations, caller.organization.id, { lockNow: true })
        // Read again under the organization's lock, which arming takes too.
        const left = (yield* scopeFaults(store, scope)).some((f) => f.target === "request")
        if (!left && organization?.sandboxFaults === true) yield* Tenancy.setSandboxFaults(organization, false)
        return undefined
      }
      const found = requestFaults.find((f) => matches(f.match!, request))
      if (found === undefined) return undefined
      const row = yield* store.getForUpdate(SimulatedFaults, found.id)
      // Used up by a concurrent request meanwhile: that one had it.
      if (row === undefined) return undefined
      // Which matching request this is for the fault: a fault without a probability affects every one.
      const n = row.draws ?? row.applied
      if (row.probability !== undefined && (yield* draw(row.id, n, "affects")) >= row.probability) {
        yield* spare(store, row)
        return undefined
      }
      const effect = yield* appliedEffect(row, n)
      yield* use(store, row)
      return { id: row.id, effect }
    }))
  })

/**
 * Clears the receiver-fault mark of an endpoint whose fault is gone (deleted, used up, or cleared), under the
 * endpoint's row lock, which arming takes too, so a fault armed meanwhile keeps its mark.
 */
const clearReceiverMark = (store: Store.StoreService, endpointId: string): Effect.Effect<undefined> =>
  store.transaction(Effect.gen(function*() {
    // The lock now, as for the organization's mark (`takeRequestFault`).
    const endpoint = yield* store.getForUpdate(Endpoints.WebhookEndpoints, endpointId, { lockNow: true })
    if (endpoint?.receiverFault !== true) return undefined
    if ((yield* store.findUnique(SimulatedFaults, "receiver", endpointId)) === undefined) yield* Endpoints.setReceiverFault(endpoint, false)
    return undefined
  })).pipe(Effect.provideService(Store.Store, store))

/** The receiver fault of a delivery's endpoint, used once; undefined when it has none. */
const takeReceiverFault = (store: Store.StoreService, deliveryId: string): Effect.Effect<ReceiverFaultEffect | undefined> =>
  Effect.gen(function*() {
    // The engine's own sends name their delivery and endpoint (`Transport.Sending`); a send from elsewhere reads them.
    const sending = yield* Transport.Sending
    const own = sending?.delivery.id === deliveryId ? sending : undefined
    // An endpoint without the mark has no receiver fault: nearly every attempt looks nothing up. The mark is as the
    // attempt's claim read it, so a fault armed after the claim applies from the next attempt on.
    if (own !== undefined && own.endpoint.receiverFault !== true) return undefined
    const delivery = own?.delivery ?? (yield* store.get(Deliveries.WebhookDeliveries, deliveryId))
    if (delivery === undefined) return undefined
    // Read first without a transaction: a marked endpoint's attempt with no fault left pays one read, and clears the mark.
    const found = yield* store.findUnique(SimulatedFaults, "receiver", delivery.endpointId)
    if (found === undefined) return yield* clearReceiverMark(store, delivery.endpointId)
    return yield* store.transaction(Effect.gen(function*() {
      const row = yield* store.getForUpdate(SimulatedFaults, found.id)
      if (row === undefined) return undefined
      yield* use(store, row)
      return row.effect as ReceiverFaultEffect
    }))
  })

/**
 * Rows a snapshot file brings, each endpoint that one of their receiver faults names carrying the receiver-fault mark:
 * a file written before endpoints carried it has none, and its receiver faults would never apply.
 */
export const markFaultedEndpoints = <T extends { readonly step: { readonly table: Store.Table<any> }; readonly rows: ReadonlyArray<unknown> }>(
  tables: ReadonlyArray<T>
): Array<T> => {
  const faulted = new Set<string>()
  for (const t of tables) {
    if (t.step.table !== SimulatedFaults) continue
    for (const f of t.rows as ReadonlyArray<FaultRow>) if (f.target === "receiver" && f.webhookEndpointId !== undefined) faulted.add(f.webhookEndpointId)
  }
  return tables.map((t) =>
    faulted.size === 0 || t.step.table !== Endpoints.WebhookEndpoints
      ? t
      : { ...t, rows: (t.rows as ReadonlyArray<Endpoints.WebhookEndpoint>).map((e) => (faulted.has(e.id) && e.receiverFault !== true ? { ...e, receiverFault: true as const } : e)) }
  )
}

/** What a receiver that never answers makes the transport report: the words of Dispatch's own time limit. */
export const receiverTimeoutError = (timeoutMs: number) => new Transport.TransportError({ message: `no answer within ${timeoutMs / 1000} seconds` })

/**
 * The transport with receiver faults applied: an attempt to an endpoint with one meets the fault's status, or its
 * time limit, instead of being sent; every other attempt goes to `transport` unchanged. The store is the one the
 * send runs with (the timer's); without one, nothing is faulted.
 */
export const withReceiverFaults = (transport: Transport.WebhookTransportService, timeoutMs: number): Transport.WebhookTransportService => ({
  send: (request) =>
    Effect.flatMap(Effect.serviceOption(Store.Store), (store) =>
      store._tag === "None"
        ? transport.send(request)
        : Effect.flatMap(takeReceiverFault(store.value, request.deliveryId), (fault) =>
          fault === undefined
            ? transport.send(request)
            : fault.type === "status"
            ? Effect.succeed({ status: fault.status })
            : Effect.fail(receiverTimeoutError(timeoutMs))))
})
