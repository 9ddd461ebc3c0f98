/**
 * The seed file applied by every process of a deployment: applied once, skipped when already applied, refused
 * whole when only part of it exists, and never half-written.
 */
import { Operator, Seed } from "@fos/core"
import { createEngine } from "@fos/http"
import { layerPostgresStore } from "@fos/sql"
import { Effect } from "effect"
import { expect, it } from "vitest"
import { freshDatabase } from "../adapters/sql/test/databases.ts"

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

it("refuses a seed holding a NUL character or an unpaired surrogate, as text and as a value, on every store, naming each string", async () => {
  // As `fos serve --seed` reads it: the text's escapes.
  const text = JSON.stringify({ organizations: [{ id: "org_nul", name: "Nul\u0000Org", users: [{ id: "usr_nul", email: "n\ud800@nul.test", role: "admin" }] }] })
  const parsed = await Effect.runPromise(Effect.flip(Seed.parse(text)))
  expect(parsed.code).toBe("VALIDATION_ERROR")
  expect(parsed.detail).toBe("Seed file: /organizations/0/name holds a NUL character (U+0000), which the API does not accept.")
  expect(parsed.errors?.map((e) => e.pointer)).toEqual(["/organizations/0/name", "/organizations/0/users/0/email"])
  // The embedded engine's value, on the memory store and PostgreSQL alike (PostgreSQL failed at the commit with an
  // opaque SQL error, the memory store kept the name).
  const value = { organizations: [{ id: "org_nul", name: "Nul\u0000Org", users: [{ id: "usr_nul", email: "n\udc00@nul.test", role: "admin" as const }] }] }
  const database = process.env.DATABASE_URL === undefined ? undefined : await freshDatabase("seednul")
  try {
    for (const store of ["memory" as const, ...(database === undefined ? [] : [layerPostgresStore(database.url)])]) {
      const refused = await createEngine({ store, seed: value }).then(
        (engine) => engine.close().then(() => undefined),
        (e: unknown) => e as Error & { code?: string; errors?: ReadonlyArray<{ pointer: string }> }
      )
      expect(refused?.message).toContain("Seed file: /organizations/0/name holds a NUL character (U+0000)")
      expect(refused?.code).toBe("VALIDATION_ERROR")
      expect(refused?.errors?.map((e) => e.pointer)).toEqual(["/organizations/0/name", "/organizations/0/users/0/email"])
    }
  } finally {
    await database?.drop()
  }
})

it.skipIf(process.env.DATABASE_URL === undefined)("applies a seed once when processes start with it together on one PostgreSQL", { timeout: 120_000 }, async () => {
  // Each engine is a process of its own, as far as the database is concerned: its own pool and transactions.
  const database = await freshDatabase("seedrace")
  const engines = await Promise.all([0, 1, 2, 3].map(() => createEngine({ store: layerPostgresStore(database.url) })))
  try {
    const outcomes = await Promise.all(engines.map((engine) => engine.run(Seed.apply(seed("org_racea", "org_raceb")))))
    expect(outcomes.filter((o) => o === "applied")).toHaveLength(1)
    expect(outcomes.filter((o) => o === "already applied")).toHaveLength(3)
    expect((await engines[0]!.run(Operator.listOrganizations)).map((o) => o.id).sort()).toEqual(["org_racea", "org_raceb"])
  } finally {
    await Promise.all(engines.map((engine) => engine.close()))
    await database.drop()
  }
})
