/**
 * Onboarding through the whole pipeline (engine.fetch) on a virtual clock: requirements, submissions and every
 * error the spec names for them, applications and their state table, customers, customer updates, feature
 * applications and virtual accounts, the organization's own onboarding, simulate, and the world model's review.
 * Events are read from the outbox, where they are written in the same transaction as the change behind them.
 */
import { type ApplicationStatus } from "@fos/contract"
import { ApplicationMachine, Operator, Restrictions, Store } from "@fos/core"
import { Effect } from "effect"
import type { Engine } from "@fos/http"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { type Client, clientOf, deuDocuments, deuSubmission, germanAddress, idem, usaSubmission } from "./onboardingFixtures.ts"
import { expectCatalogEvents, expectProblem, isoMs, keysOf, makeEngine, orgSeed, outboxEvents, rateHeaders, seedOf, START_MS } from "./support.ts"
import { expectWire } from "./wire.ts"

let engine: Engine
let acme: Client
let rival: Client
let acmeLive: Client

beforeEach(async () => {
  engine = await makeEngine(seedOf(orgSeed("acme"), orgSeed("rival"), orgSeed("newco", { status: "onboarding" })))
  acme = clientOf(engine.fetch, "http://fos", keysOf("acme").sandbox)
  acmeLive = clientOf(engine.fetch, "http://fos", keysOf("acme").live, "live")
  rival = clientOf(engine.fetch, "http://fos", keysOf("rival").sandbox)
})
afterEach(async () => {
  // Every event a test made is one the event catalog accepts.
  if (engine !== undefined) await expectCatalogEvents(engine)
  await engine?.close()
})

const events = (type?: string) => outboxEvents(engine, type)

const advance = (seconds: number) => engine.clock.advance(seconds * 1000)

/** Submits a complete DEU onboarding for `client`; returns the open application. */
const submit = async (client: Client = acme, overrides: Record<string, unknown> = {}) => {
  const docs = await deuDocuments(client)
  const r = await client.call("POST", "/v2/onboarding", deuSubmission(docs, overrides), idem())
  expect(r.status, r.text).toBe(201)
  return r.json
}

const decide = (client: Client, id: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  client.call("POST", `/v2/simulate/applications/${id}/decision`, body, headers)

// --- requirements ------------------------------------------------------------------------------------------------

describe("GET /v2/onboarding/requirements", () => {
  it.each(["USA", "GBR", "DEU", "SGP", "BRA"])("gives the requirement set of %s", async (country) => {
    const r = await acme.call("GET", `/v2/onboarding/requirements?country=${country}`)
    expect(r.status, r.text).toBe(200)
    const set = r.json
    expect(set.country).toBe(country)
    expect(set.legalStructures.length).toBeGreaterThan(1)
    for (const s of set.legalStructures) expect(s).toEqual({ value: expect.any(String), label: expect.any(String) })
    expect(set.classifications.primaryIndustry.map((k: any) => k.key)).toContain("software")
    // Retired keys and headings are not offered.
    expect(set.classifications.primaryIndustry.map((k: any) => k.key)).not.toContain("crypto_exchange")
    expect(set.classifications.primaryIndustry.map((k: any) => k.key)).not.toContain("technology")
    const pointers = set.business.fields.map((f: any) => f.pointer)
    expect(pointers).toEqual(expect.arrayContaining(["/businessInfo/legalName", "/businessInfo/taxId", "/businessInfo/registeredAddress"]))
    expect(set.business.documents.length).toBeGreaterThan(0)
    expect(set.persons.ownerThresholdPercent).toBe(25)
    expect(set.persons.minimumControllers).toBe(1)
    expect(set.persons.documents.find((d: any) => d.slot === "identity").acceptedTypes).toContain("passport")
    expect(set.individual.fields.length).toBeGreaterThan(0)
  })

  it.each(["USA", "GBR", "DEU", "SGP", "BRA"])("a submission built only from the %s requirement set is accepted", async (country) => {
    const set = (await acme.call("GET", `/v2/onboarding/requirements?country=${country}`)).json
    const address = { line1: "1 Main Street", city: "Capital", state: "CA", postalCode: "12345", country }
    // Fills every field the set names: its format's example where it has one, else a value of the field's kind.
    const fill = (target: Record<string, any>, fields: ReadonlyArray<any>) => {
      for (const f of fields) {
        const path = f.pointer.split("/").slice(1)
        const leaf = path.pop()
        let at = target
        for (const p of path) at = at[p] ??= {}
        at[leaf] = f.format?.example ?? (leaf === "registeredAddress" || leaf === "address"
          ? address
          : /Date|dateOfBirth/.test(leaf) ? "1985-05-05" : leaf === "nationality" ? country : `Some ${leaf}`)
      }
      return target
    }
    const upload = async (type: string) => {
      await advance(1)
      return acme.upload(type)
    }
    const person: Record<string, any> = fill({ referenceId: "p1", roles: ["owner", "controller"], ownershipPercent: 100 }, set.persons.fields)
    person.documentIds = []
    for (const slot of set.persons.documents) person.documentIds.push(await upload(slot.acceptedTypes[0]))
    const body: Record<string, any> = fill({ country }, set.business.fields)
    body.documentIds = []
    for (const d of set.business.documents) body.documentIds.push(await upload(d.type))
    body.ownership = { persons: [person] }
    body.companyClassification = { legalStructure: set.legalStructures[0].value, primaryIndustry: set.classifications.primaryIndustry[0].key }
    const r = await acme.call("POST", "/v2/onboarding", body, idem())
    expect(r.status, r.text).toBe(201)
    // And the same without any one business document is not ready, naming it.
    for (const [i, d] of set.business.documents.entries()) {
      const missing = { ...body, clientReferenceId: `missing-${i}`, documentIds: body.documentIds.filter((_: string, j: number) => j !== i) }
      const q = expectProblem(await acme.call("POST", "/v2/onboarding", missing, idem()), { type: "ONBOARDING_NOT_READY", status: 422, instance: "/sandbox/v2/onboarding" })
      expect(q.errors).toEqual([expect.objectContaining({ pointer: "/documentIds", category: "document", detail: expect.stringContaining(d.type) })])
    }
  })

  it("answers APPLICATION_COUNTRY_NOT_SUPPORTED for a real country that is not offered", async () => {
    const r = await acme.call("GET", "/v2/onboarding/requirements?country=FRA")
    expectProblem(r, { type: "APPLICATION_COUNTRY_NOT_SUPPORTED", status: 409, instance: "/sandbox/v2/onboarding/requirements" })
  })

  it.each(["US", "usa", "XXX", ""])("refuses a malformed country %j with 400", async (country) => {
    const r = await acme.call("GET", `/v2/onboarding/requirements?country=${country}`)
    const p = expectProblem(r, { type: "VALIDATION_ERROR", status: 400, instance: "/sandbox/v2/onboarding/requirements" })
    expect(p.errors[0].pointer).toBe("/country")
  })

  it("refuses a missing country as a required parameter missing: 400 BAD_REQUEST, naming it, without errors[]", async () => {
    for (const path of ["/v2/onboarding/requirements", "/v2/onboarding/requirements?other=1"]) {
      const p = expectProblem(await acme.call("GET", path), { type: "BAD_REQUEST", status: 400, instance: "/sandbox/v2/onboarding/requirements" })
      expect(p.detail).toBe("The required query parameter country is missing.")
      expect(p).not.toHaveProperty("errors")
    }
  })
})

// --- submissions ---------------------------------------------------------------------------------------------------

describe("POST /v2/onboarding", () => {
  it("creates an open customer_onboarding application with a reserved customer id and in-progress persons", async () => {
    const app = await submit()
    expect(app.applicationId).toMatch(/^app_/)
    expect(app.applicationType).toBe("customer_onboarding")
    expect(app.status).toBe("open")
    expect(app.customerId).toMatch(/^cus_/)
    expect(app.clientReferenceId).toBe("acme-gmbh")
    expect(app).not.toHaveProperty("failureCode")
    expect(app).not.toHaveProperty("failureMessage")
    expect(app).not.toHaveProperty("decidedAt")
    expect(app).not.toHaveProperty("cancelRequestedAt")
    expect(app).not.toHaveProperty("resubmittable")
    expect(app.createdAt).toMatch(isoMs)
    expect(app.persons).toEqual([{
      referenceId: "ubo-1",
      roles: ["owner", "controller"],
      firstName: "Erika",
      lastName: "Mustermann",
      email: "erika@acme.example",
      ownershipPercent: 60,
      verificationStatus: "in_progress"
    }])
    // Sensitive fields are never part of the application.
    expect(JSON.stringify(app)).not.toContain("1980-02-29")
    expect(JSON.stringify(app)).not.toContain("12345678901")
    const got = await acme.call("GET", `/v2/applications/${app.applicationId}`)
    expect(got.json).toEqual(app)
  })

  it("needs an Idempotency-Key", async () => {
    const docs = await deuDocuments(acme)
    const r = await acme.call("POST", "/v2/onboarding", deuSubmission(docs))
    expectProblem(r, { type: "IDEMPOTENCY_KEY_REQUIRED", status: 400, instance: "/sandbox/v2/onboarding" })
  })

  it("answers ONBOARDING_NOT_READY with one categorised entry per gap, then takes the corrected body under the same key", async () => {
    const docs = await deuDocuments(acme)
    const key = idem("retry")
    const incomplete = deuSubmission(docs, {
      documentIds: [docs.register],
      businessInfo: { legalName: "Acme GmbH", registeredAddress: germanAddress, incorporationDate: "2019-04-01", taxId: "123" },
      ownership: { persons: [{ referenceId: "ubo-1", roles: ["owner", "controller"], ownershipPercent: 60, firstName: "Erika" }] }
    })
    const r = await acme.call("POST", "/v2/onboarding", incomplete, key)
    const p = expectProblem(r, { type: "ONBOARDING_NOT_READY", status: 422, instance: "/sandbox/v2/onboarding" })
    const byPointer = Object.fromEntries(p.errors.map((e: any) => [e.pointer + "|" + e.category, e]))
    expect(byPointer["/businessInfo/registrationNumber|field"]).toBeDefined()
    expect(byPointer["/businessInfo/taxId|field"].detail).toContain("DEU format")
    // Generated texts take the article their word's sound needs.
    expect(byPointer["/documentIds|document"].detail).toContain("needs an articles_of_association document")
    expect(byPointer["/ownership/persons/0/lastName|individual"]).toBeDefined()
    expect(byPointer["/ownership/persons/0/dateOfBirth|individual"]).toBeDefined()
    expect(byPointer["/ownership/persons/0/documentIds|document"].detail).toContain("needs an identity document")
    for (const e of p.errors) expect(["field", "document", "individual"]).toContain(e.category)
    // The detail never echoes the rejected value.
    expect(JSON.stringify(p.errors)).not.toContain('"123"')
    expect(await events()).toEqual([])
    // A 4xx is not kept: the corrected body under the same key is a new request.
    const fixed = await acme.call("POST", "/v2/onboarding", deuSubmission(docs), key)
    expect(fixed.status, fixed.text).toBe(201)
    const replay = await acme.call("POST", "/v2/onboarding", deuSubmission(docs), key)
    expect(replay.status).toBe(201)
    expect(replay.headers.get("idempotency-replayed")).toBe("true")
    expect(replay.json).toEqual(fixed.json)
    const list = await acme.call("GET", "/v2/applications")
    expect(list.json.meta.total).toBe(1)
  })

  it("asks for owners over the threshold and controllers, not for small owners", async () => {
    const docs = await deuDocuments(acme)
    const body = deuSubmission(docs)
    const persons = [
      ...body.ownership.persons,
      { referenceId: "small", roles: ["owner"], ownershipPercent: 10, firstName: "Max" },
      { referenceId: "big", roles: ["owner"], ownershipPercent: 30, firstName: "Big" }
    ]
    const r = await acme.call("POST", "/v2/onboarding", { ...body, ownership: { persons } }, idem())
    const p = expectProblem(r, { type: "ONBOARDING_NOT_READY", status: 422, instance: "/sandbox/v2/onboarding" })
    expect(p.errors.some((e: any) => e.pointer.startsWith("/ownership/persons/1/"))).toBe(false)
    expect(p.errors.some((e: any) => e.pointer.startsWith("/ownership/persons/2/"))).toBe(true)
    const noController = await acme.call("POST", "/v2/onboarding", {
      ...body,
      ownership: { persons: [{ ...body.ownership.persons[0], roles: ["owner"] }] }
    }, idem())
    const q = expectProblem(noController, { type: "ONBOARDING_NOT_READY", status: 422, instance: "/sandbox/v2/onboarding" })
    expect(q.errors).toContainEqual(expect.objectContaining({ pointer: "/ownership/persons", category: "individual" }))
  })

  it("rejects a malformed body with VALIDATION_ERROR and pointers", async () => {
    const docs = await deuDocuments(acme)
    const body = deuSubmission(docs, {
      documentIds: ["not-a-doc"],
      businessInfo: { legalName: "   ", incorporationDate: "2019-02-30", registeredAddress: germanAddress }
    })
    const pointerOf = async (b: unknown) => {
      const p = expectProblem(await acme.call("POST", "/v2/onboarding", b, idem()), { type: "VALIDATION_ERROR", status: 400, instance: "/sandbox/v2/onboarding" })
      return p.errors[0].pointer
    }
    const good = deuSubmission(docs)
    expect(await pointerOf({ ...good, documentIds: ["not-a-doc"] })).toBe("/documentIds/0")
    expect(await pointerOf({ ...good, businessInfo: { ...good.businessInfo, legalName: "   " } })).toBe("/businessInfo/legalName")
    expect(await pointerOf({ ...good, businessInfo: { ...good.businessInfo, incorporationDate: "2019-02-30" } })).toBe("/businessInfo/incorporationDate")
    expect(await pointerOf({ ...good, ownership: { persons: [{ ...good.ownership.persons[0], ownershipPercent: 101 }] } }))
      .toBe("/ownership/persons/0/ownershipPercent")
    expect(await pointerOf({ ...good, customerType: "partnership" })).toBe("/customerType")
    // Every problem of one body at once, a pointer each.
    const all = expectProblem(await acme.call("POST", "/v2/onboarding", body, idem()), { type: "VALIDATION_ERROR", status: 400, instance: "/sandbox/v2/onboarding" })
    expect(all.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(["/businessInfo/incorporationDate", "/businessInfo/legalName", "/documentIds/0"])
    // A body with thousands of problems gets the first hundred: the answer stays small.
    const many = expectProblem(
      await acme.call("POST", "/v2/onboarding", { ...good, documentIds: Array.from({ length: 5000 }, (_, i) => `bad-${i}`) }, idem()),
      { type: "VALIDATION_ERROR", status: 400, instance: "/sandbox/v2/onboarding" }
    )
    expect(many.errors).toHaveLength(100)
    expect(many.errors[0].pointer).toBe("/documentIds/0")
    expect(await events()).toEqual([])
    const noCountry = await acme.call("POST", "/v2/onboarding", { ...body, country: undefined }, idem())
    expect(noCountry.status).toBe(400)
    const dupes = deuSubmission(docs)
    const twice = { ...dupes, ownership: { persons: [dupes.ownership.persons[0], dupes.ownership.persons[0]] } }
    const d = expectProblem(await acme.call("POST", "/v2/onboarding", twice, idem()), { type: "VALIDATION_ERROR", status: 400, instance: "/sandbox/v2/onboarding" })
    expect(d.errors[0].pointer).toBe("/ownership/persons/1/referenceId")
  })

  it("applies the address rule: state is required in the USA", async () => {
    const docs = await deuDocuments(acme)
    const usAddress = { line1: "1 Main St", city: "Austin", country: "USA" }
    const r = await acme.call("POST", "/v2/onboarding", deuSubmission(docs, {
      businessInfo: { ...deuSubmission(docs).businessInfo, registeredAddress: usAddress }
    }), idem())
    const p = expectProblem(r, { type: "VALIDATION_ERROR", status: 400, instance: "/sandbox/v2/onboarding" })
    expect(p.errors[0].pointer).toBe("/businessInfo/registeredAddress/state")
    const ok = await acme.call("POST", "/v2/onboarding", deuSubmission(docs, {
      businessInfo: { ...deuSubmission(docs).businessInfo, registeredAddress: { ...usAddress, state: "1X" } }
    }), idem())
    expect(ok.status, ok.text).toBe(201)
  })

  it("answers APPLICATION_COUNTRY_NOT_SUPPORTED for a country without a requirement set", async () => {
    const docs = await deuDocuments(acme)
    const r = await acme.call("POST", "/v2/onboarding", deuSubmission(docs, { country: "FRA" }), idem())
    expectProblem(r, { type: "APPLICATION_COUNTRY_NOT_SUPPORTED", status: 409, instance: "/sandbox/v2/onboarding" })
  })

  it("answers INVALID_LEGAL_STRUCTURE for a structure of another country", async () => {
    const docs = await deuDocuments(acme)
    const r = await acme.call("POST", "/v2/onboarding", deuSubmission(docs, {
      companyClassification: { legalStructure: "llc", primaryIndustry: "software" }
    }), idem())
    const p = expectProblem(r, { type: "INVALID_LEGAL_STRUCTURE", status: 400, instance: "/sandbox/v2/onboarding" })
    expect(p.detail).toContain("DEU")
  })

  it.each([
    ["an unknown key", "rocket_science"],
    ["a retired key", "crypto_exchange"],
    ["a heading that is not selectable", "technology"],
    ["a key of the wrong kind", "gmbh"]
  ])("answers INVALID_POLICY_SUBJECT for %s", async (_, industry) => {
    const docs = await deuDocuments(acme)
    const r = await acme.call("POST", "/v2/onboarding", deuSubmission(docs, {
      companyClassification: { legalStructure: "gmbh", primaryIndustry: industry }
    }), idem())
    expectProblem(r, { type: "INVALID_POLICY_SUBJECT", status: 400, instance: "/sandbox/v2/onboarding" })
  })

  it("answers DOCUMENT_IDS_NOT_FOUND naming every missing id, including another organization's", async () => {
    const docs = await deuDocuments(acme)
    const foreign = await rival.upload("passport")
    const body = deuSubmission(docs, { documentIds: [docs.register, "doc_missing1", docs.articles] })
    body.ownership.persons[0]!.documentIds = [foreign]
    const r = await acme.call("POST", "/v2/onboarding", body, idem())
    const p = expectProblem(r, { type: "DOCUMENT_IDS_NOT_FOUND", status: 400, instance: "/sandbox/v2/onboarding" })
    expect(p.errors.map((e: any) => e.pointer).sort()).toEqual(["/documentIds/1", "/ownership/persons/0/documentIds/0"])
    expect(JSON.stringify(p)).not.toContain("doc_missing1")
  })

  it("answers DOCUMENT_IDS_NOT_FOUND for a document attached to another customer", async () => {
    const app = await submit()
    await decide(acme, app.applicationId, { outcome: "approved" })
    const attached = await acme.upload("passport", { customerId: app.customerId })
    const docs = await deuDocuments(acme)
    const body = deuSubmission(docs, { clientReferenceId: "other" })
    body.ownership.persons[0]!.documentIds = [attached]
    const r = await acme.call("POST", "/v2/onboarding", body, idem())
    expectProblem(r, { type: "DOCUMENT_IDS_NOT_FOUND", status: 400, instance: "/sandbox/v2/onboarding" })
  })

  it("answers DUPLICATE_CLIENT_REFERENCE_ID while the reference is held, and frees it on rejection", async () => {
    const first = await submit()
    const docs = await deuDocuments(acme)
    const again = await acme.call("POST", "/v2/onboarding", deuSubmission(docs), idem())
    expectProblem(again, { type: "DUPLICATE_CLIENT_REFERENCE_ID", status: 409, instance: "/sandbox/v2/onboarding" })
    await decide(acme, first.applicationId, { outcome: "rejected" })
    const retry = await acme.call("POST", "/v2/onboarding", deuSubmission(docs), idem())
    expect(retry.status, retry.text).toBe(201)
    // Once a customer holds it, it stays taken.
    await decide(acme, retry.json.applicationId, { outcome: "approved" })
    const third = await acme.call("POST", "/v2/onboarding", deuSubmission(docs), idem())
    expectProblem(third, { type: "DUPLICATE_CLIENT_REFERENCE_ID", status: 409, instance: "/sandbox/v2/onboarding" })
    // Another organization may use the same reference.
    expect((await submit(rival)).clientReferenceId).toBe("acme-gmbh")
  })

  it("applies the house-account rules", async () => {
    const individual = await acme.call("POST", "/v2/onboarding", {
      country: "DEU",
      customerType: "individual",
      houseAccount: true,
      individual: { firstName: "Erika" }
    }, idem())
    expectProblem(individual, { type: "HOUSE_ACCOUNT_BUSINESS_ONLY", status: 409, instance: "/sandbox/v2/onboarding" })
    const docs = await deuDocuments(acme)
    const reserved = await acme.call("POST", "/v2/onboarding", deuSubmission(docs, { clientReferenceId: "house-account" }), idem())
    expectProblem(reserved, { type: "SANDBOX_HOUSE_ACCOUNT_RESERVED_REFERENCE", status: 409, instance: "/sandbox/v2/onboarding" })
    const house = await acme.call("POST", "/v2/onboarding", deuSubmission(docs, { clientReferenceId: "house-account", houseAccount: true }), idem())
    expect(house.status, house.text).toBe(201)
    expect(house.json.houseAccount).toBe(true)
    const second = await acme.call("POST", "/v2/onboarding", deuSubmission(docs, { clientReferenceId: "h2", houseAccount: true }), idem())
    expectProblem(second, { type: "CONFLICT", status: 409, instance: "/sandbox/v2/onboarding" })
  })

  it("a request that breaks two rules gets the first: the request alone, then the documents, then completeness, then the references taken", async () => {
    const docs = await deuDocuments(acme)
    const body = (overrides: Record<string, unknown>) => deuSubmission(docs, overrides)
    const first = async (sent: unknown, type: string, status: number) => {
      // The application-submit bucket (5/s, burst 10) refills between requests.
      await advance(1)
      expectProblem(await acme.call("POST", "/v2/onboarding", sent, idem()), { type, status, instance: "/sandbox/v2/onboarding" })
    }
    const person = body({}).ownership.persons[0]
    const twice = { ownership: { persons: [person, person] } }
    const unknownDocument = { documentIds: [docs.register, "doc_missing1", docs.articles] }
    const incomplete = { businessInfo: { legalName: "Acme GmbH" } }
    // The request alone, before anything is read: its members, the country and its classification, the
    // house-account rules.
    await first(body({ ...twice, country: "FRA" }), "VALIDATION_ERROR", 400)
    await first(body({ ...unknownDocument, country: "FRA" }), "APPLICATION_COUNTRY_NOT_SUPPORTED", 409)
    await first(body({ clientReferenceId: "house-account", companyClassification: { legalStructure: "llc", primaryIndustry: "software" } }), "INVALID_LEGAL_STRUCTURE", 400)
    const individual = { country: "DEU", customerType: "individual", individual: { firstName: "Erika", documentIds: ["doc_missing1"] } }
    await first({ ...individual, houseAccount: true }, "HOUSE_ACCOUNT_BUSINESS_ONLY", 409)
    await first(body({ ...unknownDocument, clientReferenceId: "house-account" }), "SANDBOX_HOUSE_ACCOUNT_RESERVED_REFERENCE", 409)
    // The documents, before the requirements their types fill.
    await first(body({ ...unknownDocument, ...incomplete }), "DOCUMENT_IDS_NOT_FOUND", 400)
    // The requirements, before the references other applications hold.
    await submit()
    await first(body(incomplete), "ONBOARDING_NOT_READY", 422)
    // A clientReferenceId taken, before the house account taken.
    await advance(1)
    expect((await acme.call("POST", "/v2/onboarding", body({ clientReferenceId: "house-account", houseAccount: true }), idem())).status).toBe(201)
    await first(body({ houseAccount: true }), "DUPLICATE_CLIENT_REFERENCE_ID", 409)
    expect(await events()).toEqual([])
  })

  it("onboards an individual", async () => {
    const passport = await acme.upload("passport")
    const r = await acme.call("POST", "/v2/onboarding", {
      country: "DEU",
      customerType: "individual",
      individual: {
        firstName: "Jonas",
        lastName: "Becker",
        dateOfBirth: "1990-01-01",
        nationality: "DEU",
        address: germanAddress,
        documentIds: [passport, await acme.upload("proof_of_address")]
      },
      clientReferenceId: "jonas"
    }, idem())
    expect(r.status, r.text).toBe(201)
    expect(r.json.customerType).toBe("individual")
    expect(r.json.persons).toEqual([expect.objectContaining({ referenceId: "individual", roles: ["individual"] })])
    await decide(acme, r.json.applicationId, { outcome: "approved" })
    const customer = await acme.call("GET", `/v2/customers/${r.json.customerId}`)
    expect(customer.json).toMatchObject({ type: "individual", name: "Jonas Becker", houseAccount: false })
  })

  it("counts against the application-submit bucket it shares with customer updates", async () => {
    const docs = await deuDocuments(acme)
    const r = await acme.call("POST", "/v2/onboarding", deuSubmission(docs), idem())
    expect(rateHeaders(r).limit).toBe(10)
    let last = r
    for (let i = 0; i < 12 && last.status !== 429; i++) last = await acme.call("POST", "/v2/onboarding", { country: "DEU" }, idem())
    expectProblem(last, { type: "RATE_LIMITED", status: 429, instance: "/sandbox/v2/onboarding" })
    const update = await acme.call("POST", `/v2/customers/${r.json.customerId}/updates`, { documentIds: [] }, idem())
    expect(update.status).toBe(429)
    // The general bucket is apart.
    expect((await acme.call("GET", "/v2/applications")).status).toBe(200)
  })

  it("on /live before activation answers PRODUCTION_ACCESS_REQUIRED and creates nothing", async () => {
    const newco = clientOf(engine.fetch, "http://fos", keysOf("newco").live, "live")
    const r = await newco.call("POST", "/v2/onboarding", { country: "DEU" }, idem())
    expectProblem(r, { type: "PRODUCTION_ACCESS_REQUIRED", status: 403, instance: "/live/v2/onboarding" })
    expect(await events()).toEqual([])
  })
})

// --- applications and the state table ------------------------------------------------------------------------------

describe("the application state table", () => {
  const statuses: ReadonlyArray<ApplicationStatus> = ["draft", "open", "approved", "rejected", "cancelled"]
  const allowed = new Set([
    "draft|false|Submit->open",
    "open|false|Decide:approved:false->approved",
    "open|false|Decide:rejected:false->rejected",
    "open|false|Decide:approved:true->approved",
    "open|false|Decide:rejected:true->rejected",
    "cancelled|false|Decide:approved:true->approved",
    "cancelled|false|Decide:rejected:true->rejected",
    "open|false|RequestCancel->open",
    "open|true|CompleteCancel->cancelled",
    "rejected|false|LateCompliance->rejected"
  ])
  const moves = [
    { _tag: "Submit" },
    { _tag: "Decide", outcome: "approved", bySimulate: false },
    { _tag: "Decide", outcome: "rejected", bySimulate: false },
    { _tag: "Decide", outcome: "approved", bySimulate: true },
    { _tag: "Decide", outcome: "rejected", bySimulate: true },
    { _tag: "RequestCancel" },
    { _tag: "CompleteCancel" },
    { _tag: "LateCompliance" }
  ] as const

  it("allows exactly the listed moves and refuses every other with the spec's code", () => {
    const seen = new Set<string>()
    for (const status of statuses) {
      for (const cancelling of [false, true]) {
        if (cancelling && status !== "open") continue
        for (const m of moves) {
          const name = m._tag === "Decide" ? `Decide:${m.outcome}:${m.bySimulate}` : m._tag
          const result = ApplicationMachine.transition({ status, cancelling }, m)
          if ("next" in result) {
            const row = `${status}|${cancelling}|${name}->${result.next}`
            expect(allowed, `unexpected move ${row}`).toContain(row)
            seen.add(row)
          } else if (status === "approved" || status === "rejected") {
            if (m._tag === "Decide" || m._tag === "RequestCancel") expect(result.refused).toBe("APPLICATION_ALREADY_DECIDED")
            else if (!(m._tag === "LateCompliance" && status === "rejected")) expect(result.refused).toBe("APPLICATION_INVALID_STATUS")
          } else if (cancelling && (m._tag === "Decide" || m._tag === "RequestCancel")) {
            expect(result.refused).toBe("CANCEL_IN_PROGRESS")
          } else {
            expect(result.refused).toBe("APPLICATION_INVALID_STATUS")
          }
        }
      }
    }
    expect([...seen].sort()).toEqual([...allowed].sort())
  })

  it("a decided application stays decided: APPLICATION_ALREADY_DECIDED, and no event", async () => {
    const app = await submit()
    const key = idem()
    const approved = await decide(acme, app.applicationId, { outcome: "approved" }, key)
    expect(approved.status, approved.text).toBe(200)
    expect(approved.json.status).toBe("approved")
    const before = (await events()).length
    // Re-approving with the same key replays; with a new key it is refused. Neither emits.
    const replay = await decide(acme, app.applicationId, { outcome: "approved" }, key)
    expect(replay.headers.get("idempotency-replayed")).toBe("true")
    for (const outcome of ["approved", "rejected"]) {
      const again = await decide(acme, app.applicationId, { outcome })
      expectProblem(again, { type: "APPLICATION_ALREADY_DECIDED", status: 409, instance: `/sandbox/v2/simulate/applications/${app.applicationId}/decision` })
    }
    const cancel = await acme.call("POST", `/v2/applications/${app.applicationId}/cancel`, undefined, idem())
    expectProblem(cancel, { type: "APPLICATION_ALREADY_DECIDED", status: 409, instance: `/sandbox/v2/applications/${app.applicationId}/cancel` })
    expect((await events()).length).toBe(before)
    expect((await events("customer.created")).length).toBe(1)
  })

  it("a cancel runs on the clock: CANCEL_IN_PROGRESS meanwhile, then cancelled, decided only by simulate", async () => {
    const app = await submit()
    const path = `/v2/applications/${app.applicationId}/cancel`
    const cancel = await acme.call("POST", path, undefined, idem())
    expect(cancel.status, cancel.text).toBe(202)
    expect(cancel.json.status).toBe("open")
    expect(cancel.json.cancelRequestedAt).toMatch(isoMs)
    expectProblem(await acme.call("POST", path, undefined, idem()), { type: "CANCEL_IN_PROGRESS", status: 409, instance: `/sandbox${path}` })
    expectProblem(await decide(acme, app.applicationId, { outcome: "approved" }), {
      type: "CANCEL_IN_PROGRESS",
      status: 409,
      instance: `/sandbox/v2/simulate/applications/${app.applicationId}/decision`
    })
    expectProblem(await acme.call("POST", `/v2/applications/${app.applicationId}/persons/ubo-1/idv-link`, undefined), {
      type: "CANCEL_IN_PROGRESS",
      status: 409,
      instance: `/sandbox/v2/applications/${app.applicationId}/persons/ubo-1/idv-link`
    })
    await advance(30)
    const cancelled = await acme.call("GET", `/v2/applications/${app.applicationId}`)
    expect(cancelled.json.status).toBe("cancelled")
    expect(cancelled.json).not.toHaveProperty("cancelRequestedAt")
    expectProblem(await acme.call("POST", path, undefined, idem()), { type: "APPLICATION_INVALID_STATUS", status: 409, instance: `/sandbox${path}` })
    // The world model's review (5 minutes) does not decide a cancelled application.
    await advance(600)
    expect((await acme.call("GET", `/v2/applications/${app.applicationId}`)).json.status).toBe("cancelled")
    expect(await events("application.approved")).toEqual([])
    // Simulate still can.
    const decided = await decide(acme, app.applicationId, { outcome: "approved" })
    expect(decided.json.status).toBe("approved")
    expect((await events("customer.created")).length).toBe(1)
  })

  it("an application of another organization is APPLICATION_NOT_FOUND; a malformed id is INVALID_OID_FORMAT", async () => {
    const app = await submit()
    expectProblem(await rival.call("GET", `/v2/applications/${app.applicationId}`), {
      type: "APPLICATION_NOT_FOUND",
      status: 404,
      instance: `/sandbox/v2/applications/${app.applicationId}`
    })
    expectProblem(await decide(rival, app.applicationId, { outcome: "approved" }), {
      type: "APPLICATION_NOT_FOUND",
      status: 404,
      instance: `/sandbox/v2/simulate/applications/${app.applicationId}/decision`
    })
    expectProblem(await acme.call("GET", "/v2/applications/cus_123"), { type: "INVALID_OID_FORMAT", status: 400, instance: "/sandbox/v2/applications/cus_123" })
  })

  it("lists applications with paging, sorting and a type filter", async () => {
    const first = await submit()
    await advance(1)
    const second = await submit(acme, { clientReferenceId: "second" })
    const list = await acme.call("GET", "/v2/applications?limit=1&sortOrder=asc")
    expect(list.json.data.map((a: any) => a.applicationId)).toEqual([first.applicationId])
    expect(list.json.meta.total).toBe(2)
    const next = await acme.call("GET", `/v2/applications?limit=1&sortOrder=asc&cursor=${encodeURIComponent(list.json.meta.nextCursor)}`)
    expect(next.json.data.map((a: any) => a.applicationId)).toEqual([second.applicationId])
    const wrongSort = await acme.call("GET", `/v2/applications?limit=1&sortBy=updatedAt&sortOrder=asc&cursor=${encodeURIComponent(list.json.meta.nextCursor)}`)
    expectProblem(wrongSort, { type: "INVALID_CURSOR", status: 400, instance: "/sandbox/v2/applications" })
    const updates = await acme.call("GET", "/v2/applications?applicationType=customer_update")
    expect(updates.json).toEqual({ data: [], meta: { mode: "cursor", nextCursor: null, previousCursor: null, total: 0 } })
    expect((await rival.call("GET", "/v2/applications")).json.data).toEqual([])
  })
})

describe("persons", () => {
  it("gives a fresh idv link while verification is in progress, with idv_link.created", async () => {
    const app = await submit()
    const path = `/v2/applications/${app.applicationId}/persons/ubo-1/idv-link`
    const r = await acme.call("POST", path)
    expect(r.status, r.text).toBe(201)
    expect(r.json.url).toMatch(/^https:\/\//)
    expect(r.json.shortUrl).toMatch(/^https:\/\//)
    expect(r.json.expiresAt).toMatch(isoMs)
    const [event] = await events("idv_link.created")
    expect(event!.data).toEqual({
      applicationId: app.applicationId,
      referenceId: "ubo-1",
      customerId: app.customerId,
      url: r.json.url,
      shortUrl: r.json.shortUrl,
      occurredAt: new Date(START_MS).toISOString()
    })
    const second = await acme.call("POST", path)
    expect(second.json.url).not.toBe(r.json.url)
    expectProblem(await acme.call("POST", `/v2/applications/${app.applicationId}/persons/nobody/idv-link`), {
      type: "APPLICATION_PERSON_NOT_FOUND",
      status: 404,
      instance: `/sandbox/v2/applications/${app.applicationId}/persons/nobody/idv-link`
    })
    await decide(acme, app.applicationId, { outcome: "approved" })
    expectProblem(await acme.call("POST", path), { type: "APPLICATION_INVALID_STATUS", status: 409, instance: `/sandbox${path}` })
  })

  it("a request that breaks two rules gets the first: the application, then the person, then the application's state", async () => {
    const cancelling = await submit()
    const cancel = await acme.call("POST", `/v2/applications/${cancelling.applicationId}/cancel`, undefined, idem())
    expect(cancel.status, cancel.text).toBe(202)
    const decided = await submit(acme, { clientReferenceId: "decided" })
    await decide(acme, decided.applicationId, { outcome: "approved" })
    const first = async (client: Client, id: string, referenceId: string, type: string, status: number) => {
      const path = `/v2/applications/${id}/persons/${referenceId}/idv-link`
      expectProblem(await client.call("POST", path), { type, status, instance: `/sandbox${path}` })
    }
    // Another organization's application, whatever its persons and state.
    await first(rival, cancelling.applicationId, "nobody", "APPLICATION_NOT_FOUND", 404)
    // A person the application does not have, before the application's state.
    await first(acme, cancelling.applicationId, "nobody", "APPLICATION_PERSON_NOT_FOUND", 404)
    await first(acme, decided.applicationId, "nobody", "APPLICATION_PERSON_NOT_FOUND", 404)
    expect(await events("idv_link.created")).toEqual([])
  })

  it("reads one sensitive field at a time; an empty one is APPLICATION_PERSON_FIELD_EMPTY", async () => {
    const docs = await deuDocuments(acme)
    const body = deuSubmission(docs)
    const persons = [...body.ownership.persons, { referenceId: "minor", roles: ["owner"], ownershipPercent: 5, firstName: "Kim" }]
    const r = await acme.call("POST", "/v2/onboarding", { ...body, ownership: { persons } }, idem())
    expect(r.status, r.text).toBe(201)
    const base = `/v2/applications/${r.json.applicationId}/persons`
    expect((await acme.call("GET", `${base}/ubo-1/fields/dateOfBirth`)).json).toEqual({ referenceId: "ubo-1", field: "dateOfBirth", value: "1980-02-29" })
    expect((await acme.call("GET", `${base}/ubo-1/fields/taxId`)).json.value).toBe("12345678901")
    expectProblem(await acme.call("GET", `${base}/minor/fields/taxId`), {
      type: "APPLICATION_PERSON_FIELD_EMPTY",
      status: 404,
      instance: `/sandbox${base}/minor/fields/taxId`
    })
    expect((await acme.call("GET", `${base}/ubo-1/fields/password`)).status).toBe(400)
    expect((await acme.call("GET", `${base}/ghost/fields/taxId`)).json.type).toBe("APPLICATION_PERSON_NOT_FOUND")
  })
})

// --- decisions, customers and events ------------------------------------------------------------------------------

describe("approval and customers", () => {
  it("approval creates the customer and emits application.approved with customer.created as a pair", async () => {
    const app = await submit()
    expectProblem(await acme.call("GET", `/v2/customers/${app.customerId}`), {
      type: "CUSTOMER_NOT_ONBOARDED",
      status: 422,
      instance: `/sandbox/v2/customers/${app.customerId}`
    })
    expect((await acme.call("GET", "/v2/customers")).json.data).toEqual([])
    await advance(60)
    const r = await decide(acme, app.applicationId, { outcome: "approved" })
    expectWire(r.json, { status: "approved", customerId: app.customerId, failureCode: undefined })
    expect(r.json.persons[0].verificationStatus).toBe("completed")
    const at = new Date(START_MS + 60_000).toISOString()
    const pair = (await events()).filter((e) => e.type === "application.approved" || e.type === "customer.created")
    expect(pair.map((e) => e.type)).toEqual(["application.approved", "customer.created"])
    expect(pair[0]!.data).toEqual({
      applicationId: app.applicationId,
      applicationType: "customer_onboarding",
      customerId: app.customerId,
      clientReferenceId: "acme-gmbh",
      occurredAt: at
    })
    expect(pair[1]!.data).toEqual({ customerId: app.customerId, applicationId: app.applicationId, clientReferenceId: "acme-gmbh", occurredAt: at })
    const customer = await acme.call("GET", `/v2/customers/${app.customerId}`)
    expect(customer.json).toEqual({
      id: app.customerId,
      type: "business",
      status: "active",
      name: "Acme GmbH",
      country: "DEU",
      clientReferenceId: "acme-gmbh",
      houseAccount: false,
      createdAt: at,
      updatedAt: at
    })
    expect((await acme.call("GET", "/v2/customers")).json.data).toEqual([customer.json])
    expectProblem(await rival.call("GET", `/v2/customers/${app.customerId}`), {
      type: "CUSTOMER_NOT_FOUND",
      status: 404,
      instance: `/sandbox/v2/customers/${app.customerId}`
    })
  })

  it("rejection emits application.rejected with the failure fields; a category applies only to KYB", async () => {
    const app = await submit()
    const r = await decide(acme, app.applicationId, { outcome: "rejected", category: "documents", reason: "Passport expired." })
    expect(r.json).toMatchObject({ status: "rejected", failureCode: "rejected_by_ops", failureMessage: "Passport expired." })
    expect(r.json).not.toHaveProperty("resubmittable")
    const [event] = await events("application.rejected")
    expect(event!.data).toEqual({
      applicationId: app.applicationId,
      applicationType: "customer_onboarding",
      customerId: app.customerId,
      failureCode: "rejected_by_ops",
      failureMessage: "Passport expired.",
      clientReferenceId: "acme-gmbh",
      occurredAt: new Date(START_MS).toISOString()
    })
    expect(await events("customer.created")).toEqual([])
    expectProblem(await acme.call("GET", `/v2/customers/${app.customerId}`), {
      type: "CUSTOMER_NOT_ONBOARDED",
      status: 422,
      instance: `/sandbox/v2/customers/${app.customerId}`
    })
    const approvedWithCategory = await decide(acme, (await submit(acme, { clientReferenceId: "x" })).applicationId, { outcome: "approved", category: "documents" })
    expect(approvedWithCategory.status).toBe(400)
  })

  it("a compliance category denies with compliance_denied", async () => {
    const app = await submit()
    const r = await decide(acme, app.applicationId, { outcome: "rejected", category: "compliance" })
    expect(r.json).toMatchObject({ failureCode: "compliance_denied", failureMessage: expect.any(String) })
  })

  it("a late compliance result emits a second application.rejected correcting the failure fields", async () => {
    const app = await submit()
    await decide(acme, app.applicationId, { outcome: "rejected" })
    const late = await acme.call("POST", `/v2/simulate/applications/${app.applicationId}/compliance-result`, {
      failureCode: "compliance_denied",
      failureMessage: "Sanctions screening matched a director."
    })
    expect(late.status, late.text).toBe(200)
    const rejections = await events("application.rejected")
    expect(rejections.map((e) => [e.data.failureCode, e.data.failureMessage])).toEqual([
      ["rejected_by_ops", "The application was rejected by operations review."],
      ["compliance_denied", "Sanctions screening matched a director."]
    ])
    expect(rejections[1]!.createdAt >= rejections[0]!.createdAt).toBe(true)
    const open = await submit(acme, { clientReferenceId: "y" })
    expectProblem(await acme.call("POST", `/v2/simulate/applications/${open.applicationId}/compliance-result`, { failureMessage: "x" }), {
      type: "APPLICATION_INVALID_STATUS",
      status: 409,
      instance: `/sandbox/v2/simulate/applications/${open.applicationId}/compliance-result`
    })
  })

  it("simulate endpoints exist only under /sandbox", async () => {
    const r = await acmeLive.call("POST", "/v2/simulate/applications/app_1/decision", { outcome: "approved" })
    expectProblem(r, { type: "NOT_FOUND", status: 404, instance: "/live/v2/simulate/applications/app_1/decision" })
  })
})

describe("the world model decides on the clock", () => {
  it("approves after the review delay, deterministically", async () => {
    const app = await submit()
    await advance(299)
    expect((await acme.call("GET", `/v2/applications/${app.applicationId}`)).json.status).toBe("open")
    await advance(1)
    const decided = await acme.call("GET", `/v2/applications/${app.applicationId}`)
    expect(decided.json.status).toBe("approved")
    expect(decided.json.decidedAt).toBe(new Date(START_MS + 300_000).toISOString())
    expect((await events()).map((e) => e.type)).toEqual(["application.approved", "customer.created"])
  })

  it("follows the markers: fos:reject, fos:manual and fos:late-reject", async () => {
    const rejected = await submit(acme, { clientReferenceId: "r fos:reject" })
    const manual = await submit(acme, { clientReferenceId: "m fos:manual" })
    const late = await submit(acme, { clientReferenceId: "l fos:late-reject" })
    await advance(300)
    const get = async (id: string) => (await acme.call("GET", `/v2/applications/${id}`)).json
    expect(await get(rejected.applicationId)).toMatchObject({ status: "rejected", failureCode: "compliance_denied" })
    expect(await get(manual.applicationId)).toMatchObject({ status: "open" })
    expect(await get(late.applicationId)).toMatchObject({ status: "rejected", failureCode: "rejected_by_ops" })
    await advance(3600)
    expect(await get(late.applicationId)).toMatchObject({ status: "rejected", failureCode: "compliance_denied" })
    const lateEvents = (await events("application.rejected")).filter((e) => e.data.applicationId === late.applicationId)
    expect(lateEvents.map((e) => e.data.failureCode)).toEqual(["rejected_by_ops", "compliance_denied"])
    expect((await get(manual.applicationId)).status).toBe("open")
  })
})

// --- customer updates, restrictions ---------------------------------------------------------------------------------

const onboardedCustomer = async (overrides: Record<string, unknown> = {}) => {
  const app = await submit(acme, overrides)
  await decide(acme, app.applicationId, { outcome: "approved" })
  return app.customerId as string
}

describe("customer updates", () => {
  it("becomes a customer_update application that ends approved and changes the customer", async () => {
    const customerId = await onboardedCustomer()
    const r = await acme.call("POST", `/v2/customers/${customerId}/updates`, {
      businessInfo: { legalName: "Acme Holding GmbH" },
      documentIds: [await acme.upload("shareholder_register", { customerId })]
    }, idem())
    expect(r.status, r.text).toBe(201)
    expect(r.json).toMatchObject({ applicationType: "customer_update", status: "open", customerId })
    expect(rateHeaders(r).limit).toBe(10)
    await advance(120)
    expect((await acme.call("GET", `/v2/applications/${r.json.applicationId}`)).json.status).toBe("approved")
    expect((await acme.call("GET", `/v2/customers/${customerId}`)).json.name).toBe("Acme Holding GmbH")
    const [approved] = (await events("application.approved")).filter((e) => e.data.applicationType === "customer_update")
    expect(approved!.data).toMatchObject({ applicationId: r.json.applicationId, customerId })
  })

  it("can end rejected, with customerId on the event", async () => {
    const customerId = await onboardedCustomer()
    const r = await acme.call("POST", `/v2/customers/${customerId}/updates`, { businessInfo: { legalName: "New fos:reject" } }, idem())
    await advance(120)
    const [rejected] = await events("application.rejected")
    expect(rejected!.data).toMatchObject({ applicationId: r.json.applicationId, applicationType: "customer_update", customerId, failureCode: "compliance_denied" })
    expect((await acme.call("GET", `/v2/customers/${customerId}`)).json.name).toBe("Acme GmbH")
  })

  it("needs an Idempotency-Key, a change, an onboarded customer, and usable documents", async () => {
    const app = await submit()
    const base = `/v2/customers/${app.customerId}/updates`
    expectProblem(await acme.call("POST", base, { documentIds: [] }), { type: "IDEMPOTENCY_KEY_REQUIRED", status: 400, instance: `/sandbox${base}` })
    expectProblem(await acme.call("POST", base, { businessInfo: { legalName: "X" } }, idem()), {
      type: "CUSTOMER_NOT_ONBOARDED",
      status: 422,
      instance: `/sandbox${base}`
    })
    await decide(acme, app.applicationId, { outcome: "approved" })
    expectProblem(await acme.call("POST", base, {}, idem()), { type: "VALIDATION_ERROR", status: 400, instance: `/sandbox${base}` })
    const other = await onboardedCustomer({ clientReferenceId: "other" })
    const foreignDoc = await acme.upload("passport", { customerId: other })
    expectProblem(await acme.call("POST", base, { documentIds: [foreignDoc] }, idem()), {
      type: "DOCUMENT_IDS_NOT_FOUND",
      status: 400,
      instance: `/sandbox${base}`
    })
    expectProblem(await acme.call("POST", "/v2/customers/cus_nothere/updates", { documentIds: [] }, idem()), {
      type: "CUSTOMER_NOT_FOUND",
      status: 404,
      instance: "/sandbox/v2/customers/cus_nothere/updates"
    })
  })
})

describe("customer updates: the order of their refusals", () => {
  it("a request that breaks two rules gets the first: the request alone, the customer, the members its type rules out, the documents, then the reference taken", async () => {
    const customerId = await onboardedCustomer()
    const pending = (await submit(acme, { clientReferenceId: "pending" })).customerId as string
    const first = async (id: string, body: Record<string, unknown>, type: string, status: number) => {
      // The application-submit bucket (5/s, burst 10) refills between requests.
      await advance(1)
      const path = `/v2/customers/${id}/updates`
      expectProblem(await acme.call("POST", path, body, idem()), { type, status, instance: `/sandbox${path}` })
    }
    const person = { referenceId: "ubo-2", roles: ["owner"], firstName: "Max" }
    const twice = { ownership: { persons: [person, person] } }
    const unknownDocument = { documentIds: ["doc_missing1"] }
    // The request alone, before the customer is read.
    await first("cus_nothere", twice, "VALIDATION_ERROR", 400)
    await first(pending, twice, "VALIDATION_ERROR", 400)
    // The customer, before the members its type rules out and the documents.
    await first("cus_nothere", { individual: { firstName: "Erika" }, ...unknownDocument }, "CUSTOMER_NOT_FOUND", 404)
    await first(pending, { individual: { firstName: "Erika" }, ...unknownDocument }, "CUSTOMER_NOT_ONBOARDED", 422)
    // The members a business does not take, before the documents.
    await first(customerId, { individual: { firstName: "Erika" }, ...unknownDocument }, "VALIDATION_ERROR", 400)
    // The documents, before the reference another update holds.
    await advance(1)
    const held = await acme.call("POST", `/v2/customers/${customerId}/updates`, { businessInfo: { legalName: "Acme Holding GmbH" }, clientReferenceId: "update-1" }, idem())
    expect(held.status, held.text).toBe(201)
    await first(customerId, { ...unknownDocument, clientReferenceId: "update-1" }, "DOCUMENT_IDS_NOT_FOUND", 400)
    await first(customerId, { businessInfo: { legalName: "Acme AG" }, clientReferenceId: "update-1" }, "DUPLICATE_CLIENT_REFERENCE_ID", 409)
  })
})

describe("customer restrictions", () => {
  it("an account restriction emits customer.restricted without reason or type; monitoring emits nothing", async () => {
    const customerId = await onboardedCustomer()
    const before = (await events()).length
    const monitoring = await acme.call("POST", `/v2/simulate/customers/${customerId}/restrict`, { type: "monitoring" })
    expect(monitoring.json.status).toBe("active")
    expect((await events()).length).toBe(before)
    const r = await acme.call("POST", `/v2/simulate/customers/${customerId}/restrict`, {})
    expect(r.json.status).toBe("restricted")
    const [event] = await events("customer.restricted")
    expect(event!.data).toEqual({ customerId, clientReferenceId: "acme-gmbh", occurredAt: new Date(START_MS).toISOString() })
    await acme.call("POST", `/v2/simulate/customers/${customerId}/restrict`, {})
    expect((await events("customer.restricted")).length).toBe(1)
  })
})

// --- feature applications and virtual accounts ----------------------------------------------------------------------

describe("feature applications", () => {
  it("lists the allowed currencies at /asset/code", async () => {
    const customerId = await onboardedCustomer()
    for (const type of ["VIRTUAL_ACCOUNT", "virtual_account"]) {
      const r = await acme.call("GET", `/v2/customers/${customerId}/features/requirements?type=${type}`)
      expect(r.status, r.text).toBe(200)
      expect(r.json.type).toBe("virtual_account")
      expect(r.json.requirements.find((e: any) => e.pointer === "/asset/code").allowedValues).toEqual(["EUR", "GBP", "USD"])
    }
    const crypto = await acme.call("GET", `/v2/customers/${customerId}/features/requirements?type=CRYPTO_WALLET`)
    expect(crypto.json.requirements.find((e: any) => e.pointer === "/asset/code").allowedValues).toContain("USDC")
    expect((await acme.call("GET", `/v2/customers/${customerId}/features/requirements?type=CARD`)).status).toBe(400)
    // Without the type: a required parameter missing, not a value that failed validation.
    const untyped = expectProblem(await acme.call("GET", `/v2/customers/${customerId}/features/requirements`), {
      type: "BAD_REQUEST",
      status: 400,
      instance: `/sandbox/v2/customers/${customerId}/features/requirements`
    })
    expect(untyped.detail).toBe("The required query parameter type is missing.")
  })

  it("an approved virtual_account application creates an account that activates on the clock", async () => {
    const customerId = await onboardedCustomer()
    const r = await acme.call("POST", `/v2/customers/${customerId}/features`, { type: "virtual_account", asset: { code: "EUR" }, clientReferenceId: "va-eur" }, idem())
    expect(r.status, r.text).toBe(201)
    expect(r.json).toMatchObject({ applicationType: "virtual_account", asset: { code: "EUR" }, customerId })
    const category = await decide(acme, r.json.applicationId, { outcome: "rejected", category: "documents" })
    expectProblem(category, {
      type: "REJECTION_CATEGORY_NOT_APPLICABLE",
      status: 422,
      instance: `/sandbox/v2/simulate/applications/${r.json.applicationId}/decision`
    })
    await decide(acme, r.json.applicationId, { outcome: "approved" })
    const approved = (await events("application.approved")).find((e) => e.data.applicationId === r.json.applicationId)!
    expect(approved.data).toMatchObject({ applicationType: "virtual_account", customerId, asset: { code: "EUR" }, clientReferenceId: "va-eur" })
    const accounts = await acme.call("GET", `/v2/customers/${customerId}/virtual-accounts`)
    expect(accounts.json.data).toHaveLength(1)
    const pending = accounts.json.data[0]
    expect(pending).toMatchObject({ status: "pending", depositInstructions: [], asset: { code: "EUR" } })
    // Not active yet: activatedAt is omitted, not null (rule 3).
    expect(pending).not.toHaveProperty("activatedAt")
    expect(await events("virtual_account.activated")).toEqual([])
    await advance(30)
    const [activated] = await events("virtual_account.activated")
    expect(activated!.data.virtualAccountId).toBe(pending.id)
    expect(activated!.data.asset).toEqual({ code: "EUR" })
    const blocks = activated!.data.depositInstructions
    expect(blocks.map((b: any) => [b.railFamily, b.currency])).toEqual([["sepa", "EUR"], ["swift", "EUR"]])
    // A valid IBAN: mod 97 of the rearranged number is 1.
    const iban: string = blocks[0].iban
    const numeric = (iban.slice(4) + iban.slice(0, 4)).replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55))
    expect(BigInt(numeric) % 97n).toBe(1n)
    const account = await acme.call("GET", `/v2/virtual-accounts/${pending.id}`)
    expect(account.json).toMatchObject({ status: "active", depositInstructions: blocks, activatedAt: new Date(START_MS + 30_000).toISOString() })
    expectProblem(await rival.call("GET", `/v2/virtual-accounts/${pending.id}`), {
      type: "VIRTUAL_ACCOUNT_NOT_FOUND",
      status: 404,
      instance: `/sandbox/v2/virtual-accounts/${pending.id}`
    })
  })

  it("USD and GBP accounts carry their own rail families", async () => {
    const customerId = await onboardedCustomer()
    for (const code of ["USD", "GBP"]) {
      const r = await acme.call("POST", `/v2/customers/${customerId}/features`, { type: "virtual_account", asset: { code } }, idem())
      await decide(acme, r.json.applicationId, { outcome: "approved" })
    }
    await advance(30)
    const blocks = (await events("virtual_account.activated")).map((e) => e.data.depositInstructions.map((b: any) => `${b.railFamily}:${b.currency}`))
    expect(blocks.sort()).toEqual([["uk_domestic:GBP", "swift:GBP"], ["us_domestic:USD", "swift:USD"]])
    const us = (await events("virtual_account.activated")).flatMap((e) => e.data.depositInstructions).find((b: any) => b.railFamily === "us_domestic")
    // An ABA routing number's checksum: 3, 7, 1 weights sum to a multiple of 10.
    const d = [...us.routingNumber].map(Number)
    expect((3 * (d[0]! + d[3]! + d[6]!) + 7 * (d[1]! + d[4]! + d[7]!) + d[2]! + d[5]! + d[8]!) % 10).toBe(0)
  })

  it("refuses a currency not offered, and a customer not onboarded", async () => {
    const customerId = await onboardedCustomer()
    const bad = await acme.call("POST", `/v2/customers/${customerId}/features`, { type: "virtual_account", asset: { code: "BRL" } }, idem())
    const p = expectProblem(bad, { type: "VALIDATION_ERROR", status: 400, instance: `/sandbox/v2/customers/${customerId}/features` })
    expect(p.errors[0].pointer).toBe("/asset/code")
    // GBP is a virtual-account currency, but no provider holds GBP accounts for a US customer: NO_ELIGIBLE_PROVIDER,
    // and the customer's requirements do not list it.
    const us = await acme.call("POST", "/v2/onboarding", await usaSubmission(acme, "tx"), idem())
    expect(us.status, us.text).toBe(201)
    await decide(acme, us.json.applicationId, { outcome: "approved" })
    const gbp = await acme.call("POST", `/v2/customers/${us.json.customerId}/features`, { type: "virtual_account", asset: { code: "GBP" } }, idem())
    expectProblem(gbp, { type: "NO_ELIGIBLE_PROVIDER", status: 422, instance: `/sandbox/v2/customers/${us.json.customerId}/features` })
    expect(gbp.json.detail).toContain("EUR, USD")
    const usRequirements = await acme.call("GET", `/v2/customers/${us.json.customerId}/features/requirements?type=virtual_account`)
    expect(usRequirements.json.requirements.find((e: any) => e.pointer === "/asset/code").allowedValues).toEqual(["EUR", "USD"])
    expect((await acme.call("GET", "/v2/applications?applicationType=virtual_account")).json.data).toEqual([])
    const app = await submit(acme, { clientReferenceId: "pending" })
    const notYet = await acme.call("POST", `/v2/customers/${app.customerId}/features`, { type: "virtual_account", asset: { code: "EUR" } }, idem())
    expectProblem(notYet, { type: "CUSTOMER_NOT_ONBOARDED", status: 422, instance: `/sandbox/v2/customers/${app.customerId}/features` })
  })

  it("a crypto_wallet application from an ineligible jurisdiction is 422 and emits nothing", async () => {
    const app = await acme.call("POST", "/v2/onboarding", await usaSubmission(acme, "ny"), idem())
    expect(app.status, app.text).toBe(201)
    await decide(acme, app.json.applicationId, { outcome: "approved" })
    const before = (await events()).length
    const r = await acme.call("POST", `/v2/customers/${app.json.customerId}/features`, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } }, idem())
    expectProblem(r, { type: "UNPROCESSABLE_ENTITY", status: 422, instance: `/sandbox/v2/customers/${app.json.customerId}/features` })
    await advance(3600)
    expect((await events()).length).toBe(before)
    expect((await acme.call("GET", "/v2/applications?applicationType=crypto_wallet")).json.data).toEqual([])
    // An eligible customer's crypto_wallet application is approved without an asset on the event.
    const eligible = await onboardedCustomer({ clientReferenceId: "berlin" })
    const ok = await acme.call("POST", `/v2/customers/${eligible}/features`, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } }, idem())
    expect(ok.status, ok.text).toBe(201)
    await advance(60)
    const approved = (await events("application.approved")).find((e) => e.data.applicationId === ok.json.applicationId)!
    expect(approved.data).not.toHaveProperty("asset")
  })
})

describe("feature applications: the order of their refusals", () => {
  it("a request that breaks two rules gets the first: the request alone, the customer, its state, what it is offered, then the reference taken", async () => {
    const customerId = await onboardedCustomer()
    const restricted = await onboardedCustomer({ clientReferenceId: "restricted" })
    expect((await acme.call("POST", `/v2/simulate/customers/${restricted}/restrict`, {})).json.status).toBe("restricted")
    // New York: no crypto wallets, and no provider holds GBP accounts for a US customer.
    const ny = await acme.call("POST", "/v2/onboarding", await usaSubmission(acme, "ny"), idem())
    expect(ny.status, ny.text).toBe(201)
    await decide(acme, ny.json.applicationId, { outcome: "approved" })
    const newYork = ny.json.customerId as string
    const first = async (id: string, body: Record<string, unknown>, type: string, status: number) => {
      const path = `/v2/customers/${id}/features`
      expectProblem(await acme.call("POST", path, body, idem()), { type, status, instance: `/sandbox${path}` })
    }
    // The request alone, before the customer is read: a chain on a virtual account, a crypto asset or chain not offered.
    await first("cus_nothere", { type: "virtual_account", asset: { code: "EUR", chain: "base" } }, "VALIDATION_ERROR", 400)
    await first(restricted, { type: "crypto_wallet", asset: { code: "EUR" } }, "VALIDATION_ERROR", 400)
    await first(newYork, { type: "crypto_wallet", asset: { code: "USDC", chain: "tron" } }, "VALIDATION_ERROR", 400)
    // The customer, before what it is offered (a currency's detail names the customer's currencies).
    await first("cus_nothere", { type: "virtual_account", asset: { code: "BRL" } }, "CUSTOMER_NOT_FOUND", 404)
    // Its state, before what it is offered and the reference taken.
    await first(restricted, { type: "virtual_account", asset: { code: "BRL" } }, "UNPROCESSABLE_ENTITY", 422)
    const held = await acme.call("POST", `/v2/customers/${customerId}/features`, { type: "virtual_account", asset: { code: "EUR" }, clientReferenceId: "va-1" }, idem())
    expect(held.status, held.text).toBe(201)
    await first(restricted, { type: "virtual_account", asset: { code: "EUR" }, clientReferenceId: "va-1" }, "UNPROCESSABLE_ENTITY", 422)
    // What it is offered, before the reference taken.
    await first(newYork, { type: "virtual_account", asset: { code: "GBP" }, clientReferenceId: "va-1" }, "NO_ELIGIBLE_PROVIDER", 422)
    const wallet = await acme.call("POST", `/v2/customers/${customerId}/features`, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" }, clientReferenceId: "cw-1" }, idem())
    expect(wallet.status, wallet.text).toBe(201)
    await first(newYork, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" }, clientReferenceId: "cw-1" }, "UNPROCESSABLE_ENTITY", 422)
    await first(newYork, { type: "virtual_account", asset: { code: "EUR" }, clientReferenceId: "va-1" }, "DUPLICATE_CLIENT_REFERENCE_ID", 409)
  })
})

// --- the organization -----------------------------------------------------------------------------------------------

describe("organization onboarding", () => {
  const newcoKeys = keysOf("newco")
  const newco = () => clientOf(engine.fetch, "http://fos", newcoKeys.sandbox)
  const newcoLive = () => clientOf(engine.fetch, "http://fos", newcoKeys.live, "live")

  const submitOrganization = async (client: Client) => {
    // Three uploads each time: let the documents bucket (5/s, burst 10) refill.
    await advance(2)
    const docs = await deuDocuments(client)
    const { clientReferenceId: _, ...body } = deuSubmission(docs)
    return client.call("POST", "/v2/organization/onboarding", body, idem())
  }

  it("a resubmittable rejection opens a fresh draft; approval activates the organization and opens production", async () => {
    const client = newco()
    expect((await newcoLive().call("GET", "/v2/customers")).json.type).toBe("PRODUCTION_ACCESS_REQUIRED")
    const first = await submitOrganization(client)
    expect(first.status, first.text).toBe(201)
    expectWire(first.json, { applicationType: "organization_onboarding", status: "open", resubmittable: undefined })
    expect(first.json).not.toHaveProperty("customerId")
    expectProblem(await submitOrganization(client), { type: "APPLICATION_INVALID_STATUS", status: 409, instance: "/sandbox/v2/organization/onboarding" })
    const rejected = await decide(client, first.json.applicationId, { outcome: "rejected", category: "documents" })
    expect(rejected.json).toMatchObject({ status: "rejected", failureCode: "rejected_by_ops", resubmittable: true })
    const [rejection] = await events("application.rejected")
    expect(rejection!.data).not.toHaveProperty("customerId")
    expect(rejection!.data.resubmittable).toBe(true)
    const drafts = (await client.call("GET", "/v2/applications?applicationType=organization_onboarding")).json.data
    expect(drafts.map((a: any) => a.status)).toEqual(["draft", "rejected"])
    const second = await submitOrganization(client)
    expect(second.json.applicationId).toBe(drafts[0].applicationId)
    expect(second.json.status).toBe("open")
    await decide(client, second.json.applicationId, { outcome: "approved" })
    const [activated] = await events("organization.activated")
    expect(activated!.data).toEqual({ organizationId: "org_newco", occurredAt: new Date(await engine.clock.now()).toISOString() })
    expect((await newcoLive().call("GET", "/v2/customers")).status).toBe(200)
    expectProblem(await submitOrganization(client), { type: "APPLICATION_INVALID_STATUS", status: 409, instance: "/sandbox/v2/organization/onboarding" })
  })

  it("a request that breaks two rules gets the first: the request alone, the documents, completeness, then the organization's state", async () => {
    const client = newco()
    // newco has an application under review; acme is active: both refuse a submission for their state, last.
    expect((await submitOrganization(client)).status).toBe(201)
    const docs = await deuDocuments(client)
    const { clientReferenceId: _, ...good } = deuSubmission(docs)
    const first = async (c: Client, body: unknown, type: string, status: number) => {
      // The application-submit bucket (5/s, burst 10) refills between requests.
      await advance(1)
      expectProblem(await c.call("POST", "/v2/organization/onboarding", body, idem()), { type, status, instance: "/sandbox/v2/organization/onboarding" })
    }
    const person = good.ownership.persons[0]
    // The request alone, before anything is read: its persons' references, the country and its classification.
    await first(client, { ...good, ownership: { persons: [person, person] } }, "VALIDATION_ERROR", 400)
    await first(acme, { country: "DEU", ownership: { persons: [person, person] } }, "VALIDATION_ERROR", 400)
    await first(client, { ...good, country: "FRA" }, "APPLICATION_COUNTRY_NOT_SUPPORTED", 409)
    await first(client, { ...good, companyClassification: { legalStructure: "llc", primaryIndustry: "software" } }, "INVALID_LEGAL_STRUCTURE", 400)
    // The documents, then the requirements, before the organization's state.
    await first(client, { ...good, documentIds: ["doc_missing1"] }, "DOCUMENT_IDS_NOT_FOUND", 400)
    await first(client, { ...good, businessInfo: { legalName: "Newco GmbH" } }, "ONBOARDING_NOT_READY", 422)
    await first(acme, { country: "DEU", businessInfo: { legalName: "Acme GmbH" } }, "ONBOARDING_NOT_READY", 422)
    await first(client, good, "APPLICATION_INVALID_STATUS", 409)
  })

  it("a final rejection opens no draft and refuses resubmission", async () => {
    const client = newco()
    const first = await submitOrganization(client)
    await decide(client, first.json.applicationId, { outcome: "rejected", category: "compliance" })
    const list = (await client.call("GET", "/v2/applications?applicationType=organization_onboarding")).json.data
    expect(list.map((a: any) => [a.status, a.resubmittable])).toEqual([["rejected", false]])
    expectProblem(await submitOrganization(client), { type: "APPLICATION_INVALID_STATUS", status: 409, instance: "/sandbox/v2/organization/onboarding" })
    expect((await newcoLive().call("GET", "/v2/customers")).status).toBe(403)
  })

  it("a late compliance result can make a resubmittable rejection final, withdrawing the draft; failureCode is not corrected", async () => {
    const client = newco()
    const first = await submitOrganization(client)
    await decide(client, first.json.applicationId, { outcome: "rejected" })
    const path = `/v2/simulate/applications/${first.json.applicationId}/compliance-result`
    expectProblem(await client.call("POST", path, { failureCode: "compliance_denied" }), { type: "UNPROCESSABLE_ENTITY", status: 422, instance: `/sandbox${path}` })
    const late = await client.call("POST", path, { resubmittable: false, failureMessage: "Final." })
    expect(late.json).toMatchObject({ resubmittable: false, failureCode: "rejected_by_ops", failureMessage: "Final." })
    const rejections = await events("application.rejected")
    expect(rejections.map((e) => e.data.resubmittable)).toEqual([true, false])
    const list = (await client.call("GET", "/v2/applications?applicationType=organization_onboarding")).json.data
    expect(list.map((a: any) => a.status)).toEqual(["cancelled", "rejected"])
    expectProblem(await submitOrganization(client), { type: "APPLICATION_INVALID_STATUS", status: 409, instance: "/sandbox/v2/organization/onboarding" })
  })

  it("an operator's activation emits organization.activated too, once; an operator restriction emits organization.restricted", async () => {
    await engine.run(Operator.updateOrganization("org_newco", { status: "active" }))
    await engine.run(Operator.updateOrganization("org_newco", { status: "active" }))
    expect((await events("organization.activated")).map((e) => e.data.organizationId)).toEqual(["org_newco"])
    expect((await newcoLive().call("GET", "/v2/customers")).status).toBe(200)
    await engine.run(Effect.flatMap(Store.Store, (store) => store.transaction(Restrictions.restrictOrganization("org_newco"))))
    expect((await events("organization.restricted")).map((e) => e.environment)).toEqual(["sandbox", "live"])
  })

  it("organization.restricted carries no reason or type; the simulate call restricts the sandbox alone", async () => {
    const r = await acme.call("POST", "/v2/simulate/organization/restrict")
    expect(r.status, r.text).toBe(200)
    const restricted = await events("organization.restricted")
    expect(restricted.map((e) => [e.environment, e.data])).toEqual([
      ["sandbox", { organizationId: "org_acme", occurredAt: new Date(START_MS).toISOString() }]
    ])
  })
})
