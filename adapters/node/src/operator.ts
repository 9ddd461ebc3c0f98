/**
 * `fos orgs|users|keys|snapshots ...`: the operator commands. They call a running server's operator surface
 * (`/operator/...`) with its operator token, so they act on the store that server serves.
 *
 * The server is `--server URL` or FOS_SERVER (default http://127.0.0.1:4000); the token is `--token T` or
 * FOS_OPERATOR_TOKEN (connection.ts). A refusal prints the problem's type and detail and exits 1; bad usage exits 2.
 */
import { readFileSync } from "node:fs"
import { unknownFlag, UsageError } from "@fos/serve/cli"
import { cannotReach, connectionHelp, flagName, serverOf, tokenOf } from "./connection.ts"

interface Parsed {
  readonly positional: ReadonlyArray<string>
  readonly flags: ReadonlyMap<string, ReadonlyArray<string>>
}

/** `known` flags take a value; `switches` take none (`--housekeeping`), and read as "true". */
const parse = (command: string, args: ReadonlyArray<string>, known: ReadonlyArray<string>, switches: ReadonlyArray<string> = []): Parsed => {
  const positional: Array<string> = []
  const flags = new Map<string, Array<string>>()
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (!arg.startsWith("--")) {
      positional.push(arg)
      continue
    }
    const eq = arg.indexOf("=")
    const name = flagName(eq < 0 ? arg.slice(2) : arg.slice(2, eq))
    if (switches.includes(name)) {
      if (eq >= 0) throw new UsageError(`--${name} takes no value`)
      flags.set(name, ["true"])
      continue
    }
    if (!known.includes(name)) throw unknownFlag(name, [...known, ...switches], `fos ${command}`)
    let value: string
    if (eq >= 0) value = arg.slice(eq + 1)
    else {
      const next = args[i + 1]
      if (next === undefined || next.startsWith("--")) throw new UsageError(`--${name} needs a value`)
      value = next
      i++
    }
    flags.set(name, [...(flags.get(name) ?? []), value])
  }
  return { positional, flags }
}

const one = (p: Parsed, name: string): string | undefined => p.flags.get(name)?.at(-1)
const required = (p: Parsed, name: string): string => {
  const v = one(p, name)
  if (v === undefined) throw new UsageError(`--${name} is required`)
  return v
}

export class OperatorRefused extends Error {}

const connection = ["server", "token"]

/**
 * What a command prints as it is, not as JSON: a snapshot's file (`fos snapshots export ID > world.json`), so the
 * file on disk is byte for byte what the server exported.
 */
export class RawOutput {
  readonly text: string
  constructor(text: string) {
    this.text = text
  }
}

/** Calls the operator surface; answers the body's text. A refusal throws `OperatorRefused` with its type and detail. */
const callText = async (p: Parsed, env: Record<string, string | undefined>, method: string, path: string, body?: string): Promise<string> => {
  const server = serverOf(one(p, "server"), env)
  const token = tokenOf(one(p, "token"), env)
  if (token === undefined) throw new UsageError("the operator token is needed: --token or FOS_OPERATOR_TOKEN (fos serve prints it at start)")
  let response: Response
  try {
    response = await fetch(server + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body })
    })
  } catch {
    throw new OperatorRefused(cannotReach(server))
  }
  const text = await response.text()
  if (!response.ok) {
    const json = JSON.parse(text) as Record<string, unknown>
    const errors = Array.isArray(json.errors) ? json.errors.map((e: { pointer: string; detail: string }) => `\n  ${e.pointer} ${e.detail}`).join("") : ""
    throw new OperatorRefused(`${String(json.type)}: ${String(json.detail)}${errors}`)
  }
  return text
}

const call = async (p: Parsed, env: Record<string, string | undefined>, method: string, path: string, body?: unknown): Promise<unknown> =>
  JSON.parse(await callText(p, env, method, path, body === undefined ? undefined : JSON.stringify(body)))

const usage = `operator commands (they call a running server: --server URL or FOS_SERVER, --token T or FOS_OPERATOR_TOKEN):
  fos orgs list
  fos orgs create --name NAME [--id org_...] [--status onboarding|active|suspended]
  fos orgs activate|suspend|provision-sandbox|restrict|unrestrict ORG_ID
  fos orgs set --features a,b | --key-creation on|off | --rate-limit PER_SECOND:BURST | --rate-limit default  ORG_ID
  fos users list --org ORG_ID               (removed users too, with their removedAt)
  fos users create --org ORG_ID --email EMAIL --role admin|developer [--id usr_...]
  fos users remove USER_ID                  (revokes every key the user created)
  fos keys create --org ORG_ID --user USER_ID --env sandbox|live [--access read_only|read_write] [--ip CIDR]...
  fos keys list --org ORG_ID
  fos keys revoke KEY_OR_HASH
  fos reset ORG_ID                          (empties the organization's sandbox; keeps it, its users and keys)
  fos faults list ORG_ID                    (its sandbox's scripted faults; docs/faults.md)
  fos faults arm ORG_ID --fault JSON        (a request fault: {"match": {...}, "effect": {...}, "count": N})
  fos faults arm ORG_ID --endpoint wep_... --fault JSON   (a receiver fault: {"effect": {...}, "count": N})
  fos faults delete ORG_ID [FAULT_ID]       (one fault, or all of them)
  fos outcomes list ORG_ID [--limit N] [--cursor C]   (its sandbox's scripted outcome rules; docs/outcomes.md)
  fos outcomes add ORG_ID --rule JSON       (a rule: {"match": {...}, "outcome": {...}, "count": N})
  fos outcomes delete ORG_ID [RULE_ID]      (one rule, or all of them)
  fos timers ORG_ID [--housekeeping] [--limit N] [--cursor C]   (the sandbox's pending timers, soonest first, with
                                            what each will do; --housekeeping: idempotency retention's too)
  fos events ORG_ID [--resource ID] [--type T] [--limit N] [--cursor C]   (the sandbox's emitted events, oldest first)
  fos journal ORG_ID WALLET_OR_VIRTUAL_ACCOUNT_ID [--asset A] [--chain C] [--limit N] [--cursor C]
  fos audit ORG_ID                          (checks the sandbox ledger's invariants; lists every violation)
  fos timeline ORG_ID RESOURCE_ID           (a sandbox resource's state changes, events, transfers and timers, and what it waits for)
  fos snapshots list --org ORG_ID
  fos snapshots create --org ORG_ID         (saves the organization's whole sandbox; prints the snapshot)
  fos snapshots restore SNAPSHOT_ID         (puts the sandbox back as the snapshot saved it)
  fos snapshots delete SNAPSHOT_ID
  fos snapshots export SNAPSHOT_ID > world.json   (the snapshot as a file, to commit; docs/snapshots.md)
  fos snapshots import --org ORG_ID world.json    (a file as a new snapshot of the organization's sandbox; prints it)`

export const operatorUsage = usage

/** What `fos <operator command> --help` prints: every operator command with its flags, and the connection's. */
export const operatorHelp = `${usage}

${connectionHelp}`

/** Runs one operator command; returns what to print. */
export const runOperator = async (
  group: string,
  args: ReadonlyArray<string>,
  env: Record<string, string | undefined>
): Promise<unknown> => {
  if (group === "reset") {
    const p = parse(group, args, connection)
    const id = p.positional[0]
    if (id === undefined || p.positional.length > 1) throw new UsageError("fos reset needs one organization id")
    return call(p, env, "POST", `/operator/organizations/${encodeURIComponent(id)}/reset`)
  }
  if (group === "timeline") {
    const p = parse(group, args, connection)
    const [id, resourceId] = p.positional
    if (id === undefined || resourceId === undefined || p.positional.length !== 2) throw new UsageError("fos timeline needs an organization id and a resource id")
    return call(p, env, "GET", `/operator/organizations/${encodeURIComponent(id)}/timeline/${encodeURIComponent(resourceId)}`)
  }
  if (group === "timers" || group === "events" || group === "journal" || group === "audit") {
    const p = parse(group, args, [...connection, "limit", "cursor", ...(group === "events" ? ["resource", "type"] : group === "journal" ? ["asset", "chain"] : [])], group === "timers" ? ["housekeeping"] : [])
    const id = p.positional[0]
    const holder = group === "journal" ? p.positional[1] : undefined
    const arity = group === "journal" ? 2 : 1
    if (id === undefined || p.positional.length !== arity) {
      throw new UsageError(`fos ${group} needs ${group === "journal" ? "an organization id and a wallet or virtual account id" : "one organization id"}`)
    }
    const query = new URLSearchParams()
    for (const [flag, name] of [["limit", "limit"], ["cursor", "cursor"], ["resource", "resourceId"], ["type", "type"], ["asset", "asset"], ["chain", "chain"], ["housekeeping", "housekeeping"]] as const) {
      const value = one(p, flag)
      if (value !== undefined) query.set(name, value)
    }
    const path = group === "audit"
      ? "ledger/audit"
      : group === "journal"
      ? `ledger/accounts/${encodeURIComponent(holder!)}/journal`
      : group
    const search = query.size === 0 ? "" : `?${query}`
    return call(p, env, "GET", `/operator/organizations/${encodeURIComponent(id)}/${path}${search}`)
  }
  const [action, ...rest] = args
  const known = (...names: Array<string>) => parse(group, rest, [...connection, ...names])
  switch (`${group} ${action}`) {
    case "orgs list":
      return call(known(), env, "GET", "/operator/organizations")
    case "orgs create": {
      const p = known("name", "id", "status")
      return call(p, env, "POST", "/operator/organizations", {
        name: required(p, "name"),
        ...(one(p, "id") === undefined ? {} : { id: one(p, "id") }),
        ...(one(p, "status") === undefined ? {} : { status: one(p, "status") })
      })
    }
    case "orgs restrict":
    case "orgs unrestrict": {
      const id = known().positional[0]
      if (id === undefined) throw new UsageError(`fos orgs ${action} needs an organization id`)
      return call(known(), env, "POST", `/operator/organizations/${encodeURIComponent(id)}/${action}`)
    }
    case "orgs activate":
    case "orgs suspend":
    case "orgs provision-sandbox": {
      const p = known()
      const id = p.positional[0]
      if (id === undefined) throw new UsageError(`fos orgs ${action} needs an organization id`)
      const change = action === "activate" ? { status: "active" } : action === "suspend" ? { status: "suspended" } : { sandboxProvisioned: true }
      return call(p, env, "PATCH", `/operator/organizations/${encodeURIComponent(id)}`, change)
    }
    case "orgs set": {
      const p = known("features", "key-creation", "rate-limit")
      const id = p.positional[0]
      if (id === undefined) throw new UsageError("fos orgs set needs an organization id")
      const change: Record<string, unknown> = {}
      const features = one(p, "features")
      if (features !== undefined) change.features = features === "" ? [] : features.split(",").map((f) => f.trim())
      const keyCreation = one(p, "key-creation")
      if (keyCreation !== undefined) {
        if (keyCreation !== "on" && keyCreation !== "off") throw new UsageError("--key-creation is on or off")
        change.apiKeyCreationEnabled = keyCreation === "on"
      }
      const rate = one(p, "rate-limit")
      if (rate !== undefined) {
        if (rate === "default") change.rateLimit = null
        else {
          const m = /^(\d+(?:\.\d+)?):(\d+)$/.exec(rate)
          if (m === null) throw new UsageError("--rate-limit is PER_SECOND:BURST (for example 500:1000) or default")
          change.rateLimit = { sustainedPerSecond: Number(m[1]), burst: Number(m[2]) }
        }
      }
      if (Object.keys(change).length === 0) throw new UsageError("fos orgs set needs --features, --key-creation or --rate-limit")
      return call(p, env, "PATCH", `/operator/organizations/${encodeURIComponent(id)}`, change)
    }
    case "users create": {
      const p = known("org", "email", "role", "id")
      return call(p, env, "POST", "/operator/users", {
        organizationId: required(p, "org"),
        email: required(p, "email"),
        role: required(p, "role"),
        ...(one(p, "id") === undefined ? {} : { id: one(p, "id") })
      })
    }
    case "users list": {
      const p = known("org")
      return call(p, env, "GET", `/operator/organizations/${encodeURIComponent(required(p, "org"))}/users`)
    }
    case "users remove": {
      const p = known()
      const id = p.positional[0]
      if (id === undefined) throw new UsageError("fos users remove needs a user id")
      return call(p, env, "DELETE", `/operator/users/${encodeURIComponent(id)}`)
    }
    case "keys create": {
      const p = known("org", "user", "env", "access", "ip")
      return call(p, env, "POST", "/operator/api-keys", {
        organizationId: required(p, "org"),
        createdBy: required(p, "user"),
        environment: required(p, "env"),
        ...(one(p, "access") === undefined ? {} : { access: one(p, "access") }),
        ipAllowlist: p.flags.get("ip") ?? []
      })
    }
    case "keys list": {
      const p = known("org")
      return call(p, env, "GET", `/operator/organizations/${encodeURIComponent(required(p, "org"))}/api-keys`)
    }
    case "snapshots list":
    case "snapshots create": {
      const p = known("org")
      return call(p, env, action === "list" ? "GET" : "POST", `/operator/organizations/${encodeURIComponent(required(p, "org"))}/snapshots`)
    }
    case "snapshots export": {
      const p = known()
      const id = p.positional[0]
      if (id === undefined || p.positional.length > 1) throw new UsageError("fos snapshots export needs one snapshot id")
      return new RawOutput(await callText(p, env, "GET", `/operator/snapshots/${encodeURIComponent(id)}/export`))
    }
    case "snapshots import": {
      const p = known("org")
      const path = p.positional[0]
      if (path === undefined || p.positional.length > 1) throw new UsageError("fos snapshots import needs one file (a snapshot's export)")
      let text: string
      try {
        text = readFileSync(path, "utf8")
      } catch (e) {
        throw new UsageError(`${path}: cannot read the file (${(e as NodeJS.ErrnoException).code ?? "error"})`)
      }
      // Sent as it is on disk: the server reads it as it reads the sandbox's import (MALFORMED_JSON for text that is no JSON).
      return JSON.parse(await callText(p, env, "POST", `/operator/organizations/${encodeURIComponent(required(p, "org"))}/snapshots/import`, text))
    }
    case "snapshots restore":
    case "snapshots delete": {
      const p = known()
      const id = p.positional[0]
      if (id === undefined || p.positional.length > 1) throw new UsageError(`fos snapshots ${action} needs one snapshot id`)
      const path = `/operator/snapshots/${encodeURIComponent(id)}`
      return action === "restore" ? call(p, env, "POST", `${path}/restore`) : call(p, env, "DELETE", path)
    }
    case "keys revoke": {
      const p = known()
      const key = p.positional[0]
      if (key === undefined) throw new UsageError("fos keys revoke needs the key (or its SHA-256 hash)")
      return call(p, env, "POST", "/operator/api-keys/revoke", { key })
    }
    case "faults list":
    case "faults arm":
    case "faults delete": {
      const p = known("fault", "endpoint")
      const [org, faultId, ...extra] = p.positional
      if (org === undefined || extra.length > 0 || (faultId !== undefined && action !== "delete")) {
        throw new UsageError(`fos faults ${action} needs one organization id${action === "delete" ? " (and optionally a fault id)" : ""}`)
      }
      const base = `/operator/organizations/${encodeURIComponent(org)}`
      if (action === "list") return call(p, env, "GET", `${base}/faults`)
      if (action === "delete") return call(p, env, "DELETE", faultId === undefined ? `${base}/faults` : `${base}/faults/${encodeURIComponent(faultId)}`)
      let fault: unknown
      try {
        fault = JSON.parse(required(p, "fault"))
      } catch (e) {
        if (e instanceof UsageError) throw e
        throw new UsageError("--fault is the fault as JSON (docs/faults.md)")
      }
      const endpoint = one(p, "endpoint")
      return call(p, env, "POST", endpoint === undefined ? `${base}/faults` : `${base}/webhooks/endpoints/${encodeURIComponent(endpoint)}/faults`, fault)
    }
    case "outcomes list":
    case "outcomes add":
    case "outcomes delete": {
      const p = known("rule", "limit", "cursor")
      const [org, ruleId, ...extra] = p.positional
      if (org === undefined || extra.length > 0 || (ruleId !== undefined && action !== "delete")) {
        throw new UsageError(`fos outcomes ${action} needs one organization id${action === "delete" ? " (and optionally a rule id)" : ""}`)
      }
      const base = `/operator/organizations/${encodeURIComponent(org)}/outcomes`
      if (action === "list") {
        const query = new URLSearchParams()
        for (const flag of ["limit", "cursor"] as const) {
          const value = one(p, flag)
          if (value !== undefined) query.set(flag, value)
        }
        return call(p, env, "GET", query.size === 0 ? base : `${base}?${query}`)
      }
      if (action === "delete") return call(p, env, "DELETE", ruleId === undefined ? base : `${base}/${encodeURIComponent(ruleId)}`)
      let rule: unknown
      try {
        rule = JSON.parse(required(p, "rule"))
      } catch (e) {
        if (e instanceof UsageError) throw e
        throw new UsageError("--rule is the outcome rule as JSON (docs/outcomes.md)")
      }
      return call(p, env, "POST", base, rule)
    }
    default:
      throw new UsageError(`unknown command ${JSON.stringify(action === undefined ? group : `${group} ${action}`)}\n${usage}`)
  }
}
