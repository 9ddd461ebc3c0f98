/**
 * Text the API refuses (packages/core/src/kernel/RefusedText.ts, packages/http/src/RefusedText.ts): a NUL character
 * or an unpaired surrogate, which PostgreSQL keeps in no text or jsonb column, anywhere in a JSON body (a value that
 * becomes an index entry, a name, a URL, a member name), in a query value or in a path parameter, on the API and on
 * the operator surface, is 400 VALIDATION_ERROR naming where it is, and a body that is not UTF-8 is 400
 * MALFORMED_JSON; the same answer, byte for byte but for the correlation id, on the memory store, on PGlite and,
 * when DATABASE_URL is set, on PostgreSQL, and nothing is written. A whole surrogate pair (an emoji) is kept, and
 * read back as sent, everywhere.
 */
import { Timers } from "@fos/core"
import { createEngine } from "@fos/http"
import { describe, expect, it } from "vitest"
import { clientOf, deuDocuments, deuSubmission, idem } from "./onboardingFixtures.ts"
import { expectProblem, keysOf, orgSeed, seedOf, START_MS } from "./support.ts"
import { closedAfterEach, storeMakers } from "./stores.ts"

const stores = storeMakers("refused_text")
const after = closedAfterEach()
const key = keysOf("acme").sandbox
const operatorToken = "refused-text-operator-token"

/** Every store's answers to the refused requests, by store, for the comparison at the end. */
const answers: Record<string, Array<unknown>> = {}

const nul = "a\u0000b"
const lone = "a\ud800b"
const emoji = "a\ud83d\ude00b"

describe.each(Object.keys(stores))("on the %s store", (name) => {
  it("refuses a NUL character or an unpaired surrogate anywhere in a request, writes nothing, and keeps a surrogate pair", async () => {
    const engine = after.engine(await createEngine({
      store: await after.store(name, "refused_text"),
      randomSeed: "refused-text",
      clock: { mode: "virtual", start: START_MS },
      realClock: Timers.makeVirtualClock(START_MS),
      webhookTransport: "memory",
      operatorToken,
      seed: seedOf(orgSeed("acme")) as never
    }))
    const acme = clientOf(engine.fetch, "http://fos", key)
    /** A request with the body `text` sent as it is (string or bytes), on the sandbox. */
    const raw = async (method: string, path: string, body?: string | Uint8Array<ArrayBuffer>) => {
      const response = await engine.fetch(new Request(`http://fos/sandbox${path}`, {
        method,
        headers: { "x-api-key": key, "content-type": "application/json", ...idem("raw") },
        ...(body === undefined ? {} : { body })
      }))
      const text = await response.text()
      return { status: response.status, headers: response.headers, text, json: JSON.parse(text), url: response.url || `http://fos/sandbox${path}` }
    }
    const seen: Array<unknown> = []
    answers[name] = seen
    /** A 400 of `type` with `errors` (when given), kept for the comparison of stores. */
    const refused = (reply: { status: number; headers: Headers; text: string; json: any }, type: string, instance: string, errors?: unknown) => {
      const problem = expectProblem(reply, { type, status: 400, instance })
      if (errors !== undefined) expect(problem.errors, reply.text).toEqual(errors)
      const { correlationId: _, ...rest } = problem
      seen.push(rest)
    }
    const docs = await deuDocuments(acme)
    const nulDetail = "holds a NUL character (U+0000), which the API does not accept"
    const loneDetail = "holds an unpaired surrogate (half a UTF-16 surrogate pair), which the API does not accept"

    // A clientReferenceId, unique per organization: an index entry on the SQL stores.
    refused(await acme.call("POST", "/v2/onboarding", deuSubmission(docs, { clientReferenceId: nul }), idem()), "VALIDATION_ERROR", "/sandbox/v2/onboarding", [
      { pointer: "/clientReferenceId", detail: nulDetail }
    ])
    const lonely = deuSubmission(docs, { clientReferenceId: "lonely" }) as any
    lonely.businessInfo.legalName = lone
    lonely.ownership.persons[0].lastName = "\udc00" + emoji
    refused(await acme.call("POST", "/v2/onboarding", lonely, idem()), "VALIDATION_ERROR", "/sandbox/v2/onboarding", [
      { pointer: "/businessInfo/legalName", detail: loneDetail },
      { pointer: "/ownership/persons/0/lastName", detail: loneDetail }
    ])
    // A member name, which is not echoed: its object is named.
    const named = deuSubmission(docs, { clientReferenceId: "named" }) as any
    named.businessInfo[`x${nul}`] = "y"
    refused(await acme.call("POST", "/v2/onboarding", named, idem()), "VALIDATION_ERROR", "/sandbox/v2/onboarding", [
      { pointer: "/businessInfo", detail: `has a member name that ${nulDetail}` }
    ])
    // The escape as a client may write it, upper-case; a URL, which the engine would have percent-encoded.
    refused(await raw("POST", "/v2/webhooks/endpoints", '{"url":"https://hooks.acme.test/\\uD800"}'), "VALIDATION_ERROR", "/sandbox/v2/webhooks/endpoints", [
      { pointer: "/url", detail: loneDetail }
    ])
    refused(await raw("POST", "/v2/webhooks/endpoints", '{"url":"https://hooks.acme.test/\\u0000"}'), "VALIDATION_ERROR", "/sandbox/v2/webhooks/endpoints", [
      { pointer: "/url", detail: nulDetail }
    ])
    // Bytes that are not UTF-8, which were read as U+FFFD.
    const encoder = new TextEncoder()
    const notUtf8 = new Uint8Array([...encoder.encode('{"url":"https://hooks.acme.test/'), 0xff, ...encoder.encode('"}')])
    refused(await raw("POST", "/v2/webhooks/endpoints", notUtf8), "MALFORMED_JSON", "/sandbox/v2/webhooks/endpoints")
    // A query value (PostgreSQL answered 500 on this filter), and a query whose percent-encoding is not UTF-8.
    refused(await acme.call("GET", "/v2/webhooks/deliveries?eventType=a%00b"), "VALIDATION_ERROR", "/sandbox/v2/webhooks/deliveries", [
      { pointer: "/eventType", detail: nulDetail }
    ])
    refused(await acme.call("GET", "/v2/webhooks/deliveries?eventType=a%ED%A0%80b"), "BAD_REQUEST", "/sandbox/v2/webhooks/deliveries")
    // A path parameter that is not an identifier (an identifier's schema refuses it first, INVALID_OID_FORMAT).
    refused(
      await acme.call("POST", "/v2/applications/app_0000000000000000000000000/persons/a%00b/idv-link"),
      "VALIDATION_ERROR",
      "/sandbox/v2/applications/app_0000000000000000000000000/persons/a%00b/idv-link",
      [{ pointer: "/referenceId", detail: nulDetail }]
    )
    // The operator surface's path and query parameters (PostgreSQL answered 500 on these reads), and its bodies.
    const operator = async (method: string, path: string, body?: string) => {
      const response = await engine.fetch(new Request(`http://fos${path}`, {
        method,
        headers: { authorization: `Bearer ${operatorToken}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body })
      }))
      const text = await response.text()
      return { status: response.status, headers: response.headers, text, json: JSON.parse(text), url: `http://fos${path}` }
    }
    refused(await operator("GET", "/operator/snapshots/a%00b/export"), "VALIDATION_ERROR", "/operator/snapshots/a%00b/export", [
      { pointer: "/id", detail: nulDetail }
    ])
    refused(
      await operator("GET", "/operator/organizations/org_acme/ledger/accounts/a%00b/journal"),
      "VALIDATION_ERROR",
      "/operator/organizations/org_acme/ledger/accounts/a%00b/journal",
      [{ pointer: "/holderId", detail: nulDetail }]
    )
    refused(await operator("GET", "/operator/organizations/org_acme/events?type=a%00b"), "VALIDATION_ERROR", "/operator/organizations/org_acme/events", [
      { pointer: "/type", detail: nulDetail }
    ])
    refused(await operator("POST", "/operator/organizations", '{"name":"a\\u0000b"}'), "VALIDATION_ERROR", "/operator/organizations", [
      { pointer: "/name", detail: nulDetail }
    ])

    // Nothing was written.
    expect((await acme.call("GET", "/v2/applications")).json.data).toEqual([])
    expect((await acme.call("GET", "/v2/webhooks/endpoints")).json.data).toEqual([])

    // A snapshot file given to the embedded engine, as text or as a value; the import keeps nothing.
    const snapshot = await engine.snapshot({ organizationId: "org_acme" })
    const file = JSON.parse(await engine.exportSnapshot(snapshot.id))
    const text = JSON.stringify(file)
    expect(text).toContain('.pdf"')
    // A document's file name, which its upload could not have held.
    const imported = await engine.importSnapshot(text.replace('.pdf"', '\\u0000.pdf"')).then(() => undefined, (e) => e)
    expect(imported).toMatchObject({ code: "VALIDATION_ERROR" })
    expect(imported.errors).toEqual([{ pointer: "/tables/documents/0/fileName", detail: nulDetail }])
    await expect(engine.importSnapshot({ ...file, note: lone })).rejects.toMatchObject({ code: "VALIDATION_ERROR", errors: [{ pointer: "/note", detail: loneDetail }] })
    expect(await engine.snapshots({ organizationId: "org_acme" })).toHaveLength(1)

    // A surrogate pair is text like any other, in a body, an index entry and a query.
    const kept = await acme.call("POST", "/v2/onboarding", deuSubmission(docs, { clientReferenceId: emoji }), idem())
    expect(kept.status, kept.text).toBe(201)
    expect(kept.json.clientReferenceId).toBe(emoji)
    const listed = await acme.call("GET", "/v2/applications")
    expect(listed.json.data.map((a: any) => a.clientReferenceId)).toEqual([emoji])
    const again = await acme.call("POST", "/v2/onboarding", deuSubmission(docs, { clientReferenceId: emoji }), idem())
    expect(again.status, again.text).toBe(409)
    expect(again.json.type).toBe("DUPLICATE_CLIENT_REFERENCE_ID")
    const hook = await raw("POST", "/v2/webhooks/endpoints", '{"url":"https://hooks.acme.test/\\ud83d\\ude00"}')
    expect(hook.status, hook.text).toBe(201)
    expect((await acme.call("GET", "/v2/webhooks/deliveries?eventType=a%F0%9F%98%80b")).status).toBe(200)
    // A backslash before "u0000" is no escape of NUL.
    const backslash = await raw("POST", "/v2/webhooks/endpoints", '{"url":"https://hooks.acme.test/\\\\u0000"}')
    expect(backslash.status, backslash.text).toBe(201)
  }, 120_000)
})

describe("every store", () => {
  it("answers the same problems to the same requests", () => {
    const [first, ...rest] = Object.keys(answers)
    expect(first).toBeDefined()
    for (const other of rest) expect(answers[other], `${other} against ${first}`).toEqual(answers[first!])
  })
})
