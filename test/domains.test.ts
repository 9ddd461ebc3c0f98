/**
 * A domain's descriptor is all the engine needs of a module (kernel/Domain.ts): a throwaway domain, given to an
 * engine as a host would give its own, has its table reset, snapshotted and restored with the sandbox, and its kind
 * of timer fired on the sandbox's clock and listed with its sentence, with no other module touched. And what the
 * registry must refuse, it refuses: a table or a kind declared twice, a stored timer its kind's schema refuses.
 */
import { Domain, Store, Tenancy, Timers } from "@fos/core"
import { type Engine } from "@fos/http"
import { Clock, Effect, Schema } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { clientOf } from "./onboardingFixtures.ts"
import { keysOf, makeEngine, orgSeed, seedOf, START_MS } from "./support.ts"

interface Widget {
  readonly id: string
  readonly scope: string
  readonly status: "green" | "ripe"
}

const Widgets = Store.table<Widget>({
  name: "test_widgets",
  key: (w) => w.id,
  orders: { byScope: { partition: (w) => w.scope, sort: (w) => w.id } }
})

const ripen = Timers.kind("test.widget_ripen", Schema.Struct({ widgetId: Schema.String }), "widgetId")

const widgets = Domain.make({
  name: "test/Widgets",
  tables: [Domain.inScope(Widgets, "byScope")],
  timers: [
    Timers.handle(ripen, (payload) =>
      Effect.gen(function*() {
        const store = yield* Store.Store
        const widget = yield* store.getForUpdate(Widgets, payload.widgetId)
        if (widget !== undefined) yield* Effect.orDie(store.update(Widgets, { ...widget, status: "ripe" }))
      }), (id) => `ripens widget ${id}`)
  ]
})

const scope = Tenancy.scopeOf("org_acme", "sandbox")
const minute = 60_000

let engine: Engine | undefined
afterEach(async () => {
  await engine?.close()
  engine = undefined
})

const start = async () => {
  engine = await makeEngine(seedOf(orgSeed("acme")), { domains: [widgets] })
  return { engine, acme: clientOf(engine.fetch, "http://fos", keysOf("acme").sandbox) }
}

const plantWidget = (e: Engine, id: string) =>
  e.run(Effect.gen(function*() {
    const store = yield* Store.Store
    yield* store.transaction(Effect.gen(function*() {
      yield* Effect.orDie(store.insert(Widgets, { id, scope, status: "green" }))
      yield* Timers.schedule(ripen, (yield* Clock.currentTimeMillis) + 10 * minute, { widgetId: id }, scope)
    }))
  }))

const widget = (e: Engine, id: string) => e.run(Effect.flatMap(Store.Store, (store) => store.get(Widgets, id)))

describe("a throwaway domain's descriptor", () => {
  it("lists its timer with its sentence, fires it on the sandbox's clock, and snapshots, restores and resets its table", async () => {
    const { engine, acme } = await start()
    await plantWidget(engine, "wgt_1")

    const pending = await acme.call("GET", "/v2/simulate/timers")
    expect(pending.status, pending.text).toBe(200)
    expect(pending.json.data).toEqual([{
      id: expect.any(String),
      kind: "test.widget_ripen",
      dueAt: new Date(START_MS + 10 * minute).toISOString(),
      resourceId: "wgt_1",
      action: "ripens widget wgt_1"
    }])

    const snapshot = await acme.call("POST", "/v2/simulate/snapshots")
    expect(snapshot.status, snapshot.text).toBe(201)
    expect((await acme.call("POST", "/v2/simulate/clock/advance", { seconds: 600 })).status).toBe(200)
    expect(await widget(engine, "wgt_1")).toMatchObject({ status: "ripe" })
    expect((await acme.call("GET", "/v2/simulate/timers")).json.data).toEqual([])

    // Restored: the widget is green again, its timer pending, as the snapshot held them.
    expect((await acme.call("POST", `/v2/simulate/snapshots/${snapshot.json.id}/restore`)).status).toBe(200)
    expect(await widget(engine, "wgt_1")).toMatchObject({ status: "green" })
    expect((await acme.call("GET", "/v2/simulate/timers")).json.data.map((t: { resourceId: string }) => t.resourceId)).toEqual(["wgt_1"])

    // Reset: the widget and its timer go with the sandbox.
    expect((await acme.call("POST", "/v2/simulate/reset")).status).toBe(200)
    expect(await widget(engine, "wgt_1")).toBeUndefined()
    expect((await acme.call("GET", "/v2/simulate/timers")).json.data).toEqual([])
  }, 60_000)

  it("keeps and reports a stored timer whose payload its kind's schema refuses, never fires or drops it", async () => {
    const { engine, acme } = await start()
    await engine.run(Timers.schedule("test.widget_ripen", START_MS + minute, { widgetId: 42 }, scope))
    expect((await acme.call("POST", "/v2/simulate/clock/advance", { seconds: 120 })).status).toBe(200)
    const [kept] = (await acme.call("GET", "/v2/simulate/timers")).json.data
    expect(kept).toMatchObject({ kind: "test.widget_ripen" })
    expect(kept.action).toBe(`is kept, not fired: its payload is not a test.widget_ripen timer's: Expected string at ["widgetId"]`)
  }, 60_000)

  it("refuses a table or a kind of timer declared twice: the engine does not start", async () => {
    const again = Domain.make({ name: "test/Again", tables: [Domain.inScope(Widgets, "byScope")] })
    await expect(makeEngine(seedOf(orgSeed("acme")), { domains: [widgets, again] })).rejects.toThrow(
      /The table test_widgets is declared by both test\/Widgets and test\/Again/
    )
    const kind = Domain.make({ name: "test/Kind", timers: [Timers.handle(ripen, () => Effect.void, () => "")] })
    await expect(makeEngine(seedOf(orgSeed("acme")), { domains: [widgets, kind] })).rejects.toThrow(/The timer kind test\.widget_ripen is declared by both/)
  })
})
