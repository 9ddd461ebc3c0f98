/**
 * A webhook receiver inside the test's own process: a node:http server on 127.0.0.1 (a free port) that verifies
 * every delivery's `X-Service-Signature` with `verifyWebhook` from `@fos/client` (the raw bytes, against the
 * receiver's own clock, as a real receiver does: fos signs with real time, embedded or served, whatever the sandbox's
 * clock), records the events it accepts, and answers 200; a delivery it cannot verify is answered 400 and recorded
 * with the reason, so a test can assert that a forged or stale delivery is refused.
 *
 * fos delivers to `http://127.0.0.1:<port>` only when its engine allows loopback URLs: `fos serve
 * --insecure-webhooks`, or `insecureWebhooks: true` (which `startEngine` sets). Deliveries are real HTTP requests sent
 * in the background, so `waitFor` waits in real time (a few milliseconds), bounded by `timeoutMs`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { VerificationFailure, WebhookEvent } from "@fos/client"
import type { EventType } from "@fos/contract"
import { load } from "./Load.ts"

/** The most a delivery's body may hold: fos's own request bound, which no event comes near. */
const maxBodyBytes = 1024 * 1024
/** The most events a receiver keeps; the oldest go first past it. */
const maxEvents = 10_000
/** How long `waitFor` waits by default, in real time. */
const defaultWaitMs = 10_000

export interface ReceiverOptions {
  /**
   * The endpoint's signing secret (`whsec_…`), or two while a rotation changes over. A receiver made before its
   * endpoint (whose URL needs the receiver's) is given it with `setSecret`; until then it refuses every delivery.
   */
  readonly secret?: string | ReadonlyArray<string>
  /** How far a delivery's `t` may be from the receiver's clock (the spec's 300 seconds when omitted). */
  readonly toleranceSeconds?: number
  /**
   * The port to listen on, on 127.0.0.1: a free one the system picks when omitted. A fixed port is for a receiver
   * whose address must be known before it starts (an endpoint saved in a fixture file); a port taken is an error.
   */
  readonly port?: number
}

/** A delivery the receiver refused, and why. */
export interface RejectedDelivery {
  readonly reason: VerificationFailure | "no_secret" | "too_large"
  readonly message: string
  /** The `X-Service-Delivery-Id` it carried (the attempt's `wda_…` id), when it had one. */
  readonly deliveryId: string | undefined
}

export interface WaitForOptions {
  /** Only an event about this resource (`transaction.*` events about `txn_…`, and so on, as the event log reads them). */
  readonly resourceId?: string
  /** How long to wait, in real time: 10 seconds when omitted. */
  readonly timeoutMs?: number
}

export interface Receiver {
  /** The address to register as a webhook endpoint's URL. */
  readonly url: string
  /** Every event verified, once each (a retry or a re-delivery after a restore is not recorded twice), oldest first. */
  readonly events: ReadonlyArray<WebhookEvent>
  /** Every delivery refused, oldest first. */
  readonly rejected: ReadonlyArray<RejectedDelivery>
  /** Sets the secret deliveries are verified with (or two, during a rotation). */
  readonly setSecret: (secret: string | ReadonlyArray<string>) => void
  /** The first verified event of `type` (and about `resourceId`), received already or when it arrives. */
  readonly waitFor: (type: EventType, options?: WaitForOptions) => Promise<WebhookEvent>
  /** Forgets the events and refusals recorded so far (a world's `restore` does this for its receivers). */
  readonly clear: () => void
  /** Stops listening; deliveries after it fail as a receiver that is down does. */
  readonly close: () => Promise<void>
}

/**
 * The resource an event is about, as the sandbox's event log names it (`Outbox.eventResourceId`, the one table of
 * which member of `data` that is). Loaded from `@fos/core` the first time a test asks by resource, so a test that
 * never does loads none of the engine.
 */
let resourceIdOf: ((event: WebhookEvent) => string | undefined) | undefined
const loadResourceIdOf = async () => {
  if (resourceIdOf === undefined) {
    const { Outbox } = await load(() => import("@fos/core"))
    resourceIdOf = Outbox.eventResourceId
  }
  return resourceIdOf
}

const readBody = (request: IncomingMessage): Promise<Uint8Array | undefined> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    request.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size <= maxBodyBytes) chunks.push(chunk)
    })
    request.on("end", () => resolve(size > maxBodyBytes ? undefined : new Uint8Array(Buffer.concat(chunks))))
    request.on("error", reject)
  })

/** Starts a receiver on 127.0.0.1, on `port` or a port the system picks. */
export const startReceiver = async (options: ReceiverOptions = {}): Promise<Receiver> => {
  // The verifier alone (`@fos/client/webhooks`, Web Crypto and Effect's Clock), loaded by the first receiver.
  const { verifyWebhook, WebhookVerificationError } = await load(() => import("@fos/client/webhooks"))
  let secret = options.secret
  const events: Array<WebhookEvent> = []
  const seen = new Set<string>()
  const rejected: Array<RejectedDelivery> = []
  const waiters = new Set<(event: WebhookEvent) => void>()

  const record = (event: WebhookEvent) => {
    if (seen.has(event.id)) return
    seen.add(event.id)
    events.push(event)
    if (events.length > maxEvents) seen.delete(events.shift()!.id)
    for (const waiter of [...waiters]) waiter(event)
  }

  const answer = async (request: IncomingMessage, response: ServerResponse) => {
    const header = (name: string) => {
      const value = request.headers[name]
      return Array.isArray(value) ? value[0] : value
    }
    const deliveryId = header("x-service-delivery-id")
    const refuse = (reason: RejectedDelivery["reason"], message: string) => {
      rejected.push({ reason, message, deliveryId })
      if (rejected.length > maxEvents) rejected.shift()
      response.writeHead(400, { "content-type": "text/plain" }).end(`${reason}: ${message}`)
    }
    const body = await readBody(request)
    if (body === undefined) return refuse("too_large", `the body is larger than ${maxBodyBytes} bytes`)
    if (secret === undefined) return refuse("no_secret", "the receiver has no secret yet (setSecret)")
    try {
      const event = await verifyWebhook(body, header("x-service-signature"), {
        secret,
        ...(options.toleranceSeconds === undefined ? {} : { toleranceSeconds: options.toleranceSeconds })
      })
      record(event)
      response.writeHead(200, { "content-type": "text/plain" }).end("ok")
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error
      refuse(error.reason, error.message)
    }
  }

  const server = createServer((request, response) => {
    answer(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { "content-type": "text/plain" }).end(String(error))
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve())
  })
  const { port } = server.address() as AddressInfo

  const waitFor = async (type: EventType, waitOptions: WaitForOptions = {}): Promise<WebhookEvent> => {
    const about = waitOptions.resourceId === undefined ? undefined : await loadResourceIdOf()
    const matches = (event: WebhookEvent) => event.type === type && (about === undefined || about(event) === waitOptions.resourceId)
    const found = events.find(matches)
    if (found !== undefined) return found
    const timeoutMs = waitOptions.timeoutMs ?? defaultWaitMs
    return new Promise((resolve, reject) => {
      const waiter = (event: WebhookEvent) => {
        if (!matches(event)) return
        waiters.delete(waiter)
        clearTimeout(timer)
        resolve(event)
      }
      const timer = setTimeout(() => {
        waiters.delete(waiter)
        const about = waitOptions.resourceId === undefined ? "" : ` about ${waitOptions.resourceId}`
        const refused = rejected.length === 0 ? "" : `; ${rejected.length} refused, the last for ${rejected.at(-1)!.reason}`
        reject(new Error(`no ${type} event${about} reached the receiver within ${timeoutMs} ms (${events.length} received${refused})`))
      }, timeoutMs)
      waiters.add(waiter)
    })
  }

  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    events,
    rejected,
    setSecret: (next) => {
      secret = next
    },
    waitFor,
    clear: () => {
      events.length = 0
      seen.clear()
      rejected.length = 0
    },
    close: () =>
      new Promise<void>((resolve) => {
        // The engine's sender keeps its connection open between deliveries: close it too, or close() waits for it.
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}
