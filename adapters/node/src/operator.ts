/**
 * `fos orgs|users|keys|snapshots|reset|...`: the operator commands. They call a running server's operator surface
 * (`/operator/...`) with its operator token, so they act on the store that server serves.
 *
 * The server is `--server URL` or FOS_SERVER (default http://127.0.0.1:4000); the token is `--token T` or
 * FOS_OPERATOR_TOKEN (connection.ts). A refusal prints the problem's type and detail and exits 1; bad usage exits 2.
 *
 * Each command is one entry of `commands`: its actions' usage, what its flags mean and its examples. The usage is
 * what the parser reads the flags from (`--name VALUE` takes a value, a bare `--name` is a switch), so the help
 * and the parser cannot disagree on a flag. An organization is `--org ORG_ID` in every command; the older bare id
 * (`fos reset org_acme`) still works, with a note that names `--org`.
 */
import { readFileSync } from "node:fs"
import { isOrganizationId, quoted, unknownFlag, UsageError } from "@fos/serve/cli"
import { cannotReach, flagName, operatorConnectionHelp, serverOf, tokenOf } from "./connection.ts"

/** One action of a command (`fos users create`), or a command that has none (`fos reset`). */
interface Action {
  /** What follows `fos <command>`: the action, its arguments, and its flags, optional ones in brackets. */
  readonly usage: string
  /** What it does, in a line. */
  readonly does: string
}

interface Command {
  /** What the command is for, in a sentence. */
  readonly summary: string
  /** By action name; one action named "" for a command that takes none. */
  readonly actions: Readonly<Record<string, Action>>
  /** What each flag of its actions means, by name (the connection's are listed apart). */
  readonly flags: Readonly<Record<string, string>>
  /** Lines that run as written against a server with the organization org_acme (docs/operating.md's). */
  readonly examples: ReadonlyArray<string>
}

const org = "the organization (fos orgs list shows every one)"
const paging = { limit: "at most N entries in a page (1 to 100)", cursor: "the page after the one whose nextCursor this is" }

const commands: Readonly<Record<string, Command>> = {
  orgs: {
    summary: "Organizations: create them, open or close their live environment, set their features and rate limits.",
    actions: {
      list: { usage: "list", does: "every organization" },
      create: { usage: "create --name NAME [--id org_...] [--status onboarding|active|suspended]", does: "a new organization (onboarding unless --status)" },
      activate: { usage: "activate --org ORG_ID", does: "makes it active: opens /live" },
      suspend: { usage: "suspend --org ORG_ID", does: "refuses every key of it until activated again" },
      "provision-sandbox": { usage: "provision-sandbox --org ORG_ID", does: "marks its sandbox provisioned" },
      restrict: { usage: "restrict --org ORG_ID", does: "reads and webhooks go on; new business is 403 ORGANIZATION_ACCESS_SUSPENDED" },
      unrestrict: { usage: "unrestrict --org ORG_ID", does: "lifts the restriction" },
      set: { usage: "set --org ORG_ID [--features a,b] [--key-creation on|off] [--rate-limit PER_SECOND:BURST|default]", does: "changes its settings (at least one flag)" }
    },
    flags: {
      name: "the organization's name",
      id: "the id to give it (default: one is made)",
      status: "the status it starts in",
      org,
      features: "its feature flags, comma-separated (empty for none)",
      "key-creation": "whether its admins may create API keys",
      "rate-limit": "its own request rate (such as 500:1000), or default for the server's"
    },
    examples: ["fos orgs create --name Acme --id org_acme", "fos orgs activate --org org_acme", "fos orgs set --org org_acme --rate-limit 500:1000"]
  },
  users: {
    summary: "An organization's users, who create its API keys.",
    actions: {
      list: { usage: "list --org ORG_ID", does: "its users, removed ones too (with their removedAt)" },
      create: { usage: "create --org ORG_ID --email EMAIL --role admin|developer [--id usr_...]", does: "a new user" },
      remove: { usage: "remove USER_ID", does: "removes the user and revokes every key it created; the last admin stays" }
    },
    flags: { org, email: "the user's email address", role: "admin (may create read_write keys) or developer", id: "the id to give it (default: one is made)" },
    examples: ["fos users create --org org_acme --email ada@acme.test --role admin --id usr_ada", "fos users list --org org_acme"]
  },
  keys: {
    summary: "An organization's API keys, shown once when created.",
    actions: {
      create: { usage: "create --org ORG_ID --user USER_ID --env sandbox|live [--access read_only|read_write] [--ip CIDR]...", does: "a new key, printed once" },
      list: { usage: "list --org ORG_ID", does: "its keys, without their secrets" },
      revoke: { usage: "revoke KEY_OR_HASH", does: "revokes a key, given as printed or as its SHA-256 hash" }
    },
    flags: {
      org,
      user: "the user who creates it (read_write needs an admin)",
      env: "the environment it opens",
      access: "what it may do (default: read_only)",
      ip: "an address range it may be used from; repeatable (default: any)"
    },
    examples: ["fos keys create --org org_acme --user usr_ada --env sandbox --access read_write", "fos keys list --org org_acme"]
  },
  snapshots: {
    summary: "Saved copies of an organization's whole sandbox, to put it back or to share as a file (docs/snapshots.md).",
    actions: {
      list: { usage: "list --org ORG_ID", does: "its snapshots, newest first" },
      create: { usage: "create --org ORG_ID", does: "saves its sandbox; prints the snapshot" },
      restore: { usage: "restore SNAPSHOT_ID", does: "puts the sandbox back as the snapshot saved it" },
      delete: { usage: "delete SNAPSHOT_ID", does: "deletes the snapshot" },
      export: { usage: "export SNAPSHOT_ID > FILE", does: "prints the snapshot as a file, byte for byte what the server exported" },
      import: { usage: "import --org ORG_ID FILE", does: "a file export printed, as a new snapshot of the organization's sandbox" }
    },
    flags: { org },
    examples: ["fos snapshots create --org org_acme", "fos snapshots export snp_… > world.json", "fos snapshots import --org org_acme world.json"]
  },
  reset: {
    summary: "Empties an organization's sandbox; keeps the organization, its users and keys.",
    actions: { "": { usage: "--org ORG_ID", does: "empties the sandbox" } },
    flags: { org },
    examples: ["fos reset --org org_acme"]
  },
  faults: {
    summary: "An organization's scripted sandbox faults: a request's or a receiver's failure on cue (docs/faults.md).",
    actions: {
      list: { usage: "list --org ORG_ID", does: "its faults, with how often each applied" },
      arm: { usage: "arm --org ORG_ID --fault JSON [--endpoint wep_...]", does: "a request fault, or with --endpoint a receiver fault" },
      delete: { usage: "delete --org ORG_ID [FAULT_ID]", does: "one fault, or all of them" }
    },
    flags: {
      org,
      fault: "the fault: {\"match\": {...}, \"effect\": {...}, \"count\": N}, or for a receiver {\"effect\": {...}, \"count\": N}",
      endpoint: "the webhook endpoint whose receiver fails"
    },
    examples: [
      "fos faults arm --org org_acme --fault '{\"match\":{\"operationId\":\"customers.list\"},\"effect\":{\"type\":\"problem\",\"code\":\"POLICY_EVALUATION_UNAVAILABLE\"},\"count\":1}'",
      "fos faults list --org org_acme"
    ]
  },
  outcomes: {
    summary: "An organization's scripted sandbox outcome rules: how its next transactions end (docs/outcomes.md).",
    actions: {
      list: { usage: "list --org ORG_ID [--limit N] [--cursor C]", does: "its rules, in the order they apply" },
      add: { usage: "add --org ORG_ID --rule JSON", does: "a rule" },
      delete: { usage: "delete --org ORG_ID [RULE_ID]", does: "one rule, or all of them" }
    },
    flags: { org, rule: "the rule: {\"match\": {...}, \"outcome\": {...}, \"count\": N}", ...paging },
    examples: [
      "fos outcomes add --org org_acme --rule '{\"match\":{\"rail\":\"ach\"},\"outcome\":{\"type\":\"fail\",\"failureCode\":\"insufficient_funds_at_settle\"},\"count\":1}'",
      "fos outcomes list --org org_acme"
    ]
  },
  timers: {
    summary: "An organization's sandbox's pending timers, soonest first, each with what it will do (docs/inspect.md).",
    actions: { "": { usage: "--org ORG_ID [--housekeeping] [--limit N] [--cursor C]", does: "lists them" } },
    flags: { org, housekeeping: "idempotency retention's timers too", ...paging },
    examples: ["fos timers --org org_acme --limit 10"]
  },
  events: {
    summary: "The events an organization's sandbox emitted, oldest first (docs/inspect.md).",
    actions: { "": { usage: "--org ORG_ID [--resource ID] [--type T] [--limit N] [--cursor C]", does: "lists them" } },
    flags: { org, resource: "only those about this resource", type: "only those of this event type", ...paging },
    examples: ["fos events --org org_acme --type customer.created"]
  },
  journal: {
    summary: "The ledger postings of one wallet or virtual account of an organization's sandbox (docs/inspect.md).",
    actions: { "": { usage: "--org ORG_ID WALLET_OR_VIRTUAL_ACCOUNT_ID [--asset A] [--chain C] [--limit N] [--cursor C]", does: "lists them" } },
    flags: { org, asset: "only this asset's postings", chain: "only this chain's", ...paging },
    examples: ["fos journal --org org_acme vac_… --asset USD"]
  },
  audit: {
    summary: "Checks the invariants of an organization's sandbox ledger, and lists every violation (docs/inspect.md).",
    actions: { "": { usage: "--org ORG_ID", does: "runs the check" } },
    flags: { org },
    examples: ["fos audit --org org_acme"]
  },
  timeline: {
    summary: "A sandbox resource's state changes, events, transfers and timers, and what it waits for (docs/inspect.md).",
    actions: { "": { usage: "--org ORG_ID RESOURCE_ID", does: "prints its timeline" } },
    flags: { org },
    examples: ["fos timeline --org org_acme txn_…"]
  }
}

/** The operator commands, as `fos` dispatches them. */
export const operatorCommands: ReadonlySet<string> = new Set(Object.keys(commands))

/** The flags an action's usage names: `--name VALUE` takes a value, a bare `--name` (a switch) none. */
const flagsOf = (usage: string): { readonly values: ReadonlyArray<string>; readonly switches: ReadonlyArray<string> } => {
  const values: Array<string> = []
  const switches: Array<string> = []
  for (const m of usage.matchAll(/--([a-z][a-z-]*)( [^\s[\]-])?/g)) (m[2] === undefined ? switches : values).push(m[1]!)
  return { values, switches }
}

/** Every action's usage line, `fos <command> ...`: what `fos --help` lists. */
export const operatorUsage = Object.entries(commands)
  .flatMap(([name, command]) => Object.values(command.actions).map((action) => `  fos ${name} ${action.usage}`))
  .join("\n")

/** What `fos <command> --help` prints: its actions, its flags, the connection's, and examples. */
export const operatorHelp = (name: string): string => {
  const command = commands[name]!
  const actions = Object.entries(command.actions)
  const lines = actions.map(([, action], i) => `${i === 0 ? "usage:" : "      "} fos ${name} ${action.usage}`)
  const named = actions.filter(([action]) => action !== "")
  const width = Math.max(...named.map(([action]) => action.length))
  const flagWidth = Math.max(...Object.keys(command.flags).map((flag) => flag.length + placeholderOf(command, flag).length))
  return [
    ...lines,
    "",
    command.summary,
    ...(named.length === 0 ? [] : ["", ...named.map(([action, { does }]) => `  ${action.padEnd(width)}  ${does}`)]),
    "",
    "flags:",
    ...Object.entries(command.flags).map(([flag, meaning]) => `  --${`${flag}${placeholderOf(command, flag)}`.padEnd(flagWidth)}  ${meaning}`),
    "",
    operatorConnectionHelp,
    "",
    "examples:",
    ...command.examples.map((example) => `  ${example}`)
  ].join("\n")
}

/** How a flag's value is written in the command's usage (` ORG_ID`), or "" for a switch. */
const placeholderOf = (command: Command, flag: string): string => {
  for (const { usage } of Object.values(command.actions)) {
    const m = new RegExp(`--${flag}(?![a-z-])( [^\\s[\\]]+)?`).exec(usage)
    if (m !== null) return (m[1] ?? "").replace(/\]$/, "")
  }
  return ""
}

interface Parsed {
  readonly positional: ReadonlyArray<string>
  readonly flags: ReadonlyMap<string, ReadonlyArray<string>>
}

const connection = ["server", "token"]

/** Reads `args` by the flags `usage` names, and the connection's, for `command` (`fos keys`, whose --help lists them). */
const parse = (command: string, args: ReadonlyArray<string>, usage: string): Parsed => {
  const { values, switches } = flagsOf(usage)
  const known = [...values, ...connection]
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
      if (eq >= 0) throw new UsageError(`--${name} takes no value, not ${quoted(arg.slice(eq + 1))}`)
      flags.set(name, ["true"])
      continue
    }
    if (!known.includes(name)) throw unknownFlag(name, [...known, ...switches], command)
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

/** The arguments after the flags: exactly `names` (a trailing `?` marks one that may be left out), or a refusal. */
const positionals = (p: Parsed, label: string, names: ReadonlyArray<string>): ReadonlyArray<string | undefined> => {
  const least = names.filter((n) => !n.endsWith("?")).length
  const wanted = names.map((n) => (n.endsWith("?") ? `[${n.slice(0, -1)}]` : n)).join(" ")
  if (p.positional.length < least) throw new UsageError(`${label} needs ${wanted}`)
  if (p.positional.length > names.length) {
    const extra = quoted(p.positional.at(-1)!)
    throw new UsageError(names.length === 0 ? `${label} takes no argument but its flags, not ${extra}` : `${label} takes ${wanted} only, not also ${extra}`)
  }
  return names.map((_, i) => p.positional[i])
}

/**
 * The organization a command acts on, `--org ORG_ID`, and the arguments after the flags (`names`, as `positionals`
 * takes them). Without --org, a bare organization id first is the organization, the older spelling, with a note naming --org.
 */
const organization = (p: Parsed, label: string, names: ReadonlyArray<string>, note: (line: string) => void) => {
  const flag = one(p, "org")
  if (flag !== undefined) return { org: flag, rest: positionals(p, label, names) }
  const [first, ...rest] = p.positional
  // Only an organization's id is taken for one (`fos outcomes delete rul_…` is a rule's id with --org forgotten).
  if (first === undefined || !isOrganizationId(first)) throw new UsageError("--org is required")
  const after = positionals({ ...p, positional: rest }, label, names)
  note(`note: ${label} takes the organization as --org ORG_ID; the bare ${quoted(first)} still works`)
  return { org: first, rest: after }
}

export class OperatorRefused extends Error {}

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

/** What an operator command asks of the server, read from its arguments alone: nothing is sent or read yet. */
export interface OperatorRequest {
  readonly method: "GET" | "POST" | "PATCH" | "DELETE"
  readonly path: string
  /** A JSON body. */
  readonly body?: unknown
  /** A file whose text is the body, sent as it is on disk (fos snapshots import). */
  readonly bodyFile?: string
  /** The answer printed as the server wrote it (RawOutput), not as JSON. */
  readonly raw?: boolean
  /** The connection's flags, when given. */
  readonly server: string | undefined
  readonly token: string | undefined
}

const enc = encodeURIComponent

/**
 * Reads one operator command's arguments into the request it makes; bad usage throws UsageError. `note` takes a
 * line for standard error (the older spelling of an organization, still taken).
 */
export const operatorRequest = (name: string, args: ReadonlyArray<string>, note: (line: string) => void): OperatorRequest => {
  const command = commands[name]
  if (command === undefined) throw new UsageError(`unknown command ${quoted(name)}`)
  const single = command.actions[""] !== undefined
  const [action = "", rest] = single ? ["", args] : [args[0], args.slice(1)]
  const spec = command.actions[action]
  const label = single ? `fos ${name}` : `fos ${name} ${action}`
  if (spec === undefined) throw new UsageError(`unknown command ${quoted(action === "" ? name : `${name} ${action}`)}\n${operatorHelp(name)}`)
  const p = parse(`fos ${name}`, rest, spec.usage)
  const request = (method: OperatorRequest["method"], path: string, more: Partial<OperatorRequest> = {}): OperatorRequest =>
    ({ method, path, server: one(p, "server"), token: one(p, "token"), ...more })
  const orgOf = (names: ReadonlyArray<string> = []) => organization(p, label, names, note)
  const jsonFlag = (flag: string, what: string, doc: string): unknown => {
    const text = required(p, flag)
    try {
      return JSON.parse(text)
    } catch {
      throw new UsageError(`--${flag} is ${what} as JSON (${doc}), not ${quoted(text)}`)
    }
  }
  const page = (flags: ReadonlyArray<readonly [string, string]>) => {
    const query = new URLSearchParams()
    for (const [flag, param] of flags) {
      const value = one(p, flag)
      if (value !== undefined) query.set(param, value)
    }
    return query.size === 0 ? "" : `?${query}`
  }
  const paged = [["limit", "limit"], ["cursor", "cursor"]] as const
  switch (`${name} ${action}`.trim()) {
    case "reset": {
      const { org } = orgOf()
      return request("POST", `/operator/organizations/${enc(org)}/reset`)
    }
    case "timeline": {
      const { org, rest: [resource] } = orgOf(["RESOURCE_ID"])
      return request("GET", `/operator/organizations/${enc(org)}/timeline/${enc(resource!)}`)
    }
    case "timers":
    case "events":
    case "audit": {
      const { org } = orgOf()
      const query = page([...paged, ["resource", "resourceId"], ["type", "type"], ["housekeeping", "housekeeping"]])
      return request("GET", `/operator/organizations/${enc(org)}/${name === "audit" ? "ledger/audit" : name}${query}`)
    }
    case "journal": {
      const { org, rest: [holder] } = orgOf(["WALLET_OR_VIRTUAL_ACCOUNT_ID"])
      return request("GET", `/operator/organizations/${enc(org)}/ledger/accounts/${enc(holder!)}/journal${page([...paged, ["asset", "asset"], ["chain", "chain"]])}`)
    }
    case "orgs list":
      positionals(p, label, [])
      return request("GET", "/operator/organizations")
    case "orgs create":
      positionals(p, label, [])
      return request("POST", "/operator/organizations", {
        body: {
          name: required(p, "name"),
          ...(one(p, "id") === undefined ? {} : { id: one(p, "id") }),
          ...(one(p, "status") === undefined ? {} : { status: one(p, "status") })
        }
      })
    case "orgs restrict":
    case "orgs unrestrict":
      return request("POST", `/operator/organizations/${enc(orgOf().org)}/${action}`)
    case "orgs activate":
    case "orgs suspend":
    case "orgs provision-sandbox": {
      const change = action === "activate" ? { status: "active" } : action === "suspend" ? { status: "suspended" } : { sandboxProvisioned: true }
      return request("PATCH", `/operator/organizations/${enc(orgOf().org)}`, { body: change })
    }
    case "orgs set": {
      const { org } = orgOf()
      const change: Record<string, unknown> = {}
      const features = one(p, "features")
      if (features !== undefined) change.features = features === "" ? [] : features.split(",").map((f) => f.trim())
      const keyCreation = one(p, "key-creation")
      if (keyCreation !== undefined) {
        if (keyCreation !== "on" && keyCreation !== "off") throw new UsageError(`--key-creation is on or off, not ${quoted(keyCreation)}`)
        change.apiKeyCreationEnabled = keyCreation === "on"
      }
      const rate = one(p, "rate-limit")
      if (rate !== undefined) {
        if (rate === "default") change.rateLimit = null
        else {
          const m = /^(\d+(?:\.\d+)?):(\d+)$/.exec(rate)
          if (m === null) throw new UsageError(`--rate-limit is PER_SECOND:BURST (for example 500:1000) or default, not ${quoted(rate)}`)
          change.rateLimit = { sustainedPerSecond: Number(m[1]), burst: Number(m[2]) }
        }
      }
      if (Object.keys(change).length === 0) throw new UsageError("fos orgs set needs --features, --key-creation or --rate-limit")
      return request("PATCH", `/operator/organizations/${enc(org)}`, { body: change })
    }
    case "users create": {
      positionals(p, label, [])
      return request("POST", "/operator/users", {
        body: {
          organizationId: required(p, "org"),
          email: required(p, "email"),
          role: required(p, "role"),
          ...(one(p, "id") === undefined ? {} : { id: one(p, "id") })
        }
      })
    }
    case "users list":
      return request("GET", `/operator/organizations/${enc(orgOf().org)}/users`)
    case "users remove": {
      const [user] = positionals(p, label, ["USER_ID"])
      return request("DELETE", `/operator/users/${enc(user!)}`)
    }
    case "keys create": {
      positionals(p, label, [])
      return request("POST", "/operator/api-keys", {
        body: {
          organizationId: required(p, "org"),
          createdBy: required(p, "user"),
          environment: required(p, "env"),
          ...(one(p, "access") === undefined ? {} : { access: one(p, "access") }),
          ipAllowlist: p.flags.get("ip") ?? []
        }
      })
    }
    case "keys list":
      return request("GET", `/operator/organizations/${enc(orgOf().org)}/api-keys`)
    case "keys revoke": {
      const [key] = positionals(p, label, ["KEY_OR_HASH"])
      return request("POST", "/operator/api-keys/revoke", { body: { key } })
    }
    case "snapshots list":
    case "snapshots create":
      return request(action === "list" ? "GET" : "POST", `/operator/organizations/${enc(orgOf().org)}/snapshots`)
    case "snapshots export": {
      const [id] = positionals(p, label, ["SNAPSHOT_ID"])
      return request("GET", `/operator/snapshots/${enc(id!)}/export`, { raw: true })
    }
    case "snapshots import": {
      const { org, rest: [file] } = orgOf(["FILE"])
      // Sent as it is on disk: the server reads it as it reads the sandbox's import (MALFORMED_JSON for text that is no JSON).
      return request("POST", `/operator/organizations/${enc(org)}/snapshots/import`, { bodyFile: file! })
    }
    case "snapshots restore":
    case "snapshots delete": {
      const [id] = positionals(p, label, ["SNAPSHOT_ID"])
      const path = `/operator/snapshots/${enc(id!)}`
      return action === "restore" ? request("POST", `${path}/restore`) : request("DELETE", path)
    }
    case "faults list":
    case "faults arm":
    case "faults delete": {
      const { org, rest: [faultId] } = orgOf(action === "delete" ? ["FAULT_ID?"] : [])
      const base = `/operator/organizations/${enc(org)}`
      if (action === "list") return request("GET", `${base}/faults`)
      if (action === "delete") return request("DELETE", faultId === undefined ? `${base}/faults` : `${base}/faults/${enc(faultId)}`)
      const fault = jsonFlag("fault", "the fault", "docs/faults.md")
      const endpoint = one(p, "endpoint")
      return request("POST", endpoint === undefined ? `${base}/faults` : `${base}/webhooks/endpoints/${enc(endpoint)}/faults`, { body: fault })
    }
    case "outcomes list":
    case "outcomes add":
    case "outcomes delete": {
      const { org, rest: [ruleId] } = orgOf(action === "delete" ? ["RULE_ID?"] : [])
      const base = `/operator/organizations/${enc(org)}/outcomes`
      if (action === "list") return request("GET", `${base}${page(paged)}`)
      if (action === "delete") return request("DELETE", ruleId === undefined ? base : `${base}/${enc(ruleId)}`)
      return request("POST", base, { body: jsonFlag("rule", "the outcome rule", "docs/outcomes.md") })
    }
  }
  // Every action of `commands` has its case above.
  throw new Error(`fos ${name} ${action}: no request`)
}

/** Sends `request`; answers the body's text. A refusal throws `OperatorRefused` with its type and detail. */
const send = async (request: OperatorRequest, env: Record<string, string | undefined>): Promise<string> => {
  const server = serverOf(request.server, env)
  const token = tokenOf(request.token, env)
  if (token === undefined) throw new UsageError("the operator token is needed: --token or FOS_OPERATOR_TOKEN (fos serve prints it at start)")
  let body: string | undefined
  if (request.bodyFile !== undefined) {
    try {
      body = readFileSync(request.bodyFile, "utf8")
    } catch (e) {
      throw new UsageError(`cannot read the file ${quoted(request.bodyFile)} (${(e as NodeJS.ErrnoException).code ?? "error"})`)
    }
  } else if (request.body !== undefined) body = JSON.stringify(request.body)
  let response: Response
  try {
    response = await fetch(server + request.path, {
      method: request.method,
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

/** Runs one operator command; returns what to print. `note` takes a line for standard error. */
export const runOperator = async (
  name: string,
  args: ReadonlyArray<string>,
  env: Record<string, string | undefined>,
  note: (line: string) => void
): Promise<unknown> => {
  const request = operatorRequest(name, args, note)
  const text = await send(request, env)
  return request.raw === true ? new RawOutput(text) : JSON.parse(text)
}
