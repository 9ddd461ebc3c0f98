/**
 * The published store contract (@fos/core/store-contract) on its own: its assertions mean what Vitest's do, and
 * a store that acknowledges commits it does not keep fails its durability cases, after a close and after a kill,
 * while it passes every other case.
 */
import { storeContract, type StoreContractCase, type StoreUnderTest } from "@fos/core/store-contract"
import { expect as contractExpect } from "@fos/core/store-contract"
import { Effect, Layer } from "effect"
import * as Store from "../src/kernel/Store.ts"
import { describe, expect, it } from "vitest"
import { nodeProcesses } from "../runners/processes.ts"
import { open } from "./forgetfulStore.ts"

describe("the contract's assertions", () => {
  const fails = (assertion: () => void) => expect(assertion).toThrow(/expected/)

  it("equal as Vitest's toEqual does: undefined members absent, arrays by element, bigints and nested values", () => {
    contractExpect({ a: 1, b: undefined, c: [1, { d: 2n }] }).toEqual({ a: 1, c: [1, { d: 2n }] })
    contractExpect([undefined]).toEqual([undefined])
    fails(() => contractExpect({ a: 1 }).toEqual({ a: 1, b: 2 }))
    fails(() => contractExpect([1, 2]).toEqual([2, 1]))
    fails(() => contractExpect({ d: 1n }).toEqual({ d: 2n }))
    fails(() => contractExpect([]).toEqual({}))
  })

  it("match as toMatchObject does: the members named, recursively, inherited ones too", () => {
    class Violation {
      readonly _tag = "UniqueViolation"
      get table() {
        return "t"
      }
    }
    contractExpect(new Violation()).toMatchObject({ _tag: "UniqueViolation", table: "t" })
    contractExpect({ a: { b: 1, c: 2 }, d: 3 }).toMatchObject({ a: { b: 1 } })
    fails(() => contractExpect({ a: { b: 1 } }).toMatchObject({ a: { b: 2 } }))
    fails(() => contractExpect(undefined).toMatchObject({ a: 1 }))
  })

  it("compare, type and measure", () => {
    contractExpect(2).toBeGreaterThan(1)
    contractExpect(2).toBeGreaterThanOrEqual(2)
    contractExpect(1).toBeLessThan(2)
    contractExpect([1, 2]).toHaveLength(2)
    contractExpect(new RangeError("x")).toBeInstanceOf(Error)
    contractExpect(undefined).toBeUndefined()
    contractExpect(0).toBeDefined()
    fails(() => contractExpect(1).toBeGreaterThan(1))
    fails(() => contractExpect("2").toBeGreaterThan(1))
    fails(() => contractExpect([1]).toHaveLength(2))
    fails(() => contractExpect(null).toBeUndefined())
    fails(() => contractExpect(NaN).toBe(0))
    expect(() => contractExpect(1, "the count").toBe(2)).toThrow("the count: expected 1 to be 2")
  })
})

describe("a store that cannot be opened", () => {
  it("fails every case with an Error that says what the store failed with", async () => {
    const cases = storeContract({ name: "unopenable", fresh: () => Layer.effect(Store.Store, Effect.fail({ _tag: "NoDisk", path: "/nowhere" })) })
    expect(cases.length).toBeGreaterThan(60)
    const first = await cases[0]!.run().then(() => undefined, (e: unknown) => e)
    expect(first).toBeInstanceOf(Error)
    expect((first as Error).message).toBe(`the store failed with {"_tag":"NoDisk","path":"/nowhere"}`)
  })
})

describe("a store that keeps nothing it acknowledged", () => {
  let places = 0
  const forgetful: StoreUnderTest = {
    name: "forgetful",
    durable: {
      place: async () => `forgetful-${places++}`,
      open,
      module: { url: new URL("./forgetfulStore.ts", import.meta.url).href, export: "open" }
    }
  }
  const cases = storeContract(forgetful, { processes: nodeProcesses })
  const durability = cases.filter((c) => c.group[0] === "durability")
  const outcome = (c: StoreContractCase) => c.run().then(() => "passed", (e: unknown) => (e instanceof Error ? e.message : String(e)))

  it("is given the close-and-reopen case and the kill case", () => {
    expect(durability.map((c) => c.name)).toEqual([
      "keeps what it committed across a close and a reopen, and nothing a rollback took back",
      "loses no acknowledged commit when its process is killed (SIGKILL) in the middle of its commits"
    ])
  })

  it("fails the close-and-reopen case", async () => {
    expect(await outcome(durability[0]!)).toMatch(/^k1 after a reopen: expected undefined to equal/)
  })

  it("fails the kill case: the child acknowledged its commits, and the store opened again holds none", async () => {
    expect(await outcome(durability[1]!)).toMatch(/^the last commit the store holds: expected undefined to be at least \d+/)
  }, 60_000)

  it("passes every other case: it is the memory store, right in all but what it keeps", async () => {
    const others = cases.filter((c) => c.group[0] !== "durability")
    expect(others.length).toBeGreaterThan(60)
    const failed = []
    for (const c of others) {
      const result = await outcome(c)
      if (result !== "passed") failed.push(`${c.name}: ${result}`)
    }
    expect(failed).toEqual([])
  }, 60_000)
})
