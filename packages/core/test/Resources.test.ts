/**
 * The resources a timeline and the actions read-out find by id (inspect/Resources.ts): each one's ended statuses are
 * some of its own statuses, not all of them, so a timeline of a resource still under way waits for something and one
 * that ended waits for nothing. The statuses are the contract's (the claim's, its machine's), by resource type, so a
 * resource type the contract gains is a compile error here until it is listed.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  ApplicationStatuses,
  DeliveryStatuses,
  OrderStatuses,
  RfiStatuses,
  TransactionStatuses,
  WalletCeremonyStatuses,
  WalletSignerStatuses
} from "@fos/contract"
import * as Resources from "../src/inspect/Resources.ts"
import type * as ClaimMachine from "../src/signing/ClaimMachine.ts"

const claimStatuses: ReadonlyArray<ClaimMachine.Status> = ["pending", "completed", "failed"]

const statuses: Readonly<Record<Resources.ResourceType, ReadonlyArray<string>>> = {
  transaction: TransactionStatuses,
  order: OrderStatuses,
  application: ApplicationStatuses,
  rfi: RfiStatuses,
  webhook_delivery: DeliveryStatuses,
  wallet_signer: WalletSignerStatuses,
  wallet_ceremony: WalletCeremonyStatuses,
  claim: claimStatuses
}

describe("the resources of the read-outs", () => {
  it("end in some of their own statuses, and are under way in the others", () => {
    for (const [type, resource] of Object.entries(Resources.resources) as Array<[Resources.ResourceType, Resources.Resource]>) {
      const own = statuses[type]
      expect([...resource.ended].filter((status) => !own.includes(status)), type).toEqual([])
      expect(resource.ended.size, type).toBeGreaterThan(0)
      expect(own.filter((status) => !resource.ended.has(status)).length, type).toBeGreaterThan(0)
    }
  })

  it("name each id prefix once", () => {
    const prefixes = Object.values(Resources.resources).map((resource) => resource.prefix)
    expect(new Set(prefixes).size).toBe(prefixes.length)
  })
})
