/**
 * What ids name: an id's prefix routes it to its view (`#/r/txn_…`) and names it there, from the contract's tables of
 * prefixes, and the public API reads it at its endpoint's path.
 */
// By its file: @fos/contract's index would bring every schema, and Effect, into the bundle (IdPrefixes.ts).
import {
  idPattern,
  type IdPrefix,
  IdPrefixes,
  type SigningIdPrefix,
  SigningIdPrefixes
} from "../packages/contract/src/kernel/IdPrefixes.ts"
import type { Answer, Check, EndpointKey, Path } from "./api.ts"

/** The endpoint that reads each resource the inspector opens by its id. */
interface Reads {
  readonly cus: "customers.get"
  readonly app: "applications.get"
  readonly wlt: "wallets.get"
  readonly vac: "customers.getVirtualAccount"
  readonly txn: "transactions.get"
  readonly ord: "orders.get"
  readonly wlr: "recipients.getWhitelistRecipient"
  readonly rad: "recipients.getRegisteredAddress"
  readonly rfi: "rfis.get"
  readonly doc: "documents.get"
  readonly wep: "webhooks.getEndpoint"
  readonly wdl: "webhooks.getDelivery"
}

// Each is a prefix of the contract's.
export type _ReadsPrefixes = Check<keyof Reads extends IdPrefix ? true : false>

/** What the API answers for a resource the inspector reads by its id. */
export type Resource = Answer<Reads[keyof Reads]>

/** A kind of resource the inspector opens: what it is called, and where the public API reads it (if it does). */
export interface ResourceKind {
  readonly label: string
  readonly path?: (id: string) => Path<EndpointKey>
}

type Readable = { readonly [P in keyof Reads]: { readonly label: string; readonly path: (id: string) => Path<Reads[P]> } }

/** What each id prefix is, and where the public API reads it. */
const resourceKinds: Readable & { readonly [P in Exclude<IdPrefix | SigningIdPrefix, keyof Reads>]?: ResourceKind } = {
  cus: { label: IdPrefixes.cus, path: (id) => `/v2/customers/${id}` },
  app: { label: IdPrefixes.app, path: (id) => `/v2/applications/${id}` },
  wlt: { label: IdPrefixes.wlt, path: (id) => `/v2/wallets/${id}` },
  vac: { label: IdPrefixes.vac, path: (id) => `/v2/virtual-accounts/${id}` },
  txn: { label: IdPrefixes.txn, path: (id) => `/v2/transactions/${id}` },
  ord: { label: IdPrefixes.ord, path: (id) => `/v2/orders/${id}` },
  wlr: { label: IdPrefixes.wlr, path: (id) => `/v2/whitelist-recipients/${id}` },
  rad: { label: IdPrefixes.rad, path: (id) => `/v2/registered-addresses/${id}` },
  rfi: { label: IdPrefixes.rfi, path: (id) => `/v2/rfis/${id}` },
  doc: { label: IdPrefixes.doc, path: (id) => `/v2/documents/${id}` },
  wep: { label: IdPrefixes.wep, path: (id) => `/v2/webhooks/endpoints/${id}` },
  wdl: { label: IdPrefixes.wdl, path: (id) => `/v2/webhooks/deliveries/${id}` },
  wsg: { label: IdPrefixes.wsg },
  cer: { label: SigningIdPrefixes.cer },
  clm: { label: SigningIdPrefixes.clm },
  // An event of the event log, which the inspector shows whether a webhook sends it or not (the contract's name is
  // "Webhook event").
  evt: { label: "Event" }
}

export const prefixOf = (id: string): string => id.slice(0, id.indexOf("_"))

/** The kind of resource a prefix names, if the inspector opens it. */
export const kindOf = (prefix: string): ResourceKind | undefined =>
  Object.hasOwn(resourceKinds, prefix) ? resourceKinds[prefix as keyof typeof resourceKinds] : undefined

/** Whether `id` is an id the inspector opens: a prefix it knows, and the shape of an id of it. */
export const isResourceId = (id: string): boolean => {
  const prefix = prefixOf(id)
  return kindOf(prefix) !== undefined && idPattern(prefix).test(id)
}

/** A resource's status, for those that have one. */
export const statusOf = (resource: Resource | undefined): string | undefined =>
  resource !== undefined && "status" in resource ? resource.status : undefined
