/**
 * The demo organization's customer: what a first start makes so that a first deposit is one command away (README,
 * "A first deposit, order and payout"). A US company, onboarded and approved for a USDC wallet on Base and a USD
 * virtual account, with both made.
 *
 * It is made through the API, with the demo's own sandbox key, exactly as an integration would make it: three
 * documents uploaded, the onboarding submitted, each application decided through the sandbox's decision call, the
 * wallet created. So every resource, event and ledger account is one the API makes, and nothing here knows a table.
 * A virtual account activates 30 seconds after its approval, as in the real service; on a virtual clock the demo's
 * sandbox clock is advanced by that much, so the account is active when the start lines print. On the system clock
 * it is active 30 seconds after the first start. With `--random-seed` every id comes out the same at every run.
 */
import type { Engine } from "@fos/http"

/** What the start lines name, and the quick start's commands use. */
export interface DemoCustomer {
  readonly customerId: string
  readonly walletId: string
  readonly walletAddress: string
  readonly virtualAccountId: string
  readonly virtualAccountActive: boolean
}

const address = { line1: "100 Market Street", city: "San Francisco", state: "CA", postalCode: "94105", country: "USA" }

/** A complete US submission (GET /v2/onboarding/requirements?country=USA): one document, one owner who controls. */
const submission = (documents: { readonly incorporation: string; readonly passport: string }) => ({
  country: "USA",
  businessInfo: {
    legalName: "Demo Widgets LLC",
    taxId: "12-3456789",
    incorporationDate: "2020-01-15",
    registeredAddress: address
  },
  documentIds: [documents.incorporation],
  ownership: {
    persons: [{
      referenceId: "owner-1",
      roles: ["owner", "controller"],
      ownershipPercent: 100,
      firstName: "Ada",
      lastName: "Demo",
      dateOfBirth: "1985-06-15",
      nationality: "USA",
      email: "ada@demo.fos.test",
      address,
      taxId: "123-45-6789",
      documentIds: [documents.passport]
    }]
  },
  companyClassification: { legalStructure: "llc", primaryIndustry: "software" },
  clientReferenceId: "demo-widgets"
})

/** The demo failed to be made: the answer that refused it. */
export class DemoRefused extends Error {}

/** Makes the demo customer in the sandbox `sandboxKey` opens, through `engine.fetch`. */
export const makeDemoCustomer = async (engine: Engine, sandboxKey: string, clock: "virtual" | "system"): Promise<DemoCustomer> => {
  const origin = `http://fos${engine.basePath}/sandbox/v2`
  let keys = 0
  const call = async (method: string, path: string, body?: unknown, idempotent = false): Promise<any> => {
    const headers: Record<string, string> = { "x-api-key": sandboxKey }
    if (idempotent) headers["idempotency-key"] = `demo-${++keys}`
    let payload: BodyInit | undefined
    if (body instanceof FormData) payload = body
    else if (body !== undefined) {
      headers["content-type"] = "application/json"
      payload = JSON.stringify(body)
    }
    const response = await engine.fetch(new Request(origin + path, { method, headers, ...(payload === undefined ? {} : { body: payload }) }))
    const text = await response.text()
    if (!response.ok) throw new DemoRefused(`${method} ${path} answered ${response.status}: ${text}`)
    return JSON.parse(text)
  }
  const upload = async (type: string) => {
    const form = new FormData()
    form.set("type", type)
    form.set("file", new Blob([new TextEncoder().encode(`%PDF-1.7\n% demo ${type}\n`)], { type: "application/pdf" }), `${type}.pdf`)
    return (await call("POST", "/documents", form)).id as string
  }
  const approve = (applicationId: string) => call("POST", `/simulate/applications/${applicationId}/decision`, { outcome: "approved" })

  const documents = { incorporation: await upload("certificate_of_incorporation"), passport: await upload("passport") }
  const onboarding = await call("POST", "/onboarding", submission(documents), true)
  const { customerId } = await approve(onboarding.applicationId) as { customerId: string }
  const walletApplication = await call("POST", `/customers/${customerId}/features`, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } }, true)
  await approve(walletApplication.applicationId)
  const wallet = await call("POST", `/customers/${customerId}/wallets`, { chain: "base" }, true)
  const accountApplication = await call("POST", `/customers/${customerId}/features`, { type: "virtual_account", asset: { code: "USD" } }, true)
  await approve(accountApplication.applicationId)
  if (clock === "virtual") await call("POST", "/simulate/clock/advance", { seconds: 30 })
  const account = (await call("GET", `/customers/${customerId}/virtual-accounts`)).data[0] as { id: string; status: string }
  return {
    customerId,
    walletId: wallet.id,
    walletAddress: wallet.address,
    virtualAccountId: account.id,
    virtualAccountActive: account.status === "active"
  }
}
