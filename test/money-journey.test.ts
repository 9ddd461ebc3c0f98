/**
 * The money journey end to end, as an integration sees it: a customer approved, its crypto_wallet application
 * approved, a wallet created, a deposit sent to the wallet's address, the clock advanced; then the balance, the
 * transaction, and the signed webhooks it received (transaction.created, .processing, .completed with sequence 1, 2,
 * 3), each verified the way a receiver verifies them, with the client's verifier.
 */
import { createClient, verifyWebhook } from "@fos/client"
import { createEngine } from "@fos/http"
import { expect, it } from "vitest"
import { clientOf, deuDocuments, deuSubmission, idem } from "./onboardingFixtures.ts"
import { recording } from "./responseRecorder.ts"
import { keysOf, orgSeed, seedOf } from "./support.ts"

it("approve, apply, create a wallet, deposit, advance: the balance, the transaction and its signed webhooks", async () => {
  const engine = await createEngine({
    clock: { mode: "virtual", start: "2026-06-01T09:00:00.000Z" },
    webhookTransport: "memory",
    seed: seedOf(orgSeed("acme")) as never
  })
  try {
    const apiKey = keysOf("acme").sandbox
    const acme = clientOf(engine.fetch, "http://fos", apiKey)
    const fos = createClient({ baseUrl: "http://fos/sandbox", apiKey, fetch: recording(engine.fetch) })
    const endpoint = await fos.webhooks.createEndpoint({ payload: { url: "https://hooks.acme.test/fos", subscription: { mode: "selected", eventTypes: ["transaction.created", "transaction.processing", "transaction.completed", "wallet.created"] } } })

    const onboarding = await acme.call("POST", "/v2/onboarding", deuSubmission(await deuDocuments(acme)), idem())
    const customerId = (await acme.call("POST", `/v2/simulate/applications/${onboarding.json.applicationId}/decision`, { outcome: "approved" })).json.customerId
    const application = await acme.call("POST", `/v2/customers/${customerId}/features`, { type: "crypto_wallet", asset: { code: "USDC", chain: "base" } }, idem())
    await acme.call("POST", `/v2/simulate/applications/${application.json.applicationId}/decision`, { outcome: "approved" })
    const wallet = await acme.call("POST", `/v2/customers/${customerId}/wallets`, { chain: "base" }, idem())
    expect(wallet.status, wallet.text).toBe(201)

    const sent = await acme.call("POST", "/v2/simulate/deposits", {
      destination: { type: "deposit_address", address: wallet.json.address },
      assetAmount: { code: "USDC", amount: "1000.25", chain: "base" }
    })
    expect(sent.status, sent.text).toBe(201)
    await engine.clock.advance("1 minute")
    // Webhook sends run in the background: wait for the attempts the deposit's events caused.
    await engine.deliveries.flush()

    const read = await fos.wallets.get({ params: { walletId: wallet.json.id } })
    expect(read.balances).toEqual([{ code: "USDC", chain: "base", available: "1000.250000", pending: "0.000000" }])
    const transaction = await fos.transactions.get({ params: { id: sent.json.id } })
    expect(transaction).toMatchObject({ type: "deposit", status: "completed", customerId, destination: { type: "wallet", walletId: wallet.json.id } })

    const received = []
    for (const delivery of engine.deliveries.list()) {
      const event = await verifyWebhook(delivery.body, delivery.headers["x-service-signature"], { secret: endpoint.secret! })
      received.push(event)
    }
    expect(received.map((e) => [e.type, (e.data as { sequence?: number }).sequence])).toEqual([
      ["wallet.created", undefined],
      ["transaction.created", 1],
      ["transaction.processing", 2],
      ["transaction.completed", 3]
    ])
    expect(received.slice(1).every((e) => (e.data as { transactionId: string }).transactionId === sent.json.id)).toBe(true)
  } finally {
    await engine.close()
  }
})
