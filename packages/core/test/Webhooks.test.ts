/**
 * Webhook delivery on the system-clock scheduler, driven by Effect's TestClock: the exact retry timetable, and the
 * receiver's 5-second limit.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { TestClock } from "effect/testing"
import type * as Auth from "../src/tenancy/Auth.ts"
import * as Deliveries from "../src/webhooks/Deliveries.ts"
import * as Endpoints from "../src/webhooks/Endpoints.ts"
import * as Engine from "../src/Engine.ts"
import * as Outbox from "../src/kernel/Outbox.ts"
import * as Store from "../src/kernel/Store.ts"
import type * as Tenancy from "../src/tenancy/Tenancy.ts"
import * as Transport from "../src/webhooks/Transport.ts"

import { EventExamples } from "@fos/contract"

const caller: Auth.Caller = {
  organization: { id: "org_t", name: "T", status: "active", sandboxProvisioned: true, apiKeyCreationEnabled: true, features: [], rateLimit: undefined, createdAt: "" } as unknown as Tenancy.Organization,
  environment: "sandbox",
  key: {} as Auth.Caller["key"]
}

/** An engine on the system clock (TestClock under it.effect), with its scheduler running, and this receiver. */
const engineWith = (answer: (request: Transport.DeliveryRequest) => Promise<{ status: number }> | { status: number }) =>
  Engine.layer({ webhookTransport: Transport.callback(answer) }) as Layer.Layer<Store.Store>

describe("webhook delivery on TestClock", () => {
  it.effect("attempts at 0, +30 s (not +29 s), +2 min 30 s, +17 min 30 s and +77 min 30 s, then failed", () => {
    let sent = 0
    const layer = engineWith(() => {
      sent++
      return { status: 500 }
    })
    return Effect.gen(function*() {
      const store = yield* Store.Store
      yield* Endpoints.create(caller, { url: "https://receiver.example.com/h" })
      yield* store.transaction(Outbox.emitEvent({ type: "customer.created", organizationId: "org_t", environment: "sandbox", data: EventExamples["customer.created"] }))
      // The layer's scheduler fiber sleeps on the TestClock; each adjust runs what came due.
      const steps: Array<[number, number]> = []
      const advanceTo = function*(seconds: number) {
        yield* TestClock.setTime(seconds * 1000)
        const deliveries = yield* store.page(Deliveries.WebhookDeliveries, { order: "byScope", partition: "org_t/sandbox", descending: false, backward: false, from: undefined, limit: 10 })
        const attempts = deliveries.length === 0 ? 0 : yield* store.count(Deliveries.WebhookAttempts, "byDelivery", deliveries[0]!.id)
        steps.push([seconds, attempts])
      }
      for (const s of [0, 29, 30, 149, 150, 1049, 1050, 4649, 4650]) yield* advanceTo(s)
      expect(steps).toEqual([[0, 1], [29, 1], [30, 2], [149, 2], [150, 3], [1049, 3], [1050, 4], [4649, 4], [4650, 5]])
      const [delivery] = yield* store.page(Deliveries.WebhookDeliveries, { order: "byScope", partition: "org_t/sandbox", descending: false, backward: false, from: undefined, limit: 10 })
      expect(delivery!.status).toBe("failed")
      const attempts = yield* store.page(Deliveries.WebhookAttempts, { order: "byDelivery", partition: delivery!.id, descending: false, backward: false, from: undefined, limit: 10 })
      expect(attempts.map((a) => a.startedAt)).toEqual([0, 30, 150, 1050, 4650].map((s) => new Date(s * 1000).toISOString()))
      expect(sent).toBe(5)
    }).pipe(Effect.provide(layer))
  })

  it("gives a receiver 5 seconds of real time, then records the attempt as failed", async () => {
    const layer = engineWith(() => new Promise(() => {})) // never answers
    const program = Effect.gen(function*() {
      const store = yield* Store.Store
      yield* Endpoints.create(caller, { url: "https://slow.example.com/h" })
      yield* store.transaction(Outbox.emitEvent({ type: "customer.created", organizationId: "org_t", environment: "sandbox", data: EventExamples["customer.created"] }))
      const deliveries = () => store.page(Deliveries.WebhookDeliveries, { order: "byScope", partition: "org_t/sandbox", descending: false, backward: false, from: undefined, limit: 10 })
      // The real scheduler runs on the real clock here; wait for the first attempt to be recorded.
      for (let i = 0; i < 100; i++) {
        const [d] = yield* deliveries()
        if (d !== undefined && d.attemptsInRun === 1) break
        yield* Effect.sleep("100 millis")
      }
      const [delivery] = yield* deliveries()
      const attempts = yield* store.page(Deliveries.WebhookAttempts, { order: "byDelivery", partition: delivery!.id, descending: false, backward: false, from: undefined, limit: 10 })
      return { delivery: delivery!, attempts }
    })
    const { attempts, delivery } = await Effect.runPromise(Effect.scoped(Effect.provide(program, layer)))
    expect(delivery.status).toBe("pending")
    expect(attempts).toHaveLength(1)
    expect(attempts[0]).toMatchObject({ responseStatus: null, error: "no answer within 5 seconds" })
    expect(attempts[0]!.latencyMs).toBeGreaterThanOrEqual(4_900)
  }, 20_000)
})
