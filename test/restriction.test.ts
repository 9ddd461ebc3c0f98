/**
 * A restricted organization, through the HTTP API (docs/decisions.md, "Organizations"): it keeps reading, managing
 * its webhooks, its own onboarding, its documents and the sandbox's simulate endpoints; new business (customer
 * onboarding, customer updates, feature applications, and every endpoint that writes unless it is marked open) is
 * refused with 403 ORGANIZATION_ACCESS_SUSPENDED. The simulate restriction holds in the sandbox only, an operator's
 * in both environments; both are lifted the same way they are placed.
 */
import { Outbox, Timers } from "@fos/core"
import { createEngine, type Engine } from "@fos/http"

import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { type Client, clientOf, deuDocuments, deuSubmission, idem } from "./onboardingFixtures.ts"
import { expectProblem, keysOf, orgSeed, rateHeaders, seedOf, START_MS } from "./support.ts"

const operatorToken = "restriction-test-operator-token"
let engine: Engine
let acme: Client
let acmeLive: Client
let rival: Client

beforeEach(async () => {
  engine = await createEngine({
    clock: { mode: "virtual", start: START_MS },
    realClock: Timers.makeVirtualClock(START_MS),
    webhookTransport: "memory",
    operatorToken,
    seed: seedOf(orgSeed("acme"), orgSeed("rival")) as never
  })
  acme = clientOf(engine.fetch, "http://fos", keysOf("acme").sandbox)
  acmeLive = clientOf(engine.fetch, "http://fos", keysOf("acme").live, "live")
  rival = clientOf(engine.fetch, "http://fos", keysOf("rival").sandbox)
})
afterEach(async () => {
  await engine?.close()
})

const events = async (type: string) =>
  ((await engine.run(Outbox.readEvents(undefined, 10_000))) as ReadonlyArray<Outbox.OutboxEvent>).filter((e) => e.type === type)

const operator = (method: string, path: string) =>
  engine.fetch(new Request(`http://fos${path}`, { method, headers: { authorization: `Bearer ${operatorToken}` } }))

/** An approved customer of `client`, made before any restriction. */
const customerOf = async (client: Client) => {
  const submitted = await client.call("POST", "/v2/onboarding", deuSubmission(await deuDocuments(client)), idem())
  expect(submitted.status, submitted.text).toBe(201)
  const decided = await client.call("POST", `/v2/simulate/applications/${submitted.json.applicationId}/decision`, { outcome: "approved" })
  return decided.json.customerId as string
}

const suspended = (reply: Awaited<ReturnType<Client["call"]>>, instance: string) => {
  const problem = expectProblem(reply, { type: "ORGANIZATION_ACCESS_SUSPENDED", status: 403, instance })
  // A restriction is not a suspension: its resolution says what is refused and how it ends, not "suspended".
  expect(problem.resolution).not.toMatch(/suspen/i)
  expect(problem.resolution).toMatch(/restriction/)
  // The key was accepted: the refusal counts against the bucket and says so (the spec's Limits).
  rateHeaders(reply)
}

describe("a restricted organization", () => {
  it("is refused new business with 403 ORGANIZATION_ACCESS_SUSPENDED, and keeps everything else", async () => {
    const customerId = await customerOf(acme)
    const restricted = await acme.call("POST", "/v2/simulate/organization/restrict")
    expect(restricted.status, restricted.text).toBe(200)
    expect(restricted.json).toEqual({ organizationId: "org_acme", restricted: true })

    // Refused: new customers, changes to customers, new features.
    suspended(await acme.call("POST", "/v2/onboarding", deuSubmission(await deuDocuments(acme), { clientReferenceId: "after" }), idem()), "/sandbox/v2/onboarding")
    suspended(
      await acme.call("POST", `/v2/customers/${customerId}/features`, { type: "virtual_account", asset: { code: "EUR" } }, idem()),
      `/sandbox/v2/customers/${customerId}/features`
    )
    suspended(await acme.call("POST", `/v2/customers/${customerId}/updates`, {}, idem()), `/sandbox/v2/customers/${customerId}/updates`)

    // Open: reads, webhook management, documents, its own onboarding, simulate.
    expect((await acme.call("GET", "/v2/customers")).json.data.map((c: any) => c.id)).toEqual([customerId])
    expect((await acme.call("GET", `/v2/customers/${customerId}`)).status).toBe(200)
    expect((await acme.call("GET", "/v2/portal/users/me")).status).toBe(200)
    const endpoint = await acme.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.acme.test/fos" })
    expect(endpoint.status, endpoint.text).toBe(201)
    expect((await acme.call("PATCH", `/v2/webhooks/endpoints/${endpoint.json.id}`, { status: "disabled" })).status).toBe(200)
    expect((await acme.call("POST", `/v2/webhooks/endpoints/${endpoint.json.id}/rotate`, undefined, idem())).status).toBe(200)
    expect((await acme.call("DELETE", `/v2/webhooks/endpoints/${endpoint.json.id}`)).status).toBe(204)
    await acme.upload("passport")
    const own = await acme.call("POST", "/v2/organization/onboarding", {}, idem())
    expect(own.json.type).not.toBe("ORGANIZATION_ACCESS_SUSPENDED")
    expect((await acme.call("POST", "/v2/simulate/events", { type: "customer.created" })).status).toBe(201)

    // The simulate restriction is the sandbox's: live and other organizations go on.
    expect((await acmeLive.call("POST", "/v2/onboarding", {}, idem())).json.type).not.toBe("ORGANIZATION_ACCESS_SUSPENDED")
    expect((await rival.call("POST", "/v2/onboarding", deuSubmission(await deuDocuments(rival)), idem())).status).toBe(201)
    expect((await events("organization.restricted")).map((e) => [e.organizationId, e.environment])).toEqual([["org_acme", "sandbox"]])
  })

  it("is lifted by POST /v2/simulate/organization/unrestrict, which emits nothing", async () => {
    await acme.call("POST", "/v2/simulate/organization/restrict")
    // Restricting again changes nothing and emits nothing.
    await acme.call("POST", "/v2/simulate/organization/restrict")
    expect(await events("organization.restricted")).toHaveLength(1)
    const lifted = await acme.call("POST", "/v2/simulate/organization/unrestrict")
    expect(lifted.status, lifted.text).toBe(200)
    expect(lifted.json).toEqual({ organizationId: "org_acme", restricted: false })
    expect((await acme.call("POST", "/v2/onboarding", deuSubmission(await deuDocuments(acme)), idem())).status).toBe(201)
    expect(await events("organization.restricted")).toHaveLength(1)
  })

  it("by an operator holds in both environments, survives a sandbox reset, and is lifted by an operator", async () => {
    const placed = await operator("POST", "/operator/organizations/org_acme/restrict")
    expect(placed.status).toBe(200)
    expect((await events("organization.restricted")).map((e) => e.environment)).toEqual(["sandbox", "live"])
    suspended(await acmeLive.call("POST", "/v2/onboarding", {}, idem()), "/live/v2/onboarding")
    suspended(await acme.call("POST", "/v2/onboarding", {}, idem()), "/sandbox/v2/onboarding")
    expect((await acme.call("POST", "/v2/simulate/reset")).status).toBe(200)
    suspended(await acme.call("POST", "/v2/onboarding", {}, idem()), "/sandbox/v2/onboarding")

    const lifted = await operator("POST", "/operator/organizations/org_acme/unrestrict")
    expect(lifted.status).toBe(200)
    expect(await lifted.json()).toEqual({ organizationId: "org_acme", restricted: false })
    expect((await acmeLive.call("POST", "/v2/onboarding", {}, idem())).json.type).toBe("VALIDATION_ERROR")
    expect((await acme.call("POST", "/v2/onboarding", {}, idem())).json.type).toBe("VALIDATION_ERROR")
  })
})
