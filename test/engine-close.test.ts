/**
 * `engine.close()` drains: it stops taking requests at once (503 SERVICE_UNAVAILABLE with Retry-After), lets the
 * requests in flight finish up to its deadline, then closes the store; once it has resolved nothing answers a 2xx.
 * On every store, with 20 writes in flight when it is called; on a durable store, each write that was answered 201
 * is there when the store is opened again.
 */
import { rmSync } from "node:fs"
import { type Store, Timers } from "@fos/core"
import { createEngine, type Engine, layerEmbedded, layerRoutes } from "@fos/http"
import { layerPgliteStore, layerPostgresStore } from "@fos/sql"
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { describe, expect, it } from "vitest"
import { adminUrl, freshDatabase } from "../adapters/sql/test/databases.ts"
import { freshPgliteDirectory } from "../adapters/sql/test/pgliteDirectory.ts"
import { keysOf, orgSeed, seedOf } from "./support.ts"

const key = keysOf("close").sandbox
const seed = seedOf(orgSeed("close"))

/** A store to open twice: `layer()` is a new layer on the same data each time. */
interface Reopenable {
  readonly layer: () => "memory" | Layer.Layer<Store.Store, unknown>
  readonly durable: boolean
  readonly drop: () => Promise<void> | void
}

const stores: Record<string, () => Promise<Reopenable>> = {
  memory: async () => ({ layer: () => "memory", durable: false, drop: () => {} }),
  PGlite: async () => {
    const dir = await freshPgliteDirectory("close")
    return { layer: () => layerPgliteStore(dir), durable: true, drop: () => rmSync(dir, { recursive: true, force: true }) }
  },
  ...(adminUrl === undefined || adminUrl === ""
    ? {}
    : {
      PostgreSQL: async () => {
        const database = await freshDatabase("close")
        return { layer: () => layerPostgresStore(database.url), durable: true, drop: database.drop }
      }
    })
}

const post = (engine: Engine, n: number) =>
  engine.fetch("http://fos.test/sandbox/v2/webhooks/endpoints", {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json", "idempotency-key": `close-${n}` },
    body: JSON.stringify({ url: `https://hooks.close.test/${n}` })
  })

const expectUnavailable = async (response: Response, what: string) => {
  const text = await response.text()
  expect(response.status, `${what}: ${text}`).toBe(503)
  const problem = JSON.parse(text)
  expect(problem).toMatchObject({ type: "SERVICE_UNAVAILABLE", status: 503, title: expect.any(String), detail: expect.any(String) })
  expect(problem.retryAfterSeconds).toBeGreaterThan(0)
  expect(response.headers.get("retry-after")).toBe(String(problem.retryAfterSeconds))
  expect(response.headers.get("content-type")).toMatch(/json/)
}

describe.each(Object.keys(stores))("engine.close() on the %s store", (name) => {
  it("answers or refuses each of 20 writes in flight, none with a 2xx once it has resolved, and every later request with 503", async () => {
    const store = await stores[name]!()
    try {
      const engine = await createEngine({ store: store.layer(), seed })
      // One write first: the store is warm and the key is known, so the 20 below are in flight, not queued at its start.
      expect((await post(engine, 0)).status).toBe(201)
      let closed = false
      const answers = Array.from({ length: 20 }, (_, i) =>
        post(engine, i + 1).then(async (response) => ({ status: response.status, afterClose: closed, response })))
      await engine.close({ deadlineMs: 5_000 })
      closed = true
      const settled = await Promise.all(answers)
      for (const { status, afterClose, response } of settled) {
        expect([201, 503], await response.clone().text()).toContain(status)
        expect(afterClose && status < 300, "a 2xx after close() resolved").toBe(false)
        if (status === 503) await expectUnavailable(response, "a write refused by the close")
      }
      await expectUnavailable(await post(engine, 99), "a write after close()")
      await expectUnavailable(await engine.fetch("http://fos.test/healthz"), "/healthz after close()")
      // close() twice is a close.
      await engine.close()

      if (store.durable) {
        // Every write answered 201 committed before its answer; none refused left anything.
        const reopened = await createEngine({ store: store.layer(), seed })
        try {
          const listed = await reopened.fetch("http://fos.test/sandbox/v2/webhooks/endpoints?limit=100", { headers: { "x-api-key": key } })
          expect(listed.status).toBe(200)
          const urls = ((await listed.json()) as { data: Array<{ url: string }> }).data.map((e) => e.url)
          const created = settled.flatMap((a, i) => (a.status === 201 ? [`https://hooks.close.test/${i + 1}`] : []))
          expect(urls.sort()).toEqual(["https://hooks.close.test/0", ...created].sort())
        } finally {
          await reopened.close()
        }
      }
    } finally {
      await store.drop()
    }
  }, 60_000)
})

describe("engine.close()", () => {
  it("waits for a request in flight up to its deadline, not past it, and answers it 503 when it ends", async () => {
    let release: () => void = () => {}
    const held = new Promise<void>((done) => (release = done))
    let started = false
    const engine = await createEngine({
      seed,
      clock: "virtual",
      // A timer whose work outlasts the close's deadline, fired by the request that advances the sandbox's clock.
      timerHandlers: { "test.held": () => Effect.promise(() => ((started = true), held)) }
    })
    const now = await engine.clock.now()
    await engine.run(Timers.schedule("test.held", now + 60_000, {}, "org_close/sandbox"))
    const advancing = engine.fetch("http://fos.test/sandbox/v2/simulate/clock/advance", {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json", "idempotency-key": "close-advance" },
      body: JSON.stringify({ seconds: 120 })
    })
    while (!started) await new Promise((done) => setTimeout(done, 5))
    let closed = false
    const answered = advancing.then((response) => ({ response, afterClose: closed }))
    // The request's timer holds on until released: the close ends at its deadline, without it.
    await engine.close({ deadlineMs: 200 })
    closed = true
    release()
    const { response, afterClose } = await answered
    expect(afterClose).toBe(true)
    const detail = ((await response.clone().json()) as { detail: string }).detail
    await expectUnavailable(response, "the advance in flight past the deadline")
    expect(detail).toMatch(/same Idempotency-Key/)
  }, 15_000)

  it("lets the timer being fired finish, and fires no other", async () => {
    let started = 0
    let finished = 0
    const engine = await createEngine({
      timerHandlers: {
        "test.slow": () =>
          Effect.andThen(
            Effect.promise(() => {
              started++
              return new Promise<void>((done) => setTimeout(done, 300))
            }),
            Effect.sync(() => void finished++)
          )
      }
    })
    const now = await engine.clock.now()
    await engine.run(Effect.andThen(Timers.schedule("test.slow", now, {}), Timers.schedule("test.slow", now, {})))
    while (started === 0) await new Promise((done) => setTimeout(done, 5))
    // A deadline past the test's timeout: the close must end when the timer's work does, not at its deadline.
    await engine.close({ deadlineMs: 120_000 })
    expect({ started, finished }).toEqual({ started: 1, finished: 1 })
  }, 15_000)

  it("closes an engine provided as a layer (layerEmbedded) the same way when its scope closes", async () => {
    const handler = HttpRouter.toWebHandler(
      layerRoutes(layerEmbedded({ seed })).pipe(Layer.provide(HttpServer.layerServices)) as unknown as Layer.Layer<never, never, never>,
      { disableLogger: true }
    )
    const call = (n: number) =>
      (handler.handler as (request: Request) => Promise<Response>)(
        new Request("http://fos.test/sandbox/v2/webhooks/endpoints", {
          method: "POST",
          headers: { "x-api-key": key, "content-type": "application/json", "idempotency-key": `layer-${n}` },
          body: JSON.stringify({ url: `https://hooks.close.test/${n}` })
        })
      )
    expect((await call(0)).status).toBe(201)
    let closed = false
    const answers = Array.from({ length: 20 }, (_, i) => call(i + 1).then((r) => ({ status: r.status, afterClose: closed })))
    await handler.dispose()
    closed = true
    for (const { status, afterClose } of await Promise.all(answers)) {
      expect([201, 503]).toContain(status)
      expect(afterClose && status < 300).toBe(false)
    }
  }, 30_000)
})
