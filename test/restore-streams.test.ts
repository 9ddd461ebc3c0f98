/**
 * A restore puts the sandbox's seeded stream back where its snapshot found it (RandomStreams.ts, Snapshots.ts): after
 * a restore, the same requests mint the same ids and secrets as the first time, however many times it is restored and
 * whatever ran in between; snapshots taken after a restore never take an id a snapshot holds (their ids come from a
 * stream a restore does not move); a fork neither moves its parent's stream nor depends on it. A fork given a stream
 * name (`?stream=`, `engine.fork(id, { stream })`) is the same organization with the same ids whatever was forked
 * before it, on any engine of the same seed; one of a name at a time (409), the same again once deleted; a stream
 * name of the wrong shape is 400 and makes nothing. On the memory store and PGlite.
 */
import { createEngine } from "@fos/http"
import { Timers } from "@fos/core"
import { describe, expect, it } from "vitest"
import { type Client, clientOf } from "./onboardingFixtures.ts"
import { expectProblem, keysOf, ok, orgSeed, seedOf, START_MS } from "./support.ts"
import { closedAfterEach, storeMakers } from "./stores.ts"

const after = closedAfterEach()

/** An engine with acme, seeded with `randomSeed` (none for null). */
const start = async (storeName = "memory", randomSeed: string | null = "streams") => {
  const engine = after.engine(await createEngine({
    store: await after.store(storeName, "restore-streams"),
    ...(randomSeed === null ? {} : { randomSeed }),
    clock: { mode: "virtual", start: START_MS },
    realClock: Timers.makeVirtualClock(START_MS),
    webhookTransport: "memory",
    seed: seedOf(orgSeed("acme")) as never
  }))
  return { engine, acme: clientOf(engine.fetch, "http://fos", keysOf("acme").sandbox) }
}

/** Requests that mint ids and a secret: two webhook endpoints and a third's secret rotated away, read back. */
const mint = async (client: Client, tag: string) => {
  const made: Array<string> = []
  for (const n of [1, 2]) {
    const endpoint = await ok(client.call("POST", "/v2/webhooks/endpoints", { url: `https://hooks.acme.test/${tag}/${n}` }), 201)
    made.push(endpoint.id, endpoint.secret)
  }
  const list = await ok(client.call("GET", "/v2/webhooks/endpoints"))
  return { made, listed: (list.data as Array<{ id: string }>).map((e) => e.id) }
}

describe.each(Object.keys(storeMakers("restore-streams")).filter((s) => s !== "PostgreSQL"))("a restore on %s", (storeName) => {
  it("puts the sandbox's stream back: the same requests mint the same ids and secrets as the first time", async () => {
    const { acme } = await start(storeName)
    await ok(acme.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.acme.test/fixture" }), 201)
    const snapshot = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    const first = await mint(acme, "a")
    await ok(acme.call("POST", `/v2/simulate/snapshots/${snapshot.id}/restore`))
    expect(await mint(acme, "a")).toEqual(first)
    // Whatever ran between: other requests, another restore, a snapshot taken and deleted.
    await mint(acme, "other")
    const between = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    await ok(acme.call("DELETE", `/v2/simulate/snapshots/${between.id}`), 204)
    await ok(acme.call("POST", `/v2/simulate/snapshots/${snapshot.id}/restore`))
    expect(await mint(acme, "a")).toEqual(first)
  })

  it("gives snapshots taken after a restore ids of their own", async () => {
    const { acme } = await start(storeName)
    const snapshot = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    const taken = [snapshot.id]
    for (let n = 0; n < 3; n++) {
      await ok(acme.call("POST", `/v2/simulate/snapshots/${snapshot.id}/restore`))
      taken.push((await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)).id)
    }
    expect(new Set(taken).size).toBe(4)
    const listed = await ok(acme.call("GET", "/v2/simulate/snapshots"))
    expect((listed.data as Array<{ id: string }>).map((s) => s.id).sort()).toEqual([...taken].sort())
  })
})

describe("a seeded stream and forks", () => {
  it("is not moved by a fork, nor by a snapshot: the parent mints what it would have minted without them", async () => {
    const plain = await start()
    const without = await mint(plain.acme, "p")
    const forked = await start()
    const snapshot = await ok(forked.acme.call("POST", "/v2/simulate/snapshots"), 201)
    await ok(forked.acme.call("POST", `/v2/simulate/snapshots/${snapshot.id}/fork`), 201)
    await ok(forked.acme.call("POST", `/v2/simulate/snapshots/${snapshot.id}/fork`), 201)
    expect(await mint(forked.acme, "p")).toEqual(without)
  })

  it("forks a stream's world the same, whatever was forked before it, on the wire and through engine.fork", async () => {
    const build = async (client: Client) => {
      await mint(client, "fixture")
      return (await ok(client.call("POST", "/v2/simulate/snapshots"), 201)).id as string
    }
    const alone = await start()
    const aloneSnapshot = await build(alone.acme)
    const aloneFork = await ok(alone.acme.call("POST", `/v2/simulate/snapshots/${aloneSnapshot}/fork?stream=test%2Fa.test.ts`), 201)

    const busy = await start()
    const busySnapshot = await build(busy.acme)
    expect(busySnapshot).toBe(aloneSnapshot)
    await ok(busy.acme.call("POST", `/v2/simulate/snapshots/${busySnapshot}/fork`), 201)
    await busy.engine.fork(busySnapshot, { stream: "test/b.test.ts" })
    const busyFork = await busy.engine.fork(busySnapshot, { stream: "test/a.test.ts" })

    expect(busyFork.organizationId).toBe(aloneFork.organizationId)
    expect(busyFork.ids).toEqual(aloneFork.ids)
    expect(busyFork.apiKey).toBe(aloneFork.apiKey)
    // What the fork mints next is the same too.
    const inAlone = await mint(clientOf(alone.engine.fetch, "http://fos", aloneFork.apiKey), "fork")
    const inBusy = await mint(clientOf(busy.engine.fetch, "http://fos", busyFork.apiKey), "fork")
    expect(inBusy).toEqual(inAlone)

    // One fork of a stream at a time; deleted, the same fork again, minting the same ids.
    const path = `/v2/simulate/snapshots/${busySnapshot}/fork`
    expectProblem(await busy.acme.call("POST", `${path}?stream=test%2Fa.test.ts`), { status: 409, type: "CONFLICT", instance: `/sandbox${path}` })
    await busy.engine.deleteFork(busyFork.organizationId)
    const again = await busy.engine.fork(busySnapshot, { stream: "test/a.test.ts" })
    expect(again.organizationId).toBe(aloneFork.organizationId)
    expect(again.ids).toEqual(aloneFork.ids)
    expect(await mint(clientOf(busy.engine.fetch, "http://fos", again.apiKey), "fork")).toEqual(inAlone)
  })

  it("refuses a stream name of the wrong shape with 400, making nothing", async () => {
    const { acme } = await start()
    const snapshot = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    for (const stream of ["", "x".repeat(501)]) {
      const path = `/v2/simulate/snapshots/${snapshot.id}/fork`
      expectProblem(await acme.call("POST", `${path}?stream=${stream}`), { status: 400, type: "VALIDATION_ERROR", instance: `/sandbox${path}` })
    }
    expect((await ok(acme.call("GET", "/v2/simulate/forks"))).data).toEqual([])
  })

  it("leaves an engine without a seed drawing at random: a restore and a named fork rewind nothing", async () => {
    const { acme } = await start("memory", null)
    const snapshot = await ok(acme.call("POST", "/v2/simulate/snapshots"), 201)
    const first = await mint(acme, "u")
    await ok(acme.call("POST", `/v2/simulate/snapshots/${snapshot.id}/restore`))
    const again = await mint(acme, "u")
    expect(again.listed).toHaveLength(2)
    expect(again.made.filter((value) => first.made.includes(value))).toEqual([])
    const a = await ok(acme.call("POST", `/v2/simulate/snapshots/${snapshot.id}/fork?stream=s`), 201)
    expect(a.organizationId).toMatch(/^org_/)
  })
})
