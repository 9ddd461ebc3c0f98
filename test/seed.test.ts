/**
 * The seed file applied by every process of a deployment: applied once, skipped when already applied, refused
 * whole when only part of it exists, and never half-written.
 */
import { Operator, Seed } from "@fos/core"
import { createEngine } from "@fos/http"
import { Effect } from "effect"
import { expect, it } from "vitest"

const seed = (...ids: Array<string>) => ({
  organizations: ids.map((id) => ({ id, name: id, users: [{ id: `usr_${id.slice(4)}`, email: `${id}@seed.test`, role: "admin" as const }] }))
})

it("applies a seed once, skips it when all of it exists, and refuses a partly applied one without writing", async () => {
  const engine = await createEngine({ seed: seed("org_one") })
  try {
    expect(await engine.run(Seed.apply(seed("org_one")))).toBe("already applied")
    const refused = await engine.run(Effect.flip(Seed.apply(seed("org_one", "org_two"))))
    expect(refused.code).toBe("CONFLICT")
    expect(refused.detail).toContain("org_one")
    expect((await engine.run(Operator.listOrganizations)).map((o) => o.id)).toEqual(["org_one"])
    expect(await engine.run(Seed.apply(seed("org_three")))).toBe("applied")
  } finally {
    await engine.close()
  }
})

it("names the first problem of a malformed seed with its pointer", async () => {
  const error = await Effect.runPromise(Effect.flip(Seed.parse(JSON.stringify({ organizations: [{ id: "org_x" }] }))))
  expect(error.code).toBe("VALIDATION_ERROR")
  expect(error.detail).toBe("Seed file: /organizations/0/name is required.")
})
