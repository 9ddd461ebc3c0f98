import { fosGlobalSetup } from "@fos/testing/vitest"
export default fosGlobalSetup({ randomSeed: 7, fixture: async (world) => { await world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.bench.test/f" } }); return undefined } })
