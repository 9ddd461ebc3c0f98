/**
 * The inspector (`/inspect`) in Debian's Chromium, driven by playwright-core, against the real server on a virtual
 * clock. Through the API: a customer onboarded, funded, a conversion executed and a payout sent;
 * a webhook endpoint whose receiver fails five times, so its delivery ends failed. Then, in the inspector:
 * - the payout opened by searching its id, with its timeline;
 * - "advance 1 hour" clicked: the payout settles, and its transaction.completed event appears in the live feed,
 *   pushed by the server, without a reload;
 * - the failed delivery retried;
 * - a read-only key's buttons disabled, saying why, and every view of the menu opening for it;
 * - the operator token listing the organizations; a live key seeing the live resources without a sandbox clock;
 * - a customer whose name and clientReferenceId hold markup shown as text, and the page's policy refusing inline
 *   script and eval.
 * One browser for the whole file. Screenshots of each step go to test-artifacts/inspector/ (gitignored).
 *
 * Chromium is Debian's `chromium`; without it the file is skipped, unless FOS_REQUIRE_CHROMIUM=1 (as CI sets),
 * when it fails.
 */
import { accessSync, constants, mkdirSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import { type Browser, chromium as playwright, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { killAllFos, repoRoot, type RunningFos, startFos } from "./fosProcess.ts"
import { deuSubmission } from "./submissions.ts"
import { hex64 } from "./support.ts"

const findChromium = (): string | undefined => {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(dir, "chromium")
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {
      // not in this directory
    }
  }
  return undefined
}

const chromiumPath = findChromium()
const chromiumRequired = process.env.FOS_REQUIRE_CHROMIUM === "1"
if (chromiumPath === undefined && chromiumRequired) {
  throw new Error("FOS_REQUIRE_CHROMIUM=1 but there is no chromium on the PATH (apt-get install chromium)")
}

const artifacts = join(repoRoot, "test-artifacts", "inspector")
const readWrite = `ck_sandbox_${hex64("inspector/rw")}`
const readOnly = `ck_sandbox_${hex64("inspector/ro")}`
const live = `ck_live_${hex64("inspector/live")}`

let server: RunningFos | undefined
let receiver: Server | undefined
/** The headers the receiver got, by attempt id (X-Service-Delivery-Id). */
const receivedHeaders = new Map<string, Record<string, string>>()
let browser: Browser | undefined
let origin = ""

/** A call to the sandbox API with the read-write key (and an Idempotency-Key on writes). */
let keyCounter = 0
const api = async (method: string, path: string, body?: unknown): Promise<any> => {
  const headers: Record<string, string> = { "x-api-key": readWrite }
  if (body !== undefined) headers["content-type"] = "application/json"
  if (method !== "GET") headers["idempotency-key"] = `browser-test-${++keyCounter}`
  const response = await fetch(`${origin}/sandbox${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`)
  return text === "" ? undefined : JSON.parse(text)
}

const upload = async (type: string): Promise<string> => {
  const form = new FormData()
  form.set("type", type)
  form.set("file", new Blob([new TextEncoder().encode(`%PDF-1.7\n% ${type}\n`)], { type: "application/pdf" }), `${type}.pdf`)
  const response = await fetch(`${origin}/sandbox/v2/documents`, { method: "POST", headers: { "x-api-key": readWrite }, body: form })
  expect(response.status).toBe(201)
  return (await response.json()).id
}

const advance = (seconds: number) => api("POST", "/v2/simulate/clock/advance", { seconds })

/** An approved DEU business customer, its clientReferenceId given. */
const approvedCustomer = async (clientReferenceId: string, legalName?: string): Promise<string> => {
  const docs = { register: await upload("certificate_of_incorporation"), articles: await upload("articles_of_association"), passport: await upload("passport") }
  const submission: any = deuSubmission(docs, { clientReferenceId })
  if (legalName !== undefined) submission.businessInfo.legalName = legalName
  const submitted = await api("POST", "/v2/onboarding", submission)
  return (await api("POST", `/v2/simulate/applications/${submitted.applicationId}/decision`, { outcome: "approved" })).customerId
}

const virtualAccount = async (customerId: string, code: "USD" | "EUR"): Promise<string> => {
  const applied = await api("POST", `/v2/customers/${customerId}/features`, { type: "virtual_account", asset: { code } })
  await api("POST", `/v2/simulate/applications/${applied.applicationId}/decision`, { outcome: "approved" })
  await advance(30)
  const accounts = (await api("GET", `/v2/customers/${customerId}/virtual-accounts`)).data as Array<any>
  return accounts.find((a) => JSON.stringify(a).includes(`"${code}"`)).id
}

let payoutId = ""
let deliveryId = ""
let xssCustomerId = ""
let orderId = ""
let usdAccountId = ""
const operatorToken = hex64("inspector/operator")
const scriptName = `<script>window.__xss = "script"</script>`
const imgReference = `"><img src=x onerror="window.__xss='img'">`

beforeAll(async () => {
  if (chromiumPath === undefined) return
  mkdirSync(artifacts, { recursive: true })
  // The webhook receiver on this machine: it answers 200 (the endpoint's receiver fault fails the first five).
  receiver = createServer((request, response) => {
    receivedHeaders.set(String(request.headers["x-service-delivery-id"]), { ...request.headers } as Record<string, string>)
    request.resume()
    request.on("end", () => response.writeHead(200).end("ok"))
  })
  await new Promise<void>((resolve) => receiver!.listen(0, "127.0.0.1", resolve))
  const receiverPort = (receiver.address() as { port: number }).port

  const seed = join(tmpdir(), `fos-inspector-seed-${process.pid}.json`)
  writeFileSync(seed, JSON.stringify({
    organizations: [{
      id: "org_inspector",
      name: "Inspector Test Org",
      status: "active",
      // The default rate limit: the inspector's reads stay within it.
      users: [{ id: "usr_inspectoradmin", email: "admin@inspector.example", role: "admin" }],
      apiKeys: [
        { key: readWrite, access: "read_write", createdBy: "usr_inspectoradmin" },
        { key: readOnly, access: "read_only", createdBy: "usr_inspectoradmin" },
        { key: live, access: "read_only", createdBy: "usr_inspectoradmin" }
      ]
    }]
  }))
  // A Monday noon: the foreign-exchange market is open for the conversion, and the payout goes on RTP (seconds).
  server = await startFos(["--store", "memory", "--port", "0", "--clock", "virtual", "--clock-start", "2026-03-02T12:00:00.000Z", "--seed", seed, "--insecure-webhooks", "--quiet", "--operator-token", operatorToken])
  origin = server.origin

  // A webhook endpoint for customer.created whose receiver fails the next five attempts: its delivery ends failed.
  const endpoint = await api("POST", "/v2/webhooks/endpoints", { url: `http://127.0.0.1:${receiverPort}/hooks`, subscription: { mode: "selected", eventTypes: ["customer.created"] } })
  await api("POST", `/v2/simulate/webhooks/endpoints/${endpoint.id}/faults`, { effect: { type: "status", status: 503 }, count: 5 })

  const customerId = await approvedCustomer("inspector-customer-1")
  const usd = await virtualAccount(customerId, "USD")
  const eur = await virtualAccount(customerId, "EUR")
  const deposit = await api("POST", "/v2/simulate/deposits", { destination: { type: "virtual_account", virtualAccountId: usd }, assetAmount: { code: "USD", amount: "1000.00" }, rail: "rtp" })
  await api("POST", `/v2/simulate/transactions/${deposit.id}/settle`)
  // The conversion: USD to EUR between the customer's accounts.
  const order = await api("POST", "/v2/orders", { source: { type: "virtual_account", virtualAccountId: usd }, destination: { type: "virtual_account", virtualAccountId: eur }, amount: "100", lockSide: "source" })
  await api("POST", `/v2/orders/${order.id}/execute`)
  orderId = order.id
  usdAccountId = usd
  await advance(120)
  // The five attempts of the delivery, 30 s, 2 min, 15 min and 1 h apart: then it is failed.
  await advance(2 * 3600)
  const deliveries = (await api("GET", "/v2/webhooks/deliveries")).data as Array<any>
  expect(deliveries.map((d) => [d.eventType, d.status, d.attempts])).toEqual([["customer.created", "failed", 5]])
  deliveryId = deliveries[0].id

  const recipient = await api("POST", `/v2/customers/${customerId}/whitelist-recipients`, {
    rail: "rtp",
    name: "Ada Lovelace",
    address: { line1: "1 Main St", city: "New York", state: "NY", postalCode: "10001", country: "USA" },
    routingNumber: "021000021",
    accountNumber: "123456789"
  })
  const payout = await api("POST", "/v2/payouts", {
    source: { type: "virtual_account", virtualAccountId: usd },
    destination: { type: "external_bank", whitelistRecipientId: recipient.id },
    amount: "250.00",
    purpose: "supplier_payment"
  })
  payoutId = payout.id
  expect(payout.status).toBe("pending")

  // A customer whose legal name and clientReferenceId are markup.
  xssCustomerId = await approvedCustomer(imgReference, scriptName)

  browser = await playwright.launch({
    executablePath: chromiumPath,
    // Every host but this one fails to resolve: the inspector must work with nothing from the network.
    args: ["--no-sandbox", "--disable-gpu", "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"]
  })
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  killAllFos()
  await new Promise((resolve) => (receiver === undefined ? resolve(undefined) : receiver.close(resolve)))
})

/**
 * A new page, signed in with `key`, its console errors and refused loads collected; `remember` ticks the sign-in's
 * box, which is not ticked until the user ticks it.
 */
const signedIn = async (key: string, viewport = { width: 1440, height: 900 }, { remember = false } = {}) => {
  const context = await browser!.newContext({ viewport })
  const page = await context.newPage()
  const problems: Array<string> = []
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`))
  // A request the page aborted itself (a view left before its read answered) is not a failure.
  page.on("requestfailed", (request) => {
    if (request.failure()?.errorText !== "net::ERR_ABORTED") problems.push(`requestfailed: ${request.url()} ${request.failure()?.errorText}`)
  })
  await page.goto(`${origin}/inspect`)
  await page.getByLabel("Key or operator token").fill(key)
  const box = page.getByLabel(/keep it for this tab/)
  expect(await box.isChecked()).toBe(false)
  if (remember) await box.check()
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.locator("header .who").waitFor()
  return { page, problems, close: () => context.close() }
}

/** expect.poll with room for a loaded machine (CI has two cores): its default waits one second. */
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 20_000 })

const shot = (page: Page, name: string) => page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: false })

const search = async (page: Page, id: string) => {
  await page.getByLabel("search by id").fill(id)
  await page.getByRole("button", { name: "Open" }).click()
  await page.locator("h1", { hasText: id }).waitFor()
}

describe.skipIf(chromiumPath === undefined)("the inspector in Chromium", () => {
  it("opens the payout by its id with its timeline, settles it with advance 1 hour, its event pushed to the live feed, and retries the failed delivery", async () => {
    const { page, problems, close } = await signedIn(readWrite)
    try {
      await poll(() => page.locator(".feed-state").textContent()).toBe("live")
      await shot(page, "1-overview")
      // The credential is in no URL.
      expect(page.url()).not.toContain(readWrite)

      await search(page, payoutId)
      const timeline = page.getByRole("list", { name: "timeline" })
      await poll(() => timeline.textContent()).toContain("transaction.created")
      await poll(() => page.locator("h1 .status").textContent()).toBe("pending")
      await shot(page, "2-payout-pending")

      // Nothing in the live feed yet about its completion; then one click, no reload.
      const feed = page.getByRole("complementary", { name: "live events" })
      expect(await feed.textContent()).not.toContain("transaction.completed")
      await page.getByRole("button", { name: "advance 1 hour" }).click()
      await poll(() => feed.locator(".feed-item", { hasText: "transaction.completed" }).filter({ hasText: payoutId }).count()).toBe(1)
      await poll(() => page.locator("h1 .status").textContent()).toBe("completed")
      await poll(() => timeline.textContent()).toContain("transaction.completed")
      // A completed payout settles no more: its button is disabled with the state table's refusal.
      const settle = page.locator(".actions").getByRole("button", { name: "settle", exact: true })
      await poll(() => settle.isDisabled()).toBe(true)
      // The refusal reads as words, with its code beside them, not as the code alone.
      const refusal = await settle.getAttribute("title")
      const [, why, code] = /^(.+) \(([A-Z][A-Z0-9_]+)\)$/.exec(refusal!)!
      const listed = page.locator(".refusals li", { hasText: why! })
      expect(await listed.textContent()).toContain("settle")
      expect(await listed.locator(".reason-code").textContent()).toBe(code)
      await shot(page, "3-payout-completed")

      await search(page, deliveryId)
      await poll(() => page.locator("h1 .status").textContent()).toBe("failed")
      // Each attempt with what it sent: the signature header, as the sandbox's attempts read keeps it, and the answer.
      await poll(() => page.locator(".attempt").count()).toBe(5)
      const sent = (await api("GET", `/v2/simulate/webhooks/deliveries/${deliveryId}/attempts`)).data as Array<any>
      const lastSignature = sent[4].request.headers["x-service-signature"]
      expect(lastSignature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
      const lastAttempt = page.locator(".attempt").nth(4)
      expect(await lastAttempt.locator(".attempt-signature code").isVisible()).toBe(true)
      expect(await lastAttempt.locator(".attempt-signature code").textContent()).toBe(lastSignature)
      expect(await lastAttempt.locator("h3").textContent()).toContain("503")
      // The body as signed, shown indented to be read.
      expect(await lastAttempt.locator("pre.payload").textContent()).toMatch(/^\{\n {2}"/)
      await shot(page, "4-delivery-failed")
      await page.getByRole("button", { name: "retry" }).click()
      await poll(() => page.locator("h1 .status").textContent()).toBe("succeeded")
      await poll(() => page.locator(".attempt").count()).toBe(6)
      await shot(page, "5-delivery-retried")
      const retried = (await api("GET", `/v2/webhooks/deliveries/${deliveryId}`))
      expect(retried).toMatchObject({ status: "succeeded", run: 2 })
      // The retry reached the receiver: it got the headers the attempt kept, and HTTP's own (Host, Content-Length, Connection).
      const [kept] = (await api("GET", `/v2/simulate/webhooks/deliveries/${deliveryId}/attempts?limit=1&sortOrder=desc`)).data as Array<any>
      const got = receivedHeaders.get(kept.attemptId)!
      expect(got).toEqual({ ...kept.request.headers, host: new URL(kept.request.url).host, "content-length": String(Buffer.byteLength(kept.request.body)), connection: got.connection })
      expect(["keep-alive", "close"]).toContain(got.connection)

      // The pictures: the order's path through its state table, and an account's balances over virtual time.
      await search(page, orderId)
      await poll(() => page.getByRole("img", { name: /^order path/ }).getAttribute("aria-label")).toBe("order path: new → pending → executing → sent → succeeded")
      await shot(page, "6-order-path")
      await search(page, usdAccountId)
      await page.getByRole("img", { name: "balance over virtual time" }).waitFor()
      // Accounts read as their holder and asset, not as the ledger's storage path.
      expect(await page.locator("main h2", { hasText: "Journal" }).textContent()).toContain(`virtual account ${usdAccountId} · USD`)
      const counterparties = await page.locator("main table tbody tr td:nth-child(8)").allTextContents()
      expect(counterparties.length).toBeGreaterThan(0)
      for (const text of counterparties) expect(text).toMatch(/^.+ · [A-Z]+(@\w+)?$/)
      for (const text of counterparties) expect(text).not.toContain("org_")
      await shot(page, "7-account-balances")
      await page.getByRole("link", { name: "Ledger" }).click()
      await page.getByRole("button", { name: "Run the ledger audit" }).click()
      await poll(() => page.locator("main p.ok").textContent()).toMatch(/^Clean at /)
      await page.getByRole("link", { name: "Overview" }).click()
      await page.getByRole("button", { name: "run until idle" }).click()
      await poll(() => page.locator(".clock .report").textContent()).toMatch(/^idle: /)
      expect((await api("GET", "/v2/simulate/timers?limit=100")).data.filter((t: any) => !t.kind.startsWith("idempotency."))).toEqual([])
      await shot(page, "8-overview-idle")

      expect(problems).toEqual([])
    } finally {
      await close()
    }
  }, 120_000)

  it("disables a read-only key's buttons, saying why, and opens every view for it", async () => {
    const { page, problems, close } = await signedIn(readOnly, undefined, { remember: true })
    try {
      expect(await page.locator("header .who").textContent()).toContain("read-only")
      await search(page, payoutId)
      await page.locator(".actions button").first().waitFor()
      const buttons = page.locator(".actions button")
      expect(await buttons.count()).toBeGreaterThan(0)
      for (const button of await buttons.all()) expect(await button.isDisabled()).toBe(true)
      expect(await page.locator(".actions .reason").first().textContent()).toBe("this key is read-only")
      expect(await page.getByRole("button", { name: "advance 1 hour" }).isDisabled()).toBe(true)
      await search(page, deliveryId)
      await poll(() => page.getByRole("button", { name: "retry" }).isDisabled()).toBe(true)
      await shot(page, "9-read-only")
      // Every view of the menu opens, lists, and shows no error to a read-only key.
      const views: Record<string, string> = {
        Customers: "Customers", Applications: "Applications", Wallets: "Wallets", "Virtual accounts": "Virtual accounts",
        Transactions: "Transactions", Orders: "Orders", Recipients: "Recipients", Signers: "Wallet signers",
        Ceremonies: "Wallet ceremonies", RFIs: "Requests for information", Webhooks: "Webhooks", Ledger: "Ledger",
        Timers: "Pending timers", Events: "Event log", Overview: "Inspector Test Org"
      }
      for (const [link, heading] of Object.entries(views)) {
        await page.locator("nav").getByRole("link", { name: link, exact: true }).click()
        await page.locator("main h1", { hasText: heading }).waitFor()
        // Every read the view started has answered (the page counts its calls in flight; the stream is not one).
        await page.locator("html[data-pending='0']").waitFor({ state: "attached" })
        expect(await page.locator("main .error").allTextContents(), link).toEqual([])
        // An application's id is its applicationId: its column links it, as every list's first column does.
        if (link === "Applications") expect(await page.locator("main table a.id").first().textContent()).toMatch(/^app_/)
      }
      // The key is kept for the tab (sessionStorage, as the sign-in's box says): a reload stays signed in; signing
      // out forgets it.
      await page.reload()
      await page.locator("header .who").waitFor()
      await page.getByRole("button", { name: "Sign out" }).click()
      await page.getByLabel("Key or operator token").waitFor()
      expect(await page.evaluate(() => window.sessionStorage.length)).toBe(0)
      expect(problems).toEqual([])
    } finally {
      await close()
    }
  }, 60_000)

  it("lists every organization to the operator token", async () => {
    const { page, close } = await signedIn(operatorToken)
    try {
      expect(await page.locator("header .who").textContent()).toBe("operator")
      await page.getByRole("link", { name: "org_inspector" }).click()
      await page.getByRole("heading", { name: "org_inspector" }).waitFor()
      await poll(() => page.locator("main").textContent()).toContain("admin@inspector.example")
      // Its sandbox's recent requests, read through the operator surface.
      const requests = page.locator("section", { hasText: "Sandbox: recent requests" }).locator("td .path")
      await poll(() => requests.first().textContent()).toMatch(/^\/sandbox\/v2\//)
      // A key that was never revoked says so, in words.
      const keys = page.locator("section", { hasText: "API keys" }).locator("td[data-label='revoked']")
      await poll(() => keys.count()).toBeGreaterThan(0)
      expect(new Set(await keys.allTextContents())).toEqual(new Set(["not revoked"]))
      await shot(page, "11-operator")
    } finally {
      await close()
    }
  }, 60_000)

  it("shows a live key the live environment's resources, with no sandbox clock", async () => {
    const { page, problems, close } = await signedIn(live)
    try {
      expect(await page.locator("header .who").textContent()).toContain("live")
      expect(await page.getByRole("button", { name: "advance 1 hour" }).count()).toBe(0)
      // Its navigation has the views a live key has, not the sandbox's clock, timers, events or ledger.
      expect(await page.locator("nav a").allTextContents()).toEqual(["Overview", "Customers", "Applications", "Transactions", "Orders", "Webhooks"])
      await page.locator("nav").getByRole("link", { name: "Customers", exact: true }).click()
      await page.locator("main h1", { hasText: "Customers" }).waitFor()
      await page.locator("html[data-pending='0']").waitFor({ state: "attached" })
      // An empty list says how to fill it (once its read answered: a click can come before the read is sent, when
      // no read is pending yet).
      await poll(() => page.locator("main").textContent()).toContain("No customers yet: POST /v2/onboarding")
      expect(await page.locator("main .error").allTextContents()).toEqual([])
      expect(problems).toEqual([])
    } finally {
      await close()
    }
  }, 60_000)

  it("renders markup in a customer's name and clientReferenceId as text, under a policy that refuses inline script and eval", async () => {
    const { page, problems, close } = await signedIn(readWrite)
    try {
      await page.goto(`${origin}/inspect#/customers`)
      const row = page.locator("tr", { hasText: xssCustomerId })
      await row.waitFor()
      expect(await row.textContent()).toContain(imgReference)
      await search(page, xssCustomerId)
      const detail = page.locator(".detail")
      await poll(() => detail.textContent()).toContain(scriptName)
      expect(await detail.textContent()).toContain(imgReference)
      await shot(page, "10-xss-as-text")
      // Neither became an element, and neither ran.
      expect(await page.locator("main img").count()).toBe(0)
      expect(await page.locator("main script").count()).toBe(0)
      expect(await page.evaluate(() => (window as any).__xss)).toBeUndefined()

      // The webhook body that told the receiver about that customer, as text too.
      const deliveries = (await api("GET", "/v2/webhooks/deliveries?limit=100")).data as Array<any>
      const delivered = deliveries.find((d) => d.id !== deliveryId && d.eventType === "customer.created")
      await search(page, delivered.id)
      const payload = page.locator("pre.payload")
      await poll(() => payload.textContent()).toContain(xssCustomerId)
      expect(await payload.textContent()).toContain(JSON.stringify(imgReference).slice(1, -1))
      expect(await page.locator("main img").count()).toBe(0)
      expect(await page.evaluate(() => (window as any).__xss)).toBeUndefined()

      // The page's policy: an inline script added to the page does not run, and the refusal is reported.
      const ran = await page.evaluate(() => {
        const w = window as any
        w.__violations = []
        document.addEventListener("securitypolicyviolation", (e) => w.__violations.push(e.effectiveDirective))
        const script = document.createElement("script")
        script.textContent = "window.__inline = true"
        document.body.appendChild(script)
        return w.__inline === true
      })
      expect(ran).toBe(false)
      await poll(() => page.evaluate(() => (window as any).__violations)).toContain("script-src-elem")
      const response = await page.request.get(`${origin}/inspect`)
      const policy = response.headers()["content-security-policy"]!
      expect(policy).toContain("script-src 'self'")
      expect(policy).not.toContain("unsafe-inline")
      expect(policy).not.toContain("unsafe-eval")
      expect(problems).toEqual([])
    } finally {
      await close()
    }
  }, 60_000)

  it("asks before a destructive move, answers an unknown id with its 404 alone, and lists other clients' requests without its own reads", async () => {
    const { page, problems, close } = await signedIn(readWrite)
    try {
      const deposit = await api("POST", "/v2/simulate/deposits", { destination: { type: "virtual_account", virtualAccountId: usdAccountId }, assetAmount: { code: "USD", amount: "5.00" }, rail: "rtp" })
      await search(page, deposit.id)
      await poll(() => page.locator("h1 .status").textContent()).toBe("pending")
      const fail = page.locator(".actions").getByRole("button", { name: "fail", exact: true })
      await poll(() => fail.isEnabled()).toBe(true)
      expect(await fail.getAttribute("class")).toContain("danger")
      expect(await page.locator(".actions").getByRole("button", { name: "settle", exact: true }).getAttribute("class")).not.toContain("danger")
      // Dismissed: nothing happens. Accepted: the move is made.
      page.once("dialog", (dialog) => void dialog.dismiss())
      await fail.click()
      expect((await api("GET", `/v2/transactions/${deposit.id}`)).status).toBe("pending")
      page.once("dialog", (dialog) => {
        expect(dialog.message()).toContain("cannot be undone")
        void dialog.accept()
      })
      await fail.click()
      await poll(() => page.locator("h1 .status").textContent()).toBe("failed")
      await shot(page, "12-failed-after-asking")

      // An id that names nothing: its 404, and no empty timeline or actions after it.
      const nothing = "txn_00000000000000000000000000"
      await page.getByLabel("search by id").fill(nothing)
      await page.getByRole("button", { name: "Open" }).click()
      await poll(() => page.locator("main .error").count()).toBeGreaterThan(0)
      expect(await page.locator("main h2").allTextContents()).toEqual([])
      expect(await page.locator("main .actions").count()).toBe(0)

      // The recent requests: another client's write is there, this page's own reads are not until asked for; the
      // time column says which clock it is.
      await page.locator("nav").getByRole("link", { name: "Overview" }).click()
      const recent = page.locator("section", { hasText: "Recent requests" })
      await poll(() => recent.locator("tbody tr", { hasText: "/sandbox/v2/simulate/deposits" }).count()).toBeGreaterThan(0)
      expect(await recent.locator("th").first().textContent()).toBe("answered (real time)")
      // The page's reads of the clock (not the advances, which another client of this test makes and which show).
      const reads = () => recent.locator("tbody tr").filter({ has: page.locator("td .path", { hasText: /^\/sandbox\/v2\/simulate\/clock$/ }) }).count()
      // The stream may show one of the page's reads a moment before its answer names it as the page's own.
      await poll(reads).toBe(0)
      await recent.getByLabel("this page's own reads").check()
      await poll(reads).toBeGreaterThan(0)
      // After a reload (and a new sign-in) the reads of the page before it are still known as the page's own.
      await page.reload()
      await page.getByLabel("Key or operator token").fill(readWrite)
      await page.getByRole("button", { name: "Sign in" }).click()
      await page.locator("html[data-pending='0']").waitFor({ state: "attached" })
      await poll(() => recent.locator("tbody tr", { hasText: "/sandbox/v2/simulate/deposits" }).count()).toBeGreaterThan(0)
      await poll(reads).toBe(0)
      expect(problems).toEqual([])
    } finally {
      await close()
    }
  }, 60_000)

  describe("at every size, for a key and for the operator", () => {
    /** What the layout measures: the main column's width, and whether anything is wider than the window or its box. */
    const measure = (page: Page) =>
      page.evaluate(() => {
        const main = document.querySelector("main")!.getBoundingClientRect()
        const header = document.querySelector("header")!
        const clipped = [...document.querySelectorAll("header, nav, main, .clock, .feed")]
          .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
          .map((e) => e.tagName.toLowerCase() + (e.className === "" ? "" : `.${String(e.className).split(" ")[0]}`))
        return {
          mainWidth: Math.round(main.width),
          mainLeft: Math.round(main.left),
          pageWidth: document.documentElement.scrollWidth,
          headerOverflows: header.scrollWidth > header.clientWidth + 1,
          clipped
        }
      })

    /**
     * Every view of a page at its size: how wide the page is, each table against the box it sits in, and how tall the
     * header, the clock and the navigation stand above the page and each list's rows are.
     */
    const measureView = (page: Page) =>
      page.evaluate(() => {
        const tables = [...document.querySelectorAll("main .table-wrap")].map((wrap) => {
          const rows = [...wrap.querySelectorAll("tbody tr")]
          const heading = wrap.closest("section")?.querySelector("h2, h3")?.textContent ?? document.querySelector("main h1")?.textContent ?? ""
          return {
            heading: heading.trim().slice(0, 40),
            overflow: Math.round(wrap.scrollWidth - wrap.clientWidth),
            rows: rows.length,
            perRow: rows.length === 0 ? 0 : Math.round(rows.reduce((sum, row) => sum + row.getBoundingClientRect().height, 0) / rows.length)
          }
        })
        const nav = document.querySelector("nav")
        return {
          pageWidth: document.documentElement.scrollWidth,
          // Where the page's own content starts: below the header, the clock and the navigation.
          chrome: Math.round((document.querySelector("main h1, main h2") ?? document.querySelector("main")!).getBoundingClientRect().top + window.scrollY),
          navRows: nav === null ? 0 : new Set([...nav.querySelectorAll("a")].map((a) => Math.round(a.getBoundingClientRect().top))).size,
          tables
        }
      })

    const views = () => [
      ...["overview", "customers", "applications", "wallets", "virtual-accounts", "transactions", "orders", "recipients", "signers", "ceremonies", "rfis", "webhooks", "ledger", "timers", "events"],
      `r/${payoutId}`,
      `r/${deliveryId}`,
      `r/${orderId}`,
      `ledger/${usdAccountId}`
    ]

    for (const size of [{ width: 390, height: 844 }, { width: 1440, height: 900 }] as const) {
      it(`at ${size.width} px every view is reachable from the navigation, no page is wider than the screen and every table fits its column${size.width === 390 ? ", the lists' rows as cards and the header, clock and navigation folded" : ""}`, async () => {
        const { page, problems, close } = await signedIn(readWrite, size)
        try {
          await poll(() => page.locator(".feed-state").textContent()).toBe("live")
          const found: Array<string> = []
          for (const view of views()) {
            const link = page.locator("nav a", { hasText: /./ }).and(page.locator(`a[href="#/${view}"]`))
            if ((await link.count()) === 1) await link.click() // reachable: a click brings it (scrolled into view)
            else await page.evaluate((hash) => (window.location.hash = hash), `#/${view}`)
            await page.locator("html[data-pending='0']").waitFor({ state: "attached" })
            await page.waitForTimeout(50)
            const m = await measureView(page)
            await shot(page, `view-${size.width}-${view.replace(/\//g, "-")}`)
            if (m.pageWidth > size.width) found.push(`${view}: the page is ${m.pageWidth} px wide`)
            for (const t of m.tables) {
              if (t.overflow > 1) found.push(`${view}: the table under "${t.heading}" is ${t.overflow} px wider than its column`)
              // A phone's list is cards: a few short lines a row, not a column of one word a line.
              if (size.width === 390 && t.perRow > 110) found.push(`${view}: the rows under "${t.heading}" stand ${t.perRow} px tall each (${t.rows} rows)`)
            }
            if (size.width === 390 && m.chrome > 200) found.push(`${view}: the page's content starts ${m.chrome} px down`)
            if (size.width === 390 && m.navRows > 1) found.push(`${view}: the navigation takes ${m.navRows} rows`)
          }
          // Every view of the navigation is one of those visited.
          const hrefs = await page.locator("nav a").evaluateAll((links) => links.map((a) => a.getAttribute("href")))
          expect(hrefs.filter((h) => !views().includes(String(h).slice(2)))).toEqual([])
          expect(found).toEqual([])
          expect(problems).toEqual([])
        } finally {
          await close()
        }
      }, 180_000)
    }

    const sizes = [{ name: "wide", width: 1440, height: 900 }, { name: "phone", width: 390, height: 844 }] as const
    for (const size of sizes) {
      for (const who of ["key", "operator"] as const) {
        it(`lays out at ${size.width} × ${size.height} for the ${who}: the main column takes the page, nothing overflows; its screenshot is an artifact`, async () => {
          const { page, problems, close } = await signedIn(who === "key" ? readWrite : operatorToken, { width: size.width, height: size.height })
          try {
            if (who === "operator") await page.getByRole("link", { name: "org_inspector" }).waitFor()
            else await poll(() => page.locator(".feed-state").textContent()).toBe("live")
            await page.locator("html[data-pending='0']").waitFor({ state: "attached" })
            const layout = await measure(page)
            // Wide: beside the navigation and the feed for a key (1440 - 170 - 300), the whole width for the operator,
            // who has neither. Narrow: one column, the whole width less its padding.
            const least = size.width === 1440 ? (who === "key" ? 900 : 1400) : 360
            expect(layout.mainWidth, JSON.stringify(layout)).toBeGreaterThanOrEqual(least)
            expect(layout.pageWidth, JSON.stringify(layout)).toBeLessThanOrEqual(size.width)
            expect(layout.headerOverflows, JSON.stringify(layout)).toBe(false)
            expect(layout.clipped, JSON.stringify(layout)).toEqual([])
            // The content is there to read: the operator's organizations, the key's overview.
            expect(await page.locator("main").textContent()).toMatch(who === "operator" ? /org_inspector/ : /customers/i)
            await shot(page, `layout-${size.name}-${who}`)
            expect(problems).toEqual([])
          } finally {
            await close()
          }
        }, 60_000)
      }
    }
  })
})
