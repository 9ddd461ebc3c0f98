/**
 * Readiness (`GET /readyz`, `engine.ready()`) against liveness (`GET /healthz`): ready only while the store answers a
 * trivial query within 2 seconds and the engine is not closing; 503 with the reason as a problem otherwise. The
 * liveness check answers as it always has. PostgreSQL is taken away and made silent by a relay (test/pgRelay.ts),
 * since the server itself is shared by the test files running in parallel.
 */
import { Lifecycle } from "@fos/core"
import { createEngine, type Engine } from "@fos/http"
import { Effect } from "effect"
import { layerPostgresStore } from "@fos/sql"
import { afterEach, describe, expect, it } from "vitest"
import { adminUrl, freshDatabase } from "../adapters/sql/test/databases.ts"
import { type Relay, relayTo, throughRelay } from "./pgRelay.ts"

const get = (engine: Engine, path: string) => engine.fetch(`http://fos.test${engine.basePath}${path}`)

const expectReady = async (engine: Engine) => {
  const ready = await get(engine, "/readyz")
  expect(ready.status, await ready.clone().text()).toBe(200)
  expect(await ready.json()).toEqual({ status: "ready" })
  expect(await engine.ready()).toEqual({ ready: true })
}

const expectNotReady = async (engine: Engine, reason: RegExp) => {
  const answer = await get(engine, "/readyz")
  const text = await answer.text()
  expect(answer.status, text).toBe(503)
  expect(answer.headers.get("content-type")).toMatch(/json/)
  const problem = JSON.parse(text)
  expect(problem).toMatchObject({ type: "SERVICE_UNAVAILABLE", status: 503 })
  expect(problem.detail).toMatch(reason)
  expect(answer.headers.get("retry-after")).toMatch(/^\d+$/)
  expect(text).not.toMatch(/stack|postgres:\/\/|127\.0\.0\.1:\d/i)
  const readiness = await engine.ready()
  expect(readiness.ready).toBe(false)
  if (!readiness.ready) expect(readiness.reason).toMatch(reason)
}

const expectLive = async (engine: Engine) => {
  const live = await get(engine, "/healthz")
  expect(live.status).toBe(200)
  expect(await live.text()).toBe('{"status":"ok"}')
}

describe("readiness on the memory store", () => {
  it("is ready at once, under a base path too, and not once closing", async () => {
    for (const basePath of [undefined, "/fos"]) {
      const engine = await createEngine(basePath === undefined ? {} : { basePath })
      await expectReady(engine)
      await expectLive(engine)
      // Outside the base path there is no probe.
      if (basePath !== undefined) expect((await engine.fetch("http://fos.test/readyz")).status).toBe(404)
      await engine.close()
      await expectNotReady(engine, /shutting down/)
    }
  })

  it("is not ready while a close drains the requests in flight", async () => {
    const engine = await createEngine({ clock: "virtual" })
    // A request in flight holds the drain open: the close has begun, and the engine is not ready meanwhile.
    let release!: () => void
    const held = new Promise<void>((done) => (release = done))
    const inFlight = engine.run(Effect.gen(function*() {
      const lifecycle = yield* Lifecycle.Lifecycle
      return yield* lifecycle.admit(Effect.promise(() => held), Effect.void)
    }))
    const closing = engine.close()
    await expectNotReady(engine, /shutting down/)
    release()
    await inFlight
    await closing
  })
})

describe.skipIf(adminUrl === undefined || adminUrl === "")("readiness on PostgreSQL", () => {
  let opened: Array<{ engine?: Engine; relay: Relay; drop: () => Promise<void> }> = []
  afterEach(async () => {
    for (const { engine, relay, drop } of opened) {
      relay.speak()
      await relay.up().catch(() => undefined)
      await engine?.close({ deadlineMs: 1_000 }).catch(() => undefined)
      await relay.down().catch(() => undefined)
      await drop()
    }
    opened = []
  })

  const open = async () => {
    const database = await freshDatabase("readyz")
    const relay = await relayTo(new URL(database.url))
    const entry: (typeof opened)[number] = { relay, drop: database.drop }
    opened.push(entry)
    const engine = entry.engine = await createEngine({ store: layerPostgresStore(throughRelay(database.url, relay), { timeout: "1 second" }) })
    return { engine, relay }
  }

  const eventually = async (engine: Engine) => {
    for (let i = 0; i < 50; i++) {
      if ((await engine.ready()).ready) return
      await new Promise((done) => setTimeout(done, 200))
    }
    throw new Error("never ready again")
  }

  it("is not ready while the database refuses connections, and ready again once it takes them", async () => {
    const { engine, relay } = await open()
    await expectReady(engine)
    await relay.down()
    await expectNotReady(engine, /cannot reach its database|did not answer/)
    // The process is up all along: liveness answers as it always has.
    await expectLive(engine)
    await relay.up()
    await eventually(engine)
    await expectReady(engine)
  }, 30_000)

  it("is not ready within its bound while the database is silent, and ready again once it answers", async () => {
    const { engine, relay } = await open()
    await expectReady(engine)
    relay.silence()
    await expectNotReady(engine, /cannot reach its database|did not answer within 2 seconds/)
    await expectLive(engine)
    relay.speak()
    await eventually(engine)
    await expectReady(engine)
  }, 30_000)
})
