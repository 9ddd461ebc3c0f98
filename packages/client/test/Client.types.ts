/**
 * Type tests, checked by `tsc --noEmit -p .` (never run): the client is derived from the API definition, so a call
 * of the wrong shape does not compile. Each `@ts-expect-error` line must be an error, or tsc reports the directive
 * as unused and the type check fails.
 */
import { CustomerId } from "@fos/contract"
import { Effect } from "effect"
import { createClient, makeClient } from "../src/Client.ts"

export const promiseClient = async () => {
  const client = createClient({ baseUrl: "http://127.0.0.1:4000/sandbox", apiKey: "ck_sandbox_..." })

  // Right shapes compile, and answers are typed.
  const me = await client.portal.me()
  const role: "admin" | "developer" = me.user.role
  const endpoint = await client.webhooks.createEndpoint({
    payload: { url: "https://receiver.example.com/hooks", subscription: { mode: "selected", eventTypes: ["transaction.completed"] } }
  })
  const secret: string | undefined = endpoint.secret
  await client.webhooks.getEndpoint({ params: { id: endpoint.id } })
  await client.webhooks.listEndpoints({ query: { limit: 10, direction: "backward" } })
  await client.webhooks.rotateSecret({ params: { id: endpoint.id } }, { idempotencyKey: "k-1" })
  await client.simulate.advanceClock({ payload: { seconds: 60 } })

  // @ts-expect-error an endpoint the API does not have
  await client.customers.create({ payload: { name: "x" } })
  // @ts-expect-error a group the API does not have
  await client.payments.list()
  // @ts-expect-error the path parameter is missing
  await client.customers.get({ params: {} })
  // @ts-expect-error the path parameter has another name
  await client.customers.get({ params: { id: "cus_1" } })
  // @ts-expect-error no request at all where a path parameter is needed
  await client.webhooks.getEndpoint()
  // @ts-expect-error the payload is missing
  await client.webhooks.createEndpoint({})
  // @ts-expect-error url must be a string
  await client.webhooks.createEndpoint({ payload: { url: 42 } })
  // @ts-expect-error an event type that is not in the catalog
  await client.webhooks.createEndpoint({ payload: { url: "https://r.example.com", subscription: { mode: "selected", eventTypes: ["no.such"] } } })
  // @ts-expect-error a subscription mode that does not exist
  await client.webhooks.createEndpoint({ payload: { url: "https://r.example.com", subscription: { mode: "some" } } })
  // @ts-expect-error limit is a number
  await client.webhooks.listEndpoints({ query: { limit: "10" } })
  // @ts-expect-error direction is forward or backward
  await client.webhooks.listEndpoints({ query: { direction: "sideways" } })
  // @ts-expect-error seconds is a number
  await client.simulate.advanceClock({ payload: { seconds: "60" } })
  // @ts-expect-error a field the answer does not have
  me.user.password
  // @ts-expect-error call options are not the request
  await client.webhooks.rotateSecret({ idempotencyKey: "k" })
  return { role, secret }
}

export const effectClient = Effect.gen(function*() {
  const client = yield* makeClient({ baseUrl: "http://127.0.0.1:4000/sandbox", apiKey: "ck_sandbox_..." })
  const customer = yield* client.customers.get({ params: { customerId: CustomerId.make("cus_1") } })
  const name: string = customer.name
  // @ts-expect-error the Effect client takes ids as their branded schema types, decoded or made, not any string
  yield* client.customers.get({ params: { customerId: "cus_1" } })
  // @ts-expect-error the payload is checked the same way
  yield* client.webhooks.createEndpoint({ payload: { url: 42 } })
  // The error channel carries the decoded problem, typed.
  const problem = yield* Effect.flip(client.portal.me())
  if ("type" in problem && typeof problem.type === "string") return problem.type
  return name
})
