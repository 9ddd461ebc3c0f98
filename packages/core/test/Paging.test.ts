/**
 * The keyset orders per filter combination (kernel/Paging.ts). Their names and partitions are stored: every row of
 * a SQL store has one `fos_orders` entry per order, under the order's name (`ord`) and the row's partition (`part`).
 * A helper that named them differently would orphan every stored entry, so these are the literal strings the
 * tables declared before the helper existed.
 */
import { describe, expect, it } from "vitest"
import * as Deliveries from "../src/webhooks/Deliveries.ts"
import * as Orders from "../src/money/Orders.ts"
import * as Paging from "../src/kernel/Paging.ts"
import * as Transactions from "../src/money/Transactions.ts"

const partitions = <Row>(orders: Readonly<Record<string, { readonly partition: (row: Row) => string | undefined }>>, row: Row) =>
  Object.fromEntries(Object.entries(orders).map(([name, order]) => [name, order.partition(row)]))

describe("keyset orders per filter combination", () => {
  it("names every subset of the filters, in the filters' order, as before", () => {
    expect(Paging.filterCombinations(["a", "b", "c"], (keys) => keys.join("+"))).toEqual({
      "": [],
      a: ["a"],
      b: ["b"],
      "a+b": ["a", "b"],
      c: ["c"],
      "a+c": ["a", "c"],
      "b+c": ["b", "c"],
      "a+b+c": ["a", "b", "c"]
    })
    expect(Paging.filterOrderName("createdAt", ["type", "status"])).toBe("createdAt:type+status")
    expect(Paging.filterPartition("org_1/sandbox", ["status", "customerId"], (k) => (k === "status" ? "pending" : "cus_1"))).toBe(
      "org_1/sandbox|status=pending|customerId=cus_1"
    )
  })

  it("gives the orders table the orders and partitions it stored before", () => {
    const order = { organizationId: "org_1", environment: "sandbox", status: "pending", customerId: "cus_1", createdAt: "c", updatedAt: "u" } as Orders.StoredOrder
    expect(partitions(Orders.Orders.orders, order)).toEqual({
      "createdAt:": "org_1/sandbox",
      "updatedAt:": "org_1/sandbox",
      "createdAt:status": "org_1/sandbox|status=pending",
      "updatedAt:status": "org_1/sandbox|status=pending",
      "createdAt:customerId": "org_1/sandbox|customerId=cus_1",
      "updatedAt:customerId": "org_1/sandbox|customerId=cus_1",
      "createdAt:status+customerId": "org_1/sandbox|status=pending|customerId=cus_1",
      "updatedAt:status+customerId": "org_1/sandbox|status=pending|customerId=cus_1",
      // Not a filter order: autoExecute orders waiting for funds (this one is not).
      awaitingFunds: undefined
    })
    for (const [name, declared] of Object.entries(Orders.Orders.orders)) {
      if (name === "awaitingFunds") continue
      expect(declared.counted, name).toBe(name.startsWith("createdAt:"))
      expect(declared.sort(order), name).toBe(name.startsWith("createdAt:") ? "c" : "u")
    }
    expect(Orders.ofScope).toBe("createdAt:")
  })

  it("gives the transactions table the orders and partitions it stored before", () => {
    const transaction = {
      organizationId: "org_1",
      environment: "live",
      type: "deposit",
      status: "completed",
      customerId: "cus_2",
      createdAt: "c",
      updatedAt: "u"
    } as Transactions.StoredTransaction
    const expected: Record<string, string> = {}
    const byKeys: ReadonlyArray<readonly [string, string]> = [
      ["", "org_1/live"],
      ["type", "org_1/live|type=deposit"],
      ["status", "org_1/live|status=completed"],
      ["type+status", "org_1/live|type=deposit|status=completed"],
      ["customerId", "org_1/live|customerId=cus_2"],
      ["type+customerId", "org_1/live|type=deposit|customerId=cus_2"],
      ["status+customerId", "org_1/live|status=completed|customerId=cus_2"],
      ["type+status+customerId", "org_1/live|type=deposit|status=completed|customerId=cus_2"]
    ]
    for (const [keys, partition] of byKeys) {
      expected[`createdAt:${keys}`] = partition
      expected[`updatedAt:${keys}`] = partition
    }
    expect(partitions(Transactions.Transactions.orders, transaction)).toEqual(expected)
    for (const [name, declared] of Object.entries(Transactions.Transactions.orders)) {
      expect(declared.counted, name).toBe(name.startsWith("createdAt:"))
      expect(declared.sort(transaction), name).toBe(name.startsWith("createdAt:") ? "c" : "u")
    }
    expect(Transactions.ofScope).toBe("createdAt:")
    expect(Transactions.partitionIn("org_1/live", { status: "completed", customerId: "cus_2" })).toEqual({
      order: "createdAt:status+customerId",
      partition: "org_1/live|status=completed|customerId=cus_2"
    })
  })

  it("gives the webhook deliveries table the orders and partitions it stored before", () => {
    const delivery = { organizationId: "org_1", environment: "sandbox", endpointId: "we_1", status: "failed", eventType: "order.created", createdAt: "c" } as Deliveries.WebhookDelivery
    expect(partitions(Deliveries.WebhookDeliveries.orders, delivery)).toEqual({
      byScope: "org_1/sandbox",
      byEndpoint: "org_1/sandbox/we_1",
      byStatus: "org_1/sandbox/failed",
      byEventType: "org_1/sandbox/order.created",
      byEndpointStatus: "org_1/sandbox/we_1/failed",
      byEndpointEventType: "org_1/sandbox/we_1/order.created",
      byStatusEventType: "org_1/sandbox/failed/order.created",
      byEndpointStatusEventType: "org_1/sandbox/we_1/failed/order.created"
    })
    for (const declared of Object.values(Deliveries.WebhookDeliveries.orders)) {
      expect(declared.counted).toBeUndefined()
      expect(declared.sort(delivery)).toBe("c")
    }
  })

  it("builds a table's orders from sorts and filters", () => {
    const orders = Paging.filteredOrders<{ readonly s: string; readonly k: string; readonly at: number }, "k", "at">({
      filters: ["k"],
      sorts: ["at"],
      scope: (row) => row.s,
      value: (row) => row.k,
      sort: (row) => row.at,
      countedSort: "at"
    })
    expect(Object.keys(orders)).toEqual(["at:", "at:k"])
    expect(orders["at:k"]!.partition({ s: "x", k: "v", at: 1 })).toBe("x|k=v")
    expect(orders["at:"]!.counted).toBe(true)
  })
})
