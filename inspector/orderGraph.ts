/**
 * The order state table as the inspector draws it (OrderMachine.ts in the core): its states placed for the picture,
 * its edges, and which of them an order walked. Each edge names the moves of the table it stands for, typed by the
 * table's own `Move`, and test/inspector.test.ts asks the table that each edge is one of its moves. The picture
 * draws a subset of the table: the test names the moves it leaves out.
 *
 * No DOM here (the picture is OrderPath, in app.ts), so the test imports this module as it is.
 */
import type { Order, OrderStatus, Transaction } from "@fos/contract"
// By its file, and types only: the table itself stays in the core.
import type { Move } from "../packages/core/src/money/OrderMachine.ts"

/**
 * A state of the picture: one of the order's statuses; a step of `pending` that the table tells apart (its State's
 * `executing`, then `sent` once the source transfer is sent); or `new`, before the order exists.
 */
export type OrderState = "new" | OrderStatus | "executing" | "sent"

export interface PlacedState {
  readonly id: OrderState
  readonly label: string
  readonly x: number
  readonly y: number
}

/** An edge: from, to, its label, and the table's moves it stands for (`create`: the order's creation, its initialState). */
export type OrderEdge = readonly [from: OrderState, to: OrderState, label: string, moves: ReadonlyArray<Move["type"] | "create">]

/** The order state table's states, placed for the picture (OrderMachine.ts). */
export const stateWidth = 130
export const stateHeight = 30
export const orderStates: ReadonlyArray<PlacedState> = [
  { id: "new", label: "(new)", x: 10, y: 60 },
  { id: "pending", label: "pending", x: 200, y: 60 },
  { id: "executing", label: "pending (executing)", x: 390, y: 60 },
  { id: "sent", label: "pending (sent)", x: 580, y: 60 },
  { id: "succeeded", label: "succeeded", x: 770, y: 10 },
  { id: "failed", label: "failed", x: 770, y: 150 },
  { id: "cancelled", label: "cancelled", x: 295, y: 170 }
]
export const orderEdges: ReadonlyArray<OrderEdge> = [
  ["new", "pending", "create", ["create"]],
  ["pending", "executing", "execute", ["execute"]],
  ["executing", "sent", "source sent", ["send"]],
  ["sent", "succeeded", "completes", ["succeed"]],
  ["sent", "failed", "fails", ["fail"]],
  ["executing", "failed", "fails", ["fail"]],
  ["pending", "cancelled", "cancel, expiry", ["cancel", "expire"]],
  ["executing", "cancelled", "cancel", ["cancel"]]
]

/** Where an edge leaves its state and meets the next: side to side, or from the bottom to a state below. */
export const edgeEnds = (a: PlacedState, b: PlacedState): readonly [number, number, number, number] => {
  if (b.y > a.y + stateHeight) {
    const toX = b.x + (a.x < b.x ? stateWidth * 0.3 : stateWidth * 0.7)
    return [a.x + stateWidth / 2, a.y + stateHeight, toX, b.y]
  }
  return [a.x + stateWidth, a.y + stateHeight / 2, b.x, b.y + stateHeight / 2]
}

/** Which states an order went through, from the order and its transaction. */
export const orderPath = (
  order: Pick<Order, "status" | "transactionId">,
  transaction: Pick<Transaction, "status"> | undefined
): Array<OrderState> => {
  const path: Array<OrderState> = ["new", "pending"]
  if (order.transactionId !== undefined && order.transactionId !== null) {
    path.push("executing")
    if (transaction !== undefined && transaction.status !== "pending") path.push("sent")
  }
  if (order.status !== "pending") path.push(order.status)
  return path
}
