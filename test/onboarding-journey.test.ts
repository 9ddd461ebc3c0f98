/**
 * The onboarding journey, black box, through `fos serve` and a receiver on loopback: requirements, document
 * uploads, an incomplete submission and the corrected one under the same Idempotency-Key, the decision, the
 * events received and verified (node:crypto over the raw bytes), and the customer in the list, on PGlite.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import { once } from "node:events"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { killAllFos, startFos } from "./fosProcess.ts"
import { clientOf, deuDocuments, deuSubmission } from "./onboardingFixtures.ts"
import { pgliteDirectoryAt } from "../adapters/sql/test/pgliteDirectory.ts"

const key = `ck_sandbox_${"4b".repeat(32)}`
const tmp = mkdtempSync(join(tmpdir(), "fos-journey-"))
const seedPath = join(tmp, "seed.json")
writeFileSync(seedPath, JSON.stringify({
  organizations: [{
    id: "org_journey",
    name: "Journey",
    status: "active",
    users: [{ id: "usr_journey", email: "ops@journey.test", role: "admin" }],
    apiKeys: [{ key, access: "read_write", createdBy: "usr_journey" }]
  }]
}))
let receiver: Server | undefined

afterAll(() => {
  killAllFos()
  receiver?.close()
  rmSync(tmp, { recursive: true, force: true })
})

interface Received {
  readonly raw: Buffer
  readonly signature: string
}

/** Verifies as a receiver would: HMAC-SHA256 of `t.` + the raw bytes, any v1 may match, before parsing. */
const verified = (hit: Received, secret: string): any => {
  const parts = hit.signature.split(",").map((p) => p.split("=") as [string, string])
  const t = parts.find(([k]) => k === "t")![1]
  const expected = createHmac("sha256", secret).update(Buffer.concat([Buffer.from(`${t}.`), hit.raw])).digest()
  const ok = parts.filter(([k]) => k === "v1").some(([, v]) => timingSafeEqual(Buffer.from(v, "hex"), expected))
  expect(ok, "signature verifies").toBe(true)
  return JSON.parse(hit.raw.toString("utf8"))
}

describe("the onboarding journey through fos serve", () => {
  it("requirements, documents, an incomplete then corrected submission, the decision, verified events, the customer", async () => {
    const hits: Array<Received> = []
    receiver = createServer((req: IncomingMessage, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        hits.push({ raw: Buffer.concat(chunks), signature: String(req.headers["x-service-signature"]) })
        res.writeHead(204).end()
      })
    })
    receiver.listen(0, "127.0.0.1")
    await once(receiver, "listening")
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`

    // On the durable default store (PGlite), so the onboarding tables go through SQL.
    const fos = await startFos(["--store", await pgliteDirectoryAt(join(tmp, "store")), "--port", "0", "--clock", "virtual", "--insecure-webhooks", "--seed", seedPath])
    const client = clientOf((request) => fetch(request), fos.origin, key)

    const endpoint = await client.call("POST", "/v2/webhooks/endpoints", { url: hookUrl })
    expect(endpoint.status, endpoint.text).toBe(201)
    const secret: string = endpoint.json.secret

    // 1. Requirements.
    const requirements = await client.call("GET", "/v2/onboarding/requirements?country=DEU")
    expect(requirements.status).toBe(200)
    expect(requirements.json.business.documents.map((d: any) => d.type)).toEqual(["certificate_of_incorporation", "articles_of_association"])
    expect(requirements.json.legalStructures.map((s: any) => s.value)).toContain("gmbh")

    // 2. Documents.
    const docs = await deuDocuments(client)
    const doc = await client.call("GET", `/v2/documents/${docs.passport}`)
    expect(doc.json).toMatchObject({ id: docs.passport, type: "passport", contentType: "application/pdf" })

    // 3. An incomplete submission, then the corrected one with the same Idempotency-Key.
    const idempotency = { "idempotency-key": "journey-onboarding-1" }
    const incomplete = await client.call("POST", "/v2/onboarding", deuSubmission({ ...docs, articles: docs.register }), idempotency)
    expect(incomplete.status).toBe(422)
    expect(incomplete.json.type).toBe("ONBOARDING_NOT_READY")
    expect(incomplete.json.errors).toContainEqual(expect.objectContaining({ pointer: "/documentIds", category: "document" }))
    const submitted = await client.call("POST", "/v2/onboarding", deuSubmission(docs), idempotency)
    expect(submitted.status, submitted.text).toBe(201)
    const { applicationId, customerId } = submitted.json

    // 4. The decision.
    const decision = await client.call("POST", `/v2/simulate/applications/${applicationId}/decision`, { outcome: "approved" })
    expect(decision.status, decision.text).toBe(200)
    expect(decision.json.status).toBe("approved")

    // 5. The events, received and verified. Deliveries go out once the decision commits, in the background: the
    // flush answers when their attempts are recorded.
    const flushed = await client.call("POST", "/v2/simulate/webhooks/flush")
    expect(flushed.json.complete).toBe(true)
    // The pair is written in one transaction; deliveries run side by side, so they may arrive in either order.
    const received = hits.map((hit) => verified(hit, secret)).sort((a, b) => a.type.localeCompare(b.type))
    expect(received.map((e) => e.type)).toEqual(["application.approved", "customer.created"])
    expect(received[0].data).toMatchObject({ applicationId, applicationType: "customer_onboarding", customerId, clientReferenceId: "acme-gmbh" })
    expect(received[1].data).toMatchObject({ applicationId, customerId })
    for (const event of received) expect(event).toMatchObject({ apiVersion: "2", mode: "sandbox", id: expect.stringMatching(/^evt_/) })

    // 6. The customer in the list.
    const customers = await client.call("GET", "/v2/customers")
    expect(customers.json.data).toEqual([expect.objectContaining({ id: customerId, name: "Acme GmbH", status: "active", clientReferenceId: "acme-gmbh" })])
    await fos.stop()
  })
})
