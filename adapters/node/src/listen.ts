/**
 * `fos listen --forward-to URL`: webhooks to a receiver on your own machine, as Stripe CLI's `stripe listen` does
 * (docs/listen.md). It creates a webhook listener in the key's sandbox (a temporary endpoint, subscribed to every
 * event or to `--events a,b`) and prints its signing secret; then it polls the listener, forwards each signed
 * attempt to the local URL with the same headers and body (so the receiver verifies it with the printed secret, and
 * the server never connects to the user's machine), reports the receiver's status and latency back as the attempt's
 * result, and prints one line per attempt. Ctrl-C (SIGINT) or SIGTERM deletes the endpoint and exits 0.
 *
 * The server is `--server URL` or FOS_SERVER (default http://127.0.0.1:4000); the key is `--key KEY` or FOS_API_KEY,
 * a sandbox key with read_write access (connection.ts).
 */
import { quoted, unknownFlag, UsageError } from "@fos/serve/cli"
import { cannotReach, flagName, keyOf, serverOf } from "./connection.ts"

export const listenUsage = `usage: fos listen --forward-to URL [--events TYPE,TYPE] [--key KEY] [--server URL]

  --forward-to URL   where each delivery is POSTed, e.g. http://localhost:3000/webhooks
  --events a,b       the event types to receive (default: all)
  --key KEY          a sandbox API key with read_write access (or FOS_API_KEY)
  --server URL       the fos server (or FOS_SERVER; default http://127.0.0.1:4000)

Prints the endpoint's signing secret, then one line per delivery attempt; Ctrl-C deletes the endpoint.

examples:
  fos listen --forward-to http://localhost:3000/webhooks --key ck_sandbox_…
  fos listen --forward-to http://localhost:3000/webhooks --events transaction.completed,transaction.failed`

/** The local receiver's limit: the spec's 5 seconds, less a little for reporting back within the server's wait. */
const forwardTimeoutMs = 4_500

/** The server refused or could not be reached; exits 1. */
export class ListenRefused extends Error {}

interface ListenOptions {
  readonly forwardTo: string
  readonly events: ReadonlyArray<string> | undefined
  readonly key: string
  readonly server: string
}

export const parseListenArgs = (args: ReadonlyArray<string>, env: Record<string, string | undefined>): ListenOptions => {
  const flags = new Map<string, string>()
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (!arg.startsWith("--")) throw new UsageError(`fos listen takes no argument but its flags, not ${quoted(arg)}\n${listenUsage}`)
    const eq = arg.indexOf("=")
    const name = flagName(eq < 0 ? arg.slice(2) : arg.slice(2, eq))
    if (!["forward-to", "events", "key", "server"].includes(name)) throw unknownFlag(name, ["forward-to", "events", "key", "server"], "fos listen")
    const value = eq >= 0 ? arg.slice(eq + 1) : args[++i]
    if (value === undefined || value === "") throw new UsageError(`--${name} needs a value`)
    flags.set(name, value)
  }
  const forwardTo = flags.get("forward-to")
  if (forwardTo === undefined) throw new UsageError(`--forward-to is required\n${listenUsage}`)
  try {
    if (!/^https?:$/.test(new URL(forwardTo).protocol)) throw new Error()
  } catch {
    throw new UsageError(`--forward-to is an http:// or https:// URL, such as http://localhost:3000/webhooks, not ${quoted(forwardTo)}`)
  }
  const key = keyOf(flags.get("key"), env)
  if (key === undefined) throw new UsageError("a sandbox API key is needed: --key or FOS_API_KEY")
  const events = flags.get("events")?.split(",").map((e) => e.trim()).filter((e) => e !== "")
  if (events !== undefined && events.length === 0) throw new UsageError("--events needs at least one event type")
  return { forwardTo, events, key, server: serverOf(flags.get("server"), env) }
}

interface ForwardedRequest {
  readonly attemptId: string
  readonly deliveryId: string
  readonly headers: Record<string, string>
  readonly body: string
}

const problemText = async (response: Response): Promise<string> => {
  const text = await response.text().catch(() => "")
  try {
    const problem = JSON.parse(text) as { type?: string; detail?: string }
    return `${response.status} ${problem.type ?? ""}: ${problem.detail ?? text}`
  } catch {
    return `${response.status} ${text}`
  }
}

/** Why a forward failed, in the words a developer looks for (the cause's code, e.g. ECONNREFUSED). */
const forwardError = (e: unknown): string => {
  if (e instanceof Error && e.name === "TimeoutError") return `no answer within ${forwardTimeoutMs / 1000} seconds`
  const cause = e instanceof Error ? (e.cause as { code?: string; message?: string } | undefined) : undefined
  if (cause?.code === "ECONNREFUSED") return "connection refused"
  return cause?.code ?? cause?.message ?? (e instanceof Error ? e.message : String(e))
}

export const listen = async (options: ListenOptions, print: (line: string) => void): Promise<void> => {
  const base = `${options.server}/sandbox/v2`
  const headers = { "x-api-key": options.key, "content-type": "application/json" }
  const call = (method: string, path: string, body?: unknown, signal?: AbortSignal) =>
    fetch(base + path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }), ...(signal === undefined ? {} : { signal }) })

  let created: Response
  try {
    created = await call("POST", "/simulate/webhooks/listeners", options.events === undefined ? {} : { subscription: { mode: "selected", eventTypes: options.events } })
  } catch (e) {
    throw new ListenRefused(cannotReach(options.server, forwardError(e)))
  }
  if (created.status !== 201) throw new ListenRefused(`the server refused the listener: ${await problemText(created)}`)
  const endpoint = (await created.json()) as { id: string; url: string; secret: string }
  // Printed once the first poll has answered, so that the listener counts as connected from the moment these lines
  // show: an event made after them is forwarded, not refused (the server's poll with wait=0 answers at once).
  let connected = false
  const printListening = () => {
    connected = true
    print(`listening: endpoint ${endpoint.id} (${endpoint.url}), ${options.events === undefined ? "all events" : options.events.join(", ")}, forwarding to ${options.forwardTo}`)
    print(`signing secret: ${endpoint.secret}`)
    print("Ctrl-C deletes the endpoint and stops.")
  }

  const stopping = new AbortController()
  const stopped = new Promise<void>((done) => {
    const stop = () => {
      if (stopping.signal.aborted) return
      stopping.abort()
      done()
    }
    process.once("SIGINT", stop)
    process.once("SIGTERM", stop)
  })

  /** Forwards one attempt, reports the answer, and prints its line. */
  const forward = async (request: ForwardedRequest) => {
    const started = performance.now()
    let status: number | undefined
    let error: string | undefined
    try {
      const answer = await fetch(options.forwardTo, {
        method: "POST",
        headers: request.headers,
        body: request.body,
        signal: AbortSignal.timeout(forwardTimeoutMs),
        redirect: "manual"
      })
      status = answer.status
      await answer.arrayBuffer().catch(() => undefined)
    } catch (e) {
      error = forwardError(e)
    }
    const latencyMs = Math.max(0, Math.round(performance.now() - started))
    let event = { type: request.headers["x-service-event"] ?? "?", id: "?" }
    try {
      const body = JSON.parse(request.body) as { id?: string; type?: string }
      event = { type: body.type ?? event.type, id: body.id ?? "?" }
    } catch {
      // the body is what the server signed; a line without its id is still a line
    }
    const report = await call("POST", `/simulate/webhooks/listeners/${endpoint.id}/attempts/${request.attemptId}`, {
      ...(status === undefined ? {} : { status }),
      latencyMs,
      ...(error === undefined ? {} : { error })
    }).then(async (r) => (r.ok ? ((await r.json()) as { recorded: boolean }).recorded : false), () => false)
    const outcome = status === undefined ? `failed (${error})` : String(status)
    print(`${new Date().toISOString()}  ${event.type}  ${event.id}  -> ${outcome}  ${latencyMs}ms  ${request.attemptId}${report ? "" : "  (reported too late: recorded as a timeout)"}`)
  }

  const loop = async () => {
    while (!stopping.signal.aborted) {
      let response: Response
      try {
        response = await call("POST", `/simulate/webhooks/listeners/${endpoint.id}/poll${connected ? "" : "?wait=0"}`, undefined, stopping.signal)
      } catch (e) {
        if (stopping.signal.aborted) return
        print(`cannot reach ${options.server} (${forwardError(e)}); trying again in a second`)
        await new Promise((r) => setTimeout(r, 1000))
        continue
      }
      if (response.status === 410 || response.status === 404) {
        throw new ListenRefused(`the listener's endpoint ${endpoint.id} is gone: ${await problemText(response)}`)
      }
      if (!response.ok) {
        print(`the server answered the poll ${await problemText(response)}; trying again in a second`)
        await new Promise((r) => setTimeout(r, 1000))
        continue
      }
      const { requests } = (await response.json()) as { requests: ReadonlyArray<ForwardedRequest> }
      if (!connected) printListening()
      // Concurrently, as the server sends deliveries: one slow receiver's answer does not hold the others back.
      await Promise.all(requests.map(forward))
    }
  }

  // An unknown event type is the server's to refuse (400 VALIDATION_ERROR, printed above).
  await Promise.race([loop(), stopped])
  const removed = await call("DELETE", `/webhooks/endpoints/${endpoint.id}`).catch(() => undefined)
  if (removed === undefined || removed.status !== 204) {
    throw new ListenRefused(`could not delete endpoint ${endpoint.id}${removed === undefined ? "" : `: ${await problemText(removed)}`}; delete it with DELETE /v2/webhooks/endpoints/${endpoint.id}`)
  }
  print(`deleted endpoint ${endpoint.id}`)
}
