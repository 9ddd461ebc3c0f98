/**
 * The servers' webhook transport (node:http and node:https): it connects to the address the engine checked, with the
 * URL's host as Host (and as the TLS server name), and sends the delivery's headers and HTTP's own, nothing else.
 */
import { once } from "node:events"
import { createServer, type IncomingMessage, type Server } from "node:http"
import { createServer as createTlsServer } from "node:https"
import type { AddressInfo } from "node:net"
import { Transport } from "@fos/core"
import { createEngine } from "@fos/http"
import { makeNodeWebhookTransport, nodeWebhookTransport } from "@fos/serve"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"

const servers: Array<Server> = []

/** A self-signed certificate for hooks.test (generated once with openssl, valid for a century). */
const hooksKey = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgsWD3+Psv/xaPtePa
YX2y295BV7qa4y8yOep32Jir/cehRANCAATWv+K2i3vnaL870+ZzgFN0nZG4oaZq
HPA72fILbaE1Ho2YS9qd6X6OXgqOM288RM8QpjOouJyKguNMSJqIT1WS
-----END PRIVATE KEY-----
`
const hooksCert = `-----BEGIN CERTIFICATE-----
MIIBmDCCAT6gAwIBAgIUJfOvzTGY1cSRWRoUEMNe65G/xBkwCgYIKoZIzj0EAwIw
FTETMBEGA1UEAwwKaG9va3MudGVzdDAgFw0yNjExMjMyMDIzNDdaGA8yMTI2MTAz
MDIwMjM0N1owFTETMBEGA1UEAwwKaG9va3MudGVzdDBZMBMGByqGSM49AgEGCCqG
SM49AwEHA0IABNa/4raLe+dovzvT5nOAU3Sdkbihpmoc8DvZ8gttoTUejZhL2p3p
fo5eCo4zbzxEzxCmM6i4nIqC40xImohPVZKjajBoMB0GA1UdDgQWBBTqJm+cBf4s
VSI7522Ba9pKV7e1LDAfBgNVHSMEGDAWgBTqJm+cBf4sVSI7522Ba9pKV7e1LDAP
BgNVHRMBAf8EBTADAQH/MBUGA1UdEQQOMAyCCmhvb2tzLnRlc3QwCgYIKoZIzj0E
AwIDSAAwRQIgKugXmALU0d2oE8/2qzxtfrz5TwXw/RnyutMV10jBzp8CIQDzQMdI
inexJR7yuasTQrvDpeaXZ1/Cj3ROrhvhyKEPDg==
-----END CERTIFICATE-----
`
afterAll(() => {
  for (const server of servers) server.close()
})

interface Hit {
  readonly headers: IncomingMessage["headers"]
  readonly path: string
  readonly body: string
  readonly local: string
}

const receiver = async (status = 204) => {
  const hits: Array<Hit> = []
  const server = createServer((req, res) => {
    let body = ""
    req.setEncoding("utf8").on("data", (c: string) => (body += c))
    req.on("end", () => {
      hits.push({ headers: req.headers, path: req.url ?? "", body, local: req.socket.localAddress ?? "" })
      res.writeHead(status).end("ignored")
    })
  })
  servers.push(server)
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  return { hits, port: (server.address() as AddressInfo).port }
}

const delivery = (url: string, address: string | undefined): Transport.DeliveryRequest => ({
  deliveryId: "wdl_x",
  attemptId: "wda_x",
  url,
  ...(address === undefined ? {} : { addresses: [address] }),
  body: "{\"id\":\"evt_x\"}",
  headers: {
    "content-type": "application/json",
    "x-service-signature": "t=1,v1=00",
    "x-service-delivery-id": "wda_x",
    "x-service-event": "customer.created",
    "user-agent": "fos-webhooks/2"
  }
})

describe("nodeWebhookTransport", () => {
  it("connects to the checked address, never resolving the name again, and sends the name as Host", async () => {
    const { hits, port } = await receiver(202)
    // .invalid never resolves (RFC 6761): the only way to the receiver is the address the engine checked.
    const sent = await Effect.runPromise(nodeWebhookTransport.send(delivery(`http://rebind.invalid:${port}/hook?q=1`, "127.0.0.1")))
    expect(sent.status).toBe(202)
    expect(hits).toHaveLength(1)
    expect(hits[0]!.path).toBe("/hook?q=1")
    expect(hits[0]!.body).toBe("{\"id\":\"evt_x\"}")
    expect(hits[0]!.headers).toEqual({
      host: `rebind.invalid:${port}`,
      connection: "keep-alive",
      "content-length": "14",
      "content-type": "application/json",
      "user-agent": "fos-webhooks/2",
      "x-service-delivery-id": "wda_x",
      "x-service-event": "customer.created",
      "x-service-signature": "t=1,v1=00"
    })
  })

  it("https: connects to the checked address, names the URL's host in SNI and Host, and checks the certificate against it", async () => {
    const names: Array<string> = []
    const hosts: Array<string | undefined> = []
    const server = createTlsServer({ key: hooksKey, cert: hooksCert }, (req, res) => {
      hosts.push(req.headers.host)
      req.resume()
      req.on("end", () => res.writeHead(200).end())
    })
    server.on("secureConnection", (socket) => names.push(String((socket as { servername?: string }).servername)))
    servers.push(server)
    server.listen(0, "127.0.0.1")
    await once(server, "listening")
    const port = (server.address() as AddressInfo).port
    const trusting = makeNodeWebhookTransport({ ca: hooksCert })
    // hooks.test has no DNS; the checked address leads to the receiver, whose certificate names hooks.test.
    expect((await Effect.runPromise(trusting.send(delivery(`https://hooks.test:${port}/h`, "127.0.0.1")))).status).toBe(200)
    expect(names).toEqual(["hooks.test"])
    expect(hosts).toEqual([`hooks.test:${port}`])
    // The same address under another name: the certificate does not name it, so nothing is sent.
    const mismatch = await Effect.runPromise(Effect.flip(trusting.send(delivery(`https://other.test:${port}/h`, "127.0.0.1"))))
    expect(mismatch.message).toMatch(/other\.test|altnames|certificate/i)
    // Without the test's certificate trusted, a self-signed one is refused.
    const refused = await Effect.runPromise(Effect.flip(nodeWebhookTransport.send(delivery(`https://hooks.test:${port}/h`, "127.0.0.1"))))
    expect(refused.message).toMatch(/self.signed|certificate/i)
    expect(hosts).toHaveLength(1)
  })

  it("fails with a TransportError when nothing answers, and does not follow redirects", async () => {
    const closed = await receiver()
    servers.at(-1)!.close()
    await once(servers.at(-1)!, "close")
    const refused = await Effect.runPromise(Effect.flip(nodeWebhookTransport.send(delivery(`http://127.0.0.1:${closed.port}/`, "127.0.0.1"))))
    expect((refused as Transport.TransportError)._tag).toBe("TransportError")
    const { hits, port } = await receiver(307)
    expect((await Effect.runPromise(nodeWebhookTransport.send(delivery(`http://127.0.0.1:${port}/`, undefined)))).status).toBe(307)
    expect(hits).toHaveLength(1)
  })
})

describe("the engine sends to the address its check resolved", () => {
  it("resolves once per attempt and hands that address to the transport, whatever the name answers later", async () => {
    let calls = 0
    // Creation resolves the name (public), the attempt checks it again (public); later the name answers loopback.
    const answers = ["93.184.216.34", "93.184.216.34", "127.0.0.1"]
    const seen: Array<Transport.DeliveryRequest> = []
    const key = `ck_sandbox_${"5e".repeat(32)}`
    const engine = await createEngine({
      clock: { mode: "virtual", start: Date.parse("2026-03-01T12:00:00.000Z") },
      resolveHost: () => Effect.sync(() => [answers[Math.min(calls++, answers.length - 1)]!]),
      webhookTransport: Transport.callback((request) => {
        seen.push(request)
        return { status: 200 }
      }),
      seed: {
        organizations: [{
          id: "org_pin",
          name: "Pin",
          status: "active",
          users: [{ id: "usr_pin", email: "pin@pin.test", role: "admin" }],
          apiKeys: [{ key, access: "read_write", createdBy: "usr_pin" }]
        }]
      }
    })
    try {
      const post = (path: string, body: unknown) =>
        engine.fetch(`http://fos/sandbox${path}`, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify(body) })
      expect((await post("/v2/webhooks/endpoints", { url: "https://rebind.example.com/hook" })).status).toBe(201)
      expect((await post("/v2/simulate/events", { type: "customer.created" })).status).toBe(201)
      // Sends run in the background: wait for the attempt.
      await engine.deliveries.flush()
      expect(calls).toBe(2)
      expect(seen).toHaveLength(1)
      // The name would now answer a loopback address; the delivery went to the one that was checked.
      expect(seen[0]!.addresses).toEqual(["93.184.216.34"])
      expect(seen[0]!.url).toBe("https://rebind.example.com/hook")
    } finally {
      await engine.close()
    }
  })

  it("through the node transport: a loopback name under insecureWebhooks reaches the receiver at the checked address", async () => {
    const { hits, port } = await receiver()
    const resolved: Array<string> = []
    const key = `ck_sandbox_${"6f".repeat(32)}`
    const engine = await createEngine({
      clock: { mode: "virtual", start: Date.parse("2026-03-01T12:00:00.000Z") },
      insecureWebhooks: true,
      resolveHost: (host) => Effect.sync(() => {
        resolved.push(host)
        return resolved.length === 1 ? ["127.0.0.1"] : ["10.0.0.1"]
      }),
      webhookTransport: nodeWebhookTransport,
      recordDeliveries: true,
      seed: {
        organizations: [{
          id: "org_pin2",
          name: "Pin",
          status: "active",
          users: [{ id: "usr_pin2", email: "pin2@pin.test", role: "admin" }],
          apiKeys: [{ key, access: "read_write", createdBy: "usr_pin2" }]
        }]
      }
    })
    try {
      const post = (path: string, body: unknown) =>
        engine.fetch(`http://fos/sandbox${path}`, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify(body) })
      expect((await post("/v2/webhooks/endpoints", { url: `http://rebind.localhost:${port}/hook` })).status).toBe(201)
      expect((await post("/v2/simulate/events", { type: "customer.created" })).status).toBe(201)
      // Sends run in the background: wait for the attempt.
      await engine.deliveries.flush()
      expect(resolved).toEqual(["rebind.localhost"])
      expect(hits).toHaveLength(1)
      expect(hits[0]!.headers.host).toBe(`rebind.localhost:${port}`)
      expect(engine.deliveries.list().map((d) => d.status)).toEqual([204])
      // The next attempt's check finds a private address: refused before anything is sent.
      expect((await post("/v2/simulate/events", { type: "customer.created" })).status).toBe(201)
      // Sends run in the background: wait for the attempt.
      await engine.deliveries.flush()
      expect(hits).toHaveLength(1)
    } finally {
      await engine.close()
    }
  })
})

describe("createEngine's default transport (fetch)", () => {
  it("propagates no tracing headers to the receiver", async () => {
    const { hits, port } = await receiver()
    const key = `ck_sandbox_${"7a".repeat(32)}`
    const engine = await createEngine({
      clock: { mode: "virtual", start: Date.parse("2026-03-01T12:00:00.000Z") },
      insecureWebhooks: true,
      seed: {
        organizations: [{
          id: "org_fetch",
          name: "Fetch",
          status: "active",
          users: [{ id: "usr_fetch", email: "fetch@fetch.test", role: "admin" }],
          apiKeys: [{ key, access: "read_write", createdBy: "usr_fetch" }]
        }]
      }
    })
    try {
      const post = (path: string, body: unknown) =>
        engine.fetch(`http://fos/sandbox${path}`, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify(body) })
      expect((await post("/v2/webhooks/endpoints", { url: `http://127.0.0.1:${port}/hook` })).status).toBe(201)
      expect((await post("/v2/simulate/events", { type: "customer.created" })).status).toBe(201)
      // Sends run in the background: wait for the attempt.
      await engine.deliveries.flush()
      expect(hits).toHaveLength(1)
      const names = Object.keys(hits[0]!.headers)
      expect(names).toEqual(expect.arrayContaining(["content-type", "x-service-signature", "x-service-delivery-id", "x-service-event", "user-agent"]))
      expect(names).not.toContain("traceparent")
      expect(names).not.toContain("b3")
    } finally {
      await engine.close()
    }
  })
})
