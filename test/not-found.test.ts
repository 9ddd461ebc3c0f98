/**
 * A 404 says what was not found "with this id", and never repeats the id the request named (docs/decisions.md,
 * "Problems"): the client has it already, and a detail that echoes a path carries whatever a client put there into
 * logs and pages. Checked on the sandbox's inspection routes, which used to repeat it, and on routes of every kind
 * beside them.
 */
import type { Engine } from "@fos/http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, expectProblem, keysOf, makeEngine, orgSeed, seedOf } from "./support.ts"

const acme = keysOf("acme").sandbox
let engine: Engine
beforeAll(async () => {
  engine = await makeEngine(seedOf(orgSeed("acme")))
})
afterAll(() => engine.close())

/** Well-formed ids that name nothing. */
const unknown = {
  snapshot: "snp_0000000000000000000000000",
  wallet: "wlt_00000000000000000000000000",
  order: "ord_00000000000000000000000000",
  transaction: "txn_00000000000000000000000000"
}

const routes: ReadonlyArray<readonly [method: string, path: string, id: string, code: string]> = [
  ["GET", `/v2/simulate/snapshots/${unknown.snapshot}`, unknown.snapshot, "NOT_FOUND"],
  ["POST", `/v2/simulate/snapshots/${unknown.snapshot}/restore`, unknown.snapshot, "NOT_FOUND"],
  ["DELETE", `/v2/simulate/snapshots/${unknown.snapshot}`, unknown.snapshot, "NOT_FOUND"],
  ["GET", `/v2/simulate/snapshots/${unknown.snapshot}/export`, unknown.snapshot, "NOT_FOUND"],
  ["GET", `/v2/simulate/timeline/${unknown.order}`, unknown.order, "NOT_FOUND"],
  ["GET", `/v2/simulate/ledger/accounts/${unknown.wallet}/journal`, unknown.wallet, "NOT_FOUND"],
  ["GET", `/v2/wallets/${unknown.wallet}`, unknown.wallet, "WALLET_NOT_FOUND"],
  ["GET", `/v2/orders/${unknown.order}`, unknown.order, "ORDER_NOT_FOUND"],
  ["GET", `/v2/transactions/${unknown.transaction}`, unknown.transaction, "NOT_FOUND"]
]

describe("a 404", () => {
  it.each(routes)("%s %s says \"with this id\" and does not repeat it", async (method, path, id, code) => {
    const reply = await call(engine, `/sandbox${path}`, { method, key: acme })
    const problem = expectProblem(reply, { type: code, status: 404, instance: `/sandbox${path}` })
    expect(problem.detail).not.toContain(id)
    expect(problem.detail).toContain("with this id")
  })
})

/**
 * The spec has no 405: a path that exists under other methods is still 404 NOT_FOUND, and its detail names the
 * methods the path takes, so the client sees it sent the wrong method rather than the wrong path.
 */
describe("a 404 for a method the path does not take", () => {
  it("names the path's methods", async () => {
    const reply = await call(engine, "/sandbox/v2/customers", { method: "DELETE", key: acme })
    const problem = expectProblem(reply, { type: "NOT_FOUND", status: 404, instance: "/sandbox/v2/customers" })
    // The spec lists customers (GET) and creates them through onboarding: the path takes GET alone.
    expect(problem.detail).toBe("No such route: this path takes GET.")
    const endpoints = await call(engine, "/sandbox/v2/webhooks/endpoints", { method: "DELETE", key: acme })
    expect(expectProblem(endpoints, { type: "NOT_FOUND", status: 404, instance: "/sandbox/v2/webhooks/endpoints" }).detail)
      .toBe("No such route: this path takes GET and POST.")
  })

  it("names them for a path with an id, without repeating the id", async () => {
    const path = `/sandbox/v2/wallets/${unknown.wallet}`
    const reply = await call(engine, path, { method: "PUT", key: acme })
    const problem = expectProblem(reply, { type: "NOT_FOUND", status: 404, instance: path })
    expect(problem.detail).toMatch(/^No such route: this path takes (GET|[A-Z]+(, [A-Z]+)* and [A-Z]+)\.$/)
    expect(problem.detail).toContain("GET")
    expect(problem.detail).not.toContain(unknown.wallet)
  })

  it("a sandbox-only path under /live takes no method there: a plain 404", async () => {
    const reply = await call(engine, "/live/v2/simulate/clock", { method: "DELETE", key: keysOf("acme").live })
    expect(reply.status).toBe(404)
    expect(reply.json.detail).toBe("No such route.")
  })

  it("a path no route has is a plain 404", async () => {
    const reply = await call(engine, "/sandbox/v2/no-such-thing", { method: "GET", key: acme })
    expect(reply.json.detail).toBe("No such route.")
  })
})
