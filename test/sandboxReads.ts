/**
 * Every read of a sandbox a client can make, for tests that compare two sandboxes (a world exported and imported, a
 * snapshot and its forks): each list and each listed resource, each account's ledger journal, each transaction's
 * timeline, the clock, the pending timers, the events and the ledger's audit, by path. Each read must answer 200.
 */
import { expect } from "vitest"
import type { Client } from "./onboardingFixtures.ts"

export const readSandbox = async (client: Client): Promise<Record<string, unknown>> => {
  const seen: Record<string, unknown> = {}
  const read = async (path: string) => {
    const r = await client.call("GET", path)
    expect(r.status, `${path}: ${r.text}`).toBe(200)
    seen[path] = r.json
    return r.json
  }
  const ids = async (path: string, key = "id") => ((await read(path)).data as Array<any>).map((item) => item[key] as string)
  for (const id of await ids("/v2/customers?limit=100")) {
    await read(`/v2/customers/${id}`)
    for (const wallet of await ids(`/v2/customers/${id}/wallets?limit=100`)) {
      await read(`/v2/wallets/${wallet}`)
      await read(`/v2/simulate/ledger/accounts/${wallet}/journal?limit=100`)
    }
    for (const account of await ids(`/v2/customers/${id}/virtual-accounts?limit=100`)) {
      await read(`/v2/virtual-accounts/${account}`)
      await read(`/v2/simulate/ledger/accounts/${account}/journal?limit=100`)
    }
    await read(`/v2/customers/${id}/registered-addresses?limit=100`)
    await read(`/v2/customers/${id}/whitelist-recipients?limit=100`)
  }
  for (const id of await ids("/v2/applications?limit=100", "applicationId")) await read(`/v2/applications/${id}`)
  for (const id of await ids("/v2/transactions?limit=100")) {
    await read(`/v2/transactions/${id}`)
    await read(`/v2/simulate/timeline/${id}`)
  }
  for (const id of await ids("/v2/orders?limit=100")) await read(`/v2/orders/${id}`)
  for (const id of await ids("/v2/webhooks/endpoints?limit=100")) await read(`/v2/webhooks/endpoints/${id}`)
  for (const id of await ids("/v2/webhooks/deliveries?limit=100")) await read(`/v2/webhooks/deliveries/${id}`)
  await read("/v2/simulate/clock")
  await read("/v2/simulate/timers?limit=100")
  await read("/v2/simulate/events?limit=100")
  await read("/v2/simulate/ledger/audit")
  return seen
}
