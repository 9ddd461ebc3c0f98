/**
 * The requests a world makes for itself, over `fetch` as it is (no typed client): a fork, its saves, restores and
 * deletions, the list of its saves. These are what taking a world and the restore before each test send, so a test
 * file that calls nothing else never builds the typed client, whose import (the contract's every schema and Effect's
 * HTTP client) is most of what the package would cost it (docs/testing.md, "What a test file loads"). Internal: the
 * package's index does not export this module.
 */
import type { Problem } from "@fos/client"
import type { Fork, ListMeta, Snapshot } from "@fos/contract"
import { load } from "./Load.ts"

/** `fetch`'s signature: the global one for a server, an engine's `engine.fetch` for an embedded one. */
export type Fetch = (input: Request | string | URL, init?: RequestInit) => Promise<Response>

/** Where a request goes, and the key it carries. */
export interface Target {
  readonly baseUrl: string
  readonly apiKey: string
  readonly fetch: Fetch
}

/** The global `fetch`, read at each call (a test may replace it). */
export const globalFetch: Fetch = (input, init) => globalThis.fetch(input, init)

/** A JSON request with the key; a problem answer rejects with its `ProblemError`, as the typed client does. */
export const requestJson = async <A>(
  target: Target,
  method: string,
  path: string,
  body?: string
): Promise<A> => {
  const response = await target.fetch(`${target.baseUrl}${path}`, {
    method,
    headers: { "x-api-key": target.apiKey, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body })
  })
  const text = await response.text()
  const parsed: unknown = text === "" ? undefined : JSON.parse(text)
  if (!response.ok) {
    const problem = parsed as Problem | undefined
    if (problem !== undefined && typeof problem.type === "string") {
      // The client's class, loaded on the way to throwing it: a caller's `instanceof ProblemError` holds.
      const { ProblemError } = await load(() => import("@fos/client"))
      throw new ProblemError(problem)
    }
    throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 200)}`)
  }
  return parsed as A
}

/** `?name=value&…` of the members given, or nothing. */
export const queryOf = (members: Readonly<Record<string, string | number | undefined>>): string => {
  const given = Object.entries(members).filter((entry): entry is [string, string | number] => entry[1] !== undefined)
  return given.length === 0 ? "" : `?${given.map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join("&")}`
}

const snapshotPath = (snapshotId: string) => `/v2/simulate/snapshots/${encodeURIComponent(snapshotId)}`

/** The world's own requests, by the API's operation ids (`simulate.createSnapshot`, …). */
export const createSnapshot = (target: Target, label: string | undefined): Promise<Snapshot> =>
  requestJson(target, "POST", `/v2/simulate/snapshots${queryOf({ label })}`)

export const listSnapshots = (
  target: Target,
  query: { readonly limit?: number; readonly cursor?: string | undefined } = {}
): Promise<{ readonly data: ReadonlyArray<Snapshot>; readonly meta: ListMeta }> => requestJson(target, "GET", `/v2/simulate/snapshots${queryOf(query)}`)

export const restoreSnapshot = (target: Target, snapshotId: string): Promise<Snapshot> =>
  requestJson(target, "POST", `${snapshotPath(snapshotId)}/restore`)

export const deleteSnapshot = async (target: Target, snapshotId: string): Promise<void> => {
  await requestJson<void>(target, "DELETE", snapshotPath(snapshotId))
}

export const createFork = (target: Target, snapshotId: string, stream: string | undefined): Promise<Fork> =>
  requestJson(target, "POST", `${snapshotPath(snapshotId)}/fork${queryOf({ stream })}`)

export const deleteFork = async (target: Target, organizationId: string): Promise<void> => {
  await requestJson<void>(target, "DELETE", `/v2/simulate/forks/${encodeURIComponent(organizationId)}`)
}
