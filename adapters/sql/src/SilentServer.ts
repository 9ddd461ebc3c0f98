/**
 * Connections to PostgreSQL that give up on a silent server. A server that is down or refuses is told at once (the
 * connection is refused or reset, and the store answers 503), but a network partition says nothing: the socket stays
 * open, the statement sent gets no answer and no error, and the SQL client would wait for as long as TCP does
 * (minutes). So every connection the SQL store opens is watched: once something is written, an answer must begin
 * within the store's timeout (`Store.StoreTimeout`, 10 seconds by default), or the connection is destroyed. The
 * client then fails the statement as a lost connection (the store's `StoreUnavailable`, the pipeline's 503) and
 * retires the connection from its pool, which opens new ones as requests come: the store serves again once the
 * database answers.
 *
 * The watch covers a connection's start-up too (its first write is the start-up message), so a connect that is
 * accepted and never answered fails within the timeout as well. An answer that begins and then stops is left to TCP
 * keepalive, switched on at the same delay: its probes go unanswered by a partitioned peer, and the connection
 * fails about ten seconds later. PostgreSQL's own `statement_timeout` is set to the timeout as well: it does
 * nothing for a silent network (a partitioned server's error never arrives), but a statement the client gave up on
 * stops on the server too, and releases its locks, instead of running on for a client that is gone.
 *
 * The watch sits between the SQL client and the socket, as the client's `stream` (a duplex it reads and writes),
 * so it sees the bytes on the wire whether or not TLS is negotiated over them. Real time, by the runtime's timers:
 * the network's time, never an engine's virtual clock.
 */
import { connect, type Socket } from "node:net"
import { Duplex } from "node:stream"

/** Where a PostgreSQL URL leads: a TCP host and port, or a Unix socket. */
export type Endpoint = { readonly host: string; readonly port: number } | { readonly path: string }

/**
 * The endpoint of `url` as the SQL client reads it (`@effect/sql-pg`'s `parseUrl`): the URL's host and port, or the
 * `host` and `port` query parameters, which win; a host that starts with `/` is the directory of a Unix socket.
 */
export const endpointOf = (url: string): Endpoint => {
  const parsed = new URL(url)
  const hostname = parsed.hostname.startsWith("[") && parsed.hostname.endsWith("]") ? parsed.hostname.slice(1, -1) : decodeURIComponent(parsed.hostname)
  const host = parsed.searchParams.get("host") ?? (hostname === "" ? "localhost" : hostname)
  const port = Number(parsed.searchParams.get("port") ?? (parsed.port === "" ? 5432 : parsed.port))
  return host.startsWith("/") ? { path: `${host}/.s.PGSQL.${port}` } : { host, port }
}

/** The socket of `endpoint`, with TCP keepalive after `keepAliveMs` of quiet. */
const socketTo = (endpoint: Endpoint, keepAliveMs: number): Socket =>
  "path" in endpoint
    ? connect({ path: endpoint.path })
    // A statement is one write and then a wait for its answer: no Nagle, as the SQL client's own sockets.
    : connect({ host: endpoint.host, port: endpoint.port, noDelay: true, keepAlive: true, keepAliveInitialDelay: keepAliveMs })

/** A connection to `endpoint` that is destroyed when a write gets no answer within `timeoutMs`. */
export const watchedConnection = (endpoint: Endpoint, timeoutMs: number): Duplex => {
  const socket = socketTo(endpoint, timeoutMs)
  let unanswered: ReturnType<typeof setTimeout> | undefined
  const duplex: Duplex = new Duplex({
    write(chunk: Buffer, _encoding, callback) {
      // The first write since the last answer starts the wait; more writes before an answer do not extend it.
      unanswered ??= setTimeout(() => {
        duplex.destroy(new Error(`the database did not answer within ${timeoutMs} ms`))
      }, timeoutMs)
      socket.write(chunk, (error) => callback(error ?? null))
    },
    final(callback) {
      socket.end(() => callback())
    },
    read() {
      socket.resume()
    },
    destroy(error, callback) {
      clearTimeout(unanswered)
      socket.destroy()
      callback(error)
    }
  })
  socket.on("data", (chunk: Buffer) => {
    clearTimeout(unanswered)
    unanswered = undefined
    if (!duplex.push(chunk)) socket.pause()
  })
  socket.on("end", () => duplex.push(null))
  socket.on("error", (error) => duplex.destroy(error))
  socket.on("close", () => duplex.destroy())
  return duplex
}
