/**
 * The outbox apart from delivery: `emitEvent` writes the event and hands it to the one subscriber the engine
 * declares, and its payload is typed by the catalog (the `@ts-expect-error` lines below are compile errors, which
 * `tsc` checks: a line that stopped being an error fails the type-check).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { EventExamples } from "@fos/contract"
import * as MemoryStore from "../src/kernel/MemoryStore.ts"
import * as Outbox from "../src/kernel/Outbox.ts"
import * as Store from "../src/kernel/Store.ts"
import * as Wire from "../src/kernel/Wire.ts"

const scope = { organizationId: "org_t", environment: "sandbox" } as const

describe("emitEvent", () => {
  it.effect("writes the event to the outbox, and nothing else with no subscriber", () =>
    Effect.gen(function*() {
      const store = yield* Store.Store
      const written = yield* store.transaction(Outbox.emitEvent({ type: "customer.created", ...scope, data: EventExamples["customer.created"] }))
      expect(written).toMatchObject({ type: "customer.created", ...scope, data: EventExamples["customer.created"] })
      expect(yield* Outbox.readEvents(undefined, 10)).toEqual([written])
    }).pipe(Effect.provide(Layer.mergeAll(MemoryStore.layer, Layer.succeed(Outbox.EventWritten, [])))))

  it.effect("dies, writing nothing, in an engine built without its subscribers declared: no event goes unheard", () =>
    Effect.gen(function*() {
      const store = yield* Store.Store
      const exit = yield* Effect.exit(store.transaction(Outbox.emitEvent({ type: "customer.created", ...scope, data: EventExamples["customer.created"] })))
      expect(exit._tag).toBe("Failure")
      expect(yield* Outbox.readEvents(undefined, 10)).toEqual([])
    }).pipe(Effect.provide(MemoryStore.layer)))

  it.effect("hands every event it writes to the EventWritten subscriber, in the writing transaction", () => {
    const seen: Array<Outbox.OutboxEvent> = []
    const layer = Layer.mergeAll(MemoryStore.layer, Layer.succeed(Outbox.EventWritten, [(event) => Effect.sync(() => void seen.push(event))]))
    return Effect.gen(function*() {
      const store = yield* Store.Store
      const written = yield* store.transaction(Outbox.emitEvent({ type: "organization.activated", ...scope, data: { organizationId: "org_t", occurredAt: "2026-03-01T12:00:00.000Z" } }))
      expect(seen).toEqual([written])
    }).pipe(Effect.provide(layer))
  })

  it("takes only a payload that fits the catalog's schema for its type", () => {
    const at = "2026-03-01T12:00:00.000Z"
    const emit = [
      // Fits: compiles.
      Outbox.emitEvent({ type: "organization.activated", ...scope, data: { organizationId: "org_t", occurredAt: at } }),
      Outbox.emitEvent({ type: "customer.created", ...scope, data: EventExamples["customer.created"] }),
      // @ts-expect-error a required field is missing (customerId)
      Outbox.emitEvent({ type: "customer.created", ...scope, data: {} }),
      // @ts-expect-error a field of the wrong type
      Outbox.emitEvent({ type: "organization.activated", ...scope, data: { organizationId: 42, occurredAt: at } }),
      // @ts-expect-error a field the event does not have
      Outbox.emitEvent({ type: "organization.activated", ...scope, data: { organizationId: "org_t", occurredAt: at, reason: "kyb" } }),
      // @ts-expect-error another event's payload
      Outbox.emitEvent({ type: "order.created", ...scope, data: EventExamples["customer.created"] }),
      // @ts-expect-error a value outside the field's enumeration
      Outbox.emitEvent({ type: "order.cancelled", ...scope, data: { ...EventExamples["order.cancelled"], reason: "forgotten" } }),
      // @ts-expect-error not an event type of the catalog
      Outbox.emitEvent({ type: "customer.deleted", ...scope, data: {} }),
      // A payload the compiler cannot see into (what `toWire` returns) is taken as it is; the catalog test checks it.
      Outbox.emitEvent({ type: "customer.created", ...scope, data: Wire.toWire(EventExamples["customer.created"]) })
    ]
    expect(emit).toHaveLength(9)
  })
})
