/**
 * Onboarding fixtures shared by the in-process tests and the black-box journey: a client over any fetch (an
 * engine's, or the real server's), document uploads, and complete submissions per country.
 */
import type { Engine } from "@fos/http"
import { afterEach, beforeEach, expect } from "vitest"
import { recording } from "./responseRecorder.ts"
import { expectCatalogEvents, keysOf, makeEngine, orgSeed, type Reply, seedOf, toReply } from "./support.ts"
import { deuSubmission } from "./submissions.ts"

export { deuSubmission, germanAddress } from "./submissions.ts"

export type Fetch = (request: Request) => Promise<Response>

export interface Client {
  readonly call: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<Reply>
  readonly upload: (type: string, options?: { customerId?: string }) => Promise<string>
}

/** An engine with two organizations, acme and rival, and a sandbox client of each. */
export interface TwoOrganizations {
  readonly engine: Engine
  readonly acme: Client
  readonly rival: Client
}

/**
 * Before each test of the file (or `describe`) that calls it: a fresh engine on the virtual clock at START_MS seeded
 * with acme and rival, handed to `set`. After each: the engine `current` gives (a test may put another in its
 * place) has every event the test made checked against the event catalog (unless `checkCatalog` is false), and is
 * closed.
 */
export const twoOrganizationsPerTest = (options: {
  readonly set: (world: TwoOrganizations) => void
  readonly current: () => Engine | undefined
  readonly checkCatalog?: boolean
}): void => {
  beforeEach(async () => {
    const engine = await makeEngine(seedOf(orgSeed("acme"), orgSeed("rival")))
    options.set({ engine, acme: clientOf(engine.fetch, "http://fos", keysOf("acme").sandbox), rival: clientOf(engine.fetch, "http://fos", keysOf("rival").sandbox) })
  })
  afterEach(async () => {
    const engine = options.current()
    if (engine === undefined) return
    try {
      if (options.checkCatalog !== false) await expectCatalogEvents(engine)
    } finally {
      await engine.close()
    }
  })
}

/** Requests under `<origin>/<environment>` with `key` (recorded for the response-schema check: responseRecorder.ts). */
export const clientOf = (unrecorded: Fetch, origin: string, key: string, environment: "sandbox" | "live" = "sandbox"): Client => {
  const fetch = recording(unrecorded)
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    toReply(await fetch(new Request(`${origin}/${environment}${path}`, {
      method,
      headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })))
  const upload = async (type: string, options: { customerId?: string } = {}) => {
    const form = new FormData()
    form.set("type", type)
    if (options.customerId !== undefined) form.set("customerId", options.customerId)
    form.set("file", new Blob([new TextEncoder().encode(`%PDF-1.7\n% ${type}\n`)], { type: "application/pdf" }), `${type}.pdf`)
    const reply = await toReply(await fetch(new Request(`${origin}/${environment}/v2/documents`, {
      method: "POST",
      headers: { "x-api-key": key },
      body: form
    })))
    expect(reply.status, reply.text).toBe(201)
    return reply.json.id as string
  }
  return { call, upload }
}

let keyCounter = 0
/** A fresh Idempotency-Key header. */
export const idem = (label = "k"): Record<string, string> => ({ "idempotency-key": `${label}-${++keyCounter}` })

let approvedCustomers = 0
/** A DEU business customer of `client`, onboarded and approved through the API; its id. */
export const approvedCustomer = async (client: Client): Promise<string> => {
  const docs = await deuDocuments(client)
  const submitted = await client.call("POST", "/v2/onboarding", deuSubmission(docs, { clientReferenceId: `customer-${++approvedCustomers}` }), idem())
  expect(submitted.status, submitted.text).toBe(201)
  const decided = await client.call("POST", `/v2/simulate/applications/${submitted.json.applicationId}/decision`, { outcome: "approved" })
  expect(decided.status, decided.text).toBe(200)
  return decided.json.customerId as string
}

/** Uploads the three documents `deuSubmission` needs. */
export const deuDocuments = async (client: Client) => ({
  register: await client.upload("certificate_of_incorporation"),
  articles: await client.upload("articles_of_association"),
  passport: await client.upload("passport")
})

/** A complete USA submission (New York by default), with its two documents. */
export const usaSubmission = async (client: Client, clientReferenceId: string, state = "NY") => {
  const address = { line1: "1 Wall St", city: "New York", state, postalCode: "10005", country: "USA" }
  return {
    country: "USA",
    businessInfo: { legalName: "Gotham LLC", taxId: "12-3456789", incorporationDate: "2020-01-15", registeredAddress: address },
    documentIds: [await client.upload("certificate_of_incorporation")],
    ownership: {
      persons: [{
        referenceId: "ceo",
        roles: ["owner", "controller"],
        ownershipPercent: 100,
        firstName: "Bruce",
        lastName: "Wayne",
        dateOfBirth: "1972-02-19",
        nationality: "USA",
        address,
        taxId: "123-45-6789",
        documentIds: [await client.upload("drivers_license")]
      }]
    },
    companyClassification: { legalStructure: "llc", primaryIndustry: "payments" },
    clientReferenceId
  }
}
