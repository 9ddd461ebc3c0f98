/**
 * The pieces every view uses: the template tag, the refreshes that re-read the views, the route in the hash, and the
 * small components (an id's link, a status, an error, any JSON, a ledger account, a table and a paged list).
 *
 * Preact escapes every string it renders; nothing here parses markup. A component's props are typed where it is
 * written; htm's templates do not check what a caller passes (docs/decisions.md, "The inspector").
 */
import htm from "htm"
import { type ComponentChildren, h } from "preact"
import { useEffect, useState } from "preact/hooks"
import { ApiError, type Failure, type Page, useLoad } from "./api.ts"
import { isResourceId } from "./ids.ts"

export const html = htm.bind(h)

// --- refreshes: what changes the views ---------------------------------------------------------------------------

/** Every view re-reads when this version moves: after an action, and when the live feed brings an event. */
const refreshers = new Set<(version: number) => void>()
let version = 0
let pending: ReturnType<typeof setTimeout> | undefined
export const bump = (): void => {
  if (pending !== undefined) return
  // Coalesced: a burst of events re-reads each view once, within the organization's rate limit.
  pending = setTimeout(() => {
    pending = undefined
    version += 1
    for (const refresh of refreshers) refresh(version)
  }, 250)
}
export const useVersion = (): number => {
  const [v, setV] = useState(version)
  useEffect(() => {
    refreshers.add(setV)
    return () => refreshers.delete(setV)
  }, [])
  return v
}

// --- routing (the hash holds the view and an id, never a credential) -----------------------------------------------

/** The route: the hash's parts, `#/r/txn_…` is `["r", "txn_…"]`. */
export type Route = ReadonlyArray<string>

export const useRoute = (): Route => {
  const read = () => window.location.hash.replace(/^#\/?/, "").split("/").map((part) => decodeURIComponent(part))
  const [route, setRoute] = useState(read)
  useEffect(() => {
    const onChange = () => setRoute(read())
    window.addEventListener("hashchange", onChange)
    return () => window.removeEventListener("hashchange", onChange)
  }, [])
  return route
}

export const go = (...parts: ReadonlyArray<string>): void => {
  window.location.hash = `#/${parts.map((part) => encodeURIComponent(part)).join("/")}`
}

// --- small pieces ---------------------------------------------------------------------------------------------------

export const IdLink = ({ id }: { readonly id: string }) => html`<a class="id" href=${`#/r/${encodeURIComponent(id)}`}>${id}</a>`

export const time = (iso: unknown): string => (typeof iso === "string" ? iso.replace("T", " ").replace(/\.\d{3}Z$/, "Z") : "")

export const Status = ({ value }: { readonly value: unknown }) => (value === undefined || value === null ? null : html`<span class=${`status status-${String(value).replace(/[^a-z_]/g, "")}`}>${String(value)}</span>`)

export const ErrorNote = ({ error }: { readonly error: Failure | undefined }) => {
  if (error === undefined) return null
  // Only the server's answers carry a status and a problem; what fetch threw says its message.
  const p = error instanceof ApiError ? error.problem : undefined
  return html`<p class="error" role="alert">${!(error instanceof ApiError) ? String(error.message) : `${error.status} ${p?.type ?? ""}: ${p?.detail ?? error.message}`}</p>`
}

/** Any JSON, rendered as text; a string that is an id is a link to it. */
export const Json = ({ value }: { readonly value: unknown }) => {
  if (value === null || value === undefined) return html`<span class="json-null">${String(value)}</span>`
  if (typeof value === "string") return isResourceId(value) ? html`<${IdLink} id=${value} />` : html`<span class="json-string">${value}</span>`
  if (typeof value !== "object") return html`<span class="json-scalar">${String(value)}</span>`
  if (Array.isArray(value)) {
    if (value.length === 0) return html`<span class="json-null">[]</span>`
    return html`<ol class="json-list">${value.map((item: unknown) => html`<li><${Json} value=${item} /></li>`)}</ol>`
  }
  const entries = Object.entries(value)
  if (entries.length === 0) return html`<span class="json-null">{}</span>`
  return html`<dl class="json">${entries.map(([key, item]) => html`<div><dt>${key}</dt><dd><${Json} value=${item} /></dd></div>`)}</dl>`
}

/** JSON text indented for reading, or the text as it is when it is not JSON. */
export const indented = (text: string): string => {
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
export const Account = ({ id }: { readonly id: string | undefined }) => {
  // `org_…/sandbox/virtual_account/vac_…/USD` (the ledger's key) or `virtual_account/vac_…/USD` (a journal's).
  const all = String(id ?? "").split("/")
  const parts = all[0]?.startsWith("org_") ? all.slice(2) : all
  if (parts.length < 3) return html`<span class="mono">${id}</span>`
  // Three parts at least: a type, a holder and an asset.
  const [type, ...rest] = parts as [string, ...Array<string>]
  const asset = rest.pop()!.replace(/#\d+$/, "")
  const holder = rest.join("/")
  const named = /^[a-z]+_[0-9A-Za-z]+$/.test(holder)
    ? html`${type.replaceAll("_", " ")} <a href=${`#/r/${encodeURIComponent(holder)}`}>${holder}</a>`
    : type === "world" ? html`the outside world (${holder.replace(":", " ")})` : html`${type.replaceAll("_", " ")} ${holder}`
  return html`<span title=${id}>${named} · ${asset}</span>`
}

/** A column of a list's table: its `key` member of the row, shown as JSON, or what its `render` makes of the row. */
export type Column<R> =
  | { readonly label: string; readonly key: keyof R & string }
  | { readonly label: string; readonly render: (row: R) => ComponentChildren }

export type Columns<R> = ReadonlyArray<Column<R>>

/**
 * A list's rows as a table: each column shows its `key` member as JSON, or what its `render` makes of the row. Each
 * cell carries its column's label, which a narrow screen shows beside it when the rows become cards (app.css).
 */
export const Table = <R,>({ rows, columns, empty = "none" }: { readonly rows: ReadonlyArray<R> | undefined; readonly columns: Columns<R>; readonly empty?: string }) => {
  if (rows === undefined) return null
  if (rows.length === 0) return html`<p class="muted">${empty}</p>`
  return html`<div class="table-wrap"><table>
    <thead><tr>${columns.map((c) => html`<th>${c.label}</th>`)}</tr></thead>
    <tbody>${rows.map((row) => html`<tr>${columns.map((c) => html`<td data-label=${c.label}>${"render" in c ? c.render(row) : html`<${Json} value=${row[c.key]} />`}</td>`)}</tr>`)}</tbody>
  </table></div>`
}

/** A list endpoint, paged forward with its cursor. */
export const Paged = <R,>({ path, columns, empty, pageSize = 20 }: { readonly path: string; readonly columns: Columns<R>; readonly empty?: string; readonly pageSize?: number }) => {
  // A cursor belongs to its list and filters: another path starts on the first page.
  const [page, setPage] = useState<{ readonly path: string; readonly cursor: string | undefined }>({ path, cursor: undefined })
  const cursor = page.path === path ? page.cursor : undefined
  const setCursor = (next: string | undefined) => setPage({ path, cursor: next })
  const v = useVersion()
  const separator = path.includes("?") ? "&" : "?"
  const { data, error } = useLoad<Page<R>>(`${path}${separator}limit=${pageSize}${cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`}`, [v])
  const nextCursor = data?.meta?.nextCursor
  return html`<div>
    <${ErrorNote} error=${error} />
    <${Table} rows=${data?.data} columns=${columns} empty=${empty} />
    <div class="pager">
      ${data?.meta?.total !== undefined && data.data.length > 0 ? html`<span class="muted">${data.meta.total} in all</span>` : null}
      ${cursor !== undefined ? html`<button onClick=${() => setCursor(undefined)}>first page</button>` : null}
      ${nextCursor ? html`<button onClick=${() => setCursor(nextCursor)}>next page</button>` : null}
    </div>
  </div>`
}

/** The members of `R` that hold an id, or may. */
type IdKey<R> = { readonly [K in keyof R]-?: R[K] extends string | undefined ? K : never }[keyof R] & string

/** A column of the row's id, or of the id its `key` member holds, as a link. */
export function idColumn<R extends { readonly id: string }>(): Column<R>
export function idColumn<R>(key: IdKey<R>): Column<R>
export function idColumn<R>(key = "id"): Column<R> {
  // An id member holds a string or nothing (IdKey).
  return { label: key, render: (row) => ((row as Record<string, string | undefined>)[key] === undefined ? null : html`<${IdLink} id=${(row as Record<string, string>)[key]} />`) }
}

export const statusColumn: Column<{ readonly status: string }> = { label: "status", render: (row) => html`<${Status} value=${row.status} />` }

export const timeColumn = <R extends { readonly createdAt: string }>(): Column<R> => ({ label: "createdAt", render: (row) => html`<span class="time">${time(row.createdAt)}</span>` })
