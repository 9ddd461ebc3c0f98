import { describe, expect, it } from "@effect/vitest"
import { existsSync, readFileSync } from "node:fs"
import { anchorOf, errorsDocPath, renderErrorsDoc } from "../../../scripts/errors-doc.ts"
import { docsUrl, ErrorCatalog, type ErrorCode, inlineMarkdown, isErrorCode, renderErrorsHtml } from "@fos/contract"
import * as Problem from "../src/kernel/Problem.ts"
import { specFacts } from "./spec.ts"

/** The spec's Synchronous codes (spec-facts.json): its table, code -> status, and the codes its prose names without one. */
const spec = {
  table: new Map(Object.entries(specFacts().errorCodes)),
  prose: specFacts().errorCodesWithoutStatus
}
const codes = Object.keys(ErrorCatalog) as Array<ErrorCode>

describe("ErrorCatalog against the spec", () => {
  it("reads a plausible table", () => {
    expect(spec.table.size).toBeGreaterThan(90)
    expect(spec.prose).toEqual(["FILE_TOO_LARGE", "IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS"])
    for (const code of spec.prose) expect(spec.table.has(code)).toBe(false)
  })

  it("has exactly the codes of the spec's table and its prose", () => {
    const expected = [...spec.table.keys(), ...spec.prose].sort()
    expect([...codes].sort()).toEqual(expected)
  })

  it("gives every tabled code the table's HTTP status", () => {
    for (const [code, status] of spec.table) {
      expect(isErrorCode(code), code).toBe(true)
      expect(ErrorCatalog[code as ErrorCode].status, code).toBe(status)
    }
  })

  it("fixes the statuses the spec leaves open (docs/decisions.md)", () => {
    // FILE_TOO_LARGE replaces PAYLOAD_TOO_LARGE for uploads, so it keeps 413.
    expect(ErrorCatalog.FILE_TOO_LARGE.status).toBe(spec.table.get("PAYLOAD_TOO_LARGE"))
    expect(ErrorCatalog.FILE_TOO_LARGE.status).toBe(413)
    expect(ErrorCatalog.IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS.status).toBe(409)
  })

  it("has a title, a resolution and an error status for every entry", () => {
    for (const code of codes) {
      const entry = ErrorCatalog[code]
      expect(entry.title.trim(), code).not.toBe("")
      expect(entry.title, code).toBe(entry.title.trim())
      expect(entry.resolution.trim(), code).not.toBe("")
      expect(Number.isInteger(entry.status) && entry.status >= 400 && entry.status <= 599, code).toBe(true)
    }
  })
})

describe("docsUrl and isErrorCode", () => {
  it("gives the served reference's address, /docs/errors, with the lower-case code as its fragment", () => {
    for (const code of codes) {
      expect(docsUrl(code), code).toBe(`/docs/errors#${code.toLowerCase()}`)
      // A URI reference: it resolves against the request's URL, on whatever origin the client used.
      const url = new URL(docsUrl(code), "https://fos.example:8443/sandbox/v2/customers")
      expect(url.href, code).toBe(`https://fos.example:8443/docs/errors#${code.toLowerCase()}`)
      expect(anchorOf(code)).toBe(code.toLowerCase())
    }
  })

  it("gives every code its own URL", () => {
    expect(new Set(codes.map(docsUrl)).size).toBe(codes.length)
  })

  it("recognises catalog codes only", () => {
    for (const code of codes) expect(isErrorCode(code)).toBe(true)
    for (const s of ["", "validation_error", "toString", "__proto__", "constructor", "hasOwnProperty", "NOPE"]) {
      expect(isErrorCode(s), s).toBe(false)
    }
  })
})

describe("renderProblem", () => {
  const request = { instance: "/v2/customers/cus_1", correlationId: "corr-1", timestamp: "2026-11-21T10:00:00.000Z", origin: "https://fos.example:8443" }
  const baseOrder = ["type", "title", "status", "detail", "resolution", "docs", "instance", "correlationId", "timestamp"]

  it("renders the members in the spec's order", () => {
    const body = Problem.render(Problem.apiError("CUSTOMER_NOT_FOUND", "No customer with this id."), request)
    expect(Object.keys(body)).toEqual(baseOrder)
    expect(body).toEqual({
      type: "CUSTOMER_NOT_FOUND",
      title: ErrorCatalog.CUSTOMER_NOT_FOUND.title,
      status: 404,
      detail: "No customer with this id.",
      resolution: ErrorCatalog.CUSTOMER_NOT_FOUND.resolution,
      docs: "https://fos.example:8443" + docsUrl("CUSTOMER_NOT_FOUND"),
      instance: "/v2/customers/cus_1",
      correlationId: "corr-1",
      timestamp: "2026-11-21T10:00:00.000Z"
    })
    expect(JSON.stringify(body)).toBe(
      `{"type":"CUSTOMER_NOT_FOUND","title":${JSON.stringify(ErrorCatalog.CUSTOMER_NOT_FOUND.title)},"status":404,` +
        `"detail":"No customer with this id.","resolution":${JSON.stringify(ErrorCatalog.CUSTOMER_NOT_FOUND.resolution)},` +
        `"docs":"https://fos.example:8443/docs/errors#customer_not_found","instance":"/v2/customers/cus_1","correlationId":"corr-1",` +
        `"timestamp":"2026-11-21T10:00:00.000Z"}`
    )
  })

  it("omits errors, retryAfterSeconds and field when absent (never null)", () => {
    for (const code of codes) {
      const body = Problem.render(new Problem.ApiError({ code, detail: "d" }), request)
      expect(Object.keys(body), code).toEqual(baseOrder)
      expect("errors" in body).toBe(false)
      expect("retryAfterSeconds" in body).toBe(false)
      expect("field" in body).toBe(false)
      expect(body.status).toBe(ErrorCatalog[code].status)
      expect(body.title).toBe(ErrorCatalog[code].title)
      expect(body.resolution).toBe(ErrorCatalog[code].resolution)
      expect(body.docs).toBe(request.origin + docsUrl(code))
      expect(new URL(body.docs).hash).toBe(`#${code.toLowerCase()}`)
    }
    const json = JSON.stringify(Problem.render(Problem.apiError("RATE_LIMITED", "slow down"), request))
    expect(json).not.toContain("null")
    expect(Object.keys(JSON.parse(json))).toEqual(baseOrder)
  })

  it("adds errors, retryAfterSeconds and field after the base members when given", () => {
    const errors = [{ pointer: "/name", detail: "is required" }, { pointer: "/docs/0", detail: "is missing", category: "document" as const }]
    const validation = Problem.render(Problem.apiError("VALIDATION_ERROR", "Invalid body.", { errors, field: "file" }), request)
    expect(Object.keys(validation)).toEqual([...baseOrder, "errors", "field"])
    expect(validation.errors).toEqual(errors)
    expect(validation.field).toBe("file")

    const limited = Problem.render(Problem.apiError("RATE_LIMITED", "Too many requests.", { retryAfterSeconds: 30 }), request)
    expect(Object.keys(limited)).toEqual([...baseOrder, "retryAfterSeconds"])
    expect(limited.retryAfterSeconds).toBe(30)

    const all = Problem.render(Problem.apiError("VALIDATION_ERROR", "x", { errors: [], retryAfterSeconds: 0, field: "" }), request)
    expect(Object.keys(all)).toEqual([...baseOrder, "errors", "retryAfterSeconds", "field"])
    // Falsy values are still values: an empty errors[] stays [], 0 stays 0.
    expect(all.errors).toEqual([])
    expect(all.retryAfterSeconds).toBe(0)
    expect(all.field).toBe("")
  })

  it("takes the status from the catalog", () => {
    expect(Problem.apiError("INSUFFICIENT_FUNDS", "x").status).toBe(422)
    expect(new Problem.ApiError({ code: "PAYLOAD_TOO_LARGE", detail: "x" }).status).toBe(413)
    expect(Problem.apiError("NOT_FOUND", "x")._tag).toBe("ApiError")
  })
})

describe("JSON pointers", () => {
  it("escapes ~ and / per RFC 6901", () => {
    expect(Problem.pointerToken("a/b")).toBe("a~1b")
    expect(Problem.pointerToken("m~n")).toBe("m~0n")
    expect(Problem.pointerToken("~1")).toBe("~01")
    expect(Problem.pointerToken(3)).toBe("3")
    expect(Problem.toPointer([])).toBe("")
    expect(Problem.toPointer(["a", "b", 0])).toBe("/a/b/0")
    expect(Problem.toPointer(["a/b", "m~n", ""])).toBe("/a~1b/m~0n/")
  })
})

describe("the served error reference", () => {
  it("has one element per code whose id is the code's anchor, with its status, title and resolution", () => {
    const html = renderErrorsHtml()
    const ids = [...html.matchAll(/ id="([^"]+)"/g)].map((m) => m[1])
    expect(ids).toEqual(codes.map(anchorOf))
    for (const code of codes) {
      const start = html.indexOf(`<section id="${anchorOf(code)}">`)
      const entry = html.slice(start, html.indexOf("</section>", start))
      expect(entry, code).toContain(`<code>${code}</code>`)
      expect(entry, code).toContain(`<dd>${ErrorCatalog[code].status}</dd>`)
    }
    // The catalog's text is escaped: INVALID_OID_FORMAT's resolution names <prefix>_<opaque>.
    expect(html).toContain("&lt;prefix&gt;_&lt;opaque&gt;")
    expect(html).not.toContain("<prefix>")
    expect(html).not.toMatch(/<script|https?:\/\//)
  })
})

describe("docs/errors.md", () => {
  it("is up to date with scripts/errors-doc.ts (run `node scripts/errors-doc.ts`)", () => {
    expect(existsSync(errorsDocPath)).toBe(true)
    expect(readFileSync(errorsDocPath, "utf8")).toBe(renderErrorsDoc())
  })

  it("has an entry per code under the docs URL's anchor, with status, title and resolution", () => {
    const doc = renderErrorsDoc()
    for (const code of codes) {
      const anchor = `<a id="${new URL(docsUrl(code), "http://fos").hash.slice(1)}"></a>`
      const start = doc.indexOf(anchor)
      expect(start, code).toBeGreaterThanOrEqual(0)
      expect(doc.indexOf(anchor, start + 1), `${code} anchor repeated`).toBe(-1)
      const next = doc.indexOf("<a id=", start + anchor.length)
      const entry = doc.slice(start, next < 0 ? undefined : next)
      const { resolution, status, title } = ErrorCatalog[code]
      expect(entry).toContain(`## ${code}\n`)
      expect(entry).toContain(`**HTTP status:** ${status}`)
      expect(entry).toContain(`**Title:** ${inlineMarkdown(title)}`)
      expect(entry).toContain(`**Resolution:** ${inlineMarkdown(resolution)}`)
    }
    // Markdown takes <prefix> for an HTML tag: INVALID_OID_FORMAT's resolution is written with entities.
    expect(doc).toContain("of the form &lt;prefix&gt;_&lt;opaque&gt;")
    expect(doc).not.toContain("<prefix>")
  })
})
