/**
 * Problems for what never reaches the application: a request the runtime's HTTP parser refuses (an unknown method,
 * raw bytes in the path, a malformed header, a request line too long, a body framed two ways, an `Expect` it does
 * not meet, CONNECT). The runtime would answer those with a bare status and no body; fos answers them with the same
 * RFC 9457 problem as every other answer (BAD_REQUEST, the catalog's code for a request it cannot read), a
 * correlation id in the body and in `x-correlation-id`, the engine's time, and `Connection: close`, since the
 * connection cannot be read any further.
 *
 * No runtime module is used here; the Node adapter writes what this builds (docs/decisions.md, "Answers below the
 * application", says what Bun's and Deno's servers allow).
 */
import { Problem, Timers } from "@fos/core"
import { toIso } from "@fos/contract"
import type { Engine } from "@fos/http"
import { Context, Effect } from "effect"

/** What a parser refusal is, for the problem's detail (which never echoes the request's bytes). */
export const bareDetail = (code: string | undefined): string => {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return "The request line and headers are larger than the server accepts (16 KiB)."
    case "HPE_INVALID_METHOD":
      return "The request's method is not one the server knows."
    case "HPE_INVALID_URL":
    case "HPE_INVALID_PATH":
      return "The request target is not a valid path; percent-encode bytes outside printable ASCII."
    case "HPE_INVALID_HEADER_TOKEN":
    case "HPE_INVALID_HEADER_VALUE":
    case "HPE_LF_EXPECTED":
    case "HPE_CR_EXPECTED":
      return "A header line is malformed."
    case "HPE_UNEXPECTED_CONTENT_LENGTH":
    case "HPE_INVALID_CONTENT_LENGTH":
    case "HPE_INVALID_TRANSFER_ENCODING":
      return "The body's length is given in two ways or in a way the server does not take: send Content-Length or Transfer-Encoding: chunked, not both."
    case "HPE_INVALID_CHUNK_SIZE":
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return "A chunk of the request body is malformed."
    case "ERR_HTTP_REQUEST_TIMEOUT":
    case "ERR_HTTP_HEADERS_TIMEOUT":
      return "The request was not received in full in time."
    case "EXPECTATION":
      return "The request's Expect header asks for something other than 100-continue, which the server does not meet."
    case "CONNECT":
      return "CONNECT is not served: this is an API server, not a proxy."
    default:
      return "The request could not be read as HTTP/1.1."
  }
}

/**
 * The problem's `instance`: the path of the request line when it is readable (printable ASCII, at most 2,048
 * characters), its query stripped; else `/`.
 */
export const bareInstance = (requestTarget: string | undefined): string => {
  if (requestTarget === undefined || !/^\/[\x21-\x7e]{0,2047}$/.test(requestTarget)) return "/"
  const q = requestTarget.indexOf("?")
  return q < 0 ? requestTarget : requestTarget.slice(0, q)
}

/** The request target of the first line of `head` (bytes as latin1), when there is one. */
export const requestTargetOf = (head: string | undefined): string | undefined => {
  if (head === undefined) return undefined
  const line = head.slice(0, Math.min(head.length, head.indexOf("\r\n") < 0 ? head.length : head.indexOf("\r\n")))
  return line.split(" ")[1]
}

const randomHex = (bytes: number): string =>
  Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("")

export interface BareProblem {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/**
 * The origin a refused request was sent to, for its problem's `docs`: its Host header when that is a plain
 * `host[:port]`, else the address the server listens on; the protocol is the server's (`http` for fos's servers).
 */
export const bareOrigin = (host: string | undefined, listening: string, protocol = "http"): string =>
  host !== undefined && /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(host) ? `${protocol}://${host}` : `${protocol}://${listening}`

/** The Host header of `head` (bytes as latin1), when there is one. */
export const hostOf = (head: string | undefined): string | undefined =>
  head === undefined ? undefined : /\r\nhost:[ \t]*([^\r\n]*?)[ \t]*\r\n/i.exec(head)?.[1]

/**
 * The BAD_REQUEST problem for a request refused below the application, stamped with the engine's clock; its `docs`
 * is on `origin` under the engine's base path, as the application's problems are.
 */
export const bareProblem = (engine: Engine, detail: string, instance: string, origin: string): BareProblem => {
  const error = Problem.apiError("BAD_REQUEST", detail)
  // The same shape as the edge's ids (48 hex digits); these requests never reach the edge's counter.
  const correlationId = randomHex(24)
  const nowMs = Effect.runSync(Context.get(engine.context, Timers.TimeControl).now)
  const body = JSON.stringify(Problem.render(error, { instance, correlationId, timestamp: toIso(nowMs), origin: origin + engine.basePath }))
  return {
    status: error.status,
    headers: {
      "content-type": "application/json",
      "content-length": String(new TextEncoder().encode(body).length),
      "x-correlation-id": correlationId,
      connection: "close"
    },
    body
  }
}

/** `problem` as the bytes of an HTTP/1.1 answer, for a connection the server's own writer no longer frames. */
export const rawAnswer = (problem: BareProblem): string =>
  `HTTP/1.1 ${problem.status} Bad Request\r\n` +
  Object.entries(problem.headers).map(([name, value]) => `${name}: ${value}\r\n`).join("") +
  "\r\n" + problem.body
