/**
 * Identifiers: `<prefix>_<opaque>` for every prefix of the spec's table (and the two fos adds), as branded schemas. A path or query id
 * of the wrong shape or prefix is rejected at the edge with INVALID_OID_FORMAT. The engine mints them
 * (`newId` in @fos/core); ids given by an operator (seed file) may use 1 to 64 ASCII letters and digits. The
 * prefixes and the pattern are IdPrefixes.ts's.
 */
import { Schema } from "effect"
import "./Annotations.ts"
import { type IdPrefix, IdPrefixes, idPattern } from "./IdPrefixes.ts"
import { withArticle } from "./Text.ts"

/** The string schema of one id prefix. Its check carries the INVALID_OID_FORMAT code for the edge. */
const oid = (prefix: IdPrefix) =>
  Schema.String.check(
    Schema.isPattern(idPattern(prefix), {
      fosCode: "INVALID_OID_FORMAT",
      fosDetail: `must be ${withArticle(IdPrefixes[prefix].toLowerCase())} id (${prefix}_ followed by 1 to 64 letters or digits)`
    })
  )

export const ApplicationId = oid("app").pipe(Schema.brand("ApplicationId"))
export type ApplicationId = typeof ApplicationId.Type
export const CustomerId = oid("cus").pipe(Schema.brand("CustomerId"))
export type CustomerId = typeof CustomerId.Type
export const DocumentId = oid("doc").pipe(Schema.brand("DocumentId"))
export type DocumentId = typeof DocumentId.Type
export const OrganizationId = oid("org").pipe(Schema.brand("OrganizationId"))
export type OrganizationId = typeof OrganizationId.Type
export const OrderId = oid("ord").pipe(Schema.brand("OrderId"))
export type OrderId = typeof OrderId.Type
export const TransactionId = oid("txn").pipe(Schema.brand("TransactionId"))
export type TransactionId = typeof TransactionId.Type
export const UserId = oid("usr").pipe(Schema.brand("UserId"))
export type UserId = typeof UserId.Type
export const VirtualAccountId = oid("vac").pipe(Schema.brand("VirtualAccountId"))
export type VirtualAccountId = typeof VirtualAccountId.Type
export const VerificationId = oid("vrf").pipe(Schema.brand("VerificationId"))
export type VerificationId = typeof VerificationId.Type
export const WebhookDeliveryAttemptId = oid("wda").pipe(Schema.brand("WebhookDeliveryAttemptId"))
export type WebhookDeliveryAttemptId = typeof WebhookDeliveryAttemptId.Type
export const WebhookDeliveryId = oid("wdl").pipe(Schema.brand("WebhookDeliveryId"))
export type WebhookDeliveryId = typeof WebhookDeliveryId.Type
export const WebhookEndpointId = oid("wep").pipe(Schema.brand("WebhookEndpointId"))
export type WebhookEndpointId = typeof WebhookEndpointId.Type
export const WhitelistRecipientId = oid("wlr").pipe(Schema.brand("WhitelistRecipientId"))
export type WhitelistRecipientId = typeof WhitelistRecipientId.Type
export const RegisteredAddressId = oid("rad").pipe(Schema.brand("RegisteredAddressId"))
export type RegisteredAddressId = typeof RegisteredAddressId.Type
export const RfiId = oid("rfi").pipe(Schema.brand("RfiId"))
export type RfiId = typeof RfiId.Type
export const WalletId = oid("wlt").pipe(Schema.brand("WalletId"))
export type WalletId = typeof WalletId.Type
export const WalletSignerId = oid("wsg").pipe(Schema.brand("WalletSignerId"))
export type WalletSignerId = typeof WalletSignerId.Type
export const EventId = oid("evt").pipe(Schema.brand("EventId"))
export type EventId = typeof EventId.Type

export const SnapshotId = oid("snp").pipe(Schema.brand("SnapshotId"))
export type SnapshotId = typeof SnapshotId.Type

/** Every id schema by prefix, for code that works across resources. */
export const IdSchemas = {
  app: ApplicationId,
  cus: CustomerId,
  doc: DocumentId,
  org: OrganizationId,
  ord: OrderId,
  txn: TransactionId,
  usr: UserId,
  vac: VirtualAccountId,
  vrf: VerificationId,
  wda: WebhookDeliveryAttemptId,
  wdl: WebhookDeliveryId,
  wep: WebhookEndpointId,
  wlr: WhitelistRecipientId,
  wlt: WalletId,
  rad: RegisteredAddressId,
  rfi: RfiId,
  wsg: WalletSignerId,
  evt: EventId,
  snp: SnapshotId
} as const

/** True when `s` is a well-formed id of `prefix`. */
export const isId = (prefix: IdPrefix, s: string): boolean => idPattern(prefix).test(s)
