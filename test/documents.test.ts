/**
 * Documents through the whole pipeline (engine.fetch): POST /v2/documents (multipart only, size limit, content
 * types checked against the bytes, hostile file names and bodies, the dedicated bucket, idempotent retries) and
 * GET /v2/documents/{id}; then `Documents.require`, the check onboarding submissions use. Bytes and hashes are
 * checked with node:crypto, not with fos's code.
 */
import { createHash } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Problem } from "@fos/core"
import { Auth, Documents, Store, Tenancy } from "@fos/core"
import { type CustomerId, maxDocumentBytes } from "@fos/contract"
import { createEngine, type Engine } from "@fos/http"
import * as fc from "fast-check"
import { layerPgliteStore } from "@fos/sql"
import { Effect, Exit } from "effect"
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest"
import { killAllFos, startFos } from "./fosProcess.ts"
import {
  expectProblem,
  httpCall,
  insertCustomers,
  isoMs,
  keysOf,
  makeEngine,
  orgSeed,
  rateHeaders,
  type Reply,
  seedOf,
  START_MS,
  toReply
} from "./support.ts"
import { pgliteDirectoryAt } from "../adapters/sql/test/pgliteDirectory.ts"

const A = keysOf("docs")
const B = keysOf("rival")
const path = "/sandbox/v2/documents"

let engine: Engine
beforeEach(async () => {
  engine = await makeEngine(seedOf(orgSeed("docs"), orgSeed("rival")))
  await insertCustomers(engine, [
    { id: "cus_docs1", organizationId: "org_docs", createdAt: "2026-01-01T00:00:00.000Z" },
    { id: "cus_docs2", organizationId: "org_docs", createdAt: "2026-01-01T00:00:00.000Z" },
    { id: "cus_rival1", organizationId: "org_rival", createdAt: "2026-01-01T00:00:00.000Z" }
  ])
})
afterEach(async () => engine?.close())

// --- files and forms -------------------------------------------------------------------------------------------

const withHead = (head: ReadonlyArray<number>, size: number): Uint8Array => {
  const bytes = new Uint8Array(size).fill(0x2a)
  for (let i = 0; i < Math.min(size, 4096); i++) bytes[i] = (i * 31 + 7) % 256
  bytes.set(head.slice(0, size))
  return bytes
}
const pdf = (size = 300) => withHead([...Buffer.from("%PDF-1.7\n")], size)
const png = (size = 300) => withHead([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], size)
const jpeg = (size = 300) => withHead([0xff, 0xd8, 0xff, 0xe0], size)
/** A Windows executable's first bytes. */
const exe = (size = 300) => withHead([0x4d, 0x5a, 0x90, 0x00], size)

type Part =
  | { readonly name: string; readonly value: string }
  | {
    readonly name: string
    readonly fileName: string
    readonly contentType?: string
    readonly bytes: Uint8Array
    /** Send the name as RFC 5987 `filename*=UTF-8''…` (percent-encoded), which may carry any character. */
    readonly encodedName?: boolean
  }

/** A multipart/form-data body written by hand, so tests control every byte (boundary, headers, names). */
const formBody = (parts: ReadonlyArray<Part>, boundary = "fosTestBoundary0"): Uint8Array<ArrayBuffer> => {
  const chunks: Array<Uint8Array> = []
  const text = (s: string) => chunks.push(new Uint8Array(Buffer.from(s, "utf8")))
  for (const part of parts) {
    text(`--${boundary}\r\n`)
    if ("value" in part) {
      text(`Content-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`)
    } else {
      const fileName = part.encodedName === true ? `filename*=UTF-8''${encodeURIComponent(part.fileName)}` : `filename="${part.fileName}"`
      text(`Content-Disposition: form-data; name="${part.name}"; ${fileName}\r\n`)
      if (part.contentType !== undefined) text(`Content-Type: ${part.contentType}\r\n`)
      text("\r\n")
      chunks.push(part.bytes)
      text("\r\n")
    }
  }
  text(`--${boundary}--\r\n`)
  return new Uint8Array(Buffer.concat(chunks))
}

interface Send {
  readonly key?: string
  readonly boundary?: string
  readonly headers?: Record<string, string>
}

const send = async (body: BodyInit, contentType: string | undefined, options: Send = {}): Promise<Reply> => {
  const headers = new Headers({ "x-api-key": options.key ?? A.sandbox, ...options.headers })
  if (contentType !== undefined) headers.set("content-type", contentType)
  return toReply(await engine.fetch(new Request(`http://localhost${path}`, { method: "POST", headers, body })))
}

/** Uploads a hand-written form. */
const upload = (parts: ReadonlyArray<Part>, options: Send = {}) => {
  const boundary = options.boundary ?? "fosTestBoundary0"
  return send(formBody(parts, boundary), `multipart/form-data; boundary=${boundary}`, options)
}

const filePart = (bytes: Uint8Array, contentType = "application/pdf", fileName = "certificate.pdf"): Part => ({
  name: "file",
  fileName,
  contentType,
  bytes
})

const get = async (id: string, key = A.sandbox, base = "/sandbox") =>
  toReply(await engine.fetch(new Request(`http://localhost${base}/v2/documents/${id}`, { headers: { "x-api-key": key } })))

const documentCount = (scope = "org_docs/sandbox") =>
  engine.run(Effect.flatMap(Store.Store, (store) => store.count(Documents.Documents, "byScope", scope)))

const storedBytes = (id: string) =>
  engine.run(Effect.flatMap(Store.Store, (store) => store.get(Documents.DocumentContents, id))).then((row) => (row === undefined ? undefined : new Uint8Array(Buffer.from(row.base64, "base64"))))

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

/** A 400 VALIDATION_ERROR of the upload form: `field` names the form field, errors[] points at it. */
const expectFormError = (r: Reply, field: string) => {
  const p = expectProblem(r, { type: "VALIDATION_ERROR", status: 400, instance: path, nowMs: START_MS })
  expect(p.field).toBe(field)
  expect(p.errors.map((e: { pointer: string }) => e.pointer)).toContain(`/${field}`)
  return p
}

// --- upload and read -------------------------------------------------------------------------------------------

describe("POST /v2/documents and GET /v2/documents/{id}", () => {
  it("uploads a PDF: 201 with its metadata; GET returns the same metadata and never the bytes", async () => {
    const bytes = pdf(5000)
    const r = await upload([{ name: "type", value: "certificate_of_incorporation" }, filePart(bytes)])
    expect(r.status, r.text).toBe(201)
    expect(r.headers.get("content-type")).toMatch(/^application\/json/)
    expect(Object.keys(r.json).sort()).toEqual(["contentType", "createdAt", "fileName", "id", "sha256", "size", "type"])
    expect(r.json).toMatchObject({
      type: "certificate_of_incorporation",
      fileName: "certificate.pdf",
      contentType: "application/pdf",
      size: 5000,
      sha256: sha256(bytes),
      createdAt: new Date(START_MS).toISOString()
    })
    expect(r.json.id).toMatch(/^doc_[0-9a-z]{24}$/)
    expect(r.json.createdAt).toMatch(isoMs)

    const read = await get(r.json.id)
    expect(read.status).toBe(200)
    expect(read.json).toEqual(r.json)
    expect(read.text.length).toBeLessThan(1000)
    // The bytes are kept whole, under the document's id.
    expect(await storedBytes(r.json.id)).toEqual(bytes)
    expect(await documentCount()).toBe(1)
  })

  it("accepts JPEG and PNG, and a browser-built FormData (its own boundary)", async () => {
    const j = await upload([filePart(jpeg(), "image/jpeg", "passport.jpg"), { name: "type", value: "passport" }])
    expect(j.status, j.text).toBe(201)
    expect(j.json.contentType).toBe("image/jpeg")
    const form = new FormData()
    form.set("type", "proof_of_address")
    form.set("file", new File([png(1234) as Uint8Array<ArrayBuffer>], "bill.png", { type: "image/png" }))
    const p = await toReply(await engine.fetch(new Request(`http://localhost${path}`, { method: "POST", headers: { "x-api-key": A.sandbox }, body: form })))
    expect(p.status, p.text).toBe(201)
    expect(p.json).toMatchObject({ type: "proof_of_address", contentType: "image/png", fileName: "bill.png", size: 1234 })
  })

  it("with customerId of the caller's customer, the document is attached to it and shows customerId", async () => {
    const r = await upload([filePart(pdf()), { name: "type", value: "bank_statement" }, { name: "customerId", value: "cus_docs1" }])
    expect(r.status, r.text).toBe(201)
    expect(r.json.customerId).toBe("cus_docs1")
    expect((await get(r.json.id)).json.customerId).toBe("cus_docs1")
  })

  it("customerId of another organization's customer, or of none: 404 CUSTOMER_NOT_FOUND, nothing kept", async () => {
    for (const customerId of ["cus_rival1", "cus_nobody"]) {
      const r = await upload([filePart(pdf()), { name: "type", value: "passport" }, { name: "customerId", value: customerId }])
      expectProblem(r, { type: "CUSTOMER_NOT_FOUND", status: 404, instance: path, nowMs: START_MS })
      expect(r.text).not.toContain(customerId)
    }
    expect(await documentCount()).toBe(0)
  })

  it("a customerId that is not a customer id: 400 VALIDATION_ERROR with field customerId", async () => {
    for (const value of ["doc_abc", "", "cus_../x"]) {
      const r = await upload([filePart(pdf()), { name: "type", value: "passport" }, { name: "customerId", value }])
      expectFormError(r, "customerId")
    }
    expect(await documentCount()).toBe(0)
  })

  it("GET of another organization's document, of the other environment's, or of none: 404 NOT_FOUND", async () => {
    const mine = (await upload([filePart(pdf()), { name: "type", value: "other" }])).json.id as string
    expectProblem(await get(mine, B.sandbox), { type: "NOT_FOUND", status: 404, instance: `/sandbox/v2/documents/${mine}` })
    expectProblem(await get(mine, A.live, "/live"), { type: "NOT_FOUND", status: 404, instance: `/live/v2/documents/${mine}` })
    expectProblem(await get("doc_missing0"), { type: "NOT_FOUND", status: 404, instance: "/sandbox/v2/documents/doc_missing0" })
    expect((await get(mine)).status).toBe(200)
  })

  it("GET with an id that is not a document id: 400 INVALID_OID_FORMAT", async () => {
    for (const id of ["cus_abc", "doc_", "doc_a-b", "passwd"]) {
      expectProblem(await get(id), { type: "INVALID_OID_FORMAT", status: 400, instance: `/sandbox/v2/documents/${id}` })
    }
  })
})

// --- what the endpoint refuses ---------------------------------------------------------------------------------

describe("POST /v2/documents refusals (nothing is ever kept)", () => {
  afterEach(async () => expect(await documentCount()).toBe(0))

  it("JSON, text/plain or no Content-Type: 415 UNSUPPORTED_MEDIA_TYPE saying multipart is required", async () => {
    const json = await send(JSON.stringify({ type: "passport", file: "JVBERi0=" }), "application/json")
    const p = expectProblem(json, { type: "UNSUPPORTED_MEDIA_TYPE", status: 415, instance: path, nowMs: START_MS })
    expect(p.detail).toContain("multipart/form-data")
    expectProblem(await send("type=passport", "text/plain"), { type: "UNSUPPORTED_MEDIA_TYPE", status: 415, instance: path })
    expectProblem(await send(new Uint8Array(formBody([filePart(pdf())])), undefined), { type: "UNSUPPORTED_MEDIA_TYPE", status: 415, instance: path })
    expectProblem(await send("a=b", "application/x-www-form-urlencoded"), { type: "UNSUPPORTED_MEDIA_TYPE", status: 415, instance: path })
  })

  it(`a file over ${maxDocumentBytes} bytes: 413 FILE_TOO_LARGE with the limit and field; exactly the limit is accepted`, async () => {
    const r = await upload([{ name: "type", value: "passport" }, filePart(pdf(maxDocumentBytes + 1))])
    const p = expectProblem(r, { type: "FILE_TOO_LARGE", status: 413, instance: path, nowMs: START_MS })
    expect(p.field).toBe("file")
    expect(p.detail).toContain(String(maxDocumentBytes))
    expect(p.errors).toBeUndefined()
    // The field named is the part that is too large.
    const extra = await upload([{ name: "type", value: "passport" }, { name: "scan", fileName: "big.pdf", contentType: "application/pdf", bytes: pdf(maxDocumentBytes + 1) }])
    expect(expectProblem(extra, { type: "FILE_TOO_LARGE", status: 413, instance: path }).field).toBe("scan")
    // A body far over the limit is refused while it is read.
    const huge = await upload([{ name: "type", value: "passport" }, filePart(pdf(3 * maxDocumentBytes))])
    expect(expectProblem(huge, { type: "FILE_TOO_LARGE", status: 413, instance: path }).field).toBe("file")

    expect(await documentCount()).toBe(0)
    const atLimit = await upload([{ name: "type", value: "passport" }, filePart(pdf(maxDocumentBytes))])
    expect(atLimit.status, atLimit.text).toBe(201)
    expect(atLimit.json.size).toBe(maxDocumentBytes)
    await engine.run(Effect.flatMap(Store.Store, (store) => Effect.all([store.remove(Documents.Documents, atLimit.json.id), store.remove(Documents.DocumentContents, atLimit.json.id)])))
  })

  it("a streamed body over the limit without Content-Length: 413 FILE_TOO_LARGE", async () => {
    const bytes = formBody([{ name: "type", value: "passport" }, filePart(pdf(maxDocumentBytes + 200 * 1024))])
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 256 * 1024) controller.enqueue(bytes.slice(i, i + 256 * 1024))
        controller.close()
      }
    })
    const request = new Request(`http://localhost${path}`, {
      method: "POST",
      headers: { "x-api-key": A.sandbox, "content-type": "multipart/form-data; boundary=fosTestBoundary0" },
      body,
      duplex: "half"
    } as RequestInit)
    expect(request.headers.get("content-length")).toBeNull()
    const p = expectProblem(await toReply(await engine.fetch(request)), { type: "FILE_TOO_LARGE", status: 413, instance: path })
    expect(p.field).toBe("file")
  })

  it("a content type outside PDF, JPEG and PNG: 400 VALIDATION_ERROR with field file", async () => {
    for (const contentType of ["text/plain", "application/octet-stream", "image/gif", "application/x-msdownload"]) {
      const p = expectFormError(await upload([{ name: "type", value: "passport" }, filePart(pdf(), contentType, "scan.pdf")]), "file")
      expect(p.errors[0].detail).toContain("application/pdf")
    }
    // A file part without a Content-Type is application/octet-stream, so it is refused too.
    expectFormError(await upload([{ name: "type", value: "passport" }, { name: "file", fileName: "scan.pdf", bytes: pdf() }]), "file")
  })

  it("bytes that do not match the declared type (a renamed executable): 400 VALIDATION_ERROR with field file", async () => {
    expectFormError(await upload([{ name: "type", value: "passport" }, filePart(exe(), "application/pdf", "invoice.pdf")]), "file")
    expectFormError(await upload([{ name: "type", value: "passport" }, filePart(exe(), "image/png", "photo.png")]), "file")
    expectFormError(await upload([{ name: "type", value: "passport" }, filePart(png(), "image/jpeg", "photo.jpg")]), "file")
    expectFormError(await upload([{ name: "type", value: "passport" }, filePart(new Uint8Array([0x25, 0x50, 0x44]), "application/pdf")]), "file")
  })

  it("no file, an empty file, the file sent twice or as a text field: 400 VALIDATION_ERROR with field file", async () => {
    const missing = expectFormError(await upload([{ name: "type", value: "passport" }]), "file")
    expect(missing.errors).toEqual([{ pointer: "/file", detail: "is required" }])
    expectFormError(await upload([{ name: "type", value: "passport" }, filePart(new Uint8Array(0))]), "file")
    expectFormError(await upload([{ name: "type", value: "passport" }, filePart(pdf()), filePart(pdf())]), "file")
    expectFormError(await upload([{ name: "type", value: "passport" }, { name: "file", value: "%PDF-1.7 not a file part" }]), "file")
  })

  it("no type, a blank type or an unknown type: 400 VALIDATION_ERROR with field type, never echoing the value", async () => {
    const missing = expectFormError(await upload([filePart(pdf())]), "type")
    expect(missing.errors).toEqual([{ pointer: "/type", detail: "is required" }])
    expectFormError(await upload([filePart(pdf()), { name: "type", value: "   " }]), "type")
    const unknown = await upload([filePart(pdf()), { name: "type", value: "selfie-zq-secret" }])
    const p = expectFormError(unknown, "type")
    expect(p.errors[0].detail).toContain("passport")
    expect(unknown.text).not.toContain("selfie-zq-secret")
  })

  it("a part the form does not take: 400 VALIDATION_ERROR naming it, as an unknown member of a JSON body is", async () => {
    const r = await upload([filePart(pdf()), { name: "type", value: "passport" }, { name: "customerID", value: "cus_x" }, { name: "a/b", value: "1" }])
    const p = expectFormError(r, "customerID")
    expect(p.errors).toEqual([{ pointer: "/customerID", detail: "is not allowed" }, { pointer: "/a~1b", detail: "is not allowed" }])
    expect(await documentCount()).toBe(0)
  })

  it("both fields wrong: one errors[] entry each, field names the first", async () => {
    const p = expectFormError(await upload([]), "file")
    expect(p.errors).toEqual([{ pointer: "/file", detail: "is required" }, { pointer: "/type", detail: "is required" }])
  })

  it("a request that breaks two rules gets the first: the file's size, then the form, then the customer", async () => {
    const unknownCustomer = { name: "customerId", value: "cus_nobody" }
    // The form, before the customer it names.
    expectFormError(await upload([filePart(pdf()), { name: "type", value: "selfie" }, unknownCustomer]), "type")
    expectFormError(await upload([filePart(exe(), "application/pdf", "invoice.pdf"), { name: "type", value: "passport" }, unknownCustomer]), "file")
    // The size, while the body is read, before the form and the customer.
    const large = await upload([{ name: "type", value: "selfie" }, unknownCustomer, filePart(pdf(maxDocumentBytes + 1))])
    expect(expectProblem(large, { type: "FILE_TOO_LARGE", status: 413, instance: path }).field).toBe("file")
  })

  it("garbage, truncated or malformed multipart: a 4xx problem, never a 500", async () => {
    const ct = "multipart/form-data; boundary=fosTestBoundary0"
    const good = formBody([{ name: "type", value: "passport" }, filePart(pdf())])
    const cases: Array<[string, BodyInit, string]> = [
      ["not multipart at all", "hello, this is not a form", ct],
      ["truncated before the closing boundary", new Uint8Array(good.slice(0, good.length - 40)), ct],
      ["no boundary parameter", new Uint8Array(good), "multipart/form-data"],
      ["another boundary than the body's", new Uint8Array(good), "multipart/form-data; boundary=somethingElse"],
      ["a part header that is not a header", "--fosTestBoundary0\r\nnot a header\r\n\r\nx\r\n--fosTestBoundary0--\r\n", ct],
      ["an empty body", "", ct],
      // effect 4.1.0's parser throws on this one: a part's headers cut off by the next boundary.
      ["part headers that never end", '--fosTestBoundary0\r\nContent-Disposition: form-data; name="type"\r\n--fosTestBoundary0--\r\n', ct],
      ["random bytes", new Uint8Array(exe(4096)), ct]
    ]
    for (const [label, body, contentType] of cases) {
      const r = await send(body, contentType)
      expect(r.status, `${label}: ${r.text}`).toBeGreaterThanOrEqual(400)
      expect(r.status, label).toBeLessThan(500)
      expectProblem(r, { type: "BAD_REQUEST", status: 400, instance: path })
    }
    // A part without Content-Disposition has no name: it is not the file.
    const nameless = "--fosTestBoundary0\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.7\r\n--fosTestBoundary0--\r\n"
    expectFormError(await send(nameless, ct), "file")
    const many = Array.from({ length: 40 }, (_, i) => ({ name: `f${i}`, value: "x" }))
    const p = expectProblem(await upload(many), { type: "VALIDATION_ERROR", status: 400, instance: path })
    expect(p.errors).toEqual([{ pointer: "", detail: "must have at most 16 parts" }])
  })
})

describe("hostile multipart, generated", () => {
  /** A valid form with random damage: cut short, bytes overwritten, or boundary and header fragments spliced in. */
  const damaged = fc.record({
    parts: fc.constantFrom<ReadonlyArray<Part>>(
      [{ name: "type", value: "passport" }, filePart(pdf(600))],
      [filePart(png(600), "image/png", "../x.png"), { name: "type", value: "other" }, { name: "customerId", value: "cus_docs1" }]
    ),
    cut: fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.nat() }),
    writes: fc.array(fc.tuple(fc.nat(), fc.oneof(
      fc.uint8Array({ minLength: 1, maxLength: 8 }),
      fc.constantFrom("\r\n", "--fosTestBoundary0", "--fosTestBoundary0--", "\r\n\r\n", "Content-Disposition: form-data; name=\"file\"", '"', ";")
        .map((t) => new Uint8Array(Buffer.from(t)))
    )), { maxLength: 4 }),
    contentType: fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom("multipart/form-data; boundary=fosTestBoundary0", 'multipart/form-data; boundary="fosTestBoundary0"') },
      { weight: 1, arbitrary: fc.constantFrom("multipart/form-data; boundary=fosTestBoundary", "multipart/form-data; boundary=", "multipart/form-data;") }
    )
  })

  it("never a 5xx: a 201 with a well-formed document, or a 4xx problem with nothing kept", async () => {
    let kept = 0
    await fc.assert(
      fc.asyncProperty(damaged, async (d) => {
        await engine.clock.advance(2_000)
        let bytes = formBody(d.parts)
        for (const [at, chunk] of d.writes) {
          const i = at % bytes.length
          bytes = new Uint8Array(Buffer.concat([bytes.slice(0, i), chunk, bytes.slice(i)]))
        }
        if (d.cut !== undefined) bytes = bytes.slice(0, d.cut % (bytes.length + 1))
        const r = await send(bytes, d.contentType)
        if (r.status === 201) {
          kept++
          expect(r.json.id).toMatch(/^doc_/)
          expect((await get(r.json.id)).json).toEqual(r.json)
        } else {
          expect(r.status, r.text).toBeGreaterThanOrEqual(400)
          expect(r.status, r.text).toBeLessThan(500)
          expect(r.json.type).toBeTypeOf("string")
          expect(r.json.instance).toBe(path)
        }
        expect(await documentCount()).toBe(kept)
      }),
      // FOS_FC_SEED / FOS_FC_RUNS explore further by hand, as in properties.test.ts.
      { seed: Number(process.env.FOS_FC_SEED ?? 20260301), numRuns: Number(process.env.FOS_FC_RUNS ?? 300) }
    )
  })
})

describe("file names are metadata only", () => {
  it("a hostile file name keeps only its last segment, without control or bidi characters", async () => {
    // [as sent, percent-encoded as filename*, kept as]
    const cases: Array<[string, boolean, string]> = [
      ["../../etc/passwd", false, "passwd"],
      ["../../etc/passwd", true, "passwd"],
      ["..\\..\\Windows\\System32\\evil.pdf", false, "evil.pdf"],
      ["/absolute/path/scan.pdf", false, "scan.pdf"],
      ["invoice\u202Efdp.exe", false, "invoicefdp.exe"],
      ["a\u0000b\u0001c\u007fd\r\n.pdf", true, "abcd.pdf"],
      ["..", false, "document"],
      ["../", false, "document"],
      [".hidden.pdf", false, "hidden.pdf"],
      ["résumé.pdf", true, "résumé.pdf"],
      ["x".repeat(300) + ".pdf", false, "x".repeat(255)]
    ]
    for (const [i, [raw, encodedName, expected]] of cases.entries()) {
      // Ten per second on this bucket: step the virtual clock so every upload gets a token.
      if (i > 0 && i % 9 === 0) await engine.clock.advance(2000)
      const r = await upload([{ name: "type", value: "other" }, { ...filePart(pdf(), "application/pdf", raw), encodedName }])
      expect(r.status, `${JSON.stringify(raw)}: ${r.text}`).toBe(201)
      expect(r.json.fileName, JSON.stringify(raw)).toBe(expected)
      // The bytes are kept under the document's id, whatever the name said.
      expect(await storedBytes(r.json.id)).toEqual(pdf())
    }
  })
})

// --- rate limit and idempotency --------------------------------------------------------------------------------

describe("the documents bucket", () => {
  it("uploads count against a dedicated bucket of 10: X-RateLimit-Limit 10, then 429 with Retry-After", async () => {
    for (let i = 0; i < 10; i++) {
      const r = await upload([{ name: "type", value: "other" }, filePart(pdf())])
      expect(r.status, r.text).toBe(201)
      expect(rateHeaders(r)).toMatchObject({ limit: 10, remaining: 9 - i })
    }
    const refused = await upload([{ name: "type", value: "other" }, filePart(pdf())])
    const p = expectProblem(refused, { type: "RATE_LIMITED", status: 429, instance: path, nowMs: START_MS })
    expect(p.retryAfterSeconds).toBeGreaterThanOrEqual(1)
    expect(rateHeaders(refused)).toMatchObject({ limit: 10, remaining: 0 })
    expect(await documentCount()).toBe(10)
    // Reads and other endpoints count against the general bucket, untouched; so does another organization.
    const list = await toReply(await engine.fetch(new Request("http://localhost/sandbox/v2/customers", { headers: { "x-api-key": A.sandbox } })))
    expect(rateHeaders(list).limit).toBe(400)
    expect((await upload([{ name: "type", value: "other" }, filePart(pdf())], { key: B.sandbox })).status).toBe(201)
    // The bucket refills at 5 per second.
    await engine.clock.advance(1000)
    expect((await upload([{ name: "type", value: "other" }, filePart(pdf())])).status).toBe(201)
  })
})

describe("Idempotency-Key on uploads", () => {
  it("the same form under the same key replays the first response, even with another boundary or part order", async () => {
    const bytes = pdf(2048)
    const parts = [{ name: "type", value: "passport" }, filePart(bytes)]
    const first = await upload(parts, { headers: { "idempotency-key": "upload-1" }, boundary: "boundaryOne" })
    expect(first.status, first.text).toBe(201)
    expect(first.headers.get("idempotency-replayed")).toBeNull()
    const again = await upload([...parts].reverse(), { headers: { "idempotency-key": "upload-1" }, boundary: "anotherBoundary-2" })
    expect(again.status).toBe(201)
    expect(again.headers.get("idempotency-replayed")).toBe("true")
    expect(again.text).toBe(first.text)
    expect(await documentCount()).toBe(1)
  })

  it("the same key with another file, type or file name: 409 IDEMPOTENCY_KEY_CONFLICT", async () => {
    const key = { "idempotency-key": "upload-2" }
    expect((await upload([{ name: "type", value: "passport" }, filePart(pdf(2048))], { headers: key })).status).toBe(201)
    const otherBytes = pdf(2048)
    otherBytes[2000] = otherBytes[2000]! ^ 1
    for (
      const parts of [
        [{ name: "type", value: "passport" }, filePart(otherBytes)],
        [{ name: "type", value: "national_id" }, filePart(pdf(2048))],
        [{ name: "type", value: "passport" }, filePart(pdf(2048), "application/pdf", "renamed.pdf")]
      ]
    ) {
      expectProblem(await upload(parts, { headers: key }), { type: "IDEMPOTENCY_KEY_CONFLICT", status: 409, instance: path })
    }
    expect(await documentCount()).toBe(1)
  })

  it("a refused upload frees its key: the corrected form then succeeds under it", async () => {
    const key = { "idempotency-key": "upload-3" }
    expectFormError(await upload([filePart(pdf())], { headers: key }), "type")
    const r = await upload([{ name: "type", value: "passport" }, filePart(pdf())], { headers: key })
    expect(r.status, r.text).toBe(201)
    expect(r.headers.get("idempotency-replayed")).toBeNull()
  })
})

// --- requireDocuments ------------------------------------------------------------------------------------------

describe("requireDocuments", () => {
  const callerOf = (org: string, apiKey: string): Promise<Auth.Caller> =>
    engine.run(Effect.gen(function*() {
      const store = yield* Store.Store
      const organization = (yield* store.get(Tenancy.Organizations, org))!
      const key = (yield* store.get(Tenancy.ApiKeys, Auth.sha256Hex(apiKey)))!
      return { organization, key, environment: key.environment }
    }))

  const uploadFor = async (customerId?: string, key = A.sandbox) => {
    const parts: Array<Part> = [{ name: "type", value: "passport" }, filePart(pdf())]
    if (customerId !== undefined) parts.push({ name: "customerId", value: customerId })
    const r = await upload(parts, { key })
    expect(r.status, r.text).toBe(201)
    return r.json.id as string
  }

  const check = async (caller: Auth.Caller, ids: ReadonlyArray<string>, customerId?: string) => {
    const exit = await engine.run(Effect.exit(Documents.require(caller, ids, {
      pointer: "/documentIds",
      ...(customerId === undefined ? {} : { customerId: customerId as CustomerId })
    })))
    if (Exit.isSuccess(exit)) return { documents: exit.value.map((d) => d.id as string), error: undefined }
    const error = Exit.findErrorOption(exit)
    if (error._tag === "None") throw new Error("requireDocuments died")
    return { documents: undefined, error: error.value as Problem.ApiError }
  }

  it("organization-level documents are usable for a new onboarding and for any customer; attached ones only for their customer", async () => {
    const caller = await callerOf("org_docs", A.sandbox)
    const orgDoc = await uploadFor()
    const forOne = await uploadFor("cus_docs1")
    const forTwo = await uploadFor("cus_docs2")

    expect((await check(caller, [orgDoc])).documents).toEqual([orgDoc])
    expect((await check(caller, [orgDoc, forOne], "cus_docs1")).documents).toEqual([orgDoc, forOne])
    expect((await check(caller, [forTwo, orgDoc], "cus_docs2")).documents).toEqual([forTwo, orgDoc])

    // A customer's document is not usable for a new onboarding (no customer yet), nor for another customer.
    const onboarding = await check(caller, [orgDoc, forOne], undefined)
    expect(onboarding.error?.code).toBe("DOCUMENT_IDS_NOT_FOUND")
    expect(onboarding.error?.status).toBe(400)
    expect(onboarding.error?.errors?.map((e) => e.pointer)).toEqual(["/documentIds/1"])
    const other = await check(caller, [forTwo, forOne, orgDoc], "cus_docs1")
    expect(other.error?.errors?.map((e) => e.pointer)).toEqual(["/documentIds/0"])
  })

  it("one errors[] entry per missing id, of another organization or environment, or malformed; details never echo ids", async () => {
    const caller = await callerOf("org_docs", A.sandbox)
    const mine = await uploadFor()
    const rivals = await uploadFor(undefined, B.sandbox)
    const liveForm = formBody([{ name: "type", value: "passport" }, filePart(pdf())])
    const live = await toReply(await engine.fetch(new Request("http://localhost/live/v2/documents", {
      method: "POST",
      headers: { "x-api-key": A.live, "content-type": "multipart/form-data; boundary=fosTestBoundary0" },
      body: liveForm
    })))
    expect(live.status, live.text).toBe(201)

    const ids = [mine, rivals, "doc_doesnotexist1", live.json.id as string, "not-an-id", mine]
    const { error } = await check(caller, ids)
    expect(error?.code).toBe("DOCUMENT_IDS_NOT_FOUND")
    expect(error?.errors?.map((e) => e.pointer)).toEqual(["/documentIds/1", "/documentIds/2", "/documentIds/3", "/documentIds/4"])
    const rendered = JSON.stringify({ detail: error?.detail, errors: error?.errors })
    for (const id of ids) expect(rendered).not.toContain(id)
    // Thousands of unusable ids: the first hundred are listed, and the detail says there were more.
    const many = (await check(caller, Array.from({ length: 3000 }, (_, i) => `doc_missing${i}`))).error
    expect(many?.errors).toHaveLength(100)
    expect(many?.errors?.[99]?.pointer).toBe("/documentIds/99")
    expect(many?.detail).toContain("More than 100")
    // No ids at all is no problem; the same id twice is returned twice, in order.
    expect((await check(caller, [])).documents).toEqual([])
    expect((await check(caller, [mine, mine])).documents).toEqual([mine, mine])
  })
})

// --- the real server -------------------------------------------------------------------------------------------

describe("fos serve on PGlite", () => {
  const dir = mkdtempSync(join(tmpdir(), "fos-documents-"))
  afterAll(() => {
    killAllFos()
    rmSync(dir, { recursive: true, force: true })
  })

  it("takes a file at the size limit over real HTTP, refuses a larger one by its Content-Length, and keeps the bytes", async () => {
    const seedFile = join(dir, "seed.json")
    writeFileSync(seedFile, JSON.stringify(seedOf(orgSeed("docs"))))
    const store = join(dir, "store")
    const server = await startFos(["--store", await pgliteDirectoryAt(store), "--port", "0", "--seed", seedFile])
    const bytes = pdf(maxDocumentBytes)
    let id: string
    try {
      const form = new FormData()
      form.set("type", "articles_of_association")
      form.set("file", new File([bytes as Uint8Array<ArrayBuffer>], "../articles.pdf", { type: "application/pdf" }))
      const created = await toReply(await fetch(`${server.origin}${path}`, { method: "POST", headers: { "x-api-key": A.sandbox }, body: form }))
      expect(created.status, created.text).toBe(201)
      expect(created.json).toMatchObject({ fileName: "articles.pdf", size: maxDocumentBytes, sha256: sha256(bytes) })
      expect(rateHeaders(created).limit).toBe(10)
      id = created.json.id
      const read = await httpCall(server.origin, `${path}/${id}`, { key: A.sandbox })
      expect(read.json).toEqual(created.json)

      const big = formBody([{ name: "type", value: "passport" }, filePart(pdf(maxDocumentBytes + 100 * 1024))])
      const refused = await toReply(await fetch(`${server.origin}${path}`, {
        method: "POST",
        headers: { "x-api-key": A.sandbox, "content-type": "multipart/form-data; boundary=fosTestBoundary0" },
        body: big
      }))
      expect(expectProblem(refused, { type: "FILE_TOO_LARGE", status: 413, instance: path }).field).toBe("file")
      const json = await httpCall(server.origin, path, { key: A.sandbox, body: { type: "passport" } })
      expectProblem(json, { type: "UNSUPPORTED_MEDIA_TYPE", status: 415, instance: path })
    } finally {
      await server.stop()
    }

    // The bytes were committed to the database, whole.
    const reopened = await createEngine({ store: layerPgliteStore(store) })
    try {
      const row = await reopened.run(Effect.flatMap(Store.Store, (s) => s.get(Documents.DocumentContents, id)))
      expect(row).toBeDefined()
      expect(sha256(new Uint8Array(Buffer.from(row!.base64, "base64")))).toBe(sha256(bytes))
      expect(await reopened.run(Effect.flatMap(Store.Store, (s) => s.count(Documents.Documents, "byScope", "org_docs/sandbox")))).toBe(1)
    } finally {
      await reopened.close()
    }
  }, 120_000)
})
