/**
 * An ApiError met outside a request (a rejection of `engine.run`, a log line) is an Error that says what it is:
 * its message carries the problem's code and detail, and the problem is on it.
 */
import { describe, expect, it } from "vitest"
import { Problem } from "../src/index.ts"

describe("ApiError as an Error", () => {
  it("has a message of its code and detail, and String() shows it", () => {
    const error = Problem.apiError("CUSTOMER_NOT_FOUND", "No customer with this id.")
    expect(error).toBeInstanceOf(Error)
    expect(error.message).toBe("CUSTOMER_NOT_FOUND: No customer with this id.")
    expect(String(error)).toBe("ApiError: CUSTOMER_NOT_FOUND: No customer with this id.")
    expect(error.stack).toContain("CUSTOMER_NOT_FOUND: No customer with this id.")
  })

  it("carries its problem, as the wire renders it but for what only a request knows", () => {
    const error = Problem.apiError("RATE_LIMITED", "Too many.", { retryAfterSeconds: 3 })
    expect(error.problem).toEqual({
      type: "RATE_LIMITED",
      title: "Rate limited",
      status: 429,
      detail: "Too many.",
      resolution: expect.any(String),
      retryAfterSeconds: 3
    })
    const invalid = Problem.invalidRequest([{ pointer: "/name", detail: "is missing" }])
    expect(invalid.problem.errors).toEqual([{ pointer: "/name", detail: "is missing" }])
  })

  it("renders for a request with the same members, in the wire's order", () => {
    const error = Problem.apiError("RATE_LIMITED", "Too many.", { retryAfterSeconds: 3 })
    const body = Problem.render(error, { instance: "/sandbox/v2/customers", correlationId: "c", timestamp: "2026-03-01T12:00:00.000Z", origin: "http://h" })
    expect(Object.keys(body)).toEqual(["type", "title", "status", "detail", "resolution", "docs", "instance", "correlationId", "timestamp", "retryAfterSeconds"])
  })
})
