/**
 * A TCP relay on 127.0.0.1 to a PostgreSQL server, for tests that stand between fos and its database: one that takes
 * the database away and brings it back (test/store-outage.test.ts), one that reads what fos sends it
 * (test/round-trips.test.ts, and `bench:tester`, which counts the statements of a journey and of an advance), one that
 * makes it go silent (test/store-silent.test.ts). PostgreSQL itself is shared by
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

/** What one connection sent, an exchange at a time: the statements of each, in order. */
export interface Wire {
  readonly exchanges: Array<ReadonlyArray<string>>
}

/** Codes of the untyped messages a connection may open with before its startup message. */
const sslRequest = 80877103
const gssRequest = 80877104

/**
 * A reader of what a client sends PostgreSQL on one connection, recording each exchange into a new `Wire` of `wires`.
 * Messages are parsed as they arrive, across chunk boundaries.
 */
export const protocolReader = (wires: Array<Wire>) => (): ((chunk: Buffer) => void) => {
  const wire: Wire = { exchanges: [] }
  wires.push(wire)
  let buffered = Buffer.alloc(0)
  let started = false
  const named = new Map<string, string>()
  let bound: Array<string> = []
  return (chunk) => {
    buffered = Buffer.concat([buffered, chunk])
    while (true) {
      if (!started) {
        if (buffered.length < 8) return
        const length = buffered.readInt32BE(0)
        if (buffered.length < length) return
        const code = buffered.readInt32BE(4)
        buffered = buffered.subarray(length)
        if (code !== sslRequest && code !== gssRequest) started = true
        continue
      }
      if (buffered.length < 5) return
      const type = String.fromCharCode(buffered[0]!)
      const length = buffered.readInt32BE(1)
      if (buffered.length < 1 + length) return
      const body = buffered.subarray(5, 1 + length)
      buffered = buffered.subarray(1 + length)
      const strings = (count: number) => {
        const out: Array<string> = []
        let at = 0
        for (let i = 0; i < count; i++) {
          const end = body.indexOf(0, at)
          out.push(body.toString("utf8", at, end))
          at = end + 1
        }
        return out
      }
      if (type === "P") {
        const [name, text] = strings(2)
        named.set(name!, text!)
        if (name === "") bound.push(text!)
      } else if (type === "B") {
        const statement = strings(2)[1]!
        if (statement !== "") bound.push(named.get(statement) ?? `<unknown ${statement}>`)
      } else if (type === "S") {
        wire.exchanges.push(bound)
        bound = []
      } else if (type === "Q") {
        wire.exchanges.push([strings(1)[0]!])
      }
    }
  }
}
