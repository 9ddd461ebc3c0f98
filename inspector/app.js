/**
 * The inspector (`/inspect`): a single-page application over the same public, sandbox and operator endpoints a
 * client uses, with the same headers (the key in `x-api-key`, an Idempotency-Key on every write). It is bundled with
 * Preact and htm by scripts/inspector-assets.ts into packages/http/src/InspectorAssets.ts, which every engine
 * serves (packages/http/src/Inspector.ts), so the user's side needs no build step and no network.
 *
 * Security: every string from the server is rendered as text (Preact escapes it; nothing here parses markup), the
 * page runs under a Content-Security-Policy without inline script or eval, and the credential stays in this page's
 * memory, or in sessionStorage when the user asks (never in a URL: the hash holds only the view and an id).
 */
import htm from "htm"
import { h, render } from "preact"
import { useCallback, useEffect, useState } from "preact/hooks"

const html = htm.bind(h)

// --- the credential and the API --------------------------------------------------------------------------------------

const storageKey = "fos-inspector-session"

/** What the user signed in with: an environment's key, or the operator token. */
const sessionOf = (credential) => {
  const key = /^ck_(sandbox|live)_/.exec(credential)
  return key === null ? { kind: "operator", credential } : { kind: "key", credential, environment: key[1] }
}

const loadStored = () => {
  try {
    const stored = window.sessionStorage.getItem(storageKey)
    return stored === null ? undefined : sessionOf(stored)
  } catch {
    return undefined
  }
}

class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail ?? problem?.title ?? `HTTP ${status}`)
    this.status = status
    this.problem = problem
  }
}

/** A fresh Idempotency-Key: every write the inspector sends carries one, as a careful client's does. */
const idempotencyKey = () => `inspector-${crypto.randomUUID()}`

const headersOf = (session) =>
  session.kind === "key" ? { "x-api-key": session.credential } : { authorization: `Bearer ${session.credential}` }

/** The environment's base (`/sandbox` or `/live`) for a key; the operator surface has none. */
const baseOf = (session) => (session.kind === "key" ? `/${session.environment}` : "")

/** How many calls are in flight, shown on the root element as `data-pending` (a test waits for 0). */
let inFlight = 0
const track = (delta) => {
  inFlight += delta
  document.documentElement.dataset.pending = String(inFlight)
}

/** One call: `path` under the session's base; resolves to the JSON answer, rejects with an ApiError (its problem). */
const call = async (session, method, path, body, signal) => {
  track(1)
  try {
    return await send(session, method, path, body, signal)
  } finally {
    track(-1)
  }
}

/**
 * The correlation ids of the reads this page made itself (its lists, counts and polls), so that the recent requests
 * can leave them out: the server logs them like any client's. Bounded: the oldest go first.
 */
const readsOfThisPage = new (class extends Set {
  add(id) {
    if (id === null || id === undefined) return this
    if (this.size >= 2000) this.delete(this.values().next().value)
    return super.add(id)
  }
})()

const send = async (session, method, path, body, signal) => {
  const headers = { accept: "application/json", ...headersOf(session) }
  if (method !== "GET") headers["idempotency-key"] = idempotencyKey()
  if (body !== undefined) headers["content-type"] = "application/json"
  const response = await fetch(`${baseOf(session)}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
    credentials: "omit",
    signal
  })
  if (method === "GET") readsOfThisPage.add(response.headers.get("x-correlation-id"))
  const text = await response.text()
  let json
  try {
    json = text === "" ? undefined : JSON.parse(text)
  } catch {
    json = undefined
  }
  if (!response.ok) throw new ApiError(response.status, json)
  return json
}

const SessionContext = { current: undefined }

/** Loads `path` (GET) when `deps` change; `{data, error, loading, reload}`. A 404 is kept as `error.status`. */
const useGet = (path, deps = []) => {
  const [state, setState] = useState({ data: undefined, error: undefined, loading: path !== undefined })
  const [nonce, setNonce] = useState(0)
  useEffect(() => {
    if (path === undefined) return
    const controller = new AbortController()
    setState((s) => ({ ...s, loading: true }))
    call(SessionContext.current, "GET", path, undefined, controller.signal).then(
      (data) => setState({ data, error: undefined, loading: false }),
      (error) => {
        if (error?.name !== "AbortError") setState({ data: undefined, error, loading: false })
      }
    )
    return () => controller.abort()
  }, [path, nonce, ...deps])
  return { ...state, reload: () => setNonce((n) => n + 1) }
}

// --- refreshes: what changes the views ---------------------------------------------------------------------------

/** Every view re-reads when this version moves: after an action, and when the live feed brings an event. */
const refreshers = new Set()
let version = 0
let pending
const bump = () => {
  if (pending !== undefined) return
  // Coalesced: a burst of events re-reads each view once, within the organization's rate limit.
  pending = setTimeout(() => {
    pending = undefined
    version += 1
    for (const refresh of refreshers) refresh(version)
  }, 250)
}
const useVersion = () => {
  const [v, setV] = useState(version)
  useEffect(() => {
    refreshers.add(setV)
    return () => refreshers.delete(setV)
  }, [])
  return v
}

// --- routing (the hash holds the view and an id, never a credential) -----------------------------------------------

const useRoute = () => {
  const read = () => window.location.hash.replace(/^#\/?/, "").split("/").map((part) => decodeURIComponent(part))
  const [route, setRoute] = useState(read)
  useEffect(() => {
    const onChange = () => setRoute(read())
    window.addEventListener("hashchange", onChange)
    return () => window.removeEventListener("hashchange", onChange)
  }, [])
  return route
}

const go = (...parts) => {
  window.location.hash = `#/${parts.map((part) => encodeURIComponent(part)).join("/")}`
}

// --- what ids name -------------------------------------------------------------------------------------------------

const idPattern = /^[a-z]{2,4}_[0-9A-Za-z]{1,64}$/

/** What each id prefix is, and where the public API reads it. */
const resourceKinds = {
  cus: { label: "Customer", path: (id) => `/v2/customers/${id}` },
  app: { label: "Application", path: (id) => `/v2/applications/${id}` },
  wlt: { label: "Wallet", path: (id) => `/v2/wallets/${id}` },
  vac: { label: "Virtual account", path: (id) => `/v2/virtual-accounts/${id}` },
  txn: { label: "Transaction", path: (id) => `/v2/transactions/${id}` },
  ord: { label: "Order", path: (id) => `/v2/orders/${id}` },
  wlr: { label: "Whitelist recipient", path: (id) => `/v2/whitelist-recipients/${id}` },
  rad: { label: "Registered address", path: (id) => `/v2/registered-addresses/${id}` },
  rfi: { label: "Request for information", path: (id) => `/v2/rfis/${id}` },
  doc: { label: "Document", path: (id) => `/v2/documents/${id}` },
  wep: { label: "Webhook endpoint", path: (id) => `/v2/webhooks/endpoints/${id}` },
  wdl: { label: "Webhook delivery", path: (id) => `/v2/webhooks/deliveries/${id}` },
  wsg: { label: "Wallet signer" },
  cer: { label: "Wallet ceremony" },
  clm: { label: "Claim" },
  evt: { label: "Event" }
}

const prefixOf = (id) => id.slice(0, id.indexOf("_"))

/**
 * The moves of a resource by its prefix, for a server that does not serve `GET /simulate/actions/{id}` (which lists
 * the same endpoints and says which the state table allows now, and why not).
 */
const knownActions = {
  txn: (id) => [
    { name: "confirmTransaction", method: "POST", path: `/v2/simulate/transactions/${id}/confirm` },
    { name: "settleTransaction", method: "POST", path: `/v2/simulate/transactions/${id}/settle` },
    { name: "endTransaction", method: "POST", path: `/v2/simulate/transactions/${id}/terminal` },
    { name: "returnTransaction", method: "POST", path: `/v2/simulate/transactions/${id}/return` },
    { name: "reviewTransaction", method: "POST", path: `/v2/simulate/transactions/${id}/review` }
  ],
  app: (id) => [{ name: "decideApplication", method: "POST", path: `/v2/simulate/applications/${id}/decision` }],
  ord: (id) => [
    { name: "executeOrder", method: "POST", path: `/v2/orders/${id}/execute` },
    { name: "cancelOrder", method: "POST", path: `/v2/orders/${id}/cancel` },
    { name: "failOrder", method: "POST", path: `/v2/simulate/orders/${id}/fail` }
  ],
  rfi: (id) => [{ name: "reviewRfi", method: "POST", path: `/v2/simulate/rfis/${id}` }],
  cer: (id) => [{ name: "decideCeremony", method: "POST", path: `/v2/simulate/wallet-ceremonies/${id}/decision` }],
  wdl: (id) => [{
    name: "retryDelivery",
    method: "POST",
    path: `/v2/webhooks/deliveries/${id}/retry`,
    refusal: (delivery) => (delivery?.status === "failed" ? undefined : "only a failed delivery can be retried")
  }]
}

/**
 * The server's actions (`GET /simulate/actions/{id}`) by name: the button's label and the body it sends (a function
 * of the resource where the body names its parts).
 */
const namedActions = {
  confirmTransaction: ["confirm"],
  settleTransaction: ["settle"],
  completeTransaction: ["complete", { outcome: "completed" }],
  failTransaction: ["fail", { outcome: "failed" }],
  cancelTransaction: ["cancel", { outcome: "cancelled" }],
  enterReview: ["enter review", { action: "enter" }],
  requestInformation: ["request information", { action: "request_information" }],
  clearReview: ["clear review", { action: "clear" }],
  rejectDocument: ["reject", { action: "reject" }],
  publishRfi: ["publish an RFI", { questions: [{ text: "What is the purpose of this transfer?" }] }],
  returnTransaction: ["return (R01)", { returnCode: "R01" }],
  cancelPayout: ["cancel payout"],
  executeOrder: ["execute"],
  cancelOrder: ["cancel"],
  failOrder: ["fail", { reasonCode: "provider_rejected" }],
  approveApplication: ["approve", { outcome: "approved" }],
  rejectApplication: ["reject", { outcome: "rejected" }],
  complianceResult: ["late compliance failure", {}],
  cancelApplication: ["cancel"],
  respondRfi: ["respond", (rfi) => ({ answers: (rfi?.questions ?? []).map((q) => ({ questionId: q.id, text: "Answered from the inspector." })) })],
  "reviewRfi.request_more": ["request more", { action: "request_more", questions: [{ text: "Please add the invoice." }] }],
  "reviewRfi.extend_deadline": ["extend deadline 1 day", { action: "extend_deadline", deadlineSeconds: 86400 }],
  "reviewRfi.resolve": ["resolve", { action: "resolve" }],
  "reviewRfi.reopen": ["reopen", { action: "reopen", questions: [{ text: "One more question." }] }],
  "reviewRfi.cancel": ["cancel", { action: "cancel" }],
  enrollSigner: ["enroll", {}],
  addPasskey: ["add a passkey", {}],
  removeSigner: ["remove", {}],
  approveCeremony: ["approve", { outcome: "approved" }],
  declineCeremony: ["decline", { outcome: "declined" }],
  "provisionClaim.succeeded": ["provisioning succeeds", { outcome: "succeeded" }],
  "provisionClaim.failed": ["provisioning fails", { outcome: "failed" }],
  retryDelivery: ["retry"]
}

/**
 * The buttons one action gives. An action the server names (above) is one button; an endpoint of the fallback list
 * gives one per body worth offering (a decision approves or rejects; a terminal move
 * completes, fails or cancels), each labelled; an endpoint not named here is one button with no body.
 */
const variantsOf = (resource) => (action) => {
  const named = namedActions[action.name]
  if (named !== undefined) {
    const [label, body] = named
    return [{ ...action, label, body: typeof body === "function" ? body(resource) : body }]
  }
  const path = action.path
  const each = (...variants) => variants.map(([label, body]) => ({ ...action, label, body }))
  if (/\/simulate\/applications\/[^/]+\/decision$/.test(path)) return each(["approve", { outcome: "approved" }], ["reject", { outcome: "rejected" }])
  if (/\/wallet-ceremonies\/[^/]+\/decision$/.test(path)) return each(["approve", { outcome: "approved" }], ["decline", { outcome: "declined" }])
  if (/\/transactions\/[^/]+\/terminal$/.test(path)) return each(["complete", { outcome: "completed" }], ["fail", { outcome: "failed" }], ["cancel", { outcome: "cancelled" }])
  if (/\/transactions\/[^/]+\/review$/.test(path)) return each(["review: enter", { action: "enter" }], ["review: clear", { action: "clear" }], ["review: reject", { action: "reject" }])
  if (/\/transactions\/[^/]+\/return$/.test(path)) return each(["return (R01)", { returnCode: "R01" }])
  if (/\/transactions\/[^/]+\/confirm$/.test(path)) return each(["confirm", undefined])
  if (/\/transactions\/[^/]+\/settle$/.test(path)) return each(["settle", undefined])
  if (/\/simulate\/orders\/[^/]+\/fail$/.test(path)) return each(["fail", { reasonCode: "provider_rejected" }])
  if (/\/orders\/[^/]+\/execute$/.test(path)) return each(["execute", undefined])
  if (/\/orders\/[^/]+\/cancel$/.test(path)) return each(["cancel", undefined])
  if (/\/simulate\/rfis\/[^/]+$/.test(path)) return each(["resolve", { action: "resolve" }], ["extend deadline 1 day", { action: "extend_deadline", deadlineSeconds: 86400 }], ["cancel", { action: "cancel" }])
  if (/\/retry$/.test(path)) return each(["retry", undefined])
  // An endpoint's name, in words: settleTransaction is "settle transaction".
  return each([action.name.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase(), undefined])
}

// --- small pieces ---------------------------------------------------------------------------------------------------

const IdLink = ({ id }) => html`<a class="id" href=${`#/r/${encodeURIComponent(id)}`}>${id}</a>`

const time = (iso) => (typeof iso === "string" ? iso.replace("T", " ").replace(/\.\d{3}Z$/, "Z") : "")

const Status = ({ value }) => (value === undefined || value === null ? null : html`<span class=${`status status-${String(value).replace(/[^a-z_]/g, "")}`}>${String(value)}</span>`)

const ErrorNote = ({ error }) => {
  if (error === undefined) return null
  const p = error.problem
  return html`<p class="error" role="alert">${error.status === undefined ? String(error.message) : `${error.status} ${p?.type ?? ""}: ${p?.detail ?? error.message}`}</p>`
}

/** Any JSON, rendered as text; a string that is an id is a link to it. */
const Json = ({ value }) => {
  if (value === null || value === undefined) return html`<span class="json-null">${String(value)}</span>`
  if (typeof value === "string") return idPattern.test(value) && resourceKinds[prefixOf(value)] !== undefined ? html`<${IdLink} id=${value} />` : html`<span class="json-string">${value}</span>`
  if (typeof value !== "object") return html`<span class="json-scalar">${String(value)}</span>`
  if (Array.isArray(value)) {
    if (value.length === 0) return html`<span class="json-null">[]</span>`
    return html`<ol class="json-list">${value.map((item) => html`<li><${Json} value=${item} /></li>`)}</ol>`
  }
  const entries = Object.entries(value)
  if (entries.length === 0) return html`<span class="json-null">{}</span>`
  return html`<dl class="json">${entries.map(([key, item]) => html`<div><dt>${key}</dt><dd><${Json} value=${item} /></dd></div>`)}</dl>`
}

/** A list's rows as a table: each column shows its `key` member as JSON, or what its `render` makes of the row. */
/** JSON text indented for reading, or the text as it is when it is not JSON. */
const indented = (text) => {
  try {
    return JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    return text
  }
}

/**
 * A ledger account as a reader names it, by its holder and asset (`wallet wlt_… · USDC@base`), not by the path the
 * ledger keys it by (`org_…/sandbox/wallet/wlt_…/USDC@base`), which stays in its title.
 */
const Account = ({ id }) => {
  // `org_…/sandbox/virtual_account/vac_…/USD` (the ledger's key) or `virtual_account/vac_…/USD` (a journal's).
  const all = String(id ?? "").split("/")
  const parts = all[0]?.startsWith("org_") ? all.slice(2) : all
  if (parts.length < 3) return html`<span class="mono">${id}</span>`
  const [type, ...rest] = parts
  const asset = rest.pop().replace(/#\d+$/, "")
  const holder = rest.join("/")
  const named = /^[a-z]+_[0-9A-Za-z]+$/.test(holder)
    ? html`${type.replaceAll("_", " ")} <a href=${`#/r/${encodeURIComponent(holder)}`}>${holder}</a>`
    : type === "world" ? html`the outside world (${holder.replace(":", " ")})` : html`${type.replaceAll("_", " ")} ${holder}`
  return html`<span title=${id}>${named} · ${asset}</span>`
}

const Table = ({ rows, columns, empty = "none" }) => {
  if (rows === undefined) return null
  if (rows.length === 0) return html`<p class="muted">${empty}</p>`
  return html`<div class="table-wrap"><table>
    <thead><tr>${columns.map((c) => html`<th>${c.label}</th>`)}</tr></thead>
    <tbody>${rows.map((row) => html`<tr>${columns.map((c) => html`<td>${c.render ? c.render(row) : html`<${Json} value=${row[c.key]} />`}</td>`)}</tr>`)}</tbody>
  </table></div>`
}

/** A list endpoint, paged forward with its cursor. */
const Paged = ({ path, columns, empty, pageSize = 20 }) => {
  // A cursor belongs to its list and filters: another path starts on the first page.
  const [page, setPage] = useState({ path, cursor: undefined })
  const cursor = page.path === path ? page.cursor : undefined
  const setCursor = (next) => setPage({ path, cursor: next })
  const v = useVersion()
  const separator = path.includes("?") ? "&" : "?"
  const { data, error } = useGet(`${path}${separator}limit=${pageSize}${cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`}`, [v])
  return html`<div>
    <${ErrorNote} error=${error} />
    <${Table} rows=${data?.data} columns=${columns} empty=${empty} />
    <div class="pager">
      ${data?.meta?.total !== undefined && data.data.length > 0 ? html`<span class="muted">${data.meta.total} in all</span>` : null}
      ${cursor !== undefined ? html`<button onClick=${() => setCursor(undefined)}>first page</button>` : null}
      ${data?.meta?.nextCursor ? html`<button onClick=${() => setCursor(data.meta.nextCursor)}>next page</button>` : null}
    </div>
  </div>`
}

const idColumn = (key = "id") => ({ label: key, render: (row) => (row[key] === undefined ? null : html`<${IdLink} id=${row[key]} />`) })
const statusColumn = { label: "status", render: (row) => html`<${Status} value=${row.status} />` }
const timeColumn = (key = "createdAt") => ({ label: key, render: (row) => html`<span class="time">${time(row[key])}</span>` })

// --- signing in ------------------------------------------------------------------------------------------------------

const SignIn = ({ onSignedIn }) => {
  const [credential, setCredential] = useState("")
  const [remember, setRemember] = useState(true)
  const [error, setError] = useState(undefined)
  const [busy, setBusy] = useState(false)
  const submit = async (event) => {
    event.preventDefault()
    const session = sessionOf(credential.trim())
    setBusy(true)
    setError(undefined)
    try {
      const me = session.kind === "key"
        ? await call(session, "GET", "/v2/portal/users/me")
        : await call(session, "GET", "/operator/organizations")
      if (remember) window.sessionStorage.setItem(storageKey, session.credential)
      onSignedIn({ ...session, me })
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }
  return html`<main class="signin">
    <h1>fos inspector</h1>
    <p>Sign in with an API key of an environment (a read-only key sees, a read-write key acts) or with the server's operator token (every organization).</p>
    <form onSubmit=${submit}>
      <label>Key or operator token
        <input name="credential" type="password" autocomplete="off" value=${credential} onInput=${(e) => setCredential(e.currentTarget.value)} required />
      </label>
      <label class="check"><input type="checkbox" checked=${remember} onChange=${(e) => setRemember(e.currentTarget.checked)} /> keep it for this tab (sessionStorage)</label>
      <button type="submit" disabled=${busy}>Sign in</button>
    </form>
    <${ErrorNote} error=${error} />
  </main>`
}

// --- the clock and the live feed ---------------------------------------------------------------------------------

const canAct = (session) => session.kind === "key" && session.me?.apiKey?.access === "read_write"
const readOnlyReason = "this key is read-only"

const Clock = ({ session }) => {
  const v = useVersion()
  const { data, error } = useGet("/v2/simulate/clock", [v])
  const [busy, setBusy] = useState(false)
  const [report, setReport] = useState(undefined)
  const [failure, setFailure] = useState(undefined)
  const writable = canAct(session)
  const advance = async (body) => {
    setBusy(true)
    setFailure(undefined)
    try {
      setReport(await call(session, "POST", "/v2/simulate/clock/advance", body))
    } catch (e) {
      setFailure(e)
    } finally {
      setBusy(false)
      bump()
    }
  }
  // No endpoint runs a sandbox until idle: it is advances to the next pending timer's due time until none is left
  // but the idempotency records' expiries (30 days out, and each advance, keyed, adds one). Bounded, as every loop.
  const runUntilIdle = async () => {
    setBusy(true)
    setFailure(undefined)
    try {
      let fired = 0
      let last
      for (let step = 0; step < 200; step++) {
        const timers = await call(session, "GET", "/v2/simulate/timers?limit=100")
        const next = timers.data.find((t) => !t.kind.startsWith("idempotency."))
        if (next === undefined) break
        last = await call(session, "POST", "/v2/simulate/clock/advance", { to: next.dueAt })
        fired += last.timersFired.total
      }
      setReport({ idle: true, fired, now: last?.now })
    } catch (e) {
      setFailure(e)
    } finally {
      setBusy(false)
      bump()
    }
  }
  if (error !== undefined) return html`<div class="clock"><${ErrorNote} error=${error} /></div>`
  const virtual = data?.mode === "virtual"
  const disabled = busy || !writable || !virtual
  const why = !writable ? readOnlyReason : !virtual ? "the server runs on the system clock" : undefined
  const button = (label, body) => html`<button disabled=${disabled} title=${why} onClick=${() => advance(body)}>${label}</button>`
  return html`<div class="clock">
    <span class="clock-now" title="the sandbox's clock">${data === undefined ? "…" : time(data.now)}</span>
    <span class="muted">${data?.mode ?? ""}</span>
    ${button("+1 minute", { seconds: 60 })}
    ${button("advance 1 hour", { seconds: 3600 })}
    ${button("+1 day", { seconds: 86400 })}
    <button disabled=${disabled} title=${why ?? "advance to each pending timer in turn until only idempotency records' expiries are left"} onClick=${runUntilIdle}>run until idle</button>
    ${why !== undefined ? html`<span class="reason">${why}</span>` : null}
    ${report === undefined ? null : report.idle
      ? html`<span class="muted report">idle: fired ${report.fired} timer(s); nothing pending but idempotency records' expiries</span>`
      : html`<span class="muted report">fired ${report.timersFired.total} timer(s)${report.nextDueAt ? `, next due ${time(report.nextDueAt)}` : ", none pending"}</span>`}
    <${ErrorNote} error=${failure} />
  </div>`
}

/** Reads the server's event stream with fetch (an EventSource cannot send the key header) until aborted. */
const readStream = async (session, after, signal, onOpen, onMessage) => {
  const query = after === undefined ? "" : `?after=${encodeURIComponent(after)}`
  const response = await fetch(`${baseOf(session)}/v2/simulate/stream${query}`, {
    headers: { accept: "text/event-stream", ...headersOf(session) },
    cache: "no-store",
    credentials: "omit",
    signal
  })
  if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => undefined))
  onOpen()
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ""
  for (;;) {
    const { value, done } = await reader.read()
    if (done) return
    buffer += value.replace(/\r\n?/g, "\n")
    let end
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      let type = "message"
      const data = []
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) type = line.slice(6).trim()
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""))
      }
      if (data.length === 0) continue
      try {
        onMessage(type, JSON.parse(data.join("\n")))
      } catch {
        // not JSON: nothing the inspector shows
      }
    }
  }
}

/** The live feed: events and requests pushed by the server; every event re-reads the open views. */
const useLiveFeed = (session) => {
  const [events, setEvents] = useState([])
  const [requests, setRequests] = useState([])
  const [state, setState] = useState("connecting")
  useEffect(() => {
    if (session.kind !== "key" || session.environment !== "sandbox") {
      setState("off")
      return
    }
    const controller = new AbortController()
    let stopped = false
    // A reconnected stream resumes after the last event shown (the stream's `after`), so none is lost or repeated.
    let lastEventId
    const run = async () => {
      for (let retry = 0; !stopped; retry++) {
        try {
          setState("connecting")
          await readStream(session, lastEventId, controller.signal, () => {
            setState("live")
            retry = 0
          }, (type, item) => {
            if (type === "event") {
              lastEventId = item.id
              setEvents((list) => (list.some((e) => e.id === item.id) ? list : [item, ...list].slice(0, 200)))
              bump()
            } else if (type === "request") {
              setRequests((list) => [item, ...list].slice(0, 200))
            }
          })
        } catch (e) {
          if (stopped) return
          if (e?.name === "AbortError") return
          // The last event shown is no longer the sandbox's (a reset emptied it): resume from now on instead.
          if (e?.status === 400 && lastEventId !== undefined) lastEventId = undefined
          if (e?.status === 404 || e?.status === 401 || e?.status === 403) {
            setState(`unavailable (${e.status})`)
            return
          }
        }
        setState("reconnecting")
        await new Promise((resolve) => setTimeout(resolve, Math.min(30_000, 500 * 2 ** Math.min(retry, 6))))
      }
    }
    // The stream opens once the view has loaded, so the first paint does not wait on it.
    const started = setTimeout(run, 0)
    return () => {
      stopped = true
      clearTimeout(started)
      controller.abort()
    }
  }, [session])
  return { events, requests, state }
}

const LiveFeed = ({ feed }) => html`<aside class="feed" aria-label="live events">
  <h2>Live events <span class=${`feed-state feed-${feed.state.split(" ")[0]}`}>${feed.state}</span></h2>
  ${feed.events.length === 0 ? html`<p class="muted">Events appear here as the server emits them.</p>` : null}
  <ol class="feed-list">
    ${feed.events.map((event) => html`<li class="feed-item" key=${event.id}>
      <span class="time">${time(event.createdAt)}</span>
      <span class="event-type">${event.type}</span>
      ${event.resourceId ? html`<${IdLink} id=${event.resourceId} />` : null}
    </li>`)}
  </ol>
</aside>`

// --- overview -------------------------------------------------------------------------------------------------------

const Count = ({ path, label, view }) => {
  const v = useVersion()
  const { data, error } = useGet(`${path}${path.includes("?") ? "&" : "?"}limit=1`, [v])
  return html`<a class="count" href=${`#/${view}`}><strong>${error !== undefined ? "–" : data?.meta?.total ?? "…"}</strong><span>${label}</span></a>`
}

const Counts = () => {
  const counts = [
    ["customers", "/v2/customers", "customers"],
    ["applications", "/v2/applications", "applications"],
    ["transactions", "/v2/transactions", "transactions"],
    ["orders", "/v2/orders", "orders"],
    ["webhook deliveries", "/v2/webhooks/deliveries", "webhooks"],
    ["pending timers", "/v2/simulate/timers", "timers"],
    ["events", "/v2/simulate/events", "events"]
  ]
  return html`<div class="counts">${counts.map(([label, path, view]) => html`<${Count} key=${view} path=${path} label=${label} view=${view} />`)}</div>`
}

const requestColumns = [
  { label: "answered (real time)", render: (r) => html`<span class="time" title="When the server answered, on the real clock: the sandbox's clock may be virtual">${time(r.time)}</span>` },
  { label: "method", key: "method" },
  { label: "path", render: (r) => html`<span class="path">${r.path}</span>` },
  { label: "status", render: (r) => html`<span class=${r.status >= 400 ? "http-error" : "http-ok"}>${r.status}</span>` },
  { label: "type", render: (r) => (r.type ? html`<span class="problem-type">${r.type}</span>` : null) },
  { label: "duration", render: (r) => `${Number(r.durationMs).toFixed(1)} ms` },
  { label: "correlation id", render: (r) => html`<span class="mono">${r.correlationId}</span>` }
]
/** Which process answered: shown once the list holds more than one (several processes sharing a PostgreSQL store). */
const processColumn = { label: "process", render: (r) => html`<span class="mono" title=${r.answeredBy}>${String(r.answeredBy ?? "").slice(0, 8)}</span>` }

const RecentRequests = ({ feed }) => {
  const v = useVersion()
  const [writesOnly, setWritesOnly] = useState(false)
  const [ownReads, setOwnReads] = useState(false)
  const { data, error } = useGet("/v2/simulate/requests?limit=100", [v])
  const listed = data?.data ?? []
  const seen = new Set(listed.map((r) => r.correlationId))
  const rows = [...feed.requests.filter((r) => !seen.has(r.correlationId)), ...listed]
    .filter((r) => !writesOnly || (r.method !== "GET" && r.method !== "HEAD"))
    .filter((r) => ownReads || !readsOfThisPage.has(r.correlationId))
    .slice(0, 30)
  return html`<section>
    <h2>Recent requests
      <label class="muted toggle"><input type="checkbox" checked=${writesOnly} onChange=${(e) => setWritesOnly(e.currentTarget.checked)} /> writes only</label>
      <label class="muted toggle"><input type="checkbox" checked=${ownReads} onChange=${(e) => setOwnReads(e.currentTarget.checked)} /> this page's own reads</label>
    </h2>
    ${error?.status === 404 ? html`<p class="muted">This server does not serve the request log (GET /simulate/requests).</p>` : html`<${ErrorNote} error=${error} />`}
    ${error?.status === 404 && rows.length === 0 ? null : html`<${Table} rows=${rows} columns=${new Set(rows.map((r) => r.answeredBy)).size > 1 ? [...requestColumns, processColumn] : requestColumns} empty="no requests yet" />`}
  </section>`
}

const Overview = ({ session, feed }) => html`<div>
  <h1>${session.me?.organization?.name ?? "Organization"} <span class="muted">${session.me?.organization?.id} · ${session.environment}</span></h1>
  <p class="muted">Signed in as ${session.me?.user?.email} with a ${session.me?.apiKey?.access === "read_write" ? "read-write" : "read-only"} ${session.environment} key ending ${session.me?.apiKey?.last4}.</p>
  <${Counts} />
  <${RecentRequests} feed=${feed} />
  <${NextTimers} />
</div>`

/** The next business deadlines: the first page of timers less the idempotency records' expiries (all under Timers). */
const NextTimers = () => {
  const v = useVersion()
  const { data, error } = useGet("/v2/simulate/timers?limit=100", [v])
  const business = (data?.data ?? []).filter((t) => !t.kind.startsWith("idempotency."))
  return html`<section>
    <h2>What the sandbox waits for</h2>
    <${ErrorNote} error=${error} />
    <${Table} rows=${data === undefined ? undefined : business.slice(0, 10)} columns=${timerColumns} empty="nothing pending but idempotency records' expiries" />
    <p class="muted"><a href="#/timers">Every pending timer</a>, the idempotency records' expiries included.</p>
  </section>`
}

// --- lists ----------------------------------------------------------------------------------------------------------

const timerColumns = [
  { label: "due", render: (t) => html`<span class="time">${time(t.dueAt)}</span>` },
  { label: "kind", key: "kind" },
  idColumn("resourceId"),
  { label: "what it will do", render: (t) => t.action }
]

const eventColumns = [
  timeColumn(),
  { label: "type", render: (e) => html`<span class="event-type">${e.type}</span>` },
  idColumn("resourceId"),
  { label: "id", render: (e) => html`<span class="mono">${e.id}</span>` }
]

const lists = {
  customers: { title: "Customers", path: "/v2/customers", empty: "No customers yet: POST /v2/onboarding onboards one (with its documents from POST /v2/documents), and POST /v2/simulate/applications/{id}/decision approves it.", columns: [idColumn(), { label: "name", render: (c) => c.name ?? c.businessName ?? c.legalName ?? "" }, { label: "clientReferenceId", key: "clientReferenceId" }, statusColumn, timeColumn()] },
  applications: { title: "Applications", path: "/v2/applications", empty: "No applications yet: POST /v2/onboarding makes a customer's, POST /v2/customers/{id}/features one for a wallet or a virtual account.", columns: [idColumn(), { label: "type", render: (a) => a.applicationType ?? a.type }, idColumn("customerId"), statusColumn, timeColumn()] },
  transactions: { title: "Transactions", path: "/v2/transactions", empty: "No transactions yet: POST /v2/simulate/deposits sends money to a wallet or virtual account; orders and payouts make more.", columns: [idColumn(), { label: "type", key: "type" }, idColumn("customerId"), statusColumn, { label: "amount", render: (t) => amountOf(t) }, timeColumn()] },
  orders: { title: "Orders", path: "/v2/orders", empty: "No orders yet: POST /v2/quotes prices a conversion, POST /v2/orders makes an order of one of its options, POST /v2/orders/{id}/execute runs it.", columns: [idColumn(), { label: "direction", key: "direction" }, idColumn("customerId"), statusColumn, { label: "rate", key: "rate" }, timeColumn()] },
  timers: { title: "Pending timers", path: "/v2/simulate/timers", empty: "No timer is pending: nothing waits on the clock.", columns: timerColumns },
  events: { title: "Event log", path: "/v2/simulate/events?sortOrder=desc", empty: "No events yet: every change of a resource emits one.", columns: eventColumns }
}

const amountOf = (t) => {
  const a = t.amount ?? t.sourceAmount ?? t.source?.assetAmount ?? t.destination?.assetAmount
  if (a === undefined || a === null) return ""
  if (typeof a === "string") return a
  return `${a.amount ?? ""} ${a.code ?? a.asset ?? ""}`.trim()
}

const ListView = ({ name }) => {
  const list = lists[name]
  return html`<div><h1>${list.title}</h1><${Paged} path=${list.path} columns=${list.columns} empty=${list.empty} /></div>`
}

/**
 * Resources with no list of their own in the API, found through the event log: each event of these types names one
 * (the latest 100 of each type are read).
 */
const eventListed = {
  rfis: { title: "Requests for information", types: ["rfi.published"] },
  signers: { title: "Wallet signers", types: ["wallet_signer.invited", "wallet_signer.added"] },
  ceremonies: { title: "Wallet ceremonies", types: ["wallet_ceremony.awaiting_admin_approval", "wallet_ceremony.completed", "wallet_ceremony.failed"] }
}

const EventListed = ({ name }) => {
  const list = eventListed[name]
  const v = useVersion()
  const [rows, setRows] = useState(undefined)
  const [error, setError] = useState(undefined)
  useEffect(() => {
    const controller = new AbortController()
    Promise.all(list.types.map((type) => call(SessionContext.current, "GET", `/v2/simulate/events?type=${encodeURIComponent(type)}&sortOrder=desc&limit=100`, undefined, controller.signal))).then(
      (pages) => {
        const byResource = new Map()
        for (const event of pages.flatMap((page) => page.data)) {
          const seen = byResource.get(event.resourceId)
          if (seen === undefined || seen.createdAt > event.createdAt) byResource.set(event.resourceId, event)
        }
        setRows([...byResource.values()].sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1)))
      },
      (e) => e?.name !== "AbortError" && setError(e)
    )
    return () => controller.abort()
  }, [name, v])
  return html`<div>
    <h1>${list.title}</h1>
    <p class="muted">The API has no list of these: each is found by its events in the event log (${list.types.join(", ")}).</p>
    <${ErrorNote} error=${error} />
    <${Table} rows=${rows} columns=${[idColumn("resourceId"), { label: "first seen", render: (e) => html`<span class="time">${time(e.createdAt)}</span>` }, { label: "by", render: (e) => html`<span class="event-type">${e.type}</span>` }]} />
  </div>`
}

/** Wallets, virtual accounts or recipients: listed per customer, so for each customer of the first page. */
const PerCustomer = ({ title, sub, columns }) => {
  const v = useVersion()
  const { data: customers, error } = useGet("/v2/customers?limit=20", [v])
  return html`<div>
    <h1>${title}</h1>
    <${ErrorNote} error=${error} />
    ${(customers?.data ?? []).map((c) => html`<section key=${c.id}><h3><${IdLink} id=${c.id} /> <span class="muted">${c.name ?? ""}</span></h3>
      ${sub.map((path) => html`<${Paged} path=${`/v2/customers/${c.id}/${path}`} columns=${columns} pageSize=${10} empty="none" />`)}</section>`)}
    ${customers?.data?.length === 0 ? html`<p class="muted">no customers</p>` : null}
  </div>`
}

const balanceText = (b) => (Array.isArray(b) ? b.map((x) => `${x.available ?? x.amount ?? ""} ${x.code ?? ""}${x.chain ? `/${x.chain}` : ""}`).join(", ") : "")

// --- pictures -------------------------------------------------------------------------------------------------------

/** A transaction's (or any resource's) timeline, vertically, each entry at its time; ends with what it waits for. */
const VerticalTimeline = ({ entries, waitingFor, truncated }) => html`<ol class="vtimeline" aria-label="timeline">
  ${entries.map((e) => html`<li class=${`vt-entry vt-${e.kind}`}>
    <span class="vt-dot"></span>
    <span class="time">${time(e.at)}</span>
    <span class="vt-kind">${e.kind.replace("_", " ")}</span>
    <span class="vt-summary">${e.summary}</span>
  </li>`)}
  ${truncated ? html`<li class="vt-entry"><span class="vt-dot"></span><span></span><span></span><span class="muted">(the oldest entries are left out)</span></li>` : null}
  ${waitingFor !== undefined ? html`<li class="vt-entry vt-waiting"><span class="vt-dot"></span><span class="time">${waitingFor.at ? time(waitingFor.at) : "next"}</span><span class="vt-kind">waiting for</span><span class="vt-summary">${waitingFor.description}</span></li>` : null}
</ol>`

/** The order state table's states, placed for the picture (OrderMachine.ts). */
const stateWidth = 130
const stateHeight = 30
const orderStates = [
  { id: "new", label: "(new)", x: 10, y: 60 },
  { id: "pending", label: "pending", x: 200, y: 60 },
  { id: "executing", label: "pending (executing)", x: 390, y: 60 },
  { id: "sent", label: "pending (sent)", x: 580, y: 60 },
  { id: "succeeded", label: "succeeded", x: 770, y: 10 },
  { id: "failed", label: "failed", x: 770, y: 150 },
  { id: "cancelled", label: "cancelled", x: 295, y: 170 }
]
const orderEdges = [
  ["new", "pending", "create"],
  ["pending", "executing", "execute"],
  ["executing", "sent", "source sent"],
  ["sent", "succeeded", "completes"],
  ["sent", "failed", "fails"],
  ["executing", "failed", "fails"],
  ["pending", "cancelled", "cancel, expiry"],
  ["executing", "cancelled", "cancel"]
]

/** Where an edge leaves its state and meets the next: side to side, or from the bottom to a state below. */
const edgeEnds = (a, b) => {
  if (b.y > a.y + stateHeight) {
    const toX = b.x + (a.x < b.x ? stateWidth * 0.3 : stateWidth * 0.7)
    return [a.x + stateWidth / 2, a.y + stateHeight, toX, b.y]
  }
  return [a.x + stateWidth, a.y + stateHeight / 2, b.x, b.y + stateHeight / 2]
}

/** Which states an order went through, from the order and its transaction. */
const orderPath = (order, transaction) => {
  const path = ["new", "pending"]
  if (order.transactionId !== undefined && order.transactionId !== null) {
    path.push("executing")
    if (transaction !== undefined && transaction.status !== "pending") path.push("sent")
  }
  if (order.status !== "pending") path.push(order.status)
  return path
}

const OrderPath = ({ order }) => {
  const { data: transaction } = useGet(order.transactionId ? `/v2/transactions/${order.transactionId}` : undefined, [order.transactionId])
  const path = orderPath(order, transaction)
  const at = Object.fromEntries(orderStates.map((s) => [s.id, s]))
  const walked = new Set(path.slice(1).map((to, i) => `${path[i]}>${to}`))
  return html`<figure class="picture">
    <svg class="state-path" viewBox="0 0 910 210" role="img" aria-label=${`order path: ${path.join(" → ")}`}>
      <defs>
        <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrow" /></marker>
        <marker id="arrow-on" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrow-on" /></marker>
      </defs>
      ${orderEdges.map(([from, to, label]) => {
        const [x1, y1, x2, y2] = edgeEnds(at[from], at[to])
        const on = walked.has(`${from}>${to}`)
        const down = y2 > y1 + stateHeight
        return html`<g class=${on ? "edge edge-on" : "edge"}>
          <line x1=${x1} y1=${y1} x2=${x2} y2=${y2} marker-end=${on ? "url(#arrow-on)" : "url(#arrow)"} />
          <text x=${(x1 + x2) / 2 + (down ? 6 : 0)} y=${(y1 + y2) / 2 - 5} text-anchor=${down ? "start" : "middle"}>${label}</text>
        </g>`
      })}
      ${orderStates.map((s) => html`<g class=${`state ${path.includes(s.id) ? "state-on" : ""} ${path.at(-1) === s.id ? "state-now" : ""}`}>
        <rect x=${s.x} y=${s.y} width=${stateWidth} height=${stateHeight} rx="6" />
        <text x=${s.x + stateWidth / 2} y=${s.y + 19}>${s.label}</text>
      </g>`)}
    </svg>
    <figcaption>The order's path through its state table: ${path.join(" → ")}</figcaption>
  </figure>`
}

/** Balances over virtual time, from an account's journal (each entry carries the balance after it). */
const BalanceChart = ({ entries, asset, now }) => {
  if (entries.length === 0) return null
  const points = entries.map((e) => ({ t: Date.parse(e.createdAt), posted: Number(e.balance.posted), available: Number(e.balance.available) }))
  const t0 = points[0].t
  // The last balance holds until the sandbox's clock now, so the latest change is not at the picture's edge.
  const t1 = Math.max(points.at(-1).t, now === undefined ? 0 : Date.parse(now), t0 + 1)
  const max = Math.max(1, ...points.map((p) => Math.max(p.posted, p.available)))
  const W = 640
  const H = 180
  const left = 60
  const x = (t) => left + ((t - t0) / (t1 - t0)) * (W - left - 10)
  const y = (v) => H - 20 - (v / max) * (H - 40)
  const steps = (key) => points.map((p, i) => `${i === 0 ? "M" : `H${x(p.t).toFixed(1)} V`}${i === 0 ? `${x(p.t).toFixed(1)},${y(p[key]).toFixed(1)}` : y(p[key]).toFixed(1)}`).join(" ") + ` H${W - 10}`
  return html`<figure class="picture">
    <svg class="balance-chart" viewBox=${`0 0 ${W} ${H}`} role="img" aria-label="balance over virtual time">
      <line class="axis" x1=${left} y1=${H - 20} x2=${W - 10} y2=${H - 20} />
      <line class="axis" x1=${left} y1="10" x2=${left} y2=${H - 20} />
      <text class="tick" x=${left - 4} y=${y(max) + 4} text-anchor="end">${max}</text>
      <text class="tick" x=${left - 4} y=${H - 16} text-anchor="end">0</text>
      <text class="tick" x=${left} y=${H - 4}>${time(new Date(t0).toISOString())}</text>
      <text class="tick" x=${W - 10} y=${H - 4} text-anchor="end">${time(new Date(t1).toISOString())}</text>
      <path class="line-posted" d=${steps("posted")} />
      <path class="line-available" d=${steps("available")} />
    </svg>
    <figcaption>${asset ?? ""} balance over virtual time: <span class="key-posted">posted</span>, <span class="key-available">available</span> (from the journal)</figcaption>
  </figure>`
}

// --- a resource's page --------------------------------------------------------------------------------------------

/** The timeline: the server's (`/simulate/timeline/{id}`), or, where it serves none, the event log and timers. */
const Timeline = ({ id }) => {
  const v = useVersion()
  const served = useGet(`/v2/simulate/timeline/${encodeURIComponent(id)}`, [v])
  // A server without timelines, or a resource it keeps none for (a customer, an account): the event log and timers.
  const status = served.error?.status
  const fallback = status !== undefined && status >= 400 && status < 500 && status !== 401 && status !== 403 && status !== 429
  const events = useGet(fallback ? `/v2/simulate/events?resourceId=${encodeURIComponent(id)}&limit=100` : undefined, [v, fallback])
  const timers = useGet(fallback ? "/v2/simulate/timers?limit=100" : undefined, [v, fallback])
  if (!fallback) {
    if (served.error !== undefined) return html`<${ErrorNote} error=${served.error} />`
    if (served.data === undefined) return html`<p class="muted">loading…</p>`
    return html`<${VerticalTimeline} entries=${served.data.entries} waitingFor=${served.data.waitingFor} truncated=${served.data.truncated} />`
  }
  const entries = (events.data?.data ?? []).map((e) => ({ at: e.createdAt, kind: "event", summary: e.type }))
  const next = (timers.data?.data ?? []).filter((t) => t.resourceId === id)
  for (const t of next) entries.push({ at: t.dueAt, kind: "timer_scheduled", summary: t.action })
  entries.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))
  return html`<div>
    <${ErrorNote} error=${events.error?.status === 404 ? undefined : events.error} />
    <${VerticalTimeline} entries=${entries} waitingFor=${next[0] === undefined ? undefined : { description: next[0].action, at: next[0].dueAt }} />
  </div>`
}

/** A move that ends or undoes something (fail, cancel, reject, decline, remove, return): red, and asked first. */
const destructive = (label) => /\b(fail|fails|failure|cancel|reject|decline|remove|return)\b/.test(label)

/** A refusal the server words as `CODE: why`: split, so the why reads first and the code stands beside it. */
const splitRefusal = (reason) => {
  const m = /^([A-Z][A-Z0-9_]+): (.*)$/s.exec(reason)
  return m === null ? { why: reason } : { code: m[1], why: m[2] }
}
const refusalText = (reason) => {
  const { code, why } = splitRefusal(reason)
  return code === undefined ? why : `${why} (${code})`
}
const Refusal = ({ reason }) => {
  const { code, why } = splitRefusal(reason)
  return html`<span class="reason">${why}</span>${code === undefined ? null : html` <code class="reason-code">${code}</code>`}`
}

/** The resource's simulate actions as buttons, disabled with the reason where the state table refuses them. */
const Actions = ({ session, id, resource }) => {
  const v = useVersion()
  const served = useGet(`/v2/simulate/actions/${encodeURIComponent(id)}`, [v])
  const [result, setResult] = useState(undefined)
  const [busy, setBusy] = useState(false)
  const status = served.error?.status
  const fallback = status !== undefined && status >= 400 && status < 500 && status !== 401 && status !== 403 && status !== 429
  const endpoints = fallback
    ? (knownActions[prefixOf(id)]?.(id) ?? []).map(({ refusal, ...a }) => {
      const reason = refusal?.(resource)
      return reason === undefined ? { ...a, allowed: true } : { ...a, allowed: false, reason }
    })
    : served.data?.actions ?? []
  const buttons = endpoints.flatMap(variantsOf(resource))
  if (buttons.length === 0) return null
  const writable = canAct(session)
  const run = async (button) => {
    setBusy(true)
    setResult(undefined)
    try {
      await call(session, button.method, button.path, button.body)
      setResult({ ok: `${button.label}: done` })
    } catch (e) {
      setResult({ error: e })
    } finally {
      setBusy(false)
      bump()
    }
  }
  const reasonOf = (button) => (!writable ? readOnlyReason : button.allowed === false ? button.reason ?? "the state table refuses it now" : undefined)
  // The refusals, each once, with the buttons it disables (a terminal resource refuses most for one reason).
  const refusals = new Map()
  if (writable) {
    for (const button of buttons) {
      const reason = reasonOf(button)
      if (reason !== undefined) refusals.set(reason, [...(refusals.get(reason) ?? []), button.label])
    }
  }
  return html`<section class="actions">
    <h2>Actions</h2>
    <div class="buttons">
      ${buttons.map((button) => {
        const reason = reasonOf(button)
        const danger = destructive(button.label)
        const ask = () => (!danger || window.confirm(`${button.label}: ${button.method} ${button.path}. It cannot be undone. Go on?`)) && run(button)
        return html`<button class=${danger ? "danger" : ""} disabled=${busy || reason !== undefined} title=${reason === undefined ? `${button.method} ${button.path}` : refusalText(reason)} data-action=${button.label} onClick=${ask}>${button.label}</button>`
      })}
    </div>
    ${!writable ? html`<p class="reason">${readOnlyReason}</p>` : null}
    ${refusals.size > 0 ? html`<ul class="refusals">${[...refusals].map(([reason, labels]) => html`<li><strong>${labels.join(", ")}</strong>: <${Refusal} reason=${reason} /></li>`)}</ul>` : null}
    ${result?.ok ? html`<p class="ok">${result.ok}</p>` : null}
    <${ErrorNote} error=${result?.error} />
    ${fallback ? html`<p class="muted">This server does not say which moves the state table allows for this resource (GET /simulate/actions); a refused one answers its problem.</p>` : null}
  </section>`
}

const Related = ({ id, resource }) => {
  const prefix = prefixOf(id)
  if (prefix === "cus") {
    return html`<section><h2>Wallets</h2><${Paged} path=${`/v2/customers/${id}/wallets`} columns=${[idColumn(), { label: "chain", key: "chain" }, statusColumn, { label: "balances", render: (w) => balanceText(w.balances) }]} pageSize=${10} />
      <h2>Virtual accounts</h2><${Paged} path=${`/v2/customers/${id}/virtual-accounts`} columns=${[idColumn(), statusColumn, { label: "balances", render: (a) => balanceText(a.balances) }]} pageSize=${10} />
      <h2>Whitelist recipients</h2><${Paged} path=${`/v2/customers/${id}/whitelist-recipients`} columns=${[idColumn(), { label: "name", key: "name" }, { label: "rail", key: "rail" }, statusColumn]} pageSize=${10} />
      <h2>Registered addresses</h2><${Paged} path=${`/v2/customers/${id}/registered-addresses`} columns=${[idColumn(), { label: "address", key: "address" }, { label: "chain", key: "chain" }, statusColumn]} pageSize=${10} />
      <h2>Transactions</h2><${Paged} path=${`/v2/transactions?customerId=${id}`} columns=${lists.transactions.columns} pageSize=${10} /></section>`
  }
  if (prefix === "wep") return html`<section><h2>Deliveries</h2><${Paged} path=${`/v2/webhooks/deliveries?endpointId=${id}`} columns=${deliveryColumns} /></section>`
  return null
}

const Picture = ({ id, resource }) => {
  if (resource === undefined) return null
  if (prefixOf(id) === "ord") return html`<${OrderPath} order=${resource} />`
  if (prefixOf(id) === "wlt" || prefixOf(id) === "vac") return html`<${Journal} holderId=${id} assets=${(resource.balances ?? []).map((b) => b.code)} />`
  return null
}

const ResourcePage = ({ session, id }) => {
  const v = useVersion()
  const prefix = prefixOf(id)
  const kind = resourceKinds[prefix]
  const { data, error } = useGet(kind?.path?.(encodeURIComponent(id)), [v, id])
  if (!idPattern.test(id) || kind === undefined) return html`<div><h1>${id}</h1><p class="error">Not an id fos knows: ids look like txn_…, ord_…, cus_…, wdl_….</p></div>`
  if (prefix === "wdl") return html`<${Delivery} session=${session} id=${id} delivery=${data} error=${error} />`
  const heading = html`<h1><span class="muted">${kind.label}</span> <span class="mono">${id}</span> <${Status} value=${data?.status} /></h1>`
  // An id that names nothing here: the answer, and nothing of a resource that is not there (no actions, no timeline).
  if (error?.status === 404) return html`<div class="resource">${heading}<${ErrorNote} error=${error} /></div>`
  return html`<div class="resource">
    ${heading}
    <${ErrorNote} error=${error} />
    <${Actions} session=${session} id=${id} resource=${data} />
    <${Picture} id=${id} resource=${data} />
    <section><h2>Timeline</h2><${Timeline} id=${id} /></section>
    ${data !== undefined ? html`<section><h2>As the API answers it</h2><div class="detail"><${Json} value=${data} /></div></section>` : null}
    <${Related} id=${id} resource=${data} />
  </div>`
}

// --- webhooks -------------------------------------------------------------------------------------------------------

const deliveryColumns = [
  idColumn(),
  { label: "event", render: (d) => html`<span class="event-type">${d.eventType}</span>` },
  idColumn("endpointId"),
  statusColumn,
  { label: "attempts", key: "attempts" },
  { label: "next attempt", render: (d) => html`<span class="time">${time(d.nextAttemptAt)}</span>` },
  timeColumn()
]

const Webhooks = () => {
  const [status, setStatus] = useState("")
  return html`<div>
    <h1>Webhooks</h1>
    <section><h2>Endpoints</h2>
      <${Paged} path="/v2/webhooks/endpoints" columns=${[idColumn(), { label: "url", render: (e) => html`<span class="mono">${e.url}</span>` }, statusColumn, { label: "subscription", render: (e) => (e.subscription?.mode === "selected" ? e.subscription.eventTypes.join(", ") : e.subscription?.mode ?? "") }, timeColumn()]} />
    </section>
    <section><h2>Deliveries</h2>
      <label>status <select value=${status} onChange=${(e) => setStatus(e.currentTarget.value)}>
        ${["", "pending", "processing", "succeeded", "failed"].map((s) => html`<option value=${s}>${s === "" ? "any" : s}</option>`)}
      </select></label>
      <${Paged} path=${`/v2/webhooks/deliveries${status === "" ? "" : `?status=${status}`}`} columns=${deliveryColumns} />
    </section>
  </div>`
}

/** The receiver's answer to one attempt: its status, or that none came. */
const Answer = ({ status }) =>
  status === undefined || status === null ? html`<span class="http-error">no answer</span>` : html`<span class=${status >= 300 ? "http-error" : "http-ok"}>${status}</span>`

/**
 * One sandbox attempt with what it sent (GET /v2/simulate/webhooks/deliveries/{id}/attempts): the signature first,
 * then every header, the URL and the body, each as text.
 */
const SentAttempt = ({ attempt, open }) => html`<article class="attempt">
  <h3>Run ${attempt.run}, attempt ${attempt.attemptNumber} <span class="time">${time(attempt.at)}</span> <${Answer} status=${attempt.response.status} /> <span class="muted">${attempt.response.latencyMs} ms</span> ${attempt.response.error !== undefined ? html`<span class="http-error">${attempt.response.error}</span>` : null}</h3>
  ${attempt.request === undefined ? html`<p class="muted">Made before fos kept what attempts sent.</p>` : html`<div>
    <p class="attempt-signature">Signature <code class="mono">${attempt.request.headers["x-service-signature"] ?? "none"}</code></p>
    <p>POST <span class="mono">${attempt.request.url}</span></p>
    <dl class="json headers">${Object.entries(attempt.request.headers).map(([name, value]) => html`<div><dt class="mono">${name}</dt><dd class="mono">${value}</dd></div>`)}</dl>
    <details open=${open}><summary>Body (${new TextEncoder().encode(attempt.request.body).length} bytes as signed; shown indented)</summary><pre class="payload">${indented(attempt.request.body)}</pre></details>
  </div>`}
</article>`

/** A delivery's attempts: in a sandbox, with what each sent; elsewhere (a live key), the public read's. */
const Attempts = ({ session, id, delivery }) => {
  const v = useVersion()
  const sandbox = session.kind === "key" && session.environment === "sandbox"
  const sent = useGet(sandbox ? `/v2/simulate/webhooks/deliveries/${id}/attempts?limit=100` : undefined, [v, delivery.updatedAt])
  if (sandbox && sent.data !== undefined) {
    const attempts = sent.data.data
    if (attempts.length === 0) return html`<p class="muted">no attempt yet</p>`
    return html`<div>${attempts.map((a, i) => html`<${SentAttempt} attempt=${a} open=${i === attempts.length - 1} />`)}
      ${sent.data.meta.nextCursor !== null ? html`<p class="muted">The first 100 attempts are shown.</p>` : null}</div>`
  }
  return html`<div><${ErrorNote} error=${sent.error} /><${Table} rows=${delivery.attemptList} empty="no attempt yet" columns=${[
    { label: "run", key: "run" },
    { label: "#", key: "number" },
    { label: "started", render: (a) => html`<span class="time">${time(a.startedAt)}</span>` },
    { label: "receiver's status", render: (a) => html`<${Answer} status=${a.responseStatus} />` },
    { label: "latency", render: (a) => `${a.latencyMs} ms` },
    { label: "error", render: (a) => a.error ?? "" }
  ]} /></div>`
}

const Delivery = ({ session, id, delivery, error }) => {
  const event = useGet(delivery === undefined || delivery.attempts > 0 ? undefined : `/v2/simulate/events?type=${encodeURIComponent(delivery.eventType)}&sortOrder=desc&limit=100`, [delivery?.eventId])
  const body = event.data?.data?.find((e) => e.id === delivery?.eventId)
  return html`<div class="resource">
    <h1><span class="muted">Webhook delivery</span> <span class="mono">${id}</span> <${Status} value=${delivery?.status} /></h1>
    <${ErrorNote} error=${error} />
    ${delivery !== undefined ? html`<div>
      <p>Event <span class="event-type">${delivery.eventType}</span> <span class="mono">${delivery.eventId}</span> to endpoint <${IdLink} id=${delivery.endpointId} />, run ${delivery.run}, ${delivery.attempts} attempt(s)${delivery.nextAttemptAt ? `, next at ${time(delivery.nextAttemptAt)}` : ""}.</p>
      <${Actions} session=${session} id=${id} resource=${delivery} />
      <section><h2>Attempts</h2><${Attempts} session=${session} id=${id} delivery=${delivery} /></section>
      <section><h2>Timeline</h2><${Timeline} id=${id} /></section>
      ${delivery.attempts === 0 && body !== undefined ? html`<section><h2>The event to send</h2><pre class="payload">${JSON.stringify(body, null, 2)}</pre></section>` : null}
    </div>` : null}
  </div>`
}

// --- the ledger -----------------------------------------------------------------------------------------------------

const Journal = ({ holderId, assets = [] }) => {
  const v = useVersion()
  const [asset, setAsset] = useState(assets[0] ?? "")
  useEffect(() => {
    if (asset === "" && assets[0] !== undefined) setAsset(assets[0])
  }, [assets.join(",")])
  const query = asset === "" ? "" : `&asset=${encodeURIComponent(asset)}`
  const { data, error } = useGet(`/v2/simulate/ledger/accounts/${encodeURIComponent(holderId)}/journal?limit=100${query}`, [v])
  const clock = useGet("/v2/simulate/clock", [v])
  return html`<section>
    <h2>Journal ${data?.account?.id === undefined ? null : html`<span class="muted"><${Account} id=${data.account.id} /></span>`}</h2>
    ${assets.length > 1 ? html`<label>asset <select value=${asset} onChange=${(e) => setAsset(e.currentTarget.value)}>${assets.map((a) => html`<option value=${a}>${a}</option>`)}</select></label>` : null}
    ${error?.status === 404 ? html`<p class="muted">No money has moved through this account yet.</p>` : html`<${ErrorNote} error=${error} />`}
    ${data !== undefined ? html`<div>
      <p>Balance: posted ${data.account.balance.posted}, available ${data.account.balance.available}, pending ${data.account.balance.pending}, incoming ${data.account.balance.incoming} ${data.account.asset}</p>
      <${BalanceChart} entries=${data.data} asset=${data.account.asset} now=${data.meta?.nextCursor ? undefined : clock.data?.now} />
      <${Table} rows=${data.data} columns=${[
        { label: "#", key: "sequence" },
        { label: "booked", render: (e) => html`<span class="time">${time(e.createdAt)}</span>` },
        { label: "kind", key: "kind" },
        { label: "side", key: "side" },
        { label: "amount", key: "amount" },
        { label: "code", key: "code" },
        idColumn("transactionId"),
        { label: "counterparty", render: (e) => html`<${Account} id=${e.counterpartyAccountId} />` },
        { label: "posted after", render: (e) => e.balance.posted },
        { label: "available after", render: (e) => e.balance.available }
      ]} />
      ${data.meta?.nextCursor ? html`<p class="muted">Showing the first 100 of ${data.meta.total} transfers.</p>` : null}
    </div>` : null}
  </section>`
}

const Audit = ({ path }) => {
  const [result, setResult] = useState(undefined)
  const [error, setError] = useState(undefined)
  const [busy, setBusy] = useState(false)
  const run = async () => {
    setBusy(true)
    setError(undefined)
    try {
      setResult(await call(SessionContext.current, "GET", path))
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }
  return html`<section>
    <h2>Audit</h2>
    <button onClick=${run} disabled=${busy}>Run the ledger audit</button>
    <${ErrorNote} error=${error} />
    ${result !== undefined ? html`<div>
      <p class=${result.clean ? "ok" : "error"}>${result.clean ? "Clean" : `${result.violationCount} violation(s)`} at ${time(result.checkedAt)}: ${result.scanned.accounts} accounts, ${result.scanned.transfers} transfers, ${result.scanned.transactions} transactions scanned.</p>
      <${Table} rows=${result.checks} columns=${[{ label: "check", key: "name" }, { label: "what it holds", key: "description" }, { label: "violations", key: "violations" }]} />
      ${result.violations.length > 0 ? html`<${Table} rows=${result.violations} columns=${[{ label: "check", key: "check" }, { label: "detail", key: "detail" }, { label: "account", render: (v) => html`<${Account} id=${v.accountId} />` }, idColumn("transactionId")]} />` : null}
    </div>` : null}
  </section>`
}

const Ledger = ({ holderId }) => {
  const [input, setInput] = useState(holderId ?? "")
  return html`<div>
    <h1>Ledger</h1>
    <form class="inline" onSubmit=${(e) => {
      e.preventDefault()
      go("ledger", input.trim())
    }}>
      <label>Account of <input value=${input} placeholder="wlt_… or vac_…" onInput=${(e) => setInput(e.currentTarget.value)} /></label>
      <button type="submit">Show its journal</button>
    </form>
    ${holderId ? html`<${Journal} holderId=${holderId} />` : null}
    <${Audit} path="/v2/simulate/ledger/audit" />
  </div>`
}

// --- the operator's view ------------------------------------------------------------------------------------------

const Operator = ({ session, orgId }) => {
  const v = useVersion()
  const { data, error } = useGet("/operator/organizations", [v])
  const orgs = data?.data ?? []
  return html`<div class="operator">
    <h1>Organizations</h1>
    <p class="muted">Signed in with the operator token: every organization's sandbox, read through the operator surface. To act in one, sign in with one of its read-write keys.</p>
    <${ErrorNote} error=${error} />
    <${Table} rows=${orgs} columns=${[
      { label: "id", render: (o) => html`<a href=${`#/operator/${encodeURIComponent(o.id)}`}>${o.id}</a>` },
      { label: "name", key: "name" },
      statusColumn,
      { label: "features", render: (o) => (o.features ?? []).join(", ") },
      timeColumn()
    ]} />
    ${orgId !== undefined ? html`<${OperatorOrg} orgId=${orgId} />` : null}
  </div>`
}

const OperatorOrg = ({ orgId }) => {
  const at = `/operator/organizations/${encodeURIComponent(orgId)}`
  return html`<div>
    <h2>${orgId}</h2>
    <section><h3>Users</h3><${Paged} path=${`${at}/users`} columns=${[idColumn(), { label: "email", key: "email" }, { label: "role", key: "role" }, timeColumn()]} /></section>
    <section><h3>API keys</h3><${Paged} path=${`${at}/api-keys`} columns=${[{ label: "environment", key: "environment" }, { label: "access", key: "access" }, { label: "last 4", key: "last4" }, { label: "created by", key: "createdBy" }, timeColumn(), { label: "revoked", key: "revokedAt" }]} /></section>
    <section><h3>Sandbox: recent requests</h3><${Paged} path=${`${at}/requests?environment=sandbox`} columns=${requestColumns} pageSize=${10} empty="none since this process started" /></section>
    <section><h3>Sandbox: pending timers</h3><${Paged} path=${`${at}/timers`} columns=${timerColumns} pageSize=${10} /></section>
    <section><h3>Sandbox: events</h3><${Paged} path=${`${at}/events`} columns=${eventColumns} pageSize=${10} /></section>
    <${Audit} path=${`${at}/ledger/audit`} />
  </div>`
}

// --- the frame ----------------------------------------------------------------------------------------------------------

const Search = () => {
  const [value, setValue] = useState("")
  return html`<form class="search" role="search" onSubmit=${(e) => {
    e.preventDefault()
    const id = value.trim()
    if (id !== "") go("r", id)
  }}>
    <input name="search" aria-label="search by id" placeholder="Search by id: txn_…, ord_…, wdl_…" value=${value} onInput=${(e) => setValue(e.currentTarget.value)} />
    <button type="submit">Open</button>
  </form>`
}

const nav = [
  ["overview", "Overview"],
  ["customers", "Customers"],
  ["applications", "Applications"],
  ["wallets", "Wallets"],
  ["virtual-accounts", "Virtual accounts"],
  ["transactions", "Transactions"],
  ["orders", "Orders"],
  ["recipients", "Recipients"],
  ["signers", "Signers"],
  ["ceremonies", "Ceremonies"],
  ["rfis", "RFIs"],
  ["webhooks", "Webhooks"],
  ["ledger", "Ledger"],
  ["timers", "Timers"],
  ["events", "Events"]
]

const Sandbox = ({ session, route, feed }) => {
  const [view, arg] = route
  switch (view) {
    case "":
    case "overview": return html`<${Overview} session=${session} feed=${feed} />`
    case "r": return html`<${ResourcePage} session=${session} id=${arg ?? ""} key=${arg} />`
    case "webhooks": return html`<${Webhooks} />`
    case "ledger": return html`<${Ledger} holderId=${arg} key=${arg ?? ""} />`
    case "wallets": return html`<${PerCustomer} title="Wallets" sub=${["wallets"]} columns=${[idColumn(), { label: "chain", key: "chain" }, statusColumn, { label: "balances", render: (w) => balanceText(w.balances) }]} />`
    case "virtual-accounts": return html`<${PerCustomer} title="Virtual accounts" sub=${["virtual-accounts"]} columns=${[idColumn(), statusColumn, { label: "balances", render: (a) => balanceText(a.balances) }]} />`
    case "recipients": return html`<${PerCustomer} title="Recipients" sub=${["whitelist-recipients", "registered-addresses"]} columns=${[idColumn(), { label: "name or address", render: (r) => r.name ?? r.address ?? "" }, { label: "rail or chain", render: (r) => r.rail ?? r.chain ?? "" }, statusColumn]} />`
    default:
      if (lists[view] !== undefined) return html`<${ListView} name=${view} key=${view} />`
      if (eventListed[view] !== undefined) return html`<${EventListed} name=${view} key=${view} />`
      return html`<p>No such view.</p>`
  }
}

const App = () => {
  const [session, setSession] = useState(undefined)
  const [restoring, setRestoring] = useState(true)
  const route = useRoute()
  SessionContext.current = session
  // A credential kept in sessionStorage signs in again on a reload of the tab.
  useEffect(() => {
    const stored = loadStored()
    if (stored === undefined) return setRestoring(false)
    const check = stored.kind === "key" ? call(stored, "GET", "/v2/portal/users/me") : call(stored, "GET", "/operator/organizations")
    check.then((me) => setSession({ ...stored, me }), () => window.sessionStorage.removeItem(storageKey)).finally(() => setRestoring(false))
  }, [])
  const signOut = useCallback(() => {
    window.sessionStorage.removeItem(storageKey)
    setSession(undefined)
  }, [])
  if (restoring) return html`<p class="muted">…</p>`
  if (session === undefined) return html`<${SignIn} onSignedIn=${(s) => {
    SessionContext.current = s
    setSession(s)
  }} />`
  return html`<${Signed} session=${session} route=${route} signOut=${signOut} />`
}

const Signed = ({ session, route, signOut }) => {
  const feed = useLiveFeed(session)
  const operator = session.kind === "operator"
  const sandbox = session.kind === "key" && session.environment === "sandbox"
  const who = operator ? "operator" : `${session.me?.organization?.name ?? ""} · ${session.environment} · ${session.me?.apiKey?.access === "read_write" ? "read-write" : "read-only"}`
  return html`<div class="layout">
    <header>
      <a class="brand" href="#/overview">fos inspector</a>
      <span class="who">${who}</span>
      ${operator ? null : html`<${Search} />`}
      <button class="signout" onClick=${signOut}>Sign out</button>
    </header>
    ${sandbox ? html`<${Clock} session=${session} />` : null}
    <div class=${operator ? "body body-alone" : !sandbox ? "body body-wide" : "body"}>
      ${operator ? null : html`<nav>${nav.map(([view, label]) => html`<a class=${route[0] === view ? "current" : ""} href=${`#/${view}`}>${label}</a>`)}</nav>`}
      <main>
        ${operator
          ? html`<${Operator} session=${session} orgId=${route[0] === "operator" ? route[1] : undefined} />`
          : sandbox
          ? html`<${Sandbox} session=${session} route=${route} feed=${feed} />`
          : html`<${LiveView} session=${session} route=${route} />`}
      </main>
      ${sandbox ? html`<${LiveFeed} feed=${feed} />` : null}
    </div>
  </div>`
}

/** Under a live key there are no simulate endpoints: the resources only. */
const LiveView = ({ session, route }) => {
  const [view, arg] = route
  if (view === "r") return html`<${ResourcePage} session=${session} id=${arg ?? ""} key=${arg} />`
  if (lists[view] !== undefined && !lists[view].path.includes("/simulate/")) return html`<${ListView} name=${view} key=${view} />`
  if (view === "webhooks") return html`<${Webhooks} />`
  return html`<div><h1>${session.me?.organization?.name}</h1><p>A live key: the resources are listed here; the clock, timers, events and the ledger's views are the sandbox's only.</p><${Counts} /></div>`
}

render(html`<${App} />`, document.getElementById("app"))
