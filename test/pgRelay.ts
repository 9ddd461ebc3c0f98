/**
 * A TCP relay on 127.0.0.1 to a PostgreSQL server, for tests that stand between fos and its database: one that takes
 * the database away and brings it back (test/store-outage.test.ts), one that reads what fos sends it
 * (test/round-trips.test.ts), one that makes it go silent (test/store-silent.test.ts). PostgreSQL itself is shared by
 * every test file running in parallel, so no test stops or inspects the server itself.
 */
import { once } from "node:events"
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net"

export interface Relay {
  readonly port: () => number
  /** Takes connections again, on the same port. */
  readonly up: () => Promise<void>
  /** Refuses connections, as a stopped server's port does, and drops the open ones. */
  readonly down: () => Promise<void>
  /**
   * Goes silent, as a network partition does: connections, open and new, stay open, and nothing is passed on either
   * way; what is sent is held, as a network holds what it retransmits.
   */
  readonly silence: () => void
  /** Passes on again what silence held, then everything, as a partition that heals. */
  readonly speak: () => void
}

/**
 * A relay to `target`'s host and port. `onConnection`, when given, is told of each connection the relay takes and
 * answers what to do with the bytes the client sends on it, before they are passed on.
 */
export const relayTo = async (target: URL, onConnection?: () => (chunk: Buffer) => void): Promise<Relay> => {
  const sockets = new Set<Socket>()
  let server: Server | undefined
  let port = 0
  let silent = false
  let held: Array<() => void> = []
  const forward = (from: Socket, to: Socket) =>
    from.on("data", (chunk: Buffer) => {
      if (silent) held.push(() => to.writable && to.write(chunk))
      else if (to.writable) to.write(chunk)
    })
  const up = async () => {
    server = createServer((client) => {
      const upstream = connect({ host: target.hostname, port: Number(target.port || 5432) })
      sockets.add(client).add(upstream)
      const drop = () => {
        client.destroy()
        upstream.destroy()
        sockets.delete(client)
        sockets.delete(upstream)
      }
      client.on("error", drop).on("close", drop)
      upstream.on("error", drop).on("close", drop)
      const observe = onConnection?.()
      if (observe !== undefined) client.on("data", observe)
      forward(client, upstream)
      forward(upstream, client)
    })
    server.listen(port, "127.0.0.1")
    await once(server, "listening")
    port = (server.address() as AddressInfo).port
  }
  const down = async () => {
    const closed = new Promise((done) => server!.close(done))
    for (const s of sockets) s.destroy()
    sockets.clear()
    await closed
  }
  const silence = () => {
    silent = true
  }
  const speak = () => {
    silent = false
    const release = held
    held = []
    for (const send of release) send()
  }
  await up()
  return { port: () => port, up, down, silence, speak }
}

/** `url` with its host and port those of `relay`. */
export const throughRelay = (url: string, relay: Relay): string => {
  const through = new URL(url)
  through.hostname = "127.0.0.1"
  through.port = String(relay.port())
  return through.toString()
}
