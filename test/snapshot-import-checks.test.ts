/**
 * An import reads back or is refused (docs/snapshots.md, "Importing"): every row of a snapshot file is checked
 * against what a read of it meets (its resource's schema, the machines' states, a timer's payload) and the ledger's
 * postings against the balances the file holds, before anything is written. A refused file names the row and member
 * and changes nothing; an accepted one reads back through the API without a 5xx. A property test imports mutated
 * files of a real journey's world and reads every row back: events, history and kept answers included (the event
 * log, the timelines, and every Idempotency-Key of the journey sent again).
 */
import { snapshotFileVersion } from "@fos/contract"
import { Timers } from "@fos/core"
import { createEngine, type Engine } from "@fos/http"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { auditLedger } from "./ledgerAudit.ts"
import { type Client, clientOf, deuDocuments, deuSubmission } from "./onboardingFixtures.ts"
import { closedAfterEach } from "./stores.ts"
import { expectProblem, keysOf, ok, orgSeed, seedOf, START_MS } from "./support.ts"

const after = closedAfterEach()
const instance = "/sandbox/v2/simulate/snapshots/import"

const open = async (): Promise<{ engine: Engine; client: Client }> => {
  const engine = after.engine(await createEngine({
    store: "memory",
    randomSeed: "import-checks",
    clock: { mode: "virtual", start: START_MS },
    realClock: Timers.makeVirtualClock(START_MS),
    webhookTransport: "memory",
    seed: seedOf(orgSeed("acme")) as never
  }))
  return { engine, client: clientOf(engine.fetch, "http://fos", keysOf("acme").sandbox) }
}

/** A journey's world: an onboarded customer with a euro virtual account and a USDC wallet, money in, a deposit open, a payout under way. */
const journey = async (rawClient: Client) => {
  let n = 0
  const key = () => ({ "idempotency-key": `journey-${++n}` })
  // Every keyed request, to send again once its world is imported: a replay reads the kept answer.
  const keyed: Array<{ readonly method: string; readonly path: string; readonly body: unknown; readonly headers: Record<string, string> }> = []
  const client: Client = {
    ...rawClient,
    call: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
      if (headers?.["idempotency-key"] !== undefined) keyed.push({ method, path, body, headers })
      return rawClient.call(method, path, body, headers)
    }
  } as Client
  await ok(client.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.acme.test/fos" }, key()), 201)
  const submitted = await ok(client.call("POST", "/v2/onboarding", deuSubmission(await deuDocuments(client), { clientReferenceId: "journey" }), key()), 201)
  const customerId = (await ok(client.call("POST", `/v2/simulate/applications/${submitted.applicationId}/decision`, { outcome: "approved" }))).customerId as string
  for (const feature of [{ type: "virtual_account", asset: { code: "EUR" } }, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } }]) {
    const applied = await ok(client.call("POST", `/v2/customers/${customerId}/features`, feature, key()), 201)
    await ok(client.call("POST", `/v2/simulate/applications/${applied.applicationId}/decision`, { outcome: "approved" }))
  }
  await ok(client.call("POST", "/v2/simulate/clock/advance", { seconds: 30 }))
  const accountId = (await ok(client.call("GET", `/v2/customers/${customerId}/virtual-accounts`))).data[0].id as string
  const wallet = await ok(client.call("POST", `/v2/customers/${customerId}/wallets`, { chain: "base" }, key()), 201)
  const euros = await ok(client.call("POST", "/v2/simulate/deposits", { destination: { type: "virtual_account", virtualAccountId: accountId }, assetAmount: { code: "EUR", amount: "100.00" } }), 201)
  await ok(client.call("POST", `/v2/simulate/transactions/${euros.id}/settle`))
  const coins = await ok(client.call("POST", "/v2/simulate/deposits", { destination: { type: "wallet", walletId: wallet.id }, assetAmount: { code: "USDC", amount: "500", chain: "base" } }), 201)
  await ok(client.call("POST", `/v2/simulate/transactions/${coins.id}/settle`))
  await ok(client.call("POST", "/v2/simulate/deposits", { destination: { type: "virtual_account", virtualAccountId: accountId }, assetAmount: { code: "EUR", amount: "5.00" } }), 201)
  const address = await ok(client.call("POST", `/v2/customers/${customerId}/registered-addresses`, { chain: "base", address: "0x52908400098527886e0f7030069857d2e4169ee7" }, key()), 201)
  await ok(client.call("POST", "/v2/payouts", {
    source: { type: "wallet", walletId: wallet.id },
    destination: { type: "registered_address", registeredAddressId: address.id },
    asset: "USDC",
    amount: "100",
    purpose: "treasury_transfer"
  }, key()), 201)
  await ok(client.call("POST", "/v2/simulate/clock/advance", { seconds: 5 }))
  const snapshot = await ok(client.call("POST", "/v2/simulate/snapshots"), 201)
  const exported = await client.call("GET", `/v2/simulate/snapshots/${snapshot.id}/export`)
  expect(exported.status, exported.text).toBe(200)
  return { text: exported.text, snapshotId: snapshot.id as string, keyed }
}

/** The journey's world as a file, built once for the file's tests: each imports it into an engine of its own. */
let built: Promise<Awaited<ReturnType<typeof journey>>> | undefined
const journeyBuilt = () =>
  built ??= (async () => {
    const { client } = await open()
    return journey(client)
  })()
const journeyFile = async (): Promise<string> => (await journeyBuilt()).text

const snapshotIds = async (client: Client) => (await ok(client.call("GET", "/v2/simulate/snapshots?limit=100"))).data.map((s: any) => s.id as string)

/**
 * Every read a client can make of the sandbox, as test/sandboxReads.ts makes them, each answering below 500 (a read
 * of a mutated world may answer 4xx: a customer whose status no longer lets its wallets be listed); answers the
 * reads that were not 2xx.
 */
const readEverything = async (client: Client): Promise<ReadonlyArray<string>> => {
  const refused: Array<string> = []
  const read = async (path: string): Promise<any> => {
    const r = await client.call("GET", path)
    expect(r.status, `${path}: ${r.text}`).toBeLessThan(500)
    if (r.status >= 300) refused.push(`${path} ${r.status}`)
    return r.status < 300 ? r.json : { data: [] }
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
    for (const recipient of await ids(`/v2/customers/${id}/registered-addresses?limit=100`)) await read(`/v2/customers/${id}/registered-addresses/${recipient}`)
    await read(`/v2/customers/${id}/whitelist-recipients?limit=100`)
  }
  for (const id of await ids("/v2/applications?limit=100", "applicationId")) await read(`/v2/applications/${id}`)
  for (const id of await ids("/v2/documents?limit=100")) await read(`/v2/documents/${id}`)
  for (const id of await ids("/v2/transactions?limit=100")) {
    await read(`/v2/transactions/${id}`)
    await read(`/v2/simulate/timeline/${id}`)
  }
  for (const id of await ids("/v2/orders?limit=100")) await read(`/v2/orders/${id}`)
  for (const id of await ids("/v2/webhooks/endpoints?limit=100")) await read(`/v2/webhooks/endpoints/${id}`)
  for (const id of await ids("/v2/webhooks/deliveries?limit=100")) {
    await read(`/v2/webhooks/deliveries/${id}`)
    await read(`/v2/simulate/timeline/${id}`)
  }
  for (const id of await ids("/v2/applications?limit=100", "applicationId")) await read(`/v2/simulate/timeline/${id}`)
  await read("/v2/simulate/clock")
  await read("/v2/simulate/timers?limit=100")
  // The whole event log, page by page, and each event by its type and resource.
  let cursor: string | null = null
  do {
    const page: any = await read(`/v2/simulate/events?limit=100${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`)
    for (const event of page.data as Array<any>) {
      if (event.resourceId !== undefined) await read(`/v2/simulate/events?resourceId=${encodeURIComponent(event.resourceId)}&type=${encodeURIComponent(event.type)}`)
    }
    cursor = page.meta?.nextCursor ?? null
  } while (cursor !== null)
  await read("/v2/simulate/ledger/audit")
  // Every kept answer, by sending its request again: a replay answers it (or a conflict), never a 5xx.
  for (const { method, path, body, headers } of (await journeyBuilt()).keyed) {
    const r = await client.call(method, path, body, headers)
    expect(r.status, `${method} ${path} again: ${r.text}`).toBeLessThan(500)
  }
  return refused
}

describe("an import reads back or is refused", () => {
  it("refuses a transaction whose status its machine does not know, a customer type the spec does not allow, and a ledger an edited amount unbalanced: with the row, and nothing written", async () => {
    const text = await journeyFile()
    const { client } = await open()
    const listed = await snapshotIds(client)
    const edited = (change: (file: any) => void) => {
      const file = JSON.parse(text)
      change(file)
      return file
    }
    const refused = async (file: unknown, expected: { type: string; status: number }) => {
      const problem = expectProblem(await client.call("POST", "/v2/simulate/snapshots/import", file), { ...expected, instance })
      expect(await snapshotIds(client)).toEqual(listed)
      return problem
    }
    const file = JSON.parse(text)
    const transaction = (file.tables.transactions as Array<any>).findIndex((t) => t.status === "completed")
    expect(transaction).toBeGreaterThanOrEqual(0)

    const banana = await refused(edited((f) => (f.tables.transactions[transaction].status = "banana")), { type: "VALIDATION_ERROR", status: 400 })
    expect(banana.errors).toEqual([{ pointer: `/tables/transactions/${transaction}/status`, detail: expect.stringContaining("must be") }])

    const robot = await refused(edited((f) => (f.tables.customers[0].type = "robot")), { type: "VALIDATION_ERROR", status: 400 })
    expect(robot.errors).toEqual([{ pointer: "/tables/customers/0/type", detail: expect.stringContaining("must be") }])

    // An application's member of another name on the wire is pointed at by its row's name.
    const application = await refused(edited((f) => (f.tables.applications[0].type = "spaceship")), { type: "VALIDATION_ERROR", status: 400 })
    expect(application.errors).toEqual([{ pointer: "/tables/applications/0/type", detail: expect.stringContaining("must be") }])

    // An amount that is not exact decimal text.
    const account = (file.tables.ledger_accounts as Array<any>).findIndex((a) => a.creditsPosted !== "0")
    const inexact = await refused(edited((f) => (f.tables.ledger_accounts[account].creditsPosted = "1e3")), { type: "VALIDATION_ERROR", status: 400 })
    expect(inexact.errors).toEqual([{ pointer: `/tables/ledger_accounts/${account}/creditsPosted`, detail: expect.stringContaining("decimal") }])

    // A posted amount edited: the balances the file holds are no longer what its transfers add up to.
    // (one whose amount the balances hold: posted, or pending and not resolved since; a resolved hold's amount is released whole)
    const transfers: Array<any> = file.tables.ledger_transfers
    const transfer = transfers.findIndex((t) => t.kind === "posted" || (t.kind === "pending" && !transfers.some((o) => o.resolves === t.id)) || t.kind === "post")
    expect(transfer).toBeGreaterThanOrEqual(0)
    const unbalanced = await refused(edited((f) => (f.tables.ledger_transfers[transfer].amount = String(BigInt(f.tables.ledger_transfers[transfer].amount) + 1n))), {
      type: "UNPROCESSABLE_ENTITY",
      status: 422
    })
    expect(unbalanced.detail).toContain("does not balance")
    expect(unbalanced.detail).toContain("/tables/ledger_accounts/")
    expect(unbalanced.detail).toContain("totals_match_transfers")

    // A timer of a kind this fos does not fire.
    const timer = await refused(edited((f) => (f.tables.timers[0].kind = "teleport")), { type: "VALIDATION_ERROR", status: 400 })
    expect(timer.errors).toEqual([{ pointer: "/tables/timers/0/kind", detail: expect.stringContaining("kind of timer") }])

    // An event of a type this fos does not send, one whose data is not its type's, and one whose sequence is no number.
    const event = (file.tables.outbox as Array<any>).findIndex((e) => e.type === "customer.created")
    expect(event).toBeGreaterThanOrEqual(0)
    const unknownEvent = await refused(edited((f) => (f.tables.outbox[event].type = "customer.teleported")), { type: "VALIDATION_ERROR", status: 400 })
    expect(unknownEvent.errors).toEqual([{ pointer: `/tables/outbox/${event}/type`, detail: expect.stringContaining("must be") }])
    const eventData = await refused(edited((f) => delete f.tables.outbox[event].data.customerId), { type: "VALIDATION_ERROR", status: 400 })
    expect(eventData.errors).toEqual([{ pointer: `/tables/outbox/${event}/data/customerId`, detail: expect.any(String) }])
    const eventSequence = await refused(edited((f) => (f.tables.outbox[event].sequence = "9")), { type: "VALIDATION_ERROR", status: 400 })
    expect(eventSequence.errors).toEqual([{ pointer: `/tables/outbox/${event}/sequence`, detail: expect.any(String) }])

    // A kept answer that cannot be replayed: no status, or a fingerprint that is no digest.
    const kept = await refused(edited((f) => (f.tables.idempotency[0].response.status = 99)), { type: "VALIDATION_ERROR", status: 400 })
    expect(kept.errors).toEqual([{ pointer: "/tables/idempotency/0/response/status", detail: expect.stringContaining("200 to 599") }])
    const fingerprint = await refused(edited((f) => (f.tables.idempotency[0].fingerprint = "banana")), { type: "VALIDATION_ERROR", status: 400 })
    expect(fingerprint.errors).toEqual([{ pointer: "/tables/idempotency/0/fingerprint", detail: expect.stringContaining("SHA-256") }])

    // A history row of a kind the timeline does not know, one whose fired timer fell due at no instant, and two
    // rows of one sequence (written under one key).
    const kind = await refused(edited((f) => (f.tables.history[0].kind = "teleport")), { type: "VALIDATION_ERROR", status: 400 })
    expect(kind.errors).toEqual([{ pointer: "/tables/history/0/kind", detail: expect.stringContaining("must be") }])
    const fired = (file.tables.history as Array<any>).findIndex((h) => h.kind === "timer_fired")
    expect(fired).toBeGreaterThanOrEqual(0)
    const due = await refused(edited((f) => (f.tables.history[fired].timer.dueAtMs = 1e300)), { type: "VALIDATION_ERROR", status: 400 })
    expect(due.errors).toEqual([{ pointer: `/tables/history/${fired}/timer/dueAtMs`, detail: expect.stringContaining("milliseconds") }])
    const twin = await refused(edited((f) => (f.tables.history[1].sequence = f.tables.history[0].sequence)), { type: "VALIDATION_ERROR", status: 400 })
    expect(twin.errors).toEqual([{ pointer: "/tables/history/1", detail: expect.stringContaining("key of row 0") }])

    // The file as exported still imports.
    await ok(client.call("POST", "/v2/simulate/snapshots/import", JSON.parse(text)), 201)
  }, 60_000)

  it("writes a file one row to a line, members in code point order: exported, imported and exported again, the same bytes; a version 1 file still imports", async () => {
    const text = await journeyFile()
    const { client } = await open()
    const lines = text.split("\n")
    expect(lines.slice(0, 4)).toEqual(["{", "  \"format\": \"fos-snapshot\",", `  "version": ${snapshotFileVersion},`, expect.stringMatching(/^  "fosVersion": "\d+\.\d+\.\d+",$/)])
    expect(lines.at(-1)).toBe("")
    const file = JSON.parse(text)
    const rowLines = lines.filter((line) => line.startsWith("      {"))
    expect(rowLines).toHaveLength(Object.values(file.tables as Record<string, Array<unknown>>).reduce((n, rows) => n + rows.length, 0))
    // Each row's members (and theirs) in code point order.
    const sorted = (value: unknown): boolean =>
      Array.isArray(value) ? value.every(sorted) : value !== null && typeof value === "object"
        ? Object.keys(value).every((k, i, all) => i === 0 || all[i - 1]! < k) && Object.values(value).every(sorted)
        : true
    expect(Object.values(file.tables).every(sorted)).toBe(true)

    expect(file.tables.history.length).toBeGreaterThan(0)
    const imported = await ok(client.call("POST", "/v2/simulate/snapshots/import", file), 201)
    const again = await client.call("GET", `/v2/simulate/snapshots/${imported.id}/export`)
    expect(again.status, again.text).toBe(200)
    expect(again.text).toBe(text)
    // Restored, and imported and exported once more, still the same bytes: the history's keys in the store are not
    // the file's, and the file's are what it wrote.
    await ok(client.call("POST", `/v2/simulate/snapshots/${imported.id}/restore`))
    const twice = await ok(client.call("POST", "/v2/simulate/snapshots/import", JSON.parse(again.text)), 201)
    expect((await client.call("GET", `/v2/simulate/snapshots/${twice.id}/export`)).text).toBe(text)
    // A world without a clock of its own gets one at import; its export leaves it out again.
    const clockless = JSON.parse(text)
    delete clockless.tables.clocks
    const withoutClock = await ok(client.call("POST", "/v2/simulate/snapshots/import", clockless), 201)
    expect(JSON.parse((await client.call("GET", `/v2/simulate/snapshots/${withoutClock.id}/export`)).text)).toEqual(clockless)

    // A file of the format's first version (no `data`, one line) imports as it did.
    const first = await ok(client.call("POST", "/v2/simulate/snapshots/import", { ...file, version: 1 }), 201)
    await ok(client.call("POST", `/v2/simulate/snapshots/${first.id}/restore`))
  }, 60_000)

  it("imports a mutated file of a journey's world only if every row reads back: refused with a pointer and nothing written, or read back without a 5xx", async () => {
    const text = await journeyFile()
    const { engine, client } = await open()
    const original = JSON.parse(text)
    const tables = Object.keys(original.tables).filter((name) => original.tables[name].length > 0)
    const junk = fc.oneof(fc.constant("banana"), fc.constant(-1), fc.constant(null), fc.constant(true), fc.constant({}), fc.constant([]), fc.constant("1.5"), fc.constant("12abc"))
    const mutation = fc.oneof(
      fc.record({ kind: fc.constant("set" as const), value: junk }),
      fc.record({ kind: fc.constant("drop" as const) }),
      fc.record({ kind: fc.constant("add" as const), value: junk }),
      fc.record({ kind: fc.constant("amount" as const), delta: fc.integer({ min: -3, max: 3 }).filter((d) => d !== 0) }),
      fc.record({ kind: fc.constant("swapAccounts" as const) }),
      fc.record({ kind: fc.constant("duplicate" as const) })
    )
    // Half the cases on the rows reads meet last (events, history, kept answers), half on any table.
    const later = ["outbox", "history", "idempotency"].filter((name) => tables.includes(name))
    expect(later).toHaveLength(3)
    const cases = fc.record({ table: fc.oneof(fc.constantFrom(...later), fc.constantFrom(...tables)), row: fc.nat(), member: fc.nat(), mutation })
    const outcomes = { refused: 0, imported: 0 }
    await fc.assert(
      fc.asyncProperty(cases, async ({ table, row: rowPick, member: memberPick, mutation }) => {
        const file = JSON.parse(text)
        const rows: Array<any> = file.tables[table]
        const row = rows[rowPick % rows.length]
        const members = Object.keys(row)
        const name = members[memberPick % members.length]!
        switch (mutation.kind) {
          case "set":
            row[name] = mutation.value
            break
          case "drop":
            delete row[name]
            break
          case "add":
            row[`extra${memberPick % 3}`] = mutation.value
            break
          case "amount": {
            const transfers: Array<any> = file.tables.ledger_transfers
            const t = transfers[rowPick % transfers.length]
            t.amount = String(BigInt(t.amount) + BigInt(mutation.delta))
            break
          }
          case "swapAccounts": {
            const transfers: Array<any> = file.tables.ledger_transfers
            const t = transfers[rowPick % transfers.length]
            ;[t.debitAccountId, t.creditAccountId] = [t.creditAccountId, t.debitAccountId]
            break
          }
          case "duplicate":
            rows.push({ ...row })
            break
        }
        const before = await snapshotIds(client)
        const r = await client.call("POST", "/v2/simulate/snapshots/import", file)
        expect(r.status, r.text).not.toBeGreaterThanOrEqual(500)
        if (r.status !== 201) {
          outcomes.refused++
          const problem = expectProblem(r, r.status === 400 ? { type: "VALIDATION_ERROR", status: 400, instance } : { type: "UNPROCESSABLE_ENTITY", status: 422, instance })
          if (r.status === 400) expect(problem.errors.every((e: any) => e.pointer.startsWith("/tables/"))).toBe(true)
          else expect(problem.detail).toMatch(/\/tables\//)
          expect(await snapshotIds(client)).toEqual(before)
          return
        }
        outcomes.imported++
        await ok(client.call("POST", `/v2/simulate/snapshots/${r.json.id}/restore`))
        await readEverything(client)
        expect(await auditLedger(engine, "org_acme/sandbox")).toEqual([])
        // Time moves on the imported world: its timers fire (or are kept aside) without a 5xx, and it reads back still.
        const advanced = await client.call("POST", "/v2/simulate/clock/advance", { seconds: 3 * 86_400 })
        expect(advanced.status, advanced.text).toBeLessThan(500)
        await readEverything(client)
        await ok(client.call("DELETE", `/v2/simulate/snapshots/${r.json.id}`), 204)
      }),
      { numRuns: 40, seed: 55, endOnFailure: true }
    )
    // Both outcomes are exercised: the property is not vacuous either way.
    expect(outcomes.refused).toBeGreaterThan(0)
    expect(outcomes.imported).toBeGreaterThan(0)
  }, 120_000)
})
