/**
 * A Hono application that embeds fos at `/fos` beside its own routes and names its users' callers to the engine
 * (docs/embedding.md, "The host's identity"), served by whatever runtime runs this file (`Bun.serve` or
 * `Deno.serve`). Its users sign in with its own header, `x-host-user`; fos never sees a key. Prints its origin on
 * its first line once it listens. test/host-hono.test.ts runs it on Bun.
 */
import { createEngine, type HostCaller } from "@fos/http"
import { Hono } from "hono"

const operatorToken = "hono-operator-token"
const engine = await createEngine({ basePath: "/fos", operatorToken, rateLimits: false })
const acme = (await engine.organizations.create({ name: "Acme", status: "active" })).id
const globex = (await engine.organizations.create({ name: "Globex", status: "active" })).id
const alice = await engine.users.create({ organizationId: acme, email: "alice@acme.example", role: "admin" })
const bob = await engine.users.create({ organizationId: globex, email: "bob@globex.example", role: "admin" })
const users: Record<string, HostCaller> = {
  alice: { organizationId: acme, environment: "sandbox", access: "read_write", userId: alice.id },
  "alice-live": { organizationId: acme, environment: "live", access: "read_write", userId: alice.id },
  auditor: { organizationId: acme, environment: "sandbox", access: "read_only" },
  bob: { organizationId: globex, environment: "sandbox", access: "read_write", userId: bob.id }
}

const app = new Hono()
app.get("/hello", (c) => c.text("the host's own route"))
app.all("/fos/*", (c) => {
  const caller = users[c.req.header("x-host-user") ?? ""]
  return engine.fetch(c.req.raw, caller === undefined ? undefined : { caller })
})
app.notFound((c) => c.text("the host has no such page", 404, { "x-answered-by": "host" }))

interface Served {
  readonly port: number
}
const runtime = globalThis as unknown as {
  Bun?: { serve: (options: { port: number; hostname: string; fetch: (request: Request) => Response | Promise<Response> }) => Served }
  Deno?: { serve: (options: { port: number; hostname: string; onListen: () => void }, handler: (request: Request) => Response | Promise<Response>) => { addr: Served } }
}
const port = runtime.Bun !== undefined
  ? runtime.Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: app.fetch }).port
  : runtime.Deno!.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, app.fetch).addr.port
console.log(JSON.stringify({ origin: `http://127.0.0.1:${port}`, operatorToken, acme, globex }))
