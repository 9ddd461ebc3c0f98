/**
 * Authentication: rules 1 to 9 of the spec's Authentication section, in the order a request meets them.
 *
 * 1. No `x-api-key`: 401 API_KEY_MISSING (counted in the per-IP bucket for unauthenticated traffic).
 * 2. A key of the wrong shape, of the other environment, unknown or revoked: 401 API_KEY_INVALID (counted in
 *    the per-IP bucket for invalid keys; once that is empty the answer is 429 RATE_LIMITED).
 * 3. The organization suspended: 403 ORGANIZATION_ACCESS_SUSPENDED (given by the gate after the bucket: the key is
 *    accepted, so the answer carries the rate headers).
 * 4. `/live` for an organization that is not active: 403 PRODUCTION_ACCESS_REQUIRED.
 * 5. `/sandbox` for an organization whose sandbox is not provisioned: 409 SANDBOX_NOT_PROVISIONED.
 * 6. A caller address outside the key's allowlist: 403 API_KEY_IP_NOT_ALLOWED.
 * 7. A read-only key on a method other than GET, HEAD, OPTIONS: 403 API_KEY_READ_ONLY.
 *
 * A host that embeds the engine and authenticates its own users may name the caller itself instead of sending a key
 * (`HostCaller`): then the host's word stands for rules 1, 2 and 6, and everything after them holds as for a key.
 */
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js"
import { Effect } from "effect"
import ipaddr from "ipaddr.js"
import * as Problem from "../kernel/Problem.ts"
import * as RateLimit from "../kernel/RateLimit.ts"
import type * as Store from "../kernel/Store.ts"
import * as Tenancy from "./Tenancy.ts"

import { type DedicatedBucket, type Environment, Environments, KeyAccess, type UserId } from "@fos/contract"

/** Lower-case hex SHA-256 of a text. */
export const sha256Hex = (text: string): string => bytesToHex(sha256(utf8ToBytes(text)))

/** How many characters of a text `sha256HexInPieces` hashes between two yields. */
export const hashPieceChars = 256 * 1024

/**
 * `sha256Hex` of a text, the same digest, hashed `hashPieceChars` characters at a time with a yield of the fiber
 * between pieces: a body of megabytes (a snapshot file's import) held the thread for tens of milliseconds in one
 * hash, and every other request of the process waited (docs/storage.md, "Long work and other requests"). A shorter
 * text is hashed at once, in one step. A piece never ends between the two halves of a surrogate pair, which encoded
 * apart would be two replacement characters.
 */
export const sha256HexInPieces = (text: string): Effect.Effect<string> => {
  if (text.length <= hashPieceChars) return Effect.sync(() => sha256Hex(text))
  return Effect.suspend(() => {
    const hash = sha256.create()
    const from = (start: number): Effect.Effect<string> =>
      Effect.suspend(() => {
        let end = Math.min(text.length, start + hashPieceChars)
        const last = text.charCodeAt(end - 1)
        if (end < text.length && last >= 0xd800 && last <= 0xdbff) end++
        hash.update(utf8ToBytes(text.slice(start, end)))
        return end === text.length ? Effect.succeed(bytesToHex(hash.digest())) : Effect.andThen(Effect.yieldNow, from(end))
      })
    return from(0)
  })
}

/**
 * The hash of a presented key of the right shape (undefined for any other text), remembered for the keys seen
 * lately: hashing is the largest single cost of authenticating a request, and a remembered key needs no second
 * look at its shape. The cache lives only in this process's memory, holds no more than keys in flight do, and is
 * never stored; keys are still stored only as hashes.
 */
const keyHashes = new Map<string, string>()
const maxKeyHashes = 4096
const keyHash = (key: string): string | undefined => {
  let hash = keyHashes.get(key)
  if (hash === undefined) {
    if (!Tenancy.keyPattern.test(key)) return undefined
    if (keyHashes.size >= maxKeyHashes) keyHashes.clear()
    hash = sha256Hex(key)
    keyHashes.set(key, hash)
  }
  return hash
}

/**
 * A caller as a host that embeds the engine names it, having authenticated its own user: an organization, the
 * environment it may call and its access, as a key would grant them, and the user, when the host maps its users
 * to the organization's. It travels beside the request, never in it (a server takes no caller from the network).
 */
export interface HostCaller {
  readonly organizationId: string
  readonly environment: Environment
  readonly access: KeyAccess
  readonly userId?: string | undefined
}

/** What a `HostCaller` grants once admitted: in the place of a key, the access and the user it named. */
export interface HostGrant {
  readonly kind: "host"
  readonly access: KeyAccess
  readonly userId: UserId | undefined
}

const environments: ReadonlyArray<unknown> = Environments
const accesses: ReadonlyArray<unknown> = KeyAccess.literals

/**
 * What is wrong with a value given as a `HostCaller`, in a sentence, or undefined when it is one. The host's own
 * mistake, so its embedding API throws it rather than answer a request with it.
 */
export const hostCallerFault = (value: unknown): string | undefined => {
  if (typeof value !== "object" || value === null) return "caller: give { organizationId, environment, access, userId? }"
  const caller = value as Record<string, unknown>
  if (typeof caller.organizationId !== "string" || caller.organizationId === "") return "caller.organizationId: give the organization's id"
  if (!environments.includes(caller.environment)) return `caller.environment: "sandbox" or "live", not ${JSON.stringify(caller.environment)}`
  if (!accesses.includes(caller.access)) return `caller.access: "read_only" or "read_write", not ${JSON.stringify(caller.access)}`
  if (caller.userId !== undefined && (typeof caller.userId !== "string" || caller.userId === "")) return "caller.userId: the user's id, or leave it out"
  return undefined
}

/** True for an IPv4 address in its four-part dotted form, or an IPv6 address (no range). */
export const isIpAddress = (text: string): boolean => ipaddr.IPv4.isValidFourPartDecimal(text) || ipaddr.IPv6.isValid(text)

/** Whether a caller was admitted on an API key rather than on its host's word. */
export const isApiKey = (key: Tenancy.ApiKey | HostGrant): key is Tenancy.ApiKey => (key as Partial<HostGrant>).kind !== "host"

/** Who is calling: the accepted key (or its host's word) and its organization, in the environment of the base address. */
export interface Caller {
  readonly organization: Tenancy.Organization
  /** The key the request was admitted on, or what its host granted (`HostCaller`): both have its `access`. */
  readonly key: Tenancy.ApiKey | HostGrant
  readonly environment: Environment
  /**
   * The rows the authenticator was asked to read with the key (`makeAuthenticate`'s `linked`), in its order; not
   * read for a host's caller that names no user.
   */
  readonly linked?: ReadonlyArray<unknown> | undefined
}

export interface Credentials {
  readonly method: string
  readonly environment: Environment
  readonly apiKey: string | undefined
  readonly clientIp: string
  /** The caller its host names; then `apiKey` is not read. */
  readonly host?: HostCaller | undefined
}

const keyPrefixes = { sandbox: Tenancy.keyPrefix("sandbox"), live: Tenancy.keyPrefix("live") } as const satisfies Record<Environment, string>

const otherEnvironment = { sandbox: "live", live: "sandbox" } as const satisfies Record<Environment, Environment>

/** What a key of the other environment's form is told, per environment it was sent to. */
const wrongEnvironment = {
  sandbox: `The API key has the form of a live key (${keyPrefixes.live}…); the sandbox takes sandbox keys (${keyPrefixes.sandbox}…).`,
  live: `The API key has the form of a sandbox key (${keyPrefixes.sandbox}…); the live environment takes live keys (${keyPrefixes.live}…).`
} as const satisfies Record<Environment, string>

const readMethods = new Set(["GET", "HEAD", "OPTIONS"])

/** An API key's organization, read with it. */
const organizationLink: Store.Link = { table: Tenancy.Organizations, member: "organizationId" }

/** True when `ip` lies in one of the CIDR ranges (v4 or v6; IPv4-mapped v6 addresses count as v4). */
export const ipAllowed = (ip: string, cidrs: ReadonlyArray<string>): boolean => {
  if (cidrs.length === 0) return true
  let address: ipaddr.IPv4 | ipaddr.IPv6
  try {
    address = ipaddr.process(ip)
  } catch {
    return false
  }
  return cidrs.some((cidr) => {
    try {
      const range = ipaddr.parseCIDR(cidr)
      return address.kind() === range[0].kind() && address.match(range)
    } catch {
      return false
    }
  })
}

/** True for a valid CIDR range, v4 or v6. */
export const isCidr = (cidr: string): boolean => {
  try {
    ipaddr.parseCIDR(cidr)
    return true
  } catch {
    return false
  }
}

/** What a refused host's caller is told to do: the catalog's resolution speaks of keys, which the host did not send. */
const hostResolution = "The host that embeds the engine named this caller: name an organization (and user) of this engine, in the environment of the base address."

const limited = (what: string, retryAfterSeconds: number | undefined) =>
  new Problem.ApiError({ code: "RATE_LIMITED", detail: `Too many ${what} from this address.`, retryAfterSeconds: retryAfterSeconds ?? 1 })

/** Rule 3's refusal. The key is accepted by then, so it is given after the caller's bucket (see `isSuspended`). */
export const suspendedError = () => Problem.apiError("ORGANIZATION_ACCESS_SUSPENDED", "Access for this organization is suspended.")

/**
 * True for a caller whose organization is suspended: authentication admits it (rules 4 to 7 do not apply to it),
 * and the gate refuses it with `suspendedError` after counting it against its bucket, so that the refusal carries
 * the rate headers the spec's Limits promise once the key is accepted.
 */
export const isSuspended = (caller: Caller): boolean => caller.organization.status === "suspended"

/**
 * Rules 3 to 7, which need nothing but the key (or the host's grant) and its organization (rule 3 is the gate's, see
 * `isSuspended`). A host's grant has no allowlist: the host that vouched for the caller knows where it called from.
 */
const admitKey = (
  credentials: Credentials,
  key: Tenancy.ApiKey | HostGrant,
  organization: Tenancy.Organization,
  linked: ReadonlyArray<unknown> | undefined
): Caller | Problem.ApiError => {
  if (organization.status === "suspended") return { organization, key, environment: credentials.environment, linked }
  if (credentials.environment === "live" && organization.status !== "active") {
    return Problem.apiError("PRODUCTION_ACCESS_REQUIRED", "Production opens once the organization is approved and active.")
  }
  if (credentials.environment === "sandbox" && !organization.sandboxProvisioned) {
    return Problem.apiError("SANDBOX_NOT_PROVISIONED", "The organization's sandbox is not provisioned yet.")
  }
  if (isApiKey(key) && !ipAllowed(credentials.clientIp, key.ipAllowlist)) {
    return Problem.apiError("API_KEY_IP_NOT_ALLOWED", "The caller's address is not in this key's IP allowlist.")
  }
  if (key.access === "read_only" && !readMethods.has(credentials.method)) {
    return Problem.apiError("API_KEY_READ_ONLY", "A read-only key may use GET, HEAD and OPTIONS only.")
  }
  return { organization, key, environment: credentials.environment, linked }
}

const noRows: ReadonlyArray<unknown> = []
/** The rows read with a key after its organization: most requests read none, and share one empty list. */
const restOf = (linked: ReadonlyArray<unknown>): ReadonlyArray<unknown> => (linked.length <= 1 ? noRows : linked.slice(1))

/**
 * Authentication over given services: the caller goes straight on to `then`. It runs on every request, so it is
 * written as a short chain of effects (one store read, and a bucket only when refusing) rather than a generator; each
 * step of a request's chain costs (docs/performance.md). The key and its organization are read together
 * (`Store.getLinked`), with the rows `linked` names for the environment (the sandbox's clock, which the request
 * reads next): one statement on SQL, where they were one each.
 */
export const makeAuthenticate = (
  store: Store.StoreService,
  limiter: RateLimit.RateLimiterService,
  linked: (environment: Environment) => ReadonlyArray<Store.Link> = () => []
) => {
  const links = { sandbox: [organizationLink, ...linked("sandbox")], live: [organizationLink, ...linked("live")] } as const satisfies Record<Environment, ReadonlyArray<Store.Link>>
  // Per-address buckets: the scope names the kind, the bucket the address.
  const refuse = (kind: string, clientIp: string, spec: RateLimit.BucketSpec, what: string, error: Problem.ApiError) =>
    Effect.suspend(() =>
      RateLimit.decide(limiter.take(kind, clientIp, spec), (decision) => Effect.fail(decision.allowed ? error : limited(what, decision.retryAfterSeconds)))
    )
  const invalid = (credentials: Credentials, detail = `The API key is not an active key of the ${credentials.environment} environment.`) =>
    refuse("ip-invalid", credentials.clientIp, RateLimit.Buckets.invalidKeyPerIp, "requests with an invalid API key", Problem.apiError("API_KEY_INVALID", detail))
  const admitOrRefuse = <A, E, R>(
    credentials: Credentials,
    key: Tenancy.ApiKey | HostGrant,
    organization: Tenancy.Organization,
    linked: ReadonlyArray<unknown> | undefined,
    then: (caller: Caller) => Effect.Effect<A, E, R>
  ): Effect.Effect<A, Problem.ApiError | E, R> => {
    const admitted = admitKey(credentials, key, organization, linked)
    return admitted instanceof Problem.ApiError ? Effect.fail(admitted) : then(admitted)
  }
  // A host's caller is refused where a key would be: an organization or user it does not name, or another
  // environment, is 401 API_KEY_INVALID (in the per-address bucket for invalid keys), each told in its own words.
  const hostInvalid = (credentials: Credentials, detail: string) =>
    refuse("ip-invalid", credentials.clientIp, RateLimit.Buckets.invalidKeyPerIp, "requests naming an invalid caller", Problem.apiError("API_KEY_INVALID", detail, { resolution: hostResolution }))
  const authenticateHost = <A, E, R>(credentials: Credentials, host: HostCaller, then: (caller: Caller) => Effect.Effect<A, E, R>): Effect.Effect<A, Problem.ApiError | E, R> => {
    const { environment } = credentials
    if (host.environment !== environment) {
      return hostInvalid(credentials, `The host's caller is one of the ${host.environment} environment; the ${environment} environment takes callers of its own.`)
    }
    const grant = (userId: UserId | undefined): HostGrant => ({ kind: "host", access: host.access, userId })
    if (host.userId === undefined) {
      return Effect.flatMap(store.get(Tenancy.Organizations, host.organizationId), (organization) =>
        organization === undefined
          ? hostInvalid(credentials, "The host's caller names no organization of this engine.")
          : admitOrRefuse(credentials, grant(undefined), organization, undefined, then))
    }
    // The user is read with its organization, and with the rows the request reads next, as a key is.
    return Effect.flatMap(store.getLinked(Tenancy.Users, host.userId, links[environment]), ({ row: user, linked: [organization, ...rest] }) => {
      if (user === undefined || user.removedAt !== undefined || user.organizationId !== host.organizationId || organization === undefined) {
        return hostInvalid(credentials, "The host's caller names no user of its organization (a removed user is refused, as its keys are).")
      }
      return admitOrRefuse(credentials, grant(user.id), organization as Tenancy.Organization, rest, then)
    })
  }
  return <A, E, R>(credentials: Credentials, then: (caller: Caller) => Effect.Effect<A, E, R>): Effect.Effect<A, Problem.ApiError | E, R> => {
    if (credentials.host !== undefined) return authenticateHost(credentials, credentials.host, then)
    const { apiKey, environment } = credentials
    if (apiKey === undefined || apiKey === "") {
      return refuse("ip-unauth", credentials.clientIp, RateLimit.Buckets.unauthenticatedPerIp, "unauthenticated requests", Problem.apiError("API_KEY_MISSING", "The x-api-key header is missing."))
    }
    const hash = keyHash(apiKey)
    // A well-formed key of the other environment is told so: that is what its text says, not what the store holds.
    if (hash !== undefined && apiKey.startsWith(keyPrefixes[otherEnvironment[environment]])) return invalid(credentials, wrongEnvironment[environment])
    if (hash === undefined || !apiKey.startsWith(keyPrefixes[environment])) return invalid(credentials)
    const found = ({ row: key, linked }: { readonly row: Tenancy.ApiKey | undefined; readonly linked: ReadonlyArray<unknown> }): Effect.Effect<A, Problem.ApiError | E, R> => {
      if (key === undefined || key.revokedAt !== undefined || key.environment !== environment) return invalid(credentials)
      const organization = linked[0]
      if (organization === undefined) return invalid(credentials)
      return admitOrRefuse(credentials, key, organization as Tenancy.Organization, restOf(linked), then)
    }
    // A store that reads at once (memory) is read in one step; another, through its effect.
    const now = store.getLinkedNow
    return now === undefined
      ? Effect.flatMap(store.getLinked(Tenancy.ApiKeys, hash, links[environment]), found)
      : Effect.suspend(() => found(now(Tenancy.ApiKeys, hash, links[environment])))
  }
}

/** The names of an organization's buckets, one per environment and kind: the same strings on every request. */
const bucketNames = {
  sandbox: { general: "sandbox/general", order_execute: "sandbox/order_execute", documents: "sandbox/documents", application_submit: "sandbox/application_submit" },
  live: { general: "live/general", order_execute: "live/order_execute", documents: "live/documents", application_submit: "live/application_submit" }
} as const satisfies Record<Environment, Record<DedicatedBucket | "general", string>>

/**
 * Which bucket a request of `caller` counts against: the dedicated one when named, else the general one. Buckets
 * are per organization and environment.
 */
export const rateLimitFor = (caller: Caller, dedicated: DedicatedBucket | undefined) => {
  const scope = caller.organization.id
  if (dedicated !== undefined) return { scope, name: bucketNames[caller.environment][dedicated], spec: RateLimit.Buckets.dedicated }
  const override = caller.organization.rateLimit
  const spec = override !== undefined
    ? { perSecond: override.sustainedPerSecond, burst: override.burst }
    : caller.environment === "live"
    ? RateLimit.Buckets.generalLive
    : RateLimit.Buckets.generalSandbox
  return { scope, name: bucketNames[caller.environment].general, spec }
}
