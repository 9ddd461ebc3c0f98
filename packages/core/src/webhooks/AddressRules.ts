/**
 * The address rules of webhook URLs (spec, Webhook endpoint: "url: HTTPS required"; Events: "Webhooks push events
 * to registered HTTPS endpoints"). What fos adds, so that a webhook cannot be pointed at the service's own network
 * (server-side request forgery; docs/webhooks.md, "Webhook endpoints and delivery"): a URL is HTTPS, at most 2048
 * characters, carries no credentials, and never leads to a private, loopback, link-local or otherwise non-public
 * address, whether written in the URL or found by resolving its name; `--insecure-webhooks` also allows http:// and
 * loopback hosts, and nothing else. Creation checks it once; delivery checks it again before each send, and the
 * send connects only to the addresses that check found.
 *
 * Pure: the rules read no store, clock or service. The resolver, when there is one, comes with the settings.
 */
import { Effect } from "effect"
import ipaddr from "ipaddr.js"
import * as Problem from "../kernel/Problem.ts"
import type * as Transport from "./Transport.ts"

const maxUrlLength = 2048

const invalid = (pointer: string, detail: string) =>
  Problem.invalidRequest([{ pointer, detail }])

const nat64 = ipaddr.parseCIDR("64:ff9b::/96")
const ipv4Compatible = ipaddr.parseCIDR("::/96")

/** The IPv4 address of two 16-bit groups. */
const ipv4Of = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff])

/**
 * An address's range by ipaddr.js's names, where an IPv6 form that carries an IPv4 address is judged by that address,
 * since that is where a packet to it ends up: IPv4-mapped (`::ffff:a.b.c.d`, which `ipaddr.process` turns into the
 * IPv4 address), the NAT64 well-known prefix (`64:ff9b::/96`, what DNS64 answers on an IPv6-only network) and 6to4
 * (`2002:AABB:CCDD::/48`). IPv4-compatible addresses (`::a.b.c.d`, deprecated since 2006, which ipaddr.js counts as
 * unicast) are `ipv4Compatible`, refused whatever they carry: no receiver lives at one, and some stacks route them
 * to the IPv4 address. Other translation ranges (NAT64 local-use `64:ff9b:1::/48`, Teredo, RFC 6145) keep their own
 * names, which are not unicast. Undefined for text that is not an address.
 */
export const addressRange = (text: string): string | undefined => {
  if (!ipaddr.isValid(text)) return undefined
  const address = ipaddr.process(text)
  if (address.kind() === "ipv4") return address.range()
  const v6 = address as ipaddr.IPv6
  const range = v6.range()
  const parts = v6.parts
  if (range === "rfc6052" && v6.match(nat64)) return ipv4Of(parts[6]!, parts[7]!).range()
  if (range === "6to4") return ipv4Of(parts[1]!, parts[2]!).range()
  if (range === "unicast" && v6.match(ipv4Compatible)) return "ipv4Compatible"
  return range
}

/**
 * The address range of a URL host that is an IP literal, or undefined for a name. The WHATWG URL parser already
 * turns every IPv4 spelling (hex, octal, a single number) into dotted decimal and brackets IPv6, so only those two
 * shapes need parsing.
 */
const literalRange = (host: string): string | undefined => {
  const h = host.startsWith("[") ? host.slice(1, -1) : host
  if (!(host.startsWith("[") || /^\d{1,3}(\.\d{1,3}){3}$/.test(h))) return undefined
  return addressRange(h)
}

/** `localhost` and its subdomains, with or without the trailing dot of a fully qualified name (`localhost.`). */
const isLocalName = (host: string): boolean => {
  const h = host.toLowerCase().replace(/\.+$/, "")
  return h === "localhost" || h.endsWith(".localhost")
}

const isLoopbackHost = (host: string): boolean => isLocalName(host) || literalRange(host) === "loopback"

/** True for a host that is an address no webhook may reach (private, loopback, link-local and the like). */
export const isForbiddenAddress = (host: string): boolean => {
  if (isLocalName(host)) return true
  const range = literalRange(host)
  return range !== undefined && range !== "unicast"
}

/**
 * Checks a webhook URL: HTTPS; with `--insecure-webhooks` also http on loopback; never a private address, whether
 * written in the URL or, with a resolver, found by resolving its host. A name that does not resolve is let through
 * here (the send will fail); one that resolves to a forbidden address is refused.
 */
export const checkWebhookUrl = (raw: string, settings: Transport.WebhookSettingsValue): Effect.Effect<string, Problem.ApiError> =>
  Effect.flatMap(checkWebhookUrlText(raw, settings.insecureWebhooks), (url) => {
    const resolve = settings.resolveHost
    const host = new URL(url).hostname
    if (resolve === undefined || literalRange(host) !== undefined || isLocalName(host)) return Effect.succeed(url)
    return resolve(host).pipe(
      Effect.catch(() => Effect.succeed([] as ReadonlyArray<string>)),
      Effect.flatMap((addresses) =>
        answerForbidden(addresses, settings.insecureWebhooks)
          ? Effect.fail(invalid("/url", "must not resolve to a private, loopback or link-local address"))
          : Effect.succeed(url)
      )
    )
  })

const hostOf = (address: string) => (address.includes(":") ? `[${address}]` : address)

/** True when a resolver's answer holds an address no webhook may reach (loopback ones aside with `--insecure-webhooks`). */
const answerForbidden = (addresses: ReadonlyArray<string>, insecure: boolean): boolean => {
  const forbidden = addresses.filter((a) => isForbiddenAddress(hostOf(a)))
  return forbidden.length > 0 && !(insecure && forbidden.every((a) => isLoopbackHost(hostOf(a))))
}

/** Why the check before a send refused it: the text is the attempt's recorded error. */
const refusedAddress = "the endpoint's address is not allowed"

/**
 * The check before each send: the URL again, and its host resolved once, every address it answers checked. Gives the
 * addresses the transport may connect to (those the name answered, or the one written in the URL), or undefined
 * without a resolver (the transport resolves the name itself). Fails with the attempt's error: an address refused,
 * or the name not resolving.
 */
export const deliveryAddresses = (rawUrl: string, settings: Transport.WebhookSettingsValue): Effect.Effect<ReadonlyArray<string> | undefined, string> =>
  checkWebhookUrlText(rawUrl, settings.insecureWebhooks).pipe(
    Effect.mapError(() => refusedAddress),
    Effect.flatMap((url): Effect.Effect<ReadonlyArray<string> | undefined, string> => {
      const host = new URL(url).hostname
      if (literalRange(host) !== undefined) return Effect.succeed([host.startsWith("[") ? host.slice(1, -1) : host])
      const resolve = settings.resolveHost
      if (resolve === undefined) return Effect.succeed(undefined)
      return resolve(host.replace(/\.+$/, "")).pipe(
        Effect.mapError((e) => e.message),
        Effect.flatMap((addresses) => {
          if (addresses.length === 0) return Effect.fail(`${host} resolves to no address`)
          if (answerForbidden(addresses, settings.insecureWebhooks)) return Effect.fail(refusedAddress)
          // A localhost name is let through only with --insecure-webhooks, and then only to loopback addresses.
          if (isLocalName(host) && !addresses.every((a) => isLoopbackHost(hostOf(a)))) return Effect.fail(refusedAddress)
          return Effect.succeed(addresses)
        })
      )
    })
  )

/**
 * What a refusal of an http:// or local URL tells a developer: the setting that lets a local receiver in, as the
 * server's flag and as the embedded engine's option.
 */
const insecureHint =
  "a server started with --insecure-webhooks (insecureWebhooks: true for an embedded engine) allows http:// and https:// to loopback hosts only, for local testing"

const checkWebhookUrlText = (raw: string, insecure: boolean): Effect.Effect<string, Problem.ApiError> =>
  Effect.suspend(() => {
    if (raw.length > maxUrlLength) return Effect.fail(invalid("/url", `must be at most ${maxUrlLength} characters`))
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      return Effect.fail(invalid("/url", "must be an absolute HTTPS URL"))
    }
    if (url.username !== "" || url.password !== "") return Effect.fail(invalid("/url", "must not carry credentials"))
    const loopback = isLoopbackHost(url.hostname)
    if (url.protocol === "http:" && !(insecure && loopback)) {
      return Effect.fail(invalid("/url", insecure ? "must be HTTPS (the insecure-webhooks setting allows http on loopback hosts only)" : `must be an HTTPS URL (${insecureHint})`))
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") return Effect.fail(invalid("/url", "must be an HTTPS URL"))
    if (isForbiddenAddress(url.hostname) && !(insecure && loopback)) {
      return Effect.fail(invalid(
        "/url",
        insecure
          ? "must not point to a private or link-local address (the insecure-webhooks setting allows loopback hosts only)"
          : `must not point to a private, loopback or link-local address (${insecureHint})`
      ))
    }
    return Effect.succeed(url.toString())
  })
