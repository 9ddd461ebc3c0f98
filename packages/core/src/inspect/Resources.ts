/**
 * The resources the sandbox's read-outs find by id alone (a resource's timeline, Timeline.ts, and its actions,
 * ResourceActions.ts): for each, the prefix of its ids, its table, the statuses it rests in once ended (its state
 * machine's, where the machine has them), and its name in a sentence. One table, so a resource the inspector shows is
 * added once.
 *
 * Here, in the inspect layer, and not in the domains' descriptors (kernel/Domain.ts): what a resource is called in
 * a timeline, and which statuses end its story there, are the inspector's words over the domains, and a timeline's
 * `resourceType` is a closed enumeration of the contract's (`TimelineResourceTypes`), which a host's own domain could
 * not extend anyway.
 */
import { ApplicationStatuses, RfiStatuses, type TimelineResourceTypes, WalletSignerStatuses } from "@fos/contract"
import { Effect } from "effect"
import * as Applications from "../onboarding/Applications.ts"
import * as ClaimMachine from "../signing/ClaimMachine.ts"
import * as Deliveries from "../webhooks/Deliveries.ts"
import * as DeliveryMachine from "../webhooks/DeliveryMachine.ts"
import * as OrderMachine from "../money/OrderMachine.ts"
import * as Orders from "../money/Orders.ts"
import * as RfiMachine from "../money/RfiMachine.ts"
import * as Rfis from "../money/Rfis.ts"
import * as Roster from "../signing/Roster.ts"
import * as SignerMachine from "../signing/SignerMachine.ts"
import * as Store from "../kernel/Store.ts"
import * as TransactionMachine from "../money/TransactionMachine.ts"
import * as Transactions from "../money/Transactions.ts"

export type ResourceType = typeof TimelineResourceTypes[number]

export interface Resource {
  /** What comes before `_` in its ids. */
  readonly prefix: string
  readonly table: Store.Table<any>
  /** The statuses it has ended in: a timeline then waits for nothing. */
  readonly ended: ReadonlySet<string>
  /** Its name in a timeline's sentences ("The order moved from …"). */
  readonly word: string
}

/** Statuses a timeline takes as ended where the machine has no such set: some of the resource's own statuses. */
const endedOf = <S extends string>(_statuses: ReadonlyArray<S>, ended: ReadonlyArray<NoInfer<S>>): ReadonlySet<string> => new Set(ended)

export const resources: Readonly<Record<ResourceType, Resource>> = {
  transaction: { prefix: "txn", table: Transactions.Transactions, ended: TransactionMachine.terminalStatuses, word: "transaction" },
  order: { prefix: "ord", table: Orders.Orders, ended: OrderMachine.endedStatuses, word: "order" },
  // An application cancelled (ended undecided) waits for nothing, though a simulate call may still decide it.
  application: { prefix: "app", table: Applications.Applications, ended: endedOf(ApplicationStatuses, ["approved", "rejected", "cancelled"]), word: "application" },
  rfi: { prefix: "rfi", table: Rfis.Rfis, ended: new Set(RfiStatuses.filter((status) => !RfiMachine.openStatuses.has(status))), word: "RFI" },
  webhook_delivery: { prefix: "wdl", table: Deliveries.WebhookDeliveries, ended: DeliveryMachine.endedStatuses, word: "delivery" },
  // An approved signer is at rest: it waits for nothing of its own.
  wallet_signer: { prefix: "wsg", table: Roster.WalletSigners, ended: endedOf(WalletSignerStatuses, ["approved", "removed"]), word: "signer" },
  wallet_ceremony: { prefix: "cer", table: Roster.WalletCeremonies, ended: SignerMachine.ceremonyEndedStatuses, word: "ceremony" },
  claim: { prefix: "clm", table: Roster.Claims, ended: ClaimMachine.endedStatuses, word: "claim" }
}

const byPrefix: ReadonlyMap<string, ResourceType> = new Map(
  (Object.entries(resources) as Array<[ResourceType, Resource]>).map(([type, resource]) => [resource.prefix, type])
)

/** A row of a resource: what the read-outs read of every one. */
export interface ResourceRow {
  readonly id: string
  readonly organizationId: string
  readonly environment: string
  readonly status: string
}

/** A resource the id names in the organization's sandbox, with its row; undefined for any other id. */
export const find = (organizationId: string, resourceId: string): Effect.Effect<{ readonly type: ResourceType; readonly row: ResourceRow } | undefined, never, Store.Store> =>
  Effect.gen(function*() {
    const type = byPrefix.get(resourceId.slice(0, resourceId.indexOf("_")))
    if (type === undefined) return undefined
    const row = (yield* (yield* Store.Store).get(resources[type].table, resourceId)) as ResourceRow | undefined
    return row === undefined || row.organizationId !== organizationId || row.environment !== "sandbox" ? undefined : { type, row }
  })
