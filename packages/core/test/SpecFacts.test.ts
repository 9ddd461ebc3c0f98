/**
 * spec-facts.json, the facts of the spec the tests hold the code to (spec.ts), against the spec's text where it is
 * present; elsewhere (a fresh clone with nothing beside it) this comparison alone is skipped, with one line saying so.
 * It also holds the engine's limits to the spec's Limits table.
 */
import { describe, expect, it } from "@effect/vitest"
import { DeliveryMachine, Idempotency, RateLimit } from "@fos/core"
import { defaultPageSize, maxPageSize, signatureScheme } from "@fos/contract"
import { Effect } from "effect"
import { readSpecFacts, specAbsent, specFacts, specPath, specText } from "./spec.ts"

if (specText === undefined) console.log(`SpecFacts: ${specAbsent}`)

describe("spec-facts.json", () => {
  it.skipIf(specText === undefined)(`is what the spec's text says (${specPath ?? "absent"}; \`node packages/core/test/spec.ts\` rewrites it)`, () => {
    expect(readSpecFacts(specText!)).toEqual(specFacts())
  })

  it("holds plausible facts", () => {
    const facts = specFacts()
    expect(facts.events).toHaveLength(48)
    expect(Object.keys(facts.errorCodes).length).toBeGreaterThan(90)
    expect(facts.errorCodesWithoutStatus).toEqual(["FILE_TOO_LARGE", "IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS"])
    expect(facts.endpoints.filter((e) => e.table === "Webhook management")).toHaveLength(10)
    expect(facts.endpoints.length).toBeGreaterThan(30)
    for (const e of facts.endpoints) {
      expect(["GET", "POST", "PATCH", "DELETE", "PUT"], `${e.method} ${e.path}`).toContain(e.method)
      expect(e.path).toMatch(/^\/v2\/[a-z]/)
    }
  })
})

describe("the engine's limits", () => {
  const { limits } = specFacts()

  it("are the Limits table's rate buckets", () => {
    expect(RateLimit.Buckets.generalLive).toEqual(limits.rate.live)
    expect(RateLimit.Buckets.generalSandbox).toEqual(limits.rate.sandbox)
    expect(RateLimit.Buckets.dedicated).toEqual(limits.rate.dedicated)
  })

  it("are its page sizes, idempotency retention, webhook attempts and signature windows", () =>
    Effect.gen(function*() {
      expect([1, maxPageSize, defaultPageSize]).toEqual([limits.pageSize.min, limits.pageSize.max, limits.pageSize.default])
      expect(yield* Idempotency.IdempotencyRetention).toBe(limits.idempotencyRetentionDays * 24 * 3600 * 1000)
      expect(DeliveryMachine.attemptsPerRun).toBe(limits.webhookAttemptsPerRun)
      expect([...DeliveryMachine.retryDelaysSeconds]).toEqual(limits.webhookRetryWaitsSeconds)
      expect(signatureScheme.toleranceSeconds).toBe(limits.signatureAgeSeconds)
      expect(signatureScheme.rotationGraceHours).toBe(limits.rotationGraceHours)
    }).pipe(Effect.runSync))
})
