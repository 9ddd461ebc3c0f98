/**
 * The inspector (`/inspect`): a single-page application over the same public, sandbox and operator endpoints a
 * client uses, with the same headers (the key in `x-api-key`, an Idempotency-Key on every write). It is bundled with
 * Preact and htm by scripts/inspector-assets.ts into packages/http/src/InspectorAssets.ts, which every engine
 * serves (packages/http/src/Inspector.ts), so the user's side needs no build step and no network.
 *
 * This module is its views and its entry; beside it: api.ts (the credential, the calls, typed by the contract's
 * endpoints), ids.ts (what an id's prefix names), actions.ts (the moves offered on a resource), orderGraph.ts (the
 * order state table as drawn) and ui.ts (the small pieces every view uses).
 *
 * Security: every string from the server is rendered as text (Preact escapes it; nothing here parses markup), the
 * page runs under a Content-Security-Policy without inline script or eval, and the credential stays in this page's
 * memory, or in sessionStorage when the user asks (never in a URL: the hash holds only the view and an id).
 */
import type {
  DeliveryStatus,
  EventType,
  LedgerAudit,
  LoggedEvent,
  Me,
  Order,
  PendingTimer,
  Problem,
  RecentRequest,
  RegisteredAddress,
  TimerKind,
  Transaction,
  VirtualAccount,
  Wallet,
  WebhookDeliveryDetail,
  WebhookEndpoint,
  WhitelistRecipient
} from "@fos/contract"
import { render, type TargetedEvent } from "preact"
import { useCallback, useEffect, useState } from "preact/hooks"
import { type Button, destructive, fallbackMoves, type Move, refusalText, splitRefusal, variantsOf } from "./actions.ts"
import {
  type Answer,
  ApiError,
  baseOf,
  type Body,
  call,
  type Check,
  type DeclaredPath,
  type Failure,
  failureOf,
  headersOf,
  httpStatus,
  type KeySession,
  loadStored,
  type OperatorList,
  type OperatorOrganization,
  type OperatorPath,
  type Page,
  type Path,
  type ReadKey,
  type ReadPath,
  readsOfThisPage,
  request,
  type Row,
  type Session,
  SessionContext,
  sessionOf,
  signIn,
  storageKey,
  useGet,
  useLoad,
  useOperatorGet,
  type Whole
} from "./api.ts"
import { isResourceId, kindOf, prefixOf, type Resource, statusOf } from "./ids.ts"
import { edgeEnds, orderEdges, orderPath, type OrderState, orderStates, type PlacedState, stateHeight, stateWidth } from "./orderGraph.ts"
import {
  Account,
  bump,
  type Column,
  type Columns,
  ErrorNote,
  go,
  html,
  IdLink,
  idColumn,
  indented,
  Json,
  Paged,
  type Route,
  Status,
  statusColumn,
  Table,
  time,
  timeColumn,
  useRoute,
  useVersion
} from "./ui.ts"

/** An entry of an account's journal: a transfer, with the balance after it. */
type JournalEntry = Row<"inspect.accountJournal">

// --- signing in ------------------------------------------------------------------------------------------------------

const SignIn = ({ onSignedIn }: { readonly onSignedIn: (session: Session) => void }) => {
  const [credential, setCredential] = useState("")
  const [remember, setRemember] = useState(false)
  const [error, setError] = useState<Failure | undefined>(undefined)
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    const session = sessionOf(credential.trim())
    setBusy(true)
    setError(undefined)
    try {
      const signedIn = await signIn(session)
      if (remember) window.sessionStorage.setItem(storageKey, session.credential)
      onSignedIn(signedIn)
    } catch (e) {
      setError(failureOf(e))
    } finally {
      setBusy(false)
    }
  }
  return html`<main class="signin">
    <h1>fos inspector</h1>
    <p>Sign in with an API key of an environment (a read-only key sees, a read-write key acts) or with the server's operator token (every organization).</p>
    <form onSubmit=${submit}>
      <label>Key or operator token
        <input name="credential" type="password" autocomplete="off" value=${credential} onInput=${(e: TargetedEvent<HTMLInputElement>) => setCredential(e.currentTarget.value)} required />
      </label>
      <label class="check"><input type="checkbox" checked=${remember} onChange=${(e: TargetedEvent<HTMLInputElement>) => setRemember(e.currentTarget.checked)} /> keep it for this tab (sessionStorage)</label>
      <button type="submit" disabled=${busy}>Sign in</button>
    </form>
    <${ErrorNote} error=${error} />
  </main>`
}

// --- the clock and the live feed ---------------------------------------------------------------------------------

const canAct = (session: Session): boolean => session.kind === "key" && session.me?.apiKey?.access === "read_write"
const readOnlyReason = "this key is read-only"

/** The prefix of the engine's housekeeping timers' kinds (an idempotency record's expiry), which the views leave out. */
const housekeeping = "idempotency."
// A timer kind of the contract's starts with it: renamed there, it fails here.
export type _HousekeepingKind = Check<[Extract<TimerKind, `${typeof housekeeping}${string}`>] extends [never] ? false : true>
const isHousekeeping = (timer: PendingTimer): boolean => timer.kind.startsWith(housekeeping)

/** What the clock's last move did: an advance's report, or a run until idle. */
type ClockReport = Answer<"simulate.advanceClock"> | { readonly idle: true; readonly fired: number; readonly now: string | undefined }

const Clock = ({ session }: { readonly session: Session }) => {
  const v = useVersion()
  const { data, error } = useGet<"simulate.clock">("/v2/simulate/clock", [v])
  const [busy, setBusy] = useState(false)
  const [report, setReport] = useState<ClockReport | undefined>(undefined)
  const [failure, setFailure] = useState<Failure | undefined>(undefined)
  const writable = canAct(session)
  const advance = async (body: Body<"simulate.advanceClock">) => {
    setBusy(true)
    setFailure(undefined)
    try {
      setReport(await call<"simulate.advanceClock">(session, "POST", "/v2/simulate/clock/advance", body))
    } catch (e) {
      setFailure(failureOf(e))
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
      let last: Answer<"simulate.advanceClock"> | undefined
      for (let step = 0; step < 200; step++) {
        const timers = await call<"inspect.listTimers">(session, "GET", "/v2/simulate/timers?limit=100")
        const next = timers.data.find((t) => !isHousekeeping(t))
        if (next === undefined) break
        last = await call<"simulate.advanceClock">(session, "POST", "/v2/simulate/clock/advance", { to: next.dueAt })
        fired += last.timersFired.total
      }
      setReport({ idle: true, fired, now: last?.now })
    } catch (e) {
      setFailure(failureOf(e))
    } finally {
      setBusy(false)
      bump()
    }
  }
  if (error !== undefined) return html`<div class="clock"><${ErrorNote} error=${error} /></div>`
  const virtual = data?.mode === "virtual"
  const disabled = busy || !writable || !virtual
  const why = !writable ? readOnlyReason : !virtual ? "the server runs on the system clock" : undefined
  const button = (label: string, body: Body<"simulate.advanceClock">) => html`<button disabled=${disabled} title=${why} onClick=${() => advance(body)}>${label}</button>`
  return html`<div class="clock">
    <span class="clock-now" title="the sandbox's clock">${data === undefined ? "…" : time(data.now)}</span>
    <span class="muted">${data?.mode ?? ""}</span>
    ${button("+1 minute", { seconds: 60 })}
    ${button("advance 1 hour", { seconds: 3600 })}
    ${button("+1 day", { seconds: 86400 })}
    <button disabled=${disabled} title=${why ?? "advance to each pending timer in turn until only idempotency records' expiries are left"} onClick=${runUntilIdle}>run until idle</button>
    ${why !== undefined ? html`<span class="reason">${why}</span>` : null}
    ${report === undefined ? null : "idle" in report
      ? html`<span class="muted report">idle: fired ${report.fired} timer(s); nothing pending but idempotency records' expiries</span>`
      : html`<span class="muted report">fired ${report.timersFired.total} timer(s)${report.nextDueAt ? `, next due ${time(report.nextDueAt)}` : ", none pending"}</span>`}
    <${ErrorNote} error=${failure} />
  </div>`
}

/** Reads the server's event stream with fetch (an EventSource cannot send the key header) until aborted. */
const readStream = async (
  session: Session,
  after: string | undefined,
  signal: AbortSignal,
  onOpen: () => void,
  onMessage: (type: string, item: unknown) => void
): Promise<void> => {
  const query = after === undefined ? "" : `?after=${encodeURIComponent(after)}`
  const response = await fetch(`${baseOf(session)}${"/v2/simulate/stream" satisfies DeclaredPath<"inspect.streamSandbox">}${query}`, {
    headers: { accept: "text/event-stream", ...headersOf(session) },
    cache: "no-store",
    credentials: "omit",
    signal
  })
  // An error answer's body is a problem, as every fos error is.
  if (!response.ok) throw new ApiError(response.status, (await response.json().catch(() => undefined)) as Problem | undefined)
  onOpen()
  // An answer of 200 to a stream has a body.
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ""
  for (;;) {
    const { value, done } = await reader.read()
    if (done) return
    buffer += value.replace(/\r\n?/g, "\n")
    let end: number
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      let type = "message"
      const data: Array<string> = []
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

/** What the live feed holds: the events and requests pushed so far, newest first, and the stream's state. */
interface Feed {
  readonly events: ReadonlyArray<LoggedEvent>
  readonly requests: ReadonlyArray<RecentRequest>
  readonly state: string
}

/** The live feed: events and requests pushed by the server; every event re-reads the open views. */
const useLiveFeed = (session: Session): Feed => {
  const [events, setEvents] = useState<ReadonlyArray<LoggedEvent>>([])
  const [requests, setRequests] = useState<ReadonlyArray<RecentRequest>>([])
  const [state, setState] = useState("connecting")
  useEffect(() => {
    if (session.kind !== "key" || session.environment !== "sandbox") {
      setState("off")
      return
    }
    const controller = new AbortController()
    let stopped = false
    // A reconnected stream resumes after the last event shown (the stream's `after`), so none is lost or repeated.
    let lastEventId: string | undefined
    const run = async () => {
      for (let retry = 0; !stopped; retry++) {
        try {
          setState("connecting")
          await readStream(session, lastEventId, controller.signal, () => {
            setState("live")
            retry = 0
          }, (type, item) => {
            // The stream's `event` is an entry of the event log, its `request` one of the recent requests.
            if (type === "event") {
              const event = item as LoggedEvent
              lastEventId = event.id
              setEvents((list) => (list.some((e) => e.id === event.id) ? list : [event, ...list].slice(0, 200)))
              bump()
            } else if (type === "request") {
              setRequests((list) => [item as RecentRequest, ...list].slice(0, 200))
            }
          })
        } catch (caught) {
          if (stopped) return
          const e = failureOf(caught)
          if (e?.name === "AbortError") return
          const status = httpStatus(e)
          // The last event shown is no longer the sandbox's (a reset emptied it): resume from now on instead.
          if (status === 400 && lastEventId !== undefined) lastEventId = undefined
          if (status === 404 || status === 401 || status === 403) {
            setState(`unavailable (${status})`)
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

const LiveFeed = ({ feed }: { readonly feed: Feed }) => html`<aside class="feed" aria-label="live events">
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

const Count = ({ path, label, view }: { readonly path: ReadPath; readonly label: string; readonly view: string }) => {
  const v = useVersion()
  const { data, error } = useLoad<Page<unknown>>(`${path}${path.includes("?") ? "&" : "?"}limit=1`, [v])
  return html`<a class="count" href=${`#/${view}`}><strong>${error !== undefined ? "–" : data?.meta?.total ?? "…"}</strong><span>${label}</span></a>`
}

const Counts = () => {
  const counts: ReadonlyArray<readonly [label: string, path: ReadPath, view: string]> = [
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

const requestColumns: Columns<RecentRequest> = [
  { label: "answered (real time)", render: (r) => html`<span class="time" title="When the server answered, on the real clock: the sandbox's clock may be virtual">${time(r.time)}</span>` },
  { label: "method", key: "method" },
  { label: "path", render: (r) => html`<span class="path">${r.path}</span>` },
  { label: "status", render: (r) => html`<span class=${r.status >= 400 ? "http-error" : "http-ok"}>${r.status}</span>` },
  { label: "type", render: (r) => (r.type ? html`<span class="problem-type">${r.type}</span>` : null) },
  { label: "duration", render: (r) => `${Number(r.durationMs).toFixed(1)} ms` },
  { label: "correlation id", render: (r) => html`<span class="mono">${r.correlationId}</span>` }
]
/** Which process answered: shown once the list holds more than one (several processes sharing a PostgreSQL store). */
const processColumn: Column<RecentRequest> = { label: "process", render: (r) => html`<span class="mono" title=${r.answeredBy}>${String(r.answeredBy ?? "").slice(0, 8)}</span>` }

const RecentRequests = ({ feed }: { readonly feed: Feed }) => {
  const v = useVersion()
  const [writesOnly, setWritesOnly] = useState(false)
  const [ownReads, setOwnReads] = useState(false)
  // Drawn again as the page learns its own reads' ids, which may come after the live stream showed them.
  const [, setKnownReads] = useState(0)
  useEffect(() => readsOfThisPage.subscribe(() => setKnownReads((n) => n + 1)), [])
  const { data, error } = useGet<"inspect.listRecentRequests">("/v2/simulate/requests?limit=100", [v])
  const listed = data?.data ?? []
  const seen = new Set(listed.map((r) => r.correlationId))
  const rows = [...feed.requests.filter((r) => !seen.has(r.correlationId)), ...listed]
    .filter((r) => !writesOnly || (r.method !== "GET" && r.method !== "HEAD"))
    .filter((r) => ownReads || !readsOfThisPage.has(r.correlationId))
    .slice(0, 30)
  return html`<section>
    <h2>Recent requests
      <label class="muted toggle"><input type="checkbox" checked=${writesOnly} onChange=${(e: TargetedEvent<HTMLInputElement>) => setWritesOnly(e.currentTarget.checked)} /> writes only</label>
      <label class="muted toggle"><input type="checkbox" checked=${ownReads} onChange=${(e: TargetedEvent<HTMLInputElement>) => setOwnReads(e.currentTarget.checked)} /> this page's own reads</label>
    </h2>
    ${httpStatus(error) === 404 ? html`<p class="muted">This server does not serve the request log (GET /simulate/requests).</p>` : html`<${ErrorNote} error=${error} />`}
    ${httpStatus(error) === 404 && rows.length === 0 ? null : html`<${Table} rows=${rows} columns=${new Set(rows.map((r) => r.answeredBy)).size > 1 ? [...requestColumns, processColumn] : requestColumns} empty="no requests yet" />`}
  </section>`
}

const Overview = ({ session, feed }: { readonly session: KeySession; readonly feed: Feed }) => html`<div>
  <h1>${session.me?.organization?.name ?? "Organization"} <span class="muted">${session.me?.organization?.id} · ${session.environment}</span></h1>
  <p class="muted">Signed in as ${session.me?.user?.email} with a ${session.me?.apiKey?.access === "read_write" ? "read-write" : "read-only"} ${session.environment} key ending ${session.me?.apiKey?.last4}.</p>
  <${Counts} />
  <${RecentRequests} feed=${feed} />
  <${NextTimers} />
</div>`

/** The next business deadlines: the first page of timers less the idempotency records' expiries (all under Timers). */
const NextTimers = () => {
  const v = useVersion()
  const { data, error } = useGet<"inspect.listTimers">("/v2/simulate/timers?limit=100", [v])
  const business = (data?.data ?? []).filter((t) => !isHousekeeping(t))
  return html`<section>
    <h2>What the sandbox waits for</h2>
    <${ErrorNote} error=${error} />
    <${Table} rows=${data === undefined ? undefined : business.slice(0, 10)} columns=${timerColumns} empty="nothing pending but idempotency records' expiries" />
    <p class="muted"><a href="#/timers">Every pending timer</a>, the idempotency records' expiries included.</p>
  </section>`
}

// --- lists ----------------------------------------------------------------------------------------------------------

const timerColumns: Columns<PendingTimer> = [
  { label: "due", render: (t) => html`<span class="time">${time(t.dueAt)}</span>` },
  { label: "kind", key: "kind" },
  idColumn("resourceId"),
  { label: "what it will do", render: (t) => t.action }
]

const eventColumns: Columns<LoggedEvent> = [
  timeColumn(),
  { label: "type", render: (e) => html`<span class="event-type">${e.type}</span>` },
  idColumn("resourceId"),
  { label: "id", render: (e) => html`<span class="mono">${e.id}</span>` }
]

/** A list view: its endpoint's path, and columns of the rows it answers. */
interface ListDef<K extends ReadKey> {
  readonly title: string
  readonly path: Path<K>
  readonly empty: string
  readonly columns: Columns<Row<K>>
}

/** A transaction's amount: its source side's (every side carries one). */
const amountOf = (t: Transaction): string => `${t.source.assetAmount.amount} ${t.source.assetAmount.code}`

const lists = {
  customers: { title: "Customers", path: "/v2/customers", empty: "No customers yet: POST /v2/onboarding onboards one (with its documents from POST /v2/documents), and POST /v2/simulate/applications/{id}/decision approves it.", columns: [idColumn(), { label: "name", render: (c) => c.name }, { label: "clientReferenceId", key: "clientReferenceId" }, statusColumn, timeColumn()] } satisfies ListDef<"customers.list">,
  applications: { title: "Applications", path: "/v2/applications", empty: "No applications yet: POST /v2/onboarding makes a customer's, POST /v2/customers/{id}/features one for a wallet or a virtual account.", columns: [idColumn("applicationId"), { label: "type", render: (a) => a.applicationType }, idColumn("customerId"), statusColumn, timeColumn()] } satisfies ListDef<"applications.list">,
  transactions: { title: "Transactions", path: "/v2/transactions", empty: "No transactions yet: POST /v2/simulate/deposits sends money to a wallet or virtual account; orders and payouts make more.", columns: [idColumn(), { label: "type", key: "type" }, idColumn("customerId"), statusColumn, { label: "amount", render: (t) => amountOf(t) }, timeColumn()] } satisfies ListDef<"transactions.list">,
  orders: { title: "Orders", path: "/v2/orders", empty: "No orders yet: POST /v2/quotes prices a conversion, POST /v2/orders makes an order of one of its options, POST /v2/orders/{id}/execute runs it.", columns: [idColumn(), { label: "direction", key: "direction" }, idColumn("customerId"), statusColumn, { label: "rate", key: "rate" }, timeColumn()] } satisfies ListDef<"orders.list">,
  timers: { title: "Pending timers", path: "/v2/simulate/timers", empty: "No timer is pending: nothing waits on the clock.", columns: timerColumns } satisfies ListDef<"inspect.listTimers">,
  events: { title: "Event log", path: "/v2/simulate/events?sortOrder=desc", empty: "No events yet: every change of a resource emits one.", columns: eventColumns } satisfies ListDef<"inspect.listEvents">
}

type ListName = keyof typeof lists

/** The list view a route names, if any. */
const listNamed = (view: string | undefined): ListName | undefined =>
  view !== undefined && Object.hasOwn(lists, view) ? (view as ListName) : undefined

const ListView = ({ name }: { readonly name: ListName }) => {
  const list = lists[name]
  return html`<div><h1>${list.title}</h1><${Paged} path=${list.path} columns=${list.columns} empty=${list.empty} /></div>`
}

/**
 * Resources with no list of their own in the API, found through the event log: each event of these types names one
 * (the latest 100 of each type are read).
 */
const eventListed: { readonly [name: string]: { readonly title: string; readonly types: ReadonlyArray<EventType> } } = {
  rfis: { title: "Requests for information", types: ["rfi.published"] },
  signers: { title: "Wallet signers", types: ["wallet_signer.invited", "wallet_signer.added"] },
  ceremonies: { title: "Wallet ceremonies", types: ["wallet_ceremony.awaiting_admin_approval", "wallet_ceremony.completed", "wallet_ceremony.failed"] }
}

/** The event-listed view a route names, if any. */
const eventListedNamed = (view: string | undefined): string | undefined => (view !== undefined && Object.hasOwn(eventListed, view) ? view : undefined)

const eventListedColumns: Columns<LoggedEvent> = [idColumn("resourceId"), { label: "first seen", render: (e) => html`<span class="time">${time(e.createdAt)}</span>` }, { label: "by", render: (e) => html`<span class="event-type">${e.type}</span>` }]

const EventListed = ({ name }: { readonly name: string }) => {
  const list = eventListed[name]!
  const v = useVersion()
  const [rows, setRows] = useState<ReadonlyArray<LoggedEvent> | undefined>(undefined)
  const [error, setError] = useState<Failure | undefined>(undefined)
  useEffect(() => {
    const controller = new AbortController()
    Promise.all(list.types.map((type) => call<"inspect.listEvents">(SessionContext.current!, "GET", `/v2/simulate/events?type=${encodeURIComponent(type)}&sortOrder=desc&limit=100`, undefined, controller.signal))).then(
      (pages) => {
        const byResource = new Map<string | undefined, LoggedEvent>()
        for (const event of pages.flatMap((page) => page.data)) {
          const seen = byResource.get(event.resourceId)
          if (seen === undefined || seen.createdAt > event.createdAt) byResource.set(event.resourceId, event)
        }
        setRows([...byResource.values()].sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1)))
      },
      (caught: unknown) => {
        const e = failureOf(caught)
        if (e?.name !== "AbortError") setError(e)
      }
    )
    return () => controller.abort()
  }, [name, v])
  return html`<div>
    <h1>${list.title}</h1>
    <p class="muted">The API has no list of these: each is found by its events in the event log (${list.types.join(", ")}).</p>
    <${ErrorNote} error=${error} />
    <${Table} rows=${rows} columns=${eventListedColumns} />
  </div>`
}

/** What the API lists per customer: the `X` of its `GET /v2/customers/{customerId}/X` endpoints. */
type PerCustomerList = DeclaredPath<ReadKey> extends infer P ? P extends `/v2/customers/:customerId/${infer X}` ? X : never : never

/** Wallets, virtual accounts or recipients: listed per customer, so for each customer of the first page. */
const PerCustomer = <R,>({ title, sub, columns }: { readonly title: string; readonly sub: ReadonlyArray<PerCustomerList>; readonly columns: Columns<R> }) => {
  const v = useVersion()
  const { data: customers, error } = useGet<"customers.list">("/v2/customers?limit=20", [v])
  return html`<div>
    <h1>${title}</h1>
    <${ErrorNote} error=${error} />
    ${(customers?.data ?? []).map((c) => html`<section key=${c.id}><h3><${IdLink} id=${c.id} /> <span class="muted">${c.name ?? ""}</span></h3>
      ${sub.map((path) => html`<${Paged} path=${`/v2/customers/${c.id}/${path}`} columns=${columns} pageSize=${10} empty="none" />`)}</section>`)}
    ${customers?.data?.length === 0 ? html`<p class="muted">no customers</p>` : null}
  </div>`
}

/** A wallet's or account's balances: each available amount with its asset (and chain). */
const balanceText = (b: ReadonlyArray<Wallet["balances"][number]>): string => b.map((x) => `${x.available} ${x.code}${x.chain ? `/${x.chain}` : ""}`).join(", ")

const walletColumns: Columns<Wallet> = [idColumn(), { label: "chain", key: "chain" }, statusColumn, { label: "balances", render: (w) => balanceText(w.balances) }]
const accountColumns: Columns<VirtualAccount> = [idColumn(), statusColumn, { label: "balances", render: (a) => balanceText(a.balances) }]
const recipientColumns: Columns<WhitelistRecipient | RegisteredAddress> = [
  idColumn(),
  { label: "name or address", render: (r) => ("name" in r ? r.name : r.address) },
  { label: "rail or chain", render: (r) => ("rail" in r ? r.rail : r.chain) },
  timeColumn()
]

// --- pictures -------------------------------------------------------------------------------------------------------

/** A transaction's (or any resource's) timeline, vertically, each entry at its time; ends with what it waits for. */
/** An entry of a timeline as drawn: when, what kind, and what happened. */
interface Entry {
  readonly at: string
  readonly kind: string
  readonly summary: string
}

const VerticalTimeline = ({ entries, waitingFor, truncated }: {
  readonly entries: ReadonlyArray<Entry>
  readonly waitingFor: { readonly description: string; readonly at?: string } | undefined
  readonly truncated?: boolean
}) => html`<ol class="vtimeline" aria-label="timeline">
  ${entries.map((e) => html`<li class=${`vt-entry vt-${e.kind}`}>
    <span class="vt-dot"></span>
    <span class="time">${time(e.at)}</span>
    <span class="vt-kind">${e.kind.replace("_", " ")}</span>
    <span class="vt-summary">${e.summary}</span>
  </li>`)}
  ${truncated ? html`<li class="vt-entry"><span class="vt-dot"></span><span></span><span></span><span class="muted">(the oldest entries are left out)</span></li>` : null}
  ${waitingFor !== undefined ? html`<li class="vt-entry vt-waiting"><span class="vt-dot"></span><span class="time">${waitingFor.at ? time(waitingFor.at) : "next"}</span><span class="vt-kind">waiting for</span><span class="vt-summary">${waitingFor.description}</span></li>` : null}
</ol>`

const OrderPath = ({ order }: { readonly order: Order }) => {
  const { data: transaction } = useGet<"transactions.get">(order.transactionId ? `/v2/transactions/${order.transactionId}` : undefined, [order.transactionId])
  const path = orderPath(order, transaction)
  // Every state of the picture is placed.
  const at = Object.fromEntries(orderStates.map((s) => [s.id, s])) as Record<OrderState, PlacedState>
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
const BalanceChart = ({ entries, asset, now }: { readonly entries: ReadonlyArray<JournalEntry>; readonly asset: string | undefined; readonly now: string | undefined }) => {
  if (entries.length === 0) return null
  const points = entries.map((e) => ({ t: Date.parse(e.createdAt), posted: Number(e.balance.posted), available: Number(e.balance.available) }))
  // Not empty: its first and last points are there.
  const t0 = points[0]!.t
  // The last balance holds until the sandbox's clock now, so the latest change is not at the picture's edge.
  const t1 = Math.max(points.at(-1)!.t, now === undefined ? 0 : Date.parse(now), t0 + 1)
  const max = Math.max(1, ...points.map((p) => Math.max(p.posted, p.available)))
  const W = 640
  const H = 180
  const left = 60
  const x = (t: number) => left + ((t - t0) / (t1 - t0)) * (W - left - 10)
  const y = (v: number) => H - 20 - (v / max) * (H - 40)
  const steps = (key: "posted" | "available") => points.map((p, i) => `${i === 0 ? "M" : `H${x(p.t).toFixed(1)} V`}${i === 0 ? `${x(p.t).toFixed(1)},${y(p[key]).toFixed(1)}` : y(p[key]).toFixed(1)}`).join(" ") + ` H${W - 10}`
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
const Timeline = ({ id }: { readonly id: string }) => {
  const v = useVersion()
  const served = useGet<"inspect.resourceTimeline">(`/v2/simulate/timeline/${encodeURIComponent(id)}`, [v])
  // A server without timelines, or a resource it keeps none for (a customer, an account): the event log and timers.
  const status = httpStatus(served.error)
  const fallback = status !== undefined && status >= 400 && status < 500 && status !== 401 && status !== 403 && status !== 429
  const events = useGet<"inspect.listEvents">(fallback ? `/v2/simulate/events?resourceId=${encodeURIComponent(id)}&limit=100` : undefined, [v, fallback])
  const timers = useGet<"inspect.listTimers">(fallback ? "/v2/simulate/timers?limit=100" : undefined, [v, fallback])
  if (!fallback) {
    if (served.error !== undefined) return html`<${ErrorNote} error=${served.error} />`
    if (served.data === undefined) return html`<p class="muted">loading…</p>`
    return html`<${VerticalTimeline} entries=${served.data.entries} waitingFor=${served.data.waitingFor} truncated=${served.data.truncated} />`
  }
  const entries: Array<Entry> = (events.data?.data ?? []).map((e) => ({ at: e.createdAt, kind: "event", summary: e.type }))
  const next = (timers.data?.data ?? []).filter((t) => t.resourceId === id)
  for (const t of next) entries.push({ at: t.dueAt, kind: "timer_scheduled", summary: t.action })
  entries.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))
  return html`<div>
    <${ErrorNote} error=${httpStatus(events.error) === 404 ? undefined : events.error} />
    <${VerticalTimeline} entries=${entries} waitingFor=${next[0] === undefined ? undefined : { description: next[0].action, at: next[0].dueAt }} />
  </div>`
}

const Refusal = ({ reason }: { readonly reason: string }) => {
  const { code, why } = splitRefusal(reason)
  return html`<span class="reason">${why}</span>${code === undefined ? null : html` <code class="reason-code">${code}</code>`}`
}

/** The resource's simulate actions as buttons, disabled with the reason where the state table refuses them. */
const Actions = ({ session, id, resource }: { readonly session: Session; readonly id: string; readonly resource: Resource | undefined }) => {
  const v = useVersion()
  const served = useGet<"inspect.resourceActions">(`/v2/simulate/actions/${encodeURIComponent(id)}`, [v])
  const [result, setResult] = useState<{ readonly ok?: string; readonly error?: Failure } | undefined>(undefined)
  const [busy, setBusy] = useState(false)
  const status = httpStatus(served.error)
  const fallback = status !== undefined && status >= 400 && status < 500 && status !== 401 && status !== 403 && status !== 429
  const endpoints: ReadonlyArray<Move> = fallback ? fallbackMoves(id, resource) : served.data?.actions ?? []
  const buttons = endpoints.flatMap(variantsOf(resource))
  if (buttons.length === 0) return null
  const writable = canAct(session)
  const run = async (button: Button) => {
    setBusy(true)
    setResult(undefined)
    try {
      // The server's path (or the fallback list's): what the server named, not an endpoint written here.
      await request(session, button.method, button.path, button.body)
      setResult({ ok: `${button.label}: done` })
    } catch (e) {
      setResult({ error: failureOf(e) })
    } finally {
      setBusy(false)
      bump()
    }
  }
  const reasonOf = (button: Button) => (!writable ? readOnlyReason : button.allowed === false ? button.reason ?? "the state table refuses it now" : undefined)
  // The refusals, each once, with the buttons it disables (a terminal resource refuses most for one reason).
  const refusals = new Map<string, Array<string>>()
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

const whitelistRecipientColumns: Columns<WhitelistRecipient> = [idColumn(), { label: "name", key: "name" }, { label: "rail", key: "rail" }, timeColumn()]
const registeredAddressColumns: Columns<RegisteredAddress> = [idColumn(), { label: "address", key: "address" }, { label: "chain", key: "chain" }, timeColumn()]

const Related = ({ id }: { readonly id: string }) => {
  const prefix = prefixOf(id)
  if (prefix === "cus") {
    return html`<section><h2>Wallets</h2><${Paged} path=${`/v2/customers/${id}/wallets` satisfies Path<"wallets.list">} columns=${walletColumns} pageSize=${10} />
      <h2>Virtual accounts</h2><${Paged} path=${`/v2/customers/${id}/virtual-accounts` satisfies Path<"customers.listVirtualAccounts">} columns=${accountColumns} pageSize=${10} />
      <h2>Whitelist recipients</h2><${Paged} path=${`/v2/customers/${id}/whitelist-recipients` satisfies Path<"recipients.listWhitelistRecipients">} columns=${whitelistRecipientColumns} pageSize=${10} />
      <h2>Registered addresses</h2><${Paged} path=${`/v2/customers/${id}/registered-addresses` satisfies Path<"recipients.listRegisteredAddresses">} columns=${registeredAddressColumns} pageSize=${10} />
      <h2>Transactions</h2><${Paged} path=${`/v2/transactions?customerId=${id}` satisfies Path<"transactions.list">} columns=${lists.transactions.columns} pageSize=${10} /></section>`
  }
  if (prefix === "wep") return html`<section><h2>Deliveries</h2><${Paged} path=${`/v2/webhooks/deliveries?endpointId=${id}` satisfies Path<"webhooks.listDeliveries">} columns=${deliveryColumns} /></section>`
  return null
}

const Picture = ({ id, resource }: { readonly id: string; readonly resource: Resource | undefined }) => {
  if (resource === undefined) return null
  if (prefixOf(id) === "ord") return html`<${OrderPath} order=${resource} />`
  if (prefixOf(id) === "wlt" || prefixOf(id) === "vac") return html`<${Journal} holderId=${id} assets=${("balances" in resource ? resource.balances : []).map((b) => b.code)} />`
  return null
}

const ResourcePage = ({ session, id }: { readonly session: Session; readonly id: string }) => {
  const v = useVersion()
  const prefix = prefixOf(id)
  const kind = kindOf(prefix)
  // The path is the one its kind reads it at (ids.ts), so the answer is a Resource.
  const { data, error } = useLoad<Resource>(kind?.path?.(encodeURIComponent(id)), [v, id])
  if (!isResourceId(id) || kind === undefined) return html`<div><h1>${id}</h1><p class="error">Not an id fos knows: ids look like txn_…, ord_…, cus_…, wdl_….</p></div>`
  if (prefix === "wdl") return html`<${Delivery} session=${session} id=${id} delivery=${data} error=${error} />`
  const heading = html`<h1><span class="muted">${kind.label}</span> <span class="mono">${id}</span> <${Status} value=${statusOf(data)} /></h1>`
  // An id that names nothing here: the answer, and nothing of a resource that is not there (no actions, no timeline).
  if (httpStatus(error) === 404) return html`<div class="resource">${heading}<${ErrorNote} error=${error} /></div>`
  return html`<div class="resource">
    ${heading}
    <${ErrorNote} error=${error} />
    <${Actions} session=${session} id=${id} resource=${data} />
    <${Picture} id=${id} resource=${data} />
    <section><h2>Timeline</h2><${Timeline} id=${id} /></section>
    ${data !== undefined ? html`<section><h2>As the API answers it</h2><div class="detail"><${Json} value=${data} /></div></section>` : null}
    <${Related} id=${id} />
  </div>`
}

// --- webhooks -------------------------------------------------------------------------------------------------------

const deliveryColumns: Columns<Row<"webhooks.listDeliveries">> = [
  idColumn(),
  { label: "event", render: (d) => html`<span class="event-type">${d.eventType}</span>` },
  idColumn("endpointId"),
  statusColumn,
  { label: "attempts", key: "attempts" },
  { label: "next attempt", render: (d) => html`<span class="time">${time(d.nextAttemptAt)}</span>` },
  timeColumn()
]

const endpointColumns: Columns<WebhookEndpoint> = [idColumn(), { label: "url", render: (e) => html`<span class="mono">${e.url}</span>` }, statusColumn, { label: "subscription", render: (e) => (e.subscription?.mode === "selected" ? e.subscription.eventTypes.join(", ") : e.subscription?.mode ?? "") }, timeColumn()]

/** The deliveries' statuses, to filter by: the contract's, in its order. */
const deliveryStatuses = ["pending", "processing", "succeeded", "failed"] as const satisfies ReadonlyArray<DeliveryStatus>
// Every one: a status the contract adds fails here.
export type _EveryDeliveryStatus = Check<Whole<DeliveryStatus, typeof deliveryStatuses[number]>>

const Webhooks = () => {
  const [status, setStatus] = useState("")
  return html`<div>
    <h1>Webhooks</h1>
    <section><h2>Endpoints</h2>
      <${Paged} path=${"/v2/webhooks/endpoints" satisfies Path<"webhooks.listEndpoints">} columns=${endpointColumns} />
    </section>
    <section><h2>Deliveries</h2>
      <label>status <select value=${status} onChange=${(e: TargetedEvent<HTMLSelectElement>) => setStatus(e.currentTarget.value)}>
        ${["", ...deliveryStatuses].map((s) => html`<option value=${s}>${s === "" ? "any" : s}</option>`)}
      </select></label>
      <${Paged} path=${`/v2/webhooks/deliveries${status === "" ? "" : `?status=${status}` as const}` satisfies Path<"webhooks.listDeliveries">} columns=${deliveryColumns} />
    </section>
  </div>`
}

/** The receiver's answer to one attempt: its status, or that none came. */
const Answer = ({ status }: { readonly status: number | undefined }) =>
  status === undefined || status === null ? html`<span class="http-error">no answer</span>` : html`<span class=${status >= 300 ? "http-error" : "http-ok"}>${status}</span>`

/**
 * One sandbox attempt with what it sent (GET /v2/simulate/webhooks/deliveries/{id}/attempts): the signature first,
 * then every header, the URL and the body, each as text.
 */
const SentAttempt = ({ attempt, open }: { readonly attempt: Row<"inspect.listSentAttempts">; readonly open: boolean }) => html`<article class="attempt">
  <h3>Run ${attempt.run}, attempt ${attempt.attemptNumber} <span class="time">${time(attempt.at)}</span> <${Answer} status=${attempt.response.status} /> <span class="muted">${attempt.response.latencyMs} ms</span> ${attempt.response.error !== undefined ? html`<span class="http-error">${attempt.response.error}</span>` : null}</h3>
  ${attempt.request === undefined ? html`<p class="muted">Made before fos kept what attempts sent.</p>` : html`<div>
    <p class="attempt-signature">Signature <code class="mono">${attempt.request.headers["x-service-signature"] ?? "none"}</code></p>
    <p>POST <span class="mono">${attempt.request.url}</span></p>
    <dl class="json headers">${Object.entries(attempt.request.headers).map(([name, value]) => html`<div><dt class="mono">${name}</dt><dd class="mono">${value}</dd></div>`)}</dl>
    <details open=${open}><summary>Body (${new TextEncoder().encode(attempt.request.body).length} bytes as signed; shown indented)</summary><pre class="payload">${indented(attempt.request.body)}</pre></details>
  </div>`}
</article>`

/** A delivery's attempts: in a sandbox, with what each sent; elsewhere (a live key), the public read's. */
const attemptColumns: Columns<WebhookDeliveryDetail["attemptList"][number]> = [
  { label: "run", key: "run" },
  { label: "#", key: "number" },
  { label: "started", render: (a) => html`<span class="time">${time(a.startedAt)}</span>` },
  { label: "receiver's status", render: (a) => html`<${Answer} status=${a.responseStatus} />` },
  { label: "latency", render: (a) => `${a.latencyMs} ms` },
  { label: "error", render: (a) => a.error ?? "" }
]

const Attempts = ({ session, id, delivery }: { readonly session: Session; readonly id: string; readonly delivery: WebhookDeliveryDetail }) => {
  const v = useVersion()
  const sandbox = session.kind === "key" && session.environment === "sandbox"
  const sent = useGet<"inspect.listSentAttempts">(sandbox ? `/v2/simulate/webhooks/deliveries/${id}/attempts?limit=100` : undefined, [v, delivery.updatedAt])
  if (sandbox && sent.data !== undefined) {
    const attempts = sent.data.data
    if (attempts.length === 0) return html`<p class="muted">no attempt yet</p>`
    return html`<div>${attempts.map((a, i) => html`<${SentAttempt} attempt=${a} open=${i === attempts.length - 1} />`)}
      ${sent.data.meta.nextCursor !== null ? html`<p class="muted">The first 100 attempts are shown.</p>` : null}</div>`
  }
  return html`<div><${ErrorNote} error=${sent.error} /><${Table} rows=${delivery.attemptList} empty="no attempt yet" columns=${attemptColumns} /></div>`
}

const Delivery = ({ session, id, delivery, error }: {
  readonly session: Session
  readonly id: string
  readonly delivery: WebhookDeliveryDetail | undefined
  readonly error: Failure | undefined
}) => {
  const event = useGet<"inspect.listEvents">(delivery === undefined || delivery.attempts > 0 ? undefined : `/v2/simulate/events?type=${encodeURIComponent(delivery.eventType)}&sortOrder=desc&limit=100`, [delivery?.eventId])
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

const journalColumns: Columns<JournalEntry> = [
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
]

const Journal = ({ holderId, assets = [] }: { readonly holderId: string; readonly assets?: ReadonlyArray<string> }) => {
  const v = useVersion()
  const [asset, setAsset] = useState(assets[0] ?? "")
  useEffect(() => {
    if (asset === "" && assets[0] !== undefined) setAsset(assets[0])
  }, [assets.join(",")])
  const query = asset === "" ? "" : `&asset=${encodeURIComponent(asset)}`
  const { data, error } = useGet<"inspect.accountJournal">(`/v2/simulate/ledger/accounts/${encodeURIComponent(holderId)}/journal?limit=100${query}`, [v])
  const clock = useGet<"simulate.clock">("/v2/simulate/clock", [v])
  return html`<section>
    <h2>Journal ${data?.account?.id === undefined ? null : html`<span class="muted"><${Account} id=${data.account.id} /></span>`}</h2>
    ${assets.length > 1 ? html`<label>asset <select value=${asset} onChange=${(e: TargetedEvent<HTMLSelectElement>) => setAsset(e.currentTarget.value)}>${assets.map((a) => html`<option value=${a}>${a}</option>`)}</select></label>` : null}
    ${httpStatus(error) === 404 ? html`<p class="muted">No money has moved through this account yet.</p>` : html`<${ErrorNote} error=${error} />`}
    ${data !== undefined ? html`<div>
      <p>Balance: posted ${data.account.balance.posted}, available ${data.account.balance.available}, pending ${data.account.balance.pending}, incoming ${data.account.balance.incoming} ${data.account.asset}</p>
      <${BalanceChart} entries=${data.data} asset=${data.account.asset} now=${data.meta?.nextCursor ? undefined : clock.data?.now} />
      <${Table} rows=${data.data} columns=${journalColumns} />
      ${data.meta?.nextCursor ? html`<p class="muted">Showing the first 100 of ${data.meta.total} transfers.</p>` : null}
    </div>` : null}
  </section>`
}

const auditCheckColumns: Columns<LedgerAudit["checks"][number]> = [{ label: "check", key: "name" }, { label: "what it holds", key: "description" }, { label: "violations", key: "violations" }]
const violationColumns: Columns<LedgerAudit["violations"][number]> = [{ label: "check", key: "check" }, { label: "detail", key: "detail" }, { label: "account", render: (v) => html`<${Account} id=${v.accountId} />` }, idColumn("transactionId")]

/** The ledger audit: the sandbox's own (`GET /v2/simulate/ledger/audit`), or, for the operator, an organization's. */
const Audit = ({ path }: { readonly path: Path<"inspect.auditLedger"> | OperatorPath }) => {
  const [result, setResult] = useState<LedgerAudit | undefined>(undefined)
  const [error, setError] = useState<Failure | undefined>(undefined)
  const [busy, setBusy] = useState(false)
  const run = async () => {
    setBusy(true)
    setError(undefined)
    try {
      // Both answer the contract's LedgerAudit (the operator's read runs the same audit).
      setResult((await request(SessionContext.current!, "GET", path)) as LedgerAudit)
    } catch (e) {
      setError(failureOf(e))
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
      <${Table} rows=${result.checks} columns=${auditCheckColumns} />
      ${result.violations.length > 0 ? html`<${Table} rows=${result.violations} columns=${violationColumns} />` : null}
    </div>` : null}
  </section>`
}

const Ledger = ({ holderId }: { readonly holderId: string | undefined }) => {
  const [input, setInput] = useState(holderId ?? "")
  return html`<div>
    <h1>Ledger</h1>
    <form class="inline" onSubmit=${(e: Event) => {
      e.preventDefault()
      go("ledger", input.trim())
    }}>
      <label>Account of <input value=${input} placeholder="wlt_… or vac_…" onInput=${(e: TargetedEvent<HTMLInputElement>) => setInput(e.currentTarget.value)} /></label>
      <button type="submit">Show its journal</button>
    </form>
    ${holderId ? html`<${Journal} holderId=${holderId} />` : null}
    <${Audit} path=${"/v2/simulate/ledger/audit" satisfies Path<"inspect.auditLedger">} />
  </div>`
}

// --- the operator's view ------------------------------------------------------------------------------------------

const organizationColumns: Columns<OperatorOrganization> = [
  { label: "id", render: (o) => html`<a href=${`#/operator/${encodeURIComponent(o.id)}`}>${o.id}</a>` },
  { label: "name", key: "name" },
  statusColumn,
  { label: "features", render: (o) => (o.features ?? []).join(", ") },
  timeColumn()
]

const Operator = ({ orgId }: { readonly orgId: string | undefined }) => {
  const v = useVersion()
  const { data, error } = useOperatorGet<OperatorList<OperatorOrganization>>("/operator/organizations", [v])
  const orgs = data?.data ?? []
  return html`<div class="operator">
    <h1>Organizations</h1>
    <p class="muted">Signed in with the operator token: every organization's sandbox, read through the operator surface. To act in one, sign in with one of its read-write keys.</p>
    <${ErrorNote} error=${error} />
    <${Table} rows=${orgs} columns=${organizationColumns} />
    ${orgId !== undefined ? html`<${OperatorOrg} orgId=${orgId} />` : null}
  </div>`
}

/** A user as the operator surface lists it (`GET /operator/organizations/{id}/users`): what the inspector shows. */
interface OperatorUser {
  readonly id: string
  readonly email: string
  readonly role: Me["user"]["role"]
  readonly createdAt: string
}

/** An API key as the operator surface lists it (`GET /operator/organizations/{id}/api-keys`): never the key. */
interface OperatorApiKey {
  readonly environment: Me["apiKey"]["environment"]
  readonly access: Me["apiKey"]["access"]
  readonly last4: string
  readonly createdBy: string
  readonly createdAt: string
  readonly revokedAt: string | null
}

const userColumns: Columns<OperatorUser> = [idColumn(), { label: "email", key: "email" }, { label: "role", key: "role" }, timeColumn()]
const apiKeyColumns: Columns<OperatorApiKey> = [{ label: "environment", key: "environment" }, { label: "access", key: "access" }, { label: "last 4", key: "last4" }, { label: "created by", key: "createdBy" }, timeColumn(), { label: "revoked", render: (k) => (k.revokedAt === null ? html`<span class="muted">not revoked</span>` : html`<span class="time">${time(k.revokedAt)}</span>`) }]

const OperatorOrg = ({ orgId }: { readonly orgId: string }) => {
  const at = `/operator/organizations/${encodeURIComponent(orgId)}` satisfies OperatorPath
  return html`<div>
    <h2>${orgId}</h2>
    <section><h3>Users</h3><${Paged} path=${`${at}/users`} columns=${userColumns} /></section>
    <section><h3>API keys</h3><${Paged} path=${`${at}/api-keys`} columns=${apiKeyColumns} /></section>
    <section><h3>Sandbox: recent requests</h3><${Paged} path=${`${at}/requests?environment=sandbox`} columns=${requestColumns} pageSize=${10} empty="none since this process started" /></section>
    <section><h3>Sandbox: pending timers</h3><${Paged} path=${`${at}/timers`} columns=${timerColumns} pageSize=${10} /></section>
    <section><h3>Sandbox: events</h3><${Paged} path=${`${at}/events`} columns=${eventColumns} pageSize=${10} /></section>
    <${Audit} path=${`${at}/ledger/audit`} />
  </div>`
}

// --- the frame ----------------------------------------------------------------------------------------------------------

const Search = () => {
  const [value, setValue] = useState("")
  return html`<form class="search" role="search" onSubmit=${(e: Event) => {
    e.preventDefault()
    const id = value.trim()
    if (id !== "") go("r", id)
  }}>
    <input name="search" aria-label="search by id" placeholder="Search by id: txn_…, ord_…, wdl_…" value=${value} onInput=${(e: TargetedEvent<HTMLInputElement>) => setValue(e.currentTarget.value)} />
    <button type="submit">Open</button>
  </form>`
}

const nav: ReadonlyArray<readonly [view: string, label: string]> = [
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

const Sandbox = ({ session, route, feed }: { readonly session: KeySession; readonly route: Route; readonly feed: Feed }) => {
  const [view, arg] = route
  switch (view) {
    case "":
    case "overview": return html`<${Overview} session=${session} feed=${feed} />`
    case "r": return html`<${ResourcePage} session=${session} id=${arg ?? ""} key=${arg} />`
    case "webhooks": return html`<${Webhooks} />`
    case "ledger": return html`<${Ledger} holderId=${arg} key=${arg ?? ""} />`
    case "wallets": return html`<${PerCustomer} title="Wallets" sub=${["wallets"] satisfies ReadonlyArray<PerCustomerList>} columns=${walletColumns} />`
    case "virtual-accounts": return html`<${PerCustomer} title="Virtual accounts" sub=${["virtual-accounts"] satisfies ReadonlyArray<PerCustomerList>} columns=${accountColumns} />`
    case "recipients": return html`<${PerCustomer} title="Recipients" sub=${["whitelist-recipients", "registered-addresses"] satisfies ReadonlyArray<PerCustomerList>} columns=${recipientColumns} />`
    default:
      if (listNamed(view) !== undefined) return html`<${ListView} name=${view} key=${view} />`
      if (eventListedNamed(view) !== undefined) return html`<${EventListed} name=${view} key=${view} />`
      return html`<p>No such view.</p>`
  }
}

const App = () => {
  const [session, setSession] = useState<Session | undefined>(undefined)
  const [restoring, setRestoring] = useState(true)
  const route = useRoute()
  SessionContext.current = session
  // A credential kept in sessionStorage signs in again on a reload of the tab.
  useEffect(() => {
    const stored = loadStored()
    if (stored === undefined) return setRestoring(false)
    signIn(stored).then((signedIn) => setSession(signedIn), () => window.sessionStorage.removeItem(storageKey)).finally(() => setRestoring(false))
  }, [])
  const signOut = useCallback(() => {
    window.sessionStorage.removeItem(storageKey)
    readsOfThisPage.forget()
    setSession(undefined)
  }, [])
  if (restoring) return html`<p class="muted">…</p>`
  if (session === undefined) return html`<${SignIn} onSignedIn=${(s: Session) => {
    SessionContext.current = s
    setSession(s)
  }} />`
  return html`<${Signed} session=${session} route=${route} signOut=${signOut} />`
}

const Signed = ({ session, route, signOut }: { readonly session: Session; readonly route: Route; readonly signOut: () => void }) => {
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
      ${operator ? null : html`<nav>${nav.filter(([view]) => sandbox || liveServes(view)).map(([view, label]) => html`<a class=${route[0] === view ? "current" : ""} href=${`#/${view}`}>${label}</a>`)}</nav>`}
      <main>
        ${operator
          ? html`<${Operator} orgId=${route[0] === "operator" ? route[1] : undefined} />`
          : sandbox
          ? html`<${Sandbox} session=${session} route=${route} feed=${feed} />`
          : html`<${LiveView} session=${session} route=${route} />`}
      </main>
      ${sandbox ? html`<${LiveFeed} feed=${feed} />` : null}
    </div>
  </div>`
}

/** The views a live key has, there being no simulate endpoints there: the overview, and the resources' own lists. */
const liveServes = (view: string | undefined): boolean => {
  const list = listNamed(view)
  return view === "overview" || view === "webhooks" || (list !== undefined && !lists[list].path.includes("/simulate/"))
}

/** Under a live key there are no simulate endpoints: the resources only. */
const LiveView = ({ session, route }: { readonly session: KeySession; readonly route: Route }) => {
  const [view, arg] = route
  if (view === "r") return html`<${ResourcePage} session=${session} id=${arg ?? ""} key=${arg} />`
  if (view !== "overview" && liveServes(view)) return view === "webhooks" ? html`<${Webhooks} />` : html`<${ListView} name=${view} key=${view} />`
  return html`<div><h1>${session.me?.organization?.name}</h1><p>A live key: the resources are listed here; the clock, timers, events and the ledger's views are the sandbox's only.</p><${Counts} /></div>`
}

// The page (packages/http/src/Inspector.ts) has the element.
render(html`<${App} />`, document.getElementById("app")!)