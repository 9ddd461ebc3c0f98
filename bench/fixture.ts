/**
 * The world the tester benches build (bench/tester.ts, bench/footprint.ts): `scale` × (3 customers, each onboarded
 * with two USDC wallets on Base; 20 settled deposits over the wallets), every event delivered to one webhook
 * endpoint. Through the API of `engine`'s organization whose sandbox key is `key`.
 */
import type { Engine } from "@fos/http"
import { deuSubmission } from "../test/submissions.ts"
import { engineClient } from "./engineClient.ts"

export const buildFixture = async (engine: Engine, key: string, scale: number) => {
  const client = engineClient(engine, key)
  // Every event is delivered to an endpoint, as in a suite's world: the deliveries and their attempts are rows too.
  await client.call("POST", "/v2/webhooks/endpoints", { url: "https://hooks.bench.test/fixture" })
  const wallets: Array<string> = []
  for (let c = 0; c < 3 * scale; c++) {
    const docs = {
      register: await client.upload("certificate_of_incorporation"),
      articles: await client.upload("articles_of_association"),
      passport: await client.upload("passport")
    }
    const submitted = await client.call("POST", "/v2/onboarding", deuSubmission(docs, { clientReferenceId: `fixture-${c}` }))
    const decided = await client.call("POST", `/v2/simulate/applications/${submitted.applicationId}/decision`, { outcome: "approved" }, 200)
    const applied = await client.call("POST", `/v2/customers/${decided.customerId}/features`, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } })
    await client.call("POST", `/v2/simulate/applications/${applied.applicationId}/decision`, { outcome: "approved" }, 200)
    for (let w = 0; w < 2; w++) wallets.push((await client.call("POST", `/v2/customers/${decided.customerId}/wallets`, { chain: "base" })).address)
  }
  for (let d = 0; d < 20 * scale; d++) {
    await client.call("POST", "/v2/simulate/deposits", { destination: { type: "deposit_address", address: wallets[d % wallets.length] }, assetAmount: { code: "USDC", amount: "10.00", chain: "base" } })
  }
  await engine.clock.runUntilIdle()
}
