/**
 * What a host that embeds the engine says of a request beside it, never in it: who calls (a caller its host
 * authenticated, `Auth.HostCaller`, in the place of an API key) and from where (the address its own server saw).
 * `createEngine` reads it from the second argument of `engine.fetch`, an Effect host gives `layerRoutes` an `identify`
 * function; a server has none, since a server never takes a caller from the network (docs/embedding.md, "The host's identity").
 */
import type { Auth } from "@fos/core"
import { Context } from "effect"
import type { HttpServerRequest } from "effect/http"

export interface HostIdentity {
  /** The caller, admitted without a key; absent, the request authenticates with its `x-api-key` as over the network. */
  readonly caller?: Auth.HostCaller | undefined
  /** The client's IP address, for the per-address buckets, a key's allowlist and the request log; 127.0.0.1 when absent. */
  readonly clientAddress?: string | undefined
}

/** A request's host identity, if its host gave one. */
export type IdentifyRequest = (request: HttpServerRequest.HttpServerRequest) => HostIdentity | undefined

/** How the pipeline learns a request's host identity; undefined (a server's): no request has one. */
export class HostIdentities extends Context.Reference<IdentifyRequest | undefined>("fos/http/HostIdentities", {
  defaultValue: () => undefined
}) {}
