/**
 * The gate, around each endpoint: the checks that decide whether a request goes on, in the order a request meets
 * them, and the first refusal is the answer:
 *
 * 1. Authentication (`Auth.makeAuthenticate`): the `x-api-key`, its organization and the client's address; or the
 *    caller an embedding host named beside the request (`RequestInfo.hostCaller`, HostIdentity.ts), in its place.
 * 2. The rate limit: a token from the caller's bucket, the general one or the endpoint's dedicated one.
 * 3. A suspended organization, a read-only key on a write (the spec's Authentication rule 7), and a restricted
 *    organization on a write its endpoint does not keep open: after the bucket, so they count against it and carry
 *    its headers (`admit`).
 * 4. A simulate endpoint outside `/sandbox`.
 *
 * Then the request runs on its caller's clock (`makeOnClockOf`): a read straight through the endpoint's run (under
 * the sandbox's request faults, when the caller's organization has any), a write through the write (Write.ts). What
 * depends only on the endpoint (its policy, its bucket, its fault target) is settled once, when the server is built
 * (`makeGate`).
 */
import { Auth, Clocks, Problem, type RandomStreams, RateLimit, type Store, Tenancy, type Timers } from "@fos/core"
import { type DedicatedBucket, type Environment, policyOf } from "@fos/contract"
import { Clock, type Context, Effect, Fiber, Random } from "effect"
import { HttpServerResponse } from "effect/http"
import type { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { type ConnectionDropper, faultableTarget, faultTargetOf, requestFaults } from "./Faults.ts"
import { type EndpointRun, headerOf, type RequestInfo, type RouteRun } from "./RequestInfo.ts"
import { makeWrite, type Settle } from "./Write.ts"

/** The methods that carry a body: a request of one goes through the write. */
const bodyMethods = new Set(["POST", "PUT", "PATCH", "DELETE"])

/** The methods a read-only key may use (the spec's Authentication rule 4). */
const readMethods = new Set(["GET", "HEAD", "OPTIONS"])

/** What a restricted organization's 403 tells the caller to do (docs/decisions.md, "A restriction restricts"). */
const restrictedResolution =
  "Reads, webhook management, documents and the organization's own onboarding stay open; new business waits until the restriction is lifted (contact support; in the sandbox, POST /v2/simulate/organization/unrestrict)."

/** What a request under the virtual clock reads with its key: its sandbox's clock (`<organization>/sandbox`). */
export const clockLinks = (environment: Environment): ReadonlyArray<Store.Link> =>
  environment === "sandbox" ? [{ table: Clocks.Clocks, member: "organizationId", suffix: "/sandbox" }] : []

/**
 * Admits the caller of `info.request` (its `x-api-key`, its method), or refuses it, and goes on to `then` with the
 * caller; the bucket's decision is recorded on `info` for the response headers. `dedicated` is the endpoint's own
 * bucket (undefined: the general one). `restrictable` says the request is one a restricted organization is refused
 * (a write its endpoint does not keep open).
 */
export type Admit = <A, E, R>(
  info: RequestInfo,
  dedicated: DedicatedBucket | undefined,
  restrictable: boolean,
  then: (caller: Auth.Caller) => Effect.Effect<A, E, R>
) => Effect.Effect<A, Problem.ApiError | E, R>

/**
 * Authentication, the rate limit, a read-only key's refusal and the organization's restriction over the engine's
 * services: the caller, with the bucket's decision recorded on the request for the response headers. The spec's
 * Limits: "once the key is accepted, every response carries" the rate headers, so the refusals that come after the
 * key is known good (rule 3's 403 for a suspended organization, rule 7's 403 API_KEY_READ_ONLY, and the restriction's
 * 403 ORGANIZATION_ACCESS_SUSPENDED) come after the bucket, count against it and carry its headers. Written as a
 * short chain of effects: it runs on every request. On a seeded engine (`streams`), what the caller's request
 * invents comes from its organization's stream (RandomStreams.ts). `linked` names the rows read with the key
 * (`clockLinks` under the virtual clock).
 */
export const makeAdmit = (
  store: Store.StoreService,
  limiter: RateLimit.RateLimiterService,
  streams?: RandomStreams.RandomStreamsService,
  linked?: (environment: Environment) => ReadonlyArray<Store.Link>
): Admit => {
  const authenticate = Auth.makeAuthenticate(store, limiter, linked)
  // A limiter whose takes cost a round trip (the buckets processes share) is asked for a known key's token while the
  // key is read, from the bucket the key's caller last counted against: one round trip for both. What the read finds
  // decides; a token taken from a bucket the request does not count against (the key refused since, the
  // organization's limit changed) goes back. The callers are those of keys admitted lately, in this process only.
  const lastAdmitted = limiter.refund === undefined ? undefined : new Map<string, Auth.Caller>()
  const maxRemembered = 4096
  const sameBucket = (a: ReturnType<typeof Auth.rateLimitFor>, b: ReturnType<typeof Auth.rateLimitFor>) =>
    a.scope === b.scope && a.name === b.name && a.spec.perSecond === b.spec.perSecond && a.spec.burst === b.spec.burst
  const asked = (taken: RateLimit.Decision | Effect.Effect<RateLimit.Decision>) => (Effect.isEffect(taken) ? taken : Effect.succeed(taken))
  // The admitted caller goes straight on to `then`: every step of the per-request chain costs (docs/performance.md).
  return <A, E, R>(
    info: RequestInfo,
    dedicated: DedicatedBucket | undefined,
    restrictable: boolean,
    then: (caller: Auth.Caller) => Effect.Effect<A, E, R>
  ): Effect.Effect<A, Problem.ApiError | E, R> => {
    if (info.environment === undefined) return Effect.die(new Error("admit outside a base address"))
    // A caller its host named needs no key, and is not remembered by one.
    const host = info.hostCaller
    const apiKey = host === undefined ? headerOf(info.request, "x-api-key") : undefined
    const credentials: Auth.Credentials = { method: "GET", environment: info.environment, apiKey, clientIp: info.clientIp, host }
    const guess = apiKey === undefined ? undefined : lastAdmitted?.get(apiKey)
    if (guess === undefined || guess.environment !== info.environment) {
      return authenticate(credentials, (caller) => {
        if (lastAdmitted !== undefined && apiKey !== undefined) {
          if (lastAdmitted.size >= maxRemembered) lastAdmitted.clear()
          lastAdmitted.set(apiKey, caller)
        }
        const limit = Auth.rateLimitFor(caller, dedicated)
        return RateLimit.decide(limiter.take(limit.scope, limit.name, limit.spec), (decision) => admitted(caller, decision))
      })
    }
    const guessed = Auth.rateLimitFor(guess, dedicated)
    // Asked when the request runs, not when its effect is made: a shared bucket queues the asker at once.
    return Effect.flatMap(Effect.forkChild(Effect.suspend(() => asked(limiter.take(guessed.scope, guessed.name, guessed.spec)))), (token) => {
      let spent = false
      const giveBack = Effect.flatMap(Fiber.join(token), (decision) => (decision.allowed ? limiter.refund!(guessed.scope, guessed.name, guessed.spec) : Effect.void))
      return authenticate(credentials, (caller) => {
        spent = true
        lastAdmitted!.set(apiKey!, caller)
        const limit = Auth.rateLimitFor(caller, dedicated)
        if (sameBucket(limit, guessed)) return Effect.flatMap(Fiber.join(token), (decision) => admitted(caller, decision))
        return Effect.andThen(giveBack, Effect.suspend(() => RateLimit.decide(limiter.take(limit.scope, limit.name, limit.spec), (decision) => admitted(caller, decision))))
      }).pipe(Effect.onExit(() => {
        if (spent) return Effect.void
        lastAdmitted!.delete(apiKey!)
        return Effect.ignore(giveBack)
      }))
    })

    // Rule 7 (a read-only key on a write) is checked here, after the bucket, rather than by `authenticate`: it is
    // asked as a read, which every accepted key may make.
    function admitted(caller: Auth.Caller, decision: RateLimit.Decision): Effect.Effect<A, Problem.ApiError | E, R> {
      info.organizationId = caller.organization.id
      info.rate = decision
      if (!decision.allowed) {
        return Effect.fail(Problem.apiError("RATE_LIMITED", "The rate limit of this bucket is exhausted.", { retryAfterSeconds: decision.retryAfterSeconds! }))
      }
      if (Auth.isSuspended(caller)) return Effect.fail(Auth.suspendedError())
      if (caller.key.access === "read_only" && !readMethods.has(info.request.method)) {
        return Effect.fail(Problem.apiError("API_KEY_READ_ONLY", "A read-only key may use GET, HEAD and OPTIONS only."))
      }
      if (restrictable && caller.organization.restrictedIn !== undefined && Tenancy.isRestrictedIn(caller.organization, caller.environment)) {
        return Effect.fail(Problem.apiError("ORGANIZATION_ACCESS_SUSPENDED", "The organization is restricted: it may read and manage what it has, but not start new business.", {
          // The catalog's resolution speaks of a suspension (every key refused); a restriction refuses new business only.
          resolution: restrictedResolution
        }))
      }
      return streams === undefined
        ? then(caller)
        : Effect.provideService(then(caller), Random.Random, streams.of(Tenancy.scopeOf(caller.organization.id, caller.environment)))
    }
  }
}

/** Runs `effect` on the clock of the request's caller, and notes that clock on `info` for the problem's timestamp. */
export type OnClockOf = <A, E, R>(info: RequestInfo, caller: Auth.Caller, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/**
 * Under the virtual clock a request runs on its scope's clock (its sandbox's, or real time in live), read once
 * when its caller is known; on the system clock nothing is read.
 */
export const makeOnClockOf = (time: Timers.TimeControlService, timerContext: Context.Context<Store.Store | Timers.TimerHandlers>): OnClockOf =>
  time.mode === "virtual"
    ? <A, E, R>(info: RequestInfo, caller: Auth.Caller, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
      const scope = Tenancy.scopeOf(caller.organization.id, caller.environment)
      // The sandbox's clock row, read with the key (`clockLinks`): neither the clock nor an advance reads it again.
      const read: Clocks.ReadClockRow | undefined = caller.environment === "sandbox" && caller.linked !== undefined && caller.linked.length > 0
        ? { scope, row: caller.linked[0] as Clocks.StoredClock | undefined, used: false }
        : undefined
      return Effect.flatMap(
        time.clockFor(scope).pipe(Effect.provideService(Clocks.ReadClock, read), Effect.provideContext(timerContext)),
        (clock) => {
          info.clock = clock
          return effect.pipe(Effect.provideService(Clock.Clock, clock), Effect.provideService(Clocks.ReadClock, read))
        }
      )
    }
    : <A, E, R>(_info: RequestInfo, _caller: Auth.Caller, effect: Effect.Effect<A, E, R>) => effect

/** What the gate is made of, once per engine. */
export interface GateOptions {
  readonly admit: Admit
  readonly onClockOf: OnClockOf
  /** Runs what a write made due at once (Write.ts). */
  readonly settle: Settle
  /** How the server drops a connection (a commit-then-lose fault's `dropped_connection`), when it can. */
  readonly dropConnection: ConnectionDropper | undefined
  /** The engine's real time (core kernel/RealClock.ts), on which a latency fault waits. */
  readonly realClock: Clock.Clock
  /** Whether request faults apply: not on an engine that serves no fault endpoints (Served.ts). */
  readonly faults?: boolean | undefined
}

/** The gate of one engine: each endpoint's, and the answer to OPTIONS on a route. */
export interface GateService {
  /** An endpoint's gate: what depends only on the endpoint is settled here, once. */
  readonly gate: (endpoint: HttpApiEndpoint.Top, group: HttpApiGroup.Top, run: EndpointRun) => RouteRun
  /** OPTIONS on a route: 204 with `allow` (the route's methods) in `Allow`, after authentication as a read. */
  readonly options: (allow: string) => RouteRun
}

/** The gate over one engine's services: each endpoint's, and the answer to OPTIONS. */
export const makeGate = ({ admit, onClockOf, settle, dropConnection, realClock, faults: faultsApply = true }: GateOptions): GateService => {
  const gate: GateService["gate"] = (endpoint, group, run) => {
    const policy = policyOf(endpoint, group)
    const { bucket, sandboxOnly, openWhenRestricted: open } = policy
    const target = faultableTarget(endpoint, group)
    const faults = target === undefined || !faultsApply ? undefined : requestFaults(target, dropConnection, realClock)
    const write = makeWrite({ policy, operation: faultTargetOf(endpoint, group), settle })
    return (request, info) =>
      admit(info, bucket, !open && bodyMethods.has(request.method), (caller) => {
        if (sandboxOnly && info.environment !== "sandbox") {
          return Effect.fail(Problem.apiError("NOT_FOUND", "Simulate endpoints exist only under /sandbox."))
        }
        // Only an organization marked as having request faults looks them up (core simulate/Faults.ts).
        const faulted = faults !== undefined && caller.organization.sandboxFaults === true && caller.environment === "sandbox" ? faults : undefined
        if (bodyMethods.has(request.method)) return onClockOf(info, caller, write(info, caller, run, faulted))
        const read = run(request, undefined, caller)
        return onClockOf(info, caller, faulted === undefined ? read : faulted(caller, info, undefined, read))
      })
  }

  const options: GateService["options"] = (allow) => {
    const answer = HttpServerResponse.setHeader(HttpServerResponse.empty({ status: 204 }), "allow", allow)
    const answered = Effect.succeed(answer)
    return (_request, info) => admit(info, undefined, false, () => answered)
  }

  return { gate, options }
}
