/**
 * The operator surface over HTTP, under `/operator/`: what support and the dashboard do (DESIGN.md §2). It is
 * not part of the spec's API and not in its OpenAPI document. Every call needs `Authorization: Bearer <token>`
 * with the server's operator token; without a configured token the surface does not exist (404).
 *
 * The same operations are library calls in @fos/core (Operator.ts) and `fos` CLI commands, which call these.
 */
import type { Engine } from "@fos/core"
import {
  Auth,
  EventLog,
  Faults,
  LedgerAudit,
  Operator,
  Outcomes,
  PendingTimers,
  Timeline,
  Problem,
  RandomStreams,
  Reset,
  Restrictions,
  SnapshotFiles,
  Snapshots,
  Store,
  Wire
} from "@fos/core"
import { defaultPageSize, FaultCreate, KeyAccess, maxPageSize, maxSnapshotFileBytes, OrganizationStatus, OutcomeRuleCreate, ReceiverFaultCreate, UserRole } from "@fos/contract"
import { Context, Effect, Layer, Schema } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { BasePath } from "./BasePath.ts"
import { checkMatch } from "./FaultHandlers.ts"
import { LiveFeed, parseTopics, recentPage } from "./LiveFeed.ts"
import { metricsResponse } from "./Metrics.ts"
import { Edge } from "./Pipeline.ts"
import { refusedParameters } from "./RefusedText.ts"
import { readJsonBody } from "./Write.ts"

/** The operator token, or only its SHA-256 hash (as a store keeps it, `keepOperatorToken`). */
export type OperatorSecret = string | { readonly sha256: string }

/** The operator token; undefined turns the operator surface off. */
export class OperatorToken extends Context.Reference<OperatorSecret | undefined>("fos/http/OperatorToken", {
  defaultValue: () => undefined
}) {}

/** Constant-time comparison of a given token's SHA-256 digest with the token's. */
const sameSecret = (a: string, b: OperatorSecret): boolean => {
  const x = Auth.sha256Hex(a)
  const y = typeof b === "string" ? Auth.sha256Hex(b) : b.sha256
  let diff = 0
  for (let i = 0; i < x.length; i++) diff |= x.charCodeAt(i) ^ y.charCodeAt(i)
  return diff === 0
}

const RateLimitBody = Schema.Struct({
  sustainedPerSecond: Schema.Number.check(Schema.isGreaterThan(0, { fosDetail: "must be greater than 0" })),
  burst: Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(1, { fosDetail: "must be an integer of at least 1" }))
})

const NewOrganizationBody = Schema.Struct({
  id: Schema.optionalKey(Schema.String),
  name: Schema.String,
  status: Schema.optionalKey(OrganizationStatus),
  sandboxProvisioned: Schema.optionalKey(Schema.Boolean),
  apiKeyCreationEnabled: Schema.optionalKey(Schema.Boolean),
  features: Schema.optionalKey(Schema.Array(Schema.String)),
  rateLimit: Schema.optionalKey(RateLimitBody)
})

const OrganizationChangeBody = Schema.Struct({
  name: Schema.optionalKey(Schema.String),
  status: Schema.optionalKey(OrganizationStatus),
  sandboxProvisioned: Schema.optionalKey(Schema.Boolean),
  apiKeyCreationEnabled: Schema.optionalKey(Schema.Boolean),
  features: Schema.optionalKey(Schema.Array(Schema.String)),
  rateLimit: Schema.optionalKey(Schema.NullOr(RateLimitBody))
})

const NewUserBody = Schema.Struct({
  id: Schema.optionalKey(Schema.String),
  organizationId: Schema.String,
  email: Schema.String,
  role: UserRole
})

const NewKeyBody = Schema.Struct({
  organizationId: Schema.String,
  environment: Schema.Literals(["sandbox", "live"]),
  access: Schema.optionalKey(KeyAccess),
  createdBy: Schema.String,
  ipAllowlist: Schema.optionalKey(Schema.Array(Schema.String))
})

const RevokeKeyBody = Schema.Struct({ key: Schema.String })

const body = <S extends Schema.Decoder<unknown>>(schema: S) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const text = yield* readJsonBody(request)
    const json = text === "" ? undefined : JSON.parse(text)
    // Members the schema does not name are refused, as on the API (docs/decisions.md, "Unknown members").
    return yield* Schema.decodeUnknownEffect(schema)(json, { errors: "all", onExcessProperty: "error" }).pipe(
      Effect.mapError((e) => Problem.invalidRequest(Wire.decodeFailure(e.issue).errors))
    )
  })

const json = (value: unknown, status = 200) => HttpServerResponse.jsonUnsafe(value, { status })

const keyView = (k: { hash: string; organizationId: string; environment: string; access: string; createdBy: string; ipAllowlist: ReadonlyArray<string>; last4: string; createdAt: string; revokedAt: string | undefined }) => ({
  hash: k.hash,
  organizationId: k.organizationId,
  environment: k.environment,
  access: k.access,
  createdBy: k.createdBy,
  ipAllowlist: k.ipAllowlist,
  last4: k.last4,
  createdAt: k.createdAt,
  revokedAt: k.revokedAt ?? null
})

/** Wraps an operator handler in the edge: token check, then the handler, with `ApiError` rendered as a problem. */
const guarded = (edge: Edge["Service"], token: OperatorSecret | undefined, services: Context.Context<Engine.EngineServices>) =>
<R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, Problem.ApiError, R>) =>
  edge.serve(undefined, (request) => {
    if (token === undefined) return Effect.fail(Problem.apiError("NOT_FOUND", "The operator surface is off on this server."))
    const header = request.headers.authorization ?? ""
    const given = header.startsWith("Bearer ") ? header.slice(7) : ""
    if (!sameSecret(given, token)) return Effect.fail(Problem.apiError("UNAUTHORIZED", "The operator token is missing or wrong."))
    // A seeded engine: what the operator's calls invent comes from the operator's own stream (RandomStreams.ts).
    return Effect.provideContext(RandomStreams.withStream(RandomStreams.operatorStream)(handler), services as Context.Context<never>) as Effect.Effect<
      HttpServerResponse.HttpServerResponse,
      Problem.ApiError
    >
  })

/**
 * A path parameter of the operator request, "" when absent. One holding text the API refuses (RefusedText.ts) is
 * 400 VALIDATION_ERROR, as on the API.
 */
const param = (name: string) =>
  Effect.flatMap(HttpRouter.params, (p) => {
    const value = p[name] ?? ""
    const refused = refusedParameters({ [name]: value }, "path")
    return refused === undefined ? Effect.succeed(value) : Effect.fail(refused)
  })

/** An organization's sandbox, as the owner of its faults. */
const sandboxOf = (organizationId: string) =>
  Effect.map(Operator.getOrganization(organizationId), (organization) => ({ organization, environment: "sandbox" as const }))

/** A query parameter of the operator request, or undefined; one holding text the API refuses is refused, as `param`. */
const queryParam = (name: string) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const at = request.url.indexOf("?")
    const value = (at < 0 ? undefined : new URLSearchParams(request.url.slice(at + 1)).get(name)) ?? undefined
    const refused = value === undefined ? undefined : refusedParameters({ [name]: value }, "query")
    if (refused !== undefined) return yield* refused
    return value
  })

/** `limit` and `cursor` of an operator read of an organization's sandbox, as its API list takes them (oldest first). */
const pageQuery = Effect.gen(function*() {
  const text = yield* queryParam("limit")
  const limit = text === undefined ? defaultPageSize : Number(text)
  if (!Number.isInteger(limit) || limit < 1 || limit > maxPageSize) {
    return yield* Problem.invalidRequest([{ pointer: "/limit", detail: `must be an integer from 1 to ${maxPageSize}` }], "query")
  }
  return { cursor: yield* queryParam("cursor"), limit }
})

/** The operator routes, guarded by the token configured when the routes are built, under the engine's base path. */
export const layerOperatorRoutes: Layer.Layer<never, never, HttpRouter.HttpRouter | Engine.EngineServices | Edge | LiveFeed> = Layer.unwrap(Effect.gen(function*() {
  // The engine's services, taken once: a server may run requests in a context of its own.
  const guard = guarded(yield* Edge, yield* OperatorToken, yield* Effect.context<Engine.EngineServices>())
  const feed = yield* LiveFeed
  const mount = yield* BasePath
  return HttpRouter.addAll(underMount(mount, [
  // The engine's metrics for Prometheus, with the operator's token (Metrics.ts says why).
  HttpRouter.route("GET", "/metrics", guard(metricsResponse(feed))),
  HttpRouter.route("GET", "/operator/organizations", guard(Effect.map(Operator.listOrganizations, (orgs) => json({ data: orgs })))),
  HttpRouter.route("POST", "/operator/organizations", guard(Effect.gen(function*() {
    const input = yield* body(NewOrganizationBody)
    return json(yield* Operator.createOrganization(input), 201)
  }))),
  HttpRouter.route("PATCH", "/operator/organizations/:id", guard(Effect.gen(function*() {
    const change = yield* body(OrganizationChangeBody)
    const { rateLimit, ...rest } = change
    const next = yield* Operator.updateOrganization(yield* param("id"), {
      ...rest,
      ...(rateLimit === undefined ? {} : { rateLimit: rateLimit ?? undefined })
    })
    return json(next)
  }))),
  HttpRouter.route("POST", "/operator/organizations/:id/restrict", guard(Effect.gen(function*() {
    const store = yield* Store.Store
    const organization = yield* store.transaction(Restrictions.restrictOrganization(yield* param("id")))
    return json({ organizationId: organization.id, restricted: true })
  }))),
  HttpRouter.route("POST", "/operator/organizations/:id/unrestrict", guard(Effect.gen(function*() {
    const store = yield* Store.Store
    const organization = yield* store.transaction(Restrictions.liftOrganization(yield* param("id")))
    return json({ organizationId: organization.id, restricted: false })
  }))),
  // The organization's sandbox emptied (`fos reset`); its live data is never touched (Reset.ts).
  HttpRouter.route("POST", "/operator/organizations/:id/reset", guard(Effect.gen(function*() {
    const organization = yield* Operator.getOrganization(yield* param("id"))
    return json(yield* Reset.resetSandbox(organization.id))
  }))),
  // An organization's sandbox faults (`fos faults`), as its own /sandbox/v2/simulate/faults endpoints arm them (docs/faults.md).
  HttpRouter.route("GET", "/operator/organizations/:id/faults", guard(Effect.gen(function*() {
    return json(yield* Faults.list(yield* sandboxOf(yield* param("id"))))
  }))),
  HttpRouter.route("POST", "/operator/organizations/:id/faults", guard(Effect.gen(function*() {
    const owner = yield* sandboxOf(yield* param("id"))
    const input = yield* body(FaultCreate)
    yield* checkMatch(input.match)
    return json(yield* Faults.armFault(owner, input), 201)
  }))),
  HttpRouter.route("POST", "/operator/organizations/:id/webhooks/endpoints/:endpointId/faults", guard(Effect.gen(function*() {
    const owner = yield* sandboxOf(yield* param("id"))
    return json(yield* Faults.armReceiverFault(owner, yield* param("endpointId"), yield* body(ReceiverFaultCreate)), 201)
  }))),
  HttpRouter.route("DELETE", "/operator/organizations/:id/faults", guard(Effect.gen(function*() {
    return json(yield* Faults.clear(yield* sandboxOf(yield* param("id"))))
  }))),
  HttpRouter.route("DELETE", "/operator/organizations/:id/faults/:faultId", guard(Effect.gen(function*() {
    const faultId = yield* param("faultId")
    yield* Faults.deleteFault(yield* sandboxOf(yield* param("id")), faultId)
    return json({ deleted: faultId })
  }))),
  // An organization's sandbox outcome rules (`fos outcomes`), as its own /sandbox/v2/simulate/outcomes endpoints keep them (docs/outcomes.md).
  HttpRouter.route("GET", "/operator/organizations/:id/outcomes", guard(Effect.gen(function*() {
    const owner = yield* sandboxOf(yield* param("id"))
    const page = yield* pageQuery
    return json(yield* Outcomes.list(owner, { ...page, direction: "forward", sortBy: "createdAt", sortOrder: "asc" }))
  }))),
  HttpRouter.route("POST", "/operator/organizations/:id/outcomes", guard(Effect.gen(function*() {
    const owner = yield* sandboxOf(yield* param("id"))
    return json(yield* Outcomes.create(owner, yield* body(OutcomeRuleCreate)), 201)
  }))),
  HttpRouter.route("DELETE", "/operator/organizations/:id/outcomes", guard(Effect.gen(function*() {
    return json(yield* Outcomes.clear(yield* sandboxOf(yield* param("id"))))
  }))),
  HttpRouter.route("DELETE", "/operator/organizations/:id/outcomes/:ruleId", guard(Effect.gen(function*() {
    const ruleId = yield* param("ruleId")
    yield* Outcomes.remove(yield* sandboxOf(yield* param("id")), ruleId)
    return json({ deleted: ruleId })
  }))),
  // What an organization's sandbox shows of itself (docs/inspect.md), for support: `fos timers|events|audit --org ORG_ID`,
  // `fos timeline --org ORG_ID RESOURCE_ID`.
  HttpRouter.route("GET", "/operator/organizations/:id/timers", guard(Effect.gen(function*() {
    const organization = yield* Operator.getOrganization(yield* param("id"))
    const page = yield* pageQuery
    const housekeeping = yield* queryParam("housekeeping")
    if (housekeeping !== undefined && housekeeping !== "true" && housekeeping !== "false") {
      return yield* Problem.invalidRequest([{ pointer: "/housekeeping", detail: "must be true or false" }], "query")
    }
    return json(yield* PendingTimers.list(organization.id, "sandbox", { ...page, direction: "forward", sortBy: "dueAt", sortOrder: "asc" }, {
      includeHousekeeping: housekeeping === "true"
    }))
  }))),
  HttpRouter.route("GET", "/operator/organizations/:id/events", guard(Effect.gen(function*() {
    const organization = yield* Operator.getOrganization(yield* param("id"))
    const page = yield* pageQuery
    const filter = { resourceId: yield* queryParam("resourceId"), type: yield* queryParam("type") }
    return json(yield* EventLog.listEvents(organization.id, filter, { ...page, direction: "forward", sortBy: "createdAt", sortOrder: "asc" }))
  }))),
  HttpRouter.route("GET", "/operator/organizations/:id/ledger/accounts/:holderId/journal", guard(Effect.gen(function*() {
    const organization = yield* Operator.getOrganization(yield* param("id"))
    const page = yield* pageQuery
    return json(yield* LedgerAudit.accountJournal(organization.id, yield* param("holderId"), { ...page, asset: yield* queryParam("asset"), chain: yield* queryParam("chain") }))
  }))),
  HttpRouter.route("GET", "/operator/organizations/:id/ledger/audit", guard(Effect.gen(function*() {
    const organization = yield* Operator.getOrganization(yield* param("id"))
    return json(yield* LedgerAudit.auditLedger(organization.id))
  }))),
  HttpRouter.route("GET", "/operator/organizations/:id/timeline/:resourceId", guard(Effect.gen(function*() {
    const organization = yield* Operator.getOrganization(yield* param("id"))
    return json(yield* Timeline.timeline(organization.id, yield* param("resourceId")))
  }))),
  // An organization's recent requests and live stream (LiveFeed.ts, docs/inspect.md), for `fos tail --org ORG_ID`.
  HttpRouter.route("GET", "/operator/organizations/:id/requests", guard(Effect.gen(function*() {
    const organization = yield* Operator.getOrganization(yield* param("id"))
    const page = yield* pageQuery
    const environment = (yield* queryParam("environment")) ?? "sandbox"
    if (environment !== "sandbox" && environment !== "live") {
      return yield* Problem.invalidRequest([{ pointer: "/environment", detail: "must be sandbox or live" }], "query")
    }
    return json(yield* recentPage(feed, organization.id, environment, page))
  }))),
  HttpRouter.route("GET", "/operator/organizations/:id/stream", guard(Effect.gen(function*() {
    const organization = yield* Operator.getOrganization(yield* param("id"))
    const request = yield* HttpServerRequest.HttpServerRequest
    const topics = yield* parseTopics(yield* queryParam("topics"))
    const after = (yield* queryParam("after")) ?? request.headers["last-event-id"]
    const stream = yield* feed.stream({ organizationId: organization.id, topics, after })
    return HttpServerResponse.stream(stream, { contentType: "text/event-stream", headers: { "cache-control": "no-store", "x-accel-buffering": "no" } })
  }))),
  // Snapshots of an organization's sandbox (`fos snapshots`, Snapshots.ts); a snapshot's id names its organization.
  HttpRouter.route("GET", "/operator/organizations/:id/snapshots", guard(Effect.gen(function*() {
    const organization = yield* Operator.getOrganization(yield* param("id"))
    return json({ data: yield* Snapshots.all(organization.id) })
  }))),
  HttpRouter.route("POST", "/operator/organizations/:id/snapshots", guard(Effect.gen(function*() {
    const organization = yield* Operator.getOrganization(yield* param("id"))
    return json(yield* Snapshots.take(organization.id), 201)
  }))),
  HttpRouter.route("POST", "/operator/snapshots/:id/restore", guard(Effect.gen(function*() {
    const id = yield* param("id")
    return json(yield* Snapshots.restore(yield* Snapshots.owner(id), id))
  }))),
  // A snapshot as a file, and a file as a snapshot (`fos snapshots export|import`, SnapshotFiles.ts): the same text
  // as the sandbox's export, and the same checks and larger body as its import.
  HttpRouter.route("GET", "/operator/snapshots/:id/export", guard(Effect.gen(function*() {
    const id = yield* param("id")
    const exported = yield* SnapshotFiles.exportFile(yield* Snapshots.owner(id), id)
    return HttpServerResponse.text(exported.text, { contentType: "application/json", headers: { "content-disposition": `attachment; filename="${id}.fos-snapshot.json"` } })
  }))),
  HttpRouter.route("POST", "/operator/organizations/:id/snapshots/import", guard(Effect.gen(function*() {
    const organization = yield* Operator.getOrganization(yield* param("id"))
    const text = yield* readJsonBody(yield* HttpServerRequest.HttpServerRequest, maxSnapshotFileBytes)
    return json(yield* SnapshotFiles.importFile(organization.id, text === "" ? undefined : JSON.parse(text)), 201)
  }))),
  HttpRouter.route("DELETE", "/operator/snapshots/:id", guard(Effect.gen(function*() {
    const id = yield* param("id")
    yield* Snapshots.deleteSnapshot(yield* Snapshots.owner(id), id)
    return json({ id, deleted: true })
  }))),
  HttpRouter.route("POST", "/operator/users", guard(Effect.gen(function*() {
    const input = yield* body(NewUserBody)
    return json(yield* Operator.createUser(input), 201)
  }))),
  HttpRouter.route("GET", "/operator/organizations/:id/users", guard(Effect.gen(function*() {
    const users = yield* Operator.listUsers(yield* param("id"))
    return json({ data: users.map((u) => ({ ...u, removedAt: u.removedAt ?? null })) })
  }))),
  HttpRouter.route("DELETE", "/operator/users/:id", guard(Effect.gen(function*() {
    return json(yield* Operator.removeUser(yield* param("id")))
  }))),
  HttpRouter.route("GET", "/operator/organizations/:id/api-keys", guard(Effect.gen(function*() {
    const keys = yield* Operator.listApiKeys(yield* param("id"))
    return json({ data: keys.map(keyView) })
  }))),
  HttpRouter.route("POST", "/operator/api-keys", guard(Effect.gen(function*() {
    const input = yield* body(NewKeyBody)
    const created = yield* Operator.createApiKey(input)
    return json({ key: created.key, ...keyView(created.record) }, 201)
  }))),
  HttpRouter.route("POST", "/operator/api-keys/revoke", guard(Effect.gen(function*() {
    const { key } = yield* body(RevokeKeyBody)
    return json(keyView(yield* Operator.revokeApiKey(key)))
  })))
  ]))
})) as any

/** `routes` with their paths under `mount` (a base path; `""` leaves them as they are). */
const underMount = <E, R>(mount: string, routes: ReadonlyArray<HttpRouter.Route<E, R>>): ReadonlyArray<HttpRouter.Route<E, R>> =>
  mount === ""
    ? routes
    : routes.map((route) =>
      HttpRouter.route(route.method, `${mount}${route.path}` as HttpRouter.PathInput, route.handler, { uninterruptible: route.uninterruptible }) as unknown as HttpRouter.Route<E, R>
    )
