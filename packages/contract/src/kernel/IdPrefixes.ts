/**
 * The id prefixes and what each names, in a module that imports nothing: Ids.ts and signing/Signers.ts build the id
 * schemas from them, and the inspector (inspector/ids.ts), a browser bundle without Effect, routes an id to its view
 * and names it from them. It imports this file by its path, since `@fos/contract`'s index would bring every schema.
 */

/** The spec's identifier table. */
export const SpecIdPrefixes = {
  app: "Application",
  cus: "Customer",
  doc: "Document",
  org: "Organization",
  ord: "Order",
  txn: "Transaction",
  usr: "User",
  vac: "Virtual account",
  vrf: "Verification",
  wda: "Webhook delivery attempt",
  wdl: "Webhook delivery",
  wep: "Webhook endpoint",
  wlr: "Whitelist recipient",
  wlt: "Wallet",
  wsg: "Wallet signer",
  evt: "Webhook event"
} as const

/**
 * Prefixes fos adds for resources the spec shows without one in its table (docs/decisions.md, "Identifiers fos
 * adds"): registered addresses, and RFIs, whose `rfi_` the spec's own rfi.* examples show.
 */
export const FosIdPrefixes = {
  rad: "Registered address",
  rfi: "Request for information",
  snp: "Sandbox snapshot"
} as const

export const IdPrefixes = { ...SpecIdPrefixes, ...FosIdPrefixes } as const

export type IdPrefix = keyof typeof IdPrefixes

/**
 * The prefixes fos gives the signing resources' ids (signing/Signers.ts; docs/decisions.md, "Identifiers"), which the
 * spec's table has none for either. Apart from `IdPrefixes`, which has an id schema for each: these have their own.
 */
export const SigningIdPrefixes = {
  clm: "Claim",
  cer: "Wallet ceremony",
  sr: "Signing request"
} as const

export type SigningIdPrefix = keyof typeof SigningIdPrefixes

/**
 * The pattern of an id of `prefix`: the prefix, `_`, then 1 to 64 ASCII letters or digits (what fos mints, and what an
 * operator may give). The `u` flag: Effect exports a pattern to the JSON Schema (and the OpenAPI document) only from a
 * unicode regex.
 */
export const idPattern = (prefix: string): RegExp => new RegExp(`^${prefix}_[0-9A-Za-z]{1,64}$`, "u")
