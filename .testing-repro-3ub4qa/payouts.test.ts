import { appendFileSync } from "node:fs"
import { expect, it } from "vitest"
import { useWorld } from "@fos/testing/vitest"

const world = await useWorld<{ endpointId: string }>()
const record = (test: string, value: unknown) => appendFileSync("recorded.txt", "payouts.test.ts" + " " + test + " " + JSON.stringify(value) + "\n")
// What the file's set-up makes is part of its starting point.
const own = await world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.repro.test/payouts.test.ts/own" } })

it("creates endpoints", async () => {
  const made = []
  for (const n of [1, 2]) {
    const endpoint = await world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.repro.test/payouts.test.ts/" + n } })
    made.push([endpoint.id, endpoint.secret])
  }
  const listed = await world.client.webhooks.listEndpoints({ query: {} })
  record("creates", { organization: world.organizationId, fixture: world.fixture.endpointId, own: own.id, made, listed })
})

it("moves the clock and reads the events", async () => {
  await world.advance("2 days")
  const endpoint = await world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.repro.test/payouts.test.ts/late" } })
  const clock = await world.client.simulate.clock()
  record("clock", { endpoint: [endpoint.id, endpoint.secret, endpoint.createdAt], now: clock.now })
})

it("starts from the file's starting point", async () => {
  const listed = await world.client.webhooks.listEndpoints({ query: {} })
  expect(listed.data.map((e) => e.id).sort()).toEqual([world.fixture.endpointId, own.id].sort())
  const endpoint = await world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.repro.test/payouts.test.ts/again" } })
  record("start", { endpoint: endpoint.id })
})
