/**
 * `fos tail [--org ORG_ID] [--json] [--types events,requests]`: a running server's live stream of an organization's
 * sandbox (docs/inspect.md, "The live stream"), one line per event and per request as they happen.
 *
 * With a sandbox key (`--key K` or FOS_API_KEY) and no --org it reads `/sandbox/v2/simulate/stream`, the key's own
 * organization; with `--org ORG_ID` (or the older bare id) it reads the operator's
 * `/operator/organizations/{id}/stream` with the operator token (`--token T` or FOS_OPERATOR_TOKEN). The server is `--server URL` or FOS_SERVER (default http://127.0.0.1:4000).
 *
 * Lines are pretty (a time, `event` or the request's method, and what it is about), or with `--json` one JSON
 * object per line: `{"event":"event","id":"evt_…","data":{…}}` (the event as the event log shows it) or
 * `{"event":"request","data":{…}}` (the request log's entry). A dropped connection is reopened after two seconds,
 * resuming after the last event shown (Last-Event-ID); Ctrl-C (SIGINT) or SIGTERM ends it, exit 0.
 */
import { OperatorRefused } from "./operator.ts"
import { isOrganizationId, quoted, unknownFlag, UsageError } from "@fos/serve/cli"
import { cannotReach, connectionHelp, flagName, keyOf, serverOf, tokenOf } from "./connection.ts"

export const tailUsage = `  fos tail [--org ORG_ID] [--json] [--types events,requests] [--key K] [--token T] [--server URL]
                                            (the live stream of a sandbox's events and requests: with a sandbox key,
                                            --key or FOS_API_KEY, its own; with --org and the operator token, the
                                            operator's view of it)`

/** What `fos tail --help` prints: every flag, and examples. */
export const tailHelp = `usage: fos tail [--org ORG_ID] [flags]

Prints a running server's live stream of a sandbox's events and requests, one line each, until Ctrl-C.

flags:
  --types events,requests   which of the two to print (default: both)
  --json                    one JSON object per line instead of a pretty line
  --org ORG_ID              any organization's sandbox, with the operator token (default: the key's own)

${connectionHelp}

examples:
  fos tail --key ck_sandbox_… --types events
  fos tail --org org_acme --json`

export interface TailOptions {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly json: boolean
}

/** Reads `fos tail`'s arguments; `note` takes a line for standard error (the older bare organization id, still taken). */
export const parseTailArgs = (args: ReadonlyArray<string>, env: Record<string, string | undefined>, note: (line: string) => void): TailOptions => {
  const positional: Array<string> = []
  const flags = new Map<string, string>()
  let json = false
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--json") {
      json = true
      continue
    }
    if (!arg.startsWith("--")) {
      positional.push(arg)
      continue
    }
    const eq = arg.indexOf("=")
    const name = flagName(eq < 0 ? arg.slice(2) : arg.slice(2, eq))
    if (!["types", "org", "key", "server", "token"].includes(name)) throw unknownFlag(name, ["types", "json", "org", "key", "server", "token"], "fos tail")
    const value = eq >= 0 ? arg.slice(eq + 1) : args[++i]
    if (value === undefined || (eq < 0 && value.startsWith("--"))) throw new UsageError(`--${name} needs a value`)
    flags.set(name, value)
  }
  if (positional.length > (flags.has("org") || !isOrganizationId(positional[0] ?? "") ? 0 : 1)) throw new UsageError(`fos tail takes no argument but its flags, not ${quoted(positional.at(-1)!)}`)
  const types = flags.get("types")
  if (types !== undefined && !types.split(",").every((t) => t === "events" || t === "requests")) {
    throw new UsageError(`--types is a comma-separated list of events and requests, not ${quoted(types)}`)
  }
  const server = serverOf(flags.get("server"), env)
  const query = types === undefined ? "" : `?topics=${encodeURIComponent(types)}`
  const organizationId = flags.get("org") ?? positional[0]
  if (organizationId !== undefined) {
    if (!flags.has("org")) note(`note: fos tail takes the organization as --org ORG_ID; the bare ${quoted(organizationId)} still works`)
    const token = tokenOf(flags.get("token"), env)
    if (token === undefined) throw new UsageError("fos tail --org needs the operator token: --token or FOS_OPERATOR_TOKEN")
    return { url: `${server}/operator/organizations/${encodeURIComponent(organizationId)}/stream${query}`, headers: { authorization: `Bearer ${token}` }, json }
  }
  const key = keyOf(flags.get("key"), env)
  if (key === undefined) throw new UsageError("fos tail needs a sandbox key (--key or FOS_API_KEY), or --org ORG_ID and the operator token")
  return { url: `${server}/sandbox/v2/simulate/stream${query}`, headers: { "x-api-key": key }, json }
}

const dim = (color: boolean, text: string) => (color ? `\u001b[2m${text}\u001b[0m` : text)
const statusColor = (status: number): string => (status >= 500 ? "31" : status >= 400 ? "33" : status >= 300 ? "36" : "32")

/** One pretty line of a message of the stream. */
export const prettyLine = (event: string, data: any, color: boolean): string => {
  if (event === "event") {
    return `${dim(color, String(data.createdAt))} event  ${data.type} ${data.resourceId ?? "-"} ${dim(color, String(data.id))}`
  }
  const status = color ? `\u001b[${statusColor(data.status)}m${data.status}\u001b[0m` : String(data.status)
  const type = data.type === undefined ? "" : ` ${data.type}`
  const injected = data.injected === undefined ? "" : ` injected:${data.injected}`
  // Which process answered: several may share a PostgreSQL store behind one address.
  const by = data.answeredBy === undefined ? "" : ` ${dim(color, `by:${data.answeredBy}`)}`
  return `${dim(color, String(data.time))} ${String(data.method).padEnd(6)} ${data.path} ${status}${type} ${data.durationMs}ms ${dim(color, String(data.correlationId))}${injected}${by}`
}

/** Runs `fos tail` until SIGINT or SIGTERM; `out` takes each line. */
export const runTail = async (args: ReadonlyArray<string>, env: Record<string, string | undefined>, out: (line: string) => void): Promise<void> => {
  const options = parseTailArgs(args, env, (line) => process.stderr.write(`fos: ${line}\n`))
  const color = !options.json && process.stdout.isTTY === true && env.NO_COLOR === undefined
  const stop = new AbortController()
  const onSignal = () => stop.abort()
  process.once("SIGINT", onSignal)
  process.once("SIGTERM", onSignal)
  let lastEventId: string | undefined
  let connectedOnce = false
  try {
    while (!stop.signal.aborted) {
      let response: Response
      try {
        response = await fetch(options.url, {
          headers: { ...options.headers, accept: "text/event-stream", ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId }) },
          signal: stop.signal
        })
      } catch {
        if (stop.signal.aborted) return
        if (!connectedOnce) throw new OperatorRefused(cannotReach(new URL(options.url).origin))
        await new Promise((resolve) => setTimeout(resolve, 2000))
        continue
      }
      if (!response.ok) {
        const problem = (await response.json().catch(() => ({}))) as { type?: string; detail?: string }
        throw new OperatorRefused(`${String(problem.type ?? response.status)}: ${String(problem.detail ?? response.statusText)}`)
      }
      connectedOnce = true
      try {
        await readStream(response, (event, id, data) => {
          if (id !== undefined) lastEventId = id
          out(options.json ? JSON.stringify({ event, ...(id === undefined ? {} : { id }), data }) : prettyLine(event, data, color))
        })
      } catch {
        // The connection dropped (or was aborted): reopened below unless stopped.
      }
      if (stop.signal.aborted) return
      process.stderr.write("fos tail: the stream ended; reconnecting in 2 s\n")
      await new Promise((resolve) => setTimeout(resolve, 2000))
    }
  } finally {
    process.off("SIGINT", onSignal)
    process.off("SIGTERM", onSignal)
  }
}

/** Reads server-sent events from `response` until it ends, calling `onMessage` for each message with data. */
const readStream = async (response: Response, onMessage: (event: string, id: string | undefined, data: unknown) => void) => {
  const decoder = new TextDecoder()
  let buffer = ""
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true })
    let end: number
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      let event = "message"
      let id: string | undefined
      let data: string | undefined
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) event = line.slice(7)
        else if (line.startsWith("id: ")) id = line.slice(4)
        else if (line.startsWith("data: ")) data = line.slice(6)
      }
      if (data !== undefined) onMessage(event, id, JSON.parse(data))
    }
  }
}
