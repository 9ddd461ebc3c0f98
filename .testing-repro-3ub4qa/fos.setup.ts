import { fosGlobalSetup } from "@fos/testing/vitest"
export default fosGlobalSetup({
  randomSeed: 7,
  fixture: async (world) => {
    const endpoint = await world.client.webhooks.createEndpoint({ payload: { url: "https://hooks.repro.test/fixture" } })
    await world.advance("1 hour")
    return { endpointId: endpoint.id }
  }
})
